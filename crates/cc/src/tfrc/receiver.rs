//! The TFRC data receiver (RFC 5348 section 6): loss history in, feedback reports out.
//!
//! Each data packet goes through the [`LossDetector`] (sequence gaps, section 5.1), whose
//! packet events go to the [`LossHistory`] (loss events and intervals, sections 5.2-5.5). A
//! report ([`Feedback`]) is due once per RTT, when the feedback timer expires, and at once when
//! the first data packet arrives (section 6.3) or a data packet raises the loss event rate p
//! (section 6.1 step 3, which is how a new loss event shows). The caller polls:
//! [`TfrcReceiver::poll_timeout`] says when to call [`TfrcReceiver::poll_feedback`].

use super::config::{TfrcConfig, TfrcConfigError};

use super::loss_detector::{Arrival, LossDetector, PacketEvent};
use super::loss_history::{HistoryUpdate, LossHistory};
use super::packet::{DataHeader, Feedback};
use crate::time::{Duration, Instant};
use crate::units::{Bytes, Rate};

/// A TFRC receiver.
#[derive(Clone, Debug)]
pub struct TfrcReceiver {
    /// The parameters (b and t_RTO for the synthetic first interval, NDUPACK, n).
    config: TfrcConfig,
    /// Sequence numbers to packet events (section 5.1).
    detector: LossDetector,
    /// Loss events, intervals and p (sections 5.2-5.5).
    history: LossHistory,
    /// R_m, the sender's RTT estimate from the latest data packet that carried one.
    rtt: Option<Duration>,
    /// The last data packet received: its sender timestamp (t_recvdata) and arrival time.
    last_data: Option<(Instant, Instant)>,
    /// Bytes received since the last report (for X_recv).
    bytes_since_feedback: Bytes,
    /// Data packets received since the last report.
    packets_since_feedback: u64,
    /// When the last report was generated.
    last_feedback: Option<Instant>,
    /// The feedback timer (section 6.2); `None` while idle.
    feedback_timer: Option<Instant>,
    /// A report is due at once, requested at this time (sections 6.1 and 6.3).
    due_since: Option<Instant>,
    /// The largest X_recv reported so far, in bytes/s: X_target of section 6.3.1.
    x_recv_max: f64,
    /// Bytes and data packets received in all, for the mean packet size s.
    total_bytes: Bytes,
    /// See `total_bytes`.
    total_packets: u64,
    /// p after the previous data packet (p_prev of section 6.1).
    p: f64,
}

impl TfrcReceiver {
    /// A receiver that has seen no data; the configuration is checked first.
    pub fn new(config: TfrcConfig) -> Result<TfrcReceiver, TfrcConfigError> {
        config.validate()?;
        Ok(TfrcReceiver {
            detector: LossDetector::new(config.ndupack, config.max_seq_jump),
            history: LossHistory::new(config.loss_intervals, config.history_discounting)?,
            config,
            rtt: None,
            last_data: None,
            bytes_since_feedback: 0,
            packets_since_feedback: 0,
            last_feedback: None,
            feedback_timer: None,
            due_since: None,
            x_recv_max: 0.0,
            total_bytes: 0,
            total_packets: 0,
            p: 0.0,
        })
    }

    /// A data packet of `size` bytes with TFRC header `header` arrived at `now`, marked CE if
    /// `ce` (section 6.1). Every packet event it releases enters the loss history.
    pub fn on_data(&mut self, now: Instant, header: &DataHeader, size: Bytes, ce: bool) -> Arrival {
        self.on_data_with(now, header, size, ce, |_| true)
    }

