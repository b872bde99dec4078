//! The CP header: the shim between IP and the transport header that carries an application's
//! identity, the aggregation points' network probes and the feedback to endpoints (slides,
//! Fig. 2 and Fig. 3).
//!
//! # Byte layout (version 1, big-endian)
//!
//! A fixed part of 12 bytes, then the optional parts the flags announce, in this order.
//!
//! ```text
//!  0                   1                   2                   3
//!  0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
//! +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//! |  version = 1  |0 0 0 C F L E P|         header length         |  fixed part
//! +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//! |                        application id                         |
//! +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//! |                            flow id                            |
//! +=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+
//! |                        sequence number                        |  P: probe
//! +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+     (8 bytes)
//! |                        timestamp (us)                         |
//! +=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+
//! |                      timestamp echo (us)                      |  E: echo
//! +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+     (8 bytes)
//! |                        echo delay (us)                        |
//! +=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+
//! |                   settled through (sequence)                  |  L: loss report
//! +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+     (6 + 6 * n bytes)
//! |   gap count n |  reserved = 0 |  gap 1 start ...
//! +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//! |  ... gap 1 start              |         gap 1 length          |  (n times)
//! +=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+
//! |          available bandwidth (kbit/s, unsigned 24.8)          |  F: feedback to
//! +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+     endpoints
//! |              aggregate loss rate (unsigned 1.31)              |     (12 bytes)
//! +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//! |                           RTT (us)                            |
//! +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//! ```
//!
//! - **version**: 1 ([`VERSION`]); anything else is [`CpHeaderError::BadVersion`].
//! - **flags** (bit 0 the least significant): P = 0x01 probe, E = 0x02 echo, L = 0x04 loss
//!   report, F = 0x08 feedback to endpoints, C = 0x10 control (no transport payload follows: an
//!   explicit feedback message between aggregation points, or a notification from an
//!   aggregation point to an endpoint). Bits 0xE0 are reserved and must be 0. A control header
//!   carries no probe (it is not part of the aggregate) and at least one of E, L, F. Anything
//!   else is [`CpHeaderError::BadFlags`].
//! - **header length**: the bytes of the whole CP header, optional parts included; it must be
//!   the length the flags and the gap count imply ([`CpHeaderError::LengthMismatch`]). The fixed
//!   part and the probe together are 20 bytes, the size of the CP header the slides'
//!   implementation nests in UDP payloads ("IMPLEMENTATION AND EVALUATION").
//! - **sequence number**: the low 32 bits of the local aggregation point's 64-bit per-application
//!   packet counter, one more per packet of the aggregate (loss detection, slides "To detect
//!   loss"). Receivers extend it to 64 bits ([`extend_seq`]).
//! - **timestamp**, **timestamp echo**: the low 32 bits of the sending aggregation point's clock
//!   in microseconds ([`timestamp_micros`]); they wrap every 71.6 minutes, and the RTT
//!   arithmetic is done modulo 2^32 (RTT = current time - timestamp echo - echo delay, slides
//!   "To measure RTT").
//! - **echo delay**: microseconds between the receipt of the echoed timestamp and the sending of
//!   this header, saturating at 2^32 - 1.
//! - **loss report**: every sequence number up to and including *settled through* is settled at
//!   the remote aggregation point: it arrived, or it lies in a gap listed in this report or an
//!   earlier one. Each gap is a run of lost sequence numbers `start .. start + length - 1`
//!   (length 1 to 65535; 0 is [`CpHeaderError::ValueOutOfRange`]), most recent first, at most
//!   [`MAX_GAPS`].
//! - **available bandwidth**: unsigned fixed point with 8 fractional bits, in kbit/s: the bit
//!   rate is `raw * 1000 / 256` bit/s, so the resolution is 3.90625 bit/s and the largest value
//!   (2^32 - 1) / 256 kbit/s = 16.78 Gbit/s; larger rates are sent as the largest value.
//! - **aggregate loss rate**: unsigned fixed point with 31 fractional bits: the fraction is
//!   `raw / 2^31`, resolution 4.66e-10; raw values above 2^31 (fractions above 1) are
//!   [`CpHeaderError::ValueOutOfRange`].
//! - **RTT**: microseconds, 0 while the aggregation point has no estimate; saturating.
//!
//! # Quantisation
//!
//! [`CpHeader`] holds the wire values of the identifiers, sequence numbers and timestamps as
//! they are (so a simulator that moves the struct behaves as the bytes would), and the
//! endpoint feedback in natural units ([`Rate`], a fraction, [`Duration`]). Encoding rounds
//! those three to the nearest representable value (bandwidth and RTT saturate, the loss rate is
//! clamped to [0, 1] and NaN becomes 0); [`CpHeader::quantised`] gives the result, so
//! `decode(encode(x)) == x.quantised()` for every header `encode` accepts, and
//! `x.quantised().quantised() == x.quantised()`.

