//! AdamW with weight clipping, the optimiser bullet trains NNUE networks with.
//!
//! Adam (Kingma & Ba 2014, "Adam: A Method for Stochastic Optimization") with decoupled weight
//! decay (Loshchilov & Hutter 2019, "Decoupled Weight Decay Regularization"): the decay shrinks
//! each weight by `lr · decay` apart from the gradient step, as PyTorch's `AdamW` does. After
//! each step every weight is clamped to `±clip`, so the quantised network cannot overflow its
//! integer storage (bullet's `min_weight`/`max_weight`; 1.98 keeps `1.98 · 255` within the
//! i16 range a QA = 255 feature transformer is stored in, with room for the sums).
//! The defaults are bullet's `AdamWParams`; unlike bullet, the moments are bias-corrected (the
//! first steps are not damped while the moments fill).
//!
//! The update is element-wise, so it runs on any number of threads with the same result.

use super::kernel::{self, AdamConsts};
use super::{Gradient, Network, Simd, TrainError};
use rayon::prelude::*;
use serde::{Deserialize, Serialize};

/// AdamW's constants.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct AdamWSettings {
    pub beta1: f32,
    pub beta2: f32,
    pub eps: f32,
    /// Decoupled weight decay per unit of learning rate.
    pub decay: f32,
    /// Every weight stays in `[-clip, clip]`.
    pub clip: f32,
}

impl Default for AdamWSettings {
    fn default() -> AdamWSettings {
        AdamWSettings {
            beta1: 0.9,
            beta2: 0.999,
            eps: 1e-8,
            decay: 0.01,
            clip: 1.98,
        }
    }
}

impl AdamWSettings {
    pub fn validate(&self) -> Result<(), TrainError> {
        let unit = |b: f32| (0.0..1.0).contains(&b);
        if !unit(self.beta1) || !unit(self.beta2) {
            return Err(TrainError::Settings(format!(
                "betas {} and {} must be in [0, 1)",
                self.beta1, self.beta2
            )));
        }
        if !(self.eps.is_finite() && self.eps > 0.0) {
            return Err(TrainError::Settings(format!("eps {}", self.eps)));
        }
        if !(self.decay.is_finite() && self.decay >= 0.0) {
            return Err(TrainError::Settings(format!("decay {}", self.decay)));
        }
        if !(self.clip.is_finite() && self.clip > 0.0) {
            return Err(TrainError::Settings(format!("clip {}", self.clip)));
        }
        Ok(())
    }
}

/// Elements one update task covers.
const BLOCK: usize = 1 << 14;

/// AdamW's state: its moments and step count.
#[derive(Clone, Debug, PartialEq)]
pub struct Optimiser {
    settings: AdamWSettings,
    steps: u64,
    m: Vec<f32>,
    v: Vec<f32>,
    simd: Simd,
}

impl Optimiser {
    /// Zero moments for `params` weights.
    pub fn new(settings: AdamWSettings, params: usize) -> Result<Optimiser, TrainError> {
        settings.validate()?;
        Ok(Optimiser {
            settings,
            steps: 0,
            m: vec![0.0; params],
            v: vec![0.0; params],
            simd: Simd::detect(),
        })
    }

    /// An optimiser resumed from its moments (a checkpoint).
    pub fn from_parts(
        settings: AdamWSettings,
        steps: u64,
        m: Vec<f32>,
        v: Vec<f32>,
    ) -> Result<Optimiser, TrainError> {
        settings.validate()?;
        if m.len() != v.len() {
            return Err(TrainError::Size {
                what: "the second moment",
                expected: m.len(),
                found: v.len(),
            });
        }
        Ok(Optimiser {
            settings,
            steps,
            m,
            v,
            simd: Simd::detect(),
        })
    }

    /// Chooses the build of the update loop; refuses one this processor cannot run.
    pub fn set_simd(&mut self, simd: Simd) -> Result<(), TrainError> {
        self.simd = kernel::runnable(simd)?;
        Ok(())
    }

    pub fn settings(&self) -> &AdamWSettings {
        &self.settings
    }

    /// Steps taken.
    pub fn steps(&self) -> u64 {
        self.steps
    }

    /// The first and second moments, in the network's layout order.
    pub fn moments(&self) -> (&[f32], &[f32]) {
        (&self.m, &self.v)
    }

