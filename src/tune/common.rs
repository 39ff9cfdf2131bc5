//! What every tuner shares: the flags ([`CommonArgs`]), the settings `config.json` records
//! ([`CommonSettings`]), the starting parameter set and the limits of every game a run plays.

use super::TuneError;
use super::engine::{EngineArgs, EngineSettings};
use super::space::{ParamSet, SpaceKind};
use crate::core::Variant;
use crate::play::{MatchConfig, TimeControl};
use serde::{Deserialize, Serialize};
use std::path::PathBuf;

/// Flags shared by every tuner.
#[derive(clap::Args, Debug, Clone)]
pub struct CommonArgs {
    /// Run name: the folder is `results/<utc-timestamp>_<tuner>_<name>/`.
    #[arg(long, default_value = "run")]
    pub name: String,
    /// Starting parameter file (default: the embedded defaults).
    #[arg(long)]
    pub params: Option<PathBuf>,
    /// Start from the flattened set (position tables and mobility zero, piece values kept).
    #[arg(long)]
    pub flatten: bool,
    /// Which parameters: eval (params/xiangqi.json) or search (params/search.json).
    #[arg(long, value_enum, default_value = "eval")]
    pub space: SpaceKind,
    /// Comma-separated name globs to tune (`pst.rook,material.*`); default all.
    #[arg(long, default_value = "")]
    pub only: String,
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Worker threads (default: all cores).
    #[arg(long)]
    pub concurrency: Option<usize>,
    /// Folder that receives the run folder.
    #[arg(long, default_value = "results")]
    pub out: PathBuf,
    /// Continue a stopped or killed run (its config.json replaces the other flags, except
    /// --concurrency and the verification flags, which apply when given).
    #[arg(long)]
    pub resume: Option<PathBuf>,
    /// Nodes per move in every game (tuning and verification).
    #[arg(long, default_value_t = 2000)]
    pub nodes: u64,
    /// Fixed depth per move instead of nodes (tests, quick checks).
    #[arg(long)]
    pub depth: Option<u32>,
    /// Games longer than this are adjudicated by the runner.
    #[arg(long, default_value_t = 300)]
    pub max_plies: usize,
    /// Game of the tuning games and the verification match: xiangqi, or jieqi (seeded deals).
    /// Texel: the variant of the dataset's positions (a mismatch is an error).
    #[arg(long, default_value = "xiangqi")]
    pub variant: Variant,
    /// Closing match of the tuned set against the starting set [default: sprt].
    #[arg(long, value_enum)]
    pub verify: Option<VerifyMode>,
    /// Most games of the verification match [default: 200].
    #[arg(long)]
    pub verify_games: Option<usize>,
    /// SPRT hypotheses in Elo (H0: elo0, H1: elo1) [default: 0 and 10].
    #[arg(long, allow_negative_numbers = true)]
    pub elo0: Option<f64>,
    #[arg(long, allow_negative_numbers = true)]
    pub elo1: Option<f64>,
    /// Milliseconds per move instead of nodes (external engines).
    #[arg(long)]
    pub movetime: Option<u64>,
    /// Clock per game instead of nodes, `base+inc` in seconds (`10+0.1`).
    #[arg(long)]
    pub tc: Option<String>,
    #[command(flatten)]
    pub engine: EngineArgs,
}

/// The common settings of a run as `config.json` records them. Decoupled from the flags in
/// [`CommonArgs`], so renaming a flag cannot break `--resume` of an existing run; the field
/// names are those of the flags when this struct was introduced, so older runs still read.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct CommonSettings {
    pub name: String,
    pub params: Option<PathBuf>,
    pub flatten: bool,
    pub space: SpaceKind,
    pub only: String,
    pub seed: u64,
    pub concurrency: Option<usize>,
    pub out: PathBuf,
    pub nodes: u64,
    pub depth: Option<u32>,
    pub max_plies: usize,
    /// (Runs recorded before the field existed played Xiangqi.)
    #[serde(default)]
    pub variant: Variant,
    pub verify: VerifyMode,
    pub verify_games: usize,
    pub elo0: f64,
    pub elo1: f64,
    /// (Written only when given, so the records of earlier runs and in-process runs read and
    /// look as before.)
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub movetime: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tc: Option<String>,
    /// The external engine of an engine run (filled by [`CommonSettings::attach_engine`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub engine: Option<EngineSettings>,
}

const DEFAULT_VERIFY: VerifyMode = VerifyMode::Sprt;
const DEFAULT_VERIFY_GAMES: usize = 200;
const DEFAULT_ELO0: f64 = 0.0;
const DEFAULT_ELO1: f64 = 10.0;

