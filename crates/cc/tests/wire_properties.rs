//! Property checks of the wire codecs over many seeded random inputs: decoders never panic on
//! any bytes, and every valid header survives encode then decode unchanged.

use concord_cc::rng::Rng;
use concord_cc::wire::checksum::{checksum, Checksum, Payload};
use concord_cc::wire::{
    decode_ipv4_frame, encode_ipv4_frame, tcp, udp, Ecn, EthernetHeader, Ipv4Header, SackOption,
    TcpFlags, TcpHeader, Transport, UdpHeader, WireError,
};
use std::collections::BTreeSet;
use std::net::Ipv4Addr;

const CASES: usize = 100_000;

fn byte(rng: &mut Rng) -> u8 {
    rng.next_u64() as u8
}

fn u16_(rng: &mut Rng) -> u16 {
    rng.next_u64() as u16
}

fn u32_(rng: &mut Rng) -> u32 {
    rng.next_u64() as u32
}

fn bytes(rng: &mut Rng, max_len: u64) -> Vec<u8> {
    let len = rng.below(max_len + 1) as usize;
    (0..len).map(|_| byte(rng)).collect()
}

fn ethernet(rng: &mut Rng) -> EthernetHeader {
    let mut dst = [0; 6];
    let mut src = [0; 6];
    dst.iter_mut()
        .chain(src.iter_mut())
        .for_each(|b| *b = byte(rng));
    EthernetHeader {
        dst,
        src,
        ethertype: u16_(rng),
    }
}

fn ipv4(rng: &mut Rng) -> Ipv4Header {
    Ipv4Header {
        src: Ipv4Addr::from(u32_(rng)),
        dst: Ipv4Addr::from(u32_(rng)),
        dscp: rng.below(64) as u8,
        ecn: Ecn::from_bits(byte(rng)),
        id: u16_(rng),
        ttl: byte(rng),
        protocol: byte(rng),
        total_len: 20 + rng.below(65_536 - 20) as u16,
    }
}

fn tcp_header(rng: &mut Rng) -> TcpHeader {
    TcpHeader {
        src_port: u16_(rng),
        dst_port: u16_(rng),
        seq: u32_(rng),
        ack: u32_(rng),
        flags: TcpFlags(byte(rng)),
        window: u16_(rng),
        timestamps: if rng.below(2) == 0 {
            None
        } else {
            Some((u32_(rng), u32_(rng)))
        },
        sack: SackOption::new((0..rng.below(4)).map(|_| (u32_(rng), u32_(rng)))),
    }
}

fn udp_header(rng: &mut Rng) -> UdpHeader {
    UdpHeader {
        src_port: u16_(rng),
        dst_port: u16_(rng),
        len: 8 + rng.below(65_536 - 8) as u16,
    }
}

/// A random transport, and an IPv4 header whose protocol suits [`Transport::Other`] (the frame
/// encoder sets 6 or 17 itself for the others).
fn random_transport(rng: &mut Rng) -> (Transport, Ipv4Header) {
    let mut ip = ipv4(rng);
    if matches!(ip.protocol, 6 | 17) {
        ip.protocol = 253;
    }
    let transport = random_transport_header(rng);
    (transport, ip)
}

fn random_transport_header(rng: &mut Rng) -> Transport {
    match rng.below(3) {
        0 => Transport::Tcp(tcp_header(rng)),
        1 => Transport::Udp(udp_header(rng)),
        _ => Transport::Other,
    }
}

/// Runs every decoder on `input` and checks what a success promises: the length consumed lies
/// within the input, and re-encoding a decoded header decodes to the same header.
fn decode_everything(input: &[u8]) {
    if let Ok((h, len)) = EthernetHeader::decode(input) {
        assert!(len <= input.len());
        let mut out = Vec::new();
        h.encode(&mut out);
        assert_eq!(EthernetHeader::decode(&out), Ok((h, out.len())));
    }
    if let Ok((h, len)) = Ipv4Header::decode(input) {
        assert!((20..=input.len()).contains(&len));
        let mut out = Vec::new();
        h.encode(&mut out);
        assert_eq!(Ipv4Header::decode(&out), Ok((h, 20)));
    }
    if let Ok((h, len)) = TcpHeader::decode(input) {
        assert!((20..=input.len()).contains(&len));
        let mut out = Vec::new();
        h.encode(&mut out);
        assert_eq!(TcpHeader::decode(&out), Ok((h, h.len())));
    }
    if let Ok((h, len)) = UdpHeader::decode(input) {
        assert!(len <= input.len());
        let mut out = Vec::new();
        h.encode(&mut out);
        assert_eq!(UdpHeader::decode(&out), Ok((h, 8)));
    }
    if let Ok((_, _, transport, offset)) = decode_ipv4_frame(input) {
        assert!(offset <= input.len());
        assert!(offset >= 34 + transport.header_len());
    }
}

