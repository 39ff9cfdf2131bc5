//! Matches and tournaments: the referee ([`game`]), the parallel runner ([`runner`]), opening
//! suites ([`openings`]), statistics as cutechess and fishtest compute them ([`stats`]), PGN
//! records ([`pgn`]), external UCI/UCCI engines ([`external`]) pinned to cores on request
//! ([`affinity`]), and tournaments of engines from a file ([`tournament`], [`roster`]) rated
//! together ([`ratings`]).
//!
//! The tuners call [`run_match`] in-process (no files, no CLI); `xqtune match` ([`run_cli`])
//! adds external engines, a progress bar and records under `results/`.

pub mod affinity;
pub mod book;
pub mod compare;
pub mod external;
pub mod game;
pub mod jieqi;
pub mod job;
pub mod journal;
pub mod openings;
pub mod pgn;
pub mod pool;
pub mod process;
pub mod ratings;
pub mod resume;
pub mod roster;
pub mod runner;
pub mod stats;
pub mod tournament;

pub use crate::uci::Protocol;
pub use external::ExternalConfig;
pub use game::{
    Adjudication, DrawAdjudication, GameRecord, ResignAdjudication, Termination, TimeControl,
};
pub use openings::{Opening, OpeningError, default_openings, load_openings, parse_openings};
pub use runner::{
    Engine, MatchError, MatchProgress, MatchReport, run_match_resuming, run_match_with_progress,
    run_matches,
};
pub use stats::{MatchResult, SprtConfig, SprtStatus, SprtVerdict};

use crate::core::{CaptureReveal, Variant};
use crate::eval::EvalParams;
use crate::eval::nnue::Network;
use crate::search::{ChanceMode, EngineOptions, SearchParams};
use crate::util;
use anyhow::{Context, Result, bail};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::AtomicBool;

/// One side of a match: this engine with a parameter set.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct EngineConfig {
    pub name: String,
    pub eval: Arc<EvalParams>,
    pub search: SearchParams,
    /// The switches that are not tuned numbers (the baselines of the Jieqi measurements).
    pub options: EngineOptions,
    /// The network that scores the positions of its variant (`None`: the classical evaluation
    /// with `eval`). It travels in game jobs as its file's bytes, checked on arrival.
    #[serde(default)]
    pub network: Option<Arc<Network>>,
}

/// How a match is played. `Default` gives 2 games at 5,000 nodes per move on all cores from the
/// default opening suite.
#[derive(Clone, Debug)]
pub struct MatchConfig {
    /// Number of games (played in pairs with colours swapped; an odd last game is unpaired).
    pub games: usize,
    pub nodes: Option<u64>,
    pub depth: Option<u32>,
    /// Games played at once; 0 means one per core.
    pub concurrency: usize,
    /// Chooses the opening order (and, for Jieqi, the deals).
    pub seed: u64,
    /// Engine plies after the opening before the game is drawn.
    pub max_plies: usize,
    pub tc: Option<TimeControl>,
    pub movetime_ms: Option<u64>,
    /// `None`: the default suite (`datasets/openings.txt`).
    pub openings: Option<Arc<Vec<Opening>>>,
    pub variant: Variant,
    /// Jieqi: who learns the identity of a captured dark piece.
    pub capture_reveal: CaptureReveal,
    pub adjudication: Adjudication,
    /// Stop as soon as this test decides.
    pub sprt: Option<SprtConfig>,
    /// Transposition table per in-process searcher.
    pub hash_mb: usize,
    /// Grace over the clock before a time forfeit (ms).
    pub time_margin_ms: u64,
    /// Pin each player to a core of its own (see [`GameArgs::affinity`]).
    pub affinity: bool,
    /// When set (e.g. by Ctrl-C), no new game starts; the finished ones are reported.
    pub stop: Option<Arc<AtomicBool>>,
}

impl MatchConfig {
    /// The referee's settings for every game of the match.
    pub fn game_settings(&self) -> game::GameSettings {
        game::GameSettings {
            limits: game::MoveLimits {
                nodes: self.nodes,
                depth: self.depth,
                tc: self.tc,
                movetime_ms: self.movetime_ms,
            },
            max_plies: self.max_plies,
            adjudication: self.adjudication,
            time_margin_ms: self.time_margin_ms,
        }
    }
}

