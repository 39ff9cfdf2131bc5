//! What the parameters are fitted to and how: the [`Objective`] (a trace set, or the run's
//! data), K by Brent's method, and L-BFGS with a More-Thuente line search, stepped one
//! iteration at a time so the run driver can checkpoint between epochs.

use super::data::{Subset, TexelDataset};
use super::trace::TraceSet;
use crate::tune::TuneError;
use argmin::core::{
    CostFunction, Error as ArgminError, Executor, Gradient, IterState, Problem, Solver, State,
    TerminationStatus,
};
use argmin::solver::brent::BrentOpt;
use argmin::solver::linesearch::MoreThuenteLineSearch;
use argmin::solver::quasinewton::LBFGS;
use std::sync::{Arc, Mutex};

/// What the optimiser minimises: a trace set, or the run's (possibly distributed) data.
pub trait Objective: Send + Sync {
    fn loss(&self, theta: &[f64], k: f64) -> f64;
    fn loss_grad(&self, theta: &[f64], k: f64) -> (f64, Vec<f64>);
}

impl Objective for TraceSet {
    fn loss(&self, theta: &[f64], k: f64) -> f64 {
        TraceSet::loss(self, theta, k)
    }
    fn loss_grad(&self, theta: &[f64], k: f64) -> (f64, Vec<f64>) {
        TraceSet::loss_grad(self, theta, k)
    }
}

/// The training part of the run's data as the optimiser's objective.
pub struct TrainObjective(pub Arc<TexelDataset>);

impl Objective for TrainObjective {
    fn loss(&self, theta: &[f64], k: f64) -> f64 {
        self.0.loss(Subset::Train, theta, k)
    }
    fn loss_grad(&self, theta: &[f64], k: f64) -> (f64, Vec<f64>) {
        self.0.loss_grad_of(Subset::Train, theta, k, true)
    }
}

/// The training part against its results alone: what K is fitted on, so that the search
/// scores' `σ(K·score)` does not pull K towards itself.
pub struct ResultsObjective(pub Arc<TexelDataset>);

impl Objective for ResultsObjective {
    fn loss(&self, theta: &[f64], k: f64) -> f64 {
        self.0.loss(Subset::TrainResults, theta, k)
    }
    fn loss_grad(&self, theta: &[f64], k: f64) -> (f64, Vec<f64>) {
        self.0.loss_grad_of(Subset::TrainResults, theta, k, true)
    }
}

/// A loss as a function of K alone, for Brent's method.
struct KProblem<F>(F);

impl<F: Fn(f64) -> f64> CostFunction for KProblem<F> {
    type Param = f64;
    type Output = f64;
    fn cost(&self, k: &f64) -> Result<f64, ArgminError> {
        Ok((self.0)(*k))
    }
}

/// The K in [0.01, 10] minimising `loss` (Brent's method); `what` names it in errors.
fn brent_k(what: &str, loss: impl Fn(f64) -> f64) -> Result<f64, TuneError> {
    let solver = BrentOpt::new(0.01, 10.0).set_tolerance(1e-8, 1e-10);
    let res = Executor::new(KProblem(loss), solver)
        .configure(|s| s.max_iters(200))
        .run()
        .map_err(|e| TuneError::Optimiser(format!("fitting {what}: {e}")))?;
    res.state()
        .get_best_param()
        .copied()
        .ok_or_else(|| TuneError::Optimiser(format!("fitting {what} gave no result")))
}

/// The K minimising the loss at `theta` (Brent's method on [0.01, 10]).
pub fn fit_k(set: &dyn Objective, theta: &[f64]) -> Result<f64, TuneError> {
    brent_k("K", |k| set.loss(theta, k))
}

