//! The report: `results.json` (every claim), `figures/*.svg`, `raw/*.csv` and `index.html`,
//! written into a temporary directory and renamed into place, so that a run killed half-way
//! never leaves a torn report.

use crate::claim::{fmt_num, slug, Claim, Kind, Paper, Verdict};
use crate::margin::margin_text;
use crate::not_run::{NotRun, NOT_RUN};
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
    /// Its raw tables, files under `raw/`.
    #[serde(default)]
    pub raw: Vec<String>,
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
    /// What was added to every seed (`--seed-base`).
    #[serde(default)]
    pub seed_base: u64,
    /// Every claim: the paper results and concord's own checks.
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
                    for c in &o.claims {
                        let mut c = c.clone();
                        c.experiment = e.id.to_string();
                        c.id = claim_id(&claims, e.id, &c);
                        claims.push(c);
                    }
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
                raw: o
                    .as_ref()
                    .map(|o| o.raw.iter().map(|(n, _)| n.clone()).collect())
                    .unwrap_or_default(),
                runs: 0,
                simulated_s: 0.0,
            });
        }
        Report {
            concord_version: env!("CARGO_PKG_VERSION").to_string(),
            quick,
            seed_base: 0,
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

    /// True when every experiment ran (whatever the verdicts).
    pub fn all_ran(&self) -> bool {
        self.experiments.iter().all(|e| e.error.is_none())
    }

    /// The paper results (never concord's own checks).
    pub fn paper_claims(&self) -> impl Iterator<Item = &Claim> {
        self.claims.iter().filter(|c| c.kind == Kind::Paper)
    }

    /// concord's own checks.
    pub fn checks(&self) -> impl Iterator<Item = &Claim> {
        self.claims.iter().filter(|c| c.kind == Kind::Check)
    }

    /// The experiment entry of `claim`.
    pub fn experiment_of(&self, claim: &Claim) -> Option<&ExperimentEntry> {
        self.experiments.iter().find(|e| e.id == claim.experiment)
    }
}

/// A claim's key: `experiment/slug-of-figure-and-metric`, with `-2`, `-3` ... for repeats.
fn claim_id(earlier: &[Claim], experiment: &str, c: &Claim) -> String {
    let base = format!(
        "{experiment}/{}",
        slug(&format!("{} {}", c.figure, c.metric))
    );
    let mut id = base.clone();
    let mut n = 1;
    while earlier.iter().any(|e| e.id == id) {
        n += 1;
        id = format!("{base}-{n}");
    }
    id
}

/// How many of `claims` ended with each verdict, in [`Verdict::ALL`] order.
pub fn verdict_counts<'a>(claims: impl Iterator<Item = &'a Claim>) -> [usize; 5] {
    let mut n = [0; 5];
    for c in claims {
        if let Some(i) = Verdict::ALL.iter().position(|v| *v == c.verdict) {
            n[i] += 1;
        }
    }
    n
}

/// `9 reproduced, 2 not reproduced, 1 reproduced under a deviation` (verdicts with no claim
/// left out; `none` when there is nothing to count).
pub fn counts_sentence(n: [usize; 5]) -> String {
    let parts: Vec<String> = Verdict::ALL
        .iter()
        .zip(n)
        .filter(|(_, k)| *k > 0)
        .map(|(v, k)| format!("{k} {}", v.label()))
        .collect();
    if parts.is_empty() {
        "none".into()
    } else {
        parts.join(", ")
    }
}

/// The display name of a paper.
pub fn paper_title(p: Paper) -> &'static str {
    match p {
        Paper::Baseline => "Baselines",
        Paper::Cm => "CM",
        Paper::Gcca => "GCCA",
        Paper::Eca => "ECA",
        Paper::Mccp => "MCCP",
        Paper::Cp => "CP",
    }
}

