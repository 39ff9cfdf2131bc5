//! The evaluation parameters: their schema, the flat (genome) view and the JSON file format.
//!
//! Every number of the evaluation lives in `params/xiangqi.json` (format in `params/README.md`).
//! The schema below fixes which terms exist and their shape; the file supplies each value with
//! its `min`, `max` and `step` (viridithas `emit_json_for_spsa`, Monty `Param{val,min,max}`).
//! Position tables are stored half-width (files a-e, mirrored to f-i) and only over the squares
//! the piece can reach (Pikafish-HCE `psqt.cpp`): fewer genes, faster convergence.
//!
//! Naming glossary of the flat view (`specs()`): `<family>.<item>[.<entry>].<mg|eg>`, e.g.
//! `material.rook.mg`, `pst.horse.c7.eg`, `king.attackers.3.mg`; a value without middlegame /
//! endgame pair (only `tempo`) has no suffix.

use super::jieqi::{JIEQI_DEFAULT_JSON, JIEQI_TERMS, JOFFSET, NALL, jid};
use super::score::S;
use crate::core::attacks::{ADVISOR_SQUARES, ELEPHANT_SQUARES, OWN_PALACE, PAWN_SQUARES};
use crate::core::{PieceType, Square};
use serde_json::Value;
use std::fmt::Write as _;
use std::path::Path;
use std::sync::OnceLock;
use thiserror::Error;

/// Why a params file (or text) was refused. Every variant names the key at fault.
#[derive(Debug, Error)]
pub enum ParamsError {
    /// (The I/O error is a plain field, not a `source`, so `{:#}` chains print it once.)
    #[error("cannot read {path}: {error}")]
    Io { path: String, error: std::io::Error },
    #[error("malformed JSON at line {line} column {column}: {message}")]
    Json {
        line: usize,
        column: usize,
        message: String,
    },
    #[error("missing key '{0}'")]
    MissingKey(String),
    #[error("unknown key '{0}'")]
    UnknownKey(String),
    #[error("'{key}' must be {expected}")]
    WrongType { key: String, expected: String },
    #[error("'{key}' = {value} is outside its bounds [{min}, {max}]")]
    OutOfBounds {
        key: String,
        value: i64,
        min: i32,
        max: i32,
    },
    #[error("'{key}' has {found} entries, expected {expected}")]
    WrongSize {
        key: String,
        expected: usize,
        found: usize,
    },
    #[error("'{key}': min {min} is greater than max {max}")]
    MinAboveMax { key: String, min: i32, max: i32 },
    #[error("'{key}': step {step} must be at least 1")]
    BadStep { key: String, step: i32 },
    #[error("'{key}' does not list the squares {expected}")]
    WrongSquares { key: String, expected: String },
    #[error("'variant' is '{found}', expected '{expected}'")]
    WrongVariant { found: String, expected: String },
    #[error("{0}")]
    Invalid(String),
}

/// The shape of one term of the schema.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Shape {
    /// One value, the same in middlegame and endgame.
    Plain,
    /// A (middlegame, endgame) pair.
    Tapered,
    /// `n` tapered entries indexed by a count (e.g. number of attackers).
    List(usize),
    /// A tapered position table of a piece kind over its reachable half-board squares.
    Pst(PieceType),
    /// A tapered half-width table over the whole board (files a-e, every rank): Jieqi's revealed
    /// advisors, elephants and pawns may stand anywhere.
    Board,
    /// A tapered table over red's 15 dark starting squares (full width; black mirrored by rank).
    Dark,
}

impl Shape {
    /// Number of flat values.
    pub const fn len(self) -> usize {
        match self {
            Shape::Plain => 1,
            Shape::Tapered => 2,
            Shape::List(n) => 2 * n,
            Shape::Pst(k) => 2 * PST_LEN[k as usize],
            Shape::Board => 2 * PST_LEN[PieceType::Rook as usize],
            Shape::Dark => 2 * DARK_SQUARES.len(),
        }
    }

    /// The squares of a table shape in storage order (red's view), `None` for other shapes.
    pub fn squares(self) -> Option<Vec<Square>> {
        match self {
            Shape::Pst(k) => Some(pst_squares(k)),
            Shape::Board => Some(pst_squares(PieceType::Rook)),
            Shape::Dark => Some(DARK_SQUARES.iter().map(|&s| Square(s)).collect()),
            _ => None,
        }
    }

    pub const fn is_empty(self) -> bool {
        self.len() == 0
    }
}

/// One term of the evaluation: where it lives in the file (dotted path), its shape, and what it
/// rewards (a positive value is a bonus for the side that has the feature).
#[derive(Clone, Copy, Debug)]
pub struct TermDef {
    pub name: &'static str,
    pub shape: Shape,
    pub doc: &'static str,
}

const fn t(name: &'static str, shape: Shape, doc: &'static str) -> TermDef {
    TermDef { name, shape, doc }
}

