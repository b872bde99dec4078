//! A claim: one number of a paper's figure or table, the paper's words, the tolerance fixed
//! before the result is seen, what concord measures for it over its seeds, and the verdict.

use crate::margin::Margin;
use serde::{Deserialize, Serialize};

/// The papers (and the baselines' own validation).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Paper {
    /// The baselines (NewReno, RED) against textbook results.
    Baseline,
    /// The Congestion Manager.
    Cm,
    /// GCCA.
    Gcca,
    /// ECA.
    Eca,
    /// MCCP.
    Mccp,
    /// The Coordination Protocol.
    Cp,
}

impl Paper {
    /// Every paper, in report order.
    pub const ALL: [Paper; 6] = [
        Paper::Baseline,
        Paper::Cm,
        Paper::Gcca,
        Paper::Eca,
        Paper::Mccp,
        Paper::Cp,
    ];

    /// The short name used on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Paper::Baseline => "baseline",
            Paper::Cm => "cm",
            Paper::Gcca => "gcca",
            Paper::Eca => "eca",
            Paper::Mccp => "mccp",
            Paper::Cp => "cp",
        }
    }

    /// The paper from its short name.
    pub fn from_name(name: &str) -> Option<Paper> {
        Paper::ALL
            .into_iter()
            .find(|p| p.name() == name.to_ascii_lowercase())
    }
}

/// How a measured value is judged.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Check {
    /// At least `min`.
    AtLeast {
        /// The bound.
        min: f64,
    },
    /// At most `max`.
    AtMost {
        /// The bound.
        max: f64,
    },
    /// Within `[lo, hi]`.
    Between {
        /// Lower bound.
        lo: f64,
        /// Upper bound.
        hi: f64,
    },
    /// Within `rel` (a fraction) of `target`.
    Relative {
        /// The reference value.
        target: f64,
        /// Allowed relative deviation, e.g. 0.25.
        rel: f64,
    },
}

impl Check {
    /// True if `x` satisfies the check (NaN never does).
    pub fn holds(self, x: f64) -> bool {
        match self {
            Check::AtLeast { min } => x >= min,
            Check::AtMost { max } => x <= max,
            Check::Between { lo, hi } => x >= lo && x <= hi,
            Check::Relative { target, rel } => (x - target).abs() <= rel * target.abs(),
        }
    }

    /// How far outside the check `x` lies, as a fraction of the bound; zero inside.
    pub fn miss(self, x: f64) -> f64 {
        let frac = |d: f64, b: f64| if b == 0.0 { d.abs() } else { (d / b).abs() };
        match self {
            _ if self.holds(x) => 0.0,
            Check::AtLeast { min } => frac(min - x, min),
            Check::AtMost { max } => frac(x - max, max),
            Check::Between { lo, hi } => {
                if x < lo {
                    frac(lo - x, lo)
                } else {
                    frac(x - hi, hi)
                }
            }
            Check::Relative { target, rel } => {
                frac((x - target).abs() - rel * target.abs(), target)
            }
        }
    }

    /// The tolerance in words: `>= 0.95`, `0.8..1.25`, `±25% of 939583`.
    pub fn describe(self) -> String {
        match self {
            Check::AtLeast { min } => format!(">= {}", fmt_num(min)),
            Check::AtMost { max } => format!("<= {}", fmt_num(max)),
            Check::Between { lo, hi } => format!("{}..{}", fmt_num(lo), fmt_num(hi)),
            Check::Relative { target, rel } => {
                format!("±{}% of {}", fmt_num(rel * 100.0), fmt_num(target))
            }
        }
    }
}

/// A number for tables: four significant digits, no exponent for everyday magnitudes.
pub fn fmt_num(x: f64) -> String {
    if x == 0.0 || !x.is_finite() {
        return format!("{x}");
    }
    let mag = x.abs().log10().floor() as i32;
    let decimals = (3 - mag).clamp(0, 6) as usize;
    let s = format!("{x:.decimals$}");
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    }
}

/// Whether a claim restates a paper's result or is one of concord's own checks.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Kind {
    /// A result the paper states (quoted, with its section): counted as a reproduction.
    Paper,
    /// A check concord derived (a baseline, a design consequence, a feature demo): listed
    /// apart and never counted as a paper result.
    #[default]
    Check,
}

