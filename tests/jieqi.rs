//! Jieqi rules and notation: perft against an independent reference mover, FEN round trips and
//! errors, move suffixes, the capture-reveal rule, seeded deals and the arbiter.

// The independent reference mover lives in a folder so that cargo does not build it as a test.
mod jieqi_reference;

use jieqi_reference as reference;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::collections::BTreeSet;
use xqtune::core::arbiter::{self, Arbiter, CaptureReveal};
use xqtune::core::jieqi::{self, JieqiRules};
use xqtune::core::{
    Color, FenError, Move, MoveError, PieceType, Position, Reason, Square, Variant, perft,
};

/// A position of `tests/data/jieqi.perft`: (name, fen, [(depth, nodes)]).
type PerftCase = (String, String, Vec<(u32, u64)>);

fn perft_cases() -> Vec<PerftCase> {
    let text = include_str!("data/jieqi.perft");
    let mut out: Vec<PerftCase> = Vec::new();
    let mut name = String::new();
    for line in text.lines() {
        if let Some(c) = line.strip_prefix("# ") {
            name = c.to_string();
        } else if let Some(fen) = line.strip_prefix("epd ") {
            out.push((name.clone(), fen.to_string(), Vec::new()));
        } else if let Some(rest) = line.strip_prefix("perft ") {
            let mut it = rest.split_whitespace().map(|x| x.parse::<u64>().unwrap());
            let (d, n) = (it.next().unwrap(), it.next().unwrap());
            out.last_mut().unwrap().2.push((d as u32, n));
        }
    }
    out
}

fn legal_squares(pos: &Position) -> BTreeSet<(usize, usize)> {
    pos.legal_moves()
        .iter()
        .map(|m| (m.from().index(), m.to().index()))
        .collect()
}

fn reference_squares(fen: &str) -> BTreeSet<(usize, usize)> {
    reference::parse(fen).legal().into_iter().collect()
}

#[test]
fn perft_file_agrees_with_reference_mover() {
    let cases = perft_cases();
    assert!(cases.len() >= 10, "the data file lists the positions");
    for (name, fen, counts) in cases {
        let mut pos = Position::from_fen(&fen).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(pos.variant(), Variant::Jieqi, "{name}");
        let refboard = reference::parse(&fen);
        for (depth, expected) in counts {
            assert_eq!(
                perft::perft(&mut pos, depth),
                expected,
                "{name} depth {depth}"
            );
            assert_eq!(
                refboard.perft(depth),
                expected,
                "reference: {name} d{depth}"
            );
            if depth <= 2 {
                // Every node: incremental key and bitboards == recomputed, unmake exact.
                assert_eq!(
                    perft::perft_checked(&mut pos, depth),
                    Ok(expected),
                    "{name}"
                );
            }
        }
        assert_eq!(
            pos.to_fen(),
            fen,
            "{name}: perft left the position unchanged"
        );
    }
}

#[test]
fn reveal_outcomes_weigh_the_pool() {
    for (_, fen, _) in perft_cases() {
        let pos = Position::from_fen(&fen).unwrap();
        let us = pos.side_to_move();
        let mut children = Vec::new();
        for &m in pos.legal_moves().iter() {
            let outs: Vec<(Move, u32)> = pos.reveal_outcomes(m).collect();
            let total: u32 = outs.iter().map(|o| o.1).sum();
            if pos.is_dark(m.from()) {
                assert_eq!(total, pos.pool_total(us), "{fen}");
                for &(c, w) in &outs {
                    assert_eq!(w, pos.pool_count(us, c.reveal().unwrap()));
                }
            } else {
                assert_eq!(outs, vec![(m, 1)]);
            }
            children.extend(outs);
        }
        assert_eq!(children, pos.children().collect::<Vec<_>>(), "{fen}");
        // Perft's bulk count of the last ply is the same expansion, counted.
        assert_eq!(pos.count_children(), children.len() as u64, "{fen}");
    }
}

#[test]
fn jieqi_start_counts() {
    let mut pos = Position::jieqi_startpos();
    // 43 dark moves x 6 pool kinds + the king's e0e1.
    assert_eq!(perft::perft(&mut pos, 1), 259);
    assert_eq!(perft::perft(&mut pos, 2), 66_462);
    let divide = perft::divide(&mut pos, 2);
    assert_eq!(divide.len(), 259);
    assert_eq!(divide.iter().map(|x| x.1).sum::<u64>(), 66_462);
}

