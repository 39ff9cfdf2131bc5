//! Alpha-beta search: iterative deepening with aspiration windows, principal variation search
//! (PVS), a transposition table, quiescence search, null-move pruning, ProbCut, late-move
//! reductions and the usual shallow-depth pruning rules, following the Chess Programming
//! Wiki's descriptions (<https://www.chessprogramming.org/Search>) and the shape of
//! Stockfish's `search.cpp`.
//!
//! Xiangqi's game-end rulings are applied inside the tree: a position repeated once along the
//! line is scored by [`Position::repetition`] (drawn, or lost by the side that checked or
//! chased perpetually), 120 plies without capture draw, and having no legal move (mate *or*
//! stalemate) loses.
//!
//! Jieqi: a move of a dark piece is a chance node, valued by the expectation over its reveals
//! in [`chance`].
//!
//! Evaluation: the classical evaluation ([`crate::eval`]) by default; with a network for the
//! root's variant ([`Searcher::set_networks`]) positions are scored by the NNUE
//! ([`crate::eval::nnue`]), whose accumulators an [`AccumulatorStack`] keeps in step with every
//! move the search makes and takes back (`Searcher::make` and its siblings, the only way the
//! search changes its position; Jieqi reveals included), computed lazily when a node is
//! evaluated (Stockfish's accumulator stack).
//!
//! Determinism: nothing but node counts and depths decides anything unless a clock limit is
//! given, and the tables start empty after [`Searcher::new_game`], so `go nodes N` repeats
//! exactly (Stockfish's `reprosearch.sh` contract).

pub mod chance;
pub mod correction;
mod eval_cache;
pub mod limits;
pub mod ordering;
pub mod params;
pub mod report;
pub mod smp;
pub mod stats;
pub mod time;
pub mod tt;

pub use chance::ChanceMode;
pub use limits::{SearchLimits, Skill};
pub use params::{DEFAULT_SEARCH_JSON, EngineOptions, SearchParams};
pub use report::{SearchInfo, SearchResult, mate_in, mate_score};

use crate::core::movegen::MoveList;
use crate::core::see;
use crate::core::{Color, Move, PieceType, Position, Repetition, Variant};
use crate::eval::nnue::{AccumulatorStack, FeatureDelta, Network, Networks, delta_of};
use crate::eval::{EvalParams, Partial, evaluate_for};
use eval_cache::EvalCache;
use ordering::{
    Heuristics, NO_CONT, ORDER_VALUE, ScoredMoves, StagedMoves, cont_row, history_bonus, piece_code,
};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;
use time::{CHECK_INTERVAL, IterationStats, SCORE_HISTORY, TimeManager};
use tt::{Bound, MATE_BOUND, NO_EVAL, TranspositionTable};

/// The score of giving mate now; mate in `n` plies scores `MATE - n`.
pub const MATE: i32 = 30_000;
/// Larger than any score.
pub const INF: i32 = 31_000;

/// The deepest ply the search reaches (extensions included).
pub const MAX_PLY: usize = 128;

/// How much shallower than an ordinary child ProbCut searches a capture (Stockfish's depth − 4
/// for the child); its table entry is stored `PROBCUT_REDUCTION` plies below the node's depth.
const PROBCUT_REDUCTION: i32 = 3;

/// The most plies `pv_tt_depth_divisor` takes off a principal node (Pikafish-HCE's `decr_2`).
const PV_TT_MAX_REDUCTION: i32 = 5;

/// A searcher with its own tables. One per game in self-play; an engine's searcher may have
/// helper threads ([`Searcher::set_threads`], Lazy SMP in [`smp`]).
pub struct Searcher {
    /// The evaluation parameters. After replacing them, call [`Searcher::new_game`]: the
    /// tables keep evaluations made with the old ones.
    pub eval: Arc<EvalParams>,
    pub params: SearchParams,
    /// The switches that are not tuned numbers (chance nodes, Jieqi evaluation).
    pub options: EngineOptions,
    /// Per variant (index `Variant as usize`): the network that scores its positions and this
    /// thread's accumulators for it; `None`: the classical evaluation.
    nnue: [Option<Nnue>; 2],
    /// Whether the running search evaluates with a network (there is one for the root's
    /// variant): the accumulators follow the moves only then.
    nnue_on: bool,
    /// The variant of the running search: which of `nnue` is in use.
    nnue_slot: usize,
    /// Tests: every network evaluation checked against a from-scratch one.
    #[cfg(test)]
    nnue_check: Option<NnueCheck>,
    /// Chance nodes on the current path.
    chance_nested: i32,
    stop: Arc<AtomicBool>,
    /// Shared with the helpers, if any.
    tt: Arc<TranspositionTable>,
    /// Lazy SMP: the other threads' searchers (none with one thread), and this searcher's
    /// place among the threads (`None` with one thread).
    helpers: Vec<Searcher>,
    link: Option<smp::ThreadLink>,
    eval_cache: EvalCache,
    heur: Heuristics,
    nodes: u64,
    seldepth: usize,
    stopped: bool,
    node_limit: Option<u64>,
    tm: Option<TimeManager>,
    root_depth: i32,
    root_best: Option<(Move, i32)>,
    /// Nodes spent under each root move in this search (for the time manager's node share),
    /// and the node count when the root last finished a move.
    root_effort: Vec<(Move, u64)>,
    root_mark: u64,
    pv: Vec<[Move; MAX_PLY + 1]>,
    pv_len: [usize; MAX_PLY + 2],
    eval_stack: [i32; MAX_PLY + 2],
    /// `cont_stack[ply]`: the continuation row of the move made at `ply` ([`NO_CONT`] for a
    /// null move or a reveal), what the nodes below read their continuation histories by.
    cont_stack: [usize; MAX_PLY + 2],
    /// `excluded[ply]`: the move a singular-extension search at `ply` leaves out.
    excluded: [Move; MAX_PLY + 2],
    /// `early[ply]`: whether the move made at `ply` was searched early there: the first
    /// after the table's move, or the first killer. A cut-off below it refutes the node's
    /// ordering, which `history_prior` and `history_tt_cut` teach.
    early: [bool; MAX_PLY + 2],
    /// `tt_pv[ply]`: whether the node at `ply` is or was on a principal line (a principal node,
    /// or its table entry says so; Stockfish's `ttPv`), kept in the table with its entry.
    tt_pv: [bool; MAX_PLY + 2],
    corr: correction::Correction,
    lmr: Box<[[i32; 64]; 64]>,
    /// Where this search's nodes went (`xqtune bench --stats`).
    stats: stats::TreeStats,
}

/// A network and the accumulators of the line being searched (one per thread).
struct Nnue {
    net: Arc<Network>,
    stack: AccumulatorStack,
}

/// What the test hook saw: evaluations checked, and the null moves and captures made while the
/// network was on (so a test knows its search went through them).
#[cfg(test)]
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct NnueCheck {
    pub evals: u64,
    pub null_moves: u64,
    pub captures: u64,
    /// Moves of dark pieces (Jieqi reveals).
    pub reveals: u64,
}

/// Whether `m` captures something in `pos`.
#[inline(always)]
fn victim_value(pos: &Position, m: Move) -> i32 {
    pos.piece_at(m.to())
        .map(|p| ORDER_VALUE[p.kind.index()])
        .unwrap_or(0)
}

/// The quiet-history bonus of the opponent's quiet move (`history_eval_diff`): `before` is
/// the static evaluation of the node it was played from (its side's view), `after` that of the
/// node it led to (ours). The move is as good as it raised its side's evaluation,
/// `history_eval_diff` per centipawn, at most a quarter of `history_max` either way.
#[inline]
fn eval_diff_bonus(p: &SearchParams, before: i32, after: i32) -> i32 {
    let cap = p.history_max / 4;
    (-p.history_eval_diff * (before + after)).clamp(-cap, cap)
}

/// The depth a reduced move whose reduced search beat `alpha` is searched again to
/// (`lmr_deeper_margin`; Stockfish's and Pikafish-HCE's): a ply deeper than `new_depth` where
/// the reduced score beat alpha by more than the margin plus 4 a ply of the reduction `r`, a ply
/// shallower where it beat the node's best score so far by less than a centipawn a ply of
/// `new_depth`. `new_depth` itself while the margin is 0.
#[inline]
fn research_depth(
    p: &SearchParams,
    new_depth: i32,
    r: i32,
    score: i32,
    alpha: i32,
    best: i32,
) -> i32 {
    if p.lmr_deeper_margin == 0 {
        return new_depth;
    }
    new_depth + (score > alpha + p.lmr_deeper_margin + 4 * r) as i32
        - (score < best + new_depth) as i32
}

