//! What the scenario-driven integration tests share: load a scenario text, expect it refused,
//! run it to the end. Each test binary uses some of these.
#![allow(dead_code)]

use concord_cc::tcp::TcpConfig;
use concord_sim::scenario::{parse_str, FlowKind, Scenario, ScenarioError};
use concord_sim::Simulator;
use std::path::Path;

/// The scenario of `text`, named `scenarios/x.toml` in messages; panics with the loader's error.
pub fn load(text: &str) -> Scenario {
    match parse_str(text, Some(Path::new("scenarios/x.toml"))) {
        Ok(s) => s,
        Err(e) => panic!("rejected: {e}\n{text}"),
    }
}

/// The loader's error for `text`; panics if it is accepted.
pub fn reject(text: &str) -> ScenarioError {
    match parse_str(text, Some(Path::new("scenarios/x.toml"))) {
        Ok(_) => panic!("accepted a bad scenario:\n{text}"),
        Err(e) => e,
    }
}

/// `sc` built and run to its end.
pub fn run(sc: &Scenario) -> Simulator {
    let mut sim = Simulator::new(sc).unwrap_or_else(|e| panic!("does not build: {e}"));
    sim.run().unwrap_or_else(|e| panic!("does not run: {e}"));
    sim
}

/// A two-pair dumbbell, six lines long: a TCP setting's tests append `[defaults.tcp]` and
/// flows from line 7 on.
pub const TWO_PAIRS: &str = r#"duration = "10s"
[topology]
kind = "dumbbell"
pairs = 2
bottleneck = { rate = "10Mbps", delay = "10ms" }
access = { rate = "1Gbps", delay = "1ms" }
"#;

/// [`TWO_PAIRS`] and `tail`, loaded as `scenarios/x.toml`.
pub fn parse_two_pairs(tail: &str) -> Result<Scenario, ScenarioError> {
    parse_str(
        &format!("{TWO_PAIRS}{tail}"),
        Some(Path::new("scenarios/x.toml")),
    )
}

/// Flow `i`'s TCP settings; panics if it is not a TCP flow.
pub fn tcp_of(s: &Scenario, i: usize) -> &TcpConfig {
    match &s.flows[i].kind {
        FlowKind::Tcp { tcp, .. } => tcp,
        other => panic!("not TCP: {other:?}"),
    }
}
