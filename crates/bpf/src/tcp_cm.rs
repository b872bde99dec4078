//! TCP/CM on kernel sockets (CM paper section 4, "TCP/CM"): every `concord_cm` socket to one
//! destination is a flow of that destination's macroflow in a [`CongestionManager`], the one
//! the CM daemon runs, embedded in the agent. ACKs reach the CM as `cm_update` with the bytes
//! acknowledged and the RTT sample (implicit feedback, RFC 3124 section 4.2); the kernel's
//! congestion signals as `cm_update` with the loss mode (fast retransmit: transient; the
//! retransmission timer: persistent; ECN). Each socket's window is its share of the macroflow's
//! window, `cwnd * share`, the share set by the CM scheduler's weights (paper section 2.4), so
//! the sockets to one host together hold one TCP's window.
//!
//! One congestion event, one reduction. A queue that overflows drops packets of several of a
//! macroflow's sockets, and each socket's kernel detects its own loss when its own ACKs tell
//! it, up to a few RTTs apart when its share of the window is small. A single TCP counts
//! every loss of data sent before its reduction as part of the event it reduced for (RFC 6582
//! section 3.2: a new reduction only once `snd_una` passes `recover`). Across the macroflow
//! the datapath does the same: each socket takes its `snd_nxt` as its recover point when it
//! learns of a macroflow reduction ([`Decision::reductions`]), and a later loss whose first
//! hole lies below it is reported as part of that event ([`Record::same_event`]); the CM is
//! not told of it again. A timeout is always told.

use crate::protocol::{ca_state, Decision, Record, RecordKind};
use concord_cc::cm::{
    CmConfig, CmConfigError, CmUpdate, CongestionManager, FlowId, FlowKey, LossMode, MacroflowId,
};
use concord_cc::rng::Rng;
use concord_cc::{Duration, Instant};
use std::collections::BTreeMap;

/// The most bytes one `cm_notify` reports: one IPv4 packet, as the CM daemon accepts.
pub const MAX_NOTIFY: u64 = 65_535;

/// A socket's flow.
#[derive(Clone, Copy, Debug)]
struct CmSocket {
    /// Its CM flow.
    flow: FlowId,
    /// The flow's key.
    key: FlowKey,
    /// Sender MSS, in bytes.
    mss: u64,
    /// Congestion reductions the CM has been told of.
    loss_events: u32,
}

/// A flow's view of its macroflow: what a socket's window is made of.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FlowWindow {
    /// The macroflow.
    pub macroflow: MacroflowId,
    /// The macroflow's congestion window, in bytes.
    pub cwnd: u64,
    /// The macroflow's slow-start threshold, in bytes (`u64::MAX`: none yet).
    pub ssthresh: u64,
    /// The flow's share of the macroflow, by the scheduler's weights (paper section 2.4), in
    /// [0, 1].
    pub share: f64,
}

/// The window of `flow` in `cm`, if the flow is open.
pub fn flow_window(cm: &CongestionManager, flow: FlowId) -> Option<FlowWindow> {
    let id = cm.get_macroflow(flow).ok()?;
    let mf = cm.macroflow(id)?;
    Some(FlowWindow {
        macroflow: id,
        cwnd: mf.aimd().cwnd(),
        ssthresh: mf.aimd().ssthresh(),
        share: mf.scheduler().share(flow)?,
    })
}

