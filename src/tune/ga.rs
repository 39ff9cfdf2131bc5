//! Genetic algorithm over the parameter space, with fitness from self-play.
//!
//! Tournament selection, uniform and blend (BLX-α, Eshelman & Schaffer 1993) crossover,
//! Gaussian mutation scaled by each parameter's step, elitism, and the adaptive crossover and
//! mutation probabilities of Srinivas & Patnaik ("Adaptive probabilities of crossover and
//! mutation in genetic algorithms", IEEE SMC 1994): an individual fitter than the population
//! mean gets rates that fall linearly to zero (crossover) or to a floor (mutation) at the
//! population's best, so good solutions are kept while poor ones are disrupted. This adaptive
//! scheme is the one used for Xiangqi evaluation tuning by e.g. Wang et al. and later
//! self-play GA tuners.
//!
//! Fitness is the score against a fixed reference (the starting set by default) or inside the
//! population (round-robin), over game pairs whose openings are shared by every individual of a
//! generation (common random numbers: opening luck cancels between individuals). Elites are
//! re-evaluated each generation and their fitness averaged over all their evaluations, so a
//! lucky draw does not survive for ever.
//!
//! Every generation's randomness is drawn from `mix(seed, generation)`, and the state is
//! checkpointed atomically after each generation: a resumed run is the same run.

use super::TuneError;
use super::common::{CommonArgs, untuned_defaults};
use super::driver::{self, RunContext, RunOutcome, RunSettings, Step, Tuner};
use super::files::{self, CsvLog, csv_float};
use super::space::{Gene, ParamSet, Space};
use super::stop::install_ctrlc;
use crate::play::stats::score_to_finite_elo;
use crate::play::{Engine, MatchConfig, MatchResult};
use crate::util::mix;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};
use std::path::PathBuf;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "kebab-case")]
pub enum FitnessMode {
    /// Score against the fixed reference (the starting set).
    Reference,
    /// Score in a round-robin inside the population.
    RoundRobin,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum CrossoverKind {
    /// Each gene from either parent.
    Uniform,
    /// BLX-α: each gene uniform in the parents' interval widened by α on both sides.
    Blend,
    /// Uniform or blend, chosen per child.
    Mixed,
}

/// `xqtune tune ga`: defaults sized for the README's ~5 minute run on 2 cores.
#[derive(clap::Args, Debug, Clone)]
pub struct GaArgs {
    #[command(flatten)]
    pub common: CommonArgs,
    /// Individuals per generation.
    #[arg(long, default_value_t = 10)]
    pub population: usize,
    #[arg(long, default_value_t = 10)]
    pub generations: u64,
    /// Games per individual and generation (played as pairs with shared openings).
    #[arg(long, default_value_t = 16)]
    pub games: usize,
    #[arg(long, value_enum, default_value = "reference")]
    pub fitness: FitnessMode,
    /// Best individuals copied unchanged into the next generation (and re-evaluated).
    #[arg(long, default_value_t = 2)]
    pub elite: usize,
    /// Tournament size for parent selection.
    #[arg(long, default_value_t = 3)]
    pub tournament: usize,
    /// Crossover probability for individuals at or below the mean (k1 = k3 of Srinivas-Patnaik).
    #[arg(long, default_value_t = 0.9, value_parser = probability)]
    pub crossover_rate: f64,
    /// Per-gene mutation probability at or below the mean (k2 = k4).
    #[arg(long, default_value_t = 0.1, value_parser = probability)]
    pub mutation_rate: f64,
    /// Mutation standard deviation in units of each parameter's step.
    #[arg(long, default_value_t = 1.0)]
    pub mutation_scale: f64,
    #[arg(long, value_enum, default_value = "mixed")]
    pub crossover: CrossoverKind,
    /// α of blend crossover.
    #[arg(long, default_value_t = 0.5)]
    pub blend_alpha: f64,
    /// Spread of the initial population around the start, in steps.
    #[arg(long, default_value_t = 2.0)]
    pub init_sigma: f64,
    /// Share of mutations that move a whole group together: one rank of a position table (both
    /// phases), or the middlegame and endgame halves of a tapered value. Tables then change
    /// shape smoothly instead of square by square; 0 mutates every gene on its own.
    #[arg(long, default_value_t = 0.5, value_parser = probability)]
    pub group_rate: f64,
    /// Candidates re-evaluated after the last generation (the fittest distinct individuals and
    /// the centroid of the better half) before one is named best; 0 names the fittest as is.
    #[arg(long, default_value_t = 4)]
    pub final_candidates: usize,
    /// Games per candidate in that final selection, on openings no generation used (the fitness
    /// that selected them is biased upwards: the winner's curse).
    #[arg(long, default_value_t = 64)]
    pub final_games: usize,
}

/// The GA's settings as `config.json` records them: the flags of [`GaArgs`], field for field
/// (see [`super::common::CommonSettings`] for why they are a type of their own).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct GaSettings {
    pub population: usize,
    pub generations: u64,
    pub games: usize,
    pub fitness: FitnessMode,
    pub elite: usize,
    pub tournament: usize,
    pub crossover_rate: f64,
    pub mutation_rate: f64,
    pub mutation_scale: f64,
    pub crossover: CrossoverKind,
    pub blend_alpha: f64,
    pub init_sigma: f64,
    // absent in runs made before these options existed, which ran without them
    #[serde(default)]
    pub group_rate: f64,
    #[serde(default)]
    pub final_candidates: usize,
    #[serde(default)]
    pub final_games: usize,
}

