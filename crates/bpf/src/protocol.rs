//! The protocol between the BPF datapath and the agent, mirrored from
//! `src/bpf/concord_tcp.h`: the measurement record the datapath puts on the ring buffer
//! ([`Record`], 80 bytes) and the decision the agent writes into the per-socket map
//! ([`Decision`], 40 bytes). Both are C structs of fixed-width little-endian fields; this module
//! reads and writes them byte by byte, so it needs no unsafe code and runs without the datapath.

use std::net::Ipv4Addr;

/// The size of one record on the ring buffer, in bytes (`sizeof(struct concord_rec)`).
pub const RECORD_BYTES: usize = 80;
/// The size of one decision, in bytes (`sizeof(struct concord_ctl)`).
pub const DECISION_BYTES: usize = 40;
/// `CONCORD_FLAG_ECE`.
const FLAG_ECE: u8 = 1;
/// `CONCORD_FLAG_CWND_LIMITED`.
const FLAG_CWND_LIMITED: u8 = 2;
/// `CONCORD_FLAG_SAME_EVENT`.
const FLAG_SAME_EVENT: u8 = 4;
/// The kernel's "no ssthresh yet" (`TCP_INFINITE_SSTHRESH`), in segments.
pub const INFINITE_SSTHRESH: u32 = 0x7fff_ffff;

/// Which controller a socket asked for, by the algorithm name it chose (`enum concord_algo`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Algorithm {
    /// `concord_newreno`: concord-cc's NewReno.
    NewReno,
    /// `concord_mccp`: concord-cc's MCCP (ABE, fast probing, NCD).
    Mccp,
    /// `concord_cm`: TCP/CM, every socket to one host a flow of that host's CM macroflow.
    Cm,
    /// `concord_westw`: concord-cc's Westwood+.
    WestwoodPlus,
    /// `concord_cubic`: concord-cc's CUBIC (RFC 9438).
    Cubic,
}

impl Algorithm {
    /// Every algorithm the datapath registers.
    pub const ALL: [Algorithm; 5] = [
        Algorithm::NewReno,
        Algorithm::Mccp,
        Algorithm::Cm,
        Algorithm::WestwoodPlus,
        Algorithm::Cubic,
    ];

    /// The number the datapath uses.
    pub fn id(self) -> u8 {
        match self {
            Algorithm::NewReno => 1,
            Algorithm::Mccp => 2,
            Algorithm::Cm => 3,
            Algorithm::WestwoodPlus => 4,
            Algorithm::Cubic => 5,
        }
    }

    /// The algorithm with number `id`, if there is one.
    pub fn from_id(id: u8) -> Option<Algorithm> {
        Algorithm::ALL.into_iter().find(|a| a.id() == id)
    }

    /// The name the kernel lists it under (`tcp_available_congestion_control`).
    pub fn kernel_name(self) -> &'static str {
        match self {
            Algorithm::NewReno => "concord_newreno",
            Algorithm::Mccp => "concord_mccp",
            Algorithm::Cm => "concord_cm",
            Algorithm::WestwoodPlus => "concord_westw",
            Algorithm::Cubic => "concord_cubic",
        }
    }
}

/// What a record reports (`enum concord_rec_kind`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RecordKind {
    /// A socket started using a concord algorithm.
    Init,
    /// An ACK arrived.
    Ack,
    /// The congestion state changes; the new state is in [`Record::event`].
    State,
    /// A reduction is being undone; the next record carries the restored window.
    Undo,
    /// A cwnd event (`enum tcp_ca_event`) in [`Record::event`].
    Event,
    /// The socket stopped using the algorithm.
    Release,
}

impl RecordKind {
    fn from_u8(v: u8) -> Option<RecordKind> {
        Some(match v {
            1 => RecordKind::Init,
            2 => RecordKind::Ack,
            3 => RecordKind::State,
            4 => RecordKind::Undo,
            5 => RecordKind::Event,
            6 => RecordKind::Release,
            _ => return None,
        })
    }

    fn to_u8(self) -> u8 {
        match self {
            RecordKind::Init => 1,
            RecordKind::Ack => 2,
            RecordKind::State => 3,
            RecordKind::Undo => 4,
            RecordKind::Event => 5,
            RecordKind::Release => 6,
        }
    }
}

