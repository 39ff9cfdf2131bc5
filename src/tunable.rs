//! Tunable numbers: one description (name, value, bounds, step) and one file format, shared by
//! the evaluation, the search constants and whatever else a tuner varies.
//!
//! A parameter set is a flat list of integers with bounds and steps ([`ParamList`]), the view
//! the tuners work in (viridithas declares its search parameters the same way and emits them
//! for SPSA with `emit_json_for_spsa`; Monty's `Param{val,min,max}` clamps on set). On disk a
//! set is a JSON object of terms, each `{"v", "min", "max", "step"}` (one bound and step per
//! term); a term may be a plain value, a tapered pair, a list of pairs or a table of pairs over
//! squares ([`Form`]), and dotted term names nest as JSON objects. This module is the only
//! reader and writer of that format ([`parse_terms`], [`write_terms`]); `params/README.md`
//! describes it for people.
//!
//! It sits beside `core` and below `eval` and `search`, so that neither imports a tuning type
//! from the other.

use crate::core::Square;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::fmt::Write as _;
use std::path::Path;
use thiserror::Error;

/// The bounds and step of one flat value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Bounds {
    pub min: i32,
    pub max: i32,
    pub step: i32,
}

/// One tunable number of a flat view: `name` is a dotted path (`material.rook.mg`,
/// `pst.rook.c3.mg`, `lmr_base`). The tuners call it a gene.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ParamSpec {
    pub name: String,
    pub value: i32,
    pub min: i32,
    pub max: i32,
    pub step: i32,
}

impl ParamSpec {
    pub fn clamp(&self, v: i32) -> i32 {
        v.clamp(self.min, self.max)
    }

    pub fn clamp_f(&self, v: f64) -> f64 {
        v.clamp(self.min as f64, self.max as f64)
    }

    /// The step, never below 1 (a zero step would freeze mutation and SPSA perturbations).
    pub fn step(&self) -> i32 {
        self.step.max(1)
    }

    /// SPSA's perturbation and learning rate at the last iteration, (c_end, r_end), from the
    /// declared step: c_end = `c_end_steps` · step and r_end = `lr` / `c_end_steps` (the flags
    /// `--c-end` and `--lr` of `tune spsa`). A unit of match result then moves a parameter by
    /// r_end · c_end = `lr` steps at the last pair, whatever its step: the schedule is the same
    /// in every parameter's own units, as fishtest's constant r_end with c_end in proportion to
    /// the range makes it. The in-process schedule and the parameter file of
    /// `xqtune uci --print-tune` both take their numbers from here, so that tuning xqtune
    /// through UCI with that file perturbs and moves each parameter exactly as in-process.
    pub fn spsa_ends(&self, c_end_steps: f64, lr: f64) -> (f64, f64) {
        let c_end = c_end_steps * self.step() as f64;
        (c_end, lr / c_end_steps)
    }
}

/// `tune spsa`'s default `--c-end` (in steps of each parameter).
pub const SPSA_C_END_STEPS: f64 = 2.0;
/// `tune spsa`'s default `--lr` (movement per unit of result at the last pair, in steps).
pub const SPSA_LR: f64 = 0.05;

/// The declaration of one tunable number: name, default, bounds and step.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Tunable {
    pub name: &'static str,
    pub value: i32,
    pub min: i32,
    pub max: i32,
    pub step: i32,
}

impl Tunable {
    pub const fn bounds(&self) -> Bounds {
        Bounds {
            min: self.min,
            max: self.max,
            step: self.step,
        }
    }

    /// This number's entry in a flat view, holding `value`.
    pub fn spec(&self, value: i32) -> ParamSpec {
        ParamSpec {
            name: self.name.to_string(),
            value,
            min: self.min,
            max: self.max,
            step: self.step,
        }
    }
}

/// A set of tunable numbers seen as one flat vector: what the tuners vary.
pub trait ParamList {
    /// Every number in flat order, with its bounds and step.
    fn specs(&self) -> Vec<ParamSpec>;

    /// The flat values (the genome / gradient vector), in `specs` order.
    fn to_vec(&self) -> Vec<i32>;

    /// The inverse of `to_vec`; values are clamped to their bounds. It takes `self` because
    /// the bounds (and what a vector does not cover) come from the receiver.
    #[allow(clippy::wrong_self_convention)]
    fn from_vec(&self, v: &[i32]) -> Self
    where
        Self: Sized;

    /// The flat names, in `specs` order.
    fn names(&self) -> Vec<String> {
        self.specs().into_iter().map(|s| s.name).collect()
    }

