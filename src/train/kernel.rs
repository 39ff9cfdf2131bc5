//! The inner loops: one chunk of samples' forward and backward pass, the loss alone, the sum
//! of chunk gradients and the AdamW update.
//!
//! Each loop is written once, generically, over contiguous `f32` slices in fixed-width blocks
//! (`chunks_exact`, arrays of a constant length, outputs built in a local array and stored
//! whole), so LLVM vectorises it without bounds checks or aliasing doubts in the innermost loop.
//! The crate builds for x86-64-v2 (SSE4.2); each entry point also has a copy compiled with AVX2
//! and FMA enabled (`#[target_feature]` on one generic wrapper, `run_avx2`, around the same
//! `#[inline(always)]` code), chosen at run time by [`Simd`]. The two loops that stream
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
use super::data::{Sample, Samples};
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

/// The two loops that carry nearly all the work: summing feature-transformer rows into an
/// accumulator, and adding a row of gradient into a buffer.
trait Rows {
    /// `acc = bias + Σ rows of feats`, a block of `T` floats at a time so the block's sums
    /// stay in registers while the rows stream past.
    fn accumulate<const T: usize>(
        weights: &[f32],
        bias: &[f32],
        feats: &[u16],
        hidden: usize,
        acc: &mut [f32],
    );
    /// `dst += src`, element by element.
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
        // `Simd::available` (see `run_in`).
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

    /// [`Rows::accumulate`](super::Rows::accumulate) for `T` a multiple of 8, at most 64 (8 registers).
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

    /// [`Rows::add_assign`](super::Rows::add_assign).
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

/// A sample's forward pass: both accumulators into `acc`, activated into `act`. Returns the
/// network's output.
#[inline(always)]
fn forward<A: Act, R: Rows, const T: usize>(
    net: &NetRef<'_>,
    s: &Sample<'_>,
    acc: &mut [f32],
    act: &mut [f32],
) -> f32 {
    let h = net.hidden;
    let (acc_stm, acc_other) = acc.split_at_mut(h);
    R::accumulate::<T>(net.ft_weights, net.ft_bias, s.stm, h, acc_stm);
    R::accumulate::<T>(net.ft_weights, net.ft_bias, s.other, h, acc_other);
    let b = s.bucket as usize;
    activate_dot::<A>(acc, net.bucket_weights(b), act) + net.out_bias[b]
}

impl<'a> NetRef<'a> {
    /// The output weights of bucket `b`: the side to move's `hidden`, then the other side's.
    #[inline(always)]
    fn bucket_weights(&self, b: usize) -> &'a [f32] {
        &self.out_weights[b * 2 * self.hidden..(b + 1) * 2 * self.hidden]
    }
}

/// An inner loop written once for every activation `A`, build of the row loops `R` and block
/// width `T`; [`dispatch`] picks the three at run time.
trait Kernel {
    type Output;
    fn run<A: Act, R: Rows, const T: usize>(self) -> Self::Output;
}

/// One chunk's gradient sums (see [`chunk_gradient`]).
struct GradientKernel<'a, 'n, S: ?Sized> {
    net: &'a NetRef<'n>,
    lc: LossConsts,
    samples: &'a S,
    indices: &'a [u32],
    g: &'a mut ChunkGrad,
}

impl<S: Samples + ?Sized> Kernel for GradientKernel<'_, '_, S> {
    type Output = ();

    #[inline(always)]
    fn run<A: Act, R: Rows, const T: usize>(self) {
        let GradientKernel {
            net,
            lc,
            samples,
            indices,
            g,
        } = self;
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
            let y = forward::<A, R, T>(net, &s, acc, act);
            let (l, dy) = lc.loss_grad(y, s.target);
            loss_sum += l as f64;
            let b = s.bucket as usize;
            out_bias[b] += dy;
            let out_b = &mut out[b * 2 * h..(b + 1) * 2 * h];
            backward::<A>(dy, acc, act, net.bucket_weights(b), out_b, dacc);
            let (d_stm, d_other) = dacc.split_at(h);
            R::add_assign(ft_bias, d_stm);
            R::add_assign(ft_bias, d_other);
            scatter::<R>(&mut ftg, d_stm, s.stm);
            scatter::<R>(&mut ftg, d_other, s.other);
        }
        *loss += loss_sum;
    }
}

/// The summed loss of some samples (see [`chunk_loss`]).
struct LossKernel<'a, 'n, S: ?Sized, I> {
    net: &'a NetRef<'n>,
    lc: LossConsts,
    samples: &'a S,
    indices: I,
    acc: &'a mut [f32],
    act: &'a mut [f32],
}

