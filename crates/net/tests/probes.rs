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
