//! The receiver's loss history: loss events, loss intervals and the loss event rate p
//! (RFC 5348 sections 5.2 to 5.5).
//!
//! Two layers. [`LossIntervals`] is the arithmetic: it counts packets into the open interval
//! I_0, closes it when a loss event starts, and averages the last n intervals with the weights of
//! section 5.4. [`LossHistory`] groups congestion indications into loss events (section 5.2)
//! and feeds [`LossIntervals`]. Neither looks at sequence numbers: they count the
//! [`PacketEvent`]s they are given, so a sampling layer (CP's BFLD) can hand them a thinned
//! stream and get the loss event rate of that stream. With every packet passed in sequence
//! order, as [`LossDetector`](super::LossDetector) releases them, the counts are the
//! sequence-number differences of section 5.3: a closed interval that began with the first
//! lost packet S_A of one loss event and ended before S_B of the next holds S_B - S_A packets,
//! and I_0 holds S_max - S_A + 1.

use super::config::{validate_loss_intervals, TfrcConfigError};
use super::loss_detector::PacketEvent;
use crate::time::{Duration, Instant};
use std::collections::VecDeque;

/// The history discounting threshold: no interval is discounted below half its weight by one
/// loss event (RFC 5348 section 5.5, THRESHOLD = 0.5).
pub const DISCOUNT_THRESHOLD: f64 = 0.5;

/// A closed loss interval with its history discount factor DF_i (RFC 5348 section 5.5; 1
/// without discounting).
#[derive(Clone, Copy, Debug, PartialEq)]
struct Closed {
    /// Length, in packets (fractional only for the synthetic first interval, section 6.3.1).
    len: f64,
    /// DF_i.
    df: f64,
}

/// The last n loss intervals and their weighted average (RFC 5348 sections 5.3 to 5.5).
#[derive(Clone, Debug)]
pub struct LossIntervals {
    /// w_0 .. w_{n-1}: 1 for i < n/2, then 2(n - i)/(n + 2) (section 5.4; for n = 8:
    /// 1, 1, 1, 1, 0.8, 0.6, 0.4, 0.2).
    weights: Vec<f64>,
    /// I_1 .. I_k, most recent first, k <= n.
    closed: VecDeque<Closed>,
    /// I_0, the open interval, in packets.
    open: u64,
    /// Apply history discounting (section 5.5).
    discounting: bool,
}

impl LossIntervals {
    /// An empty history averaging the last `n` intervals (RFC 5348 section 5.4: 8; even,
    /// between 2 and 64), with history discounting (section 5.5) if `discounting`.
    pub fn new(n: usize, discounting: bool) -> Result<LossIntervals, TfrcConfigError> {
        validate_loss_intervals(n)?;
        let half = n / 2;
        let weights = (0..n)
            .map(|i| {
                if i < half {
                    1.0
                } else {
                    2.0 * (n - i) as f64 / (n + 2) as f64
                }
            })
            .collect();
        Ok(LossIntervals {
            weights,
            closed: VecDeque::with_capacity(n + 1),
            open: 0,
            discounting,
        })
    }

    /// One more packet (received, lost or marked) in the open interval I_0.
    pub fn count_packet(&mut self) {
        self.open = self.open.saturating_add(1);
    }

    /// A new loss event starts: I_0 is closed and becomes I_1, the oldest interval beyond n is
    /// forgotten, and a new empty I_0 opens; count the packet that starts the event next.
    /// With discounting, the discount factor of the moment is folded into the older intervals'
    /// DF_i first (section 5.5).
    pub fn start_loss_event(&mut self) {
        if self.discounting {
            let df = self.discount_factor();
            for c in &mut self.closed {
                c.df *= df;
            }
        }
        self.closed.push_front(Closed {
            len: self.open as f64,
            df: 1.0,
        });
        self.closed.truncate(self.weights.len());
        self.open = 0;
    }

