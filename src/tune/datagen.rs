//! `xqtune datagen`: labelled positions from self-play for the Texel tuner.
//!
//! Games start with a few random plies (seeded per game, so every game differs and the same
//! seed gives the same games), then both sides search a fixed number of nodes. Quiet positions
//! are kept: not in check, best move not a capture, and the static evaluation equals a
//! capture-only quiescence search (so the static score the tuner fits is not a position halfway
//! through an exchange; the filter used by Zurichess/Ethereal tuning sets). Each position is
//! written as `FEN | score | wdl` (bullet's text format): the search score of the move played
//! and the game's result, both from red's view, so the Texel tuner can blend the two
//! (`--lambda`).
//!
//! Games are played in parallel (rayon) in chunks; after each chunk the lines are appended to
//! `<out>.partial` and `<out>.progress.json` records how far it got (atomic rename), so a killed
//! run resumes where it stopped and the final file appears only when complete (a rename). The
//! dataset's folder README gets an entry saying how the file was made.

use super::TuneError;
use super::run::{self, io_err};
use crate::core::{GameResult, Move, Position};
use crate::eval::{EvalParams, evaluate};
use crate::search::{SearchLimits, SearchParams, Searcher};
use crate::util::{self, mix};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rayon::prelude::*;
use serde::{Deserialize, Serialize};
use std::io::{Seek, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;

#[derive(clap::Args, Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct DatagenArgs {
    /// Number of self-play games.
    #[arg(long, default_value_t = 200)]
    pub games: u64,
    /// Nodes per move.
    #[arg(long, default_value_t = 2000)]
    pub nodes: u64,
    /// Fixed depth per move instead of nodes.
    #[arg(long)]
    pub depth: Option<u32>,
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Worker threads (default: all cores).
    #[arg(long)]
    #[serde(skip)]
    pub concurrency: Option<usize>,
    /// Output file (`.gz` compresses).
    #[arg(long, default_value = "datasets/selfplay.txt.gz")]
    pub out: PathBuf,
    /// Random plies at the start of each game.
    #[arg(long, default_value_t = 6)]
    pub random_plies: usize,
    /// Positions of the first plies after the random opening are not recorded.
    #[arg(long, default_value_t = 8)]
    pub skip_plies: usize,
    /// Games reaching this many plies end as draws.
    #[arg(long, default_value_t = 300)]
    pub max_plies: usize,
    /// Evaluation parameters of the players (default: embedded).
    #[arg(long)]
    pub params: Option<PathBuf>,
    /// Replace an existing output file.
    #[arg(long)]
    #[serde(skip)]
    pub force: bool,
}

#[derive(Serialize, Deserialize, Debug)]
struct Progress {
    args: DatagenArgs,
    next_game: u64,
    bytes: u64,
    positions: u64,
}

/// Capture-only quiescence search (fail-hard alpha-beta, stand pat), side to move's view.
fn qsearch(pos: &mut Position, mut alpha: i32, beta: i32, params: &EvalParams, ply: u32) -> i32 {
    let stand = evaluate(pos, params);
    if stand >= beta {
        return beta;
    }
    if ply >= 8 {
        return alpha.max(stand);
    }
    alpha = alpha.max(stand);
    for &m in pos.legal_captures().iter() {
        pos.make_move(m);
        let s = -qsearch(pos, -beta, -alpha, params, ply + 1);
        pos.unmake_move();
        if s >= beta {
            return beta;
        }
        alpha = alpha.max(s);
    }
    alpha
}

/// Quiet: not in check and no capture sequence changes the static evaluation.
pub fn is_quiet(pos: &Position, params: &EvalParams) -> bool {
    if pos.in_check() {
        return false;
    }
    let mut p = pos.clone();
    let stand = evaluate(&p, params);
    qsearch(&mut p, -1_000_000, 1_000_000, params, 0) == stand
}

