//! The three-way handshake that opens a TCP connection (RFC 9293 section 3.5), sans IO: the
//! active opener (the data sender) sends a SYN, the passive opener (the receiver) answers with
//! a SYN-ACK, the active opener acknowledges it and data may flow.
//!
//! Each side retransmits on its own timer: initially [`HandshakeConfig::syn_rto`] (RFC 6298
//! section 2.1: 1 s; ns-2, which the 2000-era papers used, waited 6 s), doubled on each expiry
//! (RFC 6298 section 5.5), capped at the connection's `max_rto`, given up after
//! [`HandshakeConfig::syn_retries`] retransmissions of the SYN (Linux `tcp_syn_retries`: 6) or
//! [`HandshakeConfig::synack_retries`] of the SYN-ACK (Linux `tcp_synack_retries`: 5). A SYN
//! sent once gives an RTT sample when its SYN-ACK arrives (RFC 6298 section 2 allows it; Linux
//! takes it); a retransmitted one does not (Karn's rule), and then the data's RTO starts at
//! 3 s (RFC 6298 section 5.7).

use crate::time::{Duration, Instant};

/// Bytes a SYN or SYN-ACK carries beyond a data segment's IP + TCP header: Linux sends MSS (4),
/// SACK-permitted (2), timestamps (10), NOP (1) and window scale (3), 20 bytes of options,
/// where a data segment carries NOP, NOP and timestamps, 12 bytes; so 8 more.
pub const SYN_OPTION_BYTES: u32 = 8;

/// The RTO once data transmission begins after the SYN's timer expired (RFC 6298 section 5.7).
pub const RTO_AFTER_SYN_TIMEOUT: Duration = Duration::from_secs(3);

/// The handshake's settings.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HandshakeConfig {
    /// The SYN's and the SYN-ACK's first retransmission timeout (RFC 6298 section 2.1: 1 s).
    pub syn_rto: Duration,
    /// Retransmissions of the SYN before the connection fails (Linux `tcp_syn_retries`: 6).
    pub syn_retries: u32,
    /// Retransmissions of the SYN-ACK before the receiver gives up (Linux
    /// `tcp_synack_retries`: 5).
    pub synack_retries: u32,
    /// With ECN negotiated, the SYN is sent ECT(0). RFC 3168 section 6.1.1 says SYNs are not
    /// ECN-capable (a RED queue then drops a SYN it would mark); the ECA paper's Fig. 9 sets it.
    pub ect_syn: bool,
}

impl Default for HandshakeConfig {
    fn default() -> Self {
        HandshakeConfig {
            syn_rto: Duration::from_secs(1),
            syn_retries: 6,
            synack_retries: 5,
            ect_syn: false,
        }
    }
}

/// A handshake segment.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HandshakeSegment {
    /// SYN, active opener to passive opener.
    Syn,
    /// SYN-ACK, passive opener to active opener.
    SynAck,
    /// The ACK of the SYN-ACK, active opener to passive opener.
    Ack,
}

/// What the active opener learnt when the SYN-ACK arrived.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Established {
    /// The SYN-to-SYN-ACK time, if the SYN was sent once (Karn's rule).
    pub rtt_sample: Option<Duration>,
    /// The SYN's timer expired at least once (RFC 6298 section 5.7 then applies).
    pub syn_timed_out: bool,
}

/// A side's place in the handshake.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OpenState {
    /// Nothing sent or received yet.
    Closed,
    /// The SYN (active) or SYN-ACK (passive) is out, awaiting its answer.
    Pending,
    /// The handshake is over: data may flow.
    Established,
    /// The retransmissions ran out.
    Failed,
}

/// One side's retransmission timer: the deadline, the current timeout and the sends so far.
#[derive(Clone, Copy, Debug)]
struct Retransmit {
    deadline: Option<Instant>,
    rto: Duration,
    sends: u32,
}

