//! CP in the simulator: `[[cp]]` sections and `cudp` flows in scenario files, CP headers on
//! packets (their size counted), stamping at the local aggregation point, reports back from
//! the remote one, and endpoints sending at their share of the estimate.

mod common;

use common::{load, run};
use concord_cc::cp::{AggregateControl, Flowshares};
use concord_sim::flow::Agent;
use concord_sim::scenario::{parse_str, ErrorKind, FlowKind};
use concord_sim::Simulator;

/// `n` C-UDP flows of application 1 through r1 -> r2 (10 Mbps, 100 ms RTT), with `cp` spliced
/// into the `[[cp]]` section (which starts at line 7) and `extra` into the flow.
fn scenario(n: usize, cp: &str, extra: &str) -> String {
    format!(
        r#"duration = "30s"
[topology]
kind = "dumbbell"
pairs = 1
bottleneck = {{ rate = "10Mbps", delay = "48ms", queue = {{ kind = "red", limit = "100pkt" }} }}
access = {{ rate = "1Gbps", delay = "1ms" }}
[[cp]]
app = 1
local = "r1"
remote = "r2"
{cp}
[[flow]]
name = "c{{i}}"
kind = "cudp"
app = 1
from = "s1"
to = "d1"
count = {n}
{extra}
"#
    )
}

#[test]
fn a_cp_section_reads_its_aggregation_points_control_and_flowshares() {
    let sc = load(&scenario(
        3,
        "control = \"rap\"\nflowshares = \"bfld\"\nm = 5",
        "",
    ));
    assert_eq!(sc.cp.len(), 1);
    let a = &sc.cp[0];
    assert_eq!((a.app, a.control), (1, AggregateControl::Rap));
    assert_eq!(a.flowshares, Flowshares::Bfld { m: 5 });
    assert_eq!(sc.nodes[a.local].name, "r1");
    assert_eq!(sc.nodes[a.remote].name, "r2");
    assert_eq!(
        sc.flows[0].kind,
        FlowKind::CUdp {
            app: 1,
            packet_size: 1000
        }
    );
    // Without m, BFLD takes one flowshare per flow of the application (fixed at build time).
    let sc = load(&scenario(3, "flowshares = \"naive\"", ""));
    assert_eq!(sc.cp[0].flowshares, Flowshares::Naive { m: 0 });
}

#[test]
fn scenario_mistakes_in_cp_are_rejected_at_their_line() {
    let cases = [
        (
            scenario(1, "", "").replace("local = \"r1\"", "local = \"s1\""),
            9,
            "is a host",
        ),
        (
            scenario(1, "", "").replace("remote = \"r2\"", "remote = \"r1\""),
            10,
            "same router",
        ),
        (
            scenario(1, "flowshares = \"many\"", ""),
            11,
            "unknown flowshares",
        ),
        (scenario(1, "m = 3", ""), 11, "single flowshare"),
        (
            scenario(1, "", "").replace("app = 1\nfrom", "app = 2\nfrom"),
            15,
            "no [[cp]] section",
        ),
        (scenario(1, "colour = 1", ""), 11, "colour"),
    ];
    for (text, line, words) in cases {
        let Err(e) = parse_str(&text, None) else {
            panic!("accepted:\n{text}");
        };
        assert_eq!(e.line, line, "{e}");
        assert!(e.to_string().contains(words), "{e}");
        assert_ne!(e.kind, ErrorKind::Io);
    }
}

