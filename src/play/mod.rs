//! Self-play matches. INTERFACE STUB: sequential games from the start position, no statistics.
//! The public types and `run_match` signature are what the tuners call; keep them (add fields).

use crate::core::{Color, GameResult, Position};
use crate::eval::EvalParams;
use crate::search::{SearchLimits, SearchParams, Searcher};
use std::sync::Arc;

/// One side of a match: this engine with a parameter set.
#[derive(Clone, Debug)]
pub struct EngineConfig {
    pub name: String,
    pub eval: Arc<EvalParams>,
    pub search: Arc<SearchParams>,
}

#[derive(Clone, Debug)]
pub struct MatchConfig {
    /// Number of games (played in pairs with colours swapped).
    pub games: usize,
    pub nodes: Option<u64>,
    pub depth: Option<u32>,
    pub concurrency: usize,
    pub seed: u64,
    pub max_plies: usize,
}

impl Default for MatchConfig {
    fn default() -> Self {
        MatchConfig {
            games: 2,
            nodes: Some(5000),
            depth: None,
            concurrency: 1,
            seed: 1,
            max_plies: 400,
        }
    }
}

/// Counts from engine A's point of view.
#[derive(Clone, Debug, Default)]
pub struct MatchResult {
    pub wins: u32,
    pub draws: u32,
    pub losses: u32,
    /// Game pairs by A's total score 0, 0.5, 1, 1.5, 2.
    pub pentanomial: [u32; 5],
}

impl MatchResult {
    pub fn games(&self) -> u32 {
        self.wins + self.draws + self.losses
    }

    pub fn score(&self) -> f64 {
        (self.wins as f64 + 0.5 * self.draws as f64) / self.games().max(1) as f64
    }
}

/// Plays `cfg.games` games of `a` against `b`.
pub fn run_match(a: &EngineConfig, b: &EngineConfig, cfg: &MatchConfig) -> MatchResult {
    let mut r = MatchResult::default();
    let limits = SearchLimits {
        nodes: cfg.nodes,
        depth: cfg.depth,
        ..Default::default()
    };
    for g in 0..cfg.games {
        let a_color = if g % 2 == 0 { Color::Red } else { Color::Black };
        let mut sa = Searcher::new(a.eval.clone(), a.search.clone(), 16);
        let mut sb = Searcher::new(b.eval.clone(), b.search.clone(), 16);
        let mut pos = Position::startpos();
        let mut result = GameResult::Draw;
        for _ in 0..cfg.max_plies {
            if let Some(o) = pos.outcome() {
                result = o.result;
                break;
            }
            let s = if pos.side_to_move() == a_color {
                &mut sa
            } else {
                &mut sb
            };
            let m = s.search(&pos, &limits, &mut |_| {}).best_move;
            pos.make_move(m);
        }
        match result.score_for(a_color) {
            x if x > 0.75 => r.wins += 1,
            x if x < 0.25 => r.losses += 1,
            _ => r.draws += 1,
        }
    }
    r
}
