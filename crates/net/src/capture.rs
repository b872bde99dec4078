//! The receiving daemon's own count of a flow's arrivals: an `AF_PACKET` socket that observes
//! the interfaces, with a classic BPF socket filter that lets through only IPv4 UDP and TCP
//! packets to this host's address and the registered ports, so that the daemon sees nothing
//! else. Each packet observed becomes a [`Arrival`] for the probe responder; packet sockets
//! get a packet before the IP layer delivers it, so a probe that followed the data on the same
//! path finds the data counted once this socket is drained.

use concord_cc::cm::FlowTag;
use socket2::{Domain, Protocol, SockFilter, Socket, Type};
use std::io::{self, Read};
use std::net::Ipv4Addr;

/// One packet of a registered flow.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Arrival {
    /// The sending host.
    pub from: Ipv4Addr,
    /// The flow: the sender's port and the registered port.
    pub tag: FlowTag,
    /// Payload bytes (UDP or TCP data, headers excluded).
    pub bytes: u64,
    /// Marked Congestion Experienced.
    pub ce: bool,
}

// Classic BPF opcodes (linux/filter.h).
const LD_W_ABS: u16 = 0x20;
const LD_H_ABS: u16 = 0x28;
const LD_B_ABS: u16 = 0x30;
const LDX_B_MSH: u16 = 0xb1;
const LD_H_IND: u16 = 0x48;
const JEQ_K: u16 = 0x15;
const JSET_K: u16 = 0x45;
const RET_K: u16 = 0x06;

/// The filter: IPv4 (the socket's protocol), UDP or TCP, to `local`, not a later fragment,
/// to one of `ports`. At most 200 ports.
pub fn filter(local: Ipv4Addr, ports: &[u16]) -> Vec<SockFilter> {
    let ports = &ports[..ports.len().min(200)];
    let n = ports.len();
    if n == 0 {
        return vec![SockFilter::new(RET_K, 0, 0, 0)];
    }
    // Offsets are counted from the instruction after the jump; the last two are accept, drop.
    // 0 ldb [9]; 1 jeq 17; 2 jeq 6; 3 ld [16]; 4 jeq local; 5 ldh [6]; 6 jset 0x1fff;
    // 7 ldx msh [0]; 8 ldh [x+2]; 9.. jeq port_i; accept; drop
    let accept = 9 + n;
    let drop = accept + 1;
    let to = |from: usize, target: usize| (target - from - 1) as u8;
    let mut f = vec![
        SockFilter::new(LD_B_ABS, 0, 0, 9),
        SockFilter::new(JEQ_K, to(1, 3), 0, 17),
        SockFilter::new(JEQ_K, 0, to(2, drop), 6),
        SockFilter::new(LD_W_ABS, 0, 0, 16),
        SockFilter::new(JEQ_K, 0, to(4, drop), u32::from(local)),
        SockFilter::new(LD_H_ABS, 0, 0, 6),
        SockFilter::new(JSET_K, to(6, drop), 0, 0x1fff),
        SockFilter::new(LDX_B_MSH, 0, 0, 0),
        SockFilter::new(LD_H_IND, 0, 0, 2),
    ];
    for (i, p) in ports.iter().enumerate() {
        let at = 9 + i;
        let jf = if i + 1 == n { to(at, drop) } else { 0 };
        f.push(SockFilter::new(JEQ_K, to(at, accept), jf, u32::from(*p)));
    }
    f.push(SockFilter::new(RET_K, 0, 0, 0x0004_0000));
    f.push(SockFilter::new(RET_K, 0, 0, 0));
    f
}

