//! The Xiangqi evaluation: one generic function for the engine and the tuners.
//!
//! Everything is computed from red's point of view as a sum of `count * parameter` terms (so
//! the trace is exact), blended by phase once at the end. Terms, in the order of the file:
//! material and position tables (one lookup per piece in a combined table), tempo, mobility,
//! king safety (attackers on the enemy palace, missing defenders against the pieces they stop,
//! and a king danger that squares the summed attack weight),
//! cannon lines on the enemy king, rook files, connected crossed pawns, hanging and threatened
//! pieces, trapped horses, and piece coordination. The ideas are the classic ones of Xiangqi programs
//! (ElephantEye's `evaluate.cpp` "advisor shape" and "stringhold" terms, Pikafish-HCE); the
//! numbers are all in `params/xiangqi.json`.

use super::layout::{KING_ATTACKER_SLOTS, OFFSET, id, pst_flat};
use super::params::EvalParams;
use super::score::{
    PHASE_CANNON, PHASE_HORSE, PHASE_MAX, PHASE_ROOK, S, SCALE_DIV, blend_parts, danger_q,
    round_div,
};
use super::tables::{NO_SLOT, PST_SLOT};
use super::trace::Tracer;
use crate::core::attacks::*;
use crate::core::{Color, PieceType, Position, Variant};

/// What one side's pieces attack and how freely they move.
#[derive(Default)]
struct SideInfo {
    /// Every square this side attacks (defends, when an own piece stands there).
    attacks: Bitboard,
    pawn_attacks: Bitboard,
    /// Squares attacked by horses and cannons.
    minor_attacks: Bitboard,
    /// Squares attacked by rooks.
    rook_attacks: Bitboard,
    /// The king-danger attack weight on the enemy king.
    danger: i64,
}

/// The tapered pair at flat index `off` added `n` times (red-relative `n`).
#[inline(always)]
fn term<T: Tracer>(acc: &mut S, t: &mut T, p: &EvalParams, off: usize, n: i32) {
    *acc += p.s(off) * n;
    t.add_s(off, n);
}

/// A piece hitting the enemy palace squares (or pieces) `hit`: adds them to `hits` and counts
/// the piece as an attacker when it hits any.
#[inline(always)]
fn palace_pressure(hit: Bitboard, hits: &mut i32, attackers: &mut i32) {
    if hit != 0 {
        *hits += hit.count_ones() as i32;
        *attackers += 1;
    }
}

/// The squares strictly between `a` and `b` when they share a file or rank, else `None`.
#[inline(always)]
fn between(a: usize, b: usize) -> Option<Bitboard> {
    let (lo, hi) = if a < b { (a, b) } else { (b, a) };
    let span = ((1u128 << hi) - 1) & !((1u128 << (lo + 1)) - 1);
    if lo % 9 == hi % 9 {
        Some(span & FILE_MASK[lo % 9])
    } else if lo / 9 == hi / 9 {
        Some(span & RANK_MASK[lo / 9])
    } else {
        None
    }
}

/// The game phase from the rooks, horses and cannons left (0..=`PHASE_MAX`).
#[inline(always)]
pub fn phase(pos: &Position) -> i32 {
    let p = PHASE_ROOK * pos.kind_bb(PieceType::Rook).count_ones() as i32
        + PHASE_HORSE * pos.kind_bb(PieceType::Horse).count_ones() as i32
        + PHASE_CANNON * pos.kind_bb(PieceType::Cannon).count_ones() as i32;
    p.min(PHASE_MAX)
}

/// The Xiangqi evaluation from red's point of view, in centipawns.
#[inline]
pub(crate) fn eval_red<T: Tracer>(pos: &Position, p: &EvalParams, t: &mut T) -> i32 {
    let acc = psq_red(pos, p, t);
    finish_red(pos, p, acc, t)
}

/// Material and position tables (red's view, not yet tapered): one combined lookup per piece
/// (`psq` is indexed by the board's piece code - 1 = colour * 7 + kind). The cheap first part
/// of [`eval_red`], which a lazy evaluation may stop after.
#[inline(always)]
pub(crate) fn psq_red<T: Tracer>(pos: &Position, p: &EvalParams, t: &mut T) -> S {
    let mut acc = S::ZERO;
    for s in Squares(pos.occupied()) {
        let code = pos.piece_code_at(s) as usize - 1;
        acc += p.psq[code][s];
        if T::ACTIVE {
            let kind = PieceType::from_index(code % 7);
            let (sign, rs) = if code < 7 {
                (1, s)
            } else {
                (-1, (9 - s / 9) * 9 + s % 9)
            };
            if kind != PieceType::King {
                t.add_s(OFFSET[id::MATERIAL + kind.index() - 1], sign);
            }
            let slot = PST_SLOT[kind.index()][rs];
            if slot != NO_SLOT {
                t.add_s(pst_flat(kind, slot), sign);
            }
        }
    }
    acc
}

