//! The TCP receiver (sink). PLACEHOLDER.
/// Placeholder.
pub struct TcpReceiver;