/// Term ids: indices into [`TERMS`]. Families of consecutive terms are indexed by piece kind.
pub mod id {
    pub const TEMPO: usize = 0;
    /// Six terms, advisor..pawn (`kind.index() - 1`).
    pub const MATERIAL: usize = 1;
    /// Seven terms, king..pawn (`kind.index()`).
    pub const PST: usize = 7;
    pub const MOB_ROOK: usize = 14;
    pub const MOB_HORSE: usize = 15;
    pub const MOB_CANNON: usize = 16;
    pub const KING_ATTACKERS: usize = 17;
    pub const KING_ROOK: usize = 18;
    pub const KING_HORSE: usize = 19;
    pub const KING_CANNON: usize = 20;
    pub const KING_PAWN: usize = 21;
    pub const MISSING_ADVISOR: usize = 22;
    pub const MISSING_ELEPHANT: usize = 23;
    pub const CANNON_KING_LINE: usize = 24;
    pub const ROOK_OPEN: usize = 25;
    pub const ROOK_SEMI_OPEN: usize = 26;
    pub const PAWN_CONNECTED: usize = 27;
    /// Six terms, advisor..pawn (`kind.index() - 1`).
    pub const HANGING: usize = 28;
    pub const THREAT_BY_PAWN: usize = 34;
    pub const THREAT_ROOK_BY_MINOR: usize = 35;
    pub const ROOKS_CONNECTED: usize = 36;
    pub const HORSE_CANNON: usize = 37;
    pub const DEFENDED: usize = 38;
}

/// Entries of `king.attackers` (0, 1, .., 5 or more attackers).
pub const KING_ATTACKER_SLOTS: usize = 6;
/// Entries of `cannon.king_line` (0, 1 or 2 pieces between cannon and enemy king).
pub const KING_LINE_SLOTS: usize = 3;

/// The schema: every term of the Xiangqi evaluation, in file and flat order.
pub const TERMS: [TermDef; 39] = [
    t("tempo", Shape::Plain, "bonus for the side to move"),
    t("material.advisor", Shape::Tapered, "piece value"),
    t("material.elephant", Shape::Tapered, "piece value"),
    t("material.horse", Shape::Tapered, "piece value"),
    t("material.rook", Shape::Tapered, "piece value"),
    t("material.cannon", Shape::Tapered, "piece value"),
    t(
        "material.pawn",
        Shape::Tapered,
        "piece value (before crossing; the table adds the rest)",
    ),
    t("pst.king", Shape::Pst(PieceType::King), "king position"),
    t(
        "pst.advisor",
        Shape::Pst(PieceType::Advisor),
        "advisor position",
    ),
    t(
        "pst.elephant",
        Shape::Pst(PieceType::Elephant),
        "elephant position",
    ),
    t("pst.horse", Shape::Pst(PieceType::Horse), "horse position"),
    t("pst.rook", Shape::Pst(PieceType::Rook), "rook position"),
    t(
        "pst.cannon",
        Shape::Pst(PieceType::Cannon),
        "cannon position",
    ),
    t("pst.pawn", Shape::Pst(PieceType::Pawn), "pawn position"),
    t(
        "mobility.rook",
        Shape::Tapered,
        "per square a rook reaches (not own pieces)",
    ),
    t(
        "mobility.horse",
        Shape::Tapered,
        "per square a horse reaches (not own pieces)",
    ),
    t(
        "mobility.cannon",
        Shape::Tapered,
        "per quiet move and capture of a cannon",
    ),
    t(
        "king.attackers",
        Shape::List(KING_ATTACKER_SLOTS),
        "by number of own rooks, horses, cannons and pawns hitting the enemy palace (0..5+)",
    ),
    t(
        "king.rook_attack",
        Shape::Tapered,
        "per enemy palace square a rook hits",
    ),
    t(
        "king.horse_attack",
        Shape::Tapered,
        "per enemy palace square a horse hits",
    ),
    t(
        "king.cannon_attack",
        Shape::Tapered,
        "per enemy palace piece a cannon hits",
    ),
    t(
        "king.pawn_attack",
        Shape::Tapered,
        "per enemy palace square a pawn hits",
    ),
    t(
        "king.missing_advisor_vs_horse",
        Shape::Tapered,
        "per missing own advisor times enemy horses",
    ),
    t(
        "king.missing_elephant_vs_cannon",
        Shape::Tapered,
        "per missing own elephant times enemy cannons",
    ),
    t(
        "cannon.king_line",
        Shape::List(KING_LINE_SLOTS),
        "cannon on the enemy king's file or rank, by pieces between (0 = empty-head cannon)",
    ),
    t(
        "rook.open_file",
        Shape::Tapered,
        "rook on a file without pawns",
    ),
    t(
        "rook.semi_open_file",
        Shape::Tapered,
        "rook on a file with enemy pawns only",
    ),
    t(
        "pawn.connected",
        Shape::Tapered,
        "crossed pawn beside another crossed own pawn",
    ),
    t(
        "threat.hanging.advisor",
        Shape::Tapered,
        "attacked, undefended advisor",
    ),
    t(
        "threat.hanging.elephant",
        Shape::Tapered,
        "attacked, undefended elephant",
    ),
    t(
        "threat.hanging.horse",
        Shape::Tapered,
        "attacked, undefended horse",
    ),
    t(
        "threat.hanging.rook",
        Shape::Tapered,
        "attacked, undefended rook",
    ),
    t(
        "threat.hanging.cannon",
        Shape::Tapered,
        "attacked, undefended cannon",
    ),
    t(
        "threat.hanging.pawn",
        Shape::Tapered,
        "attacked, undefended pawn",
    ),
    t(
        "threat.by_pawn",
        Shape::Tapered,
        "own piece (not pawn or king) attacked by a pawn",
    ),
    t(
        "threat.rook_by_minor",
        Shape::Tapered,
        "own rook attacked by a horse or cannon",
    ),
    t(
        "coord.rooks_connected",
        Shape::Tapered,
        "the two rooks defend each other",
    ),
    t(
        "coord.horse_cannon",
        Shape::Tapered,
        "at least one horse and one cannon left",
    ),
    t(
        "coord.defended",
        Shape::Tapered,
        "per own piece (not king) defended by another",
    ),
];

