//! `xqtune import`: PGN files in, a labelled dataset and/or normalised PGN out.

use super::dataset::{Selection, select_positions};
use super::openings::opening_suite;
use super::pgn::split_games;
use super::{ImportedGame, SkippedGame, encoding_by_name, read_games};
use crate::util;
use anyhow::{Context, Result, bail};
use clap::Args;
use indicatif::ProgressBar;
use rayon::prelude::*;
use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Instant;

/// Arguments of `xqtune import`.
#[derive(Args, Debug, Clone)]
pub struct ImportArgs {
    /// PGN files (`.pgn` or `.pgn.gz`) in UTF-8, GBK or Big5, with moves in Chinese, WXF or
    /// coordinate notation.
    #[arg(required = true)]
    pub files: Vec<PathBuf>,
    /// TexelDataset to write: one `FEN | result | id` line per position (gzip when it ends in `.gz`).
    #[arg(long, short)]
    pub output: Option<PathBuf>,
    /// Force the text encoding (utf-8, gbk, gb18030, big5) instead of detecting it.
    #[arg(long)]
    pub encoding: Option<String>,
    /// Keep only quiet positions: not in check, no capture that wins material (SEE).
    #[arg(long)]
    pub quiet_only: bool,
    /// Skip the first N plies of every game.
    #[arg(long, default_value_t = 0)]
    pub skip_plies: usize,
    /// Keep at most K positions per game, sampled at random.
    #[arg(long)]
    pub sample: Option<usize>,
    /// Seed for --sample.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Drop games without a result (`*` or none) instead of labelling their positions `*`.
    #[arg(long)]
    pub drop_unfinished: bool,
    /// Also write the imported games as UTF-8 PGN in coordinate notation.
    #[arg(long)]
    pub pgn_out: Option<PathBuf>,
    /// How many skipped games to list one by one (the summary counts all).
    #[arg(long, default_value_t = 20)]
    pub max_reports: usize,
    /// Write an opening suite instead of a dataset: the first PLIES moves of every game from the
    /// initial position, one line per distinct position (`datasets/openings.txt` is made so).
    #[arg(long, value_name = "PLIES", requires = "output", conflicts_with_all = ["quiet_only", "skip_plies", "sample", "drop_unfinished", "pgn_out"])]
    pub openings: Option<usize>,
    /// A line for the suite's header, e.g. the source and its licence (repeatable).
    #[arg(long, requires = "openings")]
    pub note: Vec<String>,
}

/// Writes `path` atomically ([`util::write_atomic_with`]); `.gz` names are gzip-compressed.
fn write_output(
    path: &Path,
    fill: impl FnOnce(&mut dyn Write) -> std::io::Result<()>,
) -> Result<()> {
    let gz = path.extension().is_some_and(|e| e == "gz");
    util::write_atomic_with(path, |w| {
        if gz {
            let mut enc = flate2::write::GzEncoder::new(w, flate2::Compression::default());
            fill(&mut enc)?;
            enc.finish().map(drop)
        } else {
            fill(w)
        }
    })
    .with_context(|| format!("cannot write {}", path.display()))
}

/// `xqtune import FILES --openings PLIES -o SUITE`.
fn write_opening_suite(
    args: &ImportArgs,
    plies: usize,
    encoding: Option<&'static encoding_rs::Encoding>,
    out: &Path,
) -> Result<()> {
    if plies == 0 {
        bail!("--openings must be at least 1 ply");
    }
    let mut games = Vec::new();
    let mut sources = Vec::new();
    for path in &args.files {
        let name = path.display().to_string();
        let raw = std::fs::read(path).with_context(|| format!("cannot read {name}"))?;
        let bytes = super::maybe_gunzip(&name, raw)?;
        games.extend(split_games(&super::encoding::decode(&bytes, encoding).text));
        sources.push(super::file_name(&name).to_string());
    }
    let suite = opening_suite(&games, plies);
    let mut header = vec![
        "xqtune opening suite: one opening per line, played twice with colours swapped.".into(),
    ];
    header.extend(args.note.iter().cloned());
    header.push(format!(
        "Made by `xqtune import {} --openings {plies}`: the first {plies} plies of each game",
        sources.join(" ")
    ));
    header
        .push("that starts from the initial position, duplicates (same position) removed.".into());
    header.push("Comments: the game's [Event] and its moves as written in the source.".into());
    header.push("Format: see src/play/openings.rs.".into());
    write_output(out, |w| {
        for h in &header {
            writeln!(w, "# {h}")?;
        }
        for l in &suite.lines {
            writeln!(w, "{}", l.to_line())?;
        }
        Ok(())
    })?;
    println!(
        "{} games: {} openings written to {}, {} duplicates, {} from other start positions, \
         {} shorter than {plies} plies, {} unreadable",
        games.len(),
        suite.lines.len(),
        out.display(),
        suite.duplicates,
        suite.other_start,
        suite.short,
        suite.unreadable
    );
    Ok(())
}

