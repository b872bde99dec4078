//! A TFRC flow over UDP (RFC 5348), on concord-cc's [`TfrcSender`] and [`TfrcReceiver`]: the
//! competing flow of the CP experiments on the test bed (slides Fig. 5, 6, 10).
//!
//! RFC 5348 leaves the byte layout to the protocol that carries TFRC (section 3.2); this one
//! puts the fields first in the UDP payload, big-endian:
//!
//! ```text
//! data (21 bytes, then padding to the segment size):
//!   type = 1 (1 byte) | sequence number (8) | timestamp, us of the sender's clock (8)
//!   | the sender's RTT estimate R, us, 0 = none (4)
//! feedback (25 bytes):
//!   type = 2 (1 byte) | t_recvdata, us (8) | t_delay, us (4) | X_recv, bit/s (8)
//!   | p, unsigned fixed point with 31 fractional bits (4)
//! ```

use crate::cp_ap::UDP_IP;
use crate::sys::wait_readable;
use crate::time_average::TimeAverage;
use concord_cc::tfrc::{DataHeader, Feedback, TfrcConfig, TfrcReceiver, TfrcSender};
use concord_cc::time::{Duration, Instant};
use concord_cc::units::Rate;
use std::net::{SocketAddr, UdpSocket};
use std::os::fd::AsRawFd;

/// Bytes of a data packet's TFRC fields.
pub const DATA_LEN: usize = 21;
/// Bytes of a feedback packet.
pub const FEEDBACK_LEN: usize = 25;
const TYPE_DATA: u8 = 1;
const TYPE_FEEDBACK: u8 = 2;
/// p's fixed point: 1.0 is 2^31.
const P_ONE: f64 = 2_147_483_648.0;

fn be_u64(b: &[u8]) -> Option<u64> {
    Some(u64::from_be_bytes(b.get(..8)?.try_into().ok()?))
}

fn be_u32(b: &[u8]) -> Option<u32> {
    Some(u32::from_be_bytes(b.get(..4)?.try_into().ok()?))
}

/// A data packet's UDP payload of `len` bytes (at least [`DATA_LEN`]).
pub fn encode_data(h: &DataHeader, len: usize) -> Vec<u8> {
    let mut out = Vec::with_capacity(len.max(DATA_LEN));
    out.push(TYPE_DATA);
    out.extend_from_slice(&h.seq.to_be_bytes());
    out.extend_from_slice(&(h.timestamp.as_nanos() / 1000).to_be_bytes());
    let rtt = h
        .rtt
        .map_or(0, |r| u32::try_from(r.as_micros()).unwrap_or(u32::MAX));
    out.extend_from_slice(&rtt.to_be_bytes());
    out.resize(len.max(DATA_LEN), 0);
    out
}

/// The TFRC fields of a data packet, or `None` if `b` is not one.
pub fn decode_data(b: &[u8]) -> Option<DataHeader> {
    if b.len() < DATA_LEN || b[0] != TYPE_DATA {
        return None;
    }
    let rtt = be_u32(&b[17..])?;
    Some(DataHeader {
        seq: be_u64(&b[1..])?,
        timestamp: Instant::from_micros(be_u64(&b[9..])?),
        rtt: (rtt != 0).then(|| Duration::from_micros(u64::from(rtt))),
    })
}

/// A feedback packet's UDP payload. The loss event rate is clamped to [0, 1].
pub fn encode_feedback(f: &Feedback) -> Vec<u8> {
    let mut out = Vec::with_capacity(FEEDBACK_LEN);
    out.push(TYPE_FEEDBACK);
    out.extend_from_slice(&(f.t_recvdata.as_nanos() / 1000).to_be_bytes());
    let delay = u32::try_from(f.t_delay.as_micros()).unwrap_or(u32::MAX);
    out.extend_from_slice(&delay.to_be_bytes());
    out.extend_from_slice(&f.x_recv.bps().to_be_bytes());
    let p = if f.p.is_nan() {
        0.0
    } else {
        f.p.clamp(0.0, 1.0)
    };
    out.extend_from_slice(&((p * P_ONE).round() as u32).to_be_bytes());
    out
}

/// A feedback packet's fields, or `None` if `b` is not one (or its p is above 1).
pub fn decode_feedback(b: &[u8]) -> Option<Feedback> {
    if b.len() < FEEDBACK_LEN || b[0] != TYPE_FEEDBACK {
        return None;
    }
    let p = be_u32(&b[21..])?;
    if f64::from(p) > P_ONE {
        return None;
    }
    Some(Feedback {
        t_recvdata: Instant::from_micros(be_u64(&b[1..])?),
        t_delay: Duration::from_micros(u64::from(be_u32(&b[9..])?)),
        x_recv: Rate::from_bps(be_u64(&b[13..])?),
        p: f64::from(p) / P_ONE,
    })
}

