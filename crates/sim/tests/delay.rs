//! Per-packet one-way delays of a TCP flow: across the network (transmission to arrival) and to
//! the application (first transmission to in-order delivery), with their jitter.

mod common;

use common::{load, run};
use concord_sim::flow::Agent;

/// One 2 MB transfer of 1000-byte segments over a 10 Mbps, 100 ms path whose buffer holds the
/// whole window (no queue loss), measured at the application too; `extra` is spliced into the
/// flow.
fn transfer(extra: &str) -> String {
    format!(
        r#"duration = "10s"
[topology]
kind = "dumbbell"
pairs = 1
bottleneck = {{ rate = "10Mbps", delay = "48ms", queue = "4MB" }}
access = {{ rate = "1Gbps", delay = "1ms" }}
[[flow]]
name = "f"
kind = "tcp"
from = "s1"
to = "d1"
bytes = "2MB"
tcp = {{ cc = "newreno", mss = 1000, header_bytes = 40, delayed_ack = false }}
{extra}
[record]
application_delay = ["f"]
"#
    )
}

#[test]
fn only_the_flows_named_in_record_are_measured_at_the_application() {
    let text = transfer("").replace("application_delay = [\"f\"]", "");
    let sim = run(&load(&text));
    let f = &sim.flows()[0];
    assert_eq!(f.network.delay.count(), 2000);
    assert_eq!(f.application.delay.count(), 0);
    match &f.agent {
        Agent::Tcp(t) => assert_eq!(t.first_sent_through, 0, "nothing tracked"),
        _ => panic!("not tcp"),
    }
}

#[test]
fn without_loss_the_application_sees_each_segment_when_it_arrives() {
    let sim = run(&load(&transfer("")));
    let f = &sim.flows()[0];
    // 2 MB in 1000-byte segments, each counted once at both ends.
    assert_eq!(f.network.delay.count(), 2000);
    assert_eq!(f.application.delay.count(), 2000);
    assert_eq!(f.application.delay.mean(), f.network.delay.mean());
    assert_eq!(f.application.jitter.count(), 1999);
    // 50 ms of propagation at least, one way (quantiles are bucket midpoints, 1.6% wide).
    assert!(f.network.delay.quantile(0.0).as_secs_f64() >= 0.050 * 0.99);
    match &f.agent {
        Agent::Tcp(t) => assert!(t.first_sent.is_empty(), "every segment was delivered"),
        _ => panic!("not tcp"),
    }
}

#[test]
fn a_lost_segment_delays_itself_and_the_segments_behind_it_for_the_application() {
    let sim = run(&load(&transfer("drop_when = { segment = 200 }")));
    let f = &sim.flows()[0];
    // The lost segment never arrives, its retransmission does: 2000 arrivals, 2000 segments
    // delivered in order.
    assert_eq!(f.network.delay.count(), 2000);
    assert_eq!(f.application.delay.count(), 2000);
    // The lost segment waits for three duplicate ACKs and its retransmission: at least one
    // round trip (100 ms of propagation) more than any crossing of the network.
    let worst_network = f.network.delay.max().as_secs_f64();
    let worst_application = f.application.delay.max().as_secs_f64();
    assert!(
        worst_application >= worst_network + 0.100,
        "{worst_application} vs {worst_network}"
    );
    // The segments that arrived behind the hole wait too, so the mean rises.
    assert!(f.application.delay.mean() > f.network.delay.mean());
    // The hole shows as jitter: the first segment delivered after it waited far longer than
    // the one before.
    assert!(f.application.jitter.max().as_secs_f64() >= 0.1);
}
