//! [`Hub`]: one [`CongestionManager`] shared by every client of a host, with the timer that
//! paces its grants.
//!
//! The daemon gives each connection a [`ClientId`]; the embedded mode gives one to each
//! in-process client. A client may use only the flows it opened, hears only its own flows'
//! events, and when it goes away ([`Hub::detach`]) its flows are closed and their share goes
//! to the other flows of their macroflows.

use crate::clock::Clock;
use crate::handle_hash::{HandleMap, HandleSet};
use crate::protocol::{
    ErrorCode, Event, MacroflowInfo, Reply, Request, Status, MACROFLOWS_PER_PAGE,
};
use concord_cc::cm::probe::{TYPE_AUTHENTICATED, TYPE_PROBE};
use concord_cc::cm::{
    CmConfig, CmConfigError, CmError, CmEvent, CmStats, CmUpdate, CongestionManager, FlowId,
    MacroflowId, NonceSource, ProbeKey, ProbeMessage, ProbeResponder, ResponderConfig,
};
use concord_cc::rng::Rng;
use concord_cc::{Duration, Instant};
use std::collections::VecDeque;
use std::net::{Ipv4Addr, SocketAddr};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use tokio::net::UdpSocket;
use tokio::sync::{mpsc, Notify};

/// The hub's parameters.
#[derive(Clone, Debug)]
pub struct HubConfig {
    /// The manager's parameters.
    pub cm: CmConfig,
    /// The seed of the manager's seeded generator. Probe nonces do not use it: they come from
    /// the operating system's CSPRNG ([`os_nonce`]), so that no one can predict them.
    pub seed: u64,
    /// The most flows one client may hold open at once.
    pub max_flows_per_client: usize,
    /// Events queued per client before further ones are dropped and counted.
    pub event_queue: usize,
    /// The key shared with the peer daemons to authenticate probe messages (HMAC-SHA-256);
    /// `None`: probes and responses are not authenticated.
    pub probe_key: Option<ProbeKey>,
}

impl Default for HubConfig {
    fn default() -> Self {
        HubConfig {
            cm: CmConfig::default(),
            seed: 1,
            max_flows_per_client: 4096,
            event_queue: 8192,
            probe_key: None,
        }
    }
}

/// A client of the hub: a daemon connection or an embedded client.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ClientId(pub u64);

/// What the hub keeps per client.
#[derive(Debug)]
struct ClientState {
    /// Flows it opened and has not closed.
    flows: HandleSet<FlowId>,
    /// Where its events go.
    events: mpsc::Sender<Event>,
}

/// Everything behind the hub's lock.
#[derive(Debug)]
struct HubState {
    /// The manager.
    cm: CongestionManager,
    /// Attached clients.
    clients: HandleMap<ClientId, ClientState>,
    /// Which client opened each open flow.
    owner: HandleMap<FlowId, ClientId>,
    /// Per open flow, the bytes reported sent (`notify`) and not yet reported received
    /// (`update`): the most the next update may acknowledge.
    unacked: HandleMap<FlowId, u64>,
    /// The next client handle.
    next_client: u64,
    /// The deadline the timer task sleeps until, if any.
    armed: Option<Instant>,
    /// Frames that did not decode.
    malformed_frames: u64,
    /// Events dropped because a client's queue was full.
    events_dropped: u64,
    /// The receiver side of the probe protocol: counts of what local applications received.
    responder: ProbeResponder,
    /// Probes to send: receiving host and the encoded probe.
    outbox: VecDeque<(Ipv4Addr, Vec<u8>)>,
    /// A probe transport runs; without one, probes are not queued.
    probes_enabled: bool,
    /// The key probes are authenticated with, if any.
    probe_key: Option<ProbeKey>,
}

/// How often the probe task drains the packet socket of [`Hub::run_probes_counting`].
const CAPTURE_TICK: std::time::Duration = std::time::Duration::from_millis(5);

/// Probes queued for sending at most; older ones are dropped first (a later probe carries the
/// same question).
const MAX_OUTBOX: usize = 1024;

/// One Congestion Manager for every client of the host, and its timer.
#[derive(Debug)]
pub struct Hub {
    /// The state.
    state: Mutex<HubState>,
    /// Wakes the timer task when an earlier deadline appears.
    wake: Notify,
    /// Wakes the probe transport when probes are queued.
    probe_wake: Notify,
    /// A probe transport was started.
    probe_started: AtomicBool,
    /// The clock that maps the host's time to the manager's.
    clock: Clock,
    /// Parameters.
    config: HubConfig,
}

/// The shortest pause of the timer between two runs of an unchanged deadline, so that a
/// deadline that does not move cannot spin the task.
const MIN_TIMER_STEP: Duration = Duration::from_micros(100);

