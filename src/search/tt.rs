//! Transposition table: clusters of four 16-byte entries (one 64-byte cache line), indexed by
//! the high bits of the Zobrist key and verified by its low 32 bits. Replacement is
//! depth-preferred with ageing (<https://www.chessprogramming.org/Transposition_Table>): a
//! probe hit is overwritten in place; otherwise the entry with the lowest
//! `depth - 8 * age` is replaced, so deep results of the current search survive and stale ones
//! from earlier searches go first.

use crate::core::Move;

/// What a stored score means relative to the true value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Bound {
    /// Fail-high: the true score is at least the stored one.
    Lower = 1,
    /// Fail-low: the true score is at most the stored one.
    Upper = 2,
    Exact = 3,
}

#[derive(Clone, Copy, Default)]
#[repr(C)]
struct Entry {
    check: u32,
    mv: u32,
    score: i16,
    eval: i16,
    depth: u8,
    /// Bits 0-1: bound (0 = empty slot); bits 2-7: generation.
    flags: u8,
    _pad: u16,
}

const _: () = assert!(std::mem::size_of::<Entry>() == 16);

#[derive(Clone, Copy, Default)]
#[repr(C, align(64))]
struct Cluster {
    entries: [Entry; 4],
}

const _: () = assert!(std::mem::size_of::<Cluster>() == 64);

/// The stored static evaluation of an entry that has none (a lazily evaluated node).
pub const NO_EVAL: i32 = i16::MIN as i32;

/// A hit: the stored move, score (already adjusted to the probing ply), static eval, depth and
/// bound.
#[derive(Clone, Copy, Debug)]
pub struct TtHit {
    pub mv: Move,
    pub score: i32,
    pub eval: i32,
    pub depth: i32,
    pub bound: Bound,
}

/// `n` empty clusters from zeroed memory: the allocator hands out fresh zero pages without
/// writing them, so a searcher created per game (self-play) or per position (bench) pays only
/// for the part of the table it touches.
fn zeroed_clusters(n: usize) -> Vec<Cluster> {
    let layout = std::alloc::Layout::array::<Cluster>(n).expect("table size fits in memory");
    // SAFETY: `Cluster` is plain integers, for which all-zero bytes are a valid (empty) value;
    // the pointer comes from the global allocator with `Cluster`'s layout and holds `n` of them.
    unsafe {
        let ptr = std::alloc::alloc_zeroed(layout) as *mut Cluster;
        if ptr.is_null() {
            std::alloc::handle_alloc_error(layout);
        }
        Vec::from_raw_parts(ptr, n, n)
    }
}

pub struct TranspositionTable {
    clusters: Vec<Cluster>,
    generation: u8,
}

/// Scores at or beyond this magnitude are mate (or ruled win/loss) scores and are stored
/// relative to the node, not the root.
pub const MATE_BOUND: i32 = super::MATE - 2 * super::MAX_PLY as i32;

impl TranspositionTable {
    /// A table using about `mb` megabytes (at least one cluster).
    pub fn new(mb: usize) -> TranspositionTable {
        let n = (mb.max(1) * 1024 * 1024 / std::mem::size_of::<Cluster>()).max(1);
        TranspositionTable {
            clusters: zeroed_clusters(n),
            generation: 0,
        }
    }

    pub fn clear(&mut self) {
        self.clusters.fill(Cluster::default());
        self.generation = 0;
    }

    /// Marks the start of a new search, so that older entries age.
    pub fn new_search(&mut self) {
        self.generation = (self.generation + 1) & 63;
    }

    #[inline(always)]
    fn index(&self, key: u64) -> usize {
        ((key as u128 * self.clusters.len() as u128) >> 64) as usize
    }

    /// Converts a score from "plies from the root" to "plies from this node" for storing.
    #[inline(always)]
    fn to_tt(score: i32, ply: usize) -> i32 {
        if score >= MATE_BOUND {
            score + ply as i32
        } else if score <= -MATE_BOUND {
            score - ply as i32
        } else {
            score
        }
    }

    #[inline(always)]
    fn from_tt(score: i32, ply: usize) -> i32 {
        if score >= MATE_BOUND {
            score - ply as i32
        } else if score <= -MATE_BOUND {
            score + ply as i32
        } else {
            score
        }
    }

    /// Starts loading the cluster of `key` into the cache (called right after a move is made,
    /// so the child's probe finds it there; Stockfish's `prefetch`).
    #[inline(always)]
    pub fn prefetch(&self, key: u64) {
        #[cfg(target_arch = "x86_64")]
        {
            let p = self.clusters.as_ptr().wrapping_add(self.index(key)) as *const i8;
            // SAFETY: prefetching is a hint and never faults; the pointer is inside the table.
            unsafe { std::arch::x86_64::_mm_prefetch(p, std::arch::x86_64::_MM_HINT_T0) };
        }
        #[cfg(not(target_arch = "x86_64"))]
        let _ = key;
    }

