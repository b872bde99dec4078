//! A claim: one number of a paper's figure or table, what concord measures for it, and whether
//! the two agree within the stated tolerance.

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

/// One checked claim.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Claim {
    /// The paper.
    pub paper: Paper,
    /// The figure or table it reproduces, as the paper names it.
    pub figure: String,
    /// What is measured, with its unit.
    pub metric: String,
    /// What the paper reports (a number or a statement).
    pub paper_value: String,
    /// What concord measured.
    pub ours: f64,
    /// The check applied to `ours`.
    pub check: Check,
    /// The check in words.
    pub tolerance: String,
    /// Whether `ours` passes.
    pub pass: bool,
    /// How far outside the tolerance, as a fraction of the bound (0 when passing).
    pub miss: f64,
    /// The seed of the run(s).
    pub seed: u64,
    /// The scenario file(s) behind it.
    pub scenario: String,
    /// The quick setting was used.
    pub quick: bool,
}

impl Claim {
    /// A claim judged by `check`.
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
        Claim {
            paper,
            figure: figure.to_string(),
            metric: metric.to_string(),
            paper_value: paper_value.to_string(),
            ours,
            check,
            tolerance: check.describe(),
            pass: check.holds(ours),
            miss: check.miss(ours),
            seed,
            scenario: scenario.to_string(),
            quick,
        }
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
}