impl Default for MatchConfig {
    fn default() -> Self {
        MatchConfig {
            games: 2,
            nodes: Some(5000),
            depth: None,
            concurrency: 0,
            seed: 1,
            max_plies: 400,
            tc: None,
            movetime_ms: None,
            openings: None,
            variant: Variant::Xiangqi,
            capture_reveal: CaptureReveal::Capturer,
            adjudication: Adjudication::default(),
            sprt: None,
            hash_mb: crate::uci::DEFAULT_HASH_MB,
            time_margin_ms: 100,
            affinity: false,
            stop: None,
        }
    }
}

/// Plays `cfg.games` games of `a` against `b` in-process and returns A's counts.
///
/// Panics only on a configuration the in-process runner cannot play (no limit per move, an
/// empty suite); [`try_run_match`] returns those as errors.
pub fn run_match(a: &EngineConfig, b: &EngineConfig, cfg: &MatchConfig) -> MatchResult {
    match try_run_match(a, b, cfg) {
        Ok(r) => r,
        Err(e) => panic!("run_match: {e}"),
    }
}

/// [`run_match`] with errors.
pub fn try_run_match(
    a: &EngineConfig,
    b: &EngineConfig,
    cfg: &MatchConfig,
) -> Result<MatchResult, MatchError> {
    let a = Engine::Internal(a.clone());
    let b = Engine::Internal(b.clone());
    Ok(run_match_with_progress(&a, &b, cfg, &|_| {})?.result)
}

// ---------------------------------------------------------------------------------------------
// Command line

/// `xqtune match`: engine A against engine B. A run folder's `config.json` records these (so
/// the field names are a file format, as [`GameArgs`]'s are).
#[derive(clap::Args, Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct MatchArgs {
    /// Engine A's evaluation params file (default: the embedded params).
    #[arg(long)]
    pub a: Option<PathBuf>,
    /// Engine B's evaluation params file (default: the embedded params).
    #[arg(long)]
    pub b: Option<PathBuf>,
    /// Engine B plays with material values only (the baseline of the engine's measurements).
    #[arg(long)]
    pub b_material_only: bool,
    /// Engine A (in-process) evaluates with this NNUE network file (of the variant played;
    /// `embedded`: the built-in one).
    #[arg(long, value_name = "FILE")]
    pub a_net: Option<PathBuf>,
    /// Engine B (in-process) evaluates with this NNUE network file (of the variant played;
    /// `embedded`: the built-in one).
    #[arg(long, value_name = "FILE")]
    pub b_net: Option<PathBuf>,
    /// Engine A is an external program (command line) instead of this engine.
    #[arg(long)]
    pub a_cmd: Option<String>,
    /// Engine B is an external program (command line) instead of this engine.
    #[arg(long)]
    pub b_cmd: Option<String>,
    /// Option for external engine A, `Name=Value` (repeatable).
    #[arg(long = "a-option")]
    pub a_option: Vec<String>,
    /// Option for external engine B, `Name=Value` (repeatable).
    #[arg(long = "b-option")]
    pub b_option: Vec<String>,
    /// Protocol of external engine A: uci (Pikafish ranks 0-9) or ucci.
    #[arg(long, default_value = "uci")]
    pub a_proto: Protocol,
    /// Protocol of external engine B: uci or ucci.
    #[arg(long, default_value = "uci")]
    pub b_proto: Protocol,
    /// Display name of A (default: file stem, program name, or "A").
    #[arg(long)]
    pub a_name: Option<String>,
    /// Display name of B.
    #[arg(long)]
    pub b_name: Option<String>,
    /// Number of games (pairs of games with colours swapped).
    #[arg(long, default_value_t = 100)]
    pub games: usize,
    #[command(flatten)]
    pub game: GameArgs,
    /// Name of the run (`results/<timestamp>_match_<name>/`).
    #[arg(long, default_value = "match")]
    pub name: String,
    /// Sequential test, e.g. `elo0=0,elo1=5,alpha=0.05,beta=0.05`; stops the match on a decision.
    #[arg(long)]
    pub sprt: Option<String>,
    /// Engine B values Jieqi chance nodes by the pool average of static evaluations without
    /// searching the reveals (the baseline of the chance-node measurement).
    #[arg(long)]
    pub b_no_reveal_search: bool,
    /// Engine B scores Jieqi positions with the Xiangqi terms (dark pieces as the kind of their
    /// square), as before `params/jieqi.json`: the baseline of the Jieqi evaluation.
    #[arg(long)]
    pub b_xiangqi_eval_in_jieqi: bool,
    /// Folder for the run folders.
    #[arg(long, default_value = "results")]
    pub out_dir: PathBuf,
    /// Do not write a run folder.
    #[arg(long)]
    pub no_save: bool,
    /// Continue the match of this run folder after a kill or Ctrl-C: its config.json replaces
    /// every other flag but --concurrency and --affinity; finished games are not played again.
    #[arg(long, value_name = "RUN_FOLDER")]
    #[serde(skip)]
    pub resume: Option<PathBuf>,
}