/// The rest of [`eval_red`] after [`psq_red`]: every other term, then the phase blend.
#[inline(always)]
pub(crate) fn finish_red<T: Tracer>(pos: &Position, p: &EvalParams, mut acc: S, t: &mut T) -> i32 {
    let danger = shared_terms(pos, p, &mut acc, t);
    let ph = phase(pos);
    t.phase(ph);
    let (n, d) = blend_parts(acc.0 as i64, acc.1 as i64, ph, 1, danger);
    // The side the evaluation favours may lack the material to mate: scale it down.
    let favoured = if n >= 0 { Color::Red } else { Color::Black };
    match scale_down_term(pos, favoured) {
        Some(term) => {
            let off = OFFSET[term];
            t.scale_down(off);
            let keep = SCALE_DIV - p.values[off] as i64;
            round_div(n * keep, d * SCALE_DIV) as i32
        }
        None => round_div(n, d) as i32,
    }
}

/// The endgame whose scale-down term applies when the evaluation favours `strong`, if any: the
/// attackers `strong` has left (rooks, horses, cannons, pawns: the pieces that can cross the
/// river and mate) against the defenders (advisors, elephants) of the other side; failing those,
/// a rook against a rook, or a horse or cannon against a horse or cannon, with `strong` at most
/// a pawn ahead (mostly drawn: about 90 % of such positions in this project's recent games,
/// `docs/measurements.md`; a rook against a minor piece wins far more often and is left out).
#[inline(always)]
pub(crate) fn scale_down_term(pos: &Position, strong: Color) -> Option<usize> {
    let weak = strong.flip();
    let count = |c: Color, k: PieceType| (pos.kind_bb(k) & pos.pieces(c)).count_ones();
    let (rooks, horses, cannons) = (
        count(strong, PieceType::Rook),
        count(strong, PieceType::Horse),
        count(strong, PieceType::Cannon),
    );
    if rooks + horses + cannons > 1 {
        return None;
    }
    let pawns = count(strong, PieceType::Pawn);
    let defenders = count(weak, PieceType::Advisor) + count(weak, PieceType::Elephant);
    let full = |k: PieceType| count(weak, k) >= 2;
    let cannot_mate = match (rooks, horses + cannons, pawns) {
        (0, 0, 0) => Some(id::SCALE_NO_ATTACKERS),
        (0, 0, 1) if defenders >= 2 => Some(id::SCALE_ONE_PAWN),
        (0, 0, _) if defenders >= 3 => Some(id::SCALE_PAWNS),
        (0, 1, 0) if defenders >= 2 => Some(id::SCALE_ONE_MINOR),
        (1, 0, 0) if full(PieceType::Advisor) && full(PieceType::Elephant) => {
            Some(id::SCALE_ONE_ROOK)
        }
        _ => None,
    };
    if cannot_mate.is_some() || rooks + horses + cannons != 1 {
        return cannot_mate;
    }
    let weak_minors = count(weak, PieceType::Horse) + count(weak, PieceType::Cannon);
    (count(weak, PieceType::Rook) == rooks
        && weak_minors == horses + cannons
        && pawns <= count(weak, PieceType::Pawn) + 1)
        .then_some(id::SCALE_ONE_EACH)
}