/// Where the Congestion Manager of the `concord_cm` sockets lives: in the agent ([`LocalCm`])
/// or in the CM daemon, beside its API clients' flows (`concordd --tcp`). The calls are the
/// CM API's (paper section 3.1; RFC 3124 section 4.2) as TCP/CM makes them.
pub trait CmHost {
    /// The CM's time for a record the datapath stamped `record_ns` (CLOCK_MONOTONIC).
    fn now(&self, record_ns: u64) -> Instant;
    /// `cm_open`: a flow for the socket with `key`; `None` if the CM refuses it.
    fn open(&mut self, now: Instant, key: FlowKey) -> Option<FlowId>;
    /// `cm_close`.
    fn close(&mut self, now: Instant, flow: FlowId);
    /// `cm_notify`: the socket sent `nsent` bytes without a grant (the kernel sends when its
    /// window allows, not on a grant), which take their time from the macroflow's pacing.
    fn notify(&mut self, now: Instant, flow: FlowId, nsent: u64);
    /// `cm_update`; false if the CM refused it.
    fn update(&mut self, now: Instant, flow: FlowId, update: &CmUpdate) -> bool;
    /// The flow's macroflow window and share, if the flow is open.
    fn window(&self, flow: FlowId) -> Option<FlowWindow>;
    /// Runs what is due by `now`; true if the windows may have changed.
    fn on_tick(&mut self, now: Instant) -> bool;
}

/// A CM of the agent's own, for the `concord_cm` sockets alone; its events go nowhere (no
/// socket asks for grants).
#[derive(Clone, Debug)]
pub struct LocalCm {
    cm: CongestionManager,
}

impl LocalCm {
    /// A manager with no flows.
    pub fn new(config: CmConfig) -> Result<LocalCm, CmConfigError> {
        Ok(LocalCm {
            cm: CongestionManager::new(config, Rng::new(1))?,
        })
    }

    /// The manager.
    pub fn manager(&self) -> &CongestionManager {
        &self.cm
    }

    fn drain(&mut self) {
        while self.cm.poll_event().is_some() {}
    }
}

impl CmHost for LocalCm {
    fn now(&self, record_ns: u64) -> Instant {
        Instant::from_nanos(record_ns)
    }

    fn open(&mut self, now: Instant, key: FlowKey) -> Option<FlowId> {
        let f = self.cm.open(now, key).ok();
        self.drain();
        f
    }

    fn close(&mut self, now: Instant, flow: FlowId) {
        // The flow is known to the manager: it was opened for this socket.
        let _ = self.cm.close(now, flow);
        self.drain();
    }

    fn notify(&mut self, now: Instant, flow: FlowId, nsent: u64) {
        let _ = self.cm.notify(now, flow, nsent);
        self.drain();
    }

    fn update(&mut self, now: Instant, flow: FlowId, update: &CmUpdate) -> bool {
        let ok = self.cm.update(now, flow, update).is_ok();
        self.drain();
        ok
    }

    fn window(&self, flow: FlowId) -> Option<FlowWindow> {
        flow_window(&self.cm, flow)
    }

    fn on_tick(&mut self, now: Instant) -> bool {
        let due = self.cm.poll_timeout().is_some_and(|t| t <= now);
        if due {
            self.cm.on_timeout(now);
        }
        self.drain();
        due
    }
}

/// The CM of the agent's `concord_cm` sockets.
#[derive(Clone, Debug)]
pub struct TcpCm<H: CmHost = LocalCm> {
    cm: H,
    sockets: BTreeMap<u64, CmSocket>,
    /// Which socket holds each key.
    keys: BTreeMap<FlowKey, u64>,
    /// Something changed since the last [`TcpCm::decisions`].
    changed: bool,
    /// Each macroflow's reductions (window decreases on a congestion signal) so far.
    reductions: BTreeMap<MacroflowId, u32>,
    /// Congestion signals the datapath reported as part of an event already answered.
    same_event_signals: u64,
}

/// The CM configuration for kernel sockets: the MTU is the sockets' MSS (1448 bytes with
/// timestamps on Ethernet) and the initial window ten of them, the kernel's own IW (RFC 6928).
pub fn kernel_cm_config(mss: u64) -> CmConfig {
    CmConfig {
        mtu: mss,
        initial_cwnd: 10 * mss,
        ..CmConfig::default()
    }
}

