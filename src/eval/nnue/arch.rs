//! The shape of a network: everything in a file's header but the description. Sizes are data,
//! not constants, so the hidden width, the output buckets and the quantisation can change by
//! measurement without a new build.
//!
//! The network is bullet's "simple" one with output buckets (bullet `examples/simple.rs` and
//! `examples/progression/2_output_buckets.rs`): a feature transformer from the inputs to
//! `hidden` neurons, shared by both perspectives; an activation; and one linear output per
//! bucket over the side to move's activations followed by the other side's.
//!
//! Quantisation follows bullet's convention: the feature transformer's weights and biases are
//! `round(w * QA)` as i16, the output weights `round(w * QB)` as i16, and the output bias
//! `round(b * QA * QB)` as i32, so that `sum(crelu(acc) * w) + b` is at scale `QA * QB` and
//! `sum(screlu(acc) * w)` at scale `QA * QA * QB`, where the float network's output times
//! `SCALE` is centipawns.

use super::error::NnueError;
use super::features::FeatureSetId;

/// bullet's usual quantisation of the feature transformer (`examples/simple.rs`).
pub const DEFAULT_QA: i32 = 255;
/// bullet's usual quantisation of the output layer.
pub const DEFAULT_QB: i32 = 64;
/// Network output to centipawns (bullet's `eval_scale`).
pub const DEFAULT_SCALE: i32 = 400;

/// The hidden width must be a multiple of this: the accumulators are stored and processed in
/// 64-byte lines of 32 i16 lanes (two AVX2 registers, one cache line).
pub const HIDDEN_STEP: usize = 32;
pub const MAX_HIDDEN: usize = 4096;
/// Output buckets count pieces, of which there are at most 32.
pub const MAX_BUCKETS: usize = 32;
/// QA and QB are at most `i16::MAX`: activations and weights are i16 lanes.
pub const MAX_QUANT: i32 = i16::MAX as i32;
pub const MAX_SCALE: i32 = 65_535;
/// The description is a line or a paragraph (run, data, epochs), not a payload.
pub const MAX_DESCRIPTION: usize = 65_536;

/// The activation between the accumulators and the output layer.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u32)]
pub enum Activation {
    /// Clipped ReLU: `clamp(x, 0, 1)`, quantised `clamp(x, 0, QA)`.
    CReLU = 0,
    /// Squared clipped ReLU: `clamp(x, 0, 1)^2`, quantised `clamp(x, 0, QA)^2` at scale `QA^2`
    /// (bullet's `screlu`, the activation of most recent single-layer networks).
    SCReLU = 1,
}

impl Activation {
    pub const ALL: [Activation; 2] = [Activation::CReLU, Activation::SCReLU];

    pub const fn to_u32(self) -> u32 {
        self as u32
    }

    pub const fn from_u32(v: u32) -> Option<Activation> {
        match v {
            0 => Some(Activation::CReLU),
            1 => Some(Activation::SCReLU),
            _ => None,
        }
    }

    /// The float activation, as the trainer applies it.
    #[inline]
    pub fn apply(self, x: f32) -> f32 {
        let c = x.clamp(0.0, 1.0);
        match self {
            Activation::CReLU => c,
            Activation::SCReLU => c * c,
        }
    }
}

/// The output bucket of a position with `piece_count` pieces on the board (both sides, kings and
/// Jieqi dark pieces included) among `buckets` buckets: bullet's `MaterialCount<N>`,
/// `(pieces - 2) / ceil(32 / N)`, capped at the last bucket. The trainer buckets its data with
/// this same function.
#[inline(always)]
pub const fn output_bucket(piece_count: u32, buckets: usize) -> usize {
    if buckets <= 1 {
        return 0;
    }
    let divisor = 32usize.div_ceil(buckets);
    let b = (piece_count.saturating_sub(2) as usize) / divisor;
    if b < buckets { b } else { buckets - 1 }
}

/// The header fields of a network: its feature set, sizes and quantisation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Architecture {
    pub feature_set: FeatureSetId,
    /// Neurons of the feature transformer (L1), per perspective.
    pub hidden: usize,
    /// Output buckets ([`output_bucket`]).
    pub buckets: usize,
    pub activation: Activation,
    pub qa: i32,
    pub qb: i32,
    /// Centipawns per unit of network output.
    pub scale: i32,
}

