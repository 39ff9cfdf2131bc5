//! Precomputed attack tables, built at compile time.
//!
//! The board is a 90-bit set in a `u128` (bit `rank * 9 + file`). Sliding pieces (rook, cannon,
//! the facing kings) look up one rank and one file at a time: the rank's 9 occupancy bits come
//! straight out of the board set, the file's 10 bits out of a second, file-major occupancy set
//! (bit `file * 10 + rank`) that the position keeps beside the first. Horses, elephants and
//! advisors look up their targets by the occupancy of their 4 leg/eye squares.

pub type Bitboard = u128;

/// All 90 squares.
pub const ALL: Bitboard = (1u128 << 90) - 1;

const fn sq(file: i32, rank: i32) -> i32 {
    if file < 0 || file > 8 || rank < 0 || rank > 9 {
        -1
    } else {
        rank * 9 + file
    }
}

const fn bit(s: i32) -> Bitboard {
    if s < 0 { 0 } else { 1u128 << s }
}

/// The squares of red's half (ranks 0-4) and black's half.
pub const HALF: [Bitboard; 2] = {
    let red = (1u128 << 45) - 1;
    [red, ALL & !red]
};

/// Both palaces: files d-f, ranks 0-2 and 7-9.
pub const PALACE: Bitboard = {
    let mut b = 0;
    let mut r = 0;
    while r < 10 {
        if r <= 2 || r >= 7 {
            let mut f = 3;
            while f <= 5 {
                b |= bit(sq(f, r));
                f += 1;
            }
        }
        r += 1;
    }
    b
};

pub const RANK_MASK: [Bitboard; 10] = {
    let mut t = [0; 10];
    let mut r = 0;
    while r < 10 {
        t[r] = 0x1ffu128 << (r * 9);
        r += 1;
    }
    t
};

pub const FILE_MASK: [Bitboard; 9] = {
    let mut t = [0; 9];
    let mut f = 0;
    while f < 9 {
        let mut r = 0;
        while r < 10 {
            t[f] |= 1u128 << (r * 9 + f);
            r += 1;
        }
        f += 1;
    }
    t
};

/// Slide along a line of `n` cells from `pos` given occupancy `occ` (bit i = cell i occupied).
/// Returns (rook targets incl. first blocker, cannon capture target beyond the screen).
const fn slide(pos: i32, occ: u32, n: i32) -> (u16, u16) {
    let mut rook = 0u16;
    let mut cannon = 0u16;
    let mut dir = -1;
    while dir <= 1 {
        let mut i = pos + dir;
        let mut screen = false;
        while i >= 0 && i < n {
            let occupied = occ & (1 << i) != 0;
            if !screen {
                rook |= 1 << i;
                if occupied {
                    screen = true;
                }
            } else if occupied {
                cannon |= 1 << i;
                break;
            }
            i += dir;
        }
        dir += 2;
    }
    (rook, cannon)
}

/// `table[pos][occ]`: `slide` for every cell of a line of `N` cells and every occupancy
/// (`OCC` = 2^`N`).
const fn slide_table<const N: usize, const OCC: usize>() -> [[(u16, u16); OCC]; N] {
    let mut t = [[(0, 0); OCC]; N];
    let mut pos = 0;
    while pos < N {
        let mut o = 0;
        while o < OCC {
            t[pos][o] = slide(pos as i32, o as u32, N as i32);
            o += 1;
        }
        pos += 1;
    }
    t
}

/// `RANK_SLIDE[file][occ9]`: (rook, cannon) target files along a rank.
static RANK_SLIDE: [[(u16, u16); 512]; 9] = slide_table::<9, 512>();

/// `FILE_SLIDE[rank][occ10]`: (rook, cannon) target ranks along a file.
static FILE_SLIDE: [[(u16, u16); 1024]; 10] = slide_table::<10, 1024>();

/// `SPREAD[ranks10]`: a set of ranks turned into the squares of file a.
static SPREAD: [Bitboard; 1024] = {
    let mut t = [0u128; 1024];
    let mut m = 0;
    while m < 1024 {
        let mut r = 0;
        while r < 10 {
            if m & (1 << r) != 0 {
                t[m] |= 1u128 << (r * 9);
            }
            r += 1;
        }
        m += 1;
    }
    t
};

/// `SQUARE_BB[s]`: the set of square `s` alone (a table load is cheaper than a variable
/// 128-bit shift).
pub static SQUARE_BB: [Bitboard; 90] = {
    let mut t = [0u128; 90];
    let mut s = 0;
    while s < 90 {
        t[s] = 1u128 << s;
        s += 1;
    }
    t
};

