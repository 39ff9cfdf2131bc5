//! `xqtune label`: the positions of a dataset scored by an engine's search, for the Texel
//! tuner's `--lambda` (Stockfish's data tools rescore positions the same way).
//!
//! Every Xiangqi position of the input (any format the tuner reads: `xqtune import`'s `FEN | result |
//! id`, datagen's `FEN | score | wdl`, a packed `.xqp` file) is sent to the engine alone, after
//! `ucinewgame`, with `go nodes N` or `go depth D`; the score of its last info line that is not
//! a bound becomes the position's score, red's view, centipawns, mates clamped to ±3000 as
//! datagen writes them. The line's result is kept. So a classical evaluation can be fitted to
//! another engine's judgment instead of our own self-play's: the labels of an engine stronger
//! than ours carry what its evaluation and search see and ours do not.
//!
//! Kept: positions not in check whose best move, as the engine found it, is not a capture (the
//! static score the tuner fits would otherwise be a position halfway through an exchange); the
//! others are counted and dropped unless `--keep-noisy`. A position the engine has no move for
//! is dropped too.
//!
//! Each position starts from a cleared engine (`ucinewgame`), so with a node or depth limit and
//! one engine thread its score depends on nothing but the position: the same file at any
//! concurrency and on any number of MPI ranks. The positions go out in chunks as executor jobs,
//! each worker keeping its engine process alive from chunk to chunk (the engine pool); the
//! labelled lines are appended to `<out>.partial` in input order and every two seconds
//! `<out>.progress.json` records how far they got (atomic rename), so a killed run resumes where
//! it stopped; the output appears, compressed when it ends in `.gz`, only when complete.

use super::TuneError;
use super::datagen::SCORE_CLAMP;
use super::dataset::{self, Labelled};
use super::files::{Growing, Partial, Piece, Synced, read_json};
use super::stop::{install_ctrlc, stop_requested};
use crate::core::{Position, Variant};
use crate::play::external::ExternalConfig;
use crate::play::game::{GoRequest, MoveLimits, PlayerError};
use crate::play::pool::EnginePool;
use crate::play::runner::Engine;
use crate::tune::engine::EngineCommand;
use crate::uci::Protocol;
use serde::{Deserialize, Serialize};
use std::path::PathBuf;

/// Positions per executor job.
const CHUNK: usize = 256;

#[derive(clap::Args, Debug, Clone, PartialEq)]
pub struct LabelArgs {
    /// Positions to score (any format `tune texel --data` reads; each needs its game's result).
    pub data: PathBuf,
    /// The engine that scores them (command line, quoted as a shell would).
    #[arg(long)]
    pub engine: String,
    /// The engine's protocol.
    #[arg(long, value_enum, default_value = "uci")]
    pub proto: Protocol,
    /// An option for the engine (Name=Value; repeatable), e.g. `Threads=1` and `Hash=16`.
    #[arg(long = "engine-option")]
    pub engine_option: Vec<String>,
    /// Nodes searched per position.
    #[arg(long, default_value_t = 10_000, value_parser = clap::value_parser!(u64).range(1..))]
    pub nodes: u64,
    /// Fixed depth per position instead of nodes.
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..))]
    pub depth: Option<u32>,
    /// Also keep positions in check and those whose best move is a capture.
    #[arg(long)]
    pub keep_noisy: bool,
    /// Output file, `FEN | score | wdl` (`.gz` compresses).
    #[arg(long, short)]
    pub out: PathBuf,
    /// Replace an existing output file.
    #[arg(long)]
    pub force: bool,
    /// Worker threads, one engine process each (default: all cores).
    #[arg(long)]
    pub concurrency: Option<usize>,
}

/// What a labelling makes, as its progress file records it (a resumed run must have the same).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
struct LabelSettings {
    data: PathBuf,
    /// Rows of the input, so a changed input is not resumed into.
    rows: usize,
    engine: EngineCommand,
    nodes: u64,
    depth: Option<u32>,
    keep_noisy: bool,
    out: PathBuf,
}

/// What `<out>.progress.json` vouches for: the chunks done, and the bytes and positions of the
/// partial file they wrote.
#[derive(Debug, Serialize, Deserialize)]
struct Progress {
    settings: LabelSettings,
    next_chunk: usize,
    bytes: u64,
    positions: u64,
    dropped: u64,
}

