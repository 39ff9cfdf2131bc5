//! Move ordering: the transposition-table move first, then captures by MVV-LVA (most valuable
//! victim, least valuable attacker), then the two killer moves of the ply, then quiet moves by
//! their history score (<https://www.chessprogramming.org/Move_Ordering>). Moves are picked
//! lazily by selection: a cut-off after the first move or two (the common case) never sorts
//! the rest.

use crate::core::{Move, MoveList, Position};
use std::mem::MaybeUninit;

/// Ordinal piece values for ordering and the cheap exchange test (King, Advisor, Elephant,
/// Horse, Rook, Cannon, Pawn). Only their order matters, not the evaluation's scale.
pub const ORDER_VALUE: [i32; 7] = [60, 2, 2, 4, 9, 5, 1];

const TT_SCORE: i32 = 1 << 30;
const CAPTURE_SCORE: i32 = 1 << 28;
const KILLER_SCORE: i32 = 1 << 26;

/// Quiet-move statistics shared across the search: history by (piece, destination) and two
/// killers per ply.
pub struct Heuristics {
    /// `history[piece code][to]`, bounded by the gravity formula in `update_history`.
    pub history: Box<[[i32; 90]; 15]>,
    pub killers: Vec<[Move; 2]>,
}

impl Heuristics {
    pub fn new(max_ply: usize) -> Heuristics {
        Heuristics {
            history: Box::new([[0; 90]; 15]),
            killers: vec![[Move::NULL; 2]; max_ply + 2],
        }
    }

    pub fn clear(&mut self) {
        self.history.iter_mut().for_each(|r| r.fill(0));
        self.killers.fill([Move::NULL; 2]);
    }

    /// History gravity: `h += bonus - h * |bonus| / max` keeps values within `[-max, max]`
    /// and lets newer results outweigh old ones (Stockfish's `update_history`).
    #[inline]
    pub fn update_history(&mut self, code: u8, to: usize, bonus: i32, max: i32) {
        let h = &mut self.history[code as usize][to];
        let b = bonus.clamp(-max, max);
        *h += b - *h * b.abs() / max;
    }

    #[inline]
    pub fn history_of(&self, pos: &Position, m: Move) -> i32 {
        let code = piece_code(pos, m.from().index());
        self.history[code as usize][m.to().index()]
    }

    pub fn add_killer(&mut self, ply: usize, m: Move) {
        let k = &mut self.killers[ply];
        if k[0] != m {
            k[1] = k[0];
            k[0] = m;
        }
    }
}

#[inline(always)]
pub fn piece_code(pos: &Position, sq: usize) -> u8 {
    pos.piece_at(crate::core::Square(sq as u8))
        .map(|p| p.code())
        .unwrap_or(0)
}

/// The MVV-LVA score of a capture (higher first).
#[inline(always)]
pub fn mvv_lva(pos: &Position, m: Move) -> i32 {
    let victim = pos.piece_at(m.to()).map(|p| ORDER_VALUE[p.kind.index()]);
    let attacker = pos
        .piece_at(m.from())
        .map(|p| ORDER_VALUE[p.kind.index()])
        .unwrap_or(0);
    victim.unwrap_or(0) * 64 - attacker
}

/// A move list with scores, picked best-first.
pub struct ScoredMoves {
    pub moves: MoveList,
    /// Only the first `moves.len()` entries are written; left uninitialised otherwise
    /// (zeroing 1 KB per node showed up as a fifth of the search time).
    scores: [MaybeUninit<i32>; crate::core::movegen::MAX_MOVES],
    next: usize,
}

type Scores = [MaybeUninit<i32>; crate::core::movegen::MAX_MOVES];

#[inline(always)]
fn new_scores() -> Scores {
    [MaybeUninit::uninit(); crate::core::movegen::MAX_MOVES]
}

impl ScoredMoves {
    /// Scores every move of `moves` for the main search.
    pub fn new(
        pos: &Position,
        moves: MoveList,
        tt_move: Move,
        killers: [Move; 2],
        heur: &Heuristics,
    ) -> ScoredMoves {
        let mut scores = new_scores();
        for (i, &m) in moves.iter().enumerate() {
            scores[i] = MaybeUninit::new(if m == tt_move {
                TT_SCORE
            } else if pos.is_capture(m) {
                CAPTURE_SCORE + mvv_lva(pos, m)
            } else if m == killers[0] {
                KILLER_SCORE + 1
            } else if m == killers[1] {
                KILLER_SCORE
            } else {
                heur.history_of(pos, m)
            });
        }
        ScoredMoves {
            moves,
            scores,
            next: 0,
        }
    }

    /// Captures only (or evasions), by MVV-LVA with the TT move first.
    pub fn captures(pos: &Position, moves: MoveList, tt_move: Move) -> ScoredMoves {
        let mut scores = new_scores();
        for (i, &m) in moves.iter().enumerate() {
            scores[i] = MaybeUninit::new(if m == tt_move {
                TT_SCORE
            } else if pos.is_capture(m) {
                CAPTURE_SCORE + mvv_lva(pos, m)
            } else {
                0
            });
        }
        ScoredMoves {
            moves,
            scores,
            next: 0,
        }
    }

    /// The best remaining move and its ordering score.
    #[inline]
    pub fn next_move(&mut self) -> Option<(Move, i32)> {
        let n = self.moves.len();
        if self.next >= n {
            return None;
        }
        // SAFETY: entries below `n` were written in the constructor.
        let score = |s: &Scores, i: usize| unsafe { s[i].assume_init() };
        let slice = self.moves.as_mut_slice();
        let mut best = self.next;
        let mut best_score = score(&self.scores, best);
        for i in self.next + 1..n {
            let v = score(&self.scores, i);
            if v > best_score {
                best = i;
                best_score = v;
            }
        }
        slice.swap(self.next, best);
        self.scores.swap(self.next, best);
        let r = (slice[self.next], best_score);
        self.next += 1;
        Some(r)
    }

    /// Ordering score threshold above which a move is a killer (or better).
    pub const KILLER: i32 = KILLER_SCORE;
}
