//! The TCP sender as a sans-IO state machine: sequence space, duplicate-ACK counting, fast
//! retransmit and NewReno fast recovery (RFC 5681 section 3.2, RFC 6582), the retransmission
//! timer (RFC 6298) and the ECN reaction (RFC 3168 section 6.1.2). The window controller
//! ([`WindowCtl`]) supplies growth and reduction; this module owns everything around it.
//!
//! Drive it with [`TcpSender::on_ack`], [`TcpSender::on_timeout`] and [`TcpSender::poll_transmit`];
//! ask [`TcpSender::poll_timeout`] when to call `on_timeout`. Sequence numbers are 64-bit byte
//! offsets from zero (no wrap-around); the wire codec keeps the low 32 bits. There is no
//! handshake: the connection starts established, as ns-2's one-way TCP agents do.

use super::config::{Recovery, TcpConfig, TcpConfigError};
use super::controller::{AckInfo, CongestionKind, WindowController, WindowCtl};
use super::ns3_departures::RenoMarks;
use super::pacing::Pacer;
use super::prr::Prr;
use super::rtt::{RttConfig, RttEstimator};
use super::sack::{NextSeg, SackBlocks, Scoreboard};
use super::timeout_cause::{TimeoutCause, TimeoutCauses};
use crate::time::{Duration, Instant};
use crate::units::Bytes;
use std::collections::VecDeque;
use std::sync::Arc;

/// A segment the sender wants transmitted.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Segment {
    /// Sequence number of the first payload byte.
    pub seq: u64,
    /// Payload bytes.
    pub len: u32,
    /// This range was sent before.
    pub retransmission: bool,
    /// Set the CWR flag (the first new segment after an ECN reduction, RFC 3168 6.1.2).
    pub cwr: bool,
    /// Mark the packet ECT(0): the connection negotiated ECN.
    pub ect: bool,
}

/// How sends are limited. TCP/CM and GCCA gate a connection from outside.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum SendGate {
    /// The congestion window alone limits sends.
    #[default]
    Window,
    /// A send needs both room in the window and granted credit.
    WindowAndCredit,
    /// Granted credit alone limits sends (congestion control delegated, as in TCP/CM); the
    /// receiver's window still applies.
    CreditOnly,
}

/// What one ACK did, for modules that observe the connection (a Congestion Manager's update).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct AckOutcome {
    /// Bytes newly acknowledged.
    pub bytes_acked: Bytes,
    /// The RTT sample taken, if any.
    pub rtt: Option<Duration>,
    /// The ACK was a duplicate.
    pub duplicate: bool,
    /// This ACK triggered fast retransmit (a loss was detected).
    pub fast_retransmit: bool,
    /// This ACK caused an ECN window reduction.
    pub ecn_reduction: bool,
    /// This ACK was ignored (it acknowledges data never sent, or is older than snd_una).
    pub ignored: bool,
}

/// Counters over the connection's life.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SenderStats {
    /// Segments sent, retransmissions included.
    pub segments_sent: u64,
    /// Retransmitted segments.
    pub retransmissions: u64,
    /// Fast retransmits (entries into fast recovery).
    pub fast_retransmits: u64,
    /// Retransmission timeouts.
    pub timeouts: u64,
    /// The retransmission timeouts by what they fired on (they add up to `timeouts`); the
    /// receiver-held ones only when the driver tells the receiver's RCV.NXT
    /// ([`TcpSender::on_timeout_seen_by_receiver`]).
    pub timeout_causes: TimeoutCauses,
    /// ECN window reductions.
    pub ecn_reductions: u64,
    /// ACKs ignored as invalid.
    pub invalid_acks: u64,
}

/// A segment sent once and not yet acknowledged, kept for RTT sampling.
#[derive(Clone, Copy, Debug)]
struct Sent {
    end: u64,
    at: Instant,
    retransmitted: bool,
}

/// The first bytes of the segments sent above the one at snd_una, in order (each starts where
/// the one before it ends).
fn reno_above_head(sent: &VecDeque<Sent>) -> impl Iterator<Item = u64> + '_ {
    sent.iter()
        .take(sent.len().saturating_sub(1))
        .map(|s| s.end)
}

/// The sender.
#[derive(Clone, Debug)]
pub struct TcpSender {
    /// The settings, shared by every sender built from the same ones (read on every ACK and
    /// send: one copy stays in cache for thousands of flows, and costs a pointer per flow).
    config: Arc<TcpConfig>,
    ctl: WindowCtl,
    rtt: RttEstimator,
    /// Oldest unacknowledged byte (RFC 9293 SND.UNA).
    snd_una: u64,
    /// Next byte to send (SND.NXT); moves back to snd_una after a timeout.
    snd_nxt: u64,
    /// Highest byte ever sent, plus one.
    snd_max: u64,
    /// Bytes the application has made available (`u64::MAX`: an infinite source).
    app_limit: u64,
    dupacks: u32,
    /// Bytes above snd_una that duplicate ACKs show have reached the receiver: one segment per
    /// duplicate ACK, less what later cumulative ACKs covered, and never the segment at
    /// snd_una (the Reno "SACK" emulation of ns-3's `TcpTxBuffer::AddRenoSack`, Linux's
    /// `sacked_out` without SACK). This data has left the network.
    dup_acked: Bytes,
    /// Bytes of new data sent by limited transmit (RFC 3042) since the last new ACK; RFC 5681
    /// section 3.2 step 2 leaves them out of FlightSize at fast retransmit.
    limited_sent: Bytes,
    /// snd_max when the retransmission timer last expired, until it is acknowledged: a
    /// timeout before then belongs to the same loss episode.
    timeout_recover: Option<u64>,
    /// RFC 6582 `recover`: highest byte sent when the last fast retransmit or timeout happened.
    recover: Option<u64>,
    /// In loss recovery after a timeout (ns-3's CA_LOSS): from the timeout until an ACK
    /// reaches `recover`. Only [`super::ns3_departures::Ns3Departures::growth_bytes`] reads it.
    in_loss: bool,
    in_recovery: bool,
    /// The first partial ACK of this recovery has reset the timer (RFC 6582 3.2 step 5).
    partial_ack_seen: bool,
    /// With `recovery = prr`, the PRR state of the recovery under way (RFC 6937).
    prr: Option<Prr>,
    /// With PRR in recovery: bytes that may still be sent on the last ACK's `sndcnt`.
    prr_budget: Bytes,
    /// End of the window in which an ECN reduction already happened (RFC 3168 6.1.2).
    /// End of the window of data outstanding at the last window reduction (ECN, fast
    /// retransmit or timeout): ECE on ACKs up to and including it echoes marks of that window
    /// and is ignored (RFC 3168 6.1.2, "at most once per window"; as Linux's CWR state and
    /// ns-2's `recover_`).
    ecn_recover: Option<u64>,
    /// End of the window outstanding at the last ECN reduction while the sender is in the
    /// congestion window reduced state: no growth until it is acknowledged (Linux's CWR state).
    /// A loss recovery or a timeout ends it: after them the window grows as they prescribe
    /// (slow start from the loss window after a timeout, RFC 5681 section 3.1).
    ecn_cwr: Option<u64>,
    send_cwr: bool,
    /// A single segment to resend before anything else (fast retransmit, partial ACK), at
    /// this sequence number; sent regardless of the window (RFC 5681 3.2 step 2).
    rexmit: Option<u64>,
    rto_deadline: Option<Instant>,
    /// With SACK, the RFC 6675 scoreboard; none without (behind a pointer, so that a sender
    /// without SACK does not carry its bytes).
    scoreboard: Option<Box<Scoreboard>>,
    /// With `pacing`, Linux's pacing state; none without.
    pacer: Option<Box<Pacer>>,
    /// With ns-3's `reno-sack` departure and without SACK, ns-3's per-segment Reno SACK
    /// marks; none otherwise.
    reno: Option<Box<RenoMarks>>,
    sent: VecDeque<Sent>,
    gate: SendGate,
    credit: Bytes,
    stats: SenderStats,
}

impl TcpSender {
    /// Asks the processor to fetch the state an ACK's arrival reads (the RTT estimator, the
    /// recovery points, the window, the segments in flight's ring, the sequence numbers and
    /// the shared settings, the counters, the gate), for a caller that knows an ACK will
    /// arrive: a hint, nothing changes. One field of each 64-byte line the sender spans as
    /// the compiler lays it out on x86-64 (about 500 bytes); a line named twice costs one
    /// more instruction, a line left out one miss.
    #[inline]
    pub fn prefetch(&self) {
        mem_prefetch::prefetch_read_data::<_, 3>(&self.rtt);
        mem_prefetch::prefetch_read_data::<_, 3>(&self.timeout_recover);
        mem_prefetch::prefetch_read_data::<_, 3>(&self.recover);
        mem_prefetch::prefetch_read_data::<_, 3>(&self.ctl);
        mem_prefetch::prefetch_read_data::<_, 3>(&self.sent);
        mem_prefetch::prefetch_read_data::<_, 3>(&self.snd_una);
        mem_prefetch::prefetch_read_data::<_, 3>(&self.stats);
        mem_prefetch::prefetch_read_data::<_, 3>(&self.gate);
    }

    /// Asks the processor to fetch the oldest segment in flight, the first an ACK takes off
    /// (it reads the ring's place in the sender, whose line [`TcpSender::prefetch`] fetches):
    /// a hint, nothing changes.
    #[inline]
    pub fn prefetch_acked(&self) {
        if let Some(front) = self.sent.front() {
            mem_prefetch::prefetch_read_data::<_, 3>(front);
        }
    }

    /// A sender with an infinite source, its controller chosen by `config.cc`.
    pub fn new(config: TcpConfig) -> Result<TcpSender, TcpConfigError> {
        TcpSender::with_shared_config(Arc::new(config))
    }

    /// A sender with an infinite source whose settings are shared with other senders (a
    /// simulator's flows of the same settings), its controller chosen by `config.cc`.
    pub fn with_shared_config(config: Arc<TcpConfig>) -> Result<TcpSender, TcpConfigError> {
        let ctl = WindowCtl::from_config(&config)?;
        Ok(TcpSender::with_shared_controller(config, ctl))
    }

    /// A sender with the given controller (a controller configured outside).
    pub fn with_controller(config: TcpConfig, ctl: WindowCtl) -> TcpSender {
        TcpSender::with_shared_controller(Arc::new(config), ctl)
    }

    /// A sender with shared settings and the given controller.
    fn with_shared_controller(config: Arc<TcpConfig>, ctl: WindowCtl) -> TcpSender {
        let rtt = RttEstimator::new(RttConfig {
            initial_rto: config.initial_rto,
            min_rto: config.min_rto,
            max_rto: config.max_rto,
            granularity: config.clock_granularity,
        });
        let scoreboard = config
            .sack
            .then(|| Box::new(Scoreboard::new(config.mss, config.dupack_threshold)));
        let pacer = config.pacing.map(|p| Box::new(Pacer::new(p)));
        let reno = (config.ns3_departures.reno_sack && !config.sack)
            .then(|| Box::new(RenoMarks::default()));
        TcpSender {
            config,
            ctl,
            rtt,
            snd_una: 0,
            snd_nxt: 0,
            snd_max: 0,
            app_limit: u64::MAX,
            dupacks: 0,
            dup_acked: 0,
            limited_sent: 0,
            timeout_recover: None,
            recover: None,
            in_loss: false,
            in_recovery: false,
            partial_ack_seen: false,
            prr: None,
            prr_budget: 0,
            ecn_recover: None,
            ecn_cwr: None,
            send_cwr: false,
            rexmit: None,
            rto_deadline: None,
            scoreboard,
            pacer,
            reno,
            sent: VecDeque::new(),
            gate: SendGate::Window,
            credit: 0,
            stats: SenderStats::default(),
        }
    }

    /// The connection's handshake completed before any data was sent: the SYN's RTT sample,
    /// if it gave one, enters the estimator (RFC 6298 section 2), and if the SYN's timer
    /// expired the RTO starts at 3 s, or at `initial_rto` if that is longer (section 5.7).
    pub fn on_established(&mut self, rtt_sample: Option<Duration>, syn_timed_out: bool) {
        if let Some(r) = rtt_sample {
            self.rtt.on_sample(r);
        } else if syn_timed_out {
            self.rtt
                .reinitialize(super::handshake::RTO_AFTER_SYN_TIMEOUT.max(self.config.initial_rto));
        }
        self.update_pacing_rate(); // tcp_init_transfer
    }

    /// Limits the transfer to `total` bytes from the start (a finite application).
    pub fn set_app_limit(&mut self, total: Bytes) {
        self.app_limit = total;
    }

    /// Stops offering new data: what was sent is still delivered, nothing new is sent.
    pub fn stop(&mut self) {
        self.app_limit = self.app_limit.min(self.snd_max);
    }

    /// Every byte the application offered is acknowledged.
    pub fn is_finished(&self) -> bool {
        self.app_limit != u64::MAX && self.snd_una >= self.app_limit
    }

    /// The end of the application's data: bytes it has made available (`u64::MAX` for an
    /// infinite source).
    pub fn app_limit(&self) -> u64 {
        self.app_limit
    }

    /// Chooses how sends are limited.
    pub fn set_gate(&mut self, gate: SendGate) {
        self.gate = gate;
    }

    /// Adds `bytes` of send credit (used by the gated modes).
    pub fn grant(&mut self, bytes: Bytes) {
        self.credit = self.credit.saturating_add(bytes);
    }

    /// Unused send credit, in bytes.
    pub fn credit(&self) -> Bytes {
        self.credit
    }

    /// The window controller.
    pub fn controller(&self) -> &WindowCtl {
        &self.ctl
    }

    /// The window controller, for modules that set cwnd or ssthresh from outside.
    pub fn controller_mut(&mut self) -> &mut WindowCtl {
        &mut self.ctl
    }

    /// The RTT estimator.
    pub fn rtt(&self) -> &RttEstimator {
        &self.rtt
    }

    /// The configuration.
    pub fn config(&self) -> &TcpConfig {
        &self.config
    }

