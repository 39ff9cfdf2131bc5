//! Opening suites: one opening per line, each played twice with colours swapped (a game pair),
//! so that an unbalanced opening costs both engines the same (the fishtest/cutechess practice).
//!
//! Line formats (`#` starts a comment, blank lines are skipped):
//! - `startpos` or `startpos moves h2e2 h9g7 ...` (UCI `position` syntax),
//! - `fen <FEN> [moves ...]`,
//! - a bare FEN (its first field contains `/`), optionally followed by `moves ...`,
//! - a bare move list in coordinates from the start position: `h2e2 h9g7 h0g2`.
//!
//! Every move is checked for legality when the file is read, so a bad line is reported with its
//! line number before any game starts.

use crate::core::{FenError, Move, MoveError, Position, START_FEN};
use std::path::Path;
use thiserror::Error;

/// The default suite shipped in `datasets/openings.txt` (see `datasets/README.md`).
pub const DEFAULT_OPENINGS: &str = include_str!("../../datasets/openings.txt");

#[derive(Debug, Error)]
pub enum OpeningError {
    #[error("cannot read opening file {path}: {error}")]
    Io { path: String, error: std::io::Error },
    #[error("line {line}: bad FEN '{fen}': {error}")]
    Fen {
        line: usize,
        fen: String,
        error: FenError,
    },
    #[error("line {line}: move {ply} '{text}': {error}")]
    Move {
        line: usize,
        ply: usize,
        text: String,
        error: MoveError,
    },
    #[error("line {line}: {message}")]
    Syntax { line: usize, message: String },
    #[error("the opening file has no openings")]
    Empty,
}

/// A start position and the moves played from it before the engines take over.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Opening {
    /// FEN of the position the moves start from.
    pub fen: String,
    pub moves: Vec<Move>,
    /// Line number in the source file (1-based; 0 for built-in openings).
    pub line: usize,
}

impl Opening {
    /// The Xiangqi start position with no moves.
    pub fn startpos() -> Opening {
        Opening {
            fen: START_FEN.to_string(),
            moves: Vec::new(),
            line: 0,
        }
    }

    /// The position after the opening moves, with the moves in its history (so repetition
    /// rulings see them).
    pub fn position(&self) -> Position {
        // Both were validated when the opening was built.
        let mut pos = Position::from_fen(&self.fen).expect("opening FEN was validated");
        for &m in &self.moves {
            pos.make_move(m);
        }
        pos
    }

    /// The FEN after the opening moves (the `[FEN]` header of the games).
    pub fn end_fen(&self) -> String {
        self.position().to_fen()
    }

    /// Parses one line (see the module doc); `line` is used in errors.
    pub fn parse(text: &str, line: usize) -> Result<Opening, OpeningError> {
        let tokens: Vec<&str> = text.split_whitespace().collect();
        let Some(&first) = tokens.first() else {
            return Err(OpeningError::Syntax {
                line,
                message: "empty opening".into(),
            });
        };
        let moves_at = tokens.iter().position(|&t| t == "moves");
        let (fen, move_tokens): (String, &[&str]) = if first == "startpos" {
            if tokens.len() > 1 && moves_at != Some(1) {
                return Err(OpeningError::Syntax {
                    line,
                    message: format!("expected 'moves' after 'startpos', found '{}'", tokens[1]),
                });
            }
            (
                START_FEN.to_string(),
                &tokens[(moves_at.unwrap_or(0) + 1)..],
            )
        } else if first == "fen" || first.contains('/') {
            let skip = usize::from(first == "fen");
            let end = moves_at.unwrap_or(tokens.len());
            if end <= skip {
                return Err(OpeningError::Syntax {
                    line,
                    message: "'fen' is not followed by a FEN".into(),
                });
            }
            let rest: &[&str] = match moves_at {
                Some(i) => &tokens[i + 1..],
                None => &[],
            };
            (tokens[skip..end].join(" "), rest)
        } else if moves_at.is_some() {
            return Err(OpeningError::Syntax {
                line,
                message: format!(
                    "expected 'startpos', 'fen' or a FEN before 'moves', found '{first}'"
                ),
            });
        } else {
            (START_FEN.to_string(), &tokens[..])
        };
        let mut pos = Position::from_fen(&fen).map_err(|error| OpeningError::Fen {
            line,
            fen: fen.clone(),
            error,
        })?;
        let mut moves = Vec::with_capacity(move_tokens.len());
        for (i, t) in move_tokens.iter().enumerate() {
            let m = pos.parse_move(t).map_err(|error| OpeningError::Move {
                line,
                ply: i + 1,
                text: t.to_string(),
                error,
            })?;
            pos.make_move(m);
            if let Some(o) = pos.outcome() {
                return Err(OpeningError::Syntax {
                    line,
                    message: format!(
                        "the game is already over after move {} ({})",
                        i + 1,
                        o.reason
                    ),
                });
            }
            moves.push(m);
        }
        if move_tokens.is_empty()
            && let Some(o) = pos.outcome()
        {
            return Err(OpeningError::Syntax {
                line,
                message: format!("the position is already decided ({})", o.reason),
            });
        }
        Ok(Opening { fen, moves, line })
    }
}

