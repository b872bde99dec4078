//! `concordd` and processes that die: a client process killed with SIGKILL has its flows freed
//! within one second, and a daemon killed and restarted under load comes back with its
//! clients reconnected.

mod common;

use common::Daemon;
use concord_cc::cm::{CmUpdate, FlowId, FlowKey, LossMode};
use concord_net::client::{ClientError, CmClient, Flow};
use concord_net::protocol::Event;
use std::collections::HashMap;
use std::io::{BufRead, BufReader};
use std::net::Ipv4Addr;
use std::process::{Command, Stdio};
use std::time::Duration;
use tokio::time::{timeout, Instant};

/// The environment variable that makes [`child_client_holds_flows_until_killed`] a client.
const CHILD_SOCKET: &str = "CONCORD_TEST_CHILD_SOCKET";
/// Flows the child client opens.
const CHILD_FLOWS: u16 = 20;
/// The line the child prints once its flows are open.
const READY: &str = "concord-child-ready";

fn key(dst_port: u16, src_port: u16) -> FlowKey {
    FlowKey::new(Ipv4Addr::LOCALHOST, dst_port, src_port)
}

/// Opens `n` flows on `cm` from source ports `base..`, each with a standing request.
async fn open_busy(cm: &CmClient, base: u16, n: u16) -> Result<HashMap<FlowId, Flow>, ClientError> {
    let mut flows = HashMap::new();
    for i in 0..n {
        let f = cm.open(key(9000, base + i)).await?;
        f.request(u64::MAX / 2).await?;
        flows.insert(f.id(), f);
    }
    Ok(flows)
}