const NT: usize = TERMS.len();

/// Flat offset of each term.
pub const OFFSET: [usize; NT] = {
    let mut o = [0; NT];
    let mut acc = 0;
    let mut i = 0;
    while i < NT {
        o[i] = acc;
        acc += TERMS[i].shape.len();
        i += 1;
    }
    o
};

/// Number of flat values.
pub const NFLAT: usize = OFFSET[NT - 1] + TERMS[NT - 1].shape.len();

/// Which phase a flat value belongs to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Part {
    Plain,
    Mg,
    Eg,
}

/// `PART[i]`: whether flat value `i` is plain, a middlegame or an endgame value.
pub const PART: [Part; NFLAT] = {
    let mut p = [Part::Plain; NFLAT];
    let mut i = 0;
    while i < NT {
        if !matches!(TERMS[i].shape, Shape::Plain) {
            let mut j = 0;
            while j < TERMS[i].shape.len() {
                p[OFFSET[i] + j] = if j % 2 == 0 { Part::Mg } else { Part::Eg };
                j += 1;
            }
        }
        i += 1;
    }
    p
};

/// Whether flat value `i` of the whole flat view (Xiangqi, then Jieqi) is plain, middlegame
/// or endgame.
#[inline]
pub fn part(i: usize) -> Part {
    if i < NFLAT {
        PART[i]
    } else {
        super::jieqi::JPART[i - NFLAT]
    }
}

/// Squares (red's view) where each kind's table has an entry: the reachable squares on files
/// a-e, ordered as the file shows them, rank 9 (top) down to rank 0, files a..e.
const fn half_squares(kind: usize) -> ([u8; 50], usize) {
    let reach: u128 = match kind {
        0 => OWN_PALACE[0],
        1 => ADVISOR_SQUARES[0],
        2 => ELEPHANT_SQUARES[0],
        6 => PAWN_SQUARES[0],
        _ => (1u128 << 90) - 1,
    };
    let mut out = [0u8; 50];
    let mut n = 0;
    let mut r = 10;
    while r > 0 {
        r -= 1;
        let mut f = 0;
        while f < 5 {
            let s = r * 9 + f;
            if reach & (1u128 << s) != 0 {
                out[n] = s as u8;
                n += 1;
            }
            f += 1;
        }
    }
    (out, n)
}

/// Table length of each kind (king 6, advisor 3, elephant 4, pawn 31, others 50).
pub const PST_LEN: [usize; 7] = {
    let mut l = [0; 7];
    let mut k = 0;
    while k < 7 {
        l[k] = half_squares(k).1;
        k += 1;
    }
    l
};

/// Marks a square without a table entry in [`PST_SLOT`].
pub const NO_SLOT: u8 = u8::MAX;

/// Red's 15 dark starting squares in storage order (rank 9 first, files a..i): the pawn
/// squares a3 c3 e3 g3 i3, the cannon squares b2 h2, then the back rank without the king.
pub const DARK_SQUARES: [u8; 15] = [27, 29, 31, 33, 35, 19, 25, 0, 1, 2, 3, 5, 6, 7, 8];

/// `DARK_SLOT[square]`: the entry of a red dark piece on `square` in a [`Shape::Dark`] table,
/// or `NO_SLOT` off the starting squares.
pub const DARK_SLOT: [u8; 90] = {
    let mut t = [NO_SLOT; 90];
    let mut i = 0;
    while i < DARK_SQUARES.len() {
        t[DARK_SQUARES[i] as usize] = i as u8;
        i += 1;
    }
    t
};

/// `PST_SLOT[kind][square]`: the table entry of a red piece on `square` (files f-i mirrored to
/// d-a), or `NO_SLOT` where the piece can never stand.
pub const PST_SLOT: [[u8; 90]; 7] = {
    let mut t = [[NO_SLOT; 90]; 7];
    let mut k = 0;
    while k < 7 {
        let (sq, n) = half_squares(k);
        let mut i = 0;
        while i < n {
            let s = sq[i] as usize;
            let (f, r) = (s % 9, s / 9);
            t[k][s] = i as u8;
            t[k][r * 9 + (8 - f)] = i as u8;
            i += 1;
        }
        k += 1;
    }
    t
};

/// The squares of `kind`'s table in storage order (red's view, files a-e).
pub fn pst_squares(kind: PieceType) -> Vec<Square> {
    let (sq, n) = half_squares(kind.index());
    sq[..n].iter().map(|&s| Square(s)).collect()
}

/// Flat index of the middlegame value of `kind`'s table entry for a red piece on `sq`.
#[inline(always)]
pub fn pst_flat(kind: PieceType, slot: u8) -> usize {
    OFFSET[id::PST + kind.index()] + 2 * slot as usize
}

/// The bounds and step of one flat value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Bounds {
    pub min: i32,
    pub max: i32,
    pub step: i32,
}

/// One tunable number in the flat view: `name` is a dotted path (`material.rook.mg`,
/// `pst.rook.c3.mg`), bounds and step come from the params file.
#[derive(Clone, Debug, PartialEq)]
pub struct ParamSpec {
    pub name: String,
    pub value: i32,
    pub min: i32,
    pub max: i32,
    pub step: i32,
}

