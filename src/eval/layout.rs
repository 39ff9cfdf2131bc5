//! The layout of the evaluation's numbers: the term tables of Xiangqi and Jieqi, their ids,
//! offsets and names, and the one flat index space the tracer, the tuners and the files share.
//!
//! The flat view holds the Xiangqi values ([`TERMS`] order) then the Jieqi values
//! ([`JIEQI_TERMS`] order, names prefixed `jieqi.`). Term ids are looked up by name in the
//! tables at compile time ([`id`], [`jid`]), so a reordered or renamed term cannot silently
//! point an id at the wrong numbers.
//!
//! Naming glossary of the flat view: `<family>.<item>[.<entry>].<mg|eg>`, e.g.
//! `material.rook.mg`, `pst.horse.c7.eg`, `king.attackers.3.mg`; a value without middlegame /
//! endgame pair (only `tempo`) has no suffix.

use super::tables::{DARK_LEN, DARK_SQUARES, NO_SLOT, PST_LEN, PST_SLOT, pst_squares};
use crate::core::PieceType;
use crate::tunable::{self, Form, Term};
use std::sync::OnceLock;

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
            Shape::Dark => 2 * DARK_LEN,
        }
    }

    pub const fn is_empty(self) -> bool {
        self.len() == 0
    }

    /// How the file and the flat view lay the values out.
    pub fn form(self) -> Form {
        match self {
            Shape::Plain => Form::Plain,
            Shape::Tapered => Form::Tapered,
            Shape::List(n) => Form::List(n),
            Shape::Pst(k) => Form::Table(pst_squares(k)),
            Shape::Board => Form::Table(pst_squares(PieceType::Rook)),
            Shape::Dark => Form::Table(&DARK_SQUARES),
        }
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

/// Entries of `king.attackers` (0, 1, .., 5 or more attackers).
pub const KING_ATTACKER_SLOTS: usize = 6;
/// Entries of `cannon.king_line` (0, 1 or 2 pieces between cannon and enemy king).
pub const KING_LINE_SLOTS: usize = 3;

/// The schema: every term of the Xiangqi evaluation, in file and flat order.
pub const TERMS: [TermDef; 53] = [
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
        "king.danger.base",
        Shape::Plain,
        "king danger: the constant part of the attack weight D (negative: a threshold); the \
         middlegame score grows with max(D, 0)^2 / 256",
    ),
    t(
        "king.danger.rook",
        Shape::Plain,
        "king danger: attack weight per enemy palace square a rook hits",
    ),
    t(
        "king.danger.horse",
        Shape::Plain,
        "king danger: attack weight per enemy palace square a horse hits",
    ),
    t(
        "king.danger.cannon",
        Shape::Plain,
        "king danger: attack weight per enemy palace piece a cannon hits",
    ),
    t(
        "king.danger.pawn",
        Shape::Plain,
        "king danger: attack weight per enemy palace square a pawn hits",
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
        "threat.by_rook",
        Shape::Tapered,
        "own horse or cannon attacked by an enemy rook",
    ),
    t(
        "threat.by_minor",
        Shape::Tapered,
        "own horse or cannon attacked by an enemy horse or cannon",
    ),
    t(
        "trapped.horse",
        Shape::Tapered,
        "own horse with at most one safe square (reachable, not own, not attacked)",
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
    t(
        "endgame.scale_down.no_attackers",
        Shape::Plain,
        "64ths of the evaluation taken off when the side it favours has no rook, horse, cannon \
         or pawn left (it cannot mate)",
    ),
    t(
        "endgame.scale_down.one_pawn",
        Shape::Plain,
        "64ths taken off when the favoured side's only attacker is one pawn and the other side \
         keeps two or more advisors and elephants",
    ),
    t(
        "endgame.scale_down.pawns",
        Shape::Plain,
        "64ths taken off when the favoured side's attackers are two or more pawns alone and the \
         other side keeps three or more advisors and elephants",
    ),
    t(
        "endgame.scale_down.one_minor",
        Shape::Plain,
        "64ths taken off when the favoured side's only attacker is one horse or one cannon and \
         the other side keeps two or more advisors and elephants",
    ),
    t(
        "endgame.scale_down.one_rook",
        Shape::Plain,
        "64ths taken off when the favoured side's only attacker is one rook and the other side \
         keeps both advisors and both elephants",
    ),
    t(
        "endgame.scale_down.one_each",
        Shape::Plain,
        "64ths taken off when each side has one rook, or each one horse or cannon, left and the \
         favoured side at most one pawn more than the other",
    ),
];

/// The Jieqi schema, in file order; flat names are these prefixed `jieqi.`.
pub const JIEQI_TERMS: [TermDef; 10] = [
    t("material.advisor", Shape::Tapered, "revealed advisor value"),
    t(
        "material.elephant",
        Shape::Tapered,
        "revealed elephant value",
    ),
    t("material.horse", Shape::Tapered, "revealed horse value"),
    t("material.rook", Shape::Tapered, "revealed rook value"),
    t("material.cannon", Shape::Tapered, "revealed cannon value"),
    t("material.pawn", Shape::Tapered, "revealed pawn value"),
    t("pst.advisor", Shape::Board, "revealed advisor position"),
    t("pst.elephant", Shape::Board, "revealed elephant position"),
    t("pst.pawn", Shape::Board, "revealed pawn position"),
    t(
        "dark.pst",
        Shape::Dark,
        "dark piece on its starting square (added to its pool's average value)",
    ),
];

/// The index of the term called `name` in `terms` (a compile error when there is none).
const fn term_id(terms: &[TermDef], name: &str) -> usize {
    let mut i = 0;
    while i < terms.len() {
        if str_eq(terms[i].name, name) {
            return i;
        }
        i += 1;
    }
    panic!("no term of that name")
}

const fn str_eq(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    if a.len() != b.len() {
        return false;
    }
    let mut i = 0;
    while i < a.len() {
        if a[i] != b[i] {
            return false;
        }
        i += 1;
    }
    true
}

/// Term ids: indices into [`TERMS`], looked up by name. Families of consecutive terms are
/// indexed by piece kind (checked below).
pub mod id {
    use super::{TERMS, term_id};

    pub const TEMPO: usize = term_id(&TERMS, "tempo");
    /// Six terms, advisor..pawn (`kind.index() - 1`).
    pub const MATERIAL: usize = term_id(&TERMS, "material.advisor");
    /// Seven terms, king..pawn (`kind.index()`).
    pub const PST: usize = term_id(&TERMS, "pst.king");
    pub const MOB_ROOK: usize = term_id(&TERMS, "mobility.rook");
    pub const MOB_HORSE: usize = term_id(&TERMS, "mobility.horse");
    pub const MOB_CANNON: usize = term_id(&TERMS, "mobility.cannon");
    pub const KING_ATTACKERS: usize = term_id(&TERMS, "king.attackers");
    pub const KING_ROOK: usize = term_id(&TERMS, "king.rook_attack");
    pub const KING_HORSE: usize = term_id(&TERMS, "king.horse_attack");
    pub const KING_CANNON: usize = term_id(&TERMS, "king.cannon_attack");
    pub const KING_PAWN: usize = term_id(&TERMS, "king.pawn_attack");
    pub const MISSING_ADVISOR: usize = term_id(&TERMS, "king.missing_advisor_vs_horse");
    pub const MISSING_ELEPHANT: usize = term_id(&TERMS, "king.missing_elephant_vs_cannon");
    pub const DANGER_BASE: usize = term_id(&TERMS, "king.danger.base");
    pub const DANGER_ROOK: usize = term_id(&TERMS, "king.danger.rook");
    pub const DANGER_HORSE: usize = term_id(&TERMS, "king.danger.horse");
    pub const DANGER_CANNON: usize = term_id(&TERMS, "king.danger.cannon");
    pub const DANGER_PAWN: usize = term_id(&TERMS, "king.danger.pawn");
    pub const CANNON_KING_LINE: usize = term_id(&TERMS, "cannon.king_line");
    pub const ROOK_OPEN: usize = term_id(&TERMS, "rook.open_file");
    pub const ROOK_SEMI_OPEN: usize = term_id(&TERMS, "rook.semi_open_file");
    pub const PAWN_CONNECTED: usize = term_id(&TERMS, "pawn.connected");
    /// Six terms, advisor..pawn (`kind.index() - 1`).
    pub const HANGING: usize = term_id(&TERMS, "threat.hanging.advisor");
    pub const THREAT_BY_PAWN: usize = term_id(&TERMS, "threat.by_pawn");
    pub const THREAT_ROOK_BY_MINOR: usize = term_id(&TERMS, "threat.rook_by_minor");
    pub const THREAT_BY_ROOK: usize = term_id(&TERMS, "threat.by_rook");
    pub const THREAT_BY_MINOR: usize = term_id(&TERMS, "threat.by_minor");
    pub const TRAPPED_HORSE: usize = term_id(&TERMS, "trapped.horse");
    pub const ROOKS_CONNECTED: usize = term_id(&TERMS, "coord.rooks_connected");
    pub const HORSE_CANNON: usize = term_id(&TERMS, "coord.horse_cannon");
    pub const DEFENDED: usize = term_id(&TERMS, "coord.defended");
    pub const SCALE_NO_ATTACKERS: usize = term_id(&TERMS, "endgame.scale_down.no_attackers");
    pub const SCALE_ONE_PAWN: usize = term_id(&TERMS, "endgame.scale_down.one_pawn");
    pub const SCALE_PAWNS: usize = term_id(&TERMS, "endgame.scale_down.pawns");
    pub const SCALE_ONE_MINOR: usize = term_id(&TERMS, "endgame.scale_down.one_minor");
    pub const SCALE_ONE_ROOK: usize = term_id(&TERMS, "endgame.scale_down.one_rook");
    pub const SCALE_ONE_EACH: usize = term_id(&TERMS, "endgame.scale_down.one_each");
}

/// Jieqi term ids: indices into [`JIEQI_TERMS`], looked up by name.
pub mod jid {
    use super::{JIEQI_TERMS, term_id};

    /// Six terms, advisor..pawn (`kind.index() - 1`).
    pub const MATERIAL: usize = term_id(&JIEQI_TERMS, "material.advisor");
    pub const PST_ADVISOR: usize = term_id(&JIEQI_TERMS, "pst.advisor");
    pub const PST_ELEPHANT: usize = term_id(&JIEQI_TERMS, "pst.elephant");
    pub const PST_PAWN: usize = term_id(&JIEQI_TERMS, "pst.pawn");
    pub const DARK: usize = term_id(&JIEQI_TERMS, "dark.pst");
}

// The families indexed by piece kind are consecutive and in kind order.
const _: () = {
    let kinds = ["advisor", "elephant", "horse", "rook", "cannon", "pawn"];
    let material = [
        "material.advisor",
        "material.elephant",
        "material.horse",
        "material.rook",
        "material.cannon",
        "material.pawn",
    ];
    let hanging = [
        "threat.hanging.advisor",
        "threat.hanging.elephant",
        "threat.hanging.horse",
        "threat.hanging.rook",
        "threat.hanging.cannon",
        "threat.hanging.pawn",
    ];
    let pst = [
        "pst.king",
        "pst.advisor",
        "pst.elephant",
        "pst.horse",
        "pst.rook",
        "pst.cannon",
        "pst.pawn",
    ];
    let mut k = 0;
    while k < kinds.len() {
        assert!(term_id(&TERMS, material[k]) == id::MATERIAL + k);
        assert!(term_id(&JIEQI_TERMS, material[k]) == jid::MATERIAL + k);
        assert!(term_id(&TERMS, hanging[k]) == id::HANGING + k);
        k += 1;
    }
    let mut k = 0;
    while k < pst.len() {
        assert!(term_id(&TERMS, pst[k]) == id::PST + k);
        k += 1;
    }
};

const NT: usize = TERMS.len();
const NJ: usize = JIEQI_TERMS.len();

/// Offsets of a schema's terms within its part of the flat view.
const fn offsets<const N: usize>(terms: &[TermDef; N]) -> [usize; N] {
    let mut o = [0; N];
    let mut acc = 0;
    let mut i = 0;
    while i < N {
        o[i] = acc;
        acc += terms[i].shape.len();
        i += 1;
    }
    o
}

/// Number of flat values of a schema.
const fn flat_len(terms: &[TermDef]) -> usize {
    let mut acc = 0;
    let mut i = 0;
    while i < terms.len() {
        acc += terms[i].shape.len();
        i += 1;
    }
    acc
}

/// Flat offset of each Xiangqi term.
pub const OFFSET: [usize; NT] = offsets(&TERMS);

/// Number of Xiangqi flat values (the Jieqi part starts here).
pub const NFLAT: usize = flat_len(&TERMS);

/// Offset of each Jieqi term within the Jieqi part (add [`NFLAT`] for the whole flat view).
pub const JOFFSET: [usize; NJ] = offsets(&JIEQI_TERMS);

/// Number of Jieqi flat values.
pub const JNFLAT: usize = flat_len(&JIEQI_TERMS);

/// Length of the whole flat view (`to_vec`): Xiangqi values, then Jieqi values.
pub const NALL: usize = NFLAT + JNFLAT;

/// One schema's part of the whole flat view: its terms, their offsets within the part, where
/// the part starts and the prefix of its flat names.
struct Schema {
    terms: &'static [TermDef],
    offsets: &'static [usize],
    base: usize,
    prefix: &'static str,
}

/// The parts of the whole flat view, in order: Xiangqi, then Jieqi.
const SCHEMAS: [Schema; 2] = [
    Schema {
        terms: &TERMS,
        offsets: &OFFSET,
        base: 0,
        prefix: "",
    },
    Schema {
        terms: &JIEQI_TERMS,
        offsets: &JOFFSET,
        base: NFLAT,
        prefix: "jieqi.",
    },
];

/// Flat index (whole view) of a Jieqi term's first value.
#[inline(always)]
pub const fn jflat(term: usize) -> usize {
    NFLAT + JOFFSET[term]
}

/// Flat index of the middlegame value of `kind`'s Xiangqi table entry `slot`.
#[inline(always)]
pub fn pst_flat(kind: PieceType, slot: u8) -> usize {
    OFFSET[id::PST + kind.index()] + 2 * slot as usize
}

/// Flat index (whole view) of the middlegame table entry of a revealed `kind` on red-relative
/// square `rs` in the Jieqi evaluation, if it has one: the Jieqi whole-board tables for
/// advisor, elephant and pawn, the shared Xiangqi tables for the others.
#[inline(always)]
pub fn jieqi_table_flat(kind: PieceType, rs: usize) -> Option<usize> {
    let board_slot = PST_SLOT[PieceType::Rook.index()][rs] as usize;
    match kind {
        PieceType::Advisor => Some(jflat(jid::PST_ADVISOR) + 2 * board_slot),
        PieceType::Elephant => Some(jflat(jid::PST_ELEPHANT) + 2 * board_slot),
        PieceType::Pawn => Some(jflat(jid::PST_PAWN) + 2 * board_slot),
        _ => {
            let slot = PST_SLOT[kind.index()][rs];
            (slot != NO_SLOT).then(|| pst_flat(kind, slot))
        }
    }
}

/// Which phase a flat value belongs to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Part {
    Plain,
    Mg,
    Eg,
}

