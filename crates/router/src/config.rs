//! The router's configuration: a TOML file naming its ports, its neighbours and its routes.
//!
//! ```toml
//! seed = 1                      # RED's random draws
//!
//! [[port]]
//! name = "r2"                   # the interface, in the router's namespace
//! rate = "10Mbps"               # the port's output rate (the router's token clock)
//! queue = "gcca"                # droptail | red | red-ecn | codel | gcca
//! limit = "100pkt"              # the queue's capacity: "NNpkt" or bytes ("64KiB")
//! throttle = true               # a GCCA leaky bucket obeying the downstream's GCCP messages
//! eca = false                   # ECA's load estimator: stamps max(LOAD, L) in the TOS byte
//! eca_target = 0.9              # its target utilisation
//! min_rate = "20%"              # the bucket's floor, a fraction of the rate (default 1%)
//! decrease_step = "10%"         # the bucket's step per CONGESTION (default 10%)
//! min_th = 1                    # RED's (and the detector's) parameters: min_th, max_th,
//! max_th = 3                    # w_q, max_p, gentle, mean_pktsize; defaults from
//! w_q = 0.2                     # RedConfig::for_limit
//! delay = "50ms"                # propagation delay out of the port: a frame leaves this long
//!                               # after its transmission starts (default 0)
//! ingress_delay = "50ms"        # propagation delay into the port: a frame that arrives is
//!                               # held this long before the router takes it (default 0)
//!
//! [[neighbour]]
//! port = "r2"                   # the port it is reached through
//! ip = "10.9.2.2"
//! mac = "02:00:0a:09:02:02"
//! role = "router"               # router | host
//! gccp = true                   # it speaks GCCP (is sent, and may send, GCCP messages)
//! ce_proxy = false              # a host: CONGESTION for it also marks CE (see NeighbourConfig)
//! udp_rate = "15Mbps"           # a host: run its UDP ports' leaky buckets here (UdpProxy)
//! udp_queue = 64                # packets held per UDP port
//! wtp_weight = "1Mbps"          # a host: run its flows' ECA WTP shapers here (WtpProxy)
//! wtp_queue = 100               # packets held per flow by its shaper
//! eca_reflect = false           # a host: record LOAD delivered to it, reflect it as RLOAD
//!
//! [[route]]
//! dst = "10.9.3.0/24"
//! via = "10.9.2.2"              # a neighbour's address
//! ```

use concord_cc::aqm::{CodelConfig, QueueLimit, RedConfig};
use concord_cc::eca::load_estimator::LoadEstimatorConfig;
use concord_cc::gcca::{DetectorConfig, LeakyBucketConfig};
use concord_cc::time::Duration;
use concord_cc::units::{parse_bytes, parse_fraction, Rate};
use serde::Deserialize;
use std::net::Ipv4Addr;
use std::path::Path;

