//! concord-router on real frames: host a -- router r1 -- host b in namespaces, kernel TCP
//! through it, and bad frames sent at it on the wire. These tests need root; they fail (not
//! skip) without it.

use concord_cc::gcca::message::encode_frame;
use concord_cc::gcca::{Code, GccpMessage};
use concord_net::clock::Clock;
use concord_router::bed::{Bed, Topology};
use concord_router::sys::{PacketSocket, VNET_HDR_LEN};
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::Path;
use std::time::Duration;

const LINE: &str = r#"
    name = "line"
    [[node]]
    name = "a"
    kind = "host"
    gccp = true
    [[node]]
    name = "r1"
    kind = "router"
    [[node]]
    name = "b"
    kind = "host"
    [[link]]
    between = ["a", "r1"]
    rate = "20Mbps"
    reverse = { queue = "droptail", limit = "100pkt" }
    [[link]]
    between = ["r1", "b"]
    rate = "10Mbps"
    forward = { queue = "red", limit = "100pkt" }
"#;

fn bed(tag: &str, net: u8) -> Bed {
    // `CONCORD_ROUTER_PREFIX` names the namespaces (default "crt").
    let prefix =
        concord_router::bed::test_prefix("CONCORD_ROUTER_PREFIX", "crt", &format!("w{tag}"));
    Bed::up(
        Topology::parse(LINE).expect("topology"),
        &prefix,
        net,
        Path::new(env!("CARGO_BIN_EXE_concord-router")),
        1,
    )
    .expect("the test bed comes up (run as root)")
}

/// Runs `f` on a thread inside namespace `ns`.
fn in_ns<T: Send + 'static>(
    ns: String,
    f: impl FnOnce() -> T + Send + 'static,
) -> std::thread::JoinHandle<T> {
    std::thread::spawn(move || {
        concord_net::sys::enter_netns(Path::new(&format!("/run/netns/{ns}")))
            .expect("enter the namespace");
        f()
    })
}

/// Sends `bytes` over kernel TCP from a to b; the seconds it took.
fn transfer(bed: &Bed, bytes: usize) -> f64 {
    let b_addr = bed.topology.host_addr("b", bed.net).expect("b");
    let (tx, rx) = std::sync::mpsc::channel();
    let server = in_ns(bed.ns("b"), move || {
        let l = TcpListener::bind((b_addr, 5001)).expect("listen");
        tx.send(()).expect("ready");
        let (mut s, _) = l.accept().expect("accept");
        let mut buf = vec![0u8; 65_536];
        let mut got = 0usize;
        while let Ok(n) = s.read(&mut buf) {
            if n == 0 {
                break;
            }
            got += n;
        }
        got
    });
    rx.recv().expect("server ready");
    let clock = Clock::new();
    let client = in_ns(bed.ns("a"), move || {
        let t = clock.now();
        let mut s = TcpStream::connect((b_addr, 5001)).expect("connect through the router");
        s.write_all(&vec![7u8; bytes]).expect("send");
        s.shutdown(std::net::Shutdown::Write).expect("shutdown");
        let mut end = [0u8; 1];
        let _ = s.read(&mut end);
        clock.now().saturating_since(t).as_secs_f64()
    });
    let secs = client.join().expect("client");
    assert_eq!(server.join().expect("server"), bytes);
    // Let the routers write their status once more.
    std::thread::sleep(Duration::from_millis(450));
    secs
}

#[test]
fn kernel_tcp_crosses_the_router_at_its_port_rate() {
    let bed = bed("w", 91);
    let secs = transfer(&bed, 4 << 20);
    let mbps = (4u64 << 20) as f64 * 8.0 / secs / 1e6;
    eprintln!("4 MiB through concord-router (10 Mbit/s port): {secs:.2} s, {mbps:.2} Mbit/s");
    // The port's token clock bounds the goodput below 10 Mbit/s (headers take ~3%), and the
    // transfer must not be starved either.
    assert!(mbps < 10.0, "{mbps} Mbit/s exceeds the port's 10 Mbit/s");
    assert!(mbps > 6.0, "{mbps} Mbit/s: the router forwards too slowly");
    assert!(bed.counter("r1", "forwarded") > 2000);
    assert_eq!(
        bed.counter("r1", "ipv4_bad_checksum"),
        0,
        "checksums are completed"
    );
}

