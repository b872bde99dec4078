//! SACK (RFC 2018, RFC 6675) in the simulator: a flow with `sack = true` runs end to end, its
//! ACKs carry SACK blocks, and the slow-start overshoot into a small DropTail buffer (many
//! losses in one window) is recovered without the timeouts NewReno needs.

use concord_sim::results::RunResults;
use concord_sim::scenario::parse_str;
use concord_sim::Simulator;

/// One flow, 10 Mbit/s, RTT 100 ms, a DropTail buffer of 25 packets (a fifth of the BDP):
/// slow start overshoots it by about a window and loses many segments of one window.
fn scenario(tcp: &str) -> String {
    format!(
        r#"name = "sack-overshoot"
duration = "20s"
seed = 1
[topology]
kind = "dumbbell"
pairs = 1
bottleneck = {{ rate = "10Mbps", delay = "48ms", queue = "25pkt" }}
access = {{ rate = "1Gbps", delay = "1ms" }}
[defaults.tcp]
{tcp}
[[flow]]
name = "bulk"
kind = "tcp"
from = "s1"
to = "d1"
"#
    )
}

fn run(tcp: &str) -> RunResults {
    let sc = parse_str(&scenario(tcp), None).expect("valid scenario");
    let mut sim = Simulator::new(&sc).expect("builds");
    sim.run().expect("runs");
    RunResults::from_simulator(&sim)
}

#[test]
fn sack_recovers_the_slow_start_overshoot_without_timeouts() {
    for tcp in ["sack = true", "sack = true\nrecovery = \"prr\""] {
        let r = run(tcp);
        let f = &r.flows[0];
        // Every segment the queue dropped is resent once, and only those: the scoreboard
        // knows what arrived (RFC 6675); no timeout.
        assert!(f.queue_drops > 10, "{tcp}: the overshoot drops many: {f:?}");
        assert_eq!(f.timeouts, 0, "{tcp}: {f:?}");
        assert_eq!(f.retransmissions, f.queue_drops, "{tcp}: {f:?}");
    }
    // NewReno on the same path: one hole per RTT, then the timer, and go-back-N resends data
    // that had arrived.
    let r = run("recovery = \"classic\"");
    let f = &r.flows[0];
    assert!(f.timeouts >= 1, "{f:?}");
    assert!(f.retransmissions > f.queue_drops, "{f:?}");
}

#[test]
fn a_sack_run_is_deterministic() {
    let a = run("sack = true");
    let b = run("sack = true");
    assert_eq!(format!("{:?}", a.flows), format!("{:?}", b.flows));
}

/// The frames of a classic pcap file (24-byte global header, then 16-byte record headers): each
/// frame's captured bytes and its length on the wire.
fn pcap_frames(bytes: &[u8]) -> Vec<(Vec<u8>, usize)> {
    let mut out = Vec::new();
    let mut at = 24;
    while at + 16 <= bytes.len() {
        let word = |k: usize| {
            u32::from_le_bytes([bytes[k], bytes[k + 1], bytes[k + 2], bytes[k + 3]]) as usize
        };
        let (incl, orig) = (word(at + 8), word(at + 12));
        out.push((bytes[at + 16..at + 16 + incl].to_vec(), orig));
        at += 16 + incl;
    }
    out
}

/// The ACKs of the overshoot on the reverse path, traced: those with SACK blocks are 4 + 8n
/// bytes longer than the 66-byte ACK (Ethernet 14, IPv4 20, TCP 20 and 12 of timestamps), carry
/// NOP, NOP, SACK with the blocks' edges above the cumulative ACK (RFC 2018 section 3), and
/// decode whole; without SACK no ACK carries the option.
#[test]
fn acks_carry_the_sack_option_bytes_on_the_wire_and_in_the_pcap() {
    use concord_cc::wire::{decode_ipv4_frame, Transport};
    let trace = |tcp: &str| -> Vec<(Vec<u8>, usize)> {
        let dir = std::env::temp_dir().join(format!(
            "concord-sack-pcap-{}-{}",
            std::process::id(),
            tcp.len()
        ));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("temp dir");
        let text = scenario(tcp).replace("seed = 1", "seed = 1\n[record]\npcap = [\"r2->r1\"]");
        let sc = parse_str(&text, None).expect("valid scenario");
        let mut sim = Simulator::with_capture_dir(&sc, Some(&dir)).expect("builds");
        sim.run().expect("runs");
        let bytes = std::fs::read(dir.join("r2-r1.pcap")).expect("the reverse path's trace");
        let _ = std::fs::remove_dir_all(&dir);
        pcap_frames(&bytes)
    };
    let mut with_blocks = [0usize; 4];
    for (frame, wire_len) in trace("sack = true") {
        let (_, ip, transport, _) = decode_ipv4_frame(&frame).expect("a whole TCP/IPv4 frame");
        let Transport::Tcp(h) = transport else {
            panic!("not TCP: {transport:?}")
        };
        let n = h.sack.blocks().len();
        assert!(n <= 3, "three blocks at most beside timestamps: {h:?}");
        with_blocks[n] += 1;
        let expected = if n == 0 { 66 } else { 66 + 4 + 8 * n };
        assert_eq!(wire_len, expected, "{h:?}");
        assert_eq!(usize::from(ip.total_len), expected - 14);
        assert!(h.timestamps.is_some());
        for &(left, right) in h.sack.blocks() {
            assert!(left.wrapping_sub(h.ack) < 1 << 31 && left != h.ack, "{h:?}");
            assert!(right.wrapping_sub(left) < 1 << 31 && right != left, "{h:?}");
        }
    }
    assert!(with_blocks[0] > 1000, "{with_blocks:?}");
    assert!(
        with_blocks[1] > 10,
        "ACKs above holes carry blocks: {with_blocks:?}"
    );
    assert!(
        with_blocks[2] + with_blocks[3] > 0,
        "several holes: {with_blocks:?}"
    );
    for (frame, wire_len) in trace("recovery = \"classic\"") {
        let (_, _, transport, _) = decode_ipv4_frame(&frame).expect("a whole TCP/IPv4 frame");
        let Transport::Tcp(h) = transport else {
            panic!("not TCP")
        };
        assert!(h.sack.is_empty());
        assert_eq!(wire_len, 66);
    }
}
