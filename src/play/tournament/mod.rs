//! Tournaments: many engines, every pairing a match of the same openings (cutechess's and
//! fastchess's `-tournament gauntlet|round-robin`), rated together ([`super::ratings`]).
//!
//! Each pairing plays the games `match` would play with the same configuration: game `g` of
//! pairing `p` is [`GameJob::of_match`]'s game `g` (pair `g / 2` on the seed's `g / 2`-th
//! opening or Jieqi deal, colours swapped within the pair, the pairing's first engine red in the
//! first game), so every pairing meets the same openings, and a tournament of two engines plays
//! exactly the games of `xqtune match` with the same seed. All games of all pairings are one
//! executor call (concurrency and MPI as for a match); game `p * games + g` is the tournament's
//! game id, by which results are placed and finished games are skipped on resume.
//!
//! [`cli`] is `xqtune tournament` (records, resume, the tables); the file of finished games
//! that makes resume possible is [`journal`](crate::play::journal), shared with `xqtune match`.

pub mod cli;

use super::MatchConfig;
use super::game::GameRecord;
use super::job::GameJob;
use super::ratings::{Anchor, PairingGames, RatingList, rating_list};
use super::runner::{Engine, MatchError, match_openings, opening_order, tally, threads};
use super::stats::MatchResult;
use serde::{Deserialize, Serialize};
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

/// Who plays whom.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "kebab-case")]
pub enum Format {
    /// The first engine against each of the others.
    Gauntlet,
    /// Every engine against every other.
    RoundRobin,
}

/// One pairing: engine `a` (red in the first game of each pair) against engine `b`, by their
/// indices in the tournament's engine list.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Pairing {
    pub a: usize,
    pub b: usize,
}

/// The pairings of `n` engines: a gauntlet's `(0, 1), (0, 2), ..`; a round robin's `(i, j)`,
/// `i < j`, in order.
pub fn pairings(format: Format, n: usize) -> Vec<Pairing> {
    match format {
        Format::Gauntlet => (1..n).map(|b| Pairing { a: 0, b }).collect(),
        Format::RoundRobin => (0..n)
            .flat_map(|a| (a + 1..n).map(move |b| Pairing { a, b }))
            .collect(),
    }
}

/// What the progress callback sees after each game.
pub struct TournamentProgress<'a> {
    /// The game that just finished and its pairing.
    pub game: &'a GameRecord,
    pub pairing: usize,
    /// Games finished (those of earlier sessions included) and planned.
    pub finished: usize,
    pub total: usize,
    /// The tournament so far.
    pub state: &'a Standings,
}

/// The games of a tournament by game id, as they finish.
#[derive(Clone, Debug)]
pub struct Standings {
    pub names: Vec<String>,
    pub pairings: Vec<Pairing>,
    pub games_per_pairing: usize,
    /// By game id (`pairing * games_per_pairing + g`); `None` until played.
    pub games: Vec<Option<GameRecord>>,
}

impl Standings {
    pub fn new(names: Vec<String>, pairings: Vec<Pairing>, games_per_pairing: usize) -> Standings {
        let total = pairings.len() * games_per_pairing;
        Standings {
            names,
            pairings,
            games_per_pairing,
            games: vec![None; total],
        }
    }

    /// `(pairing, game within the pairing)` of a game id.
    pub fn locate(&self, id: usize) -> (usize, usize) {
        (id / self.games_per_pairing, id % self.games_per_pairing)
    }

    pub fn finished(&self) -> usize {
        self.games.iter().filter(|g| g.is_some()).count()
    }

    /// The finished games of pairing `p`, by index.
    pub fn pairing_games(&self, p: usize) -> Vec<GameRecord> {
        let n = self.games_per_pairing;
        self.games[p * n..(p + 1) * n]
            .iter()
            .flatten()
            .cloned()
            .collect()
    }

    /// Pairing `p`'s counts from its first engine's side (pentanomial over complete pairs).
    pub fn result(&self, p: usize) -> MatchResult {
        tally(&self.pairing_games(p))
    }

    /// The rating units of every pairing: complete colour-swapped pairs, and the lone games of
    /// pairs not (yet) complete.
    pub fn rating_games(&self) -> Vec<PairingGames> {
        let n = self.games_per_pairing;
        self.pairings
            .iter()
            .enumerate()
            .map(|(p, pr)| {
                let games = &self.games[p * n..(p + 1) * n];
                let mut units = Vec::new();
                for pair in games.chunks(2) {
                    let played: Vec<f64> = pair.iter().flatten().map(|g| g.score_a()).collect();
                    if !played.is_empty() {
                        units.push((played.iter().sum(), played.len() as f64));
                    }
                }
                PairingGames {
                    a: pr.a,
                    b: pr.b,
                    units,
                }
            })
            .collect()
    }

