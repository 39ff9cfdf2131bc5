//! The parameter space a tuner works in: the flat view ([`ParamList`]) of either the
//! evaluation parameters or the search parameters, restricted to the names selected with
//! `--only`. Table symmetry is kept by construction: the evaluation stores its position tables
//! half-width (Pikafish-HCE `psqt.cpp` style) and mirrors them, so a tuner only ever sees one
//! gene per mirrored pair of squares. Parameters whose bounds leave no room (`min == max`) are
//! fixed values, not genes (unreachable squares are declared that way).

use super::TuneError;
use super::engine::OptionSet;
use crate::eval::EvalParams;
use crate::play::Engine;
use crate::search::{EngineOptions, SearchParams};
use crate::tunable::{ParamList, ParamsError};
use serde::{Deserialize, Serialize};
use std::path::Path;

/// Which parameter file a run tunes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum SpaceKind {
    /// Evaluation parameters (params/xiangqi.json).
    Eval,
    /// Search parameters (params/search.json).
    Search,
    /// The spin options of an external engine (`--engine`; not a `--space` value).
    #[value(skip)]
    Engine,
}

/// One tunable number with its bounds and step, independent of which file it came from.
pub use crate::tunable::ParamSpec as Gene;

/// A full parameter set of either kind.
#[derive(Clone, Debug, PartialEq)]
pub enum ParamSet {
    Eval(EvalParams),
    /// Boxed: the search constants outgrew the other variants several times over.
    Search(Box<SearchParams>),
    /// An external engine's tuned options.
    Engine(OptionSet),
}

impl ParamSet {
    /// The embedded defaults of `kind`.
    pub fn default_of(kind: SpaceKind) -> ParamSet {
        match kind {
            SpaceKind::Eval => ParamSet::Eval(EvalParams::default()),
            SpaceKind::Search => ParamSet::Search(Box::default()),
            // An engine's options come from the engine: no defaults without one.
            SpaceKind::Engine => ParamSet::Engine(OptionSet::default()),
        }
    }

    pub fn load(kind: SpaceKind, path: &Path) -> Result<ParamSet, TuneError> {
        let err = |e: ParamsError| TuneError::Params(format!("{}: {e}", path.display()));
        Ok(match kind {
            SpaceKind::Eval => ParamSet::Eval(EvalParams::load(path).map_err(err)?),
            SpaceKind::Search => ParamSet::Search(Box::new(SearchParams::load(path).map_err(err)?)),
            SpaceKind::Engine => ParamSet::Engine(OptionSet::load(path)?),
        })
    }

    pub fn kind(&self) -> SpaceKind {
        match self {
            ParamSet::Eval(_) => SpaceKind::Eval,
            ParamSet::Search(_) => SpaceKind::Search,
            ParamSet::Engine(_) => SpaceKind::Engine,
        }
    }

    /// The set as a flat list of tunable numbers, whichever its kind.
    fn list(&self) -> &dyn ParamList {
        match self {
            ParamSet::Eval(p) => p,
            ParamSet::Search(p) => p.as_ref(),
            ParamSet::Engine(p) => p,
        }
    }

    pub fn genes(&self) -> Vec<Gene> {
        self.list().specs()
    }

    pub fn to_vec(&self) -> Vec<i32> {
        self.list().to_vec()
    }

    pub fn from_vec(&self, v: &[i32]) -> ParamSet {
        match self {
            ParamSet::Eval(p) => ParamSet::Eval(p.from_vec(v)),
            ParamSet::Search(p) => ParamSet::Search(Box::new(p.from_vec(v))),
            ParamSet::Engine(p) => ParamSet::Engine(p.from_vec(v)),
        }
    }

    pub fn to_json_string(&self) -> String {
        self.list().to_json_string()
    }

    /// The engine that plays with this set (the other half at its defaults / `other`).
    pub fn engine(&self, name: &str, other: &ParamSet) -> crate::play::EngineConfig {
        use std::sync::Arc;
        let (eval, search) = match (self, other) {
            (ParamSet::Eval(e), ParamSet::Search(s)) | (ParamSet::Search(s), ParamSet::Eval(e)) => {
                (e.clone(), **s)
            }
            (ParamSet::Eval(e), _) => (e.clone(), SearchParams::default()),
            (ParamSet::Search(s), _) => (EvalParams::default(), **s),
            (ParamSet::Engine(_), _) => (EvalParams::default(), SearchParams::default()),
        };
        crate::play::EngineConfig {
            name: name.to_string(),
            eval: Arc::new(eval),
            search,
            options: EngineOptions::default(),
            // The tuners tune the classical evaluation.
            network: None,
        }
    }

