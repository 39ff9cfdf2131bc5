//! Jieqi (揭棋): dark pieces, the hidden pool, rule options, seeded deals, move notation with
//! reveal suffixes, perft over reveals, and the arbiter that knows every identity.
//!
//! The rules are those of `RULES.md` (Pikafish jieqi branch / JieqiBox conventions). A dark piece
//! sits on the board with the kind of its home square, which is the kind it moves as; after its
//! first move it is turned face up with a kind drawn from its side's pool.
//!
//! # Knowledge model
//! A [`Position`] is always *one viewer's* knowledge:
//! - `pool[c]` is the multiset of `c`'s identities the viewer has not seen: the dark pieces
//!   still on the board plus dark pieces captured without the viewer learning what they were.
//!   So `pool_total(c) >= dark_count(c)`, and the excess is "captured unseen".
//! - `hidden` (arbiter and tests only) names the true identity of dark pieces. Search code must
//!   never read it; the engine's positions come from [`Arbiter::view`] where it is all unknown.
//!
//! A reveal (`h2e2N`) is public: the kind leaves the mover's pool in every view. The capture of a
//! dark piece removes its kind from the victim's pool only in the views that learn it (a move
//! carrying [`Move::captured_reveal`]); who learns it is the [`CaptureReveal`] option. The
//! arbiter's own position knows everything, so its pool is exactly the identities of the dark
//! pieces on the board and every capture of a dark piece carries the true kind.

use super::fen::FenError;
use super::position::{Position, Variant};
use super::rules::Outcome;
use super::types::*;
use super::zobrist::KEYS;
use rand::{RngCore, SeedableRng};
use rand_chacha::ChaCha20Rng;
use std::fmt;
use std::str::FromStr;
use thiserror::Error;

/// The Jieqi start as a viewer sees it: every piece but the kings face down, full pools.
pub const JIEQI_START_FEN: &str =
    "xxxxkxxxx/9/1x5x1/x1x1x1x1x/9/9/X1X1X1X1X/1X5X1/9/XXXXKXXXX w R2A2C2P5N2B2r2a2c2p5n2b2 0 1";

/// Bright Jieqi: the Xiangqi start, all face up, with Jieqi's freedom for advisors/elephants.
pub const BRIGHT_JIEQI_START_FEN: &str =
    "rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C5C1/9/RNBAKABNR w - 0 1";

/// Default no-capture draw limit of Jieqi in plies (RULES.md rule 6).
pub const NO_CAPTURE_LIMIT: u16 = 80;
/// The optional longer limit (the Xiangqi value).
pub const NO_CAPTURE_LIMIT_LONG: u16 = 120;

/// The order in which the FEN writer lists a colour's pool (as in the RULES.md start FEN).
const POOL_ORDER: [PieceType; 6] = [
    PieceType::Rook,
    PieceType::Advisor,
    PieceType::Cannon,
    PieceType::Pawn,
    PieceType::Horse,
    PieceType::Elephant,
];

/// Who learns the identity of a dark piece when it is captured (RULES.md rule 5).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum CaptureReveal {
    /// The capturer learns it, the victim does not (the default).
    #[default]
    Capturer,
    /// Nobody learns it.
    Nobody,
    /// Both sides learn it (analysis, self-play).
    Both,
}

impl CaptureReveal {
    /// Whether `viewer` learns the identity of a dark piece captured by `capturer`.
    pub fn learns(self, viewer: Color, capturer: Color) -> bool {
        match self {
            CaptureReveal::Capturer => viewer == capturer,
            CaptureReveal::Nobody => false,
            CaptureReveal::Both => true,
        }
    }
}

impl fmt::Display for CaptureReveal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            CaptureReveal::Capturer => "capturer",
            CaptureReveal::Nobody => "none",
            CaptureReveal::Both => "both",
        })
    }
}

/// A rule option value that was not understood.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[error("unknown {option} '{value}' (expected {expected})")]
pub struct OptionError {
    pub option: &'static str,
    pub value: String,
    pub expected: &'static str,
}

impl FromStr for CaptureReveal {
    type Err = OptionError;
    fn from_str(s: &str) -> Result<Self, OptionError> {
        match s.trim().to_ascii_lowercase().as_str() {
            "capturer" => Ok(CaptureReveal::Capturer),
            "none" | "nobody" => Ok(CaptureReveal::Nobody),
            "both" => Ok(CaptureReveal::Both),
            _ => Err(OptionError {
                option: "capture-reveal rule",
                value: s.to_string(),
                expected: "capturer, none or both",
            }),
        }
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

impl fmt::Display for Variant {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Variant::Xiangqi => "xiangqi",
            Variant::Jieqi => "jieqi",
        })
    }
}

