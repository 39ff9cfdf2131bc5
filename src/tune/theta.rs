//! `xqtune params theta`: the parameter file of an SPSA run's point θ after any iteration it
//! has finished, rounded and clamped as the run's games play it, so that a point can be played
//! before the run ends (a check of the tune's direction) and its end can be played and promoted.
//!
//! A run over xqtune's own evaluation or search parameters gives that file with the tuned
//! entries replaced. A run over xqtune's search constants as engine options (`--engine
//! "xqtune uci --tune-options"`, the way a timed run plays them) gives `params/search.json`
//! with those constants replaced. A run over another engine's options has no xqtune file: its
//! values are the `setoption` lines of `best.uci`.

use super::TuneError;
use super::files::read_json;
use super::space::{Gene, ParamSet, Space, SpaceKind};
use super::spsa::{SpsaState, params_rows};
use crate::search::SearchParams;
use std::path::{Path, PathBuf};

/// `xqtune params theta`.
#[derive(clap::Args, Debug)]
pub struct ThetaArgs {
    /// The SPSA run folder (`results/<run>`).
    pub run: PathBuf,
    /// θ after this many iterations (0: the start); default: the latest checkpoint's.
    #[arg(long)]
    pub iteration: Option<u64>,
    /// Output file, written atomically (default: standard output).
    #[arg(long)]
    pub out: Option<PathBuf>,
}

/// A run's point as a parameter file.
#[derive(Debug)]
pub struct Theta {
    /// The iterations finished at that point.
    pub iteration: u64,
    /// The iterations the run has finished, and the iterations it was started for.
    pub finished: u64,
    pub planned: Option<u64>,
    /// The parameter file (`params/xiangqi.json` or `params/search.json` format).
    pub file: String,
}

/// An SPSA run folder as `theta` and `signal` read it: its configuration, its space (the
/// start it was resumed with) and its checkpoint, if any.
#[derive(Debug)]
pub struct SpsaRun {
    pub cfg: serde_json::Value,
    pub space: Space,
    pub state: Option<SpsaState>,
}

impl SpsaRun {
    pub fn open(run: &Path) -> Result<SpsaRun, TuneError> {
        let cfg: serde_json::Value = read_json(&run.join("config.json"))?;
        let tuner = cfg["tuner"].as_str().unwrap_or("unknown");
        if tuner != "spsa" {
            return Err(TuneError::Params(format!(
                "{} is a {tuner} run, not an SPSA run: its result is best.json",
                run.display()
            )));
        }
        let kind: SpaceKind =
            serde_json::from_value(cfg["args"]["space"].clone()).map_err(|e| {
                TuneError::Params(format!("{}: config.json 'space': {e}", run.display()))
            })?;
        let only = cfg["args"]["only"].as_str().unwrap_or("").to_string();
        let state_path = run.join("checkpoints/state.json");
        let state: Option<SpsaState> = if state_path.exists() {
            Some(read_json(&state_path)?)
        } else {
            None
        };
        let start = ParamSet::load(kind, &run.join("start.json"))?;
        let start = match &state {
            Some(s) => start.from_vec(&s.start_vec),
            None => start,
        };
        let space = Space::new(start, &only)?;
        Ok(SpsaRun { cfg, space, state })
    }

    /// The iterations finished.
    pub fn finished(&self) -> u64 {
        self.state.as_ref().map_or(0, |s| s.k)
    }

    /// The iterations the run was started for.
    pub fn planned(&self) -> Option<u64> {
        self.cfg["args"]["iterations"].as_u64()
    }

    /// θ at the start (iteration 0).
    pub fn start_theta(&self) -> Vec<f64> {
        self.space.values().iter().map(|&v| v as f64).collect()
    }
}

