//! What the tuners share besides the [driver](super::driver): the flags and the settings
//! recorded in `config.json`, the CSV log that survives a kill, JSON files, Ctrl-C, parallel
//! game pairs through the match runner and the closing verification match (SPRT by default).

use super::TuneError;
use super::engine::{EngineArgs, EngineSettings};
use super::space::{ParamSet, SpaceKind};
use crate::core::Variant;
use crate::play::game::GameRecord;
use crate::play::stats::{MatchStats, SprtConfig, SprtVerdict};
use crate::play::{Engine, MatchConfig, MatchResult, TimeControl, run_matches};
use crate::util::{self, mix};
use serde::{Deserialize, Serialize};
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};

/// Set by Ctrl-C: tuners finish the current step, checkpoint and stop.
static STOP: AtomicBool = AtomicBool::new(false);

/// Installs the Ctrl-C handler once: the first Ctrl-C asks for a clean stop after the current
/// step, a second one exits at once (the last checkpoint is still valid).
pub fn install_ctrlc() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        let _ = ctrlc::set_handler(|| {
            if STOP.swap(true, Ordering::SeqCst) {
                eprintln!("\nsecond Ctrl-C: exiting now (resume from the last checkpoint)");
                std::process::exit(130);
            }
            eprintln!("\nCtrl-C: stopping after the current step (Ctrl-C again to exit now)");
        });
    });
}

pub fn stop_requested() -> bool {
    STOP.load(Ordering::SeqCst)
}

pub fn io_err(path: &Path, e: std::io::Error) -> TuneError {
    TuneError::Io(format!("{}: {e}", path.display()))
}

pub fn write_json<T: Serialize>(path: &Path, v: &T) -> Result<(), TuneError> {
    let text = serde_json::to_string_pretty(v).map_err(|e| TuneError::Io(e.to_string()))?;
    util::write_atomic(path, text.as_bytes()).map_err(|e| io_err(path, e))
}

pub fn read_json<T: for<'de> Deserialize<'de>>(path: &Path) -> Result<T, TuneError> {
    let text = std::fs::read_to_string(path).map_err(|e| io_err(path, e))?;
    serde_json::from_str(&text).map_err(|e| TuneError::Io(format!("{}: {e}", path.display())))
}

/// An append-only CSV whose data rows beyond a checkpoint are cut on resume, so the log always
/// matches the checkpoint it is resumed from.
pub struct CsvLog {
    file: std::fs::File,
    path: PathBuf,
}

impl CsvLog {
    /// Opens `path`, keeping the header and the first `keep_rows` data rows (0 starts fresh).
    pub fn open(path: &Path, header: &str, keep_rows: usize) -> Result<CsvLog, TuneError> {
        let mut kept = vec![header.to_string()];
        if keep_rows > 0 && path.exists() {
            let f = std::fs::File::open(path).map_err(|e| io_err(path, e))?;
            for line in BufReader::new(f).lines().skip(1).take(keep_rows) {
                kept.push(line.map_err(|e| io_err(path, e))?);
            }
        }
        let mut text = kept.join("\n");
        text.push('\n');
        util::write_atomic(path, text.as_bytes()).map_err(|e| io_err(path, e))?;
        let file = std::fs::OpenOptions::new()
            .append(true)
            .open(path)
            .map_err(|e| io_err(path, e))?;
        Ok(CsvLog {
            file,
            path: path.to_path_buf(),
        })
    }

    pub fn row(&mut self, fields: &[String]) -> Result<(), TuneError> {
        writeln!(self.file, "{}", fields.join(",")).map_err(|e| io_err(&self.path, e))?;
        self.file.flush().map_err(|e| io_err(&self.path, e))
    }
}

/// Formats a float for CSV (fixed precision keeps logs diffable).
pub fn f(v: f64) -> String {
    if v.is_finite() {
        format!("{v:.6}")
    } else {
        String::new()
    }
}

