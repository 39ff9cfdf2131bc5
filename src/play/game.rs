//! One game between two players: the referee. It asks the side to move for a move, checks it is
//! legal, keeps the clocks, and ends the game on the first of: a ruling of the rules core
//! (`Position::outcome`: mate, stalemate, perpetual check or chase, repetition, no-capture limit,
//! insufficient material), the maximum game length (draw), score adjudication (off by default),
//! or a forfeit (a player crashed, answered an illegal move, or overstepped its clock).

use crate::core::{CaptureReveal, Color, GameResult, Move, Position};
use crate::eval::EvalParams;
use crate::eval::nnue::Network;
use crate::search::{EngineOptions, SearchLimits, SearchParams, Searcher};
use serde::{Deserialize, Serialize};
use std::fmt;
use std::sync::Arc;
use std::time::Instant;

use super::jieqi::DealBoard;
use super::openings::Opening;

/// Why a player could not produce a move.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PlayerError {
    /// The engine died, closed its pipes, or broke the protocol.
    Crash(String),
    /// No answer before the clock (or the per-move watchdog) ran out.
    Timeout,
}

impl fmt::Display for PlayerError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PlayerError::Crash(m) => write!(f, "crashed: {m}"),
            PlayerError::Timeout => f.write_str("did not answer in time"),
        }
    }
}

/// A player's answer: the move text as sent (checked by the referee), its score in
/// centipawns from the mover's side (mate scores on the search's scale, [`crate::search::MATE`]
/// less the plies to mate) and the depth of the search it came from, where the player gave
/// them.
#[derive(Clone, Debug)]
pub struct Reply {
    pub mv: String,
    pub score: Option<i32>,
    pub depth: Option<u32>,
}

impl Reply {
    /// What a player that gives up answers (the UCI `bestmove (none)`, UCCI `nobestmove`).
    pub const NO_MOVE: &'static str = "(none)";

    /// Whether the answer is no move at all: `(none)`, nothing, or the UCI null move `0000`.
    pub fn is_no_move(&self) -> bool {
        matches!(self.mv.trim(), Self::NO_MOVE | "" | "0000")
    }
}

/// What the referee tells the player when asking for a move.
pub struct GoRequest<'a> {
    pub start_fen: &'a str,
    /// All moves from `start_fen` (opening moves included).
    pub moves: &'a [Move],
    pub pos: &'a Position,
    pub limits: &'a MoveLimits,
    /// Remaining clocks (red, black) in ms under a time control.
    pub clocks: Option<[u64; 2]>,
}

/// One side of a game. In-process searchers and external engines both implement it.
pub trait Player: Send {
    fn new_game(&mut self) -> Result<(), PlayerError>;
    fn go(&mut self, req: &GoRequest) -> Result<Reply, PlayerError>;
    /// Called after a forfeit: an external engine is killed and restarted before the next game.
    fn reset(&mut self) {}
}

/// Per-move limits. With a time control, `base_ms` is each side's clock at the start and
/// `inc_ms` is added after each move (Fischer increment).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct MoveLimits {
    pub nodes: Option<u64>,
    pub depth: Option<u32>,
    pub tc: Option<TimeControl>,
    /// Time limit per move in ms (no clock).
    pub movetime_ms: Option<u64>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct TimeControl {
    pub base_ms: u64,
    pub inc_ms: u64,
}

impl TimeControl {
    /// Parses `base+inc` in seconds (`10+0.1`, `60`), as cutechess's `tc=`.
    pub fn parse(text: &str) -> Result<TimeControl, String> {
        let (b, i) = text.split_once('+').unwrap_or((text, "0"));
        let secs = |s: &str| -> Result<u64, String> {
            let v: f64 = s
                .trim()
                .parse()
                .map_err(|_| format!("time control '{text}': '{s}' is not a number of seconds"))?;
            if !(v >= 0.0 && v.is_finite()) {
                return Err(format!("time control '{text}': '{s}' is negative"));
            }
            Ok((v * 1000.0).round() as u64)
        };
        let tc = TimeControl {
            base_ms: secs(b)?,
            inc_ms: secs(i)?,
        };
        if tc.base_ms == 0 && tc.inc_ms == 0 {
            return Err(format!("time control '{text}' gives no time"));
        }
        Ok(tc)
    }
}

impl fmt::Display for TimeControl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}+{}",
            self.base_ms as f64 / 1000.0,
            self.inc_ms as f64 / 1000.0
        )
    }
}

