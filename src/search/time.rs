//! Time management: turns `SearchLimits` into a soft limit (no new iteration of the iterative
//! deepening starts after it) and a hard limit (the search stops, checked every
//! `CHECK_INTERVAL` nodes). With a clock, the budget is the remaining time spread over the
//! moves to go (30 when unknown) plus most of the increment, and the hard limit never exceeds a
//! fixed share of the clock, so the engine cannot lose on time with a sane increment.
//! Node and depth limits never read the clock, which keeps them deterministic.

use super::SearchLimits;
use std::time::{Duration, Instant};

/// Nodes between clock reads.
pub const CHECK_INTERVAL: u64 = 1024;

/// Time kept back for the GUI's and the pipe's latency.
pub const MOVE_OVERHEAD_MS: u64 = 30;

#[derive(Clone, Debug)]
pub struct TimeManager {
    start: Instant,
    /// `None`: no time limit.
    pub soft: Option<Duration>,
    pub hard: Option<Duration>,
}

impl TimeManager {
    pub fn new(limits: &SearchLimits, start: Instant) -> TimeManager {
        let (soft, hard) = budget_ms(limits);
        TimeManager {
            start,
            soft: soft.map(Duration::from_millis),
            hard: hard.map(Duration::from_millis),
        }
    }

    pub fn elapsed(&self) -> Duration {
        self.start.elapsed()
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
}

/// (soft, hard) limits in ms; `None` when neither `movetime` nor a clock is given, or when the
/// search is `infinite`.
pub fn budget_ms(limits: &SearchLimits) -> (Option<u64>, Option<u64>) {
    if limits.infinite {
        return (None, None);
    }
    let mut soft: Option<u64> = None;
    let mut hard: Option<u64> = None;
    if let Some(t) = limits.time_ms {
        let inc = limits.inc_ms.unwrap_or(0);
        let mtg = limits.movestogo.unwrap_or(30).clamp(1, 50) as u64;
        let avail = t.saturating_sub(MOVE_OVERHEAD_MS).max(1);
        // Per-move share; the increment arrives after the move, so only 3/4 of it is spent,
        // and never more than the clock minus a reserve.
        let base = (avail / mtg + inc * 3 / 4).min(avail * 6 / 10).max(1);
        let s = (base * 6 / 10).max(1);
        let h = (base * 3).min(avail * 8 / 10).max(1);
        soft = Some(s);
        hard = Some(h);
    }
    if let Some(mt) = limits.movetime_ms {
        let mt = mt.max(1);
        soft = Some(soft.map_or(mt, |s| s.min(mt)));
        hard = Some(hard.map_or(mt, |h| h.min(mt)));
    }
    (soft, hard)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clock_budget_stays_inside_the_clock() {
        for (t, inc, mtg) in [
            (1u64, 0u64, None),
            (50, 0, None),
            (1000, 0, Some(1)),
            (60_000, 1000, None),
            (5000, 100, Some(2)),
            (300_000, 0, Some(40)),
        ] {
            let l = SearchLimits {
                time_ms: Some(t),
                inc_ms: Some(inc),
                movestogo: mtg,
                ..Default::default()
            };
            let (s, h) = budget_ms(&l);
            let (s, h) = (s.unwrap(), h.unwrap());
            assert!(s <= h, "soft {s} > hard {h} for {t}+{inc}");
            assert!(
                h <= t.saturating_sub(MOVE_OVERHEAD_MS).max(1),
                "hard {h} exceeds clock {t}"
            );
        }
    }

    #[test]
    fn node_and_depth_limits_have_no_clock() {
        let l = SearchLimits {
            nodes: Some(1000),
            depth: Some(5),
            ..Default::default()
        };
        assert_eq!(budget_ms(&l), (None, None));
        let inf = SearchLimits {
            infinite: true,
            time_ms: Some(100),
            ..Default::default()
        };
        assert_eq!(budget_ms(&inf), (None, None));
    }
}
