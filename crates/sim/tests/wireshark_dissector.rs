//! The Wireshark dissector `wireshark/concord.lua` reads concord's messages as the Rust codecs
//! wrote them: the simulator writes pcap traces of the GCCA, CM, ECA and CP example scenarios,
//! the test decodes every frame with the Rust codecs and with `tshark -X lua_script:...`, and
//! every field tshark prints must be the value the codec decoded, and every frame that holds
//! one of concord's messages must be decoded as that protocol. More frames (CP headers and CM
//! responses of every shape, malformed messages) are built with the codecs and checked the
//! same way; what a Rust decoder refuses, the dissector must mark malformed.
//!
//! Needs `tshark` on the PATH. Without it the test prints a skip line and passes, unless
//! CONCORD_REQUIRE_TSHARK is set, in which case it fails.

mod common;

use common::load;
use concord_cc::cm::{FlowCount, FlowTag, ProbeMessage, Response};
use concord_cc::cp::header::{CpHeader, Echo, EndpointFeedback, Gap, LossReport, Probe};
use concord_cc::gcca::message::{decode_frame, GCCP_ETHERTYPE};
use concord_cc::time::{Duration, Instant};
use concord_cc::units::Rate;
use concord_cc::wire::{decode_ipv4_frame, EthernetHeader, Ipv4Header, Transport};
use concord_sim::trace::capture::{flow_ports, ADDRESSES_FILE, CM_PROBE_PORT};
use concord_sim::trace::eca_option::EcaOption;
use concord_sim::trace::pcap::PcapWriter;
use concord_sim::Simulator;
use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The dissector, from this crate's directory.
fn dissector() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../wireshark/concord.lua")
}

