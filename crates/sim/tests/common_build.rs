//! A dumbbell built in code, independent of the scenario loader.

use concord_cc::aqm::{AqmConfig, QueueLimit};
use concord_cc::tcp::TcpConfig;
use concord_cc::time::Duration;
use concord_cc::units::Rate;
use concord_sim::results::RunResults;
use concord_sim::scenario::*;
use concord_sim::Simulator;

fn chan(rate: Rate, delay_ms: u64, limit: u32) -> ChannelSpec {
    ChannelSpec {
        rate,
        delay: Duration::from_millis(delay_ms),
        queue: AqmConfig::DropTail {
            limit: QueueLimit::Packets(limit),
        },
        loss: 0.0,
        loss_applies_to: LossFilter::All,
        gcca: None,
        eca: None,
        framing_bytes: 0,
    }
}

fn dumbbell(n: usize, secs: u64) -> Scenario {
    let mut nodes = vec![
        NodeSpec {
            name: "r1".into(),
            kind: NodeKind::Router,
            gcca: None,
        },
        NodeSpec {
            name: "r2".into(),
            kind: NodeKind::Router,
            gcca: None,
        },
    ];
    let mut links = vec![LinkSpec {
        a: 0,
        b: 1,
        forward: chan(Rate::from_mbps(10), 23, 100),
        reverse: chan(Rate::from_mbps(10), 23, 100),
    }];
    let mut flows = Vec::new();
    for i in 0..n {
        nodes.push(NodeSpec {
            name: format!("s{}", i + 1),
            kind: NodeKind::Host,
            gcca: None,
        });
        nodes.push(NodeSpec {
            name: format!("d{}", i + 1),
            kind: NodeKind::Host,
            gcca: None,
        });
        let (s, d) = (nodes.len() - 2, nodes.len() - 1);
        links.push(LinkSpec {
            a: s,
            b: 0,
            forward: chan(Rate::from_gbps(1), 1, 1000),
            reverse: chan(Rate::from_gbps(1), 1, 1000),
        });
        links.push(LinkSpec {
            a: 1,
            b: d,
            forward: chan(Rate::from_gbps(1), 1, 1000),
            reverse: chan(Rate::from_gbps(1), 1, 1000),
        });
        flows.push(FlowSpec {
            name: format!("f{}", i + 1),
            from: s,
            to: d,
            start: Duration::from_millis(i as u64 * 10),
            stop: None,
            kind: FlowKind::Tcp {
                tcp: TcpConfig::default(),
                bytes: None,
            },
            drop_when: None,
            eca: None,
            cm: None,
        });
    }
    Scenario {
        name: "dumbbell".into(),
        source: None,
        duration: Duration::from_secs(secs),
        seed: 1,
        nodes,
        links,
        flows,
        record: RecordSpec {
            warmup: Duration::from_secs(5),
            cwnd: vec![0],
            ..RecordSpec::default()
        },
        cp: Vec::new(),
        cm: Default::default(),
    }
}

#[test]
fn four_newreno_flows_fill_a_dumbbell() {
    let sc = dumbbell(4, 60);
    let mut sim = Simulator::new(&sc).expect("no capture");
    sim.run().expect("run");
    let r = RunResults::from_simulator(&sim);
    eprintln!("{}", serde_json::to_string_pretty(&r).unwrap_or_default());
    assert!(
        r.bottleneck_utilisation > 0.9,
        "utilisation {}",
        r.bottleneck_utilisation
    );
}
