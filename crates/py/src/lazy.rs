//! A finished run whose outputs are made when first asked for: the summary figures and the
//! metadata at once, `flows.csv` from the figures, and the series tables (channels, goodput,
//! queues, delay, cwnd, estimator, macroflows) and the scenario as run only on first use.
//!
//! A loop over seeds that reads the flows table alone then pays for neither the series' CSV
//! text (about a tenth of a one-second run's instructions) nor rendering the scenario. Every
//! output is made by the same function as [`crate::run::run_source`]'s, so it is the same text.

use crate::run::{simulate, RunError, RunOutput};
use concord_sim::results::{RunMeta, RunResults};
use concord_sim::scenario::ScenarioSource;
use concord_sim::Simulator;
use std::path::Path;
use std::sync::{Mutex, OnceLock};

/// A finished run with its outputs made on first use.
#[derive(Debug)]
pub struct LazyRun {
    /// The summary figures (`summary.json`).
    pub results: RunResults,
    /// How the run was made (`meta.json`).
    pub meta: RunMeta,
    /// The scenario with its overrides, rendered on first use.
    source: ScenarioSource,
    scenario_toml: OnceLock<Result<String, String>>,
    flows: OnceLock<String>,
    /// The finished simulator, until the series tables are made from it (then dropped).
    sim: Mutex<Option<Simulator>>,
    tables: OnceLock<Vec<(&'static str, String)>>,
}

impl LazyRun {
    /// Runs `source` to the end (as [`crate::run::run_source`]). With a `capture_dir` every
    /// output is made at once, so that the simulator and its open trace files are dropped
    /// before this returns.
    pub fn run(
        source: &ScenarioSource,
        capture_dir: Option<&Path>,
        command_line: Vec<String>,
    ) -> Result<LazyRun, RunError> {
        let (results, meta, sim) = simulate(source, capture_dir, command_line)?;
        let run = LazyRun {
            results,
            meta,
            source: source.clone(),
            scenario_toml: OnceLock::new(),
            flows: OnceLock::new(),
            sim: Mutex::new(Some(sim)),
            tables: OnceLock::new(),
        };
        if capture_dir.is_some() {
            run.tables();
        }
        Ok(run)
    }

    /// `summary.json`'s text.
    pub fn summary_json(&self) -> String {
        serde_json::to_string_pretty(&self.results).unwrap_or_default()
    }

    /// The scenario as run, as TOML (`scenario.toml`), or why it cannot be written.
    pub fn scenario_toml(&self) -> Result<&str, &str> {
        self.scenario_toml
            .get_or_init(|| self.source.render().map_err(|e| e.to_string()))
            .as_deref()
            .map_err(String::as_str)
    }

    /// Every table by file stem, as `concord run` writes them; the first call makes them from
    /// the simulator and drops it.
    pub fn tables(&self) -> &[(&'static str, String)] {
        self.tables.get_or_init(|| {
            let sim = match self.sim.lock() {
                Ok(mut sim) => sim.take(),
                Err(poisoned) => poisoned.into_inner().take(),
            };
            // The simulator is only taken here, once, inside the initialisation.
            sim.map(|sim| self.results.tables(&sim)).unwrap_or_default()
        })
    }

    /// The table `stem` (`flows`, `goodput`, ...), if the run has it. `flows` is made from the
    /// summary figures, without making the series tables.
    pub fn table(&self, stem: &str) -> Option<&str> {
        if stem == "flows" {
            if let Some(tables) = self.tables.get() {
                return tables
                    .iter()
                    .find(|(s, _)| *s == stem)
                    .map(|(_, t)| t.as_str());
            }
            return Some(self.flows.get_or_init(|| self.results.flows_csv()));
        }
        self.tables()
            .iter()
            .find(|(s, _)| *s == stem)
            .map(|(_, t)| t.as_str())
    }

    /// Every output made, as [`crate::run::run_source`] gives them.
    pub fn to_output(&self) -> Result<RunOutput, RunError> {
        let scenario_toml = self
            .scenario_toml()
            .map_err(|e| RunError::Runtime(e.to_string()))?
            .to_string();
        Ok(RunOutput {
            results: self.results.clone(),
            tables: self.tables().to_vec(),
            meta: self.meta.clone(),
            scenario_toml,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::run::run_source;

    fn red(seed: i64) -> ScenarioSource {
        let path =
            Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenarios/basic/dumbbell-4-red.toml");
        let mut source = ScenarioSource::from_file(&path).expect("the scenario reads");
        source.set("duration", "1s").expect("path");
        source.set("seed", seed).expect("path");
        source
    }

    #[test]
    fn flows_alone_leaves_the_series_unmade_and_equals_the_eager_table() {
        let source = red(4);
        let eager = run_source(&source, None, vec!["x".into()]).expect("runs");
        let lazy = LazyRun::run(&source, None, vec!["x".into()]).expect("runs");
        assert_eq!(lazy.table("flows"), eager.table("flows"));
        assert!(
            lazy.tables.get().is_none(),
            "the series were made for flows"
        );
        assert!(
            lazy.scenario_toml.get().is_none(),
            "the scenario was rendered"
        );
        assert!(lazy.sim.lock().expect("lock").is_some());
    }

    #[test]
    fn every_output_made_later_is_the_eager_runs_byte_for_byte() {
        let source = red(9);
        let eager = run_source(&source, None, vec!["x".into()]).expect("runs");
        let lazy = LazyRun::run(&source, None, vec!["x".into()]).expect("runs");
        assert_eq!(lazy.table("goodput"), eager.table("goodput"));
        assert!(
            lazy.sim.lock().expect("lock").is_none(),
            "the simulator is kept"
        );
        let made = lazy.to_output().expect("renders");
        assert_eq!(made.tables, eager.tables);
        assert_eq!(made.scenario_toml, eager.scenario_toml);
        assert_eq!(made.meta, eager.meta);
        assert_eq!(made.summary_json(), eager.summary_json());
        assert_eq!(lazy.summary_json(), eager.summary_json());
        // flows asked after the series: the same text.
        assert_eq!(lazy.table("flows"), eager.table("flows"));
        assert_eq!(lazy.table("cwnd"), None);
    }
}
