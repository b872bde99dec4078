//! The report: `results.json` (every claim), `figures/*.svg`, `raw/*.csv` and `index.html`,
//! written into a temporary directory and renamed into place, so that a run killed half-way
//! never leaves a torn report.

use crate::claim::{fmt_num, Claim, Paper};
use crate::runner::{Experiment, Outcome, ReproError};
use serde::{Deserialize, Serialize};
use std::fmt::Write as _;
use std::io;
use std::path::{Path, PathBuf};

/// A figure as the report lists it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FigureEntry {
    /// File under `figures/`.
    pub file: String,
    /// What it shows.
    pub title: String,
}

/// An experiment as the report lists it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ExperimentEntry {
    /// `paper/name`.
    pub id: String,
    /// The paper.
    pub paper: Paper,
    /// What it reproduces.
    pub title: String,
    /// Its figures.
    pub figures: Vec<FigureEntry>,
    /// Why it produced nothing, if it failed.
    pub error: Option<String>,
}

/// The content of `results.json`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Report {
    /// concord's version.
    pub concord_version: String,
    /// The quick setting was used.
    pub quick: bool,
    /// Every claim.
    pub claims: Vec<Claim>,
    /// Every experiment run.
    pub experiments: Vec<ExperimentEntry>,
}

impl Report {
    /// Assembles the report of finished experiments.
    pub fn new(
        quick: bool,
        experiments: &[Experiment],
        outcomes: &[Result<Outcome, ReproError>],
    ) -> Report {
        let mut claims = Vec::new();
        let mut entries = Vec::new();
        for (e, o) in experiments.iter().zip(outcomes) {
            let (figures, error) = match o {
                Ok(o) => {
                    claims.extend(o.claims.iter().cloned());
                    (
                        o.figures
                            .iter()
                            .map(|f| FigureEntry {
                                file: format!("{}.svg", f.id),
                                title: f.title.clone(),
                            })
                            .collect(),
                        None,
                    )
                }
                Err(err) => (Vec::new(), Some(err.to_string())),
            };
            entries.push(ExperimentEntry {
                id: e.id.to_string(),
                paper: e.paper,
                title: e.title.to_string(),
                figures,
                error,
            });
        }
        Report {
            concord_version: env!("CARGO_PKG_VERSION").to_string(),
            quick,
            claims,
            experiments: entries,
        }
    }

    /// True when every claim passed and every experiment ran.
    pub fn all_pass(&self) -> bool {
        self.claims.iter().all(|c| c.pass) && self.experiments.iter().all(|e| e.error.is_none())
    }
}

fn escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// The HTML page of a report; figures are referenced from `figures/`.
pub fn render_html(r: &Report) -> String {
    let passed = r.claims.iter().filter(|c| c.pass).count();
    let mut h = String::new();
    h.push_str("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>concord: reproduced results</title>\n<style>\n");
    h.push_str("body{font-family:Helvetica,Arial,sans-serif;max-width:1100px;margin:2em auto;padding:0 1em;color:#222}\n");
    h.push_str("table{border-collapse:collapse;width:100%;margin:1em 0}th,td{border-bottom:1px solid #ddd;padding:4px 8px;text-align:left;font-size:14px}\n");
    h.push_str("td.num{text-align:right;font-variant-numeric:tabular-nums}.pass{color:#1a7f37;font-weight:bold}.fail{color:#cf222e;font-weight:bold}\n");
    h.push_str("figure{display:inline-block;margin:0.5em}figure img{border:1px solid #eee}figcaption{font-size:13px;color:#555}\n</style></head><body>\n");
    let _ = writeln!(h, "<h1>concord: reproduced results</h1>\n<p>concord {} &middot; {} setting &middot; <span class=\"{}\">{passed} of {} claims pass</span></p>", escape(&r.concord_version), if r.quick { "quick" } else { "full" }, if passed == r.claims.len() { "pass" } else { "fail" }, r.claims.len());
    for paper in Paper::ALL {
        let exps: Vec<&ExperimentEntry> =
            r.experiments.iter().filter(|e| e.paper == paper).collect();
        if exps.is_empty() {
            continue;
        }
        let _ = writeln!(h, "<h2 id=\"{0}\">{0}</h2>", paper.name());
        let claims: Vec<&Claim> = r.claims.iter().filter(|c| c.paper == paper).collect();
        h.push_str("<table><tr><th>figure</th><th>metric</th><th>paper</th><th>ours</th><th>tolerance</th><th>result</th><th>seed</th><th>scenario</th></tr>\n");
        for c in claims {
            let verdict = if c.pass {
                "<span class=\"pass\">pass</span>".to_string()
            } else {
                format!(
                    "<span class=\"fail\">fail</span> (off by {:.1}%)",
                    c.miss * 100.0
                )
            };
            let _ = writeln!(
                h,
                "<tr><td>{}</td><td>{}</td><td>{}</td><td class=\"num\">{}</td><td>{}</td><td>{verdict}</td><td class=\"num\">{}</td><td>{}</td></tr>",
                escape(&c.figure),
                escape(&c.metric),
                escape(&c.paper_value),
                fmt_num(c.ours),
                escape(&c.tolerance),
                c.seed,
                escape(&c.scenario)
            );
        }
        h.push_str("</table>\n");
        for e in exps {
            if let Some(err) = &e.error {
                let _ = writeln!(
                    h,
                    "<p class=\"fail\">{}: {}</p>",
                    escape(e.id.as_str()),
                    escape(err)
                );
            }
            for f in &e.figures {
                let _ = writeln!(h, "<figure><img src=\"figures/{}\" alt=\"{}\" width=\"640\" height=\"400\"><figcaption>{}</figcaption></figure>", escape(&f.file), escape(&f.title), escape(&f.title));
            }
        }
    }
    h.push_str("</body></html>\n");
    h
}