fn repo_file(rel: &str) -> String {
    let p = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .join(rel);
    std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

fn tshark_installed() -> bool {
    Command::new("tshark")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
}

/// Skips (or fails, under CONCORD_REQUIRE_TSHARK) when tshark is missing; true to go on.
fn have_tshark(test: &str) -> bool {
    if tshark_installed() {
        return true;
    }
    if std::env::var_os("CONCORD_REQUIRE_TSHARK").is_some() {
        panic!("tshark is required (CONCORD_REQUIRE_TSHARK is set) but not found: apt-get install -y tshark");
    }
    let _ = writeln!(
        std::io::stderr(),
        "SKIPPED {test}: tshark not found (apt-get install -y tshark to run this test)"
    );
    false
}

/// A directory removed when the test ends.
struct TempDir(PathBuf);

impl TempDir {
    fn new(name: &str) -> TempDir {
        let p =
            std::env::temp_dir().join(format!("concord-dissector-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&p);
        std::fs::create_dir_all(&p).expect("temp dir");
        TempDir(p)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Runs tshark with the dissector on `pcap`; returns stdout after checking the exit status and
/// that stderr holds nothing but the warning about running as root.
fn tshark(pcap: &Path, args: &[&str]) -> String {
    let output = Command::new("tshark")
        .arg("-X")
        .arg(format!("lua_script:{}", dissector().display()))
        .args(["-n", "-r"])
        .arg(pcap)
        .args(args)
        .output()
        .expect("tshark runs");
    let stderr = String::from_utf8_lossy(&output.stderr);
    let complaints: Vec<&str> = stderr
        .lines()
        .filter(|l| !l.starts_with("Running as user \"root\" and group \"root\""))
        .collect();
    assert!(output.status.success(), "tshark failed: {stderr}");
    assert!(complaints.is_empty(), "tshark complained: {complaints:?}");
    String::from_utf8(output.stdout).expect("UTF-8")
}

/// The fields compared, in tshark's `-T fields` order.
const FIELDS: [&str; 28] = [
    "gccp.vers",
    "gccp.len",
    "gccp.options",
    "gccp.code",
    "gccp.src",
    "gccp.dst",
    "gccp.srcport",
    "gccp.dstport",
    "cmprobe.version",
    "cmprobe.type",
    "cmprobe.length",
    "cmprobe.seq",
    "cmprobe.nonce",
    "cmprobe.room",
    "cmprobe.thisprobe",
    "cmprobe.lastprobe",
    "cmprobe.nflows",
    "cmprobe.flow.src_port",
    "cmprobe.flow.dst_port",
    "cmprobe.flow.flow_id",
    "cmprobe.flow.packets",
    "cmprobe.flow.ce_packets",
    "cmprobe.flow.bytes",
    "eca.load.raw",
    "eca.rload.raw",
    "cp.app",
    "cp.flow",
    "cp.length",
];

/// More CP fields, compared for the built CP frames, and the UDP port after the CP header.
const CP_FIELDS: [&str; 14] = [
    "cp.version",
    "cp.flags",
    "cp.seq",
    "cp.timestamp",
    "cp.echo.timestamp",
    "cp.echo.delay",
    "cp.report.through",
    "cp.report.gaps",
    "cp.report.gap.start",
    "cp.report.gap.len",
    "cp.endpoint.bandwidth",
    "cp.endpoint.loss",
    "cp.endpoint.rtt",
    "udp.dstport",
];

/// concord's protocols, as tshark names them in `frame.protocols`, and a field the Rust
/// codecs read in every message of that protocol. ECA's fields are an IPv4 option, decoded
/// inside the IPv4 tree, not a protocol layer: its fields (`eca.load.raw`, `eca.rload.raw`)
/// are compared in every frame, which asks the same.
const PROTOCOLS: [(&str, &str); 3] = [
    ("gccp", "gccp.vers"),
    ("cmprobe", "cmprobe.version"),
    ("cp", "cp.app"),
];

/// What the Rust codecs read in one frame: field name to tshark's rendering of the value
/// (several occurrences joined by commas, as `-E occurrence=a -E aggregator=,` prints them).
type Decoded = BTreeMap<&'static str, String>;

fn joined<T: ToString>(values: impl IntoIterator<Item = T>) -> String {
    values
        .into_iter()
        .map(|v| v.to_string())
        .collect::<Vec<_>>()
        .join(",")
}

/// The records of a pcap file (nanosecond, Ethernet), as (captured bytes, original length).
fn records(pcap: &[u8]) -> Vec<(Vec<u8>, usize)> {
    let mut out = Vec::new();
    let mut at = 24;
    while at + 16 <= pcap.len() {
        let word = |i: usize| {
            u32::from_le_bytes([
                pcap[at + i],
                pcap[at + i + 1],
                pcap[at + i + 2],
                pcap[at + i + 3],
            ]) as usize
        };
        let (incl, orig) = (word(8), word(12));
        out.push((pcap[at + 16..at + 16 + incl].to_vec(), orig));
        at += 16 + incl;
    }
    out
}

fn decode_probe_message(msg: &ProbeMessage, d: &mut Decoded) {
    let mut bytes = Vec::new();
    msg.encode(&mut bytes);
    d.insert("cmprobe.version", bytes[0].to_string());
    d.insert("cmprobe.type", bytes[1].to_string());
    d.insert("cmprobe.length", bytes.len().to_string());
    match msg {
        ProbeMessage::Probe(p) => {
            d.insert("cmprobe.seq", p.seq.to_string());
            d.insert("cmprobe.nonce", format!("{:#018x}", p.nonce));
            d.insert("cmprobe.room", p.room.to_string());
        }
        ProbeMessage::Response(r) => {
            d.insert("cmprobe.thisprobe", r.thisprobe.to_string());
            d.insert("cmprobe.lastprobe", r.lastprobe.to_string());
            d.insert("cmprobe.nonce", format!("{:#018x}", r.nonce));
            d.insert("cmprobe.nflows", r.flows.len().to_string());
            if !r.flows.is_empty() {
                let f = &r.flows;
                d.insert(
                    "cmprobe.flow.src_port",
                    joined(f.iter().map(|c| c.tag.src_port)),
                );
                d.insert(
                    "cmprobe.flow.dst_port",
                    joined(f.iter().map(|c| c.tag.dst_port)),
                );
                d.insert(
                    "cmprobe.flow.flow_id",
                    joined(f.iter().map(|c| c.tag.flow_id)),
                );
                d.insert("cmprobe.flow.packets", joined(f.iter().map(|c| c.packets)));
                d.insert(
                    "cmprobe.flow.ce_packets",
                    joined(f.iter().map(|c| c.ce_packets)),
                );
                d.insert("cmprobe.flow.bytes", joined(f.iter().map(|c| c.bytes)));
            }
        }
    }
}

fn decode_cp(h: &CpHeader, d: &mut Decoded) {
    let mut bytes = Vec::new();
    h.encode(&mut bytes).expect("valid header");
    d.insert("cp.version", "1".into());
    d.insert("cp.flags", format!("{:#04x}", h.flags()));
    d.insert("cp.length", bytes.len().to_string());
    d.insert("cp.app", h.app.to_string());
    d.insert("cp.flow", h.flow.to_string());
    if let Some(p) = h.probe {
        d.insert("cp.seq", p.seq.to_string());
        d.insert("cp.timestamp", p.timestamp.to_string());
    }
    if let Some(e) = h.feedback.echo {
        d.insert("cp.echo.timestamp", e.timestamp.to_string());
        d.insert("cp.echo.delay", e.delay.to_string());
    }
    if let Some(r) = &h.feedback.report {
        d.insert("cp.report.through", r.through.to_string());
        d.insert("cp.report.gaps", r.gaps.len().to_string());
        if !r.gaps.is_empty() {
            d.insert(
                "cp.report.gap.start",
                joined(r.gaps.iter().map(|g| g.start)),
            );
            d.insert("cp.report.gap.len", joined(r.gaps.iter().map(|g| g.len)));
        }
    }
    if h.endpoint.is_some() {
        // The codec's own bytes: bandwidth, loss rate and RTT are the last 12.
        let n = bytes.len();
        let word =
            |i: usize| u32::from_be_bytes([bytes[i], bytes[i + 1], bytes[i + 2], bytes[i + 3]]);
        d.insert("cp.endpoint.bandwidth", word(n - 12).to_string());
        d.insert("cp.endpoint.loss", word(n - 8).to_string());
        d.insert("cp.endpoint.rtt", word(n - 4).to_string());
    }
}

/// Decodes a frame the way concord's codecs do; `None` for a frame they refuse.
fn rust_decode(frame: &[u8]) -> Option<Decoded> {
    let mut d = Decoded::new();
    if frame.len() >= 14 && frame[12..14] == GCCP_ETHERTYPE.to_be_bytes() {
        let (_, msg) = decode_frame(frame).ok()?;
        d.insert("gccp.vers", "1".into());
        d.insert("gccp.len", msg.len_words().to_string());
        d.insert("gccp.options", msg.options().to_string());
        d.insert("gccp.code", msg.code.to_wire().to_string());
        if let Some(p) = msg.padding {
            d.insert("gccp.src", p.src_addr.to_string());
            d.insert("gccp.dst", p.dst_addr.to_string());
            d.insert("gccp.srcport", p.src_port.to_string());
            d.insert("gccp.dstport", p.dst_port.to_string());
        }
        return Some(d);
    }
    if frame.get(14 + 9) == Some(&253) {
        // A CP header between IPv4 and UDP.
        let (ip, ip_len) = Ipv4Header::decode(&frame[14..]).ok()?;
        let at = 14 + ip_len;
        let (h, used) = CpHeader::decode(&frame[at..14 + usize::from(ip.total_len)]).ok()?;
        decode_cp(&h, &mut d);
        if !h.control {
            let udp = at + used;
            d.insert(
                "udp.dstport",
                u16::from_be_bytes([frame[udp + 2], frame[udp + 3]]).to_string(),
            );
        }
        return Some(d);
    }
    let (_, ip, transport, payload_at) = decode_ipv4_frame(frame).ok()?;
    let ihl = usize::from(frame[14] & 0x0f) * 4;
    if let Some(opt) = EcaOption::find(&frame[14 + 20..14 + ihl]).ok()? {
        d.insert("eca.load.raw", format!("{:#010x}", opt.load.to_bits()));
        d.insert("eca.rload.raw", format!("{:#010x}", opt.rload.to_bits()));
    }
    if let Transport::Udp(u) = transport {
        d.insert("udp.dstport", u.dst_port.to_string());
        let end = 14 + usize::from(ip.total_len);
        if u.dst_port == CM_PROBE_PORT {
            let msg = ProbeMessage::decode(&frame[payload_at..end]).ok()?;
            decode_probe_message(&msg, &mut d);
        }
    }
    Some(d)
}

/// tshark's fields for every frame of `pcap`, one map per frame (empty fields left out).
fn tshark_fields(pcap: &Path, fields: &[&'static str]) -> Vec<Decoded> {
    let mut args = vec![
        "-T",
        "fields",
        "-E",
        "separator=/t",
        "-E",
        "occurrence=a",
        "-E",
        "aggregator=,",
    ];
    for f in fields {
        args.extend(["-e", f]);
    }
    tshark(pcap, &args)
        .lines()
        .map(|line| {
            fields
                .iter()
                .zip(line.split('\t'))
                .filter(|(_, v)| !v.is_empty())
                .map(|(f, v)| (*f, v.to_string()))
                .collect()
        })
        .collect()
}

/// The number of frames of `pcap` that `filter` matches.
fn count(pcap: &Path, filter: &str) -> usize {
    tshark(pcap, &["-Y", filter, "-T", "fields", "-e", "frame.number"])
        .lines()
        .count()
}

/// Checks every frame of `pcap`: the codecs accept it and tshark prints what they decoded, and
/// nothing is marked malformed. Returns how many frames each filter of `filters` matched.
fn check_pcap(pcap: &Path, fields: &[&'static str], filters: &[&str]) -> Vec<usize> {
    let bytes = std::fs::read(pcap).expect("trace");
    let frames = records(&bytes);
    let mut with_protocols = fields.to_vec();
    with_protocols.push("frame.protocols");
    let got = tshark_fields(pcap, &with_protocols);
    assert_eq!(
        got.len(),
        frames.len(),
        "{}: one line per frame",
        pcap.display()
    );
    for (i, ((frame, _), got)) in frames.iter().zip(&got).enumerate() {
        let mut got = got.clone();
        let protocols = got.remove("frame.protocols").unwrap_or_default();
        let want = rust_decode(frame)
            .unwrap_or_else(|| panic!("{} frame {}: the codecs refuse it", pcap.display(), i + 1));
        // Every frame that holds a concord message is decoded as its protocol, none other.
        for (protocol, field) in PROTOCOLS {
            assert_eq!(
                protocols.split(':').any(|p| p == protocol),
                want.contains_key(field),
                "{} frame {}: {protocol} in {protocols:?}",
                pcap.display(),
                i + 1
            );
        }
        let mut want = want;
        want.retain(|k, _| fields.contains(k));
        assert_eq!(got, want, "{} frame {}", pcap.display(), i + 1);
    }
    let malformed =
        "_ws.malformed || gccp.malformed || cmprobe.malformed || cp.malformed || eca.malformed";
    assert_eq!(
        count(pcap, malformed),
        0,
        "{}: malformed frames",
        pcap.display()
    );
    filters.iter().map(|f| count(pcap, f)).collect()
}

/// `scenario` (a file of scenarios/) cut to `duration`, with pcap traces of `channels` kept
/// whole, run into `dir`.
fn run_with_traces(scenario: &str, duration: &str, channels: &[&str], dir: &Path) {
    run_with_traces_and(scenario, duration, channels, dir, "");
}

/// As [`run_with_traces`], with `extra` lines added to `[record]`.
fn run_with_traces_and(scenario: &str, duration: &str, channels: &[&str], dir: &Path, extra: &str) {
    let mut text = String::new();
    for line in repo_file(scenario).lines() {
        if line.starts_with("duration = ") {
            text.push_str(&format!("duration = \"{duration}\"\n"));
        } else if line.starts_with("warmup = ") {
            text.push_str("warmup = \"0s\"\n");
        } else if line == "[record]" {
            let list = channels
                .iter()
                .map(|c| format!("\"{c}\""))
                .collect::<Vec<_>>()
                .join(", ");
            text.push_str(&format!(
                "[record]\npcap = [{list}]\npcap_snaplen = 65535\n{extra}"
            ));
        } else {
            text.push_str(line);
            text.push('\n');
        }
    }
    let sc = load(&text);
    let mut sim = Simulator::with_capture_dir(&sc, Some(dir)).expect("builds");
    sim.run().expect("writes the traces");
}

#[test]
fn gcca_traces_decode_as_the_codec_wrote_them() {
    if !have_tshark("gcca_traces_decode_as_the_codec_wrote_them") {
        return;
    }
    let dir = TempDir::new("gcca");
    let channels = ["r2->r1", "r1->t", "r1->u", "r1->r2"];
    run_with_traces("scenarios/gcca/multihop.toml", "3s", &channels, &dir.0);
    let mut gccp = 0;
    let mut padded = 0;
    for c in channels {
        let pcap = dir.0.join(format!("{}.pcap", c.replace("->", "-")));
        let n = check_pcap(
            &pcap,
            &FIELDS,
            &["gccp", "gccp.options == 1", "gccp.code == 1"],
        );
        gccp += n[0];
        padded += n[1];
        assert!(n[2] <= n[0]);
    }
    assert!(gccp > 0, "the trace holds GCCP messages");
    assert!(padded > 0, "edge router to host messages carry the padding");
}

#[test]
fn cm_traces_decode_as_the_codec_wrote_them() {
    if !have_tshark("cm_traces_decode_as_the_codec_wrote_them") {
        return;
    }
    let dir = TempDir::new("cm");
    run_with_traces(
        "scenarios/cm/probes.toml",
        "20s",
        &["r1->r2", "r2->r1"],
        &dir.0,
    );
    let forward = check_pcap(
        &dir.0.join("r1-r2.pcap"),
        &FIELDS,
        &["cmprobe.type == 1", "cmprobe.nonce", "udp.dstport == 49152"],
    );
    assert!(forward[0] > 10, "probes: {forward:?}");
    assert_eq!(forward[0], forward[1], "every probe has a nonce");
    assert!(
        forward[2] > 100,
        "data of flow 0 on port 49152: {forward:?}"
    );
    // Responses carry their per-flow counts, as the codec encoded them.
    let reverse = check_pcap(
        &dir.0.join("r2-r1.pcap"),
        &FIELDS,
        &[
            "cmprobe.type == 2",
            "cmprobe.nflows > 0",
            "cmprobe.flow.packets > 0",
            "cmprobe.not_captured",
        ],
    );
    assert!(reverse[0] > 5, "responses: {reverse:?}");
    assert!(
        reverse[1] > 5 && reverse[2] > 5,
        "responses with counts: {reverse:?}"
    );
    assert_eq!(reverse[3], 0, "every response is captured whole");
    // Who is who: s1 (node 2) sends flow 0 to d1 (node 3) from port 65535 to 49152.
    let addresses = std::fs::read_to_string(dir.0.join(ADDRESSES_FILE)).expect("addresses.csv");
    let (sport, dport) = flow_ports(0);
    assert_eq!((sport, dport), (65_535, 49_152));
    for line in [
        "kind,name,interface,ipv4,mac,protocol,src_ipv4,src_port,dst_ipv4,dst_port",
        "node,s1,s1->r1,10.0.0.2,02:00:00:00:00:02,,,,,",
        "node,r1,r1->r2,10.0.0.0,02:00:00:00:00:00,,,,,",
        "flow,0,,,,udp,10.0.0.2,65535,10.0.0.3,49152",
        "flow,cm-probe,,,,udp,10.0.0.2,4245,10.0.0.3,4245",
    ] {
        assert!(
            addresses.lines().any(|l| l == line),
            "no {line:?} in\n{addresses}"
        );
    }
}

#[test]
fn eca_traces_decode_as_the_codec_wrote_them() {
    if !have_tshark("eca_traces_decode_as_the_codec_wrote_them") {
        return;
    }
    let dir = TempDir::new("eca");
    run_with_traces(
        "scenarios/eca/parking-lot-eca.toml",
        "2s",
        &["r4->r5", "r5->r4"],
        &dir.0,
    );
    let fwd = check_pcap(&dir.0.join("r4-r5.pcap"), &FIELDS, &["eca", "eca.load > 0"]);
    let rev = check_pcap(
        &dir.0.join("r5-r4.pcap"),
        &FIELDS,
        &["eca", "eca.rload > 0"],
    );
    assert!(fwd[1] > 100, "LOAD stamped on data: {fwd:?}");
    assert!(rev[1] > 100, "RLOAD reflected on ACKs: {rev:?}");
}

#[test]
fn cp_traces_decode_as_the_codec_wrote_them() {
    if !have_tshark("cp_traces_decode_as_the_codec_wrote_them") {
        return;
    }
    let dir = TempDir::new("cp");
    run_with_traces(
        "scenarios/cp/single-flowshare.toml",
        "2s",
        &["r1->r2", "r2->r1"],
        &dir.0,
    );
    let mut all: Vec<&'static str> = FIELDS.to_vec();
    all.extend(CP_FIELDS);
    // Forward: the aggregate's C-UDP datagrams carry a probe in their CP header (stamped by
    // the local AP r1); the TFRC flows beside them carry none.
    let fwd = check_pcap(
        &dir.0.join("r1-r2.pcap"),
        &all,
        &["cp", "cp.flags.probe == 1", "udp && !cp"],
    );
    assert!(fwd[0] > 100, "CP headers: {fwd:?}");
    assert_eq!(
        fwd[0], fwd[1],
        "every aggregate datagram is probed: {fwd:?}"
    );
    assert!(fwd[2] > 100, "TFRC beside the aggregate: {fwd:?}");
    // Reverse: the remote AP r2 reports to r1 in control messages (flag C, no transport).
    let rev = check_pcap(
        &dir.0.join("r2-r1.pcap"),
        &all,
        &[
            "cp.flags.control == 1",
            "cp.report.through",
            "cp.echo.timestamp",
        ],
    );
    assert!(rev[0] > 10, "control messages: {rev:?}");
    assert!(rev[1] > 0 && rev[2] > 0, "reports and echoes: {rev:?}");
}

#[test]
fn pcapng_traces_name_their_interface_and_scenario_and_hold_the_same_frames() {
    if !have_tshark("pcapng_traces_name_their_interface_and_scenario_and_hold_the_same_frames") {
        return;
    }
    let (pcap, pcapng) = (TempDir::new("classic"), TempDir::new("ng"));
    let scenario = "scenarios/cm/probes.toml";
    run_with_traces(scenario, "3s", &["r1->r2"], &pcap.0);
    run_with_traces_and(
        scenario,
        "3s",
        &["r1->r2"],
        &pcapng.0,
        "pcap_format = \"pcapng\"\n",
    );
    let ng = pcapng.0.join("r1-r2.pcapng");
    assert!(!pcapng.0.join("r1-r2.pcap").exists());
    // The same frames at the same times, decoded the same.
    let fields = [
        "-T",
        "fields",
        "-e",
        "frame.time_epoch",
        "-e",
        "frame.len",
        "-e",
        "frame.cap_len",
        "-e",
        "ip.src",
        "-e",
        "udp.dstport",
        "-e",
        "cmprobe.nonce",
    ];
    let classic = tshark(&pcap.0.join("r1-r2.pcap"), &fields);
    assert!(classic.lines().count() > 100, "{classic}");
    assert_eq!(tshark(&ng, &fields), classic);
    // The interface is named after the channel; the section comment names the scenario.
    let names = tshark(
        &ng,
        &[
            "-T",
            "fields",
            "-e",
            "frame.interface_name",
            "-e",
            "frame.interface_description",
        ],
    );
    let first = names.lines().next().expect("a frame");
    // The scenario's bottleneck: 1 Mbps, 58 ms.
    assert_eq!(
        first,
        "r1->r2\tr1 (10.0.0.0, 02:00:00:00:00:00) to r2 (10.0.0.1, 02:00:00:00:00:01), \
         1Mbps, delay 58ms"
    );
    let info = Command::new("capinfos")
        .arg(&ng)
        .output()
        .expect("capinfos runs");
    assert!(info.status.success(), "capinfos: {info:?}");
    let info = String::from_utf8_lossy(&info.stdout);
    for want in [
        "File type:           Wireshark/... - pcapng",
        "Capture comment:     concord 0.1.0: scenario cm-probes, seed 1, channel r1->r2",
        "Name = r1->r2",
        "Time precision = nanoseconds (9)",
    ] {
        assert!(info.contains(want), "no {want:?} in\n{info}");
    }
}

/// Writes `frames` to a whole-frame capture at `path`.
fn write_pcap(path: &Path, frames: &[Vec<u8>]) {
    let file = std::fs::File::create(path).expect("capture");
    let mut w = PcapWriter::new(std::io::BufWriter::new(file), 65_535).expect("header");
    for (i, f) in frames.iter().enumerate() {
        w.write_frame(Instant::from_millis(i as u64), f, f.len() as u32)
            .expect("record");
    }
    w.flush().expect("flushed");
}

fn eth(ethertype: u16) -> Vec<u8> {
    let mut out = Vec::new();
    EthernetHeader {
        dst: [2, 0, 0, 0, 0, 2],
        src: [2, 0, 0, 0, 0, 1],
        ethertype,
    }
    .encode(&mut out);
    out
}

/// An IPv4 datagram of protocol `protocol` carrying `body`, in an Ethernet frame.
fn ipv4_frame(protocol: u8, body: &[u8]) -> Vec<u8> {
    let mut out = eth(0x0800);
    Ipv4Header {
        src: "10.0.0.1".parse().expect("address"),
        dst: "10.0.0.2".parse().expect("address"),
        dscp: 0,
        ecn: concord_cc::wire::Ecn::NotEct,
        id: 0,
        ttl: 64,
        protocol,
        total_len: (20 + body.len()) as u16,
    }
    .encode(&mut out);
    out.extend_from_slice(body);
    out
}

/// A UDP datagram between `port`s with `payload`, checksum 0 (none, RFC 768).
fn udp(src: u16, dst: u16, payload: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    out.extend_from_slice(&src.to_be_bytes());
    out.extend_from_slice(&dst.to_be_bytes());
    out.extend_from_slice(&((8 + payload.len()) as u16).to_be_bytes());
    out.extend_from_slice(&[0, 0]);
    out.extend_from_slice(payload);
    out
}

fn cp_frame(h: &CpHeader, payload: &[u8]) -> Vec<u8> {
    let mut body = Vec::new();
    h.encode(&mut body).expect("valid header");
    if !h.control {
        body.extend(udp(65_535, 49_153, payload));
    }
    ipv4_frame(253, &body)
}

fn cm_frame(bytes: &[u8]) -> Vec<u8> {
    ipv4_frame(17, &udp(CM_PROBE_PORT, CM_PROBE_PORT, bytes))
}

#[test]
fn built_cp_headers_and_cm_responses_decode_as_the_codecs_wrote_them() {
    if !have_tshark("built_cp_headers_and_cm_responses_decode_as_the_codecs_wrote_them") {
        return;
    }
    let dir = TempDir::new("built");
    let mut frames = Vec::new();
    // CP: a data packet with a probe, one with every part, and a control message.
    let mut probe = CpHeader::new(7, 3);
    probe.probe = Some(Probe {
        seq: 4_000_000_000,
        timestamp: 123_456,
    });
    frames.push(cp_frame(&probe, &[0; 100]));
    let mut full = probe.clone();
    full.feedback.echo = Some(Echo {
        timestamp: 99,
        delay: 1_500,
    });
    full.feedback.report = Some(LossReport {
        through: 77,
        gaps: vec![
            Gap { start: 70, len: 2 },
            Gap {
                start: 60,
                len: 65_535,
            },
        ],
    });
    full.endpoint = Some(EndpointFeedback {
        available_bandwidth: Rate::from_bps(12_345_678),
        loss_rate: 0.015,
        rtt: Duration::from_micros(101_000),
    });
    frames.push(cp_frame(&full, &[0; 10]));
    let mut control = CpHeader::new(1, 0);
    control.control = true;
    control.feedback.report = Some(LossReport {
        through: 5,
        gaps: vec![],
    });
    frames.push(cp_frame(&control, &[]));
    // CM: a probe, a response with no flow and one with two.
    let mut bytes = Vec::new();
    ProbeMessage::Probe(concord_cc::cm::Probe {
        seq: 1,
        nonce: u64::MAX - 5,
        room: 3,
    })
    .encode(&mut bytes);
    frames.push(cm_frame(&bytes));
    for flows in [0, 2] {
        let r = Response {
            thisprobe: 9,
            lastprobe: 8,
            nonce: 0x0123_4567_89ab_cdef,
            flows: (0..flows)
                .map(|i| FlowCount {
                    tag: FlowTag {
                        src_port: 65_535 - i,
                        dst_port: 49_152 + i,
                        flow_id: u32::from(i),
                    },
                    packets: 1 << 40,
                    ce_packets: u64::from(i),
                    bytes: u64::MAX,
                })
                .collect(),
        };
        bytes.clear();
        ProbeMessage::Response(r).encode(&mut bytes);
        frames.push(cm_frame(&bytes));
    }
    let pcap = dir.0.join("built.pcap");
    write_pcap(&pcap, &frames);
    let mut all: Vec<&'static str> = FIELDS.to_vec();
    all.extend(CP_FIELDS);
    let n = check_pcap(
        &pcap,
        &all,
        &["cp", "cp.flags.control == 1", "cmprobe.type == 2"],
    );
    assert_eq!(n, [3, 1, 2]);
}

#[test]
fn what_the_codecs_refuse_the_dissector_marks_malformed() {
    if !have_tshark("what_the_codecs_refuse_the_dissector_marks_malformed") {
        return;
    }
    let dir = TempDir::new("malformed");
    let gccp = |b: &[u8]| {
        let mut f = eth(GCCP_ETHERTYPE);
        f.extend_from_slice(b);
        f
    };
    let mut probe = Vec::new();
    ProbeMessage::Probe(concord_cc::cm::Probe {
        seq: 1,
        nonce: 2,
        room: 1,
    })
    .encode(&mut probe);
    let with = |i: usize, v: u8| {
        let mut b = probe.clone();
        b[i] = v;
        b
    };
    let mut trailing = probe.clone();
    trailing.push(0);
    let mut cp = Vec::new();
    CpHeader::new(1, 1).encode(&mut cp).expect("valid");
    let cp_with = |i: usize, v: u8| {
        let mut b = cp.clone();
        b[i] = v;
        b.extend(udp(1, 2, &[]));
        ipv4_frame(253, &b)
    };
    let frames = vec![
        gccp(&[2, 1, 0, 1]),          // VERS 2
        gccp(&[1, 1, 2, 1]),          // OPTIONS 2
        gccp(&[1, 1, 0, 7]),          // CODE 7
        gccp(&[1, 4, 0, 1]),          // LEN beyond the bytes present
        gccp(&[1, 1, 1, 1, 0, 0, 0]), // OPTIONS 1 with LEN 1
        gccp(&[1, 0, 0, 0]),          // LEN 0
        gccp(&[1]),                   // truncated
        cm_frame(&with(0, 9)),        // version 9
        cm_frame(&with(1, 3)),        // type 3
        cm_frame(&with(3, 17)),       // length field 17
        cm_frame(&trailing),          // a byte after the message
        cm_frame(&probe[..10]),       // truncated
        cm_frame(&with(19, 1)),       // reserved bytes not zero
        cm_frame(&with(30, 1)),       // padding not zero
        cp_with(0, 2),                // CP version 2
        cp_with(1, 0x20),             // a reserved flag
        cp_with(1, 0x10),             // control with nothing in it
        cp_with(3, 13),               // header length 13
    ];
    for (i, f) in frames.iter().enumerate() {
        assert!(
            rust_decode(f).is_none(),
            "frame {}: the codecs accept it",
            i + 1
        );
    }
    let pcap = dir.0.join("malformed.pcap");
    write_pcap(&pcap, &frames);
    let flagged = tshark(
        &pcap,
        &[
            "-Y",
            "gccp.malformed || cmprobe.malformed || cp.malformed",
            "-T",
            "fields",
            "-e",
            "frame.number",
        ],
    );
    let flagged: Vec<usize> = flagged
        .lines()
        .map(|l| l.parse().expect("a number"))
        .collect();
    assert_eq!(flagged, (1..=frames.len()).collect::<Vec<_>>());
}
