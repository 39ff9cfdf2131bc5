//! `xqtune compare`: two matches against the same opponent, game by game.
//!
//! Two engines that each played the same opponent from the same openings with the same colours
//! (the same `--seed`, `--openings` and `--games`) can be compared far more tightly than by their
//! two Elo figures: a game of one and the game of the other from the same opening and colour
//! share most of their luck (an opening lost for both, or won for both), so the difference of
//! their results is what the engines' difference made. The statistic is the mean difference of
//! the paired games' scores; its 95 % interval is taken over the openings (the games of one
//! opening, both colours, are one cluster, as the pentanomial model takes a game pair), so it is
//! honest where the games of an opening are correlated.

use super::game::GameRecord;
use super::journal::Journal;
use super::resume::read_config;
use super::stats::{MatchResult, Z95, score_to_elo};
use anyhow::{Context, Result, bail};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// `xqtune compare`.
#[derive(clap::Args, Debug)]
pub struct CompareArgs {
    /// The run folder of a match (its engine A is the one compared).
    pub first: PathBuf,
    /// The run folder of a match against the same opponent from the same openings (its engine
    /// A is the reference).
    pub second: PathBuf,
}

/// Engine A's games of one match as the comparison needs them.
#[derive(Clone, Debug, PartialEq)]
pub struct Played {
    /// The opening (its FEN, moves and, in Jieqi, the deal): the cluster of the statistic.
    pub opening: String,
    pub a_is_red: bool,
    /// A's score: 1, 0.5 or 0.
    pub score: f64,
    pub a_name: String,
    pub opponent: String,
}

impl Played {
    /// The comparison's view of a game of the journal.
    pub fn of(record: &GameRecord) -> Played {
        let opening =
            serde_json::to_string(&(&record.opening_fen, &record.opening_moves, record.deal_seed))
                .expect("an opening serialises");
        let (a_name, opponent) = if record.a_is_red {
            (&record.red, &record.black)
        } else {
            (&record.black, &record.red)
        };
        Played {
            opening,
            a_is_red: record.a_is_red,
            score: record.score_a(),
            a_name: a_name.clone(),
            opponent: opponent.clone(),
        }
    }
}

/// The comparison of two matches' paired games.
#[derive(Clone, Debug, PartialEq)]
pub struct Paired {
    /// Games paired (the same opening and colour in both matches).
    pub games: usize,
    /// Openings among them (the clusters of the interval).
    pub openings: usize,
    /// Games of each match left without a partner.
    pub unpaired: [usize; 2],
    /// Each match's results over the paired games (wins, draws and losses; no pairs).
    pub results: [MatchResult; 2],
    /// Paired games where the first match's result was better, the same, worse.
    pub better: usize,
    pub same: usize,
    pub worse: usize,
    /// The mean score difference (first − second, per game) and the half-width of its 95 %
    /// interval over the openings (infinite with fewer than two openings).
    pub diff: f64,
    pub diff_error: f64,
    /// The opponents' names (first, second) where those of paired games differ: the same
    /// engine may be named differently by two runs, so this is reported, not refused.
    pub opponents: Vec<(String, String)>,
}

impl Paired {
    /// The difference in logistic Elo (each match's score as Elo against the opponent), and the
    /// interval's half-width carried over at the two scores' mean (the delta method).
    pub fn elo(&self) -> (f64, f64) {
        let (a, b) = (self.results[0].score(), self.results[1].score());
        let mid = (a + b) / 2.0;
        let slope = 400.0 / (std::f64::consts::LN_10 * mid * (1.0 - mid));
        // no spread is no interval, even where the scores are 0 or 1 (an infinite slope)
        let error = if self.diff_error == 0.0 {
            0.0
        } else {
            slope * self.diff_error
        };
        (score_to_elo(a) - score_to_elo(b), error)
    }
}

