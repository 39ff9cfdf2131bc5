//! The files a run writes: JSON records written atomically, the CSV logs that survive a kill
//! (cut back to the checkpoint on resume), the CSV float format, and the serde helpers that
//! keep checkpointed floats bit-exact.

use super::TuneError;
use crate::util;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Seek, Write};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

pub fn io_err(path: &Path, e: std::io::Error) -> TuneError {
    TuneError::Io(format!("{}: {e}", path.display()))
}

pub fn write_json<T: Serialize>(path: &Path, v: &T) -> Result<(), TuneError> {
    let text = serde_json::to_string_pretty(v).map_err(|e| TuneError::Io(e.to_string()))?;
    util::write_atomic(path, text.as_bytes()).map_err(|e| io_err(path, e))
}

pub fn read_json<T: for<'de> Deserialize<'de>>(path: &Path) -> Result<T, TuneError> {
    let text = std::fs::read_to_string(path).map_err(|e| io_err(path, e))?;
    serde_json::from_str(&text).map_err(|e| TuneError::Io(format!("{}: {e}", path.display())))
}

/// The paths of a file that grows while a long command runs (`datagen`, `label`): `OUT.partial`,
/// cut back on resume to the bytes its progress record vouches for, and `OUT.progress.json`.
pub struct Partial {
    pub out: PathBuf,
    pub part: PathBuf,
    pub progress: PathBuf,
}

impl Partial {
    pub fn of(out: &Path) -> Partial {
        let with = |suffix: &str| {
            let mut s = out.as_os_str().to_owned();
            s.push(suffix);
            PathBuf::from(s)
        };
        Partial {
            out: out.to_path_buf(),
            part: with(".partial"),
            progress: with(".progress.json"),
        }
    }
}

/// How often a growing output is made durable and its progress recorded.
const CHECKPOINT: Duration = Duration::from_secs(2);

/// One finished piece of a growing output (a game's positions, a chunk's scored lines): its
/// bytes and how many positions it kept and dropped.
#[derive(Default)]
pub struct Piece {
    pub bytes: Vec<u8>,
    pub kept: u64,
    pub dropped: u64,
}

/// What one sync made durable, for the caller's progress record.
pub struct Synced {
    pub bytes: u64,
    pub kept: u64,
    pub dropped: u64,
    /// The first piece not yet in the file.
    pub next: u64,
}

/// A growing output's open partial file. Pieces finish in any order (games and chunks run in
/// parallel) and are written in index order: a piece waits until those before it are in. At
/// most every [`CHECKPOINT`] the written bytes are synced and then the progress record is
/// rewritten atomically, so after a kill the record never vouches for bytes the file lacks.
pub struct Growing {
    pub paths: Partial,
    file: std::fs::File,
    /// Finished pieces not yet written, by index (those after a piece still running).
    ready: BTreeMap<u64, Piece>,
    /// Bytes of pieces `..next` not yet in the file, and their counts.
    pending: Piece,
    /// The first piece not yet in `pending`.
    next: u64,
    /// `next` as the progress record last had it.
    recorded: u64,
    synced: Instant,
}

impl Growing {
    /// Opens `out`'s partial file after its first `bytes` (the rest, written after the last
    /// record of progress, is cut), creating the output's folder; `next` is the first piece
    /// to come.
    pub fn open(out: &Path, bytes: u64, next: u64) -> Result<Growing, TuneError> {
        let paths = Partial::of(out);
        if let Some(parent) = out.parent().filter(|p| !p.as_os_str().is_empty()) {
            std::fs::create_dir_all(parent).map_err(|e| io_err(parent, e))?;
        }
        let err = |e| io_err(&paths.part, e);
        let mut file = std::fs::OpenOptions::new()
            .create(true)
            .write(true)
            .truncate(false)
            .open(&paths.part)
            .map_err(err)?;
        file.set_len(bytes).map_err(err)?;
        file.seek(std::io::SeekFrom::End(0)).map_err(err)?;
        Ok(Growing {
            paths,
            file,
            ready: BTreeMap::new(),
            pending: Piece::default(),
            next,
            recorded: next,
            synced: Instant::now(),
        })
    }

    /// Writes `bytes` (a file header) at once and makes them durable.
    pub fn write_now(&mut self, bytes: &[u8]) -> Result<(), TuneError> {
        self.file
            .write_all(bytes)
            .and_then(|_| self.file.sync_data())
            .map_err(|e| io_err(&self.paths.part, e))
    }

    /// The first piece not yet taken in order.
    pub fn next(&self) -> u64 {
        self.next
    }

