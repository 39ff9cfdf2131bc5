//! Jieqi Texel end to end through the command line: `xqtune datagen --variant jieqi`, then
//! `xqtune tune texel --variant jieqi` over Jieqi and shared terms (the validation loss falls,
//! the Jieqi tables land in a file the engine loads, the verification plays Jieqi games), a
//! variant mismatch refused with both names, and `xqtune params promote` putting the tuned
//! `jieqi.*` values into `jieqi.json`. Small and node-limited: a few seconds.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const BIN: &str = env!("CARGO_BIN_EXE_xqtune");

fn xqtune(args: &[&str]) -> Output {
    Command::new(BIN)
        .args(args)
        .output()
        .expect("the xqtune binary runs")
}

fn ok(args: &[&str]) -> String {
    let o = xqtune(args);
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(o.status.success(), "xqtune {args:?} failed:\n{text}");
    text
}

/// The one run folder under `out`.
fn run_dir(out: &Path) -> PathBuf {
    let dirs: Vec<PathBuf> = std::fs::read_dir(out)
        .expect("the run's parent folder")
        .map(|e| e.expect("a folder entry").path())
        .collect();
    assert_eq!(dirs.len(), 1, "{dirs:?}");
    dirs[0].clone()
}

#[test]
fn jieqi_datagen_then_texel_then_promote() {
    let d = std::env::temp_dir().join(format!("xqtune-jieqi-tune-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    let data = d.join("jieqi.txt");
    let data_s = data.to_str().unwrap();
    ok(&[
        "datagen",
        "--variant",
        "jieqi",
        "--games",
        "40",
        "--nodes",
        "300",
        "--seed",
        "4",
        "--concurrency",
        "2",
        "--out",
        data_s,
    ]);

    // The default --variant (xiangqi) on Jieqi data: refused, naming both.
    let out = d.join("runs");
    let out_s = out.to_str().unwrap();
    let texel = |variant: &str| -> Vec<String> {
        [
            "tune",
            "texel",
            "--variant",
            variant,
            "--data",
            data_s,
            "--only",
            "jieqi.material.*,mobility.*",
            "--epochs",
            "20",
            "--nodes",
            "300",
            "--max-plies",
            "60",
            "--verify",
            "fixed",
            "--verify-games",
            "4",
            "--seed",
            "1",
            "--concurrency",
            "2",
            "--name",
            "jq",
            "--out",
            out_s,
        ]
        .map(String::from)
        .to_vec()
    };
    let args = texel("xiangqi");
    let refused = xqtune(&args.iter().map(String::as_str).collect::<Vec<_>>());
    assert!(!refused.status.success());
    let err = String::from_utf8_lossy(&refused.stderr);
    assert!(
        err.contains("--variant xiangqi") && err.contains("jieqi positions"),
        "{err}"
    );
    let _ = std::fs::remove_dir_all(&out);

    let args = texel("jieqi");
    ok(&args.iter().map(String::as_str).collect::<Vec<_>>());
    let run = run_dir(&out);
    let log = std::fs::read_to_string(run.join("log.csv")).unwrap();
    let val: Vec<f64> = log
        .lines()
        .skip(1)
        .map(|l| l.split(',').nth(2).unwrap().parse().unwrap())
        .collect();
    assert!(val.len() > 2, "{log}");
    assert!(
        val.last() < val.first(),
        "validation loss did not fall:\n{log}"
    );
    let config = std::fs::read_to_string(run.join("config.json")).unwrap();
    assert!(config.contains("\"variant\": \"jieqi\""), "{config}");
    let verification = std::fs::read_to_string(run.join("verification.json")).unwrap();
    assert!(verification.contains("\"games\": 4"), "{verification}");

    // The tuned Jieqi tables load into the engine and differ from the embedded ones.
    let best_jieqi = run.join("best-jieqi.json");
    let tuned = std::fs::read_to_string(&best_jieqi).unwrap();
    let embedded = ok(&["eval", "--print-jieqi-params"]);
    assert_ne!(tuned.trim(), embedded.trim(), "no jieqi.* value moved");
    let fen = std::fs::read_to_string(&data).unwrap();
    let fen = fen
        .lines()
        .next()
        .unwrap()
        .split('|')
        .next()
        .unwrap()
        .trim();
    ok(&[
        "eval",
        "--fen",
        fen,
        "--jieqi-params",
        best_jieqi.to_str().unwrap(),
    ]);

    // Promote takes the Jieqi tables along, into jieqi.json beside the Xiangqi file.
    let dest = d.join("params/xiangqi.json");
    std::fs::create_dir_all(dest.parent().unwrap()).unwrap();
    ok(&[
        "params",
        "promote",
        run.to_str().unwrap(),
        "--to",
        dest.to_str().unwrap(),
        "--force",
    ]);
    assert_eq!(
        std::fs::read_to_string(d.join("params/jieqi.json")).unwrap(),
        tuned
    );
    assert_eq!(
        std::fs::read_to_string(&dest).unwrap(),
        std::fs::read_to_string(run.join("best.json")).unwrap()
    );
    let _ = std::fs::remove_dir_all(&d);
}
