//! The evaluation parameters: the values of every term of [`layout`](super::layout), their
//! bounds, the lookup tables derived from them, and their params files.
//!
//! Every number of the evaluation lives in `params/xiangqi.json` and `params/jieqi.json`
//! (format in `params/README.md`, read and written by [`crate::tunable`]). The layout fixes
//! which terms exist and their shape; the files supply each value with its `min`, `max` and
//! `step`.

use super::layout::{
    JIEQI_TERMS, JNFLAT, JOFFSET, NALL, NFLAT, OFFSET, TERMS, TermDef, file_terms, flat_names, id,
    jflat, jid, jieqi_table_flat, pst_flat,
};
use super::score::S;
use super::tables::{DARK_SLOT, NO_SLOT, PST_SLOT};
use crate::core::{PieceType, Square};
use crate::tunable::{self, Bounds, Header, ParamList, ParamSpec, ParamsError};
use std::path::Path;
use std::sync::OnceLock;

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

/// A parameter set travels (executor jobs) as its two params files: the exact values and
/// bounds, checked again on arrival like any file, the derived tables rebuilt from them.
impl serde::Serialize for EvalParams {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        serde::Serialize::serialize(&(self.to_json_string(), self.jieqi_to_json_string()), s)
    }
}

impl<'de> serde::Deserialize<'de> for EvalParams {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<EvalParams, D::Error> {
        use serde::de::Error;
        let (xiangqi, jieqi): (String, String) = serde::Deserialize::deserialize(d)?;
        let mut e = EvalParams::from_json_str(&xiangqi).map_err(D::Error::custom)?;
        e.set_jieqi_json_str(&jieqi).map_err(D::Error::custom)?;
        Ok(e)
    }
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
}

/// The embedded default parameters (`params/xiangqi.json`).
pub const DEFAULT_JSON: &str = include_str!("../../params/xiangqi.json");

/// The embedded default Jieqi parameters (`params/jieqi.json`).
pub const JIEQI_DEFAULT_JSON: &str = include_str!("../../params/jieqi.json");

const XIANGQI_HEADER: Header = Header {
    variant: "xiangqi",
    about: "xqtune Xiangqi evaluation parameters, centipawns; format: params/README.md",
};

const JIEQI_HEADER: Header = Header {
    variant: "jieqi",
    about: "xqtune Jieqi evaluation parameters, centipawns; format: params/README.md",
};

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

/// Reads the terms of `schema` from params text whose optional `variant` key is `variant`.
fn parse_schema(
    text: &str,
    schema: &[TermDef],
    variant: &str,
) -> Result<(Vec<i32>, Vec<Bounds>), ParamsError> {
    let root = tunable::parse_json(text)?;
    tunable::parse_terms(&root, &file_terms(schema), Some(variant))
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
        self.rebuild_jieqi();
    }

    /// Recomputes the Jieqi lookup tables.
    fn rebuild_jieqi(&mut self) {
        for kind in PieceType::ALL {
            let k = kind.index();
            let material = if kind == PieceType::King {
                S::ZERO
            } else {
                self.flat_s(jflat(jid::MATERIAL + k - 1))
            };
            for sq in 0..90 {
                let table = jieqi_table_flat(kind, sq).map_or(S::ZERO, |i| self.flat_s(i));
                let v = material + table;
                self.jieqi.psq[k][sq] = v;
                self.jieqi.psq[7 + k][Square(sq as u8).flip_rank().index()] = -v;
            }
        }
        for sq in 0..90 {
            let slot = DARK_SLOT[sq];
            let v = if slot == NO_SLOT {
                S::ZERO
            } else {
                self.flat_s(jflat(jid::DARK) + 2 * slot as usize)
            };
            self.jieqi.dark[0][sq] = v;
            self.jieqi.dark[1][Square(sq as u8).flip_rank().index()] = -v;
        }
    }

    /// The tapered pair at flat index `i` of the Xiangqi part.
    #[inline(always)]
    pub(crate) fn s(&self, i: usize) -> S {
        S(self.values[i], self.values[i + 1])
    }

    /// The tapered pair at flat index `i` of the whole view (Xiangqi, then Jieqi).
    fn flat_s(&self, i: usize) -> S {
        if i < NFLAT {
            self.s(i)
        } else {
            S(
                self.jieqi.values[i - NFLAT],
                self.jieqi.values[i - NFLAT + 1],
            )
        }
    }

    /// Reads a params file; errors name the offending key.
    pub fn load(path: &Path) -> Result<EvalParams, ParamsError> {
        EvalParams::from_json_str(&tunable::read_file(path)?)
    }

    /// Parses the params file format (see `params/README.md`).
    pub fn from_json_str(text: &str) -> Result<EvalParams, ParamsError> {
        let (v, b) = parse_schema(text, &TERMS, XIANGQI_HEADER.variant)?;
        // The Jieqi part is not in a Xiangqi file: keep the embedded one (or the one already
        // loaded, see `load_jieqi`).
        let (jv, jb) = match DEFAULT_JIEQI.get() {
            Some(d) => d.clone(),
            None => {
                let d = parse_schema(JIEQI_DEFAULT_JSON, &JIEQI_TERMS, JIEQI_HEADER.variant)?;
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
        self.set_jieqi_json_str(&tunable::read_file(path)?)
    }

    /// Replaces the Jieqi part with a Jieqi params text (see [`EvalParams::load_jieqi`]).
    pub fn set_jieqi_json_str(&mut self, text: &str) -> Result<(), ParamsError> {
        let (v, b) = parse_schema(text, &JIEQI_TERMS, JIEQI_HEADER.variant)?;
        self.jieqi.values = v;
        self.jieqi.bounds = b;
        self.rebuild();
        Ok(())
    }

    /// The params file text (same format `load` reads).
    pub fn to_json_string(&self) -> String {
        tunable::write_terms(
            &file_terms(&TERMS),
            &self.values[..],
            &self.bounds[..],
            Some(XIANGQI_HEADER),
        )
    }

    /// The Jieqi part in its file format (same format `load_jieqi` reads).
    pub fn jieqi_to_json_string(&self) -> String {
        tunable::write_terms(
            &file_terms(&JIEQI_TERMS),
            &self.jieqi.values,
            &self.jieqi.bounds,
            Some(JIEQI_HEADER),
        )
    }

    /// A stable 64-bit hash of the values, Jieqi part included (FNV-1a; recorded in PGN
    /// headers).
    pub fn hash(&self) -> u64 {
        tunable::fnv1a(&self.to_vec())
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
        EvalParams::from_parts(values, self.bounds.clone(), jv, b.clone())
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
        debug_assert_eq!(jv.len(), JNFLAT);
        EvalParams::from_parts(values, self.bounds.clone(), jv, self.jieqi.bounds.clone())
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
}

impl ParamList for EvalParams {
    fn specs(&self) -> Vec<ParamSpec> {
        EvalParams::specs(self)
    }

    fn to_vec(&self) -> Vec<i32> {
        EvalParams::to_vec(self)
    }

    fn from_vec(&self, v: &[i32]) -> EvalParams {
        EvalParams::from_vec(self, v)
    }

    fn to_json_string(&self) -> String {
        EvalParams::to_json_string(self)
    }
}
