//! The agent's core, sans-IO: records in, decisions out. It keeps one [`WindowSocket`] per
//! socket of the window algorithms and one [`TcpCm`] for the `concord_cm` sockets, and after
//! each batch of records hands out the decisions of the sockets the batch touched. The
//! datapath module feeds it from the ring buffer and writes its decisions into the map.

use crate::protocol::{Algorithm, Decision, Record, RecordKind};
use crate::tcp_cm::{kernel_cm_config, CmHost, LocalCm, TcpCm};
use crate::window_socket::WindowSocket;
use concord_cc::cm::CmConfigError;
use concord_cc::tcp::mccp::MccpConfig;
use concord_cc::tcp::CcAlgorithm;
use concord_cc::Instant;
use std::collections::{BTreeMap, BTreeSet};

/// The agent's settings.
#[derive(Clone, Debug, PartialEq)]
pub struct AgentConfig {
    /// MCCP's parameters for `concord_mccp` sockets.
    pub mccp: MccpConfig,
    /// The MSS the CM's windows count in, in bytes (its MTU).
    pub cm_mss: u64,
    /// The slow-start threshold a window socket starts with, in bytes, in place of the kernel's
    /// unbounded one (`None`: the kernel's). Applied at the socket's init record only; a socket
    /// first seen mid-connection keeps the kernel's. The MCCP paper's ns-2 senders start with
    /// 64 KiB (`scenarios/mccp/startup.toml`), which is what its Tables 1/2 measure.
    pub initial_ssthresh: Option<u64>,
}

impl Default for AgentConfig {
    fn default() -> Self {
        AgentConfig {
            mccp: MccpConfig::default(),
            cm_mss: 1448,
            initial_ssthresh: None,
        }
    }
}

/// What the agent has done.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct AgentStats {
    /// Records handled.
    pub records: u64,
    /// Of these, ACK records.
    pub acks: u64,
    /// Sockets opened.
    pub sockets_opened: u64,
    /// Sockets released.
    pub sockets_closed: u64,
    /// Decisions handed out.
    pub decisions: u64,
}

/// The agent: every socket's controller. The `concord_cm` sockets' CM lives in `H`: the
/// agent's own ([`LocalCm`]) or the CM daemon's.
#[derive(Clone, Debug)]
pub struct Agent<H: CmHost = LocalCm> {
    config: AgentConfig,
    windows: BTreeMap<u64, WindowSocket>,
    cm: TcpCm<H>,
    /// Window sockets with records since the last decisions.
    touched: BTreeSet<u64>,
    /// Sockets released since the last [`Agent::take_released`].
    released: Vec<u64>,
    stats: AgentStats,
}

impl Agent<LocalCm> {
    /// An agent with no sockets and a CM of its own for the `concord_cm` sockets.
    pub fn new(config: AgentConfig) -> Result<Agent<LocalCm>, CmConfigError> {
        let cm = LocalCm::new(kernel_cm_config(config.cm_mss))?;
        Ok(Agent::with_cm(config, cm))
    }
}

impl<H: CmHost> Agent<H> {
    /// An agent with no sockets whose `concord_cm` sockets become flows of `cm`.
    pub fn with_cm(config: AgentConfig, cm: H) -> Agent<H> {
        Agent {
            config,
            windows: BTreeMap::new(),
            cm: TcpCm::with_host(cm),
            touched: BTreeSet::new(),
            released: Vec::new(),
            stats: AgentStats::default(),
        }
    }

    /// What the agent has done.
    pub fn stats(&self) -> AgentStats {
        self.stats
    }

    /// The sockets the agent drives now.
    pub fn sockets(&self) -> usize {
        self.windows.len() + self.cm.len()
    }

    /// The TCP/CM part.
    pub fn cm(&self) -> &TcpCm<H> {
        &self.cm
    }

    /// The window socket `sock_id`, if there is one.
    pub fn window_socket(&self, sock_id: u64) -> Option<&WindowSocket> {
        self.windows.get(&sock_id)
    }