    /// The congestion window, in bytes.
    pub fn cwnd(&self) -> Bytes {
        self.ctl.cwnd()
    }

    /// The slow-start threshold, in bytes.
    pub fn ssthresh(&self) -> Bytes {
        self.ctl.ssthresh()
    }

    /// FlightSize (RFC 5681): bytes sent and not yet acknowledged.
    pub fn bytes_in_flight(&self) -> Bytes {
        self.snd_max - self.snd_una
    }

    /// FlightSize as ns-3 and Linux estimate it without SACK: bytes sent and not yet
    /// acknowledged, less those the duplicate ACKs show have left the network (RFC 6675's
    /// `pipe` with each duplicate ACK standing for one delivered segment).
    /// With SACK, RFC 6675's `pipe` from the scoreboard (`SetPipe ()`, section 4).
    pub fn pipe(&self) -> Bytes {
        match &self.scoreboard {
            Some(sb) => sb.pipe_of(self.snd_una, self.snd_max),
            None => self.bytes_in_flight().saturating_sub(self.dup_acked),
        }
    }

    /// The SACK scoreboard, if the connection uses SACK.
    pub fn scoreboard(&self) -> Option<&Scoreboard> {
        self.scoreboard.as_deref()
    }

    /// Bytes above snd_una that duplicate ACKs show have reached the receiver.
    pub fn dup_acked(&self) -> Bytes {
        self.dup_acked
    }

    /// The oldest unacknowledged byte.
    pub fn snd_una(&self) -> u64 {
        self.snd_una
    }

    /// The next byte to send.
    pub fn snd_nxt(&self) -> u64 {
        self.snd_nxt
    }

    /// The sender is in NewReno fast recovery.
    pub fn in_recovery(&self) -> bool {
        self.in_recovery
    }

    /// Duplicate ACKs counted since the last new ACK.
    pub fn dupacks(&self) -> u32 {
        self.dupacks
    }

    /// Counters.
    pub fn stats(&self) -> SenderStats {
        self.stats
    }

    /// When [`TcpSender::on_timeout`] must be called, if the retransmission timer runs.
    /// With pacing, also when a segment that waits for its departure time may leave.
    pub fn poll_timeout(&self) -> Option<Instant> {
        match self.pacer.as_deref().and_then(Pacer::waiting) {
            Some(at) => Some(self.rto_deadline.map_or(at, |rto| rto.min(at))),
            None => self.rto_deadline,
        }
    }

    /// With pacing, the rate from the window and srtt after this ACK (Linux's
    /// `tcp_update_pacing_rate`, on every ACK).
    fn update_pacing_rate(&mut self) {
        if let Some(p) = self.pacer.as_deref_mut() {
            p.update_rate(
                self.ctl.cwnd(),
                self.ctl.ssthresh(),
                self.snd_max - self.snd_una,
                self.rtt.srtt(),
            );
        }
    }

    fn mss(&self) -> Bytes {
        self.config.mss
    }

    /// Restarts the retransmission timer on a new ACK (RFC 6298 5.3).
    fn restart_timer(&mut self, now: Instant) {
        if self.config.ns3_departures.loss_exit {
            // ns-3's `NewAck`: the RTO recomputed without an RTT sample.
            self.rtt.drop_backoff();
        }
        self.rto_deadline = if self.snd_max > self.snd_una {
            Some(now + self.rtt.rto())
        } else {
            None
        };
    }

    fn ack_info(&self, bytes_acked: Bytes, rtt: Option<Duration>, ece: bool) -> AckInfo {
        AckInfo {
            bytes_acked,
            rtt,
            srtt: self.rtt.srtt_or_initial(),
            min_rtt: self.rtt.min_rtt(),
            bytes_in_flight: self.bytes_in_flight(),
            in_recovery: self.in_recovery,
            ece,
        }
    }

    /// Processes a cumulative ACK of every byte below `ack`, with the ECN-Echo flag `ece`.
    pub fn on_ack(&mut self, now: Instant, ack: u64, ece: bool) -> AckOutcome {
        let out = self.process_ack(now, ack, ece);
        if !out.ignored {
            self.reno_resend_head();
        }
        self.update_pacing_rate();
        out
    }

    /// ns-3's `reno-sack` departure, after an ACK out of fast recovery (`SendPendingData`,
    /// `NextSeg` rule (1)): a head marked lost and not resent goes out first if
    /// `AvailableWindow ()` has room for a segment, cwnd less `BytesInFlight ()`, which leaves
    /// out the marked segments and the lost head.
    fn reno_resend_head(&mut self) {
        let Some(r) = self.reno.as_deref() else {
            return;
        };
        if self.in_recovery || self.in_loss || !r.head_to_resend(self.snd_una) {
            return;
        }
        let mss = self.mss();
        let flight = self
            .bytes_in_flight()
            .saturating_sub(r.left_out(self.snd_una, mss));
        if self.ctl.cwnd() >= flight + mss {
            self.retransmit_front();
        }
    }

    fn process_ack(&mut self, now: Instant, ack: u64, ece: bool) -> AckOutcome {
        let mut out = AckOutcome::default();
        if ack > self.snd_max || ack < self.snd_una {
            // An ACK for data never sent, or an old reordered ACK: RFC 9293 3.10.7.4 ignores it.
            self.stats.invalid_acks += 1;
            out.ignored = true;
            return out;
        }
        let reduced_for_ecn = self.ecn_signal(now, ack, ece, &mut out);

        if ack == self.snd_una {
            if self.snd_max > self.snd_una {
                out.duplicate = true;
                self.on_dup_ack(now, ece, &mut out);
            }
            return out;
        }

        // New data acknowledged.
        let acked = ack - self.snd_una;
        out.bytes_acked = acked;
        self.snd_una = ack;
        let dup_acked_before = self.dup_acked;
        // The cumulative ACK covers the segment that was missing and, beyond it, data the
        // duplicate ACKs had already counted as delivered.
        self.dup_acked = self
            .dup_acked
            .saturating_sub(acked.saturating_sub(self.mss()))
            .min(self.bytes_in_flight().saturating_sub(self.mss()));
        self.limited_sent = 0;
        if self.snd_nxt < self.snd_una {
            // After a timeout, the receiver may hold data beyond what was resent.
            self.snd_nxt = self.snd_una;
        }
        out.rtt = self.take_acked(now, ack);
        self.dupacks = 0;
        if let Some(r) = self.reno.as_deref_mut() {
            r.discard_up_to(ack, reno_above_head(&self.sent));
        }

        if self.in_recovery {
            let recover = self.recover.unwrap_or(0);
            if ack >= recover {
                // Full acknowledgment (RFC 6582 3.2 step 3): deflate to
                // min(ssthresh, max(FlightSize, SMSS) + SMSS) and leave recovery; with PRR,
                // cwnd = ssthresh (RFC 6937 section 3, "on exiting recovery").
                let flight = self.bytes_in_flight();
                let cwnd = match self.prr.take() {
                    Some(_) => self.ctl.ssthresh(),
                    None => self.ctl.ssthresh().min(flight.max(self.mss()) + self.mss()),
                };
                self.ctl.set_cwnd(cwnd);
                self.prr_budget = 0;
                self.in_recovery = false;
                self.ctl.on_recovery_end(now);
                self.restart_timer(now);
                // The full ACK sets the window; it does not also grow it.
                let info = AckInfo {
                    in_recovery: true,
                    ..self.ack_info(acked, out.rtt, ece)
                };
                self.ctl.on_ack(now, &info);
                return out;
            } else {
                // Partial acknowledgment (step 5): retransmit the first unacknowledged segment,
                // deflate by the amount acknowledged, add back one SMSS if at least one was
                // acknowledged; reset the timer on the first partial ACK only. With PRR the
                // window is pipe + sndcnt instead, DeliveredData being the advance of snd_una
                // less what the duplicate ACKs had already counted delivered.
                if self.prr.is_some() {
                    let delivered = (acked + self.dup_acked).saturating_sub(dup_acked_before);
                    self.prr_window(delivered);
                } else {
                    let cwnd = self.ctl.cwnd().saturating_sub(acked);
                    let cwnd = if acked >= self.mss() {
                        cwnd + self.mss()
                    } else {
                        cwnd
                    };
                    self.ctl.set_cwnd(cwnd);
                }
                if !self.partial_ack_seen {
                    self.partial_ack_seen = true;
                    self.restart_timer(now);
                }
                let info = self.ack_info(acked, out.rtt, ece);
                self.ctl.on_ack(now, &info);
                if let Some(r) = self.reno.as_deref_mut() {
                    // ns-3's ProcessAck on a partial ACK: MarkHeadAsLost, then the resend.
                    r.mark_head_lost(ack);
                }
                self.retransmit_front();
                return out;
            }
        } else {
            self.restart_timer(now);
        }
        // RFC 3168 6.1.2: no increase in response to an ECE that reduced the window; and, as
        // Linux's CWR state does, none until the window outstanding at the reduction is
        // acknowledged. Estimators still see the arrival, as a zero-growth ACK.
        let cwr_window = reduced_for_ecn || self.ecn_cwr.is_some_and(|r| self.snd_una <= r);
        let grow = self.loss_exit_growth(ack, acked);
        let info = AckInfo {
            in_recovery: cwr_window,
            ..self.ack_info(grow, out.rtt, ece)
        };
        self.ctl.on_ack(now, &info);
        out
    }

    /// Processes an ACK of every byte below `ack` with the ECN-Echo flag `ece` and the SACK
    /// blocks `sack`. Without SACK on this connection the blocks are ignored
    /// ([`TcpSender::on_ack`]); with it, the scoreboard is updated and loss recovery follows
    /// RFC 6675 section 5.
    pub fn on_ack_sack(
        &mut self,
        now: Instant,
        ack: u64,
        ece: bool,
        sack: &SackBlocks,
    ) -> AckOutcome {
        if self.scoreboard.is_none() {
            return self.on_ack(now, ack, ece);
        }
        let out = self.process_ack_sack(now, ack, ece, sack);
        self.update_pacing_rate();
        out
    }

    fn process_ack_sack(
        &mut self,
        now: Instant,
        ack: u64,
        ece: bool,
        sack: &SackBlocks,
    ) -> AckOutcome {
        let mut out = AckOutcome::default();
        if ack > self.snd_max || ack < self.snd_una {
            self.stats.invalid_acks += 1;
            out.ignored = true;
            return out;
        }
        let reduced_for_ecn = self.ecn_signal(now, ack, ece, &mut out);
        let acked = ack - self.snd_una;
        if acked > 0 {
            out.bytes_acked = acked;
            self.snd_una = ack;
            self.limited_sent = 0;
            if self.snd_nxt < self.snd_una {
                self.snd_nxt = self.snd_una;
            }
            out.rtt = self.take_acked(now, ack);
            // RFC 6675 section 5: a cumulative ACK resets DupAcks.
            self.dupacks = 0;
        }
        let (una, max) = (self.snd_una, self.snd_max);
        let Some(sb) = self.scoreboard.as_mut() else {
            return out;
        };
        let sacked_before = sb.sacked_bytes();
        let newly_sacked = sb.update(una, max, sack.ranges(ack));
        // RFC 6937: DeliveredData = change in snd.una + change in SACKed bytes.
        let delivered = (acked + sb.sacked_bytes()).saturating_sub(sacked_before);
        let outstanding = max > una;
        out.duplicate = acked == 0 && outstanding;
        // RFC 6675 section 2: a duplicate ACK (for these rules) is one that SACKs new data.
        if newly_sacked > 0 && outstanding {
            self.dupacks = self.dupacks.saturating_add(1);
        }
        let lost_at_una = sb.is_lost(una);

        if self.in_recovery {
            if ack >= self.recover.unwrap_or(0) {
                // Step (A): a cumulative ACK of RecoveryPoint ends recovery; cwnd = ssthresh
                // (RFC 6675 keeps it there through recovery; RFC 6937 sets it on exit).
                self.prr = None;
                self.prr_budget = 0;
                self.ctl.set_cwnd(self.ctl.ssthresh());
                self.in_recovery = false;
                self.ctl.on_recovery_end(now);
                self.restart_timer(now);
                self.set_pipe();
                let info = AckInfo {
                    in_recovery: true,
                    ..self.ack_info(acked, out.rtt, ece)
                };
                self.ctl.on_ack(now, &info);
                return out;
            }
            // Step (B): the scoreboard is updated; SetPipe; with PRR, cwnd = pipe + sndcnt.
            // The timer restarts on every cumulative advance (RFC 6298 5.3).
            if acked > 0 {
                self.restart_timer(now);
            }
            self.set_pipe();
            if self.prr.is_some() {
                self.prr_window(delivered);
            }
            let info = self.ack_info(acked, out.rtt, ece);
            self.ctl.on_ack(now, &info);
            return out;
        }
        if acked > 0 {
            self.restart_timer(now);
        }
        // Section 5 steps (1)-(2): DupAcks >= DupThresh, or IsLost (HighACK + 1); not for a
        // loss of the window a timeout or an earlier recovery already handled (RFC 6582's
        // `recover`, as in the NewReno path).
        let allowed = self
            .config
            .ns3_departures
            .fast_retransmit_allowed(self.snd_una, self.recover);
        if newly_sacked > 0
            && outstanding
            && allowed
            && (self.dupacks >= self.config.dupack_threshold || lost_at_una)
        {
            self.enter_sack_recovery(now, delivered, &mut out);
            let info = self.ack_info(acked, out.rtt, ece);
            self.ctl.on_ack(now, &info);
            return out;
        }
        self.set_pipe();
        let cwr_window = reduced_for_ecn || self.ecn_cwr.is_some_and(|r| self.snd_una <= r);
        let grow = self.loss_exit_growth(ack, acked);
        let info = AckInfo {
            in_recovery: cwr_window,
            ..self.ack_info(grow, out.rtt, ece)
        };
        self.ctl.on_ack(now, &info);
        out
    }