impl TcpCm<LocalCm> {
    /// A CM of its own with no flows.
    pub fn new(config: CmConfig) -> Result<TcpCm<LocalCm>, CmConfigError> {
        Ok(TcpCm::with_host(LocalCm::new(config)?))
    }

    /// The manager.
    pub fn manager(&self) -> &CongestionManager {
        self.cm.manager()
    }
}

impl<H: CmHost> TcpCm<H> {
    /// No sockets yet, their flows to be opened in `host`.
    pub fn with_host(host: H) -> TcpCm<H> {
        TcpCm {
            cm: host,
            sockets: BTreeMap::new(),
            keys: BTreeMap::new(),
            changed: false,
            reductions: BTreeMap::new(),
            same_event_signals: 0,
        }
    }

    /// Where the CM lives.
    pub fn host(&self) -> &H {
        &self.cm
    }

    /// The CM flow of socket `sock_id`, if it has one.
    pub fn flow_of(&self, sock_id: u64) -> Option<FlowId> {
        self.sockets.get(&sock_id).map(|s| s.flow)
    }

    /// Reductions of the macroflow of socket `sock_id` so far.
    pub fn reductions_of(&self, sock_id: u64) -> u32 {
        self.sockets
            .get(&sock_id)
            .and_then(|s| self.cm.window(s.flow))
            .and_then(|w| self.reductions.get(&w.macroflow).copied())
            .unwrap_or(0)
    }

    /// Congestion signals that were part of an event the macroflow had already answered.
    pub fn same_event_signals(&self) -> u64 {
        self.same_event_signals
    }

    /// How many sockets the CM holds.
    pub fn len(&self) -> usize {
        self.sockets.len()
    }

    /// True if the CM holds no socket.
    pub fn is_empty(&self) -> bool {
        self.sockets.is_empty()
    }

    /// Opens a flow for the socket of `r`, first closing a flow on the same addresses and ports
    /// that was left open (its socket's release record was lost when the ring buffer was full).
    fn open(&mut self, now: Instant, r: &Record) -> Option<CmSocket> {
        let key = FlowKey::new(r.daddr, r.dport, r.sport);
        if let Some(old) = self.keys.get(&key).copied() {
            self.close(now, old);
        }
        let flow = self.cm.open(now, key)?;
        let s = CmSocket {
            flow,
            key,
            mss: u64::from(r.mss.max(1)),
            loss_events: r.loss_events,
        };
        self.sockets.insert(r.sock_id, s);
        self.keys.insert(key, r.sock_id);
        self.changed = true;
        Some(s)
    }

    fn close(&mut self, now: Instant, sock_id: u64) {
        if let Some(s) = self.sockets.remove(&sock_id) {
            self.keys.remove(&s.key);
            self.cm.close(now, s.flow);
            self.changed = true;
        }
    }

