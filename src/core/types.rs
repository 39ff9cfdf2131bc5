//! Basic value types of the rules core: colours, piece kinds, squares, moves and the variant.
//!
//! Squares are numbered `rank * 9 + file` with files a-i from red's left (0-8) and ranks 0-9
//! from red's back rank, the convention of Pikafish and of UCI for Xiangqi.

use std::fmt;
use std::str::FromStr;
use thiserror::Error;

/// Which game a position follows: the variant is data in the position, not a fork of the code.
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, Hash, Default, serde::Serialize, serde::Deserialize,
)]
#[serde(rename_all = "lowercase")]
pub enum Variant {
    #[default]
    Xiangqi,
    Jieqi,
}

impl fmt::Display for Variant {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Variant::Xiangqi => "xiangqi",
            Variant::Jieqi => "jieqi",
        })
    }
}

impl FromStr for Variant {
    type Err = OptionError;
    fn from_str(s: &str) -> Result<Self, OptionError> {
        match s.trim().to_ascii_lowercase().as_str() {
            "xiangqi" => Ok(Variant::Xiangqi),
            "jieqi" => Ok(Variant::Jieqi),
            _ => Err(OptionError {
                option: "variant",
                value: s.to_string(),
                expected: "xiangqi or jieqi",
            }),
        }
    }
}

/// A rule option value (variant, capture-reveal rule) that was not understood.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[error("unknown {option} '{value}' (expected {expected})")]
pub struct OptionError {
    pub option: &'static str,
    pub value: String,
    pub expected: &'static str,
}

/// The side a piece belongs to. Red moves first and has upper-case FEN letters.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[repr(u8)]
pub enum Color {
    Red = 0,
    Black = 1,
}

impl Color {
    pub const ALL: [Color; 2] = [Color::Red, Color::Black];

    #[inline(always)]
    pub const fn flip(self) -> Color {
        match self {
            Color::Red => Color::Black,
            Color::Black => Color::Red,
        }
    }

    #[inline(always)]
    pub const fn index(self) -> usize {
        self as usize
    }

    /// +1 for red, -1 for black: converts a red-relative score to this side's view.
    #[inline(always)]
    pub const fn sign(self) -> i32 {
        match self {
            Color::Red => 1,
            Color::Black => -1,
        }
    }
}

/// The seven Xiangqi piece kinds. The discriminants index tables everywhere.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[repr(u8)]
pub enum PieceType {
    King = 0,
    Advisor = 1,
    Elephant = 2,
    Horse = 3,
    Rook = 4,
    Cannon = 5,
    Pawn = 6,
}

impl PieceType {
    pub const ALL: [PieceType; 7] = [
        PieceType::King,
        PieceType::Advisor,
        PieceType::Elephant,
        PieceType::Horse,
        PieceType::Rook,
        PieceType::Cannon,
        PieceType::Pawn,
    ];

    #[inline(always)]
    pub const fn index(self) -> usize {
        self as usize
    }

    #[inline(always)]
    pub const fn from_index(i: usize) -> PieceType {
        PieceType::ALL[i]
    }

    /// Upper-case FEN letter (`KABNRCP`).
    pub const fn letter(self) -> char {
        match self {
            PieceType::King => 'K',
            PieceType::Advisor => 'A',
            PieceType::Elephant => 'B',
            PieceType::Horse => 'N',
            PieceType::Rook => 'R',
            PieceType::Cannon => 'C',
            PieceType::Pawn => 'P',
        }
    }

    /// Parses a FEN letter of either case; `H` and `E` are accepted for horse and elephant.
    pub fn from_letter(c: char) -> Option<PieceType> {
        Some(match c.to_ascii_uppercase() {
            'K' => PieceType::King,
            'A' => PieceType::Advisor,
            'B' | 'E' => PieceType::Elephant,
            'N' | 'H' => PieceType::Horse,
            'R' => PieceType::Rook,
            'C' => PieceType::Cannon,
            'P' => PieceType::Pawn,
            _ => return None,
        })
    }

    /// How many of this kind each side has at the start.
    pub const fn initial_count(self) -> u32 {
        match self {
            PieceType::King => 1,
            PieceType::Pawn => 5,
            _ => 2,
        }
    }

    pub const fn name(self) -> &'static str {
        match self {
            PieceType::King => "king",
            PieceType::Advisor => "advisor",
            PieceType::Elephant => "elephant",
            PieceType::Horse => "horse",
            PieceType::Rook => "rook",
            PieceType::Cannon => "cannon",
            PieceType::Pawn => "pawn",
        }
    }
}

/// A coloured piece, packed as `1 + color * 7 + kind` so that 0 can mean "empty" on the board.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Piece {
    pub color: Color,
    pub kind: PieceType,
}

impl Piece {
    #[inline(always)]
    pub const fn new(color: Color, kind: PieceType) -> Piece {
        Piece { color, kind }
    }

    #[inline(always)]
    pub const fn code(self) -> u8 {
        1 + self.color as u8 * 7 + self.kind as u8
    }

    #[inline(always)]
    pub const fn from_code(code: u8) -> Option<Piece> {
        if code == 0 || code > 14 {
            return None;
        }
        let c = code - 1;
        let color = if c >= 7 { Color::Black } else { Color::Red };
        Some(Piece {
            color,
            kind: PieceType::ALL[(c % 7) as usize],
        })
    }

