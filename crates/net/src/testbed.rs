//! A test bed of several hosts on one Linux machine, made of network namespaces. Root only.
//!
//! ```text
//!  PREFIX-s1  10.N.1.1 --veth-- 10.N.1.254 \
//!  PREFIX-s2  10.N.2.1 --veth-- 10.N.2.254 -- PREFIX-rt -- 10.N.100.254 --veth-- 10.N.100.1  PREFIX-rcv
//!  ...                                         dl0 (TUN)  htb + bfifo
//! ```
//!
//! Every packet the router forwards, in both directions, goes through the TUN device `dl0`,
//! where [`crate::delay_line`] (a user-space process) holds it for the one-way delay before
//! the router forwards it on: the round-trip time is twice the delay. Policy routing sends what
//! arrives on a veth to `dl0`; what comes back out of `dl0` is routed normally. The bottleneck is
//! the router's interface towards the receiver: an htb class at the rate feeding a byte-limited
//! FIFO (bfifo).
//!
//! The test bed keeps a record of what it made in `/run/concord-testbed/PREFIX`, written before
//! each namespace is made. [`Testbed::down`] removes only what the record lists, and
//! [`Testbed::up`] refuses to start if a namespace of its names exists that no record lists.
//! A test bed made on behalf of a process ([`Testbed::owner`]) is removed by the next `up` or
//! [`sweep_stale`] once that process is gone, so that a crash leaves nothing behind for long;
//! the delay line exits by itself when its namespace is removed.
//!
//! [`Testbed::up_commands`] and [`Testbed::down_commands`] are plain command lists, so the
//! plan can be read and tested without root.

use std::fs;
use std::net::Ipv4Addr;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::Duration;

/// Where the records of the test beds live.
pub const STATE_DIR: &str = "/run/concord-testbed";

/// The TUN device of the delay line, in the router's namespace.
pub const TUN_DEV: &str = "dl0";

/// The routing table that sends forwarded packets to the delay line.
const DELAY_TABLE: &str = "100";

/// Why a test bed command failed.
#[derive(Debug, thiserror::Error)]
pub enum TestbedError {
    /// The command could not be started.
    #[error("running {command}: {source}")]
    Spawn {
        /// The command line.
        command: String,
        /// The error.
        source: std::io::Error,
    },
    /// The command exited with an error.
    #[error("{command} failed: {stderr}")]
    Failed {
        /// The command line.
        command: String,
        /// Its standard error.
        stderr: String,
    },
    /// A name that `ip` would not take, or that could name another namespace's options.
    #[error("bad name {0:?}: use 1 to 8 letters, digits or '-', not starting with '-'")]
    BadName(String),
    /// A parameter out of range.
    #[error("bad parameter: {0}")]
    BadParameter(String),
    /// Something of the test bed's names exists that this tool did not make.
    #[error("{0} exists and was not made by concord-testbed: not touching it")]
    NotOurs(String),
    /// The record of the test bed could not be read or written.
    #[error("the record {path}: {source}")]
    Record {
        /// The record's path.
        path: PathBuf,
        /// The error.
        source: std::io::Error,
    },
    /// The delay line did not attach to its device in time.
    #[error("the delay line did not start: {0}")]
    DelayLine(String),
}

/// Loss the delay line adds to the probe protocol's datagrams.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ProbeLoss {
    /// UDP datagrams from or to this port are subject to loss.
    pub port: u16,
    /// The probability that one is dropped, 0 to 1.
    pub probability: f64,
}

/// The shape of the test bed.
#[derive(Clone, Debug, PartialEq)]
pub struct Testbed {
    /// A prefix for the namespaces: `<prefix>-s1`.., `<prefix>-rt`, `<prefix>-rcv`.
    pub prefix: String,
    /// Sender hosts, 1 to 8.
    pub senders: u8,
    /// The bottleneck rate, in bits per second.
    pub rate_bps: u64,
    /// The bottleneck queue, in bytes.
    pub queue_bytes: u64,
    /// The delay line's hold, each direction: the round-trip time is twice this.
    pub delay: Duration,
    /// The second byte of the addresses, 10.N.x.y.
    pub net: u8,
    /// Loss the delay line adds to probe datagrams, if any.
    pub probe_loss: Option<ProbeLoss>,
    /// The seed of the delay line's loss.
    pub seed: u64,
    /// The program that runs the delay line (`concord-testbed`, which has the `delay-line`
    /// subcommand).
    pub delay_line_exe: PathBuf,
    /// The process on whose behalf the test bed exists: once it is gone, the test bed is
    /// stale and the next `up` removes it. `None`: it stays until `down`.
    pub owner: Option<u32>,
}

