//! `xqtune tune nnue`: trains the engine's network (`eval::nnue`) on labelled positions with the
//! generic trainer (`train`), through the one run driver: run folder, `config.json`,
//! checkpoints after every epoch, `--resume` (a kill loses at most the epoch in progress),
//! Ctrl-C, progress, `log.csv`, the loss plot, `best.nnue` and a verification match of the
//! network against the classical evaluation (or a previous network).
//!
//! The labels blend game result and search score as `tune texel` does (`--lambda`, the weight
//! of the score): the target is `λ·σ(score / E) + (1 − λ)·result` and the prediction
//! `σ(output · SCALE / E)`, where `E` (centipawns) is fitted first on the data, search scores
//! against results, so that the network's centipawns keep the scale the search's margins were
//! tuned for. Training is mini-batch AdamW with a learning-rate schedule (bullet's defaults).
//!
//! Data parallel: each rank holds a share of the positions ([`data`]); every batch, rank 0 asks
//! every share for the gradient of its blocks of the batch and takes one optimiser step with
//! their exact sum. The same seed gives the same network on any number of threads and ranks.

pub mod data;

use super::TuneError;
use super::common::CommonArgs;
use super::driver::{self, RunContext, RunOutcome, RunSettings, Step, Tuned, Tuner};
use super::files::{self, csv_float};
use super::space::ParamSet;
use super::stop::install_ctrlc;
use crate::core::Variant;
use crate::eval::nnue::{self, FeatureSetId, FloatNetwork, Network};
use crate::exec::{Distributed, ExecError};
use crate::train::{
    self, AdamWSettings, ExactSum, LossSettings, LrSchedule, Schedule, TrainConfig, Trainer,
};
use crate::util::mix;
use data::{NnueAnswer, NnueQuery, NnueShare, NnueSpec, Subset};
use rand::SeedableRng;
use rand::seq::SliceRandom;
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use std::time::Instant;

/// The feature sets `--features` names.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "kebab-case")]
pub enum Features {
    /// 14 piece planes of 90 squares from each side's view.
    XiangqiPlanes,
    /// The planes once per palace square of the perspective's king (9 buckets).
    XiangqiKingBuckets,
    /// Jieqi: the 14 planes of face-up pieces, a plane of dark pieces per side and the pools.
    JieqiPlanes,
}

impl Features {
    pub fn id(self) -> FeatureSetId {
        match self {
            Features::XiangqiPlanes => FeatureSetId::XiangqiPlanes,
            Features::XiangqiKingBuckets => FeatureSetId::XiangqiKingBuckets,
            Features::JieqiPlanes => FeatureSetId::JieqiPlanes,
        }
    }