    /// Replaces the length of I_1, the most recently closed interval, by `len` packets: the
    /// synthetic first interval of RFC 5348 section 6.3.1. False (and nothing changed) when
    /// there is no closed interval or `len` is not a positive number.
    pub fn replace_latest_closed(&mut self, len: f64) -> bool {
        match self.closed.front_mut() {
            Some(c) if len > 0.0 && len.is_finite() => {
                c.len = len;
                true
            }
            _ => false,
        }
    }

    /// I_0, the open interval, in packets.
    pub fn open_interval(&self) -> u64 {
        self.open
    }

    /// I_1, I_2, .. I_k, the closed intervals in packets, most recent first.
    pub fn closed_intervals(&self) -> impl Iterator<Item = f64> + '_ {
        self.closed.iter().map(|c| c.len)
    }

    /// The weights w_0 .. w_{n-1} (section 5.4).
    pub fn weights(&self) -> &[f64] {
        &self.weights
    }

    /// The average loss interval I_mean in packets, or `None` before the first loss event
    /// (section 5.4). With k closed intervals:
    ///
    /// ```text
    /// I_tot0 = sum_{i=0}^{k-1} I_i * w_i      (I_0 and the k-1 most recent closed ones)
    /// I_tot1 = sum_{i=1}^{k}   I_i * w_{i-1}  (the k closed ones)
    /// I_mean = max(I_tot0, I_tot1) / sum_{i=0}^{k-1} w_i
    /// ```
    ///
    /// so I_0 counts only when it raises the mean. With discounting (section 5.5), interval
    /// i >= 1 weighs w * DF_i in both sums, and also * DF in I_tot0, where DF is the current
    /// discount factor; each sum is divided by its own total weight.
    pub fn mean(&self) -> Option<f64> {
        let k = self.closed.len();
        if k == 0 {
            return None;
        }
        let df = if self.discounting {
            self.discount_factor()
        } else {
            1.0
        };
        let w = &self.weights;
        // I_0 with w_0, then I_1 .. I_{k-1} with w_1 .. w_{k-1}.
        let mut i_tot0 = self.open as f64 * w[0];
        let mut w_tot0 = w[0];
        for (c, wi) in self.closed.iter().zip(&w[1..k]) {
            i_tot0 += c.len * wi * c.df * df;
            w_tot0 += wi * c.df * df;
        }
        let (i_tot1, w_tot1) = self.closed_sums();
        let mean0 = i_tot0 / w_tot0;
        let mean1 = i_tot1 / w_tot1;
        let mean = mean0.max(mean1);
        if mean.is_finite() {
            Some(mean)
        } else {
            None
        }
    }

    /// The loss event rate p = 1 / I_mean (section 5.4), 0 before the first loss event; never
    /// above 1.
    pub fn loss_event_rate(&self) -> f64 {
        match self.mean() {
            Some(mean) if mean > 1.0 => 1.0 / mean,
            Some(_) => 1.0,
            None => 0.0,
        }
    }

    /// I_tot1 and its total weight: the closed intervals with weights w_0 .. w_{k-1} and their
    /// discount factors.
    fn closed_sums(&self) -> (f64, f64) {
        self.closed
            .iter()
            .zip(&self.weights)
            .fold((0.0, 0.0), |(i, w), (c, wi)| {
                (i + c.len * wi * c.df, w + wi * c.df)
            })
    }

    /// DF of section 5.5: when I_0 exceeds twice the average of the closed intervals,
    /// max(THRESHOLD, 2 * I_mean / I_0), else 1.
    fn discount_factor(&self) -> f64 {
        let (i_tot1, w_tot1) = self.closed_sums();
        if w_tot1 <= 0.0 {
            return 1.0;
        }
        let i_mean = i_tot1 / w_tot1;
        let i0 = self.open as f64;
        if i0 > 2.0 * i_mean {
            (2.0 * i_mean / i0).max(DISCOUNT_THRESHOLD)
        } else {
            1.0
        }
    }
}

