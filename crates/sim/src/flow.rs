//! The runtime state of a flow: its transport agents and its measurements.

use crate::metrics::{Histogram, Series};
use crate::packet::NodeId;
use crate::scenario::DropWhen;
use concord_cc::rng::Rng;
use concord_cc::tcp::{ActiveOpen, PassiveOpen, TcpConfig, TcpReceiver, TcpSender};
use concord_cc::time::{Duration, Instant};
use concord_cc::units::{Bytes, Rate};
use std::collections::VecDeque;
use std::sync::Arc;

/// A TCP connection: both halves live here, the sender at the flow's source host and the
/// receiver at its destination.
///
/// The fields are laid out in the order written (`repr(C)`), those a data segment's or an
/// ACK's arrival reads first and the statistics read at the warm-up and at the end last, so that
/// a packet touches few cache lines of a flow that is cold among thousands.
#[derive(Debug)]
#[repr(C)]
pub struct TcpFlow {
    /// The instant of the sender's scheduled timer event, if one is pending.
    pub sender_timer: Option<Instant>,
    /// The instant of the receiver's scheduled timer event, if one is pending.
    pub receiver_timer: Option<Instant>,
    /// IP + TCP header bytes of every segment.
    pub header_bytes: u32,
    /// The latest TSval the receiver saw in order (echoed as TSecr).
    pub ts_recent: u32,
    /// The transfer is finite (a `bytes` count), so its completion time means something.
    pub finite: bool,
    /// Both ends of the three-way handshake, for a connection that opens with one
    /// (`handshake` in its TCP settings); `None`: data leaves when the application starts.
    pub handshake: Option<Box<TcpOpen>>,
    /// New data segments sent so far (for [`DropWhen::Segment`]).
    pub new_segments: u64,
    /// Sum of RTT samples in the measurement window, in seconds.
    pub rtt_sum: f64,
    /// RTT samples in the measurement window.
    pub rtt_count: u64,
    /// Sum of the RTO at each sample in the measurement window, in seconds.
    pub rto_sum: f64,
    /// The one-shot loss still to inject (`None` once it fired, or if none was asked for).
    pub drop_when: Option<DropWhen>,
    /// (end sequence number, first transmission) of every data segment that carried new bytes
    /// and is not yet delivered in order, oldest first (for [`Flow::application`]).
    pub first_sent: VecDeque<(u64, Instant)>,
    /// The highest end sequence number recorded in `first_sent` so far.
    pub first_sent_through: u64,
    /// The receiver.
    pub receiver: TcpReceiver,
    /// The sender.
    pub sender: TcpSender,
    /// When the last byte of a finite transfer was acknowledged.
    pub completed: Option<Instant>,
    /// The last (cwnd, ssthresh) written to the trace.
    pub traced: (Bytes, Bytes),
    /// Data segments the injection dropped (0 or 1).
    pub injected_losses: u64,
    /// When the injected loss happened.
    pub injected_at: Option<Instant>,
    /// The sender's counters at the end of the warm-up.
    pub stats_at_warmup: concord_cc::tcp::sender::SenderStats,
}

/// Hands out one shared copy of the TCP settings to consecutive flows that use the same
/// settings (the flows of one `[[flow]]` entry with a `count`), so that thousands of senders
/// read one copy, hot in cache, instead of each carrying its own.
#[derive(Debug, Default)]
pub struct SharedTcpConfig {
    last: Option<Arc<TcpConfig>>,
}

impl SharedTcpConfig {
    /// The shared copy of `config`: the previous flow's if equal, else a new one.
    pub fn share(&mut self, config: &TcpConfig) -> Arc<TcpConfig> {
        match &self.last {
            Some(last) if **last == *config => Arc::clone(last),
            _ => {
                let fresh = Arc::new(config.clone());
                self.last = Some(Arc::clone(&fresh));
                fresh
            }
        }
    }
}

/// The two openers of a connection's handshake: the sender's active side, the receiver's
/// passive side.
#[derive(Debug)]
pub struct TcpOpen {
    /// The sender's side.
    pub active: ActiveOpen,
    /// The receiver's side.
    pub passive: PassiveOpen,
}

/// A UDP source of constant rate, possibly switched on and off.
#[derive(Debug)]
pub struct UdpFlow {
    /// Rate while on.
    pub rate: Rate,
    /// Bytes on the wire per packet.
    pub packet_size: u32,
    /// Mean on and off periods, for an on/off source.
    pub on_off: Option<(Duration, Duration, bool)>,
    /// True while sending.
    pub on: bool,
    /// End of the current on or off period.
    pub phase_end: Instant,
    /// Next datagram number.
    pub next_seq: u64,
    /// Draws period lengths.
    pub rng: Rng,
    /// Datagrams received by the sink.
    pub received: u64,
}

