//! `xqtune params signal`: whether an SPSA run's parameters have moved further than noise
//! would move them.
//!
//! An SPSA update moves every parameter by a_k/c_k · (W − L) · Δ with Δ = ±1 drawn afresh each
//! iteration. Where a parameter does not affect the result, the signs of its steps are a fair
//! coin and its path is a random walk: its net move over iterations `from..to` has mean 0 and
//! standard deviation sqrt(Σ step²), the root sum of squares of the steps it actually took
//! (`params.csv`). The ratio z = move / sqrt(Σ step²) is then about standard normal, and over
//! n parameters Σz² is about χ² with n degrees of freedom. A parameter whose |z| stands well
//! above 2, or a Σz² well above n, is a gradient the games have found; a run whose z look like
//! draws from N(0, 1) has so far only wandered, whatever its parameters' moves look like. A
//! Σz² well below n is a pull back: parameters held near a point the run circles, their net
//! moves smaller than their steps would give.
//! (θ+ against θ− scores 0.5 on average at any θ, so the match score says nothing of this.)

use super::TuneError;
use super::space::Gene;
use super::spsa::params_rows;
use super::theta::SpsaRun;
use super::walk::Walk;
use crate::play::stats::erf;
use std::path::{Path, PathBuf};

/// `xqtune params signal`.
#[derive(clap::Args, Debug)]
pub struct SignalArgs {
    /// The SPSA run folder (`results/<run>`).
    pub run: PathBuf,
    /// The window's first point: θ after this many iterations (default 0, the start).
    #[arg(long, default_value_t = 0)]
    pub from: u64,
    /// The window's last point (default: the latest checkpoint's iteration).
    #[arg(long)]
    pub to: Option<u64>,
}

/// One parameter's move over the window, in units of its step.
#[derive(Clone, Debug, PartialEq)]
pub struct ParamSignal {
    pub name: String,
    pub from: f64,
    pub to: f64,
    /// (to − from) / step.
    pub moved: f64,
    /// sqrt(Σ step²) / step: the spread of a random walk's net move over the same steps.
    pub noise: f64,
    /// moved / noise (0 for a parameter that never moved).
    pub z: f64,
}

/// The parameters' signals over a walk of θ, sorted by |z|, largest first.
pub fn signals(genes: &[Gene], walk: &Walk) -> Vec<ParamSignal> {
    let (from, to) = walk.ends();
    let mut out: Vec<ParamSignal> = genes
        .iter()
        .enumerate()
        .map(|(i, g)| {
            let step = g.step() as f64;
            let (moved, noise) = walk.moved_and_noise(i);
            ParamSignal {
                name: g.name.clone(),
                from: from[i],
                to: to[i],
                moved: moved / step,
                noise: noise / step,
                z: walk.z(i),
            }
        })
        .collect();
    out.sort_by(|a, b| b.z.abs().total_cmp(&a.z.abs()).then(a.name.cmp(&b.name)));
    out
}

/// P(χ²(n) ≥ x), by the Wilson–Hilferty cube-root approximation (within about 0.01 from a
/// few degrees of freedom on; 1 for n = 0).
pub fn chi_square_upper(x: f64, n: usize) -> f64 {
    if n == 0 {
        return 1.0;
    }
    let n = n as f64;
    let v = 2.0 / (9.0 * n);
    let t = ((x.max(0.0) / n).cbrt() - (1.0 - v)) / v.sqrt();
    0.5 * (1.0 - erf(t / std::f64::consts::SQRT_2))
}

/// An SPSA run's path over a window, read.
#[derive(Debug)]
pub struct RunSignals {
    /// Per parameter, largest |z| first.
    pub params: Vec<ParamSignal>,
    /// The window's walk (its Σz² is the verdict).
    pub walk: Walk,
    /// The window's last point.
    pub to: u64,
    pub run: SpsaRun,
}

/// The signals of the SPSA run in `run` over iterations `from..to` (`to` default: the
/// checkpoint's).
pub fn run_signals(run: &Path, from: u64, to: Option<u64>) -> Result<RunSignals, TuneError> {
    let r = SpsaRun::open(run)?;
    let finished = r.finished();
    let to = to.unwrap_or(finished);
    if to > finished {
        return Err(TuneError::Params(format!(
            "--to {to}: {} has finished {finished} iterations",
            run.display()
        )));
    }
    if from >= to {
        return Err(TuneError::Params(format!(
            "--from {from} --to {to}: the window needs at least one iteration (from < to)"
        )));
    }
    let genes = r.space.genes();
    let mut path = vec![r.start_theta()];
    path.extend(params_rows(run, &genes, to)?);
    let walk = Walk::new(&path[from as usize..]).expect("from < to leaves two points at least");
    Ok(RunSignals {
        params: signals(&genes, &walk),
        walk,
        to,
        run: r,
    })
}

