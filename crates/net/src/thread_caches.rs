//! glibc's malloc tuned in `concordd` so that the memory a burst of connections used goes back
//! to the system once they close.
//!
//! Two things kept it (glibc 2.36, `malloc/malloc.c`, `malloc/arena.c`):
//!
//! - The per-thread cache, the tcache: up to 7 freed chunks of each of the 64 smallest sizes (16
//!   to 1,032 bytes) per thread (`TCACHE_MAX_BINS`, `TCACHE_FILL_COUNT`). `malloc_trim` leaves
//!   those chunks cached, and each keeps the page it lies on resident: after 20,000 connections
//!   had come and gone, the daemon's three threads held 2 MB (+46% of its starting size) that
//!   way, with 0.4 MB of live data in 17 MB of heap (`malloc_info`). Without the cache the
//!   same load left +2.4%.
//! - The trim threshold's dynamic rise: freeing an `mmap`ed chunk (a connection table of
//!   several hundred kB) raises `M_MMAP_THRESHOLD` to its size and `M_TRIM_THRESHOLD` to twice
//!   that, and `malloc_trim` hands back free chunks inside an arena but not a thread arena's top
//!   chunk, which only `free` trims, above that threshold: in one run in two a thread arena's
//!   4.5 MB stayed wholly resident (`/proc/PID/smaps`). Fixed thresholds (the defaults, 128 KiB)
//!   turn the rise off.
//!
//! - Thread arenas' top chunks. Each worker thread allocates from an arena of its own (glibc
//!   makes up to 8 per core), a heap of up to 64 MiB mapped apart from the main one. Freed
//!   small chunks (up to 128 bytes) wait in the arena's fastbins; `malloc_trim` merges them
//!   into the top chunk (`malloc_consolidate`) and returns the pages of free chunks in its
//!   bins (`mtrim`), but shrinks the top chunk of the main arena only (`systrim`): a thread
//!   arena's top is shrunk by `free` alone (`heap_trim`, when a freed chunk of 64 KiB or more
//!   borders it), which the last small frees never do. With a flow opened on each of 20,000
//!   connections, after they all closed, two thread arenas' mappings kept 4.8 MB and 3.4 MB
//!   resident in a failing run (`/proc/PID/smaps`, +203% of the start; two runs in four
//!   failed). One arena (`arena_max` 1) puts every thread's chunks in the main arena, where
//!   `malloc_trim` returns all free memory, its top included: the main arena kept 0.5 MB.
//!
//! The dynamic loader reads these tunables from `GLIBC_TUNABLES` when the process starts;
//! hence [`bound_thread_caches`] starts the daemon again with them set.

use std::ffi::{OsStr, OsString};

/// The environment variable glibc reads its tunables from (`name=value` pairs joined by `:`).
pub const TUNABLES_ENV: &str = "GLIBC_TUNABLES";

/// Set in the environment of the restarted daemon, so that it restarts at most once.
pub const RESTARTED_ENV: &str = "CONCORDD_MALLOC_TUNED";

/// The tunables set, with their values: no per-thread cache; the `mmap` and trim thresholds
/// fixed at their defaults (128 KiB), which turns their dynamic rise off; one arena, the main
/// one, for every thread.
pub const TUNED: [(&str, &str); 4] = [
    ("glibc.malloc.tcache_count", "0"),
    ("glibc.malloc.mmap_threshold", "131072"),
    ("glibc.malloc.trim_threshold", "131072"),
    ("glibc.malloc.arena_max", "1"),
];

/// `GLIBC_TUNABLES` with each of [`TUNED`] that `current` does not set added, or `None` when
/// `current` sets them all (whatever the values: the user's own settings are kept).
pub fn tunables_tuned(current: Option<&OsStr>) -> Option<OsString> {
    let current = current.unwrap_or_default();
    let text = current.to_string_lossy();
    let set = |name: &str| {
        text.split(':')
            .any(|pair| pair.split_once('=').is_some_and(|(k, _)| k == name))
    };
    let mut out = OsString::from(current);
    let mut added = false;
    for (name, value) in TUNED {
        if set(name) {
            continue;
        }
        if !out.is_empty() {
            out.push(":");
        }
        out.push(format!("{name}={value}"));
        added = true;
    }
    added.then_some(out)
}

/// Starts this program again (`/proc/self/exe`, same arguments and environment) with
/// [`TUNED`] added to `GLIBC_TUNABLES`, unless it sets them all already. Returns only if it did not
/// restart: `Ok` when nothing was to be done, the error of `execve` otherwise (the program then
/// carries on untuned, which costs memory, not correctness).
pub fn bound_thread_caches() -> std::io::Result<()> {
    if !cfg!(all(target_os = "linux", target_env = "gnu")) {
        return Ok(());
    }
    // Once only: where the loader drops GLIBC_TUNABLES (a set-user-ID start), the restarted
    // daemon would not see them and would start itself again for ever.
    if std::env::var_os(RESTARTED_ENV).is_some() {
        return Ok(());
    }
    let Some(tunables) = tunables_tuned(std::env::var_os(TUNABLES_ENV).as_deref()) else {
        return Ok(());
    };
    use std::os::unix::process::CommandExt;
    let mut args = std::env::args_os();
    let mut again = std::process::Command::new("/proc/self/exe");
    if let Some(arg0) = args.next() {
        again.arg0(arg0);
    }
    Err(again
        .args(args)
        .env(TUNABLES_ENV, tunables)
        .env(RESTARTED_ENV, "1")
        .exec())
}

#[cfg(test)]
mod tests {
    use super::*;

    const ALL: &str = "glibc.malloc.tcache_count=0:glibc.malloc.mmap_threshold=131072:\
                       glibc.malloc.trim_threshold=131072:glibc.malloc.arena_max=1";

    #[test]
    fn all_added_when_unset_or_empty() {
        assert_eq!(tunables_tuned(None), Some(OsString::from(ALL)));
        assert_eq!(
            tunables_tuned(Some(OsStr::new(""))),
            Some(OsString::from(ALL))
        );
    }

    #[test]
    fn other_tunables_are_kept() {
        assert_eq!(
            tunables_tuned(Some(OsStr::new("glibc.malloc.perturb=0"))),
            Some(OsString::from(format!("glibc.malloc.perturb=0:{ALL}")))
        );
    }

    #[test]
    fn a_users_own_values_are_kept() {
        assert_eq!(
            tunables_tuned(Some(OsStr::new(
                "glibc.malloc.tcache_count=7:glibc.malloc.trim_threshold=1"
            ))),
            Some(OsString::from(
                "glibc.malloc.tcache_count=7:glibc.malloc.trim_threshold=1:\
                 glibc.malloc.mmap_threshold=131072:glibc.malloc.arena_max=1"
            ))
        );
        assert_eq!(tunables_tuned(Some(OsStr::new(ALL))), None);
        // A longer name that merely begins the same is another tunable.
        assert_eq!(
            tunables_tuned(Some(OsStr::new("glibc.malloc.tcache_count_x=1"))),
            Some(OsString::from(format!(
                "glibc.malloc.tcache_count_x=1:{ALL}"
            )))
        );
    }
}
