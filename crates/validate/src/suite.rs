//! Running the selected cases in concord and ns-3 on a pool of threads, then checking them.
//!
//! Every (case, seed, simulator) run is one job; concord runs in-process (each run
//! single-threaded and deterministic), ns-3 as a child process. The reference runs come first;
//! with `diagnose`, every case outside a target then runs the ns-3 variants (one mechanism
//! switched each) to name its cause.

use crate::compare::{cause, checks, finding, summarise, Check, Finding, Summary};
use crate::grid::{Case, CaseRecovery, Queue, Topology};
use crate::measurement::Measurement;
use crate::ns3::{self, Variant};
use crate::{concord_run, grid, runs};
use serde::Serialize;
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

/// How to run the suite.
#[derive(Clone, Debug)]
pub struct Options {
    /// The ns-3 program (`bench/ns3/build/validate`); `None`: concord only, nothing compared.
    pub ns3: Option<PathBuf>,
    /// Jobs at once.
    pub jobs: usize,
    /// Diagnose the cases outside a target with the ns-3 variants: by symptom group, every
    /// variant on one representative, then its suspects on the others ([`run_with`]).
    pub diagnose: bool,
    /// With `diagnose`, every variant on every case outside a target (no grouping).
    pub diagnose_all: bool,
    /// Kernel TCP on the namespace test bed: the bed and the congestion controls (`reno`,
    /// `cubic`); the cases it can host run once each (first seed), one at a time, after the
    /// simulations.
    pub linux: Option<(crate::linux::Bed, Vec<String>)>,
    /// ns-3 runs already made (by case id, seed and source, as in an earlier `results.json`),
    /// used instead of running ns-3 again with the same settings.
    pub reuse: HashMap<(String, u64, String), Measurement>,
    /// ns-3 outputs kept on disk by program and arguments: read instead of running ns-3 again,
    /// and filled by every ns-3 run.
    pub ns3_cache: Option<crate::ns3_cache::Ns3Cache>,
}

/// The ns-3 runs of an earlier `results.json` (every run whose source starts with `ns-3`), keyed
/// for [`Options::reuse`].
pub fn reusable_ns3_runs(
    json: &str,
) -> Result<HashMap<(String, u64, String), Measurement>, String> {
    let v: serde_json::Value =
        serde_json::from_str(json).map_err(|e| format!("not a results.json: {e}"))?;
    let mut out = HashMap::new();
    for case in v.as_array().ok_or("not a results.json: no list of cases")? {
        let id = case["id"]
            .as_str()
            .ok_or("a case without an id")?
            .to_string();
        for run in case["runs"].as_array().into_iter().flatten() {
            let m: Measurement = serde_json::from_value(run.clone())
                .map_err(|e| format!("case {id}: unreadable run: {e}"))?;
            if m.source.starts_with("ns-3") {
                out.insert((id.clone(), m.seed, m.source.clone()), m);
            }
        }
    }
    Ok(out)
}

/// concord against kernel TCP on one case.
#[derive(Clone, Debug, Serialize)]
pub struct LinuxComparison {
    /// The congestion control.
    pub cc: String,
    /// The kernel's figures (one run).
    pub summary: Option<Summary>,
    /// The targets checked against the kernel.
    pub checks: Vec<Check>,
    /// The verdict.
    pub verdict: Verdict,
    /// The error, if the run failed.
    pub error: String,
}

/// The outcome of one case.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub enum Verdict {
    /// Every target holds.
    Within,
    /// At least one target does not hold.
    Outside,
    /// No reference was run.
    NotCompared,
    /// A run failed.
    Error,
}

impl Verdict {
    /// Its word in tables.
    pub fn word(&self) -> &'static str {
        match self {
            Verdict::Within => "within",
            Verdict::Outside => "outside",
            Verdict::NotCompared => "not compared",
            Verdict::Error => "error",
        }
    }
}

