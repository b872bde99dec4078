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
    /// Run CP's aggregation point for one application: a UDP proxy in front of unmodified
    /// applications (both roles; see docs/router.md "CP").
    CpAp {
        /// The C-to-C application id.
        #[arg(long, default_value_t = 1)]
        app: u32,
        /// This AP's socket towards the other AP (ADDR:PORT).
        #[arg(long)]
        bind: std::net::SocketAddr,
        /// The other AP (ADDR:PORT).
        #[arg(long)]
        peer: std::net::SocketAddr,
        /// Local role: flow FLOW's application sends to ADDR:PORT here (FLOW=ADDR:PORT,
        /// repeatable).
        #[arg(long, value_name = "FLOW=ADDR:PORT")]
        listen: Vec<String>,
        /// Remote role: flow FLOW's datagrams are delivered to ADDR:PORT (FLOW=ADDR:PORT,
        /// repeatable).
        #[arg(long, value_name = "FLOW=ADDR:PORT")]
        deliver: Vec<String>,
        /// m flowshares by BFLD (without it: a single flowshare).
        #[arg(long, value_name = "M")]
        bfld: Option<u32>,
        /// TFRC's segment size s, bytes (the applications' IP packets).
        #[arg(long, default_value_t = 1000)]
        segment_size: u64,
        /// Datagrams queued per flow before the AP drops the application's datagrams.
        #[arg(long, default_value_t = 100)]
        queue: usize,
        /// The seed of BFLD's draws.
        #[arg(long, default_value_t = 1)]
        seed: u64,
        /// Rewrite this file with the counters and the estimate every 200 ms.
        #[arg(long)]
        status: Option<PathBuf>,
        /// Stop after this many seconds (default: run until killed).
        #[arg(long)]
        duration: Option<f64>,
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

/// The arguments of `concord-router cp-ap`.
struct CpApArgs {
    app: u32,
    bind: std::net::SocketAddr,
    peer: std::net::SocketAddr,
    listen: Vec<String>,
    deliver: Vec<String>,
    bfld: Option<u32>,
    segment_size: u64,
    queue: usize,
    seed: u64,
    status: Option<PathBuf>,
    duration: Option<f64>,
}

/// `FLOW=ADDR:PORT` of `--what`.
fn flow_addr(what: &str, text: &str) -> Result<(usize, std::net::SocketAddr), String> {
    let bad = || format!("--{what} {text:?}: write FLOW=ADDR:PORT, e.g. 0=127.0.0.1:8000");
    let (f, a) = text.split_once('=').ok_or_else(bad)?;
    let f: usize = f.trim().parse().map_err(|_| bad())?;
    if f >= 1024 {
        return Err(format!("--{what} {text:?}: flow ids run from 0 to 1023"));
    }
    Ok((f, a.trim().parse().map_err(|_| bad())?))
}

/// `concord-router cp-ap`: the aggregation point until killed or for `--duration`.
fn cp_ap(a: CpApArgs) -> Result<(), String> {
    use concord_router::cp_ap::{run_ap, ApFlow, ApSetup};
    let mut flows: Vec<ApFlow> = Vec::new();
    for (what, list) in [("listen", &a.listen), ("deliver", &a.deliver)] {
        for text in list {
            let (f, addr) = flow_addr(what, text)?;
            if flows.len() <= f {
                flows.resize(
                    f + 1,
                    ApFlow {
                        listen: None,
                        deliver: None,
                    },
                );
            }
            let slot = if what == "listen" {
                &mut flows[f].listen
            } else {
                &mut flows[f].deliver
            };
            if slot.replace(addr).is_some() {
                return Err(format!(
                    "--{what} names flow {f} twice; give each flow one address"
                ));
            }
        }
    }
    if flows.is_empty() {
        return Err("no flow: give --listen FLOW=ADDR:PORT (local role) or --deliver FLOW=ADDR:PORT (remote role)".into());
    }
    let flowshares = match a.bfld {
        None => concord_cc::cp::Flowshares::Single,
        Some(0) => return Err("--bfld 0: m is at least 1".into()),
        Some(m) => concord_cc::cp::Flowshares::Bfld { m },
    };
    let end = match a.duration {
        None => None,
        Some(d) if d.is_finite() && d > 0.0 => {
            Some(concord_cc::time::Instant::ZERO + concord_cc::time::Duration::from_secs_f64(d))
        }
        Some(d) => return Err(format!("--duration {d}: give a positive number of seconds")),
    };
    let setup = ApSetup {
        app: a.app,
        flowshares,
        segment_size: a.segment_size,
        flows,
        queue_limit: a.queue,
        bind: a.bind,
        peer: a.peer,
        seed: a.seed,
        measure: None,
    };
    let clock = concord_net::clock::Clock::new();
    let (_, status) = run_ap(
        setup,
        || clock.now(),
        |now| end.is_some_and(|e| now >= e),
        a.status.as_deref(),
    )
    .map_err(|e| e.to_string())?;
    print!("{status}");
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
        Command::CpAp {
            app,
            bind,
            peer,
            listen,
            deliver,
            bfld,
            segment_size,
            queue,
            seed,
            status,
            duration,
        } => cp_ap(CpApArgs {
            app,
            bind,
            peer,
            listen,
            deliver,
            bfld,
            segment_size,
            queue,
            seed,
            status,
            duration,
        }),
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
