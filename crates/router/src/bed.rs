//! A test bed of hosts and concord routers in network namespaces, from a topology file. Root
//! only.
//!
//! ```toml
//! name = "gcca-fig4"
//! mtu = 8192               # every link's MTU, bytes
//! ecn = false              # hosts negotiate ECN (net.ipv4.tcp_ecn = 1)
//! tcp_cc = "reno"          # the hosts' net.ipv4.tcp_congestion_control
//! router_realtime = 20     # the routers run under SCHED_FIFO at this priority (default: not)
//!
//! [[node]]
//! name = "a"
//! kind = "host"            # host | router
//!
//! [[link]]
//! between = ["r2", "b"]
//! rate = "2.5Mbps"
//! forward = { queue = "gcca", limit = "30pkt", min_th = 1, max_th = 3, w_q = 0.2, max_p = 0.1 }
//! reverse = { queue = "droptail", limit = "100pkt" }
//! delay = "50ms"           # propagation delay, each way (default 0)
//! ```
//!
//! The bed keeps a record of the namespaces it made in [`RECORD_DIR`], written before each is
//! made; the next bed to come up removes those of a bed whose process is gone ([`sweep_stale`]).
//!
//! Link `i` (from 1, in file order) is the subnet 10.N.i.0/24: its first node is .1, its
//! second .2, and their interfaces get the MACs 02:cc:N:i:01:00 and 02:cc:N:i:02:00. A router
//! names its interface after the node on the other end; a host's one interface is `eth0`. The
//! `forward` queue is the first node's output towards the second, `reverse` the other way; on a
//! host's side the queue is the kernel's (hosts send as fast as their TCP lets them). Each
//! router runs `concord-router` with a configuration written from the topology: a port per
//! link, a neighbour per link, and a route to every other link's subnet along a shortest path.
//!
//! The namespace's own kernel still sees every frame a router receives: it answers ARP for the
//! router's addresses, and a `blackhole` rule per port (with forwarding on, so that the drop is
//! silent: Linux `ip_error` sends nothing for `-EINVAL`) keeps it from forwarding IPv4 packets
//! a second time. Hosts get `gso_max_segs 1`, so that kernel TCP hands the veth one segment per
//! frame and the router never sees a 64 KB GSO frame.

use serde::Deserialize;
use std::collections::VecDeque;
use std::fmt::Write as _;
use std::net::Ipv4Addr;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

/// Why a test bed could not be made.
#[derive(Debug, thiserror::Error)]
pub enum BedError {
    /// The topology file is unreadable or wrong.
    #[error("topology: {0}")]
    Topology(String),
    /// A command failed.
    #[error("{command} failed: {stderr}")]
    Command {
        /// The command line.
        command: String,
        /// Its standard error.
        stderr: String,
    },
    /// Something else of the system failed.
    #[error("{0}")]
    Io(#[from] std::io::Error),
}

/// A node's kind.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Kind {
    /// An end host with kernel TCP/UDP.
    Host,
    /// A concord router.
    Router,
}

/// A node.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Node {
    /// Its name, 1 to 6 letters or digits.
    pub name: String,
    /// Host or router.
    pub kind: Kind,
    /// For a host attached to a router: the router speaks GCCP to it (true), or not.
    #[serde(default)]
    pub gccp: bool,
    /// For a host attached to a router: CONGESTION for it is also a CE mark (see
    /// [`crate::config::NeighbourConfig::ce_proxy`]).
    #[serde(default)]
    pub ce_proxy: bool,
    /// For a host attached to a router: the router runs its UDP ports' leaky buckets at this
    /// rate (see [`crate::config::NeighbourConfig::udp_proxy`]).
    pub udp_rate: Option<String>,
    /// For a host attached to a router: the router runs ECA's WTP shaper for each of the host's
    /// flows with this weight (bit/s per unit load; see
    /// [`crate::config::NeighbourConfig::wtp`]).
    pub wtp_weight: Option<String>,
    /// For a host attached to a router: the router records the LOAD delivered to the host and
    /// reflects it as RLOAD on the host's packets back (see
    /// [`crate::config::NeighbourConfig::eca_reflect`]).
    #[serde(default)]
    pub eca_reflect: bool,
}

/// One direction's output queue on a router, as a `[[port]]` of the router's configuration.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct QueueSpec {
    /// droptail | red | red-ecn | codel | gcca.
    pub queue: Option<String>,
    /// "NNpkt" or bytes.
    pub limit: Option<String>,
    /// RED's min_th.
    pub min_th: Option<f64>,
    /// RED's max_th.
    pub max_th: Option<f64>,
    /// RED's w_q.
    pub w_q: Option<f64>,
    /// RED's max_p.
    pub max_p: Option<f64>,
    /// RED's gentle mode.
    pub gentle: Option<bool>,
    /// RED's mean packet size, bytes.
    pub mean_pktsize: Option<String>,
    /// A GCCA leaky bucket obeying the downstream's GCCP messages.
    pub throttle: Option<bool>,
    /// The bucket's floor, a fraction of the rate.
    pub min_rate: Option<String>,
    /// The bucket's step per CONGESTION, a fraction of the rate.
    pub decrease_step: Option<String>,
    /// ECA's load estimator on this port.
    pub eca: Option<bool>,
    /// Its target utilisation.
    pub eca_target: Option<f64>,
}

