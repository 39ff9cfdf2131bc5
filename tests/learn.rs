//! `xqtune learn` from the command line: a loop killed with SIGKILL in the middle of a gate
//! resumes there, plays only the gate games it lacks, and ends with the uninterrupted loop's
//! generation table.

mod common;

use common::{generation_table, kill_after_journal_lines, run_dir, tiny_learn};

#[test]
fn a_gate_killed_midway_resumes_with_the_games_it_lacks() {
    let dir = std::env::temp_dir().join(format!("xqtune-learn-cli-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    // four openings of the default suite: the gate's own suite
    let suite: Vec<String> = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("datasets/openings.txt"),
    )
    .unwrap()
    .lines()
    .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
    .take(4)
    .map(String::from)
    .collect();
    std::fs::write(dir.join("gate.txt"), suite.join("\n") + "\n").unwrap();
    let xqtune = || std::process::Command::new(env!("CARGO_BIN_EXE_xqtune"));
    let gate_games = 24;
    let start = |out: &str| {
        let mut c = xqtune();
        c.current_dir(&dir)
            .args(tiny_learn(gate_games, out))
            .args(["--lr", "0.002", "--gate-nodes", "150"])
            .args(["--gate-openings", "gate.txt"]);
        c
    };
    let o = start("full").output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let full = run_dir(&dir.join("full"));
    let rows = generation_table(&full);
    assert_eq!(rows.len(), 2, "{rows:?}");
    let f: Vec<&str> = rows[1].split(',').collect();
    let played: usize = f[4..7].iter().map(|x| x.parse::<usize>().unwrap()).sum();
    assert!((6..=gate_games).contains(&played), "{}", rows[1]);
    let journal = "gate/gen-001.jsonl";
    assert_eq!(
        std::fs::read_to_string(full.join(journal))
            .unwrap()
            .lines()
            .count(),
        played
    );
    // the training's learning rate is the one asked for
    let config = std::fs::read_to_string(full.join("config.json")).unwrap();
    assert!(config.contains("\"lr\": 0.002"), "{config}");

    let mut child = start("part")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let kept = kill_after_journal_lines(&mut child, &dir.join("part"), journal, 3);
    assert!(
        (3..played).contains(&kept),
        "{kept} gate games before the kill"
    );
    let part = run_dir(&dir.join("part"));
    let o = xqtune()
        .current_dir("/")
        .args(["learn", "--resume"])
        .arg(&part)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    // every gate game once: the ones before the kill were not played again
    let text = std::fs::read_to_string(part.join(journal)).unwrap();
    let mut ids: Vec<u64> = text
        .lines()
        .map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).unwrap();
            v["game"].as_u64().unwrap()
        })
        .collect();
    assert_eq!(ids.len(), played, "{text}");
    ids.sort_unstable();
    assert_eq!(ids, (0..played as u64).collect::<Vec<_>>());
    assert_eq!(generation_table(&part), rows);
    let _ = std::fs::remove_dir_all(&dir);
}
