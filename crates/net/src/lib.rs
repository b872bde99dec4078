//! concord's algorithms on real hosts.
//!
//! Today this crate holds the Congestion Manager's local API: [`protocol`], the binary frames a
//! client and `concordd` exchange over a Unix socket.

pub mod protocol;
