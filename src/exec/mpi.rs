//! The MPI back end (cargo feature `mpi`): rank 0 hands tasks out one at a time to whichever
//! rank has a free thread (dynamic scheduling, so a slow rank never stalls a batch) and plays
//! its own share on its threads; every other rank serves tasks on its rayon pool.
//!
//! Each rank has one receiver thread that drains incoming messages (`MPI_Iprobe` and a short
//! sleep: OpenMPI's blocking receive spins a core, which the games need) into a channel;
//! everything else waits on that channel. Because every rank always drains, a blocking send
//! can never deadlock against a send in the other direction. Messages are JSON.
//!
//! A rank that dies ends the whole job (MPI's default error handler); the tuners then continue
//! with `--resume` from their last checkpoint.

use super::{Output, Role, Task, run_task};
use crate::tune::TuneError;
use crate::tune::space::Space;
use crate::tune::texel::{LoadSpec, Part, Partial, TexelData};
use anyhow::{Context, bail};
use mpi::Threading;
use mpi::environment::Universe;
use mpi::point_to_point::{Destination, MatchedReceiveVec, Source};
use mpi::topology::{Communicator, SimpleCommunicator};
use serde::{Deserialize, Serialize};
use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{Receiver, Sender, channel};
use std::sync::{Mutex, OnceLock};
use std::time::Duration;

/// How long the receiver thread sleeps when nothing has arrived: from `POLL_MIN` right after a
/// message (a Texel pass answers quickly) doubling to `POLL_MAX` (short next to a game; an idle
/// rank then wakes 500 times a second, a negligible cost).
const POLL_MIN: Duration = Duration::from_micros(50);
const POLL_MAX: Duration = Duration::from_millis(2);

#[derive(Serialize, Deserialize)]
enum Msg {
    /// A worker rank starts serving with this many threads.
    Hello {
        threads: usize,
    },
    Task {
        index: usize,
        task: Task,
    },
    Result {
        index: usize,
        output: Output,
    },
    /// Texel: load your shards of this dataset.
    TexelLoad(LoadSpec),
    TexelLoaded(Result<(), String>),
    /// Texel: your shards' partial sums at θ (floats as bits).
    TexelEval {
        part: Part,
        theta: Vec<u64>,
        k: u64,
        grad: bool,
    },
    TexelPartials(Vec<Partial>),
    /// Texel, mini-batch mode: list your shards' training chunks.
    TexelChunks,
    TexelChunkList(Vec<(usize, usize)>),
    /// Texel, mini-batch mode: the partial sums of those of these chunks you hold, at θ.
    TexelBatch {
        chunks: Vec<usize>,
        theta: Vec<u64>,
        k: u64,
    },
    Stop,
}

enum Event {
    Remote(i32, Msg),
    Local(usize, Output),
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
    /// Rank 0: free task slots of each rank.
    free: Mutex<Vec<usize>>,
}

static STATE: OnceLock<State> = OnceLock::new();

fn state() -> &'static State {
    STATE.get().expect("MPI executor used before exec::init")
}

fn world() -> SimpleCommunicator {
    SimpleCommunicator::world()
}

fn send(to: i32, msg: &Msg) {
    let bytes = serde_json::to_vec(msg).expect("executor messages serialise");
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
                let msg: Msg = match serde_json::from_slice(&bytes) {
                    Ok(m) => m,
                    Err(e) => panic!("an unreadable executor message: {e}"),
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
            Ok(Event::Remote(r, Msg::Hello { threads })) => {
                if let Ok(mut t) = st.threads.lock() {
                    t[r as usize] = Some(threads);
                }
                if let Ok(mut f) = st.free.lock() {
                    f[r as usize] = threads;
                }
            }
            Ok(_) => panic!("an executor message before the workers' hello"),
            Err(_) => return,
        }
    }
}

pub fn slots(local: usize) -> usize {
    let st = state();
    if st.size <= 1 {
        return local;
    }
    let rx = st.rx.lock().unwrap_or_else(|p| p.into_inner());
    await_hellos(st, &rx);
    let remote: usize = st
        .threads
        .lock()
        .map(|t| t.iter().skip(1).map(|x| x.unwrap_or(0)).sum())
        .unwrap_or(0);
    local + remote
}

