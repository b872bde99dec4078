//! The types of the CM API (paper section 3, Fig. 8; RFC 3124 section 4): what goes in with
//! `update`, what comes out of `query`, the callbacks as events, and the errors.

use super::macroflow::{FlowId, FlowKey, MacroflowId};
use super::probe::{Probe, ProbeError};
use super::prober::ResponseError;
use super::thresh::InvalidThresh;
use crate::time::Duration;
use crate::units::{Bytes, Rate};
use std::net::Ipv4Addr;

/// How the application saw congestion, the `lossmode` of `cm_update` (RFC 3124 section 4.2).
///
/// RFC 3124 passes a bit vector; an application that has several bits set reports the most
/// severe: Persistent, then Transient, then Ecn.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum LossMode {
    /// No congestion: `nlost` bytes, if any, were lost for other reasons (RFC 3124
    /// CM_NO_CONGESTION, which a path with non-congestion losses also uses).
    #[default]
    NoCongestion,
    /// Some loss, but feedback still flows: transient congestion, the rate halves (RFC 3124
    /// CM_LOSS_FEEDBACK; a TCP loss detected by duplicate acknowledgments).
    Transient,
    /// No feedback for all outstanding data: persistent congestion, the macroflow restarts from
    /// one MTU in slow start (RFC 3124 CM_NO_FEEDBACK; a TCP timeout).
    Persistent,
    /// The receiver echoed an ECN mark: the rate halves as for a loss (RFC 3124
    /// CM_EXPLICIT_CONGESTION).
    Ecn,
}

/// Where a flow's feedback comes from (paper section 2.2.2).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum FeedbackMode {
    /// Implicit: the application calls `update` with what its receiver acknowledged (TCP/CM).
    /// Its transmissions are not counted for probes, so that no byte is reported twice.
    #[default]
    Implicit,
    /// Explicit: the CM probes the receiver CM, which reports the flow's arrivals (an audio
    /// server that has no feedback of its own).
    Explicit,
}

/// The arguments of `cm_update` (RFC 3124 section 4.2; paper Fig. 8).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CmUpdate {
    /// Bytes the receiver got since the last update.
    pub nrecd: Bytes,
    /// Bytes lost since the last update.
    pub nlost: Bytes,
    /// How congestion showed itself.
    pub loss_mode: LossMode,
    /// An RTT sample, if the feedback gave one (RFC 3124 passes a negative value for none).
    pub rtt: Option<Duration>,
}

/// What `cm_query` returns (RFC 3124 section 4.4; paper Fig. 8 `cm_entry`): `None` for each
/// value the CM has no estimate of yet, which RFC 3124 reports as negative numbers.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct QueryResult {
    /// The flow's share of its macroflow's rate (the whole macroflow's rate for
    /// [`super::CongestionManager::query_macroflow`]).
    pub rate: Option<Rate>,
    /// The macroflow's smoothed RTT.
    pub srtt: Option<Duration>,
    /// The macroflow's RTT variation.
    pub rttdev: Option<Duration>,
}

impl QueryResult {
    /// The values as RFC 3124 `cm_query` hands them out: rate in bits per second, srtt and
    /// rttdev in microseconds, -1 for each value with no estimate.
    pub fn to_rfc3124(&self) -> (i64, i64, i64) {
        let n = |v: Option<u64>| v.map_or(-1, |x| i64::try_from(x).unwrap_or(i64::MAX));
        (
            n(self.rate.map(Rate::bps)),
            n(self.srtt.map(Duration::as_micros)),
            n(self.rttdev.map(Duration::as_micros)),
        )
    }
}