/// The depth whose history bonus a cut-off at `depth` earns: a ply more where its score beat
/// beta by more than `history_beta_margin` (0: never; Stockfish's and Pikafish-HCE's larger
/// bonus).
#[inline]
fn cut_bonus_depth(p: &SearchParams, depth: i32, best: i32, beta: i32) -> i32 {
    depth + (p.history_beta_margin > 0 && best > beta + p.history_beta_margin) as i32
}

/// Null-move zugzwang guard: the side to move keeps a rook, or two horses/cannons. Xiangqi
/// endings with only pawns, advisors, elephants and a single minor piece are where passing
/// would be better than any move, and null-move pruning would misjudge them.
#[inline]
fn has_null_material(pos: &Position, us: Color) -> bool {
    pos.pieces_of(us, PieceType::Rook) != 0
        || (pos.pieces_of(us, PieceType::Horse) | pos.pieces_of(us, PieceType::Cannon)).count_ones()
            >= 2
}

/// The score of the rulings that end a line at `pos`, `ply` plies from the root, if any:
/// a repeated position (drawn, or lost by the side that gave perpetual check or chase) and the
/// no-capture limit. Mate and stalemate are found by the move loop.
#[inline]
pub fn ruled_score(pos: &Position, ply: usize) -> Option<i32> {
    if let Some(r) = pos.repetition(2) {
        return Some(match r {
            Repetition::Draw => 0,
            Repetition::Win(_) => MATE - ply as i32,
            Repetition::Loss(_) => -(MATE - ply as i32),
        });
    }
    if pos.rule60() >= pos.no_capture_limit() {
        return Some(if pos.has_legal_move() {
            0
        } else {
            -(MATE - ply as i32)
        });
    }
    None
}

/// `round(1000 * ln(i))` for i < 64 (index 0 unused).
const LN_MILLI: [i64; 64] = [
    0, 0, 693, 1099, 1386, 1609, 1792, 1946, 2079, 2197, 2303, 2398, 2485, 2565, 2639, 2708, 2773,
    2833, 2890, 2944, 2996, 3045, 3091, 3135, 3178, 3219, 3258, 3296, 3332, 3367, 3401, 3434, 3466,
    3497, 3526, 3555, 3584, 3611, 3638, 3664, 3689, 3714, 3738, 3761, 3784, 3807, 3829, 3850, 3871,
    3892, 3912, 3932, 3951, 3970, 3989, 4007, 4025, 4043, 4060, 4078, 4094, 4111, 4127, 4143,
];

/// The static evaluation, kept clear of the mate range whatever the parameters say.
#[inline(always)]
fn static_eval(pos: &Position, eval: &EvalParams, options: EngineOptions) -> i32 {
    clamp_eval(evaluate_for(pos, eval, options.jieqi_eval))
}

#[inline(always)]
fn clamp_eval(v: i32) -> i32 {
    v.clamp(-MATE_BOUND + 1, MATE_BOUND - 1)
}

impl Searcher {
    pub fn new(eval: Arc<EvalParams>, params: SearchParams, hash_mb: usize) -> Searcher {
        let mut s = Searcher {
            eval,
            params,
            options: EngineOptions::default(),
            nnue: [None, None],
            nnue_on: false,
            nnue_slot: 0,
            #[cfg(test)]
            nnue_check: None,
            chance_nested: 0,
            stop: Arc::new(AtomicBool::new(false)),
            tt: Arc::new(TranspositionTable::new(hash_mb)),
            helpers: Vec::new(),
            link: None,
            eval_cache: EvalCache::new(),
            heur: Heuristics::new(MAX_PLY),
            nodes: 0,
            seldepth: 0,
            stopped: false,
            node_limit: None,
            tm: None,
            root_depth: 0,
            root_best: None,
            root_effort: Vec::new(),
            root_mark: 0,
            pv: vec![[Move::NULL; MAX_PLY + 1]; MAX_PLY + 2],
            pv_len: [0; MAX_PLY + 2],
            eval_stack: [0; MAX_PLY + 2],
            cont_stack: [NO_CONT; MAX_PLY + 2],
            excluded: [Move::NULL; MAX_PLY + 2],
            early: [false; MAX_PLY + 2],
            tt_pv: [false; MAX_PLY + 2],
            corr: correction::Correction::new(),
            lmr: Box::new([[0; 64]; 64]),
            stats: stats::TreeStats::default(),
        };
        s.init_lmr();
        s
    }

    /// The depth the next quiet move of a node (after `searched` moves) would be searched to
    /// after its late-move reduction, before the adjustments of the move loop: what the
    /// pruning rules that look past the reduction (futility, static exchange, continuation
    /// history) compare with their depth limits.
    #[inline(always)]
    fn reduced_depth(&self, depth: i32, searched: i32) -> i32 {
        let r = self.lmr[depth.min(63) as usize][(searched as usize + 1).min(63)];
        (depth - 1 - r).max(0)
    }

    /// Late-move reduction table, `base + ln(depth) * ln(move number) / divisor` plies
    /// (the logarithmic formula of Stockfish and most engines after it), in integer arithmetic
    /// over a fixed table of logarithms so that every machine gets the same reductions.
    fn init_lmr(&mut self) {
        let base = self.params.lmr_base as i64;
        let div = (self.params.lmr_divisor as i64).max(1);
        for d in 1..64 {
            for m in 1..64 {
                let hundredths = base + LN_MILLI[d] * LN_MILLI[m] / (100 * div);
                self.lmr[d][m] = (hundredths / 100) as i32;
            }
        }
    }

    /// The searcher with `options` (the default options: chance nodes searched, Jieqi
    /// positions scored with the Jieqi terms).
    pub fn with_options(mut self, options: EngineOptions) -> Searcher {
        self.options = options;
        self
    }

    /// The searcher with `network` scoring the positions of its variant (`None`: the classical
    /// evaluation everywhere). See [`Searcher::set_networks`].
    pub fn with_network(mut self, network: Option<Arc<Network>>) -> Searcher {
        self.set_networks(&Networks::from(network));
        self
    }

    /// Evaluates each variant's positions with its network in `networks` from the next search
    /// on, on every thread (each keeps its own accumulators); a variant without one goes back
    /// to the classical evaluation. As after replacing [`Searcher::eval`], call
    /// [`Searcher::new_game`]: the tables keep evaluations of the other evaluation.
    pub fn set_networks(&mut self, networks: &Networks) {
        for v in [Variant::Xiangqi, Variant::Jieqi] {
            let slot = &mut self.nnue[v as usize];
            let wanted = networks.get(v);
            let same = match (&*slot, wanted) {
                (Some(n), Some(net)) => Arc::ptr_eq(&n.net, net) || n.net.hash() == net.hash(),
                (None, None) => true,
                _ => false,
            };
            if !same {
                *slot = wanted.map(|net| Nnue {
                    stack: AccumulatorStack::new(net),
                    net: net.clone(),
                });
            }
        }
        for h in &mut self.helpers {
            h.set_networks(networks);
        }
    }

    /// The networks that score positions, per variant.
    pub fn networks(&self) -> Networks {
        self.nnue
            .iter()
            .flatten()
            .fold(Networks::none(), |ns, n| ns.with(n.net.clone()))
    }

    /// Replaces the transposition table with one of `mb` megabytes (UCI `Hash`).
    pub fn resize_hash(&mut self, mb: usize) {
        self.tt = Arc::new(TranspositionTable::new(mb));
        for h in &mut self.helpers {
            h.tt = self.tt.clone();
        }
    }

    /// Clears the transposition table and every thread's history (`ucinewgame`).
    pub fn new_game(&mut self) {
        self.tt.clear();
        self.clear_thread_tables();
        for h in &mut self.helpers {
            h.clear_thread_tables();
        }
    }

    /// Clears what each thread owns: evaluation cache and heuristics.
    fn clear_thread_tables(&mut self) {
        self.eval_cache.clear();
        self.heur.clear();
        self.corr.clear();
    }

    /// A flag that stops the running search when set (`stop`).
    pub fn stop_handle(&self) -> Arc<AtomicBool> {
        self.stop.clone()
    }

    /// Searches `pos` (its history is used for repetition rulings) within `limits`.
    /// Clears the stop flag first.
    pub fn search(
        &mut self,
        pos: &Position,
        limits: &SearchLimits,
        info: &mut dyn FnMut(&SearchInfo),
    ) -> SearchResult {
        self.stop.store(false, Ordering::Relaxed);
        self.search_keep_stop(pos, limits, info)
    }