/// Plays seeded random games through the arbiter under each capture-reveal rule and checks, at
/// every ply, the truth and both views: same legal moves as the reference, consistent
/// incremental state, exact FEN round trip, pools as each side may know them.
#[test]
fn random_games_agree_with_reference_and_keep_views_honest() {
    for (seed, rule) in (0..12u64).zip(
        [
            CaptureReveal::Capturer,
            CaptureReveal::Nobody,
            CaptureReveal::Both,
        ]
        .into_iter()
        .cycle(),
    ) {
        let mut arb = Arbiter::from_seed(seed, rule);
        let mut rng = ChaCha8Rng::seed_from_u64(seed + 1000);
        for ply in 0..160 {
            let positions = [
                arb.truth().clone(),
                arb.view(Color::Red).clone(),
                arb.view(Color::Black).clone(),
            ];
            for pos in &positions {
                let fen = pos.to_fen();
                pos.debug_validate().unwrap();
                assert_eq!(legal_squares(pos), reference_squares(&fen), "{fen}");
                let back = Position::from_fen(&fen).unwrap_or_else(|e| panic!("{fen}: {e}"));
                assert_eq!(back.to_fen(), fen);
                assert_eq!(back.key(), pos.key(), "{fen}");
                for c in Color::ALL {
                    assert!(pos.pool_total(c) >= pos.dark_count(c), "{fen}");
                }
            }
            // The arbiter knows every identity; the views know none and are never shown them.
            assert!(arb.truth().knows_all_hidden());
            for c in Color::ALL {
                assert_eq!(arb.truth().pool_total(c), arb.truth().dark_count(c));
                let v = arb.view(c);
                assert_eq!(v.to_fen().split_whitespace().count(), 5, "no hidden field");
                assert_eq!(v.dark(), arb.truth().dark());
                for side in Color::ALL {
                    for k in PieceType::ALL {
                        assert!(v.pool_count(side, k) >= arb.truth().pool_count(side, k));
                    }
                }
            }
            // Under `both` everybody knows what the arbiter knows about the pools.
            if rule == CaptureReveal::Both {
                let truth_pools = arb.truth().to_fen();
                let truth_pools = truth_pools.split_whitespace().nth(2).unwrap();
                assert_eq!(
                    arb.view_fen(Color::Red).split_whitespace().nth(2).unwrap(),
                    truth_pools
                );
            }
            if arb.outcome().is_some() {
                break;
            }
            let moves = arb.truth().legal_moves();
            let m = moves[rng.gen_range(0..moves.len())];
            let dark_from = arb.truth().is_dark(m.from());
            let dark_to = arb.truth().is_dark(m.to());
            let played = arb.play(m).unwrap();
            assert_eq!(played.truth.reveal().is_some(), dark_from, "ply {ply}");
            assert_eq!(played.truth.captured_reveal().is_some(), dark_to);
            let mover = arb.truth().side_to_move().flip();
            for viewer in Color::ALL {
                let v = played.views[viewer.index()];
                assert_eq!(v.reveal(), played.truth.reveal());
                let learns = dark_to && rule.learns(viewer, mover);
                assert_eq!(v.captured_reveal().is_some(), learns);
            }
        }
        // An engine fed `position fen ... moves ...` reaches exactly the view.
        for c in Color::ALL {
            let cmd = arb.position_command(c);
            let rest = cmd.strip_prefix("fen ").unwrap();
            let (fen, moves) = match rest.split_once(" moves ") {
                Some((f, m)) => (f, m),
                None => (rest, ""),
            };
            let mut pos = Position::from_fen(fen).unwrap();
            for text in moves.split_whitespace() {
                let m = pos.parse_move(text).unwrap_or_else(|e| panic!("{e}"));
                assert_eq!(pos.move_text(m), text);
                pos.make_move(m);
            }
            assert_eq!(pos.to_fen(), arb.view_fen(c));
            assert_eq!(pos.key(), arb.view(c).key());
        }
    }
}

