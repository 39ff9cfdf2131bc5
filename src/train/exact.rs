//! Sums that give the same bits in any order: gradients and losses added as integers (fixed
//! point), so a data-parallel driver can add the parts of a batch computed by any number of
//! threads and ranks and still take the same step. Floating-point addition is not associative;
//! integer addition is.
//!
//! Each part (the gradient of one block of samples) is rounded once to a multiple of 2^-32
//! before it is added: far below what an f32 weight update can see, and with 31 bits of
//! integer headroom (a block's gradient entries are bounded by a few thousand: the loss's
//! derivative, the activations and the clipped weights are all small).

use super::gradient::Gradient;
use serde::{Deserialize, Serialize};

/// Fixed-point scale: values are stored times 2^32.
const SCALE: f64 = 4_294_967_296.0;

fn fixed(x: f64) -> i64 {
    (x * SCALE).round() as i64
}

/// A gradient and loss summed in fixed point, with the number of samples.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ExactSum {
    pub values: Vec<i64>,
    pub loss: i64,
    pub samples: u64,
}

impl ExactSum {
    /// An empty sum over `parameters` values (0 for a loss-only sum).
    pub fn zeros(parameters: usize) -> ExactSum {
        ExactSum {
            values: vec![0; parameters],
            loss: 0,
            samples: 0,
        }
    }

    /// Adds one part's gradient (rounded to the fixed-point grid) and loss.
    pub fn add_gradient(&mut self, g: &Gradient) {
        if self.values.len() < g.values.len() {
            self.values.resize(g.values.len(), 0);
        }
        for (s, &v) in self.values.iter_mut().zip(&g.values) {
            if v != 0.0 {
                *s += fixed(v as f64);
            }
        }
        self.add_loss(g.loss_sum, g.samples);
    }

    /// Adds a loss summed over `samples` samples.
    pub fn add_loss(&mut self, loss_sum: f64, samples: u64) {
        self.loss += fixed(loss_sum);
        self.samples += samples;
    }

    /// Adds another sum (from another thread or rank).
    pub fn merge(&mut self, other: &ExactSum) {
        if self.values.len() < other.values.len() {
            self.values.resize(other.values.len(), 0);
        }
        for (s, &v) in self.values.iter_mut().zip(&other.values) {
            *s += v;
        }
        self.loss += other.loss;
        self.samples += other.samples;
    }

    /// The loss sum as a float.
    pub fn loss_sum(&self) -> f64 {
        self.loss as f64 / SCALE
    }

    /// The mean loss (0 for no samples).
    pub fn mean_loss(&self) -> f64 {
        if self.samples == 0 {
            0.0
        } else {
            self.loss_sum() / self.samples as f64
        }
    }

    /// The sum as the optimiser's gradient.
    pub fn to_gradient(&self) -> Gradient {
        Gradient {
            values: self
                .values
                .iter()
                .map(|&v| (v as f64 / SCALE) as f32)
                .collect(),
            loss_sum: self.loss_sum(),
            samples: self.samples,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn part(seed: u64, n: usize) -> Gradient {
        let mut x = seed;
        let values = (0..n)
            .map(|_| {
                x = crate::util::mix(x, &[1]);
                ((x >> 11) as f64 / (1u64 << 53) as f64 * 200.0 - 100.0) as f32
                    * if x.is_multiple_of(7) { 1e-6 } else { 1.0 }
            })
            .collect();
        Gradient {
            values,
            loss_sum: (seed % 100) as f64 * 0.37,
            samples: 1000 + seed,
        }
    }

    #[test]
    fn any_order_gives_the_same_bits() {
        let parts: Vec<Gradient> = (0..12).map(|s| part(s, 300)).collect();
        let mut forward = ExactSum::zeros(300);
        for p in &parts {
            forward.add_gradient(p);
        }
        // in reverse, and split across three "ranks" merged in another order
        let mut backward = ExactSum::zeros(300);
        for p in parts.iter().rev() {
            backward.add_gradient(p);
        }
        let mut ranks = [ExactSum::zeros(0), ExactSum::zeros(0), ExactSum::zeros(0)];
        for (i, p) in parts.iter().enumerate() {
            ranks[i % 3].add_gradient(p);
        }
        let mut merged = ExactSum::zeros(300);
        for r in ranks.iter().rev() {
            merged.merge(r);
        }
        assert_eq!(forward, backward);
        assert_eq!(forward, merged);
        let g = forward.to_gradient();
        assert_eq!(g.samples, parts.iter().map(|p| p.samples).sum::<u64>());
        // close to the float sum
        for i in 0..300 {
            let f: f64 = parts.iter().map(|p| p.values[i] as f64).sum();
            assert!(
                (g.values[i] as f64 - f).abs() <= 1e-6 * f.abs().max(1.0),
                "{i}"
            );
        }
    }
}