/// `ROT_BB[s]`: square `s` in the file-major occupancy set.
pub static ROT_BB: [Bitboard; 90] = {
    let mut t = [0u128; 90];
    let mut s = 0;
    while s < 90 {
        t[s] = 1u128 << ((s % 9) * 10 + s / 9);
        s += 1;
    }
    t
};

/// Index of a square in the file-major occupancy set.
pub const ROT_INDEX: [u8; 90] = {
    let mut t = [0u8; 90];
    let mut s = 0;
    while s < 90 {
        t[s] = ((s % 9) * 10 + s / 9) as u8;
        s += 1;
    }
    t
};

#[inline(always)]
fn line_lookup(s: usize, occ: Bitboard, occ_rot: Bitboard) -> ((u16, u16), (u16, u16)) {
    let r = s / 9;
    let f = s % 9;
    let rank_occ = ((occ >> (r * 9)) as usize) & 0x1ff;
    let file_occ = ((occ_rot >> (f * 10)) as usize) & 0x3ff;
    (RANK_SLIDE[f][rank_occ], FILE_SLIDE[r][file_occ])
}

/// Rook targets from `s` (empty squares up to and including the first piece each way).
#[inline(always)]
pub fn rook_attacks(s: usize, occ: Bitboard, occ_rot: Bitboard) -> Bitboard {
    let ((rank, _), (file, _)) = line_lookup(s, occ, occ_rot);
    let r = s / 9;
    let f = s % 9;
    ((rank as u128) << (r * 9)) | (SPREAD[file as usize] << f)
}

/// Cannon capture targets from `s` (the first piece beyond a screen each way).
#[inline(always)]
pub fn cannon_attacks(s: usize, occ: Bitboard, occ_rot: Bitboard) -> Bitboard {
    let ((_, rank), (_, file)) = line_lookup(s, occ, occ_rot);
    let r = s / 9;
    let f = s % 9;
    ((rank as u128) << (r * 9)) | (SPREAD[file as usize] << f)
}

/// Rook targets and cannon capture targets at once (the cannon's quiet moves are the rook's
/// targets minus the occupied squares).
#[inline(always)]
pub fn rook_and_cannon(s: usize, occ: Bitboard, occ_rot: Bitboard) -> (Bitboard, Bitboard) {
    let ((rr, rc), (fr, fc)) = line_lookup(s, occ, occ_rot);
    let r = s / 9;
    let f = s % 9;
    (
        ((rr as u128) << (r * 9)) | (SPREAD[fr as usize] << f),
        ((rc as u128) << (r * 9)) | (SPREAD[fc as usize] << f),
    )
}

/// Off-board sentinel used in leg tables: bit 90 is never set in an occupancy.
pub const NO_SQ: u8 = 90;

const ORTHO: [(i32, i32); 4] = [(0, 1), (1, 0), (0, -1), (-1, 0)];
const DIAG: [(i32, i32); 4] = [(1, 1), (1, -1), (-1, -1), (-1, 1)];

/// The neighbour of each square in each of the 4 directions `dirs`, `NO_SQ` where off the
/// board.
const fn neighbours(dirs: [(i32, i32); 4]) -> [[u8; 4]; 90] {
    let mut t = [[NO_SQ; 4]; 90];
    let mut s = 0;
    while s < 90 {
        let (f, r) = ((s % 9) as i32, (s / 9) as i32);
        let mut d = 0;
        while d < 4 {
            let n = sq(f + dirs[d].0, r + dirs[d].1);
            if n >= 0 {
                t[s][d] = n as u8;
            }
            d += 1;
        }
        s += 1;
    }
    t
}

/// Orthogonal neighbours of each square (horse legs), `NO_SQ` where off the board.
pub static ORTHO_NEIGHBOURS: [[u8; 4]; 90] = neighbours(ORTHO);

/// Diagonal neighbours of each square (elephant eyes are one further; these are also the legs
/// of horses attacking the square), `NO_SQ` where off the board.
pub static DIAG_NEIGHBOURS: [[u8; 4]; 90] = neighbours(DIAG);

/// The set of the neighbours of each square in the 4 directions `dirs` that lie in `within`.
const fn neighbour_set(dirs: [(i32, i32); 4], within: Bitboard) -> [Bitboard; 90] {
    let n = neighbours(dirs);
    let mut t = [0u128; 90];
    let mut s = 0;
    while s < 90 {
        let mut d = 0;
        while d < 4 {
            if n[s][d] != NO_SQ {
                t[s] |= 1u128 << n[s][d];
            }
            d += 1;
        }
        t[s] &= within;
        s += 1;
    }
    t
}

