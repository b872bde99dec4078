//! The flows' agents behind one driver contract: the event loop starts and stops an agent,
//! hands it the packets addressed to it and fires its timers, and names no transport. Each
//! kind of agent keeps its own handlers (`simulator.rs` for TCP and UDP, `tfrc.rs`, `cp.rs`,
//! `cm.rs`); this file is the one place that matches on the kind.

use super::cp::CpTimer;
use super::tfrc::TfrcTimer;
use super::Simulator;
use crate::cm::CmTimer;
use crate::flow::Agent;
use crate::packet::{FlowId, Packet, Transport};
use crate::trace::capture::CaptureError;
use concord_cc::time::Instant;

/// A timer of one flow's agent.
#[derive(Clone, Copy, Debug)]
pub(crate) enum AgentTimer {
    /// A TCP sender's retransmission timer.
    TcpSender(FlowId),
    /// A TCP receiver's delayed-ACK timer.
    TcpReceiver(FlowId),
    /// A UDP source's next packet or phase change.
    Source(FlowId),
    /// A TFRC sender or receiver timer.
    Tfrc(TfrcTimer),
    /// A C-UDP endpoint's next datagram.
    CUdp(FlowId),
    /// An audio server's next packet.
    Audio(FlowId),
    /// A Web object picks its representation.
    Pick(FlowId),
}

impl Simulator {
    /// Fires timer `t` of a flow's agent.
    pub(super) fn on_agent_timer(&mut self, t: AgentTimer) -> Result<(), CaptureError> {
        match t {
            AgentTimer::TcpSender(f) => {
                self.read_timers_ahead();
                self.on_sender_timer(f)
            }
            AgentTimer::TcpReceiver(f) => {
                self.read_timers_ahead();
                self.on_receiver_timer(f)
            }
            AgentTimer::Source(f) => self.on_source_tick(f),
            AgentTimer::Tfrc(t) => self.on_tfrc_timer(t),
            AgentTimer::CUdp(f) => self.on_cp_timer(CpTimer::Send(f)),
            AgentTimer::Audio(f) => self.on_cm_timer(CmTimer::Audio(f)),
            AgentTimer::Pick(f) => self.on_cm_timer(CmTimer::Pick(f)),
        }
    }

    /// Flow `f`'s application starts (after its host's stages opened it).
    pub(super) fn agent_start(&mut self, f: FlowId) -> Result<(), CaptureError> {
        let now = self.now;
        let flow = &mut self.flows[f as usize];
        match &mut flow.agent {
            Agent::Tcp(t) => {
                if let Some(h) = t.handshake.as_deref_mut() {
                    h.active.connect(now);
                }
                self.pump_sender(f as usize)?
            }
            Agent::Tfrc(_) => self.start_tfrc(f)?,
            Agent::CUdp(_) => self.start_cudp(f)?,
            Agent::CmApp(_) => {}
            Agent::Udp(u) => {
                if u.on_off.is_none() {
                    u.on = true;
                    u.phase_end = Instant::MAX;
                } else {
                    u.phase_end = now;
                }
                self.events
                    .push(now, super::Event::Agent(AgentTimer::Source(f)));
            }
        }
        Ok(())
    }

    /// Flow `f`'s application stops offering data.
    pub(super) fn agent_stop(&mut self, f: FlowId) -> Result<(), CaptureError> {
        if let Agent::Tcp(t) = &mut self.flows[f as usize].agent {
            t.sender.stop();
        }
        // A CM application closes its flow when it stops; TCP/CM keeps it until what
        // it sent is acknowledged, since retransmissions need grants.
        if matches!(self.flows[f as usize].agent, Agent::CmApp(_)) {
            self.cm_finished(f)?;
        }
        Ok(())
    }

    /// A packet reached its destination host, past the host's stages: its flow's agent
    /// takes it.
    pub(super) fn agent_on_packet(&mut self, pkt: Packet) -> Result<(), CaptureError> {
        match pkt.transport {
            Transport::TfrcData { .. } | Transport::TfrcFeedback { .. } => self.deliver_tfrc(pkt),
            _ if pkt.cp.get().is_some() => {
                self.deliver_cp(pkt);
                Ok(())
            }
            _ => self.deliver_tcp_udp(pkt),
        }
    }
}
