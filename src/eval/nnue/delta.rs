//! What a move changes on the board, in the terms the feature sets read: the pieces it takes
//! off their squares and the pieces it puts on. An accumulator is updated from its parent by
//! subtracting the removed pieces' weight rows and adding the added ones (the "efficiently
//! updatable" of NNUE, Nasu 2018), instead of summing every piece again. In Jieqi a reveal
//! also takes an identity out of a pool, which a [`Placement`] names too ([`Placement::pool`]).

use crate::core::{Color, Move, PieceType, Position, Square};

/// A piece on a square as the feature sets see it, or (Jieqi) one identity in a pool: what a
/// [`FeatureDelta`] adds and removes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Placement {
    pub color: Color,
    /// For a Jieqi dark piece, the kind it moves as (its home square's kind).
    pub kind: PieceType,
    pub square: Square,
    /// Jieqi: the piece is face down. The Xiangqi feature sets ignore it (a dark piece counts as
    /// the kind it moves as); a Jieqi set gives dark pieces their own planes.
    pub dark: bool,
    /// Jieqi: 0 for a piece on the board; `n >= 1` for "`color`'s pool holds at least `n`
    /// of `kind`" (`square` unused), the input a reveal of the `n`-th one switches off. Only
    /// Jieqi positions have pools, and only Jieqi feature sets read these.
    pub pool: u8,
}

impl Placement {
    /// A face-up piece.
    pub const fn new(color: Color, kind: PieceType, square: Square) -> Placement {
        Placement {
            color,
            kind,
            square,
            dark: false,
            pool: 0,
        }
    }

    /// A piece on a square, face up or (`dark`) face down.
    pub const fn on_board(color: Color, kind: PieceType, square: Square, dark: bool) -> Placement {
        Placement {
            color,
            kind,
            square,
            dark,
            pool: 0,
        }
    }

    /// "`color`'s pool holds at least `n` of `kind`" (`n >= 1`).
    pub const fn pool_entry(color: Color, kind: PieceType, n: u8) -> Placement {
        Placement {
            color,
            kind,
            square: Square(0),
            dark: false,
            pool: n,
        }
    }

    /// Whether this names a pool entry rather than a piece on the board.
    #[inline(always)]
    pub const fn is_pool(&self) -> bool {
        self.pool != 0
    }
}

/// The pieces one move removes and adds: a quiet move removes the mover from its square and
/// adds it on the target; a capture also removes the victim; a Jieqi reveal removes the dark
/// piece, adds the revealed kind and takes that identity's entry out of the mover's pool (a dark
/// capture whose identity the capturer learns takes one out of the victim's pool too). A null
/// move changes nothing ([`FeatureDelta::NONE`]). Room for four removals and two additions, the
/// most a Xiangqi or Jieqi move needs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FeatureDelta {
    removed: [Placement; 4],
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
        removed: [Self::FILLER; 4],
        added: [Self::FILLER; 2],
        removed_len: 0,
        added_len: 0,
    };

    /// Records that `piece` leaves the board (or its pool). Panics past four removals (no move
    /// has more).
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
/// holds that kind, else the fallback `make_move` uses ([`Position::normalize_move`]), and the
/// pool entries that `make_move` takes out go with it. The null move gives
/// [`FeatureDelta::NONE`].
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
    delta.remove(Placement::on_board(
        mover.color,
        mover.kind,
        from,
        dark_mover,
    ));
    let dark_victim = pos.is_dark(to);
    if let Some(victim) = pos.piece_at(to) {
        delta.remove(Placement::on_board(
            victim.color,
            victim.kind,
            to,
            dark_victim,
        ));
    }
    if !dark_mover && !dark_victim {
        delta.add(Placement::new(mover.color, mover.kind, to));
        return delta;
    }
    // As in `make_move`: the normalised move carries the reveals that apply.
    let m = pos.normalize_move(m);
    let kind = if dark_mover {
        let kind = m.reveal().unwrap_or(PieceType::King);
        let n = pos.pool_count(mover.color, kind);
        if n > 0 {
            delta.remove(Placement::pool_entry(mover.color, kind, n as u8));
        }
        kind
    } else {
        mover.kind
    };
    if dark_victim && let Some(k) = m.captured_reveal() {
        let them = mover.color.flip();
        let n = pos.pool_count(them, k);
        if n > 0 {
            delta.remove(Placement::pool_entry(them, k, n as u8));
        }
    }
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
    fn jieqi_reveal_removes_the_dark_piece_and_its_pool_entry() {
        let pos = Position::jieqi_startpos();
        // The dark piece on h2 (home kind cannon) moves and shows a rook: red's pool held two.
        let m = Move::new(Square::new(7, 2), Square::new(4, 2)).with_reveal(PieceType::Rook);
        let d = delta_of(&pos, m);
        assert_eq!(
            d.removed(),
            &[
                Placement::on_board(Color::Red, PieceType::Cannon, Square::new(7, 2), true),
                Placement::pool_entry(Color::Red, PieceType::Rook, 2),
            ]
        );
        assert_eq!(
            d.added(),
            &[Placement::new(
                Color::Red,
                PieceType::Rook,
                Square::new(4, 2)
            )]
        );
        // The pieces the delta names are the ones that change: the position after the move
        // has red's pool one rook short.
        let mut after = pos.clone();
        after.make_move(m);
        assert_eq!(after.pool_count(Color::Red, PieceType::Rook), 1);
    }

    #[test]
    fn jieqi_reveal_capture_of_a_dark_piece_learns_its_identity() {
        // h2 (a dark "cannon") takes the dark h9 horse square's piece straight up the file,
        // shows a rook, and learns the victim is a black cannon.
        let pos = Position::jieqi_startpos();
        let m = Move::new(Square::new(7, 2), Square::new(7, 9))
            .with_reveal(PieceType::Rook)
            .with_captured_reveal(PieceType::Cannon);
        let d = delta_of(&pos, m);
        assert_eq!(
            d.removed(),
            &[
                Placement::on_board(Color::Red, PieceType::Cannon, Square::new(7, 2), true),
                Placement::on_board(Color::Black, PieceType::Horse, Square::new(7, 9), true),
                Placement::pool_entry(Color::Red, PieceType::Rook, 2),
                Placement::pool_entry(Color::Black, PieceType::Cannon, 2),
            ]
        );
        assert_eq!(
            d.added(),
            &[Placement::new(
                Color::Red,
                PieceType::Rook,
                Square::new(7, 9)
            )]
        );
    }
}
