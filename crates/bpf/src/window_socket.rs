//! One kernel socket driven by a concord-cc window controller (NewReno, Westwood+, MCCP, CUBIC): the
//! adapter from the datapath's records to [`WindowController`] events, and from the
//! controller's window back to a [`Decision`].
//!
//! The kernel keeps its loss recovery: it calls the datapath's `ssthresh` hook when it detects
//! congestion and sets cwnd itself during recovery. So the adapter tells the controller of the
//! signal when the state change arrives ([`RecordKind::State`]), and ahead of time hands the
//! datapath the ssthresh the controller would choose ([`Decision::loss_ssthresh`], computed on
//! a copy of the controller). Windows are in bytes in concord-cc and in segments in the kernel.

use crate::protocol::{ca_state, Decision, Record, RecordKind, INFINITE_SSTHRESH};
use concord_cc::tcp::{
    AckInfo, CcAlgorithm, CongestionKind, TcpConfig, TcpConfigError, WindowController, WindowCtl,
};
use concord_cc::{Duration, Instant};

/// A socket and its controller.
#[derive(Clone, Debug)]
pub struct WindowSocket {
    /// The controller.
    ctl: WindowCtl,
    /// Sender MSS, in bytes.
    mss: u64,
    /// Congestion reductions the controller has been told of.
    loss_events: u32,
    /// The smallest RTT sample so far.
    min_rtt: Duration,
    /// Bytes in flight at the last record.
    flight: u64,
    /// A reduction was undone: take cwnd and ssthresh from the next record.
    resync: bool,
}

/// Bytes of `segments` segments of `mss` bytes.
fn bytes(segments: u32, mss: u64) -> u64 {
    u64::from(segments).saturating_mul(mss)
}

/// Segments that hold `bytes` bytes, rounded up, at least 2 (the kernel's floor).
fn segments_up(bytes: u64, mss: u64) -> u32 {
    u32::try_from(bytes.div_ceil(mss))
        .unwrap_or(u32::MAX)
        .max(2)
}

/// ssthresh in segments, rounded down; unbounded stays the kernel's infinity.
fn ssthresh_segments(bytes: u64, mss: u64) -> u32 {
    u32::try_from(bytes / mss)
        .unwrap_or(INFINITE_SSTHRESH)
        .clamp(2, INFINITE_SSTHRESH)
}

impl WindowSocket {
    /// A controller for the socket of `first`, starting from the kernel's window.
    pub fn new(cc: CcAlgorithm, first: &Record) -> Result<WindowSocket, TcpConfigError> {
        let mss = u64::from(first.mss.max(1));
        let config = TcpConfig {
            cc,
            mss,
            initial_cwnd: first.cwnd.max(1),
            initial_ssthresh: if first.ssthresh >= INFINITE_SSTHRESH {
                u64::MAX
            } else {
                bytes(first.ssthresh, mss)
            },
            ..TcpConfig::default()
        };
        Ok(WindowSocket {
            ctl: WindowCtl::from_config(&config)?,
            mss,
            loss_events: first.loss_events,
            min_rtt: Duration::MAX,
            flight: bytes(first.in_flight, mss),
            resync: false,
        })
    }

    /// Starts the socket's slow start towards `ssthresh` bytes instead of the kernel's initial
    /// ssthresh (at least two segments, as every ssthresh).
    pub fn set_initial_ssthresh(&mut self, ssthresh: u64) {
        self.ctl.set_ssthresh(ssthresh);
    }

    /// The controller.
    pub fn controller(&self) -> &WindowCtl {
        &self.ctl
    }

    /// Feeds one record of this socket.
    pub fn on_record(&mut self, r: &Record) {
        let now = Instant::from_nanos(r.time_ns);
        self.flight = bytes(r.in_flight, self.mss);
        match r.kind {
            RecordKind::Ack => {
                if self.resync {
                    self.ctl.set_ssthresh(bytes(r.ssthresh, self.mss));
                    self.ctl.set_cwnd(bytes(r.cwnd, self.mss));
                    self.resync = false;
                }
                let rtt = (r.rtt_us > 0).then(|| Duration::from_micros(r.rtt_us as u64));
                if let Some(s) = rtt {
                    self.min_rtt = self.min_rtt.min(s);
                }
                let ack = AckInfo {
                    bytes_acked: u64::from(r.bytes_acked),
                    rtt,
                    srtt: Duration::from_micros(u64::from(r.srtt_us)),
                    min_rtt: self.min_rtt,
                    bytes_in_flight: self.flight,
                    // CWR, Recovery and Loss: the kernel is reducing cwnd; no growth.
                    in_recovery: r.ca_state >= ca_state::CWR,
                    ece: r.ece,
                };
                let before = self.ctl.cwnd();
                self.ctl.on_ack(now, &ack);
                if !r.cwnd_limited && self.ctl.cwnd() > before {
                    // A sender that does not use its window does not grow it (RFC 7661
                    // section 4.3; Linux's tcp_is_cwnd_limited): the kernel's Reno would not.
                    self.ctl.set_cwnd(before);
                }
            }
            RecordKind::State => self.on_state(now, r),
            RecordKind::Undo => self.resync = true,
            RecordKind::Init | RecordKind::Event | RecordKind::Release => {}
        }
    }