    /// One step at learning rate `lr` from `gradient`, the sum over `batch_size` samples
    /// (so the step follows the mean loss's gradient).
    pub fn step(
        &mut self,
        net: &mut Network,
        gradient: &Gradient,
        batch_size: usize,
        lr: f32,
    ) -> Result<(), TrainError> {
        let n = net.params().len();
        for (what, len) in [
            ("the gradient", gradient.values.len()),
            ("the optimiser's state", self.m.len()),
        ] {
            if len != n {
                return Err(TrainError::Size {
                    what,
                    expected: n,
                    found: len,
                });
            }
        }
        if batch_size == 0 || !lr.is_finite() {
            return Err(TrainError::Settings(format!(
                "a step over {batch_size} samples at learning rate {lr}"
            )));
        }
        self.steps += 1;
        let s = &self.settings;
        let t = self.steps as f64;
        let c = AdamConsts {
            grad_scale: 1.0 / batch_size as f32,
            beta1: s.beta1,
            beta2: s.beta2,
            keep: 1.0 - lr * s.decay,
            step_size: (lr as f64 / (1.0 - (s.beta1 as f64).powf(t))) as f32,
            v_scale: (1.0 / (1.0 - (s.beta2 as f64).powf(t)).sqrt()) as f32,
            eps: s.eps,
            clip: s.clip,
        };
        let simd = self.simd;
        net.params_mut()
            .par_chunks_mut(BLOCK)
            .zip(gradient.values.par_chunks(BLOCK))
            .zip(self.m.par_chunks_mut(BLOCK))
            .zip(self.v.par_chunks_mut(BLOCK))
            .for_each(|(((w, g), m), v)| kernel::adam(simd, c, w, g, m, v));
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::train::{Activation, Architecture};

    fn tiny() -> Network {
        let arch = Architecture {
            inputs: 2,
            hidden: 16,
            buckets: 1,
            max_active: 2,
            activation: Activation::Crelu,
        };
        Network::new(arch, 3).unwrap()
    }

    /// The first bias-corrected Adam step moves every weight with a non-zero gradient by
    /// about `lr` against its sign, whatever the gradient's size.
    #[test]
    fn first_step_moves_by_lr() {
        let mut net = tiny();
        let before = net.params().to_vec();
        let settings = AdamWSettings {
            decay: 0.0,
            ..AdamWSettings::default()
        };
        let mut opt = Optimiser::new(settings, before.len()).unwrap();
        let mut g = Gradient::zeros(net.arch());
        for (i, x) in g.values.iter_mut().enumerate() {
            *x = if i % 2 == 0 { 3.0 } else { -0.001 } * 10.0;
        }
        opt.step(&mut net, &g, 10, 0.01).unwrap();
        for (i, (a, b)) in before.iter().zip(net.params()).enumerate() {
            let expect = if i % 2 == 0 { -0.01 } else { 0.01 };
            assert!((b - a - expect).abs() < 1e-4, "{i}: {a} -> {b}");
        }
        assert_eq!(opt.steps(), 1);
    }

    #[test]
    fn decay_and_clip() {
        let mut net = tiny();
        net.params_mut().fill(1.0);
        net.params_mut()[0] = 5.0;
        let mut opt = Optimiser::new(
            AdamWSettings {
                decay: 0.5,
                clip: 2.0,
                ..AdamWSettings::default()
            },
            net.params().len(),
        )
        .unwrap();
        let g = Gradient::zeros(net.arch());
        opt.step(&mut net, &g, 1, 0.1).unwrap();
        assert_eq!(net.params()[0], 2.0);
        assert!((net.params()[1] - 0.95).abs() < 1e-6);
    }

    #[test]
    fn step_refuses_a_wrong_gradient() {
        let mut net = tiny();
        let mut opt = Optimiser::new(AdamWSettings::default(), net.params().len()).unwrap();
        let g = Gradient {
            values: vec![0.0; 3],
            loss_sum: 0.0,
            samples: 1,
        };
        assert!(matches!(
            opt.step(&mut net, &g, 1, 0.1),
            Err(TrainError::Size { .. })
        ));
        assert!(
            AdamWSettings {
                beta1: 1.0,
                ..AdamWSettings::default()
            }
            .validate()
            .is_err()
        );
    }
}
