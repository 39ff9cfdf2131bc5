//! Recording how often each parameter fired: the evaluation as a linear form.
//!
//! The evaluation is generic over a [`Tracer`] (Ethereal's `TRACE` build, texel-tuner's
//! `get_coefficients`): with [`NoTrace`] every call is an empty inline function and vanishes,
//! so the engine's path costs nothing; with [`CoeffTracer`] the same code counts, per flat
//! parameter, how many times it was added (red's point of view). The Texel tuner then needs no
//! re-evaluation per step: `eval = round(sum(coeff * param))`.

use super::layout::{NALL, Part, part};
use super::score::{DANGER_DIV, DARK_SCALE, PHASE_MAX, SCALE_DIV};

/// Receives the evaluation's parameter uses.
pub trait Tracer {
    /// Whether calls do anything: lets the evaluation skip work done only for the trace.
    const ACTIVE: bool;
    /// Flat parameter `index` was added `n` times (negative for black's features).
    fn add(&mut self, index: usize, n: i32);
    /// A tapered pair at `index`, `index + 1` was added `n` times.
    #[inline(always)]
    fn add_s(&mut self, index: usize, n: i32) {
        self.add(index, n);
        self.add(index + 1, n);
    }
    /// Flat parameter `index` was added `n / DARK_SCALE` times: the fractional uses of the
    /// Jieqi piece values in a dark piece's pool average.
    fn add_frac(&mut self, index: usize, n: i64);
    /// A tapered pair at `index`, `index + 1` was added `n / DARK_SCALE` times.
    #[inline(always)]
    fn add_frac_s(&mut self, index: usize, n: i64) {
        self.add_frac(index, n);
        self.add_frac(index + 1, n);
    }
    /// The game phase the middlegame and endgame values were blended at.
    fn phase(&mut self, phase: i32);
    /// Plain value `index` was added `n` times to the king-danger attack weight of `side`
    /// (0 red, 1 black): the non-linear part, outside the linear sum.
    fn add_danger(&mut self, side: usize, index: usize, n: i32);
    /// The whole evaluation was scaled down by the plain value `index` (in 64ths): the
    /// endgame scale, outside the linear sum.
    fn scale_down(&mut self, index: usize);
}

/// Adds `n` uses of `index` to a sparse linear form.
fn add_sparse(form: &mut Vec<(u32, i32)>, index: usize, n: i32) {
    if n == 0 {
        return;
    }
    match form.iter_mut().find(|(i, _)| *i as usize == index) {
        Some(e) => e.1 += n,
        None => form.push((index as u32, n)),
    }
}

/// The engine's tracer: records nothing.
pub struct NoTrace;

impl Tracer for NoTrace {
    const ACTIVE: bool = false;
    #[inline(always)]
    fn add(&mut self, _: usize, _: i32) {}
    #[inline(always)]
    fn add_s(&mut self, _: usize, _: i32) {}
    #[inline(always)]
    fn add_frac(&mut self, _: usize, _: i64) {}
    #[inline(always)]
    fn add_frac_s(&mut self, _: usize, _: i64) {}
    #[inline(always)]
    fn phase(&mut self, _: i32) {}
    #[inline(always)]
    fn add_danger(&mut self, _: usize, _: usize, _: i32) {}
    #[inline(always)]
    fn scale_down(&mut self, _: usize) {}
}

/// Counts parameter uses densely; [`CoeffTracer::finish`] turns them into a sparse [`Trace`].
pub struct CoeffTracer {
    counts: Vec<i32>,
    /// Fractional uses in units of `1 / DARK_SCALE` (Jieqi dark pieces' pool average).
    frac: Vec<i64>,
    phase: i32,
    /// The king-danger attack weights' uses, per side.
    danger: [Vec<(u32, i32)>; 2],
    scale_down: Option<u32>,
}

impl Default for CoeffTracer {
    fn default() -> Self {
        CoeffTracer {
            counts: vec![0; NALL],
            frac: vec![0; NALL],
            phase: PHASE_MAX,
            danger: [vec![], vec![]],
            scale_down: None,
        }
    }
}

