//! One executor, two back ends: the commands hand self-contained work units ([`Task`]: a game
//! of a match, a datagen game, a Texel pass over a chunk of positions) to the executor, which
//! runs them on this machine's threads ([`local`], rayon, the default) or spreads them over the
//! ranks of an MPI job (`mpi`, with the cargo feature `mpi`). Results are always placed by task
//! index, so what a command computes does not depend on who computed which part.
//!
//! Under MPI, rank 0 runs the command as a single process would (run folder, checkpoints,
//! progress, log) and plays its share with its own threads; every other rank parses the same
//! command line (for its thread count) and serves tasks until rank 0 says stop
//! (nevergrad4sf and fishtest's workers split the work the same way: the games are
//! independent, only the coordinator keeps state).

pub mod local;
#[cfg(feature = "mpi")]
pub mod mpi;

use crate::core::{CaptureReveal, GameResult, Move};
use crate::eval::EvalParams;
use crate::play::game::{GameRecord, GameSettings, GameStart, Termination, play_game};
use crate::play::jieqi::deal_seed;
use crate::play::openings::{Opening, default_openings};
use crate::play::runner::{MatchProgress, MatchReport, opening_order, tally};
use crate::play::stats::MatchResult;
use crate::play::{Engine, EngineConfig, ExternalConfig, MatchConfig, MatchError, Protocol};
use crate::search::{ChanceMode, EngineOptions, SearchParams};
use crate::tune::TuneError;
use crate::tune::space::Space;
use crate::tune::texel::{LoadSpec, Part, Partial, TexelData};
use serde::{Deserialize, Serialize};
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Instant;

/// Which back end runs the tasks (`--executor`); by default MPI when the process was started
/// by `mpirun`/`srun` in a job of more than one rank, else local.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum ExecutorKind {
    Local,
    Mpi,
}

/// A self-contained unit of work: everything a rank needs to compute it travels with it.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub enum Task {
    /// One game of a match (the runner's game `index`, its start already chosen).
    Game(Box<GameTask>),
    /// One self-play game of `xqtune datagen`.
    Datagen(Box<DatagenTask>),
}

/// What a [`Task`] produced.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub enum Output {
    Game(Box<WireGame>),
    /// The labelled lines of a datagen game.
    Lines(Vec<String>),
    /// A task that could not run (an engine that cannot be rebuilt): a bug or a broken rank.
    Failed(String),
}

/// Runs one task on the calling thread (on any rank).
pub fn run_task(task: Task) -> Output {
    match task {
        Task::Game(t) => match t.play() {
            Ok(g) => Output::Game(Box::new(WireGame::from(&g))),
            Err(e) => Output::Failed(e),
        },
        Task::Datagen(t) => match EvalParams::from_json_str(&t.eval) {
            Ok(eval) => Output::Lines(crate::tune::datagen::play_game(
                t.index,
                &t.args,
                &Arc::new(eval),
            )),
            Err(e) => Output::Failed(format!("datagen parameters: {e}")),
        },
    }
}

// ---------------------------------------------------------------------------------------------
// The back end of this process

