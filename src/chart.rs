//! Figures from numbers, for every command that draws (a tuning run's curves, a tournament's
//! rating list): line charts and interval charts, each written as PNG (bitmap backend; text
//! drawn with the embedded DejaVu Sans, see assets/DejaVuSans-LICENSE.txt) and SVG. It knows
//! nothing of what the numbers are; its callers (`tune::plot`, `play::tournament`) do.

use plotters::coord::Shift;
use plotters::prelude::*;
use std::path::{Path, PathBuf};
use thiserror::Error;

/// A figure that could not be drawn or written.
#[derive(Debug, Error)]
#[error("{0}")]
pub struct ChartError(pub String);

fn perr<E: std::fmt::Display>(e: E) -> ChartError {
    ChartError(e.to_string())
}

static FONT: &[u8] = include_bytes!("../assets/DejaVuSans.ttf");

/// Registers the embedded font (once) under `sans-serif`.
pub fn ensure_font() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        let _ = plotters::style::register_font("sans-serif", FontStyle::Normal, FONT);
    });
}

/// Ten colours that tell series apart (matplotlib's "tab10").
pub const PALETTE: [RGBColor; 10] = [
    RGBColor(31, 119, 180),
    RGBColor(255, 127, 14),
    RGBColor(44, 160, 44),
    RGBColor(214, 39, 40),
    RGBColor(148, 103, 189),
    RGBColor(140, 86, 75),
    RGBColor(227, 119, 194),
    RGBColor(127, 127, 127),
    RGBColor(188, 189, 34),
    RGBColor(23, 190, 207),
];

/// One line series.
pub struct Series {
    pub name: String,
    pub ys: Vec<f64>,
    pub color: RGBColor,
}

pub struct LineChart {
    pub title: String,
    pub note: Option<String>,
    pub x_label: String,
    pub y_label: String,
    pub xs: Vec<f64>,
    pub series: Vec<Series>,
    /// A labelled horizontal line (e.g. the verification score).
    pub hline: Option<(f64, String)>,
    pub legend: bool,
}

fn range(vals: impl Iterator<Item = f64>) -> (f64, f64) {
    let (mut lo, mut hi) = (f64::INFINITY, f64::NEG_INFINITY);
    for v in vals.filter(|v| v.is_finite()) {
        lo = lo.min(v);
        hi = hi.max(v);
    }
    if !lo.is_finite() {
        return (0.0, 1.0);
    }
    if hi - lo < 1e-12 {
        let d = lo.abs().max(1.0) * 0.05;
        return (lo - d, hi + d);
    }
    let pad = (hi - lo) * 0.06;
    (lo - pad, hi + pad)
}

/// The white page with `note`, if any, on a strip across its top; the area below it.
fn with_note<DB: DrawingBackend>(
    root: DrawingArea<DB, Shift>,
    note: Option<&str>,
) -> Result<DrawingArea<DB, Shift>, ChartError>
where
    DB::ErrorType: 'static,
{
    root.fill(&WHITE).map_err(perr)?;
    let Some(n) = note else { return Ok(root) };
    let (top, rest) = root.split_vertically(34);
    top.draw(&Text::new(
        n.to_string(),
        (12, 10),
        ("sans-serif", 15).into_font().color(&BLACK),
    ))
    .map_err(perr)?;
    Ok(rest)
}

