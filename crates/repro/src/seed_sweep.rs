//! A claim's verdict over many seed bases: what `concord reproduce --quick --seed-base B`
//! gives for it at each `B`, each seed block alone, and every distinct seed of those runs
//! pooled, with the mean's margin to the tolerance (docs/analysis.md, "Seed-set dependence of
//! the quick verdicts"). The runs are the reproduction's own (the pooling rule, two blocks a
//! run); nothing here changes a setting, a seed, a tolerance or the verdict rule.

use crate::claim::{fmt_num, t95, Claim, Verdict};
use crate::margin::margin_text;
use crate::report::{mean_ci_text, seeds_text};
use std::collections::BTreeSet;
use std::fmt::Write as _;

/// One claim as the runs at each seed base judged it, in the order of the bases.
#[derive(Clone, Debug)]
pub struct Sweep {
    /// The claim's id.
    pub id: String,
    /// `(seed base, the claim as that run judged it)`; None when its experiment failed.
    pub runs: Vec<(u64, Option<Claim>)>,
}

/// Every distinct seed's measurement over `claims` (each a run of the same claim at another
/// seed base), in the order met: a seed block's per-seed values once per seed (two runs whose
/// blocks share seeds measure them once), a block's one pooled value once per block and only
/// when none of its seeds was met before. A deterministic claim gives its one value.
pub fn distinct_values<'a>(claims: impl IntoIterator<Item = &'a Claim>) -> (Vec<u64>, Vec<f64>) {
    let mut seen = BTreeSet::new();
    let (mut seeds, mut values) = (Vec::new(), Vec::new());
    for c in claims {
        if c.deterministic {
            return (c.seeds.clone(), c.values.clone());
        }
        let blocks: Vec<(&[u64], &[f64])> = if c.blocks.is_empty() {
            vec![(&c.seeds, &c.values)]
        } else {
            c.blocks
                .iter()
                .map(|b| (b.seeds.as_slice(), b.values.as_slice()))
                .collect()
        };
        for (s, v) in blocks {
            if s.len() == v.len() {
                for (seed, value) in s.iter().zip(v) {
                    if seen.insert(*seed) {
                        seeds.push(*seed);
                        values.push(*value);
                    }
                }
            } else if v.len() == 1 && s.iter().all(|x| !seen.contains(x)) {
                seen.extend(s.iter().copied());
                seeds.push(s[0]);
                values.push(v[0]);
            }
        }
    }
    (seeds, values)
}

/// True when `v` is reproduced (at the paper's setting or under the row's deviation).
fn holds(v: Verdict) -> bool {
    matches!(v, Verdict::Reproduced | Verdict::ReproducedUnderDeviation)
}

/// The sample standard deviation of `x` (NaN for fewer than two values).
fn std_dev(x: &[f64]) -> f64 {
    let n = x.len() as f64;
    if x.len() < 2 {
        return f64::NAN;
    }
    let mean = x.iter().sum::<f64>() / n;
    (x.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n - 1.0)).sqrt()
}

/// What all distinct seeds of a sweep say: the claim judged on them by its own rule.
pub struct AllSeeds {
    /// The claim with every distinct seed's value (its verdict, mean, interval and margin).
    pub claim: Claim,
    /// How many values were pooled.
    pub n: usize,
    /// The standard deviation of one value (one seed, or one block for a block's one value).
    pub sd: f64,
    /// How many values one run pools (both of its blocks).
    pub per_run: usize,
}

impl AllSeeds {
    /// The margin in half-widths that one run's interval gives when its values spread as all
    /// seeds' do: `distance / sd * sqrt(n) / t(n - 1)` with n = [`AllSeeds::per_run`] (the
    /// interval's half-width is t(n-1) sd / sqrt(n)). At least 1: a run is mostly reproduced;
    /// under 1: its interval mostly reaches the edge. None without a spread or a margin.
    pub fn typical_run_margin(&self) -> Option<f64> {
        let m = self.claim.margin?;
        if self.sd.is_nan() || self.sd <= 0.0 || self.per_run < 2 {
            return None;
        }
        Some(m.distance / self.sd * (self.per_run as f64).sqrt() / t95(self.per_run - 1))
    }
}

