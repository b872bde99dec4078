//! A case as a concord scenario file, run in the simulator and measured.

use crate::grid::{rate_label, Case, CaseRecovery, Queue, Topology, MSS_BYTES};
use crate::measurement::{cwnd_stats, fold_cwnd, Measurement};
use crate::runs::Windows;
use concord_sim::results::RunResults;
use concord_sim::scenario;
use concord_sim::Simulator;
use std::fmt::Write as _;

/// The scenario file of `case` with `seed`: the topology, NewReno flows with ns-3's settings
/// (IW 10, delayed ACKs every 2 segments or 200 ms, minimum RTO 200 ms, 52 header bytes, a
/// receive window of [`Case::buffer_bytes`], limited transmit on as ns-3's
/// `TcpSocketBase::LimitedTransmit` default), RED as ns-3's `RedQueueDisc` runs it (`Wait` on,
/// no early drop while the queue holds at most one packet), every flow's window traced.
pub fn scenario_text(case: &Case, seed: u64) -> String {
    scenario_text_of(case, seed, false)
}

/// The measurement source of concord run with ns-3 3.44's departures from the RFCs
/// ([`scenario_text_with_departures`]): a deviation of concord, compared with ns-3 as shipped.
pub const DEPARTURES_SOURCE: &str = "concord ns-3-departures";

/// The departures that scenario names: all three of `concord_cc::tcp::ns3_departures`
/// (`ecn-once` acts only where ECN is on).
pub const DEPARTURES: [&str; 3] = ["recover", "loss-exit", "ecn-once"];

/// [`scenario_text`] with the senders reproducing ns-3 3.44's three departures from the RFCs
/// (`tcp.ns3_departures`), so that concord runs the rules ns-3 as shipped runs.
pub fn scenario_text_with_departures(case: &Case, seed: u64) -> String {
    scenario_text_of(case, seed, true)
}

fn scenario_text_of(case: &Case, seed: u64, departures: bool) -> String {
    let mut s = String::new();
    let delay_us = case.link_delay().as_micros();
    let link = link_spec(case, delay_us);
    let _ = writeln!(
        s,
        "# concord validate: case {}; generated from crates/validate/grid.toml.",
        case.id
    );
    let _ = writeln!(s, "name = \"validate-{}\"", case.id);
    let _ = writeln!(s, "duration = \"{}ms\"", case.duration.as_millis());
    let _ = writeln!(s, "seed = {seed}");
    s.push('\n');
    s.push_str("[topology]\n");
    let mut names = Vec::new();
    match case.topology {
        Topology::Dumbbell => {
            s.push_str("kind = \"dumbbell\"\n");
            let _ = writeln!(s, "pairs = {}", case.flows);
            let _ = writeln!(s, "bottleneck = {link}");
        }
        Topology::ParkingLot { hops } => {
            s.push_str("kind = \"parking_lot\"\n");
            let _ = writeln!(s, "routers = {}", hops + 1);
            let _ = writeln!(s, "link = {link}");
        }
    }
    s.push_str("access = { rate = \"1Gbps\", delay = \"1ms\" }\n\n");
    s.push_str("[defaults.tcp]\ncc = \"newreno\"\ninitial_cwnd = 10\n");
    let _ = writeln!(s, "mss = \"{MSS_BYTES}B\"");
    let _ = writeln!(s, "rwnd = \"{}B\"", case.buffer_bytes());
    // ns-3 3.44 TcpSocketBase: LimitedTransmit defaults to true (RFC 3042).
    s.push_str("limited_transmit = true\n");
    s.push_str("min_rto = \"200ms\"\ndelayed_ack = true\nack_every = 2\n");
    if case.recovery != CaseRecovery::Classic {
        let _ = writeln!(s, "recovery = \"{}\"", case.recovery.name());
    }
    if case.sack {
        s.push_str("sack = true\n");
    }
    if matches!(case.queue, Queue::Red { ecn: true, .. }) {
        s.push_str("ecn = true\n");
    }
    if departures {
        let names: Vec<String> = DEPARTURES.iter().map(|d| format!("\"{d}\"")).collect();
        let _ = writeln!(s, "ns3_departures = [{}]", names.join(", "));
    }
    let mut flow = |s: &mut String, name: &str, from: &str, to: &str, count: u32| {
        let _ = write!(
            s,
            "\n[[flow]]\nname = \"{name}\"\nkind = \"tcp\"\nfrom = \"{from}\"\nto = \"{to}\"\ncount = {count}\nstart_jitter = \"100ms\"\n"
        );
        for i in 1..=count {
            names.push(name.replace("{i}", &i.to_string()));
        }
    };
    match case.topology {
        Topology::Dumbbell => flow(&mut s, "f{i}", "s{i}", "d{i}", case.flows),
        Topology::ParkingLot { hops } => {
            flow(&mut s, "m{i}", "src", "dst", case.flows);
            for h in 1..=hops {
                flow(
                    &mut s,
                    &format!("c{h}-{{i}}"),
                    &format!("c{h}"),
                    &format!("x{h}"),
                    case.flows,
                );
            }
        }
    }
    s.push_str("\n[record]\nbottleneck = \"r1->r2\"\ncwnd = [");
    let quoted: Vec<String> = names.iter().map(|n| format!("\"{n}\"")).collect();
    s.push_str(&quoted.join(", "));
    s.push_str("]\n");
    s
}