/// The executor this process uses: chosen once by [`init`] (local when never initialised).
#[cfg_attr(not(feature = "mpi"), allow(dead_code))]
fn backend() -> Backend {
    *BACKEND.get().unwrap_or(&Backend::Local)
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Backend {
    Local,
    #[cfg(feature = "mpi")]
    Mpi,
}

static BACKEND: std::sync::OnceLock<Backend> = std::sync::OnceLock::new();

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

/// What [`init`] decided for this process.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    /// Runs the command (rank 0 of an MPI job, or a single process).
    Coordinator,
    /// Serves tasks to rank 0 until it says stop.
    Worker,
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

/// Serves tasks on a worker rank with `threads` threads until rank 0 says stop.
pub fn serve(threads: usize) -> anyhow::Result<()> {
    #[cfg(feature = "mpi")]
    if backend() == Backend::Mpi {
        return mpi::serve(threads);
    }
    let _ = threads;
    Ok(())
}

/// Ends the job on rank 0: the workers are told to stop and MPI is finalised. Nothing to do
/// for the local back end.
pub fn finish() {
    #[cfg(feature = "mpi")]
    if backend() == Backend::Mpi {
        mpi::finish();
    }
}

/// Whether tasks are spread over several processes (the commands then build tasks instead of
/// running their local code paths, which stay as they were before the executor existed).
pub fn distributed() -> bool {
    #[cfg(feature = "mpi")]
    if backend() == Backend::Mpi {
        return mpi::world_size() > 1;
    }
    false
}

/// Task slots of the whole job (threads of every rank, this one's `local` included): the
/// commands size their batches by it, as they size them by the thread count locally.
pub fn slots(local: usize) -> usize {
    #[cfg(feature = "mpi")]
    if backend() == Backend::Mpi {
        return mpi::slots(local);
    }
    local
}

/// Runs `tasks` on `threads` local threads and, under MPI, on the other ranks. `done` is called
/// on the calling thread with each task's index and output, in completion order; when it
/// returns false no further task starts (those already running finish and are dropped).
pub fn map(tasks: Vec<Task>, threads: usize, done: &mut dyn FnMut(usize, Output) -> bool) {
    #[cfg(feature = "mpi")]
    if backend() == Backend::Mpi {
        return mpi::map(tasks, threads, done);
    }
    local::map(tasks, threads, done)
}

/// [`map`] with the outputs in task order (all tasks run).
pub fn map_all(tasks: Vec<Task>, threads: usize) -> Vec<Output> {
    let n = tasks.len();
    let mut out: Vec<Option<Output>> = (0..n).map(|_| None).collect();
    map(tasks, threads, &mut |i, o| {
        out[i] = Some(o);
        true
    });
    out.into_iter()
        .map(|o| o.unwrap_or_else(|| Output::Failed("task lost".into())))
        .collect()
}

// ---------------------------------------------------------------------------------------------
// Games

/// One game of a match, self-contained.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct GameTask {
    pub index: usize,
    pub a: WireEngine,
    pub b: WireEngine,
    pub a_is_red: bool,
    pub start: WireStart,
    pub settings: GameSettings,
    pub hash_mb: usize,
}

impl GameTask {
    /// Game `g` of the match `cfg` between `a` and `b`, exactly as the runner would start it.
    pub fn of_match(
        a: &WireEngine,
        b: &WireEngine,
        cfg: &MatchConfig,
        openings: &[Opening],
        order: &[usize],
        g: usize,
    ) -> GameTask {
        let pair = g / 2;
        let start = if cfg.variant == crate::core::Variant::Jieqi {
            WireStart::Deal {
                seed: deal_seed(cfg.seed, pair),
                rule: reveal_code(cfg.capture_reveal),
            }
        } else {
            let o = &openings[order[pair % order.len()]];
            WireStart::Opening {
                fen: o.fen.clone(),
                moves: o.moves.iter().map(|m| m.0).collect(),
                line: o.line,
            }
        };
        GameTask {
            index: g,
            a: a.clone(),
            b: b.clone(),
            a_is_red: g.is_multiple_of(2),
            start,
            settings: cfg.game_settings(),
            hash_mb: cfg.hash_mb,
        }
    }

    /// Plays the game with this thread's players for these engines, kept from its earlier
    /// games as the runner keeps them for a whole match (each game starts with `new_game`:
    /// the same moves as fresh players; an external engine is not restarted every game).
    pub fn play(&self) -> Result<GameRecord, String> {
        let mut a = take_player(&self.a, self.hash_mb)?;
        let mut b = take_player(&self.b, self.hash_mb)?;
        let game = self.play_with(&mut a, &mut b);
        put_player(a);
        put_player(b);
        Ok(game)
    }

