//! `concord-router cp-ap`: CP's aggregation point from the command line. Bad arguments are named
//! with their fix; a local and a remote AP on this host's loopback carry a datagram end to end
//! and write their status.

use std::net::UdpSocket;
use std::process::Command;
use std::time::Duration;

const EXE: &str = env!("CARGO_BIN_EXE_concord-router");

fn cp_ap(args: &[&str]) -> (bool, String, String) {
    let out = Command::new(EXE)
        .arg("cp-ap")
        .args(args)
        .output()
        .expect("run concord-router");
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn bad_arguments_are_named_with_their_fix() {
    let base = [
        "--bind",
        "127.0.0.1:0",
        "--peer",
        "127.0.0.1:9",
        "--duration",
        "0.1",
    ];
    let cases: [(&[&str], &str); 5] = [
        (&[], "no flow: give --listen FLOW=ADDR:PORT"),
        (&["--listen", "x"], "--listen \"x\": write FLOW=ADDR:PORT"),
        (
            &["--deliver", "0=127.0.0.1:1", "--deliver", "0=127.0.0.1:2"],
            "--deliver names flow 0 twice",
        ),
        (
            &["--listen", "0=127.0.0.1:0", "--bfld", "0"],
            "--bfld 0: m is at least 1",
        ),
        (
            &["--listen", "0=127.0.0.1:0", "--queue", "0"],
            "queue_limit is 0",
        ),
    ];
    for (extra, said) in cases {
        let mut args = base.to_vec();
        args.extend_from_slice(extra);
        let (ok, _, err) = cp_ap(&args);
        assert!(!ok, "{args:?} was accepted");
        assert!(err.contains(said), "{args:?}: {err}");
    }
}

#[test]
fn a_local_and_a_remote_ap_carry_a_datagram_end_to_end() {
    // Ports from the kernel: bind, read the port, release (a race with another program is
    // possible but unlikely on loopback).
    let free = || {
        UdpSocket::bind("127.0.0.1:0")
            .and_then(|s| s.local_addr())
            .expect("a free port")
            .port()
    };
    let (a, b, app) = (free(), free(), free());
    let sink = UdpSocket::bind("127.0.0.1:0").expect("sink");
    sink.set_read_timeout(Some(Duration::from_secs(3)))
        .expect("timeout");
    let sink_addr = sink.local_addr().expect("addr").to_string();
    let dir = std::env::temp_dir().join(format!("cr4cli{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("dir");
    let status = dir.join("remote.status");
    let remote = Command::new(EXE)
        .args([
            "cp-ap",
            "--bind",
            &format!("127.0.0.1:{b}"),
            "--peer",
            &format!("127.0.0.1:{a}"),
        ])
        .args([
            "--deliver",
            &format!("0={sink_addr}"),
            "--duration",
            "2",
            "--status",
        ])
        .arg(&status)
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("remote AP");
    let local = Command::new(EXE)
        .args([
            "cp-ap",
            "--bind",
            &format!("127.0.0.1:{a}"),
            "--peer",
            &format!("127.0.0.1:{b}"),
        ])
        .args(["--listen", &format!("0=127.0.0.1:{app}"), "--duration", "2"])
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("local AP");
    // The application sends one datagram to the local AP once it listens.
    let src = UdpSocket::bind("127.0.0.1:0").expect("source");
    std::thread::sleep(Duration::from_millis(300));
    src.send_to(b"hello, cluster", ("127.0.0.1", app))
        .expect("send");
    let mut buf = [0u8; 64];
    let got = sink.recv(&mut buf).map(|n| buf[..n].to_vec());
    let local = local.wait_with_output().expect("local AP");
    let remote = remote.wait_with_output().expect("remote AP");
    assert!(local.status.success() && remote.status.success());
    assert_eq!(got.ok().as_deref(), Some(&b"hello, cluster"[..]));
    let stdout = String::from_utf8_lossy(&local.stdout);
    assert!(
        stdout.contains("app_in 1\n") && stdout.contains("cp_sent 1\n"),
        "{stdout}"
    );
    let text = std::fs::read_to_string(&status).expect("status file");
    assert!(
        text.contains("delivered 1\n") && text.contains("flow.0.delivered_bytes 14\n"),
        "{text}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}