/// Pairs the games of two matches by opening and colour (games that share both are paired in
/// their order) and compares them.
pub fn compare(first: &[Played], second: &[Played]) -> Result<Paired> {
    /// The games by opening and colour, in their order.
    fn group(games: &[Played]) -> BTreeMap<(&str, bool), Vec<&Played>> {
        let mut m: BTreeMap<(&str, bool), Vec<&Played>> = BTreeMap::new();
        for g in games {
            m.entry((g.opening.as_str(), g.a_is_red))
                .or_default()
                .push(g);
        }
        m
    }
    let (mut one, two) = (group(first), group(second));
    let mut results = [MatchResult::default(); 2];
    let (mut better, mut same, mut worse) = (0, 0, 0);
    // per opening: the summed difference and the games
    let mut clusters: BTreeMap<&str, (f64, usize)> = BTreeMap::new();
    let mut paired = 0;
    let mut opponents = Vec::new();
    for (key, b_games) in &two {
        let Some(a_games) = one.get_mut(key) else {
            continue;
        };
        let n = a_games.len().min(b_games.len());
        for (a, b) in a_games.drain(..n).zip(b_games) {
            let names = (a.opponent.clone(), b.opponent.clone());
            if names.0 != names.1 && !opponents.contains(&names) {
                opponents.push(names);
            }
            results[0].add_game(a.score);
            results[1].add_game(b.score);
            let d = a.score - b.score;
            if d > 0.0 {
                better += 1;
            } else if d < 0.0 {
                worse += 1;
            } else {
                same += 1;
            }
            let c = clusters.entry(key.0).or_default();
            c.0 += d;
            c.1 += 1;
            paired += 1;
        }
    }
    if paired == 0 {
        bail!(
            "no game of the first match has the opening and colour of a game of the second \
             (were both played with the same --seed, --openings and --games?)"
        );
    }
    let n = paired as f64;
    let diff = clusters.values().map(|c| c.0).sum::<f64>() / n;
    let k = clusters.len();
    let diff_error = if k < 2 {
        f64::INFINITY
    } else {
        let spread: f64 = clusters
            .values()
            .map(|&(sum, games)| (sum - diff * games as f64).powi(2))
            .sum();
        Z95 * (spread * k as f64 / (k - 1) as f64).sqrt() / n
    };
    Ok(Paired {
        games: paired,
        openings: k,
        unpaired: [first.len() - paired, second.len() - paired],
        results,
        better,
        same,
        worse,
        diff,
        diff_error,
        opponents,
    })
}

/// Engine A's games in the run folder of a match, and its opponent's command line (`None`: the
/// engine in process).
fn read_run(dir: &Path) -> Result<(Vec<Played>, Option<String>)> {
    let config = read_config(dir)?;
    let path = dir.join("games.jsonl");
    let games = Journal::read(&path)
        .with_context(|| format!("{} holds no readable games", dir.display()))?;
    if games.is_empty() {
        bail!("{} has no finished game", path.display());
    }
    Ok((
        games.iter().map(|(_, g)| Played::of(g)).collect(),
        config.args.b_cmd,
    ))
}

/// `x` with its sign, `digits` after the point (`+inf`, `-inf` where a score is 0 or 1, `n/a`
/// for the difference of two such).
fn signed(x: f64, digits: usize) -> String {
    if x.is_nan() {
        "n/a".to_string()
    } else if x.is_finite() {
        format!("{x:+.digits$}")
    } else if x > 0.0 {
        "+inf".to_string()
    } else {
        "-inf".to_string()
    }
}

