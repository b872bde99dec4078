//! The scheduler of one macroflow (paper section 2.4): it paces grants at the macroflow's rate
//! and shares them among the macroflow's flows by weight.
//!
//! The paper's CM "internally schedules all requests using a Hierarchical Round Robin (HRR)
//! Scheduler" that "apportions bandwidth among flows in proportion to pre-configured weights, as
//! well as receiver hints". concord's hierarchy has two levels: macroflows, each paced on its
//! own at its own rate; and within a macroflow, a weighted round robin among the flows with
//! pending requests, in the deficit form (each visit credits a flow with `MTU * weight /
//! smallest weight` bytes and serves it while its credit covers the next grant), which gives
//! every backlogged flow a byte share proportional to its weight.
//!
//! Pacing: a grant of `g` bytes is followed by a gap of `g * 8 / rate` before the next grant of
//! the macroflow, so grants never come in bursts and credit never accumulates while the
//! macroflow is idle. A grant is at most one MTU (RFC 3124 section 4.2: each `cmapp_send()`
//! permits one MTU). The application reports each transmission with `notify` (RFC 3124
//! `cm_notify`): a grant reported with fewer bytes returns the unused part of its gap to the
//! macroflow, bytes sent beyond any grant (an application that sends at its `cm_query` rate
//! without requests) take their gap from it, and a grant not reported within its lifetime
//! expires and may no longer be used (bytes sent on it later are charged as ungranted).

use super::macroflow::FlowId;
use crate::time::{Duration, Instant};
use crate::units::{Bytes, Rate};
use std::collections::{BTreeMap, BTreeSet, VecDeque};

/// The smallest and the largest weight (and receiver hint) accepted.
pub const WEIGHT_RANGE: (f64, f64) = (1e-3, 1e6);

/// A grant: `app_notify(nallowed)` of the paper, `cmapp_send()` of RFC 3124.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Grant {
    /// The flow that may send.
    pub flow: FlowId,
    /// How many bytes it may send, at most one MTU.
    pub bytes: Bytes,
}

/// A flow's place in the scheduler.
#[derive(Clone, Debug)]
pub struct FlowQueue {
    /// The configured weight.
    weight: f64,
    /// The receiver's hint, a multiplier of the weight (1 if none).
    hint: f64,
    /// Bytes requested and not yet granted.
    pending: Bytes,
    /// Deficit round robin credit, in bytes.
    deficit: f64,
    /// Grants not yet reported: (bytes, expiry), oldest first.
    grants: VecDeque<(Bytes, Instant)>,
}

impl FlowQueue {
    /// A flow with `weight`, no hint, nothing requested.
    pub fn new(weight: f64) -> FlowQueue {
        FlowQueue {
            weight,
            hint: 1.0,
            pending: 0,
            deficit: 0.0,
            grants: VecDeque::new(),
        }
    }

    /// The weight the scheduler uses: configured weight times receiver hint.
    pub fn effective_weight(&self) -> f64 {
        self.weight * self.hint
    }

    /// Bytes requested and not yet granted.
    pub fn pending(&self) -> Bytes {
        self.pending
    }
}

/// Paces grants for one macroflow and shares them among its flows.
#[derive(Clone, Debug)]
pub struct Scheduler {
    /// The largest grant, in bytes.
    mtu: Bytes,
    /// How long a grant stays usable.
    grant_lifetime: Duration,
    /// The pacing rate.
    rate: Rate,
    /// The earliest time of the next grant.
    next_slot: Instant,
    /// Every flow of the macroflow.
    flows: BTreeMap<FlowId, FlowQueue>,
    /// Flows with pending bytes, in round-robin order; the front is being served.
    active: VecDeque<FlowId>,
    /// The front flow has received its credit for this visit.
    front_credited: bool,
    /// The sum of the effective weights of all flows, kept up to date when a flow comes, goes
    /// or changes weight, so that a flow's share costs O(1) rather than a pass over every flow.
    total_weight: f64,
    /// How many flows have an effective weight other than 1: with none, the sum of the weights
    /// in flow order is the number of flows, exactly, and costs no pass over them.
    non_unit: usize,
    /// Each flow's oldest outstanding grant by its expiry: the grants that can expire first
    /// (a flow's grants expire in the order they were given).
    expiries: BTreeSet<(Instant, FlowId)>,
}