/// One chunk of positions as an executor job.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct LabelJob {
    /// 1-based input line of each position (for error messages) and its FEN.
    pub rows: Vec<(usize, String)>,
    pub engine: ExternalConfig,
    pub limits: MoveLimits,
    pub keep_noisy: bool,
}

/// A scored chunk: red's score of each kept position (`None`: dropped), or what went wrong.
pub type LabelOutput = Result<Vec<Option<i32>>, String>;

impl crate::exec::Job for LabelJob {
    type Output = LabelOutput;
    type Context = EnginePool;
    const KIND: &'static str = "label";
    fn run(self, pool: &EnginePool) -> LabelOutput {
        let engine = Engine::External(self.engine.clone());
        let mut player = pool.lease(&engine, 0, None);
        self.rows
            .iter()
            .map(|(line, fen)| {
                let pos = dataset::parse_fen(fen).map_err(|e| format!("line {line}: {e}"))?;
                // one retry with a fresh process: a crash of the engine on one position is
                // reported with that position when it happens twice
                let mut reply = score_one(&mut *player, fen, &pos, &self.limits);
                if reply.is_err() {
                    player.reset();
                    reply = score_one(&mut *player, fen, &pos, &self.limits);
                }
                let (best, score) = reply.map_err(|e| {
                    format!(
                        "line {line}: {} on `{fen}`: {e}",
                        self.engine.command_line()
                    )
                })?;
                keep(&pos, best.as_deref(), self.keep_noisy, fen)
                    .map_err(|e| format!("line {line}: {e}"))
                    .map(|k| k.then(|| red_score(&pos, score)))
            })
            .collect()
    }
}

/// The engine's best move (`None`: it had none) and score (side to move's view) for `pos`.
fn score_one(
    player: &mut dyn crate::play::game::Player,
    fen: &str,
    pos: &Position,
    limits: &MoveLimits,
) -> Result<(Option<String>, i32), PlayerError> {
    player.new_game()?;
    let reply = player.go(&GoRequest {
        start_fen: fen,
        moves: &[],
        pos,
        limits,
        clocks: None,
    })?;
    let score = reply
        .score
        .ok_or_else(|| PlayerError::Crash("the engine gave no score".into()))?;
    let best = (!reply.is_no_move()).then_some(reply.mv);
    Ok((best, score))
}

/// Whether the position is kept: a legal best move that is, unless `keep_noisy`, not a capture,
/// from a position not in check. An illegal best move is the engine's error.
fn keep(pos: &Position, best: Option<&str>, keep_noisy: bool, fen: &str) -> Result<bool, String> {
    let Some(text) = best else { return Ok(false) };
    let m = pos
        .parse_move(text)
        .map_err(|e| format!("the engine's best move `{text}` in `{fen}`: {e}"))?;
    Ok(keep_noisy || !(pos.in_check() || pos.is_capture(m)))
}

/// A side-to-move score as red's, mates clamped as datagen clamps them.
fn red_score(pos: &Position, score: i32) -> i32 {
    score.clamp(-SCORE_CLAMP, SCORE_CLAMP) * pos.side_to_move().sign()
}

/// The result as the third field of `FEN | score | wdl`.
fn wdl(result: f32) -> String {
    format!("{result:.1}")
}

