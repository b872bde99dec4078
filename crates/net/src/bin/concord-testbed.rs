//! `concord-testbed up|down|exec|delay-line`: sender hosts, a router and a receiver host in
//! network namespaces, an htb + bfifo bottleneck on the router and a user-space delay line on a
//! TUN device inside it (see `concord_net::testbed`). Needs root.

use clap::{Parser, Subcommand};
use concord_net::delay_line::{self, DelayLineConfig};
use concord_net::testbed::{sweep_stale, ProbeLoss, Testbed};
use std::io::Write;
use std::process::ExitCode;
use std::time::Duration;
use tracing_subscriber::EnvFilter;

/// The test bed.
#[derive(Debug, Parser)]
#[command(name = "concord-testbed", version, about)]
struct Args {
    /// Prefix of the namespaces (PREFIX-s1.., PREFIX-rt, PREFIX-rcv), 1 to 8 characters.
    #[arg(long, default_value = "ccbed")]
    prefix: String,
    /// What to do.
    #[command(subcommand)]
    action: Action,
}

/// The actions.
#[derive(Debug, Subcommand)]
enum Action {
    /// Builds the namespaces, the links (sender i 10.N.i.1, receiver 10.N.100.1), the
    /// bottleneck and the delay line.
    Up {
        /// Sender hosts.
        #[arg(long, default_value_t = 1)]
        senders: u8,
        /// The bottleneck rate, in bits per second.
        #[arg(long, default_value_t = 10_000_000)]
        rate_bps: u64,
        /// The bottleneck queue, in bytes.
        #[arg(long, default_value_t = 65_536)]
        queue_bytes: u64,
        /// The round-trip propagation delay, in milliseconds (half of it each way).
        #[arg(long, default_value_t = 40)]
        rtt_ms: u64,
        /// N of the addresses 10.N.x.y.
        #[arg(long, default_value_t = 77)]
        net: u8,
        /// Drop UDP datagrams from or to this port (the probe protocol's) ...
        #[arg(long)]
        loss_port: Option<u16>,
        /// ... with this probability.
        #[arg(long, default_value_t = 0.0)]
        loss: f64,
        /// The seed of the drops.
        #[arg(long, default_value_t = 1)]
        seed: u64,
    },
    /// Removes a test bed this tool made (and nothing else).
    Down,
    /// Removes every test bed made for a process that is gone.
    Sweep,
    /// Runs a command in one of the namespaces: s1.., rt or rcv.
    Exec {
        /// s1.., rt or rcv.
        role: String,
        /// The command and its arguments.
        #[arg(trailing_var_arg = true, required = true)]
        command: Vec<String>,
    },
    /// Runs the delay line on a TUN device (started by `up` inside the router).
    DelayLine {
        /// The TUN device.
        #[arg(long)]
        dev: String,
        /// The hold per packet, in microseconds.
        #[arg(long)]
        delay_us: u64,
        /// Stop when this network namespace is removed.
        #[arg(long)]
        netns: Option<String>,
        /// Drop UDP datagrams from or to this port ...
        #[arg(long)]
        loss_port: Option<u16>,
        /// ... with this probability.
        #[arg(long, default_value_t = 0.0)]
        loss: f64,
        /// The seed of the drops.
        #[arg(long, default_value_t = 1)]
        seed: u64,
    },
}

fn main() -> ExitCode {
    tracing_subscriber::fmt()
        .with_env_filter(
            EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("info")),
        )
        .with_writer(std::io::stderr)
        .with_ansi(
            std::io::IsTerminal::is_terminal(&std::io::stderr())
                && std::env::var_os("NO_COLOR").is_none(),
        )
        .init();
    let args = Args::parse();
    let mut bed = Testbed {
        prefix: args.prefix,
        ..Testbed::default()
    };
    let result = match args.action {
        Action::Up {
            senders,
            rate_bps,
            queue_bytes,
            rtt_ms,
            net,
            loss_port,
            loss,
            seed,
        } => {
            bed.senders = senders;
            bed.rate_bps = rate_bps;
            bed.queue_bytes = queue_bytes;
            bed.delay = Duration::from_micros(rtt_ms * 500);
            bed.net = net;
            bed.seed = seed;
            bed.probe_loss = loss_port.map(|port| ProbeLoss {
                port,
                probability: loss,
            });
            bed.up().map(|()| {
                for i in 1..=senders {
                    println!("{} {}", bed.sender_ns(i), bed.sender(i));
                }
                println!(
                    "{} {}: {rate_bps} bit/s, {queue_bytes} bytes of queue, {rtt_ms} ms RTT",
                    bed.receiver_ns(),
                    bed.receiver()
                );
            })
        }
        Action::Down => bed.down(),
        Action::Sweep => {
            for p in sweep_stale() {
                println!("removed stale test bed {p}");
            }
            Ok(())
        }
        Action::Exec { role, command } => {
            // The record says how many senders there are.
            if let Some(r) = bed.read_record() {
                bed.senders = u8::try_from(r.namespaces.len().saturating_sub(2))
                    .unwrap_or(1)
                    .max(1);
            }
            bed.exec(&role, &command).map(|out| {
                let _ = std::io::stdout().write_all(&out.stdout);
                let _ = std::io::stderr().write_all(&out.stderr);
            })
        }
        Action::DelayLine {
            dev,
            delay_us,
            netns,
            loss_port,
            loss,
            seed,
        } => {
            let config = DelayLineConfig {
                dev,
                delay: Duration::from_micros(delay_us),
                loss_port,
                loss,
                seed,
                watch: netns.map(|n| std::path::Path::new("/run/netns").join(n)),
            };
            return match delay_line::run(&config) {
                Ok(()) => ExitCode::SUCCESS,
                Err(e) => {
                    eprintln!("concord-testbed delay-line: {e}");
                    ExitCode::FAILURE
                }
            };
        }
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("concord-testbed: {e}");
            ExitCode::FAILURE
        }
    }
}
