//! `concord`: run congestion-control experiments on the embedded packet simulator.

mod bench;
mod build_info;
mod clock;
mod output_dir;
mod plot;
mod png;
mod progress;
mod reproduce;
mod reproduce_dask;
mod run;
mod sweep;
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
  concord run scenarios/basic/dumbbell-4-red.toml --set topology.bottleneck.rate=20Mbps
  concord sweep examples/sweep-red.toml --out results/sweep      a grid x seeds into results.parquet
  concord plot results/red                                       goodput, cwnd, queue, delay CDF as SVG
  concord bench                                                  64 NewReno flows on a 10 Mbps dumbbell
  concord bench --flows 16 --duration 30s --json                 machine-readable figures
  concord completions bash > ~/.local/share/bash-completion/completions/concord
  concord man > ~/.local/share/man/man1/concord.1
  concord validate --quick                                       concord against ns-3 on a grid subset

Exit codes: 0 success (for reproduce: every experiment ran, whatever the verdicts), 1 a runtime
failure (an experiment erred, unwritable output) or a verdict changed against --check,
2 invalid scenario or arguments.";

#[derive(Subcommand, Debug)]
enum Command {
    /// Run one scenario and write its results (CSV tables, summary.json, and meta.json and
    /// scenario.toml saying how the run was made).
    Run {
        /// The scenario file (TOML).
        scenario: PathBuf,
        /// Override the scenario's seed.
        #[arg(long)]
        seed: Option<u64>,
        /// Set a scenario key by its dotted path, e.g. `topology.bottleneck.rate=20Mbps` or
        /// `flow[0].count=2` (repeatable). The value is TOML (`20`, `true`, `"x"`) or else a
        /// string, and is checked like the file's.
        #[arg(long = "set", value_name = "KEY=VALUE")]
        sets: Vec<String>,
        /// Where to write results [default: results/<scenario name>].
        #[arg(long)]
        out: Option<PathBuf>,
        /// Print the summary as JSON instead of a table.
        #[arg(long)]
        json: bool,
        /// Refuse, before running, a scenario whose memory estimate is over this (e.g. 8GiB,
        /// 500MB).
        #[arg(long, value_name = "BYTES", default_value = "8GiB",
              value_parser = concord_sim::scenario::limits::parse_bytes)]
        max_memory: u64,
    },
    /// Run a scenario over a grid of overrides times seeds into one tidy table.
    ///
    /// The sweep file names the base scenario, fixed overrides (`[set]`), the keys to vary
    /// (`[[vary]]` with `values` or `range`) and the seeds. Writes DIR/results.parquet (one row
    /// per flow per run: the run, the swept keys, the seed, the flow's figures and the run's),
    /// DIR/runs.json (each run's metadata) and, with --csv, DIR/results.csv.
    Sweep(sweep::SweepArgs),
    /// Draw the standard time plots of a `concord run` output directory as SVG or PNG.
    ///
    /// Writes DIR/plots/goodput.svg (per flow), cwnd.svg (flows in `record.cwnd`), queue.svg
    /// (sampled queues) and delay-cdf.svg (each flow's one-way delay CDF); with --format png,
    /// the same names in .png.
    Plot {
        /// A directory written by `concord run`.
        dir: PathBuf,
        /// svg, or png (rendered from the SVG at twice its size with the system's fonts).
        #[arg(long, value_enum, default_value_t = plot::Format::Svg)]
        format: plot::Format,
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
    /// the metric, the paper's value and the tolerance, and ends in a verdict (reproduced, not
    /// reproduced, under a deviation, seed-dependent, paper inconsistent). Writes
    /// DIR/results.json (every claim), DIR/figures/*.svg, DIR/raw/ and DIR/index.html; exits 0
    /// when every experiment ran, whatever the verdicts, 1 when one erred or `--check` finds a
    /// changed verdict.
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
    /// Print a shell completion script for concord.
    ///
    /// bash: `concord completions bash > ~/.local/share/bash-completion/completions/concord`;
    /// zsh: `concord completions zsh > ~/.zfunc/_concord` (with ~/.zfunc on fpath);
    /// fish: `concord completions fish > ~/.config/fish/completions/concord.fish`.
    Completions {
        /// The shell.
        shell: clap_complete::Shell,
    },
    /// Print concord's manual page (roff).
    ///
    /// `concord man > ~/.local/share/man/man1/concord.1`, then `man concord`.
    Man,
}

fn main() -> ExitCode {
    exit_quietly_on_broken_pipe();
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Completions { shell } => {
            let mut cmd = <Cli as clap::CommandFactory>::command();
            clap_complete::generate(shell, &mut cmd, "concord", &mut std::io::stdout());
            Ok(())
        }
        Command::Man => clap_mangen::Man::new(<Cli as clap::CommandFactory>::command())
            .render(&mut std::io::stdout())
            .or_else(|e| match e.kind() {
                // The reader has what it wanted (`concord man | head`).
                std::io::ErrorKind::BrokenPipe => Ok(()),
                _ => Err(Failure::runtime(format!(
                    "cannot write the manual page: {e}"
                ))),
            }),
        Command::Run {
            scenario,
            seed,
            sets,
            out,
            json,
            max_memory,
        } => run::run(&scenario, seed, &sets, out, json, max_memory),
        Command::Sweep(args) => sweep::sweep(&args),
        Command::Plot { dir, format } => plot::plot(&dir, format).map(|files| {
            for f in files {
                println!("{}", f.display());
            }
        }),
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

/// Ends the process with status 0, silently, when a write to standard output or standard error
/// finds the reader gone (`concord report report | head`): the reader wanted no more. Any other
/// failed `print!` (a full disk) ends it with one line and status 1. `print!` panics on such
/// writes; every other panic goes to the default hook.
fn exit_quietly_on_broken_pipe() {
    let default = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        let payload = info.payload();
        let message = payload
            .downcast_ref::<String>()
            .map(String::as_str)
            .or_else(|| payload.downcast_ref::<&str>().copied())
            .unwrap_or("");
        if message.contains("Broken pipe") {
            std::process::exit(0);
        }
        // Any other failed write to the terminal or a file (a full disk): one line, status 1.
        if let Some(what) = message.strip_prefix("failed printing to ") {
            use std::io::Write as _;
            let _ = writeln!(std::io::stderr(), "concord: cannot write to {what}");
            std::process::exit(1);
        }
        default(info);
    }));
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
