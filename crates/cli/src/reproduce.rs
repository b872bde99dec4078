//! `concord reproduce` and `concord report`: the papers' experiments, checked and reported.

use crate::clock::Stopwatch;
use crate::table::render;
use crate::Failure;
use concord_repro::claim::fmt_num;
use concord_repro::{registry, run_experiments, write_report, Ctx, Paper, Report};
use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

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
    let watch = Stopwatch::start();
    let tty = std::io::stderr().is_terminal();
    let finished = Mutex::new(0usize);
    let total = experiments.len();
    eprintln!(
        "concord reproduce: {total} experiments on {jobs} threads{}",
        if a.quick { " (quick)" } else { "" }
    );
    let outcomes = run_experiments(&experiments, &ctx, jobs, &|i, r| {
        let n = finished.lock().map(|mut f| {
            *f += 1;
            *f
        });
        let n = n.unwrap_or(0);
        let e = &experiments[i];
        let status = match r {
            Ok(o) => format!(
                "{}/{} claims pass",
                o.claims.iter().filter(|c| c.pass).count(),
                o.claims.len()
            ),
            Err(err) => format!("failed: {err}"),
        };
        let elapsed = watch.secs();
        let eta = if n > 0 {
            elapsed / n as f64 * (total - n) as f64
        } else {
            0.0
        };
        let mut err = std::io::stderr().lock();
        let bar: String =
            "#".repeat(n * 20 / total.max(1)) + &".".repeat(20 - n * 20 / total.max(1));
        if tty {
            let _ = writeln!(
                err,
                "\r[{bar}] {n}/{total}  {:<28} {status}  ({elapsed:.1} s, eta {eta:.0} s)",
                e.id
            );
        } else {
            let _ = writeln!(err, "[{n}/{total}] {} {status}", e.id);
        }
    });
    let report = Report::new(a.quick, &experiments, &outcomes);
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

/// `concord report DIR [--markdown]`: re-renders the HTML from `results.json` without
/// re-running, or prints the claims as Markdown.
pub fn report(dir: &Path, markdown: bool) -> Result<bool, Failure> {
    let fail = |e: std::io::Error| {
        Failure::input(format!(
            "cannot read the report in {}: {e}; give a directory written by `concord reproduce`",
            dir.display()
        ))
    };
    if markdown {
        let text = std::fs::read_to_string(dir.join("results.json")).map_err(fail)?;
        let r: Report = serde_json::from_str(&text)
            .map_err(|e| fail(std::io::Error::new(std::io::ErrorKind::InvalidData, e)))?;
        print!("{}", concord_repro::report::render_markdown(&r));
        return Ok(r.all_pass());
    }
    let r = concord_repro::report::rerender(dir).map_err(fail)?;
    print!("{}", claims_table(&r));
    println!("\nreport: {}", dir.join("index.html").display());
    Ok(r.all_pass())
}
