//! SPSA (Spall, "Multivariate stochastic approximation using a simultaneous perturbation
//! gradient approximation", IEEE TAC 1992) with the schedule of fishtest / OpenBench:
//! `a_k = a / (A + k + 1)^alpha`, `c_k = c / (k + 1)^gamma`, alpha = 0.602, gamma = 0.101,
//! A = 10% of the iterations, and per-parameter `c_end` (perturbation at the last iteration)
//! and `r_end` (learning rate `a_k / c_k^2` at the last iteration) derived from the parameter's
//! step. Each iteration plays a game pair (or a small batch) of θ + c_kΔ against θ − c_kΔ with
//! Δ a random ±1 vector, and moves θ by `a_k / c_k · (wins − losses) · Δ`, clamped to bounds.
//! Every iteration's θ is appended to `params.csv`.

use super::TuneError;
use super::common::{CommonArgs, untuned_defaults};
use super::driver::{self, RunContext, RunOutcome, RunSettings, Step, Tuned, Tuner};
use super::files::{self, CsvLog, csv_float};
use super::space::{Gene, ParamSet, Space};
use super::stop::install_ctrlc;
use super::verify::{play_against_pool, play_pairs_games};
use super::walk::Walk;
use crate::play::MatchResult;
use crate::play::game::GameRecord;
use crate::play::pgn::{PgnHeader, game_pgn};
use crate::play::stats::score_to_finite_elo;
use crate::util::{flags, mix};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// `xqtune tune spsa`.
#[derive(clap::Args, Debug, Clone)]
pub struct SpsaArgs {
    #[command(flatten)]
    pub common: CommonArgs,
    /// Iterations: each plays --games games and moves θ once.
    #[arg(long, default_value_t = 2000, value_parser = clap::value_parser!(u64).range(1..))]
    pub iterations: u64,
    /// Games per iteration (pairs of θ+ against θ−, colours swapped). The schedule counts game
    /// pairs, as fishtest's does, so 2000 iterations of 2 games and 125 of 32 spend the same
    /// games on the same schedule; only the games of one iteration run at the same time.
    #[arg(long, default_value_t = 2, value_parser = flags::game_pairs)]
    pub games: usize,
    /// c_end in units of each parameter's step.
    #[arg(long, default_value_t = crate::tunable::SPSA_C_END_STEPS, value_parser = flags::positive)]
    pub c_end: f64,
    /// Movement per unit of match result at the last pair, in steps of each parameter
    /// (r_end = lr / c_end, c_end in steps; fishtest's usual r_end = 0.002 at c_end 2 is lr
    /// 0.004). The random walk grows with the run: long runs take less (docs/tuning.md).
    #[arg(long, default_value_t = crate::tunable::SPSA_LR, value_parser = flags::positive)]
    pub lr: f64,
    /// A as a fraction of the iterations.
    #[arg(long, default_value_t = 0.1, value_parser = flags::non_negative)]
    pub a_ratio: f64,
    #[arg(long, default_value_t = 0.602, value_parser = flags::positive)]
    pub alpha: f64,
    #[arg(long, default_value_t = 0.101, value_parser = flags::positive)]
    pub gamma: f64,
    /// Keep every game: `games/iteration-NNNNN.pgn` in the run folder, one file per iteration.
    #[arg(long)]
    pub save_games: bool,
}

/// SPSA's settings as `config.json` records them: the flags of [`SpsaArgs`], field for field
/// (see [`super::common::CommonSettings`] for why they are a type of their own).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct SpsaSettings {
    pub iterations: u64,
    pub games: usize,
    pub c_end: f64,
    pub lr: f64,
    pub a_ratio: f64,
    pub alpha: f64,
    pub gamma: f64,
    /// (Written only when set, so earlier runs read and look as before.)
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub save_games: bool,
}

impl From<&SpsaArgs> for SpsaSettings {
    fn from(a: &SpsaArgs) -> SpsaSettings {
        SpsaSettings {
            iterations: a.iterations,
            games: a.games,
            c_end: a.c_end,
            lr: a.lr,
            a_ratio: a.a_ratio,
            alpha: a.alpha,
            gamma: a.gamma,
            save_games: a.save_games,
        }
    }
}

/// Per-parameter schedule constants. The schedule counts game pairs, as fishtest's `iter`
/// does: iteration `k` plays `pairs` pairs with one Δ and reads a and c at its first pair,
/// `k · pairs`, so the games per iteration set how many games run at once, not how far θ
/// moves over a run of the same games.
#[derive(Clone, Debug, PartialEq)]
pub struct Schedule {
    pub a: Vec<f64>,
    pub c: Vec<f64>,
    pub big_a: f64,
    pub alpha: f64,
    pub gamma: f64,
    /// Game pairs per iteration (at least 1).
    pub pairs: u64,
    /// Game pairs over the whole run: iterations · pairs.
    pub n: u64,
}