impl From<&CommonArgs> for CommonSettings {
    fn from(a: &CommonArgs) -> CommonSettings {
        CommonSettings {
            name: a.name.clone(),
            params: a.params.clone(),
            flatten: a.flatten,
            space: a.space,
            only: a.only.clone(),
            seed: a.seed,
            concurrency: a.concurrency,
            out: a.out.clone(),
            nodes: a.nodes,
            depth: a.depth,
            max_plies: a.max_plies,
            variant: a.variant,
            verify: a.verify.unwrap_or(DEFAULT_VERIFY),
            verify_games: a.verify_games.unwrap_or(DEFAULT_VERIFY_GAMES),
            elo0: a.elo0.unwrap_or(DEFAULT_ELO0),
            elo1: a.elo1.unwrap_or(DEFAULT_ELO1),
            movetime: a.movetime,
            tc: a.tc.clone(),
            engine: None,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum VerifyMode {
    /// Sequential test: stops as soon as the gain is confirmed or refuted (or at the cap).
    Sprt,
    /// All --verify-games games, then Elo with its 95% interval.
    Fixed,
    /// No verification (the run then cannot be promoted without --force).
    None,
}

impl CommonSettings {
    /// The fixed opponent of an engine run (`--opponent`), if any.
    pub fn opponent(&self) -> Result<Option<crate::play::Engine>, TuneError> {
        let Some(o) = self.engine.as_ref().and_then(|e| e.opponent.as_ref()) else {
            return Ok(None);
        };
        Ok(Some(crate::play::Engine::External(
            o.external("opponent", &[])?,
        )))
    }

    /// On `--resume`: the thread count and the verification given on the command line replace
    /// the recorded ones (a finished run can so be verified again with more games).
    pub fn resume_with(&mut self, a: &CommonArgs) {
        self.concurrency = a.concurrency.or(self.concurrency);
        self.verify = a.verify.unwrap_or(self.verify);
        self.verify_games = a.verify_games.unwrap_or(self.verify_games);
        self.elo0 = a.elo0.unwrap_or(self.elo0);
        self.elo1 = a.elo1.unwrap_or(self.elo1);
    }

    pub fn threads(&self) -> usize {
        self.concurrency.unwrap_or_else(|| {
            std::thread::available_parallelism()
                .map(|n| n.get())
                .unwrap_or(1)
        })
    }

    /// For a new run: checks the limits, and with `--engine` starts the engine, reads its
    /// options and records them (the run's space becomes the engine's options).
    pub fn attach_engine(&mut self, a: &EngineArgs) -> Result<(), TuneError> {
        if let Some(tc) = &self.tc {
            TimeControl::parse(tc).map_err(|e| TuneError::Params(format!("--tc: {e}")))?;
        }
        if self.movetime == Some(0) {
            return Err(TuneError::Params("--movetime must be at least 1 ms".into()));
        }
        if a.engine.is_some() && (self.params.is_some() || self.flatten) {
            return Err(TuneError::Params(
                "--params and --flatten choose xqtune's own parameters; with --engine the \
                 starting values are the engine's defaults or --param-file"
                    .into(),
            ));
        }
        if a.engine.is_some() && self.space != SpaceKind::Eval {
            return Err(TuneError::Params(
                "--space chooses among xqtune's own parameters; with --engine the space is the \
                 engine's options named by --only or --param-file"
                    .into(),
            ));
        }
        if let Some(e) = EngineSettings::from_args(a, &self.only)? {
            self.space = SpaceKind::Engine;
            self.engine = Some(e);
        }
        Ok(())
    }

    /// The starting set: the file, or the embedded defaults; flattened on request. An engine
    /// run starts from the options recorded by [`CommonSettings::attach_engine`].
    pub fn start_params(&self) -> Result<ParamSet, TuneError> {
        if self.space == SpaceKind::Engine {
            return match &self.engine {
                Some(e) => Ok(ParamSet::Engine(e.option_set())),
                None => Err(TuneError::Params("an engine run without --engine".into())),
            };
        }
        let p = match &self.params {
            Some(path) => ParamSet::load(self.space, path)?,
            None => ParamSet::default_of(self.space),
        };
        Ok(match (p, self.flatten) {
            (ParamSet::Eval(e), true) => ParamSet::Eval(e.flattened()),
            (p, _) => p,
        })
    }

    pub fn match_config(&self, seed: u64) -> MatchConfig {
        MatchConfig {
            games: 2,
            nodes: if self.depth.is_some() || self.movetime.is_some() || self.tc.is_some() {
                None
            } else {
                Some(self.nodes)
            },
            depth: self.depth,
            movetime_ms: self.movetime,
            // (checked when the run was created)
            tc: self.tc.as_deref().and_then(|t| TimeControl::parse(t).ok()),
            concurrency: 1,
            seed,
            max_plies: self.max_plies,
            // Jieqi: every pair a fresh deal from `seed` (see `play::runner`)
            variant: self.variant,
            ..MatchConfig::default()
        }
    }
}

/// The parameter set a run does not tune (search values for an eval run, and the reverse):
/// every engine of the run plays with its defaults.
pub fn untuned_defaults(tuned: SpaceKind) -> ParamSet {
    ParamSet::default_of(match tuned {
        SpaceKind::Eval => SpaceKind::Search,
        SpaceKind::Search | SpaceKind::Engine => SpaceKind::Eval,
    })
}
