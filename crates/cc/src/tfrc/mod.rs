//! TCP-Friendly Rate Control (RFC 5348) as sans-IO state machines.
//!
//! TFRC is the rate controller CP's aggregation points run on an aggregate, and a baseline the
//! experiments compare against. The pieces, one per file:
//!
//! - [`equation`]: the TCP throughput equation X(s, R, p, b, t_RTO) of section 3.1, and its
//!   inverse p(X) by bisection for the receiver's first loss interval (section 6.3.1).
//! - [`loss_detector`]: sequence numbers to [`PacketEvent`]s, arrivals and losses, a loss
//!   declared after NDUPACK = 3 later arrivals, its time interpolated (sections 5.1, 5.2).
//! - [`loss_history`]: packet events to loss events (losses within one RTT form one), loss
//!   intervals and the weighted average over the last 8, p = 1 / I_mean, optional history
//!   discounting (sections 5.2 to 5.5). It counts events and never looks at sequence numbers,
//!   so a sampling layer (BFLD) can feed it a subset of the events.
//! - [`receiver`]: [`TfrcReceiver`], the receiver of section 6: reports X_recv, p and the
//!   timestamp echo once per RTT and at once when p rises.
//! - [`sender`]: [`TfrcSender`], the sender of section 4: initial rate, slow start, the
//!   equation-limited rate, the RTT filter, the nofeedback timer, oscillation reduction and
//!   pacing.
//! - [`packet`]: the fields the data packets ([`DataHeader`]) and the reports ([`Feedback`])
//!   carry (section 3.2).
//! - [`config`]: [`TfrcConfig`], every parameter with the RFC's default.
//!
//! Driving a connection: the sender's [`TfrcSender::poll_send`] hands out a [`DataHeader`] for
//! each packet pacing allows; the receiver takes it with [`TfrcReceiver::on_data`] and answers
//! with [`TfrcReceiver::poll_feedback`] at [`TfrcReceiver::poll_timeout`]; the sender takes the
//! [`Feedback`] with [`TfrcSender::on_feedback`] and runs its nofeedback timer with
//! [`TfrcSender::poll_timeout`] and [`TfrcSender::handle_timeout`]. Time is always passed in.

pub mod config;
pub mod equation;
pub mod loss_detector;
pub mod loss_history;
pub mod packet;
pub mod receiver;
pub mod sender;

#[cfg(test)]
mod closed_loop_tests;

pub use config::{TfrcConfig, TfrcConfigError};
pub use loss_detector::{Arrival, LossDetector, PacketEvent};
pub use loss_history::{HistoryUpdate, LossHistory, LossIntervals};
pub use packet::{DataHeader, Feedback};
pub use receiver::TfrcReceiver;
pub use sender::{FeedbackError, TfrcSender};