/// Rank 0: runs `tasks` over `threads` local threads and the worker ranks.
pub fn map(tasks: Vec<Task>, threads: usize, done: &mut dyn FnMut(usize, Output) -> bool) {
    let st = state();
    let rx = st.rx.lock().unwrap_or_else(|p| p.into_inner());
    if st.size > 1 {
        await_hellos(st, &rx);
    }
    let mut remaining = tasks.len();
    if remaining == 0 {
        return;
    }
    let queue: Mutex<VecDeque<(usize, Task)>> = Mutex::new(tasks.into_iter().enumerate().collect());
    let pop = || queue.lock().unwrap_or_else(|p| p.into_inner()).pop_front();
    std::thread::scope(|s| {
        for _ in 0..threads.max(1) {
            let tx = st.tx.clone();
            let pop = &pop;
            s.spawn(move || {
                while let Some((i, t)) = pop() {
                    if tx.send(Event::Local(i, run_task(t))).is_err() {
                        break;
                    }
                }
            });
        }
        let mut stopped = false;
        let mut free = st.free.lock().unwrap_or_else(|p| p.into_inner());
        loop {
            // Hand tasks to every rank with a free thread.
            for r in 1..st.size as usize {
                while free[r] > 0 {
                    let Some((index, task)) = pop() else { break };
                    send(r as i32, &Msg::Task { index, task });
                    free[r] -= 1;
                }
            }
            if remaining == 0 {
                break;
            }
            let (index, output) = match rx.recv() {
                Ok(Event::Local(i, o)) => (i, o),
                Ok(Event::Remote(r, Msg::Result { index, output })) => {
                    free[r as usize] += 1;
                    (index, output)
                }
                Ok(Event::Remote(r, Msg::Hello { threads })) => {
                    free[r as usize] = threads;
                    continue;
                }
                Ok(Event::Remote(_, _)) => continue,
                Err(_) => panic!("the executor's channel closed"),
            };
            remaining -= 1;
            if !stopped && !done(index, output) {
                stopped = true;
                let mut q = queue.lock().unwrap_or_else(|p| p.into_inner());
                remaining -= q.len();
                q.clear();
            }
        }
    });
}

/// A worker rank: announce the threads, then run every task that arrives on a pool of that
/// size and send its output back, until rank 0 says stop.
pub fn serve(threads: usize) -> anyhow::Result<()> {
    let st = state();
    let threads = threads.max(1);
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .thread_name(|i| format!("rank-worker-{i}"))
        .build()
        .context("building the worker pool")?;
    send(0, &Msg::Hello { threads });
    let rx = st.rx.lock().unwrap_or_else(|p| p.into_inner());
    let mut texel: Option<TexelData> = None;
    loop {
        match rx.recv() {
            Ok(Event::Remote(_, Msg::TexelLoad(spec))) => {
                let (rank, size) = (st.rank as usize, st.size as usize);
                let loaded = spec.space().and_then(|space| {
                    pool.install(|| TexelData::load(&spec, &space, &|s| s % size == rank))
                });
                let reply = match loaded {
                    Ok(d) => {
                        texel = Some(d);
                        Ok(())
                    }
                    Err(e) => Err(e.to_string()),
                };
                send(0, &Msg::TexelLoaded(reply));
            }
            Ok(Event::Remote(
                _,
                Msg::TexelEval {
                    part,
                    theta,
                    k,
                    grad,
                },
            )) => {
                let theta: Vec<f64> = theta.into_iter().map(f64::from_bits).collect();
                let parts = match &texel {
                    Some(d) => pool.install(|| d.partials(part, &theta, f64::from_bits(k), grad)),
                    None => Vec::new(),
                };
                send(0, &Msg::TexelPartials(parts));
            }
            Ok(Event::Remote(_, Msg::TexelChunks)) => {
                let list = texel.as_ref().map(TexelData::train_chunks);
                send(0, &Msg::TexelChunkList(list.unwrap_or_default()));
            }
            Ok(Event::Remote(_, Msg::TexelBatch { chunks, theta, k })) => {
                let theta: Vec<f64> = theta.into_iter().map(f64::from_bits).collect();
                let parts = match &texel {
                    Some(d) => {
                        pool.install(|| d.chunk_partials(&chunks, &theta, f64::from_bits(k)))
                    }
                    None => Vec::new(),
                };
                send(0, &Msg::TexelPartials(parts));
            }
            Ok(Event::Remote(_, Msg::Task { index, task })) => {
                let tx = st.tx.clone();
                pool.spawn(move || {
                    let _ = tx.send(Event::Local(index, run_task(task)));
                });
            }
            Ok(Event::Local(index, output)) => send(0, &Msg::Result { index, output }),
            Ok(Event::Remote(_, Msg::Stop)) | Err(_) => break,
            Ok(Event::Remote(_, _)) => {}
        }
    }
    drop(rx);
    shut_down(st);
    Ok(())
}