impl Default for Testbed {
    fn default() -> Self {
        Testbed {
            prefix: "ccbed".into(),
            senders: 1,
            rate_bps: 10_000_000,
            queue_bytes: 64 * 1024,
            delay: Duration::from_millis(20),
            net: 77,
            probe_loss: None,
            seed: 1,
            delay_line_exe: std::env::current_exe()
                .ok()
                .and_then(|p| p.parent().map(|d| d.join("concord-testbed")))
                .unwrap_or_else(|| PathBuf::from("concord-testbed")),
            owner: None,
        }
    }
}

/// A command as its words.
pub type CommandLine = Vec<String>;

fn words(s: &[&str]) -> CommandLine {
    s.iter().map(|w| (*w).to_string()).collect()
}

/// What a record lists.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Record {
    /// The process the test bed was made for, if any.
    pub owner: Option<u32>,
    /// Namespaces made, in order.
    pub namespaces: Vec<String>,
    /// The delay line's process.
    pub delay_line: Option<u32>,
}

impl Record {
    fn encode(&self) -> String {
        let mut s = String::from("# made by concord-testbed; removed by concord-testbed down\n");
        if let Some(o) = self.owner {
            s += &format!("owner {o}\n");
        }
        for n in &self.namespaces {
            s += &format!("ns {n}\n");
        }
        if let Some(p) = self.delay_line {
            s += &format!("delay-line {p}\n");
        }
        s
    }

    fn decode(text: &str) -> Record {
        let mut r = Record::default();
        for line in text.lines() {
            match line.split_once(' ') {
                Some(("owner", v)) => r.owner = v.trim().parse().ok(),
                Some(("ns", v)) => r.namespaces.push(v.trim().to_string()),
                Some(("delay-line", v)) => r.delay_line = v.trim().parse().ok(),
                _ => {}
            }
        }
        r
    }
}

/// True if process `pid` exists.
fn alive(pid: u32) -> bool {
    Path::new(&format!("/proc/{pid}")).exists()
}

/// True if the network namespace `name` is bound under /run/netns.
fn netns_exists(name: &str) -> bool {
    Path::new("/run/netns").join(name).exists()
}

impl Testbed {
    /// Sender `i`'s namespace, from 1.
    pub fn sender_ns(&self, i: u8) -> String {
        format!("{}-s{i}", self.prefix)
    }

    /// The router's namespace.
    pub fn router_ns(&self) -> String {
        format!("{}-rt", self.prefix)
    }

    /// The receiver's namespace.
    pub fn receiver_ns(&self) -> String {
        format!("{}-rcv", self.prefix)
    }

    /// Every namespace, router first.
    pub fn namespaces(&self) -> Vec<String> {
        let mut v = vec![self.router_ns()];
        v.extend((1..=self.senders).map(|i| self.sender_ns(i)));
        v.push(self.receiver_ns());
        v
    }

    /// Sender `i`'s address, from 1.
    pub fn sender(&self, i: u8) -> Ipv4Addr {
        Ipv4Addr::new(10, self.net, i, 1)
    }

    /// The receiver's address.
    pub fn receiver(&self) -> Ipv4Addr {
        Ipv4Addr::new(10, self.net, 100, 1)
    }

    /// The namespace a role names: `s1`.., `rt`, `rcv`, or a full namespace name of the bed.
    pub fn namespace_of(&self, role: &str) -> Result<String, TestbedError> {
        let ns = match role {
            "rt" => self.router_ns(),
            "rcv" => self.receiver_ns(),
            r => match r.strip_prefix('s').and_then(|n| n.parse::<u8>().ok()) {
                Some(i) if (1..=self.senders).contains(&i) => self.sender_ns(i),
                _ => r.to_string(),
            },
        };
        if self.namespaces().contains(&ns) {
            Ok(ns)
        } else {
            Err(TestbedError::BadName(role.to_string()))
        }
    }

