//! The report: `results.json` (every claim), `figures/*.svg`, `raw/*.csv` and `index.html`,
//! written into a temporary directory and renamed into place, so that a run killed half-way
//! never leaves a torn report.

use crate::claim::{fmt_num, Claim, Paper};
use crate::runner::{Experiment, Outcome, ReproError, Work};
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
    /// Scenario runs it simulated (0 when not recorded).
    #[serde(default)]
    pub runs: usize,
    /// Simulated time of those runs, seconds (0 when not recorded).
    #[serde(default)]
    pub simulated_s: f64,
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
                runs: 0,
                simulated_s: 0.0,
            });
        }
        Report {
            concord_version: env!("CARGO_PKG_VERSION").to_string(),
            quick,
            claims,
            experiments: entries,
        }
    }

    /// Records the simulation each experiment did (`work` in the order of `experiments`).
    pub fn record_work(&mut self, work: &[Work]) {
        for (e, w) in self.experiments.iter_mut().zip(work) {
            e.runs = w.runs;
            e.simulated_s = w.simulated_s;
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
    remove_abandoned(&parent, &stem);
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

/// Removes what a run killed half-way may have left beside the report `stem` in `parent`:
/// `.{stem}.tmp-PID` (a report being written) and `.{stem}.old-PID` (the report it was
/// replacing), for processes that no longer run. The report itself is never touched.
fn remove_abandoned(parent: &Path, stem: &str) {
    let Ok(entries) = std::fs::read_dir(parent) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        let pid = [".tmp-", ".old-"].iter().find_map(|kind| {
            name.strip_prefix(&format!(".{stem}{kind}"))
                .filter(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()))
        });
        let Some(pid) = pid else { continue };
        let alive = pid == std::process::id().to_string() || Path::new("/proc").join(pid).exists();
        if !alive {
            let _ = std::fs::remove_dir_all(entry.path());
        }
    }
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

/// The line that opens the README's Results section.
pub const RESULTS_BEGIN: &str = "<!-- results:begin -->";
/// The line that closes it.
pub const RESULTS_END: &str = "<!-- results:end -->";

/// Why the Results section of a README could not be replaced.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum SectionError {
    /// A marker line is missing.
    #[error("no `{0}` line; put `<!-- results:begin -->` and `<!-- results:end -->` lines where the Results section goes")]
    MissingMarker(&'static str),
    /// A marker line appears more than once.
    #[error("`{0}` appears more than once; keep one pair of markers")]
    RepeatedMarker(&'static str),
    /// The end marker comes first.
    #[error(
        "`<!-- results:end -->` comes before `<!-- results:begin -->`; put the begin marker first"
    )]
    OutOfOrder,
}

/// `text` with everything between the [`RESULTS_BEGIN`] and [`RESULTS_END`] lines replaced by
/// `section`; the markers and everything outside them are kept byte for byte, so replacing
/// twice with the same section changes nothing.
pub fn replace_section(text: &str, section: &str) -> Result<String, SectionError> {
    let find = |marker: &'static str| -> Result<usize, SectionError> {
        let mut at = text
            .match_indices(marker)
            .map(|(i, _)| i)
            .filter(|&i| i == 0 || text[..i].ends_with('\n'));
        let first = at.next().ok_or(SectionError::MissingMarker(marker))?;
        match at.next() {
            Some(_) => Err(SectionError::RepeatedMarker(marker)),
            None => Ok(first),
        }
    };
    let begin = find(RESULTS_BEGIN)?;
    let end = find(RESULTS_END)?;
    if end < begin {
        return Err(SectionError::OutOfOrder);
    }
    let body = section.trim_matches('\n');
    let mut out = String::with_capacity(text.len() + section.len());
    out.push_str(&text[..begin + RESULTS_BEGIN.len()]);
    out.push_str("\n\n");
    if !body.is_empty() {
        out.push_str(body);
        out.push_str("\n\n");
    }
    out.push_str(&text[end..]);
    Ok(out)
}

