//! Search behaviour: mates found at their exact distance (checked against a brute-force solver
//! on the rules core), legal moves from random positions, determinism, rulings in the tree,
//! search parameter files.

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::sync::Arc;
use xqtune::core::{Move, Position};
use xqtune::eval::EvalParams;
use xqtune::search::{
    MATE, SearchLimits, SearchParams, SearchResult, Searcher, Skill, mate_in, ruled_score,
};
use xqtune::tunable::ParamsError;

fn searcher() -> Searcher {
    Searcher::new(Arc::new(EvalParams::default()), SearchParams::default(), 4)
}

fn depth(d: u32) -> SearchLimits {
    SearchLimits {
        depth: Some(d),
        ..Default::default()
    }
}

/// Whether the side to move can force a win (opponent without a legal move: mate or
/// stalemate, both losses in Xiangqi) within `n` of its own moves. Plain minimax over the
/// rules core, independent of the engine.
fn wins_within(pos: &mut Position, n: u32) -> bool {
    if n == 0 {
        return false;
    }
    for &m in pos.legal_moves().iter() {
        pos.make_move(m);
        let replies = pos.legal_moves();
        let won = replies.is_empty()
            || (n > 1
                && replies.iter().all(|&r| {
                    pos.make_move(r);
                    let w = wins_within(pos, n - 1);
                    pos.unmake_move();
                    w
                }));
        pos.unmake_move();
        if won {
            return true;
        }
    }
    false
}

/// Searches `fen`, expects "mate in n" and a PV that ends with the loser to move and no legal
/// move; the brute-force solver confirms there is no shorter mate.
fn assert_mate_in(fen: &str, n: i32) {
    let mut pos = Position::from_fen(fen).expect("test FEN is valid");
    let mut s = searcher();
    let r = s.search(&pos, &depth(2 * n as u32 + 4), &mut |_| {});
    assert_eq!(
        mate_in(r.score),
        Some(n),
        "{fen}: score {} pv {:?}",
        r.score,
        r.pv
    );
    assert_eq!(r.pv.len() as i32, 2 * n - 1, "{fen}: pv {:?}", r.pv);
    assert_eq!(r.pv[0], r.best_move);
    let mover = pos.side_to_move();
    for &m in &r.pv {
        assert!(pos.legal_moves().contains(m), "{fen}: pv move {m} illegal");
        pos.make_move(m);
    }
    assert_ne!(pos.side_to_move(), mover);
    assert!(
        pos.legal_moves().is_empty(),
        "{fen}: pv does not end in mate"
    );
    let mut root = Position::from_fen(fen).unwrap();
    assert!(
        wins_within(&mut root, n as u32),
        "{fen}: solver finds no mate in {n}"
    );
    assert!(
        !wins_within(&mut root, n as u32 - 1),
        "{fen}: solver finds a shorter mate than {n}"
    );
}

#[test]
fn finds_mate_in_one() {
    // Rook lift along the d-file; the flying-general rule guards e9.
    assert_mate_in("3k5/R8/9/9/9/9/9/9/1R7/4K4 w - - 0 1", 1);
    assert_mate_in("3ak4/4a4/9/9/9/9/9/9/4R4/3K1R3 w - - 0 1", 1);
    // Stalemate wins in Xiangqi: the rook steps aside and black has no move.
    assert_mate_in("4ka3/4a4/4b4/9/9/9/9/4C4/4R4/3K5 w - - 0 1", 1);
}

#[test]
fn finds_mate_in_two() {
    assert_mate_in("4k4/9/9/9/9/9/9/9/1R7/R2K5 w - - 0 1", 2);
    assert_mate_in("3ak4/9/9/9/9/9/9/9/9/R2K1R3 w - - 0 1", 2);
    // Black to move mates too (colours mirrored).
    assert_mate_in("r2k1r3/9/9/9/9/9/9/9/9/3AK4 b - - 0 1", 2);
}

