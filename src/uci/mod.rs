//! The engine's text protocol: a session speaks UCI as Pikafish speaks it for Xiangqi, or the
//! UCCI dialect (ElephantEye, Fairy-Stockfish) when the first command is `ucci`
//! ([`Protocol`]).
//!
//! This file is the session: its state and the dispatch of each input line. The dialects'
//! words are in `protocol`, the options and `setoption` in `options`, the reading of
//! `position` and `go` in `parse`, and the search thread, which runs each `go` while the session
//! keeps answering `stop`, `isready` and `quit`, in `worker`.
//!
//! A malformed or unknown line is answered with `info string error: ...` and the session keeps
//! going; a `position` command with a bad FEN or an illegal move leaves the previous position
//! in place.

mod flags;
mod options;
mod parse;
mod protocol;
mod worker;

pub use flags::{EngineFlags, EvalChoice};
pub use options::tune_lines;
pub use parse::{parse_go_ucci, parse_go_uci, parse_position_variant};
pub use protocol::{Protocol, info_line};

use crate::core::{Position, Variant};
use crate::eval::EvalParams;
use crate::eval::nnue::{Network, Networks};
use crate::search::time::MOVE_OVERHEAD_MS;
use crate::search::{SearchLimits, SearchParams, Searcher, Skill};
use options::TuneOptions;
use parse::{play_moves, split_moves};
use std::io::{BufRead, Write};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use worker::SearchWorker;

/// `xqtune uci` options.
#[derive(clap::Args, Debug, Clone, Default)]
pub struct UciArgs {
    #[command(flatten)]
    pub engine: EngineFlags,
    /// Also offer every search and evaluation parameter as a `spin` option (as a Stockfish
    /// `TUNE()` build does), for tuning this engine through UCI.
    #[arg(long)]
    pub tune_options: bool,
    /// Print the parameters as the six-field `name,value,min,max,c_end,r_end` lines of a
    /// Stockfish `TUNE()` build (what `--param-file` reads) and exit.
    #[arg(long)]
    pub print_tune: bool,
}

pub const ENGINE_NAME: &str = concat!("xqtune ", env!("CARGO_PKG_VERSION"));
pub const ENGINE_AUTHOR: &str = "the xqtune authors";
/// The transposition table of a session until `setoption name Hash`: the size the match
/// runner gives its in-process searchers, so xqtune through UCI and in-process play alike.
pub const DEFAULT_HASH_MB: usize = 16;
const MAX_HASH_MB: usize = 4096;

/// Where protocol output goes (stdout in the binary, a buffer in tests).
pub type Output = Arc<Mutex<Box<dyn Write + Send>>>;

fn emit(out: &Output, line: &str) {
    let mut w = out.lock().unwrap_or_else(|e| e.into_inner());
    let _ = writeln!(w, "{line}");
    let _ = w.flush();
}

/// A UCI or UCCI session: the position, the options, and the searcher shared with the search
/// thread.
pub struct Session {
    out: Output,
    protocol: Protocol,
    pos: Position,
    searcher: Arc<Mutex<Searcher>>,
    stop: Arc<AtomicBool>,
    worker: SearchWorker,
    /// Whether the running search is `infinite` (it then only ends on `stop`).
    infinite: bool,
    skill: Skill,
    /// UCCI times are in seconds unless `setoption usemillisec true`.
    ucci_millisec: bool,
    /// `Move Overhead` (UCCI `moveoverhead`), in ms.
    move_overhead_ms: u64,
    /// `UCI_Variant`: what `startpos` means and how a fully revealed FEN is read.
    variant: Variant,
    /// `--tune-options`: the parameters offered as options, if asked for.
    tune: Option<TuneOptions>,
    /// The networks of `EvalFile` (or `--net`, or the embedded ones), per variant, loaded
    /// whether or not they are in use.
    networks: Networks,
    /// `Use NNUE`: positions are evaluated with `networks` (never true without one).
    use_nnue: bool,
    /// An evaluation option changed since the tables were last cleared: their scores are
    /// stale, so the next `go` starts from clear tables unless `ucinewgame` came first.
    eval_changed: bool,
    /// The `position` command that gave `pos` (setup words, moves), so that the next one,
    /// which a GUI or match runner sends with one or two moves more, only plays the new
    /// moves instead of replaying the game.
    last_position: Option<(Vec<String>, Vec<String>)>,
}