    #[inline]
    pub fn probe(&self, key: u64, ply: usize) -> Option<TtHit> {
        let c = &self.clusters[self.index(key)];
        let check = key as u32;
        for e in &c.entries {
            if e.check == check && e.flags & 3 != 0 {
                let bound = match e.flags & 3 {
                    1 => Bound::Lower,
                    2 => Bound::Upper,
                    _ => Bound::Exact,
                };
                return Some(TtHit {
                    mv: Move(e.mv),
                    score: Self::from_tt(e.score as i32, ply),
                    eval: e.eval as i32,
                    depth: e.depth as i32,
                    bound,
                });
            }
        }
        None
    }

    #[inline]
    #[allow(clippy::too_many_arguments)]
    pub fn store(
        &mut self,
        key: u64,
        ply: usize,
        mv: Move,
        score: i32,
        eval: i32,
        depth: i32,
        bound: Bound,
    ) {
        let generation = self.generation;
        let idx = self.index(key);
        let c = &mut self.clusters[idx];
        let check = key as u32;
        let age = |e: &Entry| ((generation + 64 - (e.flags >> 2)) & 63) as i32;
        let mut slot = 0;
        let mut worst = i32::MAX;
        for (i, e) in c.entries.iter().enumerate() {
            if e.check == check || e.flags & 3 == 0 {
                slot = i;
                break;
            }
            let value = e.depth as i32 - 8 * age(e);
            if value < worst {
                worst = value;
                slot = i;
            }
        }
        let e = &mut c.entries[slot];
        // Keep a known move when this store has none; keep a deeper same-position result
        // unless the new one is exact.
        if e.check == check
            && e.flags & 3 != 0
            && bound != Bound::Exact
            && depth + 2 < e.depth as i32
            && age(e) == 0
        {
            return;
        }
        let mv = if mv.is_null() && e.check == check {
            Move(e.mv)
        } else {
            mv
        };
        *e = Entry {
            check,
            mv: mv.0,
            score: Self::to_tt(score, ply).clamp(-32000, 32000) as i16,
            eval: if eval == NO_EVAL {
                i16::MIN
            } else {
                eval.clamp(-32000, 32000) as i16
            },
            depth: depth.clamp(0, 255) as u8,
            flags: (generation << 2) | bound as u8,
            _pad: 0,
        };
    }

    /// Permille of the first thousand clusters' entries written in this search (UCI `hashfull`).
    pub fn hashfull(&self) -> u32 {
        let n = self.clusters.len().min(250);
        let mut used = 0;
        for c in &self.clusters[..n] {
            for e in &c.entries {
                if e.flags & 3 != 0 && e.flags >> 2 == self.generation {
                    used += 1;
                }
            }
        }
        (used * 1000 / (n * 4).max(1)) as u32
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::Square;

    #[test]
    fn store_and_probe_round_trip() {
        let mut tt = TranspositionTable::new(1);
        let m = Move::new(Square(10), Square(19));
        tt.store(0xdead_beef_1234_5678, 3, m, 42, -7, 5, Bound::Exact);
        let h = tt.probe(0xdead_beef_1234_5678, 3).expect("hit");
        assert_eq!(
            (h.mv, h.score, h.eval, h.depth, h.bound),
            (m, 42, -7, 5, Bound::Exact)
        );
        assert!(tt.probe(0x1111_2222_3333_4444, 3).is_none());
    }

    #[test]
    fn mate_scores_are_stored_relative_to_the_node() {
        let mut tt = TranspositionTable::new(1);
        // Mate in 5 plies from the root, found at ply 3: 2 plies from the node.
        let score = super::super::MATE - 5;
        tt.store(7, 3, Move::NULL, score, 0, 4, Bound::Lower);
        // Seen again at ply 1, the same mate is 3 plies from the root.
        let h = tt.probe(7, 1).unwrap();
        assert_eq!(h.score, super::super::MATE - 3);
        tt.store(8, 2, Move::NULL, -score, 0, 4, Bound::Upper);
        assert_eq!(tt.probe(8, 6).unwrap().score, -(super::super::MATE - 9));
    }

    #[test]
    fn deep_entries_survive_shallow_ones_in_a_full_cluster() {
        let mut tt = TranspositionTable::new(1);
        let n = tt.clusters.len() as u128;
        // Keys that land in cluster 0 (high bits zero) with different check bits.
        let keys: Vec<u64> = (1..=5u64).collect();
        assert!(keys.iter().all(|&k| (k as u128 * n) >> 64 == 0));
        tt.store(keys[0], 0, Move::NULL, 1, 0, 20, Bound::Exact);
        for &k in &keys[1..4] {
            tt.store(k, 0, Move::NULL, 1, 0, 1, Bound::Exact);
        }
        // The cluster is full; a fifth key replaces a shallow entry, not the deep one.
        tt.store(keys[4], 0, Move::NULL, 1, 0, 2, Bound::Exact);
        assert!(tt.probe(keys[0], 0).is_some());
        assert!(tt.probe(keys[4], 0).is_some());
        // Entries of older searches go first.
        tt.new_search();
        tt.new_search();
        tt.new_search();
        tt.store(99, 0, Move::NULL, 1, 0, 1, Bound::Exact);
        assert_eq!(
            keys.iter().filter(|&&k| tt.probe(k, 0).is_some()).count(),
            3,
            "exactly one old entry replaced"
        );
        tt.clear();
        assert!(tt.probe(keys[0], 0).is_none());
    }
}
