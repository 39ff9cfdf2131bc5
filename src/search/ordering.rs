//! Move ordering: the transposition-table move first, then captures by MVV-LVA (most valuable
//! victim, least valuable attacker) plus their capture history, then the two killer moves of
//! the ply, then quiet moves by their history and their continuation histories (how the move
//! fared after the previous move and after our own move before it, as Stockfish keeps them),
//! and last the captures that lose material by static exchange (Xiangqi)
//! (<https://www.chessprogramming.org/Move_Ordering>). Moves are picked
//! lazily by selection: a cut-off after the first move or two (the common case) never sorts
//! the rest.

use super::params::SearchParams;
use crate::core::attacks::SQUARE_BB;
use crate::core::see;
use crate::core::{Move, MoveList, Position};
use std::mem::MaybeUninit;

/// Ordinal piece values for ordering and the cheap exchange test (King, Advisor, Elephant,
/// Horse, Rook, Cannon, Pawn). Only their order matters, not the evaluation's scale.
pub const ORDER_VALUE: [i32; 7] = [60, 2, 2, 4, 9, 5, 1];

pub(crate) const TT_SCORE: i32 = 1 << 30;
const CAPTURE_SCORE: i32 = 1 << 28;
const KILLER_SCORE: i32 = 1 << 26;
/// The order score of the captures handed out last (below every quiet move's).
const BAD_CAPTURE_SCORE: i32 = -(1 << 28);

/// Entries of one continuation table: one row per (piece code, destination) of the move
/// before, one entry per (piece code, destination) of this move.
const CONT_ROW: usize = 15 * 90;

/// Where a move's row starts in a continuation table, or [`NO_CONT`] (a null move, a reveal,
/// the root): the context of [`Heuristics::quiet_score`].
#[inline(always)]
pub fn cont_row(code: u8, to: usize) -> usize {
    (code as usize * 90 + to) * CONT_ROW
}

/// No previous move to continue from.
pub const NO_CONT: usize = usize::MAX;

/// The continuation table's own bound: entries are `i16` (the table is a few megabytes per
/// thread), so gravity there stays below `i16::MAX` whatever `history_max` says.
const CONT_MAX: i32 = 16_000;

/// The history bonus of a cut-off at `depth` plies: `(quad * depth + linear) * depth - offset`,
/// at most `cap` (the defaults, 16 d² up to 19,200, are the engine's original shape; Stockfish
/// and Pikafish-HCE use a steeper one that starts below zero at depth 1). The malus of the
/// moves tried before the cut-off is its negation.
#[inline]
pub fn history_bonus(p: &SearchParams, depth: i32) -> i32 {
    let d = depth.max(0);
    ((p.history_bonus_quad * d + p.history_bonus_linear) * d - p.history_bonus_offset)
        .min(p.history_bonus_cap)
}

/// History gravity: `h += bonus - h * |bonus| / max` keeps values within `[-max, max]`
/// and lets newer results outweigh old ones (Stockfish's `update_history`).
#[inline(always)]
fn gravity(h: i32, bonus: i32, max: i32) -> i32 {
    let b = bonus.clamp(-max, max);
    h + b - h * b.abs() / max
}

/// Entries of the quiet history: (piece code, destination) uses the first `15 * 90`; (side,
/// origin, destination), Stockfish's butterfly indexing, uses all of them.
const HISTORY_LEN: usize = 2 * 90 * 90;

/// Move statistics shared across the search: history by (piece, destination) or by (side,
/// origin, destination), continuation histories by (previous move, this move), capture history
/// by (piece, destination, victim) and two killers per ply.
pub struct Heuristics {
    /// The quiet history at [`Heuristics::history_index`], bounded by the gravity formula in
    /// `update_history`.
    history: Box<[i32]>,
    /// Whether `history` is indexed by (side, origin, destination) rather than by (piece
    /// code, destination): the search constant `history_from_to`.
    from_to: bool,
    /// `cont[cont_row(previous move) + code * 90 + to]`, for the move one ply back (the
    /// opponent's) and two plies back (ours) alike, as Stockfish shares one table.
    cont: Box<[i16]>,
    /// `capture[(code * 90 + to) * 7 + victim kind]`.
    capture: Box<[i32]>,
    pub killers: Vec<[Move; 2]>,
}