use crate::time::{Duration, Instant};
use crate::units::Rate;

/// The CP header version this codec speaks.
pub const VERSION: u8 = 1;
/// Flag P: a probe (sequence number and timestamp) follows.
pub const FLAG_PROBE: u8 = 0x01;
/// Flag E: a timestamp echo and echo delay follow.
pub const FLAG_ECHO: u8 = 0x02;
/// Flag L: a loss report follows.
pub const FLAG_REPORT: u8 = 0x04;
/// Flag F: feedback to endpoints (bandwidth, loss rate, RTT) follows.
pub const FLAG_ENDPOINT: u8 = 0x08;
/// Flag C: a control message; no transport payload follows the CP header.
pub const FLAG_CONTROL: u8 = 0x10;
/// The reserved flag bits, which must be 0.
pub const FLAGS_RESERVED: u8 = 0xE0;

/// Bytes of the fixed part: version, flags, header length, application id, flow id.
pub const FIXED_LEN: usize = 12;
/// Bytes of the probe part.
pub const PROBE_LEN: usize = 8;
/// Bytes of the echo part.
pub const ECHO_LEN: usize = 8;
/// Bytes of the loss report before its gaps.
pub const REPORT_LEN: usize = 6;
/// Bytes of one gap in a loss report.
pub const GAP_LEN: usize = 6;
/// The most gaps one loss report carries.
pub const MAX_GAPS: usize = 16;
/// Bytes of the feedback to endpoints.
pub const ENDPOINT_LEN: usize = 12;
/// The longest CP header, in bytes (every part, [`MAX_GAPS`] gaps): 142.
pub const MAX_LEN: usize =
    FIXED_LEN + PROBE_LEN + ECHO_LEN + REPORT_LEN + MAX_GAPS * GAP_LEN + ENDPOINT_LEN;

/// The loss rate fixed point's scale: 1.0 is 2^31.
const LOSS_RATE_ONE: u32 = 1 << 31;
/// The bandwidth fixed point's scale: raw units per bit/s (256 per kbit/s).
const BANDWIDTH_RAW_PER_BPS: f64 = 256.0 / 1000.0;

/// Why bytes are not a CP header, or a header cannot be encoded.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum CpHeaderError {
    /// Fewer bytes than the header needs.
    #[error("CP header truncated: needs {need} bytes, got {got}")]
    Truncated {
        /// Bytes needed to go on.
        need: usize,
        /// Bytes present.
        got: usize,
    },
    /// The version byte is not [`VERSION`].
    #[error("CP header version {0} is not supported (this codec speaks version 1)")]
    BadVersion(u8),
    /// Reserved flag bits are set, or the flags form an impossible combination (a control
    /// message with a probe, or with nothing in it).
    #[error("CP header flags {0:#04x} are invalid")]
    BadFlags(u8),
    /// The header length field disagrees with the length the flags and gap count imply.
    #[error("CP header length field says {declared} bytes, the flags imply {expected}")]
    LengthMismatch {
        /// The value of the header length field.
        declared: usize,
        /// The length implied by the flags and the gap count.
        expected: usize,
    },
    /// A field holds a value the format forbids.
    #[error("CP header field {field} has the value {value}, out of its range")]
    ValueOutOfRange {
        /// The field's name.
        field: &'static str,
        /// The value found.
        value: u64,
    },
}

/// The probe a local aggregation point attaches to each packet of an aggregate (slides,
/// "To measure RTT" and "To detect loss").
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Probe {
    /// The low 32 bits of the per-application packet counter.
    pub seq: u32,
    /// The low 32 bits of the aggregation point's clock, in microseconds.
    pub timestamp: u32,
}

/// A timestamp echoed back to the aggregation point that sent it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Echo {
    /// The echoed [`Probe::timestamp`], in microseconds of the other aggregation point's clock.
    pub timestamp: u32,
    /// Microseconds from the receipt of that timestamp to the sending of this echo.
    pub delay: u32,
}

/// One run of lost sequence numbers: `start .. start + len - 1` (modulo 2^32).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Gap {
    /// The first lost sequence number (low 32 bits).
    pub start: u32,
    /// How many consecutive sequence numbers were lost, at least 1.
    pub len: u16,
}

