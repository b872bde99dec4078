//! The hosts' stage chains and the ports' hooks. Each node keeps its own chain of stages,
//! composed from the scenario; a packet an agent sends walks its host's chain from the
//! application side to the wire, a packet that reaches its host walks it back from the wire
//! to the agent, and the event loop names no scheme.
//!
//! The contract is [`HostStage`]; each stage is one file under `stages/` that implements it
//! (`host_cm.rs`, `aggregation_point.rs`, `wtp_shaper.rs`, `host_bucket.rs`). This file is the
//! one place that lists them: the [`Stage`] enum, [`ORDER`] and the `each_stage!` macro.
//!
//! The scenario has no key for the order of the stages: every host runs the stages it needs in
//! the fixed order [`ORDER`], from the application side to the wire: the Congestion Manager
//! (it counts what the application sends), CP's aggregation point, ECA's WTP shaper, GCCA's
//! host leaky bucket (the last to hold a packet before the first link).

use super::chains::Chains;
use super::cp::CpTimer;
use super::Simulator;
use crate::cm::CmTimer;
use crate::eca::EcaTimer;
use crate::gcca::GccaTimer;
use crate::packet::{FlowId, NodeId, Packet, Transport};
use crate::trace::capture::CaptureError;

mod aggregation_point;
mod host_bucket;
mod host_cm;
mod wtp_shaper;

/// What a host stage does at each point of a packet's way through its node. Every method but
/// [`HostStage::nodes`] has a default that lets the packet by untouched, so a stage writes
/// only the points it acts at.
pub(super) trait HostStage {
    /// The nodes that run this stage in the run `sim` was built for.
    fn nodes(sim: &Simulator) -> Vec<NodeId>;

    /// Flow `f` opens at its source, before its agent starts.
    fn on_open(_sim: &mut Simulator, _f: FlowId) -> Result<(), CaptureError> {
        Ok(())
    }

    /// `pkt` leaves an agent at `node` and reaches this stage on its way to the wire:
    /// `Some` passes it to the next stage, `None` holds it (the stage sends it on later with
    /// [`Simulator::send_after`]) or drops it.
    fn on_send(
        _sim: &mut Simulator,
        _node: NodeId,
        pkt: Packet,
    ) -> Result<Option<Packet>, CaptureError> {
        Ok(Some(pkt))
    }

    /// Flow `f`'s agent at `node` has had its turn: it sent what it could for now.
    fn after_turn(_sim: &mut Simulator, _node: NodeId, _f: FlowId) -> Result<(), CaptureError> {
        Ok(())
    }

    /// `node` is about to forward `pkt` (its own or a neighbour's): `Some` passes it on
    /// (perhaps rewritten), `None` takes it.
    fn on_through(_sim: &mut Simulator, _node: NodeId, pkt: Packet) -> Option<Packet> {
        Some(pkt)
    }

    /// `pkt` reached its destination `pkt.dst` and this stage on its way to the agent: true if
    /// the stage took it.
    fn on_receive(_sim: &mut Simulator, _pkt: &Packet) -> Result<bool, CaptureError> {
        Ok(false)
    }

    /// A queue dropped `pkt`, which this node (`pkt.src`) sent.
    fn on_dropped(_sim: &mut Simulator, _pkt: &Packet) {}
}

/// One stage of a node's chain.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Stage {
    /// The host's Congestion Manager and probe responder (`stages/host_cm.rs`).
    Cm,
    /// CP's aggregation point, at an AP node or a C-UDP source (`stages/aggregation_point.rs`).
    Cp,
    /// ECA's host part: the WTP shaper at a source, the load reflector at a receiver
    /// (`stages/wtp_shaper.rs`).
    Eca,
    /// GCCA's host leaky bucket for the UDP flows a GCCA host sends (`stages/host_bucket.rs`).
    GccaBucket,
}

/// The order of the stages in every chain, from the application side to the wire.
pub(super) const ORDER: [Stage; 4] = [Stage::Cm, Stage::Cp, Stage::Eca, Stage::GccaBucket];

