//! Game-end rulings in one place (Pikafish keeps them in `Position::rule_judge`):
//! checkmate and stalemate lose for the side to move; 120 plies (Jieqi: 80 by default, 120 as an
//! option in `JieqiRules`) without a capture draw; a repeated position is lost by a side that
//! gave check on every one of its moves of the cycle (perpetual check) and drawn otherwise; no
//! attacking pieces left is a draw.

use super::position::Position;
use super::types::*;
use std::fmt;

/// The result of a game, from red's point of view in notation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum GameResult {
    RedWins,
    BlackWins,
    Draw,
}

impl GameResult {
    pub fn win_for(c: Color) -> GameResult {
        match c {
            Color::Red => GameResult::RedWins,
            Color::Black => GameResult::BlackWins,
        }
    }

    /// 1, 0.5 or 0 for `c`.
    pub fn score_for(self, c: Color) -> f64 {
        match (self, c) {
            (GameResult::Draw, _) => 0.5,
            (GameResult::RedWins, Color::Red) | (GameResult::BlackWins, Color::Black) => 1.0,
            _ => 0.0,
        }
    }

    pub fn pgn(self) -> &'static str {
        match self {
            GameResult::RedWins => "1-0",
            GameResult::BlackWins => "0-1",
            GameResult::Draw => "1/2-1/2",
        }
    }

    pub fn from_pgn(s: &str) -> Option<GameResult> {
        match s {
            "1-0" => Some(GameResult::RedWins),
            "0-1" => Some(GameResult::BlackWins),
            "1/2-1/2" | "1/2" | "½-½" => Some(GameResult::Draw),
            _ => None,
        }
    }
}

impl fmt::Display for GameResult {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.pgn())
    }
}

/// Why a game ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Reason {
    Checkmate,
    Stalemate,
    PerpetualCheck,
    Repetition,
    NoCaptureLimit,
    InsufficientMaterial,
}

impl fmt::Display for Reason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Reason::Checkmate => "checkmate",
            Reason::Stalemate => "stalemate",
            Reason::PerpetualCheck => "perpetual check",
            Reason::Repetition => "repetition",
            Reason::NoCaptureLimit => "no-capture limit",
            Reason::InsufficientMaterial => "insufficient material",
        })
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Outcome {
    pub result: GameResult,
    pub reason: Reason,
}

/// A repetition's verdict from the side to move's point of view.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Repetition {
    Draw,
    /// The opponent checked on every move of the cycle and we did not.
    Win,
    /// We checked on every move of the cycle and the opponent did not.
    Loss,
}

impl Position {
    /// Plies without capture after which the game is drawn.
    pub fn no_capture_limit(&self) -> u32 {
        match self.variant() {
            Variant::Xiangqi => 120,
            Variant::Jieqi => self.jieqi_rules().no_capture_limit as u32,
        }
    }

    /// Looks for the current position `times - 1` times earlier in the history (same side to
    /// move, inside the no-capture window, not across a null move) and rules on the cycle.
    /// `times = 2` is what the search uses (the first repetition); games end at `times = 3`.
    pub fn repetition(&self, times: usize) -> Option<Repetition> {
        let history = self.history();
        let n = history.len();
        let window = (self.rule60() as usize).min(n);
        if window < 4 {
            return None;
        }
        let mut found = 0;
        let mut i = 2;
        while i <= window {
            let st = &history[n - i];
            if st.mv.is_null() || history[n - i + 1].mv.is_null() {
                return None;
            }
            if st.key == self.key() {
                found += 1;
                if found + 1 >= times {
                    return Some(self.rule_cycle(n - i));
                }
            }
            i += 2;
        }
        None
    }

    /// Rules on the moves `history[start..]`, which lead from a position back to itself.
    fn rule_cycle(&self, start: usize) -> Repetition {
        let history = self.history();
        let n = history.len();
        // gave_check(j): position after move j has its side to move in check.
        let gave_check = |j: usize| {
            if j + 1 < n {
                history[j + 1].in_check
            } else {
                self.in_check()
            }
        };
        // Moves at start, start+2, ... were made by the side to move now ("us").
        let mut us_all = true;
        let mut them_all = true;
        for j in start..n {
            if (j - start).is_multiple_of(2) {
                us_all &= gave_check(j);
            } else {
                them_all &= gave_check(j);
            }
        }
        match (us_all, them_all) {
            (true, false) => Repetition::Loss,
            (false, true) => Repetition::Win,
            _ => Repetition::Draw,
        }
    }