/// A short name for a decode result: "ok" or the error's variant, header and field.
fn outcome<T>(result: Result<T, WireError>) -> String {
    match result {
        Ok(_) => "ok".to_string(),
        Err(WireError::Truncated { what, .. }) => format!("truncated {what}"),
        Err(WireError::BadVersion { what, .. }) => format!("version {what}"),
        Err(WireError::BadLength { what, .. }) => format!("length {what}"),
        Err(WireError::BadChecksum { what }) => format!("checksum {what}"),
        Err(WireError::BadField { what, field, .. }) => format!("field {what} {field}"),
    }
}

/// Makes the IPv4 header checksum of a frame correct if the frame holds a whole 20-byte header,
/// so that random frames also reach the transport decoders.
fn fix_ipv4_checksum(frame: &mut [u8]) {
    if frame.len() >= 34 {
        frame[24..26].copy_from_slice(&[0, 0]);
        let sum = checksum(&frame[14..34]);
        frame[24..26].copy_from_slice(&sum.to_be_bytes());
    }
}

#[test]
fn decoders_never_panic_on_random_bytes() {
    let mut rng = Rng::new(0x5eed_0001);
    for _ in 0..CASES {
        let mut input = bytes(&mut rng, 96);
        decode_everything(&input);
        // Make some inputs look like IPv4 frames so that the deeper checks run too.
        if input.len() >= 34 {
            input[12..14].copy_from_slice(&[0x08, 0x00]);
            input[14] = 0x45;
            input[23] = [6, 17, byte(&mut rng)][rng.below(3) as usize];
            fix_ipv4_checksum(&mut input);
            decode_everything(&input);
            decode_everything(&input[14..]);
            decode_everything(&input[34..]);
        }
    }
}

#[test]
fn decoders_never_panic_on_mutated_valid_frames() {
    let mut rng = Rng::new(0x5eed_0002);
    let mut frame = Vec::new();
    let mut seen = BTreeSet::new();
    for _ in 0..CASES {
        frame.clear();
        let (transport, ip) = random_transport(&mut rng);
        let payload_len = rng.below(64) as usize;
        let eth = ethernet(&mut rng);
        encode_ipv4_frame(&mut frame, &eth, &ip, transport, payload_len, usize::MAX)
            .expect("a short frame fits");
        assert!(
            decode_ipv4_frame(&frame).is_ok(),
            "an unmutated frame decodes"
        );
        for _ in 0..=rng.below(4) {
            if frame.is_empty() {
                break;
            }
            match rng.below(4) {
                0 => {
                    let at = rng.below(frame.len() as u64) as usize;
                    frame[at] ^= 1 << rng.below(8);
                }
                1 => {
                    let at = rng.below(frame.len() as u64) as usize;
                    frame[at] = byte(&mut rng);
                }
                2 => frame.truncate(rng.below(frame.len() as u64 + 1) as usize),
                _ => {
                    let extra = bytes(&mut rng, 8);
                    frame.extend_from_slice(&extra);
                }
            }
        }
        if rng.below(2) == 0 {
            fix_ipv4_checksum(&mut frame);
        }
        decode_everything(&frame);
        seen.insert(outcome(decode_ipv4_frame(&frame)));
        decode_everything(frame.get(14..).unwrap_or_default());
        decode_everything(frame.get(34..).unwrap_or_default());
    }
    // The mutations reach every check of the frame decoder, not just the first few.
    for expected in [
        "ok",
        "truncated ethernet",
        "truncated ipv4",
        "truncated tcp",
        "truncated udp",
        "version ipv4",
        "length ipv4",
        "length tcp",
        "length udp",
        "checksum ipv4",
        "checksum tcp",
        "checksum udp",
        "field ethernet ethertype",
        "field ipv4 fragment",
        "field tcp option length",
        "field tcp timestamps length",
    ] {
        assert!(
            seen.contains(expected),
            "no mutated frame gave {expected}: {seen:?}"
        );
    }
}

