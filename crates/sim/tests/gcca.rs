//! GCCA in the simulator: who gets the GCCP messages, what the leaky buckets and the window
//! adjuster do with them, and how the scenario keys are read (Liu, Cheung & Baras, section 3).

mod common;

use common::{load, reject, run};
use concord_cc::gcca::{Code, GccpMessage};
use concord_cc::rng::Rng;
use concord_cc::time::{Duration, Instant};
use concord_cc::wire::Ecn;
use concord_sim::channel::{Channel, Offer};
use concord_sim::flow::Agent;
use concord_sim::gcca::{padding_of, NodeGcca};
use concord_sim::packet::{CpHandle, Packet, Transport};
use concord_sim::scenario::{ErrorKind, ScenarioError};
use concord_sim::wire::WireSlots;
use concord_sim::Simulator;

fn node(sim: &Simulator, name: &str) -> usize {
    sim.nodes()
        .iter()
        .position(|n| n.name == name)
        .expect("node exists")
}

fn channel(sim: &Simulator, name: &str) -> usize {
    sim.channels()
        .iter()
        .position(|c| c.name == name)
        .expect("channel exists")
}

const GCCA_Q: &str = r#"{ kind = "gcca", limit = "50pkt", min_th = 5, max_th = 15, w_q = 0.1 }"#;

/// Host `a` -> router `up` -> router `r2` -> host `b` (the 10 Mbit/s bottleneck), with an idle
/// second neighbour `side` of `r2`; `up_kind` is the queue of `up -> r2`, `up_gcca` its node key.
fn line(up_queue: &str, up_gcca: &str, host_gcca: &str, flow: &str) -> String {
    format!(
        r#"duration = "3s"
[[node]]
name = "a"
kind = "host"
{host_gcca}
[[node]]
name = "up"
kind = "router"
{up_gcca}
[[node]]
name = "side"
kind = "router"
gcca = true
[[node]]
name = "r2"
kind = "router"
[[node]]
name = "b"
kind = "host"
[[link]]
between = ["a", "up"]
rate = "100Mbps"
delay = "1ms"
[[link]]
between = ["up", "r2"]
rate = "100Mbps"
delay = "1ms"
queue = {up_queue}
[[link]]
between = ["side", "r2"]
rate = "100Mbps"
delay = "1ms"
[[link]]
between = ["r2", "b"]
rate = "10Mbps"
delay = "1ms"
queue = {GCCA_Q}
reverse = {{ queue = "100pkt" }}
{flow}
"#
    )
}

const UDP_20M: &str = r#"[[flow]]
kind = "cbr"
from = "a"
to = "b"
rate = "20Mbps"
packet_size = "1000B"
"#;

#[test]
fn a_congestion_reaches_exactly_the_upstream_neighbour_that_sent_the_packets() {
    let sim = run(&load(&line(GCCA_Q, "", "", UDP_20M)));
    let (up, side, r2, a, b) = (
        node(&sim, "up"),
        node(&sim, "side"),
        node(&sim, "r2"),
        node(&sim, "a"),
        node(&sim, "b"),
    );
    let s = &sim.gcca().stats;
    assert!(s[r2].congestion_sent > 0, "{:?}", s[r2]);
    assert_eq!(s[up].congestion_received, s[r2].congestion_sent);
    assert_eq!(s[side].congestion_received + s[side].normal_received, 0);
    assert_eq!(s[b].congestion_received, 0, "destinations are never told");
    // `a` runs no GCCA: `up` withholds its messages to it and counts them.
    assert_eq!(s[a].congestion_received, 0);
    assert!(sim.gcca().not_sent(up) > 0);
    assert_eq!(sim.channels()[channel(&sim, "up->a")].control_sent, 0);
    // The messages travelled on r2 -> up, as control packets.
    let back = channel(&sim, "r2->up");
    assert_eq!(
        sim.channels()[back].control_sent,
        s[r2].congestion_sent + s[r2].normal_sent
    );
}

#[test]
fn a_plain_neighbour_gets_no_message_and_the_omission_is_counted() {
    let red = r#"{ kind = "red", limit = "50pkt" }"#;
    let sim = run(&load(&line(red, "", "", UDP_20M)));
    let (up, r2) = (node(&sim, "up"), node(&sim, "r2"));
    assert!(matches!(sim.gcca().nodes[up], NodeGcca::Plain));
    assert_eq!(sim.gcca().stats[r2].congestion_sent, 0);
    assert_eq!(sim.gcca().stats[up].congestion_received, 0);
    assert!(sim.gcca().not_sent(r2) > 0, "r2 counts what it withheld");
    assert_eq!(sim.channels()[channel(&sim, "r2->up")].control_sent, 0);
    // Without push-back the GCCA queue is the only buffer: only its hard limit drops.
    let q = sim.channels()[channel(&sim, "r2->b")].stats();
    assert_eq!(q.drops_early, 0);
    assert!(q.drops_full > 0);
}

