//! Tuning an external engine: option discovery against a fake engine (this test binary re-run
//! as a subprocess, see [`main`]), and short seeded SPSA and GA runs on it through the run
//! driver (run folder files, resume).
//!
//! The file has its own `main` (`harness = false` in Cargo.toml) so that the fake engine is an
//! entry point of this binary rather than a test that always passes.

use clap::Parser;
mod common;

use std::io::BufRead;
use std::path::{Path, PathBuf};
use xqtune::core::Position;
use xqtune::play::Protocol;
use xqtune::tune::engine::{EngineArgs, EngineSettings, OptionSet, parse_param_file};
use xqtune::tune::{check, ga, spsa};

const FAKE: &str = "fake-engine";

const TESTS: &[(&str, fn())] = &[
    ("discovery_reads_spin_options", discovery_reads_spin_options),
    (
        "discovery_errors_name_the_option",
        discovery_errors_name_the_option,
    ),
    (
        "spsa_run_end_to_end_and_resume",
        spsa_run_end_to_end_and_resume,
    ),
    (
        "param_file_run_against_an_opponent",
        param_file_run_against_an_opponent,
    ),
    ("ga_run_on_an_engine", ga_run_on_an_engine),
    (
        "spsa_through_uci_plays_the_in_process_games",
        spsa_through_uci_plays_the_in_process_games,
    ),
    (
        "engines_stay_alive_across_iterations",
        engines_stay_alive_across_iterations,
    ),
    (
        "options_check_finds_an_option_that_does_nothing",
        options_check_finds_an_option_that_does_nothing,
    ),
    (
        "a_tune_refuses_an_option_that_does_nothing",
        a_tune_refuses_an_option_that_does_nothing,
    ),
    (
        "options_check_on_xqtune_itself",
        options_check_on_xqtune_itself,
    ),
    (
        "options_check_errors_are_clear",
        options_check_errors_are_clear,
    ),
    ("tuning_against_a_pool", tuning_against_a_pool),
    (
        "spsa_plays_its_suite_and_adjudicates",
        spsa_plays_its_suite_and_adjudicates,
    ),
];

/// With the `fake-engine` argument this binary is a tiny UCI engine; otherwise it runs
/// [`TESTS`] (names containing any free argument; `--list` lists them).
fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.first().map(String::as_str) == Some(FAKE) {
        std::process::exit(fake_engine(args.get(1).map(Path::new)));
    }
    // One after another: the runs use the worker pool of the driver.
    common::harness::run_tests(TESTS, 1);
}

/// The options the fake engine advertises (the spin ones with spaces in their names too; `Dead
/// Knob` changes nothing).
const OPTIONS: &[&str] = &[
    "option name Hash type spin default 16 min 1 max 1024",
    "option name Threads type spin default 1 min 1 max 8",
    "option name Move Choice type spin default 50 min 0 max 100",
    "option name Shift type spin default 10 min 0 max 40",
    "option name Dead Knob type spin default 5 min 0 max 9",
    "option name Ponder type check default false",
    "option name Clear Hash type button",
];

/// `--openings` and `--draw-adjudication` reach every tuning game (the fake engine scores
/// every move 0, so each game is drawn by adjudication after one move a side), and a run
/// stopped and resumed after its suite file is gone plays on from the run folder's copy.
fn spsa_plays_its_suite_and_adjudicates() {
    const FEN: &str = "rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C2C4/9/RNBAKABNR b - - 1 1";
    let out = temp_dir("spsa-suite");
    let suite = out.join("suite.txt");
    std::fs::write(&suite, format!("{FEN} # after h2e2\n")).unwrap();
    let flags = [
        "--only",
        "Move Choice,Shift",
        "--verify",
        "none",
        "--openings",
        suite.to_str().unwrap(),
        "--draw-adjudication",
        "movenumber=1,movecount=1,score=10",
        "--save-games",
    ];
    let full = spsa::run_spsa_with(&spsa_args(&out, &flags), spsa::play_games, None).unwrap();
    let d = &full.dir;
    assert_eq!(read(d, "openings.txt"), read(&out, "suite.txt"));
    let cfg: serde_json::Value = serde_json::from_str(&read(d, "config.json")).unwrap();
    assert_eq!(cfg["args"]["adjudication"]["draw"]["move_count"], 1);
    assert_eq!(cfg["args"]["openings"], suite.to_str().unwrap());
    let (mut games, mut adjudicated, mut from_fen) = (0, 0, 0);
    for entry in std::fs::read_dir(d.join("games")).unwrap() {
        let pgn = std::fs::read_to_string(entry.unwrap().path()).unwrap();
        games += pgn.matches("[Event ").count();
        adjudicated += pgn
            .matches("[TerminationDetails \"draw by adjudication\"]")
            .count();
        from_fen += pgn.matches(&format!("[FEN \"{FEN}\"]")).count();
    }
    assert_eq!((games, adjudicated, from_fen), (16, 16, 16));
    // stopped after 3 iterations, the suite file removed, resumed: the same run
    let part = spsa::run_spsa_with(&spsa_args(&out, &flags), spsa::play_games, Some(3)).unwrap();
    assert!(!part.finished);
    std::fs::remove_file(&suite).unwrap();
    let mut r = spsa_args(&out, &[]);
    r.common.engine = EngineArgs::default();
    r.common.resume = Some(part.dir.clone());
    let resumed = spsa::run_spsa_with(&r, spsa::play_games, None).unwrap();
    assert!(resumed.finished);
    assert_eq!(read(&resumed.dir, "params.csv"), read(d, "params.csv"));
    std::fs::remove_dir_all(&out).unwrap();
}

