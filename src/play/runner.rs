//! The match runner: games on a rayon pool (one game per worker at a time, each search
//! single-threaded), handed out in index order, results stored by game index so that the
//! outcome does not depend on the concurrency or on which worker finished first.
//!
//! Game `2p` and `2p + 1` form pair `p`: the same opening with colours swapped, engine A red
//! in the first. The opening of pair `p` is the `p`-th of the suite shuffled by the seed.
//! The SPRT is evaluated on the longest prefix of finished pairs after each game, so the pair at
//! which it stops is the same in every run; games already started past that point are dropped.

use super::external::{ExternalConfig, ExternalPlayer};
use super::game::{GameRecord, GameStart, InProcessPlayer, Player, Seat, play_game};
use super::jieqi::deal_seed;
use super::openings::{Opening, default_openings};
use super::stats::{MatchResult, SprtStatus, SprtVerdict};
use super::{EngineConfig, MatchConfig};
use crate::core::Variant;
use rand::SeedableRng;
use rand::seq::SliceRandom;
use rand_chacha::ChaCha8Rng;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use thiserror::Error;

#[derive(Debug, Error)]
pub enum MatchError {
    #[error("{0} is not yet supported by the match runner")]
    Unsupported(String),
    #[error("invalid match configuration: {0}")]
    Config(String),
    #[error("cannot build the thread pool: {0}")]
    ThreadPool(String),
}

/// One side of a match: this engine in-process, or an external UCI/UCCI program.
#[derive(Clone, Debug)]
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
    pub fn name(&self) -> &str {
        match self {
            Engine::Internal(c) => &c.name,
            Engine::External(c) => &c.name,
        }
    }

    /// What the PGN records to identify the parameters (the eval params hash).
    pub fn params_hash(&self) -> Option<String> {
        match self {
            Engine::Internal(c) => Some(format!("{:016x}", c.options.eval_hash(&c.eval))),
            Engine::External(_) => None,
        }
    }

    pub(crate) fn seat(&self) -> Seat {
        Seat {
            name: self.name().to_string(),
            hash: self.params_hash(),
        }
    }

    pub(crate) fn player(&self, hash_mb: usize) -> Box<dyn Player> {
        match self {
            Engine::Internal(c) => Box::new(InProcessPlayer::new(
                c.eval.clone(),
                c.search,
                c.options,
                hash_mb,
            )),
            Engine::External(c) => Box::new(ExternalPlayer::new(c.clone())),
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
}

impl MatchReport {
    pub fn games_per_minute(&self) -> f64 {
        self.games.len() as f64 * 60.0 / self.elapsed.as_secs_f64().max(1e-9)
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
/// whatever finished first). One book serves the local runner and the MPI executor.
pub(crate) struct Book {
    records: Vec<Option<GameRecord>>,
    finished: usize,
    live: MatchResult,
    prefix_pairs: usize,
    prefix: MatchResult,
    sprt: Option<SprtStatus>,
    decided_pairs: Option<usize>,
}

impl Book {
    pub(crate) fn new(total: usize) -> Book {
        Book {
            records: vec![None; total],
            finished: 0,
            live: MatchResult::default(),
            prefix_pairs: 0,
            prefix: MatchResult::default(),
            sprt: None,
            decided_pairs: None,
        }
    }

    /// Enters game `g`, advances the SPRT over the prefix of finished pairs, and reports the
    /// game to `progress`. Returns true once the SPRT has decided.
    pub(crate) fn add(
        &mut self,
        g: usize,
        rec: GameRecord,
        cfg: &MatchConfig,
        progress: &(dyn Fn(&MatchProgress) + Sync),
    ) -> bool {
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
        if let Some(game) = &self.records[g] {
            progress(&MatchProgress {
                game,
                finished: self.finished,
                total,
                live: self.live,
                sprt: self.sprt,
            });
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
        }
    }
}

/// Checks a match's configuration and returns its opening suite.
pub(crate) fn match_openings(cfg: &MatchConfig) -> Result<Arc<Vec<Opening>>, MatchError> {
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
        None => Ok(Arc::new(default_openings())),
    }
}

/// The opening order for a seed: the suite shuffled with ChaCha8 (reproducible everywhere).
pub fn opening_order(n: usize, seed: u64) -> Vec<usize> {
    let mut order: Vec<usize> = (0..n).collect();
    order.shuffle(&mut ChaCha8Rng::seed_from_u64(seed));
    order
}

/// Plays the match; `progress` is called (under a lock, from a worker) after every game.
pub fn run_match_with_progress(
    a: &Engine,
    b: &Engine,
    cfg: &MatchConfig,
    progress: &(dyn Fn(&MatchProgress) + Sync),
) -> Result<MatchReport, MatchError> {
    let jieqi = cfg.variant == Variant::Jieqi;
    let openings = match_openings(cfg)?;
    let order = opening_order(openings.len(), cfg.seed);
    let total = cfg.games;
    let threads = match cfg.concurrency {
        0 => std::thread::available_parallelism().map_or(1, |n| n.get()),
        n => n,
    }
    .clamp(1, total.max(1));
    let settings = cfg.game_settings();
    let started = Instant::now();
    let next = AtomicUsize::new(0);
    let halt = AtomicBool::new(false);
    let shared = Mutex::new(Book::new(total));
    let (seat_a, seat_b) = (a.seat(), b.seat());
    let user_stop = cfg.stop.clone();
    let stopped = || {
        halt.load(Ordering::Relaxed)
            || user_stop
                .as_ref()
                .is_some_and(|s| s.load(Ordering::Relaxed))
    };

    // One worker: the games it plays one after another.
    let worker = || {
        let mut pa = a.player(cfg.hash_mb);
        let mut pb = b.player(cfg.hash_mb);
        loop {
            if stopped() {
                break;
            }
            let g = next.fetch_add(1, Ordering::SeqCst);
            if g >= total {
                break;
            }
            let pair = g / 2;
            let a_is_red = g.is_multiple_of(2);
            let start = if jieqi {
                // Pair p plays deal `deal_seed(seed, p)` twice, colours swapped.
                GameStart::Deal {
                    seed: deal_seed(cfg.seed, pair),
                    rule: cfg.capture_reveal,
                }
            } else {
                GameStart::Opening(&openings[order[pair % order.len()]])
            };
            // A plays red in the first game of a pair, black in the second.
            let rec = play_game(
                g,
                [&mut *pa, &mut *pb],
                [&seat_a, &seat_b],
                a_is_red,
                start,
                &settings,
            );
            let mut book = match shared.lock() {
                Ok(s) => s,
                Err(p) => p.into_inner(),
            };
            if book.add(g, rec, cfg, progress) {
                halt.store(true, Ordering::Relaxed);
            }
        }
    };
    if threads == 1 {
        // On the calling thread: the tuners call run_match from their own rayon workers, and
        // a private pool here would let a blocked worker steal the next match and nest
        // without bound (hundreds of threads and transposition tables).
        worker();
    } else {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .thread_name(|i| format!("match-{i}"))
            .build()
            .map_err(|e| MatchError::ThreadPool(e.to_string()))?;
        pool.scope(|s| {
            for _ in 0..threads {
                s.spawn(|_| worker());
            }
        });
    }

    let book = match shared.into_inner() {
        Ok(s) => s,
        Err(p) => p.into_inner(),
    };
    Ok(book.report(cfg, started))
}
