//! UCI and UCCI sessions driven through the stdin/stdout of the built binary.

mod common;

use common::uci_session::{Session, bestmove, info_times};
use std::io::Write;
use std::process::{Command, Stdio};
use std::time::Duration;

/// The search's `bestmove` is a move of the start position.
fn assert_bestmove_from_start(out: &[String]) {
    assert!(
        xqtune::core::Position::startpos()
            .parse_move(&bestmove(out))
            .is_ok()
    );
}

/// The last `info depth` line of a search's output.
fn last_info(lines: &[String]) -> &String {
    lines
        .iter()
        .rev()
        .find(|l| l.starts_with("info depth"))
        .expect("an info depth line")
}

#[test]
fn uci_handshake_and_search() {
    let mut s = Session::start(&[]);
    s.send("uci");
    let hello = s.until("uciok");
    assert!(hello.iter().any(|l| l.starts_with("id name xqtune")));
    assert!(hello.iter().any(|l| l.starts_with("id author")));
    for opt in ["Hash", "Threads", "ParamsFile", "SearchParamsFile", "Skill"] {
        assert!(
            hello
                .iter()
                .any(|l| l.starts_with(&format!("option name {opt} type"))),
            "option {opt} missing: {hello:?}"
        );
    }
    s.send("setoption name Hash value 8");
    s.send("setoption name Threads value 1");
    s.send("isready");
    assert_eq!(s.until("readyok"), vec!["readyok"]);
    s.send("ucinewgame");
    s.send("position startpos moves h2e2 h9g7");
    s.send("go depth 5");
    let out = s.until("bestmove");
    let infos: Vec<&String> = out.iter().filter(|l| l.starts_with("info depth")).collect();
    assert_eq!(infos.len(), 5, "{out:?}");
    for key in [
        " seldepth ",
        " score cp ",
        " nodes ",
        " nps ",
        " time ",
        " pv ",
    ] {
        assert!(infos[4].contains(key), "'{key}' missing in {}", infos[4]);
    }
    let mut pos = xqtune::core::Position::startpos();
    for m in ["h2e2", "h9g7"] {
        let mv = pos.parse_move(m).unwrap();
        pos.make_move(mv);
    }
    assert!(pos.parse_move(&bestmove(&out)).is_ok(), "{out:?}");
    s.quit();
}

#[test]
fn xqtune_uci_subcommand_and_mate_score() {
    let mut s = Session::start(&["uci"]);
    s.send("position fen 4k4/9/9/9/9/9/9/9/1R7/R2K5 w - - 0 1");
    s.send("go depth 6");
    let out = s.until("bestmove");
    assert!(
        out.iter().any(|l| l.contains("score mate 2")),
        "no mate score: {out:?}"
    );
    s.quit();
}

#[test]
fn stop_and_isready_during_infinite_search() {
    let mut s = Session::start(&[]);
    s.send("position startpos");
    s.send("go infinite");
    std::thread::sleep(Duration::from_millis(300));
    s.send("isready");
    let ready = s.until("readyok");
    assert!(
        !ready.iter().any(|l| l.starts_with("bestmove")),
        "{ready:?}"
    );
    s.send("stop");
    let out = s.until("bestmove");
    let m = bestmove(&out);
    assert!(xqtune::core::Position::startpos().parse_move(&m).is_ok());
    s.quit();
}

/// The clock of the side to move bounds the search, by the engine's own account: the `time`
/// of its `info` lines, which no process or pipe latency reaches. (The limits themselves are
/// checked in the session's unit tests, the wall clock in `timing.rs`.)
#[test]
fn clock_search_respects_the_clock() {
    let mut s = Session::start(&[]);
    // Black to move with 400 ms left and red with ten minutes: searching on red's clock would
    // think for seconds, and any depth limit would be far away.
    s.send("position startpos moves h2e2");
    let clock_ms = 400;
    s.send(&format!("go wtime 600000 btime {clock_ms} winc 0 binc 0"));
    let out = s.until("bestmove");
    assert_ne!(bestmove(&out), "(none)");
    let times = info_times(&out);
    assert!(!times.is_empty(), "{out:?}");
    // No iteration finished past the clock (the hard limit is at most 80% of it, and the
    // search reads the clock every few thousand nodes).
    assert!(
        times.iter().all(|&t| t < clock_ms),
        "{times:?} over {clock_ms} ms"
    );

    let movetime_ms = 200;
    s.send(&format!("go movetime {movetime_ms}"));
    let out = s.until("bestmove");
    assert_ne!(bestmove(&out), "(none)");
    // Without the limit the search would go on for seconds; with it, the last iteration ends
    // within a clock check of the movetime, and twice the movetime is slack to spare.
    let times = info_times(&out);
    assert!(
        times.iter().all(|&t| t < 2 * movetime_ms),
        "{times:?} with movetime {movetime_ms} ms"
    );
    s.quit();
}

