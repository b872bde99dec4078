//! Sweeps: one scenario run over a grid of overrides times a list of seeds.
//!
//! A sweep file (TOML) names a base scenario, fixed overrides, the keys to vary with their
//! values (a list, or a numeric range), and the seeds:
//!
//! ```toml
//! scenario = "../basic/dumbbell-4-red.toml"   # relative to the sweep file
//! seeds = { from = 1, to = 5 }                 # or a list: [1, 2, 3]
//!
//! [set]                                        # applied to every run
//! duration = "20s"
//!
//! [[vary]]
//! key = "topology.bottleneck.rate"
//! values = ["5Mbps", "10Mbps", "20Mbps"]
//!
//! [[vary]]
//! key = "flow[0].count"
//! range = { from = 1, to = 4, step = 1 }       # inclusive
//! ```
//!
//! Run groups are the grid's points in order, the last key varying fastest; each group runs
//! once per seed. Run `i` is point `i / seeds` with seed `seeds[i % seeds]`, so a run is a
//! function of the sweep and its index alone: any executor gives the same [`RunRecord`]s.

use crate::run::{run_source, RunError};
use concord_sim::scenario::{OverrideValue, ScenarioError, ScenarioSource};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// The keys of a sweep file.
const SWEEP_KEYS: [&str; 4] = ["scenario", "seeds", "set", "vary"];

/// Why a sweep file was refused.
#[derive(Debug, thiserror::Error)]
#[error("{path}: {message}; fix: {fix}")]
pub struct SweepError {
    /// The sweep file.
    pub path: String,
    /// What is wrong.
    pub message: String,
    /// How to put it right.
    pub fix: String,
}

/// One varied key and its values.
#[derive(Clone, Debug, PartialEq)]
pub struct Vary {
    /// The dotted key path.
    pub key: String,
    /// Its values, in order.
    pub values: Vec<OverrideValue>,
}

/// A sweep: the base scenario, fixed overrides, the varied keys and the seeds.
#[derive(Clone, Debug)]
pub struct Sweep {
    /// The sweep file's text, as read.
    pub text: String,
    /// The sweep file.
    pub path: PathBuf,
    /// The base scenario file.
    pub scenario_path: PathBuf,
    /// The base scenario's text, as read when the sweep was loaded.
    pub scenario_text: String,
    /// Overrides applied to every run, in file order.
    pub fixed: Vec<(String, OverrideValue)>,
    /// The varied keys, in file order.
    pub vary: Vec<Vary>,
    /// The seeds of every run group.
    pub seeds: Vec<u64>,
}

/// One run of a sweep, as text that travels between processes unchanged.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct RunRecord {
    /// The run's index in the sweep.
    pub run: usize,
    /// Its seed.
    pub seed: u64,
    /// `flows.csv`.
    pub flows_csv: String,
    /// `summary.json`.
    pub summary_json: String,
    /// `meta.json`.
    pub meta_json: String,
}

impl Sweep {
    /// Reads the sweep file at `path` and the scenario it names.
    pub fn load(path: &Path) -> Result<Sweep, SweepError> {
        let text = std::fs::read_to_string(path).map_err(|e| SweepError {
            path: path.display().to_string(),
            message: format!("cannot read the sweep file: {e}"),
            fix: "check that the file exists and is readable UTF-8 text".into(),
        })?;
        Sweep::parse(&text, path, None)
    }

