//! Time management: turns `SearchLimits` into a soft limit (no new iteration of the iterative
//! deepening starts after it) and a hard limit (the search stops, checked every
//! `CHECK_INTERVAL` nodes). With a clock, the budget is the remaining time spread over the
//! moves to go (30 when unknown) plus most of the increment, and the hard limit never exceeds a
//! fixed share of the clock, so the engine cannot lose on time with a sane increment. With
//! `tm_horizon` > 0 the budget is Stockfish's instead ([`horizon_budget`]): future increments
//! counted, a share that grows with the game's ply, so more of the clock goes to the early
//! middlegame (Pikafish-HCE spends its clock that way; docs/measurements.md compares the two).
//! Node and depth limits never read the clock, which keeps them deterministic.
//!
//! With a clock, the soft limit is not fixed: after every completed iteration it is the
//! optimum (`tm_soft_percent` of the per-move share, or of Stockfish's optimum) scaled by how
//! settled the search looks, as in Stockfish's `search.cpp` (`fallingEval`,
//! `bestMoveInstability`, `nodesEffort`) and its Rust relatives (viridithas `timemgmt.rs`: best-move stability and node fraction):
//! - best-move stability: the more iterations the best move has stayed the same, the less time
//!   (`tm_stable_base` percent, `tm_stable_step` less per stable iteration, at least
//!   `tm_stable_min`);
//! - node share: the larger the share of the root's nodes spent under the best move, the
//!   fewer alternatives came close, the less time (`(tm_node_base - share%) * tm_node_scale`);
//! - score drop: a score below the mean of the last iterations' scores means trouble, more
//!   time (`tm_eval_scale` percent per 10 cp, within `tm_eval_min..=tm_eval_max`).
//!
//! Jieqi: the tree under reveal moves is much bushier, and which piece to reveal is decided
//! early in the deal, so the optimum of a Jieqi search can also be scaled once by the reveal
//! moves at the root: up to `tm_jieqi_reveal_bonus` percent more with many of them,
//! `tm_jieqi_no_reveal` percent when there are none left; and a Jieqi search applies
//! `tm_jieqi_blend` percent of the per-iteration scaling above. The defaults (0, 100, 0) keep
//! Jieqi at the fixed soft limit, because the scaled version did not pass its SPRT
//! (docs/measurements.md has the figures); they are where a timed Jieqi tune starts.
//!
//! The scaled soft limit never passes the hard limit nor `movetime`; `go movetime` alone
//! (no clock) keeps its fixed soft limit.

use super::{SearchLimits, SearchParams};
use std::time::{Duration, Instant};

/// Nodes between clock reads.
pub const CHECK_INTERVAL: u64 = 1024;

/// Time kept back for the GUI's and the pipe's latency, unless `Move Overhead` says otherwise.
pub const MOVE_OVERHEAD_MS: u64 = 30;

/// The largest `Move Overhead` (as Stockfish's).
pub const MAX_MOVE_OVERHEAD_MS: u64 = 5000;

/// Root reveal moves from which a Jieqi search gets the whole `tm_jieqi_reveal_bonus`
/// (about half the 44 reveal moves of the Jieqi start).
pub const JIEQI_FULL_REVEALS: u64 = 24;

/// Iteration scores the score drop is measured against (their mean): an even number, as
/// scores alternate with the parity of the depth.
pub const SCORE_HISTORY: usize = 4;

#[derive(Clone, Debug)]
pub struct TimeManager {
    start: Instant,
    /// The clock-based soft limit before scaling, in ms; `None` without a clock.
    optimum_ms: Option<u64>,
    /// `go movetime`, which a scaled soft limit never passes.
    movetime_ms: Option<u64>,
    /// `None`: no time limit.
    pub soft: Option<Duration>,
    pub hard: Option<Duration>,
}

/// What the iterative deepening knows after a completed iteration, for the soft limit.
#[derive(Clone, Copy, Debug, Default)]
pub struct IterationStats {
    /// Completed iterations, before this one, that ended with the same best move.
    pub stability: u32,
    /// Nodes searched under the best move at the root, and under every root move, in this
    /// search so far.
    pub best_move_nodes: u64,
    pub root_nodes: u64,
    /// This iteration's score, and the mean of the previous iterations' (`None` at first).
    pub score: i32,
    pub reference_score: Option<i32>,
    /// A Jieqi search, which applies only `tm_jieqi_blend` percent of the scaling.
    pub jieqi: bool,
}

