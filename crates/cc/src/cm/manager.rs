//! [`CongestionManager`]: the sender-side CM of the paper (Fig. 1, Fig. 8) and RFC 3124.

use super::aging::Aging;
use super::aimd::Aimd;
use super::api::{
    CmError, CmEvent, CmStats, CmUpdate, FeedbackError, FeedbackMode, LossMode, QueryResult,
};
use super::config::{CmConfig, CmConfigError};
use super::macroflow::{FlowId, FlowKey, Macroflow, MacroflowId};
use super::probe::{NonceSource, ProbeKey, ProbeMessage, Response};
use super::prober::{Prober, ResponseError};
use super::scheduler::{FlowQueue, Scheduler, WEIGHT_RANGE};
use super::segregation::{FlowSample, Segregator};
use super::thresh::{RateReport, ThreshHint};
use super::thresh_index::ThreshIndex;
use crate::rate::{CongestionSignal, RateController};
use crate::rng::Rng;
use crate::time::Instant;
use crate::units::Bytes;
use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::net::Ipv4Addr;

/// What the manager keeps per open flow.
#[derive(Clone, Debug)]
struct FlowState {
    /// The flow's key.
    key: FlowKey,
    /// The macroflow it belongs to.
    macroflow: MacroflowId,
    /// Placed by `set_macroflow`: segregation leaves it where the application put it.
    pinned: bool,
    /// Where its feedback comes from.
    feedback: FeedbackMode,
    /// Its `cm_thresh` factors.
    thresh: ThreshHint,
    /// The values last reported with `ChangeRate`.
    reported: Option<RateReport>,
}

/// The Congestion Manager of one sending host, as a sans-IO state machine.
///
/// The host drives it: every call takes `now`; callbacks come back as [`CmEvent`]s from
/// [`CongestionManager::poll_event`]; [`CongestionManager::poll_timeout`] says when to call
/// [`CongestionManager::on_timeout`] (pacing, grant expiry, aging, probes); probe responses go
/// in with [`CongestionManager::on_datagram`].
///
/// The API follows the paper's Fig. 8 and RFC 3124 section 4: [`open`](Self::open),
/// [`request`](Self::request) (answered by [`CmEvent::AppNotify`] grants),
/// [`notify`](Self::notify), [`update`](Self::update), [`query`](Self::query),
/// [`close`](Self::close), [`set_macroflow`](Self::set_macroflow) and
/// [`get_macroflow`](Self::get_macroflow), [`thresh`](Self::thresh) (which governs
/// [`CmEvent::ChangeRate`]).
///
/// # Example
///
/// A TCP-like sender: it asks to send, sends what it is granted, and reports acknowledgments.
///
/// ```
/// use concord_cc::cm::{CmConfig, CmEvent, CmUpdate, CongestionManager, FlowKey, LossMode};
/// use concord_cc::rng::Rng;
/// use concord_cc::{Duration, Instant, Rate};
/// use std::net::Ipv4Addr;
///
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let mut cm = CongestionManager::new(CmConfig::default(), Rng::new(1))?;
/// let key = FlowKey::new(Ipv4Addr::new(192, 0, 2, 7), 80, 40_000);
/// let flow = cm.open(Instant::ZERO, key)?;
///
/// // Before any RTT sample, cm_query has no estimate (RFC 3124: negative values).
/// assert_eq!(cm.query(flow)?.rate, None);
/// assert_eq!(cm.query(flow)?.to_rfc3124(), (-1, -1, -1));
///
/// // The handshake measured an RTT of 100 ms: two MTUs per 100 ms = 240 kbit/s.
/// let rtt = Some(Duration::from_millis(100));
/// cm.update(Instant::ZERO, flow, &CmUpdate { rtt, ..CmUpdate::default() })?;
/// assert_eq!(cm.query(flow)?.rate, Some(Rate::from_kbps(240)));
///
/// // Ask to send two packets. Grants come back as AppNotify events, paced at the rate: one
/// // MTU every 50 ms. The host calls on_timeout when poll_timeout says.
/// cm.request(Instant::ZERO, flow, 3000)?;
/// let mut now = Instant::ZERO;
/// let mut sent = Vec::new();
/// loop {
///     while let Some(event) = cm.poll_event() {
///         if let CmEvent::AppNotify { flow, grant } = event {
///             // ... transmit up to `grant` bytes, then report them:
///             cm.notify(now, flow, grant)?;
///             sent.push(now);
///         }
///     }
///     if sent.len() == 2 {
///         break;
///     }
///     now = cm.poll_timeout().ok_or("nothing to wait for")?;
///     cm.on_timeout(now);
/// }
/// assert_eq!(sent, [Instant::ZERO, Instant::from_millis(50)]);
///
/// // Each packet is acknowledged one RTT later: slow start adds what was acknowledged.
/// for t in &sent {
///     let ack = CmUpdate { nrecd: 1500, nlost: 0, loss_mode: LossMode::NoCongestion, rtt };
///     cm.update(*t + Duration::from_millis(100), flow, &ack)?;
/// }
/// assert_eq!(cm.query(flow)?.rate, Some(Rate::from_kbps(480)));
///
/// // A loss halves the rate; the flow hears of it with ChangeRate.
/// let loss = CmUpdate { loss_mode: LossMode::Transient, ..CmUpdate::default() };
/// cm.update(Instant::from_millis(200), flow, &loss)?;
/// let last_change = std::iter::from_fn(|| cm.poll_event())
///     .filter_map(|e| match e {
///         CmEvent::ChangeRate { rate, .. } => Some(rate),
///         _ => None,
///     })
///     .last();
/// assert_eq!(last_change, Some(Rate::from_kbps(240)));
/// cm.close(Instant::from_millis(200), flow)?;
/// # Ok(())
/// # }
/// ```
#[derive(Clone, Debug)]
pub struct CongestionManager {
    /// Parameters.
    config: CmConfig,
    /// Probe nonces: seeded in the simulator, the OS CSPRNG on a network.
    nonces: NonceSource,
    /// The next flow handle.
    next_flow: u32,
    /// The next macroflow handle.
    next_macroflow: u32,
    /// Open flows.
    flows: BTreeMap<FlowId, FlowState>,
    /// Open flows by key.
    keys: BTreeMap<FlowKey, FlowId>,
    /// Macroflows, including empty ones that linger.
    macroflows: BTreeMap<MacroflowId, Macroflow>,
    /// Each destination's default macroflow.
    by_dst: BTreeMap<Ipv4Addr, MacroflowId>,
    /// Probers, per receiving host.
    probes: BTreeMap<Ipv4Addr, Prober>,
    /// Per-flow loss samples and the split test.
    segregator: Segregator,
    /// Events not yet polled.
    events: VecDeque<CmEvent>,
    /// Counters.
    stats: CmStats,
    /// Tests only: decide `ChangeRate` reports by a pass over every flow, the reference the
    /// threshold index is checked against.
    #[cfg(test)]
    pub(super) full_scan: bool,
}

