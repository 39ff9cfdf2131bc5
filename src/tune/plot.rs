//! Figures of a run, rebuilt from its files (never the only record): fitness (GA) or loss
//! (Texel) curves and the SPSA score, with the verification result marked; SPSA parameter
//! trajectories from `params.csv`; heat maps of the tuned position tables on the 9x10 board
//! beside the starting ones. Every figure is written as PNG (bitmap backend; text drawn with the
//! embedded DejaVu Sans, see assets/DejaVuSans-LICENSE.txt) and SVG.

use super::TuneError;
use super::export::{BoardTable, board_tables};
use super::files::{io_err, read_json};
use super::space::{ParamSet, SpaceKind};
use super::verify::Verification;
use crate::chart::{LineChart, PALETTE, Series, ensure_font, line_chart};
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};
use std::path::{Path, PathBuf};

fn perr<E: std::fmt::Display>(e: E) -> TuneError {
    TuneError::Plot(e.to_string())
}

/// A CSV of numbers with a header (empty cells are NaN).
pub fn read_csv(path: &Path) -> Result<(Vec<String>, Vec<Vec<f64>>), TuneError> {
    let text = std::fs::read_to_string(path).map_err(|e| io_err(path, e))?;
    let mut lines = text.lines();
    let header: Vec<String> = lines
        .next()
        .unwrap_or("")
        .split(',')
        .map(|s| s.to_string())
        .collect();
    let rows = lines
        .filter(|l| !l.trim().is_empty())
        .map(|l| {
            l.split(',')
                .map(|c| c.trim().parse::<f64>().unwrap_or(f64::NAN))
                .collect()
        })
        .collect();
    Ok((header, rows))
}

fn column(header: &[String], rows: &[Vec<f64>], name: &str) -> Option<Vec<f64>> {
    let i = header.iter().position(|h| h == name)?;
    Some(
        rows.iter()
            .map(|r| r.get(i).copied().unwrap_or(f64::NAN))
            .collect(),
    )
}

/// Diverging colour: blue (negative) through white to red (positive), |v| / scale in 0..1.
fn heat_color(v: f64, scale: f64) -> RGBColor {
    let t = (v / scale.max(1e-9)).clamp(-1.0, 1.0);
    let w = |a: f64| (255.0 * (1.0 - a)) as u8;
    if t >= 0.0 {
        RGBColor(255, w(t * 0.85), w(t * 0.85))
    } else {
        RGBColor(w(-t * 0.85), w(-t * 0.85), 255)
    }
}

/// One board panel: a title, files a-i below, ranks 0-9 (red's side at the bottom) on the
/// left, and every square coloured by its value with the value written in its centre.
fn draw_board<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    title: &str,
    board: &[[i32; 9]; 10],
    scale: f64,
) -> Result<(), TuneError>
where
    DB::ErrorType: 'static,
{
    let (w, h) = area.dim_in_pixel();
    let (title_h, label_w, label_h, margin) = (34i32, 22i32, 22i32, 8i32);
    let cell = ((w as i32 - label_w - 2 * margin) / 9).min((h as i32 - title_h - label_h) / 10);
    let left = label_w + (w as i32 - label_w - 9 * cell) / 2;
    let top = title_h;
    let centred = |size: f64| {
        TextStyle::from(("sans-serif", size).into_font())
            .color(&BLACK)
            .pos(Pos::new(HPos::Center, VPos::Center))
    };
    // White on the darkest colours, where black digits would be hard to read.
    let value_style = |size: f64, v: i32| {
        let style = centred(size);
        if v.abs() as f64 > 0.7 * scale {
            style.color(&WHITE)
        } else {
            style
        }
    };
    area.draw(&Text::new(
        title.to_string(),
        (left + 9 * cell / 2, title_h / 2),
        centred(18.0),
    ))
    .map_err(perr)?;
    // Numbers fit a cell at this size, whatever the cell: never wrapped or cut.
    let value_size = (cell as f64 * 0.36).clamp(9.0, 18.0);
    for (r, row) in board.iter().enumerate() {
        // Rank 9 (black's back rank) is the top row.
        let y = top + (9 - r as i32) * cell;
        for (f, &v) in row.iter().enumerate() {
            let x = left + f as i32 * cell;
            area.draw(&Rectangle::new(
                [(x, y), (x + cell, y + cell)],
                heat_color(v as f64, scale).filled(),
            ))
            .map_err(perr)?;
            area.draw(&Rectangle::new(
                [(x, y), (x + cell, y + cell)],
                RGBColor(200, 200, 200).stroke_width(1),
            ))
            .map_err(perr)?;
            area.draw(&Text::new(
                v.to_string(),
                (x + cell / 2, y + cell / 2),
                value_style(value_size, v),
            ))
            .map_err(perr)?;
        }
        area.draw(&Text::new(
            r.to_string(),
            (left - label_w / 2, y + cell / 2),
            centred(13.0),
        ))
        .map_err(perr)?;
    }
    for (f, name) in ["a", "b", "c", "d", "e", "f", "g", "h", "i"]
        .iter()
        .enumerate()
    {
        area.draw(&Text::new(
            name.to_string(),
            (
                left + f as i32 * cell + cell / 2,
                top + 10 * cell + label_h / 2,
            ),
            centred(13.0),
        ))
        .map_err(perr)?;
    }
    // The river, between ranks 4 and 5.
    let river = top + 5 * cell;
    area.draw(&PathElement::new(
        vec![(left, river), (left + 9 * cell, river)],
        BLACK.stroke_width(3),
    ))
    .map_err(perr)?;
    Ok(())
}

