//! The flags that choose the engine an `xqtune` command runs: its evaluation parameters, search
//! constants, network and evaluation. `xqtune uci`, `bench` and `book` share them, so each
//! flag has one name, one meaning and one help text.

use crate::eval::EvalParams;
use crate::eval::nnue::Network;
use crate::search::SearchParams;
use anyhow::Context;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// `--params`, `--search-params`, `--net`, `--eval`.
#[derive(clap::Args, Debug, Clone, Default)]
pub struct EngineFlags {
    /// Evaluation parameters file (default: the embedded params/xiangqi.json).
    #[arg(long)]
    pub params: Option<PathBuf>,
    /// Search parameters file (default: the embedded params/search.json).
    #[arg(long)]
    pub search_params: Option<PathBuf>,
    /// NNUE network file: the positions of its variant (its feature set's) are evaluated with
    /// it (`EvalFile` and `Use NNUE true`); the other variant keeps its embedded network.
    /// Default: the embedded networks, where the build has them, else the classical evaluation.
    #[arg(long, value_name = "FILE")]
    pub net: Option<PathBuf>,
    /// Which evaluation positions get (`Use NNUE`): `nnue` (the default when there is a
    /// network) or `classical` (the tables; in `xqtune uci` the networks stay loaded, so
    /// `setoption name Use NNUE value true` switches back).
    #[arg(long, value_enum)]
    pub eval: Option<EvalChoice>,
}

/// `--eval`: the networks or the classical tables.
#[derive(
    clap::ValueEnum, Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize,
)]
pub enum EvalChoice {
    Nnue,
    Classical,
}

impl EngineFlags {
    /// The flags given, by name.
    pub fn given(&self) -> Vec<&'static str> {
        let given = [
            ("--params", self.params.is_some()),
            ("--search-params", self.search_params.is_some()),
            ("--net", self.net.is_some()),
            ("--eval", self.eval.is_some()),
        ];
        given.iter().filter(|g| g.1).map(|g| g.0).collect()
    }

    /// The evaluation and search parameters (the embedded defaults where a flag is absent);
    /// errors name the file.
    pub fn load_params(&self) -> anyhow::Result<(EvalParams, SearchParams)> {
        let eval = match &self.params {
            Some(p) => EvalParams::load(p).with_context(|| format!("loading {}", p.display()))?,
            None => EvalParams::default(),
        };
        let search = match &self.search_params {
            Some(p) => SearchParams::load(p).with_context(|| format!("loading {}", p.display()))?,
            None => SearchParams::default(),
        };
        Ok((eval, search))
    }

    /// The network of `--net`, if given: a network file of either variant (its feature set
    /// says which), or `None` for the word `embedded` (the engine's default). The error names
    /// the file and what is wrong.
    pub fn load_net(&self) -> anyhow::Result<Option<Arc<Network>>> {
        load_net(self.net.as_deref())
    }
}

fn load_net(path: Option<&Path>) -> anyhow::Result<Option<Arc<Network>>> {
    match path {
        Some(p) if p.as_os_str() == crate::eval::nnue::EMBEDDED_NAME => Ok(None),
        Some(p) => Network::load(p)
            .map(|n| Some(Arc::new(n)))
            .with_context(|| format!("loading network {}", p.display())),
        None => Ok(None),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(clap::Parser)]
    struct Cmd {
        #[command(flatten)]
        engine: EngineFlags,
    }

    #[test]
    fn given_names_the_flags_on_the_line() {
        let c = Cmd::try_parse_from(["x", "--net", "embedded", "--eval", "classical"]).unwrap();
        assert_eq!(c.engine.given(), ["--net", "--eval"]);
        assert!(
            Cmd::try_parse_from(["x"])
                .unwrap()
                .engine
                .given()
                .is_empty()
        );
    }

    #[test]
    fn embedded_is_no_file_and_a_missing_file_is_named() {
        let c = Cmd::try_parse_from(["x", "--net", "embedded"]).unwrap();
        assert!(c.engine.load_net().unwrap().is_none());
        let c = Cmd::try_parse_from(["x", "--search-params", "/no/such/search.json"]).unwrap();
        let e = format!("{:#}", c.engine.load_params().unwrap_err());
        assert!(e.contains("/no/such/search.json"), "{e}");
    }
}
