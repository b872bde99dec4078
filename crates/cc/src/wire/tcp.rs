//! TCP header (RFC 9293 section 3.1) with the timestamps option (RFC 7323 section 3), the SACK
//! option (RFC 2018 section 3) and the ECN flags (RFC 3168 section 6.1), and the TCP checksum
//! over the IPv4 pseudo-header.

use super::checksum::{pseudo_header_sum, Payload};
use super::{Ipv4Header, WireError};

/// TCP control bits, including ECE and CWR (RFC 3168 section 6.1).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct TcpFlags(pub u8);

impl TcpFlags {
    /// No more data from sender.
    pub const FIN: TcpFlags = TcpFlags(0x01);
    /// Synchronise sequence numbers.
    pub const SYN: TcpFlags = TcpFlags(0x02);
    /// Reset the connection.
    pub const RST: TcpFlags = TcpFlags(0x04);
    /// Push function.
    pub const PSH: TcpFlags = TcpFlags(0x08);
    /// Acknowledgment field significant.
    pub const ACK: TcpFlags = TcpFlags(0x10);
    /// Urgent pointer significant.
    pub const URG: TcpFlags = TcpFlags(0x20);
    /// ECN-Echo.
    pub const ECE: TcpFlags = TcpFlags(0x40);
    /// Congestion Window Reduced.
    pub const CWR: TcpFlags = TcpFlags(0x80);

    /// True if every bit of `other` is set.
    pub fn contains(self, other: TcpFlags) -> bool {
        self.0 & other.0 == other.0
    }
}

impl std::ops::BitOr for TcpFlags {
    type Output = TcpFlags;
    fn bitor(self, rhs: TcpFlags) -> TcpFlags {
        TcpFlags(self.0 | rhs.0)
    }
}

/// A TCP header; of the options, timestamps and SACK are represented.
///
/// The checksum field and the urgent pointer are written as zero by [`TcpHeader::encode`] (see
/// [`checksum`] to fill the former); reserved bits are zero.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TcpHeader {
    /// Source port.
    pub src_port: u16,
    /// Destination port.
    pub dst_port: u16,
    /// Sequence number (low 32 bits of the byte offset).
    pub seq: u32,
    /// Acknowledgment number.
    pub ack: u32,
    /// Control bits.
    pub flags: TcpFlags,
    /// Receive window, in bytes (unscaled).
    pub window: u16,
    /// The timestamps option (RFC 7323): (TSval, TSecr). When present the header carries
    /// NOP, NOP, TS (12 bytes of options), so header and option take the 32 bytes that make a
    /// 1448-byte MSS fill a 1500-byte packet.
    pub timestamps: Option<(u32, u32)>,
    /// The SACK option (RFC 2018 section 3); empty: none.
    pub sack: SackOption,
}

/// The SACK option's blocks (RFC 2018 section 3): each the (left edge, right edge) of a block of
/// data received above the cumulative acknowledgment, as 32-bit wire sequence numbers, the
/// first the block holding the most recently received segment (section 4).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SackOption {
    len: u8,
    blocks: [(u32, u32); SackOption::MAX],
}

impl SackOption {
    /// Blocks the option holds at most: 40 bytes of options take NOP, NOP and 2 + 8 x 4 bytes
    /// (RFC 2018 section 3); three beside the timestamps option.
    pub const MAX: usize = 4;

    /// The option of `blocks`, the first [`SackOption::MAX`] kept.
    pub fn new(blocks: impl IntoIterator<Item = (u32, u32)>) -> SackOption {
        let mut out = SackOption::default();
        for b in blocks.into_iter().take(Self::MAX) {
            out.blocks[usize::from(out.len)] = b;
            out.len += 1;
        }
        out
    }

    /// The blocks.
    pub fn blocks(&self) -> &[(u32, u32)] {
        &self.blocks[..usize::from(self.len)]
    }