/// The verdict counts per paper and in total, paper results only, then the checks: the lines
/// that open the README's Results and the HTML page.
pub fn summary_lines(r: &Report) -> Vec<String> {
    let mut lines = vec![format!(
        "Paper results: {} ({} claims).",
        counts_sentence(verdict_counts(r.paper_claims())),
        r.paper_claims().count()
    )];
    for p in Paper::ALL {
        let of_paper: Vec<&Claim> = r.paper_claims().filter(|c| c.paper == p).collect();
        if of_paper.is_empty() {
            continue;
        }
        lines.push(format!(
            "{}: {}.",
            paper_title(p),
            counts_sentence(verdict_counts(of_paper.into_iter()))
        ));
    }
    let not_run: Vec<String> = NOT_RUN
        .iter()
        .map(|n| format!("{} {}", paper_title(n.paper), short_figure(n.figure)))
        .collect();
    if !not_run.is_empty() {
        lines.push(format!(
            "Paper results not run, because the model lacks what they need: {} ({}).",
            not_run.len(),
            not_run.join(", ")
        ));
    }
    let checks: Vec<&Claim> = r.checks().collect();
    let held = checks.iter().filter(|c| c.holds()).count();
    lines.push(format!(
        "concord's own checks (baselines, derived claims, feature demos; not paper results): {held} of {} hold.",
        checks.len()
    ));
    lines
}

/// The paper results not run, as a Markdown section: the paper's words, what it reports and
/// what concord's model lacks, each linked to its analysis.
fn not_run_markdown(not_run: &[NotRun]) -> String {
    if not_run.is_empty() {
        return String::new();
    }
    let cell = |s: &str| s.replace('|', "\\|").replace('\n', " ");
    let mut m = String::from(
        "### Results: paper results not run\n\nWhat concord's model lacks to run them; they carry no verdict and are not counted above.\n\n\
         | paper | figure | the paper's words | the paper reports | missing from the model | analysis |\n|---|---|---|---|---|---|\n",
    );
    for n in not_run {
        let _ = writeln!(
            m,
            "| {} | {} | \"{}\" ({}) | {} | {} | [not run]({ANALYSIS_DOC}#{}) |",
            n.paper.name(),
            cell(n.figure),
            cell(n.quote),
            cell(n.section),
            cell(n.paper_value),
            cell(n.missing),
            n.anchor
        );
    }
    m.push('\n');
    m
}

/// [`not_run_markdown`] as an HTML section.
fn not_run_html(not_run: &[NotRun]) -> String {
    if not_run.is_empty() {
        return String::new();
    }
    let mut h = String::from(
        "<h2 id=\"not-run\">Paper results not run</h2>\n<p>What concord's model lacks to run them; they carry no verdict and are not counted above.</p>\n\
         <table><tr><th>paper</th><th>figure</th><th>the paper's words</th><th>the paper reports</th><th>missing from the model</th></tr>\n",
    );
    for n in not_run {
        let _ = writeln!(
            h,
            "<tr id=\"{}\"><td>{}</td><td>{}</td><td>\"{}\" ({})</td><td>{}</td><td>{}</td></tr>",
            n.anchor,
            n.paper.name(),
            escape(n.figure),
            escape(n.quote),
            escape(n.section),
            escape(n.paper_value),
            escape(n.missing)
        );
    }
    h.push_str("</table>\n");
    h
}

/// `mean [lo, hi]` for tables, or the value alone when it is one figure; a claim pooled over
/// two seed blocks (the pooling rule) adds each block's own figure after `blocks`:
/// `0.71 [0.67, 0.76]; blocks 0.77 [0.76, 0.78], 0.66 [0.61, 0.70]`.
pub fn mean_ci_text(c: &Claim) -> String {
    let pooled = block_text(&c.values, c.ours, c.ci95, c.deterministic);
    if c.blocks.is_empty() {
        return pooled;
    }
    let blocks: Vec<String> = c
        .blocks
        .iter()
        .map(|b| block_text(&b.values, b.ours, b.ci95, false))
        .collect();
    format!("{pooled}; blocks {}", blocks.join(", "))
}