    /// Handles one record.
    pub fn on_record(&mut self, r: &Record) {
        self.stats.records += 1;
        if r.kind == RecordKind::Ack {
            self.stats.acks += 1;
        }
        match r.kind {
            RecordKind::Init => self.stats.sockets_opened += 1,
            RecordKind::Release => {
                self.stats.sockets_closed += 1;
                self.released.push(r.sock_id);
            }
            _ => {}
        }
        let cc = match r.algo {
            Algorithm::Cm => {
                self.cm.on_record(r);
                return;
            }
            Algorithm::NewReno => CcAlgorithm::NewReno,
            Algorithm::WestwoodPlus => CcAlgorithm::WestwoodPlus,
            Algorithm::Mccp => CcAlgorithm::Mccp(self.config.mccp),
            Algorithm::Cubic => CcAlgorithm::Cubic,
        };
        if r.kind == RecordKind::Release {
            self.windows.remove(&r.sock_id);
            self.touched.remove(&r.sock_id);
            return;
        }
        if let std::collections::btree_map::Entry::Vacant(slot) = self.windows.entry(r.sock_id) {
            // The first record of a socket (its init record, or any record of a socket that
            // opened before this agent started watching) sets the controller up from the
            // kernel's window. The configuration was checked when the agent started.
            match WindowSocket::new(cc, r) {
                Ok(mut s) => {
                    if let (RecordKind::Init, Some(ssthresh)) =
                        (r.kind, self.config.initial_ssthresh)
                    {
                        s.set_initial_ssthresh(ssthresh);
                    }
                    slot.insert(s);
                }
                Err(_) => return,
            }
        }
        if let Some(s) = self.windows.get_mut(&r.sock_id) {
            s.on_record(r);
            self.touched.insert(r.sock_id);
        }
    }

    /// Runs timers due by `now` (the CM's aging).
    pub fn on_tick(&mut self, now: Instant) {
        self.cm.on_tick(now);
    }

    /// The decisions of every socket whose state changed since the last call, stamped
    /// `stamp_ns`, in `out` (cleared first).
    pub fn decisions(&mut self, stamp_ns: u64, out: &mut Vec<(u64, Decision)>) {
        out.clear();
        for id in std::mem::take(&mut self.touched) {
            if let Some(s) = self.windows.get(&id) {
                out.push((id, s.decision(stamp_ns)));
            }
        }
        self.cm.decisions(stamp_ns, out);
        self.stats.decisions += out.len() as u64;
    }

    /// The sockets released since the last call: a decision written for one of them after the
    /// datapath deleted its entry (the release record was still on its way) must go again.
    pub fn take_released(&mut self) -> Vec<u64> {
        std::mem::take(&mut self.released)
    }

    /// Every socket's decision, stamped `stamp_ns`: to refresh the map when no records came
    /// (an idle socket's entry must not go stale while it may send again).
    pub fn all_decisions(&mut self, stamp_ns: u64, out: &mut Vec<(u64, Decision)>) {
        self.touched.extend(self.windows.keys().copied());
        self.cm.mark_changed();
        self.decisions(stamp_ns, out);
    }
}

