//! Plots as standalone SVG, written by hand so that the same data always gives the same bytes
//! and nothing outside Rust is needed: line and scatter series, bars, reference lines for the
//! paper's values, axes with round ticks, a legend.

use std::fmt::Write as _;

/// A colour-blind-safe palette (Okabe & Ito).
const PALETTE: [&str; 8] = [
    "#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#000000", "#F0E442",
];

/// How a series is drawn.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Style {
    /// Points joined by lines.
    Line,
    /// Points only.
    Points,
    /// Points joined by lines, with markers.
    LinePoints,
}

/// One data series.
#[derive(Clone, Debug, PartialEq)]
pub struct Series {
    /// Legend label.
    pub label: String,
    /// (x, y) points.
    pub points: Vec<(f64, f64)>,
    /// How it is drawn.
    pub style: Style,
}

/// A horizontal reference line (a value the paper reports).
#[derive(Clone, Debug, PartialEq)]
pub struct Reference {
    /// Label drawn beside it.
    pub label: String,
    /// The y value.
    pub y: f64,
}

/// A plot with axes.
#[derive(Clone, Debug, PartialEq)]
pub struct Plot {
    /// Title above the plot.
    pub title: String,
    /// x-axis label, with unit.
    pub x_label: String,
    /// y-axis label, with unit.
    pub y_label: String,
    /// The data.
    pub series: Vec<Series>,
    /// Paper values as dashed lines.
    pub references: Vec<Reference>,
    /// Force the y axis to start at zero.
    pub y_from_zero: bool,
}

const W: f64 = 640.0;
const H: f64 = 400.0;
const LEFT: f64 = 70.0;
const RIGHT: f64 = 170.0;
const TOP: f64 = 40.0;
const BOTTOM: f64 = 55.0;

/// Round tick positions covering [lo, hi], about `n` of them.
pub fn ticks(lo: f64, hi: f64, n: usize) -> Vec<f64> {
    if !(lo.is_finite() && hi.is_finite()) || hi <= lo {
        return vec![lo];
    }
    let raw = (hi - lo) / n.max(1) as f64;
    let mag = 10f64.powf(raw.log10().floor());
    let step = [1.0, 2.0, 2.5, 5.0, 10.0]
        .iter()
        .map(|m| m * mag)
        .find(|s| *s >= raw)
        .unwrap_or(10.0 * mag);
    let first = (lo / step).ceil() * step;
    (0..=n * 3)
        .map(|i| first + i as f64 * step)
        .take_while(|v| *v <= hi + step * 1e-9)
        .collect()
}

fn label(v: f64) -> String {
    crate::claim::fmt_num(v)
}