    /// Positions kept and dropped by the pieces taken since the last sync.
    pub fn unsynced(&self) -> (u64, u64) {
        (self.pending.kept, self.pending.dropped)
    }

    /// Takes piece `index`, and with it every piece that now follows without a gap; syncs
    /// through `record` (see [`Growing::sync`]) when the checkpoint interval has passed.
    pub fn add<P: Serialize>(
        &mut self,
        index: u64,
        piece: Piece,
        progress: &mut P,
        record: impl FnOnce(&mut P, Synced),
    ) -> Result<(), TuneError> {
        self.ready.insert(index, piece);
        while let Some(p) = self.ready.remove(&self.next) {
            self.pending.bytes.extend_from_slice(&p.bytes);
            self.pending.kept += p.kept;
            self.pending.dropped += p.dropped;
            self.next += 1;
        }
        if self.synced.elapsed() >= CHECKPOINT {
            self.sync(progress, record)?;
        }
        Ok(())
    }

    /// Appends the pieces taken since the last sync and makes them durable, then lets `record`
    /// add them to `progress` and writes it atomically. Nothing is written when no piece was
    /// taken since.
    pub fn sync<P: Serialize>(
        &mut self,
        progress: &mut P,
        record: impl FnOnce(&mut P, Synced),
    ) -> Result<(), TuneError> {
        self.synced = Instant::now();
        if self.next == self.recorded {
            return Ok(());
        }
        let bytes = std::mem::take(&mut self.pending.bytes);
        self.write_now(&bytes)?;
        let p = &mut self.pending;
        let synced = Synced {
            bytes: bytes.len() as u64,
            kept: std::mem::take(&mut p.kept),
            dropped: std::mem::take(&mut p.dropped),
            next: self.next,
        };
        self.recorded = self.next;
        record(progress, synced);
        write_json(&self.paths.progress, progress)
    }

    /// The complete partial file becomes the output (gzipped when its name ends in `.gz`), in
    /// one atomic step; the partial and progress files go.
    pub fn publish(self) -> Result<(), TuneError> {
        let Growing { paths, file, .. } = self;
        drop(file);
        let out = &paths.out;
        if out.extension().is_some_and(|e| e == "gz") {
            let data = std::fs::read(&paths.part).map_err(|e| io_err(&paths.part, e))?;
            let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
            enc.write_all(&data).map_err(|e| io_err(out, e))?;
            let gz = enc.finish().map_err(|e| io_err(out, e))?;
            util::write_atomic(out, &gz).map_err(|e| io_err(out, e))?;
            std::fs::remove_file(&paths.part).map_err(|e| io_err(&paths.part, e))?;
        } else {
            std::fs::rename(&paths.part, out).map_err(|e| io_err(out, e))?;
        }
        std::fs::remove_file(&paths.progress).map_err(|e| io_err(&paths.progress, e))
    }
}

/// An append-only CSV whose data rows beyond a checkpoint are cut on resume, so the log always
/// matches the checkpoint it is resumed from.
pub struct CsvLog {
    file: std::fs::File,
    path: PathBuf,
}

impl CsvLog {
    /// Opens `path`, keeping the header and the first `keep_rows` data rows (0 starts fresh).
    pub fn open(path: &Path, header: &str, keep_rows: usize) -> Result<CsvLog, TuneError> {
        let mut kept = vec![header.to_string()];
        if keep_rows > 0 && path.exists() {
            let f = std::fs::File::open(path).map_err(|e| io_err(path, e))?;
            for line in BufReader::new(f).lines().skip(1).take(keep_rows) {
                kept.push(line.map_err(|e| io_err(path, e))?);
            }
        }
        let mut text = kept.join("\n");
        text.push('\n');
        util::write_atomic(path, text.as_bytes()).map_err(|e| io_err(path, e))?;
        let file = std::fs::OpenOptions::new()
            .append(true)
            .open(path)
            .map_err(|e| io_err(path, e))?;
        Ok(CsvLog {
            file,
            path: path.to_path_buf(),
        })
    }

    pub fn row(&mut self, fields: &[String]) -> Result<(), TuneError> {
        writeln!(self.file, "{}", fields.join(",")).map_err(|e| io_err(&self.path, e))?;
        self.file.flush().map_err(|e| io_err(&self.path, e))
    }
}

/// Formats a float for CSV (fixed precision keeps logs diffable).
pub fn csv_float(v: f64) -> String {
    if v.is_finite() {
        format!("{v:.6}")
    } else {
        String::new()
    }
}

