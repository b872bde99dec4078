//! Scenario files: TOML in, a validated [`Scenario`] out, or an error naming file, line and fix.

pub mod model;

pub use model::*;
