//! Drops packets leaving an interface of a network namespace at random, for test beds without
//! netem: `path-loss NETNS DEV PROBABILITY [SEED]` (root), e.g.
//! `cargo run -p concord-bpf --features datapath --example path-loss -- cbpf-rt rcv 0.01`.

use std::process::ExitCode;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.len() < 3 || args.len() > 4 {
        eprintln!("usage: path-loss NETNS DEV PROBABILITY [SEED]");
        return ExitCode::from(2);
    }
    let Ok(p) = args[2].parse::<f64>() else {
        eprintln!(
            "path-loss: probability {:?} is not a number (give e.g. 0.01)",
            args[2]
        );
        return ExitCode::from(2);
    };
    let seed = match args.get(3).map(|s| s.parse::<u64>()) {
        None => 1,
        Some(Ok(s)) => s,
        Some(Err(_)) => {
            eprintln!("path-loss: seed {:?} is not a whole number", args[3]);
            return ExitCode::from(2);
        }
    };
    let netns = std::path::Path::new("/run/netns").join(&args[0]);
    match concord_bpf::path_loss::attach(netns, &args[1], p, seed) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("path-loss: {e}");
            ExitCode::FAILURE
        }
    }
}
