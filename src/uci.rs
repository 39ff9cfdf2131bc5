//! The engine's text protocol: UCI as Pikafish speaks it for Xiangqi, and the UCCI dialect
//! (ElephantEye, Fairy-Stockfish) when the first command is `ucci`.
//!
//! The search runs in its own thread so that `stop`, `isready` and `quit` are answered while it
//! thinks. That thread lives as long as the engine: a thread started per `go` frees its stack
//! when it ends and faults it in again on the next search, which a match runner at a few
//! thousand nodes per move pays on every move.
//!
//! A malformed or unknown line is answered with `info string error: ...` and the engine keeps
//! going; a `position` command with a bad FEN or an illegal move leaves the previous position
//! in place.

use crate::core::{Move, Position, Variant};
use crate::eval::EvalParams;
use crate::search::smp::MAX_THREADS;
use crate::search::time::{MAX_MOVE_OVERHEAD_MS, MOVE_OVERHEAD_MS};
use crate::search::{SearchInfo, SearchLimits, SearchParams, Searcher, Skill};
use crate::tunable::ParamSpec;
use std::collections::HashMap;
use std::io::{BufRead, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

/// `xqtune uci` options.
#[derive(clap::Args, Debug, Clone, Default)]
pub struct UciArgs {
    /// Evaluation parameters file (default: the embedded params/xiangqi.json).
    #[arg(long)]
    pub params: Option<PathBuf>,
    /// Search parameters file (default: the embedded params/search.json).
    #[arg(long)]
    pub search_params: Option<PathBuf>,
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

/// The dialect of a session: this engine answers in the one the GUI opened with, and the match
/// runner speaks the one an external engine was configured for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Protocol {
    /// UCI as Pikafish speaks it for Xiangqi (ranks 0-9, moves `h2e2`).
    #[default]
    Uci,
    /// UCCI as ElephantEye and Fairy-Stockfish speak it.
    Ucci,
}

impl Protocol {
    /// The command that opens a session (`uci` / `ucci`).
    pub fn hello(self) -> &'static str {
        match self {
            Protocol::Uci => "uci",
            Protocol::Ucci => "ucci",
        }
    }

    /// The engine's answer that ends the handshake (`uciok` / `ucciok`).
    pub fn hello_ok(self) -> &'static str {
        match self {
            Protocol::Uci => "uciok",
            Protocol::Ucci => "ucciok",
        }
    }
}

impl std::str::FromStr for Protocol {
    type Err = String;
    fn from_str(s: &str) -> Result<Protocol, String> {
        match s.to_ascii_lowercase().as_str() {
            "uci" => Ok(Protocol::Uci),
            "ucci" => Ok(Protocol::Ucci),
            _ => Err(format!("unknown protocol '{s}' (expected uci or ucci)")),
        }
    }
}

/// Where protocol output goes (stdout in the binary, a buffer in tests).
pub type Output = Arc<Mutex<Box<dyn Write + Send>>>;

fn emit(out: &Output, line: &str) {
    let mut w = out.lock().unwrap_or_else(|e| e.into_inner());
    let _ = writeln!(w, "{line}");
    let _ = w.flush();
}

/// How long a search keeps its `info` lines to send them with the next one: a search shorter
/// than this (a match at a few thousand nodes per move) answers with one write, so the match
/// runner on the other end of the pipe wakes once per move instead of once per line, which
/// matters on a loaded machine; a longer search shows every line as it comes.
const INFO_HOLD_MS: u128 = 50;

/// `info` lines of one search, held for [`INFO_HOLD_MS`] and then written as they come.
struct InfoLines {
    out: Output,
    started: std::time::Instant,
    pending: String,
}

impl InfoLines {
    fn new(out: Output) -> InfoLines {
        InfoLines {
            out,
            started: std::time::Instant::now(),
            pending: String::new(),
        }
    }

    fn push(&mut self, line: &str) {
        self.pending.push_str(line);
        self.pending.push('\n');
        if self.started.elapsed().as_millis() >= INFO_HOLD_MS {
            self.flush();
        }
    }

    /// Writes the held lines in one write.
    fn flush(&mut self) {
        if !self.pending.is_empty() {
            let mut w = self.out.lock().unwrap_or_else(|e| e.into_inner());
            let _ = w.write_all(self.pending.as_bytes());
            let _ = w.flush();
            self.pending.clear();
        }
    }
}

