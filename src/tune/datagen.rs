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
//! Jieqi (`--variant jieqi`): every game is a seeded deal refereed by the rules core's
//! [`Arbiter`], which holds the true identities; each side searches only its own view, read
//! back from its FEN without history, exactly as the match referee tells engines
//! ([`crate::play::jieqi`]), and each side has its own tables (a shared table would carry what
//! one side learned, e.g. the identity of a piece it captured, into the other's search). A
//! kept position is written as the side to move saw it: its Jieqi FEN with the pools and no
//! hidden field, the only position a tuned evaluation will ever be asked to score. The quiet
//! filter is the same in that view, with one change: a capture *by* a dark piece is a chance
//! event (its identity is drawn at the reveal), so the quiescence search values it as the
//! pool-weighted average of the static evaluations after each possible reveal, as the engine's
//! own quiescence does, instead of searching one made-up identity. A capture *of* a dark piece
//! is searched like any other (the capturer's view learns nothing more from it).
//!
//! Games are played in parallel as one stream of executor jobs (threads, and the ranks of an MPI
//! job); their lines are appended to `<out>.partial` in game order, and every two seconds the
//! file is synced and `<out>.progress.json` records how far it got (atomic rename), so a killed
//! run resumes where it stopped and the final file appears only when complete (a rename). The
//! dataset's folder README gets an entry saying how the file was made.

use super::TuneError;
use super::files::{Growing, Partial, Piece, Synced, io_err, read_json};
use super::stop::{install_ctrlc, stop_requested};
use crate::core::{Arbiter, CaptureReveal, GameResult, Move, Position, Variant};
use crate::eval::nnue::Network;
use crate::eval::{EvalParams, evaluate};
use crate::play::jieqi::{deal_seed, told};
use crate::search::{SearchLimits, SearchParams, Searcher};
use crate::util::{self, mix};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};
use std::borrow::Cow;
use std::path::{Path, PathBuf};
use std::sync::Arc;

#[derive(clap::Args, Debug, Clone, PartialEq)]
pub struct DatagenArgs {
    /// Game played: xiangqi, or jieqi (seeded deals, each side searching its own view).
    #[arg(long, default_value = "xiangqi")]
    pub variant: Variant,
    /// Number of self-play games.
    #[arg(long, default_value_t = 200)]
    pub games: u64,
    /// Nodes per move.
    #[arg(long, default_value_t = 2000, value_parser = clap::value_parser!(u64).range(1..))]
    pub nodes: u64,
    /// Fixed depth per move instead of nodes.
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..))]
    pub depth: Option<u32>,
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Worker threads (default: all cores).
    #[arg(long)]
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
    /// NNUE network file of the variant played (`embedded`: the built-in one): the players
    /// evaluate with it (default: the classical evaluation). The quiet filter keeps the
    /// classical evaluation of `--params`.
    #[arg(long, value_name = "FILE")]
    pub net: Option<PathBuf>,
    /// Replace an existing output file.
    #[arg(long)]
    pub force: bool,
}

/// What a datagen run makes, as its progress file records it (a resumed run must have the same;
/// the thread count and `--force` may differ).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct DatagenSettings {
    #[serde(default)]
    pub variant: Variant,
    pub games: u64,
    pub nodes: u64,
    pub depth: Option<u32>,
    pub seed: u64,
    pub out: PathBuf,
    pub random_plies: usize,
    pub skip_plies: usize,
    pub max_plies: usize,
    pub params: Option<PathBuf>,
    /// The players' network file (absent from the progress files of runs before `--net`).
    #[serde(default)]
    pub net: Option<PathBuf>,
}

impl From<&DatagenArgs> for DatagenSettings {
    fn from(a: &DatagenArgs) -> DatagenSettings {
        DatagenSettings {
            variant: a.variant,
            games: a.games,
            nodes: a.nodes,
            depth: a.depth,
            seed: a.seed,
            out: a.out.clone(),
            random_plies: a.random_plies,
            skip_plies: a.skip_plies,
            max_plies: a.max_plies,
            params: a.params.clone(),
            net: a.net.clone(),
        }
    }
}

