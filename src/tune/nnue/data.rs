//! The training data of `tune nnue`: labelled positions (any file `tune texel` reads, or packed
//! files, `import::packed`) turned into the trainer's samples, held on every rank in shares.
//!
//! Position `p` of the files (counted across them in order) is a validation position when
//! `mix(seed, [p, VAL])` falls under the validation fraction. Every position belongs to a
//! *block* of about [`BLOCK`] positions drawn by hash, `mix(seed, [p, BLOCK_TAG]) mod blocks`,
//! and block `b` lives on rank `b mod ranks`. A block is the unit of work and of summation: its
//! gradient is computed in one piece, in file order, and rounded once into an exact integer sum
//! ([`crate::train::ExactSum`]), so a batch (a group of blocks) gives the same bits whichever
//! threads and ranks computed its blocks. Batches are consecutive groups of blocks in each
//! epoch's shuffled block order; the hash makes every block a random sample of the files, so
//! consecutive positions of one game rarely share a batch.

use super::super::TuneError;
use super::super::dataset;
use crate::core::{Color, Position, Variant};
use crate::eval::nnue::{FeatureSetId, output_bucket};
use crate::eval::{EvalParams, evaluate_for};
use crate::exec::{Resident, Share};
use crate::import::packed::{self, PackedPosition};
use crate::train::{
    self, ExactSum, Gradient, LossSettings, SampleSet, SampleShape, Samples, Workspace,
};
use crate::util::mix;
use rayon::prelude::*;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use std::sync::{Mutex, RwLock};

/// Positions per block, on average.
pub const BLOCK: usize = 1024;
/// Positions parsed at once (in parallel) while loading.
const PARSE_BATCH: usize = 1 << 16;
const VAL_TAG: u64 = 0x7a1;
const BLOCK_TAG: u64 = 0xb10c;
const VAL_BLOCK_TAG: u64 = 0xb10d;
/// A label without a search score.
const NO_SCORE: i16 = i16::MIN;

/// What every rank loads (rank 0 sends it to the others).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct NnueSpec {
    pub files: Vec<PathBuf>,
    pub max_positions: Option<usize>,
    pub validation: f64,
    pub seed: u64,
    pub variant: Variant,
    pub features: FeatureSetId,
    pub arch: train::Architecture,
    /// The classical evaluation that calibrates the label scale where a row has no search
    /// score.
    pub eval: EvalParams,
    /// Whether every row needs a search score (`--lambda` above 0).
    pub needs_score: bool,
    /// Whether every training position is also learned mirrored left to right (the rules are
    /// symmetric about the e-file, so the mirror has the same value).
    pub mirror: bool,
}

/// How one position is labelled, from its side to move's view.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Label {
    /// The search score in centipawns, or [`NO_SCORE`].
    score: i16,
    /// The classical static evaluation in centipawns.
    eval: i16,
    /// The result: 0 lost, 1 drawn, 2 won.
    result: u8,
}

impl Label {
    fn result(&self) -> f64 {
        self.result as f64 * 0.5
    }

    /// The score the label scale is fitted on: the search's, else the static evaluation's.
    fn fit_score(&self) -> f64 {
        if self.score == NO_SCORE {
            self.eval as f64
        } else {
            self.score as f64
        }
    }

    /// `λ·σ(score / E) + (1 − λ)·result`.
    fn target(&self, eval_scale: f64, lambda: f64) -> Result<f32, String> {
        if lambda == 0.0 {
            return Ok(self.result() as f32);
        }
        if self.score == NO_SCORE {
            return Err(format!(
                "a position without a search score, which --lambda {lambda} needs (rows \
                 `FEN | score | wdl` as xqtune datagen writes them, or packed files)"
            ));
        }
        let s = sigmoid(self.score as f64 / eval_scale);
        Ok((lambda * s + (1.0 - lambda) * self.result()) as f32)
    }
}

fn sigmoid(x: f64) -> f64 {
    1.0 / (1.0 + (-x).exp())
}

