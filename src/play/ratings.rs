//! A rating list over every game of a pool of engines, as Ordo computes one: the
//! maximum-likelihood ratings of the Bradley-Terry model on game results, draws counted as half a
//! win for each side (Ordo's default; Rémi Coulom's BayesElo instead models draws), with the
//! logistic Elo scale of [`super::stats`] (`P(i beats j) = 1 / (1 + 10^((r_j - r_i) / 400))`).
//!
//! The fit is Newton's method on the concave log-likelihood with a step-halving safeguard (the
//! minorisation-maximisation iteration of Hunter, "MM algorithms for generalized Bradley-Terry
//! models", Ann. Stat. 2004, converges to the same point but slowly on a sparse gauntlet). With
//! two engines it is exactly the match's Elo, `score_to_elo(points / games)`.
//!
//! The maximum does not exist when some group of engines scored every point against the rest (a
//! perfect score); the list then adds one virtual draw to every pairing, as BayesElo's prior
//! does, and says so.
//!
//! The 95 % intervals come from a seeded bootstrap over the units of each pairing (colour-swapped
//! game pairs, which share an opening, so the opening's bias stays inside a unit; an odd last
//! game is a unit of its own): each resample refits the list, and the interval is its 2.5 % and
//! 97.5 % quantiles. The likelihood of superiority of an engine over the next one down the list
//! is the share of resamples in which it stays ahead (Ordo's `-s` simulations do the same).

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde::Serialize;

/// Logistic Elo per natural unit of the rating difference: `p = 1 / (1 + exp(-K (r_i - r_j)))`.
const K: f64 = std::f64::consts::LN_10 / 400.0;

/// The games of one pairing as bootstrap units: each unit is (points of `a`, games), a
/// colour-swapped pair (2 games) or a lone game.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct PairingGames {
    pub a: usize,
    pub b: usize,
    pub units: Vec<(f64, f64)>,
}

impl PairingGames {
    fn totals(&self) -> (f64, f64) {
        self.units
            .iter()
            .fold((0.0, 0.0), |(p, g), u| (p + u.0, g + u.1))
    }
}

/// Where the scale is fixed: one engine at a given Elo, or the pool's average.
#[derive(Clone, Debug, PartialEq)]
pub enum Anchor {
    Engine { index: usize, elo: f64 },
    Average(f64),
}

/// One engine of the list.
#[derive(Clone, Debug, Serialize)]
pub struct Rated {
    pub name: String,
    /// Its position in the engine list given to [`rating_list`].
    pub index: usize,
    pub rating: f64,
    /// The 95 % interval (bootstrap quantiles).
    pub lower: f64,
    pub upper: f64,
    pub games: f64,
    pub points: f64,
    /// Likelihood of superiority over the next engine down the list (`None` for the last).
    pub los_next: Option<f64>,
}

impl Rated {
    pub fn score(&self) -> f64 {
        if self.games > 0.0 {
            self.points / self.games
        } else {
            0.5
        }
    }
}

/// The list, best first.
#[derive(Clone, Debug, Serialize)]
pub struct RatingList {
    pub engines: Vec<Rated>,
    /// A virtual draw was added to every pairing because some engines had a perfect score.
    pub prior: bool,
    pub bootstrap: usize,
    /// The anchor as text (`NAME=ELO`, or `average=ELO`).
    pub anchor: String,
    /// Engines without a game (no rating), by name.
    pub unrated: Vec<String>,
}

/// Totals of the pairings with games: `(a, b, points of a, games)`, with one virtual draw per
/// pairing when `prior`.
fn totals(pairings: &[PairingGames], prior: bool) -> Vec<(usize, usize, f64, f64)> {
    pairings
        .iter()
        .map(|p| (p.a, p.b, p.totals()))
        .filter(|(_, _, (_, g))| *g > 0.0)
        .map(|(a, b, (pts, g))| {
            if prior {
                (a, b, pts + 0.5, g + 1.0)
            } else {
                (a, b, pts, g)
            }
        })
        .collect()
}