#[test]
fn malformed_lines_get_errors_and_the_engine_keeps_working() {
    let mut s = Session::start(&[]);
    for bad in [
        "frobnicate",
        "go depth banana",
        "go sideways 3",
        "position",
        "position fen not/a/fen w",
        "position middlegame",
        "setoption name Hash value lots",
        "setoption name Threads value 0",
        "setoption name Threads value 257",
        "setoption name Threads value many",
        "setoption name NoSuchOption value 1",
        "setoption name Skill value godlike",
        "setoption name ParamsFile value /nonexistent/params.json",
        "setoption name SearchParamsFile value /nonexistent/search.json",
    ] {
        s.send(bad);
        s.send("isready");
        let out = s.until("readyok");
        assert!(
            out.iter().any(|l| l.starts_with("info string error:")),
            "no error for '{bad}': {out:?}"
        );
    }
    s.send("go depth 2");
    let out = s.until("bestmove");
    assert_bestmove_from_start(&out);
    s.quit();
}

#[test]
fn illegal_move_in_position_keeps_previous_position() {
    let mut s = Session::start(&[]);
    // Black to move after h2e2: a red-only reply below must be from this position.
    s.send("position startpos moves h2e2");
    s.send("position startpos moves h2e2 h9g7 e2e9 a9a8");
    s.send("isready");
    let out = s.until("readyok");
    let err = out
        .iter()
        .find(|l| l.starts_with("info string error:"))
        .expect("error reported");
    assert!(err.contains("e2e9"), "{err}");
    s.send("go depth 3");
    let out = s.until("bestmove");
    let mut pos = xqtune::core::Position::startpos();
    let mv = pos.parse_move("h2e2").unwrap();
    pos.make_move(mv);
    assert!(
        pos.parse_move(&bestmove(&out)).is_ok(),
        "bestmove not from the kept position: {out:?}"
    );
    s.quit();
}

#[test]
fn go_nodes_is_reproducible_after_ucinewgame() {
    let mut results = Vec::new();
    for _ in 0..2 {
        let mut s = Session::start(&[]);
        for _ in 0..2 {
            s.send("ucinewgame");
            s.send("position startpos moves b2e2 b9c7");
            s.send("go nodes 20000");
            let out = s.until("bestmove");
            let nodes: Vec<&str> = last_info(&out).split_whitespace().collect();
            let i = nodes.iter().position(|&t| t == "nodes").unwrap();
            results.push((
                bestmove(&out),
                nodes[i + 1].to_string(),
                nodes[1].to_string(),
            ));
        }
        s.quit();
    }
    assert!(results.windows(2).all(|w| w[0] == w[1]), "{results:?}");
}

#[test]
fn ucci_session() {
    let mut s = Session::start(&[]);
    s.send("ucci");
    let hello = s.until("ucciok");
    assert!(hello.iter().any(|l| l.starts_with("id name xqtune")));
    assert!(hello.iter().any(|l| l.starts_with("option hashsize")));
    s.send("setoption hashsize 8");
    s.send("setoption usemillisec true");
    s.send("setoption skill medium");
    s.send("isready");
    let out = s.until("readyok");
    assert!(!out.iter().any(|l| l.contains("error")), "{out:?}");
    s.send("position fen rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C5C1/9/RNBAKABNR w - - 0 1 moves h2e2");
    s.send("go time 2000 increment 0");
    let out = s.until("bestmove");
    assert!(out.iter().any(|l| l.starts_with("info depth")), "{out:?}");
    let mut pos = xqtune::core::Position::startpos();
    let mv = pos.parse_move("h2e2").unwrap();
    pos.make_move(mv);
    assert!(pos.parse_move(&bestmove(&out)).is_ok());
    s.send("go depth 3");
    let out = s.until("bestmove");
    assert!(pos.parse_move(&bestmove(&out)).is_ok());
    // No legal move: UCCI answers nobestmove.
    s.send("position fen 3k5/R8/9/9/9/9/9/9/9/3RK4 b - - 0 1");
    s.send("go depth 3");
    s.until("nobestmove");
    s.send("quit");
    s.until("bye");
    assert!(s.child.wait().unwrap().success());
}