/// What a claim's measurements say about the paper's statement.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// At the paper's setting, the 95% interval of the measurement lies inside the tolerance.
    Reproduced,
    /// On a row whose setting deviates from the paper's (the deviation is named in the row):
    /// the interval lies inside the tolerance.
    ReproducedUnderDeviation,
    /// The interval straddles the tolerance's edge: the verdict flips with the seeds
    /// (inconclusive at this number of seeds).
    SeedDependent,
    /// The paper's own numbers contradict each other (the row says which), and concord's
    /// measurement lies outside the tolerance.
    PaperInconsistent,
    /// The interval lies outside the tolerance.
    NotReproduced,
}

impl Verdict {
    /// Every verdict, in report order.
    pub const ALL: [Verdict; 5] = [
        Verdict::Reproduced,
        Verdict::ReproducedUnderDeviation,
        Verdict::SeedDependent,
        Verdict::PaperInconsistent,
        Verdict::NotReproduced,
    ];

    /// The verdict in words, as tables print it.
    pub fn label(self) -> &'static str {
        match self {
            Verdict::Reproduced => "reproduced",
            Verdict::ReproducedUnderDeviation => "reproduced under a deviation",
            Verdict::SeedDependent => "seed-dependent",
            Verdict::PaperInconsistent => "paper inconsistent",
            Verdict::NotReproduced => "not reproduced",
        }
    }

    /// The verdict as `results.json` and expectation files spell it.
    pub fn key(self) -> &'static str {
        match self {
            Verdict::Reproduced => "reproduced",
            Verdict::ReproducedUnderDeviation => "reproduced_under_deviation",
            Verdict::SeedDependent => "seed_dependent",
            Verdict::PaperInconsistent => "paper_inconsistent",
            Verdict::NotReproduced => "not_reproduced",
        }
    }

    /// The verdict from its key.
    pub fn from_key(key: &str) -> Option<Verdict> {
        Verdict::ALL.into_iter().find(|v| v.key() == key)
    }
}

/// The setting of a row that is the paper's own.
pub const PAPER_SETTING: &str = "paper";

/// One claim: the paper's words, the tolerance fixed before the result was seen, the
/// measurement per seed, its mean and 95% confidence interval, and the verdict they give.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Claim {
    /// A stable key (`experiment/figure-metric` slug), what expectation files name.
    #[serde(default)]
    pub id: String,
    /// The experiment that produced it (`paper/name`).
    #[serde(default)]
    pub experiment: String,
    /// The paper.
    pub paper: Paper,
    /// A paper result or one of concord's checks.
    #[serde(default)]
    pub kind: Kind,
    /// The figure or table it reproduces, as the paper names it.
    pub figure: String,
    /// The paper's section the quote comes from (empty for a check).
    #[serde(default)]
    pub section: String,
    /// The paper's words (empty for a check).
    #[serde(default)]
    pub quote: String,
    /// What is measured, with its unit.
    pub metric: String,
    /// What the paper reports (a number or a statement).
    pub paper_value: String,
    /// `paper` when the row runs at the paper's setting, else the deviation in words.
    #[serde(default = "paper_setting")]
    pub setting: String,
    /// The numeric target the tolerance is built around, if the paper gives a number.
    #[serde(default)]
    pub target: Option<f64>,
    /// The check applied to the measurement (its 95% interval).
    pub check: Check,
    /// The check in words.
    pub tolerance: String,
    /// The seeds, one per value (a block's seeds for a value pooled over them); under the
    /// pooling rule, both blocks' seeds.
    #[serde(default)]
    pub seeds: Vec<u64>,
    /// The measurement of each seed (a single value when the figure is one over all seeds of a
    /// block); under the pooling rule, both blocks' values, the run's own block first. A
    /// measurement that failed is NaN, written as `null`.
    #[serde(default, deserialize_with = "nan_as_null::vec")]
    pub values: Vec<f64>,
    /// The measurement does not depend on the seed: nothing in the scenario draws from it.
    #[serde(default)]
    pub deterministic: bool,
    /// "Significantly": an interval that straddles the bound means no significant
    /// difference at 95%, so the claim is not reproduced rather than seed-dependent.
    #[serde(default)]
    pub significance: bool,
    /// The mean of `values` (what tables show); `null` when a measurement failed.
    #[serde(deserialize_with = "nan_as_null::one")]
    pub ours: f64,
    /// The 95% confidence interval of the mean (Student's t over the seeds); the mean twice
    /// when there is one value.
    #[serde(default, deserialize_with = "nan_as_null::pair")]
    pub ci95: [f64; 2],
    /// Which of the paper's numbers contradict each other, when they do.
    #[serde(default)]
    pub inconsistency: Option<String>,
    /// The verdict from where `ci95` lies (under the pooling rule, see [`Claim::pooled_with`],
    /// the interval of both seed blocks' values pooled).
    pub verdict: Verdict,
    /// Each seed block judged alone, the run's own first, then the replicate block
    /// (docs/analysis.md, "the pooling rule"); shown beside the pooled figure, never deciding
    /// the verdict. Empty for a deterministic claim or a run without replication.
    #[serde(default)]
    pub blocks: Vec<Block>,
    /// How far the mean lies outside the tolerance, as a fraction of the bound (0 inside).
    #[serde(deserialize_with = "nan_as_null::one")]
    pub miss: f64,
    /// How far the mean lies from the nearest edge of the tolerance, in the metric's unit and in
    /// half-widths of `ci95` (at least 1: the interval lies inside; see [`Margin`]): how
    /// borderline the verdict is. `null` when the mean is not a number.
    #[serde(default)]
    pub margin: Option<Margin>,
    /// The scenario file(s) behind it.
    pub scenario: String,
    /// The quick setting was used.
    pub quick: bool,
}