impl TimeManager {
    pub fn new(
        limits: &SearchLimits,
        params: &SearchParams,
        game_ply: u32,
        start: Instant,
    ) -> TimeManager {
        let b = budget_ms(limits, params, game_ply);
        TimeManager {
            start,
            optimum_ms: b.optimum,
            movetime_ms: b.movetime,
            soft: b.soft.map(Duration::from_millis),
            hard: b.hard.map(Duration::from_millis),
        }
    }

    pub fn elapsed_ms(&self) -> u64 {
        self.start.elapsed().as_millis() as u64
    }

    pub fn uses_clock(&self) -> bool {
        self.hard.is_some()
    }

    #[inline]
    pub fn hard_exceeded(&self) -> bool {
        self.hard.is_some_and(|h| self.start.elapsed() >= h)
    }

    pub fn soft_exceeded(&self) -> bool {
        self.soft.is_some_and(|s| self.start.elapsed() >= s)
    }

    /// Scales the optimum once for the whole search (Jieqi reveal moves), and the soft limit
    /// with it.
    pub fn scale_optimum(&mut self, percent: u64) {
        if let Some(o) = self.optimum_ms {
            let o = (o * percent / 100).max(1);
            self.optimum_ms = Some(o);
            self.set_soft(o);
        }
    }

    /// Sets the soft limit to the optimum scaled by `permille` (see [`soft_scale_permille`]);
    /// nothing without a clock.
    pub fn rescale_soft(&mut self, permille: u64) {
        if let Some(o) = self.optimum_ms {
            self.set_soft(o * permille / 1000);
        }
    }

    /// The soft limit in ms, kept within the hard limit and `movetime`.
    fn set_soft(&mut self, ms: u64) {
        let cap = match (self.hard, self.movetime_ms) {
            (Some(h), Some(mt)) => (h.as_millis() as u64).min(mt),
            (Some(h), None) => h.as_millis() as u64,
            (None, mt) => mt.unwrap_or(u64::MAX),
        };
        self.soft = Some(Duration::from_millis(ms.clamp(1, cap.max(1))));
    }
}

/// The limits of one search in ms; every field `None` when neither `movetime` nor a clock is
/// given, or when the search is `infinite`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Budget {
    /// The clock's soft limit before scaling (`None` without a clock).
    pub optimum: Option<u64>,
    pub movetime: Option<u64>,
    pub soft: Option<u64>,
    pub hard: Option<u64>,
}

/// `game_ply`: plies played in the game before this search (the root's
/// [`Position::fullmove_ply`](crate::core::Position::fullmove_ply)), read only with
/// `tm_horizon` > 0.
pub fn budget_ms(limits: &SearchLimits, params: &SearchParams, game_ply: u32) -> Budget {
    if limits.infinite {
        return Budget::default();
    }
    let mut b = Budget::default();
    if let Some(t) = limits.time_ms {
        let inc = limits.inc_ms.unwrap_or(0);
        let overhead = limits.move_overhead_ms.unwrap_or(MOVE_OVERHEAD_MS);
        let avail = t.saturating_sub(overhead).max(1);
        let (s, h) = if params.tm_horizon > 0 {
            horizon_budget(limits, params, game_ply, avail, overhead)
        } else {
            let mtg = limits.movestogo.unwrap_or(30).clamp(1, 50) as u64;
            // Per-move share; the increment arrives after the move, so only 3/4 of it is
            // spent, and never more than the clock minus a reserve.
            let base = (avail / mtg + inc * 3 / 4).min(avail * 6 / 10).max(1);
            let h = (base * 3).min(avail * 8 / 10).max(1);
            (
                (base * params.tm_soft_percent.max(1) as u64 / 100).clamp(1, h),
                h,
            )
        };
        b.optimum = Some(s);
        b.soft = Some(s);
        b.hard = Some(h);
    }
    if let Some(mt) = limits.movetime_ms {
        let mt = mt.max(1);
        b.movetime = Some(mt);
        b.soft = Some(b.soft.map_or(mt, |s| s.min(mt)));
        b.hard = Some(b.hard.map_or(mt, |h| h.min(mt)));
    }
    b
}

