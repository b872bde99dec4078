//! TCP congestion control: the window-controller interface, its implementations, the RTT
//! estimator and the sans-IO sender and receiver that host them.

pub mod abe;
pub mod config;
pub mod controller;
pub mod cubic;
pub mod handshake;
pub mod mccp;
pub mod new_reno;
pub mod ns3_departures;
pub mod pacing;
pub mod prr;
pub mod receiver;
pub mod rtt;
pub mod sack;
pub mod sender;
pub mod timeout_cause;
pub mod westwood;

pub use config::{CcAlgorithm, Recovery, TcpConfig, TcpConfigError};
pub use controller::{AckInfo, CongestionKind, WindowController, WindowCtl};
pub use handshake::{ActiveOpen, HandshakeConfig, HandshakeSegment, PassiveOpen};
pub use new_reno::NewReno;
pub use ns3_departures::{Departure, Ns3Departures};
pub use pacing::{Pacer, PacingConfig};
pub use receiver::TcpReceiver;
pub use rtt::{RttConfig, RttEstimator};
pub use sender::TcpSender;
pub use timeout_cause::{TimeoutCause, TimeoutCauses};
