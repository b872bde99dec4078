//! `concord-router`: run the router on the interfaces of this namespace, or print its status.

use clap::{Parser, Subcommand};
use concord_router::config::RouterConfig;
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Parser)]
#[command(
    name = "concord-router",
    about = "A user-space IPv4 router with concord-cc queue disciplines and GCCA"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Forward between the ports a configuration file names (root; see docs/router.md).
    Run {
        /// The configuration (TOML).
        #[arg(long)]
        config: PathBuf,
        /// Rewrite this file with the counters every 200 ms.
        #[arg(long)]
        status: Option<PathBuf>,
        /// Stop when this path disappears (e.g. /run/netns/NAME).
        #[arg(long)]
        watch: Option<PathBuf>,
        /// Run under SCHED_FIFO at this priority (1-99), so that a loaded machine cannot
        /// deschedule the router (root).
        #[arg(long, value_name = "PRIORITY")]
        realtime: Option<u8>,
    },
    /// Check a configuration file and print what it declares.
    Check {
        /// The configuration (TOML).
        config: PathBuf,
    },
    /// Print a running router's counters.
    Status {
        /// The status file given to `run --status`.
        file: PathBuf,
    },
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Run {
            config,
            status,
            watch,
            realtime,
        } => realtime
            .map_or(Ok(()), |p| {
                concord_router::sys::set_realtime(p).map_err(|e| {
                    format!("--realtime {p}: {e} (run as root, or leave --realtime out)")
                })
            })
            .and_then(|()| RouterConfig::load(&config).map_err(|e| e.to_string()))
            .and_then(|c| concord_router::run::run(c, status, watch).map_err(|e| e.to_string())),
        Command::Check { config } => RouterConfig::load(&config)
            .map(|c| {
                println!(
                    "{} ports, {} neighbours, {} routes",
                    c.ports.len(),
                    c.neighbours.len(),
                    c.routes.len()
                )
            })
            .map_err(|e| e.to_string()),
        Command::Status { file } => std::fs::read_to_string(&file)
            .map(|t| print!("{t}"))
            .map_err(|e| {
                format!(
                    "reading {}: {e} (is the router running with --status {}?)",
                    file.display(),
                    file.display()
                )
            }),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("concord-router: {e}");
            ExitCode::FAILURE
        }
    }
}