    /// Step (4) of RFC 6675 section 5: RecoveryPoint = HighData, ssthresh from FlightSize
    /// (RFC 5681 eq. 4, less limited-transmit data), cwnd = ssthresh (or PRR's first
    /// `sndcnt`), and the segment at HighACK + 1 retransmitted.
    fn enter_sack_recovery(&mut self, now: Instant, delivered: Bytes, out: &mut AckOutcome) {
        let flight = self.bytes_in_flight().saturating_sub(self.limited_sent);
        let reduced_already = self.ecn_recover.is_some_and(|r| self.snd_una < r);
        self.recover = Some(self.snd_max);
        if !reduced_already {
            self.ctl.on_congestion(now, CongestionKind::DupAcks, flight);
        }
        let ssthresh = self.ctl.ssthresh();
        let una = self.snd_una;
        if let Some(sb) = self.scoreboard.as_mut() {
            sb.start_recovery(una);
        }
        self.set_pipe();
        match self.config.recovery {
            Recovery::Prr(bound) => {
                self.prr = Some(Prr::start(ssthresh, self.bytes_in_flight(), bound));
                self.prr_window(delivered);
            }
            Recovery::Classic => self.ctl.set_cwnd(ssthresh),
        }
        self.in_recovery = true;
        self.partial_ack_seen = false;
        self.ecn_cwr = None;
        self.mark_reduction();
        self.stats.fast_retransmits += 1;
        out.fast_retransmit = true;
        self.rexmit = Some(self.snd_una);
    }

    /// The bytes of a new ACK up to `ack` (`acked` of them new) that the window may grow on
    /// outside fast recovery: all of them (RFC 5681 section 3.1), or with ns-3's loss-exit
    /// departure none but the whole segments above `recover` on the ACK that ends loss
    /// recovery after a timeout. That ACK ends the loss recovery either way.
    fn loss_exit_growth(&mut self, ack: u64, acked: Bytes) -> Bytes {
        let loss_recover = if self.in_loss { self.recover } else { None };
        if loss_recover.is_some_and(|r| ack >= r) {
            self.in_loss = false;
        }
        self.config
            .ns3_departures
            .growth_bytes(ack, acked, loss_recover, self.mss())
    }

    /// SetPipe () on the scoreboard, if there is one.
    fn set_pipe(&mut self) {
        let (una, max) = (self.snd_una, self.snd_max);
        if let Some(sb) = self.scoreboard.as_mut() {
            sb.set_pipe(una, max);
        }
    }

    /// RFC 3168 6.1.2: an ACK with ECE reduces the window once per window of data, without a
    /// retransmission. Returns true if this ACK reduced it.
    fn ecn_signal(&mut self, now: Instant, ack: u64, ece: bool, out: &mut AckOutcome) -> bool {
        if self.config.ns3_departures.ecn_once {
            return self.ns3_ecn_signal(now, ack, ece, out);
        }
        if ece
            && self.config.ecn
            && !self.in_recovery
            && self.ecn_recover.is_none_or(|r| ack > r)
            && self.snd_max > self.snd_una
        {
            // A reduction never raises the window (after a timeout cwnd may already be below
            // flight / 2).
            let before = self.ctl.cwnd();
            self.ctl
                .on_congestion(now, CongestionKind::Ecn, self.bytes_in_flight());
            if self.ctl.cwnd() > before {
                self.ctl.set_cwnd(before);
            }
            self.mark_reduction();
            self.ecn_cwr = Some(self.snd_max);
            self.stats.ecn_reductions += 1;
            out.ecn_reduction = true;
            return true;
        }
        false
    }

    /// ns-3 3.44's answer to an ECN-Echo (`TcpSocketBase::ReceivedAck`, `EnterCwr`;
    /// [`super::ns3_departures::Departure::EcnOnce`]): any ACK of new data with ECE enters CA_CWR unless the sender is
    /// in it (until an ACK passes the data outstanding at the last ECN reduction), in fast or
    /// loss recovery too, which it leaves; ssthresh = max(FlightSize / 2, 2 SMSS) from the
    /// flight after this ACK and cwnd = ssthresh, which may raise the window. FlightSize is
    /// ns-3's `BytesInFlight`: in loss recovery only what was resent since the timeout (the
    /// rest is marked lost), else `pipe`. Returns true if this ACK reduced the window.
    fn ns3_ecn_signal(&mut self, now: Instant, ack: u64, ece: bool, out: &mut AckOutcome) -> bool {
        let in_cwr = self.ecn_cwr.is_some_and(|r| ack <= r);
        if !(ece && self.config.ecn && ack > self.snd_una && !in_cwr) {
            return false;
        }
        let flight = if self.in_loss {
            self.snd_nxt.saturating_sub(ack)
        } else {
            self.pipe().saturating_sub(ack - self.snd_una)
        };
        self.ctl.on_congestion(now, CongestionKind::Ecn, flight);
        if self.in_recovery {
            self.in_recovery = false;
            self.prr = None;
            self.prr_budget = 0;
            self.ctl.on_recovery_end(now);
        }
        self.in_loss = false;
        self.mark_reduction();
        self.ecn_cwr = Some(self.snd_max);
        self.stats.ecn_reductions += 1;
        out.ecn_reduction = true;
        true
    }

    /// Forgets the segments every byte of which is below `ack` and returns the RTT sample
    /// they give, if any: Karn's rule (RFC 6298 section 3) samples only when no acknowledged
    /// segment was retransmitted. The RTO is measured from the oldest segment acknowledged,
    /// so that it includes the receiver's delayed-ACK wait (RFC 7323 section 4.3, as Linux
    /// and ns-3 do: [`RttEstimator::on_ack_samples`]); the sample returned, for the window
    /// controller, is from the newest one.
    fn take_acked(&mut self, now: Instant, ack: u64) -> Option<Duration> {
        let mut oldest: Option<Instant> = None;
        let mut newest: Option<Instant> = None;
        let mut ambiguous = false;
        while let Some(front) = self.sent.front() {
            if front.end > ack {
                break;
            }
            ambiguous |= front.retransmitted;
            oldest = oldest.or(Some(front.at));
            newest = Some(front.at);
            self.sent.pop_front();
        }
        if let (Some(first), Some(last), false) = (oldest, newest, ambiguous) {
            let ca_rtt = now.saturating_since(last);
            self.rtt.on_ack_samples(now.saturating_since(first), ca_rtt);
            return Some(ca_rtt);
        }
        None
    }

    fn on_dup_ack(&mut self, now: Instant, ece: bool, out: &mut AckOutcome) {
        self.dupacks = self.dupacks.saturating_add(1);
        // A duplicate ACK stands for one segment delivered above the hole; the hole itself is
        // never counted, so the estimate stays below what is outstanding.
        let room = self.bytes_in_flight().saturating_sub(self.mss());
        let newly_delivered = room.saturating_sub(self.dup_acked).min(self.mss());
        self.dup_acked += newly_delivered;
        if self.in_recovery && self.prr.is_some() {
            // RFC 6937: each duplicate ACK delivered one segment (the Reno emulation of SACK).
            self.prr_window(newly_delivered);
        } else if self.in_recovery {
            // RFC 6582 3.2 step 4: inflate by one SMSS per additional duplicate ACK, bounded by
            // what the ACK shows has left the network: the window never lets more than
            // ssthresh plus the delivered data be outstanding (ns-3's classic recovery keeps
            // cwnd at ssthresh and counts the delivered segments out of its pipe).
            self.ctl.set_cwnd(self.ctl.cwnd() + newly_delivered);
            if let Some(r) = self.reno.as_deref_mut() {
                // ns-3's DupAck in CA_RECOVERY: AddRenoSack.
                r.add(reno_above_head(&self.sent));
            }
        } else {
            // Step 1: enter fast retransmit only if the ACK covers more than `recover`,
            // which prevents a second reduction for losses of one window after a timeout.
            let at_threshold = self.dupacks == self.config.dupack_threshold
                && self
                    .config
                    .ns3_departures
                    .fast_retransmit_allowed(self.snd_una, self.recover);
            // ns-3's `reno-sack` departure: DupAck's step (2), `IsLost (HighACK + 1)`, at any
            // count and whatever `recover`; none in loss recovery after a timeout (CA_LOSS).
            let una = self.snd_una;
            let reno_lost = !self.in_loss && self.reno.as_deref().is_some_and(|r| r.is_lost(una));
            if !(at_threshold || reno_lost) {
                if let Some(r) = self.reno.as_deref_mut() {
                    // ns-3's DupAck in CA_DISORDER with limited transmit: AddRenoSack.
                    if !self.in_loss && self.config.limited_transmit {
                        r.add(reno_above_head(&self.sent));
                    }
                }
            } else {
                let mss = self.mss();
                let dup_acked = match self.reno.as_deref_mut() {
                    Some(r) => {
                        // ns-3's EnterRecovery without SACK: AddRenoSack, MarkHeadAsLost; its
                        // ssthresh leaves out the marked segments.
                        r.add(reno_above_head(&self.sent));
                        r.mark_head_lost(una);
                        mss * r.marked() as u64
                    }
                    None => self.dup_acked,
                };
                // RFC 5681 3.2 step 2: data sent by limited transmit is not part of FlightSize
                // (or, with ns-3's departure and without SACK, no duplicate-ACKed data is).
                let flight = match self.scoreboard {
                    None => self.config.ns3_departures.recovery_flight(
                        self.bytes_in_flight(),
                        self.limited_sent,
                        dup_acked,
                    ),
                    Some(_) => self.bytes_in_flight().saturating_sub(self.limited_sent),
                };
                // A window already reduced for ECN is not reduced again for a loss in it
                // (RFC 3168 6.1.2: once per window for drops and marks together; Linux keeps
                // ssthresh when recovery starts inside CWR).
                let reduced_already = self.ecn_recover.is_some_and(|r| self.snd_una < r);
                self.recover = Some(self.snd_max);
                if !reduced_already {
                    self.ctl.on_congestion(now, CongestionKind::DupAcks, flight);
                }
                let ssthresh = self.ctl.ssthresh();
                if let Recovery::Prr(bound) = self.config.recovery {
                    // RFC 6937 section 3, at the beginning of recovery: RecoverFS = snd.nxt -
                    // snd.una; then this ACK is the first of the recovery.
                    self.prr = Some(Prr::start(ssthresh, self.bytes_in_flight(), bound));
                    self.prr_window(newly_delivered);
                } else if at_threshold {
                    // Step 2: cwnd = ssthresh + 3 * SMSS, retransmit the lost segment.
                    self.ctl.set_cwnd(ssthresh + 3 * self.mss());
                } else {
                    // ns-3's TcpClassicRecovery::EnterRecovery: ssthresh + dupAckCount SMSS.
                    self.ctl
                        .set_cwnd(ssthresh + u64::from(self.dupacks) * self.mss());
                }
                self.in_recovery = true;
                self.partial_ack_seen = false;
                self.ecn_cwr = None;
                self.mark_reduction();
                self.stats.fast_retransmits += 1;
                out.fast_retransmit = true;
                self.retransmit_front();
            }
        }
        let info = self.ack_info(0, None, ece);
        self.ctl.on_ack(now, &info);
    }

    /// With PRR in recovery, one ACK that delivered `delivered` bytes: cwnd = pipe + sndcnt
    /// (RFC 6937 section 3), and `sndcnt` bytes may be sent (the retransmission included).
    fn prr_window(&mut self, delivered: Bytes) {
        let pipe = self.pipe();
        let mss = self.mss();
        if let Some(prr) = self.prr.as_mut() {
            let sndcnt = prr.on_ack(delivered, pipe, mss);
            self.prr_budget = sndcnt;
            self.ctl.set_cwnd(pipe + sndcnt);
        }
    }

    /// Records a window reduction: ECE for data outstanding now is not acted on again, and with
    /// ECN the next new segment carries CWR so the receiver stops echoing (RFC 3168 6.1.2;
    /// Linux sets CWR on every reduction, loss included).
    fn mark_reduction(&mut self) {
        self.ecn_recover = Some(self.snd_max);
        self.send_cwr = self.config.ecn;
    }

    /// Arranges for the one segment at snd_una to go out next, marking it retransmitted.
    fn retransmit_front(&mut self) {
        self.rexmit = Some(self.snd_una);
        if let Some(front) = self.sent.front_mut() {
            front.retransmitted = true;
        }
        if let Some(r) = self.reno.as_deref_mut() {
            r.on_head_resent(self.snd_una);
        }
    }

    /// Fires the retransmission timer if it is due; returns true if it fired.
    pub fn on_timeout(&mut self, now: Instant) -> bool {
        self.on_timeout_seen_by_receiver(now, None)
    }

    /// What a timeout now would fire on ([`TimeoutCause`]), given the receiver's next
    /// expected byte (RCV.NXT) if the caller sees the receiver; without it, a timeout whose
    /// segment the receiver holds is classed by the sender's state alone.
    pub fn timeout_cause(&self, receiver_next: Option<u64>) -> TimeoutCause {
        if receiver_next.is_some_and(|next| next > self.snd_una) {
            TimeoutCause::ReceiverHeld
        } else if self.in_recovery {
            TimeoutCause::InRecovery
        } else if self.timeout_recover.is_some_and(|r| self.snd_una < r) {
            TimeoutCause::Repeat
        } else if self.dupacks > 0 {
            // Duplicate ACKs that did not start a fast retransmit: fewer than the threshold,
            // or more that RFC 6582's `recover` test kept out of a second one.
            TimeoutCause::Disorder
        } else {
            TimeoutCause::Open
        }
    }