impl Heuristics {
    pub fn new(max_ply: usize) -> Heuristics {
        Heuristics {
            history: vec![0; HISTORY_LEN].into_boxed_slice(),
            from_to: false,
            cont: vec![0; CONT_ROW * CONT_ROW].into_boxed_slice(),
            capture: vec![0; 15 * 90 * 7].into_boxed_slice(),
            killers: vec![[Move::NULL; 2]; max_ply + 2],
        }
    }

    pub fn clear(&mut self) {
        self.history.fill(0);
        self.cont.fill(0);
        self.capture.fill(0);
        self.killers.fill([Move::NULL; 2]);
    }

    /// Chooses how the quiet history is indexed (the search constant `history_from_to`); a
    /// change of indexing clears it, as its entries would mean other moves.
    pub fn set_from_to(&mut self, from_to: bool) {
        if from_to != self.from_to {
            self.from_to = from_to;
            self.history.fill(0);
        }
    }

    /// Where the quiet move of the piece `code` from `from` to `to` sits in the history.
    #[inline(always)]
    fn history_index(&self, code: u8, from: usize, to: usize) -> usize {
        if self.from_to {
            // Codes 1 to 7 are red's, 8 to 14 black's.
            (code >= 8) as usize * 8100 + from * 90 + to
        } else {
            code as usize * 90 + to
        }
    }

    /// The quiet history of the move alone (no continuation).
    #[inline(always)]
    pub fn history(&self, code: u8, from: usize, to: usize) -> i32 {
        self.history[self.history_index(code, from, to)]
    }

    #[inline]
    pub fn update_history(&mut self, code: u8, from: usize, to: usize, bonus: i32, max: i32) {
        let i = self.history_index(code, from, to);
        self.history[i] = gravity(self.history[i], bonus, max);
    }

    /// The quiet move (`code` to `to`) after the moves whose rows `ctx` holds gets `bonus`
    /// in both continuation tables.
    #[inline]
    pub fn update_cont(&mut self, ctx: [usize; 2], code: u8, to: usize, bonus: i32, max: i32) {
        let max = max.min(CONT_MAX);
        for row in ctx {
            if row != NO_CONT {
                let h = &mut self.cont[row + code as usize * 90 + to];
                *h = gravity(*h as i32, bonus, max) as i16;
            }
        }
    }

    /// The quiet move `m` of `pos`, played after the moves whose rows `ctx` holds, gets
    /// `bonus` in its history and both continuation histories.
    #[inline]
    pub fn update_quiet(&mut self, pos: &Position, ctx: [usize; 2], m: Move, bonus: i32, max: i32) {
        let (from, to) = (m.from().index(), m.to().index());
        let code = piece_code(pos, from);
        self.update_history(code, from, to, bonus, max);
        self.update_cont(ctx, code, to, bonus, max);
    }

    #[inline]
    pub fn update_capture(&mut self, pos: &Position, m: Move, bonus: i32, max: i32) {
        let i = capture_index(pos, m);
        self.capture[i] = gravity(self.capture[i], bonus, max);
    }

    /// The ordering score of a quiet move: its history and its two continuation histories.
    #[inline(always)]
    pub fn quiet_score(&self, ctx: [usize; 2], code: u8, from: usize, to: usize) -> i32 {
        let mut s = self.history(code, from, to);
        let i = code as usize * 90 + to;
        for row in ctx {
            if row != NO_CONT {
                s += self.cont[row + i] as i32;
            }
        }
        s
    }

    /// The two continuation histories of a quiet move alone (without its plain history):
    /// what the pruning by continuation history reads.
    #[inline(always)]
    pub fn cont_score(&self, ctx: [usize; 2], code: u8, to: usize) -> i32 {
        let i = code as usize * 90 + to;
        ctx.iter()
            .filter(|&&row| row != NO_CONT)
            .map(|&row| self.cont[row + i] as i32)
            .sum()
    }

    #[inline]
    pub fn history_of(&self, pos: &Position, m: Move, ctx: [usize; 2]) -> i32 {
        let code = piece_code(pos, m.from().index());
        self.quiet_score(ctx, code, m.from().index(), m.to().index())
    }

    #[inline(always)]
    pub fn capture_score(&self, pos: &Position, m: Move) -> i32 {
        self.capture[capture_index(pos, m)]
    }

    pub fn add_killer(&mut self, ply: usize, m: Move) {
        let k = &mut self.killers[ply];
        if k[0] != m {
            k[1] = k[0];
            k[0] = m;
        }
    }
}

