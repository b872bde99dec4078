//! concord's controllers on kernel TCP through eBPF.
//!
//! A BPF `tcp_congestion_ops` (src/bpf/concord_tcp.bpf.c, built with the `datapath` feature)
//! registers `concord_newreno`, `concord_mccp`, `concord_cm`, `concord_westw` and `concord_cubic`. For every
//! socket that uses one of them it reports each ACK and each congestion-state change to the
//! agent through a ring buffer, and applies the cwnd and ssthresh the agent writes into a
//! per-socket map, falling back to Reno when the agent's entry is stale. The agent
//! ([`agent::Agent`], sans-IO; [`datapath`] drives it from the kernel) runs concord-cc's
//! controllers on those measurements: a [`concord_cc::tcp::WindowController`] per socket, or for
//! `concord_cm` a [`concord_cc::cm::CongestionManager`] macroflow per destination host.
//!
//! Only [`datapath`] needs the feature; the rest builds and is tested on any machine.

pub mod agent;
pub mod protocol;
pub mod tcp_cm;
pub mod window_socket;

#[cfg(feature = "datapath")]
pub mod datapath;
#[cfg(feature = "datapath")]
pub mod path_loss;

/// The generated skeleton of the BPF object.
#[cfg(feature = "datapath")]
#[allow(
    unsafe_code,
    clippy::all,
    clippy::restriction,
    clippy::pedantic,
    missing_docs,
    unreachable_pub,
    dead_code
)]
mod skel {
    include!(concat!(env!("OUT_DIR"), "/concord_tcp.skel.rs"));
}

/// The generated skeleton of the test bed's loss program.
#[cfg(feature = "datapath")]
#[allow(
    unsafe_code,
    clippy::all,
    clippy::restriction,
    clippy::pedantic,
    missing_docs,
    unreachable_pub,
    dead_code
)]
mod path_loss_skel {
    include!(concat!(env!("OUT_DIR"), "/path_loss.skel.rs"));
}

#[cfg(all(test, feature = "datapath"))]
mod layout_tests {
    /// The decision map's value type, as clang laid it out, is the 32 bytes protocol.rs writes.
    #[test]
    fn the_decision_map_value_has_the_size_the_agent_writes() {
        assert_eq!(
            std::mem::size_of::<crate::skel::types::concord_ctl>(),
            crate::protocol::DECISION_BYTES
        );
    }
}