    /// As [`Searcher::search`], but a stop requested before the call is honoured (UCI clears
    /// the flag itself before it starts the search thread, so an early `stop` is not lost).
    pub fn search_keep_stop(
        &mut self,
        pos: &Position,
        limits: &SearchLimits,
        info: &mut dyn FnMut(&SearchInfo),
    ) -> SearchResult {
        self.tt.new_search();
        if self.helpers.is_empty() {
            self.iterate(pos, limits, info)
        } else {
            self.search_smp(pos, limits, info)
        }
    }

    /// Iterative deepening on one thread: the whole search with one thread, the main
    /// thread's or a helper's part with several.
    fn iterate(
        &mut self,
        pos: &Position,
        limits: &SearchLimits,
        info: &mut dyn FnMut(&SearchInfo),
    ) -> SearchResult {
        let start = Instant::now();
        let mut pos = pos.clone();
        self.init_lmr();
        self.nodes = 0;
        self.stats = stats::TreeStats::default();
        self.seldepth = 0;
        self.chance_nested = 0;
        self.stopped = false;
        self.node_limit = limits.nodes.map(|n| n.max(1));
        // The network of the root's variant, if there is one (a network scores only positions
        // of its own variant, and a search stays in its root's).
        self.nnue_slot = pos.variant() as usize;
        self.nnue_on = false;
        if let Some(n) = &mut self.nnue[self.nnue_slot] {
            n.stack.reset(&n.net, &pos);
            self.nnue_on = true;
        }
        let mut tm = TimeManager::new(limits, &self.params, pos.fullmove_ply(), start);
        let uses_clock = tm.uses_clock();
        for k in self.heur.killers.iter_mut() {
            *k = [Move::NULL; 2];
        }
        self.heur.set_from_to(self.params.history_from_to != 0);

        let root_moves = pos.legal_moves();
        if pos.variant() == Variant::Jieqi {
            let reveals = root_moves.iter().filter(|m| pos.is_dark(m.from())).count();
            tm.scale_optimum(time::jieqi_percent(&self.params, reveals));
        }
        self.tm = Some(tm);
        self.root_effort.clear();
        if root_moves.is_empty() {
            let score = -MATE;
            let i = SearchInfo {
                depth: 0,
                score,
                mate_in: Some(0),
                ..Default::default()
            };
            info(&i);
            return SearchResult {
                best_move: Move::NULL,
                score,
                ..Default::default()
            };
        }
        let max_depth = limits.depth.map_or(MAX_PLY as i32 - 4, |d| {
            d.clamp(1, MAX_PLY as u32 - 4) as i32
        });

        let mut best = SearchResult {
            best_move: root_moves[0],
            score: 0,
            depth: 0,
            nodes: 0,
            pv: vec![root_moves[0]],
        };
        let p = self.params;
        let mut prev_score = 0;
        // For the soft limit: iterations that kept the best move, and the last scores.
        let mut stability = 0u32;
        let mut scores = [0i32; SCORE_HISTORY];
        for depth in 1..=max_depth {
            self.root_depth = depth;
            self.root_best = None;
            self.seldepth = 0;
            let mut delta = p.aspiration_delta;
            let (mut alpha, mut beta) = if depth >= p.aspiration_min_depth {
                (
                    (prev_score - delta).max(-INF),
                    (prev_score + delta).min(INF),
                )
            } else {
                (-INF, INF)
            };
            // Fail highs in a row; with `aspiration_high_reduce` each takes a ply off the
            // re-search, while the iteration keeps its nominal depth (as Stockfish's does).
            let mut failed_high = 0;
            let score = loop {
                self.root_mark = self.nodes;
                let d = (depth - failed_high * p.aspiration_high_reduce).max(1);
                let s = self.negamax(&mut pos, alpha, beta, d, 0, false);
                if self.stopped {
                    break s;
                }
                if s <= alpha {
                    beta = (alpha + beta) / 2;
                    alpha = (s - delta).max(-INF);
                    failed_high = 0;
                } else if s >= beta {
                    beta = (s + delta).min(INF);
                    failed_high += 1;
                } else {
                    break s;
                }
                delta += delta / 2 + 5;
                if delta > 1000 {
                    alpha = -INF;
                    beta = INF;
                }
            };
            if self.stopped {
                // A root move that finished inside the stopped iteration and beat the
                // window is at least as good as the last complete iteration's choice.
                if let Some((m, s)) = self.root_best
                    && m != best.best_move
                    && self.pv_len[0] > 0
                    && self.pv[0][0] == m
                {
                    best.best_move = m;
                    best.score = s;
                    best.pv = self.pv[0][..self.pv_len[0]].to_vec();
                }
                break;
            }
            prev_score = score;
            best.score = score;
            best.depth = depth as u32;
            if self.pv_len[0] > 0 {
                stability = if self.pv[0][0] == best.best_move && depth > 1 {
                    stability + 1
                } else {
                    0
                };
                best.best_move = self.pv[0][0];
                best.pv = self.pv[0][..self.pv_len[0]].to_vec();
            }
            if let Some(t) = self.tm.as_mut()
                && t.uses_clock()
            {
                let done = (depth as usize - 1).min(SCORE_HISTORY);
                let stats = IterationStats {
                    stability,
                    best_move_nodes: self
                        .root_effort
                        .iter()
                        .find(|e| e.0 == best.best_move)
                        .map_or(0, |e| e.1),
                    root_nodes: self.root_effort.iter().map(|e| e.1).sum(),
                    score,
                    reference_score: (done > 0)
                        .then(|| scores[..done].iter().sum::<i32>() / done as i32),
                    jieqi: pos.variant() == Variant::Jieqi,
                };
                t.rescale_soft(time::soft_scale_permille(&p, &stats));
            }
            scores.rotate_right(1);
            scores[0] = score;
            let elapsed = self.tm.as_ref().map_or(0, |t| t.elapsed_ms());
            info(&SearchInfo {
                depth: depth as u32,
                seldepth: self.seldepth as u32,
                score,
                mate_in: mate_in(score),
                nodes: self.total_nodes(),
                time_ms: elapsed,
                pv: best.pv.clone(),
                hashfull: self.tt.hashfull(),
            });
            if let Some(t) = &self.tm
                && (t.soft_exceeded() || (uses_clock && root_moves.len() == 1))
            {
                break;
            }
            // A proven mate cannot get shorter past this depth.
            if let Some(m) = mate_in(score)
                && uses_clock
                && depth >= 2 * m.abs() + 2
            {
                break;
            }
        }
        best.nodes = self.nodes;
        if !root_moves.contains(best.best_move) {
            best.best_move = root_moves[0];
            best.pv = vec![root_moves[0]];
        }
        self.tm = None;
        best
    }

    /// Where the last search's nodes went (this thread's search; Lazy SMP helpers keep their
    /// own).
    pub fn tree_stats(&self) -> stats::TreeStats {
        self.stats
    }

    /// Nodes searched by the last (or running) search, all threads together.
    pub fn nodes(&self) -> u64 {
        self.total_nodes()
    }

    #[inline(always)]
    fn check_stop(&mut self) -> bool {
        if self.stopped {
            return true;
        }
        if let Some(n) = self.node_limit
            && self.nodes >= n
        {
            self.stopped = true;
            return true;
        }
        if self.nodes & (CHECK_INTERVAL - 1) == 0
            && (self.stop.load(Ordering::Relaxed)
                || self.tm.as_ref().is_some_and(|t| t.hard_exceeded()))
        {
            self.stopped = true;
        }
        if let Some(link) = &self.link
            && self.nodes & (smp::PUBLISH_INTERVAL - 1) == 0
            && link.publish(self.nodes, self.node_limit)
        {
            self.stopped = true;
        }
        self.stopped
    }

    /// The correction-history slots of `pos`: the non-pawn tables' too where `corr_non_pawn`
    /// is on. The main search and quiescence read the same tables through it.
    #[inline(always)]
    fn corr_slots(&self, pos: &Position) -> correction::Slots {
        correction::Correction::slots(pos, self.params.corr_non_pawn != 0)
    }

    /// The static evaluation `v` of `pos` damped toward a draw as the no-capture counter
    /// (`rule60`, in plies) runs on: `v * (D - rule60) / D` with D = `shuffle_divisor`, zero
    /// from `rule60 >= D`; D 0 leaves it alone. The side ahead is pushed to capture, which
    /// resets the counter, before the no-capture limit draws the game (Stockfish and Pikafish
    /// damp theirs the same way).
    #[inline(always)]
    fn shuffle_damp(&self, pos: &Position, v: i32) -> i32 {
        let d = self.params.shuffle_divisor;
        if d <= 0 {
            return v;
        }
        let r = (pos.rule60() as i32).min(d);
        v * (d - r) / d
    }