    /// The congestion state changes from `r.ca_state` to `r.event`.
    fn on_state(&mut self, now: Instant, r: &Record) {
        let new = u8::try_from(r.event).unwrap_or(u8::MAX);
        if r.loss_events > self.loss_events {
            // The kernel called ssthresh: a new congestion signal (RFC 5681 section 3.2 for
            // duplicate ACKs, section 3.1 for the timer; RFC 3168 section 6.1.2 for ECN).
            let kind = match new {
                ca_state::LOSS => CongestionKind::Timeout,
                ca_state::CWR => CongestionKind::Ecn,
                _ => CongestionKind::DupAcks,
            };
            self.ctl.on_congestion(now, kind, self.flight);
            self.loss_events = r.loss_events;
        } else if new == ca_state::LOSS {
            // The timer fired again within the same loss episode (the kernel's tcp_enter_loss
            // inside high_seq does not call ssthresh): ssthresh stays, cwnd returns to the loss
            // window (RFC 5681 section 3.1).
            self.ctl.on_repeated_timeout(now, self.flight);
        }
        if new == ca_state::OPEN && r.ca_state >= ca_state::CWR {
            self.ctl.on_recovery_end(now);
        }
    }

    /// What the datapath should apply, stamped `stamp_ns`.
    pub fn decision(&self, stamp_ns: u64) -> Decision {
        let mut ahead = self.ctl.clone();
        ahead.on_congestion(
            Instant::from_nanos(stamp_ns),
            CongestionKind::DupAcks,
            self.flight,
        );
        Decision {
            stamp_ns,
            cwnd: segments_up(self.ctl.cwnd(), self.mss),
            ssthresh: ssthresh_segments(self.ctl.ssthresh(), self.mss),
            loss_ssthresh: ssthresh_segments(ahead.ssthresh(), self.mss),
            loss_events: self.loss_events,
            pacing_rate: 0,
            reductions: 0,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::Algorithm;
    use std::net::Ipv4Addr;

    const MSS: u32 = 1000;

    fn rec(kind: RecordKind) -> Record {
        Record {
            sock_id: 1,
            time_ns: 1_000_000_000,
            kind,
            algo: Algorithm::NewReno,
            ca_state: ca_state::OPEN,
            ece: false,
            cwnd_limited: true,
            same_event: false,
            event: 0,
            bytes_acked: 0,
            pkts_acked: 0,
            rtt_us: -1,
            srtt_us: 50_000,
            delivered: 0,
            lost: 0,
            in_flight: 10,
            mss: MSS,
            cwnd: 10,
            ssthresh: INFINITE_SSTHRESH,
            loss_events: 0,
            daddr: Ipv4Addr::new(10, 0, 0, 2),
            dport: 5201,
            sport: 40000,
            saddr: Ipv4Addr::new(10, 0, 0, 1),
        }
    }

    fn ack(bytes: u32) -> Record {
        Record {
            bytes_acked: bytes,
            pkts_acked: bytes / MSS,
            rtt_us: 50_000,
            ..rec(RecordKind::Ack)
        }
    }

    fn newreno() -> WindowSocket {
        WindowSocket::new(CcAlgorithm::NewReno, &rec(RecordKind::Init)).expect("valid")
    }

    #[test]
    fn starts_from_the_kernels_initial_window() {
        let s = newreno();
        let d = s.decision(5);
        assert_eq!(d.cwnd, 10);
        assert_eq!(d.ssthresh, INFINITE_SSTHRESH);
        assert_eq!(d.stamp_ns, 5);
    }

    #[test]
    fn an_ack_in_slow_start_grows_cwnd_by_at_most_one_mss() {
        // RFC 5681 eq. 2: cwnd += min(N, SMSS); 10 segments become 11.
        let mut s = newreno();
        s.on_record(&ack(2 * MSS));
        assert_eq!(s.controller().cwnd(), 11_000);
        assert_eq!(s.decision(0).cwnd, 11);
    }

    #[test]
    fn no_growth_when_the_socket_does_not_use_its_window() {
        let mut s = newreno();
        let mut a = ack(MSS);
        a.cwnd_limited = false;
        s.on_record(&a);
        assert_eq!(s.controller().cwnd(), 10_000);
    }

    #[test]
    fn no_growth_while_the_kernel_is_in_recovery() {
        let mut s = newreno();
        let mut a = ack(MSS);
        a.ca_state = ca_state::RECOVERY;
        s.on_record(&a);
        assert_eq!(s.controller().cwnd(), 10_000);
    }

    #[test]
    fn loss_ssthresh_is_half_the_flight_ahead_of_the_loss() {
        // 20 segments in flight: RFC 5681 eq. 4 gives ssthresh = 10 segments.
        let mut s = newreno();
        let mut a = ack(MSS);
        a.in_flight = 20;
        s.on_record(&a);
        let d = s.decision(0);
        assert_eq!(d.loss_ssthresh, 10);
        // Computing it ahead leaves the controller alone.
        assert_eq!(s.controller().cwnd(), 11_000);
        assert_eq!(d.loss_events, 0);
    }

    #[test]
    fn entering_recovery_after_ssthresh_reduces_the_controller_once() {
        let mut s = newreno();
        let mut st = rec(RecordKind::State);
        st.event = u32::from(ca_state::RECOVERY);
        st.loss_events = 1;
        st.in_flight = 16;
        s.on_record(&st);
        assert_eq!(s.controller().ssthresh(), 8_000);
        assert_eq!(s.controller().cwnd(), 8_000);
        let d = s.decision(0);
        assert_eq!((d.cwnd, d.ssthresh, d.loss_events), (8, 8, 1));
        // The same count again (a second state change in the same episode): no new reduction.
        let mut again = st;
        again.event = u32::from(ca_state::OPEN);
        again.ca_state = ca_state::RECOVERY;
        s.on_record(&again);
        assert_eq!(s.controller().ssthresh(), 8_000);
    }

    #[test]
    fn a_timeout_restarts_from_one_segment() {
        let mut s = newreno();
        let mut st = rec(RecordKind::State);
        st.event = u32::from(ca_state::LOSS);
        st.loss_events = 1;
        s.on_record(&st);
        assert_eq!(s.controller().cwnd(), 1_000);
        // The kernel's floor for cwnd is two segments.
        assert_eq!(s.decision(0).cwnd, 2);
    }

    #[test]
    fn a_timeout_within_the_same_episode_keeps_ssthresh() {
        let mut s = newreno();
        let mut st = rec(RecordKind::State);
        st.event = u32::from(ca_state::RECOVERY);
        st.loss_events = 1;
        st.in_flight = 16;
        s.on_record(&st);
        // The timer fires during that recovery: no new ssthresh call, the count stays 1.
        let mut rto = st;
        rto.event = u32::from(ca_state::LOSS);
        rto.ca_state = ca_state::RECOVERY;
        s.on_record(&rto);
        assert_eq!(s.controller().ssthresh(), 8_000);
        assert_eq!(s.controller().cwnd(), 1_000);
    }

    #[test]
    fn an_undo_takes_the_restored_window_from_the_next_record() {
        let mut s = newreno();
        s.on_record(&rec(RecordKind::Undo));
        let mut a = ack(0);
        a.cwnd = 30;
        a.ssthresh = 25;
        s.on_record(&a);
        assert_eq!(s.controller().cwnd(), 30_000);
        assert_eq!(s.controller().ssthresh(), 25_000);
    }

    #[test]
    fn cubic_hands_the_datapath_seven_tenths_of_cwnd_for_the_next_loss() {
        // RFC 9438 section 4.6: ssthresh = cwnd * beta_cubic (0.7). 40 segments give 28.
        let mut init = rec(RecordKind::Init);
        init.cwnd = 40;
        let mut s = WindowSocket::new(CcAlgorithm::Cubic, &init).expect("valid");
        assert!(matches!(s.controller(), WindowCtl::Cubic(_)));
        assert_eq!(s.decision(0).loss_ssthresh, 28);
        // The kernel reduces: the controller follows once, to the same 28 segments.
        let mut st = rec(RecordKind::State);
        st.event = u32::from(ca_state::RECOVERY);
        st.loss_events = 1;
        s.on_record(&st);
        let d = s.decision(0);
        assert_eq!((d.cwnd, d.ssthresh, d.loss_events), (28, 28, 1));
    }

    #[test]
    fn mccp_runs_on_the_same_records() {
        let cc = CcAlgorithm::Mccp(Default::default());
        let mut s = WindowSocket::new(cc, &rec(RecordKind::Init)).expect("valid");
        let mut t = 1_000_000_000;
        for _ in 0..50 {
            t += 5_000_000;
            let mut a = ack(MSS);
            a.time_ns = t;
            s.on_record(&a);
        }
        assert!(s.controller().cwnd() > 10_000);
    }
}