/// What one packet event did to the loss history.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HistoryUpdate {
    /// A packet counted in the open interval, no congestion.
    Counted,
    /// A loss or mark within one RTT of the start of the current loss event: part of it
    /// (section 5.2), counted in the open interval.
    SameLossEvent,
    /// A loss or mark that starts a new loss event: the open interval was closed.
    NewLossEvent {
        /// This is the first loss event ever; the closed interval is the run of packets before
        /// it, which RFC 5348 section 6.3.1 replaces by a synthetic interval.
        first: bool,
    },
}

/// Loss events and loss intervals, fed one packet event at a time (RFC 5348 sections 5.2-5.5).
#[derive(Clone, Debug)]
pub struct LossHistory {
    /// The interval arithmetic.
    intervals: LossIntervals,
    /// T_old: the (nominal) time of the packet that started the current loss event.
    event_start: Option<Instant>,
    /// Loss events so far.
    loss_events: u64,
    /// Packet events counted so far.
    packets: u64,
}

impl LossHistory {
    /// An empty history over `n` intervals (RFC 5348: 8), with history discounting if
    /// `discounting`.
    pub fn new(n: usize, discounting: bool) -> Result<LossHistory, TfrcConfigError> {
        Ok(LossHistory {
            intervals: LossIntervals::new(n, discounting)?,
            event_start: None,
            loss_events: 0,
            packets: 0,
        })
    }

    /// Takes one packet event. `rtt` is the round-trip time R that bounds a loss event: a loss
    /// or mark at nominal time T_new belongs to the current loss event, started at T_old, when
    /// T_old + R >= T_new, and starts a new one otherwise (section 5.2). Every event counts one
    /// packet in the open interval; an event starting a loss event is the first packet of the
    /// new interval.
    pub fn on_packet_event(&mut self, rtt: Duration, event: &PacketEvent) -> HistoryUpdate {
        self.packets = self.packets.saturating_add(1);
        if !event.is_congestion() {
            self.intervals.count_packet();
            return HistoryUpdate::Counted;
        }
        let t_new = event.time();
        if let Some(t_old) = self.event_start {
            if t_old + rtt >= t_new {
                self.intervals.count_packet();
                return HistoryUpdate::SameLossEvent;
            }
        }
        let first = self.event_start.is_none();
        self.event_start = Some(t_new);
        self.loss_events = self.loss_events.saturating_add(1);
        self.intervals.start_loss_event();
        self.intervals.count_packet();
        HistoryUpdate::NewLossEvent { first }
    }

    /// The loss event rate p (section 5.4): 0 before the first loss event.
    pub fn loss_event_rate(&self) -> f64 {
        self.intervals.loss_event_rate()
    }

    /// The loss intervals.
    pub fn intervals(&self) -> &LossIntervals {
        &self.intervals
    }

    /// The loss intervals, to seed the first one (section 6.3.1).
    pub fn intervals_mut(&mut self) -> &mut LossIntervals {
        &mut self.intervals
    }

    /// Replaces the first loss interval by the synthetic one of RFC 5348 section 6.3.1: 1/p
    /// for the p at which the equation gives X_target = max(`x_recv_max`, 0.5 s / R), the
    /// largest receive rate reported so far but at least half a packet per RTT (the target
    /// when the very first packet is lost). Rates in bytes/s, `s` in bytes, `r` in seconds;
    /// nothing changes for a non-positive `r`.
    pub fn seed_first_interval(
        &mut self,
        x_recv_max: f64,
        s: f64,
        r: f64,
        b: f64,
        t_rto_factor: f64,
    ) {
        if r.is_nan() || r <= 0.0 {
            return;
        }
        let x_target = x_recv_max.max(0.5 * s / r);
        let p = super::equation::loss_event_rate_for(x_target, s, r, b, t_rto_factor * r);
        self.intervals.replace_latest_closed(1.0 / p);
    }

    /// Loss events so far.
    pub fn loss_events(&self) -> u64 {
        self.loss_events
    }