    /// The default set of a variant's networks.
    pub fn default_for(variant: Variant) -> Features {
        match variant {
            Variant::Xiangqi => Features::XiangqiPlanes,
            Variant::Jieqi => Features::JieqiPlanes,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum ActivationArg {
    Crelu,
    Screlu,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum LrSchedArg {
    /// From `--lr` to `--final-lr` along half a cosine over the run.
    Cosine,
    /// `--lr` times `--lr-gamma` every `--lr-step` epochs.
    Step,
    Constant,
}

/// `xqtune tune nnue`.
#[derive(clap::Args, Debug, Clone)]
pub struct NnueArgs {
    #[command(flatten)]
    pub common: CommonArgs,
    /// Labelled positions: any file `tune texel` reads (`FEN | score | wdl` from `xqtune
    /// datagen`, optionally gzipped) or packed files (`.xqp`); repeat for several.
    #[arg(long, num_args = 1..)]
    pub data: Vec<PathBuf>,
    /// Passes over the training positions.
    #[arg(long, default_value_t = 20)]
    pub epochs: u32,
    /// The network's inputs [default: xiangqi-planes, or jieqi-planes with --variant jieqi].
    #[arg(long, value_enum)]
    pub features: Option<Features>,
    /// Neurons of the feature transformer per perspective (a multiple of 32).
    #[arg(long, default_value_t = 256)]
    pub hidden: usize,
    /// Output buckets chosen by the number of pieces on the board.
    #[arg(long, default_value_t = 8)]
    pub buckets: usize,
    #[arg(long, value_enum, default_value = "screlu")]
    pub activation: ActivationArg,
    /// Positions per optimiser step (rounded to whole blocks of about 1024).
    #[arg(long, default_value_t = 16384)]
    pub batch_size: usize,
    /// Learning rate (AdamW).
    #[arg(long, default_value_t = 0.001)]
    pub lr: f32,
    #[arg(long, value_enum, default_value = "cosine")]
    pub lr_schedule: LrSchedArg,
    /// The cosine schedule's last rate [default: lr / 100].
    #[arg(long)]
    pub final_lr: Option<f32>,
    /// The step schedule's factor.
    #[arg(long, default_value_t = 0.3)]
    pub lr_gamma: f32,
    /// The step schedule's period in epochs.
    #[arg(long, default_value_t = 8)]
    pub lr_step: u32,
    /// AdamW's decoupled weight decay.
    #[arg(long, default_value_t = 0.01)]
    pub weight_decay: f32,
    /// Weight of the search score in the label, as `tune texel --lambda`: the target is
    /// `L·σ(score / E) + (1 − L)·result` (the default is docs/measurements.md's best).
    #[arg(long, default_value_t = 0.9)]
    pub lambda: f64,
    /// The label scale E in centipawns [default: fitted on the data].
    #[arg(long)]
    pub eval_scale: Option<f64>,
    /// Fraction of positions held out for the validation loss.
    #[arg(long, default_value_t = 0.02)]
    pub validation: f64,
    /// Use only the first N positions of the files.
    #[arg(long)]
    pub max_positions: Option<usize>,
    /// Start from this network's weights (its architecture replaces the shape flags).
    #[arg(long)]
    pub init_net: Option<PathBuf>,
    /// Verify against this network instead of the classical evaluation.
    #[arg(long)]
    pub baseline_net: Option<PathBuf>,
    /// Also learn every training position mirrored left to right (Xiangqi's rules are
    /// symmetric about the e-file): twice the samples from the same games (`--mirror false`
    /// to learn the positions as they are).
    #[arg(long, default_value_t = true, action = clap::ArgAction::Set)]
    pub mirror: bool,
}

/// The settings `config.json` records.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct NnueSettings {
    pub data: Vec<PathBuf>,
    pub epochs: u32,
    pub features: Features,
    pub hidden: usize,
    pub buckets: usize,
    pub activation: ActivationArg,
    pub batch_size: usize,
    pub lr: f32,
    pub lr_schedule: LrSchedArg,
    pub final_lr: f32,
    pub lr_gamma: f32,
    pub lr_step: u32,
    pub weight_decay: f32,
    #[serde(with = "files::exact")]
    pub lambda: f64,
    pub eval_scale: Option<f64>,
    #[serde(with = "files::exact")]
    pub validation: f64,
    pub max_positions: Option<usize>,
    pub init_net: Option<PathBuf>,
    pub baseline_net: Option<PathBuf>,
    #[serde(default)]
    pub mirror: bool,
}

impl From<&NnueArgs> for NnueSettings {
    fn from(a: &NnueArgs) -> NnueSettings {
        NnueSettings {
            data: a
                .data
                .iter()
                .map(|p| std::path::absolute(p).unwrap_or_else(|_| p.clone()))
                .collect(),
            epochs: a.epochs,
            features: a
                .features
                .unwrap_or(Features::default_for(a.common.variant)),
            hidden: a.hidden,
            buckets: a.buckets,
            activation: a.activation,
            batch_size: a.batch_size,
            lr: a.lr,
            lr_schedule: a.lr_schedule,
            final_lr: a.final_lr.unwrap_or(a.lr / 100.0),
            lr_gamma: a.lr_gamma,
            lr_step: a.lr_step,
            weight_decay: a.weight_decay,
            lambda: a.lambda,
            eval_scale: a.eval_scale,
            validation: a.validation,
            max_positions: a.max_positions,
            init_net: a.init_net.as_deref().map(network_path),
            baseline_net: a.baseline_net.as_deref().map(network_path),
            mirror: a.mirror,
        }
    }
}

/// `path` made absolute, so that `--resume` from another folder finds the same files.
/// A network flag's path made absolute (a resumed run may start elsewhere); the word
/// `embedded` ([`nnue::EMBEDDED_NAME`]) stays the name of the built-in network.
pub(crate) fn network_path(path: &Path) -> PathBuf {
    if path.as_os_str() == nnue::EMBEDDED_NAME {
        return path.to_path_buf();
    }
    std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf())
}

/// `--hidden`'s check, for a caller that passes it on to a later training (`learn`), so a bad
/// size is named before the work that precedes the training.
pub(crate) fn check_hidden(variant: Variant, hidden: usize) -> Result<(), TuneError> {
    let set = Features::default_for(variant).id();
    nnue::Architecture::new(set, hidden, 1, nnue::Activation::SCReLU)
        .validate()
        .map_err(|e| TuneError::Params(format!("--hidden: {e}")))
}

/// Centipawns per unit of network output (the file header's SCALE).
const SCALE: i32 = nnue::DEFAULT_SCALE;

impl NnueSettings {
    fn check(&self, variant: Variant) -> Result<(), TuneError> {
        let bad = |m: String| Err(TuneError::Params(m));
        let set = self.features.id();
        if set.variant() != variant {
            return bad(format!(
                "--features {set} describes {} positions, and this run is --variant {variant}",
                set.variant()
            ));
        }
        if self.data.is_empty() {
            return bad("tune nnue needs --data FILE (see xqtune datagen)".into());
        }
        for f in &self.data {
            if !f.exists() {
                return bad(format!("--data {}: no such file", f.display()));
            }
        }
        if !(0.0..=1.0).contains(&self.lambda) {
            return bad(format!(
                "--lambda {} is outside [0, 1] (the weight of the search score in the label)",
                self.lambda
            ));
        }
        if !(0.0..0.9).contains(&self.validation) {
            return bad(format!(
                "--validation {} is outside [0, 0.9)",
                self.validation
            ));
        }
        if let Some(e) = self.eval_scale
            && !(e.is_finite() && e > 0.0)
        {
            return bad(format!(
                "--eval-scale {e} must be a positive number of centipawns"
            ));
        }
        if self.epochs == 0 || self.batch_size == 0 {
            return bad("--epochs and --batch-size must be at least 1".into());
        }
        for (flag, v) in [
            ("--lr", self.lr),
            ("--final-lr", self.final_lr),
            ("--lr-gamma", self.lr_gamma),
        ] {
            if !(v.is_finite() && v > 0.0) {
                return bad(format!("{flag} must be a positive number, not {v}"));
            }
        }
        if !(self.weight_decay.is_finite() && self.weight_decay >= 0.0) {
            return bad(format!(
                "--weight-decay must be 0 or a positive number, not {}",
                self.weight_decay
            ));
        }
        if self.lr_step == 0 {
            return bad("--lr-step must be at least 1 epoch".into());
        }
        Ok(())
    }

    fn schedule(&self) -> Schedule {
        Schedule {
            epochs: self.epochs,
            batch_size: self.batch_size,
            lr: match self.lr_schedule {
                LrSchedArg::Cosine => LrSchedule::Cosine {
                    lr: self.lr,
                    final_lr: self.final_lr,
                    epochs: self.epochs,
                },
                LrSchedArg::Step => LrSchedule::Step {
                    lr: self.lr,
                    gamma: self.lr_gamma,
                    every: self.lr_step,
                },
                LrSchedArg::Constant => LrSchedule::Constant { lr: self.lr },
            },
        }
    }

    /// The inference architecture: from `--init-net` when given, else from the flags.
    fn architecture(
        &self,
        variant: Variant,
    ) -> Result<(nnue::Architecture, Option<Network>), TuneError> {
        if let Some(path) = &self.init_net {
            let net = Network::load_named(path, variant)
                .map_err(|e| TuneError::Params(format!("--init-net {}: {e}", path.display())))?;
            return Ok((net.architecture(), Some(Network::clone(&net))));
        }
        let activation = match self.activation {
            ActivationArg::Crelu => nnue::Activation::CReLU,
            ActivationArg::Screlu => nnue::Activation::SCReLU,
        };
        let arch =
            nnue::Architecture::new(self.features.id(), self.hidden, self.buckets, activation);
        arch.validate()
            .map_err(|e| TuneError::Params(format!("network shape: {e}")))?;
        Ok((arch, None))
    }
}

/// The trainer's view of an inference architecture.
fn train_arch(a: &nnue::Architecture) -> train::Architecture {
    train::Architecture {
        inputs: a.inputs(),
        hidden: a.hidden,
        buckets: a.buckets,
        max_active: a.feature_set.max_active(),
        activation: match a.activation {
            nnue::Activation::CReLU => train::Activation::Crelu,
            nnue::Activation::SCReLU => train::Activation::Screlu,
        },
    }
}

/// The trained floats as the inference's float network (the layouts are the same).
fn float_network(
    arch: &nnue::Architecture,
    net: &train::Network,
    description: String,
) -> FloatNetwork {
    let mut f = FloatNetwork::zeros(*arch);
    f.ft_weights.copy_from_slice(net.ft_weights());
    f.ft_bias.copy_from_slice(net.ft_bias());
    f.out_weights.copy_from_slice(net.out_weights());
    f.out_bias.copy_from_slice(net.out_bias());
    f.description = description;
    f
}

/// A quantised network's weights as the trainer's floats (to continue from it).
fn from_network(net: &Network) -> Result<train::Network, TuneError> {
    let f = net.to_float();
    let arch = train_arch(&net.architecture());
    let params: Vec<f32> = [f.ft_weights, f.ft_bias, f.out_weights, f.out_bias].concat();
    train::Network::from_params(arch, params).map_err(|e| TuneError::Params(e.to_string()))
}

/// The checkpoint of a run: where it is, beside the trainer's own file of that epoch.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct NnueState {
    /// Completed epochs; the trainer's state is `checkpoints/trainer-<epoch>.bin`.
    pub epoch: u32,
    /// The label scale E the run trains with.
    #[serde(with = "files::exact")]
    pub eval_scale: f64,
    pub start_vec: Vec<i32>,
    pub done: bool,
}

/// Every rank's share of the data.
pub struct NnueData(pub Distributed<NnueShare>);

impl NnueData {
    fn sums(&self, q: &NnueQuery) -> Result<ExactSum, TuneError> {
        let mut total = ExactSum::zeros(0);
        for a in self.0.ask(q) {
            match a {
                NnueAnswer::Sum(s) => total.merge(&s),
                NnueAnswer::Done(Err(e)) => return Err(TuneError::Optimiser(e)),
                _ => return Err(TuneError::Optimiser("a share answered out of turn".into())),
            }
        }
        Ok(total)
    }

