//! The traces of a position set, restricted to the tuned parameters and stored compactly,
//! and the loss and gradient sums over them (the pass every optimiser step makes). Tracing a
//! position under a parameter space turns the evaluation's trace (`eval::trace`) into the
//! store's terms, folding the untuned parameters into the constant.

use crate::eval::EvalParams;
use crate::eval::layout::{Part, part};
use crate::eval::score::PHASE_MAX;
use crate::eval::score::SCALE_DIV;
use crate::eval::trace::{danger_dq, danger_q, scale_keep};
use crate::tune::space::{ParamSet, Space};
use rayon::prelude::*;

/// The win probability of a centipawn evaluation scaled by K: `1 / (1 + 10^(−K·e/400))`,
/// written with `exp` (cheaper than `powf`, and the pass evaluates it once per position).
#[inline]
pub fn sigmoid(k: f64, e: f64) -> f64 {
    1.0 / (1.0 + (-k * e * (std::f64::consts::LN_10 / 400.0)).exp())
}

/// One stored use of a tuned parameter: a whole count `n` and a key holding the local
/// parameter index (low 14 bits) and how the count is weighted (high 2 bits, `KIND_*`).
/// Four bytes where the CSR form spent eight per value and two values per tapered pair.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[repr(C)]
pub struct Use {
    key: u16,
    n: i16,
}

const _: () = assert!(std::mem::size_of::<Use>() == 4);
// Local indices fit the key's 14 bits whatever the selection.
const _: () = assert!(crate::eval::layout::NALL < 1 << KIND_SHIFT);

const KIND_SHIFT: u32 = 14;
/// A tapered pair, the middlegame value at `j` and the endgame value at `j + 1`:
/// `n·(phase·θ[j] + (16 − phase)·θ[j+1]) / 16`, the form of the tapered evaluation.
const KIND_PAIR: u16 = 0;
/// A plain value (`tempo`): `n·θ[j]`.
const KIND_PLAIN: u16 = 1;
/// A middlegame value whose endgame partner is not tuned: `n·phase/16·θ[j]`.
const KIND_MG: u16 = 2;
/// An endgame value whose middlegame partner is not tuned: `n·(16 − phase)/16·θ[j]`.
const KIND_EG: u16 = 3;

/// A king-danger attack-weight use: `a·θ[idx]` in side `side`'s `D`, in four bytes (the
/// evaluation's attack weights are whole counts of palace hits).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
#[repr(C)]
pub struct DangerUse {
    a: i16,
    /// The parameter's index, and the side in the top bit.
    key: u16,
}

const DANGER_SIDE_BIT: u16 = 1 << 15;

impl DangerUse {
    /// A use of `a` (a whole number in i16's range: the store keeps no fractions here).
    fn new(side: usize, idx: u32, a: f32) -> DangerUse {
        let n = a as i16;
        assert!(
            n as f32 == a && idx < DANGER_SIDE_BIT as u32,
            "king-danger use {a} of parameter {idx}: the store keeps whole counts below 2^15"
        );
        DangerUse {
            a: n,
            key: idx as u16 | if side == 1 { DANGER_SIDE_BIT } else { 0 },
        }
    }

    #[inline(always)]
    fn idx(self) -> usize {
        (self.key & !DANGER_SIDE_BIT) as usize
    }

    #[inline(always)]
    fn side(self) -> usize {
        (self.key >> 15) as usize
    }
}

const _: () = assert!(std::mem::size_of::<DangerUse>() == 4);

/// Precomputed traces of a set of positions, restricted to the tuned parameters.
///
/// Compact, so that a large dataset fits in memory: a tapered pair is one [`Use`] (u16 index,
/// i16 count) with the phase stored once per position, instead of two (u32, f32) entries
/// carrying `count·phase/16`; coefficients that are not whole counts at the position's phase
/// (Jieqi's dark-piece pool fractions, multiples of 1/4096) take an exact `(u16, f32)` path
/// beside it. Every buffer is sized exactly ([`TraceSet::concat`]). The evaluation is still
/// exact: with integer parameters every product is a short binary fraction, so the f64 sums
/// equal `Trace::dot`.
#[derive(Clone, Debug)]
pub struct TraceSet {
    /// Start of each position's uses (`len + 1` entries).
    use_off: Vec<u32>,
    uses: Vec<Use>,
    /// Start of each position's fractional coefficients (`len + 1` entries), empty while no
    /// position has any (Xiangqi's traces never do).
    frac_off: Vec<u32>,
    frac_idx: Vec<u16>,
    frac_val: Vec<f32>,
    /// Phase (0..=16) the position's pairs are blended at.
    phase: Vec<u8>,
    /// Constant part of each evaluation (trace constant + untuned parameters): f64 because
    /// with Jieqi's 1/65536 fractions the sum may need more than f32's 24 bits to stay exact.
    fixed: Vec<f64>,
    result: Vec<f32>,
    /// King danger, empty while no position has any: start of each position's danger uses
    /// (`len + 1`), the uses, each side's untuned part of `D` (empty too while every one is
    /// zero, as when all the danger weights are tuned), and the weight of `q(D)`.
    danger_off: Vec<u32>,
    danger: Vec<DangerUse>,
    danger_fixed: Vec<[f32; 2]>,
    danger_scale: Vec<f32>,
    /// The endgame scale-down of each position, empty while no position has one: the local
    /// index of its tuned value ([`NO_SCALE`] when it is not tuned or there is none) and the
    /// untuned value (64ths taken off the evaluation; 0 for none).
    scale: Vec<(u16, f32)>,
    /// Search scores (red's view, centipawns) blended into the labels with weight `lambda`;
    /// empty when the labels are the results alone.
    score: Vec<f32>,
    lambda: f64,
    /// The K of the scores in the labels (`--score-k`); `None`: the evaluation's K.
    score_k: Option<f64>,
}

impl Default for TraceSet {
    fn default() -> Self {
        TraceSet::new()
    }
}

