//! Explicit Congestion Avoidance (Barham, MSR-TR-2001-100) as sans-IO state machines.
//!
//! Routers keep a path load estimate L from the arrivals into a virtual queue served at a
//! target utilisation and stamp it into every forwarded packet (LOAD); receivers record it and
//! reflect it to the source (RLOAD); the source shapes each flow with a token bucket at
//! r_i = w_i / L, its "willingness to pay" w_i over the load (section III.A). The pieces:
//!
//! - [`load_codec`]: how LOAD and RLOAD survive the header, the paper's 32-bit float
//!   (simulation) or an 8-bit code in the TOS byte (prototype).
//! - [`load_estimator`]: the router's L from the arrivals into a virtual queue served at the
//!   target utilisation, x1.05 / x0.99 per 100 ms interval, and the LOAD stamp (max or sum).
//! - [`reflector`]: the receiver records each flow's LOAD and returns it as RLOAD, piggy-backed
//!   on packets back to the source or in periodic out-of-band reports.
//! - [`wtp`]: the host's per-flow token bucket at r_i = w_i / L with a 16 KiB bucket, and the
//!   FIFO of packets waiting in the host.
//! - [`priority`]: unmanaged high-priority flows that bypass WTP, admitted by peak rate.
//! - [`kelly`]: Kelly's primal controller (equation (2)) for flows with no adaptation of their
//!   own, explicit Euler with a stability clamp.
//! - [`lan`]: LAN mode, one elected monitor per shared segment measuring its load and
//!   broadcasting RLOAD to every host.
//! - [`web`]: the HTTP workload of section IV.B.4, sessions of compound pages with
//!   heavy-tailed object sizes at a configured offered load, and the response-time record.
//! - [`error`]: the configuration and input errors shared by the pieces.
//!
//! # Hosting ECA in a simulator (the loop of section IV.A.3)
//!
//! - **Packet fields.** Every packet carries LOAD and RLOAD as `f64`, 0 meaning "none", and
//!   goes through a [`LoadEncoding`] whenever a field is written: [`LoadEncoding::Float`] as in
//!   the paper's ns-2 runs, or [`LoadEncoding::Tos8`], which puts LOAD into the IP TOS byte
//!   ([`load_codec::write_tos`]); the prototype then has no RLOAD field and uses out-of-band
//!   reports only.
//! - **Router hook**, at each output queue that runs ECA, for every arriving packet, dropped
//!   or not: [`LoadEstimator::on_arrival`]; on forwarding,
//!   `LOAD = encoding.quantise(estimator.stamp(LOAD))`; a timer at
//!   [`LoadEstimator::poll_timeout`] calling [`LoadEstimator::on_tick`].
//! - **Receiver hook**, on every packet delivered to a host: [`Reflector::on_load`] with the
//!   flow and its LOAD; on every packet the host sends back toward that flow's source,
//!   `RLOAD = reflector.rload(now, flow)`; for flows without a back channel, a timer at
//!   [`Reflector::poll_timeout`] and one UDP report per [`Reflector::poll_message`].
//! - **Host shaper queue**, between the transport and the first link: each managed flow's
//!   packets go through [`WtpShaper::enqueue`] and leave with [`WtpShaper::poll_transmit`] at
//!   [`WtpShaper::poll_timeout`]; every RLOAD (piggy-backed or reported) arriving for the flow
//!   goes to [`WtpShaper::on_rload`]. High-priority flows admitted by [`PriorityAdmission`]
//!   skip the shaper; flows with no adaptation of their own take their rate from a
//!   [`KellyController`] fed with the RLOAD, through [`WtpShaper::set_rate`].
//! - **LAN mode**: every host runs a [`LanAgent`] fed with every frame on the segment and
//!   with the monitor's broadcasts, and applies [`LanAgent::rload`] to its shapers.
//!
//! Rate controllers here share no trait: WTP's rate is a function of the load, Kelly's an
//! integrator of it, and both meet at [`WtpShaper::set_rate`].

pub mod error;
pub mod kelly;
pub mod lan;
pub mod load_codec;
pub mod load_estimator;
pub mod priority;
pub mod reflector;
pub mod web;
pub mod wtp;

#[cfg(test)]
mod closed_loop_tests;

pub use error::{ConfigError, InvalidLoad};
pub use kelly::{KellyConfig, KellyController};
pub use lan::{LanAgent, LanConfig, LanMessage, Role};
pub use load_codec::{decode_tos, encode_tos, LoadEncoding};
pub use load_estimator::{LoadCombine, LoadEstimator, LoadEstimatorConfig, LoadRule};
pub use priority::{AdmissionError, FlowClass, PriorityAdmission};
pub use reflector::{LoadReport, Reflection, Reflector, ReflectorConfig};
pub use web::{Count, ParetoSize, Request, ResponseRecord, WebConfig, WebGenerator};
pub use wtp::{TokenBucket, WtpConfig, WtpShaper};
