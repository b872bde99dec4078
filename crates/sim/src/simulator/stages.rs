//! The hosts' stages and the ports' hooks, composed from the scenario: the event loop runs
//! a packet through them in order and names no scheme. Each stage keeps its own handlers
//! (`eca.rs`, `cp.rs`, `cm.rs`, `gcca.rs`); this file is the one place that matches on them.

use super::cp::CpTimer;
use super::Simulator;
use crate::cm::CmTimer;
use crate::eca::EcaTimer;
use crate::flow::Agent;
use crate::gcca::GccaTimer;
use crate::packet::{NodeId, Packet, Transport};
use crate::trace::capture::CaptureError;

/// One stage a host runs on the packets it sends and receives, in the order of the chain.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Stage {
    /// ECA's host part: applies a returning RLOAD to the flow's shaper, reflects the load a
    /// data packet carries (ECA steps 6 and 9), takes the out-of-band load reports.
    Eca,
    /// CP's aggregation points: stamp or rewrite a C-UDP packet's header on its way, free the
    /// header of a dropped packet.
    Cp,
    /// The host's Congestion Manager and probe responder: opens a flow, takes probes,
    /// responses and `cmudp` ACKs, counts dropped probes and responses.
    Cm,
}

/// A timer of a host stage or a port.
#[derive(Clone, Copy, Debug)]
pub(crate) enum StageTimer {
    /// A GCCA leaky bucket (a router port's or a host's).
    Gcca(GccaTimer),
    /// An aggregation point's feedback or nofeedback timer.
    Ap(NodeId),
    /// An ECA shaper may release a packet, or load reports are due.
    Eca(EcaTimer),
    /// Host `n`'s Congestion Manager has a grant, an aging step or a probe due.
    Cm(NodeId),
}

/// The chain of stages the scenario's schemes need, in order (ECA, CP, CM). A scheme the run
/// does not use has no stage, so a plain run passes packets straight to the agents.
pub(super) fn compose(sim: &Simulator) -> Vec<Stage> {
    let mut chain = Vec::new();
    if sim.eca.active() {
        chain.push(Stage::Eca);
    }
    let cudp = sim.flows.iter().any(|f| matches!(f.agent, Agent::CUdp(_)));
    if cudp || !sim.cp.apps.is_empty() || !sim.cp.aps.is_empty() {
        chain.push(Stage::Cp);
    }
    let cm_apps = sim.flows.iter().any(|f| matches!(f.agent, Agent::CmApp(_)));
    if cm_apps || sim.cm.active() || sim.cm.responders.iter().any(Option::is_some) {
        chain.push(Stage::Cm);
    }
    chain
}

impl Simulator {
    /// Fires timer `t` of a stage or port.
    pub(super) fn on_stage_timer(&mut self, t: StageTimer) -> Result<(), CaptureError> {
        match t {
            StageTimer::Gcca(t) => self.on_gcca_timer(t),
            StageTimer::Ap(n) => self.on_cp_timer(CpTimer::Ap(n)),
            StageTimer::Eca(t) => self.on_eca_timer(t),
            StageTimer::Cm(n) => self.on_cm_timer(CmTimer::Host(n)),
        }
    }

    /// Flow `f` starts: the stages of its source open it before its agent starts.
    pub(super) fn stages_open(&mut self, f: crate::packet::FlowId) -> Result<(), CaptureError> {
        for i in 0..self.stages.len() {
            if self.stages[i] == Stage::Cm {
                self.cm_open(f)?;
            }
        }
        Ok(())
    }

    /// A packet reached its destination host: each stage in turn may take it (`None`) or
    /// pass it on toward the agent.
    pub(super) fn stages_receive(&mut self, pkt: Packet) -> Result<Option<Packet>, CaptureError> {
        for i in 0..self.stages.len() {
            let taken = match self.stages[i] {
                Stage::Eca => self.eca_on_arrival_at_host(&pkt)?,
                // A packet with a CP header goes to its AP or its C-UDP sink (the agent).
                Stage::Cp => false,
                Stage::Cm => self.cm_deliver(&pkt)?,
            };
            if taken {
                return Ok(None);
            }
        }
        Ok(Some(pkt))
    }

    /// A packet at `node` on its way to be forwarded: each stage in turn may rewrite it or
    /// take it (`None`).
    pub(super) fn stages_through(&mut self, node: NodeId, pkt: Packet) -> Option<Packet> {
        let mut pkt = pkt;
        for i in 0..self.stages.len() {
            if self.stages[i] == Stage::Cp {
                pkt = self.cp_through(node, pkt)?;
            }
        }
        Some(pkt)
    }

    /// A queue dropped `pkt`: the stages that track packets in flight forget it.
    pub(super) fn stages_dropped(&mut self, pkt: &Packet) {
        for i in 0..self.stages.len() {
            match self.stages[i] {
                Stage::Eca => {}
                Stage::Cp => self.cp_dropped(pkt.cp),
                Stage::Cm => self.cm_dropped(pkt),
            }
        }
    }

    /// After channel `c`'s discipline admitted, started or finished a packet: a port that
    /// raised signals or holds its head sends them and schedules its wake-up.
    pub(super) fn after_port(&mut self, c: u32) -> Result<(), CaptureError> {
        self.after_gcca_port(c)
    }

    /// Traces packet `p` starting on channel `c`, with the stages' handle tables (CP headers,
    /// CM responses) the pcap writer encodes from.
    pub(super) fn trace_packet(&mut self, c: u32, p: &Packet) -> Result<(), CaptureError> {
        let now = self.now;
        self.capture
            .packet(c, now, p, &self.cp.headers, &self.cm.responses)
    }

    /// A hop-by-hop control message arrived over channel `c` for the node at its far end.
    pub(super) fn on_link_control(&mut self, c: u32, pkt: Packet) -> Result<(), CaptureError> {
        if let Transport::Gccp(msg) = pkt.transport {
            self.on_gccp(c, msg)?;
        }
        Ok(())
    }
}
