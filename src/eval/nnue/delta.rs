//! What a move changes on the board, in the terms the feature sets read: the pieces it takes
//! off their squares and the pieces it puts on. An accumulator is updated from its parent by
//! subtracting the removed pieces' weight rows and adding the added ones (the "efficiently
//! updatable" of NNUE, Nasu 2018), instead of summing every piece again.

use crate::core::{Color, Move, PieceType, Position, Square};

/// A piece on a square as the feature sets see it: what a [`FeatureDelta`] adds and removes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Placement {
    pub color: Color,
    /// For a Jieqi dark piece, the kind it moves as (its home square's kind).
    pub kind: PieceType,
    pub square: Square,
    /// Jieqi: the piece is face down. The Xiangqi feature sets ignore it (a dark piece counts as
    /// the kind it moves as); a Jieqi set gives dark pieces their own planes.
    pub dark: bool,
}

impl Placement {
    /// A face-up piece.
    pub const fn new(color: Color, kind: PieceType, square: Square) -> Placement {
        Placement {
            color,
            kind,
            square,
            dark: false,
        }
    }
}

/// The pieces one move removes and adds: a quiet move removes the mover from its square and
/// adds it on the target; a capture also removes the victim; a Jieqi reveal removes the dark
/// piece and adds the revealed kind. A null move changes nothing ([`FeatureDelta::NONE`]).
/// Room for two of each, the most a Xiangqi or Jieqi move needs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FeatureDelta {
    removed: [Placement; 2],
    added: [Placement; 2],
    removed_len: u8,
    added_len: u8,
}

impl Default for FeatureDelta {
    fn default() -> Self {
        FeatureDelta::NONE
    }
}

impl FeatureDelta {
    const FILLER: Placement = Placement::new(Color::Red, PieceType::King, Square(0));

    /// No change: what a null move pushes.
    pub const NONE: FeatureDelta = FeatureDelta {
        removed: [Self::FILLER; 2],
        added: [Self::FILLER; 2],
        removed_len: 0,
        added_len: 0,
    };

    /// Records that `piece` leaves the board. Panics past two removals (no move has more).
    #[inline]
    pub fn remove(&mut self, piece: Placement) {
        self.removed[self.removed_len as usize] = piece;
        self.removed_len += 1;
    }

    /// Records that `piece` appears on the board. Panics past two additions.
    #[inline]
    pub fn add(&mut self, piece: Placement) {
        self.added[self.added_len as usize] = piece;
        self.added_len += 1;
    }

    #[inline(always)]
    pub fn removed(&self) -> &[Placement] {
        &self.removed[..self.removed_len as usize]
    }

    #[inline(always)]
    pub fn added(&self) -> &[Placement] {
        &self.added[..self.added_len as usize]
    }

    #[inline(always)]
    pub fn is_empty(&self) -> bool {
        self.removed_len == 0 && self.added_len == 0
    }
}

/// The delta of playing `m` in `pos`, computed from the position *before* the move, so the
/// search can call `stack.push(delta_of(&pos, m))` right before `pos.make_move(m)`.
///
/// `m` must be legal in `pos` (a move from an empty square is a caller's bug and panics). A
/// Jieqi dark mover shows the kind `make_move` will reveal: the move's own reveal when its pool
/// holds that kind, else the fallback `make_move` uses ([`Position::normalize_move`]). The null
/// move gives [`FeatureDelta::NONE`].
#[inline]
pub fn delta_of(pos: &Position, m: Move) -> FeatureDelta {
    let mut delta = FeatureDelta::NONE;
    if m.is_null() {
        return delta;
    }
    let (from, to) = (m.from(), m.to());
    let mover = pos
        .piece_at(from)
        .expect("delta_of: the move's from square is empty (moves must be legal in pos)");
    let dark_mover = pos.is_dark(from);
    delta.remove(Placement {
        color: mover.color,
        kind: mover.kind,
        square: from,
        dark: dark_mover,
    });
    if let Some(victim) = pos.piece_at(to) {
        delta.remove(Placement {
            color: victim.color,
            kind: victim.kind,
            square: to,
            dark: pos.is_dark(to),
        });
    }
    let kind = if dark_mover {
        // As in `make_move`: the normalised move always carries the reveal of a dark mover.
        pos.normalize_move(m).reveal().unwrap_or(PieceType::King)
    } else {
        mover.kind
    };
    delta.add(Placement::new(mover.color, kind, to));
    delta
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quiet_move_and_capture() {
        let pos = Position::startpos();
        // h2e2: the red cannon to the centre.
        let m = Move::new(Square::new(7, 2), Square::new(4, 2));
        let d = delta_of(&pos, m);
        let cannon = |sq| Placement::new(Color::Red, PieceType::Cannon, sq);
        assert_eq!(d.removed(), &[cannon(Square::new(7, 2))]);
        assert_eq!(d.added(), &[cannon(Square::new(4, 2))]);
        // h2h9: the cannon takes the black horse.
        let m = Move::new(Square::new(7, 2), Square::new(7, 9));
        let d = delta_of(&pos, m);
        assert_eq!(
            d.removed(),
            &[
                cannon(Square::new(7, 2)),
                Placement::new(Color::Black, PieceType::Horse, Square::new(7, 9))
            ]
        );
        assert_eq!(d.added(), &[cannon(Square::new(7, 9))]);
        assert!(delta_of(&pos, Move::NULL).is_empty());
    }

    #[test]
    fn jieqi_reveal_removes_the_dark_piece() {
        let pos = Position::jieqi_startpos();
        // The dark piece on h2 (home kind cannon) moves and shows a rook.
        let m = Move::new(Square::new(7, 2), Square::new(4, 2)).with_reveal(PieceType::Rook);
        let d = delta_of(&pos, m);
        assert_eq!(
            d.removed(),
            &[Placement {
                color: Color::Red,
                kind: PieceType::Cannon,
                square: Square::new(7, 2),
                dark: true
            }]
        );
        assert_eq!(
            d.added(),
            &[Placement::new(
                Color::Red,
                PieceType::Rook,
                Square::new(4, 2)
            )]
        );
    }
}
