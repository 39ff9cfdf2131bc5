//! Tuning an external UCI/UCCI engine: its `spin` options as a parameter set ([`OptionSet`],
//! a [`ParamList`], so `Space`, GA and SPSA work on it unchanged).
//!
//! The options come from the engine itself (the `option name X type spin default D min A max B`
//! lines of its handshake, selected with `--only`, which is required so that Hash or Threads are
//! never tuned by accident) or from a parameter file in the format fishtest and OpenBench users
//! already have: `name, int, value, min, max, c_end, r_end` per line, or the six-field
//! `name,value,min,max,c_end,r_end` lines a Stockfish/Pikafish `TUNE()` build prints. A file's
//! c_end and r_end feed SPSA directly, as in fishtest (a_end = r_end · c_end²).
//!
//! Every game starts the engine with its options sent by `setoption` (the match runner's
//! [`ExternalConfig`]); the tuned values ride in the same list as the fixed `--engine-option`s.

use super::TuneError;
use super::space::glob_match;
use crate::play::ExternalConfig;
use crate::play::process::{EngineProcess, ProcessError, join_command, parse_options};
use crate::tunable::{ParamList, ParamSpec};
use crate::uci::Protocol;
use serde::{Deserialize, Serialize};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::time::Duration;
use thiserror::Error;

/// Why an engine's options or a parameter file were refused; each names the option or line.
#[derive(Debug, Error)]
pub enum OptionSetError {
    /// The command line, an option's syntax, or the engine process.
    #[error(transparent)]
    Process(#[from] ProcessError),
    #[error("{place}: the engine has no option '{name}' (its spin options: {spins})")]
    UnknownOption {
        place: String,
        name: String,
        spins: String,
    },
    #[error("{place}: option '{name}' is a {kind}, not a spin")]
    NotSpin {
        place: String,
        name: String,
        kind: String,
    },
    #[error("{place}: '{name}' = {value} is outside its bounds [{min}, {max}]")]
    OutOfBounds {
        place: String,
        name: String,
        value: i64,
        min: i64,
        max: i64,
    },
    #[error("{file} line {line}: {why}: '{text}'")]
    Line {
        file: String,
        line: usize,
        why: String,
        text: String,
    },
    #[error("{0}")]
    Usage(String),
}

impl From<OptionSetError> for TuneError {
    fn from(e: OptionSetError) -> TuneError {
        TuneError::Params(e.to_string())
    }
}

/// How to start an engine: the command line (as typed), its protocol and the options that
/// every instance gets before the tuned ones (`--engine-option Hash=16`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct EngineCommand {
    pub command: String,
    pub proto: Protocol,
    pub options: Vec<(String, String)>,
}

impl EngineCommand {
    /// Checks the command line and the `Name=Value` options. A relative program path
    /// (`./engine`, `target/release/xqtune`) is made absolute, so that `--resume` from another
    /// folder starts the same program.
    pub fn parse(
        command: &str,
        proto: Protocol,
        options: &[String],
    ) -> Result<Self, OptionSetError> {
        let cmd = EngineCommand {
            command: absolute_program(command),
            proto,
            options: parse_options(options)?,
        };
        cmd.external("check", &[])?;
        Ok(cmd)
    }

    /// The match runner's view of this engine with `tuned` options after the fixed ones.
    pub fn external(
        &self,
        name: &str,
        tuned: &[(String, String)],
    ) -> Result<ExternalConfig, OptionSetError> {
        let mut c = ExternalConfig::from_command(name, &self.command, self.proto, &[])?;
        c.options = self.options.iter().chain(tuned).cloned().collect();
        Ok(c)
    }
}

/// `command` with its program made absolute when it is a relative path to an existing file;
/// otherwise (a name found on PATH, an absolute path, a missing file) unchanged.
fn absolute_program(command: &str) -> String {
    let Ok(c) = ExternalConfig::from_command("x", command, Protocol::Uci, &[]) else {
        return command.to_string();
    };
    let program = Path::new(&c.program);
    if program.is_absolute() || program.components().count() < 2 {
        return command.to_string();
    }
    let Ok(abs) = program.canonicalize() else {
        return command.to_string();
    };
    join_command(&abs.display().to_string(), &c.args)
}

