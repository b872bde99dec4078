//! Experiments as units of work another process can run: a [`Unit`] names one experiment and
//! the setting it runs at, as bytes; [`run_unit`] runs it anywhere concord is linked (a Dask
//! worker, through the Python extension) and returns its outcome as bytes; [`decode_outcome`]
//! turns those back into what [`crate::runner::run_watched`] returns for the experiment.
//!
//! An experiment is a function of its id and its [`Ctx`] alone, and its outcome does not
//! depend on the threads it is given, so the outcome a unit brings back is the one the local
//! run computes: a report built from units is byte-identical to the local one.

use crate::claim::Claim;
use crate::runner::{registry, run_watched, Ctx, Experiment, Figure, Outcome, ReproError, Work};
use serde::{Deserialize, Serialize};

/// One experiment to run, as a worker needs to know it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Unit {
    /// The experiment's id (`paper/name`), as [`registry`] lists it.
    pub experiment: String,
    /// The quick setting ([`Ctx::quick`]).
    pub quick: bool,
    /// Added to every seed ([`Ctx::seed_base`]).
    pub seed_base: u64,
    /// Judge every stochastic claim on the replicate seed block too ([`Ctx::replicate`]).
    pub replicate: bool,
    /// Threads the experiment may use for its own points (at least 1); the outcome does not
    /// depend on it.
    pub jobs: usize,
}

impl Unit {
    /// The units of `experiments` at the setting `ctx`, `jobs` threads each, in order.
    pub fn for_experiments(experiments: &[Experiment], ctx: &Ctx, jobs: usize) -> Vec<Unit> {
        experiments
            .iter()
            .map(|e| Unit {
                experiment: e.id.to_string(),
                quick: ctx.quick,
                seed_base: ctx.seed_base,
                replicate: ctx.replicate,
                jobs: jobs.max(1),
            })
            .collect()
    }

    /// The unit as bytes (one line of JSON).
    pub fn encode(&self) -> Vec<u8> {
        // A struct of strings, integers and a bool always serializes.
        serde_json::to_vec(self).unwrap_or_default()
    }

    /// A unit from the bytes [`Unit::encode`] made.
    pub fn decode(bytes: &[u8]) -> Result<Unit, UnitError> {
        serde_json::from_slice(bytes).map_err(|e| UnitError::Malformed {
            what: "unit",
            message: e.to_string(),
        })
    }
}

/// Why the bytes of a unit or an outcome could not be used.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum UnitError {
    /// The bytes are not a unit or an outcome of this version of concord.
    #[error("malformed {what} ({message}); the workers must run the same concord as the command (pip install ./python on every worker)")]
    Malformed {
        /// `unit` or `outcome`.
        what: &'static str,
        /// serde_json's message.
        message: String,
    },
    /// The unit names no experiment this concord knows.
    #[error("unknown experiment `{0}`; the workers must run the same concord as the command (pip install ./python on every worker)")]
    UnknownExperiment(String),
}

/// A figure, as it travels.
#[derive(Serialize, Deserialize)]
struct FigureWire {
    id: String,
    title: String,
    svg: String,
}

/// Why an experiment failed, as it travels.
#[derive(Serialize, Deserialize)]
enum ErrorWire {
    Scenario { name: String, message: String },
    Simulation { name: String, message: String },
}

/// What an experiment produced, as it travels.
#[derive(Serialize, Deserialize)]
struct OutcomeWire {
    claims: Vec<Claim>,
    figures: Vec<FigureWire>,
    raw: Vec<(String, String)>,
}

/// A unit's result and the simulation it did, as it travels.
#[derive(Serialize, Deserialize)]
struct UnitOutcomeWire {
    result: Result<OutcomeWire, ErrorWire>,
    runs: usize,
    simulated_s: f64,
}

/// Runs the unit encoded in `bytes` on this process and returns its outcome as bytes (for
/// [`decode_outcome`]). An experiment that fails (or panics) is an outcome too, carrying its
/// error; only bytes that are not a unit of this concord are refused.
pub fn run_unit(bytes: &[u8]) -> Result<Vec<u8>, UnitError> {
    let unit = Unit::decode(bytes)?;
    let experiment = registry()
        .into_iter()
        .find(|e| e.id == unit.experiment)
        .ok_or_else(|| UnitError::UnknownExperiment(unit.experiment.clone()))?;
    let ctx = Ctx {
        quick: unit.quick,
        seed_base: unit.seed_base,
        replicate: unit.replicate,
    };
    let (result, work) = run_watched(&[experiment], &ctx, unit.jobs.max(1), &mut |_, _| {})
        .pop()
        .unwrap_or_else(|| {
            (
                Err(ReproError::Simulation {
                    name: unit.experiment.clone(),
                    message: "the experiment returned nothing".into(),
                }),
                Work::default(),
            )
        });
    Ok(encode_outcome(&result, work))
}

