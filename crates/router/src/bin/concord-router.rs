//! `concord-router`: run the router on the interfaces of this namespace, or print its status.

use clap::{Parser, Subcommand};
use concord_router::bed::Topology;
use concord_router::config::RouterConfig;
use std::io::Write as _;
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
    /// Bring a scenarios/testbed topology up for interactive use, or take one down (root).
    Bed {
        #[command(subcommand)]
        action: BedAction,
    },
    /// Print a running router's counters.
    Status {
        /// The status file given to `run --status`.
        file: PathBuf,
    },
}

#[derive(Subcommand)]
enum BedAction {
    /// Build the topology's namespaces, links and routers, print how to reach each node, and
    /// keep them until Ctrl-C, SIGTERM or `bed down`.
    Up {
        /// The topology file (scenarios/testbed/*.toml).
        file: PathBuf,
        /// The namespaces' prefix: PREFIX-node (1 to 8 letters or digits).
        #[arg(long, default_value = "crbed")]
        prefix: String,
        /// N of the addresses 10.N.link.side.
        #[arg(long, default_value_t = 90)]
        net: u8,
        /// The routers' seed (RED's draws).
        #[arg(long, default_value_t = 1)]
        seed: u64,
    },
    /// Take down the bed brought up under PREFIX (asks its `bed up` to stop; removes what is
    /// left if that process is gone).
    Down {
        /// The prefix given to `bed up`.
        #[arg(long, default_value = "crbed")]
        prefix: String,
    },
}

/// `concord-router bed up`: the bed lives until a termination signal.
fn bed_up(file: &std::path::Path, prefix: &str, net: u8, seed: u64) -> Result<(), String> {
    if prefix.is_empty() || prefix.len() > 8 || !prefix.chars().all(|c| c.is_ascii_alphanumeric()) {
        return Err(format!(
            "--prefix {prefix:?}: give 1 to 8 letters or digits"
        ));
    }
    let topology = Topology::load(file).map_err(|e| e.to_string())?;
    // From here a Ctrl-C or SIGTERM waits until the bed is whole, then takes it down.
    let signals = concord_router::sys::TerminationSignals::block()
        .map_err(|e| format!("blocking signals: {e}"))?;
    let exe = std::env::current_exe().map_err(|e| format!("finding this program: {e}"))?;
    let bed = concord_router::bed::Bed::up(topology, prefix, net, &exe, seed)
        .map_err(|e| format!("{e} (bed up needs root)"))?;
    print!("{}", bed.describe());
    println!(
        "test bed {:?} is up; Ctrl-C here or `concord-router bed down --prefix {prefix}` takes it down",
        bed.topology.name
    );
    let _ = std::io::stdout().flush();
    let sig = signals
        .wait()
        .map_err(|e| format!("waiting for a signal: {e}"))?;
    drop(bed);
    // Whoever read the description may be gone: a closed stdout is no error here.
    let _ = writeln!(std::io::stdout(), "signal {sig}: test bed down");
    Ok(())
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
        Command::Bed {
            action:
                BedAction::Up {
                    file,
                    prefix,
                    net,
                    seed,
                },
        } => bed_up(&file, &prefix, net, seed),
        Command::Bed {
            action: BedAction::Down { prefix },
        } => concord_router::bed::down_recorded(&prefix)
            .map(|removed| {
                if !removed.is_empty() {
                    println!("removed {}", removed.join(" "));
                }
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
