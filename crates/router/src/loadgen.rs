//! Unmodified applications for the CP experiments: constant-bit-rate UDP sources and sinks that
//! count what arrives. A source faster than its share keeps its flow's queue at the
//! aggregation point full, which is the greedy source of the slides' experiments.

use crate::sys::wait_readable;
use concord_cc::time::{Duration, Instant};
use std::net::{SocketAddr, UdpSocket};
use std::os::fd::AsRawFd;

/// The instants a CBR source of `payload`-byte datagrams (IP packets of `payload + 28` bytes) at
/// `bps` bit/s sends in `[start, until)`: `start + k * (payload + 28) * 8 / bps`.
pub fn cbr_gap(payload: usize, bps: u64) -> Duration {
    let bits = ((payload + crate::cp_ap::UDP_IP) * 8) as u64;
    Duration::from_nanos(bits.saturating_mul(1_000_000_000) / bps.max(1))
}

/// Sends `payload`-byte datagrams to `to` at `bps` bit/s until `stop(now)`; returns how many
/// were sent. A sender woken late sends what fell due meanwhile, so the long-run rate holds.
pub fn run_cbr(
    to: SocketAddr,
    payload: usize,
    bps: u64,
    clock: impl Fn() -> Instant,
    mut stop: impl FnMut(Instant) -> bool,
) -> std::io::Result<u64> {
    let sock = UdpSocket::bind(SocketAddr::from(([0, 0, 0, 0], 0)))?;
    let gap = cbr_gap(payload, bps);
    let data = vec![0x5au8; payload];
    let mut next = clock();
    let mut sent = 0u64;
    loop {
        let now = clock();
        if stop(now) {
            return Ok(sent);
        }
        while next <= now {
            if sock.send_to(&data, to).is_ok() {
                sent += 1;
            }
            next += gap;
        }
        std::thread::sleep(std::time::Duration::from_nanos(
            next.saturating_since(clock()).as_nanos().min(2_000_000),
        ));
    }
}

/// Receives on each of `binds` until `stop(now)`; returns per socket the payload bytes that
/// arrived in `[window.0, window.1)`.
pub fn run_sinks(
    binds: &[SocketAddr],
    window: (Instant, Instant),
    clock: impl Fn() -> Instant,
    mut stop: impl FnMut(Instant) -> bool,
) -> std::io::Result<Vec<u64>> {
    let socks = binds
        .iter()
        .map(|a| {
            let s = UdpSocket::bind(a)?;
            s.set_nonblocking(true)?;
            Ok(s)
        })
        .collect::<std::io::Result<Vec<_>>>()?;
    let fds: Vec<i32> = socks.iter().map(AsRawFd::as_raw_fd).collect();
    let mut ready = Vec::new();
    let mut counted = vec![0u64; socks.len()];
    let mut buf = vec![0u8; 65_536];
    loop {
        if stop(clock()) {
            return Ok(counted);
        }
        wait_readable(&fds, Some(5_000_000), &mut ready)?;
        let now = clock();
        for (s, c) in socks.iter().zip(counted.iter_mut()) {
            while let Ok(n) = s.recv(&mut buf) {
                if now >= window.0 && now < window.1 {
                    *c += n as u64;
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cbr_gap_is_the_ip_packets_bits_over_the_rate() {
        // 972 + 28 = 1000 bytes = 8000 bits at 8 Mbit/s: 1 ms.
        assert_eq!(cbr_gap(972, 8_000_000), Duration::from_millis(1));
        // At 3 Mbit/s: 8000 / 3e6 s = 2666666.67 ns, truncated.
        assert_eq!(cbr_gap(972, 3_000_000), Duration::from_nanos(2_666_666));
    }
}
