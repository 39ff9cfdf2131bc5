//! The MPI back end (cargo feature `mpi`): rank 0 hands jobs out one at a time to whichever
//! rank has a free thread (dynamic scheduling, so a slow rank never stalls a batch) and runs its
//! own share on its threads; every other rank serves jobs on its rayon pool. Resident data is
//! loaded by every rank at once and answers rank 0's broadcast queries.
//!
//! Each rank has one receiver thread that drains incoming messages (`MPI_Iprobe` and a short
//! sleep: OpenMPI's blocking receive spins a core, which the games need) into a channel;
//! everything else waits on that channel. Because every rank always drains, a blocking send
//! can never deadlock against a send in the other direction. Messages are bincode; job inputs,
//! outputs, specs, queries and answers travel inside them as the bytes their own types encode.
//!
//! A rank that dies ends the whole job (MPI's default error handler); the commands then continue
//! with `--resume` from their last checkpoint.

use super::registry::AnyResident;
use super::{
    Distributed, ExecError, Job, Registry, Resident, Role, Share, context, decode, encode,
};
use anyhow::{Context, bail};
use mpi::Threading;
use mpi::environment::Universe;
use mpi::point_to_point::{Destination, MatchedReceiveVec, Source};
use mpi::topology::{Communicator, SimpleCommunicator};
use serde::{Deserialize, Serialize};
use std::collections::{HashMap, VecDeque};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::{Receiver, Sender, channel};
use std::sync::{Mutex, OnceLock};
use std::time::Duration;

/// How long the receiver thread sleeps when nothing has arrived: from `POLL_MIN` right after a
/// message (a resident answers quickly) doubling to `POLL_MAX` (short next to a game; an idle
/// rank then wakes 500 times a second, a negligible cost).
const POLL_MIN: Duration = Duration::from_micros(50);
const POLL_MAX: Duration = Duration::from_millis(2);

#[derive(Serialize, Deserialize)]
enum Msg {
    /// A worker rank starts serving with this many threads.
    Hello {
        threads: usize,
    },
    Job {
        index: usize,
        kind: String,
        input: Vec<u8>,
    },
    Done {
        index: usize,
        output: Result<Vec<u8>, String>,
    },
    /// Load your share of resident `id`.
    Load {
        id: u64,
        kind: String,
        spec: Vec<u8>,
    },
    Loaded {
        id: u64,
        result: Result<(), String>,
    },
    Ask {
        id: u64,
        query: Vec<u8>,
    },
    Answer {
        id: u64,
        answer: Result<Vec<u8>, String>,
    },
    /// Drop your share of resident `id`.
    Release {
        id: u64,
    },
    Stop,
}

enum Event {
    Remote(i32, Msg),
    /// A job this rank ran on its own threads.
    Local(usize, Result<Vec<u8>, String>),
}

struct State {
    rank: i32,
    size: i32,
    universe: Mutex<Option<Universe>>,
    tx: Sender<Event>,
    rx: Mutex<Receiver<Event>>,
    stop_receiver: AtomicBool,
    receiver: Mutex<Option<std::thread::JoinHandle<()>>>,
    /// Rank 0: the threads each rank announced (index = rank; None until its hello).
    threads: Mutex<Vec<Option<usize>>>,
    /// Rank 0: free job slots of each rank.
    free: Mutex<Vec<usize>>,
    next_resident: AtomicU64,
}

static STATE: OnceLock<State> = OnceLock::new();

fn state() -> &'static State {
    STATE.get().expect("MPI executor used before exec::init")
}

fn world() -> SimpleCommunicator {
    SimpleCommunicator::world()
}

fn send(to: i32, msg: &Msg) {
    let bytes = encode(msg);
    world().process_at_rank(to).send(&bytes[..]);
}