/// What the progress file (`<out>.progress`) vouches for: the games done, and the bytes and
/// positions of the partial file they wrote.
#[derive(Serialize, Deserialize, Debug)]
struct ProgressRecord {
    args: DatagenSettings,
    next_game: u64,
    bytes: u64,
    positions: u64,
}

/// How every game of a datagen run is played: what its jobs carry.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct SelfPlay {
    pub variant: Variant,
    pub seed: u64,
    pub nodes: u64,
    pub depth: Option<u32>,
    pub random_plies: usize,
    pub skip_plies: usize,
    pub max_plies: usize,
    /// The players' evaluation.
    pub eval: Arc<EvalParams>,
    /// The players' network, of the variant played (`None`: the classical evaluation). It
    /// travels in jobs as its file's bytes, checked on arrival.
    #[serde(default)]
    pub network: Option<Arc<Network>>,
}

impl SelfPlay {
    pub fn new(
        s: &DatagenSettings,
        eval: Arc<EvalParams>,
        network: Option<Arc<Network>>,
    ) -> SelfPlay {
        SelfPlay {
            variant: s.variant,
            seed: s.seed,
            nodes: s.nodes,
            depth: s.depth,
            random_plies: s.random_plies,
            skip_plies: s.skip_plies,
            max_plies: s.max_plies,
            eval,
            network,
        }
    }
}

/// Datagen game `index` as an executor job: its labelled lines.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct DatagenJob {
    pub index: u64,
    pub games: Arc<SelfPlay>,
}

impl crate::exec::Job for DatagenJob {
    type Output = Vec<String>;
    type Context = ();
    const KIND: &'static str = "datagen";
    fn run(self, _: &()) -> Vec<String> {
        play_game(self.index, &self.games)
    }
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
        let s = if pos.is_dark(m.from()) {
            reveal_average(pos, m, params)
        } else {
            pos.make_move(m);
            let s = -qsearch(pos, -beta, -alpha, params, ply + 1);
            pos.unmake_move();
            s
        };
        if s >= beta {
            return beta;
        }
        alpha = alpha.max(s);
    }
    alpha
}

/// Jieqi: the capture `m` by a dark piece valued as the pool-weighted average of the static
/// evaluations after each reveal (side to move's view; see the module doc).
fn reveal_average(pos: &mut Position, m: Move, params: &EvalParams) -> i32 {
    let (mut sum, mut total) = (0i64, 0i64);
    for (r, w) in pos.reveal_outcomes(m) {
        pos.make_move(r);
        sum += -(evaluate(pos, params) as i64) * w as i64;
        pos.unmake_move();
        total += w as i64;
    }
    if total == 0 {
        return 0;
    }
    (sum as f64 / total as f64).round() as i32
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

/// A game of datagen: Xiangqi (both sides see the whole board) or a Jieqi deal refereed by the
/// arbiter (see the module doc). One loop ([`play_game`]) plays both.
enum Game {
    Xiangqi(Box<Position>),
    Jieqi(Box<Arbiter>),
}

/// Keeps the deals of datagen apart from those of a match run with the same `--seed`, so a
/// Jieqi verification match never replays the training deals.
const DEAL_STREAM: u64 = 0xda7a_6e11;

impl Game {
    fn new(variant: Variant, seed: u64, index: u64) -> Game {
        match variant {
            Variant::Xiangqi => Game::Xiangqi(Box::new(Position::startpos())),
            Variant::Jieqi => Game::Jieqi(Box::new(Arbiter::from_seed(
                deal_seed(mix(seed, &[DEAL_STREAM]), index as usize),
                CaptureReveal::default(),
            ))),
        }
    }

    /// The full position the game is ruled on.
    fn truth(&self) -> &Position {
        match self {
            Game::Xiangqi(p) => p,
            Game::Jieqi(a) => a.truth(),
        }
    }

    /// What the side to move searches and is recorded as: the board, or its own view as the
    /// match referee tells it (its FEN read back, no history).
    fn told(&self) -> Cow<'_, Position> {
        match self {
            Game::Xiangqi(p) => Cow::Borrowed(p),
            Game::Jieqi(a) => Cow::Owned(told(a).1),
        }
    }

    /// Plays `m`, a legal move of [`Game::told`] (its squares decide; the arbiter adds the
    /// truth of a reveal). `false` if it is not legal.
    fn play(&mut self, m: Move) -> bool {
        match self {
            Game::Xiangqi(p) => {
                if !p.is_legal(m) {
                    return false;
                }
                p.make_move(m);
                true
            }
            Game::Jieqi(a) => a.play(m.squares()).is_ok(),
        }
    }
}

