//! A dataset file as the tuner holds it: shards of traces split into training and validation
//! positions, loaded on every rank as an executor resident (shard `s` on rank `s mod ranks`),
//! and the queries that add their loss and gradient sums up in a fixed order, so the loss is
//! the same bits on any number of threads and ranks.

use super::trace::{CHUNK, KeyValues, Scratch, TraceSet, Tracing, add_in_order};
use crate::eval::EvalParams;
use crate::exec::{Distributed, ExecError};
use crate::tune::TuneError;
use crate::tune::dataset::{self, DatasetError};
use crate::tune::space::{ParamSet, Space};
use crate::util::mix;
use rayon::prelude::*;
use serde::{Deserialize, Serialize};
use std::path::PathBuf;

/// Records of the data file per shard (a whole number of chunks): the unit a rank loads and
/// reduces; shard partials are added in shard order.
pub const SHARD: usize = 16 * CHUNK;

/// Chunks per shard: a shard's training set (at most [`SHARD`] positions) has at most this
/// many, so `shard · CHUNKS_PER_SHARD + c` names chunk `c` of that set uniquely in the file.
pub const CHUNKS_PER_SHARD: usize = SHARD / CHUNK;

/// `Σ` of the sums (shards or chunks, from any ranks) in the order of their ids.
fn add_sums(p: usize, mut parts: Vec<PartialSums>) -> (f64, Vec<f64>) {
    parts.sort_by_key(|x| x.id);
    add_in_order(p, parts.iter().map(|x| (x.loss, x.grad.as_slice())))
}

/// The training or the validation positions of a dataset.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Subset {
    Train,
    Val,
    /// The training positions against their results alone (fitting K under `--lambda`).
    TrainResults,
}

/// One shard of the data file: records `[id·SHARD, (id+1)·SHARD)`, split into their training
/// and validation positions.
pub struct Shard {
    pub id: usize,
    pub train: TraceSet,
    pub val: TraceSet,
}

/// The unscaled loss and gradient sums of one part of the data: a shard, or in a mini-batch
/// pass a chunk.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PartialSums {
    /// The shard's id, or the chunk's ([`CHUNKS_PER_SHARD`]) in a mini-batch pass.
    pub id: usize,
    pub loss: f64,
    pub grad: Vec<f64>,
}

/// This process's share of the dataset: every shard, or under MPI this rank's shards (shard
/// `s` lives on rank `s mod ranks`; no rank holds the whole file).
pub struct TexelShare {
    pub shards: Vec<Shard>,
    /// Positions of the whole file in each subset (every rank counts them while streaming).
    pub train_len: usize,
    pub val_len: usize,
}

/// How to load a dataset: what rank 0 sends the others.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct LoadSpec {
    pub data: PathBuf,
    pub max_positions: Option<usize>,
    pub validation: f64,
    pub seed: u64,
    /// The space's base parameters and selection.
    pub eval: EvalParams,
    pub only: String,
    /// `--lambda`: the weight of the search score in the labels.
    pub lambda: f64,
    /// `--score-k`: the K of the search scores in the labels (`None`: the evaluation's).
    pub score_k: Option<f64>,
}

impl LoadSpec {
    pub fn space(&self) -> Result<Space, TuneError> {
        Space::new(ParamSet::Eval(self.eval.clone()), &self.only)
    }
}

/// What rank 0 asks every rank's share.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub enum TexelQuery {
    /// The shard sums of a subset at θ.
    Sums {
        subset: Subset,
        theta: Vec<f64>,
        k: f64,
        grad: bool,
    },
    /// The share's training chunks.
    Chunks,
    /// The sums of those of these chunks the share holds, at θ.
    Batch {
        chunks: Vec<usize>,
        theta: Vec<f64>,
        k: f64,
    },
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub enum TexelAnswer {
    Sums(Vec<PartialSums>),
    Chunks(Vec<(usize, usize)>),
}

