//! Move notation: coordinates with Jieqi suffixes (`h2e2`, `h2e2N`) for engines and files, and
//! Chinese (traditional and simplified) and WXF for people, read and written.
//!
//! Both notations describe a move relative to the mover: the piece kind, which piece of that kind
//! (its file, or its place in a stack of same-kind pieces on one file), the direction (進 `+`
//! forward, 退 `-` back, 平 `=`/`.` sideways) and a number. For pieces that move straight (rook,
//! cannon, pawn, king) the number after 進/退 counts ranks; for pieces that move diagonally
//! (horse, elephant, advisor) it is the destination file. Red counts files 1-9 from red's right
//! (written 一..九), black from black's right (written １..９ or 1-9), so red's file 一 is
//! black's file ９.
//!
//! Reading does not compute target squares: it describes every legal move of the position the
//! same way and keeps those that match the text, so a reading is legal by construction, and text
//! that matches no legal move, or more than one, is an error naming the text. This also makes the
//! reader lenient about real-world records (a file number where 前/後 would be due is accepted
//! when only one of the stacked pieces can make the move).
//!
//! Stacks of same-kind pieces on one file (advisors and elephants excepted: of two on a file one
//! can only advance and the other only retreat, so the file names them; the WXF "tandem" rules,
//! <http://www.wxf.org/xq/computer/wxf_notation.html>, and the Chinese convention used by
//! XQBase and the CXA rules):
//! - two: 前/後 (`R+`, `R-`);
//! - three: 前/中/後 (`P+`, `P3` for the middle one, `P-`);
//! - four or five (pawns only): 一二三四五 counted from the front (`++`, `P+`, `P3`, `P-`, `--`);
//! - pawns stacked on two files: the piece name is replaced by the file: 前七/中七/後七
//!   (`7+`, `77`, `7-`).
//!
//! Coordinates (`h2e2`, ICCS `H2-E2`) are read by [`Position::parse_move`]; [`Position::parse_any`]
//! tries coordinates, then WXF, then Chinese.

use super::jieqi::format_move;
use super::position::Position;
use super::types::{Color, Move, Piece, PieceType, Square};
use thiserror::Error;

/// Why a move in Chinese or WXF notation was refused.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum NotationError {
    #[error("'{0}' is not a move in Chinese, WXF or coordinate notation")]
    Syntax(String),
    #[error("'{0}' matches no legal move in this position")]
    NoMatch(String),
    #[error("'{text}' is ambiguous here: it matches {}", .candidates.join(", "))]
    Ambiguous {
        text: String,
        candidates: Vec<String>,
    },
}

/// Why a move in coordinate notation was refused.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum MoveError {
    #[error("'{0}' is not a move in coordinate notation (like h2e2)")]
    Syntax(String),
    #[error("'{0}' is not legal in this position")]
    Illegal(String),
    #[error("'{0}' moves a dark piece: it needs the revealed kind as a suffix (like h2e2N)")]
    MissingReveal(String),
    #[error("'{text}': {why}")]
    BadSuffix { text: String, why: String },
}

impl Position {
    /// Parses a move in coordinates (`h2e2`; ICCS `H2-E2` too) and checks it is legal here.
    ///
    /// Jieqi suffixes (docs/jieqi-rules.md): a dark mover must carry its revealed kind (`h2e2N`),
    /// which its pool must hold; the capture of a dark piece may carry the kind learned
    /// (`e2e6p`); both in that order (`h2h9Cr`). Letter case gives the colour. A plain `h2e2` for
    /// a dark mover is refused rather than guessed: the position after it depends on the reveal.
    pub fn parse_move(&self, text: &str) -> Result<Move, MoveError> {
        let t = text.trim();
        let cleaned: String = t.chars().filter(|&c| c != '-').collect();
        if cleaned.len() < 4 || !cleaned.is_ascii() {
            return Err(MoveError::Syntax(t.to_string()));
        }
        let (from, to) = match (Square::parse(&cleaned[0..2]), Square::parse(&cleaned[2..4])) {
            (Some(f), Some(s)) => (f, s),
            _ => return Err(MoveError::Syntax(t.to_string())),
        };
        let mut m = Move::new(from, to);
        if !self.is_legal(m) {
            return Err(MoveError::Illegal(t.to_string()));
        }
        let bad = |why: String| MoveError::BadSuffix {
            text: t.to_string(),
            why,
        };
        let us = self.side_to_move();
        // One suffix letter, checked against the colour and pool it belongs to.
        let kind_for = |c: char, color: Color, what: &str| -> Result<PieceType, MoveError> {
            let p =
                Piece::from_letter(c).ok_or_else(|| bad(format!("'{c}' is not a piece letter")))?;
            if p.color != color {
                return Err(bad(format!(
                    "the {what} letter '{c}' must be {} for {color:?}",
                    if color == Color::Red {
                        "upper case"
                    } else {
                        "lower case"
                    }
                )));
            }
            if self.pool_count(color, p.kind) == 0 {
                return Err(bad(format!(
                    "{color:?}'s pool holds no {} to be the {what}",
                    p.kind.name()
                )));
            }
            Ok(p.kind)
        };
        let mut chars = cleaned[4..].chars();
        if self.is_dark(from) {
            match chars.next() {
                Some(c) => m = m.with_reveal(kind_for(c, us, "revealed")?),
                None => return Err(MoveError::MissingReveal(t.to_string())),
            }
        }
        if let Some(c) = chars.next() {
            if !self.is_dark(to) {
                return Err(bad(format!(
                    "'{c}' names a captured dark piece, but {to} holds none"
                )));
            }
            m = m.with_captured_reveal(kind_for(c, us.flip(), "captured")?);
        }
        if let Some(c) = chars.next() {
            return Err(bad(format!("unexpected '{c}' after the move")));
        }
        Ok(m)
    }