#[inline(always)]
fn capture_index(pos: &Position, m: Move) -> usize {
    let victim = pos.piece_at(m.to()).map_or(0, |p| p.kind.index());
    (piece_code(pos, m.from().index()) as usize * 90 + m.to().index()) * 7 + victim
}

#[inline(always)]
pub fn piece_code(pos: &Position, sq: usize) -> u8 {
    pos.piece_at(crate::core::Square(sq as u8))
        .map(|p| p.code())
        .unwrap_or(0)
}

/// The MVV-LVA score of a capture (higher first).
#[inline(always)]
pub fn mvv_lva(pos: &Position, m: Move) -> i32 {
    let victim = pos.piece_at(m.to()).map(|p| ORDER_VALUE[p.kind.index()]);
    let attacker = pos
        .piece_at(m.from())
        .map(|p| ORDER_VALUE[p.kind.index()])
        .unwrap_or(0);
    victim.unwrap_or(0) * 64 - attacker
}

/// Whether `m` (a move from the transposition table, possibly from another position after a
/// key collision) is legal in `pos`, without generating the move list: the mover's own
/// attack pattern, then the king-safety test of the move generator (`legal_slow`). Xiangqi
/// only; Jieqi positions (dark pieces) take the slow path.
pub fn is_legal_fast(pos: &Position, m: Move) -> bool {
    use crate::core::PieceType;
    use crate::core::attacks::*;
    if m.is_null() || m.0 >> 14 != 0 {
        return false;
    }
    let (from, to) = (m.from().index(), m.to().index());
    if from >= 90 || to >= 90 || from == to {
        return false;
    }
    if pos.dark() != 0 || pos.variant() != crate::core::Variant::Xiangqi {
        return pos.is_legal(m);
    }
    let us = pos.side_to_move();
    let Some(p) = pos.piece_at(m.from()) else {
        return false;
    };
    let to_bb = SQUARE_BB[to];
    if p.color != us || pos.pieces(us) & to_bb != 0 {
        return false;
    }
    let occ = pos.occupied();
    let occ_rot = pos.occ_rot();
    let u = us.index();
    let targets = match p.kind {
        PieceType::Rook => rook_attacks(from, occ, occ_rot),
        PieceType::Cannon => {
            let (slide, jump) = rook_and_cannon(from, occ, occ_rot);
            (slide & !occ) | (jump & pos.pieces(us.flip()))
        }
        PieceType::Horse => HORSE_MOVES[from][ortho_legs(from, occ)],
        PieceType::Pawn => PAWN_MOVES[u][from],
        PieceType::Elephant => ELEPHANT_MOVES[from][diag_legs(from, occ)] & HALF[u],
        PieceType::Advisor => ADVISOR_MOVES[from] & PALACE,
        PieceType::King => KING_MOVES[from],
    };
    if targets & to_bb == 0 {
        return false;
    }
    let from_bb = SQUARE_BB[from];
    let occ2 = (occ & !from_bb) | to_bb;
    let rot2 = (occ_rot & !ROT_BB[from]) | ROT_BB[to];
    let ksq = pos.king_square(us).index();
    let k = if from == ksq { to } else { ksq };
    !pos.attacked_with(k, us.flip(), occ2, rot2, to_bb)
}

/// The main search's move source in stages (Stockfish's `MovePicker`): the TT move alone
/// (checked with [`is_legal_fast`]); the captures, generated then and picked by MVV-LVA; the
/// two killers (checked the same way); the quiet moves, generated last and picked by history.
/// A cut-off in an early stage costs none of the later generation, and the common case, a
/// cut-off by the TT move, costs no generation at all.
pub struct StagedMoves {
    tt_move: Move,
    stage: u8,
    killers: [Move; 2],
    /// The continuation rows of the previous two moves ([`Heuristics::quiet_score`]).
    ctx: [usize; 2],
    /// Killers get their own stage where the fast legality test applies (Xiangqi); otherwise
    /// they are scored inside the quiet stage.
    killer_stage: bool,
    next_killer: usize,
    list: ScoredMoves,
    /// Set once pruning holds: quiet moves generated later keep only those that may check.
    quiet_zone: Option<crate::core::Bitboard>,
    /// Moves handed out so far (0 at the end means no legal move).
    pub yielded: usize,
    /// A capture whose static exchange loses more than this percentage of its victim waits in
    /// `bad` until the quiet moves are done (Xiangqi; `None` keeps every capture in order).
    bad_percent: Option<i32>,
    bad: MoveList,
    next_bad: usize,
    /// Added to the ordering score of a quiet move that gives a direct check (Xiangqi; 0:
    /// none). See [`Position::check_squares`].
    check_bonus: i32,
}

