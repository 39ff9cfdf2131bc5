//! What can be wrong with a network: a file that does not parse, a header that promises an
//! impossible or unsupported shape, weights that do not fit the integer inference.
//!
//! Every reading path returns one of these instead of panicking, whatever the bytes (the format
//! tests feed truncations and random corruptions), so a failed load can keep the previous
//! network and say why (Stockfish keeps its current network when a new one fails to load).

use std::path::PathBuf;
use thiserror::Error;

#[derive(Debug, Error)]
pub enum NnueError {
    // The message carries the I/O error, so it is not also a `source` (a chain such as
    // anyhow's would print it twice).
    #[error("cannot read network file {path}: {error}")]
    Io {
        path: PathBuf,
        error: std::io::Error,
    },
    #[error("no {variant} network is embedded in this build (the name 'embedded' asks for it)")]
    NoneEmbedded { variant: crate::core::Variant },
    #[error("a {features} network scores {} positions, not {wanted}", features.variant())]
    WrongVariant {
        features: super::FeatureSetId,
        wanted: crate::core::Variant,
    },
    #[error("not an xqtune network (bad magic)")]
    BadMagic,
    #[error("unsupported network format version {found} (this build reads version {supported})")]
    UnsupportedVersion { found: u32, supported: u32 },
    #[error("unknown feature set id {0}")]
    UnknownFeatureSet(u32),
    #[error("unknown activation id {0}")]
    UnknownActivation(u32),
    #[error("size mismatch: {field} is {found}, expected {expected}")]
    SizeMismatch {
        field: &'static str,
        expected: usize,
        found: usize,
    },
    #[error("absurd {field} {value} (allowed: {allowed})")]
    AbsurdSize {
        field: &'static str,
        value: i64,
        allowed: &'static str,
    },
    #[error("truncated network file: {found} bytes, the header promises {needed}")]
    Truncated { needed: usize, found: usize },
    #[error("network file has {extra} bytes after its hash")]
    TrailingBytes { extra: usize },
    #[error("network hash mismatch: stored {stored:#018x}, computed {computed:#018x}")]
    HashMismatch { stored: u64, computed: u64 },
    #[error("network description is not UTF-8")]
    DescriptionNotUtf8,
    #[error("{what} {index} is {value}, outside the range {min}..={max} the inference needs")]
    WeightOutOfRange {
        what: &'static str,
        index: usize,
        value: f64,
        min: f64,
        max: f64,
    },
}