/// Rank 0 at the end of the command: stop the workers, then finalise MPI.
pub fn finish() {
    let Some(st) = STATE.get() else { return };
    if st.rank == 0 {
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

/// Rank 0: every rank loads its shards (shard `s` on rank `s mod ranks`) at once.
pub fn texel_load(spec: &LoadSpec, space: &Space) -> Result<TexelData, TuneError> {
    let st = state();
    let rx = st.rx.lock().unwrap_or_else(|p| p.into_inner());
    await_hellos(st, &rx);
    for r in 1..st.size {
        send(r, &Msg::TexelLoad(spec.clone()));
    }
    let size = st.size as usize;
    let mine = TexelData::load(spec, space, &|s| s % size == 0);
    let mut failure = None;
    for _ in 1..st.size {
        match rx.recv() {
            Ok(Event::Remote(r, Msg::TexelLoaded(Err(e)))) => {
                failure.get_or_insert(format!("rank {r}: {e}"));
            }
            Ok(Event::Remote(_, Msg::TexelLoaded(Ok(())))) => {}
            _ => panic!("an unexpected executor message while loading Texel data"),
        }
    }
    let mut data = mine?;
    if let Some(e) = failure {
        return Err(TuneError::Io(e));
    }
    data.distributed = true;
    Ok(data)
}

/// Rank 0: the partial sums of every rank's shards.
pub fn texel_partials(
    data: &TexelData,
    part: Part,
    theta: &[f64],
    k: f64,
    grad: bool,
) -> Vec<Partial> {
    let st = state();
    let rx = st.rx.lock().unwrap_or_else(|p| p.into_inner());
    let msg = Msg::TexelEval {
        part,
        theta: theta.iter().map(|x| x.to_bits()).collect(),
        k: k.to_bits(),
        grad,
    };
    for r in 1..st.size {
        send(r, &msg);
    }
    let mut all = data.partials(part, theta, k, grad);
    for _ in 1..st.size {
        match rx.recv() {
            Ok(Event::Remote(_, Msg::TexelPartials(p))) => all.extend(p),
            _ => panic!("an unexpected executor message during a Texel pass"),
        }
    }
    all
}

/// Rank 0: the training chunks of every rank's shards.
pub fn texel_train_chunks(data: &TexelData) -> Vec<(usize, usize)> {
    let st = state();
    let rx = st.rx.lock().unwrap_or_else(|p| p.into_inner());
    for r in 1..st.size {
        send(r, &Msg::TexelChunks);
    }
    let mut all = data.train_chunks();
    for _ in 1..st.size {
        match rx.recv() {
            Ok(Event::Remote(_, Msg::TexelChunkList(c))) => all.extend(c),
            _ => panic!("an unexpected executor message while listing Texel chunks"),
        }
    }
    all
}

/// Rank 0: the partial sums of a mini-batch's chunks, each from the rank that holds it.
pub fn texel_chunk_partials(
    data: &TexelData,
    chunks: &[usize],
    theta: &[f64],
    k: f64,
) -> Vec<Partial> {
    let st = state();
    let rx = st.rx.lock().unwrap_or_else(|p| p.into_inner());
    let msg = Msg::TexelBatch {
        chunks: chunks.to_vec(),
        theta: theta.iter().map(|x| x.to_bits()).collect(),
        k: k.to_bits(),
    };
    for r in 1..st.size {
        send(r, &msg);
    }
    let mut all = data.chunk_partials(chunks, theta, k);
    for _ in 1..st.size {
        match rx.recv() {
            Ok(Event::Remote(_, Msg::TexelPartials(p))) => all.extend(p),
            _ => panic!("an unexpected executor message during a Texel batch"),
        }
    }
    all
}
