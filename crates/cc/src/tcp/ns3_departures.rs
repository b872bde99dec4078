//! Rules of ns-3 3.44's TCP (`src/internet/model/tcp-socket-base.cc`, `tcp-tx-buffer.cc`) that
//! depart from the RFCs, each a switch of the sender, all off by default. With them on, concord's
//! sender behaves as ns-3's does at those points, so that a comparison with ns-3 as
//! shipped compares like with like; concord's own behaviour (the default) follows the RFCs.
//!
//! - [`Departure::Recover`], in `TcpSocketBase::DupAck`: the third duplicate ACK starts fast
//!   retransmit when `m_highRxAckMark >= m_recover || !m_recoverActive`. RFC 6582 section 3.2
//!   step 1 asks that the cumulative ACK "cover more than recover"; ns-3 lets in an ACK equal
//!   to `recover` (and clears `m_recoverActive` on the ACK that reaches it). After a timeout
//!   whose go-back-N resends data the receiver already held, those resends' duplicate ACKs of
//!   `recover` start a fast retransmit.
//! - [`Departure::LossExit`], in `TcpSocketBase::ProcessAck` and `TcpSocketBase::NewAck`: the
//!   ACK that ends loss recovery after a timeout (CA_LOSS, `ack >= m_recover`) passes
//!   `IncreaseWindow` only the whole segments above `m_recover`, `(ack - m_recover) / SMSS`, 0
//!   when the ACK is `recover` itself (RFC 5681 section 3.1: slow start grows cwnd on every ACK
//!   of new data); and every new ACK that restarts the timer recomputes the RTO from SRTT and
//!   RTTVAR, dropping the backoff without an RTT sample (RFC 6298 section 5, the note after
//!   5.7: the backed-off RTO stays until a new measurement).
//! - [`Departure::EcnOnce`], in `TcpSocketBase::ReceivedAck` and `TcpSocketBase::EnterCwr`: an
//!   ECN-Echo on any ACK of new data enters CA_CWR unless the sender is in CA_CWR already, also
//!   in fast recovery (which it leaves) and in loss recovery after a timeout, and also on an
//!   ACK of data sent before the last window reduction; ssthresh = max(FlightSize / 2,
//!   2 SMSS) and cwnd = ssthresh (TcpClassicRecovery::EnterRecovery), even when that raises
//!   the window. RFC 3168 section 6.1.2 reduces the window at most once per window of data.
//! - [`Departure::LimitedTransmit`], in `TcpSocketBase::DupAck` and `TcpTxBuffer::AddRenoSack`:
//!   without SACK, limited transmit opens the window by the segments a duplicate ACK marks as
//!   delivered in ns-3's Reno SACK emulation, which never marks the segment at snd.una ("We can
//!   _never_ SACK the head"): with one segment outstanding a duplicate ACK sends nothing. RFC
//!   3042 section 2 sends a new segment on each of the first two duplicate ACKs. Not one of the
//!   three departures `validate.cc` corrects; found while measuring them (a lone segment's
//!   duplicate ACK after a timeout lets concord send a second segment, which the receiver
//!   acknowledges at once, where ns-3 waits for its delayed ACK).
//! - [`Departure::RecoverySsthresh`], in `TcpSocketBase::EnterRecovery`: without SACK, the
//!   ssthresh of a fast retransmit is `GetSsThresh (BytesInFlight () + SMSS)` =
//!   max((FlightSize - dup_acked) / 2, 2 SMSS), `BytesInFlight ()` having left out the segments
//!   the Reno SACK emulation marks delivered (one per duplicate ACK, those of limited transmit
//!   included) and the head marked lost. RFC 5681 section 3.2 step 2 (eq. 4) halves FlightSize
//!   less only the data sent by limited transmit: with two limited-transmit segments, ns-3's
//!   2 x ssthresh is one segment smaller. Not one of the three `validate.cc` corrects.
//! - [`Departure::RenoSack`], in `TcpTxBuffer::AddRenoSack`, `DiscardUpTo`, `MarkHeadAsLost`,
//!   `IsLost`, `NextSeg` and `TcpSocketBase::DupAck`: without SACK, ns-3 keeps one "SACKed" mark
//!   per duplicate ACK on the segments above snd.una (in limited transmit and in fast
//!   recovery, not after a timeout), keeps them when fast recovery ends, and when a cumulative
//!   ACK lands on a marked segment moves the mark to the next unmarked one and marks the new
//!   head lost. A lost head is resent at once if the window, which leaves the marked and lost
//!   segments out, has room for a segment; and while a mark lies above it, one duplicate ACK
//!   starts a fast retransmit (RFC 6675 section 5 step (2), `IsLost (HighACK + 1)`), whatever
//!   `recover`. Duplicate ACKs caused by duplicate segments leave marks on data the receiver
//!   does not hold, so each resend of a lost head makes the next. RFC 5681 section 3.2 and
//!   RFC 6582 section 3.2 start fast retransmit on the third duplicate ACK only and resend
//!   nothing before it. Not one of the three `validate.cc` corrects (its `--rfcRecover=1`
//!   clears the marks when it keeps a threshold from starting a fast retransmit).

