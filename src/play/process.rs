//! The one client of external engine processes: the command line and `Name=Value` options
//! parsed once, the process spawned with piped stdin/stdout in its own process group, a reader
//! thread that turns stdout into a channel of lines so that every wait has a deadline, the
//! `uci`/`ucci` handshake, and the end (`quit`, a short grace, then kill) when it is dropped. An
//! engine that exits, in its handshake or in a game, is reported with the last lines it wrote to
//! stderr, which another thread keeps.
//! Matches ([`super::external`]) and the tuners' option discovery (`tune::engine`) both use it,
//! with one error type.

use crate::uci::Protocol;
use std::collections::VecDeque;
use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError, channel};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use thiserror::Error;

/// What went wrong with an engine command line or an engine process; each names the program.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum ProcessError {
    #[error("engine command is empty")]
    EmptyCommand,
    #[error("unbalanced quote in engine command '{0}'")]
    Quote(String),
    #[error("engine option '{0}' is not Name=Value")]
    OptionSyntax(String),
    #[error("cannot start engine '{program}': {error}")]
    Start { program: String, error: String },
    #[error("engine '{program}' did not finish its handshake ({hello} .. {ok}): {why}")]
    Handshake {
        program: String,
        hello: &'static str,
        ok: &'static str,
        why: String,
    },
    /// `stderr` is the engine's last stderr lines (see [`stderr_note`]), empty if it wrote none.
    #[error("engine '{program}' closed its input (died?){}", stderr_note(.stderr))]
    Closed { program: String, stderr: String },
    #[error("engine '{program}' exited{}", stderr_note(.stderr))]
    Exited { program: String, stderr: String },
    #[error("engine '{program}' did not answer in time")]
    Timeout { program: String },
}

/// "; its stderr: LINES" after an error message, or nothing when the engine wrote none.
fn stderr_note(stderr: &str) -> String {
    if stderr.is_empty() {
        String::new()
    } else {
        format!("; its stderr: {stderr}")
    }
}

/// `word` quoted, where it has to be, so that [`split_command`] gives it back as one word: in
/// '...', with each ' as "'".
fn quote_word(word: &str) -> String {
    if !word.is_empty()
        && !word
            .chars()
            .any(|c| c.is_whitespace() || c == '\'' || c == '"')
    {
        return word.to_string();
    }
    format!("'{}'", word.replace('\'', "'\"'\"'"))
}

/// A program and its arguments as one command line that [`split_command`] splits back.
pub fn join_command(program: &str, args: &[String]) -> String {
    std::iter::once(program)
        .chain(args.iter().map(String::as_str))
        .map(quote_word)
        .collect::<Vec<_>>()
        .join(" ")
}

/// Splits a command line (whitespace, with '...' and "..." quoting) into program and arguments.
pub fn split_command(command: &str) -> Result<(String, Vec<String>), ProcessError> {
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
        return Err(ProcessError::Quote(command.to_string()));
    }
    if any || !cur.is_empty() {
        words.push(cur);
    }
    if words.is_empty() {
        return Err(ProcessError::EmptyCommand);
    }
    let program = words.remove(0);
    Ok((program, words))
}

/// Parses `Name=Value` option texts (names and values trimmed; the name must not be empty).
pub fn parse_options(texts: &[String]) -> Result<Vec<(String, String)>, ProcessError> {
    texts
        .iter()
        .map(|o| {
            o.split_once('=')
                .filter(|(k, _)| !k.trim().is_empty())
                .map(|(k, v)| (k.trim().to_string(), v.trim().to_string()))
                .ok_or_else(|| ProcessError::OptionSyntax(o.clone()))
        })
        .collect()
}

/// A running engine process.
pub struct EngineProcess {
    program: String,
    child: Child,
    stdin: ChildStdin,
    lines: Receiver<String>,
    /// The last [`STDERR_KEPT`] lines of the engine's stderr, and whether it has closed.
    stderr: Arc<Mutex<(VecDeque<String>, bool)>>,
}

/// Lines of an engine's stderr kept for its error messages, and the characters kept of each.
const STDERR_KEPT: usize = 3;
const STDERR_LINE_CHARS: usize = 200;

impl EngineProcess {
    /// Starts `program` in its own process group: a Ctrl-C at the terminal is for the match or
    /// tuner (which finishes its step and checkpoints), not for the engines in its games.
    pub fn spawn(program: &str, args: &[String]) -> Result<EngineProcess, ProcessError> {
        Self::spawn_on(program, args, None)
    }

