//! The local aggregation point's side of one application's aggregate: it stamps the packets
//! its endpoints send, measures the aggregate's RTT and losses from the other aggregation
//! point's feedback, and runs a rate-based congestion control on the aggregate (slides, "As
//! packets arrive at the local AP"; "An AP uses aggregate measurements of RTT and loss to drive
//! a rate-based congestion control algorithm (e.g., TFRC or RAP)").
//!
//! - **RTT** (slides, "To measure RTT"): RTT = current time - timestamp echo - echo delay,
//!   computed modulo 2^32 microseconds. Each newly echoed timestamp gives one sample; the
//!   estimate is R = q*R + (1-q)*sample with TFRC's q (RFC 5348 section 4.3: 0.9), the first
//!   sample taken as it is.
//! - **Loss** (slides, "To detect loss"): a loss report settles a range of sequence numbers;
//!   each settled packet becomes a [`PacketEvent`] (an arrival, or a loss when it lies in a
//!   reported gap) timed at its send time at this aggregation point. The events pass the
//!   [`FlowshareFilter`] (every event for one flowshare and the naive approach, the virtual
//!   stream of BFLD, slides Fig. 9) into a [`LossHistory`], which groups losses within one RTT
//!   into loss events and computes the loss event rate p (RFC 5348 sections 5.2 to 5.4).
//! - **TFRC on the aggregate** ([`AggregateControl::Tfrc`], slides "SINGLE FLOWSHARES"): the
//!   aggregation point plays the TFRC receiver's part itself and hands a [`TfrcSender`] a report
//!   (RFC 5348 section 6.2) once per RTT, and at once when a new loss event starts, provided
//!   a packet of the aggregate arrived since the previous one: p, the
//!   receive rate X_recv, and the latest echo as t_recvdata and t_delay. The first loss
//!   interval is replaced as RFC 5348 section 6.3.1 says. The sender's X is the rate of one
//!   flowshare. X_recv is the rate at which the aggregate's packets arrived since the last
//!   report (TFRC unmodified on the aggregate, for one flowshare and the naive approach), and
//!   with BFLD that rate divided by m: the sender's limit X <= 2 X_recv (RFC 5348 section 4.3)
//!   then keeps m X within twice what the aggregate gets through. (The virtual stream's own
//!   receive rate would not do: it is F times the aggregate's, so once X falls, F and X_recv
//!   fall with it and X cannot recover.)
//! - **RAP on the aggregate** ([`AggregateControl::Rap`]): the [`Rap`] AIMD, told of each new
//!   loss event of the same history.
//! - **Available bandwidth**: m times the flowshare rate ([`Flowshares::available_bandwidth`]).
//!   BFLD's sampling fraction is F = B_avail / B_arriv with B_avail the flowshare rate and
//!   B_arriv the [`ArrivalRate`] of the packets stamped here.
//! - **Aggregate loss rate** for the endpoints: the fraction of settled packets that were lost,
//!   averaged over about the last [`LOSS_RATE_WINDOW`] packets (every packet, not the virtual
//!   stream).

use super::bfld::{sampling_fraction, ArrivalRate};
use super::flowshare::{FlowshareError, FlowshareFilter, Flowshares};
use super::header::{
    extend_seq, seq_low, timestamp_micros, ApFeedback, Echo, EndpointFeedback, LossReport, Probe,
};
use super::rap::Rap;
use crate::rng::Rng;
use crate::tfrc::{
    Feedback, HistoryUpdate, LossHistory, PacketEvent, TfrcConfig, TfrcConfigError, TfrcSender,
};
use crate::time::{Duration, Instant};
use crate::units::{Bytes, Rate};
use std::collections::VecDeque;

/// The number of packets the aggregate loss rate reported to endpoints is averaged over
/// (an exponentially weighted average with weight 1/1000 per packet; the plain mean before
/// the first 1000).
pub const LOSS_RATE_WINDOW: u64 = 1000;

