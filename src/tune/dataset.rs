//! Labelled position files: one position per line with its game's result from red's point of
//! view. Read tolerantly, since they come from several producers (datagen, the game importer,
//! other engines' tuning sets):
//!
//! - `FEN | 1-0 | id` (what `xqtune import` writes) and `FEN | 1-0` (`0-1`, `1/2-1/2` too),
//!   also `FEN ; result`;
//! - `FEN | score | wdl` (what `xqtune datagen` writes; bullet's text format): the search score
//!   in centipawns and the result (`1.0`, `0.5`, `0.0`), both from red's view;
//! - `FEN [1.0]` / `[0.5]` / `[0.0]` (red's score; any value in 0..1 is accepted);
//! - EPD with an opcode, `FEN c9 "1-0";` (texel-tuner / Ethereal style);
//! - blank lines and lines starting with `#` are skipped; gzip is detected by its magic bytes;
//! - a packed file (`.xqp`, what `xqtune datagen --out FILE.xqp` writes) gives its records as
//!   rows, record `i` as line `i`.
//!
//! Every error names the file and the line.

use crate::core::{Position, Variant};
use crate::import::packed;
use std::io::{BufRead, BufReader, Read};
use std::path::Path;
use thiserror::Error;

#[derive(Debug, Error)]
pub enum DatasetError {
    #[error("cannot read {path}: {msg}")]
    Io { path: String, msg: String },
    #[error("{path}:{line}: {msg}")]
    Line {
        path: String,
        line: usize,
        msg: String,
    },
    #[error("{path}: no labelled positions")]
    Empty { path: String },
    /// A packed file's own error, which names the file.
    #[error(transparent)]
    Packed(#[from] packed::PackedError),
}

/// One labelled position as text (parsed into a `Position` by the consumer, in parallel).
#[derive(Clone, Debug, PartialEq)]
pub struct Labelled {
    pub fen: String,
    /// Red's result: 1.0 win, 0.5 draw, 0.0 loss.
    pub result: f32,
    /// The search score recorded at datagen time, centipawns from red's view (for `--lambda`).
    pub score: Option<i32>,
    /// 1-based line number in the file.
    pub line: usize,
}

fn parse_result(t: &str) -> Option<f32> {
    let t = t.trim().trim_matches('"').trim();
    match t {
        "1-0" => Some(1.0),
        "0-1" => Some(0.0),
        "1/2-1/2" | "1/2" | "½-½" | "=" => Some(0.5),
        _ => t.parse::<f32>().ok().filter(|v| (0.0..=1.0).contains(v)),
    }
}

/// One parsed line: the FEN text, red's result and, when the line has one, red's search score.
pub type ParsedLine = (String, f32, Option<i32>);

/// Splits one line into (FEN text, red's result, red's score). `Ok(None)` for blank and comment
/// lines.
pub fn parse_line(line: &str) -> Result<Option<ParsedLine>, String> {
    let fields: Vec<&str> = line.trim().split('|').collect();
    if let [fen, score, wdl] = fields[..]
        && let Ok(score) = score.trim().parse::<i32>()
        && let Some(r) = parse_result(wdl)
    {
        return Ok(Some((fen.trim().to_string(), r, Some(score))));
    }
    Ok(parse_result_line(line)?.map(|(f, r)| (f, r, None)))
}

/// The formats with a result and no score.
fn parse_result_line(line: &str) -> Result<Option<(String, f32)>, String> {
    let l = line.trim();
    if l.is_empty() || l.starts_with('#') {
        return Ok(None);
    }
    // EPD opcode c9 "result";
    if let Some(pos) = l.find(" c9 ") {
        let rest = l[pos + 4..].trim().trim_end_matches(';');
        let r = parse_result(rest).ok_or_else(|| format!("bad result '{rest}' in c9 opcode"))?;
        return Ok(Some((l[..pos].trim().to_string(), r)));
    }
    // [score]
    if let Some(open) = l.rfind('[').filter(|_| l.ends_with(']')) {
        let inner = &l[open + 1..l.len() - 1];
        let r = parse_result(inner)
            .ok_or_else(|| format!("bad result '[{inner}]' (expected [1.0], [0.5] or [0.0])"))?;
        return Ok(Some((l[..open].trim().to_string(), r)));
    }
    // `FEN | result | id`, the format `xqtune import` writes: the result is the second field.
    let fields: Vec<&str> = l.split('|').collect();
    if fields.len() == 3 {
        let r = parse_result(fields[1]).ok_or_else(|| {
            format!(
                "bad result '{}' (expected 1-0, 0-1 or 1/2-1/2)",
                fields[1].trim()
            )
        })?;
        return Ok(Some((fields[0].trim().to_string(), r)));
    }
    // FEN | result or FEN ; result
    if let Some(sep) = l.rfind(['|', ';']) {
        let rest = &l[sep + 1..];
        let r = parse_result(rest).ok_or_else(|| {
            format!(
                "bad result '{}' (expected 1-0, 0-1 or 1/2-1/2)",
                rest.trim()
            )
        })?;
        return Ok(Some((l[..sep].trim().to_string(), r)));
    }
    Err("no result found (expected 'FEN | 1-0', 'FEN [1.0]' or 'FEN c9 \"1-0\";')".to_string())
}

/// Parses a FEN, accepting EPD's four fields (move counters missing).
pub fn parse_fen(fen: &str) -> Result<Position, String> {
    match Position::from_fen(fen) {
        Ok(p) => Ok(p),
        Err(e) => {
            if fen.split_whitespace().count() < 6 {
                Position::from_fen(&format!("{fen} 0 1")).map_err(|_| e.to_string())
            } else {
                Err(e.to_string())
            }
        }
    }
}

/// Opens a file, transparently gunzipping it.
pub fn open_maybe_gz(path: &Path) -> Result<Box<dyn BufRead>, DatasetError> {
    let io = |e: std::io::Error| DatasetError::Io {
        path: path.display().to_string(),
        msg: e.to_string(),
    };
    let mut f = std::fs::File::open(path).map_err(io)?;
    let mut magic = [0u8; 2];
    let n = f.read(&mut magic).map_err(io)?;
    let f = std::fs::File::open(path).map_err(io)?;
    if n == 2 && magic == [0x1f, 0x8b] {
        Ok(Box::new(BufReader::new(flate2::read::MultiGzDecoder::new(
            f,
        ))))
    } else {
        Ok(Box::new(BufReader::new(f)))
    }
}

/// The labelled lines of a file in order (blank and comment lines skipped), each as a
/// [`Labelled`] with its line number; an unreadable or unparsable line is an error naming the
/// file and the line, and ends the iteration.
pub fn labelled_lines(
    path: &Path,
) -> Result<Box<dyn Iterator<Item = Result<Labelled, DatasetError>>>, DatasetError> {
    if packed::is_packed(path) {
        return packed_rows(path);
    }
    let reader = open_maybe_gz(path)?;
    let name = path.display().to_string();
    let rows = reader
        .lines()
        .enumerate()
        .map(move |(i, line)| {
            let err = |msg: String| DatasetError::Line {
                path: name.clone(),
                line: i + 1,
                msg,
            };
            let parsed = line
                .map_err(|e| err(e.to_string()))
                .and_then(|l| parse_line(&l).map_err(err));
            parsed.map(|p| {
                p.map(|(fen, result, score)| Labelled {
                    fen,
                    result,
                    score,
                    line: i + 1,
                })
            })
        })
        .filter_map(Result::transpose);
    Ok(Box::new(through_first_error(rows)))
}

/// The rows up to and including the first error, which ends them (nothing after it is read).
fn through_first_error<T>(
    rows: impl Iterator<Item = Result<T, DatasetError>>,
) -> impl Iterator<Item = Result<T, DatasetError>> {
    let mut failed = false;
    rows.map_while(move |row| {
        if failed {
            return None;
        }
        failed = row.is_err();
        Some(row)
    })
}

/// The records of a packed file (`datagen --out FILE.xqp`, [`packed`]) as labelled rows, record
/// `i` as line `i + 1`: the position as its FEN, the search score and the result. The file is
/// read and checked whole first, so a bad header or field is an error before any row.
fn packed_rows(
    path: &Path,
) -> Result<Box<dyn Iterator<Item = Result<Labelled, DatasetError>>>, DatasetError> {
    let records = packed::read(path)?;
    let name = path.display().to_string();
    let rows = records.into_iter().enumerate().map(move |(i, r)| {
        r.to_position()
            .map(|pos| Labelled {
                fen: pos.to_fen(),
                result: r.result(),
                score: Some(i32::from(r.score())),
                line: i + 1,
            })
            .map_err(|msg| DatasetError::Line {
                path: name.clone(),
                line: i + 1,
                msg: format!("record {}: {msg}", i + 1),
            })
    });
    Ok(Box::new(through_first_error(rows)))
}

/// The variant of a dataset: that of its first labelled position (a Jieqi FEN has its own
/// layout, so one row tells). Texel checks it against the run's `--variant`, which chooses the
/// verification match, before tracing anything.
pub fn variant_of(path: &Path) -> Result<Variant, DatasetError> {
    match labelled_lines(path)?.next() {
        Some(row) => {
            let row = row?;
            parse_fen(&row.fen)
                .map(|p| p.variant())
                .map_err(|msg| DatasetError::Line {
                    path: path.display().to_string(),
                    line: row.line,
                    msg,
                })
        }
        None => Err(DatasetError::Empty {
            path: path.display().to_string(),
        }),
    }
}

/// Reads every labelled line (positions are not parsed yet; see [`parse_fen`]).
pub fn read_labelled(path: &Path) -> Result<Vec<Labelled>, DatasetError> {
    let out = labelled_lines(path)?.collect::<Result<Vec<_>, _>>()?;
    if out.is_empty() {
        return Err(DatasetError::Empty {
            path: path.display().to_string(),
        });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::START_FEN;

    #[test]
    fn accepts_all_formats() {
        let f = START_FEN;
        assert_eq!(
            parse_line(&format!("{f} | 1-0")).unwrap(),
            Some((f.to_string(), 1.0, None))
        );
        assert_eq!(
            parse_line(&format!("{f} ; 0-1")).unwrap(),
            Some((f.to_string(), 0.0, None))
        );
        assert_eq!(
            parse_line(&format!("{f} | 1/2-1/2")).unwrap(),
            Some((f.to_string(), 0.5, None))
        );
        assert_eq!(
            parse_line(&format!("{f} [0.5]")).unwrap(),
            Some((f.to_string(), 0.5, None))
        );
        assert_eq!(
            parse_line(&format!("{f} [1.0]")).unwrap(),
            Some((f.to_string(), 1.0, None))
        );
        let epd = "rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C5C1/9/RNBAKABNR w - -";
        let (fen, r, _) = parse_line(&format!("{epd} c9 \"0-1\";")).unwrap().unwrap();
        assert_eq!((fen.as_str(), r), (epd, 0.0));
        assert!(parse_fen(&fen).is_ok());
        assert_eq!(parse_line("   ").unwrap(), None);
        assert_eq!(parse_line("# comment").unwrap(), None);
        assert!(
            parse_line(&format!("{f} | 2-0"))
                .unwrap_err()
                .contains("2-0")
        );
        assert!(parse_line(f).is_err());
        assert!(parse_line(&format!("{f} [1.5]")).is_err());
        // The import format: `FEN | result | source id`.
        assert_eq!(
            parse_line(&format!("{f} | 0-1 | games.pgn.gz#1:16")).unwrap(),
            Some((f.to_string(), 0.0, None))
        );
        // datagen's format (bullet's text format): `FEN | score | wdl`, red's view.
        assert_eq!(
            parse_line(&format!("{f} | -35 | 1.0")).unwrap(),
            Some((f.to_string(), 1.0, Some(-35)))
        );
        assert_eq!(
            parse_line(&format!("{f} | 12 | 0.5")).unwrap(),
            Some((f.to_string(), 0.5, Some(12)))
        );
        assert!(parse_line(&format!("{f} | 12 | 2.0")).is_err());
        assert!(
            parse_line(&format!("{f} | x | games.pgn.gz#1:16"))
                .unwrap_err()
                .contains("'x'")
        );
    }

    #[test]
    fn bad_line_is_reported_with_its_number() {
        let dir = std::env::temp_dir().join(format!("xqtune-ds-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let p = dir.join("d.txt");
        std::fs::write(
            &p,
            format!("# header\n{START_FEN} | 1-0\n{START_FEN} | x\n"),
        )
        .unwrap();
        let e = read_labelled(&p).unwrap_err().to_string();
        assert!(e.contains(":3:"), "{e}");
        // gzip is detected by content
        let gz = dir.join("d.gz");
        let mut enc = flate2::write::GzEncoder::new(
            std::fs::File::create(&gz).unwrap(),
            flate2::Compression::fast(),
        );
        std::io::Write::write_all(&mut enc, format!("{START_FEN} | 0-1\n").as_bytes()).unwrap();
        enc.finish().unwrap();
        let v = read_labelled(&gz).unwrap();
        assert_eq!(v.len(), 1);
        assert_eq!(v[0].result, 0.0);
        assert_eq!(v[0].line, 1);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn packed_files_read_as_rows_with_score_and_result() {
        use crate::core::jieqi::JIEQI_START_FEN;
        let dir = std::env::temp_dir().join(format!("xqtune-ds-packed-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let mid = "r1bakab1r/9/1cn4cn/p1p1p1p1p/9/9/P1P1P1P1P/1CN3NC1/9/R1BAKAB1R b - - 3 1";
        let positions = [
            (Position::from_fen(START_FEN).unwrap(), 17, 1.0),
            (Position::from_fen(mid).unwrap(), -250, 0.5),
            (Position::from_fen(JIEQI_START_FEN).unwrap(), 0, 0.0),
        ];
        let records: Vec<_> = positions
            .iter()
            .map(|(p, s, r)| packed::PackedPosition::pack(p, *s, *r).unwrap())
            .collect();
        let p = dir.join("d.xqp");
        packed::write(&p, &records).unwrap();
        let rows = read_labelled(&p).unwrap();
        assert_eq!(rows.len(), 3);
        for (i, (row, (pos, score, result))) in rows.iter().zip(&positions).enumerate() {
            assert_eq!(row.fen, pos.to_fen(), "record {}", i + 1);
            assert_eq!(row.score, Some(*score));
            assert_eq!(row.result, *result);
            assert_eq!(row.line, i + 1);
            assert_eq!(parse_fen(&row.fen).unwrap().key(), pos.key());
        }
        assert_eq!(variant_of(&p).unwrap(), Variant::Xiangqi);
        // A packed name over other bytes is an error naming the file, not rows of garbage.
        let bad = dir.join("bad.xqp");
        std::fs::write(&bad, format!("{START_FEN} | 1-0\n")).unwrap();
        let e = read_labelled(&bad).unwrap_err().to_string();
        assert!(e.contains("bad.xqp") && e.contains("XQPACKED"), "{e}");
        assert_eq!(e.matches("bad.xqp").count(), 1, "{e}");
        // A record whose fields are in range but whose position is not legal (a second red
        // king in place of the rook on a0) is an error naming it, and ends the rows.
        let mut broken = records.clone();
        broken[1].0[12] &= 0xF0;
        let p2 = dir.join("two-kings.xqp");
        packed::write(&p2, &broken).unwrap();
        let rows: Vec<_> = labelled_lines(&p2).unwrap().collect();
        assert_eq!(rows.len(), 2);
        assert!(rows[0].is_ok());
        let e = rows[1].as_ref().unwrap_err().to_string();
        assert!(
            e.contains("two-kings.xqp:2") && e.contains("record 2"),
            "{e}"
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