/// One position's trace in the store's terms, before it is pushed.
#[derive(Default)]
struct Row {
    fixed: f64,
    phase: u8,
    uses: Vec<Use>,
    frac: Vec<(u16, f32)>,
    danger: Vec<DangerUse>,
    danger_fixed: [f64; 2],
    danger_scale: f64,
    scale: Option<(u16, f32)>,
}

/// The local index of a position's scale-down that is not tuned (or absent).
const NO_SCALE: u16 = u16::MAX;

impl Row {
    fn clear(&mut self) {
        self.fixed = 0.0;
        self.phase = PHASE_MAX as u8;
        self.uses.clear();
        self.frac.clear();
        self.danger.clear();
        self.danger_fixed = [0.0; 2];
        self.danger_scale = 0.0;
        self.scale = None;
    }
}

impl TraceSet {
    pub fn new() -> TraceSet {
        TraceSet {
            use_off: vec![0],
            uses: vec![],
            frac_off: vec![],
            frac_idx: vec![],
            frac_val: vec![],
            phase: vec![],
            fixed: vec![],
            result: vec![],
            danger_off: vec![],
            danger: vec![],
            danger_fixed: vec![],
            danger_scale: vec![],
            scale: vec![],
            score: vec![],
            lambda: 0.0,
            score_k: None,
        }
    }

    pub fn len(&self) -> usize {
        self.result.len()
    }

    pub fn is_empty(&self) -> bool {
        self.result.is_empty()
    }

    /// Number of stored entries (uses, fractional coefficients and danger uses).
    pub fn entries(&self) -> usize {
        self.uses.len() + self.frac_idx.len() + self.danger.len()
    }

    /// Heap bytes the store holds (capacity, slack included).
    pub fn bytes(&self) -> usize {
        fn cap<T>(v: &Vec<T>) -> usize {
            v.capacity() * std::mem::size_of::<T>()
        }
        cap(&self.use_off)
            + cap(&self.uses)
            + cap(&self.frac_off)
            + cap(&self.frac_idx)
            + cap(&self.frac_val)
            + cap(&self.phase)
            + cap(&self.fixed)
            + cap(&self.result)
            + cap(&self.danger_off)
            + cap(&self.danger)
            + cap(&self.danger_fixed)
            + cap(&self.danger_scale)
            + cap(&self.scale)
            + cap(&self.score)
    }

    /// Blends the search scores (one per position, red's view) into the labels with weight
    /// `lambda` (nnue-pytorch's convention), each as `σ(K·score)` with `score_k` for K when
    /// given (scores from another engine), else the evaluation's K.
    pub fn set_scores(&mut self, lambda: f64, score_k: Option<f64>, scores: Vec<f32>) {
        assert_eq!(scores.len(), self.len(), "one score per position");
        self.lambda = lambda;
        self.score_k = score_k;
        self.score = if lambda > 0.0 { scores } else { vec![] };
    }

    /// The target of position `i` at `k`: the result, or with scores and `blend` the mix
    /// `λ·σ(K·score) + (1−λ)·result`.
    #[inline]
    fn label(&self, i: usize, k: f64, blend: bool) -> f64 {
        let r = self.result[i] as f64;
        if blend && !self.score.is_empty() {
            let ks = self.score_k.unwrap_or(k);
            self.lambda * sigmoid(ks, self.score[i] as f64) + (1.0 - self.lambda) * r
        } else {
            r
        }
    }

    /// Adds a position with arbitrary coefficients (kept exactly, as f32) and no king danger.
    pub fn push(&mut self, fixed: f32, coeffs: &[(u32, f32)], result: f32) {
        self.push_danger(fixed, coeffs, [&[], &[]], [0.0; 2], 0.0, result);
    }

    /// Adds a position with arbitrary coefficients and king-danger forms
    /// `D_side = danger_fixed[side] + Σ a·θ[i]` weighted by `danger_scale`.
    pub fn push_danger(
        &mut self,
        fixed: f32,
        coeffs: &[(u32, f32)],
        danger: [&[(u32, f32)]; 2],
        danger_fixed: [f64; 2],
        danger_scale: f64,
        result: f32,
    ) {
        let mut row = Row {
            fixed: fixed as f64,
            phase: PHASE_MAX as u8,
            frac: coeffs.iter().map(|&(i, c)| (i as u16, c)).collect(),
            danger_fixed,
            danger_scale,
            ..Row::default()
        };
        for (side, form) in danger.iter().enumerate() {
            row.danger
                .extend(form.iter().map(|&(i, a)| DangerUse::new(side, i, a)));
        }
        self.push_row(&row, result);
    }

    fn push_row(&mut self, row: &Row, result: f32) {
        self.uses.extend_from_slice(&row.uses);
        self.use_off.push(self.uses.len() as u32);
        if !row.frac.is_empty() && self.frac_off.is_empty() {
            // the first position with fractions: the earlier ones (and this one) start at 0
            self.frac_off = vec![0; self.len() + 1];
        }
        if !self.frac_off.is_empty() {
            for &(i, c) in &row.frac {
                self.frac_idx.push(i);
                self.frac_val.push(c);
            }
            self.frac_off.push(self.frac_idx.len() as u32);
        }
        self.phase.push(row.phase);
        self.fixed.push(row.fixed);
        self.result.push(result);
        let has_danger = row.danger_scale != 0.0;
        if has_danger && self.danger_off.is_empty() {
            // the first position with danger: the earlier ones have none
            self.danger_off = vec![0; self.len()];
            self.danger_scale = vec![0.0; self.len() - 1];
        }
        if !self.danger_off.is_empty() {
            if has_danger {
                self.danger.extend_from_slice(&row.danger);
            }
            self.danger_off.push(self.danger.len() as u32);
            // whole numbers and phase / 4096 in the evaluation's traces: exact in f32
            let fixed = if has_danger {
                row.danger_fixed.map(|x| x as f32)
            } else {
                [0.0; 2]
            };
            if fixed != [0.0; 2] || !self.danger_fixed.is_empty() {
                // the first non-zero one: zeros for the positions before it
                self.danger_fixed.resize(self.len() - 1, [0.0; 2]);
                self.danger_fixed.push(fixed);
            }
            self.danger_scale.push(row.danger_scale as f32);
        }
        if row.scale.is_some() && self.scale.is_empty() {
            // the first position with a scale-down: the earlier ones have none
            self.scale = vec![(NO_SCALE, 0.0); self.len() - 1];
        }
        if !self.scale.is_empty() {
            self.scale.push(row.scale.unwrap_or((NO_SCALE, 0.0)));
        }
    }