/// `PART[i]`: whether flat value `i` of the whole view is plain, a middlegame or an endgame
/// value.
const PART: [Part; NALL] = {
    let mut p = [Part::Plain; NALL];
    let mut s = 0;
    while s < SCHEMAS.len() {
        let schema = &SCHEMAS[s];
        let mut i = 0;
        while i < schema.terms.len() {
            let shape = schema.terms[i].shape;
            let start = schema.base + schema.offsets[i];
            if !matches!(shape, Shape::Plain) {
                let mut j = 0;
                while j < shape.len() {
                    p[start + j] = if j % 2 == 0 { Part::Mg } else { Part::Eg };
                    j += 1;
                }
            }
            i += 1;
        }
        s += 1;
    }
    p
};

/// Whether flat value `i` of the whole flat view is plain, middlegame or endgame.
#[inline]
pub fn part(i: usize) -> Part {
    PART[i]
}

/// A schema as the params file codec sees it.
pub fn file_terms(terms: &[TermDef]) -> Vec<Term> {
    terms
        .iter()
        .map(|t| Term {
            name: t.name,
            form: t.shape.form(),
        })
        .collect()
}

/// Every term of the whole flat view: its flat name prefix, first flat index and length.
pub fn term_spans() -> impl Iterator<Item = (String, usize, usize)> {
    SCHEMAS.iter().flat_map(|s| {
        s.terms
            .iter()
            .zip(s.offsets)
            .map(move |(t, &o)| (format!("{}{}", s.prefix, t.name), s.base + o, t.shape.len()))
    })
}

