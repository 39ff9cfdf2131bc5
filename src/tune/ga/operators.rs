//! The genetic operators and one generation: the initial spread around the start,
//! tournament selection, uniform and blend crossover, Gaussian mutation (per gene or per group
//! of genes), and the Srinivas-Patnaik adaptive rates that [`ga_step`] applies.

use super::{CrossoverKind, GaSettings, GaState, Individual};
use crate::tune::space::Gene;
use crate::util::mix;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// The GA's knobs as the operators read them ([`GaSettings`], clamped), apart from the CLI so
/// tests can drive the GA on synthetic fitness.
#[derive(Clone, Debug)]
pub struct GaConfig {
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

impl GaConfig {
    pub fn from_settings(a: &GaSettings) -> GaConfig {
        GaConfig {
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
    p: &GaConfig,
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
pub fn adaptive_pc(f: f64, f_max: f64, f_avg: f64, p: &GaConfig) -> f64 {
    if f >= f_avg && f_max - f_avg > 1e-12 {
        p.pc_max * ((f_max - f) / (f_max - f_avg)).clamp(0.0, 1.0)
    } else {
        p.pc_max
    }
}

/// Srinivas-Patnaik per-gene mutation probability for an individual of fitness `f`.
pub fn adaptive_pm(f: f64, f_max: f64, f_avg: f64, p: &GaConfig) -> f64 {
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
/// then breeds the next generation. Deterministic in (state, seed). A fitness error leaves
/// `state` as it was.
pub fn ga_step<F, E>(
    state: &mut GaState,
    genes: &[Gene],
    p: &GaConfig,
    seed: u64,
    fitness: F,
) -> Result<GenStats, E>
where
    F: FnOnce(u64, &[Vec<i32>]) -> Result<Vec<f64>, E>,
{
    let generation = state.generation;
    let groups = gene_groups(genes);
    let genomes: Vec<Vec<i32>> = state.population.iter().map(|i| i.genes.clone()).collect();
    let fit_now = fitness(generation, &genomes)?;
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
    Ok(GenStats {
        generation,
        best: f_max,
        mean: f_avg,
        worst: f_min,
        pc_mean: pc_sum / c,
        pm_mean: pm_sum / c,
    })
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::tune::space::{ParamSet, Space, SpaceKind};

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

    fn params() -> GaConfig {
        GaConfig {
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
        let space = Space::new(ParamSet::default_of(SpaceKind::Eval), "").unwrap();
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

    pub(crate) fn grouped_genes() -> (Vec<Gene>, Vec<usize>) {
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
            let st = ga_step(&mut state, &gs, &p, 5, |g, pop| Ok::<_, ()>(fit(g, pop))).unwrap();
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
                ga_step(&mut s, &gs, &p, seed, |g, pop| Ok::<_, ()>(fit(g, pop))).unwrap();
            }
            s
        };
        assert_eq!(run(9), run(9));
        assert_ne!(run(9), run(10));
    }
}
