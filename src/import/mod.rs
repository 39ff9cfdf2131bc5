//! Game import: PGN files (plain or `.pgn.gz`; UTF-8, GBK or Big5) with moves in Chinese, WXF or
//! coordinate notation, checked move by move against the rules core.
//!
//! A game is taken whole or not at all: one unreadable start position, unparseable, illegal or
//! ambiguous move, or malformed piece of text skips the game with a [`SkippedGame`] that names
//! the file, game number, move number and text. The library entry points are [`read_games`]
//! (a path) and [`read_games_from_bytes`]; the dataset writer and `xqtune import` are in
//! [`dataset`] and [`cli`].

pub mod cli;
pub mod dataset;
pub mod encoding;
pub mod openings;
pub mod packed;
pub mod pgn;

use crate::core::{Color, GameResult, Move, NotationError, Position, START_FEN};
use encoding_rs::Encoding;
use rayon::prelude::*;
use std::fmt;
use std::io::Read;
use std::path::Path;
use thiserror::Error;

pub use cli::ImportArgs;
pub use dataset::{LabelledPosition, read_dataset};
pub use encoding::encoding_by_name;

/// Errors that stop reading a whole file (problems inside one game only skip that game).
#[derive(Debug, Error)]
pub enum ImportError {
    #[error("cannot read {path}: {source}")]
    Io {
        path: String,
        #[source]
        source: std::io::Error,
    },
    #[error("{path} is not valid gzip data: {source}")]
    Gzip {
        path: String,
        #[source]
        source: std::io::Error,
    },
}

/// A game whose every move was checked legal.
#[derive(Clone, Debug)]
pub struct ImportedGame {
    /// Where it came from: the file name as given (or the name passed with the bytes).
    pub source: String,
    /// 1-based number of the game in its source.
    pub number: usize,
    /// Line of the source where the game starts.
    pub line: usize,
    pub tags: Vec<(String, String)>,
    /// The start position's FEN (from the `[FEN]` tag, normalised; the start position if absent).
    pub start_fen: String,
    pub moves: Vec<Move>,
    /// From the termination marker, or the `[Result]` tag when the marker is missing or `*`.
    pub result: Option<GameResult>,
}

impl ImportedGame {
    pub fn tag(&self, name: &str) -> Option<&str> {
        self.tags
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    /// The start position (the FEN was validated on import).
    pub fn start_position(&self) -> Position {
        Position::from_fen(&self.start_fen).unwrap_or_else(|_| Position::startpos())
    }

    /// A short identifier: `<file name>#<game number>`.
    pub fn id(&self) -> String {
        format!("{}#{}", file_name(&self.source), self.number)
    }

    /// The position after the first `plies` moves (after all of them if the game is shorter):
    /// an opening suite takes the position at the end of each opening line, a bench its FEN.
    pub fn position_after(&self, plies: usize) -> Position {
        let mut pos = self.start_position();
        for &m in self.moves.iter().take(plies) {
            pos.make_move(m);
        }
        pos
    }

    /// The positions of the game: before each move, then after the last one.
    pub fn positions(&self) -> Vec<Position> {
        let mut pos = self.start_position();
        let mut out = Vec::with_capacity(self.moves.len() + 1);
        out.push(pos.clone());
        for &m in &self.moves {
            pos.make_move(m);
            out.push(pos.clone());
        }
        out
    }
}

fn file_name(source: &str) -> &str {
    Path::new(source)
        .file_name()
        .and_then(|s| s.to_str())
        .unwrap_or(source)
}

/// Why a game was skipped.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SkipReason {
    /// The `[FEN]` tag does not give a legal position.
    BadFen { fen: String, error: String },
    /// A move could not be read, is illegal, or is ambiguous.
    BadMove {
        /// 1-based ply in the game.
        ply: usize,
        /// PGN move number (full moves) and whether black made the move.
        move_number: u32,
        side: Color,
        error: NotationError,
        /// The position the move was read in.
        fen: String,
    },
    /// Unterminated comment, variation or tag.
    Malformed(String),
    /// No moves at all.
    NoMoves,
    /// No result (`*` or none) and results were required.
    NoResult,
}

impl SkipReason {
    /// The category used in summaries.
    pub fn category(&self) -> &'static str {
        match self {
            SkipReason::BadFen { .. } => "bad FEN",
            SkipReason::BadMove { error, .. } => error.category(),
            SkipReason::Malformed(_) => "malformed PGN",
            SkipReason::NoMoves => "no moves",
            SkipReason::NoResult => "no result",
        }
    }
}