    /// No block (the option is not sent).
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Bytes the option takes in a header carrying `blocks` blocks: none without a block, else
    /// NOP, NOP, kind, length and 8 bytes a block, `4 + 8n` (RFC 2018 section 3: length
    /// `2 + 8n`, padded by two NOPs to the 32-bit boundary RFC 9293 section 3.1 requires, as
    /// Linux sends it).
    pub const fn wire_len(blocks: usize) -> usize {
        if blocks == 0 {
            0
        } else {
            4 + 8 * blocks
        }
    }
}

/// Option kind: end of option list (RFC 9293 section 3.2).
const OPT_EOL: u8 = 0;
/// Option kind: no-operation, used for padding.
const OPT_NOP: u8 = 1;
/// Option kind: timestamps (RFC 7323 section 3).
const OPT_TIMESTAMPS: u8 = 8;
/// Length of the timestamps option: kind, length, TSval, TSecr.
const OPT_TIMESTAMPS_LEN: u8 = 10;
/// Option kind: SACK (RFC 2018 section 3).
const OPT_SACK: u8 = 5;

/// Byte offset of the checksum field in the TCP header.
pub const CHECKSUM_OFFSET: usize = 16;

impl TcpHeader {
    /// Length of a header without options, in bytes (data offset 5).
    pub const MIN_LEN: usize = 20;
    /// Length of a header carrying NOP, NOP, timestamps, in bytes (data offset 8).
    pub const LEN_WITH_TIMESTAMPS: usize = 32;

    /// Appends the header to `out`: 20 bytes, or 32 with NOP, NOP, timestamps (kind 8, length
    /// 10, TSval, TSecr; RFC 7323 appendix A layout), then NOP, NOP, SACK (kind 5, length
    /// 2 + 8n, the blocks' edges) when it carries blocks: at most three beside timestamps, four
    /// without (the rest are not sent). Checksum and urgent pointer are zero.
    pub fn encode(&self, out: &mut Vec<u8>) {
        let len = self.len();
        out.extend_from_slice(&self.src_port.to_be_bytes());
        out.extend_from_slice(&self.dst_port.to_be_bytes());
        out.extend_from_slice(&self.seq.to_be_bytes());
        out.extend_from_slice(&self.ack.to_be_bytes());
        // Data offset in 32-bit words, in the upper four bits; reserved bits zero.
        out.push(((len / 4) as u8) << 4);
        out.push(self.flags.0);
        out.extend_from_slice(&self.window.to_be_bytes());
        // Checksum, then urgent pointer.
        out.extend_from_slice(&[0, 0, 0, 0]);
        if let Some((tsval, tsecr)) = self.timestamps {
            out.extend_from_slice(&[OPT_NOP, OPT_NOP, OPT_TIMESTAMPS, OPT_TIMESTAMPS_LEN]);
            out.extend_from_slice(&tsval.to_be_bytes());
            out.extend_from_slice(&tsecr.to_be_bytes());
        }
        let blocks = self.sent_sack_blocks();
        if !blocks.is_empty() {
            out.extend_from_slice(&[OPT_NOP, OPT_NOP, OPT_SACK, (2 + 8 * blocks.len()) as u8]);
            for (left, right) in blocks {
                out.extend_from_slice(&left.to_be_bytes());
                out.extend_from_slice(&right.to_be_bytes());
            }
        }
    }

    /// The SACK blocks that fit beside the other options in 40 bytes: three with timestamps.
    fn sent_sack_blocks(&self) -> &[(u32, u32)] {
        let fit = if self.timestamps.is_some() { 3 } else { 4 };
        let b = self.sack.blocks();
        &b[..b.len().min(fit)]
    }

