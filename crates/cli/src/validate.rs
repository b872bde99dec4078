//! `concord validate`: the cross-validation grid, run in concord and ns-3 and compared.

use crate::clock::Stopwatch;
use crate::Failure;
use concord_validate::suite::{self, Options, Verdict};
use concord_validate::{concord_run, grid, report};
use std::path::PathBuf;
use std::sync::Mutex;

/// The ns-3 program's place when `--ns3` is not given, relative to the working directory.
const DEFAULT_NS3: &str = "bench/ns3/build/validate";
/// The ns-3 cache's place when `--ns3-cache` is not given: the repository's, committed.
const DEFAULT_NS3_CACHE: &str = "bench/ns3/cache";

/// The arguments of `concord validate`.
#[derive(clap::Args, Debug)]
pub struct ValidateArgs {
    /// Only the `--quick` subset of the grid (the cases CI runs).
    #[arg(long)]
    pub quick: bool,
    /// Only these cases (repeatable): an id, a part of one (`dumbbell-4f`) or a group (`issue`).
    #[arg(long = "cases", value_name = "PATTERN")]
    pub cases: Vec<String>,
    /// Where the table and figures go.
    #[arg(long, default_value = "validation")]
    pub out: PathBuf,
    /// The ns-3 program built by bench/ns3/build-validate.sh [default: bench/ns3/build/validate].
    #[arg(long, value_name = "PATH", conflicts_with = "no_ns3")]
    pub ns3: Option<PathBuf>,
    /// Run concord alone (nothing is compared).
    #[arg(long)]
    pub no_ns3: bool,
    /// A grid file instead of the shipped crates/validate/grid.toml.
    #[arg(long, value_name = "FILE")]
    pub grid: Option<PathBuf>,
    /// Runs at once [default: the number of cores].
    #[arg(long)]
    pub jobs: Option<usize>,
    /// Skip the ns-3 variants that name the cause of a case outside the targets.
    #[arg(long)]
    pub no_diagnose: bool,
    /// Run every ns-3 variant on every case outside the targets (default: every variant on one
    /// case per symptom group, then the variants that explain it on the group's other cases).
    #[arg(long, conflicts_with = "no_diagnose")]
    pub diagnose_all: bool,
    /// List the selected cases and exit.
    #[arg(long)]
    pub list: bool,
    /// Also run the cases the namespace test bed can host with kernel TCP, with these
    /// congestion controls (comma-separated: reno,cubic). Root only; real time.
    #[arg(long, value_name = "CCS", value_delimiter = ',')]
    pub linux: Vec<String>,
    /// Reuse the ns-3 runs of an earlier `results.json` in this directory (same case ids and
    /// seeds: the same ns-3 settings) instead of running ns-3 again: to measure a changed concord.
    #[arg(long, value_name = "DIR")]
    pub reuse_ns3: Option<PathBuf>,
    /// Where ns-3's outputs are kept, by ns-3 build (the wheel's version and validate.cc's
    /// hash) and arguments (case, seed, switch), so a rerun reads them back instead of
    /// simulating again [default: bench/ns3/cache, the repository's].
    #[arg(long, value_name = "DIR", conflicts_with = "no_ns3_cache")]
    pub ns3_cache: Option<PathBuf>,
    /// Run every ns-3 case again (neither read nor fill the ns-3 cache).
    #[arg(long)]
    pub no_ns3_cache: bool,
    /// The test bed's delay line program [default: concord-testbed beside this program].
    #[arg(long, value_name = "PATH")]
    pub testbed_exe: Option<PathBuf>,
}