/// A claim's measurement on one seed block: its seeds, values, mean, 95% interval and the
/// verdict that block alone gives.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Block {
    /// The seeds of the block, one per value (or all of them for a value pooled over them).
    pub seeds: Vec<u64>,
    /// The measurement of each seed (NaN, written as `null`, when a measurement failed).
    #[serde(deserialize_with = "nan_as_null::vec")]
    pub values: Vec<f64>,
    /// The mean of `values`.
    #[serde(deserialize_with = "nan_as_null::one")]
    pub ours: f64,
    /// The 95% confidence interval of the mean (Student's t over the seeds).
    #[serde(deserialize_with = "nan_as_null::pair")]
    pub ci95: [f64; 2],
    /// The verdict of this block alone.
    pub verdict: Verdict,
}

fn paper_setting() -> String {
    PAPER_SETTING.to_string()
}

/// JSON has no NaN: serde_json writes it as `null`; these read `null` back as NaN.
mod nan_as_null {
    use serde::{Deserialize, Deserializer};

    fn value(v: Option<f64>) -> f64 {
        v.unwrap_or(f64::NAN)
    }

    pub fn one<'de, D: Deserializer<'de>>(d: D) -> Result<f64, D::Error> {
        Option::<f64>::deserialize(d).map(value)
    }

    pub fn vec<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<f64>, D::Error> {
        Vec::<Option<f64>>::deserialize(d).map(|v| v.into_iter().map(value).collect())
    }

    pub fn pair<'de, D: Deserializer<'de>>(d: D) -> Result<[f64; 2], D::Error> {
        <[Option<f64>; 2]>::deserialize(d).map(|[a, b]| [value(a), value(b)])
    }
}

/// Student's t quantile for a two-sided 95% interval with `df` degrees of freedom.
pub fn t95(df: usize) -> f64 {
    const TABLE: [f64; 30] = [
        12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160,
        2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056,
        2.052, 2.048, 2.045, 2.042,
    ];
    match df {
        0 => f64::INFINITY,
        1..=30 => TABLE[df - 1],
        31..=40 => 2.021,
        41..=60 => 2.000,
        61..=120 => 1.980,
        _ => 1.960,
    }
}

/// The mean of `x` and its 95% confidence interval (Student's t); NaN for no values, the
/// mean twice for one value.
pub fn mean_ci95(x: &[f64]) -> (f64, [f64; 2]) {
    let n = x.len();
    if n == 0 || x.iter().any(|v| !v.is_finite()) {
        return (f64::NAN, [f64::NAN, f64::NAN]);
    }
    let mean = x.iter().sum::<f64>() / n as f64;
    if n == 1 {
        return (mean, [mean, mean]);
    }
    let var = x.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n - 1) as f64;
    let half = t95(n - 1) * (var / n as f64).sqrt();
    (mean, [mean - half, mean + half])
}