#[test]
fn capture_reveal_rule_decides_who_learns() {
    // Red's dark cannon h2 jumps the cannon on h7 and takes black's dark piece on h9.
    let truth = arbiter::deal(5);
    let victim = truth.hidden_kind(Square::parse("h9").unwrap()).unwrap();
    let reveal = truth.hidden_kind(Square::parse("h2").unwrap()).unwrap();
    let h2h9 = Move::new(Square::parse("h2").unwrap(), Square::parse("h9").unwrap());
    for rule in [
        CaptureReveal::Capturer,
        CaptureReveal::Nobody,
        CaptureReveal::Both,
    ] {
        let mut arb = Arbiter::new(&truth, rule).unwrap();
        let played = arb.play(h2h9).unwrap();
        assert_eq!(played.truth.reveal(), Some(reveal));
        assert_eq!(played.truth.captured_reveal(), Some(victim));
        let full = PieceType::ALL.map(|k| k.initial_count() - (k == PieceType::King) as u32);
        for viewer in Color::ALL {
            let v = arb.view(viewer);
            let learned = rule.learns(viewer, Color::Red);
            for k in PieceType::ALL {
                let lost = (learned && k == victim) as u32;
                assert_eq!(v.pool_count(Color::Black, k), full[k.index()] - lost);
                let revealed = (k == reveal) as u32;
                assert_eq!(v.pool_count(Color::Red, k), full[k.index()] - revealed);
            }
            let text = v.history().last().map(|s| s.mv).unwrap();
            let expected = format!(
                "h2h9{}{}",
                reveal.letter(),
                if learned {
                    victim.letter().to_ascii_lowercase().to_string()
                } else {
                    String::new()
                }
            );
            assert_eq!(jieqi::format_move(text, Color::Red), expected);
        }
        // Black's pool in the capturer's view has one piece fewer than the victim's own view.
        let unseen = arb.view(Color::Black).pool_total(Color::Black)
            - arb.view(Color::Black).dark_count(Color::Black);
        assert_eq!(unseen, u32::from(rule != CaptureReveal::Both));
    }
}

#[test]
fn deals_are_reproducible_and_complete() {
    assert_eq!(arbiter::deal(42).to_fen(), arbiter::deal(42).to_fen());
    assert_ne!(arbiter::deal(42).to_fen(), arbiter::deal(43).to_fen());
    // Pinned: the same seed gives this deal on every machine.
    assert_eq!(
        arbiter::deal(1).to_fen(),
        include_str!("data/jieqi_deal1.fen").trim()
    );
    for seed in 0..50 {
        let d = arbiter::deal(seed);
        assert!(d.knows_all_hidden());
        let fen = d.to_fen();
        let hidden = fen.split_whitespace().nth(5).unwrap();
        for c in Color::ALL {
            for k in PieceType::ALL {
                let letter = xqtune::core::Piece::new(c, k).letter();
                let n = hidden.chars().filter(|&x| x == letter).count() as u32;
                let expected = if k == PieceType::King {
                    0
                } else {
                    k.initial_count()
                };
                assert_eq!(n, expected, "seed {seed} {letter}");
            }
        }
        // The hidden field changes nothing a player can see, not even the key.
        let plain = d.without_hidden();
        assert_eq!(plain.key(), d.key());
        assert_eq!(plain.to_fen(), jieqi::JIEQI_START_FEN);
    }
}

