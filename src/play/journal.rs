//! The journal of a match or a tournament, `games.jsonl` in its run folder: one JSON line per
//! finished game, `{"game": ID, "record": {...}}`, written in one call and synced to disk as the
//! game ends. A run killed at any moment (`kill -9`, a node lost) so keeps every game it
//! finished, and `--resume` plays only the others. The one line a kill can cut short is the last; reading
//! drops it and cuts it from the file, so the next line starts clean.

use super::game::GameRecord;
use serde::{Deserialize, Serialize};
use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use thiserror::Error;

#[derive(Debug, Error)]
pub enum JournalError {
    #[error("{path}: {error}")]
    Io { path: String, error: String },
    #[error("{path} line {line}: not a game of the journal: {error}")]
    Line {
        path: String,
        line: usize,
        error: String,
    },
}

#[derive(Serialize, Deserialize)]
struct Line {
    game: usize,
    record: GameRecord,
}

/// The journal, open for appending.
pub struct Journal {
    path: PathBuf,
    file: File,
    /// The first game that could not be written (see [`Journal::record`]).
    failure: Option<String>,
}

impl Journal {
    fn io(path: &Path, e: std::io::Error) -> JournalError {
        JournalError::Io {
            path: path.display().to_string(),
            error: e.to_string(),
        }
    }

    /// Opens (creating it when missing) the journal at `path` and returns the games it holds,
    /// in the order they were written (a game written twice counts once, the first time).
    pub fn open(path: &Path) -> Result<(Journal, Vec<(usize, GameRecord)>), JournalError> {
        let text = match std::fs::read(path) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Vec::new(),
            Err(e) => return Err(Self::io(path, e)),
        };
        let (games, good) = parse(path, &text)?;
        let file = OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
            .map_err(|e| Self::io(path, e))?;
        if good < text.len() {
            file.set_len(good as u64).map_err(|e| Self::io(path, e))?;
        }
        Ok((
            Journal {
                path: path.to_path_buf(),
                file,
                failure: None,
            },
            games,
        ))
    }

    /// The games of the journal at `path` as [`Journal::open`] returns them, read without
    /// opening it for writing: the file is left as it is (a line a kill cut short is skipped,
    /// not cut), and a missing file is an error.
    pub fn read(path: &Path) -> Result<Vec<(usize, GameRecord)>, JournalError> {
        let text = std::fs::read(path).map_err(|e| Self::io(path, e))?;
        Ok(parse(path, &text)?.0)
    }

    /// Appends game `id` as the run's recorder does: a game that is not in the journal would
    /// be played again on resume, so the first one that cannot be written raises `stop` (no
    /// new game starts) and is kept as [`Journal::failure`]; no game is written after it.
    pub fn record(&mut self, id: usize, record: &GameRecord, stop: &AtomicBool) {
        if self.failure.is_some() {
            return;
        }
        if let Err(e) = self.append(id, record) {
            self.failure = Some(e.to_string());
            stop.store(true, Ordering::SeqCst);
        }
    }

    /// Why a game could not be recorded, if one could not.
    pub fn failure(&self) -> Option<&str> {
        self.failure.as_deref()
    }

    /// Appends game `id` and syncs it to disk.
    pub fn append(&mut self, id: usize, record: &GameRecord) -> Result<(), JournalError> {
        let mut line = serde_json::to_string(&Line {
            game: id,
            record: record.clone(),
        })
        .map_err(|e| JournalError::Io {
            path: self.path.display().to_string(),
            error: e.to_string(),
        })?;
        line.push('\n');
        self.file
            .write_all(line.as_bytes())
            .and_then(|_| self.file.sync_data())
            .map_err(|e| Self::io(&self.path, e))
    }
}

/// The games of a journal's text, each once (the first time it was written), and the length of
/// the text up to the end of its last whole line.
fn parse(path: &Path, text: &[u8]) -> Result<(Vec<(usize, GameRecord)>, usize), JournalError> {
    let mut games: Vec<(usize, GameRecord)> = Vec::new();
    let mut good = 0;
    for (i, line) in text.split_inclusive(|&b| b == b'\n').enumerate() {
        if !line.ends_with(b"\n") {
            // cut short by a kill
            break;
        }
        let parsed: Line = serde_json::from_slice(line).map_err(|e| JournalError::Line {
            path: path.display().to_string(),
            line: i + 1,
            error: e.to_string(),
        })?;
        if !games.iter().any(|(g, _)| *g == parsed.game) {
            games.push((parsed.game, parsed.record));
        }
        good += line.len();
    }
    Ok((games, good))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::GameResult;
    use crate::play::game::Termination;

    fn record(index: usize) -> GameRecord {
        GameRecord {
            index,
            red: "a".into(),
            black: "b".into(),
            red_hash: None,
            black_hash: None,
            a_is_red: index.is_multiple_of(2),
            opening_fen: "fen".into(),
            opening_moves: vec![],
            start_fen: "fen".into(),
            moves: vec![],
            scores: vec![],
            depths: vec![],
            times_ms: vec![],
            result: GameResult::Draw,
            termination: Termination::MaxPlies,
            duration_ms: 5,
            deal_seed: None,
        }
    }

    #[test]
    fn games_survive_a_cut_line_and_the_next_append_starts_clean() {
        let dir = std::env::temp_dir().join(format!("xqtune-journal-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("games.jsonl");
        let _ = std::fs::remove_file(&path);
        let (mut j, games) = Journal::open(&path).unwrap();
        assert!(games.is_empty());
        j.append(3, &record(3)).unwrap();
        j.append(0, &record(0)).unwrap();
        drop(j);
        // a kill in the middle of the third line
        let mut f = OpenOptions::new().append(true).open(&path).unwrap();
        f.write_all(b"{\"game\": 7, \"rec").unwrap();
        drop(f);
        // read alone skips the cut line and leaves the file as it is
        let len = std::fs::metadata(&path).unwrap().len();
        let games = Journal::read(&path).unwrap();
        assert_eq!(games.iter().map(|g| g.0).collect::<Vec<_>>(), [3, 0]);
        assert_eq!(std::fs::metadata(&path).unwrap().len(), len);
        let (mut j, games) = Journal::open(&path).unwrap();
        assert_eq!(games.iter().map(|g| g.0).collect::<Vec<_>>(), [3, 0]);
        assert_eq!(games[0].1.index, 3);
        j.append(7, &record(7)).unwrap();
        drop(j);
        let (_, games) = Journal::open(&path).unwrap();
        assert_eq!(games.iter().map(|g| g.0).collect::<Vec<_>>(), [3, 0, 7]);
        // a damaged line before the end is an error naming it
        std::fs::write(&path, "{}\n").unwrap();
        let e = Journal::open(&path).err().unwrap().to_string();
        assert!(e.contains("line 1"), "{e}");
        // reading a missing journal is an error naming it (opening one creates it)
        std::fs::remove_file(&path).unwrap();
        let e = Journal::read(&path).err().unwrap().to_string();
        assert!(e.contains("games.jsonl"), "{e}");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