/// How late a timer may fire and still run at its own deadline: tokio's timer wakes up to
/// about 1 ms late, and pacing grants 0.3 ms apart (40 Mbit/s of 1500-byte packets) must not
/// lose the slots that fell inside that lateness. Deadlines older than this run at
/// `now - TIMER_SLACK`, so that a daemon that was not scheduled for long does not burst.
const TIMER_SLACK: Duration = Duration::from_millis(2);

/// Deadlines run one by one in one wake-up of the timer, at most.
const MAX_CATCH_UP: usize = 64;

impl Hub {
    /// A hub with no clients. The manager's configuration is checked first.
    pub fn new(config: HubConfig) -> Result<Arc<Hub>, CmConfigError> {
        let mut cm = CongestionManager::new(config.cm, Rng::new(config.seed))?;
        cm.set_nonce_source(NonceSource::Os(os_nonce));
        Ok(Arc::new(Hub {
            state: Mutex::new(HubState {
                cm,
                clients: HandleMap::default(),
                owner: HandleMap::default(),
                unacked: HandleMap::default(),
                next_client: 0,
                armed: None,
                malformed_frames: 0,
                events_dropped: 0,
                responder: ProbeResponder::new(ResponderConfig::default()),
                outbox: VecDeque::new(),
                probes_enabled: false,
                probe_key: config.probe_key,
            }),
            wake: Notify::new(),
            probe_wake: Notify::new(),
            probe_started: AtomicBool::new(false),
            clock: Clock::new(),
            config,
        }))
    }

    /// The state; a panic elsewhere while holding the lock does not poison the hub, since every
    /// change to the state is complete before the lock is released.
    fn lock(&self) -> MutexGuard<'_, HubState> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Hands out the manager's events, then wakes the timer if its deadline moved earlier and
    /// the probe transport if probes are queued; releases the lock.
    fn settle(&self, mut s: MutexGuard<'_, HubState>) {
        s.drain_events();
        let wake = match (s.cm.poll_timeout(), s.armed) {
            (Some(next), Some(armed)) => next < armed,
            (Some(_), None) => true,
            (None, _) => false,
        };
        let probes = !s.outbox.is_empty();
        drop(s);
        if wake {
            self.wake.notify_one();
        }
        if probes {
            self.probe_wake.notify_one();
        }
    }

    /// Now, on the manager's clock (the time every request is handled at).
    pub fn now(&self) -> Instant {
        self.clock.now()
    }

    /// Reads the manager under the hub's lock: for an in-process user of the hub (the kernel
    /// TCP side of `concordd --tcp`) that needs more of a flow's macroflow than `cm_query` says.
    pub fn inspect<R>(&self, f: impl FnOnce(&CongestionManager) -> R) -> R {
        f(&self.lock().cm)
    }

    /// Sets the scheduler weight of `client`'s `flow` (paper section 2.4): for an in-process
    /// user of the hub (the kernel TCP side of `concordd --tcp`, whose sockets' weights come from
    /// the daemon's configuration). A flow not open for `client`, or a weight outside
    /// [`concord_cc::cm::scheduler::WEIGHT_RANGE`], is refused and changes nothing.
    pub fn set_weight(&self, client: ClientId, flow: FlowId, weight: f64) -> Reply {
        let now = self.clock.now();
        let mut s = self.lock();
        if s.owner.get(&flow) != Some(&client) {
            return Reply::Error {
                code: ErrorCode::UnknownFlow,
                message: format!("flow {flow} is not open for this client"),
            };
        }
        let reply = done(s.cm.set_weight(now, flow, weight));
        self.settle(s);
        reply
    }

    /// The manager's own counters (grants, probes and responses accepted, refused, forged).
    pub fn cm_stats(&self) -> CmStats {
        self.lock().cm.stats()
    }

    /// The probe responder's counters.
    pub fn responder_stats(&self) -> concord_cc::cm::responder::ResponderStats {
        self.lock().responder.stats()
    }

    /// Attaches a client; its events arrive on the returned receiver.
    pub fn attach(&self) -> (ClientId, mpsc::Receiver<Event>) {
        let (tx, rx) = mpsc::channel(self.config.event_queue.max(1));
        let mut s = self.lock();
        let id = ClientId(s.next_client);
        s.next_client += 1;
        s.clients.insert(
            id,
            ClientState {
                flows: HandleSet::default(),
                events: tx,
            },
        );
        (id, rx)
    }

    /// Detaches a client and closes every flow it held open.
    pub fn detach(&self, client: ClientId) {
        let now = self.clock.now();
        let mut s = self.lock();
        let Some(c) = s.clients.remove(&client) else {
            return;
        };
        let n = c.flows.len();
        for flow in c.flows {
            s.owner.remove(&flow);
            s.unacked.remove(&flow);
            if let Err(e) = s.cm.close(now, flow) {
                tracing::warn!(%flow, error = %e, "closing a departed client's flow");
            }
        }
        self.settle(s);
        tracing::debug!(client = client.0, flows = n, "client detached");
    }