/// A link.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Link {
    /// The two nodes.
    pub between: [String; 2],
    /// The rate, both directions (e.g. "10Mbps").
    pub rate: String,
    /// The first node's output queue, if it is a router.
    #[serde(default)]
    pub forward: QueueSpec,
    /// The second node's output queue, if it is a router.
    #[serde(default)]
    pub reverse: QueueSpec,
    /// The propagation delay each way (e.g. "50ms"), run by the link's routers: a router
    /// holds what arrives over the link that long (`ingress_delay` of its port), and a router
    /// facing a host holds what it sends to the host that long (`delay`), so that each
    /// direction is delayed once. A link needs a router at one end at least.
    pub delay: Option<String>,
}

/// A topology file.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Topology {
    /// Its name.
    pub name: String,
    /// Every link's MTU, bytes.
    #[serde(default = "default_mtu")]
    pub mtu: u32,
    /// Hosts negotiate ECN.
    #[serde(default)]
    pub ecn: bool,
    /// The hosts' TCP congestion control (`net.ipv4.tcp_congestion_control`), e.g. "reno".
    pub tcp_cc: Option<String>,
    /// The routers run under `SCHED_FIFO` at this priority (`concord-router run --realtime`),
    /// so that other work on the machine cannot deschedule them; `None`: the default policy.
    pub router_realtime: Option<u8>,
    /// The nodes.
    pub node: Vec<Node>,
    /// The links.
    pub link: Vec<Link>,
}

fn default_mtu() -> u32 {
    1500
}

/// An interface of a node.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Interface {
    /// The link's index, from 1.
    pub link: usize,
    /// The interface's name in the node's namespace.
    pub name: String,
    /// Its address.
    pub addr: Ipv4Addr,
    /// Its MAC.
    pub mac: [u8; 6],
    /// The node on the other end.
    pub peer: usize,
}

fn mac_text(m: [u8; 6]) -> String {
    m.iter()
        .map(|b| format!("{b:02x}"))
        .collect::<Vec<_>>()
        .join(":")
}

