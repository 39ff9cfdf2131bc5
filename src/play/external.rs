//! External engines over a subprocess, speaking UCI as Pikafish does (ranks 0-9, moves `h2e2`,
//! `position fen ... moves ...`, `go nodes/depth/wtime...`) or UCCI as ElephantEye and
//! Fairy-Stockfish (`ucci`/`ucciok`, `setoption <name> <value>`, `go time .. increment ..`,
//! `bestmove`/`nobestmove`, `info ... score N`).
//!
//! A reader thread turns the engine's stdout into a channel of lines so that every wait has a
//! deadline; a dead or hung engine is killed and started again before the next game.
//!
//! A player that is dropped (the end of a match, or of one game pair of a tuner) leaves its
//! process in an idle pool, and the next player of the same program takes it instead of
//! starting one: a tuner plays thousands of short matches, and an engine's start-up (loading
//! networks or tables, allocating its hash) would otherwise be paid for every pair.

use super::game::{GoRequest, Player, PlayerError, Reply};
use crate::uci::Protocol;
use serde::Serialize;
use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::Mutex;
use std::sync::mpsc::{Receiver, RecvTimeoutError, channel};
use std::time::{Duration, Instant};
use thiserror::Error;

/// How to start an external engine.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ExternalConfig {
    pub name: String,
    pub program: String,
    pub args: Vec<String>,
    pub protocol: Protocol,
    /// `setoption` pairs sent after the handshake.
    pub options: Vec<(String, String)>,
    /// Deadline for the handshake and `isready`, and for a move without a clock.
    pub timeout_ms: u64,
}

