//! xqtune: a Xiangqi and Jieqi engine built around a toolkit that tunes its evaluation.
//!
//! `core` holds the rules and depends on nothing above it.

pub mod cli;
pub mod core;