/// Runs a labelling; returns the number of positions written.
pub fn run_label(args: &LabelArgs) -> Result<u64, TuneError> {
    install_ctrlc();
    let rows = dataset::read_labelled(&args.data).map_err(|e| TuneError::Io(e.to_string()))?;
    // every position is checked before an engine starts: a bad line is the input's error
    for r in &rows {
        let at = || format!("{}: line {}", args.data.display(), r.line);
        let pos =
            dataset::parse_fen(&r.fen).map_err(|e| TuneError::Io(format!("{}: {e}", at())))?;
        if pos.variant() != Variant::Xiangqi {
            return Err(TuneError::Io(format!(
                "{}: a {} position; label scores Xiangqi positions (a Jieqi engine's reveal \
                 moves and views are not read back)",
                at(),
                pos.variant()
            )));
        }
    }
    let engine = EngineCommand::parse(&args.engine, args.proto, &args.engine_option)?;
    let settings = LabelSettings {
        data: args.data.clone(),
        rows: rows.len(),
        engine,
        nodes: args.nodes,
        depth: args.depth,
        keep_noisy: args.keep_noisy,
        out: args.out.clone(),
    };
    let out = &args.out;
    let prog_p = &Partial::of(out).progress;
    let mut progress = if prog_p.exists() {
        let p: Progress = read_json(prog_p)?;
        if p.settings != settings {
            return Err(TuneError::Resume(format!(
                "{} belongs to a labelling with other settings or another input; delete it or \
                 use those settings",
                prog_p.display()
            )));
        }
        crate::outln!(
            "label: resuming at position {}",
            (p.next_chunk * CHUNK).min(rows.len())
        );
        p
    } else {
        if out.exists() && !args.force {
            return Err(TuneError::Io(format!(
                "{} exists (use --force to replace it)",
                out.display()
            )));
        }
        Progress {
            settings: settings.clone(),
            next_chunk: 0,
            bytes: 0,
            positions: 0,
            dropped: 0,
        }
    };
    // the partial file is cut back to what the progress file vouches for
    let mut growing = Growing::open(out, progress.bytes, progress.next_chunk as u64)?;
    let config = settings
        .engine
        .external("label", &[])
        .map_err(|e| TuneError::Params(e.to_string()))?;
    let limits = MoveLimits {
        nodes: args.depth.is_none().then_some(args.nodes),
        depth: args.depth,
        ..MoveLimits::default()
    };
    let chunks: Vec<&[Labelled]> = rows.chunks(CHUNK).collect();
    let first = progress.next_chunk;
    let jobs: Vec<LabelJob> = chunks[first.min(chunks.len())..]
        .iter()
        .map(|c| LabelJob {
            rows: c.iter().map(|r| (r.line, r.fen.clone())).collect(),
            engine: config.clone(),
            limits: limits.clone(),
            keep_noisy: args.keep_noisy,
        })
        .collect();
    let threads = args.concurrency.unwrap_or_else(|| {
        std::thread::available_parallelism()
            .map(|n| n.get())
            .unwrap_or(1)
    });
    let bar = super::driver::progress(
        rows.len() as u64,
        (first * CHUNK).min(rows.len()) as u64,
        "label",
    );
    let mut error = None;
    crate::exec::map(jobs, threads, &mut |i, scores| {
        let chunk = first + i;
        let step = scores.and_then(|s| {
            let mut piece = Piece::default();
            for (r, s) in chunks[chunk].iter().zip(s) {
                match s {
                    Some(s) => {
                        let line = format!("{} | {s} | {}\n", r.fen, wdl(r.result));
                        piece.bytes.extend_from_slice(line.as_bytes());
                        piece.kept += 1;
                    }
                    None => piece.dropped += 1,
                }
            }
            growing
                .add(chunk as u64, piece, &mut progress, record)
                .map_err(|e| e.to_string())
        });
        if let Err(e) = step {
            error = Some(e);
            return false;
        }
        let (kept, dropped) = growing.unsynced();
        bar.set(
            ((growing.next() as usize * CHUNK).min(rows.len())) as u64,
            format!(
                "{} kept, {} dropped",
                progress.positions + kept,
                progress.dropped + dropped
            ),
        );
        !stop_requested()
    });
    // what is done is kept, an error or not
    growing.sync(&mut progress, record)?;
    if let Some(e) = error {
        bar.abandon();
        return Err(TuneError::Io(format!(
            "label: {e} (the positions before it are kept; the same command resumes)"
        )));
    }
    if progress.next_chunk < chunks.len() {
        bar.abandon();
        crate::outln!(
            "stopped at position {}; run the same command again to continue",
            progress.next_chunk * CHUNK
        );
        return Ok(progress.positions);
    }
    bar.finish();
    growing.publish()?;
    crate::outln!(
        "label: {} positions scored by {} ({} dropped: in check, capture or no move) -> {}",
        progress.positions,
        settings.engine.command,
        progress.dropped,
        out.display()
    );
    Ok(progress.positions)
}

/// Adds what a sync of the partial file made durable to the progress record.
fn record(progress: &mut Progress, s: Synced) {
    progress.bytes += s.bytes;
    progress.positions += s.kept;
    progress.dropped += s.dropped;
    progress.next_chunk = s.next as usize;
}
