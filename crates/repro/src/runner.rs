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
    /// Judge every stochastic claim on a replicate seed block too (the pooling rule,
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
    /// The simulated seconds of each run finished, in order.
    runs_s: Vec<f64>,
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
                w.runs_s.push(simulated_s);
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

/// Which seed block a unit of work runs (the pooling rule, [`crate::replicate`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Block {
    /// The run's own seeds.
    Own,
    /// The replicate block, [`crate::replicate::REPLICATE_OFFSET`] seeds on.
    Replicate,
}

/// What a unit of work left: its result and the simulated seconds of each of its runs, in the
/// order they finished.
type UnitDone = (Result<Outcome, ReproError>, Vec<f64>);

/// The units of a run and what each left. An experiment is two units, its own block and its
/// replicate block, so that the two halves of a long experiment can run on two cores at once;
/// the result is the one [`crate::replicate::run`] gives, whatever order the units run in.
struct Schedule {
    /// The next experiment whose own block has not started.
    next: usize,
    /// Experiments whose own block needs its replicate block, not yet started.
    pending: std::collections::VecDeque<usize>,
    /// Per experiment: own block running.
    own_running: Vec<bool>,
    /// Per experiment: replicate block started.
    replicate_started: Vec<bool>,
    /// Per experiment: the own block's result, once finished.
    own: Vec<Option<UnitDone>>,
    /// Per experiment: the replicate block's result, once finished.
    replicate: Vec<Option<UnitDone>>,
    /// Per experiment: its result is final.
    finished: Vec<bool>,
}

impl Schedule {
    fn new(n: usize) -> Schedule {
        Schedule {
            next: 0,
            pending: std::collections::VecDeque::new(),
            own_running: vec![false; n],
            replicate_started: vec![false; n],
            own: (0..n).map(|_| None).collect(),
            replicate: (0..n).map(|_| None).collect(),
            finished: vec![false; n],
        }
    }

    /// The next unit to run: a replicate block an own block asked for, else the next own
    /// block, else (when the run replicates) the replicate block of an own block still
    /// running, started before it is known to be needed: a worker with nothing else to do
    /// runs it beside its own block instead of after it. None when nothing is left.
    fn take(&mut self, replicate: bool) -> Option<(usize, Block)> {
        if let Some(i) = self.pending.pop_front() {
            self.replicate_started[i] = true;
            return Some((i, Block::Replicate));
        }
        if self.next < self.own.len() {
            let i = self.next;
            self.next += 1;
            self.own_running[i] = true;
            return Some((i, Block::Own));
        }
        if replicate {
            let i =
                (0..self.own.len()).find(|&i| self.own_running[i] && !self.replicate_started[i])?;
            self.replicate_started[i] = true;
            return Some((i, Block::Replicate));
        }
        None
    }

    /// Records that unit (`i`, `block`) finished with `done`; returns experiment `i`'s final
    /// result and work once both blocks it needs have finished. The decision is
    /// [`crate::replicate::run`]'s: an own block that failed, or whose claims are all
    /// deterministic, or a run without replication, is final alone (a replicate block started
    /// for it is dropped); otherwise the two blocks are paired.
    fn finish(
        &mut self,
        e: &Experiment,
        i: usize,
        block: Block,
        done: UnitDone,
        replicate: bool,
    ) -> Option<(Result<Outcome, ReproError>, Work)> {
        match block {
            Block::Own => {
                self.own_running[i] = false;
                let needs = replicate
                    && matches!(&done.0, Ok(o) if !o.claims.iter().all(|c| c.deterministic));
                if !needs {
                    self.finished[i] = true;
                    let work = work_of(&done.1);
                    return Some((done.0, work));
                }
                self.own[i] = Some(done);
                if self.replicate[i].is_none() && !self.replicate_started[i] {
                    self.pending.push_back(i);
                }
            }
            Block::Replicate => {
                if self.finished[i] {
                    return None;
                }
                self.replicate[i] = Some(done);
            }
        }
        if self.own[i].is_none() || self.replicate[i].is_none() {
            return None;
        }
        let (own, own_runs) = self.own[i].take()?;
        let (other, other_runs) = self.replicate[i].take()?;
        self.finished[i] = true;
        let runs: Vec<f64> = own_runs.into_iter().chain(other_runs).collect();
        let result = match (own, other) {
            (Ok(own), Ok(other)) => crate::replicate::pair(e.id, own, &other),
            (Err(err), _) | (Ok(_), Err(err)) => Err(err),
        };
        Some((result, work_of(&runs)))
    }
}

