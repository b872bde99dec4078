//! Runs one experiment on many seed blocks and prints, for each claim, its mean and verdict on
//! every block: how a claim's statistic is spread over seeds against its tolerance (the
//! many-seed measurements in docs/analysis.md, "seed-dependent rows").
//!
//! `cargo run --release -p concord-repro --example seed_blocks -- EXPERIMENT [--full] BASE...`
//! runs experiment `EXPERIMENT` (e.g. `cp/single-flowshare`) once per seed base (without the
//! pooling rule: each block alone) and prints one tab-separated line per claim and block:
//! base, the claim's figure and metric, mean, 95% interval, verdict, per-seed values.

use concord_repro::{registry, Ctx};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some((id, rest)) = args.split_first() else {
        eprintln!("usage: seed_blocks EXPERIMENT [--full] BASE...");
        std::process::exit(2);
    };
    let full = rest.iter().any(|a| a == "--full");
    let bases: Vec<u64> = rest
        .iter()
        .filter(|a| *a != "--full")
        .map(|a| {
            a.parse().unwrap_or_else(|_| {
                eprintln!("seed base `{a}` is not a whole number");
                std::process::exit(2)
            })
        })
        .collect();
    let Some(e) = registry().into_iter().find(|e| e.id == id) else {
        eprintln!("no experiment `{id}`; give one of: {}", {
            let ids: Vec<&str> = registry().iter().map(|e| e.id).collect();
            ids.join(", ")
        });
        std::process::exit(2);
    };
    for base in bases {
        let ctx = Ctx {
            quick: !full,
            seed_base: base,
            replicate: false,
        };
        match (e.run)(&ctx) {
            Ok(o) => {
                for c in &o.claims {
                    let values: Vec<String> = c.values.iter().map(|v| format!("{v:.4}")).collect();
                    println!(
                        "{base}\t{}: {}\t{:.4}\t[{:.4}, {:.4}]\t{}\t{}",
                        c.figure,
                        c.metric,
                        c.ours,
                        c.ci95[0],
                        c.ci95[1],
                        c.verdict.key(),
                        values.join(",")
                    );
                }
            }
            Err(err) => println!("{base}\terror\t{err}"),
        }
    }
}
