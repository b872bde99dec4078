//! Two aggregation points in a closed loop over a path with a fixed RTT and Bernoulli loss on
//! the forward direction: the application sends exactly the bandwidth its AP makes available,
//! and every header crosses the wire as bytes. One flowshare is the reference; with m
//! flowshares, BFLD must give about m times its rate (slides, Fig. 10), the naive approach
//! more (Fig. 7).
//!
//! Why the naive approach overshoots with Bernoulli loss: losses within one RTT form one loss
//! event (RFC 5348 section 5.2). One flowshare of about 8 packets per RTT at 2% loss sees a
//! loss event about every 1/p + 8 packets; an aggregate of 8 flowshares packs 64 or more
//! packets into an RTT and sees one about every 1/p + 64, so its loss event rate is lower, the
//! equation's rate higher, and more packets per RTT lower it further. BFLD computes the loss
//! event rate on a virtual stream of about one flowshare's packets.

use super::{
    AggregateControl, AggregationPoint, ApConfig, AppConfig, AppStatus, CpHeader, Flowshares,
    PacingCredit,
};
use crate::rng::Rng;
use crate::time::{Duration, Instant};
use crate::units::Bytes;
use std::collections::BTreeMap;

/// The packet size, in bytes.
const SIZE: Bytes = 1000;
/// The application id.
const APP: u32 = 1;

/// What one run measured.
struct Outcome {
    /// The application's sending rate after the warm-up, in bytes/s, divided by m.
    per_flowshare: f64,
    /// The loss event rate driving the controller, averaged over one sample a second after
    /// the warm-up.
    mean_p: f64,
    /// BFLD's sampling fraction F, averaged the same way.
    mean_f: f64,
    /// The local AP's view at the end.
    status: AppStatus,
}

/// Runs one application from AP A to AP B for `secs` seconds over a path with one-way delay
/// `one_way` each way that loses each data packet with probability `loss`; feedback from B to
/// A travels in control messages and is never lost. The source at A is paced at exactly A's
/// available bandwidth.
fn run(
    flowshares: Flowshares,
    control: AggregateControl,
    loss: f64,
    secs: u64,
    warmup: u64,
    seed: u64,
) -> Outcome {
    let one_way = Duration::from_millis(50);
    let new_ap = |stream| {
        AggregationPoint::new(ApConfig::default(), Rng::stream(seed, stream))
            .unwrap_or_else(|e| panic!("{e}"))
    };
    let (mut a, mut b) = (new_ap(1), new_ap(2));
    let config = AppConfig {
        control,
        flowshares,
        ..AppConfig::default()
    };
    a.add_application(Instant::ZERO, APP, config)
        .unwrap_or_else(|e| panic!("{e}"));
    let mut link = Rng::stream(seed, 3);
    // Headers in flight as bytes, by (arrival time, insertion order); true: towards B.
    let mut wire: BTreeMap<(Instant, u64), (bool, Vec<u8>)> = BTreeMap::new();
    let mut order = 0u64;
    let mut put = |wire: &mut BTreeMap<_, _>, at: Instant, to_b: bool, h: &CpHeader| {
        let mut bytes = Vec::new();
        h.encode(&mut bytes).unwrap_or_else(|e| panic!("{e}"));
        order += 1;
        wire.insert((at, order), (to_b, bytes));
    };
    let mut pacer = PacingCredit::new(a.available_bandwidth(APP), SIZE, Instant::ZERO);
    let (start, end) = (Instant::from_secs(warmup), Instant::from_secs(secs));
    let mut sent: Bytes = 0;
    let (mut next_sample, mut samples, mut sum_p, mut sum_f) = (start, 0u32, 0.0, 0.0);

    loop {
        let t_wire = wire
            .first_key_value()
            .map_or(Instant::MAX, |(&(t, _), _)| t);
        let t_b = b.poll_timeout().unwrap_or(Instant::MAX);
        let t_a = a.poll_timeout().unwrap_or(Instant::MAX);
        let t_send = pacer.next_time(SIZE);
        let now = t_wire.min(t_b).min(t_a).min(t_send);
        if now >= end {
            break;
        }
        if t_wire == now {
            let Some((_, (to_b, bytes))) = wire.pop_first() else {
                break;
            };
            let (mut h, n) = CpHeader::decode(&bytes).unwrap_or_else(|e| panic!("{e}"));
            assert_eq!(n, bytes.len());
            if to_b {
                b.on_inbound(now, &mut h);
            } else {
                a.on_inbound(now, &mut h);
            }
        } else if t_b == now {
            while let Some(h) = b.poll_feedback(now) {
                put(&mut wire, now + one_way, false, &h);
            }
            b.handle_timeout(now);
        } else if t_a == now {
            a.handle_timeout(now);
        } else if pacer.consume(now, SIZE) {
            let mut h = CpHeader::new(APP, 1);
            a.on_outbound(now, &mut h, SIZE);
            if now >= start {
                sent += SIZE;
            }
            if !link.bernoulli(loss) {
                put(&mut wire, now + one_way, true, &h);
            }
        }
        pacer.set_rate(now, a.available_bandwidth(APP));
        if now >= next_sample {
            if let Some(st) = a.status(APP) {
                samples += 1;
                sum_p += st.loss_event_rate;
                sum_f += st.sampling_fraction;
            }
            next_sample += Duration::from_secs(1);
        }
    }
    let status = a.status(APP).unwrap_or_else(|| panic!("no status"));
    Outcome {
        per_flowshare: sent as f64 / (secs - warmup) as f64 / f64::from(flowshares.shares()),
        mean_p: sum_p / f64::from(samples.max(1)),
        mean_f: sum_f / f64::from(samples.max(1)),
        status,
    }
}

