//! The loss and its gradient over a list of samples: a pure function of the weights and the
//! samples, kept apart from the optimiser so that a data-parallel driver (ranks that each hold
//! a shard) can sum the gradients of several processes in a fixed order and take one step.
//!
//! The loss is bullet's default: the prediction `p = sigmoid(output · SCALE / EVAL_SCALE)` is
//! compared with the target by `|p - t|^power`, `power = 2` being the mean squared error
//! (bullet's `loss_power`; nnue-pytorch's docs describe the same sigmoid-space loss). With
//! `SCALE == EVAL_SCALE` the prediction is `sigmoid(output)`: the output is in units of
//! `EVAL_SCALE` centipawns, as a search score `s` enters the target as `sigmoid(s / EVAL_SCALE)`.
//!
//! Determinism: the samples are cut into chunks of `chunk_size` in the order given; each chunk
//! is summed sequentially into a buffer of its own, and chunk sums are added in chunk order.
//! The thread count decides only who computes which chunk (and how many buffers exist), so a
//! gradient is the same bits on any number of threads. A different `chunk_size` groups the sums
//! differently and so gives a slightly different gradient.

use super::kernel::{self, ChunkGrad, LossConsts, NetRef};
use super::{Architecture, Network, Samples, Simd, TrainError};
use rayon::prelude::*;
use serde::{Deserialize, Serialize};

/// How outputs are compared with targets.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct LossSettings {
    /// The inference's `SCALE`: the raw output times this is centipawns.
    pub scale: f32,
    /// Centipawns per unit of the sigmoid's argument (bullet's `eval_scale`, 400 by default).
    pub eval_scale: f32,
    /// The exponent of `|p - t|` (bullet's `loss_power`): 2 is the mean squared error; at least 1.
    pub power: f32,
}

impl Default for LossSettings {
    fn default() -> LossSettings {
        LossSettings {
            scale: 400.0,
            eval_scale: 400.0,
            power: 2.0,
        }
    }
}

impl LossSettings {
    pub fn validate(&self) -> Result<(), TrainError> {
        let positive = |x: f32| x.is_finite() && x > 0.0;
        if !positive(self.scale) || !positive(self.eval_scale) {
            return Err(TrainError::Settings(format!(
                "scale {} and eval_scale {} must be positive",
                self.scale, self.eval_scale
            )));
        }
        if !(self.power.is_finite() && self.power >= 1.0) {
            return Err(TrainError::Settings(format!(
                "loss power {} (at least 1)",
                self.power
            )));
        }
        Ok(())
    }

    pub(crate) fn consts(&self) -> LossConsts {
        LossConsts {
            k: self.scale / self.eval_scale,
            power: self.power,
        }
    }

    /// One sample's loss for a raw output, in f64: the reference the tests hold the kernels to.
    pub fn loss_f64(&self, output: f64, target: f64) -> f64 {
        let k = self.scale as f64 / self.eval_scale as f64;
        let p = 1.0 / (1.0 + (-k * output).exp());
        (p - target).abs().powf(self.power as f64)
    }
}

/// A gradient summed over samples, in the network's [`Layout`](super::network::Layout) order,
/// with the loss summed over the same samples. Sums from several processes add up with
/// [`Gradient::add`]; the optimiser divides by the sample count.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Gradient {
    /// Sums of the loss's partial derivatives (carried as bits through serde, so a JSON trip
    /// keeps every float exactly).
    #[serde(with = "f32_bits")]
    pub values: Vec<f32>,
    pub loss_sum: f64,
    pub samples: u64,
}

impl Gradient {
    pub fn zeros(arch: &Architecture) -> Gradient {
        Gradient {
            values: vec![0.0; arch.parameters()],
            loss_sum: 0.0,
            samples: 0,
        }
    }

    /// Adds `other` (another shard's sums). Floating-point sums depend on their order: add the
    /// shards in a fixed order to get the same bits every run.
    pub fn add(&mut self, other: &Gradient) -> Result<(), TrainError> {
        if other.values.len() != self.values.len() {
            return Err(TrainError::Size {
                what: "the gradient added",
                expected: self.values.len(),
                found: other.values.len(),
            });
        }
        kernel::add_into(Simd::detect(), &mut self.values, &other.values);
        self.loss_sum += other.loss_sum;
        self.samples += other.samples;
        Ok(())
    }

    /// The mean loss of the samples summed (0 for none).
    pub fn mean_loss(&self) -> f64 {
        if self.samples == 0 {
            0.0
        } else {
            self.loss_sum / self.samples as f64
        }
    }

