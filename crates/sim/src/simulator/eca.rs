//! The simulator's ECA hooks (Barham, section IV.A.3, steps 1 to 9): stamping LOAD at ECA
//! queues, reflecting it at receivers, applying RLOAD at sources and pacing managed flows
//! through their WTP shapers. The state lives in [`crate::eca`]; see its docs for the model.

use super::stages::StageTimer;
use super::{Event, Simulator};
use crate::eca::{EcaState, EcaTimer, HostEca};
use crate::flow::Agent;
use crate::packet::{FlowId, NodeId, Packet, Transport};
use crate::scenario::{EcaFlowSpec, Scenario};
use crate::trace::capture::CaptureError;
use concord_cc::eca::{
    PriorityAdmission, Reflection, Reflector, ReflectorConfig, WtpConfig, WtpShaper,
};
use concord_cc::time::Duration;
use concord_cc::units::Rate;

impl Simulator {
    /// Builds the source hosts' shapers from the scenario (the queues' estimators live in the
    /// channels' disciplines, the `QueueDisc` in front of the discipline).
    pub(super) fn setup_eca(&mut self, sc: &Scenario) {
        let now = self.now;
        let mut state = EcaState {
            has_queues: self.channels.iter().any(|c| c.disc().eca().is_some()),
            admission: vec![None; sc.nodes.len()],
            ..EcaState::default()
        };
        for (f, spec) in sc.flows.iter().enumerate() {
            let host = match spec.eca {
                None => None,
                Some(EcaFlowSpec::Managed {
                    weight,
                    unit,
                    bucket,
                    queue,
                }) => {
                    let mut config = WtpConfig::new(weight * unit.bps_f64());
                    config.bucket_depth = bucket;
                    config.queue_limit = queue.max(1) as usize;
                    WtpShaper::new(config, now)
                        .ok()
                        .map(|shaper| HostEca::Managed {
                            shaper: Box::new(shaper),
                            armed: None,
                            drops: 0,
                        })
                }
                Some(EcaFlowSpec::Priority { peak }) => {
                    let capacity = self.first_hop_rate(spec.from as NodeId);
                    let slot = &mut state.admission[spec.from];
                    if slot.is_none() {
                        *slot = PriorityAdmission::new(capacity, 1.0).ok();
                    }
                    let admitted = slot
                        .as_mut()
                        .is_some_and(|a| a.admit(f as FlowId, peak).is_ok());
                    Some(if admitted {
                        HostEca::Priority
                    } else {
                        HostEca::Refused { drops: 0 }
                    })
                }
            };
            state.hosts.push(host);
        }
        if state.active() {
            state.reflector = Reflector::new(ReflectorConfig::default(), now).ok();
        }
        self.eca = state;
    }

    /// The rate of the first channel out of `node` (zero if it has none).
    fn first_hop_rate(&self, node: NodeId) -> Rate {
        self.channels
            .iter()
            .find(|c| c.from == node)
            .map_or(Rate::ZERO, |c| c.rate)
    }

    /// Receiver and source hook, before delivery: records the LOAD of a packet arriving at its
    /// flow's receiver (step 6), applies the RLOAD of a packet arriving at its flow's source
    /// (step 9). Returns true if the packet was an out-of-band load report, which goes no
    /// further.
    pub(super) fn eca_on_arrival_at_host(&mut self, pkt: &Packet) -> Result<bool, CaptureError> {
        let now = self.now;
        let f = pkt.flow as usize;
        let Some(flow) = self.flows.get(f) else {
            return Ok(false);
        };
        let is_udp = matches!(flow.agent, Agent::Udp(_));
        if pkt.dst == flow.src {
            let rload = pkt.eca.rload();
            if rload > 0.0 {
                if let Some(Some(HostEca::Managed { shaper, .. })) = self.eca.hosts.get_mut(f) {
                    if shaper.on_rload(now, rload).is_ok() {
                        self.eca.rloads_applied += 1;
                    }
                }
                // The rate may have gone up: packets held back may go now.
                self.release_shaped(f)?;
            }
            return Ok(is_udp && matches!(pkt.transport, Transport::Udp { .. }));
        }
        let load = pkt.eca.load();
        if load > 0.0 && pkt.is_data() {
            let reflection = if is_udp {
                Reflection::OutOfBand
            } else {
                Reflection::Piggyback
            };
            if let Some(r) = self.eca.reflector.as_mut() {
                // A load the reflector refuses (not a positive number) is not recorded.
                let _ = r.on_load(now, pkt.flow, load, reflection);
            }
            if reflection == Reflection::OutOfBand {
                self.arm_reports();
            }
        }
        Ok(false)
    }

