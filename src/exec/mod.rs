//! The executor, the lowest layer of the toolkit: it runs jobs it does not understand, on this
//! machine's threads or spread over the ranks of an MPI job (cargo feature `mpi`), through one
//! path. The commands above it (matches, datagen, Texel, the network trainer) define their
//! work as [`Job`]s (a serialisable input whose `run` gives a serialisable output) or, for work
//! that keeps data on a rank between questions (Texel's and the trainer's shards), as a
//! [`Resident`] (`load` a rank's share once, then `answer` queries). The executor knows nothing
//! of games or positions: bullet's trainer defines its contracts the same way, and nevergrad4sf
//! and fishtest's workers split independent games over machines with only the coordinator
//! keeping state.
//!
//! Results are always placed by job index (and answers by rank), so what a command computes
//! does not depend on who computed which part.
//!
//! Under MPI, rank 0 runs the command as a single process would (run folder, checkpoints,
//! progress, log) and runs its share of the jobs on its own threads; every other rank parses the
//! same command line (for its thread count) and [`serve`]s until rank 0 says stop. A worker
//! finds the code of a job by its [`Job::KIND`] in the [`Registry`] the binary gives it.

pub mod local;
#[cfg(feature = "mpi")]
pub mod mpi;
mod registry;

pub use registry::Registry;

use serde::Serialize;
use serde::de::DeserializeOwned;
use std::any::{Any, TypeId};
use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};
use thiserror::Error;

/// A self-contained unit of work: everything needed to compute it travels in the value.
pub trait Job: Serialize + DeserializeOwned + Send + 'static {
    /// What the job produces.
    type Output: Serialize + DeserializeOwned + Send + 'static;
    /// State that the runs of this kind of job share within one process and keep between jobs
    /// (for games: the engines, kept running from one game to the next). The executor creates
    /// it on first use and drops it in [`finish`]; it never looks inside.
    type Context: Default + Send + Sync + 'static;
    /// The job's name on the wire (unique among the jobs of a [`Registry`]).
    const KIND: &'static str;
    fn run(self, context: &Self::Context) -> Self::Output;
}

/// Which part of a resident data set a rank holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Share {
    pub rank: usize,
    pub ranks: usize,
}

impl Share {
    /// The whole set, on one process.
    pub const WHOLE: Share = Share { rank: 0, ranks: 1 };

    /// Whether item `i` of a set dealt round-robin over the ranks belongs to this share.
    pub fn holds(&self, i: usize) -> bool {
        i % self.ranks == self.rank
    }
}

/// Work that keeps data on every rank: each rank loads its [`Share`] once, then answers the
/// queries rank 0 broadcasts (a Texel pass over the rank's shards, a gradient over the rank's
/// training positions). No rank holds the whole set.
pub trait Resident: Sized + Send + Sync + 'static {
    /// What to load (sent to every rank).
    type Spec: Serialize + DeserializeOwned + Send + Sync;
    type Query: Serialize + DeserializeOwned + Send + Sync;
    type Answer: Serialize + DeserializeOwned + Send;
    type Error: std::fmt::Display + Send;
    const KIND: &'static str;
    fn load(spec: &Self::Spec, share: Share) -> Result<Self, Self::Error>;
    fn answer(&self, query: &Self::Query) -> Self::Answer;
}

/// Why an executor call failed.
#[derive(Debug, Error)]
pub enum ExecError<E: std::fmt::Display> {
    /// This process's own share failed (the resident's own error).
    #[error("{0}")]
    Here(E),
    /// Another rank reported a failure.
    #[error("rank {rank}: {message}")]
    Rank { rank: usize, message: String },
}

/// Which back end runs the jobs (`--executor`); by default MPI when the process was started by
/// `mpirun`/`srun` in a job of more than one rank, else local.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum ExecutorKind {
    Local,
    Mpi,
}

/// What [`init`] decided for this process.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    /// Runs the command (rank 0 of an MPI job, or a single process).
    Coordinator,
    /// Serves rank 0's jobs until it says stop.
    Worker,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Backend {
    Local,
    #[cfg(feature = "mpi")]
    Mpi,
}

