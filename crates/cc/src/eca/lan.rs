//! ECA on a shared LAN segment (sections III.B.3 and V.D).
//!
//! Without routers there is nobody in the path to stamp LOAD. Instead "a single elected machine
//! monitors the load on the Ethernet using a promiscuous socket, and broadcasts RLOAD messages
//! to a well-known UDP port on each machine"; every machine shapes its flows with WTP from
//! those messages (section V.D). The monitor measures the segment with the same estimator as a
//! router ([`super::load_estimator`]), its link rate being the segment's rate.
//!
//! The paper does not describe the election; this one is the simplest that converges:
//!
//! - every host runs a [`LanAgent`] and feeds it every frame it sees on the segment
//!   ([`LanAgent::on_frame`]), so any host can take over with a warm estimate; a follower
//!   also copies each received RLOAD into its estimator;
//! - a host starts [`Role::Listening`]; if no monitor with a lower address than its own has
//!   been heard for [`LanConfig::monitor_timeout`], it becomes [`Role::Monitor`] and
//!   broadcasts every [`LanConfig::broadcast_interval`];
//! - the lowest address wins: a monitor that hears a lower-addressed monitor steps down and
//!   follows it; one that hears a higher-addressed monitor carries on (that one will yield);
//! - a follower whose monitor falls silent for the timeout takes over; if several do at once,
//!   the lowest address wins within one broadcast.
//!
//! Addresses are any ordered `A` (an [`std::net::Ipv4Addr`] or a MAC address as bytes).

use super::error::{valid_load, ConfigError};
use super::load_estimator::{LoadEstimator, LoadEstimatorConfig};
use crate::time::{Duration, Instant};
use crate::units::{Bytes, Rate};

/// The parameters of a [`LanAgent`].
#[derive(Clone, Debug, PartialEq)]
pub struct LanConfig {
    /// The estimator the monitor runs; its link rate is the segment's rate.
    pub estimator: LoadEstimatorConfig,
    /// The period of the monitor's RLOAD broadcasts (the paper gives 100 ms for the
    /// prototype's reflected messages, section V.A.3; the same is used here).
    pub broadcast_interval: Duration,
    /// Silence from the monitor after which a host takes over (not in the paper; default
    /// 500 ms, five broadcasts missed).
    pub monitor_timeout: Duration,
}

impl LanConfig {
    /// The defaults for a segment of `segment_rate`: the paper's estimator, 100 ms broadcasts,
    /// a 500 ms monitor timeout.
    pub fn new(segment_rate: Rate) -> Self {
        LanConfig {
            estimator: LoadEstimatorConfig::new(segment_rate),
            broadcast_interval: Duration::from_millis(100),
            monitor_timeout: Duration::from_millis(500),
        }
    }

    /// Checks every parameter.
    pub fn validate(&self) -> Result<(), ConfigError> {
        self.estimator.validate()?;
        if self.broadcast_interval.is_zero() {
            return Err(ConfigError::Zero {
                name: "broadcast_interval",
            });
        }
        if self.monitor_timeout <= self.broadcast_interval {
            return Err(ConfigError::Inverted {
                low: "monitor_timeout",
                low_value: self.monitor_timeout.as_secs_f64(),
                high: "broadcast_interval",
                high_value: self.broadcast_interval.as_secs_f64(),
            });
        }
        Ok(())
    }
}

/// What a host is doing in the election.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role<A> {
    /// No lower-addressed monitor heard yet; takes over when the timeout runs out.
    Listening,
    /// Measuring the segment and broadcasting RLOAD.
    Monitor,
    /// Following the broadcasts of `monitor`.
    Follower {
        /// The monitor's address.
        monitor: A,
    },
}

/// A monitor's broadcast: its address and the segment's load (section V.D).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LanMessage<A> {
    /// The sending monitor's address.
    pub monitor: A,
    /// The segment's load L: every host's RLOAD.
    pub rload: f64,
}

/// One host's part of LAN-mode ECA: the election, the monitor's estimator and broadcasts, and
/// the RLOAD for the host's own WTP shapers.
#[derive(Clone, Debug)]
pub struct LanAgent<A> {
    /// The parameters.
    config: LanConfig,
    /// This host's address.
    addr: A,
    /// The election state.
    role: Role<A>,
    /// The segment's load, measured from every frame seen.
    estimator: LoadEstimator,
    /// Listening or following: when to take over unless a monitor is heard.
    deadline: Instant,
    /// Monitor: when the next broadcast is due.
    next_broadcast: Instant,
    /// The RLOAD for this host's flows.
    rload: Option<f64>,
}

