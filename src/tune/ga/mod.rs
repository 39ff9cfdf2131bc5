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
//!
//! - [`operators`]: the initial population, selection, crossover, mutation and one generation;
//! - [`final_selection`]: the final selection among the last generation's best, on fresh games;
//! - [`fitness`]: the fitness of a generation from self-play matches;
//! - here: the command, its settings and checkpoint, and the [`Tuner`] the driver runs.

pub mod final_selection;
pub mod fitness;
pub mod operators;

use super::TuneError;
use super::common::CommonArgs;
use super::driver::{self, RunContext, RunOutcome, RunSettings, Step, Tuned, Tuner};
use super::files::{self, CsvLog, csv_float};
use super::space::{Gene, ParamSet, Space};
use super::stop::install_ctrlc;
use crate::play::stats::score_to_finite_elo;
use crate::util::flags;
use final_selection::{FinalPick, final_candidates, final_pick};
use fitness::{Fitness, match_fitness};
use operators::{GaConfig, ga_step, initial_population};
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

/// `xqtune tune ga`: the defaults are sized for a short first run.
#[derive(clap::Args, Debug, Clone)]
pub struct GaArgs {
    #[command(flatten)]
    pub common: CommonArgs,
    /// Individuals per generation.
    #[arg(long, default_value_t = 10, value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(2..))]
    pub population: usize,
    #[arg(long, default_value_t = 10, value_parser = clap::value_parser!(u64).range(1..))]
    pub generations: u64,
    /// Games per individual and generation (played as pairs with shared openings).
    #[arg(long, default_value_t = 16, value_parser = flags::game_pairs)]
    pub games: usize,
    #[arg(long, value_enum, default_value = "reference")]
    pub fitness: FitnessMode,
    /// Best individuals copied unchanged into the next generation (and re-evaluated).
    #[arg(long, default_value_t = 2)]
    pub elite: usize,
    /// Tournament size for parent selection.
    #[arg(long, default_value_t = 3, value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..))]
    pub tournament: usize,
    /// Crossover probability for individuals at or below the mean (k1 = k3 of Srinivas-Patnaik).
    #[arg(long, default_value_t = 0.9, value_parser = flags::probability)]
    pub crossover_rate: f64,
    /// Per-gene mutation probability at or below the mean (k2 = k4).
    #[arg(long, default_value_t = 0.1, value_parser = flags::probability)]
    pub mutation_rate: f64,
    /// Mutation standard deviation in units of each parameter's step.
    #[arg(long, default_value_t = 1.0, value_parser = flags::non_negative)]
    pub mutation_scale: f64,
    #[arg(long, value_enum, default_value = "mixed")]
    pub crossover: CrossoverKind,
    /// α of blend crossover.
    #[arg(long, default_value_t = 0.5, value_parser = flags::non_negative)]
    pub blend_alpha: f64,
    /// Spread of the initial population around the start, in steps.
    #[arg(long, default_value_t = 2.0, value_parser = flags::non_negative)]
    pub init_sigma: f64,
    /// Share of mutations that move a whole group together: one rank of a position table (both
    /// phases), or the middlegame and endgame halves of a tapered value. Tables then change
    /// shape smoothly instead of square by square; 0 mutates every gene on its own.
    #[arg(long, default_value_t = 0.5, value_parser = flags::probability)]
    pub group_rate: f64,
    /// Candidates re-evaluated after the last generation (the fittest distinct individuals and
    /// the centroid of the better half) before one is named best; 0 names the fittest as is.
    #[arg(long, default_value_t = 4)]
    pub final_candidates: usize,
    /// Games per candidate in that final selection, on openings no generation used (the fitness
    /// that selected them is biased upwards: the winner's curse).
    #[arg(long, default_value_t = 64, value_parser = flags::game_pairs)]
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

/// The GA as a [`Tuner`]: one generation per step, the final selection after the last.
pub struct GaTuner<F> {
    dir: PathBuf,
    settings: RunSettings<GaSettings>,
    p: GaConfig,
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
            p: GaConfig::from_settings(&ctx.settings.tuner),
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
    const COMMAND: &'static str = "xqtune tune ga";
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
        })?;
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
    fn best(&mut self, state: &mut GaState) -> Result<Tuned, TuneError> {
        self.best_genes(state).map(Tuned::Genes)
    }
}