    /// [`EngineProcess::spawn`], pinned to `core` when one is given (see [`super::affinity`]).
    pub fn spawn_on(
        program: &str,
        args: &[String],
        core: Option<usize>,
    ) -> Result<EngineProcess, ProcessError> {
        let mut command = Command::new(program);
        if let Some(c) = core {
            super::affinity::pin_command(&mut command, c);
        }
        #[cfg(unix)]
        std::os::unix::process::CommandExt::process_group(&mut command, 0);
        let start = |error: String| ProcessError::Start {
            program: program.to_string(),
            error,
        };
        let mut child = command
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| start(e.to_string()))?;
        let (Some(stdin), Some(stdout), Some(err)) =
            (child.stdin.take(), child.stdout.take(), child.stderr.take())
        else {
            let _ = child.kill();
            let _ = child.wait();
            return Err(start("no pipes".into()));
        };
        let (tx, lines) = channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(l) = line else { break };
                if tx.send(l).is_err() {
                    break;
                }
            }
        });
        // stderr is drained all the time (an engine must never block on a full pipe); only
        // its last lines are kept.
        let stderr = Arc::new(Mutex::new((VecDeque::new(), false)));
        let kept = stderr.clone();
        std::thread::spawn(move || {
            for line in BufReader::new(err).lines() {
                let Ok(l) = line else { break };
                let mut k = kept.lock().unwrap_or_else(|p| p.into_inner());
                if k.0.len() == STDERR_KEPT {
                    k.0.pop_front();
                }
                k.0.push_back(l.trim().chars().take(STDERR_LINE_CHARS).collect());
            }
            kept.lock().unwrap_or_else(|p| p.into_inner()).1 = true;
        });
        Ok(EngineProcess {
            program: program.to_string(),
            child,
            stdin,
            lines,
            stderr,
        })
    }

    pub fn program(&self) -> &str {
        &self.program
    }

    /// The engine's last non-empty stderr lines, joined by " | ", once the pipe has closed
    /// (waited for up to 200 ms: called when the engine has gone); empty if it wrote none.
    fn last_stderr(&self) -> String {
        let deadline = Instant::now() + Duration::from_millis(200);
        loop {
            let k = self.stderr.lock().unwrap_or_else(|p| p.into_inner());
            if k.1 || Instant::now() >= deadline {
                let said: Vec<&str> =
                    k.0.iter()
                        .map(String::as_str)
                        .filter(|l| !l.is_empty())
                        .collect();
                return said.join(" | ");
            }
            drop(k);
            std::thread::sleep(Duration::from_millis(2));
        }
    }

    /// Why the engine exited, as far as its stderr says: "the engine exited", then its last
    /// stderr lines.
    fn exit_reason(&self) -> String {
        format!("the engine exited{}", stderr_note(&self.last_stderr()))
    }

    /// The process id.
    pub fn id(&self) -> u32 {
        self.child.id()
    }

    /// Sends one line (one write: the pipe is unbuffered, and `writeln!` would write the text
    /// and the newline apart and wake the engine twice).
    pub fn send(&mut self, line: &str) -> Result<(), ProcessError> {
        self.write_line(line).map_err(|_| ProcessError::Closed {
            program: self.program.clone(),
            stderr: self.last_stderr(),
        })
    }

    fn write_line(&mut self, line: &str) -> std::io::Result<()> {
        let mut text = String::with_capacity(line.len() + 1);
        text.push_str(line);
        text.push('\n');
        self.stdin.write_all(text.as_bytes())?;
        self.stdin.flush()
    }

    /// Reads lines (trimmed) until `pred` accepts one, which is returned; an error when the
    /// deadline passes or the engine exits first.
    pub fn wait_for(
        &mut self,
        mut pred: impl FnMut(&str) -> bool,
        timeout: Duration,
    ) -> Result<String, ProcessError> {
        let deadline = Instant::now() + timeout;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.lines.recv_timeout(left) {
                Ok(line) => {
                    let line = line.trim();
                    if pred(line) {
                        return Ok(line.to_string());
                    }
                }
                Err(RecvTimeoutError::Timeout) => {
                    return Err(ProcessError::Timeout {
                        program: self.program.clone(),
                    });
                }
                Err(RecvTimeoutError::Disconnected) => {
                    return Err(ProcessError::Exited {
                        program: self.program.clone(),
                        stderr: self.last_stderr(),
                    });
                }
            }
        }
    }

    /// Sends `uci` (or `ucci`) and returns the lines the engine printed before `uciok`
    /// (`ucciok`): its id and option lines.
    pub fn handshake(
        &mut self,
        protocol: Protocol,
        timeout: Duration,
    ) -> Result<Vec<String>, ProcessError> {
        let program = self.program.clone();
        let fail = |why: String| ProcessError::Handshake {
            program: program.clone(),
            hello: protocol.hello(),
            ok: protocol.hello_ok(),
            why,
        };
        if self.send(protocol.hello()).is_err() {
            return Err(fail(format!("{} (cannot write)", self.exit_reason())));
        }
        let mut seen = Vec::new();
        match self.wait_for(
            |l| {
                if l == protocol.hello_ok() {
                    return true;
                }
                seen.push(l.to_string());
                false
            },
            timeout,
        ) {
            Ok(_) => Ok(seen),
            Err(ProcessError::Timeout { .. }) => Err(fail("no answer in time".into())),
            Err(_) => Err(fail(self.exit_reason())),
        }
    }

    /// Whether the process is still running.
    pub fn is_alive(&mut self) -> bool {
        matches!(self.child.try_wait(), Ok(None))
    }
}