#[test]
fn finds_mate_in_three() {
    // A quiet first move (Rf0-g0) that a check-only search would miss.
    assert_mate_in("3k5/4a4/9/9/9/9/9/9/9/4KR3 w - - 0 1", 3);
}

#[test]
fn mated_side_reports_negative_mate() {
    // The mate-in-two position after red's first move: black is mated in one.
    let mut pos = Position::from_fen("4k4/9/9/9/9/9/9/9/1R7/R2K5 w - - 0 1").unwrap();
    let m = pos.parse_move("b1b8").unwrap();
    pos.make_move(m);
    let mut s = searcher();
    let r = s.search(&pos, &depth(6), &mut |_| {});
    assert_eq!(mate_in(r.score), Some(-1), "score {}", r.score);
    assert!(pos.legal_moves().contains(r.best_move));
}

#[test]
fn no_legal_move_returns_null_and_loss() {
    // Black is checkmated already.
    let pos = Position::from_fen("3k5/R8/9/9/9/9/9/9/9/3RK4 b - - 0 1").unwrap();
    assert!(pos.legal_moves().is_empty());
    let mut s = searcher();
    let r = s.search(&pos, &depth(5), &mut |_| {});
    assert!(r.best_move.is_null());
    assert!(r.score < -20_000);
}

#[test]
fn random_positions_give_legal_moves() {
    // Random playouts from the start; node-limited searches at many plies.
    let mut rng = ChaCha8Rng::seed_from_u64(7);
    let mut s = searcher();
    let mut searched = 0;
    for game in 0..12 {
        let mut pos = Position::startpos();
        let plies = rng.gen_range(0..120);
        for _ in 0..plies {
            let moves = pos.legal_moves();
            if moves.is_empty() {
                break;
            }
            let m = moves[rng.gen_range(0..moves.len())];
            pos.make_move(m);
        }
        for nodes in [1u64, 50, 700] {
            let moves = pos.legal_moves();
            let r = s.search(
                &pos,
                &SearchLimits {
                    nodes: Some(nodes),
                    ..Default::default()
                },
                &mut |_| {},
            );
            if moves.is_empty() {
                assert!(r.best_move.is_null(), "game {game}");
            } else {
                assert!(
                    moves.contains(r.best_move),
                    "game {game}: {:?} returned illegal {}",
                    pos,
                    r.best_move
                );
                searched += 1;
            }
            for &m in &r.pv {
                assert_ne!(m, Move::NULL);
            }
        }
    }
    assert!(searched > 20);
}

#[test]
fn node_limited_search_is_deterministic() {
    let pos = Position::startpos();
    let limits = SearchLimits {
        nodes: Some(30_000),
        ..Default::default()
    };
    let mut a = searcher();
    let ra = a.search(&pos, &limits, &mut |_| {});
    a.new_game();
    let rb = a.search(&pos, &limits, &mut |_| {});
    let mut c = searcher();
    let rc = c.search(&pos, &limits, &mut |_| {});
    assert_eq!(ra.best_move, rb.best_move);
    assert_eq!(ra.nodes, rb.nodes);
    assert_eq!(ra.best_move, rc.best_move);
    assert_eq!(ra.nodes, rc.nodes);
    assert_eq!(ra.nodes, 30_000);
}

#[test]
fn depth_limit_is_respected_and_reported() {
    let pos = Position::startpos();
    let mut s = searcher();
    let mut depths = Vec::new();
    let r = s.search(&pos, &depth(4), &mut |i| depths.push(i.depth));
    assert_eq!(depths, vec![1, 2, 3, 4]);
    assert_eq!(r.depth, 4);
}

#[test]
fn stop_flag_ends_an_infinite_search() {
    let pos = Position::startpos();
    let mut s = searcher();
    let r = infinite_search_stopped_after_200ms(&mut s, &pos);
    assert!(pos.legal_moves().contains(r.best_move));
}

