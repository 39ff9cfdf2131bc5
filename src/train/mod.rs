//! A CPU trainer for NNUE-style networks that knows nothing of chess.
//!
//! The network is the one the engine's inference runs: sparse binary inputs seen from two
//! perspectives (side to move, other side), one feature transformer shared by both, a clipped
//! activation (CReLU or SCReLU), and an output layer with buckets chosen per sample
//! ([`network`]). The trainer defines its contracts, as bullet's trainer does with its
//! `DataLoader` and `TrainingSchedule`: samples are lists of active input indices with a bucket
//! and a target in `[0, 1]` ([`data`]); the schedule is plain functions of the epoch and batch
//! ([`schedule`]). The glue in `tune` turns positions into samples and the trained floats into
//! the quantised inference network; nothing here imports the rules, the evaluation or the search
//! (a test in `tests.rs` reads this folder's sources and checks it).
//!
//! Layout: [`network`] (architecture, weights, seeded initialisation, the float forward
//! pass), [`data`] (compact in-memory samples), [`gradient`](mod@gradient) (loss and gradient
//! over a list of samples, a pure function of weights and samples), `kernel` (the per-sample
//! inner loops, with an AVX2 build chosen at run time), `aligned` (64-byte aligned storage for
//! them), [`optimiser`] (AdamW with weight clipping), [`schedule`] (learning rates),
//! [`trainer`] (epochs, shuffling, validation, checkpoints).
//!
//! Determinism: a batch's gradient is the sum of fixed-size chunks of samples, each computed
//! sequentially, summed in chunk order; the thread count only decides who computes which
//! chunk, so results are the same bits on 1 or 16 threads. The promise is for one binary on
//! one machine: the AVX2 and plain builds of the inner loops use no fused multiply-add and
//! keep every sum in the order the source gives, so they agree too (a test checks it), but the
//! sigmoid's `exp` comes from the platform's maths library.

mod aligned;
pub mod data;
pub mod exact;
pub mod gradient;
mod kernel;
pub mod network;
pub mod optimiser;
pub mod schedule;
pub mod trainer;

pub use data::{Sample, SampleError, SampleSet, SampleShape, Samples};
pub use exact::ExactSum;
pub use gradient::{Gradient, LossSettings, Workspace, gradient, loss};
pub use kernel::Simd;
pub use network::{Activation, Architecture, Network};
pub use optimiser::{AdamWSettings, Optimiser};
pub use schedule::{LrSchedule, Schedule};
pub use trainer::{BatchReport, CheckpointError, EpochReport, TrainConfig, Trainer};

/// Why a network, a set of samples or a training run cannot be used as asked.
#[derive(Debug, thiserror::Error)]
pub enum TrainError {
    #[error("architecture: {0}")]
    Architecture(String),
    #[error("settings: {0}")]
    Settings(String),
    #[error(
        "the samples do not fit the network: samples have {samples:?}, the network takes {network:?}"
    )]
    Shape {
        samples: SampleShape,
        network: SampleShape,
    },
    #[error("{what} has {found} values, the network {expected}")]
    Size {
        what: &'static str,
        expected: usize,
        found: usize,
    },
    #[error(transparent)]
    Sample(#[from] SampleError),
    #[error(
        "the training set changed in the middle of an epoch: {found} samples, the epoch began with {expected}"
    )]
    DataChanged { expected: u64, found: u64 },
    #[error("the training set is empty")]
    NoSamples,
    #[error(transparent)]
    Checkpoint(#[from] CheckpointError),
}

#[cfg(test)]
mod tests;
