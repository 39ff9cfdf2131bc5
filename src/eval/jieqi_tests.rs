//! Tests of the Jieqi evaluation: exact trace, file format and errors, the dark-piece value,
//! colour symmetry and the dispatch on the variant.

use super::*;
use crate::core::{Arbiter, CaptureReveal};
use crate::core::{Color, PieceType, Position};
use crate::eval::layout::NFLAT;
use crate::eval::params::JIEQI_DEFAULT_JSON;
use crate::eval::test_support::{
    assert_error, checked_trace, edited_once, flat_index, param_sets, random_params, rejected,
    swap_case,
};
use crate::eval::{EvalParams, evaluate_red, trace};
use crate::tunable::ParamsError;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// Positions of random Jieqi games from seeded deals: the arbiter's truth (hidden field known)
/// and both players' views (pools that include pieces captured unseen), every third ply.
fn jieqi_positions() -> Vec<Position> {
    let mut out = Vec::new();
    let rules = [
        CaptureReveal::Capturer,
        CaptureReveal::Nobody,
        CaptureReveal::Both,
    ];
    for seed in 0..12u64 {
        let mut arb = Arbiter::from_seed(seed, rules[seed as usize % 3]);
        let mut rng = ChaCha8Rng::seed_from_u64(seed ^ 0x9e37);
        for ply in 0..90 {
            if arb.outcome().is_some() {
                break;
            }
            let moves = arb.truth().legal_moves();
            if moves.is_empty() {
                break;
            }
            let m = moves.as_slice()[rng.gen_range(0..moves.len())];
            arb.play(m).expect("a legal move of the truth");
            if ply % 3 == 2 {
                out.push(arb.truth().clone());
                out.push(arb.view(Color::Red).clone());
                out.push(arb.view(Color::Black).clone());
            }
        }
    }
    out.push(Position::jieqi_startpos());
    out.push(Position::bright_jieqi_startpos());
    out
}

#[test]
fn trace_dot_params_equals_jieqi_evaluation() {
    let positions = jieqi_positions();
    assert!(positions.len() > 300, "{} positions", positions.len());
    // Pools with pieces captured unseen (total not dividing the dark count) are covered.
    assert!(positions.iter().any(|p| {
        Color::ALL
            .iter()
            .any(|&c| p.dark_count(c) > 0 && p.pool_total(c) > p.dark_count(c))
    }));
    for params in &param_sets(21, 3) {
        let values = params.to_vec();
        for pos in &positions {
            let (tr, _) = checked_trace(pos, params, &values);
            // Every coefficient is a binary fraction k / 2^16 (16 phases x DARK_SCALE): the
            // dot product in f64 is exact.
            for &(i, c) in &tr.coeffs {
                let k = c as f64 * (16 * DARK_SCALE) as f64;
                assert_eq!(k.fract(), 0.0, "coefficient {i} = {c} in {}", pos.to_fen());
            }
        }
    }
}

#[test]
fn jieqi_terms_are_used_only_by_jieqi_positions() {
    let p = EvalParams::default();
    let n = NFLAT;
    let xq = Position::startpos();
    assert!(
        trace(&xq, &p).coeffs.iter().all(|&(i, _)| (i as usize) < n),
        "a Xiangqi position uses no jieqi.* value"
    );
    let jq = Position::from_fen("3k5/9/9/9/9/9/9/9/9/X3K4 w R1N1P2 0 1").expect("valid");
    let tr = trace(&jq, &p);
    let specs = p.specs();
    let used = |name: &str| {
        tr.coeffs
            .iter()
            .any(|&(i, _)| specs[i as usize].name == name)
    };
    assert!(used("jieqi.material.rook.mg") && used("jieqi.material.pawn.eg"));
    assert!(used("jieqi.dark.pst.a0.mg") && !used("pst.rook.a0.mg"));
    // No Xiangqi material or advisor table value for a dark piece.
    for &(i, _) in &tr.coeffs {
        let name = &specs[i as usize].name;
        assert!(
            !name.starts_with("material.") && !name.starts_with("pst.advisor"),
            "{name}"
        );
    }
    // A revealed advisor across the river is valued by the Jieqi terms.
    let fen = "3k5/9/9/4A4/9/9/9/9/9/4K4 w - 0 1";
    let pos = Position::from_fen_variant(fen, crate::core::Variant::Jieqi).expect("valid");
    let mut v = p.to_vec();
    let adv = flat_index(&p, "jieqi.material.advisor.mg");
    // (down, not up: a tuned value may sit on its upper bound)
    v[adv] -= 40;
    v[adv + 1] -= 40;
    let q = p.from_vec(&v);
    assert_eq!(evaluate_red(&pos, &q), evaluate_red(&pos, &p) - 40);
    // The advisor table covers e6.
    let e6 = flat_index(&p, "jieqi.pst.advisor.e6.eg");
    let mut w = p.to_vec();
    w[e6] += 32;
    // phase 0: the endgame value counts in full
    assert_eq!(
        evaluate_red(&pos, &p.from_vec(&w)),
        evaluate_red(&pos, &p) + 32
    );
    // The same value change leaves every Xiangqi evaluation alone.
    for fen in [
        crate::core::START_FEN,
        "3k5/9/9/9/9/9/9/9/4A4/4K4 w - - 0 1",
    ] {
        let x = Position::from_fen(fen).expect("valid");
        assert_eq!(evaluate_red(&x, &q), evaluate_red(&x, &p));
    }
}

