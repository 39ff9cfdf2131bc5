//! Search parameters (reductions, margins, depth limits of the pruning rules) as data.
//!
//! Each constant is declared once below with its default, bounds and step (viridithas declares
//! its search parameters the same way for SPSA); the declaration generates the plain `Copy`
//! struct the search reads at every node and the flat view the tuners vary. `params/search.json`
//! is the same declaration in the params file format (`{"name": {"v": 3, "min": 1, "max": 6,
//! "step": 1}}`, read and written by [`crate::tunable`]); a test keeps the two equal.
//!
//! Naming (after Carp's `search_params.rs`): `*_max_depth` / `*_min_depth` bound where a rule
//! applies, `*_margin` / `*_base` are centipawns, `*_divisor` scale a formula, `lmr_*` are in
//! hundredths of a ply. `tm_*` are the time manager's (`search/time.rs`), mostly percentages,
//! read only by searches with a clock: tune them with timed games (`--only 'tm_*'`), not
//! node-limited ones. `tm_horizon` 0 keeps the budget spread over the moves to go; above 0 it is
//! Stockfish's budget with that many moves as horizon and `tm_opt_base`, `tm_opt_ply` (in
//! 1/10000 of the time left) as its share.
//! `probcut_min_depth` 0 turns ProbCut off (the default until an SPRT passes), `qs_checks` 0
//! the quiet checks at the first ply of quiescence, `qs_corrected` 0 the correction history in
//! quiescence's stand-pat, `corr_non_pawn` 0 the correction tables keyed by each side's
//! non-pawn pieces, and
//! `see_prune_max_depth` 0 the pruning by static exchange (Xiangqi only, as the exchange is), and
//! `see_bad_captures_last` 0 the ordering of losing captures after the quiet moves; `tt_eval` 0
//! keeps the table's score out of the node's pruning rules, and `cont_prune_max_depth` 0 turns off
//! the pruning of quiet moves by continuation history (both off by default: their measurements
//! are in `docs/measurements.md`). `order_check_bonus` (0: none) orders a quiet move that gives
//! a direct check this much higher (Pikafish-HCE's move picker adds 16384 on its scale).
//! `history_from_to` 0 indexes the quiet history by (piece, destination); 1 by (side, origin,
//! destination), as Stockfish's and Pikafish-HCE's main history is.
//! `futility_history_divisor` above 0 (the default, 100) prunes a futile quiet move by the depth
//! left after the move's late-move reduction, with its quiet history divided by this added to
//! the margin (Stockfish's and Pikafish-HCE's parent-node futility); 0 by the node's depth, the
//! rule before it.
//! Three further teachers of the quiet history, as Stockfish and Pikafish-HCE have them, each
//! 0 for off (the default; their measurements are in `docs/measurements.md`):
//! `history_tt_cut` 1 teaches the table's quiet move at a table cut-off (a bonus where it cut,
//! a malus where it failed low); `history_prior` 1 gives the opponent's quiet move before a
//! node that failed low a continuation bonus, and the opponent's early move before a node
//! that cut off a continuation malus; `history_eval_diff` above 0 moves the history of the
//! opponent's quiet move by this times the centipawns it raised its side's static evaluation.
//! Two rules for the re-search of a reduced move that beat alpha, as Stockfish and Pikafish-HCE
//! have them, each 0 for off (the default): `lmr_deeper_margin` above 0 re-searches a ply deeper
//! where the reduced search beat alpha by more than this plus 4 a ply of reduction, and a ply
//! shallower where it beat the node's best score by less than a centipawn a ply of depth (no
//! re-search at all where that leaves no more depth than the reduced search had);
//! `lmr_research_history` 1 gives the move a continuation bonus where the re-search still beat
//! alpha, a malus where it did not.
//! `iir_pv_reduction` is the internal iterative reduction of a principal node without a table
//! move (1, the default; Stockfish and Pikafish-HCE take 3; other nodes lose 1);
//! `history_beta_margin` above 0 gives a cut-off that beat beta by more than this (quiet or
//! capture, and the malus of the moves tried before it) the history bonus of a ply deeper (0,
//! the default: never).
//! `aspiration_high_reduce` 1 searches the root a ply shallower for each fail high of the
//! aspiration window in a row (Stockfish's and Pikafish-HCE's `failedHighCnt`; 0, the default:
//! never); `pv_tt_depth_divisor` above 0 takes a principal node whose table entry is shallower
//! than its depth down by the gap over this divisor, at most 5 plies (Pikafish-HCE: 2; 0, the
//! default: never).
//! A node is on a principal line (`ttPv`) where it is a principal node or its table entry says
//! it was (Stockfish's flag, kept in the table). `rfp_tt_pv` 1 keeps reverse futility off such
//! a node; the late-move reduction of a quiet move there is `lmr_tt_pv_base + lmr_tt_pv_scale /
//! (5 + depth)` plies smaller (unless the node is a principal one whose entry failed low as
//! deep), at a principal node `lmr_pv_base + lmr_pv_scale / (2 + depth)` smaller, and at an
//! expected cut node `lmr_cut_base + lmr_cut_scale / (7 + depth)` larger (Pikafish-HCE: 1 and
//! 22, 1 and 17, 2 and 21; every one 0, the default: no change).