    /// The sets one after the other, in buffers sized exactly (no growth slack).
    pub fn concat(parts: &[TraceSet]) -> TraceSet {
        fn join<T: Copy>(parts: &[TraceSet], f: impl Fn(&TraceSet) -> &Vec<T>) -> Vec<T> {
            let mut v = Vec::with_capacity(parts.iter().map(|p| f(p).len()).sum());
            for p in parts {
                v.extend_from_slice(f(p));
            }
            v
        }
        fn offsets(
            parts: &[TraceSet],
            off: impl Fn(&TraceSet) -> &Vec<u32>,
            n: impl Fn(&TraceSet) -> usize,
        ) -> Vec<u32> {
            let mut v = Vec::with_capacity(1 + parts.iter().map(TraceSet::len).sum::<usize>());
            v.push(0);
            let mut base = 0u32;
            for p in parts {
                let o = off(p);
                if o.is_empty() {
                    v.extend(std::iter::repeat_n(base, p.len()));
                } else {
                    v.extend(o[1..].iter().map(|x| x + base));
                }
                base += n(p) as u32;
            }
            v
        }
        let danger = parts.iter().any(|p| !p.danger_off.is_empty());
        let mut all = TraceSet {
            use_off: offsets(parts, |p| &p.use_off, |p| p.uses.len()),
            uses: join(parts, |p| &p.uses),
            frac_off: if parts.iter().any(|p| !p.frac_off.is_empty()) {
                offsets(parts, |p| &p.frac_off, |p| p.frac_idx.len())
            } else {
                vec![]
            },
            frac_idx: join(parts, |p| &p.frac_idx),
            frac_val: join(parts, |p| &p.frac_val),
            phase: join(parts, |p| &p.phase),
            fixed: join(parts, |p| &p.fixed),
            result: join(parts, |p| &p.result),
            ..TraceSet::new()
        };
        if danger {
            all.danger_off = offsets(parts, |p| &p.danger_off, |p| p.danger.len());
            all.danger = join(parts, |p| &p.danger);
            let any_fixed = parts.iter().any(|p| !p.danger_fixed.is_empty());
            let mut fixed = Vec::with_capacity(if any_fixed { all.len() } else { 0 });
            let mut scale = Vec::with_capacity(all.len());
            for p in parts {
                if p.danger_off.is_empty() {
                    scale.extend(std::iter::repeat_n(0.0, p.len()));
                } else {
                    scale.extend_from_slice(&p.danger_scale);
                }
                if !any_fixed {
                } else if p.danger_fixed.is_empty() {
                    fixed.extend(std::iter::repeat_n([0.0; 2], p.len()));
                } else {
                    fixed.extend_from_slice(&p.danger_fixed);
                }
            }
            all.danger_fixed = fixed;
            all.danger_scale = scale;
        }
        if parts.iter().any(|p| !p.scale.is_empty()) {
            let mut scale = Vec::with_capacity(all.len());
            for p in parts {
                if p.scale.is_empty() {
                    scale.extend(std::iter::repeat_n((NO_SCALE, 0.0), p.len()));
                } else {
                    scale.extend_from_slice(&p.scale);
                }
            }
            all.scale = scale;
        }
        if parts.iter().any(|p| !p.score.is_empty()) {
            all.score = join(parts, |p| &p.score);
            all.lambda = parts.iter().map(|p| p.lambda).fold(0.0, f64::max);
            all.score_k = parts.iter().find_map(|p| p.score_k);
        }
        all
    }

    /// Where position `i`'s fractional coefficients lie (none while the set has none).
    #[inline(always)]
    fn frac_range(&self, i: usize) -> std::ops::Range<usize> {
        match self.frac_off.get(i..i + 2) {
            Some(&[a, b]) => a as usize..b as usize,
            _ => 0..0,
        }
    }

    /// Evaluation of position `i` at `theta` (red's view).
    pub fn eval(&self, i: usize, theta: &[f64]) -> f64 {
        self.eval_at(i, &KeyValues::new(theta), theta).0 * self.keep(i, theta).0
    }

    /// The share of position `i`'s evaluation its endgame scale-down keeps at `theta`, and the
    /// local index of the scale-down's value when it is tuned.
    #[inline(always)]
    fn keep(&self, i: usize, theta: &[f64]) -> (f64, Option<usize>) {
        match self.scale.get(i) {
            None => (1.0, None),
            Some(&(NO_SCALE, r)) => (scale_keep(r as f64), None),
            Some(&(j, _)) => (scale_keep(theta[j as usize]), Some(j as usize)),
        }
    }