/// Protocol state: the position, options, and the searcher shared with the search thread.
pub struct Engine {
    out: Output,
    protocol: Protocol,
    pos: Position,
    searcher: Arc<Mutex<Searcher>>,
    stop: Arc<AtomicBool>,
    worker: SearchWorker,
    /// Whether the running search is `infinite` (it then only ends on `stop`).
    infinite: bool,
    hash_mb: usize,
    skill: Skill,
    /// UCCI times are in seconds unless `setoption usemillisec true`.
    ucci_millisec: bool,
    /// `Move Overhead` (UCCI `moveoverhead`), in ms.
    move_overhead_ms: u64,
    /// `UCI_Variant`: what `startpos` means and how a fully revealed FEN is read.
    variant: Variant,
    /// `--tune-options`: the parameters offered as options, if asked for.
    tune: Option<TuneOptions>,
    /// An evaluation option changed since the tables were last cleared: their scores are
    /// stale, so the next `go` starts from clear tables unless `ucinewgame` came first.
    eval_changed: bool,
    /// The `position` command that gave `pos` (setup words, moves), so that the next one,
    /// which a GUI or match runner sends with one or two moves more, only plays the new
    /// moves instead of replaying the game.
    last_position: Option<(Vec<String>, Vec<String>)>,
}

/// Every tunable number as a UCI `spin` option: the flat view of the evaluation parameters
/// (Xiangqi, then Jieqi terms) followed by the search parameters, under their flat names. The
/// list is [`crate::tunable::ParamList::specs`] itself, so a new parameter becomes an option with no second
/// declaration.
struct TuneOptions {
    /// Current values and bounds: evaluation specs, then search specs.
    specs: Vec<ParamSpec>,
    /// How many of `specs` are evaluation parameters.
    n_eval: usize,
    /// Lower-case name -> index in `specs` (UCI option names are case-insensitive).
    index: HashMap<String, usize>,
}

impl TuneOptions {
    fn new(eval: &EvalParams, search: &SearchParams) -> TuneOptions {
        let mut specs = eval.specs();
        let n_eval = specs.len();
        specs.extend(search.specs());
        let index = specs
            .iter()
            .enumerate()
            .map(|(i, s)| (s.name.to_ascii_lowercase(), i))
            .collect();
        TuneOptions {
            specs,
            n_eval,
            index,
        }
    }
}

/// The six-field lines a Stockfish `TUNE()` build prints at start-up, one per parameter:
/// `name,value,min,max,c_end,r_end`. c_end and r_end are what in-process `tune spsa` derives
/// from each parameter's declared step with its default `--c-end` and `--lr`
/// ([`ParamSpec::spsa_ends`]), printed exactly (shortest round-trip decimals): UCI reports
/// bounds but no step, so this file is how an external run on xqtune gets the same schedule,
/// and with it the same games, as the in-process run.
pub fn tune_lines(eval: &EvalParams, search: &SearchParams) -> String {
    use crate::tunable::{SPSA_C_END_STEPS, SPSA_LR};
    let mut out = String::new();
    for s in eval.specs().into_iter().chain(search.specs()) {
        let (c_end, r_end) = s.spsa_ends(SPSA_C_END_STEPS, SPSA_LR);
        out.push_str(&format!(
            "{},{},{},{},{c_end},{r_end}\n",
            s.name, s.value, s.min, s.max
        ));
    }
    out
}

/// One search at a time on a thread that outlives it (see the module comment).
#[derive(Default)]
struct SearchWorker {
    /// Jobs in, and a message back when each is done; `None` until the first search.
    channel: Option<(mpsc::Sender<Job>, mpsc::Receiver<()>)>,
    thread: Option<JoinHandle<()>>,
    busy: bool,
}

type Job = Box<dyn FnOnce() + Send>;

impl SearchWorker {
    /// Starts `job` once the previous one is done; the thread is started by the first job.
    fn run(&mut self, job: Job) -> Result<(), String> {
        self.wait();
        let jobs = match &self.channel {
            Some((jobs, _)) => jobs,
            None => {
                let (jobs_in, jobs) = mpsc::channel::<Job>();
                let (done, done_out) = mpsc::channel();
                let thread = std::thread::Builder::new()
                    .name("search".into())
                    .spawn(move || {
                        for job in jobs {
                            job();
                            if done.send(()).is_err() {
                                break;
                            }
                        }
                    })
                    .map_err(|e| format!("cannot start the search thread: {e}"))?;
                self.thread = Some(thread);
                &self.channel.insert((jobs_in, done_out)).0
            }
        };
        jobs.send(job)
            .map_err(|_| "the search thread has ended".to_string())?;
        self.busy = true;
        Ok(())
    }

