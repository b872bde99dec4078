//! Exponential aging of the open-loop rate when feedback stops (paper section 2.2.3).
//!
//! The paper: aging "is triggered when the CM does not receive a response to a probe message
//! within a round-trip time. In each subsequent round-trip period starting from this point, the
//! open-loop transmission rate is halved." The period, the "half-life", is the minimum RTT seen
//! rather than the smoothed RTT, because srtt grows with queueing at the onset of congestion and
//! then decays the rate too slowly (Fig. 6). [`AgingPolicy::MeanRtt`] keeps the paper's first
//! choice so that Fig. 6 can be run; [`AgingPolicy::Disabled`] is the paper's second
//! alternative, sending open-loop at the same rate until feedback returns.
//!
//! concord's reading of the timing: the silence clock starts at the first transmission not yet
//! covered by feedback (feedback is expected only for data sent). Feedback counts as missing
//! once the round-trip time has passed with its usual margin, `srtt + 4 rttvar` (RFC 6298
//! section 2, the bound after which TCP declares a segment lost, without its lower and upper
//! clamps), so that an acknowledgment that comes one RTT after the packet, as it should, is not
//! late. The first halving happens at that trigger and one more every half-life after it: with a
//! steady RTT of 100 ms (rttvar 0) and a transmission at T with no feedback, the rate is r until
//! T + 100 ms, r/2 until T + 200 ms, r/4 until T + 300 ms and so on.

use crate::time::{Duration, Instant};
use crate::units::Rate;

/// The most halvings aging applies: 2^-32 of the rate is no rate at all.
pub const MAX_HALVINGS: u32 = 32;

/// The round-trip figures aging works with, from the macroflow's estimator.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RttSummary {
    /// The smoothed RTT (RFC 6298 SRTT).
    pub srtt: Duration,
    /// The RTT variation (RFC 6298 RTTVAR).
    pub rttvar: Duration,
    /// The smallest RTT sample seen.
    pub min_rtt: Duration,
}

/// The half-life of exponential aging.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum AgingPolicy {
    /// Halve every minimum RTT (the paper's choice, section 2.2.3).
    #[default]
    MinRtt,
    /// Halve every smoothed RTT (the paper's first choice, inferior in its Fig. 6).
    MeanRtt,
    /// Never age: keep sending at the last closed-loop rate until feedback returns.
    Disabled,
}

/// The state of exponential aging for one macroflow.
#[derive(Clone, Debug)]
pub struct Aging {
    /// Which RTT is the half-life.
    policy: AgingPolicy,
    /// The first transmission since the last feedback; `None` when nothing awaits feedback.
    waiting_since: Option<Instant>,
    /// Halvings in force, as of the last [`Aging::advance`].
    halvings: u32,
}

impl Aging {
    /// No aging in force, nothing awaiting feedback.
    pub fn new(policy: AgingPolicy) -> Aging {
        Aging {
            policy,
            waiting_since: None,
            halvings: 0,
        }
    }

    /// The half-life policy.
    pub fn policy(&self) -> AgingPolicy {
        self.policy
    }

    /// Data left at `now`: starts the silence clock if it is not running.
    pub fn on_transmit(&mut self, now: Instant) {
        if self.waiting_since.is_none() {
            self.waiting_since = Some(now);
        }
    }

    /// Feedback arrived at `now`: returns the halvings that were in force (for
    /// [`super::aimd::Aimd::on_aged`]) and stops the clock until the next transmission.
    pub fn on_feedback(&mut self, now: Instant, rtt: &RttSummary) -> u32 {
        self.advance(now, rtt);
        let k = self.halvings;
        self.halvings = 0;
        self.waiting_since = None;
        k
    }

    /// The half-life: the minimum RTT or srtt, by policy (at least 1 us).
    fn half_life(&self, rtt: &RttSummary) -> Duration {
        match self.policy {
            AgingPolicy::MeanRtt => rtt.srtt,
            AgingPolicy::MinRtt | AgingPolicy::Disabled => rtt.min_rtt,
        }
        .max(Duration::from_micros(1))
    }

