//! One Jieqi game from a seeded deal, refereed by the rules core's [`Arbiter`]: the arbiter
//! knows every identity, and each side's engine is asked to move in its own view
//! ([`Arbiter::view`]) with only the moves as it was told them, so no engine can see a hidden
//! identity. The capture-reveal rule decides what each side learns from captures of dark
//! pieces (RULES.md rule 5).
//!
//! The record keeps the full truth: `opening_fen` is the deal with its hidden field (the PGN's
//! `[FEN]` tag replays it exactly) and the moves carry their reveal suffixes.

use super::game::{
    GameRecord, GameSettings, GoRequest, Player, Seat, Termination, adjudicate, ask_move,
};
use crate::core::jieqi::{Arbiter, CaptureReveal, deal};
use crate::core::{Color, GameResult, Move};
use crate::util::{GOLDEN_GAMMA, splitmix_finalise};

/// The deal of pair `pair` in a match with `seed` (SplitMix64 of the two, so neighbouring
/// pairs get unrelated deals and every machine the same ones).
pub fn deal_seed(seed: u64, pair: usize) -> u64 {
    splitmix_finalise(
        seed.wrapping_mul(GOLDEN_GAMMA)
            .wrapping_add(pair as u64 + 1),
    )
}

/// Plays one Jieqi game of deal `seed` under `rule`; `players[0]` is red.
pub fn play_jieqi_game(
    index: usize,
    players: [&mut dyn Player; 2],
    seats: [&Seat; 2],
    a_is_red: bool,
    seed: u64,
    rule: CaptureReveal,
    settings: &GameSettings,
) -> GameRecord {
    let [red, black] = players;
    let mut players: [&mut dyn Player; 2] = [red, black];
    let mut arbiter = Arbiter::from_seed(seed, rule);
    let deal_fen = deal(seed).to_fen();
    let mut scores: Vec<Option<i32>> = Vec::new();
    let mut clocks = settings.limits.tc.map(|tc| [tc.base_ms, tc.base_ms]);
    let game_started = std::time::Instant::now();

    let finish = |result: GameResult,
                  termination: Termination,
                  arbiter: &Arbiter,
                  scores: Vec<Option<i32>>| GameRecord {
        index,
        red: seats[0].name.clone(),
        black: seats[1].name.clone(),
        red_hash: seats[0].hash.clone(),
        black_hash: seats[1].hash.clone(),
        a_is_red,
        opening_fen: deal_fen.clone(),
        opening_moves: Vec::new(),
        start_fen: deal_fen.clone(),
        moves: arbiter.truth_moves().to_vec(),
        scores,
        result,
        termination,
        duration_ms: game_started.elapsed().as_millis() as u64,
        deal_seed: Some(seed),
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
                &arbiter,
                scores,
            );
        }
    }

    loop {
        if let Some(o) = arbiter.outcome() {
            return finish(
                o.result,
                Termination::Rules {
                    reason: o.reason.to_string(),
                },
                &arbiter,
                scores,
            );
        }
        if arbiter.truth_moves().len() >= settings.max_plies {
            return finish(GameResult::Draw, Termination::MaxPlies, &arbiter, scores);
        }
        let us = arbiter.truth().side_to_move();
        let player = &mut players[us.index()];
        let req = GoRequest {
            start_fen: arbiter.start_fen(us),
            moves: arbiter.view_moves(us),
            pos: arbiter.view(us),
            limits: &settings.limits,
            clocks,
        };
        let reply = match ask_move(&mut **player, &req, us, settings, &mut clocks) {
            Ok(r) => r,
            Err((r, t)) => return finish(r, t, &arbiter, scores),
        };
        let forfeit = |t: Termination| (GameResult::win_for(us.flip()), t);
        // The engine's move is read in its own view; the arbiter adds the truth.
        // `bestmove` is the plain four characters, so it is matched by squares.
        let chosen: Option<Move> = arbiter
            .view(us)
            .legal_moves()
            .iter()
            .copied()
            .find(|m| m.uci() == reply.mv.trim());
        let played = match chosen {
            Some(m) => arbiter.play(m).map_err(|e| e.to_string()),
            None => Err(format!("'{}' is not a legal move", reply.mv)),
        };
        if played.is_err() {
            player.reset();
            let (r, t) = forfeit(Termination::IllegalMove {
                loser: us.into(),
                mv: reply.mv.clone(),
            });
            return finish(r, t, &arbiter, scores);
        }
        scores.push(reply.score);
        if let Some((r, t)) = adjudicate(&settings.adjudication, &scores, arbiter.truth()) {
            return finish(r, t, &arbiter, scores);
        }
    }
}
