//! The teachers of the quiet history beside the cut-off's own update (`history_tt_cut`,
//! `history_prior`, `history_eval_diff`): which move each teaches, by how much and which way;
//! the larger bonus of a cut-off far above beta (`history_beta_margin`) and the depth of the
//! re-search after a reduction (`lmr_deeper_margin`).

use super::ordering::{NO_CONT, cont_row, history_bonus, piece_code};
use super::{SearchParams, Searcher, cut_bonus_depth, eval_diff_bonus, research_depth};
use crate::core::{Move, Position};
use crate::eval::EvalParams;
use std::sync::Arc;

const START: &str = "rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C5C1/9/RNBAKABNR w - - 0 1";

fn searcher() -> Searcher {
    Searcher::new(Arc::new(EvalParams::default()), SearchParams::default(), 1)
}

/// Plays `text` at `ply` as the search does: its continuation row first, then the move.
fn play(s: &mut Searcher, pos: &mut Position, ply: usize, text: &str) -> (Move, u8, usize) {
    let m = pos.parse_move(text).unwrap();
    let code = piece_code(pos, m.from().index());
    s.cont_stack[ply] = cont_row(code, m.to().index());
    s.make(pos, m);
    (m, code, cont_row(code, m.to().index()))
}

#[test]
fn eval_diff_bonus_follows_the_movers_gain_within_its_bound() {
    let p = SearchParams {
        history_eval_diff: 32,
        ..SearchParams::default()
    };
    // Its side stood at +50 before the move and we stand at −80 after it: it gained 30.
    assert_eq!(eval_diff_bonus(&p, 50, -80), 960);
    // It lost 30.
    assert_eq!(eval_diff_bonus(&p, 50, -20), -960);
    assert_eq!(eval_diff_bonus(&p, 50, -50), 0);
    let cap = p.history_max / 4;
    assert_eq!(eval_diff_bonus(&p, 0, -1000), cap);
    assert_eq!(eval_diff_bonus(&p, 0, 1000), -cap);
    // Off by default.
    assert_eq!(eval_diff_bonus(&SearchParams::default(), 0, -1000), 0);
}

/// The prior move is the opponent's quiet move made by the search; not a capture, a null
/// move, a move made before the search (no continuation row), nor anything at the root.
#[test]
fn the_prior_move_is_the_searchs_quiet_move() {
    let mut s = searcher();
    let mut pos = Position::from_fen(START).unwrap();
    assert_eq!(s.prior_quiet(&pos, 0), None);
    let (m, code, _) = play(&mut s, &mut pos, 0, "h2e2");
    let quiet = Some((code, m.from().index(), m.to().index()));
    assert_eq!(s.prior_quiet(&pos, 1), quiet);
    s.cont_stack[0] = NO_CONT;
    assert_eq!(s.prior_quiet(&pos, 1), None);
    play(&mut s, &mut pos, 1, "b7b0");
    assert_eq!(s.prior_quiet(&pos, 2), None, "a capture");
    s.unmake(&mut pos);
    s.cont_stack[1] = NO_CONT;
    s.make_null(&mut pos);
    assert_eq!(s.prior_quiet(&pos, 2), None, "a null move");
}

/// `update_prior_cont` moves the continuation histories of the opponent's quiet move in the
/// contexts it was played in, and nothing where there is no prior quiet move.
#[test]
fn the_prior_moves_continuation_is_taught() {
    let mut s = searcher();
    let mut pos = Position::from_fen(START).unwrap();
    let (_, _, red_row) = play(&mut s, &mut pos, 0, "h2e2");
    let (m, code, _) = play(&mut s, &mut pos, 1, "h9g7");
    let ctx = [red_row, NO_CONT];
    assert_eq!(s.heur.cont_score(ctx, code, m.to().index()), 0);
    s.update_prior_cont(&pos, 2, 500);
    assert_eq!(s.heur.cont_score(ctx, code, m.to().index()), 500);
    s.update_prior_cont(&pos, 2, -500);
    assert!(s.heur.cont_score(ctx, code, m.to().index()) < 0);
    // After a capture nothing is taught.
    s.unmake(&mut pos);
    let before = s.heur.cont_score(ctx, code, m.to().index());
    play(&mut s, &mut pos, 1, "b7b0");
    s.update_prior_cont(&pos, 2, 500);
    assert_eq!(s.heur.cont_score(ctx, code, m.to().index()), before);
}