impl From<&GaArgs> for GaSettings {
    fn from(a: &GaArgs) -> GaSettings {
        GaSettings {
            population: a.population,
            generations: a.generations,
            games: a.games,
            fitness: a.fitness,
            elite: a.elite,
            tournament: a.tournament,
            crossover_rate: a.crossover_rate,
            mutation_rate: a.mutation_rate,
            mutation_scale: a.mutation_scale,
            crossover: a.crossover,
            blend_alpha: a.blend_alpha,
            init_sigma: a.init_sigma,
            group_rate: a.group_rate,
            final_candidates: a.final_candidates,
            final_games: a.final_games,
        }
    }
}

/// A command-line probability: a number in [0, 1], refused otherwise (not clamped).
fn probability(s: &str) -> Result<f64, String> {
    let v: f64 = s
        .trim()
        .parse()
        .map_err(|_| format!("'{s}' is not a number"))?;
    if (0.0..=1.0).contains(&v) {
        Ok(v)
    } else {
        Err(format!("{v} is not a probability in [0, 1]"))
    }
}

/// The GA's knobs, separated from the CLI so tests can drive it on synthetic fitness.
#[derive(Clone, Debug)]
pub struct GaParams {
    pub population: usize,
    pub elite: usize,
    pub tournament: usize,
    pub pc_max: f64,
    pub pm_max: f64,
    /// Mutation never falls below this (Srinivas-Patnaik keep a small default rate so the best
    /// individuals do not stagnate).
    pub pm_min: f64,
    pub mutation_scale: f64,
    pub crossover: CrossoverKind,
    pub blend_alpha: f64,
    pub init_sigma: f64,
    /// Share of mutation (and initial spread) shared by a gene's group (see [`gene_groups`]).
    pub group_rate: f64,
}

impl GaParams {
    pub fn from_settings(a: &GaSettings) -> GaParams {
        GaParams {
            population: a.population.max(2),
            elite: a.elite.min(a.population.max(2) - 1),
            tournament: a.tournament.max(1),
            pc_max: a.crossover_rate.clamp(0.0, 1.0),
            pm_max: a.mutation_rate.clamp(0.0, 1.0),
            pm_min: (a.mutation_rate * 0.1).clamp(0.0, 1.0),
            mutation_scale: a.mutation_scale,
            crossover: a.crossover,
            blend_alpha: a.blend_alpha,
            init_sigma: a.init_sigma,
            group_rate: a.group_rate.clamp(0.0, 1.0),
        }
    }
}

/// The group of each gene, as an index: genes that differ only in phase (`.mg`/`.eg`) share a
/// group, and so do the squares of one rank of one position table (`pst.pawn.c5.mg` and
/// `pst.pawn.e5.eg` are both in `pst.pawn.rank5`). Every other gene is a group of its own.
pub fn gene_groups(genes: &[Gene]) -> Vec<usize> {
    let key = |name: &str| -> String {
        let base = name
            .strip_suffix(".mg")
            .or_else(|| name.strip_suffix(".eg"))
            .unwrap_or(name);
        match base.rsplit_once('.') {
            Some((table, sq))
                if sq.len() == 2
                    && matches!(sq.as_bytes()[0], b'a'..=b'i')
                    && sq.as_bytes()[1].is_ascii_digit() =>
            {
                format!("{table}.rank{}", &sq[1..])
            }
            _ => base.to_string(),
        }
    };
    let mut keys: Vec<String> = Vec::new();
    genes
        .iter()
        .map(|g| {
            let k = key(&g.name);
            match keys.iter().position(|x| *x == k) {
                Some(i) => i,
                None => {
                    keys.push(k);
                    keys.len() - 1
                }
            }
        })
        .collect()
}

fn group_count(groups: &[usize]) -> usize {
    groups.iter().map(|&g| g + 1).max().unwrap_or(0)
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Individual {
    pub genes: Vec<i32>,
    #[serde(with = "files::exact")]
    pub fit_sum: f64,
    pub evals: u32,
}

impl Individual {
    pub fn new(genes: Vec<i32>) -> Individual {
        Individual {
            genes,
            fit_sum: 0.0,
            evals: 0,
        }
    }

    pub fn fitness(&self) -> f64 {
        if self.evals == 0 {
            f64::NEG_INFINITY
        } else {
            self.fit_sum / self.evals as f64
        }
    }
}

/// Everything needed to continue a run: the next generation to evaluate.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct GaState {
    pub generation: u64,
    pub population: Vec<Individual>,
    /// Best individual of the last evaluated generation (by mean fitness over its evaluations).
    pub best: Option<Individual>,
    /// Full parameter vector of the starting set.
    pub start_vec: Vec<i32>,
    /// The last evaluated generation, fittest first (the final selection draws from it).
    #[serde(default)]
    pub last: Vec<Individual>,
    /// The final selection, once played.
    #[serde(default)]
    pub chosen: Option<FinalPick>,
}

/// One candidate of the final selection.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Candidate {
    /// `rank N` (N-th fittest of the last generation) or `centroid`.
    pub label: String,
    pub genes: Vec<i32>,
    /// Mean fitness over the generations that evaluated it (none for the centroid).
    pub ga_fitness: Option<f64>,
    pub ga_evals: u32,
    /// Score against the reference in the final games.
    #[serde(with = "files::exact")]
    pub score: f64,
}

/// The final selection: every candidate's fresh score and the one named best.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FinalPick {
    pub games: usize,
    pub candidates: Vec<Candidate>,
    pub chosen: usize,
}

