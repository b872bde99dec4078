//! Endpoint views of CP (slides, "COORDINATION PROTOCOL (CP)": C-UDP and C-TCP through a
//! modified socket API), as sans-IO structs a simulator or a runtime hosts.
//!
//! - [`CUdpSocket`]: sets the application and flow ids on every datagram, and keeps the latest
//!   estimate its aggregation point sent (piggy-backed on arriving packets, or delivered as an
//!   [`ApEvent`](super::aggregation_point::ApEvent)): RTT, aggregate loss rate, available
//!   bandwidth. The application decides what to send.
//! - [`CTcpSender`]: TCP's reliable byte stream ([`TcpSender`]: sequence space, retransmission,
//!   RTO) with its sending rate set by CP instead of its congestion window: sends are gated by
//!   a [`PacingCredit`] filling at this connection's share of the application's available
//!   bandwidth. The receiving side is an unmodified [`TcpReceiver`](crate::tcp::TcpReceiver).

use super::header::{CpHeader, EndpointFeedback};
use super::pacing::PacingCredit;
use crate::tcp::sender::{AckOutcome, Segment, SendGate};
use crate::tcp::{TcpConfig, TcpConfigError, TcpSender};
use crate::time::{Duration, Instant};
use crate::units::{Bytes, Rate};

/// A C-UDP socket: UDP datagrams of one flow of one C-to-C application.
#[derive(Clone, Debug, PartialEq)]
pub struct CUdpSocket {
    /// The application id.
    app: u32,
    /// The flow id.
    flow: u32,
    /// The latest estimate and when it came.
    estimate: Option<(EndpointFeedback, Instant)>,
}

impl CUdpSocket {
    /// A socket for flow `flow` of application `app`, with no estimate yet.
    pub fn new(app: u32, flow: u32) -> CUdpSocket {
        CUdpSocket {
            app,
            flow,
            estimate: None,
        }
    }

    /// Sets the application and flow ids. A new application forgets the old one's estimate.
    pub fn set_ids(&mut self, app: u32, flow: u32) {
        if app != self.app {
            self.estimate = None;
        }
        self.app = app;
        self.flow = flow;
    }

    /// The application id.
    pub fn app(&self) -> u32 {
        self.app
    }

    /// The flow id.
    pub fn flow(&self) -> u32 {
        self.flow
    }

    /// The CP header for the next datagram sent.
    pub fn header(&self) -> CpHeader {
        CpHeader::new(self.app, self.flow)
    }

    /// A datagram with CP header `header` arrived at `now`; its endpoint feedback, if it is
    /// for this socket's application, becomes the estimate. Returns whether it did.
    pub fn on_datagram(&mut self, now: Instant, header: &CpHeader) -> bool {
        match header.endpoint {
            Some(estimate) if header.app == self.app => {
                self.on_estimate(now, estimate);
                true
            }
            _ => false,
        }
    }

    /// The aggregation point's estimate for this application, delivered at `now`.
    pub fn on_estimate(&mut self, now: Instant, estimate: EndpointFeedback) {
        self.estimate = Some((estimate, now));
    }

    /// The latest estimated RTT of the aggregate; `None` before one was measured.
    pub fn rtt(&self) -> Option<Duration> {
        self.estimate
            .map(|(e, _)| e.rtt)
            .filter(|rtt| !rtt.is_zero())
    }

    /// The latest aggregate loss rate, a fraction in [0, 1].
    pub fn loss_rate(&self) -> Option<f64> {
        self.estimate.map(|(e, _)| e.loss_rate)
    }

    /// The latest estimate of the bandwidth available to the whole application.
    pub fn available_bandwidth(&self) -> Option<Rate> {
        self.estimate.map(|(e, _)| e.available_bandwidth)
    }

    /// The latest estimate and when it arrived.
    pub fn estimate(&self) -> Option<(EndpointFeedback, Instant)> {
        self.estimate
    }
}