/// One option of an engine's handshake.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Discovered {
    pub name: String,
    /// `spin`, `check`, `combo`, `button`, `string`, ...
    pub kind: String,
    pub default: Option<i64>,
    pub min: Option<i64>,
    pub max: Option<i64>,
}

impl Discovered {
    fn is_spin(&self) -> bool {
        self.kind == "spin" && self.default.is_some() && self.min.is_some() && self.max.is_some()
    }
}

/// Parses one `option` line: `option name X Y type spin default D min A max B` (UCI; names
/// may contain spaces) or `option X type spin ...` (UCCI). `None` for other lines.
pub fn parse_option_line(line: &str) -> Option<Discovered> {
    let words: Vec<&str> = line.split_whitespace().collect();
    if words.first() != Some(&"option") {
        return None;
    }
    let from = if words.get(1) == Some(&"name") { 2 } else { 1 };
    let type_at = words.iter().skip(from).position(|&w| w == "type")? + from;
    let name = words[from..type_at].join(" ");
    if name.is_empty() {
        return None;
    }
    let kind = words.get(type_at + 1)?.to_string();
    let field = |key: &str| -> Option<i64> {
        let i = words.iter().skip(type_at + 2).position(|&w| w == key)? + type_at + 2;
        words.get(i + 1)?.parse().ok()
    };
    Some(Discovered {
        name,
        kind,
        default: field("default"),
        min: field("min"),
        max: field("max"),
    })
}

/// Starts the engine, sends `uci` (or `ucci`) and collects its options until `uciok`.
pub fn discover(cmd: &EngineCommand, timeout: Duration) -> Result<Vec<Discovered>, OptionSetError> {
    let ext = cmd.external("discover", &[])?;
    let mut process = EngineProcess::spawn(&ext.program, &ext.args)?;
    let lines = process.handshake(cmd.proto, timeout)?;
    Ok(lines.iter().filter_map(|l| parse_option_line(l)).collect())
}

/// One line of a parameter file.
#[derive(Clone, Debug, PartialEq)]
pub struct FileParam {
    pub line: usize,
    pub name: String,
    pub value: i32,
    pub min: i32,
    pub max: i32,
    pub c_end: f64,
    pub r_end: f64,
}

/// Reads and parses the parameter file at `path` ([`parse_param_file`]); returns its name as
/// the errors and reports give it, and its parameters.
pub fn read_param_file(path: &Path) -> Result<(String, Vec<FileParam>), OptionSetError> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| OptionSetError::Usage(format!("cannot read {}: {e}", path.display())))?;
    let name = path.display().to_string();
    let params = parse_param_file(&name, &text)?;
    Ok((name, params))
}