/// Initialises MPI (`MPI_THREAD_MULTIPLE`: the receiver thread and the sender run at once).
pub fn init() -> anyhow::Result<Role> {
    let (universe, provided) = mpi::initialize_with_threading(Threading::Multiple)
        .context("MPI was already initialised")?;
    if provided != Threading::Multiple {
        bail!("this MPI library gives {provided:?} threading; xqtune needs MPI_THREAD_MULTIPLE");
    }
    let w = universe.world();
    let (rank, size) = (w.rank(), w.size());
    let (tx, rx) = channel();
    let st = State {
        rank,
        size,
        universe: Mutex::new(Some(universe)),
        tx: tx.clone(),
        rx: Mutex::new(rx),
        stop_receiver: AtomicBool::new(false),
        receiver: Mutex::new(None),
        threads: Mutex::new(vec![None; size as usize]),
        free: Mutex::new(vec![0; size as usize]),
        next_resident: AtomicU64::new(1),
    };
    if STATE.set(st).is_err() {
        bail!("MPI executor initialised twice");
    }
    if size > 1 {
        let handle = std::thread::Builder::new()
            .name("mpi-receiver".into())
            .spawn(move || receive_loop(tx))
            .context("starting the MPI receiver thread")?;
        if let Ok(mut r) = state().receiver.lock() {
            *r = Some(handle);
        }
    }
    Ok(if rank == 0 {
        Role::Coordinator
    } else {
        Role::Worker
    })
}

fn receive_loop(tx: Sender<Event>) {
    let w = world();
    let st = state();
    let mut pause = POLL_MIN;
    while !st.stop_receiver.load(Ordering::Relaxed) {
        match w.any_process().immediate_matched_probe() {
            Some(probed) => {
                pause = POLL_MIN;
                let (bytes, status) = probed.matched_receive_vec::<u8>();
                let msg: Msg = match decode(&bytes, "executor message") {
                    Ok(m) => m,
                    Err(e) => panic!("{e}"),
                };
                let stop = matches!(msg, Msg::Stop);
                if tx.send(Event::Remote(status.source_rank(), msg)).is_err() || stop {
                    break;
                }
            }
            None => {
                std::thread::sleep(pause);
                pause = (pause * 2).min(POLL_MAX);
            }
        }
    }
}

pub fn world_size() -> usize {
    STATE.get().map_or(1, |s| s.size as usize)
}

/// Rank 0: waits until every worker has announced its threads (they do at once on start).
fn await_hellos(st: &State, rx: &Receiver<Event>) {
    loop {
        let missing = st
            .threads
            .lock()
            .map(|t| t.iter().skip(1).any(|x| x.is_none()))
            .unwrap_or(false);
        if !missing {
            return;
        }
        match rx.recv() {
            Ok(Event::Remote(r, Msg::Hello { threads })) => hello(st, r, threads),
            Ok(_) => panic!("an executor message before the workers' hello"),
            Err(_) => return,
        }
    }
}

fn hello(st: &State, rank: i32, threads: usize) {
    if let Ok(mut t) = st.threads.lock() {
        t[rank as usize] = Some(threads);
    }
    if let Ok(mut f) = st.free.lock() {
        f[rank as usize] = threads;
    }
}

fn lock_rx(st: &State) -> std::sync::MutexGuard<'_, Receiver<Event>> {
    st.rx.lock().unwrap_or_else(|p| p.into_inner())
}

pub fn slots(local: usize) -> usize {
    let st = state();
    if st.size <= 1 {
        return local;
    }
    let rx = lock_rx(st);
    await_hellos(st, &rx);
    let remote: usize = st
        .threads
        .lock()
        .map(|t| t.iter().skip(1).map(|x| x.unwrap_or(0)).sum())
        .unwrap_or(0);
    local + remote
}