impl Tracer for CoeffTracer {
    const ACTIVE: bool = true;
    #[inline]
    fn add(&mut self, index: usize, n: i32) {
        self.counts[index] += n;
    }
    #[inline]
    fn add_frac(&mut self, index: usize, n: i64) {
        self.frac[index] += n;
    }
    fn phase(&mut self, phase: i32) {
        self.phase = phase;
    }
    fn add_danger(&mut self, side: usize, index: usize, n: i32) {
        add_sparse(&mut self.danger[side], index, n);
    }
    fn scale_down(&mut self, index: usize) {
        self.scale_down = Some(index as u32);
    }
}

impl CoeffTracer {
    /// The raw (untapered) whole counts, one per flat parameter (Jieqi's fractional pool
    /// uses are kept apart and enter only [`CoeffTracer::finish`]).
    pub fn counts(&self) -> &[i32] {
        &self.counts
    }

    /// The sparse trace: middlegame counts weighted by `phase / 16`, endgame counts by
    /// `(16 - phase) / 16`, plain counts as they are. Every coefficient is a binary fraction
    /// `k / (16 * DARK_SCALE)` with `|k| < 2^24`, so `f32` holds it exactly and the dot product
    /// in `f64` reproduces the rounded evaluation exactly.
    pub fn finish(&self) -> Trace {
        let mg = self.phase as f64 / PHASE_MAX as f64;
        let eg = (PHASE_MAX - self.phase) as f64 / PHASE_MAX as f64;
        let coeffs = self
            .counts
            .iter()
            .zip(self.frac.iter())
            .enumerate()
            .filter_map(|(i, (&n, &f))| {
                let w = match part(i) {
                    Part::Plain => 1.0,
                    Part::Mg => mg,
                    Part::Eg => eg,
                };
                let c = ((n as f64 + f as f64 / DARK_SCALE as f64) * w) as f32;
                (c != 0.0).then_some((i as u32, c))
            })
            .collect();
        let danger = self
            .danger
            .clone()
            .map(|f| f.into_iter().map(|(i, n)| (i, n as f32)).collect());
        Trace {
            coeffs,
            constant: 0.0,
            danger,
            danger_scale: danger_scale(self.phase),
            scale_down: self.scale_down,
        }
    }
}

/// The evaluation as a function of the parameters, from red's point of view: a linear form
/// plus the non-linear king danger, scaled down in some endgames,
/// `evaluate_red(pos) == round(s · (constant + Σ coeff·θ[index] + danger_scale·(q(D_red) −
/// q(D_black))))` with `D_side = Σ a·θ[index]` over `danger[side]`, `q(x) = max(x, 0)²` and
/// `s = (64 − θ[scale_down]) / 64` (1 without a scale-down) (rounding halves away from zero,
/// as `f64::round`). The Texel tuner reads it instead of re-running the evaluation. Which
/// scale-down applies was decided by the sign of the unscaled sum at the traced parameters.
#[derive(Clone, Debug, Default)]
pub struct Trace {
    pub coeffs: Vec<(u32, f32)>,
    pub constant: f32,
    /// The attack weight of each side on the enemy king (0 red, 1 black) as a linear form.
    pub danger: [Vec<(u32, f32)>; 2],
    /// What one unit of `q(D)` is worth in the evaluation (phase weight included).
    pub danger_scale: f64,
    /// The plain value whose 64ths are taken off the whole evaluation, if any.
    pub scale_down: Option<u32>,
}

/// What one unit of `q(D)` is worth at `phase` (see [`Trace`]).
pub fn danger_scale(phase: i32) -> f64 {
    phase as f64 / (PHASE_MAX as f64 * DANGER_DIV as f64)
}

/// The king-danger curve: nothing below zero, the square above.
#[inline]
pub fn danger_q(x: f64) -> f64 {
    let x = x.max(0.0);
    x * x
}

/// The slope of [`danger_q`].
#[inline]
pub fn danger_dq(x: f64) -> f64 {
    2.0 * x.max(0.0)
}