/// Score adjudication, cutechess style but two-sided: both engines must agree.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Adjudication {
    /// Draw when, from full move `draw_move_number` on, the last `draw_move_count` moves of
    /// each side all scored within `draw_score` cp of zero.
    pub draw: Option<DrawAdjudication>,
    /// Resign when the last `resign_move_count` moves of each side all scored the same side
    /// at least `resign_score` cp ahead.
    pub resign: Option<ResignAdjudication>,
}

#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct DrawAdjudication {
    pub move_number: u32,
    pub move_count: u32,
    pub score: i32,
}

#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct ResignAdjudication {
    pub move_count: u32,
    pub score: i32,
}

/// How a game ended.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Termination {
    /// A ruling of the rules core.
    Rules {
        reason: String,
    },
    /// The maximum number of plies was reached: draw.
    MaxPlies,
    /// Both engines agreed the game was drawn.
    DrawAdjudication,
    /// Both engines agreed `loser` was lost.
    ResignAdjudication {
        loser: ColorName,
    },
    IllegalMove {
        loser: ColorName,
        mv: String,
    },
    Crash {
        loser: ColorName,
        message: String,
    },
    TimeForfeit {
        loser: ColorName,
    },
    /// The engine answered `bestmove (none)` (UCI), `nobestmove` (UCCI) or the null move
    /// `0000` in a position with legal moves: it gives up. (With no legal move the rules have
    /// already ended the game before it is asked.)
    Resign {
        loser: ColorName,
    },
}

/// `Color` for records.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ColorName {
    Red,
    Black,
}

impl From<Color> for ColorName {
    fn from(c: Color) -> ColorName {
        match c {
            Color::Red => ColorName::Red,
            Color::Black => ColorName::Black,
        }
    }
}

impl fmt::Display for ColorName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            ColorName::Red => "Red",
            ColorName::Black => "Black",
        })
    }
}

impl Termination {
    /// The PGN `[Termination]` value.
    pub fn pgn_tag(&self) -> &'static str {
        match self {
            Termination::Rules { .. } => "normal",
            Termination::MaxPlies
            | Termination::DrawAdjudication
            | Termination::ResignAdjudication { .. } => "adjudication",
            Termination::IllegalMove { .. } => "rules infraction",
            Termination::Crash { .. } => "abandoned",
            Termination::TimeForfeit { .. } => "time forfeit",
            // PGN's tag has no resignation value: a resignation is a normal end.
            Termination::Resign { .. } => "normal",
        }
    }
}

impl fmt::Display for Termination {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Termination::Rules { reason } => f.write_str(reason),
            Termination::MaxPlies => f.write_str("maximum game length"),
            Termination::DrawAdjudication => f.write_str("draw by adjudication"),
            Termination::ResignAdjudication { loser } => {
                write!(f, "{loser} resigns by adjudication")
            }
            Termination::IllegalMove { loser, mv } => {
                write!(f, "{loser} makes an illegal move: {mv}")
            }
            Termination::Crash { loser, message } => write!(f, "{loser} {message}"),
            Termination::TimeForfeit { loser } => write!(f, "{loser} loses on time"),
            Termination::Resign { loser } => {
                write!(f, "{loser} resigns (the engine gave no move)")
            }
        }
    }
}

/// Settings of the referee.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct GameSettings {
    pub limits: MoveLimits,
    /// Plies played by the engines (after the opening) before the game is drawn.
    pub max_plies: usize,
    pub adjudication: Adjudication,
    /// Grace over the clock before a time forfeit, in ms (cutechess `timemargin`).
    pub time_margin_ms: u64,
}

/// A finished game.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct GameRecord {
    /// Index in the match (game `2p` and `2p+1` form pair `p`).
    pub index: usize,
    pub red: String,
    pub black: String,
    pub red_hash: Option<String>,
    pub black_hash: Option<String>,
    /// Whether engine A had red.
    pub a_is_red: bool,
    pub opening_fen: String,
    pub opening_moves: Vec<Move>,
    /// FEN after the opening moves.
    pub start_fen: String,
    pub moves: Vec<Move>,
    /// Scores (cp, mover's view) of the engine moves, if given.
    pub scores: Vec<Option<i32>>,
    /// Search depths of the engine moves, if given (records from before they were kept have
    /// none).
    #[serde(default)]
    pub depths: Vec<Option<u32>>,
    /// Under a time control, the time each engine move took on the referee's clock, in ms
    /// (empty without a clock: node and depth limits keep their records the same run to run).
    #[serde(default)]
    pub times_ms: Vec<u64>,
    pub result: GameResult,
    pub termination: Termination,
    /// Wall time of the game in ms.
    pub duration_ms: u64,
    /// Jieqi: the seed of the deal ([`crate::core::arbiter::deal`]).
    pub deal_seed: Option<u64>,
}

