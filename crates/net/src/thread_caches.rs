//! The C allocator's per-thread caches turned off in `concordd`, so that the memory a burst of
//! connections used goes back to the system once they close.
//!
//! glibc's malloc keeps, per thread, up to 7 freed chunks of each of its 64 smallest sizes (16
//! to 1,032 bytes) in a cache of its own, the tcache (glibc 2.26+, `malloc/malloc.c`:
//! `TCACHE_MAX_BINS`, `TCACHE_FILL_COUNT`). `malloc_trim` hands back the free pages of every
//! arena but leaves those chunks cached, and each one keeps the page it lies on resident: after
//! 20,000 connections had come and gone, the daemon's three threads held 2 MB (+46% of its
//! starting size) that way, with 0.4 MB of live data in 17 MB of heap (`malloc_info`). Without
//! the cache, the same load leaves +2.4%. The cache can be sized only by the tunable
//! `glibc.malloc.tcache_count`, which the dynamic loader reads from `GLIBC_TUNABLES` when the
//! process starts; hence [`bound_thread_caches`] starts the daemon again with it set.

use std::ffi::{OsStr, OsString};

/// The environment variable glibc reads its tunables from (`name=value` pairs joined by `:`).
pub const TUNABLES_ENV: &str = "GLIBC_TUNABLES";

/// The tunable that sizes each thread's cache: chunks kept per size, 0 to turn it off.
pub const TCACHE_COUNT: &str = "glibc.malloc.tcache_count";

/// `GLIBC_TUNABLES` with the per-thread cache turned off added to `current`, or `None` when
/// `current` already sizes it (whatever the value: the user's own setting is kept).
pub fn tunables_without_tcache(current: Option<&OsStr>) -> Option<OsString> {
    let current = current.unwrap_or_default();
    let text = current.to_string_lossy();
    let sized = text
        .split(':')
        .any(|pair| pair.split_once('=').is_some_and(|(k, _)| k == TCACHE_COUNT));
    if sized {
        return None;
    }
    let mut out = OsString::from(current);
    if !out.is_empty() {
        out.push(":");
    }
    out.push(TCACHE_COUNT);
    out.push("=0");
    Some(out)
}

/// Starts this program again (`/proc/self/exe`, same arguments and environment) with the
/// per-thread caches off, unless `GLIBC_TUNABLES` already sizes them. Returns only if it did not
/// restart: `Ok` when nothing was to be done, the error of `execve` otherwise (the program then
/// carries on with the caches, which costs memory, not correctness).
pub fn bound_thread_caches() -> std::io::Result<()> {
    if !cfg!(all(target_os = "linux", target_env = "gnu")) {
        return Ok(());
    }
    let Some(tunables) = tunables_without_tcache(std::env::var_os(TUNABLES_ENV).as_deref()) else {
        return Ok(());
    };
    use std::os::unix::process::CommandExt;
    let mut args = std::env::args_os();
    let mut again = std::process::Command::new("/proc/self/exe");
    if let Some(arg0) = args.next() {
        again.arg0(arg0);
    }
    Err(again.args(args).env(TUNABLES_ENV, tunables).exec())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn turned_off_when_unset_or_empty() {
        assert_eq!(
            tunables_without_tcache(None),
            Some(OsString::from("glibc.malloc.tcache_count=0"))
        );
        assert_eq!(
            tunables_without_tcache(Some(OsStr::new(""))),
            Some(OsString::from("glibc.malloc.tcache_count=0"))
        );
    }

    #[test]
    fn other_tunables_are_kept() {
        assert_eq!(
            tunables_without_tcache(Some(OsStr::new("glibc.malloc.arena_max=1"))),
            Some(OsString::from(
                "glibc.malloc.arena_max=1:glibc.malloc.tcache_count=0"
            ))
        );
    }

    #[test]
    fn a_users_own_size_is_kept() {
        assert_eq!(
            tunables_without_tcache(Some(OsStr::new("glibc.malloc.tcache_count=7"))),
            None
        );
        assert_eq!(
            tunables_without_tcache(Some(OsStr::new(
                "glibc.malloc.arena_max=2:glibc.malloc.tcache_count=0"
            ))),
            None
        );
        // A longer name that merely begins the same is another tunable.
        assert!(
            tunables_without_tcache(Some(OsStr::new("glibc.malloc.tcache_count_x=1"))).is_some()
        );
    }
}