impl<A: Ord + Copy> LanAgent<A> {
    /// A host with address `addr` joining the segment at `now`, listening. The configuration is
    /// checked first.
    pub fn new(config: LanConfig, addr: A, now: Instant) -> Result<Self, ConfigError> {
        config.validate()?;
        Ok(LanAgent {
            estimator: LoadEstimator::new(config.estimator.clone(), now)?,
            deadline: now + config.monitor_timeout,
            next_broadcast: now,
            config,
            addr,
            role: Role::Listening,
            rload: None,
        })
    }

    /// This host's address.
    pub fn addr(&self) -> A {
        self.addr
    }

    /// The election state.
    pub fn role(&self) -> Role<A> {
        self.role
    }

    /// The RLOAD this host's WTP shapers should use: the monitor's latest broadcast, or the
    /// host's own estimate while it is the monitor; `None` before either exists.
    pub fn rload(&self) -> Option<f64> {
        self.rload
    }

    /// The host's own estimator (the segment's load as this host measures it).
    pub fn estimator(&self) -> &LoadEstimator {
        &self.estimator
    }

    /// A frame of `bytes` was seen on the segment at `now` (promiscuous capture, any sender).
    pub fn on_frame(&mut self, now: Instant, bytes: Bytes) {
        self.estimator.on_arrival(now, bytes);
    }

    /// A monitor's broadcast arrived at `now`. Returns the RLOAD to apply to this host's
    /// shapers if the message is taken, `None` if it is ignored (a losing monitor, this host's
    /// own broadcast, or a load that is not a positive number).
    pub fn on_message(&mut self, now: Instant, msg: &LanMessage<A>) -> Option<f64> {
        let rload = valid_load(msg.rload).ok()?;
        if msg.monitor == self.addr {
            return None;
        }
        let lower = msg.monitor < self.addr;
        match self.role {
            Role::Monitor if !lower => return None,
            Role::Follower { monitor } if msg.monitor > monitor => return None,
            Role::Listening if !lower => {
                // A higher-addressed monitor will yield to us, but its load is still the
                // segment's load.
                return Some(self.take(rload));
            }
            _ => {}
        }
        self.role = Role::Follower {
            monitor: msg.monitor,
        };
        self.deadline = now + self.config.monitor_timeout;
        Some(self.take(rload))
    }

    /// The next instant [`handle_timeout`](Self::handle_timeout) or
    /// [`poll_message`](Self::poll_message) has work: the estimator's interval end, and the
    /// next broadcast (monitor) or the take-over deadline (others).
    pub fn poll_timeout(&self) -> Option<Instant> {
        let own = match self.role {
            Role::Monitor => self.next_broadcast,
            Role::Listening | Role::Follower { .. } => self.deadline,
        };
        Some(match self.estimator.poll_timeout() {
            Some(t) => t.min(own),
            None => own,
        })
    }

    /// Runs the estimator's intervals up to `now` and takes over as monitor if the deadline
    /// has passed.
    pub fn handle_timeout(&mut self, now: Instant) {
        self.estimator.on_tick(now);
        if self.role != Role::Monitor && now >= self.deadline {
            self.role = Role::Monitor;
            self.next_broadcast = now;
        }
    }

    /// The broadcast due at `now`, if this host is the monitor and one is due. The monitor's
    /// own flows take the same RLOAD ([`rload`](Self::rload)).
    pub fn poll_message(&mut self, now: Instant) -> Option<LanMessage<A>> {
        if self.role != Role::Monitor || now < self.next_broadcast {
            return None;
        }
        self.estimator.on_tick(now);
        let load = self.estimator.load();
        self.rload = Some(load);
        let next = self.next_broadcast + self.config.broadcast_interval;
        self.next_broadcast = if next > now {
            next
        } else {
            now + self.config.broadcast_interval
        };
        Some(LanMessage {
            monitor: self.addr,
            rload: load,
        })
    }