#[test]
fn move_suffixes_parse_and_print() {
    let start = Position::jieqi_startpos();
    let sq = |s: &str| Square::parse(s).unwrap();
    let m = start.parse_move("h2e2N").unwrap();
    assert_eq!(
        (m.from(), m.to(), m.reveal()),
        (sq("h2"), sq("e2"), Some(PieceType::Horse))
    );
    assert_eq!(m.captured_reveal(), None);
    let m = start.parse_move("h2h9Cr").unwrap();
    assert_eq!(m.reveal(), Some(PieceType::Cannon));
    assert_eq!(m.captured_reveal(), Some(PieceType::Rook));
    assert_eq!(start.move_text(m), "h2h9Cr");
    // The capture may also be written without the victim's kind (the viewer did not learn it).
    let m = start.parse_move("h2h9C").unwrap();
    assert_eq!(m.captured_reveal(), None);
    assert!(matches!(
        start.parse_move("h2e2"),
        Err(MoveError::MissingReveal(_))
    ));
    for bad in ["h2e2n", "h2e2K", "h2e2Nr", "h2h9Crr", "h2h9CR", "h2e2Z"] {
        assert!(
            matches!(start.parse_move(bad), Err(MoveError::BadSuffix { .. })),
            "{bad}: {:?}",
            start.parse_move(bad)
        );
    }
    assert!(matches!(
        start.parse_move("h2e3N"),
        Err(MoveError::Illegal(_))
    ));
    // `b7b0r`: black's dark cannon jumps red's cannon on b2 and reveals as a rook.
    let mut pos = start.clone();
    pos.make_move(pos.parse_move("a3a4P").unwrap());
    let m = pos.parse_move("b7b0r").unwrap();
    assert_eq!(m.reveal(), Some(PieceType::Rook));
    assert_eq!(pos.move_text(m), "b7b0r");
    // A pool without the kind refuses it.
    let lone = Position::from_fen(
        "xxxxkxxxx/9/1x5x1/x1x1x1x1x/9/9/X1X1X1X1X/1X5X1/9/XXXXKXXXX w R2A2C2P5N2B2r2a2c2p5n2b1 0 1",
    );
    assert!(matches!(lone, Err(FenError::PoolTooSmall { .. })));
    // Xiangqi moves take no suffix.
    let xq = Position::startpos();
    assert!(xq.parse_move("h2e2").is_ok());
    assert!(matches!(
        xq.parse_move("h2e2N"),
        Err(MoveError::BadSuffix { .. })
    ));
    // Every perft child prints and parses back to itself.
    for (_, fen, _) in perft_cases() {
        let pos = Position::from_fen(&fen).unwrap();
        for (m, _) in pos.children() {
            assert_eq!(pos.parse_move(&pos.move_text(m)), Ok(m), "{fen}");
        }
    }
}

#[test]
fn captured_kind_leaves_the_victims_pool_and_comes_back() {
    let mut pos = Position::jieqi_startpos();
    let key = pos.key();
    let m = pos.parse_move("h2h9Cr").unwrap();
    pos.make_move(m);
    pos.debug_validate().unwrap();
    assert_eq!(pos.pool_count(Color::Black, PieceType::Rook), 1);
    assert_eq!(pos.pool_count(Color::Red, PieceType::Cannon), 1);
    assert_eq!(pos.dark_count(Color::Black), 14);
    assert_eq!(
        pos.to_fen(),
        "xxxxkxxCx/9/1x5x1/x1x1x1x1x/9/9/X1X1X1X1X/1X7/9/XXXXKXXXX b R2A2C1P5N2B2r1a2c2p5n2b2 0 1"
    );
    pos.unmake_move();
    assert_eq!(pos.key(), key);
    assert_eq!(pos.to_fen(), jieqi::JIEQI_START_FEN);
    // Without the learned kind the victim's pool is unchanged (one unseen capture).
    pos.make_move(pos.parse_move("h2h9C").unwrap());
    assert_eq!(pos.pool_total(Color::Black), 15);
    assert_eq!(pos.dark_count(Color::Black), 14);
    assert_eq!(pos.key(), Position::from_fen(&pos.to_fen()).unwrap().key());
    pos.unmake_move();
    assert_eq!(pos.key(), key);
}

#[test]
fn a_dark_piece_can_reveal_as_a_pawn_behind_its_start_rank() {
    let mut pos = Position::jieqi_startpos();
    pos.make_move(pos.parse_move("a0a1P").unwrap());
    let fen = pos.to_fen();
    assert!(fen.starts_with("xxxxkxxxx/9/1x5x1/x1x1x1x1x/9/9/X1X1X1X1X/1X5X1/P8/1XXXKXXXX b"));
    assert_eq!(Position::from_fen(&fen).unwrap().to_fen(), fen);
    // The same board is impossible in Xiangqi.
    assert!(matches!(
        Position::from_fen("rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/2P1P1P1P/1C5C1/P8/1NBAKABNR b - - 0 1"),
        Err(FenError::UnreachableSquare { .. })
    ));
}

