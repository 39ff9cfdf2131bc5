//! Commands run as a user runs them: `perft` output and argument errors, the network flags.

mod common;

use std::process::{Command, Output};

fn xqtune(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_xqtune"))
        .args(args)
        .output()
        .expect("run xqtune")
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Parses the last line `nodes N time_ms T nps X`.
fn summary(line: &str) -> u64 {
    let f: Vec<&str> = line.split_whitespace().collect();
    assert_eq!(f.len(), 6, "summary line '{line}'");
    assert_eq!((f[0], f[2], f[4]), ("nodes", "time_ms", "nps"), "'{line}'");
    f[3].parse::<u64>().expect("time_ms is a number");
    f[5].parse::<u64>().expect("nps is a number");
    f[1].parse().expect("nodes is a number")
}

#[test]
fn perft_prints_the_node_count() {
    let o = xqtune(&["perft", "--depth", "3"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 1);
    assert_eq!(summary(lines[0]), 79666);
}

#[test]
fn divide_prints_one_line_per_root_move_and_they_sum_to_the_total() {
    let fen = "r1ba1a3/4kn3/2n1b4/pNp1p1p1p/4c4/6P2/P1P2R2P/1CcC5/9/2BAKAB2 w - - 0 1";
    let o = xqtune(&["perft", "--depth", "2", "--fen", fen, "--divide"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    let lines: Vec<&str> = out.lines().collect();
    let (last, moves) = lines.split_last().expect("output");
    assert_eq!(moves.len(), 38);
    let mut sum = 0;
    let mut seen = std::collections::HashSet::new();
    for line in moves {
        let (mv, n) = line
            .split_once(": ")
            .unwrap_or_else(|| panic!("line '{line}'"));
        let b = mv.as_bytes();
        assert!(
            b.len() == 4
                && (b'a'..=b'i').contains(&b[0])
                && b[1].is_ascii_digit()
                && (b'a'..=b'i').contains(&b[2])
                && b[3].is_ascii_digit(),
            "move '{mv}'"
        );
        assert!(seen.insert(mv.to_string()), "{mv} twice");
        sum += n.parse::<u64>().expect("count");
    }
    assert_eq!(summary(last), 1128);
    assert_eq!(sum, 1128);
}

/// A command whose reader has gone (`xqtune perft --divide | head -1`) ends as `cat` does,
/// killed by SIGPIPE with nothing on stderr, not with a panic on its next print.
#[cfg(target_os = "linux")]
#[test]
fn a_closed_output_pipe_ends_the_command_quietly() {
    use std::os::unix::process::ExitStatusExt;
    let (reader, writer) = std::io::pipe().expect("pipe");
    drop(reader);
    let child = Command::new(env!("CARGO_BIN_EXE_xqtune"))
        .args(["perft", "--depth", "2", "--divide"])
        .stdout(writer)
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("run xqtune");
    let o = child.wait_with_output().expect("wait for xqtune");
    assert_eq!(o.status.signal(), Some(libc::SIGPIPE), "{:?}", o.status);
    assert_eq!(stderr(&o), "");
}

/// A command that starts engines keeps SIGPIPE ignored for their pipes, yet a closed stdout
/// (`xqtune match … | head -1`) still ends it by SIGPIPE on its next line, not with a panic.
#[cfg(target_os = "linux")]
#[test]
fn a_closed_output_pipe_ends_a_match_quietly() {
    use std::os::unix::process::ExitStatusExt;
    let dir = std::env::temp_dir().join(format!("xqtune-cli-pipe-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let (reader, writer) = std::io::pipe().expect("pipe");
    drop(reader);
    let child = Command::new(env!("CARGO_BIN_EXE_xqtune"))
        .args([
            "match",
            "--nodes",
            "200",
            "--games",
            "2",
            "--concurrency",
            "1",
        ])
        .current_dir(&dir)
        .stdout(writer)
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("run xqtune");
    let o = child.wait_with_output().expect("wait for xqtune");
    let _ = std::fs::remove_dir_all(&dir);
    assert_eq!(o.status.signal(), Some(libc::SIGPIPE), "{:?}", o.status);
    assert!(!stderr(&o).contains("panicked"), "{}", stderr(&o));
}

#[test]
fn bad_arguments_fail_with_a_clear_message() {
    let cases: [(&[&str], &str); 19] = [
        (&["perft", "--depth", "0"], "depth"),
        (&["perft", "--depth", "abc"], "depth"),
        (&["perft"], "--depth"),
        (&["perft", "--depth", "2", "--fen", "not a fen"], "FEN"),
        (
            &[
                "perft",
                "--depth",
                "2",
                "--fen",
                "4k4/9/9/9/9/9/9/9/9/2K6 w - - 0 1",
            ],
            "outside its palace",
        ),
        (&["perft", "--depth", "2", "--bogus"], "--bogus"),
        (
            &["--search-params", "params/search.json", "bench", "1"],
            "--search-params before the subcommand",
        ),
        // Counts and rates that mean nothing are refused before a run folder is made.
        (&["match", "--nodes", "0"], "--nodes"),
        (&["match", "--depth", "0"], "--depth"),
        (&["match", "--movetime", "0"], "--movetime"),
        (&["datagen", "--nodes", "0"], "--nodes"),
        (&["tune", "spsa", "--iterations", "0"], "--iterations"),
        (&["tune", "spsa", "--games", "3"], "pairs"),
        (&["tune", "spsa", "--lr", "nan"], "--lr"),
        (&["tune", "spsa", "--verify-games", "1"], "--verify-games"),
        (&["tune", "ga", "--generations", "0"], "--generations"),
        (&["tune", "ga", "--population", "1"], "--population"),
        (
            &["tune", "ga", "--elite", "10"],
            "--elite 10 must be less than --population 10",
        ),
        (
            &[
                "tune",
                "nnue",
                "--data",
                "datasets/ccpd-quiet.epd.gz",
                "--lambda",
                "0",
                "--lr",
                "inf",
            ],
            "--lr must be a positive number",
        ),
    ];
    for (args, needle) in cases {
        let o = xqtune(args);
        assert!(!o.status.success(), "{args:?} succeeded");
        assert!(o.stdout.is_empty(), "{args:?} printed to stdout");
        let err = stderr(&o);
        assert!(
            err.contains(needle),
            "{args:?}: '{err}' does not mention '{needle}'"
        );
        assert!(!err.contains("panicked"), "{args:?} panicked: {err}");
    }
}

/// `bench --net`, `match --a-net/--b-net` and `datagen --net`: a network changes the search,
/// a file that does not load is an error naming it, and a network for an external engine is
/// refused as a params file is.
#[test]
fn network_flags() {
    use xqtune::eval::nnue::{Activation, Network};
    let dir = std::env::temp_dir().join(format!("xqtune-cli-nnue-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let net = dir.join("random.nnue");
    Network::random(1, 32, 4, Activation::SCReLU)
        .save(&net)
        .unwrap();
    let net = net.to_str().unwrap();
    let nodes = |o: &Output| {
        assert!(o.status.success(), "{}", stderr(o));
        stdout(o)
            .lines()
            .find_map(|l| l.strip_prefix("Nodes searched: "))
            .expect("a node count")
            .to_string()
    };
    let classical = nodes(&xqtune(&["bench", "4", "--eval", "classical"]));
    let with_net = nodes(&xqtune(&["bench", "4", "--net", net]));
    assert_ne!(classical, with_net);
    assert_eq!(with_net, nodes(&xqtune(&["bench", "4", "--net", net])));
    // the default is the embedded network, which `--net embedded` names too
    let embedded = nodes(&xqtune(&["bench", "4"]));
    assert_ne!(embedded, classical);
    assert_ne!(embedded, with_net);
    assert_eq!(
        embedded,
        nodes(&xqtune(&["bench", "4", "--net", "embedded"]))
    );
    assert_eq!(embedded, nodes(&xqtune(&["bench", "4", "--eval", "nnue"])));
    let o = xqtune(&["bench", "4", "--eval", "neural"]);
    assert!(!o.status.success());
    assert!(stderr(&o).contains("neural"), "{}", stderr(&o));

    let o = xqtune(&[
        "match",
        "--a-net",
        net,
        "--games",
        "2",
        "--nodes",
        "200",
        "--max-plies",
        "16",
        "--concurrency",
        "1",
        "--no-save",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stdout(&o).contains("Score of random vs default"),
        "{}",
        stdout(&o)
    );

    let missing = dir.join("missing.nnue");
    let missing = missing.to_str().unwrap();
    let out = dir.join("data.txt");
    let cases: [(&[&str], &str); 4] = [
        (&["bench", "2", "--net", missing], missing),
        (&["match", "--b-net", missing, "--no-save"], missing),
        (
            &[
                "match",
                "--a-net",
                net,
                "--a-cmd",
                "some-engine",
                "--no-save",
            ],
            "network file or a command",
        ),
        (
            &["datagen", "--net", missing, "--out", out.to_str().unwrap()],
            missing,
        ),
    ];
    for (args, needle) in cases {
        let o = xqtune(args);
        assert!(!o.status.success(), "{args:?} succeeded");
        let err = stderr(&o);
        assert!(err.contains(needle), "{args:?}: '{err}' lacks '{needle}'");
        assert!(!err.contains("panicked"), "{args:?} panicked: {err}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// The run folder of a tiny match played into `out` with the extra flags `extra`.
fn tiny_match(out: &std::path::Path, extra: &[&str]) -> std::path::PathBuf {
    let out_s = out.to_str().unwrap();
    let mut args = vec![
        "match",
        "--nodes",
        "200",
        "--games",
        "4",
        "--concurrency",
        "1",
        "--seed",
        "11",
        "--max-plies",
        "40",
        "--out-dir",
        out_s,
    ];
    args.extend_from_slice(extra);
    let o = xqtune(&args);
    assert!(o.status.success(), "{}", stderr(&o));
    common::run_dir(out)
}

#[test]
fn compare_pairs_two_matches_game_by_game() {
    let root = std::env::temp_dir().join(format!("xqtune-compare-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&root);
    std::fs::create_dir_all(&root).unwrap();
    // engine A without its tempo bonus in the second match: other games, the same openings
    let params = std::fs::read_to_string("params/xiangqi.json")
        .unwrap()
        .replace("\"tempo\": {\"v\": 31,", "\"tempo\": {\"v\": 0,");
    let tempo0 = root.join("tempo0.json");
    std::fs::write(&tempo0, params).unwrap();
    let one = tiny_match(&root.join("one"), &[]);
    let two = tiny_match(&root.join("two"), &["--a", tempo0.to_str().unwrap()]);
    let run = |a: &std::path::Path, b: &std::path::Path| {
        xqtune(&["compare", a.to_str().unwrap(), b.to_str().unwrap()])
    };

    let o = run(&one, &one);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    assert!(
        out.contains("paired games: 4 over 2 openings (unpaired: 0 of the first, 0 of the second)"),
        "{out}"
    );
    assert!(
        out.contains("the first better in 0, the same in 4, worse in 0"),
        "{out}"
    );
    assert!(out.contains("difference: +0.0 ± 0.0 %"), "{out}");

    let o = run(&two, &one);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    assert!(out.contains("paired games: 4 over 2 openings"), "{out}");
    // each side's results over the four paired games
    for label in ["first: W", "second: W"] {
        let line = out.lines().find(|l| l.starts_with(label)).unwrap();
        let n: Vec<usize> = line
            .split(|c: char| !c.is_ascii_digit())
            .filter(|s| !s.is_empty())
            .take(3)
            .map(|s| s.parse().unwrap())
            .collect();
        assert_eq!(n.iter().sum::<usize>(), 4, "{line}");
    }

    // not a match's run folder; a damaged journal
    let o = run(&one, &root);
    assert!(!o.status.success());
    assert!(
        stderr(&o).contains("is not the run folder of a match"),
        "{}",
        stderr(&o)
    );
    std::fs::write(two.join("games.jsonl"), "{\"game\": 0}\n").unwrap();
    let o = run(&two, &one);
    assert!(!o.status.success());
    assert!(stderr(&o).contains("line 1"), "{}", stderr(&o));
    std::fs::remove_dir_all(&root).unwrap();
}
