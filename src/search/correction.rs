//! Correction history (Stockfish's pawn, material and non-pawn correction): how far the
//! search's results have come out from the static evaluation in positions with the same pawn
//! structure, with the same material, and (with `corr_non_pawn` on) with the same placement of
//! one side's other pieces, by side to move. The static evaluation the search prunes by is
//! corrected by the mean of the tables in use; the transposition table keeps the uncorrected
//! one, since the correction keeps learning.

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
    /// By the colour whose pieces key the entry: `non_pawn[c][slot]`.
    non_pawn: [Box<[i32]>; 2],
}

/// The table slots of a position: pawn, material, and the two sides' non-pawn placements
/// where those tables are in use.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Slots(usize, usize, Option<[usize; 2]>);

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
            non_pawn: [(); 2].map(|_| vec![0; 2 * SIZE].into_boxed_slice()),
        }
    }

    pub fn clear(&mut self) {
        self.pawn.fill(0);
        self.material.fill(0);
        self.non_pawn.iter_mut().for_each(|t| t.fill(0));
    }

    /// The slots of `pos`: its pawns (face-down pieces count as structure too, being where
    /// they started) and its piece counts per colour and kind, face-down pieces apart; with
    /// `non_pawn`, also where each side's pieces other than pawns stand, by kind.
    #[inline]
    pub fn slots(pos: &Position, non_pawn: bool) -> Slots {
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
        let non_pawn = non_pawn.then(|| {
            [Color::Red, Color::Black].map(|c| {
                // One multiply per kind's halves and one mix at the end: the slot is an index
                // into 2^14 entries, not a key to verify.
                let mut h = (pos.dark() & pos.pieces(c)) as u64;
                for (i, k) in PieceType::ALL.into_iter().enumerate() {
                    if k == PieceType::Pawn {
                        continue;
                    }
                    let b = pos.pieces_of(c, k);
                    h = h.rotate_left(11)
                        ^ (b as u64).wrapping_mul(ODD[2 * i])
                        ^ ((b >> 64) as u64).wrapping_mul(ODD[2 * i + 1]);
                }
                side + (mix(h) as usize & (SIZE - 1))
            })
        });
        Slots(
            side + (pawns as usize & (SIZE - 1)),
            side + (mix(counts) as usize & (SIZE - 1)),
            non_pawn,
        )
    }

    /// The correction in centipawns for a position with these slots: the mean of the tables'
    /// estimates.
    #[inline]
    pub fn correction(&self, s: Slots) -> i32 {
        match s.2 {
            None => (self.pawn[s.0] + self.material[s.1]) / (2 * GRAIN),
            Some([r, b]) => {
                (self.pawn[s.0] + self.material[s.1] + self.non_pawn[0][r] + self.non_pawn[1][b])
                    / (4 * GRAIN)
            }
        }
    }

    /// Moves the entry of each table in use toward `diff` (search result minus the
    /// uncorrected static evaluation, centipawns), the more the deeper the search was: each
    /// table keeps a running average of what its positions' evaluations missed by.
    pub fn update(&mut self, s: Slots, diff: i32, depth: i32) {
        let weight = (depth + 1).clamp(1, 16);
        let target = diff.clamp(-LIMIT_CP, LIMIT_CP) * GRAIN;
        let toward = |e: &mut i32| {
            let v = (*e * (WEIGHT_SCALE - weight) + target * weight) / WEIGHT_SCALE;
            *e = v.clamp(-LIMIT_CP * GRAIN, LIMIT_CP * GRAIN);
        };
        toward(&mut self.pawn[s.0]);
        toward(&mut self.material[s.1]);
        if let Some([r, b]) = s.2 {
            toward(&mut self.non_pawn[0][r]);
            toward(&mut self.non_pawn[1][b]);
        }
    }
}

