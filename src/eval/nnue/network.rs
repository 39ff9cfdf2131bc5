//! The quantised network: the weights as the inference reads them, their file, and a plain
//! from-scratch forward pass that the fast paths are tested against.

use super::arch::{Activation, Architecture, output_bucket};
use super::error::NnueError;
use super::features::FeatureSetId;
use super::format::{self, Decoded};
use super::simd::{self, LANES, Line, Simd, lanes};
use crate::core::{Color, Position, Variant};
use crate::util::{splitmix_next, write_atomic};
use std::path::Path;
use std::sync::{Arc, OnceLock};

/// What a `--net` flag or a roster's `net` says to mean the embedded network of the variant
/// played ([`Network::embedded`]).
pub const EMBEDDED_NAME: &str = "embedded";

/// The networks built into the binary, per [`Variant`] ([`Network::embedded`]):
/// `params/xiangqi.nnue` and `params/jieqi.nnue`, trained by `xqtune tune nnue` (how:
/// params/README.md). The engine (`xqtune uci`, `xqtune bench`) evaluates each variant's
/// positions with its network by default (`Use NNUE` defaults to true; `--eval classical` or
/// `setoption name Use NNUE value false` for the tables). Matches, tuners and datagen take a
/// network only from their flags (`--net embedded` names one of these), so the classical
/// evaluation they tune is unaffected. `None` here builds an engine without one.
const EMBEDDED: [Option<&[u8]>; 2] = [
    Some(include_bytes!("../../../params/xiangqi.nnue")),
    Some(include_bytes!("../../../params/jieqi.nnue")),
];

/// A quantised network: i16 feature-transformer weights and biases (scale QA), i16 output
/// weights (scale QB) and i32 output biases (scale QA·QB), laid out in 64-byte lines for the
/// kernels. Build one from a file ([`Network::load`], [`Network::from_bytes`]), from quantised
/// values ([`Network::from_quantised`]) or from a float network
/// ([`FloatNetwork::quantise`](super::FloatNetwork::quantise)).
#[derive(Clone)]
pub struct Network {
    arch: Architecture,
    description: String,
    /// `inputs` rows of `hidden / 32` lines.
    ft_weights: Vec<Line>,
    ft_bias: Vec<Line>,
    /// `buckets` rows of `2 * hidden / 32` lines: the side to move's half, then the other's.
    out_weights: Vec<Line>,
    out_bias: Vec<i32>,
    /// FNV-1a of the file bytes before the hash ([`format`](mod@format)): the network's identity.
    hash: u64,
    simd: Simd,
}

/// The header, not the megabytes of weights.
impl std::fmt::Debug for Network {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Network")
            .field("arch", &self.arch)
            .field("description", &self.description)
            .field("hash", &format_args!("{:#018x}", self.hash))
            .field("simd", &self.simd)
            .finish_non_exhaustive()
    }
}

/// Equal weights, header and description; the kernels in use do not count.
impl PartialEq for Network {
    fn eq(&self, other: &Self) -> bool {
        self.arch == other.arch
            && self.description == other.description
            && self.ft_weights == other.ft_weights
            && self.ft_bias == other.ft_bias
            && self.out_weights == other.out_weights
            && self.out_bias == other.out_bias
    }
}

impl Eq for Network {}

/// A network travels (an engine's settings in a game job for another MPI rank) as its file's
/// bytes: [`Network::to_bytes`] is an exact round trip, and [`Network::from_bytes`] checks them
/// on arrival, so a damaged message is an error, never a different network.
impl serde::Serialize for Network {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_bytes(&self.to_bytes())
    }
}