    fn play_with(&self, a: &mut CachedPlayer, b: &mut CachedPlayer) -> GameRecord {
        let (seat_a, seat_b) = (a.engine.seat(), b.engine.seat());
        let (pa, pb) = (&mut *a.player, &mut *b.player);
        let opening;
        let start = match &self.start {
            WireStart::Opening { fen, moves, line } => {
                opening = Opening {
                    fen: fen.clone(),
                    moves: moves.iter().map(|&m| Move(m)).collect(),
                    line: *line,
                };
                GameStart::Opening(&opening)
            }
            WireStart::Deal { seed, rule } => GameStart::Deal {
                seed: *seed,
                rule: reveal_of(*rule),
            },
        };
        play_game(
            self.index,
            [pa, pb],
            [&seat_a, &seat_b],
            self.a_is_red,
            start,
            &self.settings,
        )
    }
}

/// A player kept by a thread between games, with its engine and what identifies it.
struct CachedPlayer {
    key: String,
    engine: Engine,
    player: Box<dyn crate::play::game::Player>,
}

/// Players a thread keeps: the two of the current match, a few more for GA's populations.
const KEPT_PLAYERS: usize = 4;

thread_local! {
    static PLAYERS: std::cell::RefCell<Vec<CachedPlayer>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// This thread's player for `engine`, or a new one.
fn take_player(engine: &WireEngine, hash_mb: usize) -> Result<CachedPlayer, String> {
    let key = serde_json::to_string(&(engine, hash_mb)).map_err(|e| e.to_string())?;
    let kept = PLAYERS.with(|p| {
        let mut p = p.borrow_mut();
        let i = p.iter().position(|c| c.key == key)?;
        Some(p.remove(i))
    });
    if let Some(c) = kept {
        return Ok(c);
    }
    let e = engine.engine()?;
    Ok(CachedPlayer {
        key,
        player: e.player(hash_mb),
        engine: e,
    })
}

/// Keeps a player for the thread's next game (the least recently used beyond
/// [`KEPT_PLAYERS`] is dropped: an external engine then quits).
fn put_player(c: CachedPlayer) {
    PLAYERS.with(|p| {
        let mut p = p.borrow_mut();
        p.insert(0, c);
        p.truncate(KEPT_PLAYERS);
    });
}

/// How a game starts: an opening of the suite or a Jieqi deal.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub enum WireStart {
    Opening {
        fen: String,
        moves: Vec<u32>,
        line: usize,
    },
    Deal {
        seed: u64,
        rule: u8,
    },
}

fn reveal_code(r: CaptureReveal) -> u8 {
    match r {
        CaptureReveal::Capturer => 0,
        CaptureReveal::Nobody => 1,
        CaptureReveal::Both => 2,
    }
}

fn reveal_of(c: u8) -> CaptureReveal {
    match c {
        1 => CaptureReveal::Nobody,
        2 => CaptureReveal::Both,
        _ => CaptureReveal::Capturer,
    }
}

/// An engine as it travels: parameters in their file format (exact round trip).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub enum WireEngine {
    Internal {
        name: String,
        eval: String,
        jieqi: String,
        search: String,
        static_average: bool,
        jieqi_eval: bool,
    },
    External {
        name: String,
        program: String,
        args: Vec<String>,
        ucci: bool,
        options: Vec<(String, String)>,
        timeout_ms: u64,
    },
}

impl From<&Engine> for WireEngine {
    fn from(e: &Engine) -> WireEngine {
        match e {
            Engine::Internal(c) => WireEngine::Internal {
                name: c.name.clone(),
                eval: c.eval.to_json_string(),
                jieqi: c.eval.jieqi_to_json_string(),
                search: c.search.to_json_string(),
                static_average: c.options.chance_mode == ChanceMode::StaticAverage,
                jieqi_eval: c.options.jieqi_eval,
            },
            Engine::External(c) => WireEngine::External {
                name: c.name.clone(),
                program: c.program.clone(),
                args: c.args.clone(),
                ucci: c.protocol == Protocol::Ucci,
                options: c.options.clone(),
                timeout_ms: c.timeout_ms,
            },
        }
    }
}

