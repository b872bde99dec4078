//! The Congestion Manager in the simulator (Balakrishnan, Rahul and Seshan; RFC 3124): TCP/CM
//! flows share one macroflow and send only on grants, the layered audio server adapts its
//! encoding to its share, the probe protocol runs between the hosts (also under injected probe
//! loss), weights divide a macroflow, runs are deterministic, pcap traces carry the probes, and
//! the scenario keys are read and checked.

mod common;

use common::{load, reject, run};
use concord_cc::units::Rate;
use concord_sim::cm::{AckFeedback, AudioState, CmApp, HostCm};
use concord_sim::flow::Agent;
use concord_sim::scenario::{parse_str, ErrorKind};
use concord_sim::trace::capture::CM_PROBE_PORT;
use concord_sim::Simulator;
use std::path::PathBuf;

/// A two-pair dumbbell with a 1 Mbit/s bottleneck and a base RTT of 120 ms (2 x (50 + 5 + 5)
/// ms), the `head` lines after `duration` (a seed, a `[cm]` section), and `flows`.
fn dumbbell(duration: &str, warmup: &str, head: &str, flows: &str) -> String {
    format!(
        r#"duration = "{duration}"
{head}
[topology]
kind = "dumbbell"
pairs = 2
bottleneck = {{ rate = "1Mbps", delay = "50ms", queue = "20pkt" }}
access = {{ rate = "100Mbps", delay = "5ms" }}
{flows}
[record]
warmup = "{warmup}"
"#
    )
}

/// Goodput of flow `f` after the warm-up, in kbit/s.
fn goodput_kbps(sim: &Simulator, f: usize) -> f64 {
    let fl = &sim.flows()[f];
    let secs = (sim.end() - sim.warmup()).as_secs_f64();
    (fl.delivered - fl.delivered_at_warmup) as f64 * 8.0 / secs / 1e3
}

/// The CM of flow `f`'s source host.
fn host_cm(sim: &Simulator, f: usize) -> &HostCm {
    sim.cm().hosts[sim.flows()[f].src as usize]
        .as_ref()
        .expect("the source host runs a CM")
}

fn audio(sim: &Simulator, f: usize) -> &AudioState {
    match &sim.flows()[f].agent {
        Agent::CmApp(a) => match &a.app {
            CmApp::Audio(state) => state,
            other => panic!("not an audio flow: {other:?}"),
        },
        _ => panic!("flow {f} is not a CM application"),
    }
}

/// Four TCP flows `m1..m4` from s1 to d1, each with `cm` (empty: plain NewReno), and one plain
/// TCP flow `x` from s2 to d2 competing at the bottleneck.
fn four_and_one(cm: &str) -> String {
    format!(
        r#"
[[flow]]
kind = "tcp"
name = "m{{i}}"
count = 4
from = "s1"
to = "d1"
{cm}
[[flow]]
kind = "tcp"
name = "x"
from = "s2"
to = "d2"
start = "100ms"
"#
    )
}

#[test]
fn tcp_cm_flows_of_one_host_share_equally_and_together_take_less_than_as_many_tcp_flows() {
    let with_cm = run(&load(&dumbbell("60s", "10s", "", &four_and_one("cm = {}"))));
    let plain = run(&load(&dumbbell("60s", "10s", "", &four_and_one(""))));
    let cm: Vec<f64> = (0..4).map(|f| goodput_kbps(&with_cm, f)).collect();
    let mean = cm.iter().sum::<f64>() / 4.0;
    assert!(mean > 10.0, "the TCP/CM flows deliver: {cm:?}");
    // One macroflow, one grant per round to each flow: each within 10% of the mean.
    for g in &cm {
        assert!((g / mean - 1.0).abs() < 0.10, "{cm:?}");
    }
    // The macroflow competes with the outside flow as one congestion-controlled aggregate;
    // four independent NewReno flows take about four shares of five.
    let cm_total: f64 = cm.iter().sum();
    let plain_total: f64 = (0..4).map(|f| goodput_kbps(&plain, f)).sum();
    assert!(cm_total < plain_total, "{cm_total} vs {plain_total}");
    assert!(
        goodput_kbps(&with_cm, 4) > goodput_kbps(&plain, 4),
        "the outside flow gains: {} vs {}",
        goodput_kbps(&with_cm, 4),
        goodput_kbps(&plain, 4)
    );
    // The four flows are one macroflow on s1; the plain run has no CM.
    assert!(with_cm.cm().active() && !plain.cm().active());
    // A macroflow sample visits s1's CM alone, and nothing in the plain run.
    let s1 = with_cm.nodes().iter().position(|n| n.name == "s1");
    assert_eq!(with_cm.cm().senders, vec![s1.unwrap_or(usize::MAX) as u32]);
    assert!(plain.cm().senders.is_empty());
}

