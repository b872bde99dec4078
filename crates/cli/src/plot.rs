//! `concord plot DIR`: the standard time plots of a `concord run` output directory, as SVG (or
//! PNG, rendered from the SVG by [`crate::png`]) in DIR/plots/: goodput per flow, cwnd per traced
//! flow, queue length per sampled queue, and the CDF of each flow's one-way delay.

use crate::Failure;
use concord_py::tidy::parse_csv;
use concord_repro::plot::{Plot, Style};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// A CSV file of DIR: its header and its rows (`None` if the file is absent).
struct Csv {
    header: Vec<String>,
    rows: Vec<Vec<String>>,
}

impl Csv {
    fn read(path: &Path) -> Result<Option<Csv>, Failure> {
        let text = match std::fs::read_to_string(path) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => {
                return Err(Failure::input(format!(
                    "cannot read {}: {e}; give a directory written by `concord run`",
                    path.display()
                )))
            }
        };
        let mut lines = parse_csv(&text).into_iter();
        let header = lines.next().unwrap_or_default();
        Ok(Some(Csv {
            header,
            rows: lines.collect(),
        }))
    }

    /// The index of column `name`, or an error naming the file.
    fn column(&self, name: &str, file: &str) -> Result<usize, Failure> {
        self.header.iter().position(|h| h == name).ok_or_else(|| {
            Failure::input(format!(
                "{file} has no `{name}` column; give a directory written by `concord run`"
            ))
        })
    }

    /// (key, x, y) of each row, keyed by column `key`, with `x`, `y` scaled.
    fn series(
        &self,
        file: &str,
        key: &str,
        x: &str,
        y: &str,
        y_scale: f64,
    ) -> Result<BTreeMap<String, Vec<(f64, f64)>>, Failure> {
        let (k, xi, yi) = (
            self.column(key, file)?,
            self.column(x, file)?,
            self.column(y, file)?,
        );
        let mut out: BTreeMap<String, Vec<(f64, f64)>> = BTreeMap::new();
        for row in &self.rows {
            let get = |i: usize| row.get(i).and_then(|c| c.parse::<f64>().ok());
            if let (Some(name), Some(xv), Some(yv)) = (row.get(k), get(xi), get(yi)) {
                out.entry(name.clone())
                    .or_default()
                    .push((xv, yv * y_scale));
            }
        }
        Ok(out)
    }
}

/// Flow (or channel) names in natural order: `f2` before `f10`.
fn natural(a: &str, b: &str) -> std::cmp::Ordering {
    let split = |s: &str| {
        let digits = s.trim_start_matches(|c: char| !c.is_ascii_digit());
        let prefix = &s[..s.len() - digits.len()];
        (
            prefix.to_string(),
            digits.parse::<u64>().ok(),
            s.to_string(),
        )
    };
    split(a).cmp(&split(b))
}

fn plot_of(
    title: &str,
    x: &str,
    y: &str,
    style: Style,
    data: BTreeMap<String, Vec<(f64, f64)>>,
) -> Plot {
    let mut names: Vec<&String> = data.keys().collect();
    names.sort_by(|a, b| natural(a, b));
    let mut plot = Plot::new(title, x, y);
    for name in names {
        plot = plot.series(name, style, data[name].clone());
    }
    plot
}

/// The file format of the plots.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// SVG, as the report's figures.
    #[default]
    Svg,
    /// PNG at twice the SVG's size, rendered with the system's fonts.
    Png,
}