impl WireEngine {
    pub fn engine(&self) -> Result<Engine, String> {
        Ok(match self {
            WireEngine::Internal {
                name,
                eval,
                jieqi,
                search,
                static_average,
                jieqi_eval,
            } => {
                let mut e = EvalParams::from_json_str(eval).map_err(|e| e.to_string())?;
                e.set_jieqi_json_str(jieqi).map_err(|e| e.to_string())?;
                Engine::Internal(EngineConfig {
                    name: name.clone(),
                    eval: Arc::new(e),
                    search: SearchParams::from_json(search).map_err(|e| e.to_string())?,
                    options: EngineOptions {
                        chance_mode: if *static_average {
                            ChanceMode::StaticAverage
                        } else {
                            ChanceMode::Search
                        },
                        jieqi_eval: *jieqi_eval,
                    },
                })
            }
            WireEngine::External {
                name,
                program,
                args,
                ucci,
                options,
                timeout_ms,
            } => Engine::External(ExternalConfig {
                name: name.clone(),
                program: program.clone(),
                args: args.clone(),
                protocol: if *ucci { Protocol::Ucci } else { Protocol::Uci },
                options: options.clone(),
                timeout_ms: *timeout_ms,
            }),
        })
    }
}

/// A [`GameRecord`] as it travels (moves as their numbers, the result as its PGN text).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct WireGame {
    index: usize,
    red: String,
    black: String,
    red_hash: Option<String>,
    black_hash: Option<String>,
    a_is_red: bool,
    opening_fen: String,
    opening_moves: Vec<u32>,
    start_fen: String,
    moves: Vec<u32>,
    scores: Vec<Option<i32>>,
    result: u8,
    termination: Termination,
    duration_ms: u64,
    deal_seed: Option<u64>,
}

impl From<&GameRecord> for WireGame {
    fn from(g: &GameRecord) -> WireGame {
        WireGame {
            index: g.index,
            red: g.red.clone(),
            black: g.black.clone(),
            red_hash: g.red_hash.clone(),
            black_hash: g.black_hash.clone(),
            a_is_red: g.a_is_red,
            opening_fen: g.opening_fen.clone(),
            opening_moves: g.opening_moves.iter().map(|m| m.0).collect(),
            start_fen: g.start_fen.clone(),
            moves: g.moves.iter().map(|m| m.0).collect(),
            scores: g.scores.clone(),
            result: match g.result {
                GameResult::RedWins => 0,
                GameResult::BlackWins => 1,
                GameResult::Draw => 2,
            },
            termination: g.termination.clone(),
            duration_ms: g.duration_ms,
            deal_seed: g.deal_seed,
        }
    }
}

impl From<WireGame> for GameRecord {
    fn from(g: WireGame) -> GameRecord {
        GameRecord {
            index: g.index,
            red: g.red,
            black: g.black,
            red_hash: g.red_hash,
            black_hash: g.black_hash,
            a_is_red: g.a_is_red,
            opening_fen: g.opening_fen,
            opening_moves: g.opening_moves.into_iter().map(Move).collect(),
            start_fen: g.start_fen,
            moves: g.moves.into_iter().map(Move).collect(),
            scores: g.scores,
            result: match g.result {
                0 => GameResult::RedWins,
                1 => GameResult::BlackWins,
                _ => GameResult::Draw,
            },
            termination: g.termination,
            duration_ms: g.duration_ms,
            deal_seed: g.deal_seed,
        }
    }
}

fn game_of(o: Output) -> GameRecord {
    match o {
        Output::Game(g) => GameRecord::from(*g),
        Output::Failed(e) => panic!("a game task failed: {e}"),
        Output::Lines(_) => panic!("a game task answered with datagen lines"),
    }
}