/// What the remote aggregation point knows about the losses of an aggregate.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct LossReport {
    /// Every sequence number up to and including this one is settled: arrived, or in a gap
    /// reported here or before (low 32 bits).
    pub through: u32,
    /// The most recent runs of losses, most recent first, at most [`MAX_GAPS`].
    pub gaps: Vec<Gap>,
}

/// The feedback one aggregation point sends the other about the aggregate flowing towards it:
/// piggy-backed on the reverse traffic of the application, or alone in a control message.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct ApFeedback {
    /// The latest timestamp received, echoed with the time it was held.
    pub echo: Option<Echo>,
    /// The settled sequence numbers and the gaps among them.
    pub report: Option<LossReport>,
}

impl ApFeedback {
    /// True when there is nothing in it.
    pub fn is_empty(&self) -> bool {
        self.echo.is_none() && self.report.is_none()
    }
}

/// What an aggregation point tells the endpoints of its cluster about their application's
/// aggregate (slides, "COORDINATION PROTOCOL (CP)": endpoints get the latest estimated RTT,
/// aggregate loss rate and available bandwidth).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct EndpointFeedback {
    /// The bandwidth available to the whole application, all its flowshares together.
    pub available_bandwidth: Rate,
    /// The fraction of the aggregate's packets lost, in [0, 1].
    pub loss_rate: f64,
    /// The aggregate's round-trip time between the aggregation points; zero before the first
    /// measurement.
    pub rtt: Duration,
}

impl EndpointFeedback {
    /// The values the wire carries: bandwidth to 3.90625 bit/s, loss rate to 2^-31, RTT to the
    /// microsecond (see the module documentation).
    pub fn quantised(&self) -> EndpointFeedback {
        EndpointFeedback {
            available_bandwidth: decode_bandwidth(encode_bandwidth(self.available_bandwidth)),
            loss_rate: f64::from(encode_loss_rate(self.loss_rate)) / f64::from(LOSS_RATE_ONE),
            rtt: Duration::from_micros(u64::from(encode_micros(self.rtt))),
        }
    }
}

/// A CP header.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct CpHeader {
    /// The C-to-C application the packet belongs to.
    pub app: u32,
    /// The flow within the application.
    pub flow: u32,
    /// A control message: no transport payload follows (flag C).
    pub control: bool,
    /// The local aggregation point's probe (flag P).
    pub probe: Option<Probe>,
    /// Feedback for the aggregation point at the other end (flags E and L).
    pub feedback: ApFeedback,
    /// Feedback to the endpoints (flag F).
    pub endpoint: Option<EndpointFeedback>,
}

impl CpHeader {
    /// The header an endpoint puts on a packet of flow `flow` of application `app`: the ids
    /// and nothing else; the aggregation points fill in the rest.
    pub fn new(app: u32, flow: u32) -> CpHeader {
        CpHeader {
            app,
            flow,
            ..CpHeader::default()
        }
    }

    /// The flags byte this header encodes with.
    pub fn flags(&self) -> u8 {
        let mut flags = 0;
        if self.probe.is_some() {
            flags |= FLAG_PROBE;
        }
        if self.feedback.echo.is_some() {
            flags |= FLAG_ECHO;
        }
        if self.feedback.report.is_some() {
            flags |= FLAG_REPORT;
        }
        if self.endpoint.is_some() {
            flags |= FLAG_ENDPOINT;
        }
        if self.control {
            flags |= FLAG_CONTROL;
        }
        flags
    }

    /// The encoded length in bytes (what the header length field says).
    pub fn encoded_len(&self) -> usize {
        let gaps = self.feedback.report.as_ref().map(|r| r.gaps.len());
        length_for(self.flags(), gaps.unwrap_or(0))
    }

    /// Checks what encoding cannot repair by rounding: the flag combination
    /// ([`CpHeaderError::BadFlags`]), more than [`MAX_GAPS`] gaps or a gap of length 0
    /// ([`CpHeaderError::ValueOutOfRange`]).
    pub fn validate(&self) -> Result<(), CpHeaderError> {
        check_flags(self.flags())?;
        if let Some(report) = &self.feedback.report {
            if report.gaps.len() > MAX_GAPS {
                return Err(CpHeaderError::ValueOutOfRange {
                    field: "gap count",
                    value: report.gaps.len() as u64,
                });
            }
            if report.gaps.iter().any(|g| g.len == 0) {
                return Err(CpHeaderError::ValueOutOfRange {
                    field: "gap length",
                    value: 0,
                });
            }
        }
        Ok(())
    }

