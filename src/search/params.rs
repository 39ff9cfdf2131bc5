//! Search parameters (reductions, margins, depth limits of the pruning rules) as data.
//!
//! `params/search.json` holds one entry per constant, `{"name": {"v": 3, "min": 1, "max": 6,
//! "step": 1}}`, the same value/bounds/step layout as the evaluation parameters, so the tuners
//! (SPSA, GA) can treat search constants like any other genes (viridithas exposes its search
//! constants the same way for SPSA). The defaults are embedded with `include_str!`.
//!
//! Naming (after Carp's `search_params.rs`): `*_max_depth` / `*_min_depth` bound where a rule
//! applies, `*_margin` / `*_base` are centipawns, `*_divisor` scale a formula, `lmr_*` are in
//! hundredths of a ply.

use crate::eval::ParamSpec;
use serde_json::Value;
use std::path::Path;
use thiserror::Error;

/// Why a search parameters file was refused. Every variant names the offending key or file.
#[derive(Debug, Error)]
pub enum SearchParamsError {
    /// The I/O error is part of the message (not a `source`), so it is printed once.
    #[error("cannot read {path}: {err}")]
    Io { path: String, err: std::io::Error },
    #[error("search params are not valid JSON: {0}")]
    Json(String),
    #[error(
        "search params must be a JSON object of {{\"name\": {{\"v\", \"min\", \"max\", \"step\"}}}}"
    )]
    NotObject,
    #[error("unknown search parameter '{0}'")]
    UnknownKey(String),
    #[error("missing search parameter '{0}'")]
    MissingKey(String),
    #[error("search parameter '{key}': {problem}")]
    BadEntry { key: String, problem: String },
    #[error("search parameter '{key}' = {value} is outside [{min}, {max}]")]
    OutOfBounds {
        key: String,
        value: i32,
        min: i32,
        max: i32,
    },
}

macro_rules! search_params {
    ($($name:ident),* $(,)?) => {
        /// Every tunable constant of the search. Field names are the keys of the JSON file.
        #[derive(Clone, Debug, PartialEq)]
        pub struct SearchParams {
            $(pub $name: i32,)*
            /// Bounds and steps, in field order (read from the file next to the values).
            bounds: Vec<(i32, i32, i32)>,
            /// How Jieqi chance nodes are valued. Not a tuned number (not in the file or the
            /// genome): the no-reveal-search baseline of the measurements sets it.
            pub chance_mode: super::ChanceMode,
        }

        impl SearchParams {
            /// Parameter names in `to_vec` order.
            pub const NAMES: &'static [&'static str] = &[$(stringify!($name)),*];

            /// The flat value vector (genome), in `NAMES` order.
            pub fn to_vec(&self) -> Vec<i32> {
                vec![$(self.$name),*]
            }

            fn blank() -> SearchParams {
                SearchParams {
                    $($name: 0,)*
                    bounds: Vec::new(),
                    chance_mode: super::ChanceMode::Search,
                }
            }

            fn set_by_index(&mut self, i: usize, v: i32) {
                let mut k = 0usize;
                $(
                    if k == i {
                        self.$name = v;
                        return;
                    }
                    k += 1;
                )*
                let _ = k;
            }
        }
    };
}

search_params!(
    aspiration_delta,
    aspiration_min_depth,
    nmp_min_depth,
    nmp_base_reduction,
    nmp_depth_divisor,
    nmp_eval_divisor,
    rfp_max_depth,
    rfp_margin,
    razor_max_depth,
    razor_margin,
    futility_max_depth,
    futility_base,
    futility_margin,
    qs_lazy_margin,
    lmp_max_depth,
    lmp_base,
    lmr_min_depth,
    lmr_min_moves,
    lmr_base,
    lmr_divisor,
    lmr_history_divisor,
    iir_min_depth,
    history_max,
    chance_scale,
    chance_max_nested,
    chance_dark_reduce_min,
);

/// The embedded default file.
pub const DEFAULT_SEARCH_JSON: &str = include_str!("../../params/search.json");

impl Default for SearchParams {
    fn default() -> Self {
        SearchParams::from_json(DEFAULT_SEARCH_JSON).expect("embedded params/search.json is valid")
    }
}

impl SearchParams {
    /// Reads a params file; errors name the offending key.
    pub fn load(path: &Path) -> Result<SearchParams, SearchParamsError> {
        let text = std::fs::read_to_string(path).map_err(|err| SearchParamsError::Io {
            path: path.display().to_string(),
            err,
        })?;
        SearchParams::from_json(&text)
    }