/// Soft and hard limit (ms) of a clock with `tm_horizon` > 0, after Stockfish's `timeman.cpp`
/// (as Pikafish-HCE has it): the clock plus the increments of the next `tm_horizon` moves (or
/// the moves to go), less an overhead per move, is the time left; the optimum is a share of it
/// that grows with the game's ply, `(tm_opt_base + tm_opt_ply · (ply + 3)^0.45) / 10000` (at
/// most a fifth of the clock, up to 12 % more with a large increment), so the early middlegame,
/// where games are decided, gets more than the endgame; the hard limit is 4 to 7 times the
/// optimum, within 80 % of the clock. `tm_soft_percent` scales the soft limit.
fn horizon_budget(
    limits: &SearchLimits,
    p: &SearchParams,
    ply: u32,
    avail: u64,
    overhead: u64,
) -> (u64, u64) {
    let t = avail as f64;
    let inc = limits.inc_ms.unwrap_or(0) as f64;
    let overhead = overhead as f64;
    let ply = ply as f64;
    let (mtg, given) = match limits.movestogo {
        Some(m) => (m.clamp(1, 50) as f64, true),
        None => (p.tm_horizon.clamp(1, 80) as f64, false),
    };
    let left = (t + inc * (mtg - 1.0) - overhead * mtg).max(1.0);
    let (share, max_scale) = if given {
        (
            ((0.88 + ply / 116.4) / mtg).min(0.88 * t / left),
            (1.5 + 0.11 * mtg).min(6.3),
        )
    } else {
        let extra = (1.0 + 12.0 * inc / t).clamp(1.0, 1.12);
        let share = (p.tm_opt_base.max(1) as f64
            + p.tm_opt_ply.max(0) as f64 * (ply + 3.0).powf(0.45))
            / 10_000.0;
        (
            share.min(0.2 * t / left) * extra,
            (4.0 + ply / 12.0).min(7.0),
        )
    };
    let optimum = share * left;
    let hard = (optimum * max_scale).min(0.8 * t).max(1.0) as u64;
    let soft = ((optimum * p.tm_soft_percent.max(1) as f64 / 100.0) as u64).clamp(1, hard);
    (soft, hard)
}

/// The factor (permille) the optimum is scaled by after an iteration: the product of the
/// stability, node-share and score-drop factors described in the module documentation.
pub fn soft_scale_permille(p: &SearchParams, s: &IterationStats) -> u64 {
    let steps = s.stability.min(100) as i64;
    let stable = (p.tm_stable_base as i64 - p.tm_stable_step as i64 * steps)
        .max(p.tm_stable_min as i64)
        .max(1);
    let share = (s.best_move_nodes.min(s.root_nodes) * 100)
        .checked_div(s.root_nodes)
        .unwrap_or(0) as i64;
    // A floor keeps a best move that took every node from stopping the search outright.
    let node = ((p.tm_node_base as i64 - share) * p.tm_node_scale as i64 / 100).max(20);
    let eval = s.reference_score.map_or(100, |r| {
        let drop = (r as i64 - s.score as i64).clamp(-1000, 1000);
        (100 + drop * p.tm_eval_scale as i64 / 10)
            .clamp(
                p.tm_eval_min as i64,
                p.tm_eval_max.max(p.tm_eval_min) as i64,
            )
            .max(1)
    });
    let full = stable * node * eval / 1000;
    if s.jieqi {
        let blend = p.tm_jieqi_blend.clamp(0, 100) as i64;
        (1000 + (full - 1000) * blend / 100).max(1) as u64
    } else {
        full as u64
    }
}

/// The percent a Jieqi search scales its optimum by, from the reveal (dark-piece) moves at
/// the root.
pub fn jieqi_percent(p: &SearchParams, reveal_moves: usize) -> u64 {
    if reveal_moves == 0 {
        return p.tm_jieqi_no_reveal.max(1) as u64;
    }
    let n = (reveal_moves as u64).min(JIEQI_FULL_REVEALS);
    100 + p.tm_jieqi_reveal_bonus.max(0) as u64 * n / JIEQI_FULL_REVEALS
}

#[cfg(test)]
mod tests {
    use super::*;

    const P: SearchParams = SearchParams::DEFAULT;

    fn clock(t: u64, inc: u64) -> SearchLimits {
        SearchLimits {
            time_ms: Some(t),
            inc_ms: Some(inc),
            ..Default::default()
        }
    }

    /// A settled search: best move unchanged for 8 iterations, 90% of the nodes under it,
    /// score steady.
    fn settled() -> IterationStats {
        IterationStats {
            stability: 8,
            best_move_nodes: 900,
            root_nodes: 1000,
            score: 50,
            reference_score: Some(50),
            jieqi: false,
        }
    }

