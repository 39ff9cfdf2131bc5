//! Match statistics the tuners need: Elo from a score, its error bar, likelihood of
//! superiority and the generalized SPRT log-likelihood ratio on game pairs.
//!
//! MINIMAL LOCAL VERSION: the match runner's `play::stats` will provide the same quantities;
//! these follow the same textbook formulas so the switch is mechanical.
//! The GSPRT approximation is Michel Van den Bergh's (used by fishtest):
//! `LLR ≈ N (s1 - s0) (2 s - s0 - s1) / (2 var)` over N pairs with per-pair score variance `var`.

use crate::play::MatchResult;
use serde::{Deserialize, Serialize};

/// Logistic Elo difference of an expected score.
pub fn elo_from_score(score: f64) -> f64 {
    let s = score.clamp(1e-6, 1.0 - 1e-6);
    -400.0 * (1.0 / s - 1.0).log10()
}

/// Expected score of a logistic Elo difference.
pub fn score_from_elo(elo: f64) -> f64 {
    1.0 / (1.0 + 10f64.powf(-elo / 400.0))
}

/// Standard normal CDF (Abramowitz-Stegun 7.1.26 erf approximation, error < 1.5e-7).
pub fn normal_cdf(x: f64) -> f64 {
    let z = x.abs() / std::f64::consts::SQRT_2;
    let t = 1.0 / (1.0 + 0.327_591_1 * z);
    let poly = t
        * (0.254_829_592
            + t * (-0.284_496_736
                + t * (1.421_413_741 + t * (-1.453_152_027 + t * 1.061_405_429))));
    let erf = 1.0 - poly * (-z * z).exp();
    if x >= 0.0 {
        0.5 * (1.0 + erf)
    } else {
        0.5 * (1.0 - erf)
    }
}

/// Summary of a match from the first engine's point of view.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct MatchStats {
    pub games: u32,
    pub wins: u32,
    pub draws: u32,
    pub losses: u32,
    pub pentanomial: [u32; 5],
    pub score: f64,
    pub elo: f64,
    /// Half-width of the 95% confidence interval, in Elo.
    pub elo_error: f64,
    /// Likelihood of superiority (probability that the true Elo is above zero).
    pub los: f64,
}

/// Adds `b` into `a`.
pub fn accumulate(a: &mut MatchResult, b: &MatchResult) {
    a.wins += b.wins;
    a.draws += b.draws;
    a.losses += b.losses;
    for i in 0..5 {
        a.pentanomial[i] += b.pentanomial[i];
    }
}

/// Mean score, per-sample variance and sample count: from the pentanomial counts when the
/// runner filled them (pairs cancel opening bias, so the variance is smaller), else per game.
fn mean_var(r: &MatchResult) -> (f64, f64, f64) {
    let pairs: u32 = r.pentanomial.iter().sum();
    if pairs > 0 {
        let n = pairs as f64;
        let mean = (0..5)
            .map(|i| r.pentanomial[i] as f64 * i as f64 / 4.0)
            .sum::<f64>()
            / n;
        let var = (0..5)
            .map(|i| r.pentanomial[i] as f64 * (i as f64 / 4.0 - mean).powi(2))
            .sum::<f64>()
            / n;
        (mean, var, n)
    } else {
        let n = r.games().max(1) as f64;
        let mean = r.score();
        let var = (r.wins as f64 * (1.0 - mean).powi(2)
            + r.draws as f64 * (0.5 - mean).powi(2)
            + r.losses as f64 * mean.powi(2))
            / n;
        (mean, var, n)
    }
}

pub fn match_stats(r: &MatchResult) -> MatchStats {
    let (mean, var, n) = mean_var(r);
    let se = (var / n).sqrt();
    let elo = elo_from_score(mean);
    let lo = elo_from_score(mean - 1.96 * se);
    let hi = elo_from_score(mean + 1.96 * se);
    let los = if se > 0.0 {
        normal_cdf((mean - 0.5) / se)
    } else if mean > 0.5 {
        1.0
    } else if mean < 0.5 {
        0.0
    } else {
        0.5
    };
    MatchStats {
        games: r.games(),
        wins: r.wins,
        draws: r.draws,
        losses: r.losses,
        pentanomial: r.pentanomial,
        score: mean,
        elo,
        elo_error: (hi - lo) / 2.0,
        los,
    }
}

/// SPRT bounds and state for H0: elo = elo0 against H1: elo = elo1.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct Sprt {
    pub elo0: f64,
    pub elo1: f64,
    pub alpha: f64,
    pub beta: f64,
}

#[derive(Clone, Copy, Debug, Serialize, Deserialize, PartialEq, Eq)]
pub enum SprtVerdict {
    AcceptH1,
    AcceptH0,
    Continue,
}

impl Sprt {
    pub fn lower(&self) -> f64 {
        (self.beta / (1.0 - self.alpha)).ln()
    }

    pub fn upper(&self) -> f64 {
        ((1.0 - self.beta) / self.alpha).ln()
    }

    /// Generalized SPRT log-likelihood ratio of the results so far.
    pub fn llr(&self, r: &MatchResult) -> f64 {
        let (mean, var, n) = mean_var(r);
        if n < 2.0 || var <= 0.0 {
            return 0.0;
        }
        let s0 = score_from_elo(self.elo0);
        let s1 = score_from_elo(self.elo1);
        n * (s1 - s0) * (2.0 * mean - s0 - s1) / (2.0 * var)
    }

    pub fn verdict(&self, r: &MatchResult) -> SprtVerdict {
        let llr = self.llr(r);
        if llr >= self.upper() {
            SprtVerdict::AcceptH1
        } else if llr <= self.lower() {
            SprtVerdict::AcceptH0
        } else {
            SprtVerdict::Continue
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn elo_score_round_trip() {
        assert!(elo_from_score(0.5).abs() < 1e-9);
        for e in [-300.0, -50.0, 0.0, 10.0, 200.0] {
            assert!((elo_from_score(score_from_elo(e)) - e).abs() < 1e-6);
        }
        assert!((elo_from_score(0.75) - 190.85).abs() < 0.01);
        assert!((normal_cdf(0.0) - 0.5).abs() < 1e-7);
        assert!((normal_cdf(1.96) - 0.975).abs() < 1e-4);
    }

    #[test]
    fn stats_and_sprt() {
        // 100 pairs: strongly positive
        let r = MatchResult {
            wins: 120,
            draws: 50,
            losses: 30,
            pentanomial: [2, 8, 30, 40, 20],
        };
        let s = match_stats(&r);
        assert!(s.elo > 50.0 && s.elo_error > 0.0 && s.los > 0.99);
        let sprt = Sprt {
            elo0: 0.0,
            elo1: 10.0,
            alpha: 0.05,
            beta: 0.05,
        };
        assert!(sprt.llr(&r) > sprt.upper());
        assert_eq!(sprt.verdict(&r), SprtVerdict::AcceptH1);
        let bad = MatchResult {
            wins: 30,
            draws: 50,
            losses: 120,
            pentanomial: [20, 40, 30, 8, 2],
        };
        assert_eq!(sprt.verdict(&bad), SprtVerdict::AcceptH0);
        // per-game fallback when the runner has no pairs
        let g = MatchResult {
            wins: 10,
            draws: 0,
            losses: 10,
            pentanomial: [0; 5],
        };
        let s = match_stats(&g);
        assert!(s.elo.abs() < 1e-9 && (s.los - 0.5).abs() < 1e-6);
    }
}
