//! Game import on real data: the CCPD collections shipped in `datasets/ccpd/` (Big5, Chinese
//! notation; CC BY 4.0, see its README), encoding samples and a file with broken games.

use rayon::prelude::*;
use std::path::PathBuf;
use std::process::Command;
use xqtune::core::{ChineseStyle, Position, Script};
use xqtune::import::{ImportReport, ImportedGame, SkipReason, read_dataset, read_games};

fn data(path: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(path)
}

fn ccpd(name: &str) -> ImportReport {
    read_games(data(&format!("datasets/ccpd/{name}.pgn.gz")), None)
        .unwrap_or_else(|e| panic!("{name}: {e}"))
}

/// Every move of every game, written in Chinese (three styles) and WXF, reads back as itself.
/// Returns the number of moves checked.
fn assert_round_trip(games: &[ImportedGame]) -> usize {
    let styles = [
        ChineseStyle::TRADITIONAL,
        ChineseStyle::SIMPLIFIED,
        ChineseStyle {
            script: Script::Traditional,
            distinct_sides: true,
            ascii_black_digits: true,
        },
    ];
    games
        .par_iter()
        .map(|g| {
            let mut pos = g.start_position();
            for (ply, &m) in g.moves.iter().enumerate() {
                for style in styles {
                    let text = pos.to_chinese(m, style);
                    assert_eq!(
                        pos.parse_chinese(&text),
                        Ok(m),
                        "{} ply {ply}: {text} in {}",
                        g.id(),
                        pos.to_fen()
                    );
                }
                let wxf = pos.to_wxf(m);
                assert_eq!(
                    pos.parse_wxf(&wxf),
                    Ok(m),
                    "{} ply {ply}: {wxf} in {}",
                    g.id(),
                    pos.to_fen()
                );
                pos.make_move(m);
            }
            g.moves.len()
        })
        .sum()
}

fn skipped_numbers(r: &ImportReport) -> Vec<usize> {
    r.skipped.iter().map(|s| s.number).collect()
}

#[test]
fn ccpd_small_files_import_and_round_trip() {
    // (file, games imported, numbers of the skipped games: all bad FENs or illegal moves in the
    // records themselves, see datasets/README.md)
    let expected: [(&str, usize, &[usize]); 5] = [
        ("mates", 5, &[]),
        ("endgames", 195, &[]),
        ("tactics", 342, &[]),
        ("openings", 637, &[50, 77, 152, 178, 180, 227]),
        ("middlegames", 1549, &[967, 1027, 1447]),
    ];
    for (name, imported, skipped) in expected {
        let r = ccpd(name);
        assert_eq!(r.encoding, "Big5", "{name}");
        assert!(!r.had_decode_errors, "{name}");
        assert_eq!(r.games.len(), imported, "{name}");
        assert_eq!(skipped_numbers(&r), skipped, "{name}");
        let moves = assert_round_trip(&r.games);
        assert!(moves > 0);
    }
    let m = ccpd("middlegames");
    let reasons: Vec<&str> = m.skipped.iter().map(|s| s.reason.category()).collect();
    assert_eq!(
        reasons,
        [
            "bad FEN",
            "illegal move (no legal match)",
            "illegal move (no legal match)"
        ]
    );
}

#[test]
fn ccpd_games_import_and_round_trip_every_move() {
    let r = ccpd("games");
    assert_eq!(r.games.len() + r.skipped.len(), 22_393);
    // Three records end with an illegal king or advisor move; everything else imports.
    assert_eq!(skipped_numbers(&r), [22274, 22280, 22305]);
    for s in &r.skipped {
        assert!(matches!(s.reason, SkipReason::BadMove { .. }), "{s}");
    }
    let first = &r.games[0];
    assert_eq!(first.tag("Red"), Some("柳大華"));
    assert_eq!(first.moves[0].uci(), "h2e2");
    let moves = assert_round_trip(&r.games);
    assert!(moves > 1_500_000, "{moves}");
}

#[test]
fn same_game_in_utf8_gbk_and_big5() {
    let mut moves = Vec::new();
    for (file, encoding) in [
        ("sample-utf8.pgn", "UTF-8"),
        ("sample-gbk.pgn", "GBK"),
        ("sample-big5.pgn", "Big5"),
    ] {
        let r = read_games(data(&format!("tests/data/{file}")), None).unwrap();
        assert_eq!(r.encoding, encoding, "{file}");
        assert!(r.skipped.is_empty(), "{file}: {:?}", r.skipped);
        assert_eq!(r.games.len(), 1);
        moves.push(r.games[0].moves.clone());
    }
    assert_eq!(moves[0].len(), 51);
    assert_eq!(moves[0], moves[1]);
    assert_eq!(moves[0], moves[2]);
    let gbk = read_games(data("tests/data/sample-gbk.pgn"), None).unwrap();
    assert_eq!(gbk.games[0].tag("Event"), Some("编码测试 簡體"));
    // Forcing the wrong encoding garbles the moves: the game is skipped, not half-imported.
    let forced = read_games(
        data("tests/data/sample-gbk.pgn"),
        xqtune::import::encoding_by_name("big5"),
    )
    .unwrap();
    assert_eq!(forced.games.len(), 0);
    assert_eq!(forced.skipped.len(), 1);
}