#[test]
fn a_tcp_cm_sender_sends_one_segment_per_grant() {
    let flows = r#"
[[flow]]
kind = "tcp"
from = "s1"
to = "d1"
cm = {}
[[flow]]
kind = "tcp"
from = "s2"
to = "d2"
"#;
    let sim = run(&load(&dumbbell("20s", "0s", "", flows)));
    let grants = host_cm(&sim, 0).cm.stats().grants;
    let Agent::Tcp(t) = &sim.flows()[0].agent else {
        panic!("a TCP flow");
    };
    let sent = t.sender.stats().segments_sent;
    let mss = t.sender.config().mss;
    assert!(grants > 100, "{grants}");
    // Each grant adds one MSS of credit and every segment of an infinite transfer is a full
    // MSS (retransmissions too), so segments sent plus whole MSSs of unused credit make the
    // grants. Credit stays unused only when the receiver's window closes between the request
    // and the grant (never here: rwnd is unbounded), so at most one grant may be left over.
    assert!(sent <= grants, "{sent} segments on {grants} grants");
    assert_eq!(sent + t.sender.credit() / mss, grants);
    assert!(grants - sent <= 1, "{sent} segments on {grants} grants");
    assert!(sim.flows()[0].delivered > 0);
    // The plain flow beside it is not a CM flow.
    assert_eq!(sim.cm().handles[1], None);
}

#[test]
fn a_finite_tcp_cm_transfer_completes_after_a_loss() {
    // 2500 bytes are one full segment (1448) and a short one (1052). The first is lost; the
    // short one leaves 396 bytes of its grant as credit, so after the timeout the
    // retransmission of the first segment needs another grant, which TCP/CM must ask for.
    let flows = r#"
[[flow]]
kind = "tcp"
from = "s1"
to = "d1"
bytes = 2500
cm = {}
drop_when = { segment = 1 }
"#;
    let sim = run(&load(&dumbbell("10s", "0s", "", flows)));
    let Agent::Tcp(t) = &sim.flows()[0].agent else {
        panic!("a TCP flow");
    };
    assert_eq!(t.injected_losses, 1);
    assert!(
        t.completed.is_some(),
        "stalled: {:?}, credit {}, delivered {}",
        t.sender.stats(),
        t.sender.credit(),
        sim.flows()[0].delivered
    );
    assert_eq!(sim.flows()[0].delivered, 2500);
}

/// An audio flow from s1 to d1 and a TCP flow from s2 to d2 between 10 s and 20 s.
const AUDIO_AND_TCP: &str = r#"
[[flow]]
kind = "audio"
name = "a"
from = "s1"
to = "d1"
[[flow]]
kind = "tcp"
name = "x"
from = "s2"
to = "d2"
start = "10s"
stop = "20s"
"#;

#[test]
fn an_audio_flow_changes_encoding_on_probe_feedback() {
    let sim = run(&load(&dumbbell("30s", "1s", "", AUDIO_AND_TCP)));
    let a = audio(&sim, 0);
    let defaults = [10, 20, 40, 80, 160, 320].map(Rate::from_kbps);
    assert_eq!(a.encodings, defaults);
    assert!(!a.changes.is_empty());
    assert!(
        a.changes.iter().all(|c| defaults.contains(&c.rate)),
        "{:?}",
        a.changes
    );
    // It starts on the lowest encoding and moves as its share grows.
    let mut rates: Vec<Rate> = a.changes.iter().map(|c| c.rate).collect();
    rates.dedup();
    assert!(rates.len() >= 2, "never changed encoding: {rates:?}");
    assert!(a
        .changes
        .iter()
        .all(|c| c.rate <= c.share || c.rate == defaults[0]));
    // The probe protocol ran: d1's responder answered, s1's CM took the responses.
    let responder = sim.cm().responders[sim.flows()[0].dst as usize]
        .as_ref()
        .expect("d1 answers probes");
    let answered = responder.stats().probes_answered;
    let stats = host_cm(&sim, 0).cm.stats();
    assert!(answered > 100, "{answered}");
    assert!(stats.probes_sent >= answered, "{stats:?}");
    assert!(stats.responses_accepted > 100, "{stats:?}");
    // Without injected loss and on an uncongested reverse path, every response but those in
    // flight at the end arrives and is taken.
    assert!(answered - stats.responses_accepted <= 2, "{stats:?}");
    assert_eq!(sim.cm().responses_delivered, stats.responses_accepted);
    // The audio flow asks for no grants: it sends at its encoding and reports with notify.
    assert_eq!(stats.grants, 0);
    assert!(goodput_kbps(&sim, 0) > 100.0, "{}", goodput_kbps(&sim, 0));
}