impl Session {
    /// A session with the engine's default evaluation: the embedded networks where the build
    /// has them ([`Network::embedded`]), else the classical evaluation with `eval`.
    pub fn new(eval: EvalParams, params: SearchParams, out: Output) -> Session {
        let networks = Networks::embedded();
        let use_nnue = !networks.is_empty();
        let mut searcher = Searcher::new(Arc::new(eval), params, DEFAULT_HASH_MB);
        searcher.set_networks(&networks);
        let stop = searcher.stop_handle();
        Session {
            out,
            protocol: Protocol::Uci,
            pos: Position::startpos(),
            searcher: Arc::new(Mutex::new(searcher)),
            stop,
            worker: SearchWorker::default(),
            infinite: false,
            skill: Skill::Expert,
            ucci_millisec: false,
            move_overhead_ms: MOVE_OVERHEAD_MS,
            variant: Variant::Xiangqi,
            tune: None,
            networks,
            use_nnue,
            eval_changed: false,
            last_position: None,
        }
    }

    /// The session evaluating with the classical tables (`--eval classical`); the networks, if
    /// any, stay loaded for `Use NNUE true`.
    pub fn classical(mut self) -> Session {
        self.use_nnue = false;
        self.apply_network();
        self
    }

    /// Whether a network is loaded (an embedded one, `--net` or `EvalFile`).
    pub fn has_network(&self) -> bool {
        !self.networks.is_empty()
    }

    /// The session evaluating the positions of `network`'s variant with it (`--net`).
    pub fn with_network(mut self, network: Arc<Network>) -> Session {
        self.networks.set(network);
        self.use_nnue = true;
        self.apply_network();
        self
    }

    fn say(&self, line: &str) {
        emit(&self.out, line);
    }

    fn error(&self, msg: &str) {
        self.say(&format!("info string error: {msg}"));
    }

    /// Waits for the running search (if any) to finish on its own.
    fn wait_search(&mut self) {
        self.worker.wait();
    }

    fn stop_search(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        self.wait_search();
    }

    fn lock_searcher(&self) -> std::sync::MutexGuard<'_, Searcher> {
        self.searcher.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Handles one input line; returns false on `quit`.
    pub fn handle_line(&mut self, line: &str) -> bool {
        let line = line.trim();
        if line.is_empty() {
            return true;
        }
        let mut parts = line.splitn(2, char::is_whitespace);
        let cmd = parts.next().unwrap_or("");
        let rest = parts.next().unwrap_or("").trim();
        match cmd {
            "uci" => {
                self.protocol = Protocol::Uci;
                self.cmd_uci();
            }
            "ucci" => {
                self.protocol = Protocol::Ucci;
                self.cmd_ucci();
            }
            "isready" => self.say("readyok"),
            "ucinewgame" => {
                self.wait_search();
                self.lock_searcher().new_game();
                self.eval_changed = false;
                self.pos = Position::startpos_of(self.variant);
                self.last_position = None;
            }
            "setoption" => {
                self.wait_search();
                if let Err(e) = self.cmd_setoption(rest) {
                    self.error(&e);
                }
            }
            "position" => self.cmd_position(rest),
            "go" => {
                if let Err(e) = self.cmd_go(rest) {
                    self.error(&e);
                }
            }
            "stop" => self.stop_search(),
            "ponderhit" => {}
            "banmoves" if self.protocol == Protocol::Ucci => {
                self.error("banmoves is not supported; ignored");
            }
            "d" => {
                for l in self.pos.to_string().lines() {
                    self.say(l);
                }
            }
            "quit" => {
                self.stop_search();
                if self.protocol == Protocol::Ucci {
                    self.say("bye");
                }
                return false;
            }
            _ => self.error(&format!("unknown command '{line}'")),
        }
        true
    }

