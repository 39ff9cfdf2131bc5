//! Options that do nothing: `xqtune options check` searches a few fixed positions at a fixed
//! node budget with each tuned option at its minimum and at its maximum (the others at their
//! starting values) and reports the options for which both searches are the same as the search
//! at the starting values: the node count of every iteration and the best move, in every
//! position.
//!
//! An option can be accepted by `setoption` and still change nothing: a Stockfish-family engine
//! that builds its reduction table from a tuned constant only at start-up ignores every later
//! `setoption` of that constant, and a tuner then spends all its games on noise. A fixed-node
//! search is reproducible (Stockfish's `tests/reprosearch.sh` states it: the same `go nodes`
//! after `ucinewgame` gives the same node count), so any effect on the search shows in its node
//! counts or its move. The starting values are searched twice first: an engine that does not
//! repeat itself (more than one thread, a table kept between searches) cannot be judged, and
//! the check says so instead of guessing.
//!
//! Every configuration is a fresh process (the handshake, the options by `setoption` as the
//! match runner sends them, then the positions in order), so nothing one value left behind
//! reaches the next. The same check runs at the start of an external tune (`tune spsa|ga
//! --engine`), which refuses options that do nothing unless `--no-check`.

use super::TuneError;
use super::engine::{
    EngineArgs, EngineCommand, HANDSHAKE_TIMEOUT, OptionSet, OptionSetError, build_option_set,
    discover, read_param_file,
};
use crate::play::process::{EngineProcess, ProcessError};
use crate::uci::Protocol;
use std::path::PathBuf;
use std::time::Duration;

/// The positions searched: the start and three middlegame and endgame positions of the bench
/// set (FENs; the bench's CCPD positions, see `bench.rs`).
pub const CHECK_POSITIONS: &[&str] = &[
    crate::core::START_FEN,
    "2bak4/4a2c1/4b4/pC1N4p/5Nn2/2P2nB1P/P8/3A5/9/2BAK4 w - - 0 1",
    "4k1b2/9/4b4/R3p4/8p/P8/r8/2C1B4/4A1n2/2BA1K3 w - - 0 1",
    "4kab2/4a4/5n3/9/C1n2N2P/1N2p1B2/4p4/5A2B/4A4/4K2c1 b - - 0 1",
];

/// Default nodes per search.
pub const CHECK_NODES: u64 = 20_000;

/// How long one search may take before the engine is declared hung.
const SEARCH_TIMEOUT: Duration = Duration::from_secs(60);

/// `xqtune options check`.
#[derive(clap::Args, Debug, Clone)]
pub struct OptionsCheckArgs {
    /// The engine's command line (quoted as a shell would).
    #[arg(long)]
    pub engine: String,
    /// Its protocol.
    #[arg(long, default_value = "uci")]
    pub proto: Protocol,
    /// A fixed option for every search (Name=Value; repeatable), e.g. Threads=1.
    #[arg(long = "engine-option")]
    pub engine_option: Vec<String>,
    /// The options to check, in the fishtest / OpenBench format (as `tune --param-file`).
    #[arg(long)]
    pub param_file: Option<PathBuf>,
    /// Comma-separated name globs of the spin options to check (without --param-file).
    #[arg(long, default_value = "")]
    pub only: String,
    /// Nodes per search.
    #[arg(long, default_value_t = CHECK_NODES, value_parser = clap::value_parser!(u64).range(1..))]
    pub nodes: u64,
}

/// `xqtune options <action>`.
#[derive(clap::Subcommand, Debug)]
pub enum OptionsCommand {
    /// Report the options that change neither the node counts nor the move of fixed-node
    /// searches between their minimum and maximum.
    Check(OptionsCheckArgs),
}

/// One search: the node count of each `info ... depth D ... nodes N` line, and the move.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SearchTrace {
    pub nodes: Vec<(u32, u64)>,
    pub best: String,
}

/// What the check found about one option.
#[derive(Clone, Debug, PartialEq)]
pub struct OptionVerdict {
    pub name: String,
    pub min: i32,
    pub max: i32,
    /// The first position (index into the searched ones) where the minimum, the maximum and
    /// the starting values did not all search alike; `None`: the option changed nothing.
    pub differs_at: Option<usize>,
}

/// The check's result.
#[derive(Clone, Debug, PartialEq)]
pub struct CheckReport {
    /// The starting values searched the same twice (else no verdict can be trusted).
    pub deterministic: bool,
    pub options: Vec<OptionVerdict>,
    pub nodes: u64,
    pub positions: usize,
}

impl CheckReport {
    /// The options that changed nothing (empty when the engine is not deterministic).
    pub fn dead(&self) -> Vec<&OptionVerdict> {
        if !self.deterministic {
            return Vec::new();
        }
        self.options
            .iter()
            .filter(|o| o.differs_at.is_none())
            .collect()
    }

