//! The accumulator stack of the search (Stockfish's `AccumulatorStack`): one entry per ply,
//! pushed with the move's delta on make and popped on unmake. Pushing only records the delta;
//! the accumulator is computed when a node is evaluated, from the nearest computed ancestor,
//! so nodes that are never evaluated (pruned before their static evaluation) cost nothing but
//! the delta.
//!
//! Use in the search:
//!
//! ```text
//! stack.reset(&net, &root);                  // at the root
//! stack.push(delta_of(&pos, m)); pos.make_move(m);
//! let eval = stack.evaluate(&net, &pos);     // at any node, lazily
//! pos.unmake_move(); stack.pop();
//! stack.push(FeatureDelta::NONE); pos.make_null(); ... pos.unmake_null(); stack.pop();
//! ```

use super::accumulator::{refresh_perspective, update_perspective};
use super::delta::FeatureDelta;
use super::features::{FeatureSet, with_feature_set};
use super::network::Network;
use super::simd::{Line, lanes};
use crate::core::{Color, Position};

/// The longest run of uncomputed plies brought up to date by updates; a longer one is rebuilt
/// from the position. An update reads two or three weight rows and a rebuild reads one per
/// piece, up to 32, so beyond about ten plies the rebuild is the cheaper.
const MAX_UPDATE_CHAIN: usize = 10;

/// Plies the stack holds before it grows (the search's depth stays below it).
const INITIAL_PLIES: usize = 256;

#[derive(Clone, Copy, Debug)]
struct Node {
    /// The move that led here from the node below.
    delta: FeatureDelta,
    /// Per perspective: whether this node's lines are up to date.
    computed: [bool; 2],
    /// Per perspective: the bucket the lines were computed in (meaningful when computed).
    bucket: [usize; 2],
}

const FRESH: Node = Node {
    delta: FeatureDelta::NONE,
    computed: [false; 2],
    bucket: [0; 2],
};

/// Accumulators for the current line of the search, computed lazily.
#[derive(Clone)]
pub struct AccumulatorStack {
    /// Lines per perspective.
    n: usize,
    /// The hash of the network the lines were computed with.
    net_hash: u64,
    /// Node `k`'s red lines at `2 * k * n`, then its black lines.
    lines: Vec<Line>,
    nodes: Vec<Node>,
    top: usize,
}

/// The shape and the depth, not the lines.
impl std::fmt::Debug for AccumulatorStack {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AccumulatorStack")
            .field("lines_per_perspective", &self.n)
            .field("net_hash", &format_args!("{:#018x}", self.net_hash))
            .field("depth", &self.top)
            .finish_non_exhaustive()
    }
}

impl AccumulatorStack {
    /// An empty stack for `net`: [`reset`](AccumulatorStack::reset) it at the root.
    pub fn new(net: &Network) -> AccumulatorStack {
        let n = net.lines();
        AccumulatorStack {
            n,
            net_hash: net.hash(),
            lines: vec![Line::ZERO; 2 * n * INITIAL_PLIES],
            nodes: vec![FRESH; INITIAL_PLIES],
            top: 0,
        }
    }

    /// Makes `pos` the root: depth 0, its accumulator computed from scratch.
    pub fn reset(&mut self, net: &Network, pos: &Position) {
        self.adopt(net);
        self.top = 0;
        self.nodes[0] = FRESH;
        self.compute(net, pos);
    }

    /// A move was made (or is about to be) whose delta is `delta` ([`super::delta_of`];
    /// [`FeatureDelta::NONE`] for a null move).
    #[inline]
    pub fn push(&mut self, delta: FeatureDelta) {
        self.top += 1;
        if self.top == self.nodes.len() {
            self.nodes.resize(2 * self.nodes.len(), FRESH);
            self.lines.resize(2 * self.n * self.nodes.len(), Line::ZERO);
        }
        self.nodes[self.top] = Node { delta, ..FRESH };
    }

