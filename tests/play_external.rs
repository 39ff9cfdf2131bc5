//! External engines: the UCI/UCCI client against a fake engine (this test binary re-run as a
//! subprocess, see [`main`]), forfeits (illegal move, crash with restart, time), and the
//! `xqtune match` command line, and `xqtune` itself as an external engine in both dialects.
//!
//! The file has its own `main` (`harness = false` in Cargo.toml) so that the fake engine is an
//! entry point of this binary rather than a test that always passes.

mod common;

use std::io::BufRead;
use std::path::PathBuf;
use std::sync::Arc;
use xqtune::core::Position;
use xqtune::eval::EvalParams;
use xqtune::play::game::ColorName;
use xqtune::play::{
    Engine, EngineConfig, ExternalConfig, MatchConfig, MatchReport, Protocol, Termination,
    TimeControl, run_match_with_progress,
};
use xqtune::search::{EngineOptions, SearchParams};

const MODE_PREFIX: &str = "fake-mode=";

/// The tests of this file, run by [`main`].
const TESTS: &[(&str, fn())] = &[
    ("uci_client_plays_full_games", uci_client_plays_full_games),
    ("ucci_client_plays_full_games", ucci_client_plays_full_games),
    (
        "illegal_move_loses_and_the_match_goes_on",
        illegal_move_loses_and_the_match_goes_on,
    ),
    (
        "crashed_engine_loses_and_is_restarted",
        crashed_engine_loses_and_is_restarted,
    ),
    ("time_forfeit", time_forfeit),
    ("cli_match_writes_records", cli_match_writes_records),
    (
        "cli_match_stops_when_an_engine_cannot_start",
        cli_match_stops_when_an_engine_cannot_start,
    ),
    ("against_xqtune_uci", against_xqtune_uci),
    ("against_xqtune_ucci", against_xqtune_ucci),
    ("no_move_resigns", no_move_resigns),
    (
        "engine_stays_alive_across_games",
        engine_stays_alive_across_games,
    ),
    (
        "changed_options_are_sent_between_games",
        changed_options_are_sent_between_games,
    ),
    (
        "jieqi_against_external_xqtune_gives_the_same_games",
        jieqi_against_external_xqtune_gives_the_same_games,
    ),
    ("affinity_pins_each_player", affinity_pins_each_player),
    (
        "a_timed_mixed_match_warns_of_unfair_clocks",
        a_timed_mixed_match_warns_of_unfair_clocks,
    ),
];

/// Started with a `fake-mode=...` argument, this binary is a tiny UCI/UCCI engine on
/// stdin/stdout (modes `uci`, `ucci`, `illegal`, `crash:<marker file>`, `slow`, `resign`,
/// `ucci-resign` (no move from the third `go` on), `log:<file>` (appends every line it reads),
/// `cpus:<file>` (appends the cores it may run on, `Cpus_allowed_list`, at every `go`));
/// otherwise it
/// runs [`TESTS`] as libtest would: names containing any free argument (all when none), on a
/// few threads, failing when one test panics. `--list` lists them.
fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if let Some(mode) = args.iter().find_map(|a| a.strip_prefix(MODE_PREFIX)) {
        std::process::exit(fake_engine(mode));
    }
    common::harness::run_tests(
        TESTS,
        std::thread::available_parallelism().map_or(1, |n| n.get()),
    );
}