/// Checks the agent's configuration before it starts.
pub fn validate(config: &AgentConfig) -> Result<(), String> {
    config
        .mccp
        .validate()
        .map_err(|e| format!("mccp configuration: {e}"))?;
    if config.cm_mss == 0 {
        return Err("cm_mss is 0; give the sockets' MSS in bytes (1448 is usual)".into());
    }
    if config.initial_ssthresh == Some(0) {
        return Err(
            "initial ssthresh is 0 bytes; give at least two segments (65536 is the MCCP paper's), or leave it out for the kernel's"
                .into(),
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::{ca_state, INFINITE_SSTHRESH};
    use std::net::Ipv4Addr;

    fn rec(sock_id: u64, algo: Algorithm, kind: RecordKind) -> Record {
        Record {
            sock_id,
            time_ns: 1_000_000_000,
            kind,
            algo,
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
            mss: 1448,
            cwnd: 10,
            ssthresh: INFINITE_SSTHRESH,
            loss_events: 0,
            daddr: Ipv4Addr::new(10, 0, 0, 2),
            dport: 5201,
            sport: 40000 + sock_id as u16,
            saddr: Ipv4Addr::new(10, 0, 0, 1),
        }
    }

    #[test]
    fn each_algorithm_gets_its_own_controller() {
        let mut a = Agent::new(AgentConfig::default()).expect("valid");
        a.on_record(&rec(1, Algorithm::NewReno, RecordKind::Init));
        a.on_record(&rec(2, Algorithm::Mccp, RecordKind::Init));
        a.on_record(&rec(3, Algorithm::Cm, RecordKind::Init));
        a.on_record(&rec(4, Algorithm::Cubic, RecordKind::Init));
        assert_eq!(a.sockets(), 4);
        assert!(matches!(
            a.window_socket(4).map(WindowSocket::controller),
            Some(concord_cc::tcp::WindowCtl::Cubic(_))
        ));
        assert!(matches!(
            a.window_socket(2).map(WindowSocket::controller),
            Some(concord_cc::tcp::WindowCtl::Mccp(_))
        ));
        assert!(a.cm().flow_of(3).is_some());
        let mut out = Vec::new();
        a.decisions(9, &mut out);
        let ids: Vec<u64> = out.iter().map(|(id, _)| *id).collect();
        assert_eq!(ids, vec![1, 2, 4, 3]);
        assert!(out.iter().all(|(_, d)| d.stamp_ns == 9));
    }

    #[test]
    fn only_touched_sockets_are_written_again() {
        let mut a = Agent::new(AgentConfig::default()).expect("valid");
        a.on_record(&rec(1, Algorithm::NewReno, RecordKind::Init));
        a.on_record(&rec(2, Algorithm::NewReno, RecordKind::Init));
        let mut out = Vec::new();
        a.decisions(0, &mut out);
        let mut ack = rec(2, Algorithm::NewReno, RecordKind::Ack);
        ack.bytes_acked = 1448;
        a.on_record(&ack);
        a.decisions(0, &mut out);
        assert_eq!(out.len(), 1);
        assert_eq!(out[0].0, 2);
        assert_eq!(out[0].1.cwnd, 11);
        a.all_decisions(0, &mut out);
        assert_eq!(out.len(), 2);
    }

    #[test]
    fn a_socket_seen_first_mid_connection_starts_from_the_kernels_window() {
        let mut a = Agent::new(AgentConfig::default()).expect("valid");
        let mut ack = rec(5, Algorithm::NewReno, RecordKind::Ack);
        ack.cwnd = 40;
        ack.ssthresh = 30;
        a.on_record(&ack);
        let mut out = Vec::new();
        a.decisions(0, &mut out);
        assert_eq!(out[0].1.ssthresh, 30);
        assert_eq!(out[0].1.cwnd, 40);
    }

    #[test]
    fn an_initial_ssthresh_replaces_the_kernels_at_init_only() {
        let mut a = Agent::new(AgentConfig {
            initial_ssthresh: Some(65_536),
            ..AgentConfig::default()
        })
        .expect("valid");
        a.on_record(&rec(1, Algorithm::NewReno, RecordKind::Init));
        a.on_record(&rec(2, Algorithm::Mccp, RecordKind::Init));
        // Opened before the agent: its first record is an ACK, with the kernel's ssthresh.
        a.on_record(&rec(3, Algorithm::NewReno, RecordKind::Ack));
        let mut out = Vec::new();
        a.decisions(0, &mut out);
        let ssthresh: Vec<(u64, u32)> = out.iter().map(|(id, d)| (*id, d.ssthresh)).collect();
        // 65536 B / 1448 B = 45.26: 45 segments, rounded down.
        assert_eq!(ssthresh, vec![(1, 45), (2, 45), (3, INFINITE_SSTHRESH)]);
        assert!(validate(&AgentConfig {
            initial_ssthresh: Some(0),
            ..AgentConfig::default()
        })
        .expect_err("rejected")
        .contains("initial ssthresh"));
    }

    #[test]
    fn release_forgets_the_socket() {
        let mut a = Agent::new(AgentConfig::default()).expect("valid");
        a.on_record(&rec(1, Algorithm::NewReno, RecordKind::Init));
        a.on_record(&rec(1, Algorithm::NewReno, RecordKind::Release));
        assert_eq!(a.sockets(), 0);
        assert_eq!(a.stats().sockets_closed, 1);
        assert_eq!(a.take_released(), vec![1]);
        assert!(a.take_released().is_empty());
    }

    #[test]
    fn a_bad_configuration_is_named() {
        let c = AgentConfig {
            cm_mss: 0,
            ..AgentConfig::default()
        };
        assert!(validate(&c).expect_err("rejected").contains("cm_mss"));
    }
}