static BACKEND: OnceLock<Backend> = OnceLock::new();

/// The back end this process uses: chosen once by [`init`] (local when never initialised).
#[cfg_attr(not(feature = "mpi"), allow(dead_code))]
fn backend() -> Backend {
    *BACKEND.get().unwrap_or(&Backend::Local)
}

/// Whether jobs go to other processes too (false for the local back end and a one-rank job).
#[cfg_attr(not(feature = "mpi"), allow(dead_code))]
fn remote() -> bool {
    #[cfg(feature = "mpi")]
    if backend() == Backend::Mpi {
        return mpi::world_size() > 1;
    }
    false
}

/// The job size the launcher told this process, before MPI is initialised: `mpirun`
/// (OpenMPI: `OMPI_COMM_WORLD_SIZE`; MPICH/Hydra and `srun --mpi=pmi2`: `PMI_SIZE`).
fn launcher_size() -> Option<usize> {
    ["OMPI_COMM_WORLD_SIZE", "PMI_SIZE"]
        .iter()
        .find_map(|k| std::env::var(k).ok().and_then(|v| v.parse().ok()))
}

/// Whether this process was started by an MPI launcher as one of several ranks (`srun
/// --mpi=pmix` gives only `PMIX_RANK`: MPI is then initialised and the world size decides).
pub fn launched_by_mpi() -> bool {
    match launcher_size() {
        Some(n) => n > 1,
        None => std::env::var_os("PMIX_RANK").is_some(),
    }
}

/// Chooses the back end (`--executor`, else MPI when started by a launcher with more than one
/// rank) and initialises MPI when it is the one.
pub fn init(forced: Option<ExecutorKind>) -> anyhow::Result<Role> {
    let want_mpi = match forced {
        Some(ExecutorKind::Mpi) => true,
        Some(ExecutorKind::Local) => false,
        None => launched_by_mpi(),
    };
    if !want_mpi {
        let _ = BACKEND.set(Backend::Local);
        return Ok(Role::Coordinator);
    }
    #[cfg(feature = "mpi")]
    {
        let role = mpi::init()?;
        let _ = BACKEND.set(Backend::Mpi);
        Ok(role)
    }
    #[cfg(not(feature = "mpi"))]
    {
        if forced == Some(ExecutorKind::Mpi) {
            anyhow::bail!(
                "--executor mpi: this xqtune was built without MPI (cargo build --features mpi)"
            );
        }
        if launcher_size().is_none_or(|n| n <= 1) {
            let _ = BACKEND.set(Backend::Local);
            return Ok(Role::Coordinator);
        }
        // Started by mpirun but built without MPI: every rank would run the whole command.
        anyhow::bail!(
            "started by an MPI launcher, but this xqtune was built without MPI: rebuild with \
             `cargo build --release --features mpi`, or pass --executor local"
        )
    }
}

/// Serves jobs on a worker rank with `threads` threads until rank 0 says stop; `registry` maps
/// the jobs' and residents' kinds to their code.
pub fn serve(threads: usize, registry: Registry) -> anyhow::Result<()> {
    #[cfg(feature = "mpi")]
    if backend() == Backend::Mpi {
        return mpi::serve(threads, registry);
    }
    let _ = (threads, registry);
    Ok(())
}

/// Ends the command: the jobs' contexts are dropped (engines kept between games quit) and, on
/// rank 0 of an MPI job, the workers are told to stop and MPI is finalised.
pub fn finish() {
    drop_contexts();
    #[cfg(feature = "mpi")]
    if backend() == Backend::Mpi {
        mpi::finish();
    }
}

/// Job slots of the whole job (threads of every rank, this one's `local` included): commands
/// size their batches by it, as they size them by the thread count locally.
pub fn slots(local: usize) -> usize {
    #[cfg(feature = "mpi")]
    if backend() == Backend::Mpi {
        return mpi::slots(local);
    }
    local
}

