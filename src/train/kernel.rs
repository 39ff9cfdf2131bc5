//! The inner loops: one chunk of samples' forward and backward pass, the loss alone, the sum
//! of chunk gradients and the AdamW update.
//!
//! Each loop is written once, generically, over contiguous `f32` slices in fixed-width blocks
//! (`chunks_exact`, arrays of a constant length, outputs built in a local array and stored
//! whole), so LLVM vectorises it without bounds checks or aliasing doubts in the innermost loop.
//! The crate builds for x86-64-v2 (SSE4.2); each entry point also has a copy compiled with AVX2
//! and FMA enabled (`#[target_feature]` on a wrapper around the same `#[inline(always)]` code),
//! chosen at run time with `is_x86_feature_detected!`. The two loops that stream
//! feature-transformer rows (summing rows into an accumulator, adding a gradient row into a
//! buffer) are written with AVX2 intrinsics in that copy, with aligned loads where the rows are
//! aligned (see `aligned`), because LLVM's x86-64-v2 tuning splits the 256-bit loads it would
//! emit from the generic code.
//!
//! The two copies compute the same bits: the code has no `mul_add`, and Rust never fuses a
//! multiply and an add on its own (it does not allow floating-point contraction); every sum is
//! written as the order of additions it performs (per element, or in 16 fixed lanes reduced
//! pairwise), which wider vectors do not change. A test checks it.
//!
//! The feature-transformer gradient is sparse: a sample touches only the rows of its active
//! inputs. Each chunk adds into a dense `inputs × hidden` buffer of its own and notes which rows
//! it touched, so clearing the buffer and summing chunks cost only those rows. A sparse layer
//! is a poor fit for a dense matrix-multiplication crate (`matrixmultiply`, `gemm`): the work is
//! gathering and scattering rows, which these loops do directly.

use super::TrainError;
use super::aligned::AlignedVec;
use super::data::Samples;
use super::network::Activation;

pub use crate::util::cpu::Simd;

/// `simd`, if this processor runs it: the check of every `set_simd`.
pub(crate) fn runnable(simd: Simd) -> Result<Simd, TrainError> {
    if simd.available() {
        Ok(simd)
    } else {
        Err(TrainError::Settings(format!(
            "this processor cannot run the {simd:?} build"
        )))
    }
}

/// The widest accumulator block (in floats) that fits the registers of `simd` and divides
/// `hidden` (a multiple of 16): 64 floats are 8 AVX2 registers, 32 are 8 SSE registers.
fn tile(simd: Simd, hidden: usize) -> usize {
    let widest = match simd {
        Simd::Avx2 => 64,
        Simd::Plain => 32,
    };
    [64, 32, 16]
        .into_iter()
        .find(|&t| t <= widest && hidden.is_multiple_of(t))
        .unwrap_or(16)
}

/// The network as the inner loops read it.
#[derive(Clone, Copy)]
pub(crate) struct NetRef<'a> {
    pub hidden: usize,
    pub activation: Activation,
    pub ft_weights: &'a [f32],
    pub ft_bias: &'a [f32],
    pub out_weights: &'a [f32],
    pub out_bias: &'a [f32],
}

/// The loss's constants: `p = sigmoid(k · output)`, `loss = |p - t|^power`.
#[derive(Clone, Copy)]
pub(crate) struct LossConsts {
    pub k: f32,
    pub power: f32,
}

impl LossConsts {
    /// The sample's loss and its derivative with respect to the raw output.
    #[inline(always)]
    fn loss_grad(self, output: f32, target: f32) -> (f32, f32) {
        let p = sigmoid(self.k * output);
        let e = p - target;
        let (loss, dloss_dp) = if self.power == 2.0 {
            (e * e, 2.0 * e)
        } else if e == 0.0 {
            (0.0, 0.0)
        } else {
            let a = e.abs();
            (
                a.powf(self.power),
                self.power * a.powf(self.power - 1.0) * e.signum(),
            )
        };
        (loss, dloss_dp * p * (1.0 - p) * self.k)
    }

    #[inline(always)]
    fn loss(self, output: f32, target: f32) -> f32 {
        let e = sigmoid(self.k * output) - target;
        if self.power == 2.0 {
            e * e
        } else {
            e.abs().powf(self.power)
        }
    }
}