    /// The static evaluation of `pos`, through the evaluation cache: `(value, true)`, not yet
    /// damped by the no-capture counter (the caller damps it with [`Self::shuffle_damp`]). Given a
    /// quiescence window (on the damped scale), it may answer lazily instead: when material
    /// and position tables alone are so far outside the window that the other terms (almost
    /// never worth more than `qs_lazy_margin` together) cannot bring the score back into it,
    /// `(that bound, false)`. With the network on there is no lazy answer: its value has no
    /// cheap part.
    #[inline(always)]
    fn eval_for(&mut self, pos: &Position, window: Option<(i32, i32)>) -> (i32, bool) {
        let key = pos.key();
        if let Some(v) = self.eval_cache.probe(key) {
            return (v, true);
        }
        if self.nnue_on {
            let v = self.network_eval(pos);
            self.eval_cache.store(key, v);
            return (v, true);
        }
        let v = match Partial::new(pos, &self.eval, self.options.jieqi_eval) {
            Some(part) => {
                if let Some((alpha, beta)) = window {
                    // The window is the caller's, on the damped scale (`shuffle_damp`, which
                    // keeps the order of values, so a damped bound stays a bound).
                    let damp = |v| self.shuffle_damp(pos, v);
                    let margin = self.params.qs_lazy_margin;
                    let lazy = part.lazy(pos);
                    if damp(lazy - margin) >= beta {
                        return (lazy - margin, false);
                    }
                    if damp(lazy + margin) <= alpha {
                        return (lazy + margin, false);
                    }
                }
                clamp_eval(part.finish(pos, &self.eval))
            }
            None => static_eval(pos, &self.eval, self.options),
        };
        self.eval_cache.store(key, v);
        (v, true)
    }

    /// The static evaluation of `pos`, the position the search is at, without the cache: the
    /// network's while it is on, else the classical one; clear of the mate range either way.
    #[inline(always)]
    fn static_eval(&mut self, pos: &Position) -> i32 {
        let v = if self.nnue_on {
            self.network_eval(pos)
        } else {
            static_eval(pos, &self.eval, self.options)
        };
        self.shuffle_damp(pos, v)
    }

    /// The network's evaluation of `pos`, which must be the position at the top of the
    /// accumulator stack (the search's current position), clamped as the classical one is.
    #[inline(always)]
    fn network_eval(&mut self, pos: &Position) -> i32 {
        let Some(n) = &mut self.nnue[self.nnue_slot] else {
            return static_eval(pos, &self.eval, self.options);
        };
        let v = n.stack.evaluate(&n.net, pos);
        #[cfg(test)]
        if let Some(check) = &mut self.nnue_check {
            assert_eq!(
                v,
                n.net.evaluate_position(pos),
                "lazy network evaluation differs from a fresh one at {pos:?} (stack depth {})",
                n.stack.depth()
            );
            check.evals += 1;
        }
        clamp_eval(v)
    }

    /// Plays `m` in the search: the position and, while the network is on, its accumulators
    /// (the move's delta is read from the position before the move). Every move the search
    /// makes goes through here and [`Searcher::unmake`].
    #[inline(always)]
    pub(super) fn make(&mut self, pos: &mut Position, m: Move) {
        if self.nnue_on
            && let Some(n) = &mut self.nnue[self.nnue_slot]
        {
            #[cfg(test)]
            if let Some(check) = &mut self.nnue_check {
                check.captures += pos.is_capture(m) as u64;
                check.reveals += pos.is_dark(m.from()) as u64;
            }
            n.stack.push(delta_of(pos, m));
        }
        pos.make_move(m);
    }

    /// Takes back the last [`Searcher::make`].
    #[inline(always)]
    pub(super) fn unmake(&mut self, pos: &mut Position) {
        pos.unmake_move();
        if self.nnue_on
            && let Some(n) = &mut self.nnue[self.nnue_slot]
        {
            n.stack.pop();
        }
    }

    /// A null move (the side to move passes): no piece moves, so the accumulators are the
    /// parent's.
    #[inline(always)]
    fn make_null(&mut self, pos: &mut Position) {
        if self.nnue_on
            && let Some(n) = &mut self.nnue[self.nnue_slot]
        {
            #[cfg(test)]
            if let Some(check) = &mut self.nnue_check {
                check.null_moves += 1;
            }
            n.stack.push(FeatureDelta::NONE);
        }
        pos.make_null();
    }

    /// Takes back [`Searcher::make_null`].
    #[inline(always)]
    fn unmake_null(&mut self, pos: &mut Position) {
        pos.unmake_null();
        if self.nnue_on
            && let Some(n) = &mut self.nnue[self.nnue_slot]
        {
            n.stack.pop();
        }
    }

    /// Counts a node of `ply`; false when the search must unwind (stopped, or the node or time
    /// budget is spent).
    #[inline(always)]
    fn enter_node(&mut self, ply: usize) -> bool {
        if self.stopped {
            return false;
        }
        self.nodes += 1;
        #[cfg(test)]
        if self.nnue_check.is_some()
            && self.nnue_on
            && let Some(n) = &self.nnue[self.nnue_slot]
        {
            assert_eq!(n.stack.depth(), ply, "the accumulator stack is out of step");
        }
        if self.check_stop() {
            return false;
        }
        self.seldepth = self.seldepth.max(ply);
        true
    }

    /// Records a searched move's score: the best so far, the PV and alpha when it raises alpha
    /// (and the root's best move). Returns true on a beta cut-off.
    #[allow(clippy::too_many_arguments)]
    #[inline(always)]
    fn note_score(
        &mut self,
        m: Move,
        score: i32,
        beta: i32,
        ply: usize,
        track_pv: bool,
        root: bool,
        (best_score, best_move, alpha): &mut (&mut i32, &mut Move, &mut i32),
    ) -> bool {
        if root {
            // Root bookkeeping for the time manager: the nodes since the root's last move.
            let spent = self.nodes - self.root_mark;
            self.root_mark = self.nodes;
            match self.root_effort.iter_mut().find(|e| e.0 == m) {
                Some(e) => e.1 += spent,
                None => self.root_effort.push((m, spent)),
            }
        }
        if score <= **best_score {
            return false;
        }
        **best_score = score;
        if score > **alpha {
            **best_move = m;
            if track_pv {
                self.update_pv(ply, m);
            }
            if root {
                self.root_best = Some((m, score));
            }
            if score >= beta {
                return true;
            }
            **alpha = score;
        }
        false
    }

    fn update_pv(&mut self, ply: usize, m: Move) {
        let child_len = self.pv_len[ply + 1].min(MAX_PLY - 1);
        let (head, tail) = self.pv.split_at_mut(ply + 1);
        head[ply][0] = m;
        head[ply][1..=child_len].copy_from_slice(&tail[0][..child_len]);
        self.pv_len[ply] = child_len + 1;
    }

