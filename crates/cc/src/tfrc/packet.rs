//! What TFRC's data and feedback packets carry (RFC 5348 section 3.2), as plain structs.
//!
//! The byte layout belongs to the protocol that carries TFRC (the CP header, a UDP shim); these
//! structs are the fields the two state machines exchange.

use crate::time::{Duration, Instant};
use crate::units::Rate;

/// The TFRC fields of a data packet (RFC 5348 section 3.2.1).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DataHeader {
    /// The sequence number, one more for each data packet sent. concord uses 64 bits, which never
    /// wrap; a wire format with fewer bits extends them on receipt.
    pub seq: u64,
    /// The sender's clock when the packet was sent, echoed as t_recvdata.
    pub timestamp: Instant,
    /// The sender's current RTT estimate R; `None` before the sender has one (a wire format
    /// writes 0). The receiver uses it for loss event grouping (section 5.2) and for its
    /// feedback timer (section 6.2).
    pub rtt: Option<Duration>,
}

/// The fields of a feedback packet (RFC 5348 section 3.2.2).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Feedback {
    /// t_recvdata: the timestamp of the last data packet received, echoed.
    pub t_recvdata: Instant,
    /// t_delay: the time from the receipt of that data packet to the generation of this report.
    /// The sender's RTT sample is (now - t_recvdata) - t_delay (section 4.3 step 1).
    pub t_delay: Duration,
    /// X_recv: the rate at which data arrived since the previous report, normally over one RTT.
    /// A [`Rate`] is in bits per second; the equation's bytes per second are
    /// `x_recv.bytes_per_sec()`. Zero in the first report, which covers no interval.
    pub x_recv: Rate,
    /// p: the loss event rate, in [0, 1] (section 5.4; 0 before the first loss event).
    pub p: f64,
}