/// An infinite search of `pos` that another thread stops through the stop flag after 200 ms.
fn infinite_search_stopped_after_200ms(s: &mut Searcher, pos: &Position) -> SearchResult {
    let stop = s.stop_handle();
    let t = std::thread::spawn(move || {
        std::thread::sleep(std::time::Duration::from_millis(200));
        stop.store(true, std::sync::atomic::Ordering::Relaxed);
    });
    let r = s.search(
        pos,
        &SearchLimits {
            infinite: true,
            ..Default::default()
        },
        &mut |_| {},
    );
    t.join().unwrap();
    r
}

fn play(fen: &str, moves: &str) -> Position {
    let mut pos = Position::from_fen(fen).unwrap();
    for m in moves.split_whitespace() {
        let mv = pos.parse_move(m).unwrap_or_else(|e| panic!("{m}: {e}"));
        pos.make_move(mv);
    }
    pos
}

#[test]
fn rulings_inside_the_tree() {
    let fen = "4k4/9/9/9/9/9/9/9/4A4/R2AK4 w - - 0 1";
    // Red checks on every move of the cycle: at the repetition, black (to move) has won.
    let perpetual = play(fen, "a0a9 e9e8 a9a8 e8e9 a8a9");
    assert_eq!(ruled_score(&perpetual, 5), Some(MATE - 5));
    // The same cycle seen from the checker's side (one ply later the roles are reversed).
    let checker = play(fen, "a0a9 e9e8 a9a8 e8e9 a8a9 e9e8");
    assert_eq!(ruled_score(&checker, 6), Some(-(MATE - 6)));
    // Quiet shuffles: a plain draw.
    let quiet = play(fen, "a0a1 e9e8 a1a0 e8e9");
    assert_eq!(ruled_score(&quiet, 4), Some(0));
    // No repetition yet.
    assert_eq!(ruled_score(&play(fen, "a0a1 e9e8"), 2), None);
    // Red's rook attacks the unprotected black cannon on every move (perpetual chase): at the
    // repetition red, to move, has lost; one ply later black, to move, has won.
    let chase = "4k4/9/9/1c7/9/9/R8/9/9/3K5 w - - 0 1";
    let chaser = play(chase, "a3b3 b6a6 b3a3 a6b6");
    assert_eq!(ruled_score(&chaser, 4), Some(-(MATE - 4)));
    let chased = play(chase, "a3b3 b6a6 b3a3 a6b6 a3b3");
    assert_eq!(ruled_score(&chased, 5), Some(MATE - 5));
    // 120 plies without capture.
    let limit = Position::from_fen("4k4/9/9/9/9/9/9/9/4A4/R2AK4 w - - 120 80").unwrap();
    assert_eq!(ruled_score(&limit, 3), Some(0));
    let below = Position::from_fen("4k4/9/9/9/9/9/9/9/4A4/R2AK4 w - - 119 80").unwrap();
    assert_eq!(ruled_score(&below, 3), None);
}

#[test]
fn search_avoids_losing_perpetual_check() {
    // Red to move, one rook up; a8a9+ would complete red's perpetual check and lose.
    let pos = play(
        "4k4/9/9/9/9/9/9/9/4A4/R2AK4 w - - 0 1",
        "a0a9 e9e8 a9a8 e8e9",
    );
    let mut s = searcher();
    let r = s.search(&pos, &depth(5), &mut |_| {});
    assert_ne!(r.best_move.to_string(), "a8a9");
    assert!(r.score > 0);
}

#[test]
fn skill_levels_cap_depth_and_time() {
    let l = SearchLimits {
        depth: Some(20),
        ..Default::default()
    };
    let easy = Skill::Easy.apply(&l);
    assert_eq!(easy.depth, Some(2));
    assert!(easy.movetime_ms.is_some());
    let expert = Skill::Expert.apply(&l);
    assert_eq!(expert.depth, Some(20));
    assert_eq!(expert.movetime_ms, None);
    let pos = Position::startpos();
    let mut s = searcher();
    let r = s.search(
        &pos,
        &Skill::Medium.apply(&SearchLimits::default()),
        &mut |_| {},
    );
    assert!(r.depth <= 4);
    for k in Skill::ALL {
        assert_eq!(Skill::parse(k.name()), Some(k));
    }
    assert_eq!(Skill::parse("grandmaster"), None);
}