impl crate::exec::Resident for TexelShare {
    type Spec = LoadSpec;
    type Query = TexelQuery;
    type Answer = TexelAnswer;
    type Error = TuneError;
    const KIND: &'static str = "texel";

    fn load(spec: &LoadSpec, share: crate::exec::Share) -> Result<TexelShare, TuneError> {
        TexelShare::load(spec, &spec.space()?, &|s| share.holds(s))
    }

    fn answer(&self, q: &TexelQuery) -> TexelAnswer {
        match q {
            TexelQuery::Sums {
                subset,
                theta,
                k,
                grad,
            } => TexelAnswer::Sums(self.sums(*subset, theta, *k, *grad)),
            TexelQuery::Chunks => TexelAnswer::Chunks(self.train_chunks()),
            TexelQuery::Batch { chunks, theta, k } => {
                TexelAnswer::Sums(self.chunk_sums(chunks, theta, *k))
            }
        }
    }
}

impl TexelShare {
    /// Streams the file and keeps the shards `keep` selects, traced under `space`; counts the
    /// positions of every subset on the way. Every bad line of a kept shard is named.
    pub fn load(
        spec: &LoadSpec,
        space: &Space,
        keep: &dyn Fn(usize) -> bool,
    ) -> Result<TexelShare, TuneError> {
        let path = &spec.data;
        let cut = (spec.validation.clamp(0.0, 0.9) * 1_000_000.0) as u64;
        let is_val = |line: usize| mix(spec.seed, &[line as u64, 0x5917]) % 1_000_000 < cut;
        let max = spec.max_positions.unwrap_or(usize::MAX);
        let mut data = TexelShare {
            shards: Vec::new(),
            train_len: 0,
            val_len: 0,
        };
        let mut pending: Vec<dataset::Labelled> = Vec::new();
        let mut records = 0usize;
        for row in dataset::labelled_lines(path)? {
            if records >= max {
                break;
            }
            let row = row?;
            if spec.lambda > 0.0 && row.score.is_none() {
                return Err(DatasetError::Line {
                    path: path.display().to_string(),
                    line: row.line,
                    msg: format!(
                        "no search score, which --lambda {} needs (rows `FEN | score | wdl`, \
                         as xqtune datagen writes them)",
                        spec.lambda
                    ),
                }
                .into());
            }
            if is_val(row.line) {
                data.val_len += 1;
            } else {
                data.train_len += 1;
            }
            let shard = records / SHARD;
            records += 1;
            if keep(shard) {
                pending.push(row);
            }
            if records.is_multiple_of(SHARD) && !pending.is_empty() {
                let rows = std::mem::take(&mut pending);
                data.shards.push(trace_shard(
                    shard,
                    &rows,
                    path,
                    space,
                    &is_val,
                    (spec.lambda, spec.score_k),
                )?);
            }
        }
        if records == 0 {
            return Err(DatasetError::Empty {
                path: path.display().to_string(),
            }
            .into());
        }
        if !pending.is_empty() {
            data.shards.push(trace_shard(
                (records - 1) / SHARD,
                &pending,
                path,
                space,
                &is_val,
                (spec.lambda, spec.score_k),
            )?);
        }
        Ok(data)
    }

    /// This share's sums of a subset, shard by shard.
    pub fn sums(&self, subset: Subset, theta: &[f64], k: f64, grad: bool) -> Vec<PartialSums> {
        self.shards
            .iter()
            .map(|s| {
                let set = match subset {
                    Subset::Train | Subset::TrainResults => &s.train,
                    Subset::Val => &s.val,
                };
                let (loss, grad) = set.sums_by(theta, k, grad, subset != Subset::TrainResults);
                PartialSums {
                    id: s.id,
                    loss,
                    grad,
                }
            })
            .collect()
    }

    /// The training chunks of this share's shards: (chunk id, positions), the id as
    /// [`CHUNKS_PER_SHARD`] defines it; the chunks are the ones [`TraceSet::sums`] sums.
    pub fn train_chunks(&self) -> Vec<(usize, usize)> {
        self.shards
            .iter()
            .flat_map(|s| {
                let n = s.train.len();
                (0..n.div_ceil(CHUNK))
                    .map(move |c| (s.id * CHUNKS_PER_SHARD + c, CHUNK.min(n - c * CHUNK)))
            })
            .collect()
    }