/// Parses a parameter file: `name, int, value, min, max, c_end, r_end` (fishtest / OpenBench)
/// or `name,value,min,max,c_end,r_end` (a `TUNE()` build's start-up print). Blank lines and
/// `#` comments are skipped. `float` parameters are refused: an engine option is an integer.
pub fn parse_param_file(file: &str, text: &str) -> Result<Vec<FileParam>, OptionSetError> {
    let mut out: Vec<FileParam> = Vec::new();
    for (i, raw) in text.lines().enumerate() {
        let line = i + 1;
        let t = raw.trim();
        if t.is_empty() || t.starts_with('#') {
            continue;
        }
        let err = |why: String| OptionSetError::Line {
            file: file.to_string(),
            line,
            why,
            text: t.to_string(),
        };
        let f: Vec<&str> = t.split(',').map(str::trim).collect();
        let rest = match f.len() {
            7 => match f[1] {
                "int" => &f[2..],
                "float" => {
                    return Err(err(
                        "float parameters are not supported (engine options are integers)".into(),
                    ));
                }
                other => return Err(err(format!("type '{other}' is neither int nor float"))),
            },
            6 => &f[1..],
            n => {
                return Err(err(format!(
                    "{n} fields, expected 7 (name, int, value, min, max, c_end, r_end) or 6"
                )));
            }
        };
        let name = f[0];
        if name.is_empty() {
            return Err(err("empty name".into()));
        }
        let int = |what: &str, s: &str| -> Result<i32, OptionSetError> {
            let v: f64 = s
                .parse()
                .map_err(|_| err(format!("{what} '{s}' is not a number")))?;
            if v.fract() != 0.0 || v.abs() > i32::MAX as f64 {
                return Err(err(format!("{what} '{s}' is not an integer")));
            }
            Ok(v as i32)
        };
        let real = |what: &str, s: &str| -> Result<f64, OptionSetError> {
            let v: f64 = s
                .parse()
                .map_err(|_| err(format!("{what} '{s}' is not a number")))?;
            if !(v > 0.0 && v.is_finite()) {
                return Err(err(format!("{what} {s} must be positive")));
            }
            Ok(v)
        };
        let p = FileParam {
            line,
            name: name.to_string(),
            value: int("value", rest[0])?,
            min: int("min", rest[1])?,
            max: int("max", rest[2])?,
            c_end: real("c_end", rest[3])?,
            r_end: real("r_end", rest[4])?,
        };
        if p.min > p.max {
            return Err(err(format!("min {} is greater than max {}", p.min, p.max)));
        }
        if p.value < p.min || p.value > p.max {
            return Err(err(format!(
                "value {} is outside [{}, {}]",
                p.value, p.min, p.max
            )));
        }
        if let Some(o) = out.iter().find(|o| o.name == p.name) {
            return Err(err(format!(
                "'{}' was already given on line {}",
                p.name, o.line
            )));
        }
        out.push(p);
    }
    if out.is_empty() {
        return Err(OptionSetError::Usage(format!("{file}: no parameter lines")));
    }
    Ok(out)
}

/// One tuned option: its value, bounds, step and (from a parameter file) SPSA's c_end/r_end.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct EngineOption {
    pub name: String,
    pub value: i32,
    pub min: i32,
    pub max: i32,
    pub step: i32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub c_end: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub r_end: Option<f64>,
}

/// The c_end and learning rate (in steps) a discovered option gets, as `tune spsa`'s defaults.
pub const DEFAULT_C_END_STEPS: f64 = crate::tunable::SPSA_C_END_STEPS;
pub const DEFAULT_LR: f64 = crate::tunable::SPSA_LR;

impl EngineOption {
    /// SPSA's c_end and r_end for this option: the file's, or derived from the step as for
    /// xqtune's own parameters (c_end = c_end_steps · step, r_end = lr / c_end_steps).
    pub fn ends(&self, c_end_steps: f64, lr: f64) -> (f64, f64) {
        match (self.c_end, self.r_end) {
            (Some(c), Some(r)) => (c, r),
            _ => ParamSpec {
                name: self.name.clone(),
                value: self.value,
                min: self.min,
                max: self.max,
                step: self.step,
            }
            .spsa_ends(c_end_steps, lr),
        }
    }
}

/// An engine and the values of its tuned options: the parameter set of an engine run.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct OptionSet {
    pub engine: EngineCommand,
    pub options: Vec<EngineOption>,
}

impl ParamList for OptionSet {
    fn specs(&self) -> Vec<ParamSpec> {
        self.options
            .iter()
            .map(|o| ParamSpec {
                name: o.name.clone(),
                value: o.value,
                min: o.min,
                max: o.max,
                step: o.step,
            })
            .collect()
    }

    fn to_vec(&self) -> Vec<i32> {
        self.options.iter().map(|o| o.value).collect()
    }

    fn from_vec(&self, v: &[i32]) -> Self {
        let mut s = self.clone();
        for (o, &x) in s.options.iter_mut().zip(v) {
            o.value = x.clamp(o.min, o.max);
        }
        s
    }

    fn to_json_string(&self) -> String {
        let mut t = serde_json::to_string_pretty(self).unwrap_or_default();
        t.push('\n');
        t
    }
}