/// ProbCut is tried only from `probcut_min_depth` on, and where it is tried, a capture that
/// holds the raised bar cuts the node: the middlegames of the bench try it and cut with it at
/// depth 9 from minimum depth 5, none tries it when its minimum depth is above the search's or
/// 0 (off, the default), and the search without it is a different tree.
#[test]
fn probcut_is_tried_from_its_minimum_depth_and_cuts() {
    let run = |params: SearchParams| {
        let mut s = Searcher::new(Arc::new(EvalParams::default()), params, 4);
        let mut tries = 0;
        let mut cuts = 0;
        let mut nodes = 0;
        let positions = xqtune::bench::bench_positions().unwrap();
        for pos in positions.iter().skip(8).take(6) {
            if pos.variant() != xqtune::core::Variant::Xiangqi {
                continue;
            }
            s.new_game();
            let r = s.search(pos, &depth(9), &mut |_| {});
            nodes += r.nodes;
            tries += s.tree_stats().probcut_tries;
            cuts += s.tree_stats().probcut_cuts;
        }
        (tries, cuts, nodes)
    };
    let from = |d: i32| SearchParams {
        probcut_min_depth: d,
        ..SearchParams::default()
    };
    let (tries, cuts, nodes) = run(from(5));
    assert!(
        tries > 0 && cuts > 0 && cuts <= tries,
        "{tries} tries, {cuts} cuts"
    );
    let (tries_above, cuts_above, nodes_above) = run(from(12));
    assert_eq!((tries_above, cuts_above), (0, 0));
    assert_ne!(nodes, nodes_above);
    let (tries_off, cuts_off, nodes_off) = run(SearchParams::default());
    assert_eq!((tries_off, cuts_off, nodes_off), (0, 0, nodes_above));
}