/// Why a configuration cannot run.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// The file could not be read.
    #[error("reading {path}: {source}")]
    Read {
        /// The file.
        path: String,
        /// The error.
        source: std::io::Error,
    },
    /// The TOML does not parse or has an unknown key.
    #[error("{0}")]
    Toml(String),
    /// A value is out of range or does not parse.
    #[error("{what} = {value:?}: {fix}")]
    Value {
        /// The key.
        what: String,
        /// Its text.
        value: String,
        /// How to fix it.
        fix: String,
    },
    /// A name refers to nothing.
    #[error("{what} {name:?} is not defined: {fix}")]
    Dangling {
        /// What kind of name.
        what: &'static str,
        /// The name.
        name: String,
        /// How to fix it.
        fix: String,
    },
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct FileConfig {
    #[serde(default)]
    seed: u64,
    #[serde(default)]
    port: Vec<FilePort>,
    #[serde(default)]
    neighbour: Vec<FileNeighbour>,
    #[serde(default)]
    route: Vec<FileRoute>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct FilePort {
    name: String,
    rate: String,
    #[serde(default = "default_queue")]
    queue: String,
    #[serde(default = "default_limit")]
    limit: String,
    min_th: Option<f64>,
    max_th: Option<f64>,
    w_q: Option<f64>,
    max_p: Option<f64>,
    gentle: Option<bool>,
    mean_pktsize: Option<String>,
    throttle: Option<bool>,
    min_rate: Option<String>,
    decrease_step: Option<String>,
    eca: Option<bool>,
    eca_target: Option<f64>,
    mac: Option<String>,
    delay: Option<String>,
    ingress_delay: Option<String>,
}

fn default_queue() -> String {
    "droptail".into()
}

fn default_limit() -> String {
    "100pkt".into()
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct FileNeighbour {
    port: String,
    ip: String,
    mac: String,
    #[serde(default = "default_role")]
    role: String,
    #[serde(default)]
    gccp: bool,
    #[serde(default)]
    ce_proxy: bool,
    udp_rate: Option<String>,
    udp_queue: Option<usize>,
    wtp_weight: Option<String>,
    wtp_queue: Option<usize>,
    #[serde(default)]
    eca_reflect: bool,
}

fn default_role() -> String {
    "host".into()
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct FileRoute {
    dst: String,
    via: String,
}

/// A port's queue discipline.
#[derive(Clone, Debug, PartialEq)]
pub enum Discipline {
    /// A FIFO that drops arrivals when full.
    DropTail(QueueLimit),
    /// RED (Floyd & Jacobson 1993), marking ECN-capable packets if its `ecn` is set.
    Red(RedConfig),
    /// CoDel (RFC 8289).
    CoDel(CodelConfig),
    /// GCCA's GCCP-capable RED (Liu, Cheung & Baras, Fig. 3): selected packets are queued and
    /// their upstream neighbour is sent CONGESTION.
    Gcca(DetectorConfig),
}

/// One output port.
#[derive(Clone, Debug, PartialEq)]
pub struct PortConfig {
    /// The interface name.
    pub name: String,
    /// Its MAC address; `None`: read from the interface when the router starts.
    pub mac: Option<[u8; 6]>,
    /// The output rate, in bit/s.
    pub rate: Rate,
    /// The queue discipline.
    pub discipline: Discipline,
    /// A GCCA leaky bucket on this port's output, obeying the downstream neighbour's GCCP
    /// messages (section 3.3); `None`: GCCP messages arriving on this port are counted and
    /// ignored.
    pub bucket: Option<LeakyBucketConfig>,
    /// ECA's load estimator on this port (Barham, sections III.A.2 and IV.A.2): L from the
    /// arrivals every 100 ms against the target utilisation, stamped as max(LOAD, L) into the
    /// IPv4 TOS byte in the prototype's 8-bit code (section V.A.1).
    pub eca: Option<LoadEstimatorConfig>,
    /// The link's propagation delay out of this port: a frame leaves this long after its
    /// transmission starts (ns-2's link delay; zero: at once).
    pub delay: Duration,
    /// The link's propagation delay into this port: a frame that arrives is held this long
    /// before the router takes it (zero: at once).
    pub ingress_delay: Duration,
}

/// The longest propagation delay a port takes, each way: 10 s.
pub const MAX_DELAY: Duration = Duration::from_secs(10);

/// A port's `what` delay from the file (zero if absent), at most [`MAX_DELAY`].
fn port_delay(port: &str, what: &str, text: Option<&str>) -> Result<Duration, ConfigError> {
    let Some(text) = text else {
        return Ok(Duration::ZERO);
    };
    let bad = |fix: String| ConfigError::Value {
        what: format!("port {port:?} {what}"),
        value: text.to_string(),
        fix,
    };
    let d = concord_cc::units::parse_duration(text).map_err(|e| bad(e.to_string()))?;
    if d > MAX_DELAY {
        return Err(bad("give at most 10s".into()));
    }
    Ok(d)
}

/// Who a neighbour is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    /// An end host.
    Host,
    /// Another router.
    Router,
}

/// One neighbour: a node on the other end of a port.
#[derive(Clone, Debug, PartialEq)]
pub struct NeighbourConfig {
    /// The index of the port it is reached through.
    pub port: usize,
    /// Its address.
    pub ip: Ipv4Addr,
    /// Its MAC address.
    pub mac: [u8; 6],
    /// Host or router.
    pub role: Role,
    /// True if it speaks GCCP.
    pub gccp: bool,
    /// For a host whose kernel TCP cannot read GCCP: a CONGESTION for it is also delivered as
    /// a CE mark on the packet that triggered it, so that its ECN-capable TCP halves cwnd and
    /// ssthresh (RFC 3168 section 6.1.2), the action of GCCA's window adjuster (section 3.3).
    pub ce_proxy: bool,
    /// For a host whose UDP applications cannot read GCCP: the router at its edge runs the
    /// host's leaky bucket for each UDP source port (section 3.3), configured at this rate (the
    /// application's), with the simulator's host defaults (step 10%, floor 1%, restored in
    /// steps of 1% every 20 ms), holding up to `udp_queue` packets per port as the host's
    /// socket would.
    pub udp_proxy: Option<UdpProxy>,
    /// For a host whose kernel TCP knows nothing of ECA: the router at its edge runs the host's
    /// WTP shaper for each of its flows (Barham, section III.A.3: a token bucket at w / RLOAD in
    /// front of the first link), fed with the RLOAD reflected on the packets coming back to the
    /// host (see `eca_reflect`).
    pub wtp: Option<WtpProxy>,
    /// For a receiving host that knows nothing of ECA: the router at its edge records the LOAD
    /// of each flow's packets as they leave for the host (their TOS byte is then cleared) and
    /// writes the latest as RLOAD into the TOS byte of the flow's packets coming back from the
    /// host (section III.A.1, piggy-backed on the TCP ACKs as in section IV.A.3, step 8).
    pub eca_reflect: bool,
}

/// The edge router's stand-in for a host's per-flow WTP shapers (Barham, section III.A.3).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WtpProxy {
    /// w_i, every flow's weight, in bit/s per unit of load: its rate when RLOAD is 1.
    pub weight: Rate,
    /// Packets held per flow while its bucket is empty; more are dropped and counted, as a full
    /// host queue refuses them.
    pub queue: usize,
}

/// The edge router's stand-in for a host's per-UDP-port leaky buckets.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct UdpProxy {
    /// The bucket's configuration.
    pub bucket: LeakyBucketConfig,
    /// Packets held per port while the bucket is empty; more are dropped and counted.
    pub queue: usize,
}

