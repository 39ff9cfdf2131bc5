//! FEN reading and writing: exact round trips, every kind of invalid FEN refused with the right
//! reason, and no panic on any input string (FEN or move text).

mod common;

use common::{data_lines, perft_cases};
use proptest::prelude::*;
use xqtune::core::{FenError, Position};

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

fn assert_round_trip(fen: &str) {
    let pos = Position::from_fen(fen).unwrap_or_else(|e| panic!("{fen}: refused: {e}"));
    assert_eq!(pos.to_fen(), fen, "to_fen(from_fen(s)) != s");
    let again = Position::from_fen(&pos.to_fen()).expect("own FEN is valid");
    assert_eq!(again.to_fen(), pos.to_fen());
    assert_eq!(
        again.key(),
        pos.key(),
        "{fen}: key differs after round trip"
    );
    assert_eq!(again.in_check(), pos.in_check());
    assert_eq!(again.side_to_move(), pos.side_to_move());
    assert_eq!(again.rule60(), pos.rule60());
    assert_eq!(again.fullmove(), pos.fullmove());
    for s in 0..90u8 {
        let sq = xqtune::core::Square(s);
        assert_eq!(again.piece_at(sq), pos.piece_at(sq));
    }
    pos.debug_validate().expect("consistent position");
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
    #![proptest_config(ProptestConfig { cases: 2000, ..ProptestConfig::default() })]

    #[test]
    fn from_fen_never_panics(s in any::<String>()) {
        let _ = Position::from_fen(&s);
    }

    #[test]
    fn from_fen_never_panics_on_fen_like_text(s in fen_like()) {
        if let Ok(pos) = Position::from_fen(&s) {
            // Whatever is accepted is a consistent position that writes back to itself.
            prop_assert!(pos.debug_validate().is_ok());
            let again = Position::from_fen(&pos.to_fen()).expect("own FEN");
            prop_assert_eq!(again.to_fen(), pos.to_fen());
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
