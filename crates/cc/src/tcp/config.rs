//! A TCP connection's settings. Defaults match today's stacks (IW10, 1448-byte MSS, delayed
//! ACKs, no SACK); the paper scenarios set what their ns-2 runs used.

use super::handshake::HandshakeConfig;
use super::mccp::{MccpConfig, MccpConfigError};
use super::ns3_departures::Ns3Departures;
use super::pacing::PacingConfig;
use super::prr::ReductionBound;
use crate::time::Duration;
use crate::units::Bytes;

/// Which window controller a connection runs.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub enum CcAlgorithm {
    /// TCP NewReno (RFC 5681, RFC 6582).
    #[default]
    NewReno,
    /// TCP Westwood+: ssthresh from a once-per-RTT bandwidth estimate after a loss.
    WestwoodPlus,
    /// CUBIC (RFC 9438), Linux's default.
    Cubic,
    /// MCCP: the adaptive available-bandwidth estimate with fast probing and non-congestion
    /// detection.
    Mccp(MccpConfig),
}

impl CcAlgorithm {
    /// The name used in scenario files and tables.
    pub fn name(&self) -> &'static str {
        match self {
            CcAlgorithm::NewReno => "newreno",
            CcAlgorithm::WestwoodPlus => "westwood+",
            CcAlgorithm::Cubic => "cubic",
            CcAlgorithm::Mccp(_) => "mccp",
        }
    }
}

/// How a sender in fast recovery decides what to send.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Recovery {
    /// RFC 6582 NewReno recovery with window inflation by the duplicate ACKs, bounded by the
    /// data they show delivered (ns-3's `TcpClassicRecovery`).
    #[default]
    Classic,
    /// Proportional Rate Reduction (RFC 6937) with the given reduction bound; ns-3's default
    /// recovery and Linux's.
    Prr(ReductionBound),
}

impl Recovery {
    /// The name used in scenario files and tables.
    pub fn name(&self) -> &'static str {
        match self {
            Recovery::Classic => "classic",
            Recovery::Prr(ReductionBound::SlowStart) => "prr",
            Recovery::Prr(ReductionBound::Conservative) => "prr-crb",
        }
    }
}

/// Why a [`TcpConfig`] cannot run.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum TcpConfigError {
    /// The segment size is zero.
    #[error("mss is 0; give the payload bytes per segment (1448 is usual)")]
    ZeroMss,
    /// MCCP's parameters are out of range.
    #[error(transparent)]
    Mccp(#[from] MccpConfigError),
}

