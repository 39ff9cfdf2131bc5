//! `xqtune label` as a user runs it, with `xqtune uci` itself as the scoring engine: each kept
//! line carries exactly the score the engine gives the position alone, in red's view, and the
//! game's result; the same file at any concurrency and after a kill -9; clear errors for bad
//! input.

mod common;

use common::uci_session::{Session, bestmove};
use std::io::BufRead;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use xqtune::core::Position;

fn xqtune() -> Command {
    Command::new(env!("CARGO_BIN_EXE_xqtune"))
}

fn temp_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("xqtune-label-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// The first `n` positions of the shipped master-game set (`FEN | result | id`, both sides to
/// move, each with its game's result).
fn positions(dir: &Path, n: usize) -> PathBuf {
    let f = std::fs::File::open(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("datasets/ccpd-quiet.epd.gz"),
    )
    .unwrap();
    let text: String = std::io::BufReader::new(flate2::read::GzDecoder::new(f))
        .lines()
        .take(n)
        .map(|l| l.unwrap() + "\n")
        .collect();
    let p = dir.join("in.txt");
    std::fs::write(&p, text).unwrap();
    p
}

const DEPTH: &str = "3";

fn label(data: &Path, out: &Path, threads: &str, extra: &[&str]) -> Command {
    let mut c = xqtune();
    c.args(["label", data.to_str().unwrap(), "--engine"])
        .arg(format!(
            "{} uci --eval classical",
            env!("CARGO_BIN_EXE_xqtune")
        ))
        .args(["--depth", DEPTH, "--concurrency", threads, "-o"])
        .arg(out)
        .args(extra);
    c
}

fn run(mut c: Command) -> Output {
    c.output().expect("run xqtune")
}

fn ok(o: &Output) -> String {
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(o.status.success(), "{text}");
    text
}

fn err(o: &Output) -> String {
    assert!(!o.status.success());
    String::from_utf8_lossy(&o.stderr).to_string()
}

/// What the engine says for `fen` alone: its best move and the score of its last info line
/// that is not a bound, side to move's view.
fn ask(session: &mut Session, fen: &str) -> (String, i32) {
    session.send("ucinewgame");
    session.send(&format!("position fen {fen}"));
    session.send(&format!("go depth {DEPTH}"));
    let lines = session.until("bestmove");
    let score = lines
        .iter()
        .filter(|l| l.starts_with("info") && !l.contains("bound"))
        .filter_map(|l| {
            let w: Vec<&str> = l.split_whitespace().collect();
            let i = w.iter().position(|&x| x == "cp")?;
            w.get(i + 1)?.parse().ok()
        })
        .next_back()
        .expect("an exact score");
    (bestmove(&lines), score)
}

#[test]
fn labels_are_the_engines_own_scores_in_reds_view() {
    let dir = temp_dir("exact");
    let data = positions(&dir, 60);
    let out = dir.join("out.txt");
    let text = ok(&run(label(&data, &out, "2", &[])));
    let written = std::fs::read_to_string(&out).unwrap();
    let mut written = written.lines().peekable();
    let mut session = Session::start(&["uci", "--eval", "classical"]);
    session.send("uci");
    session.until("uciok");
    let (mut kept, mut dropped, mut black) = (0, 0, 0);
    for line in std::fs::read_to_string(&data).unwrap().lines() {
        let f: Vec<&str> = line.split('|').map(str::trim).collect();
        let pos = Position::from_fen(f[0]).unwrap();
        let (best, score) = ask(&mut session, f[0]);
        let m = pos.parse_move(&best).unwrap();
        if pos.in_check() || pos.is_capture(m) {
            dropped += 1;
            continue;
        }
        let red = score * pos.side_to_move().sign();
        let wdl = match f[1] {
            "1-0" => "1.0",
            "0-1" => "0.0",
            _ => "0.5",
        };
        assert_eq!(
            written.next(),
            Some(format!("{} | {red} | {wdl}", f[0]).as_str()),
            "{line}"
        );
        kept += 1;
        black += usize::from(pos.side_to_move().sign() < 0 && score != 0);
    }
    session.quit();
    assert_eq!(written.next(), None);
    assert!(
        kept > 40 && dropped > 0 && black > 10,
        "{kept} {dropped} {black}"
    );
    assert!(
        text.contains(&format!("label: {kept} positions scored"))
            && text.contains(&format!("({dropped} dropped")),
        "{text}"
    );
    // an existing output is kept unless --force
    let e = err(&run(label(&data, &out, "2", &[])));
    assert!(e.contains("exists") && e.contains("--force"), "{e}");
    ok(&run(label(&data, &out, "1", &["--force", "--keep-noisy"])));
    let all = std::fs::read_to_string(&out).unwrap();
    assert_eq!(all.lines().count(), kept + dropped);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn same_file_at_any_concurrency_and_after_a_kill() {
    let dir = temp_dir("resume");
    let data = positions(&dir, 3000);
    let one = dir.join("one.txt.gz");
    ok(&run(label(&data, &one, "1", &[])));
    let two = dir.join("two.txt.gz");
    let mut child = label(&data, &two, "2", &[])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    // killed once the progress file vouches for some chunks, before the end
    let progress = dir.join("two.txt.gz.progress.json");
    let t0 = std::time::Instant::now();
    let killed_mid_run = loop {
        let done = std::fs::read_to_string(&progress)
            .ok()
            .and_then(|t| serde_json::from_str::<serde_json::Value>(&t).ok())
            .and_then(|v| v["next_chunk"].as_u64())
            .unwrap_or(0);
        if done >= 1 {
            child.kill().unwrap();
            child.wait().unwrap();
            break true;
        }
        if child.try_wait().unwrap().is_some() || t0.elapsed().as_secs() > 120 {
            break false;
        }
        std::thread::sleep(std::time::Duration::from_millis(5));
    };
    assert!(killed_mid_run && !two.exists());
    let text = ok(&run(label(&data, &two, "2", &[])));
    assert!(text.contains("label: resuming at position"), "{text}");
    let read = |p: &Path| {
        let mut s = String::new();
        std::io::Read::read_to_string(
            &mut flate2::read::GzDecoder::new(std::fs::File::open(p).unwrap()),
            &mut s,
        )
        .unwrap();
        s
    };
    let (a, b) = (read(&one), read(&two));
    assert!(a.lines().count() > 2000);
    assert_eq!(a, b);
    assert!(!progress.exists() && !dir.join("two.txt.gz.partial").exists());
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn bad_input_is_named() {
    let dir = temp_dir("bad");
    let data = positions(&dir, 5);
    let out = dir.join("out.txt");
    // an engine that cannot start
    let o = run({
        let mut c = xqtune();
        c.args([
            "label",
            data.to_str().unwrap(),
            "--engine",
            "/no/such/engine",
        ])
        .arg("-o")
        .arg(&out);
        c
    });
    let e = err(&o);
    assert!(e.contains("/no/such/engine"), "{e}");
    assert!(!out.exists());
    // a bad FEN names its line
    let bad = dir.join("bad.txt");
    let mut text = std::fs::read_to_string(&data).unwrap();
    text.push_str("rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C5C1/9/RNBAKABNRR w - - 0 1 | 1-0\n");
    std::fs::write(&bad, text).unwrap();
    let e = err(&run(label(&bad, &out, "1", &[])));
    assert!(e.contains("bad.txt") && e.contains("line 6"), "{e}");
    // a Jieqi position
    let jieqi = dir.join("jieqi.txt");
    let fen = &common::data_lines("jieqi_valid.fen")[0];
    std::fs::write(
        &jieqi,
        format!("{} | 1-0\n", fen.split(';').next().unwrap().trim()),
    )
    .unwrap();
    let e = err(&run(label(&jieqi, &out, "1", &[])));
    assert!(
        e.contains("jieqi.txt") && e.contains("Xiangqi positions"),
        "{e}"
    );
    // a missing file
    let e = err(&run(label(&dir.join("none.txt"), &out, "1", &[])));
    assert!(e.contains("none.txt"), "{e}");
    std::fs::remove_dir_all(&dir).unwrap();
}
