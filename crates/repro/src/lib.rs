//! concord-repro: every paper experiment as scenarios plus claims, run in parallel across cores
//! (each run single-threaded and deterministic) and reported as `results.json`, SVG figures,
//! raw CSV tables and an HTML page.

pub mod baseline;
pub mod claim;
pub mod cm;
pub mod cp;
pub mod eca;
pub mod gcca;
pub mod margin;
pub mod mccp;
pub mod not_run;
pub mod plot;
pub mod replicate;
pub mod report;
pub mod runner;
pub mod seed_sweep;
pub mod unit;

pub use claim::{Check, Claim, Paper};
pub use report::{write_report, Report};
pub use runner::{registry, run_experiments, Ctx, Experiment, Figure, Outcome, ReproError};