    /// The evaluation of position `i` before its endgame scale-down ([`TraceSet::keep`]) and its
    /// two king-danger sums `D`, at θ given both as values by use key (`kv`) and plainly
    /// (`theta`, for the fractional and danger uses).
    ///
    /// A use adds `n·(mg·v₀ + eg·v₁)` with `(v₀, v₁)` its key's values, so the middlegame and
    /// endgame sums are kept apart and blended once; two pairs of accumulators take alternate
    /// uses, so the sums do not wait on one another (the loop's latency chain).
    #[inline(always)]
    fn eval_at(&self, i: usize, kv: &KeyValues, theta: &[f64]) -> (f64, [f64; 2]) {
        let kv = &*kv.0;
        let (lo, hi) = (self.use_off[i] as usize, self.use_off[i + 1] as usize);
        let uses = &self.uses[lo..hi];
        let (mut m0, mut e0, mut m1, mut e1) = (0.0, 0.0, 0.0, 0.0);
        let mut two = uses.chunks_exact(2);
        for u in &mut two {
            let (v, w) = (kv[u[0].key as usize], kv[u[1].key as usize]);
            let (n, o) = (u[0].n as f64, u[1].n as f64);
            m0 += n * v[0];
            e0 += n * v[1];
            m1 += o * w[0];
            e1 += o * w[1];
        }
        if let [u] = two.remainder() {
            let v = kv[u.key as usize];
            m0 += u.n as f64 * v[0];
            e0 += u.n as f64 * v[1];
        }
        let mg = self.phase[i] as f64 / PHASE_MAX as f64;
        let mut e = self.fixed[i] + mg * (m0 + m1) + (1.0 - mg) * (e0 + e1);
        for j in self.frac_range(i) {
            e += self.frac_val[j] as f64 * theta[self.frac_idx[j] as usize];
        }
        let mut d = [0.0; 2];
        if !self.danger_off.is_empty() && self.danger_scale[i] != 0.0 {
            let [mut r, mut k] = match self.danger_fixed.get(i) {
                Some(f) => f.map(f64::from),
                None => [0.0; 2],
            };
            let (a, b) = (self.danger_off[i] as usize, self.danger_off[i + 1] as usize);
            for u in &self.danger[a..b] {
                let x = u.a as f64 * theta[u.idx()];
                // a select, not an indexed store: no chain through memory
                if u.side() == 0 {
                    r += x;
                } else {
                    k += x;
                }
            }
            d = [r, k];
            e += self.danger_scale[i] as f64 * (danger_q(r) - danger_q(k));
        }
        (e, d)
    }

    /// Mean squared error of `σ(K·e)` against the results.
    pub fn loss(&self, theta: &[f64], k: f64) -> f64 {
        if self.is_empty() {
            return 0.0;
        }
        self.sums(theta, k, false).0 / self.len() as f64
    }

    /// Loss and its gradient: `dL/dθ_j = (2/N) Σ (σ − r) σ (1 − σ) (K ln10 / 400) ∂e/∂θ_j`.
    pub fn loss_grad(&self, theta: &[f64], k: f64) -> (f64, Vec<f64>) {
        let n = self.len();
        if n == 0 {
            return (0.0, vec![0.0; theta.len()]);
        }
        let (loss, grad) = self.sums(theta, k, true);
        let inv = 1.0 / n as f64;
        (loss * inv, grad.into_iter().map(|g| g * inv).collect())
    }

    /// The unscaled sums `Σ (r − σ)²` and (when `grad`) `Σ 2 (σ − r) σ (1 − σ) (K ln10 / 400)
    /// ∂e/∂θ`, in a fixed order whatever the threads: [`TraceSet::sums_range`] per chunk of
    /// [`CHUNK`] positions in parallel, then the chunks added in order (without `grad` the
    /// vector is empty).
    pub fn sums(&self, theta: &[f64], k: f64, grad: bool) -> (f64, Vec<f64>) {
        self.sums_by(theta, k, grad, true)
    }

    /// [`TraceSet::sums`], against the blended labels or (`blend` false) the results alone.
    pub(super) fn sums_by(
        &self,
        theta: &[f64],
        k: f64,
        grad: bool,
        blend: bool,
    ) -> (f64, Vec<f64>) {
        let n = self.len();
        let p = if grad { theta.len() } else { 0 };
        let kv = KeyValues::new(theta);
        let parts: Vec<(f64, Vec<f64>)> = (0..n.div_ceil(CHUNK))
            .into_par_iter()
            .map(|c| {
                let range = c * CHUNK..((c + 1) * CHUNK).min(n);
                self.sums_range_at(&kv, theta, k, grad, range, blend)
            })
            .collect();
        add_in_order(p, parts.iter().map(|(l, g)| (*l, g.as_slice())))
    }

    /// The unscaled sums of [`TraceSet::sums`] over the positions `range`, sequentially in
    /// position order (a mini-batch, or one chunk). The king danger enters by the chain rule:
    /// `∂e/∂θ_j = scale·(q'(D_red)·a_red,j − q'(D_black)·a_black,j)`.
    pub fn sums_range(
        &self,
        theta: &[f64],
        k: f64,
        grad: bool,
        range: std::ops::Range<usize>,
    ) -> (f64, Vec<f64>) {
        self.sums_range_by(theta, k, grad, range, true)
    }

    fn sums_range_by(
        &self,
        theta: &[f64],
        k: f64,
        grad: bool,
        range: std::ops::Range<usize>,
        blend: bool,
    ) -> (f64, Vec<f64>) {
        self.sums_range_at(&KeyValues::new(theta), theta, k, grad, range, blend)
    }

