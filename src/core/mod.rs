//! The rules of Xiangqi and Jieqi. Depends on nothing above it (no evaluation, no search).

pub mod attacks;
pub mod fen;
pub mod jieqi;
pub mod movegen;
pub mod notation;
pub mod perft;
pub mod position;
pub mod rules;
pub mod see;
pub mod types;
pub mod zobrist;

pub use attacks::Bitboard;
pub use fen::{FenError, Setup};
pub use movegen::MoveList;
pub use notation::{ChineseStyle, NotationError, Script};
pub use position::{Position, START_FEN, State, Variant};
pub use rules::{GameResult, Outcome, Reason, Repetition};
pub use types::{Color, Move, Piece, PieceType, Square};

use thiserror::Error;

/// Why a move in coordinate notation was refused.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum MoveError {
    #[error("'{0}' is not a move in coordinate notation (like h2e2)")]
    Syntax(String),
    #[error("'{0}' is not legal in this position")]
    Illegal(String),
}

impl Position {
    /// Parses a move in coordinates (`h2e2`; ICCS `H2-E2` too) and checks it is legal here.
    /// Jieqi suffixes (`h2e2N`, `b7b0r`, `h2h9Cr`) are read by the Jieqi layer.
    pub fn parse_move(&self, text: &str) -> Result<Move, MoveError> {
        let t = text.trim();
        let cleaned: String = t.chars().filter(|&c| c != '-').collect();
        if cleaned.len() < 4 || !cleaned.is_ascii() {
            return Err(MoveError::Syntax(t.to_string()));
        }
        let (from, to) = match (Square::parse(&cleaned[0..2]), Square::parse(&cleaned[2..4])) {
            (Some(f), Some(s)) => (f, s),
            _ => return Err(MoveError::Syntax(t.to_string())),
        };
        let suffix = &cleaned[4..];
        let mut m = Move::new(from, to);
        if !self.is_legal(m) {
            return Err(MoveError::Illegal(t.to_string()));
        }
        let mover_dark = self.dark() & from.bb() != 0;
        let target_dark = self.dark() & to.bb() != 0;
        let mut chars = suffix.chars().peekable();
        if mover_dark {
            match chars.next().and_then(PieceType::from_letter) {
                Some(k) => m = m.with_reveal(k),
                None if suffix.is_empty() => {}
                None => return Err(MoveError::Syntax(t.to_string())),
            }
        }
        if let Some(c) = chars.next() {
            match PieceType::from_letter(c) {
                Some(k) if target_dark => m = m.with_captured_reveal(k),
                _ => return Err(MoveError::Syntax(t.to_string())),
            }
        }
        if chars.next().is_some() {
            return Err(MoveError::Syntax(t.to_string()));
        }
        Ok(m)
    }
}