/// The candidates of the final selection from the last generation (fittest first): the `k`
/// fittest distinct genomes, then the rounded mean of the better half if it is new.
pub fn final_candidates(last: &[Individual], genes: &[Gene], k: usize) -> Vec<Candidate> {
    let mut out: Vec<Candidate> = Vec::new();
    for (rank, ind) in last.iter().enumerate() {
        if out.len() >= k {
            break;
        }
        if out.iter().all(|c| c.genes != ind.genes) {
            out.push(Candidate {
                label: format!("rank {}", rank + 1),
                genes: ind.genes.clone(),
                ga_fitness: (ind.evals > 0).then(|| ind.fitness()),
                ga_evals: ind.evals,
                score: 0.0,
            });
        }
    }
    let half = (last.len() / 2).max(2).min(last.len());
    if k > 0 && half >= 2 {
        let centroid: Vec<i32> = (0..genes.len())
            .map(|i| {
                let m = last[..half].iter().map(|x| x.genes[i] as f64).sum::<f64>() / half as f64;
                genes[i].clamp(m.round() as i32)
            })
            .collect();
        if out.iter().all(|c| c.genes != centroid) {
            out.push(Candidate {
                label: "centroid".to_string(),
                genes: centroid,
                ga_fitness: None,
                ga_evals: 0,
                score: 0.0,
            });
        }
    }
    out
}

/// Scores the candidates with `fitness` and names the best (ties: the earlier candidate).
pub fn final_pick(
    mut candidates: Vec<Candidate>,
    games: usize,
    fitness: impl FnOnce(&[Vec<i32>]) -> Vec<f64>,
) -> FinalPick {
    let genomes: Vec<Vec<i32>> = candidates.iter().map(|c| c.genes.clone()).collect();
    let scores = fitness(&genomes);
    for (c, s) in candidates.iter_mut().zip(scores) {
        c.score = s;
    }
    let mut chosen = 0;
    for i in 1..candidates.len() {
        if candidates[i].score > candidates[chosen].score {
            chosen = i;
        }
    }
    FinalPick {
        games,
        candidates,
        chosen,
    }
}

/// One generation's summary (one row of log.csv).
#[derive(Clone, Debug, PartialEq)]
pub struct GenStats {
    pub generation: u64,
    pub best: f64,
    pub mean: f64,
    pub worst: f64,
    pub pc_mean: f64,
    pub pm_mean: f64,
}

/// Standard normal draw (Box-Muller; rand 0.8 without rand_distr has no Normal).
pub fn gauss(rng: &mut impl Rng) -> f64 {
    let u1: f64 = rng.r#gen::<f64>().max(1e-300);
    let u2: f64 = rng.r#gen();
    (-2.0 * u1.ln()).sqrt() * (2.0 * std::f64::consts::PI * u2).cos()
}

/// The first population: the start itself plus Gaussian variations around it.
pub fn initial_population(
    start: &[i32],
    genes: &[Gene],
    p: &GaParams,
    seed: u64,
) -> Vec<Individual> {
    let mut rng = ChaCha8Rng::seed_from_u64(mix(seed, &[u64::MAX]));
    let groups = gene_groups(genes);
    let (shared, own) = (p.group_rate.sqrt(), (1.0 - p.group_rate).sqrt());
    let mut pop = vec![Individual::new(start.to_vec())];
    while pop.len() < p.population {
        // each gene: a draw shared by its group plus its own, variance one in all
        let group_draw: Vec<f64> = (0..group_count(&groups)).map(|_| gauss(&mut rng)).collect();
        let g = start
            .iter()
            .zip(genes)
            .zip(&groups)
            .map(|((&v, g), &k)| {
                let z = shared * group_draw[k] + own * gauss(&mut rng);
                g.clamp(v + (z * p.init_sigma * g.step() as f64).round() as i32)
            })
            .collect();
        pop.push(Individual::new(g));
    }
    pop
}

/// Srinivas-Patnaik crossover probability for a pair whose fitter parent has fitness `f`.
pub fn adaptive_pc(f: f64, f_max: f64, f_avg: f64, p: &GaParams) -> f64 {
    if f >= f_avg && f_max - f_avg > 1e-12 {
        p.pc_max * ((f_max - f) / (f_max - f_avg)).clamp(0.0, 1.0)
    } else {
        p.pc_max
    }
}

/// Srinivas-Patnaik per-gene mutation probability for an individual of fitness `f`.
pub fn adaptive_pm(f: f64, f_max: f64, f_avg: f64, p: &GaParams) -> f64 {
    if f >= f_avg && f_max - f_avg > 1e-12 {
        p.pm_min + (p.pm_max - p.pm_min) * ((f_max - f) / (f_max - f_avg)).clamp(0.0, 1.0)
    } else {
        p.pm_max
    }
}

pub fn uniform_crossover(a: &[i32], b: &[i32], rng: &mut impl Rng) -> Vec<i32> {
    a.iter()
        .zip(b)
        .map(|(&x, &y)| if rng.r#gen::<bool>() { x } else { y })
        .collect()
}

/// BLX-α: each gene uniform in `[lo - α d, hi + α d]`, rounded and clamped to its bounds.
pub fn blend_crossover(
    a: &[i32],
    b: &[i32],
    genes: &[Gene],
    alpha: f64,
    rng: &mut impl Rng,
) -> Vec<i32> {
    a.iter()
        .zip(b)
        .zip(genes)
        .map(|((&x, &y), g)| {
            let (lo, hi) = (x.min(y) as f64, x.max(y) as f64);
            let d = hi - lo;
            let v = lo - alpha * d + rng.r#gen::<f64>() * (d * (1.0 + 2.0 * alpha));
            g.clamp(v.round() as i32)
        })
        .collect()
}

/// Each gene with probability `pm` moves by a Gaussian step of `scale` times its step (at
/// least one unit, so a mutation always changes the gene unless it sits on a bound).
pub fn mutate(v: &mut [i32], genes: &[Gene], pm: f64, scale: f64, rng: &mut impl Rng) {
    for (x, g) in v.iter_mut().zip(genes) {
        if rng.r#gen::<f64>() < pm {
            let mut d = (gauss(rng) * scale * g.step() as f64).round() as i32;
            if d == 0 {
                d = if rng.r#gen::<bool>() { 1 } else { -1 };
            }
            *x = g.clamp(*x + d);
        }
    }
}

