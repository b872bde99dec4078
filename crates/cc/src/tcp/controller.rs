//! The window-controller interface shared by NewReno, Westwood+, MCCP and GCCA's window
//! adjuster.
//!
//! The sender owns the shared machinery (sequence space, duplicate-ACK counting, fast
//! retransmit, NewReno recovery with window inflation and deflation, the RTO timer); a
//! controller supplies only the growth on new acknowledgments and the reduction on a congestion
//! signal, the split of neqo's `classic_cc`. Every event takes `now`; all windows are in bytes.

use crate::time::{Duration, Instant};
use crate::units::Bytes;

/// What an arriving ACK tells the controller.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AckInfo {
    /// Bytes newly acknowledged by this ACK (cumulative advance); zero for a duplicate ACK.
    pub bytes_acked: Bytes,
    /// The RTT sample this ACK gave, if it gave a valid one (Karn's rule, RFC 6298 section 3).
    pub rtt: Option<Duration>,
    /// The smoothed RTT after this ACK (the initial RTO's value before any sample).
    pub srtt: Duration,
    /// The smallest RTT seen so far (`Duration::MAX` before any sample).
    pub min_rtt: Duration,
    /// Bytes in flight after this ACK was processed.
    pub bytes_in_flight: Bytes,
    /// The sender is in fast recovery (RFC 6582); controllers do not grow then.
    pub in_recovery: bool,
    /// The ACK carried ECN-Echo.
    pub ece: bool,
}

/// What kind of congestion signal the sender saw.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CongestionKind {
    /// Loss detected by duplicate ACKs: fast retransmit and recovery follow.
    DupAcks,
    /// An ACK with ECN-Echo, at most once per window (RFC 3168 section 6.1.2).
    Ecn,
    /// The retransmission timer expired.
    Timeout,
    /// An outside module (GCCA's CONGESTION message) asks for a reduction.
    External,
}

/// A TCP sender's congestion-window controller.
pub trait WindowController {
    /// The congestion window, in bytes.
    fn cwnd(&self) -> Bytes;
    /// The slow-start threshold, in bytes.
    fn ssthresh(&self) -> Bytes;
    /// Sets the congestion window (the sender during recovery, or an outside module).
    fn set_cwnd(&mut self, cwnd: Bytes);
    /// Sets the slow-start threshold.
    fn set_ssthresh(&mut self, ssthresh: Bytes);
    /// Every ACK that arrives, new or duplicate, in recovery or not. Controllers grow cwnd here
    /// when `bytes_acked > 0` and not `in_recovery`; estimators (ABE, Westwood+) sample here.
    fn on_ack(&mut self, now: Instant, ack: &AckInfo);
    /// A congestion signal: set ssthresh and cwnd to the window after the reduction.
    /// `bytes_in_flight` is FlightSize of RFC 5681 at the moment of the signal.
    fn on_congestion(&mut self, now: Instant, kind: CongestionKind, bytes_in_flight: Bytes);
    /// Fast recovery ended (a full ACK, RFC 6582 step 3).
    fn on_recovery_end(&mut self, _now: Instant) {}
    /// The retransmission timer expired again before the data outstanding at an earlier
    /// timeout was all acknowledged: the same loss episode. By default the same reaction as a
    /// first timeout; NewReno keeps ssthresh and only returns to the loss window, as ns-3
    /// (`ReTxTimeout` in CA_LOSS with the head retransmitted) and Linux (`tcp_enter_loss`
    /// inside `high_seq`) do.
    fn on_repeated_timeout(&mut self, now: Instant, bytes_in_flight: Bytes) {
        self.on_congestion(now, CongestionKind::Timeout, bytes_in_flight);
    }
}

/// The controllers concord ships, as an enum so that per-ACK dispatch is a match.
#[derive(Clone, Debug)]
pub enum WindowCtl {
    /// TCP NewReno.
    NewReno(super::NewReno),
    /// TCP Westwood+.
    WestwoodPlus(Box<super::westwood::Westwood>),
    /// MCCP.
    Mccp(Box<super::mccp::Mccp>),
    /// CUBIC.
    Cubic(Box<super::cubic::Cubic>),
}

impl WindowCtl {
    /// The controller a configuration asks for, with its initial window and ssthresh.
    pub fn from_config(
        config: &super::TcpConfig,
    ) -> Result<WindowCtl, super::config::TcpConfigError> {
        use super::config::CcAlgorithm;
        config.validate()?;
        let mss = config.mss;
        let iw = mss.saturating_mul(config.initial_cwnd.max(1) as u64);
        let ss = config.initial_ssthresh;
        Ok(match config.cc {
            CcAlgorithm::NewReno => WindowCtl::NewReno(super::NewReno::new(mss, iw, ss)),
            CcAlgorithm::WestwoodPlus => {
                WindowCtl::WestwoodPlus(Box::new(super::westwood::Westwood::new(mss, iw, ss)))
            }
            CcAlgorithm::Mccp(c) => {
                WindowCtl::Mccp(Box::new(super::mccp::Mccp::new(mss, iw, ss, c)?))
            }
            CcAlgorithm::Cubic => WindowCtl::Cubic(Box::new(super::cubic::Cubic::new(mss, iw, ss))),
        })
    }
}

/// Dispatches a method call to the controller inside.
macro_rules! each {
    ($self:expr, $c:ident => $body:expr) => {
        match $self {
            WindowCtl::NewReno($c) => $body,
            WindowCtl::WestwoodPlus($c) => $body,
            WindowCtl::Mccp($c) => $body,
            WindowCtl::Cubic($c) => $body,
        }
    };
}

impl WindowController for WindowCtl {
    fn cwnd(&self) -> Bytes {
        each!(self, c => c.cwnd())
    }
    fn ssthresh(&self) -> Bytes {
        each!(self, c => c.ssthresh())
    }
    fn set_cwnd(&mut self, cwnd: Bytes) {
        each!(self, c => c.set_cwnd(cwnd))
    }
    fn set_ssthresh(&mut self, ssthresh: Bytes) {
        each!(self, c => c.set_ssthresh(ssthresh))
    }
    fn on_ack(&mut self, now: Instant, ack: &AckInfo) {
        each!(self, c => c.on_ack(now, ack))
    }
    fn on_congestion(&mut self, now: Instant, kind: CongestionKind, bytes_in_flight: Bytes) {
        each!(self, c => c.on_congestion(now, kind, bytes_in_flight))
    }
    fn on_recovery_end(&mut self, now: Instant) {
        each!(self, c => c.on_recovery_end(now))
    }
    fn on_repeated_timeout(&mut self, now: Instant, bytes_in_flight: Bytes) {
        each!(self, c => c.on_repeated_timeout(now, bytes_in_flight))
    }
}
