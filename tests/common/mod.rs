//! Shared helpers for the integration tests: reading the data files under `tests/data`, the
//! self-hosting harness, and a session with the built binary.

#![allow(dead_code)]

pub mod harness;
pub mod uci_session;

use std::path::{Path, PathBuf};

pub fn data_path(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests")
        .join("data")
        .join(name)
}

pub fn read_data(name: &str) -> String {
    let path = data_path(name);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()))
}

/// Lines that are neither blank nor `#` comments.
pub fn data_lines(name: &str) -> Vec<String> {
    read_data(name)
        .lines()
        .filter(|l| !l.trim().is_empty() && !l.trim_start().starts_with('#'))
        .map(str::to_string)
        .collect()
}

/// One EPD line of `xiangqi.epd`: a FEN and its reference counts by depth.
#[derive(Debug, Clone)]
pub struct PerftCase {
    pub id: String,
    pub fen: String,
    pub counts: Vec<(u32, u64)>,
}

/// Parses `FEN ;D1 44 ;D2 1920 ;id "name"` lines.
pub fn perft_cases() -> Vec<PerftCase> {
    data_lines("xiangqi.epd")
        .iter()
        .map(|line| {
            let mut fields = line.split(';').map(str::trim);
            let fen = fields.next().expect("FEN field").to_string();
            let mut id = String::new();
            let mut counts = Vec::new();
            for f in fields {
                if let Some(rest) = f.strip_prefix("id") {
                    id = rest.trim().trim_matches('"').to_string();
                } else if let Some(rest) = f.strip_prefix('D') {
                    let (d, n) = rest
                        .split_once(' ')
                        .unwrap_or_else(|| panic!("bad depth field '{f}' in {line}"));
                    counts.push((d.parse().expect("depth"), n.trim().parse().expect("count")));
                } else {
                    panic!("unknown EPD field '{f}' in {line}");
                }
            }
            assert!(!counts.is_empty(), "no counts in {line}");
            PerftCase { id, fen, counts }
        })
        .collect()
}

/// The only run folder under `out`.
pub fn run_dir(out: &Path) -> PathBuf {
    let dirs: Vec<_> = std::fs::read_dir(out).unwrap().flatten().collect();
    assert_eq!(dirs.len(), 1, "{dirs:?}");
    dirs[0].path()
}

/// A run folder's `games.pgn` without the lines that differ between runs of the same games
/// (`[Date]`, `[GameDuration]`).
pub fn pgn_without_clock(dir: &Path) -> String {
    std::fs::read_to_string(dir.join("games.pgn"))
        .unwrap()
        .lines()
        .filter(|l| !l.starts_with("[Date ") && !l.starts_with("[GameDuration "))
        .collect::<Vec<_>>()
        .join("\n")
}

/// The finished games in the journal (`games.jsonl`) of the run folder under `out`, 0 while
/// there is none.
pub fn journal_lines(out: &Path) -> usize {
    journal_lines_at(out, "games.jsonl")
}

/// The lines of the journal at `journal` (a path inside the run folder under `out`), 0 while
/// there is none.
pub fn journal_lines_at(out: &Path, journal: &str) -> usize {
    std::fs::read_dir(out)
        .ok()
        .and_then(|mut d| d.next())
        .and_then(|e| e.ok())
        .and_then(|e| std::fs::read_to_string(e.path().join(journal)).ok())
        .map_or(0, |t| t.lines().count())
}

/// Kills `child` (SIGKILL) once the journal of its run folder under `out` holds `games`
/// finished games (or after 120 s, or when it ends by itself), and returns how many it holds.
pub fn kill_after_games(child: &mut std::process::Child, out: &Path, games: usize) -> usize {
    kill_after_journal_lines(child, out, "games.jsonl", games)
}

/// [`kill_after_games`] for the journal at `journal` inside the run folder.
pub fn kill_after_journal_lines(
    child: &mut std::process::Child,
    out: &Path,
    journal: &str,
    games: usize,
) -> usize {
    let t0 = std::time::Instant::now();
    while journal_lines_at(out, journal) < games && t0.elapsed().as_secs() < 120 {
        if let Ok(Some(_)) = child.try_wait() {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(1));
    }
    let _ = child.kill();
    let _ = child.wait();
    journal_lines_at(out, journal)
}

/// The arguments of a one-generation `xqtune learn` small enough for a test: 6 self-play games
/// at 200 nodes, one epoch of a 32-neuron network, a gate of at most `gate_games` games of at
/// most 60 plies, one thread, seed 5, the run folder under `out`.
pub fn tiny_learn(gate_games: usize, out: &str) -> Vec<String> {
    let games = gate_games.to_string();
    [
        "learn",
        "--generations",
        "1",
        "--games",
        "6",
        "--nodes",
        "200",
        "--epochs",
        "1",
        "--hidden",
        "32",
        "--gate-games",
        &games,
        "--max-plies",
        "60",
        "--verify",
        "none",
        "--concurrency",
        "1",
        "--seed",
        "5",
        "--out",
        out,
    ]
    .map(String::from)
    .to_vec()
}

/// `generations.csv` of the learn run folder `dir`, without its time column.
pub fn generation_table(dir: &Path) -> Vec<String> {
    std::fs::read_to_string(dir.join("generations.csv"))
        .unwrap_or_else(|e| panic!("{}: {e}", dir.join("generations.csv").display()))
        .lines()
        .map(|l| l.rsplit_once(',').expect("a time column").0.to_string())
        .collect()
}
