# The papers' claims in the quick setting (docs/reproducing.md): every verdict, on the default
# seeds and on seeds 1001.., must match the committed expectations. A verdict that changes, in
# either direction, fails here until it is reviewed and the files are regenerated with
#   concord reproduce --quick --jobs 2 --write-expected crates/repro/expectations/quick.json
#   concord reproduce --quick --jobs 2 --seed-base 1001 --write-expected crates/repro/expectations/quick-seed-base-1001.json
# (crates/repro/tests/expectations.rs then checks that what is reproduced on one seed set is
# reproduced on the other, but for the claims it lists.)
reproduce_started=$(date +%s)
# The concord binary `cargo test --workspace` built (profile test: optimised, with overflow checks)
# gives the release binary's results byte for byte and saves CI a release build (about 3 minutes).
[ -x target/debug/concord ] || cargo build -q --workspace --profile test --bin concord
target/debug/concord reproduce --quick --jobs 2 --out target/ci-reproduce \
  --check crates/repro/expectations/quick.json
echo "== reproduce --quick --check: $(( $(date +%s) - reproduce_started )) s"
target/debug/concord reproduce --quick --jobs 2 --seed-base 1001 --out target/ci-reproduce-1001 \
  --check crates/repro/expectations/quick-seed-base-1001.json
echo "== reproduce --quick --seed-base 1001 --check: $(( $(date +%s) - reproduce_started )) s"
# Every claim that draws from the seed takes more than one value over its seeds (docs/seed-audit.md),
# checked on the default run's results.json rather than by running the quick reproduction again.
CONCORD_QUICK_RESULTS="$PWD/target/ci-reproduce/results.json" cargo test -q --workspace --test seed_audit \
  -- --ignored --exact every_claim_that_draws_from_the_seed_takes_more_than_one_value_over_its_seeds