    /// Reads a header from the start of `bytes`; returns it and the header length consumed
    /// (data offset x 4 bytes, options included).
    ///
    /// Options are walked by kind and length (RFC 9293 section 3.2): EOL ends the list, NOP is
    /// skipped, the first timestamps and SACK options are kept, any other option is skipped by
    /// its length.
    /// The checksum is not checked here (it needs the pseudo-header: see [`verify_checksum`]);
    /// the urgent pointer and the reserved bits are ignored.
    ///
    /// Errors: fewer than 20 bytes is `Truncated`; a data offset below 5 or past the end of
    /// `bytes` is `BadLength`; an option without its length byte, with a length below 2 or past
    /// the end of the options, a timestamps option whose length is not 10, or a SACK option
    /// whose length is not 2 + 8n for n of 1 to 4, is `BadField`.
    pub fn decode(bytes: &[u8]) -> Result<(TcpHeader, usize), WireError> {
        const WHAT: &str = "tcp";
        let Some(fixed) = bytes.get(..Self::MIN_LEN) else {
            return Err(WireError::Truncated {
                what: WHAT,
                need: Self::MIN_LEN,
                got: bytes.len(),
            });
        };
        let header_len = usize::from(fixed[12] >> 4) * 4;
        if header_len < Self::MIN_LEN {
            return Err(WireError::BadLength {
                what: WHAT,
                value: header_len,
            });
        }
        let Some(options) = bytes.get(Self::MIN_LEN..header_len) else {
            return Err(WireError::BadLength {
                what: WHAT,
                value: header_len,
            });
        };
        let (timestamps, sack) = parse_options(options)?;
        let header = TcpHeader {
            src_port: u16::from_be_bytes([fixed[0], fixed[1]]),
            dst_port: u16::from_be_bytes([fixed[2], fixed[3]]),
            seq: u32::from_be_bytes([fixed[4], fixed[5], fixed[6], fixed[7]]),
            ack: u32::from_be_bytes([fixed[8], fixed[9], fixed[10], fixed[11]]),
            flags: TcpFlags(fixed[13]),
            window: u16::from_be_bytes([fixed[14], fixed[15]]),
            timestamps,
            sack,
        };
        Ok((header, header_len))
    }

    /// Length of the encoded header, in bytes: 20, or 32 with timestamps, and
    /// [`SackOption::wire_len`] more with SACK blocks.
    #[expect(clippy::len_without_is_empty, reason = "a header is never empty")]
    pub fn len(&self) -> usize {
        let base = if self.timestamps.is_some() {
            Self::LEN_WITH_TIMESTAMPS
        } else {
            Self::MIN_LEN
        };
        base + SackOption::wire_len(self.sent_sack_blocks().len())
    }
}

/// Walks the options area of a TCP header and returns the first timestamps option's
/// (TSval, TSecr) and the first SACK option, checking every option's length.
fn parse_options(options: &[u8]) -> Result<(Option<(u32, u32)>, SackOption), WireError> {
    const WHAT: &str = "tcp";
    let mut timestamps = None;
    let mut sack = None;
    let mut rest = options;
    while let Some((&kind, after_kind)) = rest.split_first() {
        match kind {
            OPT_EOL => break,
            OPT_NOP => rest = after_kind,
            _ => {
                let Some(&len) = after_kind.first() else {
                    return Err(WireError::BadField {
                        what: WHAT,
                        field: "option kind",
                        value: u64::from(kind),
                    });
                };
                // The length counts the kind and length bytes themselves.
                let Some(option) = rest.get(..usize::from(len)).filter(|_| len >= 2) else {
                    return Err(WireError::BadField {
                        what: WHAT,
                        field: "option length",
                        value: u64::from(len),
                    });
                };
                if kind == OPT_TIMESTAMPS {
                    if len != OPT_TIMESTAMPS_LEN {
                        return Err(WireError::BadField {
                            what: WHAT,
                            field: "timestamps length",
                            value: u64::from(len),
                        });
                    }
                    if timestamps.is_none() {
                        let tsval =
                            u32::from_be_bytes([option[2], option[3], option[4], option[5]]);
                        let tsecr =
                            u32::from_be_bytes([option[6], option[7], option[8], option[9]]);
                        timestamps = Some((tsval, tsecr));
                    }
                }
                if kind == OPT_SACK {
                    let blocks = usize::from(len.saturating_sub(2)) / 8;
                    if usize::from(len) != 2 + 8 * blocks
                        || !(1..=SackOption::MAX).contains(&blocks)
                    {
                        return Err(WireError::BadField {
                            what: WHAT,
                            field: "sack length",
                            value: u64::from(len),
                        });
                    }
                    if sack.is_none() {
                        let word = |at: usize| {
                            u32::from_be_bytes([
                                option[at],
                                option[at + 1],
                                option[at + 2],
                                option[at + 3],
                            ])
                        };
                        sack = Some(SackOption::new(
                            (0..blocks).map(|k| (word(2 + 8 * k), word(6 + 8 * k))),
                        ));
                    }
                }
                rest = &rest[usize::from(len)..];
            }
        }
    }
    Ok((timestamps, sack.unwrap_or_default()))
}