impl<'de> serde::Deserialize<'de> for Network {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Network, D::Error> {
        struct FileBytes;
        impl<'de> serde::de::Visitor<'de> for FileBytes {
            type Value = Vec<u8>;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("the bytes of a network file")
            }
            fn visit_bytes<E: serde::de::Error>(self, v: &[u8]) -> Result<Vec<u8>, E> {
                Ok(v.to_vec())
            }
            fn visit_byte_buf<E: serde::de::Error>(self, v: Vec<u8>) -> Result<Vec<u8>, E> {
                Ok(v)
            }
            /// Formats without a byte string (JSON) write a list of numbers.
            fn visit_seq<A: serde::de::SeqAccess<'de>>(
                self,
                mut seq: A,
            ) -> Result<Vec<u8>, A::Error> {
                let mut out = Vec::with_capacity(seq.size_hint().unwrap_or(0));
                while let Some(b) = seq.next_element()? {
                    out.push(b);
                }
                Ok(out)
            }
        }
        let bytes = deserializer.deserialize_byte_buf(FileBytes)?;
        Network::from_bytes(&bytes).map_err(serde::de::Error::custom)
    }
}

/// Flat i16 values as lines; the length is a multiple of [`LANES`].
fn to_lines(values: &[i16]) -> Vec<Line> {
    values
        .chunks_exact(LANES)
        .map(|c| Line(c.try_into().expect("a chunk of LANES values")))
        .collect()
}

impl Network {
    /// A network from quantised values in the file's layout (see [`format`](mod@format)):
    /// `ft_weights` `inputs * hidden` values row-major by input, `ft_bias` `hidden`,
    /// `out_weights` `buckets * 2 * hidden` row-major by bucket (side to move's half first),
    /// `out_bias` `buckets`. Checks the architecture, every length, and the output weights' range
    /// ([`Architecture::out_weight_limit`]).
    pub fn from_quantised(
        arch: Architecture,
        description: String,
        ft_weights: &[i16],
        ft_bias: &[i16],
        out_weights: &[i16],
        out_bias: &[i32],
    ) -> Result<Network, NnueError> {
        arch.validate()?;
        if description.len() > super::arch::MAX_DESCRIPTION {
            return Err(NnueError::AbsurdSize {
                field: "description length",
                value: description.len() as i64,
                allowed: "0..=65536",
            });
        }
        for (field, expected, found) in [
            ("feature weights", arch.ft_weight_count(), ft_weights.len()),
            ("feature biases", arch.hidden, ft_bias.len()),
            ("output weights", arch.out_weight_count(), out_weights.len()),
            ("output biases", arch.buckets, out_bias.len()),
        ] {
            if expected != found {
                return Err(NnueError::SizeMismatch {
                    field,
                    expected,
                    found,
                });
            }
        }
        let bytes = format::encode(
            &arch,
            &description,
            ft_weights,
            ft_bias,
            out_weights,
            out_bias,
        );
        Network::from_decoded(Decoded {
            arch,
            description,
            ft_weights: to_lines(ft_weights),
            ft_bias: to_lines(ft_bias),
            out_weights: to_lines(out_weights),
            out_bias: out_bias.to_vec(),
            hash: format::hash_of_encoded(&bytes),
        })
    }

    /// Checks the weights' ranges of parsed parts.
    fn from_decoded(d: Decoded) -> Result<Network, NnueError> {
        let limit = d.arch.out_weight_limit();
        if let Some((index, &w)) = lanes(&d.out_weights)
            .iter()
            .enumerate()
            .find(|(_, w)| (**w as i32).abs() > limit)
        {
            return Err(NnueError::WeightOutOfRange {
                what: "quantised output weight",
                index,
                value: w as f64,
                min: -limit as f64,
                max: limit as f64,
            });
        }
        Ok(Network {
            arch: d.arch,
            description: d.description,
            ft_weights: d.ft_weights,
            ft_bias: d.ft_bias,
            out_weights: d.out_weights,
            out_bias: d.out_bias,
            hash: d.hash,
            simd: Simd::detect(),
        })
    }

    /// Parses a network file ([`format`](mod@format)); any byte string gives a network or an
    /// error that names what is wrong, never a panic.
    pub fn from_bytes(bytes: &[u8]) -> Result<Network, NnueError> {
        Network::from_decoded(format::decode(bytes)?)
    }

    /// Reads a network file.
    pub fn load(path: &Path) -> Result<Network, NnueError> {
        let bytes = std::fs::read(path).map_err(|error| NnueError::Io {
            path: path.to_path_buf(),
            error,
        })?;
        Network::from_bytes(&bytes)
    }

