//! The remote aggregation point's side of one application's aggregate: it takes the probes of
//! arriving packets, echoes the latest timestamp with its echo delay, and reports which
//! sequence numbers are settled and which were lost (slides, "As packets arrive at the remote
//! AP"; "To measure RTT"; "To detect loss").
//!
//! Loss detection is RFC 5348 section 5.1's, run on the aggregate's sequence numbers: a missing
//! packet is lost once NDUPACK = 3 packets above it have arrived ([`LossDetector`]). Runs of
//! lost sequence numbers become [`Gap`]s. A report says "settled through S" plus the recent
//! gaps; each gap is repeated in [`GAP_REPEATS`] reports, so the local aggregation point still
//! learns of it when up to two reports in a row are lost. Older gaps, and all but the
//! [`MAX_GAPS`] most recent, are dropped; a local aggregation point that missed every report
//! carrying a gap counts its packets as arrived.
//!
//! Feedback leaves piggy-backed on the application's reverse traffic
//! ([`LossReporter::feedback`]), or, when data arrived and nothing went back for the feedback
//! interval, in an explicit control message ([`LossReporter::poll_timeout`]); at once when
//! half of [`MAX_GAPS`] new gaps wait.

use super::header::{extend_seq, seq_low, ApFeedback, Echo, Gap, LossReport, Probe, MAX_GAPS};
use crate::tfrc::{Arrival, LossDetector, PacketEvent};
use crate::time::{Duration, Instant};
use std::collections::VecDeque;

/// How many reports carry each gap.
pub const GAP_REPEATS: u8 = 3;

/// NDUPACK: later arrivals that declare a missing packet lost (RFC 5348 section 5.1).
pub const NDUPACK: u32 = 3;

/// The largest forward jump of sequence numbers accepted in one packet; a packet further ahead
/// is taken as malformed and changes nothing.
pub const MAX_SEQ_JUMP: u64 = 1 << 16;

/// A run of lost sequence numbers and how many reports carried it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct PendingGap {
    /// The first lost sequence number (64-bit).
    start: u64,
    /// Its length, 1 to 65535.
    len: u16,
    /// Reports that carried it.
    sent: u8,
}

/// Counters of a [`LossReporter`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ReporterStats {
    /// Packets that arrived with a sequence number not seen before.
    pub arrived: u64,
    /// Sequence numbers declared lost.
    pub lost: u64,
    /// Duplicates and packets that arrived after being declared lost.
    pub late_or_duplicate: u64,
    /// Packets whose sequence number jumped too far ahead, ignored.
    pub rejected: u64,
    /// Reports handed out.
    pub reports: u64,
}

/// The remote role of an aggregation point for one application.
#[derive(Clone, Debug)]
pub struct LossReporter {
    /// Sequence numbers to arrivals and losses.
    detector: LossDetector,
    /// The highest 64-bit sequence number seen, to extend the next one.
    highest: Option<u64>,
    /// The first sequence number seen: nothing below it is settled.
    first: Option<u64>,
    /// Recent gaps, most recent first.
    gaps: VecDeque<PendingGap>,
    /// The latest probe timestamp and when it arrived.
    latest: Option<(u32, Instant)>,
    /// When data arrived that no feedback has covered yet.
    pending_since: Option<Instant>,
    /// The settled-through value of the last report handed out.
    reported_through: Option<u64>,
    /// How long feedback may wait for reverse traffic before it goes alone.
    feedback_interval: Duration,
    /// Counters.
    stats: ReporterStats,
}

impl LossReporter {
    /// A reporter that has seen nothing and sends explicit feedback `feedback_interval` after
    /// data arrives, if no reverse traffic took it first.
    pub fn new(feedback_interval: Duration) -> LossReporter {
        LossReporter {
            detector: LossDetector::new(NDUPACK, MAX_SEQ_JUMP),
            highest: None,
            first: None,
            gaps: VecDeque::with_capacity(MAX_GAPS + 1),
            latest: None,
            pending_since: None,
            reported_through: None,
            feedback_interval,
            stats: ReporterStats::default(),
        }
    }