/// Run as a child process by the test below (with [`CHILD_SOCKET`] set): a client that opens
/// its flows, says so on stdout, and keeps using its grants until it is killed. Without the
/// variable it returns at once.
#[test]
fn child_client_holds_flows_until_killed() {
    let Some(path) = std::env::var_os(CHILD_SOCKET) else {
        return;
    };
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    rt.block_on(async move {
        let cm = CmClient::connect(&path).await.expect("connect");
        let mut events = cm.events().expect("events");
        let flows = open_busy(&cm, 20_000, CHILD_FLOWS).await.expect("open");
        println!("{READY}");
        use std::io::Write;
        let _ = std::io::stdout().flush();
        while let Some(e) = events.next().await {
            if let Event::Grant { flow, bytes } = e {
                if let Some(f) = flows.get(&flow) {
                    let _ = f.notify(bytes).await;
                }
            }
        }
    });
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_process_killed_with_sigkill_has_its_flows_freed_within_one_second() {
    let d = Daemon::start(&["--initial-rtt-ms", "1"]);
    let exe = std::env::current_exe().expect("the test binary");
    let child = Command::new(exe)
        .args([
            "--exact",
            "child_client_holds_flows_until_killed",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(CHILD_SOCKET, d.socket())
        .stdout(Stdio::piped())
        .stdin(Stdio::null())
        .spawn()
        .expect("spawn the client process");
    // Killed and reaped on drop, should the test fail before it kills it.
    let mut killed_on_drop = common::Killed(vec![child]);
    let child = &mut killed_on_drop.0[0];
    let stdout = child.stdout.take().expect("piped stdout");
    let ready = tokio::task::spawn_blocking(move || {
        BufReader::new(stdout)
            .lines()
            .map_while(Result::ok)
            .any(|l| l.contains(READY))
    });
    let ready = timeout(Duration::from_secs(20), ready).await;
    if !matches!(ready, Ok(Ok(true))) {
        panic!("the client process did not open its flows: {ready:?}");
    }
    let watcher = CmClient::connect(d.socket()).await.expect("connect");
    let st = watcher.status().await.expect("status");
    assert_eq!(st.flows, u32::from(CHILD_FLOWS));
    assert!(st.grants > 0, "the client's flows are being granted");
    // SIGKILL: the process cannot close anything; the kernel closes its socket.
    child.kill().expect("SIGKILL");
    let killed = Instant::now();
    let _ = child.wait();
    loop {
        let st = watcher.status().await.expect("status");
        if st.flows == 0 {
            assert_eq!(st.clients, 1, "only the watcher is left");
            break;
        }
        assert!(
            killed.elapsed() < Duration::from_secs(1),
            "{} flows still open 1 s after SIGKILL",
            st.flows
        );
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    println!(
        "{CHILD_FLOWS} flows freed {:?} after SIGKILL",
        killed.elapsed()
    );
    // The same keys open again.
    assert!(open_busy(&watcher, 20_000, CHILD_FLOWS).await.is_ok());
}

/// Reports `bytes` sent on `f` and, as its receiver would, acknowledged with a 1 ms RTT.
async fn notify_and_ack(f: &Flow, bytes: u64) -> Result<(), ClientError> {
    f.notify(bytes).await?;
    f.update(CmUpdate {
        nrecd: bytes,
        nlost: 0,
        loss_mode: LossMode::NoCongestion,
        rtt: Some(concord_cc::Duration::from_millis(1)),
    })
    .await
}

/// One client under load: sends on every grant; when the daemon goes away, reconnects and
/// reopens its flows. Returns the grants used before and after the first reconnection.
async fn busy_client(path: std::path::PathBuf, base: u16, run: Duration) -> (u64, u64, u32) {
    let start = Instant::now();
    let mut cm = CmClient::connect(&path).await.expect("connect");
    let mut flows = open_busy(&cm, base, 2).await.expect("open");
    let mut events = cm.events().expect("events");
    let (mut before, mut after, mut reconnections) = (0u64, 0u64, 0u32);
    while start.elapsed() < run {
        let e = timeout(Duration::from_millis(50), events.next()).await;
        let lost = match e {
            Ok(Some(Event::Grant { flow, bytes })) => match flows.get(&flow) {
                // Each packet acknowledged at once, 1 ms later: the rate grows.
                Some(f) => match notify_and_ack(f, bytes).await {
                    Ok(()) => {
                        if reconnections == 0 {
                            before += 1;
                        } else {
                            after += 1;
                        }
                        false
                    }
                    Err(_) => true,
                },
                None => false,
            },
            Ok(Some(_)) | Err(_) => cm.is_disconnected(),
            Ok(None) => true,
        };
        if !lost {
            continue;
        }
        // The daemon went away: reconnect to the one that replaces it and reopen the flows.
        let fresh = cm
            .reconnect(Duration::from_secs(10))
            .await
            .expect("reconnect");
        let mut reopened = HashMap::new();
        for f in flows.values() {
            let g = f.reopen(&fresh).await.expect("reopen");
            g.request(u64::MAX / 2).await.expect("request");
            reopened.insert(g.id(), g);
        }
        events = fresh.events().expect("events");
        flows = reopened;
        cm = fresh;
        reconnections += 1;
    }
    (before, after, reconnections)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_daemon_restarted_under_load_comes_back_and_clients_reconnect() {
    let mut d = Daemon::start(&["--initial-rtt-ms", "1"]);
    let run = Duration::from_secs(3);
    let clients: Vec<_> = (0..3u16)
        .map(|i| tokio::spawn(busy_client(d.socket(), 30_000 + 10 * i, run)))
        .collect();
    tokio::time::sleep(Duration::from_millis(800)).await;
    let restart = Instant::now();
    d.kill();
    d.restart();
    let listening = restart.elapsed();
    // Every client is back with its two flows.
    let watcher = CmClient::connect(d.socket()).await.expect("connect");
    loop {
        let st = watcher.status().await.expect("status");
        if st.flows == 6 {
            println!(
                "daemon listening again {listening:?} after the kill, 3 clients and 6 flows back after {:?}",
                restart.elapsed()
            );
            break;
        }
        assert!(
            restart.elapsed() < Duration::from_secs(2),
            "only {} flows reopened 2 s after the restart",
            st.flows
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    for c in clients {
        let (before, after, reconnections) = c.await.expect("client task");
        println!("grants used: {before} before the restart, {after} after");
        assert_eq!(reconnections, 1);
        assert!(before > 0 && after > 0, "{before} before, {after} after");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn connecting_retries_until_the_daemon_listens_and_gives_up_after_its_time() {
    let mut d = Daemon::start(&[]);
    d.kill();
    let gone = CmClient::connect_retrying(d.socket(), Duration::from_millis(100)).await;
    assert!(
        matches!(gone, Err(ClientError::Io(_))),
        "no daemon: {gone:?}"
    );
    let path = d.socket();
    let waiting =
        tokio::spawn(
            async move { CmClient::connect_retrying(path, Duration::from_secs(10)).await },
        );
    tokio::time::sleep(Duration::from_millis(200)).await;
    d.restart();
    let cm = waiting
        .await
        .expect("task")
        .expect("connected once it listens");
    assert_eq!(cm.status().await.expect("status").flows, 0);
}
