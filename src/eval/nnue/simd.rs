//! The integer kernels of the inference: rebuilding an accumulator, updating one from its
//! parent, and the output layer. Each has a plain version and an AVX2 version chosen at run
//! time: the crate is built for x86-64-v2 (`.cargo/config.toml`), so AVX2 code lives in
//! `#[target_feature(enable = "avx2")]` functions that are called only after
//! [`Simd::available`] has found AVX2 ([`crate::util::cpu`], shared with the trainer).
//!
//! Both versions compute the same integers, bit for bit: accumulator lanes add and subtract
//! with i16 wraparound (`_mm256_add_epi16` wraps; the plain code uses `wrapping_add`), and the
//! output sums are i32 additions that wrap alike, whose order does not matter modulo 2^32. The
//! products themselves are exact: activations lie in `0..=QA` and weights are range-checked when
//! a network is built (see `Architecture::out_weight_limit`).

use super::arch::Activation;
pub use crate::util::cpu::Simd;

/// Lanes per [`Line`].
pub const LANES: usize = 32;

/// 32 i16 lanes: one 64-byte cache line, two AVX2 registers. Weights and accumulators are
/// stored as whole lines so that every vector load is aligned and no row straddles a line.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(C, align(64))]
pub struct Line(pub [i16; LANES]);

const _: () = assert!(std::mem::size_of::<Line>() == 64);
const _: () = assert!(std::mem::align_of::<Line>() == 64);

impl Line {
    pub const ZERO: Line = Line([0; LANES]);
}

/// The lanes of consecutive lines as one slice.
#[inline(always)]
pub fn lanes(lines: &[Line]) -> &[i16] {
    // SAFETY: `Line` is `repr(C)` around `[i16; 32]` with size 64 and no padding (asserted
    // above), so `n` lines are `32 * n` consecutive, initialised i16 values; the alignment of
    // `Line` exceeds that of i16, and the borrow is carried over.
    unsafe { std::slice::from_raw_parts(lines.as_ptr().cast::<i16>(), lines.len() * LANES) }
}

/// `avx2::$kernel(args)` where `simd` is [`Simd::Avx2`] and the processor has AVX2, else
/// `plain::$kernel(args)`. The check is made on every call: a network chooses its kernels
/// once ([`Simd::available`] then too), but these functions are public and take any `Simd`.
macro_rules! dispatch {
    ($simd:expr, $kernel:ident($($arg:expr),*)) => {
        match $simd {
            #[cfg(target_arch = "x86_64")]
            // SAFETY: the processor has AVX2 (the guard).
            Simd::Avx2 if Simd::Avx2.available() => unsafe { avx2::$kernel($($arg),*) },
            _ => plain::$kernel($($arg),*),
        }
    };
}

/// `out = bias + sum of the rows of features`: an accumulator rebuilt from its active inputs,
/// where row `f` is `weights[f * n..(f + 1) * n]` for `n = out.len()` (panics past the end).
#[inline]
pub fn refresh(simd: Simd, out: &mut [Line], bias: &[Line], weights: &[Line], features: &[u32]) {
    debug_assert!(bias.len() == out.len());
    dispatch!(simd, refresh(out, bias, weights, features))
}

/// `out = parent + sum(added) - sum(removed)`: an accumulator updated from its parent.
#[inline]
pub fn update(
    simd: Simd,
    out: &mut [Line],
    parent: &[Line],
    added: &[&[Line]],
    removed: &[&[Line]],
) {
    debug_assert!(parent.len() == out.len());
    debug_assert!(added.iter().chain(removed).all(|r| r.len() == out.len()));
    dispatch!(simd, update(out, parent, added, removed))
}

/// The output layer's dot product before bias and scaling: `sum(act(us) * weights[..n]) +
/// sum(act(them) * weights[n..])` with `act` clamping to `0..=qa` (and squaring, for SCReLU),
/// in wrapping i32. `weights` has `2 * us.len()` lines.
#[inline]
pub fn output(
    simd: Simd,
    activation: Activation,
    qa: i16,
    us: &[Line],
    them: &[Line],
    weights: &[Line],
) -> i32 {
    debug_assert!(us.len() == them.len() && weights.len() == 2 * us.len());
    dispatch!(simd, output(activation, qa, us, them, weights))
}

