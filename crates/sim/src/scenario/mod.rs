//! Scenario files: TOML in, a validated [`Scenario`] out, or an error naming file, line and fix.
//!
//! [`load`] reads a file, [`parse_str`] reads text; both check everything the simulator relies
//! on (names resolve, quantities are in range, every flow has a path) and stop at the first
//! mistake with a [`ScenarioError`] that points at the offending key or value. The format is
//! described key by key in `docs/scenarios.md`.

mod channel;
mod cm;
mod cp;
mod eca;
mod error;
mod flows;
mod gcca;
pub mod limits;
mod loader;
pub mod model;
mod network;
mod overrides;
mod queue;
mod record;
mod source;
mod suggest;
mod table;
mod tcp;
mod topology;
mod value;

pub use error::{ErrorKind, ScenarioError};
pub use flows::JITTER_STREAM;
pub use loader::{load, load_with, parse_str, parse_str_with, LoadOptions};
pub use model::*;
pub use overrides::{Override, OverrideValue, ScenarioSource};
