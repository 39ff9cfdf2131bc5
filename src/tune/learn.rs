//! `xqtune learn`: the self-play learning loop. Each generation plays self-play games with the
//! current best network (the classical evaluation before the first), trains a candidate on the
//! newest generations' data (from the best network's weights, or from scratch), and gates it
//! with an SPRT against the best: an accepted candidate becomes the best. The Elo of the
//! accepted generations adds up to the loop's climb (the generation table `generations.csv`:
//! data size, losses, the gate's W-L-D, Elo, LLR, accepted; and the plot `plots/elo.png`).
//!
//! The loop is a [`Tuner`] of the one run driver (one generation per step), so it has the run
//! folder, `config.json`, the checkpoint after every generation, `--resume`, Ctrl-C, progress,
//! the plot and a closing verification of the last best network against the classical
//! evaluation. Inside a generation, `generation.json` records the stage reached (datagen,
//! training, gate), so a run killed in the middle of one resumes there: datagen resumes from
//! its own partial file, training from its run folder's checkpoint, the gate from its journal
//! (only the games it lacks are played; with node limits the gate ends as it would have).
//!
//! Layout of the run folder: `data/gen-NNN.xqp` (the generation's positions, packed; Jieqi,
//! which has no packed form: `data/gen-NNN.txt`, `FEN | score | wdl` rows of view FENs),
//! `train/` (one `tune nnue` run folder per generation), `gate/gen-NNN.jsonl` (the journal of
//! each gate's finished games), `nets/gen-NNN.nnue` (the accepted networks), `best.nnue`.

use super::TuneError;
use super::common::{CommonArgs, CommonSettings};
use super::driver::{self, RunContext, RunOutcome, Step, Tuned, Tuner};
use super::files::{self, csv_float, read_json, write_json};
use super::nnue::NnueArgs;
use super::space::SpaceKind;
use super::stop::install_ctrlc;
use crate::core::Variant;
use crate::eval::nnue::Network;
use crate::play::resume::open_journal;
use crate::play::stats::{MatchStats, SprtConfig, SprtVerdict};
use crate::play::{Engine, MatchConfig, Opening, load_openings, run_match_resuming};
use crate::uci::Protocol;
use crate::util::mix;
use clap::Parser;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// The tuners' flags that mean nothing to the loop (it trains its own network, in self-play):
/// hidden from `learn --help`, and refused when given (see [`run_learn_with`]).
const NOT_FOR_LEARN: [&str; 12] = [
    "flatten",
    "space",
    "only",
    "engine",
    "proto",
    "engine_option",
    "param_file",
    "opponent",
    "opponent_proto",
    "opponent_option",
    "no_check",
    // (the gates play `--gate-openings`; datagen draws its own random openings)
    "openings",
];

/// `xqtune learn`.
#[derive(clap::Args, Debug, Clone)]
#[command(mut_args(|a| {
    let hide = NOT_FOR_LEARN.contains(&a.get_id().as_str());
    a.hide(hide)
}))]
pub struct LearnArgs {
    #[command(flatten)]
    pub common: CommonArgs,
    /// Generations (datagen, training, gate).
    #[arg(long, default_value_t = 5)]
    pub generations: u64,
    /// Self-play games per generation (at `--nodes` per move).
    #[arg(long, default_value_t = 10_000)]
    pub games: u64,
    /// Training epochs per generation.
    #[arg(long, default_value_t = 15)]
    pub epochs: u32,
    /// Most games of a gate (SPRT between `--elo0` and `--elo1` against the best network);
    /// 0 accepts every candidate without a gate.
    #[arg(long, default_value_t = 400)]
    pub gate_games: usize,
    /// Train each candidate on this many of the newest generations' data.
    #[arg(long, default_value_t = 2)]
    pub data_window: u64,
    /// Train every candidate from fresh weights instead of the best network's.
    #[arg(long)]
    pub from_scratch: bool,
    /// The best network at the start (default: none, the classical evaluation plays the first
    /// generation and the first candidate starts from fresh weights).
    #[arg(long)]
    pub init_net: Option<PathBuf>,
    /// Neurons of a network trained from scratch.
    #[arg(long, default_value_t = 256)]
    pub hidden: usize,
    /// Weight of the search score in the label (`tune nnue --lambda`).
    #[arg(long, default_value_t = 0.9)]
    pub lambda: f64,
    /// Random plies at the start of every self-play game.
    #[arg(long, default_value_t = 8)]
    pub random_plies: usize,
    /// The training's learning rate (`tune nnue --lr`; default: its own). A candidate trained
    /// from the best network's weights usually wants a smaller one.
    #[arg(long)]
    pub lr: Option<f32>,
    /// Nodes per move in the gates (default: `--nodes`, the self-play budget). Not with
    /// `--tc`, `--depth` or `--movetime`, which limit the gates' games instead.
    #[arg(long)]
    pub gate_nodes: Option<u64>,
    /// The gates' opening suite, one FEN or EPD line per opening (default: the default suite).
    #[arg(long)]
    pub gate_openings: Option<PathBuf>,
}

