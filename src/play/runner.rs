//! The match runner: the games of a match as executor jobs (one game per thread at a time, each
//! search single-threaded), handed out in index order, results stored by game index so that the
//! outcome does not depend on the concurrency, the number of ranks, or which game finished
//! first.
//!
//! Game `2p` and `2p + 1` form pair `p`: the same opening with colours swapped, engine A red
//! in the first. The opening of pair `p` is the `p`-th of the suite shuffled by the seed.
//! The SPRT is evaluated on the longest prefix of finished pairs after each game, so the pair at
//! which it stops is the same in every run; games already started past that point are dropped.
//! A resumed match ([`run_match_resuming`]) enters the games an earlier run finished first and
//! plays only the others.

use super::external::ExternalConfig;
use super::game::{GameRecord, Seat};
use super::job::GameJob;
use super::openings::{Opening, default_openings};
use super::stats::{MatchResult, SprtStatus, SprtVerdict};
use super::{EngineConfig, MatchConfig};
use rand::SeedableRng;
use rand::seq::SliceRandom;
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};
use thiserror::Error;

#[derive(Debug, Error)]
pub enum MatchError {
    #[error("{0} is not yet supported by the match runner")]
    Unsupported(String),
    #[error("invalid match configuration: {0}")]
    Config(String),
}

/// One side of a match: this engine in-process, or an external UCI/UCCI program.
// A match holds one per side, never a bulk of them: the in-process variant's size (its
// search constants inline) costs nothing worth a box at its three dozen construction sites.
#[allow(clippy::large_enum_variant)]
#[derive(Clone, Debug, Serialize, Deserialize)]
pub enum Engine {
    Internal(EngineConfig),
    External(ExternalConfig),
}

impl From<EngineConfig> for Engine {
    fn from(c: EngineConfig) -> Engine {
        Engine::Internal(c)
    }
}

impl Engine {
    /// An external engine started once, readied for a game and ended: the check a match or
    /// tournament makes before its first game, as cutechess and fastchess stop when an engine
    /// cannot start. A command that cannot play is then one error naming the engine and what
    /// it did, not every game forfeited. In-process engines always start.
    pub fn check_starts(&self) -> anyhow::Result<()> {
        match self {
            Engine::Internal(_) => Ok(()),
            Engine::External(c) => {
                let mut player = super::external::ExternalPlayer::new(c.clone());
                super::game::Player::new_game(&mut player).map_err(|e| {
                    anyhow::anyhow!(
                        "engine '{}' ({}) cannot play: {e}",
                        c.name,
                        c.command_line()
                    )
                })
            }
        }
    }

    pub fn name(&self) -> &str {
        match self {
            Engine::Internal(c) => &c.name,
            Engine::External(c) => &c.name,
        }
    }

    /// What the PGN records to identify the parameters: the eval params hash, mixed with
    /// the network's hash when the engine has one (the same parameters with and without a
    /// network are different engines).
    pub fn params_hash(&self) -> Option<String> {
        match self {
            Engine::Internal(c) => {
                let eval = c.options.eval_hash(&c.eval);
                let hash = match &c.network {
                    Some(net) => crate::util::mix(eval, &[net.hash()]),
                    None => eval,
                };
                Some(format!("{hash:016x}"))
            }
            Engine::External(_) => None,
        }
    }

    pub(crate) fn seat(&self) -> Seat {
        Seat {
            name: self.name().to_string(),
            hash: self.params_hash(),
        }
    }
}

/// Live state handed to the progress callback after each game.
#[derive(Clone, Debug)]
pub struct MatchProgress<'a> {
    /// The game that just finished.
    pub game: &'a GameRecord,
    pub finished: usize,
    pub total: usize,
    /// Every finished game (pentanomial: every finished pair).
    pub live: MatchResult,
    /// The SPRT over the prefix of finished pairs, if one was asked for.
    pub sprt: Option<SprtStatus>,
}

/// Everything a match produced.
#[derive(Clone, Debug)]
pub struct MatchReport {
    pub result: MatchResult,
    /// The counted games, by index.
    pub games: Vec<GameRecord>,
    pub sprt: Option<SprtStatus>,
    pub games_planned: usize,
    pub elapsed: Duration,
    /// Stopped before `games_planned` by the SPRT or by the stop flag.
    pub stopped_early: bool,
    /// The games played in `elapsed` (a resumed match's earlier games are not among them).
    pub played: usize,
}

impl MatchReport {
    /// The games played per minute of `elapsed`.
    pub fn games_per_minute(&self) -> f64 {
        self.played as f64 * 60.0 / self.elapsed.as_secs_f64().max(1e-9)
    }
}