/// One seed block's `mean [lo, hi]`, or its value alone when it is one figure.
fn block_text(values: &[f64], mean: f64, ci: [f64; 2], deterministic: bool) -> String {
    if values.len() > 1 && !deterministic {
        format!("{} [{}, {}]", fmt_num(mean), fmt_num(ci[0]), fmt_num(ci[1]))
    } else {
        fmt_num(mean)
    }
}

/// The seeds in words: `1-5`, `1-20`, `deterministic (seed 1)`, `1-5 and 1001-1005` for a
/// claim pooled over two seed blocks, `1-5, pooled` for one value over a block's seeds.
pub fn seeds_text(c: &Claim) -> String {
    let (range, one_value_per_block) = if c.blocks.is_empty() {
        (range_text(&c.seeds), c.values.len() == 1)
    } else {
        let ranges: Vec<String> = c.blocks.iter().map(|b| range_text(&b.seeds)).collect();
        (
            ranges.join(" and "),
            c.blocks.iter().all(|b| b.values.len() == 1),
        )
    };
    let per_block_seeds = c.blocks.first().map_or(c.seeds.len(), |b| b.seeds.len());
    if c.deterministic {
        format!("deterministic (seed {range})")
    } else if one_value_per_block && per_block_seeds > 1 {
        format!("{range}, pooled")
    } else {
        range
    }
}

/// Seeds in words: `1-5` for a run of consecutive seeds, else the list.
fn range_text(seeds: &[u64]) -> String {
    match (seeds.first(), seeds.last()) {
        (Some(a), Some(b)) if a == b => format!("{a}"),
        (Some(a), Some(b)) if seeds.len() as u64 == b - a + 1 => format!("{a}-{b}"),
        (Some(_), Some(_)) => seeds
            .iter()
            .map(u64::to_string)
            .collect::<Vec<_>>()
            .join(","),
        _ => "-".into(),
    }
}

/// The setting in words: `paper`, or `deviation: ...`.
pub fn setting_text(c: &Claim) -> String {
    if c.setting == crate::claim::PAPER_SETTING {
        "paper".into()
    } else {
        format!("deviation: {}", c.setting)
    }
}

/// The file a not-reproduced row's analysis lives in (relative to the repository root) and
/// the anchor of a claim in it.
pub const ANALYSIS_DOC: &str = "docs/analysis.md";

/// The anchor of a claim in [`ANALYSIS_DOC`] and on the HTML page.
pub fn anchor(c: &Claim) -> String {
    slug(&c.id)
}

/// True when a row needs a written analysis of its own: a paper result not reproduced or
/// whose paper is inconsistent. (Seed-dependent rows share one section, [`SEED_DEPENDENT`].)
pub fn needs_analysis(c: &Claim) -> bool {
    c.kind == Kind::Paper
        && matches!(
            c.verdict,
            Verdict::NotReproduced | Verdict::PaperInconsistent
        )
}

/// The anchor in [`ANALYSIS_DOC`] of the section on seed-dependent rows.
pub const SEED_DEPENDENT: &str = "seed-dependent-rows";

/// Where a row's analysis is, relative to the repository root, if it needs one.
pub fn analysis_link(c: &Claim) -> Option<String> {
    if needs_analysis(c) {
        Some(format!("{ANALYSIS_DOC}#{}", anchor(c)))
    } else if c.kind == Kind::Paper && c.verdict == Verdict::SeedDependent {
        Some(format!("{ANALYSIS_DOC}#{SEED_DEPENDENT}"))
    } else {
        None
    }
}

fn escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// The distinct figures of `claims`, in order of first appearance.
fn figures_of<'a>(claims: &[&'a Claim]) -> Vec<&'a str> {
    let mut out: Vec<&str> = Vec::new();
    for c in claims {
        let short = short_figure(&c.figure);
        if !out.contains(&short) {
            out.push(short);
        }
    }
    out
}