/// An experiment's result and work as bytes (one line of JSON; floats round-trip exactly,
/// NaN travels as `null` as it does in results.json).
pub fn encode_outcome(result: &Result<Outcome, ReproError>, work: Work) -> Vec<u8> {
    let result = match result {
        Ok(o) => Ok(OutcomeWire {
            claims: o.claims.clone(),
            figures: o
                .figures
                .iter()
                .map(|f| FigureWire {
                    id: f.id.clone(),
                    title: f.title.clone(),
                    svg: f.svg.clone(),
                })
                .collect(),
            raw: o.raw.clone(),
        }),
        Err(ReproError::Scenario { name, message }) => Err(ErrorWire::Scenario {
            name: name.clone(),
            message: message.clone(),
        }),
        Err(ReproError::Simulation { name, message }) => Err(ErrorWire::Simulation {
            name: name.clone(),
            message: message.clone(),
        }),
    };
    let wire = UnitOutcomeWire {
        result,
        runs: work.runs,
        simulated_s: work.simulated_s,
    };
    serde_json::to_vec(&wire).unwrap_or_else(|e| {
        // Only a non-finite float outside the NaN-tolerant fields could fail; say so as the
        // experiment's error rather than lose the unit.
        let failed = UnitOutcomeWire {
            result: Err(ErrorWire::Simulation {
                name: "?".into(),
                message: format!("the outcome could not be encoded: {e}"),
            }),
            runs: work.runs,
            simulated_s: work.simulated_s,
        };
        serde_json::to_vec(&failed).unwrap_or_default()
    })
}

/// The experiment's result and work from the bytes [`run_unit`] returned.
pub fn decode_outcome(bytes: &[u8]) -> Result<(Result<Outcome, ReproError>, Work), UnitError> {
    let wire: UnitOutcomeWire =
        serde_json::from_slice(bytes).map_err(|e| UnitError::Malformed {
            what: "outcome",
            message: e.to_string(),
        })?;
    let result = match wire.result {
        Ok(o) => Ok(Outcome {
            claims: o.claims,
            figures: o
                .figures
                .into_iter()
                .map(|f| Figure {
                    id: f.id,
                    title: f.title,
                    svg: f.svg,
                })
                .collect(),
            raw: o.raw,
        }),
        Err(ErrorWire::Scenario { name, message }) => Err(ReproError::Scenario { name, message }),
        Err(ErrorWire::Simulation { name, message }) => {
            Err(ReproError::Simulation { name, message })
        }
    };
    let work = Work {
        runs: wire.runs,
        simulated_s: wire.simulated_s,
    };
    Ok((result, work))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::claim::{Check, Paper};

    #[test]
    fn a_unit_survives_its_bytes() {
        let u = Unit {
            experiment: "baseline/padhye".into(),
            quick: true,
            seed_base: 1000,
            replicate: true,
            jobs: 3,
        };
        assert_eq!(Unit::decode(&u.encode()), Ok(u));
    }

    #[test]
    fn bytes_that_are_no_unit_are_refused_with_the_fix() {
        let e = run_unit(b"not json").expect_err("not a unit");
        assert!(matches!(e, UnitError::Malformed { what: "unit", .. }));
        assert!(e.to_string().contains("pip install ./python"));
    }

    #[test]
    fn a_unit_naming_no_experiment_is_refused() {
        let u = Unit {
            experiment: "nopaper/none".into(),
            quick: true,
            seed_base: 0,
            replicate: false,
            jobs: 1,
        };
        assert_eq!(
            run_unit(&u.encode()),
            Err(UnitError::UnknownExperiment("nopaper/none".into()))
        );
    }

    #[test]
    fn an_outcome_comes_back_bit_for_bit_with_nan_kept() {
        // Floats whose shortest decimal form needs all 17 digits, and a failed measurement.
        let mut c = Claim::new(
            Paper::Cm,
            "Fig. 4",
            "rate (Mbit/s)",
            "0.3",
            0.1 + 0.2,
            Check::AtLeast { min: 0.1 + 0.2 },
            1,
            "s.toml",
            true,
        );
        c.values = vec![1.0 / 3.0, f64::NAN, 2.0_f64.sqrt()];
        c.ci95 = [f64::NAN, 1e-300];
        let outcome = Outcome {
            claims: vec![c.clone()],
            figures: vec![Figure::new("cm-x", "X", "<svg/>\n".into())],
            raw: vec![("x.csv".into(), "a,b\n1,2\n".into())],
        };
        let work = Work {
            runs: 7,
            simulated_s: 12.345678901234567,
        };
        let (back, w) =
            decode_outcome(&encode_outcome(&Ok(outcome.clone()), work)).expect("decodes");
        let back = back.expect("an outcome");
        assert_eq!(w, work);
        assert_eq!(back.figures, outcome.figures);
        assert_eq!(back.raw, outcome.raw);
        let b = &back.claims[0];
        let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
        assert_eq!(bits(&b.values[..1]), bits(&c.values[..1]));
        assert!(b.values[1].is_nan());
        assert_eq!(b.values[2].to_bits(), c.values[2].to_bits());
        assert!(b.ci95[0].is_nan());
        assert_eq!(b.ci95[1].to_bits(), 1e-300_f64.to_bits());
        assert_eq!(b.ours.to_bits(), c.ours.to_bits());
    }

    #[test]
    fn an_experiment_error_travels_as_the_same_error() {
        let err = ReproError::Scenario {
            name: "s.toml".into(),
            message: "line 3: bad".into(),
        };
        let (back, _) =
            decode_outcome(&encode_outcome(&Err(err.clone()), Work::default())).expect("decodes");
        assert_eq!(back, Err(err));
    }
}
