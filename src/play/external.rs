//! External engines as players, speaking UCI as Pikafish does (ranks 0-9, moves `h2e2`,
//! `position fen ... moves ...`, `go nodes/depth/wtime...`) or UCCI as ElephantEye and
//! Fairy-Stockfish (`ucci`/`ucciok`, `setoption <name> <value>`, `go time .. increment ..`,
//! `bestmove`/`nobestmove`, `info ... score N`), over the one process client
//! ([`super::process`]). A dead or hung engine is killed and started again before the next
//! game. Between games the process stays up; the engine pool ([`super::pool`]) keeps it for the
//! next game of the same program.

use super::game::{GoRequest, Player, PlayerError, Reply};
use super::process::{EngineProcess, ProcessError, join_command, parse_options, split_command};
use crate::search::mate_score;
use crate::uci::Protocol;
use serde::{Deserialize, Serialize};
use std::time::Duration;

/// How to start an external engine.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
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
    /// The default of [`ExternalConfig::timeout_ms`].
    pub const DEFAULT_TIMEOUT_MS: u64 = 30_000;

    /// From a command line (whitespace, with '...' and "..." quoting) and `Name=Value` options.
    pub fn from_command(
        name: &str,
        command: &str,
        protocol: Protocol,
        options: &[String],
    ) -> Result<ExternalConfig, ProcessError> {
        let (program, args) = split_command(command)?;
        Ok(ExternalConfig {
            name: name.to_string(),
            program,
            args,
            protocol,
            options: parse_options(options)?,
            timeout_ms: Self::DEFAULT_TIMEOUT_MS,
        })
    }

    /// The command line, quoted where a word needs it, as [`ExternalConfig::from_command`]
    /// reads it back.
    pub fn command_line(&self) -> String {
        join_command(&self.program, &self.args)
    }

    /// What a running process of this engine was started as: a process can serve another
    /// configuration with the same launch (options are set between games).
    pub fn launch(&self) -> (&str, &[String], Protocol) {
        (&self.program, &self.args, self.protocol)
    }
}

/// A UCI/UCCI engine process used as a [`Player`]; started lazily, restarted after a failure.
pub struct ExternalPlayer {
    config: ExternalConfig,
    process: Option<EngineProcess>,
    /// The options the running process was last given (what `setoption` has to change).
    applied: Vec<(String, String)>,
    /// How many times the process was (re)started.
    pub starts: u32,
    /// The core its process is pinned to (`--affinity`).
    core: Option<usize>,
}

impl ExternalPlayer {
    pub fn new(config: ExternalConfig) -> Self {
        ExternalPlayer {
            config,
            process: None,
            applied: Vec::new(),
            starts: 0,
            core: None,
        }
    }

    pub fn config(&self) -> &ExternalConfig {
        &self.config
    }

    /// Whether this player's process can serve `config` without leaving behind a value given
    /// for another engine's games: the same launch, and every option it was given is one that
    /// `config` sets.
    pub fn can_serve(&self, config: &ExternalConfig) -> bool {
        self.config.launch() == config.launch()
            && self
                .applied
                .iter()
                .all(|(k, _)| config.options.iter().any(|(n, _)| n == k))
    }

    /// Serves `config` from now on; the running process gets `setoption` for each changed value
    /// before its next game, so a tuner can switch parameter sets without restarting it. An
    /// option left out of the new set keeps the value the process has.
    pub fn reconfigure(&mut self, config: ExternalConfig) {
        self.config = config;
    }

    /// Replaces the option set (see [`ExternalPlayer::reconfigure`]).
    pub fn set_options(&mut self, options: Vec<(String, String)>) {
        self.config.options = options;
    }

    /// The options as configured now.
    pub fn options(&self) -> &[(String, String)] {
        &self.config.options
    }

    /// Pins the process (the running one now, with all its threads, and every one started
    /// later) to `core`; `None` leaves the mask as it is.
    pub fn pin(&mut self, core: Option<usize>) {
        let Some(c) = core else { return };
        if self.core != Some(c)
            && let Some(p) = &self.process
        {
            // (A process that cannot be pinned plays on unpinned: the games are still valid.)
            let _ = super::affinity::pin_process(p.id(), c);
        }
        self.core = Some(c);
    }

    /// The process id of the running engine, if one runs.
    pub fn pid(&self) -> Option<u32> {
        self.process.as_ref().map(EngineProcess::id)
    }

