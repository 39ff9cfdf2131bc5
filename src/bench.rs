//! `xqtune bench`: the behaviour checksum (Stockfish's `benchmark.cpp`). A fixed list of
//! positions is searched to a fixed depth, single-threaded, with fresh tables for each, and the
//! total node count is printed as `Nodes searched: N`. A change that moves N changes the
//! engine's behaviour; commit messages end with `Bench: N`.
//!
//! The middlegame and endgame positions are start positions of records in the Chinese Chess
//! Practical TexelDataset (CCPD), Yu-Han Tseng and Bo-Nian Chen (2026),
//! github.com/Yvonne761/Chinese-Chess-Practical-TexelDataset, licensed CC BY 4.0
//! (creativecommons.org/licenses/by/4.0). The openings are standard lines from the start. The
//! Jieqi positions (the deal's start and three views from `xqtune datagen --variant jieqi`
//! games) are searched [`JIEQI_DEPTH_OFFSET`] plies shallower: their chance nodes make a ply
//! dearer.

use crate::core::{FenError, MoveError, Position, START_FEN};
use crate::eval::EvalParams;
use crate::eval::nnue::Networks;
use crate::search::stats::TreeStats;
use crate::search::{SearchLimits, SearchParams, Searcher};
use std::sync::Arc;
use std::time::Instant;
use thiserror::Error;

/// Default search depth of `xqtune bench`.
pub const DEFAULT_BENCH_DEPTH: u32 = 10;

/// How many plies shallower than the bench depth the Jieqi positions are searched.
pub const JIEQI_DEPTH_OFFSET: u32 = 3;