    /// [`TcpSender::on_timeout`] for a driver that also sees the receiver (a simulator):
    /// `receiver_next` is the receiver's RCV.NXT, used only to count the timeout by its
    /// cause in [`SenderStats::timeout_causes`].
    pub fn on_timeout_seen_by_receiver(
        &mut self,
        now: Instant,
        receiver_next: Option<u64>,
    ) -> bool {
        match self.rto_deadline {
            Some(t) if now >= t => {}
            _ => return false,
        }
        if self.snd_max == self.snd_una {
            self.rto_deadline = None;
            return false;
        }
        let cause = self.timeout_cause(receiver_next);
        self.stats.timeout_causes.count(cause);
        // RFC 6298 5.4-5.6 and RFC 5681 eq. 4: retransmit the earliest unacknowledged segment,
        // back off the timer, ssthresh = max(FlightSize / 2, 2 SMSS), cwnd = loss window.
        // FlightSize is the data still in the network: what duplicate ACKs show was delivered
        // is left out, as ns-3 (`BytesInFlight` before the timeout) and Linux (`packets_out -
        // sacked_out`) do, so a recovery that inflated the window before its retransmission
        // was lost does not set ssthresh from data that already arrived.
        self.stats.timeouts += 1;
        let same_episode = self.timeout_recover.is_some_and(|r| self.snd_una < r);
        if same_episode {
            self.ctl.on_repeated_timeout(now, self.pipe());
        } else {
            self.ctl
                .on_congestion(now, CongestionKind::Timeout, self.pipe());
            self.timeout_recover = Some(self.snd_max);
        }
        self.rtt.back_off();
        if let Some(sb) = self.scoreboard.as_mut() {
            // RFC 2018 section 8, RFC 6675 section 5.1: prior SACK information is not used
            // to choose what to resend after a timeout.
            sb.clear(self.snd_una);
        }
        self.recover = Some(self.snd_max);
        self.in_loss = true;
        if let Some(r) = self.reno.as_deref_mut() {
            // ns-3's ReTxTimeout: SetSentListLost (true) clears the marks.
            r.clear();
        }
        self.mark_reduction();
        self.in_recovery = false;
        self.prr = None;
        self.prr_budget = 0;
        self.ecn_cwr = None;
        self.dupacks = 0;
        self.limited_sent = 0;
        self.rexmit = None;
        // Go back N: resend from snd_una as the window reopens.
        self.snd_nxt = self.snd_una;
        // Karn: nothing outstanding may give an RTT sample any more.
        for s in self.sent.iter_mut() {
            s.retransmitted = true;
        }
        self.rto_deadline = Some(now + self.rtt.rto());
        true
    }

    /// True if [`TcpSender::poll_transmit`] would send a segment given enough credit: a
    /// retransmission is pending, or new data fits the window (unless the gate is credit only)
    /// and the receiver's window. TCP/CM asks its Congestion Manager for a grant only then
    /// (CM paper section 3.2.1: `cm_request` when data is queued and the window allows).
    pub fn wants_to_send(&self) -> bool {
        if self
            .rexmit
            .is_some_and(|seq| seq >= self.snd_una && seq < self.snd_max)
        {
            return true;
        }
        if self.in_recovery && self.scoreboard.is_some() {
            return self.sack_choice().is_some_and(|(.., fits)| fits);
        }
        if self.snd_nxt >= self.app_limit {
            return false;
        }
        let end = self.snd_nxt + self.mss().min(self.app_limit - self.snd_nxt);
        end <= self.window_end()
    }

    /// The end of the sequence space the window, the gate and the receiver's window allow.
    fn window_end(&self) -> u64 {
        let window_end = match self.gate {
            SendGate::CreditOnly => u64::MAX,
            // PRR in recovery: what the last ACK's sndcnt leaves (RFC 6937).
            _ if self.prr.is_some() => self.snd_nxt.saturating_add(self.prr_budget),
            // ns-3's `reno-sack` departure: `AvailableWindow ()`, cwnd (ssthresh through fast
            // recovery, TcpClassicRecovery) less `BytesInFlight ()`, which leaves out the
            // marked segments and the lost head; limited transmit is those marks.
            _ if self.reno.is_some() => {
                let window = if self.in_recovery {
                    self.ctl.ssthresh()
                } else {
                    self.ctl.cwnd()
                };
                let left_out = self
                    .reno
                    .as_deref()
                    .map_or(0, |r| r.left_out(self.snd_una, self.mss()));
                self.snd_una.saturating_add(window).saturating_add(left_out)
            }
            _ => self
                .snd_una
                .saturating_add(self.ctl.cwnd())
                .saturating_add(self.limited_transmit_allowance()),
        };
        window_end.min(self.snd_una.saturating_add(self.config.rwnd))
    }

    /// Limited transmit (RFC 3042 section 2): on each of the first two duplicate ACKs, one new
    /// segment beyond cwnd (the outstanding data stays at most cwnd + 2 SMSS), cwnd unchanged.
    /// Only previously unsent data: not after a timeout while resending below snd_max.
    fn limited_transmit_allowance(&self) -> Bytes {
        let applies = self.config.limited_transmit
            && !self.in_recovery
            && self.dupacks > 0
            && self.dupacks < self.config.dupack_threshold
            && self.snd_nxt == self.snd_max;
        if applies && self.scoreboard.is_none() {
            // Without SACK: ns-3's Reno SACK emulation, with the departure (`dup_acked` is the
            // same count).
            self.config.ns3_departures.limited_transmit_allowance(
                self.dupacks,
                self.dup_acked,
                self.mss(),
            )
        } else if applies {
            self.mss() * u64::from(self.dupacks.min(2))
        } else {
            0
        }
    }

    /// The next segment to transmit now, if the window, the gate and the application allow one.
    /// Call repeatedly until it returns `None`.
    pub fn poll_transmit(&mut self, now: Instant) -> Option<Segment> {
        if let Some(p) = self.pacer.as_deref() {
            // tcp_pacing_check: what may be sent waits for its departure time.
            let wait = !p.may_send(now) && self.wants_to_send();
            let p = self.pacer.as_deref_mut()?;
            p.set_waiting(wait);
            if wait {
                return None;
            }
        }
        if let Some(seq) = self.rexmit {
            if seq < self.snd_una || seq >= self.snd_max {
                self.rexmit = None;
            } else {
                let len = match &self.scoreboard {
                    // Up to the first SACKed byte above it.
                    Some(sb) => sb.hole_at(seq, self.snd_max).map_or(0, |(_, len)| len),
                    None => self.mss().min(self.snd_max - seq),
                };
                if self.gate != SendGate::Window {
                    if self.credit < len {
                        return None;
                    }
                    self.credit -= len;
                }
                self.rexmit = None;
                let segment = self.emit(now, seq, len);
                if let Some(sb) = self.scoreboard.as_mut() {
                    sb.on_fast_retransmit(seq, len);
                }
                return Some(segment);
            }
        }
        if self.in_recovery && self.scoreboard.is_some() {
            return self.sack_transmit(now);
        }
        if self.snd_nxt < self.snd_max {
            if let Some(sb) = &self.scoreboard {
                // Resending after a timeout: data SACKed since is not sent again.
                self.snd_nxt = sb
                    .hole_at(self.snd_nxt, self.snd_max)
                    .map_or(self.snd_max, |(seq, _)| seq);
            }
        }
        let end_of_data = self.app_limit;
        if self.snd_nxt >= end_of_data {
            return None;
        }
        let mut len = self.mss().min(end_of_data - self.snd_nxt);
        if self.snd_nxt < self.snd_max {
            if let Some((_, hole)) = self
                .scoreboard
                .as_ref()
                .and_then(|sb| sb.hole_at(self.snd_nxt, self.snd_max))
            {
                len = len.min(hole);
            }
        }
        let end = self.snd_nxt + len;
        if end > self.window_end() {
            return None;
        }
        let cwnd_end = self.snd_una.saturating_add(self.ctl.cwnd());
        if self.gate != SendGate::CreditOnly && self.prr.is_none() && end > cwnd_end {
            // Beyond cwnd: a limited-transmit segment, all of it (RFC 5681 3.2 step 2). Segments
            // are whole (up to SMSS), so one that ends beyond cwnd is sent only by limited
            // transmit's allowance, even when cwnd (bytes, with a fraction of a segment) covers
            // part of it.
            self.limited_sent += end - self.snd_nxt;
        }
        if self.gate != SendGate::Window {
            if self.credit < len {
                return None;
            }
            self.credit -= len;
        }
        let seq = self.snd_nxt;
        self.snd_nxt = end;
        Some(self.emit(now, seq, len))
    }

    /// In RFC 6675 recovery, what NextSeg () chooses, its first byte and length, and whether
    /// the window has room for it: cwnd - pipe (step C), or PRR's `sndcnt`, at least its
    /// length.
    fn sack_choice(&self) -> Option<(NextSeg, u64, Bytes, bool)> {
        let sb = self.scoreboard.as_ref()?;
        let (una, max) = (self.snd_una, self.snd_max);
        let new_len = self.mss().min(self.app_limit.saturating_sub(self.snd_nxt));
        let new_data =
            new_len > 0 && self.snd_nxt + new_len <= una.saturating_add(self.config.rwnd);
        let choice = sb.next_seg(una, max, new_data)?;
        let (seq, len) = match choice {
            NextSeg::Lost { seq, len }
            | NextSeg::Unsacked { seq, len }
            | NextSeg::Rescue { seq, len } => (seq, len),
            NextSeg::NewData => (self.snd_nxt, new_len),
        };
        let room = match self.prr {
            Some(_) => self.prr_budget,
            None => self.ctl.cwnd().saturating_sub(sb.pipe()),
        };
        let fits = self.gate == SendGate::CreditOnly || room >= len;
        Some((choice, seq, len, fits))
    }

    /// One transmission of RFC 6675 section 5 step (C): the segment NextSeg () chooses, if the
    /// window and the gate allow it.
    fn sack_transmit(&mut self, now: Instant) -> Option<Segment> {
        let (choice, seq, len, fits) = self.sack_choice()?;
        if !fits {
            return None;
        }
        if self.gate != SendGate::Window {
            if self.credit < len {
                return None;
            }
            self.credit -= len;
        }
        if choice == NextSeg::NewData {
            self.snd_nxt = seq + len;
        }
        let segment = self.emit(now, seq, len);
        let recover = self.recover.unwrap_or(self.snd_max);
        if let Some(sb) = self.scoreboard.as_mut() {
            match choice {
                NextSeg::NewData => sb.on_sent_new(len),
                NextSeg::Rescue { .. } => sb.on_rescue(recover, len),
                NextSeg::Lost { .. } | NextSeg::Unsacked { .. } => sb.on_retransmit(seq, len),
            }
        }
        Some(segment)
    }

