//! Lazy SMP (<https://www.chessprogramming.org/Lazy_SMP>), as the Stockfish family does it:
//! `Threads` searchers iterate on the same root at once, each with its own heuristics, stacks
//! (the network's accumulators among them) and evaluation cache, and meet only in the shared transposition table, where one thread's
//! results steer the others' move ordering and cut-offs. The thread that was asked to search
//! (the main thread) alone keeps the clock, prints `info` and chooses the move (its own best:
//! simple, and never worse than one thread at the same depth); the helpers iterate until it
//! stops them. All threads start each iteration at the next depth; they drift apart through
//! the table's timing, which is the "lazy" part.
//!
//! Node counts: each thread publishes its count in its own cache line every
//! [`PUBLISH_INTERVAL`] nodes; reports and `go nodes N` use the sum, so a node limit stops the
//! search within a few of those intervals of N nodes in total.
//!
//! With one thread none of this exists: no helpers and no published counts, and the search is
//! exactly the single-threaded one (deterministic under node limits, same `bench`).

use super::{SearchInfo, SearchLimits, SearchResult, Searcher};
use crate::core::Position;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

/// The most threads `Threads` accepts.
pub const MAX_THREADS: usize = 256;

/// Nodes between a thread's publications of its node count (and, under a node limit, its
/// reads of the total).
pub const PUBLISH_INTERVAL: u64 = 64;

/// A node counter alone in its cache line, so that threads publishing do not slow each other.
#[derive(Default)]
#[repr(align(64))]
struct Counter(AtomicU64);

/// What the threads of one engine share besides the table.
pub(super) struct Shared {
    /// Node count of each thread (index = thread id) in the running or last search.
    nodes: Box<[Counter]>,
    /// Set by the main thread when its search ends: the helpers' stop flag.
    helpers_stop: Arc<AtomicBool>,
}

impl Shared {
    fn total(&self) -> u64 {
        self.nodes.iter().map(|c| c.0.load(Ordering::Relaxed)).sum()
    }
}

/// A searcher's place among the threads of its engine.
pub(super) struct ThreadLink {
    shared: Arc<Shared>,
    id: usize,
}

impl ThreadLink {
    /// Publishes `nodes` as this thread's count; true when the total reaches `limit`.
    #[inline]
    pub(super) fn publish(&self, nodes: u64, limit: Option<u64>) -> bool {
        self.shared.nodes[self.id].0.store(nodes, Ordering::Relaxed);
        limit.is_some_and(|n| self.shared.total() >= n)
    }

    /// The total with this thread's own count exact (`nodes`) and the others' as published.
    pub(super) fn total(&self, nodes: u64) -> u64 {
        self.shared
            .nodes
            .iter()
            .enumerate()
            .map(|(i, c)| {
                if i == self.id {
                    nodes
                } else {
                    c.0.load(Ordering::Relaxed)
                }
            })
            .sum()
    }
}

impl Searcher {
    /// Searches with `n` threads from the next search on (UCI `Threads`, clamped to
    /// `1..=MAX_THREADS`). Helpers share this searcher's table and start with empty
    /// heuristics; with `n == 1` the searcher is single-threaded again.
    pub fn set_threads(&mut self, n: usize) {
        let n = n.clamp(1, MAX_THREADS);
        self.helpers.truncate(n - 1);
        while self.helpers.len() < n - 1 {
            let mut h = Searcher::new(self.eval.clone(), self.params, 1);
            h.tt = self.tt.clone();
            h.options = self.options;
            // Its own accumulators for the same network.
            h.set_networks(&self.networks());
            self.helpers.push(h);
        }
        if n == 1 {
            self.link = None;
            return;
        }
        let shared = Arc::new(Shared {
            nodes: (0..n).map(|_| Counter::default()).collect(),
            helpers_stop: Arc::new(AtomicBool::new(false)),
        });
        for (id, h) in self.helpers.iter_mut().enumerate() {
            h.stop = shared.helpers_stop.clone();
            h.link = Some(ThreadLink {
                shared: shared.clone(),
                id: id + 1,
            });
        }
        self.link = Some(ThreadLink { shared, id: 0 });
    }

    /// How many threads search (1 + helpers).
    pub fn threads(&self) -> usize {
        1 + self.helpers.len()
    }

    /// Nodes of each thread in the last search, the main thread first.
    pub fn thread_nodes(&self) -> Vec<u64> {
        std::iter::once(self.nodes)
            .chain(self.helpers.iter().map(|h| h.nodes))
            .collect()
    }

    /// Nodes searched so far by all threads (the exact count with one thread).
    #[inline]
    pub(super) fn total_nodes(&self) -> u64 {
        match &self.link {
            None => self.nodes,
            Some(l) => l.total(self.nodes),
        }
    }

    /// The main thread's search with helpers: they start on the same root with the main
    /// thread's parameters and limits less the clock, and are stopped and joined when the main
    /// thread's search ends.
    pub(super) fn search_smp(
        &mut self,
        pos: &Position,
        limits: &SearchLimits,
        info: &mut dyn FnMut(&SearchInfo),
    ) -> SearchResult {
        let Some(link) = &self.link else {
            return self.iterate(pos, limits, info);
        };
        let shared = link.shared.clone();
        for c in shared.nodes.iter() {
            c.0.store(0, Ordering::Relaxed);
        }
        shared.helpers_stop.store(false, Ordering::Relaxed);
        let helper_limits = SearchLimits {
            depth: limits.depth,
            nodes: limits.nodes,
            ..Default::default()
        };
        let mut helpers = std::mem::take(&mut self.helpers);
        for h in &mut helpers {
            h.eval = self.eval.clone();
            h.params = self.params;
            h.options = self.options;
            h.set_networks(&self.networks());
        }
        let mut result = std::thread::scope(|scope| {
            for (i, h) in helpers.iter_mut().enumerate() {
                h.nodes = 0;
                let pos = pos.clone();
                let limits = &helper_limits;
                // A helper whose thread cannot start sits this search out: the search is
                // weaker, not wrong.
                let _ = std::thread::Builder::new()
                    .name(format!("search-{}", i + 1))
                    .spawn_scoped(scope, move || {
                        h.iterate(&pos, limits, &mut |_| {});
                    });
            }
            let result = self.iterate(pos, limits, info);
            shared.helpers_stop.store(true, Ordering::Relaxed);
            result
        });
        self.helpers = helpers;
        // The final counts, so that `nodes()` after the search is exact.
        for (c, n) in shared.nodes.iter().zip(self.thread_nodes()) {
            c.0.store(n, Ordering::Relaxed);
        }
        result.nodes = self.thread_nodes().iter().sum();
        result
    }
}