    /// The file of this network; [`Network::from_bytes`] gives it back exactly.
    pub fn to_bytes(&self) -> Vec<u8> {
        format::encode(
            &self.arch,
            &self.description,
            lanes(&self.ft_weights),
            lanes(&self.ft_bias),
            lanes(&self.out_weights),
            &self.out_bias,
        )
    }

    /// Writes the network file through a temporary file and a rename.
    pub fn save(&self, path: &Path) -> std::io::Result<()> {
        write_atomic(path, &self.to_bytes())
    }

    /// The network a flag names for games of `variant`: the file at `path`, or the embedded
    /// network of `variant` for the word [`EMBEDDED_NAME`] (`--net embedded`). A file whose
    /// feature set is another variant's is an error ([`NnueError::WrongVariant`]).
    pub fn load_named(path: &Path, variant: Variant) -> Result<Arc<Network>, NnueError> {
        if path.as_os_str() == EMBEDDED_NAME {
            return Network::embedded(variant).ok_or(NnueError::NoneEmbedded { variant });
        }
        let net = Network::load(path)?;
        if net.variant() != variant {
            return Err(NnueError::WrongVariant {
                features: net.feature_set(),
                wanted: variant,
            });
        }
        Ok(Arc::new(net))
    }

    /// The network built into the binary for `variant`, the engine's default evaluation of
    /// its positions when there is one (see `EMBEDDED` in this file). Parsed once; every
    /// caller shares it.
    pub fn embedded(variant: Variant) -> Option<Arc<Network>> {
        static NETWORKS: OnceLock<[Option<Arc<Network>>; 2]> = OnceLock::new();
        NETWORKS.get_or_init(|| {
            EMBEDDED.map(|b| b.map(|b| Arc::new(Network::from_bytes(b).expect("embedded network"))))
        })[variant as usize]
            .clone()
    }

    /// The game whose positions this network scores (its feature set's).
    pub fn variant(&self) -> Variant {
        self.feature_set().variant()
    }

    /// A network with random weights of the sizes a trained one has (default quantisation,
    /// [`FeatureSetId::XiangqiPlanes`]), the same for the same seed: for tests and benchmarks.
    pub fn random(seed: u64, hidden: usize, buckets: usize, activation: Activation) -> Network {
        Network::random_with(
            seed,
            Architecture::new(FeatureSetId::XiangqiPlanes, hidden, buckets, activation),
        )
    }

    /// [`Network::random`] for any architecture. Panics if `arch` is invalid.
    pub fn random_with(seed: u64, arch: Architecture) -> Network {
        let mut state = seed;
        let mut draw = |lo: i32, hi: i32| -> i32 {
            let (s, r) = splitmix_next(state);
            state = s;
            lo + (r % (hi - lo + 1) as u64) as i32
        };
        // Feature weights of about ±0.16 and biases of 0..0.6 put a typical accumulator
        // across 0..1, where the activation is neither flat nor clipped.
        let ft = arch.qa * 10 / 64;
        let ft_weights: Vec<i16> = (0..arch.ft_weight_count())
            .map(|_| draw(-ft, ft) as i16)
            .collect();
        let ft_bias: Vec<i16> = (0..arch.hidden)
            .map(|_| draw(-arch.qa / 8, arch.qa * 5 / 8) as i16)
            .collect();
        let limit = arch.out_weight_limit().min(2 * arch.qb);
        let out_weights: Vec<i16> = (0..arch.out_weight_count())
            .map(|_| draw(-limit, limit) as i16)
            .collect();
        let out_bias: Vec<i32> = (0..arch.buckets)
            .map(|_| draw(-arch.qa * arch.qb, arch.qa * arch.qb))
            .collect();
        Network::from_quantised(
            arch,
            format!("random network, seed {seed}"),
            &ft_weights,
            &ft_bias,
            &out_weights,
            &out_bias,
        )
        .expect("random weights are in range")
    }

    pub fn architecture(&self) -> Architecture {
        self.arch
    }

