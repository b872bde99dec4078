//! The probe protocol over UDP between two daemons on loopback: the sender's daemon probes the
//! receiver's, which answers with what the receiving application reported; forged responses
//! change nothing.

mod common;

use common::{spawn_daemon, TempDir};
use concord_cc::cm::{FeedbackMode, FlowKey, ProbeMessage, Response};
use concord_net::client::CmClient;
use concord_net::hub::{Hub, HubConfig};
use concord_net::protocol::Event;
use std::net::Ipv4Addr;
use std::sync::Arc;
use std::time::Duration as StdDuration;
use tokio::net::UdpSocket;
use tokio::time::{timeout, Instant};

/// A hub with a probe socket on loopback that sends probes to `peer_port`.
async fn with_probes(hub: &Arc<Hub>, sock: UdpSocket, peer_port: u16) {
    tokio::spawn(Arc::clone(hub).run_probes(sock, peer_port));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_senders_daemon_learns_from_the_receivers_daemon() {
    let (dir_a, dir_b) = (TempDir::new("probe-a"), TempDir::new("probe-b"));
    let config = HubConfig {
        cm: concord_cc::cm::CmConfig {
            initial_rtt: concord_cc::Duration::from_millis(20),
            ..concord_cc::cm::CmConfig::default()
        },
        ..HubConfig::default()
    };
    let a = spawn_daemon(&dir_a.socket(), config.clone());
    let b = spawn_daemon(&dir_b.socket(), config);
    let ua = UdpSocket::bind((Ipv4Addr::LOCALHOST, 0))
        .await
        .expect("bind");
    let ub = UdpSocket::bind((Ipv4Addr::LOCALHOST, 0))
        .await
        .expect("bind");
    let (pa, pb) = (
        ua.local_addr().expect("addr").port(),
        ub.local_addr().expect("addr").port(),
    );
    with_probes(&a, ua, pb).await;
    with_probes(&b, ub, pa).await;

    let sender = CmClient::connect(dir_a.socket()).await.expect("connect");
    let receiver = CmClient::connect(dir_b.socket()).await.expect("connect");
    let mut events = sender.events().expect("events");
    let key = FlowKey::new(Ipv4Addr::LOCALHOST, 5004, 40_000);
    let flow = sender.open(key).await.expect("open");
    flow.set_feedback(FeedbackMode::Explicit)
        .await
        .expect("explicit");
    assert_eq!(flow.query().await.expect("query").srtt, None);
    flow.request(1_000_000).await.expect("request");
    let start = Instant::now();
    // Send on every grant; the receiving application reports each packet to its daemon.
    while a.cm_stats().responses_accepted < 3 {
        assert!(
            start.elapsed() < StdDuration::from_secs(10),
            "no responses: {:?}",
            a.cm_stats()
        );
        let Ok(Some(e)) = timeout(StdDuration::from_millis(50), events.next()).await else {
            continue;
        };
        if let Event::Grant { bytes, .. } = e {
            flow.notify(bytes).await.expect("notify");
            receiver
                .received(Ipv4Addr::LOCALHOST, key.tag(), bytes, false)
                .await
                .expect("received");
        }
    }
    let q = flow.query().await.expect("query");
    assert!(q.srtt.is_some(), "a response gives an RTT sample");
    assert!(b.responder_stats().probes_answered >= 3);
    assert_eq!(a.cm_stats().responses_forged, 0);

    // A response with a nonce no probe carried is refused and counted.
    let forger = UdpSocket::bind((Ipv4Addr::LOCALHOST, 0))
        .await
        .expect("bind");
    let before = a.cm_stats();
    let forged = ProbeMessage::Response(Response {
        thisprobe: u32::try_from(before.probes_sent).unwrap_or(u32::MAX),
        lastprobe: 0,
        nonce: 0x1234_5678,
        flows: Vec::new(),
    });
    let mut bytes = Vec::new();
    forged.encode(&mut bytes);
    forger
        .send_to(&bytes, (Ipv4Addr::LOCALHOST, pa))
        .await
        .expect("send");
    forger
        .send_to(&[1, 2, 3], (Ipv4Addr::LOCALHOST, pa))
        .await
        .expect("send");
    let start = Instant::now();
    loop {
        let now = a.cm_stats();
        let refused = (now.responses_forged
            + now.responses_refused
            + now.responses_stale
            + now.responses_duplicate)
            - (before.responses_forged
                + before.responses_refused
                + before.responses_stale
                + before.responses_duplicate);
        if refused >= 1 && now.responses_malformed > before.responses_malformed {
            break;
        }
        assert!(
            start.elapsed() < StdDuration::from_secs(5),
            "not counted: {now:?}"
        );
        tokio::time::sleep(StdDuration::from_millis(5)).await;
    }
}

/// Arbitrary bytes, forged nonces, replays and responses from a spoofed host at the probe
/// port: each is counted and dropped, none is taken, and the flow's rate never rises.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn forged_replayed_and_malformed_responses_never_raise_the_rate() {
    use concord_cc::cm::FlowCount;
    use concord_cc::rng::Rng;
    let dir = TempDir::new("probe-fuzz");
    let config = HubConfig {
        cm: concord_cc::cm::CmConfig {
            initial_rtt: concord_cc::Duration::from_millis(20),
            ..concord_cc::cm::CmConfig::default()
        },
        ..HubConfig::default()
    };
    let a = spawn_daemon(&dir.socket(), config);
    let ua = UdpSocket::bind((Ipv4Addr::LOCALHOST, 0))
        .await
        .expect("bind");
    let pa = ua.local_addr().expect("addr").port();
    // The "receiving daemon" is this test: it sees the probes and answers as it likes.
    let peer = UdpSocket::bind((Ipv4Addr::LOCALHOST, 0))
        .await
        .expect("bind");
    with_probes(&a, ua, peer.local_addr().expect("addr").port()).await;
    let cm = CmClient::connect(dir.socket()).await.expect("connect");
    let mut events = cm.events().expect("events");
    let key = FlowKey::new(Ipv4Addr::LOCALHOST, 5004, 40_001);
    let flow = cm.open(key).await.expect("open");
    flow.set_feedback(FeedbackMode::Explicit)
        .await
        .expect("explicit");
    flow.request(3000).await.expect("request");
    let mut sent = 0u64;
    while sent < 3000 {
        if let Ok(Some(Event::Grant { bytes, .. })) =
            timeout(StdDuration::from_secs(5), events.next()).await
        {
            flow.notify(bytes).await.expect("notify");
            sent += bytes;
        }
    }
    // One honest answer to the first probe after the data.
    let mut buf = [0u8; 2048];
    let probe = loop {
        let (n, _) = timeout(StdDuration::from_secs(5), peer.recv_from(&mut buf))
            .await
            .expect("a probe")
            .expect("recv");
        if let Ok(ProbeMessage::Probe(p)) = ProbeMessage::decode(&buf[..n]) {
            break p;
        }
    };
    let honest = ProbeMessage::Response(Response {
        thisprobe: probe.seq,
        lastprobe: 0,
        nonce: probe.nonce,
        flows: vec![FlowCount {
            tag: key.tag(),
            packets: 2,
            ce_packets: 0,
            bytes: sent,
        }],
    });
    let mut honest_bytes = Vec::new();
    honest.encode(&mut honest_bytes);
    peer.send_to(&honest_bytes, (Ipv4Addr::LOCALHOST, pa))
        .await
        .expect("send");
    let start = Instant::now();
    while a.cm_stats().responses_accepted < 1 {
        assert!(
            start.elapsed() < StdDuration::from_secs(5),
            "{:?}",
            a.cm_stats()
        );
        tokio::time::sleep(StdDuration::from_millis(2)).await;
    }
    let rate0 = flow.query().await.expect("query").rate.expect("a rate");
    let dropped = |s: concord_cc::cm::CmStats| {
        s.responses_malformed
            + s.responses_forged
            + s.responses_refused
            + s.responses_stale
            + s.responses_duplicate
    };
    // Noise whose type byte says "probe" is refused (and counted) by the responder.
    let refused = |h: &Hub| dropped(h.cm_stats()) + h.responder_stats().malformed;
    let before = refused(&a);
    // A host that never got a probe.
    let spoofer = UdpSocket::bind((Ipv4Addr::new(127, 0, 0, 2), 0))
        .await
        .expect("bind 127.0.0.2");
    let mut rng = Rng::new(7);
    const N: u64 = 3000;
    for i in 0..N {
        let claim = |nonce: u64, thisprobe: u32| {
            let mut b = Vec::new();
            ProbeMessage::Response(Response {
                thisprobe,
                lastprobe: thisprobe.saturating_sub(1),
                nonce,
                flows: vec![FlowCount {
                    tag: key.tag(),
                    packets: 1000,
                    ce_packets: 0,
                    bytes: 1_500_000,
                }],
            })
            .encode(&mut b);
            b
        };
        let (bytes, from_spoofer) = match i % 5 {
            // Arbitrary bytes.
            0 => {
                let len = rng.below(120) as usize;
                ((0..len).map(|_| rng.next_u64() as u8).collect(), false)
            }
            // The honest response, replayed.
            1 => (honest_bytes.clone(), false),
            // A guessed nonce for a recent probe, claiming much delivered.
            2 => (
                claim(rng.next_u64(), probe.seq + rng.below(4) as u32),
                false,
            ),
            // The honest response cut short or with a byte flipped.
            3 => {
                let mut b = honest_bytes.clone();
                let at = rng.below(b.len() as u64) as usize;
                if rng.bernoulli(0.5) {
                    b.truncate(at);
                } else {
                    b[at] ^= 1 << rng.below(8);
                }
                (b, false)
            }
            // The right nonce, from a host that was never probed.
            _ => (claim(probe.nonce, probe.seq), true),
        };
        let to = (Ipv4Addr::LOCALHOST, pa);
        if from_spoofer {
            spoofer.send_to(&bytes, to).await.expect("send");
        } else {
            peer.send_to(&bytes, to).await.expect("send");
        }
        if i % 100 == 0 {
            // Loopback drops datagrams that outrun the receiver: keep the pace humane.
            tokio::time::sleep(StdDuration::from_millis(1)).await;
        }
    }
    let start = Instant::now();
    loop {
        let now = a.cm_stats();
        let rate = flow.query().await.expect("query").rate.expect("a rate");
        assert!(
            rate <= rate0,
            "a forged response raised the rate: {rate0:?} -> {rate:?}"
        );
        if refused(&a) - before >= N {
            break;
        }
        assert!(
            start.elapsed() < StdDuration::from_secs(10),
            "{} of {N} counted: {now:?}",
            refused(&a) - before
        );
        tokio::time::sleep(StdDuration::from_millis(5)).await;
    }
    let s = a.cm_stats();
    assert_eq!(
        s.responses_accepted, 1,
        "a forged response was taken: {s:?}"
    );
    println!("all {N} counted and dropped: {s:?}; rate {rate0:?} never rose");
    // The daemon still serves its clients.
    assert!(cm.status().await.is_ok());
}