    /// [`TraceSet::sums_range_by`] with θ's values by key already laid out (once per pass,
    /// shared by the chunks).
    pub(super) fn sums_range_at(
        &self,
        kv: &KeyValues,
        theta: &[f64],
        k: f64,
        grad: bool,
        range: std::ops::Range<usize>,
        blend: bool,
    ) -> (f64, Vec<f64>) {
        let p = theta.len();
        let scale = k * std::f64::consts::LN_10 / 400.0;
        let mut l = 0.0f64;
        if !grad {
            for i in range {
                let s = sigmoid(k, self.eval_at(i, kv, theta).0 * self.keep(i, theta).0);
                let r = self.label(i, k, blend);
                l += (r - s) * (r - s);
            }
            return (l, vec![]);
        }
        let mut g = vec![0.0f64; p];
        KEY_GRAD.with_borrow_mut(|kg| {
            let kg = kg.get_or_insert_with(key_slots);
            for i in range {
                let (raw, dsum) = self.eval_at(i, kv, theta);
                let (keep, tuned) = self.keep(i, theta);
                let s = sigmoid(k, raw * keep);
                let r = self.label(i, k, blend);
                l += (r - s) * (r - s);
                let d = 2.0 * (s - r) * s * (1.0 - s) * scale;
                // the scale-down multiplies the whole sum: its value takes `∂e/∂r = −raw/64`,
                // every other use its slope times `keep`
                if let Some(j) = tuned {
                    g[j] -= d * raw / SCALE_DIV as f64;
                }
                let d = d * keep;
                // the key's values take `n·(mg·d, eg·d)`; `KeyValues::gradient` maps them to θ
                let dm = d * self.phase[i] as f64 / PHASE_MAX as f64;
                let de = d - dm;
                let (a, b) = (self.use_off[i] as usize, self.use_off[i + 1] as usize);
                for u in &self.uses[a..b] {
                    let n = u.n as f64;
                    let slot = &mut kg[u.key as usize];
                    slot[0] += n * dm;
                    slot[1] += n * de;
                }
                for j in self.frac_range(i) {
                    g[self.frac_idx[j] as usize] += d * self.frac_val[j] as f64;
                }
                if !self.danger_off.is_empty() && self.danger_scale[i] != 0.0 {
                    let ds = d * self.danger_scale[i] as f64;
                    let slope = [ds * danger_dq(dsum[0]), -ds * danger_dq(dsum[1])];
                    let (a, b) = (self.danger_off[i] as usize, self.danger_off[i + 1] as usize);
                    for u in &self.danger[a..b] {
                        // a plain use's slot: its two halves add up to `∂L/∂θ`
                        kg[((KIND_PLAIN << KIND_SHIFT) | u.idx() as u16) as usize][0] +=
                            slope[u.side()] * u.a as f64;
                    }
                }
            }
            KeyValues::gradient(kg, &mut g);
        });
        (l, g)
    }
}

thread_local! {
    /// Each thread's gradient by use key, all zero between chunks: [`KeyValues::gradient`]
    /// clears the slots it reads, the only ones a chunk writes.
    static KEY_GRAD: std::cell::RefCell<Option<Box<[[f64; 2]; 1 << 16]>>> =
        const { std::cell::RefCell::new(None) };
}

/// One `[f64; 2]` per u16 key, zeroed (pages the allocator hands out untouched: only the
/// slots of tuned indices are ever written).
fn key_slots() -> Box<[[f64; 2]; 1 << 16]> {
    vec![[0.0; 2]; 1 << 16]
        .into_boxed_slice()
        .try_into()
        .expect("1 << 16 slots")
}

/// θ laid out by use key (kind in the top bits, index below): the middlegame and endgame
/// values `(v₀, v₁)` a use's count multiplies, so that every kind is one load and two
/// products, blended by the phase once per position. A pair reads `(θ[j], θ[j+1])`, a
/// middlegame value `(θ[j], 0)`, an endgame value `(0, θ[j])` and a plain value `(θ[j],
/// θ[j])` (the phase weights add up to one). Every u16 key has a slot, so no load is
/// bounds-checked; only the slots of tuned indices are ever written or read.
pub(super) struct KeyValues(Box<[[f64; 2]; 1 << 16]>);

impl KeyValues {
    pub(super) fn new(theta: &[f64]) -> KeyValues {
        let mut v = key_slots();
        for (j, &t) in theta.iter().enumerate() {
            let next = theta.get(j + 1).copied().unwrap_or(0.0);
            let slot = |kind: u16| ((kind as usize) << KIND_SHIFT) | j;
            v[slot(KIND_PAIR)] = [t, next];
            v[slot(KIND_PLAIN)] = [t, t];
            v[slot(KIND_MG)] = [t, 0.0];
            v[slot(KIND_EG)] = [0.0, t];
        }
        KeyValues(v)
    }

    /// Adds to `g` (θ's gradient) what the key slots `kg` gathered, `∂L/∂(v₀, v₁)` per key,
    /// by the chain rule through the layout of [`KeyValues::new`], in index order, and
    /// zeroes those slots.
    fn gradient(kg: &mut [[f64; 2]; 1 << 16], g: &mut [f64]) {
        let p = g.len();
        for j in 0..p {
            let mut take = |kind: u16| std::mem::take(&mut kg[((kind as usize) << KIND_SHIFT) | j]);
            let [pm, pe] = take(KIND_PAIR);
            let [lm, le] = take(KIND_PLAIN);
            let [mm, _] = take(KIND_MG);
            let [_, ee] = take(KIND_EG);
            g[j] += pm + (lm + le) + mm + ee;
            if j + 1 < p {
                g[j + 1] += pe;
            }
        }
    }
}

/// Positions per chunk: the unit of the fixed-order reduction (partial sums per chunk, added in
/// chunk order), so the loss is the same bits for any number of threads and ranks.
pub const CHUNK: usize = 8192;

/// `Σ` of the partials in the order given, starting from zero.
pub(super) fn add_in_order<'a>(
    p: usize,
    parts: impl Iterator<Item = (f64, &'a [f64])>,
) -> (f64, Vec<f64>) {
    let mut loss = 0.0;
    let mut grad = vec![0.0; p];
    for (l, g) in parts {
        loss += l;
        for (x, y) in grad.iter_mut().zip(g) {
            *x += y;
        }
    }
    (loss, grad)
}

/// What tracing under a space needs: its parameters and the map from flat to local indices.
pub(super) struct Tracing<'a> {
    params: Option<&'a EvalParams>,
    full: Vec<i32>,
    local: Vec<u32>,
}

/// Per-thread buffers of [`Tracing::push`].
#[derive(Default)]
pub(super) struct Scratch {
    row: Row,
    sel: Vec<(u32, u32, f32)>,
}