/// The router-to-router link as an inline table.
fn link_spec(case: &Case, delay_us: u64) -> String {
    let queue = match case.queue {
        Queue::DropTail => format!("\"{}pkt\"", case.limit_packets),
        Queue::Red {
            min_th,
            max_th,
            ecn,
        } => format!(
            "{{ kind = \"red\", limit = \"{}pkt\", min_th = {min_th}, max_th = {max_th}, w_q = 0.002, max_p = 0.1, gentle = true, ecn = {ecn}, mean_pktsize = \"1500B\", wait = true, spare_short_queue = true }}",
            case.limit_packets
        ),
    };
    let mut spec = format!(
        "{{ rate = \"{}\", delay = \"{delay_us}us\", queue = {queue}",
        rate_label(case.rate)
    );
    if case.loss > 0.0 {
        // Data direction only: the reverse channel carries the ACKs, which ns-3's receive
        // error model on the downstream router's device never sees.
        let _ = write!(spec, ", loss = {}, reverse = {{ loss = 0 }}", case.loss);
    }
    spec.push_str(" }");
    spec
}

/// Runs `case` with `seed` in concord and measures it.
pub fn run(case: &Case, seed: u64) -> Result<Measurement, String> {
    run_text(case, seed, &scenario_text(case, seed))
}

/// Runs `case` with `seed` in concord with ns-3 3.44's departures
/// ([`scenario_text_with_departures`]) and measures it, as [`DEPARTURES_SOURCE`].
pub fn run_with_departures(case: &Case, seed: u64) -> Result<Measurement, String> {
    let m = run_text(case, seed, &scenario_text_with_departures(case, seed))?;
    Ok(Measurement {
        source: DEPARTURES_SOURCE.into(),
        ..m
    })
}

fn run_text(case: &Case, seed: u64, text: &str) -> Result<Measurement, String> {
    let sc = scenario::parse_str(text, None)
        .map_err(|e| format!("case {}: generated scenario refused: {e}", case.id))?;
    let mut sim = Simulator::new(&sc).map_err(|e| format!("case {}: {e}", case.id))?;
    sim.run().map_err(|e| format!("case {}: {e}", case.id))?;
    Ok(measure(&sim, case, seed))
}