impl Topology {
    /// Reads and checks a topology file.
    pub fn load(path: &Path) -> Result<Topology, BedError> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| BedError::Topology(format!("reading {}: {e}", path.display())))?;
        Topology::parse(&text).map_err(|e| BedError::Topology(format!("{}: {e}", path.display())))
    }

    /// Reads and checks a topology's text.
    pub fn parse(text: &str) -> Result<Topology, String> {
        let t: Topology = toml::from_str(text).map_err(|e| e.to_string())?;
        for n in &t.node {
            if n.name.is_empty()
                || n.name.len() > 6
                || !n.name.chars().all(|c| c.is_ascii_alphanumeric())
            {
                return Err(format!(
                    "node name {:?}: use 1 to 6 letters or digits",
                    n.name
                ));
            }
        }
        for l in &t.link {
            for end in &l.between {
                if t.index(end).is_none() {
                    return Err(format!(
                        "link end {end:?} is not a [[node]]; declare it or fix the name"
                    ));
                }
            }
            if l.between[0] == l.between[1] {
                return Err(format!("link {:?} joins a node to itself", l.between));
            }
            if let Some(d) = &l.delay {
                let hosts_only = l
                    .between
                    .iter()
                    .all(|e| t.index(e).is_some_and(|i| t.node[i].kind == Kind::Host));
                if hosts_only {
                    return Err(format!(
                        "link {:?}: a delay needs a router at one end (the routers run it)",
                        l.between
                    ));
                }
                concord_cc::units::parse_duration(d)
                    .map_err(|e| format!("link {:?} delay {d:?}: {e}", l.between))?;
            }
        }
        if t.router_realtime.is_some_and(|p| !(1..=99).contains(&p)) {
            return Err("router_realtime: give a SCHED_FIFO priority of 1 to 99".into());
        }
        if t.link.len() > 250 || !(576..=65_000).contains(&t.mtu) {
            return Err("at most 250 links, and an MTU of 576 to 65000".into());
        }
        for (i, n) in t.node.iter().enumerate() {
            if n.kind == Kind::Host && t.interfaces(i, 0).len() != 1 {
                return Err(format!("host {:?} must have exactly one link", n.name));
            }
        }
        Ok(t)
    }

    /// The index of node `name`.
    pub fn index(&self, name: &str) -> Option<usize> {
        self.node.iter().position(|n| n.name == name)
    }

    /// The interfaces of node `i`, for address network `net` (10.net.x.y).
    pub fn interfaces(&self, i: usize, net: u8) -> Vec<Interface> {
        let mut v = Vec::new();
        for (k, l) in self.link.iter().enumerate() {
            let link = k + 1;
            for side in 0..2 {
                if self.index(&l.between[side]) != Some(i) {
                    continue;
                }
                let peer = self.index(&l.between[1 - side]).unwrap_or(0);
                let name = if self.node[i].kind == Kind::Host {
                    "eth0".to_string()
                } else {
                    self.node[peer].name.clone()
                };
                v.push(Interface {
                    link,
                    name,
                    addr: Ipv4Addr::new(10, net, link as u8, side as u8 + 1),
                    mac: [0x02, 0xcc, net, link as u8, side as u8 + 1, 0],
                    peer,
                });
            }
        }
        v
    }

    /// The address of host `name`.
    pub fn host_addr(&self, name: &str, net: u8) -> Option<Ipv4Addr> {
        let i = self.index(name)?;
        self.interfaces(i, net).first().map(|f| f.addr)
    }

    /// The first hop from node `from` towards node `to` along a shortest path.
    fn next_hop(&self, from: usize, to: usize, net: u8) -> Option<usize> {
        let mut prev = vec![usize::MAX; self.node.len()];
        prev[from] = from;
        let mut queue = VecDeque::from([from]);
        while let Some(n) = queue.pop_front() {
            if n != from && self.node[n].kind == Kind::Host {
                continue;
            }
            for f in self.interfaces(n, net) {
                if prev[f.peer] == usize::MAX {
                    prev[f.peer] = n;
                    queue.push_back(f.peer);
                }
            }
        }
        let mut n = to;
        if prev[n] == usize::MAX {
            return None;
        }
        while prev[n] != from {
            n = prev[n];
        }
        Some(n)
    }

    /// The `concord-router` configuration of router `i`.
    pub fn router_config(&self, i: usize, net: u8, seed: u64) -> String {
        let mut s = format!("seed = {seed}\n");
        let ifs = self.interfaces(i, net);
        for f in &ifs {
            let l = &self.link[f.link - 1];
            let spec = if self.index(&l.between[0]) == Some(i) {
                &l.forward
            } else {
                &l.reverse
            };
            let _ = write!(
                s,
                "\n[[port]]\nname = {:?}\nrate = {:?}\nmac = {:?}\n",
                f.name,
                l.rate,
                mac_text(f.mac)
            );
            if let Some(d) = &l.delay {
                // Into this router: always here. Out of it: here if the other end is a host
                // (a router there holds it as its own ingress).
                let _ = writeln!(s, "ingress_delay = {d:?}");
                if self.node[f.peer].kind == Kind::Host {
                    let _ = writeln!(s, "delay = {d:?}");
                }
            }
            if let Some(q) = &spec.queue {
                let _ = writeln!(s, "queue = {q:?}");
            }
            if let Some(q) = &spec.limit {
                let _ = writeln!(s, "limit = {q:?}");
            }
            for (k, v) in [
                ("min_th", spec.min_th),
                ("max_th", spec.max_th),
                ("w_q", spec.w_q),
                ("max_p", spec.max_p),
            ] {
                if let Some(v) = v {
                    let _ = writeln!(s, "{k} = {v:?}");
                }
            }
            if let Some(t) = spec.throttle {
                let _ = writeln!(s, "throttle = {t}");
            }
            if let Some(t) = spec.gentle {
                let _ = writeln!(s, "gentle = {t}");
            }
            if let Some(t) = spec.eca {
                let _ = writeln!(s, "eca = {t}");
            }
            if let Some(t) = spec.eca_target {
                let _ = writeln!(s, "eca_target = {t:?}");
            }
            for (k, v) in [
                ("mean_pktsize", &spec.mean_pktsize),
                ("min_rate", &spec.min_rate),
                ("decrease_step", &spec.decrease_step),
            ] {
                if let Some(v) = v {
                    let _ = writeln!(s, "{k} = {v:?}");
                }
            }
        }
        for f in &ifs {
            let peer = &self.node[f.peer];
            let peer_if = self
                .interfaces(f.peer, net)
                .into_iter()
                .find(|p| p.link == f.link);
            let Some(p) = peer_if else { continue };
            let (gccp, ce_proxy) = match peer.kind {
                Kind::Router => (true, false),
                Kind::Host => (peer.gccp, peer.ce_proxy),
            };
            let role = if peer.kind == Kind::Host {
                "host"
            } else {
                "router"
            };
            let _ = write!(
                s,
                "\n[[neighbour]]\nport = {:?}\nip = \"{}\"\nmac = {:?}\nrole = \"{role}\"\ngccp = {gccp}\nce_proxy = {ce_proxy}\n",
                f.name,
                p.addr,
                mac_text(p.mac)
            );
            if let (Kind::Host, Some(r)) = (peer.kind, &peer.udp_rate) {
                let _ = writeln!(s, "udp_rate = {r:?}");
            }
            if let (Kind::Host, Some(w)) = (peer.kind, &peer.wtp_weight) {
                let _ = writeln!(s, "wtp_weight = {w:?}");
            }
            if peer.kind == Kind::Host && peer.eca_reflect {
                let _ = writeln!(s, "eca_reflect = true");
            }
        }
        // A route to every link's subnet not attached here, via the first hop of a shortest path
        // to that link's first node; attached subnets route to the neighbour itself.
        for (k, l) in self.link.iter().enumerate() {
            let link = k + 1;
            let subnet = format!("10.{net}.{link}.0/24");
            if let Some(f) = ifs.iter().find(|f| f.link == link) {
                let Some(p) = self
                    .interfaces(f.peer, net)
                    .into_iter()
                    .find(|p| p.link == link)
                else {
                    continue;
                };
                let _ = write!(
                    s,
                    "\n[[route]]\ndst = \"{}/32\"\nvia = \"{}\"\n",
                    p.addr, p.addr
                );
                continue;
            }
            let Some(target) = self.index(&l.between[0]) else {
                continue;
            };
            let target = if self.next_hop(i, target, net).is_some() {
                target
            } else {
                self.index(&l.between[1]).unwrap_or(target)
            };
            let Some(hop) = self.next_hop(i, target, net) else {
                continue;
            };
            let Some(via) = ifs.iter().find(|f| f.peer == hop).and_then(|f| {
                self.interfaces(hop, net)
                    .into_iter()
                    .find(|p| p.link == f.link)
            }) else {
                continue;
            };
            let _ = write!(s, "\n[[route]]\ndst = {subnet:?}\nvia = \"{}\"\n", via.addr);
        }
        s
    }
}

