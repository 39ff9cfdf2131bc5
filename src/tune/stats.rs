//! Match statistics as the tuners record them: a serialisable summary and the SPRT verdict.
//! Every number comes from the match runner's `play::stats` (cutechess / fastchess / fishtest
//! formulas); this module only picks the pair-based figures when the games were paired.

use crate::play::MatchResult;
use crate::play::stats::{
    SprtConfig, SprtVerdict as PlaySprtVerdict, elo_to_score, erf, score_to_elo,
};
use serde::{Deserialize, Serialize};

/// Logistic Elo difference of an expected score.
pub fn elo_from_score(score: f64) -> f64 {
    score_to_elo(score.clamp(1e-6, 1.0 - 1e-6))
}

/// Expected score of a logistic Elo difference.
pub fn score_from_elo(elo: f64) -> f64 {
    elo_to_score(elo)
}

/// Standard normal CDF.
pub fn normal_cdf(x: f64) -> f64 {
    0.5 * (1.0 + erf(x / std::f64::consts::SQRT_2))
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

/// Elo and error bar from the pairs when the runner paired the games (pairs cancel opening
/// bias, so the variance is smaller), else per game.
pub fn match_stats(r: &MatchResult) -> MatchStats {
    let paired = r.pairs() > 0;
    let (elo, elo_error) = if paired {
        (r.penta_elo(), r.penta_elo_error())
    } else {
        (r.elo(), r.elo_error())
    };
    MatchStats {
        games: r.games(),
        wins: r.wins,
        draws: r.draws,
        losses: r.losses,
        pentanomial: r.pentanomial,
        score: if paired {
            score_from_elo(elo)
        } else {
            r.score()
        },
        elo,
        elo_error: if elo_error.is_finite() {
            elo_error
        } else {
            0.0
        },
        los: r.los(),
    }
}

/// SPRT bounds for H0: elo = elo0 against H1: elo = elo1.
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
    fn config(&self) -> SprtConfig {
        SprtConfig {
            elo0: self.elo0,
            elo1: self.elo1,
            alpha: self.alpha,
            beta: self.beta,
        }
    }

    pub fn lower(&self) -> f64 {
        self.config().lower_bound()
    }

    pub fn upper(&self) -> f64 {
        self.config().upper_bound()
    }

    /// Pentanomial GSPRT log-likelihood ratio of the results so far.
    pub fn llr(&self, r: &MatchResult) -> f64 {
        r.llr(self.elo0, self.elo1)
    }

    pub fn verdict(&self, r: &MatchResult) -> SprtVerdict {
        match self.config().status(r).verdict {
            PlaySprtVerdict::H1 => SprtVerdict::AcceptH1,
            PlaySprtVerdict::H0 => SprtVerdict::AcceptH0,
            PlaySprtVerdict::Continue => SprtVerdict::Continue,
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
        // 200 pairs: strongly positive
        let r = MatchResult {
            wins: 240,
            draws: 100,
            losses: 60,
            pentanomial: [4, 16, 60, 80, 40],
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
            wins: 60,
            draws: 100,
            losses: 240,
            pentanomial: [40, 80, 60, 16, 4],
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