#[test]
fn random_valid_headers_survive_encode_then_decode() {
    let mut rng = Rng::new(0x5eed_0003);
    let mut out = Vec::new();
    for _ in 0..CASES {
        let e = ethernet(&mut rng);
        out.clear();
        e.encode(&mut out);
        assert_eq!(EthernetHeader::decode(&out), Ok((e, e.len())));

        let i = ipv4(&mut rng);
        out.clear();
        i.encode(&mut out);
        assert_eq!(Ipv4Header::decode(&out), Ok((i, i.len())));

        let t = tcp_header(&mut rng);
        out.clear();
        t.encode(&mut out);
        assert_eq!(out.len(), t.len());
        assert_eq!(TcpHeader::decode(&out), Ok((t, t.len())));

        let u = udp_header(&mut rng);
        out.clear();
        u.encode(&mut out);
        assert_eq!(UdpHeader::decode(&out), Ok((u, u.len())));
    }
}

#[test]
fn random_valid_frames_survive_encode_then_decode_whole_or_cut() {
    let mut rng = Rng::new(0x5eed_0004);
    let mut frame = Vec::new();
    for _ in 0..CASES / 10 {
        let eth = EthernetHeader {
            ethertype: EthernetHeader::ETHERTYPE_IPV4,
            ..ethernet(&mut rng)
        };
        let (transport, ip) = random_transport(&mut rng);
        let payload_len = rng.below(2_000) as usize;
        let headers = 34 + transport.header_len();
        let snap = headers + rng.below(2_100) as usize;
        frame.clear();
        let full =
            encode_ipv4_frame(&mut frame, &eth, &ip, transport, payload_len, snap).expect("fits");
        assert_eq!(full, headers + payload_len);
        assert_eq!(frame.len(), full.min(snap));
        let (e, i, t, offset) = decode_ipv4_frame(&frame).expect("a valid frame decodes");
        assert_eq!(e, eth);
        assert_eq!(i.total_len as usize, full - 14);
        assert_eq!(
            Ipv4Header {
                total_len: ip.total_len,
                protocol: ip.protocol,
                ..i
            },
            ip
        );
        let expected = match transport {
            Transport::Udp(u) => Transport::Udp(UdpHeader {
                len: (8 + payload_len) as u16,
                ..u
            }),
            other => other,
        };
        assert_eq!(t, expected);
        assert_eq!(offset, headers);
    }
}

#[test]
fn zero_payloads_checksum_like_their_bytes() {
    let mut rng = Rng::new(0x5eed_0005);
    let zeros = [0u8; 64];
    for _ in 0..CASES / 10 {
        let ip = ipv4(&mut rng);
        let n = rng.below(64) as usize;
        let mut header = Vec::new();
        tcp_header(&mut rng).encode(&mut header);
        assert_eq!(
            tcp::checksum(&ip, &header, Payload::Zeros(n)),
            tcp::checksum(&ip, &header, Payload::Bytes(&zeros[..n]))
        );
        header.clear();
        udp_header(&mut rng).encode(&mut header);
        assert_eq!(
            udp::checksum(&ip, &header, Payload::Zeros(n)),
            udp::checksum(&ip, &header, Payload::Bytes(&zeros[..n]))
        );
        let prefix = bytes(&mut rng, 9);
        let suffix = bytes(&mut rng, 9);
        let mut whole = prefix.clone();
        whole.extend_from_slice(&zeros[..n]);
        whole.extend_from_slice(&suffix);
        let mut c = Checksum::new();
        c.add_bytes(&prefix).add_zeros(n).add_bytes(&suffix);
        assert_eq!(c.finish(), checksum(&whole));
    }
}

#[test]
fn an_oversized_frame_is_an_error_not_a_panic() {
    let mut rng = Rng::new(0x5eed_0006);
    let mut out = Vec::new();
    let (e, ip) = (
        ethernet(&mut rng),
        Ipv4Header {
            protocol: 253,
            ..ipv4(&mut rng)
        },
    );
    let result = encode_ipv4_frame(&mut out, &e, &ip, Transport::Other, usize::MAX, 64);
    assert_eq!(
        result,
        Err(WireError::BadLength {
            what: "ipv4",
            value: usize::MAX
        })
    );
    assert!(out.is_empty());
}