impl<'a> Tracing<'a> {
    pub(super) fn new(space: &'a Space) -> Tracing<'a> {
        let full = space.base.to_vec();
        let mut local = vec![u32::MAX; full.len()];
        for (l, &g) in space.selected.iter().enumerate() {
            local[g] = l as u32;
        }
        let params = match &space.base {
            ParamSet::Eval(p) => Some(p),
            _ => None,
        };
        Tracing {
            params,
            full,
            local,
        }
    }

    /// Traces `pos` and adds it to `set` with label `result`; false (nothing added) when the
    /// space holds no evaluation parameters.
    pub(super) fn push(
        &self,
        set: &mut TraceSet,
        pos: &crate::core::Position,
        result: f32,
        s: &mut Scratch,
    ) -> bool {
        let Some(params) = self.params else {
            return false;
        };
        let t = crate::eval::trace(pos, params);
        encode(&t, &self.local, &self.full, &mut s.sel, &mut s.row);
        set.push_row(&s.row, result);
        true
    }
}

/// Traces of `positions` under `space.base`, restricted to the selected parameters.
pub fn build_traces(positions: &[(crate::core::Position, f32)], space: &Space) -> TraceSet {
    let tracing = Tracing::new(space);
    let parts: Vec<TraceSet> = positions
        .par_chunks(CHUNK)
        .map(|chunk| {
            let mut ts = TraceSet::new();
            let mut scratch = Scratch::default();
            for (pos, r) in chunk {
                tracing.push(&mut ts, pos, *r, &mut scratch);
            }
            ts
        })
        .collect();
    TraceSet::concat(&parts)
}

/// The phase a trace's tapered pairs were blended at: `16·c_mg / (c_mg + c_eg)` of a pair
/// with a whole count (every pair agrees; 16 when there is none).
fn trace_phase(coeffs: &[(u32, f32)]) -> u8 {
    for w in coeffs.windows(2) {
        let ((i, cm), (j, ce)) = (w[0], w[1]);
        if part(i as usize) == Part::Mg && j == i + 1 {
            let n = cm as f64 + ce as f64;
            let p = PHASE_MAX as f64 * cm as f64 / n;
            if n != 0.0 && n.fract() == 0.0 && p.fract() == 0.0 && (0.0..=16.0).contains(&p) {
                return p as u8;
            }
        }
    }
    // no pair shows both values: a lone endgame value means phase 0 (its middlegame weight
    // is 0), otherwise phase 16 (or no tapered value at all)
    let lone_eg = coeffs
        .iter()
        .any(|&(i, _)| part(i as usize) == Part::Eg && !coeffs.iter().any(|&(j, _)| j + 1 == i));
    if lone_eg { 0 } else { PHASE_MAX as u8 }
}

/// One trace in the store's terms: whole counts as [`Use`]s where `f32(n·weight)` gives back
/// the coefficient exactly, the rest on the fractional path; untuned parameters folded into
/// the constants. `sel` is scratch.
fn encode(
    t: &crate::eval::Trace,
    local: &[u32],
    full: &[i32],
    sel: &mut Vec<(u32, u32, f32)>,
    row: &mut Row,
) {
    row.clear();
    row.phase = trace_phase(&t.coeffs);
    let mut fixed = t.constant as f64;
    sel.clear();
    for &(i, c) in &t.coeffs {
        match local.get(i as usize) {
            Some(&l) if l != u32::MAX => sel.push((l, i, c)),
            Some(_) => fixed += c as f64 * full[i as usize] as f64,
            None => {}
        }
    }
    sel.sort_unstable_by_key(|x| x.0);
    row.fixed = fixed;
    let mg = row.phase as f64 / PHASE_MAX as f64;
    let eg = 1.0 - mg;
    // a whole count `n` with `f32(n·w) == c` for each (c, w), if there is one
    let whole = |n: f64, cw: &[(f32, f64)]| {
        (n.fract() == 0.0
            && n.abs() <= i16::MAX as f64
            && cw.iter().all(|&(c, w)| (n * w) as f32 == c))
        .then_some(n as i16)
    };
    let key = |l: u32, kind: u16| l as u16 | (kind << KIND_SHIFT);
    let mut s = 0;
    while s < sel.len() {
        let (l, i, c) = sel[s];
        let next = sel.get(s + 1).copied();
        let kind = part(i as usize);
        // the endgame partner, tuned and next in the local order (0 when absent from the trace)
        let partner =
            (kind == Part::Mg && local.get(i as usize + 1) == Some(&(l + 1))).then(|| match next {
                Some((l2, _, c2)) if l2 == l + 1 => c2,
                _ => 0.0,
            });
        let (stored, took) = match (kind, partner) {
            (Part::Mg, Some(ce)) => {
                let took = 1 + usize::from(next.is_some_and(|x| x.0 == l + 1));
                let n = c as f64 + ce as f64;
                (
                    whole(n, &[(c, mg), (ce, eg)]).map(|n| Use {
                        key: key(l, KIND_PAIR),
                        n,
                    }),
                    took,
                )
            }
            // a half of a pair whose partner is not tuned (or not in the trace)
            (Part::Mg, None) | (Part::Eg, _) => {
                let (w, k) = if kind == Part::Mg {
                    (mg, KIND_MG)
                } else {
                    (eg, KIND_EG)
                };
                (
                    (w != 0.0)
                        .then(|| whole((c as f64 / w).round(), &[(c, w)]))
                        .flatten()
                        .map(|n| Use { key: key(l, k), n }),
                    1,
                )
            }
            (Part::Plain, _) => (
                whole(c as f64, &[(c, 1.0)]).map(|n| Use {
                    key: key(l, KIND_PLAIN),
                    n,
                }),
                1,
            ),
        };
        match stored {
            Some(u) => row.uses.push(u),
            None => {
                for &(l, _, c) in &sel[s..s + took] {
                    row.frac.push((l as u16, c));
                }
            }
        }
        s += took;
    }
    if let Some(i) = t.scale_down {
        row.scale = Some(match local.get(i as usize) {
            Some(&l) if l != u32::MAX => (l as u16, 0.0),
            _ => (NO_SCALE, full[i as usize] as f32),
        });
    }
    if t.danger_scale != 0.0 {
        row.danger_scale = t.danger_scale;
        for (side, form) in t.danger.iter().enumerate() {
            for &(i, a) in form {
                match local.get(i as usize) {
                    Some(&l) if l != u32::MAX => row.danger.push(DangerUse::new(side, l, a)),
                    Some(_) => row.danger_fixed[side] += a as f64 * full[i as usize] as f64,
                    None => {}
                }
            }
        }
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::core::Position;
    use crate::tune::texel::eval_space;
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    /// Random sparse traces over `p` parameters; labels are the exact win probabilities of a
    /// known parameter vector (soft labels make it the unique minimiser).
    pub(crate) fn synthetic(n: usize, p: usize, k: f64, seed: u64) -> (TraceSet, Vec<f64>) {
        synthetic_with_danger(n, p, k, seed, false)
    }

    /// [`synthetic`], with king-danger forms on every other position when `danger`.
    fn synthetic_with_danger(
        n: usize,
        p: usize,
        k: f64,
        seed: u64,
        danger: bool,
    ) -> (TraceSet, Vec<f64>) {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let truth: Vec<f64> = (0..p).map(|_| rng.gen_range(-100.0..100.0)).collect();
        let mut ts = TraceSet::new();
        for i in 0..n {
            let form = |rng: &mut ChaCha8Rng, m: usize| -> Vec<(u32, f32)> {
                (0..m)
                    .map(|_| {
                        (
                            rng.gen_range(0..p as u32),
                            rng.gen_range(-2i32..=2) as f32 * 0.5,
                        )
                    })
                    .collect()
            };
            let m = rng.gen_range(1..6);
            let coeffs = form(&mut rng, m);
            // attack weights are whole counts
            let whole = |f: Vec<(u32, f32)>| f.into_iter().map(|(i, a)| (i, 2.0 * a)).collect();
            let forms: [Vec<(u32, f32)>; 2] = if danger && i % 2 == 1 {
                [whole(form(&mut rng, 2)), whole(form(&mut rng, 3))]
            } else {
                [vec![], vec![]]
            };
            let fixed = rng.gen_range(-50.0f32..50.0);
            let dfixed = [rng.gen_range(-60.0..60.0), rng.gen_range(-60.0..60.0)];
            let scale = if forms[0].is_empty() { 0.0 } else { 0.01 };
            ts.push_danger(fixed, &coeffs, [&forms[0], &forms[1]], dfixed, scale, 0.0);
        }
        for i in 0..n {
            ts.result[i] = sigmoid(k, ts.eval(i, &truth)) as f32;
        }
        (ts, truth)
    }

    #[test]
    fn gradient_equals_finite_differences() {
        for danger in [false, true] {
            let (mut ts, truth) = synthetic_with_danger(3000, 12, 1.2, 1, danger);
            // hard labels too, so the loss is not at its minimum
            for (i, r) in ts.result.iter_mut().enumerate() {
                if i % 3 == 0 {
                    *r = (i % 2) as f32;
                }
            }
            let theta: Vec<f64> = truth.iter().map(|t| t * 0.7 + 5.0).collect();
            if danger {
                // and endgame scale-downs: tuned (the parameter by position), untuned, none
                ts.scale = (0..ts.len())
                    .map(|i| match i % 3 {
                        0 => ((i % theta.len()) as u16, 0.0),
                        1 => (NO_SCALE, 16.0),
                        _ => (NO_SCALE, 0.0),
                    })
                    .collect();
                // both branches of q: attack sums below and above zero
                let kv = KeyValues::new(&theta);
                let d: Vec<f64> = (0..ts.len())
                    .filter(|&i| ts.danger_scale[i] != 0.0)
                    .flat_map(|i| ts.eval_at(i, &kv, &theta).1)
                    .collect();
                assert!(d.iter().filter(|&&x| x < -1.0).count() > 100, "negative D");
                assert!(d.iter().filter(|&&x| x > 1.0).count() > 100, "positive D");
            }
            let (l, g) = ts.loss_grad(&theta, 1.2);
            assert!((l - ts.loss(&theta, 1.2)).abs() < 1e-12);
            for j in 0..theta.len() {
                let h = 1e-3;
                let mut a = theta.clone();
                let mut b = theta.clone();
                a[j] += h;
                b[j] -= h;
                let fd = (ts.loss(&a, 1.2) - ts.loss(&b, 1.2)) / (2.0 * h);
                assert!(
                    (fd - g[j]).abs() < 1e-9 + 1e-5 * g[j].abs(),
                    "danger {danger}, param {j}: fd {fd} grad {}",
                    g[j]
                );
            }
        }
    }

    #[test]
    fn sums_are_the_chunk_ordered_sum_of_sums_range() {
        let (ts, truth) = synthetic_with_danger(2 * CHUNK + 77, 9, 1.1, 4, true);
        let (l, g) = ts.sums(&truth, 1.1, true);
        let parts: Vec<(f64, Vec<f64>)> = (0..3)
            .map(|c| {
                ts.sums_range(
                    &truth,
                    1.1,
                    true,
                    c * CHUNK..((c + 1) * CHUNK).min(ts.len()),
                )
            })
            .collect();
        let (l2, g2) = add_in_order(9, parts.iter().map(|(l, g)| (*l, g.as_slice())));
        assert_eq!(l.to_bits(), l2.to_bits());
        assert_eq!(g, g2);
        assert!(ts.sums_range(&truth, 1.1, false, 0..10).1.is_empty());
    }

    #[test]
    fn danger_forms_evaluate_like_the_trace() {
        use crate::eval::Trace;
        let params = EvalParams::default();
        let space = eval_space(&params, "material.*,pst.rook.*.mg,tempo").unwrap();
        let full = space.base.to_vec();
        let mut local = vec![u32::MAX; full.len()];
        for (l, &g) in space.selected.iter().enumerate() {
            local[g] = l as u32;
        }
        let sel = |name: &str| space.genes().iter().position(|g| g.name == name).unwrap();
        let global = |name: &str| space.selected[sel(name)] as u32;
        let all = space.base.genes();
        let unselected = all
            .iter()
            .position(|g| g.name.starts_with("pst.horse"))
            .unwrap() as u32;
        let (rook, cannon) = (global("material.rook.mg"), global("material.cannon.eg"));
        let mut values = full.clone();
        let mut theta: Vec<f64> = space.values().iter().map(|&v| v as f64).collect();
        for (l, &g) in space.selected.iter().enumerate() {
            values[g] += (l as i32 % 7) - 3;
            theta[l] = values[g] as f64;
        }
        let mut ts = TraceSet::new();
        let mut traces = vec![];
        let (mut row, mut scratch) = (Row::default(), vec![]);
        // attack weights are whole counts (the folded, unselected ones need not be)
        for (s, (red, black)) in [(1.0f32, -2.0f32), (-3.0, 1.0), (2.0, 4.0)]
            .into_iter()
            .enumerate()
        {
            let t = Trace {
                coeffs: vec![(rook, 2.0 * s as f32 + 1.0), (unselected, 1.5)],
                constant: 12.5,
                danger: [
                    vec![(rook, red), (unselected, 1.0)],
                    vec![(cannon, black), (unselected, -0.5)],
                ],
                danger_scale: 1.0 / 256.0,
                // the endgame scale-down: none, a tuned value, a folded one
                scale_down: [None, Some(rook), Some(unselected)][s],
            };
            encode(&t, &local, &full, &mut scratch, &mut row);
            ts.push_row(&row, 0.5);
            traces.push(t);
        }
        for (i, t) in traces.iter().enumerate() {
            assert_eq!(ts.eval(i, &theta), t.dot(&values), "position {i}");
        }
    }

    #[test]
    fn concat_keeps_every_position_whatever_its_parts_hold() {
        let plain = || {
            let mut ts = TraceSet::new();
            let row = Row {
                fixed: 3.0,
                phase: 10,
                uses: vec![Use { key: 0, n: 2 }],
                ..Row::default()
            };
            ts.push_row(&row, 1.0);
            ts
        };
        let mut frac = TraceSet::new();
        frac.push(1.5, &[(1, 0.25)], 0.0);
        let mut danger = TraceSet::new();
        danger.push_danger(
            0.0,
            &[(2, 1.0)],
            [&[(0, 2.0)], &[(1, 1.0)]],
            [0.0; 2],
            0.5,
            0.5,
        );
        let mut untuned = TraceSet::new();
        untuned.push_danger(0.0, &[], [&[], &[(2, 1.0)]], [3.0, -1.0], 0.25, 1.0);
        let mut scaled = plain();
        scaled.push_row(
            &Row {
                fixed: 5.0,
                scale: Some((1, 0.0)),
                ..Row::default()
            },
            0.0,
        );
        scaled.push_row(
            &Row {
                fixed: 6.0,
                scale: Some((NO_SCALE, 16.0)),
                ..Row::default()
            },
            0.0,
        );
        assert_eq!(scaled.eval(1, &[0.0, 32.0]), 2.5);
        assert_eq!(scaled.eval(2, &[0.0, 32.0]), 4.5);
        // the columns a set does not need stay empty, through concat too
        let two = TraceSet::concat(&[plain(), plain()]);
        assert!(two.frac_off.is_empty() && two.danger_off.is_empty());
        assert!(danger.danger_fixed.is_empty() && !untuned.danger_fixed.is_empty());
        let parts = [plain(), frac, plain(), danger, scaled, untuned, plain()];
        let all = TraceSet::concat(&parts);
        let theta = [5.0, -3.0, 7.0];
        let mut i = 0;
        for p in &parts {
            for j in 0..p.len() {
                assert_eq!(all.eval(i, &theta), p.eval(j, &theta), "position {i}");
                i += 1;
            }
        }
        assert_eq!(i, all.len());
    }

    /// Random-play positions of Xiangqi and of Jieqi deals.
    pub(crate) fn random_positions(n: usize, seed: u64) -> Vec<Position> {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        (0..n)
            .map(|g| {
                let mut pos = if g % 2 == 0 {
                    Position::startpos()
                } else {
                    crate::core::arbiter::deal(seed + g as u64)
                };
                for _ in 0..rng.gen_range(0..80) {
                    let ms = pos.legal_moves();
                    if ms.is_empty() || pos.outcome().is_some() {
                        break;
                    }
                    let m = ms.as_slice()[rng.gen_range(0..ms.len())];
                    // a dark piece's move carries its true identity (the deal's hidden field)
                    let m = crate::core::arbiter::true_move(&pos, m).unwrap();
                    pos.make_move(m);
                }
                pos
            })
            .collect()
    }

    #[test]
    fn compact_store_evaluates_like_the_trace() {
        let positions = random_positions(300, 7);
        let default = EvalParams::default();
        let mut rng = ChaCha8Rng::seed_from_u64(8);
        let random = default.from_vec(
            &default
                .specs()
                .iter()
                .map(|s| rng.gen_range(s.min..=s.max))
                .collect::<Vec<i32>>(),
        );
        for params in [default, random] {
            let values = params.to_vec();
            for only in ["", "*", "jieqi.*,material.*.mg,pst.rook.*.eg,tempo"] {
                let space = eval_space(&params, only).unwrap();
                let labelled: Vec<(Position, f32)> =
                    positions.iter().map(|p| (p.clone(), 0.5)).collect();
                let ts = build_traces(&labelled, &space);
                let theta: Vec<f64> = space.values().iter().map(|&v| v as f64).collect();
                for (i, pos) in positions.iter().enumerate() {
                    let t = crate::eval::trace(pos, &params);
                    assert_eq!(
                        ts.eval(i, &theta),
                        t.dot(&values),
                        "{only}: {}",
                        pos.to_fen()
                    );
                }
                if only.is_empty() {
                    // Xiangqi's tapered pairs are whole counts: nothing on the fractional path
                    let xq: Vec<usize> = (0..positions.len()).step_by(2).collect();
                    assert!(xq.iter().all(|&i| ts.frac_range(i).is_empty()));
                    assert!(ts.uses.len() * 3 < positions.len() * 40 * 2);
                }
            }
        }
    }
}