const STAGE_TT: u8 = 0;
const STAGE_GEN_CAPTURES: u8 = 1;
const STAGE_CAPTURES: u8 = 2;
const STAGE_KILLERS: u8 = 3;
const STAGE_GEN_QUIETS: u8 = 4;
const STAGE_QUIETS: u8 = 5;
const STAGE_BAD_CAPTURES: u8 = 6;

impl StagedMoves {
    /// `bad_percent`: see the field (`None`: no capture waits); Xiangqi only.
    pub fn new(
        pos: &Position,
        tt_move: Move,
        killers: [Move; 2],
        ctx: [usize; 2],
        bad_percent: Option<i32>,
        check_bonus: i32,
    ) -> StagedMoves {
        let tt_move = if is_legal_fast(pos, tt_move) {
            tt_move
        } else {
            Move::NULL
        };
        let xiangqi = pos.variant() == crate::core::Variant::Xiangqi;
        StagedMoves {
            bad_percent: bad_percent.filter(|_| xiangqi),
            check_bonus: if xiangqi { check_bonus } else { 0 },
            bad: MoveList::new(),
            next_bad: 0,
            tt_move,
            stage: STAGE_TT,
            killers,
            ctx,
            killer_stage: pos.variant() == crate::core::Variant::Xiangqi,
            next_killer: 0,
            list: ScoredMoves::empty(),
            quiet_zone: None,
            yielded: 0,
        }
    }

    #[inline]
    fn hand_out(&mut self, m: Move, score: i32) -> Option<(Move, i32)> {
        self.yielded += 1;
        Some((m, score))
    }

    #[inline]
    pub fn next_move(&mut self, pos: &Position, heur: &Heuristics) -> Option<(Move, i32)> {
        loop {
            match self.stage {
                STAGE_TT => {
                    self.stage = STAGE_GEN_CAPTURES;
                    if !self.tt_move.is_null() {
                        return self.hand_out(self.tt_move, TT_SCORE);
                    }
                }
                STAGE_GEN_CAPTURES => {
                    self.list.moves.clear();
                    pos.legal_captures_into(&mut self.list.moves);
                    self.list.score_captures_with(pos, heur);
                    self.stage = STAGE_CAPTURES;
                }
                STAGE_CAPTURES => {
                    while let Some((m, s)) = self.list.next_move() {
                        if m == self.tt_move {
                            continue;
                        }
                        if let Some(percent) = self.bad_percent {
                            let victim = pos.piece_at(m.to()).map_or(0, |p| see::value(p.kind));
                            if !pos.see_ge(m, -victim * percent / 100) {
                                self.bad.push(m);
                                continue;
                            }
                        }
                        return self.hand_out(m, s);
                    }
                    self.stage = if self.killer_stage {
                        STAGE_KILLERS
                    } else {
                        STAGE_GEN_QUIETS
                    };
                }
                STAGE_KILLERS => {
                    while self.next_killer < 2 {
                        let i = self.next_killer;
                        let k = self.killers[i];
                        self.next_killer += 1;
                        if k != self.tt_move
                            && !k.is_null()
                            && (i == 0 || k != self.killers[0])
                            && !pos.is_capture(k)
                            && is_legal_fast(pos, k)
                        {
                            return self.hand_out(k, KILLER_SCORE + 1 - i as i32);
                        }
                    }
                    self.stage = STAGE_GEN_QUIETS;
                }
                STAGE_GEN_QUIETS => {
                    self.list.moves.clear();
                    pos.legal_quiets_into(&mut self.list.moves);
                    if let Some(zone) = self.quiet_zone {
                        self.list.moves.retain(|m| pos.may_give_check(m, zone));
                    }
                    let killers = if self.killer_stage {
                        [Move::NULL; 2]
                    } else {
                        self.killers
                    };
                    self.list
                        .score_quiets(pos, killers, heur, self.ctx, self.check_bonus);
                    self.stage = STAGE_QUIETS;
                }
                STAGE_QUIETS => {
                    while let Some((m, s)) = self.list.next_move() {
                        let killer =
                            self.killer_stage && (m == self.killers[0] || m == self.killers[1]);
                        if m != self.tt_move && !killer {
                            return self.hand_out(m, s);
                        }
                    }
                    self.stage = STAGE_BAD_CAPTURES;
                }
                STAGE_BAD_CAPTURES => {
                    let m = *self.bad.as_slice().get(self.next_bad)?;
                    self.next_bad += 1;
                    return self.hand_out(m, BAD_CAPTURE_SCORE);
                }
                _ => return None,
            }
        }
    }