/// A UCI engine whose moves depend on its option values, so that two option sets play
/// different games: from ply 10 on it blunders (an illegal move, which loses) at the plies its
/// values pick, so games are decided and SPSA moves. It refuses (exits) on a `setoption`
/// naming an option it does not have. With a file argument it appends a line to that file at
/// every start (the `uci` handshake), so that a test can count the processes a run started.
fn fake_engine(starts: Option<&Path>) -> i32 {
    let mut pos = Position::startpos();
    let (mut choice, mut shift) = (50usize, 10usize);
    for line in std::io::stdin().lock().lines() {
        let Ok(line) = line else { return 2 };
        let words: Vec<&str> = line.split_whitespace().collect();
        match words.first().copied() {
            Some("uci") => {
                if let Some(f) = starts {
                    use std::io::Write;
                    let mut log = std::fs::OpenOptions::new()
                        .create(true)
                        .append(true)
                        .open(f)
                        .expect("the start log opens");
                    writeln!(log, "{}", std::process::id()).expect("the start log is written");
                }
                println!("id name fake tuner target");
                for o in OPTIONS {
                    println!("{o}");
                }
                println!("uciok");
            }
            Some("isready") => println!("readyok"),
            Some("setoption") => {
                let (Some(n), Some(v)) = (
                    words.iter().position(|&w| w == "name"),
                    words.iter().position(|&w| w == "value"),
                ) else {
                    return 5;
                };
                let name = words[n + 1..v].join(" ");
                let value: usize = words.get(v + 1).and_then(|x| x.parse().ok()).unwrap_or(0);
                match name.as_str() {
                    "Move Choice" => choice = value,
                    "Shift" => shift = value,
                    // accepted, and read by nothing: an option that does nothing
                    "Hash" | "Threads" | "Dead Knob" => {}
                    _ => return 6,
                }
            }
            Some("position") => {
                pos = match common::harness::read_position(&words) {
                    Ok(p) => p,
                    Err(code) => return code,
                };
            }
            Some("go") => {
                if pos.game_ply() >= 10 && (choice + 7 * shift + pos.game_ply()).is_multiple_of(13)
                {
                    println!("bestmove a0a0");
                    continue;
                }
                let moves = pos.legal_moves();
                let i = (pos.game_ply() * 7 + choice * 3 + shift) % moves.len();
                let pick = moves.as_slice()[i];
                println!("info depth 1 score cp 0 nodes 1 pv {pick}");
                println!("bestmove {pick}");
            }
            Some("quit") => return 0,
            _ => {}
        }
    }
    0
}

fn fake_command() -> String {
    format!("'{}' {FAKE}", std::env::current_exe().unwrap().display())
}

fn temp_dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("xqtune-tune-engine-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn engine_args(only: &str, extra: &[&str]) -> (EngineArgs, String) {
    #[derive(Parser)]
    struct T {
        #[command(flatten)]
        e: EngineArgs,
    }
    let cmd = fake_command();
    let mut argv = vec!["t", "--engine", cmd.as_str()];
    argv.extend_from_slice(extra);
    (T::parse_from(argv).e, only.to_string())
}

fn discovery_reads_spin_options() {
    let (a, only) = engine_args("Move*,Shift", &["--engine-option", "Hash=8"]);
    let s = EngineSettings::from_args(&a, &only).unwrap().unwrap();
    let names: Vec<&str> = s.options.iter().map(|o| o.name.as_str()).collect();
    assert_eq!(names, ["Move Choice", "Shift"]);
    let o = &s.options[0];
    assert_eq!((o.value, o.min, o.max, o.step), (50, 0, 100, 5));
    assert_eq!(s.engine.options, [("Hash".to_string(), "8".to_string())]);
    assert_eq!(s.engine.proto, Protocol::Uci);
}