/// One case's settings, results and verdict.
#[derive(Clone, Debug, Serialize)]
pub struct CaseResult {
    /// The case's id.
    pub id: String,
    /// Its group.
    pub group: String,
    /// Its note.
    pub note: String,
    /// Flows in the case.
    pub flows: u32,
    /// Bottleneck rate, bits per second.
    pub rate_bps: u64,
    /// One-hop round-trip propagation time, seconds.
    pub rtt_s: f64,
    /// Queue label.
    pub queue: String,
    /// Random loss.
    pub loss: f64,
    /// Simulated seconds.
    pub duration_s: f64,
    /// Seeds.
    pub seeds: Vec<u64>,
    /// How many distinct concord runs the seeds gave ([`crate::runs::same_run`]): fewer than
    /// the seeds when the seed only moved when the same run started. `None` when a concord run
    /// failed or was not made.
    pub concord_runs: Option<usize>,
    /// The seeds grouped by the concord run they gave, written `1=2=3 4` ([`crate::runs::show`]).
    pub concord_seed_runs: String,
    /// concord over the seeds.
    pub concord: Option<Summary>,
    /// ns-3 (reference setting) over the seeds.
    pub ns3: Option<Summary>,
    /// The ns-3 variants run for the diagnosis.
    pub variants: Vec<Summary>,
    /// The targets checked against ns-3.
    pub checks: Vec<Check>,
    /// The verdict.
    pub verdict: Verdict,
    /// concord with ns-3 3.44's departures from the RFCs (a deviation of concord,
    /// [`concord_run::DEPARTURES_SOURCE`]), run in the diagnosis of a case outside a target.
    pub concord_departures: Option<Summary>,
    /// The targets checked for it against ns-3 as shipped.
    pub departures_checks: Vec<Check>,
    /// Their verdict ([`Verdict::NotCompared`] when it was not run).
    pub departures_verdict: Verdict,
    /// The measured cause of a difference (empty when within).
    pub cause: String,
    /// The symptom that put the case in its diagnosis group (outside cases): the mechanisms it
    /// exercises, the targets missed and concord's side of each ([`symptom`]).
    pub symptom: String,
    /// The case of its symptom group on which every variant ran (its own id when it is that
    /// case; empty when not diagnosed).
    pub representative: String,
    /// Errors, if any run failed.
    pub errors: Vec<String>,
    /// concord against kernel TCP, where the test bed hosts the case.
    pub linux: Vec<LinuxComparison>,
    /// Every run's figures.
    pub runs: Vec<Measurement>,
}

#[derive(Clone, Copy, Debug)]
enum Runner {
    Concord,
    /// concord with ns-3's departures from the RFCs.
    ConcordDepartures,
    Ns3(Variant),
}

#[derive(Clone, Copy, Debug)]
struct Job {
    case: usize,
    seed: u64,
    runner: Runner,
}

/// A rough cost to start the longest jobs first: packets the bottlenecks carry.
fn cost(case: &Case, runner: Runner) -> f64 {
    let hops = match case.topology {
        Topology::Dumbbell => 1.0,
        Topology::ParkingLot { hops } => f64::from(hops),
    };
    let packets = case.rate.bps_f64() / 12_000.0 * case.duration.as_secs_f64() * hops;
    // ns-3 spends several times concord's time per packet.
    match runner {
        Runner::Concord | Runner::ConcordDepartures => packets,
        Runner::Ns3(_) => packets * 8.0,
    }
}

/// Runs `jobs` on `threads` threads; `done` is told each finished job's description.
fn run_jobs(
    cases: &[Case],
    mut jobs: Vec<Job>,
    options: &Options,
    done: &(dyn Fn(&str) + Sync),
) -> Vec<(Job, Result<Measurement, String>)> {
    jobs.sort_by(|a, b| cost(&cases[b.case], b.runner).total_cmp(&cost(&cases[a.case], a.runner)));
    let mut reused = Vec::new();
    jobs.retain(|j| {
        let Runner::Ns3(v) = j.runner else {
            return true;
        };
        let key = (cases[j.case].id.clone(), j.seed, v.name().to_string());
        match options.reuse.get(&key) {
            Some(m) => {
                reused.push((*j, Ok(m.clone())));
                false
            }
            None => true,
        }
    });
    let next = AtomicUsize::new(0);
    let results = Mutex::new(reused);
    let total = jobs.len();
    let base = match results.lock() {
        Ok(g) => g.len(),
        Err(p) => p.into_inner().len(),
    };
    std::thread::scope(|s| {
        for _ in 0..options.jobs.max(1) {
            s.spawn(|| loop {
                let k = next.fetch_add(1, Ordering::Relaxed);
                let Some(&job) = jobs.get(k) else { break };
                let case = &cases[job.case];
                let (who, r) = match (job.runner, &options.ns3) {
                    (Runner::Concord, _) => ("concord", concord_run::run(case, job.seed)),
                    (Runner::ConcordDepartures, _) => (
                        concord_run::DEPARTURES_SOURCE,
                        concord_run::run_with_departures(case, job.seed),
                    ),
                    (Runner::Ns3(v), Some(exe)) => (
                        v.name(),
                        ns3::run_cached(exe, options.ns3_cache.as_ref(), case, job.seed, v),
                    ),
                    (Runner::Ns3(v), None) => (v.name(), Err("no ns-3 program".into())),
                };
                let mut guard = match results.lock() {
                    Ok(g) => g,
                    Err(p) => p.into_inner(),
                };
                guard.push((job, r));
                let n = guard.len() - base;
                drop(guard);
                done(&format!(
                    "[{n}/{total}] {} seed {} {who}",
                    case.id, job.seed
                ));
            });
        }
    });
    match results.into_inner() {
        Ok(v) => v,
        Err(p) => p.into_inner(),
    }
}

