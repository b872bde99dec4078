//! concord's algorithms on real hosts.
//!
//! The Congestion Manager (CM) for a whole host:
//!
//! - [`protocol`]: the binary frames a client and `concordd` exchange over a Unix socket
//!   (docs/cm-protocol.md).
//! - [`hub`]: one [`concord_cc::cm::CongestionManager`] shared by every local client, its
//!   grants paced by a timer.
//! - [`daemon`]: the owner-only socket and the per-connection tasks of `concordd`.
//! - [`client`]: the async Rust client, [`client::CmClient`], and [`client::EmbeddedCm`], the
//!   manager hosted in-process behind the same API.
//! - [`capture`]: the receiving daemon's count of registered flows' arrivals, from an
//!   `AF_PACKET` socket with a BPF filter.
//! - [`handle_hash`]: the hash of the hub's tables, keyed by handles the hub assigns.
//! - [`clock`]: the monotonic clock mapped to the algorithms' integer-nanosecond time.
//! - [`testbed`]: sender hosts, a router and a receiver in network namespaces, an htb + bfifo
//!   bottleneck and [`delay_line`], a user-space delay line on a TUN device.
//! - `kernel_tcp` (feature `tcp`): `concordd --tcp`, kernel TCP sockets that use the
//!   `concord_cm` algorithm as flows of the hub's manager, beside the clients' flows.
//! - [`sys`]: the two Linux calls the rest needs (TUN, setns).
//! - [`thread_caches`]: glibc's malloc tuned in `concordd` (no per-thread caches, one arena,
//!   fixed trim thresholds), so memory freed after a burst of connections is handed back.

pub mod capture;
pub mod client;
pub mod clock;
pub mod daemon;
pub mod delay_line;
pub mod handle_hash;
pub mod hub;
#[cfg(feature = "tcp")]
pub mod kernel_tcp;
pub mod protocol;
pub mod sys;
pub mod testbed;
pub mod thread_caches;
