//! Where each piece's position table has entries: the squares a table stores (half-width,
//! only the squares the piece can reach) and the lookups from a board square to a table entry.
//!
//! Tables are stored half-width (files a-e, mirrored to f-i) and only over the squares the
//! piece can reach (Pikafish-HCE `psqt.cpp`): fewer genes, faster convergence.

use crate::core::attacks::{ADVISOR_SQUARES, ELEPHANT_SQUARES, OWN_PALACE, PAWN_SQUARES};
use crate::core::{PieceType, Square};

/// Squares (red's view) where each kind's table has an entry: the reachable squares on files
/// a-e, ordered as the file shows them, rank 9 (top) down to rank 0, files a..e.
const fn half_squares(kind: usize) -> ([Square; 50], usize) {
    let reach: u128 = match kind {
        0 => OWN_PALACE[0],
        1 => ADVISOR_SQUARES[0],
        2 => ELEPHANT_SQUARES[0],
        6 => PAWN_SQUARES[0],
        _ => (1u128 << 90) - 1,
    };
    let mut out = [Square(0); 50];
    let mut n = 0;
    let mut r = 10;
    while r > 0 {
        r -= 1;
        let mut f = 0;
        while f < 5 {
            let s = r * 9 + f;
            if reach & (1u128 << s) != 0 {
                out[n] = Square(s as u8);
                n += 1;
            }
            f += 1;
        }
    }
    (out, n)
}

/// Table length of each kind (king 6, advisor 3, elephant 4, pawn 31, others 50).
pub const PST_LEN: [usize; 7] = {
    let mut l = [0; 7];
    let mut k = 0;
    while k < 7 {
        l[k] = half_squares(k).1;
        k += 1;
    }
    l
};

/// Each kind's table squares in storage order (the first `PST_LEN[kind]` entries).
static PST_SQUARES: [[Square; 50]; 7] = {
    let mut t = [[Square(0); 50]; 7];
    let mut k = 0;
    while k < 7 {
        t[k] = half_squares(k).0;
        k += 1;
    }
    t
};

/// The squares of `kind`'s table in storage order (red's view, files a-e).
pub fn pst_squares(kind: PieceType) -> &'static [Square] {
    &PST_SQUARES[kind.index()][..PST_LEN[kind.index()]]
}

/// Marks a square without a table entry in [`PST_SLOT`] and [`DARK_SLOT`].
pub const NO_SLOT: u8 = u8::MAX;

/// Red's 15 dark starting squares in storage order (rank 9 first, files a..i): the pawn
/// squares a3 c3 e3 g3 i3, the cannon squares b2 h2, then the back rank without the king.
pub static DARK_SQUARES: [Square; DARK_LEN] = {
    let mut t = [Square(0); DARK_LEN];
    let mut i = 0;
    while i < DARK_LEN {
        t[i] = Square(DARK_RAW[i]);
        i += 1;
    }
    t
};

/// Number of dark starting squares of one side.
pub const DARK_LEN: usize = DARK_RAW.len();

const DARK_RAW: [u8; 15] = [27, 29, 31, 33, 35, 19, 25, 0, 1, 2, 3, 5, 6, 7, 8];

/// `DARK_SLOT[square]`: the entry of a red dark piece on `square` in a dark table, or `NO_SLOT`
/// off the starting squares.
pub const DARK_SLOT: [u8; 90] = {
    let mut t = [NO_SLOT; 90];
    let mut i = 0;
    while i < DARK_LEN {
        t[DARK_RAW[i] as usize] = i as u8;
        i += 1;
    }
    t
};

/// `PST_SLOT[kind][square]`: the table entry of a red piece on `square` (files f-i mirrored to
/// d-a), or `NO_SLOT` where the piece can never stand.
pub const PST_SLOT: [[u8; 90]; 7] = {
    let mut t = [[NO_SLOT; 90]; 7];
    let mut k = 0;
    while k < 7 {
        let (sq, n) = half_squares(k);
        let mut i = 0;
        while i < n {
            let s = sq[i].0 as usize;
            let (f, r) = (s % 9, s / 9);
            t[k][s] = i as u8;
            t[k][r * 9 + (8 - f)] = i as u8;
            i += 1;
        }
        k += 1;
    }
    t
};