impl ExternalConfig {
    /// Starts the program with piped stdin and stdout, in its own process group: a Ctrl-C at
    /// the terminal is for the match or tuner (which finishes its step and checkpoints), not for
    /// the engines in the middle of its games.
    pub fn spawn(&self) -> std::io::Result<Child> {
        let mut command = Command::new(&self.program);
        #[cfg(unix)]
        std::os::unix::process::CommandExt::process_group(&mut command, 0);
        command
            .args(&self.args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
    }
}

#[derive(Debug, Error)]
pub enum ExternalError {
    #[error("engine command is empty")]
    EmptyCommand,
    #[error("unbalanced quote in engine command '{0}'")]
    Quote(String),
    #[error("option '{0}' is not Name=Value")]
    Option(String),
}

impl ExternalConfig {
    /// Splits a command line (whitespace, with '...' and "..." quoting) into program and args.
    pub fn from_command(
        name: &str,
        command: &str,
        protocol: Protocol,
        options: &[String],
    ) -> Result<ExternalConfig, ExternalError> {
        let words = split_command(command)?;
        let (program, args) = words.split_first().ok_or(ExternalError::EmptyCommand)?;
        let options = options
            .iter()
            .map(|o| {
                o.split_once('=')
                    .filter(|(k, _)| !k.trim().is_empty())
                    .map(|(k, v)| (k.trim().to_string(), v.trim().to_string()))
                    .ok_or_else(|| ExternalError::Option(o.clone()))
            })
            .collect::<Result<_, _>>()?;
        Ok(ExternalConfig {
            name: name.to_string(),
            program: program.clone(),
            args: args.to_vec(),
            protocol,
            options,
            timeout_ms: 30_000,
        })
    }
}

fn split_command(command: &str) -> Result<Vec<String>, ExternalError> {
    let mut words = Vec::new();
    let mut cur = String::new();
    let mut quote: Option<char> = None;
    let mut any = false;
    for c in command.chars() {
        match quote {
            Some(q) if c == q => quote = None,
            Some(_) => cur.push(c),
            None if c == '\'' || c == '"' => {
                quote = Some(c);
                any = true;
            }
            None if c.is_whitespace() => {
                if any || !cur.is_empty() {
                    words.push(std::mem::take(&mut cur));
                    any = false;
                }
            }
            None => cur.push(c),
        }
    }
    if quote.is_some() {
        return Err(ExternalError::Quote(command.to_string()));
    }
    if any || !cur.is_empty() {
        words.push(cur);
    }
    Ok(words)
}

struct Process {
    child: Child,
    stdin: ChildStdin,
    lines: Receiver<String>,
}

impl Drop for Process {
    fn drop(&mut self) {
        let _ = writeln!(self.stdin, "quit");
        let _ = self.stdin.flush();
        // Give it a moment to exit cleanly, then kill.
        let deadline = Instant::now() + Duration::from_millis(200);
        while Instant::now() < deadline {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            // Short polls: a match ends by dropping its engines, and most exit at once.
            std::thread::sleep(Duration::from_millis(1));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// An engine process waiting in the idle pool, with what it was started as and the options it
/// was given.
struct Idle {
    launch: (String, Vec<String>, Protocol),
    process: Process,
    applied: Vec<(String, String)>,
}

static IDLE: Mutex<Vec<Idle>> = Mutex::new(Vec::new());

fn idle_pool() -> std::sync::MutexGuard<'static, Vec<Idle>> {
    IDLE.lock().unwrap_or_else(|e| e.into_inner())
}

/// Ends every idle engine process (`quit`, then kill after a grace period). The commands that
/// play games call it when they are done, so that no engine outlives them.
pub fn shutdown_idle() {
    let idle = std::mem::take(&mut *idle_pool());
    drop(idle);
}

/// A UCI/UCCI engine process used as a [`Player`]; started lazily, restarted after a failure.
pub struct ExternalPlayer {
    config: ExternalConfig,
    process: Option<Process>,
    /// The options the running process was last given (what `setoption` has to change).
    applied: Vec<(String, String)>,
    /// How many times the process was (re)started.
    pub starts: u32,
}

impl ExternalPlayer {
    pub fn new(config: ExternalConfig) -> Self {
        ExternalPlayer {
            config,
            process: None,
            applied: Vec::new(),
            starts: 0,
        }
    }

    /// Replaces the option set; the running process gets `setoption` for each changed value
    /// before its next game, so a tuner can switch parameter sets without restarting it. An
    /// option left out of the new set keeps the value the process has.
    pub fn set_options(&mut self, options: Vec<(String, String)>) {
        self.config.options = options;
    }

    /// The options as configured now.
    pub fn options(&self) -> &[(String, String)] {
        &self.config.options
    }

    fn send_option(&mut self, name: &str, value: &str) -> Result<(), PlayerError> {
        match self.config.protocol {
            Protocol::Uci => self.send(&format!("setoption name {name} value {value}")),
            Protocol::Ucci => self.send(&format!("setoption {name} {value}")),
        }
    }

    /// Sends the options whose value differs from what the process was last given.
    fn apply_options(&mut self) -> Result<(), PlayerError> {
        let wanted = self.config.options.clone();
        for (k, v) in &wanted {
            let current = self.applied.iter().find(|(a, _)| a == k).map(|(_, b)| b);
            if current != Some(v) {
                self.send_option(k, v)?;
            }
        }
        for (k, v) in wanted {
            match self.applied.iter_mut().find(|(a, _)| *a == k) {
                Some(slot) => slot.1 = v,
                None => self.applied.push((k, v)),
            }
        }
        Ok(())
    }

    fn launch(&self) -> (String, Vec<String>, Protocol) {
        (
            self.config.program.clone(),
            self.config.args.clone(),
            self.config.protocol,
        )
    }

    /// An idle process of the same program whose every option is one this player sets, so
    /// that no value given for another engine's games is left behind.
    fn take_idle(&mut self) -> bool {
        let launch = self.launch();
        let mut pool = idle_pool();
        let found = pool.iter().position(|i| {
            i.launch == launch
                && i.applied
                    .iter()
                    .all(|(k, _)| self.config.options.iter().any(|(n, _)| n == k))
        });
        match found {
            Some(at) => {
                let idle = pool.swap_remove(at);
                drop(pool);
                self.process = Some(idle.process);
                self.applied = idle.applied;
                true
            }
            None => false,
        }
    }

    fn crash(&mut self, msg: impl Into<String>) -> PlayerError {
        self.process = None;
        PlayerError::Crash(msg.into())
    }

    fn start(&mut self) -> Result<(), PlayerError> {
        if self.take_idle() {
            return Ok(());
        }
        let mut child = self.config.spawn().map_err(|e| {
            PlayerError::Crash(format!("cannot start '{}': {e}", self.config.program))
        })?;
        let stdin = child
            .stdin
            .take()
            .ok_or_else(|| PlayerError::Crash("no stdin".into()))?;
        let stdout = child
            .stdout
            .take()
            .ok_or_else(|| PlayerError::Crash("no stdout".into()))?;
        let (tx, rx) = channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                match line {
                    Ok(l) => {
                        if tx.send(l).is_err() {
                            break;
                        }
                    }
                    Err(_) => break,
                }
            }
        });
        self.process = Some(Process {
            child,
            stdin,
            lines: rx,
        });
        self.starts += 1;
        let protocol = self.config.protocol;
        self.send(protocol.hello())?;
        let t = self.config.timeout_ms;
        self.wait_for(|l| l == protocol.hello_ok(), t)?;
        // A fresh process knows none of the options.
        self.applied.clear();
        self.apply_options()
    }

