# concord against ns-3 on the --quick subset of the cross-validation grid (ns-3 installed and
# bench/ns3/validate.cc built by install.d/40-ns3.sh). A case outside its targets is a finding,
# reported in the table with its measured cause, not a CI failure; a run that fails (ns-3 or
# concord erroring, unreadable output) fails CI. The concord binary is the one the test suite
# built (test profile, optimised), so nothing is compiled again.
validate_started=$(date +%s)
[ -x target/debug/concord ] || cargo build -q --workspace --profile test --bin concord
# A cache of its own: CI runs ns-3 itself rather than read the committed bench/ns3/cache.
target/debug/concord validate --quick --ns3 bench/ns3/build/validate --out target/validate-quick --ns3-cache target/validate-quick/ns3-cache
echo "concord validate --quick done in $(( $(date +%s) - validate_started )) s"
