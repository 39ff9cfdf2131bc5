//! Correction history (Stockfish's pawn and material correction): how far the search's results
//! have come out from the static evaluation in positions with the same pawn structure, and with
//! the same material, by side to move. The static evaluation the search prunes by is corrected
//! by both; the transposition table keeps the uncorrected one, since the correction keeps
//! learning.

use crate::core::{Color, PieceType, Position};

/// Entries per table and side to move.
const SIZE: usize = 1 << 14;
/// Entries hold centipawns times `GRAIN`, so that small updates are not lost to rounding.
const GRAIN: i32 = 256;
/// The most one table corrects by, in centipawns.
const LIMIT_CP: i32 = 64;
/// Weighted-average denominator of an update (the newest result weighs `depth + 1` out of it,
/// at most 16).
const WEIGHT_SCALE: i32 = 256;

pub struct Correction {
    pawn: Box<[i32]>,
    material: Box<[i32]>,
}

/// The table slots of a position: (pawn, material).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Slots(usize, usize);

#[inline(always)]
fn mix(mut x: u64) -> u64 {
    // splitmix64's finaliser: every input bit reaches every output bit.
    x ^= x >> 30;
    x = x.wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x ^= x >> 27;
    x = x.wrapping_mul(0x94d0_49bb_1331_11eb);
    x ^ (x >> 31)
}

#[inline(always)]
fn hash_bb(b: u128) -> u64 {
    mix(b as u64 ^ mix((b >> 64) as u64 ^ 0x9e37_79b9_7f4a_7c15))
}

impl Correction {
    pub fn new() -> Correction {
        Correction {
            pawn: vec![0; 2 * SIZE].into_boxed_slice(),
            material: vec![0; 2 * SIZE].into_boxed_slice(),
        }
    }

    pub fn clear(&mut self) {
        self.pawn.fill(0);
        self.material.fill(0);
    }

    /// The slots of `pos`: its pawns (face-down pieces count as structure too, being where
    /// they started) and its piece counts per colour and kind, face-down pieces apart.
    #[inline]
    pub fn slots(pos: &Position) -> Slots {
        let side = pos.side_to_move().index() * SIZE;
        let pawns = hash_bb(pos.pieces_of(Color::Red, PieceType::Pawn))
            ^ hash_bb(pos.pieces_of(Color::Black, PieceType::Pawn)).rotate_left(17)
            ^ hash_bb(pos.dark()).rotate_left(41);
        let mut counts = 0u64;
        for c in [Color::Red, Color::Black] {
            let dark = pos.dark() & pos.pieces(c);
            counts = (counts << 4) | dark.count_ones() as u64;
            for k in PieceType::ALL {
                let n = (pos.pieces_of(c, k) & !dark).count_ones() as u64;
                counts = (counts << 4) | n.min(15);
            }
        }
        Slots(
            side + (pawns as usize & (SIZE - 1)),
            side + (mix(counts) as usize & (SIZE - 1)),
        )
    }

    /// The correction in centipawns for a position with these slots: the mean of the two
    /// tables' estimates.
    #[inline]
    pub fn correction(&self, s: Slots) -> i32 {
        (self.pawn[s.0] + self.material[s.1]) / (2 * GRAIN)
    }

    /// Moves both entries toward `diff` (search result minus the uncorrected static
    /// evaluation, centipawns), the more the deeper the search was: each table keeps a running
    /// average of what its positions' evaluations missed by.
    pub fn update(&mut self, s: Slots, diff: i32, depth: i32) {
        let weight = (depth + 1).clamp(1, 16);
        let target = diff.clamp(-LIMIT_CP, LIMIT_CP) * GRAIN;
        for e in [&mut self.pawn[s.0], &mut self.material[s.1]] {
            let v = (*e * (WEIGHT_SCALE - weight) + target * weight) / WEIGHT_SCALE;
            *e = v.clamp(-LIMIT_CP * GRAIN, LIMIT_CP * GRAIN);
        }
    }
}

impl Default for Correction {
    fn default() -> Self {
        Correction::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Updates pull the correction toward the search's results, never past the limit, and
    /// positions that differ in pawns, material or side to move keep their own entries.
    #[test]
    fn correction_learns_within_its_limit() {
        let start = Position::startpos();
        let mut c = Correction::new();
        let s = Correction::slots(&start);
        assert_eq!(c.correction(s), 0);
        for _ in 0..200 {
            c.update(s, 40, 10);
        }
        let v = c.correction(s);
        assert!((35..=40).contains(&v), "{v}");
        for _ in 0..500 {
            c.update(s, 10_000, 20);
        }
        assert!((LIMIT_CP - 2..=LIMIT_CP).contains(&c.correction(s)));
        for _ in 0..500 {
            c.update(s, -10_000, 20);
        }
        assert!((-LIMIT_CP..=-LIMIT_CP + 2).contains(&c.correction(s)));
        c.clear();
        assert_eq!(c.correction(s), 0);

        // A pawn move changes the pawn slot, not the material one; the side to move both.
        let mut p = start.clone();
        let m = p.parse_move("c3c4").unwrap();
        p.make_move(m);
        let t = Correction::slots(&p);
        assert_ne!(t.0 % SIZE, s.0 % SIZE);
        assert_ne!(t.1, s.1);
        assert_eq!(t.1 % SIZE, s.1 % SIZE);
        // The same position reached another way has the same slots.
        let mut q = start.clone();
        let m = q.parse_move("c3c4").unwrap();
        q.make_move(m);
        assert_eq!(Correction::slots(&q), t);
    }
}