/// The congestion control an aggregation point runs on an aggregate.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum AggregateControl {
    /// TFRC (RFC 5348), the slides' CP-TFRC.
    #[default]
    Tfrc,
    /// A RAP-like rate AIMD ([`Rap`]).
    Rap,
}

/// How an aggregation point controls one application's aggregate.
#[derive(Clone, Debug, PartialEq)]
pub struct AppConfig {
    /// TFRC or RAP.
    pub control: AggregateControl,
    /// How many flowshares the application takes, and how.
    pub flowshares: Flowshares,
    /// TFRC's parameters. RAP uses the segment size s, t_mbi and the initial RTT; the loss
    /// history uses n and history discounting; the RTT filter uses q.
    pub tfrc: TfrcConfig,
    /// The most packets kept stamped and not yet settled by a report; beyond it the oldest is
    /// forgotten (and never enters the loss history).
    pub max_outstanding: usize,
}

impl Default for AppConfig {
    fn default() -> Self {
        AppConfig {
            control: AggregateControl::Tfrc,
            flowshares: Flowshares::Single,
            tfrc: TfrcConfig::default(),
            max_outstanding: 1 << 16,
        }
    }
}

/// Why an [`AppConfig`] is impossible.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum AppConfigError {
    /// A TFRC parameter is out of range.
    #[error(transparent)]
    Tfrc(#[from] TfrcConfigError),
    /// The flowshare choice is out of range.
    #[error(transparent)]
    Flowshares(#[from] FlowshareError),
    /// `max_outstanding` is zero.
    #[error("max_outstanding is 0; the aggregation point must remember at least one packet")]
    ZeroOutstanding,
}

impl AppConfig {
    /// Checks every parameter.
    pub fn validate(&self) -> Result<(), AppConfigError> {
        self.tfrc.validate()?;
        self.flowshares.validate()?;
        if self.max_outstanding == 0 {
            return Err(AppConfigError::ZeroOutstanding);
        }
        Ok(())
    }
}

/// The rate controller, as an enum so that a report is dispatched by a match.
#[derive(Clone, Debug)]
enum RateControl {
    /// TFRC's sender.
    Tfrc(Box<TfrcSender>),
    /// RAP.
    Rap(Rap),
}

/// A packet stamped and not yet settled.
#[derive(Clone, Copy, Debug)]
struct Sent {
    /// When it was stamped.
    at: Instant,
    /// Its size, in bytes.
    size: Bytes,
}

/// The latest echo taken.
#[derive(Clone, Copy, Debug)]
struct LastEcho {
    /// The echoed timestamp field.
    timestamp: u32,
    /// The instant that timestamp stands for (the send time of the echoed packet).
    t_recvdata: Instant,
    /// The echo delay.
    delay: Duration,
    /// When the echo arrived.
    received: Instant,
}

/// Counters of an [`Aggregate`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct AggregateStats {
    /// Packets stamped.
    pub stamped: u64,
    /// Packets settled as arrived.
    pub arrived: u64,
    /// Packets settled as lost.
    pub lost: u64,
    /// Loss events of the history (of the virtual stream with BFLD).
    pub loss_events: u64,
    /// Loss reports taken.
    pub reports: u64,
    /// Loss reports ignored as impossible (settling packets never stamped).
    pub bad_reports: u64,
    /// Echoes ignored as impossible (a delay longer than the time since the timestamp, or a
    /// timestamp older than the first packet).
    pub bad_echoes: u64,
    /// Packets forgotten unsettled because `max_outstanding` were waiting.
    pub expired: u64,
    /// Reports the TFRC sender refused.
    pub refused_feedback: u64,
}

