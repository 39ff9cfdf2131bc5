//! Zobrist keys, generated at compile time from a fixed SplitMix64 stream so that keys (and so
//! transposition-table behaviour and node counts) are identical on every machine.

use crate::util::splitmix_next;

pub struct Keys {
    /// `piece[code][square]`, code = `Piece::code()` (index 0 unused).
    pub piece: [[u64; 90]; 15],
    pub side: u64,
    /// Jieqi: a dark (face-down) piece of a colour on a square.
    pub dark: [[u64; 90]; 2],
    /// Jieqi: `pool[color][kind][count]`, the number of each kind still hidden.
    pub pool: [[[u64; 6]; 7]; 2],
}

pub static KEYS: Keys = {
    let mut k = Keys {
        piece: [[0; 90]; 15],
        side: 0,
        dark: [[0; 90]; 2],
        pool: [[[0; 6]; 7]; 2],
    };
    let mut state = 0x5851_F42D_4C95_7F2Du64;
    let mut p = 1;
    while p < 15 {
        let mut s = 0;
        while s < 90 {
            let (ns, v) = splitmix_next(state);
            state = ns;
            k.piece[p][s] = v;
            s += 1;
        }
        p += 1;
    }
    let (ns, v) = splitmix_next(state);
    state = ns;
    k.side = v;
    let mut c = 0;
    while c < 2 {
        let mut s = 0;
        while s < 90 {
            let (ns, v) = splitmix_next(state);
            state = ns;
            k.dark[c][s] = v;
            s += 1;
        }
        let mut t = 0;
        while t < 7 {
            let mut n = 1; // a count of zero contributes nothing
            while n < 6 {
                let (ns, v) = splitmix_next(state);
                state = ns;
                k.pool[c][t][n] = v;
                n += 1;
            }
            t += 1;
        }
        c += 1;
    }
    k
};
