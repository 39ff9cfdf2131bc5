//! Shared helpers for the integration tests: reading the data files under `tests/data`, the
//! self-hosting harness, and a session with the built binary.

#![allow(dead_code)]

pub mod harness;
pub mod uci_session;

use std::path::PathBuf;

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
