//! The search with a network: the lazily updated accumulators give, at every node the search
//! evaluates, the value a fresh accumulator gives (the test hook [`NnueCheck`] compares the two
//! at each evaluation), through captures, null moves, singular and verification searches and
//! king moves that rebuild a king-bucketed perspective; node-limited searches repeat exactly;
//! helper threads and Jieqi positions run beside it.

use super::{NnueCheck, SearchLimits, SearchParams, SearchResult, Searcher};
use crate::core::{Position, Variant};
use crate::eval::EvalParams;
use crate::eval::nnue::{Activation, Architecture, FeatureSetId, Network};
use std::sync::Arc;

/// Middlegames and endgames with captures on the board (from the bench), and the start.
const FENS: &[&str] = &[
    "rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C5C1/9/RNBAKABNR w - - 0 1",
    "2bak4/4a2c1/4b4/pC1N4p/5Nn2/2P2nB1P/P8/3A5/9/2BAK4 w - - 0 1",
    "C2k1ab2/2P1a4/3rcRn2/p7p/7n1/4C4/1r2P1p1P/2R1B1N2/4A4/1cBAK4 b - - 0 1",
    "1r2kab2/4a4/2n1b3n/p1p2N2p/4R4/2P2p3/Pccr4P/C1N1C3B/4A4/1RB1KA3 w - - 0 1",
    "1c3k3/4a1c2/3a5/3P1C3/4N4/2B6/9/5p3/4K4/9 w - - 0 1",
    "3ak1b2/4a4/4b4/p8/9/P2R5/6p2/1r7/4A4/4K1B2 w - - 0 1",
];

fn searcher(net: Option<Arc<Network>>) -> Searcher {
    Searcher::new(Arc::new(EvalParams::default()), SearchParams::default(), 4).with_network(net)
}

fn nodes(n: u64) -> SearchLimits {
    SearchLimits {
        nodes: Some(n),
        ..Default::default()
    }
}

fn search(s: &mut Searcher, pos: &Position, limits: &SearchLimits) -> SearchResult {
    s.search(pos, limits, &mut |_| {})
}

/// Searches every position with the hook on; returns what it saw in total.
fn checked_searches(net: Network, limit: u64) -> NnueCheck {
    let net = Arc::new(net);
    let mut total = NnueCheck::default();
    for fen in FENS {
        let pos = Position::from_fen(fen).unwrap();
        let mut s = searcher(Some(net.clone()));
        s.nnue_check = Some(NnueCheck::default());
        let r = search(&mut s, &pos, &nodes(limit));
        assert!(pos.is_legal(r.best_move), "{fen}: {}", r.best_move);
        let c = s.nnue_check.unwrap();
        assert!(
            c.evals > limit / 10,
            "{fen}: only {} evaluations checked",
            c.evals
        );
        total.evals += c.evals;
        total.null_moves += c.null_moves;
        total.captures += c.captures;
        // Every make was taken back: the stack is at the root again.
        assert_eq!(s.nnue.as_ref().unwrap().stack.depth(), 0, "{fen}");
    }
    assert!(total.null_moves > 20, "{total:?}");
    assert!(total.captures > 1000, "{total:?}");
    total
}

#[test]
fn lazy_network_values_equal_fresh_ones_during_search() {
    checked_searches(Network::random(1, 64, 8, Activation::SCReLU), 40_000);
}

/// A king move changes a king-bucketed perspective's bucket: the stack rebuilds it.
#[test]
fn lazy_values_hold_with_king_buckets_and_crelu() {
    let arch = Architecture::new(FeatureSetId::XiangqiKingBuckets, 64, 4, Activation::CReLU);
    checked_searches(Network::random_with(7, arch), 30_000);
}

