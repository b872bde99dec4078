//! Every wire codec under fuzzing: the daemon's framing and request decoder, the replies and
//! events a client decodes, the probe protocol, the CP header, GCCP messages, Ethernet, IPv4,
//! TCP and UDP headers, whole frames, and the capture parser. Mutants of valid encodings are
//! decoded; a decoder may refuse them but must never panic, and what it accepts must encode
//! and decode back to the same message where the codec promises that.

use concord_cc::cm::probe::{Probe, ProbeKey, ProbeMessage, Response};
use concord_cc::cm::{FlowId, FlowKey};
use concord_cc::cp::header::CpHeader;
use concord_cc::gcca::message::{decode_frame, Code, GccpMessage};
use concord_cc::wire::ethernet::EthernetHeader;
use concord_cc::wire::frame::decode_ipv4_frame;
use concord_cc::wire::ipv4::Ipv4Header;
use concord_cc::wire::tcp::TcpHeader;
use concord_cc::wire::udp::UdpHeader;
use concord_net::protocol::{ClientMessage, FrameBuffer, Reply, Request, ServerMessage};
use std::net::Ipv4Addr;

#[path = "../../sim/tests/fuzz/mutate.rs"]
mod mutate;

/// The frame's body: `encode` output without its 4-byte length prefix.
fn body(frame: Vec<u8>) -> Vec<u8> {
    frame[4..].to_vec()
}

/// `seed` with its kind byte (the second) set to each of `kinds`, and 64 zero bytes after:
/// a start for every message kind.
fn every_kind(seed: &[u8], kinds: &[u8]) -> Vec<Vec<u8>> {
    kinds
        .iter()
        .map(|&k| {
            let mut b = seed.to_vec();
            b[1] = k;
            b.extend_from_slice(&[0; 64]);
            b
        })
        .collect()
}

fn client_seeds() -> Vec<Vec<u8>> {
    let key = FlowKey::new(Ipv4Addr::new(10, 0, 0, 2), 5001, 40_000);
    let flow = FlowId(7);
    let mut seeds: Vec<Vec<u8>> = [
        Request::Open(key),
        Request::Request { flow, nbytes: 1448 },
        Request::Notify { flow, nsent: 1448 },
        Request::Query { flow },
        Request::Close { flow },
        Request::Status,
    ]
    .into_iter()
    .enumerate()
    .map(|(i, request)| {
        body(
            ClientMessage {
                id: i as u32,
                request,
            }
            .encode(),
        )
    })
    .collect();
    let first = seeds[0].clone();
    seeds.extend(every_kind(&first, &(0x01..=0x0d).collect::<Vec<u8>>()));
    seeds
}

#[test]
fn the_daemons_framing_and_request_decoder_never_panic() {
    let seeds = client_seeds();
    mutate::fuzz("client message", &seeds, |b| {
        if let Ok(m) = ClientMessage::decode(b) {
            // What decodes, encodes to a frame that decodes to the same message (compared as
            // bytes: a threshold may be NaN, which the manager refuses, not the codec).
            let frame = m.encode();
            let again = ClientMessage::decode(&body(frame.clone())).expect("re-decodes");
            assert_eq!(again.encode(), frame);
        }
    });
    // A byte stream of frames, cut anywhere, through the daemon's frame buffer.
    let streams: Vec<Vec<u8>> = vec![seeds
        .iter()
        .take(6)
        .flat_map(|b| {
            let mut f = (b.len() as u32).to_be_bytes().to_vec();
            f.extend_from_slice(b);
            f
        })
        .collect()];
    mutate::fuzz("frame stream", &streams, |stream| {
        let mut fb = FrameBuffer::new();
        let cut = stream.len() / 3;
        for part in [&stream[..cut], &stream[cut..]] {
            fb.extend(part);
            while let Ok(Some(frame)) = fb.next_frame() {
                let _ = ClientMessage::decode(&frame);
            }
        }
    });
}