    /// Drops the quiet moves not handed out yet whose squares both miss `zone`: once late-move
    /// or futility pruning holds at a node it holds for every later quiet move, and a quiet move
    /// outside the check zone cannot give check, so none of them would be searched. Saves
    /// picking them one by one (or, before the quiet stage, listing them at all).
    pub fn skip_quiets_outside(&mut self, pos: &Position, zone: crate::core::Bitboard) {
        if self.stage == STAGE_QUIETS {
            self.list.retain_rest(|m| pos.may_give_check(m, zone));
        } else {
            self.quiet_zone = Some(zone);
        }
    }
}

/// A move list with scores, picked best-first.
pub struct ScoredMoves {
    pub moves: MoveList,
    /// Only the first `moves.len()` entries are written; left uninitialised otherwise
    /// (zeroing 1 KB per node showed up as a fifth of the search time).
    scores: [MaybeUninit<i32>; crate::core::movegen::MAX_MOVES],
    next: usize,
}

type Scores = [MaybeUninit<i32>; crate::core::movegen::MAX_MOVES];

#[inline(always)]
fn new_scores() -> Scores {
    // SAFETY: an array of `MaybeUninit` needs no initialisation (see `MoveList::new`).
    unsafe { MaybeUninit::uninit().assume_init() }
}

impl ScoredMoves {
    /// An empty list (nothing initialised: the stages fill it in place).
    #[inline(always)]
    pub fn empty() -> ScoredMoves {
        ScoredMoves {
            moves: MoveList::new(),
            scores: new_scores(),
            next: 0,
        }
    }

    /// Scores the captures now in `moves` by MVV-LVA and capture history and starts picking
    /// from the first. The victim dominates: history reorders captures of like victims.
    #[inline]
    pub fn score_captures_with(&mut self, pos: &Position, heur: &Heuristics) {
        for (i, &m) in self.moves.iter().enumerate() {
            let s = CAPTURE_SCORE + mvv_lva(pos, m) * 16 + heur.capture_score(pos, m);
            self.scores[i] = MaybeUninit::new(s);
        }
        self.next = 0;
    }

    /// Scores the quiet moves now in `moves` by history and continuation history (killers
    /// above), `check_bonus` more for a move to one of its piece's
    /// [`Position::check_squares`] (0: no bonus), and starts picking from the first.
    #[inline]
    pub fn score_quiets(
        &mut self,
        pos: &Position,
        killers: [Move; 2],
        heur: &Heuristics,
        ctx: [usize; 2],
        check_bonus: i32,
    ) {
        let checks = (check_bonus != 0).then(|| pos.check_squares());
        for (i, &m) in self.moves.iter().enumerate() {
            self.scores[i] = MaybeUninit::new(if m == killers[0] {
                KILLER_SCORE + 1
            } else if m == killers[1] {
                KILLER_SCORE
            } else {
                let mut s = heur.history_of(pos, m, ctx);
                if let Some(squares) = &checks
                    && let Some(p) = pos.piece_at(m.from())
                    && squares[p.kind as usize] & SQUARE_BB[m.to().index()] != 0
                {
                    s = (s + check_bonus).min(KILLER_SCORE - 1);
                }
                s
            });
        }
        self.next = 0;
    }

    /// Scores the moves now in `moves` for quiescence (captures, or evasions): the TT move
    /// first, then captures by MVV-LVA, then the rest; starts picking from the first.
    #[inline]
    pub fn score_captures_first(&mut self, pos: &Position, tt_move: Move) {
        for (i, &m) in self.moves.iter().enumerate() {
            self.scores[i] = MaybeUninit::new(if m == tt_move {
                TT_SCORE
            } else if pos.is_capture(m) {
                CAPTURE_SCORE + mvv_lva(pos, m)
            } else {
                0
            });
        }
        self.next = 0;
    }

