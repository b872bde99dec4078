//! pcapng capture files (draft-ietf-opsawg-pcapng, "PCAP Next Generation Capture File
//! Format"): one section whose header carries a comment, one Ethernet interface with a name
//! and a description, nanosecond timestamps, and one Enhanced Packet Block per frame.
//!
//! Every block is little-endian: block type (4 bytes), block total length (4), the body padded
//! to 32 bits, the block total length again. Options are (code: 2 bytes, length: 2, value
//! padded to 32 bits), ended by `opt_endofopt` (code 0, length 0). Timestamps are the
//! simulation's [`Instant`]s in nanoseconds (`if_tsresol` = 9) as a 64-bit count split into
//! high and low 32-bit words, so a trace starts at the Unix epoch when the run starts at zero.

use concord_cc::time::Instant;
use std::io::{self, Write};

/// Block type of the Section Header Block (section 4.1).
pub const BLOCK_SECTION_HEADER: u32 = 0x0A0D_0D0A;
/// Block type of the Interface Description Block (section 4.2).
pub const BLOCK_INTERFACE: u32 = 0x0000_0001;
/// Block type of the Enhanced Packet Block (section 4.3).
pub const BLOCK_ENHANCED_PACKET: u32 = 0x0000_0006;
/// The byte-order magic of a section header.
pub const BYTE_ORDER_MAGIC: u32 = 0x1A2B_3C4D;
/// Link type of Ethernet II frames (LINKTYPE_ETHERNET).
pub const LINKTYPE_ETHERNET: u16 = 1;

/// `opt_comment` (section 3.5): UTF-8 text, in any block.
const OPT_COMMENT: u16 = 1;
/// `shb_userappl` (section 4.1): the application that wrote the section.
const OPT_SHB_USERAPPL: u16 = 4;
/// `if_name` (section 4.2): the interface's name.
const OPT_IF_NAME: u16 = 2;
/// `if_description` (section 4.2): a description of the interface.
const OPT_IF_DESCRIPTION: u16 = 3;
/// `if_tsresol` (section 4.2): timestamp resolution; 9 means 10^-9 s.
const OPT_IF_TSRESOL: u16 = 9;

/// What the section and its interface say about themselves.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Description {
    /// The section comment (`opt_comment` of the section header).
    pub comment: String,
    /// The application that wrote the file (`shb_userappl`).
    pub application: String,
    /// The interface's name (`if_name`).
    pub interface: String,
    /// The interface's description (`if_description`).
    pub interface_description: String,
}

/// Writes frames to a pcapng capture of one Ethernet interface as they come.
///
/// Wrap a file in a [`std::io::BufWriter`] before handing it over: every block is a few writes.
#[derive(Debug)]
pub struct PcapngWriter<W: Write> {
    out: W,
    snaplen: u32,
}

/// Appends option `code` with `value`, padded to 32 bits. Values longer than 65535 bytes are
/// cut at a character boundary.
fn option(body: &mut Vec<u8>, code: u16, value: &[u8]) {
    let len = value.len().min(usize::from(u16::MAX));
    body.extend_from_slice(&code.to_le_bytes());
    body.extend_from_slice(&(len as u16).to_le_bytes());
    body.extend_from_slice(&value[..len]);
    body.resize(body.len() + pad(len), 0);
}

/// A UTF-8 option value: `text` cut to 65535 bytes at a character boundary.
fn text_option(body: &mut Vec<u8>, code: u16, text: &str) {
    if text.is_empty() {
        return;
    }
    let mut end = text.len().min(usize::from(u16::MAX));
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    option(body, code, &text.as_bytes()[..end]);
}

/// Bytes of padding after `len` bytes to reach a multiple of 4.
fn pad(len: usize) -> usize {
    (4 - len % 4) % 4
}

