//! SACK loss recovery (RFC 6675) against NewReno (RFC 6582) on a dumbbell path reduced to its
//! essentials: one bottleneck of 10 Mbit/s serialising the data (an unbounded queue), 50 ms
//! each way; three segments of the third slow-start window (bytes 32000, 35000 and 38000 of
//! 1000-byte segments, in a window of 40) are lost on their first transmission. Sender and
//! receiver are the sans-IO state machines, without delayed ACKs, driven by a small event loop
//! with every time in nanoseconds.
//!
//! The models: with SACK the sender learns of all three holes from the SACK blocks and resends
//! each once `IsLost` marks it and pipe leaves room under cwnd, all before the ACK of the first
//! retransmission returns, so recovery ends about one RTT after the last hole is resent
//! (RFC 6675 section 5). NewReno learns of one hole per partial ACK, so it resends one segment
//! per RTT and recovery lasts at least three RTTs (RFC 6582 section 3.2 step 5; Fall and Floyd,
//! "Simulation-based comparisons of Tahoe, Reno and SACK TCP", 1996, section 4).

use concord_cc::tcp::config::{Recovery, TcpConfig};
use concord_cc::tcp::prr::ReductionBound;
use concord_cc::tcp::receiver::AckSegment;
use concord_cc::tcp::{TcpReceiver, TcpSender};
use concord_cc::time::{Duration, Instant};
use std::collections::BTreeMap;

const MSS: u64 = 1000;
/// One-way propagation delay.
const ONE_WAY: Duration = Duration::from_millis(50);
const RTT_NS: u64 = 100_000_000;
/// Serialisation of one 1052-byte packet at 10 Mbit/s: 841.6 us.
const TX_NS: u64 = 1052 * 8 * 100;
const LOST: [u64; 3] = [32_000, 35_000, 38_000];
const TRANSFER: u64 = 200 * MSS;

enum Event {
    Data { seq: u64, len: u32 },
    Ack(AckSegment),
    SenderTimer,
}

/// What one run shows.
#[derive(Debug, Default)]
struct Run {
    /// (time ns, first byte) of every retransmission.
    retransmits: Vec<(u64, u64)>,
    /// When recovery started and ended (ns).
    recovery: Vec<(u64, Option<u64>)>,
    /// When the first ACK beyond the first lost byte arrived (ns).
    first_advance: Option<u64>,
    timeouts: u64,
    fast_retransmits: u64,
    completion_ns: u64,
}

fn run(sack: bool, recovery: Recovery) -> Run {
    let config = TcpConfig {
        mss: MSS,
        initial_cwnd: 10,
        delayed_ack: false,
        sack,
        recovery,
        ..TcpConfig::default()
    };
    let mut sender = TcpSender::new(config.clone()).expect("valid");
    sender.set_app_limit(TRANSFER);
    let mut receiver = TcpReceiver::new(&config);
    let mut events: BTreeMap<(u64, u64), Event> = BTreeMap::new();
    let mut order = 0u64;
    let mut push = |events: &mut BTreeMap<(u64, u64), Event>, at: u64, e: Event| {
        order += 1;
        events.insert((at, order), e);
    };
    let mut link_free = 0u64;
    let mut dropped: Vec<u64> = Vec::new();
    let mut out = Run::default();
    let mut now = 0u64;
    loop {
        // Send what the sender allows, then arm its timer.
        while let Some(seg) = sender.poll_transmit(Instant::from_nanos(now)) {
            if seg.retransmission {
                out.retransmits.push((now, seg.seq));
            }
            if LOST.contains(&seg.seq) && !dropped.contains(&seg.seq) {
                dropped.push(seg.seq);
                continue;
            }
            link_free = link_free.max(now) + TX_NS;
            let at = link_free + ONE_WAY.as_nanos();
            push(
                &mut events,
                at,
                Event::Data {
                    seq: seg.seq,
                    len: seg.len,
                },
            );
        }
        if let Some(t) = sender.poll_timeout() {
            push(&mut events, t.as_nanos(), Event::SenderTimer);
        }
        if sender.is_finished() {
            out.completion_ns = now;
            break;
        }
        let Some(((at, _), event)) = events.pop_first() else {
            panic!("the transfer stalled at {now} ns");
        };
        assert!(at < 60 * 1_000_000_000, "no completion within 60 s");
        now = at;
        let t = Instant::from_nanos(now);
        let was_in_recovery = sender.in_recovery();
        match event {
            Event::Data { seq, len } => {
                receiver.on_segment(t, seq, len, false, false);
                if let Some(a) = receiver.poll_ack() {
                    push(&mut events, now + ONE_WAY.as_nanos(), Event::Ack(a));
                }
            }
            Event::Ack(a) => {
                sender.on_ack_sack(t, a.ack, a.ece, &a.sack);
                if a.ack > LOST[0] && out.first_advance.is_none() {
                    out.first_advance = Some(now);
                }
            }
            Event::SenderTimer => {
                sender.on_timeout(t);
            }
        }
        match (was_in_recovery, sender.in_recovery()) {
            (false, true) => out.recovery.push((now, None)),
            (true, false) => {
                if let Some(last) = out.recovery.last_mut() {
                    last.1 = Some(now);
                }
            }
            _ => {}
        }
    }
    out.timeouts = sender.stats().timeouts;
    out.fast_retransmits = sender.stats().fast_retransmits;
    out
}

