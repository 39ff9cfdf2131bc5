//! Tournaments: a two-engine tournament is the match with the same seed (games and Elo), the
//! command line's records and rating list, resume after `kill -9` without replaying a game,
//! variants, and the errors of an engines file.

mod common;

use common::{journal_lines, kill_after_games, pgn_without_clock, run_dir};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;
use xqtune::core::Variant;
use xqtune::eval::EvalParams;
use xqtune::play::ratings::Anchor;
use xqtune::play::tournament::{Format, Standings, pairings, run_tournament};
use xqtune::play::{Engine, EngineConfig, MatchConfig, run_match_with_progress};
use xqtune::search::{EngineOptions, SearchParams};

fn engine(name: &str, eval: EvalParams) -> Engine {
    Engine::Internal(EngineConfig {
        name: name.into(),
        eval: Arc::new(eval),
        search: SearchParams::default(),
        options: EngineOptions::default(),
        network: None,
    })
}

/// A weaker evaluation: every value halved, so that games are decided both ways.
fn weaker() -> EvalParams {
    let e = EvalParams::default();
    let v = e.to_vec().iter().map(|&x| x / 2 + 37).collect::<Vec<_>>();
    e.from_vec(&v)
}

fn temp_dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("xqtune-tournament-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

#[test]
fn a_two_engine_tournament_is_the_match() {
    for variant in [Variant::Xiangqi, Variant::Jieqi] {
        let engines = vec![engine("A", EvalParams::default()), engine("B", weaker())];
        let cfg = MatchConfig {
            games: 12,
            nodes: Some(300),
            concurrency: 2,
            seed: 7,
            max_plies: 60,
            hash_mb: 1,
            variant,
            ..Default::default()
        };
        let m = run_match_with_progress(&engines[0], &engines[1], &cfg, &|_| {}).unwrap();
        let names = vec!["A".to_string(), "B".to_string()];
        let st = Standings::new(names, pairings(Format::Gauntlet, 2), cfg.games);
        let t = run_tournament(&engines, st, &cfg, &mut |_| {}).unwrap();
        assert!(!t.stopped_early);
        let games: Vec<_> = t.standings.games.iter().flatten().collect();
        assert_eq!(games.len(), m.games.len());
        for (x, y) in games.iter().zip(&m.games) {
            assert_eq!(
                (x.index, &x.moves, x.result, &x.opening_fen),
                (y.index, &y.moves, y.result, &y.opening_fen),
                "{variant}"
            );
        }
        let r = t.standings.result(0);
        assert_eq!(r, m.result);
        let s = r.score();
        assert!(
            s > 0.0 && s < 1.0,
            "{variant}: a decided score {s} says little"
        );
        let list = t
            .standings
            .ratings(&Anchor::Engine { index: 1, elo: 0.0 }, 200, 1)
            .unwrap();
        let a = list.engines.iter().find(|e| e.name == "A").unwrap();
        assert!(
            (a.rating - m.result.elo()).abs() < 1e-6,
            "{variant}: {} vs the match's {}",
            a.rating,
            m.result.elo()
        );
        assert!(a.lower <= a.rating && a.rating <= a.upper);
    }
}

fn xqtune() -> Command {
    Command::new(env!("CARGO_BIN_EXE_xqtune"))
}

fn write_engines(dir: &Path) -> PathBuf {
    let weak = dir.join("weak.json");
    std::fs::write(&weak, weaker().to_json_string()).unwrap();
    let file = dir.join("engines.json");
    std::fs::write(
        &file,
        format!(
            r#"[
              {{"name": "xq", "internal": true}},
              {{"name": "weak", "internal": true, "params": "weak.json"}},
              {{"name": "xq-uci", "command": "'{}' uci", "options": {{"Hash": 1}}}}
            ]"#,
            env!("CARGO_BIN_EXE_xqtune")
        ),
    )
    .unwrap();
    file
}