    /// The set in its file format (what its `load` reads).
    fn to_json_string(&self) -> String;
}

/// FNV-1a ([`crate::util::fnv1a`]) over the little-endian bytes of `values`.
pub fn fnv1a(values: &[i32]) -> u64 {
    crate::util::fnv1a(values.iter().flat_map(|v| v.to_le_bytes()))
}

/// Why a params file (or text) was refused. Every variant names the key or the place at fault.
#[derive(Debug, Error)]
pub enum ParamsError {
    /// (The I/O error is a plain field, not a `source`, so `{:#}` chains print it once.)
    #[error("cannot read {path}: {error}")]
    Io { path: String, error: std::io::Error },
    #[error("not valid JSON at line {line} column {column}: {message}")]
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
    #[error("'{key}': bounds [{min}, {max}] step {step} differ from the declared {declared}")]
    WrongBounds {
        key: String,
        min: i32,
        max: i32,
        step: i32,
        declared: String,
    },
}

/// How the values of one term are laid out (in the file and in the flat view).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Form {
    /// One value (`"v": 3`).
    Plain,
    /// A (middlegame, endgame) pair (`"v": [mg, eg]`).
    Tapered,
    /// `n` pairs indexed by a count (`"mg": [..], "eg": [..]`).
    List(usize),
    /// One pair per square, in storage order (`"squares"`, `"mg"`, `"eg"`, a rank per line).
    Table(&'static [Square]),
}

impl Form {
    /// Number of flat values.
    pub const fn len(self) -> usize {
        match self {
            Form::Plain => 1,
            Form::Tapered => 2,
            Form::List(n) => 2 * n,
            Form::Table(squares) => 2 * squares.len(),
        }
    }

    pub const fn is_empty(self) -> bool {
        self.len() == 0
    }
}

/// One term of a params file: its dotted name and the layout of its values.
#[derive(Clone, Copy, Debug)]
pub struct Term {
    pub name: &'static str,
    pub form: Form,
}

/// Reads a params file's text; the error names the file.
pub fn read_file(path: &Path) -> Result<String, ParamsError> {
    std::fs::read_to_string(path).map_err(|error| ParamsError::Io {
        path: path.display().to_string(),
        error,
    })
}

/// Parses JSON text; errors name line and column.
pub fn parse_json(text: &str) -> Result<Value, ParamsError> {
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

/// The flat names of `terms`' values, in order: `<term>` for a plain value, `<term>.mg` /
/// `<term>.eg` for a pair, `<term>.<i>.mg` for a list entry, `<term>.<square>.mg` for a table
/// entry.
pub fn flat_names(terms: &[Term]) -> Vec<String> {
    let mut out = Vec::new();
    for term in terms {
        let name = term.name;
        match term.form {
            Form::Plain => out.push(name.to_string()),
            Form::Tapered => {
                out.push(format!("{name}.mg"));
                out.push(format!("{name}.eg"));
            }
            Form::List(n) => {
                for i in 0..n {
                    out.push(format!("{name}.{i}.mg"));
                    out.push(format!("{name}.{i}.eg"));
                }
            }
            Form::Table(squares) => {
                for s in squares {
                    out.push(format!("{name}.{s}.mg"));
                    out.push(format!("{name}.{s}.eg"));
                }
            }
        }
    }
    out
}

// ---------------------------------------------------------------------------------------------
// Reading

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

/// The object at dotted `path` below `root`.
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
        expected: "an object {\"v\", \"min\", \"max\", \"step\"}".into(),
    })
}

/// Rejects keys that are neither terms, groups of terms nor comments (nor, at the top level of
/// a file with a variant, `variant`).
fn check_unknown(
    v: &Value,
    path: &str,
    terms: &[Term],
    has_variant: bool,
) -> Result<(), ParamsError> {
    let Some(obj) = v.as_object() else {
        return Ok(());
    };
    for (k, child) in obj {
        if k.starts_with('_') || (has_variant && path.is_empty() && k == "variant") {
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
            check_unknown(child, &p, terms, has_variant)?;
        } else {
            return Err(ParamsError::UnknownKey(p));
        }
    }
    Ok(())
}

