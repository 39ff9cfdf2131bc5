//! Throughput of external engines (issue 13 item 6): games per minute of xqtune in-process
//! against itself, and of xqtune as two external `xqtune uci` processes, side by side in one
//! run at 2000 and 5000 nodes per move, one game at a time and one game per core
//! (`cargo bench --bench external`; `XQTUNE_BENCH_GAMES` sets the games per measurement,
//! default 8).
//!
//! Both matches have the same seed and limits, so they play the same games (asserted): the
//! difference in time is the protocol's cost, reported per move. Not a criterion benchmark:
//! one match is already many samples, and repeating it would take minutes.

use std::sync::Arc;
use std::time::Instant;
use xqtune::eval::EvalParams;
use xqtune::play::{
    Engine, EngineConfig, ExternalConfig, MatchConfig, MatchReport, Protocol,
    run_match_with_progress,
};
use xqtune::search::{EngineOptions, SearchParams};

const HASH_MB: usize = 16;

fn internal(name: &str) -> Engine {
    Engine::Internal(EngineConfig {
        name: name.into(),
        eval: Arc::new(EvalParams::default()),
        search: SearchParams::default(),
        options: EngineOptions::default(),
        network: None,
    })
}

fn external(name: &str) -> Engine {
    Engine::External(ExternalConfig {
        name: name.into(),
        program: env!("CARGO_BIN_EXE_xqtune").into(),
        args: vec!["uci".into()],
        protocol: Protocol::Uci,
        options: vec![("Hash".into(), HASH_MB.to_string())],
        timeout_ms: 60_000,
    })
}

fn play(a: &Engine, b: &Engine, cfg: &MatchConfig) -> (MatchReport, f64) {
    let t = Instant::now();
    let r = run_match_with_progress(a, b, cfg, &|_| {}).expect("the match runs");
    (r, t.elapsed().as_secs_f64())
}

fn main() {
    let games: usize = std::env::var("XQTUNE_BENCH_GAMES")
        .ok()
        .and_then(|g| g.parse().ok())
        .unwrap_or(8);
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    println!("games per measurement: {games}, hash {HASH_MB} MB");
    println!(
        "{:>6} {:>7} {:>14} {:>14} {:>7} {:>8} {:>16}",
        "nodes", "at once", "in-process g/m", "external g/m", "ratio", "plies", "overhead/move"
    );
    let mut concurrencies = vec![1, cores];
    concurrencies.dedup();
    for (nodes, concurrency) in [2000u64, 5000]
        .into_iter()
        .flat_map(|n| concurrencies.iter().map(move |&c| (n, c)))
    {
        let cfg = MatchConfig {
            games,
            nodes: Some(nodes),
            concurrency,
            seed: 1,
            max_plies: 300,
            hash_mb: HASH_MB,
            ..Default::default()
        };
        let (inp, t_in) = play(&internal("a"), &internal("b"), &cfg);
        let (ext, t_ext) = play(&external("a"), &external("b"), &cfg);
        for (x, y) in inp.games.iter().zip(&ext.games) {
            assert_eq!(x.moves, y.moves, "game {} differs", x.index);
        }
        let plies: usize = inp.games.iter().map(|g| g.moves.len()).sum();
        let gpm = |t: f64| games as f64 * 60.0 / t;
        println!(
            "{nodes:>6} {concurrency:>7} {:>14.1} {:>14.1} {:>6.1}% {plies:>8} {:>13.3} ms",
            gpm(t_in),
            gpm(t_ext),
            100.0 * t_in / t_ext,
            (t_ext - t_in) * 1000.0 * concurrency as f64 / plies as f64
        );
    }
}
