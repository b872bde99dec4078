//! Linux-like pacing of a TCP sender in the simulator (`pacing` in a flow's TCP settings): the
//! segment the sender holds back leaves at the departure time the pacer gives, and nothing
//! changes without the key.

use concord_cc::time::{Duration, Instant};
use concord_sim::flow::Agent;
use concord_sim::scenario::parse_str;
use concord_sim::Simulator;

/// One pair, every link 1 Gbit/s (no queue forms), 100 ms of round trip, one transfer of 12
/// segments of 1448 bytes without delayed ACKs; `tcp` goes into the flow's TCP settings.
fn scenario(tcp: &str) -> String {
    format!(
        r#"name = "pacing"
duration = "5s"
seed = 1
[topology]
kind = "dumbbell"
pairs = 1
bottleneck = {{ rate = "1Gbps", delay = "48ms", queue = "100pkt" }}
access = {{ rate = "1Gbps", delay = "1ms" }}
[[flow]]
name = "get"
kind = "tcp"
from = "s1"
to = "d1"
bytes = 17376
tcp = {{ delayed_ack = false, initial_cwnd = 10 {tcp} }}
"#
    )
}

fn run(text: &str) -> Simulator {
    let sc = parse_str(text, None).expect("valid scenario");
    let mut sim = Simulator::new(&sc).expect("builds");
    sim.run().expect("runs");
    sim
}

/// The transfer's completion time and the sender's smallest RTT sample.
fn completed(sim: &Simulator) -> (Instant, Duration) {
    match &sim.flows()[0].agent {
        Agent::Tcp(t) => (
            t.completed.expect("the transfer completes"),
            t.sender.rtt().min_rtt(),
        ),
        _ => panic!("a TCP flow"),
    }
}

#[test]
fn the_segment_held_back_leaves_at_its_departure_time() {
    let (without, rtt) = completed(&run(&scenario("")));
    let (with, paced_rtt) = completed(&run(&scenario(", pacing = true")));
    assert_eq!(rtt, paced_rtt, "no queue: every RTT sample is the path's");
    // The first ACK (segment 1) gives srtt = rtt and cwnd 11 segments in slow start: rate =
    // 2.00 x 11 x 1448 B / srtt. Segments 11 and 12 may leave on it. Without pacing segment
    // 12 leaves right behind 11 (12 us: 1500 B at 1 Gbit/s); with pacing at its departure
    // time, one gap (1448 B at the rate) after 11, of which the sender's idle time since the
    // initial window takes half off (tcp_update_skb_after_send's credit).
    let rate = 2 * 11 * 1448 * 1_000_000_000u128 / u128::from(rtt.as_nanos());
    let gap = 1448 * 1_000_000_000u128 / rate;
    let half = u64::try_from(gap - gap / 2).expect("a gap in ns");
    assert_eq!(with - without, Duration::from_nanos(half - 12_000));
}

#[test]
fn pacing_false_is_the_sender_without_the_key() {
    let (without, _) = completed(&run(&scenario("")));
    let (off, _) = completed(&run(&scenario(", pacing = false")));
    let (table, _) = completed(&run(&scenario(
        ", pacing = { ss_ratio = 200, ca_ratio = 120 }",
    )));
    let (on, _) = completed(&run(&scenario(", pacing = true")));
    assert_eq!(off, without);
    assert_eq!(table, on, "true is Linux's ratios");
    assert!(on > without);
}

#[test]
fn with_gso_the_two_segments_an_ack_releases_leave_together() {
    // The first ACK releases segments 11 and 12 at 2.00 x 11 x 1448 B / srtt (about 318 kB/s,
    // tcp_tso_autosize: 311 B, two segments): one GSO packet, so segment 12 leaves right
    // behind 11 as without pacing.
    let (without, _) = completed(&run(&scenario("")));
    let (gso, _) = completed(&run(&scenario(", pacing = { gso = true }")));
    let (segments, _) = completed(&run(&scenario(", pacing = { gso = false }")));
    let (on, _) = completed(&run(&scenario(", pacing = true")));
    assert_eq!(gso, without);
    assert_eq!(segments, on, "gso = false is segment-by-segment pacing");
}
