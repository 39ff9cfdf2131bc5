//! FEN reading and writing: exact round trips (of the data files and of positions reached by
//! random play in every variant), every kind of invalid FEN refused with the right reason, and no
//! panic on any input string (FEN or move text).

mod common;

use common::{data_lines, perft_cases};
use proptest::prelude::*;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use xqtune::core::{Arbiter, CaptureReveal, Color, FenError, PieceType, Position, Square};

/// The name of a `FenError` variant, as written in `tests/data/invalid.fen`.
fn kind_name(e: &FenError) -> &'static str {
    match e {
        FenError::Empty => "Empty",
        FenError::WrongRankCount(_) => "WrongRankCount",
        FenError::WrongRankLength { .. } => "WrongRankLength",
        FenError::UnknownPiece(_) => "UnknownPiece",
        FenError::BadSide(_) => "BadSide",
        FenError::BadNumber { .. } => "BadNumber",
        FenError::TooManyFields(_) => "TooManyFields",
        FenError::MissingKing(_) => "MissingKing",
        FenError::TooManyPieces { .. } => "TooManyPieces",
        FenError::KingOutsidePalace { .. } => "KingOutsidePalace",
        FenError::UnreachableSquare { .. } => "UnreachableSquare",
        FenError::SideNotToMoveInCheck(_) => "SideNotToMoveInCheck",
        #[allow(unreachable_patterns)]
        _ => "Other",
    }
}

/// Everything a FEN describes is the same in `a` and `b` (`Position` has no `PartialEq`: its undo
/// history is not part of the position a FEN describes).
fn assert_same(a: &Position, b: &Position) {
    let fen = a.to_fen();
    assert_eq!(b.to_fen(), fen);
    assert_eq!(b.variant(), a.variant(), "{fen}");
    assert_eq!(b.key(), a.key(), "{fen}: key differs after round trip");
    assert_eq!(b.in_check(), a.in_check(), "{fen}");
    assert_eq!(b.side_to_move(), a.side_to_move(), "{fen}");
    assert_eq!(b.rule60(), a.rule60(), "{fen}");
    assert_eq!(b.fullmove(), a.fullmove(), "{fen}");
    for s in 0..90u8 {
        let sq = Square(s);
        assert_eq!(b.piece_at(sq), a.piece_at(sq), "{fen}: {sq}");
        assert_eq!(b.is_dark(sq), a.is_dark(sq), "{fen}: {sq}");
        assert_eq!(b.hidden_kind(sq), a.hidden_kind(sq), "{fen}: {sq}");
    }
    for color in Color::ALL {
        for kind in PieceType::ALL {
            assert_eq!(
                b.pool_count(color, kind),
                a.pool_count(color, kind),
                "{fen}"
            );
        }
    }
}

/// `from_fen(to_fen(p)) == p`, and writing the read position gives the same text again.
fn assert_position_round_trips(pos: &Position) {
    let fen = pos.to_fen();
    let again = Position::from_fen(&fen).unwrap_or_else(|e| panic!("own FEN {fen} refused: {e}"));
    assert_same(pos, &again);
    assert_eq!(again.to_fen(), fen, "to_fen is not stable");
    again.debug_validate().expect("consistent position");
}

fn assert_round_trip(fen: &str) {
    let pos = Position::from_fen(fen).unwrap_or_else(|e| panic!("{fen}: refused: {e}"));
    assert_eq!(pos.to_fen(), fen, "to_fen(from_fen(s)) != s");
    assert_position_round_trips(&pos);
    pos.debug_validate().expect("consistent position");
}

/// The start positions random play begins from.
#[derive(Clone, Copy, Debug)]
enum Start {
    Xiangqi,
    /// The Jieqi start as a player sees it: reveals drawn at random from the pool.
    JieqiView,
    /// Bright Jieqi: the Xiangqi set-up with Jieqi movement.
    BrightJieqi,
    /// A seeded deal played by the arbiter: the true position (with the hidden field) and both
    /// players' views.
    Arbiter,
}