/// A running test bed: its namespaces and router processes, removed on drop.
#[derive(Debug)]
pub struct Bed {
    /// The topology.
    pub topology: Topology,
    /// The namespace prefix.
    pub prefix: String,
    /// The second byte of the addresses.
    pub net: u8,
    /// Where the router configurations and status files live.
    pub dir: PathBuf,
    routers: Vec<(String, Child)>,
    namespaces: Vec<String>,
}

fn run(args: &[&str]) -> Result<(), BedError> {
    let out = Command::new(args[0])
        .args(&args[1..])
        .stdin(Stdio::null())
        .output()?;
    if out.status.success() {
        Ok(())
    } else {
        Err(BedError::Command {
            command: args.join(" "),
            stderr: String::from_utf8_lossy(&out.stderr).trim().to_string(),
        })
    }
}

impl Bed {
    /// The namespace of node `name`.
    pub fn ns(&self, name: &str) -> String {
        format!("{}-{name}", self.prefix)
    }

    /// Builds the namespaces and links and starts a router per router node (`router_exe` is the
    /// `concord-router` binary). `prefix` names the namespaces (`PREFIX-node`).
    pub fn up(
        topology: Topology,
        prefix: &str,
        net: u8,
        router_exe: &Path,
        seed: u64,
    ) -> Result<Bed, BedError> {
        let dir = std::env::temp_dir().join(format!("{prefix}-bed"));
        std::fs::create_dir_all(&dir)?;
        let mut bed = Bed {
            topology,
            prefix: prefix.to_string(),
            net,
            dir,
            routers: Vec::new(),
            namespaces: Vec::new(),
        };
        bed.build(router_exe, seed)?;
        Ok(bed)
    }

    /// The record of what this bed made: its owner process, then one namespace per line,
    /// written before each namespace is made, so that [`sweep_stale`] can remove a bed whose
    /// process died without dropping it.
    fn record(&self) -> Result<(), BedError> {
        std::fs::create_dir_all(RECORD_DIR)?;
        let mut text = format!("owner {}\n", std::process::id());
        for ns in &self.namespaces {
            text += &format!("ns {ns}\n");
        }
        std::fs::write(Path::new(RECORD_DIR).join(&self.prefix), text)?;
        Ok(())
    }