impl Drop for EngineProcess {
    /// `quit`, up to 200 ms to exit cleanly (polled every millisecond: most engines exit at
    /// once), then kill.
    fn drop(&mut self) {
        let _ = self.write_line("quit");
        let deadline = Instant::now() + Duration::from_millis(200);
        while Instant::now() < deadline {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(1));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn command_splitting() {
        assert_eq!(
            split_command("a b  'c d' \"e\"").unwrap(),
            (
                "a".to_string(),
                vec!["b".to_string(), "c d".into(), "e".into()]
            )
        );
        assert_eq!(
            split_command("a 'b"),
            Err(ProcessError::Quote("a 'b".into()))
        );
        assert_eq!(split_command("x ''").unwrap().1, [""]);
        assert_eq!(split_command("  "), Err(ProcessError::EmptyCommand));
    }

    #[test]
    fn joined_commands_split_back() {
        let args: Vec<String> = ["uci", "", "a b", "it's", "say \"hi\"", "'both\" '", "\t"]
            .map(String::from)
            .into();
        let line = join_command("/opt/my engine/run", &args);
        assert_eq!(
            split_command(&line).unwrap(),
            ("/opt/my engine/run".to_string(), args)
        );
        // Plain words are left as they are.
        assert_eq!(
            join_command("./pikafish", &["--x=1".into()]),
            "./pikafish --x=1"
        );
        assert_eq!(quote_word("it's"), "'it'\"'\"'s'");
    }

    #[test]
    fn option_pairs() {
        assert_eq!(
            parse_options(&["Hash = 64".into(), "Name With Space=a b".into()]).unwrap(),
            [
                ("Hash".to_string(), "64".to_string()),
                ("Name With Space".into(), "a b".into())
            ]
        );
        for bad in ["Hash", "=3", " =3"] {
            assert_eq!(
                parse_options(&[bad.into()]),
                Err(ProcessError::OptionSyntax(bad.into()))
            );
        }
    }

    #[test]
    fn a_missing_program_is_named() {
        let e = EngineProcess::spawn("/no/such/engine", &[]).err().unwrap();
        assert!(e.to_string().contains("/no/such/engine"), "{e}");
    }

    #[cfg(unix)]
    #[test]
    fn handshake_deadline_and_exit() {
        // `cat` echoes: `uci` comes back, never `uciok`.
        let mut p = EngineProcess::spawn("cat", &[]).unwrap();
        let e = p
            .handshake(Protocol::Uci, Duration::from_millis(50))
            .unwrap_err();
        assert!(e.to_string().contains("no answer in time"), "{e}");
        assert!(p.is_alive());
        // `true` exits at once.
        let mut p = EngineProcess::spawn("true", &[]).unwrap();
        let e = p.wait_for(|_| true, Duration::from_secs(5)).unwrap_err();
        assert_eq!(
            e,
            ProcessError::Exited {
                program: "true".into(),
                stderr: String::new(),
            }
        );
        assert_eq!(e.to_string(), "engine 'true' exited");
        // So is one that exits later, while it is waited on.
        let script = "read line; echo \"panicked at search.rs\" >&2; exit 3";
        let mut p = EngineProcess::spawn("sh", &["-c".into(), script.into()]).unwrap();
        p.send("go").unwrap();
        let e = p.wait_for(|_| false, Duration::from_secs(5)).unwrap_err();
        assert_eq!(
            e.to_string(),
            "engine 'sh' exited; its stderr: panicked at search.rs"
        );
        // An engine that exits in its handshake is reported with its last stderr lines.
        let script = "echo one >&2; echo two >&2; echo three >&2; echo 'cannot read x.json' >&2";
        let mut p = EngineProcess::spawn("sh", &["-c".into(), script.into()]).unwrap();
        let e = p
            .handshake(Protocol::Uci, Duration::from_secs(5))
            .unwrap_err()
            .to_string();
        // (whether `uci` could still be written to it is a race: "(cannot write)" may follow)
        assert!(
            e.contains("): the engine exited; its stderr: two | three | cannot read x.json"),
            "{e}"
        );
        let mut p = EngineProcess::spawn("true", &[]).unwrap();
        let e = p
            .handshake(Protocol::Uci, Duration::from_secs(5))
            .unwrap_err();
        let e = e.to_string();
        assert!(
            e.contains("): the engine exited") && !e.contains("stderr"),
            "{e}"
        );
    }
}