/// `xqtune compare FIRST SECOND`: prints the comparison.
pub fn run_compare(args: &CompareArgs) -> Result<Paired> {
    let (first, first_cmd) = read_run(&args.first)?;
    let (second, second_cmd) = read_run(&args.second)?;
    let p = compare(&first, &second)?;
    for (a, b) in &p.opponents {
        let cmd = |c: &Option<String>| c.clone().unwrap_or_else(|| "in process".into());
        eprintln!(
            "note: the opponent is named '{a}' in the first match and '{b}' in the second \
             (commands: {} and {}); the comparison assumes they are the same engine",
            cmd(&first_cmd),
            cmd(&second_cmd)
        );
    }
    let name = |games: &[Played]| games[0].a_name.clone();
    println!(
        "{} ({}) against {} ({}), both against {}",
        args.first.display(),
        name(&first),
        args.second.display(),
        name(&second),
        second[0].opponent
    );
    println!(
        "paired games: {} over {} openings (unpaired: {} of the first, {} of the second)",
        p.games, p.openings, p.unpaired[0], p.unpaired[1]
    );
    for (i, label) in ["first", "second"].iter().enumerate() {
        let r = p.results[i];
        println!(
            "{label}: W{} L{} D{}, {:.1} %, Elo {} against the opponent",
            r.wins,
            r.losses,
            r.draws,
            100.0 * r.score(),
            signed(score_to_elo(r.score()), 1)
        );
    }
    println!(
        "game by game: the first better in {}, the same in {}, worse in {}",
        p.better, p.same, p.worse
    );
    let (elo, elo_error) = p.elo();
    println!(
        "difference: {} ± {} % (95 %, over the openings), about {} ± {} Elo",
        signed(100.0 * p.diff, 1),
        signed(100.0 * p.diff_error, 1).trim_start_matches('+'),
        signed(elo, 0),
        signed(elo_error, 0).trim_start_matches('+')
    );
    Ok(p)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn played(opening: usize, a_is_red: bool, score: f64) -> Played {
        Played {
            opening: format!("opening {opening}"),
            a_is_red,
            score,
            a_name: "a".into(),
            opponent: "x".into(),
        }
    }

    /// Two games (both colours) from each opening, with A's scores.
    fn games(scores: &[(f64, f64)]) -> Vec<Played> {
        scores
            .iter()
            .enumerate()
            .flat_map(|(i, &(red, black))| [played(i, true, red), played(i, false, black)])
            .collect()
    }

    #[test]
    fn paired_games_give_the_mean_difference_and_its_spread_over_the_openings() {
        let first = games(&[(1.0, 0.5), (0.5, 0.5), (1.0, 0.0)]);
        let second = games(&[(0.5, 0.5), (0.5, 0.0), (0.0, 0.0)]);
        let p = compare(&first, &second).unwrap();
        assert_eq!((p.games, p.openings, p.unpaired), (6, 3, [0, 0]));
        let wld = |r: &MatchResult| (r.wins, r.losses, r.draws);
        assert_eq!(
            (wld(&p.results[0]), wld(&p.results[1])),
            ((2, 1, 3), (0, 3, 3))
        );
        assert_eq!((p.better, p.same, p.worse), (3, 3, 0));
        // per opening the summed differences are 0.5, 0.5 and 1 (mean 1/3 per game)
        assert!((p.diff - 2.0 / 6.0).abs() < 1e-12);
        // spread: (0.5 - 2/3)² · 2 + (1 - 2/3)² = 1/6; · 3/2 = 1/4; sqrt = 1/2; / 6 games
        assert!((p.diff_error - Z95 * 0.5 / 6.0).abs() < 1e-12, "{p:?}");
        let (elo, _) = p.elo();
        assert!((elo - (score_to_elo(7.0 / 12.0) - score_to_elo(3.0 / 12.0))).abs() < 1e-9);
    }

    #[test]
    fn the_same_games_differ_by_nothing() {
        let g = games(&[(1.0, 0.0), (0.5, 1.0)]);
        let p = compare(&g, &g).unwrap();
        assert_eq!((p.diff, p.diff_error), (0.0, 0.0));
        assert_eq!((p.better, p.same, p.worse), (0, 4, 0));
    }

    #[test]
    fn games_pair_by_opening_and_colour_not_by_order() {
        let first = games(&[(1.0, 1.0), (0.0, 0.0)]);
        let mut second = games(&[(1.0, 1.0), (0.0, 0.0), (0.5, 0.5)]);
        second.reverse();
        let p = compare(&first, &second).unwrap();
        assert_eq!((p.games, p.unpaired), (4, [0, 2]));
        assert_eq!((p.diff, p.same), (0.0, 4));
        // the same opening with the other colour is not a partner
        let one = [played(0, true, 1.0)];
        let other = [played(0, false, 0.0)];
        let e = compare(&one, &other).unwrap_err().to_string();
        assert!(e.contains("no game of the first match"), "{e}");
    }

    #[test]
    fn lost_games_on_both_sides_print_without_nan() {
        let g = games(&[(0.0, 0.0), (0.0, 0.0)]);
        let p = compare(&g, &g).unwrap();
        let (elo, error) = p.elo();
        assert!(elo.is_nan() && error == 0.0);
        assert_eq!(signed(elo, 0), "n/a");
        assert_eq!(signed(f64::NEG_INFINITY, 1), "-inf");
        assert_eq!(signed(2.26, 1), "+2.3");
    }

    #[test]
    fn one_opening_has_no_interval() {
        let p = compare(&games(&[(1.0, 0.5)]), &games(&[(0.5, 0.5)])).unwrap();
        assert_eq!(p.openings, 1);
        assert!(p.diff_error.is_infinite());
    }

    #[test]
    fn opponents_named_differently_are_reported() {
        let first = games(&[(1.0, 0.5)]);
        assert!(compare(&first, &first).unwrap().opponents.is_empty());
        let mut second = first.clone();
        second[0].opponent = "y".into();
        second[1].opponent = "y".into();
        let p = compare(&first, &second).unwrap();
        assert_eq!(p.opponents, [("x".to_string(), "y".to_string())]);
        assert_eq!(p.games, 2);
    }
}
