//! The host's Congestion Manager as a stage (CM paper section 2; RFC 3124): it opens a CM
//! flow when the flow starts, counts what the flow's application sends (`cm_notify`), asks for
//! the next grant after the application's turn, takes probes, responses and `cmudp` ACKs on
//! their way up, and forgets the probes and responses a queue dropped. The CM's state and its
//! handlers live in `simulator/cm.rs` and [`crate::cm`].

use super::super::Simulator;
use super::HostStage;
use crate::packet::{FlowId, NodeId, Packet};
use crate::trace::capture::CaptureError;

/// The Congestion Manager stage of a host that sends CM flows or answers probes.
pub(in crate::simulator) struct HostCm;

impl HostStage for HostCm {
    /// The hosts with a CM (the sources of CM flows) and those with a probe responder.
    fn nodes(sim: &Simulator) -> Vec<NodeId> {
        let with_cm = sim.cm.hosts.iter().map(Option::is_some);
        let with_responder = sim.cm.responders.iter().map(Option::is_some);
        with_cm
            .zip(with_responder)
            .enumerate()
            .filter(|(_, (cm, responder))| *cm || *responder)
            .map(|(n, _)| n as NodeId)
            .collect()
    }

    fn on_open(sim: &mut Simulator, f: FlowId) -> Result<(), CaptureError> {
        sim.cm_open(f)
    }

    /// A packet of an open CM flow leaving its source is reported to the CM, in bytes on the
    /// wire (`cm_notify(nsent)`, RFC 3124 section 4.2).
    fn on_send(
        sim: &mut Simulator,
        node: NodeId,
        pkt: Packet,
    ) -> Result<Option<Packet>, CaptureError> {
        if sim
            .flows
            .get(pkt.flow as usize)
            .is_some_and(|fl| fl.src == node)
        {
            sim.cm_sent(pkt.flow, pkt.size);
        }
        Ok(Some(pkt))
    }

    fn after_turn(sim: &mut Simulator, _node: NodeId, f: FlowId) -> Result<(), CaptureError> {
        sim.cm_after_pump(f)
    }

    fn on_receive(sim: &mut Simulator, pkt: &Packet) -> Result<bool, CaptureError> {
        sim.cm_deliver(pkt)
    }

    fn on_dropped(sim: &mut Simulator, pkt: &Packet) {
        sim.cm_dropped(pkt);
    }
}