    /// End of input: a finite search is allowed to finish (so `echo "go depth 8" | xqtune`
    /// works), an infinite one is stopped.
    pub fn finish(&mut self) {
        if self.infinite {
            self.stop.store(true, Ordering::Relaxed);
        }
        self.wait_search();
    }

    fn cmd_uci(&self) {
        self.say(&format!("id name {ENGINE_NAME}"));
        self.say(&format!("id author {ENGINE_AUTHOR}"));
        self.say_options();
        self.say(Protocol::Uci.hello_ok());
    }

    fn cmd_ucci(&self) {
        self.say(&format!("id name {ENGINE_NAME}"));
        self.say("id copyright MIT licence");
        self.say(&format!("id author {ENGINE_AUTHOR}"));
        self.say_options();
        self.say(Protocol::Ucci.hello_ok());
    }

    /// `position ...`: when the setup is the previous command's and its moves extend the
    /// previous moves, only the new moves are played on the current position (the same
    /// position a full replay gives); otherwise the command is read from scratch.
    fn cmd_position(&mut self, rest: &str) {
        let tokens: Vec<&str> = rest.split_whitespace().collect();
        let (setup, moves) = split_moves(&tokens);
        let extends = self.last_position.as_ref().is_some_and(|(s, m)| {
            s.len() == setup.len()
                && s.iter().zip(setup).all(|(a, b)| a == b)
                && m.len() <= moves.len()
                && m.iter().zip(moves).all(|(a, b)| a == b)
        });
        let result = if extends {
            let done = self.last_position.as_ref().map_or(0, |(_, m)| m.len());
            let mut pos = self.pos.clone();
            play_moves(&mut pos, moves, done).map(|()| pos)
        } else {
            parse_position_variant(rest, self.variant)
        };
        match result {
            Ok(p) => {
                self.pos = p;
                self.last_position = Some((
                    setup.iter().map(|s| s.to_string()).collect(),
                    moves.iter().map(|s| s.to_string()).collect(),
                ));
            }
            Err(e) => self.error(&format!("{e}; position unchanged")),
        }
    }

    /// The limits of `go <rest>` in this session: read in its dialect (the clock of the side
    /// to move), capped by its skill level, with its move overhead.
    fn go_limits(&self, rest: &str) -> Result<SearchLimits, String> {
        let limits = match self.protocol {
            Protocol::Uci => parse_go_uci(rest, &self.pos)?,
            Protocol::Ucci => parse_go_ucci(rest, self.ucci_millisec)?,
        };
        let mut limits = self.skill.apply(&limits);
        limits.move_overhead_ms = Some(self.move_overhead_ms);
        Ok(limits)
    }

    fn cmd_go(&mut self, rest: &str) -> Result<(), String> {
        let limits = self.go_limits(rest)?;
        self.wait_search();
        if std::mem::take(&mut self.eval_changed) {
            self.lock_searcher().new_game();
        }
        self.infinite = limits.infinite;
        self.stop.store(false, Ordering::Relaxed);
        self.worker.run(worker::search_job(
            self.searcher.clone(),
            self.out.clone(),
            self.pos.clone(),
            limits,
            self.protocol,
            self.stop.clone(),
        ))?;
        Ok(())
    }
}

