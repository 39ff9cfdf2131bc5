//! The one run driver of the tuners (after bullet's trainer/driver split): a [`Tuner`] knows
//! how to start, take one step and (de)serialise its state; the driver owns everything else a
//! run does. That is the run folder (`config.json` from the settings, `start.json`), the atomic
//! checkpoint after every step, `--resume`, Ctrl-C (finish the step, checkpoint, stop), the
//! progress bar, `log.csv` (cut back to the checkpoint on resume), `best.json`, the
//! verification match, the plots and the closing report.

use super::TuneError;
use super::common::{CommonArgs, CommonSettings, VerifyMode};
use super::files::{CsvLog, csv_float, io_err, read_json, write_json};
use super::space::{ParamSet, Space};
use super::stop::stop_requested;
use super::verify::{Verification, verify};
use crate::eval::nnue::Network;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use std::time::Instant;

/// What one step reports: its row of `log.csv` (the driver appends the step's time) and the
/// progress bar's message.
pub struct Step {
    pub row: Vec<String>,
    pub message: String,
}

/// One optimiser: GA, SPSA or Texel.
pub trait Tuner {
    /// `ga`, `spsa`, `texel`: folder names, `config.json`, messages.
    const NAME: &'static str;
    /// What one step is called in messages (`generation`, `iteration`, `epoch`).
    const STEP: &'static str;
    /// The command that starts (and with `--resume` continues) a run: `xqtune tune ga`, ...
    const COMMAND: &'static str;
    /// The log's file name in the run folder (`log.csv`; the learning loop's generation table
    /// is `generations.csv`).
    const LOG_FILE: &'static str = "log.csv";
    /// Header of the log; its last column is the step's time.
    const LOG_HEADER: &'static str;
    /// The tuner's own settings, stored in `config.json` beside the common ones.
    type Settings: Serialize + DeserializeOwned + Clone + Send + Sync;
    /// Everything a resumed run needs, checkpointed after every step.
    type State: Serialize + DeserializeOwned + Send;

    /// The full starting parameter vector recorded in a state.
    fn start_vec(state: &Self::State) -> &[i32];
    /// Data rows of `log.csv` that belong to `state` (rows beyond are cut on resume).
    fn log_rows(state: &Self::State) -> usize;
    /// Steps of a complete run, and steps done in `state` (the progress bar).
    fn total_steps(&self) -> u64;
    fn steps_done(&self, state: &Self::State) -> u64;
    /// One line saying what the run does (printed with the run folder).
    fn banner(&self) -> String;
    /// The state of a new run, with the log row it starts from, if any.
    fn start(&mut self) -> Result<(Self::State, Option<Vec<String>>), TuneError>;
    fn finished(&self, state: &Self::State) -> bool;
    /// Advances `state` by one step; `None` when the tuner found that it had already converged
    /// without taking one (then `finished` holds).
    fn step(&mut self, state: &mut Self::State) -> Result<Option<Step>, TuneError>;
    /// The tuned genes of a stopped run, if it has any yet.
    fn best_so_far(&self, state: &Self::State) -> Option<Vec<i32>>;
    /// What the run made after the last step; may finish work in `state` first (the GA's final
    /// selection), which the driver then checkpoints.
    fn best(&mut self, state: &mut Self::State) -> Result<Tuned, TuneError>;
}

/// What a finished run made.
pub enum Tuned {
    /// Genes of the run's space: the driver writes them as `best.json` (and the formats of
    /// their kind) and verifies them against the start.
    Genes(Vec<i32>),
    /// A network the tuner has written to `file`: the verification plays it (with the start's
    /// parameters for everything else) against the start's classical evaluation, or against
    /// `baseline`.
    Network {
        file: PathBuf,
        tuned: Box<Network>,
        baseline: Option<Box<Network>>,
    },
    /// Nothing better than the start was found (a learning loop whose gates all refused):
    /// the reason is printed, nothing is verified.
    Nothing(String),
}

/// All of a run's settings: the common ones and the tuner's own, flat in `config.json`.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct RunSettings<T> {
    #[serde(flatten)]
    pub common: CommonSettings,
    #[serde(flatten)]
    pub tuner: T,
}

/// `config.json`: which tuner with which settings (read back by `--resume`). The settings key
/// stays `args`, so the runs written before the settings structs existed still resume.
#[derive(Serialize, Deserialize, Debug, Clone)]
pub struct RunConfig<S> {
    pub tuner: String,
    pub version: String,
    pub created: String,
    pub args: S,
}

