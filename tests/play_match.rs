//! Match runner behaviour: reproducible games, colour-swapped pairs, SPRT stopping, records,
//! resume.

mod common;

use common::{journal_lines, kill_after_games, pgn_without_clock, run_dir};
use std::sync::Arc;
use xqtune::eval::EvalParams;
use xqtune::play::game::GameRecord;
use xqtune::play::pgn::{PgnHeader, game_pgn};
use xqtune::play::runner::tally;
use xqtune::play::{
    Engine, EngineConfig, MatchConfig, MatchReport, SprtConfig, parse_openings, run_match_resuming,
    run_match_with_progress,
};
use xqtune::search::{EngineOptions, SearchParams};

fn engine(name: &str, eval: EvalParams) -> EngineConfig {
    EngineConfig {
        name: name.into(),
        eval: Arc::new(eval),
        search: SearchParams::default(),
        options: EngineOptions::default(),
        network: None,
    }
}

/// A deliberately different evaluation so games are not mirror images.
fn odd_eval() -> EvalParams {
    let mut e = EvalParams::default();
    let v = e.to_vec().iter().map(|&x| x / 2 + 37).collect::<Vec<_>>();
    e = e.from_vec(&v);
    e
}

fn tiny(concurrency: usize, games: usize) -> MatchConfig {
    MatchConfig {
        games,
        nodes: Some(300),
        concurrency,
        seed: 7,
        max_plies: 40,
        hash_mb: 1,
        ..Default::default()
    }
}

fn play(cfg: &MatchConfig) -> MatchReport {
    let a = Engine::Internal(engine("A", EvalParams::default()));
    let b = Engine::Internal(engine("B", odd_eval()));
    run_match_with_progress(&a, &b, cfg, &|_| {}).expect("match runs")
}

fn pgn(r: &MatchReport) -> String {
    pgn_of(&r.games)
}

fn pgn_of(games: &[GameRecord]) -> String {
    let h = PgnHeader {
        event: "t".into(),
        date: "2026.01.01".into(),
        time_control: "nodes=300".into(),
        variant: "xiangqi".into(),
    };
    // Wall time is the one field allowed to differ between runs.
    games
        .iter()
        .map(|g| {
            let mut g = g.clone();
            g.duration_ms = 0;
            game_pgn(&h, &g)
        })
        .collect()
}

#[test]
fn same_seed_same_games_regardless_of_concurrency() {
    let one = play(&tiny(1, 6));
    let two = play(&tiny(2, 6));
    let again = play(&tiny(2, 6));
    assert_eq!(one.games.len(), 6);
    assert_eq!(pgn(&one), pgn(&two));
    assert_eq!(pgn(&two), pgn(&again));
    assert_eq!(one.result, two.result);
    // Another seed picks other openings.
    let other = play(&MatchConfig {
        seed: 8,
        ..tiny(2, 6)
    });
    assert_ne!(pgn(&one), pgn(&other));
}

#[test]
fn pairs_swap_colours_on_the_same_opening() {
    let r = play(&tiny(2, 8));
    for (i, g) in r.games.iter().enumerate() {
        assert_eq!(g.index, i);
        assert_eq!(g.a_is_red, i % 2 == 0);
        let (a_seat, b_seat) = if g.a_is_red {
            (&g.red, &g.black)
        } else {
            (&g.black, &g.red)
        };
        assert_eq!((a_seat.as_str(), b_seat.as_str()), ("A", "B"));
    }
    for p in r.games.chunks(2) {
        assert_eq!(p[0].opening_fen, p[1].opening_fen);
        assert_eq!(p[0].opening_moves, p[1].opening_moves);
        assert_eq!(p[0].start_fen, p[1].start_fen);
    }
    // Four pairs from a 34-line suite: four different openings.
    let mut starts: Vec<&str> = r.games.iter().map(|g| g.start_fen.as_str()).collect();
    starts.dedup();
    assert_eq!(starts.len(), 4);
    // The counts agree with the games.
    let t = tally(&r.games);
    assert_eq!(t, r.result);
    assert_eq!(t.games(), 8);
    assert_eq!(t.pairs(), 4);
    let pair_points: f64 = t
        .pentanomial
        .iter()
        .enumerate()
        .map(|(k, &c)| k as f64 * 0.5 * c as f64)
        .sum();
    assert_eq!(pair_points, t.wins as f64 + 0.5 * t.draws as f64);
}

#[test]
fn odd_game_count_leaves_last_game_unpaired() {
    let r = play(&tiny(2, 3));
    assert_eq!(r.result.games(), 3);
    assert_eq!(r.result.pairs(), 1);
}