    /// Writes `m` (a move from this position) in coordinates with its Jieqi suffixes, the form
    /// [`Position::parse_move`] reads back.
    pub fn move_text(&self, m: Move) -> String {
        format_move(m, self.side_to_move())
    }
}

impl NotationError {
    /// A short category name for summaries ("syntax", "no legal match", "ambiguous").
    pub fn category(&self) -> &'static str {
        match self {
            NotationError::Syntax(_) => "unparseable move",
            NotationError::NoMatch(_) => "illegal move (no legal match)",
            NotationError::Ambiguous { .. } => "ambiguous move",
        }
    }
}

/// Character set used when writing Chinese notation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Script {
    /// 車馬炮 for both sides, 進退平前後 (the form of most Big5 game collections).
    #[default]
    Traditional,
    /// 车马炮, 进退平前后.
    Simplified,
}

/// How Chinese notation is written.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct ChineseStyle {
    pub script: Script,
    /// Red rook/horse/cannon as 俥傌炮 and black's as 車馬砲 (traditional) instead of the same
    /// characters for both sides. Ignored for simplified script.
    pub distinct_sides: bool,
    /// Black files as ASCII digits (`马8进7`) instead of full-width (`馬８進７`).
    pub ascii_black_digits: bool,
}

impl ChineseStyle {
    pub const TRADITIONAL: ChineseStyle = ChineseStyle {
        script: Script::Traditional,
        distinct_sides: false,
        ascii_black_digits: false,
    };
    pub const SIMPLIFIED: ChineseStyle = ChineseStyle {
        script: Script::Simplified,
        distinct_sides: false,
        ascii_black_digits: false,
    };
}

/// Direction of a move relative to the mover.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Action {
    Forward,
    Backward,
    Sideways,
}

/// Which piece of a kind is meant.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Selector {
    /// The piece on this file (1-9, the mover's numbering). With three or five stacked pieces it
    /// means the middle one (WXF `P3`); with two or four, any (legality must decide).
    File(u8),
    /// A place in a stack, optionally on a given file (mover's numbering).
    Stack(Place, Option<u8>),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Place {
    /// 前: the most advanced.
    Front,
    /// 後: the least advanced.
    Rear,
    /// 中: the middle one of three or five.
    Middle,
    /// 一..五: the n-th from the front (1-based).
    Nth(u8),
    /// WXF `+`: front of two or three, second of four or five.
    WxfPlus,
    /// WXF `-`: rear of two or three, second-last of four or five.
    WxfMinus,
    /// WXF `++`: foremost of four or five.
    WxfFirst,
    /// WXF `--`: rearmost of four or five.
    WxfLast,
}

/// A parsed move description, not yet matched against a position.
#[derive(Clone, Copy, Debug)]
struct Description {
    /// `None` when the text names no kind (`前七進一`, `7+.6`: pawns).
    kind: Option<PieceType>,
    selector: Selector,
    action: Action,
    number: u8,
}

/// Where a piece stands among same-kind, same-colour pieces on its file.
#[derive(Clone, Copy, Debug)]
struct StackInfo {
    /// 0 = front.
    index: u8,
    count: u8,
    /// Whether two or more files hold a stack of this kind (pawns).
    multi_files: bool,
}

/// File number 1-9 in the mover's numbering (from the mover's right).
#[inline]
fn file_number(color: Color, file: u8) -> u8 {
    match color {
        Color::Red => 9 - file,
        Color::Black => file + 1,
    }
}

/// Ranks moved forward from the mover's view (negative: backwards).
#[inline]
fn forward_delta(color: Color, from: Square, to: Square) -> i32 {
    let d = to.rank() as i32 - from.rank() as i32;
    match color {
        Color::Red => d,
        Color::Black => -d,
    }
}

/// How far forward a square is for `color` (higher = more advanced).
#[inline]
fn advancement(color: Color, sq: Square) -> u8 {
    match color {
        Color::Red => sq.rank(),
        Color::Black => 9 - sq.rank(),
    }
}