impl Architecture {
    /// An architecture with the default quantisation and scale.
    pub const fn new(
        feature_set: FeatureSetId,
        hidden: usize,
        buckets: usize,
        activation: Activation,
    ) -> Architecture {
        Architecture {
            feature_set,
            hidden,
            buckets,
            activation,
            qa: DEFAULT_QA,
            qb: DEFAULT_QB,
            scale: DEFAULT_SCALE,
        }
    }

    /// Inputs of the feature set.
    pub fn inputs(&self) -> usize {
        self.feature_set.inputs()
    }

    /// Checks every size against its limits.
    pub fn validate(&self) -> Result<(), NnueError> {
        let absurd = |field, value: i64, allowed| {
            Err(NnueError::AbsurdSize {
                field,
                value,
                allowed,
            })
        };
        if self.hidden == 0 || self.hidden > MAX_HIDDEN || !self.hidden.is_multiple_of(HIDDEN_STEP)
        {
            return absurd(
                "hidden size",
                self.hidden as i64,
                "a multiple of 32 in 32..=4096",
            );
        }
        if self.buckets == 0 || self.buckets > MAX_BUCKETS {
            return absurd("output bucket count", self.buckets as i64, "1..=32");
        }
        if !(1..=MAX_QUANT).contains(&self.qa) {
            return absurd("QA", self.qa as i64, "1..=32767");
        }
        if !(1..=MAX_QUANT).contains(&self.qb) {
            return absurd("QB", self.qb as i64, "1..=32767");
        }
        if !(1..=MAX_SCALE).contains(&self.scale) {
            return absurd("scale", self.scale as i64, "1..=65535");
        }
        Ok(())
    }

    /// The largest magnitude a quantised output weight may have. With SCReLU the inference
    /// multiplies `clamp(x, 0, QA) * w` in i16 lanes before the second factor (the "lizard"
    /// trick of bullet-trained engines), which is exact only while `|w| * QA` fits an i16; this
    /// is bullet's reason for clipping weights to ±1.98 at QA 255, QB 64.
    pub const fn out_weight_limit(&self) -> i32 {
        match self.activation {
            Activation::CReLU => MAX_QUANT,
            Activation::SCReLU => MAX_QUANT / self.qa,
        }
    }

    /// Number of feature-transformer weights (`inputs * hidden`).
    pub fn ft_weight_count(&self) -> usize {
        self.inputs() * self.hidden
    }

    /// Number of output weights (`buckets * 2 * hidden`).
    pub fn out_weight_count(&self) -> usize {
        self.buckets * 2 * self.hidden
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn output_buckets_follow_material_count() {
        // 8 buckets: 4 pieces per bucket, 2 kings alone in bucket 0, all 32 in bucket 7.
        let got: Vec<usize> = (2..=32).map(|n| output_bucket(n, 8)).collect();
        let want: Vec<usize> = (2..=32).map(|n| ((n - 2) / 4) as usize).collect();
        assert_eq!(got, want);
        assert_eq!(output_bucket(32, 8), 7);
        assert_eq!(output_bucket(32, 1), 0);
        assert_eq!(output_bucket(0, 4), 0);
        // 5 buckets: divisor 7; 32 pieces would be bucket 4.
        assert_eq!(output_bucket(32, 5), 4);
        // 32 buckets: one per count, the 32-piece board capped at the last.
        assert_eq!(output_bucket(32, 32), 30);
        assert_eq!(output_bucket(40, 3), 2);
    }

    #[test]
    fn validation_names_the_field() {
        let ok = Architecture::new(FeatureSetId::XiangqiPlanes, 256, 8, Activation::SCReLU);
        assert!(ok.validate().is_ok());
        assert_eq!(ok.out_weight_limit(), 128);
        let bad = Architecture { hidden: 100, ..ok };
        assert!(matches!(
            bad.validate(),
            Err(NnueError::AbsurdSize {
                field: "hidden size",
                value: 100,
                ..
            })
        ));
        let bad = Architecture { buckets: 0, ..ok };
        assert!(matches!(
            bad.validate(),
            Err(NnueError::AbsurdSize {
                field: "output bucket count",
                ..
            })
        ));
        let bad = Architecture { qa: 0, ..ok };
        assert!(matches!(
            bad.validate(),
            Err(NnueError::AbsurdSize { field: "QA", .. })
        ));
    }
}