fn discovery_errors_name_the_option() {
    let err = |only: &str, extra: &[&str]| -> String {
        let (a, only) = engine_args(only, extra);
        EngineSettings::from_args(&a, &only)
            .unwrap_err()
            .to_string()
    };
    let e = err("", &[]);
    assert!(
        e.contains("needs --only") && e.contains("Move Choice [0..100]"),
        "{e}"
    );
    let e = err("Nothing", &[]);
    assert!(e.contains("'Nothing' matches no spin option"), "{e}");
    let e = err("Ponder", &[]);
    assert!(e.contains("'Ponder' is a check, not a spin"), "{e}");
    let e = err("Shift", &["--engine-option", "Hsh=8"]);
    assert!(e.contains("no option 'Hsh'"), "{e}");
    let e = err("Shift", &["--engine-option", "Hash"]);
    assert!(e.contains("'Hash' is not Name=Value"), "{e}");
    let dir = temp_dir("errors");
    let file = dir.join("p.txt");
    std::fs::write(
        &file,
        "Shift, int, 10, 0, 40, 4, 0.002\nMove Choice, int, 50, 0, 200, 5, 0.002\n",
    )
    .unwrap();
    let f = file.to_str().unwrap();
    let e = err("", &["--param-file", f]);
    assert!(
        e.contains("line 2 (the engine's bounds): 'Move Choice' = 200"),
        "{e}"
    );
    std::fs::write(&file, "Shift, float, 10, 0, 40, 4, 0.002\n").unwrap();
    let e = err("", &["--param-file", f]);
    assert!(
        e.contains("line 1: float parameters are not supported"),
        "{e}"
    );
    // a program that does not exist, and one that never says uciok
    let (mut a, only) = engine_args("Shift", &[]);
    a.engine = Some("/nonexistent/engine".into());
    let e = EngineSettings::from_args(&a, &only)
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("cannot start engine '/nonexistent/engine'"),
        "{e}"
    );
    a.engine = Some("true".into());
    let e = EngineSettings::from_args(&a, &only)
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("did not finish its handshake") && e.contains("exited"),
        "{e}"
    );
    let (mut a, only) = engine_args("Shift", &[]);
    a.engine = None;
    a.param_file = Some(file);
    let e = EngineSettings::from_args(&a, &only)
        .unwrap_err()
        .to_string();
    assert!(e.contains("need --engine"), "{e}");
    std::fs::remove_dir_all(&dir).unwrap();
}

fn spsa_args(out: &Path, extra: &[&str]) -> spsa::SpsaArgs {
    spsa_args_with(&fake_command(), out, extra)
}

fn spsa_args_with(cmd: &str, out: &Path, extra: &[&str]) -> spsa::SpsaArgs {
    #[derive(Parser)]
    struct T {
        #[command(flatten)]
        a: spsa::SpsaArgs,
    }
    let mut argv = vec![
        "t",
        "--engine",
        cmd,
        "--engine-option",
        "Hash=8",
        "--iterations",
        "8",
        "--games",
        "2",
        "--max-plies",
        "30",
        "--seed",
        "5",
        "--concurrency",
        "1",
        "--out",
        out.to_str().unwrap(),
    ];
    argv.extend_from_slice(extra);
    T::parse_from(argv).a
}

fn read(dir: &Path, f: &str) -> String {
    std::fs::read_to_string(dir.join(f))
        .unwrap_or_else(|e| panic!("{}: {e}", dir.join(f).display()))
}

