//! Texel tuning (Peter Österlund, 2014; chessprogramming.org "Texel's Tuning Method") with
//! analytic gradients: minimise the mean squared error between the game result and the win
//! probability `σ(K·e) = 1 / (1 + 10^(−K·e/400))` of the evaluation `e` (red's view), over a
//! labelled dataset.
//!
//! The evaluation is linear in its parameters (`eval::trace`: `e = constant + Σ coeff·param`,
//! the coefficients already carrying the phase weights of the tapered evaluation), so each
//! position's trace is computed once, stored sparsely (CSR), and every loss/gradient evaluation
//! is a parallel pass over those arrays (rayon) instead of re-running the evaluation: the
//! approach of Ethereal's and Andrew Grant's texel-tuner `get_coefficients`. Parameters that
//! are not selected are folded into each position's constant.
//!
//! K is fitted first with Brent's method (argmin `BrentOpt`) at the starting parameters and then
//! held fixed (K and the parameter scale are otherwise interchangeable); the parameters are then
//! optimised with argmin's L-BFGS and a More-Thuente line search over `Vec<f64>`. One epoch = one
//! L-BFGS iteration; train and validation losses are logged after each. For sets too large for
//! a full pass per step, `--optimiser adam|adagrad` steps per mini-batch instead ([`super::adam`]).

use super::TuneError;
use super::adam::{self, Moments, Optimiser, Rule};
use super::common::CommonArgs;
use super::dataset::{self, DatasetError};
use super::driver::{self, RunContext, RunOutcome, RunSettings, Step, Tuner};
use super::files::{self, csv_float};
use super::space::{ParamSet, Space, SpaceKind};
use super::stop::install_ctrlc;
use crate::eval::EvalParams;
use crate::eval::layout::{Part as LayoutPart, part};
use crate::eval::score::PHASE_MAX;
use crate::eval::trace::{danger_dq, danger_q};
use crate::exec::{Distributed, ExecError};
use crate::util::mix;
use argmin::core::{
    CostFunction, Error as ArgminError, Executor, Gradient, IterState, Problem, Solver, State,
    TerminationStatus,
};
use argmin::solver::brent::BrentOpt;
use argmin::solver::linesearch::MoreThuenteLineSearch;
use argmin::solver::quasinewton::LBFGS;
use rayon::prelude::*;
use serde::{Deserialize, Serialize};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Instant;

/// `xqtune tune texel`.
#[derive(clap::Args, Debug, Clone)]
pub struct TexelArgs {
    #[command(flatten)]
    pub common: CommonArgs,
    /// Labelled positions (`FEN | score | wdl` as `xqtune datagen` writes them, `FEN | 1-0` and the
    /// other formats of `tune::dataset`; optionally gzipped).
    #[arg(long)]
    pub data: Option<PathBuf>,
    /// L-BFGS iterations.
    #[arg(long, default_value_t = 100)]
    pub epochs: u64,
    /// Fraction of positions held out for the validation loss.
    #[arg(long, default_value_t = 0.1)]
    pub validation: f64,
    /// Use this K instead of fitting it.
    #[arg(long)]
    pub k: Option<f64>,
    /// L-BFGS memory (number of correction pairs) [default: 7].
    #[arg(long)]
    pub memory: Option<usize>,
    /// Use only the first N positions of the file.
    #[arg(long)]
    pub max_positions: Option<usize>,
    /// Weight of the search score in the label (nnue-pytorch's lambda): the target is
    /// `L·σ(K·score) + (1−L)·result`, K fitted on the results alone; needs `FEN | score | wdl`
    /// rows when above 0.
    #[arg(long, default_value_t = 0.0)]
    pub lambda: f64,
    /// How the parameters move: full-batch L-BFGS (one iteration per epoch), or mini-batch
    /// Adam or AdaGrad (one epoch = one pass over the training positions in shuffled batches).
    #[arg(long, value_enum, default_value_t = Optimiser::Lbfgs)]
    pub optimiser: Optimiser,
    /// Adam/AdaGrad: positions per batch, rounded up to whole chunks of 8192 [default: 16384].
    #[arg(long)]
    pub batch_size: Option<usize>,
    /// Adam/AdaGrad: learning rate, about the centipawns a step moves a parameter
    /// [default: 1 for adam, 10 for adagrad].
    #[arg(long)]
    pub lr: Option<f64>,
    /// Adam: decay of the first moment [default: 0.9].
    #[arg(long)]
    pub beta1: Option<f64>,
    /// Adam: decay of the second moment [default: 0.999].
    #[arg(long)]
    pub beta2: Option<f64>,
    /// Adam/AdaGrad: added to the root of the second moment [default: 1e-8].
    #[arg(long)]
    pub eps: Option<f64>,
}

/// L-BFGS correction pairs unless `--memory` says otherwise.
pub const DEFAULT_MEMORY: usize = 7;

/// Positions per mini-batch unless `--batch-size` says otherwise (two chunks).
pub const DEFAULT_BATCH: usize = 2 * CHUNK;

impl TexelArgs {
    /// Rejects optimiser flags out of range or given to an optimiser that does not read them
    /// (a silently ignored `--lr` would make a run look tuned that was not).
    pub fn check(&self) -> Result<(), TuneError> {
        let bad = |m: String| Err(TuneError::Optimiser(m));
        let o = self.optimiser;
        if o.is_minibatch() && self.memory.is_some() {
            return bad("--memory is L-BFGS's; it does not apply to a mini-batch optimiser".into());
        }
        if self.memory == Some(0) {
            return bad("--memory must be at least 1 correction pair".into());
        }
        let given = [
            ("--batch-size", self.batch_size.is_some()),
            ("--lr", self.lr.is_some()),
            ("--beta1", self.beta1.is_some()),
            ("--beta2", self.beta2.is_some()),
            ("--eps", self.eps.is_some()),
        ];
        for (flag, set) in given {
            let reads = match flag {
                "--beta1" | "--beta2" => o == Optimiser::Adam,
                _ => o.is_minibatch(),
            };
            if set && !reads {
                return bad(format!(
                    "{flag} does not apply to --optimiser {}",
                    clap::ValueEnum::to_possible_value(&o)
                        .map_or("?".into(), |v| v.get_name().to_string())
                ));
            }
        }
        if self.batch_size == Some(0) {
            return bad("--batch-size must be at least 1 position".into());
        }
        if let Some(lr) = self.lr
            && !(lr.is_finite() && lr > 0.0)
        {
            return bad(format!("--lr must be a positive number, not {lr}"));
        }
        for (flag, b) in [("--beta1", self.beta1), ("--beta2", self.beta2)] {
            if let Some(b) = b
                && !(0.0..1.0).contains(&b)
            {
                return bad(format!("{flag} must lie in [0, 1), not {b}"));
            }
        }
        if let Some(e) = self.eps
            && !(e.is_finite() && e > 0.0)
        {
            return bad(format!("--eps must be a positive number, not {e}"));
        }
        Ok(())
    }
}

/// Texel's settings as `config.json` records them: the flags of [`TexelArgs`], field for field
/// (see [`super::common::CommonSettings`] for why they are a type of their own).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct TexelSettings {
    pub data: Option<PathBuf>,
    pub epochs: u64,
    pub validation: f64,
    pub k: Option<f64>,
    pub memory: usize,
    pub max_positions: Option<usize>,
    /// (Absent from run folders written before `--lambda`: results only.)
    #[serde(default)]
    pub lambda: f64,
    /// The optimiser and its constants (defaults: what runs written before they existed did).
    #[serde(default)]
    pub optimiser: Optimiser,
    #[serde(default = "default_batch")]
    pub batch_size: usize,
    #[serde(default = "default_lr", with = "files::exact")]
    pub lr: f64,
    #[serde(default = "default_beta1", with = "files::exact")]
    pub beta1: f64,
    #[serde(default = "default_beta2", with = "files::exact")]
    pub beta2: f64,
    #[serde(default = "default_eps", with = "files::exact")]
    pub eps: f64,
}