/// Switches that are off by default, `tt_eval` (the table's score as the node's evaluation for
/// its pruning rules), `cont_prune_max_depth` (quiet moves with a bad continuation history
/// pruned), `order_check_bonus` (quiet direct checks ordered first), `history_from_to` (the
/// quiet history indexed by origin and destination) and the three further teachers of the
/// quiet history (`history_tt_cut`, `history_prior`, `history_eval_diff`), the two rules of
/// the re-search after a reduction (`lmr_deeper_margin`, `lmr_research_history`), the deeper
/// internal reduction of principal nodes (`iir_pv_reduction`), the larger bonus of a cut-off
/// far above beta (`history_beta_margin`), the shallower root after an aspiration fail high
/// (`aspiration_high_reduce`), the shallower principal node whose table entry is shallow
/// (`pv_tt_depth_divisor`), and one that is on,
/// `futility_history_divisor` (futility by the reduced depth and the move's history; 0 turns it
/// off): each switched away from its default searches a different tree on the bench's
/// middlegames, the same one again on a second run, and still finds the mate in three whose
/// first move is quiet at its exact distance; at their defaults they leave the default tree
/// alone.
#[test]
fn off_by_default_switches_turn_on_and_off() {
    let run = |params: SearchParams| {
        let mut s = Searcher::new(Arc::new(EvalParams::default()), params, 4);
        let positions = xqtune::bench::bench_positions().unwrap();
        let mut nodes = 0;
        let mut moves = Vec::new();
        for pos in positions.iter().skip(8).take(6) {
            s.new_game();
            let r = s.search(pos, &depth(8), &mut |_| {});
            assert!(pos.legal_moves().contains(r.best_move), "{pos:?}");
            nodes += r.nodes;
            moves.push(r.best_move);
        }
        let mate = Position::from_fen("3k5/4a4/9/9/9/9/9/9/9/4KR3 w - - 0 1").unwrap();
        s.new_game();
        let r = s.search(&mate, &depth(10), &mut |_| {});
        assert_eq!(mate_in(r.score), Some(3), "{params:?}");
        (nodes, moves)
    };
    let off = run(SearchParams::default());
    let explicit_off = run(SearchParams {
        tt_eval: 0,
        cont_prune_max_depth: 0,
        order_check_bonus: 0,
        history_from_to: 0,
        futility_history_divisor: 100,
        history_tt_cut: 0,
        history_prior: 0,
        history_eval_diff: 0,
        lmr_deeper_margin: 0,
        lmr_research_history: 0,
        iir_pv_reduction: 1,
        history_beta_margin: 0,
        aspiration_high_reduce: 0,
        pv_tt_depth_divisor: 0,
        rfp_tt_pv: 0,
        lmr_tt_pv_base: 0,
        lmr_tt_pv_scale: 0,
        lmr_pv_base: 0,
        lmr_pv_scale: 0,
        lmr_cut_base: 0,
        lmr_cut_scale: 0,
        ..SearchParams::default()
    });
    assert_eq!(off, explicit_off);
    for on in [
        SearchParams {
            tt_eval: 1,
            ..SearchParams::default()
        },
        SearchParams {
            cont_prune_max_depth: 8,
            cont_prune_margin: 100,
            ..SearchParams::default()
        },
        SearchParams {
            order_check_bonus: 16000,
            ..SearchParams::default()
        },
        SearchParams {
            history_from_to: 1,
            ..SearchParams::default()
        },
        SearchParams {
            futility_history_divisor: 0,
            ..SearchParams::default()
        },
        SearchParams {
            history_tt_cut: 1,
            ..SearchParams::default()
        },
        SearchParams {
            history_prior: 1,
            ..SearchParams::default()
        },
        SearchParams {
            history_eval_diff: 32,
            ..SearchParams::default()
        },
        SearchParams {
            lmr_deeper_margin: 35,
            ..SearchParams::default()
        },
        SearchParams {
            lmr_research_history: 1,
            ..SearchParams::default()
        },
        SearchParams {
            iir_pv_reduction: 3,
            ..SearchParams::default()
        },
        SearchParams {
            history_beta_margin: 100,
            ..SearchParams::default()
        },
        SearchParams {
            aspiration_high_reduce: 1,
            ..SearchParams::default()
        },
        SearchParams {
            pv_tt_depth_divisor: 2,
            ..SearchParams::default()
        },
        SearchParams {
            rfp_tt_pv: 1,
            ..SearchParams::default()
        },
        SearchParams {
            lmr_tt_pv_base: 1,
            ..SearchParams::default()
        },
        SearchParams {
            lmr_tt_pv_scale: 22,
            ..SearchParams::default()
        },
        SearchParams {
            lmr_pv_base: 1,
            ..SearchParams::default()
        },
        SearchParams {
            lmr_pv_scale: 16,
            ..SearchParams::default()
        },
        SearchParams {
            lmr_cut_base: 2,
            ..SearchParams::default()
        },
        SearchParams {
            lmr_cut_scale: 20,
            ..SearchParams::default()
        },
    ] {
        let first = run(on);
        assert_ne!(first.0, off.0, "{on:?} searched the default tree");
        assert_eq!(run(on), first);
    }
}

/// The deepest internal reduction the bounds allow (`iir_pv_reduction` 4 from
/// `iir_min_depth` 2) leaves a principal node at least one ply: the bench's middlegames search
/// to depth 7 with legal best moves, and the mate in three is still found at its distance.
#[test]
fn deepest_internal_reduction_keeps_a_ply() {
    let params = SearchParams {
        iir_min_depth: 2,
        iir_pv_reduction: 4,
        ..SearchParams::default()
    };
    let mut s = Searcher::new(Arc::new(EvalParams::default()), params, 4);
    for pos in xqtune::bench::bench_positions()
        .unwrap()
        .iter()
        .skip(8)
        .take(4)
    {
        s.new_game();
        let r = s.search(pos, &depth(7), &mut |_| {});
        assert!(pos.legal_moves().contains(r.best_move), "{pos:?}");
    }
    let mate = Position::from_fen("3k5/4a4/9/9/9/9/9/9/9/4KR3 w - - 0 1").unwrap();
    s.new_game();
    let r = s.search(&mate, &depth(10), &mut |_| {});
    assert_eq!(mate_in(r.score), Some(3));
}