/// Flags shared by every tuner.
#[derive(clap::Args, Debug, Clone)]
pub struct CommonArgs {
    /// Run name: the folder is results/<utc-timestamp>_<tuner>_<name>/.
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

/// Plays game pairs `pairs` (each pair: one opening, colours swapped) of `a` against `b` in
/// parallel. Pair `j` uses seed `mix(seed, [j])`: every engine evaluated with the same `seed`
/// meets the same openings, so opening luck cancels between individuals (common random numbers).
pub fn play_pairs(
    a: &Engine,
    b: &Engine,
    pairs: std::ops::Range<u64>,
    seed: u64,
    common: &CommonSettings,
) -> MatchResult {
    play_pairs_games(a, b, pairs, seed, common).0
}

/// [`play_pairs`] with the games, pair by pair in order (for `tune spsa --save-games`).
pub fn play_pairs_games(
    a: &Engine,
    b: &Engine,
    pairs: std::ops::Range<u64>,
    seed: u64,
    common: &CommonSettings,
) -> (MatchResult, Vec<GameRecord>) {
    let jobs: Vec<(&Engine, &Engine, MatchConfig)> = pairs
        .map(|j| (a, b, common.match_config(mix(seed, &[j]))))
        .collect();
    let mut result = MatchResult::default();
    let mut games = Vec::new();
    // (the configurations come from `match_config`, which always has a limit per move)
    let played = match run_matches(&jobs, common.threads()) {
        Ok(p) => p,
        Err(e) => panic!("tuning match: {e}"),
    };
    for (r, g) in played {
        result += r;
        games.extend(g);
    }
    (result, games)
}

/// The closing match's outcome, as written to `verification.json`.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Verification {
    pub mode: VerifyMode,
    pub stats: MatchStats,
    pub llr: f64,
    pub llr_lower: f64,
    pub llr_upper: f64,
    pub verdict: String,
    /// True when the tuned set is shown stronger than the start (SPRT accepted H1, or the 95%
    /// interval of a fixed match lies above zero).
    pub significant: bool,
    pub nodes: Option<u64>,
    pub depth: Option<u32>,
}

impl Verification {
    /// One short line for plots: Elo, error, games and whether it is significant.
    pub fn short(&self) -> String {
        let s = &self.stats;
        format!(
            "{:+.1} ± {:.1} Elo over {} games ({}): {}",
            s.elo + 0.0,
            s.elo_error,
            s.games,
            match self.mode {
                VerifyMode::Sprt => "SPRT",
                _ => "fixed",
            },
            if self.significant {
                "significant gain"
            } else {
                "no significant gain"
            }
        )
    }

    pub fn summary(&self) -> String {
        let s = &self.stats;
        format!(
            "{:+.1} ± {:.1} Elo over {} games (W{} D{} L{}, LOS {:.1}%): {}",
            s.elo + 0.0,
            s.elo_error,
            s.games,
            s.wins,
            s.draws,
            s.losses,
            s.los * 100.0,
            self.verdict
        )
    }
}

