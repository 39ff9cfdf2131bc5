//! The position: board, bitboards, side to move, Zobrist key and the undo history.
//!
//! Make/unmake updates everything incrementally; `debug_validate` recomputes from scratch so
//! tests can prove the incremental path. The variant (Xiangqi or Jieqi) is data in the position:
//! a Jieqi dark piece sits on the board with the kind of its home square (the kind it moves as)
//! and is marked in `dark`.

use super::attacks::*;
use super::jieqi::{JieqiRules, dark_home_kind, home_kind};
use super::types::*;
use super::zobrist::KEYS;

/// What is restored by `unmake_move`, and what the repetition rulings read.
#[derive(Clone, Copy, Debug)]
pub struct State {
    pub mv: Move,
    /// Piece code captured by `mv` (0 for none).
    pub captured: u8,
    /// Whether the captured piece was dark (Jieqi).
    pub captured_dark: bool,
    /// Whether the mover was dark (Jieqi): unmake turns it face-down again.
    pub moved_dark: bool,
    /// Key, no-capture counter and check flag of the position *before* `mv`.
    pub key: u64,
    pub rule60: u16,
    pub in_check: bool,
}

/// A position. Its fields are private to `core` (siblings that build or scan positions in
/// their hot loops read them directly); everything else goes through the accessors.
#[derive(Clone)]
pub struct Position {
    pub(super) board: [u8; 90],
    pub(super) by_color: [Bitboard; 2],
    pub(super) by_kind: [Bitboard; 7],
    pub(super) occ_rot: Bitboard,
    pub(super) side: Color,
    pub(super) key: u64,
    pub(super) rule60: u16,
    pub(super) fullmove: u16,
    pub(super) in_check: bool,
    pub(super) variant: Variant,
    /// Jieqi: face-down pieces.
    pub(super) dark: Bitboard,
    /// Jieqi: `pool[color][kind]`, identities not yet revealed to the viewer.
    pub(super) pool: [[u8; 7]; 2],
    /// Jieqi (arbiter/tests only): true kind + 1 of each dark piece, 0 when unknown. Meaningful
    /// only on squares in `dark`; make/unmake never touch it (a stale entry under a revealed or
    /// empty square is ignored), so unmake restores it for free.
    pub(super) hidden: [u8; 90],
    /// Jieqi rule options (the no-capture limit).
    jieqi: JieqiRules,
    history: Vec<State>,
}

impl Position {
    /// An empty board (no kings): only for building positions that are validated afterwards.
    pub(super) fn empty(variant: Variant) -> Position {
        Position {
            board: [0; 90],
            by_color: [0; 2],
            by_kind: [0; 7],
            occ_rot: 0,
            side: Color::Red,
            key: 0,
            rule60: 0,
            fullmove: 1,
            in_check: false,
            variant,
            dark: 0,
            pool: [[0; 7]; 2],
            hidden: [0; 90],
            jieqi: JieqiRules::default(),
            history: Vec::with_capacity(256),
        }
    }

    #[inline(always)]
    pub fn side_to_move(&self) -> Color {
        self.side
    }

    #[inline(always)]
    pub fn key(&self) -> u64 {
        self.key
    }

    /// The key `make_move(m)` will give, for a move of a revealed piece onto a revealed piece or
    /// an empty square (computed without making it, so the search can start loading the
    /// child's table entry early); for moves that involve dark pieces, an unrelated key.
    #[inline(always)]
    pub fn key_after(&self, m: Move) -> u64 {
        let (from, to) = (m.from().index(), m.to().index());
        let code = self.board[from] as usize;
        let captured = self.board[to] as usize;
        self.key
            ^ KEYS.side
            ^ KEYS.piece[code][from]
            ^ KEYS.piece[code][to]
            ^ if captured != 0 {
                KEYS.piece[captured][to]
            } else {
                0
            }
    }

    #[inline(always)]
    pub fn variant(&self) -> Variant {
        self.variant
    }

    /// Plies since the last capture (the "60-move" counter, in plies).
    #[inline(always)]
    pub fn rule60(&self) -> u32 {
        self.rule60 as u32
    }