/// One subset (training or validation) of a share: samples, labels, and the blocks (id, sample
/// indices in file order), sorted by id.
#[derive(Default)]
struct Part {
    samples: Option<SampleSet>,
    labels: Vec<Label>,
    blocks: Vec<(u32, Vec<u32>)>,
}

impl Part {
    fn new(shape: SampleShape) -> Part {
        Part {
            samples: Some(SampleSet::new(shape)),
            labels: Vec::new(),
            blocks: Vec::new(),
        }
    }

    fn set(&self) -> &SampleSet {
        match &self.samples {
            Some(s) => s,
            None => unreachable!("a part is built with its sample set"),
        }
    }

    fn push(&mut self, block: u32, s: &Parsed) -> Result<(), String> {
        let set = self.samples.as_mut().ok_or("no sample set")?;
        let index = set.len() as u32;
        set.push(&s.stm, &s.other, s.bucket, s.label.result() as f32)
            .map_err(|e| e.to_string())?;
        self.labels.push(s.label);
        match self.blocks.binary_search_by_key(&block, |b| b.0) {
            Ok(i) => self.blocks[i].1.push(index),
            Err(i) => self.blocks.insert(i, (block, vec![index])),
        }
        Ok(())
    }
}

/// A position turned into a sample.
struct Parsed {
    stm: Vec<u16>,
    other: Vec<u16>,
    bucket: u8,
    label: Label,
}

/// One record of a data file before parsing.
enum Record {
    Text {
        fen: String,
        result: f32,
        score: Option<i32>,
    },
    Packed(PackedPosition),
}

/// Where a record came from, for error messages.
#[derive(Clone)]
struct Origin {
    file: usize,
    line: usize,
}

/// This rank's share of the data.
pub struct NnueShare {
    arch: train::Architecture,
    parts: RwLock<[Part; 2]>,
    /// Positions in each subset over every rank.
    pub train_len: u64,
    pub val_len: u64,
    /// Buffers for the gradient of one block, reused across batches.
    work: Mutex<Vec<(Workspace, Gradient)>>,
}

/// The training or the validation part.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Subset {
    Train = 0,
    Val = 1,
}

/// What rank 0 asks every share.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub enum NnueQuery {
    /// The share's blocks of a subset: (id, positions).
    Blocks(Subset),
    /// The loss of the label scale `eval_scale` over the training labels:
    /// `(σ(score / E) − result)²` summed.
    LabelLoss { eval_scale: f64 },
    /// The loss of the classical evaluation's prediction `σ(eval / E)` against the targets
    /// `λ·σ(score / E) + (1 − λ)·result` over a subset: the mark a network should beat.
    ClassicalLoss {
        eval_scale: f64,
        lambda: f64,
        subset: Subset,
    },
    /// Sets every target: `λ·σ(score / E) + (1 − λ)·result`.
    SetTargets { eval_scale: f64, lambda: f64 },
    /// The gradient sums over those of `blocks` the share holds, at `params`.
    Gradient {
        params: Vec<f32>,
        loss: LossSettings,
        blocks: Vec<u32>,
    },
    /// The loss sums of a subset at `params`.
    Loss {
        params: Vec<f32>,
        loss: LossSettings,
        subset: Subset,
    },
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub enum NnueAnswer {
    Blocks(Vec<(u32, u32)>),
    Sum(ExactSum),
    Done(Result<(), String>),
}

fn io_error(path: &Path, msg: impl std::fmt::Display) -> TuneError {
    TuneError::Io(format!("{}: {msg}", path.display()))
}

/// Calls `f` with every record of `files` in order, its global index and origin, up to `max`.
fn for_each_record(
    files: &[PathBuf],
    max: usize,
    mut f: impl FnMut(usize, Record, Origin) -> Result<(), TuneError>,
) -> Result<usize, TuneError> {
    let mut p = 0usize;
    for (file, path) in files.iter().enumerate() {
        if p >= max {
            break;
        }
        if packed::is_packed(path) {
            let records = packed::read(path).map_err(|e| TuneError::Io(e.to_string()))?;
            for (i, r) in records.into_iter().enumerate() {
                if p >= max {
                    break;
                }
                f(p, Record::Packed(r), Origin { file, line: i + 1 })?;
                p += 1;
            }
            continue;
        }
        for row in dataset::labelled_lines(path)? {
            if p >= max {
                break;
            }
            let row = row?;
            let origin = Origin {
                file,
                line: row.line,
            };
            let record = Record::Text {
                fen: row.fen,
                result: row.result,
                score: row.score,
            };
            f(p, record, origin)?;
            p += 1;
        }
    }
    Ok(p)
}