/// What a TFRC sender did, for the run's log.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SenderReport {
    /// Data packets sent.
    pub sent: u64,
    /// Packets sent more than one t_ipi after they were due: the sender woke so late that the
    /// one packet of credit (RFC 5348 section 4.6) did not cover it.
    pub late_sends: u64,
    /// The sending time those packets lost beyond the one packet of credit, us.
    pub pacing_lost_us: u64,
    /// Over the measuring window, the time-weighted mean of X (bit/s), of the pacing rate
    /// X_inst (bit/s), of p and of R (s); `None` where nothing was sampled.
    pub mean_x_bps: Option<f64>,
    /// See `mean_x_bps`.
    pub mean_x_inst_bps: Option<f64>,
    /// See `mean_x_bps`.
    pub mean_p: Option<f64>,
    /// See `mean_x_bps`.
    pub mean_rtt_s: Option<f64>,
}

/// The sender's state as `key value` lines, as [`crate::cp_ap::ApCore::status`] gives the
/// AP's: packets sent, the pacing lateness counters, X and X_inst (bit/s), p (parts per
/// million) and R (us, 0 before the first report).
pub fn sender_status(tx: &TfrcSender, report: &SenderReport) -> String {
    format!(
        "sent {}\nlate_sends {}\npacing_lost_us {}\nx_bps {}\nx_inst_bps {}\n\
         loss_event_rate_ppm {}\nrtt_us {}\n",
        report.sent,
        report.late_sends,
        report.pacing_lost_us,
        tx.rate().bps(),
        tx.sending_rate().bps(),
        (tx.loss_event_rate() * 1e6).round() as u64,
        tx.rtt().map_or(0, |r| r.as_micros()),
    )
}

/// Sends a greedy TFRC flow of `segment_size`-byte IP packets from `bind` to `to` until
/// `stop(now)`; returns what it did, with X, p and R averaged over `measure`. With `status`,
/// [`sender_status`] is written to that file every 200 ms (as the AP's and the router's).
pub fn run_sender(
    bind: SocketAddr,
    to: SocketAddr,
    segment_size: u64,
    measure: (Instant, Instant),
    clock: impl Fn() -> Instant,
    mut stop: impl FnMut(Instant) -> bool,
    status: Option<&std::path::Path>,
) -> std::io::Result<SenderReport> {
    let sock = UdpSocket::bind(bind)?;
    sock.set_nonblocking(true)?;
    let config = TfrcConfig {
        segment_size,
        ..TfrcConfig::default()
    };
    let mut tx = TfrcSender::new(config, clock())
        .map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidInput, e.to_string()))?;
    let len = (segment_size as usize).saturating_sub(UDP_IP);
    let fds = [sock.as_raw_fd()];
    let mut ready = Vec::new();
    let mut buf = vec![0u8; 2048];
    let mut report = SenderReport::default();
    let [mut x, mut x_inst, mut p, mut r] =
        std::array::from_fn(|_| TimeAverage::new(measure.0, measure.1));
    let mut status_due = Instant::ZERO;
    loop {
        let now = clock();
        if let Some(path) = status.filter(|_| now >= status_due) {
            crate::run::write_status(path, &sender_status(&tx, &report))?;
            status_due = now + Duration::from_millis(200);
        }
        if stop(now) {
            report.mean_x_bps = x.mean();
            report.mean_x_inst_bps = x_inst.mean();
            report.mean_p = p.mean();
            report.mean_rtt_s = r.mean();
            return Ok(report);
        }
        let next = tx
            .next_send_time()
            .min(tx.poll_timeout().unwrap_or(tx.next_send_time()));
        let wait = next.saturating_since(now).as_nanos().min(5_000_000);
        wait_readable(&fds, Some(wait), &mut ready)?;
        let now = clock();
        while let Ok(n) = sock.recv(&mut buf) {
            if let Some(f) = decode_feedback(&buf[..n]) {
                let _ = tx.on_feedback(now, &f);
            }
        }
        if tx.poll_timeout().is_some_and(|t| t <= now) {
            tx.handle_timeout(now);
        }
        x.sample(now, tx.rate().bps() as f64);
        x_inst.sample(now, tx.sending_rate().bps() as f64);
        p.sample(now, tx.loss_event_rate());
        if let Some(rtt) = tx.rtt() {
            r.sample(now, rtt.as_secs_f64());
        }
        loop {
            let (scheduled, t_ipi) = (tx.next_send_time(), tx.t_ipi());
            let Some(h) = tx.poll_send(now) else {
                break;
            };
            let lost = now.saturating_since(scheduled).saturating_sub(t_ipi);
            if lost > Duration::ZERO {
                report.late_sends += 1;
                report.pacing_lost_us += lost.as_micros();
            }
            if sock.send_to(&encode_data(&h, len), to).is_ok() {
                report.sent += 1;
            }
        }
    }
}