#[test]
fn bright_jieqi_frees_advisors_and_elephants() {
    let bright = Position::bright_jieqi_startpos();
    assert_eq!(bright.variant(), Variant::Jieqi);
    assert_eq!(bright.to_fen(), jieqi::BRIGHT_JIEQI_START_FEN);
    assert_eq!(
        Position::from_fen(jieqi::BRIGHT_JIEQI_START_FEN)
            .unwrap()
            .variant(),
        Variant::Jieqi
    );
    // A revealed advisor on e2 steps to all four diagonals; an elephant crosses the river.
    let pos = Position::from_fen("4k4/9/9/9/2B6/9/9/4A4/9/3K5 w - 0 1").unwrap();
    let targets = |from: &str| -> BTreeSet<String> {
        pos.legal_moves()
            .iter()
            .filter(|m| m.from() == Square::parse(from).unwrap())
            .map(|m| m.to().to_string())
            .collect()
    };
    assert_eq!(
        targets("e2"),
        ["d1", "d3", "f1", "f3"].map(String::from).into()
    );
    assert_eq!(
        targets("c5"),
        ["a3", "a7", "e3", "e7"].map(String::from).into()
    );
    // A revealed advisor attacks outside the palace; a dark one (d0) does not reach c1.
    assert!(pos.is_attacked(Square::parse("d3").unwrap(), Color::Red));
    let start = Position::jieqi_startpos();
    assert!(!start.is_attacked(Square::parse("c1").unwrap(), Color::Red));
    assert!(start.is_attacked(Square::parse("e1").unwrap(), Color::Red));
    // The same pieces are refused in Xiangqi.
    assert!(Position::from_fen("4k4/9/9/9/2B6/9/9/4A4/9/3K5 w - - 0 1").is_err());
}

#[test]
fn variant_comes_from_the_layout_or_the_caller() {
    let xq = xqtune::core::START_FEN;
    assert_eq!(Position::from_fen(xq).unwrap().variant(), Variant::Xiangqi);
    let as_jieqi = Position::from_fen_variant(xq, Variant::Jieqi).unwrap();
    assert_eq!(as_jieqi.to_fen(), jieqi::BRIGHT_JIEQI_START_FEN);
    let as_xq =
        Position::from_fen_variant(jieqi::BRIGHT_JIEQI_START_FEN, Variant::Xiangqi).unwrap();
    assert_eq!(as_xq.to_fen(), xq);
    assert!(matches!(
        Position::from_fen_variant(jieqi::JIEQI_START_FEN, Variant::Xiangqi),
        Err(FenError::VariantMismatch(..))
    ));
    assert_eq!(
        Position::startpos_of(Variant::Jieqi).to_fen(),
        jieqi::JIEQI_START_FEN
    );
    assert_eq!("JieQi".parse::<Variant>(), Ok(Variant::Jieqi));
    assert!("shogi".parse::<Variant>().is_err());
    assert_eq!("none".parse::<CaptureReveal>(), Ok(CaptureReveal::Nobody));
    assert!("all".parse::<CaptureReveal>().is_err());
}

#[test]
fn no_capture_limit_is_an_option() {
    let fen80 = "4k4/9/9/9/9/9/9/9/4A4/3K5 w - 80 60";
    let mut pos = Position::from_fen(fen80).unwrap();
    // A lone advisor can still mate in Jieqi, so only the counter ends this game.
    assert_eq!(
        pos.outcome().map(|o| o.reason),
        Some(Reason::NoCaptureLimit)
    );
    pos.set_jieqi_rules(JieqiRules {
        no_capture_limit: jieqi::NO_CAPTURE_LIMIT_LONG,
    });
    assert_eq!(pos.no_capture_limit(), 120);
    assert_eq!(pos.outcome(), None);
    let pos = Position::from_fen("4k4/9/9/9/9/9/9/9/4A4/3K5 w - 79 60").unwrap();
    assert_eq!(pos.outcome(), None);
}

#[test]
fn valid_fens_round_trip_exactly() {
    for line in include_str!("data/jieqi_valid.fen").lines() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let pos = Position::from_fen(line).unwrap_or_else(|e| panic!("{line}: {e}"));
        assert_eq!(pos.to_fen(), line);
        assert_eq!(pos.key(), pos.compute_key());
    }
}

#[test]
fn invalid_fens_name_the_problem() {
    for line in include_str!("data/jieqi_invalid.fen").lines() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let (fen, want) = line.rsplit_once(" ; ").unwrap();
        match Position::from_fen(fen) {
            Ok(p) => panic!("accepted {fen} as {}", p.to_fen()),
            Err(e) => {
                let got = format!("{e:?}");
                assert!(
                    got.starts_with(want),
                    "{fen}: expected {want}, got {got} ({e})"
                );
                assert!(!e.to_string().is_empty());
            }
        }
    }
}

