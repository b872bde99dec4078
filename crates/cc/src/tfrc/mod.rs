//! TCP-Friendly Rate Control (RFC 5348) as sans-IO state machines.

pub mod config;
pub mod equation;
pub mod loss_detector;
pub mod loss_history;
pub mod packet;
pub mod receiver;

pub use config::{TfrcConfig, TfrcConfigError};
pub use loss_detector::{Arrival, LossDetector, PacketEvent};
pub use loss_history::{HistoryUpdate, LossHistory, LossIntervals};
pub use packet::{DataHeader, Feedback};
pub use receiver::TfrcReceiver;
