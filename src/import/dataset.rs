//! Labelled position datasets: which positions of a game to keep, and the text format.
//!
//! Format (one position per line, UTF-8, optionally gzip-compressed when the file name ends in
//! `.gz`):
//!
//! ```text
//! <FEN> | <result> | <id>
//! rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C5C1/9/RNBAKABNR w - - 0 1 | 1-0 | games.pgn.gz#12:0
//! ```
//!
//! `<result>` is the game result from **red's** point of view in PGN form (`1-0` red won, `0-1`
//! black won, `1/2-1/2` draw, `*` unknown), whoever is to move in the FEN; a Texel tuner turns it
//! into 1, 0 or 0.5 for red. `<id>` is `<source file>#<game number>:<ply>` (ply 0 = the game's
//! start position). Lines starting with `#` are comments.

use super::ImportedGame;
use crate::core::{GameResult, Position};
use rand::SeedableRng;
use rand::seq::index::sample;
use std::io::{BufRead, BufReader, Read};
use std::path::Path;
use thiserror::Error;

/// One line of a dataset.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LabelledPosition {
    pub fen: String,
    /// `None` for `*` (the game had no result).
    pub result: Option<GameResult>,
    pub id: String,
}

impl LabelledPosition {
    pub fn to_line(&self) -> String {
        let r = self.result.map(|r| r.pgn()).unwrap_or("*");
        format!("{} | {} | {}", self.fen, r, self.id)
    }

    /// Parses one dataset line (the FEN is checked to give a legal position).
    pub fn parse_line(line: &str) -> Result<LabelledPosition, String> {
        let mut parts = line.split('|').map(str::trim);
        let (Some(fen), Some(result)) = (parts.next(), parts.next()) else {
            return Err(format!("expected 'FEN | result | id', found '{line}'"));
        };
        let id = parts.next().unwrap_or("").to_string();
        if parts.next().is_some() {
            return Err(format!("too many '|' fields in '{line}'"));
        }
        Position::from_fen(fen).map_err(|e| format!("bad FEN '{fen}': {e}"))?;
        let result = match result {
            "*" => None,
            r => Some(
                GameResult::from_pgn(r)
                    .ok_or_else(|| format!("result must be 1-0, 0-1, 1/2-1/2 or *, found '{r}'"))?,
            ),
        };
        Ok(LabelledPosition {
            fen: fen.to_string(),
            result,
            id,
        })
    }
}

#[derive(Debug, Error)]
pub enum DatasetError {
    #[error("cannot read {path}: {source}")]
    Io {
        path: String,
        #[source]
        source: std::io::Error,
    },
    #[error("{path} line {line}: {message}")]
    Line {
        path: String,
        line: usize,
        message: String,
    },
}

/// Reads a dataset file (`.gz` is decompressed). Lines with result `*` are kept with
/// `result: None`; callers that need labels filter them.
pub fn read_dataset(path: impl AsRef<Path>) -> Result<Vec<LabelledPosition>, DatasetError> {
    let path = path.as_ref();
    let name = path.display().to_string();
    let io = |source| DatasetError::Io {
        path: name.clone(),
        source,
    };
    let file = std::fs::File::open(path).map_err(io)?;
    let reader: Box<dyn Read> = if name.ends_with(".gz") {
        Box::new(flate2::read::MultiGzDecoder::new(file))
    } else {
        Box::new(file)
    };
    let mut out = Vec::new();
    for (i, line) in BufReader::new(reader).lines().enumerate() {
        let line = line.map_err(io)?;
        let t = line.trim();
        if t.is_empty() || t.starts_with('#') {
            continue;
        }
        out.push(
            LabelledPosition::parse_line(t).map_err(|message| DatasetError::Line {
                path: name.clone(),
                line: i + 1,
                message,
            })?,
        );
    }
    Ok(out)
}