fn draw_lines<DB: DrawingBackend>(
    root: DrawingArea<DB, Shift>,
    c: &LineChart,
) -> Result<(), ChartError>
where
    DB::ErrorType: 'static,
{
    let root = with_note(root, c.note.as_deref())?;
    let (x0, x1) = range(c.xs.iter().copied());
    let (y0, y1) = range(
        c.series
            .iter()
            .flat_map(|s| s.ys.iter().copied())
            .chain(c.hline.iter().map(|h| h.0)),
    );
    let mut chart = ChartBuilder::on(&root)
        .caption(&c.title, ("sans-serif", 22))
        .margin(12)
        .x_label_area_size(40)
        .y_label_area_size(70)
        .build_cartesian_2d(x0..x1, y0..y1)
        .map_err(perr)?;
    // Generations, iterations and epochs are counts: at most as many ticks as whole numbers in
    // the range, so no tick falls between two of them, and labels without decimals.
    let whole_numbers = (x1.floor() - x0.ceil()).max(0.0) as usize + 1;
    // One more decimal than a tenth of the range needs, the same on every label.
    let y_decimals = (-((y1 - y0) / 10.0).log10().floor()).clamp(0.0, 8.0) as usize;
    chart
        .configure_mesh()
        .x_desc(c.x_label.as_str())
        .y_desc(c.y_label.as_str())
        .x_labels(whole_numbers.clamp(2, 12))
        .x_max_light_lines(0)
        .y_max_light_lines(1)
        .y_label_formatter(&|y| format!("{y:.y_decimals$}"))
        .x_label_formatter(&|x| {
            if (x - x.round()).abs() < 1e-9 {
                format!("{}", x.round() as i64)
            } else {
                String::new()
            }
        })
        .label_style(("sans-serif", 13))
        .draw()
        .map_err(perr)?;
    for s in &c.series {
        let pts: Vec<(f64, f64)> =
            c.xs.iter()
                .zip(&s.ys)
                .filter(|(x, y)| x.is_finite() && y.is_finite())
                .map(|(x, y)| (*x, *y))
                .collect();
        let color = s.color;
        let ann = chart
            .draw_series(LineSeries::new(pts.clone(), color.stroke_width(2)))
            .map_err(perr)?;
        if c.legend {
            ann.label(s.name.clone()).legend(move |(x, y)| {
                PathElement::new(vec![(x, y), (x + 18, y)], color.stroke_width(2))
            });
        }
        if pts.len() <= 60 {
            chart
                .draw_series(pts.iter().map(|&p| Circle::new(p, 3, color.filled())))
                .map_err(perr)?;
        }
    }
    if let Some((y, label)) = &c.hline {
        let col = RGBColor(200, 0, 120);
        let ann = chart
            .draw_series(DashedLineSeries::new(
                vec![(x0, *y), (x1, *y)],
                8,
                5,
                col.stroke_width(2),
            ))
            .map_err(perr)?;
        ann.label(label.clone())
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 18, y)], col.stroke_width(2)));
    }
    if c.legend || c.hline.is_some() {
        // The legend goes in the corner with the fewest points under it (its box grows with
        // the number of entries).
        let entries = c.series.len() + usize::from(c.hline.is_some());
        let (box_w, box_h) = (0.3, (0.06 + 0.035 * entries as f64).min(0.6));
        let under = |right: bool, upper: bool| {
            c.series
                .iter()
                .flat_map(|s| c.xs.iter().zip(&s.ys))
                .filter(|(x, y)| {
                    let fx = (**x - x0) / (x1 - x0);
                    let fy = (**y - y0) / (y1 - y0);
                    let in_x = if right { fx > 1.0 - box_w } else { fx < box_w };
                    let in_y = if upper { fy > 1.0 - box_h } else { fy < box_h };
                    in_x && in_y
                })
                .count()
        };
        let corner = [
            (true, true, SeriesLabelPosition::UpperRight),
            (true, false, SeriesLabelPosition::LowerRight),
            (false, true, SeriesLabelPosition::UpperLeft),
            (false, false, SeriesLabelPosition::LowerLeft),
        ]
        .into_iter()
        .min_by_key(|(right, upper, _)| under(*right, *upper))
        .map_or(SeriesLabelPosition::UpperRight, |c| c.2);
        chart
            .configure_series_labels()
            .background_style(WHITE.mix(0.85))
            .border_style(BLACK)
            .label_font(("sans-serif", 13))
            .position(corner)
            .draw()
            .map_err(perr)?;
    }
    root.present().map_err(perr)?;
    Ok(())
}

/// Writes `<stem>.png` and `<stem>.svg`.
pub fn line_chart(stem: &Path, c: &LineChart) -> Result<Vec<PathBuf>, ChartError> {
    ensure_font();
    let png = stem.with_extension("png");
    let svg = stem.with_extension("svg");
    draw_lines(BitMapBackend::new(&png, (1000, 620)).into_drawing_area(), c)?;
    draw_lines(SVGBackend::new(&svg, (1000, 620)).into_drawing_area(), c)?;
    Ok(vec![png, svg])
}

/// One row of an interval chart: a value and its interval.
pub struct IntervalRow {
    pub label: String,
    pub value: f64,
    pub lower: f64,
    pub upper: f64,
}

/// Values with intervals, one row each from the top (a rating list with its 95 % intervals).
pub struct IntervalChart {
    pub title: String,
    pub note: Option<String>,
    pub x_label: String,
    pub rows: Vec<IntervalRow>,
}