    /// Records the transmission of `len` bytes at `seq` and builds the segment.
    fn emit(&mut self, now: Instant, seq: u64, len: Bytes) -> Segment {
        let end = seq + len;
        let retransmission = seq < self.snd_max;
        if end > self.snd_max {
            self.sent.push_back(Sent {
                end,
                at: now,
                retransmitted: false,
            });
            self.snd_max = end;
        }
        self.stats.segments_sent += 1;
        if let Some(p) = self.pacer.as_deref_mut() {
            p.on_send(now, len);
        }
        if let Some(prr) = self.prr.as_mut() {
            // RFC 6937: prr_out += data sent, retransmissions included.
            prr.on_sent(len);
            self.prr_budget = self.prr_budget.saturating_sub(len);
        }
        if retransmission {
            self.stats.retransmissions += 1;
            if self.scoreboard.is_some() {
                // Karn: no RTT sample from any segment this resends.
                let first = self.sent.partition_point(|s| s.end <= seq);
                for s in self.sent.iter_mut().skip(first) {
                    s.retransmitted = true;
                    if s.end >= end {
                        break;
                    }
                }
            }
        }
        if self.rto_deadline.is_none() {
            self.rto_deadline = Some(now + self.rtt.rto());
        }
        let cwr = self.send_cwr && !retransmission;
        if cwr {
            self.send_cwr = false;
        }
        Segment {
            seq,
            len: len as u32,
            retransmission,
            cwr,
            // RFC 3168 6.1.5: retransmitted data must not be sent ECN-capable.
            ect: self.config.ecn && !retransmission,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::ns3_departures::{Departure, Ns3Departures};
    use super::super::prr::ReductionBound;
    use super::*;

    const MSS: u64 = 1000;

    fn config() -> TcpConfig {
        TcpConfig {
            mss: MSS,
            initial_cwnd: 4,
            ..TcpConfig::default()
        }
    }

    fn ms(n: u64) -> Instant {
        Instant::from_millis(n)
    }

    fn sender(c: TcpConfig) -> TcpSender {
        TcpSender::new(c).expect("valid configuration")
    }

    fn drain(s: &mut TcpSender, now: Instant) -> Vec<Segment> {
        std::iter::from_fn(|| s.poll_transmit(now)).collect()
    }

    #[test]
    fn an_ack_of_two_segments_times_the_rto_from_the_older_and_returns_the_newer() {
        let mut s = sender(config());
        s.set_app_limit(MSS);
        assert_eq!(drain(&mut s, ms(0)).len(), 1);
        s.set_app_limit(2 * MSS);
        assert_eq!(drain(&mut s, ms(50)).len(), 1);
        // One delayed ACK of both at 150 ms: 150 ms after the first left, 100 ms after the
        // second.
        let out = s.on_ack(ms(150), 2 * MSS, false);
        assert_eq!(out.rtt, Some(Duration::from_millis(100)));
        // RFC 6298 2.2 with R = 150 ms: SRTT 150 ms, RTTVAR 75 ms, RTO 150 + 4 * 75 = 450 ms.
        assert_eq!(s.rtt().srtt(), Some(Duration::from_millis(150)));
        assert_eq!(s.rtt().rttvar(), Duration::from_millis(75));
        assert_eq!(s.rtt().rto(), Duration::from_millis(450));
        assert_eq!(s.rtt().min_rtt(), Duration::from_millis(100));
        assert_eq!(s.rtt().latest(), Duration::from_millis(100));
    }

    #[test]
    fn the_initial_window_limits_the_first_flight() {
        let mut s = sender(config());
        let segs = drain(&mut s, ms(0));
        assert_eq!(segs.len(), 4);
        assert_eq!(
            segs.iter().map(|g| g.seq).collect::<Vec<_>>(),
            vec![0, 1000, 2000, 3000]
        );
        assert_eq!(s.bytes_in_flight(), 4000);
        assert_eq!(s.poll_timeout(), Some(ms(1000)));
    }

    #[test]
    fn a_new_ack_takes_an_rtt_sample_and_grows_cwnd_in_slow_start() {
        let mut s = sender(config());
        drain(&mut s, ms(0));
        let out = s.on_ack(ms(100), 1000, false);
        assert_eq!(out.bytes_acked, 1000);
        assert_eq!(out.rtt, Some(Duration::from_millis(100)));
        assert_eq!(s.cwnd(), 5000);
        // RTO = 100 + 4 * 50 = 300 ms, restarted at the ACK.
        assert_eq!(s.poll_timeout(), Some(ms(400)));
        assert_eq!(drain(&mut s, ms(100)).len(), 2);
    }

    #[test]
    fn with_pacing_an_ack_sets_the_rate_and_the_next_segment_waits_its_gap() {
        let mut s = sender(TcpConfig {
            initial_cwnd: 10,
            pacing: Some(super::super::pacing::PacingConfig::default()),
            ..config()
        });
        // No RTT sample yet: no rate, the initial window leaves at once.
        assert_eq!(drain(&mut s, ms(0)).len(), 10);
        // srtt 100 ms, cwnd 11 segments in slow start: 2.00 * 11_000 B / 0.1 s = 220_000 B/s,
        // 4_545_454 ns a segment.
        s.on_ack(ms(100), 1000, false);
        let first = s
            .poll_transmit(ms(100))
            .expect("the first paced segment is due");
        assert_eq!(first.seq, 10_000);
        // Idle since 0: half the gap is taken off (tcp_update_skb_after_send's credit).
        assert_eq!(s.poll_transmit(ms(100)), None);
        let due = Instant::from_nanos(100_000_000 + 2_272_727);
        assert_eq!(s.poll_timeout(), Some(due));
        assert_eq!(s.poll_transmit(due - Duration::from_nanos(1)), None);
        let second = s
            .poll_transmit(due)
            .expect("the second segment at its departure");
        assert_eq!(second.seq, 11_000);
        // The window is full: nothing waits, the retransmission timer alone is armed.
        assert_eq!(s.poll_transmit(due), None);
        assert_eq!(s.poll_timeout(), Some(ms(400)));
    }

    #[test]
    fn the_third_duplicate_ack_triggers_fast_retransmit_with_halved_ssthresh() {
        let mut s = sender(TcpConfig {
            initial_cwnd: 10,
            ..config()
        });
        drain(&mut s, ms(0));
        s.on_ack(ms(100), 1000, false); // cwnd 11000, segments up to 12000 may go out
        drain(&mut s, ms(100));
        assert_eq!(s.bytes_in_flight(), 11_000);
        assert!(!s.on_ack(ms(101), 1000, false).fast_retransmit);
        assert!(!s.on_ack(ms(102), 1000, false).fast_retransmit);
        assert_eq!(s.cwnd(), 11_000, "no reduction before the third duplicate");
        let out = s.on_ack(ms(103), 1000, false);
        assert!(out.fast_retransmit && out.duplicate);
        // ssthresh = FlightSize / 2 = 5500; cwnd = ssthresh + 3 SMSS.
        assert_eq!(s.ssthresh(), 5500);
        assert_eq!(s.cwnd(), 8500);
        assert!(s.in_recovery());
        let seg = s
            .poll_transmit(ms(103))
            .expect("the lost segment is resent at once");
        assert_eq!((seg.seq, seg.len, seg.retransmission), (1000, 1000, true));
        assert_eq!(s.stats().fast_retransmits, 1);
    }

    #[test]
    fn each_further_duplicate_ack_inflates_cwnd_by_one_segment() {
        let mut s = sender(TcpConfig {
            initial_cwnd: 10,
            ..config()
        });
        drain(&mut s, ms(0));
        for i in 0..3 {
            s.on_ack(ms(100 + i), 0, false);
        }
        assert_eq!(s.cwnd(), 5000 + 3000);
        s.poll_transmit(ms(103));
        s.on_ack(ms(104), 0, false);
        assert_eq!(s.cwnd(), 9000);
        // Flight is 10000 and the window ends at 0 + 9000: nothing new may go.
        assert_eq!(s.poll_transmit(ms(104)), None);
        s.on_ack(ms(105), 0, false);
        s.on_ack(ms(106), 0, false);
        // cwnd 11000: one new segment beyond snd_max 10000.
        let seg = s
            .poll_transmit(ms(106))
            .expect("inflation releases new data");
        assert_eq!((seg.seq, seg.retransmission), (10_000, false));
    }

    #[test]
    fn with_prr_recovery_sends_on_alternate_duplicate_acks_and_ends_at_ssthresh() {
        // RFC 6937 section 6's single loss: 20 segments out, the first lost, ssthresh 10.
        let mut s = sender(TcpConfig {
            initial_cwnd: 20,
            recovery: Recovery::Prr(super::super::prr::ReductionBound::SlowStart),
            ..config()
        });
        assert_eq!(drain(&mut s, ms(0)).len(), 20);
        s.on_ack(ms(100), 0, false);
        s.on_ack(ms(101), 0, false);
        assert!(s.on_ack(ms(102), 0, false).fast_retransmit);
        assert_eq!(s.ssthresh(), 10_000);
        // pipe = 20000 - 3 delivered = 17000 > ssthresh: sndcnt = CEIL(1000 * 10000 / 20000)
        // = one segment; cwnd = pipe + sndcnt.
        assert_eq!(s.pipe(), 17_000);
        assert_eq!(s.cwnd(), 18_000);
        let segs = drain(&mut s, ms(102));
        assert_eq!(segs.len(), 1, "the retransmission spends the ACK's sndcnt");
        assert_eq!((segs[0].seq, segs[0].retransmission), (0, true));
        // Fourth duplicate: CEIL(2000 * 10000 / 20000) - 1000 = 0.
        s.on_ack(ms(103), 0, false);
        assert_eq!(s.cwnd(), 16_000);
        assert!(drain(&mut s, ms(103)).is_empty());
        // Fifth: CEIL(1500, in segments 2000) - 1000 = one new segment.
        s.on_ack(ms(104), 0, false);
        assert_eq!(s.cwnd(), 16_000);
        let segs = drain(&mut s, ms(104));
        assert_eq!(
            segs.iter()
                .map(|g| (g.seq, g.retransmission))
                .collect::<Vec<_>>(),
            vec![(20_000, false)]
        );
        // The full ACK ends recovery with cwnd = ssthresh (RFC 6937, "on exiting recovery").
        s.on_ack(ms(200), 21_000, false);
        assert!(!s.in_recovery());
        assert_eq!(s.cwnd(), 10_000);
    }

    #[test]
    fn with_prr_a_partial_ack_counts_only_the_data_it_newly_delivered() {
        let mut s = sender(TcpConfig {
            initial_cwnd: 20,
            recovery: Recovery::Prr(super::super::prr::ReductionBound::SlowStart),
            ..config()
        });
        drain(&mut s, ms(0));
        for i in 0..4 {
            s.on_ack(ms(100 + i), 0, false);
        }
        drain(&mut s, ms(103));
        // Four duplicates counted 4000 delivered, the last two inside recovery (prr_delivered
        // 2000, prr_out 1000: the retransmission). A partial ACK to 6000 covers the lost
        // segment, the four counted and one more: DeliveredData = 6000 - 4000 = 2000, so
        // prr_delivered = 4000; pipe = 20000 - 6000 = 14000 > ssthresh; sndcnt =
        // CEIL(4000 * 10000 / 20000) - 1000 = 1000: the retransmission of 6000 alone.
        let out = s.on_ack(ms(110), 6000, false);
        assert_eq!(out.bytes_acked, 6000);
        assert!(s.in_recovery());
        assert_eq!(s.pipe(), 14_000);
        assert_eq!(s.cwnd(), 15_000);
        let segs = drain(&mut s, ms(110));
        assert_eq!(
            segs.iter()
                .map(|g| (g.seq, g.retransmission))
                .collect::<Vec<_>>(),
            vec![(6000, true)]
        );
        // The next duplicate: prr_delivered 5000, CEIL(2500 -> 3000) - 2000 = one new segment.
        s.on_ack(ms(111), 6000, false);
        let segs = drain(&mut s, ms(111));
        assert_eq!(
            segs.iter()
                .map(|g| (g.seq, g.retransmission))
                .collect::<Vec<_>>(),
            vec![(20_000, false)]
        );
    }

    #[test]
    fn a_partial_ack_retransmits_the_next_hole_and_deflates() {
        let mut s = sender(TcpConfig {
            initial_cwnd: 10,
            ..config()
        });
        drain(&mut s, ms(0));
        for i in 0..3 {
            s.on_ack(ms(100 + i), 0, false);
        }
        s.poll_transmit(ms(102)); // retransmission of 0..1000
        assert_eq!(s.cwnd(), 8000);
        // Partial ACK: 0..3000 acknowledged, recover point is 10000.
        let out = s.on_ack(ms(200), 3000, false);
        assert_eq!(out.bytes_acked, 3000);
        assert!(s.in_recovery());
        // Deflate by 3000, add back one SMSS: 8000 - 3000 + 1000.
        assert_eq!(s.cwnd(), 6000);
        let seg = s.poll_transmit(ms(200)).expect("the next hole is resent");
        assert_eq!((seg.seq, seg.retransmission), (3000, true));
        // The first partial ACK restarted the timer: RTO is still the initial 1 s (no sample:
        // every outstanding segment is older than the retransmission).
        assert_eq!(s.poll_timeout(), Some(ms(1200)));
    }

    #[test]
    fn a_full_ack_ends_recovery_with_cwnd_at_most_ssthresh() {
        let mut s = sender(TcpConfig {
            initial_cwnd: 10,
            ..config()
        });
        drain(&mut s, ms(0));
        for i in 0..3 {
            s.on_ack(ms(100 + i), 0, false);
        }
        s.poll_transmit(ms(102));
        s.on_ack(ms(200), 10_000, false);
        assert!(!s.in_recovery());
        // min(ssthresh 5000, max(flight 0, SMSS) + SMSS) = 2000.
        assert_eq!(s.cwnd(), 2000);
    }

    #[test]
    fn the_timer_backs_off_exponentially_and_collapses_the_window() {
        let mut s = sender(TcpConfig {
            initial_cwnd: 10,
            ..config()
        });
        drain(&mut s, ms(0));
        s.on_ack(ms(100), 1000, false); // RTO = 300 ms from the 100 ms sample
        drain(&mut s, ms(100));
        assert_eq!(s.poll_timeout(), Some(ms(400)));
        assert!(!s.on_timeout(ms(399)), "not due yet");
        assert!(s.on_timeout(ms(400)));
        assert_eq!(s.cwnd(), MSS);
        assert_eq!(s.ssthresh(), 5500);
        let seg = s.poll_transmit(ms(400)).expect("go back to snd_una");
        assert_eq!((seg.seq, seg.retransmission), (1000, true));
        assert_eq!(s.poll_transmit(ms(400)), None, "loss window is one segment");
        // Backoff doubles: 600 ms, then 1200 ms.
        assert_eq!(s.poll_timeout(), Some(ms(1000)));
        assert!(s.on_timeout(ms(1000)));
        assert_eq!(s.poll_timeout(), Some(ms(2200)));
        assert_eq!(s.stats().timeouts, 2);
    }

    #[test]
    fn the_ack_ending_a_lone_segments_timeout_grows_cwnd_and_keeps_the_backed_off_rto() {
        // One segment out, its timer expires, it is resent: recover = snd_max = 1000.
        let mut s = sender(TcpConfig {
            initial_cwnd: 1,
            ..config()
        });
        assert_eq!(drain(&mut s, ms(0)).len(), 1);
        assert!(s.on_timeout(ms(1000)));
        assert_eq!(s.poll_transmit(ms(1000)).map(|g| g.seq), Some(0));
        assert_eq!(
            s.poll_timeout(),
            Some(ms(3000)),
            "RTO 1 s doubled (RFC 6298 5.5)"
        );
        // The ACK of exactly everything sent before the timeout: no RTT sample (Karn), so the
        // backed-off RTO stays (RFC 6298 section 5, the note after 5.7: RTO collapses only on
        // a new measurement); slow start grows cwnd from the loss window by one SMSS (RFC 5681
        // 3.1), so two segments go out and the receiver acknowledges the second at once.
        let out = s.on_ack(ms(1100), 1000, false);
        assert_eq!((out.bytes_acked, out.rtt), (1000, None));
        assert_eq!(s.cwnd(), 2 * MSS);
        assert_eq!(s.rtt().rto(), Duration::from_secs(2));
        assert_eq!(
            drain(&mut s, ms(1100))
                .iter()
                .map(|g| g.seq)
                .collect::<Vec<_>>(),
            vec![1000, 2000]
        );
        assert_eq!(
            s.poll_timeout(),
            Some(ms(3100)),
            "started by the send, backed off"
        );
    }

    #[test]
    fn a_timeout_whose_segment_the_receiver_holds_is_counted_as_receiver_held() {
        let mut s = sender(TcpConfig {
            initial_cwnd: 2,
            ..config()
        });
        s.set_app_limit(3000);
        drain(&mut s, ms(0));
        // RTO = max(20 + 4 * 10, 200) = 200 ms from the 20 ms sample, restarted at the ACK,
        // which lets the last segment (2000..3000) out alone.
        s.on_ack(ms(20), 2000, false);
        assert_eq!(drain(&mut s, ms(20)).len(), 1);
        assert_eq!(s.poll_timeout(), Some(ms(220)));
        // The receiver has it (RCV.NXT 3000) and delays its ACK.
        assert_eq!(s.timeout_cause(Some(3000)), TimeoutCause::ReceiverHeld);
        assert_eq!(s.timeout_cause(None), TimeoutCause::Open);
        assert!(s.on_timeout_seen_by_receiver(ms(220), Some(3000)));
        assert_eq!(s.stats().timeouts, 1);
        assert_eq!(
            s.stats().timeout_causes,
            TimeoutCauses {
                receiver_held: 1,
                ..TimeoutCauses::default()
            }
        );
    }

    #[test]
    fn timeouts_are_counted_by_the_senders_state_when_the_receiver_lacks_the_segment() {
        // No duplicate ACK: open.
        let mut s = sender(config());
        drain(&mut s, ms(0));
        assert!(s.on_timeout_seen_by_receiver(ms(1000), Some(0)));
        // The resend is lost too: the same loss episode, a repeat.
        s.poll_transmit(ms(1000));
        assert_eq!(s.timeout_cause(Some(0)), TimeoutCause::Repeat);
        assert!(s.on_timeout_seen_by_receiver(ms(3000), Some(0)));
        assert_eq!(
            s.stats().timeout_causes,
            TimeoutCauses {
                repeat: 1,
                open: 1,
                ..TimeoutCauses::default()
            }
        );

        // Two duplicate ACKs, too few for fast retransmit: disorder.
        let mut s = sender(config());
        drain(&mut s, ms(0));
        s.on_ack(ms(100), 0, false);
        s.on_ack(ms(101), 0, false);
        assert_eq!(s.timeout_cause(Some(0)), TimeoutCause::Disorder);
        assert!(s.on_timeout(ms(1000)));
        assert_eq!(
            s.stats().timeout_causes,
            TimeoutCauses {
                disorder: 1,
                ..TimeoutCauses::default()
            }
        );

        // In fast recovery (the retransmission lost): in recovery.
        let mut s = sender(TcpConfig {
            initial_cwnd: 10,
            ..config()
        });
        drain(&mut s, ms(0));
        for i in 0..3 {
            s.on_ack(ms(100 + i), 0, false);
        }
        assert!(s.in_recovery());
        assert_eq!(s.timeout_cause(Some(0)), TimeoutCause::InRecovery);
        assert!(s.on_timeout_seen_by_receiver(ms(1000), Some(0)));
        assert_eq!(
            s.stats().timeout_causes,
            TimeoutCauses {
                in_recovery: 1,
                ..TimeoutCauses::default()
            }
        );
        assert_eq!(s.stats().timeouts, s.stats().timeout_causes.total());
    }

    #[test]
    fn duplicate_acks_after_a_timeout_do_not_trigger_a_second_reduction() {
        let mut s = sender(TcpConfig {
            initial_cwnd: 10,
            ..config()
        });
        drain(&mut s, ms(0));
        assert!(s.on_timeout(ms(1000)));
        s.poll_transmit(ms(1000));
        for i in 0..3 {
            assert!(!s.on_ack(ms(1100 + i), 0, false).fast_retransmit);
        }
        assert_eq!((s.ssthresh(), s.cwnd()), (5000, MSS));
    }

    #[test]
    fn an_ecn_echo_halves_cwnd_once_per_window_without_retransmitting() {
        let mut s = sender(TcpConfig {
            initial_cwnd: 10,
            ecn: true,
            ..config()
        });
        let first = drain(&mut s, ms(0));
        assert!(first.iter().all(|g| g.ect && !g.cwr));
        let out = s.on_ack(ms(100), 1000, true);
        assert!(out.ecn_reduction);
        // ssthresh = cwnd = FlightSize / 2 at the signal = 10000 / 2; no growth from this ACK.
        assert_eq!((s.ssthresh(), s.cwnd()), (5000, 5000));
        assert_eq!(
            s.poll_transmit(ms(100)),
            None,
            "9000 in flight exceeds the new window"
        );
        s.on_ack(ms(101), 6000, false);
        let seg = s
            .poll_transmit(ms(101))
            .expect("new data, not a retransmission");
        assert_eq!(
            (seg.seq, seg.retransmission, seg.cwr),
            (10_000, false, true)
        );
        // A second ECE within the window outstanding at the reduction changes nothing, and
        // the window does not grow until that window is acknowledged.
        assert!(!s.on_ack(ms(102), 7000, true).ecn_reduction);
        assert_eq!((s.ssthresh(), s.cwnd()), (5000, 5000));
        assert_eq!(s.stats().retransmissions, 0);
        // The ACK of exactly the window outstanding at the reduction may still carry the echo
        // of that window's marks (the CWR segment starts there): no second reduction.
        assert!(
            drain(&mut s, ms(102)).iter().all(|g| !g.cwr),
            "CWR goes on one segment only"
        );
        assert!(!s.on_ack(ms(200), 10_000, true).ecn_reduction);
        assert_eq!(
            s.cwnd(),
            5000,
            "no growth until data beyond the window is acknowledged"
        );
        // ECE on an ACK beyond it is a new mark: reduce again.
        assert!(s.on_ack(ms(201), 11_000, true).ecn_reduction);
        assert_eq!(s.stats().ecn_reductions, 2);
    }

    #[test]
    fn retransmissions_are_not_ecn_capable() {
        let mut s = sender(TcpConfig {
            initial_cwnd: 10,
            ecn: true,
            ..config()
        });
        drain(&mut s, ms(0));
        for i in 0..3 {
            s.on_ack(ms(100 + i), 0, false);
        }
        let seg = s.poll_transmit(ms(103)).expect("fast retransmit");
        assert!(seg.retransmission && !seg.ect, "RFC 3168 6.1.5");
    }

    #[test]
    fn marks_echoed_during_fast_recovery_cause_no_second_reduction() {
        let mut s = sender(TcpConfig {
            initial_cwnd: 10,
            ecn: true,
            ..config()
        });
        drain(&mut s, ms(0));
        for i in 0..3 {
            s.on_ack(ms(100 + i), 0, true);
        }
        // The first duplicate carried ECE: one reduction for the marks; the loss in the same
        // window enters fast recovery without halving again.
        assert!(s.in_recovery());
        assert_eq!(s.stats().ecn_reductions, 1);
        assert_eq!((s.ssthresh(), s.cwnd()), (5000, 8000));
        s.poll_transmit(ms(103));
        // The full ACK still echoes the marks of the same window: no reduction.
        assert!(!s.on_ack(ms(200), 10_000, true).ecn_reduction);
        assert_eq!(s.ssthresh(), 5000);
        assert_eq!(s.stats().ecn_reductions, 1);
        // The first new segment after the reduction carries CWR.
        let seg = s.poll_transmit(ms(200)).expect("new data");
        assert!(seg.cwr && !seg.retransmission);
    }

    #[test]
    fn an_ecn_echo_after_a_timeout_never_raises_the_window() {
        let mut s = sender(TcpConfig {
            initial_cwnd: 10,
            ecn: true,
            ..config()
        });
        drain(&mut s, ms(0));
        assert!(s.on_timeout(ms(1000)));
        assert_eq!(s.cwnd(), MSS);
        s.poll_transmit(ms(1000));
        // An ACK beyond the timed-out window with ECE: a reduction may not lift cwnd to
        // flight / 2.
        s.on_ack(ms(1100), 1000, false);
        drain(&mut s, ms(1100));
        s.on_ack(ms(1200), 11_000, true);
        assert!(s.cwnd() <= 2 * MSS, "cwnd {}", s.cwnd());
    }

    #[test]
    fn a_timeout_in_recovery_takes_ssthresh_from_the_data_still_in_the_network() {
        let mut s = sender(TcpConfig {
            initial_cwnd: 10,
            ..config()
        });
        drain(&mut s, ms(0));
        for i in 0..3 {
            s.on_ack(ms(100 + i), 0, false);
        }
        // Recovery: ssthresh 5000, cwnd 8000; the retransmission goes out (and is lost).
        assert_eq!(s.poll_transmit(ms(102)).map(|g| g.seq), Some(0));
        // Five more duplicate ACKs inflate cwnd to 13000 and release 10000..13000.
        for i in 0..5 {
            s.on_ack(ms(110 + i), 0, false);
        }
        assert_eq!(s.cwnd(), 13_000);
        assert_eq!(drain(&mut s, ms(115)).len(), 3);
        assert_eq!(s.bytes_in_flight(), 13_000);
        assert_eq!(s.dup_acked(), 8000);
        assert_eq!(s.pipe(), 5000);
        assert!(s.on_timeout(ms(1102)));
        // max(pipe / 2, 2 SMSS) = 2500; FlightSize / 2 would have given 6500.
        assert_eq!((s.ssthresh(), s.cwnd()), (2500, MSS));
    }

    #[test]
    fn duplicate_acks_beyond_the_outstanding_segments_do_not_inflate_the_window() {
        let mut s = sender(config());
        drain(&mut s, ms(0));
        for i in 0..3 {
            s.on_ack(ms(100 + i), 0, false);
        }
        // ssthresh max(2000, 2000), cwnd 2000 + 3000; three of the four segments delivered.
        assert_eq!((s.ssthresh(), s.cwnd()), (2000, 5000));
        assert_eq!(s.dup_acked(), 3000);
        // A fourth duplicate ACK with nothing more outstanding beyond the hole.
        s.on_ack(ms(103), 0, false);
        assert_eq!(s.cwnd(), 5000);
        assert_eq!(s.dup_acked(), 3000);
    }

    #[test]
    fn a_partial_ack_forgets_the_delivered_data_it_covers() {
        let mut s = sender(TcpConfig {
            initial_cwnd: 10,
            ..config()
        });
        drain(&mut s, ms(0));
        for i in 0..4 {
            s.on_ack(ms(100 + i), 0, false);
        }
        assert_eq!(s.dup_acked(), 4000);
        // 0..3000: the retransmitted segment and two delivered ones.
        s.on_ack(ms(200), 3000, false);
        assert_eq!(s.dup_acked(), 2000);
        assert_eq!(s.pipe(), 7000 - 2000);
    }

    #[test]
    fn limited_transmit_sends_one_new_segment_on_each_of_the_first_two_duplicate_acks() {
        let mut s = sender(TcpConfig {
            initial_cwnd: 10,
            limited_transmit: true,
            ..config()
        });
        drain(&mut s, ms(0));
        s.on_ack(ms(100), 0, false);
        let segs = drain(&mut s, ms(100));
        assert_eq!(segs.len(), 1);
        assert_eq!((segs[0].seq, segs[0].retransmission), (10_000, false));
        s.on_ack(ms(101), 0, false);
        let segs = drain(&mut s, ms(101));
        assert_eq!(segs.iter().map(|g| g.seq).collect::<Vec<_>>(), vec![11_000]);
        assert_eq!(s.cwnd(), 10_000, "cwnd is not changed");
        // The third: FlightSize leaves out the two limited-transmit segments (RFC 5681 3.2).
        assert!(s.on_ack(ms(102), 0, false).fast_retransmit);
        assert_eq!(s.ssthresh(), 5000);
    }

    #[test]
    fn a_limited_transmit_segment_partly_inside_cwnd_is_left_out_of_flightsize_whole() {
        let mut s = sender(TcpConfig {
            initial_cwnd: 10,
            limited_transmit: true,
            ..config()
        });
        drain(&mut s, ms(0));
        // cwnd 10.5 segments: the eleventh segment (10,000-11,000) does not fit, half of it does.
        s.ctl.set_cwnd(10_500);
        assert_eq!(s.poll_transmit(ms(1)), None);
        s.on_ack(ms(100), 0, false);
        let segs = drain(&mut s, ms(100));
        assert_eq!(segs.iter().map(|g| g.seq).collect::<Vec<_>>(), vec![10_000]);
        assert_eq!(s.limited_sent, 1000, "the whole segment");
        s.on_ack(ms(101), 0, false);
        let segs = drain(&mut s, ms(101));
        assert_eq!(segs.iter().map(|g| g.seq).collect::<Vec<_>>(), vec![11_000]);
        assert_eq!(s.limited_sent, 2000);
        // Third duplicate ACK: FlightSize = 12,000 - 2,000 limited-transmit bytes = 10,000, so
        // ssthresh = 5,000 (RFC 5681 eq. 4); counting only the bytes beyond cwnd gave 5,250.
        assert!(s.on_ack(ms(102), 0, false).fast_retransmit);
        assert_eq!(s.ssthresh(), 5000);
    }

    #[test]
    fn without_limited_transmit_a_duplicate_ack_sends_nothing() {
        let mut s = sender(TcpConfig {
            initial_cwnd: 10,
            ..config()
        });
        drain(&mut s, ms(0));
        s.on_ack(ms(100), 0, false);
        assert_eq!(s.poll_transmit(ms(100)), None);
    }

    #[test]
    fn after_an_ecn_reduction_then_a_timeout_slow_start_grows_the_window() {
        let mut s = sender(TcpConfig {
            initial_cwnd: 10,
            ecn: true,
            ..config()
        });
        drain(&mut s, ms(0));
        assert!(s.on_ack(ms(100), 1000, true).ecn_reduction);
        drain(&mut s, ms(100));
        assert!(s.on_timeout(ms(1100)));
        assert_eq!(s.cwnd(), MSS);
        s.poll_transmit(ms(1100));
        // The resent segment is acknowledged: slow start from the loss window (RFC 5681 3.1),
        // not held by the ECN reduction's window.
        s.on_ack(ms(1200), 2000, false);
        assert_eq!(s.cwnd(), 2 * MSS);
    }

    #[test]
    fn after_an_ecn_reduction_the_window_holds_until_the_reduced_window_is_acknowledged() {
        let mut s = sender(TcpConfig {
            initial_cwnd: 10,
            ecn: true,
            ..config()
        });
        drain(&mut s, ms(0));
        assert!(s.on_ack(ms(100), 1000, true).ecn_reduction);
        let cwnd = s.cwnd();
        s.on_ack(ms(101), 2000, false);
        assert_eq!(s.cwnd(), cwnd, "inside the reduced window");
    }

    #[test]
    fn a_second_timeout_before_the_first_ones_window_is_acknowledged_keeps_ssthresh() {
        let mut s = sender(TcpConfig {
            initial_cwnd: 10,
            ..config()
        });
        drain(&mut s, ms(0));
        assert!(s.on_timeout(ms(1000)));
        assert_eq!(s.ssthresh(), 5000);
        s.poll_transmit(ms(1000));
        // The resent segment is acknowledged; cwnd 2000 sends 1000..3000, then the timer again.
        s.on_ack(ms(1100), 1000, false);
        drain(&mut s, ms(1100));
        assert_eq!(s.cwnd(), 2000);
        assert!(s.on_timeout(ms(4000)));
        assert_eq!((s.ssthresh(), s.cwnd()), (5000, MSS), "same loss episode");
        // Once all of the first timeout's window is acknowledged, a new timeout reduces again.
        s.poll_transmit(ms(4000));
        s.on_ack(ms(4100), 10_000, false);
        drain(&mut s, ms(4100));
        assert_eq!(s.bytes_in_flight(), 2000);
        assert!(s.on_timeout(ms(9000)));
        assert_eq!(s.ssthresh(), 2000, "max(2000 / 2, 2 SMSS)");
    }

    #[test]
    fn a_finite_transfer_ends_when_all_bytes_are_acknowledged() {
        let mut s = sender(config());
        s.set_app_limit(2500);
        let segs = drain(&mut s, ms(0));
        assert_eq!(
            segs.iter().map(|g| g.len).collect::<Vec<_>>(),
            vec![1000, 1000, 500]
        );
        assert!(!s.is_finished());
        s.on_ack(ms(50), 2500, false);
        assert!(s.is_finished());
        assert_eq!(s.poll_timeout(), None);
    }

    #[test]
    fn acks_for_unsent_data_are_ignored_and_counted() {
        let mut s = sender(config());
        drain(&mut s, ms(0));
        assert!(s.on_ack(ms(1), 99_999, false).ignored);
        assert_eq!(s.stats().invalid_acks, 1);
        assert_eq!(s.snd_una(), 0);
    }

    #[test]
    fn a_credit_gate_releases_exactly_the_granted_bytes() {
        let mut s = sender(config());
        s.set_gate(SendGate::CreditOnly);
        assert_eq!(s.poll_transmit(ms(0)), None);
        s.grant(2500);
        assert_eq!(drain(&mut s, ms(0)).len(), 2);
        assert_eq!(s.credit(), 500);
    }

    #[test]
    fn wants_to_send_while_new_data_fits_the_window_or_the_gate_ignores_it() {
        let mut s = sender(config());
        assert!(s.wants_to_send(), "an empty pipe and an infinite source");
        for _ in 0..3 {
            s.poll_transmit(ms(0)).expect("within the initial window");
        }
        assert_eq!(s.bytes_in_flight(), 3000);
        assert!(s.wants_to_send(), "one more segment fits cwnd 4000");
        s.poll_transmit(ms(0)).expect("the fourth segment");
        assert_eq!(s.bytes_in_flight(), 4000);
        assert!(
            !s.wants_to_send(),
            "the window is full under SendGate::Window"
        );
        assert_eq!(s.poll_transmit(ms(0)), None);
        // Credit only: cwnd no longer limits, so the sender wants a grant; without one it still
        // sends nothing.
        s.set_gate(SendGate::CreditOnly);
        assert_eq!(s.cwnd(), 4000);
        assert!(
            s.wants_to_send(),
            "a full cwnd does not count under CreditOnly"
        );
        assert_eq!(s.poll_transmit(ms(0)), None);
        s.grant(MSS);
        let seg = s
            .poll_transmit(ms(0))
            .expect("the grant releases one segment");
        assert_eq!((seg.seq, seg.len), (4000, 1000));
        assert!(s.wants_to_send());
    }

    #[test]
    fn wants_to_send_only_for_a_pending_retransmission_once_all_data_is_sent() {
        let mut s = sender(TcpConfig {
            initial_cwnd: 10,
            ..config()
        });
        s.set_app_limit(5000);
        assert_eq!(drain(&mut s, ms(0)).len(), 5);
        assert_eq!(s.snd_nxt(), 5000);
        assert!(
            !s.wants_to_send(),
            "all 5000 bytes sent, though cwnd 10000 has room"
        );
        for i in 0..3 {
            s.on_ack(ms(100 + i), 0, false);
        }
        assert!(s.in_recovery());
        assert!(
            s.wants_to_send(),
            "the fast retransmit of 0..1000 is pending"
        );
        let seg = s.poll_transmit(ms(102)).expect("the retransmission");
        assert_eq!((seg.seq, seg.retransmission), (0, true));
        assert!(!s.wants_to_send(), "nothing left once it went");
    }
    fn sack_sender(recovery: Recovery) -> TcpSender {
        sender(TcpConfig {
            initial_cwnd: 10,
            sack: true,
            recovery,
            ..config()
        })
    }

    /// A duplicate ACK of `ack` carrying `blocks`.
    fn sacked(s: &mut TcpSender, t: u64, ack: u64, blocks: &[(u64, u64)]) -> AckOutcome {
        s.on_ack_sack(
            ms(t),
            ack,
            false,
            &SackBlocks::new(ack, blocks.iter().copied()),
        )
    }

    fn seqs(segs: &[Segment]) -> Vec<u64> {
        segs.iter().map(|g| g.seq).collect()
    }

    #[test]
    fn sack_recovery_starts_on_the_third_sacking_ack_and_sends_by_pipe() {
        let mut s = sack_sender(Recovery::Classic);
        drain(&mut s, ms(0));
        assert!(!sacked(&mut s, 100, 0, &[(1000, 2000)]).fast_retransmit);
        assert_eq!(s.pipe(), 9000);
        assert!(!sacked(&mut s, 101, 0, &[(1000, 3000)]).fast_retransmit);
        assert!(drain(&mut s, ms(101)).is_empty(), "no limited transmit");
        // The third: DupAcks = DupThresh. ssthresh = cwnd = FlightSize / 2 (step 4.2);
        // pipe = the 6000 unSACKed bytes above the lost segment.
        assert!(sacked(&mut s, 102, 0, &[(1000, 4000)]).fast_retransmit);
        assert_eq!((s.ssthresh(), s.cwnd(), s.pipe()), (5000, 5000, 6000));
        let segs = drain(&mut s, ms(102));
        assert_eq!(seqs(&segs), vec![0]);
        assert!(segs[0].retransmission);
        assert_eq!(s.pipe(), 7000, "the retransmission is in the pipe");
        // Each further SACK takes one segment out of the pipe; once cwnd - pipe >= SMSS,
        // NextSeg () finds no lost data and sends new data (rule 2).
        sacked(&mut s, 103, 0, &[(1000, 5000)]);
        assert!(drain(&mut s, ms(103)).is_empty());
        sacked(&mut s, 104, 0, &[(1000, 6000)]);
        assert!(drain(&mut s, ms(104)).is_empty());
        assert_eq!(s.pipe(), 5000);
        sacked(&mut s, 105, 0, &[(1000, 7000)]);
        assert_eq!(seqs(&drain(&mut s, ms(105))), vec![10_000]);
        assert_eq!(s.stats().timeouts, 0);
        // The ACK of RecoveryPoint ends recovery with cwnd = ssthresh.
        s.on_ack_sack(ms(200), 10_000, false, &SackBlocks::default());
        assert!(!s.in_recovery());
        assert_eq!(s.cwnd(), 5000);
        assert!(s.scoreboard().is_some_and(|b| b.sacked_bytes() == 0));
    }

    #[test]
    fn one_ack_sacking_three_segments_starts_recovery_by_is_lost() {
        let mut s = sack_sender(Recovery::Classic);
        drain(&mut s, ms(0));
        // DupAcks is 1, but more than 2 SMSS above the first byte are SACKed (step 2).
        assert!(sacked(&mut s, 100, 0, &[(1000, 4000)]).fast_retransmit);
        assert_eq!(s.dupacks(), 1);
        assert_eq!(seqs(&drain(&mut s, ms(100))), vec![0]);
    }

    #[test]
    fn with_prr_sack_recovery_sends_on_alternate_acks() {
        let mut s = sack_sender(Recovery::Prr(ReductionBound::SlowStart));
        drain(&mut s, ms(0));
        sacked(&mut s, 100, 0, &[(1000, 2000)]);
        sacked(&mut s, 101, 0, &[(1000, 3000)]);
        // RecoverFS 10000, ssthresh 5000, DeliveredData 1000: sndcnt = CEIL(1000 * 5000 /
        // 10000) = one segment, the retransmission; cwnd = pipe 6000 + 1000.
        assert!(sacked(&mut s, 102, 0, &[(1000, 4000)]).fast_retransmit);
        assert_eq!(s.cwnd(), 7000);
        assert_eq!(seqs(&drain(&mut s, ms(102))), vec![0]);
        // prr_delivered 2000: CEIL(2000 * 5000 / 10000) = 1 segment, already sent.
        sacked(&mut s, 103, 0, &[(1000, 5000)]);
        assert!(drain(&mut s, ms(103)).is_empty());
        // prr_delivered 3000, pipe 5000 = ssthresh: the slow-start bound, sndcnt =
        // MIN(ssthresh - pipe, limit) = 0.
        sacked(&mut s, 104, 0, &[(1000, 6000)]);
        assert_eq!(s.pipe(), 5000);
        assert!(drain(&mut s, ms(104)).is_empty());
        // pipe 4000: MIN(1000, MAX(4000 - 1000, 1000) + 1000) = one segment of new data.
        sacked(&mut s, 105, 0, &[(1000, 7000)]);
        assert_eq!(seqs(&drain(&mut s, ms(105))), vec![10_000]);
        // On exit cwnd = ssthresh (RFC 6937).
        s.on_ack_sack(ms(200), 10_000, false, &SackBlocks::default());
        assert_eq!((s.in_recovery(), s.cwnd()), (false, 5000));
    }

    #[test]
    fn three_losses_in_one_window_are_all_resent_within_the_first_rtt_of_recovery() {
        // 0..1000, 3000..4000 and 6000..7000 are lost out of 0..10000.
        let mut s = sack_sender(Recovery::Classic);
        drain(&mut s, ms(0));
        sacked(&mut s, 100, 0, &[(1000, 2000)]);
        sacked(&mut s, 101, 0, &[(1000, 3000)]);
        assert!(sacked(&mut s, 102, 0, &[(4000, 5000), (1000, 3000)]).fast_retransmit);
        assert_eq!(seqs(&drain(&mut s, ms(102))), vec![0]);
        sacked(&mut s, 103, 0, &[(4000, 6000), (1000, 3000)]);
        assert!(drain(&mut s, ms(103)).is_empty());
        // Three ranges above 3000: it is lost (rule 1).
        sacked(&mut s, 104, 0, &[(7000, 8000), (4000, 6000), (1000, 3000)]);
        assert_eq!(s.pipe(), 4000);
        assert_eq!(seqs(&drain(&mut s, ms(104))), vec![3000]);
        sacked(&mut s, 105, 0, &[(7000, 9000), (4000, 6000), (1000, 3000)]);
        assert_eq!(seqs(&drain(&mut s, ms(105))), vec![10_000]);
        // 3000 bytes SACKed above 6000: lost; then new data.
        sacked(
            &mut s,
            106,
            0,
            &[(7000, 10_000), (4000, 6000), (1000, 3000)],
        );
        assert_eq!(seqs(&drain(&mut s, ms(106))), vec![6000, 11_000]);
        assert_eq!(s.stats().retransmissions, 3);
        // The retransmissions arrive: partial ACKs, then the ACK of RecoveryPoint.
        sacked(&mut s, 200, 3000, &[(7000, 11_000), (4000, 6000)]);
        assert!(s.in_recovery());
        sacked(&mut s, 201, 6000, &[(7000, 12_000)]);
        s.on_ack_sack(ms(202), 12_000, false, &SackBlocks::default());
        assert!(!s.in_recovery());
        assert_eq!((s.stats().timeouts, s.stats().fast_retransmits), (0, 1));
    }

    #[test]
    fn a_timeout_clears_the_scoreboard_and_the_resend_skips_what_is_sacked_afterwards() {
        let mut s = sack_sender(Recovery::Classic);
        drain(&mut s, ms(0));
        sacked(&mut s, 100, 0, &[(1000, 3000)]);
        assert!(s.on_timeout(ms(1100)));
        assert_eq!(s.scoreboard().map(|b| b.sacked_bytes()), Some(0));
        // ssthresh from pipe: 8000 in flight / 2.
        assert_eq!((s.ssthresh(), s.cwnd()), (4000, MSS));
        assert_eq!(seqs(&drain(&mut s, ms(1100))), vec![0]);
        // New SACK information after the timeout: 1000..4000 need not be sent again.
        s.on_ack_sack(
            ms(1200),
            1000,
            false,
            &SackBlocks::new(1000, [(2000, 4000)]),
        );
        // cwnd 2000 from snd_una 1000: 1000..2000 goes; the next send skips to 4000.
        assert_eq!(seqs(&drain(&mut s, ms(1200))), vec![1000]);
        assert_eq!(s.snd_nxt(), 4000);
    }

    fn ns3(d: Departure, c: TcpConfig) -> TcpSender {
        sender(TcpConfig {
            ns3_departures: Ns3Departures::default().with(d),
            ..c
        })
    }

    #[test]
    fn with_ns3_loss_exit_the_ack_of_recover_after_a_timeout_keeps_one_segment_and_collapses_the_rto(
    ) {
        // ns-3's ProcessAck leaving CA_LOSS counts (ack - m_recover) / SMSS = 0 segments; its
        // NewAck recomputes the RTO from the estimator (1 s before any sample), no backoff.
        let mut s = ns3(
            Departure::LossExit,
            TcpConfig {
                initial_cwnd: 1,
                ..config()
            },
        );
        assert_eq!(drain(&mut s, ms(0)).len(), 1);
        assert!(s.on_timeout(ms(1000)));
        assert_eq!(s.poll_transmit(ms(1000)).map(|g| g.seq), Some(0));
        assert_eq!(s.rtt().rto(), Duration::from_secs(2));
        let out = s.on_ack(ms(1100), 1000, false);
        assert_eq!((out.bytes_acked, out.rtt), (1000, None));
        assert_eq!((s.cwnd(), s.ssthresh()), (MSS, 2 * MSS));
        assert_eq!(s.rtt().rto(), Duration::from_secs(1));
        assert_eq!(seqs(&drain(&mut s, ms(1100))), vec![1000]);
        assert_eq!(s.poll_timeout(), Some(ms(2100)));
        // Out of loss recovery, the next ACK grows cwnd as slow start does.
        s.on_ack(ms(1200), 2000, false);
        assert_eq!(s.cwnd(), 2 * MSS);
    }

    #[test]
    fn with_ns3_loss_exit_a_partial_ack_in_loss_recovery_grows_cwnd_and_collapses_the_rto() {
        // Below recover (ns-3's CA_LOSS branch of ProcessAck): IncreaseWindow(segsAcked) as on
        // any ACK, and NewAck(ack, true) recomputes the RTO.
        let mut s = ns3(Departure::LossExit, config());
        assert_eq!(drain(&mut s, ms(0)).len(), 4);
        assert!(s.on_timeout(ms(1000)));
        s.poll_transmit(ms(1000));
        s.on_ack(ms(1100), 1000, false);
        assert_eq!((s.cwnd(), s.ssthresh()), (2 * MSS, 2 * MSS));
        assert_eq!(s.rtt().rto(), Duration::from_secs(1));
        assert_eq!(s.poll_timeout(), Some(ms(2100)));
    }

    #[test]
    fn with_ns3_recover_duplicate_acks_of_recover_after_a_timeout_start_fast_retransmit() {
        // Four segments out, timeout: recover = 4000. The resend's ACK covers all four; three
        // duplicate ACKs of 4000 follow (resends of data the receiver held, in ns-3).
        let run = |s: &mut TcpSender| {
            assert_eq!(drain(s, ms(0)).len(), 4);
            assert!(s.on_timeout(ms(1000)));
            s.poll_transmit(ms(1000));
            s.on_ack(ms(1100), 4000, false);
            assert_eq!(seqs(&drain(s, ms(1100))), vec![4000, 5000]);
            (0..3)
                .map(|i| s.on_ack(ms(1200 + i), 4000, false).fast_retransmit)
                .collect::<Vec<_>>()
        };
        // RFC 6582 3.2 step 1: the ACK does not cover more than recover.
        let mut rfc = sender(config());
        assert_eq!(run(&mut rfc), vec![false, false, false]);
        assert_eq!(
            (rfc.in_recovery(), rfc.cwnd(), rfc.ssthresh()),
            (false, 2 * MSS, 2 * MSS)
        );
        // ns-3's DupAck: m_highRxAckMark >= m_recover lets it in.
        let mut s = ns3(Departure::Recover, config());
        assert_eq!(run(&mut s), vec![false, false, true]);
        assert!(s.in_recovery());
        assert_eq!((s.ssthresh(), s.cwnd()), (2 * MSS, 5 * MSS));
        assert_eq!(s.stats().fast_retransmits, 1);
        let seg = s.poll_transmit(ms(1202)).expect("the fast retransmission");
        assert_eq!((seg.seq, seg.retransmission), (4000, true));
    }

    #[test]
    fn with_ns3_ecn_once_an_echo_in_fast_recovery_enters_cwr_and_ends_the_recovery() {
        let c = TcpConfig {
            initial_cwnd: 10,
            ecn: true,
            ..config()
        };
        // Fast retransmit on three duplicates: ssthresh 5000, cwnd 8000, recover 10000; then a
        // partial ACK of 3000 echoes a mark.
        let run = |s: &mut TcpSender| {
            drain(s, ms(0));
            for i in 0..3 {
                s.on_ack(ms(100 + i), 0, false);
            }
            assert!(s.in_recovery());
            s.poll_transmit(ms(103));
            s.on_ack(ms(200), 3000, true)
        };
        // RFC 3168 6.1.2: no second reduction for the same window; the partial ACK deflates
        // (RFC 6582 step 5: 8000 - 3000 + 1000).
        let mut rfc = sender(c.clone());
        assert!(!run(&mut rfc).ecn_reduction);
        assert_eq!(
            (rfc.in_recovery(), rfc.ssthresh(), rfc.cwnd()),
            (true, 5000, 6000)
        );
        // ns-3's EnterCwr: ssthresh = max(BytesInFlight / 2, 2 SMSS), BytesInFlight after the
        // ACK = 10000 - 3000 sent and unacknowledged less 3000 shown delivered by the
        // duplicates = 4000; cwnd = ssthresh; CA_RECOVERY left for CA_CWR.
        let mut s = ns3(Departure::EcnOnce, c);
        assert!(run(&mut s).ecn_reduction);
        assert_eq!(
            (s.in_recovery(), s.ssthresh(), s.cwnd()),
            (false, 2000, 2000)
        );
        assert_eq!(s.stats().ecn_reductions, 1);
        // In CA_CWR until an ACK passes 10000: a further echo is not answered.
        assert!(!s.on_ack(ms(300), 5000, true).ecn_reduction);
        assert_eq!((s.ssthresh(), s.cwnd()), (2000, 2000));
    }

    #[test]
    fn with_ns3_ecn_once_an_echo_after_a_timeout_raises_the_window_to_two_segments() {
        let c = TcpConfig {
            initial_cwnd: 10,
            ecn: true,
            ..config()
        };
        let mut s = ns3(Departure::EcnOnce, c);
        drain(&mut s, ms(0));
        assert!(s.on_timeout(ms(1000)));
        assert_eq!((s.cwnd(), s.ssthresh()), (MSS, 5 * MSS));
        assert_eq!(seqs(&drain(&mut s, ms(1000))), vec![0]);
        // The resend's ACK echoes a mark of the timed-out window (ack 1000 <= recover 10000):
        // RFC 3168 ignores it; ns-3 enters CWR from CA_LOSS with nothing resent in flight:
        // ssthresh = 2 SMSS, cwnd = ssthresh.
        let out = s.on_ack(ms(1100), 1000, true);
        assert!(out.ecn_reduction);
        assert_eq!((s.cwnd(), s.ssthresh()), (2 * MSS, 2 * MSS));
    }

    #[test]
    fn with_ns3_limited_transmit_a_lone_segments_duplicate_ack_sends_nothing() {
        // One segment out, the loss window after a timeout and its ACK: a duplicate ACK (the
        // resend arriving at a receiver that held it).
        let run = |s: &mut TcpSender| {
            assert_eq!(drain(s, ms(0)).len(), 1);
            s.on_ack(ms(50), 0, false);
            seqs(&drain(s, ms(50)))
        };
        let c = TcpConfig {
            initial_cwnd: 1,
            limited_transmit: true,
            ..config()
        };
        // RFC 3042: a new segment on the first duplicate ACK.
        assert_eq!(run(&mut sender(c.clone())), vec![1000]);
        // ns-3: the Reno SACK emulation never marks the head, so nothing is sent.
        let mut s = ns3(Departure::LimitedTransmit, c);
        assert_eq!(run(&mut s), Vec::<u64>::new());
        assert_eq!((s.dupacks(), s.cwnd()), (1, MSS));
    }

    #[test]
    fn with_ns3_recovery_ssthresh_fast_retransmit_halves_flightsize_less_every_duplicate_acked_segment(
    ) {
        // Ten segments out, two more by limited transmit, the third duplicate ACK.
        let run = |mut s: TcpSender| {
            drain(&mut s, ms(0));
            // A new segment on each of the first two, the retransmission on the third.
            for (i, n) in [(100, 1), (101, 1), (102, 1)] {
                s.on_ack(ms(i), 0, false);
                assert_eq!(drain(&mut s, ms(i)).len(), n);
            }
            assert_eq!(s.dup_acked(), 3000);
            (s.ssthresh(), s.cwnd())
        };
        let c = TcpConfig {
            initial_cwnd: 10,
            limited_transmit: true,
            ..config()
        };
        // RFC 5681 eq. 4: FlightSize 12,000 less the 2,000 of limited transmit, halved.
        assert_eq!(run(sender(c.clone())), (5000, 8000));
        // ns-3's EnterRecovery: BytesInFlight () + SMSS = 12,000 - 3,000 duplicate-ACKed,
        // halved: 2 x ssthresh is one segment under cwnd (10 segments).
        assert_eq!(run(ns3(Departure::RecoverySsthresh, c)), (4500, 7500));
    }

    #[test]
    fn with_ns3_reno_sack_a_full_ack_on_a_marked_segment_resends_it_and_one_duplicate_ack_starts_fast_retransmit(
    ) {
        // Four segments out, limited transmit on. The same ACKs for both senders: seven
        // duplicate ACKs of 0 (three, then four in fast recovery), the full ACK of 6000
        // (recover), one duplicate ACK of 6000.
        let c = TcpConfig {
            limited_transmit: true,
            ..config()
        };
        let run = |s: &mut TcpSender| {
            let mut sent = vec![seqs(&drain(s, ms(0)))];
            let mut frs = vec![];
            for i in 0..7 {
                frs.push(s.on_ack(ms(100 + i), 0, false).fast_retransmit);
                sent.push(seqs(&drain(s, ms(100 + i))));
            }
            frs.push(s.on_ack(ms(200), 6000, false).fast_retransmit);
            sent.push(seqs(&drain(s, ms(200))));
            let ends = (s.in_recovery(), s.ssthresh(), s.cwnd());
            frs.push(s.on_ack(ms(201), 6000, false).fast_retransmit);
            sent.push(seqs(&drain(s, ms(201))));
            (sent, frs, ends, (s.in_recovery(), s.ssthresh(), s.cwnd()))
        };
        let none = Vec::<u64>::new();
        let start = [
            vec![0, 1000, 2000, 3000],
            vec![4000],
            vec![5000],
            vec![0],
            none.clone(),
            vec![6000],
            vec![7000],
            vec![8000],
        ];
        // RFC 5681 / 6582: limited transmit on the first two duplicate ACKs, fast retransmit
        // on the third (ssthresh 2000, cwnd 5000), one segment per further duplicate ACK once
        // the inflated window passes snd.nxt; the full ACK ends the recovery with cwnd
        // min(ssthresh, FlightSize + SMSS) = 2000, nothing to send (9000 is beyond 8000), and
        // the duplicate ACK of 6000 neither (limited transmit's 9000 + 1000 is beyond too).
        let (sent, frs, ends, last) = run(&mut sender(c.clone()));
        let mut rfc = start.to_vec();
        rfc.extend([none.clone(), none.clone()]);
        assert_eq!(sent, rfc);
        assert_eq!(
            frs,
            vec![false, false, true, false, false, false, false, false, false]
        );
        assert_eq!(ends, (false, 2 * MSS, 2 * MSS));
        assert_eq!(last, (false, 2 * MSS, 2 * MSS));
        // ns-3: each duplicate ACK marks the next segment above the head (1000 to 7000: the
        // window, ssthresh in recovery less the marked data, sends the same segments); the
        // full ACK of 6000 lands on the mark at 6000, which moves to 8000 (7000 being
        // marked), and 6000 is marked lost and resent at once, then 9000 goes out (cwnd 2000
        // less BytesInFlight 1000); the duplicate ACK of 6000 finds the head lost with a mark
        // above it and starts a fast retransmit (TcpSocketBase::DupAck step (2)): ssthresh
        // 2000, cwnd 2000 + 1 SMSS, 6000 resent, and 10000 sent (BytesInFlight: 6000's resend).
        let (sent, frs, ends, last) = run(&mut ns3(Departure::RenoSack, c));
        let mut reno = start.to_vec();
        reno.extend([vec![6000, 9000], vec![6000, 10000]]);
        assert_eq!(sent, reno);
        assert_eq!(
            frs,
            vec![false, false, true, false, false, false, false, false, true]
        );
        assert_eq!(ends, (false, 2 * MSS, 2 * MSS));
        assert_eq!(last, (true, 2 * MSS, 3 * MSS));
    }

    #[test]
    fn with_ns3_reno_sack_a_timeout_clears_the_marks() {
        let c = TcpConfig {
            limited_transmit: true,
            ..config()
        };
        let mut s = ns3(Departure::RenoSack, c);
        drain(&mut s, ms(0));
        s.on_ack(ms(100), 0, false);
        s.on_ack(ms(101), 0, false);
        assert_eq!(seqs(&drain(&mut s, ms(101))), vec![4000, 5000]);
        assert!(s.on_timeout(ms(1100)));
        assert_eq!(seqs(&drain(&mut s, ms(1100))), vec![0]);
        // The two duplicate ACKs marked 1000 and 2000; the ACK of 2000 would have landed on a
        // mark. With the marks cleared (SetSentListLost) it is a plain new ACK: nothing marked
        // lost, slow start from the loss window, and a duplicate ACK starts no fast retransmit.
        s.on_ack(ms(1200), 2000, false);
        assert_eq!(seqs(&drain(&mut s, ms(1200))), vec![2000, 3000]);
        assert!(!s.on_ack(ms(1201), 2000, false).fast_retransmit);
    }

    #[test]
    fn with_sack_the_limited_transmit_departure_leaves_limited_transmit_as_it_is() {
        // ns-3's departure is in its Reno SACK emulation; with SACK the scoreboard counts the
        // segment the duplicate ACK reports, in both simulators: one new segment.
        let c = TcpConfig {
            initial_cwnd: 2,
            sack: true,
            limited_transmit: true,
            ..config()
        };
        for mut s in [sender(c.clone()), ns3(Departure::LimitedTransmit, c)] {
            assert_eq!(drain(&mut s, ms(0)).len(), 2);
            assert!(sacked(&mut s, 50, 0, &[(1000, 2000)]).duplicate);
            assert_eq!(seqs(&drain(&mut s, ms(50))), vec![2000]);
        }
    }

    #[test]
    fn without_departures_the_sender_is_the_rfc_one() {
        assert_eq!(
            TcpConfig::default().ns3_departures,
            Ns3Departures::default()
        );
        assert!(Ns3Departures::default().enabled().is_empty());
    }
}
