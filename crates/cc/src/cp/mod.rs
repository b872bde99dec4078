//! CP, the Coordination Protocol for cluster-to-cluster (C-to-C) application aggregates (Ott,
//! Sparks, Mayer-Patel, INFOCOM 2004), as sans-IO state machines.
//!
//! A C-to-C application runs flows between the endpoints of two clusters (slides, Fig. 1); all
//! its packets pass an aggregation point (AP) at each cluster's edge (Fig. 2). A shim header
//! between IP and the transport (Fig. 3) lets the APs measure the aggregate's RTT and losses;
//! the local AP runs a single-flow rate control (TFRC, RFC 5348, or RAP) on the aggregate and
//! tells the endpoints the bandwidth available; the application decides how its flows share
//! it. With bandwidth filtered loss detection (BFLD, Fig. 9) an application with m flows takes
//! m flowshares.
//!
//! One file, one thing:
//!
//! - [`header`]: the CP header, its byte layout and codec.
//! - [`aggregation_point`]: [`AggregationPoint`], both roles of an AP for every application.
//! - [`aggregate`]: the local role for one application: stamping, RTT, loss history, TFRC or
//!   RAP on the aggregate.
//! - [`loss_reporter`]: the remote role for one application: echo and loss reports.
//! - [`rap`]: the RAP-like rate AIMD.
//! - [`flowshare`]: single, naive and BFLD flowshares.
//! - [`bfld`]: BFLD's sampling fraction, sampler and arrival rate B_arriv.
//! - [`split`]: equal and weighted splits of the available bandwidth.
//! - [`pacing`]: the pacing credit endpoints send with.
//! - [`endpoint`]: the C-UDP and C-TCP endpoint views.

#![warn(missing_docs)]

pub mod aggregate;
pub mod aggregation_point;
pub mod bfld;
pub mod endpoint;
pub mod flowshare;
pub mod header;
pub mod loss_reporter;
pub mod pacing;
pub mod rap;
pub mod split;

#[cfg(test)]
mod closed_loop_tests;

pub use aggregate::{Aggregate, AggregateControl, AggregateStats, AppConfig, AppConfigError};
pub use aggregation_point::{
    AggregationPoint, ApConfig, ApConfigError, ApEvent, ApStats, AppStatus, Inbound, Outbound,
};
pub use bfld::{sampling_fraction, ArrivalRate, BfldSampler};
pub use endpoint::{CTcpSender, CUdpSocket};
pub use flowshare::{FlowshareError, FlowshareFilter, Flowshares};
pub use header::{
    ApFeedback, CpHeader, CpHeaderError, Echo, EndpointFeedback, Gap, LossReport, Probe,
};
pub use loss_reporter::{LossReporter, ReporterStats};
pub use pacing::PacingCredit;
pub use rap::Rap;
pub use split::{split_by_weights, split_equally};