/// What a tuner is given to build itself: the run's folder, settings, space and starting set.
pub struct RunContext<S> {
    pub dir: PathBuf,
    pub settings: RunSettings<S>,
    pub space: Space,
    pub start: ParamSet,
}

/// What a finished or stopped run produced.
#[derive(Debug)]
pub struct RunOutcome {
    pub dir: PathBuf,
    pub finished: bool,
    pub best: Option<Vec<i32>>,
    pub verification: Option<Verification>,
}

/// Runs (or, with `--resume`, continues) a tuning run. `make` builds the tuner once the run
/// folder, settings and space are known; `max_steps` stops early as Ctrl-C would (tests).
pub fn launch<T: Tuner>(
    args: &CommonArgs,
    settings: T::Settings,
    make: impl FnOnce(&RunContext<T::Settings>) -> Result<T, TuneError> + Send,
    max_steps: Option<u64>,
) -> Result<RunOutcome, TuneError> {
    let (ctx, state) = match &args.resume {
        Some(dir) => open::<T>(dir, args)?,
        None => (create::<T>(args, settings)?, None),
    };
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(ctx.settings.common.threads())
        .build()
        .map_err(|e| TuneError::Io(e.to_string()))?;
    let again = resume_flags(args);
    pool.install(|| drive(ctx, state, make, max_steps, &again))
}

/// The flags a stopped run's "continue with" line repeats: the engine command lines a
/// `--resume` was given, without which the recorded ones would play again.
fn resume_flags(args: &CommonArgs) -> String {
    if args.resume.is_none() {
        return String::new();
    }
    let engine = args.engine.engine.iter().map(|c| ("--engine", c));
    let opponents = args.engine.opponent.iter().map(|c| ("--opponent", c));
    engine
        .chain(opponents)
        .map(|(flag, command)| format!(" {flag} {}", shell_word(command)))
        .collect()
}

/// `word` as one word of a POSIX shell command line.
fn shell_word(word: &str) -> String {
    let plain = |c: char| c.is_ascii_alphanumeric() || "-_./=:,+@%".contains(c);
    if !word.is_empty() && word.chars().all(plain) {
        word.to_string()
    } else {
        format!("'{}'", word.replace('\'', r"'\''"))
    }
}

/// A new run: its folder, `start.json` and `config.json`.
fn create<T: Tuner>(
    args: &CommonArgs,
    tuner: T::Settings,
) -> Result<RunContext<T::Settings>, TuneError> {
    let mut settings = RunSettings {
        common: CommonSettings::from(args),
        tuner,
    };
    settings.common.set_games(args)?;
    settings.common.attach_engine(&args.engine)?;
    let start = settings.common.start_params()?;
    let space = Space::new(start.clone(), &settings.common.only)?;
    let dir = crate::util::create_run_dir(
        &settings.common.out,
        T::NAME,
        &settings.common.name,
        '-',
        &["checkpoints", "plots"],
    )
    .map_err(|e| io_err(&settings.common.out, e))?;
    write_params(&dir.join("start.json"), &start)?;
    settings.common.keep_suite(&dir)?;
    write_json(
        &dir.join("config.json"),
        &RunConfig {
            tuner: T::NAME.to_string(),
            version: env!("CARGO_PKG_VERSION").to_string(),
            created: chrono::Utc::now().to_rfc3339(),
            args: &settings,
        },
    )?;
    Ok(RunContext {
        dir,
        settings,
        space,
        start,
    })
}

/// A resumed run and its checkpoint, if one was written.
type Resumed<T> = (
    RunContext<<T as Tuner>::Settings>,
    Option<<T as Tuner>::State>,
);

/// A resumed run: the settings from `config.json` (the command line may raise the thread
/// count and change the verification), the start from `start.json` with the exact vector of
/// the checkpoint, and the checkpoint itself when one was written.
fn open<T: Tuner>(dir: &Path, args: &CommonArgs) -> Result<Resumed<T>, TuneError> {
    let cfg: RunConfig<RunSettings<T::Settings>> = read_json(&dir.join("config.json"))?;
    if cfg.tuner != T::NAME {
        return Err(TuneError::Resume(format!(
            "{} is a {} run, not a {} run",
            dir.display(),
            cfg.tuner,
            T::NAME
        )));
    }
    let mut settings = cfg.args;
    settings.common.resume_with(args)?;
    settings.common.load_suite(dir)?;
    let state_path = dir.join("checkpoints/state.json");
    let state: Option<T::State> = if state_path.exists() {
        Some(read_json(&state_path)?)
    } else {
        None
    };
    let mut start = ParamSet::load(settings.common.space, &dir.join("start.json"))?;
    // an engine's command as the settings have it (`--engine` on resume moves it)
    if let (ParamSet::Engine(set), Some(e)) = (&mut start, &settings.common.engine) {
        set.engine = e.engine.clone();
    }
    let start = match &state {
        Some(s) => start.from_vec(T::start_vec(s)),
        None => start,
    };
    let space = Space::new(start.clone(), &settings.common.only)?;
    let ctx = RunContext {
        dir: dir.to_path_buf(),
        settings,
        space,
        start,
    };
    Ok((ctx, state))
}

