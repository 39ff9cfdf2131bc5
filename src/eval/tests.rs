use super::layout::{NALL, NFLAT, OFFSET, id};
use super::params::DEFAULT_JSON;
use super::tables::PST_LEN;
use super::test_support::{
    assert_error, checked_trace, edited_once, flat_index, param_sets, random_params, rejected,
    swap_case,
};
use super::*;
use crate::core::{Color, PieceType, Position};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// Positions from seeded random playouts from the start, plus hand-picked ones.
fn sample_positions() -> Vec<Position> {
    let mut out = Vec::new();
    let mut rng = ChaCha8Rng::seed_from_u64(0x5eed);
    for _ in 0..40 {
        let mut pos = Position::startpos();
        for ply in 0..120 {
            let moves = pos.legal_moves();
            if moves.is_empty() || pos.outcome().is_some() {
                break;
            }
            let m = moves.as_slice()[rng.gen_range(0..moves.len())];
            pos.make_move(m);
            if ply % 4 == 3 {
                let mut p = pos.clone();
                p.clear_history();
                out.push(p);
            }
        }
    }
    for fen in HAND_PICKED
        .iter()
        .chain(SCALE_ENDGAMES.iter().map(|(fen, _)| fen))
    {
        out.push(Position::from_fen(fen).expect("hand-picked FEN is valid"));
    }
    out
}

const HAND_PICKED: &[&str] = &[
    crate::core::START_FEN,
    // Central cannon opening, black to move.
    "rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C2C4/9/RNBAKABNR b - - 1 1",
    // Empty-head cannon against a bare palace.
    "3k5/9/9/9/9/9/9/4C4/9/4K4 w - - 0 1",
    // Rook and pawns against advisors and elephants.
    "2bak4/4a4/4b4/9/2P6/9/9/9/4R4/4K4 w - - 0 1",
    // Horse and crossed, connected pawns.
    "3k5/9/3PP4/9/9/9/9/4N4/9/4K4 b - - 0 1",
    // A middlegame with hanging pieces on both sides.
    "r1bakab1r/9/1cn3nc1/p1p1p1p1p/9/2P6/P3P1P1P/1C2B1NC1/9/RN1AKA2R w - - 0 5",
];

/// Endgames where the side the evaluation favours lacks the material to mate, by the
/// scale-down that applies (the last three have no scale-down: enough attackers, or too few
/// defenders).
const SCALE_ENDGAMES: &[(&str, Option<&str>)] = &[
    // Black's two advisors and elephant against one advisor: no attacker on either side.
    (
        "3akab2/9/9/9/9/9/9/9/4A4/4K4 w - - 0 1",
        Some("no_attackers"),
    ),
    ("3aka3/9/9/9/4P4/9/9/9/9/3K5 w - - 0 1", Some("one_pawn")),
    ("3aka3/9/4b4/9/2P1P4/9/9/9/9/3K5 b - - 0 1", Some("pawns")),
    (
        "3ak4/9/9/9/9/9/3n5/9/4A4/2B1K1B2 b - - 0 1",
        Some("one_minor"),
    ),
    ("2bakab2/9/9/9/9/9/9/9/9/R2K5 w - - 0 1", Some("one_rook")),
    // One advisor short of the full defence: the rook wins.
    ("2b1k1b2/4a4/9/9/9/9/9/9/9/R2K5 w - - 0 1", None),
    // One pawn against a bare king.
    ("4k4/9/9/9/4P4/9/9/9/9/3K5 w - - 0 1", None),
    // Rook and pawn against the full defence.
    ("2bakab2/9/9/9/4P4/9/9/9/9/R2K5 w - - 0 1", None),
    // A rook and a pawn each; a horse and two pawns against a cannon and one.
    (
        "3akab2/9/4b4/6p2/9/2P6/9/4B4/r3A4/3AK1R2 w - - 0 1",
        Some("one_each"),
    ),
    (
        "3ak4/4a4/4b4/2p3c2/9/2P1P4/9/4BN3/4A4/3AK4 w - - 0 1",
        Some("one_each"),
    ),
    // Two pawns ahead with a rook each; a rook against a horse and a cannon; against a horse.
    ("3akab2/9/4b4/9/9/2P1P4/9/4B4/r3A4/3AK1R2 w - - 0 1", None),
    ("3akab2/9/4b4/9/9/2P6/9/2n1B2c1/4A4/3AK1R2 w - - 0 1", None),
    ("3akab2/9/4b4/9/9/2P6/9/2n1B4/4A4/3AK1R2 w - - 0 1", None),
];