/// Squares within one diagonal step: the region whose occupancy can change a horse attack on
/// the centre square.
pub static DIAG_MASK: [Bitboard; 90] = neighbour_set(DIAG, ALL);

/// Four occupancy bits taken from the squares in `legs` (off-board squares read as empty).
#[inline(always)]
pub fn leg_bits(legs: &[u8; 4], occ: Bitboard) -> usize {
    let o = occ;
    (((o >> legs[0]) & 1)
        | (((o >> legs[1]) & 1) << 1)
        | (((o >> legs[2]) & 1) << 2)
        | (((o >> legs[3]) & 1) << 3)) as usize
}

/// Which of the 4 neighbours of each square in `dirs` lie on the board, as a 4-bit mask
/// (`leg_bits` reads the off-board ones as empty).
const fn on_board_mask(dirs: [(i32, i32); 4]) -> [u8; 90] {
    let n = neighbours(dirs);
    let mut t = [0u8; 90];
    let mut s = 0;
    while s < 90 {
        let mut d = 0;
        while d < 4 {
            if n[s][d] != NO_SQ {
                t[s] |= 1 << d;
            }
            d += 1;
        }
        s += 1;
    }
    t
}

static ORTHO_ON_BOARD: [u8; 90] = on_board_mask(ORTHO);
static DIAG_ON_BOARD: [u8; 90] = on_board_mask(DIAG);

/// The 21 occupancy bits of squares `s - 10 ..= s + 10` (bit 10 is `s`): one variable shift
/// instead of four.
#[inline(always)]
fn around(s: usize, occ: Bitboard) -> u32 {
    ((occ << 10) >> s) as u32
}

/// `leg_bits(&ORTHO_NEIGHBOURS[s], occ)` (the horse's legs: +9, +1, -9, -1), from one shift.
#[inline(always)]
pub fn ortho_legs(s: usize, occ: Bitboard) -> usize {
    let w = around(s, occ);
    let bits = ((w >> 19) & 1) | ((w >> 10) & 2) | ((w << 1) & 4) | ((w >> 6) & 8);
    (bits & ORTHO_ON_BOARD[s] as u32) as usize
}

/// `leg_bits(&DIAG_NEIGHBOURS[s], occ)` (elephant eyes, horse attackers' legs: +10, -8, -10,
/// +8), from one shift.
#[inline(always)]
pub fn diag_legs(s: usize, occ: Bitboard) -> usize {
    let w = around(s, occ);
    let bits = ((w >> 20) & 1) | ((w >> 1) & 2) | ((w << 2) & 4) | ((w >> 15) & 8);
    (bits & DIAG_ON_BOARD[s] as u32) as usize
}

/// The tables looked up by the occupancy of 4 leg/eye squares: which piece moves how, and
/// through which neighbours of its square.
#[derive(Clone, Copy)]
enum LegTable {
    HorseMoves,
    HorseAttackers,
    ElephantMoves,
}

/// `table[s][legs]`: the targets from `s` through the free ones of its 4 legs (bit `d` of `legs`
/// set: the leg in direction `d` is blocked). A leg off the board leads nowhere.
const fn leg_table(kind: LegTable) -> [[Bitboard; 16]; 90] {
    let dirs = match kind {
        LegTable::HorseMoves => ORTHO,
        LegTable::HorseAttackers | LegTable::ElephantMoves => DIAG,
    };
    let mut t = [[0u128; 16]; 90];
    let mut s = 0;
    while s < 90 {
        let (f, r) = ((s % 9) as i32, (s / 9) as i32);
        let mut m = 0;
        while m < 16 {
            let mut d = 0;
            while d < 4 {
                let (dx, dy) = dirs[d];
                if m & (1 << d) == 0 && sq(f + dx, r + dy) >= 0 {
                    t[s][m] |= match kind {
                        // Two targets beyond each free leg: straight two, then one to either
                        // side.
                        LegTable::HorseMoves => {
                            let (tx, ty) = (f + 2 * dx, r + 2 * dy);
                            if dx == 0 {
                                bit(sq(tx - 1, ty)) | bit(sq(tx + 1, ty))
                            } else {
                                bit(sq(tx, ty - 1)) | bit(sq(tx, ty + 1))
                            }
                        }
                        // The two horses whose leg is this diagonal neighbour.
                        LegTable::HorseAttackers => {
                            bit(sq(f + 2 * dx, r + dy)) | bit(sq(f + dx, r + 2 * dy))
                        }
                        // Across the free eye.
                        LegTable::ElephantMoves => bit(sq(f + 2 * dx, r + 2 * dy)),
                    };
                }
                d += 1;
            }
            m += 1;
        }
        s += 1;
    }
    t
}

