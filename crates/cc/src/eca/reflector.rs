//! The receiver's half of ECA: record the LOAD of each flow's packets, hand it back as RLOAD
//! (section III.A.1 and the feedback loop of section IV.A.3, steps 6 and 8).
//!
//! "When a packet reaches its destination, this information is recorded and periodically
//! returned to the source in the RLOAD field of any packet traveling in the opposite
//! direction" (section III.A.1). Two return paths:
//!
//! - [`Reflection::Piggyback`]: the ns-2 implementation stamps the most recently recorded LOAD
//!   into the RLOAD field of every packet (a TCP ACK) leaving toward the source; the caller
//!   asks [`Reflector::rload`] for it as each such packet leaves.
//! - [`Reflection::OutOfBand`]: for flows with no back channel, the prototype's receiver
//!   process "periodically (currently every 100ms) sends the most recent observation" to a
//!   well-known UDP port on the source (section V.A.3); [`Reflector::poll_message`] produces
//!   those reports at [`Reflector::poll_timeout`].
//!
//! Flows are keyed by any ordered `K` the caller picks: a 5-tuple for per-flow reports, or the
//! source address to send one report per source machine as the prototype does. Ordered keys
//! make the report order deterministic. A flow not heard from for
//! [`ReflectorConfig::flow_timeout`] is forgotten, so the table is bounded by the live flows.

use super::error::{valid_load, ConfigError, InvalidLoad};
use crate::time::{Duration, Instant};
use std::collections::{BTreeMap, VecDeque};

/// How a flow's RLOAD gets back to its source.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Reflection {
    /// In the RLOAD field of the packets travelling back (section IV.A.3, step 8).
    #[default]
    Piggyback,
    /// In a periodic load report of its own (section V.A.3).
    OutOfBand,
}

/// The parameters of a [`Reflector`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ReflectorConfig {
    /// The period of out-of-band reports (section V.A.3: 100 ms).
    pub report_interval: Duration,
    /// A flow whose packets stopped this long ago is forgotten (not in the paper; default 1 s,
    /// ten report periods).
    pub flow_timeout: Duration,
}

impl Default for ReflectorConfig {
    fn default() -> Self {
        ReflectorConfig {
            report_interval: Duration::from_millis(100),
            flow_timeout: Duration::from_secs(1),
        }
    }
}

impl ReflectorConfig {
    /// Checks every parameter.
    pub fn validate(&self) -> Result<(), ConfigError> {
        if self.report_interval.is_zero() {
            return Err(ConfigError::Zero {
                name: "report_interval",
            });
        }
        if self.flow_timeout.is_zero() {
            return Err(ConfigError::Zero {
                name: "flow_timeout",
            });
        }
        Ok(())
    }
}

/// An out-of-band load report for the source of `flow` (section V.A.3).
#[derive(Clone, Debug, PartialEq)]
pub struct LoadReport<K> {
    /// The flow (or source) the report is for.
    pub flow: K,
    /// The most recent LOAD recorded for it: the source's RLOAD.
    pub rload: f64,
}

/// What the reflector knows about one flow.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Recorded {
    /// The latest LOAD seen.
    load: f64,
    /// When it was seen.
    seen: Instant,
    /// How it goes back.
    reflection: Reflection,
}

/// The receiver's load reflector for all flows arriving at one host.
#[derive(Clone, Debug)]
pub struct Reflector<K> {
    /// The parameters.
    config: ReflectorConfig,
    /// The latest LOAD per flow.
    flows: BTreeMap<K, Recorded>,
    /// The phase of the report ticks.
    origin: Instant,
    /// The next report tick.
    next_report: Instant,
    /// Reports of the last tick not yet handed out.
    pending: VecDeque<LoadReport<K>>,
}

impl<K: Ord + Clone> Reflector<K> {
    /// A reflector whose report ticks fall at `now` + k * report_interval.
    pub fn new(config: ReflectorConfig, now: Instant) -> Result<Self, ConfigError> {
        config.validate()?;
        Ok(Reflector {
            next_report: now + config.report_interval,
            origin: now,
            config,
            flows: BTreeMap::new(),
            pending: VecDeque::new(),
        })
    }

    /// A packet of `flow` arrived at `now` carrying `load` in its LOAD field (step 6 of
    /// section IV.A.3). A zero, negative or non-finite LOAD carries no information and is
    /// refused, leaving the flow's record as it was.
    pub fn on_load(
        &mut self,
        now: Instant,
        flow: K,
        load: f64,
        reflection: Reflection,
    ) -> Result<(), InvalidLoad> {
        let load = valid_load(load)?;
        if reflection == Reflection::OutOfBand && !self.has_out_of_band() {
            // The report timer was idle: its next tick is the first one at or after now.
            self.next_report = self.first_tick_at_or_after(now);
        }
        self.flows.insert(
            flow,
            Recorded {
                load,
                seen: now,
                reflection,
            },
        );
        Ok(())
    }

    /// The RLOAD to stamp on a packet leaving toward the source of `flow` at `now` (step 8 of
    /// section IV.A.3): the latest LOAD recorded, or `None` if there is none or it is older
    /// than the flow timeout.
    pub fn rload(&self, now: Instant, flow: &K) -> Option<f64> {
        self.flows
            .get(flow)
            .filter(|r| now.saturating_since(r.seen) <= self.config.flow_timeout)
            .map(|r| r.load)
    }

    /// The next report tick, if any flow needs out-of-band reports (or reports are waiting).
    pub fn poll_timeout(&self) -> Option<Instant> {
        if !self.pending.is_empty() || self.has_out_of_band() {
            Some(self.next_report)
        } else {
            None
        }
    }