/// What `config.json` records.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct LearnSettings {
    pub generations: u64,
    pub games: u64,
    pub epochs: u32,
    pub gate_games: usize,
    pub data_window: u64,
    pub from_scratch: bool,
    pub init_net: Option<PathBuf>,
    pub hidden: usize,
    #[serde(with = "files::exact")]
    pub lambda: f64,
    pub random_plies: usize,
    #[serde(default)]
    pub lr: Option<f32>,
    #[serde(default)]
    pub gate_nodes: Option<u64>,
    #[serde(default)]
    pub gate_openings: Option<PathBuf>,
}

impl From<&LearnArgs> for LearnSettings {
    fn from(a: &LearnArgs) -> LearnSettings {
        LearnSettings {
            generations: a.generations,
            games: a.games,
            epochs: a.epochs,
            gate_games: a.gate_games,
            data_window: a.data_window.max(1),
            from_scratch: a.from_scratch,
            init_net: a.init_net.as_deref().map(super::nnue::network_path),
            hidden: a.hidden,
            lambda: a.lambda,
            random_plies: a.random_plies,
            lr: a.lr,
            gate_nodes: a.gate_nodes,
            gate_openings: a
                .gate_openings
                .as_deref()
                .map(|p| std::path::absolute(p).unwrap_or_else(|_| p.to_path_buf())),
        }
    }
}

/// The checkpoint: where the loop is.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LearnState {
    /// Completed generations.
    pub generation: u64,
    /// The best network so far, relative to the run folder (none: the classical evaluation).
    pub best: Option<PathBuf>,
    /// The Elo of the accepted generations, added up.
    pub climb: f64,
    pub start_vec: Vec<i32>,
    pub done: bool,
}

/// How far the generation in progress got (`generation.json`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
struct Progress {
    generation: u64,
    /// The data is complete.
    data: bool,
    /// The training run's folder, once started (relative to the run folder, as `candidate`).
    train: Option<PathBuf>,
    /// The training is complete: its `best.nnue`.
    candidate: Option<PathBuf>,
}

#[derive(Parser)]
struct NnueCli {
    #[command(flatten)]
    args: NnueArgs,
}

#[derive(Parser)]
struct DatagenCli {
    #[command(flatten)]
    args: super::datagen::DatagenArgs,
}

/// The loop as a [`Tuner`]: one generation per step.
pub struct LearnTuner {
    ctx: RunContext<LearnSettings>,
}

impl LearnTuner {
    pub fn new(ctx: &RunContext<LearnSettings>) -> Result<LearnTuner, TuneError> {
        for sub in ["data", "train", "nets"] {
            let d = ctx.dir.join(sub);
            std::fs::create_dir_all(&d).map_err(|e| files::io_err(&d, e))?;
        }
        Ok(LearnTuner {
            ctx: RunContext {
                dir: ctx.dir.clone(),
                settings: ctx.settings.clone(),
                space: ctx.space.clone(),
                start: ctx.start.clone(),
            },
        })
    }

    /// `path` (inside the run folder) as the run records it: relative to the folder, so a run
    /// resumes from any working folder, and from wherever the folder was moved.
    fn rel(&self, path: &Path) -> PathBuf {
        path.strip_prefix(&self.ctx.dir)
            .map_or_else(|_| path.to_path_buf(), Path::to_path_buf)
    }

