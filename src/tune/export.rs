//! `xqtune export`: the parameter tables as full 9x10 boards for both colours, in forms other
//! engines and papers use (JSON, CSV, Rust constants, Markdown).
//!
//! Position-table parameters are named as the evaluation names them,
//! `pst.<piece>.<square>.<phase>` for the squares of files a-e (mirrored onto f-i; squares a
//! piece never reaches read 0), or `pst.<piece>[.<phase>].<n>`. A table of 50 entries is
//! half-width (Pikafish-HCE `psqt.cpp`): entry `n` is rank `n / 5` from red's back rank and file
//! `n % 5` from the a-file to the centre (e-file), mirrored onto files f..i. A table of 90 entries
//! is a full board, `n = rank * 9 + file`. Black's table is red's rotated by 180 degrees (black's
//! piece on (file, rank) scores red's value of (8 - file, 9 - rank) for black). Every other
//! parameter is exported as a scalar.

use super::TuneError;
use super::space::{Gene, ParamSet, SpaceKind};
use crate::core::Square;
use serde::Serialize;
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::PathBuf;

#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum ExportFormat {
    Json,
    Csv,
    Rust,
    Markdown,
}

#[derive(clap::Args, Debug)]
pub struct ExportArgs {
    /// Parameter file (default: the embedded defaults).
    #[arg(long)]
    pub params: Option<PathBuf>,
    #[arg(long, value_enum, default_value = "json")]
    pub format: ExportFormat,
    /// Output file (default: standard output).
    #[arg(long)]
    pub out: Option<PathBuf>,
}

/// One position table on the full board. `red[r][f]`: rank r from red's back rank (0) to
/// black's (9), file f from a (0) to i (8).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct BoardTable {
    pub piece: String,
    pub phase: String,
    pub red: [[i32; 9]; 10],
    pub black: [[i32; 9]; 10],
}

/// Full-board tables from the flat parameter view; returns the tables and the other scalars.
pub fn board_tables(genes: &[Gene]) -> (Vec<BoardTable>, Vec<(String, i32)>) {
    let mut groups: BTreeMap<(String, String), BTreeMap<usize, i32>> = BTreeMap::new();
    let mut squares: BTreeMap<(String, String), BTreeMap<usize, i32>> = BTreeMap::new();
    let mut scalars = vec![];
    for g in genes {
        let parts: Vec<&str> = g.name.split('.').collect();
        let n = parts.last().and_then(|s| s.parse::<usize>().ok());
        match (parts.first(), n, parts.len()) {
            (Some(&"pst"), Some(n), 3) => {
                groups
                    .entry((parts[1].to_string(), "all".to_string()))
                    .or_default()
                    .insert(n, g.value);
            }
            (Some(&"pst"), Some(n), 4) => {
                groups
                    .entry((parts[1].to_string(), parts[2].to_string()))
                    .or_default()
                    .insert(n, g.value);
            }
            // The evaluation's own naming: `pst.<piece>.<square>.<phase>` over files a-e (the
            // half-width table, mirrored onto f-i), squares a piece never reaches left out.
            (Some(&"pst"), None, 4) if Square::parse(parts[2]).is_some_and(|s| s.file() <= 4) => {
                let sq = Square::parse(parts[2]).map_or(0, |s| s.index());
                squares
                    .entry((parts[1].to_string(), parts[3].to_string()))
                    .or_default()
                    .insert(sq, g.value);
            }
            _ => scalars.push((g.name.clone(), g.value)),
        }
    }
    let mut tables = vec![];
    for ((piece, phase), entries) in squares {
        let mut red = [[0i32; 9]; 10];
        for (r, row) in red.iter_mut().enumerate() {
            for (fl, cell) in row.iter_mut().enumerate() {
                let sq = Square::new(fl.min(8 - fl) as u8, r as u8).index();
                *cell = entries.get(&sq).copied().unwrap_or(0);
            }
        }
        tables.push(BoardTable {
            piece,
            phase,
            red,
            black: rotate(&red),
        });
    }
    for ((piece, phase), entries) in groups {
        let half = entries.len() == 50 && entries.keys().all(|&k| k < 50);
        let full = entries.len() == 90 && entries.keys().all(|&k| k < 90);
        if !half && !full {
            for (k, v) in entries {
                scalars.push((format!("pst.{piece}.{phase}.{k}"), v));
            }
            continue;
        }
        let mut red = [[0i32; 9]; 10];
        for (r, row) in red.iter_mut().enumerate() {
            for (fl, cell) in row.iter_mut().enumerate() {
                let key = if half {
                    r * 5 + fl.min(8 - fl)
                } else {
                    r * 9 + fl
                };
                *cell = entries[&key];
            }
        }
        tables.push(BoardTable {
            piece,
            phase,
            red,
            black: rotate(&red),
        });
    }
    (tables, scalars)
}