#[test]
fn no_legal_move_gives_bestmove_none() {
    let mut s = Session::start(&[]);
    s.send("position fen 3k5/R8/9/9/9/9/9/9/9/3RK4 b - - 0 1");
    s.send("go depth 4");
    let out = s.until("bestmove");
    assert_eq!(out.last().unwrap(), "bestmove (none)");
    s.quit();
}

#[test]
fn end_of_input_lets_a_finite_search_finish() {
    let out = Command::new(env!("CARGO_BIN_EXE_xqtune"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .and_then(|mut c| {
            c.stdin
                .take()
                .unwrap()
                .write_all(b"position startpos\ngo depth 4\n")?;
            c.wait_with_output()
        })
        .unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("info depth 4"), "{text}");
    assert!(
        text.lines().last().unwrap().starts_with("bestmove"),
        "{text}"
    );
}

#[test]
fn bad_params_flag_is_refused() {
    let out = Command::new(env!("CARGO_BIN_EXE_xqtune"))
        .args(["uci", "--search-params", "/nonexistent/search.json"])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("/nonexistent/search.json"), "{err}");
}

#[test]
fn bad_eval_params_flag_is_refused_without_subcommand() {
    let out = Command::new(env!("CARGO_BIN_EXE_xqtune"))
        .args(["--params", "/nonexistent/xiangqi.json"])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("/nonexistent/xiangqi.json"), "{err}");
}

#[test]
fn skill_level_caps_the_depth() {
    let mut s = Session::start(&[]);
    s.send("setoption name Skill value easy");
    s.send("position startpos");
    s.send("go depth 10");
    let out = s.until("bestmove");
    let depths: Vec<&String> = out.iter().filter(|l| l.starts_with("info depth")).collect();
    // Easy searches two plies, unless its 200 ms cap ends the search first, which only a
    // machine too loaded to finish two plies in time does (the engine's clock then says so).
    let capped = info_times(&out).last().is_some_and(|&t| t >= 200);
    assert!(
        depths.len() == 2 || (depths.len() == 1 && capped),
        "easy searches two plies: {out:?}"
    );
    s.quit();
}

