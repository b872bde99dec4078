//! A TCP flow's retransmission timeouts counted by what they fired on (`timeout_causes` in the
//! flow summary): the simulator tells the sender the receiver's RCV.NXT when the timer fires,
//! so a timeout on a segment the receiver already holds is told apart from one on lost data.

use concord_sim::results::{RunResults, TimeoutCausesSummary};
use concord_sim::scenario::parse_str;
use concord_sim::Simulator;

/// One flow of three segments (3 x 1448 bytes), IW 10, RTT 20 ms, no loss. The receiver
/// acknowledges the first two at once (every second segment, RFC 1122) and holds the ACK of
/// the third for its delayed-ACK timer, `delack`; the sender's RTO is 200 ms (the minimum:
/// SRTT about 20 ms), restarted by the ACK of the first two.
fn run(delack: &str) -> RunResults {
    let toml = format!(
        r#"name = "lone-segment"
duration = "2s"
seed = 1
[topology]
kind = "dumbbell"
pairs = 1
bottleneck = {{ rate = "10Mbps", delay = "8ms", queue = "100pkt" }}
access = {{ rate = "1Gbps", delay = "1ms" }}
[defaults.tcp]
mss = "1448B"
min_rto = "200ms"
delayed_ack = true
ack_every = 2
delayed_ack_timeout = "{delack}"
[[flow]]
name = "f"
kind = "tcp"
from = "s1"
to = "d1"
bytes = "4344B"
"#
    );
    let sc = parse_str(&toml, None).expect("valid scenario");
    let mut sim = Simulator::new(&sc).expect("builds");
    sim.run().expect("runs");
    RunResults::from_simulator(&sim)
}

#[test]
fn a_delayed_ack_longer_than_the_rto_gives_one_receiver_held_timeout() {
    // 300 ms > the 200 ms RTO: the timer fires while the receiver holds the third segment;
    // the resend is a duplicate, acknowledged at once, and the transfer ends.
    let f = &run("300ms").flows[0];
    assert_eq!(f.timeouts, 1, "{f:?}");
    assert_eq!(
        f.timeout_causes,
        TimeoutCausesSummary {
            receiver_held: 1,
            ..TimeoutCausesSummary::default()
        }
    );
    assert_eq!(f.retransmissions, 1, "{f:?}");
    assert_eq!(f.delivered_bytes, 4344);
}

#[test]
fn a_delayed_ack_shorter_than_the_rto_gives_none() {
    let f = &run("100ms").flows[0];
    assert_eq!(f.timeouts, 0, "{f:?}");
    assert_eq!(f.timeout_causes, TimeoutCausesSummary::default());
    assert_eq!(f.retransmissions, 0, "{f:?}");
}

#[test]
fn the_summary_json_carries_the_causes() {
    let r = run("300ms");
    let json = serde_json::to_value(&r.flows[0]).expect("serialises");
    assert_eq!(
        json["timeout_causes"],
        serde_json::json!({
            "receiver_held": 1, "in_recovery": 0, "repeat": 0, "disorder": 0, "open": 0
        })
    );
}
