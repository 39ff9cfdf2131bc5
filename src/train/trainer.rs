//! A training run: epochs of shuffled mini-batches, AdamW steps, validation loss and
//! checkpoints.
//!
//! Every random draw is a function of the seed and a position in the run, so a run resumed
//! from a checkpoint continues bit for bit: the initial weights come from the seed, and each
//! epoch's sample order from ChaCha8 seeded by `mix(seed, [SHUFFLE_STREAM, epoch])`, drawn
//! afresh when the epoch starts or resumes. The "generator position" a checkpoint keeps is
//! therefore the epoch and the batch within it.
//!
//! A checkpoint is the whole state in a little-endian binary format (floats as their bits, a
//! JSON header for the settings), written by [`Trainer::to_bytes`]; the run driver writes it
//! atomically. The format, version 1:
//!
//! ```text
//! magic        8 bytes  "XQTTRAIN"
//! version      u32      1
//! config_len   u32      then config_len bytes of JSON: the TrainConfig
//! epoch        u32      epochs finished
//! batch        u64      batches of the current epoch done
//! epoch_len    u64      samples in the current epoch's training set (0 before it starts)
//! steps        u64      optimiser steps taken
//! count        u64      parameters (must equal the architecture's)
//! weights      f32 x count, in the network's layout order
//! m            f32 x count, Adam's first moment
//! v            f32 x count, Adam's second moment
//! checksum     u64      FNV-1a of every byte before it
//! ```

use super::gradient::Workspace;
use super::{
    AdamWSettings, Architecture, Gradient, LossSettings, Network, Optimiser, Samples, Schedule,
    Simd, TrainError,
};
use crate::util::{fnv1a, mix};
use rand::SeedableRng;
use rand::seq::SliceRandom;
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};
use std::ops::ControlFlow;

/// Everything that defines a run (what a checkpoint's header holds).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TrainConfig {
    pub arch: Architecture,
    pub loss: LossSettings,
    pub optimiser: AdamWSettings,
    pub schedule: Schedule,
    /// Samples per unit of the gradient's fixed-order sum; part of what makes a run
    /// reproducible (see `gradient`). [`TrainConfig::DEFAULT_CHUNK`] suits batches of
    /// thousands of samples.
    pub chunk_size: usize,
    /// Seeds the initial weights and every epoch's shuffle.
    pub seed: u64,
}

impl TrainConfig {
    /// Enough samples per chunk that summing the chunks' dense feature-transformer buffers
    /// costs little next to computing them.
    pub const DEFAULT_CHUNK: usize = 1024;

    pub fn validate(&self) -> Result<(), TrainError> {
        self.arch.validate()?;
        self.loss.validate()?;
        self.optimiser.validate()?;
        self.schedule.validate()?;
        if self.chunk_size == 0 {
            return Err(TrainError::Settings("chunk size 0".into()));
        }
        Ok(())
    }
}

/// After each batch: where the run is and how the batch went.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct BatchReport {
    pub epoch: u32,
    /// This batch's index in the epoch (from 0).
    pub batch: u64,
    pub batches: u64,
    pub samples: usize,
    /// The batch's mean loss, before the step.
    pub loss: f64,
    /// The learning rate of the step taken.
    pub lr: f32,
}

/// What [`Trainer::train_epoch`] did.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct EpochReport {
    pub epoch: u32,
    /// Batches this call ran (fewer than the epoch's when it resumed or was stopped).
    pub batches: u64,
    /// Mean training loss over this call's batches, each before its step.
    pub loss: f64,
    /// Whether the epoch finished (false when the callback stopped it).
    pub completed: bool,
}

/// A stream tag for the per-epoch shuffles.
const SHUFFLE_STREAM: u64 = 0x5f1e;

/// The trainer: network, optimiser, position in the run and reusable buffers.
pub struct Trainer {
    config: TrainConfig,
    network: Network,
    optimiser: Optimiser,
    epoch: u32,
    batch: u64,
    epoch_len: u64,
    workspace: Workspace,
    gradient: Gradient,
}

impl Trainer {
    /// A fresh run: seeded initial weights, zero moments.
    pub fn new(config: TrainConfig) -> Result<Trainer, TrainError> {
        config.validate()?;
        let network = Network::new(config.arch, config.seed)?;
        Trainer::with_network(config, network)
    }