#[test]
fn bench_prints_the_signature() {
    let out = Command::new(env!("CARGO_BIN_EXE_xqtune"))
        .args(["bench", "2"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    let nodes: u64 = text
        .lines()
        .find_map(|l| l.strip_prefix("Nodes searched: "))
        .expect("Nodes searched line")
        .trim()
        .parse()
        .unwrap();
    assert!(nodes > 0);
    assert!(text.lines().any(|l| l.starts_with("Nodes/second: ")));
    // Same signature on a second run.
    let again = Command::new(env!("CARGO_BIN_EXE_xqtune"))
        .args(["bench", "2"])
        .output()
        .unwrap();
    let text2 = String::from_utf8_lossy(&again.stdout);
    assert!(
        text2.contains(&format!("Nodes searched: {nodes}")),
        "{text2}"
    );
}

/// The `option` lines of a `uci` handshake.
fn option_lines(args: &[&str]) -> Vec<String> {
    let mut s = Session::start(args);
    s.send("uci");
    let hello = s.until("uciok");
    s.quit();
    hello
        .into_iter()
        .filter(|l| l.starts_with("option "))
        .collect()
}

/// Every parameter, evaluation (Xiangqi and Jieqi terms) then search, in flat order.
fn all_specs() -> Vec<xqtune::tunable::ParamSpec> {
    let mut specs = xqtune::eval::EvalParams::default().specs();
    specs.extend(xqtune::search::SearchParams::default().specs());
    specs
}

#[test]
fn tune_options_offer_every_parameter_and_only_with_the_flag() {
    let plain = option_lines(&["uci"]);
    let tuned = option_lines(&["uci", "--tune-options"]);
    let specs = all_specs();
    assert!(specs.iter().any(|s| s.name.starts_with("jieqi.")));
    assert_eq!(tuned.len(), plain.len() + specs.len());
    assert_eq!(tuned[..plain.len()], plain[..]);
    for (line, s) in tuned[plain.len()..].iter().zip(&specs) {
        assert_eq!(
            *line,
            format!(
                "option name {} type spin default {} min {} max {}",
                s.name, s.value, s.min, s.max
            )
        );
    }
    // Option names are unique and none shadows a fixed option.
    let mut names: Vec<String> = specs.iter().map(|s| s.name.to_lowercase()).collect();
    names.sort();
    names.dedup();
    assert_eq!(names.len(), specs.len());
    for fixed in [
        "hash",
        "threads",
        "clear hash",
        "paramsfile",
        "skill",
        "uci_variant",
        "evalfile",
        "use nnue",
    ] {
        assert!(!names.iter().any(|n| n == fixed), "{fixed}");
    }
}

/// The last `info depth` line's score and pv after `go depth 5` in a position where black
/// lacks a rook (so that the rook's value shows in the score).
fn search_signature(s: &mut Session) -> String {
    s.send("ucinewgame");
    s.send("position fen 1nbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C5C1/9/RNBAKABNR w - - 0 1");
    s.send("go depth 5");
    let out = s.until("bestmove");
    let last = last_info(&out);
    let score = last.split(" nodes ").next().unwrap().to_string();
    let pv = last.split(" pv ").nth(1).unwrap();
    format!("{score} | {pv} | {}", out.last().unwrap())
}

#[test]
fn tune_option_setoption_equals_a_params_file() {
    let eval = xqtune::eval::EvalParams::default();
    let specs = eval.specs();
    let (i, rook) = specs
        .iter()
        .enumerate()
        .find(|(_, s)| s.name == "material.rook.mg")
        .expect("a rook value");
    let mut v = eval.to_vec();
    v[i] = rook.min;
    let file = std::env::temp_dir().join(format!("xqtune-tune-opt-{}.json", std::process::id()));
    std::fs::write(&file, eval.from_vec(&v).to_json_string()).unwrap();

    // the tables, not the embedded network, read the evaluation parameters
    let mut by_option = Session::start(&["uci", "--tune-options", "--eval", "classical"]);
    let default = search_signature(&mut by_option);
    by_option.send(&format!(
        "setoption name material.rook.mg value {}",
        rook.min
    ));
    let set = search_signature(&mut by_option);
    by_option.quit();
    let mut by_file = Session::start(&[
        "uci",
        "--params",
        file.to_str().unwrap(),
        "--eval",
        "classical",
    ]);
    let from_file = search_signature(&mut by_file);
    by_file.quit();
    let _ = std::fs::remove_file(&file);
    assert_eq!(set, from_file);
    assert_ne!(
        set, default,
        "a rook at its minimum should change the search"
    );

    // A search parameter set away and back: the default search returns.
    let mut s = Session::start(&["uci", "--tune-options"]);
    let search = xqtune::search::SearchParams::default().specs();
    let p = &search[0];
    let before = search_signature(&mut s);
    s.send(&format!("setoption name {} value {}", p.name, p.max));
    s.send(&format!("setoption name {} value {}", p.name, p.value));
    assert_eq!(search_signature(&mut s), before);
    s.quit();
}

#[test]
fn tune_option_errors_name_the_option() {
    let mut s = Session::start(&["uci", "--tune-options"]);
    let p = &all_specs()[0];
    for (line, needle) in [
        (
            format!("setoption name {} value {}", p.name, p.max + 1),
            format!("{}: {} outside {}..{}", p.name, p.max + 1, p.min, p.max),
        ),
        (
            format!("setoption name {} value ten", p.name),
            format!("{}: 'ten' is not an integer", p.name),
        ),
        (
            "setoption name material.dragon.mg value 1".to_string(),
            "unknown option 'material.dragon.mg'".to_string(),
        ),
    ] {
        s.send(&line);
        s.send("isready");
        let out = s.until("readyok");
        assert!(
            out.iter()
                .any(|l| l.starts_with("info string error:") && l.contains(&needle)),
            "'{line}': {out:?}"
        );
    }
    s.quit();
    // Without the flag a parameter is not an option.
    let mut s = Session::start(&["uci"]);
    s.send(&format!("setoption name {} value {}", p.name, p.value));
    s.send("isready");
    let out = s.until("readyok");
    assert!(
        out[0].contains(&format!("unknown option '{}'", p.name)),
        "{out:?}"
    );
    s.quit();
}

#[test]
fn print_tune_gives_six_field_lines() {
    let o = Command::new(env!("CARGO_BIN_EXE_xqtune"))
        .args(["uci", "--print-tune"])
        .output()
        .unwrap();
    assert!(o.status.success());
    let text = String::from_utf8(o.stdout).unwrap();
    let specs = all_specs();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), specs.len());
    for (line, s) in lines.iter().zip(&specs) {
        let f: Vec<&str> = line.split(',').collect();
        assert_eq!(f.len(), 6, "{line}");
        assert_eq!(f[0], s.name);
        assert_eq!(f[1..4], [s.value, s.min, s.max].map(|x| x.to_string()));
        // exactly the c_end and r_end of in-process `tune spsa` with its defaults
        let ends: (f64, f64) = (f[4].parse().unwrap(), f[5].parse().unwrap());
        assert_eq!(
            ends,
            s.spsa_ends(xqtune::tunable::SPSA_C_END_STEPS, xqtune::tunable::SPSA_LR),
            "{line}"
        );
        assert_eq!(ends.0, 2.0 * s.step() as f64, "{line}");
    }
}