    pub fn feature_set(&self) -> FeatureSetId {
        self.arch.feature_set
    }

    pub fn hidden(&self) -> usize {
        self.arch.hidden
    }

    pub fn buckets(&self) -> usize {
        self.arch.buckets
    }

    pub fn activation(&self) -> Activation {
        self.arch.activation
    }

    /// What the network is (training run, data, epochs), as its file says.
    pub fn description(&self) -> &str {
        &self.description
    }

    /// The file's FNV-1a hash: equal networks have equal hashes.
    pub fn hash(&self) -> u64 {
        self.hash
    }

    /// The kernels in use ([`Simd::detect`] when built).
    pub fn simd(&self) -> Simd {
        self.simd
    }

    /// Chooses the kernels (to compare or benchmark them); `false`, and no change, when this
    /// CPU cannot run them.
    pub fn set_simd(&mut self, simd: Simd) -> bool {
        let ok = simd.available();
        if ok {
            self.simd = simd;
        }
        ok
    }

    /// Lines per perspective of an accumulator.
    #[inline(always)]
    pub(crate) fn lines(&self) -> usize {
        self.arch.hidden / LANES
    }

    /// The feature-transformer row of input `feature`. Panics past the inputs (a feature set
    /// that breaks its contract).
    #[inline(always)]
    pub(crate) fn ft_row(&self, feature: usize) -> &[Line] {
        let n = self.lines();
        &self.ft_weights[feature * n..(feature + 1) * n]
    }

    /// All feature-transformer rows, input after input.
    #[inline(always)]
    pub(crate) fn ft_weight_lines(&self) -> &[Line] {
        &self.ft_weights
    }

    #[inline(always)]
    pub(crate) fn ft_bias(&self) -> &[Line] {
        &self.ft_bias
    }

    /// The flat quantised parameters, in the file's layout.
    pub fn ft_weights(&self) -> &[i16] {
        lanes(&self.ft_weights)
    }

    pub fn ft_biases(&self) -> &[i16] {
        lanes(&self.ft_bias)
    }

    pub fn out_weights(&self) -> &[i16] {
        lanes(&self.out_weights)
    }

    pub fn out_biases(&self) -> &[i32] {
        &self.out_bias
    }

    /// The evaluation in centipawns, from the accumulators of the side to move (`us`) and the
    /// other side (`them`) of a position with `piece_count` pieces.
    #[inline]
    pub(crate) fn output(&self, us: &[Line], them: &[Line], piece_count: u32) -> i32 {
        let bucket = output_bucket(piece_count, self.arch.buckets);
        let n = self.lines();
        let weights = &self.out_weights[bucket * 2 * n..(bucket + 1) * 2 * n];
        let sum = simd::output(
            self.simd,
            self.arch.activation,
            self.arch.qa as i16,
            us,
            them,
            weights,
        );
        self.finish(sum, bucket)
    }

    /// Output sum to centipawns: the bias brought to the sum's scale, times SCALE, divided by
    /// the sum's scale (`QA·QB` for CReLU, `QA·QA·QB` for SCReLU), truncated toward zero. In
    /// i64: with the validated sizes no step overflows.
    #[inline]
    fn finish(&self, sum: i32, bucket: usize) -> i32 {
        let a = &self.arch;
        let (qa, qb) = (a.qa as i64, a.qb as i64);
        let bias = self.out_bias[bucket] as i64;
        let (num, den) = match a.activation {
            Activation::CReLU => (sum as i64 + bias, qa * qb),
            Activation::SCReLU => (sum as i64 + bias * qa, qa * qa * qb),
        };
        (num * a.scale as i64 / den).clamp(-(i32::MAX as i64), i32::MAX as i64) as i32
    }

