//! What a search reports: a progress line per finished iteration and the result at the end.

use super::MATE;
use super::tt::MATE_BOUND;
use crate::core::Move;

/// One `info` line's worth of progress.
#[derive(Clone, Debug, Default)]
pub struct SearchInfo {
    pub depth: u32,
    pub seldepth: u32,
    /// Centipawns from the side to move, or mate distance (see `mate_in`).
    pub score: i32,
    /// Moves (not plies) to mate: positive when the side to move mates, negative when mated.
    pub mate_in: Option<i32>,
    pub nodes: u64,
    pub time_ms: u64,
    pub pv: Vec<Move>,
    /// Permille of the transposition table written in this search.
    pub hashfull: u32,
}

/// What a finished search returns.
#[derive(Clone, Debug, Default)]
pub struct SearchResult {
    /// `Move::NULL` only when the side to move has no legal move.
    pub best_move: Move,
    pub score: i32,
    pub depth: u32,
    pub nodes: u64,
    pub pv: Vec<Move>,
}

/// The score of UCI's "mate in `moves`" (the inverse of [`mate_in`]): MATE less the plies to
/// mate, so `mate 0`, mated now, is −MATE.
pub fn mate_score(moves: i32) -> i32 {
    if moves > 0 {
        MATE - (2 * moves - 1)
    } else {
        -MATE - 2 * moves
    }
}

/// Converts a score to UCI's "mate in moves" when it is a mate score.
pub fn mate_in(score: i32) -> Option<i32> {
    if score >= MATE_BOUND {
        Some((MATE - score + 1) / 2)
    } else if score <= -MATE_BOUND {
        Some(-(MATE + score) / 2)
    } else {
        None
    }
}