    fn blocks(&self, subset: Subset) -> Result<Vec<(u32, u32)>, TuneError> {
        let mut all = Vec::new();
        for a in self.0.ask(&NnueQuery::Blocks(subset)) {
            match a {
                NnueAnswer::Blocks(b) => all.extend(b),
                _ => return Err(TuneError::Optimiser("a share answered out of turn".into())),
            }
        }
        all.sort_unstable();
        Ok(all)
    }

    fn set_targets(&self, eval_scale: f64, lambda: f64) -> Result<(), TuneError> {
        for a in self.0.ask(&NnueQuery::SetTargets { eval_scale, lambda }) {
            match a {
                NnueAnswer::Done(Ok(())) => {}
                NnueAnswer::Done(Err(e)) => return Err(TuneError::Params(e)),
                _ => return Err(TuneError::Optimiser("a share answered out of turn".into())),
            }
        }
        Ok(())
    }

    /// The label scale E minimising `Σ (σ(score / E) − result)²` over the training labels:
    /// golden-section search on `ln E` over 10 to 10000 centipawns.
    fn fit_eval_scale(&self) -> Result<f64, TuneError> {
        let loss = |ln_e: f64| -> Result<f64, TuneError> {
            Ok(self
                .sums(&NnueQuery::LabelLoss {
                    eval_scale: ln_e.exp(),
                })?
                .mean_loss())
        };
        let phi = (5f64.sqrt() - 1.0) / 2.0;
        let (mut a, mut b) = (10f64.ln(), 10_000f64.ln());
        let mut c = b - phi * (b - a);
        let mut d = a + phi * (b - a);
        let (mut fc, mut fd) = (loss(c)?, loss(d)?);
        for _ in 0..40 {
            if fc < fd {
                b = d;
                d = c;
                fd = fc;
                c = b - phi * (b - a);
                fc = loss(c)?;
            } else {
                a = c;
                c = d;
                fc = fd;
                d = a + phi * (b - a);
                fd = loss(d)?;
            }
        }
        Ok(((a + b) / 2.0).exp())
    }
}

/// `tune nnue` as a [`Tuner`]: one epoch per step.
pub struct NnueTuner {
    dir: PathBuf,
    settings: RunSettings<NnueSettings>,
    start: ParamSet,
    arch: nnue::Architecture,
    config: TrainConfig,
    /// Built at the first step (from the checkpoint on a resumed run).
    trainer: Option<Trainer>,
    init: Option<Network>,
    data: NnueData,
    /// Whether the shares' targets are set (a resumed run sets them at its first step).
    targets: bool,
    /// Every training block of every rank: (id, positions), by id.
    blocks: Vec<(u32, u32)>,
}

impl NnueTuner {
    pub fn new(ctx: &RunContext<NnueSettings>) -> Result<NnueTuner, TuneError> {
        let s = &ctx.settings.tuner;
        let variant = ctx.settings.common.variant;
        s.check(variant)?;
        let (arch, init) = s.architecture(variant)?;
        let tarch = train_arch(&arch);
        let ParamSet::Eval(eval) = &ctx.start else {
            return Err(TuneError::Space(
                "tune nnue plays the evaluation space".into(),
            ));
        };
        let spec = NnueSpec {
            files: s.data.clone(),
            max_positions: s.max_positions,
            validation: s.validation,
            seed: ctx.settings.common.seed,
            variant: ctx.settings.common.variant,
            features: arch.feature_set,
            arch: tarch,
            eval: eval.clone(),
            needs_score: s.lambda > 0.0,
            mirror: s.mirror,
        };
        let t0 = Instant::now();
        let data = match crate::exec::load::<NnueShare>(&spec) {
            Ok(d) => NnueData(d),
            Err(ExecError::Here(e)) => return Err(e),
            Err(e @ ExecError::Rank { .. }) => return Err(TuneError::Io(e.to_string())),
        };
        let (held, bytes) = data.0.local().held();
        crate::outln!(
            "nnue: {} training + {} validation positions on {} rank(s), loaded in {:.1}s; \
             {:.0} MB here ({:.0} bytes per position)",
            data.0.local().train_len,
            data.0.local().val_len,
            data.0.ranks(),
            t0.elapsed().as_secs_f64(),
            bytes as f64 / 1e6,
            bytes as f64 / held.max(1) as f64
        );
        let blocks = data.blocks(Subset::Train)?;
        let config = TrainConfig {
            arch: tarch,
            loss: LossSettings {
                scale: SCALE as f32,
                // replaced by the fitted E before the first step
                eval_scale: 400.0,
                power: 2.0,
            },
            optimiser: AdamWSettings {
                decay: s.weight_decay,
                ..AdamWSettings::default()
            },
            schedule: s.schedule(),
            chunk_size: TrainConfig::DEFAULT_CHUNK,
            seed: ctx.settings.common.seed,
        };
        Ok(NnueTuner {
            dir: ctx.dir.clone(),
            settings: ctx.settings.clone(),
            start: ctx.start.clone(),
            arch,
            config,
            trainer: None,
            init,
            data,
            targets: false,
            blocks,
        })
    }