/// The kernel's congestion states (`enum tcp_ca_state`).
pub mod ca_state {
    /// Nothing bad has been seen.
    pub const OPEN: u8 = 0;
    /// Duplicate ACKs or SACKs: something may be lost or reordered.
    pub const DISORDER: u8 = 1;
    /// cwnd is being reduced for an ECN echo or a local congestion signal.
    pub const CWR: u8 = 2;
    /// Fast retransmit and recovery.
    pub const RECOVERY: u8 = 3;
    /// The retransmission timer fired.
    pub const LOSS: u8 = 4;
}

/// Why a record could not be read.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum RecordError {
    /// The ring buffer handed over a sample of the wrong size.
    #[error("a record is {0} bytes, not {RECORD_BYTES}: the agent and the datapath were built from different sources; rebuild both")]
    Size(usize),
    /// The kind byte names no record kind.
    #[error("record kind {0} is unknown: the agent and the datapath were built from different sources; rebuild both")]
    Kind(u8),
    /// The algorithm byte names no algorithm.
    #[error("algorithm {0} is unknown: the agent and the datapath were built from different sources; rebuild both")]
    Algorithm(u8),
}

/// One measurement from the datapath (`struct concord_rec`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Record {
    /// The socket's id, unique while the datapath is loaded.
    pub sock_id: u64,
    /// When, CLOCK_MONOTONIC, in nanoseconds.
    pub time_ns: u64,
    /// What it reports.
    pub kind: RecordKind,
    /// The socket's algorithm.
    pub algo: Algorithm,
    /// The socket's congestion state when the record was made (`ca_state`).
    pub ca_state: u8,
    /// This ACK carried ECN-Echo.
    pub ece: bool,
    /// The socket is cwnd-limited (the kernel's `tcp_is_cwnd_limited`).
    pub cwnd_limited: bool,
    /// A [`RecordKind::State`] record of a congestion signal whose first hole was sent before
    /// the last reduction of the socket's macroflow ([`Decision::reductions`]): part of the
    /// congestion event that reduction answered (RFC 6582 section 3.2's `recover`).
    pub same_event: bool,
    /// The cwnd event, or the new state of a [`RecordKind::State`] record.
    pub event: u32,
    /// Bytes newly acknowledged.
    pub bytes_acked: u32,
    /// Packets acknowledged.
    pub pkts_acked: u32,
    /// The RTT sample, in microseconds; negative when the ACK gave none.
    pub rtt_us: i32,
    /// The kernel's smoothed RTT, in microseconds.
    pub srtt_us: u32,
    /// Packets delivered so far.
    pub delivered: u32,
    /// Packets marked lost so far.
    pub lost: u32,
    /// Packets in flight.
    pub in_flight: u32,
    /// Sender MSS, in bytes.
    pub mss: u32,
    /// The kernel's cwnd, in segments.
    pub cwnd: u32,
    /// The kernel's ssthresh, in segments.
    pub ssthresh: u32,
    /// Congestion reductions on this socket so far.
    pub loss_events: u32,
    /// The peer's address (0.0.0.0 for an IPv6 peer).
    pub daddr: Ipv4Addr,
    /// The peer's port.
    pub dport: u16,
    /// The local port.
    pub sport: u16,
    /// The local address.
    pub saddr: Ipv4Addr,
}

fn u32_at(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]])
}

fn u64_at(b: &[u8], at: usize) -> u64 {
    let mut w = [0u8; 8];
    w.copy_from_slice(&b[at..at + 8]);
    u64::from_le_bytes(w)
}

fn addr_at(b: &[u8], at: usize) -> Ipv4Addr {
    Ipv4Addr::new(b[at], b[at + 1], b[at + 2], b[at + 3])
}