    /// Takes a received RLOAD: for the host's flows, and into the estimator so that a
    /// take-over starts from the monitor's value.
    fn take(&mut self, rload: f64) -> f64 {
        self.estimator.set_load(rload);
        self.rload = Some(rload);
        rload
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A shared segment: every broadcast reaches every other live host at once.
    struct Segment {
        agents: Vec<LanAgent<u8>>,
        alive: Vec<bool>,
    }

    impl Segment {
        fn new(addrs: &[u8]) -> Segment {
            let config = LanConfig::new(Rate::from_mbps(10));
            Segment {
                agents: addrs
                    .iter()
                    .map(|&a| LanAgent::new(config.clone(), a, Instant::ZERO).expect("valid"))
                    .collect(),
                alive: vec![true; addrs.len()],
            }
        }

        /// Runs in 1 ms steps up to `until`, `frame` bytes seen by every host each step.
        fn run(&mut self, from: u64, until: u64, frame: Bytes) {
            for ms in from..until {
                let now = Instant::from_millis(ms);
                for i in 0..self.agents.len() {
                    if !self.alive[i] {
                        continue;
                    }
                    if frame > 0 {
                        self.agents[i].on_frame(now, frame);
                    }
                    self.agents[i].handle_timeout(now);
                    while let Some(msg) = self.agents[i].poll_message(now) {
                        for j in 0..self.agents.len() {
                            if j != i && self.alive[j] {
                                self.agents[j].on_message(now, &msg);
                            }
                        }
                    }
                }
            }
        }

        fn roles(&self) -> Vec<Role<u8>> {
            self.agents.iter().map(|a| a.role()).collect()
        }
    }

    #[test]
    fn the_lowest_address_becomes_the_monitor_and_the_others_follow_it() {
        // Listed highest first, so that 3 and then 2 take over before 1 and must step down.
        let mut seg = Segment::new(&[3, 2, 1]);
        seg.run(0, 499, 0);
        assert_eq!(seg.roles(), vec![Role::Listening; 3]);
        seg.run(499, 600, 0);
        assert_eq!(
            seg.roles(),
            vec![
                Role::Follower { monitor: 1 },
                Role::Follower { monitor: 1 },
                Role::Monitor
            ]
        );
    }

    #[test]
    fn when_the_monitor_falls_silent_the_next_lowest_address_takes_over() {
        let mut seg = Segment::new(&[3, 2, 1]);
        seg.run(0, 2_000, 0);
        assert_eq!(seg.agents[2].role(), Role::Monitor);
        seg.alive[2] = false;
        // Its last broadcast was at 1.9 s: the others take over at 2.4 s.
        seg.run(2_000, 2_399, 0);
        assert_eq!(seg.agents[1].role(), Role::Follower { monitor: 1 });
        seg.run(2_399, 2_500, 0);
        assert_eq!(
            &seg.roles()[..2],
            &[Role::Follower { monitor: 2 }, Role::Monitor]
        );
    }

    #[test]
    fn every_host_applies_the_load_the_monitor_measures() {
        let mut seg = Segment::new(&[2, 1]);
        seg.run(0, 1_000, 0);
        let idle = seg.agents[1].rload().expect("monitor has a load");
        assert!(idle < 1.0);
        // 2000 bytes per ms is 16 Mbit/s on a 10 Mbit/s segment: L climbs.
        seg.run(1_000, 3_000, 2_000);
        let monitor = &seg.agents[1];
        let follower = &seg.agents[0];
        assert!(monitor.estimator().load() > idle * 1.5);
        assert_eq!(follower.rload(), monitor.rload());
    }

    #[test]
    fn a_malformed_or_own_broadcast_is_ignored() {
        let config = LanConfig::new(Rate::from_mbps(10));
        let mut a = LanAgent::new(config, 5u8, Instant::ZERO).expect("valid");
        let bad = LanMessage {
            monitor: 1,
            rload: f64::NAN,
        };
        assert_eq!(a.on_message(Instant::ZERO, &bad), None);
        let own = LanMessage {
            monitor: 5,
            rload: 2.0,
        };
        assert_eq!(a.on_message(Instant::ZERO, &own), None);
        assert_eq!(a.role(), Role::Listening);
        let good = LanMessage {
            monitor: 1,
            rload: 2.0,
        };
        assert_eq!(a.on_message(Instant::ZERO, &good), Some(2.0));
        assert_eq!(a.role(), Role::Follower { monitor: 1 });
        assert_eq!(a.estimator().load(), 2.0);
    }
}