use std::fmt;

/// One of ns-3 3.44's departures from the RFCs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Departure {
    /// Fast retransmit on duplicate ACKs of `recover` itself (`TcpSocketBase::DupAck`).
    Recover,
    /// No growth on the ACK of `recover` that ends loss recovery, and the RTO recomputed on
    /// every new ACK (`TcpSocketBase::ProcessAck`, `TcpSocketBase::NewAck`).
    LossExit,
    /// An ECN-Echo answered whatever the congestion state but CWR (`TcpSocketBase::ReceivedAck`).
    EcnOnce,
    /// Limited transmit only for the segments the Reno SACK emulation marks delivered, never
    /// the one at snd.una (`TcpTxBuffer::AddRenoSack`).
    LimitedTransmit,
    /// Without SACK, ssthresh at fast retransmit halves FlightSize less every duplicate-ACKed
    /// segment (`TcpSocketBase::EnterRecovery`).
    RecoverySsthresh,
    /// Without SACK, the Reno SACK emulation's marks kept per segment: a cumulative ACK that
    /// lands on one marks the head lost, which is resent at once and lets one duplicate ACK
    /// start a fast retransmit (`TcpTxBuffer::DiscardUpTo`, `TcpSocketBase::DupAck`).
    RenoSack,
}

impl Departure {
    /// Every departure, in the order of their names.
    pub const ALL: [Departure; 6] = [
        Departure::Recover,
        Departure::LossExit,
        Departure::EcnOnce,
        Departure::LimitedTransmit,
        Departure::RecoverySsthresh,
        Departure::RenoSack,
    ];

    /// The name used in scenario files (`tcp.ns3_departures`).
    pub fn name(self) -> &'static str {
        match self {
            Departure::Recover => "recover",
            Departure::LossExit => "loss-exit",
            Departure::EcnOnce => "ecn-once",
            Departure::LimitedTransmit => "limited-transmit",
            Departure::RecoverySsthresh => "recovery-ssthresh",
            Departure::RenoSack => "reno-sack",
        }
    }

    /// The departure of that name, if there is one.
    pub fn from_name(name: &str) -> Option<Departure> {
        Departure::ALL.into_iter().find(|d| d.name() == name)
    }
}

impl fmt::Display for Departure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Which of ns-3's departures a sender reproduces (none by default).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Ns3Departures {
    /// [`Departure::Recover`].
    pub recover: bool,
    /// [`Departure::LossExit`].
    pub loss_exit: bool,
    /// [`Departure::EcnOnce`].
    pub ecn_once: bool,
    /// [`Departure::LimitedTransmit`].
    pub limited_transmit: bool,
    /// [`Departure::RecoverySsthresh`].
    pub recovery_ssthresh: bool,
    /// [`Departure::RenoSack`].
    pub reno_sack: bool,
}

