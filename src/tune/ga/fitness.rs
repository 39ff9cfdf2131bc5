//! The fitness of a generation: each genome's score from self-play through the match runner,
//! against the reference or in a round-robin, on openings shared by the whole generation.

use super::{FitnessMode, GaSettings};
use crate::play::{Engine, MatchConfig, MatchResult};
use crate::tune::TuneError;
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
) -> Result<Vec<f64>, TuneError> {
    let (common, args) = (&settings.common, &settings.tuner);
    let other = untuned_defaults(space.base.kind());
    let engines: Vec<Engine> = genomes
        .iter()
        .enumerate()
        .map(|(i, g)| space.apply(g).player(&format!("ind{i}"), &other))
        .collect::<Result<_, _>>()?;
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
    let pool = common.opponents()?;
    let refs: Vec<Engine> = if pool.is_empty() {
        vec![reference.player("reference", &other)?]
    } else {
        pool
    };
    let matches: Vec<(&Engine, &Engine, MatchConfig)> = jobs
        .iter()
        .map(|&(a, b, j)| {
            let eb = if b == n {
                // wrapping: the final selection's `generation` is a large tag, not a count
                &refs[(generation.wrapping_mul(pairs).wrapping_add(j) % refs.len() as u64) as usize]
            } else {
                &engines[b]
            };
            (&engines[a], eb, common.match_config(mix(gen_seed, &[j])))
        })
        .collect();
    let played = crate::play::run_matches(&matches, common.threads())?;
    let results: Vec<(usize, usize, MatchResult)> = jobs
        .iter()
        .zip(played)
        .map(|(&(a, b, _), (r, _))| (a, b, r))
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
    Ok(points
        .iter()
        .zip(&games)
        .map(|(p, g)| if *g > 0.0 { p / g } else { 0.5 })
        .collect())
}

/// The fitness of genomes: `(space, reference, settings, generation, genomes)`; the match
/// runner's [`match_fitness`], or a synthetic one in tests.
pub trait Fitness:
    Fn(&Space, &ParamSet, &RunSettings<GaSettings>, u64, &[Vec<i32>]) -> Result<Vec<f64>, TuneError>
    + Sync
    + Send
{
}

impl<F> Fitness for F where
    F: Fn(
            &Space,
            &ParamSet,
            &RunSettings<GaSettings>,
            u64,
            &[Vec<i32>],
        ) -> Result<Vec<f64>, TuneError>
        + Sync
        + Send
{
}