/// A TCP connection's settings.
#[derive(Clone, Debug, PartialEq)]
pub struct TcpConfig {
    /// The window controller.
    pub cc: CcAlgorithm,
    /// Sender maximum segment size, in bytes of payload.
    pub mss: Bytes,
    /// IP + TCP header bytes per segment (20 + 20 + 12 for the timestamps option).
    pub header_bytes: Bytes,
    /// Initial window, in segments (RFC 6928: 10).
    pub initial_cwnd: u32,
    /// Initial slow-start threshold, in bytes (`u64::MAX`: unbounded, RFC 5681 section 3.1).
    pub initial_ssthresh: Bytes,
    /// The receiver's advertised window, in bytes (a cap on data in flight).
    pub rwnd: Bytes,
    /// Duplicate ACKs that trigger fast retransmit (RFC 5681: 3).
    pub dupack_threshold: u32,
    /// Limited transmit (RFC 3042): one new segment on each of the first two duplicate ACKs.
    /// ns-3 and Linux enable it; off by default so that the papers' ns-2 experiments keep
    /// their sender.
    pub limited_transmit: bool,
    /// Fast-recovery algorithm (default: RFC 6582 with bounded inflation, the papers' sender).
    /// With `sack`, RFC 6675 loss recovery sends by `pipe` and this chooses its window:
    /// `Classic` keeps cwnd = ssthresh (RFC 6675 section 5 step 4.2), `Prr` sets cwnd = pipe +
    /// sndcnt on each ACK (RFC 6937, as ns-3 and Linux do).
    pub recovery: Recovery,
    /// Selective acknowledgments (RFC 2018): the receiver reports up to three SACK blocks and
    /// the sender keeps an RFC 6675 scoreboard and recovers by it. Off by default (the papers'
    /// ns-2 senders have no SACK).
    pub sack: bool,
    /// The receiver delays ACKs (RFC 5681 section 4.2).
    pub delayed_ack: bool,
    /// With delayed ACKs, acknowledge at least every this many in-order segments (2).
    pub ack_every: u32,
    /// With delayed ACKs, the delayed-ACK timer (at most 500 ms; 200 ms in ns-2 and Linux-like).
    pub delayed_ack_timeout: Duration,
    /// Quick ACKs at the start, in segments: the receiver acknowledges each of the
    /// connection's first this many in-order data segments at once, whatever the delayed-ACK
    /// count, bounded as Linux's `tcp_incr_quickack` bounds it: at most rwnd / (2 * mss), or 2
    /// when that is 0 ([`super::receiver`]). 0 (the default): no quick ACKs (RFC 5681 section
    /// 4.2 alone, the papers' ns-2 receiver); 1: ns-3 3.44's first data segment acknowledged
    /// alone (`TcpSocketBase::ProcessSynSent`/`ProcessSynRcvd`); 16: Linux's
    /// `TCP_MAX_QUICKACKS` at the first data segment (`tcp_event_data_recv`).
    pub quickack: u32,
    /// Negotiate ECN (RFC 3168): data is sent ECT(0), the receiver echoes CE with ECE.
    pub ecn: bool,
    /// Lower bound of the retransmission timeout (RFC 6298 2.4 says 1 s; stacks use 200 ms).
    pub min_rto: Duration,
    /// Upper bound of the retransmission timeout (RFC 6298 2.5: at least 60 s).
    pub max_rto: Duration,
    /// The RTO before any RTT sample (RFC 6298 2.1: 1 s).
    pub initial_rto: Duration,
    /// Clock granularity G of RFC 6298 2.3.
    pub clock_granularity: Duration,
    /// Open the connection with a SYN, SYN-ACK, ACK exchange before data, with these
    /// settings; `None` (the default): the first data segment leaves when the application
    /// starts.
    pub handshake: Option<HandshakeConfig>,
    /// Pace segments as Linux does (`tcp_update_pacing_rate`, `super::pacing`), with these
    /// ratios; `None` (the default): segments leave as soon as the window allows.
    pub pacing: Option<PacingConfig>,
    /// Which of ns-3 3.44's departures from the RFCs the sender reproduces
    /// ([`super::ns3_departures`]); none by default (the RFC behaviour).
    pub ns3_departures: Ns3Departures,
}

impl TcpConfig {
    /// Checks that a connection with these settings can run.
    pub fn validate(&self) -> Result<(), TcpConfigError> {
        if self.mss == 0 {
            return Err(TcpConfigError::ZeroMss);
        }
        if let CcAlgorithm::Mccp(c) = &self.cc {
            c.validate()?;
        }
        Ok(())
    }
}

impl Default for TcpConfig {
    fn default() -> Self {
        TcpConfig {
            cc: CcAlgorithm::NewReno,
            mss: 1448,
            header_bytes: 52,
            initial_cwnd: 10,
            initial_ssthresh: u64::MAX,
            rwnd: u64::MAX,
            dupack_threshold: 3,
            limited_transmit: false,
            recovery: Recovery::Classic,
            sack: false,
            delayed_ack: true,
            ack_every: 2,
            delayed_ack_timeout: Duration::from_millis(200),
            quickack: 0,
            ecn: false,
            min_rto: Duration::from_millis(200),
            max_rto: Duration::from_secs(60),
            initial_rto: Duration::from_secs(1),
            clock_granularity: Duration::from_millis(1),
            handshake: None,
            pacing: None,
            ns3_departures: Ns3Departures::default(),
        }
    }
}
