//! FEN reading and writing. Text is first parsed into a [`Setup`] (any arrangement of pieces),
//! then validated into a [`Position`] with an error that names what is wrong (shakmaty's
//! `Setup` -> `Position` split).

use super::attacks::*;
use super::jieqi::{BRIGHT_JIEQI_START_FEN, JIEQI_START_FEN, dark_home_kind};
use super::position::Position;
use super::types::*;
use std::fmt;
use thiserror::Error;

/// The Xiangqi start position.
pub const START_FEN: &str = "rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C5C1/9/RNBAKABNR w - - 0 1";

/// The order in which the FEN writer lists a colour's pool (as in the start FEN of
/// docs/jieqi-rules.md).
const POOL_ORDER: [PieceType; 6] = [
    PieceType::Rook,
    PieceType::Advisor,
    PieceType::Cannon,
    PieceType::Pawn,
    PieceType::Horse,
    PieceType::Elephant,
];

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
    #[error("dark pieces (X/x) need a Jieqi FEN: <board> <side> <pool> <halfmove> <fullmove>")]
    DarkNeedsPool,
    #[error("{color:?} dark piece on {square} is not on one of {color:?}'s starting squares")]
    DarkOffHome { color: Color, square: Square },
    #[error("bad pool field '{field}': {why}")]
    PoolSyntax { field: String, why: String },
    #[error("{color:?} has {dark} dark pieces on the board but only {pool} in its pool")]
    PoolTooSmall { color: Color, pool: u32, dark: u32 },
    #[error("too many {color:?} {kind}s: {revealed} face up + {pool} in the pool (at most {max})")]
    TooManyJieqi {
        color: Color,
        kind: &'static str,
        revealed: u32,
        pool: u32,
        max: u32,
    },
    #[error("hidden field '{field}' has {found} entries for {expected} dark pieces")]
    HiddenLength {
        field: String,
        expected: usize,
        found: usize,
    },
    #[error("hidden field: '{letter}' for the dark piece on {square}: {why}")]
    HiddenBad {
        letter: char,
        square: Square,
        why: &'static str,
    },
    #[error("hidden field names {hidden} {color:?} {kind}(s) but the pool holds only {pool}")]
    HiddenNotInPool {
        color: Color,
        kind: &'static str,
        hidden: u32,
        pool: u32,
    },
    #[error("a {0} FEN cannot describe this position: {1}")]
    VariantMismatch(Variant, &'static str),
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
    /// Jieqi pool field (`None`: the FEN had the Xiangqi layout).
    pub pool: Option<[[u8; 7]; 2]>,
    /// Jieqi hidden field: the true kind of the dark piece on a square, if given.
    pub hidden: [Option<PieceType>; 90],
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

/// Whether the fields have the Jieqi layout `<board> <side> <pool> <halfmove> <fullmove>
/// [<hidden>]`: a third field other than `-`, or `-` followed by a number (a Xiangqi FEN has
/// `- -` there).
fn is_jieqi_layout(fields: &[&str]) -> bool {
    match fields.get(2) {
        None => false,
        Some(&"-") => fields.get(3).is_some_and(|f| *f != "-"),
        Some(_) => true,
    }
}

/// Reads the hidden field against the dark pieces of `dark` (board order: ranks 9 to 0, files
/// a to i).
fn parse_hidden(
    field: &str,
    dark: &[Option<Color>; 90],
) -> Result<[Option<PieceType>; 90], FenError> {
    let squares: Vec<usize> = (0..10)
        .rev()
        .flat_map(|r| (0..9).map(move |f| r * 9 + f))
        .filter(|&s| dark[s].is_some())
        .collect();
    let letters: Vec<char> = field.chars().collect();
    if letters.len() != squares.len() {
        return Err(FenError::HiddenLength {
            field: field.to_string(),
            expected: squares.len(),
            found: letters.len(),
        });
    }
    let mut hidden = [None; 90];
    for (&s, &c) in squares.iter().zip(&letters) {
        if c == '?' {
            continue;
        }
        let square = Square(s as u8);
        let bad = |why| FenError::HiddenBad {
            letter: c,
            square,
            why,
        };
        let p = Piece::from_letter(c).ok_or_else(|| bad("not a piece letter or '?'"))?;
        if p.kind == PieceType::King {
            return Err(bad("a king is never dark"));
        }
        if Some(p.color) != dark[s] {
            return Err(bad("the letter's case gives the other colour"));
        }
        hidden[s] = Some(p.kind);
    }
    Ok(hidden)
}

/// Parses the pool field: `-`, or letters each followed by an optional count (`R2A2...r2`),
/// any order, red upper case, black lower case. A letter without a count means one.
pub fn parse_pool(field: &str) -> Result<[[u8; 7]; 2], FenError> {
    let mut pool = [[0u8; 7]; 2];
    if field == "-" {
        return Ok(pool);
    }
    let bad = |why: String| FenError::PoolSyntax {
        field: field.to_string(),
        why,
    };
    let mut seen = [[false; 7]; 2];
    let chars: Vec<char> = field.chars().collect();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let piece = Piece::from_letter(c)
            .ok_or_else(|| bad(format!("'{c}' is not a piece letter (RABNCP, any case)")))?;
        if piece.kind == PieceType::King {
            return Err(bad("a king is never hidden".into()));
        }
        let (ci, ki) = (piece.color.index(), piece.kind.index());
        if seen[ci][ki] {
            return Err(bad(format!("'{c}' appears twice")));
        }
        seen[ci][ki] = true;
        i += 1;
        let start = i;
        while i < chars.len() && chars[i].is_ascii_digit() {
            i += 1;
        }
        let n: u32 = if i == start {
            1
        } else {
            let digits: String = chars[start..i].iter().collect();
            digits
                .parse()
                .ok()
                .filter(|&n| n <= 15)
                .ok_or_else(|| bad(format!("count '{digits}' for '{c}' is not 0-15")))?
        };
        pool[ci][ki] = n as u8;
    }
    Ok(pool)
}