#[test]
fn congestion_from_downstream_slows_the_upstream_queue_and_no_router_drops() {
    let up_q = r#"{ kind = "gcca", limit = "200pkt", min_th = 100, max_th = 150, w_q = 0.1, decrease_step = "10%", min_rate = "5%" }"#;
    let sim = run(&load(&line(up_q, "", "", UDP_20M)));
    let port = sim.channels()[channel(&sim, "up->r2")]
        .disc()
        .gcca()
        .expect("a gcca port");
    assert!(port.stats.congestion_in > 0);
    assert!(port.stats.holds > 0, "the bucket held packets back");
    let slowest = port.rates.iter().map(|c| c.rate.bps()).min().unwrap_or(0);
    assert!(slowest < 100_000_000);
    assert!(slowest >= 5_000_000, "never below min_rate");
}

fn data(size: u32) -> Packet {
    Packet {
        cp: CpHandle::NONE,
        src: 0,
        dst: 1,
        flow: 0,
        size,
        ecn: Ecn::NotEct,
        created: Instant::ZERO,
        transport: Transport::Udp { seq: 0, len: size },
        eca: Default::default(),
    }
}

#[test]
fn the_leaky_bucket_gates_departures_and_control_packets_jump_the_queue() {
    let sc = load(&line(GCCA_Q, "", "", ""));
    let spec = &sc.links[3].forward; // r2 -> b, 10 Mbit/s
    let mut ch = Channel::new("r2->b".into(), 3, 4, spec, Rng::new(1));
    let mut slots = WireSlots::new();
    let t0 = Instant::ZERO;
    let port = ch.disc_mut().gcca_mut().expect("a gcca port");
    // Five CONGESTION messages: 10 -> 5 Mbit/s.
    for _ in 0..5 {
        port.bucket.on_message(t0, Code::Congestion);
    }
    assert_eq!(
        ch.offer_from(t0, data(1250), 2, &mut slots),
        Offer::Transmitting(Duration::from_millis(1))
    );
    assert_eq!(ch.offer_from(t0, data(1250), 2, &mut slots), Offer::Queued);
    let gccp = Packet {
        cp: CpHandle::NONE,
        transport: Transport::Gccp(GccpMessage {
            code: Code::Normal,
            padding: None,
        }),
        size: 64,
        ..data(64)
    };
    assert_eq!(ch.offer_control(t0, gccp, &mut slots), Offer::Queued);
    // At 1 ms the first packet is done; the control packet goes first, past the bucket.
    let t1 = Instant::from_millis(1);
    let (_, next) = ch.complete(t1, &mut slots);
    assert!(next.is_some());
    assert!(matches!(
        ch.in_service(&slots).map(|p| p.transport),
        Some(Transport::Gccp(_))
    ));
    // After it, the data packet waits for the bucket: the first packet left 250 B of the
    // 1500-byte burst, and the missing 1000 B take 1.6 ms at 5 Mbit/s.
    let t2 = t1 + next.unwrap_or(Duration::ZERO);
    let level = ch.disc().gcca().map(|p| p.bucket.level(t2));
    assert_eq!(
        ch.complete(t2, &mut slots).1,
        None,
        "t2 {t2:?} level {level:?}"
    );
    assert_eq!(ch.queue_len().packets, 1);
    assert_eq!(ch.start_next(Instant::from_micros(1_599), &mut slots), None);
    assert!(ch
        .start_next(Instant::from_micros(1_600), &mut slots)
        .is_some());
}

#[test]
fn the_hosts_bucket_throttles_an_unresponsive_udp_flow_at_the_host() {
    let text = line(
        GCCA_Q,
        "gcca = true",
        "gcca = { decrease_step = \"10%\", min_rate = \"1%\", udp_queue = 20 }",
        UDP_20M,
    )
    .replace(
        "queue = { kind = \"gcca\", limit = \"50pkt\"",
        "queue = { kind = \"gcca\", limit = \"60pkt\"",
    );
    let sim = run(&load(&text));
    let a = node(&sim, "a");
    assert!(sim.gcca().stats[a].congestion_received > 0);
    let shaper = sim.gcca().shapers[0].as_ref().expect("a host bucket");
    assert!(
        shaper.drops > 0,
        "the host drops what its bucket holds back"
    );
    // 20 Mbit/s of 1000-byte datagrams for 3 s: 7500 generated, far fewer let out.
    assert!(shaper.sent < 6500, "{}", shaper.sent);
    assert!(shaper.max_queue <= 20);
}