    /// Packet events counted so far.
    pub fn packets(&self) -> u64 {
        self.packets
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Builds a history whose intervals are `closed` (I_1 first) and whose open interval is
    /// `open`, by counting packets and starting loss events.
    fn intervals(open: u64, closed: &[u64], discounting: bool) -> LossIntervals {
        let mut li = LossIntervals::new(8, discounting).unwrap_or_else(|e| panic!("{e}"));
        for &len in closed.iter().rev() {
            for _ in 0..len {
                li.count_packet();
            }
            li.start_loss_event();
        }
        for _ in 0..open {
            li.count_packet();
        }
        li
    }

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-12 * b.abs().max(1.0)
    }

    #[test]
    fn the_weights_are_those_of_rfc_5348() {
        let li = intervals(0, &[], false);
        assert_eq!(li.weights(), &[1.0, 1.0, 1.0, 1.0, 0.8, 0.6, 0.4, 0.2]);
    }

    #[test]
    fn the_mean_loss_interval_follows_the_rfc_5348_weights() {
        // I_1 .. I_8 = 100, 80, 120, 90, 60, 110, 70, 40 and W_tot = 6:
        //   I_tot1 = 100 + 80 + 120 + 90 + 0.8*60 + 0.6*110 + 0.4*70 + 0.2*40 = 540, mean 90.
        // With I_0 = 30:
        //   I_tot0 = 30 + 100 + 80 + 120 + 0.8*90 + 0.6*60 + 0.4*110 + 0.2*70 = 496 (82.67),
        //   which is lower, so I_mean = 90 and p = 1/90.
        let li = intervals(30, &[100, 80, 120, 90, 60, 110, 70, 40], false);
        assert_eq!(
            li.closed_intervals().collect::<Vec<_>>(),
            vec![100.0, 80.0, 120.0, 90.0, 60.0, 110.0, 70.0, 40.0]
        );
        assert!(close(li.mean().unwrap_or(0.0), 90.0));
        assert!(close(li.loss_event_rate(), 1.0 / 90.0));
    }

    #[test]
    fn the_open_interval_counts_only_when_it_raises_the_mean() {
        // Same history, I_0 = 200: I_tot0 = 200 + 100 + 80 + 120 + 72 + 36 + 44 + 14 = 666,
        // above 540, so I_mean = 666 / 6 = 111.
        let li = intervals(200, &[100, 80, 120, 90, 60, 110, 70, 40], false);
        assert!(close(li.mean().unwrap_or(0.0), 111.0));
        // I_0 = 90 gives I_tot0 = 90 + 100 + 80 + 120 + 72 + 36 + 44 + 14 = 556 > 540: it counts
        // as soon as it raises the mean, I_mean = 556 / 6.
        let li = intervals(90, &[100, 80, 120, 90, 60, 110, 70, 40], false);
        assert!(close(li.mean().unwrap_or(0.0), 556.0 / 6.0));
    }

    #[test]
    fn only_the_last_eight_closed_intervals_are_kept() {
        let li = intervals(5, &[10, 20, 30, 40, 50, 60, 70, 80, 90, 1000], false);
        assert_eq!(li.closed_intervals().count(), 8);
        assert_eq!(li.closed_intervals().last(), Some(80.0));
    }

    #[test]
    fn with_fewer_intervals_the_weights_are_cut_short() {
        // I_1 = 50, I_2 = 30, I_0 = 10: I_tot1 = 50 + 30 = 80, I_tot0 = 10 + 50 = 60, W_tot = 2.
        let li = intervals(10, &[50, 30], false);
        assert!(close(li.mean().unwrap_or(0.0), 40.0));
        assert_eq!(intervals(10, &[], false).mean(), None);
        assert_eq!(intervals(10, &[], false).loss_event_rate(), 0.0);
    }

