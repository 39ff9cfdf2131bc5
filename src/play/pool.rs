//! The one owner of players between games (fastchess's engine cache, owned by its tournament
//! and handed out under a scope guard): a game leases its two players from an [`EnginePool`]
//! and the [`Lease`] gives them back when it ends. External engine processes stay up from one
//! game to the next (a tuner plays thousands of short matches, and an engine's start-up,
//! loading networks or tables and allocating its hash, would otherwise be paid every game);
//! in-process players keep nothing between games (each game starts a fresh searcher), so they
//! are simply made.
//!
//! The pool of a process is the context of its game jobs (`exec` keeps it and drops it when
//! the command ends, which ends the processes); matches, tuners and MPI ranks all play through
//! it.

use super::external::ExternalPlayer;
use super::game::{InProcessPlayer, Player};
use super::runner::Engine;
use std::ops::{Deref, DerefMut};
use std::sync::{Mutex, OnceLock};

/// Idle engine processes kept beyond the ones in use: enough for the two engines of a few
/// matches per thread (GA's populations), few enough that no machine fills with engines.
const KEPT_IDLE: usize = 64;

/// Players between games.
#[derive(Default)]
pub struct EnginePool {
    /// Idle external players, most recently returned first.
    idle: Mutex<Vec<ExternalPlayer>>,
    /// The cores this process may use, read before any player is pinned (`--affinity`).
    cores: OnceLock<Vec<usize>>,
}

impl EnginePool {
    pub fn new() -> EnginePool {
        EnginePool::default()
    }

    /// The cores this process may use (see [`super::affinity`]), as they were before the
    /// first game pinned anything.
    pub fn cores(&self) -> &[usize] {
        self.cores.get_or_init(super::affinity::cores)
    }

    /// A player for `engine`: for an external engine, an idle process of the same program
    /// that can serve it (see [`ExternalPlayer::can_serve`]) or a new one, pinned to `core`
    /// when one is given; in-process, a new player with a transposition table of `hash_mb`
    /// (the caller pins its thread).
    pub fn lease(&self, engine: &Engine, hash_mb: usize, core: Option<usize>) -> Lease<'_> {
        let held = match engine {
            Engine::Internal(c) => Held::Internal(Box::new(
                InProcessPlayer::new(c.eval.clone(), c.search, c.options, hash_mb)
                    .with_network(c.network.clone()),
            )),
            Engine::External(c) => {
                let mut idle = self.idle.lock().unwrap_or_else(|p| p.into_inner());
                let found = idle.iter().position(|p| p.can_serve(c));
                let player = match found {
                    Some(i) => {
                        let mut p = idle.remove(i);
                        p.reconfigure(c.clone());
                        p
                    }
                    None => ExternalPlayer::new(c.clone()),
                };
                let mut player = player;
                player.pin(core);
                Held::External(Box::new(player))
            }
        };
        Lease {
            pool: self,
            held: Some(held),
        }
    }

    /// Idle engine processes now.
    pub fn idle(&self) -> usize {
        self.idle.lock().map_or(0, |i| i.len())
    }

    fn give_back(&self, mut player: ExternalPlayer) {
        if !player.is_running() {
            return;
        }
        let evicted = {
            let mut idle = self.idle.lock().unwrap_or_else(|p| p.into_inner());
            idle.insert(0, player);
            let keep = idle.len().min(KEPT_IDLE);
            idle.split_off(keep)
        };
        // Ended outside the lock: each takes up to a grace period to quit.
        drop(evicted);
    }
}

enum Held {
    Internal(Box<InProcessPlayer>),
    External(Box<ExternalPlayer>),
}

/// A player leased from the pool for one game; dropping it gives it back.
pub struct Lease<'p> {
    pool: &'p EnginePool,
    held: Option<Held>,
}

impl Lease<'_> {
    /// The external player, if this is one (tests look at its restarts).
    pub fn external(&self) -> Option<&ExternalPlayer> {
        match &self.held {
            Some(Held::External(p)) => Some(&**p),
            _ => None,
        }
    }
}

impl Deref for Lease<'_> {
    type Target = dyn Player;
    fn deref(&self) -> &(dyn Player + 'static) {
        match &self.held {
            Some(Held::Internal(p)) => &**p,
            Some(Held::External(p)) => &**p,
            None => unreachable!("a lease holds its player until it is dropped"),
        }
    }
}

impl DerefMut for Lease<'_> {
    fn deref_mut(&mut self) -> &mut (dyn Player + 'static) {
        match &mut self.held {
            Some(Held::Internal(p)) => &mut **p,
            Some(Held::External(p)) => &mut **p,
            None => unreachable!("a lease holds its player until it is dropped"),
        }
    }
}

impl Drop for Lease<'_> {
    fn drop(&mut self) {
        if let Some(Held::External(p)) = self.held.take() {
            self.pool.give_back(*p);
        }
    }
}
