//! Experiments and how they are run.

use crate::claim::{Claim, Paper};
use concord_cc::time::{Duration, Instant};
use concord_sim::results::RunResults;
use concord_sim::scenario::{self, OverrideValue, Scenario, ScenarioSource};
use concord_sim::Simulator;
use std::cell::RefCell;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{mpsc, Arc, Mutex};

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
    /// Added to every seed of every experiment (`--seed-base`), so that a verdict can be
    /// checked on fresh seeds: 0 runs seeds 1, 2, ...
    pub seed_base: u64,
    /// Judge every stochastic claim on a replicate seed block too (the replication rule,
    /// docs/analysis.md; `concord reproduce` always sets it).
    pub replicate: bool,
}

/// Seeds of a stochastic claim in the full setting (at least 20).
pub const FULL_SEEDS: u64 = 20;
/// Seeds of a stochastic claim in the quick setting (at least 5).
pub const QUICK_SEEDS: u64 = 5;

impl Ctx {
    /// The seeds of a stochastic claim: [`FULL_SEEDS`] (full) or [`QUICK_SEEDS`] (quick),
    /// shifted by the seed base.
    pub fn seeds(&self) -> Vec<u64> {
        self.seeds_n(if self.quick { QUICK_SEEDS } else { FULL_SEEDS })
    }

    /// `n` seeds from 1, shifted by the seed base.
    pub fn seeds_n(&self, n: u64) -> Vec<u64> {
        (1..=n).map(|s| self.seed(s)).collect()
    }

