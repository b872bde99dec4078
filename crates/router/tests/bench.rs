//! The router's packet processing speed, sans-IO: 1500-byte UDP frames through one port with
//! RED, from `on_frame` to `poll_transmit`, no sockets. Run with
//! `cargo test --release -p concord-router --test bench -- --ignored --nocapture`; the README's
//! "Real routers" section quotes it.

use concord_cc::time::Instant;
use concord_router::config::RouterConfig;
use concord_router::router::Router;

const CONFIG: &str = r#"
    [[port]]
    name = "a"
    rate = "100Gbps"
    mac = "02:00:00:00:01:fe"
    [[port]]
    name = "b"
    rate = "100Gbps"
    queue = "red"
    limit = "1000pkt"
    mac = "02:00:00:00:02:fe"
    [[neighbour]]
    port = "a"
    ip = "10.9.1.1"
    mac = "02:00:00:00:01:01"
    [[neighbour]]
    port = "b"
    ip = "10.9.2.2"
    mac = "02:00:00:00:02:02"
    role = "router"
    [[route]]
    dst = "10.9.3.0/24"
    via = "10.9.2.2"
"#;

/// This process's CPU time (user + system), seconds, from /proc (clock ticks of 10 ms).
fn cpu_seconds() -> f64 {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    let after = stat.rsplit_once(')').map_or("", |(_, rest)| rest);
    let fields: Vec<&str> = after.split_whitespace().collect();
    let ticks = |i: usize| {
        fields
            .get(i)
            .and_then(|f| f.parse::<f64>().ok())
            .unwrap_or(0.0)
    };
    // Fields 14 and 15 of stat (utime, stime) are the 12th and 13th after the command name.
    (ticks(11) + ticks(12)) / 100.0
}

fn udp_frame() -> Vec<u8> {
    let mut f = vec![0u8; 14 + 1500];
    f[0..6].copy_from_slice(&[2, 0, 0, 0, 1, 0xfe]);
    f[6..12].copy_from_slice(&[2, 0, 0, 0, 1, 1]);
    f[12..14].copy_from_slice(&0x0800u16.to_be_bytes());
    let ip = &mut f[14..];
    ip[0] = 0x45;
    ip[2..4].copy_from_slice(&1500u16.to_be_bytes());
    ip[8] = 64;
    ip[9] = 17;
    ip[12..16].copy_from_slice(&[10, 9, 1, 1]);
    ip[16..20].copy_from_slice(&[10, 9, 3, 1]);
    concord_router::ipv4::fill_header_checksum(&mut f, 14);
    f
}

#[test]
#[ignore = "a measurement: run it in release"]
fn packets_per_second_through_one_red_port() {
    let mut r = Router::new(&RouterConfig::parse(CONFIG).expect("config")).expect("router");
    let frame = udp_frame();
    let n: u64 = 2_000_000;
    let cpu0 = cpu_seconds();
    let mut sent = 0u64;
    for i in 0..n {
        // 1 us apart: 1500 bytes at 100 Gbit/s take 0.12 us, so the clock never holds one.
        let now = Instant::from_micros(i);
        r.on_frame(now, 0, &frame);
        while let Some((_, f)) = r.poll_transmit(now) {
            sent += f.len() as u64 / 1514;
        }
    }
    let cpu = cpu_seconds() - cpu0;
    assert_eq!(sent, n);
    assert_eq!(r.counters().forwarded, n);
    println!(
        "{n} frames through one RED port: {cpu:.2} CPU-s, {:.2} million packets/s of one core",
        n as f64 / cpu / 1e6
    );
}

/// Packets per second through a real router: host a floods 64-byte UDP payloads through r1's
/// RED port (1 Gbit/s, so the token clock never limits) to host b for 3 s; b counts what
/// arrives. Root only. `cargo test --release -p concord-router --test bench -- --ignored
/// --nocapture wire`.
#[test]
#[ignore = "a measurement on the test bed: root, release"]
fn packets_per_second_through_a_router_on_the_wire() {
    use concord_net::clock::Clock;
    use concord_router::bed::{Bed, Topology};
    use std::net::UdpSocket;
    use std::path::Path;
    use std::time::Duration;
    const LINE: &str = r#"
        name = "bench"
        [[node]]
        name = "a"
        kind = "host"
        [[node]]
        name = "r1"
        kind = "router"
        [[node]]
        name = "b"
        kind = "host"
        [[link]]
        between = ["a", "r1"]
        rate = "1Gbps"
        reverse = { queue = "droptail", limit = "1000pkt" }
        [[link]]
        between = ["r1", "b"]
        rate = "1Gbps"
        forward = { queue = "red", limit = "1000pkt" }
    "#;
    let bed = Bed::up(
        Topology::parse(LINE).expect("topology"),
        &format!("crtb{}", std::process::id() % 10_000),
        95,
        Path::new(env!("CARGO_BIN_EXE_concord-router")),
        1,
    )
    .expect("the test bed comes up (run as root)");
    let b = bed.topology.host_addr("b", bed.net).expect("b");
    let clock = Clock::new();
    let in_ns = |name: &str| format!("/run/netns/{}", bed.ns(name));
    let (ns_a, ns_b) = (in_ns("a"), in_ns("b"));
    let sink = std::thread::spawn(move || {
        concord_net::sys::enter_netns(Path::new(&ns_b)).expect("enter b");
        let s = UdpSocket::bind((b, 5003)).expect("bind");
        s.set_read_timeout(Some(Duration::from_millis(500)))
            .expect("timeout");
        let mut buf = [0u8; 2048];
        let (mut n, mut first, mut last) = (0u64, None, clock.now());
        while s.recv(&mut buf).is_ok() {
            n += 1;
            last = clock.now();
            first.get_or_insert(last);
        }
        (
            n,
            last.saturating_since(first.unwrap_or(last)).as_secs_f64(),
        )
    });
    std::thread::sleep(Duration::from_millis(200));
    let source = std::thread::spawn(move || {
        concord_net::sys::enter_netns(Path::new(&ns_a)).expect("enter a");
        let s = UdpSocket::bind(("0.0.0.0", 0)).expect("bind");
        let payload = [0u8; 64];
        let end = clock.now() + concord_cc::time::Duration::from_secs(3);
        let mut sent = 0u64;
        while clock.now() < end {
            if s.send_to(&payload, (b, 5003)).is_ok() {
                sent += 1;
            }
        }
        sent
    });
    let sent = source.join().expect("source");
    let (got, secs) = sink.join().expect("sink");
    std::thread::sleep(Duration::from_millis(450));
    println!(
        "wire: {sent} datagrams offered, {got} delivered in {secs:.2} s: {:.0} packets/s through one RED port; the router received {} and sent {} (queue drops {})",
        got as f64 / secs.max(1e-9),
        bed.counter("r1", "received"),
        bed.counter("r1", "port.b.sent"),
        bed.counter("r1", "port.b.drops_full") + bed.counter("r1", "port.b.drops_early")
    );
    assert!(got > 0);
}