impl GameRecord {
    /// A's score in this game (1, 0.5, 0).
    pub fn score_a(&self) -> f64 {
        let a = if self.a_is_red {
            Color::Red
        } else {
            Color::Black
        };
        self.result.score_for(a)
    }
}

/// Identity of a player in the records.
#[derive(Clone, Debug)]
pub struct Seat {
    pub name: String,
    pub hash: Option<String>,
}

/// What a game starts from: an opening of the suite (Xiangqi) or a seeded deal refereed by the
/// [`Arbiter`](crate::core::Arbiter) (Jieqi, see [`super::jieqi`]).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum GameStart {
    Opening(Opening),
    Deal { seed: u64, rule: CaptureReveal },
}

/// The variant's part of a game: the true position the referee rules on, what the side to move
/// is told, and how its answer becomes a move. The referee's loop ([`play_game`]) is the same for
/// both variants.
pub(super) trait Board {
    /// The full position, every identity known: outcome and adjudication are ruled on it.
    fn truth(&self) -> &Position;
    /// Moves the engines made (opening moves excluded).
    fn engine_plies(&self) -> usize;
    /// The request for `us`, in its own view.
    fn request<'a>(
        &'a self,
        us: Color,
        limits: &'a MoveLimits,
        clocks: Option<[u64; 2]>,
    ) -> GoRequest<'a>;
    /// Plays the mover's answer; `false` when it is not a legal move.
    fn play(&mut self, mv: &str) -> bool;
    /// The record's view of the game so far.
    fn record(&self) -> BoardRecord;
}

/// The position-related fields of a [`GameRecord`].
pub(super) struct BoardRecord {
    pub opening_fen: String,
    pub opening_moves: Vec<Move>,
    pub start_fen: String,
    pub moves: Vec<Move>,
    pub deal_seed: Option<u64>,
}

/// A Xiangqi game from an opening of the suite: both sides see the whole board.
struct OpeningBoard<'o> {
    opening: &'o Opening,
    pos: Position,
    start_fen: String,
    /// All moves from the opening's FEN (opening moves included), as sent to the engines.
    all_moves: Vec<Move>,
}

impl<'o> OpeningBoard<'o> {
    fn new(opening: &'o Opening) -> Self {
        let pos = opening.position();
        OpeningBoard {
            opening,
            start_fen: pos.to_fen(),
            pos,
            all_moves: opening.moves.clone(),
        }
    }

    fn engine_moves(&self) -> &[Move] {
        &self.all_moves[self.opening.moves.len()..]
    }
}

impl Board for OpeningBoard<'_> {
    fn truth(&self) -> &Position {
        &self.pos
    }

    fn engine_plies(&self) -> usize {
        self.engine_moves().len()
    }

    fn request<'a>(
        &'a self,
        _us: Color,
        limits: &'a MoveLimits,
        clocks: Option<[u64; 2]>,
    ) -> GoRequest<'a> {
        GoRequest {
            start_fen: &self.opening.fen,
            moves: &self.all_moves,
            pos: &self.pos,
            limits,
            clocks,
        }
    }

    fn play(&mut self, mv: &str) -> bool {
        match self.pos.parse_move(mv) {
            Ok(m) => {
                self.pos.make_move(m);
                self.all_moves.push(m);
                true
            }
            Err(_) => false,
        }
    }

    fn record(&self) -> BoardRecord {
        BoardRecord {
            opening_fen: self.opening.fen.clone(),
            opening_moves: self.opening.moves.clone(),
            start_fen: self.start_fen.clone(),
            moves: self.engine_moves().to_vec(),
            deal_seed: None,
        }
    }
}