/// One game: its quiet positions labelled with the result.
pub fn play_game(index: u64, args: &DatagenArgs, eval: &Arc<EvalParams>) -> Vec<String> {
    let mut rng = ChaCha8Rng::seed_from_u64(mix(args.seed, &[index]));
    let mut pos = Position::startpos();
    for _ in 0..args.random_plies {
        if pos.outcome().is_some() {
            break;
        }
        let moves = pos.legal_moves();
        if moves.is_empty() {
            break;
        }
        let m = moves.as_slice()[rng.gen_range(0..moves.len())];
        pos.make_move(m);
    }
    let mut searcher = Searcher::new(eval.clone(), SearchParams::default(), 16);
    searcher.new_game();
    let limits = SearchLimits {
        nodes: if args.depth.is_some() {
            None
        } else {
            Some(args.nodes)
        },
        depth: args.depth,
        ..Default::default()
    };
    let mut rows = vec![];
    let mut result = GameResult::Draw;
    for ply in 0..args.max_plies {
        if let Some(o) = pos.outcome() {
            result = o.result;
            break;
        }
        let r = searcher.search(&pos, &limits, &mut |_| {});
        if r.best_move == Move::NULL || !pos.is_legal(r.best_move) {
            break;
        }
        if ply >= args.skip_plies && !pos.is_capture(r.best_move) && is_quiet(&pos, eval) {
            let red = r.score.clamp(-SCORE_CLAMP, SCORE_CLAMP) * pos.side_to_move().sign();
            rows.push((pos.to_fen(), red));
        }
        pos.make_move(r.best_move);
    }
    let wdl = match result {
        GameResult::RedWins => "1.0",
        GameResult::BlackWins => "0.0",
        GameResult::Draw => "0.5",
    };
    rows.into_iter()
        .map(|(f, s)| format!("{f} | {s} | {wdl}"))
        .collect()
}

/// Scores beyond this (mates) are written as this: the label blend saturates long before.
pub const SCORE_CLAMP: i32 = 3000;

fn progress_path(out: &Path) -> PathBuf {
    let mut s = out.as_os_str().to_owned();
    s.push(".progress.json");
    PathBuf::from(s)
}

fn partial_path(out: &Path) -> PathBuf {
    let mut s = out.as_os_str().to_owned();
    s.push(".partial");
    PathBuf::from(s)
}

