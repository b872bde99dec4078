//! The Linux calls the router needs and neither the standard library nor `socket2` offers in
//! the form it needs: an `AF_PACKET` socket bound to one interface, with the virtio-net header
//! (`PACKET_VNET_HDR`) and without the frames the namespace itself sends
//! (`PACKET_IGNORE_OUTGOING`), and `ppoll` with a nanosecond timeout. This is the only module of
//! the router with `unsafe` code; each block says why it is sound.

#![allow(unsafe_code)]

use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};

/// `linux/if_packet.h`: prefix each frame with a `struct virtio_net_hdr`.
const PACKET_VNET_HDR: libc::c_int = 15;
/// `linux/if_packet.h`: do not deliver frames this host sends (Linux 4.20).
const PACKET_IGNORE_OUTGOING: libc::c_int = 23;

/// Length of `struct virtio_net_hdr` (`linux/virtio_net.h`): flags, gso_type, hdr_len,
/// gso_size, csum_start, csum_offset.
pub const VNET_HDR_LEN: usize = 10;

/// A raw Ethernet socket on one interface: every frame the interface receives, none it sends.
#[derive(Debug)]
pub struct PacketSocket {
    fd: OwnedFd,
    ifindex: i32,
}

fn check(r: libc::c_int) -> io::Result<libc::c_int> {
    if r < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(r)
    }
}

fn set_int(
    fd: &OwnedFd,
    level: libc::c_int,
    name: libc::c_int,
    value: libc::c_int,
) -> io::Result<()> {
    // SAFETY: the descriptor is open; the option value is a live c_int whose size is passed.
    let r = unsafe {
        libc::setsockopt(
            fd.as_raw_fd(),
            level,
            name,
            (&value as *const libc::c_int).cast(),
            std::mem::size_of::<libc::c_int>() as libc::socklen_t,
        )
    };
    check(r).map(|_| ())
}

impl PacketSocket {
    /// Opens a non-blocking `AF_PACKET`/`SOCK_RAW` socket for all EtherTypes on interface
    /// `ifindex`, with the virtio-net header on and outgoing frames ignored, and receive and send
    /// buffers of `buffer` bytes.
    pub fn open(ifindex: i32, buffer: usize) -> io::Result<PacketSocket> {
        let proto = (libc::ETH_P_ALL as u16).to_be();
        // SAFETY: socket takes plain integers and returns a new descriptor or -1.
        let raw = check(unsafe {
            libc::socket(
                libc::AF_PACKET,
                libc::SOCK_RAW | libc::SOCK_NONBLOCK | libc::SOCK_CLOEXEC,
                libc::c_int::from(proto),
            )
        })?;
        // SAFETY: `raw` is a descriptor we just opened and own alone.
        let fd = unsafe { OwnedFd::from_raw_fd(raw) };
        set_int(&fd, libc::SOL_PACKET, PACKET_VNET_HDR, 1)?;
        set_int(&fd, libc::SOL_PACKET, PACKET_IGNORE_OUTGOING, 1)?;
        let buf = libc::c_int::try_from(buffer).unwrap_or(libc::c_int::MAX);
        set_int(&fd, libc::SOL_SOCKET, libc::SO_RCVBUF, buf)?;
        set_int(&fd, libc::SOL_SOCKET, libc::SO_SNDBUF, buf)?;
        // SAFETY: sockaddr_ll is plain old data; all-zero is a valid value.
        let mut addr: libc::sockaddr_ll = unsafe { std::mem::zeroed() };
        addr.sll_family = libc::AF_PACKET as u16;
        addr.sll_protocol = proto;
        addr.sll_ifindex = ifindex;
        // SAFETY: the descriptor is open; `addr` is a live sockaddr_ll and its size is passed.
        check(unsafe {
            libc::bind(
                fd.as_raw_fd(),
                (&addr as *const libc::sockaddr_ll).cast(),
                std::mem::size_of::<libc::sockaddr_ll>() as libc::socklen_t,
            )
        })?;
        Ok(PacketSocket { fd, ifindex })
    }