#[test]
fn the_command_line_rates_records_and_resumes_after_a_kill() {
    let dir = temp_dir("cli");
    let file = write_engines(&dir);
    let args = |out: &Path| -> Vec<String> {
        [
            "tournament",
            "--engines",
            file.to_str().unwrap(),
            "--format",
            "round-robin",
            "--games",
            "6",
            "--nodes",
            "300",
            "--max-plies",
            "80",
            "--concurrency",
            "1",
            "--bootstrap",
            "100",
            "--anchor",
            "weak=1000",
            "--out-dir",
            out.to_str().unwrap(),
        ]
        .map(String::from)
        .to_vec()
    };
    let full = dir.join("full");
    let o = xqtune().args(args(&full)).output().unwrap();
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(
        o.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&o.stderr)
    );
    for want in [
        "Score of xq vs weak",
        "Score of weak vs xq-uci",
        "Rank  Name",
        "95% interval",
        "anchor weak=1000",
        "Cross table",
    ] {
        assert!(stdout.contains(want), "{want}: {stdout}");
    }
    let fd = run_dir(&full);
    assert!(
        fd.file_name()
            .unwrap()
            .to_string_lossy()
            .contains("_tournament_")
    );
    let summary: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(fd.join("summary.json")).unwrap()).unwrap();
    assert_eq!(summary["games"], 18);
    assert_eq!(summary["complete"], true);
    assert_eq!(summary["format"], "round-robin");
    let list = summary["ratings"]["list"].as_array().unwrap();
    assert_eq!(list.len(), 3);
    let weak = list.iter().find(|e| e["name"] == "weak").unwrap();
    assert_eq!(weak["elo"], 1000.0);
    assert_eq!(summary["pairings"].as_array().unwrap().len(), 3);
    assert_eq!(summary["cross_table"]["cells"].as_array().unwrap().len(), 3);
    for f in ["ratings.png", "ratings.svg", "games.jsonl", "config.json"] {
        assert!(fd.join(f).exists(), "{f}");
    }
    // the recorded engines have absolute paths: the folder alone resumes
    let config = std::fs::read_to_string(fd.join("config.json")).unwrap();
    assert!(
        config.contains(dir.join("weak.json").to_str().unwrap()),
        "{config}"
    );

    // The same tournament killed (SIGKILL) after a few games, then resumed twice (the second
    // time with nothing left to play): the same games as the uninterrupted run.
    let part = dir.join("part");
    let mut child = xqtune()
        .args(args(&part))
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let kept = kill_after_games(&mut child, &part, 2);
    let pd = run_dir(&part);
    assert!((2..18).contains(&kept), "{kept} games before the kill");
    for _ in 0..2 {
        let o = xqtune()
            .args([
                "tournament",
                "--resume",
                pd.to_str().unwrap(),
                "--concurrency",
                "2",
            ])
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    }
    assert_eq!(pgn_without_clock(&pd), pgn_without_clock(&fd));
    assert_eq!(journal_lines(&part), 18, "no game was played twice");
    let resumed: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(pd.join("summary.json")).unwrap()).unwrap();
    assert_eq!(resumed["ratings"], summary["ratings"]);
    assert_eq!(resumed["cross_table"], summary["cross_table"]);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_jieqi_gauntlet_seats_the_engines_that_play_it() {
    let dir = temp_dir("jieqi");
    let file = write_engines(&dir);
    let out = dir.join("out");
    let o = xqtune()
        .args(["tournament", "--engines", file.to_str().unwrap()])
        .args(["--format", "gauntlet", "--variant", "jieqi", "--games", "2"])
        .args(["--nodes", "200", "--max-plies", "40", "--bootstrap", "10"])
        .arg("--out-dir")
        .arg(&out)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{stderr}");
    assert!(
        stderr.contains("xq-uci sits out: it does not play jieqi"),
        "{stderr}"
    );
    let d = run_dir(&out);
    let pgn = std::fs::read_to_string(d.join("games.pgn")).unwrap();
    assert_eq!(pgn.matches("[Event ").count(), 2);
    assert!(pgn.contains("[DealSeed "), "{pgn}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn engine_file_errors_stop_before_a_folder_is_made() {
    let dir = temp_dir("errors");
    let out = dir.join("out");
    let run = |engines: &str, extra: &[&str]| -> String {
        let file = dir.join("e.json");
        std::fs::write(&file, engines).unwrap();
        let o = xqtune()
            .args(["tournament", "--engines", file.to_str().unwrap()])
            .args(extra)
            .arg("--out-dir")
            .arg(&out)
            .output()
            .unwrap();
        assert!(!o.status.success());
        String::from_utf8_lossy(&o.stderr).to_string()
    };
    let e = run(
        r#"[{"name": "a", "internal": true}, {"name": "a", "command": "x"}]"#,
        &[],
    );
    assert!(
        e.contains("two engines are named 'a' (engines 1 and 2)"),
        "{e}"
    );
    let e = run(
        r#"[{"name": "a", "internal": true}, {"name": "b", "command": "x", "protocol": "cecp"}]"#,
        &[],
    );
    assert!(
        e.contains("engine 2 ('b'): protocol: unknown protocol 'cecp'"),
        "{e}"
    );
    let e = run(
        r#"[{"name": "a", "internal": true}, {"name": "b", "internal": true}]"#,
        &["--anchor", "c=100"],
    );
    assert!(
        e.contains("no engine of the tournament is named 'c' (engines: a, b)"),
        "{e}"
    );
    let e = run(r#"[{"name": "a", "internal": true}]"#, &[]);
    assert!(e.contains("at least two engines"), "{e}");
    let e = run(
        r#"[{"name": "a", "internal": true, "params": "missing.json"}, {"name": "b", "internal": true}]"#,
        &[],
    );
    assert!(e.contains("engine 'a'"), "{e}");
    // An engine that cannot start (its command exits before the handshake).
    let e = run(
        &format!(
            r#"[{{"name": "a", "internal": true}}, {{"name": "b", "command": "'{}' uci --search-params missing.json"}}]"#,
            env!("CARGO_BIN_EXE_xqtune")
        ),
        &[],
    );
    assert!(
        e.contains("engine 'b'") && e.contains("cannot play") && e.contains("handshake"),
        "{e}"
    );
    assert!(!out.exists() || std::fs::read_dir(&out).unwrap().count() == 0);
    std::fs::remove_dir_all(&dir).unwrap();
}