/// Runs `jobs` on `threads` local threads and, under MPI, on the other ranks. `done` is called
/// on the calling thread with each job's index and output, in completion order; when it returns
/// false no further job starts (those already running finish and are dropped).
pub fn map<J: Job>(jobs: Vec<J>, threads: usize, done: &mut dyn FnMut(usize, J::Output) -> bool) {
    #[cfg(feature = "mpi")]
    if remote() {
        return mpi::map(jobs, threads, done);
    }
    local::map(jobs, threads, done)
}

thread_local! {
    static SLOT: std::cell::Cell<Option<usize>> = const { std::cell::Cell::new(None) };
}

/// Which of this process's job threads runs the caller, from 0 (a command that spreads
/// something per thread over the machine, such as engines pinned to cores, uses it): the
/// executor's own threads are numbered when they start, a rayon pool's threads by their
/// index, any other thread is 0.
pub fn slot() -> usize {
    SLOT.with(|s| s.get())
        .or_else(rayon::current_thread_index)
        .unwrap_or(0)
}

/// Numbers the calling thread (see [`slot`]).
pub(crate) fn set_slot(slot: usize) {
    SLOT.with(|s| s.set(Some(slot)));
}

/// [`map`] with the outputs in job order (every job runs).
pub fn map_all<J: Job>(jobs: Vec<J>, threads: usize) -> Vec<J::Output> {
    let n = jobs.len();
    let mut out: Vec<Option<J::Output>> = (0..n).map(|_| None).collect();
    map(jobs, threads, &mut |i, o| {
        out[i] = Some(o);
        true
    });
    out.into_iter()
        .enumerate()
        .map(|(i, o)| o.unwrap_or_else(|| panic!("job {i} of kind {} was lost", J::KIND)))
        .collect()
}

/// A resident data set as rank 0 holds it: its own share, and the other ranks' by proxy.
pub struct Distributed<R: Resident> {
    local: R,
    /// The id the workers know it by (none when nothing is remote).
    #[cfg_attr(not(feature = "mpi"), allow(dead_code))]
    id: Option<u64>,
    ranks: usize,
}

/// Loads `R` on every rank (each its [`Share`]) at once. The error names the rank that failed.
pub fn load<R: Resident>(spec: &R::Spec) -> Result<Distributed<R>, ExecError<R::Error>> {
    #[cfg(feature = "mpi")]
    if remote() {
        return mpi::load(spec);
    }
    R::load(spec, Share::WHOLE)
        .map(Distributed::whole)
        .map_err(ExecError::Here)
}

impl<R: Resident> Distributed<R> {
    /// A set this process holds whole (no other rank has a share): what [`load`] gives without
    /// MPI, built from a value already at hand.
    pub fn whole(local: R) -> Distributed<R> {
        Distributed {
            local,
            id: None,
            ranks: 1,
        }
    }

    /// This process's share.
    pub fn local(&self) -> &R {
        &self.local
    }

    /// The number of shares (ranks).
    pub fn ranks(&self) -> usize {
        self.ranks
    }

    /// Every rank's answer to `query`, by rank (rank 0's is this process's own).
    pub fn ask(&self, query: &R::Query) -> Vec<R::Answer> {
        #[cfg(feature = "mpi")]
        if let Some(id) = self.id {
            return mpi::ask(&self.local, id, query);
        }
        vec![self.local.answer(query)]
    }
}