/// Up to `n` figures to show beside the claims: the first figure of each paper other than the
/// baselines, in report order (the baselines' first when no paper has one).
pub fn key_figures(r: &Report, n: usize) -> Vec<&FigureEntry> {
    let mut seen = Vec::new();
    let mut out = Vec::new();
    for e in &r.experiments {
        if e.paper == Paper::Baseline || seen.contains(&e.paper) {
            continue;
        }
        if let Some(f) = e.figures.first() {
            seen.push(e.paper);
            out.push(f);
        }
    }
    if out.is_empty() {
        out.extend(r.experiments.iter().filter_map(|e| e.figures.first()));
    }
    out.truncate(n);
    out
}

/// The README's Results section: the claims table, then `figures` as images under `figure_dir`
/// (a path relative to the README, `/`-separated).
pub fn render_readme_section(r: &Report, figures: &[&FigureEntry], figure_dir: &str) -> String {
    let mut m = render_markdown(r);
    if !figures.is_empty() {
        m.push('\n');
        for f in figures {
            let _ = writeln!(
                m,
                "![{}]({}/{})\n",
                f.title.replace(['[', ']'], ""),
                figure_dir.trim_end_matches('/'),
                f.file
            );
        }
    }
    m
}

#[cfg(test)]
mod tests {
    use super::*;

    const README: &str = "# x\n\nintro\n\n## Results\n\n<!-- results:begin -->\nold table\n<!-- results:end -->\n\n## Next\n";

    #[test]
    fn the_section_between_the_markers_is_replaced_and_the_rest_kept() {
        let out = replace_section(README, "| a |\n|---|\n").expect("replaced");
        assert_eq!(
            out,
            "# x\n\nintro\n\n## Results\n\n<!-- results:begin -->\n\n| a |\n|---|\n\n<!-- results:end -->\n\n## Next\n"
        );
        assert_eq!(
            replace_section(&out, "| a |\n|---|\n").expect("replaced"),
            out,
            "replacing twice changes nothing"
        );
        assert_eq!(
            replace_section(&out, "").expect("emptied"),
            "# x\n\nintro\n\n## Results\n\n<!-- results:begin -->\n\n<!-- results:end -->\n\n## Next\n"
        );
    }

    #[test]
    fn markers_must_start_a_line_appear_once_and_in_order() {
        assert_eq!(
            replace_section("no markers\n", "t"),
            Err(SectionError::MissingMarker(RESULTS_BEGIN))
        );
        assert_eq!(
            replace_section("see `<!-- results:begin -->`\n<!-- results:end -->\n", "t"),
            Err(SectionError::MissingMarker(RESULTS_BEGIN)),
            "a marker quoted inside a line does not count"
        );
        assert_eq!(
            replace_section(&format!("{README}<!-- results:end -->\n"), "t"),
            Err(SectionError::RepeatedMarker(RESULTS_END))
        );
        assert_eq!(
            replace_section("<!-- results:end -->\n<!-- results:begin -->\n", "t"),
            Err(SectionError::OutOfOrder)
        );
    }

    #[test]
    fn key_figures_take_one_per_paper_after_the_baselines() {
        let entry = |id: &str, paper, files: &[&str]| ExperimentEntry {
            id: id.into(),
            paper,
            title: id.into(),
            figures: files
                .iter()
                .map(|f| FigureEntry {
                    file: format!("{f}.svg"),
                    title: format!("{f} [x]"),
                })
                .collect(),
            error: None,
            runs: 0,
            simulated_s: 0.0,
        };
        let r = Report {
            concord_version: "0".into(),
            quick: true,
            claims: vec![],
            experiments: vec![
                entry("baseline/a", Paper::Baseline, &["b1"]),
                entry("gcca/a", Paper::Gcca, &["g1", "g2"]),
                entry("gcca/b", Paper::Gcca, &["g3"]),
                entry("eca/a", Paper::Eca, &[]),
                entry("eca/b", Paper::Eca, &["e1"]),
                entry("cp/a", Paper::Cp, &["c1"]),
            ],
        };
        let files: Vec<&str> = key_figures(&r, 2).iter().map(|f| f.file.as_str()).collect();
        assert_eq!(files, ["g1.svg", "e1.svg"]);
        let section = render_readme_section(&r, &key_figures(&r, 1), "docs/figures/");
        assert!(
            section.ends_with("![g1 x](docs/figures/g1.svg)\n\n"),
            "{section}"
        );
    }
}