/// `concord plot DIR`: writes DIR/plots/*.svg (or *.png); returns the files written.
pub fn plot(dir: &Path, format: Format) -> Result<Vec<PathBuf>, Failure> {
    if !dir.join("summary.json").is_file() {
        return Err(Failure::input(format!(
            "{} has no summary.json; give a directory written by `concord run`",
            dir.display()
        )));
    }
    let mut plots: Vec<(&str, Plot)> = Vec::new();
    if let Some(csv) = Csv::read(&dir.join("goodput.csv"))? {
        let data = csv.series("goodput.csv", "flow", "time_s", "goodput_bps", 1e-6)?;
        plots.push((
            "goodput",
            plot_of(
                "Goodput per flow",
                "time (s)",
                "goodput (Mbit/s)",
                Style::Line,
                data,
            ),
        ));
    }
    if let Some(csv) = Csv::read(&dir.join("cwnd.csv"))? {
        let data = csv.series("cwnd.csv", "flow", "time_s", "cwnd_bytes", 1e-3)?;
        plots.push((
            "cwnd",
            plot_of(
                "Congestion window",
                "time (s)",
                "cwnd (kB)",
                Style::Line,
                data,
            ),
        ));
    }
    if let Some(csv) = Csv::read(&dir.join("queues.csv"))? {
        let data = csv.series("queues.csv", "channel", "time_s", "packets", 1.0)?;
        plots.push((
            "queue",
            plot_of(
                "Queue length",
                "time (s)",
                "queue (packets)",
                Style::Line,
                data,
            ),
        ));
    }
    if let Some(csv) = Csv::read(&dir.join("delay.csv"))? {
        plots.push((
            "delay-cdf",
            plot_of(
                "One-way delay CDF",
                "one-way delay (ms)",
                "fraction of packets",
                Style::Line,
                delay_cdf(&csv)?,
            ),
        ));
    }
    let out = dir.join("plots");
    std::fs::create_dir_all(&out)
        .map_err(|e| Failure::runtime(format!("cannot create {}: {e}", out.display())))?;
    let fonts = (format == Format::Png).then(crate::png::Fonts::system);
    if fonts.as_ref().is_some_and(crate::png::Fonts::is_empty) {
        eprintln!(
            "concord plot: no system font found, so the PNGs have no text; install one \
             (apt-get install fonts-dejavu-core) or use --format svg"
        );
    }
    let mut written = Vec::new();
    for (stem, p) in plots {
        let svg = p.to_svg();
        let (path, bytes) = match &fonts {
            None => (out.join(format!("{stem}.svg")), svg.into_bytes()),
            Some(fonts) => {
                let png = crate::png::svg_to_png(&svg, fonts).map_err(|e| {
                    Failure::runtime(format!("cannot render {stem}.png: {e}; use --format svg"))
                })?;
                (out.join(format!("{stem}.png")), png)
            }
        };
        std::fs::write(&path, bytes)
            .map_err(|e| Failure::runtime(format!("cannot write {}: {e}", path.display())))?;
        written.push(path);
    }
    Ok(written)
}

/// Each flow's delay CDF from delay.csv's histogram buckets: at each bucket's upper edge (ms),
/// the fraction of the flow's packets at or below it.
fn delay_cdf(csv: &Csv) -> Result<BTreeMap<String, Vec<(f64, f64)>>, Failure> {
    let buckets = csv.series("delay.csv", "flow", "upper_us", "count", 1.0)?;
    Ok(buckets
        .into_iter()
        .filter_map(|(flow, b)| {
            let total: f64 = b.iter().map(|(_, n)| n).sum();
            if total <= 0.0 {
                return None;
            }
            let mut seen = 0.0;
            let points = b
                .into_iter()
                .map(|(upper_us, n)| {
                    seen += n;
                    (upper_us / 1e3, seen / total)
                })
                .collect();
            Some((flow, points))
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_delay_cdf_accumulates_bucket_counts_at_their_upper_edges() {
        let csv = Csv {
            header: vec![
                "flow".into(),
                "lower_us".into(),
                "upper_us".into(),
                "count".into(),
            ],
            rows: vec![
                vec!["f1".into(), "0".into(), "1000".into(), "1".into()],
                vec!["f1".into(), "1000".into(), "2000".into(), "3".into()],
                vec!["f2".into(), "0".into(), "500".into(), "0".into()],
            ],
        };
        let cdf = delay_cdf(&csv).expect("valid");
        assert_eq!(cdf["f1"], [(1.0, 0.25), (2.0, 1.0)]);
        assert!(!cdf.contains_key("f2"), "a flow with no packets has no CDF");
    }

    #[test]
    fn names_sort_naturally() {
        let mut v = vec!["f10", "f2", "f1", "r1->r2"];
        v.sort_by(|a, b| natural(a, b));
        assert_eq!(v, ["f1", "f2", "f10", "r1->r2"]);
    }
}