fn check_sack(r: &Run) {
    assert_eq!((r.timeouts, r.fast_retransmits), (0, 1), "{r:?}");
    let seqs: Vec<u64> = r.retransmits.iter().map(|&(_, s)| s).collect();
    assert_eq!(seqs, LOST, "each lost segment resent once, in order: {r:?}");
    let (start, end) = r.recovery[0];
    let end = end.expect("recovery ended");
    // Every hole is resent before the ACK of the first retransmission returns.
    let last = r.retransmits[2].0;
    let first_advance = r
        .first_advance
        .expect("the first retransmission was acknowledged");
    assert!(last < first_advance, "{r:?}");
    assert!(first_advance - start >= RTT_NS, "{r:?}");
    // Recovery ends with the ACK of the last retransmission, one RTT (plus the queue ahead
    // of it) after it was sent: under two RTTs from the start.
    assert!(end - last >= RTT_NS, "{r:?}");
    assert!(end - start < 2 * RTT_NS, "{r:?}");
}

#[test]
fn sack_resends_three_losses_of_one_window_before_the_first_is_acknowledged() {
    check_sack(&run(true, Recovery::Classic));
}

#[test]
fn sack_with_prr_resends_three_losses_of_one_window_before_the_first_is_acknowledged() {
    check_sack(&run(true, Recovery::Prr(ReductionBound::SlowStart)));
}

#[test]
fn newreno_resends_one_lost_segment_per_rtt() {
    let r = run(false, Recovery::Classic);
    assert_eq!(r.fast_retransmits, 1, "{r:?}");
    let seqs: Vec<u64> = r.retransmits.iter().take(3).map(|&(_, s)| s).collect();
    assert_eq!(seqs, LOST, "{r:?}");
    // Each partial ACK reveals the next hole: the retransmissions are an RTT apart, the
    // second not before the first is acknowledged.
    for pair in r.retransmits[..3].windows(2) {
        assert!(pair[1].0 - pair[0].0 >= RTT_NS, "{r:?}");
    }
    assert!(r.retransmits[1].0 >= r.first_advance.expect("acknowledged"));
    let (start, end) = r.recovery[0];
    assert!(end.expect("recovery ended") - start >= 3 * RTT_NS, "{r:?}");
    // The same path with SACK finishes the transfer sooner.
    let sack = run(true, Recovery::Classic);
    assert!(
        sack.completion_ns + RTT_NS < r.completion_ns,
        "SACK {} ns, NewReno {} ns",
        sack.completion_ns,
        r.completion_ns
    );
}