    /// Parses the file text. Every key must be known, present once, integral and in bounds.
    pub fn from_json(text: &str) -> Result<SearchParams, SearchParamsError> {
        let root: Value =
            serde_json::from_str(text).map_err(|e| SearchParamsError::Json(e.to_string()))?;
        let obj = root.as_object().ok_or(SearchParamsError::NotObject)?;
        for key in obj.keys() {
            if !Self::NAMES.contains(&key.as_str()) {
                return Err(SearchParamsError::UnknownKey(key.clone()));
            }
        }
        let mut p = SearchParams::blank();
        for (i, &name) in Self::NAMES.iter().enumerate() {
            let entry = obj
                .get(name)
                .ok_or_else(|| SearchParamsError::MissingKey(name.to_string()))?;
            let field = |f: &str| -> Result<i32, SearchParamsError> {
                let bad = |problem: String| SearchParamsError::BadEntry {
                    key: name.to_string(),
                    problem,
                };
                let v = entry
                    .get(f)
                    .ok_or_else(|| bad(format!("missing field '{f}'")))?;
                let n = v
                    .as_i64()
                    .ok_or_else(|| bad(format!("field '{f}' must be an integer, found {v}")))?;
                i32::try_from(n).map_err(|_| bad(format!("field '{f}' = {n} is out of range")))
            };
            if let Some(o) = entry.as_object() {
                if let Some(k) = o
                    .keys()
                    .find(|k| !["v", "min", "max", "step"].contains(&k.as_str()))
                {
                    return Err(SearchParamsError::BadEntry {
                        key: name.to_string(),
                        problem: format!("unknown field '{k}'"),
                    });
                }
            } else {
                return Err(SearchParamsError::BadEntry {
                    key: name.to_string(),
                    problem: "must be an object {\"v\", \"min\", \"max\", \"step\"}".into(),
                });
            }
            let (v, min, max, step) = (field("v")?, field("min")?, field("max")?, field("step")?);
            if min > max || step <= 0 {
                return Err(SearchParamsError::BadEntry {
                    key: name.to_string(),
                    problem: format!(
                        "needs min <= max and step > 0 (min {min}, max {max}, step {step})"
                    ),
                });
            }
            if v < min || v > max {
                return Err(SearchParamsError::OutOfBounds {
                    key: name.to_string(),
                    value: v,
                    min,
                    max,
                });
            }
            p.set_by_index(i, v);
            p.bounds.push((min, max, step));
        }
        Ok(p)
    }

    /// The flat view with bounds and steps, in `to_vec` order.
    pub fn specs(&self) -> Vec<ParamSpec> {
        Self::NAMES
            .iter()
            .zip(self.to_vec())
            .zip(&self.bounds)
            .map(|((name, value), &(min, max, step))| ParamSpec {
                name: (*name).to_string(),
                value,
                min,
                max,
                step,
            })
            .collect()
    }

    /// The inverse of `to_vec`; values are clamped to their bounds. A short vector leaves the
    /// remaining values unchanged.
    pub fn from_vec(&self, v: &[i32]) -> SearchParams {
        let mut p = self.clone();
        for (i, (&x, &(min, max, _))) in v.iter().zip(&self.bounds).enumerate() {
            p.set_by_index(i, x.clamp(min, max));
        }
        p
    }

    /// The params file text (the format `load` reads), one key per line.
    pub fn to_json_string(&self) -> String {
        let mut s = String::from("{\n");
        let specs = self.specs();
        for (i, sp) in specs.iter().enumerate() {
            let comma = if i + 1 < specs.len() { "," } else { "" };
            s.push_str(&format!(
                "  \"{}\": {{\"v\": {}, \"min\": {}, \"max\": {}, \"step\": {}}}{}\n",
                sp.name, sp.value, sp.min, sp.max, sp.step, comma
            ));
        }
        s.push_str("}\n");
        s
    }

    /// A stable 64-bit hash of the values (FNV-1a), for run records.
    pub fn hash(&self) -> u64 {
        let mut h = 0xcbf2_9ce4_8422_2325u64;
        for v in self.to_vec() {
            for b in v.to_le_bytes() {
                h = (h ^ b as u64).wrapping_mul(0x0100_0000_01b3);
            }
        }
        h
    }
}
