//! What every claim of an experiment must carry, whatever its verdict: the verdicts themselves
//! are compared with the committed expectations by `concord reproduce --check` (CI).

use concord_repro::claim::{mean_ci95, Kind, PAPER_SETTING};
use concord_repro::runner::QUICK_SEEDS;
use concord_repro::{run_experiments, Claim, Ctx, Experiment, Outcome, ReproError};

/// Panics, naming the claim, if any of `claims` is not well formed: a paper claim quotes the
/// paper and names its section; a stochastic claim has one value per seed and at least
/// [`QUICK_SEEDS`] of them; the mean and interval are those of
/// the values; a deviation row names its deviation.
pub fn assert_well_formed(claims: &[Claim]) {
    assert!(!claims.is_empty(), "no claims");
    for c in claims {
        let name = format!("{} / {}", c.figure, c.metric);
        assert!(c.quick, "{name}: not in the quick setting");
        if c.kind == Kind::Paper {
            assert!(!c.quote.trim().is_empty(), "{name}: no quote");
            assert!(!c.section.trim().is_empty(), "{name}: no section");
        }
        assert!(!c.setting.trim().is_empty(), "{name}: no setting");
        assert!(
            c.setting == PAPER_SETTING || c.setting.len() > 10,
            "{name}: deviation not named"
        );
        assert!(!c.values.is_empty(), "{name}: no values");
        if c.deterministic {
            assert_eq!(c.ci95, [c.values[0], c.values[0]], "{name}");
        } else {
            // A claim that draws from the seed has one value per seed, at least QUICK_SEEDS.
            assert_eq!(c.values.len(), c.seeds.len(), "{name}: one value per seed");
            assert!(
                c.seeds.len() as u64 >= QUICK_SEEDS,
                "{name}: {} seeds",
                c.seeds.len()
            );
            assert_eq!(concord_repro::replicate::check_seeds(c), Ok(()), "{name}");
            let (mean, ci) = mean_ci95(&c.values);
            assert_eq!(c.ours.to_bits(), mean.to_bits(), "{name}: mean");
            assert_eq!(c.ci95.map(f64::to_bits), ci.map(f64::to_bits), "{name}: CI");
        }
        assert!(c.ours.is_finite(), "{name}: {}", c.ours);
    }
}

/// Runs `experiments` in the quick setting two at a time, as `concord reproduce --quick --jobs 2`
/// does: the longest on one core and the others beside it.
#[allow(dead_code)] // not every test file runs experiments in a batch
pub fn run_quick(experiments: &[Experiment]) -> Vec<Result<Outcome, ReproError>> {
    let ctx = Ctx {
        quick: true,
        ..Ctx::default()
    };
    run_experiments(experiments, &ctx, 2, &|_, _| {})
}

/// Panics unless at least `at_least` of `claims` have a figure containing `figure`, and each of
/// them draws from the seed and carries one value for each of the quick setting's
/// [`QUICK_SEEDS`] seeds, 1 to 5.
#[allow(dead_code)] // not every test file checks a claim's seeds by name
pub fn assert_over_quick_seeds(claims: &[Claim], figure: &str, at_least: usize) {
    let picked: Vec<&Claim> = claims
        .iter()
        .filter(|c| c.figure.contains(figure))
        .collect();
    assert!(
        picked.len() >= at_least,
        "{} claims on `{figure}`, expected at least {at_least}",
        picked.len()
    );
    let seeds: Vec<u64> = (1..=QUICK_SEEDS).collect();
    for c in picked {
        let name = format!("{} / {}", c.figure, c.metric);
        assert!(!c.deterministic, "{name}: draws from the seed");
        assert_eq!(c.seeds, seeds, "{name}");
        assert_eq!(c.values.len() as u64, QUICK_SEEDS, "{name}");
    }
}
