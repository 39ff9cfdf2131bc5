//! Mini-batch first-order optimisers for Texel, for datasets too large to afford a full pass
//! per step: Adam (Kingma & Ba 2014, "Adam: A Method for Stochastic Optimization") and AdaGrad
//! (Duchi, Hazan & Singer 2011), the two that Ethereal's tuner and Andrew Grant's texel-tuner
//! offer. Both scale each parameter's step by its own gradient history, so one learning rate
//! suits parameters whose gradients differ by orders of magnitude (a material value against a
//! rarely firing PST square).
//!
//! The batches are sets of whole chunks (`texel::trace::CHUNK` positions): a chunk's sum is the
//! unit of the fixed-order reduction, so a batch's gradient is the same bits on any number of
//! threads and ranks. One epoch visits every training chunk once, in an order drawn from the run's seed
//! and the epoch number, so a resumed run draws the same batches as an uninterrupted one.

use super::files;
use crate::util::mix;
use rand::SeedableRng;
use rand::seq::SliceRandom;
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};

/// `--optimiser`: how Texel moves the parameters.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum Optimiser {
    /// Full-batch L-BFGS (argmin, More-Thuente line search): one iteration per epoch.
    #[default]
    Lbfgs,
    /// Mini-batch Adam: many steps per epoch, one per batch.
    Adam,
    /// Mini-batch AdaGrad: like Adam without momentum, its step shrinking as gradients add up.
    Adagrad,
}

impl Optimiser {
    /// Whether this optimiser takes mini-batch steps (and so reads `--batch-size`, `--lr`...).
    pub fn is_minibatch(self) -> bool {
        self != Optimiser::Lbfgs
    }

    /// The default learning rate, in centipawns per step: Adam's first steps move each
    /// parameter by about `lr`, AdaGrad's by about `lr / √steps`, hence its larger one. Both
    /// were chosen by trying a range on `datasets/ccpd-quiet.epd.gz` (docs/measurements.md,
    /// Texel).
    pub fn default_lr(self) -> f64 {
        match self {
            Optimiser::Lbfgs | Optimiser::Adam => 1.0,
            Optimiser::Adagrad => 10.0,
        }
    }
}

/// The update rule and its constants.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Rule {
    pub optimiser: Optimiser,
    pub lr: f64,
    pub beta1: f64,
    pub beta2: f64,
    pub eps: f64,
}

/// The optimiser's memory, checkpointed with θ so that a resumed run continues bit for bit.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Moments {
    /// Steps taken (Adam's bias correction).
    pub steps: u64,
    /// Adam's first moment (empty for AdaGrad, which has none).
    #[serde(with = "files::exact::vec")]
    pub m: Vec<f64>,
    /// Adam's second moment, or AdaGrad's sum of squared gradients.
    #[serde(with = "files::exact::vec")]
    pub v: Vec<f64>,
}

impl Moments {
    pub fn new(optimiser: Optimiser, params: usize) -> Moments {
        Moments {
            steps: 0,
            m: vec![
                0.0;
                if optimiser == Optimiser::Adam {
                    params
                } else {
                    0
                }
            ],
            v: vec![0.0; params],
        }
    }
}

impl Rule {
    /// One step from the batch gradient `grad`, then each parameter clamped to its `bounds`.
    pub fn step(&self, mom: &mut Moments, theta: &mut [f64], grad: &[f64], bounds: &[(f64, f64)]) {
        mom.steps += 1;
        match self.optimiser {
            Optimiser::Adam => {
                let t = mom.steps as f64;
                let (c1, c2) = (1.0 - self.beta1.powf(t), 1.0 - self.beta2.powf(t));
                for j in 0..theta.len() {
                    let g = grad[j];
                    mom.m[j] = self.beta1 * mom.m[j] + (1.0 - self.beta1) * g;
                    mom.v[j] = self.beta2 * mom.v[j] + (1.0 - self.beta2) * g * g;
                    let (m, v) = (mom.m[j] / c1, mom.v[j] / c2);
                    theta[j] -= self.lr * m / (v.sqrt() + self.eps);
                }
            }
            Optimiser::Adagrad => {
                for j in 0..theta.len() {
                    let g = grad[j];
                    mom.v[j] += g * g;
                    theta[j] -= self.lr * g / (mom.v[j].sqrt() + self.eps);
                }
            }
            // L-BFGS never comes here: it steps through argmin.
            Optimiser::Lbfgs => {}
        }
        for (x, &(lo, hi)) in theta.iter_mut().zip(bounds) {
            *x = x.clamp(lo, hi);
        }
    }
}

/// The order in which epoch `epoch` visits `n` training chunks: a permutation drawn from the
/// run's seed and the epoch alone (not from anything earlier in the run), so a resumed run and
/// every rank agree on it.
pub fn epoch_order(seed: u64, epoch: u64, n: usize) -> Vec<usize> {
    let mut order: Vec<usize> = (0..n).collect();
    let mut rng = ChaCha8Rng::seed_from_u64(mix(seed, &[epoch, 0xada4]));
    order.shuffle(&mut rng);
    order
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_shuffle_is_seeded_by_run_and_epoch() {
        let a = epoch_order(3, 1, 100);
        assert_eq!(a, epoch_order(3, 1, 100), "same seed and epoch, same order");
        let mut sorted = a.clone();
        sorted.sort();
        assert_eq!(sorted, (0..100).collect::<Vec<_>>(), "a permutation");
        assert_ne!(a, sorted, "shuffled");
        assert_ne!(a, epoch_order(3, 2, 100), "each epoch its own order");
        assert_ne!(a, epoch_order(4, 1, 100), "each seed its own order");
    }

    #[test]
    fn adam_moves_against_the_gradient_by_about_lr_and_clamps() {
        let rule = Rule {
            optimiser: Optimiser::Adam,
            lr: 2.0,
            beta1: 0.9,
            beta2: 0.999,
            eps: 1e-8,
        };
        let mut mom = Moments::new(Optimiser::Adam, 3);
        let mut theta = vec![10.0, 10.0, 10.0];
        let bounds = [(0.0, 100.0), (0.0, 100.0), (0.0, 11.0)];
        rule.step(&mut mom, &mut theta, &[1e-4, -3e-5, -1.0], &bounds);
        // the bias-corrected first step is lr·sign(g) whatever the gradient's size
        assert!((theta[0] - 8.0).abs() < 1e-3, "{}", theta[0]);
        assert!((theta[1] - 12.0).abs() < 1e-3, "{}", theta[1]);
        assert_eq!(theta[2], 11.0, "clamped to its bound");
        assert_eq!(mom.steps, 1);
    }

    #[test]
    fn adagrad_steps_shrink_as_the_squares_add_up() {
        let rule = Rule {
            optimiser: Optimiser::Adagrad,
            lr: 1.0,
            beta1: 0.9,
            beta2: 0.999,
            eps: 1e-8,
        };
        let mut mom = Moments::new(Optimiser::Adagrad, 1);
        assert!(mom.m.is_empty());
        let mut theta = vec![0.0];
        let bounds = [(-100.0, 100.0)];
        rule.step(&mut mom, &mut theta, &[0.5], &bounds);
        let first = -theta[0];
        rule.step(&mut mom, &mut theta, &[0.5], &bounds);
        let second = -theta[0] - first;
        assert!((first - 1.0).abs() < 1e-6, "{first}");
        assert!((second - 1.0 / 2f64.sqrt()).abs() < 1e-6, "{second}");
    }
}
