//! Jieqi (揭棋) pieces of the rules core: home squares, reveal expansion for perft.
//! See `docs`/RULES.md: a dark piece moves as the kind of its home square and is revealed after
//! its first move with a kind drawn from its side's pool.

use super::position::Position;
use super::types::*;

/// The Xiangqi kind whose start square `sq` is for `color`, if any (the kind a dark piece on it
/// moves as).
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

impl Position {
    pub(crate) fn jieqi_no_capture_limit(&self) -> u32 {
        80
    }
}

/// The children perft counts: each legal move, and for a dark mover one child per distinct kind
/// still in the mover's pool.
pub fn root_children(pos: &Position) -> Vec<Move> {
    let mut out = Vec::new();
    let us = pos.side_to_move();
    for &m in pos.legal_moves().iter() {
        if pos.dark() & m.from().bb() != 0 {
            for kind in PieceType::ALL {
                if pos.pool_count(us, kind) > 0 {
                    out.push(m.with_reveal(kind));
                }
            }
        } else {
            out.push(m);
        }
    }
    out
}

/// Perft over positions with dark pieces (no bulk counting of dark movers' reveals).
pub fn perft_jieqi(pos: &mut Position, depth: u32) -> u64 {
    if depth == 0 {
        return 1;
    }
    let children = root_children(pos);
    if depth == 1 {
        return children.len() as u64;
    }
    let mut nodes = 0;
    for m in children {
        pos.make_move(m);
        nodes += super::perft::perft(pos, depth - 1);
        pos.unmake_move();
    }
    nodes
}
