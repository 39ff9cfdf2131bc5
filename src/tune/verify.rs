//! Games between parameter sets: parallel game pairs on shared openings through the match
//! runner, and the closing verification match of the tuned set against the start (SPRT by
//! default; Elo and SPRT come from `play::stats`).

use super::TuneError;
use super::common::{CommonSettings, VerifyMode, untuned_defaults};
use super::space::ParamSet;
use super::stop::stop_requested;
use crate::eval::nnue::Network;
use crate::play::game::GameRecord;
use crate::play::ratings::{Anchor, PairingGames, rating_list};
use crate::play::stats::{MatchStats, SprtConfig, SprtVerdict};
use crate::play::{Engine, MatchConfig, MatchResult, run_matches};
use crate::util::mix;
use serde::{Deserialize, Serialize};

/// A tally and its games, in the order played.
pub type Tallied = (MatchResult, Vec<GameRecord>);

/// Plays game pairs `pairs` (each pair: one opening, colours swapped) of `a` against `b` in
/// parallel. Pair `j` uses seed `mix(seed, [j])`: every engine evaluated with the same `seed`
/// meets the same openings, so opening luck cancels between individuals (common random numbers).
pub fn play_pairs(
    a: &Engine,
    b: &Engine,
    pairs: std::ops::Range<u64>,
    seed: u64,
    common: &CommonSettings,
) -> Result<MatchResult, TuneError> {
    Ok(play_pairs_games(a, b, pairs, seed, common)?.0)
}

/// [`play_pairs`] with the games, pair by pair in order (for `tune spsa --save-games`).
pub fn play_pairs_games(
    a: &Engine,
    b: &Engine,
    pairs: std::ops::Range<u64>,
    seed: u64,
    common: &CommonSettings,
) -> Result<Tallied, TuneError> {
    let jobs: Vec<(&Engine, &Engine, MatchConfig)> = pairs
        .map(|j| (a, b, common.match_config(mix(seed, &[j]))))
        .collect();
    let mut result = MatchResult::default();
    let mut games = Vec::new();
    let played = run_matches(&jobs, common.threads())?;
    for (r, g) in played {
        result += r;
        games.extend(g);
    }
    Ok((result, games))
}

/// Each of `sides` plays game pairs `pairs` against the opponents of `pool`: pair `j` meets
/// opponent `(offset + j) mod pool.len()` on pair `j`'s opening (seed `mix(seed, [j])`), the
/// same for every side, so the sides differ only in themselves (common random numbers), and a
/// run that moves `offset` on by the pairs it plays meets every opponent equally often. All the
/// games are one executor call. Returns, for each side and each opponent, the result and games.
pub fn play_against_pool(
    sides: &[&Engine],
    pool: &[Engine],
    pairs: std::ops::Range<u64>,
    offset: u64,
    seed: u64,
    common: &CommonSettings,
) -> Result<Vec<Vec<Tallied>>, TuneError> {
    let m = pool.len().max(1) as u64;
    let mut jobs: Vec<(&Engine, &Engine, MatchConfig)> = Vec::new();
    let mut owner = Vec::new();
    for (s, side) in sides.iter().enumerate() {
        for j in pairs.clone() {
            let o = (offset.wrapping_add(j) % m) as usize;
            jobs.push((side, &pool[o], common.match_config(mix(seed, &[j]))));
            owner.push((s, o));
        }
    }
    let played = run_matches(&jobs, common.threads())?;
    let mut out: Vec<Vec<Tallied>> = sides
        .iter()
        .map(|_| pool.iter().map(|_| Default::default()).collect())
        .collect();
    for ((s, o), (r, g)) in owner.into_iter().zip(played) {
        out[s][o].0 += r;
        out[s][o].1.extend(g);
    }
    Ok(out)
}