fn mirror_colors(fen: &str) -> String {
    let mut fields = fen.split_whitespace();
    let board = fields.next().unwrap_or_default();
    let side = fields.next().unwrap_or("w");
    let ranks: Vec<String> = board.split('/').rev().map(swap_case).collect();
    let side = if side == "w" { "b" } else { "w" };
    format!("{} {side} - - 0 1", ranks.join("/"))
}

fn mirror_files(fen: &str) -> String {
    let mut fields = fen.split_whitespace();
    let board = fields.next().unwrap_or_default();
    let side = fields.next().unwrap_or("w");
    let ranks: Vec<String> = board
        .split('/')
        .map(|r| r.chars().rev().collect())
        .collect();
    format!("{} {side} - - 0 1", ranks.join("/"))
}

#[test]
fn embedded_defaults_load_and_are_canonical() {
    let p = EvalParams::default();
    assert_eq!(p.to_vec().len(), NALL);
    // The file is written exactly as `to_json_string` writes it (regenerate it with
    // `xqtune eval --print-params > params/xiangqi.json` after editing).
    assert_eq!(p.to_json_string(), DEFAULT_JSON);
}

#[test]
fn table_sizes_match_reachable_squares() {
    assert_eq!(PST_LEN, [6, 3, 4, 50, 50, 50, 31]);
    for kind in PieceType::ALL {
        assert_eq!(pst_squares(kind).len(), PST_LEN[kind.index()]);
    }
}

#[test]
fn trace_dot_params_equals_evaluation() {
    let positions = sample_positions();
    assert!(positions.len() > 300, "{} positions", positions.len());
    // The defaults and random parameter sets inside the bounds (all terms exercised).
    for params in &param_sets(7, 3) {
        let values = params.to_vec();
        for pos in &positions {
            let (tr, red) = checked_trace(pos, params, &values);
            // f32 accumulation of the linear part, as a tuner might do it, agrees too.
            let danger = |side: usize| {
                crate::eval::trace::danger_q(
                    tr.danger[side]
                        .iter()
                        .map(|&(i, a)| a as f64 * values[i as usize] as f64)
                        .sum(),
                )
            };
            let dot32: f32 = (tr.constant
                + tr.coeffs
                    .iter()
                    .map(|&(i, c)| c * values[i as usize] as f32)
                    .sum::<f32>()
                + (tr.danger_scale * (danger(0) - danger(1))) as f32)
                * tr.scale(&values) as f32;
            assert_eq!(
                dot32.round() as i32,
                red,
                "{}: f32 dot {dot32}",
                pos.to_fen()
            );
            let mut t = NoTrace;
            assert_eq!(evaluate_with(pos, params, &mut t), evaluate(pos, params));
        }
    }
}

#[test]
fn colour_mirror_negates_and_file_mirror_keeps_the_score() {
    for params in param_sets(11, 1) {
        for pos in sample_positions() {
            let fen = pos.to_fen();
            let red = evaluate_red(&pos, &params);
            let cm = Position::from_fen(&mirror_colors(&fen)).expect("mirrored FEN is valid");
            assert_eq!(evaluate_red(&cm, &params), -red, "colour mirror of {fen}");
            assert_eq!(evaluate(&cm, &params), evaluate(&pos, &params), "{fen}");
            let fm = Position::from_fen(&mirror_files(&fen)).expect("mirrored FEN is valid");
            assert_eq!(evaluate_red(&fm, &params), red, "file mirror of {fen}");
        }
    }
}