impl Sweep {
    /// The runs whose experiment ran.
    fn claims(&self) -> impl Iterator<Item = &Claim> {
        self.runs.iter().filter_map(|(_, c)| c.as_ref())
    }

    /// Seed bases at which the claim is reproduced, of those that ran.
    pub fn bases_reproduced(&self) -> (usize, usize) {
        let ran: Vec<&Claim> = self.claims().collect();
        (ran.iter().filter(|c| holds(c.verdict)).count(), ran.len())
    }

    /// Distinct seed blocks judged alone on which the claim is reproduced, of all distinct
    /// blocks (a block met in two runs counts once).
    pub fn blocks_reproduced(&self) -> (usize, usize) {
        let mut seen = BTreeSet::new();
        let (mut ok, mut all) = (0, 0);
        for c in self.claims() {
            for b in &c.blocks {
                if seen.insert(b.seeds.clone()) {
                    all += 1;
                    ok += usize::from(holds(b.verdict));
                }
            }
        }
        (ok, all)
    }

    /// The claim judged on every distinct seed of the sweep; None when no run gave it.
    pub fn all_seeds(&self) -> Option<AllSeeds> {
        let first = self.claims().next()?;
        let (seeds, values) = distinct_values(self.claims());
        let mut claim = first.clone();
        claim.blocks.clear();
        let claim = if first.deterministic {
            claim
        } else {
            claim.over_seeds(&seeds, &values)
        };
        Some(AllSeeds {
            per_run: first.values.len(),
            n: values.len(),
            sd: std_dev(&values),
            claim,
        })
    }
}

/// The summary table: one row per sweep.
pub fn render_summary(sweeps: &[Sweep]) -> String {
    let mut s = String::from(
        "| claim | verdict at the first base | reproduced at (bases) | blocks reproduced alone | all distinct seeds: values, mean [95% CI] | margin on all seeds: distance (half-widths) | one value's sd | distance / sd | one run's typical margin (half-widths) | verdict on all seeds |\n|---|---|---|---|---|---|---|---|---|---|\n",
    );
    for w in sweeps {
        let first = w
            .runs
            .first()
            .and_then(|(_, c)| c.as_ref())
            .map_or("error".to_string(), |c| c.verdict.label().to_string());
        let (k, n) = w.bases_reproduced();
        let (bk, bn) = w.blocks_reproduced();
        let row = match w.all_seeds() {
            Some(a) => format!(
                "{}, {} | {} | {} | {} | {} | {}",
                a.n,
                mean_ci_text(&a.claim),
                margin_text(a.claim.margin),
                fmt_num(a.sd),
                a.claim
                    .margin
                    .filter(|_| a.sd > 0.0)
                    .map_or("-".to_string(), |m| format!("{:.2}", m.distance / a.sd)),
                a.typical_run_margin()
                    .map_or("-".to_string(), |k| format!("{k:.2}")),
                a.claim.verdict.label()
            ),
            None => "- | - | - | - | - | -".into(),
        };
        let _ = writeln!(
            s,
            "| `{}` | {first} | {k} of {n} | {bk} of {bn} | {row} |",
            w.id
        );
    }
    s
}