/// `qs_checks` searches quiet checks at the first ply of quiescence. Red to move (king d0,
/// advisor f2, a pawn that can take a horse); black threatens Ra4-d4, a quiet move that mates
/// (d1 is on the rook's file, e0 faces black's king). Only Af2-e1 holds (it blocks the file of
/// the kings and frees e0). A depth-1 search sees black's replies only in quiescence: with the
/// checks it finds the threat and defends; without them (the default) quiescence sees captures
/// only, no quiet check is counted, and it takes the horse into the mate.
#[test]
fn quiescence_checks_see_a_quiet_mate_threat() {
    let fen = "4k4/9/9/2n6/2P6/r8/9/5A3/9/3K5 w - - 0 1";
    let run = |qs_checks: i32| {
        let params = SearchParams {
            qs_checks,
            ..SearchParams::default()
        };
        let mut s = Searcher::new(Arc::new(EvalParams::default()), params, 4);
        let pos = Position::from_fen(fen).unwrap();
        let r = s.search(&pos, &depth(1), &mut |_| {});
        let mut after = pos.clone();
        after.make_move(r.best_move);
        (wins_within(&mut after, 1), s.tree_stats().qs_checks, r)
    };
    let (mated, checks, r) = run(1);
    assert!(!mated, "with quiescence checks {r:?} allows the mate");
    assert_eq!(r.best_move.to_string(), "f2e1");
    assert!(checks > 0);
    assert!(r.score > -MATE / 2, "{r:?}");
    let (mated, checks, r) = run(0);
    assert_eq!(checks, 0);
    assert!(
        mated,
        "without quiescence checks {r:?} was expected to miss the threat"
    );
}

/// `shuffle_divisor` damps the evaluation as the no-capture counter runs on: off (0, the
/// default) the counter changes nothing; at 200, red a rook up scores about half as much with
/// 100 plies on the counter as with none (the search does not reach the draw by the limit
/// within these depths, so the damping alone moves the score).
#[test]
fn shuffle_divisor_damps_the_evaluation_by_the_no_capture_counter() {
    let score = |counter: u32, divisor: i32| {
        let params = SearchParams {
            shuffle_divisor: divisor,
            ..SearchParams::default()
        };
        let mut s = Searcher::new(Arc::new(EvalParams::default()), params, 4);
        // one advisor short of the full defence: a rook up wins (no endgame scale-down)
        let fen = format!("2b1k1b2/4a4/9/9/9/9/9/9/9/R2K5 w - - {counter} 80");
        let pos = Position::from_fen(&fen).unwrap();
        s.search(&pos, &depth(4), &mut |_| {}).score
    };
    let undamped = score(0, 0);
    assert!(undamped > 300, "a rook up scores {undamped}");
    assert_eq!(score(100, 0), undamped);
    let fresh = score(0, 200);
    let late = score(100, 200);
    assert!(
        (undamped * 9 / 10..=undamped).contains(&fresh),
        "{fresh} against {undamped}"
    );
    assert!(
        (fresh * 4 / 10..=fresh * 6 / 10).contains(&late),
        "{late} against {fresh}"
    );
}

#[test]
fn search_params_round_trip_and_bounds() {
    let p = SearchParams::default();
    let v = p.to_vec();
    assert_eq!(v.len(), SearchParams::NAMES.len());
    assert_eq!(p.specs().len(), v.len());
    assert_eq!(p.from_vec(&v), p);
    let reparsed = SearchParams::from_json(&p.to_json_string()).unwrap();
    assert_eq!(reparsed, p);
    // from_vec clamps to the bounds.
    let big: Vec<i32> = vec![i32::MAX; v.len()];
    let q = p.from_vec(&big);
    for (s, x) in p.specs().iter().zip(q.to_vec()) {
        assert_eq!(x, s.max, "{}", s.name);
    }
    for s in p.specs() {
        assert!(
            s.min <= s.value && s.value <= s.max && s.step > 0,
            "{}",
            s.name
        );
    }
}