/// The local role of an aggregation point for one application.
#[derive(Clone, Debug)]
pub struct Aggregate {
    /// The configuration.
    config: AppConfig,
    /// TFRC or RAP.
    control: RateControl,
    /// The loss history of the stream the filter passes.
    history: LossHistory,
    /// Single, naive or BFLD.
    filter: FlowshareFilter,
    /// B_arriv.
    arrival: ArrivalRate,
    /// The next sequence number to stamp.
    next_seq: u64,
    /// The lowest sequence number not yet settled; `sent[0]` is its packet.
    settled: u64,
    /// Packets `settled .. next_seq`.
    sent: VecDeque<Sent>,
    /// When the first packet was stamped.
    first_sent: Option<Instant>,
    /// The smoothed RTT R.
    srtt: Option<Duration>,
    /// The latest RTT sample.
    latest_rtt: Option<Duration>,
    /// The latest echo taken.
    last_echo: Option<LastEcho>,
    /// The aggregate packet loss fraction.
    loss_fraction: f64,
    /// Packets settled so far (for the loss fraction's weight).
    settled_count: u64,
    /// Bytes of the aggregate's packets settled as arrived since the last TFRC report.
    recv_bytes: Bytes,
    /// When the last TFRC report was taken.
    last_report: Option<Instant>,
    /// A new loss event waits to be reported to TFRC.
    loss_event_pending: bool,
    /// The largest X_recv reported to TFRC, in bytes/s (X_target of RFC 5348 section 6.3.1).
    x_recv_max: f64,
    /// Counters.
    stats: AggregateStats,
}

impl Aggregate {
    /// An aggregate that has sent nothing, its controller started at `now`.
    pub fn new(config: &AppConfig, now: Instant) -> Result<Aggregate, AppConfigError> {
        config.validate()?;
        let tfrc = &config.tfrc;
        let control = match config.control {
            AggregateControl::Tfrc => {
                RateControl::Tfrc(Box::new(TfrcSender::new(tfrc.clone(), now)?))
            }
            AggregateControl::Rap => RateControl::Rap(Rap::new(
                tfrc.segment_size,
                tfrc.t_mbi,
                tfrc.initial_rtt,
                now,
            )),
        };
        Ok(Aggregate {
            history: LossHistory::new(tfrc.loss_intervals, tfrc.history_discounting)?,
            filter: FlowshareFilter::new(config.flowshares)?,
            config: config.clone(),
            control,
            arrival: ArrivalRate::new(),
            next_seq: 0,
            settled: 0,
            sent: VecDeque::new(),
            first_sent: None,
            srtt: None,
            latest_rtt: None,
            last_echo: None,
            loss_fraction: 0.0,
            settled_count: 0,
            recv_bytes: 0,
            last_report: None,
            loss_event_pending: false,
            x_recv_max: 0.0,
            stats: AggregateStats::default(),
        })
    }

    /// An endpoint's packet of `size` bytes leaves through this aggregation point at `now`:
    /// the probe to put on it (the next sequence number and the timestamp). The packet also
    /// counts towards B_arriv.
    pub fn stamp(&mut self, now: Instant, size: Bytes) -> Probe {
        if self.sent.len() >= self.config.max_outstanding {
            self.sent.pop_front();
            self.settled = self.settled.saturating_add(1);
            self.stats.expired = self.stats.expired.saturating_add(1);
        }
        let seq = self.next_seq;
        self.next_seq = self.next_seq.saturating_add(1);
        self.sent.push_back(Sent { at: now, size });
        self.first_sent.get_or_insert(now);
        self.stats.stamped = self.stats.stamped.saturating_add(1);
        self.arrival.on_packet(now, size, self.srtt);
        Probe {
            seq: seq_low(seq),
            timestamp: timestamp_micros(now),
        }
    }

    /// Feedback from the remote aggregation point arrived at `now`: the echo gives an RTT
    /// sample, the loss report settles packets into the loss history (drawing BFLD's samples
    /// from `rng`), and the rate controller hears of it.
    pub fn on_feedback(&mut self, now: Instant, feedback: &ApFeedback, rng: &mut Rng) {
        if let Some(echo) = feedback.echo {
            self.on_echo(now, echo);
        }
        let mut new_events = 0;
        if let Some(report) = &feedback.report {
            new_events = self.on_report(report, rng);
        }
        if !feedback.is_empty() {
            self.drive(now, new_events);
        }
    }

