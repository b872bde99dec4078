//! `concord`: run congestion-control experiments on the embedded packet simulator.

mod bench;
mod clock;
mod progress;
mod reproduce;
mod run;
mod table;
mod validate;

use clap::{Parser, Subcommand};
use std::path::PathBuf;
use std::process::ExitCode;

/// concord: coordinated congestion control, simulated and real.
///
/// concord implements the Congestion Manager (CM), GCCA, ECA, MCCP and the Coordination Protocol
/// (CP), with TCP NewReno, RED/ECN, TFRC and DropTail as baselines, and runs them on a fast,
/// deterministic packet-level simulator. A scenario file (TOML) describes the topology, the
/// traffic and what to record; see docs/scenarios.md.
#[derive(Parser, Debug)]
#[command(name = "concord", version, about, long_about, after_help = EXAMPLES)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

const EXAMPLES: &str = "Examples:
  concord reproduce --quick                                      every paper's claims, report in report/
  concord reproduce --paper baseline --out report-baseline       one paper
  concord report report                                          re-render report/index.html
  concord report report --readme README.md                       the README's Results section
  concord run scenarios/basic/dumbbell-4-droptail.toml          run a scenario, print a summary
  concord run scenarios/basic/dumbbell-4-red.toml --seed 7 --out results/red
  concord bench                                                  64 NewReno flows on a 10 Mbps dumbbell
  concord bench --flows 16 --duration 30s --json                 machine-readable figures
  concord validate --quick                                       concord against ns-3 on a grid subset

Exit codes: 0 success, 1 a claim failed or a runtime failure (e.g. unwritable output),
2 invalid scenario or arguments.";

#[derive(Subcommand, Debug)]
enum Command {
    /// Run one scenario and write its results (CSV tables and summary.json).
    Run {
        /// The scenario file (TOML).
        scenario: PathBuf,
        /// Override the scenario's seed.
        #[arg(long)]
        seed: Option<u64>,
        /// Where to write results [default: results/<scenario name>].
        #[arg(long)]
        out: Option<PathBuf>,
        /// Print the summary as JSON instead of a table.
        #[arg(long)]
        json: bool,
    },
    /// Measure the simulator's speed on the standard dumbbell benchmark.
    ///
    /// N senders on 1 Gbps / 1 ms access links to router R1, the bottleneck R1 -> R2, and
    /// 1 Gbps / 1 ms links from R2 to N receivers; bulk NewReno flows start uniformly in the
    /// first 0.1 s. Prints events per second, simulated bottleneck packets per wall second,
    /// simulated seconds per wall second and peak memory, beside the figures an ns-3 user reads
    /// (per-flow goodput, Jain's index, bottleneck drops, utilisation).
    Bench(bench::BenchArgs),
    /// Run the papers' experiments, check every claim, and write a report.
    ///
    /// Each experiment is a set of scenarios plus claims naming the paper's figure or table,
    /// the metric, the paper's value and the tolerance. Writes DIR/results.json (every claim),
    /// DIR/figures/*.svg, DIR/raw/ and DIR/index.html; exits 0 when every claim passes, 1 when
    /// one fails.
    Reproduce(reproduce::ReproduceArgs),
    /// Cross-validate concord's TCP and queues against ns-3 3.44 on a grid of cases.
    ///
    /// Each case of the grid (crates/validate/grid.toml: dumbbells and parking lots, 1-64 flows,
    /// 1-100 Mbps, 10-200 ms, DropTail and RED with and without ECN, random loss, start-up) runs
    /// in concord and in ns-3 (bench/ns3/validate.cc), and is checked: utilisation within 2
    /// points, Jain's index within 0.05, goodput under random loss within 15%. Writes
    /// DIR/results.{json,csv,md}, DIR/figures/*.svg and DIR/index.html; exits 0 when every run
    /// completed (a case outside the targets is a finding, with its measured cause), 1 when a
    /// run failed.
    Validate(validate::ValidateArgs),
    /// Re-render DIR/index.html from DIR/results.json without re-running anything.
    Report {
        /// A directory written by `concord reproduce`.
        dir: PathBuf,
        /// Print the claims as a Markdown table instead.
        #[arg(long, conflicts_with = "readme")]
        markdown: bool,
        /// Write the claims and key figures into this README's Results section instead:
        /// the text between the `<!-- results:begin -->` and `<!-- results:end -->` lines is
        /// replaced, and the figures are copied to docs/figures/ beside the README.
        #[arg(long, value_name = "README")]
        readme: Option<PathBuf>,
        /// With --readme, the figures to show (repeatable; file stems as in DIR/figures/)
        /// [default: the first figure of up to three papers].
        #[arg(long = "figure", value_name = "FIGURE", requires = "readme")]
        figures: Vec<String>,
    },
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Run {
            scenario,
            seed,
            out,
            json,
        } => run::run(&scenario, seed, out, json),
        Command::Bench(args) => bench::bench(&args),
        Command::Validate(args) => validate::validate(&args),
        Command::Reproduce(args) => reproduce::reproduce(&args).and_then(all_pass),
        Command::Report {
            dir,
            markdown,
            readme,
            figures,
        } => {
            let action = match &readme {
                Some(path) => reproduce::ReportAction::Readme {
                    path,
                    figures: &figures,
                },
                None if markdown => reproduce::ReportAction::Markdown,
                None => reproduce::ReportAction::Html,
            };
            reproduce::report(&dir, action).and_then(all_pass)
        }
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("concord: {}", e.message);
            ExitCode::from(e.code)
        }
    }
}

/// Exit code 1 when a claim failed (the report says which and by how much).
fn all_pass(pass: bool) -> Result<(), Failure> {
    if pass {
        Ok(())
    } else {
        Err(Failure::runtime(
            "some claims failed; see the table above and the report",
        ))
    }
}

/// A failure with its exit code.
#[derive(Debug)]
pub struct Failure {
    /// One line for stderr.
    pub message: String,
    /// 1 for runtime failures, 2 for bad input.
    pub code: u8,
}

impl Failure {
    /// A bad-input failure (exit code 2).
    pub fn input(message: impl Into<String>) -> Failure {
        Failure {
            message: message.into(),
            code: 2,
        }
    }
    /// A runtime failure (exit code 1).
    pub fn runtime(message: impl Into<String>) -> Failure {
        Failure {
            message: message.into(),
            code: 1,
        }
    }
}