    /// A path the run recorded, as a path from here (the inverse of [`LearnTuner::rel`]; an
    /// absolute path stays as it is).
    fn at(&self, recorded: &Path) -> PathBuf {
        self.ctx.dir.join(recorded)
    }

    fn data_path(&self, g: u64) -> PathBuf {
        let ext = match self.common().variant {
            Variant::Xiangqi => "xqp",
            Variant::Jieqi => "txt",
        };
        self.ctx.dir.join("data").join(format!("gen-{g:03}.{ext}"))
    }

    /// The positions in generation `g`'s data file (0 when it is missing or unreadable).
    fn positions(&self, g: u64) -> u64 {
        super::nnue::data::count_positions(&[self.data_path(g)], usize::MAX).map_or(0, |n| n as u64)
    }

    fn common(&self) -> &super::common::CommonSettings {
        &self.ctx.settings.common
    }

    fn threads(&self) -> String {
        self.common().threads().to_string()
    }

    /// Self-play games of generation `g` with the best network.
    fn datagen(&self, g: u64, best: Option<&Path>) -> Result<(), TuneError> {
        let s = &self.ctx.settings.tuner;
        let out = self.data_path(g);
        let mut argv: Vec<String> = [
            "datagen",
            "--variant",
            &self.common().variant.to_string(),
            "--games",
            &s.games.to_string(),
            "--nodes",
            &self.common().nodes.to_string(),
            "--seed",
            &mix(self.common().seed, &[g, 0xda7a]).to_string(),
            "--random-plies",
            &s.random_plies.to_string(),
            "--concurrency",
            &self.threads(),
            "--out",
            &out.display().to_string(),
        ]
        .map(String::from)
        .to_vec();
        if let Some(p) = &self.common().params {
            argv.extend(["--params".into(), p.display().to_string()]);
        }
        if let Some(b) = best {
            argv.extend(["--net".into(), b.display().to_string()]);
        }
        let cli = DatagenCli::try_parse_from(&argv)
            .map_err(|e| TuneError::Params(format!("learn's datagen: {e}")))?;
        super::datagen::run_datagen(&cli.args)?;
        Ok(())
    }

    /// The training of generation `g` (a `tune nnue` run in `train/`, resumed when `folder`
    /// names one already started); returns its folder.
    fn train(
        &self,
        g: u64,
        best: Option<&Path>,
        folder: Option<&Path>,
    ) -> Result<Option<PathBuf>, TuneError> {
        let s = &self.ctx.settings.tuner;
        let argv: Vec<String> = match folder {
            Some(f) => [
                "nnue",
                "--resume",
                &f.display().to_string(),
                "--concurrency",
                &self.threads(),
            ]
            .map(String::from)
            .to_vec(),
            None => {
                let mut v: Vec<String> = [
                    "nnue",
                    "--variant",
                    &self.common().variant.to_string(),
                    "--epochs",
                    &s.epochs.to_string(),
                    "--hidden",
                    &s.hidden.to_string(),
                    "--lambda",
                    &s.lambda.to_string(),
                    "--seed",
                    &mix(self.common().seed, &[g, 0x7ea1]).to_string(),
                    "--concurrency",
                    &self.threads(),
                    "--verify",
                    "none",
                    "--name",
                    &format!("gen-{g:03}"),
                    "--out",
                    &self.ctx.dir.join("train").display().to_string(),
                    "--data",
                ]
                .map(String::from)
                .to_vec();
                let first = g.saturating_sub(s.data_window - 1).max(1);
                for h in first..=g {
                    v.push(self.data_path(h).display().to_string());
                }
                if let Some(p) = &self.common().params {
                    v.extend(["--params".into(), p.display().to_string()]);
                }
                if let Some(lr) = s.lr {
                    v.extend(["--lr".into(), lr.to_string()]);
                }
                if let (Some(b), false) = (best, s.from_scratch) {
                    v.extend(["--init-net".into(), b.display().to_string()]);
                }
                v
            }
        };
        let cli = NnueCli::try_parse_from(&argv)
            .map_err(|e| TuneError::Params(format!("learn's training: {e}")))?;
        let run = super::nnue::run_nnue_with(&cli.args, None)?;
        Ok(run.finished.then_some(run.dir))
    }