    /// Little-endian bytes: `samples: u64, loss_sum: f64, count: u64, values: f32 × count`,
    /// for a driver that sends raw buffers.
    pub fn to_le_bytes(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(24 + 4 * self.values.len());
        out.extend_from_slice(&self.samples.to_le_bytes());
        out.extend_from_slice(&self.loss_sum.to_le_bytes());
        out.extend_from_slice(&(self.values.len() as u64).to_le_bytes());
        for v in &self.values {
            out.extend_from_slice(&v.to_le_bytes());
        }
        out
    }

    /// The inverse of [`Gradient::to_le_bytes`]; `None` when the bytes are not one.
    pub fn from_le_bytes(bytes: &[u8]) -> Option<Gradient> {
        let word = |i: usize| -> Option<[u8; 8]> { bytes.get(i..i + 8)?.try_into().ok() };
        let samples = u64::from_le_bytes(word(0)?);
        let loss_sum = f64::from_le_bytes(word(8)?);
        let count = usize::try_from(u64::from_le_bytes(word(16)?)).ok()?;
        let body = &bytes[24..];
        if count.checked_mul(4) != Some(body.len()) {
            return None;
        }
        let values = body
            .chunks_exact(4)
            .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
            .collect();
        Some(Gradient {
            values,
            loss_sum,
            samples,
        })
    }
}

/// Floats as their bit patterns, for serde formats (JSON) that would round them.
mod f32_bits {
    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(v: &[f32], s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(v.iter().map(|x| x.to_bits()))
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<f32>, D::Error> {
        Ok(Vec::<u32>::deserialize(d)?
            .into_iter()
            .map(f32::from_bits)
            .collect())
    }
}

/// Rows of the feature transformer one fold task sums.
const FOLD_ROWS: usize = 16;

/// Reusable buffers for [`Workspace::gradient`]: one chunk buffer per thread (allocated on
/// first use), so a training run allocates nothing per batch.
pub struct Workspace {
    arch: Architecture,
    simd: Simd,
    chunk_size: usize,
    chunks: Vec<ChunkGrad>,
}

impl Workspace {
    /// Buffers for `arch`, with the fastest build of the inner loops this processor runs.
    pub fn new(arch: &Architecture, chunk_size: usize) -> Result<Workspace, TrainError> {
        arch.validate()?;
        if chunk_size == 0 {
            return Err(TrainError::Settings("chunk size 0".into()));
        }
        Ok(Workspace {
            arch: *arch,
            simd: Simd::detect(),
            chunk_size,
            chunks: Vec::new(),
        })
    }

    /// Chooses the build of the inner loops (to compare them); refuses one this processor
    /// cannot run.
    pub fn set_simd(&mut self, simd: Simd) -> Result<(), TrainError> {
        self.simd = kernel::runnable(simd)?;
        Ok(())
    }

    pub fn simd(&self) -> Simd {
        self.simd
    }

    pub fn chunk_size(&self) -> usize {
        self.chunk_size
    }

    fn check<S: Samples + ?Sized>(&self, net: &Network, samples: &S) -> Result<(), TrainError> {
        if *net.arch() != self.arch {
            return Err(TrainError::Architecture(format!(
                "the workspace was made for {:?}, the network is {:?}",
                self.arch,
                net.arch()
            )));
        }
        let (have, take) = (samples.shape(), self.arch.sample_shape());
        if !have.fits(&take) {
            return Err(TrainError::Shape {
                samples: have,
                network: take,
            });
        }
        Ok(())
    }