/// Two daemons on loopback with probe keys `ka` and `kb`; a flow from A to B in explicit mode
/// sends on every grant for `run` (or until 3 responses were accepted). Returns A's and B's
/// hubs.
async fn keyed_exchange(
    ka: Option<concord_cc::cm::ProbeKey>,
    kb: Option<concord_cc::cm::ProbeKey>,
    run: StdDuration,
) -> (Arc<Hub>, Arc<Hub>) {
    let (dir_a, dir_b) = (TempDir::new("key-a"), TempDir::new("key-b"));
    let config = |probe_key| HubConfig {
        cm: concord_cc::cm::CmConfig {
            initial_rtt: concord_cc::Duration::from_millis(20),
            ..concord_cc::cm::CmConfig::default()
        },
        probe_key,
        ..HubConfig::default()
    };
    let a = spawn_daemon(&dir_a.socket(), config(ka));
    let b = spawn_daemon(&dir_b.socket(), config(kb));
    let ua = UdpSocket::bind((Ipv4Addr::LOCALHOST, 0))
        .await
        .expect("bind");
    let ub = UdpSocket::bind((Ipv4Addr::LOCALHOST, 0))
        .await
        .expect("bind");
    let (pa, pb) = (
        ua.local_addr().expect("addr").port(),
        ub.local_addr().expect("addr").port(),
    );
    with_probes(&a, ua, pb).await;
    with_probes(&b, ub, pa).await;
    let sender = CmClient::connect(dir_a.socket()).await.expect("connect");
    let receiver = CmClient::connect(dir_b.socket()).await.expect("connect");
    let mut events = sender.events().expect("events");
    let key = FlowKey::new(Ipv4Addr::LOCALHOST, 5004, 40_000);
    let flow = sender.open(key).await.expect("open");
    flow.set_feedback(FeedbackMode::Explicit)
        .await
        .expect("explicit");
    flow.request(1_000_000).await.expect("request");
    let start = Instant::now();
    while start.elapsed() < run && a.cm_stats().responses_accepted < 3 {
        let Ok(Some(e)) = timeout(StdDuration::from_millis(50), events.next()).await else {
            continue;
        };
        if let Event::Grant { bytes, .. } = e {
            flow.notify(bytes).await.expect("notify");
            receiver
                .received(Ipv4Addr::LOCALHOST, key.tag(), bytes, false)
                .await
                .expect("received");
        }
    }
    (a, b)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn daemons_that_share_a_key_authenticate_probes_and_other_keys_are_refused() {
    let k1 = concord_cc::cm::ProbeKey([7; 32]);
    let k2 = concord_cc::cm::ProbeKey([8; 32]);
    let (a, b) = keyed_exchange(Some(k1), Some(k1), StdDuration::from_secs(10)).await;
    assert!(a.cm_stats().responses_accepted >= 3, "{:?}", a.cm_stats());
    assert_eq!(b.responder_stats().malformed, 0);
    // A receiver with another key, or none, answers nothing.
    for kb in [Some(k2), None] {
        let (a, b) = keyed_exchange(Some(k1), kb, StdDuration::from_secs(1)).await;
        assert_eq!(a.cm_stats().responses_accepted, 0, "{:?}", a.cm_stats());
        assert_eq!(b.responder_stats().probes_answered, 0);
        assert!(
            b.responder_stats().malformed > 0,
            "{:?}",
            b.responder_stats()
        );
    }
}