    /// Receiver hook: the RLOAD an ACK of flow `f` leaving the receiver carries (step 8).
    pub(super) fn eca_reflect(&self, f: FlowId, pkt: &mut Packet) {
        if let Some(rload) = self
            .eca
            .reflector
            .as_ref()
            .and_then(|r| r.rload(self.now, &f))
        {
            pkt.eca.set_rload(rload);
        }
    }

    /// Host hook: a packet of flow `f` leaves its application at `src`. A managed flow's packet
    /// waits in its shaper (steps 2 and 3); a refused priority flow's packet is held back;
    /// anything else goes on as before.
    pub(super) fn eca_send(
        &mut self,
        f: FlowId,
        src: NodeId,
        pkt: Packet,
    ) -> Result<(), CaptureError> {
        match self.eca.hosts.get_mut(f as usize) {
            Some(Some(HostEca::Managed { shaper, drops, .. })) => {
                if shaper.enqueue(u64::from(pkt.size), pkt).is_err() {
                    *drops += 1;
                }
                self.release_shaped(f as usize)
            }
            Some(Some(HostEca::Refused { drops })) => {
                *drops += 1;
                Ok(())
            }
            _ => self.send_datagram(f, src, pkt),
        }
    }

    /// Lets out what flow `f`'s shaper allows now and schedules its next wake-up.
    fn release_shaped(&mut self, f: usize) -> Result<(), CaptureError> {
        let now = self.now;
        let Some(src) = self.flows.get(f).map(|fl| fl.src) else {
            return Ok(());
        };
        loop {
            let Some(Some(HostEca::Managed { shaper, armed, .. })) = self.eca.hosts.get_mut(f)
            else {
                return Ok(());
            };
            match shaper.poll_transmit(now) {
                Some(mut p) => {
                    // One-way delay counts from the moment the packet leaves the host.
                    p.created = now;
                    self.forward(src, p)?;
                }
                None => {
                    if let Some(at) = shaper.poll_timeout() {
                        let at = at.max(now + Duration::from_nanos(1));
                        if armed.is_none_or(|a| at < a || a <= now) {
                            *armed = Some(at);
                            self.events.push(
                                at,
                                Event::Stage(StageTimer::Eca(EcaTimer::Shaper(f as FlowId))),
                            );
                        }
                    }
                    return Ok(());
                }
            }
        }
    }

    /// Schedules the next out-of-band report tick if none is pending.
    fn arm_reports(&mut self) {
        let Some(at) = self.eca.reflector.as_ref().and_then(|r| r.poll_timeout()) else {
            return;
        };
        if self.eca.report_armed.is_none_or(|a| at < a) {
            self.eca.report_armed = Some(at);
            self.events
                .push(at, Event::Stage(StageTimer::Eca(EcaTimer::Report)));
        }
    }

    /// An ECA timer fired.
    pub(super) fn on_eca_timer(&mut self, t: EcaTimer) -> Result<(), CaptureError> {
        let now = self.now;
        match t {
            EcaTimer::Shaper(f) => {
                if let Some(Some(HostEca::Managed { armed, .. })) =
                    self.eca.hosts.get_mut(f as usize)
                {
                    if *armed != Some(now) {
                        return Ok(());
                    }
                    *armed = None;
                }
                self.release_shaped(f as usize)
            }
            EcaTimer::Report => {
                if self.eca.report_armed != Some(now) {
                    return Ok(());
                }
                self.eca.report_armed = None;
                let mut reports = Vec::new();
                if let Some(r) = self.eca.reflector.as_mut() {
                    while let Some(m) = r.poll_message(now) {
                        reports.push(m);
                    }
                }
                for m in reports {
                    let Some(flow) = self.flows.get(m.flow as usize) else {
                        continue;
                    };
                    let (src, dst) = (flow.src, flow.dst);
                    let mut p = Packet::new(
                        dst,
                        src,
                        m.flow,
                        super::UDP_IP_HEADER,
                        now,
                        Transport::Udp { seq: 0, len: 0 },
                    );
                    p.eca.set_rload(m.rload);
                    self.eca.reports_sent += 1;
                    self.forward(dst, p)?;
                }
                self.arm_reports();
                Ok(())
            }
        }
    }
}
