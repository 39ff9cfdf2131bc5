//! Jieqi's chance nodes. A move of a dark piece is a chance node ("expectimax", Michie 1966):
//! its value is the expectation over the identities the mover's pool allows, each weighted by
//! count / total ([`Position::reveal_outcomes`]). The average is taken in win-probability space
//! (a logistic on the centipawn scale, as the Pikafish jieqi branch does) and cut early with
//! Ballard's Star1 bounds (Ballard 1983, "The *-minimax search procedure for trees containing
//! chance nodes"). Nested chance nodes beyond `chance_max_nested` are scored by static
//! evaluation of the reveals (the network's when there is a Jieqi network, else the classical
//! one), and so are dark captures in quiescence. The search never reads
//! the hidden identities: it sees only legal moves, reveal outcomes and pool counts.
//!
//! The alpha-beta search (the negamax of [`Searcher`]) calls `chance` for each dark move it
//! tries, with the same principal-variation windows and reductions as an ordinary move;
//! quiescence and the nested-chance limit call `chance_static`. A chance node keeps its own
//! transposition-table entry under `chance_key`.

use super::tt::{Bound, MATE_BOUND, NO_EVAL};
use super::{INF, MAX_PLY, Searcher};
use crate::core::{Move, Position};

/// How a Jieqi chance node (a move of a dark piece) is valued.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
pub enum ChanceMode {
    /// Each reveal is searched; the expectation is taken in win-probability space with Star1
    /// cut-offs.
    #[default]
    Search,
    /// Baseline for measurements: the chance node is the pool-weighted average of the static
    /// evaluations of the reveals, nothing below it is searched.
    StaticAverage,
}

/// The transposition-table key of the chance node "dark move `m` from the position with key
/// `key`": the position's key xored with a hash of the move and a salt, so that it lands on an
/// unrelated slot and never reads as an ordinary position (two positions' keys differ by a xor
/// of Zobrist numbers, which this odd-constant mix matches only by chance).
#[inline(always)]
fn chance_key(key: u64, m: Move) -> u64 {
    const SALT: u64 = 0x6A09_E667_F3BC_C909;
    let x = (m.0 as u64 ^ SALT).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    key ^ x ^ (x >> 31)
}

impl Searcher {
    /// Win probability of a centipawn score for the side it belongs to (logistic with scale
    /// `chance_scale`).
    #[inline]
    fn to_prob(&self, v: i32) -> f64 {
        let s = self.params.chance_scale.max(1) as f64;
        1.0 / (1.0 + (-(v as f64) / s).exp())
    }

    /// The centipawn score of a win probability (the logistic's inverse), kept off the mate
    /// range.
    #[inline]
    fn prob_to_cp(&self, p: f64) -> f64 {
        let s = self.params.chance_scale.max(1) as f64;
        let p = p.clamp(1e-9, 1.0 - 1e-9);
        (s * (p / (1.0 - p)).ln()).clamp(-(MATE_BOUND - 1) as f64, (MATE_BOUND - 1) as f64)
    }

    /// Combines reveal values (mover's view) into the chance node's value: a mate survives
    /// only when every reveal gives one (the worst of them), anything else is averaged as a
    /// win probability.
    fn combine(&self, values: &[(i32, u32)]) -> i32 {
        let total: u64 = values.iter().map(|&(_, w)| w as u64).sum();
        if total == 0 {
            return 0;
        }
        if values.iter().all(|&(v, _)| v >= MATE_BOUND) {
            return values.iter().map(|&(v, _)| v).min().unwrap_or(0);
        }
        if values.iter().all(|&(v, _)| v <= -MATE_BOUND) {
            return values.iter().map(|&(v, _)| v).min().unwrap_or(0);
        }
        let p: f64 = values
            .iter()
            .map(|&(v, w)| w as f64 * self.to_prob(v))
            .sum::<f64>()
            / total as f64;
        self.prob_to_cp(p).round() as i32
    }

    /// The chance node of dark move `m` valued without search: the pool-weighted expectation
    /// of the static evaluations after each reveal (mover's view). The baseline mode, the
    /// nested-chance limit and quiescence use it.
    pub(super) fn chance_static(&mut self, pos: &mut Position, m: Move) -> i32 {
        let outcomes: Vec<(Move, u32)> = pos.reveal_outcomes(m).collect();
        let mut values = Vec::with_capacity(outcomes.len());
        for (r, w) in outcomes {
            self.nodes += 1;
            self.make(pos, r);
            let v = -self.static_eval(pos);
            self.unmake(pos);
            values.push((v, w));
        }
        self.combine(&values)
    }