/// Whether every engine of `active` can reach every other through "scored at least something
/// against" edges: the condition for a finite maximum (Zermelo 1929; Ford 1957).
fn strongly_connected(n: usize, active: &[bool], t: &[(usize, usize, f64, f64)]) -> bool {
    let Some(start) = active.iter().position(|&x| x) else {
        return true;
    };
    let reach = |forward: bool| -> Vec<bool> {
        let mut seen = vec![false; n];
        let mut stack = vec![start];
        seen[start] = true;
        while let Some(u) = stack.pop() {
            for &(a, b, pa, g) in t {
                // edge x -> y when x took points from y
                let (a_to_b, b_to_a) = (pa > 0.0, g - pa > 0.0);
                let next = if forward {
                    if u == a && a_to_b {
                        Some(b)
                    } else if u == b && b_to_a {
                        Some(a)
                    } else {
                        None
                    }
                } else if u == b && a_to_b {
                    Some(a)
                } else if u == a && b_to_a {
                    Some(b)
                } else {
                    None
                };
                if let Some(v) = next
                    && !seen[v]
                {
                    seen[v] = true;
                    stack.push(v);
                }
            }
        }
        seen
    };
    let (f, b) = (reach(true), reach(false));
    (0..n).all(|i| !active[i] || (f[i] && b[i]))
}

/// Solves `m x = y` (Gaussian elimination with partial pivoting); `None` when singular.
fn solve(mut m: Vec<Vec<f64>>, mut y: Vec<f64>) -> Option<Vec<f64>> {
    let n = y.len();
    for c in 0..n {
        let p = (c..n).max_by(|&i, &j| m[i][c].abs().total_cmp(&m[j][c].abs()))?;
        if m[p][c].abs() < 1e-300 {
            return None;
        }
        m.swap(c, p);
        y.swap(c, p);
        for r in c + 1..n {
            let f = m[r][c] / m[c][c];
            if f != 0.0 {
                for k in c..n {
                    m[r][k] -= f * m[c][k];
                }
                y[r] -= f * y[c];
            }
        }
    }
    let mut x = vec![0.0; n];
    for r in (0..n).rev() {
        let s: f64 = (r + 1..n).map(|k| m[r][k] * x[k]).sum();
        x[r] = (y[r] - s) / m[r][r];
    }
    Some(x)
}

/// `ln(1 / (1 + exp(-x)))`, stable for large |x|.
fn log_sigmoid(x: f64) -> f64 {
    if x >= 0.0 {
        -(-x).exp().ln_1p()
    } else {
        x - x.exp().ln_1p()
    }
}

fn sigmoid(x: f64) -> f64 {
    1.0 / (1.0 + (-x).exp())
}

fn log_likelihood(r: &[f64], t: &[(usize, usize, f64, f64)]) -> f64 {
    t.iter()
        .map(|&(a, b, pa, g)| {
            let d = K * (r[a] - r[b]);
            pa * log_sigmoid(d) + (g - pa) * log_sigmoid(-d)
        })
        .sum()
}

/// The maximum-likelihood ratings (Elo) of the `active` engines from the pairing totals `t`,
/// the first active engine at 0 (inactive ones stay 0). `None` when the engines do not form
/// one connected pool.
fn fit(n: usize, active: &[bool], t: &[(usize, usize, f64, f64)]) -> Option<Vec<f64>> {
    let free: Vec<usize> = (0..n).filter(|&i| active[i]).skip(1).collect();
    let mut r = vec![0.0; n];
    if free.is_empty() {
        return Some(r);
    }
    let at: Vec<Option<usize>> = (0..n).map(|i| free.iter().position(|&f| f == i)).collect();
    let mut ll = log_likelihood(&r, t);
    for _ in 0..500 {
        let mut grad = vec![0.0; free.len()];
        let mut hess = vec![vec![0.0; free.len()]; free.len()];
        for &(a, b, pa, g) in t {
            let p = sigmoid(K * (r[a] - r[b]));
            // d/dr_a of the log-likelihood, in Elo units; d/dr_b is its negative.
            let d = K * (pa - g * p);
            let w = K * K * g * p * (1.0 - p);
            if let Some(i) = at[a] {
                grad[i] += d;
                hess[i][i] += w;
            }
            if let Some(j) = at[b] {
                grad[j] -= d;
                hess[j][j] += w;
            }
            if let (Some(i), Some(j)) = (at[a], at[b]) {
                hess[i][j] -= w;
                hess[j][i] -= w;
            }
        }
        // Newton step on the negative Hessian (positive definite on a connected pool).
        let step = solve(hess, grad)?;
        let mut scale = 1.0;
        loop {
            let mut trial = r.clone();
            for (k, &i) in free.iter().enumerate() {
                trial[i] += scale * step[k];
            }
            let l = log_likelihood(&trial, t);
            if l >= ll - 1e-12 * ll.abs() || scale < 1e-6 {
                let moved = step.iter().map(|s| (s * scale).abs()).fold(0.0, f64::max);
                r = trial;
                ll = l;
                if moved < 1e-10 {
                    return Some(r);
                }
                break;
            }
            scale *= 0.5;
        }
    }
    Some(r)
}