impl Retransmit {
    fn new(rto: Duration) -> Retransmit {
        Retransmit {
            deadline: None,
            rto,
            sends: 0,
        }
    }

    /// A (re)transmission at `now`: the timer runs for the current timeout.
    fn sent(&mut self, now: Instant) {
        self.sends += 1;
        self.deadline = Some(now + self.rto);
    }

    /// The timer expired: true if a retransmission is allowed (at most `retries`), and then the
    /// timeout doubles (RFC 6298 section 5.5), up to `max_rto`.
    fn expire(&mut self, retries: u32, max_rto: Duration) -> bool {
        self.deadline = None;
        if self.sends > retries {
            return false;
        }
        self.rto = (self.rto * 2).min(max_rto);
        true
    }

    fn due(&self, now: Instant) -> bool {
        matches!(self.deadline, Some(t) if now >= t)
    }
}

/// The active opener: the data sender's side.
#[derive(Clone, Debug)]
pub struct ActiveOpen {
    config: HandshakeConfig,
    max_rto: Duration,
    state: OpenState,
    timer: Retransmit,
    first_syn: Instant,
    timed_out: bool,
    pending: Option<HandshakeSegment>,
}

impl ActiveOpen {
    /// An active opener that has sent nothing; `max_rto` caps its backoff.
    pub fn new(config: HandshakeConfig, max_rto: Duration) -> ActiveOpen {
        ActiveOpen {
            config,
            max_rto: max_rto.max(config.syn_rto),
            state: OpenState::Closed,
            timer: Retransmit::new(config.syn_rto),
            first_syn: Instant::ZERO,
            timed_out: false,
            pending: None,
        }
    }

    /// The application opens the connection at `now`: the SYN is due.
    pub fn connect(&mut self, now: Instant) {
        if self.state == OpenState::Closed {
            self.state = OpenState::Pending;
            self.first_syn = now;
            self.pending = Some(HandshakeSegment::Syn);
        }
    }

    /// Where the handshake stands.
    pub fn state(&self) -> OpenState {
        self.state
    }

    /// True once data may be sent.
    pub fn is_established(&self) -> bool {
        self.state == OpenState::Established
    }

    /// SYNs sent so far, retransmissions included.
    pub fn syns_sent(&self) -> u32 {
        self.timer.sends
    }

    /// The settings.
    pub fn config(&self) -> &HandshakeConfig {
        &self.config
    }

    /// The segment to send now, if one is due (the SYN's timer starts when it is taken).
    pub fn poll_transmit(&mut self, now: Instant) -> Option<HandshakeSegment> {
        let seg = self.pending.take()?;
        if seg == HandshakeSegment::Syn {
            self.timer.sent(now);
        }
        Some(seg)
    }

    /// When [`ActiveOpen::on_timeout`] must be called, if the SYN's timer runs.
    pub fn poll_timeout(&self) -> Option<Instant> {
        self.timer.deadline
    }

    /// Fires the SYN's timer if it is due: the SYN is sent again with the timeout doubled, or
    /// the connection fails after `syn_retries` retransmissions.
    pub fn on_timeout(&mut self, now: Instant) {
        if self.state != OpenState::Pending || !self.timer.due(now) {
            return;
        }
        self.timed_out = true;
        if self.timer.expire(self.config.syn_retries, self.max_rto) {
            self.pending = Some(HandshakeSegment::Syn);
        } else {
            self.state = OpenState::Failed;
            self.pending = None;
        }
    }

    /// A SYN-ACK arrived at `now`: the connection is established (the ACK is due), and the
    /// first time this returns what the sender's RTT estimator takes. A SYN-ACK after that
    /// means the passive opener missed the ACK: it is sent again.
    pub fn on_syn_ack(&mut self, now: Instant) -> Option<Established> {
        match self.state {
            OpenState::Pending => {
                self.state = OpenState::Established;
                self.timer.deadline = None;
                self.pending = Some(HandshakeSegment::Ack);
                let once = self.timer.sends == 1 && !self.timed_out;
                Some(Established {
                    rtt_sample: once.then(|| now.saturating_since(self.first_syn)),
                    syn_timed_out: self.timed_out,
                })
            }
            OpenState::Established => {
                self.pending = Some(HandshakeSegment::Ack);
                None
            }
            OpenState::Closed | OpenState::Failed => None,
        }
    }
}