    /// Seed `s` of an experiment, shifted by the seed base.
    pub fn seed(&self, s: u64) -> u64 {
        s.saturating_add(self.seed_base)
    }
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

impl Figure {
    /// A figure named `id`, titled `title`, drawn as `svg`.
    pub fn new(id: &str, title: &str, svg: String) -> Figure {
        Figure {
            id: id.into(),
            title: title.into(),
            svg,
        }
    }
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

/// A sweep's change to a scenario: a dotted key (`topology.bottleneck.loss`, `link[1].queue`)
/// and the typed value it takes, put into the scenario's tree by the overrides API
/// ([`ScenarioSource::set`]), never into its text.
pub type Override = (&'static str, OverrideValue);

/// Loads embedded scenario `text` (named `name`) with each of `overrides` set, and its seed
/// set to `seed` if given; a key the scenario cannot take is the override's one-line error.
pub fn scenario_with(
    name: &str,
    text: &str,
    overrides: &[Override],
    seed: Option<u64>,
) -> Result<Scenario, ReproError> {
    source_with(name, text, overrides, seed)?
        .build()
        .map_err(|e| scenario_error(name, e))
}

/// A loader's error as the error of scenario `name`.
fn scenario_error(name: &str, e: scenario::ScenarioError) -> ReproError {
    ReproError::Scenario {
        name: name.to_string(),
        message: e.to_string(),
    }
}

/// Embedded scenario `text` (named `name`) with each of `overrides` set, and its seed set to
/// `seed` if given, not yet read ([`ScenarioSource::build`] reads it; its
/// [`ScenarioSource::render`] names the run).
pub fn source_with(
    name: &str,
    text: &str,
    overrides: &[Override],
    seed: Option<u64>,
) -> Result<ScenarioSource, ReproError> {
    let err = |e| scenario_error(name, e);
    let mut src = ScenarioSource::from_text(text, Some(std::path::Path::new(name)));
    for (key, value) in overrides {
        src.set(key, value.clone()).map_err(err)?;
    }
    if let Some(seed) = seed {
        let seed = i64::try_from(seed).map_err(|_| ReproError::Scenario {
            name: name.to_string(),
            message: format!(
                "seed {seed} is over {}; give a smaller --seed-base",
                i64::MAX
            ),
        })?;
        src.set("seed", seed).map_err(err)?;
    }
    Ok(src)
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
    if WATCH.with(|w| w.borrow().is_none()) {
        sim.run().map_err(|e| err(e.to_string()))?;
    } else {
        // Stepping through `run_until` processes exactly the events `run` would, in the same
        // order; it only lets the experiment's progress be reported on the way.
        let duration = sc.duration.as_secs_f64();
        let step = (sc.duration / PROGRESS_STEPS).max(Duration::from_millis(1));
        let mut t = Instant::ZERO;
        while t < sim.end() {
            t += step;
            sim.run_until(t).map_err(|e| err(e.to_string()))?;
            report_progress(sim.now().as_secs_f64(), duration, false);
        }
        sim.finish().map_err(|e| err(e.to_string()))?;
        report_progress(duration, duration, true);
    }
    Ok((RunResults::from_simulator(&sim), sim))
}

/// Progress reports per scenario run while an experiment is watched.
const PROGRESS_STEPS: u64 = 100;

/// How much simulation an experiment did: deterministic, so a report may keep it and the next
/// run may use it to estimate how far along an experiment is.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Work {
    /// Scenario runs finished.
    pub runs: usize,
    /// Simulated time of those runs, seconds.
    pub simulated_s: f64,
}

/// What an experiment reports while it runs.
#[derive(Debug)]
pub enum Event<'a> {
    /// It started on a worker thread.
    Started,
    /// A scenario run advanced.
    Advanced {
        /// Work finished so far, plus the simulated seconds of the current run.
        done: Work,
        /// The fraction (0..=1) of the current run's simulated time done.
        run_fraction: f64,
    },
    /// It finished.
    Finished {
        /// Its result.
        result: &'a Result<Outcome, ReproError>,
        /// The simulation it did.
        work: Work,
    },
}

/// Where a worker leaves an experiment's result and the simulation it did.
type Slot = Mutex<Option<(Result<Outcome, ReproError>, Work)>>;

/// A message from a worker to the observing thread.
enum Message {
    Started,
    Advanced(Work, f64),
    Finished(Work),
}

/// The experiment the current worker thread is running, and where its progress goes.
struct Watch {
    index: usize,
    tx: mpsc::Sender<(usize, Message)>,
    finished: Work,
}

thread_local! {
    static WATCH: RefCell<Option<Watch>> = const { RefCell::new(None) };
    /// The run's threads not busy with an experiment (see [`helper_threads`]).
    static SPARE: RefCell<Option<Arc<AtomicUsize>>> = const { RefCell::new(None) };
}

/// Threads an experiment may run beside its own to do its points in parallel, taken from the
/// run's `jobs` (a worker with no experiment left gives its thread back); returned on drop.
/// Outside a run, one per core besides the caller's.
pub(crate) struct Helpers {
    pool: Option<Arc<AtomicUsize>>,
    /// Threads taken.
    pub(crate) count: usize,
}

impl Drop for Helpers {
    fn drop(&mut self) {
        if let Some(pool) = &self.pool {
            pool.fetch_add(self.count, Ordering::SeqCst);
        }
    }
}

/// Takes up to `want` spare threads of the current run.
pub(crate) fn helper_threads(want: usize) -> Helpers {
    let Some(pool) = SPARE.with(|s| s.borrow().clone()) else {
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        return Helpers {
            pool: None,
            count: want.min(cores - 1),
        };
    };
    let mut free = pool.load(Ordering::SeqCst);
    loop {
        let take = free.min(want);
        match pool.compare_exchange(free, free - take, Ordering::SeqCst, Ordering::SeqCst) {
            Ok(_) => {
                return Helpers {
                    pool: Some(pool),
                    count: take,
                }
            }
            Err(now) => free = now,
        }
    }
}

/// Sends the watched experiment's progress: `simulated_s` of `duration_s` seconds of the
/// current run; `done` when the run has finished.
fn report_progress(simulated_s: f64, duration_s: f64, done: bool) {
    WATCH.with(|w| {
        if let Some(w) = w.borrow_mut().as_mut() {
            let mut now = w.finished;
            now.simulated_s += simulated_s;
            if done {
                now.runs += 1;
                w.finished = now;
            }
            let fraction = if duration_s > 0.0 {
                (simulated_s / duration_s).clamp(0.0, 1.0)
            } else {
                1.0
            };
            let _ = w.tx.send((w.index, Message::Advanced(now, fraction)));
        }
    });
}

/// Runs `experiments` on `jobs` threads; `done(index, result)` is called as each finishes.
/// Results come back in the order of `experiments`, whatever order they finished in.
pub fn run_experiments(
    experiments: &[Experiment],
    ctx: &Ctx,
    jobs: usize,
    done: &(dyn Fn(usize, &Result<Outcome, ReproError>) + Sync),
) -> Vec<Result<Outcome, ReproError>> {
    run_watched(experiments, ctx, jobs, &mut |i, e| {
        if let Event::Finished { result, .. } = e {
            done(i, result);
        }
    })
    .into_iter()
    .map(|(r, _)| r)
    .collect()
}

/// Runs `experiments` on `jobs` threads, calling `observe(index, event)` on the calling thread
/// as each starts, advances and finishes. Results and the simulation each did come back in the
/// order of `experiments`, whatever order they finished in; they do not depend on `jobs`.
pub fn run_watched(
    experiments: &[Experiment],
    ctx: &Ctx,
    jobs: usize,
    observe: &mut dyn FnMut(usize, Event<'_>),
) -> Vec<(Result<Outcome, ReproError>, Work)> {
    let next = AtomicUsize::new(0);
    let slots: Vec<Slot> = experiments.iter().map(|_| Mutex::new(None)).collect();
    let (tx, rx) = mpsc::channel::<(usize, Message)>();
    let workers = jobs.clamp(1, experiments.len().max(1));
    // One pool of `jobs` threads: those no worker uses help an experiment's own points.
    let spare = Arc::new(AtomicUsize::new(jobs.max(1) - workers));
    std::thread::scope(|s| {
        let (next, slots) = (&next, &slots);
        for _ in 0..workers {
            let tx = tx.clone();
            let spare = spare.clone();
            s.spawn(move || loop {
                SPARE.with(|s| *s.borrow_mut() = Some(spare.clone()));
                let i = next.fetch_add(1, Ordering::SeqCst);
                let Some(e) = experiments.get(i) else {
                    spare.fetch_add(1, Ordering::SeqCst);
                    break;
                };
                let _ = tx.send((i, Message::Started));
                WATCH.with(|w| {
                    *w.borrow_mut() = Some(Watch {
                        index: i,
                        tx: tx.clone(),
                        finished: Work::default(),
                    })
                });
                // A panicking experiment is a defect of concord; it becomes this experiment's
                // error instead of ending the whole run.
                let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                    crate::replicate::run(e, ctx)
                }))
                .unwrap_or_else(|_| {
                    Err(ReproError::Simulation {
                        name: e.id.to_string(),
                        message: "the experiment panicked".into(),
                    })
                });
                let work = WATCH
                    .with(|w| w.borrow_mut().take())
                    .map(|w| w.finished)
                    .unwrap_or_default();
                if let Ok(mut slot) = slots[i].lock() {
                    *slot = Some((r, work));
                }
                let _ = tx.send((i, Message::Finished(work)));
            });
        }
        drop(tx);
        // Every sender is gone once the last worker has finished.
        for (i, m) in rx {
            match m {
                Message::Started => observe(i, Event::Started),
                Message::Advanced(done, run_fraction) => {
                    observe(i, Event::Advanced { done, run_fraction })
                }
                Message::Finished(work) => {
                    if let Some(Ok(slot)) = slots.get(i).map(|m| m.lock()) {
                        if let Some((result, _)) = slot.as_ref() {
                            observe(i, Event::Finished { result, work });
                        }
                    }
                }
            }
        }
    });
    slots
        .into_iter()
        .map(|m| {
            m.into_inner().ok().flatten().unwrap_or_else(|| {
                (
                    Err(ReproError::Simulation {
                        name: "?".into(),
                        message: "the experiment's thread panicked".into(),
                    }),
                    Work::default(),
                )
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Helper threads the probe experiment got, plus one so that zero is told from unset.
    static GOT_ONE_JOB: AtomicUsize = AtomicUsize::new(0);
    static GOT_THREE_JOBS: AtomicUsize = AtomicUsize::new(0);

    fn probe_one(_: &Ctx) -> Result<Outcome, ReproError> {
        GOT_ONE_JOB.store(helper_threads(8).count + 1, Ordering::SeqCst);
        Ok(Outcome::default())
    }

    fn probe_three(_: &Ctx) -> Result<Outcome, ReproError> {
        GOT_THREE_JOBS.store(helper_threads(8).count + 1, Ordering::SeqCst);
        Ok(Outcome::default())
    }

    fn experiment(run: fn(&Ctx) -> Result<Outcome, ReproError>) -> Experiment {
        Experiment {
            id: "test/probe",
            paper: Paper::Eca,
            title: "probe",
            run,
        }
    }

    #[test]
    fn an_experiment_gets_no_helper_threads_at_one_job() {
        run_experiments(&[experiment(probe_one)], &Ctx::default(), 1, &|_, _| {});
        assert_eq!(GOT_ONE_JOB.load(Ordering::SeqCst), 1);
    }

    #[test]
    fn a_lone_experiment_gets_the_other_jobs_as_helpers() {
        run_experiments(&[experiment(probe_three)], &Ctx::default(), 3, &|_, _| {});
        assert_eq!(GOT_THREE_JOBS.load(Ordering::SeqCst), 3);
    }
}
