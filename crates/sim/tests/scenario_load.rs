//! What valid scenarios load to: shorthand expansion, flow expansion, inheritance and defaults.

use concord_cc::aqm::{AqmConfig, QueueLimit, RedConfig};
use concord_cc::tcp::TcpConfig;
use concord_cc::time::Duration;
use concord_cc::units::Rate;
use concord_sim::scenario::{
    parse_str, ChannelRef, FlowKind, LinkSpec, LossFilter, NodeKind, RecordSpec, Scenario,
};
use std::path::Path;

fn load(text: &str) -> Scenario {
    match parse_str(text, None) {
        Ok(s) => s,
        Err(e) => panic!("{e}\n{text}"),
    }
}

fn names(s: &Scenario) -> Vec<&str> {
    s.nodes.iter().map(|n| n.name.as_str()).collect()
}

/// The link joining the nodes named `a` and `b`, either way round.
fn link<'s>(s: &'s Scenario, a: &str, b: &str) -> &'s LinkSpec {
    let idx = |n: &str| {
        s.nodes
            .iter()
            .position(|x| x.name == n)
            .unwrap_or(usize::MAX)
    };
    let (a, b) = (idx(a), idx(b));
    s.links
        .iter()
        .find(|l| (l.a == a && l.b == b) || (l.a == b && l.b == a))
        .unwrap_or_else(|| panic!("no link {a}-{b}"))
}

fn node(s: &Scenario, name: &str) -> usize {
    s.nodes
        .iter()
        .position(|n| n.name == name)
        .unwrap_or_else(|| panic!("no node {name}"))
}

const DUMBBELL: &str = r#"duration = "10s"
[topology]
kind = "dumbbell"
pairs = 3
bottleneck = { rate = "10Mbps", delay = "20ms", queue = "50pkt" }
access = { rate = "1Gbps", delay = "1ms" }
access_delays = ["2ms", "4ms", "8ms"]
"#;

#[test]
fn dumbbell_makes_pairs_of_hosts_around_two_routers() {
    let s = load(DUMBBELL);
    assert_eq!(names(&s), ["r1", "r2", "s1", "s2", "s3", "d1", "d2", "d3"]);
    assert_eq!(s.nodes[0].kind, NodeKind::Router);
    assert_eq!(s.nodes[2].kind, NodeKind::Host);
    assert_eq!(s.links.len(), 1 + 2 * 3);
    let b = link(&s, "r1", "r2");
    assert_eq!((b.a, b.b), (node(&s, "r1"), node(&s, "r2")));
    assert_eq!(b.forward.rate, Rate::from_mbps(10));
    assert_eq!(b.forward.delay, Duration::from_millis(20));
    assert_eq!(
        b.forward.queue,
        AqmConfig::DropTail {
            limit: QueueLimit::Packets(50)
        }
    );
    assert_eq!(b.reverse, b.forward);
}

#[test]
fn access_delays_set_each_senders_access_link() {
    let s = load(DUMBBELL);
    for (i, ms) in [(1, 2), (2, 4), (3, 8)] {
        let l = link(&s, &format!("s{i}"), "r1");
        assert_eq!(
            (l.a, l.b),
            (node(&s, &format!("s{i}")), node(&s, "r1")),
            "oriented sender to router"
        );
        assert_eq!(l.forward.delay, Duration::from_millis(ms));
        assert_eq!(l.reverse.delay, Duration::from_millis(ms));
        assert_eq!(l.forward.rate, Rate::from_gbps(1));
        // Receivers keep the access delay.
        let r = link(&s, "r2", &format!("d{i}"));
        assert_eq!(r.forward.delay, Duration::from_millis(1));
    }
}

#[test]
fn line_chains_routers_between_src_and_dst() {
    let s = load(
        r#"duration = "10s"
[topology]
kind = "line"
routers = 3
link = { rate = "5Mbps", delay = "5ms" }
access = { rate = "1Gbps", delay = "1ms" }
[[flow]]
kind = "tcp"
from = "src"
to = "dst"
"#,
    );
    assert_eq!(names(&s), ["r1", "r2", "r3", "src", "dst"]);
    assert_eq!(s.links.len(), 4);
    assert_eq!(link(&s, "r1", "r2").forward.rate, Rate::from_mbps(5));
    assert_eq!(link(&s, "r2", "r3").forward.rate, Rate::from_mbps(5));
    assert_eq!(link(&s, "src", "r1").forward.rate, Rate::from_gbps(1));
    assert_eq!(link(&s, "r3", "dst").forward.rate, Rate::from_gbps(1));
    assert_eq!(
        (s.flows[0].from, s.flows[0].to),
        (node(&s, "src"), node(&s, "dst"))
    );
}