impl<F: Fitness> GaTuner<F> {
    fn best_genes(&mut self, state: &mut GaState) -> Result<Vec<i32>, TuneError> {
        let a = &self.settings.tuner;
        if state.chosen.is_none() && a.final_candidates > 0 && a.final_games > 0 {
            let candidates = final_candidates(&state.last, &self.genes, a.final_candidates);
            if candidates.len() > 1 {
                crate::outln!(
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
                })?);
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
            crate::outln!(
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
            crate::outln!(
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
    if args.common.resume.is_none() && args.elite >= args.population {
        return Err(TuneError::Params(format!(
            "--elite {} must be less than --population {}: the elite is copied into the next \
             generation beside at least one new individual",
            args.elite, args.population
        )));
    }
    if args.common.resume.is_none()
        && args.fitness == FitnessMode::RoundRobin
        && !args.common.engine.opponent.is_empty()
    {
        return Err(TuneError::Params(
            "--opponent plays the individuals against a pool instead of the reference: it \
             needs --fitness reference (a round-robin plays inside the population)"
                .into(),
        ));
    }
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
    ) -> Result<Vec<f64>, TuneError> {
        let target: Vec<i32> = space
            .genes()
            .iter()
            .map(|g| g.clamp(g.value + 3 * g.step()))
            .collect();
        Ok(pop
            .iter()
            .map(|v| {
                let d: f64 = v
                    .iter()
                    .zip(&target)
                    .map(|(a, b)| ((a - b) as f64).powi(2))
                    .sum();
                1.0 / (1.0 + d / 1000.0)
            })
            .collect())
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

    /// A pool replaces the reference, so a round-robin with opponents is refused before any
    /// run folder exists.
    #[test]
    fn opponents_need_the_reference_fitness() {
        let out = std::env::temp_dir().join(format!("xqtune-ga-rr-{}", std::process::id()));
        let mut a = args(&out);
        a.fitness = FitnessMode::RoundRobin;
        a.common.engine.opponent = vec!["some-engine".into()];
        let e = run_ga_with(&a, fitness, None).unwrap_err().to_string();
        assert!(e.contains("needs --fitness reference"), "{e}");
        assert!(!out.exists());
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

    /// A generation whose games fail (an engine that cannot start, a suite that cannot be
    /// read) ends the run with that error, not a panic; the checkpoint is the last whole
    /// generation, and a resumed run ends as an unbroken one.
    #[test]
    fn failed_games_stop_the_run_with_their_error() {
        let out = std::env::temp_dir().join(format!("xqtune-ga-fail-{}", std::process::id()));
        let a = args(&out);
        let full = run_ga_with(&a, fitness, None).unwrap();
        let failing =
            |sp: &Space, r: &ParamSet, s: &RunSettings<GaSettings>, g: u64, p: &[Vec<i32>]| {
                if g == 2 {
                    Err(TuneError::Games(crate::play::MatchError::Config(
                        "no engine".into(),
                    )))
                } else {
                    fitness(sp, r, s, g, p)
                }
            };
        let e = run_ga_with(&a, failing, None).unwrap_err().to_string();
        assert_eq!(e, "tuning games: invalid match configuration: no engine");
        let dir = std::fs::read_dir(&out)
            .unwrap()
            .map(|d| d.unwrap().path())
            .find(|d| *d != full.dir)
            .unwrap();
        let st: GaState = files::read_json(&dir.join("checkpoints/state.json")).unwrap();
        assert_eq!(st.generation, 2);
        let mut r = a.clone();
        r.common.resume = Some(dir.clone());
        let resumed = run_ga_with(&r, fitness, None).unwrap();
        assert!(resumed.finished);
        assert_eq!(full.best, resumed.best);
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