#[test]
fn max_plies_and_rule_rulings_end_games() {
    let r = play(&tiny(1, 4));
    for g in &r.games {
        assert!(g.moves.len() <= 40);
        match &g.termination {
            xqtune::play::Termination::MaxPlies => {
                assert_eq!(g.moves.len(), 40);
                assert_eq!(g.result, xqtune::core::GameResult::Draw);
            }
            xqtune::play::Termination::Rules { .. } => {}
            t => panic!("unexpected termination {t:?}"),
        }
    }
}

#[test]
fn custom_openings_are_used() {
    let suite = parse_openings("startpos moves c3c4 c6c5\n").unwrap();
    let r = play(&MatchConfig {
        openings: Some(Arc::new(suite)),
        ..tiny(2, 4)
    });
    for g in &r.games {
        assert_eq!(g.opening_moves.len(), 2);
        assert_eq!(g.opening_moves[0].to_string(), "c3c4");
    }
    let text = pgn(&r);
    assert!(text.contains("1. c3c4 c6c5 {book}"), "{text}");
    assert!(text.contains("[FEN \"rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C5C1/9/RNBAKABNR w"));
    assert!(text.contains("[RedParams \""));
    assert!(text.contains("[Termination \""));
}

#[test]
fn sprt_stops_at_the_same_pair_every_time() {
    // Wide error rates and bounds far below zero make the test decide within a few pairs
    // unless A is crushed.
    let sprt = SprtConfig {
        elo0: -300.0,
        elo1: -100.0,
        alpha: 0.3,
        beta: 0.3,
    };
    let cfg = |c| MatchConfig {
        sprt: Some(sprt),
        ..tiny(c, 60)
    };
    let r1 = play(&cfg(1));
    let r2 = play(&cfg(2));
    let s = r1.sprt.expect("sprt status");
    assert_ne!(s.verdict, xqtune::play::SprtVerdict::Continue, "{s:?}");
    assert!(r1.stopped_early && r1.games.len() < 60);
    assert_eq!(r1.games.len() % 2, 0);
    assert_eq!(pgn(&r1), pgn(&r2));
    // It decided on the last pair and not before.
    let before = tally(&r1.games[..r1.games.len() - 2]);
    assert_eq!(
        sprt.status(&before).verdict,
        xqtune::play::SprtVerdict::Continue
    );
}

#[test]
fn in_process_library_api() {
    let a = engine("A", EvalParams::default());
    let b = engine("B", odd_eval());
    let r = xqtune::play::run_match(&a, &b, &tiny(2, 4));
    assert_eq!(r.games(), 4);
    assert_eq!(r.pentanomial.iter().sum::<u32>(), 2);
    let e = xqtune::play::try_run_match(
        &a,
        &b,
        &MatchConfig {
            nodes: None,
            ..tiny(1, 2)
        },
    )
    .unwrap_err();
    assert!(e.to_string().contains("no limit"), "{e}");
    // Jieqi plays random deals (tests/jieqi_search.rs covers it in detail).
    let r = xqtune::play::try_run_match(
        &a,
        &b,
        &MatchConfig {
            variant: xqtune::core::Variant::Jieqi,
            ..tiny(1, 2)
        },
    )
    .expect("Jieqi match runs");
    assert_eq!(r.games(), 2);
}

/// Progress comes on the calling thread at any concurrency (the games run on the executor's
/// threads; the caller keeps the books, so a progress callback needs no lock of its own).
#[test]
fn progress_comes_on_the_calling_thread() {
    let caller = std::thread::current().id();
    let seen = std::sync::Mutex::new(Vec::new());
    let a = Engine::Internal(engine("A", EvalParams::default()));
    let b = Engine::Internal(engine("B", odd_eval()));
    run_match_with_progress(&a, &b, &tiny(1, 2), &|_| {
        seen.lock().unwrap().push(std::thread::current().id())
    })
    .expect("match runs");
    let seen = seen.into_inner().unwrap();
    assert_eq!(seen.len(), 2);
    assert!(seen.iter().all(|&t| t == caller));
    let seen = std::sync::Mutex::new(Vec::new());
    run_match_with_progress(&a, &b, &tiny(2, 4), &|_| {
        seen.lock().unwrap().push(std::thread::current().id())
    })
    .expect("match runs");
    let seen = seen.into_inner().unwrap();
    assert_eq!(seen.len(), 4);
    assert!(seen.iter().all(|&t| t == caller));
}