impl fmt::Display for SkipReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SkipReason::BadFen { fen, error } => write!(f, "bad FEN '{fen}': {error}"),
            SkipReason::BadMove {
                ply,
                move_number,
                side,
                error,
                fen,
            } => {
                let dots = if *side == Color::Black { "..." } else { "." };
                write!(f, "move {move_number}{dots} (ply {ply}): {error} [{fen}]")
            }
            SkipReason::Malformed(s) => write!(f, "{s}"),
            SkipReason::NoMoves => write!(f, "no moves"),
            SkipReason::NoResult => write!(f, "no result"),
        }
    }
}

/// A game that was not imported, and why.
#[derive(Clone, Debug)]
pub struct SkippedGame {
    pub source: String,
    pub number: usize,
    /// Line of the file where the game starts.
    pub line: usize,
    pub reason: SkipReason,
}

impl fmt::Display for SkippedGame {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} game {} (line {}): {}",
            self.source, self.number, self.line, self.reason
        )
    }
}

/// Everything read from one source.
#[derive(Clone, Debug)]
pub struct ImportReport {
    pub source: String,
    /// Name of the encoding used (detected or forced).
    pub encoding: &'static str,
    /// Whether undecodable bytes were replaced (their games will usually be skipped).
    pub had_decode_errors: bool,
    pub games: Vec<ImportedGame>,
    pub skipped: Vec<SkippedGame>,
}

/// Reads every game of a PGN file (`.gz` is decompressed). `encoding` forces an encoding;
/// `None` detects it.
pub fn read_games(
    path: impl AsRef<Path>,
    encoding: Option<&'static Encoding>,
) -> Result<ImportReport, ImportError> {
    let path = path.as_ref();
    let name = path.display().to_string();
    let raw = std::fs::read(path).map_err(|source| ImportError::Io {
        path: name.clone(),
        source,
    })?;
    let bytes = maybe_gunzip(&name, raw)?;
    Ok(read_games_from_bytes(&bytes, &name, encoding))
}

/// Decompresses gzip data (recognised by its magic bytes, whatever the file name).
fn maybe_gunzip(name: &str, raw: Vec<u8>) -> Result<Vec<u8>, ImportError> {
    if raw.len() >= 2 && raw[0] == 0x1f && raw[1] == 0x8b {
        let mut out = Vec::with_capacity(raw.len() * 6);
        flate2::read::MultiGzDecoder::new(&raw[..])
            .read_to_end(&mut out)
            .map_err(|source| ImportError::Gzip {
                path: name.to_string(),
                source,
            })?;
        Ok(out)
    } else {
        Ok(raw)
    }
}

/// Reads every game of PGN bytes (already decompressed). `source` names them in reports.
pub fn read_games_from_bytes(
    bytes: &[u8],
    source: &str,
    encoding: Option<&'static Encoding>,
) -> ImportReport {
    let decoded = encoding::decode(bytes, encoding);
    let raw_games = pgn::split_games(&decoded.text);
    let checked: Vec<Checked> = raw_games
        .into_par_iter()
        .enumerate()
        .map(|(i, raw)| check_game(raw, source, i + 1))
        .collect();
    let mut games = Vec::new();
    let mut skipped = Vec::new();
    for r in checked {
        match r {
            Checked::Imported(g) => games.push(g),
            Checked::Skipped(s) => skipped.push(s),
        }
    }
    ImportReport {
        source: source.to_string(),
        encoding: decoded.encoding.name(),
        had_decode_errors: decoded.had_errors,
        games,
        skipped,
    }
}

/// The outcome of checking one game (not a `Result`: a skipped game is a normal outcome).
enum Checked {
    Imported(ImportedGame),
    Skipped(SkippedGame),
}

/// Validates one game's start position and moves.
fn check_game(raw: pgn::RawGame, source: &str, number: usize) -> Checked {
    match check_game_inner(raw, source, number) {
        Ok(g) => Checked::Imported(g),
        Err(s) => Checked::Skipped(*s),
    }
}

