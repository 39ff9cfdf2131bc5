//! The local back end: jobs on this process's threads, handed out in index order to whichever
//! thread is free, outputs given to the caller as they finish.

use super::{Job, context, set_slot};
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::mpsc::channel;

/// Runs `jobs` on `threads` threads (one job per thread at a time); `done` is called on the
/// calling thread in completion order, and once it returns false no further job starts.
pub fn map<J: Job>(jobs: Vec<J>, threads: usize, done: &mut dyn FnMut(usize, J::Output) -> bool) {
    let n = jobs.len();
    if n == 0 {
        return;
    }
    let ctx = context::<J>();
    let threads = threads.clamp(1, n);
    if threads == 1 {
        // On the calling thread: nothing to hand over.
        for (i, job) in jobs.into_iter().enumerate() {
            if !done(i, job.run(&ctx)) {
                return;
            }
        }
        return;
    }
    let slots: Vec<Mutex<Option<J>>> = jobs.into_iter().map(|j| Mutex::new(Some(j))).collect();
    let next = AtomicUsize::new(0);
    let halt = AtomicBool::new(false);
    let (tx, rx) = channel::<(usize, J::Output)>();
    std::thread::scope(|s| {
        for t in 0..threads {
            let (tx, ctx, slots, next, halt) = (tx.clone(), &ctx, &slots, &next, &halt);
            std::thread::Builder::new()
                .name(format!("exec-{t}"))
                .spawn_scoped(s, move || {
                    set_slot(t);
                    while !halt.load(Ordering::Relaxed) {
                        let i = next.fetch_add(1, Ordering::SeqCst);
                        if i >= n {
                            break;
                        }
                        let job = slots[i].lock().unwrap_or_else(|p| p.into_inner()).take();
                        if let Some(job) = job
                            && tx.send((i, job.run(ctx))).is_err()
                        {
                            break;
                        }
                    }
                })
                .unwrap_or_else(|e| panic!("cannot start an executor thread: {e}"));
        }
        drop(tx);
        let mut stopped = false;
        // Every output is received (the threads end when the jobs run out or the stop is
        // seen); after a stop they are dropped.
        for (i, out) in rx {
            if !stopped && !done(i, out) {
                stopped = true;
                halt.store(true, Ordering::Relaxed);
            }
        }
    });
}