#[test]
fn the_window_adjuster_halves_cwnd_and_ssthresh_at_most_once_per_rtt() {
    let tcp = r#"[[flow]]
kind = "tcp"
from = "a"
to = "b"
tcp = { initial_ssthresh = "64KiB" }
"#;
    // `up` runs plain RED: the only messages `a` gets are the injected ones.
    let red = r#"{ kind = "red", limit = "50pkt" }"#;
    let sc = load(&line(red, "", "gcca = true", tcp));
    let mut sim = Simulator::new(&sc).expect("builds");
    sim.run_until(Instant::from_millis(500)).expect("runs");
    let into_a = channel(&sim, "up->a") as u32;
    let flow = &sim.flows()[0];
    let padding = padding_of(&Packet {
        cp: CpHandle::NONE,
        src: flow.src,
        dst: flow.dst,
        flow: 0,
        ..data(1000)
    });
    let window = |sim: &Simulator| match &sim.flows()[0].agent {
        Agent::Tcp(t) => (
            t.sender.cwnd(),
            t.sender.ssthresh(),
            t.sender.rtt().srtt_or_initial(),
        ),
        _ => panic!("a TCP flow"),
    };
    let msg = |code| GccpMessage {
        code,
        padding: Some(padding),
    };
    let (cwnd, ssthresh, _) = window(&sim);
    sim.inject_gccp(into_a, msg(Code::Congestion)).expect("ok");
    let (c1, s1, srtt) = window(&sim);
    assert_eq!((c1, s1), (cwnd / 2, ssthresh / 2));
    // Again within the RTT, and a NORMAL: nothing changes.
    sim.inject_gccp(into_a, msg(Code::Congestion)).expect("ok");
    sim.inject_gccp(into_a, msg(Code::Normal)).expect("ok");
    assert_eq!(window(&sim).0, c1);
    assert_eq!(window(&sim).1, s1);
    // One RTT later the next CONGESTION halves again: the adjuster compares with the SRTT when
    // the message arrives, which the samples taken meanwhile may have raised.
    let first = sim.now();
    let mut later = first + srtt + Duration::from_millis(1);
    for _ in 0..10 {
        sim.run_until(later).expect("runs");
        let srtt_now = window(&sim).2;
        if sim.now().saturating_since(first) > srtt_now {
            break;
        }
        later = first + srtt_now + Duration::from_millis(1);
    }
    let (c2, s2, _) = window(&sim);
    sim.inject_gccp(into_a, msg(Code::Congestion)).expect("ok");
    assert_eq!(window(&sim).0, c2 / 2);
    assert_eq!(window(&sim).1, s2 / 2);
    let a = node(&sim, "a");
    assert_eq!(sim.gcca().stats[a].tcp_reductions, 2);
}

#[test]
fn gcca_queue_keys_are_read() {
    let q = r#"{ kind = "gcca", limit = "40pkt", min_th = 4, max_th = 12, w_q = 0.2, max_p = 0.1, congestion_interval = "20ms", decrease_step = "2Mbps", min_rate = "10%", restore = "ramp", ramp_step = "5%", ramp_interval = "30ms", burst = "8KB" }"#;
    let sc = load(&line(q, "", "gcca = { udp_queue = 7 }", ""));
    let spec = sc.links[1].forward.gcca.expect("a gcca queue");
    use concord_sim::scenario::{RateShare, RestoreSpec};
    assert_eq!(spec.congestion_interval, Duration::from_millis(20));
    assert_eq!(
        spec.bucket.decrease_step,
        RateShare::Absolute(concord_cc::units::Rate::from_mbps(2))
    );
    assert_eq!(spec.bucket.min_rate, RateShare::Share(0.1));
    assert_eq!(
        spec.bucket.restore,
        RestoreSpec::Ramp {
            step: RateShare::Share(0.05),
            interval: Duration::from_millis(30)
        }
    );
    assert_eq!(spec.bucket.burst, 8000);
    assert!(
        sc.nodes[1].gcca.is_some(),
        "a router with a gcca queue runs GCCA"
    );
    assert!(sc.nodes[2].gcca.is_some(), "gcca = true");
    assert!(sc.nodes[3].gcca.is_some(), "r2 has a gcca queue");
    assert_eq!(sc.nodes[0].gcca.map(|g| g.udp_queue), Some(7));
    assert!(sc.nodes[4].gcca.is_none());
}

#[track_caller]
fn check(e: &ScenarioError, kind: ErrorKind, line: usize, in_message: &str) {
    eprintln!("{e}");
    assert_eq!(e.kind, kind, "{e}");
    assert_eq!(e.line, line, "{e}");
    assert!(e.message.contains(in_message), "{e}");
    assert!(
        e.to_string()
            .starts_with(&format!("scenarios/x.toml:{line}:")),
        "{e}"
    );
    assert!(!e.fix.is_empty());
}

