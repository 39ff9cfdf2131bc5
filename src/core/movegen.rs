//! Legal move generation.
//!
//! Pseudo-legal moves come from the attack tables; a move is then legal unless it leaves the
//! own king attacked. Most moves cannot change any attack on the king at all: only a move from
//! or to the king's rank, file or diagonal neighbourhood (horse legs), a king move, or any move
//! while in check can. Those few are tested by re-running the attack query on the changed
//! occupancy; all others are accepted at once.

use super::attacks::*;
use super::position::{Position, Variant};
use super::types::*;
use std::mem::MaybeUninit;

pub const MAX_MOVES: usize = 256;

/// A fixed-capacity list of moves on the stack.
pub struct MoveList {
    moves: [MaybeUninit<Move>; MAX_MOVES],
    len: usize,
}

impl Default for MoveList {
    fn default() -> Self {
        Self::new()
    }
}

impl MoveList {
    #[inline(always)]
    pub fn new() -> MoveList {
        MoveList {
            moves: [MaybeUninit::uninit(); MAX_MOVES],
            len: 0,
        }
    }

    #[inline(always)]
    pub fn push(&mut self, m: Move) {
        debug_assert!(self.len < MAX_MOVES);
        self.moves[self.len] = MaybeUninit::new(m);
        self.len += 1;
    }

    #[inline(always)]
    pub fn len(&self) -> usize {
        self.len
    }

    #[inline(always)]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    #[inline(always)]
    pub fn as_slice(&self) -> &[Move] {
        // SAFETY: the first `len` entries were written by `push`.
        unsafe { std::slice::from_raw_parts(self.moves.as_ptr() as *const Move, self.len) }
    }

    #[inline(always)]
    pub fn as_mut_slice(&mut self) -> &mut [Move] {
        // SAFETY: as above.
        unsafe { std::slice::from_raw_parts_mut(self.moves.as_mut_ptr() as *mut Move, self.len) }
    }

    #[inline(always)]
    pub fn swap_remove(&mut self, i: usize) -> Move {
        let m = self.as_slice()[i];
        self.len -= 1;
        self.moves[i] = self.moves[self.len];
        m
    }

    pub fn contains(&self, m: Move) -> bool {
        self.as_slice().contains(&m)
    }

    pub fn iter(&self) -> std::slice::Iter<'_, Move> {
        self.as_slice().iter()
    }
}

impl std::ops::Deref for MoveList {
    type Target = [Move];
    fn deref(&self) -> &[Move] {
        self.as_slice()
    }
}

impl<'a> IntoIterator for &'a MoveList {
    type Item = &'a Move;
    type IntoIter = std::slice::Iter<'a, Move>;
    fn into_iter(self) -> Self::IntoIter {
        self.as_slice().iter()
    }
}

#[inline(always)]
fn push_targets(list: &mut MoveList, from: usize, targets: Bitboard) {
    for to in Squares(targets) {
        list.push(Move(from as u32 | (to as u32) << 7));
    }
}

impl Position {
    /// Pseudo-legal moves (own king may be left attacked) onto squares in `target`.
    #[inline(always)]
    fn generate_pseudo(&self, list: &mut MoveList, target: Bitboard, quiet_ok: bool) {
        let us = self.side.index();
        let own = self.by_color[us];
        let occ = self.occupied();
        let occ_rot = self.occ_rot;
        let theirs = self.by_color[us ^ 1];
        let empty = !occ & ALL;
        let target = target & !own;
        let xiangqi = self.variant == Variant::Xiangqi;

        for s in Squares(own & self.by_kind[PieceType::Rook as usize]) {
            push_targets(list, s, rook_attacks(s, occ, occ_rot) & target);
        }
        for s in Squares(own & self.by_kind[PieceType::Cannon as usize]) {
            let (slide, jump) = rook_and_cannon(s, occ, occ_rot);
            let quiet = if quiet_ok { slide & empty } else { 0 };
            push_targets(list, s, ((jump & theirs) | quiet) & target);
        }
        for s in Squares(own & self.by_kind[PieceType::Horse as usize]) {
            push_targets(
                list,
                s,
                HORSE_MOVES[s][leg_bits(&ORTHO_NEIGHBOURS[s], occ)] & target,
            );
        }
        for s in Squares(own & self.by_kind[PieceType::Pawn as usize]) {
            push_targets(list, s, PAWN_MOVES[us][s] & target);
        }
        let half = if xiangqi { HALF[us] } else { ALL };
        for s in Squares(own & self.by_kind[PieceType::Elephant as usize]) {
            push_targets(
                list,
                s,
                ELEPHANT_MOVES[s][leg_bits(&DIAG_NEIGHBOURS[s], occ)] & half & target,
            );
        }
        // Jieqi frees revealed advisors; a dark one (on d0/f0) still keeps to the palace.
        let confined = if xiangqi { ALL } else { self.dark };
        for s in Squares(own & self.by_kind[PieceType::Advisor as usize]) {
            let palace = if confined & (1u128 << s) != 0 {
                PALACE
            } else {
                ALL
            };
            push_targets(list, s, ADVISOR_MOVES[s] & palace & target);
        }
        let k = self.king_square(self.side).index();
        push_targets(list, k, KING_MOVES[k] & target);
    }