    /// Takes an echo: RTT = now - timestamp echo - echo delay (slides, "To measure RTT").
    /// Returns true when it gave a new sample.
    fn on_echo(&mut self, now: Instant, echo: Echo) -> bool {
        let Some(first) = self.first_sent else {
            self.stats.bad_echoes = self.stats.bad_echoes.saturating_add(1);
            return false;
        };
        let elapsed_us = timestamp_micros(now).wrapping_sub(echo.timestamp);
        let elapsed = Duration::from_micros(u64::from(elapsed_us));
        // One microsecond of slack for the truncation of both timestamps.
        let possible = (now - first) + Duration::from_micros(1);
        if elapsed > possible || echo.delay > elapsed_us {
            self.stats.bad_echoes = self.stats.bad_echoes.saturating_add(1);
            return false;
        }
        if self
            .last_echo
            .is_some_and(|e| e.timestamp == echo.timestamp)
        {
            // The same timestamp echoed again: no new sample.
            return false;
        }
        let sample = Duration::from_micros(u64::from(elapsed_us - echo.delay));
        let q = self.config.tfrc.q;
        self.srtt = Some(match self.srtt {
            Some(r) => r.mul_f64(q) + sample.mul_f64(1.0 - q),
            None => sample,
        });
        self.latest_rtt = Some(sample);
        let t_recvdata = now - elapsed;
        if self.last_echo.is_none_or(|e| t_recvdata >= e.t_recvdata) {
            self.last_echo = Some(LastEcho {
                timestamp: echo.timestamp,
                t_recvdata,
                delay: Duration::from_micros(u64::from(echo.delay)),
                received: now,
            });
        }
        true
    }

    /// Settles the packets a loss report covers; returns the number of new loss events.
    fn on_report(&mut self, report: &LossReport, rng: &mut Rng) -> u32 {
        self.stats.reports = self.stats.reports.saturating_add(1);
        let Some(highest) = self.next_seq.checked_sub(1) else {
            self.stats.bad_reports = self.stats.bad_reports.saturating_add(1);
            return 0;
        };
        let through = extend_seq(highest, report.through);
        if through > highest {
            self.stats.bad_reports = self.stats.bad_reports.saturating_add(1);
            return 0;
        }
        if through < self.settled {
            // Old news (a reordered or repeated report).
            return 0;
        }
        // The gaps as 64-bit inclusive ranges; a gap reaching past `through` is malformed and
        // left out.
        let gaps: Vec<(u64, u64)> = report
            .gaps
            .iter()
            .filter_map(|g| {
                let start = extend_seq(through, g.start);
                let end = start.checked_add(u64::from(g.len).checked_sub(1)?)?;
                (end <= through).then_some((start, end))
            })
            .collect();
        let rtt = self.grouping_rtt();
        let mut new_events = 0;
        while self.settled <= through {
            let Some(packet) = self.sent.pop_front() else {
                break;
            };
            let seq = self.settled;
            self.settled = self.settled.saturating_add(1);
            let lost = gaps.iter().any(|&(a, b)| a <= seq && seq <= b);
            let event = if lost {
                PacketEvent::Loss { seq, at: packet.at }
            } else {
                PacketEvent::Arrival {
                    seq,
                    at: packet.at,
                    ce: false,
                }
            };
            new_events += self.on_event(&event, packet.size, rtt, rng);
        }
        new_events
    }