/// Jieqi rule options, stored in the position (they are not part of the FEN).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct JieqiRules {
    pub capture_reveal: CaptureReveal,
    /// Plies without a capture after which the game is drawn (80, or 120 as an option).
    pub no_capture_limit: u16,
}

impl Default for JieqiRules {
    fn default() -> Self {
        JieqiRules {
            capture_reveal: CaptureReveal::Capturer,
            no_capture_limit: NO_CAPTURE_LIMIT,
        }
    }
}

/// The Xiangqi kind whose start square `sq` is for `color`, if any (the kind a dark piece on it
/// moves as). `King` for the king's square, which never holds a dark piece.
pub fn home_kind(color: Color, sq: usize) -> Option<PieceType> {
    let s = Square(sq as u8);
    let (f, r) = (s.file(), s.rank());
    let r = if color == Color::Red { r } else { 9 - r };
    match (r, f) {
        (0, 0) | (0, 8) => Some(PieceType::Rook),
        (0, 1) | (0, 7) => Some(PieceType::Horse),
        (0, 2) | (0, 6) => Some(PieceType::Elephant),
        (0, 3) | (0, 5) => Some(PieceType::Advisor),
        (0, 4) => Some(PieceType::King),
        (2, 1) | (2, 7) => Some(PieceType::Cannon),
        (3, 0) | (3, 2) | (3, 4) | (3, 6) | (3, 8) => Some(PieceType::Pawn),
        _ => None,
    }
}

/// The kind a dark piece of `color` may stand on `sq` as: its home kind, never the king's.
pub fn dark_home_kind(color: Color, sq: usize) -> Option<PieceType> {
    home_kind(color, sq).filter(|&k| k != PieceType::King)
}

/// The 15 squares where `color` starts with a dark piece, in board-index order.
pub fn dark_home_squares(color: Color) -> impl Iterator<Item = usize> {
    (0..90).filter(move |&s| dark_home_kind(color, s).is_some())
}

/// Writes a move with its Jieqi suffixes: the revealed kind of a dark mover in the mover's case,
/// then the learned kind of a captured dark piece in the victim's case (`h2e2N`, `b7b0r`,
/// `h2h9Cr`). A move without suffixes is the plain four characters.
pub fn format_move(m: Move, mover: Color) -> String {
    let mut s = m.uci();
    if m.is_null() {
        return "0000".into();
    }
    if let Some(k) = m.reveal() {
        s.push(Piece::new(mover, k).letter());
    }
    if let Some(k) = m.captured_reveal() {
        s.push(Piece::new(mover.flip(), k).letter());
    }
    s
}

/// Keeps the Jieqi suffixes of `m` only where they apply in `pos` and guarantees that a dark
/// mover carries a reveal drawn from its pool (so unmake can trust the stored move).
pub(crate) fn normalize_move(pos: &Position, m: Move) -> Move {
    let from = m.from().index();
    let to = m.to().index();
    let us = pos.side;
    let mut out = m.squares();
    if pos.dark & (1u128 << from) != 0 {
        let pool = &pos.pool[us.index()];
        let wanted = m.reveal().filter(|k| pool[k.index()] > 0);
        debug_assert!(
            wanted.is_some(),
            "dark move {m:?} without a reveal from the pool in {pos:?}"
        );
        let home = dark_home_kind(us, from).unwrap_or(PieceType::Pawn);
        let kind = wanted
            .or_else(|| (pool[home.index()] > 0).then_some(home))
            .or_else(|| {
                PieceType::ALL
                    .into_iter()
                    .find(|k| *k != PieceType::King && pool[k.index()] > 0)
            })
            .unwrap_or(home);
        out = out.with_reveal(kind);
    }
    if pos.dark & (1u128 << to) != 0
        && let Some(k) = m.captured_reveal()
        && pos.pool[us.flip().index()][k.index()] > 0
    {
        out = out.with_captured_reveal(k);
    }
    out
}

impl Position {
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

    /// The Jieqi rule options of this position.
    pub fn jieqi_rules(&self) -> JieqiRules {
        self.jieqi
    }