/// Many small matches at once (the tuners' game pairs, GA's fitness jobs): each
/// `(a, b, cfg)` gives its games and their tally, in job order. Locally each job runs through
/// the match runner on the current rayon pool, as before the executor existed; distributed,
/// every game of every job is a task.
pub fn play_matches(
    jobs: &[(&Engine, &Engine, MatchConfig)],
    threads: usize,
) -> Vec<(MatchResult, Vec<GameRecord>)> {
    if !distributed() {
        return local::play_matches(jobs);
    }
    // Each distinct engine is put in its file format once.
    let mut wire: Vec<(*const Engine, WireEngine)> = Vec::new();
    let mut wire_of = |e: &Engine| -> WireEngine {
        let key = e as *const Engine;
        if let Some((_, w)) = wire.iter().find(|(k, _)| *k == key) {
            return w.clone();
        }
        let w = WireEngine::from(e);
        wire.push((key, w.clone()));
        w
    };
    let suite = default_openings();
    let mut tasks = Vec::new();
    let mut owner = Vec::new();
    for (j, (a, b, cfg)) in jobs.iter().enumerate() {
        let (wa, wb) = (wire_of(a), wire_of(b));
        let openings: Vec<Opening> = match &cfg.openings {
            Some(o) => o.to_vec(),
            None => suite.clone(),
        };
        let order = opening_order(openings.len(), cfg.seed);
        for g in 0..cfg.games {
            tasks.push(Task::Game(Box::new(GameTask::of_match(
                &wa, &wb, cfg, &openings, &order, g,
            ))));
            owner.push(j);
        }
    }
    let mut games: Vec<Vec<GameRecord>> = jobs.iter().map(|_| Vec::new()).collect();
    for (i, o) in map_all(tasks, threads).into_iter().enumerate() {
        games[owner[i]].push(game_of(o));
    }
    games.into_iter().map(|g| (tally(&g), g)).collect()
}

/// `xqtune match`'s runner: [`crate::play::run_match_with_progress`] locally; distributed,
/// the same contract (games by index, the SPRT on the prefix of finished pairs, `progress`
/// after every game) with each game a task.
pub fn run_match(
    a: &Engine,
    b: &Engine,
    cfg: &MatchConfig,
    progress: &(dyn Fn(&MatchProgress) + Sync),
) -> Result<MatchReport, MatchError> {
    if !distributed() {
        return crate::play::run_match_with_progress(a, b, cfg, progress);
    }
    let openings = crate::play::runner::match_openings(cfg)?;
    let order = opening_order(openings.len(), cfg.seed);
    let total = cfg.games;
    let threads = match cfg.concurrency {
        0 => std::thread::available_parallelism().map_or(1, |n| n.get()),
        n => n,
    };
    let started = Instant::now();
    let (wa, wb) = (WireEngine::from(a), WireEngine::from(b));
    let tasks: Vec<Task> = (0..total)
        .map(|g| {
            Task::Game(Box::new(GameTask::of_match(
                &wa, &wb, cfg, &openings, &order, g,
            )))
        })
        .collect();
    let mut book = crate::play::runner::Book::new(total);
    map(tasks, threads, &mut |g, o| {
        let decided = book.add(g, game_of(o), cfg, progress);
        let user_stop = cfg.stop.as_ref().is_some_and(|s| s.load(Ordering::Relaxed));
        !decided && !user_stop
    });
    Ok(book.report(cfg, started))
}

// ---------------------------------------------------------------------------------------------
// Datagen

/// One game of `xqtune datagen`.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct DatagenTask {
    pub index: u64,
    pub args: crate::tune::datagen::DatagenArgs,
    /// The players' parameters in their file format.
    pub eval: String,
}

