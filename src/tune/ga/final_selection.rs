//! The final selection: the GA's fitness of its best individuals is biased upwards (the
//! winner's curse), so the fittest distinct genomes of the last generation and the centroid of
//! its better half are scored again on fresh games before one is named best.

use super::Individual;
use crate::tune::files;
use crate::tune::space::Gene;
use serde::{Deserialize, Serialize};

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
pub fn final_pick<E>(
    mut candidates: Vec<Candidate>,
    games: usize,
    fitness: impl FnOnce(&[Vec<i32>]) -> Result<Vec<f64>, E>,
) -> Result<FinalPick, E> {
    let genomes: Vec<Vec<i32>> = candidates.iter().map(|c| c.genes.clone()).collect();
    let scores = fitness(&genomes)?;
    for (c, s) in candidates.iter_mut().zip(scores) {
        c.score = s;
    }
    let mut chosen = 0;
    for i in 1..candidates.len() {
        if candidates[i].score > candidates[chosen].score {
            chosen = i;
        }
    }
    Ok(FinalPick {
        games,
        candidates,
        chosen,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tune::ga::operators::tests::grouped_genes;

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
            Ok::<_, ()>(
                g.iter()
                    .map(|x| 1.0 - (x[0] - 4).abs() as f64 / 10.0)
                    .collect(),
            )
        })
        .unwrap();
        assert_eq!(pick.chosen, 1);
        assert_eq!(pick.candidates[1].genes, vec![4; 7]);
        assert_eq!(pick.candidates[0].score, 0.4);
    }
}