    fn send(&mut self, line: &str) -> Result<(), PlayerError> {
        let p = match &mut self.process {
            Some(p) => p,
            None => return Err(PlayerError::Crash("engine is not running".into())),
        };
        // One write per command (the pipe is unbuffered; `writeln!` would write the text and
        // the newline apart and wake the engine twice).
        let mut text = String::with_capacity(line.len() + 1);
        text.push_str(line);
        text.push('\n');
        if p.stdin
            .write_all(text.as_bytes())
            .and_then(|_| p.stdin.flush())
            .is_err()
        {
            return Err(self.crash("engine closed its input (died?)"));
        }
        Ok(())
    }

    /// Reads lines until `pred` accepts one (returned), the deadline passes, or the engine dies.
    fn wait_for(
        &mut self,
        mut pred: impl FnMut(&str) -> bool,
        timeout_ms: u64,
    ) -> Result<String, PlayerError> {
        let deadline = Instant::now() + Duration::from_millis(timeout_ms);
        loop {
            let p = match &self.process {
                Some(p) => p,
                None => return Err(PlayerError::Crash("engine is not running".into())),
            };
            let left = deadline.saturating_duration_since(Instant::now());
            match p.lines.recv_timeout(left) {
                Ok(line) => {
                    let line = line.trim();
                    if pred(line) {
                        return Ok(line.to_string());
                    }
                }
                Err(RecvTimeoutError::Timeout) => {
                    self.process = None;
                    return Err(PlayerError::Timeout);
                }
                Err(RecvTimeoutError::Disconnected) => {
                    return Err(self.crash("engine exited"));
                }
            }
        }
    }

    fn ensure_running(&mut self) -> Result<(), PlayerError> {
        if let Some(p) = &mut self.process
            && let Ok(Some(status)) = p.child.try_wait()
        {
            let _ = status;
            self.process = None;
        }
        if self.process.is_none() {
            self.start()?;
        }
        Ok(())
    }

    fn sync(&mut self) -> Result<(), PlayerError> {
        self.send("isready")?;
        let t = self.config.timeout_ms;
        self.wait_for(|l| l == "readyok", t).map(|_| ())
    }
}

/// Score in centipawns from an `info` line (`score cp N`, `score mate N`, UCCI `score N`).
fn parse_score(line: &str) -> Option<i32> {
    let mut it = line.split_whitespace();
    while let Some(t) = it.next() {
        if t == "score" {
            let a = it.next()?;
            return match a {
                "cp" => it.next()?.parse().ok(),
                "mate" => {
                    let n: i32 = it.next()?.parse().ok()?;
                    Some(if n >= 0 { 30_000 - n } else { -30_000 - n })
                }
                other => other.parse().ok(),
            };
        }
    }
    None
}

impl Player for ExternalPlayer {
    /// The process stays alive across games: changed options, then `ucinewgame` (UCI; UCCI
    /// has no such command) and `isready`, so the game starts once the engine is ready.
    fn new_game(&mut self) -> Result<(), PlayerError> {
        self.ensure_running()?;
        self.apply_options()?;
        if self.config.protocol == Protocol::Uci {
            self.send("ucinewgame")?;
        }
        self.sync()
    }