impl Check {
    /// The accepted interval `[lo, hi]` (infinite on an open side).
    pub fn bounds(self) -> (f64, f64) {
        match self {
            Check::AtLeast { min } => (min, f64::INFINITY),
            Check::AtMost { max } => (f64::NEG_INFINITY, max),
            Check::Between { lo, hi } => (lo, hi),
            Check::Relative { target, rel } => {
                (target - rel * target.abs(), target + rel * target.abs())
            }
        }
    }
}

/// Where an interval lies against a tolerance.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Placement {
    /// Wholly inside.
    Inside,
    /// Wholly outside.
    Outside,
    /// Across an edge.
    Straddling,
}

/// Where `ci` lies against `check`; a NaN interval lies outside.
pub fn place(check: Check, ci: [f64; 2]) -> Placement {
    let (lo, hi) = check.bounds();
    if ci.iter().any(|v| v.is_nan()) {
        return Placement::Outside;
    }
    if ci[0] >= lo && ci[1] <= hi {
        Placement::Inside
    } else if ci[1] < lo || ci[0] > hi {
        Placement::Outside
    } else {
        Placement::Straddling
    }
}

/// A stable key from free text: lower-case ASCII letters and digits, runs of anything else
/// as one `-`.
pub fn slug(text: &str) -> String {
    let mut out = String::new();
    for c in text.chars() {
        if c.is_ascii_alphanumeric() {
            out.push(c.to_ascii_lowercase());
        } else if !out.ends_with('-') {
            out.push('-');
        }
    }
    out.trim_matches('-').to_string()
}

