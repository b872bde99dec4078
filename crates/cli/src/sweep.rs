//! `concord sweep FILE --out DIR`: a grid of overrides times seeds, run on local threads or on a
//! Dask cluster, into one tidy table (`DIR/results.parquet`, and `results.csv` with `--csv`).

use crate::clock::Stopwatch;
use crate::output_dir::OutputDir;
use crate::Failure;
use clap::Args;
use concord_py::local::run_local;
use concord_py::sweep::Sweep;
use concord_py::tidy::write_sweep_dir;
use std::io::{IsTerminal, Write};
use std::path::PathBuf;
use std::process::Command;

/// `concord sweep` arguments.
#[derive(Args, Debug)]
pub struct SweepArgs {
    /// The sweep file (TOML: `scenario`, `seeds`, `[set]`, `[[vary]]`; see examples/sweep-red.toml).
    pub file: PathBuf,
    /// Where to write results.parquet, runs.json and the inputs.
    #[arg(long)]
    pub out: PathBuf,
    /// Also write the table as results.csv.
    #[arg(long)]
    pub csv: bool,
    /// Local worker threads [default: the number of cores].
    #[arg(long)]
    pub jobs: Option<usize>,
    /// Attempts after a run's first failure.
    #[arg(long, default_value_t = 2)]
    pub retries: usize,
    /// Run on the Dask cluster whose scheduler is at this address (e.g. tcp://host:8786),
    /// through the Python package (`pip install ./python`; $CONCORD_PYTHON names the
    /// interpreter, python3 by default).
    #[arg(long, value_name = "ADDRESS")]
    pub dask: Option<String>,
}

/// Runs the sweep.
pub fn sweep(args: &SweepArgs) -> Result<(), Failure> {
    let sweep = Sweep::load(&args.file).map_err(|e| Failure::input(e.to_string()))?;
    if let Some(address) = &args.dask {
        return on_dask(args, address);
    }
    let out = OutputDir::claim(&args.out)?;
    let jobs = args.jobs.unwrap_or_else(|| {
        std::thread::available_parallelism().map_or(1, std::num::NonZeroUsize::get)
    });
    let watch = Stopwatch::start();
    let terminal = std::io::stderr().is_terminal();
    let progress = |done: usize, total: usize| {
        if terminal {
            let mut err = std::io::stderr().lock();
            let _ = write!(err, "\rsweep: {done}/{total} runs  {:.1} s ", watch.secs());
            let _ = err.flush();
        }
    };
    let records = run_local(&sweep, jobs, args.retries, &progress)
        .map_err(|e| Failure::runtime(e.to_string()))?;
    if terminal {
        eprintln!();
    }
    let table = write_sweep_dir(&sweep, &records, out.staging(), args.csv)
        .map_err(|e| Failure::runtime(format!("{e}; choose a writable --out")))?;
    out.commit()?;
    println!(
        "{} runs ({} groups x {} seeds) in {:.1} s, {} rows: {}",
        sweep.len(),
        sweep.groups(),
        sweep.seeds.len(),
        watch.secs(),
        table.rows(),
        args.out.join("results.parquet").display()
    );
    Ok(())
}

/// Hands the sweep to the Python package's Dask backend.
fn on_dask(args: &SweepArgs, address: &str) -> Result<(), Failure> {
    let python = std::env::var("CONCORD_PYTHON").unwrap_or_else(|_| "python3".into());
    let mut cmd = Command::new(&python);
    cmd.args(["-m", "concord.sweep"])
        .arg(&args.file)
        .arg("--out")
        .arg(&args.out)
        .args(["--dask", address, "--retries", &args.retries.to_string()]);
    if args.csv {
        cmd.arg("--csv");
    }
    let status = cmd.status().map_err(|e| {
        Failure::runtime(format!(
            "cannot start {python} for --dask: {e}; install Python 3 and the package \
             (pip install ./python), or set CONCORD_PYTHON"
        ))
    })?;
    if status.success() {
        Ok(())
    } else {
        Err(Failure::runtime(format!(
            "the Dask sweep failed ({status}); see the messages above (is the package \
             installed: pip install './python[dask]'?)"
        )))
    }
}
