//! A two-host test bed on one Linux machine: two network namespaces joined by a veth pair,
//! with a bottleneck on the sender's side: an htb class at the bottleneck rate feeding a
//! byte-limited FIFO (bfifo). Root only. There is no added delay (this kernel's tc has no
//! netem): the RTT is the loopback-like veth's, tens of microseconds.
//!
//! [`Testbed::up_commands`] and [`Testbed::down_commands`] are plain command lists, so the
//! plan can be read and tested without root; [`Testbed::up`], [`Testbed::down`] and
//! [`Testbed::exec`] run them with `ip` and `tc`.

use std::net::Ipv4Addr;
use std::process::{Command, Output};

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
    #[error("bad name {0:?}: use 1 to 12 letters, digits or '-', not starting with '-'")]
    BadName(String),
}

/// The shape of the test bed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Testbed {
    /// A prefix for the namespaces and interfaces: `<prefix>-snd`, `<prefix>-rcv`.
    pub prefix: String,
    /// The bottleneck rate, in bits per second.
    pub rate_bps: u64,
    /// The bottleneck queue, in bytes.
    pub queue_bytes: u64,
    /// The sender's address; the receiver's is the next one, both in a /30.
    pub sender: Ipv4Addr,
}

impl Default for Testbed {
    fn default() -> Self {
        Testbed {
            prefix: "ccbed".into(),
            rate_bps: 10_000_000,
            queue_bytes: 64 * 1024,
            sender: Ipv4Addr::new(10, 77, 0, 1),
        }
    }
}

/// A command as its words.
pub type CommandLine = Vec<String>;

fn words(s: &[&str]) -> CommandLine {
    s.iter().map(|w| (*w).to_string()).collect()
}

impl Testbed {
    /// The sender's namespace.
    pub fn sender_ns(&self) -> String {
        format!("{}-snd", self.prefix)
    }

    /// The receiver's namespace.
    pub fn receiver_ns(&self) -> String {
        format!("{}-rcv", self.prefix)
    }

    /// The receiver's address.
    pub fn receiver(&self) -> Ipv4Addr {
        Ipv4Addr::from(u32::from(self.sender).wrapping_add(1))
    }

    /// Checks the prefix: short enough for an interface name, no option-like words.
    pub fn validate(&self) -> Result<(), TestbedError> {
        let p = &self.prefix;
        let ok = !p.is_empty()
            && p.len() <= 12
            && !p.starts_with('-')
            && p.chars().all(|c| c.is_ascii_alphanumeric() || c == '-');
        if ok {
            Ok(())
        } else {
            Err(TestbedError::BadName(p.clone()))
        }
    }

    /// The commands that build the test bed, in order.
    pub fn up_commands(&self) -> Vec<CommandLine> {
        let (s, r) = (self.sender_ns(), self.receiver_ns());
        let (vs, vr) = (format!("{}-s", self.prefix), format!("{}-r", self.prefix));
        let (a_s, a_r) = (
            format!("{}/30", self.sender),
            format!("{}/30", self.receiver()),
        );
        let rate = format!("{}bit", self.rate_bps);
        let limit = self.queue_bytes.to_string();
        vec![
            words(&["ip", "netns", "add", &s]),
            words(&["ip", "netns", "add", &r]),
            words(&[
                "ip", "link", "add", &vs, "netns", &s, "type", "veth", "peer", "name", &vr,
                "netns", &r,
            ]),
            words(&["ip", "-n", &s, "addr", "add", &a_s, "dev", &vs]),
            words(&["ip", "-n", &r, "addr", "add", &a_r, "dev", &vr]),
            words(&["ip", "-n", &s, "link", "set", "lo", "up"]),
            words(&["ip", "-n", &r, "link", "set", "lo", "up"]),
            words(&["ip", "-n", &s, "link", "set", &vs, "up"]),
            words(&["ip", "-n", &r, "link", "set", &vr, "up"]),
            // The bottleneck: htb at the rate, a byte-limited FIFO behind it.
            words(&[
                "tc", "-n", &s, "qdisc", "add", "dev", &vs, "root", "handle", "1:", "htb",
                "default", "10",
            ]),
            words(&[
                "tc", "-n", &s, "class", "add", "dev", &vs, "parent", "1:", "classid", "1:10",
                "htb", "rate", &rate, "ceil", &rate,
            ]),
            words(&[
                "tc", "-n", &s, "qdisc", "add", "dev", &vs, "parent", "1:10", "handle", "10:",
                "bfifo", "limit", &limit,
            ]),
        ]
    }

    /// The commands that remove the test bed (the veth pair goes with its namespaces).
    pub fn down_commands(&self) -> Vec<CommandLine> {
        vec![
            words(&["ip", "netns", "del", &self.sender_ns()]),
            words(&["ip", "netns", "del", &self.receiver_ns()]),
        ]
    }

    /// Builds the test bed; on a failure, removes what was built.
    pub fn up(&self) -> Result<(), TestbedError> {
        self.validate()?;
        for c in self.up_commands() {
            if let Err(e) = run(&c) {
                let _ = self.down();
                return Err(e);
            }
        }
        Ok(())
    }

    /// Removes the test bed; every step runs, the first error is returned.
    pub fn down(&self) -> Result<(), TestbedError> {
        self.validate()?;
        let mut first = None;
        for c in self.down_commands() {
            if let Err(e) = run(&c) {
                first.get_or_insert(e);
            }
        }
        first.map_or(Ok(()), Err)
    }

    /// Runs `command` in namespace `ns` (one of the test bed's) and returns its output.
    pub fn exec(&self, ns: &str, command: &[String]) -> Result<Output, TestbedError> {
        self.validate()?;
        if ns != self.sender_ns() && ns != self.receiver_ns() {
            return Err(TestbedError::BadName(ns.to_string()));
        }
        let mut line = words(&["ip", "netns", "exec", ns]);
        line.extend(command.iter().cloned());
        output(&line)
    }
}

/// Runs a command line; its output.
fn output(line: &[String]) -> Result<Output, TestbedError> {
    let (prog, args) = line.split_first().ok_or_else(|| TestbedError::Failed {
        command: String::new(),
        stderr: "empty command".into(),
    })?;
    Command::new(prog)
        .args(args)
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
    fn the_plan_names_its_namespaces_addresses_and_bottleneck() {
        let t = Testbed::default();
        assert_eq!(t.receiver(), Ipv4Addr::new(10, 77, 0, 2));
        let up: Vec<String> = t.up_commands().iter().map(|c| c.join(" ")).collect();
        assert_eq!(up[0], "ip netns add ccbed-snd");
        assert!(up
            .iter()
            .any(|c| c.ends_with("htb rate 10000000bit ceil 10000000bit")));
        assert!(up.iter().any(|c| c.ends_with("bfifo limit 65536")));
        assert_eq!(t.down_commands().len(), 2);
    }

    #[test]
    fn option_like_or_long_prefixes_are_refused() {
        for p in ["", "-x", "a b", "waytoolongprefix"] {
            let t = Testbed {
                prefix: p.into(),
                ..Testbed::default()
            };
            assert!(t.validate().is_err(), "{p:?}");
        }
    }
}
