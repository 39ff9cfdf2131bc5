//! What every tuner shares: the flags ([`CommonArgs`]), the settings `config.json` records
//! ([`CommonSettings`]), the starting parameter set and the limits of every game a run plays.

use super::TuneError;
use super::engine::{EngineArgs, EngineCommand, EngineSettings};
use super::space::{ParamSet, SpaceKind};
use crate::core::Variant;
use crate::play::{Adjudication, MatchConfig, Opening, TimeControl, load_openings};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use std::sync::Arc;

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
    /// --concurrency and the verification flags, which apply when given; an engine run also
    /// takes its engines' command lines anew, for another machine: docs/tuning.md).
    #[arg(long)]
    pub resume: Option<PathBuf>,
    /// Nodes per move in every game (tuning and verification).
    #[arg(long, default_value_t = 2000, value_parser = clap::value_parser!(u64).range(1..))]
    pub nodes: u64,
    /// Fixed depth per move instead of nodes (tests, quick checks).
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..))]
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
    #[arg(long, value_parser = crate::util::flags::game_pairs)]
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
    /// Opening suite of the tuning and verification games (default: datasets/openings.txt,
    /// embedded); the run folder keeps a copy (`openings.txt`), which a resumed run plays.
    #[arg(long)]
    pub openings: Option<PathBuf>,
    /// Draw adjudication of every game, `movenumber=40,movecount=8,score=10` (off by default).
    #[arg(long)]
    pub draw_adjudication: Option<String>,
    /// Resign adjudication of every game, `movecount=3,score=600` (off by default).
    #[arg(long)]
    pub resign_adjudication: Option<String>,
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
    /// The opponents of the tuning games (`--opponent`, repeatable; empty: self-play). A run
    /// recorded with one opponent under `engine` still reads (see [`CommonSettings::opponents`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub opponents: Vec<EngineCommand>,
    /// The opening suite given with `--openings` (a record: the games play the run folder's
    /// copy, `openings.txt`; none: the embedded default suite).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub openings: Option<PathBuf>,
    /// The adjudication of every game (none by default, and in runs recorded before it).
    #[serde(default, skip_serializing_if = "is_off")]
    pub adjudication: Adjudication,
    /// The suite the games play, read from the run folder by [`CommonSettings::load_suite`].
    #[serde(skip)]
    pub suite: Option<Arc<Vec<Opening>>>,
}

fn is_off(a: &Adjudication) -> bool {
    *a == Adjudication::default()
}