fn fake_engine(mode: &str) -> i32 {
    let ucci = mode.starts_with("ucci");
    let (mode, marker) = match mode.split_once(':') {
        Some((m, f)) => (m.to_string(), Some(PathBuf::from(f))),
        None => (mode.to_string(), None),
    };
    // In crash mode only the first process dies (it leaves a marker for the restarted one).
    let crash_here = mode == "crash" && marker.as_ref().is_some_and(|m| !m.exists());
    if let (true, Some(m)) = (crash_here, &marker) {
        let _ = std::fs::write(m, "crashed");
    }
    let mut log = match (mode.as_str(), &marker) {
        ("log", Some(m)) => std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(m)
            .ok(),
        _ => None,
    };
    let mut pos = Position::startpos();
    let mut gos = 0;
    for line in std::io::stdin().lock().lines() {
        let Ok(line) = line else { return 2 };
        if let Some(f) = &mut log {
            use std::io::Write;
            let _ = writeln!(f, "{line}");
        }
        let words: Vec<&str> = line.split_whitespace().collect();
        match words.first().copied() {
            Some("uci") if !ucci => println!("id name fake\nuciok"),
            Some("ucci") if ucci => println!("id name fake\nucciok"),
            Some("uci") | Some("ucci") => return 3, // wrong dialect
            Some("isready") => {
                // Sent before each game: the move count starts again.
                gos = 0;
                println!("readyok")
            }
            Some("ucinewgame") if ucci => return 4, // not a UCCI command
            Some("ucinewgame") => {}
            Some("setoption") => {
                let ok = if ucci {
                    words.len() == 3 && words[1] != "name"
                } else {
                    words.len() == 5 && words[1] == "name" && words[3] == "value"
                };
                if !ok {
                    return 5;
                }
            }
            Some("position") => {
                if words.get(1) != Some(&"fen") {
                    return 6;
                }
                pos = match common::harness::read_position(&words) {
                    Ok(p) => p,
                    Err(code) => return code,
                };
            }
            Some("go") => {
                gos += 1;
                if let ("cpus", Some(m)) = (mode.as_str(), &marker) {
                    use std::io::Write;
                    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
                    let cpus = status
                        .lines()
                        .find_map(|l| l.strip_prefix("Cpus_allowed_list:"))
                        .unwrap_or("?")
                        .trim()
                        .to_string();
                    let mut f = std::fs::OpenOptions::new()
                        .create(true)
                        .append(true)
                        .open(m)
                        .expect("the cpus log opens");
                    let _ = writeln!(f, "{cpus}");
                }
                let has = |w: &str| words.contains(&w);
                if has("wtime") && ucci || has("time") && !ucci {
                    return 9;
                }
                if crash_here && gos == 3 {
                    eprintln!("fake engine: crashing on its third go");
                    return 1;
                }
                if mode == "slow" {
                    std::thread::sleep(std::time::Duration::from_millis(600));
                }
                if mode == "illegal" {
                    println!("bestmove a0a0");
                    continue;
                }
                if mode.ends_with("resign") && gos >= 3 {
                    println!(
                        "{}",
                        if ucci {
                            "nobestmove"
                        } else {
                            "bestmove (none)"
                        }
                    );
                    continue;
                }
                let moves = pos.legal_moves();
                let pick = moves.as_slice()[(pos.game_ply() * 7) % moves.len()];
                let score = if ucci { "score 12" } else { "score cp 12" };
                println!("info depth 1 {score} nodes 1 pv {pick}");
                println!("bestmove {pick}");
            }
            Some("quit") => return 0,
            _ => {}
        }
    }
    0
}

fn fake(name: &str, mode: &str, protocol: Protocol) -> Engine {
    Engine::External(ExternalConfig {
        name: name.into(),
        program: std::env::current_exe().unwrap().display().to_string(),
        args: vec![format!("{MODE_PREFIX}{mode}")],
        protocol,
        options: vec![("Hash".into(), "16".into())],
        timeout_ms: 20_000,
    })
}

fn internal() -> Engine {
    Engine::Internal(EngineConfig {
        name: "xqtune".into(),
        eval: Arc::new(EvalParams::default()),
        search: SearchParams::default(),
        options: EngineOptions::default(),
        network: None,
    })
}

fn cfg(games: usize) -> MatchConfig {
    MatchConfig {
        games,
        nodes: Some(200),
        concurrency: 2,
        max_plies: 24,
        hash_mb: 1,
        ..Default::default()
    }
}

fn fake_color(g: &xqtune::play::GameRecord) -> ColorName {
    if g.a_is_red {
        ColorName::Red
    } else {
        ColorName::Black
    }
}

fn assert_clean(r: &MatchReport, n: usize) {
    assert_eq!(r.games.len(), n);
    for g in &r.games {
        assert!(
            matches!(
                g.termination,
                Termination::Rules { .. } | Termination::MaxPlies
            ),
            "game {} ended by {:?}",
            g.index,
            g.termination
        );
        assert!(!g.moves.is_empty());
    }
}

