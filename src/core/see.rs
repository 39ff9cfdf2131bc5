//! Static exchange evaluation (SEE) on one square, and the "quiet position" test built on it.
//!
//! The exchange is played out with real legal captures (least valuable attacker first, each side
//! free to stop), so pins, flying-general rules and cannon screens that appear or vanish during
//! the exchange are all handled by the move generator instead of by attack-set bookkeeping
//! (<https://www.chessprogramming.org/Static_Exchange_Evaluation>, the recursive "swap" form).
//! It is slower than a bitboard swap list, which is fine for its users: dataset filtering and
//! tests, not the search's inner loop.

use super::position::Position;
use super::types::{Move, PieceType, Square};

/// Material values for exchanges, in centipawns: a common Xiangqi scale (rook 9, cannon and
/// horse 4.5 and 4, advisor and elephant 2, pawn 1). The king is never captured by a legal move;
/// its value only has to exceed everything else.
pub const SEE_VALUES: [i32; 7] = [10_000, 200, 200, 400, 900, 450, 100];

#[inline]
fn value(kind: PieceType) -> i32 {
    SEE_VALUES[kind.index()]
}

impl Position {
    /// Material the side to move wins by playing the legal capture `m` and continuing the
    /// exchange on its target square with best play by both sides (0 for a non-capture).
    pub fn see(&mut self, m: Move) -> i32 {
        let Some(victim) = self.piece_at(m.to()) else {
            return 0;
        };
        self.make_move(m);
        let reply = self.exchange_on(m.to());
        self.unmake_move();
        value(victim.kind) - reply
    }

    /// Best material gain for the side to move from starting (or declining) captures on `sq`.
    fn exchange_on(&mut self, sq: Square) -> i32 {
        let Some(victim) = self.piece_at(sq) else {
            return 0;
        };
        let mut best: Option<(i32, Move)> = None;
        for &c in self.legal_captures().iter() {
            if c.to() != sq {
                continue;
            }
            let Some(attacker) = self.piece_at(c.from()) else {
                continue;
            };
            let v = value(attacker.kind);
            if best.is_none_or(|(bv, _)| v < bv) {
                best = Some((v, c));
            }
        }
        let Some((_, c)) = best else {
            return 0;
        };
        self.make_move(c);
        let gain = value(victim.kind) - self.exchange_on(sq);
        self.unmake_move();
        gain.max(0)
    }

    /// A position is quiet when the side to move is not in check and has no capture that wins
    /// material by static exchange. Texel tuning labels such positions only, because a pending
    /// capture makes the static evaluation meaningless (Texel's tuning method,
    /// <https://www.chessprogramming.org/Texel%27s_Tuning_Method>).
    pub fn is_quiet(&mut self) -> bool {
        if self.in_check() {
            return false;
        }
        let captures = self.legal_captures();
        captures.iter().all(|&m| self.see(m) <= 0)
    }
}

#[cfg(test)]
mod tests {
    use crate::core::Position;

    #[test]
    fn see_counts_defended_and_free_pieces() {
        // Red rook e3 can take a free black horse on e6.
        let mut pos = Position::from_fen("3k5/9/9/4n4/9/9/4R4/9/9/4K4 w").unwrap();
        let m = pos.parse_move("e3e6").unwrap();
        assert_eq!(pos.see(m), 400);
        assert!(!pos.is_quiet());
        // The same horse defended by a black rook on e9: rook for horse loses 500.
        let mut pos = Position::from_fen("3kr4/9/9/4n4/9/9/4R4/9/9/4K4 w").unwrap();
        let m = pos.parse_move("e3e6").unwrap();
        assert_eq!(pos.see(m), 400 - 900);
        assert!(pos.is_quiet());
    }

    #[test]
    fn start_position_is_quiet_and_check_is_not() {
        let mut pos = Position::startpos();
        assert!(pos.is_quiet());
        // Cannon captures the h9 horse, screened by the h7 cannon: the horse is defended by the
        // rook on i9, so cannon (450) for horse (400) loses 50.
        let m = pos.parse_move("h2h9").unwrap();
        assert_eq!(pos.see(m), 400 - 450);
        let mut check = Position::from_fen("4k4/9/9/9/9/9/9/9/4R4/3K5 b").unwrap();
        assert!(!check.is_quiet());
    }
}