impl Trace {
    /// The evaluation before rounding, in f64, at integer parameters.
    pub fn dot(&self, params: &[i32]) -> f64 {
        let lin = |v: &[(u32, f32)]| {
            v.iter()
                .map(|&(i, c)| c as f64 * params[i as usize] as f64)
                .sum::<f64>()
        };
        let raw = self.constant as f64
            + lin(&self.coeffs)
            + self.danger_scale * (danger_q(lin(&self.danger[0])) - danger_q(lin(&self.danger[1])));
        raw * self.scale(params)
    }

    /// The share `s` of the evaluation the endgame scale-down keeps at `params` (1 without one).
    pub fn scale(&self, params: &[i32]) -> f64 {
        match self.scale_down {
            Some(i) => scale_keep(params[i as usize] as f64),
            None => 1.0,
        }
    }
}

/// The share of the evaluation a scale-down of `r` 64ths keeps.
#[inline]
pub fn scale_keep(r: f64) -> f64 {
    (SCALE_DIV as f64 - r) / SCALE_DIV as f64
}

/// The weight of flat value `i` at `phase`: `phase / 16` for middlegame values,
/// `(16 - phase) / 16` for endgame values, 1 for plain values.
pub fn phase_weight(i: usize, phase: i32) -> f64 {
    match part(i) {
        Part::Plain => 1.0,
        Part::Mg => phase as f64 / PHASE_MAX as f64,
        Part::Eg => (PHASE_MAX - phase) as f64 / PHASE_MAX as f64,
    }
}

/// Counts red's features (`n > 0`) and black's (`n < 0`) apart, for term-by-term reports
/// (`xqtune eval --trace`); in [`CoeffTracer`] they cancel.
pub struct SideTracer {
    pub by_side: [Vec<i32>; 2],
    /// Fractional uses (units of `1 / DARK_SCALE`) by side: Jieqi dark pieces' pool average.
    pub frac_by_side: [Vec<i64>; 2],
    pub phase: i32,
    /// The king-danger attack weights' uses of each attacking side.
    pub danger: [Vec<(u32, i32)>; 2],
    /// The endgame scale-down that applied, if any (see [`Trace::scale_down`]).
    pub scale_down: Option<u32>,
}

impl Default for SideTracer {
    fn default() -> Self {
        SideTracer {
            by_side: [vec![0; NALL], vec![0; NALL]],
            frac_by_side: [vec![0; NALL], vec![0; NALL]],
            phase: PHASE_MAX,
            danger: [vec![], vec![]],
            scale_down: None,
        }
    }
}

impl SideTracer {
    /// The king danger `side` adds, in centipawns after the phase blend, at `values` (its own
    /// view: positive for either side).
    pub fn danger_cp(&self, side: usize, values: &[i32]) -> f64 {
        let d: f64 = self.danger[side]
            .iter()
            .map(|&(i, n)| n as f64 * values[i as usize] as f64)
            .sum();
        danger_scale(self.phase) * danger_q(d)
    }

    /// The uses of flat value `i` by `side` (0 red, 1 black; negative for black), fractions
    /// included.
    pub fn uses(&self, side: usize, i: usize) -> f64 {
        self.by_side[side][i] as f64 + self.frac_by_side[side][i] as f64 / DARK_SCALE as f64
    }
}

impl Tracer for SideTracer {
    const ACTIVE: bool = true;
    fn add(&mut self, index: usize, n: i32) {
        self.by_side[(n < 0) as usize][index] += n;
    }
    fn add_frac(&mut self, index: usize, n: i64) {
        self.frac_by_side[(n < 0) as usize][index] += n;
    }
    fn phase(&mut self, phase: i32) {
        self.phase = phase;
    }
    fn add_danger(&mut self, side: usize, index: usize, n: i32) {
        add_sparse(&mut self.danger[side], index, n);
    }
    fn scale_down(&mut self, index: usize) {
        self.scale_down = Some(index as u32);
    }
}
