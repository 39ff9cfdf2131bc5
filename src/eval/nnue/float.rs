//! The float network: the trainer's weights, before quantisation, with the forward pass the
//! trainer differentiates. [`FloatNetwork::quantise`] turns it into the integer [`Network`]
//! the engine runs (bullet saves both forms of each checkpoint, `raw.bin` and
//! `quantised.bin`).

use super::arch::{Activation, Architecture, MAX_DESCRIPTION, output_bucket};
use super::error::NnueError;
use super::features::FeatureSetId;
use super::network::Network;
use crate::core::Position;
use crate::util::splitmix_next;

/// A network in f32, as training produces it.
///
/// Layout (the trainer relies on it; the quantised file keeps the same order):
/// - `ft_weights`: `inputs * hidden` values, row-major by input: the weight from input `i` to
///   neuron `j` is `ft_weights[i * hidden + j]`, so an active input adds the row
///   `ft_weights[i * hidden..(i + 1) * hidden]` to the accumulator.
/// - `ft_bias`: `hidden` values, neuron `j`'s bias.
/// - `out_weights`: `buckets * 2 * hidden` values, row-major by bucket: bucket `b`'s weight on
///   the side to move's neuron `j` is `out_weights[b * 2 * hidden + j]`, on the other side's
///   neuron `j` it is `out_weights[b * 2 * hidden + hidden + j]`.
/// - `out_bias`: `buckets` values.
///
/// Forward pass, per perspective `p` (side to move and other side): `acc_p = ft_bias +
/// sum of the rows of p's active inputs` (`feature_set`, [`super::FeatureSet`]); then with
/// `b = output_bucket(pieces on the board, buckets)`, `out = out_bias[b] + sum_j
/// act(acc_stm[j]) * w_b[j] + act(acc_other[j]) * w_b[hidden + j]`, where `act` is
/// `activation` ([`Activation::apply`]). `out * scale` is the evaluation in centipawns from the
/// side to move's view: the trainer fits `sigmoid(out * scale / K)` (bullet: `eval_scale`).
///
/// `qa`, `qb` and `scale` go into the header unchanged; quantisation multiplies the feature
/// weights and biases by `qa`, the output weights by `qb` and the output biases by `qa * qb`
/// ([`super::arch`]). With SCReLU the output weights must stay within `±(32767 / qa) / qb`
/// (±1.98 at the defaults: clip them there while training, as bullet does).
#[derive(Clone, Debug, PartialEq)]
pub struct FloatNetwork {
    pub feature_set: FeatureSetId,
    pub inputs: usize,
    pub hidden: usize,
    pub buckets: usize,
    pub activation: Activation,
    pub qa: i32,
    pub qb: i32,
    pub scale: i32,
    pub ft_weights: Vec<f32>,
    pub ft_bias: Vec<f32>,
    pub out_weights: Vec<f32>,
    pub out_bias: Vec<f32>,
    /// Training run, data, epochs: stored in the file's header.
    pub description: String,
}

impl FloatNetwork {
    /// All weights zero, in the shape of `arch`.
    pub fn zeros(arch: Architecture) -> FloatNetwork {
        FloatNetwork {
            feature_set: arch.feature_set,
            inputs: arch.inputs(),
            hidden: arch.hidden,
            buckets: arch.buckets,
            activation: arch.activation,
            qa: arch.qa,
            qb: arch.qb,
            scale: arch.scale,
            ft_weights: vec![0.0; arch.ft_weight_count()],
            ft_bias: vec![0.0; arch.hidden],
            out_weights: vec![0.0; arch.out_weight_count()],
            out_bias: vec![0.0; arch.buckets],
            description: String::new(),
        }
    }

