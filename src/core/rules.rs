//! Game-end rulings in one place (Pikafish keeps them in `Position::rule_judge`):
//! checkmate and stalemate lose for the side to move; 120 plies (Jieqi: 80 by default, 120 as an
//! option in `JieqiRules`) without a capture draw; no attacking pieces left is a draw; a repeated
//! position is ruled on the moves of the cycle:
//!
//! - a side that gave check on every one of its moves (perpetual check) loses, unless the other
//!   side did too (draw);
//! - otherwise, if any move of the cycle gave check, the cycle is a draw (as in Pikafish, a
//!   chase mixed with checks is not ruled);
//! - otherwise a side that on every one of its moves newly attacked ("chased") the same enemy
//!   piece loses (perpetual chase), unless the other side did too (draw);
//! - anything else draws.
//!
//! What counts as a chase follows Pikafish's `Position::chased`: the attack must be a legal
//! capture; kings and pawns do not chase; kings and pawns that have not crossed the river are not
//! chased; a rook attacked by a horse or cannon, and a rook, horse or cannon attacked by an
//! advisor or elephant, is chased even when protected; any other piece is chased only when the
//! owner has no legal recapture, and never by a piece of its own kind that it can legally take
//! back (that is an exchange offer). A piece stays the same piece when it moves during the cycle.

use super::attacks::{Bitboard, HALF, SQUARE_BB};
use super::position::Position;
use super::types::*;
use std::fmt;

/// The result of a game, from red's point of view in notation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
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
    PerpetualChase,
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
            Reason::PerpetualChase => "perpetual chase",
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

/// The kind of perpetual that lost a repetition.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Perpetual {
    Check,
    Chase,
}

impl Perpetual {
    fn reason(self) -> Reason {
        match self {
            Perpetual::Check => Reason::PerpetualCheck,
            Perpetual::Chase => Reason::PerpetualChase,
        }
    }
}

