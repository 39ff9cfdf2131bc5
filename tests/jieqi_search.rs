//! The Jieqi search: chance nodes over reveals, no peeking at hidden identities, only legal
//! moves in random views, a UCI session in Jieqi, reproducible Jieqi matches, and the trace
//! of the evaluation on Jieqi positions.

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};
use std::sync::Arc;
use xqtune::core::arbiter::{Arbiter, deal};
use xqtune::core::{CaptureReveal, Color, Position, Variant};
use xqtune::eval::{EvalParams, evaluate, evaluate_red, trace};
use xqtune::play::{Engine, EngineConfig, MatchConfig, run_match_with_progress};
use xqtune::search::{
    ChanceMode, EngineOptions, SearchLimits, SearchParams, SearchResult, Searcher,
};

fn searcher(mode: ChanceMode) -> Searcher {
    let options = EngineOptions {
        chance_mode: mode,
        ..EngineOptions::default()
    };
    Searcher::new(Arc::new(EvalParams::default()), SearchParams::default(), 4).with_options(options)
}

fn search(pos: &Position, limits: &SearchLimits) -> SearchResult {
    searcher(ChanceMode::Search).search(pos, limits, &mut |_| {})
}

/// Positions that differ only in the hidden field give the same move, score and node count.
#[test]
fn never_peeks_at_hidden_identities() {
    let limits = SearchLimits {
        depth: Some(3),
        ..Default::default()
    };
    let plain = Position::jieqi_startpos();
    let base = search(&plain, &limits);
    assert!(base.nodes > 0);
    for seed in [1u64, 2, 99] {
        let dealt = deal(seed);
        assert!(dealt.knows_all_hidden());
        assert_eq!(dealt.without_hidden().to_fen(), plain.to_fen());
        let r = search(&dealt, &limits);
        assert_eq!(r.best_move, base.best_move, "seed {seed}");
        assert_eq!(r.score, base.score, "seed {seed}");
        assert_eq!(r.nodes, base.nodes, "seed {seed}");
    }
    // Mid-game: the arbiter's truth (hidden field known) against a view with the same pools.
    let mut arb = Arbiter::from_seed(7, CaptureReveal::Both);
    let mut rng = ChaCha8Rng::seed_from_u64(3);
    for _ in 0..8 {
        let moves = arb.truth().legal_moves();
        let m = moves[rng.gen_range(0..moves.len())];
        arb.play(m).expect("legal");
    }
    let truth = arb.truth().clone();
    let blind = truth.without_hidden();
    let a = search(&truth, &limits);
    let b = search(&blind, &limits);
    assert_eq!(
        (a.best_move, a.score, a.nodes),
        (b.best_move, b.score, b.nodes)
    );
}

fn logistic(v: f64, s: f64) -> f64 {
    1.0 / (1.0 + (-v / s).exp())
}

/// A depth-1 search of a position whose best move is a dark move: the root score is the
/// chance node's value, the pool-weighted average of the reveals' evaluations in
/// win-probability space, worked out here independently.
#[test]
fn chance_node_expectation_by_hand() {
    // Red: king e0 and one dark piece on its pawn square a3; red's pool holds a rook, a cannon
    // and two pawns (three were captured unseen). Black: king and a horse on a4, which the dark
    // piece takes as it reveals (a dark piece is already worth its pool's average, so only a
    // gain makes the reveal the best move).
    let pos = Position::from_fen("3k5/9/9/9/9/n8/X8/9/9/4K4 w RCP2 0 1").expect("valid FEN");
    let params = EvalParams::default();
    let s = SearchParams::default().chance_scale as f64;
    let mut best = f64::NEG_INFINITY;
    let mut dark_value = 0i32;
    for &m in pos.legal_moves().iter() {
        let mut total = 0.0;
        let mut acc = 0.0;
        let mut values = Vec::new();
        for (r, w) in pos.reveal_outcomes(m) {
            let mut child = pos.clone();
            child.make_move(r);
            assert!(!child.in_check(), "keep the children quiet");
            let v = -evaluate(&child, &params) as f64;
            values.push(v);
            acc += w as f64 * logistic(v, s);
            total += w as f64;
        }
        let value = if pos.is_dark(m.from()) {
            assert_eq!(total, 4.0);
            let p = acc / total;
            let v = (s * (p / (1.0 - p)).ln()).round();
            dark_value = v as i32;
            // The average lies strictly between the worst and best reveal.
            let lo = values.iter().cloned().fold(f64::INFINITY, f64::min);
            let hi = values.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
            assert!(lo < v && v < hi, "{lo} < {v} < {hi}");
            v
        } else {
            values[0]
        };
        best = best.max(value);
    }
    let r = search(
        &pos,
        &SearchLimits {
            depth: Some(1),
            ..Default::default()
        },
    );
    assert_eq!(r.best_move.uci(), "a3a4");
    assert_eq!(r.score, dark_value);
    assert_eq!(r.score as f64, best);
    // The principal variation stops at the chance node.
    assert_eq!(r.pv.len(), 1);
}

/// In views of random Jieqi games the engine returns a legal move, in both chance modes.
#[test]
fn only_legal_moves_in_random_views() {
    for seed in 0..4u64 {
        let mut arb = Arbiter::from_seed(seed, CaptureReveal::Capturer);
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let mut engines = [
            searcher(ChanceMode::Search),
            searcher(ChanceMode::StaticAverage),
        ];
        for ply in 0..40 {
            if arb.outcome().is_some() {
                break;
            }
            let us = arb.truth().side_to_move();
            let view = arb.view(us).clone();
            let legal = view.legal_moves();
            let r = engines[ply % 2].search(
                &view,
                &SearchLimits {
                    nodes: Some(400),
                    ..Default::default()
                },
                &mut |_| {},
            );
            assert!(legal.contains(r.best_move), "seed {seed} ply {ply}");
            assert_eq!(r.best_move.uci().len(), 4);
            // Mix the engine's moves with random ones to reach varied positions.
            let m = if rng.gen_bool(0.5) {
                r.best_move
            } else {
                legal[rng.gen_range(0..legal.len())]
            };
            arb.play(m).expect("legal in the truth too");
        }
    }
}