#[test]
fn the_clients_reply_and_event_decoder_never_panics() {
    let mut seeds: Vec<Vec<u8>> = [
        ServerMessage::Reply {
            id: 1,
            reply: Reply::Ok,
        },
        ServerMessage::Reply {
            id: 2,
            reply: Reply::Opened(FlowId(3)),
        },
    ]
    .iter()
    .map(|m| body(m.encode()))
    .collect();
    let first = seeds[0].clone();
    seeds.extend(every_kind(
        &first,
        &[
            0x81, 0x82, 0x83, 0x84, 0x85, 0x86, 0x8f, 0xc1, 0xc2, 0xc3, 0xff,
        ],
    ));
    mutate::fuzz("server message", &seeds, |b| {
        let _ = ServerMessage::decode(b);
    });
}

#[test]
fn the_probe_protocol_decoder_never_panics_with_or_without_a_key() {
    let key = ProbeKey([7; 32]);
    let mut seeds = Vec::new();
    for k in [None, Some(&key)] {
        let mut out = Vec::new();
        ProbeMessage::Probe(Probe {
            seq: 5,
            nonce: 0x0123_4567_89ab_cdef,
            room: 4,
        })
        .encode_with(k, &mut out);
        seeds.push(out);
        let mut out = Vec::new();
        ProbeMessage::Response(Response {
            thisprobe: 5,
            lastprobe: 4,
            nonce: 0x0123_4567_89ab_cdef,
            flows: Vec::new(),
        })
        .encode_with(k, &mut out);
        seeds.push(out);
    }
    mutate::fuzz("probe message", &seeds, |b| {
        let _ = ProbeMessage::decode(b);
        let _ = ProbeMessage::decode_with(b, Some(&key));
    });
}

#[test]
fn the_cp_header_and_gccp_decoders_never_panic() {
    let mut cp = Vec::new();
    CpHeader::new(1, 2).encode(&mut cp).expect("encodes");
    mutate::fuzz("cp header", &[cp], |b| {
        let _ = CpHeader::decode(b);
    });
    let mut seeds = Vec::new();
    for code in [Code::Normal, Code::Congestion] {
        let mut out = Vec::new();
        GccpMessage {
            code,
            padding: None,
        }
        .encode(&mut out);
        seeds.push(out);
        let mut frame = Vec::new();
        concord_cc::gcca::message::encode_frame(
            [2, 0, 0, 0, 0, 1],
            [2, 0, 0, 0, 0, 2],
            &GccpMessage {
                code,
                padding: None,
            },
            &mut frame,
        );
        seeds.push(frame);
    }
    mutate::fuzz("gccp", &seeds, |b| {
        let _ = GccpMessage::decode(b);
        let _ = GccpMessage::decode_prefix(b);
        let _ = decode_frame(b);
    });
}

/// An Ethernet frame holding an IPv4 datagram of `protocol` with a 20-byte transport header
/// (TCP data offset 5) or an 8-byte one (UDP), and 16 bytes of payload.
fn frame(protocol: u8) -> Vec<u8> {
    let transport = if protocol == 6 { 20 } else { 8 };
    let total = 20 + transport + 16;
    let mut f = vec![2, 0, 0, 0, 0, 2, 2, 0, 0, 0, 0, 1, 0x08, 0x00];
    f.extend_from_slice(&[0x45, 0, 0, total as u8, 0, 1, 0x40, 0, 64, protocol, 0, 0]);
    f.extend_from_slice(&[10, 0, 0, 1, 10, 0, 0, 2]);
    let mut t = vec![0x13, 0x89, 0x9c, 0x40];
    if protocol == 6 {
        t.extend_from_slice(&[0, 0, 0, 1, 0, 0, 0, 0, 0x50, 0x10, 0xff, 0xff, 0, 0, 0, 0]);
    } else {
        t.extend_from_slice(&[0, 24, 0, 0]);
    }
    f.extend_from_slice(&t);
    f.extend_from_slice(&[0xab; 16]);
    f
}

#[test]
fn the_packet_header_decoders_and_the_capture_parser_never_panic() {
    let seeds = vec![frame(6), frame(17)];
    mutate::fuzz("ethernet/ipv4/tcp/udp", &seeds, |b| {
        let _ = decode_ipv4_frame(b);
        let _ = EthernetHeader::decode(b);
        let ip = b.get(14..).unwrap_or(&[]);
        let _ = Ipv4Header::decode(ip);
        let _ = concord_net::capture::parse(ip);
        let l4 = b.get(34..).unwrap_or(&[]);
        let _ = TcpHeader::decode(l4);
        let _ = UdpHeader::decode(l4);
    });
}