#[inline(always)]
fn sigmoid(z: f32) -> f32 {
    1.0 / (1.0 + (-z).exp())
}

/// One chunk's gradient sums, and the scratch its samples need.
pub(crate) struct ChunkGrad {
    hidden: usize,
    /// `inputs × hidden`, zero outside the touched rows.
    pub ft: AlignedVec,
    pub touched: Vec<bool>,
    touched_rows: Vec<u32>,
    pub ft_bias: AlignedVec,
    pub out: AlignedVec,
    pub out_bias: AlignedVec,
    pub loss: f64,
    acc: AlignedVec,
    act: AlignedVec,
    dacc: AlignedVec,
}

impl ChunkGrad {
    pub fn new(inputs: usize, hidden: usize, buckets: usize) -> ChunkGrad {
        ChunkGrad {
            hidden,
            ft: AlignedVec::zeros(inputs * hidden),
            touched: vec![false; inputs],
            touched_rows: Vec::new(),
            ft_bias: AlignedVec::zeros(hidden),
            out: AlignedVec::zeros(buckets * 2 * hidden),
            out_bias: AlignedVec::zeros(buckets),
            loss: 0.0,
            acc: AlignedVec::zeros(2 * hidden),
            act: AlignedVec::zeros(2 * hidden),
            dacc: AlignedVec::zeros(2 * hidden),
        }
    }

    /// Zeroes the sums: only the rows the last chunk touched.
    fn clear(&mut self) {
        let h = self.hidden;
        for &r in &self.touched_rows {
            let r = r as usize;
            self.ft[r * h..(r + 1) * h].fill(0.0);
            self.touched[r] = false;
        }
        self.touched_rows.clear();
        self.ft_bias.fill(0.0);
        self.out.fill(0.0);
        self.out_bias.fill(0.0);
        self.loss = 0.0;
    }
}

/// The activation and its derivative, as types so each combination compiles to its own loop.
trait Act {
    fn f(x: f32) -> f32;
    fn df(x: f32) -> f32;
}

struct Crelu;
struct Screlu;

impl Act for Crelu {
    #[inline(always)]
    fn f(x: f32) -> f32 {
        x.clamp(0.0, 1.0)
    }
    #[inline(always)]
    fn df(x: f32) -> f32 {
        if x > 0.0 && x < 1.0 { 1.0 } else { 0.0 }
    }
}

impl Act for Screlu {
    #[inline(always)]
    fn f(x: f32) -> f32 {
        let c = x.clamp(0.0, 1.0);
        c * c
    }
    #[inline(always)]
    fn df(x: f32) -> f32 {
        if x > 0.0 && x < 1.0 { 2.0 * x } else { 0.0 }
    }
}

/// `acc = bias + Σ rows of feats`, a block of `T` floats at a time so the block's sums stay in
/// registers while the rows stream past.
#[inline(always)]
fn accumulate<const T: usize>(
    weights: &[f32],
    bias: &[f32],
    feats: &[u16],
    hidden: usize,
    acc: &mut [f32],
) {
    for (t, (out, b)) in acc
        .chunks_exact_mut(T)
        .zip(bias.chunks_exact(T))
        .enumerate()
    {
        let mut r = [0.0f32; T];
        r.copy_from_slice(b);
        let off = t * T;
        for &i in feats {
            let row = &weights[i as usize * hidden + off..][..T];
            for k in 0..T {
                r[k] += row[k];
            }
        }
        out.copy_from_slice(&r);
    }
}

/// Sixteen lanes summed pairwise, in a fixed order.
#[inline(always)]
fn reduce16(mut l: [f32; 16]) -> f32 {
    for width in [8, 4, 2, 1] {
        for k in 0..width {
            l[k] += l[k + width];
        }
    }
    l[0]
}

/// Activates `acc` into `act` and returns `act · weights` (16 lanes). Each block is computed
/// in a local array and stored whole, so LLVM need not prove that the output does not alias
/// the inputs before it vectorises (here and in the loops below).
#[inline(always)]
fn activate_dot<A: Act>(acc: &[f32], weights: &[f32], act: &mut [f32]) -> f32 {
    let mut lanes = [0.0f32; 16];
    for ((a, x), w) in act
        .chunks_exact_mut(16)
        .zip(acc.chunks_exact(16))
        .zip(weights.chunks_exact(16))
    {
        let mut v = [0.0f32; 16];
        for k in 0..16 {
            v[k] = A::f(x[k]);
            lanes[k] += v[k] * w[k];
        }
        a.copy_from_slice(&v);
    }
    reduce16(lanes)
}