/// Every number of the evaluation, with its bounds, plus the tables derived from them.
#[derive(Clone, Debug, PartialEq)]
pub struct EvalParams {
    /// The flat values, in [`TERMS`] order.
    pub(crate) values: Box<[i32; NFLAT]>,
    pub(crate) bounds: Box<[Bounds; NFLAT]>,
    /// Material plus table, red-relative (black entries negated and rank-mirrored), indexed by
    /// `color * 7 + kind` and square: the evaluation's one lookup per piece.
    pub(crate) psq: Box<[[S; 90]; 14]>,
    /// The Jieqi part (`params/jieqi.json`), flat names prefixed `jieqi.` after the Xiangqi ones.
    pub(crate) jieqi: JieqiPart,
}

/// The Jieqi terms' values and bounds ([`JIEQI_TERMS`] order) and their derived tables.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct JieqiPart {
    pub(crate) values: Vec<i32>,
    pub(crate) bounds: Vec<Bounds>,
    /// Revealed pieces: Jieqi piece value plus table (shared Xiangqi tables for king, horse,
    /// rook and cannon), red-relative, indexed like `EvalParams::psq`.
    pub(crate) psq: Box<[[S; 90]; 14]>,
    /// Dark pieces: the position value of the starting square, red-relative, by colour.
    pub(crate) dark: Box<[[S; 90]; 2]>,
    /// Whether Jieqi positions use these terms (`false`: the Xiangqi terms, dark pieces as the
    /// kind of their square, the evaluation before the Jieqi tables; a match baseline).
    pub(crate) enabled: bool,
}

/// The embedded default parameters (`params/xiangqi.json`).
pub const DEFAULT_JSON: &str = include_str!("../../params/xiangqi.json");

impl Default for EvalParams {
    fn default() -> Self {
        static DEFAULT: OnceLock<EvalParams> = OnceLock::new();
        DEFAULT
            .get_or_init(|| {
                let mut p = EvalParams::from_json_str(DEFAULT_JSON)
                    .expect("the embedded params/xiangqi.json is valid (checked by tests)");
                p.set_jieqi_json_str(JIEQI_DEFAULT_JSON)
                    .expect("the embedded params/jieqi.json is valid (checked by tests)");
                p
            })
            .clone()
    }
}

/// The parsed embedded Jieqi part (values, bounds), parsed once.
static DEFAULT_JIEQI: OnceLock<(Vec<i32>, Vec<Bounds>)> = OnceLock::new();

/// The flat names: the Xiangqi terms, then the Jieqi terms prefixed `jieqi.`.
fn flat_names() -> &'static [String] {
    static NAMES: OnceLock<Vec<String>> = OnceLock::new();
    NAMES.get_or_init(|| {
        let mut names = schema_flat_names(&TERMS);
        names.extend(
            schema_flat_names(&JIEQI_TERMS)
                .into_iter()
                .map(|n| format!("jieqi.{n}")),
        );
        names
    })
}

/// The flat names of a schema's values, in order (see the naming glossary above).
pub fn schema_flat_names(terms: &[TermDef]) -> Vec<String> {
    {
        let mut out = Vec::new();
        for term in terms.iter() {
            match term.shape {
                Shape::Plain => out.push(term.name.to_string()),
                Shape::Tapered => {
                    out.push(format!("{}.mg", term.name));
                    out.push(format!("{}.eg", term.name));
                }
                Shape::List(n) => {
                    for i in 0..n {
                        out.push(format!("{}.{i}.mg", term.name));
                        out.push(format!("{}.{i}.eg", term.name));
                    }
                }
                Shape::Pst(_) | Shape::Board | Shape::Dark => {
                    for s in term.shape.squares().unwrap_or_default() {
                        out.push(format!("{}.{s}.mg", term.name));
                        out.push(format!("{}.{s}.eg", term.name));
                    }
                }
            }
        }
        out
    }
}

impl EvalParams {
    fn from_parts(
        values: Box<[i32; NFLAT]>,
        bounds: Box<[Bounds; NFLAT]>,
        jieqi_values: Vec<i32>,
        jieqi_bounds: Vec<Bounds>,
    ) -> EvalParams {
        let mut p = EvalParams {
            values,
            bounds,
            psq: Box::new([[S::ZERO; 90]; 14]),
            jieqi: JieqiPart {
                values: jieqi_values,
                bounds: jieqi_bounds,
                psq: Box::new([[S::ZERO; 90]; 14]),
                dark: Box::new([[S::ZERO; 90]; 2]),
                enabled: true,
            },
        };
        p.rebuild();
        p
    }

    /// Recomputes the derived tables from the flat values.
    fn rebuild(&mut self) {
        for kind in PieceType::ALL {
            let k = kind.index();
            let material = if kind == PieceType::King {
                S::ZERO
            } else {
                self.s(OFFSET[id::MATERIAL + k - 1])
            };
            for sq in 0..90 {
                let slot = PST_SLOT[k][sq];
                let pst = if slot == NO_SLOT {
                    S::ZERO
                } else {
                    self.s(pst_flat(kind, slot))
                };
                let v = material + pst;
                self.psq[k][sq] = v;
                self.psq[7 + k][Square(sq as u8).flip_rank().index()] = -v;
            }
        }
        super::jieqi::rebuild(self);
    }

    /// The tapered pair at flat index `i`.
    #[inline(always)]
    pub(crate) fn s(&self, i: usize) -> S {
        S(self.values[i], self.values[i + 1])
    }

