//! Helpers shared by the tests of the Xiangqi evaluation (`tests.rs`) and of the Jieqi
//! evaluation (`jieqi_tests.rs`).

use super::{EvalParams, Trace, evaluate, evaluate_red, trace};
use crate::core::Position;
use crate::tunable::ParamsError;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// Asserts that the error `$e` matches the pattern (with its optional `if` guard), showing the
/// error when it does not; yields the error.
macro_rules! assert_error {
    ($e:expr, $($pattern:tt)+) => {{
        let e = $e;
        assert!(matches!(&e, $($pattern)+), "{e:?}");
        e
    }};
}
pub(super) use assert_error;

/// The defaults, then `n` random parameter sets inside the bounds drawn from `seed`.
pub fn param_sets(seed: u64, n: usize) -> Vec<EvalParams> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let default = EvalParams::default();
    let mut sets = vec![default.clone()];
    for _ in 0..n {
        let v: Vec<i32> = default
            .specs()
            .iter()
            .map(|s| rng.gen_range(s.min..=s.max))
            .collect();
        sets.push(default.from_vec(&v));
    }
    sets
}

/// One random parameter set inside the bounds drawn from `seed` (the last of
/// [`param_sets`]`(seed, 1)`).
pub fn random_params(seed: u64) -> EvalParams {
    param_sets(seed, 1).pop().expect("one set")
}

/// The trace of `pos` under `params` (whose flat view is `values`), checked against the
/// evaluation: its dot product rounds to red's score, and the side to move's score is red's
/// signed. Returns the trace and red's score.
pub fn checked_trace(pos: &Position, params: &EvalParams, values: &[i32]) -> (Trace, i32) {
    let tr = trace(pos, params);
    let red = evaluate_red(pos, params);
    let dot = tr.dot(values);
    assert_eq!(dot.round() as i32, red, "{}: dot {dot}", pos.to_fen());
    assert_eq!(
        evaluate(pos, params),
        red * pos.side_to_move().sign(),
        "side to move's view of {}",
        pos.to_fen()
    );
    (tr, red)
}

/// The index of the flat value called `name` in `params`' flat view.
pub fn flat_index(params: &EvalParams, name: &str) -> usize {
    params
        .specs()
        .iter()
        .position(|s| s.name == name)
        .unwrap_or_else(|| panic!("{name} is a flat name"))
}

/// `s` with upper and lower case swapped (the colour mirror of a FEN field).
pub fn swap_case(s: &str) -> String {
    s.chars()
        .map(|c| {
            if c.is_ascii_uppercase() {
                c.to_ascii_lowercase()
            } else {
                c.to_ascii_uppercase()
            }
        })
        .collect()
}

/// `text` with `from` replaced by `to`; `from` must occur exactly once.
pub fn edited_once(text: &str, from: &str, to: &str) -> String {
    assert_eq!(text.matches(from).count(), 1, "'{from}' not unique");
    text.replacen(from, to, 1)
}

/// The error of a load that must fail (`what`: the kind of file, for the message).
pub fn rejected<T>(result: Result<T, ParamsError>, what: &str) -> ParamsError {
    match result {
        Ok(_) => panic!("accepted bad {what}"),
        Err(e) => e,
    }
}