    /// The best remaining move and its ordering score.
    #[inline]
    pub fn next_move(&mut self) -> Option<(Move, i32)> {
        let n = self.moves.len();
        if self.next >= n {
            return None;
        }
        // SAFETY: entries below `n` were written in the constructor.
        let score = |s: &Scores, i: usize| unsafe { s[i].assume_init() };
        let slice = self.moves.as_mut_slice();
        let mut best = self.next;
        let mut best_score = score(&self.scores, best);
        for i in self.next + 1..n {
            let v = score(&self.scores, i);
            if v > best_score {
                best = i;
                best_score = v;
            }
        }
        slice.swap(self.next, best);
        self.scores.swap(self.next, best);
        let r = (slice[self.next], best_score);
        self.next += 1;
        Some(r)
    }

    /// Drops the moves not picked yet that fail `keep`; the survivors keep their scores and
    /// still come out best-first (among equal scores, possibly in another order).
    pub fn retain_rest(&mut self, mut keep: impl FnMut(Move) -> bool) {
        let n = self.moves.len();
        let mut w = self.next;
        for i in self.next..n {
            let m = self.moves.as_slice()[i];
            if keep(m) {
                self.moves.as_mut_slice()[w] = m;
                self.scores[w] = self.scores[i];
                w += 1;
            }
        }
        self.moves.truncate(w);
    }

    /// Ordering score threshold above which a move is a killer (or better).
    pub const KILLER: i32 = KILLER_SCORE;
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::Square;
    use rand::{Rng, SeedableRng};

    /// The staged picker hands out every legal move exactly once, whatever TT move and killers
    /// it is given (legal, illegal or captures): the TT move first, then captures by MVV-LVA,
    /// then the legal quiet killers, then the other quiet moves, then (Xiangqi, when asked)
    /// exactly the captures that lose more than 60 % of their victim by static exchange; and after
    /// `skip_quiets_outside` no later quiet move outside the zone.
    #[test]
    fn staged_picker_yields_each_legal_move_once() {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(5);
        let heur = Heuristics::new(8);
        let mut positions = 0;
        for game in 0..30 {
            let mut pos = if game % 3 == 2 {
                Position::startpos_of(crate::core::Variant::Jieqi)
            } else {
                Position::startpos()
            };
            for _ in 0..rng.gen_range(0..120) {
                let legal = pos.legal_moves();
                if legal.is_empty() {
                    break;
                }
                let pick = |rng: &mut rand_chacha::ChaCha8Rng| {
                    if rng.gen_bool(0.7) {
                        legal[rng.gen_range(0..legal.len())]
                    } else {
                        Move::new(Square(rng.gen_range(0..90)), Square(rng.gen_range(0..90)))
                    }
                };
                let (tt, k0, k1) = (pick(&mut rng), pick(&mut rng), pick(&mut rng));
                // every other position without the waiting of losing captures
                let percent = (positions % 2 == 0).then_some(60);
                // every third position with the bonus of direct checks (histories are empty,
                // so a quiet move's score is the bonus or nothing)
                let bonus = if positions % 3 == 1 { 8000 } else { 0 };
                let checks = pos.check_squares();
                let mut picker = StagedMoves::new(&pos, tt, [k0, k1], [NO_CONT; 2], percent, bonus);
                let mut seen = Vec::new();
                let mut phase = 0; // 0 tt, 1 captures, 2 killers, 3 quiets, 4 losing captures
                let xiangqi = pos.variant() == crate::core::Variant::Xiangqi;
                while let Some((m, score)) = picker.next_move(&pos, &heur) {
                    assert!(legal.contains(m), "{m} not legal");
                    assert!(!seen.contains(&m), "{m} twice");
                    let losing = || {
                        let victim = pos.piece_at(m.to()).map_or(0, |p| see::value(p.kind));
                        xiangqi && percent.is_some() && !pos.see_ge(m, -victim * 60 / 100)
                    };
                    let p = if score == TT_SCORE {
                        0
                    } else if score == BAD_CAPTURE_SCORE {
                        assert!(pos.is_capture(m) && losing(), "{m}");
                        4
                    } else if pos.is_capture(m) {
                        assert!(!losing(), "{m}");
                        1
                    } else if score >= KILLER_SCORE {
                        2
                    } else {
                        let kind = pos.piece_at(m.from()).map_or(0, |p| p.kind as usize);
                        let direct = checks[kind] & SQUARE_BB[m.to().index()] != 0;
                        let expected = if xiangqi && direct { bonus } else { 0 };
                        assert_eq!(score, expected, "{m}");
                        3
                    };
                    assert!(p >= phase, "{m} (stage {p}) after stage {phase}");
                    if p == 0 {
                        assert_eq!(m, tt);
                    }
                    phase = p;
                    seen.push(m);
                }
                assert_eq!(seen.len(), legal.len());
                assert_eq!(picker.yielded, legal.len());
                // skipping: no quiet move outside the zone comes after the call
                let zone = pos.check_zone();
                let mut picker = StagedMoves::new(&pos, tt, [k0, k1], [NO_CONT; 2], Some(60), 0);
                let first = picker.next_move(&pos, &heur);
                picker.skip_quiets_outside(&pos, zone);
                let mut rest = Vec::new();
                while let Some((m, _)) = picker.next_move(&pos, &heur) {
                    rest.push(m);
                }
                // killers have their own stage in Xiangqi (exempt); in Jieqi they are quiets
                let mut expect: Vec<Move> = legal
                    .iter()
                    .copied()
                    .filter(|&m| Some(m) != first.map(|f| f.0))
                    .filter(|&m| {
                        pos.is_capture(m)
                            || (xiangqi && (m == k0 || m == k1))
                            || pos.may_give_check(m, zone)
                    })
                    .collect();
                rest.sort_by_key(|m| m.0);
                expect.sort_by_key(|m| m.0);
                assert_eq!(rest, expect);
                positions += 1;
                // a dark mover (Jieqi) is played with a reveal from its pool
                let m = legal[rng.gen_range(0..legal.len())];
                let outcomes: Vec<(Move, u32)> = pos.reveal_outcomes(m).collect();
                pos.make_move(outcomes[rng.gen_range(0..outcomes.len())].0);
            }
        }
        assert!(positions > 500, "{positions}");
    }