    /// The last pushed move was taken back. Popping the root is a caller's bug (it panics in
    /// debug builds and leaves the root in place otherwise).
    #[inline]
    pub fn pop(&mut self) {
        debug_assert!(self.top > 0, "AccumulatorStack::pop at the root");
        self.top = self.top.saturating_sub(1);
    }

    /// Plies above the root.
    pub fn depth(&self) -> usize {
        self.top
    }

    /// The evaluation in centipawns, side to move's view, of `pos`, the position at the top
    /// of the stack (the root after the pushed moves).
    #[inline]
    pub fn evaluate(&mut self, net: &Network, pos: &Position) -> i32 {
        self.compute(net, pos);
        let stm = pos.side_to_move();
        net.output(
            self.top_lines(stm),
            self.top_lines(stm.flip()),
            pos.occupied().count_ones(),
        )
    }

    /// Brings the top accumulator up to date; `pos` is the position at the top.
    pub fn compute(&mut self, net: &Network, pos: &Position) {
        self.adopt(net);
        with_feature_set!(net.feature_set(), F => {
            self.compute_perspective::<F>(net, pos, Color::Red);
            self.compute_perspective::<F>(net, pos, Color::Black);
        });
    }

    /// The top accumulator's neuron values of `perspective`, if computed.
    pub fn top_values(&self, perspective: Color) -> Option<&[i16]> {
        self.nodes[self.top].computed[perspective.index()]
            .then(|| lanes(self.top_lines(perspective)))
    }

    /// Starts over if `net` is not the network the lines belong to (a new network loaded
    /// between searches): every node is then recomputed when next evaluated.
    #[inline]
    fn adopt(&mut self, net: &Network) {
        if self.net_hash == net.hash() && self.n == net.lines() {
            return;
        }
        self.n = net.lines();
        self.net_hash = net.hash();
        self.lines = vec![Line::ZERO; 2 * self.n * self.nodes.len()];
        for node in &mut self.nodes {
            node.computed = [false; 2];
        }
    }

    #[inline]
    fn top_lines(&self, perspective: Color) -> &[Line] {
        let at = (2 * self.top + perspective.index()) * self.n;
        &self.lines[at..at + self.n]
    }

    fn compute_perspective<F: FeatureSet>(&mut self, net: &Network, pos: &Position, p: Color) {
        let i = p.index();
        let top = self.top;
        if self.nodes[top].computed[i] {
            return;
        }
        // The nearest computed ancestor, within reach.
        let mut base = top;
        while !self.nodes[base].computed[i] {
            if base == 0 || top - base >= MAX_UPDATE_CHAIN {
                return self.refresh_top::<F>(net, pos, p);
            }
            base -= 1;
        }
        // A move that changes the perspective's bucket on the way up means a rebuild.
        let bucket = self.nodes[base].bucket[i];
        if self.nodes[base + 1..=top]
            .iter()
            .any(|node| F::bucket_after(p, bucket, &node.delta) != bucket)
        {
            return self.refresh_top::<F>(net, pos, p);
        }
        let n = self.n;
        for k in base + 1..=top {
            let (below, above) = self.lines.split_at_mut(2 * k * n);
            let parent = &below[(2 * (k - 1) + i) * n..][..n];
            let out = &mut above[i * n..][..n];
            update_perspective::<F>(net, p, bucket, &self.nodes[k].delta, parent, out);
            self.nodes[k].computed[i] = true;
            self.nodes[k].bucket[i] = bucket;
        }
    }

    fn refresh_top<F: FeatureSet>(&mut self, net: &Network, pos: &Position, p: Color) {
        let i = p.index();
        let at = (2 * self.top + i) * self.n;
        let bucket = refresh_perspective::<F>(net, pos, p, &mut self.lines[at..at + self.n]);
        let node = &mut self.nodes[self.top];
        node.computed[i] = true;
        node.bucket[i] = bucket;
    }
}