    /// Waits for the running job, if any.
    fn wait(&mut self) {
        if std::mem::take(&mut self.busy)
            && let Some((_, done)) = &self.channel
            && done.recv().is_err()
        {
            // The thread died with the job (a panic): start a new one for the next search.
            self.channel = None;
            if let Some(t) = self.thread.take() {
                let _ = t.join();
            }
        }
    }
}

impl Drop for SearchWorker {
    fn drop(&mut self) {
        self.wait();
        self.channel = None;
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

impl Engine {
    pub fn new(eval: EvalParams, params: SearchParams, out: Output) -> Engine {
        let searcher = Searcher::new(Arc::new(eval), params, DEFAULT_HASH_MB);
        let stop = searcher.stop_handle();
        Engine {
            out,
            protocol: Protocol::Uci,
            pos: Position::startpos(),
            searcher: Arc::new(Mutex::new(searcher)),
            stop,
            worker: SearchWorker::default(),
            infinite: false,
            hash_mb: DEFAULT_HASH_MB,
            skill: Skill::Expert,
            ucci_millisec: false,
            move_overhead_ms: MOVE_OVERHEAD_MS,
            variant: Variant::Xiangqi,
            tune: None,
            eval_changed: false,
            last_position: None,
        }
    }

    /// Offers every evaluation and search parameter as a `spin` option (`--tune-options`).
    pub fn with_tune_options(mut self) -> Engine {
        let s = self.lock_searcher();
        let tune = TuneOptions::new(&s.eval, &s.params);
        drop(s);
        self.tune = Some(tune);
        self
    }

    /// The `option` lines of the tunable parameters, in the session's dialect.
    fn say_tune_options(&self) {
        let Some(t) = &self.tune else { return };
        for s in &t.specs {
            self.say(&match self.protocol {
                Protocol::Uci => format!(
                    "option name {} type spin default {} min {} max {}",
                    s.name, s.value, s.min, s.max
                ),
                Protocol::Ucci => format!(
                    "option {} type spin min {} max {} default {}",
                    s.name, s.min, s.max, s.value
                ),
            });
        }
    }

    /// `setoption` of a tunable parameter: `Ok(false)` when `name` is not one. Clearing the
    /// tables waits for the next `ucinewgame` or `go`, so that a tuner setting hundreds of
    /// options clears them once.
    fn set_tune_option(&mut self, name: &str, value: &str) -> Result<bool, String> {
        let Some(t) = &mut self.tune else {
            return Ok(false);
        };
        let Some(&i) = t.index.get(&name.to_ascii_lowercase()) else {
            return Ok(false);
        };
        let spec = &mut t.specs[i];
        let v: i32 = value
            .trim()
            .parse()
            .map_err(|_| format!("option {}: '{value}' is not an integer", spec.name))?;
        if !(spec.min..=spec.max).contains(&v) {
            return Err(format!(
                "option {}: {v} outside {}..{}",
                spec.name, spec.min, spec.max
            ));
        }
        spec.value = v;
        let values: Vec<i32> = t.specs.iter().map(|s| s.value).collect();
        let n_eval = t.n_eval;
        let mut s = self.lock_searcher();
        if i < n_eval {
            let eval = s.eval.from_vec(&values[..n_eval]);
            s.eval = Arc::new(eval);
            drop(s);
            self.eval_changed = true;
        } else {
            s.params = s.params.from_vec(&values[n_eval..]);
        }
        Ok(true)
    }

    /// After a parameter file replaced a set: the options show its values and bounds.
    fn refresh_tune_options(&mut self) {
        if self.tune.is_some() {
            let s = self.lock_searcher();
            let tune = TuneOptions::new(&s.eval, &s.params);
            drop(s);
            self.tune = Some(tune);
        }
    }

    pub fn protocol(&self) -> Protocol {
        self.protocol
    }

    /// The current position (after `position ...`).
    pub fn position(&self) -> &Position {
        &self.pos
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
        self.say(&format!(
            "option name Hash type spin default {DEFAULT_HASH_MB} min 1 max {MAX_HASH_MB}"
        ));
        self.say(&format!(
            "option name Threads type spin default 1 min 1 max {MAX_THREADS}"
        ));
        self.say(&format!(
            "option name Move Overhead type spin default {MOVE_OVERHEAD_MS} min 0 max {MAX_MOVE_OVERHEAD_MS}"
        ));
        self.say("option name Clear Hash type button");
        self.say("option name ParamsFile type string default <empty>");
        self.say("option name SearchParamsFile type string default <empty>");
        self.say(
            "option name Skill type combo default expert var easy var medium var hard var expert",
        );
        self.say("option name UCI_Variant type combo default xiangqi var xiangqi var jieqi");
        self.say_tune_options();
        self.say(Protocol::Uci.hello_ok());
    }

    fn cmd_ucci(&self) {
        self.say(&format!("id name {ENGINE_NAME}"));
        self.say("id copyright MIT licence");
        self.say(&format!("id author {ENGINE_AUTHOR}"));
        self.say(&format!(
            "option hashsize type spin min 1 max {MAX_HASH_MB} default {DEFAULT_HASH_MB}"
        ));
        self.say(&format!(
            "option threads type spin min 1 max {MAX_THREADS} default 1"
        ));
        self.say(&format!(
            "option moveoverhead type spin min 0 max {MAX_MOVE_OVERHEAD_MS} default {MOVE_OVERHEAD_MS}"
        ));
        self.say("option usemillisec type check default false");
        self.say("option paramsfile type string default <empty>");
        self.say("option searchparamsfile type string default <empty>");
        self.say("option skill type combo var easy var medium var hard var expert default expert");
        self.say_tune_options();
        self.say(Protocol::Ucci.hello_ok());
    }

    fn cmd_setoption(&mut self, rest: &str) -> Result<(), String> {
        // UCI: `name <name words> [value <value words>]`; UCCI: `<name> <value>`.
        let (name, value) = if let Some(r) = rest.strip_prefix("name ") {
            match r.find(" value ") {
                Some(i) => (r[..i].trim().to_string(), r[i + 7..].trim().to_string()),
                None => (
                    r.trim().trim_end_matches(" value").to_string(),
                    String::new(),
                ),
            }
        } else {
            let mut it = rest.splitn(2, char::is_whitespace);
            let n = it.next().unwrap_or("").to_string();
            (n, it.next().unwrap_or("").trim().to_string())
        };
        if name.is_empty() {
            return Err("setoption needs an option name".into());
        }
        let value = if value == "<empty>" {
            String::new()
        } else {
            value
        };
        match name.to_ascii_lowercase().as_str() {
            "hash" | "hashsize" => {
                let mb: usize = value
                    .parse()
                    .map_err(|_| format!("option {name}: '{value}' is not a number of MB"))?;
                if !(1..=MAX_HASH_MB).contains(&mb) {
                    return Err(format!("option {name}: {mb} outside 1..{MAX_HASH_MB}"));
                }
                self.hash_mb = mb;
                self.lock_searcher().resize_hash(mb);
            }
            "threads" => {
                let n: usize = value
                    .parse()
                    .map_err(|_| format!("option {name}: '{value}' is not a number of threads"))?;
                if !(1..=MAX_THREADS).contains(&n) {
                    return Err(format!("option {name}: {n} outside 1..{MAX_THREADS}"));
                }
                self.lock_searcher().set_threads(n);
            }
            "move overhead" | "moveoverhead" => {
                let ms: u64 = value
                    .parse()
                    .map_err(|_| format!("option {name}: '{value}' is not a number of ms"))?;
                if ms > MAX_MOVE_OVERHEAD_MS {
                    return Err(format!(
                        "option {name}: {ms} outside 0..{MAX_MOVE_OVERHEAD_MS}"
                    ));
                }
                self.move_overhead_ms = ms;
            }
            "clear hash" => self.lock_searcher().new_game(),
            "paramsfile" => {
                let p = if value.is_empty() {
                    EvalParams::default()
                } else {
                    EvalParams::load(Path::new(&value))
                        .map_err(|e| format!("ParamsFile '{value}': {e}"))?
                };
                let mut s = self.lock_searcher();
                s.eval = Arc::new(p);
                s.new_game();
                drop(s);
                self.refresh_tune_options();
            }
            "searchparamsfile" => {
                let p = if value.is_empty() {
                    SearchParams::default()
                } else {
                    SearchParams::load(Path::new(&value))
                        .map_err(|e| format!("SearchParamsFile '{value}': {e}"))?
                };
                self.lock_searcher().params = p;
                self.refresh_tune_options();
            }
            "skill" => {
                self.skill = Skill::parse(&value).ok_or_else(|| {
                    format!("option Skill: '{value}' is not one of easy, medium, hard, expert")
                })?;
            }
            "uci_variant" => {
                self.variant = match value.to_ascii_lowercase().as_str() {
                    "xiangqi" => Variant::Xiangqi,
                    "jieqi" => Variant::Jieqi,
                    _ => {
                        return Err(format!(
                            "option UCI_Variant: '{value}' is not one of xiangqi, jieqi"
                        ));
                    }
                };
                self.pos = Position::startpos_of(self.variant);
                self.last_position = None;
            }
            "usemillisec" if self.protocol == Protocol::Ucci => {
                self.ucci_millisec = match value.as_str() {
                    "true" | "on" => true,
                    "false" | "off" => false,
                    _ => return Err(format!("option usemillisec: '{value}' is not true/false")),
                };
            }
            // UCCI options that a GUI sends and this engine has no use for.
            "batch" | "debug" | "ponder" | "usebook" | "bookfiles" | "loadbook" | "newgame"
            | "promotion" | "idle" | "style" | "randomness" | "knowledge" | "pruning"
            | "selectivity" | "drawmoves" | "repetition" | "ucci_variant"
                if self.protocol == Protocol::Ucci =>
            {
                if name.eq_ignore_ascii_case("newgame") {
                    self.lock_searcher().new_game();
                }
            }
            _ => {
                if !self.set_tune_option(&name, &value)? {
                    return Err(format!("unknown option '{name}'"));
                }
            }
        }
        Ok(())
    }

    /// `position ...`: when the setup is the previous command's and its moves extend the
    /// previous moves, only the new moves are played on the current position (the same
    /// position a full replay gives); otherwise the command is read from scratch.
    fn cmd_position(&mut self, rest: &str) {
        let tokens: Vec<&str> = rest.split_whitespace().collect();
        let moves_at = tokens.iter().position(|&t| t == "moves");
        let (setup, moves) = match moves_at {
            Some(i) => (&tokens[..i], &tokens[i + 1..]),
            None => (&tokens[..], &[][..]),
        };
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

    fn cmd_go(&mut self, rest: &str) -> Result<(), String> {
        let limits = match self.protocol {
            Protocol::Uci => parse_go_uci(rest, &self.pos)?,
            Protocol::Ucci => parse_go_ucci(rest, self.ucci_millisec)?,
        };
        self.wait_search();
        if std::mem::take(&mut self.eval_changed) {
            self.lock_searcher().new_game();
        }
        let mut limits = self.skill.apply(&limits);
        limits.move_overhead_ms = Some(self.move_overhead_ms);
        self.infinite = limits.infinite;
        self.stop.store(false, Ordering::Relaxed);
        let searcher = self.searcher.clone();
        let out = self.out.clone();
        let pos = self.pos.clone();
        let protocol = self.protocol;
        let stop = self.stop.clone();
        self.worker.run(Box::new(move || {
            let mut s = searcher.lock().unwrap_or_else(|e| e.into_inner());
            let mut info = InfoLines::new(out);
            let result = s.search_keep_stop(&pos, &limits, &mut |i: &SearchInfo| {
                info.push(&info_line(i, protocol));
            });
            drop(s);
            if limits.infinite {
                info.flush();
                // UCI: an infinite search answers only after `stop`.
                while !stop.load(Ordering::Relaxed) {
                    std::thread::sleep(std::time::Duration::from_millis(2));
                }
            }
            // The bestmove goes out in the same write as the held lines.
            info.pending
                .push_str(&bestmove_line(result.best_move, protocol));
            info.pending.push('\n');
            info.flush();
        }))?;
        Ok(())
    }
}

fn bestmove_line(m: Move, protocol: Protocol) -> String {
    match (m.is_null(), protocol) {
        (true, Protocol::Uci) => "bestmove (none)".into(),
        (true, Protocol::Ucci) => "nobestmove".into(),
        (false, _) => format!("bestmove {m}"),
    }
}

/// One `info` line for a finished iteration.
pub fn info_line(i: &SearchInfo, protocol: Protocol) -> String {
    let pv: Vec<String> = i.pv.iter().map(|m| m.to_string()).collect();
    let nps = i.nodes * 1000 / i.time_ms.max(1);
    match protocol {
        Protocol::Uci => {
            let score = match i.mate_in {
                Some(m) => format!("mate {m}"),
                None => format!("cp {}", i.score),
            };
            format!(
                "info depth {} seldepth {} score {score} nodes {} nps {nps} hashfull {} time {} pv {}",
                i.depth,
                i.seldepth,
                i.nodes,
                i.hashfull,
                i.time_ms,
                pv.join(" ")
            )
        }
        Protocol::Ucci => format!(
            "info depth {} score {} time {} nodes {} pv {}",
            i.depth,
            i.score,
            i.time_ms,
            i.nodes,
            pv.join(" ")
        ),
    }
}

/// Parses the arguments of `position`: `startpos | fen <FEN> [moves m1 m2 ...]`. The result is
/// a new position; the caller keeps the old one on error.
pub fn parse_position(rest: &str) -> Result<Position, String> {
    parse_position_variant(rest, Variant::Xiangqi)
}

/// As [`parse_position`] for `variant` (`UCI_Variant`): `startpos` is that variant's start and a
/// FEN that cannot tell (fully revealed) is read as that variant. Jieqi FENs and moves with
/// reveal suffixes (`h2e2N`) are accepted either way.
pub fn parse_position_variant(rest: &str, variant: Variant) -> Result<Position, String> {
    let tokens: Vec<&str> = rest.split_whitespace().collect();
    let moves_at = tokens.iter().position(|&t| t == "moves");
    let (setup, moves) = match moves_at {
        Some(i) => (&tokens[..i], &tokens[i + 1..]),
        None => (&tokens[..], &[][..]),
    };
    let mut pos = match setup.first() {
        Some(&"startpos") if setup.len() == 1 => Position::startpos_of(variant),
        Some(&"startpos") => {
            return Err(format!(
                "unexpected '{}' after 'position startpos'",
                setup[1..].join(" ")
            ));
        }
        Some(&"fen") => {
            let fen = setup[1..].join(" ");
            if fen.is_empty() {
                return Err("'position fen' needs a FEN".into());
            }
            match variant {
                Variant::Xiangqi => Position::from_fen(&fen),
                Variant::Jieqi => Position::from_fen_variant(&fen, Variant::Jieqi),
            }
            .map_err(|e| format!("invalid FEN '{fen}': {e}"))?
        }
        Some(other) => {
            return Err(format!(
                "position needs 'startpos' or 'fen', found '{other}'"
            ));
        }
        None => return Err("position needs 'startpos' or 'fen'".into()),
    };
    play_moves(&mut pos, moves, 0)?;
    Ok(pos)
}

/// Plays `moves[from..]` on `pos`; the error names the move by its number in `moves`.
fn play_moves(pos: &mut Position, moves: &[&str], from: usize) -> Result<(), String> {
    for (i, m) in moves.iter().enumerate().skip(from) {
        let mv = pos
            .parse_move(m)
            .map_err(|e| format!("move {} '{m}' refused: {e}", i + 1))?;
        pos.make_move(mv);
    }
    Ok(())
}

fn number<T: std::str::FromStr>(key: &str, v: Option<&&str>) -> Result<T, String> {
    let v = v.ok_or_else(|| format!("go {key} needs a value"))?;
    v.parse()
        .map_err(|_| format!("go {key}: '{v}' is not a valid number"))
}

/// Parses UCI `go` arguments; the clock of the side to move becomes `time_ms`.
pub fn parse_go_uci(rest: &str, pos: &Position) -> Result<SearchLimits, String> {
    let t: Vec<&str> = rest.split_whitespace().collect();
    let mut l = SearchLimits::default();
    let red = pos.side_to_move() == crate::core::Color::Red;
    let mut i = 0;
    while i < t.len() {
        let key = t[i];
        let v = t.get(i + 1);
        match key {
            "depth" => l.depth = Some(number(key, v)?),
            "nodes" => l.nodes = Some(number(key, v)?),
            "movetime" => l.movetime_ms = Some(number(key, v)?),
            "wtime" | "btime" => {
                // Clocks can go negative in some GUIs; treat that as no time left.
                let ms: i64 = number(key, v)?;
                if (key == "wtime") == red {
                    l.time_ms = Some(ms.max(1) as u64);
                }
            }
            "winc" | "binc" => {
                let ms: i64 = number(key, v)?;
                if (key == "winc") == red {
                    l.inc_ms = Some(ms.max(0) as u64);
                }
            }
            "movestogo" => l.movestogo = Some(number(key, v)?),
            "infinite" => {
                l.infinite = true;
                i += 1;
                continue;
            }
            "ponder" => {
                i += 1;
                continue;
            }
            "mate" => {
                let _: u32 = number(key, v)?;
            }
            _ => return Err(format!("go: unknown or unsupported parameter '{key}'")),
        }
        i += 2;
    }
    Ok(l)
}

/// Parses UCCI `go [ponder|draw] depth D | nodes N | time T [movestogo M | increment I]
/// [opptime ..]`. Times are seconds (Fairy-Stockfish's reading of UCCI) unless
/// `usemillisec` is on.
pub fn parse_go_ucci(rest: &str, millisec: bool) -> Result<SearchLimits, String> {
    let t: Vec<&str> = rest.split_whitespace().collect();
    let mut l = SearchLimits::default();
    let scale = if millisec { 1.0 } else { 1000.0 };
    let ms = |key: &str, v: Option<&&str>| -> Result<u64, String> {
        let x: f64 = number(key, v)?;
        if !x.is_finite() || x < 0.0 {
            return Err(format!(
                "go {key}: '{}' is not a valid time",
                v.unwrap_or(&"")
            ));
        }
        Ok((x * scale) as u64)
    };
    let mut i = 0;
    while i < t.len() {
        let key = t[i];
        let v = t.get(i + 1);
        match key {
            "ponder" | "draw" | "infinite" => {
                l.infinite |= key == "infinite";
                i += 1;
                continue;
            }
            "depth" if v == Some(&"infinite") => l.infinite = true,
            "depth" => l.depth = Some(number(key, v)?),
            "nodes" => l.nodes = Some(number(key, v)?),
            "time" => l.time_ms = Some(ms(key, v)?.max(1)),
            "increment" => l.inc_ms = Some(ms(key, v)?),
            "movestogo" => l.movestogo = Some(number(key, v)?),
            "opptime" | "oppincrement" | "oppmovestogo" => {
                let _: f64 = number(key, v)?;
            }
            _ => return Err(format!("go: unknown or unsupported parameter '{key}'")),
        }
        i += 2;
    }
    Ok(l)
}

/// Runs the protocol on stdin/stdout until `quit` or end of input; `tune_options` offers every
/// parameter as an option (`--tune-options`).
pub fn run(eval: EvalParams, params: SearchParams, tune_options: bool) -> anyhow::Result<()> {
    let out: Output = Arc::new(Mutex::new(Box::new(std::io::stdout())));
    let mut engine = Engine::new(eval, params, out);
    if tune_options {
        engine = engine.with_tune_options();
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
                if !engine.handle_line(line) {
                    return Ok(());
                }
            }
            Err(_) => engine.error("input line is not valid UTF-8"),
        }
    }
    engine.finish();
    Ok(())
}

/// `xqtune uci [--params FILE] [--search-params FILE] [--tune-options] [--print-tune]`.
pub fn run_with_args(args: &UciArgs) -> anyhow::Result<()> {
    let (eval, params) = load_params(args.params.as_deref(), args.search_params.as_deref())?;
    if args.print_tune {
        print!("{}", tune_lines(&eval, &params));
        return Ok(());
    }
    run(eval, params, args.tune_options)
}

/// The evaluation and search parameters of `--params` / `--search-params` (embedded defaults
/// where a flag is absent); errors name the file.
pub fn load_params(
    eval: Option<&std::path::Path>,
    search: Option<&std::path::Path>,
) -> anyhow::Result<(EvalParams, SearchParams)> {
    use anyhow::Context;
    let eval = match eval {
        Some(p) => EvalParams::load(p).with_context(|| format!("loading {}", p.display()))?,
        None => EvalParams::default(),
    };
    let search = match search {
        Some(p) => SearchParams::load(p).with_context(|| format!("loading {}", p.display()))?,
        None => SearchParams::default(),
    };
    Ok((eval, search))
}