fn escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// Opens the SVG document with a white background and the title.
fn open(s: &mut String, title: &str) {
    let pw = W - LEFT - RIGHT;
    let _ = write!(
        s,
        r#"<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {W} {H}" width="{W}" height="{H}" font-family="Helvetica, Arial, sans-serif" font-size="12">"#
    );
    let _ = write!(s, r##"<rect width="{W}" height="{H}" fill="#ffffff"/>"##);
    let _ = write!(
        s,
        r#"<text x="{}" y="22" text-anchor="middle" font-size="14" font-weight="bold">{}</text>"#,
        LEFT + pw / 2.0,
        escape(title)
    );
}

/// Horizontal grid lines with their labels at `ys`, placed by `sy`.
fn y_grid(s: &mut String, ys: &[f64], sy: &dyn Fn(f64) -> f64) {
    let pw = W - LEFT - RIGHT;
    for &t in ys {
        let y = sy(t);
        let _ = write!(
            s,
            r##"<line x1="{LEFT}" y1="{y:.2}" x2="{:.2}" y2="{y:.2}" stroke="#e5e5e5"/>"##,
            LEFT + pw
        );
        let _ = write!(
            s,
            r#"<text x="{:.2}" y="{:.2}" text-anchor="end">{}</text>"#,
            LEFT - 6.0,
            y + 4.0,
            label(t)
        );
    }
}

/// The plot area's border and the y-axis label.
fn frame(s: &mut String, y_label: &str) {
    let pw = W - LEFT - RIGHT;
    let ph = H - TOP - BOTTOM;
    let _ = write!(
        s,
        r##"<rect x="{LEFT}" y="{TOP}" width="{pw}" height="{ph}" fill="none" stroke="#333333"/>"##
    );
    let _ = write!(
        s,
        r#"<text transform="translate(18,{:.2}) rotate(-90)" text-anchor="middle">{}</text>"#,
        TOP + ph / 2.0,
        escape(y_label)
    );
}

/// Dashed reference lines, each labelled just above its right end inside the plot area (the
/// legend owns the column to the right of it).
fn references(s: &mut String, refs: &[Reference], sy: &dyn Fn(f64) -> f64) {
    let pw = W - LEFT - RIGHT;
    for r in refs {
        let y = sy(r.y);
        let _ = write!(
            s,
            r##"<line x1="{LEFT}" y1="{y:.2}" x2="{:.2}" y2="{y:.2}" stroke="#555555" stroke-dasharray="6,4"/>"##,
            LEFT + pw
        );
        // Above the line, or below it when the line hugs the top of the plot area.
        let ty = if y - 4.0 < TOP + 12.0 {
            y + 14.0
        } else {
            y - 4.0
        };
        let _ = write!(
            s,
            r##"<text x="{:.2}" y="{ty:.2}" text-anchor="end" fill="#555555" stroke="#ffffff" stroke-width="3" paint-order="stroke">{}</text>"##,
            LEFT + pw - 4.0,
            escape(&r.label)
        );
    }
}

impl Plot {
    /// A plot with no data yet.
    pub fn new(title: &str, x_label: &str, y_label: &str) -> Plot {
        Plot {
            title: title.into(),
            x_label: x_label.into(),
            y_label: y_label.into(),
            series: Vec::new(),
            references: Vec::new(),
            y_from_zero: true,
        }
    }

    /// Adds a series.
    pub fn series(mut self, label: &str, style: Style, points: Vec<(f64, f64)>) -> Plot {
        self.series.push(Series {
            label: label.into(),
            points,
            style,
        });
        self
    }

    /// Adds a reference line.
    pub fn reference(mut self, label: &str, y: f64) -> Plot {
        self.references.push(Reference {
            label: label.into(),
            y,
        });
        self
    }

    fn bounds(&self) -> (f64, f64, f64, f64) {
        let pts = self
            .series
            .iter()
            .flat_map(|s| s.points.iter())
            .filter(|(x, y)| x.is_finite() && y.is_finite());
        let (mut x0, mut x1, mut y0, mut y1) = (
            f64::INFINITY,
            f64::NEG_INFINITY,
            f64::INFINITY,
            f64::NEG_INFINITY,
        );
        for &(x, y) in pts {
            x0 = x0.min(x);
            x1 = x1.max(x);
            y0 = y0.min(y);
            y1 = y1.max(y);
        }
        for r in &self.references {
            y0 = y0.min(r.y);
            y1 = y1.max(r.y);
        }
        if !x0.is_finite() {
            (x0, x1) = (0.0, 1.0);
        }
        if !y0.is_finite() {
            (y0, y1) = (0.0, 1.0);
        }
        if self.y_from_zero && y0 > 0.0 {
            y0 = 0.0;
        }
        if x1 <= x0 {
            x1 = x0 + 1.0;
        }
        if y1 <= y0 {
            y1 = y0 + 1.0;
        }
        let pad = (y1 - y0) * 0.05;
        (x0, x1, y0, y1 + pad)
    }

    /// The plot as an SVG document.
    pub fn to_svg(&self) -> String {
        let (x0, x1, y0, y1) = self.bounds();
        let pw = W - LEFT - RIGHT;
        let ph = H - TOP - BOTTOM;
        let sx = |x: f64| LEFT + (x - x0) / (x1 - x0) * pw;
        let sy = |y: f64| TOP + ph - (y - y0) / (y1 - y0) * ph;
        let mut s = String::new();
        open(&mut s, &self.title);
        for t in ticks(x0, x1, 6) {
            let x = sx(t);
            let _ = write!(
                s,
                r##"<line x1="{x:.2}" y1="{TOP}" x2="{x:.2}" y2="{:.2}" stroke="#e5e5e5"/>"##,
                TOP + ph
            );
            let _ = write!(
                s,
                r#"<text x="{x:.2}" y="{:.2}" text-anchor="middle">{}</text>"#,
                TOP + ph + 16.0,
                label(t)
            );
        }
        y_grid(&mut s, &ticks(y0, y1, 5), &sy);
        frame(&mut s, &self.y_label);
        let _ = write!(
            s,
            r#"<text x="{:.2}" y="{:.2}" text-anchor="middle">{}</text>"#,
            LEFT + pw / 2.0,
            H - 12.0,
            escape(&self.x_label)
        );
        references(&mut s, &self.references, &sy);
        for (i, ser) in self.series.iter().enumerate() {
            let colour = PALETTE[i % PALETTE.len()];
            let pts: Vec<(f64, f64)> = ser
                .points
                .iter()
                .filter(|(x, y)| x.is_finite() && y.is_finite())
                .map(|&(x, y)| (sx(x), sy(y)))
                .collect();
            if matches!(ser.style, Style::Line | Style::LinePoints) && pts.len() > 1 {
                let d: Vec<String> = pts.iter().map(|(x, y)| format!("{x:.2},{y:.2}")).collect();
                let _ = write!(
                    s,
                    r#"<polyline points="{}" fill="none" stroke="{colour}" stroke-width="1.6"/>"#,
                    d.join(" ")
                );
            }
            if matches!(ser.style, Style::Points | Style::LinePoints) {
                for (x, y) in &pts {
                    let _ = write!(
                        s,
                        r#"<circle cx="{x:.2}" cy="{y:.2}" r="3" fill="{colour}"/>"#
                    );
                }
            }
            let ly = TOP + 10.0 + i as f64 * 18.0;
            let lx = W - RIGHT + 20.0;
            let _ = write!(
                s,
                r#"<rect x="{lx}" y="{:.2}" width="14" height="4" fill="{colour}"/>"#,
                ly - 4.0
            );
            let _ = write!(
                s,
                r#"<text x="{:.2}" y="{:.2}">{}</text>"#,
                lx + 20.0,
                ly + 1.0,
                escape(&ser.label)
            );
        }
        s.push_str("</svg>\n");
        s
    }
}

/// A bar chart: one group per category, one bar per series within it.
#[derive(Clone, Debug, PartialEq)]
pub struct Bars {
    /// Title.
    pub title: String,
    /// y-axis label, with unit.
    pub y_label: String,
    /// Category names along x.
    pub categories: Vec<String>,
    /// (label, one value per category).
    pub series: Vec<(String, Vec<f64>)>,
    /// Paper values as dashed lines.
    pub references: Vec<Reference>,
}

impl Bars {
    /// The chart as an SVG document.
    pub fn to_svg(&self) -> String {
        let mut y1: f64 = self
            .series
            .iter()
            .flat_map(|(_, v)| v.iter().copied())
            .filter(|v| v.is_finite())
            .fold(0.0, f64::max);
        for r in &self.references {
            y1 = y1.max(r.y);
        }
        if y1 <= 0.0 {
            y1 = 1.0;
        }
        y1 *= 1.08;
        let pw = W - LEFT - RIGHT;
        let ph = H - TOP - BOTTOM;
        let sy = |y: f64| TOP + ph - y / y1 * ph;
        let mut s = String::new();
        open(&mut s, &self.title);
        y_grid(&mut s, &ticks(0.0, y1, 5), &sy);
        let n = self.categories.len().max(1) as f64;
        let group = pw / n;
        let k = self.series.len().max(1) as f64;
        let bar = group * 0.8 / k;
        for (ci, cat) in self.categories.iter().enumerate() {
            let gx = LEFT + ci as f64 * group;
            let _ = write!(
                s,
                r#"<text x="{:.2}" y="{:.2}" text-anchor="middle">{}</text>"#,
                gx + group / 2.0,
                TOP + ph + 16.0,
                escape(cat)
            );
            for (si, (_, vals)) in self.series.iter().enumerate() {
                let v = vals.get(ci).copied().unwrap_or(0.0);
                if !v.is_finite() {
                    continue;
                }
                let x = gx + group * 0.1 + si as f64 * bar;
                let y = sy(v.max(0.0));
                let _ = write!(
                    s,
                    r#"<rect x="{x:.2}" y="{y:.2}" width="{:.2}" height="{:.2}" fill="{}"/>"#,
                    bar * 0.95,
                    TOP + ph - y,
                    PALETTE[si % PALETTE.len()]
                );
            }
        }
        frame(&mut s, &self.y_label);
        references(&mut s, &self.references, &sy);
        for (i, (lab, _)) in self.series.iter().enumerate() {
            let ly = TOP + 10.0 + i as f64 * 18.0 + 60.0;
            let lx = W - RIGHT + 20.0;
            let _ = write!(
                s,
                r#"<rect x="{lx}" y="{:.2}" width="14" height="10" fill="{}"/>"#,
                ly - 8.0,
                PALETTE[i % PALETTE.len()]
            );
            let _ = write!(
                s,
                r#"<text x="{:.2}" y="{:.2}">{}</text>"#,
                lx + 20.0,
                ly + 1.0,
                escape(lab)
            );
        }
        s.push_str("</svg>\n");
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ticks_are_round_and_cover_the_range() {
        assert_eq!(ticks(0.0, 10.0, 5), vec![0.0, 2.0, 4.0, 6.0, 8.0, 10.0]);
        assert_eq!(ticks(0.0, 1.0, 4), vec![0.0, 0.25, 0.5, 0.75, 1.0]);
        assert_eq!(ticks(3.0, 3.0, 4), vec![3.0]);
    }

    #[test]
    fn a_plot_is_well_formed_svg_with_every_series_in_the_legend() {
        let p = Plot::new("t <1>", "time (s)", "rate (Mbit/s)")
            .series("a", Style::Line, vec![(0.0, 1.0), (1.0, 2.0)])
            .series("b", Style::Points, vec![(0.5, 1.5)])
            .reference("paper", 1.8);
        let svg = p.to_svg();
        assert!(svg.starts_with("<svg") && svg.ends_with("</svg>\n"));
        assert!(svg.contains("t &lt;1&gt;"));
        assert_eq!(svg.matches("<polyline").count(), 1);
        assert_eq!(svg.matches("<circle").count(), 1);
        assert!(svg.contains(">paper</text>"));
        assert_eq!(p.to_svg(), svg, "deterministic");
    }
}