impl CongestionManager {
    /// A manager with no flows; `rng` draws probe nonces (repeatable: for the simulator and
    /// tests; a host on a network sets [`NonceSource::Os`] with
    /// [`CongestionManager::set_nonce_source`]). The configuration is checked first.
    pub fn new(config: CmConfig, rng: Rng) -> Result<CongestionManager, CmConfigError> {
        config.validate()?;
        Ok(CongestionManager {
            segregator: Segregator::new(config.segregation),
            config,
            nonces: NonceSource::Seeded(rng),
            next_flow: 0,
            next_macroflow: 0,
            flows: BTreeMap::new(),
            keys: BTreeMap::new(),
            macroflows: BTreeMap::new(),
            by_dst: BTreeMap::new(),
            probes: BTreeMap::new(),
            events: VecDeque::new(),
            stats: CmStats::default(),
            #[cfg(test)]
            full_scan: false,
        })
    }

    /// Where probe nonces come from from now on.
    pub fn set_nonce_source(&mut self, nonces: NonceSource) {
        self.nonces = nonces;
    }

    /// The parameters.
    pub fn config(&self) -> &CmConfig {
        &self.config
    }

    /// The counters.
    pub fn stats(&self) -> CmStats {
        self.stats
    }

    /// The largest grant, in bytes (RFC 3124 `cm_mtu`).
    pub fn mtu(&self) -> Bytes {
        self.config.mtu
    }

    /// The next event for the host, if any.
    pub fn poll_event(&mut self) -> Option<CmEvent> {
        self.events.pop_front()
    }