/// The largest magnitude on the boards (at least 1), so that the colour scale is symmetric
/// around 0 and 0 is white.
fn max_abs<'a>(boards: impl IntoIterator<Item = &'a [[i32; 9]; 10]>) -> f64 {
    boards
        .into_iter()
        .flatten()
        .flatten()
        .map(|v| v.abs() as f64)
        .fold(1.0, f64::max)
}

fn draw_heat<DB: DrawingBackend>(
    root: DrawingArea<DB, Shift>,
    start: &BoardTable,
    tuned: &BoardTable,
) -> Result<(), TuneError>
where
    DB::ErrorType: 'static,
{
    root.fill(&WHITE).map_err(perr)?;
    let mut change = [[0i32; 9]; 10];
    for (r, row) in change.iter_mut().enumerate() {
        for (f, v) in row.iter_mut().enumerate() {
            *v = tuned.red[r][f] - start.red[r][f];
        }
    }
    // Start and tuned share one scale so their colours compare; the change has its own, or
    // small changes would all look white.
    let scale = max_abs([&start.red, &tuned.red]);
    let panels = root.split_evenly((1, 3));
    let name = format!("{} {}", start.piece, start.phase);
    draw_board(
        &panels[0],
        &format!("{name}: start (red)"),
        &start.red,
        scale,
    )?;
    draw_board(
        &panels[1],
        &format!("{name}: tuned (red)"),
        &tuned.red,
        scale,
    )?;
    let change_scale = max_abs([&change]);
    draw_board(
        &panels[2],
        &format!("{name}: tuned - start (full colour at ±{change_scale})"),
        &change,
        change_scale,
    )?;
    root.present().map_err(perr)?;
    Ok(())
}

/// Three boards of 9x10 square cells with room for the titles and labels.
const HEAT_MAP_SIZE: (u32, u32) = (1500, 600);

/// Heat maps of every position table, start, tuned and the change side by side:
/// `pst_<piece>_<phase>.{png,svg}`.
pub fn heat_maps(
    dir: &Path,
    start: &[super::space::Gene],
    tuned: &[super::space::Gene],
) -> Result<Vec<PathBuf>, TuneError> {
    ensure_font();
    let (ts, _) = board_tables(start);
    let (tt, _) = board_tables(tuned);
    let mut files = vec![];
    for s in &ts {
        let Some(t) = tt.iter().find(|t| t.piece == s.piece && t.phase == s.phase) else {
            continue;
        };
        let stem = dir.join(format!("pst_{}_{}", s.piece, s.phase));
        let png = stem.with_extension("png");
        let svg = stem.with_extension("svg");
        draw_heat(
            BitMapBackend::new(&png, HEAT_MAP_SIZE).into_drawing_area(),
            s,
            t,
        )?;
        draw_heat(
            SVGBackend::new(&svg, HEAT_MAP_SIZE).into_drawing_area(),
            s,
            t,
        )?;
        files.push(png);
        files.push(svg);
    }
    Ok(files)
}