/// The value of the TCP checksum field (RFC 9293 section 3.1) for the segment made of `header`
/// (the encoded header, options included; whatever its checksum field holds is taken as zero)
/// and `payload`, carried from `ip.src` to `ip.dst`. The pseudo-header's protocol is 6 and its
/// length is `header.len() + payload.len()`; `ip.protocol` and `ip.total_len` are not read.
///
/// Errors: a header shorter than 20 bytes is `Truncated`; a segment longer than 65535 bytes
/// is `BadLength`.
pub fn checksum(ip: &Ipv4Header, header: &[u8], payload: Payload<'_>) -> Result<u16, WireError> {
    let (before, after) = split_at_checksum(header)?;
    let mut sum = pseudo_header_sum(
        "tcp",
        ip,
        Ipv4Header::PROTOCOL_TCP,
        header.len() + payload.len(),
    )?;
    sum.add_bytes(before)
        .add_zeros(2)
        .add_bytes(after)
        .add_payload(payload);
    Ok(sum.finish())
}

/// Writes the TCP checksum of `header` and `payload` (see [`checksum`]) into `header`'s checksum
/// field.
pub fn fill_checksum(
    ip: &Ipv4Header,
    header: &mut [u8],
    payload: Payload<'_>,
) -> Result<(), WireError> {
    let sum = checksum(ip, header, payload)?;
    if let Some(field) = header.get_mut(CHECKSUM_OFFSET..CHECKSUM_OFFSET + 2) {
        field.copy_from_slice(&sum.to_be_bytes());
    }
    Ok(())
}

/// Checks the checksum field of `header` against the segment made of `header` and `payload`,
/// carried from `ip.src` to `ip.dst`: `Ok` if the whole segment with its pseudo-header sums to
/// 0xffff, `BadChecksum` if not, and the errors of [`checksum`].
pub fn verify_checksum(
    ip: &Ipv4Header,
    header: &[u8],
    payload: Payload<'_>,
) -> Result<(), WireError> {
    split_at_checksum(header)?;
    let mut sum = pseudo_header_sum(
        "tcp",
        ip,
        Ipv4Header::PROTOCOL_TCP,
        header.len() + payload.len(),
    )?;
    sum.add_bytes(header).add_payload(payload);
    if sum.finish() == 0 {
        Ok(())
    } else {
        Err(WireError::BadChecksum { what: "tcp" })
    }
}