fn drive<T: Tuner>(
    ctx: RunContext<T::Settings>,
    state: Option<T::State>,
    make: impl FnOnce(&RunContext<T::Settings>) -> Result<T, TuneError>,
    max_steps: Option<u64>,
    again: &str,
) -> Result<RunOutcome, TuneError> {
    let mut tuner = make(&ctx)?;
    let dir = &ctx.dir;
    let checkpoint = dir.join("checkpoints/state.json");
    let log_path = dir.join(T::LOG_FILE);
    let (mut state, mut log) = match state {
        Some(s) => {
            let log = CsvLog::open(&log_path, T::LOG_HEADER, T::log_rows(&s))?;
            (s, log)
        }
        None => {
            let mut log = CsvLog::open(&log_path, T::LOG_HEADER, 0)?;
            let (s, first) = tuner.start()?;
            if let Some(mut row) = first {
                row.push(csv_float(0.0));
                log.row(&row)?;
            }
            write_json(&checkpoint, &s)?;
            (s, log)
        }
    };
    crate::outln!("{} -> {}", tuner.banner(), dir.display());
    let bar = progress(tuner.total_steps(), tuner.steps_done(&state), T::NAME);
    let mut steps = 0;
    while !tuner.finished(&state) {
        if stop_requested() || max_steps.is_some_and(|m| steps >= m) {
            bar.abandon();
            crate::outln!(
                "stopped after {} {}; continue with: {} --resume {}{again}",
                T::STEP,
                tuner.steps_done(&state),
                T::COMMAND,
                shell_word(&dir.display().to_string())
            );
            return Ok(RunOutcome {
                dir: ctx.dir.clone(),
                finished: false,
                best: tuner.best_so_far(&state),
                verification: None,
            });
        }
        let t0 = Instant::now();
        let Some(mut step) = tuner.step(&mut state)? else {
            continue;
        };
        step.row.push(csv_float(t0.elapsed().as_secs_f64()));
        log.row(&step.row)?;
        write_json(&checkpoint, &state)?;
        steps += 1;
        bar.set(tuner.steps_done(&state), step.message);
    }
    bar.finish();
    let tuned = tuner.best(&mut state)?;
    // the tuner's data (Texel's traces, the network's samples) is freed before the
    // verification's engines and games take memory of their own
    drop(tuner);
    write_json(&checkpoint, &state)?;
    let common = &ctx.settings.common;
    let (best_genes, best_file, verification) = match tuned {
        Tuned::Genes(genes) => {
            let best = ctx.space.apply(&genes);
            let v = write_best_and_verify(dir, &best, &ctx.start, common)?;
            (Some(genes), dir.join("best.json"), v)
        }
        Tuned::Network {
            file,
            tuned,
            baseline,
        } => {
            let v = super::verify::verify_network(&tuned, baseline.as_deref(), &ctx.start, common)?;
            record_verification(dir, v.as_ref())?;
            (None, file, v)
        }
        Tuned::Nothing(why) => {
            crate::outln!("{why}");
            (None, dir.to_path_buf(), None)
        }
    };
    super::plot::plot_run_quiet(dir);
    report::<T>(dir, &best_file, verification.as_ref(), common);
    Ok(RunOutcome {
        dir: ctx.dir.clone(),
        finished: true,
        best: best_genes,
        verification,
    })
}

fn write_params(path: &Path, p: &ParamSet) -> Result<(), TuneError> {
    crate::util::write_atomic(path, p.to_json_string().as_bytes()).map_err(|e| io_err(path, e))
}