impl Record {
    /// Reads a record from the bytes the ring buffer handed over.
    pub fn parse(b: &[u8]) -> Result<Record, RecordError> {
        if b.len() != RECORD_BYTES {
            return Err(RecordError::Size(b.len()));
        }
        Ok(Record {
            sock_id: u64_at(b, 0),
            time_ns: u64_at(b, 8),
            kind: RecordKind::from_u8(b[16]).ok_or(RecordError::Kind(b[16]))?,
            algo: Algorithm::from_id(b[17]).ok_or(RecordError::Algorithm(b[17]))?,
            ca_state: b[18],
            ece: b[19] & FLAG_ECE != 0,
            cwnd_limited: b[19] & FLAG_CWND_LIMITED != 0,
            same_event: b[19] & FLAG_SAME_EVENT != 0,
            event: u32_at(b, 20),
            bytes_acked: u32_at(b, 24),
            pkts_acked: u32_at(b, 28),
            rtt_us: u32_at(b, 32) as i32,
            srtt_us: u32_at(b, 36),
            delivered: u32_at(b, 40),
            lost: u32_at(b, 44),
            in_flight: u32_at(b, 48),
            mss: u32_at(b, 52),
            cwnd: u32_at(b, 56),
            ssthresh: u32_at(b, 60),
            loss_events: u32_at(b, 64),
            daddr: addr_at(b, 68),
            // skc_dport is in network byte order, skc_num in host (little-endian) order.
            dport: u16::from_be_bytes([b[72], b[73]]),
            sport: u16::from_le_bytes([b[74], b[75]]),
            saddr: addr_at(b, 76),
        })
    }

    /// The bytes the datapath would have written for this record (the inverse of
    /// [`Record::parse`]; tests and the benchmark feed the agent with it).
    pub fn to_bytes(&self) -> [u8; RECORD_BYTES] {
        let mut b = [0u8; RECORD_BYTES];
        b[0..8].copy_from_slice(&self.sock_id.to_le_bytes());
        b[8..16].copy_from_slice(&self.time_ns.to_le_bytes());
        b[16] = self.kind.to_u8();
        b[17] = self.algo.id();
        b[18] = self.ca_state;
        b[19] = if self.ece { FLAG_ECE } else { 0 }
            | if self.cwnd_limited {
                FLAG_CWND_LIMITED
            } else {
                0
            }
            | if self.same_event { FLAG_SAME_EVENT } else { 0 };
        let words = [
            self.event,
            self.bytes_acked,
            self.pkts_acked,
            self.rtt_us as u32,
            self.srtt_us,
            self.delivered,
            self.lost,
            self.in_flight,
            self.mss,
            self.cwnd,
            self.ssthresh,
            self.loss_events,
        ];
        for (i, w) in words.iter().enumerate() {
            b[20 + 4 * i..24 + 4 * i].copy_from_slice(&w.to_le_bytes());
        }
        b[68..72].copy_from_slice(&self.daddr.octets());
        b[72..74].copy_from_slice(&self.dport.to_be_bytes());
        b[74..76].copy_from_slice(&self.sport.to_le_bytes());
        b[76..80].copy_from_slice(&self.saddr.octets());
        b
    }
}

/// One socket's decisions (`struct concord_ctl`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Decision {
    /// When the agent wrote it, CLOCK_MONOTONIC nanoseconds.
    pub stamp_ns: u64,
    /// Congestion window, in segments.
    pub cwnd: u32,
    /// Slow-start threshold, in segments.
    pub ssthresh: u32,
    /// The ssthresh to take at the next congestion signal, in segments.
    pub loss_ssthresh: u32,
    /// Congestion reductions the agent has seen on this socket.
    pub loss_events: u32,
    /// Pacing rate in bytes per second; 0 leaves the kernel's.
    pub pacing_rate: u64,
    /// Reductions of the socket's TCP/CM macroflow so far (0 for the window algorithms): when
    /// the count changes, the datapath takes the socket's `snd_nxt` as its recover point.
    pub reductions: u32,
}

impl Decision {
    /// The bytes of the map value.
    pub fn to_bytes(&self) -> [u8; DECISION_BYTES] {
        let mut b = [0u8; DECISION_BYTES];
        b[0..8].copy_from_slice(&self.stamp_ns.to_le_bytes());
        b[8..12].copy_from_slice(&self.cwnd.to_le_bytes());
        b[12..16].copy_from_slice(&self.ssthresh.to_le_bytes());
        b[16..20].copy_from_slice(&self.loss_ssthresh.to_le_bytes());
        b[20..24].copy_from_slice(&self.loss_events.to_le_bytes());
        b[24..32].copy_from_slice(&self.pacing_rate.to_le_bytes());
        b[32..36].copy_from_slice(&self.reductions.to_le_bytes());
        b
    }