    fn build(&mut self, router_exe: &Path, seed: u64) -> Result<(), BedError> {
        sweep_stale();
        let t = self.topology.clone();
        let net = self.net;
        let mtu = t.mtu.to_string();
        for n in &t.node {
            let ns = self.ns(&n.name);
            if Path::new("/run/netns").join(&ns).exists() {
                return Err(BedError::Topology(format!(
                    "namespace {ns} exists and is not this bed's: choose another prefix"
                )));
            }
            self.namespaces.push(ns.clone());
            self.record()?;
            run(&["ip", "netns", "add", &ns])?;
            run(&["ip", "-n", &ns, "link", "set", "lo", "up"])?;
            let mut sysctls = vec![
                "net.ipv4.conf.all.rp_filter=0",
                "net.ipv4.conf.default.rp_filter=0",
            ];
            if n.kind == Kind::Router {
                sysctls.push("net.ipv4.ip_forward=1");
            } else if t.ecn {
                sysctls.push("net.ipv4.tcp_ecn=1");
            }
            let cc = t
                .tcp_cc
                .as_ref()
                .map(|c| format!("net.ipv4.tcp_congestion_control={c}"));
            let mut args = vec!["ip", "netns", "exec", &ns, "sysctl", "-qw"];
            args.extend(sysctls);
            if let (Kind::Host, Some(c)) = (n.kind, &cc) {
                args.push(c);
            }
            run(&args)?;
        }
        for (k, l) in t.link.iter().enumerate() {
            let link = k + 1;
            let ends: Vec<(usize, Interface)> = l
                .between
                .iter()
                .filter_map(|name| {
                    let i = t.index(name)?;
                    let f = t.interfaces(i, net).into_iter().find(|f| f.link == link)?;
                    Some((i, f))
                })
                .collect();
            let [(ia, fa), (ib, fb)] = &ends[..] else {
                return Err(BedError::Topology(format!("link {link} has no two ends")));
            };
            let (nsa, nsb) = (self.ns(&t.node[*ia].name), self.ns(&t.node[*ib].name));
            let tmp = format!("crtl{link}x");
            run(&[
                "ip", "link", "add", &tmp, "netns", &nsa, "type", "veth", "peer", "name", &fb.name,
                "netns", &nsb,
            ])?;
            run(&[
                "ip", "-n", &nsa, "link", "set", "dev", &tmp, "name", &fa.name,
            ])?;
            for (ns, f) in [(&nsa, fa), (&nsb, fb)] {
                let addr = format!("{}/24", f.addr);
                run(&[
                    "ip",
                    "-n",
                    ns,
                    "link",
                    "set",
                    "dev",
                    &f.name,
                    "address",
                    &mac_text(f.mac),
                ])?;
                run(&["ip", "-n", ns, "link", "set", "dev", &f.name, "mtu", &mtu])?;
                run(&[
                    "ip",
                    "-n",
                    ns,
                    "link",
                    "set",
                    "dev",
                    &f.name,
                    "gso_max_segs",
                    "1",
                ])?;
                run(&["ip", "-n", ns, "addr", "add", &addr, "dev", &f.name])?;
                run(&["ip", "-n", ns, "link", "set", "dev", &f.name, "up"])?;
            }
        }
        for (i, n) in t.node.iter().enumerate() {
            let ns = self.ns(&n.name);
            let ifs = t.interfaces(i, net);
            match n.kind {
                Kind::Host => {
                    let f = &ifs[0];
                    let gw = t
                        .interfaces(f.peer, net)
                        .into_iter()
                        .find(|p| p.link == f.link)
                        .map(|p| p.addr.to_string())
                        .unwrap_or_default();
                    run(&["ip", "-n", &ns, "route", "add", "default", "via", &gw])?;
                }
                Kind::Router => {
                    for f in &ifs {
                        run(&[
                            "ip",
                            "-n",
                            &ns,
                            "rule",
                            "add",
                            "pref",
                            "50",
                            "iif",
                            &f.name,
                            "blackhole",
                        ])?;
                    }
                    let cfg = self.dir.join(format!("{}.toml", n.name));
                    std::fs::write(&cfg, t.router_config(i, net, seed))?;
                    let status = self.status_path(&n.name);
                    let child = Command::new("ip")
                        .args(["netns", "exec", &ns])
                        .arg(router_exe)
                        .arg("run")
                        .arg("--config")
                        .arg(&cfg)
                        .arg("--status")
                        .arg(&status)
                        .arg("--watch")
                        .arg(format!("/run/netns/{ns}"))
                        .args(
                            t.router_realtime
                                .map(|p| vec!["--realtime".to_string(), p.to_string()])
                                .unwrap_or_default(),
                        )
                        .stdin(Stdio::null())
                        .stdout(Stdio::null())
                        .stderr(std::fs::File::create(
                            self.dir.join(format!("{}.log", n.name)),
                        )?)
                        .spawn()?;
                    self.routers.push((n.name.clone(), child));
                }
            }
        }
        // Wait for every router's first status: its sockets are open.
        for _ in 0..50 {
            if self
                .routers
                .iter()
                .all(|(name, _)| self.status_path(name).exists())
            {
                return Ok(());
            }
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
        // The bed is removed when this error drops it, logs and all: say what the routers said.
        let mut said = String::new();
        for (name, _) in &self.routers {
            let log =
                std::fs::read_to_string(self.dir.join(format!("{name}.log"))).unwrap_or_default();
            if !log.trim().is_empty() {
                let _ = write!(said, "; {name}: {}", log.trim());
            }
        }
        Err(BedError::Topology(format!(
            "a router did not start within 2.5 s{said}"
        )))
    }

    /// The status file of router `name`.
    pub fn status_path(&self, name: &str) -> PathBuf {
        self.dir.join(format!("{name}.status"))
    }

    /// Router `name`'s status, as `key value` pairs (see [`parse_status`]).
    pub fn status(&self, name: &str) -> Vec<(String, u64)> {
        parse_status(&std::fs::read_to_string(self.status_path(name)).unwrap_or_default())
    }

    /// One value of router `name`'s status, 0 if absent.
    pub fn counter(&self, name: &str, key: &str) -> u64 {
        self.status(name)
            .into_iter()
            .find(|(k, _)| k == key)
            .map_or(0, |(_, v)| v)
    }

    /// Runs a command in node `name`'s namespace.
    pub fn exec(&self, name: &str, args: &[&str]) -> Command {
        let mut c = Command::new("ip");
        c.args(["netns", "exec", &self.ns(name)]).args(args);
        c
    }

    /// Stops the routers and removes the namespaces.
    pub fn down(&mut self) {
        for (_, c) in &mut self.routers {
            let _ = c.kill();
            let _ = c.wait();
        }
        self.routers.clear();
        for ns in self.namespaces.drain(..).rev() {
            if Path::new("/run/netns").join(&ns).exists() {
                let _ = run(&["ip", "netns", "del", &ns]);
            }
        }
        let _ = std::fs::remove_file(Path::new(RECORD_DIR).join(&self.prefix));
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// The namespace prefix of a bed a test brings up: the environment variable `var` if it is set
/// and not empty (so that people or jobs sharing a machine each give their own, and never
/// touch another's namespaces), else `default`; then `tag` (which run of the test) and this
/// process's id (see [`prefix_for`]).
pub fn test_prefix(var: &str, default: &str, tag: &str) -> String {
    let base = std::env::var(var)
        .ok()
        .filter(|v| !v.trim().is_empty())
        .unwrap_or_else(|| default.to_string());
    prefix_for(base.trim(), tag, std::process::id())
}

/// `base`, `tag`, then `pid` modulo 1000: beds of two processes, or of two runs of one, get
/// different namespaces (`PREFIX-node`).
pub fn prefix_for(base: &str, tag: &str, pid: u32) -> String {
    format!("{base}{tag}{}", pid % 1000)
}

/// A router's status text as `key value` pairs; a port line's pairs are named
/// `port.NAME.key`. Lines that do not parse are skipped.
pub fn parse_status(text: &str) -> Vec<(String, u64)> {
    let mut v = Vec::new();
    for line in text.lines() {
        let words: Vec<&str> = line.split_whitespace().collect();
        if words.first() == Some(&"port") && words.len() >= 2 {
            for kv in words[2..].chunks(2) {
                if let [k, val] = kv {
                    if let Ok(x) = val.parse() {
                        v.push((format!("port.{}.{k}", words[1]), x));
                    }
                }
            }
        } else if let [k, val] = words[..] {
            if let Ok(x) = val.parse() {
                v.push((k.to_string(), x));
            }
        }
    }
    v
}

/// Where the beds' records live.
pub const RECORD_DIR: &str = "/run/concord-router-bed";

/// Removes the namespaces of every bed whose owner process is gone (its routers exit by
/// themselves once their namespace is removed); returns the prefixes removed.
pub fn sweep_stale() -> Vec<String> {
    let mut swept = Vec::new();
    let Ok(dir) = std::fs::read_dir(RECORD_DIR) else {
        return swept;
    };
    for entry in dir.flatten() {
        let Ok(text) = std::fs::read_to_string(entry.path()) else {
            continue;
        };
        let owner = text
            .lines()
            .find_map(|l| l.strip_prefix("owner "))
            .and_then(|p| p.trim().parse::<u32>().ok());
        if owner.is_none_or(|p| Path::new(&format!("/proc/{p}")).exists()) {
            continue;
        }
        for ns in text
            .lines()
            .filter_map(|l| l.strip_prefix("ns "))
            .collect::<Vec<_>>()
            .iter()
            .rev()
        {
            if Path::new("/run/netns").join(ns).exists() {
                let _ = run(&["ip", "netns", "del", ns]);
            }
        }
        let _ = std::fs::remove_file(entry.path());
        swept.push(entry.file_name().to_string_lossy().into_owned());
    }
    swept
}

/// The owner process and namespaces of the bed recorded under `prefix`, if one is.
fn recorded(prefix: &str) -> Option<(Option<u32>, Vec<String>)> {
    let text = std::fs::read_to_string(Path::new(RECORD_DIR).join(prefix)).ok()?;
    let owner = text
        .lines()
        .find_map(|l| l.strip_prefix("owner "))
        .and_then(|p| p.trim().parse::<u32>().ok());
    let namespaces = text
        .lines()
        .filter_map(|l| l.strip_prefix("ns "))
        .map(str::to_string)
        .collect();
    Some((owner, namespaces))
}

/// Takes down the bed recorded under `prefix` (made by `concord-router bed up`, or a test's
/// bed whose process died): asks its owner process to stop with SIGTERM and waits up to 5 s for
/// it to tidy up, then removes whatever namespaces of the record are left (its routers stop
/// when their namespace goes). Returns the namespaces removed here.
pub fn down_recorded(prefix: &str) -> Result<Vec<String>, BedError> {
    let Some((owner, namespaces)) = recorded(prefix) else {
        return Err(BedError::Topology(format!(
            "no test bed is recorded under prefix {prefix:?} (the records are in {RECORD_DIR})"
        )));
    };
    if let Some(pid) = owner.filter(|&p| p != std::process::id()) {
        if Path::new(&format!("/proc/{pid}")).exists() {
            let _ = run(&["kill", "-TERM", &pid.to_string()]);
            for _ in 0..50 {
                if recorded(prefix).is_none() {
                    return Ok(Vec::new());
                }
                std::thread::sleep(std::time::Duration::from_millis(100));
            }
        }
    }
    let mut removed = Vec::new();
    for ns in namespaces.iter().rev() {
        if Path::new("/run/netns").join(ns).exists() {
            run(&["ip", "netns", "del", ns])?;
            removed.push(ns.clone());
        }
    }
    let _ = std::fs::remove_file(Path::new(RECORD_DIR).join(prefix));
    // The configurations, logs and status files `Bed::up` wrote.
    let _ = std::fs::remove_dir_all(std::env::temp_dir().join(format!("{prefix}-bed")));
    Ok(removed)
}

impl Bed {
    /// A description for the person at the terminal: each node's namespace and addresses, and
    /// where the routers' status files are.
    pub fn describe(&self) -> String {
        let mut s = String::new();
        for (i, n) in self.topology.node.iter().enumerate() {
            let addrs: Vec<String> = self
                .topology
                .interfaces(i, self.net)
                .iter()
                .map(|f| format!("{} {}", f.name, f.addr))
                .collect();
            let kind = match n.kind {
                Kind::Host => "host",
                Kind::Router => "router",
            };
            let _ = write!(
                s,
                "{kind:<6} {:<6} ip netns exec {:<16} ({})",
                n.name,
                self.ns(&n.name),
                addrs.join(", ")
            );
            if n.kind == Kind::Router {
                let _ = write!(
                    s,
                    "  status: concord-router status {}",
                    self.status_path(&n.name).display()
                );
            }
            s.push('\n');
        }
        s
    }
}

impl Drop for Bed {
    fn drop(&mut self) {
        self.down();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::RouterConfig;

    #[test]
    fn a_test_beds_prefix_is_the_base_the_run_and_the_process() {
        assert_eq!(prefix_for("cp7", "g", 123_456), "cp7g456");
        assert_eq!(prefix_for("crt", "", 7), "crt7");
        // With the variable unset, the default base.
        assert_eq!(
            test_prefix("CONCORD_TEST_PREFIX_NEVER_SET", "crt", "u"),
            prefix_for("crt", "u", std::process::id())
        );
    }

    const FIG4: &str = r#"
        name = "t"
        [[node]]
        name = "a"
        kind = "host"
        [[node]]
        name = "r1"
        kind = "router"
        [[node]]
        name = "r2"
        kind = "router"
        [[node]]
        name = "b"
        kind = "host"
        [[link]]
        between = ["a", "r1"]
        rate = "10Mbps"
        [[link]]
        between = ["r1", "r2"]
        rate = "10Mbps"
        forward = { queue = "gcca", limit = "30pkt", min_th = 1, max_th = 4, w_q = 0.5, max_p = 0.2 }
        [[link]]
        between = ["r2", "b"]
        rate = "2500kbps"
        forward = { queue = "red", limit = "30pkt", min_th = 1, max_th = 3 }
    "#;

    #[test]
    fn a_chain_gives_each_router_its_ports_neighbours_and_routes() {
        let t = Topology::parse(FIG4).expect("valid");
        let r1 = RouterConfig::parse(&t.router_config(1, 9, 1)).expect("r1 config parses");
        assert_eq!(r1.ports.len(), 2);
        assert_eq!(r1.ports[0].name, "a");
        assert_eq!(r1.ports[1].name, "r2");
        assert!(r1.ports[1].bucket.is_some());
        assert_eq!(r1.neighbours[1].ip, Ipv4Addr::new(10, 9, 2, 2));
        // Host b's subnet (link 3) goes via r2.
        let to_b = r1
            .routes
            .iter()
            .find(|r| r.contains(Ipv4Addr::new(10, 9, 3, 2)))
            .expect("a route to b");
        assert_eq!(to_b.via, 1);
        let to_a = r1
            .routes
            .iter()
            .find(|r| r.contains(Ipv4Addr::new(10, 9, 1, 1)))
            .expect("a route to a");
        assert_eq!(to_a.via, 0);
        let r2 = RouterConfig::parse(&t.router_config(2, 9, 1)).expect("r2 config parses");
        assert_eq!(r2.ports[1].rate.bps(), 2_500_000);
        let to_a = r2
            .routes
            .iter()
            .find(|r| r.contains(Ipv4Addr::new(10, 9, 1, 1)))
            .expect("r2 reaches a");
        assert_eq!(r2.neighbours[to_a.via].ip, Ipv4Addr::new(10, 9, 2, 1));
        assert_eq!(t.host_addr("b", 9), Some(Ipv4Addr::new(10, 9, 3, 2)));
    }

    #[test]
    fn a_routers_status_reads_back_as_named_counters() {
        let r = crate::router::Router::new(
            &RouterConfig::parse(&Topology::parse(FIG4).expect("valid").router_config(1, 9, 1))
                .expect("r1 config parses"),
        )
        .expect("router");
        let status = parse_status(&r.status(concord_cc::time::Instant::ZERO));
        let get = |k: &str| status.iter().find(|(n, _)| n == k).map(|(_, v)| *v);
        assert_eq!(get("received"), Some(0));
        assert_eq!(get("port.r2.rate_bps"), Some(10_000_000));
        assert_eq!(get("port.r2.congestion_sent"), Some(0));
        assert_eq!(get("nonsense"), None);
        assert_eq!(parse_status("port\nx y\nz 3 4\n"), []);
    }

    #[test]
    fn a_links_delay_is_run_once_each_way_by_its_routers() {
        use concord_cc::time::Duration;
        // r1 - r2 is delayed 5 ms and r2 - b 50 ms: r2 holds what arrives from r1 (ingress)
        // and r1 what arrives from r2; r2 holds what arrives from b and what it sends to b.
        let t = Topology::parse(
            &FIG4
                .replace(
                    "between = [\"r1\", \"r2\"]",
                    "between = [\"r1\", \"r2\"]\ndelay = \"5ms\"",
                )
                .replace(
                    "between = [\"r2\", \"b\"]",
                    "between = [\"r2\", \"b\"]\ndelay = \"50ms\"",
                ),
        )
        .expect("valid");
        let port = |router: usize, name: &str| {
            RouterConfig::parse(&t.router_config(router, 9, 1))
                .expect("parses")
                .ports
                .into_iter()
                .find(|p| p.name == name)
                .map(|p| (p.delay, p.ingress_delay))
        };
        let ms = Duration::from_millis;
        assert_eq!(port(1, "r2"), Some((Duration::ZERO, ms(5))));
        assert_eq!(port(1, "a"), Some((Duration::ZERO, Duration::ZERO)));
        assert_eq!(port(2, "r1"), Some((Duration::ZERO, ms(5))));
        assert_eq!(port(2, "b"), Some((ms(50), ms(50))));
        let bad = FIG4.replace(
            "between = [\"r2\", \"b\"]",
            "between = [\"r2\", \"b\"]\ndelay = \"50\"",
        );
        assert!(Topology::parse(&bad)
            .expect_err("no unit")
            .contains("delay"));
    }

    #[test]
    fn dangling_links_and_bad_names_are_refused() {
        assert!(Topology::parse(
            &FIG4.replace("between = [\"r2\", \"b\"]", "between = [\"r2\", \"c\"]")
        )
        .expect_err("dangling")
        .contains("not a [[node]]"));
        assert!(
            Topology::parse(&FIG4.replace("name = \"r1\"", "name = \"r-1\""))
                .expect_err("bad name")
                .contains("letters or digits")
        );
    }

    #[test]
    fn eca_hosts_and_the_real_time_priority_reach_the_router_configs() {
        let path =
            Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenarios/testbed/eca-123-eca.toml");
        let t = Topology::load(&path).expect("valid");
        assert_eq!(t.router_realtime, Some(20));
        let r1 = t.index("r1").expect("r1");
        let c1 = RouterConfig::parse(&t.router_config(r1, 9, 1)).expect("r1 config parses");
        let weights: Vec<u64> = c1
            .neighbours
            .iter()
            .filter_map(|n| n.wtp.map(|w| w.weight.bps()))
            .collect();
        assert_eq!(weights, [1_000_000, 2_000_000, 3_000_000]);
        assert!(c1
            .ports
            .iter()
            .find(|p| p.name == "r2")
            .is_some_and(|p| p.eca.is_some()));
        let r2 = t.index("r2").expect("r2");
        let c2 = RouterConfig::parse(&t.router_config(r2, 9, 1)).expect("r2 config parses");
        let reflecting: Vec<bool> = c2.neighbours.iter().map(|n| n.eca_reflect).collect();
        assert_eq!(reflecting, [false, true]);
        let bad = std::fs::read_to_string(&path)
            .expect("read")
            .replace("router_realtime = 20", "router_realtime = 0");
        assert!(Topology::parse(&bad).is_err());
    }
}
