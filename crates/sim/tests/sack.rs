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