/// The flags of every game of a match or a tournament: limits, openings, variant,
/// adjudication, concurrency. A tournament records them in its `config.json` (so the field
/// names are a file format: a renamed flag keeps its old name with `#[serde(alias)]`).
#[derive(clap::Args, Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct GameArgs {
    /// Nodes per move (the default limit when no other is given: 5000).
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..))]
    pub nodes: Option<u64>,
    /// Depth per move.
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..))]
    pub depth: Option<u32>,
    /// Time control `base+inc` in seconds, e.g. `10+0.1`.
    #[arg(long)]
    pub tc: Option<String>,
    /// Fixed time per move in ms.
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..))]
    pub movetime: Option<u64>,
    /// Games played at once (default: all cores).
    #[arg(long, default_value_t = 0)]
    pub concurrency: usize,
    /// Seed of the opening order.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Opening suite file (default: datasets/openings.txt, embedded).
    #[arg(long)]
    pub openings: Option<PathBuf>,
    /// Engine plies after the opening before the game is drawn.
    #[arg(long, default_value_t = 400)]
    pub max_plies: usize,
    /// xiangqi or jieqi (Jieqi: each pair plays one random deal drawn from the seed).
    #[arg(long, default_value = "xiangqi")]
    pub variant: String,
    /// Jieqi: who learns a captured dark piece's identity: capturer, none or both.
    #[arg(long, default_value = "capturer")]
    pub capture_reveal: String,
    /// Draw adjudication `movenumber=40,movecount=8,score=10` (off by default).
    #[arg(long)]
    pub draw_adjudication: Option<String>,
    /// Resign adjudication `movecount=3,score=600` (off by default).
    #[arg(long)]
    pub resign_adjudication: Option<String>,
    /// Transposition table per in-process searcher, MB.
    #[arg(long, default_value_t = crate::uci::DEFAULT_HASH_MB)]
    pub hash: usize,
    /// Grace over the clock before a time forfeit, ms.
    #[arg(long, default_value_t = 100)]
    pub time_margin: u64,
    /// Pin each engine to a core of its own (Linux; fastchess's `-use-affinity`): the two
    /// players of the k-th concurrent game take cores 2k and 2k+1 of those this process may
    /// use, an external engine process with all its threads, an in-process one its game's thread.
    #[arg(long)]
    #[serde(default)]
    pub affinity: bool,
}

impl GameArgs {
    /// The variant.
    pub fn variant(&self) -> Result<Variant> {
        match self.variant.to_ascii_lowercase().as_str() {
            "xiangqi" => Ok(Variant::Xiangqi),
            "jieqi" => Ok(Variant::Jieqi),
            v => bail!("unknown variant '{v}' (expected xiangqi or jieqi)"),
        }
    }

