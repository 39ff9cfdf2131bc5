//! The search thread. The search runs in its own thread so that `stop`, `isready` and `quit`
//! are answered while it thinks. That thread lives as long as the session: a thread started per
//! `go` frees its stack when it ends and faults it in again on the next search, which a match
//! runner at a few thousand nodes per move pays on every move.

use super::Output;
use super::protocol::{Protocol, bestmove_line, info_line};
use crate::core::Position;
use crate::search::{SearchInfo, SearchLimits, Searcher};
use std::io::Write;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

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

/// One search at a time on a thread that outlives it (see the module comment).
#[derive(Default)]
pub(super) struct SearchWorker {
    /// Jobs in, and a message back when each is done; `None` until the first search.
    channel: Option<(mpsc::Sender<Job>, mpsc::Receiver<()>)>,
    thread: Option<JoinHandle<()>>,
    busy: bool,
}

pub(super) type Job = Box<dyn FnOnce() + Send>;

impl SearchWorker {
    /// Starts `job` once the previous one is done; the thread is started by the first job.
    pub(super) fn run(&mut self, job: Job) -> Result<(), String> {
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
    pub(super) fn wait(&mut self) {
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

/// The job of one `go`: searches `pos` within `limits`, sends its `info` lines in `protocol`'s
/// words and ends with the `bestmove` line. An infinite search answers only once `stop` is set.
pub(super) fn search_job(
    searcher: Arc<Mutex<Searcher>>,
    out: Output,
    pos: Position,
    limits: SearchLimits,
    protocol: Protocol,
    stop: Arc<AtomicBool>,
) -> Job {
    Box::new(move || {
        let mut s = searcher.lock().unwrap_or_else(|e| e.into_inner());
        let mut info = InfoLines::new(out);
        let mut last: Option<SearchInfo> = None;
        let result = s.search_keep_stop(&pos, &limits, &mut |i: &SearchInfo| {
            info.push(&info_line(i, protocol));
            last = Some(i.clone());
        });
        // A search stopped inside an iteration may play a move that beat the last complete
        // iteration's, or one found before any iteration completed: one more line gives the
        // score and line of the move played, as Stockfish's final line does, so a GUI or
        // referee reads the score of that move.
        let stale = last
            .as_ref()
            .is_none_or(|l| l.pv.first() != Some(&result.best_move) || l.score != result.score);
        if stale && !result.best_move.is_null() {
            let l = last.unwrap_or_else(|| SearchInfo {
                depth: result.depth,
                ..Default::default()
            });
            let line = SearchInfo {
                score: result.score,
                mate_in: crate::search::mate_in(result.score),
                nodes: s.nodes(),
                time_ms: info.started.elapsed().as_millis() as u64,
                pv: result.pv.clone(),
                ..l
            };
            info.push(&info_line(&line, protocol));
        }
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
    })
}