    fn negamax(
        &mut self,
        pos: &mut Position,
        mut alpha: i32,
        mut beta: i32,
        mut depth: i32,
        ply: usize,
        cut_node: bool,
    ) -> i32 {
        let pv_node = beta - alpha > 1;
        let root = ply == 0;
        self.pv_len[ply] = 0;
        if depth <= 0 {
            return self.qsearch(pos, alpha, beta, ply, true);
        }
        if !self.enter_node(ply) {
            return 0;
        }
        self.stats.main_nodes += 1;
        let in_check = pos.in_check();
        if !root {
            if let Some(s) = ruled_score(pos, ply) {
                return s;
            }
            if ply >= MAX_PLY - 1 {
                return if in_check { 0 } else { self.static_eval(pos) };
            }
            // Mate distance pruning: no line from here beats a mate already found nearer.
            alpha = alpha.max(-(MATE - ply as i32));
            beta = beta.min(MATE - ply as i32 - 1);
            if alpha >= beta {
                return alpha;
            }
        }

        // A singular-extension search of this node without its TT move: the table entry is
        // the full node's, so it neither cuts off here nor is overwritten.
        let excluded = self.excluded[ply];
        let key = pos.key();
        let hit = self.tt.probe(key, ply);
        let tt_move = hit.map_or(Move::NULL, |h| h.mv);
        // A singular-extension search keeps the full node's flag.
        if excluded.is_null() {
            self.tt_pv[ply] = pv_node || hit.is_some_and(|h| h.pv);
        }
        self.tt_pv[ply + 1] = false;
        let tt_pv = self.tt_pv[ply];
        if !pv_node
            && excluded.is_null()
            && let Some(h) = hit
            && h.cuts(depth, alpha, beta)
        {
            self.stats.tt_cuts += 1;
            if self.params.history_tt_cut != 0 {
                self.tt_cut_history(pos, tt_move, h.score >= beta, depth, ply);
            }
            return h.score;
        }

        let p = self.params;
        let raw_eval = if in_check {
            -INF
        } else if let Some(h) = hit
            && h.eval != NO_EVAL
        {
            h.eval
        } else {
            self.eval_for(pos, None).0
        };
        // The table keeps the evaluation undamped: the no-capture counter is not in its key.
        let base_eval = if in_check {
            -INF
        } else {
            self.shuffle_damp(pos, raw_eval)
        };
        // In check there is no static evaluation to correct, nor one to learn from.
        let corr_slots = (!in_check).then(|| self.corr_slots(pos));
        let static_eval = match corr_slots {
            None => -INF,
            Some(slots) => clamp_eval(base_eval + self.corr.correction(slots)),
        };
        self.eval_stack[ply] = static_eval;
        if p.history_eval_diff > 0
            && !in_check
            && excluded.is_null()
            && ply >= 1
            && self.eval_stack[ply - 1] != -INF
            && let Some((code, from, to)) = self.prior_quiet(pos, ply)
        {
            let bonus = eval_diff_bonus(&p, self.eval_stack[ply - 1], static_eval);
            self.heur
                .update_history(code, from, to, bonus, p.history_max.max(1));
        }
        let improving = !in_check && ply >= 2 && static_eval > self.eval_stack[ply - 2];
        // The table's score as a better evaluation for the node's pruning rules (Stockfish,
        // Pikafish): a bound that lies on the side it bounds. The move loop's futility keeps
        // the static evaluation.
        let eval = match hit {
            Some(h)
                if p.tt_eval != 0
                    && !in_check
                    && h.score.abs() < MATE_BOUND
                    && (if h.score > static_eval {
                        h.bound != Bound::Upper
                    } else {
                        h.bound != Bound::Lower
                    }) =>
            {
                h.score
            }
            _ => static_eval,
        };

        if !pv_node && !in_check && excluded.is_null() {
            // Reverse futility pruning: far above beta at low depth, assume a cut-off; with
            // `rfp_tt_pv` 1 not at a node that was on a principal line (Pikafish-HCE).
            if depth <= p.rfp_max_depth
                && !(tt_pv && p.rfp_tt_pv != 0)
                && beta.abs() < MATE_BOUND
                && eval - p.rfp_margin * (depth - improving as i32) >= beta
            {
                return eval;
            }
            // Razoring: far below alpha, check with quiescence whether anything can rescue.
            if depth <= p.razor_max_depth
                && alpha.abs() < MATE_BOUND
                && eval + p.razor_margin * depth < alpha
            {
                let v = self.qsearch(pos, alpha, alpha + 1, ply, true);
                if self.stopped {
                    return 0;
                }
                if v <= alpha {
                    return v;
                }
            }
            // Null-move pruning (Donninger), not twice in a row, with the zugzwang guard.
            let last_null = pos.history().last().is_some_and(|s| s.mv.is_null());
            if depth >= p.nmp_min_depth
                && eval >= beta
                && !last_null
                && beta > -MATE_BOUND
                && has_null_material(pos, pos.side_to_move())
            {
                let r = p.nmp_base_reduction
                    + depth / p.nmp_depth_divisor.max(1)
                    + ((eval - beta) / p.nmp_eval_divisor.max(1)).min(3);
                self.cont_stack[ply] = NO_CONT;
                self.stats.null_tries += 1;
                self.make_null(pos);
                let v = -self.negamax(pos, -beta, -beta + 1, depth - 1 - r, ply + 1, !cut_node);
                self.unmake_null(pos);
                if self.stopped {
                    return 0;
                }
                if v >= beta {
                    self.stats.null_cuts += 1;
                    return if v >= MATE_BOUND { beta } else { v };
                }
            }
            // ProbCut (Stockfish): a capture whose reduced search beats beta by a margin would
            // almost surely beat beta at full depth too, so the node is cut. Each capture that
            // could win enough material is first checked by quiescence, then by a search
            // `PROBCUT_REDUCTION` plies shallower; none at all when the table already knows a
            // deep enough score below the bar. Off while `probcut_min_depth` is 0 (the
            // default: its SPRTs at 2+0.02 were positive but undecided, docs/measurements.md).
            let pc_beta = beta + p.probcut_margin - p.probcut_improving * improving as i32;
            if p.probcut_min_depth > 0
                && depth >= p.probcut_min_depth
                && beta.abs() < MATE_BOUND
                && pc_beta < MATE_BOUND
                && !hit.is_some_and(|h| h.depth >= depth - PROBCUT_REDUCTION && h.score < pc_beta)
            {
                self.stats.probcut_tries += 1;
                if let Some((v, m)) = self.probcut(pos, pc_beta, static_eval, depth, ply, cut_node)
                {
                    self.stats.probcut_cuts += 1;
                    let d = depth - PROBCUT_REDUCTION;
                    self.tt
                        .store(key, ply, m, v, raw_eval, d, Bound::Lower, tt_pv);
                    return v;
                }
                if self.stopped {
                    return 0;
                }
            }
        }

        // Internal iterative reduction: without a TT move this node is probably less
        // important than it looked, and a shallower search fills the table faster.
        // A principal node loses `iir_pv_reduction` plies (Stockfish and Pikafish-HCE: 3), down
        // to one ply at least (the move loop's tables start at depth 1).
        if !root && depth >= p.iir_min_depth && tt_move.is_null() && (pv_node || cut_node) {
            depth = (depth - if pv_node { p.iir_pv_reduction } else { 1 }).max(1);
        } else if !root
            && pv_node
            && p.pv_tt_depth_divisor > 0
            && depth > 1
            && let Some(h) = hit
            && !tt_move.is_null()
        {
            // A principal node whose table entry is much shallower than its depth: the line
            // was not worth more before, so it is searched a little shallower (Pikafish-HCE).
            let gap = (depth - h.depth) / p.pv_tt_depth_divisor;
            depth = (depth - gap.clamp(0, PV_TT_MAX_REDUCTION)).max(1);
        }

        // A principal node whose table entry failed low at this depth or deeper will probably
        // fail low again: its moves keep the reduction that `lmr_tt_pv_*` would take off.
        let likely_fail_low = pv_node
            && !tt_move.is_null()
            && hit.is_some_and(|h| h.bound == Bound::Upper && h.depth >= depth);
        // The late-move reduction's shape by the node's kind (Pikafish-HCE's): plies off at a
        // node that was on a principal line and at a principal node, plies on at an expected
        // cut node, each `base + scale / (offset + depth)`. All 0 by default: none.
        // (`depth` is at least 1 here: quiescence took the rest.)
        let lmr_node_shift = {
            let mut r = 0;
            if tt_pv && !likely_fail_low {
                r -= p.lmr_tt_pv_base + p.lmr_tt_pv_scale / (5 + depth);
            }
            if pv_node {
                r -= p.lmr_pv_base + p.lmr_pv_scale / (2 + depth);
            }
            if cut_node {
                r += p.lmr_cut_base + p.lmr_cut_scale / (7 + depth);
            }
            r
        };
        let killers = self.heur.killers[ply];
        let ctx = self.ctx_at(ply);
        let bad_percent = (p.see_bad_captures_last != 0).then_some(p.see_bad_capture_percent);
        let mut picker =
            StagedMoves::new(pos, tt_move, killers, ctx, bad_percent, p.order_check_bonus);
        let mut best_score = -INF;
        let mut best_move = Move::NULL;
        let mut searched = 0i32;
        let mut quiets: [Move; 64] = [Move::NULL; 64];
        let mut n_quiets = 0usize;
        let mut captures: [Move; 32] = [Move::NULL; 32];
        let mut n_captures = 0usize;
        let us_code_of = |pos: &Position, m: Move| piece_code(pos, m.from().index());
        let check_zone = if in_check { 0 } else { pos.check_zone() };

        // Singular extension (Stockfish): when the TT move's score is a deep enough lower
        // bound, search the node without it at half depth against a bar a little below that
        // score. Nothing else reaching the bar makes the TT move singular: extend it.
        // Something else beating beta too means two moves cut: a multi-cut, return. The TT
        // move merely not singular while it is expected to cut: reduce it instead.
        let mut tt_ext = 0;
        if !root
            && depth >= p.se_min_depth
            && excluded.is_null()
            && let Some(h) = hit
            && !tt_move.is_null()
            && h.mv == tt_move
            && !pos.is_dark(tt_move.from())
            && h.bound != Bound::Upper
            && h.depth >= depth - 3
            && h.score.abs() < MATE_BOUND
            && (ply as i32) < 2 * self.root_depth
        {
            let s_beta = h.score - p.se_margin * depth;
            self.excluded[ply] = tt_move;
            let v = self.negamax(pos, s_beta - 1, s_beta, (depth - 1) / 2, ply, cut_node);
            self.excluded[ply] = Move::NULL;
            if self.stopped {
                return 0;
            }
            if v < s_beta {
                tt_ext = 1 + (!pv_node && v < s_beta - p.se_double_margin) as i32;
                self.stats.singular_extensions += 1;
                self.stats.double_extensions += (tt_ext == 2) as u64;
            } else if s_beta >= beta {
                self.stats.multi_cuts += 1;
                return s_beta;
            } else if h.score >= beta || cut_node {
                tt_ext = -1;
                self.stats.negative_extensions += 1;
            }
        }

        // Late move pruning (at low depth, quiet moves far down the list rarely matter) and
        // futility pruning (a quiet move cannot lift a hopeless static eval) at `d` plies.
        let late = |searched: i32| {
            let lmp_limit = p.lmp_base + depth * depth / if improving { 1 } else { 2 };
            depth <= p.lmp_max_depth && searched >= lmp_limit
        };
        let futile = |d: i32, alpha: i32, hist: i32| {
            d <= p.futility_max_depth
                && alpha.abs() < MATE_BOUND
                && static_eval + p.futility_base + p.futility_margin * d + hist <= alpha
        };
        let prune = |searched: i32, alpha: i32| late(searched) || futile(depth, alpha, 0);
        // With `futility_history_divisor` above 0 the futility of an ordinary quiet move is
        // Stockfish's and Pikafish-HCE's: at the depth the move would be searched to after its
        // late-move reduction, its history lifting (or lowering) the margin.
        let by_reduced_depth = p.futility_history_divisor > 0;
        let prune_quiet = |searched: i32, alpha: i32| {
            late(searched) || (!by_reduced_depth && futile(depth, alpha, 0))
        };

        while let Some((m, order)) = picker.next_move(pos, &self.heur) {
            if m == excluded {
                continue;
            }
            let capture = pos.is_capture(m);
            let score = if pos.is_dark(m.from()) {
                // Late quiet dark moves are pruned as quiet moves are; what they reveal may
                // give check, which the pruning cannot know without a reveal, so this is the
                // one place where a checking move can be pruned.
                if !root
                    && !in_check
                    && !capture
                    && best_score > -MATE_BOUND
                    && prune(searched, alpha)
                {
                    continue;
                }
                // Jieqi chance node, searched as the ordinary moves are: the first with the
                // full window, later ones with a null window and late quiet ones reduced,
                // re-searched when they beat alpha. Every reveal below costs a whole
                // subtree, so a full window for each dark move multiplied the tree. The
                // principal variation stops here.
                searched += 1;
                self.stats.moves_searched += 1;
                self.cont_stack[ply] = NO_CONT;
                let crowded = pos.dark().count_ones() as i32 >= p.chance_dark_reduce_min;
                let new_depth = depth - 1 - (crowded && depth > 2) as i32;
                let score = if searched == 1 {
                    self.chance(pos, m, alpha, beta, new_depth, ply)
                } else {
                    let mut r = 0;
                    if depth >= p.lmr_min_depth
                        && searched > p.lmr_min_moves
                        && !capture
                        && !in_check
                    {
                        r = self.lmr[depth.min(63) as usize][(searched as usize).min(63)];
                        r += !pv_node as i32;
                        r = r.clamp(0, (new_depth - 1).max(0));
                    }
                    self.stats.reduced += (r > 0) as u64;
                    let mut s = self.chance(pos, m, alpha, alpha + 1, new_depth - r, ply);
                    if !self.stopped && s > alpha && r > 0 {
                        self.stats.re_searched += 1;
                        s = self.chance(pos, m, alpha, alpha + 1, new_depth, ply);
                    }
                    if !self.stopped && pv_node && s > alpha && s < beta {
                        s = self.chance(pos, m, alpha, beta, new_depth, ply);
                    }
                    s
                };
                if self.stopped {
                    return 0;
                }
                self.pv_len[ply + 1] = 0;
                score
            } else {
                let code = us_code_of(pos, m);
                let hist = if capture {
                    0
                } else {
                    self.heur
                        .quiet_score(ctx, code, m.from().index(), m.to().index())
                };
                // Late move pruning and futility pruning, for quiet moves that do not give
                // check. A move outside the check zone is pruned without being played; one
                // inside it is played first to learn whether it checks.
                let prunable = !root && !in_check && !capture && best_score > -MATE_BOUND;
                // The depth after the move's late-move reduction, which the futility, exchange
                // and continuation-history rules below compare with their limits.
                let lmr_depth = self.reduced_depth(depth, searched);
                let mut futile_reduced = false;
                if prunable && by_reduced_depth {
                    futile_reduced = futile(lmr_depth, alpha, hist / p.futility_history_divisor);
                    if futile_reduced && !pos.may_give_check(m, check_zone) {
                        continue;
                    }
                }
                // Pruning by static exchange at shallow depth (Stockfish, Pikafish): a capture
                // that loses more than `see_capture_margin` per ply of depth; a quiet move
                // that does not give check and loses more than a margin growing with the depth
                // it would be searched to after its late-move reduction. Xiangqi only.
                let see_prunable = !root
                    && !in_check
                    && best_score > -MATE_BOUND
                    && depth <= p.see_prune_max_depth
                    && pos.variant() == Variant::Xiangqi;
                let mut see_loses = false;
                // Pruning by continuation history (Stockfish, Pikafish): a quiet move that
                // has kept failing after these last two moves, where its reduced depth is
                // small. As for a losing exchange, a move that may give check is played first.
                let mut cont_fails = false;
                if prunable && p.cont_prune_max_depth > 0 {
                    cont_fails = lmr_depth < p.cont_prune_max_depth
                        && self.heur.cont_score(ctx, code, m.to().index())
                            < -p.cont_prune_margin * (depth - 1);
                    if cont_fails && !pos.may_give_check(m, check_zone) {
                        continue;
                    }
                }
                if see_prunable {
                    if capture {
                        if !pos.see_ge(m, -p.see_capture_margin * depth) {
                            continue;
                        }
                    } else {
                        let margin = p.see_quiet_margin * lmr_depth * lmr_depth
                            + p.see_quiet_linear * lmr_depth;
                        see_loses = !pos.see_ge(m, -margin);
                        if see_loses && !pos.may_give_check(m, check_zone) {
                            continue;
                        }
                    }
                }
                // Pruning, once it holds, holds for every later quiet move (`searched` and `alpha`
                // only grow): the rest of the list keeps only the moves that might check.
                if prunable && !pos.may_give_check(m, check_zone) && prune_quiet(searched, alpha) {
                    picker.skip_quiets_outside(pos, check_zone);
                    continue;
                }
                self.tt.prefetch(pos.key_after(m));
                self.cont_stack[ply] = cont_row(code, m.to().index());
                self.make(pos, m);
                let gives_check = pos.in_check();
                if (see_loses || cont_fails || futile_reduced) && !gives_check {
                    self.unmake(pos);
                    continue;
                }
                if prunable && !gives_check && prune_quiet(searched, alpha) {
                    self.unmake(pos);
                    picker.skip_quiets_outside(pos, check_zone);
                    continue;
                }
                searched += 1;
                self.stats.moves_searched += 1;
                self.early[ply] =
                    m != tt_move && (searched == 1 + !tt_move.is_null() as i32 || m == killers[0]);
                // Check extension where the depth left is at least `check_ext_min_depth` (0,
                // the default: every check; Stockfish and Pikafish extend checks only above
                // depth 10). Its SPRT is in docs/measurements.md; the constant is left to a
                // timed SPSA.
                let check_ext = (gives_check
                    && depth >= p.check_ext_min_depth
                    && (ply as i32) < 2 * self.root_depth
                    && ply + 4 < MAX_PLY) as i32;
                self.stats.check_extensions += check_ext as u64;
                let ext = if m == tt_move && tt_ext != 0 && ply + 4 < MAX_PLY {
                    tt_ext.max(check_ext)
                } else {
                    check_ext
                };
                let mut new_depth = depth - 1 + ext;
                let mut score;
                if searched == 1 {
                    score = -self.negamax(
                        pos,
                        -beta,
                        -alpha,
                        new_depth,
                        ply + 1,
                        !pv_node && !cut_node,
                    );
                } else {
                    let mut r = 0;
                    if depth >= p.lmr_min_depth
                        && searched > p.lmr_min_moves
                        && !capture
                        && !in_check
                        && !gives_check
                    {
                        r = self.lmr[depth.min(63) as usize][(searched as usize).min(63)];
                        r += !pv_node as i32;
                        r += (cut_node && !improving) as i32;
                        r += lmr_node_shift;
                        r -= (order >= ScoredMoves::KILLER) as i32;
                        r -= hist / p.lmr_history_divisor.max(1);
                        r = r.clamp(0, (new_depth - 1).max(0));
                    }
                    self.stats.reduced += (r > 0) as u64;
                    let reduced = new_depth - r;
                    score = -self.negamax(pos, -alpha - 1, -alpha, reduced, ply + 1, true);
                    if score > alpha && r > 0 {
                        new_depth = research_depth(&p, new_depth, r, score, alpha, best_score);
                        if new_depth > reduced {
                            self.stats.re_searched += 1;
                            score = -self.negamax(
                                pos,
                                -alpha - 1,
                                -alpha,
                                new_depth,
                                ply + 1,
                                !cut_node,
                            );
                        }
                        // `lmr_research_history`: the re-search's verdict teaches the move's
                        // continuation histories.
                        if p.lmr_research_history != 0 {
                            let bonus = history_bonus(&p, new_depth);
                            let bonus = if score > alpha { bonus } else { -bonus };
                            self.heur.update_cont(
                                ctx,
                                code,
                                m.to().index(),
                                bonus,
                                p.history_max.max(1),
                            );
                        }
                    }
                    if pv_node && score > alpha && score < beta {
                        score = -self.negamax(pos, -beta, -alpha, new_depth, ply + 1, false);
                    }
                }
                self.unmake(pos);
                if self.stopped {
                    return 0;
                }
                score
            };
            let mut best = (&mut best_score, &mut best_move, &mut alpha);
            if self.note_score(m, score, beta, ply, pv_node || root, root, &mut best) {
                break;
            }
            if !capture && n_quiets < quiets.len() {
                quiets[n_quiets] = m;
                n_quiets += 1;
            } else if capture && n_captures < captures.len() {
                captures[n_captures] = m;
                n_captures += 1;
            }
        }

        if picker.yielded == 0 {
            // Checkmate and stalemate both lose in Xiangqi.
            return -(MATE - ply as i32);
        }
        if !excluded.is_null() {
            // No move but the excluded one, or none reached alpha: the bar was not reached.
            // Nothing here is stored, and the statistics are the full node's to update.
            return if best_score == -INF {
                alpha
            } else {
                best_score
            };
        }
        if best_score >= beta {
            let bonus = history_bonus(&p, cut_bonus_depth(&p, depth, best_score, beta));
            let max = p.history_max.max(1);
            if p.history_prior != 0 {
                self.refute_early_prior(pos, ply, depth);
            }
            if !pos.is_capture(best_move) {
                // The quiet move that cut off: killer, history and continuation bonus; the
                // quiet moves tried before it get a malus.
                self.heur.add_killer(ply, best_move);
                self.heur.update_quiet(pos, ctx, best_move, bonus, max);
                for &q in &quiets[..n_quiets] {
                    if q != best_move {
                        self.heur.update_quiet(pos, ctx, q, -bonus, max);
                    }
                }
            } else {
                self.heur.update_capture(pos, best_move, bonus, max);
            }
            // Captures tried before the move that cut off did not (whatever it was).
            for &c in &captures[..n_captures] {
                if c != best_move {
                    self.heur.update_capture(pos, c, -bonus, max);
                }
            }
        }

        if p.history_prior != 0
            && best_move.is_null()
            && (depth >= 5 || pv_node || best_score < alpha - p.futility_margin * depth / 4)
        {
            // Nothing here reached alpha: the opponent's quiet move before this node was a
            // good one, the more so at a principal or expected cut node (Stockfish's prior
            // countermove bonus).
            let bonus = history_bonus(&p, depth) * (1 + (pv_node || cut_node) as i32);
            self.update_prior_cont(pos, ply, bonus);
        }

        let bound = if best_score >= beta {
            Bound::Lower
        } else if !best_move.is_null() {
            Bound::Exact
        } else {
            Bound::Upper
        };
        // Nothing here beat alpha below a node that was on a principal line: the move before
        // was probably good, and this node joins the principal lines (Stockfish).
        if bound == Bound::Upper && ply >= 1 && self.tt_pv[ply - 1] && depth > 3 {
            self.tt_pv[ply] = true;
        }
        match bound {
            Bound::Lower => {
                self.stats.fail_highs += 1;
                self.stats.first_move_fail_highs += (searched == 1) as u64;
            }
            Bound::Upper => self.stats.fail_lows += 1,
            Bound::Exact => {}
        }
        // The search's result teaches the correction when it says more than the static
        // evaluation could: not in check, not decided by a capture (the evaluation does not
        // see those), and not a bound on the wrong side of the evaluation.
        let decided_by_capture = !best_move.is_null() && pos.is_capture(best_move);
        let wrong_side = match bound {
            Bound::Lower => best_score <= static_eval,
            Bound::Upper => best_score >= static_eval,
            Bound::Exact => false,
        };
        if let Some(slots) = corr_slots
            && !self.stopped
            && !decided_by_capture
            && best_score.abs() < MATE_BOUND
            && !wrong_side
        {
            self.corr.update(slots, best_score - base_eval, depth);
        }
        let stored_eval = if in_check { 0 } else { raw_eval };
        self.tt.store(
            key,
            ply,
            best_move,
            best_score,
            stored_eval,
            depth,
            bound,
            self.tt_pv[ply],
        );
        best_score
    }

