//! Wall-clock checks: how long a search takes as seen from outside it, thread start, process
//! and pipe latency included. Only an idle machine measures that fairly, so every test here is
//! ignored; run them on an idle machine with `cargo test --test timing -- --ignored`.
//!
//! The same searches are checked where a loaded machine cannot break them: `search.rs` and
//! `uci.rs` on the `time` the engine reports for each iteration, and the session's unit tests
//! (`src/uci/mod.rs`) on the limits the time manager computes.

mod common;

use common::uci_session::{Session, bestmove};
use std::sync::Arc;
use std::time::{Duration, Instant};
use xqtune::core::Position;
use xqtune::eval::EvalParams;
use xqtune::search::{SearchLimits, SearchParams, Searcher};

fn searcher() -> Searcher {
    Searcher::new(Arc::new(EvalParams::default()), SearchParams::default(), 4)
}

#[test]
#[ignore = "timing: run on an idle machine"]
fn clock_limited_search_returns_in_time() {
    let pos = Position::startpos();
    let mut s = searcher();
    let start = Instant::now();
    let r = s.search(
        &pos,
        &SearchLimits {
            time_ms: Some(300),
            inc_ms: Some(0),
            ..Default::default()
        },
        &mut |_| {},
    );
    // The hard limit is at most 80% of the clock.
    assert!(start.elapsed() < Duration::from_millis(1000));
    assert!(pos.legal_moves().contains(r.best_move));
}

#[test]
#[ignore = "timing: run on an idle machine"]
fn two_threads_return_in_time_on_movetime_and_stop() {
    let pos = Position::startpos();
    let mut s = searcher();
    s.set_threads(2);
    let t0 = Instant::now();
    let r = s.search(
        &pos,
        &SearchLimits {
            movetime_ms: Some(300),
            ..Default::default()
        },
        &mut |_| {},
    );
    assert!(pos.legal_moves().contains(r.best_move));
    assert!(
        t0.elapsed() < Duration::from_millis(2000),
        "{:?}",
        t0.elapsed()
    );

    let stop = s.stop_handle();
    let t0 = Instant::now();
    let stopper = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(200));
        stop.store(true, std::sync::atomic::Ordering::Relaxed);
    });
    let r = s.search(
        &pos,
        &SearchLimits {
            infinite: true,
            ..Default::default()
        },
        &mut |_| {},
    );
    stopper.join().unwrap();
    assert!(pos.legal_moves().contains(r.best_move));
    assert!(
        t0.elapsed() < Duration::from_millis(3000),
        "{:?}",
        t0.elapsed()
    );
}

/// Sends `go`, waits for `bestmove`, and returns the output and the wall time it took.
fn timed_go(s: &mut Session, go: &str) -> (Vec<String>, Duration) {
    let started = Instant::now();
    s.send(go);
    let out = s.until("bestmove");
    (out, started.elapsed())
}

#[test]
#[ignore = "timing: run on an idle machine"]
fn uci_answers_within_twice_the_clock_and_the_movetime() {
    let mut s = Session::start(&[]);
    s.send("position startpos moves h2e2");
    let clock_ms = 400;
    let (out, wall) = timed_go(
        &mut s,
        &format!("go wtime 600000 btime {clock_ms} winc 0 binc 0"),
    );
    assert_ne!(bestmove(&out), "(none)");
    // A margin of twice the clock for process and pipe latency.
    assert!(
        wall < Duration::from_millis(2 * clock_ms),
        "answered after {wall:?} with {clock_ms} ms on the clock"
    );

    let movetime_ms = 200;
    let (out, wall) = timed_go(&mut s, &format!("go movetime {movetime_ms}"));
    assert_ne!(bestmove(&out), "(none)");
    assert!(
        wall < Duration::from_millis(2 * movetime_ms),
        "answered after {wall:?} with movetime {movetime_ms} ms"
    );
    s.quit();
}

#[test]
#[ignore = "timing: run on an idle machine"]
fn uci_two_threads_answer_movetime_and_stop_in_time() {
    let mut s = Session::start(&[]);
    s.send("setoption name Threads value 2");
    s.send("position startpos");
    let (out, wall) = timed_go(&mut s, "go movetime 300");
    assert_ne!(bestmove(&out), "(none)");
    assert!(wall < Duration::from_secs(3), "{wall:?}");
    s.send("go infinite");
    std::thread::sleep(Duration::from_millis(200));
    let (out, wall) = timed_go(&mut s, "stop");
    assert_ne!(bestmove(&out), "(none)");
    assert!(wall < Duration::from_secs(3), "{wall:?}");
    s.quit();
}

#[test]
#[ignore = "timing: run on an idle machine"]
fn uci_move_overhead_answers_inside_the_clock() {
    let mut s = Session::start(&[]);
    // All but 50 ms of a 1-second clock kept back: the answer comes well inside the second.
    s.send("setoption name Move Overhead value 950");
    s.send("position startpos");
    let (out, took) = timed_go(&mut s, "go wtime 1000 btime 1000");
    assert_ne!(bestmove(&out), "(none)");
    assert!(took < Duration::from_millis(1000), "{took:?}: {out:?}");
    s.quit();
}