/// The claims as a Markdown table (for the README's Results section), grouped by paper.
pub fn render_markdown(r: &Report) -> String {
    let passed = r.claims.iter().filter(|c| c.pass).count();
    let mut m = format!(
        "{passed} of {} claims pass ({} setting, concord {}).\n\n",
        r.claims.len(),
        if r.quick { "quick" } else { "full" },
        r.concord_version
    );
    m.push_str("| paper | figure | metric | paper says | concord | tolerance | result |\n|---|---|---|---|---|---|---|\n");
    let cell = |s: &str| s.replace('|', "\\|");
    for c in &r.claims {
        let result = if c.pass {
            "pass".to_string()
        } else {
            format!("**fail** ({:.1}% off)", c.miss * 100.0)
        };
        let _ = writeln!(
            m,
            "| {} | {} | {} | {} | {} | {} | {} |",
            c.paper.name(),
            cell(&c.figure),
            cell(&c.metric),
            cell(&c.paper_value),
            fmt_num(c.ours),
            cell(&c.tolerance),
            result
        );
    }
    m
}

/// Writes the report into `dir` atomically: everything goes into a sibling temporary
/// directory, which then replaces `dir`.
pub fn write_report(
    dir: &Path,
    report: &Report,
    outcomes: &[Result<Outcome, ReproError>],
) -> io::Result<()> {
    if !replaceable(dir)? {
        return Err(io::Error::new(
            io::ErrorKind::AlreadyExists,
            format!(
                "{} exists and is not a concord report (no results.json); choose another --out or remove it",
                dir.display()
            ),
        ));
    }
    let parent = dir
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .map(Path::to_path_buf)
        .unwrap_or_else(|| PathBuf::from("."));
    std::fs::create_dir_all(&parent)?;
    let stem = dir
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "report".into());
    let tmp = parent.join(format!(".{stem}.tmp-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&tmp);
    std::fs::create_dir_all(tmp.join("figures"))?;
    std::fs::create_dir_all(tmp.join("raw"))?;
    for o in outcomes.iter().flatten() {
        for f in &o.figures {
            std::fs::write(tmp.join("figures").join(format!("{}.svg", f.id)), &f.svg)?;
        }
        for (name, csv) in &o.raw {
            std::fs::write(tmp.join("raw").join(name), csv)?;
        }
    }
    let json = serde_json::to_string_pretty(report).map_err(io::Error::other)?;
    std::fs::write(tmp.join("results.json"), json + "\n")?;
    std::fs::write(tmp.join("index.html"), render_html(report))?;
    let old = parent.join(format!(".{stem}.old-{}", std::process::id()));
    if dir.exists() {
        std::fs::rename(dir, &old)?;
    }
    // (`dir` was checked at the start to be absent, empty, or an earlier report.)
    std::fs::rename(&tmp, dir)?;
    let _ = std::fs::remove_dir_all(&old);
    Ok(())
}

/// True if `dir` may be replaced by a report: it does not exist, is empty, or holds an earlier
/// report (a `results.json`). Anything else is left alone.
fn replaceable(dir: &Path) -> io::Result<bool> {
    if !dir.exists() {
        return Ok(true);
    }
    if !dir.is_dir() {
        return Ok(false);
    }
    Ok(dir.join("results.json").is_file() || std::fs::read_dir(dir)?.next().is_none())
}

/// Re-renders `index.html` of an existing report directory from its `results.json`.
pub fn rerender(dir: &Path) -> io::Result<Report> {
    let text = std::fs::read_to_string(dir.join("results.json"))?;
    let report: Report =
        serde_json::from_str(&text).map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))?;
    let tmp = dir.join(format!(".index.html.tmp-{}", std::process::id()));
    std::fs::write(&tmp, render_html(&report))?;
    std::fs::rename(&tmp, dir.join("index.html"))?;
    Ok(report)
}