    /// The report as lines.
    pub fn lines(&self) -> Vec<String> {
        let mut out = vec![format!(
            "{} options, each at its minimum and maximum, {} positions at {} nodes:",
            self.options.len(),
            self.positions,
            self.nodes
        )];
        if !self.deterministic {
            out.push(
                "the engine searched the starting values differently twice (more than one \
                 thread? a table kept between searches?): no option can be judged"
                    .into(),
            );
            return out;
        }
        for o in &self.options {
            out.push(match o.differs_at {
                Some(p) => format!(
                    "  {:<24} [{}, {}]: changes the search (position {})",
                    o.name,
                    o.min,
                    o.max,
                    p + 1
                ),
                None => format!(
                    "  {:<24} [{}, {}]: NO EFFECT (same nodes and move at min, max and start)",
                    o.name, o.min, o.max
                ),
            });
        }
        let dead = self.dead();
        if dead.is_empty() {
            out.push("every option changes the search".into());
            return out;
        }
        out.push(format!(
            "{} of {} options do nothing through setoption: {}",
            dead.len(),
            self.options.len(),
            dead.iter()
                .map(|o| o.name.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        ));
        out.push(format!(
            "(fixed-node searches: an option that acts only on a clock, such as time management, \
             or only deeper than {} nodes reach, is listed too)",
            self.nodes
        ));
        out
    }
}

/// Parses an `info` line's `depth` and `nodes`, if it has both.
fn depth_nodes(line: &str) -> Option<(u32, u64)> {
    let w: Vec<&str> = line.split_whitespace().collect();
    let field = |k: &str| -> Option<&str> {
        let i = w.iter().position(|&x| x == k)?;
        w.get(i + 1).copied()
    };
    Some((field("depth")?.parse().ok()?, field("nodes")?.parse().ok()?))
}

/// Starts the engine, gives it `options`, and searches every position of `fens` in order.
fn search_all(
    cmd: &EngineCommand,
    options: &[(String, String)],
    fens: &[&str],
    nodes: u64,
) -> Result<Vec<SearchTrace>, OptionSetError> {
    let ext = cmd.external("check", options)?;
    let mut p = EngineProcess::spawn(&ext.program, &ext.args)?;
    p.handshake(cmd.proto, HANDSHAKE_TIMEOUT)?;
    for (k, v) in &ext.options {
        p.send(&match cmd.proto {
            Protocol::Uci => format!("setoption name {k} value {v}"),
            Protocol::Ucci => format!("setoption {k} {v}"),
        })?;
    }
    let mut out = Vec::new();
    for fen in fens {
        if cmd.proto == Protocol::Uci {
            p.send("ucinewgame")?;
        }
        p.send("isready")?;
        p.wait_for(|l| l == "readyok", HANDSHAKE_TIMEOUT)?;
        p.send(&format!("position fen {fen}\ngo nodes {nodes}"))?;
        let mut trace = Vec::new();
        let line = p.wait_for(
            |l| {
                if l.starts_with("info") {
                    if let Some(dn) = depth_nodes(l) {
                        trace.push(dn);
                    }
                    false
                } else {
                    l.starts_with("bestmove") || l.starts_with("nobestmove")
                }
            },
            SEARCH_TIMEOUT,
        );
        let line = line.map_err(|e| match e {
            ProcessError::Timeout { program } => OptionSetError::Usage(format!(
                "engine '{program}' did not finish a search of {nodes} nodes in {} s",
                SEARCH_TIMEOUT.as_secs()
            )),
            e => e.into(),
        })?;
        out.push(SearchTrace {
            nodes: trace,
            best: line.split_whitespace().nth(1).unwrap_or("").to_string(),
        });
    }
    Ok(out)
}

/// The first position where the searches at the minimum, at the maximum and at the starting
/// values are not all the same (an option whose two ends search alike but unlike its start
/// still does something).
fn first_difference(
    start: &[SearchTrace],
    lo: &[SearchTrace],
    hi: &[SearchTrace],
) -> Option<usize> {
    (0..start.len()).find(|&p| lo[p] != hi[p] || lo[p] != start[p])
}

/// Checks every option of `set` at `nodes` per search; `progress` hears of each search set.
pub fn check_options(
    set: &OptionSet,
    nodes: u64,
    progress: &mut dyn FnMut(usize, usize),
) -> Result<CheckReport, OptionSetError> {
    let fens = CHECK_POSITIONS;
    let start = set.pairs();
    let total = 2 + 2 * set.options.len();
    let mut done = 0;
    let mut step = |done: &mut usize| {
        *done += 1;
        progress(*done, total);
    };
    // Every failure says which configuration and which search it met.
    let run = |pairs: &[(String, String)], what: &str| {
        search_all(&set.engine, pairs, fens, nodes)
            .map_err(|e| OptionSetError::Usage(format!("options check, {what}: {e}")))
    };
    let first = run(&start, "the starting values")?;
    step(&mut done);
    let again = run(&start, "the starting values")?;
    step(&mut done);
    let deterministic = first == again;
    let mut options = Vec::new();
    for (i, o) in set.options.iter().enumerate() {
        let at = |v: i32| -> Vec<(String, String)> {
            let mut pairs = start.clone();
            pairs[i].1 = v.to_string();
            pairs
        };
        let lo = run(&at(o.min), &format!("'{}' = {}", o.name, o.min))?;
        step(&mut done);
        let hi = run(&at(o.max), &format!("'{}' = {}", o.name, o.max))?;
        step(&mut done);
        options.push(OptionVerdict {
            name: o.name.clone(),
            min: o.min,
            max: o.max,
            differs_at: first_difference(&first, &lo, &hi),
        });
    }
    Ok(CheckReport {
        deterministic,
        options,
        nodes,
        positions: fens.len(),
    })
}

/// The check at the start of an engine run: an error naming the options that do nothing
/// (unless `--no-check`), a warning when the engine cannot be judged.
pub fn check_before_tuning(set: &OptionSet, a: &EngineArgs) -> Result<(), TuneError> {
    if a.no_check {
        return Ok(());
    }
    let bar = crate::progress::Progress::new(
        (2 + 2 * set.options.len()) as u64,
        0,
        "options check {bar:30} {pos}/{len} searches",
        "options check",
    );
    let report = check_options(set, CHECK_NODES, &mut |d, _| bar.set_position(d as u64))?;
    bar.finish_and_clear();
    if !report.deterministic {
        eprintln!(
            "warning: options check: the engine does not repeat a fixed-node search, so options \
             that do nothing cannot be found (run it with Threads=1)"
        );
        return Ok(());
    }
    let dead = report.dead();
    if dead.is_empty() {
        return Ok(());
    }
    Err(TuneError::Params(format!(
        "{} do(es) nothing: at the minimum and at the maximum the engine searched {} positions \
         at {} nodes as at the starting values (nodes and move), so tuning them spends games on \
         noise (an option the engine reads only at start-up ignores setoption). Leave them out \
         of --only / --param-file, or pass --no-check to tune anyway (for an option that acts \
         only on a clock, such as time management, which fixed-node searches cannot show)",
        dead.iter()
            .map(|o| format!("'{}'", o.name))
            .collect::<Vec<_>>()
            .join(", "),
        report.positions,
        report.nodes
    )))
}

/// `xqtune options check`.
pub fn run_check(a: &OptionsCheckArgs) -> anyhow::Result<()> {
    let engine = EngineCommand::parse(&a.engine, a.proto, &a.engine_option)?;
    let found = discover(&engine, HANDSHAKE_TIMEOUT)?;
    let file = a.param_file.as_deref().map(read_param_file).transpose()?;
    let set = build_option_set(
        engine,
        &found,
        file.as_ref().map(|(n, v)| (n.as_str(), v.as_slice())),
        &a.only,
    )?;
    let bar = crate::progress::Progress::new(
        (2 + 2 * set.options.len()) as u64,
        0,
        "{bar:30} {pos}/{len} searches",
        "options check",
    );
    let report = check_options(&set, a.nodes, &mut |d, _| bar.set_position(d as u64))?;
    bar.finish_and_clear();
    for l in report.lines() {
        crate::outln!("{l}");
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn info_lines_give_depth_and_nodes() {
        assert_eq!(
            depth_nodes("info depth 7 seldepth 9 score cp 12 nodes 4321 nps 1 pv h2e2"),
            Some((7, 4321))
        );
        assert_eq!(depth_nodes("info nodes 5 depth 2"), Some((2, 5)));
        assert_eq!(depth_nodes("info string hello"), None);
        assert_eq!(depth_nodes("info depth x nodes 5"), None);
    }

    /// An option is judged by its two ends and the start together: ends that search alike
    /// but unlike the start still do something.
    #[test]
    fn an_option_does_nothing_only_when_min_max_and_start_agree() {
        let t = |n: u64, m: &str| SearchTrace {
            nodes: vec![(1, n)],
            best: m.into(),
        };
        let start = [t(10, "h2e2"), t(20, "b0c2")];
        assert_eq!(first_difference(&start, &start, &start), None);
        let other = [t(10, "h2e2"), t(21, "b0c2")];
        assert_eq!(first_difference(&start, &other, &start), Some(1));
        assert_eq!(first_difference(&start, &start, &other), Some(1));
        assert_eq!(first_difference(&start, &other, &other), Some(1));
        let moved = [t(10, "h2e3"), t(20, "b0c2")];
        assert_eq!(first_difference(&start, &start, &moved), Some(0));
    }

    #[test]
    fn the_positions_are_legal() {
        for f in CHECK_POSITIONS {
            crate::core::Position::from_fen(f).unwrap();
        }
    }
}