#[test]
fn injected_probe_loss_takes_its_fraction_of_probes_and_responses() {
    let sim = run(&load(&dumbbell(
        "30s",
        "1s",
        "[cm]\nprobe_loss = 0.3",
        AUDIO_AND_TCP,
    )));
    let stats = host_cm(&sim, 0).cm.stats();
    let answered = sim.cm().responders[sim.flows()[0].dst as usize]
        .as_ref()
        .expect("d1 answers probes")
        .stats()
        .probes_answered;
    let (probes_lost, responses_lost) = (sim.cm().probes_lost, sim.cm().responses_lost);
    assert!(probes_lost > 0 && responses_lost > 0);
    // Each loss is a Bernoulli(0.3) draw: with about 400 probes and 280 responses one standard
    // deviation is under 0.03, so 0.3 +- 0.08 holds by more than 2.5 of them.
    let probe_fraction = probes_lost as f64 / stats.probes_sent as f64;
    let response_fraction = responses_lost as f64 / answered as f64;
    assert!(stats.probes_sent > 300, "{stats:?}");
    assert!((probe_fraction - 0.3).abs() < 0.08, "{probe_fraction}");
    assert!(
        (response_fraction - 0.3).abs() < 0.08,
        "{response_fraction}"
    );
    // What is not lost gets through: probes lost at random + dropped by the full bottleneck
    // queue + answered + in flight = sent. A probe takes at most 60 ms of propagation plus a
    // full 20-packet queue (160 ms at 1 Mbit/s) forward, and probes leave every srtt / 2 >=
    // 60 ms: at most 4 are in flight at the end.
    let dropped = sim.cm().probes_dropped;
    assert!(dropped < stats.probes_sent / 10, "{dropped} probes dropped");
    let in_flight = stats.probes_sent - probes_lost - dropped - answered;
    assert!(in_flight <= 4, "{in_flight} in flight: {stats:?}");
    assert_eq!(stats.responses_accepted, sim.cm().responses_delivered);
    // The reverse path is uncongested: no response is dropped there.
    assert_eq!(sim.cm().responses_dropped, 0);
    assert!(
        answered - responses_lost - stats.responses_accepted <= 2,
        "{stats:?}"
    );
    // The flow still adapts and delivers.
    assert!(goodput_kbps(&sim, 0) > 100.0, "{}", goodput_kbps(&sim, 0));
}

/// Three `cmudp` flows from s1 to d1 with weights 1, 2 and 3.
const WEIGHTED: &str = r#"
[[flow]]
kind = "cmudp"
from = "s1"
to = "d1"
cm = { weight = 1 }
[[flow]]
kind = "cmudp"
from = "s1"
to = "d1"
cm = { weight = 2 }
[[flow]]
kind = "cmudp"
from = "s1"
to = "d1"
cm = { weight = 3 }
"#;

#[test]
fn cm_weights_divide_a_macroflow_among_cmudp_flows() {
    let sim = run(&load(&dumbbell("20s", "5s", "", WEIGHTED)));
    let g: Vec<f64> = (0..3).map(|f| goodput_kbps(&sim, f)).collect();
    assert!(g[0] > 50.0, "{g:?}");
    assert!((g[1] / g[0] / 2.0 - 1.0).abs() < 0.15, "{g:?}");
    assert!((g[2] / g[0] / 3.0 - 1.0).abs() < 0.15, "{g:?}");
}