impl UdpProxy {
    /// The simulator's host bucket (scenarios/gcca/unresponsive-gcca.toml) for an application
    /// sending at `rate`: step 10%, floor 1%, ramp 1% per 20 ms, 64 packets.
    pub fn for_rate(rate: Rate, queue: usize) -> UdpProxy {
        let mut bucket = LeakyBucketConfig::for_rate(rate);
        bucket.restore = concord_cc::gcca::Restore::Ramp {
            step: rate.mul_f64(0.01),
            interval: concord_cc::time::Duration::from_millis(20),
        };
        UdpProxy { bucket, queue }
    }
}

/// A route: packets to `dst/len` go to neighbour `via`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Route {
    /// The network.
    pub dst: Ipv4Addr,
    /// The prefix length, 0 to 32.
    pub len: u8,
    /// The index of the neighbour.
    pub via: usize,
}

impl Route {
    /// True if `addr` is in this route's network.
    pub fn contains(&self, addr: Ipv4Addr) -> bool {
        let mask = if self.len == 0 {
            0
        } else {
            u32::MAX << (32 - u32::from(self.len))
        };
        u32::from(addr) & mask == u32::from(self.dst) & mask
    }
}

/// The whole configuration.
#[derive(Clone, Debug, PartialEq)]
pub struct RouterConfig {
    /// The seed of the queue disciplines' random draws.
    pub seed: u64,
    /// The ports, in file order.
    pub ports: Vec<PortConfig>,
    /// The neighbours, in file order; a neighbour's index is its GCCA upstream number.
    pub neighbours: Vec<NeighbourConfig>,
    /// The routes, longest prefix first.
    pub routes: Vec<Route>,
}

