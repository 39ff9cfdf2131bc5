//! Where a search's nodes go: counters of the main search's decisions (cut-offs, extensions,
//! reductions, null moves), read by `xqtune bench --stats` to compare tree shapes. They count,
//! they never steer: the search is the same with or without anyone reading them.

use std::fmt;
use std::ops::AddAssign;

/// Counters of one search (or a sum of searches).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TreeStats {
    /// Nodes of the main search (depth > 0) that were entered.
    pub main_nodes: u64,
    /// Quiescence nodes entered.
    pub qs_nodes: u64,
    /// Quiet checks searched at the first ply of quiescence (`qs_checks`).
    pub qs_checks: u64,
    /// Main-search nodes that returned on a transposition-table cut-off.
    pub tt_cuts: u64,
    /// Main-search nodes whose move loop ended with a beta cut-off.
    pub fail_highs: u64,
    /// Of those, the cut-offs by the first move searched.
    pub first_move_fail_highs: u64,
    /// Main-search nodes whose move loop ended without a move raising alpha.
    pub fail_lows: u64,
    /// Moves searched in main-search nodes (chance moves included).
    pub moves_searched: u64,
    /// Moves extended for giving check.
    pub check_extensions: u64,
    /// TT moves extended by the singular test (one ply or two).
    pub singular_extensions: u64,
    /// Of those, the double extensions.
    pub double_extensions: u64,
    /// TT moves reduced by the singular test (not singular while expected to cut).
    pub negative_extensions: u64,
    /// Nodes cut by the singular test's multi-cut.
    pub multi_cuts: u64,
    /// Null-move searches, and those that cut.
    pub null_tries: u64,
    pub null_cuts: u64,
    /// ProbCut: nodes that tried it, and nodes it cut.
    pub probcut_tries: u64,
    pub probcut_cuts: u64,
    /// Moves searched with a late-move reduction, and those re-searched at full depth.
    pub reduced: u64,
    pub re_searched: u64,
}

impl AddAssign for TreeStats {
    fn add_assign(&mut self, o: TreeStats) {
        self.main_nodes += o.main_nodes;
        self.qs_nodes += o.qs_nodes;
        self.qs_checks += o.qs_checks;
        self.tt_cuts += o.tt_cuts;
        self.fail_highs += o.fail_highs;
        self.first_move_fail_highs += o.first_move_fail_highs;
        self.fail_lows += o.fail_lows;
        self.moves_searched += o.moves_searched;
        self.check_extensions += o.check_extensions;
        self.singular_extensions += o.singular_extensions;
        self.double_extensions += o.double_extensions;
        self.negative_extensions += o.negative_extensions;
        self.multi_cuts += o.multi_cuts;
        self.null_tries += o.null_tries;
        self.null_cuts += o.null_cuts;
        self.probcut_tries += o.probcut_tries;
        self.probcut_cuts += o.probcut_cuts;
        self.reduced += o.reduced;
        self.re_searched += o.re_searched;
    }
}

/// `part / whole` in percent (0 for an empty whole).
fn percent(part: u64, whole: u64) -> f64 {
    if whole == 0 {
        0.0
    } else {
        100.0 * part as f64 / whole as f64
    }
}

impl fmt::Display for TreeStats {
    /// The report `xqtune bench --stats` prints: counts, and the rates engine authors compare.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let TreeStats {
            main_nodes: main,
            moves_searched: moves,
            ..
        } = *self;
        writeln!(f, "{:<22}{main:>12}", "main-search nodes")?;
        let per_node = moves as f64 / main.max(1) as f64;
        writeln!(
            f,
            "{:<22}{moves:>12}  {per_node:.2} a node",
            "moves searched"
        )?;
        // One line a counter: its name, its count, and its share of what it is a part of.
        let mut row = |name: &str, n: u64, whole: u64, of: &str| {
            writeln!(f, "{name:<22}{n:>12}  {:5.1} % of {of}", percent(n, whole))
        };
        let all = main + self.qs_nodes;
        let searched = "moves searched";
        row("quiescence nodes", self.qs_nodes, all, "all nodes")?;
        let qs = self.qs_nodes;
        row("quiescence checks", self.qs_checks, qs, "quiescence nodes")?;
        row("TT cut-offs", self.tt_cuts, main, "main nodes")?;
        row("fail-high nodes", self.fail_highs, main, "main nodes")?;
        let (first, highs) = (self.first_move_fail_highs, self.fail_highs);
        row("first-move cut-offs", first, highs, "fail-highs")?;
        row("fail-low nodes", self.fail_lows, main, "main nodes")?;
        row("check extensions", self.check_extensions, moves, searched)?;
        let singular = self.singular_extensions;
        row("singular extensions", singular, moves, searched)?;
        let (cuts, tries) = (self.null_cuts, self.null_tries);
        row("null-move cut-offs", cuts, tries, "null-move tries")?;
        let (cuts, tries) = (self.probcut_cuts, self.probcut_tries);
        row("ProbCut cut-offs", cuts, tries, "ProbCut tries")?;
        row("reduced moves", self.reduced, moves, searched)?;
        let (again, reduced) = (self.re_searched, self.reduced);
        row("re-searched", again, reduced, "reduced moves")?;
        write!(
            f,
            "{:<22}{:>12}  double {}, negative {}",
            "multi-cuts", self.multi_cuts, self.double_extensions, self.negative_extensions
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sums_add_every_counter_and_the_report_names_the_rates() {
        let one = TreeStats {
            main_nodes: 10,
            qs_nodes: 30,
            fail_highs: 4,
            first_move_fail_highs: 3,
            reduced: 8,
            re_searched: 2,
            ..Default::default()
        };
        let mut sum = one;
        sum += one;
        assert_eq!(sum.main_nodes, 20);
        assert_eq!(sum.qs_nodes, 60);
        assert_eq!(sum.first_move_fail_highs, 6);
        let text = sum.to_string();
        assert!(text.contains("75.0 % of all nodes"), "{text}");
        assert!(text.contains("75.0 % of fail-highs"), "{text}");
        assert!(text.contains("25.0 % of reduced moves"), "{text}");
        // Empty counters report zero rates, not NaN.
        assert!(!TreeStats::default().to_string().contains("NaN"));
    }
}
