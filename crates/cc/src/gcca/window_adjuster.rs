//! GCCA's rate controller for a TCP connection: the window adjuster (Liu, Cheung & Baras,
//! section 3.3).
//!
//! "When a GCCP CONGESTION message is received for a connection, we decrease that connection's
//! congestion window (cwnd) and slow-start threshold (ssthresh) by half. [...] The GCCP NORMAL
//! message is ignored. Existing TCP control is unchanged." The adjuster therefore sits beside
//! the connection's [`WindowController`] rather than inside it: it reaches the window through
//! the trait and leaves the controller's own reaction to ACKs, duplicate ACKs and timeouts
//! alone.
//!
//! Two choices the paper leaves open:
//! - **How often.** A burst of CONGESTION messages (one per selected packet upstream) would
//!   otherwise collapse the window; the adjuster reduces at most once per smoothed RTT, as
//!   TCP reacts to ECN at most once per window (RFC 3168 section 6.1.2).
//! - **What "by half" means.** By default ([`Reduction::HalveBoth`]) both values are halved as
//!   they stand, through `set_cwnd`/`set_ssthresh` (the controller keeps its own floors, e.g.
//!   one and two segments for NewReno). An ssthresh still at its initial "infinity" stays huge,
//!   so the window grows back "through the slow-start mechanism", as the paper says. The
//!   alternative ([`Reduction::Controller`]) hands the signal to the controller as
//!   [`CongestionKind::External`], which for NewReno is RFC 5681's `ssthresh = max(FlightSize
//!   / 2, 2 * SMSS)`, `cwnd = ssthresh`, and for Westwood+ or MCCP their own reduction.

use super::message::Code;
use crate::tcp::{CongestionKind, WindowController};
use crate::time::{Duration, Instant};
use crate::units::Bytes;

/// How a CONGESTION message reduces the window.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Reduction {
    /// cwnd <- cwnd / 2 and ssthresh <- ssthresh / 2 (section 3.3 taken literally).
    #[default]
    HalveBoth,
    /// The controller's own response to [`CongestionKind::External`].
    Controller,
}

/// The per-connection state of GCCA's window adjuster.
#[derive(Clone, Debug, Default)]
pub struct WindowAdjuster {
    reduction: Reduction,
    /// When the window was last reduced.
    last_reduction: Option<Instant>,
    /// Reductions made.
    reductions: u64,
    /// CONGESTION messages ignored because the last reduction was less than an RTT ago.
    held_back: u64,
}

impl WindowAdjuster {
    /// An adjuster that halves cwnd and ssthresh ([`Reduction::HalveBoth`]).
    pub fn new() -> WindowAdjuster {
        WindowAdjuster::default()
    }

    /// An adjuster with the given reduction.
    pub fn with_reduction(reduction: Reduction) -> WindowAdjuster {
        WindowAdjuster {
            reduction,
            ..WindowAdjuster::default()
        }
    }

    /// A GCCP message for this connection at `now`; `srtt` is the connection's smoothed RTT and
    /// `bytes_in_flight` its FlightSize. Returns true if the window was reduced. NORMAL is
    /// ignored.
    pub fn on_message<C: WindowController + ?Sized>(
        &mut self,
        now: Instant,
        code: Code,
        srtt: Duration,
        bytes_in_flight: Bytes,
        ctl: &mut C,
    ) -> bool {
        match code {
            Code::Congestion => self.on_congestion(now, srtt, bytes_in_flight, ctl),
            Code::Normal => false,
        }
    }

    /// A CONGESTION message: reduce, unless the last reduction was less than `srtt` ago.
    /// Returns true if the window was reduced.
    pub fn on_congestion<C: WindowController + ?Sized>(
        &mut self,
        now: Instant,
        srtt: Duration,
        bytes_in_flight: Bytes,
        ctl: &mut C,
    ) -> bool {
        if let Some(last) = self.last_reduction {
            if now.saturating_since(last) < srtt {
                self.held_back += 1;
                return false;
            }
        }
        match self.reduction {
            Reduction::HalveBoth => {
                let (cwnd, ssthresh) = (ctl.cwnd(), ctl.ssthresh());
                ctl.set_ssthresh(ssthresh / 2);
                ctl.set_cwnd(cwnd / 2);
            }
            Reduction::Controller => {
                ctl.on_congestion(now, CongestionKind::External, bytes_in_flight);
            }
        }
        self.last_reduction = Some(now);
        self.reductions += 1;
        true
    }

