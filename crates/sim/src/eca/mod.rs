//! ECA in the simulator (Barham, "Explicit Congestion Avoidance", MSR-TR-2001-100): the
//! run-time state that [`concord_cc::eca`] asks a simulator to provide (see its module docs).
//!
//! - **Packet fields.** Every packet carries LOAD and RLOAD ([`LoadFields`]), 0 meaning none,
//!   written through the stamping queue's [`concord_cc::eca::LoadEncoding`].
//! - **Router hook.** An output channel with `eca = { ... }` runs a [`LoadEstimator`] on every
//!   packet offered to its queue (dropped or not) and stamps LOAD into it as it enters the queue
//!   (section IV.A.3, step 4: "when it reaches the output Queue of a router, the router's
//!   current load estimate is stamped"). Intervals roll over lazily on arrivals; an idle queue
//!   stamps nothing, so it needs no timer.
//! - **Receiver hook.** A [`Reflector`] keyed by flow records the LOAD of every delivered data
//!   packet; TCP ACKs carry it back as RLOAD (step 8); a UDP flow's sink sends a report every
//!   100 ms, a zero-payload datagram addressed to the flow's source (section V.A.3).
//! - **Host shaper.** A managed flow's packets wait in a [`WtpShaper`] at its source host and
//!   leave at w_i / RLOAD with a 16 KB bucket (section III.A.3); one-way delay is measured from
//!   the moment a packet leaves the host. Priority flows bypass WTP, admitted by peak rate
//!   (section III.B.1).

use crate::packet::{FlowId, Packet};
use crate::scenario::EcaQueueSpec;
use concord_cc::eca::{
    LoadEncoding, LoadEstimator, LoadEstimatorConfig, PriorityAdmission, Reflector, WtpShaper,
};
use concord_cc::time::Instant;
use concord_cc::units::Rate;

/// A packet's LOAD and RLOAD, each an `f64` kept as its bits so that packets stay `Eq`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct LoadFields {
    load: u64,
    rload: u64,
}

impl LoadFields {
    /// LOAD (0: none).
    pub fn load(&self) -> f64 {
        f64::from_bits(self.load)
    }

    /// RLOAD (0: none).
    pub fn rload(&self) -> f64 {
        f64::from_bits(self.rload)
    }

    /// Writes LOAD.
    pub fn set_load(&mut self, load: f64) {
        self.load = load.to_bits();
    }

    /// Writes RLOAD.
    pub fn set_rload(&mut self, rload: f64) {
        self.rload = rload.to_bits();
    }
}

/// An ECA timer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EcaTimer {
    /// Flow `f`'s shaper may release its head packet.
    Shaper(FlowId),
    /// The receivers' out-of-band load reports are due.
    Report,
}

/// The router part of one channel.
#[derive(Clone, Debug)]
pub struct QueueEca {
    /// The load estimator.
    pub estimator: LoadEstimator,
    /// How LOAD is written.
    pub encoding: LoadEncoding,
}

/// What a flow's source host runs for it.
#[derive(Debug)]
pub enum HostEca {
    /// A WTP shaper and its host queue.
    Managed {
        /// The shaper.
        shaper: Box<WtpShaper<Packet>>,
        /// The instant of the pending wake-up event, if any.
        armed: Option<Instant>,
        /// Packets dropped because the host queue was full.
        drops: u64,
    },
    /// An admitted high-priority flow: sent unshaped.
    Priority,
    /// A high-priority flow refused by admission control: its packets are not sent.
    Refused {
        /// Packets held back.
        drops: u64,
    },
}

impl QueueEca {
    /// The router part of a channel of `rate` with ECA settings `spec`, starting at `now`;
    /// `None` if the estimator refuses the configuration (the loader checked the values, so
    /// the queue then runs without ECA rather than stopping the run).
    pub fn new(spec: &EcaQueueSpec, rate: Rate, now: Instant) -> Option<QueueEca> {
        let mut config = LoadEstimatorConfig::new(rate);
        config.target_utilisation = spec.target;
        config.interval = spec.interval;
        config.increase = spec.up;
        config.decrease = spec.down;
        config.combine = spec.combine;
        LoadEstimator::new(config, now)
            .ok()
            .map(|estimator| QueueEca {
                estimator,
                encoding: spec.encoding,
            })
    }

    /// `pkt` is offered to the queue at `now`: the estimator counts it and LOAD is stamped
    /// into it (section IV.A.3, steps 4 and 5).
    #[inline]
    pub fn stamp(&mut self, now: Instant, pkt: &mut Packet) {
        self.estimator.on_arrival(now, u64::from(pkt.size));
        let load = self.encoding.quantise(self.estimator.stamp(pkt.eca.load()));
        pkt.eca.set_load(load);
    }
}

/// An ECA queue: the load estimator in front of the channel's discipline.
#[derive(Clone, Debug)]
pub struct EcaQueue {
    /// The estimator and its encoding.
    pub eca: QueueEca,
    /// The discipline behind it.
    pub inner: crate::queue_disc::QueueDisc,
}

/// ECA's run-time state in a simulator.
#[derive(Debug, Default)]
pub struct EcaState {
    /// True if some channel's queue runs ECA (its estimator lives in the channel's discipline).
    pub has_queues: bool,
    /// Per flow: its source host's part, if the flow is under ECA.
    pub hosts: Vec<Option<HostEca>>,
    /// The receivers' reflector, keyed by flow.
    pub reflector: Option<Reflector<FlowId>>,
    /// Per source host: admission of its priority flows.
    pub admission: Vec<Option<PriorityAdmission<FlowId>>>,
    /// The instant of the pending report event, if any.
    pub report_armed: Option<Instant>,
    /// Out-of-band reports sent.
    pub reports_sent: u64,
    /// RLOAD values applied at sources.
    pub rloads_applied: u64,
}

impl EcaState {
    /// True if any queue or flow runs ECA.
    pub fn active(&self) -> bool {
        self.has_queues || self.hosts.iter().any(Option::is_some)
    }

    /// Packets the host dropped for flow `f` (full WTP queue, or refused admission).
    pub fn host_drops(&self, f: usize) -> u64 {
        match self.hosts.get(f) {
            Some(Some(HostEca::Managed { drops, .. } | HostEca::Refused { drops })) => *drops,
            _ => 0,
        }
    }
}
