//! The runtime state of a flow: its transport agents and its measurements.

use crate::metrics::{Histogram, Series};
use crate::packet::NodeId;
use crate::scenario::DropWhen;
use concord_cc::rng::Rng;
use concord_cc::tcp::{ActiveOpen, PassiveOpen, TcpReceiver, TcpSender};
use concord_cc::time::{Duration, Instant};
use concord_cc::units::{Bytes, Rate};
use std::collections::VecDeque;

/// A TCP connection: both halves live here, the sender at the flow's source host and the
/// receiver at its destination.
#[derive(Debug)]
pub struct TcpFlow {
    /// The sender.
    pub sender: TcpSender,
    /// The receiver.
    pub receiver: TcpReceiver,
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
    /// When the last byte of a finite transfer was acknowledged.
    pub completed: Option<Instant>,
    /// The sender's counters at the end of the warm-up.
    pub stats_at_warmup: concord_cc::tcp::sender::SenderStats,
    /// Sum of RTT samples in the measurement window, in seconds.
    pub rtt_sum: f64,
    /// RTT samples in the measurement window.
    pub rtt_count: u64,
    /// Sum of the RTO at each sample in the measurement window, in seconds.
    pub rto_sum: f64,
    /// The last (cwnd, ssthresh) written to the trace.
    pub traced: (Bytes, Bytes),
    /// The one-shot loss still to inject (`None` once it fired, or if none was asked for).
    pub drop_when: Option<DropWhen>,
    /// New data segments sent so far (for [`DropWhen::Segment`]).
    pub new_segments: u64,
    /// Data segments the injection dropped (0 or 1).
    pub injected_losses: u64,
    /// When the injected loss happened.
    pub injected_at: Option<Instant>,
    /// (end sequence number, first transmission) of every data segment that carried new bytes
    /// and is not yet delivered in order, oldest first (for [`Flow::application`]).
    pub first_sent: VecDeque<(u64, Instant)>,
    /// The highest end sequence number recorded in `first_sent` so far.
    pub first_sent_through: u64,
    /// Both ends of the three-way handshake, for a connection that opens with one
    /// (`handshake` in its TCP settings); `None`: data leaves when the application starts.
    pub handshake: Option<Box<TcpOpen>>,
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
#[derive(Debug)]
pub struct Flow {
    /// Name from the scenario.
    pub name: String,
    /// Source host.
    pub src: NodeId,
    /// Destination host.
    pub dst: NodeId,
    /// When the application starts.
    pub start: Instant,
    /// When it stops offering data.
    pub stop: Instant,
    /// The transport.
    pub agent: Agent,
    /// Application bytes delivered in order at the destination, binned over time.
    pub goodput: Series,
    /// Application bytes delivered in order at the destination.
    pub delivered: Bytes,
    /// `delivered` at the end of the warm-up.
    pub delivered_at_warmup: Bytes,
    /// One-way delay of every data packet that reached the destination, from its
    /// transmission to its arrival (after the warm-up), and the jitter between successive ones.
    pub network: OneWay,
    /// TCP flows named in `[record] application_delay` only: one-way delay of every data
    /// segment from its first transmission to its in-order delivery to the receiving
    /// application (after the warm-up), and its jitter. A retransmitted segment counts once,
    /// from its first transmission; a segment held behind a hole counts the wait. This is what
    /// an application-level tool such as GCCA's DBS sees.
    pub application: OneWay,
    /// Measure [`Flow::application`].
    pub record_application: bool,
    /// Trace cwnd and ssthresh of this flow.
    pub trace_cwnd: bool,
    /// Trace the window and the bandwidth estimator of this flow on every ACK.
    pub trace_estimator: bool,
    /// Data packets of this flow that a queue dropped (wire losses are not counted).
    pub queue_drops: u64,
    /// `queue_drops` at the end of the warm-up.
    pub queue_drops_at_warmup: u64,
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
}

impl Flow {
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
