//! A TFRC sender and receiver in a closed loop over a path with a fixed RTT and Bernoulli loss:
//! the long-run sending rate must come out near the equation's rate for that loss rate.
//!
//! The receiver merges losses within one RTT into one loss event, so the loss event rate is a
//! little below the packet loss rate and the sender a little above the equation's rate for it;
//! at these loss rates (7 to 27 packets per RTT) the gap is within 10%.

use super::equation;
use super::{DataHeader, Feedback, TfrcConfig, TfrcReceiver, TfrcSender};
use crate::rng::Rng;
use crate::time::{Duration, Instant};
use std::collections::BTreeMap;

/// A packet in flight.
#[derive(Clone, Copy, Debug)]
enum InFlight {
    /// A data packet towards the receiver.
    Data(DataHeader),
    /// A report towards the sender.
    Report(Feedback),
}

/// Runs a sender and a receiver for `secs` seconds over a path with one-way delay `one_way`
/// (both directions) that loses each data packet with probability `loss`; reports are never
/// lost. Returns the sending rate in bytes/s between `warmup` seconds and the end.
fn run(loss: f64, one_way: Duration, secs: u64, warmup: u64, seed: u64) -> f64 {
    let config = TfrcConfig::default();
    let size = config.segment_size;
    let mut sender =
        TfrcSender::new(config.clone(), Instant::ZERO).unwrap_or_else(|e| panic!("{e}"));
    let mut receiver = TfrcReceiver::new(config).unwrap_or_else(|e| panic!("{e}"));
    let mut rng = Rng::new(seed);
    // Packets in flight, by (arrival time in ns, insertion order).
    let mut wire: BTreeMap<(u64, u64), InFlight> = BTreeMap::new();
    let mut order = 0u64;
    let end = Instant::from_secs(secs);
    let start = Instant::from_secs(warmup);
    let mut sent_bytes = 0u64;

    loop {
        let t_wire = wire
            .first_key_value()
            .map_or(Instant::MAX, |(&(t, _), _)| Instant::from_nanos(t));
        let t_report = receiver.poll_timeout().unwrap_or(Instant::MAX);
        let t_nofeedback = sender.poll_timeout().unwrap_or(Instant::MAX);
        let t_send = sender.next_send_time();
        let now = t_wire.min(t_report).min(t_nofeedback).min(t_send);
        if now >= end {
            break;
        }
        if t_wire == now {
            match wire.pop_first() {
                Some((_, InFlight::Data(h))) => {
                    receiver.on_data(now, &h, size, false);
                }
                Some((_, InFlight::Report(fb))) => {
                    assert_eq!(sender.on_feedback(now, &fb), Ok(()));
                }
                None => {}
            }
        } else if t_report == now {
            if let Some(fb) = receiver.poll_feedback(now) {
                order += 1;
                wire.insert(((now + one_way).as_nanos(), order), InFlight::Report(fb));
            }
        } else if t_nofeedback == now {
            sender.handle_timeout(now);
        } else if let Some(h) = sender.poll_send(now) {
            if now >= start {
                sent_bytes += size;
            }
            if !rng.bernoulli(loss) {
                order += 1;
                wire.insert(((now + one_way).as_nanos(), order), InFlight::Data(h));
            }
        }
    }
    sent_bytes as f64 / (secs - warmup) as f64
}

#[test]
fn the_long_run_rate_converges_to_the_equation_for_the_loss_rate() {
    let one_way = Duration::from_millis(50);
    for (loss, seed) in [(0.002, 1), (0.01, 2), (0.02, 3)] {
        let rate = run(loss, one_way, 1100, 100, seed);
        // s = 1000 bytes, R = 0.1 s, b = 1, t_RTO = 0.4 s.
        let expected = equation::throughput_rfc(1000.0, 0.1, loss);
        let ratio = rate / expected;
        assert!(
            (ratio - 1.0).abs() < 0.15,
            "loss {loss}: {rate:.0} B/s, equation {expected:.0} B/s, ratio {ratio:.3}"
        );
    }
}
