//! The session's options: the `option` lines of the handshake, `setoption`, and with
//! `--tune-options` every tunable parameter as a `spin` option (as a Stockfish `TUNE()` build
//! offers them), with [`tune_lines`] for the tuners that read such a build's list.

use super::protocol::Protocol;
use super::{DEFAULT_HASH_MB, MAX_HASH_MB, Session};
use crate::core::{Position, Variant};
use crate::eval::EvalParams;
use crate::eval::nnue::{Network, Networks, NnueError};
use crate::search::smp::MAX_THREADS;
use crate::search::time::{MAX_MOVE_OVERHEAD_MS, MOVE_OVERHEAD_MS};
use crate::search::{SearchParams, Skill};
use crate::tunable::ParamSpec;
use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;

/// Every tunable number as a UCI `spin` option: the flat view of the evaluation parameters
/// (Xiangqi, then Jieqi terms) followed by the search parameters, under their flat names. The
/// list is [`crate::tunable::ParamList::specs`] itself, so a new parameter becomes an option with no second
/// declaration.
pub(super) struct TuneOptions {
    /// Current values and bounds: evaluation specs, then search specs.
    specs: Vec<ParamSpec>,
    /// How many of `specs` are evaluation parameters.
    n_eval: usize,
    /// Lower-case name -> index in `specs` (UCI option names are case-insensitive).
    index: HashMap<String, usize>,
}

impl TuneOptions {
    fn new(eval: &EvalParams, search: &SearchParams) -> TuneOptions {
        let mut specs = eval.specs();
        let n_eval = specs.len();
        specs.extend(search.specs());
        let index = specs
            .iter()
            .enumerate()
            .map(|(i, s)| (s.name.to_ascii_lowercase(), i))
            .collect();
        TuneOptions {
            specs,
            n_eval,
            index,
        }
    }
}

/// The six-field lines a Stockfish `TUNE()` build prints at start-up, one per parameter:
/// `name,value,min,max,c_end,r_end`. c_end and r_end are what in-process `tune spsa` derives
/// from each parameter's declared step with its default `--c-end` and `--lr`
/// ([`ParamSpec::spsa_ends`]), printed exactly (shortest round-trip decimals): UCI reports
/// bounds but no step, so this file is how an external run on xqtune gets the same schedule,
/// and with it the same games, as the in-process run.
pub fn tune_lines(eval: &EvalParams, search: &SearchParams) -> String {
    use crate::tunable::{SPSA_C_END_STEPS, SPSA_LR};
    let mut out = String::new();
    for s in eval.specs().into_iter().chain(search.specs()) {
        let (c_end, r_end) = s.spsa_ends(SPSA_C_END_STEPS, SPSA_LR);
        out.push_str(&format!(
            "{},{},{},{},{c_end},{r_end}\n",
            s.name, s.value, s.min, s.max
        ));
    }
    out
}

impl Session {
    /// The `option` lines of the handshake, in the session's dialect: the engine's own options,
    /// then the tunable parameters if they are offered.
    pub(super) fn say_options(&self) {
        match self.protocol {
            Protocol::Uci => {
                self.say(&format!(
                    "option name Hash type spin default {DEFAULT_HASH_MB} min 1 max {MAX_HASH_MB}"
                ));
                self.say(&format!(
                    "option name Threads type spin default 1 min 1 max {MAX_THREADS}"
                ));
                self.say(&format!(
                    "option name Move Overhead type spin default {MOVE_OVERHEAD_MS} min 0 max {MAX_MOVE_OVERHEAD_MS}"
                ));
                self.say("option name Clear Hash type button");
                self.say("option name ParamsFile type string default <empty>");
                self.say("option name SearchParamsFile type string default <empty>");
                self.say("option name EvalFile type string default <empty>");
                self.say(&format!(
                    "option name Use NNUE type check default {}",
                    !Networks::embedded().is_empty()
                ));
                self.say(
                    "option name Skill type combo default expert var easy var medium var hard var expert",
                );
                self.say(
                    "option name UCI_Variant type combo default xiangqi var xiangqi var jieqi",
                );
            }
            Protocol::Ucci => {
                self.say(&format!(
                    "option hashsize type spin min 1 max {MAX_HASH_MB} default {DEFAULT_HASH_MB}"
                ));
                self.say(&format!(
                    "option threads type spin min 1 max {MAX_THREADS} default 1"
                ));
                self.say(&format!(
                    "option moveoverhead type spin min 0 max {MAX_MOVE_OVERHEAD_MS} default {MOVE_OVERHEAD_MS}"
                ));
                self.say("option usemillisec type check default false");
                self.say("option paramsfile type string default <empty>");
                self.say("option searchparamsfile type string default <empty>");
                self.say("option evalfile type string default <empty>");
                self.say(&format!(
                    "option usennue type check default {}",
                    !Networks::embedded().is_empty()
                ));
                self.say("option skill type combo var easy var medium var hard var expert default expert");
            }
        }
        self.say_tune_options();
    }