impl OptionSet {
    pub fn load(path: &Path) -> Result<OptionSet, TuneError> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| TuneError::Params(format!("{}: {e}", path.display())))?;
        serde_json::from_str(&text).map_err(|e| {
            TuneError::Params(format!("{}: not an engine option set: {e}", path.display()))
        })
    }

    /// The `setoption` pairs of the tuned options.
    pub fn pairs(&self) -> Vec<(String, String)> {
        self.options
            .iter()
            .map(|o| (o.name.clone(), o.value.to_string()))
            .collect()
    }

    /// The match runner's engine with these values.
    pub fn external(&self, name: &str) -> Result<ExternalConfig, OptionSetError> {
        self.engine.external(name, &self.pairs())
    }

    /// The set in the fishtest / OpenBench parameter file format (what `--param-file` reads).
    pub fn to_param_file(&self) -> String {
        let mut out = String::new();
        for o in &self.options {
            let (c, r) = o.ends(DEFAULT_C_END_STEPS, DEFAULT_LR);
            let _ = writeln!(
                out,
                "{}, int, {}, {}, {}, {}, {}",
                o.name, o.value, o.min, o.max, c, r
            );
        }
        out
    }

    /// One `setoption` line per option, to paste into a GUI or an engine's defaults.
    pub fn to_setoption_lines(&self) -> String {
        let mut out = String::new();
        for o in &self.options {
            let _ = match self.engine.proto {
                Protocol::Uci => writeln!(out, "setoption name {} value {}", o.name, o.value),
                Protocol::Ucci => writeln!(out, "setoption {} {}", o.name, o.value),
            };
        }
        out
    }
}

/// The spin options, listed for error messages.
fn spin_list(found: &[Discovered]) -> String {
    let s: Vec<String> = found
        .iter()
        .filter(|o| o.is_spin())
        .map(|o| {
            format!(
                "{} [{}..{}]",
                o.name,
                o.min.unwrap_or(0),
                o.max.unwrap_or(0)
            )
        })
        .collect();
    if s.is_empty() {
        "none".into()
    } else {
        s.join(", ")
    }
}

fn find<'a>(
    found: &'a [Discovered],
    place: &str,
    name: &str,
) -> Result<&'a Discovered, OptionSetError> {
    found
        .iter()
        .find(|o| o.name == name)
        .ok_or_else(|| OptionSetError::UnknownOption {
            place: place.to_string(),
            name: name.to_string(),
            spins: spin_list(found),
        })
}

/// A spin option's step when no file gives one: a twentieth of its range (at least 1), so that
/// SPSA's default perturbation (two steps) spans a tenth of the range as fishtest users set it.
pub fn default_step(min: i32, max: i32) -> i32 {
    ((max as i64 - min as i64) / 20).clamp(1, i32::MAX as i64) as i32
}

