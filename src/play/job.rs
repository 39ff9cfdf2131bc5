//! One game as an executor job: both engines, the start and the settings travel with it, so any
//! thread of any rank plays it the same way; the players come from that process's
//! [`EnginePool`].

use super::MatchConfig;
use super::affinity::{game_cores, pin_thread};
use super::game::{GameRecord, GameSettings, GameStart, play_game};
use super::jieqi::deal_seed;
use super::openings::Opening;
use super::pool::EnginePool;
use super::runner::Engine;
use crate::core::Variant;
use serde::{Deserialize, Serialize};

/// Game `index` of a match between `a` and `b`.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct GameJob {
    pub index: usize,
    pub a: Engine,
    pub b: Engine,
    pub a_is_red: bool,
    pub start: GameStart,
    pub settings: GameSettings,
    /// Transposition table of an in-process player, MB.
    pub hash_mb: usize,
    /// Pin the players to cores of their own ([`super::affinity`]).
    #[serde(default)]
    pub affinity: bool,
}

impl GameJob {
    /// Game `g` of the match `cfg`: pair `g / 2` plays the `p`-th opening of the shuffled suite
    /// (`order`) or, in Jieqi, the pair's deal, with A red in the first game of the pair.
    pub fn of_match(
        a: &Engine,
        b: &Engine,
        cfg: &MatchConfig,
        openings: &[Opening],
        order: &[usize],
        g: usize,
    ) -> GameJob {
        let pair = g / 2;
        let start = if cfg.variant == Variant::Jieqi {
            GameStart::Deal {
                seed: deal_seed(cfg.seed, pair),
                rule: cfg.capture_reveal,
            }
        } else {
            GameStart::Opening(openings[order[pair % order.len()]].clone())
        };
        GameJob {
            index: g,
            a: a.clone(),
            b: b.clone(),
            a_is_red: g.is_multiple_of(2),
            start,
            settings: cfg.game_settings(),
            hash_mb: cfg.hash_mb,
            affinity: cfg.affinity,
        }
    }
}

impl crate::exec::Job for GameJob {
    type Output = GameRecord;
    type Context = EnginePool;
    const KIND: &'static str = "game";

    fn run(self, pool: &EnginePool) -> GameRecord {
        let cores = if self.affinity {
            game_cores(crate::exec::slot(), pool.cores())
        } else {
            None
        };
        let (core_a, core_b) = (cores.map(|c| c[0]), cores.map(|c| c[1]));
        // An in-process player searches on this thread: the thread takes its core (A's when
        // both are in-process; they never search at once).
        let thread_core = match (&self.a, &self.b) {
            (Engine::Internal(_), _) => core_a,
            (_, Engine::Internal(_)) => core_b,
            _ => None,
        };
        if let Some(c) = thread_core {
            // (A thread that cannot be pinned plays unpinned: the game is still valid.)
            let _ = pin_thread(c);
        }
        let mut a = pool.lease(&self.a, self.hash_mb, core_a);
        let mut b = pool.lease(&self.b, self.hash_mb, core_b);
        play_game(
            self.index,
            [&mut *a, &mut *b],
            [&self.a.seat(), &self.b.seat()],
            self.a_is_red,
            &self.start,
            &self.settings,
        )
    }
}