    /// The engine with `net` (the classical evaluation for `None`).
    fn engine(&self, name: &str, net: Option<&Path>) -> Result<Engine, TuneError> {
        let other = super::common::untuned_defaults(self.ctx.start.kind());
        let mut e = self.ctx.start.player(name, &other)?;
        if let (Engine::Internal(c), Some(p)) = (&mut e, net) {
            let n = Network::load(p)
                .map_err(|err| TuneError::Params(format!("{}: {err}", p.display())))?;
            c.network = Some(Arc::new(n));
        }
        Ok(e)
    }

    /// The gate of generation `g`: the candidate against the best, an SPRT at `--gate-nodes`
    /// (default `--nodes`) from `--gate-openings`. Every finished game goes to the journal
    /// `gate/gen-NNN.jsonl`, so a gate killed midway plays only the games it lacks.
    fn gate(&self, g: u64, candidate: &Path, best: Option<&Path>) -> Result<Gate, TuneError> {
        let c = self.common();
        let s = &self.ctx.settings.tuner;
        if s.gate_games == 0 {
            return Ok(Gate {
                stats: MatchStats::default(),
                llr: f64::NAN,
                accepted: true,
            });
        }
        let a = self.engine("candidate", Some(candidate))?;
        let b = self.engine(if best.is_some() { "best" } else { "classical" }, best)?;
        let mut cfg = MatchConfig {
            games: s.gate_games.max(2),
            sprt: Some(SprtConfig {
                elo0: c.elo0,
                elo1: c.elo1,
                alpha: 0.05,
                beta: 0.05,
            }),
            concurrency: c.threads(),
            seed: mix(c.seed, &[g, 0x6a7e]),
            openings: gate_suite(s.gate_openings.as_deref())?,
            ..c.match_config(0)
        };
        if let (Some(n), Some(_)) = (s.gate_nodes, cfg.nodes) {
            cfg.nodes = Some(n);
        }
        let dir = self.ctx.dir.join("gate");
        std::fs::create_dir_all(&dir).map_err(|e| files::io_err(&dir, e))?;
        let path = dir.join(format!("gen-{g:03}.jsonl"));
        let (journal, done) =
            open_journal(&path, &a, &b, cfg.games).map_err(|e| TuneError::Io(format!("{e:#}")))?;
        // (Ctrl-C is the driver's: it stops between generations)
        let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
        cfg.stop = Some(stop.clone());
        let journal = std::sync::Mutex::new(journal);
        let bar = crate::progress::Progress::new(
            cfg.games as u64,
            done.len() as u64,
            "gate {bar:30} {pos}/{len} games {msg}",
            "gate",
        );
        let report = run_match_resuming(&a, &b, &cfg, done, &|p| {
            if let Ok(mut j) = journal.lock() {
                j.record(p.game.index, p.game, &stop);
            }
            bar.set(
                p.finished as u64,
                format!("{}-{}-{}", p.live.wins, p.live.losses, p.live.draws),
            )
        })?;
        bar.finish_and_clear();
        let journal = journal.into_inner().unwrap_or_else(|e| e.into_inner());
        if let Some(e) = journal.failure() {
            return Err(TuneError::Io(format!(
                "cannot record a gate game ({e}); the games recorded so far are kept for --resume"
            )));
        }
        Ok(Gate {
            stats: MatchStats::from(&report.result),
            llr: report.sprt.map_or(f64::NAN, |s| s.llr),
            // the decision is the SPRT's, as on fishtest
            accepted: report.sprt.is_some_and(|s| s.verdict == SprtVerdict::H1),
        })
    }
}

/// The gates' suite: `path`'s openings, or the default suite.
fn gate_suite(path: Option<&Path>) -> Result<Option<Arc<Vec<Opening>>>, TuneError> {
    path.map(|p| {
        load_openings(p)
            .map(Arc::new)
            .map_err(|e| TuneError::Params(format!("--gate-openings {}: {e}", p.display())))
    })
    .transpose()
}

/// How a gate ended.
struct Gate {
    stats: MatchStats,
    llr: f64,
    accepted: bool,
}

/// One generation's log row.
fn row(g: u64, positions: u64, losses: (f64, f64), gate: &Gate) -> Vec<String> {
    let st = &gate.stats;
    vec![
        g.to_string(),
        positions.to_string(),
        csv_float(losses.0),
        csv_float(losses.1),
        st.wins.to_string(),
        st.losses.to_string(),
        st.draws.to_string(),
        csv_float(st.elo),
        csv_float(st.elo_error),
        csv_float(gate.llr),
        u8::from(gate.accepted).to_string(),
    ]
}