/// A router and a host: line 7 holds the queue of `r -> h`, line 10 that of `h -> r`.
fn base(queue: &str) -> String {
    format!(
        "duration = \"1s\"\n[[node]]\nname = \"r\"\nkind = \"router\"\n[[link]]\nbetween = [\"r\", \"h\"]\nqueue = {queue}\nrate = \"1Mbps\"\ndelay = \"1ms\"\nreverse = {{ queue = \"10pkt\" }}\n[[node]]\nname = \"h\"\nkind = \"host\"\n"
    )
}

#[test]
fn bad_gcca_values_are_refused_with_their_line() {
    let e = reject(&base(r#"{ kind = "gcca", restore = "slow" }"#));
    check(&e, ErrorKind::BadValue, 7, "unknown restore `slow`");
    let e = reject(&base(r#"{ kind = "gcca", ramp_step = "5%" }"#));
    check(&e, ErrorKind::BadValue, 7, "restore is immediate");
    let e = reject(&base(r#"{ kind = "gcca", decrease_step = "150%" }"#));
    check(&e, ErrorKind::BadValue, 7, "(0%, 100%]");
    let e = reject(&base(r#"{ kind = "gcca", decrease_step = "0Mbps" }"#));
    check(&e, ErrorKind::BadValue, 7, "zero");
    let e = reject(&base(r#"{ kind = "gcca", congestion_interval = 5 }"#));
    assert_eq!(e.line, 7, "{e}");
    let e = reject(&base(r#"{ kind = "gcca", ecn = true }"#));
    check(&e, ErrorKind::UnknownKey, 7, "ecn");
    let e = reject(&base(r#"{ kind = "gcca", min_rate = "2Mbps" }"#));
    check(&e, ErrorKind::BadValue, 5, "min_rate");
}

#[test]
fn gcca_in_the_wrong_place_is_refused_with_its_line() {
    // A host's own output queue cannot be a GCCA queue.
    let text = base(r#""10pkt""#).replace(
        "reverse = { queue = \"10pkt\" }",
        "reverse = { queue = { kind = \"gcca\" } }",
    );
    check(
        &reject(&text),
        ErrorKind::Inconsistent,
        5,
        "hosts run no detector",
    );
    // A router with a GCCA queue and `gcca = false`.
    let text = base(r#"{ kind = "gcca" }"#)
        .replace("kind = \"router\"\n", "kind = \"router\"\ngcca = false\n");
    check(&reject(&text), ErrorKind::Inconsistent, 5, "gcca = false");
    // A host's settings table on a router.
    let text = base(r#""10pkt""#).replace(
        "kind = \"router\"\n",
        "kind = \"router\"\ngcca = { udp_queue = 3 }\n",
    );
    check(&reject(&text), ErrorKind::BadValue, 5, "is a router");
    // Not in [defaults].
    let text = format!(
        "{}[defaults]\nqueue = {{ kind = \"gcca\" }}\n",
        base(r#""10pkt""#)
    );
    check(&reject(&text), ErrorKind::BadValue, 15, "cannot be used");
}

#[test]
fn gccp_messages_are_traced_as_frames_of_their_own_ethertype() {
    let text = format!(
        "{}[record]\npcap = [\"r2->up\"]\n",
        line(GCCA_Q, "", "", UDP_20M)
    );
    let sc = load(&text);
    let dir = std::env::temp_dir().join(format!("concord-gcca-pcap-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let mut sim = Simulator::with_capture_dir(&sc, Some(&dir)).expect("builds");
    sim.run().expect("runs");
    let bytes = std::fs::read(dir.join("r2-up.pcap")).expect("trace written");
    let _ = std::fs::remove_dir_all(&dir);
    // Walk the records: 24-byte file header, then 16-byte record headers.
    let (mut at, mut gccp, mut frames) = (24usize, 0u32, 0u32);
    while at + 16 <= bytes.len() {
        let incl =
            u32::from_le_bytes([bytes[at + 8], bytes[at + 9], bytes[at + 10], bytes[at + 11]])
                as usize;
        let frame = &bytes[at + 16..(at + 16 + incl).min(bytes.len())];
        frames += 1;
        if frame.len() >= 18 && frame[12..14] == [0x88, 0xB5] {
            let (_, msg) = concord_cc::gcca::message::decode_frame(frame).expect("a GCCP frame");
            assert!(msg.padding.is_none(), "router to router: no padding");
            gccp += 1;
        }
        at += 16 + incl;
    }
    let r2 = node(&sim, "r2");
    let sent = sim.gcca().stats[r2].congestion_sent + sim.gcca().stats[r2].normal_sent;
    assert!(sent > 0);
    assert_eq!(u64::from(gccp), sent, "{frames} frames");
}
