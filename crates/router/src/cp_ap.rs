//! CP's aggregation point on real hosts (Ott, Sparks, Mayer-Patel, INFOCOM 2004, slides Fig. 2
//! and 3, "Implementation and evaluation"): a UDP proxy in front of unmodified applications.
//!
//! The slides' implementation nests the CP header "within the first 20 bytes of application
//! data" of UDP packets. concord's aggregation point does the same as a proxy, so that the
//! applications stay unmodified:
//!
//! - **Local role.** Each flow of the cluster application sends plain UDP datagrams to one port
//!   of the AP ([`ApFlow::listen`]). The AP queues them per flow (at most
//!   [`ApSetup::queue_limit`] datagrams; more are dropped and counted, the application's own
//!   socket buffer overflowing) and sends the aggregate to the remote AP as UDP datagrams whose
//!   payload is the CP header followed by the application's datagram. It sends at the bandwidth
//!   concord-cc's [`AggregationPoint`] makes available to the application (TFRC, RFC 5348, on
//!   the aggregate; with BFLD, m flowshares), taking the flows' queues in round robin: the
//!   slides leave the split to the application, and an equal split is theirs in Fig. 5-10.
//! - **Remote role.** A datagram from the other AP is read by [`AggregationPoint::on_inbound`]
//!   (probe for the echo and the loss report, feedback for this AP's own aggregate); the CP
//!   header is stripped and the application's datagram delivered to the flow's destination
//!   ([`ApFlow::deliver`]). Feedback the reverse traffic cannot carry leaves every 25 ms in a
//!   control message (flag C) to the other AP.
//!
//! [`ApCore`] is the sans-IO part (datagrams and `now` in, datagrams out, counters);
//! [`run_ap`] drives it on UDP sockets.

use crate::sys::wait_readable;
use crate::time_average::TimeAverage;
use concord_cc::cp::{
    AggregationPoint, ApConfig, AppConfig, CpHeader, Flowshares, Inbound, Outbound,
};
use concord_cc::rng::Rng;
use concord_cc::tfrc::TfrcConfig;
use concord_cc::time::{Duration, Instant};
use concord_cc::units::Rate;
use std::collections::VecDeque;
use std::fmt::Write as _;
use std::net::{SocketAddr, UdpSocket};
use std::os::fd::AsRawFd;

/// IP and UDP header bytes of an application's datagram: the packet size the AP schedules and
/// TFRC counts is the application's IP packet (payload + 28), as the simulator's C-UDP packet.
pub const UDP_IP: usize = 28;
/// The largest datagram the AP takes from an application or the other AP.
pub const MAX_DATAGRAM: usize = 65_535;

/// One flow of the application at this AP.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ApFlow {
    /// Local role: the address the application's flow sends to (`None` if this AP does not
    /// send the flow).
    pub listen: Option<SocketAddr>,
    /// Remote role: where the flow's datagrams are delivered (`None` if this AP does not
    /// receive the flow).
    pub deliver: Option<SocketAddr>,
}

/// An aggregation point's setting.
#[derive(Clone, Debug, PartialEq)]
pub struct ApSetup {
    /// The C-to-C application id.
    pub app: u32,
    /// How many flowshares the application's aggregate takes, and how (single, or BFLD with m).
    pub flowshares: Flowshares,
    /// The segment size s of TFRC, bytes (the application's IP packet, 1000 in Table I).
    pub segment_size: u64,
    /// The flows, by flow id (their index).
    pub flows: Vec<ApFlow>,
    /// The most datagrams queued per flow before the AP drops the application's datagrams.
    pub queue_limit: usize,
    /// The AP's socket towards the other AP.
    pub bind: SocketAddr,
    /// The other AP.
    pub peer: SocketAddr,
    /// The seed of BFLD's draws.
    pub seed: u64,
    /// The window `[from, to)` over which the status gives the time-weighted means of the
    /// flowshare rate X, the loss event rate p and the RTT R (`None`: no means).
    pub measure: Option<(Instant, Instant)>,
}