use super::ChanceMode;
use crate::eval::EvalParams;
use crate::tunable::{self, Form, ParamList, ParamSpec, ParamsError, Term, Tunable};
use std::path::Path;

/// The engine's experiment switches: not tuned numbers, so not in any params file or genome.
/// The match flags `--b-no-reveal-search` and `--b-xiangqi-eval-in-jieqi` set them for the
/// baselines the Jieqi measurements compare against.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct EngineOptions {
    /// How Jieqi chance nodes are valued.
    pub chance_mode: ChanceMode,
    /// Whether Jieqi positions are scored with the Jieqi terms (`false`: the Xiangqi terms
    /// over the visible kinds, dark pieces as the kind of their square).
    pub jieqi_eval: bool,
}

impl Default for EngineOptions {
    fn default() -> Self {
        EngineOptions {
            chance_mode: ChanceMode::Search,
            jieqi_eval: true,
        }
    }
}

impl EngineOptions {
    /// The hash that identifies the evaluation `eval` plays with under these options (PGN
    /// headers): the parameters' hash, marked when the Jieqi terms are off so that the
    /// baseline is told apart from the engine it is measured against.
    pub fn eval_hash(&self, eval: &EvalParams) -> u64 {
        let h = eval.hash();
        if self.jieqi_eval {
            h
        } else {
            (h ^ 0xff).wrapping_mul(0x0100_0000_01b3)
        }
    }
}

macro_rules! search_params {
    ($($name:ident: $v:literal in $min:literal..=$max:literal step $step:literal,)*) => {
        /// Every tunable constant of the search. Field names are the keys of the params file.
        #[derive(Clone, Copy, Debug, PartialEq, Eq)]
        pub struct SearchParams {
            $(pub $name: i32,)*
        }

        impl SearchParams {
            /// The declaration: name, default, bounds and step of each constant, in flat order.
            pub const DECLARED: &'static [Tunable] = &[$(Tunable {
                name: stringify!($name),
                value: $v,
                min: $min,
                max: $max,
                step: $step,
            }),*];

            /// Parameter names in `to_vec` order.
            pub const NAMES: &'static [&'static str] = &[$(stringify!($name)),*];

            /// The declared defaults.
            pub const DEFAULT: SearchParams = SearchParams { $($name: $v,)* };

            /// The terms of the params file (one plain value each).
            const TERMS: &'static [Term] = &[$(Term {
                name: stringify!($name),
                form: Form::Plain,
            }),*];

            fn values(&self) -> Vec<i32> {
                vec![$(self.$name),*]
            }

            /// The fields in flat order, for writing.
            fn fields_mut(&mut self) -> Vec<&mut i32> {
                vec![$(&mut self.$name),*]
            }
        }
    };
}

