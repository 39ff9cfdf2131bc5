//! The network's shape and its float weights, kept in one flat vector.
//!
//! ```text
//! stm inputs   --ft_weights, ft_bias--> acc_stm   --act--\
//!                                                         concat (2H) --out_weights[b], out_bias[b]--> output
//! other inputs --ft_weights, ft_bias--> acc_other --act--/
//! ```
//!
//! One feature transformer serves both perspectives (Stockfish's "perspective" trick, described
//! in the nnue-pytorch documentation, `docs/nnue.md`): the side to move's accumulator comes
//! first in the concatenation, so the output layer learns "my pieces" and "their pieces" apart.
//! The output layer has `buckets` rows, one chosen per sample (bullet's output buckets).
//! The raw output times the inference's `SCALE` is centipawns from the side to move's view.
//!
//! The weights live in one `Vec<f32>` in the order `ft_weights, ft_bias, out_weights,
//! out_bias` ([`Layout`]), so the optimiser, the gradient and the checkpoint treat them as one
//! vector, and a data-parallel driver sends one slice.

use super::TrainError;
use super::aligned::AlignedVec;
use crate::util::mix;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};
use std::ops::Range;

/// The activation applied to each perspective's accumulator. Both clip at 1.0, the float
/// value the quantiser maps to `QA`, so the inference's integer clamp matches the trainer's.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Activation {
    /// Clipped ReLU, `clamp(x, 0, 1)` (Stockfish's original NNUE).
    #[default]
    Crelu,
    /// Squared clipped ReLU, `clamp(x, 0, 1)²` (bullet's `screlu`; most current engines).
    Screlu,
}

impl Activation {
    /// The activation of `x`, in f64, for reference computations.
    pub fn apply_f64(self, x: f64) -> f64 {
        let c = x.clamp(0.0, 1.0);
        match self {
            Activation::Crelu => c,
            Activation::Screlu => c * c,
        }
    }
}

/// The shape of a network: what the inference must be built with to run the trained weights.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Architecture {
    /// Number of sparse binary inputs (`N`), at most 65536 (indices are `u16`).
    pub inputs: usize,
    /// Width of each perspective's accumulator (`H`), a multiple of 16 so the inner loops work
    /// on whole SIMD blocks.
    pub hidden: usize,
    /// Number of output buckets (`B`), 1 to 256 (a sample's bucket is a `u8`).
    pub buckets: usize,
    /// The most inputs active in one perspective, at most 255; it also sets the scale of the
    /// initial feature-transformer weights.
    pub max_active: usize,
    pub activation: Activation,
}

/// Where each tensor lives in the flat weight vector.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Layout {
    /// `ft_weights[i * H + h]`: input `i`'s row.
    pub ft_weights: Range<usize>,
    /// `ft_bias[h]`.
    pub ft_bias: Range<usize>,
    /// `out_weights[b * 2H + j]`: `j < H` reads the side to move's half, `j >= H` the other.
    pub out_weights: Range<usize>,
    /// `out_bias[b]`.
    pub out_bias: Range<usize>,
}

impl Architecture {
    /// Checks the limits the inner loops and the sample format rely on.
    pub fn validate(&self) -> Result<(), TrainError> {
        let bad = |m: String| Err(TrainError::Architecture(m));
        if self.inputs == 0 || self.inputs > 1 << 16 {
            return bad(format!("inputs {} (1 to 65536)", self.inputs));
        }
        if self.hidden == 0 || !self.hidden.is_multiple_of(16) {
            return bad(format!(
                "hidden {} (a positive multiple of 16)",
                self.hidden
            ));
        }
        if self.buckets == 0 || self.buckets > 256 {
            return bad(format!("buckets {} (1 to 256)", self.buckets));
        }
        if self.max_active == 0 || self.max_active > 255 {
            return bad(format!("max_active {} (1 to 255)", self.max_active));
        }
        if self
            .inputs
            .checked_mul(self.hidden)
            .is_none_or(|n| n > 1 << 30)
        {
            return bad(format!(
                "{} x {} feature-transformer weights",
                self.inputs, self.hidden
            ));
        }
        Ok(())
    }

