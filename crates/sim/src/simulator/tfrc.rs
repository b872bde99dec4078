//! The simulator's TFRC hooks (RFC 5348): building a connection, pacing the sender at
//! `next_send_time`, answering data with feedback at the receiver's `poll_timeout`, and running
//! the sender's nofeedback timer. Timers are lazy, as TCP's: an event carries its deadline's
//! instant and is ignored when a later re-arm superseded it.

use super::agents::AgentTimer;
use super::{Event, SetupError, Simulator};
use crate::flow::Agent;
use crate::packet::{FlowId, Packet, Transport};
use crate::tfrc::{TfrcFlow, DATA_HEADER, FEEDBACK_SIZE};
use crate::trace::capture::CaptureError;
use concord_cc::tfrc::{Arrival, Feedback, TfrcConfig, TfrcReceiver, TfrcSender};
use concord_cc::time::Instant;
use concord_cc::wire::Ecn;

/// IP and UDP header bytes.
const UDP_IP: u32 = 28;

/// The most data packets one send event releases: pacing allows at most two back to back
/// (RFC 5348 section 4.6); the cap only guards against a zero inter-packet interval.
const MAX_BURST: usize = 8;

/// Which TFRC timer an event is for.
#[derive(Clone, Copy, Debug)]
pub(crate) enum TfrcTimer {
    /// The sender may send its next packet (section 4.6).
    Send(FlowId),
    /// The sender's nofeedback timer (section 4.4).
    NoFeedback(FlowId),
    /// The receiver's feedback timer (section 6.2).
    Feedback(FlowId),
}

/// The agent of a TFRC flow named `flow` whose data packets are `packet_size` bytes on the
/// wire, starting at `start`.
pub(super) fn tfrc_agent(
    flow: &str,
    packet_size: u64,
    start: Instant,
) -> Result<Agent, SetupError> {
    let err = |source| SetupError::Tfrc {
        flow: flow.to_string(),
        source,
    };
    let config = TfrcConfig {
        segment_size: packet_size,
        ..TfrcConfig::default()
    };
    let sender = TfrcSender::new(config.clone(), start).map_err(err)?;
    let receiver = TfrcReceiver::new(config).map_err(err)?;
    Ok(Agent::Tfrc(Box::new(TfrcFlow {
        sender,
        receiver,
        packet_size: u32::try_from(packet_size).unwrap_or(u32::MAX),
        send_timer: None,
        nofeedback_timer: None,
        feedback_timer: None,
        sent: 0,
        received: 0,
        refused_feedback: 0,
        rate_trace: Vec::new(),
    })))
}

impl Simulator {
    /// The TFRC flow `f`'s state, if it is one.
    fn tfrc_mut(&mut self, f: FlowId) -> Option<&mut TfrcFlow> {
        match &mut self.flows.get_mut(f as usize)?.agent {
            Agent::Tfrc(t) => Some(t),
            _ => None,
        }
    }

    /// Flow `f` starts: its first packet may leave now.
    pub(super) fn start_tfrc(&mut self, f: FlowId) -> Result<(), CaptureError> {
        self.send_tfrc(f)
    }

    /// A TFRC timer fired.
    pub(super) fn on_tfrc_timer(&mut self, timer: TfrcTimer) -> Result<(), CaptureError> {
        let now = self.now;
        match timer {
            TfrcTimer::Send(f) => {
                let Some(t) = self.tfrc_mut(f) else {
                    return Ok(());
                };
                if t.send_timer != Some(now) {
                    return Ok(()); // superseded by an earlier send time
                }
                t.send_timer = None;
                self.send_tfrc(f)
            }
            TfrcTimer::NoFeedback(f) => {
                let Some(t) = self.tfrc_mut(f) else {
                    return Ok(());
                };
                if t.nofeedback_timer != Some(now) {
                    return Ok(());
                }
                t.nofeedback_timer = None;
                // Feedback may have moved the deadline since this event was armed.
                if t.sender.poll_timeout().is_some_and(|at| at <= now) {
                    t.sender.handle_timeout(now);
                }
                self.arm_tfrc_sender(f);
                Ok(())
            }
            TfrcTimer::Feedback(f) => {
                let Some(t) = self.tfrc_mut(f) else {
                    return Ok(());
                };
                if t.feedback_timer != Some(now) {
                    return Ok(());
                }
                t.feedback_timer = None;
                self.pump_tfrc_receiver(f)
            }
        }
    }