    fn soft_after(limits: &SearchLimits, stats: &IterationStats) -> Duration {
        let mut tm = TimeManager::new(limits, &P, 0, Instant::now());
        tm.rescale_soft(soft_scale_permille(&P, stats));
        tm.soft.unwrap()
    }

    #[test]
    fn move_overhead_is_kept_back_from_the_clock() {
        let mut l = clock(10_000, 0);
        let default = budget_ms(&l, &P, 0);
        l.move_overhead_ms = Some(MOVE_OVERHEAD_MS);
        assert_eq!(budget_ms(&l, &P, 0), default);
        l.move_overhead_ms = Some(9_000);
        let b = budget_ms(&l, &P, 0);
        assert!(b.hard.unwrap() <= 1_000, "{b:?}");
        assert!(b.soft.unwrap() < default.soft.unwrap(), "{b:?} {default:?}");
        // More overhead than clock: the search still gets a millisecond, not an underflow.
        l.move_overhead_ms = Some(20_000);
        assert_eq!(budget_ms(&l, &P, 0).hard, Some(1));
    }

    #[test]
    fn node_and_depth_limits_have_no_clock() {
        let l = SearchLimits {
            nodes: Some(1000),
            depth: Some(5),
            ..Default::default()
        };
        assert_eq!(budget_ms(&l, &P, 0), Budget::default());
        let inf = SearchLimits {
            infinite: true,
            time_ms: Some(100),
            ..Default::default()
        };
        assert_eq!(budget_ms(&inf, &P, 0), Budget::default());
        // Scaling a search without a clock leaves it without one.
        let mut tm = TimeManager::new(&l, &P, 0, Instant::now());
        tm.scale_optimum(150);
        tm.rescale_soft(3000);
        assert!(tm.soft.is_none() && tm.hard.is_none() && !tm.uses_clock());
    }

    #[test]
    fn a_stable_best_move_gets_less_time() {
        let l = clock(60_000, 600);
        let mut unstable = settled();
        unstable.stability = 0;
        assert!(soft_after(&l, &settled()) < soft_after(&l, &unstable));
        // Monotone in the stability, down to the floor.
        let mut last = u64::MAX;
        for stability in 0..12 {
            let f = soft_scale_permille(
                &P,
                &IterationStats {
                    stability,
                    ..settled()
                },
            );
            assert!(f <= last, "stability {stability}: {f} > {last}");
            last = f;
        }
    }

    #[test]
    fn a_large_node_share_of_the_best_move_gets_less_time() {
        let l = clock(60_000, 600);
        let contested = IterationStats {
            best_move_nodes: 300,
            ..settled()
        };
        assert!(soft_after(&l, &settled()) < soft_after(&l, &contested));
        // Every node under the best move still leaves some time.
        let all = IterationStats {
            best_move_nodes: 1000,
            ..settled()
        };
        assert!(soft_scale_permille(&P, &all) > 0);
    }

    #[test]
    fn a_falling_score_gets_more_time() {
        let l = clock(60_000, 600);
        let falling = IterationStats {
            score: 30,
            ..settled()
        };
        let rising = IterationStats {
            score: 90,
            ..settled()
        };
        assert!(soft_after(&l, &falling) > soft_after(&l, &settled()));
        assert!(soft_after(&l, &rising) < soft_after(&l, &settled()));
        // A mate score found or lost is a bounded factor.
        let lost = IterationStats {
            score: -29_990,
            ..settled()
        };
        let f = soft_scale_permille(&P, &lost);
        let capped = IterationStats {
            score: 50 - 300,
            ..settled()
        };
        assert_eq!(f, soft_scale_permille(&P, &capped));
        assert!(f > soft_scale_permille(&P, &falling));
    }