    fn trainer_path(&self, epoch: u32) -> PathBuf {
        self.dir
            .join("checkpoints")
            .join(format!("trainer-{epoch:04}.bin"))
    }

    /// Builds the trainer of `state` if there is none yet: fresh (or from `--init-net`) at
    /// epoch 0, else the checkpoint's.
    fn ensure_trainer(&mut self, state: &NnueState) -> Result<(), TuneError> {
        if self.trainer.is_none() {
            let mut config = self.config.clone();
            config.loss.eval_scale = state.eval_scale as f32;
            let t = if state.epoch == 0 {
                match &self.init {
                    Some(net) => Trainer::with_network(config, from_network(net)?),
                    None => Trainer::new(config),
                }
                .map_err(|e| TuneError::Optimiser(e.to_string()))?
            } else {
                let path = self.trainer_path(state.epoch);
                let bytes = std::fs::read(&path).map_err(|e| files::io_err(&path, e))?;
                let t = Trainer::from_bytes(&bytes)
                    .map_err(|e| TuneError::Resume(format!("{}: {e}", path.display())))?;
                if t.epoch() != state.epoch {
                    return Err(TuneError::Resume(format!(
                        "{} holds epoch {}, the checkpoint says {}",
                        path.display(),
                        t.epoch(),
                        state.epoch
                    )));
                }
                t
            };
            self.trainer = Some(t);
        }
        Ok(())
    }