    /// A fresh run starting from given weights (fine-tuning).
    pub fn with_network(config: TrainConfig, network: Network) -> Result<Trainer, TrainError> {
        config.validate()?;
        if *network.arch() != config.arch {
            return Err(TrainError::Architecture(format!(
                "the network is {:?}, the run trains {:?}",
                network.arch(),
                config.arch
            )));
        }
        let optimiser = Optimiser::new(config.optimiser, network.params().len())?;
        Ok(Trainer {
            workspace: Workspace::new(&config.arch, config.chunk_size)?,
            gradient: Gradient::zeros(&config.arch),
            config,
            network,
            optimiser,
            epoch: 0,
            batch: 0,
            epoch_len: 0,
        })
    }

    pub fn config(&self) -> &TrainConfig {
        &self.config
    }

    pub fn network(&self) -> &Network {
        &self.network
    }

    pub fn optimiser(&self) -> &Optimiser {
        &self.optimiser
    }

    /// Epochs finished.
    pub fn epoch(&self) -> u32 {
        self.epoch
    }

    /// Batches of the current epoch done.
    pub fn batch(&self) -> u64 {
        self.batch
    }

    /// Whether the schedule's epochs are all done.
    pub fn finished(&self) -> bool {
        self.epoch >= self.config.schedule.epochs
    }

    /// Chooses the build of the inner loops (to compare them).
    pub fn set_simd(&mut self, simd: Simd) -> Result<(), TrainError> {
        self.workspace.set_simd(simd)?;
        self.optimiser.set_simd(simd)
    }

    /// The order in which epoch `epoch` visits `len` samples.
    pub fn epoch_order(&self, epoch: u32, len: usize) -> Result<Vec<u32>, TrainError> {
        let n = u32::try_from(len).map_err(|_| {
            TrainError::Settings(format!("{len} samples (at most 2^32 - 1 per set)"))
        })?;
        let mut order: Vec<u32> = (0..n).collect();
        let mut rng =
            ChaCha8Rng::seed_from_u64(mix(self.config.seed, &[SHUFFLE_STREAM, epoch as u64]));
        order.shuffle(&mut rng);
        Ok(order)
    }

    /// Runs the rest of the current epoch over `samples` (all of it, unless the run resumed
    /// in the middle), one AdamW step per batch, on the current rayon pool. `on_batch` sees
    /// each batch after its step; returning `Break` stops after that batch, leaving the run
    /// ready to checkpoint and resume.
    pub fn train_epoch<S: Samples + ?Sized>(
        &mut self,
        samples: &S,
        on_batch: impl FnMut(&BatchReport) -> ControlFlow<()>,
    ) -> Result<EpochReport, TrainError> {
        if samples.is_empty() {
            return Err(TrainError::NoSamples);
        }
        let n = samples.len() as u64;
        if self.batch > 0 && self.epoch_len != n {
            return Err(TrainError::DataChanged {
                expected: self.epoch_len,
                found: n,
            });
        }
        self.epoch_len = n;
        let order = self.epoch_order(self.epoch, samples.len())?;
        // The gradient buffer is lent out while the trainer steps.
        let mut gradient = std::mem::take(&mut self.gradient);
        let result = self.run_batches(samples, &order, &mut gradient, on_batch);
        self.gradient = gradient;
        result
    }

    fn run_batches<S: Samples + ?Sized>(
        &mut self,
        samples: &S,
        order: &[u32],
        gradient: &mut Gradient,
        mut on_batch: impl FnMut(&BatchReport) -> ControlFlow<()>,
    ) -> Result<EpochReport, TrainError> {
        let batches = self.config.schedule.batches_per_epoch(order.len() as u64);
        let bs = self.config.schedule.batch_size;
        let epoch = self.epoch;
        let (mut loss_sum, mut count, mut ran) = (0.0f64, 0u64, 0u64);
        let mut completed = false;
        while self.batch < batches {
            let start = (self.batch * bs as u64) as usize;
            let indices = &order[start..(start + bs).min(order.len())];
            self.workspace.gradient(
                &self.network,
                &self.config.loss,
                samples,
                indices,
                gradient,
            )?;
            let lr = self.step(gradient)?;
            loss_sum += gradient.loss_sum;
            count += gradient.samples;
            ran += 1;
            let flow = on_batch(&BatchReport {
                epoch,
                batch: self.batch - 1,
                batches,
                samples: indices.len(),
                loss: gradient.mean_loss(),
                lr,
            });
            if self.batch == batches {
                self.next_epoch();
                completed = true;
                break;
            }
            if flow.is_break() {
                break;
            }
        }
        Ok(EpochReport {
            epoch,
            batches: ran,
            loss: if count == 0 {
                0.0
            } else {
                loss_sum / count as f64
            },
            completed,
        })
    }