    /// Frames the kernel dropped for this socket since the last call (its receive buffer was
    /// full while the router's thread was away): `PACKET_STATISTICS`' `tp_drops`, which the
    /// kernel resets on each read (packet(7)).
    pub fn take_drops(&self) -> io::Result<u64> {
        let mut stats = libc::tpacket_stats {
            tp_packets: 0,
            tp_drops: 0,
        };
        let mut len = std::mem::size_of::<libc::tpacket_stats>() as libc::socklen_t;
        // SAFETY: the descriptor is open; `stats` is a live tpacket_stats and `len` its size.
        check(unsafe {
            libc::getsockopt(
                self.fd.as_raw_fd(),
                libc::SOL_PACKET,
                libc::PACKET_STATISTICS,
                (&mut stats as *mut libc::tpacket_stats).cast(),
                &mut len,
            )
        })?;
        Ok(u64::from(stats.tp_drops))
    }

    /// Receives one frame, virtio-net header first, into `buf`; `Ok(None)` if none is waiting.
    pub fn recv(&self, buf: &mut [u8]) -> io::Result<Option<usize>> {
        // SAFETY: the descriptor is open; `buf` is live and writable for its whole length.
        let r = unsafe {
            libc::recv(
                self.fd.as_raw_fd(),
                buf.as_mut_ptr().cast(),
                buf.len(),
                libc::MSG_DONTWAIT | libc::MSG_TRUNC,
            )
        };
        if r < 0 {
            let e = io::Error::last_os_error();
            return match e.kind() {
                io::ErrorKind::WouldBlock | io::ErrorKind::Interrupted => Ok(None),
                _ => Err(e),
            };
        }
        Ok(Some(r as usize))
    }

    /// Sends one frame, virtio-net header first (an all-zero header asks for no offload).
    pub fn send(&self, frame: &[u8]) -> io::Result<()> {
        // SAFETY: sockaddr_ll is plain old data; all-zero is a valid value.
        let mut addr: libc::sockaddr_ll = unsafe { std::mem::zeroed() };
        addr.sll_family = libc::AF_PACKET as u16;
        addr.sll_ifindex = self.ifindex;
        addr.sll_halen = 6;
        // SAFETY: the descriptor is open; `frame` and `addr` are live for the call and their
        // sizes are passed.
        let r = unsafe {
            libc::sendto(
                self.fd.as_raw_fd(),
                frame.as_ptr().cast(),
                frame.len(),
                libc::MSG_DONTWAIT,
                (&addr as *const libc::sockaddr_ll).cast(),
                std::mem::size_of::<libc::sockaddr_ll>() as libc::socklen_t,
            )
        };
        if r < 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(())
    }

    /// The raw descriptor, for [`wait_readable`].
    pub fn raw_fd(&self) -> i32 {
        self.fd.as_raw_fd()
    }
}

/// Waits until one of `fds` is readable or `timeout_ns` nanoseconds pass (`None`: no limit);
/// returns a flag per descriptor.
pub fn wait_readable(
    fds: &[i32],
    timeout_ns: Option<u64>,
    ready: &mut Vec<bool>,
) -> io::Result<()> {
    let mut polls: Vec<libc::pollfd> = fds
        .iter()
        .map(|&fd| libc::pollfd {
            fd,
            events: libc::POLLIN,
            revents: 0,
        })
        .collect();
    let ts = timeout_ns.map(|ns| libc::timespec {
        tv_sec: (ns / 1_000_000_000) as libc::time_t,
        tv_nsec: (ns % 1_000_000_000) as libc::c_long,
    });
    let ts_ptr = ts
        .as_ref()
        .map_or(std::ptr::null(), |t| t as *const libc::timespec);
    // SAFETY: `polls` is a live array of pollfd of the length passed; `ts_ptr` is null or
    // points to a live timespec; no signal mask is passed.
    let r = unsafe {
        libc::ppoll(
            polls.as_mut_ptr(),
            polls.len() as libc::nfds_t,
            ts_ptr,
            std::ptr::null(),
        )
    };
    ready.clear();
    if r < 0 {
        let e = io::Error::last_os_error();
        if e.kind() == io::ErrorKind::Interrupted {
            ready.resize(fds.len(), false);
            return Ok(());
        }
        return Err(e);
    }
    ready.extend(polls.iter().map(|p| p.revents != 0));
    Ok(())
}