/// One sweep in detail: the claim's words and tolerance, then a row per seed base.
pub fn render_sweep(w: &Sweep) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "### `{}`\n", w.id);
    if let Some(c) = w.claims().next() {
        let _ = writeln!(
            s,
            "{}: {}. Tolerance {} ({}; setting: {}).\n",
            c.figure,
            c.metric,
            c.tolerance,
            if c.kind == crate::claim::Kind::Paper {
                "paper result"
            } else {
                "concord's check"
            },
            crate::report::setting_text(c)
        );
    }
    s.push_str("| seed base | seeds | mean [95% CI]; each block alone | margin: distance (half-widths) | verdict | blocks' verdicts |\n|---|---|---|---|---|---|\n");
    for (base, c) in &w.runs {
        match c {
            Some(c) => {
                let blocks: Vec<&str> = c.blocks.iter().map(|b| b.verdict.label()).collect();
                let _ = writeln!(
                    s,
                    "| {base} | {} | {} | {} | {} | {} |",
                    seeds_text(c),
                    mean_ci_text(c),
                    margin_text(c.margin),
                    c.verdict.label(),
                    if blocks.is_empty() {
                        "-".to_string()
                    } else {
                        blocks.join(", ")
                    }
                );
            }
            None => {
                let _ = writeln!(s, "| {base} | - | the experiment failed | - | - | - |");
            }
        }
    }
    s.push('\n');
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::claim::{Check, Paper};

    /// A claim at seed base `base` (seeds base+1..base+5, replicate base+1001..) whose values
    /// are `own` and `rep`.
    fn run(base: u64, own: [f64; 5], rep: [f64; 5]) -> Claim {
        let make = |first: u64, v: [f64; 5]| {
            let seeds: Vec<u64> = (first..first + 5).collect();
            Claim::mean_over_seeds(
                Paper::Cm,
                "Fig. 4",
                "loss ratio",
                "about 1",
                Check::Between { lo: 0.8, hi: 1.2 },
                &seeds,
                &v,
                "s.toml",
                true,
            )
        };
        make(base + 1, own).pooled_with(&make(base + 1001, rep))
    }

    #[test]
    fn shared_seeds_are_pooled_once() {
        let a = run(0, [1.0; 5], [1.1; 5]);
        // Seeds 1002-1006 and 2002-2006: 1002-1005 were measured at base 0 already.
        let b = run(1001, [1.1, 1.1, 1.1, 1.1, 1.15], [1.19; 5]);
        let (seeds, values) = distinct_values([&a, &b]);
        assert_eq!(seeds.len(), 16);
        assert_eq!(&seeds[..6], &[1, 2, 3, 4, 5, 1001]);
        assert_eq!(&seeds[10..], &[1006, 2002, 2003, 2004, 2005, 2006]);
        assert_eq!(values[10], 1.15);
    }

    #[test]
    fn a_sweep_counts_bases_and_distinct_blocks_and_judges_all_seeds() {
        let w = Sweep {
            id: "cm/feedback/x".into(),
            runs: vec![
                (0, Some(run(0, [1.0, 1.02, 0.98, 1.0, 1.0], [1.0; 5]))),
                (
                    1001,
                    Some(run(
                        1001,
                        [1.0, 1.02, 0.98, 1.0, 1.3],
                        [1.2, 1.3, 1.25, 1.2, 1.25],
                    )),
                ),
                (3001, None),
            ],
        };
        assert_eq!(w.bases_reproduced(), (1, 2));
        // Blocks 1-5, 1001-1005, 1002-1006, 2002-2006: the last two straddle 1.2.
        assert_eq!(w.blocks_reproduced(), (2, 4));
        let all = w.all_seeds().expect("ran");
        // Distinct seeds: 1-5 (5), 1001-1005 (5), 1006 (1), 2002-2006 (5).
        assert_eq!(all.n, 16);
        assert_eq!(all.claim.seeds.len(), 16);
        let mean = (5.0 + 5.0 + 1.3 + 6.2) / 16.0;
        assert!((all.claim.ours - mean).abs() < 1e-12, "{}", all.claim.ours);
        let m = all.claim.margin.expect("finite");
        assert_eq!(m.edge, 1.2);
        assert!((m.distance - (1.2 - mean)).abs() < 1e-12);
        assert_eq!(all.per_run, 10);
        // distance / sd * sqrt(10) / t(9), t(9) = 2.262.
        let typical = m.distance / all.sd * 10f64.sqrt() / 2.262;
        assert!((all.typical_run_margin().expect("spread") - typical).abs() < 1e-12);
        let text = render_summary(std::slice::from_ref(&w));
        assert!(
            text.contains("| `cm/feedback/x` | reproduced | 1 of 2 | 2 of 4 | 16, "),
            "{text}"
        );
        let detail = render_sweep(&w);
        assert!(
            detail.contains("| 3001 | - | the experiment failed |"),
            "{detail}"
        );
        assert!(detail.contains("| 0 | 1-5 and 1001-1005 | "), "{detail}");
    }
}