/// Plays one game from `start` between A and B (`players` and `seats` in that order); A plays
/// red when `a_is_red`.
pub fn play_game(
    index: usize,
    players: [&mut dyn Player; 2],
    seats: [&Seat; 2],
    a_is_red: bool,
    start: &GameStart,
    settings: &GameSettings,
) -> GameRecord {
    let ([a, b], [seat_a, seat_b]) = (players, seats);
    let (players, seats): ([&mut dyn Player; 2], _) = if a_is_red {
        ([a, b], [seat_a, seat_b])
    } else {
        ([b, a], [seat_b, seat_a])
    };
    match start {
        GameStart::Opening(opening) => referee(
            index,
            players,
            seats,
            a_is_red,
            OpeningBoard::new(opening),
            settings,
        ),
        GameStart::Deal { seed, rule } => referee(
            index,
            players,
            seats,
            a_is_red,
            DealBoard::new(*seed, *rule),
            settings,
        ),
    }
}

/// The referee's loop over any [`Board`].
fn referee(
    index: usize,
    players: [&mut dyn Player; 2],
    seats: [&Seat; 2],
    a_is_red: bool,
    mut board: impl Board,
    settings: &GameSettings,
) -> GameRecord {
    let [red, black] = players;
    let mut players: [&mut dyn Player; 2] = [red, black];
    let mut notes = MoveNotes::default();
    let mut clocks = settings.limits.tc.map(|tc| [tc.base_ms, tc.base_ms]);
    let game_started = Instant::now();

    let finish =
        |result: GameResult, termination: Termination, board: &dyn Board, notes: MoveNotes| {
            let b = board.record();
            GameRecord {
                index,
                red: seats[0].name.clone(),
                black: seats[1].name.clone(),
                red_hash: seats[0].hash.clone(),
                black_hash: seats[1].hash.clone(),
                a_is_red,
                opening_fen: b.opening_fen,
                opening_moves: b.opening_moves,
                start_fen: b.start_fen,
                moves: b.moves,
                scores: notes.scores,
                depths: notes.depths,
                times_ms: notes.times_ms,
                result,
                termination,
                duration_ms: game_started.elapsed().as_millis() as u64,
                deal_seed: b.deal_seed,
            }
        };

    for (i, p) in players.iter_mut().enumerate() {
        if let Err(e) = p.new_game() {
            let c = if i == 0 { Color::Red } else { Color::Black };
            p.reset();
            return finish(
                GameResult::win_for(c.flip()),
                Termination::Crash {
                    loser: c.into(),
                    message: e.to_string(),
                },
                &board,
                notes,
            );
        }
    }

    loop {
        if let Some(o) = board.truth().outcome() {
            return finish(
                o.result,
                Termination::Rules {
                    reason: o.reason.to_string(),
                },
                &board,
                notes,
            );
        }
        if board.engine_plies() >= settings.max_plies {
            return finish(GameResult::Draw, Termination::MaxPlies, &board, notes);
        }
        let us = board.truth().side_to_move();
        let player = &mut players[us.index()];
        let req = board.request(us, &settings.limits, clocks);
        let (reply, elapsed_ms) = match ask_move(&mut **player, &req, us, settings, &mut clocks) {
            Ok(r) => r,
            Err((r, t)) => return finish(r, t, &board, notes),
        };
        if reply.is_no_move() {
            // The rules found legal moves (no outcome above), so no move means giving up.
            return finish(
                GameResult::win_for(us.flip()),
                Termination::Resign { loser: us.into() },
                &board,
                notes,
            );
        }
        if !board.play(&reply.mv) {
            // The engine answered by the protocol, so it is kept (as cutechess and fastchess
            // do): the next game starts it afresh with `ucinewgame`.
            let termination = Termination::IllegalMove {
                loser: us.into(),
                mv: reply.mv,
            };
            return finish(GameResult::win_for(us.flip()), termination, &board, notes);
        }
        notes.scores.push(reply.score);
        notes.depths.push(reply.depth);
        if clocks.is_some() {
            notes.times_ms.push(elapsed_ms);
        }
        if let Some((r, t)) = adjudicate(&settings.adjudication, &notes.scores, board.truth()) {
            return finish(r, t, &board, notes);
        }
    }
}

/// What the referee notes of each engine move besides the move (see [`GameRecord`]).
#[derive(Default)]
struct MoveNotes {
    scores: Vec<Option<i32>>,
    depths: Vec<Option<u32>>,
    times_ms: Vec<u64>,
}

