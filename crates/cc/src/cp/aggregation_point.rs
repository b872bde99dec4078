//! The aggregation point (AP, slides Fig. 2): the box at the edge of a cluster through which
//! every packet of a C-to-C application passes, in both directions.
//!
//! An aggregation point is *local* for the aggregates its cluster sends and *remote* for those
//! it receives; each application has both roles here ([`Aggregate`] and [`LossReporter`]).
//! The four steps of the slides' "basic operation of CP" (Fig. 3):
//!
//! 1. A source endpoint puts a CP header with the application and flow ids on its packet
//!    (C-UDP or C-TCP, [`endpoint`](super::endpoint)).
//! 2. At the local AP, [`AggregationPoint::on_outbound`] stamps the probe (sequence number,
//!    timestamp) and piggy-backs this AP's feedback about the application's reverse aggregate
//!    (timestamp echo with echo delay, loss report).
//! 3. At the remote AP, [`AggregationPoint::on_inbound`] takes the probe (for its echo and its
//!    loss detection) and the piggy-backed feedback (RTT and losses of its own aggregate), and
//!    replaces them with the feedback to the destination endpoint: the bandwidth available to
//!    the application's aggregate leaving this cluster, its loss rate and RTT.
//! 4. The destination endpoint reads that feedback (and, as a source, follows it).
//!
//! Without reverse traffic the remote AP sends the feedback alone, in control messages
//! ([`AggregationPoint::poll_feedback`]). Endpoints also learn the estimate from
//! [`AggregationPoint::poll_event`] or the queries ([`AggregationPoint::available_bandwidth`]),
//! for a host that delivers it to them directly. The application splits the available
//! bandwidth among its flows as it likes ([`split`](super::split) has the equal and weighted
//! splits).
//!
//! Sans-IO: every call takes `now`; the host calls [`AggregationPoint::poll_feedback`] and
//! [`AggregationPoint::handle_timeout`] when [`AggregationPoint::poll_timeout`] says so.

use super::aggregate::{Aggregate, AggregateStats, AppConfig, AppConfigError};
use super::flowshare::Flowshares;
use super::header::{ApFeedback, CpHeader, EndpointFeedback};
use super::loss_reporter::{LossReporter, ReporterStats};
use crate::rng::Rng;
use crate::time::{Duration, Instant};
use crate::units::{Bytes, Rate};
use std::collections::BTreeMap;

/// An aggregation point's parameters.
#[derive(Clone, Debug, PartialEq)]
pub struct ApConfig {
    /// The configuration of applications not registered with
    /// [`AggregationPoint::add_application`], created on their first packet.
    pub default_app: AppConfig,
    /// How long feedback for the other AP waits for reverse traffic before it leaves alone in
    /// a control message (25 ms: four reports per 100 ms RTT).
    pub feedback_interval: Duration,
    /// The most applications this AP keeps state for; packets of further applications pass
    /// unmanaged (1024).
    pub max_applications: usize,
}

impl Default for ApConfig {
    fn default() -> Self {
        ApConfig {
            default_app: AppConfig::default(),
            feedback_interval: Duration::from_millis(25),
            max_applications: 1024,
        }
    }
}

/// Why an aggregation point cannot be built or an application added.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum ApConfigError {
    /// An application's configuration is impossible.
    #[error(transparent)]
    App(#[from] AppConfigError),
    /// The feedback interval is zero.
    #[error("feedback_interval is 0; give the time feedback may wait for reverse traffic")]
    ZeroFeedbackInterval,
    /// `max_applications` is zero.
    #[error("max_applications is 0; an aggregation point serves at least one application")]
    ZeroApplications,
    /// The application already has state here.
    #[error("application {0} is already known to this aggregation point")]
    AlreadyRegistered(u32),
    /// The AP keeps state for `max_applications` already.
    #[error("this aggregation point already serves its maximum of {0} applications")]
    TooManyApplications(usize),
}

/// What [`AggregationPoint::on_outbound`] did with a packet leaving the cluster.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outbound {
    /// Stamped as packet `seq` of its application's aggregate; forward it.
    Stamped {
        /// The 64-bit sequence number (the header carries its low 32 bits).
        seq: u64,
    },
    /// The AP keeps no state for its application (too many applications); forwarded as it is.
    Unmanaged,
    /// A control message from an endpoint: not part of any aggregate; drop it.
    Rejected,
}

/// What [`AggregationPoint::on_inbound`] did with a packet entering the cluster.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Inbound {
    /// Deliver it to its endpoint; the header now carries the endpoint feedback.
    Deliver,
    /// A control message for this AP, taken; nothing to deliver.
    Consumed,
    /// The AP keeps no state for its application; delivered as it is.
    Unmanaged,
}