/// The run folder's copy of the opening suite.
pub const SUITE_FILE: &str = "openings.txt";

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
            opponents: Vec::new(),
            openings: a.openings.clone(),
            adjudication: Adjudication::default(),
            suite: None,
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
    /// The flag that limits the games instead of `--nodes`: `--tc`, `--depth` or `--movetime`
    /// (none: the games are node-limited).
    pub fn games_limited_by(&self) -> Option<&'static str> {
        [
            self.tc.as_ref().map(|_| "--tc"),
            self.depth.map(|_| "--depth"),
            self.movetime.map(|_| "--movetime"),
        ]
        .into_iter()
        .flatten()
        .next()
    }

    /// The opponents of the tuning games (empty: self-play): `opponents`, or the one
    /// opponent an earlier run recorded under `engine`. One opponent is named "opponent", a
    /// pool's `opp<k>-<program>`.
    pub fn opponents(&self) -> Result<Vec<crate::play::Engine>, TuneError> {
        let list = self.opponent_commands();
        let n = list.len();
        list.iter()
            .enumerate()
            .map(|(k, o)| {
                let name = if n == 1 {
                    "opponent".to_string()
                } else {
                    let c = o.external("x", &[])?;
                    let stem = std::path::Path::new(&c.program)
                        .file_name()
                        .map_or("engine".into(), |s| s.to_string_lossy().to_string());
                    format!("opp{}-{stem}", k + 1)
                };
                Ok(crate::play::Engine::External(o.external(&name, &[])?))
            })
            .collect()
    }

    /// The opponents' commands: `opponents`, or the one opponent an earlier run recorded under
    /// `engine`.
    fn opponent_commands(&self) -> Vec<EngineCommand> {
        let legacy = self.engine.as_ref().and_then(|e| e.opponent.clone());
        match (&self.opponents[..], legacy) {
            ([], Some(o)) => vec![o],
            (l, _) => l.to_vec(),
        }
    }

    /// On `--resume`: the thread count and the verification given on the command line replace
    /// the recorded ones (a finished run can so be verified again with more games). `--engine`
    /// and `--opponent` replace the recorded command lines, so that a run moves to a machine
    /// where the same engines live at other paths; protocols, options and the tuned set stay as
    /// recorded, and so does `config.json`.
    pub fn resume_with(&mut self, a: &CommonArgs) -> Result<(), TuneError> {
        self.concurrency = a.concurrency.or(self.concurrency);
        self.verify = a.verify.unwrap_or(self.verify);
        self.verify_games = a.verify_games.unwrap_or(self.verify_games);
        self.elo0 = a.elo0.unwrap_or(self.elo0);
        self.elo1 = a.elo1.unwrap_or(self.elo1);
        if let Some(command) = &a.engine.engine {
            let Some(e) = self.engine.as_mut() else {
                return Err(TuneError::Resume(
                    "--engine: this run tunes xqtune's own parameters, not an engine's options"
                        .into(),
                ));
            };
            e.engine.command = EngineCommand::parse(command, e.engine.proto, &[])?.command;
        }
        if !a.engine.opponent.is_empty() {
            let mut recorded = self.opponent_commands();
            if recorded.len() != a.engine.opponent.len() {
                return Err(TuneError::Resume(format!(
                    "{} --opponent for a run recorded with {} opponents: give each recorded \
                     opponent's command, in the recorded order",
                    a.engine.opponent.len(),
                    recorded.len()
                )));
            }
            for (o, command) in recorded.iter_mut().zip(&a.engine.opponent) {
                o.command = EngineCommand::parse(command, o.proto, &[])?.command;
            }
            // (a legacy opponent moves into the pool)
            if let Some(e) = self.engine.as_mut() {
                e.opponent = None;
            }
            self.opponents = recorded;
        }
        Ok(())
    }

    pub fn threads(&self) -> usize {
        self.concurrency.unwrap_or_else(|| {
            std::thread::available_parallelism()
                .map(|n| n.get())
                .unwrap_or(1)
        })
    }

    /// For a new run: reads the adjudication flags and the opening suite (checked here, before
    /// a run folder exists).
    pub fn set_games(&mut self, a: &CommonArgs) -> Result<(), TuneError> {
        self.adjudication = crate::play::parse_adjudication(
            a.draw_adjudication.as_deref(),
            a.resign_adjudication.as_deref(),
        )
        .map_err(|e| TuneError::Params(format!("{e:#}")))?;
        if let Some(path) = &self.openings {
            if self.variant == Variant::Jieqi {
                return Err(TuneError::Params(
                    "--openings: Jieqi games start from seeded deals, not from an opening suite"
                        .into(),
                ));
            }
            let suite = load_openings(path)
                .map_err(|e| TuneError::Params(format!("--openings {}: {e}", path.display())))?;
            self.suite = Some(Arc::new(suite));
        }
        Ok(())
    }

    /// Copies the suite of `--openings` into the new run folder `dir`, so that a resumed run
    /// plays the same openings whatever becomes of the file.
    pub fn keep_suite(&self, dir: &Path) -> Result<(), TuneError> {
        match &self.openings {
            Some(path) => std::fs::copy(path, dir.join(SUITE_FILE))
                .map(|_| ())
                .map_err(|e| TuneError::Io(format!("copying {}: {e}", path.display()))),
            None => Ok(()),
        }
    }

    /// On `--resume`: reads the suite back from the run folder `dir` (a run recorded with
    /// `--openings` whose copy is missing is an error, not a silent change of openings).
    pub fn load_suite(&mut self, dir: &Path) -> Result<(), TuneError> {
        if self.openings.is_some() {
            let path = dir.join(SUITE_FILE);
            let suite = load_openings(&path)
                .map_err(|e| TuneError::Resume(format!("the run's opening suite: {e}")))?;
            self.suite = Some(Arc::new(suite));
        }
        Ok(())
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
        self.opponents = a.opponents()?;
        // Each opponent starts (as a match checks its engines), even with --no-check: an
        // opponent that cannot play would otherwise forfeit every game of the run.
        for (i, o) in self.opponents.iter().enumerate() {
            let name = format!("opponent {}", i + 1);
            let c = o.external(&name, &[])?;
            crate::play::Engine::External(c)
                .check_starts()
                .map_err(|e| TuneError::Params(format!("--opponent: {e:#}")))?;
        }
        if let Some(e) = EngineSettings::from_args(a, &self.only)? {
            super::check::check_before_tuning(&e.option_set(), a)?;
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
            nodes: self.games_limited_by().is_none().then_some(self.nodes),
            depth: self.depth,
            movetime_ms: self.movetime,
            // (checked when the run was created)
            tc: self.tc.as_deref().and_then(|t| TimeControl::parse(t).ok()),
            concurrency: 1,
            seed,
            max_plies: self.max_plies,
            // Jieqi: every pair a fresh deal from `seed` (see `play::runner`)
            variant: self.variant,
            openings: self.suite.clone(),
            adjudication: self.adjudication,
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::uci::Protocol;

    #[derive(clap::Parser)]
    struct T {
        #[command(flatten)]
        a: CommonArgs,
    }

    /// On `--resume`, `--engine` and `--opponent` give the recorded engines' new command lines
    /// (another machine); protocols, fixed options and the tuned set stay as recorded.
    #[test]
    fn resume_moves_the_engines_to_new_commands() {
        use super::super::engine::EngineSettings;
        use clap::Parser;
        let recorded = |command: &str, proto| EngineCommand {
            command: command.into(),
            proto,
            options: vec![("Hash".into(), "8".into())],
        };
        let mut s = CommonSettings::from(&T::parse_from(["t"]).a);
        s.engine = Some(EngineSettings {
            engine: recorded("/old/xqtune uci --tune-options", Protocol::Uci),
            opponent: None,
            param_file: None,
            options: vec![],
        });
        s.opponents = vec![
            recorded("/old/pikafish", Protocol::Uci),
            recorded("/old/eleeye", Protocol::Ucci),
        ];
        let mut moved = s.clone();
        moved
            .resume_with(
                &T::parse_from([
                    "t",
                    "--engine",
                    "/new/xqtune uci --tune-options",
                    "--opponent",
                    "/new/pikafish",
                    "--opponent",
                    "/new/eleeye",
                ])
                .a,
            )
            .unwrap();
        let e = &moved.engine.as_ref().unwrap().engine;
        assert_eq!(e.command, "/new/xqtune uci --tune-options");
        assert_eq!(e.options, s.engine.as_ref().unwrap().engine.options);
        let o: Vec<_> = moved
            .opponents
            .iter()
            .map(|o| (o.command.as_str(), o.proto))
            .collect();
        assert_eq!(
            o,
            [
                ("/new/pikafish", Protocol::Uci),
                ("/new/eleeye", Protocol::Ucci)
            ]
        );
        // nothing given: the recorded commands
        let mut same = s.clone();
        same.resume_with(&T::parse_from(["t"]).a).unwrap();
        assert_eq!(same.opponents[1].command, "/old/eleeye");
        // one opponent for a pool of two: which one is meant is unknowable
        let e = s
            .clone()
            .resume_with(&T::parse_from(["t", "--opponent", "/new/pikafish"]).a)
            .unwrap_err();
        assert!(
            e.to_string()
                .contains("1 --opponent for a run recorded with 2"),
            "{e}"
        );
        // an own-parameter run has no engine to move
        let mut own = CommonSettings::from(&T::parse_from(["t"]).a);
        let e = own
            .resume_with(&T::parse_from(["t", "--engine", "/new/xqtune uci"]).a)
            .unwrap_err();
        assert!(
            e.to_string()
                .contains("--engine: this run tunes xqtune's own"),
            "{e}"
        );
        // a run recorded with one opponent under `engine` (before pools) moves it too
        let mut legacy = s.clone();
        legacy.opponents.clear();
        legacy.engine.as_mut().unwrap().opponent = Some(recorded("/old/pikafish", Protocol::Uci));
        legacy
            .resume_with(&T::parse_from(["t", "--opponent", "/new/pikafish"]).a)
            .unwrap();
        assert_eq!(legacy.opponents().unwrap()[0].name(), "opponent");
        assert_eq!(legacy.opponents[0].command, "/new/pikafish");
    }

    /// `--openings` and the adjudication flags reach every game's configuration; the run
    /// folder's copy of the suite is what a resumed run plays, even when the file is gone.
    #[test]
    fn openings_and_adjudication_reach_the_games_and_survive_resume() {
        use crate::play::{DrawAdjudication, ResignAdjudication};
        use clap::Parser;
        let dir = std::env::temp_dir().join(format!("xq-common-suite-{}", std::process::id()));
        let run = dir.join("run");
        std::fs::create_dir_all(&run).unwrap();
        let suite = dir.join("suite.txt");
        std::fs::write(&suite, "startpos moves h2e2 h9g7\nstartpos moves b2e2\n").unwrap();
        let a = T::parse_from([
            "t",
            "--openings",
            suite.to_str().unwrap(),
            "--draw-adjudication",
            "movenumber=40,movecount=8,score=10",
            "--resign-adjudication",
            "movecount=3,score=600",
        ])
        .a;
        let mut s = CommonSettings::from(&a);
        s.set_games(&a).unwrap();
        let cfg = s.match_config(7);
        assert_eq!(cfg.openings.as_ref().map(|o| o.len()), Some(2));
        let draw = DrawAdjudication {
            move_number: 40,
            move_count: 8,
            score: 10,
        };
        let resign = ResignAdjudication {
            move_count: 3,
            score: 600,
        };
        assert_eq!(cfg.adjudication.draw, Some(draw));
        assert_eq!(cfg.adjudication.resign, Some(resign));
        s.keep_suite(&run).unwrap();
        let recorded = serde_json::to_string(&s).unwrap();
        std::fs::remove_file(&suite).unwrap();
        let mut back: CommonSettings = serde_json::from_str(&recorded).unwrap();
        assert!(back.suite.is_none());
        back.load_suite(&run).unwrap();
        let again = back.match_config(7);
        assert_eq!(again.openings, cfg.openings);
        assert_eq!(again.adjudication, cfg.adjudication);
        // a recorded suite whose copy is missing is an error, not the default suite
        std::fs::remove_file(run.join(SUITE_FILE)).unwrap();
        let e = back.load_suite(&run).unwrap_err().to_string();
        assert!(e.contains(SUITE_FILE), "{e}");
        std::fs::remove_dir_all(&dir).unwrap();
        // bad flags are named
        let refused = |argv: &[&str]| {
            let a = T::parse_from(std::iter::once("t").chain(argv.iter().copied())).a;
            CommonSettings::from(&a)
                .set_games(&a)
                .unwrap_err()
                .to_string()
        };
        let e = refused(&["--draw-adjudication", "movenumber=40,movecount=8"]);
        assert!(e.contains("draw adjudication: missing 'score'"), "{e}");
        let e = refused(&["--openings", "/nonexistent/suite.txt"]);
        assert!(e.contains("--openings /nonexistent/suite.txt"), "{e}");
        let e = refused(&["--variant", "jieqi", "--openings", "suite.txt"]);
        assert!(e.contains("seeded deals"), "{e}");
        // without the flags: the default suite, no adjudication, and config.json as before
        let plain = T::parse_from(["t"]).a;
        let mut p = CommonSettings::from(&plain);
        p.set_games(&plain).unwrap();
        let cfg = p.match_config(7);
        assert!(cfg.openings.is_none());
        assert_eq!(cfg.adjudication, Adjudication::default());
        let json = serde_json::to_value(&p).unwrap();
        assert!(json.get("openings").is_none() && json.get("adjudication").is_none());
    }

    /// A run recorded with one `engine.opponent` (before opponents were a pool) still plays
    /// that opponent; a pool names its engines apart.
    #[test]
    fn the_opponent_of_an_earlier_run_still_reads() {
        use clap::Parser;
        let mut s = CommonSettings::from(&T::parse_from(["t"]).a);
        assert!(s.opponents().unwrap().is_empty());
        let cmd = |c: &str| EngineCommand::parse(c, Protocol::Ucci, &[]).unwrap();
        let mut json = serde_json::to_value(&s).unwrap();
        assert!(json.get("opponents").is_none(), "not written when empty");
        json["engine"] = serde_json::json!({
            "engine": cmd("eng"),
            "opponent": cmd("/x/eleeye"),
            "options": [],
        });
        let old: CommonSettings = serde_json::from_value(json).unwrap();
        let o = old.opponents().unwrap();
        assert_eq!(o.len(), 1);
        assert_eq!(o[0].name(), "opponent");
        s.opponents = vec![cmd("/x/eleeye"), cmd("/y/pikafish --a")];
        let names: Vec<String> = s
            .opponents()
            .unwrap()
            .iter()
            .map(|e| e.name().to_string())
            .collect();
        assert_eq!(names, ["opp1-eleeye", "opp2-pikafish"]);
    }

    #[test]
    fn opponent_protocols_are_one_for_all_or_one_each() {
        use clap::Parser;
        let parse = |v: &[&str]| {
            let mut argv = vec!["t"];
            argv.extend_from_slice(v);
            T::parse_from(argv).a.engine.opponents()
        };
        let o = parse(&[
            "--opponent",
            "a",
            "--opponent",
            "b",
            "--opponent-proto",
            "ucci",
        ])
        .unwrap();
        assert!(o.iter().all(|c| c.proto == Protocol::Ucci));
        let o = parse(&[
            "--opponent",
            "a",
            "--opponent",
            "b",
            "--opponent-proto",
            "ucci",
            "--opponent-proto",
            "uci",
        ])
        .unwrap();
        assert_eq!((o[0].proto, o[1].proto), (Protocol::Ucci, Protocol::Uci));
        let e = parse(&[
            "--opponent",
            "a",
            "--opponent",
            "b",
            "--opponent",
            "c",
            "--opponent-proto",
            "ucci",
            "--opponent-proto",
            "uci",
        ])
        .unwrap_err();
        assert!(
            e.to_string()
                .contains("2 --opponent-proto for 3 --opponent"),
            "{e}"
        );
        assert!(parse(&["--opponent-option", "Hash=1"]).is_err());
    }

    /// `--no-check` is about an external engine's options: alone it is a mistake.
    #[test]
    fn no_check_needs_an_engine() {
        use clap::Parser;
        let a = T::parse_from(["t", "--no-check"]).a;
        let e = EngineSettings::from_args(&a.engine, "").unwrap_err();
        assert!(e.to_string().contains("--no-check need --engine"), "{e}");
    }
}
