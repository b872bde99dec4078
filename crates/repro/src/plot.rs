//! Plots as standalone SVG, written by hand so that the same data always gives the same bytes
//! and nothing outside Rust is needed: line and scatter series with their spread over seeds
//! (a band or whiskers), the paper's own points beside concord's, bars, reference lines for the
//! paper's values, linear or logarithmic axes with round ticks, a legend beside the plot area
//! (never over the data).

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
    /// Points joined by lines, with markers (up to 60 points; a longer series is a line).
    LinePoints,
    /// The paper's values: hollow diamonds joined by a dashed line, in grey.
    Paper,
}

/// How an axis maps values to positions.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scale {
    /// Evenly spaced values.
    Linear,
    /// Evenly spaced powers of 10, ticks at 1, 10, 100 (and 2, 5 within a short range);
    /// values at or below zero are left out.
    Log10,
    /// Evenly spaced powers of 2, ticks at ... 0.25, 0.5, 1, 2, 4 ...; values at or below
    /// zero are left out.
    Log2,
}

impl Scale {
    /// The position of `v` along the axis before scaling to pixels; NaN if it has none.
    fn at(self, v: f64) -> f64 {
        match self {
            Scale::Linear => v,
            Scale::Log10 if v > 0.0 => v.log10(),
            Scale::Log2 if v > 0.0 => v.log2(),
            _ => f64::NAN,
        }
    }

    /// The value at position `p` (the inverse of [`Scale::at`]).
    fn value(self, p: f64) -> f64 {
        match self {
            Scale::Linear => p,
            Scale::Log10 => 10f64.powf(p),
            Scale::Log2 => 2f64.powf(p),
        }
    }

    /// Major ticks (labelled) and minor ticks (grid only), as values, for positions
    /// [`lo`, `hi`].
    fn ticks(self, lo: f64, hi: f64, n: usize) -> (Vec<f64>, Vec<f64>) {
        match self {
            Scale::Linear => (ticks(lo, hi, n), Vec::new()),
            Scale::Log2 => {
                let major = (lo.ceil() as i32..=hi.floor() as i32)
                    .map(|e| 2f64.powi(e))
                    .collect();
                (major, Vec::new())
            }
            Scale::Log10 => {
                let (mut major, mut minor) = (Vec::new(), Vec::new());
                // One decade or less: label 2 and 5 too, or the axis has two labels only.
                let short = hi - lo <= 1.0 + 1e-9;
                for e in (lo.floor() as i32)..=(hi.ceil() as i32) {
                    for m in 1..10 {
                        let v = f64::from(m) * 10f64.powi(e);
                        let p = v.log10();
                        if p < lo - 1e-9 || p > hi + 1e-9 {
                            continue;
                        }
                        if m == 1 || (short && (m == 2 || m == 5)) {
                            major.push(v);
                        } else {
                            minor.push(v);
                        }
                    }
                }
                (major, minor)
            }
        }
    }
}

