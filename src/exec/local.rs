//! The local back end: the tasks on this process's rayon threads, as every command ran before
//! the executor existed.

use super::{Output, Task, run_task};
use crate::play::game::GameRecord;
use crate::play::stats::MatchResult;
use crate::play::{Engine, MatchConfig, run_match_with_progress};
use rayon::prelude::*;

/// Runs every task on a pool of `threads` (the current pool when it has that size), then hands
/// the outputs to `done` in task order.
pub fn map(tasks: Vec<Task>, threads: usize, done: &mut dyn FnMut(usize, Output) -> bool) {
    let run = move || -> Vec<Output> { tasks.into_par_iter().map(run_task).collect() };
    let outputs = if rayon::current_num_threads() == threads.max(1) {
        run()
    } else {
        match rayon::ThreadPoolBuilder::new()
            .num_threads(threads.max(1))
            .build()
        {
            Ok(pool) => pool.install(run),
            Err(_) => run(),
        }
    };
    for (i, o) in outputs.into_iter().enumerate() {
        if !done(i, o) {
            break;
        }
    }
}

/// Each match through the runner, in parallel on the current rayon pool (one game at a time
/// per match: the tuners' jobs are small).
pub fn play_matches(
    jobs: &[(&Engine, &Engine, MatchConfig)],
) -> Vec<(MatchResult, Vec<GameRecord>)> {
    jobs.par_iter()
        .map(
            |(a, b, cfg)| match run_match_with_progress(a, b, cfg, &|_| {}) {
                Ok(r) => (r.result, r.games),
                Err(e) => panic!("tuning match: {e}"),
            },
        )
        .collect()
}
