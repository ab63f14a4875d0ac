//! The training picture as a hand-written SVG: the loss curve of each run beside the decision
//! boundary (a grid of the model's predictions, coloured by class, with the data on top).
//!
//! Kept small on purpose (it is committed as `docs/train.svg`): each grid row is drawn as runs of
//! one class, not one cell at a time, and each class's points are one `path` of zero-length
//! round-capped segments instead of a `circle` element per point.

use std::fmt::Write as _;

/// One loss curve: a label (the device) and the loss after each epoch.
#[derive(Clone, Debug, PartialEq)]
pub struct Curve {
    /// Shown in the legend.
    pub label: String,
    /// One value per epoch.
    pub losses: Vec<f64>,
}

/// The predictions over a square of the plane, row by row from the top.
#[derive(Clone, Debug, PartialEq)]
pub struct Boundary {
    /// The square's half-width: it spans `[-extent, extent]` on both axes.
    pub extent: f32,
    /// Cells per side.
    pub cells: usize,
    /// The predicted class of each cell, row-major, the first row at `y = +extent`.
    pub classes: Vec<i64>,
}

impl Boundary {
    /// The centres of the cells, in the order `classes` holds them: what to predict.
    pub fn cell_centres(extent: f32, cells: usize) -> Vec<[f32; 2]> {
        let step = 2.0 * extent / cells as f32;
        (0..cells)
            .flat_map(|row| {
                (0..cells).map(move |col| {
                    [
                        -extent + (col as f32 + 0.5) * step,
                        extent - (row as f32 + 0.5) * step,
                    ]
                })
            })
            .collect()
    }
}

/// Light fills for the regions and strong colours for the points, per class.
const REGION: [&str; 2] = ["#dbe7f5", "#fbe3cf"];
const POINT: [&str; 2] = ["#1f5fa8", "#d1620f"];
/// Colours of successive loss curves.
const CURVE: [&str; 3] = ["#222222", "#2a9d4b", "#8e44ad"];

const PANEL: f64 = 380.0;
const MARGIN: f64 = 50.0;