/// Reads a MAC address written `aa:bb:cc:dd:ee:ff`.
pub fn parse_mac(text: &str) -> Result<[u8; 6], ConfigError> {
    let bad = || ConfigError::Value {
        what: "mac".into(),
        value: text.into(),
        fix: "write six hexadecimal bytes separated by ':', e.g. \"02:00:0a:09:01:01\"".into(),
    };
    let mut mac = [0u8; 6];
    let mut parts = text.split(':');
    for b in &mut mac {
        let part = parts.next().ok_or_else(bad)?;
        if part.is_empty() || part.len() > 2 {
            return Err(bad());
        }
        *b = u8::from_str_radix(part, 16).map_err(|_| bad())?;
    }
    if parts.next().is_some() {
        return Err(bad());
    }
    Ok(mac)
}

fn parse_ip(what: &str, text: &str) -> Result<Ipv4Addr, ConfigError> {
    text.parse().map_err(|_| ConfigError::Value {
        what: what.into(),
        value: text.into(),
        fix: "write an IPv4 address, e.g. \"10.9.1.1\"".into(),
    })
}

fn parse_limit(text: &str) -> Result<QueueLimit, ConfigError> {
    let bad = |fix: &str| ConfigError::Value {
        what: "limit".into(),
        value: text.into(),
        fix: fix.into(),
    };
    let limit = if let Some(n) = text.trim().strip_suffix("pkt") {
        QueueLimit::Packets(
            n.trim()
                .parse()
                .map_err(|_| bad("write a whole number of packets, e.g. \"100pkt\""))?,
        )
    } else {
        QueueLimit::Bytes(parse_bytes(text).map_err(|e| bad(&e.to_string()))?)
    };
    if limit.value() <= 0.0 {
        return Err(bad("give at least one packet"));
    }
    Ok(limit)
}

fn parse_prefix(text: &str) -> Result<(Ipv4Addr, u8), ConfigError> {
    let bad = || ConfigError::Value {
        what: "dst".into(),
        value: text.into(),
        fix: "write a network as ADDRESS/LENGTH, e.g. \"10.9.3.0/24\"".into(),
    };
    let (a, l) = text.split_once('/').ok_or_else(bad)?;
    let addr: Ipv4Addr = a.parse().map_err(|_| bad())?;
    let len: u8 = l.parse().map_err(|_| bad())?;
    if len > 32 {
        return Err(bad());
    }
    Ok((addr, len))
}

/// GCCA's leaky bucket for a port of `rate`: concord's defaults, with the floor and the step
/// given as fractions of the rate if the file gives them.
fn bucket(p: &FilePort, rate: Rate) -> Result<LeakyBucketConfig, ConfigError> {
    let mut c = LeakyBucketConfig::for_rate(rate);
    let fraction = |key: &str, text: &str| -> Result<Rate, ConfigError> {
        let f = parse_fraction(text).map_err(|e| ConfigError::Value {
            what: format!("port {:?} {key}", p.name),
            value: text.into(),
            fix: e.to_string(),
        })?;
        Ok(rate.mul_f64(f))
    };
    if let Some(t) = &p.min_rate {
        c.min_rate = fraction("min_rate", t)?;
    }
    if let Some(t) = &p.decrease_step {
        c.decrease_step = fraction("decrease_step", t)?;
    }
    c.validate().map_err(|e| ConfigError::Value {
        what: format!("port {:?} leaky bucket", p.name),
        value: format!("{c:?}"),
        fix: e.to_string(),
    })?;
    Ok(c)
}