impl<R: Resident> Drop for Distributed<R> {
    fn drop(&mut self) {
        #[cfg(feature = "mpi")]
        if let Some(id) = self.id {
            mpi::release(id);
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Contexts

type Contexts = Mutex<HashMap<TypeId, Arc<dyn Any + Send + Sync>>>;

fn contexts() -> &'static Contexts {
    static CONTEXTS: OnceLock<Contexts> = OnceLock::new();
    CONTEXTS.get_or_init(|| Mutex::new(HashMap::new()))
}

/// This process's context of job kind `J`, created on first use.
pub(crate) fn context<J: Job>() -> Arc<J::Context> {
    let mut map = contexts().lock().unwrap_or_else(|p| p.into_inner());
    let any = map
        .entry(TypeId::of::<J>())
        .or_insert_with(|| Arc::new(J::Context::default()) as Arc<dyn Any + Send + Sync>)
        .clone();
    drop(map);
    match any.downcast::<J::Context>() {
        Ok(c) => c,
        Err(_) => unreachable!("a context is stored under its job's type"),
    }
}

/// Drops every job context (outside the lock: dropping one may end engine processes).
fn drop_contexts() {
    let taken = std::mem::take(&mut *contexts().lock().unwrap_or_else(|p| p.into_inner()));
    drop(taken);
}

/// Encodes a value for the wire (bincode: exact floats, compact).
pub(crate) fn encode<T: Serialize + ?Sized>(value: &T) -> Vec<u8> {
    match bincode::serialize(value) {
        Ok(b) => b,
        Err(e) => panic!("an executor message does not serialise: {e}"),
    }
}

/// Decodes a value from the wire, naming what it expected when the bytes do not fit.
pub(crate) fn decode<T: DeserializeOwned>(bytes: &[u8], what: &str) -> Result<T, String> {
    bincode::deserialize(bytes).map_err(|e| format!("an unreadable {what}: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Deserialize;

    #[cfg(not(feature = "mpi"))]
    #[test]
    fn mpi_without_the_feature_is_an_error_naming_the_flag() {
        let e = init(Some(ExecutorKind::Mpi)).unwrap_err().to_string();
        assert!(e.contains("--executor mpi"), "{e}");
        assert!(e.contains("--features mpi"), "{e}");
    }

    #[derive(Serialize, Deserialize)]
    struct Square(u64);

    #[derive(Default)]
    struct Runs(std::sync::atomic::AtomicUsize);

    impl Job for Square {
        type Output = u64;
        type Context = Runs;
        const KIND: &'static str = "test-square";
        fn run(self, runs: &Runs) -> u64 {
            runs.0.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            self.0 * self.0
        }
    }

    #[test]
    fn outputs_are_placed_by_index_at_any_thread_count() {
        for threads in [1, 3, 8] {
            let out = map_all((0..50).map(Square).collect(), threads);
            assert_eq!(out, (0..50).map(|x| x * x).collect::<Vec<u64>>());
        }
        assert!(
            context::<Square>()
                .0
                .load(std::sync::atomic::Ordering::Relaxed)
                >= 150
        );
    }

    #[test]
    fn a_stop_starts_no_further_job() {
        let mut seen = 0;
        map((0..1000).map(Square).collect(), 2, &mut |_, _| {
            seen += 1;
            seen < 10
        });
        // the jobs already running when `done` said stop finish unseen
        assert_eq!(seen, 10);
    }

    struct Numbers(Vec<u64>);

    impl Resident for Numbers {
        type Spec = u64;
        type Query = u64;
        type Answer = u64;
        type Error = String;
        const KIND: &'static str = "test-numbers";
        fn load(n: &u64, share: Share) -> Result<Self, String> {
            if *n == 0 {
                return Err("empty".into());
            }
            Ok(Numbers(
                (0..*n).filter(|&i| share.holds(i as usize)).collect(),
            ))
        }
        fn answer(&self, q: &u64) -> u64 {
            self.0.iter().map(|x| x * q).sum()
        }
    }

    #[test]
    fn a_resident_answers_from_its_share() {
        let d = load::<Numbers>(&10).unwrap();
        assert_eq!(d.ranks(), 1);
        assert_eq!(d.ask(&2), vec![90]);
        assert!(matches!(load::<Numbers>(&0), Err(ExecError::Here(e)) if e == "empty"));
    }

    #[test]
    fn the_wire_round_trips_floats_exactly() {
        let x = vec![0.1f64, -0.0, f64::MIN_POSITIVE, 1e300, f64::NAN];
        let back: Vec<f64> = decode(&encode(&x), "test").unwrap();
        assert_eq!(
            x.iter().map(|v| v.to_bits()).collect::<Vec<_>>(),
            back.iter().map(|v| v.to_bits()).collect::<Vec<_>>()
        );
        assert!(
            decode::<Vec<f64>>(&[1, 2], "list")
                .unwrap_err()
                .contains("list")
        );
    }
}