    /// Continuation and capture histories move the way the bonuses say, stay inside their
    /// bounds under any run of updates, and score a quiet move by history plus both
    /// continuations (a missing context adds nothing), its continuation part alone too.
    #[test]
    fn histories_follow_bonuses_within_bounds() {
        let pos = Position::startpos();
        let mut heur = Heuristics::new(8);
        let prev = [cont_row(5, 40), cont_row(12, 50)];
        let legal = pos.legal_moves();
        let m = legal[0];
        let code = piece_code(&pos, m.from().index());
        let from = m.from().index();
        let to = m.to().index();
        heur.update_cont(prev, code, to, 3000, 16384);
        heur.update_history(code, from, to, 1000, 16384);
        assert_eq!(heur.quiet_score(prev, code, from, to), 1000 + 3000 + 3000);
        // The continuation part alone, as the pruning by continuation history reads it.
        assert_eq!(heur.cont_score(prev, code, to), 3000 + 3000);
        assert_eq!(heur.cont_score([NO_CONT, prev[1]], code, to), 3000);
        assert_eq!(heur.cont_score([NO_CONT; 2], code, to), 0);
        assert_eq!(heur.quiet_score([prev[0], NO_CONT], code, from, to), 4000);
        assert_eq!(heur.quiet_score([NO_CONT; 2], code, from, to), 1000);
        // Another previous move has its own row.
        assert_eq!(
            heur.quiet_score([cont_row(5, 41), NO_CONT], code, from, to),
            1000
        );
        for i in 0..200 {
            let b = if i % 7 == 0 { -40_000 } else { 40_000 };
            heur.update_cont(prev, code, to, b, 65536);
            let c =
                heur.quiet_score([prev[0], NO_CONT], code, from, to) - heur.history(code, from, to);
            assert!(c.abs() <= CONT_MAX, "{c}");
        }
        heur.update_cont(prev, code, to, -16000, 65536);
        assert!(heur.quiet_score([prev[0], NO_CONT], code, from, to) < 1000 + CONT_MAX);
        // Capture history: a capture from a position with one.
        // The start has cannon captures of the horses (over the opposing cannons).
        let cap_pos = Position::startpos();
        let cap = cap_pos
            .legal_moves()
            .iter()
            .copied()
            .find(|&m| cap_pos.is_capture(m))
            .unwrap();
        assert_eq!(heur.capture_score(&cap_pos, cap), 0);
        heur.update_capture(&cap_pos, cap, 500, 16384);
        assert_eq!(heur.capture_score(&cap_pos, cap), 500);
        for _ in 0..100 {
            heur.update_capture(&cap_pos, cap, -20_000, 16384);
        }
        assert!(heur.capture_score(&cap_pos, cap) >= -16384);
        heur.clear();
        assert_eq!(heur.capture_score(&cap_pos, cap), 0);
        assert_eq!(heur.quiet_score(prev, code, from, to), 0);
    }