    /// The configuration of a match of `games` games with these flags (no SPRT, no stop flag).
    pub fn match_config(&self, games: usize) -> Result<MatchConfig> {
        let variant = self.variant()?;
        let capture_reveal: CaptureReveal = self
            .capture_reveal
            .parse()
            .map_err(|e| anyhow::anyhow!("--capture-reveal: {e}"))?;
        let tc = match &self.tc {
            Some(t) => Some(TimeControl::parse(t).map_err(anyhow::Error::msg)?),
            None => None,
        };
        let mut nodes = self.nodes;
        if nodes.is_none() && self.depth.is_none() && tc.is_none() && self.movetime.is_none() {
            nodes = Some(5000);
        }
        let openings = match &self.openings {
            Some(p) => Some(Arc::new(load_openings(p)?)),
            None => None,
        };
        let adjudication = parse_adjudication(
            self.draw_adjudication.as_deref(),
            self.resign_adjudication.as_deref(),
        )?;
        if games == 0 {
            bail!("--games must be at least 1");
        }
        Ok(MatchConfig {
            games,
            nodes,
            depth: self.depth,
            concurrency: self.concurrency,
            seed: self.seed,
            max_plies: self.max_plies,
            tc,
            movetime_ms: self.movetime,
            openings,
            variant,
            capture_reveal,
            adjudication,
            sprt: None,
            hash_mb: self.hash,
            time_margin_ms: self.time_margin,
            affinity: self.affinity,
            stop: None,
        })
    }
}

/// The adjudication of `--draw-adjudication movenumber=M,movecount=N,score=S` and
/// `--resign-adjudication movecount=N,score=S` (fastchess's flags; `None`: that one is off).
pub fn parse_adjudication(draw: Option<&str>, resign: Option<&str>) -> Result<Adjudication> {
    let mut adjudication = Adjudication::default();
    if let Some(t) = draw {
        let v = parse_kv(
            t,
            "draw adjudication",
            &["movenumber", "movecount", "score"],
        )?;
        adjudication.draw = Some(DrawAdjudication {
            move_number: v[0] as u32,
            move_count: v[1] as u32,
            score: v[2] as i32,
        });
    }
    if let Some(t) = resign {
        let v = parse_kv(t, "resign adjudication", &["movecount", "score"])?;
        adjudication.resign = Some(ResignAdjudication {
            move_count: v[0] as u32,
            score: v[1] as i32,
        });
    }
    Ok(adjudication)
}

fn parse_kv(text: &str, what: &str, keys: &[&str]) -> Result<Vec<f64>> {
    let mut out = vec![None; keys.len()];
    for part in text.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        let (k, v) = part
            .split_once('=')
            .with_context(|| format!("{what}: '{part}' is not key=value"))?;
        let i = keys
            .iter()
            .position(|&x| x == k.trim())
            .with_context(|| format!("{what}: unknown key '{k}' (expected {})", keys.join(", ")))?;
        out[i] = Some(
            v.trim()
                .parse::<f64>()
                .with_context(|| format!("{what}: '{v}' is not a number"))?,
        );
    }
    out.iter()
        .zip(keys)
        .map(|(v, k)| v.with_context(|| format!("{what}: missing '{k}'")))
        .collect()
}

fn load_eval(path: Option<&Path>) -> Result<Arc<EvalParams>> {
    Ok(Arc::new(match path {
        Some(p) => {
            EvalParams::load(p).with_context(|| format!("loading params {}", p.display()))?
        }
        None => EvalParams::default(),
    }))
}

/// The network of an in-process engine's `net` for games of `variant`: a file of that variant,
/// or its embedded network for the word `embedded`.
pub(crate) fn load_network(net: Option<&Path>, variant: Variant) -> Result<Option<Arc<Network>>> {
    net.map(|p| {
        Network::load_named(p, variant).with_context(|| format!("loading network {}", p.display()))
    })
    .transpose()
}