impl Schedule {
    /// From c_end = c_end_steps · step and r_end = lr / c_end_steps over `n` = iterations ·
    /// pairs game pairs: c = c_end · n^gamma and a = r_end · c_end² · (A + n)^alpha, so that
    /// c and a / c² reach exactly c_end and r_end at the last pair (n − 1); A = a_ratio · n.
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        genes: &[Gene],
        iterations: u64,
        pairs: u64,
        c_end_steps: f64,
        lr: f64,
        a_ratio: f64,
        alpha: f64,
        gamma: f64,
    ) -> Schedule {
        let pairs = pairs.max(1);
        let n = iterations.max(1) * pairs;
        let mut s = Schedule {
            a: vec![],
            c: vec![],
            big_a: a_ratio * n as f64,
            alpha,
            gamma,
            pairs,
            n,
        };
        for g in genes {
            let (c_end, r_end) = g.spsa_ends(c_end_steps, lr);
            let (c, a) = s.constants(c_end, r_end);
            s.c.push(c);
            s.a.push(a);
        }
        s
    }

    /// c and a of a parameter whose schedule ends at c_end and r_end: c = c_end · n^gamma and
    /// a = r_end · c_end² · (A + n)^alpha.
    fn constants(&self, c_end: f64, r_end: f64) -> (f64, f64) {
        let n = self.n as f64;
        (
            c_end * n.powf(self.gamma),
            r_end * c_end * c_end * (self.big_a + n).powf(self.alpha),
        )
    }

    /// Replaces the constants of the parameters that bring their own c_end and r_end (an
    /// engine's parameter file, as fishtest takes them: a_end = r_end · c_end²).
    pub fn with_ends(mut self, ends: &[Option<(f64, f64)>]) -> Schedule {
        for (i, e) in ends.iter().enumerate() {
            if let Some((c_end, r_end)) = *e
                && i < self.c.len()
            {
                (self.c[i], self.a[i]) = self.constants(c_end, r_end);
            }
        }
        self
    }

    /// c at iteration `k`: at its first game pair, k · pairs.
    pub fn c_k(&self, i: usize, k: u64) -> f64 {
        self.c[i] / ((k * self.pairs + 1) as f64).powf(self.gamma)
    }

    /// a at iteration `k`: at its first game pair, k · pairs.
    pub fn a_k(&self, i: usize, k: u64) -> f64 {
        self.a[i] / (self.big_a + (k * self.pairs) as f64 + 1.0).powf(self.alpha)
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SpsaState {
    /// Next iteration.
    pub k: u64,
    #[serde(with = "files::exact::vec")]
    pub theta: Vec<f64>,
    pub start_vec: Vec<i32>,
}

/// The two perturbed points of iteration `k` (rounded, clamped) and Δ.
pub fn perturb(
    state: &SpsaState,
    genes: &[Gene],
    sch: &Schedule,
    seed: u64,
) -> (Vec<i32>, Vec<i32>, Vec<f64>) {
    let mut rng = ChaCha8Rng::seed_from_u64(mix(seed, &[state.k, 2]));
    let delta: Vec<f64> = (0..genes.len())
        .map(|_| if rng.r#gen::<bool>() { 1.0 } else { -1.0 })
        .collect();
    let mk = |sign: f64| -> Vec<i32> {
        genes
            .iter()
            .enumerate()
            .map(|(i, g)| {
                g.clamp((state.theta[i] + sign * sch.c_k(i, state.k) * delta[i]).round() as i32)
            })
            .collect()
    };
    (mk(1.0), mk(-1.0), delta)
}

/// Applies one match result (from θ+'s point of view): θ += a_k/c_k · (W − L) · Δ, clamped.
pub fn update(
    state: &mut SpsaState,
    genes: &[Gene],
    sch: &Schedule,
    delta: &[f64],
    r: &MatchResult,
) {
    let result = r.wins as f64 - r.losses as f64;
    for (i, g) in genes.iter().enumerate() {
        let t = state.theta[i] + sch.a_k(i, state.k) / sch.c_k(i, state.k) * result * delta[i];
        state.theta[i] = g.clamp_f(t);
    }
    state.k += 1;
}

/// A match of θ+ against θ−: `(space, settings, iteration, plus, minus) -> result of plus`
/// and the games (kept with `--save-games`); real games in [`run_spsa`], a synthetic judge
/// in tests.
pub trait Play:
    Fn(&Space, &RunSettings<SpsaSettings>, u64, &[i32], &[i32]) -> Result<Played, TuneError>
    + Sync
    + Send
{
}

impl<F> Play for F where
    F: Fn(&Space, &RunSettings<SpsaSettings>, u64, &[i32], &[i32]) -> Result<Played, TuneError>
        + Sync
        + Send
{
}

/// One iteration's match: θ+'s result and the games that gave it.
pub struct Played {
    pub result: MatchResult,
    pub games: Vec<GameRecord>,
}

impl From<MatchResult> for Played {
    fn from(result: MatchResult) -> Played {
        Played {
            result,
            games: Vec::new(),
        }
    }
}

/// SPSA as a [`Tuner`]: one iteration per step; every θ is also appended to `params.csv`.
pub struct SpsaTuner<F> {
    dir: PathBuf,
    settings: RunSettings<SpsaSettings>,
    space: Space,
    genes: Vec<Gene>,
    start: ParamSet,
    schedule: Schedule,
    theta0: Vec<f64>,
    /// `params.csv`, opened (and cut to the checkpoint) at the first step, and θ's path as it
    /// holds it, for the progress message's test against a random walk (read back from the
    /// file at the first step of a resumed run).
    history: Option<(CsvLog, Walk)>,
    play: F,
}

impl<F: Play> SpsaTuner<F> {
    pub fn new(ctx: &RunContext<SpsaSettings>, play: F) -> SpsaTuner<F> {
        let a = &ctx.settings.tuner;
        let genes = ctx.space.genes();
        let schedule = Schedule::new(
            &genes,
            a.iterations,
            pairs_per_iteration(a.games),
            a.c_end,
            a.lr,
            a.a_ratio,
            a.alpha,
            a.gamma,
        )
        .with_ends(&ctx.space.ends());
        SpsaTuner {
            dir: ctx.dir.clone(),
            settings: ctx.settings.clone(),
            theta0: ctx.space.values().iter().map(|&v| v as f64).collect(),
            space: ctx.space.clone(),
            genes,
            start: ctx.start.clone(),
            schedule,
            history: None,
            play,
        }
    }
}

impl<F: Play> Tuner for SpsaTuner<F> {
    const NAME: &'static str = "spsa";
    const COMMAND: &'static str = "xqtune tune spsa";
    const STEP: &'static str = "iteration";
    const LOG_HEADER: &'static str = "iteration,score,elo,result,distance,c_rel,r_rel,time_s";
    type Settings = SpsaSettings;
    type State = SpsaState;

    fn start_vec(state: &SpsaState) -> &[i32] {
        &state.start_vec
    }

    fn log_rows(state: &SpsaState) -> usize {
        state.k as usize
    }

    fn total_steps(&self) -> u64 {
        self.settings.tuner.iterations
    }

    fn steps_done(&self, state: &SpsaState) -> u64 {
        state.k
    }

    fn banner(&self) -> String {
        let a = &self.settings.tuner;
        let pairs = pairs_per_iteration(a.games);
        // θ+ and θ− each play the pairs against an opponent pool, against each other without.
        let sides = match self.settings.common.opponents() {
            Ok(pool) if !pool.is_empty() => 2,
            _ => 1,
        };
        let games = if sides == 2 {
            format!(
                "{} games (θ+ and θ− each play {} against the opponents)",
                4 * pairs,
                2 * pairs
            )
        } else {
            format!("{} games (θ+ against θ−)", 2 * pairs)
        };
        let line = format!(
            "spsa: {} parameters, {} iterations of {games}",
            self.space.len(),
            a.iterations,
        );
        let at_once = (2 * pairs * sides) as usize;
        // The whole job's threads: under MPI every rank's.
        let threads = crate::exec::slots(self.settings.common.threads());
        if threads > at_once {
            format!(
                "{line} (only {at_once} of {threads} threads can play at once: the games of one \
                 iteration are all that run together; raise --games and lower --iterations, \
                 the schedule counts game pairs)"
            )
        } else {
            line
        }
    }

    fn start(&mut self) -> Result<(SpsaState, Option<Vec<String>>), TuneError> {
        let state = SpsaState {
            k: 0,
            theta: self.theta0.clone(),
            start_vec: self.start.to_vec(),
        };
        Ok((state, None))
    }

    fn finished(&self, state: &SpsaState) -> bool {
        state.k >= self.settings.tuner.iterations
    }

    fn step(&mut self, state: &mut SpsaState) -> Result<Option<Step>, TuneError> {
        let (genes, sch) = (&self.genes, &self.schedule);
        let (history, walk) = match &mut self.history {
            Some(h) => h,
            None => {
                let log = CsvLog::open(
                    &self.dir.join("params.csv"),
                    &params_header(genes),
                    state.k as usize,
                )?;
                let walk = walk_so_far(&self.dir, genes, &self.theta0, state.k)?;
                self.history.insert((log, walk))
            }
        };
        let k = state.k;
        let (plus, minus, delta) = perturb(state, genes, sch, self.settings.common.seed);
        let played = (self.play)(&self.space, &self.settings, k, &plus, &minus)?;
        if self.settings.tuner.save_games {
            save_games(&self.dir, &self.settings, k, &played.games)?;
        }
        let r = played.result;
        update(state, genes, sch, &delta, &r);
        let score = r.score();
        let n = genes.len() as f64;
        let distance = (state
            .theta
            .iter()
            .zip(&self.theta0)
            .zip(genes)
            .map(|((t, t0), g)| ((t - t0) / g.step() as f64).powi(2))
            .sum::<f64>()
            / n)
            .sqrt();
        let c_rel = (0..genes.len())
            .map(|i| sch.c_k(i, k) / genes[i].step() as f64)
            .sum::<f64>()
            / n;
        let r_rel = (0..genes.len())
            .map(|i| sch.a_k(i, k) / sch.c_k(i, k) / genes[i].step() as f64)
            .sum::<f64>()
            / n;
        let mut row = vec![k.to_string()];
        row.extend(state.theta.iter().map(|&t| format!("{t:.3}")));
        history.row(&row)?;
        // The walk takes θ as the row wrote it, so that it is `params signal`'s to the digit.
        let written: Vec<f64> = row[1..]
            .iter()
            .map(|t| t.parse().expect("a number just formatted"))
            .collect();
        walk.push(&written);
        let (chi, moved) = walk.chi_square();
        Ok(Some(Step {
            row: vec![
                k.to_string(),
                csv_float(score),
                csv_float(score_to_finite_elo(score)),
                (r.wins as i64 - r.losses as i64).to_string(),
                csv_float(distance),
                csv_float(c_rel),
                csv_float(r_rel),
            ],
            message: format!(
                "drift {distance:.2} steps, {}{}",
                walk_text(chi, moved),
                current_values(&self.space, &state.theta)
            ),
        }))
    }

    fn best_so_far(&self, state: &SpsaState) -> Option<Vec<i32>> {
        Some(self.space.round(&state.theta))
    }

    fn best(&mut self, state: &mut SpsaState) -> Result<Tuned, TuneError> {
        self.best_genes(state).map(Tuned::Genes)
    }
}

impl<F: Play> SpsaTuner<F> {
    fn best_genes(&mut self, state: &mut SpsaState) -> Result<Vec<i32>, TuneError> {
        Ok(self.space.round(&state.theta))
    }
}

/// `params.csv`'s first line: the iteration, then each parameter by name.
fn params_header(genes: &[Gene]) -> String {
    let names: Vec<&str> = genes.iter().map(|g| g.name.as_str()).collect();
    format!("iteration,{}", names.join(","))
}

/// θ after each of the first `n` iterations from `params.csv`, whose row `i` holds θ after
/// iteration `i + 1`.
pub fn params_rows(run: &Path, genes: &[Gene], n: u64) -> Result<Vec<Vec<f64>>, TuneError> {
    let path = run.join("params.csv");
    let bad = |what: String| TuneError::Params(format!("{}: {what}", path.display()));
    let text = std::fs::read_to_string(&path).map_err(|e| files::io_err(&path, e))?;
    let mut lines = text.lines();
    if lines.next() != Some(params_header(genes).as_str()) {
        return Err(bad("its columns are not the run's parameters".into()));
    }
    let mut out = Vec::with_capacity(n as usize);
    for line in lines {
        if out.len() as u64 == n {
            break;
        }
        let mut fields = line.split(',');
        let k = out.len() as u64 + 1;
        if fields.next() != Some((k - 1).to_string().as_str()) {
            return Err(bad(format!(
                "the row of iteration {k} is '{line}': rows must run 0, 1, 2, ..."
            )));
        }
        let fields: Vec<&str> = fields.collect();
        if fields.len() != genes.len() {
            return Err(bad(format!(
                "the row of iteration {k} has {} values, expected {}",
                fields.len(),
                genes.len()
            )));
        }
        let values = fields
            .iter()
            .zip(genes)
            .map(|(f, g)| {
                f.parse::<f64>()
                    .ok()
                    .filter(|x| x.is_finite())
                    .ok_or_else(|| {
                        bad(format!(
                            "iteration {k}: '{}' = '{f}' is not a number",
                            g.name
                        ))
                    })
            })
            .collect::<Result<Vec<f64>, TuneError>>()?;
        out.push(values);
    }
    if (out.len() as u64) < n {
        return Err(bad(format!("no row for iteration {}", out.len() + 1)));
    }
    Ok(out)
}

/// The progress line's test of the path against a random walk (`params signal`'s last lines).
fn walk_text(chi: f64, moved: usize) -> String {
    if moved == 0 {
        return "no parameter has moved".into();
    }
    format!(
        "Σz² {chi:.1} over {moved} (a random walk: {moved} ± {:.1})",
        (2.0 * moved as f64).sqrt()
    )
}

/// θ's path over the first `k` iterations of the run in `dir`, from `start` through the rows of
/// `params.csv`: where a resumed run's progress line takes up the walk.
fn walk_so_far(dir: &Path, genes: &[Gene], start: &[f64], k: u64) -> Result<Walk, TuneError> {
    let mut path = vec![start.to_vec()];
    path.extend(params_rows(dir, genes, k)?);
    Ok(Walk::new(&path).expect("the path has its start"))
}

/// `games/iteration-NNNNN.pgn` of iteration `k` (written whole, so a resumed run rewrites
/// the iteration a kill interrupted).
fn save_games(
    dir: &std::path::Path,
    s: &RunSettings<SpsaSettings>,
    k: u64,
    games: &[GameRecord],
) -> Result<(), TuneError> {
    let header = PgnHeader {
        event: format!("xqtune tune spsa iteration {k}"),
        date: chrono::Utc::now().format("%Y.%m.%d").to_string(),
        time_control: crate::play::limits_text(&s.common.match_config(0)),
        variant: "xiangqi".into(),
    };
    let text: String = games.iter().map(|g| game_pgn(&header, g)).collect();
    let path = dir.join("games").join(format!("iteration-{k:05}.pgn"));
    std::fs::create_dir_all(dir.join("games"))
        .and_then(|_| crate::util::write_atomic(&path, text.as_bytes()))
        .map_err(|e| TuneError::Io(format!("writing {}: {e}", path.display())))
}

/// An engine run's current values for the progress bar (` Name=V ...`, the first few); empty
/// for xqtune's own sets, whose hundreds of values would not fit a line.
fn current_values(space: &Space, theta: &[f64]) -> String {
    if !matches!(space.base, ParamSet::Engine(_)) {
        return String::new();
    }
    let genes = space.genes();
    let mut s = String::from(" |");
    for (g, t) in genes.iter().zip(theta).take(6) {
        s.push_str(&format!(" {}={:.1}", g.name, t));
    }
    if genes.len() > 6 {
        s.push_str(" ..");
    }
    s
}

/// Runs (or resumes) SPSA with `play`; `max_steps` stops early as a kill would (tests).
pub fn run_spsa_with(
    args: &SpsaArgs,
    play: impl Play,
    max_steps: Option<u64>,
) -> Result<RunOutcome, TuneError> {
    driver::launch(
        &args.common,
        SpsaSettings::from(args),
        |ctx| Ok(SpsaTuner::new(ctx, play)),
        max_steps,
    )
}

/// The games of one iteration: θ+ against θ− over `games` games (pairs with shared openings),
/// or, with opponents, each of them against the pool on the same openings and the same
/// opponents: pair `j` of iteration `k` meets opponent `(k · pairs + j) mod m`, so every
/// opponent gets as many games (see [`super::verify::play_against_pool`]).
pub fn play_games(
    space: &Space,
    s: &RunSettings<SpsaSettings>,
    k: u64,
    plus: &[i32],
    minus: &[i32],
) -> Result<Played, TuneError> {
    let other = untuned_defaults(space.base.kind());
    let ea = space.apply(plus).player("plus", &other)?;
    let eb = space.apply(minus).player("minus", &other)?;
    let pairs = pairs_per_iteration(s.tuner.games);
    let seed = mix(s.common.seed, &[k, 3]);
    let pool = s.common.opponents()?;
    if pool.is_empty() {
        let (result, games) = play_pairs_games(&ea, &eb, 0..pairs, seed, &s.common)?;
        return Ok(Played { result, games });
    }
    let played = play_against_pool(&[&ea, &eb], &pool, 0..pairs, k * pairs, seed, &s.common)?;
    let mut totals = [MatchResult::default(); 2];
    let mut games = Vec::new();
    for (side, per_opponent) in played.into_iter().enumerate() {
        for (r, g) in per_opponent {
            totals[side] += r;
            games.extend(g);
        }
    }
    Ok(Played {
        result: against_opponent(&totals[0], &totals[1]),
        games,
    })
}

/// Game pairs of one iteration of `games` games (at least one).
pub fn pairs_per_iteration(games: usize) -> u64 {
    (games / 2).max(1) as u64
}

/// `xqtune tune spsa`.
pub fn run_spsa(args: &SpsaArgs) -> Result<RunOutcome, TuneError> {
    install_ctrlc();
    run_spsa_with(args, play_games, None)
}

/// θ+'s and θ−'s results against one opponent as one result of θ+ "against" θ−, whose
/// wins − losses is the difference of their (wins − losses): the gradient SPSA takes (fishtest
/// with a fixed base). The rest of the games count as draws, so the score stays in [0, 1].
pub fn against_opponent(plus: &MatchResult, minus: &MatchResult) -> MatchResult {
    let d = (plus.wins as i64 - plus.losses as i64) - (minus.wins as i64 - minus.losses as i64);
    let games = (plus.games() + minus.games()) as i64;
    MatchResult {
        wins: d.max(0) as u32,
        losses: (-d).max(0) as u32,
        draws: (games - d.abs()).max(0) as u32,
        pentanomial: [0; 5],
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn genes() -> Vec<Gene> {
        vec![
            Gene {
                name: "x".into(),
                value: 0,
                min: -100,
                max: 100,
                step: 10,
            },
            Gene {
                name: "y".into(),
                value: 0,
                min: -100,
                max: 100,
                step: 2,
            },
        ]
    }

    #[test]
    fn schedule_values() {
        let gs = genes();
        let n = 1000;
        let s = Schedule::new(&gs, n, 1, 1.0, 0.02, 0.1, 0.602, 0.101);
        assert!((s.big_a - 100.0).abs() < 1e-12);
        // c_k reaches c_end = step at the last iteration
        assert!((s.c_k(0, n - 1) - 10.0).abs() < 1e-9);
        assert!((s.c_k(1, n - 1) - 2.0).abs() < 1e-9);
        // r_k = a_k / c_k^2 reaches r_end = lr / c_end_steps (0.02 at c_end 1 step and lr 0.02)
        let r_end = s.a_k(0, n - 1) / s.c_k(0, n - 1).powi(2);
        assert!((r_end - 0.02).abs() < 1e-12, "{r_end}");
        // first iteration: c_0 = c, a_0 = a / (A + 1)^alpha
        assert!((s.c_k(0, 0) - 10.0 * 1000f64.powf(0.101)).abs() < 1e-9);
        assert!((s.a_k(0, 0) - s.a[0] / 101f64.powf(0.602)).abs() < 1e-12);
        // both decay
        assert!(s.c_k(0, 10) < s.c_k(0, 0) && s.a_k(0, 10) < s.a_k(0, 0));
    }

    #[test]
    fn a_result_moves_every_parameter_the_same_number_of_its_steps() {
        // steps 10 and 2: one unit of result moves each by lr steps at the last pair, and by
        // the same number of its own steps at every pair before it
        let gs = genes();
        let n = 400;
        let s = Schedule::new(&gs, n, 1, 2.0, 0.05, 0.1, 0.602, 0.101);
        let steps = |i: usize, k: u64| s.a_k(i, k) / s.c_k(i, k) / gs[i].step() as f64;
        assert!(
            (steps(0, n - 1) - 0.05).abs() < 1e-12,
            "{}",
            steps(0, n - 1)
        );
        for k in [0, 1, 57, n - 1] {
            assert!((steps(0, k) - steps(1, k)).abs() < 1e-12, "pair {k}");
        }
    }

    #[test]
    fn per_parameter_ends_reach_c_end_and_r_end() {
        let gs = genes();
        let n = 500;
        let s = Schedule::new(&gs, n, 1, 1.0, 0.02, 0.1, 0.602, 0.101)
            .with_ends(&[None, Some((3.0, 0.01))]);
        // parameter 0 keeps its step-derived schedule, parameter 1 takes the file's values
        assert!((s.c_k(0, n - 1) - 10.0).abs() < 1e-9);
        assert!((s.c_k(1, n - 1) - 3.0).abs() < 1e-9);
        let r_end = s.a_k(1, n - 1) / s.c_k(1, n - 1).powi(2);
        assert!((r_end - 0.01).abs() < 1e-12, "{r_end}");
    }

    #[test]
    fn a_batch_of_pairs_reads_the_pair_schedule_at_its_first_pair() {
        let gs = genes();
        let ends = [None, Some((3.0, 0.01))];
        let single = Schedule::new(&gs, 1000, 1, 1.0, 0.02, 0.1, 0.602, 0.101).with_ends(&ends);
        let batched = Schedule::new(&gs, 125, 8, 1.0, 0.02, 0.1, 0.602, 0.101).with_ends(&ends);
        assert_eq!((batched.n, batched.big_a), (1000, single.big_a));
        for i in 0..gs.len() {
            for k in [0u64, 1, 7, 60, 124] {
                assert_eq!(
                    batched.c_k(i, k),
                    single.c_k(i, 8 * k),
                    "c, parameter {i}, k {k}"
                );
                assert_eq!(
                    batched.a_k(i, k),
                    single.a_k(i, 8 * k),
                    "a, parameter {i}, k {k}"
                );
            }
        }
        // 8 pairs won move θ by 8 times what one pair won moves it, with the same a and c
        let state = |k| SpsaState {
            k,
            theta: vec![0.0, 0.0],
            start_vec: vec![],
        };
        let won = |pairs: u32| MatchResult {
            wins: 2 * pairs,
            draws: 0,
            losses: 0,
            pentanomial: [0, 0, 0, 0, pairs],
        };
        let delta = [1.0, -1.0];
        let (mut one, mut eight) = (state(40), state(5));
        update(&mut one, &gs, &single, &delta, &won(1));
        update(&mut eight, &gs, &batched, &delta, &won(8));
        for i in 0..2 {
            assert!((eight.theta[i] - 8.0 * one.theta[i]).abs() < 1e-9, "{i}");
        }
        assert_eq!((pairs_per_iteration(16), pairs_per_iteration(3)), (8, 1));
    }

    #[test]
    fn results_against_an_opponent_give_the_difference() {
        let r = |wins, draws, losses| MatchResult {
            wins,
            draws,
            losses,
            pentanomial: [0; 5],
        };
        // θ+ 2-0, θ− 0-2: +4 of 4 games
        assert_eq!(against_opponent(&r(2, 0, 0), &r(0, 0, 2)), r(4, 0, 0));
        // θ+ 1-1, θ− 1-0 (one draw): −1, the other 3 games count as draws
        assert_eq!(against_opponent(&r(1, 0, 1), &r(1, 1, 0)), r(0, 3, 1));
        assert_eq!(against_opponent(&r(1, 1, 0), &r(1, 1, 0)), r(0, 4, 0));
    }

    #[test]
    fn update_moves_toward_winner_and_clamps() {
        let gs = genes();
        let s = Schedule::new(&gs, 100, 1, 1.0, 0.5, 0.1, 0.602, 0.101);
        let mut st = SpsaState {
            k: 0,
            theta: vec![0.0, 99.5],
            start_vec: vec![],
        };
        let (plus, minus, delta) = perturb(&st, &gs, &s, 7);
        assert_ne!(plus, minus);
        for i in 0..2 {
            assert!(plus[i] >= gs[i].min && plus[i] <= gs[i].max);
        }
        let win = MatchResult {
            wins: 2,
            draws: 0,
            losses: 0,
            pentanomial: [0, 0, 0, 0, 1],
        };
        update(&mut st, &gs, &s, &delta, &win);
        assert_eq!(st.k, 1);
        assert!(st.theta[0] * delta[0] > 0.0, "θ moves along Δ when θ+ wins");
        assert!(st.theta[1] <= 100.0);
    }
}

#[cfg(test)]
mod run_tests {
    use super::*;
    use clap::Parser;

    #[derive(Parser)]
    struct T {
        #[command(flatten)]
        a: SpsaArgs,
    }

    /// θ+ wins both games when it is closer to a target, loses both otherwise.
    fn play(
        space: &Space,
        _: &RunSettings<SpsaSettings>,
        _: u64,
        plus: &[i32],
        minus: &[i32],
    ) -> Result<Played, TuneError> {
        let target: Vec<f64> = space
            .genes()
            .iter()
            .map(|g| g.clamp(g.value + 5 * g.step()) as f64)
            .collect();
        let d = |v: &[i32]| -> f64 {
            v.iter()
                .zip(&target)
                .map(|(a, b)| (*a as f64 - b).powi(2))
                .sum()
        };
        let (dp, dm) = (d(plus), d(minus));
        Ok(MatchResult {
            wins: if dp < dm { 2 } else { 0 },
            draws: if dp == dm { 2 } else { 0 },
            losses: if dp > dm { 2 } else { 0 },
            pentanomial: [0; 5],
        }
        .into())
    }

    #[test]
    fn params_theta_reads_a_search_run_back() {
        let out = std::env::temp_dir().join(format!("xqtune-spsa-theta-{}", std::process::id()));
        let a = T::parse_from([
            "t",
            "--space",
            "search",
            "--only",
            "rfp_*,lmr_*",
            "--iterations",
            "6",
            "--verify",
            "none",
            "--concurrency",
            "1",
            "--out",
            out.to_str().unwrap(),
        ])
        .a;
        let part = run_spsa_with(&a, play, Some(4)).unwrap();
        let theta = |n| super::super::theta::theta(&part.dir, n).unwrap();
        // the latest point is the one a stopped run reports, as a whole search file
        let sp = Space::new(
            ParamSet::default_of(super::super::space::SpaceKind::Search),
            "rfp_*,lmr_*",
        )
        .unwrap();
        let latest = sp.apply(&part.best.clone().unwrap()).to_json_string();
        let t = theta(None);
        assert_eq!((t.iteration, t.finished, t.planned), (4, 4, Some(6)));
        assert_eq!(t.file, latest);
        assert_eq!(theta(Some(4)).file, latest);
        assert_eq!(
            theta(Some(0)).file,
            ParamSet::default_of(super::super::space::SpaceKind::Search).to_json_string()
        );
        // each iteration's point is the run's θ then: a resumed run reaches the same end
        let mut r = a.clone();
        r.common.resume = Some(part.dir.clone());
        let whole = run_spsa_with(&r, play, None).unwrap();
        assert_eq!(
            super::super::theta::theta(&whole.dir, Some(6))
                .unwrap()
                .file,
            sp.apply(&whole.best.unwrap()).to_json_string()
        );
        assert_ne!(theta(Some(1)).file, theta(Some(0)).file);
        std::fs::remove_dir_all(&out).unwrap();
    }

    #[test]
    fn spsa_moves_toward_target_and_resumes_identically() {
        let out = std::env::temp_dir().join(format!("xqtune-spsa-{}", std::process::id()));
        let a = T::parse_from([
            "t",
            "--iterations",
            "120",
            "--verify",
            "none",
            "--lr",
            "0.075",
            "--concurrency",
            "1",
            "--out",
            out.to_str().unwrap(),
        ])
        .a;
        let full = run_spsa_with(&a, play, None).unwrap();
        let part = run_spsa_with(&a, play, Some(37)).unwrap();
        assert!(!part.finished);
        let mut r = a.clone();
        r.common.resume = Some(part.dir.clone());
        let resumed = run_spsa_with(&r, play, None).unwrap();
        assert_eq!(full.best, resumed.best);
        let read = |d: &std::path::Path, f: &str| std::fs::read_to_string(d.join(f)).unwrap();
        assert_eq!(
            read(&full.dir, "params.csv"),
            read(&resumed.dir, "params.csv")
        );
        assert_eq!(read(&full.dir, "params.csv").lines().count(), 121);
        // The walk a resumed run's progress line takes up is `params signal`'s.
        let signal = super::super::signal::run_signals(&part.dir, 0, Some(37)).unwrap();
        let run = &signal.run;
        let walk = walk_so_far(&part.dir, &run.space.genes(), &run.start_theta(), 37).unwrap();
        assert_eq!(walk, signal.walk);
        assert!(walk.chi_square().1 > 0);
        // every tuned parameter moved toward its target
        let start: Vec<i32> = Space::new(
            ParamSet::default_of(super::super::space::SpaceKind::Eval),
            "",
        )
        .unwrap()
        .values();
        let best = full.best.unwrap();
        let sp = Space::new(
            ParamSet::default_of(super::super::space::SpaceKind::Eval),
            "",
        )
        .unwrap();
        let gs = sp.genes();
        let before: i64 = start
            .iter()
            .zip(&gs)
            .map(|(v, g)| ((g.clamp(g.value + 5 * g.step()) - v) as i64).abs())
            .sum();
        let after: i64 = best
            .iter()
            .zip(&gs)
            .map(|(v, g)| ((g.clamp(g.value + 5 * g.step()) - v) as i64).abs())
            .sum();
        assert!(after < before, "{before} -> {after}");
        assert!(full.dir.join("plots/trajectories.png").exists());
        std::fs::remove_dir_all(&out).unwrap();
    }
}