    /// How many flows each of `clients` holds open (0 for an unknown client), under one lock.
    pub fn flows_of_each(&self, clients: &[ClientId]) -> Vec<usize> {
        let s = self.lock();
        clients
            .iter()
            .map(|c| s.clients.get(c).map_or(0, |c| c.flows.len()))
            .collect()
    }

    /// How many flows `client` holds open (0 for an unknown client).
    pub fn flows_of(&self, client: ClientId) -> usize {
        self.lock()
            .clients
            .get(&client)
            .map_or(0, |c| c.flows.len())
    }

    /// Gives back the memory the hub's tables hold beyond what they need now (after many
    /// clients or flows have gone).
    pub fn shrink_to_fit(&self) {
        let mut s = self.lock();
        s.clients.shrink_to_fit();
        s.owner.shrink_to_fit();
        s.unacked.shrink_to_fit();
        s.outbox.shrink_to_fit();
    }

    /// Counts a frame that did not decode.
    pub fn count_malformed(&self) {
        self.lock().malformed_frames += 1;
    }

    /// The hub's counters.
    pub fn status(&self) -> Status {
        self.lock().status()
    }

    /// Carries out one request of `client` and returns the answer; the events it causes go to
    /// their flows' clients.
    pub fn handle(&self, client: ClientId, request: Request) -> Reply {
        let now = self.clock.now();
        let mut s = self.lock();
        let reply = s.apply(now, client, request, self.config.max_flows_per_client);
        self.settle(s);
        reply
    }

    /// Runs the manager's timers forever: sleeps until `poll_timeout`, or until a request
    /// brings an earlier deadline, and calls `on_timeout`. Spawn it once per hub.
    pub async fn run_timer(self: Arc<Self>) {
        let mut last_fired: Option<Instant> = None;
        loop {
            let deadline = {
                let mut s = self.lock();
                let d = s.cm.poll_timeout().map(|d| match last_fired {
                    Some(last) if d <= last => last + MIN_TIMER_STEP,
                    _ => d,
                });
                s.armed = d;
                d
            };
            match deadline.and_then(|d| self.clock.deadline(d)) {
                Some(at) => {
                    tokio::select! {
                        () = tokio::time::sleep_until(at) => {
                            let now = self.clock.now();
                            let mut s = self.lock();
                            s.fire(now);
                            s.drain_events();
                            let probes = !s.outbox.is_empty();
                            drop(s);
                            if probes {
                                self.probe_wake.notify_one();
                            }
                            last_fired = Some(now);
                        }
                        () = self.wake.notified() => {}
                    }
                }
                None => self.wake.notified().await,
            }
        }
    }
}

impl Hub {
    /// Runs the probe protocol on `socket` forever (paper section 2.2.2): sends this host's
    /// probes to port `peer_port` of each receiving host, hands responses to the manager (which
    /// checks their nonces), and answers other hosts' probes from what local applications
    /// reported with `received`. Only IPv4 peers take part. Spawn it at most once per hub.
    pub async fn run_probes(self: Arc<Self>, socket: UdpSocket, peer_port: u16) {
        self.run_probes_counting(socket, peer_port, None).await;
    }

    /// [`Hub::run_probes`], with this host's arrivals also counted by `capture` (the daemon
    /// observing the interface) besides the applications' `received` reports. The capture is
    /// drained before each probe is answered.
    pub async fn run_probes_counting(
        self: Arc<Self>,
        socket: UdpSocket,
        peer_port: u16,
        capture: Option<crate::capture::Capture>,
    ) {
        let mut capture = capture;
        // The packet socket is non-blocking and drained on this task, every tick and before
        // each probe is answered, so that no packet slips between the two.
        let mut tick = tokio::time::interval(CAPTURE_TICK);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        if self.probe_started.swap(true, Ordering::Relaxed) {
            tracing::warn!("a probe transport runs already");
            return;
        }
        self.lock().probes_enabled = true;
        let mut buf = vec![0u8; 65_536];
        loop {
            tokio::select! {
                _ = tick.tick(), if capture.is_some() => self.count_captured(&mut capture),
                r = socket.recv_from(&mut buf) => match r {
                    Ok((n, SocketAddr::V4(from))) => {
                        let data = buf.get(..n).unwrap_or_default();
                        self.count_captured(&mut capture);
                        if let Some(answer) = self.on_probe_datagram(*from.ip(), data) {
                            if let Err(e) = socket.send_to(&answer, from).await {
                                tracing::debug!(%from, error = %e, "sending a response");
                            }
                        }
                    }
                    Ok((_, from)) => tracing::debug!(%from, "probe datagram from IPv6 ignored"),
                    Err(e) => {
                        tracing::warn!(error = %e, "probe socket");
                        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
                    }
                },
                () = self.probe_wake.notified() => {
                    let batch: Vec<_> = self.lock().outbox.drain(..).collect();
                    for (dst, bytes) in batch {
                        if let Err(e) = socket.send_to(&bytes, (dst, peer_port)).await {
                            tracing::debug!(%dst, error = %e, "sending a probe");
                        }
                    }
                }
            }
        }
    }