/// Mutation with groups: each group moves as one with probability `pm * pg` (one Gaussian
/// draw in steps, applied to every member), and each gene on its own with `pm * (1 - pg)`.
/// With `pg == 0` this is [`mutate`].
pub fn mutate_grouped(
    v: &mut [i32],
    genes: &[Gene],
    groups: &[usize],
    pm: f64,
    pg: f64,
    scale: f64,
    rng: &mut impl Rng,
) {
    if pg <= 0.0 {
        return mutate(v, genes, pm, scale, rng);
    }
    for k in 0..group_count(groups) {
        if rng.r#gen::<f64>() < pm * pg {
            let mut z = gauss(rng) * scale;
            if z.abs() < 0.5 {
                z = if z < 0.0 { -0.5 } else { 0.5 };
            }
            for ((x, g), _) in v
                .iter_mut()
                .zip(genes)
                .zip(groups)
                .filter(|(_, gk)| **gk == k)
            {
                let d = (z * g.step() as f64).round() as i32;
                *x = g.clamp(*x + if d == 0 { z.signum() as i32 } else { d });
            }
        }
    }
    mutate(v, genes, pm * (1.0 - pg), scale, rng);
}

fn tournament(fit: &[f64], k: usize, rng: &mut impl Rng) -> usize {
    let mut best = rng.gen_range(0..fit.len());
    for _ in 1..k {
        let c = rng.gen_range(0..fit.len());
        if fit[c] > fit[best] {
            best = c;
        }
    }
    best
}