/// News for the endpoints of this cluster.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum ApEvent {
    /// The estimate for application `app` changed.
    Estimate {
        /// The application.
        app: u32,
        /// Its new estimate.
        estimate: EndpointFeedback,
    },
}

/// Everything an AP knows about one application, for tables and tests.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct AppStatus {
    /// How many flowshares, and how.
    pub flowshares: Flowshares,
    /// The rate of one flowshare (B_avail of BFLD).
    pub flowshare_rate: Rate,
    /// The bandwidth available to the application (m flowshares).
    pub available_bandwidth: Rate,
    /// The smoothed RTT between the APs.
    pub rtt: Option<Duration>,
    /// The latest RTT sample.
    pub latest_rtt: Option<Duration>,
    /// The aggregate's packet loss fraction.
    pub loss_rate: f64,
    /// The loss event rate driving the controller (of the virtual stream with BFLD).
    pub loss_event_rate: f64,
    /// B_arriv.
    pub arrival_rate: Option<Rate>,
    /// F = B_avail / B_arriv now (applied only with BFLD).
    pub sampling_fraction: f64,
    /// Packet events offered to and kept by BFLD's sampler.
    pub bfld_offered_kept: (u64, u64),
    /// The local role's counters.
    pub aggregate: AggregateStats,
    /// The remote role's counters.
    pub reporter: ReporterStats,
}

/// An aggregation point's own counters.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ApStats {
    /// Packets stamped on the way out.
    pub stamped: u64,
    /// Packets delivered inwards.
    pub delivered: u64,
    /// Control messages sent to other APs.
    pub control_sent: u64,
    /// Control messages taken from other APs.
    pub control_received: u64,
    /// Packets passed unmanaged.
    pub unmanaged: u64,
    /// Outbound control messages from endpoints, rejected.
    pub rejected: u64,
}

/// Both roles for one application.
#[derive(Clone, Debug)]
struct Application {
    /// Its configuration.
    config: AppConfig,
    /// The local role; created with the first packet out (or on registration).
    aggregate: Option<Aggregate>,
    /// The remote role.
    reporter: LossReporter,
    /// The estimate last published as an event.
    published: Option<EndpointFeedback>,
}

/// An aggregation point.
#[derive(Clone, Debug)]
pub struct AggregationPoint {
    /// The parameters.
    config: ApConfig,
    /// Per application, by id.
    apps: BTreeMap<u32, Application>,
    /// BFLD's draws, for every application.
    rng: Rng,
    /// Estimates not yet polled, by application (only the latest for each).
    events: BTreeMap<u32, EndpointFeedback>,
    /// Counters.
    stats: ApStats,
}

impl AggregationPoint {
    /// An aggregation point with no application yet, drawing BFLD's random numbers from `rng`.
    pub fn new(config: ApConfig, rng: Rng) -> Result<AggregationPoint, ApConfigError> {
        config.default_app.validate()?;
        if config.feedback_interval.is_zero() {
            return Err(ApConfigError::ZeroFeedbackInterval);
        }
        if config.max_applications == 0 {
            return Err(ApConfigError::ZeroApplications);
        }
        Ok(AggregationPoint {
            config,
            apps: BTreeMap::new(),
            rng,
            events: BTreeMap::new(),
            stats: ApStats::default(),
        })
    }

    /// Registers application `app` with its own configuration; its controller starts at `now`
    /// (so the available bandwidth is the controller's initial rate before the first packet).
    pub fn add_application(
        &mut self,
        now: Instant,
        app: u32,
        config: AppConfig,
    ) -> Result<(), ApConfigError> {
        if self.apps.contains_key(&app) {
            return Err(ApConfigError::AlreadyRegistered(app));
        }
        if self.apps.len() >= self.config.max_applications {
            return Err(ApConfigError::TooManyApplications(
                self.config.max_applications,
            ));
        }
        let aggregate = Aggregate::new(&config, now)?;
        self.apps.insert(
            app,
            Application {
                config,
                aggregate: Some(aggregate),
                reporter: LossReporter::new(self.config.feedback_interval),
                published: None,
            },
        );
        Ok(())
    }

