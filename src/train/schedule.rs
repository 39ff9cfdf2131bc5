//! How long to train and at which learning rate: plain functions of the epoch and the batch,
//! as bullet's `TrainingSchedule` and its `lr` schedulers (`ConstantLR`, `StepLR`,
//! `CosineDecayLR`) are, so a resumed run computes the same rate as an uninterrupted one.
//! bullet counts "superbatches" of a fixed number of batches; here the unit is the epoch, one
//! pass over the training set.

use super::TrainError;
use serde::{Deserialize, Serialize};
use std::f64::consts::PI;

/// The learning rate as a function of training progress.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum LrSchedule {
    /// `lr` throughout.
    Constant { lr: f32 },
    /// `lr · gamma^⌊epoch / every⌋`: drops by `gamma` every `every` epochs (bullet's `StepLR`).
    Step { lr: f32, gamma: f32, every: u32 },
    /// From `lr` down to `final_lr` along half a cosine over `epochs` epochs, smoothly from
    /// batch to batch, then `final_lr` (bullet's `CosineDecayLR`; Loshchilov & Hutter 2017,
    /// "SGDR", without restarts).
    Cosine { lr: f32, final_lr: f32, epochs: u32 },
}

impl LrSchedule {
    /// The rate for batch `batch` (from 0) of epoch `epoch` (from 0), an epoch having
    /// `batches_per_epoch` batches.
    pub fn lr(&self, epoch: u32, batch: u64, batches_per_epoch: u64) -> f32 {
        match *self {
            LrSchedule::Constant { lr } => lr,
            LrSchedule::Step { lr, gamma, every } => {
                lr * gamma.powi((epoch / every.max(1)).min(i32::MAX as u32) as i32)
            }
            LrSchedule::Cosine {
                lr,
                final_lr,
                epochs,
            } => {
                let done = epoch as f64 + batch as f64 / batches_per_epoch.max(1) as f64;
                let x = (done / epochs.max(1) as f64).min(1.0);
                let w = 0.5 * (1.0 + (PI * x).cos());
                (final_lr as f64 + (lr - final_lr) as f64 * w) as f32
            }
        }
    }

    pub fn validate(&self) -> Result<(), TrainError> {
        let rate = |x: f32| x.is_finite() && x >= 0.0;
        let ok = match *self {
            LrSchedule::Constant { lr } => rate(lr),
            LrSchedule::Step { lr, gamma, every } => {
                rate(lr) && gamma.is_finite() && gamma > 0.0 && every > 0
            }
            LrSchedule::Cosine {
                lr,
                final_lr,
                epochs,
            } => rate(lr) && rate(final_lr) && epochs > 0,
        };
        if ok {
            Ok(())
        } else {
            Err(TrainError::Settings(format!("learning rate {self:?}")))
        }
    }
}

/// The length of a run and its batches.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Schedule {
    /// Passes over the training set.
    pub epochs: u32,
    /// Samples per optimiser step (the last batch of an epoch may be smaller).
    pub batch_size: usize,
    pub lr: LrSchedule,
}

impl Schedule {
    pub fn validate(&self) -> Result<(), TrainError> {
        if self.epochs == 0 || self.batch_size == 0 {
            return Err(TrainError::Settings(format!(
                "{} epochs of batches of {}",
                self.epochs, self.batch_size
            )));
        }
        self.lr.validate()
    }

    /// Batches in an epoch over `samples` samples.
    pub fn batches_per_epoch(&self, samples: u64) -> u64 {
        samples.div_ceil(self.batch_size as u64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn constant() {
        let s = LrSchedule::Constant { lr: 0.001 };
        assert_eq!(s.lr(0, 0, 10), 0.001);
        assert_eq!(s.lr(99, 7, 10), 0.001);
    }

    #[test]
    fn step_drops_every_k_epochs() {
        let s = LrSchedule::Step {
            lr: 1.0,
            gamma: 0.5,
            every: 3,
        };
        let rates: Vec<f32> = (0..7).map(|e| s.lr(e, 5, 10)).collect();
        assert_eq!(rates, [1.0, 1.0, 1.0, 0.5, 0.5, 0.5, 0.25]);
    }

    #[test]
    fn cosine_runs_from_lr_to_final() {
        let s = LrSchedule::Cosine {
            lr: 1.0,
            final_lr: 0.1,
            epochs: 4,
        };
        assert_eq!(s.lr(0, 0, 100), 1.0);
        assert!((s.lr(2, 0, 100) - 0.55).abs() < 1e-6, "half way");
        let expect = 0.1 + 0.9 * 0.5 * (1.0 + (PI * 0.375).cos());
        assert!((s.lr(1, 50, 100) as f64 - expect).abs() < 1e-6);
        assert!((s.lr(4, 0, 100) - 0.1).abs() < 1e-7);
        assert!((s.lr(9, 3, 100) - 0.1).abs() < 1e-7, "stays at the end");
        let r: Vec<f32> = (0..400)
            .map(|b| s.lr(b / 100, b as u64 % 100, 100))
            .collect();
        assert!(r.windows(2).all(|w| w[1] <= w[0]), "never rises");
    }

    #[test]
    fn validate_refuses_nonsense() {
        assert!(LrSchedule::Constant { lr: f32::NAN }.validate().is_err());
        assert!(
            LrSchedule::Step {
                lr: 1.0,
                gamma: 0.5,
                every: 0
            }
            .validate()
            .is_err()
        );
        let s = Schedule {
            epochs: 1,
            batch_size: 0,
            lr: LrSchedule::Constant { lr: 0.1 },
        };
        assert!(s.validate().is_err());
        assert_eq!(Schedule { batch_size: 4, ..s }.batches_per_epoch(9), 3);
    }
}
