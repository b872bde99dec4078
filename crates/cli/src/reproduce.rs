//! `concord reproduce` and `concord report`: the papers' experiments, checked and reported.

use crate::progress::Board;
use crate::table::render;
use crate::Failure;
use concord_repro::claim::fmt_num;
use concord_repro::report::{key_figures, render_readme_section, replace_section};
use concord_repro::runner::{run_watched, Event, Work};
use concord_repro::{registry, write_report, Ctx, Paper, Report};
use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// The arguments of `concord reproduce`.
#[derive(clap::Args, Debug)]
pub struct ReproduceArgs {
    /// Only these papers (repeatable): baseline, cm, gcca, eca, mccp, cp.
    #[arg(long = "paper", value_name = "PAPER")]
    pub papers: Vec<String>,
    /// Scaled-down durations and grids, with tolerances stated for the quick setting.
    #[arg(long)]
    pub quick: bool,
    /// Experiments run in parallel [default: the number of cores].
    #[arg(long)]
    pub jobs: Option<usize>,
    /// Where the report goes.
    #[arg(long, default_value = "report")]
    pub out: PathBuf,
}

/// `concord reproduce`.
pub fn reproduce(a: &ReproduceArgs) -> Result<bool, Failure> {
    let mut wanted = Vec::new();
    for name in &a.papers {
        match Paper::from_name(name) {
            Some(p) => wanted.push(p),
            None => {
                let known: Vec<&str> = Paper::ALL.iter().map(|p| p.name()).collect();
                return Err(Failure::input(format!(
                    "unknown paper `{name}`; use one of {}",
                    known.join(", ")
                )));
            }
        }
    }
    let experiments: Vec<_> = registry()
        .into_iter()
        .filter(|e| wanted.is_empty() || wanted.contains(&e.paper))
        .collect();
    if experiments.is_empty() {
        return Err(Failure::input(
            "no experiment is registered for the papers chosen; drop --paper to run them all",
        ));
    }
    let jobs = a
        .jobs
        .unwrap_or_else(|| {
            std::thread::available_parallelism()
                .map(|n| n.get())
                .unwrap_or(1)
        })
        .max(1);
    let ctx = Ctx { quick: a.quick };
    eprintln!(
        "concord reproduce: {} experiments on {jobs} threads{}",
        experiments.len(),
        if a.quick { " (quick)" } else { "" }
    );
    let expected = previous_work(&a.out, a.quick);
    let mut board = Board::new(
        experiments
            .iter()
            .map(|e| (e.id.to_string(), expected.get(e.id).copied()))
            .collect(),
    );
    let results = run_watched(&experiments, &ctx, jobs, &mut |i, event| match event {
        Event::Started => board.started(i),
        Event::Advanced { done, run_fraction } => {
            board.advanced(i, done.runs, done.simulated_s, run_fraction)
        }
        Event::Finished { result, work } => {
            let status = match result {
                Ok(o) => format!(
                    "{}/{} claims pass",
                    o.claims.iter().filter(|c| c.pass).count(),
                    o.claims.len()
                ),
                Err(err) => format!("failed: {err}"),
            };
            board.finished(i, work.runs, status)
        }
    });
    let (outcomes, work): (Vec<_>, Vec<Work>) = results.into_iter().unzip();
    let mut report = Report::new(a.quick, &experiments, &outcomes);
    report.record_work(&work);
    write_report(&a.out, &report, &outcomes).map_err(|e| {
        if e.kind() == std::io::ErrorKind::AlreadyExists {
            return Failure::input(e.to_string());
        }
        Failure::runtime(format!(
            "cannot write the report to {}: {e}; choose a writable --out",
            a.out.display()
        ))
    })?;
    print!("{}", claims_table(&report));
    let passed = report.claims.iter().filter(|c| c.pass).count();
    println!(
        "\n{passed} of {} claims pass; report: {}",
        report.claims.len(),
        a.out.join("index.html").display()
    );
    Ok(report.all_pass())
}

/// The final terminal table: claim, ours vs paper, pass/fail.
pub fn claims_table(r: &Report) -> String {
    let rows: Vec<Vec<String>> = r
        .claims
        .iter()
        .map(|c| {
            vec![
                c.paper.name().to_string(),
                c.figure.clone(),
                c.metric.clone(),
                c.paper_value.clone(),
                fmt_num(c.ours),
                if c.pass {
                    "pass".into()
                } else {
                    format!("FAIL ({:.1}% off)", c.miss * 100.0)
                },
            ]
        })
        .collect();
    render(
        &["paper", "figure", "metric", "paper says", "ours", "result"],
        &rows,
    )
}

/// Simulated seconds per experiment in the report already in `out`, if it was made with the
/// same quick setting: how the progress bars know how far along an experiment is.
fn previous_work(out: &Path, quick: bool) -> HashMap<String, f64> {
    let Ok(text) = std::fs::read_to_string(out.join("results.json")) else {
        return HashMap::new();
    };
    let Ok(r) = serde_json::from_str::<Report>(&text) else {
        return HashMap::new();
    };
    if r.quick != quick {
        return HashMap::new();
    }
    r.experiments
        .into_iter()
        .filter(|e| e.error.is_none() && e.simulated_s > 0.0)
        .map(|e| (e.id, e.simulated_s))
        .collect()
}

