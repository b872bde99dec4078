//! `concord reproduce` and `concord report`: the papers' experiments, checked and reported.

use crate::output_dir::OutputDir;
use crate::progress::Board;
use crate::table::render;
use crate::Failure;
use concord_repro::claim::{Kind, Verdict};
use concord_repro::report::{
    compare_verdicts, key_figures, mean_ci_text, render_readme_section, replace_section,
    summary_lines, verdicts, Expectations,
};
use concord_repro::runner::{run_watched, Event, Experiment, Work};
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
    /// Where the report goes [default: `report`, or `report-<papers>` when --paper picks some
    /// papers only, so that a partial run never replaces the whole report].
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Added to every seed of every experiment: 1000 runs seeds 1001, 1002, ... instead of
    /// 1, 2, ..., to check that a verdict does not hang on the seed set.
    #[arg(long, value_name = "N", default_value_t = 0)]
    pub seed_base: u64,
    /// Compare every claim's verdict with this expectations file (written by
    /// --write-expected) and exit 1 on any change, in either direction.
    #[arg(long, value_name = "EXPECTED.json")]
    pub check: Option<PathBuf>,
    /// Exit 1 if a claim this expectations file marks reproduced (at the paper's setting or
    /// under a deviation) ends with another verdict (the seed-base check: other verdicts may
    /// differ).
    #[arg(long, value_name = "EXPECTED.json")]
    pub check_reproduced: Option<PathBuf>,
    /// Write every claim's verdict to this expectations file.
    #[arg(long, value_name = "EXPECTED.json")]
    pub write_expected: Option<PathBuf>,
    /// Run the experiments on the Dask cluster whose scheduler is at this address (e.g.
    /// tcp://host:8786), one task per experiment, through the Python package
    /// (`pip install './python[dask]'`; $CONCORD_PYTHON names the interpreter, python3 by
    /// default); --jobs is then the threads per experiment on its worker [default: 1]. The
    /// report is the local run's, byte for byte.
    #[arg(long, value_name = "ADDRESS")]
    pub dask: Option<String>,
}

