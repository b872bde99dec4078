//! GCCA's host part for a UDP flow (Liu, Cheung & Baras, section 3.3): "every UDP port is
//! attached with an adjustable leaky bucket filter". The application keeps generating at its
//! own rate; datagrams the bucket does not let out yet wait in the host's send queue, and when
//! that is full the host drops them (counted here, never in the network).

use crate::packet::Packet;
use concord_cc::time::Instant;
use std::collections::VecDeque;

/// The send queue in front of a UDP flow's leaky bucket.
#[derive(Clone, Debug)]
pub struct HostShaper {
    /// The flow's local UDP port (its bucket's key in the host's [`concord_cc::gcca::GccpHost`]).
    pub port: u16,
    /// Datagrams waiting for the bucket.
    pub(crate) queue: VecDeque<Packet>,
    /// Most datagrams the queue holds.
    pub limit: u32,
    /// When the head may leave, if held.
    pub(crate) wake: Option<Instant>,
    /// The instant of the pending wake-up event, if one is scheduled.
    pub(crate) armed: Option<Instant>,
    /// Datagrams dropped at the host because the queue was full.
    pub drops: u64,
    /// Largest queue seen, in datagrams.
    pub max_queue: u32,
    /// Datagrams the bucket let out.
    pub sent: u64,
}

impl HostShaper {
    /// An empty send queue for `port` holding up to `limit` datagrams.
    pub fn new(port: u16, limit: u32) -> HostShaper {
        HostShaper {
            port,
            queue: VecDeque::new(),
            limit: limit.max(1),
            wake: None,
            armed: None,
            drops: 0,
            max_queue: 0,
            sent: 0,
        }
    }

    /// Datagrams waiting.
    pub fn queued(&self) -> usize {
        self.queue.len()
    }
}
