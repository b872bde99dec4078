//! The ECA loop closed over one bottleneck: greedy flows shaped by WTP, a router estimating L
//! at the link's input and stamping it, RLOAD reflected back after a round-trip time. Checks
//! the two claims of section IV.B.1: shares proportional to the weights, and the link near the
//! target utilisation with almost no queue.

use super::load_estimator::{LoadEstimator, LoadEstimatorConfig};
use super::wtp::{WtpConfig, WtpShaper};
use crate::time::{Duration, Instant};
use crate::units::{Bytes, Rate};
use std::collections::VecDeque;

const PACKET: Bytes = 1000;

#[test]
fn greedy_flows_share_the_bottleneck_in_proportion_to_their_weights_near_the_target() {
    let link = Rate::from_mbps(10);
    let mut router =
        LoadEstimator::new(LoadEstimatorConfig::new(link), Instant::ZERO).expect("valid");
    // Weights 1..5 Mbit/s per unit load: sum 15 Mbit/s, so L settles near 15 / 9.
    let mut flows: Vec<WtpShaper<()>> = (1..=5)
        .map(|i| {
            let mut c = WtpConfig::new(1_000_000.0 * f64::from(i));
            c.max_rate = link;
            WtpShaper::new(c, Instant::ZERO).expect("valid")
        })
        .collect();
    let rtt = Duration::from_millis(20);
    // (time the RLOAD reaches the sources, load stamped at the router).
    let mut feedback: VecDeque<(Instant, f64)> = VecDeque::new();
    let mut sent = [0u64; 5];
    // The real output queue: a fluid drained at the line rate, in bytes.
    let mut queue = 0.0f64;
    let mut max_queue = 0.0f64;
    let step = Duration::from_micros(100);
    let measure_from = Instant::from_secs(30);
    let end = Instant::from_secs(60);
    let mut now = Instant::ZERO;
    while now < end {
        while let Some(&(at, load)) = feedback.front() {
            if at > now {
                break;
            }
            for f in flows.iter_mut() {
                f.on_rload(now, load).expect("positive");
            }
            feedback.pop_front();
        }
        for (i, f) in flows.iter_mut().enumerate() {
            // Greedy: always a packet waiting.
            if f.queue_len() == 0 {
                f.enqueue(PACKET, ()).expect("room");
            }
            while f.poll_transmit(now).is_some() {
                f.enqueue(PACKET, ()).expect("room");
                router.on_arrival(now, PACKET);
                queue += PACKET as f64;
                if now >= measure_from {
                    sent[i] += PACKET;
                }
                // Every packet carries the current L back (one RTT later).
                feedback.push_back((now + rtt, router.stamp(0.0)));
            }
        }
        router.on_tick(now);
        queue = (queue - link.bytes_per_sec() * step.as_secs_f64()).max(0.0);
        if now >= measure_from {
            max_queue = max_queue.max(queue);
        }
        now += step;
    }
    let span = (end - measure_from).as_secs_f64();
    let total: u64 = sent.iter().sum();
    let utilisation = total as f64 * 8.0 / span / link.bps_f64();
    assert!(
        (0.85..=0.95).contains(&utilisation),
        "utilisation {utilisation}"
    );
    for (i, &s) in sent.iter().enumerate() {
        let share = s as f64 / total as f64;
        let expected = (i + 1) as f64 / 15.0;
        assert!(
            (share - expected).abs() / expected < 0.02,
            "flow {i}: share {share}, expected {expected}"
        );
    }
    let load = router.load();
    assert!((load - 15.0 / 9.0).abs() / (15.0 / 9.0) < 0.1, "L {load}");
    assert!(max_queue < 40_000.0, "max queue {max_queue} bytes");
}