/// What kind of agent a flow runs.
#[derive(Debug)]
pub enum Agent {
    /// TCP.
    Tcp(Box<TcpFlow>),
    /// UDP.
    Udp(Box<UdpFlow>),
    /// TFRC over UDP.
    Tfrc(Box<crate::tfrc::TfrcFlow>),
    /// A C-UDP endpoint of a CP application.
    CUdp(Box<crate::cp::CUdpFlow>),
    /// A UDP flow of a CM application: the layered audio server or a bulk CM sender.
    CmApp(Box<crate::cm::CmAppFlow>),
}

/// A flow's runtime.
///
/// The fields are laid out in the order written (`repr(C)`), those a packet's arrival touches
/// first (the agent, the delivered bytes and the network delays: the first four 64-byte lines),
/// the name, the schedule and what only the warm-up, the results or `[record]` read after them.
#[derive(Debug)]
#[repr(C, align(64))]
pub struct Flow {
    /// The transport.
    pub agent: Agent,
    /// Source host.
    pub src: NodeId,
    /// Destination host.
    pub dst: NodeId,
    /// Application bytes delivered in order at the destination.
    pub delivered: Bytes,
    /// Application bytes delivered in order at the destination, binned over time.
    pub goodput: Series,
    /// One-way delay of every data packet that reached the destination, from its
    /// transmission to its arrival (after the warm-up), and the jitter between successive ones.
    pub network: OneWay,
    /// Data packets of this flow that a queue dropped (wire losses are not counted).
    pub queue_drops: u64,
    /// Measure [`Flow::application`].
    pub record_application: bool,
    /// Trace cwnd and ssthresh of this flow.
    pub trace_cwnd: bool,
    /// Trace the window and the bandwidth estimator of this flow on every ACK.
    pub trace_estimator: bool,
    /// Name from the scenario.
    pub name: String,
    /// When the application starts.
    pub start: Instant,
    /// When it stops offering data.
    pub stop: Instant,
    /// `delivered` at the end of the warm-up.
    pub delivered_at_warmup: Bytes,
    /// `queue_drops` at the end of the warm-up.
    pub queue_drops_at_warmup: u64,
    /// TCP flows named in `[record] application_delay` only: one-way delay of every data
    /// segment from its first transmission to its in-order delivery to the receiving
    /// application (after the warm-up), and its jitter. A retransmitted segment counts once,
    /// from its first transmission; a segment held behind a hole counts the wait. This is what
    /// an application-level tool such as GCCA's DBS sees.
    pub application: OneWay,
}

/// One-way delays of a flow's packets in arrival order, and their jitter.
#[derive(Debug, Default)]
pub struct OneWay {
    /// Every delay.
    pub delay: Histogram,
    /// Jitter: |difference of the delays of successive packets|, as GCCA's Fig. 5 defines it.
    pub jitter: Histogram,
    /// The previous delay.
    last: Option<Duration>,
}

impl OneWay {
    /// Records the one-way delay `d` of the next packet, and the jitter against the previous one.
    pub fn record(&mut self, d: Duration) {
        self.delay.record(d);
        if let Some(prev) = self.last {
            let jitter = if d > prev { d - prev } else { prev - d };
            self.jitter.record(jitter);
        }
        self.last = Some(d);
    }

    /// Asks the processor to fetch the counts that recording `d` next adds to (the delay's and,
    /// against the last delay, the jitter's): a hint, nothing changes.
    #[inline]
    pub fn prefetch(&self, d: Duration) {
        self.delay.prefetch(d);
        if let Some(prev) = self.last {
            self.jitter
                .prefetch(if d > prev { d - prev } else { prev - d });
        }
    }
}

impl Flow {
    /// Asks the processor to fetch the four lines a packet's arrival reads (the agent, the
    /// delivered bytes and the goodput series; the delay histogram; the jitter histogram; the
    /// last delay, the drop count and the trace switches): a hint, nothing changes.
    #[inline]
    pub fn prefetch(&self) {
        mem_prefetch::prefetch_read_data::<_, 3>(&self.agent);
        mem_prefetch::prefetch_read_data::<_, 3>(&self.network.delay);
        mem_prefetch::prefetch_read_data::<_, 3>(&self.network.jitter);
        mem_prefetch::prefetch_read_data::<_, 3>(&self.queue_drops);
    }

    /// Asks the processor to fetch the flow's first line (the agent's pointer, the hosts): a
    /// hint, nothing changes.
    #[inline]
    pub fn prefetch_entry(&self) {
        mem_prefetch::prefetch_read_data::<_, 3>(&self.agent);
    }