    /// This header as the wire carries it: the endpoint feedback rounded as
    /// [`EndpointFeedback::quantised`] does; every other field is carried exactly.
    pub fn quantised(&self) -> CpHeader {
        CpHeader {
            endpoint: self.endpoint.map(|e| e.quantised()),
            ..self.clone()
        }
    }

    /// Appends the header's bytes to `out` and returns how many were written. A header that
    /// fails [`validate`](Self::validate) writes nothing and returns the error.
    pub fn encode(&self, out: &mut Vec<u8>) -> Result<usize, CpHeaderError> {
        self.validate()?;
        let len = self.encoded_len();
        // At most MAX_LEN (142), so the length fits its 16-bit field.
        let len16 = u16::try_from(len).unwrap_or(u16::MAX);
        out.reserve(len);
        out.push(VERSION);
        out.push(self.flags());
        out.extend_from_slice(&len16.to_be_bytes());
        out.extend_from_slice(&self.app.to_be_bytes());
        out.extend_from_slice(&self.flow.to_be_bytes());
        if let Some(p) = self.probe {
            out.extend_from_slice(&p.seq.to_be_bytes());
            out.extend_from_slice(&p.timestamp.to_be_bytes());
        }
        if let Some(e) = self.feedback.echo {
            out.extend_from_slice(&e.timestamp.to_be_bytes());
            out.extend_from_slice(&e.delay.to_be_bytes());
        }
        if let Some(r) = &self.feedback.report {
            out.extend_from_slice(&r.through.to_be_bytes());
            // validate() bounded the count by MAX_GAPS.
            out.push(u8::try_from(r.gaps.len()).unwrap_or(u8::MAX));
            out.push(0);
            for g in &r.gaps {
                out.extend_from_slice(&g.start.to_be_bytes());
                out.extend_from_slice(&g.len.to_be_bytes());
            }
        }
        if let Some(f) = self.endpoint {
            out.extend_from_slice(&encode_bandwidth(f.available_bandwidth).to_be_bytes());
            out.extend_from_slice(&encode_loss_rate(f.loss_rate).to_be_bytes());
            out.extend_from_slice(&encode_micros(f.rtt).to_be_bytes());
        }
        Ok(len)
    }

    /// Reads a CP header from the front of `buf`; returns it and the bytes it took (the
    /// transport header follows them). Never panics; malformed input gives a
    /// [`CpHeaderError`].
    pub fn decode(buf: &[u8]) -> Result<(CpHeader, usize), CpHeaderError> {
        let mut r = Reader { buf, pos: 0 };
        if buf.len() < FIXED_LEN {
            return Err(CpHeaderError::Truncated {
                need: FIXED_LEN,
                got: buf.len(),
            });
        }
        let version = r.u8()?;
        if version != VERSION {
            return Err(CpHeaderError::BadVersion(version));
        }
        let flags = r.u8()?;
        check_flags(flags)?;
        let declared = usize::from(r.u16()?);
        let app = r.u32()?;
        let flow = r.u32()?;

        // The gap count sits 4 bytes into the loss report; it is needed for the length.
        let mut gap_count = 0;
        if flags & FLAG_REPORT != 0 {
            let at = length_for(flags & (FLAG_PROBE | FLAG_ECHO), 0) + 4;
            let count = *buf.get(at).ok_or(CpHeaderError::Truncated {
                need: at + 1,
                got: buf.len(),
            })?;
            gap_count = usize::from(count);
            if gap_count > MAX_GAPS {
                return Err(CpHeaderError::ValueOutOfRange {
                    field: "gap count",
                    value: u64::from(count),
                });
            }
        }
        let expected = length_for(flags, gap_count);
        if declared != expected {
            return Err(CpHeaderError::LengthMismatch { declared, expected });
        }
        if buf.len() < expected {
            return Err(CpHeaderError::Truncated {
                need: expected,
                got: buf.len(),
            });
        }

        let mut header = CpHeader {
            app,
            flow,
            control: flags & FLAG_CONTROL != 0,
            ..CpHeader::default()
        };
        if flags & FLAG_PROBE != 0 {
            header.probe = Some(Probe {
                seq: r.u32()?,
                timestamp: r.u32()?,
            });
        }
        if flags & FLAG_ECHO != 0 {
            header.feedback.echo = Some(Echo {
                timestamp: r.u32()?,
                delay: r.u32()?,
            });
        }
        if flags & FLAG_REPORT != 0 {
            let through = r.u32()?;
            let _count = r.u8()?;
            let reserved = r.u8()?;
            if reserved != 0 {
                return Err(CpHeaderError::ValueOutOfRange {
                    field: "loss report reserved byte",
                    value: u64::from(reserved),
                });
            }
            let mut gaps = Vec::with_capacity(gap_count);
            for _ in 0..gap_count {
                let start = r.u32()?;
                let len = r.u16()?;
                if len == 0 {
                    return Err(CpHeaderError::ValueOutOfRange {
                        field: "gap length",
                        value: 0,
                    });
                }
                gaps.push(Gap { start, len });
            }
            header.feedback.report = Some(LossReport { through, gaps });
        }
        if flags & FLAG_ENDPOINT != 0 {
            let bandwidth = r.u32()?;
            let loss = r.u32()?;
            if loss > LOSS_RATE_ONE {
                return Err(CpHeaderError::ValueOutOfRange {
                    field: "aggregate loss rate",
                    value: u64::from(loss),
                });
            }
            let rtt = r.u32()?;
            header.endpoint = Some(EndpointFeedback {
                available_bandwidth: decode_bandwidth(bandwidth),
                loss_rate: f64::from(loss) / f64::from(LOSS_RATE_ONE),
                rtt: Duration::from_micros(u64::from(rtt)),
            });
        }
        Ok((header, expected))
    }
}