/// Counts the positions of `files` (up to `max`): the number of blocks depends on it.
pub fn count_positions(files: &[PathBuf], max: usize) -> Result<usize, TuneError> {
    let mut n = 0;
    for path in files {
        if n >= max {
            break;
        }
        if packed::is_packed(path) {
            let len = std::fs::metadata(path)
                .map_err(|e| io_error(path, e))?
                .len() as usize;
            n += len.saturating_sub(16) / packed::RECORD_BYTES;
            continue;
        }
        for row in dataset::labelled_lines(path)? {
            row?;
            n += 1;
            if n >= max {
                break;
            }
        }
    }
    Ok(n.min(max))
}

/// A FEN's board mirrored left to right (file a to i): each rank's text reversed, runs of
/// empty squares kept as digits.
fn mirror_fen(fen: &str) -> String {
    let (board, rest) = fen.split_once(' ').unwrap_or((fen, ""));
    let ranks: Vec<String> = board
        .split('/')
        .map(|rank| {
            let mut cells = String::new();
            for c in rank.chars() {
                match c.to_digit(10) {
                    Some(n) => cells.extend(std::iter::repeat_n('1', n as usize)),
                    None => cells.push(c),
                }
            }
            let mut out = String::new();
            let mut empty = 0;
            for c in cells.chars().rev() {
                if c == '1' {
                    empty += 1;
                } else {
                    if empty > 0 {
                        out.push_str(&empty.to_string());
                        empty = 0;
                    }
                    out.push(c);
                }
            }
            if empty > 0 {
                out.push_str(&empty.to_string());
            }
            out
        })
        .collect();
    format!("{} {rest}", ranks.join("/")).trim_end().to_string()
}

/// The number of blocks of `positions` positions.
fn block_count(positions: usize) -> u64 {
    (positions / BLOCK).max(1) as u64
}

impl NnueShare {
    /// Parses a record into a sample, and into its mirror image when `mirrored` (a training
    /// position under `--mirror`).
    fn parse_both(
        spec: &NnueSpec,
        record: &Record,
        mirrored: bool,
    ) -> Result<(Parsed, Option<Parsed>), String> {
        let (pos, score, result) = NnueShare::read(spec, record)?;
        let mirror = if mirrored {
            let m = Position::from_fen(&mirror_fen(&pos.to_fen()))
                .map_err(|e| format!("its mirror image: {e}"))?;
            Some(NnueShare::sample(spec, &m, score, result))
        } else {
            None
        };
        Ok((NnueShare::sample(spec, &pos, score, result), mirror))
    }

    /// The position of a record, its score and result (red's view), checked against the run.
    fn read(spec: &NnueSpec, record: &Record) -> Result<(Position, Option<i32>, f32), String> {
        let (pos, score, result): (Position, Option<i32>, f32) = match record {
            Record::Text { fen, result, score } => (dataset::parse_fen(fen)?, *score, *result),
            Record::Packed(p) => (p.to_position()?, Some(p.score() as i32), p.result()),
        };
        if spec.needs_score && score.is_none() {
            return Err(
                "no search score, which --lambda above 0 needs (rows `FEN | score | wdl` as \
                 xqtune datagen writes them, or packed files)"
                    .into(),
            );
        }
        if pos.variant() != spec.variant {
            return Err(format!(
                "a {} position in a --variant {} run",
                pos.variant(),
                spec.variant
            ));
        }
        Ok((pos, score, result))
    }

