//! Accumulators: the feature transformer's output for both perspectives, kept per position so
//! that a move costs a few row additions instead of a full sum (Nasu's NNUE, 2018; Stockfish's
//! `Accumulator`). The search keeps them on an [`AccumulatorStack`](super::AccumulatorStack).

use super::delta::FeatureDelta;
use super::features::{FeatureSet, MAX_ACTIVE, with_feature_set};
use super::network::Network;
use super::simd::{self, Line, lanes};
use crate::core::{Color, Position};

/// Rebuilds one perspective's lines from scratch; returns its bucket.
#[inline]
pub(crate) fn refresh_perspective<F: FeatureSet>(
    net: &Network,
    pos: &Position,
    perspective: Color,
    out: &mut [Line],
) -> usize {
    let mut features = [0u32; MAX_ACTIVE];
    let mut n = 0;
    F::active_features(pos, perspective, &mut |f| {
        features[n] = f as u32;
        n += 1;
    });
    simd::refresh(
        net.simd(),
        out,
        net.ft_bias(),
        net.ft_weight_lines(),
        &features[..n],
    );
    F::bucket(pos, perspective)
}

/// Updates one perspective's lines from its parent's by `delta`, in bucket `bucket` (which the
/// move must not change for this perspective).
#[inline]
pub(crate) fn update_perspective<F: FeatureSet>(
    net: &Network,
    perspective: Color,
    bucket: usize,
    delta: &FeatureDelta,
    parent: &[Line],
    out: &mut [Line],
) {
    let row = |p| net.ft_row(F::index(perspective, bucket, p));
    let mut added: [&[Line]; 2] = [&[]; 2];
    let mut removed: [&[Line]; 4] = [&[]; 4];
    for (slot, &p) in added.iter_mut().zip(delta.added()) {
        *slot = row(p);
    }
    let mut n_removed = 0;
    for &p in delta.removed() {
        if F::READS_POOLS || !p.is_pool() {
            removed[n_removed] = row(p);
            n_removed += 1;
        }
    }
    simd::update(
        net.simd(),
        out,
        parent,
        &added[..delta.added().len()],
        &removed[..n_removed],
    );
}

/// The feature transformer's output for both perspectives of one position: red's neurons, then
/// black's, with the bucket each was computed in.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Accumulator {
    lines: Vec<Line>,
    buckets: [usize; 2],
}

impl Accumulator {
    /// Zeros in the shape of `net`'s accumulators: [`refresh`](Accumulator::refresh) before
    /// use.
    pub fn new(net: &Network) -> Accumulator {
        Accumulator {
            lines: vec![Line::ZERO; 2 * net.lines()],
            buckets: [0; 2],
        }
    }

    /// The accumulator of `pos`, computed from scratch.
    pub fn from_position(net: &Network, pos: &Position) -> Accumulator {
        let mut acc = Accumulator::new(net);
        acc.refresh(net, pos);
        acc
    }

    /// Recomputes both perspectives from `pos`.
    pub fn refresh(&mut self, net: &Network, pos: &Position) {
        self.lines.resize(2 * net.lines(), Line::ZERO);
        let (red, black) = self.lines.split_at_mut(net.lines());
        with_feature_set!(net.feature_set(), F => {
            self.buckets = [
                refresh_perspective::<F>(net, pos, Color::Red, red),
                refresh_perspective::<F>(net, pos, Color::Black, black),
            ];
        });
    }

    /// This accumulator becomes `parent` updated by a move's `delta`. `pos` is the position
    /// after the move: it is read only for a perspective whose bucket the move changes (a king
    /// bucket), which is rebuilt from it.
    pub fn update(
        &mut self,
        net: &Network,
        parent: &Accumulator,
        delta: &FeatureDelta,
        pos: &Position,
    ) {
        let n = net.lines();
        self.lines.resize(2 * n, Line::ZERO);
        with_feature_set!(net.feature_set(), F => {
            for perspective in Color::ALL {
                let i = perspective.index();
                let out = &mut self.lines[i * n..(i + 1) * n];
                let bucket = F::bucket_after(perspective, parent.buckets[i], delta);
                if bucket == parent.buckets[i] {
                    let from = &parent.lines[i * n..(i + 1) * n];
                    update_perspective::<F>(net, perspective, bucket, delta, from, out);
                    self.buckets[i] = bucket;
                } else {
                    self.buckets[i] = refresh_perspective::<F>(net, pos, perspective, out);
                }
            }
        });
    }

    /// The neuron values of `perspective`, as i16 at scale QA.
    pub fn values(&self, perspective: Color) -> &[i16] {
        let n = self.lines.len() / 2;
        let i = perspective.index();
        lanes(&self.lines[i * n..(i + 1) * n])
    }

    /// The bucket `perspective` was computed in.
    pub fn bucket(&self, perspective: Color) -> usize {
        self.buckets[perspective.index()]
    }

    pub(crate) fn perspective_lines(&self, perspective: Color) -> &[Line] {
        let n = self.lines.len() / 2;
        let i = perspective.index();
        &self.lines[i * n..(i + 1) * n]
    }
}

impl Network {
    /// The evaluation in centipawns, side to move's view, of `pos` whose accumulator is `acc`.
    #[inline]
    pub fn evaluate(&self, acc: &Accumulator, pos: &Position) -> i32 {
        let stm = pos.side_to_move();
        self.output(
            acc.perspective_lines(stm),
            acc.perspective_lines(stm.flip()),
            pos.occupied().count_ones(),
        )
    }

    /// The evaluation of `pos` from a fresh accumulator: for tools and tests (the search keeps
    /// an [`AccumulatorStack`](super::AccumulatorStack) instead).
    pub fn evaluate_position(&self, pos: &Position) -> i32 {
        self.evaluate(&Accumulator::from_position(self, pos), pos)
    }
}