/// `xqtune params signal`: one line per parameter, then the whole run's verdict.
pub fn run_signal(a: &SignalArgs) -> anyhow::Result<()> {
    let RunSignals {
        params: s,
        walk,
        to,
        run: r,
    } = run_signals(&a.run, a.from, a.to)?;
    let planned = r
        .planned()
        .map_or(String::new(), |p| format!(", {p} planned"));
    crate::outln!(
        "{}: iterations {} to {to} ({} finished{planned})",
        a.run.display(),
        a.from,
        r.finished()
    );
    let width = s.iter().map(|p| p.name.len()).max().unwrap_or(9).max(9);
    crate::outln!(
        "{:width$} {:>10} {:>10} {:>8} {:>8} {:>7}",
        "parameter",
        "from",
        "to",
        "moved",
        "noise",
        "z"
    );
    for p in &s {
        crate::outln!(
            "{:width$} {:>10.2} {:>10.2} {:>+8.2} {:>8.2} {:>+7.2}",
            p.name,
            p.from,
            p.to,
            p.moved,
            p.noise,
            p.z
        );
    }
    let (x, n) = walk.chi_square();
    let big = s.iter().filter(|p| p.z.abs() >= 2.0).count();
    crate::outln!(
        "moved and noise in steps; z = moved / noise, about N(0, 1) for a parameter the games \
         do not feel"
    );
    crate::outln!(
        "sum of z^2 {x:.1} over {n} parameters that moved (a random walk: {n} ± {:.1}); \
         P(at least this) {}, P(at most this) {}",
        (2.0 * n as f64).sqrt(),
        probability(chi_square_upper(x, n)),
        probability(1.0 - chi_square_upper(x, n))
    );
    crate::outln!(
        "|z| >= 2: {big} of {n} (a random walk: {:.1}); a sum well above {n} is a direction the \
         games have found, well below it a pull back toward a point the run circles",
        n as f64 * (1.0 - erf(std::f64::consts::SQRT_2))
    );
    Ok(())
}