    /// When the window was last reduced.
    pub fn last_reduction(&self) -> Option<Instant> {
        self.last_reduction
    }

    /// Reductions made so far.
    pub fn reductions(&self) -> u64 {
        self.reductions
    }

    /// CONGESTION messages ignored because a reduction happened less than an RTT before.
    pub fn held_back(&self) -> u64 {
        self.held_back
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tcp::NewReno;

    const MSS: Bytes = 1000;
    const RTT: Duration = Duration::from_millis(100);

    fn ms(t: u64) -> Instant {
        Instant::from_millis(t)
    }

    #[test]
    fn congestion_halves_cwnd_and_ssthresh_at_most_once_per_rtt() {
        let mut ctl = NewReno::new(MSS, 40 * MSS, 64 * MSS);
        let mut adj = WindowAdjuster::new();
        assert!(adj.on_message(ms(0), Code::Congestion, RTT, 40 * MSS, &mut ctl));
        assert_eq!((ctl.cwnd(), ctl.ssthresh()), (20 * MSS, 32 * MSS));
        assert!(!adj.on_message(ms(99), Code::Congestion, RTT, 20 * MSS, &mut ctl));
        assert_eq!((ctl.cwnd(), ctl.ssthresh()), (20 * MSS, 32 * MSS));
        assert!(adj.on_message(ms(100), Code::Congestion, RTT, 20 * MSS, &mut ctl));
        assert_eq!((ctl.cwnd(), ctl.ssthresh()), (10 * MSS, 16 * MSS));
        assert_eq!((adj.reductions(), adj.held_back()), (2, 1));
        assert_eq!(adj.last_reduction(), Some(ms(100)));
    }

    #[test]
    fn normal_is_ignored() {
        let mut ctl = NewReno::new(MSS, 40 * MSS, 64 * MSS);
        let mut adj = WindowAdjuster::new();
        assert!(!adj.on_message(ms(0), Code::Normal, RTT, 40 * MSS, &mut ctl));
        assert_eq!((ctl.cwnd(), ctl.ssthresh()), (40 * MSS, 64 * MSS));
        assert_eq!(adj.last_reduction(), None);
        adj.on_message(ms(0), Code::Congestion, RTT, 40 * MSS, &mut ctl);
        adj.on_message(ms(500), Code::Normal, RTT, 40 * MSS, &mut ctl);
        assert_eq!((ctl.cwnd(), ctl.ssthresh()), (20 * MSS, 32 * MSS));
    }

    #[test]
    fn halving_respects_the_controllers_floors() {
        let mut ctl = NewReno::new(MSS, MSS, 3 * MSS);
        let mut adj = WindowAdjuster::new();
        adj.on_message(ms(0), Code::Congestion, RTT, MSS, &mut ctl);
        assert_eq!((ctl.cwnd(), ctl.ssthresh()), (MSS, 2 * MSS));
    }

    #[test]
    fn the_controller_reduction_uses_the_controllers_external_response() {
        let mut ctl = NewReno::new(MSS, 40 * MSS, u64::MAX);
        let mut adj = WindowAdjuster::with_reduction(Reduction::Controller);
        assert!(adj.on_message(ms(0), Code::Congestion, RTT, 30 * MSS, &mut ctl));
        assert_eq!((ctl.cwnd(), ctl.ssthresh()), (15 * MSS, 15 * MSS));
    }

    #[test]
    fn works_through_a_trait_object() {
        let mut ctl = NewReno::new(MSS, 40 * MSS, 64 * MSS);
        let dynamic: &mut dyn WindowController = &mut ctl;
        let mut adj = WindowAdjuster::new();
        assert!(adj.on_congestion(ms(0), RTT, 0, dynamic));
        assert_eq!(ctl.cwnd(), 20 * MSS);
    }
}