impl Ns3Departures {
    /// The three departures `validate.cc` corrects: [`Departure::Recover`],
    /// [`Departure::LossExit`], [`Departure::EcnOnce`].
    pub fn corrected_by_validate() -> Ns3Departures {
        Ns3Departures {
            recover: true,
            loss_exit: true,
            ecn_once: true,
            limited_transmit: false,
            recovery_ssthresh: false,
            reno_sack: false,
        }
    }

    /// All six.
    pub fn all() -> Ns3Departures {
        Ns3Departures {
            limited_transmit: true,
            recovery_ssthresh: true,
            reno_sack: true,
            ..Ns3Departures::corrected_by_validate()
        }
    }

    /// With `d` switched on.
    pub fn with(mut self, d: Departure) -> Ns3Departures {
        match d {
            Departure::Recover => self.recover = true,
            Departure::LossExit => self.loss_exit = true,
            Departure::EcnOnce => self.ecn_once = true,
            Departure::LimitedTransmit => self.limited_transmit = true,
            Departure::RecoverySsthresh => self.recovery_ssthresh = true,
            Departure::RenoSack => self.reno_sack = true,
        }
        self
    }

    /// The departures switched on, in the order of [`Departure::ALL`].
    pub fn enabled(&self) -> Vec<Departure> {
        Departure::ALL
            .into_iter()
            .filter(|d| match d {
                Departure::Recover => self.recover,
                Departure::LossExit => self.loss_exit,
                Departure::EcnOnce => self.ecn_once,
                Departure::LimitedTransmit => self.limited_transmit,
                Departure::RecoverySsthresh => self.recovery_ssthresh,
                Departure::RenoSack => self.reno_sack,
            })
            .collect()
    }

    /// RFC 6582 section 3.2 step 1, or ns-3's form of it: may duplicate ACKs at `snd_una`
    /// start a fast retransmit, `recover` being the highest byte sent (plus one) at the last
    /// fast retransmit or timeout? RFC 6582: only if the ACK covers more than `recover`; ns-3
    /// (`m_highRxAckMark >= m_recover`): also if it equals it. (ns-3's other term,
    /// `!m_recoverActive`, holds only once an ACK has reached `m_recover`, which this one
    /// then covers.)
    pub fn fast_retransmit_allowed(&self, snd_una: u64, recover: Option<u64>) -> bool {
        match recover {
            None => true,
            Some(r) if self.recover => snd_una >= r,
            Some(r) => snd_una > r,
        }
    }

    /// Limited transmit's allowance above cwnd after `dupacks` duplicate ACKs (fewer than the
    /// threshold), `dup_acked` bytes of which the Reno SACK emulation counts delivered above
    /// snd.una. RFC 3042 section 2: one SMSS per duplicate ACK, up to two. ns-3
    /// (`TcpTxBuffer::AddRenoSack`, `BytesInFlight`): the bytes marked delivered, which never
    /// include the segment at snd.una, up to two segments.
    pub fn limited_transmit_allowance(&self, dupacks: u32, dup_acked: u64, mss: u64) -> u64 {
        let rfc = mss * u64::from(dupacks.min(2));
        if self.limited_transmit {
            dup_acked.min(rfc)
        } else {
            rfc
        }
    }