/// Receives a TFRC flow on `bind` until `stop(now)`, sending feedback to where its data comes
/// from; returns the payload bytes received in `[from, to)` of `clock`.
pub fn run_receiver(
    bind: SocketAddr,
    segment_size: u64,
    window: (Instant, Instant),
    clock: impl Fn() -> Instant,
    mut stop: impl FnMut(Instant) -> bool,
) -> std::io::Result<u64> {
    let sock = UdpSocket::bind(bind)?;
    sock.set_nonblocking(true)?;
    let config = TfrcConfig {
        segment_size,
        ..TfrcConfig::default()
    };
    let mut rx = TfrcReceiver::new(config)
        .map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidInput, e.to_string()))?;
    let fds = [sock.as_raw_fd()];
    let mut ready = Vec::new();
    let mut buf = vec![0u8; 2048];
    let mut from: Option<SocketAddr> = None;
    let mut counted = 0u64;
    loop {
        let now = clock();
        if stop(now) {
            return Ok(counted);
        }
        let wait = rx
            .poll_timeout()
            .map_or(5_000_000, |t| t.saturating_since(now).as_nanos())
            .min(5_000_000);
        wait_readable(&fds, Some(wait), &mut ready)?;
        let now = clock();
        while let Ok((n, src)) = sock.recv_from(&mut buf) {
            let Some(h) = decode_data(&buf[..n]) else {
                continue;
            };
            from = Some(src);
            rx.on_data(now, &h, (n + UDP_IP) as u64, false);
            if now >= window.0 && now < window.1 {
                counted += n as u64;
            }
        }
        if let (Some(src), Some(f)) = (from, rx.poll_feedback(now)) {
            let _ = sock.send_to(&encode_feedback(&f), src);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_data_header_survives_the_wire_exactly() {
        let h = DataHeader {
            seq: 0x0102_0304_0506_0708,
            timestamp: Instant::from_micros(1_234_567),
            rtt: Some(Duration::from_micros(51_234)),
        };
        let b = encode_data(&h, 972);
        assert_eq!(b.len(), 972);
        assert_eq!(&b[..9], &[1, 1, 2, 3, 4, 5, 6, 7, 8]);
        assert_eq!(decode_data(&b), Some(h));
        let none = DataHeader { rtt: None, ..h };
        assert_eq!(decode_data(&encode_data(&none, 10)), Some(none));
        assert_eq!(encode_data(&none, 10).len(), DATA_LEN);
    }

    #[test]
    fn feedback_survives_the_wire_with_p_to_31_bits() {
        let f = Feedback {
            t_recvdata: Instant::from_micros(9_000_001),
            t_delay: Duration::from_micros(1_500),
            x_recv: Rate::from_bps(7_500_000),
            p: 0.5,
        };
        let b = encode_feedback(&f);
        assert_eq!(b.len(), FEEDBACK_LEN);
        assert_eq!(decode_feedback(&b), Some(f));
        // 0.01 is 21474836.48 in 1.31: rounds to 21474836, read back within 2^-31.
        let g = decode_feedback(&encode_feedback(&Feedback { p: 0.01, ..f })).map(|g| g.p);
        assert_eq!(g, Some(21_474_836.0 / P_ONE));
    }

    #[test]
    fn the_sender_status_gives_x_p_and_r_before_and_after_the_first_report() {
        let config = TfrcConfig {
            segment_size: 1000,
            ..TfrcConfig::default()
        };
        let mut tx = TfrcSender::new(config, Instant::ZERO).unwrap_or_else(|e| panic!("{e}"));
        let report = SenderReport {
            sent: 3,
            late_sends: 1,
            pacing_lost_us: 250,
            ..SenderReport::default()
        };
        // Before feedback: one packet per second (RFC 5348 section 4.2), 8000 bit/s, no R.
        assert_eq!(
            sender_status(&tx, &report),
            "sent 3\nlate_sends 1\npacing_lost_us 250\nx_bps 8000\nx_inst_bps 8000\n\
             loss_event_rate_ppm 0\nrtt_us 0\n"
        );
        // The first report, 100 ms after the packet it echoes, with p = 0 and X_recv = 0: R =
        // 100 ms and X = W_init / R = 4000 B / 0.1 s (section 4.2), 320 kbit/s.
        let f = Feedback {
            t_recvdata: Instant::ZERO,
            t_delay: Duration::ZERO,
            x_recv: Rate::ZERO,
            p: 0.0,
        };
        tx.on_feedback(Instant::from_millis(100), &f)
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            sender_status(&tx, &report),
            "sent 3\nlate_sends 1\npacing_lost_us 250\nx_bps 320000\nx_inst_bps 320000\n\
             loss_event_rate_ppm 0\nrtt_us 100000\n"
        );
    }

    #[test]
    fn garbage_is_neither_data_nor_feedback() {
        assert_eq!(decode_data(&[]), None);
        assert_eq!(decode_data(&[2; 40]), None);
        assert_eq!(decode_feedback(&[1; 40]), None);
        assert_eq!(decode_feedback(&[2; 24]), None);
        // p above 1 (0xFFFFFFFF / 2^31) is refused.
        let mut b = encode_feedback(&Feedback {
            t_recvdata: Instant::ZERO,
            t_delay: Duration::ZERO,
            x_recv: Rate::ZERO,
            p: 0.0,
        });
        b[21..25].copy_from_slice(&[0xff; 4]);
        assert_eq!(decode_feedback(&b), None);
    }
}