/// A C-TCP sender: a reliable byte stream paced at the rate CP suggests.
#[derive(Clone, Debug)]
pub struct CTcpSender {
    /// Ids and estimate.
    socket: CUdpSocket,
    /// The byte stream; its sends are gated by credit only.
    tcp: TcpSender,
    /// Credit at this connection's rate.
    pacer: PacingCredit,
    /// The fraction of the application's available bandwidth this connection follows.
    share: f64,
}

impl CTcpSender {
    /// A sender for flow `flow` of application `app` at `now`, sending at `initial_rate` until
    /// CP suggests a rate. Credit is kept up to two segments. The TCP configuration is checked.
    pub fn new(
        app: u32,
        flow: u32,
        config: TcpConfig,
        initial_rate: Rate,
        now: Instant,
    ) -> Result<CTcpSender, TcpConfigError> {
        let burst = config.mss.saturating_mul(2);
        let mut tcp = TcpSender::new(config)?;
        tcp.set_gate(SendGate::CreditOnly);
        Ok(CTcpSender {
            socket: CUdpSocket::new(app, flow),
            tcp,
            pacer: PacingCredit::new(initial_rate, burst, now),
            share: 1.0,
        })
    }

    /// Sets the fraction of the application's available bandwidth this connection follows
    /// (the application's split; 1 by default). Negative or NaN is taken as 0, above 1 as 1.
    pub fn set_share(&mut self, now: Instant, share: f64) {
        self.share = if share.is_nan() {
            0.0
        } else {
            share.clamp(0.0, 1.0)
        };
        if let Some((e, _)) = self.socket.estimate() {
            self.pacer
                .set_rate(now, e.available_bandwidth.mul_f64(self.share));
        }
    }

    /// Sets the sending rate directly (an application that computes its own split).
    pub fn set_rate(&mut self, now: Instant, rate: Rate) {
        self.pacer.set_rate(now, rate);
    }

    /// The aggregation point's estimate arrived at `now`: the rate becomes the connection's
    /// share of the available bandwidth.
    pub fn on_estimate(&mut self, now: Instant, estimate: EndpointFeedback) {
        self.socket.on_estimate(now, estimate);
        self.pacer
            .set_rate(now, estimate.available_bandwidth.mul_f64(self.share));
    }

    /// A packet (an ACK) with CP header `header` arrived at `now`: its estimate, if any, is
    /// taken as [`on_estimate`](Self::on_estimate) does.
    pub fn on_cp_header(&mut self, now: Instant, header: &CpHeader) {
        if header.app == self.socket.app() {
            if let Some(e) = header.endpoint {
                self.on_estimate(now, e);
            }
        }
    }

    /// The next segment to send at `now`, with its CP header, if the credit and the stream
    /// allow one. Call until `None`.
    pub fn poll_transmit(&mut self, now: Instant) -> Option<(CpHeader, Segment)> {
        let room = self.pacer.burst().saturating_sub(self.tcp.credit());
        let granted = self.pacer.take(now, room);
        self.tcp.grant(granted);
        self.tcp
            .poll_transmit(now)
            .map(|segment| (self.socket.header(), segment))
    }

    /// A cumulative ACK of every byte below `ack` arrived at `now` (ECN-Echo `ece`).
    pub fn on_ack(&mut self, now: Instant, ack: u64, ece: bool) -> AckOutcome {
        self.tcp.on_ack(now, ack, ece)
    }

    /// Runs the retransmission timer if it is due; returns whether it fired.
    pub fn on_timeout(&mut self, now: Instant) -> bool {
        self.tcp.on_timeout(now)
    }