#[test]
fn search_params_errors_name_the_key() {
    let good = SearchParams::default().to_json_string();
    let cases: Vec<(String, &str)> = vec![
        ("{ not json".into(), "not valid JSON"),
        ("[1, 2]".into(), "JSON object"),
        (
            good.replacen(
                '{',
                "{\n  \"bogus\": {\"v\": 1, \"min\": 0, \"max\": 2, \"step\": 1},",
                1,
            ),
            "bogus",
        ),
        (
            good.replace("\"rfp_margin\": {\"v\": 90", "\"rfp_margin\": {\"v\": 9000"),
            "rfp_margin",
        ),
        (
            good.replace("\"lmr_base\": {\"v\": 75", "\"lmr_base\": {\"v\": 7.5"),
            "lmr_base",
        ),
    ];
    for (text, needle) in cases {
        let e = SearchParams::from_json(&text).expect_err(needle);
        assert!(
            e.to_string().contains(needle),
            "'{e}' does not name {needle}"
        );
    }
    // A key that is present must be whole: its value, bounds and step.
    let mut obj: serde_json::Map<String, serde_json::Value> = serde_json::from_str(&good).unwrap();
    obj.insert("nmp_min_depth".into(), serde_json::json!({"v": 3}));
    let e = SearchParams::from_json(&serde_json::to_string(&obj).unwrap()).unwrap_err();
    assert!(
        matches!(e, ParamsError::MissingKey(ref k) if k == "nmp_min_depth.min"),
        "{e}"
    );
    // A missing file.
    let e = SearchParams::load(std::path::Path::new("/nonexistent/search.json")).unwrap_err();
    assert!(e.to_string().contains("/nonexistent/search.json"));
}