fn moves_straight(kind: PieceType) -> bool {
    matches!(
        kind,
        PieceType::Rook | PieceType::Cannon | PieceType::Pawn | PieceType::King
    )
}

/// The action of a move of a `color` `kind` from `from` to `to`, and its number: the target
/// file for sideways moves and pieces that do not move straight, else the ranks moved.
fn action_and_number(kind: PieceType, color: Color, from: Square, to: Square) -> (Action, u8) {
    let fwd = forward_delta(color, from, to);
    let action = match fwd {
        0 => Action::Sideways,
        d if d > 0 => Action::Forward,
        _ => Action::Backward,
    };
    let number = if action == Action::Sideways || !moves_straight(kind) {
        file_number(color, to.file())
    } else {
        fwd.unsigned_abs() as u8
    };
    (action, number)
}

fn stack_info(pos: &Position, sq: Square) -> Option<StackInfo> {
    let piece = pos.piece_at(sq)?;
    let bb = pos.pieces_of(piece.color, piece.kind);
    let mut per_file = [0u8; 9];
    let mut ahead = 0u8;
    let mine = advancement(piece.color, sq);
    let mut rest = bb;
    while rest != 0 {
        let other = Square(rest.trailing_zeros() as u8);
        rest &= rest - 1;
        per_file[other.file() as usize] += 1;
        if other.file() == sq.file() && advancement(piece.color, other) > mine {
            ahead += 1;
        }
    }
    Some(StackInfo {
        index: ahead,
        count: per_file[sq.file() as usize],
        multi_files: per_file.iter().filter(|&&n| n >= 2).count() >= 2,
    })
}

impl Place {
    fn matches(self, info: StackInfo) -> bool {
        let (i, n) = (info.index, info.count);
        if n < 2 {
            return false;
        }
        match self {
            Place::Front => i == 0,
            Place::Rear => i == n - 1,
            Place::Middle => n % 2 == 1 && i == n / 2,
            Place::Nth(k) => k >= 1 && i == k - 1,
            Place::WxfPlus => {
                if n <= 3 {
                    i == 0
                } else {
                    i == 1
                }
            }
            Place::WxfMinus => {
                if n <= 3 {
                    i == n - 1
                } else {
                    i == n - 2
                }
            }
            Place::WxfFirst => n >= 4 && i == 0,
            Place::WxfLast => n >= 4 && i == n - 1,
        }
    }
}

impl Description {
    /// Whether the legal move `m` of `pos` is what this description says.
    fn matches(&self, pos: &Position, m: Move) -> bool {
        let Some(piece) = pos.piece_at(m.from()) else {
            return false;
        };
        let kind = self.kind.unwrap_or(PieceType::Pawn);
        if piece.kind != kind {
            return false;
        }
        let color = piece.color;
        let (from, to) = (m.from(), m.to());
        if action_and_number(kind, color, from, to) != (self.action, self.number) {
            return false;
        }
        let from_file = file_number(color, from.file());
        match self.selector {
            Selector::File(f) => {
                if f != from_file {
                    return false;
                }
                match stack_info(pos, from) {
                    Some(info) if info.count >= 3 && info.count % 2 == 1 => {
                        info.index == info.count / 2
                    }
                    _ => true,
                }
            }
            Selector::Stack(place, file) => {
                if file.is_some_and(|f| f != from_file) {
                    return false;
                }
                stack_info(pos, from).is_some_and(|info| place.matches(info))
            }
        }
    }
}

/// One character of Chinese notation, classified.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum ChineseToken {
    Piece(PieceType),
    Number(u8),
    Place(Place),
    Action(Action),
}

fn chinese_token(c: char) -> Option<ChineseToken> {
    use ChineseToken::*;
    Some(match c {
        '車' | '俥' | '车' | '伡' | '硨' | '砗' => Piece(PieceType::Rook),
        '馬' | '傌' | '马' | '㐷' | '碼' | '码' => Piece(PieceType::Horse),
        '炮' | '砲' | '包' | '炰' => Piece(PieceType::Cannon),
        '相' | '象' | '像' => Piece(PieceType::Elephant),
        '仕' | '士' => Piece(PieceType::Advisor),
        '帥' | '帅' | '將' | '将' | '王' => Piece(PieceType::King),
        '兵' | '卒' => Piece(PieceType::Pawn),
        '進' | '进' => Action(self::Action::Forward),
        '退' => Action(self::Action::Backward),
        '平' => Action(self::Action::Sideways),
        '前' => Place(self::Place::Front),
        '後' | '后' => Place(self::Place::Rear),
        '中' => Place(self::Place::Middle),
        '一' | '１' | '1' => Number(1),
        '二' | '２' | '2' => Number(2),
        '三' | '３' | '3' => Number(3),
        '四' | '４' | '4' => Number(4),
        '五' | '５' | '5' => Number(5),
        '六' | '６' | '6' => Number(6),
        '七' | '７' | '7' => Number(7),
        '八' | '８' | '8' => Number(8),
        '九' | '９' | '9' => Number(9),
        _ => return None,
    })
}