    pub fn fullmove(&self) -> u32 {
        self.fullmove as u32
    }

    /// The game's ply by the move number and side to move (0 at a game's start, 1 after red's
    /// first move), whatever history this object holds; [`Position::game_ply`] counts the moves
    /// made on this object instead.
    pub fn fullmove_ply(&self) -> u32 {
        2 * self.fullmove().saturating_sub(1) + u32::from(self.side_to_move() == Color::Black)
    }

    #[inline(always)]
    pub fn in_check(&self) -> bool {
        self.in_check
    }

    #[inline(always)]
    pub fn piece_at(&self, sq: Square) -> Option<Piece> {
        Piece::from_code(self.board[sq.index()])
    }

    /// The packed piece code on square index `sq` (see [`Piece::code`]; 0 when empty): what the
    /// evaluation's tables are indexed by, without unpacking a [`Piece`].
    #[inline(always)]
    pub fn piece_code_at(&self, sq: usize) -> u8 {
        self.board[sq]
    }

    #[inline(always)]
    pub fn occupied(&self) -> Bitboard {
        self.by_color[0] | self.by_color[1]
    }

    #[inline(always)]
    pub fn pieces(&self, color: Color) -> Bitboard {
        self.by_color[color.index()]
    }

    #[inline(always)]
    pub fn pieces_of(&self, color: Color, kind: PieceType) -> Bitboard {
        self.by_color[color.index()] & self.by_kind[kind.index()]
    }

    #[inline(always)]
    pub fn kind_bb(&self, kind: PieceType) -> Bitboard {
        self.by_kind[kind.index()]
    }

    #[inline(always)]
    pub fn occ_rot(&self) -> Bitboard {
        self.occ_rot
    }

    /// Jieqi: the face-down pieces (empty in Xiangqi).
    #[inline(always)]
    pub fn dark(&self) -> Bitboard {
        self.dark
    }

    /// Jieqi: how many of `kind` of `color` are still hidden to the viewer.
    pub fn pool_count(&self, color: Color, kind: PieceType) -> u32 {
        self.pool[color.index()][kind.index()] as u32
    }

    #[inline(always)]
    pub fn king_square(&self, color: Color) -> Square {
        let b = self.pieces_of(color, PieceType::King);
        Square(b.trailing_zeros() as u8)
    }

    /// The moves played since the position was set up (oldest first), with their undo data.
    pub fn history(&self) -> &[State] {
        &self.history
    }

    /// Number of moves made on this position object since it was set up.
    pub fn game_ply(&self) -> usize {
        self.history.len()
    }

    /// Forgets the undo history (the current position becomes the root of repetition checks).
    pub fn clear_history(&mut self) {
        self.history.clear();
    }

    #[inline(always)]
    pub(super) fn put_piece(&mut self, sq: usize, code: u8) {
        let p = Piece::from_code(code).expect("valid piece code");
        let b = SQUARE_BB[sq];
        self.board[sq] = code;
        self.by_color[p.color.index()] |= b;
        self.by_kind[p.kind.index()] |= b;
        self.occ_rot |= ROT_BB[sq];
    }

    #[inline(always)]
    fn remove_piece(&mut self, sq: usize, code: u8) {
        let c = (code - 1) as usize;
        let b = !SQUARE_BB[sq];
        self.board[sq] = 0;
        self.by_color[c / 7] &= b;
        self.by_kind[c % 7] &= b;
        self.occ_rot &= !ROT_BB[sq];
    }

    /// Key recomputed from scratch (the incremental key must always equal it).
    pub fn compute_key(&self) -> u64 {
        let mut k = 0;
        for s in 0..90 {
            let code = self.board[s] as usize;
            if code != 0 {
                if self.dark & (1u128 << s) != 0 {
                    k ^= KEYS.dark[(code - 1) / 7][s];
                } else {
                    k ^= KEYS.piece[code][s];
                }
            }
        }
        if self.variant == Variant::Jieqi {
            for c in 0..2 {
                for t in 0..7 {
                    k ^= KEYS.pool[c][t][self.pool[c][t].min(5) as usize];
                }
            }
        }
        if self.side == Color::Black {
            k ^= KEYS.side;
        }
        k
    }