    /// Whether a process is running.
    pub fn is_running(&mut self) -> bool {
        self.process.as_mut().is_some_and(EngineProcess::is_alive)
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

    /// A failure of the process: it is dropped (ended) and the next game starts a new one.
    fn fail(&mut self, e: ProcessError) -> PlayerError {
        self.process = None;
        match e {
            ProcessError::Timeout { .. } => PlayerError::Timeout,
            e => PlayerError::Crash(e.to_string()),
        }
    }

    fn start(&mut self) -> Result<(), PlayerError> {
        let mut p = EngineProcess::spawn_on(&self.config.program, &self.config.args, self.core)
            .map_err(|e| PlayerError::Crash(e.to_string()))?;
        self.starts += 1;
        let timeout = Duration::from_millis(self.config.timeout_ms);
        if let Err(e) = p.handshake(self.config.protocol, timeout) {
            return Err(PlayerError::Crash(e.to_string()));
        }
        self.process = Some(p);
        // A fresh process knows none of the options.
        self.applied.clear();
        self.apply_options()
    }

    fn send(&mut self, line: &str) -> Result<(), PlayerError> {
        let Some(p) = &mut self.process else {
            return Err(PlayerError::Crash("engine is not running".into()));
        };
        let r = p.send(line);
        r.map_err(|e| self.fail(e))
    }

    /// Reads lines until `pred` accepts one (returned), the deadline passes, or the engine dies.
    fn wait_for(
        &mut self,
        pred: impl FnMut(&str) -> bool,
        timeout_ms: u64,
    ) -> Result<String, PlayerError> {
        let Some(p) = &mut self.process else {
            return Err(PlayerError::Crash("engine is not running".into()));
        };
        let r = p.wait_for(pred, Duration::from_millis(timeout_ms));
        r.map_err(|e| self.fail(e))
    }

    fn ensure_running(&mut self) -> Result<(), PlayerError> {
        if !self.is_running() {
            self.process = None;
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

/// What an `info` line with a score says: `score cp N`, `score mate N` (in moves, as UCI
/// counts them; on the search's scale here, see [`mate_score`]) or UCCI's `score N`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Info {
    score: i32,
    /// The line's `depth`, if it has one.
    depth: Option<u32>,
    /// Whether the score is a `lowerbound` or `upperbound` (an iteration cut short or a
    /// fail-high report), not the value of the line.
    bound: bool,
}

fn parse_info(line: &str) -> Option<Info> {
    let (mut score, mut depth, mut bound) = (None, None, false);
    let mut it = line.split_whitespace();
    while let Some(t) = it.next() {
        match t {
            "depth" => depth = it.next().and_then(|d| d.parse().ok()),
            "score" => {
                score = match it.next()? {
                    "cp" => it.next()?.parse().ok(),
                    "mate" => Some(mate_score(it.next()?.parse().ok()?)),
                    other => other.parse().ok(),
                }
            }
            "lowerbound" | "upperbound" => bound = true,
            // the rest of the line is moves or free text
            "pv" | "string" => break,
            _ => {}
        }
    }
    score.map(|score| Info {
        score,
        depth,
        bound,
    })
}

/// The score a search reports, read from its info lines as they come: that of the last line
/// that is not a bound (a bound only while there is none). A search stopped mid-iteration (a
/// node limit) reports where the cut-short iteration stood, not what it found.
#[derive(Default)]
struct ReportedScore {
    score: Option<i32>,
    depth: Option<u32>,
    exact: bool,
}

impl ReportedScore {
    fn see(&mut self, line: &str) {
        if let Some(i) = parse_info(line)
            && (!i.bound || !self.exact)
        {
            (self.score, self.depth, self.exact) = (Some(i.score), i.depth, !i.bound);
        }
    }
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
        let mut reported = ReportedScore::default();
        let line = self.wait_for(
            |line| {
                if line.starts_with("info") {
                    reported.see(line);
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
        Ok(Reply {
            mv,
            score: reported.score,
            depth: reported.depth,
        })
    }

    fn reset(&mut self) {
        self.process = None;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn info(score: i32, depth: Option<u32>, bound: bool) -> Option<Info> {
        Some(Info {
            score,
            depth,
            bound,
        })
    }

    #[test]
    fn scores_and_depths_from_info_lines() {
        assert_eq!(
            parse_info("info depth 5 seldepth 9 score cp -31 nodes 100 pv h2e2"),
            info(-31, Some(5), false)
        );
        // mate in moves becomes plies on the search's scale, and reads back as the same moves
        for (line, score, depth, moves) in [
            ("info depth 7 score mate 3 pv h2e2", 29_995, 7, 3),
            ("info depth 1 score mate 1", 29_999, 1, 1),
            ("info depth 6 score mate -2", -29_996, 6, -2),
            ("info depth 0 score mate 0", -30_000, 0, 0),
        ] {
            assert_eq!(parse_info(line), info(score, Some(depth), false), "{line}");
            assert_eq!(crate::search::mate_in(score), Some(moves), "{line}");
        }
        assert_eq!(
            parse_info("info score 42 depth 3 pv h2e2"),
            info(42, Some(3), false)
        );
        assert_eq!(
            parse_info("info score cp 10 lowerbound"),
            info(10, None, true)
        );
        assert_eq!(
            parse_info("info depth 8 score cp 29 upperbound nodes 9000 pv h2e2"),
            info(29, Some(8), true)
        );
        assert_eq!(parse_info("info depth 9 currmove h2e2"), None);
        // the reply's score: the last exact one, a bound only before any exact one
        let mut r = ReportedScore::default();
        for (line, score, depth) in [
            ("info depth 1 score cp 20 upperbound", 20, 1),
            ("info depth 1 score cp 15 pv h2e2", 15, 1),
            ("info depth 2 score cp 40 lowerbound", 15, 1),
            ("info depth 2 seldepth 5 score cp 35 pv h2e2", 35, 2),
            ("info depth 3 score cp 60 upperbound nodes 9000", 35, 2),
            ("info depth 3 currmove b2e2", 35, 2),
        ] {
            r.see(line);
            assert_eq!((r.score, r.depth), (Some(score), Some(depth)), "{line}");
        }
        assert_eq!(parse_info("info string score cp 5 depth 3"), None);
        assert_eq!(parse_info("info depth 3 pv h2e2 score cp 5"), None);
        assert_eq!(parse_info("info depth 5 score cp x"), None);
    }
}