/// Runs `$body` with `$S` the type that implements [`HostStage`] for `$stage`.
macro_rules! each_stage {
    ($stage:expr, $S:ident => $body:expr) => {
        match $stage {
            Stage::Cm => {
                type $S = host_cm::HostCm;
                $body
            }
            Stage::Cp => {
                type $S = aggregation_point::AggregationPoint;
                $body
            }
            Stage::Eca => {
                type $S = wtp_shaper::WtpShaper;
                $body
            }
            Stage::GccaBucket => {
                type $S = host_bucket::HostBucket;
                $body
            }
        }
    };
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

/// Each node's chain: the stages of [`ORDER`] that run at the node. A stage the run does not
/// use is in no chain, so a plain run passes packets straight between agents and links.
pub(super) fn compose(sim: &Simulator) -> Chains {
    let mut chains = vec![Vec::new(); sim.nodes.len()];
    for stage in ORDER {
        let mut nodes = each_stage!(stage, S => S::nodes(sim));
        nodes.sort_unstable();
        nodes.dedup();
        for n in nodes {
            if let Some(chain) = chains.get_mut(n as usize) {
                chain.push(stage);
            }
        }
    }
    Chains::new(chains)
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

    /// Stage `i` of `node`'s chain, if the chain is that long.
    #[inline]
    pub(super) fn stage_at(&self, node: NodeId, i: usize) -> Option<Stage> {
        self.chains.of(node).get(i).copied()
    }

    /// True if `node` runs at least one stage.
    #[inline]
    pub(super) fn has_stages(&self, node: NodeId) -> bool {
        !self.chains.of(node).is_empty()
    }

    /// The index in `node`'s chain just after `stage` (the chain's length if `node` does not
    /// run it).
    pub(super) fn after_stage(&self, node: NodeId, stage: Stage) -> usize {
        let chain = self.chains.of(node);
        chain
            .iter()
            .position(|&s| s == stage)
            .map_or(chain.len(), |i| i + 1)
    }

    /// `pkt` reaches `stage` of `node`'s chain on its way to the wire.
    #[inline]
    pub(super) fn stage_send(
        &mut self,
        stage: Stage,
        node: NodeId,
        pkt: Packet,
    ) -> Result<Option<Packet>, CaptureError> {
        each_stage!(stage, S => S::on_send(self, node, pkt))
    }

    /// Flow `f` starts: the stages of its source open it before its agent starts.
    pub(super) fn stages_open(&mut self, f: FlowId) -> Result<(), CaptureError> {
        let Some(src) = self.flows.get(f as usize).map(|fl| fl.src) else {
            return Ok(());
        };
        let mut i = 0;
        while let Some(stage) = self.stage_at(src, i) {
            each_stage!(stage, S => S::on_open(self, f))?;
            i += 1;
        }
        Ok(())
    }

    /// Flow `f`'s agent at `node` has had its turn: each stage of `node` in turn hears it.
    pub(super) fn stages_after_turn(
        &mut self,
        node: NodeId,
        f: FlowId,
    ) -> Result<(), CaptureError> {
        let mut i = 0;
        while let Some(stage) = self.stage_at(node, i) {
            each_stage!(stage, S => S::after_turn(self, node, f))?;
            i += 1;
        }
        Ok(())
    }

    /// A packet reached its destination host: each stage of the host, from the wire up, may
    /// take it (`None`) or pass it on toward the agent.
    pub(super) fn stages_receive(&mut self, pkt: Packet) -> Result<Option<Packet>, CaptureError> {
        let node = pkt.dst;
        let mut i = self.chains.of(node).len();
        while i > 0 {
            i -= 1;
            let Some(stage) = self.stage_at(node, i) else {
                break;
            };
            if each_stage!(stage, S => S::on_receive(self, &pkt))? {
                return Ok(None);
            }
        }
        Ok(Some(pkt))
    }

    /// A packet at `node` on its way to be forwarded: each stage of `node` in turn may rewrite
    /// it or take it (`None`).
    pub(super) fn stages_through(&mut self, node: NodeId, pkt: Packet) -> Option<Packet> {
        let mut pkt = pkt;
        let mut i = 0;
        while let Some(stage) = self.stage_at(node, i) {
            pkt = each_stage!(stage, S => S::on_through(self, node, pkt))?;
            i += 1;
        }
        Some(pkt)
    }

    /// A queue dropped `pkt`: the stages of the node that sent it forget it.
    pub(super) fn stages_dropped(&mut self, pkt: &Packet) {
        let mut i = 0;
        while let Some(stage) = self.stage_at(pkt.src, i) {
            each_stage!(stage, S => S::on_dropped(self, pkt));
            i += 1;
        }
    }

    /// After channel `c`'s discipline admitted, started or finished a packet: a port that
    /// raised signals or holds its head sends them and schedules its wake-up.
    /// A channel whose discipline is no such port costs one test.
    #[inline]
    pub(super) fn after_port(&mut self, c: u32) -> Result<(), CaptureError> {
        if !self.channels.get(c as usize).is_some_and(|ch| ch.is_port()) {
            return Ok(());
        }
        self.after_gcca_port(c)
    }

    /// Traces the packet channel `c` has just started to transmit, if a trace records `c`.
    #[inline]
    pub(super) fn trace_in_service(&mut self, c: u32) -> Result<(), CaptureError> {
        if !self.capture.records(c) {
            return Ok(());
        }
        match self
            .channels
            .get(c as usize)
            .and_then(|ch| ch.in_service(&self.wire))
        {
            Some(&p) => self.trace_packet(c, &p),
            None => Ok(()),
        }
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

#[cfg(test)]
mod tests {
    use super::{Simulator, Stage};
    use crate::scenario::parse_str;
    use concord_cc::time::Instant;

    fn build(text: &str) -> Simulator {
        let sc = parse_str(text, None).unwrap_or_else(|e| panic!("scenario: {e}"));
        Simulator::new(&sc).unwrap_or_else(|e| panic!("simulator: {e}"))
    }

    /// The chain of the node named `name`.
    fn chain(sim: &Simulator, name: &str) -> Vec<Stage> {
        let n = sim.nodes.iter().position(|n| n.name == name);
        let n = n.unwrap_or_else(|| panic!("no node `{name}`"));
        sim.chains.of(n as u32).to_vec()
    }

    const DROPTAIL: &str = include_str!("../../../../scenarios/basic/dumbbell-4-droptail.toml");
    const CM_BULK: &str = include_str!("../../../../scenarios/cm/bulk.toml");
    const GCCA: &str = include_str!("../../../../scenarios/gcca/unresponsive-gcca.toml");
    const ECA: &str = include_str!("../../../../scenarios/eca/parking-lot-eca.toml");

    #[test]
    fn a_run_without_schemes_gives_every_node_an_empty_chain() {
        let sim = build(DROPTAIL);
        assert_eq!(sim.chains.nodes(), sim.nodes.len());
        assert!((0..sim.nodes.len() as u32).all(|n| sim.chains.of(n).is_empty()));
    }

    #[test]
    fn a_cmudp_source_runs_its_cm_and_its_receiver_a_responder_and_no_other_node_a_stage() {
        let sim = build(CM_BULK);
        assert_eq!(chain(&sim, "s1"), [Stage::Cm]);
        assert_eq!(chain(&sim, "d1"), [Stage::Cm]);
        for other in ["s2", "d2", "r1", "r2"] {
            assert_eq!(chain(&sim, other), [], "{other}");
        }
    }

    #[test]
    fn only_the_gcca_host_that_sends_udp_runs_a_host_bucket() {
        let sim = build(GCCA);
        assert_eq!(chain(&sim, "u"), [Stage::GccaBucket]);
        for other in ["t", "r1", "r2", "b"] {
            assert_eq!(chain(&sim, other), [], "{other}");
        }
    }

    #[test]
    fn eca_runs_at_every_flow_endpoint_and_at_no_router() {
        let sim = build(ECA);
        for (n, node) in sim.nodes.iter().enumerate() {
            let endpoint = sim
                .flows
                .iter()
                .any(|f| f.src as usize == n || f.dst as usize == n);
            let want: &[Stage] = if endpoint { &[Stage::Eca] } else { &[] };
            assert_eq!(sim.chains.of(n as u32), want, "{}", node.name);
        }
    }

    /// The GCCA scenario's UDP flow, managed by ECA as well: host `u` runs the WTP shaper,
    /// then the host bucket.
    fn gcca_and_eca() -> Simulator {
        let udp = "kind = \"cbr\"\nfrom = \"u\"\nto = \"b\"\n";
        assert_eq!(
            GCCA.matches(udp).count(),
            1,
            "the UDP flow of the GCCA scenario"
        );
        let text = GCCA.replace(udp, &format!("{udp}eca = {{ weight = 1, queue = 434 }}\n"));
        build(&text)
    }

    #[test]
    fn a_host_runs_its_stages_in_order_from_the_application_to_the_wire() {
        let sim = gcca_and_eca();
        assert_eq!(chain(&sim, "u"), [Stage::Eca, Stage::GccaBucket]);
        assert_eq!(chain(&sim, "b"), [Stage::Eca]);
        assert_eq!(chain(&sim, "r1"), []);
    }

    #[test]
    fn a_stage_that_lets_a_packet_go_hands_it_to_the_next_stage_of_its_host() {
        let mut sim = gcca_and_eca();
        let u = sim.nodes.iter().position(|n| n.name == "u").unwrap_or(0) as u32;
        assert_eq!(sim.after_stage(u, Stage::Eca), 1);
        assert_eq!(sim.after_stage(u, Stage::GccaBucket), 2);
        // A stage the node does not run: past the end of its chain.
        assert_eq!(sim.after_stage(u, Stage::Cm), 2);
        sim.run_until(Instant::from_millis(3000))
            .unwrap_or_else(|e| panic!("run: {e}"));
        // The UDP flow starts at 1 s.
        let udp = sim.flows.iter().position(|f| f.name == "udp").unwrap_or(0);
        let bucket = sim.gcca.shapers[udp].as_ref().map_or(0, |s| s.sent);
        // Every packet the WTP shaper let go went through the host bucket on its way out.
        assert!(bucket > 0, "the host bucket sent {bucket} packets");
    }
}