/// Runs `cases` and checks each against ns-3.
pub fn run(cases: &[Case], options: &Options, done: &(dyn Fn(&str) + Sync)) -> Vec<CaseResult> {
    run_with(cases, options, done, &|_| {})
}

/// [`run`], telling `compared` the results as soon as every case is compared with ns-3, before
/// the diagnosis and the kernel runs (so a caller can write the table before the long part).
pub fn run_with(
    cases: &[Case],
    options: &Options,
    done: &(dyn Fn(&str) + Sync),
    compared: &dyn Fn(&[CaseResult]),
) -> Vec<CaseResult> {
    let mut jobs = Vec::new();
    for (k, c) in cases.iter().enumerate() {
        for &seed in &c.seeds {
            jobs.push(Job {
                case: k,
                seed,
                runner: Runner::Concord,
            });
            if options.ns3.is_some() {
                jobs.push(Job {
                    case: k,
                    seed,
                    runner: Runner::Ns3(Variant::Reference),
                });
            }
        }
    }
    let mut outcomes = run_jobs(cases, jobs, options, done);
    let mut results: Vec<CaseResult> = cases
        .iter()
        .enumerate()
        .map(|(k, c)| assemble(c, k, &outcomes))
        .collect();
    compared(&results);
    if options.diagnose && options.ns3.is_some() {
        diagnose(cases, &mut results, &mut outcomes, options, done);
    }
    if let Some((bed, ccs)) = &options.linux {
        for (c, r) in cases.iter().zip(results.iter_mut()) {
            if crate::linux::unhostable(c).is_some() {
                continue;
            }
            for cc in ccs {
                let outcome = crate::linux::run(c, cc, bed);
                done(&format!(
                    "{} linux {cc}: {}",
                    c.id,
                    if outcome.is_ok() { "done" } else { "failed" }
                ));
                r.linux.push(compare_linux(c, r, cc, outcome));
            }
        }
    }
    results
}

/// The symptom of a case outside its targets, the key of its diagnosis group: the mechanisms
/// the case exercises (topology, queue discipline, random loss, the senders' recovery and SACK,
/// a start-up case's first seconds), the targets it misses and on which side of ns-3 concord
/// lies. The link rate, the RTT, the flow count and the grid group are left out: they change how
/// far apart the simulators are, not which mechanism parts them, and each member still runs
/// the representative's explaining switches on itself, which is what names its cause.
pub fn symptom(case: &Case, checks: &[Check]) -> String {
    let missed: Vec<String> = checks
        .iter()
        .filter(|c| !c.pass)
        .map(|c| {
            let side = if c.difference > 0.0 {
                "higher"
            } else {
                "lower"
            };
            format!("{} {side}", c.metric.name())
        })
        .collect();
    let mut mechanisms = vec![match case.topology {
        Topology::Dumbbell => "dumbbell",
        Topology::ParkingLot { .. } => "parking lot",
    }];
    mechanisms.push(match case.queue {
        Queue::DropTail => "DropTail",
        Queue::Red { ecn: false, .. } => "RED",
        Queue::Red { ecn: true, .. } => "RED/ECN",
    });
    if case.loss > 0.0 {
        mechanisms.push("random loss");
    }
    if case.recovery == CaseRecovery::Prr {
        mechanisms.push("PRR");
    }
    if case.sack {
        mechanisms.push("SACK");
    }
    if case.group == "startup" {
        mechanisms.push("start-up");
    }
    format!("{}: concord's {}", mechanisms.join(", "), missed.join(", "))
}

/// The diagnosis groups of the cases outside a target: by [`symptom`], each group's
/// representative (the cheapest to run, then the first in the grid) first.
pub fn diagnosis_groups(cases: &[Case], results: &[CaseResult]) -> Vec<Vec<usize>> {
    let mut groups: Vec<(String, Vec<usize>)> = Vec::new();
    for (k, r) in results.iter().enumerate() {
        if r.verdict != Verdict::Outside {
            continue;
        }
        let key = symptom(&cases[k], &r.checks);
        match groups.iter_mut().find(|(s, _)| *s == key) {
            Some((_, members)) => members.push(k),
            None => groups.push((key, vec![k])),
        }
    }
    let price = |k: usize| cost(&cases[k], Runner::Concord) * cases[k].seeds.len() as f64;
    groups
        .into_iter()
        .map(|(_, mut members)| {
            members.sort_by(|&a, &b| price(a).total_cmp(&price(b)).then(a.cmp(&b)));
            members
        })
        .collect()
}

