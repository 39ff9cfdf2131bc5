//! Which build of an inner loop runs. The crate is built for x86-64-v2 (`.cargo/config.toml`);
//! the NNUE inference (`eval::nnue::simd`) and the network trainer (`train::kernel`) each keep a
//! second copy of their loops compiled with AVX2 (`#[target_feature]`), called only after
//! [`Simd::available`] has said yes: the run-time dispatch of the Rust reference's `std::arch`
//! docs. One type and one check serve both, so the engine and the trainer agree on what a
//! processor runs.

use serde::{Deserialize, Serialize};

/// Which build of the inner loops runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Simd {
    /// The crate's own target (x86-64-v2 on x86-64; whatever the target is elsewhere): portable
    /// code, which the compiler may still vectorise.
    Plain,
    /// AVX2 and FMA (x86-64-v3's vector extensions), on x86-64 processors that have both. The
    /// trainer's float loops are compiled with both; the integer inference uses only AVX2.
    Avx2,
}

impl Simd {
    /// The fastest build this processor runs.
    pub fn detect() -> Simd {
        if Simd::Avx2.available() {
            Simd::Avx2
        } else {
            Simd::Plain
        }
    }

    /// Whether this processor runs the build.
    #[inline(always)]
    pub fn available(self) -> bool {
        match self {
            Simd::Plain => true,
            #[cfg(target_arch = "x86_64")]
            Simd::Avx2 => {
                std::arch::is_x86_feature_detected!("avx2")
                    && std::arch::is_x86_feature_detected!("fma")
            }
            #[cfg(not(target_arch = "x86_64"))]
            Simd::Avx2 => false,
        }
    }
}