    /// With `from_to` the quiet history tells apart the same piece kind reaching the same
    /// square from two origins, and the two sides' same move; by (piece, destination) it does
    /// not. Switching the indexing clears the table; setting it again keeps it.
    #[test]
    fn from_to_history_tells_origins_apart() {
        // Both red horses have one code: by (piece, destination) b0-c2 and d4-c2 share an entry.
        let horse = crate::core::Piece::new(crate::core::Color::Red, crate::core::PieceType::Horse);
        let black =
            crate::core::Piece::new(crate::core::Color::Black, crate::core::PieceType::Horse);
        let (code, black_code) = (horse.code(), black.code());
        let (b0, d4, c2) = (1, 4 * 9 + 3, 2 * 9 + 2);
        let mut heur = Heuristics::new(8);
        heur.update_history(code, b0, c2, 1000, 16384);
        assert_eq!(heur.history(code, d4, c2), 1000);
        assert_eq!(heur.history(black_code, b0, c2), 0);
        heur.set_from_to(true);
        assert_eq!(heur.history(code, b0, c2), 0, "switching clears");
        heur.update_history(code, b0, c2, 1000, 16384);
        assert_eq!(heur.history(code, b0, c2), 1000);
        assert_eq!(heur.history(code, d4, c2), 0);
        assert_eq!(heur.history(black_code, b0, c2), 0);
        assert_eq!(heur.quiet_score([NO_CONT; 2], code, b0, c2), 1000);
        heur.set_from_to(true);
        assert_eq!(
            heur.history(code, b0, c2),
            1000,
            "the same indexing keeps it"
        );
        heur.set_from_to(false);
        assert_eq!(heur.history(code, b0, c2), 0);
    }

    /// The fast TT-move test agrees with the move generator on every (from, to) pair of
    /// positions from random playouts (checks, pins, flying generals and cannon screens
    /// included).
    #[test]
    fn fast_legality_matches_the_generator() {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(3);
        let mut checked = 0;
        for _ in 0..40 {
            let mut pos = Position::startpos();
            for _ in 0..rng.gen_range(0..160) {
                let legal = pos.legal_moves();
                for from in 0..90u8 {
                    for to in 0..90u8 {
                        let m = Move::new(Square(from), Square(to));
                        assert_eq!(is_legal_fast(&pos, m), legal.contains(m), "{m} in {pos:?}");
                        checked += 1;
                    }
                }
                if legal.is_empty() {
                    break;
                }
                pos.make_move(legal[rng.gen_range(0..legal.len())]);
            }
        }
        assert!(checked > 100_000);
        assert!(!is_legal_fast(&Position::startpos(), Move::NULL));
        let with_suffix =
            Move::new(Square(1), Square(20)).with_reveal(crate::core::PieceType::Rook);
        assert!(!is_legal_fast(&Position::startpos(), with_suffix));
    }

    /// The default bonus shape is the engine's original 16 d² up to 19,200; a Pikafish-shaped
    /// set gives a malus at depth 1, grows with the depth and stops at its cap.
    #[test]
    fn history_bonus_shapes() {
        let p = SearchParams::DEFAULT;
        for d in 0..64 {
            assert_eq!(history_bonus(&p, d), (d * d).min(1200) * 16, "depth {d}");
        }
        let steep = SearchParams {
            history_bonus_quad: 18,
            history_bonus_linear: 750,
            history_bonus_offset: 1550,
            history_bonus_cap: 7500,
            ..SearchParams::DEFAULT
        };
        let got: Vec<i32> = [1, 2, 3, 6, 8, 9, 40]
            .map(|d| history_bonus(&steep, d))
            .into();
        assert_eq!(got, [-782, 22, 862, 3598, 5602, 6658, 7500]);
    }
}