/// The ns-3 variant jobs of `variants` (those that apply) for case `k`, every seed.
fn variant_jobs(cases: &[Case], k: usize, variants: &[Variant]) -> Vec<Job> {
    let c = &cases[k];
    let mut out = Vec::new();
    for v in variants
        .iter()
        .filter(|v| **v != Variant::Reference && v.applies_to(c))
    {
        for &seed in &c.seeds {
            out.push(Job {
                case: k,
                seed,
                runner: Runner::Ns3(*v),
            });
        }
    }
    out
}

/// The diagnosis: the cases outside a target, grouped by [`symptom`]; every variant runs on
/// each group's representative, then the variants that explain it (or its partial cause) run on
/// the other members one at a time until one explains the member, so that a cause found on one
/// case is measured on each case it is named for. With [`Options::diagnose_all`] every variant
/// runs on every case.
fn diagnose(
    cases: &[Case],
    results: &mut Vec<CaseResult>,
    outcomes: &mut Vec<(Job, Result<Measurement, String>)>,
    options: &Options,
    done: &(dyn Fn(&str) + Sync),
) {
    let groups = diagnosis_groups(cases, results);
    let reassemble = |outcomes: &[(Job, Result<Measurement, String>)]| -> Vec<CaseResult> {
        cases
            .iter()
            .enumerate()
            .map(|(k, c)| assemble(c, k, outcomes))
            .collect()
    };
    let mut first = Vec::new();
    for g in &groups {
        let every = if options.diagnose_all {
            &g[..]
        } else {
            &g[..1]
        };
        for &k in every {
            first.extend(variant_jobs(cases, k, &Variant::ALL));
        }
        // concord with ns-3's departures, on every case of the group (concord runs are cheap).
        for &k in g {
            first.extend(cases[k].seeds.iter().map(|&seed| Job {
                case: k,
                seed,
                runner: Runner::ConcordDepartures,
            }));
        }
    }
    outcomes.extend(run_jobs(cases, first, options, done));
    *results = reassemble(outcomes);
    if !options.diagnose_all {
        // Each other case runs the representative's suspects one at a time, in order, until
        // one brings ns-3 within its targets: that one names the case's cause, measured on it,
        // and the suspects after it need not run.
        let mut pending: Vec<(usize, std::collections::VecDeque<Variant>)> = Vec::new();
        for g in &groups {
            let rep = &results[g[0]];
            let suspects = match (&rep.concord, &rep.ns3) {
                (Some(c), Some(r)) => finding(&cases[g[0]], c, r, &rep.variants).suspects(),
                _ => Vec::new(),
            };
            for &k in &g[1..] {
                let applicable = suspects
                    .iter()
                    .copied()
                    .filter(|v| v.applies_to(&cases[k]))
                    .collect();
                pending.push((k, applicable));
            }
        }
        loop {
            let mut round = Vec::new();
            for (k, queue) in pending.iter_mut() {
                let r = &results[*k];
                let explained = match (&r.concord, &r.ns3) {
                    (Some(c), Some(n)) => matches!(
                        finding(&cases[*k], c, n, &r.variants),
                        Finding::Explained(_)
                    ),
                    _ => true,
                };
                if explained {
                    queue.clear();
                } else if let Some(v) = queue.pop_front() {
                    round.extend(variant_jobs(cases, *k, &[v]));
                }
            }
            if round.is_empty() {
                break;
            }
            outcomes.extend(run_jobs(cases, round, options, done));
            *results = reassemble(outcomes);
        }
    }
    for g in &groups {
        let rep_id = results[g[0]].id.clone();
        let rep_tried = tried(&results[g[0]]);
        for &k in g {
            let r = &mut results[k];
            r.symptom = symptom(&cases[k], &r.checks);
            r.representative = if options.diagnose_all {
                r.id.clone()
            } else {
                rep_id.clone()
            };
            if r.representative == r.id {
                continue;
            }
            if r.variants.is_empty() {
                r.cause = format!(
                    "not diagnosed: on {rep_id} (same symptom) no switch explains the difference (tried: {rep_tried})"
                );
            } else {
                r.cause = format!("{} (checked here; suspect found on {rep_id})", r.cause);
            }
        }
    }
}

/// The variants run on a case, by name.
pub fn tried(r: &CaseResult) -> String {
    r.variants
        .iter()
        .map(|v| v.source.trim_start_matches("ns-3 ").to_string())
        .collect::<Vec<_>>()
        .join(", ")
}