/// Black's table: red's rotated by 180 degrees.
fn rotate(red: &[[i32; 9]; 10]) -> [[i32; 9]; 10] {
    let mut black = [[0i32; 9]; 10];
    for r in 0..10 {
        for fl in 0..9 {
            black[r][fl] = red[9 - r][8 - fl];
        }
    }
    black
}

/// Renders the export in `format`.
pub fn render(genes: &[Gene], format: ExportFormat) -> String {
    let (tables, scalars) = board_tables(genes);
    let mut s = String::new();
    match format {
        ExportFormat::Json => {
            #[derive(Serialize)]
            struct Out<'a> {
                layout: &'static str,
                scalars: BTreeMap<&'a str, i32>,
                tables: &'a [BoardTable],
            }
            let out = Out {
                layout: "tables[i].red[rank][file]: rank 0 = red's back rank .. 9 = black's, file 0 = a .. 8 = i; \
                         black[rank][file] is black's value of its piece on that square",
                scalars: scalars.iter().map(|(k, v)| (k.as_str(), *v)).collect(),
                tables: &tables,
            };
            s = serde_json::to_string_pretty(&out).unwrap_or_default();
            s.push('\n');
        }
        ExportFormat::Csv => {
            s.push_str("piece,phase,colour,rank,a,b,c,d,e,f,g,h,i\n");
            for t in &tables {
                for (colour, b) in [("red", &t.red), ("black", &t.black)] {
                    for (r, row) in b.iter().enumerate() {
                        let cells: Vec<String> = row.iter().map(|v| v.to_string()).collect();
                        let _ = writeln!(
                            s,
                            "{},{},{colour},{r},{}",
                            t.piece,
                            t.phase,
                            cells.join(",")
                        );
                    }
                }
            }
            s.push_str("\nname,value\n");
            for (k, v) in &scalars {
                let _ = writeln!(s, "{k},{v}");
            }
        }
        ExportFormat::Rust => {
            s.push_str(
                "// Generated by `xqtune export --format rust`.\n\
                 // TABLE[rank][file]: rank 0 = red's back rank .. 9 = black's; file 0 = a .. 8 = i.\n\n",
            );
            for t in &tables {
                for (colour, b) in [("RED", &t.red), ("BLACK", &t.black)] {
                    let _ = writeln!(
                        s,
                        "pub const PST_{}_{}_{colour}: [[i32; 9]; 10] = [",
                        t.piece.to_uppercase(),
                        t.phase.to_uppercase()
                    );
                    for row in b.iter() {
                        let cells: Vec<String> = row.iter().map(|v| format!("{v:4}")).collect();
                        let _ = writeln!(s, "    [{}],", cells.join(","));
                    }
                    s.push_str("];\n\n");
                }
            }
            for (k, v) in &scalars {
                let ident: String = k
                    .chars()
                    .map(|c| {
                        if c.is_ascii_alphanumeric() {
                            c.to_ascii_uppercase()
                        } else {
                            '_'
                        }
                    })
                    .collect();
                let _ = writeln!(s, "pub const {ident}: i32 = {v};");
            }
        }
        ExportFormat::Markdown => {
            for t in &tables {
                for (colour, b) in [("red", &t.red), ("black", &t.black)] {
                    let _ = writeln!(s, "### {} {} ({colour})\n", t.piece, t.phase);
                    s.push_str("| rank | a | b | c | d | e | f | g | h | i |\n");
                    s.push_str("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
                    for r in (0..10).rev() {
                        let cells: Vec<String> = b[r].iter().map(|v| v.to_string()).collect();
                        let _ = writeln!(s, "| {r} | {} |", cells.join(" | "));
                    }
                    s.push('\n');
                }
            }
            if !scalars.is_empty() {
                s.push_str("### Other parameters\n\n| name | value |\n|---|---:|\n");
                for (k, v) in &scalars {
                    let _ = writeln!(s, "| {k} | {v} |");
                }
            }
        }
    }
    s
}