    /// The summed loss and gradient of the samples `indices` (in that order), written to
    /// `out`, computed on the current rayon pool's threads.
    pub fn gradient<S: Samples + ?Sized>(
        &mut self,
        net: &Network,
        loss: &LossSettings,
        samples: &S,
        indices: &[u32],
        out: &mut Gradient,
    ) -> Result<(), TrainError> {
        self.check(net, samples)?;
        loss.validate()?;
        if let Some(&bad) = indices.iter().find(|&&i| i as usize >= samples.len()) {
            return Err(TrainError::Settings(format!(
                "sample index {bad} of a set of {}",
                samples.len()
            )));
        }
        let arch = self.arch;
        let layout = arch.layout();
        out.values.clear();
        out.values.resize(arch.parameters(), 0.0);
        out.loss_sum = 0.0;
        out.samples = indices.len() as u64;
        let nchunks = indices.len().div_ceil(self.chunk_size);
        let wave = rayon::current_num_threads().clamp(1, nchunks.max(1));
        while self.chunks.len() < wave {
            self.chunks
                .push(ChunkGrad::new(arch.inputs, arch.hidden, arch.buckets));
        }
        let (simd, lc, h) = (self.simd, loss.consts(), arch.hidden);
        let netref = net_ref(net);
        for group in indices.chunks(self.chunk_size.saturating_mul(wave)) {
            let parts = group.par_chunks(self.chunk_size);
            let used = parts.len();
            let bufs = &mut self.chunks[..used];
            bufs.par_iter_mut()
                .zip(parts)
                .for_each(|(g, idx)| kernel::chunk_gradient(simd, &netref, lc, samples, idx, g));
            let bufs = &self.chunks[..used];
            let (ft, rest) = out.values.split_at_mut(layout.ft_bias.start);
            let (ft_bias, rest) = rest.split_at_mut(h);
            let (out_w, out_b) =
                rest.split_at_mut(layout.out_bias.start - layout.out_weights.start);
            for g in bufs {
                out.loss_sum += g.loss;
                kernel::add_into(simd, ft_bias, &g.ft_bias);
                kernel::add_into(simd, out_w, &g.out);
                kernel::add_into(simd, out_b, &g.out_bias);
            }
            ft.par_chunks_mut(FOLD_ROWS * h)
                .enumerate()
                .for_each(|(block, dst)| {
                    for (r, row) in dst.chunks_exact_mut(h).enumerate() {
                        let i = block * FOLD_ROWS + r;
                        for g in bufs {
                            if g.touched[i] {
                                kernel::add_into(simd, row, &g.ft[i * h..(i + 1) * h]);
                            }
                        }
                    }
                });
        }
        Ok(())
    }

    /// The summed loss of the samples `indices`, or of every sample when `None`, on the
    /// current rayon pool (chunk sums added in order, as for the gradient).
    pub fn loss<S: Samples + ?Sized>(
        &mut self,
        net: &Network,
        loss: &LossSettings,
        samples: &S,
        indices: Option<&[u32]>,
    ) -> Result<f64, TrainError> {
        self.check(net, samples)?;
        loss.validate()?;
        let n = indices.map_or(samples.len(), <[u32]>::len);
        if let Some(&bad) = indices
            .unwrap_or(&[])
            .iter()
            .find(|&&i| i as usize >= samples.len())
        {
            return Err(TrainError::Settings(format!(
                "sample index {bad} of a set of {}",
                samples.len()
            )));
        }
        let (simd, lc, cs) = (self.simd, loss.consts(), self.chunk_size);
        let netref = net_ref(net);
        let sums: Vec<f64> = (0..n.div_ceil(cs))
            .into_par_iter()
            .map(|c| {
                let range = c * cs..((c + 1) * cs).min(n);
                match indices {
                    Some(ix) => kernel::chunk_loss(
                        simd,
                        &netref,
                        lc,
                        samples,
                        ix[range].iter().map(|&i| i as usize),
                    ),
                    None => kernel::chunk_loss(simd, &netref, lc, samples, range),
                }
            })
            .collect();
        Ok(sums.iter().sum())
    }
}

pub(crate) fn net_ref(net: &Network) -> NetRef<'_> {
    NetRef {
        hidden: net.arch().hidden,
        activation: net.arch().activation,
        ft_weights: net.ft_weights(),
        ft_bias: net.ft_bias(),
        out_weights: net.out_weights(),
        out_bias: net.out_bias(),
    }
}

/// The summed loss and gradient of the samples `indices`: [`Workspace::gradient`] with
/// buffers of its own, for callers that compute one gradient now and then.
pub fn gradient<S: Samples + ?Sized>(
    net: &Network,
    loss: &LossSettings,
    samples: &S,
    indices: &[u32],
    chunk_size: usize,
) -> Result<Gradient, TrainError> {
    let mut out = Gradient::zeros(net.arch());
    Workspace::new(net.arch(), chunk_size)?.gradient(net, loss, samples, indices, &mut out)?;
    Ok(out)
}

/// The mean loss over every sample (0 for none): the validation loss.
pub fn loss<S: Samples + ?Sized>(
    net: &Network,
    loss: &LossSettings,
    samples: &S,
    chunk_size: usize,
) -> Result<f64, TrainError> {
    let sum = Workspace::new(net.arch(), chunk_size)?.loss(net, loss, samples, None)?;
    Ok(if samples.is_empty() {
        0.0
    } else {
        sum / samples.len() as f64
    })
}