    /// Whether the pseudo-legal `m` leaves the own king safe (full test).
    #[inline(always)]
    fn legal_slow(&self, m: Move, ksq: usize) -> bool {
        let from = m.from().index();
        let to = m.to().index();
        let from_bb = 1u128 << from;
        let to_bb = 1u128 << to;
        let occ = (self.occupied() & !from_bb) | to_bb;
        let occ_rot = (self.occ_rot & !(1u128 << ROT_INDEX[from])) | (1u128 << ROT_INDEX[to]);
        let k = if from == ksq { to } else { ksq };
        !self.attacked_with(k, self.side.flip(), occ, occ_rot, to_bb)
    }

    /// Keeps the legal moves of `pseudo` (appended from index `start`).
    #[inline(always)]
    fn filter_legal(&self, list: &mut MoveList, start: usize) {
        let ksq = self.king_square(self.side).index();
        let danger = if self.in_check {
            ALL
        } else {
            RANK_MASK[ksq / 9] | FILE_MASK[ksq % 9] | DIAG_MASK[ksq]
        };
        let mut i = start;
        while i < list.len() {
            let m = list.as_slice()[i];
            let touched = (1u128 << m.from().0) | (1u128 << m.to().0);
            if touched & danger != 0 && !self.legal_slow(m, ksq) {
                list.swap_remove(i);
            } else {
                i += 1;
            }
        }
    }

    /// All legal moves. For Jieqi dark movers the move carries no reveal yet: the caller (search
    /// chance node, arbiter, perft) decides the revealed kind.
    pub fn legal_moves(&self) -> MoveList {
        let mut list = MoveList::new();
        self.generate_pseudo(&mut list, ALL, true);
        self.filter_legal(&mut list, 0);
        list
    }

    /// Legal captures only (quiescence search).
    pub fn legal_captures(&self) -> MoveList {
        let mut list = MoveList::new();
        self.generate_pseudo(&mut list, self.by_color[self.side.flip().index()], false);
        self.filter_legal(&mut list, 0);
        list
    }

    /// Legal non-captures only.
    pub fn legal_quiets(&self) -> MoveList {
        let mut list = MoveList::new();
        self.generate_pseudo(&mut list, !self.occupied() & ALL, true);
        self.filter_legal(&mut list, 0);
        list
    }

    /// Number of legal moves (perft's bulk count).
    #[inline]
    pub fn count_legal(&self) -> usize {
        self.legal_moves().len()
    }

    /// Whether the side to move has at least one legal move.
    pub fn has_legal_move(&self) -> bool {
        !self.legal_moves().is_empty()
    }

    /// Whether `m` (by squares) is legal here. Jieqi suffixes are ignored.
    pub fn is_legal(&self, m: Move) -> bool {
        let sq = m.squares();
        self.legal_moves().iter().any(|&x| x == sq)
    }

    /// Whether `m` is a capture.
    #[inline(always)]
    pub fn is_capture(&self, m: Move) -> bool {
        self.board[m.to().index()] != 0
    }
}