/// Rejects reserved bits and impossible combinations.
fn check_flags(flags: u8) -> Result<(), CpHeaderError> {
    let says_something = flags & (FLAG_ECHO | FLAG_REPORT | FLAG_ENDPOINT) != 0;
    let control = flags & FLAG_CONTROL != 0;
    if flags & FLAGS_RESERVED != 0 || (control && (flags & FLAG_PROBE != 0 || !says_something)) {
        return Err(CpHeaderError::BadFlags(flags));
    }
    Ok(())
}

/// The header length for `flags` with `gaps` gaps in the loss report.
fn length_for(flags: u8, gaps: usize) -> usize {
    let mut len = FIXED_LEN;
    if flags & FLAG_PROBE != 0 {
        len += PROBE_LEN;
    }
    if flags & FLAG_ECHO != 0 {
        len += ECHO_LEN;
    }
    if flags & FLAG_REPORT != 0 {
        len += REPORT_LEN + gaps.saturating_mul(GAP_LEN);
    }
    if flags & FLAG_ENDPOINT != 0 {
        len += ENDPOINT_LEN;
    }
    len
}

/// A big-endian reader over a byte slice; every read checks the length.
struct Reader<'a> {
    buf: &'a [u8],
    pos: usize,
}

impl Reader<'_> {
    /// The next `N` bytes.
    fn take<const N: usize>(&mut self) -> Result<[u8; N], CpHeaderError> {
        let end = self.pos.saturating_add(N);
        let bytes = self
            .buf
            .get(self.pos..end)
            .and_then(|s| <[u8; N]>::try_from(s).ok())
            .ok_or(CpHeaderError::Truncated {
                need: end,
                got: self.buf.len(),
            })?;
        self.pos = end;
        Ok(bytes)
    }
    fn u8(&mut self) -> Result<u8, CpHeaderError> {
        self.take::<1>().map(|b| b[0])
    }
    fn u16(&mut self) -> Result<u16, CpHeaderError> {
        self.take::<2>().map(u16::from_be_bytes)
    }
    fn u32(&mut self) -> Result<u32, CpHeaderError> {
        self.take::<4>().map(u32::from_be_bytes)
    }
}

/// The bandwidth field for `rate`: kbit/s with 8 fractional bits, rounded to the nearest,
/// saturating at 2^32 - 1 (16.78 Gbit/s).
pub fn encode_bandwidth(rate: Rate) -> u32 {
    let raw = (rate.bps_f64() * BANDWIDTH_RAW_PER_BPS).round();
    if raw >= f64::from(u32::MAX) {
        u32::MAX
    } else {
        // raw is a whole number in [0, 2^32 - 1).
        raw as u32
    }
}

/// The rate a bandwidth field stands for: `raw * 1000 / 256` bit/s, rounded to the bit/s.
pub fn decode_bandwidth(raw: u32) -> Rate {
    Rate::from_bps_f64(f64::from(raw) / BANDWIDTH_RAW_PER_BPS)
}