#[test]
fn the_aggregation_points_stamp_report_and_control_the_aggregate() {
    let sim = run(&load(&scenario(4, "", "")));
    let (local, remote) = (sim.cp().apps[&1].local, sim.cp().apps[&1].remote);
    let ap = &sim.cp().aps[&local];
    let st = ap
        .status(1)
        .unwrap_or_else(|| panic!("application 1 at r1"));
    // Every datagram was stamped at r1 and delivered through r2; r2's reports reached r1.
    let sent: u64 = sim
        .flows()
        .iter()
        .map(|f| match &f.agent {
            Agent::CUdp(c) => c.sent,
            _ => 0,
        })
        .sum();
    assert!(sent > 10_000, "{sent}");
    assert!(ap.stats().stamped > 0 && ap.stats().stamped <= sent);
    assert!(sim.cp().aps[&remote].stats().delivered > 0);
    assert!(sim.cp().aps[&remote].stats().control_sent > 100);
    // All but those in flight at the end arrived.
    let (got, gone) = (
        ap.stats().control_received,
        sim.cp().aps[&remote].stats().control_sent,
    );
    assert!(got <= gone && got + 5 >= gone, "{got} of {gone}");
    assert!(st.aggregate.reports > 100);
    // The RTT between the APs is the path's 2 * 48 ms plus queueing and serialisation.
    let rtt = st.rtt.map(|r| r.as_secs_f64()).unwrap_or(0.0);
    assert!((0.096..0.2).contains(&rtt), "{rtt}");
    // Headers of packets in flight only are kept.
    assert!(sim.cp().headers.live() < 500, "{}", sim.cp().headers.live());
    // The aggregate is rate-controlled: after its slow-start loss TFRC climbs slowly (RFC 5348
    // section 5.4), so over 30 s it takes a good part of the 10 Mbps, split equally among its
    // four flows.
    let goodput: Vec<u64> = sim.flows().iter().map(|f| f.delivered).collect();
    let total: u64 = goodput.iter().sum();
    let mbps = total as f64 * 8.0 / 30.0 / 1e6;
    assert!((2.5..10.0).contains(&mbps), "{mbps}");
    let (lo, hi) = (goodput.iter().min(), goodput.iter().max());
    if let (Some(&lo), Some(&hi)) = (lo, hi) {
        assert!(lo as f64 >= 0.95 * hi as f64, "{goodput:?}");
    }
}

#[test]
fn endpoints_send_at_their_share_of_the_estimate_and_packets_count_the_cp_header() {
    let sc = load(&scenario(2, "", "stop = \"20s\""));
    let mut sim = Simulator::new(&sc).unwrap_or_else(|e| panic!("{e}"));
    sim.run_until(concord_cc::time::Instant::from_secs(10))
        .unwrap_or_else(|e| panic!("{e}"));
    let local = sim.cp().apps[&1].local;
    let avail = sim.cp().aps[&local].available_bandwidth(1).bps();
    for f in sim.flows() {
        let Agent::CUdp(c) = &f.agent else {
            panic!("a cudp flow");
        };
        let share = c.rate.bps();
        assert!(share.abs_diff(avail / 2) <= 1, "{share} of {avail}");
        assert_eq!(c.socket.available_bandwidth().map(|r| r.bps()), Some(avail));
    }
    // A datagram leaves its endpoint with the ids-only CP header: 1000 + its encoded length.
    let access = sim
        .channels()
        .iter()
        .find(|c| c.name == "s1->r1")
        .unwrap_or_else(|| panic!("s1->r1"));
    let (bytes, packets) = (access.stats().tx_bytes, access.stats().tx_packets);
    let per = bytes as f64 / packets.max(1) as f64;
    let header = concord_cc::cp::CpHeader::new(1, 0).encoded_len() as f64;
    assert!((per - (1000.0 + header)).abs() < 1e-9, "{per}");
}

#[test]
fn bfld_without_m_takes_one_flowshare_per_flow_and_queue_drops_free_their_headers() {
    // A 2 Mbps bottleneck with a 20-packet queue: the BFLD aggregate of three flows loses
    // packets there, and their headers leave the table with them.
    let text = scenario(3, "flowshares = \"bfld\"", "").replace(
        "rate = \"10Mbps\", delay = \"48ms\", queue = { kind = \"red\", limit = \"100pkt\" }",
        "rate = \"2Mbps\", delay = \"48ms\", queue = \"20pkt\"",
    );
    let sim = run(&load(&text));
    let local = sim.cp().apps[&1].local;
    let st = sim.cp().aps[&local]
        .status(1)
        .unwrap_or_else(|| panic!("application 1 at r1"));
    assert_eq!(st.flowshares, Flowshares::Bfld { m: 3 });
    let drops: u64 = sim.channels().iter().map(|c| c.stats().drops_full).sum();
    assert!(drops > 0, "the queue dropped nothing");
    assert!(st.bfld_offered_kept.0 > 0);
    assert!(sim.cp().headers.live() < 100, "{}", sim.cp().headers.live());
}