    /// [`on_data`](Self::on_data), passing to the loss history only the packet events for which
    /// `keep` is true: the hook for a sampling layer such as CP's bandwidth filtered loss
    /// detection, which computes p on a virtual packet event stream. X_recv counts every packet.
    ///
    /// A [`Arrival::Rejected`] packet changes nothing. Stale and duplicate packets count towards
    /// X_recv (data did arrive) but not towards the loss history.
    pub fn on_data_with(
        &mut self,
        now: Instant,
        header: &DataHeader,
        size: Bytes,
        ce: bool,
        mut keep: impl FnMut(&PacketEvent) -> bool,
    ) -> Arrival {
        let kind = self.detector.on_arrival(now, header.seq, ce);
        if kind == Arrival::Rejected {
            return kind;
        }
        if let Some(r) = header.rtt.filter(|r| !r.is_zero()) {
            self.rtt = Some(r);
        }
        let first = self.last_data.is_none();
        self.last_data = Some((header.timestamp, now));
        self.bytes_since_feedback = self.bytes_since_feedback.saturating_add(size);
        self.packets_since_feedback = self.packets_since_feedback.saturating_add(1);
        self.total_bytes = self.total_bytes.saturating_add(size);
        self.total_packets = self.total_packets.saturating_add(1);

        let rtt = self.rtt.unwrap_or(Duration::ZERO);
        while let Some(event) = self.detector.poll_event() {
            if !keep(&event) {
                continue;
            }
            if self.history.on_packet_event(rtt, &event)
                == (HistoryUpdate::NewLossEvent { first: true })
            {
                self.seed_first_interval();
            }
        }

        // Section 6.1 step 3: a rise of p expires the feedback timer; section 6.3: the first
        // data packet is answered at once.
        let p = self.history.loss_event_rate();
        if first || p > self.p {
            self.due_since.get_or_insert(now);
        }
        self.p = p;
        match self.rtt {
            // Without an RTT there is no feedback timer: every data packet is answered.
            None => {
                self.due_since.get_or_insert(now);
            }
            // Idle since the timer last expired: data restarts it (section 6.2).
            Some(r) if self.feedback_timer.is_none() && self.last_feedback.is_some() => {
                self.feedback_timer = Some(now + r);
            }
            Some(_) => {}
        }
        kind
    }

    /// The report to send at `now`, if one is due (section 6.2): the feedback timer expired or
    /// an immediate report was requested, and data arrived since the last report. The timer
    /// restarts for one RTT; with no new data it stops until the next data packet.
    pub fn poll_feedback(&mut self, now: Instant) -> Option<Feedback> {
        let timer_expired = self.feedback_timer.is_some_and(|t| now >= t);
        let requested = self.due_since.is_some_and(|t| now >= t);
        if !(timer_expired || requested) {
            return None;
        }
        self.due_since = None;
        let (t_recvdata, arrived) = match self.last_data {
            Some(last) if self.packets_since_feedback > 0 => last,
            _ => {
                self.feedback_timer = None;
                return None;
            }
        };
        // X_recv: bytes since the last report over the time since it (section 3.2.2); the
        // first report covers no interval and says 0.
        let x_recv = match self.last_feedback {
            Some(t) if now > t => Rate::from_bytes_over(self.bytes_since_feedback, now - t),
            _ => Rate::ZERO,
        };
        self.x_recv_max = self.x_recv_max.max(x_recv.bytes_per_sec());
        let feedback = Feedback {
            t_recvdata,
            t_delay: now - arrived,
            x_recv,
            p: self.history.loss_event_rate(),
        };
        self.bytes_since_feedback = 0;
        self.packets_since_feedback = 0;
        self.last_feedback = Some(now);
        self.feedback_timer = self.rtt.map(|r| now + r);
        Some(feedback)
    }

