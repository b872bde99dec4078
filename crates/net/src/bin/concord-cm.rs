//! `concord-cm status`: what the host's Congestion Manager daemon is doing.

use clap::{Parser, Subcommand};
use concord_net::client::CmClient;
use concord_net::daemon::default_socket_path;
use std::path::PathBuf;
use std::process::ExitCode;

/// Talks to concordd.
#[derive(Debug, Parser)]
#[command(name = "concord-cm", version, about)]
struct Args {
    /// The daemon's socket [default: as concordd's].
    #[arg(long)]
    socket: Option<PathBuf>,
    /// What to do.
    #[command(subcommand)]
    action: Action,
}

/// The actions.
#[derive(Debug, Subcommand)]
enum Action {
    /// Prints the daemon's counters and each macroflow: flows, rate, window, RTT, aging and
    /// loss estimate.
    Status,
}

fn main() -> ExitCode {
    let args = Args::parse();
    let path = args.socket.unwrap_or_else(default_socket_path);
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(r) => r,
        Err(e) => {
            eprintln!("concord-cm: {e}");
            return ExitCode::FAILURE;
        }
    };
    let Action::Status = args.action;
    let result = runtime.block_on(async {
        let cm = CmClient::connect(&path).await?;
        Ok::<_, concord_net::client::ClientError>((cm.status().await?, cm.macroflows().await?))
    });
    match result {
        Ok((s, macroflows)) => {
            println!("socket           {}", path.display());
            println!("clients          {}", s.clients);
            println!("flows            {}", s.flows);
            println!("grants           {}", s.grants);
            println!("grants expired   {}", s.grants_expired);
            println!("malformed frames {}", s.malformed_frames);
            println!("events dropped   {}", s.events_dropped);
            for m in macroflows {
                println!("{m}");
            }
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("concord-cm: {}: {e}", path.display());
            ExitCode::FAILURE
        }
    }
}