/// Plays up to `plies` random moves from `start` (seeded by `seed`) and checks the round trip
/// of every position on the way.
fn round_trip_random_game(start: Start, seed: u64, plies: usize) {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    if let Start::Arbiter = start {
        let rule = [
            CaptureReveal::Capturer,
            CaptureReveal::Nobody,
            CaptureReveal::Both,
        ][rng.gen_range(0..3)];
        let mut arb = Arbiter::from_seed(seed, rule);
        for _ in 0..=plies {
            assert_position_round_trips(arb.truth());
            for side in Color::ALL {
                assert_position_round_trips(arb.view(side));
            }
            let moves = arb.truth().legal_moves();
            if moves.is_empty() {
                break;
            }
            arb.play(moves[rng.gen_range(0..moves.len())])
                .expect("a legal move");
        }
        return;
    }
    let mut pos = match start {
        Start::Xiangqi => Position::startpos(),
        Start::JieqiView => Position::jieqi_startpos(),
        _ => Position::bright_jieqi_startpos(),
    };
    for _ in 0..=plies {
        assert_position_round_trips(&pos);
        let children: Vec<_> = pos.children().collect();
        if children.is_empty() {
            break;
        }
        pos.make_move(children[rng.gen_range(0..children.len())].0);
    }
}

/// The game's ply comes from the move number and side to move, not from the moves made on the
/// object: a FEN read at move 10 with black to move is ply 19 with an empty history.
#[test]
fn fullmove_ply_reads_the_move_number() {
    let start = Position::startpos();
    assert_eq!(start.fullmove_ply(), 0);
    let mut p = start.clone();
    for (i, m) in ["h2e2", "h9g7", "h0g2"].iter().enumerate() {
        let mv = p.parse_move(m).unwrap();
        p.make_move(mv);
        assert_eq!(p.fullmove_ply() as usize, i + 1);
        assert_eq!(p.game_ply(), i + 1);
    }
    let fen = "rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C5C1/9/RNBAKABNR b - - 0 10";
    let p = Position::from_fen(fen).unwrap();
    assert_eq!((p.fullmove_ply(), p.game_ply()), (19, 0));
}

#[test]
fn perft_positions_round_trip() {
    for case in perft_cases() {
        assert_round_trip(&case.fen);
    }
}

#[test]
fn valid_fens_round_trip() {
    let lines = data_lines("valid.fen");
    assert!(lines.len() >= 20);
    for fen in lines {
        assert_round_trip(fen.trim());
    }
}

#[test]
fn non_canonical_spellings_are_accepted() {
    let canonical = "rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C5C1/9/RNBAKABNR w - - 0 1";
    for fen in [
        // H/E for horse/elephant, 'r' for red, missing fields, extra blanks.
        "rhea1aehr/4k4/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C5C1/4K4/RHEA1AEHR w - - 0 1",
        "rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C5C1/9/RNBAKABNR",
        "rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C5C1/9/RNBAKABNR r",
        "  rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C5C1/9/RNBAKABNR   w  -  - 0   1 ",
        "rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C5C1/9/RNBAKABNR w - - 0",
    ] {
        let pos = Position::from_fen(fen).unwrap_or_else(|e| panic!("{fen}: {e}"));
        if fen.contains('h') {
            assert_eq!(
                pos.to_fen(),
                "rnba1abnr/4k4/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C5C1/4K4/RNBA1ABNR w - - 0 1"
            );
        } else {
            assert_eq!(pos.to_fen(), canonical, "{fen}");
        }
    }
}