    /// When [`poll_feedback`](Self::poll_feedback) should next be called: at once (a time not
    /// after now) when a report is due, else when the feedback timer expires; `None` while idle.
    pub fn poll_timeout(&self) -> Option<Instant> {
        match (self.due_since, self.feedback_timer) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// The current loss event rate p (section 5.4).
    pub fn loss_event_rate(&self) -> f64 {
        self.history.loss_event_rate()
    }

    /// R_m, the sender's RTT estimate from the latest data packet that carried one.
    pub fn rtt(&self) -> Option<Duration> {
        self.rtt
    }

    /// The loss history.
    pub fn history(&self) -> &LossHistory {
        &self.history
    }

    /// The mean size of the data packets received, in bytes: s for the equation (the
    /// configured segment size before any data).
    fn mean_packet_size(&self) -> f64 {
        if self.total_packets == 0 {
            self.config.segment_size as f64
        } else {
            self.total_bytes as f64 / self.total_packets as f64
        }
    }

    /// Replaces the first loss interval by the synthetic one of section 6.3.1: 1/p for the p at
    /// which the equation gives X_target, the largest X_recv reported so far, but at least
    /// 0.5 packets per RTT (the target when the first packet is lost). Without an RTT the
    /// counted interval stays.
    fn seed_first_interval(&mut self) {
        let Some(rtt) = self.rtt else { return };
        let s = self.mean_packet_size();
        let (b, t) = (self.config.b, self.config.t_rto_factor);
        self.history
            .seed_first_interval(self.x_recv_max, s, rtt.as_secs_f64(), b, t);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tfrc::equation;

    const RTT: Duration = Duration::from_millis(100);

    fn receiver() -> TfrcReceiver {
        TfrcReceiver::new(TfrcConfig::default()).unwrap_or_else(|e| panic!("{e}"))
    }

    fn ms(m: u64) -> Instant {
        Instant::from_millis(m)
    }

    /// Data packet `seq` sent at `sent` milliseconds.
    fn header(seq: u64, sent: u64) -> DataHeader {
        DataHeader {
            seq,
            timestamp: ms(sent),
            rtt: Some(RTT),
        }
    }

    #[test]
    fn the_first_data_packet_is_answered_at_once_then_once_per_rtt() {
        let mut r = receiver();
        assert_eq!(r.poll_timeout(), None);
        r.on_data(ms(50), &header(0, 0), 1000, false);
        assert_eq!(r.poll_timeout(), Some(ms(50)));
        let first = r.poll_feedback(ms(50));
        assert_eq!(
            first,
            Some(Feedback {
                t_recvdata: ms(0),
                t_delay: Duration::ZERO,
                x_recv: Rate::ZERO,
                p: 0.0
            })
        );
        assert_eq!(r.poll_timeout(), Some(ms(150)));
        // Ten packets, one each 10 ms, in the next RTT: 10_000 bytes over 0.1 s.
        for seq in 1..=10 {
            let at = 50 + 10 * seq;
            r.on_data(ms(at), &header(seq, at - 50), 1000, false);
            if at < 150 {
                assert_eq!(r.poll_feedback(ms(at)), None);
            }
        }
        let second = r.poll_feedback(ms(150));
        assert_eq!(
            second,
            Some(Feedback {
                t_recvdata: ms(100),
                t_delay: Duration::ZERO,
                x_recv: Rate::from_bps(800_000),
                p: 0.0
            })
        );
        assert_eq!(r.poll_timeout(), Some(ms(250)));
    }

    #[test]
    fn the_report_echoes_the_last_timestamp_and_the_time_held() {
        let mut r = receiver();
        r.on_data(ms(50), &header(0, 0), 1000, false);
        r.poll_feedback(ms(50));
        r.on_data(ms(80), &header(1, 30), 1000, false);
        r.on_data(ms(90), &header(2, 40), 1000, false);
        let fb = r.poll_feedback(ms(150));
        assert_eq!(
            fb.map(|f| (f.t_recvdata, f.t_delay)),
            Some((ms(40), Duration::from_millis(60)))
        );
    }

    #[test]
    fn without_new_data_no_report_is_sent_and_the_timer_stops() {
        let mut r = receiver();
        r.on_data(ms(0), &header(0, 0), 1000, false);
        r.poll_feedback(ms(0));
        assert_eq!(r.poll_feedback(ms(100)), None);
        assert_eq!(r.poll_timeout(), None);
        r.on_data(ms(500), &header(1, 500), 1000, false);
        assert_eq!(r.poll_timeout(), Some(ms(600)));
        assert!(r.poll_feedback(ms(600)).is_some());
    }

    #[test]
    fn a_new_loss_event_is_reported_at_once_with_a_synthetic_first_interval() {
        let mut r = receiver();
        // One packet each 10 ms: 100_000 bytes/s, reported at 100 ms.
        let mut seq = 0;
        let mut at = 0;
        while at <= 100 {
            r.on_data(ms(at), &header(seq, at), 1000, false);
            r.poll_feedback(ms(at));
            seq += 1;
            at += 10;
        }
        // Packet 11 is lost; 12, 13, 14 arrive and the third declares it.
        for s in 12..=14 {
            r.on_data(ms(10 * s), &header(s, 10 * s), 1000, false);
        }
        assert!(r.poll_timeout().is_some_and(|t| t <= ms(140)));
        let fb = r.poll_feedback(ms(140));
        // X_target = 100_000 bytes/s; the first interval is 1/p for the p that gives it, and
        // with I_0 = 4 packets that interval is the mean.
        let p = equation::loss_event_rate_for(100_000.0, 1000.0, 0.1, 1.0, 0.4);
        let reported = fb.map_or(0.0, |f| f.p);
        assert!(
            ((reported - p) / p).abs() < 1e-6,
            "p = {reported}, expected {p}"
        );
        assert_eq!(r.history().loss_events(), 1);
    }

    #[test]
    fn a_filter_that_drops_every_event_leaves_p_at_zero() {
        let mut r = receiver();
        for s in [0, 2, 3, 4, 5] {
            r.on_data_with(ms(s), &header(s, s), 1000, false, |_| false);
        }
        assert_eq!(r.loss_event_rate(), 0.0);
        assert_eq!(r.history().packets(), 0);
    }

    #[test]
    fn a_packet_far_ahead_is_rejected_and_changes_nothing() {
        let mut r = receiver();
        r.on_data(ms(0), &header(0, 0), 1000, false);
        r.poll_feedback(ms(0));
        assert_eq!(
            r.on_data(ms(5), &header(u64::MAX, 5), 1000, false),
            Arrival::Rejected
        );
        assert_eq!(r.poll_feedback(ms(100)), None);
    }
}