impl Scheduler {
    /// A scheduler with no flows, pacing at `rate`.
    pub fn new(mtu: Bytes, grant_lifetime: Duration, rate: Rate) -> Scheduler {
        Scheduler {
            mtu: mtu.max(1),
            grant_lifetime,
            rate,
            next_slot: Instant::ZERO,
            flows: BTreeMap::new(),
            active: VecDeque::new(),
            front_credited: false,
            total_weight: 0.0,
            non_unit: 0,
            expiries: BTreeSet::new(),
        }
    }

    /// The pacing rate.
    pub fn rate(&self) -> Rate {
        self.rate
    }

    /// The earliest time of the next grant.
    pub fn next_slot(&self) -> Instant {
        self.next_slot
    }

    /// The flow's queue, if it is here.
    pub fn flow(&self, flow: FlowId) -> Option<&FlowQueue> {
        self.flows.get(&flow)
    }

    /// Adds a flow (with its queue, when it moves from another macroflow).
    pub fn add_flow(&mut self, flow: FlowId, queue: FlowQueue) {
        let backlogged = queue.pending > 0;
        self.unfile_expiry(flow);
        self.non_unit += usize::from(queue.effective_weight() != 1.0);
        if let Some(old) = self.flows.insert(flow, queue) {
            self.non_unit -= usize::from(old.effective_weight() != 1.0);
        }
        self.file_expiry(flow);
        if backlogged && !self.active.contains(&flow) {
            self.active.push_back(flow);
        }
        self.sum_weights();
    }

    /// Removes a flow and returns its queue.
    pub fn remove_flow(&mut self, flow: FlowId) -> Option<FlowQueue> {
        self.unfile_expiry(flow);
        let q = self.flows.remove(&flow)?;
        self.non_unit -= usize::from(q.effective_weight() != 1.0);
        if self.active.front() == Some(&flow) {
            self.front_credited = false;
        }
        self.active.retain(|f| *f != flow);
        self.sum_weights();
        Some(q)
    }

    /// Sums the effective weights of all flows into `total_weight`, in flow order (the same
    /// sum, to the last bit, whenever the flows and weights are the same).
    fn sum_weights(&mut self) {
        self.total_weight = if self.non_unit == 0 && !self.flows.is_empty() {
            // 1 + 1 + ... in f64 is exact up to 2^53 flows.
            self.flows.len() as f64
        } else {
            self.flows.values().map(FlowQueue::effective_weight).sum()
        };
    }

    /// Files the flow's oldest grant under its expiry.
    fn file_expiry(&mut self, flow: FlowId) {
        if let Some((_, at)) = self.flows.get(&flow).and_then(|q| q.grants.front()) {
            self.expiries.insert((*at, flow));
        }
    }

    /// Takes the flow's oldest grant out of the expiry order (before its grants change).
    fn unfile_expiry(&mut self, flow: FlowId) {
        if let Some((_, at)) = self.flows.get(&flow).and_then(|q| q.grants.front()) {
            self.expiries.remove(&(*at, flow));
        }
    }

    /// Sets a flow's effective weight by `change`, keeping the count of non-unit weights.
    fn reweight(&mut self, flow: FlowId, change: impl FnOnce(&mut FlowQueue)) {
        if let Some(q) = self.flows.get_mut(&flow) {
            self.non_unit -= usize::from(q.effective_weight() != 1.0);
            change(q);
            self.non_unit += usize::from(q.effective_weight() != 1.0);
        }
        self.sum_weights();
    }

    /// The sum of the effective weights of all flows.
    pub fn total_weight(&self) -> f64 {
        self.total_weight
    }

    /// The flow's share of the macroflow's rate: its effective weight over the sum of all
    /// flows' (paper section 2.4), whether or not they have requests pending, so that a flow
    /// that sends at its `cm_query` rate without requests keeps its share.
    pub fn share(&self, flow: FlowId) -> Option<f64> {
        let q = self.flows.get(&flow)?;
        let total = self.total_weight();
        Some(if total > 0.0 {
            q.effective_weight() / total
        } else {
            0.0
        })
    }

    /// Sets the configured weight of a flow (already checked against [`WEIGHT_RANGE`]).
    pub fn set_weight(&mut self, flow: FlowId, weight: f64) {
        self.reweight(flow, |q| q.weight = weight);
    }

    /// Sets the receiver hint of a flow (already checked against [`WEIGHT_RANGE`]).
    pub fn set_hint(&mut self, flow: FlowId, hint: f64) {
        self.reweight(flow, |q| q.hint = hint);
    }