    /// No rook, horse, cannon or pawn (and no dark piece) on either side.
    pub fn insufficient_material(&self) -> bool {
        let attackers = self.kind_bb(PieceType::Rook)
            | self.kind_bb(PieceType::Horse)
            | self.kind_bb(PieceType::Cannon)
            | self.kind_bb(PieceType::Pawn)
            | self.dark();
        if attackers != 0 {
            return false;
        }
        // Revealed Jieqi advisors and elephants can cross the board and give mate.
        self.variant() == Variant::Xiangqi
            || (self.kind_bb(PieceType::Advisor) | self.kind_bb(PieceType::Elephant)) == 0
    }

    /// The game's outcome if it is over in this position, else `None`.
    pub fn outcome(&self) -> Option<Outcome> {
        let us = self.side_to_move();
        if !self.has_legal_move() {
            let reason = if self.in_check() {
                Reason::Checkmate
            } else {
                Reason::Stalemate
            };
            return Some(Outcome {
                result: GameResult::win_for(us.flip()),
                reason,
            });
        }
        if let Some(rep) = self.repetition(3) {
            return Some(match rep {
                Repetition::Draw => Outcome {
                    result: GameResult::Draw,
                    reason: Reason::Repetition,
                },
                Repetition::Win => Outcome {
                    result: GameResult::win_for(us),
                    reason: Reason::PerpetualCheck,
                },
                Repetition::Loss => Outcome {
                    result: GameResult::win_for(us.flip()),
                    reason: Reason::PerpetualCheck,
                },
            });
        }
        if self.rule60() >= self.no_capture_limit() {
            return Some(Outcome {
                result: GameResult::Draw,
                reason: Reason::NoCaptureLimit,
            });
        }
        if self.insufficient_material() {
            return Some(Outcome {
                result: GameResult::Draw,
                reason: Reason::InsufficientMaterial,
            });
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pos(fen: &str) -> Position {
        Position::from_fen(fen).unwrap_or_else(|e| panic!("{fen}: {e}"))
    }

    /// The outcome of a finished game, as `Position::outcome` reports it.
    fn over(result: GameResult, reason: Reason) -> Option<Outcome> {
        Some(Outcome { result, reason })
    }

    fn play(p: &mut Position, moves: &[&str]) {
        for mv in moves {
            let m = p
                .parse_move(mv)
                .unwrap_or_else(|e| panic!("{mv} in {}: {e}", p.to_fen()));
            p.make_move(m);
        }
    }

    #[test]
    fn start_position_is_not_over() {
        assert_eq!(Position::startpos().outcome(), None);
    }

    #[test]
    fn checkmate_loses_for_the_side_to_move() {
        // Black king e9 in check from the rook on a9, the rook on a8 guards rank 8.
        let p = pos("R3k4/R8/9/9/9/9/9/9/9/3K5 b - - 0 1");
        assert!(p.in_check());
        assert!(p.legal_moves().is_empty());
        assert_eq!(p.outcome(), over(GameResult::RedWins, Reason::Checkmate));
        // The same with red mated: flying general covers d-file, rook and cannon the rest.
        let p = pos("3k5/9/9/9/9/9/9/9/r8/r3K4 w - - 0 1");
        assert_eq!(p.outcome(), over(GameResult::BlackWins, Reason::Checkmate));
    }

    #[test]
    fn stalemate_loses_for_the_side_to_move() {
        // Black king e9 is not in check but every square is covered: d9 by the facing red king,
        // f9 by the rook on f1, rank 8 by the rook on a8.
        let p = pos("4k4/R8/9/9/9/9/9/9/5R3/3K5 b - - 0 1");
        assert!(!p.in_check());
        assert!(p.legal_moves().is_empty());
        assert_eq!(p.outcome(), over(GameResult::RedWins, Reason::Stalemate));
    }

    #[test]
    fn no_capture_limit_draws_at_120_plies() {
        let mut p = pos("4k4/9/9/9/9/9/9/9/R8/3K5 w - - 119 80");
        assert_eq!(p.outcome(), None);
        play(&mut p, &["a1a2"]);
        assert_eq!(p.rule60(), 120);
        assert_eq!(p.outcome(), over(GameResult::Draw, Reason::NoCaptureLimit));
        // A capture resets the counter.
        let mut p = pos("4k4/9/9/9/9/9/9/9/R3r4/3K5 w - - 119 80");
        play(&mut p, &["a1e1"]);
        assert_eq!(p.rule60(), 0);
        assert_eq!(p.outcome(), None);
    }

    #[test]
    fn checkmate_on_the_120th_ply_is_still_a_win() {
        // Mate takes precedence over the no-capture draw, as in Pikafish's rule_judge order.
        let mut p = pos("4k4/R8/9/9/9/9/9/9/1R7/3K5 w - - 119 80");
        play(&mut p, &["b1b9"]);
        assert_eq!(p.outcome().map(|o| o.reason), Some(Reason::Checkmate));
    }

    /// Red checks with the rook on every move, black only moves its king back and forth: after
    /// the third occurrence of the same position the checker (red) loses.
    #[test]
    fn perpetual_check_loses_for_the_checker() {
        let mut p = pos("4k4/9/9/9/9/9/9/9/R8/3K5 w - - 0 1");
        let cycle = ["a1a9", "e9e8", "a9a8", "e8e9", "a8a9"];
        play(&mut p, &cycle[..1]);
        // Occurrences of the position after a1a9: now (1), after one cycle (2), two cycles (3).
        for n in 1..=2 {
            assert_eq!(p.outcome(), None, "ended after {n} occurrences");
            play(&mut p, &cycle[1..]);
            if n == 1 {
                assert_eq!(p.repetition(2), Some(Repetition::Win));
            }
        }
        assert!(p.in_check());
        assert_eq!(
            p.outcome(),
            over(GameResult::BlackWins, Reason::PerpetualCheck)
        );
        // Seen from the checker's side after its next move the verdict is a loss.
        let mut q = p.clone();
        play(&mut q, &["e9e8"]);
        assert_eq!(q.repetition(3), Some(Repetition::Loss));
        assert_eq!(
            q.outcome(),
            over(GameResult::BlackWins, Reason::PerpetualCheck)
        );
    }

    #[test]
    fn plain_repetition_draws() {
        let mut p = pos("4k4/9/9/9/9/9/9/9/R8/3K5 w - - 0 1");
        let cycle = ["a1a2", "e9e8", "a2a1", "e8e9"];
        play(&mut p, &cycle);
        assert_eq!(p.outcome(), None);
        assert_eq!(p.repetition(2), Some(Repetition::Draw));
        play(&mut p, &cycle);
        assert_eq!(p.outcome(), over(GameResult::Draw, Reason::Repetition));
    }

    #[test]
    fn checking_on_only_some_moves_of_the_cycle_draws() {
        // Red checks on every other move only (a9 checks, a1 does not): no perpetual check.
        let mut p = pos("4k4/9/9/9/9/9/9/9/R8/3K5 w - - 0 1");
        let cycle = ["a1a9", "e9e8", "a9a1", "e8e9"];
        play(&mut p, &cycle);
        play(&mut p, &cycle);
        assert_eq!(p.outcome(), over(GameResult::Draw, Reason::Repetition));
    }

    #[test]
    fn repetition_needs_the_no_capture_window() {
        // A repetition across a capture is no repetition: the counter limits the look-back.
        let mut p = pos("4k4/9/9/9/9/9/9/9/R8/3K5 w - - 0 1");
        play(&mut p, &["a1a2", "e9e8", "a2a1", "e8e9"]);
        assert_eq!(p.repetition(2), Some(Repetition::Draw));
        p.clear_history();
        assert_eq!(p.repetition(2), None);
        p.make_null();
        play(&mut p, &["e9e8"]);
        p.make_null();
        play(&mut p, &["e8e9"]);
        assert_eq!(p.repetition(2), None, "no repetition across a null move");
    }

    #[test]
    fn insufficient_material_draws() {
        for fen in [
            "4k4/9/9/9/9/9/9/9/9/3K5 w - - 0 1",
            "3ak4/4a4/4b4/9/9/9/9/4B4/4A4/3AK4 w - - 0 1",
        ] {
            let p = pos(fen);
            assert!(p.insufficient_material(), "{fen}");
            assert_eq!(
                p.outcome(),
                over(GameResult::Draw, Reason::InsufficientMaterial),
                "{fen}"
            );
        }
        for fen in [
            "4k4/9/9/9/9/P8/9/9/9/3K5 w - - 0 1",
            "4k4/9/9/9/9/9/9/9/9/3K1C3 w - - 0 1",
            "4k4/9/9/9/9/9/9/9/9/3K1N3 w - - 0 1",
            "4k4/9/9/9/9/9/9/9/9/3K1R3 w - - 0 1",
            "4k4/9/9/9/9/9/9/9/9/3K3p1 w - - 0 1",
        ] {
            let p = pos(fen);
            assert!(!p.insufficient_material(), "{fen}");
            assert_eq!(p.outcome(), None, "{fen}");
        }
    }
}