    /// Hands what the packet socket observed to the responder.
    fn count_captured(&self, capture: &mut Option<crate::capture::Capture>) {
        let Some(c) = capture.as_mut() else { return };
        let now = self.clock.now();
        let mut s = self.lock();
        c.drain(|a| s.responder.on_data(now, a.from, a.tag, a.bytes, a.ce));
    }

    /// A probe-protocol datagram from `from`: a probe is answered by the responder (the
    /// encoded response is returned), anything else goes to the manager as a response. With a
    /// [`HubConfig::probe_key`], both must carry its tag.
    fn on_probe_datagram(&self, from: Ipv4Addr, data: &[u8]) -> Option<Vec<u8>> {
        let now = self.clock.now();
        let key = self.config.probe_key.as_ref();
        let mut s = self.lock();
        // The type byte says which side a datagram is for; each side counts what it refuses.
        let is_probe = data
            .get(1)
            .is_some_and(|t| t & !TYPE_AUTHENTICATED == TYPE_PROBE);
        if is_probe {
            let mut out = Vec::new();
            return match s.responder.on_datagram_with(now, from, data, key, &mut out) {
                Ok(true) => Some(out),
                _ => None,
            };
        }
        if let Err(e) = s.cm.on_datagram_with(now, from, data, key) {
            tracing::debug!(%from, error = %e, "probe response not taken");
        }
        self.settle(s);
        None
    }
}

/// 64 bits from the operating system's CSPRNG (`getrandom(2)`), for probe nonces. Should the
/// system call fail (it does not on Linux once the pool is initialised), `/dev/urandom`, and
/// then std's `RandomState`, whose SipHash keys the OS seeded, stand in: a nonce is never
/// drawn from a seeded generator.
pub fn os_nonce() -> u64 {
    if let Ok(v) = getrandom::u64() {
        return v;
    }
    let mut b = [0u8; 8];
    if std::fs::File::open("/dev/urandom")
        .and_then(|mut f| std::io::Read::read_exact(&mut f, &mut b))
        .is_ok()
    {
        return u64::from_be_bytes(b);
    }
    use std::hash::BuildHasher;
    std::collections::hash_map::RandomState::new().hash_one(std::process::id())
}

/// The most bytes one `notify` may report: one IPv4 packet (RFC 791's 16-bit total length).
/// `cm_notify` reports one transmission (RFC 3124 section 4.2).
pub const MAX_PACKET: u64 = 65_535;

/// The longest RTT an `update` may report: 60 s, the upper bound RFC 6298 section 2.5 allows
/// for the RTO. Anything longer is a client's error, not a path.
pub const MAX_UPDATE_RTT: Duration = Duration::from_secs(60);

/// Checks an `update` against what the flow sent: an RTT in (0, [`MAX_UPDATE_RTT`]], and no
/// more bytes received than were reported sent and not yet acknowledged (`unacked`), as a TCP
/// receiver refuses an ACK of data never sent (RFC 9293 section 3.10.7.4, as smoltcp does).
/// Returns what stays unacknowledged after it.
fn check_update(update: &CmUpdate, unacked: u64) -> Result<u64, Reply> {
    if let Some(rtt) = update.rtt {
        if rtt == Duration::ZERO || rtt > MAX_UPDATE_RTT {
            return Err(Reply::Error {
                code: ErrorCode::InvalidReport,
                message: format!(
                    "rtt {} ns is outside (0, 60 s]: report a measured round-trip time",
                    rtt.as_nanos()
                ),
            });
        }
    }
    unacked
        .checked_sub(update.nrecd)
        .ok_or_else(|| Reply::Error {
            code: ErrorCode::InvalidReport,
            message: format!(
            "nrecd {} is more than the {unacked} bytes notified as sent and not yet acknowledged",
            update.nrecd
        ),
        })
}

/// The protocol's code for a manager error.
fn error_code(e: &CmError) -> ErrorCode {
    match e {
        CmError::UnknownFlow(_) => ErrorCode::UnknownFlow,
        CmError::UnknownMacroflow(_) => ErrorCode::UnknownMacroflow,
        CmError::DuplicateFlow(_) => ErrorCode::DuplicateFlow,
        CmError::InvalidWeight(_) => ErrorCode::InvalidWeight,
        CmError::InvalidThresh(_) => ErrorCode::InvalidThresh,
        CmError::OutOfHandles => ErrorCode::OutOfHandles,
    }
}

/// The reply for a manager error.
fn refused(e: &CmError) -> Reply {
    Reply::Error {
        code: error_code(e),
        message: e.to_string(),
    }
}

/// `Ok` or the error's reply.
fn done(r: Result<(), CmError>) -> Reply {
    match r {
        Ok(()) => Reply::Ok,
        Err(e) => refused(&e),
    }
}

