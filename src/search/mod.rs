//! Search. INTERFACE STUB: a one-ply material pick, to be replaced by the real alpha-beta
//! search. The public types and signatures below are what UCI, the match runner and the tuners
//! call; keep them (add fields freely).

use crate::core::{Move, Position};
use crate::eval::{EvalParams, evaluate};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

/// Search parameters (reductions, margins), loaded from params/search.json.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SearchParams {}

// STUB ADDITION by the tune helper: the flat-view API the real SearchParams will provide
// (params/search.json); the stub has no tunable numbers.
impl SearchParams {
    pub fn load(path: &std::path::Path) -> Result<SearchParams, crate::eval::ParamsError> {
        std::fs::read_to_string(path).map_err(|source| crate::eval::ParamsError::Io {
            path: path.display().to_string(),
            source,
        })?;
        Ok(SearchParams::default())
    }

    pub fn specs(&self) -> Vec<crate::eval::ParamSpec> {
        Vec::new()
    }

    pub fn to_vec(&self) -> Vec<i32> {
        Vec::new()
    }

    pub fn from_vec(&self, _v: &[i32]) -> SearchParams {
        self.clone()
    }

    pub fn to_json_string(&self) -> String {
        "{}".to_string()
    }
}

/// What limits one search. Unset fields do not limit.
#[derive(Clone, Debug, Default)]
pub struct SearchLimits {
    pub depth: Option<u32>,
    pub nodes: Option<u64>,
    pub movetime_ms: Option<u64>,
    /// Clock of the side to move and increment, in ms (`go wtime/btime winc/binc`).
    pub time_ms: Option<u64>,
    pub inc_ms: Option<u64>,
    pub movestogo: Option<u32>,
    pub infinite: bool,
}

/// One `info` line's worth of progress.
#[derive(Clone, Debug, Default)]
pub struct SearchInfo {
    pub depth: u32,
    pub seldepth: u32,
    /// Centipawns from the side to move, or mate distance (see `mate_in`).
    pub score: i32,
    pub mate_in: Option<i32>,
    pub nodes: u64,
    pub time_ms: u64,
    pub pv: Vec<Move>,
}

#[derive(Clone, Debug, Default)]
pub struct SearchResult {
    pub best_move: Move,
    pub score: i32,
    pub depth: u32,
    pub nodes: u64,
    pub pv: Vec<Move>,
}

/// A single-threaded searcher with its own tables. One per game in self-play.
pub struct Searcher {
    pub eval: Arc<EvalParams>,
    pub params: Arc<SearchParams>,
    stop: Arc<AtomicBool>,
}

impl Searcher {
    pub fn new(eval: Arc<EvalParams>, params: Arc<SearchParams>, _hash_mb: usize) -> Searcher {
        Searcher {
            eval,
            params,
            stop: Arc::new(AtomicBool::new(false)),
        }
    }

    /// Clears the transposition table and history (`ucinewgame`).
    pub fn new_game(&mut self) {}

    /// A flag that stops the running search when set (`stop`).
    pub fn stop_handle(&self) -> Arc<AtomicBool> {
        self.stop.clone()
    }

    /// Searches `pos` (its history is used for repetition rulings) within `limits`.
    pub fn search(
        &mut self,
        pos: &Position,
        _limits: &SearchLimits,
        info: &mut dyn FnMut(&SearchInfo),
    ) -> SearchResult {
        self.stop.store(false, Ordering::Relaxed);
        let mut pos = pos.clone();
        let mut best = (i32::MIN, Move::NULL);
        for &m in pos.legal_moves().iter() {
            pos.make_move(m);
            let s = -evaluate(&pos, &self.eval);
            pos.unmake_move();
            if s > best.0 {
                best = (s, m);
            }
        }
        info(&SearchInfo {
            depth: 1,
            score: best.0,
            pv: vec![best.1],
            ..Default::default()
        });
        SearchResult {
            best_move: best.1,
            score: best.0,
            depth: 1,
            nodes: 0,
            pv: vec![best.1],
        }
    }
}