/// `HORSE_MOVES[s][legs]`: horse targets from `s` given its 4 leg occupancies (ORTHO order).
pub static HORSE_MOVES: [[Bitboard; 16]; 90] = leg_table(LegTable::HorseMoves);

/// `HORSE_ATTACKERS[s][diag]`: squares from which a horse attacks `s`, given the occupancy of
/// the 4 diagonal neighbours of `s` (DIAG order), which are exactly those horses' legs.
pub static HORSE_ATTACKERS: [[Bitboard; 16]; 90] = leg_table(LegTable::HorseAttackers);

/// `ELEPHANT_MOVES[s][eyes]`: elephant targets from `s` given its eye occupancies (DIAG order),
/// not yet confined to a half (the caller masks, since revealed Jieqi elephants may cross).
pub static ELEPHANT_MOVES: [[Bitboard; 16]; 90] = leg_table(LegTable::ElephantMoves);

/// Advisor targets: the diagonal neighbours (the caller confines them to the palace).
pub static ADVISOR_MOVES: [Bitboard; 90] = DIAG_MASK;

/// King targets: orthogonal neighbours inside a palace.
pub static KING_MOVES: [Bitboard; 90] = neighbour_set(ORTHO, PALACE);

/// `PAWN_MOVES[color][s]`: forward one, and sideways once across the river.
pub static PAWN_MOVES: [[Bitboard; 90]; 2] = {
    let mut t = [[0u128; 90]; 2];
    let mut c = 0;
    while c < 2 {
        let mut s = 0;
        while s < 90 {
            let (f, r) = ((s % 9) as i32, (s / 9) as i32);
            let fwd = if c == 0 { 1 } else { -1 };
            let crossed = if c == 0 { r >= 5 } else { r <= 4 };
            t[c][s] |= bit(sq(f, r + fwd));
            if crossed {
                t[c][s] |= bit(sq(f - 1, r)) | bit(sq(f + 1, r));
            }
            s += 1;
        }
        c += 1;
    }
    t
};

/// `PAWN_ATTACKERS[color][s]`: squares from which a pawn of `color` attacks `s`.
pub static PAWN_ATTACKERS: [[Bitboard; 90]; 2] = {
    let mut t = [[0u128; 90]; 2];
    let mut c = 0;
    while c < 2 {
        let mut from = 0;
        while from < 90 {
            let mut s = 0;
            while s < 90 {
                if PAWN_MOVES[c][from] & (1u128 << s) != 0 {
                    t[c][s] |= 1u128 << from;
                }
                s += 1;
            }
            from += 1;
        }
        c += 1;
    }
    t
};

/// `BETWEEN[a][b]`: the squares strictly between `a` and `b` when they share a rank or file,
/// else empty. Legal move generation counts the pieces between the king and an enemy rook,
/// cannon or king with it (Stockfish's `BetweenBB`; here a cannon needs exactly one screen).
pub static BETWEEN: [[Bitboard; 90]; 90] = {
    let mut t = [[0u128; 90]; 90];
    let mut a = 0;
    while a < 90 {
        let (fa, ra) = ((a % 9) as i32, (a / 9) as i32);
        let mut b = 0;
        while b < 90 {
            let (fb, rb) = ((b % 9) as i32, (b / 9) as i32);
            if a != b && (fa == fb || ra == rb) {
                let (df, dr) = ((fb - fa).signum(), (rb - ra).signum());
                let (mut f, mut r) = (fa + df, ra + dr);
                while f != fb || r != rb {
                    t[a][b] |= bit(sq(f, r));
                    f += df;
                    r += dr;
                }
            }
            b += 1;
        }
        a += 1;
    }
    t
};

/// `HORSE_VIA_LEG[s][i]`: squares from which a horse attacks `s` through the leg
/// `DIAG_NEIGHBOURS[s][i]` (a piece on that leg shields `s` from those horses).
pub static HORSE_VIA_LEG: [[Bitboard; 4]; 90] = {
    let mut t = [[0u128; 4]; 90];
    let mut s = 0;
    while s < 90 {
        let mut i = 0;
        while i < 4 {
            t[s][i] = HORSE_ATTACKERS[s][0] & !HORSE_ATTACKERS[s][1 << i];
            i += 1;
        }
        s += 1;
    }
    t
};

/// The (file, rank) points `pts` of red's side, and the same points mirrored to black's.
const fn points_of_both(pts: &[(i32, i32)]) -> [Bitboard; 2] {
    let mut t = [0u128; 2];
    let mut i = 0;
    while i < pts.len() {
        t[0] |= bit(sq(pts[i].0, pts[i].1));
        t[1] |= bit(sq(pts[i].0, 9 - pts[i].1));
        i += 1;
    }
    t
}

