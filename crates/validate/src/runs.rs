//! Which seeds of a case give the same concord run (docs/seed-audit.md).
//!
//! A case's seed draws its flows' start times (and, where the case has them, random loss and
//! RED's decisions). Behind a DropTail bottleneck the start times can be absorbed: two seeds
//! then give one run, its flows renamed and its clock shifted, and a mean over those seeds is
//! one run's figure. Two runs are the same run when each flow's sequence of congestion-window
//! values is some flow's sequence in the other run, compared up to the shortest sequence of
//! either run (a run shifted later in time is cut earlier by the fixed end).

use concord_sim::Simulator;
use std::fmt;
use std::sync::Arc;

/// Each flow's sequence of congestion-window values (bytes), in flow order, cut at the run's
/// shortest sequence: [`same_run`] never compares past it, so what is cut off cannot change a
/// comparison. Shared, so that copying a measurement does not copy the sequences.
#[derive(Clone, Default, PartialEq, Eq)]
pub struct Windows(Arc<Vec<Vec<u64>>>);

impl Windows {
    /// The windows of `per_flow`, each flow's sequence cut at the shortest one.
    pub fn new(mut per_flow: Vec<Vec<u64>>) -> Self {
        let shortest = per_flow.iter().map(Vec::len).min().unwrap_or(0);
        for w in &mut per_flow {
            w.truncate(shortest);
            w.shrink_to_fit();
        }
        Windows(Arc::new(per_flow))
    }

    /// The windows of a finished run: every traced window sample of each flow, in order.
    pub fn of(sim: &Simulator) -> Self {
        let mut per_flow = vec![Vec::new(); sim.flows().len()];
        for s in sim.cwnd_samples() {
            if let Some(w) = per_flow.get_mut(s.flow as usize) {
                w.push(s.cwnd);
            }
        }
        Windows::new(per_flow)
    }

    /// Whether nothing was recorded (a run read back from a file, or one without flows).
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The flows' sequences.
    pub fn flows(&self) -> &[Vec<u64>] {
        &self.0
    }
}

impl fmt::Debug for Windows {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let samples = self.0.first().map_or(0, Vec::len);
        write!(f, "Windows({} flows x {samples} values)", self.0.len())
    }
}

/// Whether two runs are the same run: as many flows, and the same window sequences, flow for
/// some flow, up to the shortest sequence of the two runs.
pub fn same_run(a: &[Vec<u64>], b: &[Vec<u64>]) -> bool {
    let shortest = a.iter().chain(b).map(Vec::len).min().unwrap_or(0);
    a.len() == b.len() && prefixes(a, shortest) == prefixes(b, shortest)
}

/// The first `n` values of each flow's window sequence, sorted (which flow is which left out).
fn prefixes(run: &[Vec<u64>], n: usize) -> Vec<&[u64]> {
    let mut v: Vec<&[u64]> = run.iter().map(|w| &w[..n]).collect();
    v.sort_unstable();
    v
}

/// The seeds grouped by the run they give, in the order given: each run joins the class of the
/// first earlier run it is the same run as ([`same_run`]), or starts a class.
pub fn classes(runs: &[(u64, &[Vec<u64>])]) -> Vec<Vec<u64>> {
    let mut classes: Vec<Vec<u64>> = Vec::new();
    let mut first_of: Vec<usize> = Vec::new();
    for (i, (seed, w)) in runs.iter().enumerate() {
        match first_of.iter().position(|&j| same_run(runs[j].1, w)) {
            Some(k) => classes[k].push(*seed),
            None => {
                first_of.push(i);
                classes.push(vec![*seed]);
            }
        }
    }
    classes
}

/// The classes written `1=2=3 4 5`: the seeds of one run joined by `=`, runs apart.
pub fn show(classes: &[Vec<u64>]) -> String {
    classes
        .iter()
        .map(|c| c.iter().map(u64::to_string).collect::<Vec<_>>().join("="))
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_same_run_is_the_same_windows_whichever_flow_carries_them() {
        let a = vec![vec![1, 2, 3, 4], vec![5, 6, 7]];
        let shifted = vec![vec![5, 6, 7, 8], vec![1, 2, 3]];
        assert!(same_run(&a, &shifted));
        let other = vec![vec![1, 2, 9], vec![5, 6, 7]];
        assert!(!same_run(&a, &other));
        assert!(!same_run(&a, &a[..1]));
    }

    #[test]
    fn five_seeds_of_three_runs_make_three_classes_in_seed_order() {
        let one = vec![vec![10, 20, 30, 40], vec![10, 15, 20]];
        // The same run, its flows renamed and cut one value earlier.
        let one_renamed = vec![vec![10, 15, 20], vec![10, 20, 30]];
        let two = vec![vec![10, 20, 30, 40], vec![10, 15, 25]];
        let three = vec![vec![10, 20, 30, 40]];
        let runs: Vec<(u64, &[Vec<u64>])> = vec![
            (1, &one),
            (2, &two),
            (3, &one_renamed),
            (4, &three),
            (5, &one),
        ];
        let c = classes(&runs);
        assert_eq!(c, vec![vec![1, 3, 5], vec![2], vec![4]]);
        assert_eq!(c.len(), 3);
        assert_eq!(show(&c), "1=3=5 2 4");
        let alone: Vec<(u64, &[Vec<u64>])> = vec![(7, &two), (8, &one), (9, &three)];
        assert_eq!(classes(&alone).len(), 3);
        assert_eq!(classes(&[]), Vec::<Vec<u64>>::new());
    }

    #[test]
    fn a_run_keeps_its_windows_up_to_its_shortest_flow() {
        let w = Windows::new(vec![vec![1, 2, 3, 4], vec![5, 6]]);
        assert_eq!(w.flows(), &[vec![1, 2], vec![5, 6]]);
        assert!(!w.is_empty());
        assert!(Windows::default().is_empty());
        assert_eq!(format!("{w:?}"), "Windows(2 flows x 2 values)");
    }
}