    #[test]
    fn history_discounting_lightens_old_intervals_when_the_open_one_is_long() {
        // Eight closed intervals of 100 and I_0 = 400 > 2 * 100: DF = max(0.5, 200/400) = 0.5.
        //   I_tot0 = 400 + 0.5 * 100 * (1 + 1 + 1 + 0.8 + 0.6 + 0.4 + 0.2) = 650,
        //   W_tot0 = 1 + 0.5 * 5 = 3.5, so I_mean = 650 / 3.5 = 185.71..
        // Without discounting: (400 + 500) / 6 = 150.
        let plain = intervals(400, &[100; 8], false);
        let discounted = intervals(400, &[100; 8], true);
        assert!(close(plain.mean().unwrap_or(0.0), 150.0));
        assert!(close(discounted.mean().unwrap_or(0.0), 650.0 / 3.5));
        // Below twice the mean nothing is discounted.
        assert!(close(
            intervals(150, &[100; 8], true).mean().unwrap_or(0.0),
            intervals(150, &[100; 8], false).mean().unwrap_or(0.0)
        ));
    }

    #[test]
    fn the_discount_of_a_closed_long_interval_stays_with_the_older_ones() {
        // I_0 = 400 over eight intervals of 100 closes with DF = 0.5 applied to the older ones:
        // I_1 = 400 (DF 1), I_2..I_8 = 100 (DF 0.5). I_tot1 = 400 + 0.5*100*(3 + 0.8+0.6+0.4+0.2)
        // = 650 over W = 1 + 0.5 * 5 = 3.5.
        let mut li = intervals(400, &[100; 8], true);
        li.start_loss_event();
        assert!(close(li.mean().unwrap_or(0.0), 650.0 / 3.5));
    }

    fn loss(seq: u64, at_ms: u64) -> PacketEvent {
        PacketEvent::Loss {
            seq,
            at: Instant::from_millis(at_ms),
        }
    }

    fn arrival(seq: u64, at_ms: u64) -> PacketEvent {
        PacketEvent::Arrival {
            seq,
            at: Instant::from_millis(at_ms),
            ce: false,
        }
    }

    #[test]
    fn losses_within_one_rtt_form_one_loss_event() {
        let rtt = Duration::from_millis(100);
        let mut h = LossHistory::new(8, false).unwrap_or_else(|e| panic!("{e}"));
        for seq in 0..10 {
            assert_eq!(
                h.on_packet_event(rtt, &arrival(seq, seq * 10)),
                HistoryUpdate::Counted
            );
        }
        assert_eq!(
            h.on_packet_event(rtt, &loss(10, 100)),
            HistoryUpdate::NewLossEvent { first: true }
        );
        h.on_packet_event(rtt, &arrival(11, 110));
        // Losses 12 (120 ms) and 20 (200 ms) lie within 100 ms of the loss at 100 ms
        // (T_old + R >= T_new).
        assert_eq!(
            h.on_packet_event(rtt, &loss(12, 120)),
            HistoryUpdate::SameLossEvent
        );
        for seq in 13..20 {
            h.on_packet_event(rtt, &arrival(seq, seq * 10));
        }
        assert_eq!(
            h.on_packet_event(rtt, &loss(20, 200)),
            HistoryUpdate::SameLossEvent
        );
        h.on_packet_event(rtt, &arrival(21, 210));
        assert_eq!(h.loss_events(), 1);
        // 21 ms after the window: a new event, closing an interval of 22 - 10 = 12 packets.
        assert_eq!(
            h.on_packet_event(rtt, &loss(22, 201 + 20)),
            HistoryUpdate::NewLossEvent { first: false }
        );
        assert_eq!(h.loss_events(), 2);
        assert_eq!(
            h.intervals().closed_intervals().collect::<Vec<_>>(),
            vec![12.0, 10.0]
        );
        assert_eq!(h.intervals().open_interval(), 1);
    }

    #[test]
    fn a_marked_packet_starts_a_loss_event_like_a_loss() {
        let rtt = Duration::from_millis(50);
        let mut h = LossHistory::new(8, false).unwrap_or_else(|e| panic!("{e}"));
        h.on_packet_event(rtt, &arrival(0, 0));
        let marked = PacketEvent::Arrival {
            seq: 1,
            at: Instant::from_millis(10),
            ce: true,
        };
        assert_eq!(
            h.on_packet_event(rtt, &marked),
            HistoryUpdate::NewLossEvent { first: true }
        );
        assert_eq!(h.loss_event_rate(), 1.0);
    }
}