    /// One step at the schedule's rate for the current batch; moves on one batch.
    fn step(&mut self, gradient: &Gradient) -> Result<f32, TrainError> {
        let batches = self.config.schedule.batches_per_epoch(self.epoch_len);
        let lr = self.config.schedule.lr.lr(self.epoch, self.batch, batches);
        let batch_size = usize::try_from(gradient.samples).unwrap_or(usize::MAX);
        self.optimiser
            .step(&mut self.network, gradient, batch_size, lr)?;
        self.batch += 1;
        Ok(lr)
    }

    fn next_epoch(&mut self) {
        self.epoch += 1;
        self.batch = 0;
        self.epoch_len = 0;
    }

    /// One optimiser step from a gradient summed elsewhere (a data-parallel driver's sum over
    /// its ranks' shards of one batch), at the schedule's rate for the current batch of an
    /// epoch over `epoch_len` samples in all; moves the run on by one batch, to the next
    /// epoch after the last. Returns the learning rate used.
    pub fn apply_gradient(
        &mut self,
        gradient: &Gradient,
        epoch_len: u64,
    ) -> Result<f32, TrainError> {
        if epoch_len == 0 {
            return Err(TrainError::NoSamples);
        }
        if self.batch > 0 && self.epoch_len != epoch_len {
            return Err(TrainError::DataChanged {
                expected: self.epoch_len,
                found: epoch_len,
            });
        }
        self.epoch_len = epoch_len;
        let lr = self.step(gradient)?;
        if self.batch >= self.config.schedule.batches_per_epoch(epoch_len) {
            self.next_epoch();
        }
        Ok(lr)
    }

    /// One optimiser step of a driver that plans its own batches (a data-parallel one whose
    /// batches are groups of blocks of samples, so their number is not `epoch_len / batch_size`):
    /// at the schedule's rate for the current batch of an epoch of `batches` batches; moves on
    /// one batch, to the next epoch after the last. Returns the learning rate used.
    pub fn apply_planned(&mut self, gradient: &Gradient, batches: u64) -> Result<f32, TrainError> {
        if batches == 0 {
            return Err(TrainError::NoSamples);
        }
        let lr = self.config.schedule.lr.lr(self.epoch, self.batch, batches);
        let batch_size = usize::try_from(gradient.samples).unwrap_or(usize::MAX);
        self.optimiser
            .step(&mut self.network, gradient, batch_size, lr)?;
        self.batch += 1;
        if self.batch >= batches {
            self.next_epoch();
        }
        Ok(lr)
    }

    /// The mean loss over `samples` (a held-out set), on the current rayon pool.
    pub fn validation_loss<S: Samples + ?Sized>(&mut self, samples: &S) -> Result<f64, TrainError> {
        let sum = self
            .workspace
            .loss(&self.network, &self.config.loss, samples, None)?;
        Ok(if samples.is_empty() {
            0.0
        } else {
            sum / samples.len() as f64
        })
    }

    /// The whole state as bytes (the format in the module's documentation).
    pub fn to_bytes(&self) -> Vec<u8> {
        let config = serde_json::to_vec(&self.config).expect("a TrainConfig serialises");
        let params = self.network.params();
        let (m, v) = self.optimiser.moments();
        let mut out = Vec::with_capacity(64 + config.len() + 12 * params.len());
        out.extend_from_slice(MAGIC);
        out.extend_from_slice(&VERSION.to_le_bytes());
        out.extend_from_slice(&(config.len() as u32).to_le_bytes());
        out.extend_from_slice(&config);
        out.extend_from_slice(&self.epoch.to_le_bytes());
        out.extend_from_slice(&self.batch.to_le_bytes());
        out.extend_from_slice(&self.epoch_len.to_le_bytes());
        out.extend_from_slice(&self.optimiser.steps().to_le_bytes());
        out.extend_from_slice(&(params.len() as u64).to_le_bytes());
        for part in [params, m, v] {
            for x in part {
                out.extend_from_slice(&x.to_le_bytes());
            }
        }
        let sum = fnv1a(out.iter().copied());
        out.extend_from_slice(&sum.to_le_bytes());
        out
    }

