//! The files a run writes: JSON records written atomically, the CSV logs that survive a kill
//! (cut back to the checkpoint on resume), the CSV float format, and the serde helpers that
//! keep checkpointed floats bit-exact.

use super::TuneError;
use crate::util;
use serde::{Deserialize, Serialize};
use std::io::{BufRead, BufReader, Seek, Write};
use std::path::{Path, PathBuf};

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

/// A file that grows while a long command runs (`datagen`, `label`): `OUT.partial`, cut back on
/// resume to the bytes its progress record vouches for, and `OUT.progress.json`.
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

    /// The partial file opened for appending after its first `bytes` (the rest, written after
    /// the last record of progress, is cut).
    pub fn open(&self, bytes: u64) -> Result<std::fs::File, TuneError> {
        let err = |e| io_err(&self.part, e);
        let mut f = std::fs::OpenOptions::new()
            .create(true)
            .write(true)
            .truncate(false)
            .open(&self.part)
            .map_err(err)?;
        f.set_len(bytes).map_err(err)?;
        f.seek(std::io::SeekFrom::End(0)).map_err(err)?;
        Ok(f)
    }

    /// Appends `bytes` to the open partial file and makes them durable.
    pub fn append(&self, f: &mut std::fs::File, bytes: &[u8]) -> Result<(), TuneError> {
        f.write_all(bytes)
            .and_then(|_| f.sync_data())
            .map_err(|e| io_err(&self.part, e))
    }

    /// The complete partial file becomes the output (gzipped when its name ends in `.gz`), in
    /// one atomic step; the partial and progress files go.
    pub fn publish(&self) -> Result<(), TuneError> {
        let out = &self.out;
        if out.extension().is_some_and(|e| e == "gz") {
            let data = std::fs::read(&self.part).map_err(|e| io_err(&self.part, e))?;
            let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
            enc.write_all(&data).map_err(|e| io_err(out, e))?;
            let gz = enc.finish().map_err(|e| io_err(out, e))?;
            util::write_atomic(out, &gz).map_err(|e| io_err(out, e))?;
            std::fs::remove_file(&self.part).map_err(|e| io_err(&self.part, e))?;
        } else {
            std::fs::rename(&self.part, out).map_err(|e| io_err(out, e))?;
        }
        std::fs::remove_file(&self.progress).map_err(|e| io_err(&self.progress, e))
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
