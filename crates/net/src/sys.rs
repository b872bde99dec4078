//! The two Linux calls that neither the standard library nor `socket2` offers: attaching to a
//! TUN device (`ioctl(TUNSETIFF)`) and moving a thread into a network namespace (`setns`).
//! This is the only module of concord with `unsafe` code; each block says why it is sound.

#![allow(unsafe_code)]

use std::fs::{File, OpenOptions};
use std::io;
use std::os::fd::AsRawFd;
use std::path::Path;

/// `struct ifreq` as TUNSETIFF reads it: the name, then the flags, padded to the kernel's 40
/// bytes.
#[repr(C)]
struct IfReq {
    name: [u8; libc::IFNAMSIZ],
    flags: libc::c_short,
    pad: [u8; 22],
}

/// Opens `/dev/net/tun` and attaches it to the layer-3 TUN device `name` (no packet
/// information header: each read and write is one IP packet). The device is created if it does
/// not exist, and vanishes with the file unless it was made persistent (`ip tuntap add`).
pub fn open_tun(name: &str) -> io::Result<File> {
    let bytes = name.as_bytes();
    if bytes.is_empty() || bytes.len() >= libc::IFNAMSIZ || bytes.contains(&0) {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("bad interface name {name:?}"),
        ));
    }
    let file = OpenOptions::new()
        .read(true)
        .write(true)
        .open("/dev/net/tun")?;
    let mut req = IfReq {
        name: [0; libc::IFNAMSIZ],
        flags: (libc::IFF_TUN | libc::IFF_NO_PI) as libc::c_short,
        pad: [0; 22],
    };
    req.name[..bytes.len()].copy_from_slice(bytes);
    // SAFETY: the descriptor is open for the duration of the call, and `req` is a live,
    // properly sized and NUL-terminated `struct ifreq` that TUNSETIFF reads and may write.
    let r = unsafe { libc::ioctl(file.as_raw_fd(), libc::TUNSETIFF, &mut req as *mut IfReq) };
    if r < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(file)
}

/// Moves the calling thread into the network namespace bound at `path` (e.g.
/// `/run/netns/NAME`). Sockets the thread opens afterwards live in that namespace; other
/// threads are not affected.
pub fn enter_netns(path: &Path) -> io::Result<()> {
    let ns = File::open(path)?;
    // SAFETY: setns takes a descriptor that is open for the duration of the call and a flag;
    // it touches no memory of this process.
    let r = unsafe { libc::setns(ns.as_raw_fd(), libc::CLONE_NEWNET) };
    if r < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// Raises the soft limit on open files (`RLIMIT_NOFILE`) to the hard limit, so that the daemon
/// can hold as many connections as the system lets it; returns the new soft limit.
pub fn raise_open_files_limit() -> io::Result<u64> {
    let mut lim = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit writes one rlimit into the struct we own and pass by pointer.
    if unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim) } != 0 {
        return Err(io::Error::last_os_error());
    }
    if lim.rlim_cur < lim.rlim_max {
        lim.rlim_cur = lim.rlim_max;
        // SAFETY: setrlimit reads the struct we own; raising the soft limit up to the hard
        // limit needs no privilege.
        if unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &lim) } != 0 {
            return Err(io::Error::last_os_error());
        }
    }
    Ok(lim.rlim_cur)
}

/// Asks the C allocator to return its free memory to the system (glibc's `malloc_trim(0)`), so
/// that the resident size comes back down after a burst of connections.
pub fn release_free_memory() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: malloc_trim only walks the allocator's own free lists; it takes no pointer.
    unsafe {
        libc::malloc_trim(0);
    }
}

/// Raises the limit on open files (`RLIMIT_NOFILE`) to at least `want` descriptors: the hard
/// limit too if it is lower (which needs `CAP_SYS_RESOURCE`; without it the soft limit goes to
/// the hard limit). Children started afterwards inherit it. Returns the new soft limit.
pub fn raise_open_files_limit_to(want: u64) -> io::Result<u64> {
    let mut lim = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit writes one rlimit into the struct we own and pass by pointer.
    if unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim) } != 0 {
        return Err(io::Error::last_os_error());
    }
    if lim.rlim_cur >= want {
        return Ok(lim.rlim_cur);
    }
    let raised = libc::rlimit {
        rlim_cur: want,
        rlim_max: lim.rlim_max.max(want),
    };
    // SAFETY: setrlimit reads the struct we own; it fails without privilege if the hard limit
    // rises, and then nothing changed.
    if unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &raised) } == 0 {
        return Ok(want);
    }
    raise_open_files_limit()
}