    /// The match runner's engine playing with this set: xqtune in-process, or the external
    /// engine with these option values.
    pub fn player(&self, name: &str, other: &ParamSet) -> Result<Engine, TuneError> {
        Ok(match self {
            ParamSet::Engine(set) => Engine::External(set.external(name)?),
            _ => Engine::Internal(self.engine(name, other)),
        })
    }
}

/// Does `name` match a `--only` pattern? `*` matches any run of characters, `?` one character;
/// a pattern without wildcards matches the name itself and everything under it
/// (`pst.rook` matches `pst.rook.mg.12`).
pub fn glob_match(pattern: &str, name: &str) -> bool {
    if !pattern.contains(['*', '?']) {
        return name == pattern
            || (name.starts_with(pattern) && name[pattern.len()..].starts_with('.'));
    }
    let p: Vec<char> = pattern.chars().collect();
    let n: Vec<char> = name.chars().collect();
    // Iterative wildcard match with backtracking to the last star.
    let (mut pi, mut ni) = (0usize, 0usize);
    let mut star: Option<(usize, usize)> = None;
    while ni < n.len() {
        if pi < p.len() && (p[pi] == '?' || p[pi] == n[ni]) {
            pi += 1;
            ni += 1;
        } else if pi < p.len() && p[pi] == '*' {
            star = Some((pi, ni));
            pi += 1;
        } else if let Some((sp, sn)) = star {
            pi = sp + 1;
            ni = sn + 1;
            star = Some((sp, sn + 1));
        } else {
            return false;
        }
    }
    while pi < p.len() && p[pi] == '*' {
        pi += 1;
    }
    pi == p.len()
}

/// The selected genes of a parameter set: what a tuner varies, and how to rebuild a full set.
#[derive(Clone, Debug)]
pub struct Space {
    pub base: ParamSet,
    /// Every parameter of `base` in flat order.
    pub all: Vec<Gene>,
    /// Indices into `all` of the tuned parameters.
    pub selected: Vec<usize>,
}

impl Space {
    /// Selects by comma-separated glob patterns (`pst.rook,material.*`); empty selects every
    /// parameter except the Jieqi ones (`jieqi.*`, selected only by name).
    /// A pattern that matches nothing is an error naming it (a typo must not tune nothing).
    pub fn new(base: ParamSet, only: &str) -> Result<Space, TuneError> {
        let all = base.genes();
        let patterns: Vec<&str> = only
            .split(',')
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .collect();
        for p in &patterns {
            if !all.iter().any(|g| glob_match(p, &g.name)) {
                return Err(TuneError::Space(format!(
                    "--only pattern '{p}' matches no parameter (names look like '{}')",
                    all.first()
                        .map(|g| g.name.as_str())
                        .unwrap_or("material.rook")
                )));
            }
        }
        let selected: Vec<usize> = all
            .iter()
            .enumerate()
            .filter(|(_, g)| g.min < g.max)
            // By default every Xiangqi parameter: the Jieqi tables (`jieqi.*`) play no part in
            // the Xiangqi games the fitness comes from, so they are tuned only when named.
            .filter(|(_, g)| {
                if patterns.is_empty() {
                    // (an engine's set holds only the options chosen for the run)
                    matches!(base, ParamSet::Engine(_)) || !g.name.starts_with("jieqi.")
                } else {
                    patterns.iter().any(|p| glob_match(p, &g.name))
                }
            })
            .map(|(i, _)| i)
            .collect();
        if selected.is_empty() {
            return Err(TuneError::Space(format!(
                "no tunable parameter selected (space has {} parameters, --only '{only}')",
                all.len()
            )));
        }
        Ok(Space {
            base,
            all,
            selected,
        })
    }

    pub fn len(&self) -> usize {
        self.selected.len()
    }

    pub fn is_empty(&self) -> bool {
        self.selected.is_empty()
    }

    /// The selected genes (bounds and steps) in order.
    pub fn genes(&self) -> Vec<Gene> {
        self.selected.iter().map(|&i| self.all[i].clone()).collect()
    }