mod plain {
    //! Each line is built in a local array and stored once, the shape LLVM vectorises for
    //! the baseline target (adding into the output in place, pass after pass, it does not).

    use super::{Activation, LANES, Line};

    #[inline(always)]
    fn add(v: &mut [i16; LANES], row: &Line) {
        for (a, b) in v.iter_mut().zip(&row.0) {
            *a = a.wrapping_add(*b);
        }
    }

    #[inline(always)]
    fn sub(v: &mut [i16; LANES], row: &Line) {
        for (a, b) in v.iter_mut().zip(&row.0) {
            *a = a.wrapping_sub(*b);
        }
    }

    pub fn refresh(out: &mut [Line], bias: &[Line], weights: &[Line], features: &[u32]) {
        let n = out.len();
        for (i, (o, b)) in out.iter_mut().zip(bias).enumerate() {
            let mut v = b.0;
            for &f in features {
                add(&mut v, &weights[f as usize * n + i]);
            }
            o.0 = v;
        }
    }

    pub fn update(out: &mut [Line], parent: &[Line], added: &[&[Line]], removed: &[&[Line]]) {
        for (i, (o, p)) in out.iter_mut().zip(parent).enumerate() {
            let mut v = p.0;
            for row in added {
                add(&mut v, &row[i]);
            }
            for row in removed {
                sub(&mut v, &row[i]);
            }
            o.0 = v;
        }
    }

    /// One perspective's share of the output sum, lane by lane, then added up; `SQUARE` picks
    /// SCReLU (a constant, so that each activation gets its own vectorised loop).
    #[inline(always)]
    fn half<const SQUARE: bool>(qa: i16, acc: &[Line], weights: &[Line]) -> i32 {
        let mut sums = [0i32; LANES];
        for (a, w) in acc.iter().zip(weights) {
            for k in 0..LANES {
                let c = a.0[k].max(0).min(qa) as i32;
                // Exact (c <= QA and, with SCReLU, |c * w| <= i16::MAX by the weight check);
                // wrapping only so that builds with overflow checks vectorise it too.
                let cw = c.wrapping_mul(w.0[k] as i32);
                let term = if SQUARE { cw.wrapping_mul(c) } else { cw };
                sums[k] = sums[k].wrapping_add(term);
            }
        }
        sums.iter().fold(0i32, |s, &x| s.wrapping_add(x))
    }

    pub fn output(
        activation: Activation,
        qa: i16,
        us: &[Line],
        them: &[Line],
        weights: &[Line],
    ) -> i32 {
        let (w_us, w_them) = weights.split_at(us.len());
        match activation {
            Activation::CReLU => {
                half::<false>(qa, us, w_us).wrapping_add(half::<false>(qa, them, w_them))
            }
            Activation::SCReLU => {
                half::<true>(qa, us, w_us).wrapping_add(half::<true>(qa, them, w_them))
            }
        }
    }
}

#[cfg(target_arch = "x86_64")]
mod avx2 {
    use super::{Activation, Line};
    use std::arch::x86_64::*;

    /// Lines rebuilt per pass of [`refresh`]: four lines are eight of the sixteen AVX2
    /// registers, so each row is read once per pass while the sums stay in registers (the
    /// register tiling of Stockfish's feature transformer).
    const TILE: usize = 4;

    /// The two 256-bit halves of a line.
    #[inline]
    #[target_feature(enable = "avx2")]
    fn load(line: &Line) -> [__m256i; 2] {
        let p = line.0.as_ptr().cast::<__m256i>();
        // SAFETY: a `Line` is 64 bytes aligned to 64, so both 32-byte halves are in bounds and
        // 32-byte aligned.
        unsafe { [_mm256_load_si256(p), _mm256_load_si256(p.add(1))] }
    }