    #[test]
    fn the_scaled_soft_limit_never_passes_the_hard_limit_or_the_clock() {
        let worst = IterationStats {
            stability: 0,
            best_move_nodes: 0,
            root_nodes: 1000,
            score: -500,
            reference_score: Some(500),
            jieqi: false,
        };
        for (t, inc) in [
            (1u64, 0u64),
            (40, 0),
            (2000, 20),
            (60_000, 1000),
            (10, 5000),
        ] {
            let l = clock(t, inc);
            let mut tm = TimeManager::new(&l, &P, 0, Instant::now());
            for (jieqi, stats) in [(200, worst), (50, settled()), (100, worst)] {
                tm.scale_optimum(jieqi);
                tm.rescale_soft(soft_scale_permille(&P, &stats));
                let (s, h) = (tm.soft.unwrap(), tm.hard.unwrap());
                assert!(s <= h, "soft {s:?} > hard {h:?} for {t}+{inc}");
                assert!(h.as_millis() as u64 <= t.saturating_sub(MOVE_OVERHEAD_MS).max(1));
                assert!(s >= Duration::from_millis(1));
            }
        }
        // The worst case is indeed capped: well beyond the hard limit before the cap.
        let l = clock(60_000, 0);
        let b = budget_ms(&l, &P, 0);
        assert!(b.optimum.unwrap() * soft_scale_permille(&P, &worst) / 1000 > b.hard.unwrap());
        assert_eq!(soft_after(&l, &worst).as_millis() as u64, b.hard.unwrap());
    }

    #[test]
    fn movetime_is_neither_scaled_nor_passed() {
        let only = SearchLimits {
            movetime_ms: Some(500),
            ..Default::default()
        };
        let mut tm = TimeManager::new(&only, &P, 0, Instant::now());
        tm.scale_optimum(50);
        tm.rescale_soft(100);
        assert_eq!(tm.soft, Some(Duration::from_millis(500)));
        // A clock capped by movetime (skill levels): scaled, but never past movetime.
        let both = SearchLimits {
            movetime_ms: Some(200),
            ..clock(600_000, 0)
        };
        let mut tm = TimeManager::new(&both, &P, 0, Instant::now());
        tm.rescale_soft(5000);
        assert_eq!(tm.soft, Some(Duration::from_millis(200)));
        assert_eq!(tm.hard, Some(Duration::from_millis(200)));
    }

    /// The node share is read from the root's per-move counts: every node of the search is
    /// counted under exactly one root move (Xiangqi, and Jieqi, whose reveal moves go through
    /// chance nodes), and the best move's count is among them.
    #[test]
    fn root_node_counts_cover_the_whole_search() {
        use crate::core::{Position, Variant};
        use crate::eval::EvalParams;
        use std::sync::Arc;
        for (variant, d) in [(Variant::Xiangqi, 7), (Variant::Jieqi, 4)] {
            let pos = Position::startpos_of(variant);
            let mut s = super::super::Searcher::new(Arc::new(EvalParams::default()), P, 4);
            let limits = SearchLimits {
                depth: Some(d),
                ..Default::default()
            };
            let r = s.search(&pos, &limits, &mut |_| {});
            let total: u64 = s.root_effort.iter().map(|e| e.1).sum();
            assert_eq!(total, r.nodes, "{variant:?}");
            assert_eq!(s.root_effort.len(), pos.legal_moves().len(), "{variant:?}");
            let best = s.root_effort.iter().find(|e| e.0 == r.best_move).unwrap();
            assert!(
                best.1 > 0 && best.1 < total,
                "{variant:?}: {best:?} of {total}"
            );
        }
    }

    /// By default a Jieqi search keeps the fixed soft limit of before, whatever the root and
    /// the iterations look like (the Jieqi SPRT did not support the scaling).
    #[test]
    fn jieqi_defaults_keep_the_fixed_soft_limit() {
        for n in [0, 1, 10, 44] {
            assert_eq!(jieqi_percent(&P, n), 100);
        }
        let l = clock(60_000, 600);
        let fixed = TimeManager::new(&l, &P, 0, Instant::now()).soft;
        for stats in [
            settled(),
            IterationStats {
                stability: 0,
                best_move_nodes: 10,
                score: -300,
                ..settled()
            },
        ] {
            let jieqi = IterationStats {
                jieqi: true,
                ..stats
            };
            assert_eq!(soft_scale_permille(&P, &jieqi), 1000);
            assert_eq!(soft_after(&l, &jieqi), fixed.unwrap());
            // Blended: the Xiangqi factor at 100 percent, halfway at 50.
            let x = soft_scale_permille(&P, &stats) as i64;
            assert_eq!(soft_scale_permille(&JIEQI_ON, &jieqi) as i64, x);
            let half = SearchParams {
                tm_jieqi_blend: 50,
                ..P
            };
            assert_eq!(
                soft_scale_permille(&half, &jieqi) as i64,
                1000 + (x - 1000) / 2
            );
        }
    }

    /// The Jieqi settings the SPRT measured (see the module documentation).
    const JIEQI_ON: SearchParams = SearchParams {
        tm_jieqi_reveal_bonus: 40,
        tm_jieqi_no_reveal: 85,
        tm_jieqi_blend: 100,
        ..SearchParams::DEFAULT
    };