    /// Sets the Jieqi rule options (they do not change the key: they are the same all game).
    pub fn set_jieqi_rules(&mut self, rules: JieqiRules) {
        self.jieqi = rules;
    }

    /// Whether the piece on `sq` is face down.
    #[inline(always)]
    pub fn is_dark(&self, sq: Square) -> bool {
        self.dark & sq.bb() != 0
    }

    /// Number of `color`'s dark pieces on the board.
    pub fn dark_count(&self, color: Color) -> u32 {
        (self.dark & self.by_color[color.index()]).count_ones()
    }

    /// Total of `color`'s pool (dark pieces on board plus those captured unseen).
    pub fn pool_total(&self, color: Color) -> u32 {
        self.pool[color.index()].iter().map(|&n| n as u32).sum()
    }

    /// Arbiter only: the true identity of the dark piece on `sq`, if recorded.
    pub fn hidden_kind(&self, sq: Square) -> Option<PieceType> {
        if !self.is_dark(sq) {
            return None;
        }
        match self.hidden[sq.index()] {
            0 => None,
            v => Some(PieceType::from_index(v as usize - 1)),
        }
    }

    /// Whether every dark piece's identity is recorded (an arbiter position).
    pub fn knows_all_hidden(&self) -> bool {
        super::attacks::Squares(self.dark).all(|s| self.hidden[s] != 0)
    }

    /// A copy with every hidden identity forgotten (what a player may be shown).
    pub fn without_hidden(&self) -> Position {
        let mut p = self.clone();
        p.hidden = [0; 90];
        p
    }

    /// Writes `m` (a move from this position) with its Jieqi suffixes.
    pub fn move_text(&self, m: Move) -> String {
        format_move(m, self.side)
    }

    /// Changes `color`'s pool count of `kind` by `delta` and returns the key change.
    #[inline]
    pub(crate) fn pool_step(&mut self, color: Color, kind: PieceType, delta: i8) -> u64 {
        let n = &mut self.pool[color.index()][kind.index()];
        let before = (*n).min(5) as usize;
        *n = n.saturating_add_signed(delta);
        let after = (*n).min(5) as usize;
        KEYS.pool[color.index()][kind.index()][before]
            ^ KEYS.pool[color.index()][kind.index()][after]
    }
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

/// The 15 identities of one side's dark pieces at the start.
const DEAL_SET: [PieceType; 15] = [
    PieceType::Advisor,
    PieceType::Advisor,
    PieceType::Elephant,
    PieceType::Elephant,
    PieceType::Horse,
    PieceType::Horse,
    PieceType::Rook,
    PieceType::Rook,
    PieceType::Cannon,
    PieceType::Cannon,
    PieceType::Pawn,
    PieceType::Pawn,
    PieceType::Pawn,
    PieceType::Pawn,
    PieceType::Pawn,
];

/// A uniform integer below `n` by rejection sampling, so that the stream of a seeded ChaCha
/// generator gives the same deal on every platform and rand version.
fn below(rng: &mut ChaCha20Rng, n: u32) -> u32 {
    let zone = u32::MAX - (u32::MAX % n);
    loop {
        let v = rng.next_u32();
        if v < zone {
            return v % n;
        }
    }
}

/// A random Jieqi deal reproducible from `seed`: the Jieqi start with every dark piece's true
/// identity in the hidden field (an arbiter position). Each side's 15 identities are shuffled by
/// Fisher-Yates over a ChaCha20 stream and laid on its home squares in board-index order.
pub fn deal(seed: u64) -> Position {
    let mut rng = ChaCha20Rng::seed_from_u64(seed);
    let mut pos = Position::jieqi_startpos();
    for color in Color::ALL {
        let mut ids = DEAL_SET;
        for i in (1..ids.len()).rev() {
            let j = below(&mut rng, i as u32 + 1) as usize;
            ids.swap(i, j);
        }
        for (s, kind) in dark_home_squares(color).zip(ids) {
            pos.hidden[s] = kind as u8 + 1;
        }
    }
    pos
}

/// The children perft counts: each legal move, and for a dark mover one child per distinct kind
/// still in the mover's pool (RULES.md "Perft for Jieqi"). Captures of dark pieces carry no
/// learned kind: perft's arbiter does not know identities.
pub fn root_children(pos: &Position) -> Vec<Move> {
    let mut out = Vec::new();
    let us = pos.side_to_move();
    for &m in pos.legal_moves().iter() {
        if pos.dark() & m.from().bb() != 0 {
            for kind in PieceType::ALL {
                if pos.pool_count(us, kind) > 0 {
                    out.push(m.with_reveal(kind));
                }
            }
        } else {
            out.push(m);
        }
    }
    out
}

/// The chance outcomes of the dark move `m` as the side to move sees them: one move per kind in
/// its pool with the kind's count as weight (probability `count / pool_total`, RULES.md rule 3).
/// A move of a face-up piece is its own single outcome with weight 1. For the search's
/// expectation ("expectimax") nodes.
pub fn reveal_outcomes(pos: &Position, m: Move) -> impl Iterator<Item = (Move, u32)> + '_ {
    let us = pos.side;
    let dark = pos.is_dark(m.from());
    let plain = m.squares();
    let single = (!dark).then_some((plain, 1));
    let kinds = PieceType::ALL.into_iter().filter_map(move |k| {
        let n = pos.pool[us.index()][k.index()] as u32;
        (dark && n > 0).then(|| (plain.with_reveal(k), n))
    });
    single.into_iter().chain(kinds)
}

