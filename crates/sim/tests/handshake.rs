//! The TCP three-way handshake in the simulator (`handshake` in a flow's TCP settings): the
//! transfer starts one SYN round trip later, a SYN lost on the wire is resent on its own
//! timer (1 s, doubled) until `syn_retries`, and the SYN is ECT(0) only with `ect_syn`.

use concord_cc::tcp::handshake::OpenState;
use concord_cc::time::{Duration, Instant};
use concord_sim::flow::Agent;
use concord_sim::scenario::parse_str;
use concord_sim::Simulator;

/// One pair, bottleneck 10 Mbit/s and 48 ms, access links 1 Gbit/s and 1 ms, one TCP
/// transfer of one 1448-byte segment starting at 1 s; `extra` goes into the forward access
/// link and `tcp` into the flow's TCP settings.
fn scenario(tcp: &str, access: &str) -> String {
    format!(
        r#"name = "handshake"
duration = "140s"
seed = 1
[topology]
kind = "dumbbell"
pairs = 1
bottleneck = {{ rate = "10Mbps", delay = "48ms", queue = "100pkt" }}
access = {{ rate = "1Gbps", delay = "1ms" {access} }}
[[flow]]
name = "get"
kind = "tcp"
from = "s1"
to = "d1"
start = "1s"
bytes = 1448
tcp = {{ delayed_ack = false {tcp} }}
"#
    )
}

fn run(text: &str) -> Simulator {
    let sc = parse_str(text, None).expect("valid scenario");
    let mut sim = Simulator::new(&sc).expect("builds");
    sim.run().expect("runs");
    sim
}

fn completed(sim: &Simulator) -> Option<Instant> {
    match &sim.flows()[0].agent {
        Agent::Tcp(t) => t.completed,
        _ => None,
    }
}

#[test]
fn the_transfer_ends_one_syn_round_trip_later_and_the_sender_samples_it() {
    let without = completed(&run(&scenario("", ""))).expect("completes");
    let sim = run(&scenario(", handshake = true", ""));
    let with = completed(&sim).expect("completes");
    // SYN and SYN-ACK are 52 + 8 = 60 bytes: 480 ns at 1 Gbit/s, 48 us at 10 Mbit/s, one way
    // 2 x (1 ms + 480 ns) + 48 ms + 48 us = 50.04896 ms.
    let syn_rtt = Duration::from_nanos(2 * 50_048_960);
    // The ACK of the SYN-ACK (52 B) leaves just before the data: the data reaches r1 416 ns
    // later than it would have (at 12.416 us past the ACK's start instead of 12 us) and
    // waits there until the ACK's 41.6 us on the bottleneck end, 41.6 + 0.416 us in.
    let behind_ack = Duration::from_nanos(41_600 + 416 - 12_000);
    assert_eq!(with - without, syn_rtt + behind_ack);
    let Agent::Tcp(t) = &sim.flows()[0].agent else {
        panic!("a TCP flow")
    };
    assert_eq!(
        t.sender.rtt().min_rtt(),
        syn_rtt,
        "the handshake's RTT sample"
    );
    let h = t.handshake.as_ref().expect("a handshake");
    assert_eq!((h.active.syns_sent(), h.passive.syn_acks_sent()), (1, 1));
    assert_eq!(h.passive.state(), OpenState::Established);
}

#[test]
fn a_syn_lost_every_time_is_resent_at_1_3_7_15_31_63_seconds_then_the_connection_fails() {
    let sim = run(&scenario(", handshake = true", ", loss = 1.0"));
    assert_eq!(completed(&sim), None);
    let Agent::Tcp(t) = &sim.flows()[0].agent else {
        panic!("a TCP flow")
    };
    let h = t.handshake.as_ref().expect("a handshake");
    // Sent at 1 s and then 1, 3, 7, 15, 31 and 63 s later; the last timer (64 s) expires at
    // 128 s, within the 140 s run.
    assert_eq!(h.active.syns_sent(), 7);
    assert_eq!(h.active.state(), OpenState::Failed);
    assert_eq!(h.passive.state(), OpenState::Closed);
    assert_eq!(t.sender.stats().segments_sent, 0);
}

#[test]
fn the_syn_is_ect_only_with_ect_syn_and_ecn() {
    use concord_cc::wire::{decode_ipv4_frame, Ecn, TcpFlags, Transport};
    let first_frame = |tcp: &str| {
        let dir = std::env::temp_dir().join(format!(
            "concord-handshake-pcap-{}-{}",
            std::process::id(),
            tcp.len()
        ));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("temp dir");
        let text = scenario(tcp, "").replace("seed = 1", "seed = 1\n[record]\npcap = [\"r1->r2\"]");
        let sc = parse_str(&text, None).expect("valid scenario");
        let mut sim = Simulator::with_capture_dir(&sc, Some(&dir)).expect("builds");
        sim.run().expect("runs");
        let bytes = std::fs::read(dir.join("r1-r2.pcap")).expect("the forward trace");
        let _ = std::fs::remove_dir_all(&dir);
        // The first record after the 24-byte global header and its 16-byte record header.
        let incl = u32::from_le_bytes([bytes[32], bytes[33], bytes[34], bytes[35]]) as usize;
        let orig = u32::from_le_bytes([bytes[36], bytes[37], bytes[38], bytes[39]]) as usize;
        let (_, ip, transport, _) =
            decode_ipv4_frame(&bytes[40..40 + incl]).expect("a whole TCP/IPv4 frame");
        let Transport::Tcp(h) = transport else {
            panic!("not TCP")
        };
        assert_eq!(h.flags, TcpFlags::SYN, "{tcp}");
        // The trace writes the timestamps option alone (MSS and window scale are left out).
        assert_eq!(orig, 14 + 52, "{tcp}");
        ip.ecn
    };
    assert_eq!(first_frame(", handshake = true, ecn = true"), Ecn::NotEct);
    assert_eq!(
        first_frame(", handshake = { ect_syn = true }, ecn = true"),
        Ecn::Ect0
    );
    assert_eq!(first_frame(", handshake = { ect_syn = true }"), Ecn::NotEct);
}

#[test]
fn the_handshake_key_takes_a_boolean_or_a_table_and_refuses_anything_else() {
    use concord_cc::tcp::HandshakeConfig;
    use concord_sim::scenario::FlowKind;
    let tcp_of = |tcp: &str| {
        let sc = parse_str(&scenario(tcp, ""), None).expect("valid scenario");
        match &sc.flows[0].kind {
            FlowKind::Tcp { tcp, .. } => tcp.handshake,
            _ => panic!("a TCP flow"),
        }
    };
    assert_eq!(tcp_of(""), None);
    assert_eq!(tcp_of(", handshake = false"), None);
    assert_eq!(
        tcp_of(", handshake = true"),
        Some(HandshakeConfig::default())
    );
    assert_eq!(
        tcp_of(", handshake = { syn_rto = \"6s\", syn_retries = 2, ect_syn = true }"),
        Some(HandshakeConfig {
            syn_rto: Duration::from_secs(6),
            syn_retries: 2,
            synack_retries: 5,
            ect_syn: true,
        })
    );
    let err = parse_str(&scenario(", handshake = 3", ""), None)
        .expect_err("a number is refused")
        .to_string();
    assert!(err.contains("a boolean or a table"), "{err}");
    let err = parse_str(
        &scenario(", handshake = { syn_timeout = \"1s\" }", ""),
        None,
    )
    .expect_err("an unknown key is refused")
    .to_string();
    assert!(err.contains("syn_timeout"), "{err}");
}