/// Tuned against start: SPRT (elo0, elo1, alpha = beta = 0.05) checked after every batch of
/// pairs, or a fixed number of games. Returns `None` with `--verify none` (or when stopped
/// before any game).
pub fn verify(
    tuned: &ParamSet,
    start: &ParamSet,
    common: &CommonSettings,
) -> Result<Option<Verification>, TuneError> {
    if common.verify == VerifyMode::None || common.verify_games < 2 {
        return Ok(None);
    }
    let other = untuned_defaults(tuned.kind());
    let a = tuned.player("tuned", &other)?;
    let b = start.player("start", &other)?;
    let sprt = SprtConfig {
        elo0: common.elo0,
        elo1: common.elo1,
        alpha: 0.05,
        beta: 0.05,
    };
    let total_pairs = (common.verify_games / 2).max(1) as u64;
    let batch = (crate::exec::slots(common.threads()) as u64 * 2).max(4);
    let seed = mix(common.seed, &[0x7e51f1]);
    let bar = crate::progress::Progress::new(
        total_pairs * 2,
        0,
        "verify {bar:30} {pos}/{len} games {msg}",
        "verify",
    );
    let mut total = MatchResult::default();
    let mut done = 0u64;
    let mut verdict = SprtVerdict::Continue;
    while done < total_pairs {
        let end = (done + batch).min(total_pairs);
        let r = play_pairs(&a, &b, done..end, seed, common);
        total += r;
        done = end;
        let st = MatchStats::from(&total);
        bar.set(
            done * 2,
            format!("{:+.1} ± {:.1} Elo", st.elo, st.elo_error),
        );
        if common.verify == VerifyMode::Sprt {
            verdict = sprt.status(&total).verdict;
            if verdict != SprtVerdict::Continue {
                break;
            }
        }
        if stop_requested() {
            break;
        }
    }
    bar.finish_and_clear();
    let st = MatchStats::from(&total);
    let status = sprt.status(&total);
    let llr = status.llr;
    let (verdict_text, significant) = match common.verify {
        VerifyMode::Sprt => match verdict {
            SprtVerdict::H1 => (
                format!(
                    "SPRT accepted H1 (elo1 = {}): the gain is significant",
                    common.elo1
                ),
                true,
            ),
            SprtVerdict::H0 => (
                format!(
                    "SPRT accepted H0 (elo0 = {}): no significant gain",
                    common.elo0
                ),
                false,
            ),
            SprtVerdict::Continue => {
                let sig = st.elo - st.elo_error > 0.0;
                (
                    format!(
                        "SPRT inconclusive after {} games (LLR {llr:.2} in [{:.2}, {:.2}]); \
                         the 95% interval {} zero",
                        st.games,
                        status.lower,
                        status.upper,
                        if sig { "lies above" } else { "includes" }
                    ),
                    false,
                )
            }
        },
        _ => {
            let sig = st.elo - st.elo_error > 0.0;
            (
                if sig {
                    "the 95% interval lies above zero: the gain is significant".to_string()
                } else {
                    "the 95% interval includes zero: no significant gain".to_string()
                },
                sig,
            )
        }
    };
    Ok(Some(Verification {
        mode: common.verify,
        stats: st,
        llr,
        llr_lower: status.lower,
        llr_upper: status.upper,
        verdict: verdict_text,
        significant,
        nodes: common.match_config(0).nodes,
        depth: common.depth,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(clap::Parser)]
    struct T {
        #[command(flatten)]
        a: CommonArgs,
    }

    /// `--variant jieqi`: the tuners' games (and so the verification match) are seeded deals,
    /// a different deal for every pair seed; the variant is recorded, and a config.json written
    /// before the field existed reads as Xiangqi.
    #[test]
    fn jieqi_runs_play_seeded_deals() {
        use clap::Parser;
        let common = CommonSettings::from(
            &T::parse_from([
                "t",
                "--variant",
                "jieqi",
                "--depth",
                "1",
                "--concurrency",
                "2",
            ])
            .a,
        );
        assert_eq!(common.variant, Variant::Jieqi);
        let start = ParamSet::default_of(SpaceKind::Eval);
        let other = untuned_defaults(SpaceKind::Eval);
        let a = start.player("a", &other).unwrap();
        let b = start.player("b", &other).unwrap();
        let (r, games) = play_pairs_games(&a, &b, 0..2, 5, &common);
        assert_eq!(r.games(), 4);
        let deals: Vec<u64> = games.iter().map(|g| g.deal_seed.unwrap()).collect();
        assert_eq!(deals[0], deals[1], "a pair plays one deal twice");
        assert_ne!(deals[0], deals[2], "pairs get their own deals");
        for g in &games {
            let start = crate::core::Position::from_fen(&g.opening_fen).unwrap();
            assert_eq!(start.variant(), Variant::Jieqi);
        }
        let mut json = serde_json::to_value(&common).unwrap();
        assert_eq!(json["variant"], "jieqi");
        json.as_object_mut().unwrap().remove("variant");
        let old: CommonSettings = serde_json::from_value(json).unwrap();
        assert_eq!(old.variant, Variant::Xiangqi);
        let (_, xiangqi) = play_pairs_games(&a, &b, 0..1, 5, &old);
        assert!(xiangqi.iter().all(|g| g.deal_seed.is_none()));
    }

    #[test]
    fn csv_log_cuts_rows_beyond_checkpoint() {
        let dir = std::env::temp_dir().join(format!("xqtune-csv-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let p = dir.join("log.csv");
        let mut log = CsvLog::open(&p, "a,b", 0).unwrap();
        for i in 0..5 {
            log.row(&[i.to_string(), f(i as f64)]).unwrap();
        }
        drop(log);
        let mut log = CsvLog::open(&p, "a,b", 3).unwrap();
        log.row(&["9".into(), "9".into()]).unwrap();
        let text = std::fs::read_to_string(&p).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 5);
        assert_eq!(lines[0], "a,b");
        assert_eq!(lines[3], "2,2.000000");
        assert_eq!(lines[4], "9,9");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}

/// Serde helpers writing floats as their shortest round-trip decimal strings: serde_json's
/// default float parser may be off by one ulp, and a checkpoint must restore bit-identical
/// values for a resumed run to equal an uninterrupted one.
pub mod exact {
    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(v: &f64, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&format!("{v:?}"))
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<f64, D::Error> {
        let t = String::deserialize(d)?;
        t.parse().map_err(serde::de::Error::custom)
    }

    pub mod vec {
        use serde::{Deserialize, Deserializer, Serializer, ser::SerializeSeq};

        pub fn serialize<S: Serializer>(v: &[f64], s: S) -> Result<S::Ok, S::Error> {
            let mut seq = s.serialize_seq(Some(v.len()))?;
            for x in v {
                seq.serialize_element(&format!("{x:?}"))?;
            }
            seq.end()
        }

        pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<f64>, D::Error> {
            let t = Vec::<String>::deserialize(d)?;
            t.iter()
                .map(|x| x.parse().map_err(serde::de::Error::custom))
                .collect()
        }
    }
}