/// What a notation's token sequence names: kind, selector, action and number of a
/// [`Description`].
type Fields = (Option<PieceType>, Selector, Action, u8);

/// Reads `text` in one notation: `classify` turns each character (white space skipped) into a
/// token, `read` finds the description's fields in the tokens.
fn describe<T>(
    text: &str,
    classify: fn(char) -> Option<T>,
    read: fn(&[T]) -> Option<Fields>,
) -> Option<Description> {
    let tokens: Vec<T> = text
        .chars()
        .filter(|c| !c.is_whitespace())
        .map(classify)
        .collect::<Option<_>>()?;
    let (kind, selector, action, number) = read(&tokens)?;
    Some(Description {
        kind,
        selector,
        action,
        number,
    })
}

fn read_chinese(tokens: &[ChineseToken]) -> Option<Fields> {
    use ChineseToken as T;
    let (selector_part, action, number) = match tokens {
        [rest @ .., T::Action(a), T::Number(n)] => (rest, *a, *n),
        _ => return None,
    };
    let (kind, selector) = match *selector_part {
        // 炮二
        [T::Piece(k), T::Number(f)] => (Some(k), Selector::File(f)),
        // 前炮, 中兵
        [T::Place(p), T::Piece(k)] => (Some(k), Selector::Stack(p, None)),
        // 二兵 (n-th from the front)
        [T::Number(n), T::Piece(k)] if n <= 5 => (Some(k), Selector::Stack(Place::Nth(n), None)),
        // 車前 (WXF-like Chinese order)
        [T::Piece(k), T::Place(p)] => (Some(k), Selector::Stack(p, None)),
        // 前七: pawn stacks on several files
        [T::Place(p), T::Number(f)] => (None, Selector::Stack(p, Some(f))),
        // 七前
        [T::Number(f), T::Place(p)] => (None, Selector::Stack(p, Some(f))),
        // 前兵七, 二兵七
        [T::Place(p), T::Piece(k), T::Number(f)] => (Some(k), Selector::Stack(p, Some(f))),
        [T::Number(n), T::Piece(k), T::Number(f)] if n <= 5 => {
            (Some(k), Selector::Stack(Place::Nth(n), Some(f)))
        }
        // 兵七前
        [T::Piece(k), T::Number(f), T::Place(p)] => (Some(k), Selector::Stack(p, Some(f))),
        _ => return None,
    };
    Some((kind, selector, action, number))
}

/// One character of WXF notation, classified.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum WxfToken {
    Piece(PieceType),
    Digit(u8),
    Plus,
    Minus,
    Traverse,
}

fn wxf_token(c: char) -> Option<WxfToken> {
    use WxfToken::*;
    Some(match c.to_ascii_uppercase() {
        'K' | 'G' => Piece(PieceType::King),
        'A' => Piece(PieceType::Advisor),
        'E' | 'B' | 'M' => Piece(PieceType::Elephant),
        'H' | 'N' => Piece(PieceType::Horse),
        'R' => Piece(PieceType::Rook),
        'C' => Piece(PieceType::Cannon),
        'P' => Piece(PieceType::Pawn),
        '1'..='9' => Digit(c as u8 - b'0'),
        '+' => Plus,
        '-' => Minus,
        '=' | '.' => Traverse,
        _ => return None,
    })
}

fn read_wxf(tokens: &[WxfToken]) -> Option<Fields> {
    use WxfToken as T;
    let op = |t: WxfToken| match t {
        T::Plus => Some(Action::Forward),
        T::Minus => Some(Action::Backward),
        T::Traverse => Some(Action::Sideways),
        _ => None,
    };
    let place = |t: WxfToken| match t {
        T::Plus => Some(Place::WxfPlus),
        T::Minus => Some(Place::WxfMinus),
        _ => None,
    };
    let (sel, action, number) = match tokens {
        [a, b, o, T::Digit(n)] => ([*a, *b], op(*o)?, *n),
        // C25: traverse without an operator.
        [T::Piece(k), T::Digit(f), T::Digit(n)] => {
            ([T::Piece(*k), T::Digit(*f)], Action::Sideways, *n)
        }
        _ => return None,
    };
    let (kind, selector) = match sel {
        [T::Piece(k), T::Digit(f)] => (Some(k), Selector::File(f)),
        [T::Piece(k), p] | [p, T::Piece(k)] => (Some(k), Selector::Stack(place(p)?, None)),
        [T::Plus, T::Plus] => (None, Selector::Stack(Place::WxfFirst, None)),
        [T::Minus, T::Minus] => (None, Selector::Stack(Place::WxfLast, None)),
        [T::Digit(f), T::Digit(g)] if f == g => (None, Selector::File(f)),
        [T::Digit(f), p] => (None, Selector::Stack(place(p)?, Some(f))),
        _ => return None,
    };
    Some((kind, selector, action, number))
}