/// The two-step evaluation of the search's lazy path finishes at exactly the evaluation, and
/// its lazy part is material and position tables alone (the full evaluation of a set whose
/// other terms are all zero).
#[test]
fn partial_evaluation_finishes_at_the_evaluation() {
    let default = EvalParams::default();
    let mut v = default.to_vec();
    for (x, spec) in v.iter_mut().zip(default.specs()) {
        let keep = ["pst.", "material.", "jieqi."]
            .iter()
            .any(|p| spec.name.starts_with(p));
        if !keep {
            assert!(spec.min <= 0, "{} cannot be zero", spec.name);
            *x = 0;
        }
    }
    let only_psq = default.from_vec(&v);
    for pos in sample_positions() {
        let part = super::Partial::new(&pos, &default, true).expect("Xiangqi position");
        assert_eq!(
            part.finish(&pos, &default),
            evaluate(&pos, &default),
            "{pos:?}"
        );
        assert_eq!(part.lazy(&pos), evaluate(&pos, &only_psq), "{pos:?}");
    }
}

#[test]
fn flat_view_round_trips_and_clamps() {
    let p = EvalParams::default();
    let v = p.to_vec();
    assert_eq!(p.from_vec(&v), p);
    let specs = p.specs();
    assert_eq!(specs.len(), v.len());
    for (s, x) in specs.iter().zip(&v) {
        assert_eq!(s.value, *x);
        assert!(s.min <= s.value && s.value <= s.max, "{}", s.name);
        assert!(s.step >= 1, "{}", s.name);
    }
    // Out-of-bounds values are clamped, not kept.
    let wild: Vec<i32> = specs.iter().map(|s| s.max + 1000).collect();
    let q = p.from_vec(&wild);
    for (s, x) in q.specs().iter().zip(q.to_vec()) {
        assert_eq!(x, s.max, "{}", s.name);
    }
    // A changed value changes the evaluation and the hash.
    let mut w = v.clone();
    let rook = flat_index(&p, "material.rook.mg");
    w[rook] += 10;
    w[rook + 1] += 10; // material.rook.eg
    let r = p.from_vec(&w);
    assert_ne!(r.hash(), p.hash());
    assert_eq!(EvalParams::default().hash(), p.hash());
    let pos = Position::from_fen("3k5/9/9/9/9/9/9/9/9/R3K4 w - - 0 1").expect("valid");
    assert_eq!(evaluate_red(&pos, &r), evaluate_red(&pos, &p) + 10);
}

#[test]
fn spec_names_are_unique_and_dotted() {
    let specs = EvalParams::default().specs();
    let mut names: Vec<&str> = specs.iter().map(|s| s.name.as_str()).collect();
    assert!(names.contains(&"material.rook.mg"));
    assert!(names.contains(&"pst.horse.c7.eg"));
    assert!(names.contains(&"king.attackers.3.mg"));
    assert!(names.contains(&"tempo"));
    names.sort_unstable();
    let n = names.len();
    names.dedup();
    assert_eq!(names.len(), n, "duplicate spec names");
    // Terms of one group are contiguous (the file writer relies on it).
    let mut seen_groups: Vec<&str> = Vec::new();
    let mut last = "";
    for t in TERMS.iter() {
        let g = t.name.rsplit_once('.').map(|x| x.0).unwrap_or("");
        if g != last {
            assert!(!seen_groups.contains(&g), "group {g} is split");
            seen_groups.push(g);
            last = g;
        }
    }
}