    /// The evaluation of `pos` in centipawns, side to move's view, computed from scratch with
    /// plain scalar code that shares nothing with the kernels: the oracle of the tests. The
    /// accumulator lanes wrap at 16 bits and the output sum at 32, as the kernels' do.
    pub fn evaluate_reference(&self, pos: &Position) -> i32 {
        let h = self.arch.hidden;
        let weights = lanes(&self.ft_weights);
        let accumulator = |perspective: Color| {
            let mut acc = lanes(&self.ft_bias).to_vec();
            self.arch
                .feature_set
                .active_features(pos, perspective, &mut |f| {
                    for (a, w) in acc.iter_mut().zip(&weights[f * h..(f + 1) * h]) {
                        *a = a.wrapping_add(*w);
                    }
                });
            acc
        };
        let stm = pos.side_to_move();
        let (us, them) = (accumulator(stm), accumulator(stm.flip()));
        let bucket = output_bucket(pos.occupied().count_ones(), self.arch.buckets);
        let w = &lanes(&self.out_weights)[bucket * 2 * h..(bucket + 1) * 2 * h];
        let qa = self.arch.qa as i64;
        let sum: i64 = us
            .iter()
            .chain(&them)
            .zip(w)
            .map(|(&x, &w)| {
                let c = (x as i64).clamp(0, qa);
                match self.arch.activation {
                    Activation::CReLU => c * w as i64,
                    Activation::SCReLU => c * c * w as i64,
                }
            })
            .sum();
        // `as i32` keeps the low 32 bits: the kernels' wrapping sum.
        self.finish(sum as i32, bucket)
    }
}

/// The networks an engine evaluates with, at most one per [`Variant`]: a network scores only
/// positions of its feature set's variant, and a variant without one keeps the classical
/// evaluation.
#[derive(Clone, Default)]
pub struct Networks([Option<Arc<Network>>; 2]);

impl Networks {
    /// No network: the classical evaluation everywhere.
    pub fn none() -> Networks {
        Networks::default()
    }

    /// The embedded networks ([`Network::embedded`]), the engine's default.
    pub fn embedded() -> Networks {
        Networks([
            Network::embedded(Variant::Xiangqi),
            Network::embedded(Variant::Jieqi),
        ])
    }

    /// The network that scores positions of `variant`, if any.
    pub fn get(&self, variant: Variant) -> Option<&Arc<Network>> {
        self.0[variant as usize].as_ref()
    }

    /// Puts `net` in its variant's place (replacing the one there).
    pub fn set(&mut self, net: Arc<Network>) {
        let v = net.variant() as usize;
        self.0[v] = Some(net);
    }

    /// These networks with `net` in its variant's place.
    pub fn with(mut self, net: Arc<Network>) -> Networks {
        self.set(net);
        self
    }

    pub fn is_empty(&self) -> bool {
        self.0.iter().all(Option::is_none)
    }

    /// The networks' hashes, per variant: equal when the same networks are in place.
    pub fn hashes(&self) -> [Option<u64>; 2] {
        [0, 1].map(|i| self.0[i].as_ref().map(|n| n.hash()))
    }
}

/// One network: in its variant's place; none: no network.
impl From<Option<Arc<Network>>> for Networks {
    fn from(net: Option<Arc<Network>>) -> Networks {
        net.map_or_else(Networks::none, |n| Networks::none().with(n))
    }
}

impl std::fmt::Debug for Networks {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let h = self.hashes();
        f.debug_struct("Networks")
            .field("xiangqi", &h[0].map(|h| format!("{h:016x}")))
            .field("jieqi", &h[1].map(|h| format!("{h:016x}")))
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn random_networks_are_reproducible_and_valid() {
        let a = Network::random(3, 64, 4, Activation::SCReLU);
        let b = Network::random(3, 64, 4, Activation::SCReLU);
        let c = Network::random(4, 64, 4, Activation::SCReLU);
        assert_eq!(a, b);
        assert_eq!(a.hash(), b.hash());
        assert_ne!(a, c);
        assert_ne!(a.hash(), c.hash());
        assert_eq!(a.ft_weights().len(), 1260 * 64);
        assert_eq!(a.out_weights().len(), 4 * 2 * 64);
        assert!(a.out_weights().iter().all(|w| w.abs() <= 128));
        assert_eq!(a.description(), "random network, seed 3");
        for v in [Variant::Xiangqi, Variant::Jieqi] {
            let net = Network::embedded(v);
            assert_eq!(net.is_some(), EMBEDDED[v as usize].is_some());
            assert!(net.is_none_or(|n| n.variant() == v), "{v}");
        }
    }