/// Asks `player` for its move in `req` and keeps the clocks; returns the reply and the time
/// it took in ms. A crash, a hang or a move past the clock (plus the grace margin) forfeits the
/// game for `us`: `Err` then holds the result and termination to record.
fn ask_move(
    player: &mut dyn Player,
    req: &GoRequest,
    us: Color,
    settings: &GameSettings,
    clocks: &mut Option<[u64; 2]>,
) -> Result<(Reply, u64), (GameResult, Termination)> {
    let started = Instant::now();
    let reply = player.go(req);
    let elapsed = started.elapsed().as_millis() as u64;
    let forfeit = |t: Termination| (GameResult::win_for(us.flip()), t);
    let reply = match reply {
        Ok(r) => r,
        Err(e) => {
            player.reset();
            return Err(match e {
                PlayerError::Timeout => forfeit(Termination::TimeForfeit { loser: us.into() }),
                PlayerError::Crash(_) => forfeit(Termination::Crash {
                    loser: us.into(),
                    message: e.to_string(),
                }),
            });
        }
    };
    if let (Some(c), Some(tc)) = (clocks.as_mut(), settings.limits.tc) {
        let left = c[us.index()];
        if elapsed > left + settings.time_margin_ms {
            return Err(forfeit(Termination::TimeForfeit { loser: us.into() }));
        }
        c[us.index()] = left.saturating_sub(elapsed) + tc.inc_ms;
    }
    Ok((reply, elapsed))
}

/// Two-sided score adjudication over the engine moves so far. `scores[i]` is from the mover's
/// view; the last move was made by the side not to move in `pos`.
fn adjudicate(
    adj: &Adjudication,
    scores: &[Option<i32>],
    pos: &Position,
) -> Option<(GameResult, Termination)> {
    let last_mover = pos.side_to_move().flip();
    // Scores from red's view, newest first.
    let red_view = |k: usize| -> Option<i32> {
        let s = scores[scores.len() - 1 - k]?;
        let mover = if k.is_multiple_of(2) {
            last_mover
        } else {
            last_mover.flip()
        };
        Some(s * mover.sign())
    };
    if let Some(r) = adj.resign {
        let n = 2 * r.move_count as usize;
        if n > 0 && scores.len() >= n {
            let v: Option<Vec<i32>> = (0..n).map(red_view).collect();
            if let Some(v) = v {
                if v.iter().all(|&s| s >= r.score) {
                    return Some((
                        GameResult::RedWins,
                        Termination::ResignAdjudication {
                            loser: ColorName::Black,
                        },
                    ));
                }
                if v.iter().all(|&s| s <= -r.score) {
                    return Some((
                        GameResult::BlackWins,
                        Termination::ResignAdjudication {
                            loser: ColorName::Red,
                        },
                    ));
                }
            }
        }
    }
    if let Some(d) = adj.draw {
        let n = 2 * d.move_count as usize;
        if n > 0 && scores.len() >= n && pos.fullmove() >= d.move_number {
            let v: Option<Vec<i32>> = (0..n).map(red_view).collect();
            if let Some(v) = v
                && v.iter().all(|&s| s.abs() <= d.score)
            {
                return Some((GameResult::Draw, Termination::DrawAdjudication));
            }
        }
    }
    None
}

/// This engine in-process: a fresh [`Searcher`] (fresh tables) for every game, single-threaded,
/// so node-limited games are reproducible.
pub struct InProcessPlayer {
    eval: Arc<EvalParams>,
    params: SearchParams,
    options: EngineOptions,
    network: Option<Arc<Network>>,
    hash_mb: usize,
    searcher: Option<Searcher>,
}

impl InProcessPlayer {
    pub fn new(
        eval: Arc<EvalParams>,
        params: SearchParams,
        options: EngineOptions,
        hash_mb: usize,
    ) -> Self {
        InProcessPlayer {
            eval,
            params,
            options,
            network: None,
            hash_mb,
            searcher: None,
        }
    }

    /// The player evaluating the positions of `network`'s variant with it (`None`: classical).
    pub fn with_network(mut self, network: Option<Arc<Network>>) -> Self {
        self.network = network;
        self
    }

    fn searcher(&self) -> Searcher {
        Searcher::new(self.eval.clone(), self.params, self.hash_mb)
            .with_options(self.options)
            .with_network(self.network.clone())
    }
}

impl Player for InProcessPlayer {
    fn new_game(&mut self) -> Result<(), PlayerError> {
        self.searcher = Some(self.searcher());
        Ok(())
    }

