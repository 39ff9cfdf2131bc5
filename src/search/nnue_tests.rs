//! The search with a network: the lazily updated accumulators give, at every node the search
//! evaluates, the value a fresh accumulator gives (the test hook [`NnueCheck`] compares the two
//! at each evaluation), through captures, null moves, singular and verification searches and
//! king moves that rebuild a king-bucketed perspective, and in Jieqi through reveals, chance
//! nodes and pool changes; node-limited searches repeat exactly; helper threads run beside it;
//! a network scores only its own variant's positions.

use super::{NnueCheck, SearchLimits, SearchParams, SearchResult, Searcher};
use crate::core::{Position, Variant};
use crate::eval::EvalParams;
use crate::eval::nnue::{Activation, Architecture, FeatureSetId, Network, Networks};
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

/// Jieqi view positions from `xqtune datagen --variant jieqi` games: dark pieces on both sides,
/// pools, captures of dark pieces on the board; and the deal's start.
const JIEQI_FENS: &[&str] = &[
    "xxxxkxxxx/9/1x5x1/x1x1x1x1x/9/9/X1X1X1X1X/1X5X1/9/XXXXKXXXX w A2B2N2R2C2P5a2b2n2r2c2p5 0 1",
    "1x1xk1xxx/1Pb1c4/4p4/1nN1x4/8p/1R7/r3X2aX/B3P2X1/4A4/1X2KX1XX b R1C1P3N1B1r1a1c1p2n1b1 9 15",
    "1x2kx3/P3p4/1r1nb3p/c1BR5/4b3a/3p2r1A/4X4/5C2P/2N1P4/3XK1BR1 w A1N1c1p1 3 22",
    "2x1k2x1/4n3p/a2cp2p1/1n2c3x/p3C1R2/2R5P/3r1r3/P1B1C4/4A3P/X1XXK4 w P1N2a1p1b1 1 27",
    "xxxxkxx1x/6A2/7p1/xB5r1/2p3n1p/6P2/X1X1X3X/P1R1P4/9/3XKX1XX b R1A1C1P2N2B1r1a2c1p2n1b2 0 8",
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

/// Searches every position of `fens` with the hook on; returns what it saw in total.
fn checked_searches_of(fens: &[&str], net: Network, limit: u64) -> NnueCheck {
    let net = Arc::new(net);
    let mut total = NnueCheck::default();
    for fen in fens {
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
        total.reveals += c.reveals;
        // Every make was taken back: the stack is at the root again.
        let slot = s.nnue[pos.variant() as usize].as_ref().unwrap();
        assert_eq!(slot.stack.depth(), 0, "{fen}");
    }
    assert!(total.null_moves > 20, "{total:?}");
    assert!(total.captures > 1000, "{total:?}");
    total
}

fn checked_searches(net: Network, limit: u64) -> NnueCheck {
    checked_searches_of(FENS, net, limit)
}

/// Jieqi: reveals take a dark piece off and an identity out of the pool (and a capture of a
/// dark piece whose identity is learnt takes one out of the victim's pool); chance nodes
/// evaluate each reveal. The lazy values still equal fresh ones everywhere.
#[test]
fn lazy_jieqi_values_equal_fresh_ones_during_search() {
    let arch = Architecture::new(FeatureSetId::JieqiPlanes, 64, 8, Activation::SCReLU);
    let c = checked_searches_of(JIEQI_FENS, Network::random_with(11, arch), 30_000);
    assert!(c.reveals > 1000, "{c:?}");
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
    s.set_networks(&Networks::none());
    s.new_game();
    assert!(s.networks().is_empty());
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
    assert!(s.helpers.iter().all(|h| {
        h.networks()
            .get(Variant::Xiangqi)
            .is_some_and(|n| Arc::ptr_eq(n, &net))
    }));
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

/// A network scores only its own variant's positions: with a Xiangqi network a Jieqi search
/// is the classical one and the accumulators are never touched; with a Jieqi network beside it
/// the Jieqi search changes and the Xiangqi search does not.
#[test]
fn each_variant_gets_its_own_network() {
    let xq = Arc::new(Network::random(5, 64, 8, Activation::SCReLU));
    let jq = Arc::new(Network::random_with(
        6,
        Architecture::new(FeatureSetId::JieqiPlanes, 64, 8, Activation::SCReLU),
    ));
    let jieqi = Position::startpos_of(Variant::Jieqi);
    let limits = nodes(20_000);
    let mut with = searcher(Some(xq.clone()));
    with.nnue_check = Some(NnueCheck::default());
    let a = search(&mut with, &jieqi, &limits);
    let b = search(&mut searcher(None), &jieqi, &limits);
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

    // Both networks: the Jieqi search is the Jieqi network's, the Xiangqi one unchanged.
    let mut both = searcher(None);
    both.set_networks(&Networks::none().with(xq.clone()).with(jq.clone()));
    assert!(
        both.networks()
            .get(Variant::Jieqi)
            .is_some_and(|n| Arc::ptr_eq(n, &jq))
    );
    both.nnue_check = Some(NnueCheck::default());
    let d = search(&mut both, &jieqi, &limits);
    assert!(both.nnue_check.unwrap().evals > 0);
    assert_ne!(
        (a.nodes, a.best_move, a.score),
        (d.nodes, d.best_move, d.score)
    );
    let x = search(&mut searcher(Some(xq)), &Position::startpos(), &limits);
    both.new_game();
    let y = search(&mut both, &Position::startpos(), &limits);
    assert_eq!(
        (x.nodes, x.best_move, x.score),
        (y.nodes, y.best_move, y.score)
    );
}