/// The counts over a list of records (pairs are games `2p`, `2p+1` both present).
pub fn tally(games: &[GameRecord]) -> MatchResult {
    let mut r = MatchResult::default();
    let mut by_index = std::collections::BTreeMap::new();
    for g in games {
        r.add_game(g.score_a());
        by_index.insert(g.index, g.score_a());
    }
    for (&i, &s) in &by_index {
        if i % 2 == 0
            && let Some(&t) = by_index.get(&(i + 1))
        {
            r.add_pair(s + t);
        }
    }
    r
}

/// The games of a match as they finish, in any order: the live counts, and the SPRT on the
/// longest prefix of finished pairs (so the pair at which it stops is the same in every run,
/// whatever finished first).
pub(crate) struct Scoreboard {
    records: Vec<Option<GameRecord>>,
    finished: usize,
    /// Games entered by [`Scoreboard::add`] (played now), not [`Scoreboard::enter`].
    played: usize,
    live: MatchResult,
    prefix_pairs: usize,
    prefix: MatchResult,
    sprt: Option<SprtStatus>,
    decided_pairs: Option<usize>,
}

impl Scoreboard {
    pub(crate) fn new(total: usize) -> Scoreboard {
        Scoreboard {
            records: vec![None; total],
            finished: 0,
            played: 0,
            live: MatchResult::default(),
            prefix_pairs: 0,
            prefix: MatchResult::default(),
            sprt: None,
            decided_pairs: None,
        }
    }

    /// Enters game `g` just played, advances the SPRT over the prefix of finished pairs, and
    /// reports the game to `progress`. Returns true once the SPRT has decided.
    pub(crate) fn add(
        &mut self,
        g: usize,
        rec: GameRecord,
        cfg: &MatchConfig,
        progress: &(dyn Fn(&MatchProgress) + Sync),
    ) -> bool {
        self.played += 1;
        let decided = self.enter(g, rec, cfg);
        if let Some(game) = &self.records[g] {
            progress(&MatchProgress {
                game,
                finished: self.finished,
                total: self.records.len(),
                live: self.live,
                sprt: self.sprt,
            });
        }
        decided
    }

    /// Whether game `g` is in.
    pub(crate) fn has(&self, g: usize) -> bool {
        self.records[g].is_some()
    }

    /// Enters game `g` (played now or by an earlier run) and advances the SPRT, without
    /// reporting it. Returns true once the SPRT has decided.
    pub(crate) fn enter(&mut self, g: usize, rec: GameRecord, cfg: &MatchConfig) -> bool {
        let total = self.records.len();
        let score = rec.score_a();
        self.live.add_game(score);
        let partner = g ^ 1;
        if partner < total
            && let Some(other) = &self.records[partner]
        {
            self.live.add_pair(score + other.score_a());
        }
        self.records[g] = Some(rec);
        self.finished += 1;
        while self.decided_pairs.is_none() {
            let p = self.prefix_pairs;
            if 2 * p + 1 >= total {
                break;
            }
            let (s0, s1) = match (&self.records[2 * p], &self.records[2 * p + 1]) {
                (Some(x), Some(y)) => (x.score_a(), y.score_a()),
                _ => break,
            };
            self.prefix.add_game(s0);
            self.prefix.add_game(s1);
            self.prefix.add_pair(s0 + s1);
            self.prefix_pairs += 1;
            if let Some(c) = &cfg.sprt {
                let st = c.status(&self.prefix);
                self.sprt = Some(st);
                if st.verdict != SprtVerdict::Continue {
                    self.decided_pairs = Some(self.prefix_pairs);
                }
            }
        }
        self.decided_pairs.is_some()
    }

    /// The report: the games up to the pair where the SPRT decided (games started past it are
    /// dropped), else every finished game.
    pub(crate) fn report(self, cfg: &MatchConfig, started: Instant) -> MatchReport {
        let total = self.records.len();
        let games: Vec<GameRecord> = match self.decided_pairs {
            Some(k) => self.records.into_iter().take(2 * k).flatten().collect(),
            None => self.records.into_iter().flatten().collect(),
        };
        let result = tally(&games);
        let sprt = cfg.sprt.map(|c| c.status(&result));
        MatchReport {
            stopped_early: games.len() < total,
            result,
            games,
            sprt,
            games_planned: total,
            elapsed: started.elapsed(),
            played: self.played,
        }
    }
}

/// Checks a match's configuration and returns its opening suite.
pub(crate) fn match_openings(cfg: &MatchConfig) -> Result<Arc<Vec<Opening>>, MatchError> {
    openings_or(cfg, || Arc::new(default_openings()))
}