/// An axis label that names exponents (`"bandwidth (Mbit/s, log10)"`,
/// `"probes per RTT, log2 (...)"`): the axis those exponents stand for, and the label without
/// the exponent note. Points given as exponents are drawn at their values on that log axis.
fn exponent_axis(label: &str) -> Option<(Scale, String)> {
    for (note, scale) in [(", log10", Scale::Log10), (", log2", Scale::Log2)] {
        if let Some(at) = label.find(note) {
            let head = &label[..at];
            let tail = &label[at + note.len()..];
            // "(unit, log10)" keeps its closing parenthesis; ", log2 (explanation)" loses the
            // explanation with it.
            let rest = if tail.starts_with(')') { ")" } else { "" };
            return Some((scale, format!("{head}{rest}")));
        }
    }
    None
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
    /// The spread over seeds at each point, `(low, high)` in y units, index for index with
    /// `points` (a band for lines, whiskers for markers); empty for none.
    pub spread: Vec<(f64, f64)>,
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
    /// Force the y axis to start at zero (linear y axes only).
    pub y_from_zero: bool,
    /// The x axis's scale.
    pub x_scale: Scale,
    /// The y axis's scale.
    pub y_scale: Scale,
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

/// The dash patterns of reference lines, one per line in turn, so that two of them can be told
/// apart in the legend.
const REFERENCE_DASHES: [&str; 4] = ["6,4", "2,3", "10,3,2,3", "1,5"];

/// Dashed reference lines across the plot area; their labels go in the legend.
fn references(s: &mut String, refs: &[Reference], sy: &dyn Fn(f64) -> f64) {
    let pw = W - LEFT - RIGHT;
    for (i, r) in refs.iter().enumerate() {
        let y = sy(r.y);
        if !y.is_finite() {
            continue;
        }
        let dash = REFERENCE_DASHES[i % REFERENCE_DASHES.len()];
        let _ = write!(
            s,
            r##"<line x1="{LEFT}" y1="{y:.2}" x2="{:.2}" y2="{y:.2}" stroke="#555555" stroke-dasharray="{dash}"/>"##,
            LEFT + pw
        );
    }
}

/// Legend text lines of at most this many characters.
const LEGEND_CHARS: usize = 24;

/// `text` broken at spaces into lines of at most [`LEGEND_CHARS`] characters (a longer word
/// keeps its own line).
fn wrap(text: &str) -> Vec<String> {
    let mut lines: Vec<String> = Vec::new();
    for word in text.split_whitespace() {
        match lines.last_mut() {
            Some(l) if l.chars().count() + 1 + word.chars().count() <= LEGEND_CHARS => {
                l.push(' ');
                l.push_str(word);
            }
            _ => lines.push(word.to_string()),
        }
    }
    lines
}

/// One legend entry: a key drawn by `key` at (x, y) and the label wrapped beside it; returns
/// the y of the next entry. Entries stop at the bottom of the plot area.
fn legend_entry(s: &mut String, y: f64, label: &str, key: &dyn Fn(&mut String, f64, f64)) -> f64 {
    let lx = W - RIGHT + 14.0;
    let lines = wrap(label);
    if y + 14.0 * lines.len() as f64 > H - BOTTOM + 20.0 {
        return y;
    }
    key(s, lx, y);
    for (i, l) in lines.iter().enumerate() {
        let _ = write!(
            s,
            r#"<text x="{:.2}" y="{:.2}">{}</text>"#,
            lx + 24.0,
            y + 4.0 + 14.0 * i as f64,
            escape(l)
        );
    }
    y + 14.0 * lines.len() as f64 + 6.0
}

/// The legend key of the `i`th reference line.
fn reference_key(s: &mut String, x: f64, y: f64, i: usize) {
    let dash = REFERENCE_DASHES[i % REFERENCE_DASHES.len()];
    let _ = write!(
        s,
        r##"<line x1="{x:.2}" y1="{y:.2}" x2="{:.2}" y2="{y:.2}" stroke="#555555" stroke-dasharray="{dash}"/>"##,
        x + 18.0
    );
}

/// A hollow diamond of half-width `r` at (x, y).
fn diamond(s: &mut String, x: f64, y: f64, r: f64, colour: &str) {
    let _ = write!(
        s,
        r##"<path d="M{x:.2},{:.2} L{:.2},{y:.2} L{x:.2},{:.2} L{:.2},{y:.2} Z" fill="#ffffff" stroke="{colour}" stroke-width="1.5"/>"##,
        y - r,
        x + r,
        y + r,
        x - r
    );
}

/// The most points a [`Style::LinePoints`] series marks; a longer one is drawn as a line.
const MAX_LINE_MARKERS: usize = 60;

/// The most marked series drawn in layers of decreasing width.
const MAX_LAYERED: usize = 4;

/// The colour of the paper's series.
const PAPER_COLOUR: &str = "#777777";

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
            x_scale: Scale::Linear,
            y_scale: Scale::Linear,
        }
    }

    /// Adds a series.
    pub fn series(mut self, label: &str, style: Style, points: Vec<(f64, f64)>) -> Plot {
        self.series.push(Series {
            label: label.into(),
            points,
            style,
            spread: Vec::new(),
        });
        self
    }

    /// Adds a series with its spread over seeds: `(x, mean, low, high)` per point, e.g. the
    /// mean with a confidence interval or the range over seeds.
    pub fn series_with_spread(
        mut self,
        label: &str,
        style: Style,
        points: Vec<(f64, f64, f64, f64)>,
    ) -> Plot {
        self.series.push(Series {
            label: label.into(),
            points: points.iter().map(|&(x, y, _, _)| (x, y)).collect(),
            style,
            spread: points.iter().map(|&(_, _, lo, hi)| (lo, hi)).collect(),
        });
        self
    }

    /// Adds the paper's values, drawn as hollow grey diamonds beside concord's series.
    pub fn paper(self, label: &str, points: Vec<(f64, f64)>) -> Plot {
        self.series(label, Style::Paper, points)
    }

    /// Draws the x axis on a log10 scale (ticks at 1, 10, 100).
    pub fn log_x(mut self) -> Plot {
        self.x_scale = Scale::Log10;
        self
    }

    /// Draws the y axis on a log10 scale (ticks at 1, 10, 100).
    pub fn log_y(mut self) -> Plot {
        self.y_scale = Scale::Log10;
        self.y_from_zero = false;
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

    /// This plot with exponent axes ([`exponent_axis`]) turned into the log axes they stand
    /// for, points and all.
    fn resolved(&self) -> Plot {
        let mut p = self.clone();
        if p.x_scale == Scale::Linear {
            if let Some((scale, label)) = exponent_axis(&p.x_label) {
                p.x_scale = scale;
                p.x_label = label;
                for ser in &mut p.series {
                    for pt in &mut ser.points {
                        pt.0 = scale.value(pt.0);
                    }
                }
            }
        }
        p
    }

    /// The data's extent in axis positions (after the scales): (x0, x1, y0, y1).
    fn bounds(&self) -> (f64, f64, f64, f64) {
        let (xs, ys) = (self.x_scale, self.y_scale);
        let pts = self.series.iter().flat_map(|s| {
            let spread = s.spread.iter().flat_map(|&(lo, hi)| [lo, hi]);
            s.points
                .iter()
                .map(|&(x, y)| (xs.at(x), ys.at(y)))
                .chain(spread.map(|y| (f64::NAN, ys.at(y))))
                .collect::<Vec<_>>()
        });
        let (mut x0, mut x1, mut y0, mut y1) = (
            f64::INFINITY,
            f64::NEG_INFINITY,
            f64::INFINITY,
            f64::NEG_INFINITY,
        );
        for (x, y) in pts {
            if x.is_finite() {
                x0 = x0.min(x);
                x1 = x1.max(x);
            }
            if y.is_finite() {
                y0 = y0.min(y);
                y1 = y1.max(y);
            }
        }
        for r in &self.references {
            let y = ys.at(r.y);
            if y.is_finite() {
                y0 = y0.min(y);
                y1 = y1.max(y);
            }
        }
        if !x0.is_finite() {
            (x0, x1) = (0.0, 1.0);
        }
        if !y0.is_finite() {
            (y0, y1) = (0.0, 1.0);
        }
        if self.y_from_zero && ys == Scale::Linear && y0 > 0.0 {
            y0 = 0.0;
        }
        if x1 <= x0 {
            x1 = x0 + 1.0;
        }
        if y1 <= y0 {
            y1 = y0 + 1.0;
        }
        if xs != Scale::Linear {
            // Whole decades (or octaves) at both ends, so that the outer ticks are labelled.
            (x0, x1) = (x0.floor(), x1.ceil());
        }
        if ys != Scale::Linear {
            (y0, y1) = (y0.floor(), y1.ceil());
            return (x0, x1, y0, y1);
        }
        let pad = (y1 - y0) * 0.05;
        (x0, x1, y0, y1 + pad)
    }

    /// The plot as an SVG document.
    pub fn to_svg(&self) -> String {
        let p = self.resolved();
        let (xs, ys) = (p.x_scale, p.y_scale);
        let (x0, x1, y0, y1) = p.bounds();
        let pw = W - LEFT - RIGHT;
        let ph = H - TOP - BOTTOM;
        let sx = |x: f64| LEFT + (xs.at(x) - x0) / (x1 - x0) * pw;
        let sy = |y: f64| TOP + ph - (ys.at(y) - y0) / (y1 - y0) * ph;
        let mut s = String::new();
        open(&mut s, &p.title);
        let (major, minor) = xs.ticks(x0, x1, 6);
        for t in minor {
            let x = sx(t);
            let _ = write!(
                s,
                r##"<line x1="{x:.2}" y1="{TOP}" x2="{x:.2}" y2="{:.2}" stroke="#f2f2f2"/>"##,
                TOP + ph
            );
        }
        for t in major {
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
        let (major, minor) = ys.ticks(y0, y1, 5);
        for t in minor {
            let y = sy(t);
            let _ = write!(
                s,
                r##"<line x1="{LEFT}" y1="{y:.2}" x2="{:.2}" y2="{y:.2}" stroke="#f2f2f2"/>"##,
                LEFT + pw
            );
        }
        y_grid(&mut s, &major, &sy);
        frame(&mut s, &p.y_label);
        let _ = write!(
            s,
            r#"<text x="{:.2}" y="{:.2}" text-anchor="middle">{}</text>"#,
            LEFT + pw / 2.0,
            H - 12.0,
            escape(&p.x_label)
        );
        references(&mut s, &p.references, &sy);
        let mut ly = TOP + 8.0;
        let mut colour_at = 0;
        // Series of a few marked points often coincide (two schemes both at 100%): each is
        // drawn wider than the ones drawn after it, so that one under another still shows.
        let layered: Vec<&Series> = p
            .series
            .iter()
            .filter(|s| matches!(s.style, Style::Points | Style::LinePoints))
            .collect();
        let layer = |ser: &Series| -> f64 {
            if layered.len() > MAX_LAYERED {
                return 0.0;
            }
            match layered.iter().position(|l| std::ptr::eq(*l, ser)) {
                Some(i) => (layered.len() - 1 - i) as f64,
                None => 0.0,
            }
        };
        for ser in &p.series {
            let under = layer(ser);
            let colour = if ser.style == Style::Paper {
                PAPER_COLOUR
            } else {
                colour_at += 1;
                PALETTE[(colour_at - 1) % PALETTE.len()]
            };
            let drawn: Vec<(usize, f64, f64)> = ser
                .points
                .iter()
                .enumerate()
                .map(|(i, &(x, y))| (i, sx(x), sy(y)))
                .filter(|(_, x, y)| x.is_finite() && y.is_finite())
                .collect();
            // The spread first, under the line and the markers.
            let spread: Vec<(f64, f64, f64)> = drawn
                .iter()
                .filter_map(|&(i, x, _)| {
                    let &(lo, hi) = ser.spread.get(i)?;
                    let (a, b) = (sy(lo), sy(hi));
                    (a.is_finite() && b.is_finite()).then_some((x, a, b))
                })
                .collect();
            if ser.style == Style::Line && spread.len() > 1 {
                let upper = spread.iter().map(|(x, _, b)| format!("{x:.2},{b:.2}"));
                let lower = spread
                    .iter()
                    .rev()
                    .map(|(x, a, _)| format!("{x:.2},{a:.2}"));
                let d: Vec<String> = upper.chain(lower).collect();
                let _ = write!(
                    s,
                    r#"<polygon points="{}" fill="{colour}" fill-opacity="0.18" stroke="none"/>"#,
                    d.join(" ")
                );
            } else {
                for (x, a, b) in &spread {
                    let _ = write!(
                        s,
                        r#"<path d="M{x:.2},{a:.2} V{b:.2} M{:.2},{a:.2} H{:.2} M{:.2},{b:.2} H{:.2}" stroke="{colour}" stroke-width="1.2" fill="none"/>"#,
                        x - 4.0,
                        x + 4.0,
                        x - 4.0,
                        x + 4.0
                    );
                }
            }
            let pts: Vec<(f64, f64)> = drawn.iter().map(|&(_, x, y)| (x, y)).collect();
            if matches!(ser.style, Style::Line | Style::LinePoints | Style::Paper) && pts.len() > 1
            {
                let d: Vec<String> = pts.iter().map(|(x, y)| format!("{x:.2},{y:.2}")).collect();
                let dash = if ser.style == Style::Paper {
                    r#" stroke-dasharray="5,3""#
                } else {
                    ""
                };
                let _ = write!(
                    s,
                    r#"<polyline points="{}" fill="none" stroke="{colour}" stroke-width="{:.1}"{dash}/>"#,
                    d.join(" "),
                    1.6 + 1.6 * under
                );
            }
            // Markers on a line of many points only blot it out: the line alone reads better.
            let markers = ser.style == Style::Points
                || (ser.style == Style::LinePoints && pts.len() <= MAX_LINE_MARKERS);
            if markers {
                for (x, y) in &pts {
                    let _ = write!(
                        s,
                        r#"<circle cx="{x:.2}" cy="{y:.2}" r="{:.1}" fill="{colour}"/>"#,
                        3.0 + 1.5 * under
                    );
                }
            }
            if ser.style == Style::Paper {
                for &(x, y) in &pts {
                    diamond(&mut s, x, y, 4.5, colour);
                }
            }
            let paper = ser.style == Style::Paper;
            ly = legend_entry(&mut s, ly, &ser.label, &|s: &mut String, x: f64, y: f64| {
                if paper {
                    diamond(s, x + 9.0, y, 4.0, colour);
                } else {
                    let _ = write!(
                        s,
                        r#"<rect x="{x:.2}" y="{:.2}" width="18" height="4" fill="{colour}"/>"#,
                        y - 2.0
                    );
                }
            });
        }
        for (i, r) in p.references.iter().enumerate() {
            ly = legend_entry(&mut s, ly, &r.label, &|s: &mut String, x: f64, y: f64| {
                reference_key(s, x, y, i)
            });
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
        let mut ly = TOP + 8.0;
        for (i, (lab, _)) in self.series.iter().enumerate() {
            let colour = PALETTE[i % PALETTE.len()];
            ly = legend_entry(&mut s, ly, lab, &|s: &mut String, x: f64, y: f64| {
                let _ = write!(
                    s,
                    r#"<rect x="{x:.2}" y="{:.2}" width="14" height="10" fill="{colour}"/>"#,
                    y - 5.0
                );
            });
        }
        for (i, r) in self.references.iter().enumerate() {
            ly = legend_entry(&mut s, ly, &r.label, &|s: &mut String, x: f64, y: f64| {
                reference_key(s, x, y, i)
            });
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

    /// The x positions of the labels along the x axis, with their text.
    fn x_labels(svg: &str) -> Vec<(f64, String)> {
        let y = format!(
            r#"y="{:.2}" text-anchor="middle">"#,
            TOP + (H - TOP - BOTTOM) + 16.0
        );
        svg.split("<text x=\"")
            .skip(1)
            .filter(|t| t.contains(&y))
            .map(|t| {
                let x: f64 = t[..t.find('"').expect("x ends")].parse().expect("x");
                let text =
                    t[t.find('>').expect(">") + 1..t.find("</text>").expect("end")].to_string();
                (x, text)
            })
            .collect()
    }

    #[test]
    fn a_log10_axis_has_ticks_at_powers_of_10_evenly_spaced() {
        let svg = Plot::new("t", "bandwidth (Mbit/s)", "u")
            .log_x()
            .series(
                "a",
                Style::LinePoints,
                vec![(1.0, 1.0), (10.0, 2.0), (100.0, 3.0)],
            )
            .to_svg();
        let labels = x_labels(&svg);
        let texts: Vec<&str> = labels.iter().map(|(_, t)| t.as_str()).collect();
        assert_eq!(texts, ["1", "10", "100"]);
        let pw = W - LEFT - RIGHT;
        assert!((labels[0].0 - LEFT).abs() < 0.01);
        assert!(
            (labels[1].0 - (LEFT + pw / 2.0)).abs() < 0.01,
            "10 halfway: {labels:?}"
        );
        assert!((labels[2].0 - (LEFT + pw)).abs() < 0.01);
        // Minor grid lines at 2..9 and 20..90: 16 of them.
        assert_eq!(svg.matches(r##"stroke="#f2f2f2""##).count(), 16);
    }

    #[test]
    fn exponent_axes_are_drawn_as_the_log_axes_they_stand_for() {
        let svg = Plot::new("t", "bandwidth (Mbit/s, log10)", "u")
            .series("a", Style::LinePoints, vec![(0.0, 1.0), (2.0, 2.0)])
            .to_svg();
        let texts: Vec<String> = x_labels(&svg).into_iter().map(|(_, t)| t).collect();
        assert_eq!(texts, ["1", "10", "100"]);
        assert!(
            svg.contains(">bandwidth (Mbit/s)</text>"),
            "the note is gone"
        );
        let svg = Plot::new("t", "probes per RTT, log2 (-2: one every 4 RTTs)", "loss")
            .series("a", Style::LinePoints, vec![(-2.0, 1.0), (4.0, 2.0)])
            .to_svg();
        let texts: Vec<String> = x_labels(&svg).into_iter().map(|(_, t)| t).collect();
        assert_eq!(texts, ["0.25", "0.5", "1", "2", "4", "8", "16"]);
        assert!(svg.contains(">probes per RTT</text>"));
    }

    #[test]
    fn a_short_log10_range_labels_2_and_5_too_and_drops_values_at_or_below_zero() {
        let p = Plot::new("t", "x", "y").log_x().series(
            "a",
            Style::Points,
            vec![(0.0, 1.0), (-1.0, 1.0), (2.0, 1.0), (5.0, 2.0)],
        );
        let svg = p.to_svg();
        let texts: Vec<String> = x_labels(&svg).into_iter().map(|(_, t)| t).collect();
        assert_eq!(texts, ["1", "2", "5", "10"]);
        assert_eq!(
            svg.matches("<circle").count(),
            2,
            "0 and -1 have no place on a log axis"
        );
    }

    #[test]
    fn spread_is_a_band_under_a_line_and_whiskers_on_markers() {
        let pts = vec![(0.0, 1.0, 0.5, 1.5), (1.0, 2.0, 1.8, 2.2)];
        let line = Plot::new("t", "x", "y")
            .series_with_spread("a", Style::Line, pts.clone())
            .to_svg();
        assert_eq!(line.matches("<polygon").count(), 1);
        assert!(line.find("<polygon").expect("band") < line.find("<polyline").expect("line"));
        let marks = Plot::new("t", "x", "y")
            .series_with_spread("a", Style::Points, pts)
            .to_svg();
        assert_eq!(marks.matches(" V").count(), 2, "one whisker per point");
        // The y axis covers the spread, not only the means: it reaches 2.2 plus 5%, and the
        // top whisker ends at 345 - 2.2 / 2.31 x 305 = 54.52 px, inside the plot area.
        assert!(marks.contains("V54.52"), "{marks}");
    }

    #[test]
    fn coinciding_marked_series_are_drawn_in_layers_the_first_widest() {
        let pts = vec![(1.0, 1.0), (2.0, 1.0)];
        let svg = Plot::new("t", "x", "y")
            .series("a", Style::LinePoints, pts.clone())
            .series("b", Style::LinePoints, pts)
            .reference("r1", 0.5)
            .reference("r2", 0.8)
            .to_svg();
        assert!(svg.contains(r#"stroke-width="3.2"/>"#) && svg.contains(r#"stroke-width="1.6"/>"#));
        assert_eq!(
            svg.matches(r#"r="4.5""#).count(),
            2,
            "a's markers under b's"
        );
        assert_eq!(svg.matches(r#"r="3.0""#).count(), 2);
        // Two reference lines, two dash patterns, each in the plot and in the legend.
        assert_eq!(svg.matches(r#"stroke-dasharray="6,4""#).count(), 2);
        assert_eq!(svg.matches(r#"stroke-dasharray="2,3""#).count(), 2);
    }

    #[test]
    fn the_papers_points_are_grey_diamonds_and_the_legend_stays_right_of_the_plot_area() {
        let svg = Plot::new("t", "x", "y")
            .series("concord", Style::LinePoints, vec![(0.0, 1.0), (1.0, 2.0)])
            .paper("paper", vec![(0.0, 1.1), (1.0, 1.9)])
            .reference("a reference line with a long label that wraps", 1.5)
            .to_svg();
        assert_eq!(
            svg.matches(PAPER_COLOUR).count(),
            2 + 1 + 1,
            "line, 2 markers, legend"
        );
        // Every legend text starts right of the plot area.
        let legend_x = W - RIGHT + 14.0 + 24.0;
        for label in [
            "concord",
            "paper",
            "a reference line with a",
            "long label that wraps",
        ] {
            assert!(
                svg.contains(&format!(r#"<text x="{legend_x:.2}" y="#))
                    && svg.contains(&format!(">{label}</text>")),
                "{label}"
            );
        }
    }
}