#[test]
fn parking_lot_adds_cross_traffic_per_hop() {
    let s = load(
        r#"duration = "10s"
[topology]
kind = "parking_lot"
routers = 3
link = { rate = "5Mbps", delay = "5ms" }
access = { rate = "1Gbps", delay = "1ms" }
[[flow]]
kind = "tcp"
from = "c{i}"
to = "x{i}"
count = 2
"#,
    );
    assert_eq!(
        names(&s),
        ["r1", "r2", "r3", "src", "dst", "c1", "x1", "c2", "x2"]
    );
    assert_eq!(s.links.len(), 2 + 2 + 2 * 2);
    for (c, r, x, r_next) in [("c1", "r1", "x1", "r2"), ("c2", "r2", "x2", "r3")] {
        let l = link(&s, c, r);
        assert_eq!((l.a, l.b), (node(&s, c), node(&s, r)));
        let l = link(&s, r_next, x);
        assert_eq!((l.a, l.b), (node(&s, r_next), node(&s, x)));
    }
    assert_eq!(s.flows.len(), 2);
}

#[test]
fn count_expands_names_and_hosts_with_i() {
    let s = load(&format!(
        "{DUMBBELL}[[flow]]\nname = \"bulk{{i}}\"\nkind = \"tcp\"\nfrom = \"s{{i}}\"\nto = \"d{{i}}\"\ncount = 3\n\
         [[flow]]\nkind = \"cbr\"\nfrom = \"s1\"\nto = \"d3\"\nrate = \"1Mbps\"\ncount = 2\n"
    ));
    let flow_names: Vec<&str> = s.flows.iter().map(|f| f.name.as_str()).collect();
    // Default names count positions after expansion.
    assert_eq!(flow_names, ["bulk1", "bulk2", "bulk3", "f4", "f5"]);
    for i in 1..=3 {
        assert_eq!(s.flows[i - 1].from, node(&s, &format!("s{i}")));
        assert_eq!(s.flows[i - 1].to, node(&s, &format!("d{i}")));
    }
    assert_eq!(
        s.flows[4].kind,
        FlowKind::Cbr {
            rate: Rate::from_mbps(1),
            packet_size: 1000
        }
    );
}

fn jittered(seed: u64) -> Vec<Duration> {
    let text = DUMBBELL.replacen(
        "duration = \"10s\"\n",
        &format!("duration = \"10s\"\nseed = {seed}\n"),
        1,
    );
    let s = load(&format!(
        "{text}[[flow]]\nkind = \"tcp\"\nfrom = \"s1\"\nto = \"d1\"\ncount = 8\nstart = \"1s\"\nstart_jitter = \"100ms\"\n"
    ));
    assert_eq!(s.seed, seed);
    s.flows.iter().map(|f| f.start).collect()
}

#[test]
fn start_jitter_is_deterministic_per_seed() {
    let a = jittered(7);
    assert_eq!(a, jittered(7));
    assert_ne!(a, jittered(8));
    for t in &a {
        assert!(
            *t >= Duration::from_secs(1) && *t < Duration::from_millis(1100),
            "{t}"
        );
    }
    let distinct: std::collections::BTreeSet<_> = a.iter().collect();
    assert!(distinct.len() > 1);
}

#[test]
fn an_explicit_link_replaces_the_shorthands_and_inherits_what_it_omits() {
    let s = load(&format!(
        "{DUMBBELL}[[link]]\nbetween = [\"r1\", \"r2\"]\nrate = \"5Mbps\"\n"
    ));
    assert_eq!(s.links.len(), 7, "replaced, not added");
    let b = link(&s, "r1", "r2");
    assert_eq!(b.forward.rate, Rate::from_mbps(5));
    assert_eq!(b.reverse.rate, Rate::from_mbps(5));
    assert_eq!(b.forward.delay, Duration::from_millis(20), "inherited");
    assert_eq!(
        b.forward.queue,
        AqmConfig::DropTail {
            limit: QueueLimit::Packets(50)
        },
        "inherited"
    );
    // The replacement keeps the place of the link it replaces.
    assert_eq!(s.links[0], *b);
}

