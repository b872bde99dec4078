//! concord-py: concord as a library for scripts, and its Python module.
//!
//! [`run::run_source`] runs a scenario (a [`concord_sim::scenario::ScenarioSource`] with its
//! overrides) in-process and returns its tables as the CSV text `concord run` writes, with the
//! summary, the metadata and the scenario as run. With the `python` feature the crate is also
//! the `concord._concord` extension module that the Python package `concord` wraps (built by
//! maturin; see python/pyproject.toml).

pub mod run;

#[cfg(feature = "python")]
mod python;

/// The git revision concord was built from (`unknown` outside a git checkout).
pub const GIT_REVISION: &str = env!("CONCORD_GIT_REVISION");

/// concord's version.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");