/// The option set of a run from what the engine reported: the lines of a parameter file (each
/// checked against the engine), or the spin options matching the `--only` globs. The fixed
/// `--engine-option`s must name options of the engine too.
pub fn build_option_set(
    engine: EngineCommand,
    found: &[Discovered],
    file: Option<(&str, &[FileParam])>,
    only: &str,
) -> Result<OptionSet, OptionSetError> {
    for (k, _) in &engine.options {
        find(found, "--engine-option", k)?;
    }
    let patterns: Vec<&str> = only
        .split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .collect();
    let spin = |o: &Discovered, place: &str| -> Result<(i64, i64, i64), OptionSetError> {
        match (o.is_spin(), o.default, o.min, o.max) {
            (true, Some(d), Some(a), Some(b)) => Ok((d, a, b)),
            _ => Err(OptionSetError::NotSpin {
                place: place.to_string(),
                name: o.name.clone(),
                kind: o.kind.clone(),
            }),
        }
    };
    let options: Vec<EngineOption> = match file {
        Some((path, params)) => {
            let mut v = Vec::new();
            for p in params {
                let place = format!("{path} line {}", p.line);
                let o = find(found, &place, &p.name)?;
                let (_, a, b) = spin(o, &place)?;
                for x in [p.value as i64, p.min as i64, p.max as i64] {
                    if x < a || x > b {
                        return Err(OptionSetError::OutOfBounds {
                            place: format!("{place} (the engine's bounds)"),
                            name: p.name.clone(),
                            value: x,
                            min: a,
                            max: b,
                        });
                    }
                }
                if !patterns.is_empty() && !patterns.iter().any(|g| glob_match(g, &p.name)) {
                    continue;
                }
                v.push(EngineOption {
                    name: p.name.clone(),
                    value: p.value,
                    min: p.min,
                    max: p.max,
                    // c_end is SPSA's default perturbation of two steps, so a step is
                    // c_end / 2: the declared step of xqtune's own parameters when the file
                    // comes from `xqtune uci --print-tune`, and the unit of GA mutations and of
                    // log.csv's distance and c_rel as for a discovered option.
                    step: ((p.c_end / DEFAULT_C_END_STEPS).round() as i32).max(1),
                    c_end: Some(p.c_end),
                    r_end: Some(p.r_end),
                });
            }
            v
        }
        None => {
            if patterns.is_empty() {
                return Err(OptionSetError::Usage(format!(
                    "--engine needs --only (name globs of the options to tune) or --param-file, \
                     so that Hash or Threads are never tuned by accident; spin options: {}",
                    spin_list(found)
                )));
            }
            let mut v = Vec::new();
            for o in found {
                if !patterns.iter().any(|g| glob_match(g, &o.name)) {
                    continue;
                }
                let (d, a, b) = spin(o, "--only")?;
                let int = |x: i64| -> Result<i32, OptionSetError> {
                    i32::try_from(x).map_err(|_| OptionSetError::OutOfBounds {
                        place: "--only".into(),
                        name: o.name.clone(),
                        value: x,
                        min: i32::MIN as i64,
                        max: i32::MAX as i64,
                    })
                };
                let (d, a, b) = (int(d)?, int(a)?, int(b)?);
                if a > b || d < a || d > b {
                    return Err(OptionSetError::OutOfBounds {
                        place: "the engine's handshake".into(),
                        name: o.name.clone(),
                        value: d as i64,
                        min: a as i64,
                        max: b as i64,
                    });
                }
                v.push(EngineOption {
                    name: o.name.clone(),
                    value: d,
                    min: a,
                    max: b,
                    step: default_step(a, b),
                    c_end: None,
                    r_end: None,
                });
            }
            v
        }
    };
    for g in &patterns {
        if !options.iter().any(|o| glob_match(g, &o.name)) {
            return Err(OptionSetError::Usage(format!(
                "--only pattern '{g}' matches no spin option (spin options: {})",
                spin_list(found)
            )));
        }
    }
    // A tuned option overrides a fixed one of the same name.
    let mut engine = engine;
    engine
        .options
        .retain(|(k, _)| !options.iter().any(|o| &o.name == k));
    Ok(OptionSet { engine, options })
}

/// The engine flags of `tune spsa` and `tune ga` (the opponents are for any run).
#[derive(clap::Args, Debug, Clone, Default)]
pub struct EngineArgs {
    /// Tune an external UCI/UCCI engine's spin options (command line, quoted as a shell would).
    #[arg(long)]
    pub engine: Option<String>,
    /// The engine's protocol.
    #[arg(long, default_value = "uci")]
    pub proto: Protocol,
    /// A fixed option for every instance of the engine (Name=Value; repeatable).
    #[arg(long = "engine-option")]
    pub engine_option: Vec<String>,
    /// Parameters to tune in the fishtest / OpenBench format (`name, int, value, min, max,
    /// c_end, r_end` per line, or a TUNE() build's six-field lines); needs --engine.
    #[arg(long)]
    pub param_file: Option<PathBuf>,
    /// Play the tuning games against this engine instead of self-play (command line;
    /// repeatable: a pool, the games spread evenly over it, θ+ and θ− of a pair against the
    /// same opponent on the same opening). Works for xqtune's own parameters too.
    #[arg(long)]
    pub opponent: Vec<String>,
    /// The opponents' protocol: once for every opponent, or once per --opponent, in order.
    #[arg(long)]
    pub opponent_proto: Vec<Protocol>,
    /// A fixed option of every opponent (Name=Value; repeatable).
    #[arg(long = "opponent-option")]
    pub opponent_option: Vec<String>,
    /// Skip the check, at the start of an engine run, for tuned options that change nothing
    /// (`xqtune options check`).
    #[arg(long)]
    pub no_check: bool,
}

