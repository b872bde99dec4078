//! The Congestion Manager (Balakrishnan, Rahul and Seshan; RFC 3124) as sans-IO state machines.
//!
//! The CM gives every flow from one host to another a share of one congestion state, the
//! macroflow's, so that concurrent flows cooperate instead of competing (paper section 1). The
//! pieces, one per file:
//!
//! - [`aimd`]: the rate-based AIMD with a window-equivalent, `rate = cwnd / srtt`, increase as
//!   TCP with byte counting, halving once per RTT, restart on persistent congestion (paper
//!   section 2.1; RFC 3124 loss modes). The first [`crate::rate::RateController`].
//! - [`aging`]: exponential aging of the open-loop rate when feedback stops, half-life the
//!   minimum RTT or srtt (paper section 2.2.3).
//! - [`probe`]: the probe and response messages and their byte layout (paper Fig. 5).
//! - [`prober`]: the sender side of the probe protocol: per-flow loss from sent and received
//!   counts, robust to lost probes and responses (paper section 2.2.2).
//! - [`responder`]: [`ProbeResponder`], the receiver CM that counts arrivals and answers.

pub mod aging;
pub mod aimd;
pub mod probe;
pub mod prober;
pub mod responder;