    /// Reads sweep `text` (from `path`, against which `scenario` is resolved). With
    /// `scenario_text`, that text is used instead of reading the scenario file (a worker
    /// rebuilding the sweep it was sent).
    pub fn parse(
        text: &str,
        path: &Path,
        scenario_text: Option<&str>,
    ) -> Result<Sweep, SweepError> {
        let err = |message: String, fix: &str| SweepError {
            path: path.display().to_string(),
            message,
            fix: fix.to_string(),
        };
        let doc: toml::Table = toml::from_str(text).map_err(|e| {
            err(
                format!("invalid TOML: {}", e.message().trim()),
                "check the TOML syntax: `key = value`, strings in double quotes, [[vary]] sections",
            )
        })?;
        if let Some(k) = doc.keys().find(|k| !SWEEP_KEYS.contains(&k.as_str())) {
            return Err(err(
                format!("unknown key `{k}` in the sweep file"),
                "the keys of a sweep file are: scenario, seeds, set, vary",
            ));
        }
        let scenario = match doc.get("scenario") {
            Some(toml::Value::String(s)) => s.clone(),
            Some(_) => {
                return Err(err(
                    "`scenario` must be a string".into(),
                    "write `scenario = \"path/to/scenario.toml\"`",
                ))
            }
            None => {
                return Err(err(
                    "the sweep file has no `scenario`".into(),
                    "add `scenario = \"path/to/scenario.toml\"`, relative to the sweep file",
                ))
            }
        };
        let scenario_path = path
            .parent()
            .unwrap_or_else(|| Path::new(""))
            .join(&scenario);
        let scenario_text = match scenario_text {
            Some(t) => t.to_string(),
            None => std::fs::read_to_string(&scenario_path).map_err(|e| {
                err(
                    format!("cannot read the scenario {}: {e}", scenario_path.display()),
                    "`scenario` is relative to the sweep file; check the path",
                )
            })?,
        };
        let seeds = read_seeds(doc.get("seeds")).map_err(|(m, f)| err(m, &f))?;
        let fixed = match doc.get("set") {
            None => Vec::new(),
            Some(toml::Value::Table(t)) => flatten("", t).map_err(|(m, f)| err(m, &f))?,
            Some(_) => {
                return Err(err(
                    "`set` must be a table of key = value".into(),
                    "write a [set] section with `key = value` lines",
                ))
            }
        };
        let vary = match doc.get("vary") {
            None => Vec::new(),
            Some(toml::Value::Array(items)) => items
                .iter()
                .enumerate()
                .map(|(i, v)| read_vary(i + 1, v))
                .collect::<Result<Vec<_>, _>>()
                .map_err(|(m, f)| err(m, &f))?,
            Some(_) => {
                return Err(err(
                    "`vary` must be an array of tables".into(),
                    "write each varied key as its own [[vary]] section",
                ))
            }
        };
        let sweep = Sweep {
            text: text.to_string(),
            path: path.to_path_buf(),
            scenario_path,
            scenario_text,
            fixed,
            vary,
            seeds,
        };
        // Every value must be valid: check each one on its own over the base, now, rather
        // than failing mid-sweep.
        sweep
            .source_with(&[])
            .and_then(|s| s.build())
            .map_err(|e| err(e.to_string(), "correct the scenario or the [set] section"))?;
        for v in &sweep.vary {
            for value in &v.values {
                let mut s = sweep
                    .source_with(&[])
                    .map_err(|e| err(e.to_string(), "correct the scenario"))?;
                s.set(&v.key, value.clone())
                    .and_then(|s| s.build())
                    .map_err(|e| err(e.to_string(), "correct this [[vary]] value"))?;
            }
        }
        Ok(sweep)
    }

    /// Run groups (grid points).
    pub fn groups(&self) -> usize {
        self.vary.iter().map(|v| v.values.len()).product()
    }

    /// Runs: groups times seeds.
    pub fn len(&self) -> usize {
        self.groups() * self.seeds.len()
    }

    /// True for a sweep with no runs.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The varied values of grid point `group`, one per [`Sweep::vary`] entry.
    pub fn point(&self, group: usize) -> Vec<&OverrideValue> {
        let mut rest = group;
        let mut values = vec![None; self.vary.len()];
        for (i, v) in self.vary.iter().enumerate().rev() {
            let n = v.values.len().max(1);
            values[i] = v.values.get(rest % n);
            rest /= n;
        }
        values.into_iter().flatten().collect()
    }

    /// The seed of run `run`.
    pub fn seed(&self, run: usize) -> u64 {
        self.seeds[run % self.seeds.len()]
    }

    /// The base scenario with the fixed overrides, then `extra`.
    fn source_with(
        &self,
        extra: &[(&str, OverrideValue)],
    ) -> Result<ScenarioSource, ScenarioError> {
        let mut s =
            ScenarioSource::from_text(self.scenario_text.clone(), Some(&self.scenario_path));
        for (k, v) in &self.fixed {
            s.set(k, v.clone())?;
        }
        for (k, v) in extra {
            s.set(k, v.clone())?;
        }
        Ok(s)
    }

