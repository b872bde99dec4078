//! The TCP three-way handshake on the wire: the sender's active opener sends the SYN and the
//! ACK of the SYN-ACK, the receiver's passive opener the SYN-ACK, each re-arming its side's
//! timer (the sender's on the retransmission timer's slot, the receiver's on the delayed-ACK
//! timer's slot). Only connections with `handshake` in their TCP settings have one.

use super::{AgentTimer, Event, Simulator};
use crate::flow::Agent;
use crate::packet::{FlowId, Packet, Transport};
use crate::trace::capture::CaptureError;
use concord_cc::tcp::handshake::SYN_OPTION_BYTES;
use concord_cc::tcp::HandshakeSegment;
use concord_cc::wire::Ecn;

impl Simulator {
    /// Sends the handshake segment flow `f`'s sender has due and re-arms the SYN's timer;
    /// returns true if data may flow (the connection is established or has no handshake).
    pub(super) fn pump_active_open(&mut self, f: usize) -> Result<bool, CaptureError> {
        let now = self.now;
        let flow = &mut self.flows[f];
        let (src, dst) = (flow.src, flow.dst);
        let Agent::Tcp(t) = &mut flow.agent else {
            return Ok(true);
        };
        let Some(h) = t.handshake.as_deref_mut() else {
            return Ok(true);
        };
        let segment = h.active.poll_transmit(now);
        if let Some(at) = h.active.poll_timeout() {
            if crate::timer::arm_earlier(&mut t.sender_timer, at) {
                self.events
                    .push_far(at, Event::Agent(AgentTimer::TcpSender(f as FlowId)));
            }
        }
        let established = h.active.is_established();
        let ect = h.active.config().ect_syn && t.sender.config().ecn;
        if let Some(segment) = segment {
            let syn = segment == HandshakeSegment::Syn;
            let size = t.header_bytes + if syn { SYN_OPTION_BYTES } else { 0 };
            let pkt = Packet {
                // RFC 3168 section 6.1.1: a SYN is not ECT unless the scenario says so.
                ecn: if syn && ect { Ecn::Ect0 } else { Ecn::NotEct },
                ..Packet::new(
                    src,
                    dst,
                    f as FlowId,
                    size,
                    now,
                    Transport::TcpHandshake {
                        segment,
                        ts: (now.as_nanos() / 1_000_000) as u32,
                    },
                )
            };
            self.send(src, pkt)?;
        }
        Ok(established)
    }

    /// Sends the SYN-ACK flow `f`'s receiver has due and re-arms its timer.
    pub(super) fn pump_passive_open(&mut self, f: usize) -> Result<(), CaptureError> {
        let now = self.now;
        let flow = &mut self.flows[f];
        let (src, dst) = (flow.src, flow.dst);
        let Agent::Tcp(t) = &mut flow.agent else {
            return Ok(());
        };
        let Some(h) = t.handshake.as_deref_mut() else {
            return Ok(());
        };
        let segment = h.passive.poll_transmit(now);
        if let Some(at) = h.passive.poll_timeout() {
            if crate::timer::arm_earlier(&mut t.receiver_timer, at) {
                self.events
                    .push_far(at, Event::Agent(AgentTimer::TcpReceiver(f as FlowId)));
            }
        }
        if let Some(segment) = segment {
            let pkt = Packet::new(
                dst,
                src,
                f as FlowId,
                t.header_bytes + SYN_OPTION_BYTES,
                now,
                Transport::TcpHandshake {
                    segment,
                    ts: t.ts_recent,
                },
            );
            self.send(dst, pkt)?;
        }
        Ok(())
    }

    /// A handshake segment of flow `f` reached its end: the SYN and the ACK the receiver,
    /// the SYN-ACK the sender (which then takes the handshake's RTT sample and starts data).
    pub(super) fn deliver_handshake(
        &mut self,
        f: usize,
        segment: HandshakeSegment,
    ) -> Result<(), CaptureError> {
        let now = self.now;
        let Some(Agent::Tcp(t)) = self.flows.get_mut(f).map(|fl| &mut fl.agent) else {
            return Ok(());
        };
        let Some(h) = t.handshake.as_deref_mut() else {
            return Ok(());
        };
        match segment {
            HandshakeSegment::Syn => {
                h.passive.on_syn();
                self.pump_receiver(f)
            }
            HandshakeSegment::Ack => {
                h.passive.on_ack();
                Ok(())
            }
            HandshakeSegment::SynAck => {
                if let Some(e) = h.active.on_syn_ack(now) {
                    t.sender.on_established(e.rtt_sample, e.syn_timed_out);
                }
                self.pump_sender(f)
            }
        }
    }
}