/// Writes the pool field: red then black, kinds in `R A C P N B` order, zero counts left out,
/// `-` when empty.
pub fn pool_field(pool: &[[u8; 7]; 2]) -> String {
    let mut out = String::new();
    for color in Color::ALL {
        for kind in POOL_ORDER {
            let n = pool[color.index()][kind.index()];
            if n > 0 {
                out.push(Piece::new(color, kind).letter());
                out.push_str(&n.to_string());
            }
        }
    }
    if out.is_empty() { "-".into() } else { out }
}

/// The hidden field (arbiter): the identity of each dark piece in board order, `?` where
/// unknown. `None` when no identity is known (the field is then left out).
pub fn hidden_field(pos: &Position) -> Option<String> {
    let mut out = String::new();
    let mut any = false;
    for r in (0..10u8).rev() {
        for f in 0..9u8 {
            let s = Square::new(f, r);
            if !pos.is_dark(s) {
                continue;
            }
            let color = if pos.pieces(Color::Red) & s.bb() != 0 {
                Color::Red
            } else {
                Color::Black
            };
            match pos.hidden_kind(s) {
                Some(k) => {
                    any = true;
                    out.push(Piece::new(color, k).letter());
                }
                None => out.push('?'),
            }
        }
    }
    any.then_some(out)
}

impl Setup {
    /// Parses a FEN of either layout: Xiangqi (board, side, then optional `-` `-` halfmove
    /// fullmove) or Jieqi (board, side, pool, halfmove, fullmove, optional hidden field).
    pub fn parse(fen: &str) -> Result<Setup, FenError> {
        let fields: Vec<&str> = fen.split_whitespace().collect();
        if fields.is_empty() {
            return Err(FenError::Empty);
        }
        if fields.len() > 6 {
            return Err(FenError::TooManyFields(fields[6..].join(" ")));
        }
        let jieqi = is_jieqi_layout(&fields);
        let (board, dark) = parse_board(fields[0])?;
        // The Jieqi layout has at least three fields, so always names the side.
        let side = match fields.get(1) {
            Some(s) => parse_side(s)?,
            None => Color::Red,
        };
        // Jieqi: the pool, then the clocks. Xiangqi: fields 3 and 4 are the chess castling /
        // en-passant placeholders ('-'), then the clocks.
        let pool = if jieqi {
            Some(parse_pool(fields[2])?)
        } else {
            None
        };
        let clocks = if jieqi { 3 } else { 4 };
        let rule60 = match fields.get(clocks) {
            Some(s) => parse_number("halfmove clock", s)?,
            None => 0,
        };
        let fullmove = match fields.get(clocks + 1) {
            Some(s) => parse_number("fullmove number", s)?.max(1),
            None => 1,
        };
        let hidden = match fields.get(5).filter(|_| jieqi) {
            Some(f) => parse_hidden(f, &dark)?,
            None => [None; 90],
        };
        Ok(Setup {
            board,
            dark,
            side,
            rule60,
            fullmove,
            pool,
            hidden,
        })
    }