#[test]
fn a_reversed_replacement_inherits_each_direction_from_the_same_direction() {
    let text = DUMBBELL.replace(
        "queue = \"50pkt\" }",
        "queue = \"50pkt\", reverse = { rate = \"1Mbps\" } }",
    );
    let s = load(&format!(
        "{text}[[link]]\nbetween = [\"r2\", \"r1\"]\nqueue = \"10pkt\"\n"
    ));
    let b = link(&s, "r1", "r2");
    assert_eq!((b.a, b.b), (node(&s, "r2"), node(&s, "r1")));
    // r2 -> r1 was the shorthand's reverse direction.
    assert_eq!(b.forward.rate, Rate::from_mbps(1));
    assert_eq!(b.reverse.rate, Rate::from_mbps(10));
    assert_eq!(
        b.forward.queue,
        AqmConfig::DropTail {
            limit: QueueLimit::Packets(10)
        }
    );
    assert_eq!(
        b.reverse.queue,
        AqmConfig::DropTail {
            limit: QueueLimit::Packets(10)
        }
    );
}

#[test]
fn reverse_overrides_apply_to_b_to_a_only() {
    let s = load(
        r#"duration = "10s"
[[node]]
name = "a"
kind = "host"
[[node]]
name = "b"
kind = "host"
[[link]]
between = ["a", "b"]
rate = "10Mbps"
delay = "10ms"
loss = "1%"
loss_applies_to = "data"
reverse = { loss = "0", delay = "30ms", queue = "64KB" }
"#,
    );
    let l = &s.links[0];
    assert_eq!(l.forward.loss, 0.01);
    assert_eq!(l.forward.loss_applies_to, LossFilter::Data);
    assert_eq!(l.forward.delay, Duration::from_millis(10));
    assert_eq!(
        l.forward.queue,
        AqmConfig::DropTail {
            limit: QueueLimit::Packets(100)
        }
    );
    assert_eq!(l.reverse.loss, 0.0);
    assert_eq!(l.reverse.loss_applies_to, LossFilter::Data);
    assert_eq!(l.reverse.delay, Duration::from_millis(30));
    assert_eq!(l.reverse.rate, Rate::from_mbps(10));
    assert_eq!(
        l.reverse.queue,
        AqmConfig::DropTail {
            limit: QueueLimit::Bytes(64_000)
        }
    );
}

#[test]
fn tcp_defaults_and_overrides_give_the_exact_config() {
    let s = load(&format!(
        r#"{DUMBBELL}[defaults.tcp]
mss = "1000B"
initial_cwnd = 4
initial_ssthresh = "64KB"
delayed_ack = false
min_rto = "1s"
[[flow]]
kind = "tcp"
from = "s1"
to = "d1"
bytes = "10MB"
tcp = {{ ecn = true, rwnd = "1MiB", mss = 536, clock_granularity = "10ms" }}
[[flow]]
kind = "tcp"
from = "s2"
to = "d2"
tcp = {{ initial_ssthresh = "unbounded" }}
"#
    ));
    let defaults = TcpConfig {
        mss: 1000,
        initial_cwnd: 4,
        initial_ssthresh: 64_000,
        delayed_ack: false,
        min_rto: Duration::from_secs(1),
        ..TcpConfig::default()
    };
    let first = TcpConfig {
        ecn: true,
        rwnd: 1024 * 1024,
        mss: 536,
        clock_granularity: Duration::from_millis(10),
        ..defaults.clone()
    };
    assert_eq!(
        s.flows[0].kind,
        FlowKind::Tcp {
            tcp: first,
            bytes: Some(10_000_000)
        }
    );
    let second = TcpConfig {
        initial_ssthresh: u64::MAX,
        ..defaults
    };
    assert_eq!(
        s.flows[1].kind,
        FlowKind::Tcp {
            tcp: second,
            bytes: None
        }
    );
}