/// The output layer's backward pass: adds `dy · act` to the bucket's weight gradient and
/// writes the gradient with respect to the accumulators.
#[inline(always)]
fn backward<A: Act>(
    dy: f32,
    acc: &[f32],
    act: &[f32],
    weights: &[f32],
    grad: &mut [f32],
    dacc: &mut [f32],
) {
    for ((((g, d), a), x), w) in grad
        .chunks_exact_mut(16)
        .zip(dacc.chunks_exact_mut(16))
        .zip(act.chunks_exact(16))
        .zip(acc.chunks_exact(16))
        .zip(weights.chunks_exact(16))
    {
        let mut gv = [0.0f32; 16];
        gv.copy_from_slice(g);
        let mut dv = [0.0f32; 16];
        for k in 0..16 {
            gv[k] += dy * a[k];
            dv[k] = dy * w[k] * A::df(x[k]);
        }
        g.copy_from_slice(&gv);
        d.copy_from_slice(&dv);
    }
}

/// `dst += src`, element by element.
#[inline(always)]
fn add_assign(dst: &mut [f32], src: &[f32]) {
    for (d, s) in dst.chunks_exact_mut(16).zip(src.chunks_exact(16)) {
        let mut x = [0.0f32; 16];
        x.copy_from_slice(d);
        for k in 0..16 {
            x[k] += s[k];
        }
        d.copy_from_slice(&x);
    }
    let tail = dst.len() / 16 * 16;
    for (d, s) in dst[tail..].iter_mut().zip(&src[tail..]) {
        *d += s;
    }
}

/// The two loops that carry nearly all the work: summing feature-transformer rows into an
/// accumulator, and adding a row of gradient into a buffer.
trait Rows {
    fn accumulate<const T: usize>(
        weights: &[f32],
        bias: &[f32],
        feats: &[u16],
        hidden: usize,
        acc: &mut [f32],
    );
    fn add_assign(dst: &mut [f32], src: &[f32]);
}

/// Plain Rust, vectorised by LLVM for the function it is inlined into.
struct Portable;

impl Rows for Portable {
    #[inline(always)]
    fn accumulate<const T: usize>(
        weights: &[f32],
        bias: &[f32],
        feats: &[u16],
        hidden: usize,
        acc: &mut [f32],
    ) {
        accumulate::<T>(weights, bias, feats, hidden, acc)
    }

    #[inline(always)]
    fn add_assign(dst: &mut [f32], src: &[f32]) {
        add_assign(dst, src)
    }
}

/// The same two loops with AVX2 intrinsics. For x86-64-v2, LLVM tunes for Sandy Bridge, which
/// splits every unaligned 256-bit load and store in two halves, even in a function compiled
/// with AVX2; these loops do the same additions in the same order with whole 256-bit accesses.
#[cfg(target_arch = "x86_64")]
struct Avx2Rows;

#[cfg(target_arch = "x86_64")]
impl Rows for Avx2Rows {
    #[inline(always)]
    fn accumulate<const T: usize>(
        weights: &[f32],
        bias: &[f32],
        feats: &[u16],
        hidden: usize,
        acc: &mut [f32],
    ) {
        // SAFETY: only the AVX2 entry points below use `Avx2Rows`, and they run only after
        // `Simd::available` (see `chunk_gradient`).
        unsafe { avx2::accumulate::<T>(weights, bias, feats, hidden, acc) }
    }

    #[inline(always)]
    fn add_assign(dst: &mut [f32], src: &[f32]) {
        // SAFETY: as above.
        unsafe { avx2::add_assign(dst, src) }
    }
}

#[cfg(target_arch = "x86_64")]
mod avx2 {
    use std::arch::x86_64::{
        __m256, _mm256_add_ps, _mm256_load_ps, _mm256_loadu_ps, _mm256_setzero_ps, _mm256_store_ps,
        _mm256_storeu_ps,
    };

    /// Whether every pointer is 32-byte aligned.
    #[inline(always)]
    fn aligned(ptrs: &[*const f32]) -> bool {
        ptrs.iter().all(|p| (*p as usize).is_multiple_of(32))
    }