/// An engine with a network: its games repeat (in-process at any concurrency, and as game jobs
/// carried through the executor's wire format), a network and no network play differently, and
/// the PGN seat hash tells the two apart.
#[test]
fn network_engines_play_reproducibly_and_are_told_apart() {
    use xqtune::eval::nnue::{Activation, Network};
    use xqtune::exec::Job;
    use xqtune::play::job::GameJob;
    use xqtune::play::pool::EnginePool;

    let net = Arc::new(Network::random(11, 32, 4, Activation::SCReLU));
    let mut with_net = engine("N", EvalParams::default());
    with_net.network = Some(net.clone());
    let a = Engine::Internal(with_net);
    let b = Engine::Internal(engine("C", EvalParams::default()));
    assert_ne!(a.params_hash(), b.params_hash());
    let cfg = tiny(1, 4);
    let one = run_match_with_progress(&a, &b, &cfg, &|_| {}).expect("match runs");
    let two = run_match_with_progress(&a, &b, &tiny(2, 4), &|_| {}).expect("match runs");
    assert_eq!(pgn(&one), pgn(&two));
    assert!(pgn(&one).contains(&a.params_hash().unwrap()));
    // The classical engine against itself plays other games.
    let c = run_match_with_progress(&b, &b, &cfg, &|_| {}).expect("match runs");
    let moves = |r: &MatchReport| r.games.iter().map(|g| g.moves.clone()).collect::<Vec<_>>();
    assert_ne!(moves(&one), moves(&c));

    // A game job with the network, through bincode (the MPI wire) and back: the same network
    // and the same game.
    let openings = xqtune::play::default_openings();
    let job = GameJob::of_match(&a, &b, &cfg, &openings, &[0], 0);
    let wire: GameJob = bincode::deserialize(&bincode::serialize(&job).unwrap()).unwrap();
    match (&wire.a, &job.a) {
        (Engine::Internal(w), Engine::Internal(j)) => {
            assert_eq!(w.network.as_deref(), j.network.as_deref());
            assert_eq!(w.network.as_ref().unwrap().hash(), net.hash());
        }
        _ => panic!("engine A is in-process"),
    }
    let pool = EnginePool::new();
    let mut here = job.run(&pool);
    let mut there = wire.run(&pool);
    here.duration_ms = 0;
    there.duration_ms = 0;
    assert_eq!(format!("{here:?}"), format!("{there:?}"));
}

/// A match resumed from any set of its finished games (a kill can leave any subset, in any
/// order) plays only the others and ends with the uninterrupted match's games and counts; with
/// an SPRT the resumed match stops at the same pair; a game past the match is refused.
#[test]
fn a_resumed_match_plays_the_games_of_the_uninterrupted_one() {
    let a = Engine::Internal(engine("A", EvalParams::default()));
    let b = Engine::Internal(engine("B", odd_eval()));
    let cfg = tiny(2, 8);
    let full = play(&cfg);
    assert_eq!(full.games.len(), 8);
    let done: Vec<_> = [5, 0, 2, 3]
        .iter()
        .map(|&i| full.games[i].clone())
        .collect();
    let played = std::sync::Mutex::new(Vec::new());
    let resumed = run_match_resuming(&a, &b, &cfg, done, &|p| {
        played.lock().unwrap().push(p.game.index);
    })
    .unwrap();
    let mut played = played.into_inner().unwrap();
    played.sort();
    assert_eq!(played, [1, 4, 6, 7]);
    assert_eq!(resumed.played, 4);
    assert_eq!(pgn(&resumed), pgn(&full));
    assert_eq!(resumed.result, full.result);
    // Everything finished: nothing to play.
    let again =
        run_match_resuming(&a, &b, &cfg, full.games.clone(), &|_| panic!("played")).unwrap();
    assert_eq!((again.played, again.result), (0, full.result));

    let sprt = MatchConfig {
        // as in sprt_stops_at_the_same_pair_every_time: decides within a few pairs
        sprt: Some(SprtConfig {
            elo0: -300.0,
            elo1: -100.0,
            alpha: 0.3,
            beta: 0.3,
        }),
        ..tiny(2, 60)
    };
    let whole = play(&sprt);
    assert!(whole.stopped_early, "the SPRT decides early");
    let half = whole.games.len() / 2;
    let resumed = run_match_resuming(&a, &b, &sprt, whole.games[..half].to_vec(), &|_| {}).unwrap();
    assert_eq!(pgn(&resumed), pgn(&whole));
    assert_eq!(
        resumed.sprt.map(|s| s.verdict),
        whole.sprt.map(|s| s.verdict)
    );

    let mut stray = full.games[0].clone();
    stray.index = 8;
    let e = run_match_resuming(&a, &b, &cfg, vec![stray], &|_| {}).unwrap_err();
    assert!(e.to_string().contains("index 8"), "{e}");
}