/// `(FEN, moves played from it)`.
pub const BENCH_POSITIONS: &[(&str, &str)] = &[
    // Openings.
    (START_FEN, ""),
    (START_FEN, "h2e2 h9g7"),
    (START_FEN, "h2e2 h7e7"),
    (START_FEN, "c3c4 g6g5"),
    (START_FEN, "g0e2 h9g7"),
    (START_FEN, "b0c2 h9g7"),
    (START_FEN, "h2e2 h9g7 h0g2 i9h9 i0h0 b9c7"),
    (START_FEN, "h2e2 h9g7 h0g2 i9h9 i0h0 b9c7 h0h6 g6g5"),
    // Middlegames (CCPD).
    (
        "2bak4/4a2c1/4b4/pC1N4p/5Nn2/2P2nB1P/P8/3A5/9/2BAK4 w - - 0 1",
        "",
    ),
    ("4k1b2/9/4b4/R3p4/8p/P8/r8/2C1B4/4A1n2/2BA1K3 w - - 0 1", ""),
    (
        "4kab2/4a4/5n3/9/C1n2N2P/1N2p1B2/4p4/5A2B/4A4/4K2c1 b - - 0 1",
        "",
    ),
    (
        "C2k1ab2/2P1a4/3rcRn2/p7p/7n1/4C4/1r2P1p1P/2R1B1N2/4A4/1cBAK4 b - - 0 1",
        "",
    ),
    (
        "1C2kab2/9/2Nab4/C1N2R2p/2r6/9/c3Pnp2/9/9/2BAKABc1 w - - 0 1",
        "",
    ),
    (
        "1r1ak4/1C2a4/n8/R7p/P1b6/r3p4/1R7/4B3B/4A4/3AK4 w - - 0 1",
        "",
    ),
    (
        "1r2kab2/4a4/2n1b3n/p1p2N2p/4R4/2P2p3/Pccr4P/C1N1C3B/4A4/1RB1KA3 w - - 0 1",
        "",
    ),
    (
        "1rb1ka1r1/4a4/n2cb1n2/pC2N1pCp/2p6/6P2/P1c1P3P/2N1B4/9/1RBAKA1R1 w - - 0 12",
        "",
    ),
    (
        "1rbak4/1C1Ra1P2/4b1n2/R8/1r7/p2p5/9/4B4/4A4/2B1KA3 w - - 0 39",
        "",
    ),
    (
        "1rbakabr1/9/4c2Cn/p3p1p1p/2pn5/6P2/P1c1P3P/2NCB1N2/5R3/2BAKA1R1 w - - 0 10",
        "",
    ),
    (
        "2b1kab2/1r2a4/2n6/p1p1n1R1p/9/2P1c1P2/2r5P/B2RN1N2/4A4/2CK1AB2 w - - 0 21",
        "",
    ),
    (
        "2bak1br1/4a4/2n1c3n/p1p1p3p/1r4P2/2P6/P3P3P/1C2B1CcN/3N5/2RAKABR1 w - - 0 1",
        "",
    ),
    (
        "2bak2r1/4an1c1/n2cb4/N1p1p1p1p/9/PRP6/4PrP1P/2C1C1N2/9/2BAKABR1 w - - 0 12",
        "",
    ),
    (
        "1R1ak1b2/4a4/4b3n/2p5p/3r1N1r1/2P1C4/P3P1P1P/4B4/4A1c2/3AKR3 w - - 0 13",
        "",
    ),
    (
        "1nb1ka3/4a1R2/4b1n2/p3p1p1p/2pr5/4P1c2/P1P5P/N2CC1N2/4Ac3/2BAK1B2 w - - 0 1",
        "",
    ),
    (
        "1r2ka3/4a4/2n1b4/p3p1R1p/3Pc1n2/9/P4rc1P/N2RC1N2/2C1A4/2BAK1B2 w - - 0 9",
        "",
    ),
    (
        "1r2kabr1/4a4/2n1b4/pcp5p/4C4/2P3N2/P5pcP/C8/7R1/1RBAKAB2 w - - 0 1",
        "",
    ),
    // Endgames (CCPD).
    ("1c3k3/4a1c2/3a5/3P1C3/4N4/2B6/9/5p3/4K4/9 w - - 0 1", ""),
    ("3ak1b2/4a4/4b4/p8/9/P2R5/6p2/1r7/4A4/4K1B2 w - - 0 1", ""),
    (
        "1c1k1a3/2N1a4/9/9/3Cc1p1p/3nN4/8P/4B4/4A4/4KAB2 w - - 0 1",
        "",
    ),
    (
        "2b1ka3/3Ra4/2c1N4/2C6/p3PP3/9/5nr2/B8/4A4/2BAK4 w - - 0 1",
        "",
    ),
    (
        "2ba1ab2/3knR3/4N4/p1p3C2/1P7/6pC1/P7P/cc1ABKN2/7r1/3A2B2 w - - 0 1",
        "",
    ),
    (
        "2b1k4/4a4/n3ba3/1P2P4/2rN2c1p/6R2/9/3AB4/3C5/4KAB2 w - - 0 1",
        "",
    ),
    (
        "2bak4/4a4/4b4/2C2P3/2nN1C3/n1BNc3P/1p3c3/4B4/4A4/3AK4 w - - 0 1",
        "",
    ),
    (
        "3ak1b2/4a3n/4b4/C5P1C/2cNpn3/9/4P4/4B4/9/2BAKA3 w - - 0 1",
        "",
    ),
    (
        "3k1ab2/4a4/4b4/r8/6P1N/4C4/2P1P4/4B4/9/3AKABc1 b - - 0 1",
        "",
    ),
    (
        "4ka3/N3a4/4b4/2r5p/2p4P1/9/1pP1P3P/4B3c/4A4/2BAK2R1 w - - 0 1",
        "",
    ),
    (
        "4kab2/4a4/n8/C3R3p/2b2r3/P1B6/4P4/2C6/4A4/4KABc1 w - - 0 1",
        "",
    ),
    // Jieqi (views with pools).
    (
        "xxxxkxxxx/9/1x5x1/x1x1x1x1x/9/9/X1X1X1X1X/1X5X1/9/XXXXKXXXX w A2B2N2R2C2P5a2b2n2r2c2p5 0 1",
        "",
    ),
    (
        "1x1xk1xxx/1Pb1c4/4p4/1nN1x4/8p/1R7/r3X2aX/B3P2X1/4A4/1X2KX1XX b R1C1P3N1B1r1a1c1p2n1b1 9 15",
        "",
    ),
    (
        "1x2kx3/P3p4/1r1nb3p/c1BR5/4b3a/3p2r1A/4X4/5C2P/2N1P4/3XK1BR1 w A1N1c1p1 3 22",
        "",
    ),
    (
        "2x1k2x1/4n3p/a2cp2p1/1n2c3x/p3C1R2/2R5P/3r1r3/P1B1C4/4A3P/X1XXK4 w P1N2a1p1b1 1 27",
        "",
    ),
];