/// Squares an advisor of `color` can ever stand on in Xiangqi (the five palace points).
pub const ADVISOR_SQUARES: [Bitboard; 2] =
    points_of_both(&[(3, 0), (5, 0), (4, 1), (3, 2), (5, 2)]);

/// Squares an elephant of `color` can ever stand on in Xiangqi (seven points of its half).
pub const ELEPHANT_SQUARES: [Bitboard; 2] =
    points_of_both(&[(2, 0), (6, 0), (0, 2), (4, 2), (8, 2), (2, 4), (6, 4)]);

/// Squares a pawn of `color` can ever stand on: its five start files on its own two front
/// ranks, and every square across the river.
pub const PAWN_SQUARES: [Bitboard; 2] = {
    let mut t = [0u128; 2];
    let mut f = 0;
    while f < 9 {
        let mut r = 0;
        while r < 10 {
            if (f % 2 == 0 && (r == 3 || r == 4)) || r >= 5 {
                t[0] |= bit(sq(f, r));
            }
            if (f % 2 == 0 && (r == 6 || r == 5)) || r <= 4 {
                t[1] |= bit(sq(f, r));
            }
            r += 1;
        }
        f += 1;
    }
    t
};

/// The palace of `color`.
pub const OWN_PALACE: [Bitboard; 2] = [PALACE & HALF[0], PALACE & HALF[1]];

/// Iterates over the squares of a set, lowest first.
#[derive(Clone, Copy)]
pub struct Squares(pub Bitboard);

impl Iterator for Squares {
    type Item = usize;
    #[inline(always)]
    fn next(&mut self) -> Option<usize> {
        // Word by word: u128 `trailing_zeros` and `x & (x - 1)` cost a carry chain and a
        // select each; on the two halves they are one instruction (the profile that showed it
        // is in docs/measurements.md).
        let lo = self.0 as u64;
        let hi = (self.0 >> 64) as u64;
        if lo != 0 {
            self.0 = ((hi as u128) << 64) | (lo & lo.wrapping_sub(1)) as u128;
            Some(lo.trailing_zeros() as usize)
        } else if hi != 0 {
            self.0 = ((hi & hi.wrapping_sub(1)) as u128) << 64;
            Some(64 + hi.trailing_zeros() as usize)
        } else {
            None
        }
    }
}

#[inline(always)]
pub fn popcount(b: Bitboard) -> u32 {
    b.count_ones()
}

#[cfg(test)]
mod tests {
    #[test]
    fn one_shift_leg_indices_match_leg_bits() {
        use super::*;
        let mut x = 0x9e37_79b9_7f4a_7c15_f39c_c060_5ced_c834u128;
        for i in 0..4000 {
            // xorshift; every 7th occupancy full, to reach the board's edges densely
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let occ = if i % 7 == 0 { ALL } else { x & ALL };
            for s in 0..90 {
                assert_eq!(
                    ortho_legs(s, occ),
                    leg_bits(&ORTHO_NEIGHBOURS[s], occ),
                    "{s}"
                );
                assert_eq!(diag_legs(s, occ), leg_bits(&DIAG_NEIGHBOURS[s], occ), "{s}");
            }
        }
    }

    use super::*;

    #[test]
    fn horse_tables_are_inverse() {
        // A horse on h attacks s (with all legs empty) iff h is a horse attacker of s.
        for h in 0..90 {
            for s in Squares(HORSE_MOVES[h][0]) {
                assert!(HORSE_ATTACKERS[s][0] & (1u128 << h) != 0);
            }
        }
        for s in 0..90 {
            assert_eq!(popcount(HORSE_ATTACKERS[s][0]), popcount(HORSE_MOVES[s][0]));
        }
    }

    #[test]
    fn slides() {
        let e0 = 4; // file e rank 0
        let occ = 1u128 << 40 | 1u128 << 58 | 1u128 << 85; // e4, e6, e9
        let mut occ_rot = 0u128;
        for s in Squares(occ) {
            occ_rot |= 1u128 << ROT_INDEX[s];
        }
        let rook = rook_attacks(e0, occ, occ_rot);
        assert_eq!(
            rook & FILE_MASK[4],
            (1u128 << 13) | (1 << 22) | (1 << 31) | (1 << 40)
        );
        assert_eq!(cannon_attacks(e0, occ, occ_rot), 1u128 << 58);
        assert_eq!(popcount(PALACE), 18);
        assert_eq!(popcount(PAWN_SQUARES[0]), 55);
    }
}