impl EngineArgs {
    /// The opponents (`--opponent`, with their protocols and the common options).
    pub fn opponents(&self) -> Result<Vec<EngineCommand>, OptionSetError> {
        let n = self.opponent.len();
        let protos = &self.opponent_proto;
        if n == 0 && (!protos.is_empty() || !self.opponent_option.is_empty()) {
            return Err(OptionSetError::Usage(
                "--opponent-proto and --opponent-option need --opponent".into(),
            ));
        }
        if protos.len() > 1 && protos.len() != n {
            return Err(OptionSetError::Usage(format!(
                "{} --opponent-proto for {n} --opponent: give one for all, or one per opponent",
                protos.len()
            )));
        }
        self.opponent
            .iter()
            .enumerate()
            .map(|(i, c)| {
                let proto = match protos.len() {
                    0 => Protocol::Uci,
                    1 => protos[0],
                    _ => protos[i],
                };
                EngineCommand::parse(c, proto, &self.opponent_option)
            })
            .collect()
    }
}

/// What `config.json` records of an engine run: how to start the engine (and the opponent)
/// and the options found at the start, so `--resume` needs nothing re-typed.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct EngineSettings {
    pub engine: EngineCommand,
    /// The one opponent of runs recorded before opponents became a pool (read, never
    /// written: the opponents are `CommonSettings::opponents` now).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub opponent: Option<EngineCommand>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub param_file: Option<PathBuf>,
    /// The tuned options at the start of the run.
    pub options: Vec<EngineOption>,
}

/// How long an engine may take to finish its handshake.
pub const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(20);

impl EngineSettings {
    /// From the flags: starts the engine, reads its options and selects the tuned ones.
    /// `None` without `--engine` (then the engine flags must not be given either).
    pub fn from_args(a: &EngineArgs, only: &str) -> Result<Option<EngineSettings>, OptionSetError> {
        let Some(command) = &a.engine else {
            if a.param_file.is_some() || !a.engine_option.is_empty() || a.no_check {
                return Err(OptionSetError::Usage(
                    "--param-file, --engine-option and --no-check need --engine".into(),
                ));
            }
            return Ok(None);
        };
        let engine = EngineCommand::parse(command, a.proto, &a.engine_option)?;
        let found = discover(&engine, HANDSHAKE_TIMEOUT)?;
        let file = a.param_file.as_deref().map(read_param_file).transpose()?;
        let set = build_option_set(
            engine,
            &found,
            file.as_ref().map(|(n, v)| (n.as_str(), v.as_slice())),
            only,
        )?;
        Ok(Some(EngineSettings {
            engine: set.engine.clone(),
            opponent: None,
            param_file: a.param_file.clone(),
            options: set.options,
        }))
    }