fn draw_intervals<DB: DrawingBackend>(
    root: DrawingArea<DB, Shift>,
    c: &IntervalChart,
) -> Result<(), ChartError>
where
    DB::ErrorType: 'static,
{
    use plotters::style::text_anchor::{HPos, Pos, VPos};
    let root = with_note(root, c.note.as_deref())?;
    let n = c.rows.len();
    let (x0, x1) = range(
        c.rows
            .iter()
            .flat_map(|r| [r.value, r.lower, r.upper].into_iter()),
    );
    // Row k (from the top) at y = n - 1 - k.
    let y_of = |k: usize| (n - 1 - k) as f64;
    let label_w = 12
        + 9 * c
            .rows
            .iter()
            .map(|r| r.label.chars().count())
            .max()
            .unwrap_or(4) as u32;
    let mut chart = ChartBuilder::on(&root)
        .caption(&c.title, ("sans-serif", 22))
        .margin(12)
        .x_label_area_size(40)
        .y_label_area_size(label_w.clamp(60, 300))
        .build_cartesian_2d(x0..x1, -0.6..(n as f64 - 0.4))
        .map_err(perr)?;
    chart
        .configure_mesh()
        .x_desc(c.x_label.as_str())
        .y_labels(0)
        .disable_y_mesh()
        .x_max_light_lines(1)
        .x_label_formatter(&|x| format!("{x:.0}"))
        .label_style(("sans-serif", 13))
        .draw()
        .map_err(perr)?;
    let color = PALETTE[0];
    for (k, r) in c.rows.iter().enumerate() {
        let y = y_of(k);
        let (lo, hi) = (r.lower.min(r.value), r.upper.max(r.value));
        if lo.is_finite() && hi.is_finite() {
            chart
                .draw_series(std::iter::once(PathElement::new(
                    vec![(lo, y), (hi, y)],
                    color.stroke_width(3),
                )))
                .map_err(perr)?;
            for end in [lo, hi] {
                chart
                    .draw_series(std::iter::once(PathElement::new(
                        vec![(end, y - 0.15), (end, y + 0.15)],
                        color.stroke_width(2),
                    )))
                    .map_err(perr)?;
            }
        }
        if r.value.is_finite() {
            chart
                .draw_series(std::iter::once(Circle::new(
                    (r.value, y),
                    6,
                    RGBColor(214, 39, 40).filled(),
                )))
                .map_err(perr)?;
            chart
                .draw_series(std::iter::once(Text::new(
                    format!("{:.0} [{:.0}, {:.0}]", r.value, r.lower, r.upper),
                    (r.value, y + 0.32),
                    TextStyle::from(("sans-serif", 13).into_font())
                        .color(&BLACK)
                        .pos(Pos::new(HPos::Center, VPos::Center)),
                )))
                .map_err(perr)?;
        }
        // The row's name left of the plot, in the label area.
        let (px, py) = chart.backend_coord(&(x0, y));
        root.draw(&Text::new(
            r.label.clone(),
            (px - 8, py),
            TextStyle::from(("sans-serif", 15).into_font())
                .color(&BLACK)
                .pos(Pos::new(HPos::Right, VPos::Center)),
        ))
        .map_err(perr)?;
    }
    root.present().map_err(perr)?;
    Ok(())
}

/// Writes `<stem>.png` and `<stem>.svg`.
pub fn interval_chart(stem: &Path, c: &IntervalChart) -> Result<Vec<PathBuf>, ChartError> {
    ensure_font();
    let png = stem.with_extension("png");
    let svg = stem.with_extension("svg");
    let size = (1000, 140 + 56 * c.rows.len().max(1) as u32);
    draw_intervals(BitMapBackend::new(&png, size).into_drawing_area(), c)?;
    draw_intervals(SVGBackend::new(&svg, size).into_drawing_area(), c)?;
    Ok(vec![png, svg])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_interval_chart_is_written() {
        let dir = std::env::temp_dir().join(format!("xqtune-chart-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let rows = vec![
            IntervalRow {
                label: "pikafish".into(),
                value: 310.0,
                lower: 250.0,
                upper: 380.0,
            },
            IntervalRow {
                label: "xq".into(),
                value: 0.0,
                lower: 0.0,
                upper: 0.0,
            },
        ];
        let files = interval_chart(
            &dir.join("ratings"),
            &IntervalChart {
                title: "ratings".into(),
                note: Some("anchor xq=0".into()),
                x_label: "Elo".into(),
                rows,
            },
        )
        .unwrap();
        for f in files {
            assert!(
                std::fs::metadata(&f).unwrap().len() > 1000,
                "{}",
                f.display()
            );
        }
        let svg = std::fs::read_to_string(dir.join("ratings.svg")).unwrap();
        assert!(
            svg.contains("pikafish") && svg.contains("310 [250, 380]"),
            "{svg}"
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
