//! The daemon's bounds on its clients: a connection cap that closes the longest idle
//! connection without flows to make room, the idle timeout and the partial-frame timeout.

mod common;

use common::TempDir;
use concord_net::client::CmClient;
use concord_net::daemon::{bind_socket, serve_with, Limits};
use concord_net::hub::{Hub, HubConfig};
use std::sync::Arc;
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::UnixStream;

fn daemon(dir: &TempDir, limits: Limits) -> Arc<Hub> {
    let hub = Hub::new(HubConfig::default()).expect("valid config");
    let listener = bind_socket(&dir.socket()).expect("bind");
    tokio::spawn(Arc::clone(&hub).run_timer());
    tokio::spawn(serve_with(Arc::clone(&hub), listener, limits));
    hub
}

/// Reads until the daemon closes the connection; the bytes it sent.
async fn until_closed(s: &mut UnixStream, within: Duration) -> Option<Vec<u8>> {
    let mut all = Vec::new();
    let mut buf = [0u8; 256];
    tokio::time::timeout(within, async {
        loop {
            match s.read(&mut buf).await {
                Ok(0) | Err(_) => return all,
                Ok(n) => all.extend_from_slice(&buf[..n]),
            }
        }
    })
    .await
    .ok()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn at_the_cap_the_longest_idle_connection_without_flows_makes_room() {
    let dir = TempDir::new("cap");
    let hub = daemon(
        &dir,
        Limits {
            max_connections: 8,
            ..Limits::default()
        },
    );
    // One client holds a flow; eight idle connections follow.
    let keeper = CmClient::connect(dir.socket()).await.expect("connect");
    let key = concord_cc::cm::FlowKey::new(std::net::Ipv4Addr::LOCALHOST, 1, 2);
    let _flow = keeper.open(key).await.expect("open");
    let mut idle = Vec::new();
    for _ in 0..40 {
        idle.push(UnixStream::connect(dir.socket()).await.expect("connect"));
        tokio::time::sleep(Duration::from_millis(2)).await;
    }
    // A new client is served, and the one with a flow was never closed.
    let fresh = CmClient::connect(dir.socket()).await.expect("connect");
    let mut status = tokio::time::timeout(Duration::from_secs(5), fresh.status())
        .await
        .expect("answered in time")
        .expect("status");
    // The connection that made room is closed by its own task, which may still be running
    // when the new client is first answered: wait up to 2 s for it.
    for _ in 0..200 {
        if status.clients <= 8 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
        status = fresh.status().await.expect("status");
    }
    assert!(status.clients <= 8, "{status:?}");
    assert_eq!(hub.status().flows, 1);
    assert!(
        keeper.status().await.is_ok(),
        "the client with a flow stays"
    );
    // The first idle connections were closed with a fatal frame (kind 0xff, code 17).
    let bytes = until_closed(&mut idle[0], Duration::from_secs(5))
        .await
        .expect("closed");
    assert_eq!(bytes.get(4..7), Some(&[1u8, 0xff, 17][..]), "{bytes:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn idle_and_half_sent_connections_are_closed_after_their_timeouts() {
    let dir = TempDir::new("timeouts");
    let hub = daemon(
        &dir,
        Limits {
            idle_timeout: Duration::from_millis(300),
            frame_timeout: Duration::from_millis(300),
            ..Limits::default()
        },
    );
    let mut idle = UnixStream::connect(dir.socket()).await.expect("connect");
    let mut slow = UnixStream::connect(dir.socket()).await.expect("connect");
    // A length prefix of 18 bytes and one byte of the frame: then nothing.
    slow.write_all(&[0, 0, 0, 18, 1]).await.expect("write");
    let start = tokio::time::Instant::now();
    let a = until_closed(&mut idle, Duration::from_secs(5))
        .await
        .expect("idle closed");
    let b = until_closed(&mut slow, Duration::from_secs(5))
        .await
        .expect("slow closed");
    assert!(start.elapsed() >= Duration::from_millis(250));
    assert_eq!(a.get(4..7), Some(&[1u8, 0xff, 17][..]), "{a:?}");
    assert_eq!(b.get(4..7), Some(&[1u8, 0xff, 16][..]), "{b:?}");
    assert_eq!(hub.status().malformed_frames, 1);
    tokio::time::sleep(Duration::from_millis(50)).await;
    assert_eq!(hub.status().clients, 0);
}

/// The p-th percentile of `v` (sorted in place), p in [0, 1].
fn percentile(v: &mut [Duration], p: f64) -> Duration {
    v.sort();
    let i = ((v.len() as f64 - 1.0) * p).round() as usize;
    v.get(i).copied().unwrap_or_default()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bench_4096_flows_to_one_destination_open_while_another_client_is_served() {
    let dir = TempDir::new("bench-open");
    let _hub = daemon(&dir, Limits::default());
    let opener = CmClient::connect(dir.socket()).await.expect("connect");
    let other = CmClient::connect(dir.socket()).await.expect("connect");
    let mut events = other.events().expect("events");
    let dst = std::net::Ipv4Addr::new(192, 0, 2, 1);
    let lone = other
        .open(concord_cc::cm::FlowKey::new(
            std::net::Ipv4Addr::new(192, 0, 2, 2),
            9,
            9,
        ))
        .await
        .expect("open");
    let fast = concord_cc::cm::CmUpdate {
        rtt: Some(concord_cc::Duration::from_micros(100)),
        ..concord_cc::cm::CmUpdate::default()
    };
    lone.update(fast).await.expect("update");
    let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let stop2 = Arc::clone(&stop);
    let prober = tokio::spawn(async move {
        let mut lat = Vec::new();
        while !stop2.load(std::sync::atomic::Ordering::Relaxed) {
            let t = tokio::time::Instant::now();
            lone.request(100).await.expect("request");
            loop {
                match tokio::time::timeout(Duration::from_secs(5), events.next()).await {
                    Ok(Some(concord_net::protocol::Event::Grant { .. })) => break,
                    Ok(Some(_)) => {}
                    other => panic!("no grant: {other:?}"),
                }
            }
            lat.push(t.elapsed());
            lone.notify(100).await.expect("notify");
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
        lat
    });
    tokio::time::sleep(Duration::from_millis(50)).await;
    let start = tokio::time::Instant::now();
    let mut flows = Vec::new();
    for port in 0..4096u16 {
        let key = concord_cc::cm::FlowKey::new(dst, 80, 10_000 + port);
        flows.push(opener.open(key).await.expect("open"));
    }
    let open_time = start.elapsed();
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    let mut lat = prober.await.expect("prober");
    let p99 = percentile(&mut lat, 0.99);
    println!(
        "4096 flows to one destination opened in {open_time:?}; the other client's grant latency \
         p50 {:?} p99 {p99:?} over {} grants",
        percentile(&mut lat, 0.5),
        lat.len()
    );
    assert!(open_time < Duration::from_secs(5), "{open_time:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn at_the_cap_with_flows_everywhere_the_connection_silent_the_longest_makes_room() {
    let dir = TempDir::new("cap-flows");
    let hub = daemon(
        &dir,
        Limits {
            max_connections: 2,
            evict_silent_after: Duration::from_millis(300),
            ..Limits::default()
        },
    );
    let key = |p| concord_cc::cm::FlowKey::new(std::net::Ipv4Addr::LOCALHOST, p, 2);
    let oldest = CmClient::connect(dir.socket()).await.expect("connect");
    let _a = oldest.open(key(1)).await.expect("open");
    let recent = CmClient::connect(dir.socket()).await.expect("connect");
    let _b = recent.open(key(2)).await.expect("open");
    tokio::time::sleep(Duration::from_millis(150)).await;
    let _ = recent.status().await.expect("status");
    // Both hold flows; `recent` spoke 150 ms ago (in use), `oldest` has been silent longer
    // than 300 ms by the time the third connects.
    tokio::time::sleep(Duration::from_millis(200)).await;
    let fresh = CmClient::connect(dir.socket()).await.expect("connect");
    assert!(fresh.status().await.is_ok(), "the new connection is served");
    assert!(recent.status().await.is_ok(), "the connection in use stays");
    assert!(
        oldest.status().await.is_err(),
        "the connection silent the longest was closed"
    );
    // Its flow is closed by its own task: wait up to 2 s.
    for _ in 0..200 {
        if hub.status().flows == 1 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert_eq!(hub.status().flows, 1);
}