/// The point of the SPSA run in `run` after `iteration` iterations (default: the checkpoint's).
pub fn theta(run: &Path, iteration: Option<u64>) -> Result<Theta, TuneError> {
    let r = SpsaRun::open(run)?;
    let (space, state) = (&r.space, &r.state);
    let finished = r.finished();
    let point: Vec<f64> = match iteration {
        Some(n) if n > finished => {
            return Err(TuneError::Params(format!(
                "--iteration {n}: {} has finished {finished} iterations",
                run.display()
            )));
        }
        Some(0) => r.start_theta(),
        Some(n) => params_rows(run, &space.genes(), n)?.pop().expect("n rows"),
        None => state
            .as_ref()
            .map_or_else(|| r.start_theta(), |s| s.theta.clone()),
    };
    let values = space.round(&point);
    let file = match &space.base {
        ParamSet::Engine(_) => search_file(&space.genes(), &values)?,
        _ => space.apply(&values).to_json_string(),
    };
    Ok(Theta {
        iteration: iteration.unwrap_or(finished),
        finished,
        planned: r.planned(),
        file,
    })
}

/// `params/search.json` (the embedded defaults) with the tuned engine options, which must all
/// be xqtune search constants within their declared bounds, replaced.
fn search_file(genes: &[Gene], values: &[i32]) -> Result<String, TuneError> {
    let base = SearchParams::default();
    let specs = base.specs();
    let mut v = base.to_vec();
    for (g, &x) in genes.iter().zip(values) {
        let Some(i) = specs.iter().position(|s| s.name == g.name) else {
            return Err(TuneError::Params(format!(
                "the run tunes '{}', which is not a search constant of xqtune: it tuned another \
                 engine, whose values are the setoption lines of best.uci",
                g.name
            )));
        };
        let s = &specs[i];
        if x < s.min || x > s.max {
            return Err(TuneError::Params(format!(
                "'{}' = {x} is outside xqtune's bounds [{}, {}]",
                g.name, s.min, s.max
            )));
        }
        v[i] = x;
    }
    Ok(base.from_vec(&v).to_json_string())
}