/// The loss rate field for the fraction `p`: `round(p * 2^31)`, p clamped to [0, 1], NaN as 0.
pub fn encode_loss_rate(p: f64) -> u32 {
    if p.is_nan() || p <= 0.0 {
        return 0;
    }
    let raw = (p.min(1.0) * f64::from(LOSS_RATE_ONE)).round();
    // raw is a whole number in [0, 2^31].
    raw as u32
}

/// A span in whole microseconds, rounded to the nearest, saturating at 2^32 - 1 us.
pub fn encode_micros(d: Duration) -> u32 {
    let micros = d.as_nanos().saturating_add(500) / 1_000;
    u32::try_from(micros).unwrap_or(u32::MAX)
}

/// The timestamp field for `now`: the low 32 bits of the clock in whole microseconds
/// (truncated). Two timestamps are compared modulo 2^32.
pub fn timestamp_micros(now: Instant) -> u32 {
    // Keeping the low 32 bits is the point: the field wraps every 2^32 us.
    (now.as_nanos() / 1_000) as u32
}

/// The low 32 bits of a 64-bit sequence number, as the probe carries them.
pub fn seq_low(seq: u64) -> u32 {
    seq as u32
}

/// The 64-bit sequence number with low 32 bits `low` closest to `reference` (at most 2^31
/// away), or the next one up when the closest would be negative: how a receiver extends a
/// wire sequence number.
pub fn extend_seq(reference: u64, low: u32) -> u64 {
    let offset = i64::from(low.wrapping_sub(seq_low(reference)) as i32);
    let mut extended = i128::from(reference) + i128::from(offset);
    if extended < 0 {
        extended += 1 << 32;
    }
    u64::try_from(extended).unwrap_or(u64::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::Rng;

    fn full() -> CpHeader {
        CpHeader {
            app: 0x0102_0304,
            flow: 7,
            control: false,
            probe: Some(Probe {
                seq: 0xA0B0_C0D0,
                timestamp: 1_000_000,
            }),
            feedback: ApFeedback {
                echo: Some(Echo {
                    timestamp: 999_000,
                    delay: 250,
                }),
                report: Some(LossReport {
                    through: 41,
                    gaps: vec![Gap { start: 30, len: 2 }, Gap { start: 12, len: 1 }],
                }),
            },
            endpoint: Some(EndpointFeedback {
                available_bandwidth: Rate::from_mbps(15),
                loss_rate: 0.25,
                rtt: Duration::from_micros(100_500),
            }),
        }
    }

    #[test]
    fn a_data_packet_header_is_twenty_bytes_with_exact_contents() {
        let h = CpHeader {
            probe: Some(Probe {
                seq: 5,
                timestamp: 0x0001_0203,
            }),
            ..CpHeader::new(9, 2)
        };
        let mut out = Vec::new();
        assert_eq!(h.encode(&mut out), Ok(20));
        assert_eq!(
            out,
            vec![
                1, 0x01, 0, 20, // version, flags P, length
                0, 0, 0, 9, // application id
                0, 0, 0, 2, // flow id
                0, 0, 0, 5, // sequence number
                0, 1, 2, 3, // timestamp
            ]
        );
        assert_eq!(CpHeader::decode(&out), Ok((h, 20)));
    }

    #[test]
    fn a_header_with_every_part_has_exact_bytes() {
        let h = full();
        let mut out = vec![0xEE]; // encode appends
        assert_eq!(h.encode(&mut out), Ok(58));
        #[rustfmt::skip]
        let expected: Vec<u8> = vec![
            0xEE,
            1, 0x0F, 0, 58,                 // version, flags P E L F, length 12+8+8+(6+2*6)+12
            0x01, 0x02, 0x03, 0x04,         // application id
            0, 0, 0, 7,                     // flow id
            0xA0, 0xB0, 0xC0, 0xD0,         // sequence number
            0x00, 0x0F, 0x42, 0x40,         // timestamp 1_000_000 us
            0x00, 0x0F, 0x3E, 0x58,         // echo 999_000 us
            0, 0, 0, 250,                   // echo delay 250 us
            0, 0, 0, 41,                    // settled through 41
            2, 0,                           // two gaps, reserved
            0, 0, 0, 30, 0, 2,              // gap 30..31
            0, 0, 0, 12, 0, 1,              // gap 12
            0x00, 0x3A, 0x98, 0x00,         // 15 Mbit/s = 15000 kbit/s * 256 = 3_840_000
            0x20, 0x00, 0x00, 0x00,         // 0.25 * 2^31
            0x00, 0x01, 0x88, 0x94,         // 100_500 us
        ];
        assert_eq!(out, expected);
        assert_eq!(CpHeader::decode(&out[1..]), Ok((h, 58)));
    }

    #[test]
    fn a_control_message_carries_only_feedback() {
        let h = CpHeader {
            control: true,
            feedback: ApFeedback {
                echo: Some(Echo {
                    timestamp: 1,
                    delay: 2,
                }),
                report: None,
            },
            ..CpHeader::new(3, 0)
        };
        let mut out = Vec::new();
        assert_eq!(h.encode(&mut out), Ok(20));
        assert_eq!(&out[..4], &[1, 0x12, 0, 20]);
        assert_eq!(CpHeader::decode(&out), Ok((h, 20)));
    }

    #[test]
    fn malformed_bytes_give_typed_errors() {
        let mut good = Vec::new();
        assert!(full().encode(&mut good).is_ok());
        assert_eq!(
            CpHeader::decode(&good[..5]),
            Err(CpHeaderError::Truncated { need: 12, got: 5 })
        );
        assert_eq!(
            CpHeader::decode(&good[..40]),
            Err(CpHeaderError::Truncated { need: 58, got: 40 })
        );
        let with = |i: usize, v: u8| {
            let mut b = good.clone();
            b[i] = v;
            CpHeader::decode(&b)
        };
        assert_eq!(with(0, 2), Err(CpHeaderError::BadVersion(2)));
        assert_eq!(with(1, 0x2F), Err(CpHeaderError::BadFlags(0x2F)));
        // A control message with a probe, and one with nothing in it.
        assert_eq!(with(1, 0x1F), Err(CpHeaderError::BadFlags(0x1F)));
        assert_eq!(with(1, 0x10), Err(CpHeaderError::BadFlags(0x10)));
        assert_eq!(
            with(3, 59),
            Err(CpHeaderError::LengthMismatch {
                declared: 59,
                expected: 58
            })
        );
        // Dropping flag F makes the implied length 46.
        assert_eq!(
            with(1, 0x07),
            Err(CpHeaderError::LengthMismatch {
                declared: 58,
                expected: 46
            })
        );
        assert_eq!(
            with(32, 17),
            Err(CpHeaderError::ValueOutOfRange {
                field: "gap count",
                value: 17
            })
        );
        assert_eq!(
            with(33, 1),
            Err(CpHeaderError::ValueOutOfRange {
                field: "loss report reserved byte",
                value: 1
            })
        );
        let mut zero_gap = good.clone();
        zero_gap[38] = 0;
        zero_gap[39] = 0;
        assert_eq!(
            CpHeader::decode(&zero_gap),
            Err(CpHeaderError::ValueOutOfRange {
                field: "gap length",
                value: 0
            })
        );
        // Loss rate 0x80000001: just above 1.
        let mut loss = good.clone();
        loss[50..54].copy_from_slice(&[0x80, 0, 0, 1]);
        assert_eq!(
            CpHeader::decode(&loss),
            Err(CpHeaderError::ValueOutOfRange {
                field: "aggregate loss rate",
                value: 0x8000_0001
            })
        );
    }

    #[test]
    fn headers_that_cannot_be_encoded_write_nothing() {
        let mut out = Vec::new();
        let nothing = CpHeader {
            control: true,
            ..CpHeader::new(1, 1)
        };
        assert_eq!(nothing.encode(&mut out), Err(CpHeaderError::BadFlags(0x10)));
        let mut many = full();
        if let Some(r) = many.feedback.report.as_mut() {
            r.gaps = vec![Gap { start: 1, len: 1 }; MAX_GAPS + 1];
        }
        assert!(matches!(
            many.encode(&mut out),
            Err(CpHeaderError::ValueOutOfRange {
                field: "gap count",
                ..
            })
        ));
        assert!(out.is_empty());
    }

    #[test]
    fn fixed_point_fields_round_to_their_resolution() {
        assert_eq!(encode_bandwidth(Rate::from_kbps(1)), 256);
        assert_eq!(decode_bandwidth(1), Rate::from_bps(4)); // 3.90625 rounded
        assert_eq!(decode_bandwidth(256), Rate::from_kbps(1));
        assert_eq!(encode_bandwidth(Rate::MAX), u32::MAX);
        assert_eq!(encode_bandwidth(Rate::from_gbps(17)), u32::MAX);
        assert_eq!(encode_loss_rate(1.0), 1 << 31);
        assert_eq!(encode_loss_rate(2.0), 1 << 31);
        assert_eq!(encode_loss_rate(f64::NAN), 0);
        assert_eq!(encode_loss_rate(-0.1), 0);
        assert_eq!(encode_micros(Duration::from_nanos(1_499)), 1);
        assert_eq!(encode_micros(Duration::from_nanos(1_500)), 2);
        assert_eq!(encode_micros(Duration::MAX), u32::MAX);
    }

    #[test]
    fn sequence_numbers_extend_across_the_wrap() {
        assert_eq!(extend_seq(0, 5), 5);
        assert_eq!(extend_seq(100, 90), 90);
        assert_eq!(extend_seq(u64::from(u32::MAX) - 1, 3), (1 << 32) + 3);
        assert_eq!(extend_seq((1 << 32) + 3, u32::MAX), u64::from(u32::MAX));
        // Never below zero: the next candidate up.
        assert_eq!(extend_seq(1, u32::MAX), u64::from(u32::MAX));
        assert_eq!(timestamp_micros(Instant::from_micros((1 << 32) + 7)), 7);
    }

    #[test]
    fn two_hundred_thousand_random_byte_strings_never_panic() {
        let mut rng = Rng::new(0xC0DE);
        let mut valid = Vec::new();
        let _ = full().encode(&mut valid);
        let mut decoded = 0;
        for i in 0..200_000 {
            let mut bytes: Vec<u8> = if i % 2 == 0 {
                let n = rng.below(MAX_LEN as u64 + 20) as usize;
                (0..n).map(|_| rng.next_u64() as u8).collect()
            } else {
                // A valid header with a few bytes changed, to reach past the first checks.
                let mut b = valid.clone();
                for _ in 0..1 + rng.below(3) {
                    let at = rng.below(b.len() as u64) as usize;
                    b[at] = rng.next_u64() as u8;
                }
                b.truncate(rng.below(b.len() as u64 + 1) as usize);
                b
            };
            if i % 4 == 0 && !bytes.is_empty() {
                bytes[0] = VERSION;
            }
            if let Ok((h, n)) = CpHeader::decode(&bytes) {
                decoded += 1;
                assert!(n <= bytes.len());
                let mut again = Vec::new();
                assert_eq!(h.encode(&mut again), Ok(n));
                assert_eq!(&again[..], &bytes[..n]);
            }
        }
        assert!(decoded > 1_000, "only {decoded} decoded");
    }

    /// A random header that `encode` accepts.
    fn random_header(rng: &mut Rng) -> CpHeader {
        let control = rng.bernoulli(0.2);
        let mut h = CpHeader::new(rng.next_u64() as u32, rng.next_u64() as u32);
        h.control = control;
        if !control && rng.bernoulli(0.5) {
            h.probe = Some(Probe {
                seq: rng.next_u64() as u32,
                timestamp: rng.next_u64() as u32,
            });
        }
        if rng.bernoulli(0.5) {
            h.feedback.echo = Some(Echo {
                timestamp: rng.next_u64() as u32,
                delay: rng.next_u64() as u32,
            });
        }
        if rng.bernoulli(0.5) {
            let n = rng.below(MAX_GAPS as u64 + 1) as usize;
            h.feedback.report = Some(LossReport {
                through: rng.next_u64() as u32,
                gaps: (0..n)
                    .map(|_| Gap {
                        start: rng.next_u64() as u32,
                        len: 1 + rng.below(u64::from(u16::MAX)) as u16,
                    })
                    .collect(),
            });
        }
        if rng.bernoulli(0.5) || (control && h.feedback.is_empty()) {
            h.endpoint = Some(EndpointFeedback {
                available_bandwidth: Rate::from_bps(rng.below(20_000_000_000)),
                loss_rate: rng.uniform() * 1.2 - 0.1,
                rtt: Duration::from_nanos(rng.below(5_000_000_000_000)),
            });
        }
        h
    }

    #[test]
    fn decoding_an_encoded_header_gives_it_back_after_quantisation() {
        let mut rng = Rng::new(77);
        for _ in 0..20_000 {
            let h = random_header(&mut rng);
            let mut out = Vec::new();
            assert_eq!(h.encode(&mut out), Ok(h.encoded_len()));
            assert_eq!(out.len(), h.encoded_len());
            let q = h.quantised();
            assert_eq!(CpHeader::decode(&out), Ok((q.clone(), out.len())));
            assert_eq!(q.quantised(), q);
        }
    }
}
