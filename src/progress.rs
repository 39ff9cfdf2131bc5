//! Progress of long work (matches, tuning, verification, datagen, imports).
//!
//! On a terminal this is an indicatif bar. When stderr is a file or a pipe (nohup, a batch
//! job, an MPI launcher collecting output) indicatif draws nothing, and an hour-long run would
//! look hung; there the same updates become plain lines, at most one per interval, each
//! complete on its own: `label pos/len (pct%) elapsed H:MM:SS eta H:MM:SS message`.
//! `XQTUNE_PROGRESS_SECS` sets the interval (default 30; 0 logs every update).

use std::io::{IsTerminal, Write};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressStyle};

/// The interval between plain progress lines when none is set.
const DEFAULT_INTERVAL: Duration = Duration::from_secs(30);

/// A progress display: a bar on a terminal, periodic lines elsewhere.
pub struct Progress {
    bar: ProgressBar,
    plain: Option<Mutex<Plain>>,
}

struct Plain {
    label: String,
    every: Duration,
    started: Instant,
    /// When the last line was written; `None` before the first.
    last: Option<Instant>,
    /// Whether the state changed since the last line.
    dirty: bool,
    /// The position when this display started (a resumed run's earlier steps are not timed).
    start_pos: u64,
    pos: u64,
    len: u64,
    msg: String,
    out: Box<dyn Write + Send>,
}

impl Progress {
    /// A display of `len` steps starting at `pos`; `template` is the indicatif template of the
    /// terminal bar, `label` starts each plain line.
    pub fn new(len: u64, pos: u64, template: &str, label: &str) -> Progress {
        if std::io::stderr().is_terminal() {
            let bar = ProgressBar::new(len);
            bar.set_style(
                ProgressStyle::with_template(template)
                    .unwrap_or_else(|_| ProgressStyle::default_bar())
                    .progress_chars("=> "),
            );
            bar.set_position(pos);
            Progress { bar, plain: None }
        } else {
            Progress::plain(
                len,
                pos,
                label,
                interval_from_env(),
                Box::new(std::io::stderr()),
            )
        }
    }

    /// Plain lines to `out`, at most one per `every` (the non-terminal display; tests use it
    /// with their own writer).
    pub fn plain(
        len: u64,
        pos: u64,
        label: &str,
        every: Duration,
        out: Box<dyn Write + Send>,
    ) -> Progress {
        Progress {
            bar: ProgressBar::hidden(),
            plain: Some(Mutex::new(Plain {
                label: label.to_string(),
                every,
                started: Instant::now(),
                last: None,
                dirty: false,
                start_pos: pos,
                pos,
                len,
                msg: String::new(),
                out,
            })),
        }
    }

    pub fn set_position(&self, pos: u64) {
        match &self.plain {
            None => self.bar.set_position(pos),
            Some(p) => self.update(p, |s| s.pos = pos),
        }
    }

    pub fn inc(&self, n: u64) {
        match &self.plain {
            None => self.bar.inc(n),
            Some(p) => self.update(p, |s| s.pos += n),
        }
    }

    /// A new position and the message that describes it, as one update.
    pub fn set(&self, pos: u64, msg: impl Into<String>) {
        let msg = msg.into();
        match &self.plain {
            None => {
                self.bar.set_position(pos);
                self.bar.set_message(msg);
            }
            Some(p) => self.update(p, |s| {
                s.pos = pos;
                s.msg = msg;
            }),
        }
    }

    pub fn set_message(&self, msg: impl Into<String>) {
        let msg = msg.into();
        match &self.plain {
            None => self.bar.set_message(msg),
            Some(p) => self.update(p, |s| s.msg = msg),
        }
    }

    /// A line of its own (a warning during the run), not lost behind the bar.
    pub fn println(&self, line: impl AsRef<str>) {
        match &self.plain {
            None => self.bar.println(line.as_ref()),
            Some(p) => {
                if let Ok(mut s) = p.lock() {
                    let _ = writeln!(s.out, "{}", line.as_ref());
                }
            }
        }
    }

    /// The work is done: the bar stays; a plain display writes its final state.
    pub fn finish(&self) {
        self.close(|b| b.finish());
    }

    /// The work is done and what follows reports it: the bar goes; a plain display still
    /// writes its final state, since a log has no bar to remove.
    pub fn finish_and_clear(&self) {
        self.close(|b| b.finish_and_clear());
    }

    /// The work stopped before its end: the bar stays where it was.
    pub fn abandon(&self) {
        self.close(|b| b.abandon());
    }

    fn close(&self, bar: impl Fn(&ProgressBar)) {
        match &self.plain {
            None => bar(&self.bar),
            Some(p) => {
                if let Ok(mut s) = p.lock() {
                    s.maybe_write(true);
                }
            }
        }
    }

    fn update(&self, p: &Mutex<Plain>, f: impl FnOnce(&mut Plain)) {
        if let Ok(mut s) = p.lock() {
            f(&mut s);
            s.dirty = true;
            s.maybe_write(false);
        }
    }
}

impl Plain {
    /// Writes the current state if it changed and the interval has passed (or `force`).
    fn maybe_write(&mut self, force: bool) {
        let due = self.last.is_none_or(|t| t.elapsed() >= self.every);
        if !self.dirty || !(due || force) {
            return;
        }
        let line = self.line(self.started.elapsed());
        let _ = writeln!(self.out, "{line}");
        let _ = self.out.flush();
        self.last = Some(Instant::now());
        self.dirty = false;
    }