    /// Eight floats from `p`, with an aligned load when `ALIGNED`.
    ///
    /// SAFETY: `p` points to 8 readable floats, 32-byte aligned when `ALIGNED`; AVX is on.
    #[inline(always)]
    unsafe fn load<const ALIGNED: bool>(p: *const f32) -> __m256 {
        // SAFETY: the caller's promise.
        unsafe {
            if ALIGNED {
                _mm256_load_ps(p)
            } else {
                _mm256_loadu_ps(p)
            }
        }
    }

    /// SAFETY: as `load`, for writing.
    #[inline(always)]
    unsafe fn store<const ALIGNED: bool>(p: *mut f32, x: __m256) {
        // SAFETY: the caller's promise.
        unsafe {
            if ALIGNED {
                _mm256_store_ps(p, x)
            } else {
                _mm256_storeu_ps(p, x)
            }
        }
    }

    /// [`super::accumulate`] for `T` a multiple of 8, at most 64 (8 registers).
    #[inline]
    #[target_feature(enable = "avx2,fma")]
    pub(super) fn accumulate<const T: usize>(
        weights: &[f32],
        bias: &[f32],
        feats: &[u16],
        hidden: usize,
        acc: &mut [f32],
    ) {
        // Rows start `hidden` floats apart, a multiple of 16: aligned when the matrix is.
        if aligned(&[weights.as_ptr(), bias.as_ptr(), acc.as_ptr()]) {
            accumulate_with::<T, true>(weights, bias, feats, hidden, acc)
        } else {
            accumulate_with::<T, false>(weights, bias, feats, hidden, acc)
        }
    }

    #[inline]
    #[target_feature(enable = "avx2,fma")]
    fn accumulate_with<const T: usize, const ALIGNED: bool>(
        weights: &[f32],
        bias: &[f32],
        feats: &[u16],
        hidden: usize,
        acc: &mut [f32],
    ) {
        const { assert!(T.is_multiple_of(8) && T <= 64) };
        for (t, (out, b)) in acc
            .chunks_exact_mut(T)
            .zip(bias.chunks_exact(T))
            .enumerate()
        {
            let mut r = [_mm256_setzero_ps(); 8];
            for k in 0..T / 8 {
                // SAFETY: `b` holds `T` floats, aligned if `ALIGNED` (`T` is a multiple of 8).
                r[k] = unsafe { load::<ALIGNED>(b.as_ptr().add(8 * k)) };
            }
            let off = t * T;
            for &i in feats {
                let row = &weights[i as usize * hidden + off..][..T];
                for k in 0..T / 8 {
                    // SAFETY: `row` holds `T` floats, aligned if `ALIGNED`.
                    let x = unsafe { load::<ALIGNED>(row.as_ptr().add(8 * k)) };
                    r[k] = _mm256_add_ps(r[k], x);
                }
            }
            for k in 0..T / 8 {
                // SAFETY: `out` holds `T` floats, aligned if `ALIGNED`.
                unsafe { store::<ALIGNED>(out.as_mut_ptr().add(8 * k), r[k]) };
            }
        }
    }

    /// [`super::add_assign`].
    #[inline]
    #[target_feature(enable = "avx2,fma")]
    pub(super) fn add_assign(dst: &mut [f32], src: &[f32]) {
        if aligned(&[dst.as_ptr(), src.as_ptr()]) {
            add_assign_with::<true>(dst, src)
        } else {
            add_assign_with::<false>(dst, src)
        }
    }

    #[inline]
    #[target_feature(enable = "avx2,fma")]
    fn add_assign_with<const ALIGNED: bool>(dst: &mut [f32], src: &[f32]) {
        for (d, s) in dst.chunks_exact_mut(8).zip(src.chunks_exact(8)) {
            // SAFETY: `d` and `s` hold 8 floats each, aligned if `ALIGNED` (they start a
            // multiple of 8 floats after the aligned starts).
            unsafe {
                let x = _mm256_add_ps(load::<ALIGNED>(d.as_ptr()), load::<ALIGNED>(s.as_ptr()));
                store::<ALIGNED>(d.as_mut_ptr(), x);
            }
        }
        let tail = dst.len().min(src.len()) / 8 * 8;
        for (d, s) in dst[tail..].iter_mut().zip(&src[tail..]) {
            *d += s;
        }
    }
}