/// Which positions of a game go into the dataset.
#[derive(Clone, Debug, Default)]
pub struct Selection {
    /// Keep only positions that are not in check and have no capture winning material (SEE).
    pub quiet_only: bool,
    /// Drop the first N plies (the positions before moves 1..N; opening book lines).
    pub skip_plies: usize,
    /// Keep at most K positions per game, chosen at random (seeded by `seed` and the game id).
    pub sample: Option<usize>,
    pub seed: u64,
}

/// The positions of `game` that `sel` keeps, in game order, labelled with the game's result.
pub fn select_positions(game: &ImportedGame, sel: &Selection) -> Vec<LabelledPosition> {
    let id = game.id();
    let mut pos = game.start_position();
    let mut kept: Vec<(usize, String)> = Vec::new();
    for ply in 0..=game.moves.len() {
        if ply >= sel.skip_plies && (!sel.quiet_only || pos.is_quiet()) {
            kept.push((ply, pos.to_fen()));
        }
        if let Some(&m) = game.moves.get(ply) {
            pos.make_move(m);
        }
    }
    if let Some(k) = sel.sample
        && kept.len() > k
    {
        let mut rng =
            rand_chacha::ChaCha8Rng::seed_from_u64(sel.seed ^ crate::util::fnv1a(id.bytes()));
        let mut idx = sample(&mut rng, kept.len(), k).into_vec();
        idx.sort_unstable();
        kept = idx.into_iter().map(|i| kept[i].clone()).collect();
    }
    kept.into_iter()
        .map(|(ply, fen)| LabelledPosition {
            fen,
            result: game.result,
            id: format!("{id}:{ply}"),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::import::read_games_from_bytes;

    fn game() -> ImportedGame {
        let pgn = "1. 炮二平五 馬８進７ 2. 馬二進三 車９平８ 3. 車一平二 卒７進１ 4. 車二進六 馬２進３ 0-1";
        read_games_from_bytes(pgn.as_bytes(), "x.pgn", None)
            .games
            .remove(0)
    }

    #[test]
    fn selection_options() {
        let g = game();
        let all = select_positions(&g, &Selection::default());
        assert_eq!(all.len(), 9);
        assert_eq!(all[0].id, "x.pgn#1:0");
        assert_eq!(all[0].result, Some(GameResult::BlackWins));
        let late = select_positions(
            &g,
            &Selection {
                skip_plies: 4,
                ..Selection::default()
            },
        );
        assert_eq!(late.len(), 5);
        assert_eq!(late[0].id, "x.pgn#1:4");
        let s1 = Selection {
            sample: Some(3),
            seed: 9,
            ..Selection::default()
        };
        let a = select_positions(&g, &s1);
        assert_eq!(a.len(), 3);
        assert_eq!(a, select_positions(&g, &s1));
        // Quiet positions: the cannon that takes the centre pawn (ply 3, black to move) hangs
        // to the horse, so that position is not quiet; the start position is.
        let pgn = "1. 炮二平五 馬８進７ 2. 炮五進四 馬７進５ 0-1";
        let g = read_games_from_bytes(pgn.as_bytes(), "q.pgn", None)
            .games
            .remove(0);
        let quiet = select_positions(
            &g,
            &Selection {
                quiet_only: true,
                ..Selection::default()
            },
        );
        let ids: Vec<&str> = quiet.iter().map(|q| q.id.as_str()).collect();
        assert!(ids.contains(&"q.pgn#1:0"), "{ids:?}");
        assert!(!ids.contains(&"q.pgn#1:3"), "{ids:?}");
        for q in &quiet {
            assert!(Position::from_fen(&q.fen).unwrap().is_quiet());
        }
    }

    #[test]
    fn line_round_trip_and_errors() {
        let g = game();
        for p in select_positions(&g, &Selection::default()) {
            assert_eq!(LabelledPosition::parse_line(&p.to_line()), Ok(p));
        }
        assert!(LabelledPosition::parse_line("nonsense").is_err());
        let bad = "rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C5C1/9/RNBAKABNR w - - 0 1 | 2-0 | x";
        assert!(
            LabelledPosition::parse_line(bad)
                .unwrap_err()
                .contains("2-0")
        );
    }
}