search_params! {
    aspiration_delta: 30 in 5..=200 step 5,
    aspiration_min_depth: 4 in 1..=10 step 1,
    tm_soft_percent: 60 in 20..=120 step 5,
    tm_horizon: 0 in 0..=80 step 5,
    tm_opt_base: 120 in 40..=300 step 10,
    tm_opt_ply: 39 in 0..=100 step 3,
    tm_stable_base: 150 in 80..=300 step 10,
    tm_stable_step: 15 in 0..=50 step 5,
    tm_stable_min: 65 in 30..=100 step 5,
    tm_node_base: 150 in 100..=250 step 5,
    tm_node_scale: 135 in 50..=250 step 5,
    tm_eval_scale: 25 in 0..=100 step 5,
    tm_eval_min: 75 in 40..=100 step 5,
    tm_eval_max: 175 in 100..=300 step 10,
    tm_jieqi_reveal_bonus: 0 in 0..=150 step 10,
    tm_jieqi_no_reveal: 100 in 50..=120 step 5,
    tm_jieqi_blend: 0 in 0..=100 step 10,
    nmp_min_depth: 3 in 1..=8 step 1,
    nmp_base_reduction: 3 in 1..=6 step 1,
    nmp_depth_divisor: 4 in 2..=12 step 1,
    nmp_eval_divisor: 200 in 50..=1000 step 25,
    rfp_max_depth: 7 in 0..=12 step 1,
    rfp_margin: 90 in 20..=400 step 10,
    razor_max_depth: 3 in 0..=6 step 1,
    razor_margin: 250 in 50..=1000 step 25,
    futility_max_depth: 6 in 0..=12 step 1,
    futility_base: 80 in 0..=500 step 10,
    futility_margin: 100 in 20..=400 step 10,
    qs_lazy_margin: 300 in 100..=2000 step 25,
    qs_checks: 0 in 0..=1 step 1,
    qs_corrected: 0 in 0..=1 step 1,
    corr_non_pawn: 0 in 0..=1 step 1,
    lmp_max_depth: 6 in 0..=12 step 1,
    lmp_base: 4 in 1..=20 step 1,
    lmr_min_depth: 3 in 2..=8 step 1,
    lmr_min_moves: 3 in 1..=10 step 1,
    lmr_base: 75 in 0..=200 step 5,
    lmr_divisor: 230 in 100..=500 step 10,
    lmr_history_divisor: 6000 in 1000..=32000 step 500,
    iir_min_depth: 5 in 2..=12 step 1,
    probcut_min_depth: 0 in 0..=12 step 1,
    probcut_margin: 150 in 50..=400 step 10,
    probcut_improving: 50 in 0..=150 step 10,
    history_max: 16384 in 1024..=65536 step 1024,
    history_bonus_quad: 16 in 0..=64 step 2,
    history_bonus_linear: 0 in 0..=1500 step 50,
    history_bonus_offset: 0 in 0..=3000 step 50,
    history_bonus_cap: 19200 in 1000..=20000 step 250,
    chance_scale: 250 in 100..=600 step 10,
    chance_max_nested: 2 in 1..=6 step 1,
    chance_dark_reduce_min: 24 in 8..=31 step 1,
    se_min_depth: 8 in 4..=14 step 1,
    se_margin: 2 in 0..=8 step 1,
    se_double_margin: 20 in 0..=100 step 5,
    check_ext_min_depth: 0 in 0..=16 step 1,
    shuffle_divisor: 0 in 0..=400 step 10,
    see_prune_max_depth: 0 in 0..=16 step 1,
    see_capture_margin: 220 in 0..=600 step 20,
    see_quiet_margin: 20 in 0..=100 step 2,
    see_quiet_linear: 30 in 0..=200 step 5,
    see_bad_capture_percent: 60 in 0..=100 step 5,
    see_bad_captures_last: 0 in 0..=1 step 1,
    tt_eval: 0 in 0..=1 step 1,
    cont_prune_max_depth: 0 in 0..=12 step 1,
    cont_prune_margin: 400 in 0..=4000 step 100,
    order_check_bonus: 0 in 0..=32000 step 1000,
    history_from_to: 0 in 0..=1 step 1,
    futility_history_divisor: 100 in 0..=1000 step 10,
    history_tt_cut: 0 in 0..=1 step 1,
    history_prior: 0 in 0..=1 step 1,
    history_eval_diff: 0 in 0..=128 step 4,
    lmr_deeper_margin: 0 in 0..=200 step 5,
    lmr_research_history: 0 in 0..=1 step 1,
    iir_pv_reduction: 1 in 1..=4 step 1,
    history_beta_margin: 0 in 0..=400 step 10,
    aspiration_high_reduce: 0 in 0..=1 step 1,
    pv_tt_depth_divisor: 0 in 0..=8 step 1,
    rfp_tt_pv: 0 in 0..=1 step 1,
    lmr_tt_pv_base: 0 in 0..=3 step 1,
    lmr_tt_pv_scale: 0 in 0..=40 step 2,
    lmr_pv_base: 0 in 0..=3 step 1,
    lmr_pv_scale: 0 in 0..=40 step 2,
    lmr_cut_base: 0 in 0..=4 step 1,
    lmr_cut_scale: 0 in 0..=40 step 2,
}

/// The declaration in the params file format (a test keeps it equal to the declaration).
pub const DEFAULT_SEARCH_JSON: &str = include_str!("../../params/search.json");

impl Default for SearchParams {
    fn default() -> Self {
        SearchParams::DEFAULT
    }
}

impl SearchParams {
    /// Reads a params file; errors name the offending key.
    pub fn load(path: &Path) -> Result<SearchParams, ParamsError> {
        SearchParams::from_json(&tunable::read_file(path)?)
    }

