//! Texel tuning (Peter Österlund, 2014; chessprogramming.org "Texel's Tuning Method") with
//! analytic gradients: minimise the mean squared error between the game result and the win
//! probability `σ(K·e) = 1 / (1 + 10^(−K·e/400))` of the evaluation `e` (red's view), over a
//! labelled dataset.
//!
//! The evaluation is linear in its parameters (`eval::trace`: `e = constant + Σ coeff·param`,
//! the coefficients already carrying the phase weights of the tapered evaluation), so each
//! position's trace is computed once, stored sparsely (CSR), and every loss/gradient evaluation
//! is a parallel pass over those arrays (rayon) instead of re-running the evaluation: the
//! approach of Ethereal's and Andrew Grant's texel-tuner `get_coefficients`. Parameters that
//! are not selected are folded into each position's constant.
//!
//! K is fitted first with Brent's method (argmin `BrentOpt`) at the starting parameters and then
//! held fixed (K and the parameter scale are otherwise interchangeable); the parameters are then
//! optimised with argmin's L-BFGS and a More-Thuente line search over `Vec<f64>`. One epoch = one
//! L-BFGS iteration; train and validation losses are logged after each. For sets too large for
//! a full pass per step, `--optimiser adam|adagrad` steps per mini-batch instead ([`super::adam`]).
//!
//! - [`trace`]: the traces, stored compactly, and the loss and gradient sums over them;
//! - [`data`]: the dataset file as shards of traces on every rank, summed in a fixed order;
//! - [`fit`]: the objective, the fit of K and L-BFGS one iteration at a time;
//! - here: the command, its settings and checkpoint, and the [`Tuner`] the driver runs.

pub mod data;
pub mod fit;
pub mod trace;

use super::TuneError;
use super::adam::{self, Moments, Optimiser, Rule};
use super::common::CommonArgs;
use super::dataset;
use super::driver::{self, RunContext, RunOutcome, RunSettings, Step, Tuned, Tuner};
use super::files::{self, csv_float};
use super::space::{ParamSet, Space, SpaceKind};
use super::stop::install_ctrlc;
use crate::eval::EvalParams;
use data::{LoadSpec, Subset, TexelDataset};
use fit::{LbfgsStepper, ResultsObjective, TrainObjective, fit_k};
use serde::{Deserialize, Serialize};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;
use trace::CHUNK;

/// `xqtune tune texel`.
#[derive(clap::Args, Debug, Clone)]
pub struct TexelArgs {
    #[command(flatten)]
    pub common: CommonArgs,
    /// Labelled positions (`FEN | score | wdl` as `xqtune datagen` writes them, `FEN | 1-0` and the
    /// other formats of `tune::dataset`; optionally gzipped), or a packed `.xqp` file.
    #[arg(long)]
    pub data: Option<PathBuf>,
    /// L-BFGS iterations.
    #[arg(long, default_value_t = 100)]
    pub epochs: u64,
    /// Fraction of positions held out for the validation loss.
    #[arg(long, default_value_t = 0.1)]
    pub validation: f64,
    /// Use this K instead of fitting it.
    #[arg(long)]
    pub k: Option<f64>,
    /// L-BFGS memory (number of correction pairs) [default: 7].
    #[arg(long)]
    pub memory: Option<usize>,
    /// Use only the first N positions of the file.
    #[arg(long)]
    pub max_positions: Option<usize>,
    /// Weight of the search score in the label (nnue-pytorch's lambda): the target is
    /// `L·σ(K·score) + (1−L)·result`, K fitted on the results alone; needs `FEN | score | wdl`
    /// rows when above 0.
    #[arg(long, default_value_t = 0.0)]
    pub lambda: f64,
    /// The K of the search scores in the label, `σ(K·score)`: `auto` fits it on the scores
    /// against the results, for scores from another engine (`xqtune label`), whose centipawns
    /// are not the evaluation's; a number sets it. Default: the evaluation's K.
    #[arg(long, value_parser = parse_score_k)]
    pub score_k: Option<ScoreK>,
    /// How the parameters move: full-batch L-BFGS (one iteration per epoch), or mini-batch
    /// Adam or AdaGrad (one epoch = one pass over the training positions in shuffled batches).
    #[arg(long, value_enum, default_value_t = Optimiser::Lbfgs)]
    pub optimiser: Optimiser,
    /// Adam/AdaGrad: positions per batch, rounded up to whole chunks of 8192 [default: 16384].
    #[arg(long)]
    pub batch_size: Option<usize>,
    /// Adam/AdaGrad: learning rate, about the centipawns a step moves a parameter
    /// [default: 1 for adam, 10 for adagrad].
    #[arg(long)]
    pub lr: Option<f64>,
    /// Adam: decay of the first moment [default: 0.9].
    #[arg(long)]
    pub beta1: Option<f64>,
    /// Adam: decay of the second moment [default: 0.999].
    #[arg(long)]
    pub beta2: Option<f64>,
    /// Adam/AdaGrad: added to the root of the second moment [default: 1e-8].
    #[arg(long)]
    pub eps: Option<f64>,
}