#[test]
fn recovery_names_prr_with_either_reduction_bound() {
    use concord_cc::tcp::config::Recovery;
    use concord_cc::tcp::prr::ReductionBound;
    let s = load(&format!(
        "{DUMBBELL}[defaults.tcp]\nrecovery = \"prr\"\n[[flow]]\nkind = \"tcp\"\nfrom = \"s1\"\nto = \"d1\"\n[[flow]]\nkind = \"tcp\"\nfrom = \"s2\"\nto = \"d2\"\ntcp = {{ recovery = \"prr-crb\" }}\n"
    ));
    let recovery = |i: usize| match &s.flows[i].kind {
        FlowKind::Tcp { tcp, .. } => tcp.recovery,
        other => panic!("not TCP: {other:?}"),
    };
    assert_eq!(recovery(0), Recovery::Prr(ReductionBound::SlowStart));
    assert_eq!(recovery(1), Recovery::Prr(ReductionBound::Conservative));
    assert_eq!(TcpConfig::default().recovery, Recovery::Classic);
}

#[test]
fn sack_is_off_by_default_and_set_by_the_defaults_or_a_flow() {
    let s = load(&format!(
        "{DUMBBELL}[defaults.tcp]\nsack = true\n[[flow]]\nkind = \"tcp\"\nfrom = \"s1\"\nto = \"d1\"\n[[flow]]\nkind = \"tcp\"\nfrom = \"s2\"\nto = \"d2\"\ntcp = {{ sack = false }}\n"
    ));
    let sack = |i: usize| match &s.flows[i].kind {
        FlowKind::Tcp { tcp, .. } => tcp.sack,
        other => panic!("not TCP: {other:?}"),
    };
    assert!(sack(0));
    assert!(!sack(1));
    assert!(!TcpConfig::default().sack);
}

#[test]
fn a_flow_without_tcp_settings_gets_the_stock_config() {
    let s = load(&format!(
        "{DUMBBELL}[[flow]]\nkind = \"tcp\"\nfrom = \"s1\"\nto = \"d1\"\n"
    ));
    assert_eq!(
        s.flows[0].kind,
        FlowKind::Tcp {
            tcp: TcpConfig::default(),
            bytes: None
        }
    );
    assert_eq!(s.flows[0].start, Duration::ZERO);
    assert_eq!(s.flows[0].stop, None);
}

#[test]
fn red_thresholds_may_be_percentages_of_the_limit() {
    let s = load(&format!(
        "{DUMBBELL}[[link]]\nbetween = [\"r1\", \"r2\"]\n\
         queue = {{ kind = \"red\", limit = \"200pkt\", min_th = \"20%\", max_th = 150, max_p = 0.2, ecn = true }}\n\
         [defaults]\nqueue = {{ kind = \"red\", limit = \"30KB\", max_th = \"50%\", gentle = false, mean_pktsize = 1000 }}\n"
    ));
    let b = link(&s, "r1", "r2");
    let expected = RedConfig {
        min_th: 40.0,
        max_th: 150.0,
        max_p: 0.2,
        ecn: true,
        ..RedConfig::for_limit(QueueLimit::Packets(200))
    };
    assert_eq!(b.forward.queue, AqmConfig::Red(expected));
    // The default queue reaches links that name none, RED defaults filling the gaps.
    let access = link(&s, "s1", "r1");
    let expected = RedConfig {
        max_th: 15_000.0,
        gentle: false,
        mean_pktsize: 1000,
        ..RedConfig::for_limit(QueueLimit::Bytes(30_000))
    };
    assert_eq!(access.forward.queue, AqmConfig::Red(expected));
}

#[test]
fn red_wait_and_spare_short_queue_are_read_and_default_off() {
    let s = load(&format!(
        "{DUMBBELL}[[link]]\nbetween = [\"r1\", \"r2\"]\n\
         queue = {{ kind = \"red\", limit = \"100pkt\", wait = true, spare_short_queue = true }}\n"
    ));
    let expected = RedConfig {
        wait: true,
        spare_short_queue: true,
        ..RedConfig::for_limit(QueueLimit::Packets(100))
    };
    assert_eq!(link(&s, "r1", "r2").forward.queue, AqmConfig::Red(expected));
    let plain = RedConfig::for_limit(QueueLimit::Packets(100));
    assert!(!plain.wait && !plain.spare_short_queue);
}

