# Fuzzing, bounded: the scenario loader (and its regression corpus) and every wire codec,
# including the daemon's request decoder, each target for CONCORD_FUZZ_SECS seconds of
# mutants (tests/fuzz/mutate.rs). The seed changes every day and is printed, so a failure
# can be replayed with CONCORD_FUZZ_SEED=<seed> cargo test --test <name>.
# Budget: under 2 minutes on 2 cores. The test binaries are the ones `cargo test --workspace` built:
# `--workspace --test NAME` keeps the workspace's feature set, where `-p PACKAGE` would resolve
# features for that package alone and rebuild it and its dependencies.
fuzz_seed=$(date -u +%Y%m%d)
echo "fuzz: CONCORD_FUZZ_SEED=${fuzz_seed}, ${CONCORD_FUZZ_SECS:-6} s per target"
CONCORD_FUZZ_SECS=${CONCORD_FUZZ_SECS:-6} CONCORD_FUZZ_SEED="${fuzz_seed}" timeout 170 \
  cargo test -q --workspace --test fuzz_loader -- --nocapture
CONCORD_FUZZ_SECS=${CONCORD_FUZZ_SECS:-6} CONCORD_FUZZ_SEED="${fuzz_seed}" timeout 170 \
  cargo test -q --workspace --test fuzz_codecs -- --nocapture