impl HubState {
    /// Runs the manager's timers due by `now`: each deadline that passed within
    /// [`TIMER_SLACK`] at its own time (so that pacing keeps the slots a late wake-up would
    /// lose; grants of slots that passed go out together), then everything at `now`.
    fn fire(&mut self, now: Instant) {
        let floor = Instant::from_nanos(now.as_nanos().saturating_sub(TIMER_SLACK.as_nanos()));
        let mut last: Option<Instant> = None;
        for _ in 0..MAX_CATCH_UP {
            let Some(due) = self.cm.poll_timeout().filter(|d| *d < now) else {
                break;
            };
            let at = due.max(floor);
            if last.is_some_and(|l| at <= l) {
                // The deadline did not move: nothing more to catch up.
                break;
            }
            self.cm.on_timeout(at);
            last = Some(at);
        }
        self.cm.on_timeout(now);
    }

    fn status(&self) -> Status {
        let st = self.cm.stats();
        Status {
            clients: u32::try_from(self.clients.len()).unwrap_or(u32::MAX),
            flows: u32::try_from(self.owner.len()).unwrap_or(u32::MAX),
            malformed_frames: self.malformed_frames,
            grants: st.grants,
            grants_expired: st.grants_expired,
            events_dropped: self.events_dropped,
        }
    }

    /// A page of the macroflows that hold open flows, from handle `start` on.
    fn macroflows(&self, start: u32) -> Reply {
        // The macroflows from `start` that hold flows of this hub's clients, one more than a
        // page to tell whether more follow: only their flows are visited.
        let members: Vec<(MacroflowId, Vec<FlowId>)> = self
            .cm
            .macroflows_from(MacroflowId(start))
            .map(|m| {
                let owned = m.flows().filter(|f| self.owner.contains_key(f)).collect();
                (m.id(), owned)
            })
            .filter(|(_, flows): &(MacroflowId, Vec<FlowId>)| !flows.is_empty())
            .take(MACROFLOWS_PER_PAGE + 1)
            .collect();
        let more = members.len() > MACROFLOWS_PER_PAGE;
        let list = members
            .into_iter()
            .take(MACROFLOWS_PER_PAGE)
            .filter_map(|(id, flows)| {
                let m = self.cm.macroflow(id)?;
                let (mut sent, mut lost) = (0u64, 0u64);
                for f in &flows {
                    if let Ok(Some(s)) = self.cm.flow_sample(*f) {
                        sent = sent.saturating_add(s.sent_packets);
                        lost = lost.saturating_add(s.lost_packets);
                    }
                }
                Some(MacroflowInfo {
                    id,
                    dst: m.dst(),
                    flows: u32::try_from(flows.len()).unwrap_or(u32::MAX),
                    rate: m.rate(),
                    cwnd: m.aimd().cwnd(),
                    srtt: m.aimd().srtt(),
                    rttvar: m.aimd().rttvar(),
                    aged: m.aging().halvings(),
                    sent_packets: sent,
                    lost_packets: lost,
                })
            })
            .collect();
        Reply::Macroflows { more, list }
    }

    /// The flow if `client` owns it.
    fn owned(&self, client: ClientId, flow: FlowId) -> Result<FlowId, Reply> {
        if self.owner.get(&flow) == Some(&client) {
            Ok(flow)
        } else {
            Err(Reply::Error {
                code: ErrorCode::UnknownFlow,
                message: format!("{flow} is not open on this connection"),
            })
        }
    }

    fn apply(
        &mut self,
        now: Instant,
        client: ClientId,
        request: Request,
        max_flows: usize,
    ) -> Reply {
        match self.try_apply(now, client, request, max_flows) {
            Ok(r) | Err(r) => r,
        }
    }