/// Shifts `r` (ratings of the active engines) to the anchor.
fn anchor_ratings(r: &mut [f64], active: &[bool], anchor: &Anchor) {
    let shift = match anchor {
        Anchor::Engine { index, elo } => elo - r[*index],
        Anchor::Average(elo) => {
            let n = active.iter().filter(|&&a| a).count().max(1) as f64;
            let mean: f64 = (0..r.len())
                .filter(|&i| active[i])
                .map(|i| r[i])
                .sum::<f64>()
                / n;
            elo - mean
        }
    };
    for (i, x) in r.iter_mut().enumerate() {
        if active[i] {
            *x += shift;
        }
    }
}

/// The ratings of every engine from `pairings` (engines without a game are inactive). Returns
/// the ratings (by engine index; NaN for inactive engines) and whether the prior was needed,
/// or `None` when the pool is not connected or the anchor engine has no game.
pub fn fit_ratings(
    n: usize,
    pairings: &[PairingGames],
    anchor: &Anchor,
) -> Option<(Vec<f64>, bool)> {
    let active = active_engines(n, pairings);
    fit_with(n, &active, pairings, anchor, None)
}

fn active_engines(n: usize, pairings: &[PairingGames]) -> Vec<bool> {
    let mut active = vec![false; n];
    for p in pairings {
        if p.totals().1 > 0.0 {
            active[p.a] = true;
            active[p.b] = true;
        }
    }
    active
}

/// One fit: with the prior when `prior` says so, or (`None`) when the data need it.
fn fit_with(
    n: usize,
    active: &[bool],
    pairings: &[PairingGames],
    anchor: &Anchor,
    prior: Option<bool>,
) -> Option<(Vec<f64>, bool)> {
    if let Anchor::Engine { index, .. } = anchor
        && !active.get(*index).copied().unwrap_or(false)
    {
        return None;
    }
    // One pool: every engine reaches every other through pairings with games.
    if !strongly_connected(n, active, &totals(pairings, true)) {
        return None;
    }
    let plain = totals(pairings, false);
    let prior = prior.unwrap_or_else(|| !strongly_connected(n, active, &plain));
    let t = if prior { totals(pairings, true) } else { plain };
    let mut r = fit(n, active, &t)?;
    anchor_ratings(&mut r, active, anchor);
    for (i, x) in r.iter_mut().enumerate() {
        if !active[i] {
            *x = f64::NAN;
        }
    }
    Some((r, prior))
}

/// The `q`-quantile of sorted values (linear interpolation).
fn quantile(sorted: &[f64], q: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    let x = q * (sorted.len() - 1) as f64;
    let (lo, hi) = (x.floor() as usize, x.ceil() as usize);
    sorted[lo] + (sorted[hi] - sorted[lo]) * (x - lo as f64)
}