/// Number of distinct reveal kinds in `color`'s pool.
fn reveal_kinds(pos: &Position, color: Color) -> u64 {
    pos.pool[color.index()].iter().filter(|&&n| n > 0).count() as u64
}

/// Perft over positions with dark pieces. The last ply is counted in bulk: one per legal move of
/// a revealed piece, one per pool kind for each legal move of a dark piece.
pub fn perft_jieqi(pos: &mut Position, depth: u32) -> u64 {
    if depth == 0 {
        return 1;
    }
    if depth == 1 {
        let kinds = reveal_kinds(pos, pos.side);
        return pos
            .legal_moves()
            .iter()
            .map(|m| if pos.is_dark(m.from()) { kinds } else { 1 })
            .sum();
    }
    let mut nodes = 0;
    for m in root_children(pos) {
        pos.make_move(m);
        nodes += super::perft::perft(pos, depth - 1);
        pos.unmake_move();
    }
    nodes
}

/// Why the arbiter refused a position or a move.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum ArbiterError {
    #[error("the arbiter needs a Jieqi position")]
    NotJieqi,
    #[error(
        "the identity of the dark piece on {0} is unknown (the arbiter needs the hidden field)"
    )]
    UnknownIdentity(Square),
    #[error("move {0} is not legal in {1}")]
    Illegal(String, String),
}

/// A move as the arbiter played it: the full truth, and what each side is told.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Played {
    /// With the true reveal and the true kind of a captured dark piece.
    pub truth: Move,
    /// `views[c]`: the move as `c` learns it (the reveal always; the captured kind only if the
    /// capture-reveal rule lets `c` learn it).
    pub views: [Move; 2],
}

/// The truth of `m` (given by squares, any suffixes ignored) in an arbiter position: the real
/// reveal of a dark mover and the real kind of a captured dark piece, read from the hidden field.
pub fn true_move(truth: &Position, m: Move) -> Result<Move, ArbiterError> {
    if !truth.is_legal(m) {
        return Err(ArbiterError::Illegal(m.uci(), truth.to_fen()));
    }
    let mut out = m.squares();
    if truth.is_dark(m.from()) {
        let k = truth
            .hidden_kind(m.from())
            .ok_or(ArbiterError::UnknownIdentity(m.from()))?;
        out = out.with_reveal(k);
    }
    if truth.is_dark(m.to()) {
        let k = truth
            .hidden_kind(m.to())
            .ok_or(ArbiterError::UnknownIdentity(m.to()))?;
        out = out.with_captured_reveal(k);
    }
    Ok(out)
}

/// The referee of a Jieqi game with hidden identities (self-play): it holds the full truth and
/// one position per side holding only what that side may know, and tells each side every move
/// as it may see it.
///
/// The views are kept by playing each side's version of every move on its own position, so they
/// carry a real move history (repetition rulings) and can be replayed by an engine from
/// [`Arbiter::start_fen`] and [`Arbiter::view_moves`].
#[derive(Clone, Debug)]
pub struct Arbiter {
    truth: Position,
    views: [Position; 2],
    start_fens: [String; 2],
    view_moves: [Vec<Move>; 2],
    truth_moves: Vec<Move>,
    start_side: Color,
    rule: CaptureReveal,
}