/// Rebuilds every figure of a run folder from its files; returns the files written.
pub fn plot_run(dir: &Path) -> Result<Vec<PathBuf>, TuneError> {
    let cfg: serde_json::Value = read_json(&dir.join("config.json"))?;
    let tuner = cfg["tuner"].as_str().unwrap_or("").to_string();
    let name = cfg["args"]["name"].as_str().unwrap_or("").to_string();
    let plots = dir.join("plots");
    std::fs::create_dir_all(&plots).map_err(|e| io_err(&plots, e))?;
    let log = if tuner == "learn" {
        "generations.csv"
    } else {
        "log.csv"
    };
    let (header, rows) = read_csv(&dir.join(log))?;
    let verification: Option<Verification> = read_json(&dir.join("verification.json")).ok();
    let note = verification
        .as_ref()
        .map(|v| format!("verification, tuned vs start: {}", v.short()));
    let mut files = vec![];
    let col = |n: &str| column(&header, &rows, n).unwrap_or_default();
    match tuner.as_str() {
        "ga" => {
            let chart = LineChart {
                title: format!("GA fitness per generation ({name})"),
                note,
                x_label: "generation".into(),
                y_label: "score against the reference".into(),
                xs: col("generation"),
                series: vec![
                    Series {
                        name: "best".into(),
                        ys: col("best"),
                        color: PALETTE[2],
                    },
                    Series {
                        name: "mean".into(),
                        ys: col("mean"),
                        color: PALETTE[0],
                    },
                    Series {
                        name: "worst".into(),
                        ys: col("worst"),
                        color: PALETTE[3],
                    },
                ],
                hline: verification.as_ref().map(|v| {
                    (
                        v.stats.score,
                        format!("verification score {:.3}", v.stats.score),
                    )
                }),
                legend: true,
            };
            files.extend(line_chart(&plots.join("fitness"), &chart)?);
            files.extend(trajectories(dir, &plots, "GA", &name, None)?);
        }
        "spsa" => {
            let xs = col("iteration");
            let score = col("score");
            // running mean over 25 iterations: single pairs are too noisy to read
            let w = 25usize;
            let smooth: Vec<f64> = (0..score.len())
                .map(|i| {
                    let lo = i.saturating_sub(w - 1);
                    let s = &score[lo..=i];
                    s.iter().sum::<f64>() / s.len() as f64
                })
                .collect();
            // Score and distance have different units, so they get a chart each.
            let chart = LineChart {
                title: format!("SPSA: θ+ against θ− ({name})"),
                note: note.clone(),
                x_label: "iteration".into(),
                y_label: "score of θ+ (running mean of 25)".into(),
                xs: xs.clone(),
                series: vec![Series {
                    name: "θ+ score".into(),
                    ys: smooth,
                    color: PALETTE[0],
                }],
                hline: Some((0.5, "θ+ level with θ−".into())),
                legend: false,
            };
            files.extend(line_chart(&plots.join("fitness"), &chart)?);
            let chart = LineChart {
                title: format!("SPSA: distance from the start ({name})"),
                note: note.clone(),
                x_label: "iteration".into(),
                y_label: "distance from the start (steps)".into(),
                xs: xs.clone(),
                series: vec![Series {
                    name: "distance".into(),
                    ys: col("distance"),
                    color: PALETTE[1],
                }],
                hline: None,
                legend: false,
            };
            files.extend(line_chart(&plots.join("distance"), &chart)?);
            files.extend(trajectories(dir, &plots, "SPSA", &name, note)?);
        }
        "learn" => {
            // the climb: the Elo of the accepted generations, added up
            let mut climb = 0.0;
            let total: Vec<f64> = col("elo")
                .iter()
                .zip(col("accepted"))
                .map(|(e, a)| {
                    if a > 0.5 {
                        climb += e;
                    }
                    climb
                })
                .collect();
            let chart = LineChart {
                title: format!("Learning loop: Elo climbed per generation ({name})"),
                note,
                x_label: "generation".into(),
                y_label: "Elo".into(),
                xs: col("generation"),
                series: vec![
                    Series {
                        name: "climb (accepted gates added up)".into(),
                        ys: total,
                        color: PALETTE[0],
                    },
                    Series {
                        name: "gate against the best".into(),
                        ys: col("elo"),
                        color: PALETTE[1],
                    },
                ],
                hline: None,
                legend: true,
            };
            files.extend(line_chart(&plots.join("elo"), &chart)?);
        }
        "texel" | "nnue" => {
            let what = if tuner == "texel" { "Texel" } else { "Network" };
            let chart = LineChart {
                title: format!("{what} loss per epoch ({name})"),
                note,
                x_label: "epoch".into(),
                y_label: "mean squared error".into(),
                xs: col("epoch"),
                series: vec![
                    Series {
                        name: "train".into(),
                        ys: col("train_loss"),
                        color: PALETTE[0],
                    },
                    Series {
                        name: "validation".into(),
                        ys: col("val_loss"),
                        color: PALETTE[1],
                    },
                ],
                hline: None,
                legend: true,
            };
            files.extend(line_chart(&plots.join("loss"), &chart)?);
        }
        other => {
            return Err(TuneError::Plot(format!(
                "unknown tuner '{other}' in config.json"
            )));
        }
    }
    let space = cfg["args"]["space"].as_str().unwrap_or("eval");
    if space == "eval" && dir.join("best.json").exists() {
        let start = ParamSet::load(SpaceKind::Eval, &dir.join("start.json"))?;
        let best = ParamSet::load(SpaceKind::Eval, &dir.join("best.json"))?;
        files.extend(heat_maps(&plots, &start.genes(), &best.genes())?);
    }
    Ok(files)
}