/// A search params file may name only some constants (a file written before a constant was
/// added, or one that changes a few): the others keep their declared defaults.
#[test]
fn search_params_file_may_leave_constants_out() {
    let p =
        SearchParams::from_json(r#"{"nmp_min_depth": {"v": 5, "min": 1, "max": 8, "step": 1}}"#)
            .unwrap();
    let expected = SearchParams {
        nmp_min_depth: 5,
        ..SearchParams::default()
    };
    assert_eq!(p, expected);
    assert_eq!(
        SearchParams::from_json("{}").unwrap(),
        SearchParams::default()
    );
    let mut obj: serde_json::Map<String, serde_json::Value> =
        serde_json::from_str(&SearchParams::default().to_json_string()).unwrap();
    obj.remove("cont_prune_margin");
    obj.remove("tm_horizon");
    obj["tm_soft_percent"]["v"] = serde_json::json!(70);
    let older = SearchParams::from_json(&serde_json::to_string(&obj).unwrap()).unwrap();
    let expected = SearchParams {
        tm_soft_percent: 70,
        ..SearchParams::default()
    };
    assert_eq!(older, expected);
}

/// The clock bounds the search, by its own account: the `time` of each iteration it reports
/// (how long the call takes on the wall clock is checked in `timing.rs`).
#[test]
fn clock_limited_search_stays_inside_the_clock() {
    let pos = Position::startpos();
    let mut s = searcher();
    let clock_ms = 300;
    let mut times = Vec::new();
    let r = s.search(
        &pos,
        &SearchLimits {
            time_ms: Some(clock_ms),
            inc_ms: Some(0),
            ..Default::default()
        },
        &mut |i| times.push(i.time_ms),
    );
    // The hard limit is at most 80% of the clock, read every few thousand nodes; without it
    // the search would go on for seconds.
    assert!(!times.is_empty());
    assert!(times.iter().all(|&t| t < clock_ms), "{times:?}");
    assert!(pos.legal_moves().contains(r.best_move));
}

/// Lazy SMP: two threads stop on the summed node count, and every thread did part of it.
#[test]
fn two_threads_share_a_node_limit() {
    let pos = Position::startpos();
    let mut s = searcher();
    s.set_threads(2);
    assert_eq!(s.threads(), 2);
    let n = 200_000;
    let mut infos = Vec::new();
    let r = s.search(
        &pos,
        &SearchLimits {
            nodes: Some(n),
            ..Default::default()
        },
        &mut |i| infos.push(i.nodes),
    );
    assert!(pos.legal_moves().contains(r.best_move));
    let per_thread = s.thread_nodes();
    assert_eq!(per_thread.len(), 2);
    assert!(per_thread.iter().all(|&t| t > 0), "{per_thread:?}");
    assert_eq!(per_thread.iter().sum::<u64>(), r.nodes);
    // Each thread reads the total every PUBLISH_INTERVAL nodes, so it stops within a few
    // intervals of the limit; without the sum each would search the full limit.
    let slack = 4 * xqtune::search::smp::PUBLISH_INTERVAL * 2;
    assert!(r.nodes >= n && r.nodes <= n + slack, "{} nodes", r.nodes);
    assert!(infos.iter().all(|&i| i <= n + slack), "{infos:?}");
    assert_eq!(s.nodes(), r.nodes);
}

/// The summary of a node-limited search that determinism compares: move, nodes and every
/// iteration's depth, score and PV.
fn node_search_signature(s: &mut Searcher, pos: &Position) -> (Move, u64, Vec<String>) {
    let mut lines = Vec::new();
    let r = s.search(
        pos,
        &SearchLimits {
            nodes: Some(30_000),
            ..Default::default()
        },
        &mut |i| lines.push(format!("{} {} {:?} {}", i.depth, i.score, i.pv, i.nodes)),
    );
    (r.best_move, r.nodes, lines)
}

#[test]
fn back_to_one_thread_the_search_is_deterministic_again() {
    let pos = play(
        "rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C5C1/9/RNBAKABNR w - - 0 1",
        "b2e2 b9c7",
    );
    let mut fresh = searcher();
    let want = node_search_signature(&mut fresh, &pos);
    let mut s = searcher();
    s.set_threads(3);
    s.search(&pos, &depth(6), &mut |_| {});
    s.set_threads(1);
    s.new_game();
    assert_eq!(node_search_signature(&mut s, &pos), want);
    // And with the helpers' history in place: new_game clears that too.
    s.set_threads(2);
    s.search(&pos, &depth(6), &mut |_| {});
    s.new_game();
    s.set_threads(1);
    assert_eq!(node_search_signature(&mut s, &pos), want);
}

#[test]
fn two_threads_find_a_mate_and_honour_stop_and_movetime() {
    let pos = Position::from_fen("4k4/9/9/9/9/9/9/9/1R7/R2K5 w - - 0 1").unwrap();
    let mut s = searcher();
    s.set_threads(2);
    let r = s.search(&pos, &depth(6), &mut |_| {});
    assert_eq!(mate_in(r.score), Some(2), "{r:?}");

    // Both searches return only once the helper is joined, so returning at all shows that
    // movetime and stop end both threads; the main thread's own clock shows the movetime
    // ending the iterations. (How long each call takes on the wall clock: `timing.rs`.)
    let pos = Position::startpos();
    let mut times = Vec::new();
    let r = s.search(
        &pos,
        &SearchLimits {
            movetime_ms: Some(300),
            ..Default::default()
        },
        &mut |i| times.push(i.time_ms),
    );
    assert!(pos.legal_moves().contains(r.best_move));
    assert!(times.iter().all(|&t| t < 2 * 300), "{times:?}");

    let r = infinite_search_stopped_after_200ms(&mut s, &pos);
    assert!(pos.legal_moves().contains(r.best_move));
    assert!(s.thread_nodes().iter().all(|&n| n > 0));
}