/// The work of runs of `runs_s` simulated seconds each, summed in order (as one thread running
/// them one after the other would have counted it).
fn work_of(runs_s: &[f64]) -> Work {
    let mut w = Work::default();
    for s in runs_s {
        w.runs += 1;
        w.simulated_s += s;
    }
    w
}

/// Runs one block of experiment `e` on this thread, reporting its progress as experiment `i`.
fn run_block(
    e: &Experiment,
    i: usize,
    block: Block,
    ctx: &Ctx,
    tx: &mpsc::Sender<(usize, Message)>,
) -> UnitDone {
    WATCH.with(|w| {
        *w.borrow_mut() = Some(Watch {
            index: i,
            tx: tx.clone(),
            finished: Work::default(),
            runs_s: Vec::new(),
        })
    });
    let block_ctx = match block {
        Block::Own => Ctx {
            replicate: false,
            ..ctx.clone()
        },
        Block::Replicate => Ctx {
            seed_base: ctx
                .seed_base
                .saturating_add(crate::replicate::REPLICATE_OFFSET),
            replicate: false,
            ..ctx.clone()
        },
    };
    // A panicking experiment is a defect of concord; it becomes this experiment's error
    // instead of ending the whole run.
    let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| (e.run)(&block_ctx)))
        .unwrap_or_else(|_| {
            Err(ReproError::Simulation {
                name: e.id.to_string(),
                message: "the experiment panicked".into(),
            })
        });
    let runs = WATCH
        .with(|w| w.borrow_mut().take())
        .map(|w| w.runs_s)
        .unwrap_or_default();
    (r, runs)
}

