//! `concord-router`: a user-space IPv4 router for the namespace test bed that runs concord-cc's
//! queue disciplines and GCCA on real Ethernet frames (docs/router.md).
//!
//! - [`bed`]: hosts and routers in network namespaces from a topology file (root).
//! - [`config`]: the TOML file of ports, neighbours and routes.
//! - [`router`]: the packet processing, sans-IO: frames in, frames out, counters.
//! - [`port`]: one output port: a queue discipline (DropTail, RED, RED/ECN, CoDel, GCCA's
//!   GCCP-capable RED), the token clock at the port's rate, GCCA's leaky bucket.
//! - [`cp_ap`]: CP's aggregation point as a UDP proxy (CP header, TFRC on the aggregate,
//!   BFLD) in front of unmodified applications.
//! - [`tfrc_udp`]: a TFRC flow over UDP, the CP experiments' competing flow.
//! - [`loadgen`]: constant-bit-rate UDP sources and counting sinks.
//! - [`delay`]: a port's queueing-delay histogram.
//! - [`time_average`]: the time-weighted mean of a quantity over a window (the CP runs' logs).
//! - [`eca_edge`]: ECA's end-system half run at a host's edge router: WTP shapers, LOAD
//!   reflection.
//! - [`ipv4`]: the header checks and rewrites a router does.
//! - [`vnet`]: the virtio-net header of the packet sockets, and checksum completion.
//! - [`run`]: the driver: packet sockets, `ppoll`, the clock, the status file.
//! - [`sys`]: the Linux calls (packet sockets, `ppoll`).

pub mod bed;
pub mod config;
pub mod cp_ap;
pub mod delay;
pub mod eca_edge;
pub mod ipv4;
pub mod loadgen;
pub mod port;
pub mod router;
pub mod run;
pub mod sys;
pub mod tfrc_udp;
pub mod time_average;
pub mod vnet;