    /// Feeds one record of a `concord_cm` socket.
    pub fn on_record(&mut self, r: &Record) {
        let now = self.cm.now(r.time_ns);
        if r.kind == RecordKind::Release {
            self.close(now, r.sock_id);
            return;
        }
        let s = match self.sockets.get(&r.sock_id) {
            Some(s) => *s,
            None => match self.open(now, r) {
                Some(s) => s,
                None => return,
            },
        };
        let update = match r.kind {
            RecordKind::Ack if r.ca_state < ca_state::CWR => CmUpdate {
                nrecd: u64::from(r.bytes_acked),
                nlost: 0,
                loss_mode: LossMode::NoCongestion,
                rtt: (r.rtt_us > 0).then(|| Duration::from_micros(r.rtt_us as u64)),
            },
            RecordKind::State if r.loss_events > s.loss_events => {
                let loss_mode = match u8::try_from(r.event).unwrap_or(u8::MAX) {
                    ca_state::LOSS => LossMode::Persistent,
                    ca_state::CWR => LossMode::Ecn,
                    _ => LossMode::Transient,
                };
                if let Some(sock) = self.sockets.get_mut(&r.sock_id) {
                    sock.loss_events = r.loss_events;
                }
                if r.same_event && loss_mode != LossMode::Persistent {
                    // Data sent before the macroflow's last reduction: that reduction was the
                    // answer (RFC 6582 section 3.2). The new count goes out with the decision.
                    self.same_event_signals += 1;
                    self.changed = true;
                    return;
                }
                CmUpdate {
                    loss_mode,
                    ..CmUpdate::default()
                }
            }
            _ => return,
        };
        if update.nrecd > 0 {
            // The bytes this ACK acknowledged were sent one RTT ago; TCP/CM notifies each
            // transmission (paper section 4, cm_notify after cmapp_send). The datapath sees
            // ACKs, not transmissions: the ACK clock sends as many bytes as it acknowledges,
            // so they are notified here, at most one packet's worth per call.
            let mut left = update.nrecd;
            while left > 0 {
                let n = left.min(MAX_NOTIFY);
                self.cm.notify(now, s.flow, n);
                left -= n;
            }
        }
        let before = self.cm.window(s.flow).map_or(0, |w| w.cwnd);
        if self.cm.update(now, s.flow, &update) {
            self.changed = true;
        }
        if update.loss_mode != LossMode::NoCongestion {
            if let Some(w) = self.cm.window(s.flow).filter(|w| w.cwnd < before) {
                *self.reductions.entry(w.macroflow).or_insert(0) += 1;
            }
        }
    }

    /// Runs the CM's timers (aging when feedback stops) due by `now`.
    pub fn on_tick(&mut self, now: Instant) {
        if self.cm.on_tick(now) {
            self.changed = true;
        }
    }

    /// Hands out every socket's decision at the next [`TcpCm::decisions`].
    pub fn mark_changed(&mut self) {
        self.changed = true;
    }

    /// Every socket's share of its macroflow's window, stamped `stamp_ns`, if anything changed
    /// since the last call (a change in one flow moves every share of its macroflow).
    pub fn decisions(&mut self, stamp_ns: u64, out: &mut Vec<(u64, Decision)>) {
        if !std::mem::take(&mut self.changed) {
            return;
        }
        for (&id, s) in &self.sockets {
            if let Some(d) = self.decision(s, stamp_ns) {
                out.push((id, d));
            }
        }
    }