/// The last training and validation losses of a `tune nnue` run folder.
fn last_losses(dir: &Path) -> (f64, f64) {
    let text = std::fs::read_to_string(dir.join("log.csv")).unwrap_or_default();
    let last = text.lines().last().unwrap_or("");
    let f: Vec<f64> = last
        .split(',')
        .map(|x| x.parse().unwrap_or(f64::NAN))
        .collect();
    (
        f.get(1).copied().unwrap_or(f64::NAN),
        f.get(2).copied().unwrap_or(f64::NAN),
    )
}

impl Tuner for LearnTuner {
    const NAME: &'static str = "learn";
    const COMMAND: &'static str = "xqtune learn";
    const LOG_FILE: &'static str = "generations.csv";
    const STEP: &'static str = "generation";
    const LOG_HEADER: &'static str = "generation,positions,train_loss,val_loss,wins,losses,draws,elo,elo_error,llr,accepted,time_s";
    type Settings = LearnSettings;
    type State = LearnState;

    fn start_vec(state: &LearnState) -> &[i32] {
        &state.start_vec
    }

    fn log_rows(state: &LearnState) -> usize {
        state.generation as usize
    }

    fn total_steps(&self) -> u64 {
        self.ctx.settings.tuner.generations
    }

    fn steps_done(&self, state: &LearnState) -> u64 {
        state.generation
    }

    fn banner(&self) -> String {
        let s = &self.ctx.settings.tuner;
        format!(
            "learn: {} generations of {} games at {} nodes, {} epochs, gates of up to {} games",
            s.generations,
            s.games,
            self.common().nodes,
            s.epochs,
            s.gate_games
        )
    }

    fn start(&mut self) -> Result<(LearnState, Option<Vec<String>>), TuneError> {
        let best = match &self.ctx.settings.tuner.init_net {
            Some(p) => {
                let net = Network::load_named(p, self.ctx.settings.common.variant)
                    .map_err(|e| TuneError::Params(format!("--init-net {}: {e}", p.display())))?;
                let to = self.ctx.dir.join("nets").join("gen-000.nnue");
                net.save(&to).map_err(|e| files::io_err(&to, e))?;
                Some(self.rel(&to))
            }
            None => None,
        };
        Ok((
            LearnState {
                generation: 0,
                best,
                climb: 0.0,
                start_vec: self.ctx.start.to_vec(),
                done: false,
            },
            None,
        ))
    }

    fn finished(&self, state: &LearnState) -> bool {
        state.done || state.generation >= self.ctx.settings.tuner.generations
    }

    fn step(&mut self, state: &mut LearnState) -> Result<Option<Step>, TuneError> {
        let g = state.generation + 1;
        let progress_path = self.ctx.dir.join("generation.json");
        let mut p: Progress = read_json(&progress_path).unwrap_or_default();
        if p.generation != g {
            p = Progress {
                generation: g,
                ..Progress::default()
            };
        }
        let best = state.best.as_deref().map(|b| self.at(b));
        if !p.data {
            crate::outln!("generation {g}: self-play");
            self.datagen(g, best.as_deref())?;
            p.data = true;
            write_json(&progress_path, &p)?;
        }
        if p.candidate.is_none() {
            crate::outln!("generation {g}: training");
            let folder = p.train.as_deref().map(|f| self.at(f));
            let done = self.train(g, best.as_deref(), folder.as_deref())?;
            let Some(dir) = done else {
                // stopped by Ctrl-C inside the training: the folder is resumed next time, and
                // the driver stops on the same Ctrl-C
                p.train = latest_run(&self.ctx.dir.join("train"), &format!("gen-{g:03}"))
                    .map(|d| self.rel(&d));
                write_json(&progress_path, &p)?;
                return Ok(None);
            };
            p.train = Some(self.rel(&dir));
            p.candidate = Some(self.rel(&dir.join("best.nnue")));
            write_json(&progress_path, &p)?;
        }
        let candidate = self.at(p.candidate.as_deref().unwrap_or(Path::new("")));
        crate::outln!("generation {g}: gate");
        let gate = self.gate(g, &candidate, best.as_deref())?;
        if gate.accepted {
            let to = self.ctx.dir.join("nets").join(format!("gen-{g:03}.nnue"));
            std::fs::copy(&candidate, &to).map_err(|e| files::io_err(&to, e))?;
            state.best = Some(self.rel(&to));
            state.climb += gate.stats.elo;
        }
        state.generation = g;
        let positions = self.positions(g);
        let losses = p
            .train
            .as_deref()
            .map_or((f64::NAN, f64::NAN), |t| last_losses(&self.at(t)));
        Ok(Some(Step {
            row: row(g, positions, losses, &gate),
            message: format!(
                "gate {:+.1} ± {:.1} {}; climb {:+.1}",
                gate.stats.elo,
                gate.stats.elo_error,
                if gate.accepted {
                    "accepted"
                } else {
                    "rejected"
                },
                state.climb
            ),
        }))
    }

