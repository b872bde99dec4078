//! `concord-testbed up|down|exec`: two network namespaces joined by a veth pair with an htb +
//! bfifo bottleneck on the sender's side (see `concord_net::testbed`). Needs root.

use clap::{Parser, Subcommand};
use concord_net::testbed::Testbed;
use std::io::Write;
use std::process::ExitCode;

/// The two-host test bed.
#[derive(Debug, Parser)]
#[command(name = "concord-testbed", version, about)]
struct Args {
    /// Prefix of the namespaces (PREFIX-snd, PREFIX-rcv) and interfaces.
    #[arg(long, default_value = "ccbed")]
    prefix: String,
    /// What to do.
    #[command(subcommand)]
    action: Action,
}

/// The actions.
#[derive(Debug, Subcommand)]
enum Action {
    /// Builds the namespaces, the veth pair (10.77.0.1 - 10.77.0.2) and the bottleneck.
    Up {
        /// The bottleneck rate, in bits per second.
        #[arg(long, default_value_t = 10_000_000)]
        rate_bps: u64,
        /// The bottleneck queue, in bytes.
        #[arg(long, default_value_t = 65_536)]
        queue_bytes: u64,
    },
    /// Removes them.
    Down,
    /// Runs a command in one of the namespaces: `snd` or `rcv`.
    Exec {
        /// `snd` or `rcv`.
        side: String,
        /// The command and its arguments.
        #[arg(trailing_var_arg = true, required = true)]
        command: Vec<String>,
    },
}

fn main() -> ExitCode {
    let args = Args::parse();
    let mut bed = Testbed {
        prefix: args.prefix,
        ..Testbed::default()
    };
    let result = match args.action {
        Action::Up {
            rate_bps,
            queue_bytes,
        } => {
            bed.rate_bps = rate_bps;
            bed.queue_bytes = queue_bytes;
            bed.up().map(|()| {
                println!(
                    "{} ({}) -> {} ({}): {} bit/s, {} bytes of queue",
                    bed.sender_ns(),
                    bed.sender,
                    bed.receiver_ns(),
                    bed.receiver(),
                    rate_bps,
                    queue_bytes
                );
            })
        }
        Action::Down => bed.down(),
        Action::Exec { side, command } => {
            let ns = match side.as_str() {
                "snd" => bed.sender_ns(),
                "rcv" => bed.receiver_ns(),
                other => {
                    eprintln!("side must be snd or rcv, not {other:?}");
                    return ExitCode::FAILURE;
                }
            };
            bed.exec(&ns, &command).map(|out| {
                let _ = std::io::stdout().write_all(&out.stdout);
                let _ = std::io::stderr().write_all(&out.stderr);
            })
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