    /// Asks the processor to fetch the transport state behind [`Flow::agent`] that the arrival
    /// of a data packet (`feedback` false) or of an ACK or other feedback (`feedback` true)
    /// reads. It reads the agent's pointer, so the flow's first line should be in cache
    /// ([`Flow::prefetch`] some time before). A hint, nothing changes.
    #[inline]
    pub fn prefetch_agent(&self, feedback: bool) {
        match &self.agent {
            Agent::Tcp(t) => {
                mem_prefetch::prefetch_read_data::<_, 3>(&t.sender_timer);
                if feedback {
                    t.sender.prefetch();
                } else {
                    mem_prefetch::prefetch_read_data::<_, 3>(&t.first_sent);
                    t.receiver.prefetch();
                }
            }
            Agent::Udp(u) => mem_prefetch::prefetch_read_data::<_, 3>(&**u),
            Agent::Tfrc(t) => mem_prefetch::prefetch_read_data::<_, 3>(&**t),
            Agent::CUdp(c) => mem_prefetch::prefetch_read_data::<_, 3>(&**c),
            Agent::CmApp(a) => mem_prefetch::prefetch_read_data::<_, 3>(&**a),
        }
    }

    /// The flow's kind as a word for tables.
    pub fn kind(&self) -> &'static str {
        match &self.agent {
            Agent::Tcp(_) => "tcp",
            Agent::Udp(u) if u.on_off.is_some() => "onoff",
            Agent::Udp(_) => "cbr",
            Agent::Tfrc(_) => "tfrc",
            Agent::CUdp(_) => "cudp",
            Agent::CmApp(a) => match a.app {
                crate::cm::CmApp::Audio(_) => "audio",
                crate::cm::CmApp::Bulk { .. } => "cmudp",
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::mem::{align_of, offset_of, size_of};

    #[test]
    fn a_packet_arrival_reads_only_the_first_four_cache_lines_of_its_flow() {
        assert_eq!(align_of::<Flow>(), 64);
        // Every field a data segment's or an ACK's arrival reads lies before byte 256.
        let hot_end = offset_of!(Flow, trace_estimator) + size_of::<bool>();
        assert!(hot_end <= 256, "hot fields end at byte {hot_end}");
        assert!(offset_of!(Flow, name) >= hot_end);
        assert!(offset_of!(Flow, application) >= hot_end);
    }

    #[test]
    fn the_prefetch_reaches_every_line_an_arrival_reads() {
        // `Flow::prefetch` names one field in each of the first four lines.
        let lines = [
            offset_of!(Flow, agent),
            offset_of!(Flow, network) + offset_of!(OneWay, delay),
            offset_of!(Flow, network) + offset_of!(OneWay, jitter),
            offset_of!(Flow, queue_drops),
        ]
        .map(|at| at / 64);
        assert_eq!(lines, [0, 1, 2, 3]);
        // `Flow::prefetch_entry` fetches the first line: the read-ahead reads the hosts with
        // the agent's pointer.
        assert_eq!(offset_of!(Flow, src) / 64, 0);
        assert_eq!(offset_of!(Flow, dst) / 64, 0);
    }

    #[test]
    fn a_tcp_flow_keeps_its_timers_and_receiver_ahead_of_its_sender() {
        assert_eq!(offset_of!(TcpFlow, sender_timer), 0);
        assert!(offset_of!(TcpFlow, receiver) < offset_of!(TcpFlow, sender));
        assert!(offset_of!(TcpFlow, stats_at_warmup) > offset_of!(TcpFlow, sender));
    }

    #[test]
    fn a_tcp_flow_with_its_flow_entry_takes_at_most_1376_bytes() {
        // The bytes per TCP flow the README states (1,376), on a 64-bit target, besides what
        // grows with the run (histogram spans, the goodput series, segments in flight).
        let bytes = size_of::<Flow>() + size_of::<TcpFlow>();
        assert!(bytes <= 1376, "{bytes} bytes per TCP flow");
    }

    #[test]
    fn flows_of_equal_settings_share_one_copy_and_a_different_one_gets_its_own() {
        let mut shared = SharedTcpConfig::default();
        let a = shared.share(&TcpConfig::default());
        let b = shared.share(&TcpConfig::default());
        assert!(Arc::ptr_eq(&a, &b));
        let other = TcpConfig {
            sack: true,
            ..TcpConfig::default()
        };
        let c = shared.share(&other);
        assert!(!Arc::ptr_eq(&a, &c));
        assert_eq!(*c, other);
        let d = shared.share(&other);
        assert!(Arc::ptr_eq(&c, &d));
    }
}