    /// The continuation contexts of a move made at `ply`: the rows of the moves one and two
    /// plies before it.
    #[inline]
    fn ctx_at(&self, ply: usize) -> [usize; 2] {
        [
            if ply >= 1 {
                self.cont_stack[ply - 1]
            } else {
                NO_CONT
            },
            if ply >= 2 {
                self.cont_stack[ply - 2]
            } else {
                NO_CONT
            },
        ]
    }

    /// The opponent's move that led to the node at `ply` where it was a quiet move made by
    /// the search (not a root's history, a null move, a reveal or a capture): its piece code,
    /// origin and destination.
    #[inline]
    fn prior_quiet(&self, pos: &Position, ply: usize) -> Option<(u8, usize, usize)> {
        if ply == 0 || self.cont_stack[ply - 1] == NO_CONT {
            return None;
        }
        let last = pos.history().last()?;
        if last.captured != 0 || last.mv.is_null() {
            return None;
        }
        let (from, to) = (last.mv.from().index(), last.mv.to().index());
        Some((piece_code(pos, to), from, to))
    }

    /// Adds `bonus` to the continuation histories of the opponent's quiet move that led to
    /// the node at `ply` (nothing for any other move).
    fn update_prior_cont(&mut self, pos: &Position, ply: usize, bonus: i32) {
        if let Some((code, _, to)) = self.prior_quiet(pos, ply) {
            let ctx = self.ctx_at(ply - 1);
            self.heur
                .update_cont(ctx, code, to, bonus, self.params.history_max.max(1));
        }
    }

