//! Tuning toolkit: turns a parameter set into a measurably stronger one.
//!
//! - [`space`]: which parameters are tuned (`--only` globs), their bounds and steps.
//! - [`ga`]: adaptive genetic algorithm with self-play fitness.
//! - [`spsa`]: simultaneous perturbation stochastic approximation (fishtest schedule).
//! - [`texel`]: gradient tuning of the evaluation on labelled positions (argmin L-BFGS),
//!   or mini-batch Adam/AdaGrad from [`adam`] for sets too large for a full pass per step.
//! - [`dataset`], [`datagen`]: labelled position files and self-play data generation.
//! - [`driver`]: the one run driver (run folder, checkpoints, resume, log, verification,
//!   report) behind the [`driver::Tuner`] trait that the three tuners implement.
//! - [`common`]: the flags and settings every tuner shares; [`files`]: JSON records, the CSV
//!   log, exact floats; [`stop`]: Ctrl-C; [`verify`]: game pairs and the verification match
//!   (Elo and SPRT come from `play::stats`).
//! - [`plot`], [`export`]: figures and tables from a run; [`theta`]: an SPSA run's point as a
//!   parameter file.

pub mod adam;
pub mod check;
pub mod common;
pub mod datagen;
pub mod dataset;
pub mod driver;
pub mod engine;
pub mod export;
pub mod files;
pub mod ga;
pub mod label;
pub mod learn;
pub mod nnue;
pub mod plot;
pub mod signal;
pub mod space;
pub mod spsa;
pub mod stop;
pub mod texel;
pub mod theta;
pub mod verify;
pub mod walk;

use anyhow::{Context, Result, bail};
use clap::Subcommand;
use std::path::PathBuf;
use thiserror::Error;