    /// The record's path.
    pub fn record_path(&self) -> PathBuf {
        Path::new(STATE_DIR).join(&self.prefix)
    }

    /// Checks the prefix (short enough for the names, no option-like words) and the ranges.
    pub fn validate(&self) -> Result<(), TestbedError> {
        let p = &self.prefix;
        let ok = !p.is_empty()
            && p.len() <= 8
            && !p.starts_with('-')
            && p.chars().all(|c| c.is_ascii_alphanumeric() || c == '-');
        if !ok {
            return Err(TestbedError::BadName(p.clone()));
        }
        if !(1..=8).contains(&self.senders) {
            return Err(TestbedError::BadParameter(format!(
                "{} senders: use 1 to 8",
                self.senders
            )));
        }
        if self.rate_bps < 8_000 || self.queue_bytes < 1500 {
            return Err(TestbedError::BadParameter(
                "the rate must be at least 8000 bit/s and the queue at least 1500 bytes".into(),
            ));
        }
        if self.delay > Duration::from_secs(10) {
            return Err(TestbedError::BadParameter("a delay above 10 s".into()));
        }
        if let Some(l) = self.probe_loss {
            if !(0.0..=1.0).contains(&l.probability) {
                return Err(TestbedError::BadParameter(format!(
                    "loss probability {} is outside 0..=1",
                    l.probability
                )));
            }
        }
        Ok(())
    }

    /// The commands that build the namespaces, links, routes and bottleneck, in order (the
    /// delay line is started after them).
    pub fn up_commands(&self) -> Vec<CommandLine> {
        let rt = self.router_ns();
        let rcv = self.receiver_ns();
        let mut c: Vec<CommandLine> = Vec::new();
        c.push(words(&["ip", "netns", "add", &rt]));
        // Forwarding without reverse-path filtering: what leaves the TUN device comes from
        // addresses routed elsewhere. Set before any interface exists, so that they inherit it.
        c.push(words(&[
            "ip",
            "netns",
            "exec",
            &rt,
            "sysctl",
            "-qw",
            "net.ipv4.ip_forward=1",
            "net.ipv4.conf.all.rp_filter=0",
            "net.ipv4.conf.default.rp_filter=0",
        ]));
        c.push(words(&["ip", "-n", &rt, "link", "set", "lo", "up"]));
        let mut hosts: Vec<(String, String, Ipv4Addr, Ipv4Addr)> = (1..=self.senders)
            .map(|i| {
                (
                    self.sender_ns(i),
                    format!("s{i}"),
                    self.sender(i),
                    Ipv4Addr::new(10, self.net, i, 254),
                )
            })
            .collect();
        hosts.push((
            rcv.clone(),
            "rcv".into(),
            self.receiver(),
            Ipv4Addr::new(10, self.net, 100, 254),
        ));
        for (ns, rif, addr, gw) in &hosts {
            let (a, g) = (format!("{addr}/24"), format!("{gw}/24"));
            c.push(words(&["ip", "netns", "add", ns]));
            c.push(words(&[
                "ip", "link", "add", "eth0", "netns", ns, "type", "veth", "peer", "name", rif,
                "netns", &rt,
            ]));
            c.push(words(&["ip", "-n", ns, "addr", "add", &a, "dev", "eth0"]));
            c.push(words(&["ip", "-n", &rt, "addr", "add", &g, "dev", rif]));
            c.push(words(&["ip", "-n", ns, "link", "set", "lo", "up"]));
            c.push(words(&["ip", "-n", ns, "link", "set", "eth0", "up"]));
            c.push(words(&["ip", "-n", &rt, "link", "set", rif, "up"]));
            c.push(words(&[
                "ip",
                "-n",
                ns,
                "route",
                "add",
                "default",
                "via",
                &gw.to_string(),
            ]));
            // Whatever arrives on this link goes through the delay line first.
            c.push(words(&[
                "ip",
                "-n",
                &rt,
                "rule",
                "add",
                "iif",
                rif,
                "table",
                DELAY_TABLE,
                "pref",
                "100",
            ]));
        }
        c.push(words(&[
            "ip", "-n", &rt, "tuntap", "add", "dev", TUN_DEV, "mode", "tun",
        ]));
        c.push(words(&[
            "ip",
            "netns",
            "exec",
            &rt,
            "sysctl",
            "-qw",
            &format!("net.ipv4.conf.{TUN_DEV}.rp_filter=0"),
        ]));
        c.push(words(&["ip", "-n", &rt, "link", "set", TUN_DEV, "up"]));
        c.push(words(&[
            "ip",
            "-n",
            &rt,
            "route",
            "add",
            "default",
            "dev",
            TUN_DEV,
            "table",
            DELAY_TABLE,
        ]));
        // The bottleneck, towards the receiver: htb at the rate, a byte-limited FIFO behind it.
        let rate = format!("{}bit", self.rate_bps);
        let limit = self.queue_bytes.to_string();
        c.push(words(&[
            "tc", "-n", &rt, "qdisc", "add", "dev", "rcv", "root", "handle", "1:", "htb",
            "default", "10",
        ]));
        c.push(words(&[
            "tc", "-n", &rt, "class", "add", "dev", "rcv", "parent", "1:", "classid", "1:10",
            "htb", "rate", &rate, "ceil", &rate,
        ]));
        c.push(words(&[
            "tc", "-n", &rt, "qdisc", "add", "dev", "rcv", "parent", "1:10", "handle", "10:",
            "bfifo", "limit", &limit,
        ]));
        c
    }