fn spsa_run_end_to_end_and_resume() {
    let out = temp_dir("spsa");
    let a = spsa_args(
        &out,
        &[
            "--only",
            "Move Choice,Shift",
            "--verify",
            "sprt",
            "--verify-games",
            "4",
        ],
    );
    let full = spsa::run_spsa_with(&a, spsa::play_games, None).unwrap();
    assert!(full.finished);
    let d = &full.dir;
    // config.json records the engine and its discovered options
    let cfg: serde_json::Value = serde_json::from_str(&read(d, "config.json")).unwrap();
    assert_eq!(cfg["args"]["space"], "engine");
    assert_eq!(cfg["args"]["engine"]["engine"]["command"], fake_command());
    assert_eq!(cfg["args"]["engine"]["options"][0]["name"], "Move Choice");
    // best.json, best.txt and best.uci agree
    let best: OptionSet = serde_json::from_str(&read(d, "best.json")).unwrap();
    let values = best.options.iter().map(|o| o.value).collect::<Vec<_>>();
    assert_eq!(Some(values.clone()), full.best);
    let txt = parse_param_file("best.txt", &read(d, "best.txt")).unwrap();
    assert_eq!(txt.iter().map(|p| p.value).collect::<Vec<_>>(), values);
    assert_eq!(txt[0].name, "Move Choice");
    assert_eq!(
        read(d, "best.uci"),
        format!(
            "setoption name Move Choice value {}\nsetoption name Shift value {}\n",
            values[0], values[1]
        )
    );
    let start: OptionSet = serde_json::from_str(&read(d, "start.json")).unwrap();
    assert_eq!(
        start.options.iter().map(|o| o.value).collect::<Vec<_>>(),
        [50, 10]
    );
    assert_eq!(read(d, "log.csv").lines().count(), 9);
    assert_eq!(
        read(d, "params.csv").lines().next(),
        Some("iteration,Move Choice,Shift")
    );
    let v: serde_json::Value = serde_json::from_str(&read(d, "verification.json")).unwrap();
    assert!(v["stats"]["games"].as_u64().unwrap() >= 2, "{v}");
    assert!(d.join("plots/fitness.png").exists());
    assert!(d.join("plots/distance.png").exists());
    assert!(d.join("plots/trajectories.png").exists());
    assert!(d.join("plots/option-01-Move_Choice.png").exists());
    assert!(d.join("plots/option-02-Shift.png").exists());
    // stopped after 3 iterations and resumed from the folder alone: the same run
    let part = spsa::run_spsa_with(&a, spsa::play_games, Some(3)).unwrap();
    assert!(!part.finished);
    let mut r = spsa_args(&out, &["--verify", "none"]);
    r.common.engine = EngineArgs::default();
    r.common.resume = Some(part.dir.clone());
    let resumed = spsa::run_spsa_with(&r, spsa::play_games, None).unwrap();
    assert!(resumed.finished);
    assert_eq!(resumed.best, full.best);
    assert_eq!(read(&resumed.dir, "params.csv"), read(d, "params.csv"));
    let cut = |t: String| -> Vec<String> {
        t.lines()
            .map(|l| l.rsplit_once(',').map_or(l, |x| x.0).to_string())
            .collect()
    };
    assert_eq!(cut(read(&resumed.dir, "log.csv")), cut(read(d, "log.csv")));
    // moved to another machine: the same engine under another command line, given with
    // --resume; that command plays the rest (its start log fills), the run is the same, and
    // config.json keeps the recorded command
    let part = spsa::run_spsa_with(&a, spsa::play_games, Some(3)).unwrap();
    let starts = out.join("moved-starts.log");
    let moved = format!("{} '{}'", fake_command(), starts.display());
    let mut m = spsa_args_with(&moved, &out, &["--verify", "none"]);
    m.common.resume = Some(part.dir.clone());
    let resumed = spsa::run_spsa_with(&m, spsa::play_games, None).unwrap();
    assert!(resumed.finished);
    assert_eq!(read(&resumed.dir, "params.csv"), read(d, "params.csv"));
    assert!(!read(&out, "moved-starts.log").is_empty());
    let cfg: serde_json::Value = serde_json::from_str(&read(&part.dir, "config.json")).unwrap();
    assert_eq!(cfg["args"]["engine"]["engine"]["command"], fake_command());
    std::fs::remove_dir_all(&out).unwrap();
}