#[test]
fn xiangqi_only_terms_stay_out_of_jieqi() {
    let p = EvalParams::default();
    let names = ["threat.by_rook", "threat.by_minor", "trapped.horse"];
    let first: Vec<usize> = names
        .iter()
        .map(|n| flat_index(&p, &format!("{n}.mg")))
        .collect();
    let fires = |tr: &crate::eval::Trace| {
        tr.coeffs.iter().any(|&(i, c)| {
            c != 0.0
                && first
                    .iter()
                    .any(|&f| i as usize == f || i as usize == f + 1)
        })
    };
    for pos in jieqi_positions() {
        assert!(!fires(&trace(&pos, &p)), "{}", pos.to_fen());
    }
    // A horse attacked by a rook, as Xiangqi and as a bright Jieqi position.
    let fen = "3k5/9/2n6/9/9/9/9/9/9/2R1K4 w - - 0 1";
    assert!(fires(&trace(&Position::from_fen(fen).expect("valid"), &p)));
    let jq = Position::from_fen_variant(fen, crate::core::Variant::Jieqi).expect("valid");
    assert!(!fires(&trace(&jq, &p)));
}

#[test]
fn dark_value_is_the_pool_average() {
    let p = EvalParams::default();
    let specs = p.specs();
    let val = |name: &str| -> f64 {
        specs
            .iter()
            .find(|s| s.name == name)
            .map(|s| s.value as f64)
            .expect("named")
    };
    let kinds = [
        ("rook", 1.0),
        ("horse", 1.0),
        ("pawn", 2.0),
        ("advisor", 0.0),
        ("elephant", 0.0),
        ("cannon", 0.0),
    ];
    let hand = |phase: &str| -> f64 {
        kinds
            .iter()
            .map(|(k, c)| c * val(&format!("jieqi.material.{k}.{phase}")))
            .sum::<f64>()
            / 4.0
    };
    // One red dark piece on a0 (moves as a rook); red's pool R N P P (a total of 4, held
    // exactly): it is worth (R + N + 2P) / 4.
    let pos = Position::from_fen("3k5/9/9/9/9/9/9/9/9/X3K4 w R1N1P2 0 1").expect("valid");
    assert_eq!(pos.variant(), crate::core::Variant::Jieqi);
    let (mg, eg) = dark_piece_value(&pos, &p, Color::Red);
    assert_eq!((mg, eg), (hand("mg"), hand("eg")));
    // With material only, the evaluation is that value (plus dark.pst, zero there) tapered at
    // the phase of one rook-square piece.
    let m = p.material_only();
    let (mg, eg) = dark_piece_value(&pos, &m, Color::Red);
    let ph = phase(&pos) as f64;
    assert_eq!(ph, 2.0);
    let expect = ((mg * ph + eg * (16.0 - ph)) / 16.0).round() as i32;
    assert_eq!(evaluate_red(&pos, &m), expect);
    // Black's identical piece and pool mirror it exactly.
    let black = Position::from_fen("x3k4/9/9/9/9/9/9/9/9/3K5 b r1n1p2 0 1").expect("valid");
    assert_eq!(evaluate_red(&black, &m), -expect);
    // A pool of 3 (not a binary fraction): within the quantisation error of the weights.
    let pos = Position::from_fen("3k5/9/9/9/9/9/9/9/9/X3K4 w R1N1P1 0 1").expect("valid");
    let (mg, _) = dark_piece_value(&pos, &p, Color::Red);
    let exact = (val("jieqi.material.rook.mg")
        + val("jieqi.material.horse.mg")
        + val("jieqi.material.pawn.mg"))
        / 3.0;
    assert!(
        (mg - exact).abs() < 3.0 * 1200.0 / DARK_SCALE as f64,
        "{mg} vs {exact}"
    );
    let w = pool_weights(&pos, Color::Red, 1);
    assert_eq!(w.iter().sum::<i64>(), DARK_SCALE);
    assert_eq!(
        pool_weights(&pos, Color::Red, 3)[PieceType::Rook.index()],
        DARK_SCALE
    );
}