/// Adds `d` to the rows of `feats`, noting rows touched for the first time.
#[inline(always)]
fn scatter<R: Rows>(grad: &mut ChunkGradFt<'_>, d: &[f32], feats: &[u16]) {
    let h = d.len();
    for &i in feats {
        let i = i as usize;
        if !grad.touched[i] {
            grad.touched[i] = true;
            grad.rows.push(i as u32);
        }
        R::add_assign(&mut grad.ft[i * h..(i + 1) * h], d);
    }
}

/// The feature-transformer part of a [`ChunkGrad`], borrowed apart from its scratch.
struct ChunkGradFt<'a> {
    ft: &'a mut [f32],
    touched: &'a mut [bool],
    rows: &'a mut Vec<u32>,
}

/// How many samples ahead the kernels ask for a sample's record (see [`Samples::prefetch`]).
const PREFETCH_FAR: usize = 4;

/// The prefetch hints for the samples after the `j`th of `indices`.
#[inline(always)]
fn prefetch<S: Samples + ?Sized>(samples: &S, indices: &[u32], j: usize) {
    if let Some(&i) = indices.get(j + PREFETCH_FAR) {
        samples.prefetch(i as usize, false);
    }
    if let Some(&i) = indices.get(j + 1) {
        samples.prefetch(i as usize, true);
    }
}

#[inline(always)]
fn chunk_gradient_impl<A: Act, R: Rows, const T: usize, S: Samples + ?Sized>(
    net: &NetRef<'_>,
    lc: LossConsts,
    samples: &S,
    indices: &[u32],
    g: &mut ChunkGrad,
) {
    let h = net.hidden;
    let ChunkGrad {
        ft,
        touched,
        touched_rows,
        ft_bias,
        out,
        out_bias,
        loss,
        acc,
        act,
        dacc,
        ..
    } = g;
    let mut ftg = ChunkGradFt {
        ft,
        touched,
        rows: touched_rows,
    };
    let mut loss_sum = 0.0f64;
    for (j, &index) in indices.iter().enumerate() {
        prefetch(samples, indices, j);
        let s = samples.sample(index as usize);
        let (acc_stm, acc_other) = acc.split_at_mut(h);
        R::accumulate::<T>(net.ft_weights, net.ft_bias, s.stm, h, acc_stm);
        R::accumulate::<T>(net.ft_weights, net.ft_bias, s.other, h, acc_other);
        let b = s.bucket as usize;
        let ow = &net.out_weights[b * 2 * h..(b + 1) * 2 * h];
        let y = activate_dot::<A>(acc, ow, act) + net.out_bias[b];
        let (l, dy) = lc.loss_grad(y, s.target);
        loss_sum += l as f64;
        out_bias[b] += dy;
        backward::<A>(dy, acc, act, ow, &mut out[b * 2 * h..(b + 1) * 2 * h], dacc);
        let (d_stm, d_other) = dacc.split_at(h);
        R::add_assign(ft_bias, d_stm);
        R::add_assign(ft_bias, d_other);
        scatter::<R>(&mut ftg, d_stm, s.stm);
        scatter::<R>(&mut ftg, d_other, s.other);
    }
    *loss += loss_sum;
}

#[inline(always)]
fn chunk_loss_impl<A: Act, R: Rows, const T: usize, S: Samples + ?Sized>(
    net: &NetRef<'_>,
    lc: LossConsts,
    samples: &S,
    indices: impl Iterator<Item = usize>,
    acc: &mut [f32],
    act: &mut [f32],
) -> f64 {
    let h = net.hidden;
    let mut loss_sum = 0.0f64;
    for index in indices {
        let s = samples.sample(index);
        let (acc_stm, acc_other) = acc.split_at_mut(h);
        R::accumulate::<T>(net.ft_weights, net.ft_bias, s.stm, h, acc_stm);
        R::accumulate::<T>(net.ft_weights, net.ft_bias, s.other, h, acc_other);
        let b = s.bucket as usize;
        let ow = &net.out_weights[b * 2 * h..(b + 1) * 2 * h];
        let y = activate_dot::<A>(acc, ow, act) + net.out_bias[b];
        loss_sum += lc.loss(y, s.target) as f64;
    }
    loss_sum
}