impl Arbiter {
    /// Starts from an arbiter position (every dark piece's identity in the hidden field). Both
    /// sides start knowing what its pool field says; the rule decides what they learn from
    /// captures. The rule is also stored in every position's [`JieqiRules`].
    pub fn new(start: &Position, rule: CaptureReveal) -> Result<Arbiter, ArbiterError> {
        if start.variant != Variant::Jieqi {
            return Err(ArbiterError::NotJieqi);
        }
        if let Some(s) = super::attacks::Squares(start.dark).find(|&s| start.hidden[s] == 0) {
            return Err(ArbiterError::UnknownIdentity(Square(s as u8)));
        }
        let mut truth = start.clone();
        truth.clear_history();
        truth.jieqi.capture_reveal = rule;
        // The arbiter knows everything: its pool is exactly the identities still face down.
        let mut pool = [[0u8; 7]; 2];
        for s in super::attacks::Squares(truth.dark) {
            let c = if truth.by_color[0] & (1u128 << s) != 0 {
                0
            } else {
                1
            };
            pool[c][truth.hidden[s] as usize - 1] += 1;
        }
        truth.pool = pool;
        truth.key = truth.compute_key();
        let mut view = truth.without_hidden();
        view.pool = start.pool;
        view.key = view.compute_key();
        let fen = view.to_fen();
        let start_side = truth.side;
        Ok(Arbiter {
            truth,
            views: [view.clone(), view],
            start_fens: [fen.clone(), fen],
            view_moves: [Vec::new(), Vec::new()],
            truth_moves: Vec::new(),
            start_side,
            rule,
        })
    }

    /// A fresh game from the seeded deal [`deal`]`(seed)`.
    pub fn from_seed(seed: u64, rule: CaptureReveal) -> Arbiter {
        Arbiter::new(&deal(seed), rule).expect("a deal knows every identity")
    }

    /// The position with every identity known (never show it to a player).
    pub fn truth(&self) -> &Position {
        &self.truth
    }

    /// What `side` knows: no hidden identities, its own pools.
    pub fn view(&self, side: Color) -> &Position {
        &self.views[side.index()]
    }

    /// `side`'s view as a FEN (without the hidden field).
    pub fn view_fen(&self, side: Color) -> String {
        self.views[side.index()].to_fen()
    }

    /// The start position as both sides were shown it.
    pub fn start_fen(&self, side: Color) -> &str {
        &self.start_fens[side.index()]
    }

    /// Every move so far as `side` was told it.
    pub fn view_moves(&self, side: Color) -> &[Move] {
        &self.view_moves[side.index()]
    }

    /// Every move so far with the full truth.
    pub fn truth_moves(&self) -> &[Move] {
        &self.truth_moves
    }

    /// The UCI `position` arguments for `side`: `fen <start> moves <m1> <m2> ...` with the
    /// suffixes `side` is allowed to see.
    pub fn position_command(&self, side: Color) -> String {
        let mut s = format!("fen {}", self.start_fens[side.index()]);
        let moves = &self.view_moves[side.index()];
        if !moves.is_empty() {
            s.push_str(" moves");
            let mut mover = self.start_side;
            for &m in moves {
                s.push(' ');
                s.push_str(&format_move(m, mover));
                mover = mover.flip();
            }
        }
        s
    }

    /// The capture-reveal rule in force.
    pub fn rule(&self) -> CaptureReveal {
        self.rule
    }

    /// Plays `m` (its squares; suffixes ignored, as an engine's `bestmove` has none) and tells
    /// each side what it may know.
    pub fn play(&mut self, m: Move) -> Result<Played, ArbiterError> {
        let truth = true_move(&self.truth, m)?;
        let mover = self.truth.side_to_move();
        let mut views = [truth.squares(); 2];
        for viewer in Color::ALL {
            let v = &mut views[viewer.index()];
            if let Some(k) = truth.reveal() {
                *v = v.with_reveal(k);
            }
            if let Some(k) = truth.captured_reveal()
                && self.rule.learns(viewer, mover)
            {
                *v = v.with_captured_reveal(k);
            }
        }
        self.truth.make_move(truth);
        self.truth_moves.push(truth);
        for viewer in Color::ALL {
            let i = viewer.index();
            self.views[i].make_move(views[i]);
            self.view_moves[i].push(views[i]);
        }
        Ok(Played { truth, views })
    }

    /// The game's outcome, ruled on the true position.
    pub fn outcome(&self) -> Option<Outcome> {
        self.truth.outcome()
    }
}