/// Runs datagen; returns the number of positions written.
pub fn run_datagen(args: &DatagenArgs) -> Result<u64, TuneError> {
    run::install_ctrlc();
    let out = &args.out;
    let (prog_p, part_p) = (progress_path(out), partial_path(out));
    if let Some(parent) = out.parent().filter(|p| !p.as_os_str().is_empty()) {
        std::fs::create_dir_all(parent).map_err(|e| io_err(parent, e))?;
    }
    let mut progress = if prog_p.exists() {
        let p: Progress = run::read_json(&prog_p)?;
        let mut cmp = args.clone();
        cmp.concurrency = None;
        cmp.force = false;
        if p.args != cmp {
            return Err(TuneError::Resume(format!(
                "{} belongs to a datagen run with other settings; delete it or use those settings",
                prog_p.display()
            )));
        }
        println!("datagen: resuming at game {}", p.next_game);
        p
    } else {
        if out.exists() && !args.force {
            return Err(TuneError::Io(format!(
                "{} exists (use --force to replace it)",
                out.display()
            )));
        }
        let mut a = args.clone();
        a.concurrency = None;
        a.force = false;
        Progress {
            args: a,
            next_game: 0,
            bytes: 0,
            positions: 0,
        }
    };
    let eval = Arc::new(match &args.params {
        Some(p) => EvalParams::load(p).map_err(|e| TuneError::Params(e.to_string()))?,
        None => EvalParams::default(),
    });
    // the partial file is cut back to what the progress file vouches for
    let mut part = std::fs::OpenOptions::new()
        .create(true)
        .write(true)
        .truncate(false)
        .open(&part_p)
        .map_err(|e| io_err(&part_p, e))?;
    part.set_len(progress.bytes)
        .map_err(|e| io_err(&part_p, e))?;
    part.seek(std::io::SeekFrom::End(0))
        .map_err(|e| io_err(&part_p, e))?;
    let threads = args.concurrency.unwrap_or_else(|| {
        std::thread::available_parallelism()
            .map(|n| n.get())
            .unwrap_or(1)
    });
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .map_err(|e| TuneError::Io(e.to_string()))?;
    let chunk = (crate::exec::slots(threads) as u64 * 4).max(8);
    let bar = super::driver::progress(args.games, progress.next_game, "datagen");
    while progress.next_game < args.games {
        if run::stop_requested() {
            bar.abandon();
            println!(
                "stopped at game {}; run the same command again to continue",
                progress.next_game
            );
            return Ok(progress.positions);
        }
        let end = (progress.next_game + chunk).min(args.games);
        let games: Vec<Vec<String>> = if crate::exec::distributed() {
            crate::exec::datagen_games(progress.next_game..end, args, &eval, threads)
        } else {
            pool.install(|| {
                (progress.next_game..end)
                    .into_par_iter()
                    .map(|g| play_game(g, args, &eval))
                    .collect()
            })
        };
        let mut text = String::new();
        for g in &games {
            for l in g {
                text.push_str(l);
                text.push('\n');
                progress.positions += 1;
            }
        }
        part.write_all(text.as_bytes())
            .and_then(|_| part.sync_data())
            .map_err(|e| io_err(&part_p, e))?;
        progress.bytes += text.len() as u64;
        progress.next_game = end;
        run::write_json(&prog_p, &progress)?;
        bar.set_position(end);
        bar.set_message(format!("{} positions", progress.positions));
    }
    bar.finish();
    drop(part);
    // publish: compress or rename, atomically
    if out.extension().is_some_and(|e| e == "gz") {
        let data = std::fs::read(&part_p).map_err(|e| io_err(&part_p, e))?;
        let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        enc.write_all(&data).map_err(|e| io_err(out, e))?;
        let gz = enc.finish().map_err(|e| io_err(out, e))?;
        util::write_atomic(out, &gz).map_err(|e| io_err(out, e))?;
        std::fs::remove_file(&part_p).map_err(|e| io_err(&part_p, e))?;
    } else {
        std::fs::rename(&part_p, out).map_err(|e| io_err(out, e))?;
    }
    std::fs::remove_file(&prog_p).map_err(|e| io_err(&prog_p, e))?;
    write_readme_entry(args, progress.positions, &eval)?;
    println!(
        "datagen: {} positions from {} games -> {}",
        progress.positions,
        args.games,
        out.display()
    );
    Ok(progress.positions)
}