/// Whether the text looks like coordinates (`h2e2`, `H2-E2`).
fn looks_like_coordinates(text: &str) -> bool {
    let b: Vec<u8> = text.bytes().filter(|&c| c != b'-').collect();
    b.len() == 4
        && b[0].to_ascii_lowercase().is_ascii_lowercase()
        && (b'a'..=b'i').contains(&b[0].to_ascii_lowercase())
        && b[1].is_ascii_digit()
        && (b'a'..=b'i').contains(&b[2].to_ascii_lowercase())
        && b[3].is_ascii_digit()
}

const RED_NUMERALS: [char; 9] = ['一', '二', '三', '四', '五', '六', '七', '八', '九'];
const FULL_WIDTH: [char; 9] = ['１', '２', '３', '４', '５', '６', '７', '８', '９'];
const ORDINALS: [char; 5] = ['一', '二', '三', '四', '五'];

impl Position {
    fn resolve(&self, text: &str, desc: Description) -> Result<Move, NotationError> {
        let legal = self.legal_moves();
        let found: Vec<Move> = legal
            .iter()
            .copied()
            .filter(|&m| desc.matches(self, m))
            .collect();
        match found.as_slice() {
            [] => Err(NotationError::NoMatch(text.to_string())),
            [m] => Ok(*m),
            many => Err(NotationError::Ambiguous {
                text: text.to_string(),
                candidates: many.iter().map(|m| m.uci()).collect(),
            }),
        }
    }

    /// Reads a move in Chinese notation (traditional or simplified, either side's characters,
    /// Chinese-numeral, full-width or ASCII digits) and returns the legal move it names.
    pub fn parse_chinese(&self, text: &str) -> Result<Move, NotationError> {
        self.parse_with(text, chinese_token, read_chinese)
    }

    /// Reads a move in WXF notation (`C2=5`, `C2.5`, `H8+7`, `R+=3`, `+R=3`, `7+.6`, `++.4`).
    pub fn parse_wxf(&self, text: &str) -> Result<Move, NotationError> {
        self.parse_with(text, wxf_token, read_wxf)
    }

    /// Reads the trimmed `text` in the notation of `classify` and `read` (see [`describe`]) and
    /// returns the legal move it names.
    fn parse_with<T>(
        &self,
        text: &str,
        classify: fn(char) -> Option<T>,
        read: fn(&[T]) -> Option<Fields>,
    ) -> Result<Move, NotationError> {
        let t = text.trim();
        let desc =
            describe(t, classify, read).ok_or_else(|| NotationError::Syntax(t.to_string()))?;
        self.resolve(t, desc)
    }

    /// Reads a move in any notation xqtune knows: coordinates, WXF or Chinese.
    pub fn parse_any(&self, text: &str) -> Result<Move, NotationError> {
        let t = text.trim();
        if t.is_empty() {
            return Err(NotationError::Syntax(t.to_string()));
        }
        if looks_like_coordinates(t) {
            return self.parse_move(t).map_err(|e| match e {
                MoveError::Syntax(s) => NotationError::Syntax(s),
                MoveError::Illegal(s) => NotationError::NoMatch(s),
                other => NotationError::Syntax(other.to_string()),
            });
        }
        if t.is_ascii() {
            self.parse_wxf(t)
        } else {
            self.parse_chinese(t)
        }
    }

    /// Kind, stack place, action and number of the legal move `m` (squares only).
    fn describe(&self, m: Move) -> Option<(PieceType, Color, Option<StackInfo>, Action, u8)> {
        let piece = self.piece_at(m.from())?;
        let (from, to) = (m.from(), m.to());
        let (action, number) = action_and_number(piece.kind, piece.color, from, to);
        // Two advisors or elephants on one file never need 前/後: one can only advance and the
        // other only retreat (WXF: `A6+5`, not `A-+5`), so they are always named by their file.
        let info = stack_info(self, from)
            .filter(|i| i.count >= 2)
            .filter(|_| !matches!(piece.kind, PieceType::Advisor | PieceType::Elephant));
        Some((piece.kind, piece.color, info, action, number))
    }

    /// Writes the legal move `m` in Chinese notation (`炮二平五`, `馬８進７`, `前車進一`,
    /// `二兵平四`, `前七進一`). Reading the result back gives `m`.
    pub fn to_chinese(&self, m: Move, style: ChineseStyle) -> String {
        let Some((kind, color, info, action, number)) = self.describe(m) else {
            return m.uci();
        };
        let simplified = style.script == Script::Simplified;
        let digit = |n: u8| -> char {
            let i = (n as usize).clamp(1, 9) - 1;
            match color {
                Color::Red => RED_NUMERALS[i],
                Color::Black if style.ascii_black_digits => (b'0' + n) as char,
                Color::Black => FULL_WIDTH[i],
            }
        };
        let name = piece_char(kind, color, style);
        let front = '前';
        let rear = if simplified { '后' } else { '後' };
        let mut out = String::with_capacity(12);
        match info {
            None => {
                out.push(name);
                out.push(digit(file_number(color, m.from().file())));
            }
            Some(info) => {
                let place = match (info.count, info.index) {
                    (2, 0) | (3, 0) => front,
                    (2, _) => rear,
                    (3, 1) => '中',
                    (3, _) => rear,
                    (_, i) => ORDINALS[(i as usize).min(4)],
                };
                out.push(place);
                if info.multi_files {
                    out.push(digit(file_number(color, m.from().file())));
                } else {
                    out.push(name);
                }
            }
        }
        out.push(match action {
            Action::Forward if simplified => '进',
            Action::Forward => '進',
            Action::Backward => '退',
            Action::Sideways => '平',
        });
        out.push(digit(number));
        out
    }