/// The passive opener: the receiver's side.
#[derive(Clone, Debug)]
pub struct PassiveOpen {
    config: HandshakeConfig,
    max_rto: Duration,
    state: OpenState,
    timer: Retransmit,
    pending: bool,
    /// SYN-ACKs sent, the resends that answer a repeated SYN included (the timer counts only
    /// its own toward `synack_retries`).
    sent: u32,
}

impl PassiveOpen {
    /// A listening receiver; `max_rto` caps its backoff.
    pub fn new(config: HandshakeConfig, max_rto: Duration) -> PassiveOpen {
        PassiveOpen {
            config,
            max_rto: max_rto.max(config.syn_rto),
            state: OpenState::Closed,
            timer: Retransmit::new(config.syn_rto),
            pending: false,
            sent: 0,
        }
    }

    /// Where the handshake stands.
    pub fn state(&self) -> OpenState {
        self.state
    }

    /// SYN-ACKs sent so far, retransmissions included.
    pub fn syn_acks_sent(&self) -> u32 {
        self.sent
    }

    /// A SYN arrived: the SYN-ACK is due. A repeated SYN while the SYN-ACK is unanswered means
    /// the SYN-ACK may be lost: it is sent again, its timer left running (as Linux does).
    pub fn on_syn(&mut self) {
        match self.state {
            OpenState::Closed => {
                self.state = OpenState::Pending;
                self.pending = true;
            }
            OpenState::Pending => self.pending = true,
            OpenState::Established | OpenState::Failed => {}
        }
    }

    /// The ACK of the SYN-ACK arrived, alone or on a data segment: the connection is
    /// established.
    pub fn on_ack(&mut self) {
        if self.state == OpenState::Pending {
            self.state = OpenState::Established;
            self.timer.deadline = None;
            self.pending = false;
        }
    }

    /// The SYN-ACK to send now, if one is due (its timer restarts when it is taken, unless
    /// it is a resend answering a repeated SYN).
    pub fn poll_transmit(&mut self, now: Instant) -> Option<HandshakeSegment> {
        if !std::mem::take(&mut self.pending) {
            return None;
        }
        self.sent += 1;
        if self.timer.deadline.is_none() {
            self.timer.sent(now);
        }
        Some(HandshakeSegment::SynAck)
    }

    /// When [`PassiveOpen::on_timeout`] must be called, if the SYN-ACK's timer runs.
    pub fn poll_timeout(&self) -> Option<Instant> {
        self.timer.deadline
    }