impl<S: Samples + ?Sized, I: Iterator<Item = usize>> Kernel for LossKernel<'_, '_, S, I> {
    type Output = f64;

    #[inline(always)]
    fn run<A: Act, R: Rows, const T: usize>(self) -> f64 {
        let mut loss_sum = 0.0f64;
        for index in self.indices {
            let s = self.samples.sample(index);
            let y = forward::<A, R, T>(self.net, &s, self.acc, self.act);
            loss_sum += self.lc.loss(y, s.target) as f64;
        }
        loss_sum
    }
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

/// `kernel` in a copy compiled with AVX2 and FMA: the `#[inline(always)]` loops it runs are
/// compiled for them.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
fn run_avx2<K: Kernel, A: Act, const T: usize>(kernel: K) -> K::Output {
    kernel.run::<A, Avx2Rows, T>()
}

/// `kernel` in the build `simd`.
#[inline(always)]
fn run_in<K: Kernel, A: Act, const T: usize>(simd: Simd, kernel: K) -> K::Output {
    match simd {
        #[cfg(target_arch = "x86_64")]
        // SAFETY: `Workspace` only holds `Simd::Avx2` after `runnable` said yes.
        Simd::Avx2 => unsafe { run_avx2::<K, A, T>(kernel) },
        _ => kernel.run::<A, Portable, T>(),
    }
}

/// `kernel` in the build `simd`, with the activation of `net` and the block width for its
/// hidden size.
fn dispatch<K: Kernel>(simd: Simd, net: &NetRef<'_>, kernel: K) -> K::Output {
    match (net.activation, tile(simd, net.hidden)) {
        (Activation::Crelu, 64) => run_in::<K, Crelu, 64>(simd, kernel),
        (Activation::Crelu, 32) => run_in::<K, Crelu, 32>(simd, kernel),
        (Activation::Crelu, _) => run_in::<K, Crelu, 16>(simd, kernel),
        (Activation::Screlu, 64) => run_in::<K, Screlu, 64>(simd, kernel),
        (Activation::Screlu, 32) => run_in::<K, Screlu, 32>(simd, kernel),
        (Activation::Screlu, _) => run_in::<K, Screlu, 16>(simd, kernel),
    }
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
    let kernel = GradientKernel {
        net,
        lc,
        samples,
        indices,
        g,
    };
    dispatch(simd, net, kernel)
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
    let kernel = LossKernel {
        net,
        lc,
        samples,
        indices,
        acc: &mut acc,
        act: &mut act,
    };
    dispatch(simd, net, kernel)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
fn adam_avx2(c: AdamConsts, w: &mut [f32], g: &[f32], m: &mut [f32], v: &mut [f32]) {
    adam_impl(c, w, g, m, v)
}

/// `dst += src`.
pub(crate) fn add_into(simd: Simd, dst: &mut [f32], src: &[f32]) {
    match simd {
        #[cfg(target_arch = "x86_64")]
        // SAFETY: as in `run_in`.
        Simd::Avx2 => unsafe { avx2::add_assign(dst, src) },
        _ => Portable::add_assign(dst, src),
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
        // SAFETY: as in `run_in` (`Optimiser` holds `Simd::Avx2` only after `runnable`).
        Simd::Avx2 => unsafe { adam_avx2(c, w, g, m, v) },
        _ => adam_impl(c, w, g, m, v),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg(target_arch = "x86_64")]
    type AccumulateFn = fn(&[f32], &[f32], &[u16], usize, &mut [f32]);

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
            let sum = |accumulate: AccumulateFn| {
                let mut acc = AlignedVec::zeros(hidden + 8);
                accumulate(
                    weights,
                    bias,
                    &feats,
                    hidden,
                    &mut acc[shift..shift + hidden],
                );
                acc
            };
            let want = sum(Portable::accumulate::<16>);
            let by_64 = sum(Avx2Rows::accumulate::<64>);
            assert!(want == by_64, "accumulate by 64, shift {shift}");
            let by_32 = sum(Avx2Rows::accumulate::<32>);
            assert!(want == by_32, "accumulate by 32, shift {shift}");
            let src = &store[shift + 5..shift + 5 + 61];
            let mut a = want[..61].to_vec();
            let mut b = a.clone();
            Portable::add_assign(&mut a, src);
            Avx2Rows::add_assign(&mut b, src);
            assert_eq!(a, b, "add_assign, shift {shift}");
        }
    }
}