fn discipline(p: &FilePort, rate: Rate) -> Result<Discipline, ConfigError> {
    let limit = parse_limit(&p.limit)?;
    let red = |ecn: bool| -> Result<RedConfig, ConfigError> {
        let mut c = RedConfig::for_limit(limit);
        c.ecn = ecn;
        if let Some(v) = p.min_th {
            c.min_th = v;
        }
        if let Some(v) = p.max_th {
            c.max_th = v;
        }
        if let Some(v) = p.w_q {
            c.w_q = v;
        }
        if let Some(v) = p.max_p {
            c.max_p = v;
        }
        if let Some(v) = p.gentle {
            c.gentle = v;
        }
        if let Some(v) = &p.mean_pktsize {
            c.mean_pktsize = parse_bytes(v).map_err(|e| ConfigError::Value {
                what: format!("port {:?} mean_pktsize", p.name),
                value: v.clone(),
                fix: e.to_string(),
            })?;
        }
        concord_cc::aqm::AqmConfig::Red(c.clone())
            .validate()
            .map_err(|e| ConfigError::Value {
                what: format!("port {:?} RED", p.name),
                value: format!("min_th {} max_th {}", c.min_th, c.max_th),
                fix: e.to_string(),
            })?;
        Ok(c)
    };
    let _ = rate;
    Ok(match p.queue.as_str() {
        "droptail" => Discipline::DropTail(limit),
        "red" => Discipline::Red(red(false)?),
        "red-ecn" => Discipline::Red(red(true)?),
        "codel" => Discipline::CoDel(CodelConfig {
            limit,
            ..CodelConfig::default()
        }),
        "gcca" => Discipline::Gcca(DetectorConfig::new(red(false)?)),
        other => {
            return Err(ConfigError::Value {
                what: format!("port {:?} queue", p.name),
                value: other.into(),
                fix: "use droptail, red, red-ecn, codel or gcca".into(),
            })
        }
    })
}

impl RouterConfig {
    /// Reads and checks a configuration file.
    pub fn load(path: &Path) -> Result<RouterConfig, ConfigError> {
        let text = std::fs::read_to_string(path).map_err(|source| ConfigError::Read {
            path: path.display().to_string(),
            source,
        })?;
        RouterConfig::parse(&text)
            .map_err(|e| ConfigError::Toml(format!("{}: {e}", path.display())))
    }