#[derive(Debug, Error)]
pub enum BenchError {
    #[error("bench position {index} has a bad FEN: {source}")]
    Fen { index: usize, source: FenError },
    #[error("bench position {index}: {source}")]
    Move { index: usize, source: MoveError },
}

/// The bench positions, set up (the opening moves played).
pub fn bench_positions() -> Result<Vec<Position>, BenchError> {
    let mut out = Vec::with_capacity(BENCH_POSITIONS.len());
    for (index, (fen, moves)) in BENCH_POSITIONS.iter().enumerate() {
        let mut pos =
            Position::from_fen(fen).map_err(|source| BenchError::Fen { index, source })?;
        for m in moves.split_whitespace() {
            let mv = pos
                .parse_move(m)
                .map_err(|source| BenchError::Move { index, source })?;
            pos.make_move(mv);
        }
        out.push(pos);
    }
    Ok(out)
}

/// Totals of one bench run.
#[derive(Clone, Debug)]
pub struct BenchReport {
    pub nodes: u64,
    pub seconds: f64,
    /// Where the nodes went, summed over the positions of each variant (`[xiangqi, jieqi]`).
    pub stats: [TreeStats; 2],
}

impl BenchReport {
    pub fn nps(&self) -> u64 {
        (self.nodes as f64 / self.seconds.max(1e-9)) as u64
    }
}