    /// A position as a sample: features, bucket, label from the side to move's view.
    fn sample(spec: &NnueSpec, pos: &Position, score: Option<i32>, result: f32) -> Parsed {
        let us = pos.side_to_move();
        let sign = us.sign();
        let mut stm = Vec::with_capacity(40);
        let mut other = Vec::with_capacity(40);
        spec.features
            .active_features(pos, us, &mut |i| stm.push(i as u16));
        spec.features
            .active_features(pos, us.flip(), &mut |i| other.push(i as u16));
        let pieces = pos.occupied().count_ones();
        let bucket = output_bucket(pieces, spec.arch.buckets) as u8;
        let clamp = |x: i32| x.clamp(-30_000, 30_000) as i16;
        let red_result = result;
        let stm_result = if us == Color::Red {
            red_result
        } else {
            1.0 - red_result
        };
        let label = Label {
            score: score.map_or(NO_SCORE, |s| clamp(s * sign)),
            // (from the side to move's view already; Jieqi positions get the engine's Jieqi
            // terms, as the search scores them)
            eval: clamp(evaluate_for(pos, &spec.eval, true)),
            result: (stm_result * 2.0).round().clamp(0.0, 2.0) as u8,
        };
        Parsed {
            stm,
            other,
            bucket,
            label,
        }
    }

