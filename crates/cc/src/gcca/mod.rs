//! GCCA, the Generic Congestion Control Architecture (Liu, Cheung & Baras, "Generic Congestion
//! Control Through Network Coordination"), as sans-IO pieces.
//!
//! Routers detect incipient congestion on their output queues and tell the upstream neighbour
//! that sent the packet; that neighbour slows the queue feeding the congested one; a congestion
//! that lasts travels back hop by hop to the host, which slows the flow itself (sections 2 and
//! 3, Fig. 1).

pub mod detector;
pub mod leaky_bucket;
pub mod message;
pub mod window_adjuster;

pub use detector::{DetectorConfig, DetectorVerdict, GccpDetector, Signal};
pub use leaky_bucket::{LeakyBucket, LeakyBucketConfig, LeakyBucketConfigError, Restore};
pub use message::{Code, GccpError, GccpMessage, Padding, GCCP_ETHERTYPE};
pub use window_adjuster::{Reduction, WindowAdjuster};