    /// Whether `sq` would be attacked by `by` with the given occupancy, ignoring the pieces in
    /// `removed` (a piece just captured).
    #[inline(always)]
    pub(crate) fn attacked_with(
        &self,
        sq: usize,
        by: Color,
        occ: Bitboard,
        occ_rot: Bitboard,
        removed: Bitboard,
    ) -> bool {
        let theirs = self.by_color[by.index()] & !removed;
        let (rook, cannon) = rook_and_cannon(sq, occ, occ_rot);
        if rook
            & theirs
            & (self.by_kind[PieceType::Rook as usize] | self.by_kind[PieceType::King as usize])
            != 0
        {
            return true;
        }
        if cannon & theirs & self.by_kind[PieceType::Cannon as usize] != 0 {
            return true;
        }
        if HORSE_ATTACKERS[sq][diag_legs(sq, occ)]
            & theirs
            & self.by_kind[PieceType::Horse as usize]
            != 0
        {
            return true;
        }
        if PAWN_ATTACKERS[by.index()][sq] & theirs & self.by_kind[PieceType::Pawn as usize] != 0 {
            return true;
        }
        if self.variant == Variant::Jieqi {
            // Revealed Jieqi advisors and elephants roam freely and can attack a king. A dark
            // advisor stays in its palace; a dark elephant cannot leave its half from home.
            let mut advisors = theirs & self.by_kind[PieceType::Advisor as usize];
            if PALACE & (1u128 << sq) == 0 {
                advisors &= !self.dark;
            }
            if ADVISOR_MOVES[sq] & advisors != 0 {
                return true;
            }
            if ELEPHANT_MOVES[sq][diag_legs(sq, occ)]
                & theirs
                & self.by_kind[PieceType::Elephant as usize]
                != 0
            {
                return true;
            }
        }
        false
    }

    /// Whether the side `color`'s king is attacked in the current position.
    #[inline(always)]
    pub fn king_attacked(&self, color: Color) -> bool {
        let k = self.king_square(color).index();
        self.attacked_with(k, color.flip(), self.occupied(), self.occ_rot, 0)
    }

    /// Whether `sq` is attacked by `by` in the current position.
    pub fn is_attacked(&self, sq: Square, by: Color) -> bool {
        self.attacked_with(sq.index(), by, self.occupied(), self.occ_rot, 0)
    }

    /// Plays `m`, which must be legal. Dark movers (Jieqi) must carry their revealed kind.
    #[inline]
    pub fn make_move(&mut self, m: Move) {
        let from = m.from().index();
        let to = m.to().index();
        let code = self.board[from];
        let captured = self.board[to];
        let to_bb = SQUARE_BB[to];
        let from_bb = SQUARE_BB[from];
        let captured_dark = self.dark & to_bb != 0;
        let moved_dark = self.dark & from_bb != 0;
        // Jieqi suffixes are kept only where they apply, so that unmake can trust them.
        let m = if moved_dark || captured_dark {
            self.normalize_move(m)
        } else {
            m.squares()
        };
        self.history.push(State {
            mv: m,
            captured,
            captured_dark,
            moved_dark,
            key: self.key,
            rule60: self.rule60,
            in_check: self.in_check,
        });
        let us = self.side;
        let mut key = self.key ^ KEYS.side;
        if captured != 0 {
            self.remove_piece(to, captured);
            if captured_dark {
                self.dark &= !to_bb;
                key ^= KEYS.dark[us.flip().index()][to];
                if let Some(kind) = m.captured_reveal() {
                    // The viewer learns the identity: it leaves the victim's pool.
                    key ^= self.pool_step(us.flip(), kind, -1);
                }
            } else {
                key ^= KEYS.piece[captured as usize][to];
            }
            self.rule60 = 0;
        } else {
            self.rule60 += 1;
        }
        self.remove_piece(from, code);
        let mut new_code = code;
        if moved_dark {
            self.dark &= !from_bb;
            key ^= KEYS.dark[us.index()][from];
            // `normalize_move` guarantees a reveal drawn from the mover's pool.
            let kind = m.reveal().unwrap_or(PieceType::King);
            new_code = Piece::new(us, kind).code();
            key ^= self.pool_step(us, kind, -1);
        } else {
            key ^= KEYS.piece[code as usize][from];
        }
        self.put_piece(to, new_code);
        key ^= KEYS.piece[new_code as usize][to];
        self.key = key;
        if us == Color::Black {
            self.fullmove += 1;
        }
        self.side = us.flip();
        self.in_check = self.king_attacked(self.side);
    }

