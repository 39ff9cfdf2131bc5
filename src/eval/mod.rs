//! Evaluation. INTERFACE STUB: material only, to be replaced by the data-driven evaluation
//! (params/xiangqi.json, tapered tables, trace). The public signatures below are what the search,
//! the match runner and the tuners call; keep them.

use crate::core::{Color, PieceType, Position};
use std::path::Path;
use thiserror::Error;

#[derive(Debug, Error)]
pub enum ParamsError {
    #[error("cannot read {path}: {source}")]
    Io {
        path: String,
        source: std::io::Error,
    },
    #[error("{0}")]
    Invalid(String),
}

/// Every number of the evaluation.
#[derive(Clone, Debug, PartialEq)]
pub struct EvalParams {
    pub piece_values: [i32; 7],
}

impl Default for EvalParams {
    fn default() -> Self {
        EvalParams {
            piece_values: [0, 120, 120, 270, 600, 285, 30],
        }
    }
}

impl EvalParams {
    /// Reads a params file; errors name the offending key.
    pub fn load(path: &Path) -> Result<EvalParams, ParamsError> {
        let _ = std::fs::read_to_string(path).map_err(|source| ParamsError::Io {
            path: path.display().to_string(),
            source,
        })?;
        Ok(EvalParams::default())
    }

    /// A stable 64-bit hash of the values (recorded in PGN headers).
    pub fn hash(&self) -> u64 {
        let mut h = 0xcbf2_9ce4_8422_2325u64;
        for v in self.piece_values {
            h = (h ^ v as u64).wrapping_mul(0x0100_0000_01b3);
        }
        h
    }
}

/// One tunable number in the flat view: `name` is a dotted path (`material.rook.mg`,
/// `pst.rook.mg.12`), bounds and step come from the params file.
#[derive(Clone, Debug, PartialEq)]
pub struct ParamSpec {
    pub name: String,
    pub value: i32,
    pub min: i32,
    pub max: i32,
    pub step: i32,
}

impl EvalParams {
    /// The flat view, in `to_vec` order.
    pub fn specs(&self) -> Vec<ParamSpec> {
        PieceType::ALL
            .iter()
            .map(|k| ParamSpec {
                name: format!("material.{}", k.name()),
                value: self.piece_values[k.index()],
                min: 0,
                max: 2000,
                step: 10,
            })
            .collect()
    }

    /// The genome / gradient vector.
    pub fn to_vec(&self) -> Vec<i32> {
        self.piece_values.to_vec()
    }

    /// The inverse of `to_vec`; values are clamped to their bounds.
    pub fn from_vec(&self, v: &[i32]) -> EvalParams {
        let mut p = self.clone();
        for (i, s) in self.specs().iter().enumerate() {
            p.piece_values[i] = v[i].clamp(s.min, s.max);
        }
        p
    }

    /// Piece values kept, every other term zero (the baseline of the engine's measurements).
    pub fn material_only(&self) -> EvalParams {
        self.clone()
    }

    /// Piece values kept, position tables and mobility zero (tuning start point).
    /// STUB ADDITION by the tune helper: the real one comes with the evaluation.
    pub fn flattened(&self) -> EvalParams {
        self.clone()
    }

    /// The params file text (same format `load` reads).
    pub fn to_json_string(&self) -> String {
        format!("{{\"piece_values\": {:?}}}", self.piece_values)
    }
}

/// The evaluation as a linear form in the parameters, from red's point of view:
/// `evaluate_red(pos) == round(constant + sum(coeff * params[index]))`. The Texel tuner
/// reads it instead of re-running the evaluation.
#[derive(Clone, Debug, Default)]
pub struct Trace {
    pub coeffs: Vec<(u32, f32)>,
    pub constant: f32,
}

/// The trace of `pos` (see [`Trace`]).
pub fn trace(pos: &Position, params: &EvalParams) -> Trace {
    let _ = params;
    let mut t = Trace::default();
    for kind in PieceType::ALL {
        let n = pos.pieces_of(Color::Red, kind).count_ones() as i32
            - pos.pieces_of(Color::Black, kind).count_ones() as i32;
        if n != 0 {
            t.coeffs.push((kind.index() as u32, n as f32));
        }
    }
    t
}

/// Static evaluation in centipawns from the side to move's point of view.
pub fn evaluate(pos: &Position, params: &EvalParams) -> i32 {
    let mut score = 0;
    for kind in PieceType::ALL {
        let v = params.piece_values[kind.index()];
        score += v
            * (pos.pieces_of(Color::Red, kind).count_ones() as i32
                - pos.pieces_of(Color::Black, kind).count_ones() as i32);
    }
    score * pos.side_to_move().sign()
}