/// A probability to three places, or "< 0.001".
fn probability(p: f64) -> String {
    if p < 0.001 {
        "< 0.001".into()
    } else {
        format!("{p:.3}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    fn gene(name: &str, step: i32) -> Gene {
        Gene {
            name: name.into(),
            value: 0,
            min: -1_000_000,
            max: 1_000_000,
            step,
        }
    }

    #[test]
    fn a_straight_path_has_z_sqrt_k_and_a_reversal_cancels() {
        // parameter a: +1 step four times (z = 4 / 2 = 2); b: +3, −3 (back home, z = 0);
        // c never moves; steps of 2 count in units of 2.
        let genes = [gene("a", 1), gene("b", 2), gene("c", 1)];
        let path = vec![
            vec![0.0, 10.0, 5.0],
            vec![1.0, 16.0, 5.0],
            vec![2.0, 10.0, 5.0],
            vec![3.0, 10.0, 5.0],
            vec![4.0, 10.0, 5.0],
        ];
        let walk = Walk::new(&path).unwrap();
        let s = signals(&genes, &walk);
        assert_eq!(
            s,
            vec![
                ParamSignal {
                    name: "a".into(),
                    from: 0.0,
                    to: 4.0,
                    moved: 4.0,
                    noise: 2.0,
                    z: 2.0
                },
                ParamSignal {
                    name: "b".into(),
                    from: 10.0,
                    to: 10.0,
                    moved: 0.0,
                    noise: (72.0f64).sqrt() / 2.0,
                    z: 0.0
                },
                ParamSignal {
                    name: "c".into(),
                    from: 5.0,
                    to: 5.0,
                    moved: 0.0,
                    noise: 0.0,
                    z: 0.0
                },
            ]
        );
        // c never moved: it is not counted
        assert_eq!(walk.chi_square(), (4.0, 2));
    }

    #[test]
    fn chi_square_tail_matches_reference_values() {
        // exact for even n, e^(−x/2) Σ_{j < n/2} (x/2)^j / j!: 0.4703, 0.9803, 0.0100
        assert!((chi_square_upper(40.0, 40) - 0.4703).abs() < 0.005);
        assert!((chi_square_upper(23.8, 40) - 0.9803).abs() < 0.005);
        assert!((chi_square_upper(63.69, 40) - 0.0100).abs() < 0.003);
        assert_eq!(chi_square_upper(5.0, 0), 1.0);
    }

    /// A simulated SPSA: one parameter the result depends on, the rest ignored by it.
    fn simulate(gradient: f64, iterations: usize, seed: u64) -> (Vec<ParamSignal>, Walk) {
        let n = 20;
        let genes: Vec<Gene> = (0..n).map(|i| gene(&format!("p{i:02}"), 1)).collect();
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let mut theta = vec![0.0; n];
        let mut path = vec![theta.clone()];
        for _ in 0..iterations {
            let delta: Vec<f64> = (0..n)
                .map(|_| if rng.r#gen::<bool>() { 1.0 } else { -1.0 })
                .collect();
            // 20 games: each won with probability 0.5 + gradient · Δ_0 (θ+ is better when
            // Δ_0 points up), lost otherwise
            let p = 0.5 + gradient * delta[0];
            let wins = (0..20).filter(|_| rng.r#gen::<f64>() < p).count() as f64;
            let result = 2.0 * wins - 20.0;
            for i in 0..n {
                theta[i] += 0.05 * result * delta[i];
            }
            path.push(theta.clone());
        }
        let walk = Walk::new(&path).unwrap();
        (signals(&genes, &walk), walk)
    }

    /// An engine run's folder (as `tune spsa --engine` leaves it) of one option, `rfp_margin`
    /// from 90 with a step of 10.
    fn run_folder(name: &str, rows: &[&str]) -> PathBuf {
        use crate::tune::theta::tests::{engine_run, option};
        let rfp = crate::tune::engine::EngineOption {
            step: 10,
            ..option("rfp_margin", 90, 20, 400)
        };
        engine_run(&format!("signal-{name}"), vec![rfp], rows, &[0.0])
    }

    #[test]
    fn a_run_folder_is_read_over_any_window_and_bad_windows_are_refused() {
        // 90 -> 100 -> 110 -> 100: steps of one step (10) each
        let d = run_folder("window", &["0,100.000", "1,110.000", "2,100.000"]);
        let RunSignals { params: s, to, .. } = run_signals(&d, 0, None).unwrap();
        assert_eq!(to, 3);
        assert_eq!((s[0].from, s[0].to, s[0].moved), (90.0, 100.0, 1.0));
        assert!((s[0].noise - 3f64.sqrt()).abs() < 1e-12);
        let s = run_signals(&d, 1, Some(2)).unwrap().params;
        assert_eq!((s[0].from, s[0].to, s[0].z), (100.0, 110.0, 1.0));
        let s = run_signals(&d, 0, Some(2)).unwrap().params;
        assert!((s[0].z - 2f64.sqrt()).abs() < 1e-12);
        let e = run_signals(&d, 0, Some(4)).unwrap_err().to_string();
        assert!(e.contains("--to 4") && e.contains("finished 3"), "{e}");
        let e = run_signals(&d, 2, Some(2)).unwrap_err().to_string();
        assert!(e.contains("at least one iteration"), "{e}");
        // a row out of order, or missing
        std::fs::write(d.join("params.csv"), "iteration,rfp_margin\n0,100\n2,110\n").unwrap();
        let e = run_signals(&d, 0, None).unwrap_err().to_string();
        assert!(e.contains("row of iteration 2 is '2,110'"), "{e}");
        std::fs::write(d.join("params.csv"), "iteration,rfp_margin\n0,100\n").unwrap();
        let e = run_signals(&d, 0, None).unwrap_err().to_string();
        assert!(e.contains("no row for iteration 2"), "{e}");
        std::fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn a_real_gradient_stands_out_and_pure_noise_does_not() {
        let (s, walk) = simulate(0.05, 400, 7);
        assert_eq!(s[0].name, "p00");
        assert!(s[0].z > 4.0, "{:?}", s[0]);
        assert!(s[1..].iter().all(|p| p.z.abs() < 3.5), "{s:?}");
        let (x, n) = walk.chi_square();
        assert!(chi_square_upper(x, n) < 0.001, "{x} over {n}");

        let (_, walk) = simulate(0.0, 400, 7);
        let (x, n) = walk.chi_square();
        assert_eq!(n, 20);
        assert!(chi_square_upper(x, n) > 0.01, "{x} over {n}");
    }
}