    /// Reads a params file; errors name the offending key.
    pub fn load(path: &Path) -> Result<EvalParams, ParamsError> {
        let text = std::fs::read_to_string(path).map_err(|error| ParamsError::Io {
            path: path.display().to_string(),
            error,
        })?;
        EvalParams::from_json_str(&text)
    }

    /// Parses the params file format (see `params/README.md`).
    pub fn from_json_str(text: &str) -> Result<EvalParams, ParamsError> {
        let root = parse_json(text)?;
        let (v, b) = parse_terms(&root, &TERMS, "xiangqi")?;
        // The Jieqi part is not in a Xiangqi file: keep the embedded one (or the one already
        // loaded, see `load_jieqi`).
        let (jv, jb) = match DEFAULT_JIEQI.get() {
            Some(d) => (d.0.clone(), d.1.clone()),
            None => {
                let root: Value = serde_json::from_str(JIEQI_DEFAULT_JSON).map_err(|e| {
                    ParamsError::Invalid(format!("embedded params/jieqi.json: {e}"))
                })?;
                let d = parse_terms(&root, &JIEQI_TERMS, "jieqi")?;
                let _ = DEFAULT_JIEQI.set(d.clone());
                d
            }
        };
        let mut values = Box::new([0i32; NFLAT]);
        values.copy_from_slice(&v);
        let mut bounds = Box::new(
            [Bounds {
                min: 0,
                max: 0,
                step: 1,
            }; NFLAT],
        );
        bounds.copy_from_slice(&b);
        Ok(EvalParams::from_parts(values, bounds, jv, jb))
    }

    /// Replaces the Jieqi part with a Jieqi params file (`params/jieqi.json` format, `"variant":
    /// "jieqi"`); errors name the offending key. The Xiangqi part is kept.
    pub fn load_jieqi(&mut self, path: &Path) -> Result<(), ParamsError> {
        let text = std::fs::read_to_string(path).map_err(|error| ParamsError::Io {
            path: path.display().to_string(),
            error,
        })?;
        self.set_jieqi_json_str(&text)
    }

    /// Replaces the Jieqi part with a Jieqi params text (see [`EvalParams::load_jieqi`]).
    pub fn set_jieqi_json_str(&mut self, text: &str) -> Result<(), ParamsError> {
        let root = parse_json(text)?;
        let (v, b) = parse_terms(&root, &JIEQI_TERMS, "jieqi")?;
        self.jieqi.values = v;
        self.jieqi.bounds = b;
        self.rebuild();
        Ok(())
    }

    /// A copy whose Jieqi positions are scored with (`true`, the default) or without the Jieqi
    /// terms (`false`: the Xiangqi terms over the visible kinds, dark pieces as the kind of
    /// their square; the baseline `xqtune match --b-xiangqi-eval-in-jieqi` plays).
    pub fn with_jieqi_terms(&self, enabled: bool) -> EvalParams {
        let mut p = self.clone();
        p.jieqi.enabled = enabled;
        p
    }

    /// Whether Jieqi positions are scored with the Jieqi terms (see
    /// [`EvalParams::with_jieqi_terms`]).
    pub fn jieqi_terms_enabled(&self) -> bool {
        self.jieqi.enabled
    }

    /// The Jieqi part in its file format (same format `load_jieqi` reads).
    pub fn jieqi_to_json_string(&self) -> String {
        write_terms(
            &JIEQI_TERMS,
            &self.jieqi.values,
            &self.jieqi.bounds,
            "jieqi",
            "xqtune Jieqi evaluation parameters, centipawns; format: params/README.md",
        )
    }

    /// A stable 64-bit hash of the values, Jieqi part included (FNV-1a; recorded in PGN
    /// headers).
    pub fn hash(&self) -> u64 {
        let mut h = 0xcbf2_9ce4_8422_2325u64;
        for v in self.values.iter().chain(self.jieqi.values.iter()) {
            for b in v.to_le_bytes() {
                h = (h ^ b as u64).wrapping_mul(0x0100_0000_01b3);
            }
        }
        if !self.jieqi.enabled {
            h = (h ^ 0xff).wrapping_mul(0x0100_0000_01b3);
        }
        h
    }

    /// The flat view, in `to_vec` order.
    pub fn specs(&self) -> Vec<ParamSpec> {
        let values = self.values.iter().chain(self.jieqi.values.iter());
        let bounds = self.bounds.iter().chain(self.jieqi.bounds.iter());
        flat_names()
            .iter()
            .zip(values.zip(bounds))
            .map(|(name, (&value, b))| ParamSpec {
                name: name.clone(),
                value,
                min: b.min,
                max: b.max,
                step: b.step,
            })
            .collect()
    }

    /// The genome / gradient vector: the Xiangqi values, then the Jieqi values.
    pub fn to_vec(&self) -> Vec<i32> {
        let mut v = self.values.to_vec();
        v.extend_from_slice(&self.jieqi.values);
        v
    }

    /// The inverse of `to_vec`; values are clamped to their bounds.
    ///
    /// # Panics
    /// If `v` is not `to_vec().len()` long (a caller bug, not bad input).
    pub fn from_vec(&self, v: &[i32]) -> EvalParams {
        assert_eq!(v.len(), NALL, "from_vec: wrong vector length");
        let mut values = self.values.clone();
        for (i, x) in v[..NFLAT].iter().enumerate() {
            values[i] = (*x).clamp(self.bounds[i].min, self.bounds[i].max);
        }
        let b = &self.jieqi.bounds;
        let jv = v[NFLAT..]
            .iter()
            .enumerate()
            .map(|(i, x)| (*x).clamp(b[i].min, b[i].max))
            .collect();
        let mut p = EvalParams::from_parts(values, self.bounds.clone(), jv, b.clone());
        p.jieqi.enabled = self.jieqi.enabled;
        p
    }