/// `Fig. 5` of `Fig. 5 (10 Mbit/s, ...)` or `Fig. 9: 4 NewReno ...`: the figure's name without
/// its setting.
fn short_figure(figure: &str) -> &str {
    figure
        .split([':', ','])
        .next()
        .unwrap_or(figure)
        .split(" (")
        .next()
        .unwrap_or(figure)
        .trim()
}

/// A scenario field that names one file (no `{a,b}` or `+` lists): a link target.
fn scenario_path(c: &Claim) -> Option<&str> {
    let s = c.scenario.trim();
    (s.starts_with("scenarios/") && s.ends_with(".toml") && !s.contains(['{', ' ', ',']))
        .then_some(s)
}

/// The HTML page of a report; figures are referenced from `figures/`.
pub fn render_html(r: &Report) -> String {
    let mut h = String::new();
    h.push_str("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>concord: reproduced results</title>\n<style>\n");
    h.push_str("body{font-family:Helvetica,Arial,sans-serif;max-width:1200px;margin:2em auto;padding:0 1em;color:#222}\n");
    h.push_str("table{border-collapse:collapse;width:100%;margin:1em 0}th,td{border-bottom:1px solid #ddd;padding:4px 8px;text-align:left;font-size:13px;vertical-align:top}\n");
    h.push_str("td.num{text-align:right;font-variant-numeric:tabular-nums}.reproduced{color:#1a7f37;font-weight:bold}.deviation{color:#9a6700;font-weight:bold}.seed{color:#8250df;font-weight:bold}.not{color:#cf222e;font-weight:bold}\n");
    h.push_str("q{font-style:italic;color:#444}.same{color:#888}figure{display:inline-block;margin:0.5em}figure img{border:1px solid #eee}figcaption{font-size:13px;color:#555}\n</style></head><body>\n");
    let _ = writeln!(
        h,
        "<h1>concord: reproduced results</h1>\n<p>concord {} &middot; {} setting &middot; seed base {}</p>",
        escape(&r.concord_version),
        if r.quick { "quick" } else { "full" },
        r.seed_base
    );
    h.push_str("<ul class=\"summary\" id=\"verdicts\">\n");
    for line in summary_lines(r) {
        let _ = writeln!(h, "<li>{}</li>", escape(&line));
    }
    h.push_str("</ul>\n<h2 id=\"toc\">Contents</h2>\n<ul>\n");
    for paper in Paper::ALL {
        let claims: Vec<&Claim> = r.paper_claims().filter(|c| c.paper == paper).collect();
        if claims.is_empty() {
            continue;
        }
        let _ = writeln!(
            h,
            "<li><a href=\"#{}\">{}</a>: {}</li>",
            paper.name(),
            paper_title(paper),
            escape(&figures_of(&claims).join(", "))
        );
    }
    h.push_str("<li><a href=\"#checks\">concord's own checks</a></li>\n<li><a href=\"#figures\">Figures</a></li>\n</ul>\n");
    let verdict_cell = |c: &Claim| {
        let class = match c.verdict {
            Verdict::Reproduced => "reproduced",
            Verdict::ReproducedUnderDeviation => "deviation",
            Verdict::SeedDependent => "seed",
            Verdict::PaperInconsistent | Verdict::NotReproduced => "not",
        };
        let mut cell = format!("<span class=\"{class}\">{}</span>", c.verdict.label());
        if let Some(why) = &c.inconsistency {
            let _ = write!(cell, "<br>inconsistent: {}", escape(why));
        }
        if let Some(link) = analysis_link(c) {
            let _ = write!(cell, " (<a href=\"../{link}\">analysis</a>)");
        }
        cell
    };
    let links = |c: &Claim| {
        let mut l = Vec::new();
        if let Some(e) = r.experiment_of(c) {
            if let Some(f) = e.figures.first() {
                l.push(format!(
                    "<a href=\"figures/{}\">figure</a>",
                    escape(&f.file)
                ));
            }
            if let Some(raw) = e.raw.first() {
                l.push(format!("<a href=\"raw/{}\">raw</a>", escape(raw)));
            }
        }
        match scenario_path(c) {
            Some(p) => l.push(format!("<a href=\"../{0}\">{0}</a>", escape(p))),
            None => l.push(escape(&c.scenario)),
        }
        l.join(" &middot; ")
    };
    for paper in Paper::ALL {
        let claims: Vec<&Claim> = r.paper_claims().filter(|c| c.paper == paper).collect();
        if claims.is_empty() {
            continue;
        }
        let _ = writeln!(
            h,
            "<h2 id=\"{}\">{}</h2>\n<p>{}</p>",
            paper.name(),
            paper_title(paper),
            escape(&counts_sentence(verdict_counts(claims.iter().copied())))
        );
        h.push_str("<table><tr><th>figure</th><th>the paper's words</th><th>metric</th><th>target</th><th>tolerance</th><th>setting</th><th>seeds</th><th>concord: mean [95% CI]</th><th>margin to the tolerance (half-widths)</th><th>verdict</th><th>links</th></tr>\n");
        let mut previous_quote = "";
        for c in claims {
            // The paper's words once per run of rows that quote them, as in the README's table.
            let words = if c.quote == previous_quote {
                "<span class=\"same\">(as above)</span>".to_string()
            } else {
                format!("<q>{}</q> ({})", escape(&c.quote), escape(&c.section))
            };
            previous_quote = &c.quote;
            let _ = writeln!(
                h,
                "<tr id=\"{}\"><td>{}</td><td>{}</td><td>{}</td><td class=\"num\">{}</td><td>{}</td><td>{}</td><td>{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td>{}</td><td>{}</td></tr>",
                anchor(c),
                escape(&c.figure),
                words,
                escape(&c.metric),
                c.target.map(fmt_num).unwrap_or_else(|| escape(&c.paper_value)),
                escape(&c.tolerance),
                escape(&setting_text(c)),
                escape(&seeds_text(c)),
                mean_ci_text(c),
                escape(&margin_text(c.margin)),
                verdict_cell(c),
                links(c)
            );
        }
        h.push_str("</table>\n");
    }
    h.push_str(&not_run_html(NOT_RUN));
    h.push_str("<h2 id=\"checks\">concord's own checks</h2>\n<p>Baselines, claims concord derived from the designs, and feature demonstrations: not paper results, never counted as reproductions.</p>\n");
    h.push_str("<table><tr><th>paper</th><th>figure</th><th>metric</th><th>expected</th><th>tolerance</th><th>seeds</th><th>concord: mean [95% CI]</th><th>margin to the tolerance (half-widths)</th><th>verdict</th><th>links</th></tr>\n");
    for c in r.checks() {
        let _ = writeln!(
            h,
            "<tr id=\"{}\"><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td>{}</td><td>{}</td></tr>",
            anchor(c),
            c.paper.name(),
            escape(&c.figure),
            escape(&c.metric),
            escape(&c.paper_value),
            escape(&c.tolerance),
            escape(&seeds_text(c)),
            mean_ci_text(c),
            escape(&margin_text(c.margin)),
            if c.holds() { "holds" } else { "does not hold" },
            links(c)
        );
    }
    h.push_str("</table>\n<h2 id=\"figures\">Figures</h2>\n");
    for e in &r.experiments {
        if let Some(err) = &e.error {
            let _ = writeln!(
                h,
                "<p class=\"not\">{}: {}</p>",
                escape(e.id.as_str()),
                escape(err)
            );
        }
        for f in &e.figures {
            let _ = writeln!(h, "<figure><img src=\"figures/{}\" alt=\"{}\" width=\"640\" height=\"400\"><figcaption>{}</figcaption></figure>", escape(&f.file), escape(&f.title), escape(&f.title));
        }
    }
    h.push_str("</body></html>\n");
    h
}

