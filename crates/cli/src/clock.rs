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