    /// A copy with every value for which `keep(term)` is false set to zero (or the bound
    /// nearest zero, so the result stays inside its bounds).
    /// The Jieqi part likewise by `keep_jieqi(term)` ([`JIEQI_TERMS`] ids).
    fn zero_except(
        &self,
        keep: impl Fn(usize) -> bool,
        keep_jieqi: impl Fn(usize) -> bool,
    ) -> EvalParams {
        let mut values = self.values.clone();
        for (ti, term) in TERMS.iter().enumerate() {
            if keep(ti) {
                continue;
            }
            for i in OFFSET[ti]..OFFSET[ti] + term.shape.len() {
                values[i] = 0.clamp(self.bounds[i].min, self.bounds[i].max);
            }
        }
        let mut jv = self.jieqi.values.clone();
        for (ti, term) in JIEQI_TERMS.iter().enumerate() {
            if keep_jieqi(ti) {
                continue;
            }
            for i in JOFFSET[ti]..JOFFSET[ti] + term.shape.len() {
                let b = self.jieqi.bounds[i];
                jv[i] = 0.clamp(b.min, b.max);
            }
        }
        let mut p =
            EvalParams::from_parts(values, self.bounds.clone(), jv, self.jieqi.bounds.clone());
        p.jieqi.enabled = self.jieqi.enabled;
        p
    }

    /// Piece values kept, every other term zero (the baseline of the engine's measurements).
    /// Jieqi: its piece values kept (dark pieces still worth their pool's average).
    pub fn material_only(&self) -> EvalParams {
        self.zero_except(
            |ti| (id::MATERIAL..id::MATERIAL + 6).contains(&ti),
            |ti| (jid::MATERIAL..jid::MATERIAL + 6).contains(&ti),
        )
    }

    /// All position tables and mobility zero, piece values and the other terms kept: the
    /// tuners' starting point. Jieqi: its tables (dark squares included) zero too.
    pub fn flattened(&self) -> EvalParams {
        self.zero_except(
            |ti| !(id::PST..=id::MOB_CANNON).contains(&ti),
            |ti| (jid::MATERIAL..jid::MATERIAL + 6).contains(&ti),
        )
    }

    /// The full-board 9x10 table of `kind` in red's view (index `rank * 9 + file`), material
    /// not included; squares the piece never reaches read 0. Black's table is this one mirrored
    /// by rank. For export and heat maps.
    pub fn pst_board(&self, kind: PieceType, endgame: bool) -> [i32; 90] {
        let mut out = [0; 90];
        for (sq, o) in out.iter_mut().enumerate() {
            let slot = PST_SLOT[kind.index()][sq];
            if slot != NO_SLOT {
                *o = self.values[pst_flat(kind, slot) + endgame as usize];
            }
        }
        out
    }

    /// The params file text (same format `load` reads).
    pub fn to_json_string(&self) -> String {
        write_json(self)
    }
}

// ---------------------------------------------------------------------------------------------
// JSON reading

/// Parses JSON text; errors name line and column.
fn parse_json(text: &str) -> Result<Value, ParamsError> {
    serde_json::from_str(text).map_err(|e| ParamsError::Json {
        line: e.line(),
        column: e.column(),
        message: {
            // serde_json appends the position, which the error already names.
            let m = e.to_string();
            let suffix = format!(" at line {} column {}", e.line(), e.column());
            m.strip_suffix(&suffix).unwrap_or(&m).to_string()
        },
    })
}

fn field<'a>(
    obj: &'a serde_json::Map<String, Value>,
    key: &str,
    path: &str,
) -> Result<&'a Value, ParamsError> {
    obj.get(key)
        .ok_or_else(|| ParamsError::MissingKey(format!("{path}.{key}")))
}

fn int(v: &Value, key: &str) -> Result<i64, ParamsError> {
    v.as_i64().ok_or_else(|| ParamsError::WrongType {
        key: key.to_string(),
        expected: "an integer".into(),
    })
}

fn int32(v: &Value, key: &str) -> Result<i32, ParamsError> {
    let x = int(v, key)?;
    i32::try_from(x).map_err(|_| ParamsError::WrongType {
        key: key.to_string(),
        expected: "an integer in the 32-bit range".into(),
    })
}

fn int_array(v: &Value, key: &str, len: usize) -> Result<Vec<i64>, ParamsError> {
    let arr = v.as_array().ok_or_else(|| ParamsError::WrongType {
        key: key.to_string(),
        expected: format!("an array of {len} integers"),
    })?;
    if arr.len() != len {
        return Err(ParamsError::WrongSize {
            key: key.to_string(),
            expected: len,
            found: arr.len(),
        });
    }
    arr.iter()
        .enumerate()
        .map(|(i, x)| int(x, &format!("{key}[{i}]")))
        .collect()
}

/// Checks that `obj` (at `path`) has only the given fields (and `_`-prefixed comments).
fn only_fields(
    obj: &serde_json::Map<String, Value>,
    path: &str,
    allowed: &[&str],
) -> Result<(), ParamsError> {
    for k in obj.keys() {
        if !k.starts_with('_') && !allowed.contains(&k.as_str()) {
            return Err(ParamsError::UnknownKey(format!("{path}.{k}")));
        }
    }
    Ok(())
}

