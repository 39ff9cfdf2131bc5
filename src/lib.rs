#![allow(clippy::needless_range_loop)]
//! xqtune: a Xiangqi and Jieqi engine built around a toolkit that tunes its evaluation.
//!
//! `core` holds the rules and depends on nothing above it; `eval` scores positions from the
//! parameters in `params/`; `search` finds moves; `play` runs matches; `tune` improves params.
//! `tunable` describes a set of tunable numbers and reads and writes their files, for `eval`,
//! `search` and the tuners alike. `train` fits NNUE-style networks to samples it knows only as
//! lists of active inputs.

pub mod bench;
pub mod chart;
pub mod cli;
pub mod core;
pub mod eval;
pub mod exec;
pub mod import;
pub mod play;
pub mod progress;
pub mod search;
pub mod train;
pub mod tunable;
pub mod tune;
pub mod uci;
pub mod util;