fn param_file_run_against_an_opponent() {
    let out = temp_dir("file");
    let file = out.join("params.txt");
    std::fs::write(&file, "# TUNE() output\nShift,12,0,40,3,0.01\n").unwrap();
    let opp = fake_command();
    let a = spsa_args(
        &out,
        &[
            "--param-file",
            file.to_str().unwrap(),
            "--opponent",
            opp.as_str(),
            "--verify",
            "none",
        ],
    );
    // xqtune's own starting sets do not mix with an engine: refused before any folder exists
    let mut bad = a.clone();
    bad.common.flatten = true;
    let e = spsa::run_spsa_with(&bad, spsa::play_games, None).unwrap_err();
    assert!(e.to_string().contains("--params and --flatten"), "{e}");
    let mut bad = a.clone();
    bad.common.space = xqtune::tune::space::SpaceKind::Search;
    let e = spsa::run_spsa_with(&bad, spsa::play_games, None).unwrap_err();
    assert!(e.to_string().contains("--space"), "{e}");
    assert_eq!(
        std::fs::read_dir(&out).unwrap().count(),
        1,
        "only params.txt"
    );
    let run = spsa::run_spsa_with(&a, spsa::play_games, None).unwrap();
    let cfg: serde_json::Value = serde_json::from_str(&read(&run.dir, "config.json")).unwrap();
    assert_eq!(cfg["args"]["opponents"][0]["command"], opp);
    assert!(cfg["args"]["engine"].get("opponent").is_none());
    assert_eq!(cfg["args"]["engine"]["options"][0]["c_end"], 3.0);
    let txt = parse_param_file("best.txt", &read(&run.dir, "best.txt")).unwrap();
    assert_eq!(
        (txt[0].name.as_str(), txt[0].c_end, txt[0].r_end),
        ("Shift", 3.0, 0.01)
    );
    // θ+ and θ− each played the opponent: 4 games per iteration
    let log = read(&run.dir, "log.csv");
    assert_eq!(log.lines().count(), 9);
    std::fs::remove_dir_all(&out).unwrap();
}

fn ga_run_on_an_engine() {
    #[derive(Parser)]
    struct T {
        #[command(flatten)]
        a: ga::GaArgs,
    }
    let out = temp_dir("ga");
    let cmd = fake_command();
    let a = T::parse_from([
        "t",
        "--engine",
        cmd.as_str(),
        "--only",
        "Move Choice",
        "--population",
        "4",
        "--generations",
        "2",
        "--games",
        "2",
        "--final-candidates",
        "2",
        "--final-games",
        "2",
        "--max-plies",
        "30",
        "--verify",
        "none",
        "--concurrency",
        "1",
        "--out",
        out.to_str().unwrap(),
    ])
    .a;
    let run = ga::run_ga_with(&a, ga::fitness::match_fitness, None).unwrap();
    assert!(run.finished);
    let best: OptionSet = serde_json::from_str(&read(&run.dir, "best.json")).unwrap();
    assert_eq!(best.options.len(), 1);
    assert!(read(&run.dir, "best.uci").starts_with("setoption name Move Choice value "));
    let params = read(&run.dir, "params.csv");
    assert_eq!(params.lines().count(), 3, "{params}");
    assert!(params.starts_with("generation,Move Choice\n0,"), "{params}");
    assert!(run.dir.join("plots/option-01-Move_Choice.png").exists());
    // stopped after one generation and resumed: the same run
    let part = ga::run_ga_with(&a, ga::fitness::match_fitness, Some(1)).unwrap();
    assert!(!part.finished);
    let mut r = a.clone();
    r.common.engine = EngineArgs::default();
    r.common.resume = Some(part.dir.clone());
    let resumed = ga::run_ga_with(&r, ga::fitness::match_fitness, None).unwrap();
    assert_eq!(resumed.best, run.best);
    assert_eq!(read(&resumed.dir, "params.csv"), params);
    std::fs::remove_dir_all(&out).unwrap();
}