fn compare_linux(
    c: &Case,
    r: &CaseResult,
    cc: &str,
    outcome: Result<Measurement, String>,
) -> LinuxComparison {
    match outcome {
        Err(error) => LinuxComparison {
            cc: cc.into(),
            summary: None,
            checks: Vec::new(),
            verdict: Verdict::Error,
            error,
        },
        Ok(m) => {
            let s = summarise(&[m]);
            let k = match (&r.concord, &s) {
                (Some(concord), Some(k)) => checks(c, concord, k),
                _ => Vec::new(),
            };
            let verdict = if k.is_empty() {
                Verdict::NotCompared
            } else if k.iter().all(|x| x.pass) {
                Verdict::Within
            } else {
                Verdict::Outside
            };
            LinuxComparison {
                cc: cc.into(),
                summary: s,
                checks: k,
                verdict,
                error: String::new(),
            }
        }
    }
}

/// One case's result from every outcome.
fn assemble(c: &Case, k: usize, outcomes: &[(Job, Result<Measurement, String>)]) -> CaseResult {
    let mut errors = Vec::new();
    let mut runs: Vec<Measurement> = Vec::new();
    for (job, r) in outcomes.iter().filter(|(j, _)| j.case == k) {
        match r {
            Ok(m) => runs.push(m.clone()),
            Err(e) => errors.push(format!("seed {}: {e}", job.seed)),
        }
    }
    runs.sort_by(|a, b| (a.source.as_str(), a.seed).cmp(&(b.source.as_str(), b.seed)));
    let of = |source: &str| -> Vec<Measurement> {
        runs.iter()
            .filter(|m| m.source == source)
            .cloned()
            .collect()
    };
    let concord_own = of("concord");
    let concord = summarise(&concord_own);
    let seed_runs = seed_runs(c, &concord_own);
    let ns3 = summarise(&of(Variant::Reference.name()));
    let variants: Vec<Summary> = Variant::ALL
        .iter()
        .skip(1)
        .filter_map(|v| summarise(&of(v.name())))
        .collect();
    let concord_departures = summarise(&of(concord_run::DEPARTURES_SOURCE));
    let (departures_checks, departures_verdict) = match (&concord_departures, &ns3) {
        (Some(d), Some(r)) => {
            let k = checks(c, d, r);
            let v = if k.iter().all(|x| x.pass) {
                Verdict::Within
            } else {
                Verdict::Outside
            };
            (k, v)
        }
        _ => (Vec::new(), Verdict::NotCompared),
    };
    let (checks, verdict, why) = match (&concord, &ns3) {
        _ if !errors.is_empty() => (Vec::new(), Verdict::Error, String::new()),
        (Some(cc), Some(r)) => {
            let k = checks(c, cc, r);
            let why = cause(c, cc, r, &variants);
            let v = if k.iter().all(|x| x.pass) {
                Verdict::Within
            } else {
                Verdict::Outside
            };
            (k, v, why)
        }
        _ => (Vec::new(), Verdict::NotCompared, String::new()),
    };
    CaseResult {
        id: c.id.clone(),
        group: c.group.clone(),
        note: c.note.clone(),
        flows: c.flow_count(),
        rate_bps: c.rate.bps(),
        rtt_s: c.rtt.as_secs_f64(),
        queue: c.queue.label(),
        loss: c.loss,
        duration_s: c.duration.as_secs_f64(),
        seeds: c.seeds.clone(),
        concord_runs: seed_runs.as_ref().map(Vec::len),
        concord_seed_runs: seed_runs.as_deref().map_or(String::new(), runs::show),
        concord,
        ns3,
        variants,
        checks,
        verdict,
        concord_departures,
        departures_checks,
        departures_verdict,
        cause: why,
        symptom: String::new(),
        representative: String::new(),
        errors,
        linux: Vec::new(),
        runs,
    }
}

/// The case's seeds grouped by the concord run they gave ([`runs::classes`]), from the runs'
/// windows in seed order; `None` unless every seed has a concord run with its windows.
fn seed_runs(c: &Case, concord: &[Measurement]) -> Option<Vec<Vec<u64>>> {
    let mut wanted = c.seeds.clone();
    wanted.sort_unstable();
    let seeds: Vec<u64> = concord.iter().map(|m| m.seed).collect();
    if seeds != wanted || concord.iter().any(|m| m.windows.is_empty()) {
        return None;
    }
    let windows: Vec<(u64, &[Vec<u64>])> = concord
        .iter()
        .map(|m| (m.seed, m.windows.flows()))
        .collect();
    Some(runs::classes(&windows))
}