    /// A cut-off at `depth` refutes the opponent's move before it where that move was searched
    /// early: its continuation histories get the malus of a cut-off one ply deeper.
    fn refute_early_prior(&mut self, pos: &Position, ply: usize, depth: i32) {
        if ply >= 1 && self.early[ply - 1] {
            let malus = -history_bonus(&self.params, depth + 1);
            self.update_prior_cont(pos, ply, malus);
        }
    }

    /// What a table cut-off at `depth` teaches about its quiet move (`history_tt_cut`): a
    /// bonus where it cut (and a malus for the opponent's early move it refuted), a malus
    /// where it failed low. Captures, reveals and moves that are not the side to move's
    /// (a key collision's) teach nothing.
    fn tt_cut_history(&mut self, pos: &Position, m: Move, cut: bool, depth: i32, ply: usize) {
        if m.is_null()
            || pos.is_capture(m)
            || pos.is_dark(m.from())
            || pos
                .piece_at(m.from())
                .is_none_or(|pc| pc.color != pos.side_to_move())
        {
            return;
        }
        let bonus = history_bonus(&self.params, depth);
        let max = self.params.history_max.max(1);
        let ctx = self.ctx_at(ply);
        if cut {
            self.heur.add_killer(ply, m);
            self.heur.update_quiet(pos, ctx, m, bonus, max);
            self.refute_early_prior(pos, ply, depth);
        } else {
            self.heur.update_quiet(pos, ctx, m, -bonus, max);
        }
    }