/// Counters of an aggregation point.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ApCounters {
    /// Application datagrams taken into the flows' queues.
    pub app_in: u64,
    /// Application datagrams dropped because their flow's queue was full.
    pub app_dropped: u64,
    /// Aggregate datagrams sent to the other AP (CP header + application datagram).
    pub cp_sent: u64,
    /// Control messages sent to the other AP.
    pub control_sent: u64,
    /// Datagrams from the other AP delivered to a destination.
    pub delivered: u64,
    /// Control messages taken from the other AP.
    pub control_received: u64,
    /// Datagrams from the other AP that are not CP (bad header), for an unknown flow, or of
    /// another application: counted and ignored.
    pub bad_in: u64,
    /// Aggregate datagrams sent more than one gap after they were due: the caller woke so
    /// late that the one packet of pacing credit did not cover it.
    pub late_sends: u64,
    /// The sending time those late datagrams lost beyond the one packet of credit, us: the
    /// aggregate sent this much less than its estimate allowed because the AP was not run.
    pub pacing_lost_us: u64,
}

/// The sans-IO aggregation point: both roles for one application.
#[derive(Debug)]
pub struct ApCore {
    /// The setting.
    setup: ApSetup,
    /// concord-cc's aggregation point.
    ap: AggregationPoint,
    /// The flows' queues of application datagrams (payloads).
    queues: Vec<VecDeque<Vec<u8>>>,
    /// The flow the round robin serves next.
    next_flow: usize,
    /// The nominal send time and size (bytes) of the last aggregate datagram; `None` before
    /// the first.
    last_sent: Option<(Instant, u64)>,
    /// Counters.
    counters: ApCounters,
    /// Bytes delivered per flow (application payload), for the sink-side count.
    delivered_bytes: Vec<u64>,
    /// Time-weighted means over `setup.measure` of X (bit/s), p and R (s).
    means: Option<[TimeAverage; 3]>,
}