    #[inline]
    #[target_feature(enable = "avx2")]
    fn store(line: &mut Line, v: [__m256i; 2]) {
        let p = line.0.as_mut_ptr().cast::<__m256i>();
        // SAFETY: as in `load`, and `line` is borrowed mutably.
        unsafe {
            _mm256_store_si256(p, v[0]);
            _mm256_store_si256(p.add(1), v[1]);
        }
    }

    /// Rebuilds lines `start..start + T` of `out`, their sums held in registers.
    #[inline]
    #[target_feature(enable = "avx2")]
    fn refresh_tile<const T: usize>(
        out: &mut [Line],
        bias: &[Line],
        weights: &[Line],
        features: &[u32],
        start: usize,
    ) {
        let n = out.len();
        let mut acc = [[_mm256_setzero_si256(); 2]; T];
        for (t, a) in acc.iter_mut().enumerate() {
            *a = load(&bias[start + t]);
        }
        for &f in features {
            let at = f as usize * n + start;
            let row = &weights[at..at + T];
            for (a, line) in acc.iter_mut().zip(row) {
                let [lo, hi] = load(line);
                a[0] = _mm256_add_epi16(a[0], lo);
                a[1] = _mm256_add_epi16(a[1], hi);
            }
        }
        for (t, a) in acc.into_iter().enumerate() {
            store(&mut out[start + t], a);
        }
    }

    #[target_feature(enable = "avx2")]
    pub fn refresh(out: &mut [Line], bias: &[Line], weights: &[Line], features: &[u32]) {
        let full = out.len() / TILE * TILE;
        for start in (0..full).step_by(TILE) {
            refresh_tile::<TILE>(out, bias, weights, features, start);
        }
        for start in full..out.len() {
            refresh_tile::<1>(out, bias, weights, features, start);
        }
    }

    /// [`update`]'s loop. Given arrays, whose lengths are known at compile time, it unrolls the
    /// loops over the rows.
    #[inline]
    #[target_feature(enable = "avx2")]
    fn update_rows<'r>(
        out: &mut [Line],
        parent: &[Line],
        added: impl AsRef<[&'r [Line]]>,
        removed: impl AsRef<[&'r [Line]]>,
    ) {
        let (added, removed) = (added.as_ref(), removed.as_ref());
        for (i, (o, p)) in out.iter_mut().zip(parent).enumerate() {
            let [mut lo, mut hi] = load(p);
            for row in added {
                let [a, b] = load(&row[i]);
                lo = _mm256_add_epi16(lo, a);
                hi = _mm256_add_epi16(hi, b);
            }
            for row in removed {
                let [a, b] = load(&row[i]);
                lo = _mm256_sub_epi16(lo, a);
                hi = _mm256_sub_epi16(hi, b);
            }
            store(o, [lo, hi]);
        }
    }

    /// Quiet moves (one row in, one out) and captures (one in, two out) take the unrolled
    /// paths; anything else (null moves, future Jieqi deltas) the general one.
    #[target_feature(enable = "avx2")]
    pub fn update(out: &mut [Line], parent: &[Line], added: &[&[Line]], removed: &[&[Line]]) {
        match (added, removed) {
            (&[a], &[r]) => update_rows(out, parent, [a], [r]),
            (&[a], &[r, s]) => update_rows(out, parent, [a], [r, s]),
            _ => update_rows(out, parent, added, removed),
        }
    }

    /// The wrapping sum of the eight i32 lanes.
    #[inline]
    #[target_feature(enable = "avx2")]
    fn horizontal_sum(v: __m256i) -> i32 {
        let s = _mm_add_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256::<1>(v));
        let s = _mm_add_epi32(s, _mm_shuffle_epi32::<0b01_00_11_10>(s));
        let s = _mm_add_epi32(s, _mm_shuffle_epi32::<0b10_11_00_01>(s));
        _mm_cvtsi128_si32(s)
    }

