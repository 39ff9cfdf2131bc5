//! The Jieqi arbiter: the referee of a game with hidden identities. It holds the true position
//! (every dark piece's identity, dealt by [`deal`]) and one view per side, and tells each side
//! every move as the [`CaptureReveal`] rule lets it see it. The engine never sees the truth: its
//! positions are the views.

use super::attacks::Squares;
use super::jieqi::{dark_home_squares, format_move};
use super::position::Position;
use super::rules::Outcome;
use super::types::*;
use rand::{RngCore, SeedableRng};
use rand_chacha::ChaCha20Rng;
use std::fmt;
use std::str::FromStr;
use thiserror::Error;

/// Who learns the identity of a dark piece when it is captured (docs/jieqi-rules.md rule 5).
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, Hash, Default, serde::Serialize, serde::Deserialize,
)]
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
/// [`Arbiter::position_command`].
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
    /// captures.
    pub fn new(start: &Position, rule: CaptureReveal) -> Result<Arbiter, ArbiterError> {
        if start.variant() != Variant::Jieqi {
            return Err(ArbiterError::NotJieqi);
        }
        if let Some(s) = Squares(start.dark())
            .map(|s| Square(s as u8))
            .find(|&s| start.hidden_kind(s).is_none())
        {
            return Err(ArbiterError::UnknownIdentity(s));
        }
        let mut truth = start.clone();
        truth.clear_history();
        // The arbiter knows everything: its pool is exactly the identities still face down.
        let mut pool = [[0u8; 7]; 2];
        for s in Squares(truth.dark()).map(|s| Square(s as u8)) {
            let color = truth
                .piece_at(s)
                .expect("a dark square holds a piece")
                .color;
            let kind = truth.hidden_kind(s).expect("checked above");
            pool[color.index()][kind.index()] += 1;
        }
        truth.pool = pool;
        truth.key = truth.compute_key();
        let mut view = truth.without_hidden();
        view.pool = start.pool;
        view.key = view.compute_key();
        let fen = view.to_fen();
        let start_side = truth.side_to_move();
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