/// The measurement of a finished run of `case`.
pub fn measure(sim: &Simulator, case: &Case, seed: u64) -> Measurement {
    let r = RunResults::from_simulator(sim);
    let hops = match case.topology {
        Topology::Dumbbell => 1,
        Topology::ParkingLot { hops } => hops,
    };
    let routers: Vec<String> = (1..=hops).map(|h| format!("r{h}->r{}", h + 1)).collect();
    let links: Vec<_> = r
        .channels
        .iter()
        .filter(|c| routers.contains(&c.name))
        .collect();
    let utilisation = if links.is_empty() {
        0.0
    } else {
        links.iter().map(|c| c.utilisation).sum::<f64>() / links.len() as f64
    };
    let end_s = r.duration_s;
    let mut per_flow: Vec<Vec<(f64, f64)>> = vec![Vec::new(); sim.flows().len()];
    for c in sim.cwnd_samples() {
        if let Some(v) = per_flow.get_mut(c.flow as usize) {
            v.push((c.at.as_secs_f64(), c.cwnd as f64 / MSS_BYTES as f64));
        }
    }
    let stats: Vec<_> = per_flow
        .iter()
        .filter_map(|v| cwnd_stats(v, end_s))
        .collect();
    let (cwnd_mean, cwnd_cv, cwnd_max) = fold_cwnd(&stats);
    Measurement {
        source: "concord".into(),
        seed,
        goodput_bps: r.flows.iter().map(|f| f.goodput_bps).collect(),
        utilisation,
        drops: links.iter().map(|c| c.drops_full + c.drops_early).sum(),
        marks: links.iter().map(|c| c.marks).sum(),
        wire_losses: links.iter().map(|c| c.wire_losses).sum(),
        timeouts: r.flows.iter().map(|f| f.timeouts).sum(),
        fast_retransmits: r.flows.iter().map(|f| f.fast_retransmits).sum(),
        spurious_fast_retransmits: None,
        cwnd_mean,
        cwnd_cv,
        cwnd_max,
        windows: Windows::of(sim),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::grid::parse;

    fn one(text: &str) -> Case {
        parse(text, "g.toml").expect("valid").remove(0)
    }

    #[test]
    fn every_generated_scenario_of_the_shipped_grid_loads() {
        let cases = parse(crate::grid::DEFAULT_GRID, "grid.toml").expect("valid grid");
        for c in &cases {
            let text = scenario_text(c, 1);
            if let Err(e) = scenario::parse_str(&text, None) {
                panic!("{}: {e}\n{text}", c.id);
            }
        }
    }

    #[test]
    fn the_departures_scenario_adds_the_key_and_nothing_else() {
        let c = one("[[case]]\ntopology = \"dumbbell\"\nflows = 1\nrate = \"10Mbps\"\nrtt = \"20ms\"\nqueue = \"droptail\"\nloss = 0.02\nduration = \"2s\"\n");
        let plain = scenario_text(&c, 3);
        let with = scenario_text_with_departures(&c, 3);
        assert!(!plain.contains("ns3_departures"), "{plain}");
        let line = "ns3_departures = [\"recover\", \"loss-exit\", \"ecn-once\"]\n";
        assert_eq!(with.replacen(line, "", 1), plain);
        let sc = scenario::parse_str(&with, None).expect("loads");
        for f in &sc.flows {
            match &f.kind {
                concord_sim::scenario::FlowKind::Tcp { tcp, .. } => {
                    assert_eq!(
                        tcp.ns3_departures,
                        concord_cc::tcp::Ns3Departures::corrected_by_validate()
                    )
                }
                other => panic!("not TCP: {other:?}"),
            }
        }
        let m = run_with_departures(&c, 3).expect("runs");
        assert_eq!((m.source.as_str(), m.seed), (DEPARTURES_SOURCE, 3));
    }

    #[test]
    fn a_sack_case_turns_sack_on_in_concord_and_ns3_and_names_it_in_its_id() {
        let c = one("[[case]]\ntopology = \"dumbbell\"\nflows = 4\nrate = \"10Mbps\"\nrtt = \"50ms\"\nqueue = \"droptail\"\nrecovery = \"prr\"\nsack = true\n");
        assert_eq!(c.id, "dumbbell-4f-10Mbps-50ms-droptail-prr-sack");
        let t = scenario_text(&c, 1);
        assert!(t.contains("recovery = \"prr\"\nsack = true\n"), "{t}");
        let a = crate::ns3::args(&c, 1, crate::ns3::Variant::Reference);
        assert!(a.contains(&"--sack=1".to_string()), "{a:?}");
        assert!(!crate::ns3::Variant::Sack.applies_to(&c));
        let plain = one("[[case]]\ntopology = \"dumbbell\"\nflows = 4\nrate = \"10Mbps\"\nrtt = \"50ms\"\nqueue = \"droptail\"\n");
        assert!(!scenario_text(&plain, 1).contains("sack"));
        assert!(crate::ns3::Variant::Sack.applies_to(&plain));
    }

    #[test]
    fn a_prr_case_sets_the_recovery_in_concord_and_ns3_and_in_its_id() {
        let c = one("[[case]]\ntopology = \"dumbbell\"\nflows = 4\nrate = \"10Mbps\"\nrtt = \"50ms\"\nqueue = \"droptail\"\nrecovery = \"prr\"\n");
        assert_eq!(c.id, "dumbbell-4f-10Mbps-50ms-droptail-prr");
        let t = scenario_text(&c, 1);
        assert!(t.contains("ack_every = 2\nrecovery = \"prr\"\n"), "{t}");
        let a = crate::ns3::args(&c, 1, crate::ns3::Variant::Reference);
        assert!(a.contains(&"--recovery=prr".to_string()), "{a:?}");
        assert!(!crate::ns3::Variant::Prr.applies_to(&c));
        let classic = one("[[case]]\ntopology = \"dumbbell\"\nflows = 4\nrate = \"10Mbps\"\nrtt = \"50ms\"\nqueue = \"droptail\"\n");
        assert!(!scenario_text(&classic, 1).contains("recovery"));
        assert!(
            !crate::ns3::args(&classic, 1, crate::ns3::Variant::Reference)
                .iter()
                .any(|x| x.starts_with("--recovery"))
        );
        let bad = parse("[[case]]\ntopology = \"dumbbell\"\nflows = 4\nrate = \"10Mbps\"\nrtt = \"50ms\"\nqueue = \"droptail\"\nrecovery = \"rack\"\n", "g.toml").expect_err("unknown");
        assert!(bad.to_string().contains("unknown recovery `rack`"), "{bad}");
    }

    #[test]
    fn a_red_ecn_dumbbell_with_loss_writes_the_queue_the_loss_and_ecn() {
        let c = one("[[case]]\ntopology = \"dumbbell\"\nflows = 2\nrate = \"10Mbps\"\nrtt = \"50ms\"\nqueue = { kind = \"red\", min_th = 5, max_th = 15, ecn = true }\nloss = 0.02\nduration = \"5s\"\n");
        let t = scenario_text(&c, 7);
        assert!(t.contains("seed = 7\n"), "{t}");
        assert!(t.contains("bottleneck = { rate = \"10Mbps\", delay = \"23000us\", queue = { kind = \"red\", limit = \"100pkt\", min_th = 5, max_th = 15,"), "{t}");
        // ns-3's RedQueueDisc: Wait on, and nothing but the hard limit while qlen <= 1.
        assert!(
            t.contains(
                "ecn = true, mean_pktsize = \"1500B\", wait = true, spare_short_queue = true }"
            ),
            "{t}"
        );
        assert!(t.contains("\nlimited_transmit = true\n"), "{t}");
        assert!(t.contains("loss = 0.02, reverse = { loss = 0 }"), "{t}");
        assert!(
            t.contains("[defaults.tcp]\ncc = \"newreno\"\ninitial_cwnd = 10\n"),
            "{t}"
        );
        assert!(t.contains("\necn = true\n"), "{t}");
        assert!(t.contains("cwnd = [\"f1\", \"f2\"]"), "{t}");
    }

    #[test]
    fn one_flow_alone_on_a_droptail_dumbbell_fills_the_link_and_is_measured() {
        let c = one("[[case]]\ntopology = \"dumbbell\"\nflows = 1\nrate = \"10Mbps\"\nrtt = \"20ms\"\nqueue = \"droptail\"\nduration = \"10s\"\n");
        let m = run(&c, 1).expect("runs");
        assert_eq!(m.source, "concord");
        assert_eq!(m.goodput_bps.len(), 1);
        assert!(m.utilisation > 0.9, "{m:?}");
        assert!(m.cwnd_mean > 10.0 && m.cwnd_max >= m.cwnd_mean, "{m:?}");
        // Goodput is payload: at most 1448 / 1500 of the link.
        assert!(m.total_goodput_bps() <= 10e6 * 1448.0 / 1500.0, "{m:?}");
    }

    #[test]
    fn a_parking_lot_lists_end_to_end_flows_then_each_hops_cross_flows() {
        let c = one("[[case]]\ntopology = \"parking_lot\"\nhops = 2\nflows = 1\nrate = \"10Mbps\"\nrtt = \"20ms\"\nqueue = \"droptail\"\nduration = \"3s\"\n");
        let t = scenario_text(&c, 1);
        assert!(t.contains("routers = 3\n"), "{t}");
        assert!(t.contains("cwnd = [\"m1\", \"c1-1\", \"c2-1\"]"), "{t}");
        let m = run(&c, 1).expect("runs");
        assert_eq!(m.goodput_bps.len(), 3);
    }
}
