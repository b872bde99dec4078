# The papers' claims in the quick setting (docs/reproducing.md):
# 1. every verdict matches the committed expectations: a verdict that changes, in either
#    direction, fails here until it is reviewed and the file regenerated with
#    `concord reproduce --quick --jobs 2 --write-expected crates/repro/expectations/quick.json`;
# 2. every claim reproduced there is still reproduced on fresh seeds (seed base 1001), so that
#    no "reproduced" hangs on the seed set.
reproduce_started=$(date +%s)
cargo build --release -p concord
target/release/concord reproduce --quick --jobs 2 --out target/ci-reproduce \
  --check crates/repro/expectations/quick.json
echo "== reproduce --quick --check: $(( $(date +%s) - reproduce_started )) s"
target/release/concord reproduce --quick --jobs 2 --seed-base 1001 --out target/ci-reproduce-1001 \
  --check-reproduced crates/repro/expectations/quick.json
echo "== reproduce --quick --seed-base 1001 --check-reproduced: $(( $(date +%s) - reproduce_started )) s"
