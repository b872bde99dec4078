//! Several UDP streams from this host to one receiver on 127.0.0.1 share one Congestion
//! Manager: each sends only when granted, reports what it sent, and feeds the acknowledgments
//! of its receiver back as `update`s. The streams share the macroflow's rate by weight.
//!
//! ```text
//! cargo run -p concord-net --example streams                   # an embedded manager
//! cargo run -p concord-net --example streams -- /path/cm.sock  # a running concordd
//! ```
//!
//! Loopback only; runs for two seconds.

use concord_cc::cm::{CmUpdate, FlowKey, LossMode};
use concord_cc::Duration;
use concord_net::client::{ClientError, CmClient, EmbeddedCm, Flow};
use concord_net::clock::Clock;
use concord_net::hub::HubConfig;
use concord_net::protocol::Event;
use std::collections::HashMap;
use std::net::{Ipv4Addr, SocketAddr};
use std::sync::Arc;
use tokio::net::UdpSocket;

/// Streams sharing the manager.
const STREAMS: usize = 3;
/// How long the example runs.
const RUN: std::time::Duration = std::time::Duration::from_secs(2);
/// Bytes of the header each datagram carries: send time in ns since the clock's zero.
const HEADER: usize = 8;

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let socket_path = std::env::args().nth(1);
    let (_embedded, cm) = match socket_path {
        Some(p) => (None, CmClient::connect(p).await?),
        None => {
            let e = EmbeddedCm::new(HubConfig::default())?;
            let c = e.client();
            (Some(e), c)
        }
    };
    let clock = Arc::new(Clock::new());
    let receiver = UdpSocket::bind((Ipv4Addr::LOCALHOST, 0)).await?;
    let rport = receiver.local_addr()?.port();
    tokio::spawn(echo(receiver));

    let mut events = cm.events().ok_or(ClientError::Disconnected)?;
    let mut streams: HashMap<_, (Flow, Arc<UdpSocket>, u64)> = HashMap::new();
    for _ in 0..STREAMS {
        let sock = Arc::new(UdpSocket::bind((Ipv4Addr::LOCALHOST, 0)).await?);
        sock.connect(SocketAddr::from((Ipv4Addr::LOCALHOST, rport)))
            .await?;
        let key = FlowKey::new(Ipv4Addr::LOCALHOST, rport, sock.local_addr()?.port());
        let flow = cm.open(key).await?;
        tokio::spawn(acks(flow.clone(), Arc::clone(&sock), Arc::clone(&clock)));
        flow.request(2 * 1500).await?;
        streams.insert(flow.id(), (flow, sock, 0));
    }

    let deadline = tokio::time::sleep(RUN);
    tokio::pin!(deadline);
    let mut packet = vec![0u8; 1500];
    loop {
        tokio::select! {
            () = &mut deadline => break,
            event = events.next() => {
                let Some(event) = event else { break };
                if let Event::Grant { flow, bytes } = event {
                    let Some((f, sock, sent)) = streams.get_mut(&flow) else { continue };
                    let n = usize::try_from(bytes).unwrap_or(1500).clamp(HEADER, packet.len());
                    packet[..HEADER].copy_from_slice(&clock.now().as_nanos().to_be_bytes());
                    let used = match sock.send(&packet[..n]).await {
                        Ok(n) => n as u64,
                        Err(_) => 0,
                    };
                    *sent += used;
                    f.notify(used).await?;
                    // Keep a backlog: ask for the next packet at once.
                    f.request(1500).await?;
                }
            }
        }
    }
    let mut flows: Vec<_> = streams.into_values().collect();
    flows.sort_by_key(|(f, _, _)| f.id());
    for (f, _, sent) in &flows {
        let q = f.query().await?;
        println!(
            "{}: sent {sent} bytes in {RUN:?}, share {} bit/s, srtt {:?}",
            f.id(),
            q.rate.map_or(0, |r| r.bps()),
            q.srtt,
        );
    }
    Ok(())
}

/// The receiver: echoes each datagram's header back to its sender as the acknowledgment.
async fn echo(sock: UdpSocket) {
    let mut buf = vec![0u8; 2048];
    while let Ok((n, from)) = sock.recv_from(&mut buf).await {
        let mut ack = [0u8; HEADER + 8];
        let h = HEADER.min(n);
        ack[..h].copy_from_slice(&buf[..h]);
        ack[HEADER..].copy_from_slice(&(n as u64).to_be_bytes());
        let _ = sock.send_to(&ack, from).await;
    }
}

/// A stream's acknowledgments: each is an `update` with the bytes received and an RTT sample.
async fn acks(flow: Flow, sock: Arc<UdpSocket>, clock: Arc<Clock>) {
    let mut buf = [0u8; 64];
    while let Ok(n) = sock.recv(&mut buf).await {
        let (Some(sent_at), Some(len)) = (buf.get(..HEADER), buf.get(HEADER..HEADER + 8)) else {
            continue;
        };
        if n < HEADER + 8 {
            continue;
        }
        let mut t = [0u8; 8];
        t.copy_from_slice(sent_at);
        let mut l = [0u8; 8];
        l.copy_from_slice(len);
        let rtt = clock
            .now()
            .checked_since(concord_cc::Instant::from_nanos(u64::from_be_bytes(t)))
            .map(|d| d.max(Duration::from_micros(1)));
        let update = CmUpdate {
            nrecd: u64::from_be_bytes(l),
            nlost: 0,
            loss_mode: LossMode::NoCongestion,
            rtt,
        };
        if flow.update(update).await.is_err() {
            break;
        }
    }
}