    /// Fires the SYN-ACK's timer if it is due: the SYN-ACK is sent again with the timeout
    /// doubled, or the receiver gives up after `synack_retries` retransmissions.
    pub fn on_timeout(&mut self, now: Instant) {
        if self.state != OpenState::Pending || !self.timer.due(now) {
            return;
        }
        if self.timer.expire(self.config.synack_retries, self.max_rto) {
            self.pending = true;
        } else {
            self.state = OpenState::Failed;
            self.pending = false;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tcp::{TcpConfig, TcpSender};

    fn ms(v: u64) -> Instant {
        Instant::from_millis(v)
    }

    fn active() -> ActiveOpen {
        ActiveOpen::new(HandshakeConfig::default(), Duration::from_secs(60))
    }

    fn passive() -> PassiveOpen {
        PassiveOpen::new(HandshakeConfig::default(), Duration::from_secs(60))
    }

    fn sender() -> TcpSender {
        TcpSender::new(TcpConfig {
            handshake: Some(HandshakeConfig::default()),
            ..TcpConfig::default()
        })
        .expect("a valid configuration")
    }

    #[test]
    fn the_syn_leaves_on_connect_and_arms_a_one_second_timer() {
        let mut a = active();
        assert_eq!(a.poll_transmit(ms(0)), None);
        a.connect(ms(0));
        assert_eq!(a.poll_transmit(ms(0)), Some(HandshakeSegment::Syn));
        assert_eq!(a.poll_timeout(), Some(ms(1000)));
        assert_eq!(a.state(), OpenState::Pending);
    }

    #[test]
    fn a_syn_answered_once_gives_the_handshake_rtt_sample() {
        let mut a = active();
        a.connect(ms(0));
        a.poll_transmit(ms(0));
        let e = a.on_syn_ack(ms(100));
        assert_eq!(
            e,
            Some(Established {
                rtt_sample: Some(Duration::from_millis(100)),
                syn_timed_out: false
            })
        );
        assert!(a.is_established());
        assert_eq!(a.poll_timeout(), None);
        assert_eq!(a.poll_transmit(ms(100)), Some(HandshakeSegment::Ack));
        // RFC 6298 2.2: SRTT = R, RTTVAR = R/2, RTO = R + 4 RTTVAR = 300 ms.
        let mut s = sender();
        s.on_established(e.expect("established").rtt_sample, false);
        assert_eq!(s.rtt().srtt(), Some(Duration::from_millis(100)));
        assert_eq!(s.rtt().rto(), Duration::from_millis(300));
    }

    #[test]
    fn a_lost_syn_is_resent_at_one_second_and_data_then_starts_with_a_three_second_rto() {
        let mut a = active();
        a.connect(ms(0));
        a.poll_transmit(ms(0));
        a.on_timeout(ms(999));
        assert_eq!(a.poll_transmit(ms(999)), None, "not due before 1 s");
        a.on_timeout(ms(1000));
        assert_eq!(a.poll_transmit(ms(1000)), Some(HandshakeSegment::Syn));
        // The timeout doubled: the next expiry is 2 s later.
        assert_eq!(a.poll_timeout(), Some(ms(3000)));
        // The SYN-ACK of the second SYN arrives one RTT (100 ms) later: no sample (Karn).
        let e = a.on_syn_ack(ms(1100)).expect("established");
        assert_eq!(e.rtt_sample, None);
        assert!(e.syn_timed_out);
        let mut s = sender();
        s.on_established(e.rtt_sample, e.syn_timed_out);
        assert_eq!(s.rtt().rto(), Duration::from_secs(3));
        // The first data segment leaves at 1 s + RTT, its timer 3 s later.
        let seg = s.poll_transmit(ms(1100)).expect("the first data segment");
        assert_eq!(seg.seq, 0);
        assert_eq!(s.poll_timeout(), Some(ms(4100)));
    }

    #[test]
    fn an_initial_rto_above_three_seconds_is_kept_after_a_lost_syn() {
        let mut s = TcpSender::new(TcpConfig {
            initial_rto: Duration::from_secs(6),
            ..TcpConfig::default()
        })
        .expect("a valid configuration");
        s.on_established(None, true);
        assert_eq!(s.rtt().rto(), Duration::from_secs(6));
    }

    #[test]
    fn the_syn_gives_up_after_its_retries() {
        let mut a = ActiveOpen::new(
            HandshakeConfig {
                syn_retries: 2,
                ..HandshakeConfig::default()
            },
            Duration::from_secs(60),
        );
        a.connect(ms(0));
        a.poll_transmit(ms(0));
        a.on_timeout(ms(1000));
        assert_eq!(a.poll_transmit(ms(1000)), Some(HandshakeSegment::Syn));
        a.on_timeout(ms(3000));
        assert_eq!(a.poll_transmit(ms(3000)), Some(HandshakeSegment::Syn));
        assert_eq!(a.poll_timeout(), Some(ms(7000)));
        a.on_timeout(ms(7000));
        assert_eq!(a.state(), OpenState::Failed);
        assert_eq!(a.poll_transmit(ms(7000)), None);
        assert_eq!(a.poll_timeout(), None);
        assert_eq!(a.syns_sent(), 3);
    }

    #[test]
    fn the_backoff_stops_at_max_rto() {
        let mut a = ActiveOpen::new(
            HandshakeConfig {
                syn_rto: Duration::from_secs(6),
                ..HandshakeConfig::default()
            },
            Duration::from_secs(10),
        );
        a.connect(ms(0));
        a.poll_transmit(ms(0));
        a.on_timeout(ms(6000));
        a.poll_transmit(ms(6000));
        assert_eq!(a.poll_timeout(), Some(ms(16_000)));
    }

    #[test]
    fn a_lost_syn_ack_is_resent_on_the_receivers_own_timer() {
        let mut p = passive();
        p.on_syn();
        assert_eq!(p.poll_transmit(ms(50)), Some(HandshakeSegment::SynAck));
        assert_eq!(p.poll_timeout(), Some(ms(1050)));
        p.on_timeout(ms(1050));
        assert_eq!(p.poll_transmit(ms(1050)), Some(HandshakeSegment::SynAck));
        assert_eq!(p.poll_timeout(), Some(ms(3050)));
        assert_eq!(p.syn_acks_sent(), 2);
    }

    #[test]
    fn a_repeated_syn_gets_the_syn_ack_again_with_the_timer_left_running() {
        let mut p = passive();
        p.on_syn();
        p.poll_transmit(ms(50));
        p.on_syn();
        assert_eq!(p.poll_transmit(ms(1050)), Some(HandshakeSegment::SynAck));
        assert_eq!(p.poll_timeout(), Some(ms(1050)));
        assert_eq!(p.syn_acks_sent(), 2);
    }

    #[test]
    fn the_ack_or_data_establishes_the_receiver_and_stops_its_timer() {
        let mut p = passive();
        p.on_syn();
        p.poll_transmit(ms(50));
        p.on_ack();
        assert_eq!(p.state(), OpenState::Established);
        assert_eq!(p.poll_timeout(), None);
        p.on_syn();
        assert_eq!(p.poll_transmit(ms(60)), None);
    }

    #[test]
    fn both_directions_lost_once_data_starts_after_the_second_exchange() {
        // SYN at 0 lost; SYN at 1 s reaches the receiver at 1.05 s; its SYN-ACK is lost; the
        // sender's timer (2 s) fires at 3 s and the repeated SYN draws a SYN-ACK at 3.05 s,
        // which arrives at 3.1 s.
        let (mut a, mut p) = (active(), passive());
        a.connect(ms(0));
        a.poll_transmit(ms(0));
        a.on_timeout(ms(1000));
        a.poll_transmit(ms(1000));
        p.on_syn();
        assert_eq!(p.poll_transmit(ms(1050)), Some(HandshakeSegment::SynAck));
        a.on_timeout(ms(3000));
        assert_eq!(a.poll_transmit(ms(3000)), Some(HandshakeSegment::Syn));
        p.on_syn();
        assert_eq!(p.poll_transmit(ms(3050)), Some(HandshakeSegment::SynAck));
        let e = a.on_syn_ack(ms(3100)).expect("established");
        assert_eq!(e.rtt_sample, None);
        assert!(e.syn_timed_out);
        assert_eq!(a.poll_transmit(ms(3100)), Some(HandshakeSegment::Ack));
        p.on_ack();
        assert_eq!(p.state(), OpenState::Established);
    }

    #[test]
    fn a_syn_ack_after_establishment_draws_the_ack_again() {
        let mut a = active();
        a.connect(ms(0));
        a.poll_transmit(ms(0));
        a.on_syn_ack(ms(100));
        a.poll_transmit(ms(100));
        assert_eq!(a.on_syn_ack(ms(1050)), None);
        assert_eq!(a.poll_transmit(ms(1050)), Some(HandshakeSegment::Ack));
    }
}