/// The parameter trajectories of `params.csv` (first column the step, then one column per
/// tuned parameter): one chart of the ten that moved most, and for an engine run (a handful of
/// options) one chart per option with its value. No file, no chart.
fn trajectories(
    dir: &Path,
    plots: &Path,
    tuner: &str,
    name: &str,
    note: Option<String>,
) -> Result<Vec<PathBuf>, TuneError> {
    let Ok((ph, prow)) = read_csv(&dir.join("params.csv")) else {
        return Ok(Vec::new());
    };
    let mut files = Vec::new();
    let start: Vec<f64> = prow.first().cloned().unwrap_or_default();
    let xs: Vec<f64> = prow
        .iter()
        .map(|r| r.first().copied().unwrap_or(0.0))
        .collect();
    let x_label = ph.first().cloned().unwrap_or_default();
    // the parameters that moved most, relative to where they began
    let mut moved: Vec<(usize, f64)> = (1..ph.len())
        .map(|j| {
            let last = prow.last().and_then(|r| r.get(j)).copied().unwrap_or(0.0);
            (j, (last - start.get(j).copied().unwrap_or(0.0)).abs())
        })
        .collect();
    moved.sort_by(|a, b| b.1.total_cmp(&a.1));
    let series: Vec<Series> = moved
        .iter()
        .take(10)
        .enumerate()
        .map(|(k, &(j, _))| Series {
            name: ph[j].clone(),
            ys: prow
                .iter()
                .map(|r| {
                    r.get(j).copied().unwrap_or(f64::NAN) - start.get(j).copied().unwrap_or(0.0)
                })
                .collect(),
            color: PALETTE[k % PALETTE.len()],
        })
        .collect();
    let chart = LineChart {
        title: format!(
            "{tuner} parameter trajectories, {} most moved ({name})",
            series.len()
        ),
        note: note.clone(),
        x_label: x_label.clone(),
        y_label: "change from the first row".into(),
        xs: xs.clone(),
        series,
        hline: None,
        legend: true,
    };
    files.extend(line_chart(&plots.join("trajectories"), &chart)?);
    let cfg: serde_json::Value = read_json(&dir.join("config.json")).unwrap_or_default();
    if cfg["args"]["space"] == "engine" {
        for (j, option) in ph.iter().enumerate().skip(1) {
            let slug: String = option
                .chars()
                .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
                .collect();
            let chart = LineChart {
                title: format!("{tuner}: option {option} ({name})"),
                note: note.clone(),
                x_label: x_label.clone(),
                y_label: "value".into(),
                xs: xs.clone(),
                series: vec![Series {
                    name: option.clone(),
                    ys: prow
                        .iter()
                        .map(|r| r.get(j).copied().unwrap_or(f64::NAN))
                        .collect(),
                    color: PALETTE[0],
                }],
                hline: None,
                legend: false,
            };
            files.extend(line_chart(
                &plots.join(format!("option-{j:02}-{slug}")),
                &chart,
            )?);
        }
    }
    Ok(files)
}

/// Plots at the end of a run; a failure is reported, not fatal (the data files are the record).
pub fn plot_run_quiet(dir: &Path) {
    match plot_run(dir) {
        Ok(files) => {
            if let Some(first) = files.first() {
                crate::outln!("plot: {}", first.display());
            }
        }
        Err(e) => eprintln!("warning: plots not written: {e}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn charts_and_heat_maps_are_written() {
        let dir = std::env::temp_dir().join(format!("xqtune-plot-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let chart = LineChart {
            title: "test".into(),
            note: Some("verification: +12.0 ± 8.0 Elo".into()),
            x_label: "x".into(),
            y_label: "y".into(),
            xs: vec![0.0, 1.0, 2.0],
            series: vec![Series {
                name: "a".into(),
                ys: vec![0.4, 0.5, 0.6],
                color: PALETTE[0],
            }],
            hline: Some((0.55, "verification".into())),
            legend: true,
        };
        let files = line_chart(&dir.join("c"), &chart).unwrap();
        for f in &files {
            assert!(
                std::fs::metadata(f).unwrap().len() > 1000,
                "{}",
                f.display()
            );
        }
        let start = crate::tune::export::tests::sample_genes();
        let mut tuned = start.clone();
        for g in tuned.iter_mut().skip(1) {
            g.value = -g.value / 2;
        }
        let maps = heat_maps(&dir, &start, &tuned).unwrap();
        assert_eq!(maps.len(), 4);
        for f in &maps {
            assert!(std::fs::metadata(f).unwrap().len() > 1000);
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
