//! An SPSA path as running sums: each parameter's start, its latest value and the sum of its
//! squared moves. Its z (net move over the root sum of squared moves) is what
//! [`super::signal`] tests against a random walk's; the tuner keeps one to print that test's
//! Σz² as the run goes.

/// The running sums of a path of θ.
#[derive(Clone, Debug, PartialEq)]
pub struct Walk {
    start: Vec<f64>,
    last: Vec<f64>,
    squares: Vec<f64>,
}

impl Walk {
    /// The walk over `path` (`path[0]` the start, then θ after each iteration); `None` for
    /// an empty path.
    pub fn new(path: &[Vec<f64>]) -> Option<Walk> {
        let mut walk = Walk {
            start: path.first()?.clone(),
            last: path[0].clone(),
            squares: vec![0.0; path[0].len()],
        };
        for theta in &path[1..] {
            walk.push(theta);
        }
        Some(walk)
    }

    /// One more point of the path.
    pub fn push(&mut self, theta: &[f64]) {
        for ((sq, last), &t) in self.squares.iter_mut().zip(&mut self.last).zip(theta) {
            *sq += (t - *last).powi(2);
            *last = t;
        }
    }

    /// Where the path started and where it stands now.
    pub fn ends(&self) -> (&[f64], &[f64]) {
        (&self.start, &self.last)
    }

    /// Parameter `i`'s net move and the root sum of its squared moves, in its own units.
    pub fn moved_and_noise(&self, i: usize) -> (f64, f64) {
        (self.last[i] - self.start[i], self.squares[i].sqrt())
    }

    /// Parameter `i`'s z: net move over noise (0 for a parameter that never moved).
    pub fn z(&self, i: usize) -> f64 {
        match self.moved_and_noise(i) {
            (moved, noise) if noise > 0.0 => moved / noise,
            _ => 0.0,
        }
    }

    /// Σz² over the parameters that moved, and how many they are.
    pub fn chi_square(&self) -> (f64, usize) {
        let moved: Vec<usize> = (0..self.start.len())
            .filter(|&i| self.squares[i] > 0.0)
            .collect();
        (
            moved.iter().fold(0.0, |x, &i| x + self.z(i).powi(2)),
            moved.len(),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn running_sums_match_the_whole_path() {
        // Parameter 0 walks +1, +1, −1 (net 1, noise √3); 1 goes +2 and stays (net 2,
        // noise 2); 2 never moves.
        let path = vec![
            vec![0.0, 5.0, 7.0],
            vec![1.0, 7.0, 7.0],
            vec![2.0, 7.0, 7.0],
            vec![1.0, 7.0, 7.0],
        ];
        let w = Walk::new(&path).unwrap();
        assert_eq!(w.moved_and_noise(0), (1.0, 3f64.sqrt()));
        assert_eq!(w.moved_and_noise(1), (2.0, 2.0));
        assert_eq!((w.z(1), w.z(2)), (1.0, 0.0));
        let (x, n) = w.chi_square();
        assert_eq!(n, 2);
        assert!((x - (1.0 / 3.0 + 1.0)).abs() < 1e-12, "{x}");
        let mut step = Walk::new(&path[..1]).unwrap();
        for t in &path[1..] {
            step.push(t);
        }
        assert_eq!(step, w);
        assert_eq!(w.ends(), (&path[0][..], &path[3][..]));
        assert_eq!(Walk::new(&[]), None);
        // Nothing moved: a plain zero, not the -0.0 of an empty sum.
        let (x, n) = Walk::new(&path[..1]).unwrap().chi_square();
        assert_eq!((x, n), (0.0, 0));
        assert!(x.is_sign_positive());
    }
}