/// L-BFGS correction pairs unless `--memory` says otherwise.
pub const DEFAULT_MEMORY: usize = 7;

/// Positions per mini-batch unless `--batch-size` says otherwise (two chunks).
pub const DEFAULT_BATCH: usize = 2 * CHUNK;

impl TexelArgs {
    /// Rejects optimiser flags out of range or given to an optimiser that does not read them
    /// (a silently ignored `--lr` would make a run look tuned that was not).
    pub fn check(&self) -> Result<(), TuneError> {
        let bad = |m: String| Err(TuneError::Optimiser(m));
        let o = self.optimiser;
        if o.is_minibatch() && self.memory.is_some() {
            return bad("--memory is L-BFGS's; it does not apply to a mini-batch optimiser".into());
        }
        if self.memory == Some(0) {
            return bad("--memory must be at least 1 correction pair".into());
        }
        let given = [
            ("--batch-size", self.batch_size.is_some()),
            ("--lr", self.lr.is_some()),
            ("--beta1", self.beta1.is_some()),
            ("--beta2", self.beta2.is_some()),
            ("--eps", self.eps.is_some()),
        ];
        for (flag, set) in given {
            let reads = match flag {
                "--beta1" | "--beta2" => o == Optimiser::Adam,
                _ => o.is_minibatch(),
            };
            if set && !reads {
                return bad(format!(
                    "{flag} does not apply to --optimiser {}",
                    clap::ValueEnum::to_possible_value(&o)
                        .map_or("?".into(), |v| v.get_name().to_string())
                ));
            }
        }
        if self.batch_size == Some(0) {
            return bad("--batch-size must be at least 1 position".into());
        }
        if let Some(lr) = self.lr
            && !(lr.is_finite() && lr > 0.0)
        {
            return bad(format!("--lr must be a positive number, not {lr}"));
        }
        for (flag, b) in [("--beta1", self.beta1), ("--beta2", self.beta2)] {
            if let Some(b) = b
                && !(0.0..1.0).contains(&b)
            {
                return bad(format!("{flag} must lie in [0, 1), not {b}"));
            }
        }
        if let Some(e) = self.eps
            && !(e.is_finite() && e > 0.0)
        {
            return bad(format!("--eps must be a positive number, not {e}"));
        }
        Ok(())
    }
}

/// Texel's settings as `config.json` records them: the flags of [`TexelArgs`], field for field
/// (see [`super::common::CommonSettings`] for why they are a type of their own).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct TexelSettings {
    pub data: Option<PathBuf>,
    pub epochs: u64,
    pub validation: f64,
    pub k: Option<f64>,
    pub memory: usize,
    pub max_positions: Option<usize>,
    /// (Absent from run folders written before `--lambda`: results only.)
    #[serde(default)]
    pub lambda: f64,
    /// `--score-k` (absent from run folders written before it: the evaluation's K).
    #[serde(default)]
    pub score_k: Option<ScoreK>,
    /// The optimiser and its constants (defaults: what runs written before they existed did).
    #[serde(default)]
    pub optimiser: Optimiser,
    #[serde(default = "default_batch")]
    pub batch_size: usize,
    #[serde(default = "default_lr", with = "files::exact")]
    pub lr: f64,
    #[serde(default = "default_beta1", with = "files::exact")]
    pub beta1: f64,
    #[serde(default = "default_beta2", with = "files::exact")]
    pub beta2: f64,
    #[serde(default = "default_eps", with = "files::exact")]
    pub eps: f64,
}

fn default_batch() -> usize {
    DEFAULT_BATCH
}
fn default_lr() -> f64 {
    Optimiser::Adam.default_lr()
}
fn default_beta1() -> f64 {
    0.9
}
fn default_beta2() -> f64 {
    0.999
}
fn default_eps() -> f64 {
    1e-8
}

/// `--score-k`: how the search scores of the labels are turned into expected results.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ScoreK {
    /// Fitted on the scores against the results, before the run.
    Auto,
    Value(f64),
}

fn parse_score_k(text: &str) -> Result<ScoreK, String> {
    if text == "auto" {
        return Ok(ScoreK::Auto);
    }
    match text.parse::<f64>() {
        Ok(k) if k > 0.0 && k.is_finite() => Ok(ScoreK::Value(k)),
        _ => Err(format!("'{text}' is neither `auto` nor a positive number")),
    }
}

