//! The tapered score `S(mg, eg)` and the phase that blends it.
//!
//! A term is worth one amount in the middlegame and another in the endgame; the two are blended
//! by the material still on the board (the "tapered eval" of Fruit and every engine since; the
//! pair type follows viridithas `score.rs`).

use std::ops::{Add, AddAssign, Mul, Neg, Sub, SubAssign};

/// A (middlegame, endgame) pair of centipawn values.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct S(pub i32, pub i32);

/// The phase of the opening position: rooks weigh 2, horses and cannons 1 each (2 * (4 + 2 + 2)).
///
/// A power of two on purpose: the tapered sum `(mg * phase + eg * (16 - phase)) / 16` then has a
/// fraction that is a multiple of 1/16, which `f32`/`f64` hold exactly, so the trace's dot
/// product reproduces the rounded evaluation exactly (no off-by-one at rounding boundaries).
pub const PHASE_MAX: i32 = 16;

/// Phase weight of one rook, horse and cannon.
pub const PHASE_ROOK: i32 = 2;
pub const PHASE_HORSE: i32 = 1;
pub const PHASE_CANNON: i32 = 1;

/// The denominator of a Jieqi dark piece's quantised pool weights (a power of two, so that the
/// fractional uses the trace records are exact binary fractions: see `eval::jieqi`).
pub const DARK_SCALE: i64 = 4096;

/// The divisor of the king-danger square: a side's attack weight `D` adds `max(D, 0)² /
/// DANGER_DIV` centipawns in the middlegame (a power of two, so the trace reproduces the
/// rounded evaluation exactly, as for [`PHASE_MAX`]).
pub const DANGER_DIV: i64 = 256;

/// The king-danger curve on integers: nothing below zero, the square above.
#[inline(always)]
pub fn danger_q(d: i64) -> i64 {
    let d = d.max(0);
    d * d
}

/// The final blend: middlegame and endgame sums `mg`, `eg` in units of `1 / unit` (1, or
/// `DARK_SCALE` for Jieqi's pool averages; a power of two), tapered at `phase`, plus the king
/// danger `danger = q(D_red) − q(D_black)` weighted by the phase, all rounded once (halves away
/// from zero, as `f64::round`, so the trace's f64 sum rounds to the same number).
#[inline(always)]
pub fn blend(mg: i64, eg: i64, phase: i32, unit: i64, danger: i64) -> i32 {
    let (n, d) = blend_parts(mg, eg, phase, unit, danger);
    round_div(n, d) as i32
}

/// [`blend`] before its rounding: the evaluation is `n / d` (`d > 0`), so that an endgame scale
/// can still multiply it before the one rounding.
#[inline(always)]
pub fn blend_parts(mg: i64, eg: i64, phase: i32, unit: i64, danger: i64) -> (i64, i64) {
    let den = unit.max(DANGER_DIV);
    let ph = phase as i64;
    let n =
        (mg * ph + eg * (PHASE_MAX as i64 - ph)) * (den / unit) + ph * danger * (den / DANGER_DIV);
    (n, PHASE_MAX as i64 * den)
}

/// The denominator of the endgame scale: a reduction `r` keeps `(SCALE_DIV − r) / SCALE_DIV`
/// of the evaluation (a power of two, so the trace stays exact, as for [`PHASE_MAX`]).
pub const SCALE_DIV: i64 = 64;

/// `n / d` rounded to nearest, halves away from zero (`d > 0`), as `f64::round` does.
#[inline(always)]
pub fn round_div(n: i64, d: i64) -> i64 {
    if n >= 0 {
        (2 * n + d) / (2 * d)
    } else {
        -((-2 * n + d) / (2 * d))
    }
}

impl S {
    pub const ZERO: S = S(0, 0);

    /// Blends the pair at `phase` (0 = bare endgame .. `PHASE_MAX` = all pieces), rounding half
    /// away from zero so that a colour-mirrored position gets exactly the negated score.
    #[inline(always)]
    pub fn taper(self, phase: i32) -> i32 {
        round_div_phase(self.0 * phase + self.1 * (PHASE_MAX - phase))
    }
}

/// `n / PHASE_MAX` rounded to nearest, halves away from zero (what `f64::round` does).
#[inline(always)]
pub fn round_div_phase(n: i32) -> i32 {
    const HALF: i32 = PHASE_MAX / 2;
    if n >= 0 {
        (n + HALF) / PHASE_MAX
    } else {
        -((-n + HALF) / PHASE_MAX)
    }
}

impl Add for S {
    type Output = S;
    #[inline(always)]
    fn add(self, o: S) -> S {
        S(self.0 + o.0, self.1 + o.1)
    }
}

impl AddAssign for S {
    #[inline(always)]
    fn add_assign(&mut self, o: S) {
        self.0 += o.0;
        self.1 += o.1;
    }
}

impl Sub for S {
    type Output = S;
    #[inline(always)]
    fn sub(self, o: S) -> S {
        S(self.0 - o.0, self.1 - o.1)
    }
}

impl SubAssign for S {
    #[inline(always)]
    fn sub_assign(&mut self, o: S) {
        self.0 -= o.0;
        self.1 -= o.1;
    }
}

impl Neg for S {
    type Output = S;
    #[inline(always)]
    fn neg(self) -> S {
        S(-self.0, -self.1)
    }
}

impl Mul<i32> for S {
    type Output = S;
    #[inline(always)]
    fn mul(self, k: i32) -> S {
        S(self.0 * k, self.1 * k)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn taper_rounds_like_f64_round() {
        for mg in -50..50 {
            for eg in -50..50 {
                for phase in 0..=PHASE_MAX {
                    let exact = (mg * phase + eg * (PHASE_MAX - phase)) as f64 / PHASE_MAX as f64;
                    assert_eq!(S(mg, eg).taper(phase), exact.round() as i32);
                    assert_eq!(S(-mg, -eg).taper(phase), -S(mg, eg).taper(phase));
                }
            }
        }
    }
}