/// Without a network the hook sees nothing (the classical evaluation runs), and a network
/// changes the search.
#[test]
fn the_network_is_what_evaluates() {
    let pos = Position::startpos();
    let mut classical = searcher(None);
    classical.nnue_check = Some(NnueCheck::default());
    let a = search(&mut classical, &pos, &nodes(20_000));
    assert_eq!(classical.nnue_check.unwrap().evals, 0);
    let net = Arc::new(Network::random(2, 64, 8, Activation::SCReLU));
    let mut s = searcher(Some(net));
    let b = search(&mut s, &pos, &nodes(20_000));
    assert!(
        (a.best_move, a.score) != (b.best_move, b.score),
        "{a:?} {b:?}"
    );
    // Back to classical: the same search as the classical searcher's.
    s.set_network(None);
    s.new_game();
    assert!(s.network().is_none());
    let c = search(&mut s, &pos, &nodes(20_000));
    assert_eq!(
        (a.nodes, a.best_move, a.score),
        (c.nodes, c.best_move, c.score)
    );
}

/// `go nodes N` with a network repeats exactly after `new_game`, also after a search on two
/// threads (the helpers' accumulators are their own, and one thread is single-threaded again).
#[test]
fn node_limited_network_search_is_deterministic() {
    let net = Arc::new(Network::random(3, 128, 8, Activation::SCReLU));
    let pos = Position::from_fen(FENS[3]).unwrap();
    let limits = nodes(50_000);
    let mut s = searcher(Some(net));
    let a = search(&mut s, &pos, &limits);
    s.new_game();
    let b = search(&mut s, &pos, &limits);
    assert_eq!(
        (a.nodes, a.best_move, a.score),
        (b.nodes, b.best_move, b.score)
    );
    s.set_threads(2);
    s.new_game();
    let smp = search(&mut s, &pos, &limits);
    assert!(pos.is_legal(smp.best_move));
    s.set_threads(1);
    s.new_game();
    let c = search(&mut s, &pos, &limits);
    assert_eq!(
        (a.nodes, a.best_move, a.score),
        (c.nodes, c.best_move, c.score)
    );
}

/// Lazy SMP with a network: every thread keeps its own accumulators in step (the hook checks
/// the main thread's), and the search ends with a legal move from any position.
#[test]
fn two_threads_with_a_network() {
    let net = Arc::new(Network::random(4, 64, 8, Activation::SCReLU));
    let mut s = searcher(Some(net.clone()));
    s.set_threads(2);
    assert!(
        s.helpers
            .iter()
            .all(|h| h.network().is_some_and(|n| Arc::ptr_eq(n, &net)))
    );
    for fen in FENS {
        let pos = Position::from_fen(fen).unwrap();
        s.nnue_check = Some(NnueCheck::default());
        let r = search(
            &mut s,
            &pos,
            &SearchLimits {
                depth: Some(7),
                ..Default::default()
            },
        );
        assert!(pos.is_legal(r.best_move), "{fen}");
        assert!(s.nnue_check.unwrap().evals > 0);
        assert_eq!(r.nodes, s.thread_nodes().iter().sum::<u64>());
    }
}

/// A Jieqi search with a network set keeps the classical evaluation: the same search as
/// without the network, and the accumulators are never touched.
#[test]
fn jieqi_searches_ignore_the_network() {
    let net = Arc::new(Network::random(5, 64, 8, Activation::SCReLU));
    let pos = Position::startpos_of(Variant::Jieqi);
    let limits = nodes(20_000);
    let mut with = searcher(Some(net));
    with.nnue_check = Some(NnueCheck::default());
    let a = search(&mut with, &pos, &limits);
    let b = search(&mut searcher(None), &pos, &limits);
    assert_eq!(
        (a.nodes, a.best_move, a.score),
        (b.nodes, b.best_move, b.score)
    );
    let c = with.nnue_check.unwrap();
    assert_eq!((c.evals, c.null_moves, c.captures), (0, 0, 0));
    // And a Xiangqi search after it uses the network again.
    let r = search(&mut with, &Position::startpos(), &nodes(5_000));
    assert!(r.nodes > 0);
    assert!(with.nnue_check.unwrap().evals > 0);
}