/// One game: its quiet positions labelled with the result.
pub fn play_game(index: u64, args: &SelfPlay) -> Vec<String> {
    let eval = &args.eval;
    let mut rng = ChaCha8Rng::seed_from_u64(mix(args.seed, &[index]));
    let mut game = Game::new(args.variant, args.seed, index);
    for _ in 0..args.random_plies {
        if game.truth().outcome().is_some() {
            break;
        }
        let moves = game.told().legal_moves();
        if moves.is_empty() {
            break;
        }
        let m = moves.as_slice()[rng.gen_range(0..moves.len())];
        if !game.play(m) {
            break;
        }
    }
    // Xiangqi: one table for both sides (as datagen always did); Jieqi: one per side.
    let sides = if args.variant == Variant::Jieqi { 2 } else { 1 };
    let mut searchers: Vec<Searcher> = (0..sides)
        .map(|_| {
            let mut s = Searcher::new(eval.clone(), SearchParams::default(), 16)
                .with_network(args.network.clone());
            s.new_game();
            s
        })
        .collect();
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
        if let Some(o) = game.truth().outcome() {
            result = o.result;
            break;
        }
        let pos = game.told().into_owned();
        let us = pos.side_to_move();
        let searcher = &mut searchers[if sides == 2 { us.index() } else { 0 }];
        let r = searcher.search(&pos, &limits, &mut |_| {});
        if r.best_move == Move::NULL || !pos.is_legal(r.best_move) {
            break;
        }
        if ply >= args.skip_plies && !pos.is_capture(r.best_move) && is_quiet(&pos, eval) {
            let red = r.score.clamp(-SCORE_CLAMP, SCORE_CLAMP) * us.sign();
            rows.push((pos.to_fen(), red));
        }
        if !game.play(r.best_move) {
            break;
        }
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

/// Runs datagen; returns the number of positions written.
pub fn run_datagen(flags: &DatagenArgs) -> Result<u64, TuneError> {
    install_ctrlc();
    if flags.games == 0 {
        return Err(TuneError::Params("--games must be at least 1".into()));
    }
    let settings = DatagenSettings::from(flags);
    let args = &settings;
    let out = &args.out;
    let prog_p = &Partial::of(out).progress;
    let mut progress = if prog_p.exists() {
        let p: ProgressRecord = read_json(prog_p)?;
        if p.args != settings {
            return Err(TuneError::Resume(format!(
                "{} belongs to a datagen run with other settings; delete it or use those settings",
                prog_p.display()
            )));
        }
        crate::outln!("datagen: resuming at game {}", p.next_game);
        p
    } else {
        if out.exists() && !flags.force {
            return Err(TuneError::Io(format!(
                "{} exists (use --force to replace it)",
                out.display()
            )));
        }
        ProgressRecord {
            args: settings.clone(),
            next_game: 0,
            bytes: 0,
            positions: 0,
        }
    };
    let eval = Arc::new(match &args.params {
        Some(p) => EvalParams::load(p).map_err(|e| TuneError::Params(e.to_string()))?,
        None => EvalParams::default(),
    });
    let network = match &args.net {
        Some(p) => Some(
            Network::load_named(p, args.variant)
                .map_err(|e| TuneError::Params(format!("--net {}: {e}", p.display())))?,
        ),
        None => None,
    };
    // the partial file is cut back to what the progress file vouches for
    let mut growing = Growing::open(out, progress.bytes, progress.next_game)?;
    // `.xqp`: packed records (40 bytes a position) after the file header
    let packed = crate::import::packed::is_packed(out);
    if packed && progress.bytes == 0 {
        let header = crate::import::packed::to_bytes(&[]);
        growing.write_now(&header)?;
        progress.bytes = header.len() as u64;
    }
    let threads = flags.concurrency.unwrap_or_else(|| {
        std::thread::available_parallelism()
            .map(|n| n.get())
            .unwrap_or(1)
    });
    let games = Arc::new(SelfPlay::new(&settings, eval.clone(), network.clone()));
    let bar = super::driver::progress(args.games, progress.next_game, "datagen");
    // One stream of games over every thread (and rank): no thread waits for the slowest game
    // of a batch. Lines are appended in game order (a finished game waits for those before
    // it), and the partial file is synced and the progress file rewritten every few seconds.
    let first = progress.next_game;
    let jobs: Vec<DatagenJob> = (first..args.games)
        .map(|index| DatagenJob {
            index,
            games: games.clone(),
        })
        .collect();
    let mut error = None;
    crate::exec::map(jobs, threads, &mut |i, lines| {
        let step = encode(&lines, packed)
            .and_then(|piece| growing.add(first + i as u64, piece, &mut progress, record));
        if let Err(e) = step {
            error = Some(e);
            return false;
        }
        bar.set(
            growing.next(),
            format!("{} positions", progress.positions + growing.unsynced().0),
        );
        !stop_requested()
    });
    if let Some(e) = error {
        bar.abandon();
        return Err(e);
    }
    growing.sync(&mut progress, record)?;
    if progress.next_game < args.games {
        bar.abandon();
        crate::outln!(
            "stopped at game {}; run the same command again to continue",
            progress.next_game
        );
        return Ok(progress.positions);
    }
    bar.finish();
    growing.publish()?;
    write_readme_entry(args, progress.positions, &eval, network.as_deref())?;
    crate::outln!(
        "datagen: {} positions from {} games -> {}",
        progress.positions,
        args.games,
        out.display()
    );
    Ok(progress.positions)
}

/// A finished game's lines as the bytes of the output (packed records or text lines).
fn encode(lines: &[String], packed: bool) -> Result<Piece, TuneError> {
    let mut bytes = Vec::new();
    for l in lines {
        if packed {
            bytes.extend_from_slice(&pack_line(l)?.0);
        } else {
            bytes.extend_from_slice(l.as_bytes());
            bytes.push(b'\n');
        }
    }
    Ok(Piece {
        bytes,
        kept: lines.len() as u64,
        dropped: 0,
    })
}

/// Adds what a sync of the partial file made durable to the progress record.
fn record(progress: &mut ProgressRecord, s: Synced) {
    progress.bytes += s.bytes;
    progress.positions += s.kept;
    progress.next_game = s.next;
}

/// One of datagen's own lines as a packed record.
fn pack_line(line: &str) -> Result<crate::import::packed::PackedPosition, TuneError> {
    let bad = |e: String| TuneError::Io(format!("datagen line '{line}': {e}"));
    let (fen, result, score) = super::dataset::parse_line(line)
        .map_err(bad)?
        .ok_or_else(|| bad("empty".into()))?;
    let pos = super::dataset::parse_fen(&fen).map_err(bad)?;
    crate::import::packed::PackedPosition::pack(&pos, score.unwrap_or(0), result)
        .map_err(|e| bad(e.to_string()))
}

/// Appends (or replaces) the dataset's entry in the README of its folder.
fn write_readme_entry(
    args: &DatagenSettings,
    positions: u64,
    eval: &EvalParams,
    network: Option<&Network>,
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
    let (variant_flag, game_text, view_text) = match args.variant {
        Variant::Xiangqi => (String::new(), "self-play games", ""),
        Variant::Jieqi => (
            " --variant jieqi".to_string(),
            "Jieqi self-play games, each from its own seeded deal, both sides searching only their \
             own view (the arbiter holds the hidden identities)",
            " Each position is written as the side to move saw it: its Jieqi FEN with both pools \
             as that side knows them and no hidden field (no identity of a dark piece is ever \
             written); a capture by a dark piece counts in the quiescence check as the average \
             over its possible reveals.",
        ),
    };
    let format = if crate::import::packed::is_packed(&args.out) {
        "packed records, 40 bytes a position (`src/import/packed.rs`)"
    } else {
        "`FEN | score | wdl` (bullet's text format)"
    };
    let entry = format!(
        "## {name}\n\n\
         - Made by: `xqtune datagen{variant_flag} --games {} {limit} --seed {} --random-plies {} --skip-plies {} --max-plies {}{} --out {}` \
         (xqtune {}, {} UTC).\n\
         - Players: this engine with {} (eval hash {:016x}){} on both sides.\n\
         - Content: {positions} positions from {} {game_text}; quiet positions only (not in check, the best move is \
         not a capture, and the static evaluation equals a capture-only quiescence search); the first {} plies after {} \
         random opening plies are skipped.{view_text}\n\
         - Format and label: {format}: the search score of the move played, in \
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
            .unwrap_or_default()
            + &args
                .net
                .as_ref()
                .map(|p| format!(" --net {}", p.display()))
                .unwrap_or_default(),
        args.out.display(),
        env!("CARGO_PKG_VERSION"),
        chrono::Utc::now().format("%Y-%m-%d %H:%M"),
        args.params
            .as_ref()
            .map(|p| p.display().to_string())
            .unwrap_or_else(|| "the embedded default parameters".into()),
        eval.hash(),
        match (network, &args.net) {
            (Some(n), Some(p)) => format!(
                " and the network {} (hash {:016x}, {})",
                p.display(),
                n.hash(),
                n.description()
            ),
            _ => String::new(),
        },
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
    use crate::tune::files::write_json;

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
            variant: Variant::Xiangqi,
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
            net: None,
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
        // packed: the same positions, scores and results, 40 bytes each
        let mut c = args.clone();
        c.out = dir.join("c.xqp");
        run_datagen(&c).unwrap();
        let packed = crate::import::packed::read(&c.out).unwrap();
        assert_eq!(packed.len(), a.lines().count());
        for (p, l) in packed.iter().zip(a.lines()) {
            let (fen, result, score) = super::super::dataset::parse_line(l).unwrap().unwrap();
            let strip = |f: &str| f.split_whitespace().take(4).collect::<Vec<_>>().join(" ");
            assert_eq!(
                strip(&p.to_position().unwrap().to_fen()),
                strip(&fen),
                "{l}"
            );
            assert_eq!(
                (p.score() as i32, p.result()),
                (score.unwrap(), result),
                "{l}"
            );
        }
        let readme = std::fs::read_to_string(dir.join("README.md")).unwrap();
        assert!(readme.contains("## a.txt") && readme.contains("## b.txt.gz"));
        assert!(readme.contains("## c.xqp") && readme.contains("packed records"));
        assert!(!readme.contains("--net"));
        // --net: the players search with the network, which the job carries exactly and the
        // README names.
        let net = Network::random(9, 32, 4, crate::eval::nnue::Activation::SCReLU);
        let net_path = dir.join("random.nnue");
        net.save(&net_path).unwrap();
        let mut c = args.clone();
        c.out = dir.join("c.txt");
        c.net = Some(net_path.clone());
        run_datagen(&c).unwrap();
        assert_ne!(std::fs::read_to_string(&c.out).unwrap(), a);
        let readme = std::fs::read_to_string(dir.join("README.md")).unwrap();
        assert!(readme.contains(&format!("--net {}", net_path.display())));
        assert!(readme.contains(&format!("{:016x}", net.hash())));
        let job = DatagenJob {
            index: 1,
            games: Arc::new(SelfPlay::new(
                &DatagenSettings::from(&c),
                Arc::new(EvalParams::default()),
                Some(Arc::new(net)),
            )),
        };
        let wire: DatagenJob = bincode::deserialize(&bincode::serialize(&job).unwrap()).unwrap();
        assert_eq!(wire.games.network, job.games.network);
        assert_eq!(play_game(1, &wire.games), play_game(1, &job.games));
        let mut classical = (*job.games).clone();
        classical.network = None;
        assert_ne!(play_game(1, &classical), play_game(1, &job.games));
        // A file that is not a network stops the run with the reason.
        let mut d = args.clone();
        d.out = dir.join("d.txt");
        d.net = Some(dir.join("a.txt"));
        let e = run_datagen(&d).unwrap_err().to_string();
        assert!(
            e.contains("--net") && e.contains("a.txt") && e.contains("bad magic"),
            "{e}"
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// Jieqi datagen: every line is a side to move's view (Jieqi FEN, pools, no identity of a
    /// dark piece), the same seed gives the same bytes at any thread count, and a run resumed
    /// after a kill (a torn write beyond the last progress record included) equals an
    /// uninterrupted one.
    #[test]
    fn jieqi_datagen_writes_views_and_resumes() {
        let dir = std::env::temp_dir().join(format!("xqtune-datagen-jq-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let args = DatagenArgs {
            variant: Variant::Jieqi,
            games: 4,
            nodes: 300,
            depth: None,
            seed: 11,
            concurrency: Some(2),
            out: dir.join("a.txt"),
            random_plies: 2,
            skip_plies: 0,
            max_plies: 60,
            params: None,
            net: None,
            force: false,
        };
        let n = run_datagen(&args).unwrap();
        let a = std::fs::read_to_string(&args.out).unwrap();
        assert_eq!(a.lines().count() as u64, n);
        let mut dark_rows = 0;
        for l in a.lines() {
            let (fen, _, score) = super::super::dataset::parse_line(l).unwrap().unwrap();
            assert!(score.is_some_and(|s| s.abs() <= SCORE_CLAMP), "{l}");
            let pos = Position::from_fen(&fen).unwrap();
            assert_eq!(pos.variant(), Variant::Jieqi, "{l}");
            assert!(!pos.in_check(), "{l}");
            for sq in 0..90u8 {
                let sq = crate::core::Square(sq);
                assert!(
                    pos.hidden_kind(sq).is_none(),
                    "hidden identity written: {l}"
                );
            }
            for c in crate::core::Color::ALL {
                assert!(pos.pool_total(c) >= pos.dark_count(c), "{l}");
            }
            dark_rows += usize::from(pos.dark() != 0);
        }
        assert!(dark_rows > 0, "no position with dark pieces:\n{a}");
        // same seed, one thread: the same bytes
        let mut b = args.clone();
        b.out = dir.join("b.txt");
        b.concurrency = Some(1);
        run_datagen(&b).unwrap();
        assert_eq!(std::fs::read_to_string(&b.out).unwrap(), a);
        // killed after game 2, with half a line written after its last progress record
        let mut c = args.clone();
        c.out = dir.join("c.txt");
        let games = SelfPlay::new(
            &DatagenSettings::from(&c),
            Arc::new(EvalParams::default()),
            None,
        );
        let mut done = String::new();
        let mut positions = 0;
        for g in 0..2 {
            for l in play_game(g, &games) {
                done.push_str(&l);
                done.push('\n');
                positions += 1;
            }
        }
        write_json(
            &Partial::of(&c.out).progress,
            &ProgressRecord {
                args: DatagenSettings::from(&c),
                next_game: 2,
                bytes: done.len() as u64,
                positions,
            },
        )
        .unwrap();
        std::fs::write(Partial::of(&c.out).part, format!("{done}xxxx/9 torn")).unwrap();
        assert_eq!(run_datagen(&c).unwrap(), n);
        assert_eq!(std::fs::read_to_string(&c.out).unwrap(), a);
        // another seed, other deals
        let mut d = args.clone();
        d.out = dir.join("d.txt");
        d.seed = 12;
        run_datagen(&d).unwrap();
        assert_ne!(std::fs::read_to_string(&d.out).unwrap(), a);
        let readme = std::fs::read_to_string(dir.join("README.md")).unwrap();
        assert!(readme.contains("--variant jieqi") && readme.contains("no hidden field"));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