    pub fn layout(&self) -> Layout {
        let (n, h, b) = (self.inputs, self.hidden, self.buckets);
        let ft_weights = 0..n * h;
        let ft_bias = ft_weights.end..ft_weights.end + h;
        let out_weights = ft_bias.end..ft_bias.end + b * 2 * h;
        let out_bias = out_weights.end..out_weights.end + b;
        Layout {
            ft_weights,
            ft_bias,
            out_weights,
            out_bias,
        }
    }

    /// The number of trainable floats.
    pub fn parameters(&self) -> usize {
        self.layout().out_bias.end
    }

    /// The sample bounds this network accepts.
    pub fn sample_shape(&self) -> super::SampleShape {
        super::SampleShape {
            inputs: self.inputs,
            buckets: self.buckets,
            max_active: self.max_active,
        }
    }
}

/// The float weights of one network.
#[derive(Clone, Debug, PartialEq)]
pub struct Network {
    arch: Architecture,
    params: AlignedVec,
}

/// A stream tag for the initial weights (see [`crate::util::mix`]).
const INIT_STREAM: u64 = 0x1417;

impl Network {
    /// Seeded initial weights. Feature-transformer weights are uniform in `±1/√max_active`:
    /// an accumulator sums `max_active` rows at most, so its spread is about that of one input
    /// in a dense layer of `max_active` inputs (bullet initialises its first layer from the
    /// number of active inputs for the same reason; PyTorch's `Linear` default would use
    /// `±1/√N`, which leaves a sparse accumulator near zero). Output weights are uniform in
    /// `±1/√(2H)` (PyTorch's `Linear` default for `2H` inputs). Biases start at zero. Draws come
    /// from ChaCha8 seeded by `mix(seed, [INIT_STREAM])`, in layout order.
    pub fn new(arch: Architecture, seed: u64) -> Result<Network, TrainError> {
        arch.validate()?;
        let layout = arch.layout();
        let mut params = AlignedVec::zeros(arch.parameters());
        let mut rng = ChaCha8Rng::seed_from_u64(mix(seed, &[INIT_STREAM]));
        let a = 1.0 / (arch.max_active as f32).sqrt();
        for w in &mut params[layout.ft_weights] {
            *w = rng.gen_range(-a..a);
        }
        let c = 1.0 / ((2 * arch.hidden) as f32).sqrt();
        for w in &mut params[layout.out_weights] {
            *w = rng.gen_range(-c..c);
        }
        Ok(Network { arch, params })
    }

    /// A network from its flat weights (in [`Layout`] order).
    pub fn from_params(arch: Architecture, params: Vec<f32>) -> Result<Network, TrainError> {
        arch.validate()?;
        if params.len() != arch.parameters() {
            return Err(TrainError::Size {
                what: "the weight vector",
                expected: arch.parameters(),
                found: params.len(),
            });
        }
        Ok(Network {
            arch,
            params: AlignedVec::from_slice(&params),
        })
    }

    pub fn arch(&self) -> &Architecture {
        &self.arch
    }

    /// Every weight, in [`Layout`] order.
    pub fn params(&self) -> &[f32] {
        &self.params
    }

    pub fn params_mut(&mut self) -> &mut [f32] {
        &mut self.params
    }

    pub fn into_params(self) -> Vec<f32> {
        self.params.to_vec()
    }

    /// `[inputs * hidden]`, row-major by input.
    pub fn ft_weights(&self) -> &[f32] {
        &self.params[self.arch.layout().ft_weights]
    }

    /// `[hidden]`.
    pub fn ft_bias(&self) -> &[f32] {
        &self.params[self.arch.layout().ft_bias]
    }

    /// `[buckets * 2 * hidden]`, row-major by bucket, the side to move's half first.
    pub fn out_weights(&self) -> &[f32] {
        &self.params[self.arch.layout().out_weights]
    }