    fn trainer(&self) -> &Trainer {
        match &self.trainer {
            Some(t) => t,
            None => unreachable!("ensure_trainer runs first"),
        }
    }

    fn loss(&self, subset: Subset) -> Result<f64, TuneError> {
        let trainer = self.trainer();
        Ok(self
            .data
            .sums(&NnueQuery::Loss {
                params: trainer.network().params().to_vec(),
                loss: trainer.config().loss,
                subset,
            })?
            .mean_loss())
    }

    /// The quantised network of the trainer, described by the run.
    fn quantised(&self) -> Result<Network, TuneError> {
        let trainer = self.trainer();
        let s = &self.settings.tuner;
        let description = format!(
            "xqtune tune nnue {}: epoch {} of {}, {} training positions from {}, lambda {}, \
             E {:.1}, lr {} ({:?}), batch {}, seed {}",
            self.settings.common.name,
            trainer.epoch(),
            s.epochs,
            self.data.0.local().train_len,
            s.data
                .iter()
                .map(|p| p
                    .file_name()
                    .map_or("?".into(), |n| n.to_string_lossy().to_string()))
                .collect::<Vec<_>>()
                .join(", "),
            s.lambda,
            trainer.config().loss.eval_scale,
            s.lr,
            s.lr_schedule,
            s.batch_size,
            self.settings.common.seed,
        );
        float_network(&self.arch, trainer.network(), description)
            .quantise()
            .map_err(|e| TuneError::Optimiser(format!("quantising the network: {e}")))
    }
}

impl Tuner for NnueTuner {
    const NAME: &'static str = "nnue";
    const COMMAND: &'static str = "xqtune tune nnue";
    const STEP: &'static str = "epoch";
    const LOG_HEADER: &'static str = "epoch,train_loss,val_loss,lr,time_s";
    type Settings = NnueSettings;
    type State = NnueState;