/// The labelled lines of datagen games `games`, in game order.
pub fn datagen_games(
    games: std::ops::Range<u64>,
    args: &crate::tune::datagen::DatagenArgs,
    eval: &EvalParams,
    threads: usize,
) -> Vec<Vec<String>> {
    let text = eval.to_json_string();
    let tasks = games
        .map(|index| {
            Task::Datagen(Box::new(DatagenTask {
                index,
                args: args.clone(),
                eval: text.clone(),
            }))
        })
        .collect();
    map_all(tasks, threads)
        .into_iter()
        .map(|o| match o {
            Output::Lines(l) => l,
            Output::Failed(e) => panic!("a datagen task failed: {e}"),
            Output::Game(_) => panic!("a datagen task answered with a game"),
        })
        .collect()
}

// ---------------------------------------------------------------------------------------------
// Texel on sharded data

/// Loads the dataset for Texel: locally every shard; distributed, every rank its own shards
/// (shard `s` on rank `s mod ranks`), and this returns rank 0's part.
pub fn texel_load(spec: &LoadSpec, space: &Space) -> Result<TexelData, TuneError> {
    #[cfg(feature = "mpi")]
    if distributed() {
        return mpi::texel_load(spec, space);
    }
    TexelData::load(spec, space, &|_| true)
}

/// The shard partial sums of every rank (in no particular order: the caller sorts them).
pub fn texel_partials(
    data: &TexelData,
    part: Part,
    theta: &[f64],
    k: f64,
    grad: bool,
) -> Vec<Partial> {
    #[cfg(feature = "mpi")]
    if distributed() {
        return mpi::texel_partials(data, part, theta, k, grad);
    }
    data.partials(part, theta, k, grad)
}

/// The training chunks (id, positions) of every rank's shards (in no particular order).
pub fn texel_train_chunks(data: &TexelData) -> Vec<(usize, usize)> {
    #[cfg(feature = "mpi")]
    if distributed() {
        return mpi::texel_train_chunks(data);
    }
    data.train_chunks()
}

/// The chunk partial sums of a mini-batch, each from the rank that holds the chunk (in no
/// particular order: the caller sorts them).
pub fn texel_chunk_partials(
    data: &TexelData,
    chunks: &[usize],
    theta: &[f64],
    k: f64,
) -> Vec<Partial> {
    #[cfg(feature = "mpi")]
    if distributed() {
        return mpi::texel_chunk_partials(data, chunks, theta, k);
    }
    data.chunk_partials(chunks, theta, k)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg(not(feature = "mpi"))]
    #[test]
    fn mpi_without_the_feature_is_an_error_naming_the_flag() {
        let e = init(Some(ExecutorKind::Mpi)).unwrap_err().to_string();
        assert!(e.contains("--executor mpi"), "{e}");
        assert!(e.contains("--features mpi"), "{e}");
    }

    #[test]
    fn a_game_record_survives_the_wire() {
        let a = Engine::Internal(EngineConfig {
            name: "a".into(),
            eval: Arc::new(EvalParams::default()),
            search: SearchParams::default(),
            options: EngineOptions::default(),
        });
        let wa = WireEngine::from(&a);
        let back = wa.engine().unwrap();
        assert_eq!(back.params_hash(), a.params_hash());
        let cfg = MatchConfig {
            nodes: Some(300),
            ..MatchConfig::default()
        };
        let suite = default_openings();
        let order = opening_order(suite.len(), cfg.seed);
        let task = GameTask::of_match(&wa, &wa, &cfg, &suite, &order, 1);
        let text = serde_json::to_string(&Task::Game(Box::new(task))).unwrap();
        let Task::Game(task) = serde_json::from_str(&text).unwrap() else {
            panic!("not a game task");
        };
        let game = task.play().unwrap();
        let wire = serde_json::to_string(&WireGame::from(&game)).unwrap();
        let back = GameRecord::from(serde_json::from_str::<WireGame>(&wire).unwrap());
        assert_eq!(
            serde_json::to_string(&back).unwrap(),
            serde_json::to_string(&game).unwrap()
        );
        // the same game as the runner plays
        let report = crate::play::run_match_with_progress(&a, &a, &cfg, &|_| {}).unwrap();
        assert_eq!(report.games[1].moves, game.moves);
    }
}