    /// Takes back the last move made with `make_move`.
    #[inline]
    pub fn unmake_move(&mut self) {
        let st = self.history.pop().expect("unmake_move with empty history");
        self.side = self.side.flip();
        if self.side == Color::Black {
            self.fullmove -= 1;
        }
        let us = self.side;
        if st.mv.is_null() {
            self.key = st.key;
            self.rule60 = st.rule60;
            self.in_check = st.in_check;
            return;
        }
        let from = st.mv.from().index();
        let to = st.mv.to().index();
        let moved = self.board[to];
        self.remove_piece(to, moved);
        if st.moved_dark {
            // The mover goes back face-down, moving as its home square's kind, and its
            // identity returns to the pool.
            if let Some(kind) = st.mv.reveal() {
                self.pool[us.index()][kind.index()] += 1;
            }
            let home = home_kind(us, from).expect("dark mover stands on a home square");
            self.put_piece(from, Piece::new(us, home).code());
            self.dark |= 1u128 << from;
        } else {
            self.put_piece(from, moved);
        }
        if st.captured != 0 {
            self.put_piece(to, st.captured);
            if st.captured_dark {
                self.dark |= 1u128 << to;
                if let Some(kind) = st.mv.captured_reveal() {
                    self.pool[us.flip().index()][kind.index()] += 1;
                }
            }
        }
        self.key = st.key;
        self.rule60 = st.rule60;
        self.in_check = st.in_check;
    }

    /// Passes the move (null-move pruning). Never call when in check.
    pub fn make_null(&mut self) {
        self.history.push(State {
            mv: Move::NULL,
            captured: 0,
            captured_dark: false,
            moved_dark: false,
            key: self.key,
            rule60: self.rule60,
            in_check: self.in_check,
        });
        self.key ^= KEYS.side;
        if self.side == Color::Black {
            self.fullmove += 1;
        }
        self.side = self.side.flip();
        self.in_check = false;
    }

    pub fn unmake_null(&mut self) {
        self.unmake_move();
    }

    /// The squares a move must leave or enter to be able to give check to the opponent of the
    /// side to move: the enemy king's rank and file (rook, cannon and screen lines), the horse
    /// squares around it and its diagonal neighbours (horse legs). A Xiangqi move with neither
    /// end in the zone never gives check, so pruning can skip it without playing it; in Jieqi
    /// (roaming advisors and elephants) the zone is the whole board.
    #[inline]
    pub fn check_zone(&self) -> Bitboard {
        if self.variant == Variant::Jieqi {
            return ALL;
        }
        let k = self.king_square(self.side.flip()).index();
        RANK_MASK[k / 9] | FILE_MASK[k % 9] | HORSE_ATTACKERS[k][0] | DIAG_MASK[k]
    }

    /// Xiangqi: the empty squares from which a piece of each kind (indexed by [`PieceType`]) of
    /// the side to move would attack the enemy king, with the occupancy as it stands (Stockfish's
    /// `check_squares`): a quiet move of that kind to such a square gives a direct check
    /// unless its own departure opens or closes a line to the king, which a move leaving a
    /// square outside [`Position::check_zone`] cannot. King, advisor and elephant give none.
    pub fn check_squares(&self) -> [Bitboard; 7] {
        let mut t = [0; 7];
        let k = self.king_square(self.side.flip()).index();
        let occ = self.occupied();
        let empty = ALL & !occ;
        let rook = rook_attacks(k, occ, self.occ_rot);
        // A cannon checks across exactly one screen: the first piece each way from the king.
        let screens = rook & occ;
        let mut rot = self.occ_rot;
        for s in Squares(screens) {
            rot &= !ROT_BB[s];
        }
        let beyond = rook_attacks(k, occ & !screens, rot) & !rook;
        t[PieceType::Rook as usize] = rook & empty;
        t[PieceType::Cannon as usize] = beyond & empty;
        t[PieceType::Horse as usize] = HORSE_ATTACKERS[k][diag_legs(k, occ)] & empty;
        t[PieceType::Pawn as usize] = PAWN_ATTACKERS[self.side.index()][k] & empty;
        t
    }