/// Reads the values of `terms` from a parsed params file: the flat values and their bounds, in
/// order. With `Some(variant)` the file's optional `variant` key must equal it; with `None` the
/// file has no such key. Every term must be present, every key known, every value in bounds.
pub fn parse_terms(
    root: &Value,
    terms: &[Term],
    variant: Option<&str>,
) -> Result<(Vec<i32>, Vec<Bounds>), ParamsError> {
    if !root.is_object() {
        return Err(ParamsError::WrongType {
            key: "(top level)".into(),
            expected: "a JSON object of terms".into(),
        });
    }
    if let (Some(expected), Some(v)) = (variant, root.get("variant")) {
        let name = v.as_str().ok_or_else(|| ParamsError::WrongType {
            key: "variant".into(),
            expected: "a string".into(),
        })?;
        if name != expected {
            return Err(ParamsError::WrongVariant {
                found: name.to_string(),
                expected: expected.to_string(),
            });
        }
    }
    check_unknown(root, "", terms, variant.is_some())?;
    let names = flat_names(terms);
    let mut values = Vec::with_capacity(names.len());
    let mut bounds = Vec::with_capacity(names.len());
    for term in terms {
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
        let raw: Vec<i64> = match term.form {
            Form::Plain => {
                only_fields(obj, path, &["v", "min", "max", "step"])?;
                vec![int(field(obj, "v", path)?, &format!("{path}.v"))?]
            }
            Form::Tapered => {
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
            Form::List(_) | Form::Table(_) => {
                let n = term.form.len() / 2;
                if let Form::Table(squares) = term.form {
                    only_fields(obj, path, &["squares", "mg", "eg", "min", "max", "step"])?;
                    if let Some(sq) = obj.get("squares") {
                        check_squares(sq, squares, path)?;
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
// Writing: one term per line, tables one rank per line, so that a table reads like a board.

/// The first two keys of a file that names its variant.
#[derive(Clone, Copy, Debug)]
pub struct Header<'a> {
    pub variant: &'a str,
    /// The `_about` comment.
    pub about: &'a str,
}

/// Writes flat `values` with their `bounds` in the params file format of `terms` (the inverse
/// of [`parse_terms`]); each term's bounds are those of its first value.
pub fn write_terms(
    terms: &[Term],
    values: &[i32],
    bounds: &[Bounds],
    header: Option<Header>,
) -> String {
    let mut out = String::new();
    out.push('{');
    // Per nesting level (top level first), whether a member was written yet.
    let mut written: Vec<bool> = vec![false];
    if let Some(h) = header {
        let _ = writeln!(out, "\n  \"_about\": {},", Value::from(h.about));
        let _ = write!(out, "  \"variant\": {}", Value::from(h.variant));
        written[0] = true;
    }
    let mut o = 0;
    let mut open: Vec<&str> = Vec::new();
    for term in terms {
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
        match term.form {
            Form::Plain => {
                let _ = write!(out, "{{\"v\": {}, {bounds}}}", values[o]);
            }
            Form::Tapered => {
                let _ = write!(
                    out,
                    "{{\"v\": [{}, {}], {bounds}}}",
                    values[o],
                    values[o + 1]
                );
            }
            Form::List(n) => {
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
            Form::Table(squares) => {
                let rows = table_rows(squares);
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
        o += term.form.len();
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

#[cfg(test)]
mod tests {
    use super::*;

    const TERMS: [Term; 2] = [
        Term {
            name: "a",
            form: Form::Plain,
        },
        Term {
            name: "g.b",
            form: Form::Tapered,
        },
    ];

    #[test]
    fn write_then_parse_round_trips() {
        let values = [3, -4, 5];
        let b = Bounds {
            min: -10,
            max: 10,
            step: 1,
        };
        let bounds = [b; 3];
        for header in [
            None,
            Some(Header {
                variant: "xiangqi",
                about: "test",
            }),
        ] {
            let text = write_terms(&TERMS, &values, &bounds, header);
            let root = parse_json(&text).unwrap();
            let (v, bs) = parse_terms(&root, &TERMS, header.map(|h| h.variant)).unwrap();
            assert_eq!(v, values);
            assert_eq!(bs, bounds);
        }
        assert_eq!(flat_names(&TERMS), ["a", "g.b.mg", "g.b.eg"]);
    }

    #[test]
    fn a_file_without_variant_refuses_the_key() {
        let text = r#"{"variant": "x", "a": {"v": 1, "min": 0, "max": 2, "step": 1},
            "g": {"b": {"v": [1, 1], "min": 0, "max": 2, "step": 1}}}"#;
        let e = parse_terms(&parse_json(text).unwrap(), &TERMS, None).unwrap_err();
        assert!(
            matches!(&e, ParamsError::UnknownKey(k) if k == "variant"),
            "{e}"
        );
    }
}
