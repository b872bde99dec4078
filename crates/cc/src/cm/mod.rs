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
//! - [`api`]: the API's types: [`CmUpdate`], [`LossMode`], [`QueryResult`], [`CmEvent`],
//!   errors.
//! - [`config`]: [`CmConfig`], every parameter with its default.
//! - [`manager`]: [`CongestionManager`], the API of paper Fig. 8 and RFC 3124 section 4.
//!
//! Driving it: the host calls the API with `now`, takes [`CmEvent`]s from
//! [`CongestionManager::poll_event`] (grants, rate changes, probes to send, splits), calls
//! [`CongestionManager::on_timeout`] at [`CongestionManager::poll_timeout`], and hands probe
//! responses to [`CongestionManager::on_datagram`]. The receiving host runs a
//! [`ProbeResponder`], feeding it every data packet and every probe.

pub mod aging;
pub mod aimd;
pub mod api;
pub mod app;
pub mod config;
pub mod macroflow;
pub mod manager;
pub mod probe;
pub mod prober;
pub mod responder;
pub mod scheduler;
pub mod segregation;
pub mod tcp_adapter;
pub mod thresh;
pub mod thresh_index;

#[cfg(test)]
mod manager_tests;

pub use aging::{Aging, AgingPolicy, RttSummary};
pub use aimd::{Aimd, AimdConfig};
pub use api::{
    CmError, CmEvent, CmStats, CmUpdate, FeedbackError, FeedbackMode, LossMode, QueryResult,
};
pub use config::{CmConfig, CmConfigError};
pub use macroflow::{FlowId, FlowKey, Macroflow, MacroflowId};
pub use manager::CongestionManager;
pub use probe::{
    FlowCount, FlowTag, NonceSource, Probe, ProbeError, ProbeKey, ProbeMessage, Response,
};
pub use prober::{Measurement, Prober, ProberConfig, ResponseError};
pub use responder::{ProbeResponder, ResponderConfig};
pub use scheduler::{Grant, Scheduler};
pub use segregation::{FlowSample, SegregationConfig};
pub use thresh::{RateReport, ThreshHint};
