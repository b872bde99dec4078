//! concord-sim: a deterministic discrete-event packet simulator that hosts concord-cc's
//! algorithms.

pub mod scenario;
pub mod trace;