/// The AdamW constants of one step (see `optimiser`).
#[derive(Clone, Copy)]
pub(crate) struct AdamConsts {
    /// `1 / batch size`: the gradient arrives summed.
    pub grad_scale: f32,
    pub beta1: f32,
    pub beta2: f32,
    /// `1 - lr · decay`.
    pub keep: f32,
    /// `lr / (1 - beta1^t)`.
    pub step_size: f32,
    /// `1 / sqrt(1 - beta2^t)`.
    pub v_scale: f32,
    pub eps: f32,
    pub clip: f32,
}

#[inline(always)]
fn adam_impl(c: AdamConsts, w: &mut [f32], g: &[f32], m: &mut [f32], v: &mut [f32]) {
    for (((w, g), m), v) in w.iter_mut().zip(g).zip(m.iter_mut()).zip(v.iter_mut()) {
        let g = g * c.grad_scale;
        *m = c.beta1 * *m + (1.0 - c.beta1) * g;
        *v = c.beta2 * *v + (1.0 - c.beta2) * (g * g);
        let x = *w * c.keep - c.step_size * *m / (v.sqrt() * c.v_scale + c.eps);
        *w = x.clamp(-c.clip, c.clip);
    }
}

// ---------------------------------------------------------------------------------------------
// Dispatch: each entry point picks the build, the activation and the block width.

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
fn chunk_gradient_avx2<A: Act, const T: usize, S: Samples + ?Sized>(
    net: &NetRef<'_>,
    lc: LossConsts,
    samples: &S,
    indices: &[u32],
    g: &mut ChunkGrad,
) {
    chunk_gradient_impl::<A, Avx2Rows, T, S>(net, lc, samples, indices, g)
}

