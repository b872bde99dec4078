//! The test bed's propagation delay: a user-space delay line on a TUN device. Every IP packet
//! the router sends into the device is held for the delay, then written back, so that the
//! router forwards it on. The hold is the same for every packet, so the line is a FIFO and
//! keeps the order of packets.
//!
//! It can also drop the probe protocol's datagrams (UDP from or to one port) with a given
//! probability, drawn from a seeded generator, to test feedback loss.

use crate::clock::Clock;
use concord_cc::rng::Rng;
use std::fs::File;
use std::io::{Read, Write};
use std::net::Ipv4Addr;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{mpsc, Arc};
use std::time::Duration;

/// The delay line's parameters.
#[derive(Clone, Debug)]
pub struct DelayLineConfig {
    /// The TUN device.
    pub dev: String,
    /// How long each packet is held.
    pub delay: Duration,
    /// UDP datagrams from or to this port may be dropped.
    pub loss_port: Option<u16>,
    /// The probability of dropping one of them.
    pub loss: f64,
    /// The seed of the drops.
    pub seed: u64,
    /// Exit when this file disappears (the router's namespace, `/run/netns/NAME`).
    pub watch: Option<PathBuf>,
}

/// What the delay line did.
#[derive(Debug, Default)]
pub struct DelayLineStats {
    /// Packets read from the device.
    pub packets: AtomicU64,
    /// Of these, datagrams dropped on purpose.
    pub dropped: AtomicU64,
}

/// The UDP ports of an IPv4 datagram, if it is one (and not a later fragment).
pub fn udp_ports(packet: &[u8]) -> Option<(Ipv4Addr, u16, Ipv4Addr, u16)> {
    let first = *packet.first()?;
    if first >> 4 != 4 || *packet.get(9)? != 17 {
        return None;
    }
    let frag = u16::from_be_bytes([*packet.get(6)?, *packet.get(7)?]) & 0x1fff;
    if frag != 0 {
        return None;
    }
    let ihl = usize::from(first & 0x0f) * 4;
    let src = Ipv4Addr::new(packet[12], packet[13], packet[14], packet[15]);
    let dst = Ipv4Addr::new(
        *packet.get(16)?,
        *packet.get(17)?,
        *packet.get(18)?,
        *packet.get(19)?,
    );
    let sport = u16::from_be_bytes([*packet.get(ihl)?, *packet.get(ihl + 1)?]);
    let dport = u16::from_be_bytes([*packet.get(ihl + 2)?, *packet.get(ihl + 3)?]);
    Some((src, sport, dst, dport))
}

/// Runs the delay line on `dev` until the watched file disappears or the device fails.
pub fn run(config: &DelayLineConfig) -> std::io::Result<()> {
    let tun = crate::sys::open_tun(&config.dev)?;
    let writer = tun.try_clone()?;
    let stats = Arc::new(DelayLineStats::default());
    tracing::info!(
        dev = %config.dev,
        delay_us = config.delay.as_micros() as u64,
        loss_port = ?config.loss_port,
        loss = config.loss,
        "delay line attached"
    );
    if let Some(path) = config.watch.clone() {
        let stats = Arc::clone(&stats);
        std::thread::spawn(move || loop {
            std::thread::sleep(Duration::from_millis(200));
            if !path.exists() {
                tracing::info!(
                    packets = stats.packets.load(Ordering::Relaxed),
                    dropped = stats.dropped.load(Ordering::Relaxed),
                    "the namespace is gone: delay line stops"
                );
                std::process::exit(0);
            }
        });
    }
    let clock = Clock::new();
    let (tx, rx) = mpsc::channel::<(concord_cc::Instant, Vec<u8>)>();
    let out = std::thread::spawn(move || write_loop(writer, &rx, clock));
    let r = read_loop(tun, config, &tx, clock, &stats);
    drop(tx);
    let _ = out.join();
    r
}

/// Reads packets, drops the chosen probe datagrams, and queues the rest with their due time.
fn read_loop(
    mut tun: File,
    config: &DelayLineConfig,
    tx: &mpsc::Sender<(concord_cc::Instant, Vec<u8>)>,
    clock: Clock,
    stats: &DelayLineStats,
) -> std::io::Result<()> {
    let mut rng = Rng::new(config.seed);
    let delay = concord_cc::Duration::from_nanos(
        u64::try_from(config.delay.as_nanos()).unwrap_or(u64::MAX),
    );
    let mut buf = vec![0u8; 65_536];
    loop {
        let n = tun.read(&mut buf)?;
        let packet = buf.get(..n).unwrap_or_default();
        stats.packets.fetch_add(1, Ordering::Relaxed);
        if let (Some(port), Some((_, sp, _, dp))) = (config.loss_port, udp_ports(packet)) {
            if (sp == port || dp == port) && rng.bernoulli(config.loss) {
                stats.dropped.fetch_add(1, Ordering::Relaxed);
                continue;
            }
        }
        if tx.send((clock.now() + delay, packet.to_vec())).is_err() {
            return Ok(());
        }
    }
}

/// Writes each packet back into the device when it is due.
fn write_loop(mut tun: File, rx: &mpsc::Receiver<(concord_cc::Instant, Vec<u8>)>, clock: Clock) {
    while let Ok((due, packet)) = rx.recv() {
        let now = clock.now();
        if due > now {
            std::thread::sleep(Duration::from_nanos((due - now).as_nanos()));
        }
        if let Err(e) = tun.write_all(&packet) {
            tracing::debug!(error = %e, "writing a packet back");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn udp_ports_are_read_from_ipv4_headers_only() {
        let mut p = vec![0u8; 28];
        p[0] = 0x45;
        p[9] = 17;
        p[12..16].copy_from_slice(&[10, 0, 0, 1]);
        p[16..20].copy_from_slice(&[10, 0, 0, 2]);
        p[20..22].copy_from_slice(&9901u16.to_be_bytes());
        p[22..24].copy_from_slice(&53u16.to_be_bytes());
        assert_eq!(
            udp_ports(&p),
            Some((
                Ipv4Addr::new(10, 0, 0, 1),
                9901,
                Ipv4Addr::new(10, 0, 0, 2),
                53
            ))
        );
        let mut tcp = p.clone();
        tcp[9] = 6;
        assert_eq!(udp_ports(&tcp), None);
        let mut frag = p.clone();
        frag[7] = 1;
        assert_eq!(udp_ports(&frag), None);
        assert_eq!(udp_ports(&p[..21]), None);
        assert_eq!(udp_ports(&[]), None);
    }
}