fn run_import(args: &[&str]) -> (String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_xqtune"))
        .arg("import")
        .args(args)
        .output()
        .expect("run xqtune");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn cli_reports_skipped_games_and_writes_dataset() {
    let dir = std::env::temp_dir().join(format!("xqtune-import-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let epd = dir.join("out.epd.gz");
    let pgn = dir.join("out.pgn");
    let illegal = data("tests/data/illegal.pgn");
    let (stdout, stderr) = run_import(&[
        illegal.to_str().unwrap(),
        "-o",
        epd.to_str().unwrap(),
        "--pgn-out",
        pgn.to_str().unwrap(),
    ]);
    // Games 1 (4 moves) and 4 (2 moves) import: 5 + 3 positions.
    assert_eq!(
        stdout.lines().last(),
        Some("imported 2 games (8 positions), skipped 2"),
        "{stdout}"
    );
    assert!(stdout.contains("skipped (illegal move (no legal match)): 1"));
    assert!(stdout.contains("skipped (unparseable move): 1"));
    assert!(
        stderr.contains("illegal.pgn game 2 (line 6): move 2. (ply 3): '炮五進五'"),
        "{stderr}"
    );
    assert!(stderr.contains("illegal.pgn game 3"), "{stderr}");
    let rows = read_dataset(&epd).unwrap();
    assert_eq!(rows.len(), 8);
    assert_eq!(rows[0].id, "illegal.pgn#1:0");
    assert!(rows.iter().all(|r| Position::from_fen(&r.fen).is_ok()));
    assert_eq!(rows.iter().filter(|r| r.result.is_none()).count(), 3);

    // The normalised PGN reads back to the same games.
    let back = read_games(&pgn, None).unwrap();
    let orig = read_games(&illegal, None).unwrap();
    assert_eq!(back.games.len(), 2);
    for (a, b) in back.games.iter().zip(&orig.games) {
        assert_eq!(a.moves, b.moves);
        assert_eq!(a.start_fen, b.start_fen);
        assert_eq!(a.result, b.result);
    }

    // Options: drop unfinished games, skip plies, quiet positions only.
    let (stdout, _) = run_import(&[
        illegal.to_str().unwrap(),
        "-o",
        epd.to_str().unwrap(),
        "--drop-unfinished",
        "--skip-plies",
        "2",
        "--quiet-only",
    ]);
    assert!(stdout.contains("skipped (no result): 1"), "{stdout}");
    assert_eq!(
        stdout.lines().last(),
        Some("imported 1 games (3 positions), skipped 3"),
        "{stdout}"
    );
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn cli_refuses_bad_flags_and_missing_files() {
    let out = Command::new(env!("CARGO_BIN_EXE_xqtune"))
        .args(["import", "no-such-file.pgn"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("no-such-file.pgn"));
    let out = Command::new(env!("CARGO_BIN_EXE_xqtune"))
        .args(["import", "--encoding", "latin9", "x.pgn"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("latin9"));
}

/// The writer's canonical traditional form is the form the CCPD records use: every move text of
/// the collections, written back from the move it was read as, is the same text, except where
/// a record names a stacked rook, horse or cannon by its file (`車四進三` for `前車進三`: about
/// 0.7% of the moves; the reader accepts it when only one of the stacked pieces can make the
/// move). Stacked advisors and elephants are named by their file by both (the direction tells
/// them apart).
#[test]
fn canonical_writing_matches_the_ccpd_records() {
    use xqtune::import::{encoding, pgn};
    let mut total = 0usize;
    let mut file_for_stack = 0usize;
    for name in [
        "mates",
        "endgames",
        "tactics",
        "openings",
        "middlegames",
        "games",
    ] {
        let path = data(&format!("datasets/ccpd/{name}.pgn.gz"));
        let gz = std::fs::read(&path).unwrap();
        let mut bytes = Vec::new();
        std::io::Read::read_to_end(&mut flate2::read::GzDecoder::new(&gz[..]), &mut bytes).unwrap();
        let text = encoding::decode(&bytes, None).text.into_owned();
        let mut games = pgn::split_games(&text);
        if name == "games" {
            // Every fourth game: the full collection is round-tripped by another test.
            games = games.into_iter().step_by(4).collect();
        }
        let (moves, stacked, other): (usize, usize, Vec<String>) = games
            .par_iter()
            .enumerate()
            .map(|(i, raw)| {
                let (mut moves, mut stacked, mut other) = (0, 0, Vec::new());
                let fen = raw.tag("FEN").unwrap_or(xqtune::core::START_FEN);
                let Ok(mut pos) = Position::from_fen(fen) else {
                    return (moves, stacked, other);
                };
                for t in &raw.moves {
                    let Ok(m) = pos.parse_any(t) else { break };
                    moves += 1;
                    let w = pos.to_chinese(m, ChineseStyle::TRADITIONAL);
                    if &w != t {
                        let place = |s: &str| s.starts_with(['前', '後', '中']);
                        if place(&w) && !place(t) {
                            stacked += 1;
                        } else {
                            other.push(format!("{name} game {}: {t} written {w}", i + 1));
                        }
                    }
                    pos.make_move(m);
                }
                (moves, stacked, other)
            })
            .reduce(
                || (0, 0, Vec::new()),
                |mut a, b| {
                    a.2.extend(b.2);
                    (a.0 + b.0, a.1 + b.1, a.2)
                },
            );
        assert!(
            other.is_empty(),
            "{}: {:?}",
            other.len(),
            &other[..other.len().min(20)]
        );
        eprintln!("{name}: {moves} moves, {stacked} name a stacked piece by its file");
        total += moves;
        file_for_stack += stacked;
    }
    assert!(total > 500_000, "{total}");
    assert!(file_for_stack * 100 < total, "{file_for_stack} of {total}");
}
