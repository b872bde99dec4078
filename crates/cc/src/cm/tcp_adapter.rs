//! TCP/CM's implicit feedback (Balakrishnan, Rahul and Seshan, section 3.2.1): what one ACK
//! outcome of a [`TcpSender`](crate::tcp::sender::TcpSender) tells the Congestion Manager, as
//! a `cm_update`.
//!
//! Bytes acknowledged count with their share of header bytes, so that the CM's rate is in bytes
//! on the wire like its grants, and at most one segment per ACK: RFC 5681's increase (eqs. 2
//! and 3) counts ACKs, not bytes, so a NewReno receiver's delayed ACKs halve its sender's
//! growth, and the CM, which counts bytes, would otherwise grow twice as fast as the TCP it
//! must be no more aggressive than (section 2.1). A fast retransmit is a transient loss of one
//! segment, an ECN echo an ECN loss (RFC 3124's loss modes); a retransmission timeout is
//! persistent congestion.

use super::api::{CmUpdate, LossMode};
use crate::tcp::sender::AckOutcome;

/// The update for ACK outcome `out` of a connection with `mss` payload bytes per segment and
/// `header_bytes` of headers per segment; `None` if the ACK tells the CM nothing (ignored, or
/// neither new data acknowledged nor a congestion signal).
pub fn update_for_ack(out: &AckOutcome, mss: u64, header_bytes: u32) -> Option<CmUpdate> {
    if out.ignored || (out.bytes_acked == 0 && !out.fast_retransmit && !out.ecn_reduction) {
        return None;
    }
    let mss = mss.max(1);
    let wire = |payload: u64| payload + payload.div_ceil(mss) * u64::from(header_bytes);
    let loss_mode = if out.fast_retransmit {
        LossMode::Transient
    } else if out.ecn_reduction {
        LossMode::Ecn
    } else {
        LossMode::NoCongestion
    };
    Some(CmUpdate {
        nrecd: wire(out.bytes_acked.min(mss)),
        nlost: if out.fast_retransmit { wire(mss) } else { 0 },
        loss_mode,
        rtt: out.rtt,
    })
}

/// The update for a retransmission timeout: persistent congestion (RFC 3124 CM_NO_FEEDBACK),
/// which restarts the macroflow in slow start.
pub fn update_for_timeout() -> CmUpdate {
    CmUpdate {
        loss_mode: LossMode::Persistent,
        ..CmUpdate::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::Duration;

    const MSS: u64 = 1448;
    const HDR: u32 = 52;

    fn acked(bytes: u64) -> AckOutcome {
        AckOutcome {
            bytes_acked: bytes,
            rtt: Some(Duration::from_millis(50)),
            ..AckOutcome::default()
        }
    }

    #[test]
    fn an_ack_of_one_segment_reports_its_wire_bytes_and_the_rtt() {
        let u = update_for_ack(&acked(MSS), MSS, HDR).unwrap_or_else(|| panic!("an update"));
        assert_eq!(u.nrecd, 1500);
        assert_eq!(u.nlost, 0);
        assert_eq!(u.loss_mode, LossMode::NoCongestion);
        assert_eq!(u.rtt, Some(Duration::from_millis(50)));
    }

    #[test]
    fn a_delayed_ack_of_two_segments_counts_as_one_segment() {
        let u = update_for_ack(&acked(2 * MSS), MSS, HDR).unwrap_or_else(|| panic!("an update"));
        assert_eq!(u.nrecd, 1500);
    }

    #[test]
    fn a_partial_segment_counts_its_payload_and_one_header() {
        let u = update_for_ack(&acked(100), MSS, HDR).unwrap_or_else(|| panic!("an update"));
        assert_eq!(u.nrecd, 152);
    }

    #[test]
    fn a_fast_retransmit_is_a_transient_loss_of_one_segment() {
        let out = AckOutcome {
            fast_retransmit: true,
            duplicate: true,
            ..AckOutcome::default()
        };
        let u = update_for_ack(&out, MSS, HDR).unwrap_or_else(|| panic!("an update"));
        assert_eq!((u.nrecd, u.nlost), (0, 1500));
        assert_eq!(u.loss_mode, LossMode::Transient);
    }

    #[test]
    fn an_ecn_echo_is_an_ecn_loss_with_no_bytes_lost() {
        let out = AckOutcome {
            ecn_reduction: true,
            ..acked(MSS)
        };
        let u = update_for_ack(&out, MSS, HDR).unwrap_or_else(|| panic!("an update"));
        assert_eq!((u.nrecd, u.nlost), (1500, 0));
        assert_eq!(u.loss_mode, LossMode::Ecn);
    }

    #[test]
    fn an_ignored_or_empty_ack_tells_nothing() {
        let ignored = AckOutcome {
            ignored: true,
            ..acked(MSS)
        };
        assert_eq!(update_for_ack(&ignored, MSS, HDR), None);
        let dup = AckOutcome {
            duplicate: true,
            ..AckOutcome::default()
        };
        assert_eq!(update_for_ack(&dup, MSS, HDR), None);
    }

    #[test]
    fn a_timeout_is_persistent_congestion() {
        let u = update_for_timeout();
        assert_eq!(u.loss_mode, LossMode::Persistent);
        assert_eq!((u.nrecd, u.nlost, u.rtt), (0, 0, None));
    }
}
