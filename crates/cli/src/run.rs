//! `concord run`: one scenario, its summary on the terminal, its tables on disk.

use crate::output_dir::OutputDir;
use crate::progress::Progress;
use crate::table::render;
use crate::Failure;
use concord_cc::time::{Duration, Instant};
use concord_sim::results::{RunMeta, RunResults};
use concord_sim::scenario::{Scenario, ScenarioSource};
use concord_sim::Simulator;
use std::path::{Path, PathBuf};

/// Runs `sc` to the end, drawing progress; returns the finished simulator.
pub fn simulate(
    sc: &Scenario,
    capture_dir: Option<&Path>,
    label: &str,
) -> Result<Simulator, Failure> {
    let mut sim = Simulator::with_capture_dir(sc, capture_dir)
        .map_err(|e| Failure::runtime(e.to_string()))?;
    let mut progress = Progress::new(label);
    let total = sc.duration;
    let step = (total / 200).max(Duration::from_millis(1));
    let mut t = Instant::ZERO;
    while t < sim.end() {
        t += step;
        sim.run_until(t)
            .map_err(|e| Failure::runtime(e.to_string()))?;
        progress.update(sim.now().as_secs_f64(), total.as_secs_f64());
    }
    sim.finish().map_err(|e| Failure::runtime(e.to_string()))?;
    progress.finish();
    Ok(sim)
}

/// `concord run SCENARIO [--seed N] [--set KEY=VALUE]... [--out DIR] [--json] [--max-memory BYTES]`.
pub fn run(
    path: &Path,
    seed: Option<u64>,
    sets: &[String],
    out: Option<PathBuf>,
    json: bool,
    max_memory: u64,
) -> Result<(), Failure> {
    let mut source = load_source(path, seed, sets)?;
    source.set_max_memory(max_memory);
    let sc = source.build().map_err(|e| Failure::input(e.to_string()))?;
    let scenario_toml = source.render().map_err(|e| Failure::input(e.to_string()))?;
    let target = out.unwrap_or_else(|| PathBuf::from("results").join(directory_name(&sc.name)));
    let dir = OutputDir::claim(&target)?;
    let out = dir.staging().to_path_buf();
    let sim = simulate(&sc, Some(&out), &sc.name)?;
    let results = RunResults::from_simulator(&sim);
    let meta = RunMeta {
        concord_version: env!("CARGO_PKG_VERSION").to_string(),
        git_revision: concord_py::GIT_REVISION.to_string(),
        scenario: sc.name.clone(),
        scenario_file: Some(path.display().to_string()),
        overrides: overrides(&source),
        seed: sc.seed,
        command_line: std::env::args().collect(),
    };
    results
        .write_dir(&sim, &out)
        .and_then(|()| meta.write_dir(&scenario_toml, &out))
        .map_err(|e| {
            Failure::runtime(format!(
                "cannot write results to {}: {e}; choose a writable --out",
                target.display()
            ))
        })?;
    dir.commit()?;
    if json {
        let text =
            serde_json::to_string_pretty(&results).map_err(|e| Failure::runtime(e.to_string()))?;
        println!("{text}");
    } else {
        print!("{}", summary_text(&results));
        println!("results: {}", target.display());
    }
    Ok(())
}

/// The scenario file at `path` with `--seed` and the `--set KEY=VALUE` overrides, in order.
pub fn load_source(
    path: &Path,
    seed: Option<u64>,
    sets: &[String],
) -> Result<ScenarioSource, Failure> {
    let input = |e: concord_sim::scenario::ScenarioError| Failure::input(e.to_string());
    let mut source = ScenarioSource::from_file(path).map_err(input)?;
    for assignment in sets {
        source.set_cli(assignment).map_err(input)?;
    }
    if let Some(seed) = seed {
        let seed = i64::try_from(seed).map_err(|_| {
            Failure::input(format!(
                "--seed {seed} is too large; give a seed from 0 to {}",
                i64::MAX
            ))
        })?;
        source.set("seed", seed).map_err(input)?;
    }
    Ok(source)
}

/// The overrides of `source` as `key = value` lines (values as TOML).
pub fn overrides(source: &ScenarioSource) -> Vec<String> {
    source
        .overrides()
        .iter()
        .map(|o| format!("{} = {}", o.key, o.value))
        .collect()
}

/// A scenario name as one safe path component: anything but letters, digits, `-`, `_` and `.`
/// becomes `_`, and a name of dots only becomes `_`, so a name can never leave `results/`.
fn directory_name(name: &str) -> String {
    let safe: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.') {
                c
            } else {
                '_'
            }
        })
        .collect();
    if safe.is_empty() || safe.chars().all(|c| c == '.') {
        "_".to_string()
    } else {
        safe
    }
}

fn mbps(bps: f64) -> String {
    format!("{:.3}", bps / 1e6)
}

/// The terminal summary of a run: a table of flows, then the totals.
pub fn summary_text(r: &RunResults) -> String {
    let rows: Vec<Vec<String>> = r
        .flows
        .iter()
        .map(|f| {
            vec![
                f.name.clone(),
                f.kind.clone(),
                format!("{}->{}", f.from, f.to),
                mbps(f.goodput_bps),
                f.retransmissions.to_string(),
                f.timeouts.to_string(),
                format!("{:.1}", f.delay_p50_ms),
                format!("{:.1}", f.delay_p99_ms),
            ]
        })
        .collect();
    let mut s = format!(
        "scenario {}  seed {}  {} s simulated (measured from {} s)\n\n",
        r.scenario, r.seed, r.duration_s, r.warmup_s
    );
    s += &render(
        &[
            "flow",
            "kind",
            "path",
            "goodput Mbps",
            "retx",
            "RTOs",
            "delay p50 ms",
            "p99 ms",
        ],
        &rows,
    );
    s += &format!(
        "\ntotal goodput {} Mbps   Jain {:.4}   bottleneck {}: utilisation {:.2}%, drops {}, marks {}   events {}\n",
        mbps(r.total_goodput_bps),
        r.jain_index,
        r.bottleneck,
        r.bottleneck_utilisation * 100.0,
        r.bottleneck_drops,
        r.bottleneck_marks,
        r.events
    );
    s
}

#[cfg(test)]
mod tests {
    use super::directory_name;

    #[test]
    fn scenario_names_cannot_escape_the_results_directory() {
        assert_eq!(directory_name("dumbbell-4"), "dumbbell-4");
        assert_eq!(directory_name("../../etc"), ".._.._etc");
        assert_eq!(directory_name("/abs/path"), "_abs_path");
        assert_eq!(directory_name(".."), "_");
        assert_eq!(directory_name(""), "_");
    }
}