    /// A trainer from [`Trainer::to_bytes`]'s bytes; says what is wrong with bytes that are not.
    pub fn from_bytes(bytes: &[u8]) -> Result<Trainer, CheckpointError> {
        let mut r = Reader { bytes, at: 0 };
        if r.take(MAGIC.len())? != MAGIC {
            return Err(CheckpointError::Magic);
        }
        let version = r.u32()?;
        if version != VERSION {
            return Err(CheckpointError::Version(version));
        }
        if bytes.len() < 8
            || fnv1a(bytes[..bytes.len() - 8].iter().copied()).to_le_bytes()
                != bytes[bytes.len() - 8..]
        {
            return Err(CheckpointError::Checksum);
        }
        let config_len = r.u32()? as usize;
        let config: TrainConfig = serde_json::from_slice(r.take(config_len)?)
            .map_err(|e| CheckpointError::Config(e.to_string()))?;
        config
            .validate()
            .map_err(|e| CheckpointError::Config(e.to_string()))?;
        let epoch = r.u32()?;
        let batch = r.u64()?;
        let epoch_len = r.u64()?;
        let steps = r.u64()?;
        let count = r.u64()?;
        let expected = config.arch.parameters();
        if count != expected as u64 {
            return Err(CheckpointError::Size {
                expected: expected as u64,
                found: count,
            });
        }
        let rest = bytes.len() - r.at;
        if rest != 12 * expected + 8 {
            return Err(CheckpointError::Length {
                expected: (r.at + 12 * expected + 8) as u64,
                found: bytes.len() as u64,
            });
        }
        let params = r.floats(expected)?;
        let m = r.floats(expected)?;
        let v = r.floats(expected)?;
        let bad = |e: TrainError| CheckpointError::Config(e.to_string());
        let network = Network::from_params(config.arch, params).map_err(bad)?;
        let optimiser = Optimiser::from_parts(config.optimiser, steps, m, v).map_err(bad)?;
        Ok(Trainer {
            workspace: Workspace::new(&config.arch, config.chunk_size).map_err(bad)?,
            gradient: Gradient::zeros(&config.arch),
            config,
            network,
            optimiser,
            epoch,
            batch,
            epoch_len,
        })
    }
}

const MAGIC: &[u8; 8] = b"XQTTRAIN";
const VERSION: u32 = 1;

/// Why checkpoint bytes could not be read.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum CheckpointError {
    #[error("not a trainer checkpoint (bad magic bytes)")]
    Magic,
    #[error("checkpoint format version {0}; this build reads version 1")]
    Version(u32),
    #[error("the checkpoint is truncated (needed {needed} bytes at offset {at})")]
    Truncated { at: usize, needed: usize },
    #[error("the checkpoint's checksum does not match its contents")]
    Checksum,
    #[error("the checkpoint's settings: {0}")]
    Config(String),
    #[error("the checkpoint holds {found} parameters, its architecture {expected}")]
    Size { expected: u64, found: u64 },
    #[error("the checkpoint is {found} bytes long, its header says {expected}")]
    Length { expected: u64, found: u64 },
}

/// A cursor that names what is missing instead of panicking.
struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8], CheckpointError> {
        let s = self
            .at
            .checked_add(n)
            .and_then(|end| self.bytes.get(self.at..end))
            .ok_or(CheckpointError::Truncated {
                at: self.at,
                needed: n,
            })?;
        self.at += n;
        Ok(s)
    }

    fn u32(&mut self) -> Result<u32, CheckpointError> {
        let b = self.take(4)?;
        Ok(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }

    fn u64(&mut self) -> Result<u64, CheckpointError> {
        let b = self.take(8)?;
        let mut w = [0u8; 8];
        w.copy_from_slice(b);
        Ok(u64::from_le_bytes(w))
    }

    fn floats(&mut self, n: usize) -> Result<Vec<f32>, CheckpointError> {
        Ok(self
            .take(4 * n)?
            .chunks_exact(4)
            .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
            .collect())
    }
}