    /// Parses the file text. Every key must be known, every value integral and in bounds, and
    /// the bounds and steps those of the declaration (they are not per-file). A key the file
    /// leaves out keeps its declared default, as an engine option left unset does, so a file
    /// written before a constant was added still loads.
    pub fn from_json(text: &str) -> Result<SearchParams, ParamsError> {
        let mut root = tunable::parse_json(text)?;
        // The terms left out are taken from the embedded defaults file (a test keeps it equal to
        // the declaration's own text), so nothing here writes the term format a second time.
        let defaults = tunable::parse_json(DEFAULT_SEARCH_JSON)?;
        if let (Some(obj), serde_json::Value::Object(defaults)) = (root.as_object_mut(), defaults) {
            for (key, term) in defaults {
                obj.entry(key).or_insert(term);
            }
        }
        let (values, bounds) = tunable::parse_terms(&root, Self::TERMS, None)?;
        let mut p = SearchParams::DEFAULT;
        for (((field, v), b), decl) in p
            .fields_mut()
            .into_iter()
            .zip(values)
            .zip(bounds)
            .zip(Self::DECLARED)
        {
            if b != decl.bounds() {
                return Err(ParamsError::WrongBounds {
                    key: decl.name.to_string(),
                    min: b.min,
                    max: b.max,
                    step: b.step,
                    declared: format!("[{}, {}] step {}", decl.min, decl.max, decl.step),
                });
            }
            if v < decl.min || v > decl.max {
                return Err(ParamsError::OutOfBounds {
                    key: decl.name.to_string(),
                    value: v as i64,
                    min: decl.min,
                    max: decl.max,
                });
            }
            *field = v;
        }
        Ok(p)
    }

    /// The flat view with bounds and steps, in `to_vec` order.
    pub fn specs(&self) -> Vec<ParamSpec> {
        Self::DECLARED
            .iter()
            .zip(self.values())
            .map(|(decl, v)| decl.spec(v))
            .collect()
    }

    /// The flat value vector (genome), in `NAMES` order.
    pub fn to_vec(&self) -> Vec<i32> {
        self.values()
    }

    /// The inverse of `to_vec`; values are clamped to their bounds. A short vector leaves the
    /// remaining values unchanged.
    pub fn from_vec(&self, v: &[i32]) -> SearchParams {
        let mut p = *self;
        for ((field, &x), decl) in p.fields_mut().into_iter().zip(v).zip(Self::DECLARED) {
            *field = x.clamp(decl.min, decl.max);
        }
        p
    }

    /// The params file text (the format `load` reads), one key per line.
    pub fn to_json_string(&self) -> String {
        let bounds: Vec<_> = Self::DECLARED.iter().map(Tunable::bounds).collect();
        tunable::write_terms(Self::TERMS, &self.values(), &bounds, None)
    }
}

/// The search constants travel (executor jobs) as their params file, checked on arrival.
impl serde::Serialize for SearchParams {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.to_json_string())
    }
}

impl<'de> serde::Deserialize<'de> for SearchParams {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<SearchParams, D::Error> {
        use serde::de::Error;
        let text: String = serde::Deserialize::deserialize(d)?;
        SearchParams::from_json(&text).map_err(D::Error::custom)
    }
}

impl ParamList for SearchParams {
    fn specs(&self) -> Vec<ParamSpec> {
        SearchParams::specs(self)
    }

    fn to_vec(&self) -> Vec<i32> {
        SearchParams::to_vec(self)
    }

    fn from_vec(&self, v: &[i32]) -> SearchParams {
        SearchParams::from_vec(self, v)
    }

    fn to_json_string(&self) -> String {
        SearchParams::to_json_string(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_xiangqi_eval_baseline_has_its_own_hash() {
        let eval = EvalParams::default();
        let options = EngineOptions::default();
        assert_eq!(options.eval_hash(&eval), eval.hash());
        let baseline = EngineOptions {
            jieqi_eval: false,
            ..options
        };
        assert_ne!(baseline.eval_hash(&eval), eval.hash());
    }

    #[test]
    fn the_params_file_is_the_declaration() {
        assert_eq!(SearchParams::DEFAULT.to_json_string(), DEFAULT_SEARCH_JSON);
        assert_eq!(
            SearchParams::from_json(DEFAULT_SEARCH_JSON).unwrap(),
            SearchParams::DEFAULT
        );
    }

    #[test]
    fn declared_defaults_lie_in_their_bounds() {
        for d in SearchParams::DECLARED {
            assert!(
                d.min <= d.value && d.value <= d.max && d.step > 0,
                "{}",
                d.name
            );
        }
    }

    #[test]
    fn other_bounds_are_refused() {
        let text = DEFAULT_SEARCH_JSON.replace(
            "\"rfp_margin\": {\"v\": 90, \"min\": 20",
            "\"rfp_margin\": {\"v\": 90, \"min\": 30",
        );
        let e = SearchParams::from_json(&text).unwrap_err();
        assert!(
            matches!(&e, ParamsError::WrongBounds { key, .. } if key == "rfp_margin"),
            "{e}"
        );
    }
}