#[test]
fn dark_square_values_apply_by_square_and_colour() {
    let p = EvalParams::default();
    // b2 is a dark starting square.
    let b2 = flat_index(&p, "jieqi.dark.pst.b2.mg");
    let mut v = p.to_vec();
    v[b2] += 16;
    v[b2 + 1] += 16;
    let q = p.from_vec(&v);
    // Red dark piece on b2, black's on b7 (its mirror): both see the change.
    let red = Position::from_fen("3k5/9/9/9/9/9/9/1X7/9/4K4 w C1 0 1").expect("valid");
    assert_eq!(evaluate_red(&red, &q), evaluate_red(&red, &p) + 16);
    let black = Position::from_fen("3k5/9/1x7/9/9/9/9/9/9/4K4 w c1 0 1").expect("valid");
    assert_eq!(evaluate_red(&black, &q), evaluate_red(&black, &p) - 16);
}

/// The colour mirror of a Jieqi FEN (board flipped, cases swapped, side to move swapped).
fn mirror_jieqi(fen: &str) -> String {
    let f: Vec<&str> = fen.split_whitespace().collect();
    let board: Vec<String> = f[0].split('/').rev().map(swap_case).collect();
    let side = if f[1] == "w" { "b" } else { "w" };
    format!(
        "{} {side} {} {} {}",
        board.join("/"),
        swap_case(f[2]),
        f[3],
        f[4]
    )
}

#[test]
fn colour_mirror_negates_jieqi_scores() {
    let positions = jieqi_positions();
    for params in &param_sets(5, 2) {
        for pos in positions.iter().step_by(2) {
            let fen = pos.without_hidden().to_fen();
            let plain =
                Position::from_fen_variant(&fen, crate::core::Variant::Jieqi).expect("valid view");
            let red = evaluate_red(&plain, params);
            assert_eq!(
                evaluate_red(pos, params),
                red,
                "hidden field ignored: {fen}"
            );
            let m = mirror_jieqi(&fen);
            let cm = Position::from_fen_variant(&m, crate::core::Variant::Jieqi)
                .expect("mirrored FEN is valid");
            assert_eq!(
                evaluate_red(&cm, params),
                -red,
                "colour mirror of {fen}: {m}"
            );
        }
    }
}

#[test]
fn xiangqi_terms_baseline_for_jieqi() {
    // The baseline's hash differs from the engine's: `EngineOptions::eval_hash` (search).
    let p = EvalParams::default();
    let baseline = |pos: &Position| {
        let mut t = crate::eval::CoeffTracer::default();
        let v = crate::eval::evaluate_red_for(pos, &p, false, &mut t);
        (v, t.finish())
    };
    let positions = jieqi_positions();
    let mut differ = 0;
    for pos in positions.iter().step_by(5) {
        // The baseline is the Xiangqi evaluation over the visible kinds.
        let mut t = crate::eval::NoTrace;
        let xq = super::super::evaluate::eval_red(pos, &p, &mut t);
        let (v, tr) = baseline(pos);
        assert_eq!(v, xq, "{}", pos.to_fen());
        assert_eq!(
            crate::eval::evaluate_for(pos, &p, false),
            xq * pos.side_to_move().sign()
        );
        assert_eq!(tr.dot(&p.to_vec()).round() as i32, xq);
        assert!(tr.coeffs.iter().all(|&(i, _)| (i as usize) < NFLAT));
        differ += (evaluate_red(pos, &p) != xq) as usize;
    }
    assert!(differ > 0);
    // Xiangqi positions are not affected.
    let x = Position::startpos();
    assert_eq!(baseline(&x).0, evaluate_red(&x, &p));
}

// ---------------------------------------------------------------------------------------------
// The file format