#[test]
fn jieqi_view_fen_with_pool_is_read() {
    let arbiter = xqtune::core::arbiter::Arbiter::from_seed(11, Default::default());
    let fen = arbiter.view_fen(xqtune::core::Color::Red);
    let mut s = Session::start(&["uci"]);
    s.send(&format!("position fen {fen}"));
    s.send("go nodes 2000");
    let out = s.until("bestmove");
    assert!(!out.iter().any(|l| l.contains("error")), "{out:?}");
    let mv = bestmove(&out);
    assert_eq!(mv.len(), 4, "{mv}");
    let view = arbiter.view(xqtune::core::Color::Red);
    assert!(view.legal_moves().iter().any(|m| m.uci() == mv), "{mv}");
    s.quit();
}

/// `d` and a node-limited search's last `info` (time and nps dropped) after the commands.
fn position_signature(commands: &[&str]) -> Vec<String> {
    let mut s = Session::start(&["uci"]);
    for c in commands {
        s.send(c);
    }
    s.send("d");
    s.send("go nodes 3000");
    let out = s.until("bestmove");
    s.quit();
    out.iter()
        .map(|l| {
            l.split(" nps ")
                .next()
                .unwrap_or(l)
                .split(" time ")
                .next()
                .unwrap_or(l)
                .to_string()
        })
        .collect()
}

#[test]
fn position_extending_the_previous_one_equals_a_full_replay() {
    // A shuffle that repeats positions, so that a lost history would change the search.
    let game = "position startpos moves h2e2 h9g7 h0g2 i9h9 g2h0 h9i9 h0g2 i9h9 g2h0";
    let full = position_signature(&[game]);
    let stepwise = position_signature(&[
        "position startpos moves h2e2",
        "position startpos moves h2e2 h9g7 h0g2",
        "position startpos moves h2e2 h9g7 h0g2 i9h9 g2h0 h9i9",
        // An illegal extension is refused and leaves the position as it was.
        "position startpos moves h2e2 h9g7 h0g2 i9h9 g2h0 h9i9 a0a9",
        game,
    ]);
    assert!(
        stepwise[0].contains("move 7 'a0a9' refused"),
        "{stepwise:?}"
    );
    assert_eq!(full[..], stepwise[1..]);
    // Not an extension (other moves, other setup): read from scratch.
    let other = position_signature(&["position startpos moves h0g2", game]);
    assert_eq!(full, other);
    let back = position_signature(&[game, "position startpos moves h2e2 h9g7"]);
    assert_eq!(
        back,
        position_signature(&["position startpos moves h2e2 h9g7"])
    );
}

/// The `nodes` of an `info` line.
fn info_nodes(line: &str) -> u64 {
    let t: Vec<&str> = line.split_whitespace().collect();
    let i = t.iter().position(|&w| w == "nodes").unwrap();
    t[i + 1].parse().unwrap()
}

/// Two `go nodes 20000` after `ucinewgame`: (bestmove, last info's nodes, depth) of each.
fn two_node_searches(s: &mut Session) -> Vec<(String, u64, String)> {
    (0..2)
        .map(|_| {
            s.send("ucinewgame");
            s.send("position startpos moves b2e2 b9c7");
            s.send("go nodes 20000");
            let out = s.until("bestmove");
            let last = last_info(&out);
            let depth = last.split_whitespace().nth(2).unwrap().to_string();
            (bestmove(&out), info_nodes(last), depth)
        })
        .collect()
}