/// The claims as Markdown (the README's Results section): the verdict counts per paper, a
/// table of contents by paper and figure, then a table per paper and one of concord's own
/// checks. Figures and raw tables are linked under `report_dir` (where `concord reproduce`
/// writes them), scenario files and analyses by their repository paths.
pub fn render_markdown(r: &Report) -> String {
    render_markdown_linked(r, "report")
}

/// [`render_markdown`] with figures and raw tables linked under `report_dir`.
pub fn render_markdown_linked(r: &Report, report_dir: &str) -> String {
    let cell = |s: &str| s.replace('|', "\\|").replace('\n', " ");
    let mut m = format!(
        "{} setting, seed base {}, concord {}.\n\n",
        if r.quick { "Quick" } else { "Full" },
        r.seed_base,
        r.concord_version
    );
    for line in summary_lines(r) {
        let _ = writeln!(m, "- {line}");
    }
    m.push_str("\nContents:\n\n");
    for paper in Paper::ALL {
        let claims: Vec<&Claim> = r.paper_claims().filter(|c| c.paper == paper).collect();
        if claims.is_empty() {
            continue;
        }
        let _ = writeln!(
            m,
            "- [{}](#results-{}): {}",
            paper_title(paper),
            paper.name(),
            figures_of(&claims).join(", ")
        );
    }
    if !NOT_RUN.is_empty() {
        m.push_str("- [paper results not run](#results-paper-results-not-run)\n");
    }
    m.push_str("- [concord's own checks](#results-concords-own-checks)\n\n");
    let _ = writeln!(
        m,
        "Each row: the paper's words and section, the target and tolerance fixed before the result was seen, the \
         setting (`paper` or the deviation), the seeds, concord's mean with its 95% confidence interval over the seeds, \
         and the verdict from where that interval lies. A stochastic claim is measured on two disjoint seed blocks (the \
         run's own and a replicate block 1000 seeds on) and judged on their values pooled; each block's own figure \
         follows `blocks` ([the pooling rule]({ANALYSIS_DOC}#replication-rule)). Figures and raw tables link into `{report_dir}/`, written by the \
         command above; rows that do not reproduce link to their analysis in [{ANALYSIS_DOC}]({ANALYSIS_DOC}).\n"
    );
    let links = |c: &Claim| {
        let mut l = Vec::new();
        if let Some(e) = r.experiment_of(c) {
            if let Some(f) = e.figures.first() {
                l.push(format!("[figure]({report_dir}/figures/{})", f.file));
            }
            if let Some(raw) = e.raw.first() {
                l.push(format!("[raw]({report_dir}/raw/{raw})"));
            }
        }
        if let Some(p) = scenario_path(c) {
            l.push(format!("[scenario]({p})"));
        }
        l.join(" ")
    };
    let verdict = |c: &Claim| {
        let mut v = if c.holds() {
            c.verdict.label().to_string()
        } else {
            format!("**{}**", c.verdict.label())
        };
        if let Some(why) = &c.inconsistency {
            let _ = write!(v, " ({})", cell(why));
        }
        if let Some(link) = analysis_link(c) {
            let _ = write!(v, " ([analysis]({link}))");
        }
        v
    };
    for paper in Paper::ALL {
        let claims: Vec<&Claim> = r.paper_claims().filter(|c| c.paper == paper).collect();
        if claims.is_empty() {
            continue;
        }
        let _ = writeln!(
            m,
            "### Results: {}\n\n{}.\n",
            paper_title(paper),
            counts_sentence(verdict_counts(claims.iter().copied()))
        );
        m.push_str("| figure | the paper's words | metric | target | tolerance | setting | seeds | concord: mean [95% CI] | verdict | links |\n|---|---|---|---|---|---|---|---|---|---|\n");
        let mut previous_quote = "";
        for c in claims {
            // The paper's words once per run of rows that quote them.
            let words = if c.quote == previous_quote {
                "(as above)".to_string()
            } else {
                format!("\"{}\" ({})", cell(&c.quote), cell(&c.section))
            };
            previous_quote = &c.quote;
            let _ = writeln!(
                m,
                "| {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |",
                cell(&c.figure),
                words,
                cell(&c.metric),
                c.target
                    .map(fmt_num)
                    .unwrap_or_else(|| cell(&c.paper_value)),
                cell(&c.tolerance),
                cell(&setting_text(c)),
                seeds_text(c),
                mean_ci_text(c),
                verdict(c),
                links(c)
            );
        }
        m.push('\n');
    }
    m.push_str(&not_run_markdown(NOT_RUN));
    m.push_str("### Results: concord's own checks\n\nBaselines, claims concord derived from the designs, and feature demonstrations: not paper results.\n\n");
    m.push_str("| paper | figure | metric | expected | tolerance | seeds | concord: mean [95% CI] | holds | links |\n|---|---|---|---|---|---|---|---|---|\n");
    for c in r.checks() {
        let _ = writeln!(
            m,
            "| {} | {} | {} | {} | {} | {} | {} | {} | {} |",
            c.paper.name(),
            cell(&c.figure),
            cell(&c.metric),
            cell(&c.paper_value),
            cell(&c.tolerance),
            seeds_text(c),
            mean_ci_text(c),
            if c.holds() { "yes" } else { "**no**" },
            links(c)
        );
    }
    m
}