    /// A packet with `probe` arrived at `now`. Returns what the loss detector made of it.
    pub fn on_probe(&mut self, now: Instant, probe: Probe) -> Arrival {
        let seq = match self.highest {
            Some(h) => extend_seq(h, probe.seq),
            None => u64::from(probe.seq),
        };
        let kind = self.detector.on_arrival(now, seq, false);
        match kind {
            Arrival::Rejected => {
                self.stats.rejected = self.stats.rejected.saturating_add(1);
                return kind;
            }
            Arrival::New => self.stats.arrived = self.stats.arrived.saturating_add(1),
            Arrival::Stale | Arrival::Duplicate => {
                self.stats.late_or_duplicate = self.stats.late_or_duplicate.saturating_add(1);
            }
        }
        self.first.get_or_insert(seq);
        self.highest = Some(self.highest.map_or(seq, |h| h.max(seq)));
        self.latest = Some((probe.timestamp, now));
        while let Some(event) = self.detector.poll_event() {
            if let PacketEvent::Loss { seq, .. } = event {
                self.stats.lost = self.stats.lost.saturating_add(1);
                self.add_loss(seq);
            }
        }
        self.pending_since.get_or_insert(now);
        kind
    }

    /// Adds one lost sequence number to the gap list, extending the latest run when it
    /// continues it and no report carried it yet.
    fn add_loss(&mut self, seq: u64) {
        if let Some(g) = self.gaps.front_mut() {
            if g.sent == 0 && g.len < u16::MAX && g.start + u64::from(g.len) == seq {
                g.len += 1;
                return;
            }
        }
        self.gaps.push_front(PendingGap {
            start: seq,
            len: 1,
            sent: 0,
        });
        self.gaps.truncate(MAX_GAPS);
    }

    /// The highest sequence number settled (arrived or declared lost), if any.
    pub fn settled_through(&self) -> Option<u64> {
        let next = self.detector.next_unsettled()?;
        let first = self.first?;
        if next > first {
            Some(next - 1)
        } else {
            None
        }
    }

    /// The echo of the latest timestamp received, as it would leave at `now`.
    pub fn echo(&self, now: Instant) -> Option<Echo> {
        self.latest.map(|(timestamp, at)| Echo {
            timestamp,
            delay: super::header::encode_micros(now - at),
        })
    }

    /// The feedback to send at `now`, for a packet going back or an explicit message: the echo
    /// of the latest timestamp, and a loss report when there is news (the settled point moved,
    /// or a gap has been carried fewer than [`GAP_REPEATS`] times). Clears the pending
    /// explicit feedback.
    pub fn feedback(&mut self, now: Instant) -> ApFeedback {
        let echo = self.echo(now);
        let report = match self.settled_through() {
            Some(through)
                if self.reported_through != Some(through)
                    || self.gaps.iter().any(|g| g.sent < GAP_REPEATS) =>
            {
                let gaps = self
                    .gaps
                    .iter_mut()
                    .map(|g| {
                        g.sent = g.sent.saturating_add(1);
                        Gap {
                            start: seq_low(g.start),
                            len: g.len,
                        }
                    })
                    .collect();
                self.gaps.retain(|g| g.sent < GAP_REPEATS);
                self.reported_through = Some(through);
                self.stats.reports = self.stats.reports.saturating_add(1);
                Some(LossReport {
                    through: seq_low(through),
                    gaps,
                })
            }
            _ => None,
        };
        self.pending_since = None;
        ApFeedback { echo, report }
    }

    /// When explicit feedback is due: the feedback interval after data arrived that no feedback
    /// covered, at once when [`MAX_GAPS`] / 2 new gaps wait; `None` when nothing waits.
    pub fn poll_timeout(&self) -> Option<Instant> {
        let since = self.pending_since?;
        let fresh = self.gaps.iter().filter(|g| g.sent == 0).count();
        if fresh >= MAX_GAPS / 2 {
            Some(since)
        } else {
            Some(since + self.feedback_interval)
        }
    }