#[test]
fn json_round_trip() {
    let p = EvalParams::default();
    assert_eq!(
        EvalParams::from_json_str(&p.to_json_string()).expect("parses"),
        p
    );
    let q = random_params(3);
    // A Xiangqi file carries the Xiangqi part; the Jieqi part comes from its own file.
    let mut r = EvalParams::from_json_str(&q.to_json_string()).expect("parses");
    let n = NFLAT;
    assert_eq!(r.to_vec()[..n], q.to_vec()[..n]);
    assert_eq!(
        r.to_vec()[n..],
        p.to_vec()[n..],
        "Jieqi part: the embedded default"
    );
    r.set_jieqi_json_str(&q.jieqi_to_json_string())
        .expect("parses");
    assert_eq!(r, q);
    // Loading from a file.
    let dir = std::env::temp_dir().join(format!("xqtune-eval-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let path = dir.join("p.json");
    std::fs::write(&path, q.to_json_string()).expect("write");
    let jpath = dir.join("j.json");
    std::fs::write(&jpath, q.jieqi_to_json_string()).expect("write");
    let mut r = EvalParams::load(&path).expect("loads");
    r.load_jieqi(&jpath).expect("loads");
    assert_eq!(r, q);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn material_only_and_flattened() {
    let p = EvalParams::default();
    let m = p.material_only();
    for s in m.specs() {
        if s.name.starts_with("material.") || s.name.starts_with("jieqi.material.") {
            assert_eq!(
                s.value,
                p.specs()
                    .iter()
                    .find(|x| x.name == s.name)
                    .map(|x| x.value)
                    .unwrap_or(-1)
            );
        } else {
            assert_eq!(s.value, 0, "{}", s.name);
        }
    }
    assert_eq!(evaluate(&Position::startpos(), &m), 0);
    let f = p.flattened();
    for (s, d) in f.specs().iter().zip(p.specs()) {
        if ["pst.", "mobility.", "jieqi.pst.", "jieqi.dark."]
            .iter()
            .any(|p| s.name.starts_with(p))
        {
            assert_eq!(s.value, 0, "{}", s.name);
        } else {
            assert_eq!(s.value, d.value, "{}", s.name);
        }
    }
    // Material only leaves tempo at zero too: the start position is dead level.
    assert_eq!(m.to_vec()[OFFSET[id::TEMPO]], 0);
}

#[test]
fn evaluation_is_sensible() {
    let p = EvalParams::default();
    let start = Position::startpos();
    let s0 = evaluate_red(&start, &p);
    // the start is symmetric: level but for the tempo of the side to move
    assert_eq!(s0, p.to_vec()[OFFSET[id::TEMPO]], "start {s0}");
    // Red without a rook (a0) is clearly worse; without a pawn slightly worse.
    let no_rook =
        Position::from_fen("rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C5C1/9/1NBAKABNR w - - 0 1")
            .expect("valid");
    assert!(evaluate_red(&no_rook, &p) < s0 - 450);
    let no_pawn =
        Position::from_fen("rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P3P1P/1C5C1/9/RNBAKABNR w - - 0 1")
            .expect("valid");
    let d = s0 - evaluate_red(&no_pawn, &p);
    assert!((15..150).contains(&d), "pawn worth {d}");
    // A crossed pawn near the palace is worth more than one at home.
    let home = Position::from_fen("3k5/9/9/9/9/9/4P4/9/9/4K4 w - - 0 1").expect("valid");
    let crossed = Position::from_fen("3k5/9/4P4/9/9/9/9/9/9/4K4 w - - 0 1").expect("valid");
    assert!(evaluate_red(&crossed, &p) > evaluate_red(&home, &p) + 30);
    // Rook > cannon, horse > pawn, in every phase.
    let rook = Position::from_fen("3k5/9/9/9/9/9/9/9/9/R3K4 w - - 0 1").expect("valid");
    let cannon = Position::from_fen("3k5/9/9/9/9/9/9/9/9/C3K4 w - - 0 1").expect("valid");
    assert!(evaluate_red(&rook, &p) > evaluate_red(&cannon, &p) + 200);
}

fn err(text: &str) -> ParamsError {
    rejected(EvalParams::from_json_str(text), "params")
}

/// A valid parameter file whose text the error tests edit: the defaults as they were before
/// the first tuned set was promoted, kept fixed so that promoting new defaults cannot break
/// the edits.
const FIXTURE_JSON: &str = include_str!("../../tests/data/params-fixture.json");

/// The fixture file with `from` replaced by `to` (exactly once).
fn edited(from: &str, to: &str) -> String {
    assert!(EvalParams::from_json_str(FIXTURE_JSON).is_ok());
    edited_once(FIXTURE_JSON, from, to)
}

#[test]
fn malformed_json_names_line_and_column() {
    let e = err(&edited("\"tempo\": {", "\"tempo\": {{"));
    match &e {
        ParamsError::Json { line, column, .. } => {
            assert_eq!(*line, 4);
            assert!(*column > 0);
        }
        other => panic!("{other:?}"),
    }
    assert!(e.to_string().contains("line 4"), "{e}");
}

#[test]
fn missing_key_is_named() {
    // Remove the last member of "material" (and the comma before it).
    let e = assert_error!(
        err(&edited(
            ",\n    \"pawn\": {\"v\": [30, 45], \"min\": 0, \"max\": 200, \"step\": 5}",
            "",
        )),
        ParamsError::MissingKey(k) if k == "material.pawn"
    );
    assert!(e.to_string().contains("material.pawn"));
    assert_error!(
        err(&edited("\"tempo\": {\"v\": 10, \"min\": 0,", "\"tempo\": {\"v\": 10,")),
        ParamsError::MissingKey(k) if k == "tempo.min"
    );
}

#[test]
fn new_threat_and_trapped_terms_are_checked() {
    assert_error!(
        err(&edited(
            ",\n    \"by_minor\": {\"v\": [0, 0], \"min\": -200, \"max\": 50, \"step\": 4}",
            "",
        )),
        ParamsError::MissingKey(k) if k == "threat.by_minor"
    );
    assert_error!(
        err(&edited(
            "\"horse\": {\"v\": [0, 0], \"min\": -200",
            "\"horse\": {\"v\": [0, 60], \"min\": -200",
        )),
        ParamsError::OutOfBounds { key, .. } if key == "trapped.horse.eg"
    );
}

#[test]
fn unknown_keys_are_named() {
    let cases = [
        (
            "\"tempo\": {",
            "\"tempi\": {\"v\": 1, \"min\": 0, \"max\": 2, \"step\": 1},\n  \"tempo\": {",
            "tempi",
        ),
        (
            "\"rook\": {\"v\": [620, 660],",
            "\"queen\": {\"v\": [900, 900], \"min\": 0, \"max\": 2000, \"step\": 5},\n    \"rook\": {\"v\": [620, 660],",
            "material.queen",
        ),
        (
            "\"tempo\": {\"v\": 10,",
            "\"tempo\": {\"v\": 10, \"stpe\": 3,",
            "tempo.stpe",
        ),
    ];
    for (from, to, key) in cases {
        assert_error!(err(&edited(from, to)), ParamsError::UnknownKey(k) if k == key);
    }
    // Comments (keys starting with '_') are allowed anywhere.
    assert!(
        EvalParams::from_json_str(&edited(
            "\"tempo\": {\"v\": 10,",
            "\"tempo\": {\"_why\": \"x\", \"v\": 10,"
        ))
        .is_ok()
    );
}

#[test]
fn out_of_bounds_value_names_the_flat_key() {
    let e = err(&edited(
        "\"rook\": {\"v\": [620, 660]",
        "\"rook\": {\"v\": [620, 1660]",
    ));
    match &e {
        ParamsError::OutOfBounds { key, value, .. } => {
            assert_eq!(key, "material.rook.eg");
            assert_eq!(*value, 1660);
        }
        other => panic!("{other:?}"),
    }
    // A table entry: the king table's first middlegame value is d2.
    assert_error!(
        err(&edited("         -30, -24,\n", "        -300, -24,\n")),
        ParamsError::OutOfBounds { key, .. } if key == "pst.king.d2.mg"
    );
}

#[test]
fn wrong_table_size_is_named() {
    let e = err(&edited("         -30, -24,\n", "         -30,\n"));
    match &e {
        ParamsError::WrongSize {
            key,
            expected,
            found,
        } => {
            assert_eq!(key, "pst.king.mg");
            assert_eq!((*expected, *found), (6, 5));
        }
        other => panic!("{other:?}"),
    }
    assert_error!(
        err(&edited("\"rook\": {\"v\": [620, 660]", "\"rook\": {\"v\": [620]")),
        ParamsError::WrongSize { key, .. } if key == "material.rook.v"
    );
}

#[test]
fn bad_bounds_and_types_are_named() {
    let tempo = "\"tempo\": {\"v\": 10, \"min\": 0, \"max\": 60";
    assert_error!(
        err(&edited(tempo, "\"tempo\": {\"v\": 10, \"min\": 70, \"max\": 60")),
        ParamsError::MinAboveMax { key, .. } if key == "tempo"
    );
    assert_error!(
        err(&edited(&format!("{tempo}, \"step\": 2"), &format!("{tempo}, \"step\": 0"))),
        ParamsError::BadStep { key, .. } if key == "tempo.step"
    );
    assert_error!(
        err(&edited("\"tempo\": {\"v\": 10,", "\"tempo\": {\"v\": 10.5,")),
        ParamsError::WrongType { key, .. } if key == "tempo.v"
    );
    assert_error!(
        err(&edited("\"rook\": {\"v\": [620, 660]", "\"rook\": {\"v\": 620")),
        ParamsError::WrongType { key, .. } if key == "material.rook.v"
    );
    assert_error!(
        err(&edited("\"d2 e2\",", "\"e2 d2\",")),
        ParamsError::WrongSquares { key, .. } if key == "pst.king.squares"
    );
    assert_error!(
        err(&edited("\"variant\": \"xiangqi\"", "\"variant\": \"jieqi\"")),
        ParamsError::WrongVariant { found, .. } if found == "jieqi"
    );
    let e = EvalParams::load(std::path::Path::new("/nonexistent/xq.json")).expect_err("no file");
    assert!(e.to_string().contains("/nonexistent/xq.json"));
}

/// Raw (untapered) count of the term `name`'s first flat value in `fen`.
fn count(fen: &str, term_id: usize, entry: usize) -> i32 {
    let pos = Position::from_fen(fen).expect("valid FEN");
    let mut t = CoeffTracer::default();
    evaluate_red_with(&pos, &EvalParams::default(), &mut t);
    t.counts()[OFFSET[term_id] + 2 * entry]
}

#[test]
fn terms_fire_where_they_should() {
    // Red rook a0 on an empty file: 9 squares up, 3 along the back rank up to the king.
    let rook = "3k5/9/9/9/9/9/9/9/9/R3K4 w - - 0 1";
    assert_eq!(count(rook, id::MOB_ROOK, 0), 12);
    assert_eq!(count(rook, id::ROOK_OPEN, 0), 1);
    assert_eq!(count(rook, id::ROOK_SEMI_OPEN, 0), 0);
    // The same rook on a file with a black pawn: semi-open.
    let semi = "3k5/9/9/9/p8/9/9/9/9/R3K4 w - - 0 1";
    assert_eq!(count(semi, id::ROOK_OPEN, 0), 0);
    assert_eq!(count(semi, id::ROOK_SEMI_OPEN, 0), 1);
    // Cannon d2 facing the black king d9 over an empty file: empty-head cannon; black has no
    // advisors or elephants left against it (2 missing elephants x 1 cannon, for black).
    let empty_head = "3k5/9/9/9/9/9/9/3C5/9/4K4 w - - 0 1";
    assert_eq!(count(empty_head, id::CANNON_KING_LINE, 0), 1);
    assert_eq!(count(empty_head, id::CANNON_KING_LINE, 2), 0);
    assert_eq!(count(empty_head, id::MISSING_ELEPHANT, 0), -2);
    // With two screens between: the central-cannon pressure entry.
    let screens = "3k5/9/3n5/9/9/9/3N5/3C5/9/4K4 w - - 0 1";
    assert_eq!(count(screens, id::CANNON_KING_LINE, 0), 0);
    assert_eq!(count(screens, id::CANNON_KING_LINE, 2), 1);
    // A black horse c7 attacked by the red rook c0, undefended: hanging (black's, so -1).
    let hanging = "3k5/9/2n6/9/9/9/9/9/9/2R1K4 w - - 0 1";
    assert_eq!(count(hanging, id::HANGING + 2, 0), -1);
    // Connected crossed pawns: both count.
    let pawns = "3k5/9/3PP4/9/9/9/9/9/9/4K4 w - - 0 1";
    assert_eq!(count(pawns, id::PAWN_CONNECTED, 0), 2);
    // A red rook on d7 hitting the black palace: d8, d9 (king) and e7, f7 along rank 7.
    let attack = "4k4/9/3R5/9/9/9/9/9/9/3K5 w - - 0 1";
    assert_eq!(count(attack, id::KING_ROOK, 0), 4);
    assert_eq!(count(attack, id::KING_ATTACKERS, 1), 1);
    // The hanging black horse c7 is also a minor attacked by a rook.
    assert_eq!(count(hanging, id::THREAT_BY_ROOK, 0), -1);
    assert_eq!(count(hanging, id::THREAT_BY_MINOR, 0), 0);
    // Defended by a black rook c9, it stays threatened by the rook but no longer hangs.
    let defended = "2rk5/9/2n6/9/9/9/9/9/9/2R1K4 w - - 0 1";
    assert_eq!(count(defended, id::HANGING + 2, 0), 0);
    assert_eq!(count(defended, id::THREAT_BY_ROOK, 0), -1);
    // A red horse d2 attacks the black cannon c4 (leg d3 free); the cannon, without a screen,
    // attacks nothing back.
    let minor = "3k5/9/9/9/9/2c6/9/3N5/9/4K4 w - - 0 1";
    assert_eq!(count(minor, id::THREAT_BY_MINOR, 0), -1);
    assert_eq!(count(minor, id::THREAT_BY_ROOK, 0), 0);
    // A red horse a0 with its leg a1 blocked by its own rook and its other square c1 held by
    // its own cannon: trapped. On an empty board it has two safe squares.
    let trapped = "3k5/9/9/9/9/9/9/9/R1C6/N3K4 w - - 0 1";
    assert_eq!(count(trapped, id::TRAPPED_HORSE, 0), 1);
    let free = "3k5/9/9/9/9/9/9/9/9/N3K4 w - - 0 1";
    assert_eq!(count(free, id::TRAPPED_HORSE, 0), 0);
    // With one of its two squares attacked by a black rook (c1 along rank 1), one is left.
    let one_left = "3k5/9/9/9/9/9/9/9/8r/N3K4 w - - 0 1";
    assert_eq!(count(one_left, id::TRAPPED_HORSE, 0), 1);
}

#[test]
fn king_danger_grows_with_the_square_of_the_attack_weight() {
    // Red's rook, horse and cannon all bear on black's palace; black attacks nothing.
    let pos = Position::from_fen("4k4/4a4/9/2N6/9/9/9/4C4/9/3RK4 b - - 0 1").expect("valid FEN");
    let base = EvalParams::default();
    let with = |weight: i32, floor: i32| {
        let mut v = base.to_vec();
        for name in ["rook", "horse", "cannon", "pawn"] {
            v[flat_index(&base, &format!("king.danger.{name}"))] = weight;
        }
        v[flat_index(&base, "king.danger.base")] = floor;
        let p = base.from_vec(&v);
        let (tr, red) = checked_trace(&pos, &p, &v);
        (red, tr)
    };
    let (e0, tr) = with(0, 0);
    // The trace names each weight red's attack uses, and black's attack weight has none.
    let names: Vec<String> = tr.danger[0]
        .iter()
        .map(|&(i, _)| base.specs()[i as usize].name.clone())
        .collect();
    assert!(names.iter().any(|n| n == "king.danger.rook"), "{names:?}");
    assert!(
        tr.danger[1]
            .iter()
            .all(|&(i, a)| { a == 0.0 || base.specs()[i as usize].name == "king.danger.base" })
    );
    assert!(tr.danger_scale > 0.0);
    let (e1, _) = with(10, 0);
    let (e2, _) = with(20, 0);
    // Convex in the weight: doubling the weight more than doubles the bonus.
    assert!(e1 > e0 && e2 - e1 > 2 * (e1 - e0) - 2, "{e0} {e1} {e2}");
    // A threshold above the attack weight switches it off.
    let (off, _) = with(10, -400);
    assert_eq!(off, e0);
}

#[test]
fn endgame_scale_down_takes_its_64ths_off_the_side_that_cannot_mate() {
    let names = [
        "no_attackers",
        "one_pawn",
        "pawns",
        "one_minor",
        "one_rook",
        "one_each",
    ];
    // The defaults without their scale-downs give the unscaled values.
    let defaults = EvalParams::default();
    let mut values = defaults.to_vec();
    for name in names {
        values[flat_index(&defaults, &format!("endgame.scale_down.{name}"))] = 0;
    }
    let base = defaults.from_vec(&values);
    // A different reduction per endgame, so that a wrong pick shows.
    for (k, name) in names.iter().enumerate() {
        values[flat_index(&base, &format!("endgame.scale_down.{name}"))] = 8 + 10 * k as i32;
    }
    let scaled = base.from_vec(&values);
    for &(fen, expect) in SCALE_ENDGAMES {
        for fen in [fen.to_string(), mirror_colors(fen)] {
            let pos = Position::from_fen(&fen).unwrap();
            let plain = evaluate_red(&pos, &base);
            assert_ne!(plain, 0, "{fen}");
            let favoured = if plain > 0 { Color::Red } else { Color::Black };
            let term = evaluate::scale_down_term(&pos, favoured);
            let name = term.map(|t| layout::TERMS[t].name);
            let want = expect.map(|e| format!("endgame.scale_down.{e}"));
            assert_eq!(name, want.as_deref(), "{fen}");
            let r = expect.map_or(0, |e| {
                values[flat_index(&base, &format!("endgame.scale_down.{e}"))]
            });
            // the unscaled value, rounded once after the scale: within half a centipawn
            let got = evaluate_red(&pos, &scaled);
            let exact = plain as f64 * (64 - r) as f64 / 64.0;
            assert!(
                (got as f64 - exact).abs() <= 0.5 + 0.5 * (64 - r) as f64 / 64.0,
                "{fen}: {got} against {exact}"
            );
            checked_trace(&pos, &scaled, &values);
        }
    }
    // All 64ths off: the side with only advisors and elephants is scored level.
    let mut all = values.clone();
    all[flat_index(&base, "endgame.scale_down.no_attackers")] = 64;
    let pos = Position::from_fen(SCALE_ENDGAMES[0].0).unwrap();
    assert_eq!(evaluate_red(&pos, &base.from_vec(&all)), 0);
}