#[test]
fn embedded_jieqi_file_is_canonical_and_round_trips() {
    let p = EvalParams::default();
    // Regenerate with `xqtune eval --print-jieqi-params > params/jieqi.json` after editing.
    assert_eq!(p.jieqi_to_json_string(), JIEQI_DEFAULT_JSON);
    let q = random_params(9);
    let mut r = EvalParams::default();
    r.set_jieqi_json_str(&q.jieqi_to_json_string())
        .expect("parses");
    let n = NFLAT;
    assert_eq!(r.to_vec()[n..], q.to_vec()[n..]);
    assert_eq!(r.to_vec()[..n], p.to_vec()[..n]);
    // Names and sizes of the flat view.
    let specs = p.specs();
    let jieqi: Vec<&str> = specs
        .iter()
        .filter(|s| s.name.starts_with("jieqi."))
        .map(|s| s.name.as_str())
        .collect();
    assert_eq!(jieqi.len(), 12 + 3 * 100 + 30);
    assert!(jieqi.contains(&"jieqi.pst.pawn.a0.mg"));
    assert!(jieqi.contains(&"jieqi.pst.elephant.e9.eg"));
    assert!(jieqi.contains(&"jieqi.dark.pst.i0.eg"));
    assert!(!jieqi.iter().any(|n| n.starts_with("jieqi.dark.pst.e0")));
}

fn jerr(text: &str) -> ParamsError {
    rejected(
        EvalParams::default().set_jieqi_json_str(text),
        "Jieqi params",
    )
}

/// The embedded Jieqi file with `from` replaced by `to` (exactly once).
fn jedited(from: &str, to: &str) -> String {
    edited_once(JIEQI_DEFAULT_JSON, from, to)
}

#[test]
fn jieqi_file_errors_name_the_key() {
    // The material lines as the embedded file has them (their values are tuned).
    let line = |start: &str| {
        JIEQI_DEFAULT_JSON
            .lines()
            .find(|l| l.trim_start().starts_with(start))
            .unwrap_or_else(|| panic!("a line starting {start}"))
    };
    let pawn = line("\"pawn\": {\"v\": [");
    assert_error!(
        jerr(&jedited(&format!(",\n{pawn}"), "")),
        ParamsError::MissingKey(k) if k == "material.pawn"
    );
    let advisor = line("\"advisor\": {\"v\": [");
    let values = &advisor[advisor.find('[').unwrap()..=advisor.find(']').unwrap()];
    let e = assert_error!(
        jerr(&jedited(advisor, &advisor.replace(values, "[200, 900]"))),
        ParamsError::OutOfBounds { key, value: 900, .. } if key == "material.advisor.eg"
    );
    assert!(e.to_string().contains("material.advisor.eg"), "{e}");
    // The dark table's first middlegame entry is a3.
    let dark = JIEQI_DEFAULT_JSON.find("\"dark\"").expect("dark section");
    let (head, tail) = JIEQI_DEFAULT_JSON.split_at(dark);
    let mg = tail.find("\"mg\": [\n").expect("mg list") + "\"mg\": [\n".len();
    let (a, b) = tail.split_at(mg);
    let comma = b.find(',').expect("first entry");
    let bad = format!("{head}{a}         500{}", &b[comma..]);
    assert_error!(
        jerr(&bad),
        ParamsError::OutOfBounds { key, .. } if key == "dark.pst.a3.mg"
    );
    let short = format!("{head}{a}{}", &b[comma + 1..]);
    match jerr(&short) {
        ParamsError::WrongSize {
            key,
            expected,
            found,
        } => {
            assert_eq!(key, "dark.pst.mg");
            assert_eq!((expected, found), (15, 14));
        }
        other => panic!("{other:?}"),
    }
    assert_error!(
        jerr(&jedited(
            "\"variant\": \"jieqi\"",
            "\"variant\": \"xiangqi\""
        )),
        ParamsError::WrongVariant { .. }
    );
    // A Xiangqi file is not a Jieqi file (and the reverse).
    assert_error!(
        jerr(crate::eval::params::DEFAULT_JSON),
        ParamsError::WrongVariant { .. }
    );
    assert!(EvalParams::from_json_str(JIEQI_DEFAULT_JSON).is_err());
    assert_error!(
        jerr(&jedited("\"dark\": {", "\"dark\": {\"extra\": 1, ")),
        ParamsError::UnknownKey(k) if k == "dark.extra"
    );
}