    /// The loss and gradient sums of those of `chunks` that this share holds, one per chunk
    /// (its id in `id`), computed in parallel.
    pub fn chunk_sums(&self, chunks: &[usize], theta: &[f64], k: f64) -> Vec<PartialSums> {
        let held: Vec<(usize, &TraceSet, usize)> = chunks
            .iter()
            .filter_map(|&id| {
                let s = self
                    .shards
                    .binary_search_by_key(&(id / CHUNKS_PER_SHARD), |s| s.id)
                    .ok()?;
                Some((id, &self.shards[s].train, id % CHUNKS_PER_SHARD))
            })
            .collect();
        let kv = KeyValues::new(theta);
        held.par_iter()
            .map(|&(id, set, c)| {
                let range = c * CHUNK..((c + 1) * CHUNK).min(set.len());
                let (loss, grad) = set.sums_range_at(&kv, theta, k, true, range, true);
                PartialSums { id, loss, grad }
            })
            .collect()
    }
}

/// The whole dataset of a run: every rank's share, asked through the executor.
pub struct TexelDataset(pub Distributed<TexelShare>);

impl TexelDataset {
    /// Loads `spec` on every rank (this process alone when nothing is distributed).
    pub fn load(spec: &LoadSpec) -> Result<TexelDataset, TuneError> {
        match crate::exec::load::<TexelShare>(spec) {
            Ok(d) => Ok(TexelDataset(d)),
            Err(ExecError::Here(e)) => Err(e),
            Err(e @ ExecError::Rank { .. }) => Err(TuneError::Io(e.to_string())),
        }
    }

    /// This process's share.
    pub fn local(&self) -> &TexelShare {
        self.0.local()
    }

    fn sums(&self, q: TexelQuery) -> Vec<PartialSums> {
        self.0
            .ask(&q)
            .into_iter()
            .flat_map(|a| match a {
                TexelAnswer::Sums(s) => s,
                TexelAnswer::Chunks(_) => panic!("a texel share answered sums with chunks"),
            })
            .collect()
    }

    /// Mean loss (and gradient) of a subset over the whole file: the shard sums of every rank
    /// added in shard order.
    pub fn loss_grad_of(
        &self,
        subset: Subset,
        theta: &[f64],
        k: f64,
        grad: bool,
    ) -> (f64, Vec<f64>) {
        let n = match subset {
            Subset::Train | Subset::TrainResults => self.local().train_len,
            Subset::Val => self.local().val_len,
        };
        let p = if grad { theta.len() } else { 0 };
        if n == 0 {
            return (0.0, vec![0.0; p]);
        }
        let parts = self.sums(TexelQuery::Sums {
            subset,
            theta: theta.to_vec(),
            k,
            grad,
        });
        let (l, g) = add_sums(p, parts);
        let inv = 1.0 / n as f64;
        (l * inv, g.into_iter().map(|x| x * inv).collect())
    }

    pub fn loss(&self, subset: Subset, theta: &[f64], k: f64) -> f64 {
        self.loss_grad_of(subset, theta, k, false).0
    }

    /// Mean loss and gradient over a mini-batch of training chunks holding `positions`
    /// positions: the chunk sums of every rank added in chunk-id order, so the batch is the
    /// same bits on any number of threads and ranks.
    pub fn batch_loss_grad(
        &self,
        chunks: &[usize],
        positions: usize,
        theta: &[f64],
        k: f64,
    ) -> (f64, Vec<f64>) {
        let parts = self.sums(TexelQuery::Batch {
            chunks: chunks.to_vec(),
            theta: theta.to_vec(),
            k,
        });
        let (l, g) = add_sums(theta.len(), parts);
        let inv = 1.0 / positions.max(1) as f64;
        (l * inv, g.into_iter().map(|x| x * inv).collect())
    }