    /// Loads the share of `share` (positions streamed from every file, the held ones parsed in
    /// parallel batches). Every bad record is named with its file and line.
    pub fn load_share(spec: &NnueSpec, share: Share) -> Result<NnueShare, TuneError> {
        let max = spec.max_positions.unwrap_or(usize::MAX);
        let total = count_positions(&spec.files, max)?;
        if total == 0 {
            return Err(TuneError::Io(format!(
                "{}: no labelled positions",
                spec.files
                    .iter()
                    .map(|p| p.display().to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            )));
        }
        let cut = (spec.validation.clamp(0.0, 0.9) * 1_000_000.0) as u64;
        let val_blocks = block_count((total as f64 * spec.validation) as usize);
        let train_blocks = block_count(total);
        let shape = spec.arch.sample_shape();
        let mut parts = [Part::new(shape), Part::new(shape)];
        let (mut train_len, mut val_len) = (0u64, 0u64);
        let mut pending: Vec<(Subset, u32, Record, Origin)> = Vec::new();
        let flush = |pending: &mut Vec<(Subset, u32, Record, Origin)>,
                     parts: &mut [Part; 2]|
         -> Result<(), TuneError> {
            let parsed: Vec<Result<(Parsed, Option<Parsed>), String>> = pending
                .par_iter()
                .map(|(subset, _, r, _)| {
                    NnueShare::parse_both(spec, r, spec.mirror && *subset == Subset::Train)
                })
                .collect();
            for ((subset, block, _, origin), p) in pending.drain(..).zip(parsed) {
                let named = |msg: String| {
                    TuneError::Io(format!(
                        "{} line {}: {msg}",
                        spec.files[origin.file].display(),
                        origin.line
                    ))
                };
                let (p, mirror) = p.map_err(named)?;
                parts[subset as usize].push(block, &p).map_err(named)?;
                if let Some(m) = mirror {
                    parts[subset as usize].push(block, &m).map_err(named)?;
                }
            }
            Ok(())
        };
        for_each_record(&spec.files, max, |p, record, origin| {
            let is_val = mix(spec.seed, &[p as u64, VAL_TAG]) % 1_000_000 < cut;
            let (subset, block) = if is_val {
                val_len += 1;
                (
                    Subset::Val,
                    mix(spec.seed, &[p as u64, VAL_BLOCK_TAG]) % val_blocks,
                )
            } else {
                train_len += 1;
                (
                    Subset::Train,
                    mix(spec.seed, &[p as u64, BLOCK_TAG]) % train_blocks,
                )
            };
            if share.holds(block as usize) {
                pending.push((subset, block as u32, record, origin));
                if pending.len() >= PARSE_BATCH {
                    flush(&mut pending, &mut parts)?;
                }
            }
            Ok(())
        })?;
        flush(&mut pending, &mut parts)?;
        let work = Mutex::new(Vec::new());
        Ok(NnueShare {
            arch: spec.arch,
            parts: RwLock::new(parts),
            train_len,
            val_len,
            work,
        })
    }

    /// Samples held here, and their bytes.
    pub fn held(&self) -> (usize, usize) {
        let parts = self.parts.read().unwrap_or_else(|p| p.into_inner());
        parts.iter().fold((0, 0), |(n, b), p| {
            (n + p.set().len(), b + p.set().bytes() + p.labels.len() * 8)
        })
    }

    fn take_work(&self) -> Result<(Workspace, Gradient), String> {
        if let Some(w) = self.work.lock().unwrap_or_else(|p| p.into_inner()).pop() {
            return Ok(w);
        }
        // One block is one chunk: computed whole on one thread, in file order.
        let ws = Workspace::new(&self.arch, 4 * BLOCK + 4096).map_err(|e| e.to_string())?;
        Ok((ws, Gradient::zeros(&self.arch)))
    }

    fn give_work(&self, w: (Workspace, Gradient)) {
        self.work.lock().unwrap_or_else(|p| p.into_inner()).push(w);
    }

    fn gradient(
        &self,
        params: &[f32],
        loss: &LossSettings,
        blocks: &[u32],
    ) -> Result<ExactSum, String> {
        let net =
            train::Network::from_params(self.arch, params.to_vec()).map_err(|e| e.to_string())?;
        let parts = self.parts.read().unwrap_or_else(|p| p.into_inner());
        let part = &parts[Subset::Train as usize];
        let held: Vec<&Vec<u32>> = blocks
            .iter()
            .filter_map(|b| {
                part.blocks
                    .binary_search_by_key(b, |x| x.0)
                    .ok()
                    .map(|i| &part.blocks[i].1)
            })
            .collect();
        let n = self.arch.parameters();
        held.par_iter()
            .map(|indices| -> Result<ExactSum, String> {
                let mut w = self.take_work()?;
                let r =
                    w.0.gradient(&net, loss, part.set(), indices, &mut w.1)
                        .map_err(|e| e.to_string());
                let mut sum = ExactSum::zeros(n);
                if r.is_ok() {
                    sum.add_gradient(&w.1);
                }
                self.give_work(w);
                r.map(|_| sum)
            })
            .try_reduce(
                || ExactSum::zeros(0),
                |mut a, b| {
                    a.merge(&b);
                    Ok(a)
                },
            )
    }

    fn loss(
        &self,
        params: &[f32],
        loss: &LossSettings,
        subset: Subset,
    ) -> Result<ExactSum, String> {
        let net =
            train::Network::from_params(self.arch, params.to_vec()).map_err(|e| e.to_string())?;
        let parts = self.parts.read().unwrap_or_else(|p| p.into_inner());
        let part = &parts[subset as usize];
        part.blocks
            .par_iter()
            .map(|(_, indices)| -> Result<ExactSum, String> {
                let mut w = self.take_work()?;
                let r =
                    w.0.loss(&net, loss, part.set(), Some(indices))
                        .map_err(|e| e.to_string());
                self.give_work(w);
                let mut sum = ExactSum::zeros(0);
                sum.add_loss(r?, indices.len() as u64);
                Ok(sum)
            })
            .try_reduce(
                || ExactSum::zeros(0),
                |mut a, b| {
                    a.merge(&b);
                    Ok(a)
                },
            )
    }

    /// `Σ f(label)` over a subset: per block in file order, then exactly.
    fn label_sum(&self, subset: Subset, f: impl Fn(&Label) -> f64 + Sync) -> ExactSum {
        let parts = self.parts.read().unwrap_or_else(|p| p.into_inner());
        let part = &parts[subset as usize];
        part.blocks
            .par_iter()
            .map(|(_, indices)| {
                let s: f64 = indices.iter().map(|&i| f(&part.labels[i as usize])).sum();
                let mut sum = ExactSum::zeros(0);
                sum.add_loss(s, indices.len() as u64);
                sum
            })
            .reduce(
                || ExactSum::zeros(0),
                |mut a, b| {
                    a.merge(&b);
                    a
                },
            )
    }

    fn label_loss(&self, eval_scale: f64) -> ExactSum {
        self.label_sum(Subset::Train, |l| {
            let d = sigmoid(l.fit_score() / eval_scale) - l.result();
            d * d
        })
    }

    fn classical_loss(
        &self,
        eval_scale: f64,
        lambda: f64,
        subset: Subset,
    ) -> Result<ExactSum, String> {
        // (a label without a score cannot be blended: the targets' own check says so first)
        Ok(self.label_sum(subset, |l| {
            let t = l.target(eval_scale, lambda).unwrap_or(l.result() as f32) as f64;
            let d = sigmoid(l.eval as f64 / eval_scale) - t;
            d * d
        }))
    }

    fn set_targets(&self, eval_scale: f64, lambda: f64) -> Result<(), String> {
        let mut parts = self.parts.write().unwrap_or_else(|p| p.into_inner());
        for part in parts.iter_mut() {
            let Part {
                samples, labels, ..
            } = part;
            let set = samples.as_mut().ok_or("no sample set")?;
            for (i, l) in labels.iter().enumerate() {
                let t = l.target(eval_scale, lambda)?;
                set.set_target(i, t).map_err(|e| e.to_string())?;
            }
        }
        Ok(())
    }
}

impl Resident for NnueShare {
    type Spec = NnueSpec;
    type Query = NnueQuery;
    type Answer = NnueAnswer;
    type Error = TuneError;
    const KIND: &'static str = "nnue";