fn check_game_inner(
    raw: pgn::RawGame,
    source: &str,
    number: usize,
) -> Result<ImportedGame, Box<SkippedGame>> {
    let skip = |reason| {
        Box::new(SkippedGame {
            source: source.to_string(),
            number,
            line: raw.line,
            reason,
        })
    };
    if let Some(m) = &raw.malformed {
        return Err(skip(SkipReason::Malformed(m.clone())));
    }
    let fen = raw.tag("FEN").map(str::trim).filter(|f| !f.is_empty());
    let mut pos = match fen {
        None => Position::startpos(),
        Some(f) => match parse_pgn_fen(f) {
            Ok(p) => p,
            Err(error) => {
                return Err(skip(SkipReason::BadFen {
                    fen: f.to_string(),
                    error,
                }));
            }
        },
    };
    let start_fen = if fen.is_some() {
        pos.to_fen()
    } else {
        START_FEN.to_string()
    };
    let mut moves = Vec::with_capacity(raw.moves.len());
    for (i, text) in raw.moves.iter().enumerate() {
        match pos.parse_any(text) {
            Ok(m) => {
                moves.push(m);
                pos.make_move(m);
            }
            Err(error) => {
                return Err(skip(SkipReason::BadMove {
                    ply: i + 1,
                    move_number: pos.fullmove(),
                    side: pos.side_to_move(),
                    error,
                    fen: pos.to_fen(),
                }));
            }
        }
    }
    let result = raw
        .termination
        .as_deref()
        .and_then(GameResult::from_pgn)
        .or_else(|| {
            raw.tag("Result")
                .and_then(|r| GameResult::from_pgn(r.trim()))
        });
    Ok(ImportedGame {
        source: source.to_string(),
        number,
        line: raw.line,
        tags: raw.tags,
        start_fen,
        moves,
        result,
    })
}

/// Reads a `[FEN]` tag value. Real files have quirks the strict FEN reader refuses: trailing
/// text after the six fields, `r`/`red`/`black` for the side, and a missing side (red).
fn parse_pgn_fen(fen: &str) -> Result<Position, String> {
    match Position::from_fen(fen) {
        Ok(p) => Ok(p),
        Err(first) => {
            let mut fields: Vec<String> = fen.split_whitespace().map(str::to_string).collect();
            fields.truncate(6);
            if let Some(side) = fields.get_mut(1) {
                match side.to_ascii_lowercase().as_str() {
                    "red" | "r" | "w" | "white" => *side = "w".into(),
                    "black" | "b" => *side = "b".into(),
                    _ => {}
                }
            }
            // Non-numeric counters (some tools write `-` there) are dropped.
            while fields.len() > 2 && fields.last().is_some_and(|f| f.parse::<u32>().is_err()) {
                fields.pop();
            }
            Position::from_fen(&fields.join(" ")).map_err(|_| first.to_string())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn game_with_illegal_move_is_skipped_whole() {
        let pgn = "[Event \"ok\"]\n1. 炮二平五 馬８進７ 2. 馬二進三 1-0\n\
                   [Event \"bad\"]\n1. 炮二平五 馬８進７ 2. 炮五進九 車９平８ 0-1\n\
                   [Event \"ok2\"]\n1. C2=5 h9g7 *\n";
        let r = read_games_from_bytes(pgn.as_bytes(), "t.pgn", None);
        assert_eq!(r.games.len(), 2);
        assert_eq!(r.games[0].moves.len(), 3);
        assert_eq!(r.games[0].result, Some(GameResult::RedWins));
        assert_eq!(r.games[1].number, 3);
        assert_eq!(
            r.games[0].position_after(2).to_fen(),
            "rnbakab1r/9/1c4nc1/p1p1p1p1p/9/9/P1P1P1P1P/1C2C4/9/RNBAKABNR w - - 2 2"
        );
        assert_eq!(r.games[0].position_after(99).fullmove(), 2);
        assert_eq!(r.games[0].positions().len(), 4);
        assert_eq!(r.games[1].result, None);
        assert_eq!(r.skipped.len(), 1);
        let s = &r.skipped[0];
        assert_eq!((s.number, s.line), (2, 3));
        let text = s.to_string();
        assert!(text.contains("t.pgn game 2"), "{text}");
        assert!(text.contains("move 2."), "{text}");
        assert!(text.contains("炮五進九"), "{text}");
    }

    #[test]
    fn fen_tags_and_quirks() {
        let pgn = "[FEN \"4k4/9/9/9/9/9/9/9/4R4/5K3 b - - 0 1\"]\n1... 將５平４ 1-0\n\
                   [FEN \"3k5/9/9/9/9/9/9/9/4R4/4K4 red\"]\n1. 車五平六 *\n\
                   [FEN \"garbage\"]\n1. h2e2 *\n";
        let r = read_games_from_bytes(pgn.as_bytes(), "f.pgn", None);
        assert_eq!(r.games.len(), 2);
        assert_eq!(r.games[0].moves[0].uci(), "e9d9");
        assert_eq!(r.games[1].moves[0].uci(), "e1d1");
        assert!(matches!(r.skipped[0].reason, SkipReason::BadFen { .. }));
    }
}