    /// Every training chunk of the file (on every rank), in id order.
    pub fn all_train_chunks(&self) -> Vec<(usize, usize)> {
        let mut all: Vec<(usize, usize)> = self
            .0
            .ask(&TexelQuery::Chunks)
            .into_iter()
            .flat_map(|a| match a {
                TexelAnswer::Chunks(c) => c,
                TexelAnswer::Sums(_) => panic!("a texel share answered chunks with sums"),
            })
            .collect();
        all.sort_unstable();
        all
    }
}

/// Parses and traces the records of one shard, chunk by chunk in parallel: each position is
/// traced as soon as it is parsed, so no shard's worth of `Position`s is ever held (they
/// dominated the loader's peak memory).
fn trace_shard(
    id: usize,
    rows: &[dataset::Labelled],
    path: &std::path::Path,
    space: &Space,
    is_val: &(dyn Fn(usize) -> bool + Sync),
    (lambda, score_k): (f64, Option<f64>),
) -> Result<Shard, TuneError> {
    let tracing = Tracing::new(space);
    let parts: Result<Vec<(TraceSet, TraceSet)>, DatasetError> = rows
        .par_chunks(CHUNK)
        .map(|chunk| {
            let mut sets = [(TraceSet::new(), vec![]), (TraceSet::new(), vec![])];
            let mut scratch = Scratch::default();
            for r in chunk {
                let pos = dataset::parse_fen(&r.fen).map_err(|msg| DatasetError::Line {
                    path: path.display().to_string(),
                    line: r.line,
                    msg,
                })?;
                let (set, scores) = &mut sets[usize::from(is_val(r.line))];
                if tracing.push(set, &pos, r.result, &mut scratch) {
                    scores.push(r.score.unwrap_or(0) as f32);
                }
            }
            let [(mut train, ts), (mut val, vs)] = sets;
            train.set_scores(lambda, score_k, ts);
            val.set_scores(lambda, score_k, vs);
            Ok((train, val))
        })
        .collect();
    let (train, val): (Vec<TraceSet>, Vec<TraceSet>) = parts?.into_iter().unzip();
    Ok(Shard {
        id,
        train: TraceSet::concat(&train),
        val: TraceSet::concat(&val),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tune::texel::trace::tests::synthetic;

    /// One shard of synthetic traces: three full chunks and a short one of training positions
    /// (the short one also returned alone), and validation positions.
    fn synthetic_data(p: usize, seed: u64) -> (TexelDataset, TraceSet, Vec<f64>) {
        let (full, truth) = synthetic(3 * CHUNK, p, 1.0, seed);
        let (last, _) = synthetic(100, p, 1.0, seed + 1);
        let (val, _) = synthetic(500, p, 1.0, seed + 2);
        let data = TexelShare {
            shards: vec![Shard {
                id: 0,
                train: TraceSet::concat(&[full, last.clone()]),
                val,
            }],
            train_len: 3 * CHUNK + 100,
            val_len: 500,
        };
        (TexelDataset(Distributed::whole(data)), last, truth)
    }

    #[test]
    fn a_batch_of_every_chunk_is_the_full_pass() {
        let (data, last, truth) = synthetic_data(8, 4);
        let chunks = data.all_train_chunks();
        let sizes: Vec<usize> = chunks.iter().map(|c| c.1).collect();
        assert_eq!(sizes, [CHUNK, CHUNK, CHUNK, 100]);
        let theta: Vec<f64> = truth.iter().map(|t| t + 10.0).collect();
        let ids: Vec<usize> = chunks.iter().map(|c| c.0).collect();
        let batch = data.batch_loss_grad(&ids, 3 * CHUNK + 100, &theta, 1.0);
        assert_eq!(batch, data.loss_grad_of(Subset::Train, &theta, 1.0, true));
        // one chunk alone: that chunk's positions only
        let one = data.batch_loss_grad(&[3], 100, &theta, 1.0);
        assert_eq!(one, last.loss_grad(&theta, 1.0));
    }
}