    /// One socket's share of its macroflow's window.
    fn decision(&self, s: &CmSocket, stamp_ns: u64) -> Option<Decision> {
        let w = self.cm.window(s.flow)?;
        let share = w.share;
        let seg = |bytes: f64| {
            (bytes / s.mss as f64)
                .ceil()
                .clamp(2.0, f64::from(u32::MAX)) as u32
        };
        let ssthresh = w.ssthresh;
        Some(Decision {
            stamp_ns,
            cwnd: seg(w.cwnd as f64 * share),
            ssthresh: if ssthresh == u64::MAX {
                crate::protocol::INFINITE_SSTHRESH
            } else {
                seg(ssthresh as f64 * share)
            },
            // The macroflow halves on a loss (paper section 2.1): this socket's share of half.
            loss_ssthresh: seg(w.cwnd as f64 / 2.0 * share),
            loss_events: s.loss_events,
            pacing_rate: 0,
            reductions: self.reductions.get(&w.macroflow).copied().unwrap_or(0),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::{Algorithm, INFINITE_SSTHRESH};
    use std::net::Ipv4Addr;

    const MSS: u32 = 1000;

    fn rec(sock_id: u64, kind: RecordKind, dst: Ipv4Addr) -> Record {
        Record {
            sock_id,
            time_ns: 1_000_000_000,
            kind,
            algo: Algorithm::Cm,
            ca_state: ca_state::OPEN,
            ece: false,
            cwnd_limited: true,
            same_event: false,
            event: 0,
            bytes_acked: 0,
            pkts_acked: 0,
            rtt_us: -1,
            srtt_us: 0,
            delivered: 0,
            lost: 0,
            in_flight: 0,
            mss: MSS,
            cwnd: 10,
            ssthresh: INFINITE_SSTHRESH,
            loss_events: 0,
            daddr: dst,
            dport: 5201,
            sport: 40000 + sock_id as u16,
            saddr: Ipv4Addr::new(10, 0, 0, 1),
        }
    }

    fn cm() -> TcpCm {
        TcpCm::new(kernel_cm_config(u64::from(MSS))).expect("valid")
    }

    const HOST: Ipv4Addr = Ipv4Addr::new(10, 0, 0, 2);

    #[test]
    fn sockets_to_one_host_share_one_macroflow_equally() {
        let mut c = cm();
        for id in 1..=4 {
            c.on_record(&rec(id, RecordKind::Init, HOST));
        }
        let m: Vec<_> = (1..=4)
            .map(|id| c.manager().get_macroflow(c.flow_of(id).expect("open")))
            .collect();
        assert!(m.iter().all(|x| *x == m[0]));
        let mut out = Vec::new();
        c.decisions(0, &mut out);
        // Ten segments of initial window in four shares: 2.5 each, rounded up to 3.
        assert_eq!(out.len(), 4);
        assert!(out.iter().all(|(_, d)| d.cwnd == 3));
    }

    #[test]
    fn sockets_to_two_hosts_get_two_macroflows() {
        let mut c = cm();
        c.on_record(&rec(1, RecordKind::Init, HOST));
        c.on_record(&rec(2, RecordKind::Init, Ipv4Addr::new(10, 0, 0, 3)));
        let a = c.manager().get_macroflow(c.flow_of(1).expect("open"));
        let b = c.manager().get_macroflow(c.flow_of(2).expect("open"));
        assert_ne!(a, b);
    }

    #[test]
    fn acks_of_one_socket_grow_every_share() {
        let mut c = cm();
        c.on_record(&rec(1, RecordKind::Init, HOST));
        c.on_record(&rec(2, RecordKind::Init, HOST));
        let mut out = Vec::new();
        c.decisions(0, &mut out);
        let before = out[1].1.cwnd;
        for _ in 0..10 {
            let mut a = rec(1, RecordKind::Ack, HOST);
            a.bytes_acked = MSS;
            a.rtt_us = 50_000;
            c.on_record(&a);
        }
        out.clear();
        c.decisions(0, &mut out);
        // Slow start: ten MSS acknowledged double the 10-segment macroflow window; socket 2,
        // which sent nothing, holds half of it.
        assert_eq!(out[1].0, 2);
        assert!(out[1].1.cwnd > before, "{} > {before}", out[1].1.cwnd);
        assert_eq!(out[1].1.cwnd, 10);
    }

    #[test]
    fn a_loss_halves_the_macroflow_and_is_counted() {
        let mut c = cm();
        c.on_record(&rec(1, RecordKind::Init, HOST));
        let mut a = rec(1, RecordKind::Ack, HOST);
        a.rtt_us = 50_000;
        a.bytes_acked = MSS;
        c.on_record(&a);
        let mut st = rec(1, RecordKind::State, HOST);
        st.event = u32::from(ca_state::RECOVERY);
        st.loss_events = 1;
        st.time_ns += 1_000_000;
        c.on_record(&st);
        let mut out = Vec::new();
        c.decisions(0, &mut out);
        assert_eq!(out[0].1.loss_events, 1);
        // 11 segments halved: 5.5, rounded up.
        assert_eq!(out[0].1.cwnd, 6);
    }

    /// Two sockets of one macroflow; socket 1 has seen an RTT sample and a loss (the first
    /// reduction), at 1.001 s.
    fn after_one_reduction() -> TcpCm {
        let mut c = cm();
        c.on_record(&rec(1, RecordKind::Init, HOST));
        c.on_record(&rec(2, RecordKind::Init, HOST));
        let mut a = rec(1, RecordKind::Ack, HOST);
        a.rtt_us = 50_000;
        a.bytes_acked = 10 * MSS;
        c.on_record(&a);
        let mut st = rec(1, RecordKind::State, HOST);
        st.event = u32::from(ca_state::RECOVERY);
        st.loss_events = 1;
        st.time_ns += 1_000_000;
        c.on_record(&st);
        c
    }

    #[test]
    fn a_reduction_is_counted_for_every_socket_of_the_macroflow() {
        let mut c = after_one_reduction();
        assert_eq!(c.reductions_of(1), 1);
        assert_eq!(c.reductions_of(2), 1);
        let mut out = Vec::new();
        c.decisions(0, &mut out);
        assert!(out.iter().all(|(_, d)| d.reductions == 1));
        // 20 segments halved to 10, five per socket.
        assert!(out.iter().all(|(_, d)| d.cwnd == 5));
    }

    #[test]
    fn a_loss_of_data_sent_before_the_reduction_does_not_halve_again() {
        let mut c = after_one_reduction();
        // Socket 2 detects its loss of the same overflow 120 ms later, beyond one srtt: the
        // datapath found its first hole below its recover point.
        let mut st = rec(2, RecordKind::State, HOST);
        st.event = u32::from(ca_state::RECOVERY);
        st.loss_events = 1;
        st.same_event = true;
        st.time_ns += 120_000_000;
        c.on_record(&st);
        assert_eq!(c.reductions_of(2), 1);
        assert_eq!(c.same_event_signals(), 1);
        let mut out = Vec::new();
        c.decisions(0, &mut out);
        let d2 = out.iter().find(|(id, _)| *id == 2).expect("socket 2").1;
        // Still five segments, and the new count, so the datapath applies the decision.
        assert_eq!((d2.cwnd, d2.loss_events, d2.reductions), (5, 1, 1));
    }

    #[test]
    fn a_loss_of_data_sent_after_the_reduction_halves_again() {
        let mut c = after_one_reduction();
        let mut st = rec(2, RecordKind::State, HOST);
        st.event = u32::from(ca_state::RECOVERY);
        st.loss_events = 1;
        st.time_ns += 120_000_000;
        c.on_record(&st);
        assert_eq!(c.reductions_of(2), 2);
        let mut out = Vec::new();
        c.decisions(0, &mut out);
        // 10 segments halved to 5: three per socket, rounded up.
        assert!(out.iter().all(|(_, d)| d.cwnd == 3 && d.reductions == 2));
    }

    #[test]
    fn a_timeout_is_told_even_within_the_event() {
        let mut c = after_one_reduction();
        let mut st = rec(2, RecordKind::State, HOST);
        st.event = u32::from(ca_state::LOSS);
        st.loss_events = 1;
        st.same_event = true;
        st.time_ns += 120_000_000;
        c.on_record(&st);
        assert_eq!(c.same_event_signals(), 0);
        assert_eq!(c.reductions_of(2), 2);
    }

    #[test]
    fn release_closes_the_flow_and_the_others_take_its_share() {
        let mut c = cm();
        c.on_record(&rec(1, RecordKind::Init, HOST));
        c.on_record(&rec(2, RecordKind::Init, HOST));
        c.on_record(&rec(1, RecordKind::Release, HOST));
        assert_eq!(c.len(), 1);
        let mut out = Vec::new();
        c.decisions(0, &mut out);
        assert_eq!(out, vec![(2, out[0].1)]);
        assert_eq!(out[0].1.cwnd, 10);
    }

    #[test]
    fn nothing_changed_means_no_decisions_to_write() {
        let mut c = cm();
        c.on_record(&rec(1, RecordKind::Init, HOST));
        let mut out = Vec::new();
        c.decisions(0, &mut out);
        out.clear();
        c.decisions(0, &mut out);
        assert!(out.is_empty());
    }
}