    /// Offers every evaluation and search parameter as a `spin` option (`--tune-options`).
    pub fn with_tune_options(mut self) -> Session {
        let s = self.lock_searcher();
        let tune = TuneOptions::new(&s.eval, &s.params);
        drop(s);
        self.tune = Some(tune);
        self
    }

    /// The `option` lines of the tunable parameters, in the session's dialect.
    fn say_tune_options(&self) {
        let Some(t) = &self.tune else { return };
        for s in &t.specs {
            self.say(&match self.protocol {
                Protocol::Uci => format!(
                    "option name {} type spin default {} min {} max {}",
                    s.name, s.value, s.min, s.max
                ),
                Protocol::Ucci => format!(
                    "option {} type spin min {} max {} default {}",
                    s.name, s.min, s.max, s.value
                ),
            });
        }
    }

    /// `setoption` of a tunable parameter: `Ok(false)` when `name` is not one. Clearing the
    /// tables waits for the next `ucinewgame` or `go`, so that a tuner setting hundreds of
    /// options clears them once.
    fn set_tune_option(&mut self, name: &str, value: &str) -> Result<bool, String> {
        let Some(t) = &mut self.tune else {
            return Ok(false);
        };
        let Some(&i) = t.index.get(&name.to_ascii_lowercase()) else {
            return Ok(false);
        };
        let spec = &mut t.specs[i];
        let v: i32 = value
            .trim()
            .parse()
            .map_err(|_| format!("option {}: '{value}' is not an integer", spec.name))?;
        if !(spec.min..=spec.max).contains(&v) {
            return Err(format!(
                "option {}: {v} outside {}..{}",
                spec.name, spec.min, spec.max
            ));
        }
        spec.value = v;
        let values: Vec<i32> = t.specs.iter().map(|s| s.value).collect();
        let n_eval = t.n_eval;
        let mut s = self.lock_searcher();
        if i < n_eval {
            let eval = s.eval.from_vec(&values[..n_eval]);
            s.eval = Arc::new(eval);
            drop(s);
            self.eval_changed = true;
        } else {
            s.params = s.params.from_vec(&values[n_eval..]);
        }
        Ok(true)
    }

    /// After a parameter file replaced a set: the options show its values and bounds.
    fn refresh_tune_options(&mut self) {
        if self.tune.is_some() {
            let s = self.lock_searcher();
            let tune = TuneOptions::new(&s.eval, &s.params);
            drop(s);
            self.tune = Some(tune);
        }
    }
    /// Gives the searcher the networks if `Use NNUE` is on (none otherwise); the tables are
    /// cleared before the next search when that changes the evaluation.
    pub(super) fn apply_network(&mut self) {
        let wanted = if self.use_nnue {
            self.networks.clone()
        } else {
            Networks::none()
        };
        let mut s = self.lock_searcher();
        let before = s.networks().hashes();
        s.set_networks(&wanted);
        let changed = s.networks().hashes() != before;
        drop(s);
        self.eval_changed |= changed;
    }

    /// `EvalFile`: loads a network file into its variant's place (its feature set says which;
    /// empty: the embedded networks, if any). A file that does not load is an error naming it
    /// and what is wrong, and the previous networks stay.
    fn set_eval_file(&mut self, value: &str) -> Result<(), String> {
        let (loaded, shown) = if value.is_empty() {
            let embedded = Networks::embedded();
            let shown: Vec<Arc<Network>> = [Variant::Xiangqi, Variant::Jieqi]
                .into_iter()
                .filter_map(|v| embedded.get(v).cloned())
                .collect();
            (embedded, shown)
        } else {
            let net = Network::load(Path::new(value)).map_err(|e| match e {
                // The I/O error names the file itself.
                NnueError::Io { .. } => format!("EvalFile: {e}"),
                _ => format!("EvalFile '{value}': {e}"),
            })?;
            let net = Arc::new(net);
            (self.networks.clone().with(net.clone()), vec![net])
        };
        for n in &shown {
            let a = n.architecture();
            self.say(&format!(
                "info string EvalFile: {} for {} ({:?}, hidden {}, {} buckets, {:?}, hash {:016x}): {}",
                if value.is_empty() { "embedded" } else { value },
                n.variant(),
                a.feature_set,
                a.hidden,
                a.buckets,
                a.activation,
                n.hash(),
                n.description()
            ));
        }
        if loaded.is_empty() {
            if self.use_nnue {
                self.say("info string EvalFile: no network (none embedded); Use NNUE is now false");
            }
            self.use_nnue = false;
        }
        self.networks = loaded;
        self.apply_network();
        Ok(())
    }