/// Serde helpers writing floats as their shortest round-trip decimal strings: serde_json's
/// default float parser may be off by one ulp, and a checkpoint must restore bit-identical
/// values for a resumed run to equal an uninterrupted one.
pub mod exact {
    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(v: &f64, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&format!("{v:?}"))
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<f64, D::Error> {
        let t = String::deserialize(d)?;
        t.parse().map_err(serde::de::Error::custom)
    }

    pub mod vec {
        use serde::{Deserialize, Deserializer, Serializer, ser::SerializeSeq};

        pub fn serialize<S: Serializer>(v: &[f64], s: S) -> Result<S::Ok, S::Error> {
            let mut seq = s.serialize_seq(Some(v.len()))?;
            for x in v {
                seq.serialize_element(&format!("{x:?}"))?;
            }
            seq.end()
        }

        pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<f64>, D::Error> {
            let t = Vec::<String>::deserialize(d)?;
            t.iter()
                .map(|x| x.parse().map_err(serde::de::Error::custom))
                .collect()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Serialize)]
    struct Record {
        next: u64,
        bytes: u64,
        kept: u64,
        dropped: u64,
    }

    fn record(r: &mut Record, s: Synced) {
        r.next = s.next;
        r.bytes += s.bytes;
        r.kept += s.kept;
        r.dropped += s.dropped;
    }

    /// Pieces (games, chunks) finish out of order on many threads; the file gets them in index
    /// order, the progress record counts only pieces written without a gap (an empty piece
    /// included), and a reopened file is cut back to the bytes the record vouches for.
    #[test]
    fn pieces_are_written_in_order_and_cut_back_on_reopening() {
        let dir = std::env::temp_dir().join(format!("xqtune-growing-{}", std::process::id()));
        let out = dir.join("sub").join("o.txt");
        let piece = |i: u64, n: u64, dropped: u64| Piece {
            bytes: (0..n)
                .flat_map(|k| format!("g{i}p{k}\n").into_bytes())
                .collect(),
            kept: n,
            dropped,
        };
        let mut r = Record {
            next: 5,
            bytes: 0,
            kept: 0,
            dropped: 0,
        };
        // the output's folder does not exist yet: opening creates it
        let mut g = Growing::open(&out, 0, 5).unwrap();
        g.add(7, piece(7, 1, 0), &mut r, record).unwrap();
        g.add(6, piece(6, 0, 2), &mut r, record).unwrap();
        assert_eq!((g.next(), g.unsynced()), (5, (0, 0)));
        g.sync(&mut r, record).unwrap();
        assert_eq!((r.next, r.bytes), (5, 0));
        assert!(
            !g.paths.progress.exists(),
            "nothing taken, nothing recorded"
        );
        g.add(5, piece(5, 2, 1), &mut r, record).unwrap();
        assert_eq!((g.next(), g.unsynced()), (8, (3, 3)));
        g.add(9, piece(9, 1, 0), &mut r, record).unwrap();
        g.sync(&mut r, record).unwrap();
        let part = g.paths.part.clone();
        assert_eq!(
            std::fs::read_to_string(&part).unwrap(),
            "g5p0\ng5p1\ng7p0\n"
        );
        assert_eq!((r.next, r.bytes, r.kept, r.dropped), (8, 15, 3, 3));
        let saved: serde_json::Value = read_json(&g.paths.progress).unwrap();
        assert_eq!(saved["next"], 8);
        assert_eq!(saved["bytes"], 15);
        // a torn write after the record: reopening cuts it
        drop(g);
        std::fs::write(&part, "g5p0\ng5p1\ng7p0\ng8p").unwrap();
        let mut g = Growing::open(&out, r.bytes, r.next).unwrap();
        g.add(8, piece(8, 1, 0), &mut r, record).unwrap();
        g.sync(&mut r, record).unwrap();
        g.publish().unwrap();
        assert_eq!(
            std::fs::read_to_string(&out).unwrap(),
            "g5p0\ng5p1\ng7p0\ng8p0\n"
        );
        assert!(!part.exists() && !Partial::of(&out).progress.exists());
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn csv_log_cuts_rows_beyond_checkpoint() {
        let dir = std::env::temp_dir().join(format!("xqtune-csv-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let p = dir.join("log.csv");
        let mut log = CsvLog::open(&p, "a,b", 0).unwrap();
        for i in 0..5 {
            log.row(&[i.to_string(), csv_float(i as f64)]).unwrap();
        }
        drop(log);
        let mut log = CsvLog::open(&p, "a,b", 3).unwrap();
        log.row(&["9".into(), "9".into()]).unwrap();
        let text = std::fs::read_to_string(&p).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 5);
        assert_eq!(lines[0], "a,b");
        assert_eq!(lines[3], "2,2.000000");
        assert_eq!(lines[4], "9,9");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