    /// Writes the legal move `m` in WXF notation (`C2=5`, `H8+7`, `R+=3`, `7+=6`, `++=4`).
    pub fn to_wxf(&self, m: Move) -> String {
        let Some((kind, color, info, action, number)) = self.describe(m) else {
            return m.uci();
        };
        let letter = match kind {
            PieceType::King => 'K',
            PieceType::Advisor => 'A',
            PieceType::Elephant => 'E',
            PieceType::Horse => 'H',
            PieceType::Rook => 'R',
            PieceType::Cannon => 'C',
            PieceType::Pawn => 'P',
        };
        let file = (b'0' + file_number(color, m.from().file())) as char;
        let mut out = String::with_capacity(4);
        match info {
            None => {
                out.push(letter);
                out.push(file);
            }
            Some(info) if info.multi_files => {
                out.push(file);
                out.push(match (info.count, info.index) {
                    (_, 0) => '+',
                    (3, 1) => file,
                    _ => '-',
                });
            }
            Some(info) => {
                let (n, i) = (info.count, info.index);
                let mid = n % 2 == 1 && i == n / 2;
                if n >= 4 && i == 0 {
                    out.push_str("++");
                } else if n >= 4 && i == n - 1 {
                    out.push_str("--");
                } else {
                    out.push(letter);
                    out.push(if mid {
                        file
                    } else if i < n / 2 {
                        '+'
                    } else {
                        '-'
                    });
                }
            }
        }
        out.push(match action {
            Action::Forward => '+',
            Action::Backward => '-',
            Action::Sideways => '=',
        });
        out.push((b'0' + number) as char);
        out
    }
}

