//! The Jieqi board of the referee ([`super::game::play_game`]): a game from a seeded deal,
//! refereed by the rules core's [`Arbiter`]. The arbiter knows every identity, and each side's
//! engine is asked to move in its own view ([`Arbiter::view`]) with only the moves as it was
//! told them, so no engine can see a hidden identity. The capture-reveal rule decides what each
//! side learns from captures of dark pieces (docs/jieqi-rules.md rule 5).
//!
//! Each engine is sent its view as one FEN with the pool and no moves (`position fen <view>`,
//! the convention of Pikafish's Jieqi branches and JieqiBox), and the in-process player searches
//! exactly that position, history-free, so a seeded match gives the same games whether a side
//! plays in-process or as an external `xqtune uci`.
//!
//! The record keeps the full truth: `opening_fen` is the deal with its hidden field (the PGN's
//! `[FEN]` tag replays it exactly) and the moves carry their reveal suffixes.

use super::game::{Board, BoardRecord, GoRequest, MoveLimits};
use crate::core::arbiter::{Arbiter, CaptureReveal, deal};
use crate::core::{Color, Position};
use crate::util::{GOLDEN_GAMMA, splitmix_finalise};

/// The deal of pair `pair` in a match with `seed` (SplitMix64 of the two, so neighbouring
/// pairs get unrelated deals and every machine the same ones).
pub fn deal_seed(seed: u64, pair: usize) -> u64 {
    splitmix_finalise(
        seed.wrapping_mul(GOLDEN_GAMMA)
            .wrapping_add(pair as u64 + 1),
    )
}

/// A Jieqi game of one deal: the arbiter holds the truth, each side is told its own view.
pub(super) struct DealBoard {
    seed: u64,
    deal_fen: String,
    arbiter: Arbiter,
    /// What the side to move is told: its view's FEN and that FEN read back (no history).
    told_fen: String,
    told: Position,
}

impl DealBoard {
    pub(super) fn new(seed: u64, rule: CaptureReveal) -> Self {
        let arbiter = Arbiter::from_seed(seed, rule);
        let (told_fen, told) = told(&arbiter);
        DealBoard {
            seed,
            deal_fen: deal(seed).to_fen(),
            arbiter,
            told_fen,
            told,
        }
    }
}

/// The side to move's view as a FEN, and that FEN as a position without history (also what
/// `xqtune datagen --variant jieqi` searches and records).
pub(crate) fn told(arbiter: &Arbiter) -> (String, Position) {
    let view = arbiter.view(arbiter.truth().side_to_move());
    let fen = view.to_fen();
    // A view always reads back (to_fen and from_fen round-trip); should it not, the view
    // itself, with its history, is the closest thing to what the engine is told.
    let pos = Position::from_fen(&fen).unwrap_or_else(|_| view.clone());
    (fen, pos)
}

impl Board for DealBoard {
    fn truth(&self) -> &Position {
        self.arbiter.truth()
    }

    fn engine_plies(&self) -> usize {
        self.arbiter.truth_moves().len()
    }

    fn request<'a>(
        &'a self,
        us: Color,
        limits: &'a MoveLimits,
        clocks: Option<[u64; 2]>,
    ) -> GoRequest<'a> {
        debug_assert_eq!(us, self.arbiter.truth().side_to_move());
        GoRequest {
            start_fen: &self.told_fen,
            moves: &[],
            pos: &self.told,
            limits,
            clocks,
        }
    }

    /// The engine's move is read in its own view; the arbiter adds the truth. `bestmove` is
    /// the plain four characters, so it is matched by squares.
    fn play(&mut self, mv: &str) -> bool {
        let us = self.arbiter.truth().side_to_move();
        let chosen = self
            .arbiter
            .view(us)
            .legal_moves()
            .iter()
            .copied()
            .find(|m| m.uci() == mv.trim());
        let played = chosen.is_some_and(|m| self.arbiter.play(m).is_ok());
        if played {
            (self.told_fen, self.told) = told(&self.arbiter);
        }
        played
    }

    fn record(&self) -> BoardRecord {
        BoardRecord {
            opening_fen: self.deal_fen.clone(),
            opening_moves: Vec::new(),
            start_fen: self.deal_fen.clone(),
            moves: self.arbiter.truth_moves().to_vec(),
            deal_seed: Some(self.seed),
        }
    }
}