#[inline(always)]
fn chunk_gradient_portable<A: Act, const T: usize, S: Samples + ?Sized>(
    net: &NetRef<'_>,
    lc: LossConsts,
    samples: &S,
    indices: &[u32],
    g: &mut ChunkGrad,
) {
    chunk_gradient_impl::<A, Portable, T, S>(net, lc, samples, indices, g)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
fn chunk_loss_avx2<A: Act, const T: usize, S: Samples + ?Sized>(
    net: &NetRef<'_>,
    lc: LossConsts,
    samples: &S,
    indices: impl Iterator<Item = usize>,
    acc: &mut [f32],
    act: &mut [f32],
) -> f64 {
    chunk_loss_impl::<A, Avx2Rows, T, S>(net, lc, samples, indices, acc, act)
}

#[inline(always)]
fn chunk_loss_portable<A: Act, const T: usize, S: Samples + ?Sized>(
    net: &NetRef<'_>,
    lc: LossConsts,
    samples: &S,
    indices: impl Iterator<Item = usize>,
    acc: &mut [f32],
    act: &mut [f32],
) -> f64 {
    chunk_loss_impl::<A, Portable, T, S>(net, lc, samples, indices, acc, act)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
fn adam_avx2(c: AdamConsts, w: &mut [f32], g: &[f32], m: &mut [f32], v: &mut [f32]) {
    adam_impl(c, w, g, m, v)
}

/// Calls `$f::<A, T, S>` with the activation and the block width chosen at run time.
macro_rules! by_shape {
    ($simd:expr, $net:expr, $f:ident, $S:ty, ($($arg:expr),*)) => {{
        let t = tile($simd, $net.hidden);
        match ($net.activation, t) {
            (Activation::Crelu, 64) => $f::<Crelu, 64, $S>($($arg),*),
            (Activation::Crelu, 32) => $f::<Crelu, 32, $S>($($arg),*),
            (Activation::Crelu, _) => $f::<Crelu, 16, $S>($($arg),*),
            (Activation::Screlu, 64) => $f::<Screlu, 64, $S>($($arg),*),
            (Activation::Screlu, 32) => $f::<Screlu, 32, $S>($($arg),*),
            (Activation::Screlu, _) => $f::<Screlu, 16, $S>($($arg),*),
        }
    }};
}

/// One chunk's gradient, added into `g` after clearing it.
pub(crate) fn chunk_gradient<S: Samples + ?Sized>(
    simd: Simd,
    net: &NetRef<'_>,
    lc: LossConsts,
    samples: &S,
    indices: &[u32],
    g: &mut ChunkGrad,
) {
    g.clear();
    match simd {
        #[cfg(target_arch = "x86_64")]
        // SAFETY: `Workspace` only holds `Simd::Avx2` after `Simd::available` said yes.
        Simd::Avx2 => unsafe {
            by_shape!(
                simd,
                net,
                chunk_gradient_avx2,
                S,
                (net, lc, samples, indices, g)
            )
        },
        _ => by_shape!(
            simd,
            net,
            chunk_gradient_portable,
            S,
            (net, lc, samples, indices, g)
        ),
    }
}

/// The summed loss of the samples `indices` (forward pass only).
pub(crate) fn chunk_loss<S: Samples + ?Sized>(
    simd: Simd,
    net: &NetRef<'_>,
    lc: LossConsts,
    samples: &S,
    indices: impl Iterator<Item = usize>,
) -> f64 {
    let mut acc = AlignedVec::zeros(2 * net.hidden);
    let mut act = AlignedVec::zeros(2 * net.hidden);
    let (acc, act) = (&mut acc[..], &mut act[..]);
    match simd {
        #[cfg(target_arch = "x86_64")]
        // SAFETY: as in `chunk_gradient`.
        Simd::Avx2 => unsafe {
            by_shape!(
                simd,
                net,
                chunk_loss_avx2,
                S,
                (net, lc, samples, indices, acc, act)
            )
        },
        _ => by_shape!(
            simd,
            net,
            chunk_loss_portable,
            S,
            (net, lc, samples, indices, acc, act)
        ),
    }
}

/// `dst += src`.
pub(crate) fn add_into(simd: Simd, dst: &mut [f32], src: &[f32]) {
    match simd {
        #[cfg(target_arch = "x86_64")]
        // SAFETY: as in `chunk_gradient`.
        Simd::Avx2 => unsafe { avx2::add_assign(dst, src) },
        _ => add_assign(dst, src),
    }
}

/// One AdamW update of the weights `w` from the summed gradient `g`.
pub(crate) fn adam(
    simd: Simd,
    c: AdamConsts,
    w: &mut [f32],
    g: &[f32],
    m: &mut [f32],
    v: &mut [f32],
) {
    match simd {
        #[cfg(target_arch = "x86_64")]
        // SAFETY: as in `chunk_gradient`.
        Simd::Avx2 => unsafe { adam_avx2(c, w, g, m, v) },
        _ => adam_impl(c, w, g, m, v),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The AVX2 row loops, on aligned and unaligned slices, give the portable loops' bits.
    #[test]
    #[cfg(target_arch = "x86_64")]
    fn avx2_rows_match_portable() {
        if !Simd::Avx2.available() {
            return;
        }
        let (inputs, hidden) = (7, 64);
        let mut store = AlignedVec::zeros(inputs * hidden + hidden + 2 * hidden + 8);
        for (i, x) in store.iter_mut().enumerate() {
            *x = ((i * 7919) % 1000) as f32 / 997.0 - 0.5;
        }
        let feats = [3u16, 0, 6, 3, 1];
        for shift in [0, 1, 8] {
            let weights = &store[shift..shift + inputs * hidden];
            let bias = &store[inputs * hidden..inputs * hidden + hidden];
            let mut want = AlignedVec::zeros(hidden + 8);
            let mut got = AlignedVec::zeros(hidden + 8);
            Portable::accumulate::<16>(
                weights,
                bias,
                &feats,
                hidden,
                &mut want[shift..shift + hidden],
            );
            Avx2Rows::accumulate::<64>(
                weights,
                bias,
                &feats,
                hidden,
                &mut got[shift..shift + hidden],
            );
            assert!(want == got, "accumulate, shift {shift}");
            Avx2Rows::accumulate::<32>(
                weights,
                bias,
                &feats,
                hidden,
                &mut got[shift..shift + hidden],
            );
            assert!(want == got, "accumulate by 32, shift {shift}");
            let src = &store[shift + 5..shift + 5 + 61];
            let mut a = want[..61].to_vec();
            let mut b = a.clone();
            Portable::add_assign(&mut a, src);
            Avx2Rows::add_assign(&mut b, src);
            assert_eq!(a, b, "add_assign, shift {shift}");
        }
    }
}