#[allow(clippy::too_many_arguments)]
fn build_engine(
    variant: Variant,
    params: Option<&Path>,
    net: Option<&Path>,
    cmd: Option<&str>,
    options: &[String],
    proto: Protocol,
    name: Option<&str>,
    fallback: &str,
    material_only: bool,
) -> Result<Engine> {
    if let Some(cmd) = cmd {
        if params.is_some() {
            bail!("engine {fallback}: give either a params file or a command, not both");
        }
        if net.is_some() {
            bail!("engine {fallback}: give either a network file or a command, not both");
        }
        let default_name = cmd
            .split_whitespace()
            .next()
            .and_then(|p| Path::new(p).file_name())
            .map(|s| s.to_string_lossy().to_string())
            .unwrap_or_else(|| fallback.to_string());
        let name = name.map(str::to_string).unwrap_or(default_name);
        let c = ExternalConfig::from_command(&name, cmd, proto, options)
            .with_context(|| format!("engine {fallback}"))?;
        return Ok(Engine::External(c));
    }
    if !options.is_empty() {
        bail!(
            "engine {fallback}: --{}-option is for external engines (--{}-cmd)",
            fallback.to_lowercase(),
            fallback.to_lowercase()
        );
    }
    let mut eval = load_eval(params)?;
    if material_only {
        eval = Arc::new(eval.material_only());
    }
    let network = load_network(net, variant).with_context(|| format!("engine {fallback}"))?;
    let default_name = match params.or(net) {
        Some(p) => p
            .file_stem()
            .map(|s| s.to_string_lossy().to_string())
            .unwrap_or_else(|| fallback.to_string()),
        None if material_only => "material".to_string(),
        None => "default".to_string(),
    };
    Ok(Engine::Internal(EngineConfig {
        name: name.map(str::to_string).unwrap_or(default_name),
        eval,
        search: SearchParams::default(),
        options: EngineOptions::default(),
        network,
    }))
}

/// Builds the engines and the configuration from the flags.
pub fn config_from_args(args: &MatchArgs) -> Result<(Engine, Engine, MatchConfig)> {
    let variant = args.game.variant()?;
    let mut a = build_engine(
        variant,
        args.a.as_deref(),
        args.a_net.as_deref(),
        args.a_cmd.as_deref(),
        &args.a_option,
        args.a_proto,
        args.a_name.as_deref(),
        "A",
        false,
    )?;
    let mut b = build_engine(
        variant,
        args.b.as_deref(),
        args.b_net.as_deref(),
        args.b_cmd.as_deref(),
        &args.b_option,
        args.b_proto,
        args.b_name.as_deref(),
        "B",
        args.b_material_only,
    )?;
    if a.name() == b.name() {
        // Keep the two sides apart in the PGN and the summary.
        let (na, nb) = (format!("{}-A", a.name()), format!("{}-B", b.name()));
        rename(&mut a, na);
        rename(&mut b, nb);
    }
    let mut cfg = args.game.match_config(args.games)?;
    if args.b_no_reveal_search {
        match &mut b {
            Engine::Internal(c) => {
                c.options.chance_mode = ChanceMode::StaticAverage;
                if !c.name.ends_with("-noreveal") {
                    c.name.push_str("-noreveal");
                }
            }
            Engine::External(_) => bail!("--b-no-reveal-search needs an in-process engine B"),
        }
    }
    if args.b_xiangqi_eval_in_jieqi {
        match &mut b {
            Engine::Internal(c) => {
                c.options.jieqi_eval = false;
                c.name.push_str("-xqeval");
            }
            Engine::External(_) => bail!("--b-xiangqi-eval-in-jieqi needs an in-process engine B"),
        }
    }
    cfg.sprt = match &args.sprt {
        Some(s) => Some(SprtConfig::parse(s).map_err(anyhow::Error::msg)?),
        None => None,
    };
    Ok((a, b, cfg))
}

fn rename(e: &mut Engine, name: String) {
    match e {
        Engine::Internal(c) => c.name = name,
        Engine::External(c) => c.name = name,
    }
}

/// The limits as one string (PGN `[TimeControl]`, summary).
pub fn limits_text(cfg: &MatchConfig) -> String {
    let mut parts = Vec::new();
    if let Some(n) = cfg.nodes {
        parts.push(format!("nodes={n}"));
    }
    if let Some(d) = cfg.depth {
        parts.push(format!("depth={d}"));
    }
    if let Some(tc) = cfg.tc {
        parts.push(format!("tc={tc}"));
    }
    if let Some(t) = cfg.movetime_ms {
        parts.push(format!("movetime={t}ms"));
    }
    parts.join(" ")
}