    fn go(&mut self, req: &GoRequest) -> Result<Reply, PlayerError> {
        let searcher = match &mut self.searcher {
            Some(s) => s,
            None => {
                let s = self.searcher();
                self.searcher.insert(s)
            }
        };
        let us = req.pos.side_to_move().index();
        let limits = SearchLimits {
            depth: req.limits.depth,
            nodes: req.limits.nodes,
            movetime_ms: req.limits.movetime_ms,
            time_ms: req.clocks.map(|c| c[us]),
            inc_ms: req.limits.tc.map(|tc| tc.inc_ms),
            ..Default::default()
        };
        let r = searcher.search(req.pos, &limits, &mut |_| {});
        if r.best_move.is_null() {
            return Err(PlayerError::Crash("the search returned no move".into()));
        }
        Ok(Reply {
            mv: r.best_move.to_string(),
            score: Some(r.score),
            depth: Some(r.depth),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn time_control_parsing() {
        assert_eq!(
            TimeControl::parse("10+0.1"),
            Ok(TimeControl {
                base_ms: 10_000,
                inc_ms: 100
            })
        );
        assert_eq!(
            TimeControl::parse("60"),
            Ok(TimeControl {
                base_ms: 60_000,
                inc_ms: 0
            })
        );
        assert!(TimeControl::parse("x+1").unwrap_err().contains("'x'"));
        assert!(TimeControl::parse("-1+0").is_err());
        assert!(TimeControl::parse("0+0").is_err());
    }

    /// Startpos after `n` plies of horse shuffles (no captures): who moves next alternates.
    fn pos_after(n: usize) -> Position {
        let mut p = Position::startpos();
        let cycle = ["h0g2", "h9g7", "g2h0", "g7h9"];
        for i in 0..n {
            let m = p.parse_move(cycle[i % 4]).unwrap();
            p.make_move(m);
        }
        p
    }

    #[test]
    fn resign_needs_both_sides_to_agree() {
        let adj = Adjudication {
            draw: None,
            resign: Some(ResignAdjudication {
                move_count: 2,
                score: 500,
            }),
        };
        // Mover's view: red (even plies) says +600, black says -600: both agree red wins.
        let agree = [Some(600), Some(-600), Some(700), Some(-650)];
        let (r, t) = adjudicate(&adj, &agree, &pos_after(4)).unwrap();
        assert_eq!(r, GameResult::RedWins);
        assert_eq!(
            t,
            Termination::ResignAdjudication {
                loser: ColorName::Black
            }
        );
        // Black disagrees once: no ruling.
        let disagree = [Some(600), Some(-600), Some(700), Some(-100)];
        assert!(adjudicate(&adj, &disagree, &pos_after(4)).is_none());
        // Too few moves.
        assert!(adjudicate(&adj, &agree[..3], &pos_after(3)).is_none());
        // A missing score never adjudicates.
        let missing = [Some(600), None, Some(700), Some(-650)];
        assert!(adjudicate(&adj, &missing, &pos_after(4)).is_none());
        // Black winning, seen after a black move (odd count).
        let black = [Some(0), Some(800), Some(-900), Some(800), Some(-900)];
        let (r, _) = adjudicate(&adj, &black, &pos_after(5)).unwrap();
        assert_eq!(r, GameResult::BlackWins);
    }

    #[test]
    fn draw_adjudication_waits_for_the_move_number() {
        let adj = Adjudication {
            draw: Some(DrawAdjudication {
                move_number: 3,
                move_count: 2,
                score: 10,
            }),
            resign: None,
        };
        let quiet = [Some(5), Some(-3), Some(0), Some(8)];
        // After 4 plies the full move number is 3.
        let p = pos_after(4);
        assert_eq!(p.fullmove(), 3);
        assert_eq!(
            adjudicate(&adj, &quiet, &p).map(|x| x.1),
            Some(Termination::DrawAdjudication)
        );
        let early = Adjudication {
            draw: Some(DrawAdjudication {
                move_number: 4,
                ..adj.draw.unwrap()
            }),
            resign: None,
        };
        assert!(adjudicate(&early, &quiet, &p).is_none());
        let loud = [Some(5), Some(-3), Some(50), Some(8)];
        assert!(adjudicate(&adj, &loud, &p).is_none());
        assert!(adjudicate(&Adjudication::default(), &quiet, &p).is_none());
    }
}