    /// The rating list of the games so far (see [`rating_list`]).
    pub fn ratings(&self, anchor: &Anchor, bootstrap: usize, seed: u64) -> Option<RatingList> {
        rating_list(&self.names, &self.rating_games(), anchor, bootstrap, seed)
    }

    /// The cross table: `cells[i][j]` = (points of engine `i` against engine `j`, games), for
    /// the engines that met.
    pub fn cross_table(&self) -> Vec<Vec<Option<(f64, f64)>>> {
        let n = self.names.len();
        let mut cells = vec![vec![None; n]; n];
        for (p, pr) in self.pairings.iter().enumerate() {
            let r = self.result(p);
            let games = r.games() as f64;
            if games == 0.0 {
                continue;
            }
            let pa = r.wins as f64 + 0.5 * r.draws as f64;
            let add = |c: &mut Option<(f64, f64)>, pts: f64| {
                let (x, g) = c.unwrap_or((0.0, 0.0));
                *c = Some((x + pts, g + games));
            };
            add(&mut cells[pr.a][pr.b], pa);
            add(&mut cells[pr.b][pr.a], games - pa);
        }
        cells
    }
}

/// Everything a tournament produced.
#[derive(Clone, Debug)]
pub struct TournamentReport {
    pub standings: Standings,
    /// Games played in this session (a resumed tournament's earlier games excluded).
    pub played_now: usize,
    pub elapsed: Duration,
    /// Stopped before every game was played (the stop flag).
    pub stopped_early: bool,
}

impl TournamentReport {
    pub fn games_per_minute(&self) -> f64 {
        self.played_now as f64 * 60.0 / self.elapsed.as_secs_f64().max(1e-9)
    }
}

/// The game job of game id `id` (see the module documentation).
fn job(
    engines: &[Engine],
    standings: &Standings,
    cfg: &MatchConfig,
    openings: &[super::openings::Opening],
    order: &[usize],
    id: usize,
) -> GameJob {
    let (p, g) = standings.locate(id);
    let pr = standings.pairings[p];
    GameJob::of_match(&engines[pr.a], &engines[pr.b], cfg, openings, order, g)
}

/// Plays the games of `standings` that are not yet played (`cfg.games` is the number of games
/// per pairing; its SPRT is not used); `progress` is called on the calling thread after every
/// game. A stop flag in `cfg` starts no further game.
pub fn run_tournament(
    engines: &[Engine],
    mut standings: Standings,
    cfg: &MatchConfig,
    progress: &mut dyn FnMut(&TournamentProgress),
) -> Result<TournamentReport, MatchError> {
    if standings.games_per_pairing != cfg.games {
        return Err(MatchError::Config(format!(
            "{} games per pairing planned, the configuration has {}",
            standings.games_per_pairing, cfg.games
        )));
    }
    if let Some(p) = standings
        .pairings
        .iter()
        .find(|p| p.a >= engines.len() || p.b >= engines.len() || p.a == p.b)
    {
        return Err(MatchError::Config(format!(
            "pairing {p:?} of {} engines",
            engines.len()
        )));
    }
    let openings = match_openings(cfg)?;
    let order = opening_order(openings.len(), cfg.seed);
    let started = Instant::now();
    let ids: Vec<usize> = (0..standings.games.len())
        .filter(|&i| standings.games[i].is_none())
        .collect();
    let jobs: Vec<GameJob> = ids
        .iter()
        .map(|&id| job(engines, &standings, cfg, &openings, &order, id))
        .collect();
    let total = standings.games.len();
    let mut played_now = 0;
    crate::exec::map(jobs, threads(cfg.concurrency, ids.len()), &mut |j, rec| {
        let id = ids[j];
        standings.games[id] = Some(rec);
        played_now += 1;
        if let Some(game) = &standings.games[id] {
            progress(&TournamentProgress {
                game,
                pairing: standings.locate(id).0,
                finished: total - ids.len() + played_now,
                total,
                state: &standings,
            });
        }
        !cfg.stop.as_ref().is_some_and(|s| s.load(Ordering::Relaxed))
    });
    Ok(TournamentReport {
        stopped_early: standings.finished() < total,
        standings,
        played_now,
        elapsed: started.elapsed(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pairings_of_both_formats() {
        let p =
            |f, n| -> Vec<(usize, usize)> { pairings(f, n).iter().map(|p| (p.a, p.b)).collect() };
        assert_eq!(p(Format::Gauntlet, 4), [(0, 1), (0, 2), (0, 3)]);
        assert_eq!(
            p(Format::RoundRobin, 4),
            [(0, 1), (0, 2), (0, 3), (1, 2), (1, 3), (2, 3)]
        );
        assert_eq!(p(Format::RoundRobin, 2), p(Format::Gauntlet, 2));
    }
}