    /// FEN letter: upper case for red, lower case for black.
    pub fn letter(self) -> char {
        let l = self.kind.letter();
        match self.color {
            Color::Red => l,
            Color::Black => l.to_ascii_lowercase(),
        }
    }

    pub fn from_letter(c: char) -> Option<Piece> {
        let kind = PieceType::from_letter(c)?;
        let color = if c.is_ascii_uppercase() {
            Color::Red
        } else {
            Color::Black
        };
        Some(Piece { color, kind })
    }
}

/// A square of the 9x10 board, `rank * 9 + file`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Square(pub u8);

impl Square {
    pub const COUNT: usize = 90;

    #[inline(always)]
    pub const fn new(file: u8, rank: u8) -> Square {
        Square(rank * 9 + file)
    }

    #[inline(always)]
    pub const fn file(self) -> u8 {
        self.0 % 9
    }

    #[inline(always)]
    pub const fn rank(self) -> u8 {
        self.0 / 9
    }

    #[inline(always)]
    pub const fn index(self) -> usize {
        self.0 as usize
    }

    #[inline(always)]
    pub const fn bb(self) -> u128 {
        1u128 << self.0
    }

    /// The square seen from the other side (rank mirrored): used to share tables between colours.
    #[inline(always)]
    pub const fn flip_rank(self) -> Square {
        Square::new(self.file(), 9 - self.rank())
    }

    /// Parses `a0`..`i9`.
    pub fn parse(s: &str) -> Option<Square> {
        let b = s.as_bytes();
        if b.len() != 2 {
            return None;
        }
        let f = b[0].to_ascii_lowercase();
        if !(b'a'..=b'i').contains(&f) || !b[1].is_ascii_digit() {
            return None;
        }
        Some(Square::new(f - b'a', b[1] - b'0'))
    }
}

impl fmt::Display for Square {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}{}", (b'a' + self.file()) as char, self.rank())
    }
}

/// A move: from and to square, plus (for Jieqi) the type revealed by a dark mover and the type
/// learned of a captured dark piece. Xiangqi moves use only the two squares.
///
/// Layout: bits 0-6 from, 7-13 to, 14-16 revealed kind + 1 (0 = none), 17-19 captured-dark
/// kind + 1 (0 = none).
#[derive(Clone, Copy, PartialEq, Eq, Hash, Default, serde::Serialize, serde::Deserialize)]
#[serde(transparent)]
pub struct Move(pub u32);

const _: () = assert!(std::mem::size_of::<Move>() == 4);

impl Move {
    pub const NULL: Move = Move(0);

    #[inline(always)]
    pub const fn new(from: Square, to: Square) -> Move {
        Move(from.0 as u32 | (to.0 as u32) << 7)
    }

    #[inline(always)]
    pub const fn from(self) -> Square {
        Square((self.0 & 0x7f) as u8)
    }

    #[inline(always)]
    pub const fn to(self) -> Square {
        Square(((self.0 >> 7) & 0x7f) as u8)
    }

    #[inline(always)]
    pub const fn is_null(self) -> bool {
        self.0 == 0
    }

    /// The squares only, without the Jieqi suffixes.
    #[inline(always)]
    pub const fn squares(self) -> Move {
        Move(self.0 & 0x3fff)
    }

    /// Bit offset of the mover's revealed kind (3 bits, kind + 1, 0: none).
    const REVEAL_SHIFT: u32 = 14;
    /// Bit offset of the captured piece's revealed kind (3 bits, kind + 1, 0: none).
    const CAPTURED_REVEAL_SHIFT: u32 = 17;

    /// The move with `kind` in the 3-bit kind field at `shift`.
    #[inline(always)]
    const fn with_kind_at(self, shift: u32, kind: PieceType) -> Move {
        Move((self.0 & !(7 << shift)) | ((kind as u32 + 1) << shift))
    }

    /// The kind in the 3-bit kind field at `shift`, if any.
    #[inline(always)]
    const fn kind_at(self, shift: u32) -> Option<PieceType> {
        let v = (self.0 >> shift) & 7;
        if v == 0 {
            None
        } else {
            Some(PieceType::ALL[(v - 1) as usize])
        }
    }

    #[inline(always)]
    pub const fn with_reveal(self, kind: PieceType) -> Move {
        self.with_kind_at(Self::REVEAL_SHIFT, kind)
    }

    #[inline(always)]
    pub const fn reveal(self) -> Option<PieceType> {
        self.kind_at(Self::REVEAL_SHIFT)
    }

    #[inline(always)]
    pub const fn with_captured_reveal(self, kind: PieceType) -> Move {
        self.with_kind_at(Self::CAPTURED_REVEAL_SHIFT, kind)
    }

    #[inline(always)]
    pub const fn captured_reveal(self) -> Option<PieceType> {
        self.kind_at(Self::CAPTURED_REVEAL_SHIFT)
    }

    /// The four-character coordinate form (`h2e2`), without suffixes.
    pub fn uci(self) -> String {
        format!("{}{}", self.from(), self.to())
    }
}

impl fmt::Display for Move {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.is_null() {
            return write!(f, "0000");
        }
        write!(f, "{}{}", self.from(), self.to())
    }
}

impl fmt::Debug for Move {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{self}")?;
        if let Some(k) = self.reveal() {
            write!(f, "[{}]", k.letter())?;
        }
        if let Some(k) = self.captured_reveal() {
            write!(f, "[x{}]", k.letter())?;
        }
        Ok(())
    }
}