    fn start_vec(state: &NnueState) -> &[i32] {
        &state.start_vec
    }

    fn log_rows(state: &NnueState) -> usize {
        state.epoch as usize + 1
    }

    fn total_steps(&self) -> u64 {
        self.settings.tuner.epochs as u64
    }

    fn steps_done(&self, state: &NnueState) -> u64 {
        state.epoch as u64
    }

    fn banner(&self) -> String {
        format!(
            "nnue: {} x {} ({:?}, {} buckets), {} parameters",
            self.arch.feature_set,
            self.arch.hidden,
            self.arch.activation,
            self.arch.buckets,
            train_arch(&self.arch).parameters()
        )
    }

    /// Fits the label scale (unless given), sets the targets, and logs the starting losses.
    fn start(&mut self) -> Result<(NnueState, Option<Vec<String>>), TuneError> {
        let s = &self.settings.tuner;
        let eval_scale = match s.eval_scale {
            Some(e) => e,
            None => self.data.fit_eval_scale()?,
        };
        self.data.set_targets(eval_scale, s.lambda)?;
        let classical = self
            .data
            .sums(&NnueQuery::ClassicalLoss {
                eval_scale,
                lambda: s.lambda,
                subset: Subset::Val,
            })?
            .mean_loss();
        crate::outln!(
            "label scale E = {eval_scale:.1} centipawns; the classical evaluation's validation \
             loss: {classical:.6}"
        );
        self.targets = true;
        let state = NnueState {
            epoch: 0,
            eval_scale,
            start_vec: self.start.to_vec(),
            done: false,
        };
        self.ensure_trainer(&state)?;
        let (tl, vl) = (self.loss(Subset::Train)?, self.loss(Subset::Val)?);
        let bytes = self.trainer().to_bytes();
        let path = self.trainer_path(0);
        crate::util::write_atomic(&path, &bytes).map_err(|e| files::io_err(&path, e))?;
        Ok((
            state,
            Some(vec![
                "0".into(),
                csv_float(tl),
                csv_float(vl),
                csv_float(0.0),
            ]),
        ))
    }

    fn finished(&self, state: &NnueState) -> bool {
        state.done || state.epoch >= self.settings.tuner.epochs
    }