/// Odd multipliers (from splitmix64's and xxHash's constants), two per piece kind.
const ODD: [u64; 14] = [
    0x9e37_79b9_7f4a_7c15,
    0xbf58_476d_1ce4_e5b9,
    0x94d0_49bb_1331_11eb,
    0xc2b2_ae3d_27d4_eb4f,
    0x1656_67b1_9e37_79f9,
    0x85eb_ca77_c2b2_ae63,
    0x27d4_eb2f_1656_67c5,
    0x9e37_79b1_85eb_ca87,
    0xd6e8_feb8_6659_fd93,
    0xa076_1d64_78bd_642f,
    0xe703_7ed1_a0b4_28db,
    0x8ebc_6af0_9c88_c6e3,
    0x5899_65cc_7537_4cc3,
    0x1d8e_4e27_c47d_124f,
];

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
        let s = Correction::slots(&start, false);
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
        let t = Correction::slots(&p, false);
        assert_ne!(t.0 % SIZE, s.0 % SIZE);
        assert_ne!(t.1, s.1);
        assert_eq!(t.1 % SIZE, s.1 % SIZE);
        // The same position reached another way has the same slots.
        let mut q = start.clone();
        let m = q.parse_move("c3c4").unwrap();
        q.make_move(m);
        assert_eq!(Correction::slots(&q, false), t);
    }

    /// The non-pawn slots follow each side's own pieces: a horse move moves red's slot and
    /// leaves black's, a pawn move leaves both (and moves the pawn slot); a position reached
    /// two ways has one set of slots; without the tables the slots have none.
    #[test]
    fn non_pawn_slots_follow_each_sides_pieces() {
        let start = Position::startpos();
        let s = Correction::slots(&start, true);
        assert_eq!(Correction::slots(&start, false).2, None);
        let [red, black] = s.2.unwrap();
        let after = |moves: &[&str]| {
            let mut p = start.clone();
            for m in moves {
                let m = p.parse_move(m).unwrap();
                p.make_move(m);
            }
            Correction::slots(&p, true)
        };
        // Black to move after one red move: the slots of the other side to move.
        let [r, b] = after(&["b0c2"]).2.unwrap();
        assert_ne!(r % SIZE, red % SIZE);
        assert_eq!(b % SIZE, black % SIZE);
        assert_ne!(b, black);
        let [r, b] = after(&["c3c4"]).2.unwrap();
        assert_eq!((r % SIZE, b % SIZE), (red % SIZE, black % SIZE));
        assert_eq!(
            after(&["b0c2", "b9c7", "h0g2"]),
            after(&["h0g2", "b9c7", "b0c2"])
        );
        // Four tables agree on 40: the mean is 40 with or without the non-pawn pair.
        let mut c = Correction::new();
        for _ in 0..500 {
            c.update(s, 40, 15);
        }
        assert_eq!(
            c.correction(s),
            c.correction(Correction::slots(&start, false))
        );
        assert!((35..=40).contains(&c.correction(s)));
    }

    /// With `qs_corrected` on, quiescence stands pat on the static evaluation plus the
    /// correction its slots hold, exactly; with it off, on the static evaluation alone.
    #[test]
    fn quiescence_stands_pat_on_the_corrected_evaluation() {
        use crate::eval::EvalParams;
        use crate::search::{INF, SearchParams, Searcher};
        use std::sync::Arc;
        // Red to move has no capture: quiescence's value is its stand-pat.
        let fen = "3k5/9/9/9/9/9/4P4/9/9/4K4 w - - 0 1";
        let stand_pat = |qs_corrected: i32| {
            let params = SearchParams {
                qs_corrected,
                ..SearchParams::default()
            };
            let mut s = Searcher::new(Arc::new(EvalParams::default()), params, 1);
            let mut pos = Position::from_fen(fen).unwrap();
            let slots = Correction::slots(&pos, false);
            for _ in 0..500 {
                s.corr.update(slots, -30, 15);
            }
            let v = s.qsearch(&mut pos, -INF, INF, 0, false);
            (v, s.corr.correction(slots))
        };
        let (plain, _) = stand_pat(0);
        let (corrected, corr) = stand_pat(1);
        assert!((-30..=-25).contains(&corr), "{corr}");
        assert_eq!(corrected, plain + corr);
    }
}