    /// The next out-of-band report due at `now`, one per call; `None` when all are out. At
    /// each tick every live out-of-band flow gets one report with its latest LOAD.
    pub fn poll_message(&mut self, now: Instant) -> Option<LoadReport<K>> {
        if let Some(report) = self.pending.pop_front() {
            return Some(report);
        }
        if now < self.next_report {
            return None;
        }
        self.expire(now);
        self.pending.extend(
            self.flows
                .iter()
                .filter(|(_, r)| r.reflection == Reflection::OutOfBand)
                .map(|(flow, r)| LoadReport {
                    flow: flow.clone(),
                    rload: r.load,
                }),
        );
        self.next_report = self.first_tick_at_or_after(now + Duration::from_nanos(1));
        self.pending.pop_front()
    }

    /// Forgets every flow not heard from for the flow timeout.
    pub fn expire(&mut self, now: Instant) {
        let timeout = self.config.flow_timeout;
        self.flows
            .retain(|_, r| now.saturating_since(r.seen) <= timeout);
    }

    /// The number of flows remembered.
    pub fn len(&self) -> usize {
        self.flows.len()
    }

    /// True when no flow is remembered.
    pub fn is_empty(&self) -> bool {
        self.flows.is_empty()
    }

    /// True if some remembered flow is reflected out of band.
    fn has_out_of_band(&self) -> bool {
        self.flows
            .values()
            .any(|r| r.reflection == Reflection::OutOfBand)
    }

    /// The first report tick at or after `t`.
    fn first_tick_at_or_after(&self, t: Instant) -> Instant {
        let period = self.config.report_interval.as_nanos();
        let since = t.saturating_since(self.origin).as_nanos();
        let ticks = since.div_ceil(period);
        self.origin + Duration::from_nanos(ticks.saturating_mul(period))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reflector() -> Reflector<u32> {
        Reflector::new(ReflectorConfig::default(), Instant::ZERO).expect("valid")
    }

    #[test]
    fn the_latest_load_of_a_flow_is_reflected_on_the_next_packet_back() {
        let mut r = reflector();
        assert_eq!(r.rload(Instant::ZERO, &1), None);
        r.on_load(Instant::from_millis(1), 1, 1.5, Reflection::Piggyback)
            .expect("valid");
        r.on_load(Instant::from_millis(2), 1, 2.5, Reflection::Piggyback)
            .expect("valid");
        r.on_load(Instant::from_millis(2), 2, 0.5, Reflection::Piggyback)
            .expect("valid");
        assert_eq!(r.rload(Instant::from_millis(3), &1), Some(2.5));
        assert_eq!(r.rload(Instant::from_millis(3), &2), Some(0.5));
        // Piggy-backed flows need no timer.
        assert_eq!(r.poll_timeout(), None);
    }

    #[test]
    fn a_load_that_carries_no_information_changes_nothing() {
        let mut r = reflector();
        r.on_load(Instant::ZERO, 1, 1.5, Reflection::Piggyback)
            .expect("valid");
        assert_eq!(
            r.on_load(Instant::ZERO, 1, 0.0, Reflection::Piggyback),
            Err(InvalidLoad(0.0))
        );
        assert!(r
            .on_load(Instant::ZERO, 1, f64::NAN, Reflection::Piggyback)
            .is_err());
        assert_eq!(r.rload(Instant::ZERO, &1), Some(1.5));
    }

    #[test]
    fn flows_without_a_back_channel_get_a_report_every_100ms() {
        let mut r = reflector();
        r.on_load(Instant::from_millis(30), 7, 1.25, Reflection::OutOfBand)
            .expect("valid");
        r.on_load(Instant::from_millis(40), 3, 0.75, Reflection::OutOfBand)
            .expect("valid");
        r.on_load(Instant::from_millis(40), 5, 9.0, Reflection::Piggyback)
            .expect("valid");
        assert_eq!(r.poll_timeout(), Some(Instant::from_millis(100)));
        assert_eq!(r.poll_message(Instant::from_millis(99)), None);
        let t = Instant::from_millis(100);
        assert_eq!(
            r.poll_message(t),
            Some(LoadReport {
                flow: 3,
                rload: 0.75
            })
        );
        assert_eq!(
            r.poll_message(t),
            Some(LoadReport {
                flow: 7,
                rload: 1.25
            })
        );
        assert_eq!(r.poll_message(t), None);
        assert_eq!(r.poll_timeout(), Some(Instant::from_millis(200)));
        r.on_load(Instant::from_millis(150), 7, 1.5, Reflection::OutOfBand)
            .expect("valid");
        let t = Instant::from_millis(200);
        assert_eq!(r.poll_message(t).map(|m| m.flow), Some(3));
        assert_eq!(r.poll_message(t).map(|m| m.rload), Some(1.5));
    }

    #[test]
    fn silent_flows_are_forgotten_after_the_timeout() {
        let mut r = reflector();
        r.on_load(Instant::ZERO, 1, 2.0, Reflection::OutOfBand)
            .expect("valid");
        assert_eq!(r.rload(Instant::from_secs(1), &1), Some(2.0));
        assert_eq!(r.rload(Instant::from_millis(1001), &1), None);
        assert_eq!(r.poll_message(Instant::from_millis(1100)), None);
        assert!(r.is_empty());
        assert_eq!(r.poll_timeout(), None);
        // A new out-of-band flow restarts the ticks on the original phase.
        r.on_load(Instant::from_millis(5050), 2, 1.0, Reflection::OutOfBand)
            .expect("valid");
        assert_eq!(r.poll_timeout(), Some(Instant::from_millis(5100)));
    }
}