/// Writes a block of type `block_type` around `body` (already padded to 32 bits).
fn write_block(out: &mut impl Write, block_type: u32, body: &[u8]) -> io::Result<()> {
    let total = u32::try_from(12 + body.len())
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "pcapng block above 4 GiB"))?;
    out.write_all(&block_type.to_le_bytes())?;
    out.write_all(&total.to_le_bytes())?;
    out.write_all(body)?;
    out.write_all(&total.to_le_bytes())
}

impl<W: Write> PcapngWriter<W> {
    /// Starts a capture on `out` whose records keep at most `snaplen` bytes of each frame:
    /// writes the section header (version 1.0, section length unknown, the comment and the
    /// application) and the interface description (Ethernet, `snaplen`, name, description,
    /// nanosecond timestamps).
    ///
    /// A `snaplen` of 0 is an `InvalidInput` error, since it would keep nothing; write errors
    /// of `out` are returned as they are.
    pub fn new(mut out: W, snaplen: u32, about: &Description) -> io::Result<Self> {
        if snaplen == 0 {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "pcapng snap length must be at least 1 byte",
            ));
        }
        let mut body = Vec::with_capacity(128);
        body.extend_from_slice(&BYTE_ORDER_MAGIC.to_le_bytes());
        body.extend_from_slice(&1u16.to_le_bytes()); // major version
        body.extend_from_slice(&0u16.to_le_bytes()); // minor version
        body.extend_from_slice(&(-1i64).to_le_bytes()); // section length: not given
        text_option(&mut body, OPT_COMMENT, &about.comment);
        text_option(&mut body, OPT_SHB_USERAPPL, &about.application);
        option(&mut body, 0, &[]);
        write_block(&mut out, BLOCK_SECTION_HEADER, &body)?;

        body.clear();
        body.extend_from_slice(&LINKTYPE_ETHERNET.to_le_bytes());
        body.extend_from_slice(&0u16.to_le_bytes()); // reserved
        body.extend_from_slice(&snaplen.to_le_bytes());
        text_option(&mut body, OPT_IF_NAME, &about.interface);
        text_option(&mut body, OPT_IF_DESCRIPTION, &about.interface_description);
        option(&mut body, OPT_IF_TSRESOL, &[9]);
        option(&mut body, 0, &[]);
        write_block(&mut out, BLOCK_INTERFACE, &body)?;
        Ok(PcapngWriter { out, snaplen })
    }

    /// The most bytes of a frame a record keeps.
    pub fn snaplen(&self) -> u32 {
        self.snaplen
    }

    /// Writes one Enhanced Packet Block on interface 0: the frame seen at `ts`, of which
    /// `frame` holds the first bytes and which was `orig_len` bytes long on the wire. At most
    /// `snaplen` bytes of `frame` are kept.
    ///
    /// Errors, with nothing written: `InvalidInput` if `orig_len` is less than the bytes kept.
    /// Write errors of the underlying writer are returned as they are, and may leave a
    /// partial block.
    pub fn write_frame(&mut self, ts: Instant, frame: &[u8], orig_len: u32) -> io::Result<()> {
        let kept = frame.len().min(self.snaplen as usize);
        let captured = kept as u32;
        if orig_len < captured {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("pcapng record: original length {orig_len} is less than the {captured} bytes captured"),
            ));
        }
        let nanos = ts.as_nanos();
        let total = (12 + 20 + kept + pad(kept)) as u32;
        let mut head = [0u8; 28];
        head[0..4].copy_from_slice(&BLOCK_ENHANCED_PACKET.to_le_bytes());
        head[4..8].copy_from_slice(&total.to_le_bytes());
        // Interface 0; the timestamp's high word, then its low word.
        head[12..16].copy_from_slice(&((nanos >> 32) as u32).to_le_bytes());
        head[16..20].copy_from_slice(&(nanos as u32).to_le_bytes());
        head[20..24].copy_from_slice(&captured.to_le_bytes());
        head[24..28].copy_from_slice(&orig_len.to_le_bytes());
        self.out.write_all(&head)?;
        self.out.write_all(&frame[..kept])?;
        self.out.write_all(&[0u8; 3][..pad(kept)])?;
        self.out.write_all(&total.to_le_bytes())
    }

    /// Flushes the underlying writer.
    pub fn flush(&mut self) -> io::Result<()> {
        self.out.flush()
    }

    /// The underlying writer, not flushed.
    pub fn into_inner(self) -> W {
        self.out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn about() -> Description {
        Description {
            comment: "run".into(),
            application: "c".into(),
            interface: "a->b".into(),
            interface_description: String::new(),
        }
    }

    #[test]
    fn the_section_and_interface_blocks_carry_their_options() {
        let w = PcapngWriter::new(Vec::new(), 65_535, &about()).expect("a Vec accepts writes");
        #[rustfmt::skip]
        let expected: Vec<u8> = [
            // Section header: type, length 48, magic, version 1.0, section length -1.
            &[0x0a, 0x0d, 0x0d, 0x0a, 48, 0, 0, 0, 0x4d, 0x3c, 0x2b, 0x1a, 1, 0, 0, 0][..],
            &[0xff; 8],
            &[1, 0, 3, 0, b'r', b'u', b'n', 0], // opt_comment "run", padded
            &[4, 0, 1, 0, b'c', 0, 0, 0],       // shb_userappl "c", padded
            &[0, 0, 0, 0],                      // opt_endofopt
            &[48, 0, 0, 0],
            // Interface: type 1, length 40, Ethernet, reserved, snaplen 65535.
            &[1, 0, 0, 0, 40, 0, 0, 0, 1, 0, 0, 0, 0xff, 0xff, 0, 0],
            &[2, 0, 4, 0, b'a', b'-', b'>', b'b'], // if_name "a->b", no padding needed
            &[9, 0, 1, 0, 9, 0, 0, 0],             // if_tsresol 10^-9
            &[0, 0, 0, 0],
            &[40, 0, 0, 0],
        ]
        .concat();
        assert_eq!(w.into_inner(), expected);
    }

    #[test]
    fn a_packet_block_holds_a_64_bit_nanosecond_time_and_padded_bytes() {
        let mut w = PcapngWriter::new(Vec::new(), 5, &about()).expect("a Vec accepts writes");
        let start = w.out.len();
        // 5 s + 7 ns = 5_000_000_007 ns = 0x1_2A05_F207; a 6-byte frame of 60, cut to 5.
        w.write_frame(Instant::from_nanos(5_000_000_007), &[1, 2, 3, 4, 5, 6], 60)
            .expect("valid record");
        let bytes = w.into_inner();
        #[rustfmt::skip]
        let expected = [
            6, 0, 0, 0, 40, 0, 0, 0, // type 6, length 12 + 20 + 8
            0, 0, 0, 0,              // interface 0
            1, 0, 0, 0,              // timestamp high
            0x07, 0xf2, 0x05, 0x2a,  // timestamp low
            5, 0, 0, 0, 60, 0, 0, 0, // captured 5, original 60
            1, 2, 3, 4, 5, 0, 0, 0,  // the bytes, padded
            40, 0, 0, 0,
        ];
        assert_eq!(&bytes[start..], expected);
    }

    #[test]
    fn bad_records_are_refused_and_write_nothing() {
        let mut w = PcapngWriter::new(Vec::new(), 100, &about()).expect("a Vec accepts writes");
        let start = w.out.len();
        let err = w
            .write_frame(Instant::ZERO, &[0; 10], 9)
            .expect_err("orig_len below captured");
        assert_eq!(err.kind(), io::ErrorKind::InvalidInput);
        assert_eq!(w.into_inner().len(), start);
        let zero = PcapngWriter::new(Vec::new(), 0, &about()).expect_err("snaplen 0");
        assert_eq!(zero.kind(), io::ErrorKind::InvalidInput);
    }
}