    fn try_apply(
        &mut self,
        now: Instant,
        client: ClientId,
        request: Request,
        max_flows: usize,
    ) -> Result<Reply, Reply> {
        Ok(match request {
            Request::Open(key) => {
                let held = self.clients.get(&client).map(|c| c.flows.len());
                match held {
                    None => {
                        return Err(Reply::Error {
                            code: ErrorCode::Unavailable,
                            message: "this client is detached".into(),
                        })
                    }
                    Some(n) if n >= max_flows => {
                        return Err(Reply::Error {
                            code: ErrorCode::TooManyFlows,
                            message: format!("this connection holds {n} flows, the limit"),
                        })
                    }
                    Some(_) => {}
                }
                let flow = self.cm.open(now, key).map_err(|e| refused(&e))?;
                self.owner.insert(flow, client);
                if let Some(c) = self.clients.get_mut(&client) {
                    c.flows.insert(flow);
                }
                Reply::Opened(flow)
            }
            Request::Request { flow, nbytes } => {
                let f = self.owned(client, flow)?;
                done(self.cm.request(now, f, nbytes))
            }
            Request::Notify { flow, nsent } => {
                let f = self.owned(client, flow)?;
                if nsent > MAX_PACKET {
                    return Err(Reply::Error {
                        code: ErrorCode::InvalidReport,
                        message: format!(
                            "nsent {nsent} is more than one IPv4 packet ({MAX_PACKET} bytes): \
                             notify once per packet sent"
                        ),
                    });
                }
                self.cm.notify(now, f, nsent).map_err(|e| refused(&e))?;
                let u = self.unacked.entry(f).or_insert(0);
                *u = u.saturating_add(nsent);
                Reply::Ok
            }
            Request::Update { flow, update } => {
                let f = self.owned(client, flow)?;
                let left = check_update(&update, self.unacked.get(&f).copied().unwrap_or(0))?;
                self.cm.update(now, f, &update).map_err(|e| refused(&e))?;
                self.unacked.insert(f, left);
                Reply::Ok
            }
            Request::Query { flow } => {
                let f = self.owned(client, flow)?;
                Reply::Query(self.cm.query(f).map_err(|e| refused(&e))?)
            }
            Request::Close { flow } => {
                let f = self.owned(client, flow)?;
                self.cm.close(now, f).map_err(|e| refused(&e))?;
                self.owner.remove(&f);
                self.unacked.remove(&f);
                if let Some(c) = self.clients.get_mut(&client) {
                    c.flows.remove(&f);
                }
                Reply::Ok
            }
            Request::SetMacroflow { flow, target } => {
                let f = self.owned(client, flow)?;
                Reply::Macroflow(
                    self.cm
                        .set_macroflow(now, f, target)
                        .map_err(|e| refused(&e))?,
                )
            }
            Request::GetMacroflow { flow } => {
                let f = self.owned(client, flow)?;
                Reply::Macroflow(self.cm.get_macroflow(f).map_err(|e| refused(&e))?)
            }
            Request::Thresh { flow, thresh } => {
                let f = self.owned(client, flow)?;
                done(self.cm.thresh(f, thresh))
            }
            Request::Status => Reply::Status(self.status()),
            Request::Macroflows { start } => self.macroflows(start),
            Request::Received {
                from,
                tag,
                bytes,
                ce,
            } => {
                self.responder.on_data(now, from, tag, bytes, ce);
                Reply::Ok
            }
            Request::SetFeedback { flow, mode } => {
                let f = self.owned(client, flow)?;
                done(self.cm.set_feedback(f, mode))
            }
        })
    }

