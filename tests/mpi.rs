#![cfg(feature = "mpi")]
//! Many ranks, same results: `xqtune` under `mpirun -n 3` against one process, for `match`,
//! `tune spsa|ga|texel|nnue` (Texel with L-BFGS and with Adam), `datagen`, `book` and `learn`,
//! and a worker rank killed mid-run, then `--resume`.
//! (Built with `--features mpi`; needs `mpirun` from OpenMPI.)

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

const BIN: &str = env!("CARGO_BIN_EXE_xqtune");

fn scratch(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("xqtune-mpi-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).expect("scratch folder");
    d
}

/// `mpirun -n ranks xqtune args` (with `--allow-run-as-root` when root, `--oversubscribe` for
/// small CI machines), or the plain binary for `ranks == 0`.
fn command(ranks: usize, args: &[&str], env: &[(&str, &str)]) -> Command {
    let mut c = if ranks == 0 {
        Command::new(BIN)
    } else {
        let mut c = Command::new("mpirun");
        if is_root() {
            c.arg("--allow-run-as-root");
        }
        c.args(["--oversubscribe", "-n", &ranks.to_string()]);
        for (k, v) in env {
            c.args(["-x", &format!("{k}={v}")]);
        }
        c.arg(BIN);
        c
    };
    c.args(args).current_dir(env!("CARGO_MANIFEST_DIR"));
    c
}

fn is_root() -> bool {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("Uid:"))
                .and_then(|l| l.split_whitespace().nth(2).map(|u| u == "0"))
        })
        .unwrap_or(false)
}

fn run(ranks: usize, args: &[&str]) -> Output {
    let o = command(ranks, args, &[])
        .output()
        .expect("start xqtune (is mpirun installed?)");
    assert!(
        o.status.success(),
        "{} ranks, {args:?}:\n{}\n{}",
        ranks,
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    o
}

/// The only run folder under `dir`.
fn run_dir(dir: &Path) -> PathBuf {
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(dir)
        .expect("output folder")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.is_dir())
        .collect();
    assert_eq!(dirs.len(), 1, "one run folder in {}", dir.display());
    dirs.remove(0)
}

/// A PGN without the headers that hold the date and wall times.
fn pgn(dir: &Path) -> String {
    std::fs::read_to_string(run_dir(dir).join("games.pgn"))
        .expect("games.pgn")
        .lines()
        .filter(|l| !l.starts_with("[Date ") && !l.starts_with("[GameDuration "))
        .collect::<Vec<_>>()
        .join("\n")
}

fn best(dir: &Path) -> String {
    std::fs::read_to_string(run_dir(dir).join("best.json")).expect("best.json")
}