    /// When to call [`poll_transmit`](Self::poll_transmit) or
    /// [`on_timeout`](Self::on_timeout) next: the retransmission timer, and the time a segment's
    /// worth of credit will be there if credit is what holds the next segment back.
    pub fn poll_timeout(&self) -> Option<Instant> {
        let mss = self.tcp.config().mss;
        let held = self.tcp.credit();
        let pacing = if held >= mss {
            // Credit is there: the stream or the receiver's window holds the segment back.
            None
        } else {
            Some(self.pacer.next_time(mss - held)).filter(|&t| t != Instant::MAX)
        };
        match (pacing, self.tcp.poll_timeout()) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// The CP rate this connection follows.
    pub fn rate(&self) -> Rate {
        self.pacer.rate()
    }

    /// The ids and the latest estimate.
    pub fn socket(&self) -> &CUdpSocket {
        &self.socket
    }

    /// The TCP sender (the byte stream).
    pub fn tcp(&self) -> &TcpSender {
        &self.tcp
    }

    /// The TCP sender, to limit the stream ([`TcpSender::set_app_limit`]).
    pub fn tcp_mut(&mut self) -> &mut TcpSender {
        &mut self.tcp
    }

    /// Bytes acknowledged so far.
    pub fn delivered(&self) -> Bytes {
        self.tcp.snd_una()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(m: u64) -> Instant {
        Instant::from_millis(m)
    }

    fn estimate(mbps: u64) -> EndpointFeedback {
        EndpointFeedback {
            available_bandwidth: Rate::from_mbps(mbps),
            loss_rate: 0.01,
            rtt: Duration::from_millis(80),
        }
    }

    #[test]
    fn a_c_udp_socket_sets_its_ids_and_reads_the_ap_estimate() {
        let mut s = CUdpSocket::new(4, 2);
        assert_eq!(s.header(), CpHeader::new(4, 2));
        assert_eq!(
            (s.rtt(), s.loss_rate(), s.available_bandwidth()),
            (None, None, None)
        );
        let mut h = CpHeader::new(4, 9);
        h.endpoint = Some(estimate(3));
        assert!(s.on_datagram(ms(5), &h));
        assert_eq!(s.rtt(), Some(Duration::from_millis(80)));
        assert_eq!(s.loss_rate(), Some(0.01));
        assert_eq!(s.available_bandwidth(), Some(Rate::from_mbps(3)));
        // Another application's feedback is not ours.
        h.app = 5;
        assert!(!s.on_datagram(ms(6), &h));
        s.set_ids(5, 1);
        assert_eq!(s.available_bandwidth(), None);
        assert_eq!(s.header(), CpHeader::new(5, 1));
    }

    #[test]
    fn a_c_tcp_sender_sends_at_its_share_of_the_suggested_rate() {
        let config = TcpConfig {
            mss: 1000,
            ..TcpConfig::default()
        };
        let mut s = CTcpSender::new(1, 1, config, Rate::from_kbps(80), ms(0))
            .unwrap_or_else(|e| panic!("{e}"));
        // 80 kbit/s: one 1000-byte segment per 100 ms.
        assert_eq!(s.poll_timeout(), Some(ms(100)));
        assert!(s.poll_transmit(ms(99)).is_none());
        let (h, seg) = s
            .poll_transmit(ms(100))
            .unwrap_or_else(|| panic!("no segment"));
        assert_eq!((h.app, h.flow, seg.seq, seg.len), (1, 1, 0, 1000));
        // CP suggests 8 Mbit/s for the application; this connection takes a quarter:
        // 2 Mbit/s, one segment per 4 ms.
        s.set_share(ms(100), 0.25);
        let mut ack = CpHeader::new(1, 1);
        ack.endpoint = Some(estimate(8));
        s.on_cp_header(ms(100), &ack);
        assert_eq!(s.rate(), Rate::from_mbps(2));
        let mut sent = 0;
        let mut t = 100;
        while t <= 200 {
            while s.poll_transmit(ms(t)).is_some() {
                sent += 1;
            }
            t += 1;
        }
        // 100 ms at 2 Mbit/s = 25 segments.
        assert_eq!(sent, 25);
        assert_eq!(s.on_ack(ms(201), 26_000, false).bytes_acked, 26_000);
        assert_eq!(s.delivered(), 26_000);
    }
}
