//! `xqtune book` as a user runs it: an unbalanced suite made from a small one, the same file on
//! any number of threads, and clear errors for bad input.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn xqtune(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_xqtune"))
        .args(args)
        .output()
        .expect("run xqtune")
}

fn temp_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("xqtune-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

const SUITE: &str = "\
# test suite, CC BY 4.0 attribution line
startpos moves h2e2 h9g7 # level
fen 1nbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C5C1/9/RNBAKABNR w - - 0 1 # black lacks a chariot
c3c4 g6g5
rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C5C1/9/1NBAKABNR w - - 0 1
";

fn book(suite: &Path, out: &Path, threads: &str) -> Output {
    xqtune(&[
        "book",
        suite.to_str().unwrap(),
        "-o",
        out.to_str().unwrap(),
        "--eval",
        "classical",
        "--nodes",
        "3000",
        "--window",
        "300..5000",
        "--concurrency",
        threads,
    ])
}

/// The openings a chariot down for one side are kept, with their scores (red's view), under the
/// source's header; one thread and two give the same file.
#[test]
fn keeps_the_openings_in_the_window_whatever_the_thread_count() {
    let dir = temp_dir("book");
    let suite = dir.join("suite.txt");
    std::fs::write(&suite, SUITE).unwrap();
    let (one, two) = (dir.join("one.txt"), dir.join("two.txt"));
    let o = book(&suite, &one, "1");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(stdout.contains("2 of 4 openings in 300..5000"), "{stdout}");
    let o = book(&suite, &two, "2");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let text = std::fs::read_to_string(&one).unwrap();
    assert_eq!(text, std::fs::read_to_string(&two).unwrap());

    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines[0], "# test suite, CC BY 4.0 attribution line");
    let kept: Vec<(&str, i32)> = lines
        .iter()
        .filter(|l| !l.starts_with('#'))
        .map(|l| {
            let (line, score) = l.rsplit_once(" score ").unwrap();
            (line, score.parse().unwrap())
        })
        .collect();
    assert_eq!(kept.len(), 2);
    assert!(
        kept[0].0.ends_with("# black lacks a chariot |"),
        "{}",
        kept[0].0
    );
    assert!(kept[0].1 >= 300, "{kept:?}");
    assert_eq!(
        kept[1].0,
        "rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C5C1/9/1NBAKABNR w - - 0 1 #"
    );
    assert!(kept[1].1 <= -300, "{kept:?}");
    // The suite reads back as openings for `match --openings`.
    assert_eq!(xqtune::play::parse_openings(&text).unwrap().len(), 2);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn bad_input_is_named() {
    let dir = temp_dir("book-errors");
    let suite = dir.join("suite.txt");
    std::fs::write(&suite, "startpos moves h2e2\nstartpos moves h2e9\n").unwrap();
    let out = dir.join("out.txt");
    let s = suite.to_str().unwrap();
    let o = out.to_str().unwrap();
    let missing = dir.join("missing.txt");
    let cases: [(Vec<&str>, &str); 5] = [
        (vec!["book", s, "-o", o], "line 2"),
        (vec!["book", s, "-o", o, "--window", "200..80"], "200..80"),
        (vec!["book", s, "-o", o, "--window", "80"], "LO..HI"),
        (vec!["book", s, "-o", o, "--nodes", "0"], "--nodes"),
        (
            vec!["book", missing.to_str().unwrap(), "-o", o],
            "missing.txt",
        ),
    ];
    for (args, needle) in cases {
        let r = xqtune(&args);
        assert!(!r.status.success(), "{args:?} succeeded");
        let err = String::from_utf8_lossy(&r.stderr);
        assert!(err.contains(needle), "{args:?}: '{err}' lacks '{needle}'");
        assert!(!err.contains("panicked"), "{args:?}: {err}");
    }
    assert!(!out.exists());
    std::fs::remove_dir_all(&dir).unwrap();
}