/// Engine B has a network, which reaches the other ranks inside the game jobs.
#[test]
fn match_gives_the_same_games_on_three_ranks() {
    let d = scratch("match");
    let net = d.join("random.nnue");
    xqtune::eval::nnue::Network::random(3, 32, 4, xqtune::eval::nnue::Activation::SCReLU)
        .save(&net)
        .unwrap();
    for (ranks, name) in [(0, "one"), (3, "three")] {
        let out = d.join(name);
        run(
            ranks,
            &[
                "match",
                "--b-net",
                net.to_str().unwrap(),
                "--games",
                "8",
                "--nodes",
                "400",
                "--seed",
                "7",
                "--concurrency",
                "1",
                "--out-dir",
                out.to_str().unwrap(),
                "--name",
                "m",
            ],
        );
    }
    let (one, three) = (pgn(&d.join("one")), pgn(&d.join("three")));
    assert_eq!(one.matches("[Result ").count(), 8);
    assert_eq!(one, three);
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn tuners_and_datagen_give_the_same_results_on_three_ranks() {
    let d = scratch("tune");
    let tuners: [(&str, &[&str]); 4] = [
        (
            "spsa",
            &[
                "tune",
                "spsa",
                "--iterations",
                "4",
                "--games",
                "2",
                "--nodes",
                "400",
            ],
        ),
        (
            "ga",
            &[
                "tune",
                "ga",
                "--population",
                "4",
                "--generations",
                "2",
                "--games",
                "2",
                "--nodes",
                "400",
                "--final-candidates",
                "2",
                "--final-games",
                "2",
            ],
        ),
        (
            "texel",
            // 3 shards of the file, one per rank
            &[
                "tune",
                "texel",
                "--data",
                "datasets/ccpd-quiet.epd.gz",
                "--max-positions",
                "300000",
                "--epochs",
                "2",
                "--only",
                "material.*,mobility.*",
            ],
        ),
        (
            "texel-adam",
            // batches of 3 chunks drawn from the three ranks' shards
            &[
                "tune",
                "texel",
                "--data",
                "datasets/ccpd-quiet.epd.gz",
                "--max-positions",
                "300000",
                "--epochs",
                "2",
                "--only",
                "material.*,mobility.*",
                "--optimiser",
                "adam",
                "--batch-size",
                "24576",
            ],
        ),
    ];
    for (name, args) in tuners {
        for ranks in [0, 3] {
            let out = d.join(format!("{name}{ranks}"));
            let mut a: Vec<&str> = args.to_vec();
            a.extend([
                "--seed",
                "3",
                "--verify",
                "none",
                "--concurrency",
                "1",
                "--name",
                "t",
                "--out",
                out.to_str().unwrap(),
            ]);
            if !name.starts_with("texel") {
                a.extend(["--only", "mobility.*"]);
            }
            run(ranks, &a);
        }
        assert_eq!(
            best(&d.join(format!("{name}0"))),
            best(&d.join(format!("{name}3"))),
            "{name}: best.json differs between 1 and 3 ranks"
        );
    }
    // the network trainer: blocks of positions on every rank, gradients summed exactly
    let mut nets = Vec::new();
    for ranks in [0, 3] {
        let out = d.join(format!("nnue{ranks}"));
        run(
            ranks,
            &[
                "tune",
                "nnue",
                "--data",
                "datasets/ccpd-quiet.epd.gz",
                "--max-positions",
                "30000",
                "--epochs",
                "2",
                "--hidden",
                "64",
                "--batch-size",
                "4096",
                "--lambda",
                "0",
                "--seed",
                "3",
                "--verify",
                "none",
                "--concurrency",
                "1",
                "--name",
                "t",
                "--out",
                out.to_str().unwrap(),
            ],
        );
        nets.push(std::fs::read(run_dir(&out).join("best.nnue")).expect("best.nnue"));
    }
    assert_eq!(
        nets[0], nets[1],
        "nnue: best.nnue differs between 1 and 3 ranks"
    );
    for variant in ["xiangqi", "jieqi"] {
        let mut files = Vec::new();
        for ranks in [0, 3] {
            let out = d.join(format!("datagen-{variant}{ranks}.txt"));
            run(
                ranks,
                &[
                    "datagen",
                    "--variant",
                    variant,
                    "--games",
                    "6",
                    "--nodes",
                    "400",
                    "--seed",
                    "5",
                    "--concurrency",
                    "1",
                    "--out",
                    out.to_str().unwrap(),
                ],
            );
            files.push(std::fs::read_to_string(&out).expect("datagen output"));
        }
        assert!(files[0].lines().count() > 10, "{variant}");
        assert_eq!(
            files[0], files[1],
            "{variant} datagen differs between 1 and 3 ranks"
        );
    }
    let _ = std::fs::remove_dir_all(&d);
}

/// `book` on three ranks: the openings are scored in chunks on any rank (the network travels in
/// the jobs), and the suite is the one a single process writes.
#[test]
fn book_gives_the_same_suite_on_three_ranks() {
    let d = scratch("book");
    let net = d.join("random.nnue");
    xqtune::eval::nnue::Network::random(4, 32, 4, xqtune::eval::nnue::Activation::SCReLU)
        .save(&net)
        .unwrap();
    // 70 openings: three chunks of jobs
    let suite = d.join("suite.txt");
    let lines: Vec<&str> = xqtune::play::openings::DEFAULT_OPENINGS
        .lines()
        .filter(|l| !l.starts_with('#'))
        .take(70)
        .collect();
    std::fs::write(&suite, lines.join("\n")).unwrap();
    let mut books = Vec::new();
    for ranks in [0, 3] {
        let out = d.join(format!("book{ranks}.txt"));
        run(
            ranks,
            &[
                "book",
                suite.to_str().unwrap(),
                "-o",
                out.to_str().unwrap(),
                "--net",
                net.to_str().unwrap(),
                "--nodes",
                "300",
                "--window",
                "0..100000",
                "--concurrency",
                "1",
            ],
        );
        books.push(std::fs::read_to_string(&out).expect("book output"));
    }
    assert_eq!(books[0].lines().filter(|l| !l.starts_with('#')).count(), 70);
    assert_eq!(books[0], books[1], "book differs between 1 and 3 ranks");
    let _ = std::fs::remove_dir_all(&d);
}

/// `learn` on three ranks: the self-play, the training and the gate of a generation spread over
/// the ranks, and the generation is the one a single process makes (its data, its candidate
/// network, its row of `generations.csv` but the time).
#[test]
fn learn_gives_the_same_generation_on_three_ranks() {
    let d = scratch("learn");
    let mut runs = Vec::new();
    for ranks in [0, 3] {
        let out = d.join(format!("learn{ranks}"));
        let argv = common::tiny_learn(8, out.to_str().unwrap());
        run(ranks, &argv.iter().map(String::as_str).collect::<Vec<_>>());
        let dir = run_dir(&out);
        let table = common::generation_table(&dir);
        let data = std::fs::read(dir.join("data/gen-001.xqp")).expect("the generation's data");
        let candidate = std::fs::read(run_dir(&dir.join("train")).join("best.nnue"))
            .expect("the candidate network");
        runs.push((table, data, candidate));
    }
    let (table, data, candidate) = &runs[0];
    assert_eq!(table.len(), 2, "{table:?}");
    let gate: Vec<&str> = table[1].split(',').skip(4).take(3).collect();
    assert_eq!(
        gate.iter()
            .map(|n| n.parse::<usize>().unwrap())
            .sum::<usize>(),
        8,
        "8 gate games: {table:?}"
    );
    assert!(!data.is_empty() && !candidate.is_empty());
    assert_eq!(
        &runs[1].1, data,
        "learn's data differs between 1 and 3 ranks"
    );
    assert_eq!(
        &runs[1].2, candidate,
        "learn's candidate differs between 1 and 3 ranks"
    );
    assert_eq!(
        &runs[1].0, table,
        "generations.csv differs between 1 and 3 ranks"
    );
    let _ = std::fs::remove_dir_all(&d);
}

/// The pids of this test's processes of rank `rank` (found by the tag `mpirun -x` gave them).
fn pids_of_rank(tag: &str, rank: usize) -> Vec<u32> {
    let mut pids = Vec::new();
    for e in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
        let Some(pid) = e.file_name().to_str().and_then(|s| s.parse::<u32>().ok()) else {
            continue;
        };
        let Ok(env) = std::fs::read(e.path().join("environ")) else {
            continue;
        };
        let vars: Vec<&[u8]> = env.split(|&b| b == 0).collect();
        let has = |v: &str| vars.contains(&v.as_bytes());
        if has(&format!("XQTUNE_MPI_TEST={tag}")) && has(&format!("OMPI_COMM_WORLD_RANK={rank}")) {
            pids.push(pid);
        }
    }
    pids
}