fn default_batch() -> usize {
    DEFAULT_BATCH
}
fn default_lr() -> f64 {
    Optimiser::Adam.default_lr()
}
fn default_beta1() -> f64 {
    0.9
}
fn default_beta2() -> f64 {
    0.999
}
fn default_eps() -> f64 {
    1e-8
}

impl TexelSettings {
    /// The mini-batch update rule these settings describe.
    pub fn rule(&self) -> Rule {
        Rule {
            optimiser: self.optimiser,
            lr: self.lr,
            beta1: self.beta1,
            beta2: self.beta2,
            eps: self.eps,
        }
    }
}

impl From<&TexelArgs> for TexelSettings {
    fn from(a: &TexelArgs) -> TexelSettings {
        TexelSettings {
            data: a.data.clone(),
            epochs: a.epochs,
            validation: a.validation,
            k: a.k,
            memory: a.memory.unwrap_or(DEFAULT_MEMORY),
            max_positions: a.max_positions,
            lambda: a.lambda,
            optimiser: a.optimiser,
            batch_size: a.batch_size.unwrap_or(DEFAULT_BATCH),
            lr: a.lr.unwrap_or(a.optimiser.default_lr()),
            beta1: a.beta1.unwrap_or_else(default_beta1),
            beta2: a.beta2.unwrap_or_else(default_beta2),
            eps: a.eps.unwrap_or_else(default_eps),
        }
    }
}

/// The win probability of a centipawn evaluation scaled by K: `1 / (1 + 10^(−K·e/400))`,
/// written with `exp` (several times cheaper than `powf` in the pass).
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
/// Compact so that ten million positions fit in 1.5 GB: a tapered pair is one
/// [`Use`] (u16 index, i16 count) with the phase stored once per position, instead of two
/// (u32, f32) entries carrying `count·phase/16`; coefficients that are not whole counts at the
/// position's phase (Jieqi's dark-piece pool fractions, multiples of 1/4096) take an exact
/// `(u16, f32)` path beside it. Every buffer is sized exactly ([`TraceSet::concat`]). The
/// evaluation is still exact: with integer parameters every product is a short binary
/// fraction, so the f64 sums equal `Trace::dot`.
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
    /// Search scores (red's view, centipawns) blended into the labels with weight `lambda`;
    /// empty when the labels are the results alone.
    score: Vec<f32>,
    lambda: f64,
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
}

impl Row {
    fn clear(&mut self) {
        self.fixed = 0.0;
        self.phase = PHASE_MAX as u8;
        self.uses.clear();
        self.frac.clear();
        self.danger.clear();
        self.danger_fixed = [0.0; 2];
        self.danger_scale = 0.0;
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
            score: vec![],
            lambda: 0.0,
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
            + cap(&self.score)
    }

    /// Blends the search scores (one per position, red's view) into the labels with weight
    /// `lambda` (nnue-pytorch's convention).
    pub fn set_scores(&mut self, lambda: f64, scores: Vec<f32>) {
        assert_eq!(scores.len(), self.len(), "one score per position");
        self.lambda = lambda;
        self.score = if lambda > 0.0 { scores } else { vec![] };
    }