/// What the CM asks of its host: the callbacks of the paper (`app_notify`, `change_rate`) and
/// the transmissions of the probe protocol, returned by
/// [`super::CongestionManager::poll_event`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CmEvent {
    /// `app_notify(nallowed)` (paper section 3.1; RFC 3124 `cmapp_send`): the flow may send up
    /// to `grant` bytes now, and reports what it sent with `notify`.
    AppNotify {
        /// The flow.
        flow: FlowId,
        /// Bytes it may send, at most one MTU.
        grant: Bytes,
    },
    /// `change_rate(newrate)` (paper section 3.1; RFC 3124 `cmapp_update`): the flow's share
    /// or the RTT changed beyond the flow's thresholds.
    ChangeRate {
        /// The flow.
        flow: FlowId,
        /// Its share of the macroflow's rate.
        rate: Rate,
        /// The macroflow's smoothed RTT.
        srtt: Duration,
        /// The macroflow's RTT variation.
        rttdev: Duration,
    },
    /// A grant was not reported with `notify` within its lifetime and may no longer be used
    /// (RFC 3124 grant expiry).
    GrantExpired {
        /// The flow.
        flow: FlowId,
        /// The bytes of the grant.
        bytes: Bytes,
    },
    /// Send this probe to the receiver CM at `dst` (paper section 2.2.2), encoded with
    /// [`super::probe::ProbeMessage::encode`] on the wire.
    SendProbe {
        /// The receiving host.
        dst: Ipv4Addr,
        /// The probe.
        probe: Probe,
    },
    /// Flow segregation split `flows` off `from` into the new macroflow `to` (paper section
    /// 2.3).
    Segregated {
        /// The macroflow the flows left.
        from: MacroflowId,
        /// The new macroflow.
        to: MacroflowId,
        /// The flows that moved.
        flows: Vec<FlowId>,
    },
}

/// Why an API call was refused; a refused call changes nothing.
#[derive(Clone, Copy, Debug, PartialEq, thiserror::Error)]
pub enum CmError {
    /// No open flow has this handle.
    #[error("{0} is not open")]
    UnknownFlow(FlowId),
    /// No macroflow has this handle.
    #[error("{0} does not exist")]
    UnknownMacroflow(MacroflowId),
    /// A flow with this key is open already.
    #[error("a flow {0} is open already")]
    DuplicateFlow(FlowKey),
    /// A weight or receiver hint outside [`super::scheduler::WEIGHT_RANGE`].
    #[error("weight {0} is outside [0.001, 1e6]")]
    InvalidWeight(f64),
    /// A `cm_thresh` factor out of range.
    #[error("thresh: {0}")]
    InvalidThresh(#[from] InvalidThresh),
    /// The handle space is spent (2^32 flows or macroflows opened).
    #[error("no handles left")]
    OutOfHandles,
}

/// Why a probe-protocol datagram did not feed the CM; it changes nothing.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum FeedbackError {
    /// The bytes do not decode.
    #[error("malformed: {0}")]
    Malformed(#[from] ProbeError),
    /// A probe arrived where responses are expected.
    #[error("a probe, not a response")]
    NotAResponse,
    /// No probes were sent to this host.
    #[error("no probes were sent to {0}")]
    UnknownPeer(Ipv4Addr),
    /// The response does not fit the probes sent.
    #[error("refused: {0}")]
    Refused(#[from] ResponseError),
}

/// Counters of what the CM did and what it ignored.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CmStats {
    /// Grants handed out.
    pub grants: u64,
    /// Grants that expired unused.
    pub grants_expired: u64,
    /// Probes sent.
    pub probes_sent: u64,
    /// Responses that fed the CM.
    pub responses_accepted: u64,
    /// Datagrams that did not decode, or were not responses.
    pub responses_malformed: u64,
    /// Responses to a probe answered already.
    pub responses_duplicate: u64,
    /// Responses older than one answered already.
    pub responses_stale: u64,
    /// Responses whose nonce did not match their probe.
    pub responses_forged: u64,
    /// Responses refused for another reason: an unknown host, a probe never sent or
    /// forgotten, an interval that is empty or overlaps one reported.
    pub responses_refused: u64,
    /// Segregation splits.
    pub segregations: u64,
}