    /// Serde carries the file bytes: bincode (the executor's wire) and JSON give the same
    /// network back, and damaged bytes are an error from the file checks.
    #[test]
    fn serde_carries_the_file_bytes() {
        let net = Network::random(5, 32, 2, Activation::CReLU);
        let wire = bincode::serialize(&net).unwrap();
        assert_eq!(wire.len(), 8 + net.to_bytes().len());
        let back: Network = bincode::deserialize(&wire).unwrap();
        assert_eq!(back, net);
        assert_eq!(back.hash(), net.hash());
        let json = serde_json::to_string(&net).unwrap();
        let back: Network = serde_json::from_str(&json).unwrap();
        assert_eq!(back, net);
        let mut bad = wire.clone();
        let last = bad.len() - 20;
        bad[last] ^= 1;
        let e = bincode::deserialize::<Network>(&bad)
            .unwrap_err()
            .to_string();
        assert!(e.contains("hash mismatch"), "{e}");
    }

    #[test]
    fn from_quantised_checks_lengths_and_ranges() {
        let arch = Architecture::new(FeatureSetId::XiangqiPlanes, 32, 1, Activation::SCReLU);
        let ft = vec![0i16; 1260 * 32];
        let bias = vec![0i16; 32];
        let mut out = vec![0i16; 64];
        let ok = Network::from_quantised(arch, String::new(), &ft, &bias, &out, &[0]);
        assert!(ok.is_ok());
        let e = Network::from_quantised(arch, String::new(), &ft[1..], &bias, &out, &[0]);
        assert!(matches!(
            e,
            Err(NnueError::SizeMismatch {
                field: "feature weights",
                expected: 40320,
                found: 40319
            })
        ));
        out[5] = 129;
        let e = Network::from_quantised(arch, String::new(), &ft, &bias, &out, &[0]);
        assert!(matches!(
            e,
            Err(NnueError::WeightOutOfRange { index: 5, value, .. }) if value == 129.0
        ));
        // CReLU has no such limit.
        let crelu = Architecture {
            activation: Activation::CReLU,
            ..arch
        };
        assert!(Network::from_quantised(crelu, String::new(), &ft, &bias, &out, &[0]).is_ok());
    }

    /// A hand-computed network: one neuron pair per perspective, checked to the centipawn.
    #[test]
    fn reference_forward_pass_by_hand() {
        let arch = Architecture::new(FeatureSetId::XiangqiPlanes, 32, 1, Activation::SCReLU);
        let mut ft = vec![0i16; 1260 * 32];
        // Every red piece, seen as "ours" by red (planes 0-6), adds 10 to neuron 0.
        for input in 0..7 * 90 {
            ft[input * 32] = 10;
        }
        let bias = vec![0i16; 32];
        let mut out = vec![0i16; 64];
        out[0] = 64; // the side to move's neuron 0, weight 1.0
        let net =
            Network::from_quantised(arch, String::new(), &ft, &bias, &out, &[255 * 64]).unwrap();
        // Start position, red to move: red's accumulator has 16 * 10 = 160 in neuron 0.
        // (160^2 * 64 + 255 * 64 * 255) * 400 / (255^2 * 64) = 557.49..., truncated: 557.
        let pos = Position::startpos();
        assert_eq!(net.evaluate_reference(&pos), 557);
        // Without black's rooks, black to move: black's own pieces (planes 0-6 from its seat)
        // give 14 * 10 = 140: (140^2 + 255^2) * 400 / 255^2 = 520.57..., truncated: 520.
        let fen = "1nbakabn1/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C5C1/9/RNBAKABNR";
        let pos = Position::from_fen(&format!("{fen} b - - 0 1")).unwrap();
        assert_eq!(net.evaluate_reference(&pos), 520);
        let pos = Position::from_fen(&format!("{fen} w - - 0 1")).unwrap();
        assert_eq!(net.evaluate_reference(&pos), 557);
    }
}
