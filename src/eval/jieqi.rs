//! The Jieqi evaluation: its own piece values and tables (`params/jieqi.json`), the value of a
//! dark piece as its pool's average, and the Xiangqi terms that keep their meaning.
//!
//! In Jieqi the pieces start face down on shuffled squares, so the Xiangqi material and tables
//! do not fit: a revealed advisor or elephant may leave the palace or cross the river (it
//! gains mobility and loses its defensive role, so it is worth more than in Xiangqi), a
//! revealed pawn may stand anywhere (even on the back rank), and a dark piece is worth what it
//! may turn out to be. The terms:
//!
//! - `material.<kind>`: Jieqi piece values (tapered), for revealed pieces and the pool average;
//! - `pst.advisor`, `pst.elephant`, `pst.pawn`: whole-board tables (half-width, mirrored);
//! - `dark.pst`: a position value for each of the 15 dark starting squares (red's view).
//!
//! A dark piece of colour `c` is worth `sum(pool_count(c, k) * material[k]) / pool_total(c)`
//! plus `dark.pst[square]` (the expected value over the identities it may have, as the chance
//! node of the search takes it; the strongest Jieqi engines score hidden pieces the same way).
//! The king, horse, rook and cannon tables and every other term (tempo, mobility, king safety,
//! cannon lines, rook files, connected pawns, threats, coordination) are shared with the
//! Xiangqi parameters, dark pieces counting there as the kind they move as.
//!
//! **Exact trace.** The pool average is linear in the piece values with coefficients
//! `count / total`, which binary floating point cannot hold (1/3, 1/5, ...). The weights are
//! therefore quantised: the `n` dark pieces of a side get the weights `m_k / DARK_SCALE`
//! (`DARK_SCALE` = 4096, `m_k ~ n * 4096 * count_k / total`) by the largest-remainder method, so
//! that they add up to exactly `n` and are exact when the total divides `n * 4096` (always when
//! no dark piece was captured unseen); the error is below `sum |value| / 4096`, under one
//! centipawn for the whole side. The evaluation computes
//! `round((mg * phase + eg * (16 - phase)) / (16 * DARK_SCALE))` in integers and the trace
//! records the same binary fractions, so `trace . params == evaluation` exactly.

use super::evaluate::{phase, shared_terms};
use super::layout::{JOFFSET, NFLAT, jflat, jid, jieqi_table_flat};
use super::params::EvalParams;
use super::score::{DARK_SCALE, S, blend};
use super::tables::{DARK_SLOT, NO_SLOT};
use super::trace::Tracer;
use crate::core::attacks::Squares;
use crate::core::{Color, PieceType, Position};

/// The quantised pool weights of `n` dark pieces of `color`, indexed by kind:
/// `m_k ~ n * DARK_SCALE * count_k / total` by the largest-remainder method (they add up to
/// `n * DARK_SCALE`; remainder ties go to the lower kind index), all zero for an empty pool.
/// Exact when `total` divides `n * DARK_SCALE` (e.g. every dark piece still on the board).
pub fn pool_weights(pos: &Position, color: Color, n: u32) -> [i64; 7] {
    let total = pos.pool_total(color) as i64;
    let mut w = [0i64; 7];
    if total == 0 {
        return w;
    }
    let scale = n as i64 * DARK_SCALE;
    let mut rem = [0i64; 7];
    let mut left = scale;
    for kind in PieceType::ALL {
        let k = kind.index();
        let c = pos.pool_count(color, kind) as i64;
        w[k] = scale * c / total;
        rem[k] = scale * c % total;
        left -= w[k];
    }
    while left > 0 {
        // at most 6 rounds: each remainder is below `total` and they add up to `left * total`
        let mut best = 0;
        for k in 1..7 {
            if rem[k] > rem[best] {
                best = k;
            }
        }
        w[best] += 1;
        rem[best] = -1;
        left -= 1;
    }
    w
}

/// The value of one dark piece of `color` (alone on the board) before its square's `dark.pst` entry, as the
/// evaluation uses it: `(mg, eg)` in centipawns (the quantised pool average; exactly
/// `sum(count * value) / total` when `total` divides [`DARK_SCALE`]).
pub fn dark_piece_value(pos: &Position, params: &EvalParams, color: Color) -> (f64, f64) {
    let w = pool_weights(pos, color, 1);
    let (mut mg, mut eg) = (0i64, 0i64);
    for (k, &m) in w.iter().enumerate().skip(1) {
        let off = JOFFSET[jid::MATERIAL + k - 1];
        mg += m * params.jieqi.values[off] as i64;
        eg += m * params.jieqi.values[off + 1] as i64;
    }
    (mg as f64 / DARK_SCALE as f64, eg as f64 / DARK_SCALE as f64)
}

/// The Jieqi evaluation from red's point of view, in centipawns.
#[inline]
pub(crate) fn eval_red_jieqi<T: Tracer>(pos: &Position, p: &EvalParams, t: &mut T) -> i32 {
    let occ = pos.occupied();
    let dark = pos.dark();
    let mut acc = S::ZERO;
    let mut n_dark = [0i64; 2];

    for s in Squares(occ) {
        let code = pos.piece_code_at(s) as usize - 1;
        let side = (code >= 7) as usize;
        let (sign, rs) = if side == 0 {
            (1, s)
        } else {
            (-1, (9 - s / 9) * 9 + s % 9)
        };
        if dark & (1u128 << s) != 0 {
            acc += p.jieqi.dark[side][s];
            n_dark[side] += 1;
            let slot = DARK_SLOT[rs];
            if T::ACTIVE && slot != NO_SLOT {
                t.add_s(jflat(jid::DARK) + 2 * slot as usize, sign);
            }
        } else {
            acc += p.jieqi.psq[code][s];
            if T::ACTIVE {
                let kind = PieceType::from_index(code % 7);
                if kind != PieceType::King {
                    t.add_s(jflat(jid::MATERIAL + kind.index() - 1), sign);
                }
                if let Some(i) = jieqi_table_flat(kind, rs) {
                    t.add_s(i, sign);
                }
            }
        }
    }

    // Dark pieces: their pool's average, in units of 1 / DARK_SCALE.
    let (mut mg, mut eg) = (0i64, 0i64);
    for c in Color::ALL {
        let n = n_dark[c.index()];
        if n == 0 {
            continue;
        }
        let w = pool_weights(pos, c, n as u32);
        for (k, &m) in w.iter().enumerate().skip(1) {
            if m == 0 {
                continue;
            }
            let off = JOFFSET[jid::MATERIAL + k - 1];
            let uses = m * c.sign() as i64;
            mg += uses * p.jieqi.values[off] as i64;
            eg += uses * p.jieqi.values[off + 1] as i64;
            t.add_frac_s(NFLAT + off, uses);
        }
    }

    let danger = shared_terms(pos, p, &mut acc, t);

    let ph = phase(pos);
    t.phase(ph);
    let mg = acc.0 as i64 * DARK_SCALE + mg;
    let eg = acc.1 as i64 * DARK_SCALE + eg;
    blend(mg, eg, ph, DARK_SCALE, danger)
}

#[cfg(test)]
#[path = "jieqi_tests.rs"]
mod tests;