/// The grid in `path`, or the shipped one.
pub fn load_grid(path: Option<&std::path::Path>) -> Result<Vec<Case>, String> {
    match path {
        None => {
            grid::parse(grid::DEFAULT_GRID, "crates/validate/grid.toml").map_err(|e| e.to_string())
        }
        Some(p) => {
            let text = std::fs::read_to_string(p).map_err(|e| {
                format!(
                    "{}: cannot read the grid: {e}; fix: name a readable TOML file",
                    p.display()
                )
            })?;
            grid::parse(&text, &p.display().to_string()).map_err(|e| e.to_string())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Options of a test run: with `ns3`, a program that does not exist, so that any ns-3 job
    /// actually run (not read from `reuse`) is an error.
    fn options(
        ns3: bool,
        jobs: usize,
        diagnose: bool,
        reuse: HashMap<(String, u64, String), Measurement>,
    ) -> Options {
        Options {
            ns3: ns3.then(|| PathBuf::from("/nonexistent/validate")),
            jobs,
            diagnose,
            diagnose_all: false,
            linux: None,
            reuse,
            ns3_cache: None,
        }
    }

    #[test]
    fn ns3_runs_of_an_earlier_results_file_are_reused_and_not_run_again() {
        let cases = grid::parse(
            "[[case]]\ntopology = \"dumbbell\"\nflows = 1\nrate = \"5Mbps\"\nrtt = \"20ms\"\nqueue = \"droptail\"\nduration = \"1s\"\n",
            "g",
        )
        .expect("valid");
        let earlier = r#"[{"id": "dumbbell-1f-5Mbps-20ms-droptail", "runs": [
            {"source": "concord", "seed": 1, "goodput_bps": [1.0], "utilisation": 0.5, "drops": 0, "marks": 0, "wire_losses": 0, "timeouts": 0, "fast_retransmits": 0, "cwnd_mean": 1.0, "cwnd_cv": 0.0, "cwnd_max": 1.0},
            {"source": "ns-3", "seed": 1, "goodput_bps": [4000000.0], "utilisation": 0.84, "drops": 0, "marks": 0, "wire_losses": 0, "timeouts": 0, "fast_retransmits": 0, "cwnd_mean": 12.0, "cwnd_cv": 0.1, "cwnd_max": 20.0}]}]"#;
        let reuse = reusable_ns3_runs(earlier).expect("reads");
        assert_eq!(reuse.len(), 1, "only ns-3 runs are kept");
        let opts = options(true, 1, false, reuse);
        let r = run(&cases, &opts, &|_| {});
        assert!(r[0].errors.is_empty(), "{:?}", r[0].errors);
        assert_eq!(r[0].ns3.as_ref().map(|s| s.utilisation), Some(0.84));
        assert_eq!(r[0].concord.as_ref().map(|s| s.runs), Some(1));
    }

    fn ns3_run(source: &str, utilisation: f64) -> Measurement {
        Measurement {
            source: source.into(),
            seed: 1,
            goodput_bps: vec![1e6],
            utilisation,
            drops: 0,
            marks: 0,
            wire_losses: 0,
            timeouts: 0,
            fast_retransmits: 0,
            spurious_fast_retransmits: None,
            cwnd_mean: 10.0,
            cwnd_cv: 0.0,
            cwnd_max: 10.0,
            windows: Default::default(),
        }
    }

    #[test]
    fn the_symptom_names_the_mechanisms_the_targets_missed_and_concords_side() {
        let cases = grid::parse(
            "[[case]]\nnote = \"random loss\"\ntopology = \"dumbbell\"\nflows = 1\nrate = \"5Mbps\"\nrtt = \"20ms\"\nqueue = \"droptail\"\nloss = 0.01\n",
            "g",
        )
        .expect("valid");
        let check = |metric, difference, pass| Check {
            metric,
            concord: 0.0,
            reference: 0.0,
            difference,
            limit: 0.02,
            pass,
        };
        use crate::compare::Metric;
        let k = [
            check(Metric::Utilisation, 0.1, false),
            check(Metric::Jain, 0.0, true),
            check(Metric::GoodputUnderLoss, -0.3, false),
        ];
        assert_eq!(
            symptom(&cases[0], &k),
            "dumbbell, DropTail, random loss: concord's utilisation higher, goodput lower"
        );
    }

    #[test]
    fn the_symptom_leaves_out_rate_rtt_flows_and_group_but_not_the_queue_or_recovery() {
        let cases = grid::parse(
            "[[case]]\nnote = \"a\"\ntopology = \"dumbbell\"\nflows = [1, 4]\nrate = [\"10Mbps\", \"100Mbps\"]\nrtt = \"20ms\"\nqueue = [\"red\", \"red-ecn\"]\n\n[[case]]\ngroup = \"issue\"\ntopology = \"dumbbell\"\nflows = 4\nrate = \"10Mbps\"\nrtt = \"50ms\"\nqueue = { kind = \"red\", min_th = 5, max_th = 15 }\n\n[[case]]\ngroup = \"prr\"\ntopology = \"dumbbell\"\nflows = 4\nrate = \"10Mbps\"\nrtt = \"50ms\"\nqueue = \"red\"\nrecovery = \"prr\"\n",
            "g",
        )
        .expect("valid");
        let k = [Check {
            metric: crate::compare::Metric::Jain,
            concord: 0.99,
            reference: 0.8,
            difference: 0.19,
            limit: 0.05,
            pass: false,
        }];
        let of = |id: &str| {
            let c = cases.iter().find(|c| c.id.contains(id)).expect(id);
            symptom(c, &k)
        };
        let red = "dumbbell, RED: concord's jain higher";
        assert_eq!(of("dumbbell-1f-10Mbps-20ms-red-25"), red);
        assert_eq!(of("dumbbell-4f-100Mbps-20ms-red-25"), red);
        assert_eq!(
            of("red-5-15"),
            red,
            "the grid group and thresholds are left out"
        );
        assert_eq!(
            of("dumbbell-4f-100Mbps-20ms-red-ecn"),
            "dumbbell, RED/ECN: concord's jain higher"
        );
        assert_eq!(of("prr"), "dumbbell, RED, PRR: concord's jain higher");
    }

    #[test]
    fn the_diagnosis_runs_every_switch_on_the_representative_and_its_cause_on_the_others() {
        // Two cases with one symptom (ns-3's utilisation far below concord's); ns-3's runs come
        // from `reuse` and the ns-3 program does not exist, so any other ns-3 run is an error.
        let cases = grid::parse(
            "[[case]]\nnote = \"t\"\ntopology = \"dumbbell\"\nflows = 1\nrate = \"5Mbps\"\nrtt = [\"20ms\", \"30ms\"]\nqueue = \"droptail\"\nduration = \"1s\"\nseeds = [1]\n",
            "g",
        )
        .expect("valid");
        let mut reuse = HashMap::new();
        let mut put = |k: usize, v: Variant, u: f64| {
            reuse.insert(
                (cases[k].id.clone(), 1, v.name().to_string()),
                ns3_run(v.name(), u),
            );
        };
        let u: Vec<f64> = (0..2)
            .map(|k| concord_run::run(&cases[k], 1).expect("runs").utilisation)
            .collect();
        for (k, uk) in u.iter().enumerate() {
            put(k, Variant::Reference, uk - 0.5);
        }
        for v in Variant::ALL
            .iter()
            .skip(1)
            .filter(|v| v.applies_to(&cases[0]))
        {
            // Only the 40 ms delayed-ACK timer brings ns-3 to concord on the representative.
            let near = if *v == Variant::ShortDelayedAck {
                0.01
            } else {
                0.5
            };
            put(0, *v, u[0] - near);
        }
        put(1, Variant::ShortDelayedAck, u[1] - 0.01);
        let opts = options(true, 1, true, reuse);
        let r = run(&cases, &opts, &|_| {});
        assert!(r.iter().all(|x| x.errors.is_empty()), "{:?}", r[1].errors);
        assert_eq!(r[0].representative, r[0].id);
        assert_eq!(r[1].representative, r[0].id);
        assert_eq!(
            r[0].symptom,
            "dumbbell, DropTail: concord's utilisation higher"
        );
        // The 12 variants but RED's wait and RFC 3168's ECN rule.
        assert_eq!(
            r[0].variants.len(),
            10,
            "every switch that applies to DropTail"
        );
        assert_eq!(r[1].variants.len(), 1, "the representative's cause only");
        assert_eq!(
            r[0].cause,
            format!("explained by {}", Variant::ShortDelayedAck.mechanism())
        );
        assert_eq!(
            r[1].cause,
            format!(
                "explained by {} (checked here; suspect found on {})",
                Variant::ShortDelayedAck.mechanism(),
                r[0].id
            )
        );
    }

    #[test]
    fn a_member_runs_the_representatives_suspects_in_turn_until_one_explains_it() {
        // Three cases, one symptom; the 40 ms delayed-ACK timer and the 1 s minimum RTO both
        // explain the representative. The second case is explained by the first suspect, so the
        // second is not run on it; the third only by the second suspect. Any ns-3 run not in
        // `reuse` is an error (the program does not exist).
        let cases = grid::parse(
            "[[case]]\nnote = \"t\"\ntopology = \"dumbbell\"\nflows = 1\nrate = \"5Mbps\"\nrtt = [\"20ms\", \"30ms\", \"40ms\"]\nqueue = \"droptail\"\nduration = \"1s\"\nseeds = [1]\n",
            "g",
        )
        .expect("valid");
        let u: Vec<f64> = (0..3)
            .map(|k| concord_run::run(&cases[k], 1).expect("runs").utilisation)
            .collect();
        let mut reuse = HashMap::new();
        let mut put = |k: usize, v: Variant, gap: f64| {
            reuse.insert(
                (cases[k].id.clone(), 1, v.name().to_string()),
                ns3_run(v.name(), u[k] - gap),
            );
        };
        for k in 0..3 {
            put(k, Variant::Reference, 0.5);
        }
        for v in Variant::ALL
            .iter()
            .skip(1)
            .filter(|v| v.applies_to(&cases[0]))
        {
            let explains = matches!(v, Variant::ShortDelayedAck | Variant::LongMinRto);
            put(0, *v, if explains { 0.01 } else { 0.5 });
        }
        put(1, Variant::ShortDelayedAck, 0.01);
        put(2, Variant::ShortDelayedAck, 0.5);
        put(2, Variant::LongMinRto, 0.01);
        let opts = options(true, 1, true, reuse);
        let r = run(&cases, &opts, &|_| {});
        assert!(
            r.iter().all(|x| x.errors.is_empty()),
            "{:?}",
            r.iter().map(|x| &x.errors).collect::<Vec<_>>()
        );
        assert_eq!(r[0].representative, r[0].id);
        let names =
            |k: usize| -> Vec<String> { r[k].variants.iter().map(|v| v.source.clone()).collect() };
        assert_eq!(names(1), vec![Variant::ShortDelayedAck.name()]);
        assert_eq!(
            names(2),
            vec![Variant::ShortDelayedAck.name(), Variant::LongMinRto.name()]
        );
        assert!(
            r[2].cause
                .starts_with(&format!("explained by {}", Variant::LongMinRto.mechanism())),
            "{}",
            r[2].cause
        );
    }

    #[test]
    fn without_ns3_a_case_runs_in_concord_and_is_not_compared() {
        let cases = grid::parse(
            "[[case]]\ntopology = \"dumbbell\"\nflows = 2\nrate = \"5Mbps\"\nrtt = \"20ms\"\nqueue = \"droptail\"\nduration = \"3s\"\nseeds = [1, 2]\n",
            "g",
        )
        .expect("valid");
        let opts = options(false, 2, true, HashMap::new());
        let lines = Mutex::new(Vec::new());
        let r = run(&cases, &opts, &|l| {
            lines.lock().expect("lock").push(l.to_string())
        });
        assert_eq!(r.len(), 1);
        assert_eq!(r[0].verdict, Verdict::NotCompared);
        assert_eq!(r[0].runs.len(), 2);
        assert_eq!(r[0].concord.as_ref().map(|s| s.runs), Some(2));
        assert_eq!(lines.lock().expect("lock").len(), 2);
    }

    #[test]
    fn the_seeds_of_one_lossless_droptail_flow_give_one_run_and_random_loss_gives_three() {
        let cases = grid::parse(
            "[[case]]\ntopology = \"dumbbell\"\nflows = 1\nrate = \"5Mbps\"\nrtt = \"20ms\"\nqueue = \"droptail\"\nloss = [0.0, 0.02]\nduration = \"3s\"\nseeds = [3, 1, 2]\n",
            "g",
        )
        .expect("valid");
        let opts = options(false, 2, false, HashMap::new());
        let r = run(&cases, &opts, &|_| {});
        let counted: Vec<(Option<usize>, &str)> = r
            .iter()
            .map(|x| (x.concord_runs, x.concord_seed_runs.as_str()))
            .collect();
        assert_eq!(counted, [(Some(1), "1=2=3"), (Some(3), "1 2 3")]);
        // The verdict logic is untouched: nothing compared without ns-3.
        assert!(r.iter().all(|x| x.verdict == Verdict::NotCompared));
        // A run without its windows (read back from a file) is not counted.
        let mut runs = r[0].runs.clone();
        runs[1].windows = Default::default();
        assert_eq!(seed_runs(&cases[0], &runs), None);
        assert_eq!(seed_runs(&cases[0], &r[0].runs[..2]), None);
    }

    #[test]
    fn a_missing_ns3_program_is_an_error_naming_the_fix() {
        let cases = grid::parse(
            "[[case]]\ntopology = \"dumbbell\"\nflows = 1\nrate = \"5Mbps\"\nrtt = \"20ms\"\nqueue = \"droptail\"\nduration = \"1s\"\n",
            "g",
        )
        .expect("valid");
        let opts = options(true, 1, false, HashMap::new());
        let r = run(&cases, &opts, &|_| {});
        assert_eq!(r[0].verdict, Verdict::Error);
        assert!(
            r[0].errors[0].contains("fix: build it with bench/ns3/build-validate.sh"),
            "{:?}",
            r[0].errors
        );
    }
}
