//! Jieqi (揭棋): the rule data the position is built on: home squares (the kind a dark piece
//! moves as), rule options, start FENs and the reveal suffixes of move text. It depends on the
//! basic types only; the pool bookkeeping of make/unmake lives in `position.rs`, the pool and
//! hidden FEN fields in `fen.rs`, reveal outcomes in `movegen.rs` and the referee in
//! `arbiter.rs`.
//!
//! The rules are those of `docs/jieqi-rules.md` (Pikafish jieqi branch / JieqiBox conventions).
//! A dark piece sits on the board with the kind of its home square, which is the kind it moves
//! as; after its first move it is turned face up with a kind drawn from its side's pool.
//!
//! # Knowledge model
//! A [`Position`](crate::core::Position) is always *one viewer's* knowledge:
//! - `pool[c]` is the multiset of `c`'s identities the viewer has not seen: the dark pieces
//!   still on the board plus dark pieces captured without the viewer learning what they were.
//!   So `pool_total(c) >= dark_count(c)`, and the excess is "captured unseen".
//! - `hidden` (arbiter and tests only) names the true identity of dark pieces. Search code must
//!   never read it; the engine's positions come from [`Arbiter::view`](crate::core::Arbiter::view) where it is all unknown.
//!
//! A reveal (`h2e2N`) is public: the kind leaves the mover's pool in every view. The capture of a
//! dark piece removes its kind from the victim's pool only in the views that learn it (a move
//! carrying [`Move::captured_reveal`]); who learns it is the
//! [`CaptureReveal`](crate::core::CaptureReveal) option. The
//! arbiter's own position knows everything, so its pool is exactly the identities of the dark
//! pieces on the board and every capture of a dark piece carries the true kind.

use super::types::*;

/// The Jieqi start as a viewer sees it: every piece but the kings face down, full pools.
pub const JIEQI_START_FEN: &str =
    "xxxxkxxxx/9/1x5x1/x1x1x1x1x/9/9/X1X1X1X1X/1X5X1/9/XXXXKXXXX w R2A2C2P5N2B2r2a2c2p5n2b2 0 1";

/// Bright Jieqi: the Xiangqi start, all face up, with Jieqi's freedom for advisors/elephants.
pub const BRIGHT_JIEQI_START_FEN: &str =
    "rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C5C1/9/RNBAKABNR w - 0 1";

/// Default no-capture draw limit of Jieqi in plies (docs/jieqi-rules.md rule 6).
pub const NO_CAPTURE_LIMIT: u16 = 80;
/// The optional longer limit (the Xiangqi value).
pub const NO_CAPTURE_LIMIT_LONG: u16 = 120;

/// Jieqi rule options, stored in the position (they are not part of the FEN). Who learns a
/// captured dark piece's identity is the arbiter's business (`CaptureReveal`), not the
/// position's: a position only records what its viewer learned, in the moves it was given.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct JieqiRules {
    /// Plies without a capture after which the game is drawn (80, or 120 as an option).
    pub no_capture_limit: u16,
}

impl Default for JieqiRules {
    fn default() -> Self {
        JieqiRules {
            no_capture_limit: NO_CAPTURE_LIMIT,
        }
    }
}

/// The Xiangqi kind whose start square `sq` is for `color`, if any (the kind a dark piece on it
/// moves as). `King` for the king's square, which never holds a dark piece.
pub fn home_kind(color: Color, sq: usize) -> Option<PieceType> {
    let s = Square(sq as u8);
    let (f, r) = (s.file(), s.rank());
    let r = if color == Color::Red { r } else { 9 - r };
    match (r, f) {
        (0, 0) | (0, 8) => Some(PieceType::Rook),
        (0, 1) | (0, 7) => Some(PieceType::Horse),
        (0, 2) | (0, 6) => Some(PieceType::Elephant),
        (0, 3) | (0, 5) => Some(PieceType::Advisor),
        (0, 4) => Some(PieceType::King),
        (2, 1) | (2, 7) => Some(PieceType::Cannon),
        (3, 0) | (3, 2) | (3, 4) | (3, 6) | (3, 8) => Some(PieceType::Pawn),
        _ => None,
    }
}

/// The kind a dark piece of `color` may stand on `sq` as: its home kind, never the king's.
pub fn dark_home_kind(color: Color, sq: usize) -> Option<PieceType> {
    home_kind(color, sq).filter(|&k| k != PieceType::King)
}

/// The 15 squares where `color` starts with a dark piece, in board-index order.
pub fn dark_home_squares(color: Color) -> impl Iterator<Item = usize> {
    (0..90).filter(move |&s| dark_home_kind(color, s).is_some())
}

/// Writes a move with its Jieqi suffixes: the revealed kind of a dark mover in the mover's case,
/// then the learned kind of a captured dark piece in the victim's case (`h2e2N`, `b7b0r`,
/// `h2h9Cr`). A move without suffixes is the plain four characters.
pub fn format_move(m: Move, mover: Color) -> String {
    let mut s = m.uci();
    if m.is_null() {
        return "0000".into();
    }
    if let Some(k) = m.reveal() {
        s.push(Piece::new(mover, k).letter());
    }
    if let Some(k) = m.captured_reveal() {
        s.push(Piece::new(mover.flip(), k).letter());
    }
    s
}
