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

pub mod aging;
pub mod aimd;