    fn best_so_far(&self, _state: &LearnState) -> Option<Vec<i32>> {
        None
    }

    /// The best network as `best.nnue`, verified against the classical evaluation.
    fn best(&mut self, state: &mut LearnState) -> Result<Tuned, TuneError> {
        state.done = true;
        let Some(best) = state.best.as_deref().map(|b| self.at(b)) else {
            return Ok(Tuned::Nothing(
                "no generation was accepted: no network beat the classical evaluation".into(),
            ));
        };
        let net =
            Network::load(&best).map_err(|e| TuneError::Io(format!("{}: {e}", best.display())))?;
        let file = self.ctx.dir.join("best.nnue");
        std::fs::copy(&best, &file).map_err(|e| files::io_err(&file, e))?;
        Ok(Tuned::Network {
            file,
            tuned: Box::new(net),
            baseline: None,
        })
    }
}

/// The newest run folder under `dir` whose name ends with `_nnue_<name>`.
fn latest_run(dir: &Path, name: &str) -> Option<PathBuf> {
    let suffix = format!("_nnue_{name}");
    let mut runs: Vec<PathBuf> = std::fs::read_dir(dir)
        .ok()?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            p.file_name()
                .is_some_and(|n| n.to_string_lossy().ends_with(&suffix))
        })
        .collect();
    runs.sort();
    runs.pop()
}

/// `xqtune learn`.
pub fn run_learn(args: &LearnArgs) -> Result<RunOutcome, TuneError> {
    install_ctrlc();
    run_learn_with(args, None)
}