    fn step(&mut self, state: &mut NnueState) -> Result<Option<Step>, TuneError> {
        if !self.targets {
            self.data
                .set_targets(state.eval_scale, self.settings.tuner.lambda)?;
            self.targets = true;
        }
        let per_batch = (self.settings.tuner.batch_size / data::BLOCK).max(1);
        let seed = self.settings.common.seed;
        let mut order: Vec<u32> = self.blocks.iter().map(|b| b.0).collect();
        order.shuffle(&mut ChaCha8Rng::seed_from_u64(mix(
            seed,
            &[0x5b10c, state.epoch as u64],
        )));
        let batches: Vec<Vec<u32>> = order.chunks(per_batch).map(<[u32]>::to_vec).collect();
        let n = batches.len() as u64;
        let mut train = ExactSum::zeros(0);
        let mut last_lr = 0.0;
        self.ensure_trainer(state)?;
        for blocks in batches {
            let (params, loss) = {
                let t = self.trainer();
                (t.network().params().to_vec(), t.config().loss)
            };
            let sum = self.data.sums(&NnueQuery::Gradient {
                params,
                loss,
                blocks,
            })?;
            let mut l = ExactSum::zeros(0);
            l.loss = sum.loss;
            l.samples = sum.samples;
            train.merge(&l);
            let g = sum.to_gradient();
            last_lr = match &mut self.trainer {
                Some(t) => t.apply_planned(&g, n),
                None => unreachable!("ensure_trainer ran"),
            }
            .map_err(|e| TuneError::Optimiser(e.to_string()))?;
        }
        state.epoch += 1;
        let trainer = self.trainer();
        if trainer.epoch() != state.epoch {
            return Err(TuneError::Optimiser(format!(
                "the trainer is at epoch {} after epoch {}",
                trainer.epoch(),
                state.epoch
            )));
        }
        let vl = self.loss(Subset::Val)?;
        let tl = train.mean_loss();
        // the trainer's checkpoint first, then (by the driver) the state that names it
        let path = self.trainer_path(state.epoch);
        crate::util::write_atomic(&path, &self.trainer().to_bytes())
            .map_err(|e| files::io_err(&path, e))?;
        let net = self.quantised()?;
        let net_path = self
            .dir
            .join("checkpoints")
            .join(format!("epoch-{:04}.nnue", state.epoch));
        net.save(&net_path)
            .map_err(|e| TuneError::Io(format!("{}: {e}", net_path.display())))?;
        if state.epoch >= 2 {
            let _ = std::fs::remove_file(self.trainer_path(state.epoch - 2));
        }
        Ok(Some(Step {
            row: vec![
                state.epoch.to_string(),
                csv_float(tl),
                csv_float(vl),
                format!("{last_lr:e}"),
            ],
            message: format!("train {tl:.6} val {vl:.6}"),
        }))
    }

    fn best_so_far(&self, _state: &NnueState) -> Option<Vec<i32>> {
        None
    }

    /// Writes `best.nnue` (the last epoch's network) and names the engines the verification
    /// plays: the network against the classical evaluation, or against `--baseline-net`.
    fn best(&mut self, state: &mut NnueState) -> Result<Tuned, TuneError> {
        state.done = true;
        self.ensure_trainer(state)?;
        let net = self.quantised()?;
        let path = self.dir.join("best.nnue");
        net.save(&path)
            .map_err(|e| TuneError::Io(format!("{}: {e}", path.display())))?;
        crate::outln!("network: {} ({})", path.display(), net.description());
        let baseline = match &self.settings.tuner.baseline_net {
            Some(p) => {
                let n = Network::load_named(p, self.settings.common.variant).map_err(|e| {
                    TuneError::Params(format!("--baseline-net {}: {e}", p.display()))
                })?;
                Some(Network::clone(&n))
            }
            None => None,
        };
        Ok(Tuned::Network {
            file: path,
            tuned: Box::new(net),
            baseline: baseline.map(Box::new),
        })
    }
}

/// `xqtune tune nnue`.
pub fn run_nnue(args: &NnueArgs) -> Result<RunOutcome, TuneError> {
    install_ctrlc();
    run_nnue_with(args, None)
}

/// [`run_nnue`] stopping after `max_steps` epochs as Ctrl-C would (tests).
pub fn run_nnue_with(args: &NnueArgs, max_steps: Option<u64>) -> Result<RunOutcome, TuneError> {
    if args.common.resume.is_none() {
        let e = &args.common.engine;
        if e.engine.is_some() || !e.opponent.is_empty() {
            return Err(TuneError::Params(
                "tune nnue trains xqtune's network: --engine and --opponent are for tune spsa \
                 and tune ga"
                    .into(),
            ));
        }
        NnueSettings::from(args).check(args.common.variant)?;
    }
    driver::launch(
        &args.common,
        NnueSettings::from(args),
        NnueTuner::new,
        max_steps,
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Parser)]
    struct Cli {
        #[command(flatten)]
        a: NnueArgs,
    }