/// The whole picture: `curves` (log-scaled loss) on the left, `boundary` with `points` (and their
/// classes) on the right, `title` above.
pub fn svg(
    title: &str,
    curves: &[Curve],
    boundary: &Boundary,
    points: &[([f32; 2], i64)],
) -> String {
    let width = 2.0 * PANEL + 3.0 * MARGIN;
    let height = PANEL + 2.0 * MARGIN;
    let mut out = String::new();
    let _ = writeln!(
        out,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" viewBox="0 0 {width} {height}" font-family="sans-serif" font-size="12">"#
    );
    let _ = writeln!(out, r#"<rect width="100%" height="100%" fill="white"/>"#);
    let _ = writeln!(
        out,
        r#"<text x="{}" y="24" font-size="15" text-anchor="middle">{}</text>"#,
        width / 2.0,
        escape(title)
    );
    loss_panel(&mut out, curves, MARGIN, MARGIN);
    boundary_panel(&mut out, boundary, points, 2.0 * MARGIN + PANEL, MARGIN);
    out.push_str("</svg>\n");
    out
}

/// The loss curves in a `PANEL`-sized square at `(left, top)`: epochs across, loss on a
/// logarithmic scale (it falls by orders of magnitude).
fn loss_panel(out: &mut String, curves: &[Curve], left: f64, top: f64) {
    let _ = writeln!(
        out,
        r##"<rect x="{left}" y="{top}" width="{PANEL}" height="{PANEL}" fill="none" stroke="#999"/>"##
    );
    let finite = curves
        .iter()
        .flat_map(|c| &c.losses)
        .copied()
        .filter(|l| l.is_finite() && *l > 0.0);
    let (low, high) = finite.fold((f64::INFINITY, 0.0f64), |(lo, hi), l| {
        (lo.min(l), hi.max(l))
    });
    let epochs = curves.iter().map(|c| c.losses.len()).max().unwrap_or(0);
    if epochs == 0 || low > high {
        return;
    }
    // Whole decades around the values, so the ticks are 1, 0.1, 0.01, …
    let (lo_decade, hi_decade) = (
        low.log10().floor(),
        high.log10().ceil().max(low.log10().floor() + 1.0),
    );
    let y_of = |loss: f64| top + PANEL * (hi_decade - loss.log10()) / (hi_decade - lo_decade);
    let x_of = |epoch: usize| left + PANEL * epoch as f64 / (epochs.max(2) - 1) as f64;
    let mut decade = lo_decade;
    while decade <= hi_decade {
        let y = y_of(10f64.powf(decade));
        let _ = writeln!(
            out,
            r##"<line x1="{left}" y1="{y:.1}" x2="{}" y2="{y:.1}" stroke="#eee"/><text x="{}" y="{:.1}" text-anchor="end">{}</text>"##,
            left + PANEL,
            left - 4.0,
            y + 4.0,
            format_decade(decade)
        );
        decade += 1.0;
    }
    for (i, label) in [(0, "1".to_string()), (epochs - 1, epochs.to_string())] {
        let _ = writeln!(
            out,
            r#"<text x="{:.1}" y="{}" text-anchor="middle">{label}</text>"#,
            x_of(i),
            top + PANEL + 16.0
        );
    }
    let _ = writeln!(
        out,
        r#"<text x="{}" y="{}" text-anchor="middle">epoch</text><text x="{}" y="{}" text-anchor="middle" transform="rotate(-90 {} {})">training loss (cross-entropy)</text>"#,
        left + PANEL / 2.0,
        top + PANEL + 32.0,
        left - 36.0,
        top + PANEL / 2.0,
        left - 36.0,
        top + PANEL / 2.0
    );
    for (k, curve) in curves.iter().enumerate() {
        let colour = CURVE[k % CURVE.len()];
        let mut d = String::new();
        for (epoch, &loss) in curve.losses.iter().enumerate() {
            if loss.is_finite() && loss > 0.0 {
                let command = if d.is_empty() { 'M' } else { 'L' };
                let _ = write!(d, "{command}{:.1} {:.1}", x_of(epoch), y_of(loss));
            }
        }
        let _ = writeln!(
            out,
            r#"<path d="{d}" fill="none" stroke="{colour}" stroke-width="1.5"/>"#
        );
        let y = top + 18.0 + 16.0 * k as f64;
        let _ = writeln!(
            out,
            r#"<line x1="{}" y1="{y}" x2="{}" y2="{y}" stroke="{colour}" stroke-width="2"/><text x="{}" y="{}">{}</text>"#,
            left + PANEL - 120.0,
            left + PANEL - 100.0,
            left + PANEL - 94.0,
            y + 4.0,
            escape(&curve.label)
        );
    }
}

/// `10^decade` as a tick label: `1`, `0.1`, `10`, `1e-5`.
fn format_decade(decade: f64) -> String {
    match decade as i32 {
        d @ -3..=3 => format!("{}", 10f64.powi(d)),
        d => format!("1e{d}"),
    }
}

/// The decision regions and the points in a `PANEL`-sized square at `(left, top)`.
fn boundary_panel(
    out: &mut String,
    boundary: &Boundary,
    points: &[([f32; 2], i64)],
    left: f64,
    top: f64,
) {
    let cell = PANEL / boundary.cells as f64;
    let extent = f64::from(boundary.extent);
    // Regions: per row, each run of one class is one rectangle, in one path per class.
    let mut regions = [String::new(), String::new()];
    for (row, classes) in boundary.classes.chunks(boundary.cells).enumerate() {
        let mut start = 0;
        for col in 1..=classes.len() {
            if col == classes.len() || classes[col] != classes[start] {
                let class = classes[start].clamp(0, 1) as usize;
                let _ = write!(
                    regions[class],
                    "M{:.1} {:.1}h{:.1}v{:.1}h-{:.1}z",
                    left + start as f64 * cell,
                    top + row as f64 * cell,
                    (col - start) as f64 * cell,
                    cell,
                    (col - start) as f64 * cell
                );
                start = col;
            }
        }
    }
    for (class, d) in regions.iter().enumerate() {
        // A thin stroke of the fill's colour hides the hairline seams between adjacent runs.
        let _ = writeln!(
            out,
            r#"<path d="{d}" fill="{0}" stroke="{0}" stroke-width="0.5"/>"#,
            REGION[class]
        );
    }
    // Points: a zero-length segment with round caps draws a dot.
    let mut dots = [String::new(), String::new()];
    for &([x, y], class) in points {
        let px = left + PANEL * (f64::from(x) + extent) / (2.0 * extent);
        let py = top + PANEL * (extent - f64::from(y)) / (2.0 * extent);
        let _ = write!(dots[class.clamp(0, 1) as usize], "M{px:.1} {py:.1}h0");
    }
    for (class, d) in dots.iter().enumerate() {
        let _ = writeln!(
            out,
            r#"<path d="{d}" stroke="{}" stroke-width="3.2" stroke-linecap="round"/>"#,
            POINT[class]
        );
    }
    let _ = writeln!(
        out,
        r##"<rect x="{left}" y="{top}" width="{PANEL}" height="{PANEL}" fill="none" stroke="#999"/><text x="{}" y="{}" text-anchor="middle">decision boundary: predicted class (regions), data (dots)</text>"##,
        left + PANEL / 2.0,
        top + PANEL + 16.0
    );
}

/// `text` with XML's special characters escaped.
fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cell_centres_run_row_by_row_from_the_top_left() {
        let c = Boundary::cell_centres(1.0, 2);
        assert_eq!(c, [[-0.5, 0.5], [0.5, 0.5], [-0.5, -0.5], [0.5, -0.5]]);
    }

    #[test]
    fn the_picture_has_a_curve_per_run_regions_as_runs_and_every_point() {
        let boundary = Boundary {
            extent: 1.0,
            cells: 4,
            // Row 0: one run of class 0; row 1: two runs; rows 2, 3: one of class 1 each.
            classes: vec![0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1],
        };
        let curves = [
            Curve {
                label: "cpu".into(),
                losses: vec![0.7, 0.1, 0.01],
            },
            Curve {
                label: "a<b".into(),
                losses: vec![0.7, 0.2, f64::NAN],
            },
        ];
        let points = [([0.0, 0.0], 0), ([0.5, -0.5], 1), ([-1.0, 1.0], 1)];
        let s = svg("t", &curves, &boundary, &points);
        assert!(s.starts_with("<svg") && s.ends_with("</svg>\n"));
        // Two curves (the NaN left out of the second), with their legend, escaped.
        let curve_lines: Vec<&str> = s
            .lines()
            .filter(|l| l.contains(r#"stroke-width="1.5""#))
            .collect();
        assert_eq!(curve_lines.len(), 2);
        assert_eq!(curve_lines[1].matches('L').count(), 1, "{}", curve_lines[1]);
        assert!(!s.contains("NaN"));
        assert!(s.contains("a&lt;b") && !s.contains("a<b"));
        // Runs: 2 of class 0 (rows 0 and 1), 3 of class 1 (rows 1, 2, 3).
        let runs = |fill: &str| {
            let line = s
                .lines()
                .find(|l| l.contains(&format!(r#"fill="{fill}""#)))
                .unwrap();
            line.matches('z').count()
        };
        assert_eq!((runs(REGION[0]), runs(REGION[1])), (2, 3));
        // Three dots; the corner point lands on the panel's corner.
        assert_eq!(s.matches("h0").count(), 3);
        let left = 2.0 * MARGIN + PANEL;
        assert!(s.contains(&format!("M{left:.1} {MARGIN:.1}h0")), "{s}");
        // Ticks at whole decades: 1, 0.1, 0.01.
        for tick in [">1<", ">0.1<", ">0.01<"] {
            assert!(s.contains(tick), "{tick} in {s}");
        }
    }
}