    /// The chance node of dark move `m` (mover's view, window `alpha..beta`): each reveal
    /// searched to `depth`, heaviest first, with Star1 cut-offs. In win-probability space a
    /// value lies in [0, 1]; after the reveals seen so far (weight `seen`, probability mass
    /// `sum`) the node lies in `[sum / W, (sum + W - seen) / W]`, so it can stop as soon as
    /// that range is outside the window, and each reveal gets the window that would decide it.
    pub(super) fn chance(
        &mut self,
        pos: &mut Position,
        m: Move,
        alpha: i32,
        beta: i32,
        depth: i32,
        ply: usize,
    ) -> i32 {
        if self.options.chance_mode == ChanceMode::StaticAverage
            || self.chance_nested >= self.params.chance_max_nested
            || ply + 2 >= MAX_PLY
        {
            return self.chance_static(pos, m);
        }
        let mut outcomes: Vec<(Move, u32)> = pos.reveal_outcomes(m).collect();
        // Heaviest reveals first: they move the bounds most (stable sort keeps kind order).
        outcomes.sort_by_key(|o| std::cmp::Reverse(o.1));
        let total: f64 = outcomes.iter().map(|&(_, w)| w as f64).sum();
        if outcomes.len() == 1 {
            // A single identity left: no chance at all.
            self.make(pos, outcomes[0].0);
            let v = -self.negamax(pos, -beta, -alpha, depth, ply + 1, false);
            self.unmake(pos);
            return v;
        }
        // The chance node's own table entry: a re-search (LMR, PVS, aspiration) or a
        // transposition into the same dark move is answered without expanding the reveals,
        // when the stored bound decides the window as an ordinary node's entry would.
        let ckey = chance_key(pos.key(), m);
        if let Some(h) = self.tt.probe(ckey, ply)
            && h.cuts(depth, alpha, beta)
        {
            return h.score;
        }
        let pa = if alpha <= -MATE_BOUND {
            0.0
        } else {
            self.to_prob(alpha)
        };
        let pb = if beta >= MATE_BOUND {
            1.0
        } else {
            self.to_prob(beta)
        };
        let mut values: Vec<(i32, u32)> = Vec::with_capacity(outcomes.len());
        let mut sum = 0.0f64;
        let mut seen = 0.0f64;
        self.chance_nested += 1;
        for &(r, w) in &outcomes {
            let wf = w as f64;
            let rest = total - seen - wf;
            // The child value that would make the node fail low (everything else at best) or
            // fail high (everything else at worst).
            let ca = (total * pa - sum - rest) / wf;
            let cb = (total * pb - sum) / wf;
            let child_alpha = if ca <= 0.0 {
                -INF
            } else {
                (self.prob_to_cp(ca.min(1.0)).floor() as i32 - 1).max(-INF)
            };
            let child_beta = if cb >= 1.0 {
                INF
            } else {
                (self.prob_to_cp(cb.max(0.0)).ceil() as i32 + 1).min(INF)
            };
            let child_beta = child_beta.max(child_alpha + 1);
            self.make(pos, r);
            let v = -self.negamax(pos, -child_beta, -child_alpha, depth, ply + 1, false);
            self.unmake(pos);
            if self.stopped {
                self.chance_nested -= 1;
                return 0;
            }
            values.push((v, w));
            let pv = if v >= MATE_BOUND {
                1.0
            } else if v <= -MATE_BOUND {
                0.0
            } else {
                self.to_prob(v)
            };
            sum += wf * pv;
            seen += wf;
            let lo = sum / total;
            let hi = (sum + total - seen) / total;
            if seen < total && (lo >= pb || hi <= pa) {
                // Star1 cut-off: the bound that decided is the node's fail-soft value.
                self.chance_nested -= 1;
                let (p, bound) = if lo >= pb {
                    (lo, Bound::Lower)
                } else {
                    (hi, Bound::Upper)
                };
                let v = self.prob_to_cp(p).round() as i32;
                self.tt
                    .store(ckey, ply, Move::NULL, v, NO_EVAL, depth, bound, false);
                return v;
            }
        }
        self.chance_nested -= 1;
        let v = self.combine(&values);
        // Every reveal searched: a value outside the window holds only as a bound (a reveal
        // that failed its own window made the sum a bound too), one inside it is exact.
        let bound = if v >= beta {
            Bound::Lower
        } else if v <= alpha {
            Bound::Upper
        } else {
            Bound::Exact
        };
        self.tt
            .store(ckey, ply, Move::NULL, v, NO_EVAL, depth, bound, false);
        v
    }
}