/// Writes `best.json` (the full parameter file) and runs, records and prints the verification.
fn write_best_and_verify(
    dir: &Path,
    best: &ParamSet,
    start: &ParamSet,
    common: &CommonSettings,
) -> Result<Option<Verification>, TuneError> {
    write_params(&dir.join("best.json"), best)?;
    if let ParamSet::Eval(p) = best {
        // The Jieqi tables live in their own file (params/jieqi.json): keep them beside it so
        // a run over `jieqi.*` loses nothing.
        let jieqi_path = dir.join("best-jieqi.json");
        crate::util::write_atomic(&jieqi_path, p.jieqi_to_json_string().as_bytes())
            .map_err(|e| io_err(&jieqi_path, e))?;
    }
    if let ParamSet::Engine(set) = best {
        // The engine author's formats: the parameter file (`--param-file` reads it back) and
        // the `setoption` lines to paste into a GUI or the engine's defaults.
        for (name, text) in [
            ("best.txt", set.to_param_file()),
            ("best.uci", set.to_setoption_lines()),
        ] {
            let path = dir.join(name);
            crate::util::write_atomic(&path, text.as_bytes()).map_err(|e| io_err(&path, e))?;
        }
    }
    let v = verify(best, start, common)?;
    record_verification(dir, v.as_ref())?;
    Ok(v)
}

/// Writes `verification.json` and prints the result.
fn record_verification(dir: &Path, v: Option<&Verification>) -> Result<(), TuneError> {
    match v {
        Some(v) => {
            write_json(&dir.join("verification.json"), v)?;
            crate::outln!("verification: tuned vs start, {}", v.summary());
            if let Some(p) = &v.pool {
                crate::outln!("verification against the pool: {}", p.summary());
                for o in &p.opponents {
                    crate::outln!(
                        "  vs {}: tuned {:+.1} ± {:.1}, start {:+.1} ± {:.1} Elo ({} games each)",
                        o.name,
                        o.tuned.elo + 0.0,
                        o.tuned.elo_error,
                        o.start.elo + 0.0,
                        o.start.elo_error,
                        o.tuned.games
                    );
                }
            }
        }
        None => crate::outln!("verification: skipped (--verify none)"),
    }
    Ok(())
}

/// A progress display over steps, message = current best.
pub fn progress(len: u64, pos: u64, what: &str) -> crate::progress::Progress {
    crate::progress::Progress::new(
        len,
        pos,
        &format!("{what} {{bar:30}} {{pos}}/{{len}} [{{elapsed_precise}} < {{eta}}] {{msg}}"),
        what,
    )
}

/// The closing lines: where the results are and whether `xqtune params promote` will take
/// them. Only a significant verification ends with the promote command; otherwise the report
/// says that promote will refuse the run and what would decide it.
fn report<T: Tuner>(dir: &Path, best: &Path, v: Option<&Verification>, common: &CommonSettings) {
    crate::outln!("results: {}", dir.display());
    crate::outln!("best: {}", best.display());
    crate::outln!("plots: {}", dir.join("plots").display());
    crate::outln!("{}", promotion_advice(T::COMMAND, dir, best, v, common));
}

