//! Classic libpcap capture files with nanosecond timestamps, Ethernet link type.
//!
//! The file is a 24-byte global header followed by one record per frame, each a 16-byte record
//! header and the captured bytes; every field is little-endian. The magic number 0xa1b23c4d
//! (rather than 0xa1b2c3d4) tells readers that the second timestamp field counts nanoseconds,
//! not microseconds. Timestamps are the simulation's [`Instant`]s, so a trace starts at the Unix
//! epoch, 1970-01-01 00:00:00 UTC, when the run starts at zero.

use concord_cc::time::{Instant, NANOS_PER_SEC};
use std::io::{self, Write};

/// Magic number of a pcap file with nanosecond timestamps.
pub const MAGIC_NANOS: u32 = 0xa1b2_3c4d;
/// File format version, major part.
pub const VERSION_MAJOR: u16 = 2;
/// File format version, minor part.
pub const VERSION_MINOR: u16 = 4;
/// Link type of Ethernet II frames (LINKTYPE_ETHERNET).
pub const LINKTYPE_ETHERNET: u32 = 1;
/// Length of the global header, in bytes.
pub const GLOBAL_HEADER_LEN: usize = 24;
/// Length of a record header, in bytes.
pub const RECORD_HEADER_LEN: usize = 16;

/// Writes frames to a pcap capture as they come.
///
/// Wrap a file in a [`std::io::BufWriter`] before handing it over: every record is two writes.
#[derive(Debug)]
pub struct PcapWriter<W: Write> {
    out: W,
    snaplen: u32,
}

