//! One run in-process: a scenario with its overrides in, the files of `concord run` out.

use concord_sim::results::{RunMeta, RunResults};
use concord_sim::scenario::{ScenarioError, ScenarioSource};
use concord_sim::Simulator;
use std::path::Path;

/// Why a run did not complete.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    /// The scenario (or an override) is invalid.
    #[error("{0}")]
    Scenario(#[from] ScenarioError),
    /// The simulator could not be built or could not write a trace.
    #[error("{0}")]
    Runtime(String),
}

/// What a run gives: the figures, its tables as CSV text, and how it was made.
#[derive(Clone, Debug)]
pub struct RunOutput {
    /// The summary figures (`summary.json`).
    pub results: RunResults,
    /// The tables by file stem (`flows`, `channels`, ...), as `concord run` writes them.
    pub tables: Vec<(&'static str, String)>,
    /// How the run was made (`meta.json`).
    pub meta: RunMeta,
    /// The scenario as run, as TOML (`scenario.toml`).
    pub scenario_toml: String,
}

impl RunOutput {
    /// `summary.json`'s text.
    pub fn summary_json(&self) -> String {
        serde_json::to_string_pretty(&self.results).unwrap_or_default()
    }

    /// The table `stem` (`flows`, `goodput`, ...), if the run has it.
    pub fn table(&self, stem: &str) -> Option<&str> {
        self.tables
            .iter()
            .find(|(s, _)| *s == stem)
            .map(|(_, t)| t.as_str())
    }

    /// Writes what `concord run` writes (tables, `summary.json`, `meta.json`, `scenario.toml`)
    /// into `dir`.
    pub fn write_dir(&self, dir: &Path) -> std::io::Result<()> {
        std::fs::create_dir_all(dir)?;
        std::fs::write(dir.join("summary.json"), self.summary_json() + "\n")?;
        for (stem, csv) in &self.tables {
            std::fs::write(dir.join(format!("{stem}.csv")), csv)?;
        }
        self.meta.write_dir(&self.scenario_toml, dir)
    }
}

/// Runs `source` to the end. Pcap traces the scenario asks for are written into `capture_dir`
/// (a scenario that records pcap needs one). `command_line` is recorded in the metadata.
pub fn run_source(
    source: &ScenarioSource,
    capture_dir: Option<&Path>,
    command_line: Vec<String>,
) -> Result<RunOutput, RunError> {
    let (results, meta, sim) = simulate(source, capture_dir, command_line)?;
    let scenario_toml = source.render()?;
    let tables = results.tables(&sim);
    Ok(RunOutput {
        results,
        tables,
        meta,
        scenario_toml,
    })
}

/// Builds `source`'s scenario and runs it to the end: the summary figures, the metadata and
/// the finished simulator (whose recorded series the tables are made from).
pub fn simulate(
    source: &ScenarioSource,
    capture_dir: Option<&Path>,
    command_line: Vec<String>,
) -> Result<(RunResults, RunMeta, Simulator), RunError> {
    let sc = source.build()?;
    let mut sim = Simulator::with_capture_dir(&sc, capture_dir)
        .map_err(|e| RunError::Runtime(e.to_string()))?;
    sim.run().map_err(|e| RunError::Runtime(e.to_string()))?;
    let results = RunResults::from_simulator(&sim);
    let meta = RunMeta {
        concord_version: crate::VERSION.to_string(),
        git_revision: crate::GIT_REVISION.to_string(),
        scenario: sc.name.clone(),
        scenario_file: source.path().map(|p| p.display().to_string()),
        overrides: source
            .overrides()
            .iter()
            .map(|o| format!("{} = {}", o.key, o.value))
            .collect(),
        seed: sc.seed,
        command_line,
    };
    Ok((results, meta, sim))
}

#[cfg(test)]
mod tests {
    use super::*;

    const ONE_FLOW: &str = r#"duration = "2s"
[topology]
kind = "dumbbell"
pairs = 1
bottleneck = { rate = "10Mbps", delay = "10ms" }
access = { rate = "1Gbps", delay = "1ms" }
[[flow]]
kind = "tcp"
from = "s1"
to = "d1"
"#;

    #[test]
    fn a_run_gives_the_tables_and_metadata_of_concord_run() {
        let mut source = ScenarioSource::from_text(ONE_FLOW, None);
        source.set("seed", 3_i64).expect("path");
        let out = run_source(&source, None, vec!["test".into()]).expect("runs");
        let stems: Vec<&str> = out.tables.iter().map(|(s, _)| *s).collect();
        assert_eq!(stems, ["flows", "channels", "goodput", "queues", "delay"]);
        assert_eq!(out.meta.seed, 3);
        assert_eq!(out.results.seed, 3);
        assert_eq!(out.meta.overrides, ["seed = 3"]);
        let flows = out.table("flows").expect("flows");
        assert_eq!(flows.lines().count(), 2, "{flows}");
        assert!(out.results.flows[0].goodput_bps > 1e6);
    }

    #[test]
    fn an_invalid_override_is_a_scenario_error() {
        let mut source = ScenarioSource::from_text(ONE_FLOW, None);
        source.set("duration", "soon").expect("path");
        let e = run_source(&source, None, Vec::new()).expect_err("refused");
        assert!(matches!(e, RunError::Scenario(_)), "{e}");
        assert!(
            e.to_string()
                .starts_with("<input>: override `duration = \"soon\"`: "),
            "{e}"
        );
    }
}
