//! Experiments and how they are run.

use crate::claim::{Claim, Paper};
use concord_sim::results::RunResults;
use concord_sim::scenario::{self, Scenario};
use concord_sim::Simulator;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

/// Why an experiment could not produce its claims.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ReproError {
    /// An embedded scenario did not load (a defect of concord, reported with its position).
    #[error("scenario {name}: {message}")]
    Scenario {
        /// Which scenario.
        name: String,
        /// The loader's one-line error.
        message: String,
    },
    /// The simulator could not be built or run.
    #[error("simulation {name}: {message}")]
    Simulation {
        /// Which scenario.
        name: String,
        /// What failed.
        message: String,
    },
}

/// What an experiment needs to know about the run.
#[derive(Clone, Debug, Default)]
pub struct Ctx {
    /// Scale durations and grids down (with tolerances stated for the quick setting).
    pub quick: bool,
}

/// A figure an experiment drew.
#[derive(Clone, Debug, PartialEq)]
pub struct Figure {
    /// File stem, unique within the report (`baseline-padhye`).
    pub id: String,
    /// What it shows, as the paper names it.
    pub title: String,
    /// The SVG document.
    pub svg: String,
}

/// What an experiment produced.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Outcome {
    /// The checked claims.
    pub claims: Vec<Claim>,
    /// Its figures.
    pub figures: Vec<Figure>,
    /// Raw tables, (file name, CSV text).
    pub raw: Vec<(String, String)>,
}

/// One experiment of a paper.
#[derive(Clone, Copy, Debug)]
pub struct Experiment {
    /// `paper/name`.
    pub id: &'static str,
    /// The paper.
    pub paper: Paper,
    /// What it reproduces.
    pub title: &'static str,
    /// Runs it.
    pub run: fn(&Ctx) -> Result<Outcome, ReproError>,
}

/// Every experiment concord knows, in report order.
pub fn registry() -> Vec<Experiment> {
    let mut all = Vec::new();
    all.extend(crate::baseline::experiments());
    all.extend(crate::cm::experiments());
    all.extend(crate::gcca::experiments());
    all.extend(crate::eca::experiments());
    all.extend(crate::mccp::experiments());
    all.extend(crate::cp::experiments());
    all
}

/// `template` with `from` replaced by `to`, or an error if `from` does not occur (so that an
/// edited scenario file cannot silently turn a sweep into repeats of one setting).
pub fn substitute(name: &str, template: &str, from: &str, to: &str) -> Result<String, ReproError> {
    if !template.contains(from) {
        return Err(ReproError::Scenario {
            name: name.to_string(),
            message: format!("the template no longer contains `{from}`"),
        });
    }
    Ok(template.replace(from, to))
}

/// Loads an embedded scenario text.
pub fn scenario_from(name: &str, text: &str, seed: Option<u64>) -> Result<Scenario, ReproError> {
    scenario::parse_str_with(
        text,
        Some(std::path::Path::new(name)),
        scenario::LoadOptions { seed },
    )
    .map_err(|e| ReproError::Scenario {
        name: name.to_string(),
        message: e.to_string(),
    })
}

/// Runs a scenario to the end and returns its results and the finished simulator.
pub fn simulate(sc: &Scenario) -> Result<(RunResults, Simulator), ReproError> {
    let err = |m: String| ReproError::Simulation {
        name: sc.name.clone(),
        message: m,
    };
    let mut sim = Simulator::new(sc).map_err(|e| err(e.to_string()))?;
    sim.run().map_err(|e| err(e.to_string()))?;
    Ok((RunResults::from_simulator(&sim), sim))
}

/// Runs `experiments` on `jobs` threads; `done(index, result)` is called as each finishes.
/// Results come back in the order of `experiments`, whatever order they finished in.
pub fn run_experiments(
    experiments: &[Experiment],
    ctx: &Ctx,
    jobs: usize,
    done: &(dyn Fn(usize, &Result<Outcome, ReproError>) + Sync),
) -> Vec<Result<Outcome, ReproError>> {
    let next = AtomicUsize::new(0);
    let slots: Vec<Mutex<Option<Result<Outcome, ReproError>>>> =
        experiments.iter().map(|_| Mutex::new(None)).collect();
    std::thread::scope(|s| {
        for _ in 0..jobs.clamp(1, experiments.len().max(1)) {
            s.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::SeqCst);
                let Some(e) = experiments.get(i) else { break };
                // A panicking experiment is a defect of concord; it becomes this experiment's
                // error instead of ending the whole run.
                let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| (e.run)(ctx)))
                    .unwrap_or_else(|_| {
                        Err(ReproError::Simulation {
                            name: e.id.to_string(),
                            message: "the experiment panicked".into(),
                        })
                    });
                done(i, &r);
                if let Ok(mut slot) = slots[i].lock() {
                    *slot = Some(r);
                }
            });
        }
    });
    slots
        .into_iter()
        .map(|m| {
            m.into_inner().ok().flatten().unwrap_or_else(|| {
                Err(ReproError::Simulation {
                    name: "?".into(),
                    message: "the experiment's thread panicked".into(),
                })
            })
        })
        .collect()
}