/// Runs `experiments` on `jobs` threads, calling `observe(index, event)` on the calling thread
/// as each starts, advances and finishes. Results and the simulation each did come back in the
/// order of `experiments`, whatever order they finished in; they do not depend on `jobs`.
/// Each experiment's own seed block and its replicate block ([`crate::replicate`]) are
/// separate units of work, so a worker left without an experiment to start runs the replicate
/// block of one still running instead of waiting for it.
pub fn run_watched(
    experiments: &[Experiment],
    ctx: &Ctx,
    jobs: usize,
    observe: &mut dyn FnMut(usize, Event<'_>),
) -> Vec<(Result<Outcome, ReproError>, Work)> {
    let schedule = Mutex::new(Schedule::new(experiments.len()));
    let slots: Vec<Slot> = experiments.iter().map(|_| Mutex::new(None)).collect();
    let (tx, rx) = mpsc::channel::<(usize, Message)>();
    let units = experiments.len().max(1) * if ctx.replicate { 2 } else { 1 };
    let workers = jobs.clamp(1, units);
    // One pool of `jobs` threads: those no worker uses help an experiment's own points.
    let spare = Arc::new(AtomicUsize::new(jobs.max(1) - workers));
    std::thread::scope(|s| {
        let (schedule, slots) = (&schedule, &slots);
        for _ in 0..workers {
            let tx = tx.clone();
            let spare = spare.clone();
            s.spawn(move || loop {
                SPARE.with(|s| *s.borrow_mut() = Some(spare.clone()));
                let unit = schedule.lock().ok().and_then(|mut q| q.take(ctx.replicate));
                let Some((i, block)) = unit else {
                    spare.fetch_add(1, Ordering::SeqCst);
                    break;
                };
                let e = &experiments[i];
                if block == Block::Own {
                    let _ = tx.send((i, Message::Started));
                }
                let done = run_block(e, i, block, ctx, &tx);
                let last = schedule
                    .lock()
                    .ok()
                    .and_then(|mut q| q.finish(e, i, block, done, ctx.replicate));
                if let Some((r, work)) = last {
                    if let Ok(mut slot) = slots[i].lock() {
                        *slot = Some((r, work));
                    }
                    let _ = tx.send((i, Message::Finished(work)));
                }
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

    /// A claim of `mean` plus a per-seed offset over five seeds: inside 0.7..0.8 on seeds 1-5,
    /// on the edge on the replicate block (seed base 1000).
    fn edge(ctx: &Ctx) -> Result<Outcome, ReproError> {
        let mean = if ctx.seed_base == 0 { 0.75 } else { 0.80 };
        let seeds = ctx.seeds_n(5);
        let values: Vec<f64> = [-0.01, 0.01, 0.0, 0.005, -0.005]
            .iter()
            .map(|d| mean + d)
            .collect();
        let claim = Claim::mean_over_seeds(
            Paper::Cm,
            "Fig. 9",
            "edge",
            "0.77",
            crate::claim::Check::Between { lo: 0.7, hi: 0.8 },
            &seeds,
            &values,
            "s.toml",
            true,
        );
        report_progress(1.5, 1.5, true);
        report_progress(
            0.25 + ctx.seed_base as f64,
            0.25 + ctx.seed_base as f64,
            true,
        );
        Ok(Outcome {
            claims: vec![claim],
            ..Outcome::default()
        })
    }

    fn deterministic(ctx: &Ctx) -> Result<Outcome, ReproError> {
        let mut o = edge(ctx)?;
        o.claims = o.claims.into_iter().map(|c| c.deterministic()).collect();
        Ok(o)
    }

    fn failing_replicate(ctx: &Ctx) -> Result<Outcome, ReproError> {
        if ctx.seed_base > 0 {
            return Err(ReproError::Simulation {
                name: "s".into(),
                message: "no".into(),
            });
        }
        edge(ctx)
    }

    /// The result and work `replicate::run` gives on one thread, the reference a split run
    /// must match.
    fn sequential(e: &Experiment, ctx: &Ctx) -> (Result<Outcome, ReproError>, Work) {
        let (tx, _rx) = mpsc::channel();
        WATCH.with(|w| {
            *w.borrow_mut() = Some(Watch {
                index: 0,
                tx,
                finished: Work::default(),
                runs_s: Vec::new(),
            })
        });
        let r = crate::replicate::run(e, ctx);
        let work = WATCH
            .with(|w| w.borrow_mut().take())
            .map(|w| w.finished)
            .unwrap_or_default();
        (r, work)
    }

    #[test]
    fn two_blocks_on_two_threads_give_what_one_thread_gives() {
        let ctx = Ctx {
            replicate: true,
            ..Ctx::default()
        };
        for run in [edge, deterministic, failing_replicate] {
            let e = Experiment {
                id: "test/split",
                paper: Paper::Cm,
                title: "split",
                run,
            };
            let want = sequential(&e, &ctx);
            for jobs in [1, 2, 3] {
                let got = run_watched(&[e, e], &ctx, jobs, &mut |_, _| {});
                assert_eq!(got.len(), 2);
                for g in got {
                    assert_eq!(g, want, "jobs {jobs}");
                }
            }
        }
        // The edge claim is judged on both blocks pooled (reproduced, though its replicate
        // block alone straddles the edge) and carries both blocks; its work is both blocks'
        // runs: 1.5 + 0.25 + 1.5 + 1000.25 s.
        let (r, work) = sequential(
            &Experiment {
                id: "test/split",
                paper: Paper::Cm,
                title: "split",
                run: edge,
            },
            &ctx,
        );
        let o = r.expect("runs");
        assert_eq!(o.claims[0].verdict, crate::claim::Verdict::Reproduced);
        assert_eq!(o.claims[0].blocks.len(), 2);
        assert_eq!(
            o.claims[0].blocks[1].verdict,
            crate::claim::Verdict::SeedDependent
        );
        assert_eq!(work.runs, 4);
        assert_eq!(work.simulated_s, 1.5 + 0.25 + 1.5 + 1000.25);
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
