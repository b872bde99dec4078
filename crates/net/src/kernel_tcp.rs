//! `concordd --tcp`: TCP/CM on kernel sockets inside the daemon (CM paper section 4, "TCP/CM").
//!
//! The daemon loads concord-bpf's datapath and registers its algorithms for as long as it runs.
//! Every kernel TCP socket that uses `concord_cm` becomes a flow of the daemon's own
//! [`Hub`], the manager its API clients use: a socket to a host joins that host's macroflow
//! beside the clients' flows to it, and the scheduler shares the macroflow among all of them.
//! The sockets are flows of one in-process client of the hub, and reach the manager only
//! through [`Hub::handle`] with the API's requests, under the same checks as any client:
//!
//! - `cm_open` at the socket's first record, `cm_close` at its release;
//! - `cm_notify` for the bytes each ACK acknowledged (the kernel sends when its window allows,
//!   not on a grant, so its bytes take their time from the macroflow's pacing and the clients'
//!   grants slow down by as much), then `cm_update` with those bytes and the RTT sample;
//! - `cm_update` with the loss mode for the kernel's congestion signals (fast retransmit:
//!   transient; the retransmission timer: persistent; ECN).
//!
//! The socket's cwnd is its share of the macroflow's window, `cwnd * share` by the scheduler's
//! weights (paper section 2.4), read under the hub's lock ([`Hub::inspect`]); the window
//! algorithms (`concord_newreno`, `concord_mccp`, ...) run as in `concord-tcp`.
//!
//! A socket weighs 1 unless [`TcpWeights`] (`concordd --tcp-weight PORT=WEIGHT`) gives its
//! destination port another weight, set when its flow opens.

use crate::hub::{ClientId, Hub};
use crate::protocol::{Event, Reply, Request};
use concord_bpf::agent::{Agent, AgentConfig};
use concord_bpf::datapath::{run_agent, DatapathError, RunStats};
use concord_bpf::tcp_cm::{flow_window, CmHost, FlowWindow};
use concord_cc::cm::scheduler::WEIGHT_RANGE;
use concord_cc::cm::{CmUpdate, FlowId, FlowKey};
use concord_cc::Instant;
use std::collections::BTreeMap;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use tokio::sync::mpsc;

/// The scheduler weights of kernel sockets by destination port (paper section 2.4: weights
/// configured for flows); a port not listed weighs 1.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct TcpWeights {
    by_port: BTreeMap<u16, f64>,
}

impl TcpWeights {
    /// No weights: every socket weighs 1.
    pub fn new() -> TcpWeights {
        TcpWeights::default()
    }

    /// Sockets to destination port `port` weigh `weight`; a weight outside [`WEIGHT_RANGE`]
    /// is refused with the range.
    pub fn set(&mut self, port: u16, weight: f64) -> Result<(), String> {
        let (lo, hi) = WEIGHT_RANGE;
        if !(lo..=hi).contains(&weight) {
            return Err(format!(
                "the weight of port {port}, {weight}, is outside {lo} to {hi}"
            ));
        }
        self.by_port.insert(port, weight);
        Ok(())
    }

    /// The weight of sockets to destination port `port`, if one is configured.
    pub fn of_port(&self, port: u16) -> Option<f64> {
        self.by_port.get(&port).copied()
    }

    /// Reads one `PORT=WEIGHT` (`--tcp-weight 5201=2`), the weight checked against
    /// [`WEIGHT_RANGE`].
    pub fn parse_entry(s: &str) -> Result<(u16, f64), String> {
        let (port, weight) = s
            .split_once('=')
            .ok_or_else(|| format!("`{s}`: expected PORT=WEIGHT, e.g. 5201=2"))?;
        let port: u16 = port.trim().parse().map_err(|_| {
            format!("`{s}`: the port must be a number from 0 to 65535, e.g. 5201=2")
        })?;
        let weight: f64 = weight
            .trim()
            .parse()
            .map_err(|_| format!("`{s}`: the weight must be a number, e.g. 5201=2"))?;
        TcpWeights::new().set(port, weight)?;
        Ok((port, weight))
    }
}

/// The kernel sockets' side of the hub: one client whose flows are the `concord_cm` sockets.
/// Dropping it detaches the client, which closes the flows left open.
#[derive(Debug)]
pub struct HubCm {
    hub: Arc<Hub>,
    client: ClientId,
    /// The sockets' weights by destination port.
    weights: TcpWeights,
    /// The client's events (rate changes of its flows); no socket asks for grants, so they
    /// are read and let go, so that the queue never fills.
    events: mpsc::Receiver<Event>,
}