/// The flat names of the whole view: the Xiangqi terms, then the Jieqi terms prefixed
/// `jieqi.`.
pub fn flat_names() -> &'static [String] {
    static NAMES: OnceLock<Vec<String>> = OnceLock::new();
    NAMES.get_or_init(|| {
        SCHEMAS
            .iter()
            .flat_map(|s| {
                tunable::flat_names(&file_terms(s.terms))
                    .into_iter()
                    .map(move |n| format!("{}{n}", s.prefix))
            })
            .collect()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_name_their_terms() {
        let xiangqi = [
            (id::TEMPO, "tempo"),
            (id::MATERIAL, "material.advisor"),
            (id::PST, "pst.king"),
            (id::MOB_ROOK, "mobility.rook"),
            (id::MOB_HORSE, "mobility.horse"),
            (id::MOB_CANNON, "mobility.cannon"),
            (id::KING_ATTACKERS, "king.attackers"),
            (id::KING_ROOK, "king.rook_attack"),
            (id::KING_HORSE, "king.horse_attack"),
            (id::KING_CANNON, "king.cannon_attack"),
            (id::KING_PAWN, "king.pawn_attack"),
            (id::MISSING_ADVISOR, "king.missing_advisor_vs_horse"),
            (id::MISSING_ELEPHANT, "king.missing_elephant_vs_cannon"),
            (id::CANNON_KING_LINE, "cannon.king_line"),
            (id::ROOK_OPEN, "rook.open_file"),
            (id::ROOK_SEMI_OPEN, "rook.semi_open_file"),
            (id::PAWN_CONNECTED, "pawn.connected"),
            (id::HANGING, "threat.hanging.advisor"),
            (id::THREAT_BY_PAWN, "threat.by_pawn"),
            (id::THREAT_ROOK_BY_MINOR, "threat.rook_by_minor"),
            (id::THREAT_BY_ROOK, "threat.by_rook"),
            (id::THREAT_BY_MINOR, "threat.by_minor"),
            (id::TRAPPED_HORSE, "trapped.horse"),
            (id::ROOKS_CONNECTED, "coord.rooks_connected"),
            (id::HORSE_CANNON, "coord.horse_cannon"),
            (id::DEFENDED, "coord.defended"),
        ];
        let jieqi = [
            (jid::PST_ADVISOR, "pst.advisor"),
            (jid::PST_ELEPHANT, "pst.elephant"),
            (jid::PST_PAWN, "pst.pawn"),
            (jid::DARK, "dark.pst"),
        ];
        for (schema, ids) in [(&SCHEMAS[0], &xiangqi[..]), (&SCHEMAS[1], &jieqi[..])] {
            for &(i, name) in ids {
                assert_eq!(schema.terms[i].name, name);
            }
        }
        for kind in PieceType::ALL {
            let k = kind.index();
            assert_eq!(TERMS[id::PST + k].shape, Shape::Pst(kind));
            if kind != PieceType::King {
                let name = TERMS[id::MATERIAL + k - 1].name;
                assert!(name.starts_with("material."), "{name}");
                assert_eq!(
                    TERMS[id::HANGING + k - 1].name,
                    name.replace("material.", "threat.hanging.")
                );
                assert_eq!(JIEQI_TERMS[jid::MATERIAL + k - 1].name, name);
            }
        }
    }

    #[test]
    fn names_cover_the_flat_view() {
        assert_eq!(flat_names().len(), NALL);
        let spans: Vec<_> = term_spans().collect();
        assert_eq!(spans.len(), NT + NJ);
        let mut next = 0;
        for (name, start, len) in spans {
            assert_eq!(start, next, "{name}");
            assert!(flat_names()[start].starts_with(&name), "{name}");
            next += len;
        }
        assert_eq!(next, NALL);
    }
}