/// Issue 13 item 5: a node-limited, seeded SPSA run on xqtune itself through UCI (`xqtune uci
/// --tune-options`, with the parameter file of `xqtune uci --print-tune`, which carries the
/// c_end and r_end that in-process SPSA derives from the declared steps) plays the same games
/// as the same run in-process: every game of every iteration (the saved PGNs), every θ
/// (params.csv), every iteration's result (log.csv) and the best values are equal.
fn spsa_through_uci_plays_the_in_process_games() {
    #[derive(Parser)]
    struct T {
        #[command(flatten)]
        a: spsa::SpsaArgs,
    }
    let out = temp_dir("spsa-uci");
    std::fs::create_dir_all(&out).unwrap();
    let exe = env!("CARGO_BIN_EXE_xqtune");
    let printed = std::process::Command::new(exe)
        .args(["uci", "--print-tune"])
        .output()
        .unwrap();
    assert!(printed.status.success());
    let param_file = out.join("xqtune.tune");
    std::fs::write(&param_file, &printed.stdout).unwrap();
    let only = "mobility.*";
    let common = |dir: &str| -> Vec<String> {
        [
            "t",
            "--only",
            only,
            "--iterations",
            "4",
            "--games",
            "2",
            "--nodes",
            "400",
            "--seed",
            "13",
            "--verify",
            "none",
            "--concurrency",
            "1",
            "--save-games",
            "--out",
            out.join(dir).to_str().unwrap(),
        ]
        .map(String::from)
        .to_vec()
    };
    let inproc = T::parse_from(common("in")).a;
    let mut argv = common("uci");
    // the tables, not the embedded network: the tune is of evaluation parameters
    let engine = format!("{exe} uci --tune-options --eval classical");
    argv.extend(
        [
            "--engine",
            engine.as_str(),
            "--param-file",
            param_file.to_str().unwrap(),
            "--no-check",
        ]
        .map(String::from),
    );
    let uci = T::parse_from(argv).a;
    let a = spsa::run_spsa(&inproc).unwrap();
    let b = spsa::run_spsa(&uci).unwrap();
    assert!(a.finished && b.finished);
    // the games, iteration by iteration
    for k in 0..4 {
        let f = format!("games/iteration-{k:05}.pgn");
        let (ga, gb) = (read(&a.dir, &f), read(&b.dir, &f));
        let moves = |pgn: &str| -> Vec<String> {
            // the move text and results, without the headers naming the engines
            pgn.lines()
                .filter(|l| !l.starts_with('[') || l.starts_with("[Result"))
                .map(String::from)
                .collect()
        };
        assert_eq!(ga.matches("[Event").count(), 2, "{ga}");
        assert_eq!(moves(&ga), moves(&gb), "iteration {k}");
    }
    // θ after every iteration, and log.csv but for time_s (its last column)
    assert_eq!(read(&a.dir, "params.csv"), read(&b.dir, "params.csv"));
    let log = |d: &Path| -> Vec<String> {
        read(d, "log.csv")
            .lines()
            .map(|l| l.rsplit_once(',').unwrap().0.to_string())
            .collect()
    };
    assert_eq!(log(&a.dir), log(&b.dir));
    assert_eq!(log(&a.dir).len(), 5);
    // not a vacuous check: some iteration was decisive and θ moved
    assert!(
        log(&a.dir)
            .iter()
            .skip(1)
            .any(|l| l.split(',').nth(3) != Some("0"))
    );
    // best.json: the tuned values are the same numbers under the same names
    assert_eq!(a.best, b.best);
    let eval = xqtune::eval::EvalParams::load(&a.dir.join("best.json")).unwrap();
    let best: OptionSet = serde_json::from_str(&read(&b.dir, "best.json")).unwrap();
    let specs = eval.specs();
    assert!(!best.options.is_empty());
    for o in &best.options {
        let s = specs.iter().find(|s| s.name == o.name).unwrap();
        assert_eq!(s.value, o.value, "{}", o.name);
    }
    std::fs::remove_dir_all(&out).unwrap();
}

/// A tuner plays many short matches (one per game pair): the engine processes of one are
/// handed to the next, with the new option values sent by `setoption`, instead of a start per
/// pair. 8 iterations of 2 games at one game at a time need the two processes of the first
/// pair (θ+ and θ−) and the one that discovered the options; without reuse they were 17.
fn engines_stay_alive_across_iterations() {
    let out = temp_dir("reuse");
    let starts = out.join("starts.log");
    let cmd = format!("{} '{}'", fake_command(), starts.display());
    let a = spsa_args_with(
        &cmd,
        &out,
        &[
            "--only",
            "Move Choice,Shift",
            "--verify",
            "none",
            "--no-check",
        ],
    );
    let run = spsa::run_spsa_with(&a, spsa::play_games, None).unwrap();
    assert!(run.finished);
    assert_eq!(read(&run.dir, "log.csv").lines().count(), 9);
    let started = read(&out, "starts.log").lines().count();
    assert!(
        (2..=3).contains(&started),
        "{started} engine starts for 16 games"
    );
    // the engines kept between games end with the command
    xqtune::exec::finish();
    std::fs::remove_dir_all(&out).unwrap();
}

/// `xqtune options check`: the fake engine's `Dead Knob` is accepted by `setoption` and read by
/// nothing, so its minimum and maximum search alike; `Move Choice` and `Shift` change the move.
fn options_check_finds_an_option_that_does_nothing() {
    let (a, only) = engine_args("Move Choice,Shift,Dead Knob", &[]);
    let s = EngineSettings::from_args(&a, &only).unwrap().unwrap();
    let report = check::check_options(&s.option_set(), 500, &mut |_, _| {}).unwrap();
    assert!(report.deterministic);
    let dead: Vec<&str> = report.dead().iter().map(|o| o.name.as_str()).collect();
    assert_eq!(dead, ["Dead Knob"]);
    assert_eq!(report.options.len(), 3);
    // the command line
    let o = std::process::Command::new(env!("CARGO_BIN_EXE_xqtune"))
        .args(["options", "check", "--engine", &fake_command()])
        .args(["--only", "Shift,Dead Knob", "--nodes", "500"])
        .output()
        .unwrap();
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        o.status.success(),
        "{out}{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(
        out.contains("Dead Knob") && out.contains("NO EFFECT"),
        "{out}"
    );
    assert!(
        out.contains("1 of 2 options do nothing through setoption: Dead Knob"),
        "{out}"
    );
}