/// `--score-k auto`: the K at which the search scores of the file's first `max` rows (all when
/// `None`) best predict their results (Brent's method on [0.01, 10]), as [`fit_k`] fits the
/// evaluation's. Rows without a score are left out (the loader rejects them).
pub fn fit_score_k(path: &std::path::Path, max: Option<usize>) -> Result<f64, TuneError> {
    let mut pairs = Vec::new();
    for row in crate::tune::dataset::labelled_lines(path)?.take(max.unwrap_or(usize::MAX)) {
        let row = row?;
        if let Some(s) = row.score {
            pairs.push((s as f32, row.result));
        }
    }
    if pairs.is_empty() {
        return Err(TuneError::Io(format!(
            "{}: no search scores to fit --score-k auto on (rows `FEN | score | wdl`)",
            path.display()
        )));
    }
    brent_k("the scores' K", |k| {
        let sum: f64 = pairs
            .iter()
            .map(|&(s, r)| (r as f64 - super::trace::sigmoid(k, s as f64)).powi(2))
            .sum();
        sum / pairs.len() as f64
    })
}

/// (θ, loss, gradient) of the last evaluation.
type Cached = (Vec<f64>, f64, Vec<f64>);

/// The L-BFGS problem; caches the last (θ, loss, gradient) because the line search asks for the
/// cost and the gradient at the same point.
struct TexelProblem {
    set: Arc<dyn Objective>,
    k: f64,
    cache: Mutex<Option<Cached>>,
}

impl TexelProblem {
    fn loss_grad(&self, p: &[f64]) -> (f64, Vec<f64>) {
        if let Ok(c) = self.cache.lock()
            && let Some((q, l, g)) = c.as_ref()
            && q.as_slice() == p
        {
            return (*l, g.clone());
        }
        let (l, g) = self.set.loss_grad(p, self.k);
        if let Ok(mut c) = self.cache.lock() {
            *c = Some((p.to_vec(), l, g.clone()));
        }
        (l, g)
    }
}

impl CostFunction for TexelProblem {
    type Param = Vec<f64>;
    type Output = f64;
    fn cost(&self, p: &Vec<f64>) -> Result<f64, ArgminError> {
        Ok(self.loss_grad(p).0)
    }
}

impl Gradient for TexelProblem {
    type Param = Vec<f64>;
    type Gradient = Vec<f64>;
    fn gradient(&self, p: &Vec<f64>) -> Result<Vec<f64>, ArgminError> {
        Ok(self.loss_grad(p).1)
    }
}

type LbfgsState = IterState<Vec<f64>, Vec<f64>, (), (), (), f64>;

type Lbfgs = LBFGS<MoreThuenteLineSearch<Vec<f64>, Vec<f64>, f64>, Vec<f64>, Vec<f64>, f64>;

/// L-BFGS one iteration at a time, exactly as argmin's `Executor::run` drives it (init, then
/// per iteration: termination check, `next_iter`, `update`, `increment_iter`), so the run
/// driver can checkpoint, log and stop between epochs.
pub struct LbfgsStepper {
    problem: Problem<TexelProblem>,
    solver: Lbfgs,
    state: LbfgsState,
}

impl LbfgsStepper {
    /// Starts L-BFGS from `theta0` for at most `epochs` iterations.
    pub fn new(
        train: Arc<dyn Objective>,
        theta0: Vec<f64>,
        k: f64,
        epochs: u64,
        memory: usize,
    ) -> Result<LbfgsStepper, TuneError> {
        let mut problem = Problem::new(TexelProblem {
            set: train,
            k,
            cache: Mutex::new(None),
        });
        let mut solver = LBFGS::new(MoreThuenteLineSearch::new(), memory.max(1))
            .with_tolerance_grad(1e-12)
            .and_then(|s| s.with_tolerance_cost(1e-15))
            .map_err(|e| TuneError::Optimiser(e.to_string()))?;
        let state = LbfgsState::new().param(theta0).max_iters(epochs);
        let (mut state, _) = solver
            .init(&mut problem, state)
            .map_err(|e| TuneError::Optimiser(e.to_string()))?;
        state.update();
        let mut stepper = LbfgsStepper {
            problem,
            solver,
            state,
        };
        stepper.check_termination();
        Ok(stepper)
    }

