//! The TCP timers due next read ahead, in a network of many flows.
//!
//! A TCP sender's retransmission timer and a receiver's delayed-ACK timer wait in the far
//! timers' heap. In a network of thousands of flows the flow whose timer fires next is cold:
//! its handler first reads the flow's entry, then the transport state behind the entry's
//! pointer, two misses one after the other. The far timers that come out next are known (the
//! top of their heap and its children), and the next far timer usually fires many events
//! later, so each TCP timer as it fires fetches the transport state of the next timer's flow
//! (whose entry it fetched when that timer was second in line) and the entries of the two
//! after it.

use super::agents::AgentTimer;
use super::{Event, Simulator};
use crate::packet::FlowId;

/// The flow of a TCP timer, and true for a sender's.
#[inline]
fn tcp_timer(e: &Event) -> Option<(FlowId, bool)> {
    match *e {
        Event::Agent(AgentTimer::TcpSender(f)) => Some((f, true)),
        Event::Agent(AgentTimer::TcpReceiver(f)) => Some((f, false)),
        _ => None,
    }
}

impl Simulator {
    /// With [`PIPELINED_READ_AHEAD_FLOWS`](super::crossing::PIPELINED_READ_AHEAD_FLOWS) flows
    /// or more, prefetches what the far timers due next read: the transport state of the next
    /// one's flow, the first lines of the two after it. Hints: nothing changes.
    #[inline]
    pub(super) fn read_timers_ahead(&self) {
        if !self.pipelined_read_ahead {
            return;
        }
        let mut ahead = self.events.far_ahead();
        if let Some((f, sender)) = ahead.next().and_then(tcp_timer) {
            if let Some(fl) = self.flows.get(f as usize) {
                fl.prefetch_agent(sender);
            }
        }
        for (f, _) in ahead.filter_map(tcp_timer) {
            if let Some(fl) = self.flows.get(f as usize) {
                fl.prefetch_entry();
            }
        }
    }
}