    /// One settled packet: counted in the aggregate loss rate, and passed to the loss history
    /// if the flowshare filter keeps it. Returns 1 when it started a loss event.
    fn on_event(&mut self, event: &PacketEvent, size: Bytes, rtt: Duration, rng: &mut Rng) -> u32 {
        let lost = event.is_congestion();
        if lost {
            self.stats.lost = self.stats.lost.saturating_add(1);
        } else {
            self.stats.arrived = self.stats.arrived.saturating_add(1);
        }
        self.settled_count = self.settled_count.saturating_add(1);
        let weight = 1.0 / self.settled_count.min(LOSS_RATE_WINDOW) as f64;
        let x = if lost { 1.0 } else { 0.0 };
        self.loss_fraction += weight * (x - self.loss_fraction);

        if !lost {
            self.recv_bytes = self.recv_bytes.saturating_add(size);
        }
        let f = self.sampling_fraction();
        if !self.filter.keep(f, rng) {
            return 0;
        }
        match self.history.on_packet_event(rtt, event) {
            HistoryUpdate::NewLossEvent { first } => {
                self.stats.loss_events = self.stats.loss_events.saturating_add(1);
                if first {
                    self.seed_first_interval();
                }
                1
            }
            HistoryUpdate::Counted | HistoryUpdate::SameLossEvent => 0,
        }
    }

    /// The RTT that bounds a loss event: the receiver's R, or the configured initial RTT
    /// before a sample, or zero.
    fn grouping_rtt(&self) -> Duration {
        self.receiver_rtt()
            .or(self.config.tfrc.initial_rtt)
            .unwrap_or(Duration::ZERO)
    }

    /// The RTT of the TFRC receiver's part the aggregation point plays: R_m, the TFRC sender's
    /// estimate R (RFC 5348 section 6: the receiver's RTT is the one the sender puts in its data
    /// packets, section 3.2.1, filtered once per feedback report as section 4.3 says). It
    /// bounds a loss event (section 5.2), sets the synthetic first loss interval (section
    /// 6.3.1) and the feedback timer (section 6.2). Before the sender has an estimate, and with
    /// RAP, the aggregate's R from every echo.
    fn receiver_rtt(&self) -> Option<Duration> {
        match &self.control {
            RateControl::Tfrc(sender) => sender.rtt().or(self.srtt),
            RateControl::Rap(_) => self.srtt,
        }
    }

    /// RFC 5348 section 6.3.1 for TFRC: the first loss interval becomes 1/p for the p at which
    /// the equation gives X_target = max(largest X_recv reported, 0.5 s/R).
    fn seed_first_interval(&mut self) {
        if !matches!(self.control, RateControl::Tfrc(_)) {
            return;
        }
        let Some(r) = self.receiver_rtt().map(Duration::as_secs_f64) else {
            return;
        };
        let c = &self.config.tfrc;
        let s = c.segment_size as f64;
        self.history
            .seed_first_interval(self.x_recv_max, s, r, c.b, c.t_rto_factor);
    }

    /// Tells the rate controller about the feedback that just arrived.
    fn drive(&mut self, now: Instant, new_events: u32) {
        match &mut self.control {
            RateControl::Tfrc(sender) => {
                if new_events > 0 {
                    self.loss_event_pending = true;
                }
                let Some(echo) = self.last_echo else { return };
                let r = sender.rtt().or(self.srtt).unwrap_or(Duration::ZERO);
                let due = self.loss_event_pending
                    || self
                        .last_report
                        .is_none_or(|t| now.saturating_since(t) >= r);
                // As a TFRC receiver does (RFC 5348 section 6.2), no report without a packet
                // arrived since the last one: it would say X_recv = 0.
                if !due || (self.last_report.is_some() && self.recv_bytes == 0) {
                    return;
                }
                let x_recv = match self.last_report {
                    Some(t) if now > t => Rate::from_bytes_over(self.recv_bytes, now - t),
                    _ => Rate::ZERO,
                };
                // With BFLD, one flowshare's part of what the aggregate got through.
                let x_recv = match self.config.flowshares {
                    Flowshares::Bfld { m } => Rate::from_bps(x_recv.bps() / u64::from(m.max(1))),
                    Flowshares::Single | Flowshares::Naive { .. } => x_recv,
                };
                let report = Feedback {
                    t_recvdata: echo.t_recvdata,
                    t_delay: echo.delay + (now - echo.received),
                    x_recv,
                    p: self.history.loss_event_rate(),
                };
                if sender.on_feedback(now, &report).is_ok() {
                    self.last_report = Some(now);
                    self.recv_bytes = 0;
                    self.loss_event_pending = false;
                    self.x_recv_max = self.x_recv_max.max(x_recv.bytes_per_sec());
                } else {
                    self.stats.refused_feedback = self.stats.refused_feedback.saturating_add(1);
                }
            }
            RateControl::Rap(rap) => {
                if let Some(r) = self.srtt {
                    rap.on_feedback(now, r, new_events);
                }
            }
        }
    }