    /// Whether `m` might give check: false only when it cannot (see [`Position::check_zone`]).
    #[inline(always)]
    pub fn may_give_check(&self, m: Move, zone: Bitboard) -> bool {
        zone & (SQUARE_BB[m.from().index()] | SQUARE_BB[m.to().index()]) != 0
    }

    /// Whether playing `m` (legal) gives check.
    pub fn gives_check(&self, m: Move) -> bool {
        let from = m.from().index();
        let to = m.to().index();
        let us = self.side;
        let them_k = self.king_square(us.flip()).index();
        let from_bb = SQUARE_BB[from];
        let to_bb = SQUARE_BB[to];
        let occ = (self.occupied() & !from_bb) | to_bb;
        let occ_rot = (self.occ_rot & !ROT_BB[from]) | ROT_BB[to];
        // Evaluate attackers with the mover relocated: temporarily build a copy of the sets.
        let mut tmp = self.clone_shallow();
        let code = self.board[from];
        let kind = m
            .reveal()
            .map(|k| k.index())
            .unwrap_or(((code - 1) % 7) as usize);
        let captured = self.board[to];
        if captured != 0 {
            let c = (captured - 1) as usize;
            tmp.by_color[c / 7] &= !to_bb;
            tmp.by_kind[c % 7] &= !to_bb;
        }
        tmp.by_color[us.index()] = (tmp.by_color[us.index()] & !from_bb) | to_bb;
        tmp.by_kind[((code - 1) % 7) as usize] &= !from_bb;
        tmp.by_kind[kind] |= to_bb;
        tmp.attacked_with(them_k, us, occ, occ_rot, 0)
    }

    /// A copy without the undo history (cheap enough for occasional what-if queries).
    fn clone_shallow(&self) -> Position {
        Position {
            board: self.board,
            by_color: self.by_color,
            by_kind: self.by_kind,
            occ_rot: self.occ_rot,
            side: self.side,
            key: self.key,
            rule60: self.rule60,
            fullmove: self.fullmove,
            in_check: self.in_check,
            variant: self.variant,
            dark: self.dark,
            pool: self.pool,
            hidden: self.hidden,
            jieqi: self.jieqi,
            history: Vec::new(),
        }
    }

    /// A copy that keeps only the moves `history[start..]`: enough to take them back, which is
    /// all the chase ruling needs of a cycle (a full `clone` would copy the whole game).
    pub(super) fn clone_with_history_from(&self, start: usize) -> Position {
        let mut p = self.clone_shallow();
        p.history.extend_from_slice(&self.history[start..]);
        p
    }

    /// Recomputes every derived field and returns an error naming the first mismatch.
    /// Used by tests (perft through the incremental paths) and debug assertions.
    pub fn debug_validate(&self) -> Result<(), String> {
        let mut by_color = [0u128; 2];
        let mut by_kind = [0u128; 7];
        let mut occ_rot = 0u128;
        for s in 0..90 {
            if let Some(p) = Piece::from_code(self.board[s]) {
                by_color[p.color.index()] |= 1 << s;
                by_kind[p.kind.index()] |= 1 << s;
                occ_rot |= 1u128 << ROT_INDEX[s];
            }
        }
        if by_color != self.by_color {
            return Err("colour bitboards differ from the board".into());
        }
        if by_kind != self.by_kind {
            return Err("kind bitboards differ from the board".into());
        }
        if occ_rot != self.occ_rot {
            return Err("file-major occupancy differs from the board".into());
        }
        if self.compute_key() != self.key {
            return Err(format!(
                "incremental key {:016x} != recomputed {:016x}",
                self.key,
                self.compute_key()
            ));
        }
        if self.king_attacked(self.side) != self.in_check {
            return Err("in_check flag is stale".into());
        }
        Ok(())
    }
}

