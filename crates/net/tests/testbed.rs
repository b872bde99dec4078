//! The test bed on this machine: namespaces, the delay line's round-trip time, the bottleneck,
//! and the rules that it cleans up after itself and touches nothing it did not make. These
//! tests need root; they fail (not skip) without it.

mod common;

use common::{in_netns, Bed};
use concord_net::testbed::Testbed;
use std::net::UdpSocket;
use std::process::Command;
use std::time::Duration;
use tokio::time::Instant;

fn netns_list() -> String {
    let out = Command::new("ip")
        .args(["netns", "list"])
        .output()
        .expect("ip");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn prefix(tag: &str) -> String {
    format!("{tag}{}", std::process::id() % 100_000)
}

/// Round trips of a small datagram from sender 1 to an echo on the receiver; the median RTT.
fn median_rtt(bed: &Testbed, from: &str) -> Duration {
    let rcv = bed.receiver();
    let echo = in_netns(bed.netns_path("rcv").expect("rcv"), move || {
        let s = UdpSocket::bind((rcv, 9911)).expect("bind the echo");
        s.set_read_timeout(Some(Duration::from_secs(3)))
            .expect("timeout");
        let mut buf = [0u8; 64];
        for _ in 0..10 {
            let Ok((n, from)) = s.recv_from(&mut buf) else {
                return;
            };
            let _ = s.send_to(&buf[..n], from);
        }
    });
    std::thread::sleep(Duration::from_millis(100));
    let rtts = in_netns(bed.netns_path(from).expect("sender"), move || {
        let s = UdpSocket::bind(("0.0.0.0", 0)).expect("bind");
        s.set_read_timeout(Some(Duration::from_secs(1)))
            .expect("timeout");
        let mut rtts = Vec::new();
        let mut buf = [0u8; 64];
        for i in 0..10u8 {
            let t = Instant::now();
            s.send_to(&[i], (rcv, 9911)).expect("send");
            if s.recv_from(&mut buf).is_ok() {
                rtts.push(t.elapsed());
            }
        }
        rtts
    })
    .join()
    .expect("sender");
    let _ = echo.join();
    let mut rtts = rtts;
    assert!(
        rtts.len() >= 8,
        "only {} of 10 echoes came back",
        rtts.len()
    );
    rtts.sort();
    rtts[rtts.len() / 2]
}

#[test]
fn the_delay_line_makes_the_round_trip_time_and_the_router_holds_the_bottleneck() {
    let bed = Bed::up(Testbed {
        prefix: prefix("tb"),
        senders: 2,
        net: 81,
        rate_bps: 1_000_000,
        queue_bytes: 16_000,
        delay: Duration::from_millis(20),
        ..Testbed::default()
    });
    let t = &bed.0;
    let qdiscs = Command::new("tc")
        .args(["-n", &t.router_ns(), "qdisc", "show", "dev", "rcv"])
        .output()
        .expect("tc");
    let qdiscs = String::from_utf8_lossy(&qdiscs.stdout);
    assert!(
        qdiscs.contains("htb") && qdiscs.contains("bfifo"),
        "{qdiscs}"
    );
    for from in ["s1", "s2"] {
        let rtt = median_rtt(t, from);
        println!("median RTT from {from}: {rtt:?}");
        assert!(
            rtt >= Duration::from_millis(40) && rtt < Duration::from_millis(48),
            "RTT {rtt:?} from {from}, expected 40 ms"
        );
    }
    let names = t.namespaces();
    drop(bed);
    let left = netns_list();
    for n in names {
        assert!(!left.contains(&n), "{n} left behind: {left}");
    }
}

#[test]
fn a_namespace_it_did_not_make_is_never_touched() {
    let p = prefix("tf");
    let foreign = format!("{p}-rt");
    let made = Command::new("ip")
        .args(["netns", "add", &foreign])
        .status()
        .expect("ip");
    assert!(
        made.success(),
        "cannot make a namespace: these tests need root"
    );
    let bed = Testbed {
        prefix: p.clone(),
        owner: Some(std::process::id()),
        ..Testbed::default()
    };
    let up = bed.up();
    let down = bed.down();
    let still_there = netns_list().contains(&foreign);
    let _ = Command::new("ip").args(["netns", "del", &foreign]).status();
    assert!(up.is_err(), "up went ahead over {foreign}");
    assert!(down.is_err(), "down removed a test bed it has no record of");
    assert!(still_there, "{foreign} was removed");
}

#[test]
fn a_test_bed_whose_owner_died_is_removed_by_the_next_one() {
    // The owner: a process that dies once its test bed is up.
    let mut owner = Command::new("sleep").arg("60").spawn().expect("spawn");
    let mut stale = Testbed {
        prefix: prefix("ts"),
        net: 82,
        delay_line_exe: env!("CARGO_BIN_EXE_concord-testbed").into(),
        ..Testbed::default()
    };
    stale.owner = Some(owner.id());
    let up = stale.up();
    let _ = owner.kill();
    let _ = owner.wait();
    up.expect("the first test bed");
    let names = stale.namespaces();
    assert!(netns_list().contains(&names[0]));
    let next = Bed::up(Testbed {
        prefix: prefix("tn"),
        net: 83,
        ..Testbed::default()
    });
    let left = netns_list();
    drop(next);
    for n in names {
        assert!(!left.contains(&n), "stale {n} left behind: {left}");
    }
    assert!(stale.read_record().is_none());
}