    /// The delay line's command line, run in the router's namespace.
    pub fn delay_line_command(&self) -> CommandLine {
        let mut c = vec![
            "ip".to_string(),
            "netns".into(),
            "exec".into(),
            self.router_ns(),
            self.delay_line_exe.display().to_string(),
            "delay-line".into(),
            "--dev".into(),
            TUN_DEV.into(),
            "--delay-us".into(),
            self.delay.as_micros().to_string(),
            "--netns".into(),
            self.router_ns(),
            "--seed".into(),
            self.seed.to_string(),
        ];
        if let Some(l) = self.probe_loss {
            c.extend([
                "--loss-port".to_string(),
                l.port.to_string(),
                "--loss".into(),
                l.probability.to_string(),
            ]);
        }
        c
    }

    /// The commands that remove what `record` lists (the veth pairs and the TUN device go with
    /// their namespaces).
    pub fn down_commands(record: &Record) -> Vec<CommandLine> {
        record
            .namespaces
            .iter()
            .rev()
            .map(|n| words(&["ip", "netns", "del", n]))
            .collect()
    }

    /// Writes the record.
    fn write_record(&self, r: &Record) -> Result<(), TestbedError> {
        let err = |source| TestbedError::Record {
            path: self.record_path(),
            source,
        };
        fs::create_dir_all(STATE_DIR).map_err(err)?;
        let tmp = self.record_path().with_extension("tmp");
        fs::write(&tmp, r.encode()).map_err(err)?;
        fs::rename(&tmp, self.record_path()).map_err(err)
    }

    /// Reads the record, `None` if there is none.
    pub fn read_record(&self) -> Option<Record> {
        fs::read_to_string(self.record_path())
            .ok()
            .map(|t| Record::decode(&t))
    }

    /// Builds the test bed and starts its delay line; on a failure, removes what was built.
    /// Stale test beds (whose owner is gone) are removed first.
    pub fn up(&self) -> Result<(), TestbedError> {
        self.validate()?;
        sweep_stale();
        if self.read_record().is_some() {
            return Err(TestbedError::BadParameter(format!(
                "a test bed {} is up already: concord-testbed --prefix {} down",
                self.prefix, self.prefix
            )));
        }
        if let Some(n) = self.namespaces().into_iter().find(|n| netns_exists(n)) {
            return Err(TestbedError::NotOurs(format!("network namespace {n}")));
        }
        let mut record = Record {
            owner: self.owner,
            ..Record::default()
        };
        self.write_record(&record)?;
        let built = (|| {
            for c in self.up_commands() {
                if c.get(..3) == Some(&words(&["ip", "netns", "add"])[..]) {
                    record.namespaces.push(c[3].clone());
                    self.write_record(&record)?;
                }
                run(&c)?;
            }
            let pid = self.start_delay_line()?;
            record.delay_line = Some(pid);
            self.write_record(&record)?;
            self.wait_for_carrier()
        })();
        if let Err(e) = built {
            let _ = self.down();
            return Err(e);
        }
        Ok(())
    }

