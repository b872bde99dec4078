//! How seed-dependent a claim's verdict is: runs the claims' experiments as `concord reproduce`
//! does (the pooling rule: the run's own seed block and the replicate block 1000 seeds on) at
//! each of several seed bases, and writes, per claim, the verdict, mean, 95% interval and
//! margin to the tolerance at every base, each block's own verdict, and every distinct seed
//! pooled (docs/analysis.md, "Seed-set dependence of the quick verdicts").
//!
//! ```sh
//! nice cargo run --release -p concord-repro --example seed_dependence -- \
//!     [--full] [--jobs N] [--bases 0,1001,3001,...] CLAIM_ID... > table.md
//! ```
//!
//! CLAIM_ID is a claim's id as `results.json` and the expectation files spell it. The quick
//! setting unless `--full`; `--jobs` threads (default 2); bases default to 0, 1001, 3001, 5001,
//! 7001 and 9001 (the default run, the seed base CI compares it with, then four runs whose
//! seeds no other run of the list draws). The Markdown on stdout depends only on the
//! arguments: the same bases give the same bytes. Progress goes to stderr.

use concord_repro::seed_sweep::{render_summary, render_sweep, Sweep};
use concord_repro::{registry, run_experiments, Ctx, Report};

/// The seed bases when none are given.
const DEFAULT_BASES: [u64; 6] = [0, 1001, 3001, 5001, 7001, 9001];

/// What the command line asks for.
struct Args {
    full: bool,
    jobs: usize,
    bases: Vec<u64>,
    claims: Vec<String>,
}

fn parse(args: &[String]) -> Result<Args, String> {
    let mut a = Args {
        full: false,
        jobs: 2,
        bases: DEFAULT_BASES.to_vec(),
        claims: Vec::new(),
    };
    let mut it = args.iter();
    while let Some(arg) = it.next() {
        match arg.as_str() {
            "--full" => a.full = true,
            "--jobs" => {
                let v = it.next().ok_or("--jobs needs a number of threads")?;
                a.jobs = v
                    .parse()
                    .ok()
                    .filter(|j| *j > 0)
                    .ok_or(format!("--jobs `{v}` is not a positive whole number"))?;
            }
            "--bases" => {
                let v = it
                    .next()
                    .ok_or("--bases needs a list such as 0,1001,3001")?;
                a.bases = v
                    .split(',')
                    .map(|b| {
                        b.trim()
                            .parse()
                            .map_err(|_| format!("seed base `{b}` is not a whole number"))
                    })
                    .collect::<Result<_, _>>()?;
            }
            flag if flag.starts_with("--") => {
                return Err(format!(
                    "unknown option `{flag}`; the options are --full, --jobs N, --bases B,B,..."
                ))
            }
            id => a.claims.push(id.to_string()),
        }
    }
    if a.claims.is_empty() {
        return Err("name at least one claim id (as results.json spells it)".into());
    }
    Ok(a)
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let args = parse(&args).unwrap_or_else(|e| {
        eprintln!("seed_dependence: {e}");
        eprintln!("usage: seed_dependence [--full] [--jobs N] [--bases B,B,...] CLAIM_ID...");
        std::process::exit(2);
    });
    let all = registry();
    let mut wanted = Vec::new();
    for id in &args.claims {
        let experiment = id.rsplit_once('/').map_or("", |(e, _)| e);
        if !all.iter().any(|e| e.id == experiment) {
            eprintln!("seed_dependence: claim `{id}` names no experiment; give an id from results.json (`experiment/claim-slug`)");
            std::process::exit(2);
        }
        wanted.push(experiment);
    }
    let experiments: Vec<_> = all.into_iter().filter(|e| wanted.contains(&e.id)).collect();
    let mut sweeps: Vec<Sweep> = args
        .claims
        .iter()
        .map(|id| Sweep {
            id: id.clone(),
            runs: Vec::new(),
        })
        .collect();
    for &base in &args.bases {
        let ctx = Ctx {
            quick: !args.full,
            seed_base: base,
            replicate: true,
        };
        let outcomes = run_experiments(&experiments, &ctx, args.jobs, &|_, _| {});
        let report = Report::new(!args.full, &experiments, &outcomes);
        for w in &mut sweeps {
            let claim = report.claims.iter().find(|c| c.id == w.id).cloned();
            w.runs.push((base, claim));
        }
        eprintln!("seed_dependence: seed base {base} done");
    }
    let missing: Vec<&str> = sweeps
        .iter()
        .filter(|w| w.runs.iter().all(|(_, c)| c.is_none()))
        .map(|w| w.id.as_str())
        .collect();
    if !missing.is_empty() {
        eprintln!(
            "seed_dependence: no run gave {}; check the ids against results.json",
            missing.join(", ")
        );
        std::process::exit(1);
    }
    let bases: Vec<String> = args.bases.iter().map(u64::to_string).collect();
    println!(
        "{} setting, seed bases {} (each run pools its own block and the block 1000 seeds on, as `concord reproduce --seed-base B` does), concord {}.\n",
        if args.full { "Full" } else { "Quick" },
        bases.join(", "),
        env!("CARGO_PKG_VERSION")
    );
    print!("{}", render_summary(&sweeps));
    println!();
    for w in &sweeps {
        print!("{}", render_sweep(w));
    }
}