    /// Counters.
    pub fn stats(&self) -> ReporterStats {
        self.stats
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn probe(seq: u32, at_us: u32) -> Probe {
        Probe {
            seq,
            timestamp: at_us,
        }
    }

    #[test]
    fn a_sequence_with_gaps_is_reported_as_settled_runs_of_losses() {
        let mut r = LossReporter::new(Duration::from_millis(25));
        // 3, 8, 14 and 15 are lost; 16 and 17 arrived, too few to settle 14 yet.
        let arrivals = [0, 1, 2, 4, 5, 6, 7, 9, 10, 11, 12, 13, 16, 17];
        for (i, &seq) in arrivals.iter().enumerate() {
            let now = Instant::from_millis(i as u64);
            r.on_probe(now, probe(seq, 1000 * seq));
        }
        assert_eq!(r.settled_through(), Some(13));
        let fb = r.feedback(Instant::from_millis(20));
        assert_eq!(
            fb.report,
            Some(LossReport {
                through: 13,
                gaps: vec![Gap { start: 8, len: 1 }, Gap { start: 3, len: 1 }],
            })
        );
        // The latest timestamp (packet 17, at 13 ms) held for 7 ms.
        assert_eq!(
            fb.echo,
            Some(Echo {
                timestamp: 17_000,
                delay: 7_000
            })
        );
        // The third arrival above 14 settles 14 and 15 as one run, then 16 to 18.
        r.on_probe(Instant::from_millis(21), probe(18, 0));
        assert_eq!(r.settled_through(), Some(18));
        let fb = r.feedback(Instant::from_millis(30));
        assert_eq!(
            fb.report,
            Some(LossReport {
                through: 18,
                gaps: vec![
                    Gap { start: 14, len: 2 },
                    Gap { start: 8, len: 1 },
                    Gap { start: 3, len: 1 }
                ],
            })
        );
        assert_eq!(r.stats().lost, 4);
        assert_eq!(r.stats().arrived, 15);
    }

    #[test]
    fn a_gap_is_repeated_in_three_reports_then_dropped() {
        let mut r = LossReporter::new(Duration::from_millis(25));
        for seq in [0, 2, 3, 4] {
            r.on_probe(Instant::ZERO, probe(seq, 0));
        }
        let gaps = |fb: &ApFeedback| fb.report.as_ref().map(|rep| rep.gaps.len());
        for _ in 0..3 {
            assert_eq!(gaps(&r.feedback(Instant::ZERO)), Some(1));
        }
        // Nothing new: no report at all.
        assert_eq!(r.feedback(Instant::ZERO).report, None);
        r.on_probe(Instant::ZERO, probe(5, 0));
        assert_eq!(gaps(&r.feedback(Instant::ZERO)), Some(0));
    }

    #[test]
    fn explicit_feedback_is_due_one_interval_after_unreported_data() {
        let mut r = LossReporter::new(Duration::from_millis(25));
        assert_eq!(r.poll_timeout(), None);
        r.on_probe(Instant::from_millis(10), probe(0, 0));
        r.on_probe(Instant::from_millis(12), probe(1, 0));
        assert_eq!(r.poll_timeout(), Some(Instant::from_millis(35)));
        r.feedback(Instant::from_millis(20));
        assert_eq!(r.poll_timeout(), None);
    }

    #[test]
    fn sequence_numbers_continue_across_the_32_bit_wrap() {
        let mut r = LossReporter::new(Duration::from_millis(25));
        for low in [u32::MAX - 1, u32::MAX, 1, 2, 3] {
            assert_eq!(r.on_probe(Instant::ZERO, probe(low, 0)), Arrival::New);
        }
        // 2^32 (low bits 0) is lost.
        assert_eq!(r.settled_through(), Some((1 << 32) + 3));
        let report = r.feedback(Instant::ZERO).report;
        assert_eq!(
            report,
            Some(LossReport {
                through: 3,
                gaps: vec![Gap { start: 0, len: 1 }]
            })
        );
        assert_eq!(
            r.on_probe(Instant::ZERO, probe(1 << 20, 0)),
            Arrival::Rejected
        );
    }
}