    /// The scenario of run `run`: the base, the fixed overrides, the grid point's values and
    /// the seed.
    pub fn source(&self, run: usize) -> Result<ScenarioSource, ScenarioError> {
        let group = run / self.seeds.len().max(1);
        let mut extra: Vec<(&str, OverrideValue)> = self
            .vary
            .iter()
            .zip(self.point(group))
            .map(|(v, value)| (v.key.as_str(), value.clone()))
            .collect();
        extra.push(("seed", OverrideValue::Integer(self.seed(run) as i64)));
        self.source_with(&extra)
    }

    /// Runs run `run` in this thread.
    pub fn run(&self, run: usize) -> Result<RunRecord, RunError> {
        let source = self.source(run)?;
        let command_line = vec![
            "concord".to_string(),
            "sweep".to_string(),
            self.path.display().to_string(),
            format!("#run={run}"),
        ];
        let out = run_source(&source, None, command_line)?;
        Ok(RunRecord {
            run,
            seed: out.meta.seed,
            flows_csv: out.table("flows").unwrap_or_default().to_string(),
            summary_json: out.summary_json(),
            meta_json: serde_json::to_string(&out.meta).unwrap_or_default(),
        })
    }
}

/// `seeds = [1, 2]` or `seeds = { from = 1, to = 5 }`; absent: `[1]`.
fn read_seeds(v: Option<&toml::Value>) -> Result<Vec<u64>, (String, String)> {
    let fix = "write `seeds = [1, 2, 3]` or `seeds = { from = 1, to = 20 }`".to_string();
    let seed = |v: &toml::Value| match v {
        toml::Value::Integer(i) if *i >= 0 => Ok(*i as u64),
        _ => Err((
            "a seed must be a whole number from 0".to_string(),
            fix.clone(),
        )),
    };
    let seeds = match v {
        None => vec![1],
        Some(toml::Value::Array(a)) => a.iter().map(seed).collect::<Result<_, _>>()?,
        Some(toml::Value::Table(t)) => {
            let (Some(from), Some(to)) = (t.get("from"), t.get("to")) else {
                return Err(("`seeds` as a table needs `from` and `to`".into(), fix));
            };
            let (from, to) = (seed(from)?, seed(to)?);
            if to < from {
                return Err((format!("`seeds` runs from {from} down to {to}"), fix));
            }
            (from..=to).collect()
        }
        Some(_) => return Err(("`seeds` must be a list or a range".into(), fix)),
    };
    if seeds.is_empty() {
        return Err(("`seeds` is empty".into(), fix));
    }
    Ok(seeds)
}

/// A `[[vary]]` entry: `key`, and `values` or `range`.
fn read_vary(n: usize, v: &toml::Value) -> Result<Vary, (String, String)> {
    let what = format!("[[vary]] #{n}");
    let toml::Value::Table(t) = v else {
        return Err((
            format!("{what} must be a table"),
            "write it as a [[vary]] section".into(),
        ));
    };
    if let Some(k) = t
        .keys()
        .find(|k| !["key", "values", "range"].contains(&k.as_str()))
    {
        return Err((
            format!("unknown key `{k}` in {what}"),
            "the keys of [[vary]] are: key, values, range".into(),
        ));
    }
    let Some(toml::Value::String(key)) = t.get("key") else {
        return Err((
            format!("{what} has no string `key`"),
            "add `key = \"topology.bottleneck.rate\"` (a dotted scenario key)".into(),
        ));
    };
    let values = match (t.get("values"), t.get("range")) {
        (Some(toml::Value::Array(a)), None) => a
            .iter()
            .map(|x| {
                from_toml(x).ok_or_else(|| {
                    (
                        format!("{what}: a value must be a boolean, number, string or array"),
                        "remove tables and dates from `values`".to_string(),
                    )
                })
            })
            .collect::<Result<Vec<_>, _>>()?,
        (None, Some(toml::Value::Table(r))) => range(r).map_err(|m| {
            (
                format!("{what}: {m}"),
                "write `range = { from = 1, to = 4, step = 1 }` (inclusive; integers or floats)"
                    .to_string(),
            )
        })?,
        _ => {
            return Err((
                format!("{what} needs either `values` (a list) or `range` (a table)"),
                "write `values = [\"5Mbps\", \"10Mbps\"]` or `range = { from = 1, to = 4 }`".into(),
            ))
        }
    };
    if values.is_empty() {
        return Err((
            format!("{what} has no values"),
            "give at least one value".into(),
        ));
    }
    Ok(Vary {
        key: key.clone(),
        values,
    })
}