/// Jieqi: the face-down pieces and the pools, and the bookkeeping make/unmake does on them.
impl Position {
    /// The Jieqi rule options of this position.
    pub fn jieqi_rules(&self) -> JieqiRules {
        self.jieqi
    }

    /// Sets the Jieqi rule options (they do not change the key: they are the same all game).
    pub fn set_jieqi_rules(&mut self, rules: JieqiRules) {
        self.jieqi = rules;
    }

    /// Whether the piece on `sq` is face down.
    #[inline(always)]
    pub fn is_dark(&self, sq: Square) -> bool {
        self.dark & sq.bb() != 0
    }

    /// Number of `color`'s dark pieces on the board.
    pub fn dark_count(&self, color: Color) -> u32 {
        (self.dark & self.by_color[color.index()]).count_ones()
    }

    /// Total of `color`'s pool (dark pieces on board plus those captured unseen).
    pub fn pool_total(&self, color: Color) -> u32 {
        self.pool[color.index()].iter().map(|&n| n as u32).sum()
    }

    /// Arbiter only: the true identity of the dark piece on `sq`, if recorded.
    pub fn hidden_kind(&self, sq: Square) -> Option<PieceType> {
        if !self.is_dark(sq) {
            return None;
        }
        match self.hidden[sq.index()] {
            0 => None,
            v => Some(PieceType::from_index(v as usize - 1)),
        }
    }

    /// Whether every dark piece's identity is recorded (an arbiter position).
    pub fn knows_all_hidden(&self) -> bool {
        Squares(self.dark).all(|s| self.hidden[s] != 0)
    }

    /// A copy with every hidden identity forgotten (what a player may be shown).
    pub fn without_hidden(&self) -> Position {
        let mut p = self.clone();
        p.hidden = [0; 90];
        p
    }

    /// Changes `color`'s pool count of `kind` by `delta` and returns the key change.
    #[inline]
    fn pool_step(&mut self, color: Color, kind: PieceType, delta: i8) -> u64 {
        let n = &mut self.pool[color.index()][kind.index()];
        let before = (*n).min(5) as usize;
        *n = n.saturating_add_signed(delta);
        let after = (*n).min(5) as usize;
        KEYS.pool[color.index()][kind.index()][before]
            ^ KEYS.pool[color.index()][kind.index()][after]
    }

    /// Keeps the Jieqi suffixes of `m` only where they apply here and guarantees that a dark
    /// mover carries a reveal drawn from its pool (so unmake can trust the stored move). Public
    /// so that an incremental evaluation can tell, before `make_move(m)`, which kind a dark
    /// mover will show: the move's reveal in the result.
    pub fn normalize_move(&self, m: Move) -> Move {
        let from = m.from().index();
        let to = m.to().index();
        let us = self.side;
        let mut out = m.squares();
        if self.dark & (1u128 << from) != 0 {
            let pool = &self.pool[us.index()];
            let wanted = m.reveal().filter(|k| pool[k.index()] > 0);
            debug_assert!(
                wanted.is_some(),
                "dark move {m:?} without a reveal from the pool in {self:?}"
            );
            let home = dark_home_kind(us, from).unwrap_or(PieceType::Pawn);
            let kind = wanted
                .or_else(|| (pool[home.index()] > 0).then_some(home))
                .or_else(|| {
                    PieceType::ALL
                        .into_iter()
                        .find(|k| *k != PieceType::King && pool[k.index()] > 0)
                })
                .unwrap_or(home);
            out = out.with_reveal(kind);
        }
        if self.dark & (1u128 << to) != 0
            && let Some(k) = m.captured_reveal()
            && self.pool[us.flip().index()][k.index()] > 0
        {
            out = out.with_captured_reveal(k);
        }
        out
    }
}
