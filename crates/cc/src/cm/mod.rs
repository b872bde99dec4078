//! The Congestion Manager (Balakrishnan, Rahul and Seshan; RFC 3124) as sans-IO state machines.
//!
//! The CM gives every flow from one host to another a share of one congestion state, the
//! macroflow's, so that concurrent flows cooperate instead of competing (paper section 1). The
//! pieces, one per file:
//!
//! - [`macroflow`]: [`FlowKey`], [`FlowId`], [`MacroflowId`] and the [`Macroflow`] that holds
//!   one congestion state (RFC 3124 section 4.5).
//! - [`aimd`]: the rate-based AIMD with a window-equivalent, `rate = cwnd / srtt`, increase as
//!   TCP with byte counting, halving once per RTT, restart on persistent congestion (paper
//!   section 2.1; RFC 3124 loss modes). The first [`crate::rate::RateController`].
//! - [`aging`]: exponential aging of the open-loop rate when feedback stops, half-life the
//!   minimum RTT or srtt (paper section 2.2.3).
//! - [`probe`]: the probe and response messages and their byte layout (paper Fig. 5).
//! - [`prober`]: the sender side of the probe protocol: per-flow loss from sent and received
//!   counts, robust to lost probes and responses (paper section 2.2.2).
//! - [`responder`]: [`ProbeResponder`], the receiver CM that counts arrivals and answers.
//! - [`scheduler`]: pacing at the macroflow's rate and weighted round robin among its flows,
//!   grants, notify and grant expiry (paper section 2.4; RFC 3124 section 4.2).
//! - [`thresh`]: the `cm_thresh` factors that govern `change_rate` (RFC 3124 section 4.3).
//! - [`segregation`]: per-flow loss and throughput, and the test that splits a macroflow
//!   (paper section 2.3).

pub mod aging;
pub mod aimd;
pub mod macroflow;
pub mod probe;
pub mod prober;
pub mod responder;
pub mod scheduler;
pub mod segregation;
pub mod thresh;