/// What `concord report` does with a report directory.
pub enum ReportAction<'a> {
    /// Re-render `index.html`.
    Html,
    /// Print the claims as Markdown.
    Markdown,
    /// Replace the Results section of a README, copying `figures` (all key figures when
    /// empty) next to it under `docs/figures/`.
    Readme {
        /// The README.
        path: &'a Path,
        /// Figure files or stems to show.
        figures: &'a [String],
    },
}

/// Where the README's figures go, relative to the README.
const README_FIGURES: &str = "docs/figures";
/// Key figures shown when none are named.
const README_KEY_FIGURES: usize = 3;

/// `concord report DIR [--markdown | --readme README [--figure F]...]`: re-renders the HTML
/// from `results.json` without re-running, prints the claims as Markdown, or writes them into
/// a README's Results section.
pub fn report(dir: &Path, action: ReportAction<'_>) -> Result<bool, Failure> {
    let fail = |e: std::io::Error| {
        Failure::input(format!(
            "cannot read the report in {}: {e}; give a directory written by `concord reproduce`",
            dir.display()
        ))
    };
    let load = || -> Result<Report, Failure> {
        let text = std::fs::read_to_string(dir.join("results.json")).map_err(fail)?;
        serde_json::from_str(&text)
            .map_err(|e| fail(std::io::Error::new(std::io::ErrorKind::InvalidData, e)))
    };
    match action {
        ReportAction::Markdown => {
            let r = load()?;
            print!("{}", concord_repro::report::render_markdown(&r));
            Ok(r.all_pass())
        }
        ReportAction::Readme { path, figures } => {
            let r = load()?;
            write_readme(dir, &r, path, figures)?;
            println!(
                "{}: Results section written from {}",
                path.display(),
                dir.join("results.json").display()
            );
            // The section records which claims fail; writing it succeeded.
            Ok(true)
        }
        ReportAction::Html => {
            let r = concord_repro::report::rerender(dir).map_err(fail)?;
            print!("{}", claims_table(&r));
            println!("\nreport: {}", dir.join("index.html").display());
            Ok(r.all_pass())
        }
    }
}

/// Replaces the Results section of the README at `path` with the claims of `r` and its key
/// figures, copied from `dir/figures/` to `docs/figures/` beside the README. The README is
/// replaced whole (written aside, then renamed), and only when every figure was copied.
fn write_readme(dir: &Path, r: &Report, path: &Path, wanted: &[String]) -> Result<(), Failure> {
    let all: Vec<&concord_repro::report::FigureEntry> =
        r.experiments.iter().flat_map(|e| &e.figures).collect();
    let chosen = if wanted.is_empty() {
        key_figures(r, README_KEY_FIGURES)
    } else {
        let mut chosen = Vec::new();
        for w in wanted {
            let found = all
                .iter()
                .find(|f| f.file == *w || f.file.strip_suffix(".svg") == Some(w.as_str()));
            match found {
                Some(f) => chosen.push(*f),
                None => {
                    let names: Vec<&str> = all
                        .iter()
                        .map(|f| f.file.strip_suffix(".svg").unwrap_or(&f.file))
                        .collect();
                    return Err(Failure::input(format!(
                        "the report has no figure `{w}`; use one of {}",
                        names.join(", ")
                    )));
                }
            }
        }
        chosen
    };
    let text = std::fs::read_to_string(path).map_err(|e| {
        Failure::input(format!(
            "cannot read {}: {e}; give the README to update",
            path.display()
        ))
    })?;
    let section = render_readme_section(r, &chosen, README_FIGURES);
    let updated = replace_section(&text, &section)
        .map_err(|e| Failure::input(format!("{}: {e}", path.display())))?;
    let base = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .map(Path::to_path_buf)
        .unwrap_or_else(|| PathBuf::from("."));
    let figure_dir = base.join(README_FIGURES);
    let io = |what: &Path, e: std::io::Error| {
        Failure::runtime(format!(
            "cannot write {}: {e}; check the README's directory is writable",
            what.display()
        ))
    };
    if !chosen.is_empty() {
        std::fs::create_dir_all(&figure_dir).map_err(|e| io(&figure_dir, e))?;
    }
    for f in &chosen {
        let from = dir.join("figures").join(&f.file);
        std::fs::copy(&from, figure_dir.join(&f.file)).map_err(|e| {
            Failure::input(format!(
                "cannot copy {}: {e}; re-run `concord reproduce` to write the report's figures",
                from.display()
            ))
        })?;
    }
    let tmp = base.join(format!(".readme.tmp-{}", std::process::id()));
    std::fs::write(&tmp, updated).map_err(|e| io(&tmp, e))?;
    std::fs::rename(&tmp, path).map_err(|e| {
        let _ = std::fs::remove_file(&tmp);
        io(path, e)
    })?;
    Ok(())
}
