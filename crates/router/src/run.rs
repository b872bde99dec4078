//! The driver: one thread, one `AF_PACKET` socket per port, `ppoll` until a socket is readable
//! or the next departure is due, and the status written to a file.

use crate::config::RouterConfig;
use crate::router::Router;
use crate::sys::{self, PacketSocket};
use concord_net::clock::Clock;
use std::io;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// How often the status file is rewritten.
pub const STATUS_INTERVAL: Duration = Duration::from_millis(200);

/// Socket buffers, bytes: room for a few hundred frames while the thread is away.
const SOCKET_BUFFER: usize = 1 << 20;

/// Why the router stopped or could not start.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    /// A port's interface could not be opened.
    #[error("port {port}: {source} (does the interface exist in this namespace? run as root)")]
    Port {
        /// The interface.
        port: String,
        /// The error.
        source: io::Error,
    },
    /// The router's configuration is impossible.
    #[error("{0}")]
    Config(#[from] crate::port::PortError),
    /// Waiting or receiving failed.
    #[error("{0}")]
    Io(#[from] io::Error),
}

/// How late the router's thread woke after its timed waits: a thread the machine kept away
/// stops its ports' clocks and then takes what piled up in its sockets at once.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct WakeLateness {
    /// The latest wake-up, us after its deadline.
    pub max_us: u64,
    /// Wake-ups more than [`WakeLateness::LATE`] after their deadline.
    pub over_10ms: u64,
    /// The time those wake-ups lost beyond their deadlines, us.
    pub over_10ms_us: u64,
}

impl WakeLateness {
    /// A wake-up this late counts as the thread kept away: 10 ms.
    pub const LATE: concord_cc::Duration = concord_cc::Duration::from_millis(10);

    /// The thread woke at `now` from a wait due to end at `deadline` (earlier if a socket
    /// became readable: then it is not late).
    pub fn on_wake(&mut self, deadline: concord_cc::Instant, now: concord_cc::Instant) {
        let late = now.saturating_since(deadline);
        self.max_us = self.max_us.max(late.as_micros());
        if late > Self::LATE {
            self.over_10ms += 1;
            self.over_10ms_us += late.as_micros();
        }
    }

    /// The status lines.
    pub fn status(&self) -> String {
        format!(
            "wake_late_max_us {}\nwake_late_over_10ms {}\nwake_late_over_10ms_us {}\n",
            self.max_us, self.over_10ms, self.over_10ms_us
        )
    }
}

/// Writes `text` to `path` atomically (a temporary file renamed over it).
pub fn write_status(path: &Path, text: &str) -> io::Result<()> {
    let tmp = path.with_extension("tmp");
    std::fs::write(&tmp, text)?;
    std::fs::rename(&tmp, path)
}

/// Runs the router until `watch` (e.g. `/run/netns/NAME`) disappears, or forever.
pub fn run(
    mut config: RouterConfig,
    status: Option<PathBuf>,
    watch: Option<PathBuf>,
) -> Result<(), RunError> {
    let mut sockets = Vec::new();
    for p in &mut config.ports {
        let port_err = |source| RunError::Port {
            port: p.name.clone(),
            source,
        };
        if p.mac.is_none() {
            p.mac = Some(sys::mac(&p.name).map_err(port_err)?);
        }
        let index = sys::ifindex(&p.name).map_err(port_err)?;
        sockets.push(PacketSocket::open(index, SOCKET_BUFFER).map_err(port_err)?);
    }
    let mut router = Router::new(&config)?;
    let fds: Vec<i32> = sockets.iter().map(PacketSocket::raw_fd).collect();
    let clock = Clock::new();
    let mut ready = Vec::new();
    let mut buf = vec![0u8; 65_536 + sys::VNET_HDR_LEN];
    let mut next_status = concord_cc::Instant::ZERO;
    // Frames the kernel dropped on each port's socket, summed over the run.
    let mut rx_dropped = vec![0u64; sockets.len()];
    // How late the thread woke after a timed wait: the most, and the wake-ups over 10 ms late.
    let mut late = WakeLateness::default();
    let status_every = concord_cc::Duration::from_nanos(STATUS_INTERVAL.as_nanos() as u64);
    loop {
        let now = clock.now();
        if now >= next_status {
            next_status = now + status_every;
            if let Some(path) = &status {
                let mut text = router.status(now);
                for ((s, d), p) in sockets.iter().zip(&mut rx_dropped).zip(router.ports()) {
                    *d += s.take_drops().unwrap_or(0);
                    text += &format!("rx_dropped_{} {d}\n", p.name);
                }
                text += &late.status();
                if let Err(e) = write_status(path, &text) {
                    eprintln!("concord-router: writing the status {}: {e}", path.display());
                }
            }
            if watch.as_ref().is_some_and(|w| !w.exists()) {
                return Ok(());
            }
        }
        let deadline = router
            .poll_timeout(now)
            .unwrap_or(next_status)
            .min(next_status);
        let timeout = deadline.saturating_since(now).as_nanos();
        sys::wait_readable(&fds, Some(timeout), &mut ready)?;
        late.on_wake(deadline, clock.now());
        for (i, s) in sockets.iter().enumerate() {
            if !ready.get(i).copied().unwrap_or(false) {
                continue;
            }
            // Drain what is waiting, up to a batch, so one busy port cannot starve the others.
            for _ in 0..64 {
                let Some(n) = s.recv(&mut buf)? else {
                    break;
                };
                let now = clock.now();
                let len = n.min(buf.len());
                match crate::vnet::complete(&mut buf[..len]) {
                    Ok(range) => router.on_frame(now, i, &buf[range]),
                    Err(_) => router.on_refused(),
                }
            }
        }
        let now = clock.now();
        let mut out = vec![0u8; sys::VNET_HDR_LEN];
        while let Some((port, frame)) = router.poll_transmit(now) {
            out.truncate(sys::VNET_HDR_LEN);
            out.extend_from_slice(&frame);
            if let Err(e) = sockets[port].send(&out) {
                // A full socket buffer or a vanished interface: the frame is lost, as on a
                // congested wire; the router keeps going.
                eprintln!(
                    "concord-router: sending on {}: {e}",
                    router.ports()[port].name
                );
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use concord_cc::{Duration, Instant};

    #[test]
    fn a_wake_up_past_its_deadline_is_counted_late_only_beyond_10_ms() {
        let mut l = WakeLateness::default();
        let t = Instant::from_millis(100);
        // Early (a socket became readable) and 10 ms late: not counted as kept away.
        l.on_wake(t, Instant::from_millis(95));
        l.on_wake(t, t + Duration::from_millis(10));
        assert_eq!((l.max_us, l.over_10ms), (10_000, 0));
        // 40 ms late: counted, with the 40 ms it lost.
        l.on_wake(t, t + Duration::from_millis(40));
        assert_eq!(
            l,
            WakeLateness {
                max_us: 40_000,
                over_10ms: 1,
                over_10ms_us: 40_000
            }
        );
        assert!(l.status().contains("wake_late_over_10ms 1\n"));
    }
}
