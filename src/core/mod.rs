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
pub use jieqi::{Arbiter, CaptureReveal, JieqiRules};
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
    #[error("'{0}' moves a dark piece: it needs the revealed kind as a suffix (like h2e2N)")]
    MissingReveal(String),
    #[error("'{text}': {why}")]
    BadSuffix { text: String, why: String },
}

impl Position {
    /// Parses a move in coordinates (`h2e2`; ICCS `H2-E2` too) and checks it is legal here.
    ///
    /// Jieqi suffixes (RULES.md): a dark mover must carry its revealed kind (`h2e2N`), which its
    /// pool must hold; the capture of a dark piece may carry the kind learned (`b7b0r`); both
    /// in that order (`h2h9Cr`). Letter case gives the colour. A plain `h2e2` for a dark mover is
    /// refused rather than guessed: the position after it depends on the reveal.
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
        let mut m = Move::new(from, to);
        if !self.is_legal(m) {
            return Err(MoveError::Illegal(t.to_string()));
        }
        let bad = |why: String| MoveError::BadSuffix {
            text: t.to_string(),
            why,
        };
        let us = self.side_to_move();
        // One suffix letter, checked against the colour and pool it belongs to.
        let kind_for = |c: char, color: Color, what: &str| -> Result<PieceType, MoveError> {
            let p =
                Piece::from_letter(c).ok_or_else(|| bad(format!("'{c}' is not a piece letter")))?;
            if p.color != color {
                return Err(bad(format!(
                    "the {what} letter '{c}' must be {} for {color:?}",
                    if color == Color::Red {
                        "upper case"
                    } else {
                        "lower case"
                    }
                )));
            }
            if self.pool_count(color, p.kind) == 0 {
                return Err(bad(format!(
                    "{color:?}'s pool holds no {} to be the {what}",
                    p.kind.name()
                )));
            }
            Ok(p.kind)
        };
        let mut chars = cleaned[4..].chars();
        if self.is_dark(from) {
            match chars.next() {
                Some(c) => m = m.with_reveal(kind_for(c, us, "revealed")?),
                None => return Err(MoveError::MissingReveal(t.to_string())),
            }
        }
        if let Some(c) = chars.next() {
            if !self.is_dark(to) {
                return Err(bad(format!(
                    "'{c}' names a captured dark piece, but {to} holds none"
                )));
            }
            m = m.with_captured_reveal(kind_for(c, us.flip(), "captured")?);
        }
        if let Some(c) = chars.next() {
            return Err(bad(format!("unexpected '{c}' after the move")));
        }
        Ok(m)
    }
}