fn lookup<'a>(
    root: &'a Value,
    path: &str,
) -> Result<&'a serde_json::Map<String, Value>, ParamsError> {
    let mut cur = root;
    let mut walked = String::new();
    for part in path.split('.') {
        if !walked.is_empty() {
            walked.push('.');
        }
        walked.push_str(part);
        let obj = cur.as_object().ok_or_else(|| ParamsError::WrongType {
            key: if walked.len() > part.len() {
                walked[..walked.len() - part.len() - 1].to_string()
            } else {
                "(top level)".into()
            },
            expected: "an object".into(),
        })?;
        cur = obj
            .get(part)
            .ok_or_else(|| ParamsError::MissingKey(walked.clone()))?;
    }
    cur.as_object().ok_or_else(|| ParamsError::WrongType {
        key: path.to_string(),
        expected: "an object".into(),
    })
}

/// Rejects keys that are neither terms, groups of terms nor comments.
fn check_unknown(v: &Value, path: &str, terms: &[TermDef]) -> Result<(), ParamsError> {
    let Some(obj) = v.as_object() else {
        return Ok(());
    };
    for (k, child) in obj {
        if k.starts_with('_') || (path.is_empty() && k == "variant") {
            continue;
        }
        let p = if path.is_empty() {
            k.clone()
        } else {
            format!("{path}.{k}")
        };
        if terms.iter().any(|t| t.name == p) {
            continue; // fields are checked by the term parser
        }
        let group = format!("{p}.");
        if terms.iter().any(|t| t.name.starts_with(&group)) {
            check_unknown(child, &p, terms)?;
        } else {
            return Err(ParamsError::UnknownKey(p));
        }
    }
    Ok(())
}

/// Reads the terms of `terms` (a schema) from a parsed params file whose optional `variant` key
/// must be `variant`: the flat values and their bounds, in schema order. Shared by every params
/// file in this format (the Jieqi evaluation's schema is another `&[TermDef]`).
pub fn parse_terms(
    root: &Value,
    terms: &[TermDef],
    variant: &str,
) -> Result<(Vec<i32>, Vec<Bounds>), ParamsError> {
    if !root.is_object() {
        return Err(ParamsError::WrongType {
            key: "(top level)".into(),
            expected: "an object".into(),
        });
    }
    if let Some(v) = root.get("variant") {
        let name = v.as_str().ok_or_else(|| ParamsError::WrongType {
            key: "variant".into(),
            expected: "a string".into(),
        })?;
        if name != variant {
            return Err(ParamsError::WrongVariant {
                found: name.to_string(),
                expected: variant.to_string(),
            });
        }
    }
    check_unknown(root, "", terms)?;
    let names = schema_flat_names(terms);
    let mut values = Vec::with_capacity(names.len());
    let mut bounds = Vec::with_capacity(names.len());
    for term in terms.iter() {
        let obj = lookup(root, term.name)?;
        let path = term.name;
        let min = int32(field(obj, "min", path)?, &format!("{path}.min"))?;
        let max = int32(field(obj, "max", path)?, &format!("{path}.max"))?;
        let step = int32(field(obj, "step", path)?, &format!("{path}.step"))?;
        if min > max {
            return Err(ParamsError::MinAboveMax {
                key: path.to_string(),
                min,
                max,
            });
        }
        if step < 1 {
            return Err(ParamsError::BadStep {
                key: format!("{path}.step"),
                step,
            });
        }
        let raw: Vec<i64> = match term.shape {
            Shape::Plain => {
                only_fields(obj, path, &["v", "min", "max", "step"])?;
                vec![int(field(obj, "v", path)?, &format!("{path}.v"))?]
            }
            Shape::Tapered => {
                only_fields(obj, path, &["v", "min", "max", "step"])?;
                let v = field(obj, "v", path)?;
                if !v.is_array() {
                    return Err(ParamsError::WrongType {
                        key: format!("{path}.v"),
                        expected: "a [middlegame, endgame] pair".into(),
                    });
                }
                int_array(v, &format!("{path}.v"), 2)?
            }
            Shape::List(_) | Shape::Pst(_) | Shape::Board | Shape::Dark => {
                let n = term.shape.len() / 2;
                if let Some(squares) = term.shape.squares() {
                    only_fields(obj, path, &["squares", "mg", "eg", "min", "max", "step"])?;
                    if let Some(sq) = obj.get("squares") {
                        check_squares(sq, &squares, path)?;
                    }
                } else {
                    only_fields(obj, path, &["mg", "eg", "min", "max", "step"])?;
                }
                let mg = int_array(field(obj, "mg", path)?, &format!("{path}.mg"), n)?;
                let eg = int_array(field(obj, "eg", path)?, &format!("{path}.eg"), n)?;
                mg.iter()
                    .zip(eg.iter())
                    .flat_map(|(&a, &b)| [a, b])
                    .collect()
            }
        };
        for &x in raw.iter() {
            if x < min as i64 || x > max as i64 {
                return Err(ParamsError::OutOfBounds {
                    key: names[values.len()].clone(),
                    value: x,
                    min,
                    max,
                });
            }
            values.push(x as i32);
            bounds.push(Bounds { min, max, step });
        }
    }
    Ok((values, bounds))
}

