//! FEN reading and writing. Text is first parsed into a [`Setup`] (any arrangement of pieces),
//! then validated into a [`Position`] with an error that names what is wrong (shakmaty's
//! `Setup` -> `Position` split).

use super::attacks::*;
use super::position::{Position, Variant};
use super::types::*;
use thiserror::Error;

/// Why a FEN was refused.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum FenError {
    #[error("empty FEN")]
    Empty,
    #[error("board has {0} ranks, expected 10")]
    WrongRankCount(usize),
    #[error("rank {rank} describes {len} squares, expected 9")]
    WrongRankLength { rank: u8, len: usize },
    #[error("unknown piece letter '{0}'")]
    UnknownPiece(char),
    #[error("side to move must be 'w' (or 'r') or 'b', found '{0}'")]
    BadSide(String),
    #[error("{field} must be a non-negative number, found '{value}'")]
    BadNumber { field: &'static str, value: String },
    #[error("too many fields: '{0}'")]
    TooManyFields(String),
    #[error("{0:?} has no king")]
    MissingKing(Color),
    #[error("too many {color:?} {kind}s: {count} (at most {max})")]
    TooManyPieces {
        color: Color,
        kind: &'static str,
        count: u32,
        max: u32,
    },
    #[error("{color:?} king on {square} is outside its palace")]
    KingOutsidePalace { color: Color, square: Square },
    #[error("{color:?} {kind} on {square} stands on a square it can never reach")]
    UnreachableSquare {
        color: Color,
        kind: &'static str,
        square: Square,
    },
    #[error("the side not to move ({0:?}) is in check")]
    SideNotToMoveInCheck(Color),
    #[error("{0}")]
    Jieqi(String),
}

/// A parsed but not yet validated position.
#[derive(Clone, Debug)]
pub struct Setup {
    pub board: [Option<Piece>; 90],
    /// Jieqi dark pieces (`X`/`x`), with the colour only.
    pub dark: [Option<Color>; 90],
    pub side: Color,
    pub rule60: u32,
    pub fullmove: u32,
}

/// Pieces by square, and the colour of each dark (face-down) piece.
pub type ParsedBoard = ([Option<Piece>; 90], [Option<Color>; 90]);

/// Parses the board field (ranks 9 to 0). `X`/`x` mark Jieqi dark pieces.
pub fn parse_board(field: &str) -> Result<ParsedBoard, FenError> {
    let mut board = [None; 90];
    let mut dark = [None; 90];
    let ranks: Vec<&str> = field.split('/').collect();
    if ranks.len() != 10 {
        return Err(FenError::WrongRankCount(ranks.len()));
    }
    for (i, text) in ranks.iter().enumerate() {
        let rank = 9 - i as u8;
        let mut file = 0usize;
        for c in text.chars() {
            if let Some(d) = c.to_digit(10) {
                if d == 0 {
                    return Err(FenError::UnknownPiece(c));
                }
                file += d as usize;
            } else if c == 'X' || c == 'x' {
                if file < 9 {
                    dark[rank as usize * 9 + file] =
                        Some(if c == 'X' { Color::Red } else { Color::Black });
                }
                file += 1;
            } else if let Some(p) = Piece::from_letter(c) {
                if file < 9 {
                    board[rank as usize * 9 + file] = Some(p);
                }
                file += 1;
            } else {
                return Err(FenError::UnknownPiece(c));
            }
        }
        if file != 9 {
            return Err(FenError::WrongRankLength { rank, len: file });
        }
    }
    Ok((board, dark))
}

pub(crate) fn parse_side(s: &str) -> Result<Color, FenError> {
    match s {
        "w" | "r" | "W" | "R" => Ok(Color::Red),
        "b" | "B" => Ok(Color::Black),
        _ => Err(FenError::BadSide(s.to_string())),
    }
}

pub(crate) fn parse_number(field: &'static str, s: &str) -> Result<u32, FenError> {
    s.parse::<u32>()
        .ok()
        .filter(|&n| n < 100_000)
        .ok_or_else(|| FenError::BadNumber {
            field,
            value: s.to_string(),
        })
}

