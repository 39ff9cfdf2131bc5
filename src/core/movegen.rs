//! Legal move generation, and the children of a node: each legal move, a Jieqi dark mover's
//! once per reveal outcome.
//!
//! Pseudo-legal targets come from the attack tables. In Xiangqi, when the side to move is not in
//! check, legality is settled per node rather than per move (the pin approach of Stockfish's
//! `blockers_for_king`, extended to the Xiangqi line pieces): a move can only expose the own king
//! by emptying a square that shields it, or by filling a square that turns an enemy cannon's
//! open line into a check. So the node computes
//! - `pinned`: own pieces whose leaving would expose the king: the only piece between the king and
//!   an enemy rook or king, either of the two pieces between the king and an enemy cannon, a
//!   piece on the leg of an enemy horse aimed at the king;
//! - `screens`: empty squares between the king and an enemy cannon with nothing between them.
//!
//! Every other piece's targets outside `screens` are legal as they come, and perft's last ply
//! counts them by popcount without making or even listing them. Pinned pieces, king moves,
//! positions in check and Jieqi positions (whose revealed advisors and elephants attack too) go
//! through the full test: re-run the attack query on the changed occupancy.

use super::attacks::*;
use super::position::Position;
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
            // SAFETY: an array of `MaybeUninit` needs no initialisation (the idiom of the
            // `MaybeUninit` docs). The array-repeat `[MaybeUninit::uninit(); N]` compiled to a
            // 1 KB memset per list.
            moves: unsafe { MaybeUninit::uninit().assume_init() },
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

    #[inline(always)]
    pub fn clear(&mut self) {
        self.len = 0;
    }

    /// Keeps the first `len` moves (no-op when the list is shorter).
    #[inline(always)]
    pub fn truncate(&mut self, len: usize) {
        self.len = self.len.min(len);
    }

    /// Keeps the moves for which `keep` holds (in order).
    #[inline]
    pub fn retain(&mut self, mut keep: impl FnMut(Move) -> bool) {
        let mut w = 0;
        for i in 0..self.len {
            let m = self.as_slice()[i];
            if keep(m) {
                self.moves[w] = MaybeUninit::new(m);
                w += 1;
            }
        }
        self.len = w;
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

/// Owns a move list while walking it, so that a caller can make and unmake the moves on the
/// position they came from.
pub struct IntoIter {
    list: MoveList,
    next: usize,
}

impl Iterator for IntoIter {
    type Item = Move;

    #[inline(always)]
    fn next(&mut self) -> Option<Move> {
        let m = self.list.as_slice().get(self.next).copied()?;
        self.next += 1;
        Some(m)
    }
}

impl IntoIterator for MoveList {
    type Item = Move;
    type IntoIter = IntoIter;
    fn into_iter(self) -> IntoIter {
        IntoIter {
            list: self,
            next: 0,
        }
    }
}

#[inline(always)]
fn push_targets(list: &mut MoveList, from: usize, targets: Bitboard) {
    for to in Squares(targets) {
        list.push(Move(from as u32 | (to as u32) << 7));
    }
}

/// Where generated legal moves go: a list, or just a count (perft's last ply).
trait MoveSink {
    /// All of `targets` are legal destinations from `from`.
    fn add_targets(&mut self, from: usize, targets: Bitboard);
    fn add_move(&mut self, m: Move);
}

impl MoveSink for MoveList {
    #[inline(always)]
    fn add_targets(&mut self, from: usize, targets: Bitboard) {
        push_targets(self, from, targets);
    }

    #[inline(always)]
    fn add_move(&mut self, m: Move) {
        self.push(m);
    }
}

struct MoveCounter(u32);

impl MoveSink for MoveCounter {
    #[inline(always)]
    fn add_targets(&mut self, _from: usize, targets: Bitboard) {
        self.0 += popcount(targets);
    }

    #[inline(always)]
    fn add_move(&mut self, _m: Move) {
        self.0 += 1;
    }
}

/// What one node's legal generation knows: pieces that need the full test, the targets open to
/// the other pieces, all pseudo-legal targets, the king's square.
struct LegalContext {
    pinned: Bitboard,
    free_target: Bitboard,
    target: Bitboard,
    ksq: usize,
}

impl Position {
    /// Hands the moves of each own piece but the king to `sink` through `emit_legal`, kind by
    /// kind (rooks, cannons, horses, pawns, elephants, advisors); cannon moves to empty squares
    /// only with `quiet_ok`. `xiangqi` (the position's variant) keeps elephants to their half
    /// and advisors to the palace.
    #[inline(always)]
    fn emit_piece_moves<S: MoveSink>(
        &self,
        sink: &mut S,
        legal: &LegalContext,
        quiet_ok: bool,
        xiangqi: bool,
    ) {
        let us = self.side.index();
        let own = self.by_color[us];
        let occ = self.occupied();
        let occ_rot = self.occ_rot;
        let theirs = self.by_color[us ^ 1];
        let empty = !occ & ALL;

        for s in Squares(own & self.by_kind[PieceType::Rook as usize]) {
            self.emit_legal(sink, legal, s, rook_attacks(s, occ, occ_rot));
        }
        for s in Squares(own & self.by_kind[PieceType::Cannon as usize]) {
            let (slide, jump) = rook_and_cannon(s, occ, occ_rot);
            let quiet = if quiet_ok { slide & empty } else { 0 };
            self.emit_legal(sink, legal, s, (jump & theirs) | quiet);
        }
        for s in Squares(own & self.by_kind[PieceType::Horse as usize]) {
            self.emit_legal(sink, legal, s, HORSE_MOVES[s][ortho_legs(s, occ)]);
        }
        for s in Squares(own & self.by_kind[PieceType::Pawn as usize]) {
            self.emit_legal(sink, legal, s, PAWN_MOVES[us][s]);
        }
        let half = if xiangqi { HALF[us] } else { ALL };
        for s in Squares(own & self.by_kind[PieceType::Elephant as usize]) {
            let targets = ELEPHANT_MOVES[s][diag_legs(s, occ)] & half;
            self.emit_legal(sink, legal, s, targets);
        }
        // Jieqi frees revealed advisors; a dark one (on d0/f0) still keeps to the palace.
        for s in Squares(own & self.by_kind[PieceType::Advisor as usize]) {
            let palace = if xiangqi || self.dark & SQUARE_BB[s] != 0 {
                PALACE
            } else {
                ALL
            };
            self.emit_legal(sink, legal, s, ADVISOR_MOVES[s] & palace);
        }
    }

    /// Pseudo-legal moves (own king may be left attacked) onto squares in `target`.
    #[inline(always)]
    fn generate_pseudo(&self, list: &mut MoveList, target: Bitboard, quiet_ok: bool) {
        let target = target & !self.by_color[self.side.index()];
        let k = self.king_square(self.side).index();
        // No piece is tested: every target is taken as it comes.
        let untested = LegalContext {
            pinned: 0,
            free_target: target,
            target,
            ksq: k,
        };
        let xiangqi = self.variant == Variant::Xiangqi;
        self.emit_piece_moves(list, &untested, quiet_ok, xiangqi);
        push_targets(list, k, KING_MOVES[k] & target);
    }

    /// Whether the pseudo-legal `m` leaves the own king safe (full test).
    #[inline(always)]
    fn legal_slow(&self, m: Move, ksq: usize) -> bool {
        let from = m.from().index();
        let to = m.to().index();
        let from_bb = SQUARE_BB[from];
        let to_bb = SQUARE_BB[to];
        let occ = (self.occupied() & !from_bb) | to_bb;
        let occ_rot = (self.occ_rot & !ROT_BB[from]) | ROT_BB[to];
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
            let touched = SQUARE_BB[m.from().index()] | SQUARE_BB[m.to().index()];
            if touched & danger != 0 && !self.legal_slow(m, ksq) {
                list.swap_remove(i);
            } else {
                i += 1;
            }
        }
    }

    /// Own pieces that may not leave their square freely, and empty squares no own piece may
    /// enter, for the side to move (not in check) in Xiangqi. See the module comment.
    #[inline(always)]
    fn pins_and_screens(&self, ksq: usize) -> (Bitboard, Bitboard) {
        let us = self.side.index();
        let own = self.by_color[us];
        let theirs = self.by_color[us ^ 1];
        let occ = self.occupied();
        let cannons = self.by_kind[PieceType::Cannon as usize];
        let lines = RANK_MASK[ksq / 9] | FILE_MASK[ksq % 9];
        let liners = lines
            & theirs
            & (self.by_kind[PieceType::Rook as usize]
                | self.by_kind[PieceType::King as usize]
                | cannons);
        let mut pinned = 0;
        let mut screens = 0;
        for s in Squares(liners) {
            let between = BETWEEN[ksq][s];
            let blockers = between & occ;
            if cannons & (1u128 << s) != 0 {
                match popcount(blockers) {
                    0 => screens |= between,
                    2 => pinned |= blockers & own,
                    _ => {}
                }
            } else if popcount(blockers) == 1 {
                pinned |= blockers & own;
            }
        }
        let horses = theirs & self.by_kind[PieceType::Horse as usize];
        if HORSE_ATTACKERS[ksq][0] & horses != 0 {
            for i in 0..4 {
                let leg = DIAG_NEIGHBOURS[ksq][i];
                if own & (1u128 << leg) != 0 && HORSE_VIA_LEG[ksq][i] & horses != 0 {
                    pinned |= 1u128 << leg;
                }
            }
        }
        (pinned, screens)
    }

    /// Hands the legal moves among `targets` of the piece on `from` to `sink`: pieces that may
    /// move freely hand over whole target sets, the others test each move.
    #[inline(always)]
    fn emit_legal<S: MoveSink>(
        &self,
        sink: &mut S,
        legal: &LegalContext,
        from: usize,
        targets: Bitboard,
    ) {
        if legal.pinned & SQUARE_BB[from] == 0 {
            sink.add_targets(from, targets & legal.free_target);
        } else {
            for to in Squares(targets & legal.target) {
                let m = Move(from as u32 | (to as u32) << 7);
                if self.legal_slow(m, legal.ksq) {
                    sink.add_move(m);
                }
            }
        }
    }

    /// Legal Xiangqi moves onto `target` (which excludes own pieces), handed to `sink`.
    /// `quiet_ok` allows cannon moves to empty squares.
    #[inline(always)]
    fn generate_legal<S: MoveSink>(&self, sink: &mut S, target: Bitboard, quiet_ok: bool) {
        let target = target & !self.by_color[self.side.index()] & ALL;
        let ksq = self.king_square(self.side).index();
        let (pinned, screens) = if self.in_check {
            (ALL, 0)
        } else {
            self.pins_and_screens(ksq)
        };
        let free_target = target & !screens;
        let legal = LegalContext {
            pinned,
            free_target,
            target,
            ksq,
        };
        self.emit_piece_moves(sink, &legal, quiet_ok, true);
        for to in Squares(KING_MOVES[ksq] & target) {
            let m = Move(ksq as u32 | (to as u32) << 7);
            if self.legal_slow(m, ksq) {
                sink.add_move(m);
            }
        }
    }

    /// Appends the legal moves onto `target` in any variant to `list`.
    #[inline(always)]
    fn legal_onto_into(&self, list: &mut MoveList, target: Bitboard, quiet_ok: bool) {
        if self.variant == Variant::Xiangqi {
            self.generate_legal(list, target, quiet_ok);
        } else {
            let start = list.len();
            self.generate_pseudo(list, target, quiet_ok);
            self.filter_legal(list, start);
        }
    }

    /// Legal moves onto `target` in any variant (the chase ruling asks for the captures onto
    /// one square).
    #[inline(always)]
    pub(super) fn legal_onto(&self, target: Bitboard, quiet_ok: bool) -> MoveList {
        let mut list = MoveList::new();
        self.legal_onto_into(&mut list, target, quiet_ok);
        list
    }

    /// Appends all legal moves to `list`.
    #[inline]
    pub fn legal_moves_into(&self, list: &mut MoveList) {
        self.legal_onto_into(list, ALL, true);
    }

    /// Appends the legal captures to `list` (the search's staged picker fills its own buffer).
    #[inline]
    pub fn legal_captures_into(&self, list: &mut MoveList) {
        self.legal_onto_into(list, self.by_color[self.side.flip().index()], false);
    }

    /// Appends the legal non-captures to `list`.
    #[inline]
    pub fn legal_quiets_into(&self, list: &mut MoveList) {
        self.legal_onto_into(list, !self.occupied() & ALL, true);
    }

    /// All legal moves. For Jieqi dark movers the move carries no reveal yet: the caller (search
    /// chance node, arbiter, perft) decides the revealed kind.
    pub fn legal_moves(&self) -> MoveList {
        self.legal_onto(ALL, true)
    }

    /// Legal captures only (quiescence search).
    pub fn legal_captures(&self) -> MoveList {
        self.legal_onto(self.by_color[self.side.flip().index()], false)
    }

    /// Legal non-captures only.
    pub fn legal_quiets(&self) -> MoveList {
        self.legal_onto(!self.occupied() & ALL, true)
    }

    /// Number of legal moves (perft's bulk count), without listing them in Xiangqi.
    #[inline]
    pub fn count_legal(&self) -> usize {
        if self.variant == Variant::Xiangqi {
            let mut counter = MoveCounter(0);
            self.generate_legal(&mut counter, ALL, true);
            counter.0 as usize
        } else {
            self.legal_moves().len()
        }
    }

    /// Whether the side to move has at least one legal move.
    pub fn has_legal_move(&self) -> bool {
        self.count_legal() != 0
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

/// The outcomes of `m` with their weights: a move of a face-up piece is its own single outcome
/// (weight 1); a dark mover's are one move per kind in its side's `pool`, weighted by the count.
#[inline]
fn outcomes(m: Move, dark: bool, pool: [u8; 7]) -> impl Iterator<Item = (Move, u32)> {
    let plain = m.squares();
    let single = (!dark).then_some((plain, 1));
    let kinds = PieceType::ALL.into_iter().filter_map(move |k| {
        let n = pool[k.index()] as u32;
        (dark && n > 0).then(|| (plain.with_reveal(k), n))
    });
    single.into_iter().chain(kinds)
}

/// The children of a node. A Jieqi dark move is a chance event: the mover's kind is drawn from
/// its pool (docs/jieqi-rules.md rule 3), so the move stands for one child per kind the pool
/// still holds, with the kind's count as weight (probability `count / pool_total`). Perft
/// counts these children (docs/jieqi-rules.md "Perft for Jieqi"), the search's chance nodes
/// average over them, and `--divide` lists them: all through this one expansion. Captures of
/// dark pieces carry no learned kind: only an arbiter knows identities.
impl Position {
    /// The chance outcomes of the legal move `m` as the side to move sees them: for a dark mover,
    /// one move per kind in its pool with the kind's count as weight; a move of a face-up piece
    /// is its own single outcome with weight 1. The iterator holds no borrow of the position.
    pub fn reveal_outcomes(&self, m: Move) -> impl Iterator<Item = (Move, u32)> + use<> {
        outcomes(m, self.is_dark(m.from()), self.pool[self.side.index()])
    }

    /// Every child of this node with its weight: the outcomes of each legal move, in generation
    /// order. The iterator holds no borrow of the position, which can be changed meanwhile.
    pub fn children(&self) -> impl Iterator<Item = (Move, u32)> + use<> {
        let (dark, pool) = (self.dark, self.pool[self.side.index()]);
        self.legal_moves()
            .into_iter()
            .flat_map(move |m| outcomes(m, dark & m.from().bb() != 0, pool))
    }

    /// Number of children (perft's bulk count of the last ply); without dark pieces the children
    /// are the legal moves, counted without listing them.
    pub fn count_children(&self) -> u64 {
        if self.dark == 0 {
            self.count_legal() as u64
        } else {
            self.children().count() as u64
        }
    }
}