#[test]
fn bad_frames_on_the_wire_are_counted_and_the_router_keeps_forwarding() {
    let bed = bed("x", 92);
    let a_mac = [0x02, 0xcc, 92, 1, 1, 0];
    let r1_mac = [0x02, 0xcc, 92, 1, 2, 0];
    let sent = in_ns(bed.ns("a"), move || {
        let ifindex = concord_router::sys::ifindex("eth0").expect("eth0");
        let s = PacketSocket::open(ifindex, 1 << 16).expect("packet socket");
        let send = |frame: &[u8]| {
            let mut b = vec![0u8; VNET_HDR_LEN];
            b.extend_from_slice(frame);
            s.send(&b).expect("send a frame");
        };
        // A spoofed CONGESTION: a source MAC that is no neighbour of r1.
        let mut spoofed = Vec::new();
        encode_frame(
            [2, 6, 6, 6, 6, 6],
            r1_mac,
            &GccpMessage {
                code: Code::Congestion,
                padding: None,
            },
            &mut spoofed,
        );
        spoofed.resize(60, 0);
        // Garbage GCCP from the real neighbour: version 9, then CODE 200.
        let mut garbled = Vec::new();
        encode_frame(
            a_mac,
            r1_mac,
            &GccpMessage {
                code: Code::Congestion,
                padding: None,
            },
            &mut garbled,
        );
        garbled.resize(60, 0);
        let mut v9 = garbled.clone();
        v9[14] = 9;
        let mut code200 = garbled.clone();
        code200[17] = 200;
        // An IPv4 header with a wrong checksum, and one cut short.
        let mut ip = vec![0u8; 60];
        ip[0..6].copy_from_slice(&r1_mac);
        ip[6..12].copy_from_slice(&a_mac);
        ip[12..14].copy_from_slice(&0x0800u16.to_be_bytes());
        ip[14] = 0x45;
        ip[16..18].copy_from_slice(&46u16.to_be_bytes());
        ip[22] = 64;
        ip[23] = 17;
        ip[26..30].copy_from_slice(&[10, 92, 1, 1]);
        ip[30..34].copy_from_slice(&[10, 92, 2, 2]);
        ip[24] = 0xde; // the checksum is not computed
        let mut short = ip.clone();
        short[14] = 0x4f; // IHL 60 bytes, beyond the frame
        for _ in 0..10 {
            for f in [&spoofed, &v9, &code200, &ip, &short] {
                send(f);
            }
        }
        50
    })
    .join()
    .expect("sender");
    assert_eq!(sent, 50);
    std::thread::sleep(Duration::from_millis(500));
    assert_eq!(bed.counter("r1", "gccp_spoofed"), 10);
    assert_eq!(bed.counter("r1", "gccp_malformed"), 20);
    assert_eq!(bed.counter("r1", "ipv4_bad_checksum"), 10);
    assert_eq!(bed.counter("r1", "ipv4_malformed"), 10);
    assert_eq!(bed.counter("r1", "forwarded"), 0);
    // The spoofed CONGESTION changed nothing: port a still sends at 20 Mbit/s.
    assert_eq!(bed.counter("r1", "port.a.rate_bps"), 20_000_000);
    // And the router still forwards.
    let secs = transfer(&bed, 256 << 10);
    assert!(secs < 5.0, "256 KiB took {secs} s");
    assert!(bed.counter("r1", "forwarded") > 100);
}

#[test]
fn a_bed_whose_process_died_is_swept_by_the_next() {
    // A record in the bed's format, owned by a process that has exited.
    let mut child = std::process::Command::new("true")
        .spawn()
        .expect("spawn true");
    let dead = child.id();
    child.wait().expect("wait");
    let prefix = concord_router::bed::test_prefix("CONCORD_ROUTER_PREFIX", "crt", "ws");
    let ns = format!("{prefix}-a");
    let ok = std::process::Command::new("ip")
        .args(["netns", "add", &ns])
        .status()
        .expect("ip netns add")
        .success();
    assert!(ok, "ip netns add {ns} (run as root)");
    std::fs::create_dir_all(concord_router::bed::RECORD_DIR).expect("record dir");
    std::fs::write(
        Path::new(concord_router::bed::RECORD_DIR).join(&prefix),
        format!("owner {dead}\nns {ns}\n"),
    )
    .expect("write the record");
    let swept = concord_router::bed::sweep_stale();
    assert!(swept.contains(&prefix), "{swept:?}");
    assert!(!Path::new("/run/netns").join(&ns).exists());
}