    fn check_termination(&mut self) {
        if !self.state.terminated()
            && let TerminationStatus::Terminated(reason) =
                <Lbfgs as Solver<TexelProblem, _>>::terminate_internal(
                    &mut self.solver,
                    &self.state,
                )
        {
            let state = std::mem::replace(&mut self.state, LbfgsState::new());
            self.state = state.terminate_with(reason);
        }
    }

    /// True once the iteration budget is spent or L-BFGS has converged.
    pub fn done(&self) -> bool {
        self.state.terminated()
    }

    /// One L-BFGS iteration: the new θ and its training loss.
    pub fn step(&mut self) -> Result<(&[f64], f64), TuneError> {
        let state = std::mem::replace(&mut self.state, LbfgsState::new());
        let (mut state, _) = self
            .solver
            .next_iter(&mut self.problem, state)
            .map_err(|e| TuneError::Optimiser(e.to_string()))?;
        state.update();
        state.increment_iter();
        self.state = state;
        self.check_termination();
        let theta = self.state.get_param().map_or(&[][..], Vec::as_slice);
        Ok((theta, self.state.get_cost()))
    }

    /// The θ of lowest training loss so far (what argmin returns as the result).
    pub fn best(&self) -> Option<&[f64]> {
        self.state.get_best_param().map(Vec::as_slice)
    }
}

/// Minimises the loss from `theta0` with L-BFGS for at most `epochs` iterations; `hook` sees
/// each epoch's (θ, train loss) and may stop the run by returning `false`.
/// Returns the best θ found, or `None` when stopped by the hook.
pub fn optimise(
    train: Arc<dyn Objective>,
    theta0: Vec<f64>,
    k: f64,
    epochs: u64,
    memory: usize,
    mut hook: impl FnMut(&[f64], f64) -> bool,
) -> Result<Option<Vec<f64>>, TuneError> {
    if epochs == 0 {
        return Ok(Some(theta0));
    }
    let mut lbfgs = LbfgsStepper::new(train, theta0, k, epochs, memory)?;
    while !lbfgs.done() {
        let (theta, loss) = lbfgs.step()?;
        if !hook(theta, loss) {
            return Ok(None);
        }
    }
    Ok(lbfgs.best().map(<[f64]>::to_vec))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tune::texel::trace::tests::synthetic;

    #[test]
    fn fits_k_and_recovers_known_parameters() {
        let (ts, truth) = synthetic(20000, 10, 1.3, 2);
        let k = fit_k(&ts, &truth).unwrap();
        assert!((k - 1.3).abs() < 1e-3, "K {k}");
        let start: Vec<f64> = truth.iter().map(|t| t + 40.0).collect();
        let set = Arc::new(ts);
        let l0 = set.loss(&start, k);
        let losses = Arc::new(Mutex::new(vec![]));
        let lc = losses.clone();
        let hook = move |_t: &[f64], l: f64| {
            lc.lock().unwrap().push(l);
            true
        };
        let best = optimise(set.clone(), start, k, 200, 7, hook)
            .unwrap()
            .unwrap();
        let l1 = set.loss(&best, k);
        assert!(l1 < l0 * 1e-4, "{l0} -> {l1}");
        for (b, t) in best.iter().zip(&truth) {
            assert!((b - t).abs() < 0.5, "{b} vs {t}");
        }
        let ls = losses.lock().unwrap();
        assert!(ls.len() >= 2 && ls.last().unwrap() < &ls[0]);
    }

    #[test]
    fn hook_can_stop() {
        let (ts, truth) = synthetic(2000, 5, 1.0, 3);
        let start: Vec<f64> = truth.iter().map(|t| t + 30.0).collect();
        let mut n = 0;
        let hook = move |_t: &[f64], _l: f64| {
            n += 1;
            n < 3
        };
        assert_eq!(
            optimise(Arc::new(ts), start, 1.0, 100, 5, hook).unwrap(),
            None
        );
    }
}