    /// Validates the setup as the variant its FEN layout says (a pool field means Jieqi).
    pub fn into_position(self) -> Result<Position, FenError> {
        if self.pool.is_some() {
            self.into_jieqi()
        } else {
            self.into_xiangqi()
        }
    }

    /// Validates the setup as `variant`: a Xiangqi-layout FEN read as Jieqi is bright Jieqi
    /// (empty pools); a Jieqi-layout FEN read as Xiangqi must have no dark pieces and an empty
    /// pool.
    pub fn into_position_as(mut self, variant: Variant) -> Result<Position, FenError> {
        match variant {
            Variant::Jieqi => {
                self.pool.get_or_insert([[0; 7]; 2]);
                self.into_jieqi()
            }
            Variant::Xiangqi => {
                if self.dark.iter().any(|d| d.is_some()) {
                    return Err(FenError::VariantMismatch(
                        Variant::Xiangqi,
                        "it has dark pieces",
                    ));
                }
                if self.pool.is_some_and(|p| p != [[0; 7]; 2]) {
                    return Err(FenError::VariantMismatch(
                        Variant::Xiangqi,
                        "it has a hidden pool",
                    ));
                }
                self.into_xiangqi()
            }
        }
    }

    /// Checks that the setup is a legal Jieqi position and builds it: kings in their palaces,
    /// dark pieces on their own colour's starting squares, pools large enough for the dark
    /// pieces and within the initial set, hidden identities drawn from the pool. Revealed
    /// advisors, elephants and pawns may stand anywhere: a dark piece can reveal as any kind on
    /// any square its home kind reaches (a rook sliding along the back rank can turn out a
    /// pawn), and Jieqi advisors and elephants are free to roam.
    fn into_jieqi(self) -> Result<Position, FenError> {
        let pool = self.pool.unwrap_or([[0; 7]; 2]);
        let mut revealed = [[0u32; 7]; 2];
        let mut dark_count = [0u32; 2];
        let mut hidden_count = [[0u32; 7]; 2];
        for s in 0..90 {
            let sq = Square(s as u8);
            if let Some(color) = self.dark[s] {
                if dark_home_kind(color, s).is_none() {
                    return Err(FenError::DarkOffHome { color, square: sq });
                }
                dark_count[color.index()] += 1;
                if let Some(k) = self.hidden[s] {
                    hidden_count[color.index()][k.index()] += 1;
                }
            }
            let Some(p) = self.board[s] else { continue };
            revealed[p.color.index()][p.kind.index()] += 1;
            if p.kind == PieceType::King && OWN_PALACE[p.color.index()] & sq.bb() == 0 {
                return Err(FenError::KingOutsidePalace {
                    color: p.color,
                    square: sq,
                });
            }
        }
        for color in Color::ALL {
            let c = color.index();
            if revealed[c][0] == 0 {
                return Err(FenError::MissingKing(color));
            }
            for kind in PieceType::ALL {
                let (r, p) = (revealed[c][kind.index()], pool[c][kind.index()] as u32);
                if r + p > kind.initial_count() {
                    return Err(FenError::TooManyJieqi {
                        color,
                        kind: kind.name(),
                        revealed: r,
                        pool: p,
                        max: kind.initial_count(),
                    });
                }
                let h = hidden_count[c][kind.index()];
                if h > p {
                    return Err(FenError::HiddenNotInPool {
                        color,
                        kind: kind.name(),
                        hidden: h,
                        pool: p,
                    });
                }
            }
            let total: u32 = pool[c].iter().map(|&n| n as u32).sum();
            if total < dark_count[c] {
                return Err(FenError::PoolTooSmall {
                    color,
                    pool: total,
                    dark: dark_count[c],
                });
            }
        }
        let mut pos = Position::empty(Variant::Jieqi);
        for s in 0..90 {
            if let Some(p) = self.board[s] {
                pos.put_piece(s, p.code());
            } else if let Some(color) = self.dark[s] {
                let kind = dark_home_kind(color, s).expect("checked above");
                pos.put_piece(s, Piece::new(color, kind).code());
                pos.dark |= 1u128 << s;
                pos.hidden[s] = self.hidden[s].map_or(0, |k| k as u8 + 1);
            }
        }
        pos.pool = pool;
        self.finish(pos)
    }