/// Runs the protocol on stdin/stdout until `quit` or end of input; `network` evaluates the
/// positions of its variant (`--net`; `None`: the default evaluation), `tune_options` offers every parameter
/// as an option (`--tune-options`).
pub fn run(
    eval: EvalParams,
    params: SearchParams,
    network: Option<Arc<Network>>,
    choice: Option<EvalChoice>,
    tune_options: bool,
) -> anyhow::Result<()> {
    let out: Output = Arc::new(Mutex::new(Box::new(std::io::stdout())));
    let mut session = Session::new(eval, params, out);
    if let Some(net) = network {
        session = session.with_network(net);
    }
    match choice {
        Some(EvalChoice::Classical) => session = session.classical(),
        Some(EvalChoice::Nnue) if !session.has_network() => {
            anyhow::bail!("--eval nnue: this build has no network; give one with --net FILE")
        }
        _ => {}
    }
    if tune_options {
        session = session.with_tune_options();
    }
    let stdin = std::io::stdin();
    let mut input = stdin.lock();
    let mut buf = Vec::new();
    loop {
        buf.clear();
        if input.read_until(b'\n', &mut buf)? == 0 {
            break;
        }
        match std::str::from_utf8(&buf) {
            Ok(line) => {
                if !session.handle_line(line) {
                    return Ok(());
                }
            }
            Err(_) => session.error("input line is not valid UTF-8"),
        }
    }
    session.finish();
    Ok(())
}

/// `xqtune uci [--params FILE] [--search-params FILE] [--net FILE] [--tune-options]
/// [--print-tune]`.
pub fn run_with_args(args: &UciArgs) -> anyhow::Result<()> {
    let (eval, params) = args.engine.load_params()?;
    if args.print_tune {
        print!("{}", tune_lines(&eval, &params));
        return Ok(());
    }
    let network = args.engine.load_net()?;
    run(eval, params, network, args.engine.eval, args.tune_options)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::search::time::budget_ms;

    fn session() -> Session {
        let out: Output = Arc::new(Mutex::new(Box::new(std::io::sink())));
        Session::new(EvalParams::default(), SearchParams::default(), out)
    }

    /// What `clock_search_respects_the_clock` (tests/uci.rs) sees from outside, as the limits
    /// the time manager computes: black to move searches on black's clock, and the hard limit
    /// keeps the move overhead back.
    #[test]
    fn go_searches_on_the_clock_of_the_side_to_move() {
        let mut s = session();
        s.handle_line("position startpos moves h2e2");
        let limits = s.go_limits("wtime 600000 btime 400 winc 0 binc 0").unwrap();
        assert_eq!((limits.time_ms, limits.inc_ms), (Some(400), Some(0)));
        let b = budget_ms(&limits, &SearchParams::default(), 0);
        assert!(b.hard.is_some_and(|h| h <= 400 - MOVE_OVERHEAD_MS), "{b:?}");
    }

    /// `setoption name Move Overhead` reaches the time manager: with 950 of 1000 ms kept back,
    /// the hard limit stays inside the 50 ms left.
    #[test]
    fn move_overhead_reaches_the_time_manager() {
        let mut s = session();
        s.handle_line("setoption name Move Overhead value 950");
        let limits = s.go_limits("wtime 1000 btime 1000").unwrap();
        assert_eq!(limits.move_overhead_ms, Some(950));
        let b = budget_ms(&limits, &SearchParams::default(), 0);
        assert!(b.hard.is_some_and(|h| h < 50), "{b:?}");
        // The default keeps back MOVE_OVERHEAD_MS only, and allows more.
        let limits = session().go_limits("wtime 1000 btime 1000").unwrap();
        let default = budget_ms(&limits, &SearchParams::default(), 0);
        assert!(default.hard > b.hard, "{default:?} against {b:?}");
    }

    /// Skill caps the limits of `go` (tests/uci.rs `skill_level_caps_the_depth` sees the depth).
    #[test]
    fn skill_caps_the_limits_of_go() {
        let mut s = session();
        s.handle_line("setoption name Skill value easy");
        let limits = s.go_limits("depth 10").unwrap();
        assert_eq!((limits.depth, limits.movetime_ms), Skill::Easy.caps());
    }
}