    /// The FlightSize a fast retransmit halves for ssthresh, without SACK: `flight` bytes
    /// outstanding (snd.max - snd.una), `limited_sent` of them sent by limited transmit,
    /// `dup_acked` of them marked delivered by the duplicate ACKs (this one included). RFC 5681
    /// section 3.2 step 2: FlightSize less the limited-transmit data. ns-3
    /// (`TcpSocketBase::EnterRecovery`, `GetSsThresh (BytesInFlight () + SMSS)`): less every
    /// duplicate-ACKed segment, `BytesInFlight ()` also leaving out the head marked lost, which
    /// the added SMSS puts back.
    pub fn recovery_flight(&self, flight: u64, limited_sent: u64, dup_acked: u64) -> u64 {
        if self.recovery_ssthresh {
            flight.saturating_sub(dup_acked)
        } else {
            flight.saturating_sub(limited_sent)
        }
    }

    /// The bytes of an ACK that slow start and congestion avoidance may grow the window on.
    /// `acked` bytes were newly acknowledged up to `ack`; `loss_recover` is `recover` while the
    /// sender is in loss recovery after a timeout (ns-3's CA_LOSS), else `None`. RFC 5681
    /// section 3.1: all of them. ns-3 on the ACK that ends CA_LOSS (`ack >= recover`): the
    /// whole segments above `recover`, `(ack - recover) / SMSS` (`ProcessAck`).
    pub fn growth_bytes(&self, ack: u64, acked: u64, loss_recover: Option<u64>, mss: u64) -> u64 {
        match loss_recover {
            Some(r) if self.loss_exit && ack >= r => (ack - r) / mss.max(1) * mss,
            _ => acked,
        }
    }
}

/// ns-3 3.44's Reno SACK emulation without SACK, per segment ([`Departure::RenoSack`]): the
/// segments above snd.una marked delivered by duplicate ACKs (`TcpTxItem::m_sacked`), the
/// highest mark set (`m_highestSack`) and the lost mark on the segment at snd.una (`m_lost`,
/// `m_retrans`). Segments are named by their first byte; the caller passes the first bytes of
/// the segments sent above snd.una, in order.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RenoMarks {
    /// First bytes of the marked segments, ascending.
    marked: Vec<u64>,
    /// The segment the last mark went on, until snd.una reaches it (`m_highestSack`, cleared
    /// with `m_sackSeen` in `DiscardUpTo`).
    highest: Option<u64>,
    /// The segment at snd.una carries the lost mark, at this first byte.
    lost_head: Option<u64>,
    /// That lost head has been resent since it was marked (`m_retrans`).
    head_resent: bool,
}

impl RenoMarks {
    /// `AddRenoSack`: the first unmarked segment above snd.una (never the segment at snd.una)
    /// is marked delivered and becomes the highest mark; none if every one is marked.
    pub fn add(&mut self, above_head: impl IntoIterator<Item = u64>) {
        if let Some(seq) = above_head
            .into_iter()
            .find(|s| self.marked.binary_search(s).is_err())
        {
            let at = self.marked.partition_point(|&m| m < seq);
            self.marked.insert(at, seq);
            self.highest = Some(seq);
        }
    }

    /// `MarkHeadAsLost`: the segment at `una` carries the lost mark (not resent since, not
    /// marked delivered).
    pub fn mark_head_lost(&mut self, una: u64) {
        self.marked.retain(|&m| m != una);
        self.lost_head = Some(una);
        self.head_resent = false;
    }

    /// The lost head at `una` is being resent (`m_retrans`).
    pub fn on_head_resent(&mut self, una: u64) {
        if self.lost_head == Some(una) {
            self.head_resent = true;
        }
    }

    /// `DiscardUpTo`: a cumulative ACK of `una` drops the marks below it; if the new head is
    /// marked, its mark moves to the first unmarked segment above it (`above_head`) and the
    /// head is marked lost; a highest mark at or below `una` is forgotten.
    pub fn discard_up_to(&mut self, una: u64, above_head: impl IntoIterator<Item = u64>) {
        if self.lost_head.is_some_and(|h| h < una) {
            self.lost_head = None;
            self.head_resent = false;
        }
        let below = self.marked.partition_point(|&m| m < una);
        self.marked.drain(..below);
        if self.marked.first() == Some(&una) {
            self.marked.remove(0);
            self.add(above_head);
            self.mark_head_lost(una);
        }
        if self.highest.is_some_and(|h| h <= una) {
            self.highest = None;
        }
    }