/// `{ from, to, step }` (inclusive, step 1 by default): integers if all three are, else floats
/// computed as `from + k * step` (no accumulated rounding).
fn range(r: &toml::Table) -> Result<Vec<OverrideValue>, String> {
    if let Some(k) = r
        .keys()
        .find(|k| !["from", "to", "step"].contains(&k.as_str()))
    {
        return Err(format!("unknown key `{k}` in `range`"));
    }
    let get = |k: &str| r.get(k);
    match (get("from"), get("to"), get("step")) {
        (Some(toml::Value::Integer(a)), Some(toml::Value::Integer(b)), s) => {
            let step = match s {
                None => 1,
                Some(toml::Value::Integer(s)) if *s > 0 => *s,
                _ => return Err("`step` must be a positive integer".into()),
            };
            if b < a {
                return Err(format!("`range` runs from {a} down to {b}"));
            }
            Ok((*a..=*b)
                .step_by(step as usize)
                .map(OverrideValue::Integer)
                .collect())
        }
        (Some(a), Some(b), s) => {
            let num = |v: &toml::Value| match v {
                toml::Value::Integer(i) => Some(*i as f64),
                toml::Value::Float(f) => Some(*f),
                _ => None,
            };
            let (Some(a), Some(b)) = (num(a), num(b)) else {
                return Err("`from` and `to` must be numbers".into());
            };
            let step = match s.map(num) {
                None => 1.0,
                Some(Some(s)) if s > 0.0 => s,
                _ => return Err("`step` must be a positive number".into()),
            };
            if b < a {
                return Err(format!("`range` runs from {a} down to {b}"));
            }
            let n = ((b - a) / step + 1e-9).floor() as usize;
            if n > 100_000 {
                return Err(format!("`range` has {} values", n + 1));
            }
            Ok((0..=n)
                .map(|k| OverrideValue::Float(a + k as f64 * step))
                .collect())
        }
        _ => Err("`range` needs `from` and `to`".into()),
    }
}

/// A TOML value as an override value (`None` for tables and dates).
fn from_toml(v: &toml::Value) -> Option<OverrideValue> {
    Some(match v {
        toml::Value::String(s) => OverrideValue::String(s.clone()),
        toml::Value::Integer(i) => OverrideValue::Integer(*i),
        toml::Value::Float(f) => OverrideValue::Float(*f),
        toml::Value::Boolean(b) => OverrideValue::Bool(*b),
        toml::Value::Array(a) => {
            OverrideValue::Array(a.iter().map(from_toml).collect::<Option<Vec<_>>>()?)
        }
        toml::Value::Table(_) | toml::Value::Datetime(_) => return None,
    })
}