/// Evaluates the current population with `fitness(generation, genomes)`, records the best,
/// then breeds the next generation. Deterministic in (state, seed).
pub fn ga_step<F>(
    state: &mut GaState,
    genes: &[Gene],
    p: &GaParams,
    seed: u64,
    fitness: F,
) -> GenStats
where
    F: FnOnce(u64, &[Vec<i32>]) -> Vec<f64>,
{
    let generation = state.generation;
    let groups = gene_groups(genes);
    let genomes: Vec<Vec<i32>> = state.population.iter().map(|i| i.genes.clone()).collect();
    let fit_now = fitness(generation, &genomes);
    for (ind, fv) in state.population.iter_mut().zip(&fit_now) {
        ind.fit_sum += fv;
        ind.evals += 1;
    }
    let fit: Vec<f64> = state.population.iter().map(Individual::fitness).collect();
    let n = fit.len();
    let f_max = fit.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
    let f_min = fit.iter().cloned().fold(f64::INFINITY, f64::min);
    let f_avg = fit.iter().sum::<f64>() / n as f64;
    let mut order: Vec<usize> = (0..n).collect();
    order.sort_by(|&a, &b| fit[b].total_cmp(&fit[a]).then(a.cmp(&b)));
    state.best = Some(state.population[order[0]].clone());
    state.last = order.iter().map(|&i| state.population[i].clone()).collect();

    let mut rng = ChaCha8Rng::seed_from_u64(mix(seed, &[generation, 0xb4eed]));
    let mut next: Vec<Individual> = order
        .iter()
        .take(p.elite)
        .map(|&i| state.population[i].clone())
        .collect();
    let (mut pc_sum, mut pm_sum, mut children) = (0.0, 0.0, 0usize);
    while next.len() < p.population {
        let a = tournament(&fit, p.tournament, &mut rng);
        let b = tournament(&fit, p.tournament, &mut rng);
        let (a, b) = if fit[b] > fit[a] { (b, a) } else { (a, b) };
        let f_parent = fit[a];
        let pc = adaptive_pc(f_parent, f_max, f_avg, p);
        let pm = adaptive_pm(f_parent, f_max, f_avg, p);
        let (ga, gb) = (&state.population[a].genes, &state.population[b].genes);
        let mut child = if rng.r#gen::<f64>() < pc {
            let blend = match p.crossover {
                CrossoverKind::Uniform => false,
                CrossoverKind::Blend => true,
                CrossoverKind::Mixed => rng.r#gen::<bool>(),
            };
            if blend {
                blend_crossover(ga, gb, genes, p.blend_alpha, &mut rng)
            } else {
                uniform_crossover(ga, gb, &mut rng)
            }
        } else {
            ga.clone()
        };
        mutate_grouped(
            &mut child,
            genes,
            &groups,
            pm,
            p.group_rate,
            p.mutation_scale,
            &mut rng,
        );
        if &child == ga && !genes.is_empty() {
            // a copy of its parent would spend games on a known genome: move one gene
            let i = rng.gen_range(0..genes.len());
            mutate(
                &mut child[i..=i],
                &genes[i..=i],
                1.0,
                p.mutation_scale,
                &mut rng,
            );
        }
        pc_sum += pc;
        pm_sum += pm;
        children += 1;
        next.push(Individual::new(child));
    }
    state.population = next;
    state.generation += 1;
    let c = children.max(1) as f64;
    GenStats {
        generation,
        best: f_max,
        mean: f_avg,
        worst: f_min,
        pc_mean: pc_sum / c,
        pm_mean: pm_sum / c,
    }
}

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
    // With `--opponent` the fixed opponent is the reference every individual plays.
    let ref_engine = match super::spsa::opponent(common) {
        Ok(Some(o)) => Some(o),
        _ => reference.player("reference", &other).ok(),
    };
    let playable: Vec<(usize, usize, &Engine, &Engine, u64)> = jobs
        .iter()
        .filter_map(|&(a, b, j)| {
            let eb = if b == n { &ref_engine } else { &engines[b] };
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

/// The GA as a [`Tuner`]: one generation per step, the final selection after the last.
pub struct GaTuner<F> {
    dir: PathBuf,
    settings: RunSettings<GaSettings>,
    p: GaParams,
    space: Space,
    genes: Vec<Gene>,
    start: ParamSet,
    fitness: F,
    /// `params.csv`: the best genes so far after each generation (the trajectories), opened and
    /// cut to the checkpoint at the first step.
    history: Option<CsvLog>,
}

impl<F: Fitness> GaTuner<F> {
    pub fn new(ctx: &RunContext<GaSettings>, fitness: F) -> GaTuner<F> {
        GaTuner {
            dir: ctx.dir.clone(),
            settings: ctx.settings.clone(),
            p: GaParams::from_settings(&ctx.settings.tuner),
            space: ctx.space.clone(),
            genes: ctx.space.genes(),
            start: ctx.start.clone(),
            fitness,
            history: None,
        }
    }
}

impl<F: Fitness> Tuner for GaTuner<F> {
    const NAME: &'static str = "ga";
    const STEP: &'static str = "generation";
    const LOG_HEADER: &'static str = "generation,best,mean,worst,elo,pc,pm,time_s";
    type Settings = GaSettings;
    type State = GaState;

    fn start_vec(state: &GaState) -> &[i32] {
        &state.start_vec
    }

    fn log_rows(state: &GaState) -> usize {
        state.generation as usize
    }

    fn total_steps(&self) -> u64 {
        self.settings.tuner.generations
    }

    fn steps_done(&self, state: &GaState) -> u64 {
        state.generation
    }

    fn banner(&self) -> String {
        let (common, a) = (&self.settings.common, &self.settings.tuner);
        format!(
            "ga: {} parameters, population {}, {} generations, {} games each at {}",
            self.space.len(),
            self.p.population,
            a.generations,
            a.games,
            match common.depth {
                Some(d) => format!("depth {d}"),
                None => format!("{} nodes", common.nodes),
            },
        )
    }

    fn start(&mut self) -> Result<(GaState, Option<Vec<String>>), TuneError> {
        let state = GaState {
            generation: 0,
            population: initial_population(
                &self.space.values(),
                &self.genes,
                &self.p,
                self.settings.common.seed,
            ),
            best: None,
            start_vec: self.start.to_vec(),
            last: Vec::new(),
            chosen: None,
        };
        Ok((state, None))
    }

    fn finished(&self, state: &GaState) -> bool {
        state.generation >= self.settings.tuner.generations
    }

    fn step(&mut self, state: &mut GaState) -> Result<Option<Step>, TuneError> {
        let seed = self.settings.common.seed;
        if self.history.is_none() {
            let names: Vec<&str> = self.genes.iter().map(|g| g.name.as_str()).collect();
            self.history = Some(CsvLog::open(
                &self.dir.join("params.csv"),
                &format!("generation,{}", names.join(",")),
                state.generation as usize,
            )?);
        }
        let st = ga_step(state, &self.genes, &self.p, seed, |g, pop| {
            (self.fitness)(&self.space, &self.start, &self.settings, g, pop)
        });
        let best = state
            .best
            .as_ref()
            .map(|b| b.genes.clone())
            .unwrap_or_else(|| self.space.values());
        if let Some(h) = &mut self.history {
            let mut row = vec![st.generation.to_string()];
            row.extend(best.iter().map(|v| v.to_string()));
            h.row(&row)?;
        }
        let values = if matches!(self.space.base, ParamSet::Engine(_)) {
            let mut s = String::from(" |");
            for (g, v) in self.genes.iter().zip(&best).take(6) {
                s.push_str(&format!(" {}={v}", g.name));
            }
            s
        } else {
            String::new()
        };
        Ok(Some(Step {
            row: vec![
                st.generation.to_string(),
                csv_float(st.best),
                csv_float(st.mean),
                csv_float(st.worst),
                csv_float(score_to_finite_elo(st.best)),
                csv_float(st.pc_mean),
                csv_float(st.pm_mean),
            ],
            message: format!(
                "best {:.3} ({:+.0} Elo) mean {:.3}{values}",
                st.best,
                score_to_finite_elo(st.best),
                st.mean
            ),
        }))
    }

    fn best_so_far(&self, state: &GaState) -> Option<Vec<i32>> {
        state.best.as_ref().map(|b| b.genes.clone())
    }

    /// The final selection (once), then the chosen candidate, or the fittest individual.
    fn best(&mut self, state: &mut GaState) -> Result<Vec<i32>, TuneError> {
        let a = &self.settings.tuner;
        if state.chosen.is_none() && a.final_candidates > 0 && a.final_games > 0 {
            let candidates = final_candidates(&state.last, &self.genes, a.final_candidates);
            if candidates.len() > 1 {
                println!(
                    "final selection: {} candidates x {} games against the start",
                    candidates.len(),
                    a.final_games
                );
                let mut fs = self.settings.clone();
                fs.tuner.games = a.final_games;
                fs.tuner.fitness = FitnessMode::Reference;
                // a generation number no generation uses: fresh openings
                state.chosen = Some(final_pick(candidates, a.final_games, |g| {
                    (self.fitness)(&self.space, &self.start, &fs, u64::MAX - 1, g)
                }));
            }
        }
        let Some(pick) = &state.chosen else {
            return Ok(state
                .best
                .as_ref()
                .map(|b| b.genes.clone())
                .unwrap_or_else(|| self.space.values()));
        };
        for (i, c) in pick.candidates.iter().enumerate() {
            println!(
                "  {} {:<9} ga fitness {} ({} evals), final score {:.3} ({:+.0} Elo)",
                if i == pick.chosen { "*" } else { " " },
                c.label,
                c.ga_fitness.map_or("-".to_string(), |x| format!("{x:.3}")),
                c.ga_evals,
                c.score,
                score_to_finite_elo(c.score)
            );
        }
        files::write_json(&self.dir.join("final.json"), pick)?;
        if pick.candidates[pick.chosen].score <= 0.5 {
            println!(
                "no candidate beat the starting set on fresh games: expect no gain \
                 (the verification will tell)"
            );
        }
        Ok(pick.candidates[pick.chosen].genes.clone())
    }
}

/// Runs (or resumes) a GA run with the given fitness; `max_steps` stops early as a kill would
/// (used by tests).
pub fn run_ga_with(
    args: &GaArgs,
    fitness: impl Fitness,
    max_steps: Option<u64>,
) -> Result<RunOutcome, TuneError> {
    driver::launch(
        &args.common,
        GaSettings::from(args),
        |ctx| Ok(GaTuner::new(ctx, fitness)),
        max_steps,
    )
}

/// `xqtune tune ga`.
pub fn run_ga(args: &GaArgs) -> Result<RunOutcome, TuneError> {
    install_ctrlc();
    run_ga_with(args, match_fitness, None)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn genes(n: usize) -> Vec<Gene> {
        (0..n)
            .map(|i| Gene {
                name: format!("g{i}"),
                value: 0,
                min: -50,
                max: 50,
                step: 1 + (i as i32 % 3),
            })
            .collect()
    }

    fn params() -> GaParams {
        GaParams {
            population: 12,
            elite: 2,
            tournament: 3,
            pc_max: 0.9,
            pm_max: 0.2,
            pm_min: 0.02,
            mutation_scale: 1.0,
            crossover: CrossoverKind::Mixed,
            blend_alpha: 0.5,
            init_sigma: 3.0,
            group_rate: 0.0,
        }
    }

    #[test]
    fn groups_are_table_ranks_and_phase_pairs() {
        let space = Space::new(
            ParamSet::default_of(super::super::space::SpaceKind::Eval),
            "",
        )
        .unwrap();
        let gs = space.genes();
        let groups = gene_groups(&gs);
        let id = |name: &str| groups[gs.iter().position(|g| g.name == name).unwrap()];
        assert_eq!(id("pst.pawn.c5.mg"), id("pst.pawn.e5.eg"));
        assert_eq!(id("pst.pawn.a5.mg"), id("pst.pawn.c5.mg"));
        assert_ne!(id("pst.pawn.c5.mg"), id("pst.pawn.c6.mg"));
        assert_ne!(id("pst.pawn.e5.mg"), id("pst.horse.e5.mg"));
        assert_eq!(id("mobility.rook.mg"), id("mobility.rook.eg"));
        assert_ne!(id("mobility.rook.mg"), id("mobility.horse.mg"));
        assert_ne!(id("material.rook.mg"), id("mobility.rook.mg"));
        // ids are dense: 0..count
        let n = group_count(&groups);
        assert!((0..n).all(|k| groups.contains(&k)));
        assert!(n < gs.len() / 2, "{n} groups for {} genes", gs.len());
    }

    fn grouped_genes() -> (Vec<Gene>, Vec<usize>) {
        let gs: Vec<Gene> = [
            "t.a1.mg", "t.c1.mg", "t.a1.eg", "t.a2.mg", "m.mg", "m.eg", "x",
        ]
        .iter()
        .map(|n| Gene {
            name: n.to_string(),
            value: 0,
            min: -100,
            max: 100,
            step: 2,
        })
        .collect();
        let groups = gene_groups(&gs);
        assert_eq!(groups, vec![0, 0, 0, 1, 2, 2, 3]);
        (gs, groups)
    }

    #[test]
    fn group_mutation_moves_a_group_as_one() {
        let (gs, groups) = grouped_genes();
        let mut rng = ChaCha8Rng::seed_from_u64(4);
        for _ in 0..100 {
            let mut v = vec![0; gs.len()];
            mutate_grouped(&mut v, &gs, &groups, 1.0, 1.0, 3.0, &mut rng);
            assert!(v[0] != 0 && v[0] == v[1] && v[1] == v[2], "{v:?}");
            assert!(v[4] != 0 && v[4] == v[5], "{v:?}");
            assert!(v[3] != 0 && v[6] != 0);
        }
        // no group share: genes move on their own (some group member differs)
        let mut differs = false;
        for _ in 0..20 {
            let mut v = vec![0; gs.len()];
            mutate_grouped(&mut v, &gs, &groups, 1.0, 0.0, 3.0, &mut rng);
            differs |= v[0] != v[1] || v[1] != v[2];
        }
        assert!(differs);
        // the initial spread is shared the same way
        let mut p = params();
        p.group_rate = 1.0;
        p.population = 6;
        for ind in initial_population(&[0; 7], &gs, &p, 8).iter().skip(1) {
            let v = &ind.genes;
            assert!(v[0] == v[1] && v[1] == v[2] && v[4] == v[5], "{v:?}");
        }
    }

    #[test]
    fn final_selection_takes_fresh_scores() {
        let (gs, _) = grouped_genes();
        let ind = |g: i32, fit: f64| Individual {
            genes: vec![g; 7],
            fit_sum: fit,
            evals: 1,
        };
        let last = vec![
            ind(10, 0.9),
            ind(10, 0.9),
            ind(4, 0.8),
            ind(0, 0.7),
            ind(-2, 0.1),
        ];
        let c = final_candidates(&last, &gs, 3);
        let labels: Vec<&str> = c.iter().map(|c| c.label.as_str()).collect();
        // the duplicate is skipped; the centroid of the better half (10, 10) equals rank 1
        assert_eq!(labels, vec!["rank 1", "rank 3", "rank 4"]);
        let last = vec![ind(10, 0.9), ind(4, 0.8), ind(0, 0.7), ind(-2, 0.1)];
        let c = final_candidates(&last, &gs, 2);
        assert_eq!(c.len(), 3);
        assert_eq!(c[2].label, "centroid");
        assert_eq!(c[2].genes, vec![7; 7]);
        assert_eq!(c[0].ga_fitness, Some(0.9));
        // the fresh scores decide, not the GA fitness
        let pick = final_pick(c, 8, |g| {
            g.iter()
                .map(|x| 1.0 - (x[0] - 4).abs() as f64 / 10.0)
                .collect()
        });
        assert_eq!(pick.chosen, 1);
        assert_eq!(pick.candidates[1].genes, vec![4; 7]);
        assert_eq!(pick.candidates[0].score, 0.4);
    }

    /// Synthetic fitness: closeness to a target vector, deterministic.
    fn synthetic(target: &[i32]) -> impl Fn(u64, &[Vec<i32>]) -> Vec<f64> + '_ {
        move |_, pop| {
            pop.iter()
                .map(|g| {
                    let d: f64 = g
                        .iter()
                        .zip(target)
                        .map(|(a, b)| ((a - b) as f64).powi(2))
                        .sum();
                    1.0 / (1.0 + d / 100.0)
                })
                .collect()
        }
    }

    #[test]
    fn operators_respect_bounds() {
        let gs = genes(20);
        let mut rng = ChaCha8Rng::seed_from_u64(3);
        for _ in 0..200 {
            let a: Vec<i32> = gs.iter().map(|g| rng.gen_range(g.min..=g.max)).collect();
            let b: Vec<i32> = gs.iter().map(|g| rng.gen_range(g.min..=g.max)).collect();
            let u = uniform_crossover(&a, &b, &mut rng);
            for i in 0..u.len() {
                assert!(u[i] == a[i] || u[i] == b[i]);
            }
            let mut c = blend_crossover(&a, &b, &gs, 0.5, &mut rng);
            for (x, g) in c.iter().zip(&gs) {
                assert!(*x >= g.min && *x <= g.max);
            }
            mutate(&mut c, &gs, 1.0, 5.0, &mut rng);
            for (x, g) in c.iter().zip(&gs) {
                assert!(*x >= g.min && *x <= g.max);
            }
        }
        // full mutation changes every gene that is not pinned at a bound
        let mut v = vec![0; 20];
        mutate(&mut v, &gs, 1.0, 1.0, &mut rng);
        assert!(v.iter().all(|&x| x != 0));
        // zero mutation changes nothing
        let mut w = vec![7; 20];
        mutate(&mut w, &gs, 0.0, 1.0, &mut rng);
        assert_eq!(w, vec![7; 20]);
    }

    #[test]
    fn adaptive_rates_fall_for_fitter_individuals() {
        let p = params();
        let (f_max, f_avg) = (1.0, 0.5);
        assert_eq!(adaptive_pc(0.3, f_max, f_avg, &p), p.pc_max);
        assert_eq!(adaptive_pm(0.3, f_max, f_avg, &p), p.pm_max);
        assert!((adaptive_pc(0.75, f_max, f_avg, &p) - p.pc_max * 0.5).abs() < 1e-12);
        assert!(adaptive_pc(0.9, f_max, f_avg, &p) < adaptive_pc(0.6, f_max, f_avg, &p));
        assert!(adaptive_pm(0.9, f_max, f_avg, &p) < adaptive_pm(0.6, f_max, f_avg, &p));
        assert_eq!(adaptive_pc(1.0, f_max, f_avg, &p), 0.0);
        assert_eq!(adaptive_pm(1.0, f_max, f_avg, &p), p.pm_min);
        // a flat population gets the full rates (no information, explore)
        assert_eq!(adaptive_pm(0.5, 0.5, 0.5, &p), p.pm_max);
    }

    #[test]
    fn elitism_keeps_best_and_ga_improves() {
        let gs = genes(8);
        let p = params();
        let target = vec![6, -5, 8, 2, -7, 3, 0, 5];
        let fit = synthetic(&target);
        let mut state = GaState {
            generation: 0,
            population: initial_population(&[0; 8], &gs, &p, 5),
            best: None,
            start_vec: vec![0; 8],
            last: Vec::new(),
            chosen: None,
        };
        let mut bests = vec![];
        for _ in 0..60 {
            let before = state.clone();
            let st = ga_step(&mut state, &gs, &p, 5, &fit);
            // the best genome of the evaluated generation is carried over unchanged
            let f1 = |g: &Vec<i32>| fit(0, std::slice::from_ref(g))[0];
            let best = before
                .population
                .iter()
                .map(|i| f1(&i.genes))
                .fold(f64::NEG_INFINITY, f64::max);
            assert!(state.population.iter().any(|i| f1(&i.genes) == best
                && i.evals > 0
                && before.population.iter().any(|b| b.genes == i.genes)));
            assert_eq!(state.population.len(), p.population);
            bests.push(st.best);
        }
        assert!(bests.windows(2).all(|w| w[1] >= w[0] - 1e-12), "{bests:?}");
        assert!(
            bests[0] < 0.7 && bests[59] > 0.95,
            "{} -> {}",
            bests[0],
            bests[59]
        );
    }

    #[test]
    fn same_seed_same_run() {
        let gs = genes(6);
        let p = params();
        let target = vec![10, 10, -10, 0, 5, 5];
        let fit = synthetic(&target);
        let run = |seed| {
            let mut s = GaState {
                generation: 0,
                population: initial_population(&[0; 6], &gs, &p, seed),
                best: None,
                start_vec: vec![],
                last: Vec::new(),
                chosen: None,
            };
            for _ in 0..10 {
                ga_step(&mut s, &gs, &p, seed, &fit);
            }
            s
        };
        assert_eq!(run(9), run(9));
        assert_ne!(run(9), run(10));
    }
}

#[cfg(test)]
mod run_tests {
    use super::*;
    use clap::Parser;
    use std::path::Path;

    #[derive(Parser)]
    struct T {
        #[command(flatten)]
        a: GaArgs,
    }

    fn args(out: &Path) -> GaArgs {
        T::parse_from([
            "t",
            "--population",
            "8",
            "--generations",
            "6",
            "--verify",
            "none",
            "--seed",
            "11",
            "--concurrency",
            "2",
            "--name",
            "synthetic",
            "--out",
            out.to_str().unwrap(),
        ])
        .a
    }

    /// Synthetic fitness: closeness to the start shifted by three steps.
    fn fitness(
        space: &Space,
        _: &ParamSet,
        _: &RunSettings<GaSettings>,
        _: u64,
        pop: &[Vec<i32>],
    ) -> Vec<f64> {
        let target: Vec<i32> = space
            .genes()
            .iter()
            .map(|g| g.clamp(g.value + 3 * g.step()))
            .collect();
        pop.iter()
            .map(|v| {
                let d: f64 = v
                    .iter()
                    .zip(&target)
                    .map(|(a, b)| ((a - b) as f64).powi(2))
                    .sum();
                1.0 / (1.0 + d / 1000.0)
            })
            .collect()
    }

    fn without_time(log: &str) -> Vec<String> {
        log.lines()
            .map(|l| l.rsplit_once(',').map(|x| x.0).unwrap_or(l).to_string())
            .collect()
    }

    #[test]
    fn rates_outside_zero_to_one_are_refused() {
        for (flag, bad) in [
            ("--group-rate", "1.5"),
            ("--mutation-rate=-0.1", "-0.1"),
            ("--crossover-rate", "x"),
        ] {
            let args: Vec<&str> = if flag.contains('=') {
                vec!["t", flag]
            } else {
                vec!["t", flag, bad]
            };
            let e = T::try_parse_from(args).err().expect(flag);
            let msg = e.to_string();
            let name = flag.split('=').next().unwrap_or(flag);
            assert!(msg.contains(name) && msg.contains(bad), "{msg}");
        }
        assert_eq!(T::parse_from(["t", "--group-rate", "1"]).a.group_rate, 1.0);
    }

    #[test]
    fn resume_after_a_stop_gives_the_same_run() {
        let out = std::env::temp_dir().join(format!("xqtune-ga-{}", std::process::id()));
        let a = args(&out);
        let full = run_ga_with(&a, fitness, None).unwrap();
        assert!(full.finished);
        let part = run_ga_with(&a, fitness, Some(2)).unwrap();
        assert!(!part.finished);
        let st: GaState = files::read_json(&part.dir.join("checkpoints/state.json")).unwrap();
        assert_eq!(st.generation, 2);
        let mut r = a.clone();
        r.common.resume = Some(part.dir.clone());
        let resumed = run_ga_with(&r, fitness, None).unwrap();
        assert!(resumed.finished);
        assert_eq!(resumed.dir, part.dir);
        assert_eq!(full.best, resumed.best);
        let read = |d: &Path, f: &str| std::fs::read_to_string(d.join(f)).unwrap();
        assert_eq!(
            read(&full.dir, "checkpoints/state.json"),
            read(&resumed.dir, "checkpoints/state.json")
        );
        assert_eq!(
            read(&full.dir, "best.json"),
            read(&resumed.dir, "best.json")
        );
        let log = read(&full.dir, "log.csv");
        assert_eq!(log.lines().count(), 7);
        assert_eq!(
            without_time(&log),
            without_time(&read(&resumed.dir, "log.csv"))
        );
        let pick: FinalPick = files::read_json(&full.dir.join("final.json")).unwrap();
        assert!(pick.candidates.len() > 1);
        assert_eq!(
            full.best.as_ref(),
            Some(&pick.candidates[pick.chosen].genes)
        );
        assert!(full.dir.join("plots/fitness.png").exists());
        assert!(full.dir.join("plots/fitness.svg").exists());
        assert!(full.dir.join("config.json").exists());
        std::fs::remove_dir_all(&out).unwrap();
    }

    #[test]
    fn real_matches_run_end_to_end() {
        // tiny: depth 1, two generations, fixed verification of 4 games
        let out = std::env::temp_dir().join(format!("xqtune-ga-e2e-{}", std::process::id()));
        let a = T::parse_from([
            "t",
            "--population",
            "4",
            "--generations",
            "2",
            "--games",
            "2",
            "--depth",
            "1",
            "--max-plies",
            "60",
            "--verify",
            "fixed",
            "--verify-games",
            "4",
            "--concurrency",
            "2",
            "--out",
            out.to_str().unwrap(),
        ])
        .a;
        let o = run_ga_with(&a, match_fitness, None).unwrap();
        assert!(o.finished);
        let v = o.verification.unwrap();
        assert_eq!(v.stats.games, 4);
        let (_, rows) = crate::tune::plot::read_csv(&o.dir.join("log.csv")).unwrap();
        assert_eq!(rows.len(), 2);
        for r in rows {
            assert!(r[1] >= r[2] && r[2] >= r[3] && (0.0..=1.0).contains(&r[1]));
        }
        assert!(o.dir.join("verification.json").exists());
        std::fs::remove_dir_all(&out).unwrap();
    }
}