    /// When [`handle_timeout`](Self::handle_timeout) must be called: the controller's
    /// nofeedback timer.
    pub fn poll_timeout(&self) -> Instant {
        match &self.control {
            RateControl::Tfrc(s) => s.poll_timeout().unwrap_or(Instant::MAX),
            RateControl::Rap(r) => r.poll_timeout(),
        }
    }

    /// Runs the controller's nofeedback timer (RFC 5348 section 4.4) if it is due.
    pub fn handle_timeout(&mut self, now: Instant) {
        match &mut self.control {
            RateControl::Tfrc(s) => s.handle_timeout(now),
            RateControl::Rap(r) => r.handle_timeout(now),
        }
    }

    /// The rate of one flowshare: TFRC's X or RAP's rate (B_avail of BFLD).
    pub fn flowshare_rate(&self) -> Rate {
        match &self.control {
            RateControl::Tfrc(s) => s.rate(),
            RateControl::Rap(r) => r.rate(),
        }
    }

    /// The bandwidth available to the application: m times the flowshare rate.
    pub fn available_bandwidth(&self) -> Rate {
        self.config
            .flowshares
            .available_bandwidth(self.flowshare_rate())
    }

    /// F = B_avail / B_arriv for the next packet event (1 until B_arriv is known). Only BFLD
    /// applies it.
    pub fn sampling_fraction(&self) -> f64 {
        sampling_fraction(self.flowshare_rate(), self.arrival.rate())
    }

    /// B_arriv, the arrival rate of the application's packets at this aggregation point.
    pub fn arrival_rate(&self) -> Option<Rate> {
        self.arrival.rate()
    }

    /// The smoothed RTT R between the aggregation points.
    pub fn rtt(&self) -> Option<Duration> {
        self.srtt
    }

    /// The latest RTT sample.
    pub fn latest_rtt(&self) -> Option<Duration> {
        self.latest_rtt
    }

    /// The fraction of the aggregate's packets lost (about the last [`LOSS_RATE_WINDOW`]).
    pub fn loss_rate(&self) -> f64 {
        self.loss_fraction
    }

    /// The loss event rate p of the stream the history sees (the virtual stream with BFLD).
    pub fn loss_event_rate(&self) -> f64 {
        self.history.loss_event_rate()
    }

    /// The loss history.
    pub fn history(&self) -> &LossHistory {
        &self.history
    }

    /// The flowshare filter (with BFLD's counts).
    pub fn filter(&self) -> &FlowshareFilter {
        &self.filter
    }

    /// What the endpoints are told: available bandwidth, aggregate loss rate, RTT.
    pub fn estimate(&self) -> EndpointFeedback {
        EndpointFeedback {
            available_bandwidth: self.available_bandwidth(),
            loss_rate: self.loss_fraction,
            rtt: self.srtt.unwrap_or(Duration::ZERO),
        }
    }

    /// The configuration.
    pub fn config(&self) -> &AppConfig {
        &self.config
    }

