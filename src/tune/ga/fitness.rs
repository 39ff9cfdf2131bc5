//! The fitness of a generation: each genome's score from self-play through the match runner,
//! against the reference or in a round-robin, on openings shared by the whole generation.

use super::{FitnessMode, GaSettings};
use crate::play::{Engine, MatchConfig, MatchResult};
use crate::tune::common::untuned_defaults;
use crate::tune::driver::RunSettings;
use crate::tune::space::{ParamSet, Space};
use crate::util::mix;

/// Fitness of each genome from self-play through the match runner. Every (individual, pair)
/// is one job so all cores stay busy whatever the population size; pair `j` of a generation has
/// the same opening seed for every individual.
pub fn match_fitness(
    space: &Space,
    reference: &ParamSet,
    settings: &RunSettings<GaSettings>,
    generation: u64,
    genomes: &[Vec<i32>],
) -> Vec<f64> {
    let (common, args) = (&settings.common, &settings.tuner);
    let other = untuned_defaults(space.base.kind());
    // (An engine's command was checked when the run was created, so building its players
    // cannot fail here; a failure would leave the individual at the reference's score.)
    let engines: Vec<Option<Engine>> = genomes
        .iter()
        .enumerate()
        .map(|(i, g)| space.apply(g).player(&format!("ind{i}"), &other).ok())
        .collect();
    let gen_seed = mix(common.seed, &[generation, 1]);
    let pairs = (args.games / 2).max(1) as u64;
    let n = genomes.len();
    // (a, b, pair index); b == n means the reference
    let jobs: Vec<(usize, usize, u64)> = match args.fitness {
        FitnessMode::Reference => (0..n)
            .flat_map(|i| (0..pairs).map(move |j| (i, n, j)))
            .collect(),
        FitnessMode::RoundRobin => {
            let per = (pairs / (n as u64 - 1).max(1)).max(1);
            (0..n)
                .flat_map(|i| ((i + 1)..n).flat_map(move |k| (0..per).map(move |j| (i, k, j))))
                .collect()
        }
    };
    // With opponents the pool is the reference: pair `j` of generation `g` meets opponent
    // `(g · pairs + j) mod m`, the same for every individual (and every opponent as often over
    // the generations).
    // (The opponents' commands were checked when the run was created.)
    let pool = common
        .opponents()
        .unwrap_or_else(|e| panic!("fitness opponents: {e}"));
    let refs: Vec<Option<Engine>> = if pool.is_empty() {
        vec![reference.player("reference", &other).ok()]
    } else {
        pool.into_iter().map(Some).collect()
    };
    let playable: Vec<(usize, usize, &Engine, &Engine, u64)> = jobs
        .iter()
        .filter_map(|&(a, b, j)| {
            let eb = if b == n {
                // wrapping: the final selection's `generation` is a large tag, not a count
                &refs[(generation.wrapping_mul(pairs).wrapping_add(j) % refs.len() as u64) as usize]
            } else {
                &engines[b]
            };
            match (&engines[a], eb) {
                (Some(ea), Some(eb)) => Some((a, b, ea, eb, j)),
                _ => None,
            }
        })
        .collect();
    let matches: Vec<(&Engine, &Engine, MatchConfig)> = playable
        .iter()
        .map(|&(_, _, ea, eb, j)| (ea, eb, common.match_config(mix(gen_seed, &[j]))))
        .collect();
    // (the configurations come from `match_config`, which always has a limit per move)
    let played = match crate::play::run_matches(&matches, common.threads()) {
        Ok(p) => p,
        Err(e) => panic!("fitness match: {e}"),
    };
    let results: Vec<(usize, usize, MatchResult)> = playable
        .iter()
        .zip(played)
        .map(|(&(a, b, ..), (r, _))| (a, b, r))
        .collect();
    let mut points = vec![0.0; n];
    let mut games = vec![0.0; n];
    for (a, b, r) in results {
        let g = r.games() as f64;
        let pa = r.wins as f64 + 0.5 * r.draws as f64;
        points[a] += pa;
        games[a] += g;
        if b < n {
            points[b] += g - pa;
            games[b] += g;
        }
    }
    points
        .iter()
        .zip(&games)
        .map(|(p, g)| if *g > 0.0 { p / g } else { 0.5 })
        .collect()
}

/// The fitness of genomes: `(space, reference, settings, generation, genomes)`; the match
/// runner's [`match_fitness`], or a synthetic one in tests.
pub trait Fitness:
    Fn(&Space, &ParamSet, &RunSettings<GaSettings>, u64, &[Vec<i32>]) -> Vec<f64> + Sync + Send
{
}

impl<F> Fitness for F where
    F: Fn(&Space, &ParamSet, &RunSettings<GaSettings>, u64, &[Vec<i32>]) -> Vec<f64> + Sync + Send
{
}