    /// Adds `nbytes` to the flow's pending request (`cm_request`).
    pub fn request(&mut self, flow: FlowId, nbytes: Bytes) {
        let Some(q) = self.flows.get_mut(&flow) else {
            return;
        };
        if nbytes == 0 {
            return;
        }
        if q.pending == 0 {
            self.active.push_back(flow);
        }
        q.pending = q.pending.saturating_add(nbytes);
    }

    /// The gap `bytes` take at the current rate.
    fn gap(&self, bytes: Bytes) -> Duration {
        self.rate.transmit_time(bytes)
    }

    /// The flow reports `nsent` bytes sent at `now` (`cm_notify`). It settles the oldest
    /// outstanding grant: unused bytes of it give their gap back (never before `now`), bytes
    /// beyond it (or without any grant) take their gap, after the slot a waiting flow is due.
    pub fn notify(&mut self, now: Instant, flow: FlowId, nsent: Bytes) {
        self.unfile_expiry(flow);
        let granted = self
            .flows
            .get_mut(&flow)
            .and_then(|q| q.grants.pop_front())
            .map_or(0, |(b, _)| b);
        self.file_expiry(flow);
        if nsent < granted {
            let back = self.gap(granted - nsent);
            self.next_slot = (self.next_slot - back).max(now);
        } else if nsent > granted {
            let extra = self.gap(nsent - granted);
            // A flow with a request pending holds the slot: a grant due at `next_slot` and
            // not yet handed out (a timer that fired late) moves back by these bytes' gap
            // alone, so that the ungranted bytes take their own time and not also the time
            // the waiting flow was owed (section 2.4: the rate is shared by weight among the
            // flows with data). With nobody waiting the macroflow was idle, and its time
            // before `now` is not credit.
            let from = if self.active.is_empty() {
                self.next_slot.max(now)
            } else {
                self.next_slot
            };
            self.next_slot = from + extra;
        }
    }

    /// Changes the pacing rate at `now`; the wait for the next grant is rescaled to the new rate
    /// so that a grant taken at a low rate does not hold back the macroflow once it is faster.
    pub fn set_rate(&mut self, now: Instant, rate: Rate) {
        if rate == self.rate {
            return;
        }
        if self.next_slot > now && rate.bps() > 0 {
            let wait = (self.next_slot - now).as_nanos() as u128;
            // Rounded up, as `transmit_time` is, so that a rescaled gap is never shorter than
            // the gap the new rate gives.
            let scaled = (wait * self.rate.bps() as u128).div_ceil(rate.bps() as u128);
            let scaled = u64::try_from(scaled).unwrap_or(u64::MAX);
            self.next_slot = now + Duration::from_nanos(scaled);
        }
        self.rate = rate;
    }

    /// The next grant, if one is due at `now`: the weighted round robin picks the flow, the
    /// grant is `min(pending, MTU)`, and the next slot moves one gap on.
    pub fn poll_grant(&mut self, now: Instant) -> Option<Grant> {
        if now < self.next_slot || self.active.is_empty() || self.rate.bps() == 0 {
            return None;
        }
        // With every weight 1 (`non_unit` 0) the smallest is 1, without a pass over the flows.
        let min_weight = if self.non_unit == 0 {
            1.0
        } else {
            self.active
                .iter()
                .filter_map(|f| self.flows.get(f))
                .map(FlowQueue::effective_weight)
                .fold(f64::INFINITY, f64::min)
        };
        // Each visit credits at least one MTU, so every flow is served within one round: the
        // loop ends within `active.len() + 1` turns.
        for _ in 0..=self.active.len() {
            let flow = *self.active.front()?;
            let Some(q) = self.flows.get_mut(&flow) else {
                self.active.pop_front();
                self.front_credited = false;
                continue;
            };
            let bytes = q.pending.min(self.mtu);
            if !self.front_credited {
                q.deficit += self.mtu as f64 * q.effective_weight() / min_weight;
                self.front_credited = true;
            }
            if q.deficit + 1e-9 >= bytes as f64 {
                q.deficit -= bytes as f64;
                q.pending -= bytes;
                let expires = now + self.grant_lifetime;
                if q.grants.is_empty() {
                    self.expiries.insert((expires, flow));
                }
                q.grants.push_back((bytes, expires));
                if q.pending == 0 {
                    q.deficit = 0.0;
                    self.active.pop_front();
                    self.front_credited = false;
                }
                self.next_slot = now + self.gap(bytes);
                return Some(Grant { flow, bytes });
            }
            self.active.rotate_left(1);
            self.front_credited = false;
        }
        None
    }