/// The next iteration an SPSA checkpoint records (`None` while there is none).
fn next_iteration(state: &Path) -> Option<u64> {
    let text = std::fs::read_to_string(state).ok()?;
    let v: serde_json::Value = serde_json::from_str(&text).ok()?;
    v["k"].as_u64()
}

#[test]
fn a_killed_worker_ends_the_job_and_resume_finishes_it() {
    let d = scratch("kill");
    let spsa = |out: &Path| -> Vec<String> {
        [
            "tune",
            "spsa",
            "--iterations",
            "30",
            "--games",
            "2",
            "--nodes",
            "1500",
            "--seed",
            "11",
            "--only",
            "mobility.*",
            "--verify",
            "none",
            "--concurrency",
            "1",
            "--name",
            "k",
            "--out",
        ]
        .iter()
        .map(|s| s.to_string())
        .chain([out.to_str().unwrap().to_string()])
        .collect()
    };
    // the uninterrupted run
    let whole = d.join("whole");
    let args = spsa(&whole);
    run(0, &args.iter().map(String::as_str).collect::<Vec<_>>());

    let cut = d.join("cut");
    let args = spsa(&cut);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let tag = format!("{}", std::process::id());
    let mut job = command(3, &args, &[("XQTUNE_MPI_TEST", &tag)])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("start mpirun");
    // wait for the first checkpoint, then kill rank 1
    let started = Instant::now();
    let state = loop {
        if let Some(dir) = std::fs::read_dir(&cut)
            .ok()
            .and_then(|mut r| r.next())
            .and_then(|e| e.ok())
            .map(|e| e.path())
            && next_iteration(&dir.join("checkpoints/state.json")).is_some_and(|k| k >= 1)
        {
            break dir.join("checkpoints/state.json");
        }
        assert!(
            started.elapsed() < Duration::from_secs(120),
            "no checkpoint after 120 s"
        );
        std::thread::sleep(Duration::from_millis(10));
    };
    let victims = pids_of_rank(&tag, 1);
    assert_eq!(victims.len(), 1, "one process of rank 1: {victims:?}");
    let killed = Command::new("kill")
        .args(["-9", &victims[0].to_string()])
        .status()
        .expect("kill");
    assert!(killed.success());
    // the job ends, unfinished
    let deadline = Instant::now() + Duration::from_secs(60);
    let status = loop {
        if let Some(s) = job.try_wait().expect("wait for mpirun") {
            break s;
        }
        if Instant::now() > deadline {
            let _ = job.kill();
            panic!("the job went on after a rank died");
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    assert!(
        !status.success(),
        "the job ended normally despite the dead rank"
    );
    let next = next_iteration(&state).expect("the checkpoint's iteration");
    assert!((1..30).contains(&next), "killed at iteration {next} of 30");
    // resume to the end on three ranks
    let dir = run_dir(&cut);
    run(
        3,
        &[
            "tune",
            "spsa",
            "--resume",
            dir.to_str().unwrap(),
            "--concurrency",
            "1",
        ],
    );
    assert_eq!(best(&whole), best(&cut), "the resumed run differs");
    let _ = std::fs::remove_dir_all(&d);
}