    pub fn option_set(&self) -> OptionSet {
        OptionSet {
            engine: self.engine.clone(),
            options: self.options.clone(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn found() -> Vec<Discovered> {
        [
            "option name Hash type spin default 16 min 1 max 4096",
            "option name Threads type spin default 1 min 1 max 64",
            "option name Futility Margin type spin default 100 min 0 max 400",
            "option name LMR Base type spin default 75 min 0 max 200",
            "option name Ponder type check default false",
            "option name Clear Hash type button",
        ]
        .iter()
        .filter_map(|l| parse_option_line(l))
        .collect()
    }

    #[test]
    fn option_lines_with_spaces_and_ucci() {
        let f = found();
        assert_eq!(f.len(), 6);
        assert_eq!(
            f[2],
            Discovered {
                name: "Futility Margin".into(),
                kind: "spin".into(),
                default: Some(100),
                min: Some(0),
                max: Some(400)
            }
        );
        assert_eq!(f[5].name, "Clear Hash");
        let u = parse_option_line("option hashsize type spin min 0 max 1024 default 16").unwrap();
        assert_eq!(
            (u.name.as_str(), u.default, u.min, u.max),
            ("hashsize", Some(16), Some(0), Some(1024))
        );
        assert_eq!(parse_option_line("id name x"), None);
        assert_eq!(parse_option_line("option name type spin"), None);
    }

    #[test]
    fn both_file_formats() {
        let text = "# comment\n\nFutility Margin, int, 120, 0, 300, 15, 0.0020\n\
                    LMR Base,75,0,200,10,0.002\n";
        let p = parse_param_file("f.txt", text).unwrap();
        assert_eq!(p.len(), 2);
        assert_eq!(
            p[0],
            FileParam {
                line: 3,
                name: "Futility Margin".into(),
                value: 120,
                min: 0,
                max: 300,
                c_end: 15.0,
                r_end: 0.002
            }
        );
        assert_eq!((p[1].line, p[1].value, p[1].c_end), (4, 75, 10.0));
    }

    #[test]
    fn every_file_error_names_its_line() {
        let cases = [
            ("a, float, 1.5, 0, 3, 1, 0.002", "float"),
            ("a, real, 1, 0, 3, 1, 0.002", "neither int nor float"),
            ("a, 1, 0, 3, 1", "5 fields"),
            ("a, int, x, 0, 3, 1, 0.002", "value 'x' is not a number"),
            ("a, int, 1.5, 0, 3, 1, 0.002", "not an integer"),
            ("a, int, 9, 0, 3, 1, 0.002", "outside [0, 3]"),
            ("a, int, 1, 4, 3, 1, 0.002", "min 4 is greater than max 3"),
            ("a, int, 1, 0, 3, 0, 0.002", "c_end 0 must be positive"),
            ("a, int, 1, 0, 3, 1, -1", "r_end -1 must be positive"),
            (", int, 1, 0, 3, 1, 0.002", "empty name"),
            (
                "a,1,0,3,1,0.002\na,1,0,3,1,0.002",
                "already given on line 2",
            ),
        ];
        for (text, want) in cases {
            let e = parse_param_file("p.txt", &format!("# x\n{text}"))
                .unwrap_err()
                .to_string();
            assert!(e.contains(want), "{text}: {e}");
            assert!(e.starts_with("p.txt line "), "{e}");
        }
        let e = parse_param_file("p.txt", "a,1,0,3,1,0.002\n\nb, 1,2").unwrap_err();
        assert!(e.to_string().contains("line 3"), "{e}");
        assert!(parse_param_file("p.txt", "# only\n").is_err());
    }

    fn cmd() -> EngineCommand {
        EngineCommand::parse("eng --x", Protocol::Uci, &["Hash=8".into()]).unwrap()
    }

    #[test]
    fn selection_by_globs_never_takes_hash_by_accident() {
        let f = found();
        let e = build_option_set(cmd(), &f, None, "")
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("needs --only") && e.contains("Futility Margin"),
            "{e}"
        );
        let s = build_option_set(cmd(), &f, None, "Futility*,LMR Base").unwrap();
        assert_eq!(s.names(), ["Futility Margin", "LMR Base"]);
        assert_eq!(s.to_vec(), [100, 75]);
        assert_eq!(s.options[0].step, 20);
        assert_eq!(s.engine.options, [("Hash".to_string(), "8".to_string())]);
        let e = build_option_set(cmd(), &f, None, "Nothing*").unwrap_err();
        assert!(
            e.to_string().contains("'Nothing*' matches no spin option")
                && e.to_string().contains("Hash [1..4096]"),
            "{e}"
        );
        let e = build_option_set(cmd(), &f, None, "Ponder").unwrap_err();
        assert!(
            e.to_string().contains("'Ponder' is a check, not a spin"),
            "{e}"
        );
        let bad = EngineCommand::parse("eng", Protocol::Uci, &["Hsh=8".into()]).unwrap();
        let e = build_option_set(bad, &f, None, "LMR*").unwrap_err();
        assert!(
            e.to_string()
                .contains("--engine-option: the engine has no option 'Hsh'"),
            "{e}"
        );
        assert!(matches!(
            EngineCommand::parse("eng", Protocol::Uci, &["Hash".into()]),
            Err(OptionSetError::Process(ProcessError::OptionSyntax(_)))
        ));
        assert!(matches!(
            EngineCommand::parse(" ", Protocol::Uci, &[]),
            Err(OptionSetError::Process(ProcessError::EmptyCommand))
        ));
        assert!(matches!(
            EngineCommand::parse("'eng", Protocol::Uci, &[]),
            Err(OptionSetError::Process(ProcessError::Quote(_)))
        ));
    }

    #[test]
    fn a_file_is_checked_against_the_engine() {
        let f = found();
        let params = |t: &str| parse_param_file("p.txt", t).unwrap();
        let s = build_option_set(
            cmd(),
            &f,
            Some(("p.txt", &params("LMR Base, int, 80, 10, 150, 8, 0.003"))),
            "",
        )
        .unwrap();
        assert_eq!(s.to_vec(), [80]);
        assert_eq!(s.options[0].ends(2.0, 0.2), (8.0, 0.003));
        let err = |t: &str| {
            build_option_set(cmd(), &f, Some(("p.txt", &params(t))), "")
                .unwrap_err()
                .to_string()
        };
        let e = err("Nope, int, 1, 0, 3, 1, 0.002");
        assert!(
            e.contains("p.txt line 1: the engine has no option 'Nope'"),
            "{e}"
        );
        let e = err("x,1,0,3,1,0.002\nPonder, int, 1, 0, 3, 1, 0.002");
        assert!(e.contains("line 1: the engine has no option 'x'"), "{e}");
        let e = err("Clear Hash, int, 1, 0, 3, 1, 0.002");
        assert!(
            e.contains("p.txt line 1: option 'Clear Hash' is a button, not a spin"),
            "{e}"
        );
        let e = err("LMR Base, int, 80, 0, 500, 8, 0.003");
        assert!(
            e.contains("p.txt line 1 (the engine's bounds): 'LMR Base' = 500 is outside its bounds [0, 200]"),
            "{e}"
        );
    }

    #[test]
    fn a_relative_program_is_made_absolute() {
        assert_eq!(absolute_program("eng --x"), "eng --x");
        assert_eq!(absolute_program("/bin/sh -c x"), "/bin/sh -c x");
        assert_eq!(absolute_program("./no/such/engine"), "./no/such/engine");
        let abs = absolute_program("src/lib.rs 'a b'");
        let c = ExternalConfig::from_command("x", &abs, Protocol::Uci, &[]).unwrap();
        assert!(Path::new(&c.program).is_absolute(), "{abs}");
        assert!(c.program.ends_with("src/lib.rs"), "{abs}");
        assert_eq!(c.args, ["a b"]);
    }

    #[test]
    fn option_set_round_trips_and_writes_both_formats() {
        let s = build_option_set(cmd(), &found(), None, "Futility*,LMR*").unwrap();
        let moved = s.from_vec(&[1000, 70]);
        assert_eq!(moved.to_vec(), [400, 70], "clamped to bounds");
        let back: OptionSet = serde_json::from_str(&moved.to_json_string()).unwrap();
        assert_eq!(back, moved);
        let txt = moved.to_param_file();
        let p = parse_param_file("best.txt", &txt).unwrap();
        assert_eq!(p[0].name, "Futility Margin");
        assert_eq!(
            (p[0].value, p[0].min, p[0].max, p[0].c_end),
            (400, 0, 400, 40.0)
        );
        assert_eq!(
            moved.to_setoption_lines(),
            "setoption name Futility Margin value 400\nsetoption name LMR Base value 70\n"
        );
        let ext = moved.external("plus").unwrap();
        assert_eq!(
            (ext.program.as_str(), ext.args.as_slice()),
            ("eng", ["--x".to_string()].as_slice())
        );
        assert_eq!(ext.options.len(), 3);
        assert_eq!(ext.options[2], ("LMR Base".to_string(), "70".to_string()));
    }
}
