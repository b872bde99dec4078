//! The pooling rule (docs/analysis.md, "the pooling rule"): every stochastic claim is measured
//! on the run's own seed block and on a disjoint replicate block [`REPLICATE_OFFSET`] seeds on,
//! and judged once on the two blocks' values pooled (Law and Kelton, *Simulation Modeling and
//! Analysis*, 3rd ed., section 9.4.1: independent replications, a t interval over them).

use crate::claim::Claim;
use crate::runner::{Ctx, Experiment, Outcome, ReproError, FULL_SEEDS, QUICK_SEEDS};

/// How far the replicate block's seeds lie from the run's own: the block `--seed-base` would
/// name next (seeds 1001.. beside 1..).
pub const REPLICATE_OFFSET: u64 = 1000;

/// Runs `e` on the run's own seeds and, when `ctx.replicate` is set and any of its claims
/// draws from the seed, again on the replicate block; the claims of the two runs are paired
/// in order and each is judged by [`crate::Claim::pooled_with`]. Figures and raw tables are the
/// own block's.
pub fn run(e: &Experiment, ctx: &Ctx) -> Result<Outcome, ReproError> {
    let own = (e.run)(ctx)?;
    if !ctx.replicate || own.claims.iter().all(|c| c.deterministic) {
        return Ok(own);
    }
    let replicate_ctx = Ctx {
        seed_base: ctx.seed_base.saturating_add(REPLICATE_OFFSET),
        replicate: false,
        ..ctx.clone()
    };
    let other = (e.run)(&replicate_ctx)?;
    pair(e.id, own, &other)
}

/// `own` with each claim judged pooled with its counterpart in `other` (the same experiment on the
/// replicate block), or an error naming the first claim that has none.
pub fn pair(experiment: &str, mut own: Outcome, other: &Outcome) -> Result<Outcome, ReproError> {
    let mismatch = |message: String| ReproError::Simulation {
        name: experiment.to_string(),
        message,
    };
    if own.claims.len() != other.claims.len() {
        return Err(mismatch(format!(
            "the replicate seed block gave {} claims where the run's own gave {}; an experiment must make the same claims whatever its seeds",
            other.claims.len(),
            own.claims.len()
        )));
    }
    let mut claims = Vec::with_capacity(own.claims.len());
    for (a, b) in own.claims.drain(..).zip(&other.claims) {
        if a.figure != b.figure || a.metric != b.metric {
            return Err(mismatch(format!(
                "claim `{} {}` has `{} {}` in its place on the replicate seed block; an experiment must make the same claims in the same order whatever its seeds",
                a.figure, a.metric, b.figure, b.metric
            )));
        }
        check_seeds(&a).map_err(&mismatch)?;
        check_seeds(b).map_err(&mismatch)?;
        if a.deterministic && !same_values(&a.values, &b.values) {
            return Err(mismatch(format!(
                "claim `{} {}` is marked deterministic but gives {:?} on seeds {:?} and {:?} on seeds {:?}; it draws from the seed: measure it over `Ctx::seeds` and drop `.deterministic()`",
                a.figure, a.metric, a.values, a.seeds, b.values, b.seeds
            )));
        }
        claims.push(a.pooled_with(b));
    }
    own.claims = claims;
    Ok(own)
}

/// The seeds a claim that draws from the seed needs in one block (the reproduction rules:
/// at least [`QUICK_SEEDS`] in the quick setting and [`FULL_SEEDS`] in the full one).
pub fn required_seeds(quick: bool) -> u64 {
    if quick {
        QUICK_SEEDS
    } else {
        FULL_SEEDS
    }
}