    fn line(&self, elapsed: Duration) -> String {
        let pct = if self.len == 0 {
            100.0
        } else {
            100.0 * self.pos as f64 / self.len as f64
        };
        let done_here = self.pos.saturating_sub(self.start_pos);
        let eta = if done_here == 0 || self.pos >= self.len {
            None
        } else {
            let per = elapsed.as_secs_f64() / done_here as f64;
            Some(Duration::from_secs_f64(per * (self.len - self.pos) as f64))
        };
        let mut line = format!(
            "{} {}/{} ({pct:.1}%) elapsed {}",
            self.label,
            self.pos,
            self.len,
            clock(elapsed)
        );
        if let Some(eta) = eta {
            line.push_str(&format!(" eta {}", clock(eta)));
        }
        if !self.msg.is_empty() {
            line.push_str("  ");
            line.push_str(&self.msg);
        }
        line
    }
}

/// `H:MM:SS`.
fn clock(d: Duration) -> String {
    let s = d.as_secs();
    format!("{}:{:02}:{:02}", s / 3600, s / 60 % 60, s % 60)
}

/// `XQTUNE_PROGRESS_SECS`, or the default when unset; a value that is not a number of
/// seconds is reported once and the default used, rather than failing a long run over it.
fn interval_from_env() -> Duration {
    match std::env::var("XQTUNE_PROGRESS_SECS") {
        Err(_) => DEFAULT_INTERVAL,
        Ok(v) => match v.trim().parse::<f64>() {
            Ok(s) if s.is_finite() && s >= 0.0 => Duration::from_secs_f64(s),
            _ => {
                eprintln!(
                    "warning: XQTUNE_PROGRESS_SECS={v:?} is not a number of seconds; \
                     progress lines every {} s",
                    DEFAULT_INTERVAL.as_secs()
                );
                DEFAULT_INTERVAL
            }
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    #[derive(Clone, Default)]
    struct Sink(Arc<Mutex<Vec<u8>>>);

    impl Write for Sink {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(buf);
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    impl Sink {
        fn lines(&self) -> Vec<String> {
            String::from_utf8(self.0.lock().unwrap().clone())
                .unwrap()
                .lines()
                .map(str::to_string)
                .collect()
        }
    }

    #[test]
    fn with_no_interval_every_update_is_a_line() {
        let sink = Sink::default();
        let p = Progress::plain(4, 0, "match", Duration::ZERO, Box::new(sink.clone()));
        p.set(1, "1-0-0");
        p.set_position(2);
        p.set_message("2-0-0");
        p.inc(1);
        p.println("warning: something");
        p.finish_and_clear();
        let lines = sink.lines();
        assert_eq!(lines.len(), 5, "{lines:?}");
        assert!(
            lines[0].starts_with("match 1/4 (25.0%) elapsed 0:00:00 eta "),
            "{lines:?}"
        );
        assert!(lines[0].ends_with("  1-0-0"), "{lines:?}");
        assert!(lines[1].starts_with("match 2/4 ") && lines[1].ends_with("  1-0-0"));
        assert!(lines[2].starts_with("match 2/4 ") && lines[2].ends_with("  2-0-0"));
        assert!(lines[3].starts_with("match 3/4 (75.0%)") && lines[3].ends_with("  2-0-0"));
        assert_eq!(lines[4], "warning: something");
    }

    #[test]
    fn a_long_interval_writes_the_first_and_the_final_state_only() {
        let sink = Sink::default();
        let p = Progress::plain(
            100,
            10,
            "texel",
            Duration::from_secs(3600),
            Box::new(sink.clone()),
        );
        for i in 11..=100 {
            p.set(i, format!("loss {i}"));
        }
        p.finish();
        // finishing twice writes nothing new: the state has not changed
        p.finish();
        let lines = sink.lines();
        assert_eq!(lines.len(), 2, "{lines:?}");
        assert!(lines[0].starts_with("texel 11/100 (11.0%)"), "{lines:?}");
        assert!(lines[1].starts_with("texel 100/100 (100.0%)"), "{lines:?}");
        assert!(!lines[1].contains("eta"), "{lines:?}");
        assert!(lines[1].ends_with("  loss 100"), "{lines:?}");
    }

    #[test]
    fn a_resumed_run_has_no_eta_before_its_first_step() {
        let sink = Sink::default();
        let p = Progress::plain(10, 5, "spsa", Duration::ZERO, Box::new(sink.clone()));
        p.set_message("resumed");
        p.set(6, "step 6");
        let lines = sink.lines();
        assert_eq!(lines.len(), 2, "{lines:?}");
        assert!(lines[0].starts_with("spsa 5/10 (50.0%) elapsed 0:00:00  resumed"));
        assert!(!lines[0].contains("eta"));
        assert!(lines[1].contains(" eta "), "{lines:?}");
    }

    #[test]
    fn clock_reads_hours_minutes_seconds() {
        assert_eq!(clock(Duration::from_secs(0)), "0:00:00");
        assert_eq!(clock(Duration::from_secs(3 * 3600 + 7 * 60 + 5)), "3:07:05");
    }
}