/// The rating list of `names` from the games of `pairings`, anchored at `anchor`, with 95 %
/// intervals and likelihoods of superiority from `bootstrap` resamples seeded by `seed`.
/// `None` when the engines with games do not form one connected pool (or the anchor has none).
pub fn rating_list(
    names: &[String],
    pairings: &[PairingGames],
    anchor: &Anchor,
    bootstrap: usize,
    seed: u64,
) -> Option<RatingList> {
    let n = names.len();
    let active = active_engines(n, pairings);
    let (r, prior) = fit_with(n, &active, pairings, anchor, None)?;
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut samples: Vec<Vec<f64>> = Vec::with_capacity(bootstrap);
    for _ in 0..bootstrap {
        let resampled: Vec<PairingGames> = pairings
            .iter()
            .map(|p| PairingGames {
                a: p.a,
                b: p.b,
                units: (0..p.units.len())
                    .map(|_| p.units[rng.gen_range(0..p.units.len())])
                    .collect(),
            })
            .collect();
        // A resample can have a perfect score where the data had none: it then takes the
        // prior too (rather than an infinite rating).
        let need = prior || !strongly_connected(n, &active, &totals(&resampled, false));
        if let Some((s, _)) = fit_with(n, &active, &resampled, anchor, Some(need)) {
            samples.push(s);
        }
    }
    let mut points = vec![0.0; n];
    let mut games = vec![0.0; n];
    for p in pairings {
        let (pa, g) = p.totals();
        points[p.a] += pa;
        points[p.b] += g - pa;
        games[p.a] += g;
        games[p.b] += g;
    }
    let mut order: Vec<usize> = (0..n).filter(|&i| active[i]).collect();
    order.sort_by(|&i, &j| r[j].total_cmp(&r[i]).then(i.cmp(&j)));
    let interval = |i: usize| -> (f64, f64) {
        let mut v: Vec<f64> = samples.iter().map(|s| s[i]).collect();
        v.sort_by(f64::total_cmp);
        if v.is_empty() {
            (r[i], r[i])
        } else {
            (quantile(&v, 0.025), quantile(&v, 0.975))
        }
    };
    let los = |i: usize, j: usize| -> f64 {
        if samples.is_empty() {
            return 0.5;
        }
        let ahead: f64 = samples
            .iter()
            .map(|s| match s[i].total_cmp(&s[j]) {
                std::cmp::Ordering::Greater => 1.0,
                std::cmp::Ordering::Equal => 0.5,
                std::cmp::Ordering::Less => 0.0,
            })
            .sum();
        ahead / samples.len() as f64
    };
    let engines = order
        .iter()
        .enumerate()
        .map(|(k, &i)| {
            let (lower, upper) = interval(i);
            Rated {
                name: names[i].clone(),
                index: i,
                rating: r[i],
                lower,
                upper,
                games: games[i],
                points: points[i],
                los_next: order.get(k + 1).map(|&j| los(i, j)),
            }
        })
        .collect();
    Some(RatingList {
        engines,
        prior,
        bootstrap,
        anchor: match anchor {
            Anchor::Engine { index, elo } => format!("{}={elo}", names[*index]),
            Anchor::Average(elo) => format!("average={elo}"),
        },
        unrated: (0..n)
            .filter(|&i| !active[i])
            .map(|i| names[i].clone())
            .collect(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::play::stats::{MatchResult, elo_to_score};

    fn names(n: usize) -> Vec<String> {
        (0..n).map(|i| format!("e{i}")).collect()
    }

    /// Games between engines of known strength: each pair of games is drawn with a fixed draw
    /// rate and otherwise won by a side with the logistic probability of the rating gap.
    fn simulate(
        truth: &[f64],
        pairs: &[(usize, usize)],
        units: usize,
        seed: u64,
    ) -> Vec<PairingGames> {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let draw = 0.3;
        pairs
            .iter()
            .map(|&(a, b)| {
                let p = elo_to_score(truth[a] - truth[b]);
                // A win probability such that the expected score is p with `draw` draws.
                let win = (p - draw / 2.0).clamp(0.0, 1.0 - draw);
                let mut game = || -> f64 {
                    let x: f64 = rng.r#gen();
                    if x < win {
                        1.0
                    } else if x < win + draw {
                        0.5
                    } else {
                        0.0
                    }
                };
                PairingGames {
                    a,
                    b,
                    units: (0..units).map(|_| (game() + game(), 2.0)).collect(),
                }
            })
            .collect()
    }

    #[test]
    fn two_engines_give_the_match_elo() {
        let mut r = MatchResult::default();
        let scores = [1.0, 0.5, 0.5, 0.0, 1.0, 1.0, 0.5, 1.0, 0.0, 0.5, 1.0];
        let mut units = Vec::new();
        for c in scores.chunks(2) {
            for &s in c {
                r.add_game(s);
            }
            units.push((c.iter().sum::<f64>(), c.len() as f64));
        }
        let p = [PairingGames { a: 0, b: 1, units }];
        let anchor = Anchor::Engine { index: 1, elo: 0.0 };
        let (rat, prior) = fit_ratings(2, &p, &anchor).unwrap();
        assert!(!prior);
        assert_eq!(rat[1], 0.0);
        assert!((rat[0] - r.elo()).abs() < 1e-7, "{} vs {}", rat[0], r.elo());
        let list = rating_list(&names(2), &p, &anchor, 200, 1).unwrap();
        assert_eq!(list.engines[0].name, "e0");
        assert!((list.engines[0].rating - r.elo()).abs() < 1e-7);
        assert!(list.engines[0].lower < r.elo() && r.elo() < list.engines[0].upper);
        // the anchor has no error of its own
        assert_eq!((list.engines[1].lower, list.engines[1].upper), (0.0, 0.0));
        let los = list.engines[0].los_next.unwrap();
        assert!(los > 0.5 && los <= 1.0, "{los}");
        assert_eq!(list.engines[1].los_next, None);
    }

    #[test]
    fn known_strengths_are_recovered_within_the_intervals() {
        let truth = [0.0, 120.0, -80.0, 40.0, 250.0];
        let n = truth.len();
        let rr: Vec<(usize, usize)> = (0..n)
            .flat_map(|i| (i + 1..n).map(move |j| (i, j)))
            .collect();
        let gauntlet: Vec<(usize, usize)> = (1..n).map(|j| (0, j)).collect();
        for (pairs, units) in [(rr, 150), (gauntlet, 300)] {
            let games = simulate(&truth, &pairs, units, 42);
            let anchor = Anchor::Engine { index: 0, elo: 0.0 };
            let list = rating_list(&names(n), &games, &anchor, 400, 9).unwrap();
            assert!(!list.prior);
            for e in &list.engines {
                let t = truth[e.index];
                assert!(
                    e.lower <= t && t <= e.upper,
                    "{}: true {t} outside [{:.1}, {:.1}] (fit {:.1})",
                    e.name,
                    e.lower,
                    e.upper,
                    e.rating
                );
                if e.index != 0 {
                    assert!(e.upper - e.lower < 150.0, "{e:?}");
                }
            }
            // best first, in the true order
            let order: Vec<usize> = list.engines.iter().map(|e| e.index).collect();
            assert_eq!(order, [4, 1, 3, 0, 2]);
        }
    }

    #[test]
    fn anchors_shift_the_list_and_the_average_is_its_mean() {
        let games = simulate(&[0.0, 100.0, 200.0], &[(0, 1), (1, 2), (0, 2)], 40, 3);
        let a = fit_ratings(
            3,
            &games,
            &Anchor::Engine {
                index: 2,
                elo: 3000.0,
            },
        )
        .unwrap()
        .0;
        let b = fit_ratings(3, &games, &Anchor::Average(0.0)).unwrap().0;
        assert_eq!(a[2], 3000.0);
        assert!(b.iter().sum::<f64>().abs() < 1e-6);
        for i in 0..3 {
            assert!(((a[i] - a[0]) - (b[i] - b[0])).abs() < 1e-7);
        }
    }

    #[test]
    fn a_perfect_score_takes_the_prior_and_stays_finite() {
        let p = [
            PairingGames {
                a: 0,
                b: 1,
                units: vec![(2.0, 2.0); 5],
            },
            PairingGames {
                a: 1,
                b: 2,
                units: vec![(1.0, 2.0); 5],
            },
        ];
        let list = rating_list(&names(3), &p, &Anchor::Average(0.0), 50, 2).unwrap();
        assert!(list.prior);
        assert!(list.engines.iter().all(|e| e.rating.is_finite()));
        assert_eq!(list.engines[0].name, "e0");
    }

    #[test]
    fn engines_without_games_are_unrated_and_a_split_pool_has_no_list() {
        let p = [PairingGames {
            a: 0,
            b: 2,
            units: vec![(1.5, 2.0), (1.0, 2.0)],
        }];
        let list = rating_list(&names(3), &p, &Anchor::Average(0.0), 10, 1).unwrap();
        assert_eq!(list.unrated, ["e1"]);
        assert_eq!(list.engines.len(), 2);
        assert!(
            rating_list(&names(3), &p, &Anchor::Engine { index: 1, elo: 0.0 }, 10, 1).is_none()
        );
        let split = [
            PairingGames {
                a: 0,
                b: 1,
                units: vec![(1.0, 2.0)],
            },
            PairingGames {
                a: 2,
                b: 3,
                units: vec![(1.0, 2.0)],
            },
        ];
        assert!(rating_list(&names(4), &split, &Anchor::Average(0.0), 10, 1).is_none());
    }

    #[test]
    fn the_bootstrap_is_reproducible() {
        let games = simulate(&[0.0, 50.0, 90.0], &[(0, 1), (0, 2)], 30, 5);
        let a = rating_list(&names(3), &games, &Anchor::Average(0.0), 100, 7).unwrap();
        let b = rating_list(&names(3), &games, &Anchor::Average(0.0), 100, 7).unwrap();
        let key = |l: &RatingList| {
            l.engines
                .iter()
                .map(|e| (e.lower.to_bits(), e.upper.to_bits()))
                .collect::<Vec<_>>()
        };
        assert_eq!(key(&a), key(&b));
    }
}
