//! Random loss for the test bed (there is no netem on the machines it runs on): a tc program
//! (src/bpf/path_loss.bpf.c) that drops each packet leaving one interface with a fixed
//! probability, from a seeded splitmix64 generator. The filter stays attached after this
//! process exits and goes with the interface (the test bed's namespaces).

use crate::path_loss_skel::PathLossSkelBuilder;
use libbpf_rs::skel::{OpenSkel, SkelBuilder};
use libbpf_rs::{TcHookBuilder, TC_EGRESS};
use std::ffi::CString;
use std::mem::MaybeUninit;
use std::os::fd::AsFd;
use std::path::PathBuf;

/// Why the loss could not be attached.
#[derive(Debug, thiserror::Error)]
pub enum PathLossError {
    /// The probability is not in [0, 1].
    #[error("loss probability {0} is out of range: give a value from 0 to 1")]
    Probability(f64),
    /// The namespace could not be entered.
    #[error("entering the network namespace {path}: {source}")]
    Netns {
        /// The namespace's file.
        path: PathBuf,
        /// The error.
        source: std::io::Error,
    },
    /// No interface of that name in the namespace.
    #[error("no interface {0} in the namespace")]
    NoInterface(String),
    /// Loading or attaching the program failed.
    #[error("the loss program: {0}")]
    Bpf(#[from] libbpf_rs::Error),
}

/// Drops packets leaving interface `dev` of network namespace `netns` (`/run/netns/NAME`) with
/// probability `p`, drawn from a generator seeded with `seed`.
pub fn attach(netns: PathBuf, dev: &str, p: f64, seed: u64) -> Result<(), PathLossError> {
    if !(0.0..=1.0).contains(&p) {
        return Err(PathLossError::Probability(p));
    }
    let dev = dev.to_string();
    // A thread of its own enters the namespace, so that this process stays where it is.
    std::thread::spawn(move || attach_here(netns, &dev, p, seed))
        .join()
        .unwrap_or_else(|_| Err(PathLossError::NoInterface("(the thread panicked)".into())))
}

fn attach_here(netns: PathBuf, dev: &str, p: f64, seed: u64) -> Result<(), PathLossError> {
    let file = std::fs::File::open(&netns).map_err(|source| PathLossError::Netns {
        path: netns.clone(),
        source,
    })?;
    // SAFETY: setns on an open namespace file descriptor changes only this thread's network
    // namespace; the thread ends when this function returns.
    #[allow(unsafe_code)]
    let rc = unsafe {
        use std::os::fd::AsRawFd;
        libc::setns(file.as_raw_fd(), libc::CLONE_NEWNET)
    };
    if rc != 0 {
        return Err(PathLossError::Netns {
            path: netns,
            source: std::io::Error::last_os_error(),
        });
    }
    let name = CString::new(dev).map_err(|_| PathLossError::NoInterface(dev.into()))?;
    // SAFETY: if_nametoindex reads the NUL-terminated name and nothing else.
    #[allow(unsafe_code)]
    let ifindex = unsafe { libc::if_nametoindex(name.as_ptr()) };
    if ifindex == 0 {
        return Err(PathLossError::NoInterface(dev.into()));
    }
    let mut object = MaybeUninit::uninit();
    let mut open = PathLossSkelBuilder::default().open(&mut object)?;
    if let Some(ro) = open.maps.rodata_data.as_deref_mut() {
        ro.drop_below = (p * 4_294_967_296.0).min(4_294_967_295.0) as u32;
        ro.seed = seed.max(1);
    }
    let skel = open.load()?;
    let fd = skel.progs.drop_random.as_fd();
    let mut hook = TcHookBuilder::new(fd)
        .ifindex(ifindex as i32)
        .replace(true)
        .handle(1)
        .priority(1)
        .hook(TC_EGRESS);
    hook.create()?;
    hook.attach()?;
    Ok(())
}