/// The header bytes before and after the checksum field, or `Truncated` if there are fewer than
/// 20 bytes.
fn split_at_checksum(header: &[u8]) -> Result<(&[u8], &[u8]), WireError> {
    if header.len() < TcpHeader::MIN_LEN {
        return Err(WireError::Truncated {
            what: "tcp",
            need: TcpHeader::MIN_LEN,
            got: header.len(),
        });
    }
    Ok((&header[..CHECKSUM_OFFSET], &header[CHECKSUM_OFFSET + 2..]))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::Ecn;
    use std::net::Ipv4Addr;

    /// 49152 -> 80, seq 0x01020304, ack 0xa0b0c0d0, ACK|ECE|CWR, window 65535, with timestamps.
    fn sample() -> TcpHeader {
        TcpHeader {
            src_port: 49152,
            dst_port: 80,
            seq: 0x0102_0304,
            ack: 0xa0b0_c0d0,
            flags: TcpFlags::ACK | TcpFlags::ECE | TcpFlags::CWR,
            window: 0xffff,
            timestamps: Some((0x1122_3344, 0x5566_7788)),
            sack: SackOption::default(),
        }
    }

    const SAMPLE_BYTES: [u8; 32] = [
        0xc0, 0x00, 0x00, 0x50, // ports
        0x01, 0x02, 0x03, 0x04, // seq
        0xa0, 0xb0, 0xc0, 0xd0, // ack
        0x80, 0xd0, 0xff, 0xff, // data offset 8, CWR|ECE|ACK, window
        0x00, 0x00, 0x00, 0x00, // checksum, urgent pointer
        0x01, 0x01, 0x08, 0x0a, // NOP, NOP, timestamps kind 8 length 10
        0x11, 0x22, 0x33, 0x44, // TSval
        0x55, 0x66, 0x77, 0x88, // TSecr
    ];

    fn ip() -> Ipv4Header {
        Ipv4Header {
            src: Ipv4Addr::new(10, 0, 0, 1),
            dst: Ipv4Addr::new(10, 0, 0, 2),
            dscp: 0,
            ecn: Ecn::Ect0,
            id: 1,
            ttl: 64,
            protocol: Ipv4Header::PROTOCOL_TCP,
            total_len: 40,
        }
    }

    fn encoded(h: &TcpHeader) -> Vec<u8> {
        let mut out = Vec::new();
        h.encode(&mut out);
        out
    }

    /// The sample header without timestamps, followed by the options area `options` (a multiple
    /// of 4 bytes) and a data offset that covers it.
    fn with_options(options: &[u8]) -> Vec<u8> {
        let mut bytes = encoded(&TcpHeader {
            timestamps: None,
            ..sample()
        });
        bytes[12] = (((20 + options.len()) / 4) as u8) << 4;
        bytes.extend_from_slice(options);
        bytes
    }

    #[test]
    fn encodes_the_hand_written_bytes() {
        assert_eq!(encoded(&sample()), SAMPLE_BYTES);
        assert_eq!(sample().len(), 32);
    }

    #[test]
    fn without_timestamps_the_header_is_twenty_bytes_with_offset_five() {
        let h = TcpHeader {
            timestamps: None,
            ..sample()
        };
        let bytes = encoded(&h);
        let mut expected = SAMPLE_BYTES[..20].to_vec();
        expected[12] = 0x50;
        assert_eq!(bytes, expected);
        assert_eq!(h.len(), 20);
        assert_eq!(TcpHeader::decode(&bytes), Ok((h, 20)));
    }

    #[test]
    fn decodes_the_hand_written_bytes_and_leaves_the_payload() {
        let mut bytes = SAMPLE_BYTES.to_vec();
        bytes.extend_from_slice(b"data");
        assert_eq!(TcpHeader::decode(&bytes), Ok((sample(), 32)));
    }

    #[test]
    fn other_options_are_skipped_by_length() {
        // MSS 1460, window scale 7, SACK permitted, timestamps, EOL and padding after it.
        let options = [
            2, 4, 0x05, 0xb4, 3, 3, 7, 4, 2, 8, 10, 0, 0, 0, 9, 0, 0, 0, 3, 0, 0xff, 0xff, 0xff,
            0xff,
        ];
        let (h, len) = TcpHeader::decode(&with_options(&options)).expect("valid options");
        assert_eq!(len, 44);
        assert_eq!(h.timestamps, Some((9, 3)));
    }

    #[test]
    fn sack_blocks_follow_the_timestamps_after_two_nops() {
        let h = TcpHeader {
            sack: SackOption::new([(0x0000_1000, 0x0000_2000), (0xffff_f000, 0x0000_0010)]),
            ..sample()
        };
        let mut expected = SAMPLE_BYTES.to_vec();
        // Data offset 13: 20 + 12 of timestamps + 4 + 2 x 8 of SACK = 52 bytes.
        expected[12] = 0xd0;
        expected.extend_from_slice(&[
            0x01, 0x01, 0x05, 0x12, // NOP, NOP, SACK kind 5 length 18
            0x00, 0x00, 0x10, 0x00, 0x00, 0x00, 0x20, 0x00, // first block
            0xff, 0xff, 0xf0, 0x00, 0x00, 0x00, 0x00, 0x10, // second block
        ]);
        assert_eq!(encoded(&h), expected);
        assert_eq!(h.len(), 52);
        assert_eq!(TcpHeader::decode(&expected), Ok((h, 52)));
    }

    #[test]
    fn four_sack_blocks_fit_without_timestamps_and_three_beside_them() {
        let four = SackOption::new([(1, 2), (3, 4), (5, 6), (7, 8), (9, 10)]);
        assert_eq!(four.blocks().len(), 4, "the fifth is not kept");
        let bare = TcpHeader {
            timestamps: None,
            sack: four,
            ..sample()
        };
        assert_eq!(bare.len(), 20 + 4 + 32);
        assert_eq!(TcpHeader::decode(&encoded(&bare)), Ok((bare, 56)));
        let stamped = TcpHeader {
            sack: four,
            ..sample()
        };
        assert_eq!(
            stamped.len(),
            60,
            "the option area's 40 bytes hold three blocks"
        );
        let (back, len) = TcpHeader::decode(&encoded(&stamped)).expect("decodes");
        assert_eq!(len, 60);
        assert_eq!(back.sack.blocks(), &[(1, 2), (3, 4), (5, 6)]);
        assert_eq!(
            [0, 1, 2, 3, 4].map(SackOption::wire_len),
            [0, 12, 20, 28, 36]
        );
    }

    #[test]
    fn a_sack_option_of_a_length_not_two_plus_eight_n_is_refused() {
        for len in [2u8, 9, 11, 42] {
            let mut options = vec![5, len];
            options.resize(44, 0);
            let e = TcpHeader::decode(&with_options(&options[..40])).expect_err("bad length");
            assert!(
                matches!(
                    e,
                    WireError::BadField {
                        field: "sack length",
                        ..
                    } | WireError::BadField {
                        field: "option length",
                        ..
                    }
                ),
                "{len}: {e:?}"
            );
        }
        let e = TcpHeader::decode(&with_options(&[1, 1, 5, 9, 0, 0, 0, 0, 0, 0, 0, 0]))
            .expect_err("length 9");
        assert_eq!(
            e,
            WireError::BadField {
                what: "tcp",
                field: "sack length",
                value: 9
            }
        );
    }

    #[test]
    fn an_eol_ends_the_options() {
        // Garbage after EOL is padding and is not read.
        let (h, len) = TcpHeader::decode(&with_options(&[0, 8, 3, 0])).expect("valid options");
        assert_eq!((h.timestamps, len), (None, 24));
    }

    #[test]
    fn nineteen_bytes_are_truncated() {
        assert_eq!(
            TcpHeader::decode(&SAMPLE_BYTES[..19]),
            Err(WireError::Truncated {
                what: "tcp",
                need: 20,
                got: 19
            })
        );
    }

    #[test]
    fn a_data_offset_below_five_is_a_bad_length() {
        let mut bytes = SAMPLE_BYTES;
        bytes[12] = 0x40;
        assert_eq!(
            TcpHeader::decode(&bytes),
            Err(WireError::BadLength {
                what: "tcp",
                value: 16
            })
        );
    }

    #[test]
    fn a_data_offset_beyond_the_buffer_is_a_bad_length() {
        assert_eq!(
            TcpHeader::decode(&SAMPLE_BYTES[..31]),
            Err(WireError::BadLength {
                what: "tcp",
                value: 32
            })
        );
    }

    #[test]
    fn malformed_option_lengths_are_bad_fields() {
        let length = |value| {
            Err(WireError::BadField {
                what: "tcp",
                field: "option length",
                value,
            })
        };
        // Length 0 and 1 cannot cover kind and length.
        assert_eq!(TcpHeader::decode(&with_options(&[2, 0, 0, 0])), length(0));
        assert_eq!(TcpHeader::decode(&with_options(&[1, 5, 1, 0])), length(1));
        // Length 5 runs past a 4-byte options area.
        assert_eq!(TcpHeader::decode(&with_options(&[1, 2, 5, 0])), length(5));
        // A kind in the last byte has no length byte.
        assert_eq!(
            TcpHeader::decode(&with_options(&[1, 1, 1, 2])),
            Err(WireError::BadField {
                what: "tcp",
                field: "option kind",
                value: 2
            })
        );
        // Timestamps must be 10 bytes long.
        assert_eq!(
            TcpHeader::decode(&with_options(&[8, 8, 0, 0, 0, 0, 0, 0])),
            Err(WireError::BadField {
                what: "tcp",
                field: "timestamps length",
                value: 8
            })
        );
    }

    #[test]
    fn the_checksum_matches_a_hand_computed_syn() {
        // 10.0.0.1:49152 -> 10.0.0.2:80, SYN, seq 1, window 29200, no options, no payload.
        // Pseudo-header words: 0a00 0001 0a00 0002 0006 0014 sum to 141d; header words
        // c000 0050 0000 0001 0000 0000 5002 7210 0000 0000 bring it to 19680;
        // fold 9680 + 1 = 9681; complement 697e.
        let syn = TcpHeader {
            src_port: 49152,
            dst_port: 80,
            seq: 1,
            ack: 0,
            flags: TcpFlags::SYN,
            window: 29200,
            timestamps: None,
            sack: SackOption::default(),
        };
        let mut bytes = encoded(&syn);
        assert_eq!(checksum(&ip(), &bytes, Payload::Zeros(0)), Ok(0x697e));
        // Three zero bytes of payload only lengthen the pseudo-header: 19683 -> 9684 -> 697b.
        assert_eq!(checksum(&ip(), &bytes, Payload::Zeros(3)), Ok(0x697b));
        assert_eq!(
            checksum(&ip(), &bytes, Payload::Bytes(&[0, 0, 0])),
            Ok(0x697b)
        );
        fill_checksum(&ip(), &mut bytes, Payload::Zeros(0)).expect("fits");
        assert_eq!(&bytes[16..18], &[0x69, 0x7e]);
        // Whatever the field holds is ignored when computing.
        assert_eq!(checksum(&ip(), &bytes, Payload::Zeros(0)), Ok(0x697e));
        assert_eq!(verify_checksum(&ip(), &bytes, Payload::Zeros(0)), Ok(()));
    }

    #[test]
    fn verification_catches_a_changed_byte_in_header_payload_or_addresses() {
        let mut bytes = encoded(&sample());
        let payload = [7u8, 8, 9, 10, 11];
        fill_checksum(&ip(), &mut bytes, Payload::Bytes(&payload)).expect("fits");
        assert_eq!(
            verify_checksum(&ip(), &bytes, Payload::Bytes(&payload)),
            Ok(())
        );
        let bad = Err(WireError::BadChecksum { what: "tcp" });
        assert_eq!(
            verify_checksum(&ip(), &bytes, Payload::Bytes(&[7, 8, 9, 10, 12])),
            bad
        );
        let moved = Ipv4Header {
            dst: Ipv4Addr::new(10, 0, 0, 3),
            ..ip()
        };
        assert_eq!(
            verify_checksum(&moved, &bytes, Payload::Bytes(&payload)),
            bad
        );
        bytes[5] ^= 0x80;
        assert_eq!(
            verify_checksum(&ip(), &bytes, Payload::Bytes(&payload)),
            bad
        );
    }

    #[test]
    fn checksum_needs_a_whole_header_and_a_segment_that_fits_ipv4() {
        assert_eq!(
            checksum(&ip(), &SAMPLE_BYTES[..19], Payload::Zeros(0)),
            Err(WireError::Truncated {
                what: "tcp",
                need: 20,
                got: 19
            })
        );
        assert_eq!(
            verify_checksum(&ip(), &SAMPLE_BYTES, Payload::Zeros(65_504)),
            Err(WireError::BadLength {
                what: "tcp",
                value: 65_536
            })
        );
        assert!(checksum(&ip(), &SAMPLE_BYTES, Payload::Zeros(65_503)).is_ok());
    }

    #[test]
    fn flags_combine_and_test() {
        let f = TcpFlags::SYN | TcpFlags::ECE | TcpFlags::CWR;
        assert!(f.contains(TcpFlags::ECE | TcpFlags::CWR));
        assert!(!f.contains(TcpFlags::ACK));
    }
}