fn uci_client_plays_full_games() {
    let r = run_match_with_progress(
        &fake("fake", "uci", Protocol::Uci),
        &internal(),
        &cfg(4),
        &|_| {},
    )
    .unwrap();
    assert_clean(&r, 4);
    // Scores from `info ... score cp` reach the record.
    let g = &r.games[0];
    assert_eq!(g.scores[0], Some(12));
}

fn ucci_client_plays_full_games() {
    let c = MatchConfig {
        nodes: None,
        tc: Some(TimeControl {
            base_ms: 60_000,
            inc_ms: 100,
        }),
        ..cfg(2)
    };
    let r = run_match_with_progress(
        &fake("fake", "ucci", Protocol::Ucci),
        &internal(),
        &c,
        &|_| {},
    )
    .unwrap();
    assert_clean(&r, 2);
}

fn illegal_move_loses_and_the_match_goes_on() {
    let r = run_match_with_progress(
        &fake("fake", "illegal", Protocol::Uci),
        &internal(),
        &cfg(4),
        &|_| {},
    )
    .unwrap();
    assert_eq!(r.games.len(), 4);
    assert_eq!(r.result.losses, 4);
    for g in &r.games {
        assert_eq!(
            g.termination,
            Termination::IllegalMove {
                loser: fake_color(g),
                mv: "a0a0".into()
            }
        );
    }
}

fn crashed_engine_loses_and_is_restarted() {
    let marker = std::env::temp_dir().join(format!("xqtune-fake-crash-{}", std::process::id()));
    let _ = std::fs::remove_file(&marker);
    let c = MatchConfig {
        concurrency: 1,
        ..cfg(4)
    };
    let mode = format!("crash:{}", marker.display());
    let r = run_match_with_progress(
        &fake("fake", &mode, Protocol::Uci),
        &internal(),
        &c,
        &|_| {},
    )
    .unwrap();
    let _ = std::fs::remove_file(&marker);
    assert_eq!(r.games.len(), 4);
    // The first process dies on its third move (in game 0); the restarted one finishes the match.
    match &r.games[0].termination {
        Termination::Crash { loser, message } => {
            assert_eq!(*loser, ColorName::Red);
            // The forfeit says why, with what the engine last wrote to stderr.
            assert!(
                message.starts_with("crashed: engine '")
                    && message
                        .ends_with("' exited; its stderr: fake engine: crashing on its third go"),
                "{message}"
            );
        }
        t => panic!("game 0 ended by {t:?}"),
    }
    assert_eq!(r.games[0].result, xqtune::core::GameResult::BlackWins);
    assert_clean(
        &MatchReport {
            games: r.games[1..].to_vec(),
            ..r.clone()
        },
        3,
    );
}

fn time_forfeit() {
    let c = MatchConfig {
        nodes: None,
        tc: Some(TimeControl {
            base_ms: 200,
            inc_ms: 0,
        }),
        time_margin_ms: 50,
        ..cfg(2)
    };
    let r = run_match_with_progress(
        &fake("fake", "slow", Protocol::Uci),
        &internal(),
        &c,
        &|_| {},
    )
    .unwrap();
    for g in &r.games {
        assert_eq!(
            g.termination,
            Termination::TimeForfeit {
                loser: fake_color(g)
            }
        );
    }
    assert_eq!(r.result.losses, 2);
}