impl Claim {
    /// A claim on one measured value, judged by `check`; a concord check at the paper's
    /// setting until [`Claim::paper`] names the paper's words.
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        paper: Paper,
        figure: &str,
        metric: &str,
        paper_value: &str,
        ours: f64,
        check: Check,
        seed: u64,
        scenario: &str,
        quick: bool,
    ) -> Claim {
        Claim::mean_over_seeds(
            paper,
            figure,
            metric,
            paper_value,
            check,
            &[seed],
            &[ours],
            scenario,
            quick,
        )
    }

    /// A claim whose figure is the mean of `values`, the measurement of each of `seeds` in
    /// order, judged by `check` on its 95% interval; a concord check at the paper's setting
    /// until [`Claim::paper`] names the paper's words. As with [`Claim::over_seeds`], values
    /// that are not one per seed are kept as given and refused, naming the claim, by
    /// [`crate::replicate::check_seeds`].
    #[allow(clippy::too_many_arguments)]
    pub fn mean_over_seeds(
        paper: Paper,
        figure: &str,
        metric: &str,
        paper_value: &str,
        check: Check,
        seeds: &[u64],
        values: &[f64],
        scenario: &str,
        quick: bool,
    ) -> Claim {
        let mut c = Claim {
            id: String::new(),
            experiment: String::new(),
            paper,
            kind: Kind::Check,
            figure: figure.to_string(),
            section: String::new(),
            quote: String::new(),
            metric: metric.to_string(),
            paper_value: paper_value.to_string(),
            setting: paper_setting(),
            target: None,
            check,
            tolerance: check.describe(),
            seeds: seeds.to_vec(),
            values: values.to_vec(),
            deterministic: false,
            significance: false,
            ours: f64::NAN,
            ci95: [f64::NAN; 2],
            inconsistency: None,
            verdict: Verdict::NotReproduced,
            blocks: Vec::new(),
            miss: 0.0,
            margin: None,
            scenario: scenario.to_string(),
            quick,
        };
        c.judge();
        c
    }

    /// This claim restates the paper: its `section` and its words.
    pub fn paper(mut self, section: &str, quote: &str) -> Claim {
        self.kind = Kind::Paper;
        self.section = section.to_string();
        self.quote = quote.to_string();
        self
    }

    /// The numeric target the tolerance is built around.
    pub fn target(mut self, target: f64) -> Claim {
        self.target = Some(target);
        self
    }

    /// The row runs at a setting that deviates from the paper's, named here.
    pub fn deviation(mut self, what: &str) -> Claim {
        self.setting = what.to_string();
        self.judge();
        self
    }

    /// The measurement per seed: the claim's figure is their mean, judged by its 95% interval.
    pub fn over_seeds(mut self, seeds: &[u64], values: &[f64]) -> Claim {
        self.seeds = seeds.to_vec();
        self.values = values.to_vec();
        self.judge();
        self
    }

    /// The one value stands for all of `seeds` (a count or pooled figure over them).
    pub fn pooled_over(mut self, seeds: &[u64]) -> Claim {
        self.seeds = seeds.to_vec();
        self
    }

    /// Nothing in the scenario draws from the seed: one run is the whole distribution.
    pub fn deterministic(mut self) -> Claim {
        self.deterministic = true;
        self.judge();
        self
    }

    /// A "significantly" claim: an interval across the bound is no significant difference.
    pub fn significance(mut self) -> Claim {
        self.significance = true;
        self.judge();
        self
    }

    /// The paper's own numbers contradict each other, as `why` says.
    pub fn inconsistent(mut self, why: &str) -> Claim {
        self.inconsistency = Some(why.to_string());
        self.judge();
        self
    }

    /// Recomputes the mean, interval, miss and verdict from the values.
    fn judge(&mut self) {
        let (mean, ci) = if self.deterministic && !self.values.is_empty() {
            let m = self.values[0];
            (m, [m, m])
        } else {
            mean_ci95(&self.values)
        };
        self.ours = mean;
        self.ci95 = ci;
        self.miss = self.check.miss(mean);
        self.margin = Margin::of(self.check, mean, ci);
        let placement = place(self.check, ci);
        self.verdict = match placement {
            Placement::Inside if self.setting == PAPER_SETTING => Verdict::Reproduced,
            Placement::Inside => Verdict::ReproducedUnderDeviation,
            Placement::Straddling if !self.significance => Verdict::SeedDependent,
            _ if self.inconsistency.is_some() => Verdict::PaperInconsistent,
            _ => Verdict::NotReproduced,
        };
    }

    /// This claim's own seed block alone.
    fn block(&self) -> Block {
        Block {
            seeds: self.seeds.clone(),
            values: self.values.clone(),
            ours: self.ours,
            ci95: self.ci95,
            verdict: self.verdict,
        }
    }

    /// The pooling rule (docs/analysis.md, "the pooling rule"): `other` is this claim measured
    /// on the replicate seed block. The claim is judged once on both blocks' values pooled
    /// (their mean and 95% interval, Law and Kelton section 9.4.1); each block's own figures
    /// and verdict are kept in `blocks`. A deterministic claim has nothing to pool and is left
    /// as it is.
    pub fn pooled_with(mut self, other: &Claim) -> Claim {
        if self.deterministic {
            return self;
        }
        self.blocks = vec![self.block(), other.block()];
        self.seeds.extend_from_slice(&other.seeds);
        self.values.extend_from_slice(&other.values);
        self.judge();
        self
    }

    /// The verdict of this claim's own seed block alone (the pooled verdict when it was not
    /// pooled).
    pub fn block_verdict(&self) -> Verdict {
        self.blocks.first().map_or(self.verdict, |b| b.verdict)
    }

    /// True when the verdict is reproduced (at the paper's setting or under the row's
    /// deviation).
    pub fn holds(&self) -> bool {
        matches!(
            self.verdict,
            Verdict::Reproduced | Verdict::ReproducedUnderDeviation
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn checks_hold_inside_and_measure_the_miss_outside() {
        assert!(Check::AtLeast { min: 0.9 }.holds(0.9));
        assert!((Check::AtLeast { min: 0.9 }.miss(0.81) - 0.1).abs() < 1e-12);
        assert!(Check::Between { lo: 0.8, hi: 1.25 }.holds(1.0));
        assert!(!Check::Between { lo: 0.8, hi: 1.25 }.holds(f64::NAN));
        assert!(Check::Relative {
            target: 100.0,
            rel: 0.25
        }
        .holds(75.0));
        assert!(!Check::Relative {
            target: 100.0,
            rel: 0.25
        }
        .holds(74.0));
        assert_eq!(
            Check::Relative {
                target: 100.0,
                rel: 0.25
            }
            .describe(),
            "±25% of 100"
        );
    }

    #[test]
    fn papers_round_trip_through_their_names() {
        for p in Paper::ALL {
            assert_eq!(Paper::from_name(p.name()), Some(p));
        }
        assert_eq!(Paper::from_name("tcp"), None);
    }

    #[test]
    fn the_interval_uses_students_t_over_the_seeds() {
        let (m, ci) = mean_ci95(&[1.0, 2.0, 3.0, 4.0, 5.0]);
        assert_eq!(m, 3.0);
        // sd = sqrt(2.5), t(4) = 2.776, half = 2.776 * sqrt(2.5 / 5) = 1.96292...
        let half = 2.776 * 0.5f64.sqrt();
        assert!((ci[0] - (3.0 - half)).abs() < 1e-12 && (ci[1] - (3.0 + half)).abs() < 1e-12);
        assert_eq!(mean_ci95(&[7.0]), (7.0, [7.0, 7.0]));
        assert!(mean_ci95(&[]).0.is_nan());
        assert!(mean_ci95(&[1.0, f64::NAN]).1[0].is_nan());
        assert_eq!(t95(19), 2.093);
    }

    /// A concord check on `values` over `seeds`.
    fn fig_7(check: Check, seeds: &[u64], values: &[f64]) -> Claim {
        Claim::mean_over_seeds(
            Paper::Cp,
            "Fig. 7",
            "ratio",
            "about 3",
            check,
            seeds,
            values,
            "s.toml",
            true,
        )
    }

    /// [`fig_7`] built the way it was before [`Claim::mean_over_seeds`]: a placeholder value
    /// on the first seed, then [`Claim::over_seeds`].
    fn fig_7_from_a_placeholder(check: Check, seeds: &[u64], values: &[f64]) -> Claim {
        Claim::new(
            Paper::Cp,
            "Fig. 7",
            "ratio",
            "about 3",
            f64::NAN,
            check,
            seeds[0],
            "s.toml",
            true,
        )
        .over_seeds(seeds, values)
    }

    #[test]
    fn a_claim_over_seeds_is_judged_on_the_mean_of_its_values() {
        let check = Check::Between { lo: 0.5, hi: 5.5 };
        let seeds = [11, 12, 13, 14, 15];
        let values = [1.0, 2.0, 3.0, 4.0, 5.0];
        let c = fig_7(check, &seeds, &values);
        assert_eq!(c.seeds, vec![11, 12, 13, 14, 15]);
        assert_eq!(c.values, vec![1.0, 2.0, 3.0, 4.0, 5.0]);
        assert_eq!(c.ours, 3.0);
        // Variance 10 / 4 = 2.5, t(4) = 2.776: half-width 2.776 * sqrt(2.5 / 5) = 1.962928.
        let half = 2.776 * 0.5f64.sqrt();
        assert_eq!(c.ci95, [3.0 - half, 3.0 + half]);
        assert!((c.ci95[0] - 1.037072).abs() < 1e-6, "{:?}", c.ci95);
        assert_eq!(
            c.verdict,
            Verdict::Reproduced,
            "[1.0371, 4.9629] lies in 0.5..5.5"
        );
        assert_eq!(c.miss, 0.0);
        assert_eq!(c.tolerance, "0.5..5.5");
        assert_eq!(c.setting, PAPER_SETTING);
        assert_eq!(c.kind, Kind::Check, "no quote: a concord check");
        assert!(!c.deterministic && c.blocks.is_empty());
        assert_eq!(c, fig_7_from_a_placeholder(check, &seeds, &values));
    }

    #[test]
    fn a_claim_over_seeds_without_one_value_per_seed_is_refused() {
        let check = Check::AtMost { max: 1.0 };
        let seeds = [1, 2, 3, 4, 5];
        let four = [0.7, 0.8, 0.7, 0.8];
        let c = fig_7(check, &seeds, &four);
        assert_eq!((c.seeds.len(), c.values.len()), (5, 4), "kept as given");
        assert_eq!(c.ours, 0.75);
        assert_eq!(c, fig_7_from_a_placeholder(check, &seeds, &four));
        assert_eq!(
            crate::replicate::check_seeds(&c),
            Err("claim `Fig. 7 ratio` draws from the seed but carries 4 values on seeds [1, 2, 3, 4, 5] in a block; a stochastic claim needs one value per seed over at least 5 seeds: measure it over `Ctx::seeds`, or mark it `.deterministic()` if nothing in its scenario draws from the seed".to_string())
        );
        let five = [0.7, 0.8, 0.7, 0.8, 0.75];
        assert_eq!(
            crate::replicate::check_seeds(&fig_7(check, &seeds, &five)),
            Ok(())
        );
    }

    fn ratio_claim(values: &[f64]) -> Claim {
        let seeds: Vec<u64> = (1..=values.len() as u64).collect();
        Claim::mean_over_seeds(
            Paper::Cm,
            "Fig. 9",
            "ratio",
            "0.77",
            Check::Relative {
                target: 0.77,
                rel: 0.15,
            },
            &seeds,
            values,
            "s.toml",
            true,
        )
        .paper("4.1", "about 0.77")
    }

    #[test]
    fn the_verdict_comes_from_where_the_interval_lies() {
        // Tolerance 0.6545..0.8855.
        assert_eq!(
            ratio_claim(&[0.76, 0.78, 0.77, 0.77, 0.77]).verdict,
            Verdict::Reproduced
        );
        assert_eq!(
            ratio_claim(&[0.40, 0.42, 0.41, 0.41, 0.41]).verdict,
            Verdict::NotReproduced
        );
        assert_eq!(
            ratio_claim(&[0.5, 0.9, 0.7, 0.6, 0.8]).verdict,
            Verdict::SeedDependent,
            "mean 0.7 inside, interval 0.50..0.90 across both edges"
        );
        let dev = ratio_claim(&[0.77; 5]).deviation("RED queue instead of DropTail");
        assert_eq!(dev.verdict, Verdict::ReproducedUnderDeviation);
        assert!(dev.holds());
        let inc = ratio_claim(&[0.40; 5]).inconsistent("Table 1 gives 0.5");
        assert_eq!(inc.verdict, Verdict::PaperInconsistent);
        let sig = ratio_claim(&[0.5, 0.9, 0.7, 0.6, 0.8]).significance();
        assert_eq!(sig.verdict, Verdict::NotReproduced);
        assert_eq!(sig.kind, Kind::Paper);
    }

    #[test]
    fn two_seed_blocks_are_judged_on_their_pooled_values() {
        // Tolerance 0.6545..0.8855; t(9) = 2.262 over the ten pooled values.
        let a = ratio_claim(&[0.76, 0.78, 0.77, 0.77, 0.77]);
        // Alone, 0.656 [0.608, 0.704]: across the edge 0.6545.
        let edge = ratio_claim(&[0.60, 0.70, 0.66, 0.64, 0.68]);
        assert_eq!(edge.verdict, Verdict::SeedDependent);
        let mut edge_block = edge.clone();
        edge_block.seeds = vec![1001, 1002, 1003, 1004, 1005];
        let pooled = a.clone().pooled_with(&edge_block);
        // Mean 0.713, sd 0.06567, half-width 2.262 * 0.06567 / sqrt(10) = 0.04697.
        assert!((pooled.ours - 0.713).abs() < 1e-12, "{}", pooled.ours);
        assert!(
            (pooled.ci95[0] - 0.666149).abs() < 1e-6,
            "{:?}",
            pooled.ci95
        );
        assert!(
            (pooled.ci95[1] - 0.759851).abs() < 1e-6,
            "{:?}",
            pooled.ci95
        );
        assert_eq!(pooled.verdict, Verdict::Reproduced);
        assert_eq!(
            pooled.seeds,
            vec![1, 2, 3, 4, 5, 1001, 1002, 1003, 1004, 1005]
        );
        assert_eq!(pooled.values.len(), 10);
        assert_eq!(pooled.blocks.len(), 2, "each block is kept beside the pool");
        assert_eq!(pooled.blocks[0].verdict, Verdict::Reproduced);
        assert_eq!(pooled.blocks[0].ours, a.ours);
        assert_eq!(pooled.blocks[1].verdict, Verdict::SeedDependent);
        assert_eq!(pooled.blocks[1].seeds, vec![1001, 1002, 1003, 1004, 1005]);
        assert_eq!(pooled.block_verdict(), Verdict::Reproduced);
        // Reproduced on one block, not on the other: pooled 0.59 [0.454, 0.726], across the
        // edge.
        let out = ratio_claim(&[0.40, 0.42, 0.41, 0.41, 0.41]);
        assert_eq!(out.verdict, Verdict::NotReproduced);
        let split = a.pooled_with(&out);
        assert_eq!(split.verdict, Verdict::SeedDependent);
        assert!((split.ci95[0] - 0.454196).abs() < 1e-6, "{:?}", split.ci95);
    }

    #[test]
    fn a_claim_carries_its_margin_to_the_nearest_edge() {
        // Tolerance 0.6545..0.8855. Ten values pooled as in the test above: mean 0.713,
        // interval [0.666149, 0.759851], half-width 0.046851; 0.0585 above 0.6545.
        let a = ratio_claim(&[0.76, 0.78, 0.77, 0.77, 0.77]);
        let b = ratio_claim(&[0.60, 0.70, 0.66, 0.64, 0.68]);
        let pooled = a.pooled_with(&b);
        let m = pooled.margin.expect("a finite mean has a margin");
        assert!((m.edge - 0.6545).abs() < 1e-12, "{m:?}");
        assert!((m.distance - 0.0585).abs() < 1e-12, "{m:?}");
        let k = m.half_widths.expect("the interval has a width");
        assert!((k - 0.0585 / 0.046851).abs() < 1e-4, "{k}");
        assert!(k >= 1.0, "reproduced: 1.249 half-widths inside");
        // One value: no interval, so no margin in half-widths; the distance stays.
        let d = table_1_check().margin.expect("finite");
        assert!((d.edge - 0.0648).abs() < 1e-12 && (d.distance - 0.0062).abs() < 1e-12);
        assert_eq!(d.half_widths, None);
        // A failed measurement has none.
        assert_eq!(ratio_claim(&[0.7, f64::NAN, 0.8, 0.7, 0.7]).margin, None);
    }

    #[test]
    fn a_pooled_significance_claim_across_the_bound_is_not_reproduced() {
        let a = ratio_claim(&[0.76, 0.78, 0.77, 0.77, 0.77]).significance();
        let out = ratio_claim(&[0.40, 0.42, 0.41, 0.41, 0.41]).significance();
        assert_eq!(a.pooled_with(&out).verdict, Verdict::NotReproduced);
    }

    /// A deterministic concord check (no quote) whose one value 0.071 lies within 10% of 0.072.
    fn table_1_check() -> Claim {
        Claim::new(
            Paper::Mccp,
            "Table 1",
            "u",
            "7.2%",
            0.071,
            Check::Relative {
                target: 0.072,
                rel: 0.1,
            },
            1,
            "s.toml",
            true,
        )
        .deterministic()
    }

    #[test]
    fn a_deterministic_claim_is_not_pooled() {
        let c = table_1_check();
        let other = c.clone();
        let r = c.pooled_with(&other);
        assert_eq!(r.verdict, Verdict::Reproduced);
        assert!(r.blocks.is_empty());
        assert_eq!(r.values, vec![0.071]);
    }

    #[test]
    fn a_deterministic_claim_is_judged_on_its_one_value() {
        let c = table_1_check();
        assert_eq!(c.verdict, Verdict::Reproduced);
        assert_eq!(c.ci95, [0.071, 0.071]);
        assert_eq!(c.kind, Kind::Check, "no quote: a concord check");
    }

    #[test]
    fn a_failed_measurement_round_trips_through_json_as_null() {
        let c = ratio_claim(&[0.7, f64::NAN, 0.8, 0.7, 0.7]);
        assert_eq!(c.verdict, Verdict::NotReproduced, "NaN is never inside");
        let json = serde_json::to_string(&c).expect("serialises");
        assert!(json.contains("\"ours\":null"), "{json}");
        let back: Claim = serde_json::from_str(&json).expect("reads back");
        assert!(back.ours.is_nan() && back.values[1].is_nan() && back.ci95[0].is_nan());
        assert_eq!(back.values[0], 0.7);
    }

    #[test]
    fn verdicts_round_trip_through_their_keys_and_slugs_are_stable() {
        for v in Verdict::ALL {
            assert_eq!(Verdict::from_key(v.key()), Some(v));
        }
        assert_eq!(
            slug("Fig. 3a (2 Mbit/s) — TCP/CM"),
            "fig-3a-2-mbit-s-tcp-cm"
        );
    }
}