impl Setup {
    /// Parses a Xiangqi FEN: board, side, then optional `-` `-` halfmove fullmove.
    pub fn parse(fen: &str) -> Result<Setup, FenError> {
        let fields: Vec<&str> = fen.split_whitespace().collect();
        if fields.is_empty() {
            return Err(FenError::Empty);
        }
        if fields.len() > 6 {
            return Err(FenError::TooManyFields(fields[6..].join(" ")));
        }
        let (board, dark) = parse_board(fields[0])?;
        let side = match fields.get(1) {
            Some(s) => parse_side(s)?,
            None => Color::Red,
        };
        // Fields 3 and 4 are the chess castling / en-passant placeholders ('-').
        let rule60 = match fields.get(4) {
            Some(s) => parse_number("halfmove clock", s)?,
            None => 0,
        };
        let fullmove = match fields.get(5) {
            Some(s) => parse_number("fullmove number", s)?.max(1),
            None => 1,
        };
        Ok(Setup {
            board,
            dark,
            side,
            rule60,
            fullmove,
        })
    }

    /// Checks that the setup is a legal Xiangqi position and builds it.
    pub fn into_position(self) -> Result<Position, FenError> {
        if self.dark.iter().any(|d| d.is_some()) {
            return Err(FenError::Jieqi(
                "dark pieces (X/x) need a Jieqi FEN with a pool field".into(),
            ));
        }
        let mut counts = [[0u32; 7]; 2];
        for (s, p) in self.board.iter().enumerate() {
            let Some(p) = p else { continue };
            let sq = Square(s as u8);
            let c = p.color.index();
            counts[c][p.kind.index()] += 1;
            let b = sq.bb();
            let ok = match p.kind {
                PieceType::King => {
                    if OWN_PALACE[c] & b == 0 {
                        return Err(FenError::KingOutsidePalace {
                            color: p.color,
                            square: sq,
                        });
                    }
                    true
                }
                PieceType::Advisor => ADVISOR_SQUARES[c] & b != 0,
                PieceType::Elephant => ELEPHANT_SQUARES[c] & b != 0,
                PieceType::Pawn => PAWN_SQUARES[c] & b != 0,
                _ => true,
            };
            if !ok {
                return Err(FenError::UnreachableSquare {
                    color: p.color,
                    kind: p.kind.name(),
                    square: sq,
                });
            }
        }
        for color in Color::ALL {
            if counts[color.index()][0] == 0 {
                return Err(FenError::MissingKing(color));
            }
            for kind in PieceType::ALL {
                let n = counts[color.index()][kind.index()];
                if n > kind.initial_count() {
                    return Err(FenError::TooManyPieces {
                        color,
                        kind: kind.name(),
                        count: n,
                        max: kind.initial_count(),
                    });
                }
            }
        }
        let mut pos = Position::empty(Variant::Xiangqi);
        for (s, p) in self.board.iter().enumerate() {
            if let Some(p) = p {
                pos.put_piece(s, p.code());
            }
        }
        pos.side = self.side;
        pos.rule60 = self.rule60.min(u16::MAX as u32) as u16;
        pos.fullmove = self.fullmove.min(u16::MAX as u32) as u16;
        pos.key = pos.compute_key();
        if pos.king_attacked(self.side.flip()) {
            return Err(FenError::SideNotToMoveInCheck(self.side.flip()));
        }
        pos.in_check = pos.king_attacked(self.side);
        Ok(pos)
    }
}

/// Writes the board field; dark pieces as `X`/`x`.
pub(crate) fn board_field(pos: &Position) -> String {
    let mut out = String::with_capacity(90);
    for r in (0..10u8).rev() {
        let mut empty = 0;
        for f in 0..9u8 {
            let s = Square::new(f, r);
            match pos.piece_at(s) {
                None => empty += 1,
                Some(p) => {
                    if empty > 0 {
                        out.push(char::from(b'0' + empty));
                        empty = 0;
                    }
                    if pos.dark() & s.bb() != 0 {
                        out.push(if p.color == Color::Red { 'X' } else { 'x' });
                    } else {
                        out.push(p.letter());
                    }
                }
            }
        }
        if empty > 0 {
            out.push(char::from(b'0' + empty));
        }
        if r > 0 {
            out.push('/');
        }
    }
    out
}

impl Position {
    /// Reads a Xiangqi FEN (Pikafish's convention). Never panics: any input string either gives
    /// a legal position or an error naming the problem.
    pub fn from_fen(fen: &str) -> Result<Position, FenError> {
        Setup::parse(fen)?.into_position()
    }

    /// Writes the FEN; `from_fen(to_fen())` gives back the same position.
    pub fn to_fen(&self) -> String {
        let side = if self.side == Color::Red { 'w' } else { 'b' };
        format!(
            "{} {} - - {} {}",
            board_field(self),
            side,
            self.rule60,
            self.fullmove
        )
    }
}
