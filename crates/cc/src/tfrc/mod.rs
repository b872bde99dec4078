//! TCP-Friendly Rate Control (RFC 5348) as sans-IO state machines.

pub mod config;
pub mod equation;

pub use config::{TfrcConfig, TfrcConfigError};