/// The closing match's outcome, as written to `verification.json`.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Verification {
    pub mode: VerifyMode,
    pub stats: MatchStats,
    pub llr: f64,
    pub llr_lower: f64,
    pub llr_upper: f64,
    pub verdict: String,
    /// True when the tuned set is shown stronger than the start (SPRT accepted H1, or the 95%
    /// interval of a fixed match lies above zero).
    pub significant: bool,
    pub nodes: Option<u64>,
    pub depth: Option<u32>,
    /// With opponents: the tuned set and the start against the pool (written only then, so
    /// earlier files read and look as before).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pool: Option<PoolVerification>,
}

/// One opponent of the pool in the verification.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct PoolOpponent {
    pub name: String,
    /// The tuned set's and the start's results against it.
    pub tuned: MatchStats,
    pub start: MatchStats,
}

/// The tuned set and the start each against the pool of opponents, on the same openings and
/// the same opponents pair for pair, and the two rated together with the pool
/// (`play::ratings`, the start at 0): `elo` is the tuned set's rating over the start through
/// the pool, with its 95 % bootstrap interval.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct PoolVerification {
    pub opponents: Vec<PoolOpponent>,
    /// Against the whole pool.
    pub tuned: MatchStats,
    pub start: MatchStats,
    /// `None` when the games gave no rating (every game stopped).
    pub elo: Option<f64>,
    pub lower: Option<f64>,
    pub upper: Option<f64>,
}

/// `MatchStats` whose Elo stays a number in JSON: a perfect score's infinite Elo becomes the
/// finite one of a score of 1e-6 or 1 - 1e-6 (JSON has no infinity, and a `null` would not
/// read back).
fn finite(r: &MatchResult) -> MatchStats {
    let mut s = MatchStats::from(r);
    if !s.elo.is_finite() {
        s.elo = crate::play::stats::score_to_finite_elo(s.score);
    }
    s
}

impl PoolVerification {
    pub fn summary(&self) -> String {
        let rating = match (self.elo, self.lower, self.upper) {
            (Some(e), Some(l), Some(u)) => format!("{:+.1} Elo [{l:+.1}, {u:+.1}]", e + 0.0),
            _ => "no rating".to_string(),
        };
        format!(
            "{rating} over the start through {} opponents ({} games each: tuned scored \
             {:.1}%, start {:.1}%)",
            self.opponents.len(),
            self.tuned.games,
            100.0 * (self.tuned.wins as f64 + 0.5 * self.tuned.draws as f64)
                / (self.tuned.games.max(1) as f64),
            100.0 * (self.start.wins as f64 + 0.5 * self.start.draws as f64)
                / (self.start.games.max(1) as f64),
        )
    }
}

impl Verification {
    /// One short line for plots: Elo, error, games and whether it is significant.
    pub fn short(&self) -> String {
        let s = &self.stats;
        format!(
            "{:+.1} ± {:.1} Elo over {} games ({}): {}",
            s.elo + 0.0,
            s.elo_error,
            s.games,
            match self.mode {
                VerifyMode::Sprt => "SPRT",
                _ => "fixed",
            },
            if self.significant {
                "significant gain"
            } else {
                "no significant gain"
            }
        )
    }

    pub fn summary(&self) -> String {
        let s = &self.stats;
        format!(
            "{:+.1} ± {:.1} Elo over {} games (W{} D{} L{}, LOS {:.1}%): {}",
            s.elo + 0.0,
            s.elo_error,
            s.games,
            s.wins,
            s.draws,
            s.losses,
            s.los * 100.0,
            self.verdict
        )
    }
}

/// Where the 95% interval of `st` lies against zero.
fn interval_text(st: &MatchStats) -> &'static str {
    if !st.elo_error.is_finite() {
        "is unbounded (a one-sided result: too few games to bound it)"
    } else if st.above_zero() {
        "lies above zero"
    } else if st.below_zero() {
        "lies below zero"
    } else {
        "includes zero"
    }
}

