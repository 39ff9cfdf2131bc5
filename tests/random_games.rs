//! Property test: random legal games never reach an illegal position. At every ply the position
//! is internally consistent (`debug_validate`), the side that just moved is not in check, every
//! piece stands where it can legally stand (the FEN re-parses, which checks palaces, elephant and
//! advisor points, pawn squares, piece counts), and unmaking restores the exact FEN and key.

use proptest::prelude::*;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use xqtune::core::attacks::{BETWEEN, SQUARE_BB, Squares};
use xqtune::core::{PieceType, Position};

fn check_position(pos: &Position) -> Result<(), TestCaseError> {
    let fen = pos.to_fen();
    prop_assert!(
        pos.debug_validate().is_ok(),
        "{fen}: {:?}",
        pos.debug_validate()
    );
    let side = pos.side_to_move();
    prop_assert!(
        !pos.is_attacked(pos.king_square(side.flip()), side),
        "{fen}: side not to move is in check"
    );
    let reparsed = Position::from_fen(&fen);
    prop_assert!(reparsed.is_ok(), "{fen}: {:?}", reparsed.err());
    let reparsed = reparsed.expect("checked");
    prop_assert_eq!(reparsed.key(), pos.key());
    prop_assert_eq!(reparsed.in_check(), pos.in_check());
    Ok(())
}

/// Every generated move is legal by the slow definition (the own king is not attacked after
/// it), captures are the subset that take a piece, `gives_check` agrees with the result, no
/// checking move lies outside `check_zone`, and `key_after` predicts the key `make_move` gives.
fn check_moves(pos: &mut Position) -> Result<(), TestCaseError> {
    let moves = pos.legal_moves();
    let captures = pos.legal_captures();
    let quiets = pos.legal_quiets();
    prop_assert_eq!(captures.len() + quiets.len(), moves.len());
    prop_assert_eq!(pos.count_legal(), moves.len());
    for &m in captures.iter() {
        prop_assert!(moves.contains(m) && pos.is_capture(m));
    }
    let us = pos.side_to_move();
    let zone = pos.check_zone();
    let check_squares = pos.check_squares();
    let them_king = pos.king_square(us.flip()).index();
    let our_cannons = pos.pieces_of(us, PieceType::Cannon);
    for &m in moves.iter() {
        let gives = pos.gives_check(m);
        // A quiet move from outside the zone gives check exactly when it lands on one of its
        // piece's check squares, or becomes the screen between one of our cannons and the king.
        if !pos.is_capture(m) && zone & SQUARE_BB[m.from().index()] == 0 {
            let kind = pos.piece_at(m.from()).expect("a mover").kind;
            let to = SQUARE_BB[m.to().index()];
            let direct = check_squares[kind as usize] & to != 0;
            let screen = Squares(our_cannons).any(|c| BETWEEN[c][them_king] & to != 0);
            prop_assert!(!direct || gives, "{m} is a check square but gives no check");
            prop_assert!(
                !gives || direct || screen,
                "{m} checks from no check square"
            );
        }
        // The pruning pre-filter may say "maybe" for a quiet move, never "no" for a check.
        prop_assert!(
            !gives || pos.may_give_check(m, zone),
            "{} checks outside the zone",
            m
        );
        let predicted = pos.key_after(m);
        pos.make_move(m);
        prop_assert_eq!(predicted, pos.key(), "key_after({})", m);
        prop_assert!(
            !pos.is_attacked(pos.king_square(us), us.flip()),
            "{m} leaves king attacked"
        );
        prop_assert_eq!(gives, pos.in_check(), "gives_check({}) wrong", m);
        pos.unmake_move();
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn random_games_stay_legal(seed in any::<u64>(), capture_bias in 0.0f64..0.9) {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let mut pos = Position::startpos();
        let mut trail: Vec<(String, u64)> = Vec::new();
        for ply in 0..300 {
            check_position(&pos)?;
            if ply % 10 == 0 {
                check_moves(&mut pos)?;
            }
            let moves = pos.legal_moves();
            if moves.is_empty() || pos.outcome().is_some() {
                break;
            }
            let captures = pos.legal_captures();
            let m = if !captures.is_empty() && rng.gen_bool(capture_bias) {
                captures[rng.gen_range(0..captures.len())]
            } else {
                moves[rng.gen_range(0..moves.len())]
            };
            trail.push((pos.to_fen(), pos.key()));
            pos.make_move(m);
        }
        // Unmaking the whole game walks back through exactly the same positions.
        while let Some((fen, key)) = trail.pop() {
            pos.unmake_move();
            prop_assert_eq!(pos.to_fen(), fen);
            prop_assert_eq!(pos.key(), key);
        }
        prop_assert_eq!(pos.to_fen(), Position::startpos().to_fen());
    }
}

/// The check squares of a known position, square by square: black king d9, a black horse d6
/// as the only screen on its file, nothing else but the red king.
#[test]
fn check_squares_of_a_known_position() {
    let pos = Position::from_fen("3k5/9/9/3n5/9/9/9/9/9/4K4 w - - 0 1").expect("valid FEN");
    let squares = pos.check_squares();
    let names = |b| {
        let mut v: Vec<String> = Squares(b)
            .map(|s| xqtune::core::Square(s as u8).to_string())
            .collect();
        v.sort();
        v.join(" ")
    };
    assert_eq!(
        names(squares[PieceType::Rook as usize]),
        "a9 b9 c9 d7 d8 e9 f9 g9 h9 i9"
    );
    assert_eq!(
        names(squares[PieceType::Cannon as usize]),
        "d0 d1 d2 d3 d4 d5"
    );
    assert_eq!(names(squares[PieceType::Horse as usize]), "b8 c7 e7 f8");
    assert_eq!(names(squares[PieceType::Pawn as usize]), "c9 d8 e9");
    for kind in [PieceType::King, PieceType::Advisor, PieceType::Elephant] {
        assert_eq!(squares[kind as usize], 0, "{kind:?}");
    }
}