    fn scratch(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("xqtune-nnue-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    /// A small run on the CCPD quiet positions (results only: `--lambda 0`).
    fn args(out: &Path, extra: &[&str]) -> NnueArgs {
        let data = concat!(env!("CARGO_MANIFEST_DIR"), "/datasets/ccpd-quiet.epd.gz");
        let mut v = vec![
            "t",
            "--data",
            data,
            "--max-positions",
            "6000",
            "--epochs",
            "3",
            "--hidden",
            "32",
            "--buckets",
            "2",
            "--batch-size",
            "2048",
            "--lambda",
            "0",
            "--verify",
            "none",
            "--name",
            "n",
            "--out",
            out.to_str().unwrap(),
        ];
        v.extend_from_slice(extra);
        Cli::parse_from(v).a
    }

    fn best(dir: &Path) -> Vec<u8> {
        std::fs::read(dir.join("best.nnue")).unwrap()
    }

    #[test]
    fn same_network_at_any_thread_count_and_after_a_resume() {
        let d = scratch("repro");
        let one = run_nnue_with(&args(&d.join("one"), &["--concurrency", "1"]), None).unwrap();
        let three = run_nnue_with(&args(&d.join("three"), &["--concurrency", "3"]), None).unwrap();
        assert!(one.finished && three.finished);
        assert_eq!(best(&one.dir), best(&three.dir));
        // stopped after the first epoch, then resumed
        let cut = run_nnue_with(&args(&d.join("cut"), &["--concurrency", "2"]), Some(1)).unwrap();
        assert!(!cut.finished);
        assert!(!cut.dir.join("best.nnue").exists());
        let dir = cut.dir.to_str().unwrap().to_string();
        let resumed = run_nnue_with(&args(&d.join("cut"), &["--resume", &dir]), None).unwrap();
        assert!(resumed.finished);
        assert_eq!(best(&one.dir), best(&resumed.dir));
        // the log has the starting losses and one row per epoch, falling
        let log = std::fs::read_to_string(one.dir.join("log.csv")).unwrap();
        let losses: Vec<f64> = log
            .lines()
            .skip(1)
            .map(|l| l.split(',').nth(1).unwrap().parse().unwrap())
            .collect();
        assert_eq!(losses.len(), 4, "{log}");
        assert!(losses[3] < losses[0], "{log}");
        // the network loads, describes its run and evaluates
        let net = Network::load(&one.dir.join("best.nnue")).unwrap();
        assert!(
            net.description().contains("tune nnue n: epoch 3 of 3"),
            "{}",
            net.description()
        );
        assert_eq!(net.architecture().hidden, 32);
        let start = crate::core::Position::startpos();
        assert!(net.evaluate_position(&start).abs() < 2000);
        // promote: refused without a significant verification, else the file as it is
        let dest = d.join("xiangqi.nnue");
        assert!(super::super::promote(&one.dir, Some(dest.clone()), false).is_err());
        assert!(!dest.exists());
        super::super::promote(&one.dir, Some(dest.clone()), true).unwrap();
        assert_eq!(std::fs::read(&dest).unwrap(), best(&one.dir));
        let _ = std::fs::remove_dir_all(&d);
    }

    /// `--init-net embedded` continues from the network built into the binary: the run's
    /// network has its shape (not the flags'), and the name survives the run's config.
    #[test]
    fn continues_from_the_embedded_network() {
        let d = scratch("embedded");
        let mut a = args(&d, &["--init-net", "embedded"]);
        a.epochs = 1;
        assert_eq!(
            NnueSettings::from(&a).init_net.as_deref(),
            Some(Path::new(nnue::EMBEDDED_NAME))
        );
        let embedded = Network::embedded(Variant::Xiangqi).expect("this build embeds a network");
        let o = run_nnue_with(&a, None).unwrap();
        let net = Network::load(&o.dir.join("best.nnue")).unwrap();
        assert_eq!(net.architecture(), embedded.architecture());
        assert_ne!(net.architecture().hidden, 32, "the flags' shape");
        let _ = std::fs::remove_dir_all(&d);
    }

    #[test]
    fn bad_input_is_named() {
        let d = scratch("bad");
        let e = run_nnue_with(&args(&d, &["--data", "/no/such/file.txt"]), None)
            .unwrap_err()
            .to_string();
        assert!(e.contains("/no/such/file.txt"), "{e}");
        // result-only rows cannot feed a score blend
        let mut a = args(&d, &[]);
        a.lambda = 0.5;
        let e = run_nnue_with(&a, None).unwrap_err().to_string();
        assert!(
            e.contains("ccpd-quiet.epd.gz line 1") && e.contains("--lambda"),
            "{e}"
        );
        let mut a = args(&d, &[]);
        a.hidden = 48;
        let e = run_nnue_with(&a, None).unwrap_err().to_string();
        assert!(e.contains("48"), "{e}");
        // a network trains on positions, not against engines
        let e = run_nnue_with(&args(&d, &["--opponent", "x"]), None)
            .unwrap_err()
            .to_string();
        assert!(e.contains("--engine and --opponent are for"), "{e}");
        let _ = std::fs::remove_dir_all(&d);
    }
}