fn cli_match_writes_records() {
    let out = std::env::temp_dir().join(format!("xqtune-cli-match-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&out);
    let fake_cmd = format!(
        "{} {MODE_PREFIX}uci",
        std::env::current_exe().unwrap().display()
    );
    let o = std::process::Command::new(env!("CARGO_BIN_EXE_xqtune"))
        .args([
            "match",
            "--games",
            "4",
            "--nodes",
            "100",
            "--max-plies",
            "16",
        ])
        .args([
            "--concurrency",
            "2",
            "--name",
            "cli test",
            "--b-cmd",
            &fake_cmd,
        ])
        .arg("--out-dir")
        .arg(&out)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(
        o.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(
        stdout.contains("Score of default vs xqtune-") || stdout.contains("Score of default vs "),
        "{stdout}"
    );
    assert!(stdout.contains("Elo difference: "), "{stdout}");
    let dirs: Vec<_> = std::fs::read_dir(&out).unwrap().flatten().collect();
    assert_eq!(dirs.len(), 1);
    let dir = dirs[0].path();
    assert!(
        dir.file_name()
            .unwrap()
            .to_string_lossy()
            .ends_with("_match_cli_test")
    );
    let pgn = std::fs::read_to_string(dir.join("games.pgn")).unwrap();
    assert_eq!(pgn.matches("[Event ").count(), 4);
    let summary: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("summary.json")).unwrap()).unwrap();
    let n = |k: &str| summary[k].as_u64().unwrap();
    assert_eq!(n("wins") + n("draws") + n("losses"), 4);
    assert_eq!(summary["pentanomial"].as_array().unwrap().len(), 5);
    assert_eq!(summary["complete"], serde_json::json!(true));
    for k in ["elo", "elo_error", "los", "games_per_minute"] {
        assert!(!summary[k].is_null(), "{k} missing");
    }
    let _ = std::fs::remove_dir_all(&out);

    // Bad flags are refused with a message naming them.
    let o = std::process::Command::new(env!("CARGO_BIN_EXE_xqtune"))
        .args(["match", "--sprt", "elo0=5,elo1=0", "--no-save"])
        .output()
        .unwrap();
    assert!(!o.status.success());
    assert!(String::from_utf8_lossy(&o.stderr).contains("elo0 < elo1"));
}

/// An engine that exits before its handshake (here xqtune given a search file that does not
/// exist) stops the match before its first game with one error naming the engine and its
/// command, instead of every game forfeited; no run folder is left behind.
fn cli_match_stops_when_an_engine_cannot_start() {
    let out = std::env::temp_dir().join(format!("xqtune-cli-nostart-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&out);
    let missing = out.join("no-such-search.json");
    let bad_cmd = format!(
        "{} uci --search-params {}",
        env!("CARGO_BIN_EXE_xqtune"),
        missing.display()
    );
    let o = std::process::Command::new(env!("CARGO_BIN_EXE_xqtune"))
        .args(["match", "--games", "400", "--nodes", "100"])
        .args(["--b-name", "broken", "--b-cmd", &bad_cmd])
        .arg("--out-dir")
        .arg(&out)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success(), "{stderr}");
    assert!(
        stderr.contains("engine 'broken'") && stderr.contains("cannot play"),
        "{stderr}"
    );
    assert!(stderr.contains("--search-params"), "{stderr}");
    assert!(stderr.contains("did not finish its handshake"), "{stderr}");
    assert!(!String::from_utf8_lossy(&o.stdout).contains("Score of"));
    assert!(!out.exists() || std::fs::read_dir(&out).unwrap().next().is_none());
}

fn xqtune_itself(protocol: Protocol) -> Engine {
    Engine::External(ExternalConfig {
        name: format!("xqtune-{protocol:?}"),
        program: env!("CARGO_BIN_EXE_xqtune").into(),
        args: vec![],
        protocol,
        options: vec![],
        timeout_ms: 20_000,
    })
}

fn against_xqtune_uci() {
    let r = run_match_with_progress(&xqtune_itself(Protocol::Uci), &internal(), &cfg(2), &|_| {})
        .unwrap();
    assert_clean(&r, 2);
}

fn against_xqtune_ucci() {
    let r = run_match_with_progress(
        &xqtune_itself(Protocol::Ucci),
        &internal(),
        &cfg(2),
        &|_| {},
    )
    .unwrap();
    assert_clean(&r, 2);
}

fn no_move_resigns() {
    for (mode, protocol) in [("resign", Protocol::Uci), ("ucci-resign", Protocol::Ucci)] {
        let c = MatchConfig {
            concurrency: 1,
            ..cfg(2)
        };
        let fake = fake("fake", mode, protocol);
        let r = run_match_with_progress(&fake, &internal(), &c, &|_| {}).unwrap();
        assert_eq!(r.games.len(), 2);
        assert_eq!(r.result.losses, 2, "{mode}");
        for g in &r.games {
            let loser = fake_color(g);
            assert_eq!(g.termination, Termination::Resign { loser }, "{mode}");
            // The fake gave two moves of its own before resigning on its third `go`.
            assert_eq!(g.moves.len(), if g.a_is_red { 4 } else { 5 }, "{mode}");
            let pgn = xqtune::play::pgn::game_pgn(&Default::default(), g);
            assert!(pgn.contains("[Termination \"normal\"]"), "{pgn}");
            assert!(
                pgn.contains(&format!("{loser} resigns (the engine gave no move)")),
                "{pgn}"
            );
        }
    }
}

/// A fresh log file for the `log:` fake.
fn log_file(tag: &str) -> PathBuf {
    let f = std::env::temp_dir().join(format!("xqtune-fake-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_file(&f);
    f
}

fn engine_stays_alive_across_games() {
    let log = log_file("alive");
    let c = MatchConfig {
        concurrency: 1,
        ..cfg(4)
    };
    let engine = fake("fake", &format!("log:{}", log.display()), Protocol::Uci);
    let r = run_match_with_progress(&engine, &internal(), &c, &|_| {}).unwrap();
    assert_clean(&r, 4);
    let text = std::fs::read_to_string(&log).unwrap();
    let _ = std::fs::remove_file(&log);
    let lines: Vec<&str> = text.lines().collect();
    let count = |l: &str| lines.iter().filter(|x| **x == l).count();
    // One process for the four games: one handshake, the option sent once, and before each
    // game `ucinewgame` then `isready`.
    assert_eq!(count("uci"), 1, "{lines:?}");
    assert_eq!(count("setoption name Hash value 16"), 1, "{lines:?}");
    assert_eq!(count("ucinewgame"), 4, "{lines:?}");
    for (i, l) in lines.iter().enumerate() {
        if *l == "ucinewgame" {
            assert_eq!(lines.get(i + 1), Some(&"isready"), "{lines:?}");
        }
    }
    assert_eq!(lines.first(), Some(&"uci"));
}

fn changed_options_are_sent_between_games() {
    use xqtune::play::external::ExternalPlayer;
    use xqtune::play::game::{GameSettings, GameStart, MoveLimits, Player, Seat, play_game};
    let log = log_file("options");
    let Engine::External(config) = fake("fake", &format!("log:{}", log.display()), Protocol::Uci)
    else {
        unreachable!()
    };
    let mut ext = ExternalPlayer::new(config);
    let Engine::Internal(c) = internal() else {
        unreachable!()
    };
    let mut inp = xqtune::play::game::InProcessPlayer::new(c.eval, c.search, c.options, 1);
    let openings = xqtune::play::default_openings();
    let settings = GameSettings {
        limits: MoveLimits {
            nodes: Some(100),
            ..Default::default()
        },
        max_plies: 6,
        adjudication: Default::default(),
        time_margin_ms: 0,
    };
    let seat = Seat {
        name: "x".into(),
        hash: None,
    };
    let mut game = |ext: &mut ExternalPlayer| {
        let players: [&mut dyn Player; 2] = [ext, &mut inp];
        let g = play_game(
            0,
            players,
            [&seat, &seat],
            true,
            &GameStart::Opening(openings[0].clone()),
            &settings,
        );
        assert_eq!(g.termination, Termination::MaxPlies);
    };
    game(&mut ext);
    ext.set_options(vec![
        ("Hash".into(), "16".into()),
        ("Contempt".into(), "3".into()),
    ]);
    game(&mut ext);
    ext.set_options(vec![("Hash".into(), "32".into())]);
    game(&mut ext);
    assert_eq!(ext.starts, 1);
    drop(ext);
    let text = std::fs::read_to_string(&log).unwrap();
    let _ = std::fs::remove_file(&log);
    let sets: Vec<&str> = text
        .lines()
        .filter(|l| l.starts_with("setoption"))
        .collect();
    assert_eq!(
        sets,
        [
            "setoption name Hash value 16",
            "setoption name Contempt value 3",
            "setoption name Hash value 32",
        ]
    );
    // Each change comes before the `ucinewgame` of the game it is for.
    let lines: Vec<&str> = text.lines().collect();
    let at = |l: &str| lines.iter().position(|x| *x == l).unwrap();
    let newgames: Vec<usize> = (0..lines.len())
        .filter(|&i| lines[i] == "ucinewgame")
        .collect();
    assert_eq!(newgames.len(), 3);
    assert!(at("setoption name Contempt value 3") > newgames[0]);
    assert!(at("setoption name Contempt value 3") < newgames[1]);
    assert!(at("setoption name Hash value 32") < newgames[2]);
}

fn jieqi_against_external_xqtune_gives_the_same_games() {
    let c = MatchConfig {
        variant: xqtune::core::Variant::Jieqi,
        games: 4,
        nodes: Some(600),
        max_plies: 60,
        seed: 9,
        ..cfg(4)
    };
    let external = Engine::External(ExternalConfig {
        // Same name and hash size as the in-process engine, so the records can be compared.
        name: "xqtune".into(),
        program: env!("CARGO_BIN_EXE_xqtune").into(),
        args: vec!["uci".into()],
        protocol: Protocol::Uci,
        options: vec![("Hash".into(), c.hash_mb.to_string())],
        timeout_ms: 20_000,
    });
    // `xqtune uci` evaluates Jieqi positions with the embedded Jieqi network by default: the
    // in-process engine is given the same one.
    let mut with_net = internal();
    if let Engine::Internal(e) = &mut with_net {
        e.network = xqtune::eval::nnue::Network::embedded(xqtune::core::Variant::Jieqi);
    }
    let inproc = run_match_with_progress(&with_net, &with_net, &c, &|_| {}).unwrap();
    let mixed = run_match_with_progress(&with_net, &external, &c, &|_| {}).unwrap();
    assert_eq!(inproc.games.len(), 4);
    assert_eq!(mixed.games.len(), 4);
    for (x, y) in inproc.games.iter().zip(&mixed.games) {
        assert_eq!(x.deal_seed, y.deal_seed);
        assert_eq!(x.moves, y.moves, "game {}", x.index);
        assert_eq!(x.result, y.result, "game {}", x.index);
        assert_eq!(x.termination, y.termination, "game {}", x.index);
        // Past the deal, reveals included: the games are Jieqi games that went somewhere.
        assert!(x.moves.len() > 10);
    }
}

/// `--affinity`: the external engine of the first concurrent game runs on the second core of
/// those the process may use (the in-process player takes the first), every move.
fn affinity_pins_each_player() {
    if !cfg!(target_os = "linux") {
        return;
    }
    let log = std::env::temp_dir().join(format!("xqtune-cpus-{}", std::process::id()));
    let _ = std::fs::remove_file(&log);
    let cores = xqtune::play::affinity::cores();
    let c = MatchConfig {
        affinity: true,
        concurrency: 1,
        ..cfg(2)
    };
    let fake = fake("fake", &format!("cpus:{}", log.display()), Protocol::Uci);
    // On a thread of its own: the game pins the thread it runs on.
    let r = std::thread::spawn(move || run_match_with_progress(&internal(), &fake, &c, &|_| {}))
        .join()
        .unwrap()
        .unwrap();
    assert_clean(&r, 2);
    let seen = std::fs::read_to_string(&log).unwrap();
    let want = cores[1 % cores.len()].to_string();
    assert!(seen.lines().count() >= 4, "{seen}");
    assert!(seen.lines().all(|l| l == want), "want {want}: {seen}");
    let _ = std::fs::remove_file(&log);
}

/// A timed match of an in-process engine against an external one says that the clocks are not
/// equal.
fn a_timed_mixed_match_warns_of_unfair_clocks() {
    let fake_cmd = format!(
        "{} {MODE_PREFIX}uci",
        std::env::current_exe().unwrap().display()
    );
    let o = std::process::Command::new(env!("CARGO_BIN_EXE_xqtune"))
        .args([
            "match",
            "--games",
            "2",
            "--movetime",
            "5",
            "--max-plies",
            "8",
        ])
        .args(["--no-save", "--b-cmd", &fake_cmd])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{stderr}");
    assert!(
        stderr.contains("warning: a timed game of an in-process engine against an external one"),
        "{stderr}"
    );
    let o = std::process::Command::new(env!("CARGO_BIN_EXE_xqtune"))
        .args(["match", "--games", "2", "--nodes", "50", "--max-plies", "8"])
        .args(["--no-save", "--b-cmd", &fake_cmd])
        .output()
        .unwrap();
    assert!(!String::from_utf8_lossy(&o.stderr).contains("warning: a timed game"));
}