    /// Side, counters, key and the check tests shared by both variants.
    fn finish(self, mut pos: Position) -> Result<Position, FenError> {
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

    /// Checks that the setup is a legal Xiangqi position and builds it.
    fn into_xiangqi(self) -> Result<Position, FenError> {
        if self.dark.iter().any(|d| d.is_some()) {
            return Err(FenError::DarkNeedsPool);
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
        self.finish(pos)
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
    /// The Xiangqi start position.
    pub fn startpos() -> Position {
        Position::from_fen(START_FEN).expect("start FEN is valid")
    }

    /// The Jieqi start position as a player sees it (no hidden identities).
    pub fn jieqi_startpos() -> Position {
        Position::from_fen(JIEQI_START_FEN).expect("Jieqi start FEN is valid")
    }

    /// The bright-Jieqi start: Xiangqi's set-up, all face up, Jieqi movement.
    pub fn bright_jieqi_startpos() -> Position {
        Position::from_fen_variant(BRIGHT_JIEQI_START_FEN, Variant::Jieqi)
            .expect("bright Jieqi start FEN is valid")
    }

    /// The start position of `variant` (the Jieqi one as a player sees it).
    pub fn startpos_of(variant: Variant) -> Position {
        match variant {
            Variant::Xiangqi => Position::startpos(),
            Variant::Jieqi => Position::jieqi_startpos(),
        }
    }

    /// Reads a FEN, Xiangqi (Pikafish's convention, `<board> <side> - - <halfmove> <fullmove>`)
    /// or Jieqi (`<board> <side> <pool> <halfmove> <fullmove> [<hidden>]`,
    /// docs/jieqi-rules.md); the layout decides the variant. Never panics: any input string
    /// either gives a legal position or an error naming the problem.
    pub fn from_fen(fen: &str) -> Result<Position, FenError> {
        Setup::parse(fen)?.into_position()
    }

    /// Reads a FEN of either layout as `variant` (a fully revealed position cannot tell):
    /// a Xiangqi FEN read as Jieqi gives bright Jieqi.
    pub fn from_fen_variant(fen: &str, variant: Variant) -> Result<Position, FenError> {
        Setup::parse(fen)?.into_position_as(variant)
    }

    /// Writes the FEN in the layout of the position's variant, with the hidden field when some
    /// dark piece's identity is recorded; `from_fen(to_fen())` gives back the same position.
    pub fn to_fen(&self) -> String {
        let side = if self.side == Color::Red { 'w' } else { 'b' };
        match self.variant {
            Variant::Xiangqi => format!(
                "{} {} - - {} {}",
                board_field(self),
                side,
                self.rule60,
                self.fullmove
            ),
            Variant::Jieqi => {
                let mut s = format!(
                    "{} {} {} {} {}",
                    board_field(self),
                    side,
                    pool_field(&self.pool),
                    self.rule60,
                    self.fullmove
                );
                if let Some(h) = hidden_field(self) {
                    s.push(' ');
                    s.push_str(&h);
                }
                s
            }
        }
    }
}

/// A position prints as its FEN: short, exact, and readable back.
impl fmt::Debug for Position {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Position({})", self.to_fen())
    }
}

impl fmt::Display for Position {
    /// A text diagram, rank 9 at the top, as a terminal user reads the board.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for r in (0..10).rev() {
            write!(f, "{r} ")?;
            for file in 0..9 {
                let s = Square::new(file, r);
                let c = match self.piece_at(s) {
                    Some(p) if self.dark & s.bb() != 0 => {
                        if p.color == Color::Red {
                            'X'
                        } else {
                            'x'
                        }
                    }
                    Some(p) => p.letter(),
                    None => '.',
                };
                write!(f, " {c}")?;
            }
            writeln!(f)?;
        }
        writeln!(f, "   a b c d e f g h i")?;
        write!(f, "{}", self.to_fen())
    }
}