/// Searches every bench position to `depth` (Jieqi: [`JIEQI_DEPTH_OFFSET`] less) with a fresh
/// searcher (16 MB table), evaluating with `networks` where they have one for the position's
/// variant (else the classical evaluation with `eval`).
pub fn run_bench(
    depth: u32,
    eval: Arc<EvalParams>,
    params: SearchParams,
    networks: &Networks,
    mut per_position: impl FnMut(usize, &Position, u64),
) -> Result<BenchReport, BenchError> {
    let positions = bench_positions()?;
    let start = Instant::now();
    let mut nodes = 0;
    let mut stats = [TreeStats::default(); 2];
    for (i, pos) in positions.iter().enumerate() {
        let depth = match pos.variant() {
            crate::core::Variant::Xiangqi => depth,
            crate::core::Variant::Jieqi => depth.saturating_sub(JIEQI_DEPTH_OFFSET).max(1),
        };
        let limits = SearchLimits {
            depth: Some(depth),
            ..Default::default()
        };
        let mut s = Searcher::new(eval.clone(), params, 16);
        s.set_networks(networks);
        let r = s.search(pos, &limits, &mut |_| {});
        nodes += r.nodes;
        stats[pos.variant() as usize] += s.tree_stats();
        per_position(i, pos, r.nodes);
    }
    Ok(BenchReport {
        nodes,
        seconds: start.elapsed().as_secs_f64(),
        stats,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::eval::nnue::Network;

    #[test]
    fn bench_positions_are_valid_and_varied() {
        let ps = bench_positions().expect("bench positions set up");
        assert!(ps.len() >= 30);
        for p in &ps {
            assert!(p.has_legal_move(), "{p:?} has no move");
        }
        let keys: std::collections::BTreeSet<u64> = ps.iter().map(|p| p.key()).collect();
        assert_eq!(keys.len(), ps.len(), "duplicate bench positions");
    }

    #[test]
    fn bench_is_deterministic() {
        let e = Arc::new(EvalParams::default());
        let p = SearchParams::default();
        let none = Networks::none();
        let mut xiangqi_nodes = 0;
        let a = run_bench(3, e.clone(), p, &none, |_, pos, n| {
            if pos.variant() == crate::core::Variant::Xiangqi {
                xiangqi_nodes += n;
            }
        })
        .unwrap();
        let b = run_bench(3, e.clone(), p, &none, |_, _, _| {}).unwrap();
        assert_eq!(a.nodes, b.nodes);
        assert_eq!(a.stats, b.stats);
        // The Xiangqi positions' nodes are all main or quiescence nodes (the Jieqi ones also
        // count reveals' static evaluations as nodes).
        let sx = a.stats[0];
        assert_eq!(sx.main_nodes + sx.qs_nodes, xiangqi_nodes);
        assert!(sx.qs_nodes > 0 && sx.fail_highs > 0 && sx.moves_searched >= sx.fail_highs);
        assert!(sx.first_move_fail_highs <= sx.fail_highs && sx.re_searched <= sx.reduced);
        assert!(a.nodes > 0);
        // With a network: deterministic too, and another search.
        let net = Networks::none().with(Arc::new(Network::random(
            1,
            64,
            8,
            crate::eval::nnue::Activation::SCReLU,
        )));
        let c = run_bench(3, e.clone(), p, &net, |_, _, _| {}).unwrap();
        let d = run_bench(3, e.clone(), p, &net, |_, _, _| {}).unwrap();
        assert_eq!(c.nodes, d.nodes);
        assert_ne!(c.nodes, a.nodes);
        // A Jieqi network beside it changes the Jieqi positions' searches only.
        let both = net.clone().with(Arc::new(Network::random_with(
            2,
            crate::eval::nnue::Architecture::new(
                crate::eval::nnue::FeatureSetId::JieqiPlanes,
                64,
                8,
                crate::eval::nnue::Activation::SCReLU,
            ),
        )));
        let f = |n: &Networks| {
            let mut per = Vec::new();
            run_bench(3, e.clone(), p, n, |_, pos, k| per.push((pos.variant(), k))).unwrap();
            per
        };
        let (one, two) = (f(&net), f(&both));
        assert!(one.iter().any(|x| x.0 == crate::core::Variant::Jieqi));
        for (x, y) in one.iter().zip(&two) {
            if x.0 == crate::core::Variant::Xiangqi {
                assert_eq!(x, y);
            }
        }
        assert_ne!(one, two);
    }
}

/// `xqtune bench [depth] [--params FILE] [--search-params FILE] [--net FILE] [--eval E]`.
#[derive(clap::Args, Debug, Clone)]
pub struct BenchArgs {
    /// Search depth in plies.
    #[arg(default_value_t = DEFAULT_BENCH_DEPTH, value_parser = clap::value_parser!(u32).range(1..=30))]
    pub depth: u32,
    #[command(flatten)]
    pub engine: crate::uci::EngineFlags,
    /// Also print where the nodes went (cut-offs, extensions, reductions), per variant.
    #[arg(long)]
    pub stats: bool,
}

/// Runs the bench and prints per-position counts and Stockfish's summary lines.
pub fn run_cli(args: &BenchArgs) -> anyhow::Result<()> {
    let (eval, params) = args.engine.load_params()?;
    // As the engine: the embedded networks, if any, with a given file in its variant's place,
    // unless `--eval classical`.
    let networks = match args.engine.eval {
        Some(crate::uci::EvalChoice::Classical) => Networks::none(),
        choice => {
            let mut n = Networks::embedded();
            if let Some(net) = args.engine.load_net()? {
                n.set(net);
            }
            if n.is_empty() && choice.is_some() {
                anyhow::bail!("--eval nnue: this build has no network; give one with --net FILE");
            }
            n
        }
    };
    for v in [crate::core::Variant::Xiangqi, crate::core::Variant::Jieqi] {
        if let Some(n) = networks.get(v) {
            eprintln!(
                "Network ({v}): {} (hash {:016x})",
                n.description(),
                n.hash()
            );
        }
    }
    let total = BENCH_POSITIONS.len();
    let report = run_bench(
        args.depth,
        Arc::new(eval),
        params,
        &networks,
        |i, pos, n| {
            eprintln!("Position: {}/{total} ({}) nodes {n}", i + 1, pos.to_fen());
        },
    )?;
    println!("===========================");
    println!("Total time (ms): {}", (report.seconds * 1000.0) as u64);
    println!("Nodes searched: {}", report.nodes);
    println!("Nodes/second: {}", report.nps());
    if args.stats {
        for v in [crate::core::Variant::Xiangqi, crate::core::Variant::Jieqi] {
            println!("===========================");
            println!("Tree ({v} positions):");
            println!("{}", report.stats[v as usize]);
        }
    }
    Ok(())
}