    /// The state of application `app`, created with the default configuration if there is
    /// room.
    fn application<'a>(
        apps: &'a mut BTreeMap<u32, Application>,
        config: &ApConfig,
        app: u32,
    ) -> Option<&'a mut Application> {
        if !apps.contains_key(&app) && apps.len() >= config.max_applications {
            return None;
        }
        Some(apps.entry(app).or_insert_with(|| Application {
            config: config.default_app.clone(),
            aggregate: None,
            reporter: LossReporter::new(config.feedback_interval),
            published: None,
        }))
    }

    /// A packet of `size` bytes with CP header `header` leaves the cluster at `now` (step 2 of
    /// the module documentation). The header gets the probe and this AP's feedback for the
    /// other AP; any endpoint feedback on it is removed.
    pub fn on_outbound(&mut self, now: Instant, header: &mut CpHeader, size: Bytes) -> Outbound {
        if header.control {
            self.stats.rejected = self.stats.rejected.saturating_add(1);
            return Outbound::Rejected;
        }
        let Some(a) = Self::application(&mut self.apps, &self.config, header.app) else {
            self.stats.unmanaged = self.stats.unmanaged.saturating_add(1);
            return Outbound::Unmanaged;
        };
        let aggregate = match &mut a.aggregate {
            Some(g) => g,
            slot @ None => match Aggregate::new(&a.config, now) {
                Ok(g) => slot.insert(g),
                // The configuration was checked when it was given; this does not happen.
                Err(_) => {
                    self.stats.unmanaged = self.stats.unmanaged.saturating_add(1);
                    return Outbound::Unmanaged;
                }
            },
        };
        let seq = aggregate.stats().stamped;
        header.probe = Some(aggregate.stamp(now, size));
        header.feedback = a.reporter.feedback(now);
        header.endpoint = None;
        self.stats.stamped = self.stats.stamped.saturating_add(1);
        Outbound::Stamped { seq }
    }

    /// A packet with CP header `header` enters the cluster at `now` (step 3 of the module
    /// documentation): its feedback drives this AP's aggregate, its probe feeds the echo and
    /// the loss detection. A data packet's header is rewritten for the endpoint: the probe and
    /// feedback removed, this AP's estimate for the application put in.
    pub fn on_inbound(&mut self, now: Instant, header: &mut CpHeader) -> Inbound {
        let Some(a) = Self::application(&mut self.apps, &self.config, header.app) else {
            self.stats.unmanaged = self.stats.unmanaged.saturating_add(1);
            return Inbound::Unmanaged;
        };
        if !header.feedback.is_empty() {
            if let Some(g) = a.aggregate.as_mut() {
                g.on_feedback(now, &header.feedback, &mut self.rng);
            }
        }
        if let Some(probe) = header.probe {
            a.reporter.on_probe(now, probe);
        }
        Self::publish(&mut self.events, header.app, a);
        if header.control {
            self.stats.control_received = self.stats.control_received.saturating_add(1);
            return Inbound::Consumed;
        }
        header.probe = None;
        header.feedback = ApFeedback::default();
        header.endpoint = a.aggregate.as_ref().map(Aggregate::estimate);
        self.stats.delivered = self.stats.delivered.saturating_add(1);
        Inbound::Deliver
    }

    /// Queues an estimate event for `app` if its estimate changed since the last one.
    fn publish(events: &mut BTreeMap<u32, EndpointFeedback>, app: u32, a: &mut Application) {
        let Some(estimate) = a.aggregate.as_ref().map(Aggregate::estimate) else {
            return;
        };
        if a.published != Some(estimate) {
            a.published = Some(estimate);
            events.insert(app, estimate);
        }
    }

    /// The next control message due at `now` for another AP: feedback that waited the feedback
    /// interval for reverse traffic. Call until `None`.
    pub fn poll_feedback(&mut self, now: Instant) -> Option<CpHeader> {
        for (&app, a) in self.apps.iter_mut() {
            if a.reporter.poll_timeout().is_some_and(|t| t <= now) {
                let feedback = a.reporter.feedback(now);
                if feedback.is_empty() {
                    continue;
                }
                self.stats.control_sent = self.stats.control_sent.saturating_add(1);
                return Some(CpHeader {
                    app,
                    flow: 0,
                    control: true,
                    probe: None,
                    feedback,
                    endpoint: None,
                });
            }
        }
        None
    }

    /// When [`poll_feedback`](Self::poll_feedback) or
    /// [`handle_timeout`](Self::handle_timeout) must next be called; `None` when idle.
    pub fn poll_timeout(&self) -> Option<Instant> {
        self.apps
            .values()
            .flat_map(|a| {
                let controller = a.aggregate.as_ref().map(Aggregate::poll_timeout);
                [a.reporter.poll_timeout(), controller]
            })
            .flatten()
            .min()
    }

    /// Runs the controllers' nofeedback timers that are due at `now`.
    pub fn handle_timeout(&mut self, now: Instant) {
        for (&app, a) in self.apps.iter_mut() {
            if let Some(g) = a.aggregate.as_mut() {
                if g.poll_timeout() <= now {
                    g.handle_timeout(now);
                    Self::publish(&mut self.events, app, a);
                }
            }
        }
    }

    /// The next estimate change for the endpoints, lowest application id first.
    pub fn poll_event(&mut self) -> Option<ApEvent> {
        self.events
            .pop_first()
            .map(|(app, estimate)| ApEvent::Estimate { app, estimate })
    }

    /// The bandwidth available to application `app`'s aggregate leaving this cluster (zero for
    /// an application that has sent nothing through this AP).
    pub fn available_bandwidth(&self, app: u32) -> Rate {
        self.aggregate(app)
            .map_or(Rate::ZERO, Aggregate::available_bandwidth)
    }

    /// What the endpoints of application `app` are told.
    pub fn estimate(&self, app: u32) -> Option<EndpointFeedback> {
        self.aggregate(app).map(Aggregate::estimate)
    }

    /// The aggregate loss rate of application `app`.
    pub fn loss_rate(&self, app: u32) -> Option<f64> {
        self.aggregate(app).map(Aggregate::loss_rate)
    }

    /// The RTT of application `app`'s aggregate between the APs.
    pub fn rtt(&self, app: u32) -> Option<Duration> {
        self.aggregate(app).and_then(Aggregate::rtt)
    }

    /// Everything known about application `app`.
    pub fn status(&self, app: u32) -> Option<AppStatus> {
        let a = self.apps.get(&app)?;
        let g = a.aggregate.as_ref()?;
        let sampler = g.filter().sampler();
        Some(AppStatus {
            flowshares: g.config().flowshares,
            flowshare_rate: g.flowshare_rate(),
            available_bandwidth: g.available_bandwidth(),
            rtt: g.rtt(),
            latest_rtt: g.latest_rtt(),
            loss_rate: g.loss_rate(),
            loss_event_rate: g.loss_event_rate(),
            arrival_rate: g.arrival_rate(),
            sampling_fraction: g.sampling_fraction(),
            bfld_offered_kept: (sampler.offered(), sampler.kept()),
            aggregate: g.stats(),
            reporter: a.reporter.stats(),
        })
    }

    /// The local role for `app`.
    fn aggregate(&self, app: u32) -> Option<&Aggregate> {
        self.apps.get(&app)?.aggregate.as_ref()
    }

    /// Counters.
    pub fn stats(&self) -> ApStats {
        self.stats
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cp::header::{Echo, Gap, LossReport};

    fn us(u: u64) -> Instant {
        Instant::from_micros(u)
    }

    fn ap() -> AggregationPoint {
        AggregationPoint::new(ApConfig::default(), Rng::new(1)).unwrap_or_else(|e| panic!("{e}"))
    }

    #[test]
    fn the_ap_measures_the_rtt_exactly_from_the_echo_and_its_delay() {
        let (mut a, mut b) = (ap(), ap());
        // A stamps at 1.000000 s; B receives it at 1.050000 s.
        let mut h = CpHeader::new(7, 1);
        assert_eq!(
            a.on_outbound(us(1_000_000), &mut h, 1000),
            Outbound::Stamped { seq: 0 }
        );
        assert_eq!(h.probe.map(|p| (p.seq, p.timestamp)), Some((0, 1_000_000)));
        assert_eq!(b.on_inbound(us(1_050_000), &mut h), Inbound::Deliver);
        // B's endpoint answers; the packet leaves B at 1.070123 s, echoing with delay 20_123 us.
        let mut back = CpHeader::new(7, 1);
        b.on_outbound(us(1_070_123), &mut back, 100);
        assert_eq!(
            back.feedback.echo,
            Some(Echo {
                timestamp: 1_000_000,
                delay: 20_123
            })
        );
        // Back at A at 1.125000 s: RTT = 1_125_000 - 1_000_000 - 20_123 = 104_877 us.
        assert_eq!(a.on_inbound(us(1_125_000), &mut back), Inbound::Deliver);
        assert_eq!(a.rtt(7), Some(Duration::from_micros(104_877)));
        // The endpoint at A reads A's estimate from the delivered header.
        assert_eq!(back.probe, None);
        assert!(back.feedback.is_empty());
        assert_eq!(
            back.endpoint.map(|e| e.rtt),
            Some(Duration::from_micros(104_877))
        );
        assert_eq!(
            a.poll_event(),
            a.estimate(7)
                .map(|estimate| ApEvent::Estimate { app: 7, estimate })
        );
    }

    #[test]
    fn the_rtt_survives_the_wrap_of_the_32_bit_microsecond_clock() {
        let (mut a, mut b) = (ap(), ap());
        let t0 = (1u64 << 32) - 30_000; // 30 ms before the timestamp field wraps
        let mut h = CpHeader::new(1, 1);
        a.on_outbound(us(t0), &mut h, 1000);
        b.on_inbound(us(t0 + 40_000), &mut h);
        let mut back = CpHeader::new(1, 1);
        b.on_outbound(us(t0 + 45_000), &mut back, 100);
        a.on_inbound(us(t0 + 90_000), &mut back);
        assert_eq!(a.rtt(1), Some(Duration::from_micros(85_000)));
    }

    #[test]
    fn losses_in_a_sequence_with_gaps_reach_the_local_ap_in_an_explicit_report() {
        let (mut a, mut b) = (ap(), ap());
        for seq in 0..20u64 {
            let mut h = CpHeader::new(3, 1);
            a.on_outbound(us(1_000 * seq), &mut h, 1000);
            if seq != 3 && seq != 8 {
                b.on_inbound(us(50_000 + 1_000 * seq), &mut h);
            }
        }
        // Data arrived at 50 ms; with no reverse traffic, feedback leaves 25 ms later.
        assert_eq!(b.poll_timeout(), Some(us(75_000)));
        assert_eq!(b.poll_feedback(us(74_999)), None);
        let fb = b.poll_feedback(us(75_000)).unwrap_or_default();
        assert_eq!(b.poll_feedback(us(75_000)), None);
        assert!(fb.control);
        assert_eq!(
            fb.feedback.report,
            Some(LossReport {
                through: 19,
                gaps: vec![Gap { start: 8, len: 1 }, Gap { start: 3, len: 1 }]
            })
        );
        // The wire carries it as bytes.
        let mut bytes = Vec::new();
        assert!(fb.encode(&mut bytes).is_ok());
        let (mut decoded, _) = CpHeader::decode(&bytes).unwrap_or_default();
        assert_eq!(decoded, fb);
        assert_eq!(a.on_inbound(us(125_000), &mut decoded), Inbound::Consumed);
        let status = a.status(3).unwrap_or_else(|| panic!("no status"));
        assert_eq!((status.aggregate.arrived, status.aggregate.lost), (18, 2));
        assert!((status.loss_rate - 0.1).abs() < 1e-12);
        // Both losses lie within one RTT of each other: one loss event (RFC 5348 section 5.2).
        assert_eq!(status.aggregate.loss_events, 1);
        assert_eq!(a.loss_rate(3), Some(status.loss_rate));
        // RTT: the last timestamp (19 ms) held from 69 ms to 75 ms, back at 125 ms.
        assert_eq!(a.rtt(3), Some(Duration::from_millis(100)));
    }

    #[test]
    fn unknown_applications_get_the_default_configuration_up_to_the_limit() {
        let config = ApConfig {
            max_applications: 1,
            ..ApConfig::default()
        };
        let mut a = AggregationPoint::new(config, Rng::new(1)).unwrap_or_else(|e| panic!("{e}"));
        let mut h = CpHeader::new(1, 1);
        assert!(matches!(
            a.on_outbound(us(0), &mut h, 1),
            Outbound::Stamped { .. }
        ));
        let mut other = CpHeader::new(2, 1);
        assert_eq!(a.on_outbound(us(0), &mut other, 1), Outbound::Unmanaged);
        assert_eq!(other, CpHeader::new(2, 1));
        assert_eq!(
            a.add_application(us(0), 2, AppConfig::default()),
            Err(ApConfigError::TooManyApplications(1))
        );
        assert_eq!(
            a.add_application(us(0), 1, AppConfig::default()),
            Err(ApConfigError::AlreadyRegistered(1))
        );
        let mut control = CpHeader {
            control: true,
            ..CpHeader::new(1, 1)
        };
        assert_eq!(a.on_outbound(us(0), &mut control, 1), Outbound::Rejected);
        assert_eq!(a.stats().unmanaged, 1);
    }

    #[test]
    fn impossible_configurations_are_refused() {
        let zero = ApConfig {
            feedback_interval: Duration::ZERO,
            ..ApConfig::default()
        };
        assert_eq!(
            AggregationPoint::new(zero, Rng::new(1)).err(),
            Some(ApConfigError::ZeroFeedbackInterval)
        );
        let mut a = ap();
        let bad = AppConfig {
            flowshares: Flowshares::Bfld { m: 0 },
            ..AppConfig::default()
        };
        assert!(matches!(
            a.add_application(us(0), 1, bad),
            Err(ApConfigError::App(AppConfigError::Flowshares(_)))
        ));
    }
}