#[test]
fn invalid_fens_are_refused_with_the_right_reason() {
    let lines = data_lines("invalid.fen");
    let mut kinds_seen = std::collections::BTreeSet::new();
    for line in &lines {
        let (fen, kind) = line
            .rsplit_once(';')
            .unwrap_or_else(|| panic!("line without '; kind': {line}"));
        let kind = kind.trim();
        let fen = match fen.trim() {
            "<empty>" => "",
            "<spaces>" => "   \t  ",
            f => f,
        };
        match Position::from_fen(fen) {
            Ok(pos) => panic!("'{fen}' accepted as {pos:?}, expected {kind}"),
            Err(e) => {
                assert_eq!(kind_name(&e), kind, "'{fen}': got '{e}'");
                // The message names the problem in words.
                assert!(!e.to_string().is_empty());
            }
        }
        kinds_seen.insert(kind.to_string());
    }
    for kind in [
        "Empty",
        "WrongRankCount",
        "WrongRankLength",
        "UnknownPiece",
        "BadSide",
        "BadNumber",
        "TooManyFields",
        "MissingKing",
        "TooManyPieces",
        "KingOutsidePalace",
        "UnreachableSquare",
        "SideNotToMoveInCheck",
    ] {
        assert!(kinds_seen.contains(kind), "no invalid.fen line for {kind}");
    }
}

#[test]
fn error_messages_name_the_problem() {
    let e = Position::from_fen("4k4/9/9/9/9/9/9/9/9/2K6 w - - 0 1").unwrap_err();
    assert_eq!(e.to_string(), "Red king on c0 is outside its palace");
    let e = Position::from_fen("4k4/9/9/9/9/9/9/9/3A5/3K5 w - - 0 1").unwrap_err();
    assert_eq!(
        e.to_string(),
        "Red advisor on d1 stands on a square it can never reach"
    );
    let e = Position::from_fen("4k4/9/9/9/9/9/9/9/9/4K4 w - - 0 1").unwrap_err();
    assert_eq!(e.to_string(), "the side not to move (Black) is in check");
}

#[test]
fn parse_move_refuses_bad_text_and_illegal_moves() {
    let pos = Position::startpos();
    assert!(pos.parse_move("h2e2").is_ok());
    assert!(pos.parse_move("H2-E2").is_ok());
    for bad in [
        "", "h2", "h2e", "z2e2", "h2e10", "h9e9", "h2h8", "e0e2", "日日", "h2e2x",
    ] {
        assert!(pos.parse_move(bad).is_err(), "'{bad}' accepted");
    }
}

/// Characters that FENs are made of, so that random strings often get deep into the parser.
fn fen_like() -> impl Strategy<Value = String> {
    proptest::string::string_regex("[KABNRCPHEkabnrcphexX0-9/ wbr-]{0,90}").expect("regex")
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    /// Every case is a valid position (reached by legal play), so the round trip is asserted on
    /// every one: random text would almost always be refused before it got there.
    #[test]
    fn played_positions_round_trip(
        start in prop_oneof![
            Just(Start::Xiangqi),
            Just(Start::JieqiView),
            Just(Start::BrightJieqi),
            Just(Start::Arbiter),
        ],
        seed in any::<u64>(),
        plies in 0usize..160,
    ) {
        round_trip_random_game(start, seed, plies);
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2000, ..ProptestConfig::default() })]

    #[test]
    fn from_fen_never_panics(s in any::<String>()) {
        let _ = Position::from_fen(&s);
    }

    #[test]
    fn from_fen_never_panics_on_fen_like_text(s in fen_like()) {
        if let Ok(pos) = Position::from_fen(&s) {
            // Whatever is accepted round-trips like a played position.
            assert_position_round_trips(&pos);
        }
    }

    #[test]
    fn mutated_fens_never_panic(cut in 0usize..80, insert in "[KABNRCPkabnrcp1-9/]{0,3}") {
        let fen = "rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C5C1/9/RNBAKABNR w - - 0 1";
        let cut = cut.min(fen.len());
        let s = format!("{}{}{}", &fen[..cut], insert, &fen[cut..]);
        if let Ok(pos) = Position::from_fen(&s) {
            prop_assert!(pos.debug_validate().is_ok());
        }
    }

    #[test]
    fn parse_move_never_panics(s in any::<String>(), t in "[a-jA-J0-9-]{0,6}") {
        let pos = Position::startpos();
        let _ = pos.parse_move(&s);
        if let Ok(m) = pos.parse_move(&t) {
            prop_assert!(pos.legal_moves().contains(m));
        }
    }
}
