//! The wall clock and the process's memory: the only place the command line reads either.
//! They measure concord (for `bench` and the progress bar); they never enter results.

/// A stopwatch on the wall clock.
pub struct Stopwatch(std::time::Instant);

impl Stopwatch {
    /// Starts now.
    #[allow(clippy::disallowed_methods)] // measuring the simulator itself, not simulating
    pub fn start() -> Stopwatch {
        Stopwatch(std::time::Instant::now())
    }

    /// Seconds since the start.
    pub fn secs(&self) -> f64 {
        self.0.elapsed().as_secs_f64()
    }
}

/// Peak resident memory of this process in bytes (VmHWM from /proc), if the system tells.
pub fn peak_rss_bytes() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}

/// CPU time this process has used (user + system), in seconds, from /proc/self/stat (fields 14
/// and 15, in clock ticks of 1/100 s: Linux's USER_HZ), if the system tells.
pub fn cpu_seconds() -> Option<f64> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    // The command name (field 2) may hold spaces; the fields after it follow its ')'.
    let rest = stat.get(stat.rfind(')')? + 1..)?;
    let mut fields = rest.split_whitespace().skip(11);
    let utime: u64 = fields.next()?.parse().ok()?;
    let stime: u64 = fields.next()?.parse().ok()?;
    Some((utime + stime) as f64 / 100.0)
}

/// Resident memory of this process now, in bytes (VmRSS from /proc), if the system tells.
pub fn rss_bytes() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmRSS:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}

/// Resets the peak resident memory to the current one (writes 5 to /proc/self/clear_refs), so
/// that [`peak_rss_bytes`] measures from here; false if the system does not allow it.
pub fn reset_peak_rss() -> bool {
    std::fs::write("/proc/self/clear_refs", "5").is_ok()
}