impl<W: Write> PcapWriter<W> {
    /// Starts a capture on `out` whose records keep at most `snaplen` bytes of each frame, and
    /// writes its global header: magic 0xa1b23c4d, version 2.4, time zone 0, accuracy 0,
    /// `snaplen`, link type 1 (Ethernet).
    ///
    /// A `snaplen` of 0 is an `InvalidInput` error, since it would keep nothing; write errors
    /// of `out` are returned as they are.
    pub fn new(mut out: W, snaplen: u32) -> io::Result<Self> {
        if snaplen == 0 {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "pcap snap length must be at least 1 byte",
            ));
        }
        let mut header = [0u8; GLOBAL_HEADER_LEN];
        header[0..4].copy_from_slice(&MAGIC_NANOS.to_le_bytes());
        header[4..6].copy_from_slice(&VERSION_MAJOR.to_le_bytes());
        header[6..8].copy_from_slice(&VERSION_MINOR.to_le_bytes());
        // thiszone (GMT offset, seconds) and sigfigs (timestamp accuracy) are both 0, as
        // every writer sets them.
        header[16..20].copy_from_slice(&snaplen.to_le_bytes());
        header[20..24].copy_from_slice(&LINKTYPE_ETHERNET.to_le_bytes());
        out.write_all(&header)?;
        Ok(PcapWriter { out, snaplen })
    }

    /// The most bytes of a frame a record keeps.
    pub fn snaplen(&self) -> u32 {
        self.snaplen
    }

    /// Writes one record: the frame seen at `ts`, of which `frame` holds the first bytes and
    /// which was `orig_len` bytes long on the wire. At most `snaplen` bytes of `frame` are kept
    /// (the record's captured length); `orig_len` is written as given.
    ///
    /// Errors, with nothing written: `InvalidInput` if `orig_len` is less than the bytes kept,
    /// or if `ts` lies more than 2^32 - 1 seconds after the origin (the record's 32-bit seconds
    /// field). Write errors of the underlying writer are returned as they are, and may leave a
    /// partial record.
    pub fn write_frame(&mut self, ts: Instant, frame: &[u8], orig_len: u32) -> io::Result<()> {
        let kept = frame.len().min(self.snaplen as usize);
        // kept <= snaplen, a u32.
        let incl_len = kept as u32;
        if orig_len < incl_len {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("pcap record: original length {orig_len} is less than the {incl_len} bytes captured"),
            ));
        }
        let nanos = ts.as_nanos();
        let Ok(secs) = u32::try_from(nanos / NANOS_PER_SEC) else {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("pcap record: timestamp {ts:?} does not fit 32-bit seconds"),
            ));
        };
        // The remainder is below 10^9, which fits 32 bits.
        let subsec_nanos = (nanos % NANOS_PER_SEC) as u32;
        let mut header = [0u8; RECORD_HEADER_LEN];
        header[0..4].copy_from_slice(&secs.to_le_bytes());
        header[4..8].copy_from_slice(&subsec_nanos.to_le_bytes());
        header[8..12].copy_from_slice(&incl_len.to_le_bytes());
        header[12..16].copy_from_slice(&orig_len.to_le_bytes());
        self.out.write_all(&header)?;
        self.out.write_all(&frame[..kept])
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

    #[test]
    fn the_global_header_is_nanosecond_pcap_for_ethernet() {
        let w = PcapWriter::new(Vec::new(), 262_144).expect("a Vec accepts writes");
        assert_eq!(w.snaplen(), 262_144);
        #[rustfmt::skip]
        let expected = [
            0x4d, 0x3c, 0xb2, 0xa1, // magic 0xa1b23c4d, little-endian
            0x02, 0x00, 0x04, 0x00, // version 2.4
            0x00, 0x00, 0x00, 0x00, // thiszone 0
            0x00, 0x00, 0x00, 0x00, // sigfigs 0
            0x00, 0x00, 0x04, 0x00, // snaplen 262144
            0x01, 0x00, 0x00, 0x00, // link type 1, Ethernet
        ];
        assert_eq!(w.into_inner(), expected);
    }

    #[test]
    fn a_record_holds_seconds_nanoseconds_lengths_and_the_kept_bytes() {
        let mut w = PcapWriter::new(Vec::new(), 4).expect("a Vec accepts writes");
        // 3 s + 123456789 ns; a 6-byte frame of a 60-byte original, cut to the 4-byte snap length.
        w.write_frame(Instant::from_nanos(3_123_456_789), &[1, 2, 3, 4, 5, 6], 60)
            .expect("valid record");
        w.flush().expect("a Vec flushes");
        let bytes = w.into_inner();
        #[rustfmt::skip]
        let expected = [
            0x03, 0x00, 0x00, 0x00, // 3 s
            0x15, 0xcd, 0x5b, 0x07, // 123456789 ns = 0x075bcd15
            0x04, 0x00, 0x00, 0x00, // captured length 4
            0x3c, 0x00, 0x00, 0x00, // original length 60
            1, 2, 3, 4,
        ];
        assert_eq!(&bytes[GLOBAL_HEADER_LEN..], expected);
    }

    #[test]
    fn a_short_frame_is_kept_whole() {
        let mut w = PcapWriter::new(Vec::new(), 65_535).expect("a Vec accepts writes");
        w.write_frame(Instant::ZERO, &[9; 42], 42)
            .expect("valid record");
        let bytes = w.into_inner();
        assert_eq!(bytes.len(), GLOBAL_HEADER_LEN + RECORD_HEADER_LEN + 42);
        assert_eq!(&bytes[32..40], &[42, 0, 0, 0, 42, 0, 0, 0]);
    }

    #[test]
    fn bad_records_are_refused_and_write_nothing() {
        let mut w = PcapWriter::new(Vec::new(), 100).expect("a Vec accepts writes");
        let short = w
            .write_frame(Instant::ZERO, &[0; 10], 9)
            .expect_err("orig_len below captured");
        assert_eq!(short.kind(), io::ErrorKind::InvalidInput);
        let late = Instant::from_secs(u64::from(u32::MAX) + 1);
        let far = w
            .write_frame(late, &[0; 10], 10)
            .expect_err("seconds overflow");
        assert_eq!(far.kind(), io::ErrorKind::InvalidInput);
        assert!(w
            .write_frame(Instant::from_nanos(late.as_nanos() - 1), &[0; 10], 10)
            .is_ok());
        assert_eq!(
            w.into_inner().len(),
            GLOBAL_HEADER_LEN + RECORD_HEADER_LEN + 10
        );
    }

    #[test]
    fn a_zero_snap_length_is_refused() {
        let err = PcapWriter::new(Vec::new(), 0).expect_err("snaplen 0");
        assert_eq!(err.kind(), io::ErrorKind::InvalidInput);
    }
}