/// A repetition's verdict from the side to move's point of view.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Repetition {
    Draw,
    /// The opponent checked (or chased) on every move of the cycle and we did not.
    Win(Perpetual),
    /// We checked (or chased) on every move of the cycle and the opponent did not.
    Loss(Perpetual),
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
        let mut any = false;
        for j in start..n {
            let check = gave_check(j);
            any |= check;
            if (j - start).is_multiple_of(2) {
                us_all &= check;
            } else {
                them_all &= check;
            }
        }
        match (us_all, them_all) {
            (true, false) => Repetition::Loss(Perpetual::Check),
            (false, true) => Repetition::Win(Perpetual::Check),
            (true, true) => Repetition::Draw,
            (false, false) if any => Repetition::Draw,
            // Only here, with a repetition found and no check in it, is the chase work paid.
            (false, false) => self.rule_chases(start),
        }
    }

    /// Perpetual chase on the check-free cycle `history[start..]`: replays it on a copy and
    /// keeps, for each side, the enemy pieces it newly attacked on every one of its moves
    /// (Pikafish `detect_chases`: attacked after the move and not before it). The pieces are
    /// followed by square: a move of a tracked piece moves its mark.
    fn rule_chases(&self, start: usize) -> Repetition {
        let moves = &self.history()[start..];
        // A capture resets the no-capture window the cycle lies in, and a Jieqi reveal changes
        // the key for good, so neither can be part of a cycle; refuse to rule if one is.
        if moves.iter().any(|st| st.captured != 0 || st.moved_dark) {
            return Repetition::Draw;
        }
        let mut p = self.clone_with_history_from(start);
        for _ in moves {
            p.unmake_move();
        }
        // chase[c]: the pieces c has chased on each of its moves so far (None before its first).
        let mut chase: [Option<Bitboard>; 2] = [None; 2];
        for st in moves {
            let mover = p.side_to_move();
            let still = chase[mover.index()] != Some(0);
            let before = if still { p.chased_by(mover) } else { 0 };
            p.make_move(st.mv);
            let moved = SQUARE_BB[st.mv.from().index()] | SQUARE_BB[st.mv.to().index()];
            for set in chase.iter_mut().flatten() {
                if *set & moved != 0 {
                    *set ^= moved;
                }
            }
            if still {
                let new = p.chased_by(mover) & !before;
                let set = &mut chase[mover.index()];
                *set = Some(set.map_or(new, |s| s & new));
            }
            if chase == [Some(0), Some(0)] {
                return Repetition::Draw;
            }
        }
        let chases = |c: Color| chase[c.index()].is_some_and(|s| s != 0);
        let us = self.side_to_move();
        match (chases(us), chases(us.flip())) {
            (true, false) => Repetition::Loss(Perpetual::Chase),
            (false, true) => Repetition::Win(Perpetual::Chase),
            _ => Repetition::Draw,
        }
    }

    /// The enemy pieces `chaser` attacks in a way that counts as a chase (module doc), whoever
    /// is to move. Only called on check-free positions, so either side may be put to move.
    /// Any legal capture is an attack (Pikafish further limits a pinned attacker to its pinner;
    /// the difference only shows for a pinned rook or cannon taking along its pin line).
    ///
    /// Jieqi: a dark piece neither chases nor is chased. Its capture is worth an identity
    /// nobody has seen (the chase tests weigh attacker against victim by kind, and a hidden
    /// victim may be an un-crossed pawn, which is not chased), and a dark attacker would reveal
    /// itself by capturing, turning into a piece of unknown kind. A dark piece still defends:
    /// any legal recapture protects the victim, whatever it reveals.
    fn chased_by(&mut self, chaser: Color) -> Bitboard {
        use PieceType::*;
        let (side, in_check) = (self.side, self.in_check);
        self.side = chaser;
        self.in_check = self.king_attacked(chaser);
        let prey = self.by_color[chaser.flip().index()] & !self.dark;
        let unchased = self.kind_bb(King) | (self.kind_bb(Pawn) & !HALF[chaser.index()]);
        let mut chased = 0;
        for &m in self.legal_onto(prey & !unchased, false).iter() {
            let (from, to) = (m.from().index(), m.to().index());
            if chased & SQUARE_BB[to] != 0 || self.dark & SQUARE_BB[from] != 0 {
                continue;
            }
            let (Some(attacker), Some(victim)) = (self.piece_at(m.from()), self.piece_at(m.to()))
            else {
                continue;
            };
            let chase = match (attacker.kind, victim.kind) {
                (King | Pawn, _) => false,
                // Attacks on a stronger piece chase even a protected one.
                (Horse | Cannon, Rook) | (Advisor | Elephant, Rook | Horse | Cannon) => true,
                (a, v) => !self.defended_after(m) && (a != v || !self.answered_in_kind(m)),
            };
            if chase {
                chased |= SQUARE_BB[to];
            }
        }
        self.side = side;
        self.in_check = in_check;
        chased
    }

    /// Whether the owner of the piece `m` (a legal capture) takes has a legal recapture.
    fn defended_after(&mut self, m: Move) -> bool {
        self.make_move(m);
        let defended = !self.legal_onto(m.to().bb(), false).is_empty();
        self.unmake_move();
        defended
    }

    /// Whether the piece `m` would capture could legally capture the attacker first (a mutual
    /// attack of equal pieces is an exchange offer, not a chase; a horse blocked at its leg or
    /// a pinned piece cannot answer).
    fn answered_in_kind(&mut self, m: Move) -> bool {
        let (side, in_check) = (self.side, self.in_check);
        self.side = side.flip();
        self.in_check = self.king_attacked(self.side);
        let answered = self
            .legal_onto(m.from().bb(), false)
            .iter()
            .any(|r| r.from() == m.to());
        self.side = side;
        self.in_check = in_check;
        answered
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
                Repetition::Win(p) => Outcome {
                    result: GameResult::win_for(us),
                    reason: p.reason(),
                },
                Repetition::Loss(p) => Outcome {
                    result: GameResult::win_for(us.flip()),
                    reason: p.reason(),
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
                assert_eq!(p.repetition(2), Some(Repetition::Win(Perpetual::Check)));
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
        assert_eq!(q.repetition(3), Some(Repetition::Loss(Perpetual::Check)));
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

    /// Plays `cycle` from `fen` `times` times (the position before it then stands `times + 1`
    /// times in the game) and returns the position.
    fn cycled(fen: &str, cycle: &[&str], times: usize) -> Position {
        let mut p = pos(fen);
        for _ in 0..times {
            play(&mut p, cycle);
        }
        p
    }

    /// Red's rook attacks the black cannon on every move and the cannon, unprotected, steps
    /// aside each time (the chased piece moves and is followed). Red, the chaser, loses.
    const CANNON_CHASED: &str = "4k4/9/9/1c7/9/9/R8/9/9/3K5 w - - 0 1";
    const ROOK_CHASES_CANNON: [&str; 4] = ["a3b3", "b6a6", "b3a3", "a6b6"];

    #[test]
    fn perpetual_chase_of_an_unprotected_piece_loses() {
        let p = cycled(CANNON_CHASED, &ROOK_CHASES_CANNON, 1);
        assert_eq!(p.outcome(), None);
        assert_eq!(p.repetition(2), Some(Repetition::Loss(Perpetual::Chase)));
        // One ply on, the chased side to move sees the win.
        let mut q = p.clone();
        play(&mut q, &ROOK_CHASES_CANNON[..1]);
        assert_eq!(q.repetition(2), Some(Repetition::Win(Perpetual::Chase)));
        let p = cycled(CANNON_CHASED, &ROOK_CHASES_CANNON, 2);
        assert_eq!(
            p.outcome(),
            over(GameResult::BlackWins, Reason::PerpetualChase)
        );
    }

    #[test]
    fn chasing_a_protected_piece_draws() {
        // The same chase, but the black rook on c6 guards b6 and (through b6) a6.
        let fen = "4k4/9/9/1cr6/9/9/R8/9/9/3K5 w - - 0 1";
        let p = cycled(fen, &ROOK_CHASES_CANNON, 1);
        assert_eq!(p.repetition(2), Some(Repetition::Draw));
        let p = cycled(fen, &ROOK_CHASES_CANNON, 2);
        assert_eq!(p.outcome(), over(GameResult::Draw, Reason::Repetition));
    }

    #[test]
    fn offering_an_exchange_of_rooks_is_no_chase() {
        // As the cannon chase, but the rook attacked by a rook can take the attacker back.
        let fen = "4k4/9/9/1r7/9/9/R8/9/9/3K5 w - - 0 1";
        let p = cycled(fen, &ROOK_CHASES_CANNON, 2);
        assert_eq!(p.outcome(), over(GameResult::Draw, Reason::Repetition));
    }

    #[test]
    fn a_rook_chased_by_a_horse_loses_for_the_horse_though_protected() {
        // The red horse hops c2-d4-c2 attacking the black rook on b3, then on a3; the rook on i3
        // guards both squares along rank 3, which would make a rook's or cannon's attack no
        // chase, but a horse attacking a rook chases it.
        let fen = "4k4/9/9/9/9/9/1r6r/2N6/9/3K5 w - - 0 1";
        let cycle = ["c2d4", "b3a3", "d4c2", "a3b3"];
        let p = cycled(fen, &cycle, 1);
        assert_eq!(p.repetition(2), Some(Repetition::Loss(Perpetual::Chase)));
        let p = cycled(fen, &cycle, 2);
        assert_eq!(
            p.outcome(),
            over(GameResult::BlackWins, Reason::PerpetualChase)
        );
    }

    /// Two lines cross on e5: the red cannon on a5 looks along rank 5 at the black rook on
    /// h5, the black cannon on e7 down file e at the red rook on e2. Red's horse steps e4-c5
    /// (off file e onto rank 5) and back, black's horse f7-e5 (onto both lines) and back; each
    /// step leaves exactly one screen on the mover's line, so every move of either side attacks
    /// the enemy rook anew.
    const CROSSED_LINES: &str = "5k3/9/4cn3/9/C6r1/4N4/9/4R4/9/3K5 w - - 0 1";
    const CROSSED_LINES_CYCLE: [&str; 4] = ["e4c5", "f7e5", "c5e4", "e5f7"];

    #[test]
    fn mutual_perpetual_chase_draws() {
        let p = cycled(CROSSED_LINES, &CROSSED_LINES_CYCLE, 1);
        assert_eq!(p.repetition(2), Some(Repetition::Draw));
        let p = cycled(CROSSED_LINES, &CROSSED_LINES_CYCLE, 2);
        assert_eq!(p.outcome(), over(GameResult::Draw, Reason::Repetition));
        // Black's chase is what saves it: without the red rook on e2, red's chase loses.
        let fen = "5k3/9/4cn3/9/C6r1/4N4/9/9/9/3K5 w - - 0 1";
        let p = cycled(fen, &CROSSED_LINES_CYCLE, 1);
        assert_eq!(p.repetition(2), Some(Repetition::Loss(Perpetual::Chase)));
    }

    #[test]
    fn perpetual_check_against_a_perpetual_chase_loses_for_the_checker() {
        // The black rook checks the red king on rank 1 and rank 2 in turn; each king step opens
        // a red cannon's line (b1 over d1, b2 over d2) onto the rook: red chases on every move.
        let fen = "5k3/9/9/9/9/9/9/1C1N5/1C1NK3r/9 w - - 0 1";
        let cycle = ["e1e2", "i1i2", "e2e1", "i2i1"];
        let p = cycled(fen, &cycle, 1);
        assert!(p.in_check());
        let start = p.history().len() - cycle.len();
        assert_eq!(
            p.clone().rule_chases(start),
            Repetition::Loss(Perpetual::Chase),
            "red chases on every move"
        );
        assert_eq!(p.repetition(2), Some(Repetition::Win(Perpetual::Check)));
        let p = cycled(fen, &cycle, 2);
        assert_eq!(
            p.outcome(),
            over(GameResult::RedWins, Reason::PerpetualCheck)
        );
    }

    #[test]
    fn chasing_on_only_some_moves_draws() {
        // The rook attacks the cannon from b3, but the cannon steps to c6 and the rook's return
        // to a3 attacks nothing.
        let cycle = ["a3b3", "b6c6", "b3a3", "c6b6"];
        let p = cycled(CANNON_CHASED, &cycle, 1);
        assert_eq!(p.repetition(2), Some(Repetition::Draw));
        let p = cycled(CANNON_CHASED, &cycle, 2);
        assert_eq!(p.outcome(), over(GameResult::Draw, Reason::Repetition));
    }

    #[test]
    fn chasing_a_different_piece_on_each_move_draws() {
        // From b3 the rook attacks the cannon on b6, from a3 the one on a6: each move attacks
        // a piece anew, but never the same one.
        let fen = "4k4/9/9/cc7/9/9/R8/9/9/3K5 w - - 0 1";
        let cycle = ["a3b3", "e9e8", "b3a3", "e8e9"];
        let p = cycled(fen, &cycle, 1);
        assert_eq!(p.repetition(2), Some(Repetition::Draw));
        let p = cycled(fen, &cycle, 2);
        assert_eq!(p.outcome(), over(GameResult::Draw, Reason::Repetition));
    }

    #[test]
    fn a_pawn_is_chased_only_across_the_river() {
        // The red cannon on e9 looks down file e at e6. Red's horse steps g8-e7 (the screen)
        // and back, the black king d8-e8 (a second screen) and back: every red move leaves one
        // screen, so red attacks e6 anew each time while the piece there never moves.
        let cycle = ["g8e7", "d8e8", "e7g8", "e8d8"];
        // A black pawn on e6 has not crossed the river: no chase.
        let p = cycled("4C4/3k2N2/9/4p4/9/9/9/9/9/5K3 w - - 0 1", &cycle, 1);
        assert_eq!(p.repetition(2), Some(Repetition::Draw));
        // The same with a horse on e6: red chases.
        let p = cycled("4C4/3k2N2/9/4n4/9/9/9/9/9/5K3 w - - 0 1", &cycle, 1);
        assert_eq!(p.repetition(2), Some(Repetition::Loss(Perpetual::Chase)));
        // A black pawn across the river (b4-a4, sideways) chased by the rook: red chases.
        let cycle = ["a1b1", "b4a4", "b1a1", "a4b4"];
        let p = cycled("4k4/9/9/9/9/1p7/9/9/R8/3K5 w - - 0 1", &cycle, 1);
        assert_eq!(p.repetition(2), Some(Repetition::Loss(Perpetual::Chase)));
    }

    #[test]
    fn jieqi_a_dark_piece_is_not_chased() {
        // The screen pattern above in Jieqi, against a dark piece on e6 (a black rook in the
        // pool): no chase. Face up, the same rook is chased.
        let cycle = ["g8e7", "d8e8", "e7g8", "e8d8"];
        let p = cycled("4C4/3k2N2/9/4x4/9/9/9/9/9/5K3 w r1 0 1", &cycle, 1);
        assert_eq!(p.variant(), Variant::Jieqi);
        assert!(p.is_dark(Square::parse("e6").expect("square")));
        assert_eq!(p.repetition(2), Some(Repetition::Draw));
        let p = cycled("4C4/3k2N2/9/4r4/9/9/9/9/9/5K3 w - 0 1", &cycle, 1);
        assert_eq!(p.variant(), Variant::Jieqi);
        assert_eq!(p.repetition(2), Some(Repetition::Loss(Perpetual::Chase)));
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