#[test]
fn cm_weights_set_the_share_an_audio_flow_is_told() {
    let flows = r#"
[[flow]]
kind = "audio"
from = "s1"
to = "d1"
cm = { weight = 1 }
[[flow]]
kind = "audio"
from = "s1"
to = "d1"
cm = { weight = 3 }
"#;
    let sim = run(&load(&dumbbell("10s", "0s", "", flows)));
    let (a, b) = (audio(&sim, 0), audio(&sim, 1));
    // Both are told their share of the same macroflow rate on each change_rate, at the same
    // instant: 1/4 and 3/4 of it.
    let last_a = a.changes.last().expect("flow 1 was told a rate");
    let last_b = b
        .changes
        .iter()
        .rev()
        .find(|c| c.at == last_a.at)
        .expect("both flows are told at once");
    let ratio = last_b.share.bps() as f64 / last_a.share.bps() as f64;
    assert!((ratio - 3.0).abs() < 0.01, "{last_a:?} {last_b:?}");
}

/// A `cmudp` flow of 300 packets with per-packet ACKs over a path that loses 2% of the data
/// packets at random on the wire (its queue never overflows); ACKs are never lost.
fn acked_transfer(seed: u64) -> String {
    format!(
        r#"duration = "8s"
seed = {seed}
[topology]
kind = "dumbbell"
pairs = 1
bottleneck = {{ rate = "1Mbps", delay = "50ms", queue = "1000pkt", loss = "2%", loss_applies_to = "data", reverse = {{ loss = "0" }} }}
access = {{ rate = "100Mbps", delay = "5ms" }}
[[flow]]
kind = "cmudp"
from = "s1"
to = "d1"
bytes = "300KB"
feedback = "ack"
"#
    )
}

/// The ACK account of `cmudp` flow `f` with `feedback = "ack"`.
fn ack_account(sim: &Simulator, f: usize) -> (AckFeedback, u64, u64) {
    match &sim.flows()[f].agent {
        Agent::CmApp(a) => (a.acks.expect("the flow takes ACKs"), a.sent, a.received),
        _ => panic!("flow {f} is not a CM application"),
    }
}

#[test]
fn a_cmudp_flow_with_acks_accounts_for_every_packet_and_sends_no_probe() {
    let sim = run(&load(&acked_transfer(3)));
    let (k, sent, received) = ack_account(&sim, 0);
    let wire = sim.channels()[sim.bottleneck() as usize]
        .stats()
        .wire_losses;
    // Every packet went out well before the end (the CM's rate grew on the ACKs' feedback:
    // without it, aging would hold the flow to one packet per second), and every ACK came back.
    assert_eq!(sent, 300);
    assert!(wire > 0, "the path lost nothing");
    assert_eq!(received, sent - wire);
    assert_eq!(k.acks, received);
    assert_eq!(k.received, received);
    // Each loss below the newest packet acknowledged is known; only those after it are not.
    assert_eq!(k.lost, k.through - k.received);
    assert_eq!(k.lost + (sent - k.through), wire);
    // No probe protocol: no probe left s1, and d1 runs no responder.
    let stats = host_cm(&sim, 0).cm.stats();
    assert_eq!(stats.probes_sent, 0);
    assert_eq!(stats.responses_accepted, 0);
    assert!(sim.cm().responders[sim.flows()[0].dst as usize].is_none());
    assert!(stats.grants >= 300, "{stats:?}");
    // The same seed gives the same account.
    let again = run(&load(&acked_transfer(3)));
    assert_eq!(ack_account(&again, 0), (k, sent, received));
}

#[test]
fn without_its_acks_a_cmudp_flow_ages_to_a_trickle() {
    // The same transfer over probe feedback with every probe and response lost (nearly: below
    // 1): the CM hears nothing, ages its rate down, and sends far fewer packets in 8 s than
    // the ACK-fed flow sends in all.
    let text = acked_transfer(3)
        .replace("feedback = \"ack\"\n", "")
        .replace("seed = 3\n", "seed = 3\n[cm]\nprobe_loss = 0.999\n");
    let sim = run(&load(&text));
    let sent = match &sim.flows()[0].agent {
        Agent::CmApp(a) => a.sent,
        _ => panic!("flow 0 is not a CM application"),
    };
    assert!(sent < 100, "{sent}");
}

/// A CM scenario whose outcome depends on the seed: jittered starts and random probe loss.
fn seeded(seed: u64) -> String {
    let flows = r#"
[[flow]]
kind = "tcp"
name = "t{i}"
count = 2
from = "s1"
to = "d1"
start_jitter = "500ms"
cm = {}
[[flow]]
kind = "audio"
from = "s2"
to = "d2"
start_jitter = "500ms"
"#;
    dumbbell(
        "10s",
        "0s",
        &format!("seed = {seed}\n[cm]\nprobe_loss = 0.2"),
        flows,
    )
}