#[test]
fn jieqi_uci_session() {
    let mut child = Command::new(env!("CARGO_BIN_EXE_xqtune"))
        .arg("uci")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("binary starts");
    let mut stdin = child.stdin.take().expect("stdin");
    let stdout = BufReader::new(child.stdout.take().expect("stdout"));
    writeln!(
        stdin,
        "uci\nsetoption name UCI_Variant value jieqi\nposition startpos moves h2e2N h7e7c\n\
         go nodes 3000\nisready\nposition fen 3k5/9/9/9/9/n8/X8/9/9/4K4 w RCP2 0 1\ngo depth 1\n\
         setoption name UCI_Variant value chess\nisready\nquit"
    )
    .expect("engine reads");
    drop(stdin);
    let lines: Vec<String> = stdout.lines().map_while(Result::ok).collect();
    assert!(child.wait().expect("exits").success());
    assert!(
        lines
            .iter()
            .any(|l| l.contains("UCI_Variant") && l.contains("var jieqi"))
    );
    let best: Vec<&String> = lines.iter().filter(|l| l.starts_with("bestmove")).collect();
    assert_eq!(best.len(), 2, "{lines:?}");
    // After h2e2N h7e7c it is red's move in the Jieqi start: a legal plain move.
    let mut pos = Position::startpos_of(Variant::Jieqi);
    for m in ["h2e2N", "h7e7c"] {
        let mv = pos.parse_move(m).expect("legal");
        pos.make_move(mv);
    }
    let m1 = best[0].split_whitespace().nth(1).expect("a move");
    assert_eq!(m1.len(), 4);
    assert!(pos.legal_moves().iter().any(|m| m.uci() == m1), "{m1}");
    assert_eq!(best[1].as_str(), "bestmove a3a4");
    // Every info line carries a score and a PV of legal length.
    assert!(lines.iter().any(|l| l.starts_with("info depth")));
    assert!(
        lines
            .iter()
            .any(|l| l.contains("UCI_Variant") && l.contains("chess")),
        "a bad variant is named in the error: {lines:?}"
    );
}

#[test]
fn jieqi_match_is_reproducible() {
    let engine = |name: &str, mode: ChanceMode| {
        Engine::Internal(EngineConfig {
            name: name.into(),
            eval: Arc::new(EvalParams::default()),
            search: SearchParams::default(),
            options: EngineOptions {
                chance_mode: mode,
                ..EngineOptions::default()
            },
            network: None,
        })
    };
    let a = engine("chance", ChanceMode::Search);
    let b = engine("static", ChanceMode::StaticAverage);
    let cfg = MatchConfig {
        games: 4,
        nodes: Some(300),
        concurrency: 2,
        seed: 11,
        max_plies: 40,
        hash_mb: 1,
        variant: Variant::Jieqi,
        ..Default::default()
    };
    let r1 = run_match_with_progress(&a, &b, &cfg, &|_| {}).expect("match runs");
    let r2 = run_match_with_progress(&a, &b, &cfg, &|_| {}).expect("match runs");
    assert_eq!(r1.games.len(), 4);
    for (x, y) in r1.games.iter().zip(&r2.games) {
        assert_eq!(x.moves, y.moves);
        assert_eq!(x.result, y.result);
        assert_eq!(x.opening_fen, y.opening_fen);
    }
    // A pair shares its deal with colours swapped; different pairs get different deals.
    assert_eq!(r1.games[0].opening_fen, r1.games[1].opening_fen);
    assert_ne!(r1.games[0].opening_fen, r1.games[2].opening_fen);
    assert!(r1.games.iter().all(|g| g.moves.len() > 1));
    // The record replays: the deal seed gives the FEN, the PGN carries it and the suffixes.
    let g = &r1.games[0];
    let seed = g.deal_seed.expect("deal seed recorded");
    assert_eq!(deal(seed).to_fen(), g.opening_fen);
    let text = xqtune::play::pgn::game_pgn(&Default::default(), g);
    assert!(text.contains(&format!("[DealSeed \"{seed}\"]")), "{text}");
    let first = xqtune::core::jieqi::format_move(g.moves[0], Color::Red);
    assert_eq!(first.len(), 5, "a dark first move carries its reveal");
    assert!(text.contains(&format!("1. {first}")), "{text}");
}

/// The trace's dot product equals the evaluation on Jieqi positions (dark pieces, pools).
#[test]
fn trace_dot_product_on_jieqi_positions() {
    let params = EvalParams::default();
    let values = params.to_vec();
    let mut n = 0;
    for seed in 0..6u64 {
        let mut arb = Arbiter::from_seed(seed, CaptureReveal::Capturer);
        let mut rng = ChaCha8Rng::seed_from_u64(seed + 100);
        for _ in 0..60 {
            if arb.outcome().is_some() {
                break;
            }
            for side in Color::ALL {
                let pos = arb.view(side);
                let tr = trace(pos, &params);
                let red = evaluate_red(pos, &params);
                assert_eq!(tr.dot(&values).round() as i32, red, "{}", pos.to_fen());
                n += 1;
            }
            let moves = arb.truth().legal_moves();
            let m = moves[rng.gen_range(0..moves.len())];
            arb.play(m).expect("legal");
        }
    }
    assert!(n > 200);
}
