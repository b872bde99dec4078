//! Flows, their keys, and macroflows: the unit that shares one congestion state (RFC 3124
//! section 4.5; paper sections 2.3 and 3).
//!
//! By default all flows to one destination host form one macroflow, which holds the congestion
//! state for the path: the AIMD, exponential aging and the scheduler that shares the rate among
//! the flows. Flows are keyed by more than the host (paper section 2.3: "keyed not by host
//! address but by some combination of address, port numbers and flow identifiers") so that an
//! application, or segregation, can group and split them.

use super::aging::Aging;
use super::aimd::Aimd;
use super::probe::FlowTag;
use super::scheduler::Scheduler;
use super::thresh_index::ThreshIndex;
use crate::rate::RateController;
use crate::time::Instant;
use crate::units::Rate;
use std::collections::BTreeSet;
use std::fmt;
use std::net::Ipv4Addr;

/// What identifies a flow (RFC 3124 `cm_open(srcaddr, dstaddr, srcport, dstport)`; the source
/// address is the sending host's own).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct FlowKey {
    /// The receiving host.
    pub dst: Ipv4Addr,
    /// The receiver's port.
    pub dst_port: u16,
    /// The sender's port.
    pub src_port: u16,
    /// A flow identifier that tells apart flows on the same ports (0 if unused).
    pub flow_id: u32,
}

impl FlowKey {
    /// A key for the flow from `src_port` to `dst:dst_port`, flow identifier 0.
    pub const fn new(dst: Ipv4Addr, dst_port: u16, src_port: u16) -> FlowKey {
        FlowKey {
            dst,
            dst_port,
            src_port,
            flow_id: 0,
        }
    }

    /// The part of the key the receiver sees and reports in probe responses.
    pub fn tag(&self) -> FlowTag {
        FlowTag {
            src_port: self.src_port,
            dst_port: self.dst_port,
            flow_id: self.flow_id,
        }
    }

    /// The key of the flow `tag` to `dst`.
    pub fn from_tag(dst: Ipv4Addr, tag: FlowTag) -> FlowKey {
        FlowKey {
            dst,
            dst_port: tag.dst_port,
            src_port: tag.src_port,
            flow_id: tag.flow_id,
        }
    }
}

impl fmt::Display for FlowKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            ":{} -> {}:{} #{}",
            self.src_port, self.dst, self.dst_port, self.flow_id
        )
    }
}

/// A flow's handle (RFC 3124 `cm_flowid`), never reused by one manager.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct FlowId(pub u32);

impl fmt::Display for FlowId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "flow {}", self.0)
    }
}

/// A macroflow's handle (RFC 3124 `cm_mflowid`), never reused by one manager.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct MacroflowId(pub u32);

impl fmt::Display for MacroflowId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "macroflow {}", self.0)
    }
}

/// A group of flows that share one congestion state.
#[derive(Clone, Debug)]
pub struct Macroflow {
    /// Its handle.
    pub(super) id: MacroflowId,
    /// The destination it was created for.
    pub(super) dst: Ipv4Addr,
    /// Its flows.
    pub(super) flows: BTreeSet<FlowId>,
    /// The rate-based AIMD (paper section 2.1).
    pub(super) aimd: Aimd,
    /// Exponential aging (paper section 2.2.3).
    pub(super) aging: Aging,
    /// Pacing and sharing (paper section 2.4).
    pub(super) scheduler: Scheduler,
    /// The floor of the aged rate.
    pub(super) min_rate: Rate,
    /// When its last flow left; `None` while it has flows.
    pub(super) emptied_at: Option<Instant>,
    /// Its flows by where their `ChangeRate` thresholds fire.
    pub(super) thresh_index: ThreshIndex,
    /// [`Macroflow::next_timeout`] as of the last change ([`Macroflow::file_deadline`]), so
    /// that the manager's `poll_timeout` after each request reads it rather than working it
    /// out again for every macroflow.
    pub(super) deadline: Option<Instant>,
}

impl Macroflow {
    /// Its handle.
    pub fn id(&self) -> MacroflowId {
        self.id
    }

    /// The destination it was created for.
    pub fn dst(&self) -> Ipv4Addr {
        self.dst
    }

    /// Its flows, in handle order.
    pub fn flows(&self) -> impl Iterator<Item = FlowId> + '_ {
        self.flows.iter().copied()
    }

    /// The AIMD state.
    pub fn aimd(&self) -> &Aimd {
        &self.aimd
    }

    /// The aging state.
    pub fn aging(&self) -> &Aging {
        &self.aging
    }

    /// The scheduler.
    pub fn scheduler(&self) -> &Scheduler {
        &self.scheduler
    }

    /// The rate the macroflow may send at: the AIMD's `cwnd / srtt` after aging's halvings, but
    /// not below the configured floor (unless the AIMD's own rate is lower), so that aging slows
    /// transmissions without stalling them (paper section 2.2.3).
    pub fn rate(&self) -> Rate {
        let full = self.aimd.rate();
        self.aging.apply(full).max(self.min_rate.min(full))
    }

    /// Brings aging up to `now` and hands the current rate to the scheduler.
    pub(super) fn refresh(&mut self, now: Instant) {
        self.aging.advance(now, &self.aimd.rtt_summary());
        let rate = self.rate();
        self.scheduler.set_rate(now, rate);
    }

    /// Feedback arrived at `now`: the aging in force is folded into the AIMD's window.
    pub(super) fn on_feedback(&mut self, now: Instant) {
        let k = self.aging.on_feedback(now, &self.aimd.rtt_summary());
        self.aimd.on_aged(k);
    }

    /// Files [`Macroflow::next_timeout`] as its deadline; call after every change to its
    /// scheduler, AIMD or aging.
    pub(super) fn file_deadline(&mut self) {
        self.deadline = self.next_timeout();
    }

    /// When the macroflow next needs the clock: a grant, a grant expiry or a halving.
    pub(super) fn next_timeout(&self) -> Option<Instant> {
        let halving = self.aging.next_halving(&self.aimd.rtt_summary());
        [self.scheduler.next_timeout(), halving]
            .into_iter()
            .flatten()
            .min()
    }
}