/// Reads an IPv4 packet (from its IP header on) into an [`Arrival`]; `None` if it is not a
/// whole UDP or TCP packet.
pub fn parse(packet: &[u8]) -> Option<Arrival> {
    let first = *packet.first()?;
    if first >> 4 != 4 {
        return None;
    }
    let ihl = usize::from(first & 0x0f) * 4;
    let total = usize::from(u16::from_be_bytes([*packet.get(2)?, *packet.get(3)?]));
    let proto = *packet.get(9)?;
    let from = Ipv4Addr::new(
        *packet.get(12)?,
        *packet.get(13)?,
        *packet.get(14)?,
        *packet.get(15)?,
    );
    let sport = u16::from_be_bytes([*packet.get(ihl)?, *packet.get(ihl + 1)?]);
    let dport = u16::from_be_bytes([*packet.get(ihl + 2)?, *packet.get(ihl + 3)?]);
    let header = match proto {
        17 => 8,
        6 => usize::from(*packet.get(ihl + 12)? >> 4) * 4,
        _ => return None,
    };
    let bytes = total.checked_sub(ihl + header)? as u64;
    Some(Arrival {
        from,
        tag: FlowTag {
            src_port: sport,
            dst_port: dport,
            flow_id: 0,
        },
        bytes,
        ce: packet.get(1)? & 0x03 == 0x03,
    })
}

/// The packet socket with its filter, non-blocking.
#[derive(Debug)]
pub struct Capture {
    /// The socket.
    socket: Socket,
}

/// `ETH_P_IP` in network byte order, the protocol of a packet socket that sees IPv4.
const ETH_P_IP_BE: i32 = (libc::ETH_P_IP as u16).to_be() as i32;

impl Capture {
    /// Opens the packet socket for packets to `local` on `ports` (needs CAP_NET_RAW).
    pub fn open(local: Ipv4Addr, ports: &[u16]) -> io::Result<Capture> {
        let socket = Socket::new(
            Domain::PACKET,
            Type::DGRAM,
            Some(Protocol::from(ETH_P_IP_BE)),
        )?;
        socket.attach_filter(&filter(local, ports))?;
        // Packets queued before the filter was attached passed no filter: drop them.
        socket.set_nonblocking(true)?;
        let mut c = Capture { socket };
        c.drain(|_| {});
        Ok(c)
    }

    /// Hands every packet waiting to `f`; returns how many.
    pub fn drain(&mut self, mut f: impl FnMut(Arrival)) -> usize {
        let mut buf = [0u8; 128];
        let mut n = 0;
        loop {
            match (&self.socket).read(&mut buf) {
                Ok(len) => {
                    // A truncated read: the headers are all that is needed.
                    if let Some(a) = parse(buf.get(..len).unwrap_or_default()) {
                        f(a);
                        n += 1;
                    }
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(_) => return n,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn udp(payload: usize, tos: u8) -> Vec<u8> {
        let total = 20 + 8 + payload;
        let mut p = vec![0u8; total];
        p[0] = 0x45;
        p[1] = tos;
        p[2..4].copy_from_slice(&(total as u16).to_be_bytes());
        p[9] = 17;
        p[12..16].copy_from_slice(&[10, 0, 1, 1]);
        p[16..20].copy_from_slice(&[10, 0, 100, 1]);
        p[20..22].copy_from_slice(&40000u16.to_be_bytes());
        p[22..24].copy_from_slice(&9000u16.to_be_bytes());
        p
    }

    #[test]
    fn a_udp_packet_counts_its_payload_and_its_ce_mark() {
        let a = parse(&udp(1000, 0x03)).expect("udp");
        assert_eq!(a.from, Ipv4Addr::new(10, 0, 1, 1));
        assert_eq!(a.tag.src_port, 40000);
        assert_eq!(a.tag.dst_port, 9000);
        assert_eq!(a.bytes, 1000);
        assert!(a.ce);
        assert!(!parse(&udp(10, 0x02)).expect("udp").ce);
        // Truncated to the headers (as the socket reads it): the length field still counts.
        assert_eq!(parse(&udp(1000, 0)[..28]).expect("udp").bytes, 1000);
        assert_eq!(parse(&[0x45, 0, 0]), None);
    }

    #[test]
    fn the_filter_jumps_land_on_accept_or_drop() {
        let f = filter(Ipv4Addr::new(10, 0, 100, 1), &[9000, 9100]);
        assert_eq!(f.len(), 9 + 2 + 2);
        let none = filter(Ipv4Addr::new(10, 0, 100, 1), &[]);
        assert_eq!(none.len(), 1);
    }
}