/// A game as UTF-8 PGN in coordinate notation.
pub fn game_to_pgn(game: &ImportedGame) -> String {
    let mut out = String::new();
    let mut has_fen = false;
    for (k, v) in &game.tags {
        let v = if k.eq_ignore_ascii_case("FEN") {
            has_fen = true;
            game.start_fen.as_str()
        } else {
            v.trim()
        };
        let v = v.replace('\\', "\\\\").replace('"', "\\\"");
        out.push_str(&format!("[{k} \"{v}\"]\n"));
    }
    if !has_fen && game.start_fen != crate::core::START_FEN {
        out.push_str(&format!("[FEN \"{}\"]\n", game.start_fen));
    }
    out.push('\n');
    let mut pos = game.start_position();
    let mut line = String::new();
    for (i, &m) in game.moves.iter().enumerate() {
        let red = pos.side_to_move() == crate::core::Color::Red;
        if red || i == 0 {
            let dots = if red { "." } else { "..." };
            line.push_str(&format!("{}{} ", pos.fullmove(), dots));
        }
        line.push_str(&m.uci());
        line.push(' ');
        if line.len() > 72 {
            out.push_str(line.trim_end());
            out.push('\n');
            line.clear();
        }
        pos.make_move(m);
    }
    line.push_str(game.result.map(|r| r.pgn()).unwrap_or("*"));
    out.push_str(&line);
    out.push_str("\n\n");
    out
}

pub fn run(args: &ImportArgs) -> Result<()> {
    let encoding = match &args.encoding {
        None => None,
        Some(name) => Some(encoding_by_name(name).with_context(|| {
            format!("unknown encoding '{name}' (known: utf-8, gbk, gb18030, big5)")
        })?),
    };
    if let (Some(plies), Some(out)) = (args.openings, &args.output) {
        return write_opening_suite(args, plies, encoding, out);
    }
    if args.sample == Some(0) {
        bail!("--sample must be at least 1");
    }
    let start = Instant::now();
    let mut games: Vec<ImportedGame> = Vec::new();
    let mut skipped: Vec<SkippedGame> = Vec::new();
    for path in &args.files {
        let spinner = ProgressBar::new_spinner();
        spinner.set_message(format!("reading {}", path.display()));
        spinner.enable_steady_tick(std::time::Duration::from_millis(200));
        let report = read_games(path, encoding);
        spinner.finish_and_clear();
        let report = report?;
        println!(
            "{}: {} games read ({}{}), {} imported, {} skipped",
            report.source,
            report.games.len() + report.skipped.len(),
            report.encoding,
            if report.had_decode_errors {
                ", with undecodable bytes"
            } else {
                ""
            },
            report.games.len(),
            report.skipped.len()
        );
        games.extend(report.games);
        skipped.extend(report.skipped);
    }
    if args.drop_unfinished {
        let (finished, unfinished): (Vec<_>, Vec<_>) =
            games.into_iter().partition(|g| g.result.is_some());
        games = finished;
        skipped.extend(unfinished.into_iter().map(|g| SkippedGame {
            source: g.source,
            number: g.number,
            line: g.line,
            reason: super::SkipReason::NoResult,
        }));
    }
    let selection = Selection {
        quiet_only: args.quiet_only,
        skip_plies: args.skip_plies,
        sample: args.sample,
        seed: args.seed,
    };
    let mut positions = 0usize;
    if let Some(out) = &args.output {
        let bar = crate::progress::Progress::new(
            games.len() as u64,
            0,
            "{bar:40} {pos}/{len} games {elapsed} eta {eta}",
            "import",
        );
        write_output(out, |w| {
            for chunk in games.chunks(512) {
                let lines: Vec<Vec<String>> = chunk
                    .par_iter()
                    .map(|g| {
                        select_positions(g, &selection)
                            .iter()
                            .map(|p| p.to_line())
                            .collect()
                    })
                    .collect();
                for game_lines in lines {
                    for l in game_lines {
                        writeln!(w, "{l}")?;
                        positions += 1;
                    }
                }
                bar.inc(chunk.len() as u64);
            }
            Ok(())
        })?;
        bar.finish_and_clear();
    } else if !selection.quiet_only && selection.sample.is_none() {
        // Nothing to filter: the count needs no positions.
        positions = games
            .iter()
            .map(|g| (g.moves.len() + 1).saturating_sub(selection.skip_plies))
            .sum();
    } else {
        positions = games
            .par_iter()
            .map(|g| select_positions(g, &selection).len())
            .sum();
    }
    if let Some(pgn_out) = &args.pgn_out {
        write_output(pgn_out, |w| {
            for g in &games {
                w.write_all(game_to_pgn(g).as_bytes())?;
            }
            Ok(())
        })?;
    }
    for s in skipped.iter().take(args.max_reports) {
        eprintln!("skipped: {s}");
    }
    if skipped.len() > args.max_reports {
        eprintln!(
            "... and {} more skipped games (see --max-reports)",
            skipped.len() - args.max_reports
        );
    }
    let mut by_reason: BTreeMap<&str, usize> = BTreeMap::new();
    for s in &skipped {
        *by_reason.entry(s.reason.category()).or_default() += 1;
    }
    for (reason, n) in &by_reason {
        println!("skipped ({reason}): {n}");
    }
    let secs = start.elapsed().as_secs_f64();
    println!(
        "time {:.2} s, {:.0} games/s",
        secs,
        (games.len() + skipped.len()) as f64 / secs.max(1e-9)
    );
    println!(
        "imported {} games ({} positions), skipped {}",
        games.len(),
        positions,
        skipped.len()
    );
    Ok(())
}