    /// Uniform random weights in the ranges a trained network has, the same for the same seed:
    /// for tests. Unlike [`Network::random`] they fall between the quantisation steps.
    pub fn random(seed: u64, arch: Architecture) -> FloatNetwork {
        let mut state = seed;
        let mut uniform = |lo: f32, hi: f32| -> f32 {
            let (s, r) = splitmix_next(state);
            state = s;
            lo + (hi - lo) * ((r >> 40) as f32 / (1u64 << 24) as f32)
        };
        let mut net = FloatNetwork::zeros(arch);
        let out = (arch.out_weight_limit() as f32 / arch.qb as f32).min(2.0) * 0.99;
        net.ft_weights
            .iter_mut()
            .for_each(|w| *w = uniform(-0.15, 0.15));
        net.ft_bias.iter_mut().for_each(|w| *w = uniform(-0.1, 0.6));
        net.out_weights
            .iter_mut()
            .for_each(|w| *w = uniform(-out, out));
        net.out_bias
            .iter_mut()
            .for_each(|w| *w = uniform(-1.0, 1.0));
        net.description = format!("random float network, seed {seed}");
        net
    }

    /// The header fields.
    pub fn architecture(&self) -> Architecture {
        Architecture {
            feature_set: self.feature_set,
            hidden: self.hidden,
            buckets: self.buckets,
            activation: self.activation,
            qa: self.qa,
            qb: self.qb,
            scale: self.scale,
        }
    }

    /// Checks the architecture and every vector's length.
    pub fn check_shape(&self) -> Result<(), NnueError> {
        let arch = self.architecture();
        arch.validate()?;
        for (field, expected, found) in [
            ("inputs", arch.inputs(), self.inputs),
            (
                "feature weights",
                arch.ft_weight_count(),
                self.ft_weights.len(),
            ),
            ("feature biases", arch.hidden, self.ft_bias.len()),
            (
                "output weights",
                arch.out_weight_count(),
                self.out_weights.len(),
            ),
            ("output biases", arch.buckets, self.out_bias.len()),
        ] {
            if expected != found {
                return Err(NnueError::SizeMismatch {
                    field,
                    expected,
                    found,
                });
            }
        }
        if self.description.len() > MAX_DESCRIPTION {
            return Err(NnueError::AbsurdSize {
                field: "description length",
                value: self.description.len() as i64,
                allowed: "0..=65536",
            });
        }
        Ok(())
    }

    /// The integer network: each weight times its scale (see the type's documentation),
    /// rounded to the nearest integer. A weight that does not fit its integer type, or the
    /// output-weight limit of SCReLU, is an error that names it (never a silent clamp), as is a
    /// NaN or infinite one.
    pub fn quantise(&self) -> Result<Network, NnueError> {
        self.check_shape()?;
        let arch = self.architecture();
        let (qa, qb) = (self.qa as f64, self.qb as f64);
        let out_limit = arch.out_weight_limit() as f64;
        let ft_weights = quantise_all("feature weight", &self.ft_weights, qa, i16::MAX as f64)?;
        let ft_bias = quantise_all("feature bias", &self.ft_bias, qa, i16::MAX as f64)?;
        let out_weights = quantise_all("output weight", &self.out_weights, qb, out_limit)?;
        let out_bias = quantise_all("output bias", &self.out_bias, qa * qb, i32::MAX as f64)?;
        Network::from_quantised(
            arch,
            self.description.clone(),
            &ft_weights.iter().map(|&v| v as i16).collect::<Vec<_>>(),
            &ft_bias.iter().map(|&v| v as i16).collect::<Vec<_>>(),
            &out_weights.iter().map(|&v| v as i16).collect::<Vec<_>>(),
            &out_bias.iter().map(|&v| v as i32).collect::<Vec<_>>(),
        )
    }

    /// The raw network output (before `scale`) of a position given the active inputs of the
    /// side to move (`us`) and of the other side (`them`), with output bucket `bucket`.
    pub fn forward(&self, us: &[usize], them: &[usize], bucket: usize) -> f32 {
        let h = self.hidden;
        let w = &self.out_weights[bucket * 2 * h..(bucket + 1) * 2 * h];
        let mut out = self.out_bias[bucket];
        for (features, w) in [(us, &w[..h]), (them, &w[h..])] {
            let mut acc = self.ft_bias.clone();
            for &f in features {
                for (a, x) in acc.iter_mut().zip(&self.ft_weights[f * h..(f + 1) * h]) {
                    *a += x;
                }
            }
            out += acc
                .iter()
                .zip(w)
                .map(|(&a, &w)| self.activation.apply(a) * w)
                .sum::<f32>();
        }
        out
    }

