//! NNUE: an efficiently updatable neural network evaluation (Nasu 2018), as Stockfish and
//! Pikafish run it and bullet trains it: sparse piece-square inputs per perspective, one wide
//! feature-transformer layer kept up to date move by move, an activation, and a small output
//! layer chosen by the material on the board.
//!
//! Modules, each importing only those listed before it:
//!
//! - [`error`]: [`NnueError`], what can be wrong with a network or its file.
//! - [`delta`](mod@delta): [`Placement`], [`FeatureDelta`] and [`delta_of`], what a move changes.
//! - [`features`]: the [`FeatureSet`] trait, the sets ([`XiangqiPlanes`],
//!   [`XiangqiKingBuckets`], [`JieqiPlanes`]) and their file ids.
//! - [`arch`]: [`Architecture`] (the header's sizes and quantisation), [`Activation`],
//!   [`output_bucket`].
//! - [`simd`]: the integer kernels, plain and AVX2, chosen at run time.
//! - [`format`](mod@format): the network file, byte by byte.
//! - [`network`]: the quantised [`Network`]: loading, saving, the reference forward pass.
//! - [`float`]: the trainer's [`FloatNetwork`] and its quantisation.
//! - [`accumulator`]: the [`Accumulator`] of one position, rebuilt or updated.
//! - [`stack`]: the search's lazy [`AccumulatorStack`].

pub mod accumulator;
pub mod arch;
pub mod delta;
pub mod error;
pub mod features;
pub mod float;
pub mod format;
pub mod network;
pub mod simd;
pub mod stack;

pub use accumulator::Accumulator;
pub use arch::{Activation, Architecture, DEFAULT_QA, DEFAULT_QB, DEFAULT_SCALE, output_bucket};
pub use delta::{FeatureDelta, Placement, delta_of};
pub use error::NnueError;
pub use features::{FeatureSet, FeatureSetId, JieqiPlanes, XiangqiKingBuckets, XiangqiPlanes};
pub use float::FloatNetwork;
pub use network::{EMBEDDED_NAME, Network, Networks};
pub use simd::Simd;
pub use stack::AccumulatorStack;

#[cfg(test)]
mod tests;
