//! TFRC flows (RFC 5348) in the simulator: the runtime state of one connection and the sizes of
//! its packets.
//!
//! Both halves of a connection live in one [`TfrcFlow`], the sender at the flow's source host
//! and the receiver at its destination, as with TCP. Data packets carry the fields of RFC 5348
//! section 3.2.1 (sequence number, timestamp, RTT) in [`crate::packet::Transport::TfrcData`];
//! the receiver's reports carry those of section 3.2.2 (t_recvdata, t_delay, X_recv, p) in
//! [`crate::packet::Transport::TfrcFeedback`]. The hooks that drive them are in
//! `simulator/tfrc.rs`.

use concord_cc::tfrc::{TfrcReceiver, TfrcSender};
use concord_cc::time::Instant;

/// Bytes of the TFRC data header on the wire: sequence number, timestamp and RTT, 4 bytes each
/// (RFC 5348 section 3.2.1 lists the fields; the layout is the carrier's).
pub const DATA_HEADER: u32 = 12;

/// Bytes of a feedback packet on the wire, IP and UDP headers included: the 40-byte ACK of the
/// CP experiments (slides, Table I), which holds t_recvdata, t_delay and X_recv (4 bytes each)
/// but not a separate p; concord's simulated report carries p as well, in the same 40 bytes.
pub const FEEDBACK_SIZE: u32 = 40;

/// A TFRC connection at run time.
#[derive(Debug)]
pub struct TfrcFlow {
    /// The sender (RFC 5348 section 4).
    pub sender: TfrcSender,
    /// The receiver (RFC 5348 section 6).
    pub receiver: TfrcReceiver,
    /// Data packet size on the wire, headers included.
    pub packet_size: u32,
    /// The instant of the pending send event, if one is scheduled.
    pub send_timer: Option<Instant>,
    /// The instant of the pending nofeedback timer event, if one is scheduled.
    pub nofeedback_timer: Option<Instant>,
    /// The instant of the pending feedback timer event at the receiver, if one is scheduled.
    pub feedback_timer: Option<Instant>,
    /// Data packets sent.
    pub sent: u64,
    /// Data packets received.
    pub received: u64,
    /// Feedback packets the sender refused (failed RFC 5348 section 4.3's checks).
    pub refused_feedback: u64,
    /// The sender's allowed rate X at each feedback, in bit/s, with its time (for traces).
    pub rate_trace: Vec<(Instant, u64)>,
}