/// `concord validate`: exits 0 when every run completed (cases outside the targets are findings,
/// listed in the table with their measured cause), 1 when a run failed.
pub fn validate(a: &ValidateArgs) -> Result<(), Failure> {
    let all = suite::load_grid(a.grid.as_deref()).map_err(Failure::input)?;
    let cases = grid::select(&all, &a.cases, a.quick).map_err(|e| Failure::input(e.to_string()))?;
    if cases.is_empty() {
        return Err(Failure::input(
            "no case is both in --quick and matched by --cases; drop one of them",
        ));
    }
    if a.list {
        for c in &cases {
            println!("{}\t{} seeds\t{}", c.id, c.seeds.len(), c.note);
        }
        return Ok(());
    }
    let ns3 = if a.no_ns3 {
        None
    } else {
        let p = a.ns3.clone().unwrap_or_else(|| PathBuf::from(DEFAULT_NS3));
        if !p.is_file() {
            return Err(Failure::runtime(format!(
                "no ns-3 program at {}; fix: build it with bench/ns3/build-validate.sh (needs the ns3==3.44.post0 wheel, see bench/ns3/README.md), pass --ns3 PATH, or run concord alone with --no-ns3",
                p.display()
            )));
        }
        Some(p)
    };
    let jobs = a
        .jobs
        .unwrap_or_else(|| {
            std::thread::available_parallelism()
                .map(|n| n.get())
                .unwrap_or(1)
        })
        .max(1);
    let runs: usize = cases.iter().map(|c| c.seeds.len()).sum();
    eprintln!(
        "concord validate: {} cases, {runs} runs each in concord{} on {jobs} threads",
        cases.len(),
        if ns3.is_some() { " and ns-3" } else { "" }
    );
    let scenarios = a.out.join("scenarios");
    std::fs::create_dir_all(&scenarios).map_err(|e| {
        Failure::runtime(format!(
            "cannot create {}: {e}; choose a writable --out",
            scenarios.display()
        ))
    })?;
    for c in &cases {
        let first = c.seeds.first().copied().unwrap_or(1);
        let path = scenarios.join(format!("{}.toml", c.id));
        std::fs::write(&path, concord_run::scenario_text(c, first))
            .map_err(|e| Failure::runtime(format!("cannot write {}: {e}", path.display())))?;
    }
    let watch = Stopwatch::start();
    let linux = if a.linux.is_empty() {
        None
    } else {
        if let Some(cc) = a
            .linux
            .iter()
            .find(|c| !matches!(c.as_str(), "reno" | "cubic"))
        {
            return Err(Failure::input(format!(
                "--linux {cc}: use reno, cubic or reno,cubic"
            )));
        }
        let exe = a.testbed_exe.clone().unwrap_or_else(|| {
            std::env::current_exe()
                .ok()
                .and_then(|p| p.parent().map(|d| d.join("concord-testbed")))
                .unwrap_or_else(|| PathBuf::from("concord-testbed"))
        });
        if !exe.is_file() {
            return Err(Failure::runtime(format!(
                "no test bed program at {}; fix: cargo build --release -p concord-net, or pass --testbed-exe PATH",
                exe.display()
            )));
        }
        Some((
            concord_validate::linux::Bed {
                delay_line_exe: exe,
                prefix: "cval".into(),
                net: 197,
            },
            a.linux.clone(),
        ))
    };
    let reuse = match &a.reuse_ns3 {
        None => Default::default(),
        Some(dir) => {
            let path = dir.join("results.json");
            let text = std::fs::read_to_string(&path).map_err(|e| {
                Failure::input(format!(
                    "{}: {e}; fix: name a directory written by concord validate",
                    path.display()
                ))
            })?;
            suite::reusable_ns3_runs(&text)
                .map_err(|e| Failure::input(format!("{}: {e}", path.display())))?
        }
    };
    let ns3_cache = match (&ns3, a.no_ns3_cache) {
        (Some(exe), false) => {
            let dir = a
                .ns3_cache
                .clone()
                .unwrap_or_else(|| PathBuf::from(DEFAULT_NS3_CACHE));
            let cache =
                concord_validate::ns3_cache::Ns3Cache::open(&dir, exe).map_err(Failure::runtime)?;
            eprintln!(
                "concord validate: ns-3 cache {}: {} runs of this build ({})",
                dir.display(),
                cache.len(),
                cache.build()
            );
            Some(cache)
        }
        _ => None,
    };
    let options = Options {
        ns3,
        ns3_cache,
        jobs,
        diagnose: !a.no_diagnose,
        diagnose_all: a.diagnose_all,
        linux,
        reuse,
    };
    let stderr = Mutex::new(());
    let write = |results: &[suite::CaseResult]| {
        report::write(&a.out, results).map_err(|e| {
            Failure::runtime(format!(
                "cannot write results to {}: {e}; choose a writable --out",
                a.out.display()
            ))
        })
    };
    // The table is written as soon as every case is compared, before the diagnosis runs, so a
    // long or interrupted diagnosis never loses it.
    let early = Mutex::new(None);
    let results = suite::run_with(
        &cases,
        &options,
        &|line| {
            let _guard = stderr.lock();
            eprintln!("  {line} ({:.0} s)", watch.secs());
        },
        &|compared| {
            let outcome = write(compared);
            let (within, outside, errors, _) = report::tally(compared);
            let _guard = stderr.lock();
            match &outcome {
                Ok(()) => eprintln!(
                    "concord validate: compared in {:.0} s: {within} within, {outside} outside, {errors} errors; table written to {}{}",
                    watch.secs(),
                    a.out.display(),
                    if options.diagnose && outside > 0 { "; diagnosing the cases outside" } else { "" }
                ),
                Err(e) => eprintln!("concord validate: {}", e.message),
            }
            if let Ok(mut g) = early.lock() {
                *g = Some(outcome);
            }
        },
    );
    let wall = watch.secs();
    if let Ok(mut g) = early.lock() {
        if let Some(Err(e)) = g.take() {
            return Err(e);
        }
    }
    write(&results)?;
    println!("{}", report::markdown(&results));
    let (within, outside, errors, _) = report::tally(&results);
    println!(
        "concord validate: {} cases in {wall:.0} s wall: {within} within the targets, {outside} outside, {errors} errors; table and figures in {}",
        results.len(),
        a.out.display()
    );
    if let Some(r) = results.iter().find(|r| r.verdict == Verdict::Error) {
        return Err(Failure::runtime(format!(
            "{errors} cases could not be run, e.g. {}: {}",
            r.id,
            r.errors.first().map(String::as_str).unwrap_or("")
        )));
    }
    Ok(())
}