/// The cutechess-style result lines.
pub fn result_lines(a: &str, b: &str, r: &MatchResult, sprt: Option<&SprtStatus>) -> Vec<String> {
    let mut out = vec![
        format!(
            "Score of {a} vs {b}: {} - {} - {}  [{:.3}] {}",
            r.wins,
            r.losses,
            r.draws,
            r.score(),
            r.games()
        ),
        format!(
            "Elo difference: {:.1} +/- {:.1}, LOS: {:.1} %, DrawRatio: {:.1} %",
            r.elo() + 0.0,
            r.elo_error(),
            r.los() * 100.0,
            r.draw_ratio() * 100.0
        ),
    ];
    if r.pairs() > 0 {
        out.push(format!(
            "Ptnml(0-2): {:?}, pair Elo: {:.1} +/- {:.1}, nElo: {:.1} +/- {:.1}",
            r.pentanomial,
            r.penta_elo() + 0.0,
            r.penta_elo_error(),
            r.normalized_elo(),
            r.normalized_elo_error()
        ));
    }
    if let Some(s) = sprt {
        let verdict = match s.verdict {
            SprtVerdict::H1 => "H1 was accepted",
            SprtVerdict::H0 => "H0 was accepted",
            SprtVerdict::Continue => "no decision",
        };
        out.push(format!(
            "SPRT: llr {:.3}, lbound {:.3}, ubound {:.3} - {verdict} (elo0={}, elo1={}, alpha={}, beta={})",
            s.llr, s.lower, s.upper, s.config.elo0, s.config.elo1, s.config.alpha, s.config.beta
        ));
    }
    out
}

/// The JSON summary of a match.
pub fn summary_json(
    name: &str,
    a: &Engine,
    b: &Engine,
    cfg: &MatchConfig,
    report: &MatchReport,
) -> serde_json::Value {
    let r = &report.result;
    let mut terminations = std::collections::BTreeMap::<String, u32>::new();
    for g in &report.games {
        *terminations.entry(g.termination.to_string()).or_default() += 1;
    }
    let mut summary = r.summary_fields();
    summary.extend(
        serde_json::json!({
            "name": name,
            "a": { "name": a.name(), "params_hash": a.params_hash() },
            "b": { "name": b.name(), "params_hash": b.params_hash() },
            "variant": format!("{:?}", cfg.variant).to_lowercase(),
            "limits": limits_text(cfg),
            "seed": cfg.seed,
            "games_planned": report.games_planned,
            "sprt": report.sprt,
            "stopped_early": report.stopped_early,
            "elapsed_s": report.elapsed.as_secs_f64(),
            "games_per_minute": report.games_per_minute(),
            "terminations": terminations,
        })
        .as_object()
        .expect("a JSON object")
        .clone(),
    );
    serde_json::Value::Object(summary)
}

/// The warning of a timed match or tournament where an in-process engine meets an external
/// one (`pairings`): the external engine pays a pipe round trip and the process scheduler on
/// every move, the in-process one does not, so the clocks are not equal.
pub fn clock_warning<'e>(
    cfg: &MatchConfig,
    pairings: impl IntoIterator<Item = (&'e Engine, &'e Engine)>,
) -> Option<String> {
    if cfg.tc.is_none() && cfg.movetime_ms.is_none() {
        return None;
    }
    let mixed: Vec<String> = pairings
        .into_iter()
        .filter(|(a, b)| matches!(a, Engine::Internal(_)) != matches!(b, Engine::Internal(_)))
        .map(|(a, b)| format!("{} vs {}", a.name(), b.name()))
        .collect();
    if mixed.is_empty() {
        return None;
    }
    Some(format!(
        "warning: a timed game of an in-process engine against an external one ({}): the \
         external engine pays process scheduling and a pipe round trip on every move and the \
         in-process one does not; for fair clocks play every engine as a process (e.g. \
         \"xqtune uci\")",
        mixed.join(", ")
    ))
}