/// What to do with a finished run, given its verification.
pub fn promotion_advice(
    command: &str,
    dir: &Path,
    best: &Path,
    v: Option<&Verification>,
    common: &CommonSettings,
) -> String {
    let resume = format!("{command} --resume {}", dir.display());
    let refuse = "not promotable yet: `xqtune params promote` refuses a run without a \
                  significant verification (--force overrides)";
    match v {
        Some(v) if v.significant => {
            format!("promote with: xqtune params promote {}", best.display())
        }
        None => format!(
            "{refuse}; verify it with: {resume} --verify sprt --verify-games {}",
            common.verify_games.max(2)
        ),
        Some(v) if v.mode == VerifyMode::Sprt && v.llr <= v.llr_lower => format!(
            "{refuse}. The SPRT accepted H0 (elo0 = {}): the tuned set is not shown stronger, \
             and more games would not change that decision",
            common.elo0
        ),
        Some(v) if v.stats.below_zero() => format!(
            "{refuse}. The tuned side is significantly weaker ({:+.1} ± {:.1} Elo over {} games)",
            v.stats.elo, v.stats.elo_error, v.stats.games
        ),
        Some(v) => format!(
            "{refuse}. {} games did not decide it; more verification games would: {resume} \
             --verify {} --verify-games {}",
            v.stats.games,
            if v.mode == VerifyMode::Sprt {
                "sprt"
            } else {
                "fixed"
            },
            (v.stats.games as usize).max(common.verify_games) * 4
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::play::stats::MatchStats;
    use clap::Parser;

    #[derive(Parser)]
    struct T {
        #[command(flatten)]
        a: CommonArgs,
    }

    fn verification(significant: bool, llr: f64, games: u32) -> Verification {
        Verification {
            mode: VerifyMode::Sprt,
            stats: MatchStats {
                games,
                ..MatchStats::default()
            },
            llr,
            llr_lower: -2.94,
            llr_upper: 2.94,
            verdict: String::new(),
            significant,
            nodes: Some(1000),
            depth: None,
            pool: None,
        }
    }

    #[test]
    fn only_a_significant_run_is_told_to_promote() {
        let common = CommonSettings::from(&T::parse_from(["t"]).a);
        let dir = Path::new("results/x");
        let best = dir.join("best.json");
        let advice =
            |v: Option<&Verification>| promotion_advice("xqtune tune ga", dir, &best, v, &common);
        let yes = advice(Some(&verification(true, 3.0, 120)));
        assert!(
            yes.starts_with("promote with: xqtune params promote"),
            "{yes}"
        );
        let open = advice(Some(&verification(false, 1.0, 200)));
        assert!(
            !open.contains("promote with") && open.contains("refuses"),
            "{open}"
        );
        assert!(
            open.contains("xqtune tune ga --resume results/x --verify sprt --verify-games 800"),
            "{open}"
        );
        let h0 = advice(Some(&verification(false, -3.0, 80)));
        assert!(
            !h0.contains("promote with") && h0.contains("accepted H0"),
            "{h0}"
        );
        let none = advice(None);
        assert!(
            !none.contains("promote with") && none.contains("--verify sprt"),
            "{none}"
        );
    }

    #[test]
    fn resume_takes_threads_and_verification_from_the_command_line() {
        let mut s = CommonSettings::from(&T::parse_from(["t", "--verify", "none"]).a);
        assert_eq!((s.verify, s.verify_games), (VerifyMode::None, 200));
        s.resume_with(&T::parse_from(["t", "--concurrency", "3"]).a)
            .unwrap();
        assert_eq!((s.verify, s.concurrency), (VerifyMode::None, Some(3)));
        s.resume_with(&T::parse_from(["t", "--verify", "fixed", "--verify-games", "50"]).a)
            .unwrap();
        assert_eq!((s.verify, s.verify_games), (VerifyMode::Fixed, 50));
        assert_eq!((s.elo0, s.elo1), (0.0, 10.0));
        s.resume_with(&T::parse_from(["t", "--elo0", "-2", "--elo1", "5"]).a)
            .unwrap();
        assert_eq!((s.elo0, s.elo1, s.verify_games), (-2.0, 5.0, 50));
    }

    #[test]
    fn the_continue_line_repeats_the_engines_a_resume_was_given() {
        let flags = |argv: &[&str]| resume_flags(&T::parse_from(argv).a);
        // a new run records the commands it was given: nothing to repeat
        assert_eq!(flags(&["t", "--engine", "/bin/e uci"]), "");
        assert_eq!(flags(&["t", "--resume", "r/x", "--concurrency", "3"]), "");
        assert_eq!(
            flags(&[
                "t",
                "--resume",
                "r/x",
                "--engine",
                "/new/xqtune uci --eval classical",
                "--opponent",
                "/new/pikafish",
                "--opponent",
                "/new/it's here/ee ucci",
            ]),
            " --engine '/new/xqtune uci --eval classical' --opponent /new/pikafish \
             --opponent '/new/it'\\''s here/ee ucci'"
        );
        assert_eq!(
            shell_word("results/20261128T052546Z_spsa_xq-clock"),
            "results/20261128T052546Z_spsa_xq-clock"
        );
        assert_eq!(shell_word(""), "''");
    }

    #[test]
    fn config_json_of_earlier_runs_still_reads() {
        // as written before the settings structs (the flags serialised directly)
        let text = r#"{"tuner":"spsa","version":"0.1.0","created":"",
            "args":{"name":"s","params":null,"flatten":false,"space":"eval","only":"mobility.*",
            "seed":3,"concurrency":null,"out":"r","nodes":800,"depth":null,"max_plies":300,
            "verify":"none","verify_games":200,"elo0":0.0,"elo1":10.0,"iterations":6,"games":2,
            "c_end":2.0,"lr":0.2,"a_ratio":0.1,"alpha":0.602,"gamma":0.101}}"#;
        let cfg: RunConfig<RunSettings<crate::tune::spsa::SpsaSettings>> =
            serde_json::from_str(text).unwrap();
        assert_eq!(cfg.args.common.only, "mobility.*");
        assert_eq!(cfg.args.tuner.iterations, 6);
        assert_eq!(cfg.args.common.verify, VerifyMode::None);
    }
}