/// A table cut-off with a quiet move teaches it as a cut-off teaches its move (killer,
/// history, both continuations) and punishes the opponent's early move it refuted; a table
/// fail-low punishes it; a capture, or a move of the opponent's piece (a key collision),
/// teaches nothing.
#[test]
fn table_cut_offs_teach_their_quiet_move() {
    let mut s = searcher();
    let mut pos = Position::from_fen(START).unwrap();
    let (_, _, red_row) = play(&mut s, &mut pos, 0, "h2e2");
    let (bm, bcode, black_row) = play(&mut s, &mut pos, 1, "h9g7");
    let p = s.params;
    let depth = 5;
    let bonus = history_bonus(&p, depth);
    assert_eq!(bonus, 400);
    let m = pos.parse_move("h0g2").unwrap();
    let code = piece_code(&pos, m.from().index());
    let (from, to) = (m.from().index(), m.to().index());
    let ctx = s.ctx_at(2);
    assert_eq!(ctx, [black_row, red_row]);

    s.early[1] = true;
    s.tt_cut_history(&pos, m, true, depth, 2);
    assert_eq!(s.heur.killers[2][0], m);
    assert_eq!(s.heur.history(code, from, to), bonus);
    assert_eq!(s.heur.cont_score(ctx, code, to), 2 * bonus);
    let refuted = s
        .heur
        .cont_score([red_row, NO_CONT], bcode, bm.to().index());
    assert_eq!(refuted, -history_bonus(&p, depth + 1));

    let mut fresh = searcher();
    fresh.cont_stack = s.cont_stack;
    fresh.tt_cut_history(&pos, m, false, depth, 2);
    assert_eq!(fresh.heur.history(code, from, to), -bonus);
    assert_eq!(fresh.heur.cont_score(ctx, code, to), -2 * bonus);
    assert_eq!(fresh.heur.killers[2][0], Move::NULL);

    let mut quiet = searcher();
    quiet.cont_stack = s.cont_stack;
    for text in ["b2b9", "g7e8"] {
        let m = pos.parse_move(text).or_else(|_| {
            // The opponent's move is not legal here: build it from its squares.
            let mut other = pos.clone();
            other.make_null();
            other.parse_move(text)
        });
        let m = m.unwrap();
        quiet.tt_cut_history(&pos, m, true, depth, 2);
        assert_eq!(quiet.heur.killers[2][0], Move::NULL, "{text}");
        let c = piece_code(&pos, m.from().index());
        assert_eq!(quiet.heur.history(c, m.from().index(), m.to().index()), 0);
    }
}

#[test]
fn cut_bonus_depth_adds_a_ply_only_above_the_margin() {
    let p = SearchParams {
        history_beta_margin: 100,
        ..SearchParams::default()
    };
    assert_eq!(cut_bonus_depth(&p, 7, 201, 100), 8);
    assert_eq!(cut_bonus_depth(&p, 7, 200, 100), 7);
    assert_eq!(cut_bonus_depth(&p, 7, 100, 100), 7);
    // Off by default, however far above beta.
    assert_eq!(cut_bonus_depth(&SearchParams::default(), 7, 30_000, 0), 7);
}

#[test]
fn research_depth_goes_deeper_far_above_alpha_and_shallower_near_the_best() {
    let p = SearchParams {
        lmr_deeper_margin: 35,
        ..SearchParams::default()
    };
    // Reduced by 2 plies from 9: deeper needs more than alpha + 35 + 8.
    assert_eq!(research_depth(&p, 9, 2, 144, 100, 0), 10);
    assert_eq!(research_depth(&p, 9, 2, 143, 100, 0), 9);
    // Shallower where the score beat the best so far by less than 9 (a ply of 9 each).
    assert_eq!(research_depth(&p, 9, 2, 101, 100, 93), 8);
    assert_eq!(research_depth(&p, 9, 2, 101, 100, 92), 9);
    // Both at once cancel.
    assert_eq!(research_depth(&p, 9, 2, 150, 100, 145), 9);
    // Off by default.
    assert_eq!(
        research_depth(&SearchParams::default(), 9, 2, 30_000, 100, 99),
        9
    );
}