#[test]
fn threads_option_runs_lazy_smp_and_one_thread_is_deterministic_again() {
    let mut s = Session::start(&["uci"]);
    s.send("uci");
    let hello = s.until("uciok");
    assert!(
        hello
            .iter()
            .any(|l| l == "option name Threads type spin default 1 min 1 max 256"),
        "{hello:?}"
    );
    let single = two_node_searches(&mut s);
    assert_eq!(single[0], single[1]);

    for bad in ["0", "257", "two"] {
        s.send(&format!("setoption name Threads value {bad}"));
        s.send("isready");
        let out = s.until("readyok");
        assert!(
            out.iter()
                .any(|l| l.starts_with("info string error: option Threads") && l.contains(bad)),
            "{bad}: {out:?}"
        );
    }

    s.send("setoption name Threads value 2");
    s.send("isready");
    let out = s.until("readyok");
    assert!(!out.iter().any(|l| l.contains("error")), "{out:?}");
    let pos = xqtune::core::Position::startpos();
    s.send("position startpos");
    // A node limit counts both threads' nodes: the reports stay within it (give or take the
    // threads' publication interval), which a per-thread limit would not.
    s.send("go nodes 300000");
    let out = s.until("bestmove");
    assert!(pos.parse_move(&bestmove(&out)).is_ok(), "{out:?}");
    for l in out.iter().filter(|l| l.starts_with("info depth")) {
        assert!(info_nodes(l) <= 300_000 + 512, "{l}");
    }
    // movetime and stop end the search of both threads: `bestmove` comes only after the
    // helpers are joined, and by the engine's own clock the iterations end with the movetime.
    // (How long the answers take on the wall clock is checked in `timing.rs`.)
    s.send("go movetime 300");
    let out = s.until("bestmove");
    assert!(pos.parse_move(&bestmove(&out)).is_ok(), "{out:?}");
    assert!(info_times(&out).iter().all(|&t| t < 2 * 300), "{out:?}");
    s.send("go infinite");
    std::thread::sleep(Duration::from_millis(200));
    s.send("stop");
    let out = s.until("bestmove");
    assert!(pos.parse_move(&bestmove(&out)).is_ok(), "{out:?}");

    // Back to one thread: the same node-limited searches as before.
    s.send("setoption name Threads value 1");
    assert_eq!(two_node_searches(&mut s), single);
    s.quit();
}

/// Sends `lines`, then `isready`, and returns the error lines the engine answered with.
fn error_lines(s: &mut Session, lines: &[&str]) -> Vec<String> {
    for l in lines {
        s.send(l);
    }
    s.send("isready");
    s.until("readyok")
        .into_iter()
        .filter(|l| l.contains("error"))
        .collect()
}

#[test]
fn ucci_threads_option() {
    let mut s = Session::start(&[]);
    s.send("ucci");
    let hello = s.until("ucciok");
    assert!(
        hello
            .iter()
            .any(|l| l == "option threads type spin min 1 max 256 default 1"),
        "{hello:?}"
    );
    let errors = error_lines(&mut s, &["setoption threads 2", "setoption threads 300"]);
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert!(errors[0].contains("threads") && errors[0].contains("300"));
    s.send("position startpos");
    s.send("go depth 6");
    let out = s.until("bestmove");
    assert_bestmove_from_start(&out);
    s.quit();
}

#[test]
fn move_overhead_option_is_offered_checked_and_keeps_time_back() {
    let mut s = Session::start(&[]);
    s.send("uci");
    let hello = s.until("uciok");
    assert!(
        hello
            .iter()
            .any(|l| l == "option name Move Overhead type spin default 30 min 0 max 5000"),
        "{hello:?}"
    );
    let errors = error_lines(
        &mut s,
        &[
            "setoption name Move Overhead value lots",
            "setoption name Move Overhead value 5001",
        ],
    );
    assert_eq!(errors.len(), 2, "{errors:?}");
    assert!(errors[0].contains("Move Overhead") && errors[0].contains("lots"));
    assert!(errors[1].contains("Move Overhead") && errors[1].contains("5001"));
    // With all but 50 ms of a 1-second clock kept back, the search answers well inside it by
    // its own clock. (The session's unit tests check that the overhead reaches the time
    // manager, whose hard limit then stays inside the 50 ms left; `timing.rs` the wall clock.)
    s.send("setoption name Move Overhead value 950");
    s.send("position startpos");
    s.send("go wtime 1000 btime 1000");
    let out = s.until("bestmove");
    assert_bestmove_from_start(&out);
    assert!(info_times(&out).iter().all(|&t| t < 1000), "{out:?}");
    s.quit();
}