/// A fixed match's verdict and whether it shows a gain: only where the 95% interval lies
/// wholly above zero.
fn fixed_verdict(st: &MatchStats) -> (String, bool) {
    let sig = st.above_zero();
    let text = format!(
        "the 95% interval {}: {}",
        interval_text(st),
        if sig {
            "the gain is significant"
        } else if st.below_zero() {
            "the tuned side is significantly weaker"
        } else {
            "no significant gain"
        }
    );
    (text, sig)
}

/// Tuned against start: SPRT (elo0, elo1, alpha = beta = 0.05) checked after every batch of
/// pairs, or a fixed number of games. Returns `None` with `--verify none` (or when stopped
/// before any game).
pub fn verify(
    tuned: &ParamSet,
    start: &ParamSet,
    common: &CommonSettings,
) -> Result<Option<Verification>, TuneError> {
    if common.verify == VerifyMode::None || common.verify_games < 2 {
        return Ok(None);
    }
    let other = untuned_defaults(tuned.kind());
    let a = tuned.player("tuned", &other)?;
    let b = start.player("start", &other)?;
    let Some(mut v) = verify_engines(&a, &b, common)? else {
        return Ok(None);
    };
    let pool = common.opponents()?;
    if !pool.is_empty() && !stop_requested() {
        v.pool = Some(verify_pool(&a, &b, &pool, common)?);
    }
    Ok(Some(v))
}

/// The tuned set (`a`) and the start (`b`) each over `--verify-games` games against the
/// pool (see [`PoolVerification`]).
pub fn verify_pool(
    a: &Engine,
    b: &Engine,
    pool: &[Engine],
    common: &CommonSettings,
) -> Result<PoolVerification, TuneError> {
    let total_pairs = (common.verify_games / 2).max(1) as u64;
    let batch = (crate::exec::slots(common.threads()) as u64).max(2);
    let seed = mix(common.seed, &[0x9001]);
    let bar = crate::progress::Progress::new(
        total_pairs * 4,
        0,
        "verify vs pool {bar:30} {pos}/{len} games",
        "verify vs pool",
    );
    let mut results = vec![vec![MatchResult::default(); pool.len()]; 2];
    let mut done = 0u64;
    while done < total_pairs && !stop_requested() {
        let end = (done + batch).min(total_pairs);
        let played = play_against_pool(&[a, b], pool, done..end, 0, seed, common)?;
        for (s, side) in played.into_iter().enumerate() {
            for (o, (r, _)) in side.into_iter().enumerate() {
                results[s][o] += r;
            }
        }
        done = end;
        bar.set_position(done * 4);
    }
    bar.finish_and_clear();
    // Rated together: tuned 0, start 1, the opponents from 2, the start at 0 Elo.
    let mut names = vec![a.name().to_string(), b.name().to_string()];
    names.extend(pool.iter().map(|e| e.name().to_string()));
    // (Pentanomial counts give the pair units; a lone game (odd --verify-games) counts alone.)
    let units = |r: &MatchResult| -> Vec<(f64, f64)> {
        let mut u: Vec<(f64, f64)> = r
            .pentanomial
            .iter()
            .enumerate()
            .flat_map(|(k, &c)| std::iter::repeat_n((k as f64 / 2.0, 2.0), c as usize))
            .collect();
        let paired = 2 * r.pairs();
        let lone = r.games().saturating_sub(paired);
        if lone > 0 {
            let pts = r.wins as f64 + 0.5 * r.draws as f64 - u.iter().map(|x| x.0).sum::<f64>();
            u.push((pts, lone as f64));
        }
        u
    };
    let pairings: Vec<PairingGames> = (0..2)
        .flat_map(|s| {
            let results = &results;
            (0..pool.len()).map(move |o| PairingGames {
                a: s,
                b: 2 + o,
                units: units(&results[s][o]),
            })
        })
        .collect();
    let list = rating_list(
        &names,
        &pairings,
        &Anchor::Engine { index: 1, elo: 0.0 },
        1000,
        seed,
    );
    let tuned_rating = list
        .as_ref()
        .and_then(|l| l.engines.iter().find(|e| e.index == 0).cloned());
    let sum = |s: usize| {
        let mut t = MatchResult::default();
        for r in &results[s] {
            t += *r;
        }
        finite(&t)
    };
    Ok(PoolVerification {
        opponents: pool
            .iter()
            .enumerate()
            .map(|(o, e)| PoolOpponent {
                name: e.name().to_string(),
                tuned: finite(&results[0][o]),
                start: finite(&results[1][o]),
            })
            .collect(),
        tuned: sum(0),
        start: sum(1),
        elo: tuned_rating.as_ref().map(|e| e.rating),
        lower: tuned_rating.as_ref().map(|e| e.lower),
        upper: tuned_rating.as_ref().map(|e| e.upper),
    })
}