/// `[set]`'s keys as dotted paths: `[set] topology.bottleneck.rate = "x"` (a nested table in
/// TOML) becomes `("topology.bottleneck.rate", "x")`; a quoted key `"flow[0].count" = 2` is
/// kept as written.
fn flatten(
    prefix: &str,
    t: &toml::Table,
) -> Result<Vec<(String, OverrideValue)>, (String, String)> {
    let mut out = Vec::new();
    for (k, v) in t {
        let key = if prefix.is_empty() {
            k.clone()
        } else {
            format!("{prefix}.{k}")
        };
        match v {
            toml::Value::Table(inner) => out.extend(flatten(&key, inner)?),
            other => out.push((
                key.clone(),
                from_toml(other).ok_or_else(|| {
                    (
                        format!("[set] `{key}` is a date"),
                        "give a boolean, number, string or array".to_string(),
                    )
                })?,
            )),
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    const SCENARIO: &str = r#"duration = "1s"
[topology]
kind = "dumbbell"
pairs = 2
bottleneck = { rate = "10Mbps", delay = "10ms" }
access = { rate = "1Gbps", delay = "1ms" }
[[flow]]
name = "f{i}"
kind = "tcp"
from = "s{i}"
to = "d{i}"
count = 2
"#;

    fn sweep(text: &str) -> Result<Sweep, SweepError> {
        Sweep::parse(text, Path::new("dir/sweep.toml"), Some(SCENARIO))
    }

    const GRID: &str = r#"scenario = "base.toml"
seeds = { from = 1, to = 3 }
[set]
duration = "2s"
[[vary]]
key = "topology.bottleneck.rate"
values = ["5Mbps", "10Mbps"]
[[vary]]
key = "flow[0].count"
range = { from = 1, to = 2 }
"#;

    #[test]
    fn the_grid_varies_the_last_key_fastest_and_repeats_each_point_per_seed() {
        let s = sweep(GRID).expect("valid");
        assert_eq!(s.scenario_path, Path::new("dir/base.toml"));
        assert_eq!((s.groups(), s.len()), (4, 12));
        let five = OverrideValue::String("5Mbps".into());
        let ten = OverrideValue::String("10Mbps".into());
        assert_eq!(s.point(0), [&five, &OverrideValue::Integer(1)]);
        assert_eq!(s.point(1), [&five, &OverrideValue::Integer(2)]);
        assert_eq!(s.point(2), [&ten, &OverrideValue::Integer(1)]);
        assert_eq!(s.point(3), [&ten, &OverrideValue::Integer(2)]);
        assert_eq!((0..4).map(|r| s.seed(r)).collect::<Vec<_>>(), [1, 2, 3, 1]);
        let run7 = s.source(7).expect("valid").build().expect("valid");
        // Run 7: group 2 (10 Mbps, 1 flow), seed 2.
        assert_eq!(run7.seed, 2);
        assert_eq!(run7.flows.len(), 1);
        assert_eq!(run7.duration.as_secs_f64(), 2.0);
    }

    #[test]
    fn float_ranges_are_computed_without_accumulated_rounding() {
        let mut t = toml::Table::new();
        t.insert("from".into(), toml::Value::Float(0.1));
        t.insert("to".into(), toml::Value::Float(0.3));
        t.insert("step".into(), toml::Value::Float(0.1));
        assert_eq!(
            range(&t).expect("valid"),
            [
                OverrideValue::Float(0.1),
                OverrideValue::Float(0.1 + 0.1),
                OverrideValue::Float(0.1 + 2.0 * 0.1)
            ]
        );
    }

    #[test]
    fn a_run_is_the_same_record_whenever_it_runs() {
        let s = sweep(GRID).expect("valid");
        let a = s.run(5).expect("runs");
        let b = s.run(5).expect("runs");
        assert_eq!(a, b);
        assert_eq!(a.run, 5);
        assert_eq!(a.seed, 3);
        assert!(
            a.meta_json.contains("\"flow[0].count = 2\""),
            "{}",
            a.meta_json
        );
    }

    #[test]
    fn bad_sweep_files_name_the_problem_and_the_fix() {
        for (text, expected) in [
            ("seeds = [1]", "has no `scenario`"),
            ("scenario = \"b.toml\"\nseed = [1]", "unknown key `seed`"),
            ("scenario = \"b.toml\"\nseeds = []", "`seeds` is empty"),
            (
                "scenario = \"b.toml\"\n[[vary]]\nkey = \"topology.bottleneck.rate\"\nvalues = [\"5Mbs\"]",
                "override `topology.bottleneck.rate = \"5Mbs\"`",
            ),
            (
                "scenario = \"b.toml\"\n[[vary]]\nkey = \"seed\"\nrange = { from = 3, to = 1 }",
                "from 3 down to 1",
            ),
            ("scenario = \"b.toml\"\n[[vary]]\nkey = \"seed\"", "needs either `values`"),
        ] {
            let e = sweep(text).expect_err(text).to_string();
            assert!(e.starts_with("dir/sweep.toml: "), "{e}");
            assert!(e.contains(expected), "{text}: {e}");
            assert!(e.contains("; fix: "), "{e}");
        }
    }
}