/// Runs one flowshare and m flowshares the naive way and with BFLD, over the same path.
fn compare(control: AggregateControl, m: u32, loss: f64) -> (Outcome, Outcome, Outcome) {
    let (secs, warmup) = (600, 100);
    let single = run(Flowshares::Single, control, loss, secs, warmup, 11);
    let naive = run(Flowshares::Naive { m }, control, loss, secs, warmup, 12);
    let bfld = run(Flowshares::Bfld { m }, control, loss, secs, warmup, 13);
    for (name, o) in [("single", &single), ("naive", &naive), ("bfld", &bfld)] {
        eprintln!(
            "{control:?} {name:>6} m={m}: {:8.0} B/s per flowshare ({:.3} of one), mean p {:.5}, \
             mean F {:.3}, loss rate {:.4}",
            o.per_flowshare,
            o.per_flowshare / single.per_flowshare,
            o.mean_p,
            o.mean_f,
            o.status.loss_rate,
        );
    }
    (single, naive, bfld)
}

#[test]
fn bfld_gives_m_flowshares_under_bernoulli_loss_and_the_naive_approach_does_not() {
    let m = 8;
    let (single, naive, bfld) = compare(AggregateControl::Tfrc, m, 0.02);
    // Every run sees the path's loss rate and RTT.
    for o in [&single, &naive, &bfld] {
        assert!(
            (o.status.loss_rate - 0.02).abs() < 0.01,
            "{}",
            o.status.loss_rate
        );
        // The filtered RTT rounds each step to the nanosecond.
        let rtt = o.status.rtt.map_or(0, Duration::as_nanos);
        assert!(rtt.abs_diff(100_000_000) < 10_000, "{rtt} ns");
    }
    // BFLD's virtual stream sees about the loss event rate of one flowshare...
    let p_ratio = bfld.mean_p / single.mean_p;
    assert!(
        (p_ratio - 1.0).abs() < 0.25,
        "BFLD's loss event rate is {p_ratio:.3} times one flowshare's"
    );
    // F is about 1/m, and about that fraction of the events was kept.
    let (offered, kept) = bfld.status.bfld_offered_kept;
    let kept_fraction = kept as f64 / offered as f64;
    for f in [bfld.mean_f, kept_fraction] {
        assert!(
            (f * f64::from(m) - 1.0).abs() < 0.25,
            "BFLD: F = {f:.4}, 1/m = {}",
            1.0 / f64::from(m)
        );
    }
    // ...so the aggregate sends about m times one flowshare's rate.
    let bfld_ratio = bfld.per_flowshare / single.per_flowshare;
    assert!(
        (bfld_ratio - 1.0).abs() < 0.25,
        "BFLD: {bfld_ratio:.3} flowshares per flow, expected 1 within 25%"
    );
    // The naive approach's loss event rate is far lower, and it takes far more than m.
    let naive_ratio = naive.per_flowshare / single.per_flowshare;
    assert!(
        naive_ratio > 1.25,
        "naive: {naive_ratio:.3} flowshares per flow, expected clearly more than 1"
    );
    assert!(naive.mean_p < 0.75 * single.mean_p);
}

#[test]
fn bfld_gives_m_flowshares_with_rap_on_the_aggregate_too() {
    let (single, _naive, bfld) = compare(AggregateControl::Rap, 4, 0.02);
    let ratio = bfld.per_flowshare / single.per_flowshare;
    assert!(
        (ratio - 1.0).abs() < 0.25,
        "RAP with BFLD: {ratio:.3} flowshares per flow"
    );
}
