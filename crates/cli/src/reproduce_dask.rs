//! `concord reproduce --dask ADDRESS`: the experiments as units (concord_repro::unit) run on a
//! Dask cluster by the Python package's driver (`python -m concord.dask_repro`), their outcomes
//! decoded back into exactly what the local runner returns.

use crate::Failure;
use concord_repro::runner::{Ctx, Event, Experiment, Outcome, ReproError, Work};
use concord_repro::unit::{decode_outcome, Unit};
use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};

/// An experiment's result and the simulation it did, as the local runner returns them.
type Ran = (Result<Outcome, ReproError>, Work);

/// What to install when the driver cannot run.
const INSTALL: &str = "pip install './python[dask]'";

/// Runs `experiments` at `ctx` on the Dask scheduler at `address`, `jobs` threads per
/// experiment on its worker, calling `observe` as each finishes. Results come back in the order
/// of `experiments`, as [`concord_repro::runner::run_watched`] returns them.
pub fn run_on_dask(
    experiments: &[Experiment],
    ctx: &Ctx,
    jobs: usize,
    address: &str,
    observe: &mut dyn FnMut(usize, Event<'_>),
) -> Result<Vec<Ran>, Failure> {
    let python = std::env::var("CONCORD_PYTHON").unwrap_or_else(|_| "python3".into());
    let mut child = Command::new(&python)
        .args(["-m", "concord.dask_repro", address])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .map_err(|e| {
            Failure::input(format!(
                "--dask needs Python 3 with concord's package and Dask, but `{python}` cannot be \
                 started ({e}); install them ({INSTALL}) or name the interpreter in CONCORD_PYTHON"
            ))
        })?;
    let units = Unit::for_experiments(experiments, ctx, jobs);
    if let Some(mut stdin) = child.stdin.take() {
        // A few hundred bytes per unit; the driver reads them all before it prints anything.
        for u in &units {
            let mut line = u.encode();
            line.push(b'\n');
            if stdin.write_all(&line).is_err() {
                break; // the driver ended early: its status and message say why
            }
        }
    }
    let mut results: Vec<Option<Ran>> = experiments.iter().map(|_| None).collect();
    let mut malformed = None;
    if let Some(stdout) = child.stdout.take() {
        for line in BufReader::new(stdout).split(b'\n') {
            let Ok(line) = line else { break };
            let Some((i, outcome)) = parse_line(&line) else {
                malformed = Some(String::from_utf8_lossy(&line[..line.len().min(80)]).into_owned());
                continue;
            };
            let Some(slot) = results.get_mut(i) else {
                malformed = Some(format!("unit {i} of {}", experiments.len()));
                continue;
            };
            match decode_outcome(outcome) {
                Ok((result, work)) => {
                    observe(
                        i,
                        Event::Finished {
                            result: &result,
                            work,
                        },
                    );
                    *slot = Some((result, work));
                }
                Err(e) => malformed = Some(e.to_string()),
            }
        }
    }
    let status = child
        .wait()
        .map_err(|e| Failure::runtime(format!("the Dask driver was lost: {e}")))?;
    if status.code() == Some(2) {
        return Err(Failure::input(format!(
            "the Dask driver could not start (see its message above); install the package with \
             its Dask extra ({INSTALL}) and check the scheduler address `{address}`"
        )));
    }
    if let Some(m) = malformed {
        return Err(Failure::runtime(format!(
            "the Dask driver returned an outcome concord cannot read ({m}); run the same concord \
             on the workers as here ({INSTALL} from this checkout)"
        )));
    }
    let missing = results.iter().filter(|r| r.is_none()).count();
    if !status.success() || missing > 0 {
        return Err(Failure::runtime(format!(
            "the Dask run ended ({status}) with {missing} of {} experiments not done; see the \
             messages above",
            experiments.len()
        )));
    }
    Ok(results.into_iter().flatten().collect())
}

/// `INDEX OUTCOME` as the driver prints it.
fn parse_line(line: &[u8]) -> Option<(usize, &[u8])> {
    let space = line.iter().position(|b| *b == b' ')?;
    let i = std::str::from_utf8(&line[..space]).ok()?.parse().ok()?;
    Some((i, &line[space + 1..]))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_driver_line_splits_into_index_and_outcome() {
        assert_eq!(parse_line(b"12 {\"a\":1}"), Some((12, &b"{\"a\":1}"[..])));
        assert_eq!(parse_line(b"x {}"), None);
        assert_eq!(parse_line(b"nospace"), None);
    }
}