    /// `IsLost (una)` for the segment at snd.una: it carries the lost mark and a mark lies
    /// above it.
    pub fn is_lost(&self, una: u64) -> bool {
        self.lost_head == Some(una) && self.highest.is_some_and(|h| una < h)
    }

    /// `NextSeg` rule (1) for the segment at snd.una: lost and not resent since (the highest
    /// mark, if there is one, lies above it).
    pub fn head_to_resend(&self, una: u64) -> bool {
        self.lost_head == Some(una) && !self.head_resent
    }

    /// The segments marked delivered.
    pub fn marked(&self) -> usize {
        self.marked.len()
    }

    /// The bytes `BytesInFlight ()` leaves out of the data outstanding above `una`, segments
    /// of `mss` bytes: the marked segments and the lost head not resent since
    /// (`m_sentSize - m_sackedOut - m_lostOut + m_retrans`).
    pub fn left_out(&self, una: u64, mss: u64) -> u64 {
        let lost = u64::from(self.head_to_resend(una));
        (self.marked.len() as u64 + lost) * mss
    }

    /// `ResetRenoSack` (and `SetSentListLost` after a timeout): no marks.
    pub fn clear(&mut self) {
        *self = RenoMarks::default();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_an_unknown_name_is_none() {
        for d in Departure::ALL {
            assert_eq!(Departure::from_name(d.name()), Some(d));
        }
        assert_eq!(Departure::from_name("loss_exit"), None);
        assert_eq!(
            Ns3Departures::default()
                .with(Departure::EcnOnce)
                .with(Departure::Recover)
                .enabled(),
            vec![Departure::Recover, Departure::EcnOnce]
        );
        assert_eq!(Ns3Departures::all().enabled(), Departure::ALL.to_vec());
        assert_eq!(
            Departure::from_name("recovery-ssthresh"),
            Some(Departure::RecoverySsthresh)
        );
        assert_eq!(
            Ns3Departures::corrected_by_validate().enabled(),
            Departure::ALL[..3].to_vec()
        );
        assert_eq!(Departure::from_name("reno-sack"), Some(Departure::RenoSack));
    }

    #[test]
    fn limited_transmit_sends_on_a_lone_segments_duplicate_ack_only_without_the_departure() {
        let rfc = Ns3Departures::default();
        let ns3 = Ns3Departures::default().with(Departure::LimitedTransmit);
        // One segment out: the duplicate ACK marks nothing delivered in ns-3.
        assert_eq!(rfc.limited_transmit_allowance(1, 0, 1_000), 1_000);
        assert_eq!(ns3.limited_transmit_allowance(1, 0, 1_000), 0);
        // Several out: each duplicate ACK marks one segment, up to two.
        assert_eq!(ns3.limited_transmit_allowance(2, 2_000, 1_000), 2_000);
        assert_eq!(ns3.limited_transmit_allowance(2, 1_000, 1_000), 1_000);
        assert_eq!(rfc.limited_transmit_allowance(2, 1_000, 1_000), 2_000);
    }

    #[test]
    fn ssthresh_at_fast_retransmit_leaves_out_every_duplicate_acked_segment_only_with_the_departure(
    ) {
        let rfc = Ns3Departures::default();
        let ns3 = Ns3Departures::default().with(Departure::RecoverySsthresh);
        // Seven segments of 1000 bytes out, two of them sent by limited transmit, three
        // duplicate ACKs: RFC 5681 halves 5000, ns-3 4000.
        assert_eq!(rfc.recovery_flight(7_000, 2_000, 3_000), 5_000);
        assert_eq!(ns3.recovery_flight(7_000, 2_000, 3_000), 4_000);
        // Without limited transmit: RFC 7000, ns-3 4000.
        assert_eq!(rfc.recovery_flight(7_000, 0, 3_000), 7_000);
        assert_eq!(ns3.recovery_flight(7_000, 0, 3_000), 4_000);
    }

    #[test]
    fn a_cumulative_ack_on_a_marked_segment_moves_the_mark_up_and_marks_the_head_lost() {
        // Segments of 1000 bytes at 0..6000 outstanding; three duplicate ACKs mark 1000,
        // 2000, 3000 (never the head, 0).
        let above = |una: u64| (una / 1000 + 1..6).map(|i| i * 1000);
        let mut m = RenoMarks::default();
        for _ in 0..3 {
            m.add(above(0));
        }
        assert_eq!(m.marked(), 3);
        assert!(!m.is_lost(0));
        // The ACK of 2000 (0 and 1000 delivered) lands on the mark at 2000: it moves to 4000
        // and 2000 is marked lost; 3000 and 4000 stay marked.
        m.discard_up_to(2000, above(2000));
        assert_eq!((m.marked(), m.is_lost(2000)), (2, true));
        assert!(m.head_to_resend(2000));
        assert_eq!(m.left_out(2000, 1000), 3000);
        m.on_head_resent(2000);
        assert!(!m.head_to_resend(2000) && m.is_lost(2000));
        assert_eq!(m.left_out(2000, 1000), 2000);
        // The ACK of 3000 lands on 3000: the mark moves to 5000, 3000 lost, not resent.
        m.discard_up_to(3000, above(3000));
        assert_eq!(
            (m.marked(), m.is_lost(3000), m.head_to_resend(3000)),
            (2, true, true)
        );
        // The ACK of 6000 covers every mark: nothing lost, no highest mark.
        m.discard_up_to(6000, above(6000));
        assert_eq!((m.marked(), m.is_lost(6000)), (0, false));
        // With every segment above the head marked, a duplicate ACK adds no mark.
        let mut m = RenoMarks::default();
        for _ in 0..7 {
            m.add(above(0));
        }
        assert_eq!(m.marked(), 5);
        m.clear();
        assert_eq!(m, RenoMarks::default());
    }

    #[test]
    fn the_recover_test_admits_an_ack_of_recover_only_with_the_departure() {
        let rfc = Ns3Departures::default();
        let ns3 = Ns3Departures::default().with(Departure::Recover);
        assert!(rfc.fast_retransmit_allowed(0, None));
        assert!(!rfc.fast_retransmit_allowed(9_000, Some(10_000)));
        assert!(!rfc.fast_retransmit_allowed(10_000, Some(10_000)));
        assert!(rfc.fast_retransmit_allowed(10_001, Some(10_000)));
        assert!(!ns3.fast_retransmit_allowed(9_000, Some(10_000)));
        assert!(ns3.fast_retransmit_allowed(10_000, Some(10_000)));
    }

    #[test]
    fn the_ack_ending_loss_recovery_counts_only_the_whole_segments_above_recover() {
        let rfc = Ns3Departures::default();
        let ns3 = Ns3Departures::default().with(Departure::LossExit);
        // ACK of recover itself, 3000 bytes newly acknowledged.
        assert_eq!(rfc.growth_bytes(10_000, 3_000, Some(10_000), 1_000), 3_000);
        assert_eq!(ns3.growth_bytes(10_000, 3_000, Some(10_000), 1_000), 0);
        // 2500 bytes above recover: two whole segments.
        assert_eq!(ns3.growth_bytes(12_500, 5_500, Some(10_000), 1_000), 2_000);
        // Below recover (a partial ACK in loss recovery) and outside loss recovery: all.
        assert_eq!(ns3.growth_bytes(9_000, 2_000, Some(10_000), 1_000), 2_000);
        assert_eq!(ns3.growth_bytes(12_000, 2_000, None, 1_000), 2_000);
    }
}
