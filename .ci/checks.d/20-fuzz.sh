# Fuzzing, bounded: the scenario loader (and its regression corpus) and every wire codec,
# including the daemon's request decoder, each target for CONCORD_FUZZ_SECS seconds of
# mutants (tests/fuzz/mutate.rs). The seed changes every day and is printed, so a failure
# can be replayed with CONCORD_FUZZ_SEED=<seed> cargo test --test <name>.
# Budget: under 3 minutes on 2 cores (the test binaries are built by `cargo test --workspace`).
fuzz_seed=$(date -u +%Y%m%d)
echo "fuzz: CONCORD_FUZZ_SEED=${fuzz_seed}, 10 s per target"
CONCORD_FUZZ_SECS=10 CONCORD_FUZZ_SEED="${fuzz_seed}" timeout 170 \
  cargo test -q -p concord-sim --test fuzz_loader -- --nocapture
CONCORD_FUZZ_SECS=10 CONCORD_FUZZ_SEED="${fuzz_seed}" timeout 170 \
  cargo test -q -p concord-net --test fuzz_codecs -- --nocapture
