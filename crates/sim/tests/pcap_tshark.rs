//! Checks that Wireshark reads concord's pcap traces as we meant them: a capture of TCP and UDP
//! frames built by `encode_ipv4_frame` is decoded by `tshark` with checksum validation on, and
//! the fields it prints must be the ones we wrote.
//!
//! Needs `tshark` on the PATH. Without it the test prints a skip line and passes, unless
//! CONCORD_REQUIRE_TSHARK is set, in which case it fails.

use concord_cc::time::Instant;
use concord_cc::wire::{
    encode_ipv4_frame, Ecn, EthernetHeader, Ipv4Header, TcpFlags, TcpHeader, Transport, UdpHeader,
};
use concord_sim::trace::pcap::PcapWriter;
use std::io::{BufWriter, Write};
use std::net::Ipv4Addr;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicU32, Ordering};

/// The records' snap length, in bytes: full-size frames are cut, small ones kept whole.
const SNAPLEN: u32 = 128;
/// A snap length that keeps every frame whole.
const WHOLE: u32 = 65_535;

/// One frame of the capture and the tshark fields it must decode to.
struct Case {
    ts: Instant,
    ip: Ipv4Header,
    transport: Transport,
    payload_len: usize,
}

fn ip(src: [u8; 4], dst: [u8; 4], ecn: Ecn, id: u16) -> Ipv4Header {
    Ipv4Header {
        src: Ipv4Addr::from(src),
        dst: Ipv4Addr::from(dst),
        dscp: 0,
        ecn,
        id,
        ttl: 64,
        protocol: 0,
        total_len: 0,
    }
}

fn tcp(seq: u32, ack: u32, flags: TcpFlags, timestamps: Option<(u32, u32)>) -> Transport {
    Transport::Tcp(TcpHeader {
        src_port: 40_001,
        dst_port: 5_001,
        seq,
        ack,
        flags,
        window: 65_535,
        timestamps,
        sack: Default::default(),
    })
}

fn cases() -> Vec<Case> {
    let a = [10, 0, 0, 1];
    let b = [10, 0, 1, 2];
    vec![
        // ECN setup SYN (RFC 3168 section 6.1.1): ECE and CWR, not ECT.
        Case {
            ts: Instant::from_nanos(1_000),
            ip: ip(a, b, Ecn::NotEct, 1),
            transport: tcp(
                0xffff_f000,
                0,
                TcpFlags::SYN | TcpFlags::ECE | TcpFlags::CWR,
                Some((100, 0)),
            ),
            payload_len: 0,
        },
        // A small data segment, ECT(0), kept whole so its checksum can be checked.
        Case {
            ts: Instant::from_micros(20_500),
            ip: ip(a, b, Ecn::Ect0, 2),
            transport: tcp(
                0xffff_f001,
                0x8000_0001,
                TcpFlags::ACK | TcpFlags::PSH,
                Some((120, 7)),
            ),
            payload_len: 61,
        },
        // A full-size segment marked CE by a router, cut by the snap length.
        Case {
            ts: Instant::from_nanos(1_000_000_123),
            ip: ip(a, b, Ecn::Ce, 3),
            transport: tcp(
                0xffff_f03e,
                0x8000_0001,
                TcpFlags::ACK | TcpFlags::CWR,
                Some((u32::MAX, 1)),
            ),
            payload_len: 1448,
        },
        // The receiver echoes the mark (ECE), without timestamps.
        Case {
            ts: Instant::from_secs(2),
            ip: ip(b, a, Ecn::NotEct, 4),
            transport: Transport::Tcp(TcpHeader {
                src_port: 5_001,
                dst_port: 40_001,
                seq: 0x8000_0001,
                ack: 0xffff_f5e6,
                flags: TcpFlags::ACK | TcpFlags::ECE,
                window: 1_024,
                timestamps: None,
                sack: Default::default(),
            }),
            payload_len: 0,
        },
        // UDP, DSCP 46 (EF) with ECT(1), kept whole.
        Case {
            ts: Instant::from_secs(3),
            ip: Ipv4Header {
                dscp: 46,
                ..ip(a, b, Ecn::Ect1, 5)
            },
            transport: Transport::Udp(UdpHeader {
                src_port: 5_004,
                dst_port: 5_005,
                len: 0,
            }),
            payload_len: 21,
        },
        // UDP, full size, cut.
        Case {
            ts: Instant::from_nanos(3_000_000_001),
            ip: ip(b, a, Ecn::NotEct, 6),
            transport: Transport::Udp(UdpHeader {
                src_port: 9,
                dst_port: 65_535,
                len: 0,
            }),
            payload_len: 1472,
        },
    ]
}