/// Why an aggregation point cannot be set up.
#[derive(Debug, thiserror::Error)]
pub enum ApSetupError {
    /// concord-cc refused the configuration.
    #[error("aggregation point: {0}")]
    Config(#[from] concord_cc::cp::ApConfigError),
    /// No flow.
    #[error("the application has no flow; give at least one")]
    NoFlows,
    /// A queue limit of 0.
    #[error("queue_limit is 0; give the datagrams a flow may queue at the AP")]
    ZeroQueue,
    /// A socket.
    #[error("socket: {0}")]
    Io(#[from] std::io::Error),
}

impl ApCore {
    /// An aggregation point for `setup.app`, its controller started at `now`.
    pub fn new(setup: ApSetup, now: Instant) -> Result<ApCore, ApSetupError> {
        if setup.flows.is_empty() {
            return Err(ApSetupError::NoFlows);
        }
        if setup.queue_limit == 0 {
            return Err(ApSetupError::ZeroQueue);
        }
        let mut ap = AggregationPoint::new(ApConfig::default(), Rng::new(setup.seed))?;
        let config = AppConfig {
            flowshares: setup.flowshares,
            tfrc: TfrcConfig {
                segment_size: setup.segment_size,
                ..TfrcConfig::default()
            },
            ..AppConfig::default()
        };
        if setup.flows.iter().any(|f| f.listen.is_some()) {
            ap.add_application(now, setup.app, config)?;
        }
        let n = setup.flows.len();
        let means = setup
            .measure
            .map(|(a, b)| std::array::from_fn(|_| TimeAverage::new(a, b)));
        Ok(ApCore {
            means,
            setup,
            ap,
            queues: vec![VecDeque::new(); n],
            next_flow: 0,
            last_sent: None,
            counters: ApCounters::default(),
            delivered_bytes: vec![0; n],
        })
    }

    /// An application datagram of flow `flow` arrived at `now`; queued or dropped.
    pub fn on_app_datagram(&mut self, flow: usize, payload: &[u8]) {
        let Some(q) = self.queues.get_mut(flow) else {
            return;
        };
        if q.len() >= self.setup.queue_limit {
            self.counters.app_dropped += 1;
            return;
        }
        q.push_back(payload.to_vec());
        self.counters.app_in += 1;
    }

    /// The bandwidth available to the application's aggregate now (m flowshares).
    pub fn available_bandwidth(&self) -> Rate {
        self.ap.available_bandwidth(self.setup.app)
    }

    /// The gap between aggregate datagrams of `size` bytes at the available bandwidth (1 s
    /// while it is zero: TFRC's rate before its first feedback is one packet per second).
    fn gap(&self, size: u64) -> Duration {
        let rate = self.available_bandwidth();
        if rate == Rate::ZERO {
            Duration::from_secs(1)
        } else {
            rate.transmit_time(size)
        }
    }

    /// When the next aggregate datagram may leave: one gap at the available bandwidth *now*
    /// after the nominal send time of the last, so that a new estimate takes effect for the
    /// datagram already waiting (as TFRC's own pacing, RFC 5348 section 4.6, and as the
    /// simulator's C-UDP endpoints re-arm on a new estimate).
    pub fn next_send_time(&self) -> Instant {
        self.last_sent
            .map_or(Instant::ZERO, |(t, size)| t + self.gap(size))
    }

    /// The next aggregate datagram for the other AP, if one is due at `now`: the next flow in
    /// round robin with a queued datagram, stamped by the AP. Call until `None`.
    pub fn poll_transmit(&mut self, now: Instant) -> Option<Vec<u8>> {
        let scheduled = self.next_send_time();
        if now < scheduled {
            return None;
        }
        let n = self.queues.len();
        let flow = (0..n)
            .map(|k| (self.next_flow + k) % n)
            .find(|&f| !self.queues[f].is_empty())?;
        self.next_flow = (flow + 1) % n;
        let payload = self.queues[flow].pop_front()?;
        let size = (payload.len() + UDP_IP) as u64;
        let mut h = CpHeader::new(self.setup.app, flow as u32);
        if matches!(self.ap.on_outbound(now, &mut h, size), Outbound::Rejected) {
            return None;
        }
        // One packet of credit, no more, for a caller woken late (as TFRC's own pacing,
        // RFC 5348 section 4.6).
        let nominal = if self.last_sent.is_some() {
            let gap = self.gap(size);
            let lost = now.saturating_since(scheduled).saturating_sub(gap);
            if lost > Duration::ZERO {
                self.counters.late_sends += 1;
                self.counters.pacing_lost_us += lost.as_micros();
            }
            scheduled.max(now - gap)
        } else {
            now
        };
        self.last_sent = Some((nominal, size));
        let mut out = Vec::with_capacity(h.encoded_len() + payload.len());
        if h.encode(&mut out).is_err() {
            return None;
        }
        out.extend_from_slice(&payload);
        self.counters.cp_sent += 1;
        Some(out)
    }

    /// A datagram from the other AP arrived at `now`: the flow and application datagram to
    /// deliver, or `None` (a control message, or something counted as bad).
    pub fn on_peer_datagram(&mut self, now: Instant, bytes: &[u8]) -> Option<(usize, Vec<u8>)> {
        let Ok((mut h, len)) = CpHeader::decode(bytes) else {
            self.counters.bad_in += 1;
            return None;
        };
        let known_flow = self
            .setup
            .flows
            .get(h.flow as usize)
            .is_some_and(|f| f.deliver.is_some());
        if h.app != self.setup.app || (!h.control && !known_flow) {
            self.counters.bad_in += 1;
            return None;
        }
        match self.ap.on_inbound(now, &mut h) {
            Inbound::Consumed => {
                self.counters.control_received += 1;
                None
            }
            Inbound::Deliver | Inbound::Unmanaged => {
                let payload = bytes.get(len..)?.to_vec();
                let flow = h.flow as usize;
                self.counters.delivered += 1;
                if let Some(b) = self.delivered_bytes.get_mut(flow) {
                    *b += payload.len() as u64;
                }
                Some((flow, payload))
            }
        }
    }

    /// The next control message due at `now` for the other AP (the AP's timers run first).
    pub fn poll_control(&mut self, now: Instant) -> Option<Vec<u8>> {
        self.ap.handle_timeout(now);
        let h = self.ap.poll_feedback(now)?;
        let mut out = Vec::new();
        h.encode(&mut out).ok()?;
        self.counters.control_sent += 1;
        Some(out)
    }

    /// When the AP must next be called: the next aggregate datagram's time while a queue holds
    /// one, or the AP's timers.
    pub fn poll_timeout(&self) -> Option<Instant> {
        let send = if self.queues.iter().any(|q| !q.is_empty()) {
            Some(self.next_send_time())
        } else {
            None
        };
        [send, self.ap.poll_timeout()].into_iter().flatten().min()
    }

    /// Counters.
    pub fn counters(&self) -> ApCounters {
        self.counters
    }

    /// Samples X, p and R at `now` for their means over `setup.measure` (each value holds
    /// until the next sample).
    pub fn sample(&mut self, now: Instant) {
        let Some(st) = self.ap.status(self.setup.app) else {
            return;
        };
        if let Some([x, p, r]) = &mut self.means {
            x.sample(now, st.flowshare_rate.bps() as f64);
            p.sample(now, st.loss_event_rate);
            if let Some(rtt) = st.rtt {
                r.sample(now, rtt.as_secs_f64());
            }
        }
    }

    /// The status as `key value` lines: counters, the application's estimate and BFLD's state.
    pub fn status(&self) -> String {
        let c = self.counters;
        let mut s = format!(
            "app_in {}\napp_dropped {}\ncp_sent {}\ncontrol_sent {}\ndelivered {}\n\
             control_received {}\nbad_in {}\nlate_sends {}\npacing_lost_us {}\n",
            c.app_in,
            c.app_dropped,
            c.cp_sent,
            c.control_sent,
            c.delivered,
            c.control_received,
            c.bad_in,
            c.late_sends,
            c.pacing_lost_us
        );
        if let Some(st) = self.ap.status(self.setup.app) {
            let _ = write!(
                s,
                "available_bps {}\nflowshare_bps {}\nrtt_us {}\nloss_event_rate_ppm {}\n\
                 bfld_offered {}\nbfld_kept {}\nsettled_arrived {}\nsettled_lost {}\n\
                 loss_events {}\n",
                st.available_bandwidth.bps(),
                st.flowshare_rate.bps(),
                st.rtt.map_or(0, |r| r.as_micros()),
                (st.loss_event_rate * 1e6).round() as u64,
                st.bfld_offered_kept.0,
                st.bfld_offered_kept.1,
                st.aggregate.arrived,
                st.aggregate.lost,
                st.aggregate.loss_events,
            );
        }
        if let Some([x, p, r]) = &self.means {
            let _ = write!(
                s,
                "mean_flowshare_bps {}\nmean_loss_event_rate_ppm {}\nmean_rtt_us {}\n",
                x.mean().map_or(0, |v| v.round() as u64),
                p.mean().map_or(0, |v| (v * 1e6).round() as u64),
                r.mean().map_or(0, |v| (v * 1e6).round() as u64),
            );
        }
        for (f, b) in self.delivered_bytes.iter().enumerate() {
            let _ = writeln!(s, "flow.{f}.delivered_bytes {b}");
        }
        s
    }
}

/// Runs an aggregation point on UDP sockets until `stop(now)` says so; returns its counters and
/// its final status. `clock` gives `now`; with `status`, the status is written to that file
/// every 200 ms (as `concord-router run --status`).
pub fn run_ap(
    setup: ApSetup,
    clock: impl Fn() -> Instant,
    mut stop: impl FnMut(Instant) -> bool,
    status: Option<&std::path::Path>,
) -> Result<(ApCounters, String), ApSetupError> {
    let peer_sock = UdpSocket::bind(setup.bind)?;
    peer_sock.set_nonblocking(true)?;
    let mut app_socks = Vec::new();
    for (i, f) in setup.flows.iter().enumerate() {
        if let Some(a) = f.listen {
            let s = UdpSocket::bind(a)?;
            s.set_nonblocking(true)?;
            app_socks.push((i, s));
        }
    }
    let out_sock = UdpSocket::bind(SocketAddr::from(([0, 0, 0, 0], 0)))?;
    let peer = setup.peer;
    let deliver: Vec<Option<SocketAddr>> = setup.flows.iter().map(|f| f.deliver).collect();
    let mut core = ApCore::new(setup, clock())?;
    let mut fds = vec![peer_sock.as_raw_fd()];
    fds.extend(app_socks.iter().map(|(_, s)| s.as_raw_fd()));
    let mut ready = Vec::new();
    let mut buf = vec![0u8; MAX_DATAGRAM];
    let mut status_due = Instant::ZERO;
    loop {
        let now = clock();
        if stop(now) {
            break;
        }
        if let Some(path) = status.filter(|_| now >= status_due) {
            crate::run::write_status(path, &core.status())?;
            status_due = now + Duration::from_millis(200);
        }
        // At most 5 ms asleep, so that `stop` is asked often.
        let wait = core
            .poll_timeout()
            .map_or(5_000_000, |t| t.saturating_since(now).as_nanos())
            .min(5_000_000);
        wait_readable(&fds, Some(wait), &mut ready)?;
        let now = clock();
        while let Ok((n, _)) = peer_sock.recv_from(&mut buf) {
            if let Some((flow, payload)) = core.on_peer_datagram(now, &buf[..n]) {
                if let Some(Some(to)) = deliver.get(flow) {
                    let _ = out_sock.send_to(&payload, to);
                }
            }
            // The loss report is asked for after each datagram, not after the batch: it leaves
            // at once when MAX_GAPS / 2 new gaps wait, and a batch with more than MAX_GAPS gaps
            // would lose the oldest, whose packets the other AP would then count as arrived.
            while let Some(d) = core.poll_control(now) {
                let _ = peer_sock.send_to(&d, peer);
            }
        }
        for (flow, s) in &app_socks {
            // A bounded batch per socket, so one busy flow cannot starve the loop.
            for _ in 0..64 {
                match s.recv_from(&mut buf) {
                    Ok((n, _)) => core.on_app_datagram(*flow, &buf[..n]),
                    Err(_) => break,
                }
            }
        }
        let now = clock();
        core.sample(now);
        while let Some(d) = core.poll_transmit(now) {
            let _ = peer_sock.send_to(&d, peer);
        }
        while let Some(d) = core.poll_control(now) {
            let _ = peer_sock.send_to(&d, peer);
        }
    }
    if let Some(path) = status {
        crate::run::write_status(path, &core.status())?;
    }
    Ok((core.counters(), core.status()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn addr(p: u16) -> SocketAddr {
        SocketAddr::from(([127, 0, 0, 1], p))
    }

    fn setup(local: bool, flowshares: Flowshares) -> ApSetup {
        let flows = (0..4)
            .map(|i| ApFlow {
                listen: local.then(|| addr(9100 + i)),
                deliver: (!local).then(|| addr(9200 + i)),
            })
            .collect();
        ApSetup {
            app: 7,
            flowshares,
            segment_size: 1000,
            flows,
            queue_limit: 2,
            bind: addr(9000),
            peer: addr(9001),
            seed: 1,
            measure: None,
        }
    }

    fn us(u: u64) -> Instant {
        Instant::from_micros(u)
    }

    fn core(local: bool) -> ApCore {
        ApCore::new(setup(local, Flowshares::Single), us(0)).unwrap_or_else(|e| panic!("{e}"))
    }

    #[test]
    fn a_full_flow_queue_drops_the_applications_datagram_and_counts_it() {
        let mut a = core(true);
        for _ in 0..3 {
            a.on_app_datagram(1, &[0; 972]);
        }
        assert_eq!(a.counters().app_in, 2);
        assert_eq!(a.counters().app_dropped, 1);
        // A flow the AP does not have is ignored.
        a.on_app_datagram(9, &[0; 10]);
        assert_eq!(a.counters().app_in, 2);
    }

    #[test]
    fn the_aggregate_is_sent_in_round_robin_with_the_cp_header_first() {
        let mut a = core(true);
        // 972-byte datagrams: 1000-byte IP packets, TFRC's segment size.
        let d = |tag: u8| vec![tag; 972];
        a.on_app_datagram(2, &d(b'a'));
        a.on_app_datagram(2, &d(b'b'));
        a.on_app_datagram(0, &d(b'z'));
        let first = a.poll_transmit(us(0)).unwrap_or_default();
        let (h, len) = CpHeader::decode(&first).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!((h.app, h.flow, h.control), (7, 0, false));
        assert_eq!(h.probe.map(|p| p.seq), Some(0));
        assert_eq!(&first[len..], &d(b'z')[..]);
        // TFRC before its first feedback: s bytes per second (RFC 5348 section 4.2), so the
        // next 1000-byte packet waits 1 s.
        assert_eq!(a.available_bandwidth(), Rate::from_bps(8_000));
        assert_eq!(a.poll_transmit(us(999_999)), None);
        let second = a.poll_transmit(us(1_000_000)).unwrap_or_default();
        let (h, len) = CpHeader::decode(&second).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!((h.flow, h.probe.map(|p| p.seq)), (2, Some(1)));
        assert_eq!(&second[len..], &d(b'a')[..]);
        assert_eq!(a.counters().cp_sent, 2);
    }

    #[test]
    fn a_send_later_than_one_gap_past_its_time_is_counted_with_the_time_it_lost() {
        let mut a = core(true);
        for _ in 0..2 {
            a.on_app_datagram(0, &[0; 972]);
        }
        assert!(a.poll_transmit(us(0)).is_some());
        // Before feedback the gap is 1 s: the second is due at 1 s; sent at 3.5 s it used its
        // one packet of credit (1 s) and lost 1.5 s.
        assert!(a.poll_transmit(us(3_500_000)).is_some());
        assert_eq!(
            (a.counters().late_sends, a.counters().pacing_lost_us),
            (1, 1_500_000)
        );
        assert!(a
            .status()
            .contains("late_sends 1\npacing_lost_us 1500000\n"));
    }

    #[test]
    fn the_status_gives_the_means_of_x_p_and_r_over_the_window() {
        let mut s = setup(true, Flowshares::Single);
        s.measure = Some((us(0), us(2_000_000)));
        let mut a = ApCore::new(s, us(0)).unwrap_or_else(|e| panic!("{e}"));
        // Before feedback X is one packet per second, 8000 bit/s, p 0, no R: X's mean over
        // the window is 8000, p's 0, R's none yet.
        a.sample(us(0));
        a.sample(us(2_000_000));
        let st = a.status();
        assert!(st.contains("mean_flowshare_bps 8000\n"), "{st}");
        assert!(
            st.contains("mean_loss_event_rate_ppm 0\nmean_rtt_us 0\n"),
            "{st}"
        );
    }

    #[test]
    fn the_remote_ap_strips_the_header_and_delivers_the_flows_datagram() {
        let (mut a, mut b) = (core(true), core(false));
        a.on_app_datagram(3, b"payload");
        let d = a.poll_transmit(us(0)).unwrap_or_default();
        assert_eq!(
            b.on_peer_datagram(us(20_000), &d),
            Some((3, b"payload".to_vec()))
        );
        assert_eq!(b.counters().delivered, 1);
        assert!(b.status().contains("flow.3.delivered_bytes 7\n"));
        // Its feedback (echo and loss report) leaves 25 ms later in a control message, which
        // the local AP consumes: RTT = 45 ms - 0 - 25 ms echo delay = 20 ms.
        assert_eq!(b.poll_control(us(44_999)), None);
        let c = b.poll_control(us(45_000)).unwrap_or_default();
        assert_eq!(a.on_peer_datagram(us(45_000), &c), None);
        assert_eq!(a.counters().control_received, 1);
        assert!(a.status().contains("rtt_us 20000\n"), "{}", a.status());
    }

    #[test]
    fn a_new_estimate_takes_effect_for_the_datagram_already_waiting() {
        let (mut a, mut b) = (core(true), core(false));
        for _ in 0..2 {
            a.on_app_datagram(0, &[0; 972]);
        }
        let d = a.poll_transmit(us(0)).unwrap_or_default();
        // At 1 packet per second the second datagram would wait until 1 s.
        assert_eq!(a.next_send_time(), us(1_000_000));
        b.on_peer_datagram(us(10_000), &d);
        let c = b.poll_control(us(35_000)).unwrap_or_default();
        a.on_peer_datagram(us(40_000), &c);
        // The first feedback gives R = 40 ms - 0 - 25 ms = 15 ms and TFRC's initial rate
        // W_init / R = 4000 B / 15 ms (RFC 5348 section 4.2): the waiting datagram is due one
        // gap at that rate after the first, 3.75 ms (rounded up to the nanosecond), so at once.
        assert_eq!(
            a.available_bandwidth(),
            Rate::from_bps_f64(4000.0 * 8.0 / 0.015)
        );
        assert_eq!(a.next_send_time(), Instant::from_nanos(3_750_001));
        assert!(a.poll_transmit(us(40_000)).is_some());
    }

    /// The local AP `a` sends 60 datagrams (1 s apart: its rate before feedback); the remote AP
    /// `b` gets every other one at 60.5 s, a gap after each. Returns the packets `a` settles
    /// as lost once `b`'s reports are in, with `b`'s reports asked for after each datagram
    /// (`per_datagram`) or once after the whole batch.
    fn lost_settled(per_datagram: bool) -> (u64, String) {
        let (mut a, mut b) = (core(true), core(false));
        let mut sent = Vec::new();
        for k in 0..60u64 {
            a.on_app_datagram(0, &[0; 972]);
            sent.extend(a.poll_transmit(us(k * 1_000_000)));
        }
        assert_eq!(sent.len(), 60);
        let now = us(60_500_000);
        let mut reports = Vec::new();
        for d in sent.iter().step_by(2) {
            assert!(b.on_peer_datagram(now, d).is_some());
            if per_datagram {
                reports.extend(std::iter::from_fn(|| b.poll_control(now)));
            }
        }
        // What is left leaves with the feedback interval (25 ms).
        let later = now + Duration::from_millis(25);
        reports.extend(std::iter::from_fn(|| b.poll_control(later)));
        for r in &reports {
            assert_eq!(a.on_peer_datagram(later, r), None);
        }
        let st = a.status();
        let lost = st
            .lines()
            .find_map(|l| l.strip_prefix("settled_lost ")?.parse().ok())
            .unwrap_or(u64::MAX);
        (lost, st)
    }

    #[test]
    fn every_gap_of_a_batch_reaches_the_other_ap_when_reports_are_asked_for_per_datagram() {
        // 30 datagrams arrive with 29 one-packet gaps between them (the last datagram's gap is
        // not yet known: RFC 5348 section 5.1's NDUPACK = 3 later arrivals declare a loss, so
        // the gaps before the last two arrivals are not declared yet: 27 are).
        let (lost, st) = lost_settled(true);
        assert_eq!(lost, 27, "{st}");
        // The same batch with one report after it: the reporter keeps its 16 most recent gaps
        // (MAX_GAPS), and the older packets' losses are never told.
        let (lost, st) = lost_settled(false);
        assert_eq!(lost, 16, "{st}");
    }

    #[test]
    fn garbage_and_other_applications_from_the_peer_are_counted_and_ignored() {
        let mut b = core(false);
        assert_eq!(b.on_peer_datagram(us(1), &[]), None);
        assert_eq!(b.on_peer_datagram(us(1), &[9; 64]), None);
        let mut other = Vec::new();
        CpHeader::new(8, 0)
            .encode(&mut other)
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(b.on_peer_datagram(us(1), &other), None);
        let mut unknown_flow = Vec::new();
        CpHeader::new(7, 40)
            .encode(&mut unknown_flow)
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(b.on_peer_datagram(us(1), &unknown_flow), None);
        assert_eq!(b.counters().bad_in, 4);
        assert_eq!(b.counters().delivered, 0);
    }

    #[test]
    fn bfld_makes_m_flowshares_available() {
        let a = ApCore::new(setup(true, Flowshares::Bfld { m: 4 }), us(0))
            .unwrap_or_else(|e| panic!("{e}"));
        let st = a.status();
        let get = |k: &str| {
            st.lines()
                .find_map(|l| l.strip_prefix(k)?.trim().parse::<u64>().ok())
                .unwrap_or(0)
        };
        assert_eq!(get("available_bps "), 4 * get("flowshare_bps "));
        assert!(get("flowshare_bps ") > 0);
    }

    #[test]
    fn an_impossible_setting_is_refused_with_its_reason() {
        let mut s = setup(true, Flowshares::Single);
        s.queue_limit = 0;
        assert!(matches!(
            ApCore::new(s, us(0)),
            Err(ApSetupError::ZeroQueue)
        ));
        let mut s = setup(true, Flowshares::Bfld { m: 0 });
        assert!(ApCore::new(s.clone(), us(0)).is_err());
        s.flows.clear();
        assert!(matches!(ApCore::new(s, us(0)), Err(ApSetupError::NoFlows)));
    }
}