    /// Hands the manager's events to their flows' clients.
    fn drain_events(&mut self) {
        while let Some(e) = self.cm.poll_event() {
            let (flow, event) = match e {
                CmEvent::AppNotify { flow, grant } => (flow, Event::Grant { flow, bytes: grant }),
                CmEvent::ChangeRate {
                    flow,
                    rate,
                    srtt,
                    rttdev,
                } => (
                    flow,
                    Event::ChangeRate {
                        flow,
                        rate,
                        srtt,
                        rttdev,
                    },
                ),
                CmEvent::GrantExpired { flow, bytes } => {
                    (flow, Event::GrantExpired { flow, bytes })
                }
                CmEvent::SendProbe { dst, probe } => {
                    if self.probes_enabled {
                        if self.outbox.len() >= MAX_OUTBOX {
                            self.outbox.pop_front();
                        }
                        let mut bytes = Vec::new();
                        ProbeMessage::Probe(probe).encode_with(self.probe_key.as_ref(), &mut bytes);
                        self.outbox.push_back((dst, bytes));
                    } else {
                        tracing::trace!(%dst, "no probe transport: probe not sent");
                    }
                    continue;
                }
                CmEvent::Segregated { from, to, flows } => {
                    tracing::info!(%from, %to, flows = flows.len(), "macroflow split");
                    continue;
                }
            };
            let Some(c) = self.owner.get(&flow).and_then(|o| self.clients.get(o)) else {
                continue;
            };
            match c.events.try_send(event) {
                Ok(()) => {}
                Err(mpsc::error::TrySendError::Full(_)) => self.events_dropped += 1,
                Err(mpsc::error::TrySendError::Closed(_)) => {}
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use concord_cc::cm::{CmConfig, CmUpdate, FlowKey};
    use std::net::Ipv4Addr;

    fn key(port: u16) -> FlowKey {
        FlowKey::new(Ipv4Addr::LOCALHOST, 9000, port)
    }

    #[tokio::test]
    async fn a_client_may_use_only_its_own_flows_and_leaving_closes_them() {
        let hub = Hub::new(HubConfig::default()).expect("valid config");
        let (a, _ea) = hub.attach();
        let (b, _eb) = hub.attach();
        let Reply::Opened(f) = hub.handle(a, Request::Open(key(1))) else {
            panic!("open refused");
        };
        let r = hub.handle(b, Request::Query { flow: f });
        assert!(matches!(
            r,
            Reply::Error {
                code: ErrorCode::UnknownFlow,
                ..
            }
        ));
        assert!(matches!(
            hub.handle(b, Request::Open(key(1))),
            Reply::Error {
                code: ErrorCode::DuplicateFlow,
                ..
            }
        ));
        assert_eq!(hub.status().flows, 1);
        hub.detach(a);
        assert_eq!(hub.status().flows, 0);
        assert!(matches!(
            hub.handle(b, Request::Open(key(1))),
            Reply::Opened(_)
        ));
    }

    #[tokio::test]
    async fn a_request_is_granted_to_the_flow_that_asked() {
        let hub = Hub::new(HubConfig::default()).expect("valid config");
        let (a, mut ea) = hub.attach();
        let Reply::Opened(f) = hub.handle(a, Request::Open(key(2))) else {
            panic!("open refused");
        };
        let update = CmUpdate {
            rtt: Some(Duration::from_millis(10)),
            ..CmUpdate::default()
        };
        assert_eq!(
            hub.handle(a, Request::Update { flow: f, update }),
            Reply::Ok
        );
        assert_eq!(
            hub.handle(
                a,
                Request::Request {
                    flow: f,
                    nbytes: 1000
                }
            ),
            Reply::Ok
        );
        let mut granted = false;
        while let Ok(e) = ea.try_recv() {
            granted |= e
                == Event::Grant {
                    flow: f,
                    bytes: 1000,
                };
        }
        assert!(granted);
    }

    /// Grants handed to a client so far.
    fn grants(rx: &mut mpsc::Receiver<Event>) -> usize {
        std::iter::from_fn(|| rx.try_recv().ok())
            .filter(|e| matches!(e, Event::Grant { .. }))
            .count()
    }

    #[tokio::test]
    async fn a_late_timer_keeps_the_pacing_slots_that_passed_within_its_slack() {
        // 15 000 bytes per 1 ms: 120 Mbit/s, a 1500-byte grant every 100 us.
        let config = HubConfig {
            cm: CmConfig {
                initial_rtt: Duration::from_millis(1),
                initial_cwnd: 15_000,
                ..CmConfig::default()
            },
            ..HubConfig::default()
        };
        let hub = Hub::new(config).expect("valid config");
        let (a, mut rx) = hub.attach();
        let Reply::Opened(f) = hub.handle(a, Request::Open(key(3))) else {
            panic!("open refused");
        };
        let nbytes = 10_000_000;
        assert_eq!(
            hub.handle(a, Request::Request { flow: f, nbytes }),
            Reply::Ok
        );
        assert!(grants(&mut rx) >= 1, "the first grant goes out at once");
        let mut s = hub.lock();
        let due = s.cm.poll_timeout().expect("a grant is due");
        // The timer wakes 1 ms late: the 10 slots in that millisecond go out, not one.
        s.fire(due + Duration::from_millis(1));
        s.drain_events();
        assert_eq!(grants(&mut rx), 11);
        // 100 ms late: only the last TIMER_SLACK (2 ms, 20 slots) is caught up.
        let due = s.cm.poll_timeout().expect("a grant is due");
        s.fire(due + Duration::from_millis(100));
        s.drain_events();
        assert_eq!(grants(&mut rx), 21);
    }

    #[tokio::test]
    async fn flows_beyond_the_per_client_limit_are_refused() {
        let hub = Hub::new(HubConfig {
            max_flows_per_client: 2,
            ..HubConfig::default()
        })
        .expect("valid config");
        let (a, _ea) = hub.attach();
        assert!(matches!(
            hub.handle(a, Request::Open(key(1))),
            Reply::Opened(_)
        ));
        assert!(matches!(
            hub.handle(a, Request::Open(key(2))),
            Reply::Opened(_)
        ));
        assert!(matches!(
            hub.handle(a, Request::Open(key(3))),
            Reply::Error {
                code: ErrorCode::TooManyFlows,
                ..
            }
        ));
    }

    fn opened(hub: &Hub, c: ClientId, port: u16) -> FlowId {
        match hub.handle(c, Request::Open(key(port))) {
            Reply::Opened(f) => f,
            other => panic!("open refused: {other:?}"),
        }
    }

    fn invalid(r: &Reply) -> bool {
        matches!(
            r,
            Reply::Error {
                code: ErrorCode::InvalidReport,
                ..
            }
        )
    }

    fn update(nrecd: u64, rtt: Option<Duration>) -> Request {
        Request::Update {
            flow: FlowId(u32::MAX),
            update: CmUpdate {
                nrecd,
                rtt,
                ..CmUpdate::default()
            },
        }
    }

    fn on(flow: FlowId, r: Request) -> Request {
        match r {
            Request::Update { update, .. } => Request::Update { flow, update },
            other => other,
        }
    }

    #[tokio::test]
    async fn an_update_acknowledging_bytes_never_sent_is_refused_and_the_shared_rate_holds() {
        // The reproducer: A's flow sent nothing and reports 2^62 bytes received; B's flow in the
        // same macroflow kept its rate.
        let hub = Hub::new(HubConfig::default()).expect("valid config");
        let (a, _ea) = hub.attach();
        let (b, _eb) = hub.attach();
        let fa = opened(&hub, a, 1);
        let fb = opened(&hub, b, 2);
        let rtt = Some(Duration::from_millis(10));
        assert_eq!(hub.handle(b, on(fb, update(0, rtt))), Reply::Ok);
        let before = hub.handle(b, Request::Query { flow: fb });
        let r = hub.handle(a, on(fa, update(1 << 62, Some(Duration::from_micros(1)))));
        assert!(invalid(&r), "{r:?}");
        assert_eq!(hub.handle(b, Request::Query { flow: fb }), before);
        // What was sent may be acknowledged, once.
        assert_eq!(
            hub.handle(
                a,
                Request::Notify {
                    flow: fa,
                    nsent: 1500
                }
            ),
            Reply::Ok
        );
        assert_eq!(hub.handle(a, on(fa, update(1000, rtt))), Reply::Ok);
        assert!(invalid(&hub.handle(a, on(fa, update(501, rtt)))));
        assert_eq!(hub.handle(a, on(fa, update(500, rtt))), Reply::Ok);
        assert!(invalid(&hub.handle(a, on(fa, update(1, rtt)))));
    }

    #[tokio::test]
    async fn rtts_outside_0_to_60_s_are_refused_and_60_s_is_taken() {
        let hub = Hub::new(HubConfig::default()).expect("valid config");
        let (a, _ea) = hub.attach();
        let f = opened(&hub, a, 1);
        for bad in [0, 60_000_000_001, u64::MAX] {
            let r = hub.handle(a, on(f, update(0, Some(Duration::from_nanos(bad)))));
            assert!(invalid(&r), "rtt {bad}: {r:?}");
        }
        assert_eq!(
            hub.handle(a, Request::Query { flow: f }),
            Reply::Query(concord_cc::cm::QueryResult::default()),
            "nothing taken"
        );
        assert_eq!(
            hub.handle(a, on(f, update(0, Some(Duration::from_secs(60))))),
            Reply::Ok
        );
        assert_eq!(hub.handle(a, on(f, update(0, None))), Reply::Ok);
    }

    #[tokio::test]
    async fn the_extremes_of_every_report_field_are_refused_or_taken_without_a_panic() {
        // Runs in the test profile, which checks integer overflow.
        let hub = Hub::new(HubConfig::default()).expect("valid config");
        let (a, _ea) = hub.attach();
        let f = opened(&hub, a, 1);
        assert!(invalid(&hub.handle(
            a,
            Request::Notify {
                flow: f,
                nsent: 65_536
            }
        )));
        assert!(invalid(&hub.handle(
            a,
            Request::Notify {
                flow: f,
                nsent: u64::MAX
            }
        )));
        assert_eq!(
            hub.handle(
                a,
                Request::Notify {
                    flow: f,
                    nsent: 65_535
                }
            ),
            Reply::Ok
        );
        for _ in 0..3 {
            assert!(invalid(&hub.handle(a, on(f, update(u64::MAX, None)))));
        }
        let r = hub.handle(
            a,
            Request::Request {
                flow: f,
                nbytes: u64::MAX,
            },
        );
        assert_eq!(r, Reply::Ok);
        let lossy = Request::Update {
            flow: f,
            update: CmUpdate {
                nrecd: 65_535,
                nlost: u64::MAX,
                loss_mode: concord_cc::cm::LossMode::Persistent,
                rtt: Some(Duration::from_secs(60)),
            },
        };
        assert_eq!(hub.handle(a, lossy), Reply::Ok);
    }

    #[tokio::test]
    async fn probe_nonces_come_from_the_os_not_from_the_seed() {
        let hub = Hub::new(HubConfig::default()).expect("valid config");
        let (a, _ea) = hub.attach();
        let f = opened(&hub, a, 1);
        let explicit = Request::SetFeedback {
            flow: f,
            mode: concord_cc::cm::FeedbackMode::Explicit,
        };
        assert_eq!(hub.handle(a, explicit), Reply::Ok);
        let mut nonces = Vec::new();
        for i in 0..4u64 {
            hub.lock().probes_enabled = true;
            assert_eq!(
                hub.handle(
                    a,
                    Request::Notify {
                        flow: f,
                        nsent: 100
                    }
                ),
                Reply::Ok
            );
            let mut s = hub.lock();
            let now = s.cm.poll_timeout().expect("a probe is due") + Duration::from_secs(i);
            s.cm.on_timeout(now);
            s.drain_events();
            for (_, bytes) in s.outbox.drain(..) {
                if let Ok(ProbeMessage::Probe(p)) = ProbeMessage::decode(&bytes) {
                    nonces.push(p.nonce);
                }
            }
        }
        assert!(nonces.len() >= 2, "{nonces:?}");
        let mut seeded = Rng::new(HubConfig::default().seed);
        let predicted: Vec<u64> = (0..nonces.len()).map(|_| seeded.next_u64()).collect();
        assert!(nonces.iter().all(|n| !predicted.contains(n)), "{nonces:?}");
    }
}