    /// Sends what pacing allows of flow `f` now and re-arms its timers.
    fn send_tfrc(&mut self, f: FlowId) -> Result<(), CaptureError> {
        let now = self.now;
        let Some(flow) = self.flows.get_mut(f as usize) else {
            return Ok(());
        };
        if now >= flow.stop {
            return Ok(());
        }
        let (src, dst) = (flow.src, flow.dst);
        let Agent::Tfrc(t) = &mut flow.agent else {
            return Ok(());
        };
        let mut batch = Vec::new();
        while batch.len() < MAX_BURST {
            let Some(header) = t.sender.poll_send(now) else {
                break;
            };
            t.sent += 1;
            batch.push(Packet::new(
                src,
                dst,
                f,
                t.packet_size,
                now,
                Transport::TfrcData {
                    header,
                    len: t.packet_size.saturating_sub(UDP_IP + DATA_HEADER),
                },
            ));
        }
        self.arm_tfrc_sender(f);
        for p in batch {
            self.forward(src, p)?;
        }
        Ok(())
    }

    /// Schedules flow `f`'s next send and its nofeedback timer, unless an event at or before
    /// each deadline is already pending.
    fn arm_tfrc_sender(&mut self, f: FlowId) {
        let (end, stop) = match self.flows.get(f as usize) {
            Some(fl) => (self.end, fl.stop),
            None => return,
        };
        let now = self.now;
        let Some(t) = self.tfrc_mut(f) else {
            return;
        };
        let mut push = Vec::with_capacity(2);
        let next = t.sender.next_send_time().max(now);
        if next < end && next < stop && crate::timer::arm_earlier(&mut t.send_timer, next) {
            push.push((next, TfrcTimer::Send(f)));
        }
        if let Some(at) = t.sender.poll_timeout().map(|at| at.max(now)) {
            if at < end && crate::timer::arm_earlier(&mut t.nofeedback_timer, at) {
                push.push((at, TfrcTimer::NoFeedback(f)));
            }
        }
        for (at, timer) in push {
            self.events.push(at, Event::Agent(AgentTimer::Tfrc(timer)));
        }
    }

    /// Sends the report flow `f`'s receiver wants sent now and arms its feedback timer.
    fn pump_tfrc_receiver(&mut self, f: FlowId) -> Result<(), CaptureError> {
        let now = self.now;
        let end = self.end;
        let Some(flow) = self.flows.get_mut(f as usize) else {
            return Ok(());
        };
        let (src, dst) = (flow.src, flow.dst);
        let Agent::Tfrc(t) = &mut flow.agent else {
            return Ok(());
        };
        let report = t.receiver.poll_feedback(now).map(|fb| {
            Packet::new(
                dst,
                src,
                f,
                FEEDBACK_SIZE,
                now,
                Transport::TfrcFeedback {
                    t_recvdata: fb.t_recvdata,
                    t_delay: fb.t_delay,
                    x_recv: fb.x_recv,
                    p_bits: fb.p.to_bits(),
                },
            )
        });
        let mut arm = None;
        if let Some(at) = t.receiver.poll_timeout() {
            // A report still due now waits for the next data packet (nothing new to report).
            let at = if at <= now && report.is_some() {
                Some(now)
            } else if at > now {
                Some(at)
            } else {
                None
            };
            if let Some(at) = at.filter(|&a| a < end) {
                if crate::timer::arm_earlier(&mut t.feedback_timer, at) {
                    arm = Some(at);
                }
            }
        }
        if let Some(at) = arm {
            self.events
                .push(at, Event::Agent(AgentTimer::Tfrc(TfrcTimer::Feedback(f))));
        }
        if let Some(p) = report {
            self.forward(dst, p)?;
        }
        Ok(())
    }

    /// A TFRC packet reached its destination host.
    pub(super) fn deliver_tfrc(&mut self, pkt: Packet) -> Result<(), CaptureError> {
        let now = self.now;
        let after_warmup = now >= self.warmup;
        let f = pkt.flow;
        let Some(flow) = self.flows.get_mut(f as usize) else {
            return Ok(());
        };
        let Agent::Tfrc(t) = &mut flow.agent else {
            return Ok(());
        };
        match pkt.transport {
            Transport::TfrcData { header, len } => {
                let kind = t
                    .receiver
                    .on_data(now, &header, pkt.size as u64, pkt.ecn == Ecn::Ce);
                if kind == Arrival::New {
                    t.received += 1;
                    flow.delivered += len as u64;
                    flow.goodput.add(now, len as u64);
                    if after_warmup {
                        flow.network.record(now.saturating_since(pkt.created));
                    }
                }
                self.pump_tfrc_receiver(f)
            }
            Transport::TfrcFeedback {
                t_recvdata,
                t_delay,
                x_recv,
                p_bits,
            } => {
                let fb = Feedback {
                    t_recvdata,
                    t_delay,
                    x_recv,
                    p: f64::from_bits(p_bits),
                };
                if t.sender.on_feedback(now, &fb).is_err() {
                    t.refused_feedback += 1;
                } else {
                    t.rate_trace.push((now, t.sender.rate().bps()));
                }
                self.arm_tfrc_sender(f);
                Ok(())
            }
            _ => Ok(()),
        }
    }
}