/// An error naming `c` if it draws from the seed (it is not marked deterministic) yet carries
/// fewer values than [`required_seeds`], or not one value per seed.
pub fn check_seeds(c: &Claim) -> Result<(), String> {
    if c.deterministic {
        return Ok(());
    }
    let need = required_seeds(c.quick);
    if (c.values.len() as u64) < need || c.values.len() != c.seeds.len() {
        return Err(format!(
            "claim `{} {}` draws from the seed but carries {} values on seeds {:?} in a block; a stochastic claim needs one value per seed over at least {need} seeds: measure it over `Ctx::seeds`, or mark it `.deterministic()` if nothing in its scenario draws from the seed",
            c.figure,
            c.metric,
            c.values.len(),
            c.seeds
        ));
    }
    Ok(())
}

/// The same values, bit for bit (a NaN equals a NaN).
fn same_values(a: &[f64], b: &[f64]) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x.to_bits() == y.to_bits())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::claim::{Check, Claim, Paper, Verdict};
    use std::sync::atomic::{AtomicU64, Ordering};

    /// A claim of `metric` whose five values centre on `mean`.
    fn claim(metric: &str, mean: f64, ctx: &Ctx) -> Claim {
        let seeds = ctx.seeds_n(5);
        let values: Vec<f64> = [-0.01, 0.01, 0.0, 0.005, -0.005]
            .iter()
            .map(|d| mean + d)
            .collect();
        Claim::mean_over_seeds(
            Paper::Cm,
            "Fig. 9",
            metric,
            "0.77",
            Check::Between { lo: 0.7, hi: 0.8 },
            &seeds,
            &values,
            "s.toml",
            true,
        )
    }

    /// Inside the band on seeds 1..5, on its edge on the replicate block, inside pooled.
    fn edge(ctx: &Ctx) -> Result<Outcome, ReproError> {
        let mean = if ctx.seed_base == 0 { 0.75 } else { 0.80 };
        Ok(Outcome {
            claims: vec![claim("edge", mean, ctx), claim("steady", 0.75, ctx)],
            ..Outcome::default()
        })
    }

    static DETERMINISTIC_RUNS: AtomicU64 = AtomicU64::new(0);

    fn deterministic(ctx: &Ctx) -> Result<Outcome, ReproError> {
        DETERMINISTIC_RUNS.fetch_add(1, Ordering::SeqCst);
        Ok(Outcome {
            claims: vec![claim("d", 0.75, ctx).deterministic()],
            ..Outcome::default()
        })
    }

    fn uneven(ctx: &Ctx) -> Result<Outcome, ReproError> {
        let mut claims = vec![claim("a", 0.75, ctx)];
        if ctx.seed_base == 0 {
            claims.push(claim("b", 0.75, ctx));
        }
        Ok(Outcome {
            claims,
            ..Outcome::default()
        })
    }

    /// A claim that draws from the seed measured on its first seed alone.
    fn one_seed(ctx: &Ctx) -> Result<Outcome, ReproError> {
        let c = claim("one seed", 0.75, ctx);
        let one = Claim::new(
            Paper::Cm,
            &c.figure,
            &c.metric,
            "0.77",
            c.values[0],
            c.check,
            ctx.seed(1),
            "s.toml",
            true,
        );
        Ok(Outcome {
            claims: vec![claim("steady", 0.75, ctx), one],
            ..Outcome::default()
        })
    }

    /// A claim marked deterministic whose value follows the seed base.
    fn falsely_deterministic(ctx: &Ctx) -> Result<Outcome, ReproError> {
        let mean = if ctx.seed_base == 0 { 0.75 } else { 0.76 };
        Ok(Outcome {
            claims: vec![
                claim("steady", 0.75, ctx),
                claim("flagged", mean, ctx).deterministic(),
            ],
            ..Outcome::default()
        })
    }

    fn experiment(run: fn(&Ctx) -> Result<Outcome, ReproError>) -> Experiment {
        Experiment {
            id: "test/replicate",
            paper: Paper::Cm,
            title: "replicate",
            run,
        }
    }

    fn replicating() -> Ctx {
        Ctx {
            replicate: true,
            ..Ctx::default()
        }
    }

    #[test]
    fn a_claim_is_judged_on_both_blocks_pooled_and_each_block_is_kept() {
        let o = run(&experiment(edge), &replicating()).expect("runs");
        let c = &o.claims[0];
        // Pooled: mean 0.775, sd 0.02739 over ten values, half-width 0.0196: 0.755..0.795.
        assert_eq!(c.verdict, Verdict::Reproduced);
        assert!((c.ours - 0.775).abs() < 1e-12, "{}", c.ours);
        assert!(c.ci95[1] < 0.8, "{:?}", c.ci95);
        assert_eq!(c.seeds, vec![1, 2, 3, 4, 5, 1001, 1002, 1003, 1004, 1005]);
        assert_eq!(c.blocks[0].seeds, vec![1, 2, 3, 4, 5]);
        assert_eq!(c.blocks[0].verdict, Verdict::Reproduced);
        assert_eq!(c.blocks[1].seeds, vec![1001, 1002, 1003, 1004, 1005]);
        assert_eq!(
            c.blocks[1].verdict,
            Verdict::SeedDependent,
            "0.80 sits on the edge"
        );
        assert_eq!(o.claims[1].verdict, Verdict::Reproduced);
    }

    #[test]
    fn without_replication_the_run_is_judged_on_its_own_block() {
        let o = run(&experiment(edge), &Ctx::default()).expect("runs");
        assert_eq!(o.claims[0].verdict, Verdict::Reproduced);
        assert!(o.claims[0].blocks.is_empty());
        assert_eq!(o.claims[0].seeds, vec![1, 2, 3, 4, 5]);
    }

    #[test]
    fn an_experiment_of_deterministic_claims_runs_once() {
        let o = run(&experiment(deterministic), &replicating()).expect("runs");
        assert_eq!(DETERMINISTIC_RUNS.load(Ordering::SeqCst), 1);
        assert!(o.claims[0].blocks.is_empty());
    }

    #[test]
    fn a_stochastic_claim_on_fewer_seeds_than_the_rules_require_is_an_error_naming_it() {
        let err = run(&experiment(one_seed), &replicating()).expect_err("one seed");
        let text = err.to_string();
        assert!(text.contains("test/replicate"), "{text}");
        assert!(
            text.contains(
                "claim `Fig. 9 one seed` draws from the seed but carries 1 values on seeds [1]"
            ),
            "{text}"
        );
        assert!(text.contains("at least 5 seeds"), "{text}");
    }

    #[test]
    fn the_seeds_a_block_needs_are_the_rules_minimum() {
        assert_eq!(required_seeds(true), 5);
        assert_eq!(required_seeds(false), 20);
        let ctx = Ctx::default();
        let mut c = claim("four", 0.75, &ctx);
        assert_eq!(check_seeds(&c), Ok(()));
        c.values.pop();
        assert!(check_seeds(&c).is_err(), "four values on five seeds");
        c.seeds.pop();
        assert!(check_seeds(&c).is_err(), "four seeds");
        assert_eq!(check_seeds(&c.deterministic()), Ok(()));
        let mut full = claim("full", 0.75, &ctx);
        full.quick = false;
        assert!(
            check_seeds(&full).is_err(),
            "five seeds in the full setting"
        );
    }

    #[test]
    fn a_claim_marked_deterministic_that_moves_with_the_seeds_is_an_error_naming_it() {
        let err = run(&experiment(falsely_deterministic), &replicating()).expect_err("moves");
        let text = err.to_string();
        assert!(
            text.contains("claim `Fig. 9 flagged` is marked deterministic but gives"),
            "{text}"
        );
        assert!(
            text.contains("seeds [1001, 1002, 1003, 1004, 1005]"),
            "{text}"
        );
    }

    #[test]
    fn claims_that_do_not_pair_up_are_an_error_naming_the_experiment() {
        let err = run(&experiment(uneven), &replicating()).expect_err("does not pair");
        let text = err.to_string();
        assert!(text.contains("test/replicate"), "{text}");
        assert!(
            text.contains("gave 1 claims where the run's own gave 2"),
            "{text}"
        );
    }
}