    /// Current values of the selected parameters in `base`.
    pub fn values(&self) -> Vec<i32> {
        self.selected.iter().map(|&i| self.all[i].value).collect()
    }

    /// SPSA's (c_end, r_end) of each selected parameter where its set gives them (an engine's
    /// parameter file); `None` where the step decides.
    pub fn ends(&self) -> Vec<Option<(f64, f64)>> {
        self.selected
            .iter()
            .map(|&i| match &self.base {
                ParamSet::Engine(set) => {
                    let o = &set.options[i];
                    o.c_end.zip(o.r_end)
                }
                _ => None,
            })
            .collect()
    }

    /// Clamps each value to its bounds.
    pub fn clamp(&self, v: &[i32]) -> Vec<i32> {
        v.iter()
            .zip(&self.selected)
            .map(|(&x, &i)| self.all[i].clamp(x))
            .collect()
    }

    /// The full vector of `base` with the selected entries replaced (clamped).
    pub fn full_vec(&self, v: &[i32]) -> Vec<i32> {
        let mut full = self.base.to_vec();
        for (&x, &i) in v.iter().zip(&self.selected) {
            full[i] = self.all[i].clamp(x);
        }
        full
    }

    /// The full parameter set with the selected entries replaced (clamped).
    pub fn apply(&self, v: &[i32]) -> ParamSet {
        self.base.from_vec(&self.full_vec(v))
    }

    /// Rounds and clamps a real-valued point (SPSA, Texel) to integer genes.
    pub fn round(&self, v: &[f64]) -> Vec<i32> {
        v.iter()
            .zip(&self.selected)
            .map(|(&x, &i)| self.all[i].clamp(x.round() as i32))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn glob_patterns() {
        assert!(glob_match("material.*", "material.rook"));
        assert!(glob_match("pst.rook", "pst.rook.mg.12"));
        assert!(!glob_match("pst.rook", "pst.rookie.mg.1"));
        assert!(!glob_match("pst.rook", "pst.knight.mg.1"));
        assert!(glob_match("pst.*.eg.*", "pst.rook.eg.3"));
        assert!(!glob_match("pst.*.eg.*", "pst.rook.mg.3"));
        assert!(glob_match("*", "anything"));
        assert!(glob_match("material.r?ok", "material.rook"));
        assert!(glob_match("*.rook", "material.rook"));
        assert!(!glob_match("*.rook", "material.rook.mg"));
    }

    #[test]
    fn selection_and_clamping() {
        let base = ParamSet::default_of(SpaceKind::Eval);
        let all = Space::new(base.clone(), "").unwrap();
        let tunable = |g: &Gene| g.min < g.max;
        let n_xiangqi = base
            .genes()
            .iter()
            .filter(|g| tunable(g) && !g.name.starts_with("jieqi."))
            .count();
        assert_eq!(all.len(), n_xiangqi, "default: every Xiangqi parameter");
        assert!(all.genes().iter().all(|g| !g.name.starts_with("jieqi.")));
        let jieqi = Space::new(base.clone(), "jieqi.*").unwrap();
        let n_jieqi = base
            .genes()
            .iter()
            .filter(|g| tunable(g) && g.name.starts_with("jieqi."))
            .count();
        assert!(n_jieqi > 0);
        assert_eq!(jieqi.len(), n_jieqi, "Jieqi parameters when named");
        let name = base.genes()[1].name.clone();
        let one = Space::new(base.clone(), &name).unwrap();
        assert_eq!(one.len(), 1);
        assert_eq!(one.selected, vec![1]);
        let g = &one.genes()[0];
        assert_eq!(one.clamp(&[g.max + 1000]), vec![g.max]);
        assert_eq!(one.clamp(&[g.min - 1000]), vec![g.min]);
        // apply replaces only the selected entry, clamped, and keeps the rest
        let full = one.full_vec(&[g.max + 5]);
        let mut expect = base.to_vec();
        expect[1] = g.max;
        assert_eq!(full, expect);
        assert_eq!(one.apply(&[g.max + 5]).to_vec(), expect);
        assert_eq!(one.round(&[g.min as f64 - 0.7]), vec![g.min]);
        // a typo is an error that names the pattern
        let e = Space::new(base, "material.*,nosuch.thing").unwrap_err();
        assert!(e.to_string().contains("nosuch.thing"), "{e}");
    }
}