/// The verdict of every claim, by id: what an expectations file holds.
pub fn verdicts(r: &Report) -> std::collections::BTreeMap<String, String> {
    r.claims
        .iter()
        .map(|c| (c.id.clone(), c.verdict.key().to_string()))
        .collect()
}

/// The content of an expectations file (e.g. `crates/repro/expectations/quick.json`): the
/// verdict of every claim of one setting, what `concord reproduce --check` compares with.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Expectations {
    /// The quick setting.
    pub quick: bool,
    /// The seed base the verdicts were taken at.
    pub seed_base: u64,
    /// Claim id to verdict key (`reproduced`, `not_reproduced`, ...).
    pub verdicts: std::collections::BTreeMap<String, String>,
}

/// A difference between a report's verdicts and the expected ones.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct VerdictChange {
    /// The claim.
    pub id: String,
    /// The expected verdict (None: a claim the expectations do not know).
    pub expected: Option<String>,
    /// The verdict now (None: a claim that no longer exists).
    pub now: Option<String>,
}

/// Every claim whose verdict differs from `expected`, in either direction, including claims
/// added or gone.
pub fn compare_verdicts(
    expected: &std::collections::BTreeMap<String, String>,
    now: &std::collections::BTreeMap<String, String>,
) -> Vec<VerdictChange> {
    let mut ids: Vec<&String> = expected.keys().chain(now.keys()).collect();
    ids.sort();
    ids.dedup();
    ids.into_iter()
        .filter(|id| expected.get(*id) != now.get(*id))
        .map(|id| VerdictChange {
            id: id.clone(),
            expected: expected.get(id).cloned(),
            now: now.get(id).cloned(),
        })
        .collect()
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
    fn verdict_changes_are_found_in_either_direction_and_counts_read_as_a_sentence() {
        let map = |pairs: &[(&str, &str)]| -> std::collections::BTreeMap<String, String> {
            pairs
                .iter()
                .map(|(a, b)| (a.to_string(), b.to_string()))
                .collect()
        };
        let expected = map(&[
            ("a", "reproduced"),
            ("b", "not_reproduced"),
            ("c", "reproduced"),
        ]);
        let now = map(&[
            ("a", "reproduced"),
            ("b", "reproduced"),
            ("d", "seed_dependent"),
        ]);
        let changes = compare_verdicts(&expected, &now);
        let ids: Vec<&str> = changes.iter().map(|c| c.id.as_str()).collect();
        assert_eq!(ids, ["b", "c", "d"]);
        assert_eq!(changes[1].now, None, "c is gone");
        assert_eq!(changes[2].expected, None, "d is new");
        assert!(compare_verdicts(&now, &now).is_empty());
        assert_eq!(
            counts_sentence([9, 1, 0, 0, 2]),
            "9 reproduced, 1 reproduced under a deviation, 2 not reproduced"
        );
        assert_eq!(counts_sentence([0; 5]), "none");
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
            raw: vec![],
            runs: 0,
            simulated_s: 0.0,
        };
        let r = Report {
            concord_version: "0".into(),
            quick: true,
            seed_base: 0,
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

    #[test]
    fn the_report_has_no_not_run_section_when_every_paper_result_runs() {
        assert!(NOT_RUN.is_empty());
        let r = Report {
            concord_version: "0".into(),
            quick: true,
            seed_base: 0,
            claims: vec![],
            experiments: vec![],
        };
        let lines = summary_lines(&r);
        assert!(!lines.iter().any(|l| l.contains("not run")), "{lines:#?}");
        let md = render_markdown(&r);
        assert!(!md.contains("paper results not run"), "{md}");
        let html = render_html(&r);
        assert!(!html.contains("id=\"not-run\""), "{html}");
    }

    #[test]
    fn every_row_of_the_page_shows_its_margin_to_the_tolerance() {
        let claim = |values: &[f64]| {
            Claim::mean_over_seeds(
                Paper::Cm,
                "Fig. 4",
                "loss ratio",
                "about 1",
                crate::claim::Check::Between { lo: 0.8, hi: 1.2 },
                &[1, 2, 3, 4, 5],
                values,
                "s.toml",
                true,
            )
        };
        // Mean 1.1, sd 0.07906, half-width 2.776 * 0.07906 / sqrt(5) = 0.09815: 0.1 below 1.2,
        // 1.02 half-widths.
        let paper = claim(&[1.0, 1.05, 1.1, 1.15, 1.2]).paper("3.1", "about the same loss");
        let check = claim(&[1.1; 5]);
        let r = Report {
            concord_version: "0".into(),
            quick: true,
            seed_base: 0,
            claims: vec![paper, check],
            experiments: vec![],
        };
        let html = render_html(&r);
        assert_eq!(
            html.matches("<th>margin to the tolerance (half-widths)</th>")
                .count(),
            2,
            "{html}"
        );
        assert!(
            html.contains("<td class=\"num\">+0.1 (1.02)</td><td><span class=\"reproduced\">"),
            "{html}"
        );
        assert!(
            html.contains("<td class=\"num\">+0.1 (no width)</td><td>holds</td>"),
            "{html}"
        );
    }

    #[test]
    fn a_paper_result_not_run_is_a_row_with_its_words_what_is_missing_and_its_analysis() {
        let n = NotRun {
            paper: crate::claim::Paper::Eca,
            figure: "Fig. 1: a | b",
            section: "II",
            quote: "x < y",
            paper_value: "2x",
            missing: "a model part",
            anchor: "eca-fig-1-not-run",
        };
        let md = not_run_markdown(&[n]);
        assert!(
            md.starts_with("### Results: paper results not run\n"),
            "{md}"
        );
        assert!(
            md.contains(
                "| eca | Fig. 1: a \\| b | \"x < y\" (II) | 2x | a model part | \
                 [not run](docs/analysis.md#eca-fig-1-not-run) |"
            ),
            "{md}"
        );
        let html = not_run_html(&[n]);
        assert!(
            html.contains(
                "<tr id=\"eca-fig-1-not-run\"><td>eca</td><td>Fig. 1: a | b</td>\
                 <td>\"x &lt; y\" (II)</td><td>2x</td><td>a model part</td></tr>"
            ),
            "{html}"
        );
    }
}