    /// The target of position `i` at `k`: the result, or with scores and `blend` the mix
    /// `λ·σ(K·score) + (1−λ)·result`.
    #[inline]
    fn label(&self, i: usize, k: f64, blend: bool) -> f64 {
        let r = self.result[i] as f64;
        if blend && !self.score.is_empty() {
            self.lambda * sigmoid(k, self.score[i] as f64) + (1.0 - self.lambda) * r
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
        if parts.iter().any(|p| !p.score.is_empty()) {
            all.score = join(parts, |p| &p.score);
            all.lambda = parts.iter().map(|p| p.lambda).fold(0.0, f64::max);
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
        self.eval_at(i, &KeyValues::new(theta), theta).0
    }

    /// The evaluation of position `i` and its two king-danger sums `D`, at θ given both as
    /// values by use key (`kv`) and plainly (`theta`, for the fractional and danger uses).
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
    fn sums_by(&self, theta: &[f64], k: f64, grad: bool, blend: bool) -> (f64, Vec<f64>) {
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
    fn sums_range_at(
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
                let s = sigmoid(k, self.eval_at(i, kv, theta).0);
                let r = self.label(i, k, blend);
                l += (r - s) * (r - s);
            }
            return (l, vec![]);
        }
        let mut g = vec![0.0f64; p];
        KEY_GRAD.with_borrow_mut(|kg| {
            let kg = kg.get_or_insert_with(key_slots);
            for i in range {
                let (e, dsum) = self.eval_at(i, kv, theta);
                let s = sigmoid(k, e);
                let r = self.label(i, k, blend);
                l += (r - s) * (r - s);
                let d = 2.0 * (s - r) * s * (1.0 - s) * scale;
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
struct KeyValues(Box<[[f64; 2]; 1 << 16]>);

impl KeyValues {
    fn new(theta: &[f64]) -> KeyValues {
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

/// Records of the data file per shard (a whole number of chunks): the unit a rank loads and
/// reduces; shard partials are added in shard order.
pub const SHARD: usize = 16 * CHUNK;

/// Chunks per shard: a shard's training set (at most [`SHARD`] positions) has at most this
/// many, so `shard · CHUNKS_PER_SHARD + c` names chunk `c` of that set uniquely in the file.
pub const CHUNKS_PER_SHARD: usize = SHARD / CHUNK;

/// `Σ` of the partials in the order given, starting from zero.
fn add_in_order<'a>(p: usize, parts: impl Iterator<Item = (f64, &'a [f64])>) -> (f64, Vec<f64>) {
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

/// `Σ` of the sums (shards or chunks, from any ranks) in the order of their ids.
fn add_sums(p: usize, mut parts: Vec<ShardSums>) -> (f64, Vec<f64>) {
    parts.sort_by_key(|x| x.id);
    add_in_order(p, parts.iter().map(|x| (x.loss, x.grad.as_slice())))
}

/// What the optimiser minimises: a trace set, or the run's (possibly distributed) data.
pub trait Objective: Send + Sync {
    fn loss(&self, theta: &[f64], k: f64) -> f64;
    fn loss_grad(&self, theta: &[f64], k: f64) -> (f64, Vec<f64>);
}

impl Objective for TraceSet {
    fn loss(&self, theta: &[f64], k: f64) -> f64 {
        TraceSet::loss(self, theta, k)
    }
    fn loss_grad(&self, theta: &[f64], k: f64) -> (f64, Vec<f64>) {
        TraceSet::loss_grad(self, theta, k)
    }
}

/// The training or the validation positions of a dataset.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Subset {
    Train,
    Val,
    /// The training positions against their results alone (fitting K under `--lambda`).
    TrainResults,
}

/// One shard of the data file: records `[id·SHARD, (id+1)·SHARD)`, split into their training
/// and validation positions.
pub struct Shard {
    pub id: usize,
    pub train: TraceSet,
    pub val: TraceSet,
}

/// A shard's unscaled loss and gradient sums, or in a mini-batch pass one chunk's.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ShardSums {
    /// The shard's id, or the chunk's ([`CHUNKS_PER_SHARD`]) in a mini-batch pass.
    pub id: usize,
    pub loss: f64,
    pub grad: Vec<f64>,
}

/// This process's share of the dataset: every shard, or under MPI this rank's shards (shard
/// `s` lives on rank `s mod ranks`; no rank holds the whole file).
pub struct TexelData {
    pub shards: Vec<Shard>,
    /// Positions of the whole file in each subset (every rank counts them while streaming).
    pub train_len: usize,
    pub val_len: usize,
}

/// How to load a dataset: what rank 0 sends the others.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct LoadSpec {
    pub data: PathBuf,
    pub max_positions: Option<usize>,
    pub validation: f64,
    pub seed: u64,
    /// The space's base parameters and selection.
    pub eval: EvalParams,
    pub only: String,
    /// `--lambda`: the weight of the search score in the labels.
    pub lambda: f64,
}

impl LoadSpec {
    pub fn space(&self) -> Result<Space, TuneError> {
        Space::new(ParamSet::Eval(self.eval.clone()), &self.only)
    }
}

/// What rank 0 asks every rank's share.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub enum TexelQuery {
    /// The shard sums of a subset at θ.
    Sums {
        subset: Subset,
        theta: Vec<f64>,
        k: f64,
        grad: bool,
    },
    /// The share's training chunks.
    Chunks,
    /// The sums of those of these chunks the share holds, at θ.
    Batch {
        chunks: Vec<usize>,
        theta: Vec<f64>,
        k: f64,
    },
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub enum TexelAnswer {
    Sums(Vec<ShardSums>),
    Chunks(Vec<(usize, usize)>),
}

impl crate::exec::Resident for TexelData {
    type Spec = LoadSpec;
    type Query = TexelQuery;
    type Answer = TexelAnswer;
    type Error = TuneError;
    const KIND: &'static str = "texel";

    fn load(spec: &LoadSpec, share: crate::exec::Share) -> Result<TexelData, TuneError> {
        TexelData::load(spec, &spec.space()?, &|s| share.holds(s))
    }

    fn answer(&self, q: &TexelQuery) -> TexelAnswer {
        match q {
            TexelQuery::Sums {
                subset,
                theta,
                k,
                grad,
            } => TexelAnswer::Sums(self.sums(*subset, theta, *k, *grad)),
            TexelQuery::Chunks => TexelAnswer::Chunks(self.train_chunks()),
            TexelQuery::Batch { chunks, theta, k } => {
                TexelAnswer::Sums(self.chunk_sums(chunks, theta, *k))
            }
        }
    }
}

impl TexelData {
    /// Streams the file and keeps the shards `keep` selects, traced under `space`; counts the
    /// positions of every subset on the way. Every bad line of a kept shard is named.
    pub fn load(
        spec: &LoadSpec,
        space: &Space,
        keep: &dyn Fn(usize) -> bool,
    ) -> Result<TexelData, TuneError> {
        let path = &spec.data;
        let reader = dataset::open_maybe_gz(path)?;
        let cut = (spec.validation.clamp(0.0, 0.9) * 1_000_000.0) as u64;
        let is_val = |line: usize| mix(spec.seed, &[line as u64, 0x5917]) % 1_000_000 < cut;
        let max = spec.max_positions.unwrap_or(usize::MAX);
        let mut data = TexelData {
            shards: Vec::new(),
            train_len: 0,
            val_len: 0,
        };
        let mut pending: Vec<dataset::Labelled> = Vec::new();
        let mut records = 0usize;
        for (i, line) in std::io::BufRead::lines(reader).enumerate() {
            if records >= max {
                break;
            }
            let line = line.map_err(|e| DatasetError::Io {
                path: path.display().to_string(),
                msg: format!("line {}: {e}", i + 1),
            })?;
            let (fen, result, score) = match dataset::parse_line(&line) {
                Ok(Some(x)) => x,
                Ok(None) => continue,
                Err(msg) => {
                    return Err(DatasetError::Line {
                        path: path.display().to_string(),
                        line: i + 1,
                        msg,
                    }
                    .into());
                }
            };
            if spec.lambda > 0.0 && score.is_none() {
                return Err(DatasetError::Line {
                    path: path.display().to_string(),
                    line: i + 1,
                    msg: format!(
                        "no search score, which --lambda {} needs (rows `FEN | score | wdl`, \
                         as xqtune datagen writes them)",
                        spec.lambda
                    ),
                }
                .into());
            }
            if is_val(i + 1) {
                data.val_len += 1;
            } else {
                data.train_len += 1;
            }
            let shard = records / SHARD;
            records += 1;
            if keep(shard) {
                pending.push(dataset::Labelled {
                    fen,
                    result,
                    score,
                    line: i + 1,
                });
            }
            if records.is_multiple_of(SHARD) && !pending.is_empty() {
                let rows = std::mem::take(&mut pending);
                data.shards.push(trace_shard(
                    shard,
                    &rows,
                    path,
                    space,
                    &is_val,
                    spec.lambda,
                )?);
            }
        }
        if records == 0 {
            return Err(DatasetError::Empty {
                path: path.display().to_string(),
            }
            .into());
        }
        if !pending.is_empty() {
            data.shards.push(trace_shard(
                (records - 1) / SHARD,
                &pending,
                path,
                space,
                &is_val,
                spec.lambda,
            )?);
        }
        Ok(data)
    }

    /// This share's sums of a subset, shard by shard.
    pub fn sums(&self, subset: Subset, theta: &[f64], k: f64, grad: bool) -> Vec<ShardSums> {
        self.shards
            .iter()
            .map(|s| {
                let set = match subset {
                    Subset::Train | Subset::TrainResults => &s.train,
                    Subset::Val => &s.val,
                };
                let (loss, grad) = set.sums_by(theta, k, grad, subset != Subset::TrainResults);
                ShardSums {
                    id: s.id,
                    loss,
                    grad,
                }
            })
            .collect()
    }

    /// The training chunks of this share's shards: (chunk id, positions), the id as
    /// [`CHUNKS_PER_SHARD`] defines it; the chunks are the ones [`TraceSet::sums`] sums.
    pub fn train_chunks(&self) -> Vec<(usize, usize)> {
        self.shards
            .iter()
            .flat_map(|s| {
                let n = s.train.len();
                (0..n.div_ceil(CHUNK))
                    .map(move |c| (s.id * CHUNKS_PER_SHARD + c, CHUNK.min(n - c * CHUNK)))
            })
            .collect()
    }

    /// The loss and gradient sums of those of `chunks` that this share holds, one per chunk
    /// (its id in `id`), computed in parallel.
    pub fn chunk_sums(&self, chunks: &[usize], theta: &[f64], k: f64) -> Vec<ShardSums> {
        let held: Vec<(usize, &TraceSet, usize)> = chunks
            .iter()
            .filter_map(|&id| {
                let s = self
                    .shards
                    .binary_search_by_key(&(id / CHUNKS_PER_SHARD), |s| s.id)
                    .ok()?;
                Some((id, &self.shards[s].train, id % CHUNKS_PER_SHARD))
            })
            .collect();
        let kv = KeyValues::new(theta);
        held.par_iter()
            .map(|&(id, set, c)| {
                let range = c * CHUNK..((c + 1) * CHUNK).min(set.len());
                let (loss, grad) = set.sums_range_at(&kv, theta, k, true, range, true);
                ShardSums { id, loss, grad }
            })
            .collect()
    }
}

/// The whole dataset of a run: every rank's share, asked through the executor.
pub struct Dataset(pub Distributed<TexelData>);

impl Dataset {
    /// Loads `spec` on every rank (this process alone when nothing is distributed).
    pub fn load(spec: &LoadSpec) -> Result<Dataset, TuneError> {
        match crate::exec::load::<TexelData>(spec) {
            Ok(d) => Ok(Dataset(d)),
            Err(ExecError::Here(e)) => Err(e),
            Err(e @ ExecError::Rank { .. }) => Err(TuneError::Io(e.to_string())),
        }
    }

    /// This process's share.
    pub fn local(&self) -> &TexelData {
        self.0.local()
    }

    fn sums(&self, q: TexelQuery) -> Vec<ShardSums> {
        self.0
            .ask(&q)
            .into_iter()
            .flat_map(|a| match a {
                TexelAnswer::Sums(s) => s,
                TexelAnswer::Chunks(_) => panic!("a texel share answered sums with chunks"),
            })
            .collect()
    }

    /// Mean loss (and gradient) of a subset over the whole file: the shard sums of every rank
    /// added in shard order.
    pub fn loss_grad_of(
        &self,
        subset: Subset,
        theta: &[f64],
        k: f64,
        grad: bool,
    ) -> (f64, Vec<f64>) {
        let n = match subset {
            Subset::Train | Subset::TrainResults => self.local().train_len,
            Subset::Val => self.local().val_len,
        };
        let p = if grad { theta.len() } else { 0 };
        if n == 0 {
            return (0.0, vec![0.0; p]);
        }
        let parts = self.sums(TexelQuery::Sums {
            subset,
            theta: theta.to_vec(),
            k,
            grad,
        });
        let (l, g) = add_sums(p, parts);
        let inv = 1.0 / n as f64;
        (l * inv, g.into_iter().map(|x| x * inv).collect())
    }

    pub fn loss(&self, subset: Subset, theta: &[f64], k: f64) -> f64 {
        self.loss_grad_of(subset, theta, k, false).0
    }

    /// Mean loss and gradient over a mini-batch of training chunks holding `positions`
    /// positions: the chunk sums of every rank added in chunk-id order, so the batch is the
    /// same bits on any number of threads and ranks.
    pub fn batch_loss_grad(
        &self,
        chunks: &[usize],
        positions: usize,
        theta: &[f64],
        k: f64,
    ) -> (f64, Vec<f64>) {
        let parts = self.sums(TexelQuery::Batch {
            chunks: chunks.to_vec(),
            theta: theta.to_vec(),
            k,
        });
        let (l, g) = add_sums(theta.len(), parts);
        let inv = 1.0 / positions.max(1) as f64;
        (l * inv, g.into_iter().map(|x| x * inv).collect())
    }

    /// Every training chunk of the file (on every rank), in id order.
    pub fn all_train_chunks(&self) -> Vec<(usize, usize)> {
        let mut all: Vec<(usize, usize)> = self
            .0
            .ask(&TexelQuery::Chunks)
            .into_iter()
            .flat_map(|a| match a {
                TexelAnswer::Chunks(c) => c,
                TexelAnswer::Sums(_) => panic!("a texel share answered chunks with sums"),
            })
            .collect();
        all.sort_unstable();
        all
    }
}

/// The training part of the run's data as the optimiser's objective.
pub struct TrainObjective(pub Arc<Dataset>);

impl Objective for TrainObjective {
    fn loss(&self, theta: &[f64], k: f64) -> f64 {
        self.0.loss(Subset::Train, theta, k)
    }
    fn loss_grad(&self, theta: &[f64], k: f64) -> (f64, Vec<f64>) {
        self.0.loss_grad_of(Subset::Train, theta, k, true)
    }
}

/// The training part against its results alone: what K is fitted on, so that the search
/// scores' `σ(K·score)` does not pull K towards itself.
pub struct ResultsObjective(pub Arc<Dataset>);

impl Objective for ResultsObjective {
    fn loss(&self, theta: &[f64], k: f64) -> f64 {
        self.0.loss(Subset::TrainResults, theta, k)
    }
    fn loss_grad(&self, theta: &[f64], k: f64) -> (f64, Vec<f64>) {
        self.0.loss_grad_of(Subset::TrainResults, theta, k, true)
    }
}

/// Parses and traces the records of one shard, chunk by chunk in parallel: each position is
/// traced as soon as it is parsed, so no shard's worth of `Position`s is ever held (they
/// dominated the loader's peak memory).
fn trace_shard(
    id: usize,
    rows: &[dataset::Labelled],
    path: &std::path::Path,
    space: &Space,
    is_val: &(dyn Fn(usize) -> bool + Sync),
    lambda: f64,
) -> Result<Shard, TuneError> {
    let tracing = Tracing::new(space);
    let parts: Result<Vec<(TraceSet, TraceSet)>, DatasetError> = rows
        .par_chunks(CHUNK)
        .map(|chunk| {
            let mut sets = [(TraceSet::new(), vec![]), (TraceSet::new(), vec![])];
            let mut scratch = Scratch::default();
            for r in chunk {
                let pos = dataset::parse_fen(&r.fen).map_err(|msg| DatasetError::Line {
                    path: path.display().to_string(),
                    line: r.line,
                    msg,
                })?;
                let (set, scores) = &mut sets[usize::from(is_val(r.line))];
                if tracing.push(set, &pos, r.result, &mut scratch) {
                    scores.push(r.score.unwrap_or(0) as f32);
                }
            }
            let [(mut train, ts), (mut val, vs)] = sets;
            train.set_scores(lambda, ts);
            val.set_scores(lambda, vs);
            Ok((train, val))
        })
        .collect();
    let (train, val): (Vec<TraceSet>, Vec<TraceSet>) = parts?.into_iter().unzip();
    Ok(Shard {
        id,
        train: TraceSet::concat(&train),
        val: TraceSet::concat(&val),
    })
}

/// What tracing under a space needs: its parameters and the map from flat to local indices.
struct Tracing<'a> {
    params: Option<&'a EvalParams>,
    full: Vec<i32>,
    local: Vec<u32>,
}

/// Per-thread buffers of [`Tracing::push`].
#[derive(Default)]
struct Scratch {
    row: Row,
    sel: Vec<(u32, u32, f32)>,
}

impl<'a> Tracing<'a> {
    fn new(space: &'a Space) -> Tracing<'a> {
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
    fn push(
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
        if part(i as usize) == LayoutPart::Mg && j == i + 1 {
            let n = cm as f64 + ce as f64;
            let p = PHASE_MAX as f64 * cm as f64 / n;
            if n != 0.0 && n.fract() == 0.0 && p.fract() == 0.0 && (0.0..=16.0).contains(&p) {
                return p as u8;
            }
        }
    }
    // no pair shows both values: a lone endgame value means phase 0 (its middlegame weight
    // is 0), otherwise phase 16 (or no tapered value at all)
    let lone_eg = coeffs.iter().any(|&(i, _)| {
        part(i as usize) == LayoutPart::Eg && !coeffs.iter().any(|&(j, _)| j + 1 == i)
    });
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
            (kind == LayoutPart::Mg && local.get(i as usize + 1) == Some(&(l + 1))).then(|| {
                match next {
                    Some((l2, _, c2)) if l2 == l + 1 => c2,
                    _ => 0.0,
                }
            });
        let (stored, took) = match (kind, partner) {
            (LayoutPart::Mg, Some(ce)) => {
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
            (LayoutPart::Mg, None) | (LayoutPart::Eg, _) => {
                let (w, k) = if kind == LayoutPart::Mg {
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
            (LayoutPart::Plain, _) => (
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

struct KProblem<'a> {
    set: &'a dyn Objective,
    theta: &'a [f64],
}

impl CostFunction for KProblem<'_> {
    type Param = f64;
    type Output = f64;
    fn cost(&self, k: &f64) -> Result<f64, ArgminError> {
        Ok(self.set.loss(self.theta, *k))
    }
}

/// The K minimising the loss at `theta` (Brent's method on [0.01, 10]).
pub fn fit_k(set: &dyn Objective, theta: &[f64]) -> Result<f64, TuneError> {
    let solver = BrentOpt::new(0.01, 10.0).set_tolerance(1e-8, 1e-10);
    let res = Executor::new(KProblem { set, theta }, solver)
        .configure(|s| s.max_iters(200))
        .run()
        .map_err(|e| TuneError::Optimiser(format!("fitting K: {e}")))?;
    res.state()
        .get_best_param()
        .copied()
        .ok_or_else(|| TuneError::Optimiser("fitting K gave no result".into()))
}

/// (θ, loss, gradient) of the last evaluation.
type Cached = (Vec<f64>, f64, Vec<f64>);

/// A labelled position set in memory.
pub type Positions = Vec<(crate::core::Position, f32)>;

/// The L-BFGS problem; caches the last (θ, loss, gradient) because the line search asks for the
/// cost and the gradient at the same point.
struct TexelProblem {
    set: Arc<dyn Objective>,
    k: f64,
    cache: Mutex<Option<Cached>>,
}

impl TexelProblem {
    fn eval(&self, p: &[f64]) -> (f64, Vec<f64>) {
        if let Ok(c) = self.cache.lock()
            && let Some((q, l, g)) = c.as_ref()
            && q.as_slice() == p
        {
            return (*l, g.clone());
        }
        let (l, g) = self.set.loss_grad(p, self.k);
        if let Ok(mut c) = self.cache.lock() {
            *c = Some((p.to_vec(), l, g.clone()));
        }
        (l, g)
    }
}

impl CostFunction for TexelProblem {
    type Param = Vec<f64>;
    type Output = f64;
    fn cost(&self, p: &Vec<f64>) -> Result<f64, ArgminError> {
        Ok(self.eval(p).0)
    }
}

impl Gradient for TexelProblem {
    type Param = Vec<f64>;
    type Gradient = Vec<f64>;
    fn gradient(&self, p: &Vec<f64>) -> Result<Vec<f64>, ArgminError> {
        Ok(self.eval(p).1)
    }
}

type LbfgsState = IterState<Vec<f64>, Vec<f64>, (), (), (), f64>;

type Lbfgs = LBFGS<MoreThuenteLineSearch<Vec<f64>, Vec<f64>, f64>, Vec<f64>, Vec<f64>, f64>;

/// L-BFGS one iteration at a time, exactly as argmin's `Executor::run` drives it (init, then
/// per iteration: termination check, `next_iter`, `update`, `increment_iter`), so the run
/// driver can checkpoint, log and stop between epochs.
pub struct LbfgsStepper {
    problem: Problem<TexelProblem>,
    solver: Lbfgs,
    state: LbfgsState,
}

impl LbfgsStepper {
    /// Starts L-BFGS from `theta0` for at most `epochs` iterations.
    pub fn new(
        train: Arc<dyn Objective>,
        theta0: Vec<f64>,
        k: f64,
        epochs: u64,
        memory: usize,
    ) -> Result<LbfgsStepper, TuneError> {
        let mut problem = Problem::new(TexelProblem {
            set: train,
            k,
            cache: Mutex::new(None),
        });
        let mut solver = LBFGS::new(MoreThuenteLineSearch::new(), memory.max(1))
            .with_tolerance_grad(1e-12)
            .and_then(|s| s.with_tolerance_cost(1e-15))
            .map_err(|e| TuneError::Optimiser(e.to_string()))?;
        let state = LbfgsState::new().param(theta0).max_iters(epochs);
        let (mut state, _) = solver
            .init(&mut problem, state)
            .map_err(|e| TuneError::Optimiser(e.to_string()))?;
        state.update();
        let mut stepper = LbfgsStepper {
            problem,
            solver,
            state,
        };
        stepper.check_termination();
        Ok(stepper)
    }

    fn check_termination(&mut self) {
        if !self.state.terminated()
            && let TerminationStatus::Terminated(reason) =
                <Lbfgs as Solver<TexelProblem, _>>::terminate_internal(
                    &mut self.solver,
                    &self.state,
                )
        {
            let state = std::mem::replace(&mut self.state, LbfgsState::new());
            self.state = state.terminate_with(reason);
        }
    }

    /// True once the iteration budget is spent or L-BFGS has converged.
    pub fn done(&self) -> bool {
        self.state.terminated()
    }

    /// One L-BFGS iteration: the new θ and its training loss.
    pub fn step(&mut self) -> Result<(&[f64], f64), TuneError> {
        let state = std::mem::replace(&mut self.state, LbfgsState::new());
        let (mut state, _) = self
            .solver
            .next_iter(&mut self.problem, state)
            .map_err(|e| TuneError::Optimiser(e.to_string()))?;
        state.update();
        state.increment_iter();
        self.state = state;
        self.check_termination();
        let theta = self.state.get_param().map_or(&[][..], Vec::as_slice);
        Ok((theta, self.state.get_cost()))
    }

    /// The θ of lowest training loss so far (what argmin returns as the result).
    pub fn best(&self) -> Option<&[f64]> {
        self.state.get_best_param().map(Vec::as_slice)
    }
}

/// Minimises the loss from `theta0` with L-BFGS for at most `epochs` iterations; `hook` sees
/// each epoch's (θ, train loss) and may stop the run by returning `false`.
/// Returns the best θ found, or `None` when stopped by the hook.
pub fn optimise(
    train: Arc<dyn Objective>,
    theta0: Vec<f64>,
    k: f64,
    epochs: u64,
    memory: usize,
    mut hook: impl FnMut(&[f64], f64) -> bool,
) -> Result<Option<Vec<f64>>, TuneError> {
    if epochs == 0 {
        return Ok(Some(theta0));
    }
    let mut lbfgs = LbfgsStepper::new(train, theta0, k, epochs, memory)?;
    while !lbfgs.done() {
        let (theta, loss) = lbfgs.step()?;
        if !hook(theta, loss) {
            return Ok(None);
        }
    }
    Ok(lbfgs.best().map(<[f64]>::to_vec))
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TexelState {
    /// Completed epochs.
    pub epoch: u64,
    #[serde(with = "files::exact::vec")]
    pub theta: Vec<f64>,
    #[serde(with = "files::exact")]
    pub k: f64,
    pub start_vec: Vec<i32>,
    pub done: bool,
    /// Adam's or AdaGrad's memory (absent under L-BFGS, whose checkpoints stay as they were).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub moments: Option<Moments>,
}

pub const LOG_HEADER: &str = "epoch,train_loss,val_loss,k,time_s";

/// Texel tuning as a [`Tuner`]: one L-BFGS iteration or one mini-batch epoch per step, after K
/// is fitted at the start.
pub struct TexelTuner {
    settings: RunSettings<TexelSettings>,
    space: Space,
    start: ParamSet,
    data: Arc<Dataset>,
    /// Built at the first step, from the checkpoint's θ on a resumed run (with fresh L-BFGS
    /// memory: the correction pairs are not checkpointed).
    lbfgs: Option<LbfgsStepper>,
    /// Mini-batch mode: every training chunk of the file (id, positions), gathered at the
    /// first epoch.
    chunks: Option<Vec<(usize, usize)>>,
}

impl TexelTuner {
    /// Loads, splits and traces the dataset.
    pub fn new(ctx: &RunContext<TexelSettings>) -> Result<TexelTuner, TuneError> {
        let a = &ctx.settings.tuner;
        let data = a
            .data
            .as_ref()
            .ok_or_else(|| TuneError::Io("texel needs --data FILE (see xqtune datagen)".into()))?;
        // The run's variant chooses the verification match: it must be the data's.
        let (found, want) = (dataset::variant_of(data)?, ctx.settings.common.variant);
        if found != want {
            return Err(TuneError::Io(format!(
                "the run is --variant {want} but {} holds {found} positions (its first position \
                 is a {found} FEN): use --variant {found}",
                data.display()
            )));
        }
        let t_load = Instant::now();
        let ParamSet::Eval(base) = &ctx.space.base else {
            return Err(TuneError::Space(
                "texel tunes evaluation parameters only".into(),
            ));
        };
        let spec = LoadSpec {
            data: data.clone(),
            max_positions: a.max_positions,
            validation: a.validation,
            seed: ctx.settings.common.seed,
            eval: base.clone(),
            only: ctx.settings.common.only.clone(),
            lambda: a.lambda,
        };
        let data = Dataset::load(&spec)?;
        let (held, bytes) = data.local().shards.iter().fold((0, 0), |(n, b), s| {
            (
                n + s.train.len() + s.val.len(),
                b + s.train.bytes() + s.val.bytes(),
            )
        });
        println!(
            "texel: {} train + {} validation positions, loaded and traced in {:.1}s; \
             traces {:.0} MB here ({:.0} bytes per position)",
            data.local().train_len,
            data.local().val_len,
            t_load.elapsed().as_secs_f64(),
            bytes as f64 / 1e6,
            bytes as f64 / held.max(1) as f64,
        );
        Ok(TexelTuner {
            settings: ctx.settings.clone(),
            space: ctx.space.clone(),
            start: ctx.start.clone(),
            data: Arc::new(data),
            lbfgs: None,
            chunks: None,
        })
    }
}

impl Tuner for TexelTuner {
    const NAME: &'static str = "texel";
    const STEP: &'static str = "epoch";
    const LOG_HEADER: &'static str = "epoch,train_loss,val_loss,k,time_s";
    type Settings = TexelSettings;
    type State = TexelState;

    fn start_vec(state: &TexelState) -> &[i32] {
        &state.start_vec
    }

    /// The losses at the start, then one row per epoch.
    fn log_rows(state: &TexelState) -> usize {
        state.epoch as usize + 1
    }

    fn total_steps(&self) -> u64 {
        self.settings.tuner.epochs
    }

    fn steps_done(&self, state: &TexelState) -> u64 {
        state.epoch
    }

    fn banner(&self) -> String {
        format!("texel: {} parameters", self.space.len())
    }

    /// Fits K (unless given) and logs the starting losses as epoch 0.
    fn start(&mut self) -> Result<(TexelState, Option<Vec<String>>), TuneError> {
        let theta: Vec<f64> = self.space.values().iter().map(|&v| v as f64).collect();
        let k = match self.settings.tuner.k {
            Some(k) => k,
            None => fit_k(&ResultsObjective(self.data.clone()), &theta)?,
        };
        println!("K = {k:.4}");
        if !(0.0101..9.99).contains(&k) {
            eprintln!(
                "warning: K = {k:.4} sits on the edge of its search interval [0.01, 10]: the \
                 evaluation hardly predicts these results (e.g. nearly all draws); check the dataset"
            );
        }
        let (tl, vl) = (
            self.data.loss(Subset::Train, &theta, k),
            self.data.loss(Subset::Val, &theta, k),
        );
        let state = TexelState {
            epoch: 0,
            theta,
            k,
            start_vec: self.start.to_vec(),
            done: false,
            moments: None,
        };
        Ok((
            state,
            Some(vec!["0".into(), csv_float(tl), csv_float(vl), csv_float(k)]),
        ))
    }

    fn finished(&self, state: &TexelState) -> bool {
        state.done || state.epoch >= self.settings.tuner.epochs
    }

    fn step(&mut self, state: &mut TexelState) -> Result<Option<Step>, TuneError> {
        if self.settings.tuner.optimiser.is_minibatch() {
            return Ok(Some(self.minibatch_epoch(state)));
        }
        let lbfgs = match &mut self.lbfgs {
            Some(l) => l,
            None => self.lbfgs.insert(LbfgsStepper::new(
                Arc::new(TrainObjective(self.data.clone())),
                state.theta.clone(),
                state.k,
                self.settings.tuner.epochs - state.epoch,
                self.settings.tuner.memory,
            )?),
        };
        if lbfgs.done() {
            // converged before its first iteration: nothing to log
            finish(lbfgs, state);
            return Ok(None);
        }
        let (theta, train_loss) = lbfgs.step()?;
        state.epoch += 1;
        state.theta = theta.to_vec();
        let vl = self.data.loss(Subset::Val, &state.theta, state.k);
        if lbfgs.done() {
            finish(lbfgs, state);
        }
        Ok(Some(Step {
            row: vec![
                state.epoch.to_string(),
                csv_float(train_loss),
                csv_float(vl),
                csv_float(state.k),
            ],
            message: format!("train {train_loss:.6} val {vl:.6}"),
        }))
    }

    fn best_so_far(&self, state: &TexelState) -> Option<Vec<i32>> {
        Some(self.space.round(&state.theta))
    }

    fn best(&mut self, state: &mut TexelState) -> Result<Vec<i32>, TuneError> {
        state.done = true;
        let best = self.space.round(&state.theta);
        let rounded: Vec<f64> = best.iter().map(|&v| v as f64).collect();
        let (tl, vl) = (
            self.data.loss(Subset::Train, &rounded, state.k),
            self.data.loss(Subset::Val, &rounded, state.k),
        );
        println!(
            "final (rounded, clamped) parameters: train loss {tl:.6}, validation loss {vl:.6}"
        );
        Ok(best)
    }
}

impl TexelTuner {
    /// One epoch of Adam or AdaGrad: every training chunk once, in the epoch's shuffled order,
    /// in batches of `--batch-size` positions (whole chunks), one step per batch; then the
    /// full training and validation losses for the log.
    fn minibatch_epoch(&mut self, state: &mut TexelState) -> Step {
        let data = &self.data;
        let chunks = self.chunks.get_or_insert_with(|| data.all_train_chunks());
        let s = &self.settings.tuner;
        let rule = s.rule();
        let bounds: Vec<(f64, f64)> = self
            .space
            .genes()
            .iter()
            .map(|g| (g.min as f64, g.max as f64))
            .collect();
        let moments = state
            .moments
            .get_or_insert_with(|| Moments::new(s.optimiser, state.theta.len()));
        let order = adam::epoch_order(self.settings.common.seed, state.epoch, chunks.len());
        for batch in order.chunks(s.batch_size.div_ceil(CHUNK).max(1)) {
            // summed in id order whatever the shuffle, so the batch's bits do not depend on
            // which rank holds which chunk
            let mut ids: Vec<usize> = batch.iter().map(|&i| chunks[i].0).collect();
            ids.sort_unstable();
            let positions = batch.iter().map(|&i| chunks[i].1).sum();
            let (_, grad) = data.batch_loss_grad(&ids, positions, &state.theta, state.k);
            rule.step(moments, &mut state.theta, &grad, &bounds);
        }
        state.epoch += 1;
        let tl = data.loss(Subset::Train, &state.theta, state.k);
        let vl = data.loss(Subset::Val, &state.theta, state.k);
        Step {
            row: vec![
                state.epoch.to_string(),
                csv_float(tl),
                csv_float(vl),
                csv_float(state.k),
            ],
            message: format!("train {tl:.6} val {vl:.6}"),
        }
    }
}

/// Ends the optimisation with argmin's result: the θ of lowest training loss.
fn finish(lbfgs: &LbfgsStepper, state: &mut TexelState) {
    if let Some(best) = lbfgs.best() {
        state.theta = best.to_vec();
    }
    state.done = true;
}

/// `xqtune tune texel`.
pub fn run_texel(args: &TexelArgs) -> Result<RunOutcome, TuneError> {
    args.check()?;
    install_ctrlc();
    if args.common.resume.is_none() {
        if args.common.space != SpaceKind::Eval {
            return Err(TuneError::Space(
                "texel tunes evaluation parameters only (--space eval)".into(),
            ));
        }
        if args.data.is_none() {
            return Err(TuneError::Io(
                "texel needs --data FILE (see xqtune datagen)".into(),
            ));
        }
        if !(0.0..=1.0).contains(&args.lambda) {
            return Err(TuneError::Io(format!(
                "--lambda {} is outside [0, 1] (the weight of the search score in the label)",
                args.lambda
            )));
        }
    }
    driver::launch(
        &args.common,
        TexelSettings::from(args),
        TexelTuner::new,
        None,
    )
}

/// Convenience for callers holding `EvalParams`.
pub fn eval_space(params: &EvalParams, only: &str) -> Result<Space, TuneError> {
    Space::new(ParamSet::Eval(params.clone()), only)
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    /// Random sparse traces over `p` parameters; labels are the exact win probabilities of a
    /// known parameter vector (soft labels make it the unique minimiser).
    fn synthetic(n: usize, p: usize, k: f64, seed: u64) -> (TraceSet, Vec<f64>) {
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
    fn fits_k_and_recovers_known_parameters() {
        let (ts, truth) = synthetic(20000, 10, 1.3, 2);
        let k = fit_k(&ts, &truth).unwrap();
        assert!((k - 1.3).abs() < 1e-3, "K {k}");
        let start: Vec<f64> = truth.iter().map(|t| t + 40.0).collect();
        let set = Arc::new(ts);
        let l0 = set.loss(&start, k);
        let losses = Arc::new(Mutex::new(vec![]));
        let lc = losses.clone();
        let hook = move |_t: &[f64], l: f64| {
            lc.lock().unwrap().push(l);
            true
        };
        let best = optimise(set.clone(), start, k, 200, 7, hook)
            .unwrap()
            .unwrap();
        let l1 = set.loss(&best, k);
        assert!(l1 < l0 * 1e-4, "{l0} -> {l1}");
        for (b, t) in best.iter().zip(&truth) {
            assert!((b - t).abs() < 0.5, "{b} vs {t}");
        }
        let ls = losses.lock().unwrap();
        assert!(ls.len() >= 2 && ls.last().unwrap() < &ls[0]);
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
        // the columns a set does not need stay empty, through concat too
        let two = TraceSet::concat(&[plain(), plain()]);
        assert!(two.frac_off.is_empty() && two.danger_off.is_empty());
        assert!(danger.danger_fixed.is_empty() && !untuned.danger_fixed.is_empty());
        let parts = [plain(), frac, plain(), danger, untuned, plain()];
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

    /// One shard of synthetic traces: three full chunks and a short one of training positions
    /// (the short one also returned alone), and validation positions.
    fn synthetic_data(p: usize, seed: u64) -> (Dataset, TraceSet, Vec<f64>) {
        let (full, truth) = synthetic(3 * CHUNK, p, 1.0, seed);
        let (last, _) = synthetic(100, p, 1.0, seed + 1);
        let (val, _) = synthetic(500, p, 1.0, seed + 2);
        let data = TexelData {
            shards: vec![Shard {
                id: 0,
                train: TraceSet::concat(&[full, last.clone()]),
                val,
            }],
            train_len: 3 * CHUNK + 100,
            val_len: 500,
        };
        (Dataset(Distributed::whole(data)), last, truth)
    }

    #[test]
    fn a_batch_of_every_chunk_is_the_full_pass() {
        let (data, last, truth) = synthetic_data(8, 4);
        let chunks = data.all_train_chunks();
        let sizes: Vec<usize> = chunks.iter().map(|c| c.1).collect();
        assert_eq!(sizes, [CHUNK, CHUNK, CHUNK, 100]);
        let theta: Vec<f64> = truth.iter().map(|t| t + 10.0).collect();
        let ids: Vec<usize> = chunks.iter().map(|c| c.0).collect();
        let batch = data.batch_loss_grad(&ids, 3 * CHUNK + 100, &theta, 1.0);
        assert_eq!(batch, data.loss_grad_of(Subset::Train, &theta, 1.0, true));
        // one chunk alone: that chunk's positions only
        let one = data.batch_loss_grad(&[3], 100, &theta, 1.0);
        assert_eq!(one, last.loss_grad(&theta, 1.0));
    }

    #[test]
    fn hook_can_stop() {
        let (ts, truth) = synthetic(2000, 5, 1.0, 3);
        let start: Vec<f64> = truth.iter().map(|t| t + 30.0).collect();
        let mut n = 0;
        let hook = move |_t: &[f64], _l: f64| {
            n += 1;
            n < 3
        };
        assert_eq!(
            optimise(Arc::new(ts), start, 1.0, 100, 5, hook).unwrap(),
            None
        );
    }
}

#[cfg(test)]
mod run_tests {
    use super::*;
    use crate::core::Position;
    use clap::Parser;
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    #[derive(Parser)]
    struct T {
        #[command(flatten)]
        a: TexelArgs,
    }

    /// Random-play positions labelled with the win probability of the evaluation at other
    /// parameter values, so the tuner has something to find.
    fn write_dataset(path: &std::path::Path, n: usize) {
        let mut rng = ChaCha8Rng::seed_from_u64(5);
        let base = EvalParams::default();
        let truth_vec: Vec<i32> = base.to_vec().iter().map(|v| v + v / 3 + 20).collect();
        let truth = base.from_vec(&truth_vec);
        let mut text = String::new();
        while text.lines().count() < n {
            let mut pos = Position::startpos();
            let plies = rng.gen_range(10..120);
            for _ in 0..plies {
                let ms = pos.legal_moves();
                if ms.is_empty() || pos.outcome().is_some() {
                    break;
                }
                // prefer captures so material varies
                let caps = pos.legal_captures();
                let m = if !caps.is_empty() && rng.gen_bool(0.6) {
                    caps.as_slice()[rng.gen_range(0..caps.len())]
                } else {
                    ms.as_slice()[rng.gen_range(0..ms.len())]
                };
                pos.make_move(m);
            }
            let t = crate::eval::trace(&pos, &truth);
            let e: f64 = t.constant as f64
                + t.coeffs
                    .iter()
                    .map(|&(i, c)| c as f64 * truth_vec[i as usize] as f64)
                    .sum::<f64>();
            text.push_str(&format!("{} [{:.4}]\n", pos.to_fen(), sigmoid(1.0, e)));
        }
        std::fs::write(path, text).unwrap();
    }

    /// Random-play positions of Xiangqi and of Jieqi deals.
    fn random_positions(n: usize, seed: u64) -> Vec<Position> {
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

    #[test]
    fn lambda_one_learns_from_the_search_scores() {
        let out = std::env::temp_dir().join(format!("xqtune-texel-lambda-{}", std::process::id()));
        std::fs::create_dir_all(&out).unwrap();
        // scores from the evaluation at known material values; results that say nothing
        let base = EvalParams::default();
        let space = eval_space(&base, "material.*").unwrap();
        let mut truth_vec = base.to_vec();
        for &g in &space.selected {
            truth_vec[g] += truth_vec[g] / 4 + 30;
        }
        let truth = base.from_vec(&truth_vec);
        let mut rng = ChaCha8Rng::seed_from_u64(11);
        let mut text = String::new();
        for pos in random_positions(1200, 12)
            .iter()
            .filter(|p| p.variant() == crate::core::Variant::Xiangqi)
        {
            let score = crate::eval::trace(pos, &truth).dot(&truth_vec).round() as i32;
            let wdl = ["0.0", "0.5", "1.0"][rng.gen_range(0..3)];
            text.push_str(&format!("{} | {score} | {wdl}\n", pos.to_fen()));
        }
        let data = out.join("scored.txt");
        std::fs::write(&data, text).unwrap();
        let args = |lambda: &str, file: &std::path::Path| {
            T::parse_from([
                "t",
                "--data",
                file.to_str().unwrap(),
                "--only",
                "material.*",
                "--lambda",
                lambda,
                "--k",
                "1.0",
                "--epochs",
                "40",
                "--validation",
                "0",
                "--verify",
                "none",
                "--concurrency",
                "2",
                "--out",
                out.to_str().unwrap(),
            ])
            .a
        };
        let o = run_texel(&args("1", &data)).unwrap();
        let best = o.best.unwrap();
        let dist = |v: &[i32]| -> f64 {
            v.iter()
                .zip(&space.selected)
                .map(|(&x, &g)| (x - truth_vec[g]).abs() as f64)
                .sum()
        };
        let (d0, d1) = (dist(&space.values()), dist(&best));
        assert!(d1 < 0.5 * d0, "distance to the truth {d0} -> {d1}");
        // out of range, and rows without a score
        let e = run_texel(&args("1.5", &data)).unwrap_err().to_string();
        assert!(e.contains("--lambda 1.5"), "{e}");
        let plain = out.join("plain.txt");
        std::fs::write(
            &plain,
            "rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C5C1/9/RNBAKABNR w - - 0 1 [0.5]\n",
        )
        .unwrap();
        let e = run_texel(&args("0.5", &plain)).unwrap_err().to_string();
        assert!(e.contains("plain.txt:1") && e.contains("score"), "{e}");
        std::fs::remove_dir_all(&out).unwrap();
    }

    #[test]
    fn texel_run_reduces_loss_and_resumes() {
        let out = std::env::temp_dir().join(format!("xqtune-texel-{}", std::process::id()));
        std::fs::create_dir_all(&out).unwrap();
        let data = out.join("d.txt");
        write_dataset(&data, 600);
        let a = T::parse_from([
            "t",
            "--data",
            data.to_str().unwrap(),
            "--epochs",
            "30",
            "--verify",
            "none",
            "--concurrency",
            "2",
            "--out",
            out.to_str().unwrap(),
        ])
        .a;
        let o = run_texel(&a).unwrap();
        assert!(o.finished);
        let (h, rows) = crate::tune::plot::read_csv(&o.dir.join("log.csv")).unwrap();
        assert_eq!(h, ["epoch", "train_loss", "val_loss", "k", "time_s"]);
        assert!(rows.len() >= 3);
        let (first, last) = (&rows[0], rows.last().unwrap());
        assert!(
            last[1] < first[1] * 0.9,
            "train {} -> {}",
            first[1],
            last[1]
        );
        assert!(last[2] < first[2], "validation {} -> {}", first[2], last[2]);
        assert!(first[3] > 0.05 && first[3] < 10.0);
        assert!(o.dir.join("best.json").exists());
        assert!(o.dir.join("plots/loss.png").exists());
        // resuming a finished run changes nothing
        let mut r = a.clone();
        r.common.resume = Some(o.dir.clone());
        let again = run_texel(&r).unwrap();
        assert_eq!(again.best, o.best);
        // a bad line is named
        std::fs::write(
            out.join("bad.txt"),
            "rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C5C1/9/RNBAKABNR w - - 0 1 | 3-0\n",
        )
        .unwrap();
        let mut b = a.clone();
        b.data = Some(out.join("bad.txt"));
        let e = run_texel(&b).unwrap_err().to_string();
        assert!(e.contains("bad.txt:1"), "{e}");
        std::fs::remove_dir_all(&out).unwrap();
    }

    #[test]
    fn texel_stop_and_resume_keep_log_and_checkpoint_in_step() {
        let out = std::env::temp_dir().join(format!("xqtune-texel-stop-{}", std::process::id()));
        std::fs::create_dir_all(&out).unwrap();
        let data = out.join("d.txt");
        write_dataset(&data, 300);
        let a = T::parse_from([
            "t",
            "--data",
            data.to_str().unwrap(),
            "--epochs",
            "6",
            "--verify",
            "none",
            "--concurrency",
            "1",
            "--out",
            out.to_str().unwrap(),
        ])
        .a;
        let part =
            driver::launch(&a.common, TexelSettings::from(&a), TexelTuner::new, Some(2)).unwrap();
        assert!(!part.finished);
        let st: TexelState = files::read_json(&part.dir.join("checkpoints/state.json")).unwrap();
        assert_eq!((st.epoch, st.done), (2, false));
        let (_, rows) = crate::tune::plot::read_csv(&part.dir.join("log.csv")).unwrap();
        assert_eq!(rows.len(), 3, "epoch 0 and two steps");
        let mut r = a.clone();
        r.common.resume = Some(part.dir.clone());
        let resumed = run_texel(&r).unwrap();
        assert!(resumed.finished);
        let st: TexelState = files::read_json(&part.dir.join("checkpoints/state.json")).unwrap();
        assert!(st.done);
        let (_, rows) = crate::tune::plot::read_csv(&part.dir.join("log.csv")).unwrap();
        assert_eq!(rows.len(), st.epoch as usize + 1);
        let epochs: Vec<f64> = rows.iter().map(|r| r[0]).collect();
        assert!(epochs.windows(2).all(|w| w[1] == w[0] + 1.0), "{epochs:?}");
        std::fs::remove_dir_all(&out).unwrap();
    }

    /// `write_dataset`'s positions repeated until the file spans several chunks (tracing
    /// fresh random games for each line would cost far more).
    fn write_big_dataset(path: &std::path::Path, unique: usize, lines: usize) {
        write_dataset(path, unique);
        let text = std::fs::read_to_string(path).unwrap();
        let big: String = text
            .lines()
            .cycle()
            .take(lines)
            .flat_map(|l| [l, "\n"])
            .collect();
        std::fs::write(path, big).unwrap();
    }

    fn adam_args(data: &std::path::Path, out: &std::path::Path, seed: &str) -> TexelArgs {
        T::parse_from([
            "t",
            "--data",
            data.to_str().unwrap(),
            "--optimiser",
            "adam",
            "--epochs",
            "4",
            "--seed",
            seed,
            "--batch-size",
            "8192",
            "--verify",
            "none",
            "--concurrency",
            "2",
            "--out",
            out.to_str().unwrap(),
        ])
        .a
    }

    /// `log.csv` without its time column.
    fn log_without_time(dir: &std::path::Path) -> Vec<String> {
        std::fs::read_to_string(dir.join("log.csv"))
            .unwrap()
            .lines()
            .map(|l| l.rsplit_once(',').unwrap().0.to_string())
            .collect()
    }

    #[test]
    fn adam_reduces_the_validation_loss_and_resumes_bit_for_bit() {
        let out = std::env::temp_dir().join(format!("xqtune-texel-adam-{}", std::process::id()));
        std::fs::create_dir_all(&out).unwrap();
        let data = out.join("d.txt");
        // about 2.2 training chunks: three batches of one chunk per epoch, in shuffled order
        write_big_dataset(&data, 1500, 2 * CHUNK + 4000);
        let whole_out = out.join("whole");
        let a = adam_args(&data, &whole_out, "9");
        let whole = run_texel(&a).unwrap();
        assert!(whole.finished);
        let (_, rows) = crate::tune::plot::read_csv(&whole.dir.join("log.csv")).unwrap();
        assert_eq!(rows.len(), 5, "epoch 0 and four epochs");
        let (first, last) = (&rows[0], rows.last().unwrap());
        assert!(last[2] < first[2], "validation {} -> {}", first[2], last[2]);
        assert!(last[1] < first[1], "train {} -> {}", first[1], last[1]);
        let st: TexelState = files::read_json(&whole.dir.join("checkpoints/state.json")).unwrap();
        let m = st.moments.expect("Adam's moments in the checkpoint");
        assert_eq!(m.steps, 4 * 3, "three batches per epoch");

        // stopped after two epochs, then resumed: the same run
        let cut_out = out.join("cut");
        let b = adam_args(&data, &cut_out, "9");
        let part =
            driver::launch(&b.common, TexelSettings::from(&b), TexelTuner::new, Some(2)).unwrap();
        assert!(!part.finished);
        let st: TexelState = files::read_json(&part.dir.join("checkpoints/state.json")).unwrap();
        assert_eq!((st.epoch, st.moments.map(|m| m.steps)), (2, Some(6)));
        let mut r = b.clone();
        r.common.resume = Some(part.dir.clone());
        let resumed = run_texel(&r).unwrap();
        assert!(resumed.finished);
        assert_eq!(resumed.best, whole.best);
        assert_eq!(
            std::fs::read_to_string(part.dir.join("best.json")).unwrap(),
            std::fs::read_to_string(whole.dir.join("best.json")).unwrap()
        );
        assert_eq!(log_without_time(&part.dir), log_without_time(&whole.dir));

        std::fs::remove_dir_all(&out).unwrap();
    }

    #[test]
    fn bad_optimiser_flags_are_named() {
        let err = |flags: &[&str]| {
            let a = T::parse_from(["t"].iter().chain(flags)).a;
            a.check().unwrap_err().to_string()
        };
        assert!(err(&["--optimiser", "adam", "--batch-size", "0"]).contains("--batch-size"));
        assert!(err(&["--optimiser", "adam", "--memory", "5"]).contains("--memory"));
        assert!(err(&["--memory", "0"]).contains("--memory"));
        assert!(err(&["--optimiser", "adam", "--lr", "0"]).contains("--lr"));
        assert!(err(&["--optimiser", "adam", "--lr=-1"]).contains("--lr"));
        assert!(err(&["--optimiser", "adam", "--beta1", "1"]).contains("--beta1"));
        assert!(err(&["--optimiser", "adam", "--eps", "0"]).contains("--eps"));
        let e = err(&["--lr", "0.5"]);
        assert!(e.contains("--lr") && e.contains("lbfgs"), "{e}");
        let e = err(&["--optimiser", "adagrad", "--beta2", "0.99"]);
        assert!(e.contains("--beta2") && e.contains("adagrad"), "{e}");
        let ok = T::parse_from(["t", "--optimiser", "adagrad", "--lr", "3"]).a;
        assert!(ok.check().is_ok());
    }

    #[test]
    fn settings_of_earlier_runs_read_as_lbfgs() {
        let text = r#"{"data":"d.txt","epochs":5,"validation":0.1,"k":null,"memory":7,
            "max_positions":null}"#;
        let s: TexelSettings = serde_json::from_str(text).unwrap();
        assert_eq!(s.optimiser, Optimiser::Lbfgs);
        assert_eq!(s.batch_size, DEFAULT_BATCH);
    }
}