/// Reads an expectations file, or says what is wrong with it (exit code 2).
fn read_expectations(path: &Path, quick: bool) -> Result<Expectations, Failure> {
    let text = std::fs::read_to_string(path).map_err(|e| {
        Failure::input(format!(
            "cannot read {}: {e}; give a file written by `concord reproduce --write-expected`",
            path.display()
        ))
    })?;
    let e: Expectations = serde_json::from_str(&text).map_err(|e| {
        Failure::input(format!(
            "{}: {e}; give a file written by `concord reproduce --write-expected`",
            path.display()
        ))
    })?;
    for (id, v) in &e.verdicts {
        if concord_repro::claim::Verdict::from_key(v).is_none() {
            return Err(Failure::input(format!(
                "{}: claim {id} has the unknown verdict `{v}`; use one of reproduced, reproduced_under_deviation, seed_dependent, paper_inconsistent, not_reproduced",
                path.display()
            )));
        }
    }
    if e.quick != quick {
        return Err(Failure::input(format!(
            "{} holds the verdicts of the {} setting; run with{} --quick to compare",
            path.display(),
            if e.quick { "quick" } else { "full" },
            if e.quick { "" } else { "out" }
        )));
    }
    Ok(e)
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
    // Bad expectation files are bad arguments: refuse them before running anything.
    let check = a
        .check
        .as_deref()
        .map(|p| read_expectations(p, a.quick))
        .transpose()?;
    if let (Some(e), Some(path)) = (&check, &a.check) {
        if e.seed_base != a.seed_base {
            return Err(Failure::input(format!(
                "{} holds the verdicts at seed base {}; run with --seed-base {} to compare, or use --check-reproduced",
                path.display(),
                e.seed_base,
                e.seed_base
            )));
        }
    }
    let check_reproduced = a
        .check_reproduced
        .as_deref()
        .map(|p| read_expectations(p, a.quick))
        .transpose()?;
    let partial = !wanted.is_empty() && experiments.len() < registry().len();
    let out_path = match &a.out {
        Some(p) => p.clone(),
        None if partial => {
            let mut names: Vec<&str> = Vec::new();
            for p in &wanted {
                if !names.contains(&p.name()) {
                    names.push(p.name());
                }
            }
            PathBuf::from(format!("report-{}", names.join("-")))
        }
        None => PathBuf::from("report"),
    };
    if partial {
        refuse_to_narrow(&out_path, &experiments)?;
    }
    let out = OutputDir::claim(&out_path)?;
    let ctx = Ctx {
        quick: a.quick,
        seed_base: a.seed_base,
        // The pooling rule (docs/analysis.md): every stochastic claim is measured on a second,
        // disjoint seed block too, and judged on both blocks' values pooled.
        replicate: true,
    };
    let on = match &a.dask {
        Some(address) => format!("the Dask cluster at {address}"),
        None => format!("{jobs} threads"),
    };
    eprintln!(
        "concord reproduce: {} experiments on {on}{}, seed base {}",
        experiments.len(),
        if a.quick { " (quick)" } else { "" },
        a.seed_base
    );
    eprintln!(
        "concord reproduce: the report goes to {}",
        out_path.display()
    );
    let expected = previous_work(&out_path, a.quick);
    let mut board = Board::new(
        experiments
            .iter()
            .map(|e| (e.id.to_string(), expected.get(e.id).copied()))
            .collect(),
    );
    let mut observe = |i: usize, event: Event<'_>| match event {
        Event::Started => board.started(i),
        Event::Advanced { done, run_fraction } => {
            board.advanced(i, done.runs, done.simulated_s, run_fraction)
        }
        Event::Finished { result, work } => {
            let status = match result {
                Ok(o) => format!(
                    "{}/{} claims reproduced or holding",
                    o.claims.iter().filter(|c| c.holds()).count(),
                    o.claims.len()
                ),
                Err(err) => format!("failed: {err}"),
            };
            board.finished(i, work.runs, status)
        }
    };
    let results = match &a.dask {
        Some(address) => crate::reproduce_dask::run_on_dask(
            &experiments,
            &ctx,
            a.jobs.unwrap_or(1).max(1),
            address,
            &mut observe,
        )?,
        None => run_watched(&experiments, &ctx, jobs, &mut observe),
    };
    let (outcomes, work): (Vec<_>, Vec<Work>) = results.into_iter().unzip();
    let mut report = Report::new(a.quick, &experiments, &outcomes);
    report.seed_base = a.seed_base;
    report.record_work(&work);
    write_report(out.staging(), &report, &outcomes).map_err(|e| {
        if e.kind() == std::io::ErrorKind::AlreadyExists {
            return Failure::input(e.to_string());
        }
        Failure::runtime(format!(
            "cannot write the report to {}: {e}; choose a writable --out",
            out_path.display()
        ))
    })?;
    out.commit()?;
    for line in summary_lines(&report) {
        println!("{line}");
    }
    println!();
    print!("{}", claims_table(&report));
    println!();
    for line in summary_lines(&report) {
        println!("{line}");
    }
    println!("report: {}", out_path.join("index.html").display());
    if let Some(path) = &a.write_expected {
        let e = Expectations {
            quick: a.quick,
            seed_base: a.seed_base,
            verdicts: verdicts(&report),
        };
        let text = serde_json::to_string_pretty(&e).map_err(|e| Failure::runtime(e.to_string()))?;
        std::fs::write(path, text + "\n").map_err(|e| {
            Failure::runtime(format!(
                "cannot write {}: {e}; choose a writable path for --write-expected",
                path.display()
            ))
        })?;
        println!("expectations: {}", path.display());
    }
    let failed: Vec<String> = report
        .experiments
        .iter()
        .filter_map(|e| e.error.as_ref().map(|err| format!("{}: {err}", e.id)))
        .collect();
    if !failed.is_empty() {
        return Err(Failure::runtime(format!(
            "{} experiment(s) did not run: {}",
            failed.len(),
            failed.join("; ")
        )));
    }
    let now = verdicts(&report);
    if let Some(e) = &check {
        let changes = compare_verdicts(&e.verdicts, &now);
        for c in &changes {
            eprintln!(
                "verdict changed: {}: expected {}, now {}",
                c.id,
                c.expected.as_deref().unwrap_or("(no such claim)"),
                c.now.as_deref().unwrap_or("(claim gone)")
            );
        }
        if !changes.is_empty() {
            return Err(Failure::runtime(format!(
                "{} verdict(s) differ from {}; review them, then regenerate it with --write-expected",
                changes.len(),
                a.check.as_deref().unwrap_or(Path::new("?")).display()
            )));
        }
        println!(
            "verdicts match {}",
            a.check.as_deref().unwrap_or(Path::new("?")).display()
        );
    }
    if let Some(e) = &check_reproduced {
        // Reproduced at the paper's setting or under a row's deviation: the same verdict here.
        let reproduced = [
            Verdict::Reproduced.key(),
            Verdict::ReproducedUnderDeviation.key(),
        ];
        let flipped: Vec<String> = e
            .verdicts
            .iter()
            .filter(|(_, v)| reproduced.contains(&v.as_str()))
            .filter(|(id, v)| now.get(*id) != Some(*v))
            .map(|(id, _)| {
                format!(
                    "{id} is {}",
                    now.get(id).map(String::as_str).unwrap_or("gone")
                )
            })
            .collect();
        for f in &flipped {
            eprintln!("reproduced at seed base {} but not here: {f}", e.seed_base);
        }
        if !flipped.is_empty() {
            return Err(Failure::runtime(format!(
                "{} claim(s) reproduced in {} are not at seed base {}",
                flipped.len(),
                a.check_reproduced
                    .as_deref()
                    .unwrap_or(Path::new("?"))
                    .display(),
                a.seed_base
            )));
        }
        println!(
            "every claim reproduced in {} is reproduced at seed base {}",
            a.check_reproduced
                .as_deref()
                .unwrap_or(Path::new("?"))
                .display(),
            a.seed_base
        );
    }
    Ok(true)
}