/// Appends (or replaces) the dataset's entry in the README of its folder.
fn write_readme_entry(
    args: &DatagenArgs,
    positions: u64,
    eval: &EvalParams,
) -> Result<(), TuneError> {
    let dir = args
        .out
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let readme = dir.join("README.md");
    let name = args
        .out
        .file_name()
        .map(|n| n.to_string_lossy().to_string())
        .unwrap_or_default();
    let limit = match args.depth {
        Some(d) => format!("--depth {d}"),
        None => format!("--nodes {}", args.nodes),
    };
    let entry = format!(
        "## {name}\n\n\
         - Made by: `xqtune datagen --games {} {limit} --seed {} --random-plies {} --skip-plies {} --max-plies {}{} --out {}` \
         (xqtune {}, {} UTC).\n\
         - Players: this engine with {} (eval hash {:016x}) on both sides.\n\
         - Content: {positions} positions from {} self-play games; quiet positions only (not in check, the best move is \
         not a capture, and the static evaluation equals a capture-only quiescence search); the first {} plies after {} \
         random opening plies are skipped.\n\
         - Format and label: `FEN | score | wdl` (bullet's text format): the search score of the move played, in \
         centipawns (mates clamped to ±3000), and the game's result (`1.0`, `0.5`, `0.0`), both from red's view; games \
         reaching {} plies count as draws.\n\
         - Licence: generated by this project (same licence as the code).\n\n",
        args.games,
        args.seed,
        args.random_plies,
        args.skip_plies,
        args.max_plies,
        args.params
            .as_ref()
            .map(|p| format!(" --params {}", p.display()))
            .unwrap_or_default(),
        args.out.display(),
        env!("CARGO_PKG_VERSION"),
        chrono::Utc::now().format("%Y-%m-%d %H:%M"),
        args.params
            .as_ref()
            .map(|p| p.display().to_string())
            .unwrap_or_else(|| "the embedded default parameters".into()),
        eval.hash(),
        args.games,
        args.skip_plies,
        args.random_plies,
        args.max_plies,
    );
    let old = std::fs::read_to_string(&readme).unwrap_or_else(|_| {
        "# Datasets\n\nProvenance, licence and label meaning of every file in this folder.\n\n"
            .to_string()
    });
    // drop a previous entry of the same file
    let head = format!("## {name}\n");
    let mut kept = String::new();
    let mut skipping = false;
    for line in old.split_inclusive('\n') {
        if line.starts_with("## ") {
            skipping = line == head;
        }
        if !skipping {
            kept.push_str(line);
        }
    }
    kept.push_str(&entry);
    util::write_atomic(&readme, kept.as_bytes()).map_err(|e| io_err(&readme, e))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quiet_filter() {
        let p = EvalParams::default();
        assert!(is_quiet(&Position::startpos(), &p));
        // red rook can take an undefended black rook: not quiet
        let pos = Position::from_fen("3k5/9/9/9/9/9/9/9/r8/R3K4 w - - 0 1").unwrap();
        assert!(!is_quiet(&pos, &p));
    }

    #[test]
    fn datagen_is_seeded_and_resumable() {
        let dir = std::env::temp_dir().join(format!("xqtune-datagen-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let args = DatagenArgs {
            games: 6,
            nodes: 200,
            depth: Some(1),
            seed: 3,
            concurrency: Some(2),
            out: dir.join("a.txt"),
            random_plies: 4,
            skip_plies: 0,
            max_plies: 40,
            params: None,
            force: false,
        };
        let n = run_datagen(&args).unwrap();
        assert!(n > 0);
        let a = std::fs::read_to_string(&args.out).unwrap();
        assert_eq!(a.lines().count() as u64, n);
        for l in a.lines() {
            let (fen, _, score) = super::super::dataset::parse_line(l).unwrap().unwrap();
            assert!(score.is_some_and(|s| s.abs() <= SCORE_CLAMP), "{l}");
            let pos = Position::from_fen(&fen).unwrap();
            assert!(!pos.in_check());
        }
        // an existing file is not overwritten without --force
        assert!(run_datagen(&args).is_err());
        // same seed, same data (gzipped this time), also via the README entry
        let mut b = args.clone();
        b.out = dir.join("b.txt.gz");
        run_datagen(&b).unwrap();
        let rows = super::super::dataset::read_labelled(&b.out).unwrap();
        let text: String = rows
            .iter()
            .map(|r| {
                format!(
                    "{} | {} | {}\n",
                    r.fen,
                    r.score.unwrap(),
                    match r.result {
                        x if x > 0.75 => "1.0",
                        x if x < 0.25 => "0.0",
                        _ => "0.5",
                    }
                )
            })
            .collect();
        assert_eq!(text, a);
        let readme = std::fs::read_to_string(dir.join("README.md")).unwrap();
        assert!(readme.contains("## a.txt") && readme.contains("## b.txt.gz"));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
