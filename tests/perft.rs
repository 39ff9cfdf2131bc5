//! Perft against the reference counts in `tests/data/xiangqi.epd` (a copy of the project's shared
//! perft suite), and perft through the incremental paths (`perft_checked`).

mod common;

use common::perft_cases;
use xqtune::core::{Position, perft};

/// Counts above this many nodes run only in the ignored test (`cargo test -- --ignored`).
const CI_NODE_LIMIT: u64 = 5_000_000;

fn check(limit: impl Fn(u64) -> bool) -> usize {
    let mut checked = 0;
    for case in perft_cases() {
        let mut pos = Position::from_fen(&case.fen)
            .unwrap_or_else(|e| panic!("{}: FEN refused: {e}", case.id));
        for &(depth, expected) in &case.counts {
            if !limit(expected) {
                continue;
            }
            let got = perft::perft(&mut pos, depth);
            assert_eq!(got, expected, "{} depth {depth}", case.id);
            assert_eq!(
                pos.to_fen(),
                case.fen,
                "{}: perft changed the position",
                case.id
            );
            checked += 1;
        }
    }
    checked
}

#[test]
fn every_position_is_tested_at_depth_four_or_more() {
    for case in perft_cases() {
        let deepest_in_ci = case
            .counts
            .iter()
            .filter(|&&(_, n)| n <= CI_NODE_LIMIT)
            .map(|&(d, _)| d)
            .max()
            .unwrap_or(0);
        assert!(
            deepest_in_ci >= 4,
            "{}: deepest depth tested in CI is {deepest_in_ci}",
            case.id
        );
    }
}

#[test]
fn perft_reference_counts() {
    let n = check(|nodes| nodes <= CI_NODE_LIMIT);
    assert!(n >= 25, "only {n} counts checked");
}

#[test]
#[ignore = "deep perft: hundreds of millions of nodes, run with --ignored --release"]
fn perft_reference_counts_deep() {
    let n = check(|nodes| nodes > CI_NODE_LIMIT);
    assert!(n > 0);
}

#[test]
fn divide_sums_to_perft() {
    let mut pos = Position::startpos();
    let parts = perft::divide(&mut pos, 3);
    assert_eq!(parts.len(), 44);
    assert_eq!(parts.iter().map(|&(_, n)| n).sum::<u64>(), 79666);
    // Every root move of the divide is a distinct legal move.
    let legal = pos.legal_moves();
    for (m, _) in &parts {
        assert!(legal.contains(*m));
    }
}

/// The incremental key, bitboards and check flag equal a full recompute at every node, and
/// unmake restores the exact FEN and key (viridithas runs perft through every incremental path).
#[test]
fn incremental_state_matches_recompute_at_every_node() {
    for case in perft_cases() {
        let mut pos = Position::from_fen(&case.fen).expect("valid FEN");
        let depth = 3;
        let expected = case
            .counts
            .iter()
            .find(|&&(d, _)| d == depth)
            .map(|&(_, n)| n);
        let got =
            perft::perft_checked(&mut pos, depth).unwrap_or_else(|e| panic!("{}: {e}", case.id));
        if let Some(expected) = expected {
            assert_eq!(got, expected, "{} depth {depth}", case.id);
        }
        assert_eq!(got, perft::perft(&mut pos, depth), "{}", case.id);
    }
}

/// Perft after a few plies, so that the checked perft also sees positions with captures done.
#[test]
fn checked_perft_from_played_positions() {
    let mut pos = Position::startpos();
    for mv in ["h2e2", "h9g7", "e2e6", "i9h9", "b0c2", "g7e6"] {
        let m = pos.parse_move(mv).expect("legal move");
        pos.make_move(m);
    }
    let fast = perft::perft(&mut pos, 3);
    let checked = perft::perft_checked(&mut pos, 3).expect("incremental state");
    assert_eq!(fast, checked);
}