    fn go(&mut self, req: &GoRequest) -> Result<Reply, PlayerError> {
        self.ensure_running()?;
        let mut position = format!("position fen {}", req.start_fen);
        if !req.moves.is_empty() {
            position.push_str(" moves");
            for m in req.moves {
                position.push(' ');
                position.push_str(&m.to_string());
            }
        }
        let us = req.pos.side_to_move().index();
        let mut go = String::from("go");
        let l = req.limits;
        if let Some(d) = l.depth {
            go.push_str(&format!(" depth {d}"));
        }
        if let Some(n) = l.nodes {
            go.push_str(&format!(" nodes {n}"));
        }
        if let Some(t) = l.movetime_ms {
            go.push_str(&format!(" movetime {t}"));
        }
        let mut deadline = self.config.timeout_ms + l.movetime_ms.unwrap_or(0);
        if let (Some(c), Some(tc)) = (req.clocks, l.tc) {
            match self.config.protocol {
                Protocol::Uci => go.push_str(&format!(
                    " wtime {} btime {} winc {} binc {}",
                    c[0], c[1], tc.inc_ms, tc.inc_ms
                )),
                Protocol::Ucci => go.push_str(&format!(
                    " time {} increment {} opptime {} oppincrement {}",
                    c[us],
                    tc.inc_ms,
                    c[1 - us],
                    tc.inc_ms
                )),
            }
            // The referee rules on the clock; the watchdog only catches a hung engine.
            deadline = c[us] + 1_000;
        }
        // `position` and `go` in one write: the engine reads both at one wake-up.
        self.send(&format!("{position}\n{go}"))?;
        let mut score = None;
        let line = self.wait_for(
            |line| {
                if line.starts_with("info") {
                    if let Some(s) = parse_score(line) {
                        score = Some(s);
                    }
                    false
                } else {
                    line.starts_with("bestmove") || line.starts_with("nobestmove")
                }
            },
            deadline,
        )?;
        let mv = match line.split_whitespace().nth(1) {
            Some(m) if !line.starts_with("nobestmove") => m.to_string(),
            _ => Reply::NO_MOVE.to_string(),
        };
        Ok(Reply { mv, score })
    }

    fn reset(&mut self) {
        self.process = None;
    }
}

impl Drop for ExternalPlayer {
    fn drop(&mut self) {
        if let Some(mut process) = self.process.take()
            && matches!(process.child.try_wait(), Ok(None))
        {
            let launch = self.launch();
            idle_pool().push(Idle {
                launch,
                process,
                applied: std::mem::take(&mut self.applied),
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn command_splitting() {
        assert_eq!(
            split_command("a b  'c d' \"e\"").unwrap(),
            ["a", "b", "c d", "e"]
        );
        assert!(split_command("a 'b").is_err());
        assert_eq!(split_command("x ''").unwrap(), ["x", ""]);
        assert!(matches!(
            ExternalConfig::from_command("n", "  ", Protocol::Uci, &[]),
            Err(ExternalError::EmptyCommand)
        ));
        assert!(matches!(
            ExternalConfig::from_command("n", "x", Protocol::Uci, &["Hash".into()]),
            Err(ExternalError::Option(_))
        ));
        let c =
            ExternalConfig::from_command("n", "x -v", Protocol::Ucci, &["Hash=64".into()]).unwrap();
        assert_eq!(c.options, [("Hash".to_string(), "64".to_string())]);
        assert_eq!(c.args, ["-v"]);
    }

    #[test]
    fn scores_from_info_lines() {
        assert_eq!(
            parse_score("info depth 5 score cp -31 nodes 100 pv h2e2"),
            Some(-31)
        );
        assert_eq!(
            parse_score("info depth 5 score mate 3 pv h2e2"),
            Some(29_997)
        );
        assert_eq!(parse_score("info depth 5 score mate -2"), Some(-29_998));
        assert_eq!(parse_score("info depth 5 score 42 pv h2e2"), Some(42));
        assert_eq!(parse_score("info string hello"), None);
    }
}
