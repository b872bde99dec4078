//! The TCP sender. PLACEHOLDER.
/// Placeholder.
pub struct TcpSender;