/// The final terminal table: claim, ours vs paper, verdict.
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
                mean_ci_text(c),
                c.tolerance.clone(),
                match c.kind {
                    Kind::Paper => c.verdict.label().to_string(),
                    Kind::Check if c.holds() => "check holds".into(),
                    Kind::Check => "CHECK DOES NOT HOLD".into(),
                },
            ]
        })
        .collect();
    render(
        &[
            "paper",
            "figure",
            "metric",
            "paper says",
            "ours [95% CI]",
            "tolerance",
            "verdict",
        ],
        &rows,
    )
}

/// Simulated seconds per experiment in the report already in `out`, if it was made with the
/// same quick setting: how the progress bars know how far along an experiment is.
/// A run of some papers only may not replace a report that holds experiments it leaves out:
/// refused (exit 2) before anything runs, naming what would be lost and the fix.
fn refuse_to_narrow(out: &Path, experiments: &[Experiment]) -> Result<(), Failure> {
    let Ok(text) = std::fs::read_to_string(out.join("results.json")) else {
        return Ok(());
    };
    let Ok(old) = serde_json::from_str::<Report>(&text) else {
        return Ok(());
    };
    let lost: Vec<&str> = old
        .experiments
        .iter()
        .map(|e| e.id.as_str())
        .filter(|id| !experiments.iter().any(|e| e.id == *id))
        .collect();
    if lost.is_empty() {
        return Ok(());
    }
    Err(Failure::input(format!(
        "{} holds a report of {} experiments, {} of which this run of some papers leaves out ({}{}); replacing it would lose them: give another --out, or drop --paper to run them all",
        out.display(),
        old.experiments.len(),
        lost.len(),
        lost.iter().take(3).copied().collect::<Vec<_>>().join(", "),
        if lost.len() > 3 { ", ..." } else { "" }
    )))
}

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
            Ok(true)
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
            Ok(true)
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