/// [`run_learn`] stopping after `max_steps` generations as Ctrl-C would (tests).
pub fn run_learn_with(args: &LearnArgs, max_steps: Option<u64>) -> Result<RunOutcome, TuneError> {
    if args.generations == 0 || args.games == 0 || args.epochs == 0 {
        return Err(TuneError::Params(
            "--generations, --games and --epochs must be at least 1".into(),
        ));
    }
    if args.gate_nodes == Some(0) {
        return Err(TuneError::Params("--gate-nodes must be at least 1".into()));
    }
    let c = &args.common;
    if let Some(limit) = CommonSettings::from(c).games_limited_by()
        && args.gate_nodes.is_some()
    {
        return Err(TuneError::Params(format!(
            "--gate-nodes sets the gate's node budget, but {limit} makes its games not node-limited"
        )));
    }
    if args.lr.is_some_and(|lr| !(lr > 0.0 && lr.is_finite())) {
        return Err(TuneError::Params("--lr must be a positive number".into()));
    }
    // a bad suite or size is named before the first generation's self-play, not after it
    gate_suite(args.gate_openings.as_deref())?;
    super::nnue::check_hidden(args.common.variant, args.hidden)?;
    let e = &c.engine;
    // in the order of NOT_FOR_LEARN
    let given = [
        c.flatten,
        c.space != SpaceKind::Eval,
        !c.only.is_empty(),
        e.engine.is_some(),
        e.proto != Protocol::Uci,
        !e.engine_option.is_empty(),
        e.param_file.is_some(),
        !e.opponent.is_empty(),
        !e.opponent_proto.is_empty(),
        !e.opponent_option.is_empty(),
        e.no_check,
        c.openings.is_some(),
    ];
    if let Some((id, _)) = NOT_FOR_LEARN.iter().zip(given).find(|(_, g)| *g) {
        return Err(TuneError::Params(format!(
            "learn trains xqtune's own network in self-play; --{} does not apply",
            id.replace('_', "-")
        )));
    }
    driver::launch(
        &args.common,
        LearnSettings::from(args),
        LearnTuner::new,
        max_steps,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Parser)]
    struct Cli {
        #[command(flatten)]
        a: LearnArgs,
    }

    fn args(out: &Path, extra: &[&str]) -> LearnArgs {
        let mut v = vec![
            "learn",
            "--generations",
            "2",
            "--games",
            "8",
            "--nodes",
            "300",
            "--epochs",
            "2",
            "--hidden",
            "32",
            "--verify",
            "none",
            "--concurrency",
            "2",
            "--name",
            "l",
            "--out",
            out.to_str().unwrap(),
        ];
        v.extend_from_slice(extra);
        Cli::parse_from(v).a
    }

    /// The generation table without its time column.
    fn table(dir: &Path) -> Vec<String> {
        std::fs::read_to_string(dir.join("generations.csv"))
            .unwrap()
            .lines()
            .map(|l| l.rsplit_once(',').unwrap().0.to_string())
            .collect()
    }

    /// The loop gates against its own best network: the tuners' flags for an external engine,
    /// a pool or a parameter space are refused by name, and not listed by `--help`.
    #[test]
    fn flags_of_the_other_tuners_are_refused_and_hidden() {
        let d = std::env::temp_dir().join(format!("xqtune-learn-bad-{}", std::process::id()));
        for flag in [
            &["--flatten"][..],
            &["--space", "search"],
            &["--only", "pst.*"],
            &["--engine", "x"],
            &["--proto", "ucci"],
            &["--engine-option", "Hash=16"],
            &["--param-file", "p.txt"],
            &["--opponent", "x"],
            &["--opponent-proto", "ucci"],
            &["--opponent-option", "Hash=16"],
            &["--no-check"],
            &["--openings", "suite.txt"],
        ] {
            let e = run_learn_with(&args(&d, flag), None)
                .unwrap_err()
                .to_string();
            assert!(
                e.contains(&format!("{} does not apply", flag[0])),
                "{flag:?}: {e}"
            );
        }
        assert!(!d.exists(), "refused before a run folder");
        let help = <Cli as clap::CommandFactory>::command()
            .render_long_help()
            .to_string();
        for id in NOT_FOR_LEARN {
            let flag = format!("--{} ", id.replace('_', "-"));
            assert!(!help.contains(&flag), "{flag} in learn --help");
        }
        for flag in [
            "--gate-nodes ",
            "--nodes ",
            "--init-net ",
            "--lr ",
            "--verify ",
        ] {
            assert!(help.contains(flag), "{flag} missing from learn --help");
        }
    }

    /// Flags that would fail only after a generation's self-play are named before it.
    #[test]
    fn bad_gate_and_training_flags_are_named_first() {
        let d = std::env::temp_dir().join(format!("xqtune-learn-flags-{}", std::process::id()));
        let mut narrow = args(&d, &[]);
        narrow.hidden = 16;
        let e = run_learn_with(&narrow, None).unwrap_err().to_string();
        assert!(
            e.contains("--hidden") && e.contains("hidden size 16"),
            "{e}"
        );
        for (flags, want) in [
            (&["--lr", "0"][..], "--lr must be a positive number"),
            (&["--gate-nodes", "0"], "--gate-nodes must be at least 1"),
            (
                &["--gate-nodes", "5000", "--tc", "2+0.02"],
                "--gate-nodes sets the gate's node budget, but --tc",
            ),
            (
                &["--gate-nodes", "5000", "--depth", "3"],
                "--gate-nodes sets the gate's node budget, but --depth",
            ),
            (
                &["--gate-openings", "/nonexistent/suite.txt"],
                "--gate-openings /nonexistent/suite.txt",
            ),
        ] {
            let e = run_learn_with(&args(&d, flags), None)
                .unwrap_err()
                .to_string();
            assert!(e.contains(want), "{flags:?}: {e}");
        }
        assert!(!d.exists(), "refused before a run folder");
    }

    #[test]
    fn generations_accept_keep_and_resume() {
        let d = std::env::temp_dir().join(format!("xqtune-learn-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        // a tiny network loses its gate against the classical evaluation: nothing is kept
        let refused =
            run_learn_with(&args(&d.join("gated"), &["--gate-games", "8"]), None).unwrap();
        assert!(refused.finished);
        let rows = table(&refused.dir);
        assert_eq!(rows.len(), 3, "{rows:?}");
        assert!(rows[1..].iter().all(|r| r.ends_with(",0")), "{rows:?}");
        assert!(!refused.dir.join("best.nnue").exists());
        // without gates every candidate is accepted
        let whole = run_learn_with(&args(&d.join("whole"), &["--gate-games", "0"]), None).unwrap();
        assert!(whole.finished);
        let rows = table(&whole.dir);
        assert_eq!(rows.len(), 3, "{rows:?}");
        for (g, r) in rows[1..].iter().enumerate() {
            let f: Vec<&str> = r.split(',').collect();
            assert_eq!(f[0], (g + 1).to_string());
            assert!(f[1].parse::<u64>().unwrap() > 100, "{r}");
            assert_eq!(f[10], "1", "accepted: {r}");
            assert!(
                whole
                    .dir
                    .join(format!("nets/gen-{:03}.nnue", g + 1))
                    .exists()
            );
            assert!(
                whole
                    .dir
                    .join(format!("data/gen-{:03}.xqp", g + 1))
                    .exists()
            );
        }
        // generation 2 played with generation 1's network and trained from it
        let net = Network::load(&whole.dir.join("best.nnue")).unwrap();
        assert!(
            net.description().contains("gen-002"),
            "{}",
            net.description()
        );
        assert!(whole.dir.join("plots/elo.png").exists());
        // the loop's best network is promoted as a `tune nnue` run's is
        let dest = d.join("promoted.nnue");
        super::super::promote(&whole.dir, Some(dest.clone()), true).unwrap();
        assert_eq!(
            std::fs::read(&dest).unwrap(),
            std::fs::read(whole.dir.join("best.nnue")).unwrap()
        );
        // stopped after generation 1, then resumed: the same table
        let cut = run_learn_with(&args(&d.join("cut"), &["--gate-games", "0"]), Some(1)).unwrap();
        assert!(!cut.finished);
        assert_eq!(table(&cut.dir).len(), 2);
        let dir = cut.dir.to_str().unwrap().to_string();
        let resumed = run_learn_with(&args(&d.join("cut"), &["--resume", &dir]), None).unwrap();
        assert!(resumed.finished);
        assert_eq!(table(&resumed.dir), rows);
        assert_eq!(
            std::fs::read(resumed.dir.join("best.nnue")).unwrap(),
            std::fs::read(whole.dir.join("best.nnue")).unwrap()
        );
        let _ = std::fs::remove_dir_all(&d);
    }

    /// Jieqi generations: deals from the variant's datagen kept as text rows (no packed form),
    /// networks with the Jieqi inputs, and the second generation trained from the first.
    #[test]
    fn jieqi_generations() {
        let d = std::env::temp_dir().join(format!("xqtune-learn-jieqi-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        let run = run_learn_with(
            &args(&d, &["--variant", "jieqi", "--gate-games", "0"]),
            None,
        )
        .unwrap();
        assert!(run.finished);
        let rows = table(&run.dir);
        assert_eq!(rows.len(), 3, "{rows:?}");
        for g in 1..=2u64 {
            let data = run.dir.join(format!("data/gen-{g:03}.txt"));
            let text = std::fs::read_to_string(&data).unwrap();
            let f: Vec<&str> = rows[g as usize].split(',').collect();
            assert_eq!(
                f[1],
                text.lines().count().to_string(),
                "{}",
                rows[g as usize]
            );
            assert!(text.lines().count() > 100);
            // view FENs with pools
            let first = text.lines().next().unwrap();
            assert_eq!(
                first.split(" | ").next().unwrap().split(' ').count(),
                5,
                "{first}"
            );
        }
        let net = Network::load(&run.dir.join("best.nnue")).unwrap();
        assert_eq!(net.variant(), Variant::Jieqi);
        assert!(
            net.description().contains("gen-002"),
            "{}",
            net.description()
        );
        let _ = std::fs::remove_dir_all(&d);
    }
}