#[test]
fn a_red_table_without_limit_takes_the_default_queues_limit() {
    let s = load(&format!(
        "{DUMBBELL}[[link]]\nbetween = [\"r1\", \"r2\"]\nqueue = {{ kind = \"red\" }}\n[defaults]\nqueue = \"40pkt\"\n"
    ));
    let b = link(&s, "r1", "r2");
    assert_eq!(
        b.forward.queue,
        AqmConfig::Red(RedConfig::for_limit(QueueLimit::Packets(40)))
    );
}

#[test]
fn udp_flows_read_rate_size_and_periods() {
    let s = load(&format!(
        "{DUMBBELL}[[flow]]\nkind = \"onoff\"\nfrom = \"s1\"\nto = \"d1\"\nrate = \"2Mbps\"\npacket_size = 500\non = \"1s\"\noff = \"500ms\"\ndistribution = \"fixed\"\nstart = \"1s\"\nstop = \"5s\"\n"
    ));
    let f = &s.flows[0];
    assert_eq!(
        f.kind,
        FlowKind::OnOff {
            rate: Rate::from_mbps(2),
            packet_size: 500,
            on: Duration::from_secs(1),
            off: Duration::from_millis(500),
            exponential: false
        }
    );
    assert_eq!(
        (f.start, f.stop),
        (Duration::from_secs(1), Some(Duration::from_secs(5)))
    );
}

#[test]
fn record_resolves_channels_and_flows() {
    let s = load(&format!(
        "{DUMBBELL}[[flow]]\nkind = \"tcp\"\nfrom = \"s1\"\nto = \"d1\"\n[record]\nbin = \"50ms\"\nwarmup = \"2s\"\n\
         queues = [\"r1->r2\", \"r2->r1\"]\ncwnd = [\"f1\"]\npcap = [\"s1->r1\"]\npcap_snaplen = 96\nbottleneck = \"r1->r2\"\n"
    ));
    let r = &s.record;
    assert_eq!(r.bin, Duration::from_millis(50));
    assert_eq!(
        r.queue_interval,
        Duration::from_millis(50),
        "defaults to bin"
    );
    assert_eq!(r.warmup, Duration::from_secs(2));
    assert_eq!(
        r.queues,
        [
            ChannelRef {
                link: 0,
                reverse: false
            },
            ChannelRef {
                link: 0,
                reverse: true
            }
        ]
    );
    assert_eq!(r.cwnd, [0]);
    assert_eq!(r.pcap.len(), 1);
    assert!(!r.pcap[0].reverse);
    assert_eq!(r.pcap_snaplen, 96);
    assert_eq!(
        r.bottleneck,
        Some(ChannelRef {
            link: 0,
            reverse: false
        })
    );
}

#[test]
fn omitted_keys_take_their_defaults() {
    let s = load("duration = \"1min\"\n");
    assert_eq!(s.name, "scenario");
    assert_eq!(s.seed, 1);
    assert_eq!(s.duration, Duration::from_secs(60));
    assert_eq!(s.record, RecordSpec::default());
    assert!(s.nodes.is_empty() && s.links.is_empty() && s.flows.is_empty());
    let named =
        parse_str("duration = \"1s\"\n", Some(Path::new("dir/my-run.toml"))).map(|s| s.name);
    assert_eq!(named.as_deref(), Ok("my-run"));
    let named = parse_str(
        "name = \"x\"\nduration = \"1s\"\n",
        Some(Path::new("dir/my-run.toml")),
    )
    .map(|s| s.name);
    assert_eq!(named.as_deref(), Ok("x"));
}

#[test]
fn explicit_nodes_and_links_need_no_shorthand() {
    let s = load(
        r#"duration = "10s"
[[node]]
name = "h1"
kind = "host"
[[node]]
name = "rt"
kind = "router"
[[node]]
name = "h2"
kind = "host"
[[link]]
between = ["h1", "rt"]
rate = "100Mbps"
delay = "2ms"
[[link]]
between = ["rt", "h2"]
rate = "100Mbps"
delay = "2ms"
[[flow]]
kind = "cbr"
from = "h1"
to = "h2"
rate = "1Mbps"
"#,
    );
    assert_eq!(names(&s), ["h1", "rt", "h2"]);
    assert_eq!(s.links.len(), 2);
    assert_eq!(s.flows[0].name, "f1");
}