    /// Counters.
    pub fn stats(&self) -> AggregateStats {
        self.stats
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cp::header::Gap;
    use crate::tfrc::equation;

    const RTT_MS: u64 = 100;

    fn ms(m: u64) -> Instant {
        Instant::from_millis(m)
    }

    fn aggregate(flowshares: Flowshares, control: AggregateControl) -> Aggregate {
        let config = AppConfig {
            control,
            flowshares,
            ..AppConfig::default()
        };
        Aggregate::new(&config, Instant::ZERO).unwrap_or_else(|e| panic!("{e}"))
    }

    /// Drives an aggregate with one 1000-byte packet every 10 ms and, every 10 ms, feedback
    /// from the other end settling the packets sent one RTT earlier, from `from` ms to `to` ms;
    /// the packets whose sequence numbers are in `lost` are reported lost.
    fn drive(agg: &mut Aggregate, rng: &mut Rng, from: u64, to: u64, lost: &[u32]) {
        let mut t = from;
        while t < to {
            agg.stamp(ms(t), 1000);
            if t >= RTT_MS {
                // The packet sent at t - RTT is seq (t - RTT) / 10; it was held 0 us.
                let seq = ((t - RTT_MS) / 10) as u32;
                let fb = ApFeedback {
                    echo: Some(Echo {
                        timestamp: timestamp_micros(ms(t - RTT_MS)),
                        delay: 0,
                    }),
                    report: Some(LossReport {
                        through: seq,
                        gaps: lost
                            .iter()
                            .filter(|&&l| l <= seq)
                            .map(|&l| Gap { start: l, len: 1 })
                            .collect(),
                    }),
                };
                agg.on_feedback(ms(t), &fb, rng);
            }
            t += 10;
        }
    }

    #[test]
    fn tfrc_on_the_aggregate_reacts_to_a_loss_event() {
        let mut rng = Rng::new(1);
        let mut agg = aggregate(Flowshares::Single, AggregateControl::Tfrc);
        drive(&mut agg, &mut rng, 0, 2000, &[]);
        assert_eq!(agg.rtt(), Some(Duration::from_millis(RTT_MS)));
        assert_eq!(agg.loss_event_rate(), 0.0);
        // Slow start up to twice the receive rate of 100_000 bytes/s.
        let before = agg.flowshare_rate();
        assert_eq!(before, Rate::from_bps(1_600_000));
        // Packet 195 (sent at 1950 ms) is lost; it is reported at 2050 ms.
        drive(&mut agg, &mut rng, 2000, 2100, &[195]);
        assert_eq!(agg.stats().loss_events, 1);
        let p = agg.loss_event_rate();
        assert!(p > 0.0);
        // The first interval is seeded so that the equation gives X_target = 100_000 bytes/s
        // (RFC 5348 section 6.3.1); the sender now runs at the equation's rate.
        let x = equation::throughput_rfc(1000.0, 0.1, p);
        let after = agg.flowshare_rate();
        assert!(after < before, "{after} after, {before} before");
        assert!(
            (after.bytes_per_sec() - x).abs() < 1.0,
            "{after} vs equation {x} bytes/s"
        );
        assert!((x - 100_000.0).abs() < 100_000.0 * 0.05, "{x}");
        assert_eq!(agg.stats().lost, 1);
    }

    #[test]
    fn the_first_loss_interval_is_seeded_at_the_tfrc_senders_rtt_not_the_echoes_filter() {
        let mut rng = Rng::new(1);
        let mut agg = aggregate(Flowshares::Single, AggregateControl::Tfrc);
        drive(&mut agg, &mut rng, 0, 2000, &[]);
        // Five echoes 10 ms apart, each a 300 ms sample (a queue building up), and no report:
        // the echoes' filter moves to 300 - 200 * 0.9^5 ms, the sender's R (one sample per
        // report, RFC 5348 section 4.3) stays at 100 ms.
        for t in [2000, 2010, 2020, 2030, 2040] {
            agg.stamp(ms(t), 1000);
            assert!(agg.on_echo(
                ms(t),
                Echo {
                    timestamp: timestamp_micros(ms(t - 300)),
                    delay: 0,
                }
            ));
        }
        let echoes_r = agg.rtt().expect("R").as_secs_f64();
        assert!(
            (echoes_r - (0.3 - 0.2 * 0.9f64.powi(5))).abs() < 1e-6,
            "{echoes_r}"
        );
        assert_eq!(agg.receiver_rtt(), Some(Duration::from_millis(RTT_MS)));
        // Packet 195 is reported lost with all others up to 204: the first loss event. X_target
        // is the largest X_recv reported before it.
        let target = agg.x_recv_max;
        assert!((target - 100_000.0).abs() < 100_000.0 * 0.05, "{target}");
        let fb = ApFeedback {
            echo: None,
            report: Some(LossReport {
                through: 204,
                gaps: vec![Gap { start: 195, len: 1 }],
            }),
        };
        agg.on_feedback(ms(2050), &fb, &mut rng);
        assert_eq!(agg.stats().loss_events, 1);
        // RFC 5348 section 6.3.1 at the receiver's R_m, the sender's 100 ms (section 6): the
        // equation at R = 100 ms and the seeded p gives X_target, the largest X_recv.
        let p = agg.loss_event_rate();
        let x = equation::throughput_rfc(1000.0, 0.1, p);
        assert!(
            (x - target).abs() < target * 0.01,
            "{x} vs X_target {target}"
        );
    }

    #[test]
    fn naive_m_flowshares_multiplies_the_rate_by_m() {
        let mut single = aggregate(Flowshares::Single, AggregateControl::Tfrc);
        let mut naive = aggregate(Flowshares::Naive { m: 4 }, AggregateControl::Tfrc);
        let lost = [40, 41, 90, 150];
        for agg in [&mut single, &mut naive] {
            let mut rng = Rng::new(9);
            drive(agg, &mut rng, 0, 3000, &lost);
        }
        assert_eq!(single.loss_event_rate(), naive.loss_event_rate());
        assert!(single.loss_event_rate() > 0.0);
        assert_eq!(single.flowshare_rate(), naive.flowshare_rate());
        assert_eq!(
            naive.available_bandwidth().bps(),
            4 * single.available_bandwidth().bps()
        );
        assert_eq!(
            naive.estimate().available_bandwidth,
            naive.available_bandwidth()
        );
    }

    #[test]
    fn rap_on_the_aggregate_halves_on_a_loss_event() {
        let mut rng = Rng::new(1);
        let mut agg = aggregate(Flowshares::Single, AggregateControl::Rap);
        drive(&mut agg, &mut rng, 0, 1010, &[]);
        // From one packet per second: +1 packet per RTT (10_000 bytes/s) for each of the nine
        // RTTs since the first report at 100 ms.
        let before = agg.flowshare_rate().bytes_per_sec();
        assert!((before - 91_000.0).abs() < 1e-6, "{before}");
        // Packet 95 (sent at 950 ms) is reported lost at 1050 ms, before the next increase.
        drive(&mut agg, &mut rng, 1010, 1100, &[95]);
        let after = agg.flowshare_rate().bytes_per_sec();
        assert!((after - before / 2.0).abs() < 1.0, "{after} vs {before}");
    }

    #[test]
    fn reports_settling_unsent_packets_are_ignored() {
        let mut rng = Rng::new(1);
        let mut agg = aggregate(Flowshares::Single, AggregateControl::Tfrc);
        let bad = ApFeedback {
            echo: None,
            report: Some(LossReport {
                through: 5,
                gaps: vec![],
            }),
        };
        agg.on_feedback(ms(1), &bad, &mut rng);
        agg.stamp(ms(2), 1000);
        agg.on_feedback(ms(3), &bad, &mut rng);
        // An echo of a timestamp from before the first packet, and one with a delay longer
        // than the time since.
        for echo in [
            Echo {
                timestamp: 1_000,
                delay: 0,
            },
            Echo {
                timestamp: 2_000,
                delay: 5_000,
            },
        ] {
            let fb = ApFeedback {
                echo: Some(echo),
                report: None,
            };
            agg.on_feedback(ms(4), &fb, &mut rng);
        }
        assert_eq!(agg.stats().bad_reports, 2);
        assert_eq!(agg.stats().bad_echoes, 2);
        assert_eq!(agg.rtt(), None);
        assert_eq!(agg.history().packets(), 0);
    }
}