impl HubCm {
    /// A new client of `hub` for the kernel sockets, all of weight 1.
    pub fn attach(hub: Arc<Hub>) -> HubCm {
        HubCm::with_weights(hub, TcpWeights::new())
    }

    /// A new client of `hub` for the kernel sockets, weighed by `weights`.
    pub fn with_weights(hub: Arc<Hub>, weights: TcpWeights) -> HubCm {
        let (client, events) = hub.attach();
        HubCm {
            hub,
            client,
            weights,
            events,
        }
    }

    /// The client the sockets' flows belong to.
    pub fn client(&self) -> ClientId {
        self.client
    }
}

impl Drop for HubCm {
    fn drop(&mut self) {
        self.hub.detach(self.client);
    }
}

impl CmHost for HubCm {
    /// The hub's clock: the daemon handles every request at its own time.
    fn now(&self, _record_ns: u64) -> Instant {
        self.hub.now()
    }

    fn open(&mut self, _now: Instant, key: FlowKey) -> Option<FlowId> {
        match self.hub.handle(self.client, Request::Open(key)) {
            Reply::Opened(flow) => {
                if let Some(w) = self.weights.of_port(key.dst_port) {
                    let r = self.hub.set_weight(self.client, flow, w);
                    if r != Reply::Ok {
                        tracing::warn!(?key, weight = w, reply = ?r, "the CM refused a socket's weight; it weighs 1");
                    }
                }
                Some(flow)
            }
            other => {
                tracing::warn!(?key, reply = ?other, "the CM refused a concord_cm socket; it runs on the datapath's Reno");
                None
            }
        }
    }

    fn close(&mut self, _now: Instant, flow: FlowId) {
        let _ = self.hub.handle(self.client, Request::Close { flow });
    }

    fn notify(&mut self, _now: Instant, flow: FlowId, nsent: u64) {
        let _ = self
            .hub
            .handle(self.client, Request::Notify { flow, nsent });
    }

    fn update(&mut self, _now: Instant, flow: FlowId, update: &CmUpdate) -> bool {
        matches!(
            self.hub.handle(
                self.client,
                Request::Update {
                    flow,
                    update: *update
                }
            ),
            Reply::Ok
        )
    }

    fn window(&self, flow: FlowId) -> Option<FlowWindow> {
        self.hub.inspect(|cm| flow_window(cm, flow))
    }

    /// The hub's timer runs the manager's timers; the other clients' flows move the shared
    /// window at any time, so every socket's share is handed out again at every tick.
    fn on_tick(&mut self, _now: Instant) -> bool {
        while self.events.try_recv().is_ok() {}
        true
    }
}