#[test]
fn hidden_field_is_read_and_checked() {
    let d = arbiter::deal(9);
    let fen = d.to_fen();
    let back = Position::from_fen(&fen).unwrap();
    assert_eq!(back.to_fen(), fen);
    for s in 0..90u8 {
        assert_eq!(back.hidden_kind(Square(s)), d.hidden_kind(Square(s)));
    }
    // Partly known identities: `?` is kept.
    let mut fields: Vec<String> = fen.split_whitespace().map(String::from).collect();
    let mut h: Vec<char> = fields[5].chars().collect();
    h[0] = '?';
    h[29] = '?';
    fields[5] = h.into_iter().collect();
    let partial = fields.join(" ");
    assert_eq!(Position::from_fen(&partial).unwrap().to_fen(), partial);
    // An arbiter refuses to start without every identity.
    let p = Position::from_fen(&partial).unwrap();
    assert!(Arbiter::new(&p, CaptureReveal::Capturer).is_err());
}

#[test]
fn cli_perft_reads_jieqi() {
    let exe = env!("CARGO_BIN_EXE_xqtune");
    let run = |args: &[&str]| {
        let out = std::process::Command::new(exe).args(args).output().unwrap();
        (
            out.status.success(),
            String::from_utf8_lossy(&out.stdout).to_string(),
            String::from_utf8_lossy(&out.stderr).to_string(),
        )
    };
    let (ok, out, _) = run(&["perft", "-d", "2", "--fen", jieqi::JIEQI_START_FEN]);
    assert!(ok && out.contains("nodes 66462 "), "{out}");
    let (ok, out, _) = run(&["perft", "-d", "2", "--variant", "jieqi"]);
    assert!(ok && out.contains("nodes 66462 "), "{out}");
    let (ok, out, _) = run(&["perft", "-d", "1", "--variant", "jieqi", "--divide"]);
    assert!(
        ok && out.contains("h2e2N: 1") && out.contains("e0e1: 1"),
        "{out}"
    );
    let (ok, _, err) = run(&[
        "perft",
        "-d",
        "1",
        "--fen",
        "xxxxkxxxx/9/1x5x1/x1x1x1x1x/9/9/X1X1X1X1X/1X5X1/9/XXXXKXXXX w R2 0 1",
    ]);
    assert!(!ok && err.contains("pool"), "{err}");
}

/// Mangled Jieqi FENs and move texts give errors or valid positions, never a panic, and what is
/// accepted round-trips.
#[test]
fn mangled_input_never_panics() {
    let mut rng = ChaCha8Rng::seed_from_u64(7);
    let alphabet: Vec<char> = "xXkKaAbBnNrRcCpPhHeE0123456789/ -?wZ漢".chars().collect();
    let seeds: Vec<String> = include_str!("data/jieqi_valid.fen")
        .lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .map(String::from)
        .collect();
    for i in 0..20_000 {
        let mut chars: Vec<char> = seeds[i % seeds.len()].chars().collect();
        for _ in 0..rng.gen_range(1..4) {
            let at = rng.gen_range(0..chars.len());
            match rng.gen_range(0..3) {
                0 => chars[at] = alphabet[rng.gen_range(0..alphabet.len())],
                1 => {
                    chars.remove(at);
                }
                _ => chars.insert(at, alphabet[rng.gen_range(0..alphabet.len())]),
            }
            if chars.is_empty() {
                break;
            }
        }
        let fen: String = chars.into_iter().collect();
        if let Ok(pos) = Position::from_fen(&fen) {
            let out = pos.to_fen();
            let again = Position::from_fen(&out).unwrap_or_else(|e| panic!("{fen} -> {out}: {e}"));
            assert_eq!(again.to_fen(), out);
            assert_eq!(again.key(), pos.key());
            let _ = perft::perft(&mut pos.clone(), 1);
        }
    }
    let start = Position::jieqi_startpos();
    for text in [
        "", "h2", "h2e2NN", "h2e2漢", "z9z9", "h2-e2-N", "e0e1K", "e0e1", "0000",
    ] {
        let _ = start.parse_move(text);
    }
    assert!(start.parse_move("e0e1").is_ok());
    assert!(start.parse_move("H2-E2N").is_ok());
}