    /// A macroflow's state, for inspection.
    pub fn macroflow(&self, id: MacroflowId) -> Option<&Macroflow> {
        self.macroflows.get(&id)
    }

    /// The macroflows from handle `start` on, in handle order, including empty ones that linger.
    pub fn macroflows_from(&self, start: MacroflowId) -> impl Iterator<Item = &Macroflow> + '_ {
        self.macroflows.range(start..).map(|(_, m)| m)
    }

    /// What the probe responses measured for a flow since it joined its macroflow (paper section
    /// 2.3: per-flow loss rate and throughput).
    pub fn flow_sample(&self, flow: FlowId) -> Result<Option<FlowSample>, CmError> {
        self.state(flow)?;
        Ok(self.segregator.sample(flow).copied())
    }

    /// The flow's state, or [`CmError::UnknownFlow`].
    fn state(&self, flow: FlowId) -> Result<&FlowState, CmError> {
        self.flows.get(&flow).ok_or(CmError::UnknownFlow(flow))
    }

    /// The flow's macroflow, mutable.
    fn macroflow_of(&mut self, flow: FlowId) -> Result<(MacroflowId, &mut Macroflow), CmError> {
        let id = self.state(flow)?.macroflow;
        let m = self
            .macroflows
            .get_mut(&id)
            .ok_or(CmError::UnknownMacroflow(id))?;
        Ok((id, m))
    }

    /// Creates an empty macroflow for `dst` with `aimd` (a fresh one if `None`).
    fn create_macroflow(
        &mut self,
        now: Instant,
        dst: Ipv4Addr,
        aimd: Option<Aimd>,
    ) -> Result<MacroflowId, CmError> {
        let id = MacroflowId(self.next_macroflow);
        self.next_macroflow = self
            .next_macroflow
            .checked_add(1)
            .ok_or(CmError::OutOfHandles)?;
        let aimd = aimd.unwrap_or_else(|| Aimd::new(self.config.aimd()));
        let scheduler = Scheduler::new(self.config.mtu, self.config.grant_lifetime, aimd.rate());
        self.macroflows.insert(
            id,
            Macroflow {
                id,
                dst,
                flows: BTreeSet::new(),
                aimd,
                aging: Aging::new(self.config.aging),
                scheduler,
                min_rate: self.config.min_rate,
                emptied_at: Some(now),
                thresh_index: ThreshIndex::new(),
                // No flow, no grant, no silence clock: nothing to time.
                deadline: None,
            },
        );
        Ok(id)
    }

    /// True if the macroflow is empty and has lingered its time.
    fn expired(&self, id: MacroflowId, now: Instant) -> bool {
        self.macroflows.get(&id).is_none_or(|m| {
            m.emptied_at
                .is_some_and(|t| now >= t + self.config.macroflow_linger)
        })
    }

    /// `cm_open` (RFC 3124 section 4.1): opens a flow in its destination's macroflow, created
    /// if there is none or the last one has lingered empty too long. The flow starts with
    /// weight 1, the configured thresholds and feedback mode.
    pub fn open(&mut self, now: Instant, key: FlowKey) -> Result<FlowId, CmError> {
        if self.keys.contains_key(&key) {
            return Err(CmError::DuplicateFlow(key));
        }
        let flow = FlowId(self.next_flow);
        let next_flow = self.next_flow.checked_add(1).ok_or(CmError::OutOfHandles)?;
        let mf = match self.by_dst.get(&key.dst) {
            Some(&id) if !self.expired(id, now) => id,
            _ => {
                let id = self.create_macroflow(now, key.dst, None)?;
                self.by_dst.insert(key.dst, id);
                id
            }
        };
        self.next_flow = next_flow;
        self.join(flow, mf, FlowQueue::new(1.0));
        self.flows.insert(
            flow,
            FlowState {
                key,
                macroflow: mf,
                pinned: false,
                feedback: self.config.feedback,
                thresh: self.config.thresh,
                reported: None,
            },
        );
        self.keys.insert(key, flow);
        self.reindex(flow);
        self.after_change(now, mf);
        Ok(flow)
    }

    /// Puts `flow` with its scheduler queue into macroflow `mf`.
    fn join(&mut self, flow: FlowId, mf: MacroflowId, queue: FlowQueue) {
        if let Some(m) = self.macroflows.get_mut(&mf) {
            m.flows.insert(flow);
            m.scheduler.add_flow(flow, queue);
            m.emptied_at = None;
        }
    }

    /// Takes `flow` out of its macroflow `mf`; returns its scheduler queue.
    fn leave(&mut self, now: Instant, flow: FlowId, mf: MacroflowId) -> Option<FlowQueue> {
        let m = self.macroflows.get_mut(&mf)?;
        m.flows.remove(&flow);
        m.thresh_index.remove(flow);
        if m.flows.is_empty() {
            m.emptied_at = Some(now);
        }
        m.scheduler.remove_flow(flow)
    }

    /// `cm_close` (RFC 3124 section 4.1): closes the flow; its pending requests and grants are
    /// dropped and its share goes to the other flows of its macroflow.
    pub fn close(&mut self, now: Instant, flow: FlowId) -> Result<(), CmError> {
        let state = self.flows.remove(&flow).ok_or(CmError::UnknownFlow(flow))?;
        self.keys.remove(&state.key);
        self.segregator.forget(flow);
        self.leave(now, flow, state.macroflow);
        let dst = state.key.dst;
        let lo = FlowKey {
            dst,
            dst_port: 0,
            src_port: 0,
            flow_id: 0,
        };
        let hi = FlowKey {
            dst,
            dst_port: u16::MAX,
            src_port: u16::MAX,
            flow_id: u32::MAX,
        };
        if self.keys.range(lo..=hi).next().is_none() {
            self.probes.remove(&dst);
        }
        self.after_change(now, state.macroflow);
        Ok(())
    }

    /// `cm_request` (paper section 3.1; RFC 3124 section 4.2): the flow would like to send
    /// `nbytes` more. Grants of at most one MTU follow as [`CmEvent::AppNotify`], at once if
    /// the macroflow's pacing allows, later otherwise.
    pub fn request(&mut self, now: Instant, flow: FlowId, nbytes: Bytes) -> Result<(), CmError> {
        let (mf, m) = self.macroflow_of(flow)?;
        m.scheduler.request(flow, nbytes);
        self.after_change(now, mf);
        Ok(())
    }

    /// `cm_notify` (paper section 3.1; RFC 3124 section 4.2): the flow sent `nsent` bytes, in
    /// one packet, at `now` (0 if it did not use its grant). It settles the flow's oldest grant;
    /// bytes sent without a grant take their time from the macroflow's pacing.
    pub fn notify(&mut self, now: Instant, flow: FlowId, nsent: Bytes) -> Result<(), CmError> {
        let state = self.state(flow)?;
        let (feedback, key) = (state.feedback, state.key);
        let (mf, m) = self.macroflow_of(flow)?;
        m.scheduler.notify(now, flow, nsent);
        if nsent > 0 {
            m.aging.on_transmit(now);
            if feedback == FeedbackMode::Explicit {
                let (config, initial_rtt) = (self.config.prober, self.config.initial_rtt);
                self.probes
                    .entry(key.dst)
                    .or_insert_with(|| Prober::new(config, initial_rtt))
                    .on_sent(now, key.tag(), nsent);
            }
        }
        self.after_change(now, mf);
        Ok(())
    }

    /// `cm_update` (RFC 3124 section 4.2; paper section 3.1, principle 4): implicit feedback
    /// from the application. The aging in force is folded into the window first (paper section
    /// 2.2.3), then the RTT sample is taken, then:
    ///
    /// - [`LossMode::NoCongestion`]: `nrecd` bytes count as delivered (AIMD increase);
    /// - [`LossMode::Transient`] and [`LossMode::Ecn`]: the rate halves, once per RTT, and
    ///   `nrecd` does not grow it (as TCP does not grow in recovery);
    /// - [`LossMode::Persistent`]: the macroflow restarts from one MTU in slow start.
    ///
    /// `nlost` drives nothing: the loss mode says whether losses were congestion (RFC 3124
    /// reports losses that were not with CM_NO_CONGESTION).
    pub fn update(&mut self, now: Instant, flow: FlowId, u: &CmUpdate) -> Result<(), CmError> {
        let (mf, m) = self.macroflow_of(flow)?;
        m.on_feedback(now);
        if let Some(rtt) = u.rtt {
            m.aimd.on_rtt_sample(now, rtt);
        }
        match u.loss_mode {
            LossMode::NoCongestion => m.aimd.on_delivered(now, u.nrecd),
            LossMode::Transient => m.aimd.on_congestion(now, CongestionSignal::Loss),
            LossMode::Ecn => m.aimd.on_congestion(now, CongestionSignal::Ecn),
            LossMode::Persistent => m.aimd.on_congestion(now, CongestionSignal::Persistent),
        }
        self.after_change(now, mf);
        Ok(())
    }

    /// The report for a flow of `m` if the macroflow has an estimate.
    fn report(m: &Macroflow, flow: FlowId) -> Option<RateReport> {
        let share = m.scheduler.share(flow)?;
        Some(RateReport {
            rate: m.rate().mul_f64(share),
            srtt: m.aimd.srtt()?,
            rttdev: m.aimd.rttvar()?,
        })
    }

    /// `cm_query` (RFC 3124 section 4.4; paper Fig. 8): the flow's share of its macroflow's
    /// rate, and the macroflow's srtt and RTT variation; `None` for each until the macroflow
    /// has an RTT sample (RFC 3124: negative values).
    pub fn query(&self, flow: FlowId) -> Result<QueryResult, CmError> {
        let id = self.state(flow)?.macroflow;
        let m = self
            .macroflows
            .get(&id)
            .ok_or(CmError::UnknownMacroflow(id))?;
        Ok(match Self::report(m, flow) {
            Some(r) => QueryResult {
                rate: Some(r.rate),
                srtt: Some(r.srtt),
                rttdev: Some(r.rttdev),
            },
            None => QueryResult::default(),
        })
    }

    /// As [`CongestionManager::query`], for the whole macroflow.
    pub fn query_macroflow(&self, id: MacroflowId) -> Result<QueryResult, CmError> {
        let m = self
            .macroflows
            .get(&id)
            .ok_or(CmError::UnknownMacroflow(id))?;
        if !m.aimd.has_estimate() {
            return Ok(QueryResult::default());
        }
        Ok(QueryResult {
            rate: Some(m.rate()),
            srtt: m.aimd.srtt(),
            rttdev: m.aimd.rttvar(),
        })
    }

    /// `cm_getmacroflow` (RFC 3124 section 4.5): the flow's macroflow.
    pub fn get_macroflow(&self, flow: FlowId) -> Result<MacroflowId, CmError> {
        Ok(self.state(flow)?.macroflow)
    }

    /// `cm_setmacroflow` (RFC 3124 section 4.5): moves the flow into macroflow `target`, or
    /// into a new macroflow with fresh congestion state if `target` is `None`; returns the
    /// macroflow it is in. The flow's pending requests, grants, weight and hint move with it;
    /// segregation no longer moves it. A macroflow left empty lingers for
    /// [`CmConfig::macroflow_linger`], then its handle is gone.
    pub fn set_macroflow(
        &mut self,
        now: Instant,
        flow: FlowId,
        target: Option<MacroflowId>,
    ) -> Result<MacroflowId, CmError> {
        let state = self.state(flow)?;
        let (from, dst) = (state.macroflow, state.key.dst);
        let to = match target {
            Some(id) if self.macroflows.contains_key(&id) => id,
            Some(id) => return Err(CmError::UnknownMacroflow(id)),
            None => self.create_macroflow(now, dst, None)?,
        };
        if to != from {
            self.move_flow(now, flow, from, to);
            self.after_change(now, from);
        }
        if let Some(s) = self.flows.get_mut(&flow) {
            s.pinned = true;
        }
        self.after_change(now, to);
        Ok(to)
    }

    /// Moves `flow` from macroflow `from` to `to` with its queue; its segregation sample
    /// restarts.
    fn move_flow(&mut self, now: Instant, flow: FlowId, from: MacroflowId, to: MacroflowId) {
        let queue = self
            .leave(now, flow, from)
            .unwrap_or_else(|| FlowQueue::new(1.0));
        self.join(flow, to, queue);
        self.segregator.forget(flow);
        if let Some(s) = self.flows.get_mut(&flow) {
            s.macroflow = to;
        }
        self.reindex(flow);
    }

    /// Files `flow` in its macroflow's threshold index under its last report, factors and
    /// effective weight; call after any of them changes.
    fn reindex(&mut self, flow: FlowId) {
        let Some(s) = self.flows.get(&flow) else {
            return;
        };
        let Some(m) = self.macroflows.get_mut(&s.macroflow) else {
            return;
        };
        let weight = m
            .scheduler
            .flow(flow)
            .map_or(1.0, FlowQueue::effective_weight);
        m.thresh_index
            .insert(flow, s.reported.as_ref(), &s.thresh, weight);
    }

    /// `cm_thresh` (RFC 3124 section 4.3): the factors beyond which the flow hears of rate and
    /// RTT changes.
    pub fn thresh(&mut self, flow: FlowId, thresh: ThreshHint) -> Result<(), CmError> {
        thresh.validate()?;
        let s = self
            .flows
            .get_mut(&flow)
            .ok_or(CmError::UnknownFlow(flow))?;
        s.thresh = thresh;
        self.reindex(flow);
        Ok(())
    }

    /// Checks a weight or hint against [`WEIGHT_RANGE`].
    fn check_weight(w: f64) -> Result<f64, CmError> {
        if (WEIGHT_RANGE.0..=WEIGHT_RANGE.1).contains(&w) {
            Ok(w)
        } else {
            Err(CmError::InvalidWeight(w))
        }
    }

    /// Sets the flow's configured weight (paper section 2.4: "pre-configured weights").
    pub fn set_weight(&mut self, now: Instant, flow: FlowId, weight: f64) -> Result<(), CmError> {
        let w = Self::check_weight(weight)?;
        let (mf, m) = self.macroflow_of(flow)?;
        m.scheduler.set_weight(flow, w);
        self.reindex(flow);
        self.after_change(now, mf);
        Ok(())
    }

    /// Sets the receiver's hint for the flow, a factor on its weight (paper sections 2.4 and
    /// 3.2.1: the receiver's `[o_i : r_i]` relative fractions).
    pub fn receiver_hint(&mut self, now: Instant, flow: FlowId, hint: f64) -> Result<(), CmError> {
        let h = Self::check_weight(hint)?;
        let (mf, m) = self.macroflow_of(flow)?;
        m.scheduler.set_hint(flow, h);
        self.reindex(flow);
        self.after_change(now, mf);
        Ok(())
    }

    /// Sets where the flow's feedback comes from (paper section 2.2.2).
    pub fn set_feedback(&mut self, flow: FlowId, mode: FeedbackMode) -> Result<(), CmError> {
        let s = self
            .flows
            .get_mut(&flow)
            .ok_or(CmError::UnknownFlow(flow))?;
        s.feedback = mode;
        Ok(())
    }

    /// When [`CongestionManager::on_timeout`] is next due: a grant, a grant expiry, an aging
    /// halving or a probe. A timer that saturated at [`Instant::MAX`] never fires.
    pub fn poll_timeout(&self) -> Option<Instant> {
        let macroflows = self.macroflows.values().filter_map(|m| {
            debug_assert_eq!(
                m.deadline,
                m.next_timeout(),
                "{} filed a stale deadline",
                m.id
            );
            m.deadline
        });
        let probes = self.probes.values().filter_map(Prober::next_probe_time);
        macroflows.chain(probes).filter(|t| *t < Instant::MAX).min()
    }

    /// Runs everything due by `now`: expires grants, applies aging, hands out grants, reports rate
    /// changes, sends probes, and drops empty macroflows that have lingered.
    pub fn on_timeout(&mut self, now: Instant) {
        // Only macroflows with a timer due change: pacing, expiry and aging are all timers.
        let due: Vec<MacroflowId> = self
            .macroflows
            .values()
            .filter(|m| m.deadline.is_some_and(|t| t <= now))
            .map(|m| m.id)
            .collect();
        for id in due {
            self.after_change(now, id);
        }
        for (dst, prober) in &mut self.probes {
            if let Some(probe) = prober.poll_probe(now, &mut self.nonces) {
                self.stats.probes_sent += 1;
                self.events
                    .push_back(CmEvent::SendProbe { dst: *dst, probe });
            }
        }
        let gone: Vec<MacroflowId> = self
            .macroflows
            .keys()
            .copied()
            .filter(|id| self.expired(*id, now))
            .collect();
        for id in gone {
            self.macroflows.remove(&id);
        }
        let macroflows = &self.macroflows;
        self.by_dst.retain(|_, id| macroflows.contains_key(id));
    }

    /// After anything that may change macroflow `mf`: ages it, paces it at its current rate,
    /// expires and hands out grants, and reports rate changes to its flows.
    fn after_change(&mut self, now: Instant, mf: MacroflowId) {
        let Some(m) = self.macroflows.get_mut(&mf) else {
            return;
        };
        m.refresh(now);
        for g in m.scheduler.expire(now) {
            self.stats.grants_expired += 1;
            self.events.push_back(CmEvent::GrantExpired {
                flow: g.flow,
                bytes: g.bytes,
            });
        }
        while let Some(g) = m.scheduler.poll_grant(now) {
            self.stats.grants += 1;
            self.events.push_back(CmEvent::AppNotify {
                flow: g.flow,
                grant: g.bytes,
            });
        }
        // Only the flows whose thresholds the rate per unit weight or the srtt has crossed can
        // be due (a superset: each is checked exactly below), in handle order.
        let candidates = match m.aimd.srtt() {
            None => Vec::new(),
            Some(srtt) => {
                let total = m.scheduler.total_weight();
                let per_weight = if total > 0.0 {
                    m.rate().bps_f64() / total
                } else {
                    0.0
                };
                m.thresh_index.candidates(per_weight, srtt.as_secs_f64())
            }
        };
        #[cfg(test)]
        let candidates = if self.full_scan {
            m.flows.iter().copied().collect()
        } else {
            candidates
        };
        for flow in candidates {
            let (Some(state), Some(now_report)) =
                (self.flows.get_mut(&flow), Self::report(m, flow))
            else {
                continue;
            };
            let due = match &state.reported {
                None => true,
                Some(last) => state.thresh.exceeded(last, &now_report),
            };
            if due {
                state.reported = Some(now_report);
                let weight = m
                    .scheduler
                    .flow(flow)
                    .map_or(1.0, FlowQueue::effective_weight);
                m.thresh_index
                    .insert(flow, Some(&now_report), &state.thresh, weight);
                self.events.push_back(CmEvent::ChangeRate {
                    flow,
                    rate: now_report.rate,
                    srtt: now_report.srtt,
                    rttdev: now_report.rttdev,
                });
            }
        }
        m.file_deadline();
    }

    /// A probe-protocol datagram from `from` arrived at `now`: decodes it and takes the
    /// response. Anything that is not a valid response is counted and changes nothing.
    pub fn on_datagram(
        &mut self,
        now: Instant,
        from: Ipv4Addr,
        datagram: &[u8],
    ) -> Result<(), FeedbackError> {
        self.on_datagram_with(now, from, datagram, None)
    }

    /// As [`CongestionManager::on_datagram`], for hosts that share `key`: the response must
    /// carry its tag.
    pub fn on_datagram_with(
        &mut self,
        now: Instant,
        from: Ipv4Addr,
        datagram: &[u8],
        key: Option<&ProbeKey>,
    ) -> Result<(), FeedbackError> {
        match ProbeMessage::decode_with(datagram, key) {
            Ok(ProbeMessage::Response(r)) => self.on_response(now, from, &r),
            Ok(ProbeMessage::Probe(_)) => {
                self.stats.responses_malformed += 1;
                Err(FeedbackError::NotAResponse)
            }
            Err(e) => {
                self.stats.responses_malformed += 1;
                Err(FeedbackError::Malformed(e))
            }
        }
    }

    /// A response from `from` arrived at `now` (paper Fig. 5, "Sender action on receiving a
    /// response"). For each macroflow with flows in it: aging is folded, the RTT sample taken,
    /// then a CE mark halves the rate, a loss halves it (once per RTT), and otherwise the
    /// delivered bytes grow it. Each flow's counts feed segregation, which may split the
    /// macroflow.
    pub fn on_response(
        &mut self,
        now: Instant,
        from: Ipv4Addr,
        r: &Response,
    ) -> Result<(), FeedbackError> {
        let Some(prober) = self.probes.get_mut(&from) else {
            self.stats.responses_refused += 1;
            return Err(FeedbackError::UnknownPeer(from));
        };
        let measurement = match prober.on_response(now, r) {
            Ok(m) => m,
            Err(e) => {
                match e {
                    ResponseError::Duplicate { .. } => self.stats.responses_duplicate += 1,
                    ResponseError::Stale { .. } => self.stats.responses_stale += 1,
                    ResponseError::NonceMismatch { .. } => self.stats.responses_forged += 1,
                    _ => self.stats.responses_refused += 1,
                }
                return Err(FeedbackError::Refused(e));
            }
        };
        self.stats.responses_accepted += 1;

        /// Packets sent, packets lost, bytes delivered, CE marks.
        #[derive(Default)]
        struct Totals {
            sent: u64,
            lost: u64,
            delivered: Bytes,
            ce: u64,
        }
        let mut per_macroflow: BTreeMap<MacroflowId, Totals> = BTreeMap::new();
        for fm in measurement.flows.iter().filter(|f| f.sent_packets > 0) {
            let Some(&flow) = self.keys.get(&FlowKey::from_tag(from, fm.tag)) else {
                continue;
            };
            let Some(state) = self.flows.get(&flow) else {
                continue;
            };
            let t = per_macroflow.entry(state.macroflow).or_default();
            t.sent += fm.sent_packets;
            t.lost += fm.lost_packets();
            t.delivered += fm.delivered_bytes();
            t.ce += fm.ce_packets.min(fm.delivered_packets());
            self.segregator.record(flow, now, fm);
        }
        // A response is feedback for every macroflow to `from` whose flows use the probes, even
        // one with nothing in the covered intervals (its data's intervals went with a lost
        // response): it answers a probe within the round trip, which is what stops exponential
        // aging (paper section 2.2.3, "triggered when the CM does not receive a response to a
        // probe message within a round-trip time"), and it carries a round-trip sample of the
        // path. Such a macroflow gets no loss or delivery from it.
        let probed: Vec<MacroflowId> = self
            .macroflows
            .values()
            .filter(|m| m.dst == from && !per_macroflow.contains_key(&m.id))
            .filter(|m| {
                m.flows.iter().any(|f| {
                    self.flows
                        .get(f)
                        .is_some_and(|s| s.feedback == FeedbackMode::Explicit)
                })
            })
            .map(|m| m.id)
            .collect();
        for mf in probed {
            per_macroflow.insert(mf, Totals::default());
        }
        for (mf, t) in per_macroflow {
            if let Some(m) = self.macroflows.get_mut(&mf) {
                m.on_feedback(now);
                m.aimd
                    .on_rtt_sample_covering(measurement.rtt, t.sent.saturating_sub(t.lost));
                if t.ce > 0 {
                    m.aimd.on_congestion(now, CongestionSignal::Ecn);
                } else if t.lost > 0 {
                    m.aimd.on_congestion(now, CongestionSignal::Loss);
                } else {
                    m.aimd.on_delivered(now, t.delivered);
                }
            }
            self.after_change(now, mf);
            if self.config.segregation.enabled && t.sent > 0 {
                self.segregate(now, mf);
            }
        }
        Ok(())
    }

    /// Runs the segregation test on the unpinned flows of `mf` and splits the macroflow if they
    /// differ (paper section 2.3). The new macroflow takes the share of the window that the
    /// moving flows' weights held, so the two send no faster together than the one did; both
    /// groups' samples restart.
    fn segregate(&mut self, now: Instant, mf: MacroflowId) {
        let Some(m) = self.macroflows.get(&mf) else {
            return;
        };
        let candidates: Vec<FlowId> = m
            .flows
            .iter()
            .copied()
            .filter(|f| self.flows.get(f).is_some_and(|s| !s.pinned))
            .collect();
        let Some(moving) = self.segregator.decide(candidates.iter().copied()) else {
            return;
        };
        let fraction: f64 = moving.iter().filter_map(|f| m.scheduler.share(*f)).sum();
        let dst = m.dst;
        let Some(m) = self.macroflows.get_mut(&mf) else {
            return;
        };
        let aimd = m.aimd.split_off(fraction);
        let aging = m.aging.clone();
        m.file_deadline();
        let Ok(to) = self.create_macroflow(now, dst, Some(aimd)) else {
            return;
        };
        if let Some(n) = self.macroflows.get_mut(&to) {
            n.aging = aging;
            n.file_deadline();
        }
        for f in &moving {
            self.move_flow(now, *f, mf, to);
        }
        for f in candidates {
            self.segregator.forget(f);
        }
        self.stats.segregations += 1;
        self.events.push_back(CmEvent::Segregated {
            from: mf,
            to,
            flows: moving,
        });
        self.after_change(now, mf);
        self.after_change(now, to);
    }
}