impl TexelSettings {
    /// The mini-batch update rule these settings describe.
    pub fn rule(&self) -> Rule {
        Rule {
            optimiser: self.optimiser,
            lr: self.lr,
            beta1: self.beta1,
            beta2: self.beta2,
            eps: self.eps,
        }
    }
}

impl From<&TexelArgs> for TexelSettings {
    fn from(a: &TexelArgs) -> TexelSettings {
        TexelSettings {
            data: a.data.clone(),
            epochs: a.epochs,
            validation: a.validation,
            k: a.k,
            memory: a.memory.unwrap_or(DEFAULT_MEMORY),
            max_positions: a.max_positions,
            lambda: a.lambda,
            score_k: a.score_k,
            optimiser: a.optimiser,
            batch_size: a.batch_size.unwrap_or(DEFAULT_BATCH),
            lr: a.lr.unwrap_or(a.optimiser.default_lr()),
            beta1: a.beta1.unwrap_or_else(default_beta1),
            beta2: a.beta2.unwrap_or_else(default_beta2),
            eps: a.eps.unwrap_or_else(default_eps),
        }
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TexelState {
    /// Completed epochs.
    pub epoch: u64,
    #[serde(with = "files::exact::vec")]
    pub theta: Vec<f64>,
    #[serde(with = "files::exact")]
    pub k: f64,
    pub start_vec: Vec<i32>,
    pub done: bool,
    /// Adam's or AdaGrad's memory (absent under L-BFGS, whose checkpoints stay as they were).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub moments: Option<Moments>,
}

/// Texel tuning as a [`Tuner`]: one L-BFGS iteration or one mini-batch epoch per step, after K
/// is fitted at the start.
pub struct TexelTuner {
    settings: RunSettings<TexelSettings>,
    space: Space,
    start: ParamSet,
    data: Arc<TexelDataset>,
    /// Built at the first step, from the checkpoint's θ on a resumed run (with fresh L-BFGS
    /// memory: the correction pairs are not checkpointed).
    lbfgs: Option<LbfgsStepper>,
    /// Mini-batch mode: every training chunk of the file (id, positions), gathered at the
    /// first epoch.
    chunks: Option<Vec<(usize, usize)>>,
}

impl TexelTuner {
    /// Loads, splits and traces the dataset.
    pub fn new(ctx: &RunContext<TexelSettings>) -> Result<TexelTuner, TuneError> {
        let a = &ctx.settings.tuner;
        let data = a
            .data
            .as_ref()
            .ok_or_else(|| TuneError::Io("texel needs --data FILE (see xqtune datagen)".into()))?;
        // The run's variant chooses the verification match: it must be the data's.
        let (found, want) = (dataset::variant_of(data)?, ctx.settings.common.variant);
        if found != want {
            return Err(TuneError::Io(format!(
                "the run is --variant {want} but {} holds {found} positions (its first position \
                 is a {found} FEN): use --variant {found}",
                data.display()
            )));
        }
        let t_load = Instant::now();
        let ParamSet::Eval(base) = &ctx.space.base else {
            return Err(TuneError::Space(
                "texel tunes evaluation parameters only".into(),
            ));
        };
        let spec = LoadSpec {
            data: data.clone(),
            max_positions: a.max_positions,
            validation: a.validation,
            seed: ctx.settings.common.seed,
            eval: base.clone(),
            only: ctx.settings.common.only.clone(),
            lambda: a.lambda,
            score_k: match a.score_k {
                Some(_) if a.lambda == 0.0 => None,
                Some(ScoreK::Value(k)) => Some(k),
                Some(ScoreK::Auto) => {
                    let k = fit::fit_score_k(data, a.max_positions)?;
                    crate::outln!("K of the search scores = {k:.4} (fitted on the results)");
                    Some(k)
                }
                None => None,
            },
        };
        let data = TexelDataset::load(&spec)?;
        let (held, bytes) = data.local().shards.iter().fold((0, 0), |(n, b), s| {
            (
                n + s.train.len() + s.val.len(),
                b + s.train.bytes() + s.val.bytes(),
            )
        });
        crate::outln!(
            "texel: {} train + {} validation positions, loaded and traced in {:.1}s; \
             traces {:.0} MB here ({:.0} bytes per position)",
            data.local().train_len,
            data.local().val_len,
            t_load.elapsed().as_secs_f64(),
            bytes as f64 / 1e6,
            bytes as f64 / held.max(1) as f64,
        );
        Ok(TexelTuner {
            settings: ctx.settings.clone(),
            space: ctx.space.clone(),
            start: ctx.start.clone(),
            data: Arc::new(data),
            lbfgs: None,
            chunks: None,
        })
    }
}

impl Tuner for TexelTuner {
    const NAME: &'static str = "texel";
    const COMMAND: &'static str = "xqtune tune texel";
    const STEP: &'static str = "epoch";
    const LOG_HEADER: &'static str = "epoch,train_loss,val_loss,k,time_s";
    type Settings = TexelSettings;
    type State = TexelState;

    fn start_vec(state: &TexelState) -> &[i32] {
        &state.start_vec
    }

    /// The losses at the start, then one row per epoch.
    fn log_rows(state: &TexelState) -> usize {
        state.epoch as usize + 1
    }

    fn total_steps(&self) -> u64 {
        self.settings.tuner.epochs
    }

    fn steps_done(&self, state: &TexelState) -> u64 {
        state.epoch
    }

    fn banner(&self) -> String {
        format!("texel: {} parameters", self.space.len())
    }

    /// Fits K (unless given) and logs the starting losses as epoch 0.
    fn start(&mut self) -> Result<(TexelState, Option<Vec<String>>), TuneError> {
        let theta: Vec<f64> = self.space.values().iter().map(|&v| v as f64).collect();
        let k = match self.settings.tuner.k {
            Some(k) => k,
            None => fit_k(&ResultsObjective(self.data.clone()), &theta)?,
        };
        crate::outln!("K = {k:.4}");
        if !(0.0101..9.99).contains(&k) {
            eprintln!(
                "warning: K = {k:.4} sits on the edge of its search interval [0.01, 10]: the \
                 evaluation hardly predicts these results (e.g. nearly all draws); check the dataset"
            );
        }
        let (tl, vl) = (
            self.data.loss(Subset::Train, &theta, k),
            self.data.loss(Subset::Val, &theta, k),
        );
        let state = TexelState {
            epoch: 0,
            theta,
            k,
            start_vec: self.start.to_vec(),
            done: false,
            moments: None,
        };
        Ok((
            state,
            Some(vec!["0".into(), csv_float(tl), csv_float(vl), csv_float(k)]),
        ))
    }

    fn finished(&self, state: &TexelState) -> bool {
        state.done || state.epoch >= self.settings.tuner.epochs
    }

    fn step(&mut self, state: &mut TexelState) -> Result<Option<Step>, TuneError> {
        if self.settings.tuner.optimiser.is_minibatch() {
            return Ok(Some(self.minibatch_epoch(state)));
        }
        let lbfgs = match &mut self.lbfgs {
            Some(l) => l,
            None => self.lbfgs.insert(LbfgsStepper::new(
                Arc::new(TrainObjective(self.data.clone())),
                state.theta.clone(),
                state.k,
                self.settings.tuner.epochs - state.epoch,
                self.settings.tuner.memory,
            )?),
        };
        if lbfgs.done() {
            // converged before its first iteration: nothing to log
            end_lbfgs(lbfgs, state);
            return Ok(None);
        }
        let (theta, train_loss) = lbfgs.step()?;
        state.epoch += 1;
        state.theta = theta.to_vec();
        let vl = self.data.loss(Subset::Val, &state.theta, state.k);
        if lbfgs.done() {
            end_lbfgs(lbfgs, state);
        }
        Ok(Some(Step {
            row: vec![
                state.epoch.to_string(),
                csv_float(train_loss),
                csv_float(vl),
                csv_float(state.k),
            ],
            message: format!("train {train_loss:.6} val {vl:.6}"),
        }))
    }

    fn best_so_far(&self, state: &TexelState) -> Option<Vec<i32>> {
        Some(self.space.round(&state.theta))
    }

    fn best(&mut self, state: &mut TexelState) -> Result<Tuned, TuneError> {
        self.best_genes(state).map(Tuned::Genes)
    }
}

impl TexelTuner {
    fn best_genes(&mut self, state: &mut TexelState) -> Result<Vec<i32>, TuneError> {
        state.done = true;
        let best = self.space.round(&state.theta);
        let rounded: Vec<f64> = best.iter().map(|&v| v as f64).collect();
        let (tl, vl) = (
            self.data.loss(Subset::Train, &rounded, state.k),
            self.data.loss(Subset::Val, &rounded, state.k),
        );
        crate::outln!(
            "final (rounded, clamped) parameters: train loss {tl:.6}, validation loss {vl:.6}"
        );
        Ok(best)
    }
}

impl TexelTuner {
    /// One epoch of Adam or AdaGrad: every training chunk once, in the epoch's shuffled order,
    /// in batches of `--batch-size` positions (whole chunks), one step per batch; then the
    /// full training and validation losses for the log.
    fn minibatch_epoch(&mut self, state: &mut TexelState) -> Step {
        let data = &self.data;
        let chunks = self.chunks.get_or_insert_with(|| data.all_train_chunks());
        let s = &self.settings.tuner;
        let rule = s.rule();
        let bounds: Vec<(f64, f64)> = self
            .space
            .genes()
            .iter()
            .map(|g| (g.min as f64, g.max as f64))
            .collect();
        let moments = state
            .moments
            .get_or_insert_with(|| Moments::new(s.optimiser, state.theta.len()));
        let order = adam::epoch_order(self.settings.common.seed, state.epoch, chunks.len());
        for batch in order.chunks(s.batch_size.div_ceil(CHUNK).max(1)) {
            // summed in id order whatever the shuffle, so the batch's bits do not depend on
            // which rank holds which chunk
            let mut ids: Vec<usize> = batch.iter().map(|&i| chunks[i].0).collect();
            ids.sort_unstable();
            let positions = batch.iter().map(|&i| chunks[i].1).sum();
            let (_, grad) = data.batch_loss_grad(&ids, positions, &state.theta, state.k);
            rule.step(moments, &mut state.theta, &grad, &bounds);
        }
        state.epoch += 1;
        let tl = data.loss(Subset::Train, &state.theta, state.k);
        let vl = data.loss(Subset::Val, &state.theta, state.k);
        Step {
            row: vec![
                state.epoch.to_string(),
                csv_float(tl),
                csv_float(vl),
                csv_float(state.k),
            ],
            message: format!("train {tl:.6} val {vl:.6}"),
        }
    }
}

/// Ends the optimisation with argmin's result: the θ of lowest training loss.
fn end_lbfgs(lbfgs: &LbfgsStepper, state: &mut TexelState) {
    if let Some(best) = lbfgs.best() {
        state.theta = best.to_vec();
    }
    state.done = true;
}

/// `xqtune tune texel`.
pub fn run_texel(args: &TexelArgs) -> Result<RunOutcome, TuneError> {
    args.check()?;
    install_ctrlc();
    if args.common.resume.is_none() {
        if args.common.space != SpaceKind::Eval {
            return Err(TuneError::Space(
                "texel tunes evaluation parameters only (--space eval)".into(),
            ));
        }
        if args.data.is_none() {
            return Err(TuneError::Io(
                "texel needs --data FILE (see xqtune datagen)".into(),
            ));
        }
        if !(0.0..=1.0).contains(&args.lambda) {
            return Err(TuneError::Io(format!(
                "--lambda {} is outside [0, 1] (the weight of the search score in the label)",
                args.lambda
            )));
        }
    }
    driver::launch(
        &args.common,
        TexelSettings::from(args),
        TexelTuner::new,
        None,
    )
}

/// Convenience for callers holding `EvalParams`.
pub fn eval_space(params: &EvalParams, only: &str) -> Result<Space, TuneError> {
    Space::new(ParamSet::Eval(params.clone()), only)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::Position;
    use clap::Parser;
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;
    use trace::sigmoid;
    use trace::tests::random_positions;

    #[derive(Parser)]
    struct T {
        #[command(flatten)]
        a: TexelArgs,
    }

    /// Random-play positions labelled with the win probability of the evaluation at other
    /// parameter values, so the tuner has something to find.
    fn write_dataset(path: &std::path::Path, n: usize) {
        let mut rng = ChaCha8Rng::seed_from_u64(5);
        let base = EvalParams::default();
        let truth_vec: Vec<i32> = base.to_vec().iter().map(|v| v + v / 3 + 20).collect();
        let truth = base.from_vec(&truth_vec);
        let mut text = String::new();
        while text.lines().count() < n {
            let mut pos = Position::startpos();
            let plies = rng.gen_range(10..120);
            for _ in 0..plies {
                let ms = pos.legal_moves();
                if ms.is_empty() || pos.outcome().is_some() {
                    break;
                }
                // prefer captures so material varies
                let caps = pos.legal_captures();
                let m = if !caps.is_empty() && rng.gen_bool(0.6) {
                    caps.as_slice()[rng.gen_range(0..caps.len())]
                } else {
                    ms.as_slice()[rng.gen_range(0..ms.len())]
                };
                pos.make_move(m);
            }
            let t = crate::eval::trace(&pos, &truth);
            let e: f64 = t.constant as f64
                + t.coeffs
                    .iter()
                    .map(|&(i, c)| c as f64 * truth_vec[i as usize] as f64)
                    .sum::<f64>();
            text.push_str(&format!("{} [{:.4}]\n", pos.to_fen(), sigmoid(1.0, e)));
        }
        std::fs::write(path, text).unwrap();
    }

    #[test]
    fn lambda_one_learns_from_the_search_scores() {
        let out = std::env::temp_dir().join(format!("xqtune-texel-lambda-{}", std::process::id()));
        std::fs::create_dir_all(&out).unwrap();
        // scores from the evaluation at known material values; results that say nothing
        let base = EvalParams::default();
        let space = eval_space(&base, "material.*").unwrap();
        let mut truth_vec = base.to_vec();
        for &g in &space.selected {
            truth_vec[g] += truth_vec[g] / 4 + 30;
        }
        let truth = base.from_vec(&truth_vec);
        let mut rng = ChaCha8Rng::seed_from_u64(11);
        let mut text = String::new();
        for pos in random_positions(1200, 12)
            .iter()
            .filter(|p| p.variant() == crate::core::Variant::Xiangqi)
        {
            let score = crate::eval::trace(pos, &truth).dot(&truth_vec).round() as i32;
            let wdl = ["0.0", "0.5", "1.0"][rng.gen_range(0..3)];
            text.push_str(&format!("{} | {score} | {wdl}\n", pos.to_fen()));
        }
        let data = out.join("scored.txt");
        std::fs::write(&data, text).unwrap();
        let args = |lambda: &str, file: &std::path::Path| {
            T::parse_from([
                "t",
                "--data",
                file.to_str().unwrap(),
                "--only",
                "material.*",
                "--lambda",
                lambda,
                "--k",
                "1.0",
                "--epochs",
                "40",
                "--validation",
                "0",
                "--verify",
                "none",
                "--concurrency",
                "2",
                "--out",
                out.to_str().unwrap(),
            ])
            .a
        };
        let o = run_texel(&args("1", &data)).unwrap();
        let best = o.best.unwrap();
        let dist = |v: &[i32]| -> f64 {
            v.iter()
                .zip(&space.selected)
                .map(|(&x, &g)| (x - truth_vec[g]).abs() as f64)
                .sum()
        };
        let (d0, d1) = (dist(&space.values()), dist(&best));
        assert!(d1 < 0.5 * d0, "distance to the truth {d0} -> {d1}");
        // Another engine's scores, in units worth twice ours: with the evaluation's K the fit
        // halves the evaluation; `--score-k 2` (its own K) learns our units back.
        let halved: String = std::fs::read_to_string(&data)
            .unwrap()
            .lines()
            .map(|l| {
                let f: Vec<&str> = l.split(" | ").collect();
                let s: i32 = f[1].parse().unwrap();
                format!("{} | {} | {}\n", f[0], s / 2, f[2])
            })
            .collect();
        let other = out.join("other.txt");
        std::fs::write(&other, halved).unwrap();
        let with_k = |k: Option<&str>| {
            let mut a = args("1", &other);
            a.score_k = k.map(|k| parse_score_k(k).unwrap());
            run_texel(&a).unwrap().best.unwrap()
        };
        let (own, shared) = (dist(&with_k(Some("2"))), dist(&with_k(None)));
        assert!(
            own < 0.5 * d0 && shared > 2.0 * own,
            "{d0} -> {own}, {shared}"
        );
        assert!(parse_score_k("0").is_err() && parse_score_k("x").is_err());
        assert_eq!(parse_score_k("auto"), Ok(ScoreK::Auto));
        // out of range, and rows without a score
        let e = run_texel(&args("1.5", &data)).unwrap_err().to_string();
        assert!(e.contains("--lambda 1.5"), "{e}");
        let plain = out.join("plain.txt");
        std::fs::write(
            &plain,
            "rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C5C1/9/RNBAKABNR w - - 0 1 [0.5]\n",
        )
        .unwrap();
        let e = run_texel(&args("0.5", &plain)).unwrap_err().to_string();
        assert!(e.contains("plain.txt:1") && e.contains("score"), "{e}");
        std::fs::remove_dir_all(&out).unwrap();
    }

    /// `--score-k auto` finds the K whose `σ(K·score)` the results were drawn from.
    #[test]
    fn score_k_is_fitted_on_the_scores_against_the_results() {
        let out = std::env::temp_dir().join(format!("xqtune-score-k-{}", std::process::id()));
        std::fs::create_dir_all(&out).unwrap();
        let mut rng = ChaCha8Rng::seed_from_u64(3);
        let fen = "rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C5C1/9/RNBAKABNR w - - 0 1";
        let text: String = (0..20_000)
            .map(|_| {
                let s: i32 = rng.gen_range(-600..=600);
                let p = trace::sigmoid(1.6, s as f64);
                let r = if rng.gen_bool(p) { "1.0" } else { "0.0" };
                format!("{fen} | {s} | {r}\n")
            })
            .collect();
        let data = out.join("s.txt");
        std::fs::write(&data, text).unwrap();
        let k = fit::fit_score_k(&data, None).unwrap();
        assert!((k - 1.6).abs() < 0.1, "{k}");
        // the first rows only
        let k2 = fit::fit_score_k(&data, Some(5000)).unwrap();
        assert!(k2 != k && (k2 - 1.6).abs() < 0.2, "{k2}");
        std::fs::write(&data, format!("{fen} | 1-0 | g#1\n")).unwrap();
        let e = fit::fit_score_k(&data, None).unwrap_err().to_string();
        assert!(e.contains("s.txt") && e.contains("no search scores"), "{e}");
        std::fs::remove_dir_all(&out).unwrap();
    }

    #[test]
    fn texel_run_reduces_loss_and_resumes() {
        let out = std::env::temp_dir().join(format!("xqtune-texel-{}", std::process::id()));
        std::fs::create_dir_all(&out).unwrap();
        let data = out.join("d.txt");
        write_dataset(&data, 600);
        let a = T::parse_from([
            "t",
            "--data",
            data.to_str().unwrap(),
            "--epochs",
            "30",
            "--verify",
            "none",
            "--concurrency",
            "2",
            "--out",
            out.to_str().unwrap(),
        ])
        .a;
        let o = run_texel(&a).unwrap();
        assert!(o.finished);
        let (h, rows) = crate::tune::plot::read_csv(&o.dir.join("log.csv")).unwrap();
        assert_eq!(h, ["epoch", "train_loss", "val_loss", "k", "time_s"]);
        assert!(rows.len() >= 3);
        let (first, last) = (&rows[0], rows.last().unwrap());
        assert!(
            last[1] < first[1] * 0.9,
            "train {} -> {}",
            first[1],
            last[1]
        );
        assert!(last[2] < first[2], "validation {} -> {}", first[2], last[2]);
        assert!(first[3] > 0.05 && first[3] < 10.0);
        assert!(o.dir.join("best.json").exists());
        assert!(o.dir.join("plots/loss.png").exists());
        // resuming a finished run changes nothing
        let mut r = a.clone();
        r.common.resume = Some(o.dir.clone());
        let again = run_texel(&r).unwrap();
        assert_eq!(again.best, o.best);
        // a bad line is named
        std::fs::write(
            out.join("bad.txt"),
            "rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C5C1/9/RNBAKABNR w - - 0 1 | 3-0\n",
        )
        .unwrap();
        let mut b = a.clone();
        b.data = Some(out.join("bad.txt"));
        let e = run_texel(&b).unwrap_err().to_string();
        assert!(e.contains("bad.txt:1"), "{e}");
        std::fs::remove_dir_all(&out).unwrap();
    }

    #[test]
    fn texel_stop_and_resume_keep_log_and_checkpoint_in_step() {
        let out = std::env::temp_dir().join(format!("xqtune-texel-stop-{}", std::process::id()));
        std::fs::create_dir_all(&out).unwrap();
        let data = out.join("d.txt");
        write_dataset(&data, 300);
        let a = T::parse_from([
            "t",
            "--data",
            data.to_str().unwrap(),
            "--epochs",
            "6",
            "--verify",
            "none",
            "--concurrency",
            "1",
            "--out",
            out.to_str().unwrap(),
        ])
        .a;
        let part =
            driver::launch(&a.common, TexelSettings::from(&a), TexelTuner::new, Some(2)).unwrap();
        assert!(!part.finished);
        let st: TexelState = files::read_json(&part.dir.join("checkpoints/state.json")).unwrap();
        assert_eq!((st.epoch, st.done), (2, false));
        let (_, rows) = crate::tune::plot::read_csv(&part.dir.join("log.csv")).unwrap();
        assert_eq!(rows.len(), 3, "epoch 0 and two steps");
        let mut r = a.clone();
        r.common.resume = Some(part.dir.clone());
        let resumed = run_texel(&r).unwrap();
        assert!(resumed.finished);
        let st: TexelState = files::read_json(&part.dir.join("checkpoints/state.json")).unwrap();
        assert!(st.done);
        let (_, rows) = crate::tune::plot::read_csv(&part.dir.join("log.csv")).unwrap();
        assert_eq!(rows.len(), st.epoch as usize + 1);
        let epochs: Vec<f64> = rows.iter().map(|r| r[0]).collect();
        assert!(epochs.windows(2).all(|w| w[1] == w[0] + 1.0), "{epochs:?}");
        std::fs::remove_dir_all(&out).unwrap();
    }

    /// `write_dataset`'s positions repeated until the file spans several chunks (tracing
    /// fresh random games for each line would cost far more).
    fn write_big_dataset(path: &std::path::Path, unique: usize, lines: usize) {
        write_dataset(path, unique);
        let text = std::fs::read_to_string(path).unwrap();
        let big: String = text
            .lines()
            .cycle()
            .take(lines)
            .flat_map(|l| [l, "\n"])
            .collect();
        std::fs::write(path, big).unwrap();
    }

    fn adam_args(data: &std::path::Path, out: &std::path::Path, seed: &str) -> TexelArgs {
        T::parse_from([
            "t",
            "--data",
            data.to_str().unwrap(),
            "--optimiser",
            "adam",
            "--epochs",
            "4",
            "--seed",
            seed,
            "--batch-size",
            "8192",
            "--verify",
            "none",
            "--concurrency",
            "2",
            "--out",
            out.to_str().unwrap(),
        ])
        .a
    }

    /// `log.csv` without its time column.
    fn log_without_time(dir: &std::path::Path) -> Vec<String> {
        std::fs::read_to_string(dir.join("log.csv"))
            .unwrap()
            .lines()
            .map(|l| l.rsplit_once(',').unwrap().0.to_string())
            .collect()
    }

    #[test]
    fn adam_reduces_the_validation_loss_and_resumes_bit_for_bit() {
        let out = std::env::temp_dir().join(format!("xqtune-texel-adam-{}", std::process::id()));
        std::fs::create_dir_all(&out).unwrap();
        let data = out.join("d.txt");
        // about 2.2 training chunks: three batches of one chunk per epoch, in shuffled order
        write_big_dataset(&data, 1500, 2 * CHUNK + 4000);
        let whole_out = out.join("whole");
        let a = adam_args(&data, &whole_out, "9");
        let whole = run_texel(&a).unwrap();
        assert!(whole.finished);
        let (_, rows) = crate::tune::plot::read_csv(&whole.dir.join("log.csv")).unwrap();
        assert_eq!(rows.len(), 5, "epoch 0 and four epochs");
        let (first, last) = (&rows[0], rows.last().unwrap());
        assert!(last[2] < first[2], "validation {} -> {}", first[2], last[2]);
        assert!(last[1] < first[1], "train {} -> {}", first[1], last[1]);
        let st: TexelState = files::read_json(&whole.dir.join("checkpoints/state.json")).unwrap();
        let m = st.moments.expect("Adam's moments in the checkpoint");
        assert_eq!(m.steps, 4 * 3, "three batches per epoch");

        // stopped after two epochs, then resumed: the same run
        let cut_out = out.join("cut");
        let b = adam_args(&data, &cut_out, "9");
        let part =
            driver::launch(&b.common, TexelSettings::from(&b), TexelTuner::new, Some(2)).unwrap();
        assert!(!part.finished);
        let st: TexelState = files::read_json(&part.dir.join("checkpoints/state.json")).unwrap();
        assert_eq!((st.epoch, st.moments.map(|m| m.steps)), (2, Some(6)));
        let mut r = b.clone();
        r.common.resume = Some(part.dir.clone());
        let resumed = run_texel(&r).unwrap();
        assert!(resumed.finished);
        assert_eq!(resumed.best, whole.best);
        assert_eq!(
            std::fs::read_to_string(part.dir.join("best.json")).unwrap(),
            std::fs::read_to_string(whole.dir.join("best.json")).unwrap()
        );
        assert_eq!(log_without_time(&part.dir), log_without_time(&whole.dir));

        std::fs::remove_dir_all(&out).unwrap();
    }

    #[test]
    fn bad_optimiser_flags_are_named() {
        let err = |flags: &[&str]| {
            let a = T::parse_from(["t"].iter().chain(flags)).a;
            a.check().unwrap_err().to_string()
        };
        assert!(err(&["--optimiser", "adam", "--batch-size", "0"]).contains("--batch-size"));
        assert!(err(&["--optimiser", "adam", "--memory", "5"]).contains("--memory"));
        assert!(err(&["--memory", "0"]).contains("--memory"));
        assert!(err(&["--optimiser", "adam", "--lr", "0"]).contains("--lr"));
        assert!(err(&["--optimiser", "adam", "--lr=-1"]).contains("--lr"));
        assert!(err(&["--optimiser", "adam", "--beta1", "1"]).contains("--beta1"));
        assert!(err(&["--optimiser", "adam", "--eps", "0"]).contains("--eps"));
        let e = err(&["--lr", "0.5"]);
        assert!(e.contains("--lr") && e.contains("lbfgs"), "{e}");
        let e = err(&["--optimiser", "adagrad", "--beta2", "0.99"]);
        assert!(e.contains("--beta2") && e.contains("adagrad"), "{e}");
        let ok = T::parse_from(["t", "--optimiser", "adagrad", "--lr", "3"]).a;
        assert!(ok.check().is_ok());
    }

    #[test]
    fn settings_of_earlier_runs_read_as_lbfgs() {
        let text = r#"{"data":"d.txt","epochs":5,"validation":0.1,"k":null,"memory":7,
            "max_positions":null}"#;
        let s: TexelSettings = serde_json::from_str(text).unwrap();
        assert_eq!(s.optimiser, Optimiser::Lbfgs);
        assert_eq!(s.batch_size, DEFAULT_BATCH);
    }
}
