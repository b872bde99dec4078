//! concord-cc: the congestion-control algorithms of concord as sans-IO state machines.
//!
//! Nothing here opens a socket, reads a clock or draws OS randomness: every event takes `now`
//! and every stochastic decision takes an [`rng::Rng`]. The same code runs in the packet
//! simulator (`concord-sim`) and over real sockets (`concord-net`).

pub mod aqm;
pub mod cm;
pub mod cp;
pub mod eca;
pub mod gcca;
pub mod rate;
pub mod rng;
pub mod tcp;
pub mod tfrc;
pub mod time;
pub mod units;
pub mod wire;

pub use time::{Duration, Instant};
pub use units::{Bytes, Rate};
