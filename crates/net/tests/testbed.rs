//! The test bed on this machine: up, a datagram across the bottleneck, down. Skipped with a
//! message where network namespaces cannot be made (not root, no `ip`).

use concord_net::testbed::Testbed;
use std::process::Command;

/// Removes the test bed even if the test fails.
struct Guard(Testbed);

impl Drop for Guard {
    fn drop(&mut self) {
        let _ = self.0.down();
    }
}

/// Child processes killed and reaped on drop, even if the test fails.
struct Killed(Vec<std::process::Child>);

impl Drop for Killed {
    fn drop(&mut self) {
        for c in &mut self.0 {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

#[test]
fn a_datagram_crosses_the_bottleneck_between_the_namespaces() {
    let bed = Testbed {
        prefix: format!("cct{}", std::process::id() % 100_000),
        rate_bps: 1_000_000,
        queue_bytes: 16_000,
        ..Testbed::default()
    };
    if let Err(e) = bed.up() {
        eprintln!("SKIPPED the test bed test: {e}");
        return;
    }
    let guard = Guard(bed);
    let bed = &guard.0;
    let qdiscs = Command::new("tc")
        .args(["-n", &bed.sender_ns(), "qdisc", "show"])
        .output()
        .expect("tc");
    let qdiscs = String::from_utf8_lossy(&qdiscs.stdout);
    assert!(
        qdiscs.contains("htb") && qdiscs.contains("bfifo"),
        "{qdiscs}"
    );

    // A receiver in one namespace, a sender in the other; both bounded to a few seconds.
    let py = |code: String| {
        vec![
            "timeout".to_string(),
            "5".into(),
            "python3".into(),
            "-c".into(),
            code,
        ]
    };
    let recv = format!(
        "import socket; s=socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.settimeout(4); \
         s.bind(('{}', 9911)); print(s.recvfrom(100)[0].decode())",
        bed.receiver()
    );
    let rcv_ns = bed.receiver_ns();
    let bed2 = bed.clone();
    let receiver = std::thread::spawn(move || bed2.exec(&rcv_ns, &py(recv)));
    let send = format!(
        "import socket,time\nfor _ in range(20):\n    socket.socket(socket.AF_INET, \
         socket.SOCK_DGRAM).sendto(b'across', ('{}', 9911)); time.sleep(0.1)",
        bed.receiver()
    );
    let sent = bed.exec(&bed.sender_ns(), &py(send)).expect("send");
    assert!(
        sent.status.success(),
        "{}",
        String::from_utf8_lossy(&sent.stderr)
    );
    let got = receiver.join().expect("thread").expect("receive");
    assert_eq!(String::from_utf8_lossy(&got.stdout).trim(), "across");
    drop(guard);
    let left = Command::new("ip")
        .args(["netns", "list"])
        .output()
        .expect("ip");
    assert!(!String::from_utf8_lossy(&left.stdout).contains(&bed_name()));
}

/// Acceptance: two daemons, one per namespace, probe each other across the bottleneck; the
/// sender's application sends only when granted, with explicit feedback (probes answered from
/// the receiving application's reports). The sender must neither exceed the bottleneck nor
/// starve: its goodput lands within a band of the bottleneck rate.
#[test]
fn explicit_feedback_across_the_bottleneck_tracks_its_rate() {
    const RATE: u64 = 2_000_000;
    const SECONDS: &str = "6";
    let bed = Testbed {
        prefix: format!("cca{}", std::process::id() % 100_000),
        sender: std::net::Ipv4Addr::new(10, 78, 0, 1),
        rate_bps: RATE,
        queue_bytes: 16_000,
    };
    if let Err(e) = bed.up() {
        eprintln!("SKIPPED the test bed acceptance test: {e}");
        return;
    }
    let pytest_ok = Command::new("python3")
        .args(["-c", "import socket"])
        .output();
    if !pytest_ok.is_ok_and(|o| o.status.success()) {
        eprintln!("SKIPPED the test bed acceptance test: no python3");
        return;
    }
    let guard = Guard(bed);
    let bed = &guard.0;
    let dir = std::env::temp_dir().join(format!("concord-bed-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    for side in ["a", "b"] {
        let d = dir.join(side);
        std::fs::create_dir_all(&d).expect("dir");
        let mut p = std::fs::metadata(&d).expect("stat").permissions();
        std::os::unix::fs::PermissionsExt::set_mode(&mut p, 0o700);
        std::fs::set_permissions(&d, p).expect("chmod");
    }
    let (sock_a, sock_b) = (dir.join("a/cm.sock"), dir.join("b/cm.sock"));
    let daemon = |ns: String, sock: &std::path::Path, bind: std::net::Ipv4Addr| {
        Command::new("ip")
            // `ip netns exec` executes the daemon itself: killing the child kills it.
            .args(["netns", "exec", &ns, env!("CARGO_BIN_EXE_concordd")])
            .arg("--socket")
            .arg(sock)
            .args(["--probe-port", "9901", "--probe-bind", &bind.to_string()])
            .args(["--initial-rtt-ms", "10"])
            .env("RUST_LOG", "warn")
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .spawn()
            .expect("spawn concordd")
    };
    let _daemons = Killed(vec![
        daemon(bed.sender_ns(), &sock_a, bed.sender),
        daemon(bed.receiver_ns(), &sock_b, bed.receiver()),
    ]);
    for s in [&sock_a, &sock_b] {
        let mut n = 0;
        while std::os::unix::net::UnixStream::connect(s).is_err() {
            n += 1;
            assert!(n < 500, "a daemon did not start");
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
    }
    let app = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/testbed_app.py");
    let python = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../python");
    let run_app = |ns: String, args: Vec<String>| {
        Command::new("ip")
            .args(["netns", "exec", &ns, "timeout", "20", "python3"])
            .arg(&app)
            .args(args)
            .env("PYTHONPATH", &python)
            .env("PYTHONDONTWRITEBYTECODE", "1")
            .stdout(std::process::Stdio::piped())
            .spawn()
            .expect("spawn the application")
    };
    let rcv = run_app(
        bed.receiver_ns(),
        vec![
            "recv".into(),
            sock_b.display().to_string(),
            bed.receiver().to_string(),
            "9000".into(),
            "7".into(),
        ],
    );
    std::thread::sleep(std::time::Duration::from_millis(200));
    let snd = run_app(
        bed.sender_ns(),
        vec![
            "send".into(),
            sock_a.display().to_string(),
            bed.receiver().to_string(),
            "9000".into(),
            SECONDS.into(),
        ],
    );
    let snd = snd.wait_with_output().expect("sender");
    let rcv = rcv.wait_with_output().expect("receiver");
    let _ = std::fs::remove_dir_all(&dir);
    let (s, r) = (
        String::from_utf8_lossy(&snd.stdout),
        String::from_utf8_lossy(&rcv.stdout),
    );
    println!("sender: {s}receiver: {r}");
    assert!(
        snd.status.success() && rcv.status.success(),
        "sender {s} receiver {r}"
    );
    let received: f64 = r
        .split("\"received\": ")
        .nth(1)
        .and_then(|x| x.trim().trim_end_matches('}').parse().ok())
        .expect("the receiver's count");
    let secs: f64 = SECONDS.parse().expect("seconds");
    let goodput = received * 8.0 / secs;
    println!("goodput {goodput:.0} bit/s through a {RATE} bit/s bottleneck");
    assert!(goodput <= RATE as f64 * 1.05, "faster than the bottleneck");
    assert!(goodput >= RATE as f64 * 0.3, "starved");
}

fn bed_name() -> String {
    format!("cct{}-", std::process::id() % 100_000)
}