/// Loads the datapath, registers the algorithms, calls `ready` with their names, and runs the
/// agent with its `concord_cm` sockets in `hub`, weighed by `weights`, until `stop` is set.
/// Blocking: run it on a thread of its own. The algorithms are unregistered when it returns,
/// and by the kernel if the process dies.
pub fn run(
    hub: Arc<Hub>,
    config: AgentConfig,
    weights: TcpWeights,
    stop: &AtomicBool,
    ready: impl FnOnce(&[&'static str]),
) -> Result<RunStats, DatapathError> {
    concord_bpf::agent::validate(&config).map_err(DatapathError::Config)?;
    let agent = Agent::with_cm(config, HubCm::with_weights(hub, weights));
    run_agent(agent, None, stop, ready)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hub::HubConfig;
    use concord_bpf::protocol::{ca_state, Algorithm, Record, RecordKind, INFINITE_SSTHRESH};
    use concord_cc::cm::CmConfig;
    use std::net::Ipv4Addr;

    const HOST: Ipv4Addr = Ipv4Addr::new(10, 0, 0, 2);
    const MSS: u32 = 1448;

    fn rec(sock_id: u64, kind: RecordKind) -> Record {
        Record {
            sock_id,
            time_ns: 1_000_000_000,
            kind,
            algo: Algorithm::Cm,
            ca_state: ca_state::OPEN,
            ece: false,
            cwnd_limited: true,
            same_event: false,
            event: 0,
            bytes_acked: 0,
            pkts_acked: 0,
            rtt_us: -1,
            srtt_us: 0,
            delivered: 0,
            lost: 0,
            in_flight: 0,
            mss: MSS,
            cwnd: 10,
            ssthresh: INFINITE_SSTHRESH,
            loss_events: 0,
            daddr: HOST,
            dport: 5201,
            sport: 40000 + sock_id as u16,
            saddr: Ipv4Addr::new(10, 0, 0, 1),
        }
    }

    fn hub() -> Arc<Hub> {
        Hub::new(HubConfig {
            cm: CmConfig {
                mtu: u64::from(MSS),
                initial_cwnd: 10 * u64::from(MSS),
                ..CmConfig::default()
            },
            ..HubConfig::default()
        })
        .expect("valid")
    }

    fn macroflows(hub: &Hub) -> Vec<crate::protocol::MacroflowInfo> {
        let (c, _rx) = hub.attach();
        let list = match hub.handle(c, Request::Macroflows { start: 0 }) {
            Reply::Macroflows { list, .. } => list,
            other => panic!("{other:?}"),
        };
        hub.detach(c);
        list
    }

    #[test]
    fn a_kernel_socket_and_a_client_flow_to_one_host_share_one_macroflow() {
        let hub = hub();
        let (udp, _events) = hub.attach();
        let Reply::Opened(app) = hub.handle(udp, Request::Open(FlowKey::new(HOST, 9000, 9001)))
        else {
            panic!("the client's flow opens")
        };
        let mut agent = Agent::with_cm(AgentConfig::default(), HubCm::attach(Arc::clone(&hub)));
        agent.on_record(&rec(1, RecordKind::Init));
        let list = macroflows(&hub);
        assert_eq!(list.len(), 1, "{list:?}");
        assert_eq!((list[0].dst, list[0].flows), (HOST, 2));
        // Equal weights: the socket holds half the 10-segment initial window.
        let mut out = Vec::new();
        agent.decisions(7, &mut out);
        assert_eq!(out.len(), 1);
        assert_eq!((out[0].0, out[0].1.cwnd), (1, 5));
        let flow = agent.cm().flow_of(1).expect("open");
        assert_eq!(
            hub.inspect(|cm| (cm.get_macroflow(flow).ok(), cm.get_macroflow(app).ok())),
            (Some(list[0].id), Some(list[0].id))
        );
        hub.detach(udp);
        agent.on_tick(hub.now());
        agent.decisions(8, &mut out);
        assert_eq!(
            out[0].1.cwnd, 10,
            "alone again, the socket has the whole window"
        );
    }

    #[test]
    fn acks_of_a_kernel_socket_grow_the_window_a_client_flow_shares() {
        let hub = hub();
        let (udp, _events) = hub.attach();
        let Reply::Opened(app) = hub.handle(udp, Request::Open(FlowKey::new(HOST, 9000, 9001)))
        else {
            panic!("the client's flow opens")
        };
        let mut agent = Agent::with_cm(AgentConfig::default(), HubCm::attach(Arc::clone(&hub)));
        agent.on_record(&rec(1, RecordKind::Init));
        for _ in 0..10 {
            let mut a = rec(1, RecordKind::Ack);
            a.bytes_acked = MSS;
            a.pkts_acked = 1;
            a.rtt_us = 40_000;
            agent.on_record(&a);
        }
        // Slow start: ten segments acknowledged double the macroflow's window to 20.
        let w = hub.inspect(|cm| flow_window(cm, app)).expect("open");
        assert_eq!(w.cwnd, 20 * u64::from(MSS));
        assert_eq!(w.share, 0.5);
        // The client sees the macroflow's rate: its half of 20 segments per 40 ms.
        let Reply::Query(q) = hub.handle(udp, Request::Query { flow: app }) else {
            panic!("query")
        };
        let bps = q.rate.expect("an RTT sample").bps();
        let want = 10.0 * f64::from(MSS) * 8.0 / 0.040;
        assert!(
            (bps as f64 - want).abs() / want < 0.01,
            "{bps} against {want}"
        );
    }

    #[test]
    fn a_loss_of_a_client_flow_halves_the_sockets_share_too() {
        let hub = hub();
        let (udp, _events) = hub.attach();
        let Reply::Opened(app) = hub.handle(udp, Request::Open(FlowKey::new(HOST, 9000, 9001)))
        else {
            panic!("the client's flow opens")
        };
        let mut agent = Agent::with_cm(AgentConfig::default(), HubCm::attach(Arc::clone(&hub)));
        agent.on_record(&rec(1, RecordKind::Init));
        let mut a = rec(1, RecordKind::Ack);
        a.bytes_acked = 10 * MSS;
        a.rtt_us = 40_000;
        agent.on_record(&a);
        let mut out = Vec::new();
        agent.on_tick(hub.now());
        agent.decisions(1, &mut out);
        // 20 segments, half of them the socket's.
        assert_eq!(out[0].1.cwnd, 10);
        let r = hub.handle(
            udp,
            Request::Update {
                flow: app,
                update: CmUpdate {
                    loss_mode: concord_cc::cm::LossMode::Transient,
                    ..CmUpdate::default()
                },
            },
        );
        assert_eq!(r, Reply::Ok);
        agent.on_tick(hub.now());
        agent.decisions(2, &mut out);
        // The client's loss halved the macroflow to 10 segments: the socket's half is 5.
        assert_eq!(out[0].1.cwnd, 5);
    }

    #[test]
    fn a_socket_of_weight_2_beside_a_client_flow_holds_two_thirds_of_the_window() {
        let hub = hub();
        let (udp, _events) = hub.attach();
        let Reply::Opened(app) = hub.handle(udp, Request::Open(FlowKey::new(HOST, 9000, 9001)))
        else {
            panic!("the client's flow opens")
        };
        let mut weights = TcpWeights::new();
        weights.set(5201, 2.0).expect("in range");
        let side = HubCm::with_weights(Arc::clone(&hub), weights);
        let mut agent = Agent::with_cm(AgentConfig::default(), side);
        agent.on_record(&rec(1, RecordKind::Init));
        let flow = agent.cm().flow_of(1).expect("open");
        assert_eq!(
            hub.inspect(|cm| (flow_window(cm, flow), flow_window(cm, app)))
                .0
                .map(|w| w.share),
            Some(2.0 / 3.0)
        );
        assert_eq!(
            hub.inspect(|cm| flow_window(cm, app)).map(|w| w.share),
            Some(1.0 / 3.0)
        );
        // Two thirds of the 10-segment initial window, rounded up to whole segments: 7.
        let mut out = Vec::new();
        agent.decisions(1, &mut out);
        assert_eq!((out[0].0, out[0].1.cwnd), (1, 7));
        // A socket to another port weighs 1.
        let mut other = rec(2, RecordKind::Init);
        other.dport = 5202;
        agent.on_record(&other);
        let flow2 = agent.cm().flow_of(2).expect("open");
        assert_eq!(
            hub.inspect(|cm| flow_window(cm, flow2)).map(|w| w.share),
            Some(1.0 / 4.0)
        );
    }

    #[test]
    fn the_hub_sets_the_weight_of_its_clients_own_flows_only() {
        let hub = hub();
        let (a, _ea) = hub.attach();
        let (b, _eb) = hub.attach();
        let Reply::Opened(fa) = hub.handle(a, Request::Open(FlowKey::new(HOST, 9000, 9001))) else {
            panic!("opens")
        };
        assert!(matches!(
            hub.set_weight(b, fa, 2.0),
            Reply::Error {
                code: crate::protocol::ErrorCode::UnknownFlow,
                ..
            }
        ));
        assert!(matches!(
            hub.set_weight(a, fa, 0.0),
            Reply::Error {
                code: crate::protocol::ErrorCode::InvalidWeight,
                ..
            }
        ));
        assert_eq!(hub.set_weight(a, fa, 3.0), Reply::Ok);
        assert_eq!(
            hub.inspect(|cm| cm
                .macroflow(cm.get_macroflow(fa).expect("open"))
                .map(|m| m.scheduler().total_weight())),
            Some(3.0)
        );
    }

    #[test]
    fn weights_are_read_as_port_equals_weight_with_clear_errors() {
        assert_eq!(TcpWeights::parse_entry("5201=2"), Ok((5201, 2.0)));
        assert_eq!(TcpWeights::parse_entry(" 80 = 0.5 "), Ok((80, 0.5)));
        let err = |s| TcpWeights::parse_entry(s).expect_err(s);
        assert!(err("5201").contains("expected PORT=WEIGHT"));
        assert!(err("70000=2").contains("the port must be a number from 0 to 65535"));
        assert!(err("5201=two").contains("the weight must be a number"));
        assert!(err("5201=0").contains("is outside 0.001 to 1000000"));
        assert!(err("5201=NaN").contains("is outside"));
    }

    #[test]
    fn releasing_the_socket_closes_its_flow_and_dropping_the_side_detaches_it() {
        let hub = hub();
        let mut agent = Agent::with_cm(AgentConfig::default(), HubCm::attach(Arc::clone(&hub)));
        agent.on_record(&rec(1, RecordKind::Init));
        agent.on_record(&rec(2, RecordKind::Init));
        assert_eq!(hub.status().flows, 2);
        agent.on_record(&rec(1, RecordKind::Release));
        assert_eq!(hub.status().flows, 1);
        drop(agent);
        assert_eq!(hub.status().flows, 0);
        assert_eq!(hub.status().clients, 0);
    }
}