/// A random network's file in a fresh temporary folder (a stand-in: there is no trained one).
fn network_file(name: &str, seed: u64) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("xqtune-uci-nnue-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    xqtune::eval::nnue::Network::random(seed, 32, 4, xqtune::eval::nnue::Activation::SCReLU)
        .save(&path)
        .unwrap();
    path
}

/// The last `info depth` line of `go depth 5` from the start after `ucinewgame`, without its
/// clock fields, and the best move: what the evaluation in use decides.
fn start_signature(s: &mut Session) -> String {
    s.send("ucinewgame");
    s.send("position startpos");
    s.send("go depth 5");
    let out = s.until("bestmove");
    let last = last_info(&out);
    let score = last.split(" nps ").next().unwrap();
    let pv = last.split(" pv ").nth(1).unwrap();
    format!("{score} | {pv} | {}", out.last().unwrap())
}

/// The embedded network is the default; `Use NNUE false` (or `--eval classical`) switches to
/// the tables and back, `EvalFile` loads another network, a file that does not load is an error
/// naming it and keeps the previous network, and `--net` starts the engine as `EvalFile` plus
/// `Use NNUE true` do.
#[test]
fn nnue_options_load_switch_and_keep_the_previous_network() {
    let net = network_file("a.nnue", 1);
    let net_text = net.display().to_string();
    let bad = net.with_file_name("truncated.nnue");
    let bytes = std::fs::read(&net).unwrap();
    std::fs::write(&bad, &bytes[..bytes.len() / 2]).unwrap();
    let bad_text = bad.display().to_string();

    let mut s = Session::start(&[]);
    s.send("uci");
    let hello = s.until("uciok");
    for line in [
        "option name EvalFile type string default <empty>",
        "option name Use NNUE type check default true",
    ] {
        assert!(hello.iter().any(|l| l == line), "{line} missing: {hello:?}");
    }
    let embedded = start_signature(&mut s);
    assert!(error_lines(&mut s, &["setoption name Use NNUE value false"]).is_empty());
    let classical = start_signature(&mut s);
    assert_ne!(classical, embedded);

    // Loaded but not in use: still classical.
    s.send(&format!("setoption name EvalFile value {net_text}"));
    s.send("isready");
    let out = s.until("readyok");
    assert!(
        out.iter()
            .any(|l| l.starts_with("info string EvalFile:") && l.contains(&net_text)),
        "{out:?}"
    );
    assert!(!out.iter().any(|l| l.contains("error")), "{out:?}");
    assert_eq!(start_signature(&mut s), classical);
    assert!(error_lines(&mut s, &["setoption name Use NNUE value true"]).is_empty());
    let nnue = start_signature(&mut s);
    assert_ne!(nnue, classical);
    assert_ne!(nnue, embedded);

    // Bad files: an error naming the file and the problem; the network stays.
    let errors = error_lines(
        &mut s,
        &[
            &format!("setoption name EvalFile value {bad_text}"),
            "setoption name EvalFile value /nonexistent/x.nnue",
            "setoption name Use NNUE value maybe",
        ],
    );
    assert_eq!(errors.len(), 3, "{errors:?}");
    assert!(errors[0].contains(&bad_text) && errors[0].contains("truncated"));
    assert!(errors[1].contains("/nonexistent/x.nnue"));
    assert!(errors[2].contains("maybe"));
    assert_eq!(start_signature(&mut s), nnue);

    assert!(error_lines(&mut s, &["setoption name Use NNUE value false"]).is_empty());
    assert_eq!(start_signature(&mut s), classical);
    s.quit();

    // --net: the same engine from the start.
    let mut s = Session::start(&["uci", "--net", &net_text]);
    assert_eq!(start_signature(&mut s), nnue);
    // EvalFile empty: the embedded network again.
    s.send("setoption name EvalFile value <empty>");
    assert_eq!(start_signature(&mut s), embedded);
    s.quit();

    // --eval classical: the tables, with the embedded network loaded for Use NNUE true.
    let mut s = Session::start(&["uci", "--eval", "classical"]);
    assert_eq!(start_signature(&mut s), classical);
    assert!(error_lines(&mut s, &["setoption name Use NNUE value true"]).is_empty());
    assert_eq!(start_signature(&mut s), embedded);
    s.quit();

    // UCCI spells them evalfile and usennue.
    let mut s = Session::start(&[]);
    s.send("ucci");
    let hello = s.until("ucciok");
    assert!(
        hello
            .iter()
            .any(|l| l == "option evalfile type string default <empty>"),
        "{hello:?}"
    );
    assert!(
        hello
            .iter()
            .any(|l| l.starts_with("option usennue type check"))
    );
    let errors = error_lines(
        &mut s,
        &[
            &format!("setoption evalfile {net_text}"),
            "setoption usennue true",
        ],
    );
    assert!(errors.is_empty(), "{errors:?}");
    s.send("position startpos");
    s.send("go depth 3");
    assert_bestmove_from_start(&s.until("bestmove"));
    s.quit();

    // A --net that does not load stops the engine with the file named.
    let o = Command::new(env!("CARGO_BIN_EXE_xqtune"))
        .args(["uci", "--net", &bad_text])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(!o.status.success());
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains(&bad_text) && err.contains("truncated"),
        "{err}"
    );
    let _ = std::fs::remove_dir_all(net.parent().unwrap());
}