    /// When aging triggers: `srtt + 4 rttvar` after the silence clock started.
    fn trigger(&self, rtt: &RttSummary) -> Option<Instant> {
        match self.policy {
            AgingPolicy::Disabled => None,
            _ => self.waiting_since.map(|t| t + rtt.srtt + rtt.rttvar * 4),
        }
    }

    /// The halvings in force at `now`: none before the trigger, one at it, one more per
    /// half-life after it, at most [`MAX_HALVINGS`].
    pub fn halvings_at(&self, now: Instant, rtt: &RttSummary) -> u32 {
        let Some(t0) = self.trigger(rtt) else {
            return 0;
        };
        if now < t0 {
            return 0;
        }
        let periods = (now - t0).as_nanos() / self.half_life(rtt).as_nanos();
        u32::try_from(periods.saturating_add(1))
            .unwrap_or(MAX_HALVINGS)
            .min(MAX_HALVINGS)
    }

    /// Brings the halvings in force up to `now`; true if they changed.
    pub fn advance(&mut self, now: Instant, rtt: &RttSummary) -> bool {
        let k = self.halvings_at(now, rtt);
        let changed = k != self.halvings;
        self.halvings = k;
        changed
    }

    /// When the next halving is due, if aging can still halve.
    pub fn next_halving(&self, rtt: &RttSummary) -> Option<Instant> {
        let t0 = self.trigger(rtt)?;
        if self.halvings >= MAX_HALVINGS {
            return None;
        }
        Some(t0 + self.half_life(rtt) * u64::from(self.halvings))
    }

    /// The halvings in force as of the last [`Aging::advance`].
    pub fn halvings(&self) -> u32 {
        self.halvings
    }