    /// The ProbCut search of a node (see `negamax`): the captures of the side to move whose
    /// material gain can reach `pc_beta` from `static_eval`, best first, each checked by
    /// quiescence and then by a null-window search `PROBCUT_REDUCTION` plies shallower.
    /// Returns the score and the capture of the first that holds `pc_beta`. Moves of dark
    /// pieces (Jieqi chance nodes) are left to the full search.
    fn probcut(
        &mut self,
        pos: &mut Position,
        pc_beta: i32,
        static_eval: i32,
        depth: i32,
        ply: usize,
        cut_node: bool,
    ) -> Option<(i32, Move)> {
        let mut list = ScoredMoves::empty();
        pos.legal_captures_into(&mut list.moves);
        list.score_captures_with(pos, &self.heur);
        let them = pos.side_to_move().flip();
        let need = pc_beta - static_eval;
        while let Some((m, _)) = list.next_move() {
            if pos.is_dark(m.from()) {
                continue;
            }
            // The exchange on the target square, at most one recapture deep: the victim,
            // less the capturer where the opponent defends the square.
            let victim = pos.piece_at(m.to()).map_or(0, |p| see::value(p.kind));
            let attacker = pos.piece_at(m.from()).map_or(0, |p| see::value(p.kind));
            let gain = if pos.is_attacked(m.to(), them) {
                victim - attacker
            } else {
                victim
            };
            if gain < need {
                continue;
            }
            let code = piece_code(pos, m.from().index());
            self.tt.prefetch(pos.key_after(m));
            self.cont_stack[ply] = cont_row(code, m.to().index());
            self.make(pos, m);
            let mut v = -self.qsearch(pos, -pc_beta, -pc_beta + 1, ply + 1, true);
            if !self.stopped && v >= pc_beta {
                let d = depth - 1 - PROBCUT_REDUCTION;
                v = -self.negamax(pos, -pc_beta, -pc_beta + 1, d, ply + 1, !cut_node);
            }
            self.unmake(pos);
            if self.stopped {
                return None;
            }
            if v >= pc_beta {
                return Some((v, m));
            }
        }
        None
    }

    /// A quiescence move's score against the node's best (best score, best move, alpha):
    /// raises them, extends the PV in a PV node, and says whether the move cut off.
    #[inline(always)]
    fn qs_improve(
        &mut self,
        m: Move,
        score: i32,
        (best, best_move, alpha): (&mut i32, &mut Move, &mut i32),
        beta: i32,
        ply: usize,
        pv_node: bool,
    ) -> bool {
        if score <= *best {
            return false;
        }
        *best = score;
        if score <= *alpha {
            return false;
        }
        *best_move = m;
        if pv_node {
            self.update_pv(ply, m);
        }
        if score >= beta {
            return true;
        }
        *alpha = score;
        false
    }

    /// Quiescence search: captures only (in check: every evasion), with stand-pat, so that the
    /// leaves are quiet (<https://www.chessprogramming.org/Quiescence_Search>). Captures that
    /// give up a more valuable piece on a defended square are skipped.
    ///
    /// `checks`: the first ply of quiescence below the main search, where with `qs_checks` on
    /// (Xiangqi) the quiet moves that give check and do not lose the checking piece by static
    /// exchange are searched after the captures (Stockfish 15's and Pikafish-HCE's
    /// `DEPTH_QS_CHECKS`); the plies below it search captures only.
    fn qsearch(
        &mut self,
        pos: &mut Position,
        mut alpha: i32,
        beta: i32,
        ply: usize,
        checks: bool,
    ) -> i32 {
        self.pv_len[ply] = 0;
        if !self.enter_node(ply) {
            return 0;
        }
        self.stats.qs_nodes += 1;
        if ply > 0
            && let Some(s) = ruled_score(pos, ply)
        {
            return s;
        }
        let in_check = pos.in_check();
        if ply >= MAX_PLY - 1 {
            return if in_check { 0 } else { self.static_eval(pos) };
        }
        let pv_node = beta - alpha > 1;
        let key = pos.key();
        let hit = self.tt.probe(key, ply);
        if !pv_node
            && let Some(h) = hit
            && match h.bound {
                Bound::Exact => true,
                Bound::Lower => h.score >= beta,
                Bound::Upper => h.score <= alpha,
            }
        {
            return h.score;
        }
        let tt_move = hit.map_or(Move::NULL, |h| h.mv);
        let orig_alpha = alpha;
        // The move list is filled in place (a returned list is a 1 KB copy per node).
        let mut picker = ScoredMoves::empty();
        let (mut best, static_eval) = if in_check {
            pos.legal_moves_into(&mut picker.moves);
            if picker.moves.is_empty() {
                return -(MATE - ply as i32);
            }
            (-INF, 0)
        } else {
            // With `qs_corrected` on, stand-pat is the corrected static evaluation, as the
            // main search's is (Stockfish); the window of a lazy evaluation moves with it.
            let corr = if self.params.qs_corrected != 0 {
                self.corr.correction(self.corr_slots(pos))
            } else {
                0
            };
            let (stand_pat, exact) = match hit {
                Some(h) if h.eval != NO_EVAL => (h.eval, true),
                _ => self.eval_for(pos, Some((alpha - corr, beta - corr))),
            };
            let stored_eval = if exact { stand_pat } else { NO_EVAL };
            let stand_pat = clamp_eval(self.shuffle_damp(pos, stand_pat) + corr);
            if stand_pat >= beta {
                if hit.is_none() {
                    self.tt.store(
                        key,
                        ply,
                        Move::NULL,
                        stand_pat,
                        stored_eval,
                        0,
                        Bound::Lower,
                        false,
                    );
                }
                return stand_pat;
            }
            alpha = alpha.max(stand_pat);
            pos.legal_captures_into(&mut picker.moves);
            (stand_pat, stored_eval)
        };
        let them = pos.side_to_move().flip();
        picker.score_captures_first(pos, tt_move);
        let mut best_move = Move::NULL;
        while let Some((m, _)) = picker.next_move() {
            self.tt.prefetch(pos.key_after(m));
            if !in_check {
                let attacker = pos
                    .piece_at(m.from())
                    .map_or(0, |p| ORDER_VALUE[p.kind.index()]);
                if victim_value(pos, m) < attacker && pos.is_attacked(m.to(), them) {
                    continue;
                }
            }
            let score = if pos.is_dark(m.from()) {
                // A dark capture: the expectation of the reveals' static evaluations.
                self.chance_static(pos, m)
            } else {
                self.make(pos, m);
                let v = -self.qsearch(pos, -beta, -alpha, ply + 1, false);
                self.unmake(pos);
                v
            };
            if self.stopped {
                return 0;
            }
            if self.qs_improve(
                m,
                score,
                (&mut best, &mut best_move, &mut alpha),
                beta,
                ply,
                pv_node,
            ) {
                break;
            }
        }
        if checks
            && !in_check
            && best < beta
            && self.params.qs_checks != 0
            && pos.variant() == Variant::Xiangqi
        {
            let zone = pos.check_zone();
            // Filled in place, as the captures' list is (a returned list is a 1 KB copy).
            let mut quiets = MoveList::new();
            pos.legal_quiets_into(&mut quiets);
            for &m in quiets.iter() {
                if !pos.may_give_check(m, zone) {
                    continue;
                }
                // Playing the move tests the check faster than `Position::gives_check`, which
                // copies the position (bench 12 with `qs_checks` 1, three runs each on the
                // idle VM: 4.22 s against 4.30 s); the exchange is tested only for the few
                // that give it.
                pos.make_move(m);
                let gives_check = pos.in_check();
                pos.unmake_move();
                if !gives_check || !pos.see_ge(m, 0) {
                    continue;
                }
                self.stats.qs_checks += 1;
                self.make(pos, m);
                let score = -self.qsearch(pos, -beta, -alpha, ply + 1, false);
                self.unmake(pos);
                if self.stopped {
                    return 0;
                }
                let best = (&mut best, &mut best_move, &mut alpha);
                if self.qs_improve(m, score, best, beta, ply, pv_node) {
                    break;
                }
            }
        }
        let bound = if best >= beta {
            Bound::Lower
        } else if best > orig_alpha && !best_move.is_null() {
            Bound::Exact
        } else {
            Bound::Upper
        };
        let pv_hit = hit.is_some_and(|h| h.pv);
        self.tt
            .store(key, ply, best_move, best, static_eval, 0, bound, pv_hit);
        best
    }
}

#[cfg(test)]
mod history_tests;
#[cfg(test)]
mod nnue_tests;