/// Every term after material and position tables: tempo, mobility, king safety, lines, files,
/// pawns, threats and coordination. Shared by the Jieqi evaluation (dark pieces count as the
/// kind they move as). Returns the king danger `q(D_red) − q(D_black)`, for the final blend.
#[inline(always)]
pub(crate) fn shared_terms<T: Tracer>(
    pos: &Position,
    p: &EvalParams,
    acc: &mut S,
    t: &mut T,
) -> i64 {
    let occ = pos.occupied();
    let occ_rot = pos.occ_rot();
    // Tempo: a plain value for the side to move.
    let stm = pos.side_to_move().sign();
    let off = OFFSET[id::TEMPO];
    *acc += S(p.values[off], p.values[off]) * stm;
    t.add(off, stm);

    let info = [
        side_terms(pos, Color::Red, occ, occ_rot, p, acc, t),
        side_terms(pos, Color::Black, occ, occ_rot, p, acc, t),
    ];

    // Second pass: terms that need both sides' attack maps.
    let jieqi = pos.variant() == Variant::Jieqi;
    for c in Color::ALL {
        let sign = c.sign();
        let them = c.flip();
        let ours = &info[c.index()];
        let theirs = &info[them.index()];
        let own = pos.pieces(c);
        let king = pos.pieces_of(c, PieceType::King);
        // Hanging pieces are rare: visit them one by one instead of counting per kind.
        let hanging = own & !king & theirs.attacks & !ours.attacks;
        for sq in Squares(hanging) {
            let kind = (pos.piece_code_at(sq) - 1) % 7;
            term(acc, t, p, OFFSET[id::HANGING + kind as usize - 1], sign);
        }
        let pawns = pos.pieces_of(c, PieceType::Pawn);
        let n = (own & !pawns & !king & theirs.pawn_attacks).count_ones() as i32;
        term(acc, t, p, OFFSET[id::THREAT_BY_PAWN], n * sign);
        let n = (pos.pieces_of(c, PieceType::Rook) & theirs.minor_attacks).count_ones() as i32;
        term(acc, t, p, OFFSET[id::THREAT_ROOK_BY_MINOR], n * sign);
        let n = (own & !king & ours.attacks).count_ones() as i32;
        term(acc, t, p, OFFSET[id::DEFENDED], n * sign);
        // Xiangqi only: tuned on Xiangqi positions, these terms lost Elo in Jieqi deals, where
        // a dark piece only moves as a horse or cannon for its first move.
        if jieqi {
            continue;
        }
        // Horses and cannons attacked by a rook or by the other side's horses and cannons:
        // the hanging term misses them when they are defended, yet a defended minor attacked
        // by a rook still loses the exchange, and one attacked by a minor must often give way.
        let minors = pos.pieces_of(c, PieceType::Horse) | pos.pieces_of(c, PieceType::Cannon);
        let n = (minors & theirs.rook_attacks).count_ones() as i32;
        term(acc, t, p, OFFSET[id::THREAT_BY_ROOK], n * sign);
        let n = (minors & theirs.minor_attacks).count_ones() as i32;
        term(acc, t, p, OFFSET[id::THREAT_BY_MINOR], n * sign);
        // A horse hemmed in by blocked legs, own pieces and enemy attacks is dead weight and
        // easily won; the linear mobility term undervalues how bad having no way out is.
        let mut trapped = 0;
        for s in Squares(pos.pieces_of(c, PieceType::Horse)) {
            let safe = HORSE_MOVES[s][ortho_legs(s, occ)] & !own & !theirs.attacks;
            trapped += (safe.count_ones() <= 1) as i32;
        }
        term(acc, t, p, OFFSET[id::TRAPPED_HORSE], trapped * sign);
    }
    danger_q(info[0].danger) - danger_q(info[1].danger)
}