/// `xqtune options check` on xqtune itself through UCI (`uci --tune-options`): at a fixed node
/// budget the time management (`tm_soft_percent`) and `Move Overhead` act on nothing, while the
/// search's `lmr_base` and `futility_margin` change the searches; an evaluation table acts only
/// with `--eval classical`.
fn options_check_on_xqtune_itself() {
    let exe = env!("CARGO_BIN_EXE_xqtune");
    let mut a = engine_args("", &[]).0;
    a.engine = Some(format!("'{exe}' uci --tune-options"));
    let only = "lmr_base,tm_soft_percent,futility_margin,Move Overhead";
    let s = EngineSettings::from_args(&a, only).unwrap().unwrap();
    let report = check::check_options(&s.option_set(), 2000, &mut |_, _| {}).unwrap();
    assert!(
        report.deterministic,
        "a one-thread fixed-node search repeats"
    );
    assert_eq!(report.positions, check::CHECK_POSITIONS.len());
    let verdicts: Vec<(&str, bool)> = report
        .options
        .iter()
        .map(|o| (o.name.as_str(), o.differs_at.is_some()))
        .collect();
    // (in the order the engine lists its options)
    assert_eq!(
        verdicts,
        [
            ("Move Overhead", false),
            ("tm_soft_percent", false),
            ("futility_margin", true),
            ("lmr_base", true),
        ]
    );
    let dead: Vec<&str> = report.dead().iter().map(|o| o.name.as_str()).collect();
    assert_eq!(dead, ["Move Overhead", "tm_soft_percent"]);
    // an evaluation table does nothing while the network evaluates, and acts on the tables
    let dead_with = |eval: &str| -> Vec<String> {
        let mut a = engine_args("", &[]).0;
        a.engine = Some(format!("'{exe}' uci --tune-options --eval {eval}"));
        let s = EngineSettings::from_args(&a, "mobility.rook.mg,lmr_base")
            .unwrap()
            .unwrap();
        let report = check::check_options(&s.option_set(), 2000, &mut |_, _| {}).unwrap();
        assert!(report.deterministic);
        report.dead().iter().map(|o| o.name.clone()).collect()
    };
    assert_eq!(dead_with("nnue"), ["mobility.rook.mg"]);
    assert!(dead_with("classical").is_empty());
}