/// Rank 0: runs `jobs` over `threads` local threads and the worker ranks.
pub fn map<J: Job>(jobs: Vec<J>, threads: usize, done: &mut dyn FnMut(usize, J::Output) -> bool) {
    let st = state();
    let rx = lock_rx(st);
    await_hellos(st, &rx);
    let mut remaining = jobs.len();
    if remaining == 0 {
        return;
    }
    let ctx = context::<J>();
    let queue: Mutex<VecDeque<(usize, J)>> = Mutex::new(jobs.into_iter().enumerate().collect());
    let pop = || queue.lock().unwrap_or_else(|p| p.into_inner()).pop_front();
    std::thread::scope(|s| {
        for t in 0..threads.max(1) {
            let (tx, pop, ctx) = (st.tx.clone(), &pop, &ctx);
            s.spawn(move || {
                super::set_slot(t);
                while let Some((i, job)) = pop() {
                    // The output is encoded as a remote one is, so both decode alike.
                    let out = Ok(encode(&job.run(ctx)));
                    if tx.send(Event::Local(i, out)).is_err() {
                        break;
                    }
                }
            });
        }
        let mut stopped = false;
        let mut free = st.free.lock().unwrap_or_else(|p| p.into_inner());
        loop {
            // Hand jobs to every rank with a free thread.
            for r in 1..st.size as usize {
                while free[r] > 0 {
                    let Some((index, job)) = pop() else { break };
                    let msg = Msg::Job {
                        index,
                        kind: J::KIND.to_string(),
                        input: encode(&job),
                    };
                    send(r as i32, &msg);
                    free[r] -= 1;
                }
            }
            if remaining == 0 {
                break;
            }
            let (index, output) = match rx.recv() {
                Ok(Event::Local(i, o)) => (i, o),
                Ok(Event::Remote(r, Msg::Done { index, output })) => {
                    free[r as usize] += 1;
                    (index, output.map_err(|e| format!("rank {r}: {e}")))
                }
                Ok(Event::Remote(r, Msg::Hello { threads })) => {
                    free[r as usize] = threads;
                    continue;
                }
                Ok(Event::Remote(_, _)) => continue,
                Err(_) => panic!("the executor's channel closed"),
            };
            remaining -= 1;
            if stopped {
                continue;
            }
            let output: J::Output = match output.and_then(|b| decode(&b, J::KIND)) {
                Ok(o) => o,
                Err(e) => panic!("job {index} of kind {} failed: {e}", J::KIND),
            };
            if !done(index, output) {
                stopped = true;
                let mut q = queue.lock().unwrap_or_else(|p| p.into_inner());
                remaining -= q.len();
                q.clear();
            }
        }
    });
}

/// Rank 0: every rank loads its share of `R` at once.
pub fn load<R: Resident>(spec: &R::Spec) -> Result<Distributed<R>, ExecError<R::Error>> {
    let st = state();
    let rx = lock_rx(st);
    await_hellos(st, &rx);
    let id = st.next_resident.fetch_add(1, Ordering::Relaxed);
    let bytes = encode(spec);
    for r in 1..st.size {
        let msg = Msg::Load {
            id,
            kind: R::KIND.to_string(),
            spec: bytes.clone(),
        };
        send(r, &msg);
    }
    let ranks = st.size as usize;
    let mine = R::load(spec, Share { rank: 0, ranks });
    let mut failure = None;
    for _ in 1..st.size {
        match rx.recv() {
            Ok(Event::Remote(r, Msg::Loaded { result: Err(e), .. })) => {
                failure.get_or_insert(ExecError::Rank {
                    rank: r as usize,
                    message: e,
                });
            }
            Ok(Event::Remote(_, Msg::Loaded { result: Ok(()), .. })) => {}
            _ => panic!("an unexpected executor message while loading {}", R::KIND),
        }
    }
    drop(rx);
    let local = match (mine, failure) {
        (Err(e), _) => {
            release(id);
            return Err(ExecError::Here(e));
        }
        (Ok(_), Some(f)) => {
            release(id);
            return Err(f);
        }
        (Ok(l), None) => l,
    };
    Ok(Distributed {
        local,
        id: Some(id),
        ranks,
    })
}