    fn load(spec: &NnueSpec, share: Share) -> Result<NnueShare, TuneError> {
        NnueShare::load_share(spec, share)
    }

    fn answer(&self, q: &NnueQuery) -> NnueAnswer {
        match q {
            NnueQuery::Blocks(subset) => {
                let parts = self.parts.read().unwrap_or_else(|p| p.into_inner());
                NnueAnswer::Blocks(
                    parts[*subset as usize]
                        .blocks
                        .iter()
                        .map(|(id, v)| (*id, v.len() as u32))
                        .collect(),
                )
            }
            NnueQuery::LabelLoss { eval_scale } => NnueAnswer::Sum(self.label_loss(*eval_scale)),
            NnueQuery::ClassicalLoss {
                eval_scale,
                lambda,
                subset,
            } => match self.classical_loss(*eval_scale, *lambda, *subset) {
                Ok(s) => NnueAnswer::Sum(s),
                Err(e) => NnueAnswer::Done(Err(e)),
            },
            NnueQuery::SetTargets { eval_scale, lambda } => {
                NnueAnswer::Done(self.set_targets(*eval_scale, *lambda))
            }
            NnueQuery::Gradient {
                params,
                loss,
                blocks,
            } => match self.gradient(params, loss, blocks) {
                Ok(s) => NnueAnswer::Sum(s),
                Err(e) => NnueAnswer::Done(Err(e)),
            },
            NnueQuery::Loss {
                params,
                loss,
                subset,
            } => match self.loss(params, loss, *subset) {
                Ok(s) => NnueAnswer::Sum(s),
                Err(e) => NnueAnswer::Done(Err(e)),
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_mirrored_fen_is_the_board_flipped_left_to_right() {
        let start = crate::core::START_FEN;
        assert_eq!(mirror_fen(start), start);
        let fen = "2bak4/4a4/4b1n2/p3p1p1p/2c6/9/P3P1P1P/2N1C4/4A4/2BAK1B2 w - - 3 12";
        let m = mirror_fen(fen);
        assert_eq!(
            m,
            "4kab2/4a4/2n1b4/p1p1p3p/6c2/9/P1P1P3P/4C1N2/4A4/2B1KAB2 w - - 3 12"
        );
        assert_eq!(mirror_fen(&m), fen);
        // the mirror is a legal position with the mirrored pieces
        let (p, q) = (
            Position::from_fen(fen).unwrap(),
            Position::from_fen(&m).unwrap(),
        );
        for s in 0..90u8 {
            let sq = crate::core::Square(s);
            let flipped = crate::core::Square::new(8 - sq.file(), sq.rank());
            assert_eq!(p.piece_at(sq), q.piece_at(flipped));
        }
    }
}