    /// Removes the grants whose lifetime ended by `now` (RFC 3124 grant expiry) and returns
    /// them, in flow order.
    pub fn expire(&mut self, now: Instant) -> Vec<Grant> {
        if self.expiries.first().is_none_or(|(at, _)| *at > now) {
            // Nothing expires yet: no walk, no allocation.
            return Vec::new();
        }
        let mut due: Vec<FlowId> = self
            .expiries
            .range(..=(now, FlowId(u32::MAX)))
            .map(|(_, f)| *f)
            .collect();
        due.sort_unstable();
        let mut expired = Vec::new();
        for flow in due {
            self.unfile_expiry(flow);
            if let Some(q) = self.flows.get_mut(&flow) {
                while q.grants.front().is_some_and(|(_, at)| *at <= now) {
                    if let Some((bytes, _)) = q.grants.pop_front() {
                        expired.push(Grant { flow, bytes });
                    }
                }
            }
            self.file_expiry(flow);
        }
        expired
    }

    /// When the scheduler next needs the clock: the next slot if a flow is waiting, or the
    /// earliest grant expiry.
    pub fn next_timeout(&self) -> Option<Instant> {
        let slot = (!self.active.is_empty() && self.rate.bps() > 0).then_some(self.next_slot);
        let expiry = self.expiries.first().map(|(at, _)| *at);
        [slot, expiry].into_iter().flatten().min()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MTU: Bytes = 1000;

    fn f(n: u32) -> FlowId {
        FlowId(n)
    }

    fn sched(rate: Rate) -> Scheduler {
        Scheduler::new(MTU, Duration::from_millis(100), rate)
    }

    /// Runs the scheduler from `start` for `grants` grants, jumping to each next timeout and
    /// reporting every grant as used at once. Returns (time, grant) pairs.
    fn drive(s: &mut Scheduler, start: Instant, grants: usize) -> Vec<(Instant, Grant)> {
        let mut now = start;
        let mut out = Vec::new();
        while out.len() < grants {
            while let Some(g) = s.poll_grant(now) {
                s.notify(now, g.flow, g.bytes);
                out.push((now, g));
            }
            match s.next_timeout() {
                Some(t) if t > now => now = t,
                _ => break,
            }
        }
        out
    }

    #[test]
    fn weights_1_2_3_give_grant_bytes_in_that_ratio_within_2_percent() {
        let mut s = sched(Rate::from_mbps(8));
        for (i, w) in [1.0, 2.0, 3.0].into_iter().enumerate() {
            s.add_flow(f(i as u32), FlowQueue::new(w));
            s.request(f(i as u32), u64::MAX / 4);
        }
        let grants = drive(&mut s, Instant::ZERO, 60_000);
        let mut bytes = [0u64; 3];
        for (_, g) in &grants {
            bytes[g.flow.0 as usize] += g.bytes;
        }
        for (i, w) in [1.0, 2.0, 3.0].into_iter().enumerate() {
            let share = bytes[i] as f64 / bytes[0] as f64;
            assert!((share / w - 1.0).abs() < 0.02, "flow {i}: {bytes:?}");
        }
    }

    #[test]
    fn fractional_weights_and_receiver_hints_share_in_proportion() {
        let mut s = sched(Rate::from_mbps(8));
        s.add_flow(f(0), FlowQueue::new(0.5));
        s.add_flow(f(1), FlowQueue::new(1.0));
        s.set_hint(f(1), 1.5); // effective 1.5 against 0.5: 3 to 1
        s.request(f(0), u64::MAX / 4);
        s.request(f(1), u64::MAX / 4);
        let grants = drive(&mut s, Instant::ZERO, 40_000);
        let b1 = grants.iter().filter(|(_, g)| g.flow == f(1)).count() as f64;
        let b0 = grants.len() as f64 - b1;
        assert!((b1 / b0 / 3.0 - 1.0).abs() < 0.02, "{b1} vs {b0}");
        assert_eq!(s.share(f(1)), Some(0.75));
    }

    #[test]
    fn grants_are_paced_no_two_grants_closer_than_mtu_over_rate() {
        let rate = Rate::from_mbps(1);
        let mut s = sched(rate);
        s.add_flow(f(0), FlowQueue::new(1.0));
        s.add_flow(f(1), FlowQueue::new(1.0));
        s.request(f(0), 50 * MTU);
        s.request(f(1), 50 * MTU);
        let grants = drive(&mut s, Instant::from_millis(3), 100);
        assert_eq!(grants.len(), 100);
        let gap = rate.transmit_time(MTU); // 8 ms
        assert_eq!(gap, Duration::from_millis(8));
        for w in grants.windows(2) {
            assert!(w[1].0 - w[0].0 >= gap, "{:?} then {:?}", w[0], w[1]);
        }
        // Exactly paced: 100 grants in 99 gaps.
        assert_eq!(grants[99].0 - grants[0].0, gap * 99);
        assert!(grants.iter().all(|(_, g)| g.bytes == MTU));
    }

    #[test]
    fn a_short_request_gets_a_short_grant_and_a_short_gap() {
        let rate = Rate::from_mbps(1);
        let mut s = sched(rate);
        s.add_flow(f(0), FlowQueue::new(1.0));
        s.request(f(0), 2 * MTU + 250);
        let grants = drive(&mut s, Instant::ZERO, 3);
        let sizes: Vec<Bytes> = grants.iter().map(|(_, g)| g.bytes).collect();
        assert_eq!(sizes, [MTU, MTU, 250]);
        assert_eq!(s.next_slot(), grants[2].0 + rate.transmit_time(250));
    }

    #[test]
    fn an_unused_grant_returns_its_gap_and_ungranted_bytes_take_one() {
        let rate = Rate::from_mbps(1);
        let mut s = sched(rate);
        s.add_flow(f(0), FlowQueue::new(1.0));
        s.request(f(0), MTU);
        let t0 = Instant::from_millis(10);
        assert!(s.poll_grant(t0).is_some());
        assert_eq!(s.next_slot(), t0 + Duration::from_millis(8));
        s.notify(t0, f(0), 0);
        assert_eq!(s.next_slot(), t0, "the whole gap is given back");
        // A flow that sends without a grant (cm_query style) uses the macroflow's time.
        s.notify(t0, f(0), 500);
        assert_eq!(s.next_slot(), t0 + Duration::from_millis(4));
    }

    #[test]
    fn ungranted_bytes_move_a_due_grant_back_by_their_own_gap_only() {
        // 1 Mbit/s: 1000 bytes take 8 ms. Flow 0 (granted, as a UDP client) is backlogged;
        // flow 1 sends without grants (as a kernel TCP socket) and reports what it sent.
        let mut s = sched(Rate::from_mbps(1));
        s.add_flow(f(0), FlowQueue::new(1.0));
        s.add_flow(f(1), FlowQueue::new(1.0));
        s.request(f(0), 10 * MTU);
        assert!(s.poll_grant(Instant::ZERO).is_some());
        s.notify(Instant::ZERO, f(0), MTU);
        assert_eq!(s.next_slot(), Instant::from_millis(8));
        // Flow 0's next grant falls due at 8 ms; the timer is 1 ms late, and flow 1's 1000
        // bytes are reported first, at 9 ms. They take 8 ms of the macroflow from the due
        // slot: the grant is due at 16 ms, not at 9 + 8 = 17 ms.
        s.notify(Instant::from_millis(9), f(1), MTU);
        assert_eq!(s.next_slot(), Instant::from_millis(16));
        assert_eq!(s.poll_grant(Instant::from_millis(15)), None);
        assert_eq!(
            s.poll_grant(Instant::from_millis(16)),
            Some(Grant {
                flow: f(0),
                bytes: MTU
            })
        );
    }

    #[test]
    fn ungranted_bytes_of_an_idle_macroflow_take_their_gap_from_now() {
        // Nobody waits: the 6 ms since the last slot are not credit.
        let mut s = sched(Rate::from_mbps(1));
        s.add_flow(f(0), FlowQueue::new(1.0));
        s.add_flow(f(1), FlowQueue::new(1.0));
        s.request(f(0), MTU);
        assert!(s.poll_grant(Instant::ZERO).is_some());
        s.notify(Instant::ZERO, f(0), MTU);
        s.notify(Instant::from_millis(14), f(1), MTU);
        assert_eq!(s.next_slot(), Instant::from_millis(22));
    }

    #[test]
    fn grants_expire_in_flow_order_and_the_oldest_sets_the_timeout() {
        // Grant lifetime 100 ms (see `sched`); 1 Mbit/s: one 1000-byte grant each 8 ms.
        let mut s = sched(Rate::from_mbps(1));
        for n in [2, 0, 1] {
            s.add_flow(f(n), FlowQueue::new(1.0));
        }
        // Flow 2 is granted at 0 ms and 16 ms, flow 0 at 8 ms; flow 1 nothing.
        s.request(f(2), MTU);
        assert!(s.poll_grant(Instant::ZERO).is_some());
        s.request(f(0), MTU);
        assert!(s.poll_grant(Instant::from_millis(8)).is_some());
        s.request(f(2), MTU);
        assert!(s.poll_grant(Instant::from_millis(16)).is_some());
        assert_eq!(s.next_timeout(), Some(Instant::from_millis(100)));
        // Flow 2 reports its first grant: flow 0's, at 108 ms, is now the oldest.
        s.notify(Instant::from_millis(20), f(2), MTU);
        assert_eq!(s.next_timeout(), Some(Instant::from_millis(108)));
        let g = |n, bytes| Grant { flow: f(n), bytes };
        assert_eq!(
            s.expire(Instant::from_millis(116)),
            vec![g(0, MTU), g(2, MTU)]
        );
        assert_eq!(s.next_timeout(), None);
        // A flow removed with an outstanding grant takes it along.
        s.request(f(1), MTU);
        assert!(s.poll_grant(Instant::from_millis(200)).is_some());
        assert_eq!(s.next_timeout(), Some(Instant::from_millis(300)));
        assert!(s.remove_flow(f(1)).is_some());
        assert_eq!(s.next_timeout(), None);
    }

    #[test]
    fn the_sum_of_weights_follows_weights_hints_and_removals() {
        let mut s = sched(Rate::from_mbps(1));
        for n in 0..3 {
            s.add_flow(f(n), FlowQueue::new(1.0));
        }
        assert_eq!(s.total_weight(), 3.0);
        s.set_weight(f(1), 2.5);
        assert_eq!(s.total_weight(), 4.5);
        s.set_hint(f(1), 0.4);
        assert_eq!(s.total_weight(), 1.0 + 2.5 * 0.4 + 1.0);
        s.remove_flow(f(0));
        s.set_hint(f(1), 1.0);
        assert_eq!(s.total_weight(), 3.5);
        s.set_weight(f(1), 1.0);
        assert_eq!(s.total_weight(), 2.0);
        assert_eq!(s.share(f(2)), Some(0.5));
    }

    #[test]
    fn a_grant_not_reported_within_its_lifetime_expires() {
        let mut s = sched(Rate::from_mbps(1));
        s.add_flow(f(0), FlowQueue::new(1.0));
        s.request(f(0), MTU);
        let g = s.poll_grant(Instant::ZERO);
        assert_eq!(
            g,
            Some(Grant {
                flow: f(0),
                bytes: MTU
            })
        );
        assert_eq!(s.next_timeout(), Some(Instant::from_millis(100)));
        assert!(s.expire(Instant::from_millis(99)).is_empty());
        assert_eq!(
            s.expire(Instant::from_millis(100)),
            vec![Grant {
                flow: f(0),
                bytes: MTU
            }]
        );
        assert_eq!(s.next_timeout(), None);
        // Sending on it afterwards is charged as sending without a grant.
        let t = Instant::from_millis(150);
        s.notify(t, f(0), MTU);
        assert_eq!(s.next_slot(), t + Duration::from_millis(8));
    }

    #[test]
    fn a_faster_rate_shortens_the_wait_for_the_next_grant() {
        let mut s = sched(Rate::from_kbps(100));
        s.add_flow(f(0), FlowQueue::new(1.0));
        s.request(f(0), 2 * MTU);
        assert!(s.poll_grant(Instant::ZERO).is_some());
        assert_eq!(s.next_slot(), Instant::from_millis(80));
        s.set_rate(Instant::from_millis(40), Rate::from_kbps(400));
        // 40 ms left at 100 kbit/s is 10 ms at 400 kbit/s.
        assert_eq!(s.next_slot(), Instant::from_millis(50));
    }

    #[test]
    fn removing_a_flow_removes_it_from_the_round() {
        let mut s = sched(Rate::from_mbps(8));
        s.add_flow(f(0), FlowQueue::new(1.0));
        s.add_flow(f(1), FlowQueue::new(1.0));
        s.request(f(0), 10 * MTU);
        s.request(f(1), 10 * MTU);
        let q = s.remove_flow(f(0));
        assert_eq!(q.map(|q| q.pending()), Some(10 * MTU));
        let grants = drive(&mut s, Instant::ZERO, 10);
        assert!(grants.iter().all(|(_, g)| g.flow == f(1)));
        assert_eq!(s.share(f(1)), Some(1.0));
        assert_eq!(s.share(f(0)), None);
    }
}