/// The index of interface `name` in the calling thread's namespace (`if_nametoindex`).
pub fn ifindex(name: &str) -> io::Result<i32> {
    let c = std::ffi::CString::new(name)
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "a NUL in an interface name"))?;
    // SAFETY: `c` is a live NUL-terminated string for the duration of the call.
    let index = unsafe { libc::if_nametoindex(c.as_ptr()) };
    if index == 0 {
        return Err(io::Error::last_os_error());
    }
    i32::try_from(index).map_err(|_| io::Error::new(io::ErrorKind::InvalidData, "ifindex overflow"))
}

/// The MAC address of interface `name`, from sysfs (run under `ip netns exec`, which mounts
/// the namespace's own sysfs).
pub fn mac(name: &str) -> io::Result<[u8; 6]> {
    let text = std::fs::read_to_string(format!("/sys/class/net/{name}/address"))?;
    crate::config::parse_mac(text.trim())
        .map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e.to_string()))
}

/// Puts the calling process under `SCHED_FIFO` at `priority` (1 to 99;
/// `sched_setscheduler(2)`), so that other work on the machine cannot keep the router from its
/// packets: a user-space router that is descheduled for 10 ms stops its port's clock for as long
/// and queues what arrives meanwhile, as a dedicated router does not. The kernel's real-time
/// throttling (`sched_rt_runtime_us`) still leaves other processes 5% of each CPU.
pub fn set_realtime(priority: u8) -> io::Result<()> {
    if !(1..=99).contains(&priority) {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("real-time priority {priority}: give 1 to 99"),
        ));
    }
    let param = libc::sched_param {
        sched_priority: libc::c_int::from(priority),
    };
    // SAFETY: `param` is a live, initialised sched_param for the duration of the call; pid 0 is
    // the calling process.
    check(unsafe { libc::sched_setscheduler(0, libc::SCHED_FIFO, &param) })?;
    Ok(())
}

/// SIGINT, SIGTERM and SIGHUP, blocked in the calling thread (and the threads it starts later)
/// from [`TerminationSignals::block`] on, so that they wait for [`TerminationSignals::wait`]
/// instead of killing the process where it stands: for a foreground command that must tidy up
/// on Ctrl-C or `kill`. (Children started with `std::process::Command` get a clear mask.)
pub struct TerminationSignals {
    set: libc::sigset_t,
}

impl TerminationSignals {
    /// Blocks the three signals; one that arrives from now on stays pending until `wait`.
    pub fn block() -> io::Result<TerminationSignals> {
        // SAFETY: `set` is a local sigset_t initialised by sigemptyset before any other use;
        // pthread_sigmask only reads it.
        unsafe {
            let mut set: libc::sigset_t = std::mem::zeroed();
            check(libc::sigemptyset(&mut set))?;
            for s in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP] {
                check(libc::sigaddset(&mut set, s))?;
            }
            let r = libc::pthread_sigmask(libc::SIG_BLOCK, &set, std::ptr::null_mut());
            if r != 0 {
                return Err(io::Error::from_raw_os_error(r));
            }
            Ok(TerminationSignals { set })
        }
    }

    /// Waits for one of the signals (or takes one already pending); returns its number.
    pub fn wait(&self) -> io::Result<i32> {
        let mut sig: libc::c_int = 0;
        // SAFETY: `self.set` was initialised by `block`; `sig` is a live local sigwait writes.
        let r = unsafe { libc::sigwait(&self.set, &mut sig) };
        if r != 0 {
            return Err(io::Error::from_raw_os_error(r));
        }
        Ok(sig)
    }
}