    /// Starts the delay line, detached, its log beside the record; returns its process id
    /// (`ip netns exec` executes it in place).
    fn start_delay_line(&self) -> Result<u32, TestbedError> {
        let line = self.delay_line_command();
        let log = self.record_path().with_extension("log");
        let log = fs::File::create(&log).map_err(|source| TestbedError::Record {
            path: log.clone(),
            source,
        })?;
        let err_log = log.try_clone().map_err(|source| TestbedError::Record {
            path: self.record_path(),
            source,
        })?;
        let child = {
            use std::os::unix::process::CommandExt;
            Command::new(&line[0])
                .args(&line[1..])
                .stdin(Stdio::null())
                .stdout(log)
                .stderr(err_log)
                // Its own process group: a ^C of the caller does not stop it before `down`.
                .process_group(0)
                .spawn()
                .map_err(|source| TestbedError::Spawn {
                    command: line.join(" "),
                    source,
                })?
        };
        Ok(child.id())
    }

    /// Waits until the delay line holds the TUN device (its carrier comes up).
    fn wait_for_carrier(&self) -> Result<(), TestbedError> {
        let show = words(&["ip", "-n", &self.router_ns(), "link", "show", TUN_DEV]);
        for _ in 0..250 {
            let out = output(&show)?;
            let text = String::from_utf8_lossy(&out.stdout);
            if out.status.success() && !text.contains("NO-CARRIER") {
                return Ok(());
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let log = fs::read_to_string(self.record_path().with_extension("log")).unwrap_or_default();
        Err(TestbedError::DelayLine(log.trim().to_string()))
    }

    /// Removes the test bed: stops its delay line and deletes the namespaces its record lists.
    /// Refuses if there is no record (nothing here was made by this tool).
    pub fn down(&self) -> Result<(), TestbedError> {
        self.validate()?;
        let Some(record) = self.read_record() else {
            return Err(TestbedError::NotOurs(format!(
                "no record {}: test bed {}",
                self.record_path().display(),
                self.prefix
            )));
        };
        remove(&self.record_path(), &record)
    }

    /// Runs `command` in the namespace of `role` (`s1`.., `rt`, `rcv`) and returns its output.
    pub fn exec(&self, role: &str, command: &[String]) -> Result<Output, TestbedError> {
        self.validate()?;
        let ns = self.namespace_of(role)?;
        let mut line = words(&["ip", "netns", "exec", &ns]);
        line.extend(command.iter().cloned());
        output(&line)
    }

    /// The path that binds namespace `role`, for [`crate::sys::enter_netns`].
    pub fn netns_path(&self, role: &str) -> Result<PathBuf, TestbedError> {
        Ok(Path::new("/run/netns").join(self.namespace_of(role)?))
    }
}

/// Removes what `record` lists and the record itself; every step runs, the first error is
/// returned.
fn remove(path: &Path, record: &Record) -> Result<(), TestbedError> {
    let mut first = None;
    if let Some(pid) = record.delay_line {
        // Only our delay line: the process id may have been reused since.
        let cmdline = fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
        if String::from_utf8_lossy(&cmdline).contains("delay-line") {
            let _ = Command::new("kill").arg(pid.to_string()).output();
        }
    }
    for c in Testbed::down_commands(record) {
        if !netns_exists(&c[3]) {
            continue;
        }
        if let Err(e) = run(&c) {
            first.get_or_insert(e);
        }
    }
    let _ = fs::remove_file(path.with_extension("log"));
    if first.is_none() {
        if let Err(source) = fs::remove_file(path) {
            first = Some(TestbedError::Record {
                path: path.to_path_buf(),
                source,
            });
        }
    }
    first.map_or(Ok(()), Err)
}

/// Removes every test bed whose owner process is gone; returns their prefixes.
pub fn sweep_stale() -> Vec<String> {
    let mut swept = Vec::new();
    let Ok(dir) = fs::read_dir(STATE_DIR) else {
        return swept;
    };
    for entry in dir.flatten() {
        let path = entry.path();
        if path.extension().is_some() {
            continue;
        }
        let Ok(text) = fs::read_to_string(&path) else {
            continue;
        };
        let record = Record::decode(&text);
        if record.owner.is_some_and(|o| !alive(o)) && remove(&path, &record).is_ok() {
            swept.push(entry.file_name().to_string_lossy().into_owned());
        }
    }
    swept
}

/// Runs a command line; its output.
fn output(line: &[String]) -> Result<Output, TestbedError> {
    let (prog, args) = line.split_first().ok_or_else(|| TestbedError::Failed {
        command: String::new(),
        stderr: "empty command".into(),
    })?;
    Command::new(prog)
        .args(args)
        .stdin(Stdio::null())
        .output()
        .map_err(|source| TestbedError::Spawn {
            command: line.join(" "),
            source,
        })
}

/// Runs a command line; an error unless it succeeds.
fn run(line: &[String]) -> Result<(), TestbedError> {
    let out = output(line)?;
    if out.status.success() {
        Ok(())
    } else {
        Err(TestbedError::Failed {
            command: line.join(" "),
            stderr: String::from_utf8_lossy(&out.stderr).trim().to_string(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_plan_names_its_namespaces_addresses_bottleneck_and_delay() {
        let t = Testbed {
            senders: 2,
            ..Testbed::default()
        };
        assert_eq!(t.receiver(), Ipv4Addr::new(10, 77, 100, 1));
        assert_eq!(t.sender(2), Ipv4Addr::new(10, 77, 2, 1));
        assert_eq!(
            t.namespaces(),
            ["ccbed-rt", "ccbed-s1", "ccbed-s2", "ccbed-rcv"]
        );
        let up: Vec<String> = t.up_commands().iter().map(|c| c.join(" ")).collect();
        assert_eq!(up[0], "ip netns add ccbed-rt");
        assert!(up.iter().any(
            |c| c.ends_with("dev rcv parent 1: classid 1:10 htb rate 10000000bit ceil 10000000bit")
        ));
        assert!(up.iter().any(|c| c.ends_with("bfifo limit 65536")));
        assert!(up
            .iter()
            .any(|c| c == "ip -n ccbed-rt rule add iif s2 table 100 pref 100"));
        assert!(up
            .iter()
            .any(|c| c == "ip -n ccbed-rt rule add iif rcv table 100 pref 100"));
        assert!(up
            .iter()
            .any(|c| c == "ip -n ccbed-rt route add default dev dl0 table 100"));
        let dl = t.delay_line_command().join(" ");
        assert!(
            dl.contains("delay-line --dev dl0 --delay-us 20000 --netns ccbed-rt"),
            "{dl}"
        );
    }

    #[test]
    fn option_like_or_long_prefixes_and_bad_ranges_are_refused() {
        for p in ["", "-x", "a b", "toolongpx"] {
            let t = Testbed {
                prefix: p.into(),
                ..Testbed::default()
            };
            assert!(t.validate().is_err(), "{p:?}");
        }
        let t = Testbed {
            senders: 0,
            ..Testbed::default()
        };
        assert!(t.validate().is_err());
        let t = Testbed {
            probe_loss: Some(ProbeLoss {
                port: 1,
                probability: 1.5,
            }),
            ..Testbed::default()
        };
        assert!(t.validate().is_err());
    }

    #[test]
    fn a_record_lists_what_was_made_and_down_removes_it_in_reverse() {
        let r = Record {
            owner: Some(42),
            namespaces: vec!["a-rt".into(), "a-s1".into()],
            delay_line: Some(7),
        };
        assert_eq!(Record::decode(&r.encode()), r);
        let down: Vec<String> = Testbed::down_commands(&r)
            .iter()
            .map(|c| c.join(" "))
            .collect();
        assert_eq!(down, ["ip netns del a-s1", "ip netns del a-rt"]);
    }

    #[test]
    fn roles_name_only_the_beds_namespaces() {
        let t = Testbed {
            senders: 2,
            ..Testbed::default()
        };
        assert_eq!(t.namespace_of("s2").expect("s2"), "ccbed-s2");
        assert_eq!(t.namespace_of("rt").expect("rt"), "ccbed-rt");
        assert!(t.namespace_of("s3").is_err());
        assert!(t.namespace_of("other").is_err());
    }
}