    /// `Use NNUE`: whether positions are evaluated with the loaded networks.
    fn set_use_nnue(&mut self, name: &str, value: &str) -> Result<(), String> {
        let on = match value.to_ascii_lowercase().as_str() {
            "true" | "on" => true,
            "false" | "off" => false,
            _ => return Err(format!("option {name}: '{value}' is not true/false")),
        };
        if on && self.networks.is_empty() {
            return Err(format!(
                "option {name}: no network is loaded (set EvalFile to a network file first); \
                 the classical evaluation stays"
            ));
        }
        self.use_nnue = on;
        self.apply_network();
        Ok(())
    }

    pub(super) fn cmd_setoption(&mut self, rest: &str) -> Result<(), String> {
        // UCI: `name <name words> [value <value words>]`; UCCI: `<name> <value>`.
        let (name, value) = if let Some(r) = rest.strip_prefix("name ") {
            match r.find(" value ") {
                Some(i) => (r[..i].trim().to_string(), r[i + 7..].trim().to_string()),
                None => (
                    r.trim().trim_end_matches(" value").to_string(),
                    String::new(),
                ),
            }
        } else {
            let mut it = rest.splitn(2, char::is_whitespace);
            let n = it.next().unwrap_or("").to_string();
            (n, it.next().unwrap_or("").trim().to_string())
        };
        if name.is_empty() {
            return Err("setoption needs an option name".into());
        }
        let value = if value == "<empty>" {
            String::new()
        } else {
            value
        };
        match name.to_ascii_lowercase().as_str() {
            "hash" | "hashsize" => {
                let mb: usize = value
                    .parse()
                    .map_err(|_| format!("option {name}: '{value}' is not a number of MB"))?;
                if !(1..=MAX_HASH_MB).contains(&mb) {
                    return Err(format!("option {name}: {mb} outside 1..{MAX_HASH_MB}"));
                }
                self.lock_searcher().resize_hash(mb);
            }
            "threads" => {
                let n: usize = value
                    .parse()
                    .map_err(|_| format!("option {name}: '{value}' is not a number of threads"))?;
                if !(1..=MAX_THREADS).contains(&n) {
                    return Err(format!("option {name}: {n} outside 1..{MAX_THREADS}"));
                }
                self.lock_searcher().set_threads(n);
            }
            "move overhead" | "moveoverhead" => {
                let ms: u64 = value
                    .parse()
                    .map_err(|_| format!("option {name}: '{value}' is not a number of ms"))?;
                if ms > MAX_MOVE_OVERHEAD_MS {
                    return Err(format!(
                        "option {name}: {ms} outside 0..{MAX_MOVE_OVERHEAD_MS}"
                    ));
                }
                self.move_overhead_ms = ms;
            }
            "clear hash" => self.lock_searcher().new_game(),
            "paramsfile" => {
                let p = if value.is_empty() {
                    EvalParams::default()
                } else {
                    EvalParams::load(Path::new(&value))
                        .map_err(|e| format!("ParamsFile '{value}': {e}"))?
                };
                let mut s = self.lock_searcher();
                s.eval = Arc::new(p);
                s.new_game();
                drop(s);
                self.refresh_tune_options();
            }
            "searchparamsfile" => {
                let p = if value.is_empty() {
                    SearchParams::default()
                } else {
                    SearchParams::load(Path::new(&value))
                        .map_err(|e| format!("SearchParamsFile '{value}': {e}"))?
                };
                self.lock_searcher().params = p;
                self.refresh_tune_options();
            }
            "evalfile" => self.set_eval_file(&value)?,
            "use nnue" | "usennue" => self.set_use_nnue(&name, &value)?,
            "skill" => {
                self.skill = Skill::parse(&value).ok_or_else(|| {
                    format!("option Skill: '{value}' is not one of easy, medium, hard, expert")
                })?;
            }
            "uci_variant" => {
                self.variant = match value.to_ascii_lowercase().as_str() {
                    "xiangqi" => Variant::Xiangqi,
                    "jieqi" => Variant::Jieqi,
                    _ => {
                        return Err(format!(
                            "option UCI_Variant: '{value}' is not one of xiangqi, jieqi"
                        ));
                    }
                };
                self.pos = Position::startpos_of(self.variant);
                self.last_position = None;
            }
            "usemillisec" if self.protocol == Protocol::Ucci => {
                self.ucci_millisec = match value.as_str() {
                    "true" | "on" => true,
                    "false" | "off" => false,
                    _ => return Err(format!("option usemillisec: '{value}' is not true/false")),
                };
            }
            // UCCI options that a GUI sends and this engine has no use for.
            "batch" | "debug" | "ponder" | "usebook" | "bookfiles" | "loadbook" | "newgame"
            | "promotion" | "idle" | "style" | "randomness" | "knowledge" | "pruning"
            | "selectivity" | "drawmoves" | "repetition" | "ucci_variant"
                if self.protocol == Protocol::Ucci =>
            {
                if name.eq_ignore_ascii_case("newgame") {
                    self.lock_searcher().new_game();
                }
            }
            _ => {
                if !self.set_tune_option(&name, &value)? {
                    return Err(format!("unknown option '{name}'"));
                }
            }
        }
        Ok(())
    }
}