fn delivered(sim: &Simulator) -> Vec<u64> {
    sim.flows().iter().map(|f| f.delivered).collect()
}

#[test]
fn a_cm_run_is_deterministic_per_seed() {
    let a = run(&load(&seeded(7)));
    let b = run(&load(&seeded(7)));
    let c = run(&load(&seeded(8)));
    assert!(delivered(&a).iter().all(|&d| d > 0), "{:?}", delivered(&a));
    assert_eq!(delivered(&a), delivered(&b));
    assert_eq!(a.cm().probes_lost, b.cm().probes_lost);
    assert_eq!(
        audio(&a, 2).changes.len(),
        audio(&b, 2).changes.len(),
        "the same encoding changes"
    );
    assert_ne!(delivered(&a), delivered(&c));
}

/// A valid two-pair dumbbell, six lines long: cases append to it from line 7 on.
const BASE: &str = r#"duration = "10s"
[topology]
kind = "dumbbell"
pairs = 2
bottleneck = { rate = "1Mbps", delay = "50ms" }
access = { rate = "100Mbps", delay = "5ms" }
"#;

#[test]
fn bad_cm_keys_are_refused_at_their_line_with_a_fix() {
    assert!(parse_str(BASE, None).is_ok());
    let tcp = "[[flow]]\nkind = \"tcp\"\nfrom = \"s1\"\nto = \"d1\"\n";
    // (tail, kind, line, in the message, in the fix)
    let cases: [(String, ErrorKind, usize, &str, &str); 15] = [
        (
            "[[flow]]\nkind = \"cmudp\"\nfrom = \"s1\"\nto = \"d1\"\nfeedback = \"acks\"\n"
                .to_string(),
            ErrorKind::BadValue,
            11,
            "unknown feedback `acks`",
            "did you mean `ack`?",
        ),
        (
            "[[flow]]\nkind = \"audio\"\nfrom = \"s1\"\nto = \"d1\"\nfeedback = \"ack\"\n"
                .to_string(),
            ErrorKind::UnknownKey,
            11,
            "`feedback` does not apply to a audio flow",
            "`feedback` is for cmudp flows",
        ),
        (
            format!("{tcp}bytes = \"1MB\"\ncm = {{ representations = [\"1KB\", \"2KB\"] }}\n"),
            ErrorKind::Inconsistent,
            12,
            "sends the one it picks, not `bytes`",
            "remove `bytes`",
        ),
        (
            format!("{tcp}cm = {{ latency = \"2s\" }}\n"),
            ErrorKind::Inconsistent,
            11,
            "`latency` without `representations`",
            "give `representations` too",
        ),
        (
            format!("{tcp}cm = {{ representations = [\"64KB\", \"16KB\"] }}\n"),
            ErrorKind::BadValue,
            11,
            "is not larger than the one before it",
            "ascending order",
        ),
        (
            "[[flow]]\nkind = \"cmudp\"\nfrom = \"s1\"\nto = \"d1\"\ncm = { representations = [\"1KB\"] }\n"
                .to_string(),
            ErrorKind::BadValue,
            11,
            "only a TCP/CM flow (a Web server's object) picks a representation",
            "remove `representations`",
        ),
        (
            "[[flow]]\nkind = \"cbr\"\nfrom = \"s1\"\nto = \"d1\"\nrate = \"1Mbps\"\ncm = {}\n"
                .to_string(),
            ErrorKind::BadValue,
            12,
            "only tcp, audio and cmudp flows run over the Congestion Manager",
            "remove `cm`",
        ),
        (
            format!("{tcp}cm = {{ weight = 0 }}\n"),
            ErrorKind::BadValue,
            11,
            "weight = 0 is outside 0.001 to 1000000",
            "`weight = 2`",
        ),
        (
            "[cm]\naging = \"sometimes\"\n".to_string(),
            ErrorKind::BadValue,
            8,
            "unknown aging `sometimes`",
            "\"min_rtt\"",
        ),
        (
            "[cm]\nsegregation = true\nprobe_loss = 1\n".to_string(),
            ErrorKind::BadValue,
            9,
            "probe_loss = 1 loses every probe and response",
            "below 1",
        ),
        (
            "[cm]\nprobes_per_rtt = 0\n".to_string(),
            ErrorKind::BadValue,
            8,
            "`probes_per_rtt` = 0 is too small",
            "from 0.001 to 1000",
        ),
        (
            "[cm]\nprobes_per_rtt = \"2\"\n".to_string(),
            ErrorKind::WrongType,
            8,
            "`probes_per_rtt`",
            "0.1",
        ),
        (
            "[cm]\naging = \"off\"\nprobe_per_rtt = 4\n".to_string(),
            ErrorKind::UnknownKey,
            9,
            "unknown key `probe_per_rtt` in [cm]",
            "did you mean `probes_per_rtt`?",
        ),
        (
            "[[flow]]\nkind = \"audio\"\nfrom = \"s1\"\nto = \"d1\"\nencodings = [\"20kbps\", \"10kbps\"]\n"
                .to_string(),
            ErrorKind::BadValue,
            11,
            "is not above the one before it",
            "ascending",
        ),
        (
            format!("{tcp}cm = {{ weight = 2 }}\neca = {{ weight = 1 }}\n"),
            ErrorKind::Inconsistent,
            12,
            "both ECA and the Congestion Manager",
            "remove `eca` or `cm`",
        ),
    ];
    for (tail, kind, line, in_message, in_fix) in cases {
        let e = reject(&format!("{BASE}{tail}"));
        let shown = e.to_string();
        eprintln!("{shown}");
        assert_eq!(e.kind, kind, "{shown}");
        assert_eq!(e.line, line, "{shown}");
        assert!(
            shown.starts_with(&format!("scenarios/x.toml:{line}:")),
            "{shown}"
        );
        assert!(
            shown.contains(in_message),
            "message lacks {in_message:?}: {shown}"
        );
        assert!(shown.contains("; fix: "), "{shown}");
        let fix = shown.split("; fix: ").nth(1).unwrap_or_default();
        assert!(fix.contains(in_fix), "fix lacks {in_fix:?}: {shown}");
    }
}

