//! The rate-controller interface, implemented by the Congestion Manager's AIMD
//! ([`crate::cm::aimd::Aimd`]), through which the CM's macroflows drive whichever controller
//! they hold.
//!
//! TFRC, ECA's WTP shaper, the Kelly primal controller and GCCA's leaky buckets keep their own
//! event APIs: each is driven by its protocol's messages (TFRC feedback, RLOAD, GCCP), not by the
//! generic events below, so none implements this trait.
//!
//! A rate controller turns feedback into an allowed sending rate. Like the window controllers of
//! [`crate::tcp::controller`], it is shaped around events: each takes `now`, each has a no-op
//! default so that a controller implements only the events it reacts to, and the one query,
//! [`RateController::rate`], is cheap. Pacing, probing and feedback parsing live with the
//! protocol that hosts the controller, not here.

use crate::time::{Duration, Instant};
use crate::units::{Bytes, Rate};

/// The kind of congestion signal a rate controller is told about.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CongestionSignal {
    /// Packets were lost but feedback still flows: transient congestion (a TCP loss detected by
    /// duplicate acknowledgments, a probe response that reports fewer packets than were sent).
    Loss,
    /// A router marked packets with Congestion Experienced and the receiver echoed it
    /// (RFC 3168).
    Ecn,
    /// Feedback stopped for all outstanding data: persistent congestion (a TCP retransmission
    /// timeout).
    Persistent,
    /// An outside party asks for a reduction (a router message such as GCCP CONGESTION).
    External,
}

/// A sender's rate controller.
pub trait RateController {
    /// The rate the controller allows now, in bits per second. Cheap: no state changes.
    fn rate(&self) -> Rate;

    /// `bytes` were handed to the network at `now`.
    fn on_sent(&mut self, _now: Instant, _bytes: Bytes) {}

    /// A round-trip time measurement taken at `now`.
    fn on_rtt_sample(&mut self, _now: Instant, _rtt: Duration) {}

    /// The receiver confirmed the arrival of `bytes` (acknowledged, or counted in a report), with
    /// no congestion signal attached.
    fn on_delivered(&mut self, _now: Instant, _bytes: Bytes) {}

    /// A congestion signal arrived at `now`.
    fn on_congestion(&mut self, _now: Instant, _signal: CongestionSignal) {}
}