pub fn run_export(a: &ExportArgs) -> Result<(), TuneError> {
    let p = match &a.params {
        Some(path) => ParamSet::load(SpaceKind::Eval, path)?,
        None => ParamSet::default_of(SpaceKind::Eval),
    };
    let text = render(&p.genes(), a.format);
    match &a.out {
        Some(path) => crate::util::write_atomic(path, text.as_bytes())
            .map_err(|e| super::files::io_err(path, e)),
        None => {
            print!("{text}");
            Ok(())
        }
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A half-width rook table with value 100·rank + file-from-edge, plus a scalar.
    pub(crate) fn sample_genes() -> Vec<Gene> {
        let mut v = vec![Gene {
            name: "material.rook".into(),
            value: 600,
            min: 0,
            max: 2000,
            step: 10,
        }];
        for phase in ["mg", "eg"] {
            for n in 0..50 {
                v.push(Gene {
                    name: format!("pst.rook.{phase}.{n}"),
                    value: (n / 5 * 100 + n % 5) + if phase == "eg" { 1000 } else { 0 },
                    min: -2000,
                    max: 2000,
                    step: 1,
                });
            }
        }
        v
    }

    #[test]
    fn half_width_tables_mirror_to_full_boards() {
        let (tables, scalars) = board_tables(&sample_genes());
        assert_eq!(scalars, vec![("material.rook".to_string(), 600)]);
        assert_eq!(tables.len(), 2);
        let t = tables.iter().find(|t| t.phase == "mg").unwrap();
        assert_eq!(t.red[0][0], 0);
        assert_eq!(t.red[0][4], 4);
        assert_eq!(t.red[0][8], 0); // mirrored file i = a
        assert_eq!(t.red[3][6], 302); // file g mirrors c
        assert_eq!(t.red[9][5], 903);
        // black's table is red's rotated by 180 degrees
        assert_eq!(t.black[9][0], t.red[0][8]);
        assert_eq!(t.black[0][4], 904);
        for r in 0..10 {
            for f in 0..9 {
                assert_eq!(t.red[r][f], t.red[r][8 - f]);
                assert_eq!(t.black[r][f], t.red[9 - r][8 - f]);
            }
        }
    }

    #[test]
    fn evaluation_tables_export_as_full_boards() {
        use crate::core::{PieceType, Square};
        use crate::eval::EvalParams;
        let params = EvalParams::default();
        let (tables, scalars) = board_tables(&ParamSet::default_of(SpaceKind::Eval).genes());
        assert_eq!(tables.len(), 14, "7 kinds x mg/eg");
        assert!(scalars.iter().all(|(n, _)| !n.starts_with("pst.")));
        for kind in PieceType::ALL {
            for (phase, eg) in [("mg", false), ("eg", true)] {
                let t = tables
                    .iter()
                    .find(|t| t.piece == kind.name() && t.phase == phase)
                    .unwrap_or_else(|| panic!("no {} {phase} table", kind.name()));
                let board = params.pst_board(kind, eg);
                for sq in 0..90u8 {
                    let s = Square(sq);
                    let (r, f) = (s.rank() as usize, s.file() as usize);
                    assert_eq!(
                        t.red[r][f],
                        board[sq as usize],
                        "{} {phase} {s}",
                        kind.name()
                    );
                    assert_eq!(t.black[9 - r][8 - f], t.red[r][f]);
                }
            }
        }
    }

    #[test]
    fn every_format_renders() {
        let g = sample_genes();
        let json = render(&g, ExportFormat::Json);
        let v: serde_json::Value = serde_json::from_str(&json).unwrap();
        assert_eq!(v["scalars"]["material.rook"], 600);
        assert_eq!(v["tables"][0]["red"][9][5], 1903); // eg sorts first
        let csv = render(&g, ExportFormat::Csv);
        assert!(csv.starts_with("piece,phase,colour,rank,a,b,c,d,e,f,g,h,i\n"));
        assert!(csv.contains("rook,mg,red,3,300,301,302,303,304,303,302,301,300\n"));
        assert_eq!(csv.lines().filter(|l| l.starts_with("rook,")).count(), 40);
        let rs = render(&g, ExportFormat::Rust);
        assert!(rs.contains("pub const PST_ROOK_MG_RED: [[i32; 9]; 10] = ["));
        assert!(rs.contains("pub const PST_ROOK_EG_BLACK"));
        assert!(rs.contains("pub const MATERIAL_ROOK: i32 = 600;"));
        let md = render(&g, ExportFormat::Markdown);
        assert!(md.contains("### rook mg (red)"));
        assert!(md.contains("| 9 | 900 | 901 | 902 | 903 | 904 | 903 | 902 | 901 | 900 |"));
        assert!(md.contains("| material.rook | 600 |"));
        // the embedded defaults export without error in every format
        let d = ParamSet::default_of(SpaceKind::Eval).genes();
        for f in [
            ExportFormat::Json,
            ExportFormat::Csv,
            ExportFormat::Rust,
            ExportFormat::Markdown,
        ] {
            assert!(!render(&d, f).is_empty());
        }
    }
}
