//! What the scenario-driven integration tests share: load a scenario text, expect it refused,
//! run it to the end. Each test binary uses some of these.
#![allow(dead_code)]

use concord_sim::scenario::{parse_str, Scenario, ScenarioError};
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