/// Bad input to `xqtune options check` fails with a message naming the problem.
fn options_check_errors_are_clear() {
    let exe = env!("CARGO_BIN_EXE_xqtune");
    let run = |args: &[&str]| -> (bool, String) {
        let o = std::process::Command::new(exe)
            .args(["options", "check"])
            .args(args)
            .output()
            .unwrap();
        (
            o.status.success(),
            String::from_utf8_lossy(&o.stderr).into(),
        )
    };
    let (ok, e) = run(&["--engine", "/nonexistent/engine", "--only", "Shift"]);
    assert!(
        !ok && e.contains("cannot start engine '/nonexistent/engine'"),
        "{e}"
    );
    let (ok, e) = run(&["--engine", "true", "--only", "Shift"]);
    assert!(!ok && e.contains("did not finish its handshake"), "{e}");
    let fake = fake_command();
    let (ok, e) = run(&["--engine", &fake]);
    assert!(!ok && e.contains("needs --only"), "{e}");
    let (ok, e) = run(&["--engine", &fake, "--only", "Nothing"]);
    assert!(!ok && e.contains("'Nothing' matches no spin option"), "{e}");
    let dir = temp_dir("check-errors");
    let file = dir.join("params.txt");
    std::fs::write(
        &file,
        "Shift, int, 10, 0, 40, 2, 0.002\nNope, int, 1, 0, 9, 1, 0.002\n",
    )
    .unwrap();
    let (ok, e) = run(&["--engine", &fake, "--param-file", file.to_str().unwrap()]);
    assert!(
        !ok && e.contains("line 2: the engine has no option 'Nope'"),
        "{e}"
    );
    let missing = dir.join("missing.txt");
    let (ok, e) = run(&["--engine", &fake, "--param-file", missing.to_str().unwrap()]);
    assert!(
        !ok && e.contains("cannot read") && e.contains("missing.txt"),
        "{e}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

/// An engine run checks its options first and refuses one that does nothing, unless
/// `--no-check`.
fn a_tune_refuses_an_option_that_does_nothing() {
    let out = temp_dir("dead");
    let a = spsa_args(&out, &["--only", "Shift,Dead Knob", "--verify", "none"]);
    let e = spsa::run_spsa_with(&a, spsa::play_games, None)
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("'Dead Knob' do(es) nothing") && e.contains("--no-check"),
        "{e}"
    );
    assert_eq!(std::fs::read_dir(&out).unwrap().count(), 0, "no run folder");
    let a = spsa_args(
        &out,
        &[
            "--only",
            "Shift,Dead Knob",
            "--verify",
            "none",
            "--no-check",
        ],
    );
    assert!(
        spsa::run_spsa_with(&a, spsa::play_games, None)
            .unwrap()
            .finished
    );
    std::fs::remove_dir_all(&out).unwrap();
}

/// xqtune's own parameters tuned against a pool of two engines: pair `j` of iteration `k` meets
/// opponent `(k + j) mod 2`, θ+ and θ− the same one, and the verification plays the tuned set
/// and the start against both.
fn tuning_against_a_pool() {
    #[derive(Parser)]
    struct T {
        #[command(flatten)]
        a: spsa::SpsaArgs,
    }
    let out = temp_dir("pool");
    let one = fake_command();
    let two = format!("{one} '{}'", out.join("starts.log").display());
    let a = T::parse_from([
        "t",
        "--only",
        "mobility.rook.mg",
        "--iterations",
        "3",
        "--games",
        "2",
        "--nodes",
        "100",
        "--max-plies",
        "30",
        "--opponent",
        one.as_str(),
        "--opponent",
        two.as_str(),
        "--save-games",
        "--verify",
        "fixed",
        "--verify-games",
        "4",
        "--concurrency",
        "1",
        "--out",
        out.to_str().unwrap(),
    ])
    .a;
    let run = spsa::run_spsa(&a).unwrap();
    assert!(run.finished);
    let cfg: serde_json::Value = serde_json::from_str(&read(&run.dir, "config.json")).unwrap();
    assert_eq!(cfg["args"]["opponents"].as_array().unwrap().len(), 2);
    for k in 0..3 {
        let pgn = read(&run.dir, &format!("games/iteration-{k:05}.pgn"));
        assert_eq!(pgn.matches("[Event ").count(), 4, "θ+ and θ− each a pair");
        let opp = format!("opp{}-", k % 2 + 1);
        let other = format!("opp{}-", (k + 1) % 2 + 1);
        assert_eq!(pgn.matches(opp.as_str()).count(), 4, "{pgn}");
        assert!(!pgn.contains(other.as_str()), "iteration {k}: {pgn}");
    }
    let v: serde_json::Value = serde_json::from_str(&read(&run.dir, "verification.json")).unwrap();
    let pool = &v["pool"];
    assert_eq!(pool["opponents"].as_array().unwrap().len(), 2, "{v}");
    assert_eq!(pool["tuned"]["games"], 4);
    assert_eq!(pool["start"]["games"], 4);
    for (o, name) in ["opp1-", "opp2-"].iter().enumerate() {
        let opp = &pool["opponents"][o];
        assert!(opp["name"].as_str().unwrap().starts_with(name), "{v}");
        assert_eq!(opp["tuned"]["games"], 2, "one pair each: {v}");
        assert_eq!(opp["start"]["games"], 2, "one pair each: {v}");
    }
    assert!(pool["elo"].is_number(), "{v}");
    assert!(
        v["stats"]["games"].as_u64().unwrap() >= 2,
        "self-play too: {v}"
    );
    std::fs::remove_dir_all(&out).unwrap();

    // An opponent that cannot start (`true` exits at once) stops the run before its first
    // game, naming it; nothing is left in the output folder.
    let out = temp_dir("pool-broken");
    let a = T::parse_from([
        "t",
        "--only",
        "mobility.rook.mg",
        "--iterations",
        "3",
        "--nodes",
        "100",
        "--opponent",
        one.as_str(),
        "--opponent",
        "true",
        "--out",
        out.to_str().unwrap(),
    ])
    .a;
    let e = spsa::run_spsa(&a).unwrap_err().to_string();
    assert!(
        e.contains("--opponent: engine 'opponent 2' (true) cannot play") && e.contains("handshake"),
        "{e}"
    );
    assert!(!out.exists() || std::fs::read_dir(&out).unwrap().next().is_none());
    let _ = std::fs::remove_dir_all(&out);
}