    /// `[buckets]`.
    pub fn out_bias(&self) -> &[f32] {
        &self.params[self.arch.layout().out_bias]
    }

    /// The raw output for one sample (times the inference's `SCALE`: centipawns for the side
    /// to move), computed plainly: the reference the glue compares the quantised inference
    /// with. Inputs out of range are an error, not a panic.
    pub fn forward(&self, stm: &[u16], other: &[u16], bucket: u8) -> Result<f32, TrainError> {
        let shape = self.arch.sample_shape();
        let sample = super::Sample {
            stm,
            other,
            bucket,
            target: 0.0,
        };
        sample.check(&shape)?;
        let h = self.arch.hidden;
        let (w, bias) = (self.ft_weights(), self.ft_bias());
        let b = bucket as usize;
        let out_w = &self.out_weights()[b * 2 * h..(b + 1) * 2 * h];
        let mut out = self.out_bias()[b];
        for (half, feats) in [stm, other].into_iter().enumerate() {
            let mut acc = bias.to_vec();
            for &i in feats {
                let row = &w[i as usize * h..(i as usize + 1) * h];
                acc.iter_mut().zip(row).for_each(|(a, r)| *a += r);
            }
            for (a, ow) in acc.iter().zip(&out_w[half * h..(half + 1) * h]) {
                let c = a.clamp(0.0, 1.0);
                let x = match self.arch.activation {
                    Activation::Crelu => c,
                    Activation::Screlu => c * c,
                };
                out += x * ow;
            }
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    pub(crate) fn arch(inputs: usize, hidden: usize, buckets: usize) -> Architecture {
        Architecture {
            inputs,
            hidden,
            buckets,
            max_active: 32,
            activation: Activation::Screlu,
        }
    }

    #[test]
    fn layout_is_contiguous_in_order() {
        let a = arch(10, 16, 3);
        let l = a.layout();
        assert_eq!(l.ft_weights, 0..160);
        assert_eq!(l.ft_bias, 160..176);
        assert_eq!(l.out_weights, 176..176 + 96);
        assert_eq!(l.out_bias, 272..275);
        assert_eq!(a.parameters(), 275);
    }

    #[test]
    fn validate_names_the_problem() {
        for (bad, word) in [
            (arch(0, 16, 1), "inputs"),
            (arch(70000, 16, 1), "inputs"),
            (arch(10, 20, 1), "hidden"),
            (arch(10, 16, 0), "buckets"),
            (arch(10, 16, 257), "buckets"),
        ] {
            let e = bad.validate().unwrap_err().to_string();
            assert!(e.contains(word), "{e}");
        }
        let mut a = arch(10, 16, 1);
        a.max_active = 256;
        assert!(a.validate().unwrap_err().to_string().contains("max_active"));
    }

    #[test]
    fn init_is_seeded_and_bounded() {
        let a = arch(100, 32, 2);
        let n1 = Network::new(a, 7).unwrap();
        assert_eq!(n1, Network::new(a, 7).unwrap());
        assert_ne!(n1, Network::new(a, 8).unwrap());
        let lim = 1.0 / 32f32.sqrt();
        assert!(n1.ft_weights().iter().all(|w| w.abs() <= lim));
        assert!(n1.ft_bias().iter().all(|&w| w == 0.0));
        let lim = 1.0 / 64f32.sqrt();
        assert!(n1.out_weights().iter().all(|w| w.abs() <= lim));
        assert!(n1.out_weights().iter().any(|w| w.abs() > lim / 2.0));
    }

    #[test]
    fn forward_rejects_bad_inputs() {
        let n = Network::new(arch(10, 16, 2), 1).unwrap();
        assert!(n.forward(&[1, 2], &[3], 1).is_ok());
        assert!(n.forward(&[10], &[], 0).is_err());
        assert!(n.forward(&[1], &[], 2).is_err());
    }
}