/// `xqtune params theta`: writes the file and says which point it is.
pub fn run_theta(a: &ThetaArgs) -> anyhow::Result<()> {
    let t = theta(&a.run, a.iteration)?;
    match &a.out {
        Some(path) => crate::util::write_atomic(path, t.file.as_bytes())
            .map_err(|e| super::files::io_err(path, e))?,
        None => print!("{}", t.file),
    }
    let planned = t
        .planned
        .map_or(String::new(), |p| format!(" of {p} planned"));
    eprintln!(
        "θ of {} after {} iterations ({} finished{planned}){}",
        a.run.display(),
        t.iteration,
        t.finished,
        a.out
            .as_ref()
            .map_or(String::new(), |p| format!(" -> {}", p.display()))
    );
    Ok(())
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;
    use crate::tune::engine::{EngineCommand, EngineOption, OptionSet};
    use crate::tune::files::write_json;
    use crate::uci::Protocol;

    fn dir(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("xqtune-theta-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(d.join("checkpoints")).unwrap();
        d
    }

    pub(crate) fn option(name: &str, value: i32, min: i32, max: i32) -> EngineOption {
        EngineOption {
            name: name.into(),
            value,
            min,
            max,
            step: 1,
            c_end: None,
            r_end: None,
        }
    }

    /// An engine run's folder as `tune spsa --engine` leaves it after two iterations.
    pub(crate) fn engine_run(
        name: &str,
        options: Vec<EngineOption>,
        rows: &[&str],
        theta: &[f64],
    ) -> PathBuf {
        let d = dir(name);
        let set = OptionSet {
            engine: EngineCommand {
                command: "/bin/engine uci".into(),
                proto: Protocol::Uci,
                options: vec![],
            },
            options,
        };
        std::fs::write(
            d.join("start.json"),
            ParamSet::Engine(set.clone()).to_json_string(),
        )
        .unwrap();
        write_json(
            &d.join("config.json"),
            &serde_json::json!({"tuner": "spsa", "args": {"space": "engine", "only": "",
                "iterations": 10}}),
        )
        .unwrap();
        let names: Vec<&str> = set.options.iter().map(|o| o.name.as_str()).collect();
        let mut csv = format!("iteration,{}\n", names.join(","));
        for r in rows {
            csv.push_str(r);
            csv.push('\n');
        }
        std::fs::write(d.join("params.csv"), csv).unwrap();
        write_json(
            &d.join("checkpoints/state.json"),
            &SpsaState {
                k: rows.len() as u64,
                theta: theta.to_vec(),
                start_vec: set.options.iter().map(|o| o.value).collect(),
            },
        )
        .unwrap();
        d
    }

    fn search(file: &str) -> SearchParams {
        SearchParams::from_json(file).unwrap()
    }

    #[test]
    fn an_engine_run_of_xqtunes_constants_gives_its_search_file() {
        let d = engine_run(
            "engine",
            vec![
                option("rfp_margin", 90, 20, 400),
                option("se_margin", 2, 0, 8),
            ],
            &["0,88.400,2.600", "1,86.500,3.499"],
            &[85.5000001, 3.51],
        );
        let defaults = SearchParams::default();
        // the latest checkpoint's θ, rounded as the games play it
        let t = theta(&d, None).unwrap();
        assert_eq!((t.iteration, t.finished, t.planned), (2, 2, Some(10)));
        let p = search(&t.file);
        assert_eq!((p.rfp_margin, p.se_margin), (86, 4));
        assert_eq!(p.lmr_divisor, defaults.lmr_divisor);
        // after one iteration (row 0), after two (row 1), and the start
        let p = search(&theta(&d, Some(1)).unwrap().file);
        assert_eq!((p.rfp_margin, p.se_margin), (88, 3));
        let p = search(&theta(&d, Some(2)).unwrap().file);
        assert_eq!((p.rfp_margin, p.se_margin), (87, 3));
        let t = theta(&d, Some(0)).unwrap();
        assert_eq!(t.iteration, 0);
        let p = search(&t.file);
        assert_eq!((p.rfp_margin, p.se_margin), (90, 2));
        // the rest is the embedded file
        let mut expect = defaults;
        expect.rfp_margin = 90;
        expect.se_margin = 2;
        assert_eq!(t.file, expect.to_json_string());
        let e = theta(&d, Some(3)).unwrap_err().to_string();
        assert!(
            e.contains("--iteration 3") && e.contains("finished 2"),
            "{e}"
        );
        std::fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn another_engines_run_and_broken_files_are_refused_by_name() {
        let d = engine_run(
            "other",
            vec![option("Futility Margin", 90, 20, 400)],
            &["0,91.000"],
            &[91.0],
        );
        let e = theta(&d, None).unwrap_err().to_string();
        assert!(
            e.contains("'Futility Margin'") && e.contains("best.uci"),
            "{e}"
        );
        std::fs::remove_dir_all(&d).unwrap();

        // bounds wider than xqtune's: the value would not be what the games played
        let d = engine_run(
            "wide",
            vec![option("se_margin", 2, 0, 20)],
            &["0,12.000"],
            &[12.0],
        );
        let e = theta(&d, None).unwrap_err().to_string();
        assert!(
            e.contains("'se_margin' = 12") && e.contains("[0, 8]"),
            "{e}"
        );
        // a row that is missing or not a number
        std::fs::write(d.join("params.csv"), "iteration,se_margin\n0,x\n").unwrap();
        let e = theta(&d, Some(1)).unwrap_err().to_string();
        assert!(e.contains("'se_margin' = 'x' is not a number"), "{e}");
        std::fs::write(d.join("params.csv"), "iteration,se_margin\n").unwrap();
        let e = theta(&d, Some(1)).unwrap_err().to_string();
        assert!(e.contains("no row for iteration 1"), "{e}");
        std::fs::write(d.join("params.csv"), "iteration,rfp_margin\n0,3\n").unwrap();
        let e = theta(&d, Some(1)).unwrap_err().to_string();
        assert!(e.contains("columns"), "{e}");
        // not an SPSA run
        write_json(&d.join("config.json"), &serde_json::json!({"tuner": "ga"})).unwrap();
        let e = theta(&d, None).unwrap_err().to_string();
        assert!(e.contains("a ga run, not an SPSA run"), "{e}");
        std::fs::remove_dir_all(&d).unwrap();
    }
}