/// Parses a whole suite (see the module doc).
pub fn parse_openings(text: &str) -> Result<Vec<Opening>, OpeningError> {
    let mut out = Vec::new();
    for (i, raw) in text.lines().enumerate() {
        let line = raw.split('#').next().unwrap_or("").trim();
        if line.is_empty() {
            continue;
        }
        out.push(Opening::parse(line, i + 1)?);
    }
    if out.is_empty() {
        return Err(OpeningError::Empty);
    }
    Ok(out)
}

/// Reads a suite file.
pub fn load_openings(path: &Path) -> Result<Vec<Opening>, OpeningError> {
    let text = std::fs::read_to_string(path).map_err(|error| OpeningError::Io {
        path: path.display().to_string(),
        error,
    })?;
    parse_openings(&text)
}

/// The shipped default suite.
pub fn default_openings() -> Vec<Opening> {
    parse_openings(DEFAULT_OPENINGS).expect("datasets/openings.txt is valid (tested)")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_suite_is_valid_and_varied() {
        let suite = parse_openings(DEFAULT_OPENINGS).unwrap();
        assert!(suite.len() >= 20, "only {} openings", suite.len());
        let mut seen = std::collections::HashMap::new();
        for o in &suite {
            if let Some(line) = seen.insert(o.position().key(), o.line) {
                panic!("lines {line} and {} reach the same position", o.line);
            }
        }
    }

    #[test]
    fn all_line_formats() {
        let text = "# comment\n\
                    startpos\n\
                    startpos moves h2e2 h9g7   # trailing comment\n\
                    h2e2 h9g7 h0g2\n\
                    fen rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C5C1/9/RNBAKABNR w - - 0 1 moves c3c4\n\
                    \n\
                    rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C5C1/9/RNBAKABNR w - - 0 1\n";
        let s = parse_openings(text).unwrap();
        assert_eq!(s.len(), 5);
        assert_eq!(s[0].moves.len(), 0);
        assert_eq!(s[0].line, 2);
        assert_eq!(s[1].moves.len(), 2);
        assert_eq!(s[2].moves.len(), 3);
        assert_eq!(s[3].moves.len(), 1);
        assert_eq!(s[3].line, 5);
        assert_eq!(s[4].fen, START_FEN);
        let after = s[2].position();
        assert_eq!(after.game_ply(), 3);
        assert_eq!(after.side_to_move(), crate::core::Color::Black);
        assert!(
            s[2].end_fen()
                .starts_with("rnbakab1r/9/1c4nc1/p1p1p1p1p/9/9/P1P1P1P1P/1C2C1N2/9/RNBAKAB1R b"),
            "{}",
            s[2].end_fen()
        );
    }

    #[test]
    fn errors_name_the_line() {
        let e = parse_openings("startpos\nh2e2 h9g7 h2e3\n").unwrap_err();
        let msg = e.to_string();
        assert!(
            msg.contains("line 2") && msg.contains("move 3") && msg.contains("h2e3"),
            "{msg}"
        );
        assert!(matches!(
            e,
            OpeningError::Move {
                line: 2,
                ply: 3,
                ..
            }
        ));

        let e = parse_openings("\n\nfen rnbakabnr/9/1c5c1/p1p1p1p1p/9/9 w\n").unwrap_err();
        assert!(matches!(e, OpeningError::Fen { line: 3, .. }), "{e}");
        assert!(e.to_string().contains("line 3"));

        let e = parse_openings("startpos h2e2\n").unwrap_err();
        assert!(matches!(e, OpeningError::Syntax { line: 1, .. }), "{e}");

        let e = parse_openings("zz9z\n").unwrap_err();
        assert!(
            matches!(
                e,
                OpeningError::Move {
                    line: 1,
                    ply: 1,
                    ..
                }
            ),
            "{e}"
        );

        assert!(matches!(
            parse_openings("# nothing\n\n"),
            Err(OpeningError::Empty)
        ));
        assert!(matches!(
            load_openings(Path::new("/nonexistent/openings.txt")),
            Err(OpeningError::Io { .. })
        ));
    }
}