/// A trained network against the classical evaluation (or against `baseline`), both with the
/// start's parameters for everything else: the verification of `tune nnue`.
pub fn verify_network(
    tuned: &Network,
    baseline: Option<&Network>,
    start: &ParamSet,
    common: &CommonSettings,
) -> Result<Option<Verification>, TuneError> {
    if common.verify == VerifyMode::None || common.verify_games < 2 {
        return Ok(None);
    }
    let other = untuned_defaults(start.kind());
    let with_net = |name: &str, net: Option<&Network>| -> Result<Engine, TuneError> {
        let e = start.player(name, &other)?;
        Ok(match (e, net) {
            (Engine::Internal(mut c), Some(n)) => {
                c.network = Some(std::sync::Arc::new(n.clone()));
                Engine::Internal(c)
            }
            (e, _) => e,
        })
    };
    let a = with_net("nnue", Some(tuned))?;
    let b = with_net(
        if baseline.is_some() {
            "baseline"
        } else {
            "classical"
        },
        baseline,
    )?;
    verify_engines(&a, &b, common)
}

/// `a` (the tuned side) against `b`: SPRT or a fixed number of games, as `common` says.
pub fn verify_engines(
    a: &Engine,
    b: &Engine,
    common: &CommonSettings,
) -> Result<Option<Verification>, TuneError> {
    let sprt = SprtConfig {
        elo0: common.elo0,
        elo1: common.elo1,
        alpha: 0.05,
        beta: 0.05,
    };
    let total_pairs = (common.verify_games / 2).max(1) as u64;
    let batch = (crate::exec::slots(common.threads()) as u64 * 2).max(4);
    let seed = mix(common.seed, &[0x7e51f1]);
    let bar = crate::progress::Progress::new(
        total_pairs * 2,
        0,
        "verify {bar:30} {pos}/{len} games {msg}",
        "verify",
    );
    let mut total = MatchResult::default();
    let mut done = 0u64;
    let mut verdict = SprtVerdict::Continue;
    while done < total_pairs {
        let end = (done + batch).min(total_pairs);
        let r = play_pairs(a, b, done..end, seed, common)?;
        total += r;
        done = end;
        let st = MatchStats::from(&total);
        bar.set(
            done * 2,
            format!("{:+.1} ± {:.1} Elo", st.elo, st.elo_error),
        );
        if common.verify == VerifyMode::Sprt {
            verdict = sprt.status(&total).verdict;
            if verdict != SprtVerdict::Continue {
                break;
            }
        }
        if stop_requested() {
            break;
        }
    }
    bar.finish_and_clear();
    let st = MatchStats::from(&total);
    let status = sprt.status(&total);
    let llr = status.llr;
    let (verdict_text, significant) = match common.verify {
        VerifyMode::Sprt => match verdict {
            SprtVerdict::H1 => (
                format!(
                    "SPRT accepted H1 (elo1 = {}): the gain is significant",
                    common.elo1
                ),
                true,
            ),
            SprtVerdict::H0 => (
                format!(
                    "SPRT accepted H0 (elo0 = {}): no significant gain",
                    common.elo0
                ),
                false,
            ),
            SprtVerdict::Continue => (
                format!(
                    "SPRT inconclusive after {} games (LLR {llr:.2} in [{:.2}, {:.2}]); \
                     the 95% interval {}",
                    st.games,
                    status.lower,
                    status.upper,
                    interval_text(&st)
                ),
                false,
            ),
        },
        _ => fixed_verdict(&st),
    };
    Ok(Some(Verification {
        mode: common.verify,
        stats: st,
        llr,
        llr_lower: status.lower,
        llr_upper: status.upper,
        verdict: verdict_text,
        significant,
        nodes: common.match_config(0).nodes,
        depth: common.depth,
        pool: None,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::Variant;
    use crate::tune::common::CommonArgs;
    use crate::tune::space::SpaceKind;

    #[derive(clap::Parser)]
    struct T {
        #[command(flatten)]
        a: CommonArgs,
    }

    /// A fixed match won game for game has no bounded interval: it is no significant gain
    /// (the error bar was once written as 0, and `+inf ± 0` passed), nor is one lost so a
    /// significant loss; a bounded interval above zero is a gain.
    #[test]
    fn a_one_sided_fixed_match_is_not_significant() {
        let of = |w, l, d, p| {
            MatchStats::from(&MatchResult {
                wins: w,
                losses: l,
                draws: d,
                pentanomial: p,
            })
        };
        let (text, sig) = fixed_verdict(&of(4, 0, 0, [0, 0, 0, 0, 2]));
        assert!(!sig, "{text}");
        assert_eq!(
            text,
            "the 95% interval is unbounded (a one-sided result: too few games to bound it): \
             no significant gain"
        );
        let (text, sig) = fixed_verdict(&of(0, 4, 0, [2, 0, 0, 0, 0]));
        assert!(!sig && text.ends_with("no significant gain"), "{text}");
        let (text, sig) = fixed_verdict(&of(240, 60, 100, [4, 16, 60, 80, 40]));
        assert!(sig, "{text}");
        assert_eq!(
            text,
            "the 95% interval lies above zero: the gain is significant"
        );
        let (text, sig) = fixed_verdict(&of(60, 240, 100, [40, 80, 60, 16, 4]));
        assert!(!sig && text.ends_with("significantly weaker"), "{text}");
    }

    /// `--variant jieqi`: the tuners' games (and so the verification match) are seeded deals,
    /// a different deal for every pair seed; the variant is recorded, and a config.json written
    /// before the field existed reads as Xiangqi.
    #[test]
    fn jieqi_runs_play_seeded_deals() {
        use clap::Parser;
        let common = CommonSettings::from(
            &T::parse_from([
                "t",
                "--variant",
                "jieqi",
                "--depth",
                "1",
                "--concurrency",
                "2",
            ])
            .a,
        );
        assert_eq!(common.variant, Variant::Jieqi);
        let start = ParamSet::default_of(SpaceKind::Eval);
        let other = untuned_defaults(SpaceKind::Eval);
        let a = start.player("a", &other).unwrap();
        let b = start.player("b", &other).unwrap();
        let (r, games) = play_pairs_games(&a, &b, 0..2, 5, &common).unwrap();
        assert_eq!(r.games(), 4);
        let deals: Vec<u64> = games.iter().map(|g| g.deal_seed.unwrap()).collect();
        assert_eq!(deals[0], deals[1], "a pair plays one deal twice");
        assert_ne!(deals[0], deals[2], "pairs get their own deals");
        for g in &games {
            let start = crate::core::Position::from_fen(&g.opening_fen).unwrap();
            assert_eq!(start.variant(), Variant::Jieqi);
        }
        let mut json = serde_json::to_value(&common).unwrap();
        assert_eq!(json["variant"], "jieqi");
        json.as_object_mut().unwrap().remove("variant");
        let old: CommonSettings = serde_json::from_value(json).unwrap();
        assert_eq!(old.variant, Variant::Xiangqi);
        let (_, xiangqi) = play_pairs_games(&a, &b, 0..1, 5, &old).unwrap();
        assert!(xiangqi.iter().all(|g| g.deal_seed.is_none()));
    }
}