/// Rank 0: every rank's answer to `query`, by rank.
pub fn ask<R: Resident>(local: &R, id: u64, query: &R::Query) -> Vec<R::Answer> {
    let st = state();
    let rx = lock_rx(st);
    let bytes = encode(query);
    for r in 1..st.size {
        send(
            r,
            &Msg::Ask {
                id,
                query: bytes.clone(),
            },
        );
    }
    let mut answers: Vec<Option<R::Answer>> = (0..st.size).map(|_| None).collect();
    answers[0] = Some(local.answer(query));
    for _ in 1..st.size {
        match rx.recv() {
            Ok(Event::Remote(r, Msg::Answer { answer, .. })) => {
                match answer.and_then(|b| decode(&b, R::KIND)) {
                    Ok(a) => answers[r as usize] = Some(a),
                    Err(e) => panic!("rank {r} could not answer a {} query: {e}", R::KIND),
                }
            }
            _ => panic!("an unexpected executor message during a {} query", R::KIND),
        }
    }
    answers
        .into_iter()
        .map(|a| a.unwrap_or_else(|| panic!("a rank did not answer a {} query", R::KIND)))
        .collect()
}

/// Rank 0: the workers drop their share of resident `id`.
pub fn release(id: u64) {
    let Some(st) = STATE.get() else { return };
    if st.universe.lock().map(|u| u.is_none()).unwrap_or(true) {
        return; // MPI is finalised: the workers have stopped
    }
    for r in 1..st.size {
        send(r, &Msg::Release { id });
    }
}

/// A worker rank: announce the threads, then run every job that arrives on a pool of that size
/// and answer every query, until rank 0 says stop.
pub fn serve(threads: usize, registry: Registry) -> anyhow::Result<()> {
    let st = state();
    let threads = threads.max(1);
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .thread_name(|i| format!("rank-worker-{i}"))
        .build()
        .context("building the worker pool")?;
    send(0, &Msg::Hello { threads });
    let registry = std::sync::Arc::new(registry);
    let rx = lock_rx(st);
    let mut residents: HashMap<u64, Box<dyn AnyResident>> = HashMap::new();
    let share = Share {
        rank: st.rank as usize,
        ranks: st.size as usize,
    };
    loop {
        match rx.recv() {
            Ok(Event::Remote(_, Msg::Job { index, kind, input })) => {
                let (tx, registry) = (st.tx.clone(), registry.clone());
                pool.spawn(move || {
                    let _ = tx.send(Event::Local(index, registry.run_job(&kind, &input)));
                });
            }
            Ok(Event::Local(index, output)) => send(0, &Msg::Done { index, output }),
            Ok(Event::Remote(_, Msg::Load { id, kind, spec })) => {
                let result = match pool.install(|| registry.load(&kind, &spec, share)) {
                    Ok(r) => {
                        residents.insert(id, r);
                        Ok(())
                    }
                    Err(e) => Err(e),
                };
                send(0, &Msg::Loaded { id, result });
            }
            Ok(Event::Remote(_, Msg::Ask { id, query })) => {
                let answer = match residents.get(&id) {
                    Some(r) => pool.install(|| r.answer_bytes(&query)),
                    None => Err(format!("no resident data {id} on this rank")),
                };
                send(0, &Msg::Answer { id, answer });
            }
            Ok(Event::Remote(_, Msg::Release { id })) => {
                residents.remove(&id);
            }
            Ok(Event::Remote(_, Msg::Stop)) | Err(_) => break,
            Ok(Event::Remote(_, _)) => {}
        }
    }
    drop(rx);
    drop(residents);
    super::drop_contexts();
    shut_down(st);
    Ok(())
}

/// Rank 0 at the end of the command: stop the workers, then finalise MPI.
pub fn finish() {
    let Some(st) = STATE.get() else { return };
    if st.rank == 0 && st.universe.lock().map(|u| u.is_some()).unwrap_or(false) {
        for r in 1..st.size {
            send(r, &Msg::Stop);
        }
    }
    shut_down(st);
}

fn shut_down(st: &State) {
    st.stop_receiver.store(true, Ordering::Relaxed);
    if let Some(h) = st.receiver.lock().ok().and_then(|mut r| r.take()) {
        let _ = h.join();
    }
    // Dropping the universe calls MPI_Finalize.
    if let Ok(mut u) = st.universe.lock() {
        u.take();
    }
}
