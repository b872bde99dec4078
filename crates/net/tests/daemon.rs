//! `concordd` end to end: round trips through the Unix socket, clients that vanish, many
//! flows, malformed frames, the socket's permissions and the embedded mode.

mod common;

use common::{fast_config, spawn_daemon, Daemon, TempDir};
use concord_cc::cm::{CmUpdate, FlowKey, LossMode};
use concord_cc::Duration;
use concord_net::client::{ClientError, CmClient, EmbeddedCm, Events};
use concord_net::hub::HubConfig;
use concord_net::protocol::{
    ClientMessage, ErrorCode, Event, FrameBuffer, Reply, Request, ServerMessage, PREFIX_LEN,
};
use std::io::{Read, Write};
use std::net::Ipv4Addr;
use std::os::unix::fs::PermissionsExt;
use std::time::Duration as StdDuration;
use tokio::time::timeout;
use tokio::time::Instant as StdInstant;

const LIMIT: StdDuration = StdDuration::from_secs(10);

fn key(dst_port: u16, src_port: u16) -> FlowKey {
    FlowKey::new(Ipv4Addr::LOCALHOST, dst_port, src_port)
}

/// Waits for a grant of `flow`, skipping other events.
async fn grant_of(events: &mut Events, flow: concord_cc::cm::FlowId) -> u64 {
    loop {
        match timeout(LIMIT, events.next()).await {
            Ok(Some(Event::Grant { flow: f, bytes })) if f == flow => return bytes,
            Ok(Some(_)) => {}
            Ok(None) => panic!("the event stream ended"),
            Err(_) => panic!("no grant within {LIMIT:?}"),
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_request_comes_back_as_a_grant_through_the_socket() {
    let dir = TempDir::new("grant");
    let _hub = spawn_daemon(&dir.socket(), HubConfig::default());
    let cm = CmClient::connect(dir.socket()).await.expect("connect");
    let mut events = cm.events().expect("first take");
    assert!(cm.events().is_none());
    let flow = cm.open(key(5004, 40_000)).await.expect("open");
    // Before an RTT sample there is no estimate (RFC 3124: negative values).
    assert_eq!(flow.query().await.expect("query").rate, None);
    let rtt = Some(Duration::from_millis(20));
    flow.update(CmUpdate {
        rtt,
        ..CmUpdate::default()
    })
    .await
    .expect("update");
    // Two MTUs per 20 ms: 1.2 Mbit/s.
    let q = flow.query().await.expect("query");
    assert_eq!(q.rate.map(|r| r.bps()), Some(1_200_000));
    assert_eq!(q.srtt, Some(Duration::from_millis(20)));
    flow.request(3000).await.expect("request");
    let start = StdInstant::now();
    assert_eq!(grant_of(&mut events, flow.id()).await, 1500);
    flow.notify(1500).await.expect("notify");
    // The second grant is paced: 1500 bytes at 1.2 Mbit/s is 10 ms later.
    assert_eq!(grant_of(&mut events, flow.id()).await, 1500);
    flow.notify(1500).await.expect("notify");
    let gap = start.elapsed();
    assert!(
        gap >= StdDuration::from_millis(8),
        "paced too fast: {gap:?}"
    );
    assert!(gap < StdDuration::from_secs(2), "paced too slowly: {gap:?}");
    let mf = flow.macroflow().await.expect("macroflow");
    let other = cm.open(key(5004, 40_001)).await.expect("open");
    assert_eq!(other.macroflow().await.expect("macroflow"), mf);
    let moved = other.set_macroflow(None).await.expect("set");
    assert_ne!(moved, mf);
    flow.close().await.expect("close");
    assert_eq!(cm.status().await.expect("status").flows, 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn refusals_are_typed_and_change_nothing() {
    let dir = TempDir::new("refuse");
    let _hub = spawn_daemon(&dir.socket(), HubConfig::default());
    let a = CmClient::connect(dir.socket()).await.expect("connect");
    let b = CmClient::connect(dir.socket()).await.expect("connect");
    let fa = a.open(key(1, 1)).await.expect("open");
    let dup = b.open(key(1, 1)).await;
    assert!(matches!(
        dup,
        Err(ClientError::Refused {
            code: ErrorCode::DuplicateFlow,
            ..
        })
    ));
    let bad = concord_cc::cm::ThreshHint {
        rate_downthresh: 2.0,
        ..concord_cc::cm::ThreshHint::default()
    };
    assert!(matches!(
        fa.thresh(bad).await,
        Err(ClientError::Refused {
            code: ErrorCode::InvalidThresh,
            ..
        })
    ));
    assert!(matches!(
        fa.set_macroflow(Some(concord_cc::cm::MacroflowId(999)))
            .await,
        Err(ClientError::Refused {
            code: ErrorCode::UnknownMacroflow,
            ..
        })
    ));
    fa.clone().close().await.expect("close");
    assert!(matches!(
        fa.request(10).await,
        Err(ClientError::Refused {
            code: ErrorCode::UnknownFlow,
            ..
        })
    ));
}

/// Sends one frame on a blocking socket and reads one frame back.
fn exchange(s: &mut std::os::unix::net::UnixStream, frame: &[u8]) -> ServerMessage {
    s.write_all(frame).expect("write");
    read_frame(s).expect("a frame")
}

/// Reads one frame, `None` at end of file.
fn read_frame(s: &mut std::os::unix::net::UnixStream) -> Option<ServerMessage> {
    let mut prefix = [0u8; PREFIX_LEN];
    s.read_exact(&mut prefix).ok()?;
    let mut body = vec![0u8; u32::from_be_bytes(prefix) as usize];
    s.read_exact(&mut body).ok()?;
    Some(ServerMessage::decode(&body).expect("the daemon sends valid frames"))
}

fn raw_connect(path: &std::path::Path) -> std::os::unix::net::UnixStream {
    let s = std::os::unix::net::UnixStream::connect(path).expect("connect");
    s.set_read_timeout(Some(LIMIT)).expect("timeout");
    s
}

#[test]
fn a_client_that_vanishes_has_its_flows_closed_within_one_second() {
    let d = Daemon::start(&[]);
    let mut s = raw_connect(&d.socket());
    for port in 0..50u16 {
        let open = ClientMessage {
            id: u32::from(port),
            request: Request::Open(key(7000, port)),
        };
        let r = exchange(&mut s, &open.encode());
        assert!(matches!(
            r,
            ServerMessage::Reply {
                reply: Reply::Opened(_),
                ..
            }
        ));
    }
    let mut watcher = raw_connect(&d.socket());
    let status = ClientMessage {
        id: 1,
        request: Request::Status,
    }
    .encode();
    let flows = |w: &mut std::os::unix::net::UnixStream| match exchange(w, &status) {
        ServerMessage::Reply {
            reply: Reply::Status(st),
            ..
        } => st.flows,
        other => panic!("unexpected {other:?}"),
    };
    assert_eq!(flows(&mut watcher), 50);
    // The client dies without closing anything: the kernel closes its socket.
    drop(s);
    let died = StdInstant::now();
    while flows(&mut watcher) != 0 {
        assert!(
            died.elapsed() < StdDuration::from_secs(1),
            "flows still open after 1 s"
        );
        std::thread::sleep(StdDuration::from_millis(5));
    }
    println!("flows freed {:?} after the client vanished", died.elapsed());
    // The same key opens again.
    let open = ClientMessage {
        id: 9,
        request: Request::Open(key(7000, 3)),
    };
    assert!(matches!(
        exchange(&mut watcher, &open.encode()),
        ServerMessage::Reply {
            reply: Reply::Opened(_),
            ..
        }
    ));
}

#[test]
fn malformed_and_truncated_frames_are_counted_and_dropped() {
    let d = Daemon::start(&[]);
    let status = |path: &std::path::Path| {
        let mut w = raw_connect(path);
        match exchange(
            &mut w,
            &ClientMessage {
                id: 1,
                request: Request::Status,
            }
            .encode(),
        ) {
            ServerMessage::Reply {
                reply: Reply::Status(st),
                ..
            } => st,
            other => panic!("unexpected {other:?}"),
        }
    };
    let good = ClientMessage {
        id: 5,
        request: Request::Open(key(1, 2)),
    }
    .encode();
    let cases: Vec<(&str, Vec<u8>)> = vec![
        (
            "a length beyond the limit",
            vec![0xff, 0xff, 0xff, 0xff, 1, 1],
        ),
        ("a length of zero", vec![0, 0, 0, 0]),
        ("another version", vec![0, 0, 0, 6, 9, 1, 0, 0, 0, 1]),
        ("an unknown kind", vec![0, 0, 0, 6, 1, 0x70, 0, 0, 0, 1]),
        (
            "a reply kind from a client",
            vec![0, 0, 0, 6, 1, 0x81, 0, 0, 0, 1],
        ),
        ("an open cut short inside its frame", {
            let mut f = good[..PREFIX_LEN + 8].to_vec();
            f[..PREFIX_LEN].copy_from_slice(&8u32.to_be_bytes());
            f
        }),
        ("a valid frame with a trailing byte", {
            let mut f = good.clone();
            f.push(0);
            f[..PREFIX_LEN].copy_from_slice(&((good.len() - PREFIX_LEN + 1) as u32).to_be_bytes());
            f
        }),
    ];
    for (i, (what, bytes)) in cases.iter().enumerate() {
        let mut s = raw_connect(&d.socket());
        s.write_all(bytes).expect("write");
        match read_frame(&mut s) {
            Some(ServerMessage::Fatal {
                code: ErrorCode::Malformed,
                message,
            }) => {
                assert!(!message.is_empty(), "{what}");
            }
            other => panic!("{what}: expected a fatal frame, got {other:?}"),
        }
        assert!(
            read_frame(&mut s).is_none(),
            "{what}: the connection stays open"
        );
        assert_eq!(status(&d.socket()).malformed_frames, i as u64 + 1, "{what}");
    }
    // A stream that ends inside a frame is counted too.
    let mut s = raw_connect(&d.socket());
    s.write_all(&good[..7]).expect("write");
    drop(s);
    let start = StdInstant::now();
    while status(&d.socket()).malformed_frames != cases.len() as u64 + 1 {
        assert!(
            start.elapsed() < StdDuration::from_secs(2),
            "a truncated stream was not counted"
        );
        std::thread::sleep(StdDuration::from_millis(5));
    }
    // Replies to the frames before a bad one are sent; the daemon serves on.
    let mut s = raw_connect(&d.socket());
    let mut both = good.clone();
    both.extend_from_slice(&[0, 0, 0, 2, 1, 0x70]);
    s.write_all(&both).expect("write");
    assert!(matches!(
        read_frame(&mut s),
        Some(ServerMessage::Reply {
            id: 5,
            reply: Reply::Opened(_)
        })
    ));
    assert!(matches!(
        read_frame(&mut s),
        Some(ServerMessage::Fatal { .. })
    ));
    assert!(read_frame(&mut s).is_none());
    // The daemon closes the connection's flows as it tears the connection down, which may
    // finish just after the peer sees the close: wait up to 2 s.
    let mut st = status(&d.socket());
    for _ in 0..200 {
        if st.flows == 0 {
            break;
        }
        std::thread::sleep(StdDuration::from_millis(10));
        st = status(&d.socket());
    }
    assert_eq!(st.flows, 0, "the bad connection's flow was closed");
}

#[test]
fn concord_cm_status_prints_the_counters() {
    let d = Daemon::start(&[]);
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_concord-cm"))
        .arg("--socket")
        .arg(d.socket())
        .arg("status")
        .output()
        .expect("run concord-cm");
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("clients          1"), "{text}");
    assert!(text.contains("flows            0"), "{text}");
}

/// The running daemon has glibc's malloc tuned (it started itself again with `GLIBC_TUNABLES`
/// set: no per-thread cache, fixed trim thresholds, one arena) and keeps a value the user gave. The raw
/// environment is searched: glibc cuts the variable's value in place as it parses it.
#[test]
fn the_daemon_runs_with_glibc_malloc_tuned() {
    let environ = |d: &Daemon| {
        let raw = std::fs::read(format!("/proc/{}/environ", d.child.id())).expect("environ");
        String::from_utf8_lossy(&raw).into_owned()
    };
    let d = Daemon::start(&[]);
    let env = environ(&d);
    assert!(
        env.contains("GLIBC_TUNABLES=glibc.malloc.tcache_count=0"),
        "{env}"
    );
    assert!(env.contains("glibc.malloc.trim_threshold=131072"), "{env}");
    assert!(env.contains("glibc.malloc.mmap_threshold=131072"), "{env}");
    assert!(env.contains("glibc.malloc.arena_max=1"), "{env}");
    // It listens (Daemon::start waited for that) after starting again.
    drop(d);
    let d = Daemon::start_with_env(&[], &[("GLIBC_TUNABLES", "glibc.malloc.tcache_count=3")]);
    let env = environ(&d);
    assert!(
        env.contains("GLIBC_TUNABLES=glibc.malloc.tcache_count=3"),
        "{env}"
    );
    assert!(!env.contains("tcache_count=0"), "{env}");
    assert!(env.contains("CONCORDD_MALLOC_TUNED=1"), "{env}");
    // A daemon marked as started again does not start itself again (where the loader drops
    // GLIBC_TUNABLES it would otherwise restart for ever).
    drop(d);
    let d = Daemon::start_with_env(&[], &[("CONCORDD_MALLOC_TUNED", "1")]);
    let env = environ(&d);
    assert!(!env.contains("GLIBC_TUNABLES"), "{env}");
}

#[test]
fn the_socket_is_private_to_its_user() {
    let d = Daemon::start(&[]);
    let mode =
        |p: &std::path::Path| std::fs::metadata(p).expect("stat").permissions().mode() & 0o777;
    assert_eq!(mode(&d.socket()), 0o600);
    assert_eq!(mode(&d.dir.0), 0o700);
    // A second daemon on the same path refuses to start.
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_concordd"))
        .arg("--socket")
        .arg(d.socket())
        .env("RUST_LOG", "error")
        .output()
        .expect("run concordd");
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("already listening"));
    // A directory others can enter is refused.
    let open_dir = TempDir::new("open");
    std::fs::set_permissions(&open_dir.0, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_concordd"))
        .arg("--socket")
        .arg(open_dir.socket())
        .env("RUST_LOG", "error")
        .output()
        .expect("run concordd");
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("chmod 700"));
    // A missing directory is created private.
    let parent = TempDir::new("fresh");
    let nested = parent.0.join("run").join("cm.sock");
    let hub_dir = nested.parent().expect("has a parent").to_path_buf();
    let listener = {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("rt");
        let _guard = rt.enter();
        concord_net::daemon::bind_socket(&nested).map(drop)
    };
    assert!(listener.is_ok());
    assert_eq!(mode(&hub_dir), 0o700);
    assert_eq!(mode(&nested), 0o600);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_thousand_concurrent_flows_on_one_daemon_are_all_granted() {
    let dir = TempDir::new("thousand");
    let _hub = spawn_daemon(&dir.socket(), fast_config());
    let start = StdInstant::now();
    let mut tasks = Vec::new();
    for c in 0..10u16 {
        let path = dir.socket();
        tasks.push(tokio::spawn(async move {
            let cm = CmClient::connect(path).await.expect("connect");
            let mut events = cm.events().expect("events");
            let mut flows = Vec::new();
            for f in 0..100u16 {
                // One destination host per client: ten macroflows of 100 flows (the manager's
                // per-call work grows with the square of a macroflow's flows).
                let dst = Ipv4Addr::new(127, 0, 0, 1 + c as u8);
                let k = FlowKey::new(dst, 8000, f);
                flows.push(cm.open(k).await.expect("open"));
            }
            for f in &flows {
                f.request(1500).await.expect("request");
            }
            let mut granted = std::collections::HashSet::new();
            while granted.len() < flows.len() {
                match timeout(LIMIT, events.next()).await {
                    Ok(Some(Event::Grant { flow, bytes })) => {
                        assert!(bytes > 0);
                        granted.insert(flow);
                    }
                    Ok(Some(_)) => {}
                    other => panic!("grants stopped at {}: {other:?}", granted.len()),
                }
            }
            for f in &flows {
                f.notify(1500).await.expect("notify");
                let ack = CmUpdate {
                    nrecd: 1500,
                    nlost: 0,
                    loss_mode: LossMode::NoCongestion,
                    rtt: Some(Duration::from_millis(1)),
                };
                f.update(ack).await.expect("update");
            }
            (cm, flows)
        }));
    }
    let mut held = Vec::new();
    for t in tasks {
        held.push(timeout(LIMIT * 3, t).await.expect("in time").expect("task"));
    }
    let elapsed = start.elapsed();
    let probe = CmClient::connect(dir.socket()).await.expect("connect");
    let st = probe.status().await.expect("status");
    assert_eq!(st.flows, 1000);
    assert_eq!(st.clients, 11);
    assert!(st.grants >= 1000);
    println!("1000 flows opened, granted, notified and updated in {elapsed:?}");
    drop(held);
    let start = StdInstant::now();
    loop {
        let st = probe.status().await.expect("status");
        if st.flows == 0 {
            break;
        }
        assert!(
            start.elapsed() < StdDuration::from_secs(1),
            "{} flows left",
            st.flows
        );
        tokio::time::sleep(StdDuration::from_millis(5)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_embedded_manager_has_the_clients_api() {
    let cm = EmbeddedCm::new(HubConfig::default()).expect("valid config");
    let client = cm.client();
    let mut events = client.events().expect("events");
    let flow = client.open(key(9, 9)).await.expect("open");
    let rtt = Some(Duration::from_millis(10));
    flow.update(CmUpdate {
        rtt,
        ..CmUpdate::default()
    })
    .await
    .expect("update");
    flow.request(1500).await.expect("request");
    assert_eq!(grant_of(&mut events, flow.id()).await, 1500);
    flow.notify(1500).await.expect("notify");
    assert_eq!(cm.status().flows, 1);
    drop(flow);
    drop(client);
    assert_eq!(cm.status().flows, 0);
    assert_eq!(cm.status().clients, 0);
}

/// The figure of merit of the local API: request-to-grant round trips per second through the
/// socket, one flow, each grant notified before the next request; one update per 100 round
/// trips.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "a benchmark: cargo test -p concord-net --release -- --ignored --nocapture"]
async fn bench_request_to_grant_round_trips() {
    let dir = TempDir::new("bench");
    let _hub = spawn_daemon(&dir.socket(), fast_config());
    let cm = CmClient::connect(dir.socket()).await.expect("connect");
    let mut events = cm.events().expect("events");
    let flow = cm.open(key(1, 1)).await.expect("open");
    round_trips(&flow, &mut events, 1000).await;
    let n = 20_000;
    let t = round_trips(&flow, &mut events, n).await;
    println!(
        "request-to-grant round trips: {:.0}/s ({n} in {t:?}, each with its notify)",
        f64::from(n) / t.as_secs_f64()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn calls_after_the_daemon_is_gone_fail_instead_of_waiting() {
    let d = Daemon::start(&[]);
    let cm = CmClient::connect(d.socket()).await.expect("connect");
    let flow = cm.open(key(3, 3)).await.expect("open");
    drop(d);
    let start = StdInstant::now();
    loop {
        match timeout(LIMIT, flow.request(1)).await {
            Ok(Err(ClientError::Disconnected | ClientError::Io(_))) => break,
            Ok(Ok(())) => {}
            other => panic!("unexpected {other:?}"),
        }
        assert!(
            start.elapsed() < StdDuration::from_secs(5),
            "calls still succeed"
        );
        tokio::time::sleep(StdDuration::from_millis(10)).await;
    }
}

/// `n` request, grant, notify round trips on `flow`; their duration.
async fn round_trips(flow: &concord_net::client::Flow, events: &mut Events, n: u32) -> StdDuration {
    let start = StdInstant::now();
    let mut unacked = 0;
    for i in 0..n {
        flow.request(100).await.expect("request");
        grant_of(events, flow.id()).await;
        flow.notify(100).await.expect("notify");
        unacked += 100;
        if i % 100 == 0 {
            // Feedback as a receiver would give it, so that aging does not slow the flow: the
            // bytes sent since the last one.
            let ack = CmUpdate {
                nrecd: std::mem::take(&mut unacked),
                nlost: 0,
                loss_mode: LossMode::NoCongestion,
                rtt: Some(Duration::from_millis(100)),
            };
            flow.update(ack).await.expect("update");
        }
    }
    start.elapsed()
}

/// The frame buffer used by the tests' raw clients is the protocol's own.
#[test]
fn raw_frames_use_the_protocol_buffer() {
    let mut fb = FrameBuffer::new();
    fb.extend(
        &ClientMessage {
            id: 1,
            request: Request::Status,
        }
        .encode(),
    );
    assert!(fb.next_frame().expect("valid").is_some());
}