    #[test]
    fn jieqi_time_follows_the_reveal_moves() {
        let p = JIEQI_ON;
        let none = jieqi_percent(&p, 0);
        let few = jieqi_percent(&p, 3);
        let many = jieqi_percent(&p, JIEQI_FULL_REVEALS as usize);
        assert!(none < 100 && 100 < few && few < many);
        assert_eq!(many, jieqi_percent(&p, 200));
        let l = clock(60_000, 600);
        let mut early = TimeManager::new(&l, &p, 0, Instant::now());
        let mut late = early.clone();
        early.scale_optimum(many);
        late.scale_optimum(none);
        early.rescale_soft(1000);
        late.rescale_soft(1000);
        assert!(early.soft.unwrap() > late.soft.unwrap());
    }

    /// Stockfish's shape (`tm_horizon` 50) with the soft limit at the whole optimum.
    const HORIZON: SearchParams = SearchParams {
        tm_horizon: 50,
        tm_soft_percent: 100,
        ..SearchParams::DEFAULT
    };

    #[test]
    fn the_horizon_budget_is_stockfishs_formula() {
        // 5+0.05 at ply 8: time left 4970 + 49 · 50 − 50 · 30 = 5920 ms; share
        // (120 + 39 · 11^0.45) / 10000 = 0.023473, 1.12 times for the increment: 155.6 ms;
        // hard limit 4 + 8/12 times that.
        let b = budget_ms(&clock(5000, 50), &HORIZON, 8);
        assert_eq!(b.optimum, Some(155));
        assert_eq!(b.soft, Some(155));
        assert_eq!(b.hard, Some(726));
        // `tm_soft_percent` scales the soft limit, not the hard one.
        let p = SearchParams {
            tm_soft_percent: 60,
            ..HORIZON
        };
        let b60 = budget_ms(&clock(5000, 50), &p, 8);
        assert_eq!((b60.soft, b60.hard), (Some(93), Some(726)));
        // Off (the default), the ply changes nothing.
        assert_eq!(
            budget_ms(&clock(5000, 50), &P, 8),
            budget_ms(&clock(5000, 50), &P, 80)
        );
    }

    #[test]
    fn the_horizon_budget_gives_later_plies_a_larger_share() {
        let l = clock(60_000, 0);
        let mut last = 0;
        for ply in [0, 10, 40, 80, 160] {
            let s = budget_ms(&l, &HORIZON, ply).soft.unwrap();
            assert!(s > last, "ply {ply}: {s} <= {last}");
            last = s;
        }
        // More increment, more time; with moves to go, fewer moves, more time each.
        let a = budget_ms(&clock(60_000, 0), &HORIZON, 20).soft.unwrap();
        let b = budget_ms(&clock(60_000, 1000), &HORIZON, 20).soft.unwrap();
        assert!(a < b);
        let mut few = clock(60_000, 0);
        few.movestogo = Some(5);
        let mut many = few.clone();
        many.movestogo = Some(40);
        assert!(budget_ms(&many, &HORIZON, 20).soft < budget_ms(&few, &HORIZON, 20).soft);
    }

    /// Both budgets, the default's and Stockfish's (`HORIZON`), at any ply.
    #[test]
    fn clock_budget_stays_inside_the_clock() {
        for (t, inc, mtg) in [
            (1u64, 0u64, None),
            (50, 0, None),
            (1000, 0, Some(1)),
            (2000, 5000, None),
            (60_000, 1000, None),
            (5000, 100, Some(2)),
            (300_000, 0, Some(40)),
        ] {
            for (params, ply) in [P, HORIZON]
                .iter()
                .flat_map(|p| [(p, 0), (p, 30), (p, 400)])
            {
                let l = SearchLimits {
                    time_ms: Some(t),
                    inc_ms: Some(inc),
                    movestogo: mtg,
                    ..Default::default()
                };
                let b = budget_ms(&l, params, ply);
                let (s, h) = (b.soft.unwrap(), b.hard.unwrap());
                assert_eq!(b.optimum, Some(s));
                assert!(
                    0 < s && s <= h,
                    "soft {s} hard {h} for {t}+{inc} at ply {ply}"
                );
                let avail = t.saturating_sub(MOVE_OVERHEAD_MS).max(1);
                assert!(h <= (avail * 8 / 10).max(1), "hard {h} for {t}+{inc}");
            }
        }
    }
}