    /// `rate / 2^halvings`: the open-loop rate.
    pub fn apply(&self, rate: Rate) -> Rate {
        Rate::from_bps(rate.bps().checked_shr(self.halvings).unwrap_or(0))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(n: u64) -> Instant {
        Instant::from_millis(n)
    }

    /// srtt, rttvar and minimum RTT in milliseconds.
    fn rtt(srtt: u64, rttvar: u64, min_rtt: u64) -> RttSummary {
        RttSummary {
            srtt: Duration::from_millis(srtt),
            rttvar: Duration::from_millis(rttvar),
            min_rtt: Duration::from_millis(min_rtt),
        }
    }

    #[test]
    fn with_minimum_rtt_100ms_after_one_rtt_of_silence_the_rate_halves_every_100ms() {
        let mut a = Aging::new(AgingPolicy::MinRtt);
        a.on_transmit(ms(1000));
        let rate = Rate::from_kbps(800);
        let at = |a: &mut Aging, t: u64| {
            a.advance(ms(t), &rtt(100, 0, 100));
            a.apply(rate)
        };
        assert_eq!(at(&mut a, 1099), Rate::from_kbps(800));
        assert_eq!(at(&mut a, 1100), Rate::from_kbps(400));
        assert_eq!(at(&mut a, 1199), Rate::from_kbps(400));
        assert_eq!(at(&mut a, 1200), Rate::from_kbps(200));
        assert_eq!(at(&mut a, 1300), Rate::from_kbps(100));
        assert_eq!(at(&mut a, 1400), Rate::from_kbps(50));
    }

    #[test]
    fn the_half_life_is_the_minimum_rtt_even_when_srtt_is_larger() {
        let mut a = Aging::new(AgingPolicy::MinRtt);
        a.on_transmit(ms(0));
        // srtt 250 ms triggers aging at 250 ms; then a halving every 100 ms.
        assert_eq!(a.next_halving(&rtt(250, 0, 100)), Some(ms(250)));
        assert_eq!(a.halvings_at(ms(249), &rtt(250, 0, 100)), 0);
        assert_eq!(a.halvings_at(ms(250), &rtt(250, 0, 100)), 1);
        assert_eq!(a.halvings_at(ms(350), &rtt(250, 0, 100)), 2);
        assert_eq!(a.halvings_at(ms(450), &rtt(250, 0, 100)), 3);
        a.advance(ms(350), &rtt(250, 0, 100));
        assert_eq!(a.next_halving(&rtt(250, 0, 100)), Some(ms(450)));
    }

    #[test]
    fn an_acknowledgment_one_rtt_late_is_on_time_aging_waits_srtt_plus_four_rttvar() {
        let mut a = Aging::new(AgingPolicy::MinRtt);
        a.on_transmit(ms(0));
        // srtt 100 ms, rttvar 50 ms (one sample): feedback is missing only after 300 ms.
        let r = rtt(100, 50, 100);
        assert_eq!(a.next_halving(&r), Some(ms(300)));
        assert_eq!(
            a.on_feedback(ms(150), &r),
            0,
            "an ACK 150 ms after the packet is on time"
        );
        a.on_transmit(ms(200));
        assert_eq!(a.halvings_at(ms(499), &r), 0);
        assert_eq!(a.halvings_at(ms(500), &r), 1);
        assert_eq!(a.halvings_at(ms(600), &r), 2);
    }

    #[test]
    fn with_the_mean_rtt_option_the_rate_halves_every_srtt() {
        let mut a = Aging::new(AgingPolicy::MeanRtt);
        a.on_transmit(ms(0));
        assert_eq!(a.halvings_at(ms(249), &rtt(250, 0, 100)), 0);
        assert_eq!(a.halvings_at(ms(250), &rtt(250, 0, 100)), 1);
        assert_eq!(a.halvings_at(ms(499), &rtt(250, 0, 100)), 1);
        assert_eq!(a.halvings_at(ms(500), &rtt(250, 0, 100)), 2);
        assert_eq!(a.halvings_at(ms(750), &rtt(250, 0, 100)), 3);
    }

    #[test]
    fn feedback_stops_the_clock_and_reports_the_halvings_in_force() {
        let mut a = Aging::new(AgingPolicy::MinRtt);
        a.on_transmit(ms(0));
        a.on_transmit(ms(50));
        assert_eq!(a.on_feedback(ms(320), &rtt(100, 0, 100)), 3);
        assert_eq!(a.halvings(), 0);
        assert_eq!(
            a.next_halving(&rtt(100, 0, 100)),
            None,
            "nothing awaits feedback"
        );
        a.on_transmit(ms(400));
        assert_eq!(a.next_halving(&rtt(100, 0, 100)), Some(ms(500)));
    }

    #[test]
    fn an_idle_macroflow_does_not_age() {
        let mut a = Aging::new(AgingPolicy::MinRtt);
        assert!(!a.advance(ms(10_000), &rtt(100, 0, 100)));
        assert_eq!(a.halvings(), 0);
    }

    #[test]
    fn disabled_aging_keeps_the_rate() {
        let mut a = Aging::new(AgingPolicy::Disabled);
        a.on_transmit(ms(0));
        a.advance(ms(10_000), &rtt(100, 0, 100));
        assert_eq!(a.apply(Rate::from_kbps(800)), Rate::from_kbps(800));
        assert_eq!(a.next_halving(&rtt(100, 0, 100)), None);
    }

    #[test]
    fn aging_stops_after_the_last_halving() {
        let mut a = Aging::new(AgingPolicy::MinRtt);
        a.on_transmit(ms(0));
        a.advance(Instant::MAX, &rtt(100, 0, 100));
        assert_eq!(a.halvings(), MAX_HALVINGS);
        assert_eq!(a.next_halving(&rtt(100, 0, 100)), None);
        assert_eq!(a.apply(Rate::from_kbps(800)), Rate::ZERO);
    }
}