/// `xqtune match` killed (SIGKILL) after a few games, then `--resume`d twice from another
/// folder (the second time with nothing left to play), writes the games of the uninterrupted
/// match, plays none twice, and names what is wrong with a bad `--resume`.
#[test]
fn the_command_line_resumes_a_killed_match() {
    let dir = std::env::temp_dir().join(format!("xqtune-match-resume-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    // B's parameters by a path relative to the folder the match starts in.
    std::fs::write(dir.join("odd.json"), odd_eval().to_json_string()).unwrap();
    let xqtune = || std::process::Command::new(env!("CARGO_BIN_EXE_xqtune"));
    let games = 24;
    let start = |out: &str| {
        let mut c = xqtune();
        c.current_dir(&dir)
            .args([
                "match",
                "--b",
                "odd.json",
                "--nodes",
                "300",
                "--max-plies",
                "40",
            ])
            .args([
                "--games",
                &games.to_string(),
                "--seed",
                "3",
                "--concurrency",
                "1",
            ])
            .args(["--out-dir", out]);
        c
    };
    let o = start("full").output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let fd = run_dir(&dir.join("full"));
    for f in ["config.json", "games.jsonl", "games.pgn", "summary.json"] {
        assert!(fd.join(f).exists(), "{f}");
    }

    let mut child = start("part")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let kept = kill_after_games(&mut child, &dir.join("part"), 2);
    let pd = run_dir(&dir.join("part"));
    assert!((2..games).contains(&kept), "{kept} games before the kill");
    for round in 0..2 {
        let o = xqtune()
            .current_dir("/")
            .args(["match", "--resume"])
            .arg(&pd)
            .args(["--concurrency", "2"])
            .output()
            .unwrap();
        let (stdout, stderr) = (
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr),
        );
        assert!(o.status.success(), "{stderr}");
        assert!(stdout.contains("Score of default vs odd"), "{stdout}");
        if round == 1 {
            assert!(
                stderr.contains(&format!("{games} games already played")),
                "{stderr}"
            );
            assert!(stdout.contains("0 games in "), "{stdout}");
        }
    }
    assert_eq!(pgn_without_clock(&pd), pgn_without_clock(&fd));
    assert_eq!(
        journal_lines(&dir.join("part")),
        games,
        "no game was played twice"
    );
    let summary = |d: &std::path::Path| -> serde_json::Value {
        serde_json::from_str(&std::fs::read_to_string(d.join("summary.json")).unwrap()).unwrap()
    };
    let (full, resumed) = (summary(&fd), summary(&pd));
    for k in [
        "wins",
        "losses",
        "draws",
        "pentanomial",
        "games",
        "terminations",
        "complete",
    ] {
        assert_eq!(resumed[k], full[k], "{k}");
    }

    let bad = |args: &[&str]| -> String {
        let o = xqtune().args(["match"]).args(args).output().unwrap();
        assert!(!o.status.success());
        String::from_utf8_lossy(&o.stderr).to_string()
    };
    let e = bad(&["--resume", dir.join("nothing").to_str().unwrap()]);
    assert!(e.contains("is not the run folder of a match"), "{e}");
    let e = bad(&["--resume", dir.to_str().unwrap()]);
    assert!(e.contains("is not the run folder of a match"), "{e}");
    let e = bad(&["--resume", pd.to_str().unwrap(), "--no-save"]);
    assert!(e.contains("leave out --no-save"), "{e}");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A journal reopened for its own match gives back its games; opened for another match (the
/// engines swapped, or fewer games) it is refused, naming the file and the game.
#[test]
fn a_journal_opens_only_for_its_own_match() {
    use xqtune::play::journal::Journal;
    use xqtune::play::resume::open_journal;
    let a = Engine::Internal(engine("A", EvalParams::default()));
    let b = Engine::Internal(engine("B", odd_eval()));
    let full = play(&tiny(2, 4));
    let dir = std::env::temp_dir().join(format!("xqtune-journal-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("games.jsonl");
    let (mut journal, done) = Journal::open(&path).unwrap();
    assert!(done.is_empty());
    for g in &full.games[..3] {
        journal.append(g.index, g).unwrap();
    }
    drop(journal);
    let (_, done) = open_journal(&path, &a, &b, 4).unwrap();
    assert_eq!(done.len(), 3);
    assert_eq!(pgn_of(&done), pgn_of(&full.games[..3]));
    let e = format!("{:#}", open_journal(&path, &b, &a, 4).err().unwrap());
    assert!(
        e.contains(&path.display().to_string()) && e.contains("game 0 of the journal (A vs B)"),
        "{e}"
    );
    let e = format!("{:#}", open_journal(&path, &a, &b, 2).err().unwrap());
    assert!(e.contains("not a game of this match of 2 games"), "{e}");
    std::fs::remove_dir_all(&dir).unwrap();
}
