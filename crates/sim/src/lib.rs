//! concord-sim: a deterministic discrete-event packet simulator that hosts concord-cc's
//! algorithms.
//!
//! A [`scenario::Scenario`] (loaded from a TOML file) builds a [`Simulator`]; running it fills
//! the flows' and channels' measurements, which [`results::RunResults`] turns into tables.

pub mod channel;
pub mod cm;
pub mod cp;
pub mod eca;
pub mod event;
pub mod flow;
pub mod gcca;
pub mod handles;
pub mod metrics;
pub mod packet;
pub mod queue_disc;
pub mod results;
pub mod routing;
pub mod scenario;
pub mod simulator;
pub mod tfrc;
pub mod timer;
pub mod trace;
pub mod wire;

pub use simulator::{SetupError, Simulator};