/// The warning of `--affinity` where it cannot do what it says: off Linux, or with more
/// players at once (two per game) than cores this process may use.
pub fn affinity_warning(cfg: &MatchConfig) -> Option<String> {
    if !cfg.affinity {
        return None;
    }
    let cores = affinity::cores().len();
    if cores == 0 {
        return Some(
            "warning: --affinity: cores are assigned on Linux only; the engines are not pinned"
                .into(),
        );
    }
    let games = runner::threads(cfg.concurrency, usize::MAX);
    (2 * games > cores).then(|| {
        format!(
            "warning: --affinity: {games} games at once have {} players and this process may \
             use {cores} cores: players share cores (lower --concurrency to {})",
            2 * games,
            (cores / 2).max(1)
        )
    })
}

/// `xqtune match`.
pub fn run_cli(given: &MatchArgs) -> Result<()> {
    // A resumed match: the recorded flags, from the folder it was started in.
    let (args, resumed_dir) = match &given.resume {
        Some(d) => {
            if given.no_save {
                bail!("--resume continues a run folder: leave out --no-save");
            }
            let (dir, record) = resume::enter_cwd_of(d)?;
            let mut args = record.args;
            if given.game.concurrency > 0 {
                args.game.concurrency = given.game.concurrency;
            }
            args.game.affinity |= given.game.affinity;
            (args, Some(dir))
        }
        None => (given.clone(), None),
    };
    let args = &args;
    let (a, b, mut cfg) = config_from_args(args)?;
    a.check_starts()?;
    b.check_starts()?;
    let stop = Arc::new(AtomicBool::new(false));
    {
        let stop = stop.clone();
        // A second handler (another subcommand in the same process) is not an error worth
        // stopping for: Ctrl-C then simply kills the process.
        let _ = ctrlc::set_handler(move || stop.store(true, std::sync::atomic::Ordering::SeqCst));
    }
    cfg.stop = Some(stop.clone());
    // The run folder: `config.json` (what --resume reads), the journal of finished games, and
    // the records, rewritten (atomically) at most every 10 s, so a killed match still leaves
    // valid games.pgn and summary.json for the games it finished.
    let run_dir = match (&resumed_dir, args.no_save) {
        (Some(d), _) => Some(d.clone()),
        (None, true) => None,
        (None, false) => {
            let d = util::create_run_dir(&args.out_dir, "match", &args.name, '_', &[])
                .with_context(|| format!("creating a run folder in {}", args.out_dir.display()))?;
            resume::write_config(&d, args)?;
            Some(d)
        }
    };
    let (journal, done) = match &run_dir {
        Some(d) => {
            let (j, done) = resume::open_journal(&d.join("games.jsonl"), &a, &b, cfg.games)?;
            (Some(j), done)
        }
        None => (None, Vec::new()),
    };
    let before = done.len();
    let bar = crate::progress::Progress::new(
        cfg.games as u64,
        before as u64,
        "{elapsed_precise} [{bar:30}] {pos}/{len} games  {msg}",
        "games",
    );
    eprintln!(
        "{} vs {}: {} games, {}, concurrency {}{}",
        a.name(),
        b.name(),
        cfg.games,
        limits_text(&cfg),
        if cfg.concurrency == 0 {
            std::thread::available_parallelism().map_or(1, |n| n.get())
        } else {
            cfg.concurrency
        },
        if before > 0 {
            format!(", {before} games already played")
        } else {
            String::new()
        }
    );
    for w in [clock_warning(&cfg, [(&a, &b)]), affinity_warning(&cfg)]
        .into_iter()
        .flatten()
    {
        eprintln!("{w}");
    }
    let journal = std::sync::Mutex::new(journal);
    let checkpoint = std::sync::Mutex::new((done.clone(), std::time::Instant::now()));
    let started = std::time::Instant::now();
    let outcome = run_match_resuming(&a, &b, &cfg, done, &|p| {
        if let Ok(mut j) = journal.lock()
            && let Some(j) = j.as_mut()
        {
            j.record(p.game.index, p.game, &stop);
        }
        let mut msg = format!(
            "{}-{}-{}  Elo {:.1} +/- {:.1}",
            p.live.wins,
            p.live.losses,
            p.live.draws,
            p.live.elo(),
            p.live.elo_error()
        );
        if let Some(s) = &p.sprt {
            msg.push_str(&format!(
                "  LLR {:.2} ({:.2}, {:.2})",
                s.llr, s.lower, s.upper
            ));
        }
        bar.set(p.finished as u64, msg);
        if let (Some(dir), Ok(mut cp)) = (&run_dir, checkpoint.lock()) {
            cp.0.push(p.game.clone());
            if cp.1.elapsed().as_secs() >= 10 {
                cp.1 = std::time::Instant::now();
                let mut games = cp.0.clone();
                games.sort_by_key(|g| g.index);
                let partial = MatchReport {
                    result: runner::tally(&games),
                    sprt: p.sprt,
                    played: games.len() - before,
                    games,
                    games_planned: cfg.games,
                    elapsed: started.elapsed(),
                    stopped_early: false,
                };
                if let Err(e) = save_records(dir, &args.name, &a, &b, &cfg, &partial, false) {
                    bar.println(format!("warning: cannot write partial records: {e:#}"));
                }
            }
        }
    });
    let report = match outcome {
        Ok(r) => r,
        Err(e) => {
            if let (Some(d), None) = (&run_dir, &resumed_dir) {
                // Only a folder with nothing but its config.json and an empty journal.
                let _ = std::fs::remove_file(d.join("games.jsonl"));
                let _ = std::fs::remove_file(d.join("config.json"));
                let _ = std::fs::remove_dir(d);
            }
            return Err(e.into());
        }
    };
    bar.finish_and_clear();
    let journal = journal.into_inner().unwrap_or_else(|e| e.into_inner());
    if let Some(e) = journal.as_ref().and_then(|j| j.failure()) {
        if let Some(dir) = &run_dir {
            save_records(dir, &args.name, &a, &b, &cfg, &report, false)?;
        }
        bail!(
            "cannot record a finished game ({e}); the games recorded so far are kept: fix the \
             cause and continue with xqtune match --resume {}",
            run_dir.as_deref().unwrap_or(Path::new("?")).display()
        );
    }
    for l in result_lines(a.name(), b.name(), &report.result, report.sprt.as_ref()) {
        crate::outln!("{l}");
    }
    crate::outln!(
        "{} games in {:.1} s: {:.1} games/minute{}",
        report.played,
        report.elapsed.as_secs_f64(),
        report.games_per_minute(),
        if report.stopped_early {
            " (stopped early)"
        } else {
            ""
        }
    );
    let decided = report
        .sprt
        .is_some_and(|s| s.verdict != SprtVerdict::Continue);
    if let Some(dir) = &run_dir {
        let complete = !report.stopped_early || decided;
        save_records(dir, &args.name, &a, &b, &cfg, &report, complete)?;
        crate::outln!("Records: {}", dir.display());
        if !complete {
            crate::outln!(
                "stopped after {} of {} games; continue with: xqtune match --resume {}",
                report.games.len(),
                cfg.games,
                dir.display()
            );
        }
    }
    Ok(())
}

/// Writes `games.pgn` and `summary.json` into `dir` (atomically; `complete` is recorded).
pub fn save_records(
    dir: &Path,
    name: &str,
    a: &Engine,
    b: &Engine,
    cfg: &MatchConfig,
    report: &MatchReport,
    complete: bool,
) -> Result<()> {
    let header = pgn::PgnHeader {
        event: format!("xqtune match {name}"),
        date: chrono::Utc::now().format("%Y.%m.%d").to_string(),
        time_control: limits_text(cfg),
        variant: format!("{:?}", cfg.variant).to_lowercase(),
    };
    let text: String = report
        .games
        .iter()
        .map(|g| pgn::game_pgn(&header, g))
        .collect();
    util::write_atomic(&dir.join("games.pgn"), text.as_bytes())
        .with_context(|| format!("writing {}", dir.join("games.pgn").display()))?;
    let mut summary = summary_json(name, a, b, cfg, report);
    summary["complete"] = serde_json::json!(complete);
    let json = serde_json::to_string_pretty(&summary).context("serialising the summary")?;
    util::write_atomic(&dir.join("summary.json"), (json + "\n").as_bytes())
        .with_context(|| format!("writing {}", dir.join("summary.json").display()))?;
    Ok(())
}