/// The character for a piece in the given style.
pub fn piece_char(kind: PieceType, color: Color, style: ChineseStyle) -> char {
    let red = color == Color::Red;
    let simplified = style.script == Script::Simplified;
    match kind {
        PieceType::Rook if simplified => '车',
        PieceType::Horse if simplified => '马',
        PieceType::Rook if style.distinct_sides && red => '俥',
        PieceType::Horse if style.distinct_sides && red => '傌',
        PieceType::Cannon if style.distinct_sides && !red && !simplified => '砲',
        PieceType::Rook => '車',
        PieceType::Horse => '馬',
        PieceType::Cannon => '炮',
        PieceType::Elephant if red => '相',
        PieceType::Elephant => '象',
        PieceType::Advisor if red => '仕',
        PieceType::Advisor => '士',
        PieceType::King if red && simplified => '帅',
        PieceType::King if red => '帥',
        PieceType::King if simplified => '将',
        PieceType::King => '將',
        PieceType::Pawn if red => '兵',
        PieceType::Pawn => '卒',
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn play(pos: &mut Position, moves: &[&str]) {
        for t in moves {
            let m = pos.parse_any(t).unwrap_or_else(|e| panic!("{t}: {e}"));
            pos.make_move(m);
        }
    }

    /// Each text of `cases` reads as its coordinate move in `pos`.
    fn assert_reads(pos: &Position, cases: &[(&str, &str)]) {
        for &(t, uci) in cases {
            assert_eq!(pos.parse_any(t).unwrap().uci(), uci, "{t}");
        }
    }

    #[test]
    fn opening_moves_in_every_notation() {
        let pos = Position::startpos();
        for t in [
            "炮二平五",
            "炮2平5",
            "C2=5",
            "C2.5",
            "C25",
            "h2e2",
            "H2-E2",
            "c2=5",
        ] {
            assert_eq!(pos.parse_any(t).map(|m| m.uci()), Ok("h2e2".into()), "{t}");
        }
        assert_reads(
            &pos,
            &[
                ("馬二進三", "h0g2"),
                ("傌二进三", "h0g2"),
                ("H2+3", "h0g2"),
                ("相三進五", "g0e2"),
                ("仕四進五", "f0e1"),
                ("兵七進一", "c3c4"),
            ],
        );
        let mut pos = pos;
        play(&mut pos, &["h2e2"]);
        for t in ["馬８進７", "马8进7", "馬8進7", "H8+7", "h9g7"] {
            assert_eq!(pos.parse_any(t).map(|m| m.uci()), Ok("h9g7".into()), "{t}");
        }
        assert_reads(
            &pos,
            &[
                ("砲８平５", "h7e7"),
                ("包8平5", "h7e7"),
                ("將５進１", "e9e8"),
                ("将5进1", "e9e8"),
                ("象３進５", "c9e7"),
                ("士４進５", "d9e8"),
                ("卒３進１", "c6c5"),
            ],
        );
    }

    #[test]
    fn writes_canonical_forms() {
        let mut pos = Position::startpos();
        let m = pos.parse_any("h2e2").unwrap();
        assert_eq!(pos.to_chinese(m, ChineseStyle::default()), "炮二平五");
        assert_eq!(pos.to_wxf(m), "C2=5");
        pos.make_move(m);
        let m = pos.parse_any("h9g7").unwrap();
        assert_eq!(pos.to_chinese(m, ChineseStyle::TRADITIONAL), "馬８進７");
        assert_eq!(pos.to_chinese(m, ChineseStyle::SIMPLIFIED), "马８进７");
        let ascii = ChineseStyle {
            ascii_black_digits: true,
            ..ChineseStyle::SIMPLIFIED
        };
        assert_eq!(pos.to_chinese(m, ascii), "马8进7");
        assert_eq!(pos.to_wxf(m), "H8+7");
        let distinct = ChineseStyle {
            distinct_sides: true,
            ..ChineseStyle::TRADITIONAL
        };
        let c = pos.parse_any("h7e7").unwrap();
        assert_eq!(pos.to_chinese(c, distinct), "砲８平５");
    }

    #[test]
    fn front_and_rear_of_two() {
        // Red rooks on e5 and e3 (file 五), black to move irrelevant: red to move.
        let pos = Position::from_fen("3k5/9/9/9/4R4/9/4R4/9/9/4K4 w").unwrap();
        let front = pos.parse_any("前車進一").unwrap();
        assert_eq!(front.uci(), "e5e6");
        assert_eq!(pos.parse_any("前车进一").unwrap(), front);
        assert_eq!(pos.parse_any("R+.3").unwrap().uci(), "e5g5");
        assert_eq!(pos.parse_any("R++1").unwrap(), front);
        assert_eq!(pos.parse_any("+R+1").unwrap(), front);
        assert_eq!(pos.parse_any("車前進一").unwrap(), front);
        let rear = pos.parse_any("後車平四").unwrap();
        assert_eq!(rear.uci(), "e3f3");
        assert_eq!(pos.parse_any("后车平四").unwrap(), rear);
        assert_eq!(pos.parse_any("R-=4").unwrap(), rear);
        assert_eq!(pos.to_chinese(front, ChineseStyle::default()), "前車進一");
        assert_eq!(pos.to_chinese(rear, ChineseStyle::default()), "後車平四");
        assert_eq!(pos.to_chinese(rear, ChineseStyle::SIMPLIFIED), "后车平四");
        assert_eq!(pos.to_wxf(front), "R++1");
        assert_eq!(pos.to_wxf(rear), "R-=4");
        // A file number instead of 前/後 is ambiguous when both rooks can make the move.
        assert!(matches!(
            pos.parse_any("車五平四"),
            Err(NotationError::Ambiguous { .. })
        ));
    }

    #[test]
    fn stacked_advisors_are_named_by_their_file() {
        // Red advisors on f0 and f2 (file 四): the direction tells them apart.
        let pos = Position::from_fen("3k5/9/9/9/9/9/9/5A3/9/4KA3 w").unwrap();
        let up = pos.parse_any("仕四進五").unwrap();
        let down = pos.parse_any("仕四退五").unwrap();
        assert_eq!((up.uci().as_str(), down.uci().as_str()), ("f0e1", "f2e1"));
        assert_eq!(pos.to_chinese(up, ChineseStyle::default()), "仕四進五");
        assert_eq!(pos.to_chinese(down, ChineseStyle::default()), "仕四退五");
        assert_eq!(pos.to_wxf(down), "A4-5");
        assert_eq!(pos.parse_any("前仕退五").unwrap(), down);
    }

    #[test]
    fn black_cannons_front_rear_and_full_width() {
        // Black cannons on h7 and h5: black's file ８; front (for black) is the lower rank.
        let pos = Position::from_fen("4k4/9/7c1/9/7c1/9/9/9/9/3K5 b").unwrap();
        let m = pos.parse_any("前炮平５").unwrap();
        assert_eq!(m.uci(), "h5e5");
        assert_eq!(pos.parse_any("前砲平5").unwrap(), m);
        assert_eq!(pos.to_chinese(m, ChineseStyle::default()), "前炮平５");
        let r = pos.parse_any("後炮平四").unwrap();
        assert_eq!(r.uci(), "h7d7");
        assert_eq!(pos.to_wxf(r), "C-=4");
    }

    #[test]
    fn three_four_five_pawns_on_a_file() {
        // Red pawns on e5, e6, e7 (three), red to move.
        let pos = Position::from_fen("3k5/9/4P4/4P4/4P4/9/9/9/9/4K4 w").unwrap();
        let front = pos.parse_any("前兵平四").unwrap();
        assert_eq!(front.uci(), "e7f7");
        let mid = pos.parse_any("中兵平四").unwrap();
        assert_eq!(mid.uci(), "e6f6");
        let rear = pos.parse_any("後兵平四").unwrap();
        assert_eq!(rear.uci(), "e5f5");
        assert_eq!(pos.to_chinese(mid, ChineseStyle::default()), "中兵平四");
        assert_eq!(pos.to_wxf(front), "P+=4");
        assert_eq!(pos.to_wxf(mid), "P5=4");
        assert_eq!(pos.to_wxf(rear), "P-=4");
        assert_eq!(pos.parse_any("P5=4").unwrap(), mid);
        assert_eq!(pos.parse_any("二兵平四").unwrap(), mid);
        // Five pawns on a5..a9 (red file 九), moving to file 八.
        let pos = Position::from_fen("P3k4/P8/P8/P8/P8/9/9/9/9/3K5 w").unwrap();
        let names: Vec<String> = ["a9b9", "a8b8", "a7b7", "a6b6", "a5b5"]
            .iter()
            .map(|t| pos.to_chinese(pos.parse_any(t).unwrap(), ChineseStyle::default()))
            .collect();
        assert_eq!(
            names,
            ["一兵平八", "二兵平八", "三兵平八", "四兵平八", "五兵平八"]
        );
        let wxf: Vec<String> = ["a9b9", "a8b8", "a7b7", "a6b6", "a5b5"]
            .iter()
            .map(|t| pos.to_wxf(pos.parse_any(t).unwrap()))
            .collect();
        assert_eq!(wxf, ["++=8", "P+=8", "P9=8", "P-=8", "--=8"]);
        for (c, w) in names.iter().zip(&wxf) {
            assert_eq!(pos.parse_any(c).unwrap(), pos.parse_any(w).unwrap());
        }
        assert_eq!(pos.parse_any("中兵平八").unwrap().uci(), "a7b7");
    }

    #[test]
    fn pawns_stacked_on_two_files() {
        // Black pawns on c4,c3 (black file ３) and g4,g3 (black file ７); black to move.
        let pos = Position::from_fen("4k4/9/9/9/9/2p3p2/2p3p2/9/9/3K5 b").unwrap();
        let m = pos.parse_any("c4d4").unwrap();
        let written = pos.to_chinese(m, ChineseStyle::default());
        assert_eq!(written, "後３平４");
        assert_eq!(pos.parse_any(&written).unwrap(), m);
        assert_eq!(pos.parse_any("後卒３平４").unwrap(), m);
        assert_eq!(pos.parse_any("后3平4").unwrap(), m);
        assert_eq!(pos.to_wxf(m), "3-=4");
        assert_eq!(pos.parse_any("3-=4").unwrap(), m);
        assert_eq!(pos.parse_any("3-.4").unwrap(), m);
        // 前卒 alone could be either front pawn.
        assert!(matches!(
            pos.parse_any("前卒進一"),
            Err(NotationError::Ambiguous { .. })
        ));
        let f = pos.parse_any("前７平６").unwrap();
        assert_eq!(f.uci(), "g3f3");
    }

    #[test]
    fn errors_name_the_text() {
        let pos = Position::startpos();
        let e = pos.parse_any("炮二平十").unwrap_err();
        assert_eq!(e, NotationError::Syntax("炮二平十".into()));
        let e = pos.parse_any("炮二進九").unwrap_err();
        assert_eq!(e, NotationError::NoMatch("炮二進九".into()));
        assert!(e.to_string().contains("炮二進九"));
        assert!(matches!(
            pos.parse_any("Q2=5"),
            Err(NotationError::Syntax(_))
        ));
        assert!(matches!(pos.parse_any(""), Err(NotationError::Syntax(_))));
        assert!(matches!(
            pos.parse_any("h2h8"),
            Err(NotationError::NoMatch(_))
        ));
    }

    #[test]
    fn every_legal_move_round_trips_from_random_games() {
        use rand::{Rng, SeedableRng};
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(7);
        for _ in 0..80 {
            let mut pos = Position::startpos();
            for _ in 0..150 {
                let moves = pos.legal_moves();
                if moves.is_empty() {
                    break;
                }
                for &m in moves.iter() {
                    for style in [ChineseStyle::TRADITIONAL, ChineseStyle::SIMPLIFIED] {
                        let c = pos.to_chinese(m, style);
                        assert_eq!(pos.parse_any(&c), Ok(m), "{c} in {}", pos.to_fen());
                    }
                    let w = pos.to_wxf(m);
                    assert_eq!(pos.parse_any(&w), Ok(m), "{w} in {}", pos.to_fen());
                }
                let m = moves[rng.gen_range(0..moves.len())];
                pos.make_move(m);
            }
        }
    }
}
