//! ECA's host part as a stage (Barham, section IV.A.3): at a source, a managed flow's packets
//! wait in the flow's WTP shaper (steps 2 and 3) and a refused priority flow's are held back;
//! at a receiver, the LOAD a data packet carries is recorded (step 6) and reflected as RLOAD in
//! the ACKs (step 8); back at the source, a returning RLOAD sets the shaper's rate (step 9).
//! The estimators, reflector and shapers live in [`crate::eca`]; the report timer in
//! `simulator/eca.rs`.

use super::super::{Event, Simulator};
use super::{HostStage, Stage, StageTimer};
use crate::eca::{EcaTimer, HostEca};
use crate::flow::Agent;
use crate::packet::{FlowId, NodeId, Packet, Transport};
use crate::trace::capture::CaptureError;
use concord_cc::eca::Reflection;
use concord_cc::time::Duration;

/// The ECA stage of a flow's source or receiver.
pub(in crate::simulator) struct WtpShaper;

impl HostStage for WtpShaper {
    /// Every flow's source and receiver, when the run has ECA queues or ECA flows: the queues
    /// stamp a LOAD on any flow's packets, and its receiver reflects it.
    fn nodes(sim: &Simulator) -> Vec<NodeId> {
        if !sim.eca.active() {
            return Vec::new();
        }
        sim.flows.iter().flat_map(|f| [f.src, f.dst]).collect()
    }

    /// At the flow's source, a managed flow's packet waits in its shaper (steps 2 and 3) and
    /// a refused priority flow's packet is held back; at its receiver, a TCP ACK carries the
    /// RLOAD of the flow (step 8, piggybacked).
    fn on_send(
        sim: &mut Simulator,
        node: NodeId,
        mut pkt: Packet,
    ) -> Result<Option<Packet>, CaptureError> {
        let f = pkt.flow as usize;
        let Some(flow) = sim.flows.get(f) else {
            return Ok(Some(pkt));
        };
        if node == flow.src {
            return match sim.eca.hosts.get_mut(f) {
                Some(Some(HostEca::Managed { shaper, drops, .. })) => {
                    if shaper.enqueue(u64::from(pkt.size), pkt).is_err() {
                        *drops += 1;
                    }
                    sim.release_shaped(f)?;
                    Ok(None)
                }
                Some(Some(HostEca::Refused { drops })) => {
                    *drops += 1;
                    Ok(None)
                }
                _ => Ok(Some(pkt)),
            };
        }
        if node == flow.dst && matches!(pkt.transport, Transport::TcpAck { .. }) {
            let now = sim.now;
            if let Some(rload) = sim
                .eca
                .reflector
                .as_ref()
                .and_then(|r| r.rload(now, &pkt.flow))
            {
                pkt.eca.set_rload(rload);
            }
        }
        Ok(Some(pkt))
    }

    /// Records the LOAD of a packet arriving at its flow's receiver (step 6), applies the
    /// RLOAD of a packet arriving at its flow's source (step 9). Takes an out-of-band load
    /// report, which goes no further.
    fn on_receive(sim: &mut Simulator, pkt: &Packet) -> Result<bool, CaptureError> {
        let now = sim.now;
        let f = pkt.flow as usize;
        let Some(flow) = sim.flows.get(f) else {
            return Ok(false);
        };
        let is_udp = matches!(flow.agent, Agent::Udp(_));
        if pkt.dst == flow.src {
            let rload = pkt.eca.rload();
            if rload > 0.0 {
                if let Some(Some(HostEca::Managed { shaper, .. })) = sim.eca.hosts.get_mut(f) {
                    if shaper.on_rload(now, rload).is_ok() {
                        sim.eca.rloads_applied += 1;
                    }
                }
                // The rate may have gone up: packets held back may go now.
                sim.release_shaped(f)?;
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
            if let Some(r) = sim.eca.reflector.as_mut() {
                // A load the reflector refuses (not a positive number) is not recorded.
                let _ = r.on_load(now, pkt.flow, load, reflection);
            }
            if reflection == Reflection::OutOfBand {
                sim.arm_reports();
            }
        }
        Ok(false)
    }
}

impl Simulator {
    /// Lets out what flow `f`'s shaper allows now, on to the stages after the shaper, and
    /// schedules its next wake-up.
    pub(in crate::simulator) fn release_shaped(&mut self, f: usize) -> Result<(), CaptureError> {
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
                    self.send_after(src, Stage::Eca, p)?;
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
}