    /// One perspective's share of the output sum, as eight i32 lane sums.
    #[inline]
    #[target_feature(enable = "avx2")]
    fn half(activation: Activation, qa: i16, acc: &[Line], weights: &[Line]) -> __m256i {
        let zero = _mm256_setzero_si256();
        let max = _mm256_set1_epi16(qa);
        let mut sum = zero;
        for (a, w) in acc.iter().zip(weights) {
            let a = load(a);
            let w = load(w);
            for k in 0..2 {
                let c = _mm256_min_epi16(_mm256_max_epi16(a[k], zero), max);
                let prod = match activation {
                    // c * w summed in pairs: |c * w| < 2^30, so a pair fits an i32.
                    Activation::CReLU => _mm256_madd_epi16(c, w[k]),
                    // (c * w) first, exact in i16 by the weight check, then times c in
                    // pairs: bullet's "lizard" SCReLU, one multiply fewer than c * c * w.
                    Activation::SCReLU => _mm256_madd_epi16(_mm256_mullo_epi16(c, w[k]), c),
                };
                sum = _mm256_add_epi32(sum, prod);
            }
        }
        sum
    }

    #[target_feature(enable = "avx2")]
    pub fn output(
        activation: Activation,
        qa: i16,
        us: &[Line],
        them: &[Line],
        weights: &[Line],
    ) -> i32 {
        let (w_us, w_them) = weights.split_at(us.len());
        let sum = _mm256_add_epi32(
            half(activation, qa, us, w_us),
            half(activation, qa, them, w_them),
        );
        horizontal_sum(sum)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::util::splitmix_next;

    fn random_lines(state: &mut u64, n: usize, range: i16) -> Vec<Line> {
        (0..n)
            .map(|_| {
                let mut l = Line::ZERO;
                for x in &mut l.0 {
                    let (s, r) = splitmix_next(*state);
                    *state = s;
                    *x = ((r % (2 * range as u64 + 1)) as i32 - range as i32) as i16;
                }
                l
            })
            .collect()
    }

    /// The kernels agree bit for bit, including where i16 lanes wrap around.
    #[test]
    fn avx2_matches_plain() {
        if !Simd::Avx2.available() {
            eprintln!("no AVX2 on this CPU: nothing to compare");
            return;
        }
        let mut s = 7;
        for n in [1, 3, 4, 5, 8, 16] {
            let bias = random_lines(&mut s, n, 30000);
            let weights = random_lines(&mut s, 40 * n, 30000);
            let refs: Vec<&[Line]> = weights.chunks(n).collect();
            let features: Vec<u32> = (0..33).map(|f| (f * 7 % 40) as u32).collect();
            let mut a = vec![Line::ZERO; n];
            let mut b = vec![Line::ZERO; n];
            refresh(Simd::Plain, &mut a, &bias, &weights, &features);
            refresh(Simd::Avx2, &mut b, &bias, &weights, &features);
            assert_eq!(a, b);
            update(Simd::Plain, &mut a, &bias, &refs[..1], &refs[1..3]);
            update(Simd::Avx2, &mut b, &bias, &refs[..1], &refs[1..3]);
            assert_eq!(a, b);
            // 127: the SCReLU weight limit at QA 256 (`Architecture::out_weight_limit`).
            let weights = random_lines(&mut s, 2 * n, 127);
            for activation in Activation::ALL {
                for qa in [1, 255, 256] {
                    let p = output(Simd::Plain, activation, qa, &a, &bias, &weights);
                    let v = output(Simd::Avx2, activation, qa, &a, &bias, &weights);
                    assert_eq!(p, v, "{activation:?} qa {qa} n {n}");
                }
            }
        }
    }

    #[test]
    fn lanes_flatten_in_order() {
        let mut l = [Line::ZERO; 2];
        l[1].0[0] = 5;
        l[0].0[31] = -3;
        let flat = lanes(&l);
        assert_eq!(flat.len(), 64);
        assert_eq!((flat[31], flat[32]), (-3, 5));
    }
}