/// The capture file, removed when the test ends, passing or failing.
struct TempFile(PathBuf);

impl TempFile {
    fn new() -> TempFile {
        static NEXT: AtomicU32 = AtomicU32::new(0);
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        TempFile(std::env::temp_dir().join(format!(
            "concord-pcap-tshark-{}-{n}.pcap",
            std::process::id()
        )))
    }
}

impl Drop for TempFile {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

fn write_capture(path: &Path, cases: &[Case], snaplen: u32) {
    let eth = EthernetHeader {
        dst: [0x02, 0, 0, 0, 0, 0x02],
        src: [0x02, 0, 0, 0, 0, 0x01],
        ethertype: 0,
    };
    let file = std::fs::File::create(path).expect("temp dir is writable");
    let mut pcap = PcapWriter::new(BufWriter::new(file), snaplen).expect("global header written");
    let mut frame = Vec::new();
    for case in cases {
        frame.clear();
        let orig_len = encode_ipv4_frame(
            &mut frame,
            &eth,
            &case.ip,
            case.transport,
            case.payload_len,
            snaplen as usize,
        )
        .expect("frame fits IPv4");
        pcap.write_frame(case.ts, &frame, orig_len as u32)
            .expect("record written");
    }
    pcap.flush().expect("capture flushed");
}

/// Runs tshark on `path` with every checksum check on, and returns its standard output after
/// checking its exit status and that it wrote nothing to standard error.
fn tshark(path: &Path, extra: &[&str]) -> String {
    let output = Command::new("tshark")
        .args(["-n", "-r"])
        .arg(path)
        .args([
            "-o",
            "ip.check_checksum:TRUE",
            "-o",
            "tcp.check_checksum:TRUE",
            "-o",
            "udp.check_checksum:TRUE",
        ])
        .args(extra)
        .output()
        .expect("tshark runs");
    let stderr = String::from_utf8_lossy(&output.stderr);
    // tshark warns on every run as root; that is about the account, not the capture.
    let complaints: Vec<&str> = stderr
        .lines()
        .filter(|line| !line.starts_with("Running as user \"root\" and group \"root\""))
        .collect();
    assert!(
        output.status.success(),
        "tshark failed ({}): {stderr}",
        output.status
    );
    assert!(complaints.is_empty(), "tshark complained: {complaints:?}");
    String::from_utf8(output.stdout).expect("tshark prints UTF-8")
}

fn tshark_installed() -> bool {
    Command::new("tshark")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
}

/// The fields tshark prints for each frame, in this order.
const FIELDS: [&str; 23] = [
    "frame.time_epoch",
    "frame.len",
    "frame.cap_len",
    "ip.src",
    "ip.dst",
    "ip.dsfield.dscp",
    "ip.dsfield.ecn",
    "ip.id",
    "ip.len",
    "ip.flags.df",
    "ip.checksum.status",
    "tcp.srcport",
    "tcp.dstport",
    "tcp.seq_raw",
    "tcp.ack_raw",
    "tcp.flags",
    "tcp.window_size_value",
    "tcp.options.timestamp.tsval",
    "tcp.options.timestamp.tsecr",
    "tcp.checksum.status",
    "udp.srcport",
    "udp.length",
    "udp.checksum.status",
];

/// What tshark should print for `case` in a capture of snap length `snaplen`, one entry per
/// field of [`FIELDS`]. Checksum status 1 is "good"; 2 is "unverified", which is all tshark can
/// say of a transport checksum when the payload was cut by the snap length.
fn expected_fields(case: &Case, snaplen: u32) -> Vec<String> {
    let transport_len = case.transport.header_len() + case.payload_len;
    let frame_len = 14 + 20 + transport_len;
    let whole = frame_len <= snaplen as usize;
    let transport_status = if whole { "1" } else { "2" };
    let nanos = case.ts.as_nanos();
    let mut fields = vec![
        format!("{}.{:09}", nanos / 1_000_000_000, nanos % 1_000_000_000),
        frame_len.to_string(),
        frame_len.min(snaplen as usize).to_string(),
        case.ip.src.to_string(),
        case.ip.dst.to_string(),
        case.ip.dscp.to_string(),
        (case.ip.ecn as u8).to_string(),
        format!("0x{:04x}", case.ip.id),
        (20 + transport_len).to_string(),
        "1".to_string(),
        "1".to_string(),
    ];
    let none = || String::new();
    match case.transport {
        Transport::Tcp(t) => {
            fields.extend([
                t.src_port.to_string(),
                t.dst_port.to_string(),
                t.seq.to_string(),
                t.ack.to_string(),
                format!("0x{:04x}", t.flags.0),
                t.window.to_string(),
                t.timestamps
                    .map_or_else(none, |(tsval, _)| tsval.to_string()),
                t.timestamps
                    .map_or_else(none, |(_, tsecr)| tsecr.to_string()),
                transport_status.to_string(),
            ]);
            fields.extend([none(), none(), none()]);
        }
        Transport::Udp(u) => {
            fields.extend(std::iter::repeat_with(none).take(9));
            fields.extend([
                u.src_port.to_string(),
                transport_len.to_string(),
                transport_status.to_string(),
            ]);
        }
        Transport::Other => unreachable!("the capture holds only TCP and UDP"),
    }
    fields
}

#[test]
fn tshark_decodes_our_frames_as_written_with_good_checksums() {
    if !tshark_installed() {
        if std::env::var_os("CONCORD_REQUIRE_TSHARK").is_some() {
            panic!("tshark is required (CONCORD_REQUIRE_TSHARK is set) but not found: apt-get install -y tshark");
        }
        // Straight to stderr, past the test harness's capture of eprintln!, so the skip shows.
        let _ = writeln!(
            std::io::stderr(),
            "SKIPPED pcap_tshark: tshark not found (apt-get install -y tshark to run this test)"
        );
        return;
    }
    let cases = cases();
    let cut = TempFile::new();
    let whole = TempFile::new();
    write_capture(&cut.0, &cases, SNAPLEN);
    write_capture(&whole.0, &cases, WHOLE);

    for (file, snaplen) in [(&cut, SNAPLEN), (&whole, WHOLE)] {
        // The full dissection: no malformed packet, no checksum marked bad or incorrect.
        let verbose = tshark(&file.0, &["-V"]);
        for bad in [
            "Malformed",
            "Bad checksum",
            "[incorrect",
            "Checksum Status: Bad",
            "Expert Info (Error",
        ] {
            assert!(
                !verbose.contains(bad),
                "tshark -V reports {bad:?} (snap length {snaplen}):\n{verbose}"
            );
        }

        // The decoded fields, one line per frame.
        let mut args = vec!["-T", "fields", "-E", "separator=/t", "-E", "occurrence=f"];
        for field in FIELDS {
            args.extend(["-e", field]);
        }
        let table = tshark(&file.0, &args);
        let lines: Vec<&str> = table.lines().collect();
        assert_eq!(lines.len(), cases.len(), "one line per frame:\n{table}");
        for (i, (line, case)) in lines.iter().zip(&cases).enumerate() {
            let got: Vec<&str> = line.split('\t').collect();
            let want = expected_fields(case, snaplen);
            assert_eq!(got.len(), FIELDS.len(), "frame {}: {line:?}", i + 1);
            for ((field, got), want) in FIELDS.iter().zip(&got).zip(&want) {
                assert_eq!(
                    got,
                    want,
                    "frame {}, field {field}, snap length {snaplen}",
                    i + 1
                );
            }
        }
    }

    // tshark cannot verify a checksum over a cut payload; the same frames kept whole verify
    // (above), and their checksum fields are the very ones the cut frames carry.
    let checksums = ["-T", "fields", "-e", "tcp.checksum", "-e", "udp.checksum"];
    assert_eq!(tshark(&cut.0, &checksums), tshark(&whole.0, &checksums));
}