    /// Reads a map value (the inverse of [`Decision::to_bytes`]); `None` if the size is wrong.
    pub fn parse(b: &[u8]) -> Option<Decision> {
        (b.len() == DECISION_BYTES).then(|| Decision {
            stamp_ns: u64_at(b, 0),
            cwnd: u32_at(b, 8),
            ssthresh: u32_at(b, 12),
            loss_ssthresh: u32_at(b, 16),
            loss_events: u32_at(b, 20),
            pacing_rate: u64_at(b, 24),
            reductions: u32_at(b, 32),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A record as the datapath lays it out for an ACK of 2896 bytes from 10.1.2.3:5201.
    pub(crate) fn sample() -> Record {
        Record {
            sock_id: 7,
            time_ns: 1_000_000_000,
            kind: RecordKind::Ack,
            algo: Algorithm::NewReno,
            ca_state: ca_state::OPEN,
            ece: false,
            cwnd_limited: true,
            same_event: false,
            event: 0,
            bytes_acked: 2896,
            pkts_acked: 2,
            rtt_us: 40_000,
            srtt_us: 41_000,
            delivered: 100,
            lost: 0,
            in_flight: 20,
            mss: 1448,
            cwnd: 20,
            ssthresh: INFINITE_SSTHRESH,
            loss_events: 0,
            daddr: Ipv4Addr::new(10, 1, 2, 3),
            dport: 5201,
            sport: 40000,
            saddr: Ipv4Addr::new(10, 1, 1, 1),
        }
    }

    #[test]
    fn a_record_reads_back_what_was_written() {
        let r = sample();
        assert_eq!(Record::parse(&r.to_bytes()), Ok(r));
    }

    #[test]
    fn the_record_layout_matches_the_c_struct() {
        let b = sample().to_bytes();
        // sock_id at 0, time at 8, kind/algo at 16/17, rtt_us at 32, mss at 52, daddr at 68,
        // dport (network order) at 72: the offsets of struct concord_rec.
        assert_eq!(b[0], 7);
        assert_eq!(u64_at(&b, 8), 1_000_000_000);
        assert_eq!((b[16], b[17]), (2, 1));
        assert_eq!(u32_at(&b, 32), 40_000);
        assert_eq!(u32_at(&b, 52), 1448);
        assert_eq!(&b[68..72], &[10, 1, 2, 3]);
        assert_eq!(&b[72..74], &[0x14, 0x51]);
    }

    #[test]
    fn a_negative_rtt_means_no_sample() {
        let mut r = sample();
        r.rtt_us = -1;
        let back = Record::parse(&r.to_bytes()).expect("parses");
        assert_eq!(back.rtt_us, -1);
    }

    #[test]
    fn a_short_record_is_an_error_naming_the_rebuild() {
        let e = Record::parse(&[0u8; 40]).expect_err("too short");
        assert_eq!(e, RecordError::Size(40));
        assert!(e.to_string().contains("rebuild"));
    }

    #[test]
    fn an_unknown_kind_is_an_error() {
        let mut b = sample().to_bytes();
        b[16] = 99;
        assert_eq!(Record::parse(&b), Err(RecordError::Kind(99)));
    }

    #[test]
    fn the_same_event_flag_is_bit_two_of_the_flags_byte() {
        let r = Record {
            same_event: true,
            ..sample()
        };
        let b = r.to_bytes();
        assert_eq!(b[19] & FLAG_SAME_EVENT, 4);
        assert_eq!(Record::parse(&b), Ok(r));
    }

    #[test]
    fn a_decision_has_the_c_layout() {
        let d = Decision {
            stamp_ns: 5,
            cwnd: 10,
            ssthresh: 20,
            loss_ssthresh: 7,
            loss_events: 3,
            pacing_rate: 1_000_000,
            reductions: 4,
        };
        let b = d.to_bytes();
        assert_eq!(u32_at(&b, 8), 10);
        assert_eq!(u32_at(&b, 20), 3);
        assert_eq!(u32_at(&b, 32), 4);
        assert_eq!(Decision::parse(&b), Some(d));
    }

    #[test]
    fn algorithm_ids_match_enum_concord_algo() {
        for a in Algorithm::ALL {
            assert_eq!(Algorithm::from_id(a.id()), Some(a));
        }
        assert_eq!(Algorithm::Cm.id(), 3);
        assert_eq!(Algorithm::Cm.kernel_name(), "concord_cm");
        // The kernel allows 15 characters per name (TCP_CA_NAME_MAX 16 with the NUL).
        assert!(Algorithm::ALL.iter().all(|a| a.kernel_name().len() <= 15));
        assert_eq!(Algorithm::Cubic.kernel_name(), "concord_cubic");
    }
}
