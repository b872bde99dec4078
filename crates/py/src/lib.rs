//! concord-py: concord as a library for scripts, and its Python module.
//!
//! [`run::run_source`] runs a scenario (a [`concord_sim::scenario::ScenarioSource`] with its
//! overrides) in-process and returns its tables as the CSV text `concord run` writes, with the
//! summary, the metadata and the scenario as run; [`lazy::LazyRun`] gives the same outputs, each
//! made on first use (the Python module's runs). [`sweep::Sweep`] is a grid of overrides times
//! seeds; [`local::run_local`] runs it on local threads (the Python package runs it on Dask
//! with the same per-run function), and [`tidy::write_sweep_dir`] writes its one tidy table. With the `python` feature the crate is also
//! the `concord._concord` extension module that the Python package `concord` wraps (built by
//! maturin; see python/pyproject.toml).

pub mod columns;
pub mod lazy;
pub mod local;
pub mod run;
pub mod sweep;
pub mod tidy;

#[cfg(feature = "python")]
mod python;

/// The git revision concord was built from (`unknown` outside a git checkout).
pub const GIT_REVISION: &str = env!("CONCORD_GIT_REVISION");

/// concord's version.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");
