//! `xqtune match --resume`: what a match's run folder records so that the match can go on after
//! a kill (`config.json`), and the check of its finished games (the [journal](super::journal),
//! `games.jsonl`) against the match.
//!
//! `config.json` keeps the flags as given and the folder the match was started in: a resumed
//! match works from that folder again, so every relative path (parameter files, the opening
//! suite, engine commands and their arguments) means what it meant.

use super::game::GameRecord;
use super::journal::Journal;
use super::{Engine, MatchArgs};
use anyhow::{Context, Result, bail};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// `config.json` of a match's run folder.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct MatchRecord {
    pub version: String,
    pub created: String,
    /// The working folder the match was started in.
    pub cwd: PathBuf,
    /// The flags as given.
    pub args: MatchArgs,
}

const CONFIG: &str = "config.json";

/// Writes `config.json` for a new match into `dir`.
pub fn write_config(dir: &Path, args: &MatchArgs) -> Result<()> {
    let record = MatchRecord {
        version: env!("CARGO_PKG_VERSION").to_string(),
        created: chrono::Utc::now().to_rfc3339(),
        cwd: std::env::current_dir().context("reading the working folder")?,
        args: MatchArgs {
            resume: None,
            ..args.clone()
        },
    };
    let json = serde_json::to_string_pretty(&record).context("serialising the config")?;
    crate::util::write_atomic(&dir.join(CONFIG), (json + "\n").as_bytes())
        .with_context(|| format!("writing {}", dir.join(CONFIG).display()))
}

/// Reads the `config.json` of the run folder `dir`.
pub fn read_config(dir: &Path) -> Result<MatchRecord> {
    let path = dir.join(CONFIG);
    let text = std::fs::read_to_string(&path).with_context(|| {
        format!(
            "{} is not the run folder of a match (no readable {CONFIG})",
            dir.display()
        )
    })?;
    serde_json::from_str(&text).with_context(|| format!("reading {}", path.display()))
}

/// Works from the folder the match of run folder `dir` was started in; returns `dir` made
/// absolute first (it may be relative to the folder left).
pub fn enter_cwd_of(dir: &Path) -> Result<(PathBuf, MatchRecord)> {
    let dir = dir
        .canonicalize()
        .with_context(|| format!("{} is not the run folder of a match", dir.display()))?;
    let record = read_config(&dir)?;
    std::env::set_current_dir(&record.cwd).with_context(|| {
        format!(
            "the match of {} was started in {}, which is gone: its relative paths cannot be \
             found",
            dir.display(),
            record.cwd.display()
        )
    })?;
    Ok((dir, record))
}

/// Opens the journal at `path` for a match of `total` games between `a` and `b`: the journal,
/// to record the games still to play, and its finished games, each checked to be a game of
/// this match (an index below `total`, A red in the even games, the engines' names).
pub fn open_journal(
    path: &Path,
    a: &Engine,
    b: &Engine,
    total: usize,
) -> Result<(Journal, Vec<GameRecord>)> {
    let (journal, games) = Journal::open(path)?;
    let done = check_journal(games, a, b, total).with_context(|| path.display().to_string())?;
    Ok((journal, done))
}

fn check_journal(
    games: Vec<(usize, GameRecord)>,
    a: &Engine,
    b: &Engine,
    total: usize,
) -> Result<Vec<GameRecord>> {
    let mut out = Vec::with_capacity(games.len());
    for (id, rec) in games {
        if id >= total || rec.index != id {
            bail!(
                "game {id} of the journal (index {}) is not a game of this match of {total} games",
                rec.index
            );
        }
        let a_red = id.is_multiple_of(2);
        let (red, black) = if a_red {
            (a.name(), b.name())
        } else {
            (b.name(), a.name())
        };
        if rec.a_is_red != a_red || rec.red != red || rec.black != black {
            bail!(
                "game {id} of the journal ({} vs {}) is not this match's ({red} vs {black})",
                rec.red,
                rec.black
            );
        }
        out.push(rec);
    }
    Ok(out)
}