#[derive(Debug, Error)]
pub enum TuneError {
    #[error("parameters: {0}")]
    Params(String),
    #[error("parameter space: {0}")]
    Space(String),
    #[error("{0}")]
    Io(String),
    #[error("resume: {0}")]
    Resume(String),
    #[error(transparent)]
    TexelDataset(#[from] dataset::DatasetError),
    #[error("optimiser: {0}")]
    Optimiser(String),
    #[error("plot: {0}")]
    Plot(String),
    #[error("tuning games: {0}")]
    Games(#[from] crate::play::MatchError),
}

impl From<crate::chart::ChartError> for TuneError {
    fn from(e: crate::chart::ChartError) -> TuneError {
        TuneError::Plot(e.0)
    }
}

/// `xqtune tune <tuner>`.
#[derive(Subcommand, Debug)]
pub enum TuneCommand {
    /// Adaptive genetic algorithm, fitness from self-play matches.
    Ga(ga::GaArgs),
    /// SPSA with the fishtest schedule, one game pair per iteration.
    Spsa(spsa::SpsaArgs),
    /// Texel gradient tuning of the evaluation on a labelled dataset.
    Texel(texel::TexelArgs),
    /// Train the network evaluation (NNUE) on labelled positions.
    Nnue(nnue::NnueArgs),
}

pub fn run_tune(cmd: TuneCommand) -> Result<()> {
    match cmd {
        TuneCommand::Ga(a) => {
            ga::run_ga(&a)?;
        }
        TuneCommand::Spsa(a) => {
            spsa::run_spsa(&a)?;
        }
        TuneCommand::Texel(a) => {
            texel::run_texel(&a)?;
        }
        TuneCommand::Nnue(a) => {
            nnue::run_nnue(&a)?;
        }
    }
    Ok(())
}

/// `xqtune plot`.
#[derive(clap::Args, Debug)]
pub struct PlotArgs {
    /// Run folder (`results/<run>`).
    pub run: PathBuf,
}

pub fn run_plot(a: PlotArgs) -> Result<()> {
    let files = plot::plot_run(&a.run)?;
    for f in files {
        crate::outln!("{}", f.display());
    }
    Ok(())
}

/// `xqtune params <action>`.
#[derive(Subcommand, Debug)]
pub enum ParamsCommand {
    /// Copy a run's best.json into params/ after showing its verification result.
    Promote {
        /// `results/<run>/best.json` (or the run folder).
        best: PathBuf,
        /// Destination (default: params/xiangqi.json or params/search.json by the run's space).
        /// A run that tuned `jieqi.*` also writes its best-jieqi.json to jieqi.json beside it.
        #[arg(long)]
        to: Option<PathBuf>,
        /// Promote even without a significant verification result.
        #[arg(long)]
        force: bool,
    },
    /// Write the parameter file of an SPSA run's point θ after any finished iteration (default:
    /// the latest), rounded as its games play it: to play a point before the run ends, or its
    /// end before promoting it.
    Theta(theta::ThetaArgs),
    /// How far each parameter of an SPSA run has moved against how far a random walk of the
    /// same steps would move it (z per parameter, and the whole run's χ² test): whether the
    /// games have found a direction yet, or the run has only wandered.
    Signal(signal::SignalArgs),
}

pub fn run_params(cmd: ParamsCommand) -> Result<()> {
    match cmd {
        ParamsCommand::Promote { best, to, force } => promote(&best, to, force),
        ParamsCommand::Theta(a) => theta::run_theta(&a),
        ParamsCommand::Signal(a) => signal::run_signal(&a),
    }
}

fn promote(best: &std::path::Path, to: Option<PathBuf>, force: bool) -> Result<()> {
    let dir = if best.is_dir() {
        best.to_path_buf()
    } else {
        best.parent()
            .map(|p| p.to_path_buf())
            .unwrap_or_else(|| PathBuf::from("."))
    };
    let cfg: serde_json::Value = files::read_json(&dir.join("config.json"))
        .with_context(|| format!("{} is not a run folder", dir.display()))?;
    // a network run: `tune nnue`, or the learning loop's best generation
    let copies = if matches!(cfg["tuner"].as_str(), Some("nnue" | "learn")) {
        network_copies(best, &dir, to)?
    } else {
        params_copies(best, &dir, &cfg, to)?
    };
    let vpath = dir.join("verification.json");
    let significant = if vpath.exists() {
        let v: verify::Verification = files::read_json(&vpath)?;
        crate::outln!("verification of {}: {}", dir.display(), v.summary());
        v.significant
    } else {
        crate::outln!("verification of {}: none recorded", dir.display());
        false
    };
    if !significant && !force {
        bail!(
            "not promoted: the verification does not show a significant gain (use --force to promote anyway)"
        );
    }
    for (from, to) in copies {
        let bytes = std::fs::read(&from).with_context(|| format!("reading {}", from.display()))?;
        crate::util::write_atomic(&to, &bytes)
            .with_context(|| format!("writing {}", to.display()))?;
        crate::outln!("promoted {} -> {}", from.display(), to.display());
    }
    Ok(())
}

/// What promoting a network run (`tune nnue` or `learn`) copies: its `best.nnue` (which must
/// load as a network) to the engine's embedded default of the network's variant,
/// `params/xiangqi.nnue` or `params/jieqi.nnue`.
fn network_copies(
    best: &std::path::Path,
    dir: &std::path::Path,
    to: Option<PathBuf>,
) -> Result<Vec<(PathBuf, PathBuf)>> {
    let file = if best.is_dir() {
        best.join("best.nnue")
    } else {
        best.to_path_buf()
    };
    let net = crate::eval::nnue::Network::load(&file)
        .with_context(|| format!("the network of {}", dir.display()))?;
    let default = format!("params/{}.nnue", net.variant());
    Ok(vec![(file, to.unwrap_or_else(|| PathBuf::from(default)))])
}

/// What promoting a parameter run copies: `best.json` to `params/xiangqi.json` or
/// `params/search.json` by the run's space, and `best-jieqi.json` beside it when `jieqi.*` was
/// tuned.
fn params_copies(
    best: &std::path::Path,
    dir: &std::path::Path,
    cfg: &serde_json::Value,
    to: Option<PathBuf>,
) -> Result<Vec<(PathBuf, PathBuf)>> {
    let best_file = if best.is_dir() {
        best.join("best.json")
    } else {
        best.to_path_buf()
    };
    let space = cfg["args"]["space"].as_str().unwrap_or("eval").to_string();
    if space == "engine" {
        bail!(
            "{} tunes an external engine: its values are in best.uci (setoption lines) and \
             best.txt (parameter file), not a params/ file; where that engine is xqtune \
             (`uci --tune-options`), `xqtune params theta` writes its params/search.json",
            dir.display()
        );
    }
    let kind = if space == "search" {
        space::SpaceKind::Search
    } else {
        space::SpaceKind::Eval
    };
    // the file must load as a parameter set before it may replace one
    space::ParamSet::load(kind, &best_file)?;
    let dest = to.unwrap_or_else(|| match kind {
        space::SpaceKind::Eval => PathBuf::from("params/xiangqi.json"),
        space::SpaceKind::Search | space::SpaceKind::Engine => PathBuf::from("params/search.json"),
    });
    let mut copies = vec![(best_file.clone(), dest.clone())];
    // The Jieqi tables live in their own file (params/jieqi.json, beside the Xiangqi one): a
    // run that tuned `jieqi.*` left them in best-jieqi.json, which goes there too. A run that
    // did not tune them leaves that file alone.
    let only = cfg["args"]["only"].as_str().unwrap_or("");
    if kind == space::SpaceKind::Eval
        && space::Space::new(space::ParamSet::default_of(kind), only)?
            .genes()
            .iter()
            .any(|g| g.name.starts_with("jieqi."))
    {
        let jieqi_file = best_file.with_file_name("best-jieqi.json");
        let mut check = crate::eval::EvalParams::default();
        check.load_jieqi(&jieqi_file).with_context(|| {
            format!(
                "the run tuned jieqi.* but {} does not load",
                jieqi_file.display()
            )
        })?;
        copies.push((jieqi_file, dest.with_file_name("jieqi.json")));
    }
    Ok(copies)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn promote_shows_verification_and_needs_significance() {
        let dir = std::env::temp_dir().join(format!("xqtune-promote-{}", std::process::id()));
        let run_dir = dir.join("run");
        std::fs::create_dir_all(&run_dir).unwrap();
        let best = run_dir.join("best.json");
        let text = crate::eval::EvalParams::default().to_json_string();
        std::fs::write(&best, &text).unwrap();
        std::fs::write(
            run_dir.join("config.json"),
            r#"{"tuner":"ga","version":"0","created":"","args":{"space":"eval"}}"#,
        )
        .unwrap();
        let mut v = verify::Verification {
            mode: common::VerifyMode::Sprt,
            stats: crate::play::stats::MatchStats::default(),
            llr: 0.0,
            llr_lower: -2.94,
            llr_upper: 2.94,
            verdict: "SPRT accepted H0".into(),
            significant: false,
            nodes: Some(1000),
            depth: None,
            pool: None,
        };
        files::write_json(&run_dir.join("verification.json"), &v).unwrap();
        let dest = dir.join("params/xiangqi.json");
        assert!(promote(&best, Some(dest.clone()), false).is_err());
        assert!(!dest.exists());
        promote(&best, Some(dest.clone()), true).unwrap();
        assert_eq!(std::fs::read_to_string(&dest).unwrap(), text);
        std::fs::remove_file(&dest).unwrap();
        v.significant = true;
        files::write_json(&run_dir.join("verification.json"), &v).unwrap();
        promote(&run_dir, Some(dest.clone()), false).unwrap();
        assert!(dest.exists());
        // a run that did not tune jieqi.* leaves the Jieqi file alone
        assert!(!dir.join("params/jieqi.json").exists());
        // not a run folder: a clear error
        assert!(promote(&dir.join("nothing/best.json"), Some(dest), true).is_err());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