/// The terms of one side that need only its own attacks; returns its attack maps.
#[inline(always)]
fn side_terms<T: Tracer>(
    pos: &Position,
    us: Color,
    occ: Bitboard,
    occ_rot: Bitboard,
    p: &EvalParams,
    acc: &mut S,
    t: &mut T,
) -> SideInfo {
    let them = us.flip();
    let sign = us.sign();
    let own = pos.pieces(us);
    let enemy = pos.pieces(them);
    let palace = OWN_PALACE[them.index()];
    let enemy_king = pos.king_square(them).index();
    let all_pawns = pos.kind_bb(PieceType::Pawn);
    let own_pawns = all_pawns & own;
    let mut info = SideInfo::default();
    let mut attackers = 0;

    // Rooks: mobility, palace pressure, files, connection.
    let rooks = pos.pieces_of(us, PieceType::Rook);
    let (mut mob, mut hits, mut open, mut semi, mut connected) = (0, 0, 0, 0, 0);
    for s in Squares(rooks) {
        let a = rook_attacks(s, occ, occ_rot);
        info.attacks |= a;
        info.rook_attacks |= a;
        mob += (a & !own).count_ones() as i32;
        palace_pressure(a & palace, &mut hits, &mut attackers);
        let file = FILE_MASK[s % 9];
        if all_pawns & file == 0 {
            open += 1;
        } else if own_pawns & file == 0 {
            semi += 1;
        }
        if a & rooks != 0 {
            connected = 1;
        }
    }
    term(acc, t, p, OFFSET[id::MOB_ROOK], mob * sign);
    term(acc, t, p, OFFSET[id::KING_ROOK], hits * sign);
    let rook_hits = hits;
    term(acc, t, p, OFFSET[id::ROOK_OPEN], open * sign);
    term(acc, t, p, OFFSET[id::ROOK_SEMI_OPEN], semi * sign);
    term(acc, t, p, OFFSET[id::ROOKS_CONNECTED], connected * sign);

    // Horses.
    let horses = pos.pieces_of(us, PieceType::Horse);
    let (mut mob, mut hits) = (0, 0);
    for s in Squares(horses) {
        let a = HORSE_MOVES[s][ortho_legs(s, occ)];
        info.attacks |= a;
        info.minor_attacks |= a;
        mob += (a & !own).count_ones() as i32;
        palace_pressure(a & palace, &mut hits, &mut attackers);
    }
    term(acc, t, p, OFFSET[id::MOB_HORSE], mob * sign);
    term(acc, t, p, OFFSET[id::KING_HORSE], hits * sign);
    let horse_hits = hits;

    // Cannons: quiet moves plus captures; lines on the enemy king.
    let cannons = pos.pieces_of(us, PieceType::Cannon);
    let (mut mob, mut hits) = (0, 0);
    let mut line = [0i32; 3];
    for s in Squares(cannons) {
        let (slide, jump) = rook_and_cannon(s, occ, occ_rot);
        info.attacks |= jump;
        info.minor_attacks |= jump;
        mob += (slide & !occ).count_ones() as i32 + (jump & enemy).count_ones() as i32;
        palace_pressure(jump & palace, &mut hits, &mut attackers);
        if let Some(b) = between(s, enemy_king) {
            let n = (b & occ).count_ones() as usize;
            if n < 3 {
                line[n] += 1;
            }
        }
    }
    term(acc, t, p, OFFSET[id::MOB_CANNON], mob * sign);
    term(acc, t, p, OFFSET[id::KING_CANNON], hits * sign);
    let cannon_hits = hits;
    for (i, &n) in line.iter().enumerate() {
        if n != 0 {
            term(acc, t, p, OFFSET[id::CANNON_KING_LINE] + 2 * i, n * sign);
        }
    }

    // Pawns: palace pressure and connected crossed pawns.
    let mut hits = 0;
    for s in Squares(own_pawns) {
        let a = PAWN_MOVES[us.index()][s];
        info.attacks |= a;
        info.pawn_attacks |= a;
        palace_pressure(a & palace, &mut hits, &mut attackers);
    }
    term(acc, t, p, OFFSET[id::KING_PAWN], hits * sign);
    let pawn_hits = hits;
    let crossed = own_pawns & HALF[them.index()];
    let beside = ((crossed << 1) & !FILE_MASK[0]) | ((crossed >> 1) & !FILE_MASK[8]);
    let n = (crossed & beside).count_ones() as i32;
    term(acc, t, p, OFFSET[id::PAWN_CONNECTED], n * sign);

    // Defenders: king, advisors, elephants.
    info.attacks |= KING_MOVES[pos.king_square(us).index()];
    let advisors = pos.pieces_of(us, PieceType::Advisor);
    for s in Squares(advisors) {
        info.attacks |= ADVISOR_MOVES[s] & OWN_PALACE[us.index()];
    }
    let elephants = pos.pieces_of(us, PieceType::Elephant);
    for s in Squares(elephants) {
        info.attacks |= ELEPHANT_MOVES[s][diag_legs(s, occ)] & HALF[us.index()];
    }

    // King safety: how many pieces bear on the enemy palace, and missing defenders against
    // the attackers they hold off (advisors stop horses, elephants stop cannons).
    let slot = (attackers as usize).min(KING_ATTACKER_SLOTS - 1);
    term(acc, t, p, OFFSET[id::KING_ATTACKERS] + 2 * slot, sign);
    let missing_adv = 2 - advisors.count_ones().min(2) as i32;
    let missing_ele = 2 - elephants.count_ones().min(2) as i32;
    let their_horses = pos.pieces_of(them, PieceType::Horse).count_ones() as i32;
    let their_cannons = pos.pieces_of(them, PieceType::Cannon).count_ones() as i32;
    term(
        acc,
        t,
        p,
        OFFSET[id::MISSING_ADVISOR],
        missing_adv * their_horses * sign,
    );
    term(
        acc,
        t,
        p,
        OFFSET[id::MISSING_ELEPHANT],
        missing_ele * their_cannons * sign,
    );

    // King danger: the palace hits weighed into one attack weight, which the final blend
    // squares (Ethereal's safety term), so that attacks by several pieces count for more than
    // the sum of their parts.
    let side = us.index();
    let mut danger = 0i64;
    for (id, n) in [
        (id::DANGER_BASE, 1),
        (id::DANGER_ROOK, rook_hits),
        (id::DANGER_HORSE, horse_hits),
        (id::DANGER_CANNON, cannon_hits),
        (id::DANGER_PAWN, pawn_hits),
    ] {
        let off = OFFSET[id];
        danger += p.values[off] as i64 * n as i64;
        t.add_danger(side, off, n);
    }
    info.danger = danger;

    // Coordination.
    let n = (horses != 0 && cannons != 0) as i32;
    term(acc, t, p, OFFSET[id::HORSE_CANNON], n * sign);

    info
}