    /// Reads and checks a configuration's text.
    pub fn parse(text: &str) -> Result<RouterConfig, ConfigError> {
        let file: FileConfig =
            toml::from_str(text).map_err(|e| ConfigError::Toml(e.to_string()))?;
        if file.port.is_empty() {
            return Err(ConfigError::Value {
                what: "port".into(),
                value: String::new(),
                fix: "declare at least one [[port]] with a name and a rate".into(),
            });
        }
        let mut ports = Vec::new();
        for p in &file.port {
            if ports.iter().any(|q: &PortConfig| q.name == p.name) {
                return Err(ConfigError::Value {
                    what: "port name".into(),
                    value: p.name.clone(),
                    fix: "give each port once".into(),
                });
            }
            let rate: Rate =
                p.rate
                    .parse()
                    .map_err(
                        |e: concord_cc::units::ParseQuantityError| ConfigError::Value {
                            what: format!("port {:?} rate", p.name),
                            value: p.rate.clone(),
                            fix: e.to_string(),
                        },
                    )?;
            if rate.bps() < 8_000 {
                return Err(ConfigError::Value {
                    what: format!("port {:?} rate", p.name),
                    value: p.rate.clone(),
                    fix: "give at least 8kbps".into(),
                });
            }
            let discipline = discipline(p, rate)?;
            let throttle = p
                .throttle
                .unwrap_or(matches!(discipline, Discipline::Gcca(_)));
            let mac = p.mac.as_deref().map(parse_mac).transpose()?;
            let bucket = if throttle {
                Some(bucket(p, rate)?)
            } else {
                None
            };
            let eca = if p.eca.unwrap_or(false) {
                let mut c = LoadEstimatorConfig::new(rate);
                if let Some(t) = p.eca_target {
                    c.target_utilisation = t;
                }
                c.validate().map_err(|e| ConfigError::Value {
                    what: format!("port {:?} eca_target", p.name),
                    value: format!("{}", c.target_utilisation),
                    fix: e.to_string(),
                })?;
                Some(c)
            } else {
                None
            };
            ports.push(PortConfig {
                name: p.name.clone(),
                mac,
                rate,
                discipline,
                bucket,
                eca,
                delay: port_delay(&p.name, "delay", p.delay.as_deref())?,
                ingress_delay: port_delay(&p.name, "ingress_delay", p.ingress_delay.as_deref())?,
            });
        }
        let mut neighbours = Vec::new();
        for n in &file.neighbour {
            let port = ports.iter().position(|p| p.name == n.port).ok_or_else(|| {
                ConfigError::Dangling {
                    what: "port",
                    name: n.port.clone(),
                    fix: "name a [[port]] of this file".into(),
                }
            })?;
            let role = match n.role.as_str() {
                "host" => Role::Host,
                "router" => Role::Router,
                other => {
                    return Err(ConfigError::Value {
                        what: "role".into(),
                        value: other.into(),
                        fix: "use host or router".into(),
                    })
                }
            };
            neighbours.push(NeighbourConfig {
                port,
                ip: parse_ip("ip", &n.ip)?,
                mac: parse_mac(&n.mac)?,
                role,
                gccp: n.gccp,
                ce_proxy: n.ce_proxy,
                udp_proxy: match &n.udp_rate {
                    None => None,
                    Some(t) => {
                        let rate: Rate =
                            t.parse()
                                .map_err(|e: concord_cc::units::ParseQuantityError| {
                                    ConfigError::Value {
                                        what: "udp_rate".into(),
                                        value: t.clone(),
                                        fix: e.to_string(),
                                    }
                                })?;
                        if rate.bps() < 100 {
                            return Err(ConfigError::Value {
                                what: "udp_rate".into(),
                                value: t.clone(),
                                fix: "give at least 100bps".into(),
                            });
                        }
                        Some(UdpProxy::for_rate(rate, n.udp_queue.unwrap_or(64).max(1)))
                    }
                },
                wtp: match &n.wtp_weight {
                    None => None,
                    Some(t) => {
                        let weight: Rate =
                            t.parse()
                                .map_err(|e: concord_cc::units::ParseQuantityError| {
                                    ConfigError::Value {
                                        what: "wtp_weight".into(),
                                        value: t.clone(),
                                        fix: e.to_string(),
                                    }
                                })?;
                        if weight.bps() == 0 {
                            return Err(ConfigError::Value {
                                what: "wtp_weight".into(),
                                value: t.clone(),
                                fix: "give a positive weight, e.g. \"1Mbps\"".into(),
                            });
                        }
                        Some(WtpProxy {
                            weight,
                            queue: n.wtp_queue.unwrap_or(100).max(1),
                        })
                    }
                },
                eca_reflect: n.eca_reflect,
            });
            if role == Role::Router && (n.wtp_weight.is_some() || n.eca_reflect) {
                return Err(ConfigError::Value {
                    what: "wtp_weight/eca_reflect".into(),
                    value: n.ip.clone(),
                    fix: "only a host neighbour's edge router stands in for its ECA end system"
                        .into(),
                });
            }
        }
        let mut routes = Vec::new();
        for r in &file.route {
            let (dst, len) = parse_prefix(&r.dst)?;
            let via_ip = parse_ip("via", &r.via)?;
            let via = neighbours
                .iter()
                .position(|n| n.ip == via_ip)
                .ok_or_else(|| ConfigError::Dangling {
                    what: "neighbour",
                    name: r.via.clone(),
                    fix: "route via the ip of a [[neighbour]]".into(),
                })?;
            routes.push(Route { dst, len, via });
        }
        // Longest prefix first; equal lengths keep file order (a stable sort).
        routes.sort_by_key(|r| std::cmp::Reverse(r.len));
        Ok(RouterConfig {
            seed: file.seed,
            ports,
            neighbours,
            routes,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const TEXT: &str = r#"
        seed = 7
        [[port]]
        name = "a"
        rate = "10Mbps"
        queue = "red"
        limit = "50pkt"
        [[port]]
        name = "b"
        rate = "2Mbps"
        queue = "gcca"
        [[neighbour]]
        port = "a"
        ip = "10.9.1.1"
        mac = "02:00:00:00:01:01"
        [[neighbour]]
        port = "b"
        ip = "10.9.2.2"
        mac = "02:00:00:00:02:02"
        role = "router"
        gccp = true
        [[route]]
        dst = "0.0.0.0/0"
        via = "10.9.2.2"
        [[route]]
        dst = "10.9.1.0/24"
        via = "10.9.1.1"
    "#;

    #[test]
    fn a_file_gives_ports_neighbours_and_longest_prefix_first_routes() {
        let c = RouterConfig::parse(TEXT).expect("valid");
        assert_eq!(c.seed, 7);
        assert_eq!(c.ports[1].rate, Rate::from_mbps(2));
        assert!(
            matches!(c.ports[0].discipline, Discipline::Red(ref r) if r.limit == QueueLimit::Packets(50) && !r.ecn)
        );
        assert!(c.ports[0].bucket.is_none());
        assert_eq!(
            c.ports[1].bucket.map(|b| b.max_rate),
            Some(Rate::from_mbps(2))
        );
        assert_eq!(c.neighbours[1].role, Role::Router);
        assert_eq!(c.routes[0].len, 24);
        assert_eq!(c.routes[0].via, 0);
        assert!(c.routes[1].contains(Ipv4Addr::new(1, 2, 3, 4)));
        assert!(!c.routes[0].contains(Ipv4Addr::new(10, 9, 2, 1)));
        assert_eq!(
            (c.ports[0].delay, c.ports[0].ingress_delay),
            (Duration::ZERO, Duration::ZERO)
        );
    }

    #[test]
    fn a_ports_propagation_delays_are_read_each_way() {
        let text = TEXT.replace(
            "limit = \"50pkt\"",
            "limit = \"50pkt\"\ndelay = \"50ms\"\ningress_delay = \"1.5ms\"",
        );
        let c = RouterConfig::parse(&text).expect("valid");
        assert_eq!(c.ports[0].delay, Duration::from_millis(50));
        assert_eq!(c.ports[0].ingress_delay, Duration::from_micros(1500));
        assert_eq!(c.ports[1].delay, Duration::ZERO);
    }

    #[test]
    fn bad_values_and_dangling_names_are_refused_with_the_fix() {
        let cases = [
            (TEXT.replace("\"10Mbps\"", "\"10Mbit\""), "rate"),
            (TEXT.replace("\"red\"", "\"fifo\""), "use droptail"),
            (TEXT.replace("\"50pkt\"", "\"0pkt\""), "at least one packet"),
            (TEXT.replace("port = \"b\"", "port = \"c\""), "not defined"),
            (
                TEXT.replace("02:00:00:00:01:01", "02:00:00:00:01"),
                "six hexadecimal",
            ),
            (
                TEXT.replace("via = \"10.9.1.1\"", "via = \"10.9.1.9\""),
                "not defined",
            ),
            (TEXT.replace("0.0.0.0/0", "0.0.0.0/33"), "ADDRESS/LENGTH"),
            (
                TEXT.replace("seed = 7", "seed = 7\ncolour = 1"),
                "unknown field",
            ),
            (
                TEXT.replace("limit = \"50pkt\"", "limit = \"50pkt\"\ndelay = \"50\""),
                "delay",
            ),
            (
                TEXT.replace(
                    "limit = \"50pkt\"",
                    "limit = \"50pkt\"\ningress_delay = \"11s\"",
                ),
                "at most 10s",
            ),
        ];
        for (text, needle) in cases {
            let e = RouterConfig::parse(&text).expect_err(needle).to_string();
            assert!(e.contains(needle), "{e}");
        }
    }
}