/// `start_signature` for the Jieqi deal's start (`UCI_Variant jieqi`, `position startpos`).
fn jieqi_signature(s: &mut Session) -> String {
    s.send("setoption name UCI_Variant value jieqi");
    let sig = start_signature(s);
    s.send("setoption name UCI_Variant value xiangqi");
    sig
}

/// A Jieqi network file (`EvalFile`) takes the Jieqi place and leaves the Xiangqi network as
/// it was; `Use NNUE false` turns both off; a Xiangqi network never scores Jieqi positions.
#[test]
fn a_jieqi_network_scores_jieqi_positions_only() {
    use xqtune::eval::nnue::{Activation, Architecture, FeatureSetId, Network};
    let dir = std::env::temp_dir().join(format!("xqtune-uci-jieqi-nnue-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let jnet = dir.join("j.nnue");
    let arch = Architecture::new(FeatureSetId::JieqiPlanes, 32, 4, Activation::SCReLU);
    Network::random_with(9, arch).save(&jnet).unwrap();
    let jtext = jnet.display().to_string();

    let mut s = Session::start(&[]);
    s.send("uci");
    s.until("uciok");
    let (xq, jq) = (start_signature(&mut s), jieqi_signature(&mut s));
    s.send(&format!("setoption name EvalFile value {jtext}"));
    s.send("isready");
    let out = s.until("readyok");
    assert!(
        out.iter()
            .any(|l| l.starts_with("info string EvalFile:") && l.contains("for jieqi")),
        "{out:?}"
    );
    assert_eq!(start_signature(&mut s), xq);
    let with_net = jieqi_signature(&mut s);
    assert_ne!(with_net, jq);
    // The tables everywhere, then back.
    assert!(error_lines(&mut s, &["setoption name Use NNUE value false"]).is_empty());
    let (xq_classical, jq_classical) = (start_signature(&mut s), jieqi_signature(&mut s));
    assert_ne!(xq_classical, xq);
    assert_ne!(jq_classical, with_net);
    assert!(error_lines(&mut s, &["setoption name Use NNUE value true"]).is_empty());
    assert_eq!(jieqi_signature(&mut s), with_net);
    s.quit();

    // --net with a Jieqi file: the same engine from the start.
    let mut s = Session::start(&["uci", "--net", &jtext]);
    assert_eq!(start_signature(&mut s), xq);
    assert_eq!(jieqi_signature(&mut s), with_net);
    s.quit();

    // A Xiangqi network alone (and the classical Jieqi evaluation): Jieqi searches are the
    // classical ones.
    let xnet = network_file("x-for-jieqi.nnue", 3);
    let mut s = Session::start(&["uci", "--eval", "classical"]);
    s.send(&format!("setoption name EvalFile value {}", xnet.display()));
    assert!(error_lines(&mut s, &["setoption name Use NNUE value true"]).is_empty());
    let j = jieqi_signature(&mut s);
    if xqtune::eval::nnue::Network::embedded(xqtune::core::Variant::Jieqi).is_none() {
        assert_eq!(j, jq_classical);
    } else {
        assert_eq!(j, jq);
    }
    s.quit();
    let _ = std::fs::remove_dir_all(&dir);
}
