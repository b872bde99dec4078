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

fn bed_name() -> String {
    format!("cct{}-", std::process::id() % 100_000)
}