fn temp(name: &str) -> PathBuf {
    std::env::temp_dir().join(format!("concord-cm-{}-{name}", std::process::id()))
}

/// The UDP destination ports of the IPv4 frames of a pcap file (little-endian, Ethernet).
fn udp_dst_ports(pcap: &[u8]) -> Vec<u16> {
    let mut ports = Vec::new();
    let mut at = 24;
    while at + 16 <= pcap.len() {
        let incl = u32::from_le_bytes([pcap[at + 8], pcap[at + 9], pcap[at + 10], pcap[at + 11]]);
        let frame = &pcap[at + 16..(at + 16 + incl as usize).min(pcap.len())];
        // Ethernet (14 bytes), then IPv4: protocol at 9, header length in the low nibble.
        if frame.len() >= 14 + 20 + 4 && frame[12..14] == [0x08, 0x00] && frame[14 + 9] == 17 {
            let udp = 14 + usize::from(frame[14] & 0x0f) * 4;
            ports.push(u16::from_be_bytes([frame[udp + 2], frame[udp + 3]]));
        }
        at += 16 + incl as usize;
    }
    ports
}

#[test]
fn a_pcap_of_the_bottleneck_carries_cm_probes_and_responses() {
    let dir = temp("pcap");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("temp dir");
    let flows = r#"
[[flow]]
kind = "audio"
from = "s1"
to = "d1"
"#;
    let text = dumbbell("5s", "0s", "", flows)
        .replace("[record]\n", "[record]\npcap = [\"r1->r2\", \"r2->r1\"]\n");
    let sc = load(&text);
    let mut sim = Simulator::with_capture_dir(&sc, Some(&dir)).expect("builds");
    sim.run().expect("writes the traces");
    let forward = std::fs::read(dir.join("r1-r2.pcap")).expect("r1->r2 trace");
    let reverse = std::fs::read(dir.join("r2-r1.pcap")).expect("r2->r1 trace");
    let _ = std::fs::remove_dir_all(&dir);
    assert!(forward.len() > 24 && reverse.len() > 24);
    // Probes go s1 -> d1 through r1 -> r2 beside the audio data, responses come back.
    let probes = udp_dst_ports(&forward)
        .iter()
        .filter(|&&p| p == CM_PROBE_PORT)
        .count() as u64;
    let responses = udp_dst_ports(&reverse)
        .iter()
        .filter(|&&p| p == CM_PROBE_PORT)
        .count() as u64;
    let stats = host_cm(&sim, 0).cm.stats();
    assert!(probes > 10, "{probes}");
    assert!(probes <= stats.probes_sent && stats.probes_sent - probes <= 2);
    assert!(responses > 10 && responses <= probes, "{responses}");
    assert!(udp_dst_ports(&forward).len() as u64 > probes, "audio data");
}