/// [`match_openings`] with the default suite from `default` (made only when needed).
fn openings_or(
    cfg: &MatchConfig,
    default: impl FnOnce() -> Arc<Vec<Opening>>,
) -> Result<Arc<Vec<Opening>>, MatchError> {
    if cfg.nodes.is_none() && cfg.depth.is_none() && cfg.tc.is_none() && cfg.movetime_ms.is_none() {
        return Err(MatchError::Config(
            "no limit per move: give nodes, depth, a time control or a move time".into(),
        ));
    }
    if let Some(s) = &cfg.sprt {
        s.validate().map_err(MatchError::Config)?;
    }
    match &cfg.openings {
        Some(o) if !o.is_empty() => Ok(o.clone()),
        Some(_) => Err(MatchError::Config("the opening suite is empty".into())),
        None => Ok(default()),
    }
}

/// The opening order for a seed: the suite shuffled with ChaCha8 (reproducible everywhere).
pub fn opening_order(n: usize, seed: u64) -> Vec<usize> {
    let mut order: Vec<usize> = (0..n).collect();
    order.shuffle(&mut ChaCha8Rng::seed_from_u64(seed));
    order
}

/// The games played at once: `concurrency`, or one per core when it is 0, and never more than
/// there are games.
pub(crate) fn threads(concurrency: usize, games: usize) -> usize {
    match concurrency {
        0 => std::thread::available_parallelism().map_or(1, |n| n.get()),
        n => n,
    }
    .clamp(1, games.max(1))
}

/// Plays the match; `progress` is called on the calling thread after every game.
pub fn run_match_with_progress(
    a: &Engine,
    b: &Engine,
    cfg: &MatchConfig,
    progress: &(dyn Fn(&MatchProgress) + Sync),
) -> Result<MatchReport, MatchError> {
    run_match_resuming(a, b, cfg, Vec::new(), progress)
}

/// Continues a match of which the games `done` (by their `index`) are already finished: they
/// are counted first, in index order, and only the others are played (none if they decide the
/// SPRT). With node or depth limits the result is that of the uninterrupted match. A game
/// index past `cfg.games` is an error; a game given twice counts once.
pub fn run_match_resuming(
    a: &Engine,
    b: &Engine,
    cfg: &MatchConfig,
    mut done: Vec<GameRecord>,
    progress: &(dyn Fn(&MatchProgress) + Sync),
) -> Result<MatchReport, MatchError> {
    let openings = match_openings(cfg)?;
    let order = opening_order(openings.len(), cfg.seed);
    let total = cfg.games;
    let started = Instant::now();
    let mut board = Scoreboard::new(total);
    done.sort_by_key(|r| r.index);
    let mut decided = false;
    for rec in done {
        let g = rec.index;
        if g >= total {
            return Err(MatchError::Config(format!(
                "a finished game has index {g}, but the match has {total} games"
            )));
        }
        if !board.has(g) {
            decided |= board.enter(g, rec, cfg);
        }
    }
    let left: Vec<usize> = (0..total).filter(|&g| !board.has(g)).collect();
    let user_stop = || cfg.stop.as_ref().is_some_and(|s| s.load(Ordering::Relaxed));
    if !decided && !left.is_empty() && !user_stop() {
        let jobs: Vec<GameJob> = left
            .iter()
            .map(|&g| GameJob::of_match(a, b, cfg, &openings, &order, g))
            .collect();
        crate::exec::map(jobs, threads(cfg.concurrency, left.len()), &mut |j, rec| {
            let decided = board.add(left[j], rec, cfg, progress);
            !decided && !user_stop()
        });
    }
    Ok(board.report(cfg, started))
}

/// Many small matches at once (the tuners' game pairs, GA's fitness matches): every game of
/// every `(a, b, cfg)` is one job of one executor call on `threads` threads (and every rank),
/// and each match gets its games, by index, and their tally, in the order given. No SPRT or
/// stop flag: every game is played.
pub fn run_matches(
    matches: &[(&Engine, &Engine, MatchConfig)],
    threads: usize,
) -> Result<Vec<(MatchResult, Vec<GameRecord>)>, MatchError> {
    // (read once, and only when a match has no suite of its own)
    let suite = std::cell::OnceCell::new();
    let mut jobs = Vec::new();
    let mut owner = Vec::new();
    for (m, (a, b, cfg)) in matches.iter().enumerate() {
        let openings = openings_or(cfg, || {
            suite.get_or_init(|| Arc::new(default_openings())).clone()
        })?;
        let order = opening_order(openings.len(), cfg.seed);
        for g in 0..cfg.games {
            jobs.push(GameJob::of_match(a, b, cfg, &openings, &order, g));
            owner.push(m);
        }
    }
    let mut games: Vec<Vec<GameRecord>> = matches.iter().map(|_| Vec::new()).collect();
    let threads = threads.clamp(1, jobs.len().max(1));
    for (i, g) in crate::exec::map_all(jobs, threads).into_iter().enumerate() {
        games[owner[i]].push(g);
    }
    Ok(games.into_iter().map(|g| (tally(&g), g)).collect())
}