/// The optional `squares` list of a table must name its squares in storage order.
fn check_squares(v: &Value, squares: &[Square], path: &str) -> Result<(), ParamsError> {
    let expected: Vec<String> = squares.iter().map(|s| s.to_string()).collect();
    let wrong = || ParamsError::WrongSquares {
        key: format!("{path}.squares"),
        expected: expected.join(" "),
    };
    let rows = v.as_array().ok_or_else(wrong)?;
    let mut found = Vec::new();
    for r in rows {
        let s = r.as_str().ok_or_else(wrong)?;
        found.extend(s.split_whitespace().map(str::to_string));
    }
    if found != expected {
        return Err(wrong());
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// JSON writing: one term per line, tables one rank per line, so the file reads like a board.

fn write_json(p: &EvalParams) -> String {
    write_terms(
        &TERMS,
        &p.values[..],
        &p.bounds[..],
        "xiangqi",
        "xqtune Xiangqi evaluation parameters, centipawns; format: params/README.md",
    )
}

/// Writes flat `values` with their `bounds` in the params file format of the schema `terms`
/// (the inverse of [`parse_terms`]).
pub fn write_terms(
    terms: &[TermDef],
    values: &[i32],
    bounds: &[Bounds],
    variant: &str,
    about: &str,
) -> String {
    let mut out = String::new();
    out.push_str("{\n");
    let _ = writeln!(out, "  \"_about\": {},", Value::from(about));
    let _ = write!(out, "  \"variant\": {}", Value::from(variant));
    let mut o = 0;
    // Open groups and, per nesting level (top level first), whether a member was written yet.
    let mut open: Vec<&str> = Vec::new();
    let mut written: Vec<bool> = vec![true];
    for term in terms.iter() {
        let parts: Vec<&str> = term.name.split('.').collect();
        let (groups, leaf) = parts.split_at(parts.len() - 1);
        let common = open
            .iter()
            .zip(groups.iter())
            .take_while(|(a, b)| a == b)
            .count();
        while open.len() > common {
            open.pop();
            written.pop();
            let _ = write!(out, "\n{}}}", "  ".repeat(open.len() + 1));
        }
        for g in &groups[common..] {
            member_sep(&mut out, &mut written);
            let _ = write!(out, "\"{g}\": {{");
            open.push(g);
            written.push(false);
        }
        member_sep(&mut out, &mut written);
        let ind = "  ".repeat(open.len() + 1);
        let b = bounds[o];
        let bounds = format!(
            "\"min\": {}, \"max\": {}, \"step\": {}",
            b.min, b.max, b.step
        );
        let _ = write!(out, "\"{}\": ", leaf[0]);
        match term.shape {
            Shape::Plain => {
                let _ = write!(out, "{{\"v\": {}, {bounds}}}", values[o]);
            }
            Shape::Tapered => {
                let _ = write!(
                    out,
                    "{{\"v\": [{}, {}], {bounds}}}",
                    values[o],
                    values[o + 1]
                );
            }
            Shape::List(n) => {
                let list = |phase: usize| -> String {
                    (0..n)
                        .map(|i| values[o + 2 * i + phase].to_string())
                        .collect::<Vec<_>>()
                        .join(", ")
                };
                let _ = write!(
                    out,
                    "{{{bounds}, \"mg\": [{}], \"eg\": [{}]}}",
                    list(0),
                    list(1)
                );
            }
            Shape::Pst(_) | Shape::Board | Shape::Dark => {
                let squares = term.shape.squares().unwrap_or_default();
                let rows = table_rows(&squares);
                let _ = write!(out, "{{\n{ind}  {bounds},\n{ind}  \"squares\": [");
                for (ri, row) in rows.iter().enumerate() {
                    let names: Vec<String> = row.iter().map(|&i| squares[i].to_string()).collect();
                    let sep = if ri + 1 < rows.len() { "," } else { "" };
                    let _ = write!(out, "\n{ind}    \"{}\"{sep}", names.join(" "));
                }
                let _ = write!(out, "\n{ind}  ]");
                for (phase, label) in [(0, "mg"), (1, "eg")] {
                    let _ = write!(out, ",\n{ind}  \"{label}\": [");
                    for (ri, row) in rows.iter().enumerate() {
                        let vals: Vec<String> = row
                            .iter()
                            .map(|&i| format!("{:4}", values[o + 2 * i + phase]))
                            .collect();
                        let sep = if ri + 1 < rows.len() { "," } else { "" };
                        let _ = write!(out, "\n{ind}    {}{sep}", vals.join(","));
                    }
                    let _ = write!(out, "\n{ind}  ]");
                }
                let _ = write!(out, "\n{ind}}}");
            }
        }
        o += term.shape.len();
    }
    while !open.is_empty() {
        open.pop();
        let _ = write!(out, "\n{}}}", "  ".repeat(open.len() + 1));
    }
    out.push_str("\n}\n");
    out
}

/// Writes the separator before a member at the innermost open level: a comma unless it is the
/// level's first member, then a new line and the level's indentation.
fn member_sep(out: &mut String, written: &mut [bool]) {
    let depth = written.len();
    if let Some(w) = written.last_mut() {
        if *w {
            out.push(',');
        }
        *w = true;
    }
    let _ = write!(out, "\n{}", "  ".repeat(depth));
}

/// Groups the storage-order squares of a table into ranks (indices into `squares`).
fn table_rows(squares: &[Square]) -> Vec<Vec<usize>> {
    let mut rows: Vec<Vec<usize>> = Vec::new();
    let mut last = None;
    for (i, s) in squares.iter().enumerate() {
        if last != Some(s.rank()) {
            rows.push(Vec::new());
            last = Some(s.rank());
        }
        if let Some(r) = rows.last_mut() {
            r.push(i);
        }
    }
    rows
}