    /// The evaluation of `pos` in centipawns, side to move's view: [`FloatNetwork::forward`]
    /// times `scale`. The quantised network approximates it.
    pub fn evaluate(&self, pos: &Position) -> f32 {
        let features = |perspective| {
            let mut v = Vec::new();
            self.feature_set
                .active_features(pos, perspective, &mut |f| v.push(f));
            v
        };
        let stm = pos.side_to_move();
        let bucket = output_bucket(pos.occupied().count_ones(), self.buckets);
        self.forward(&features(stm), &features(stm.flip()), bucket) * self.scale as f32
    }
}

/// `round(v * scale)` of every value, each within `±limit`.
fn quantise_all(
    what: &'static str,
    values: &[f32],
    scale: f64,
    limit: f64,
) -> Result<Vec<f64>, NnueError> {
    values
        .iter()
        .enumerate()
        .map(|(index, &v)| {
            let q = (v as f64 * scale).round();
            if (-limit..=limit).contains(&q) {
                Ok(q)
            } else {
                Err(NnueError::WeightOutOfRange {
                    what,
                    index,
                    value: v as f64,
                    min: -limit / scale,
                    max: limit / scale,
                })
            }
        })
        .collect()
}

impl Network {
    /// The float network whose quantisation is this network: each integer divided by its
    /// scale. `to_float().quantise()` gives the network back exactly.
    pub fn to_float(&self) -> FloatNetwork {
        let arch = self.architecture();
        let (qa, qb) = (arch.qa as f32, arch.qb as f32);
        let mut net = FloatNetwork::zeros(arch);
        net.ft_weights = self.ft_weights().iter().map(|&w| w as f32 / qa).collect();
        net.ft_bias = self.ft_biases().iter().map(|&w| w as f32 / qa).collect();
        net.out_weights = self.out_weights().iter().map(|&w| w as f32 / qb).collect();
        net.out_bias = self
            .out_biases()
            .iter()
            .map(|&b| (b as f64 / (qa as f64 * qb as f64)) as f32)
            .collect();
        net.description = self.description().to_string();
        net
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantise_names_the_weight_out_of_range() {
        let arch = Architecture::new(FeatureSetId::XiangqiPlanes, 32, 2, Activation::SCReLU);
        let mut net = FloatNetwork::zeros(arch);
        assert!(net.quantise().is_ok());
        // ±128/64 = ±2.0 is the SCReLU limit at QA 255, QB 64.
        net.out_weights[7] = 2.0;
        assert!(net.quantise().is_ok());
        net.out_weights[7] = 2.01;
        assert!(matches!(
            net.quantise(),
            Err(NnueError::WeightOutOfRange {
                what: "output weight",
                index: 7,
                ..
            })
        ));
        net.out_weights[7] = 0.0;
        net.ft_weights[3] = f32::NAN;
        assert!(matches!(
            net.quantise(),
            Err(NnueError::WeightOutOfRange {
                what: "feature weight",
                index: 3,
                ..
            })
        ));
        net.ft_weights.pop();
        assert!(matches!(
            net.quantise(),
            Err(NnueError::SizeMismatch {
                field: "feature weights",
                ..
            })
        ));
    }

    #[test]
    fn quantise_rounds_to_the_documented_scales() {
        let arch = Architecture::new(FeatureSetId::XiangqiPlanes, 32, 1, Activation::CReLU);
        let mut net = FloatNetwork::zeros(arch);
        net.ft_weights[1260 * 32 - 1] = 0.5; // 127.5 rounds away from zero: 128
        net.ft_bias[2] = -0.1; // -25.5: -26
        net.out_weights[63] = 0.3; // 19.2: 19
        net.out_bias[0] = 0.25; // 4080
        let q = net.quantise().unwrap();
        assert_eq!(q.ft_weights()[1260 * 32 - 1], 128);
        assert_eq!(q.ft_biases()[2], -26);
        assert_eq!(q.out_weights()[63], 19);
        assert_eq!(q.out_biases(), &[4080]);
    }

    #[test]
    fn dequantised_networks_quantise_back_exactly() {
        for activation in Activation::ALL {
            let net = Network::random(11, 64, 3, activation);
            assert_eq!(net.to_float().quantise().unwrap(), net);
        }
    }
}
