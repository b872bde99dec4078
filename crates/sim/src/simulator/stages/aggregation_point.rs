//! CP's aggregation point as a stage (Coordination Protocol, section 3): at an AP node it
//! stamps (local AP) or reads and rewrites (remote AP) the CP header of each packet it
//! forwards, and it frees the header of a packet a queue dropped. The APs' state and handlers
//! live in `simulator/cp.rs` and [`crate::cp`].

use super::super::Simulator;
use super::HostStage;
use crate::flow::Agent;
use crate::packet::{NodeId, Packet};

/// The aggregation-point stage of an AP node or of a C-UDP source.
pub(in crate::simulator) struct AggregationPoint;

impl HostStage for AggregationPoint {
    /// The aggregation points, and the hosts that send C-UDP flows (whose headers a queue may
    /// drop).
    fn nodes(sim: &Simulator) -> Vec<NodeId> {
        let aps = sim.cp.aps.keys().copied();
        let sources = sim
            .flows
            .iter()
            .filter(|f| matches!(f.agent, Agent::CUdp(_)))
            .map(|f| f.src);
        aps.chain(sources).collect()
    }

    fn on_through(sim: &mut Simulator, node: NodeId, pkt: Packet) -> Option<Packet> {
        sim.cp_through(node, pkt)
    }

    fn on_dropped(sim: &mut Simulator, pkt: &Packet) {
        sim.cp_dropped(pkt.cp.get());
    }
}
