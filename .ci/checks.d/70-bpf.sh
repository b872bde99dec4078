# concord's controllers on kernel TCP through eBPF: build the datapath (feature `datapath`), lint
# it, and run its tests as root on the namespace test bed. CONCORD_REQUIRE_BPF=1 turns "cannot
# run here" into a failure, so nothing is skipped silently.
bpf_started=$(date +%s)
export CONCORD_REQUIRE_BPF=1
# The delay line is the concord-testbed binary `cargo test --workspace` built (profile test).
[ -x target/debug/concord-testbed ] || cargo build --workspace --profile test --bin concord-testbed
# One feature set for every step below, so that the datapath and concordd --tcp are compiled
# once: `--workspace --features concord-bpf/datapath,concord-net/tcp`. `-p PACKAGE --features F`
# would resolve features for that package alone (tokio without test-util, clap without env,
# serde_json without float_roundtrip) and compile those, concord-net and concord-sim again; a
# second feature set (the datapath alone, then concord-net's `tcp`) would compile concord-net
# and its dependents twice. The lint covers the whole workspace with both features on, a
# superset of concord-bpf's and concord-net's.
bpf_cargo=(--workspace --features concord-bpf/datapath,concord-net/tcp)
cargo clippy "${bpf_cargo[@]}" --all-targets -- -D warnings
# One build (profile test) serves every run below. The runs name their targets so that cargo
# resolves features as this build did and finds everything built (cargo's unit graph, `cargo test
# --unit-graph -Z unstable-options`, lists the same units): `--test kernel_tcp` alone would resolve
# concord-bpf's tests on their own (the host side of libbpf-cargo with other dependencies) and
# compile concord-bpf, concord-net and the agent again; `--lib --test kernel_tcp` resolves as the
# whole build. concordd with `--tcp`, next to the agent, for the test bed's TCP/CM-through-the-
# daemon tests, comes from `--test status_pages`, an integration test of concord-net: cargo builds
# a package's binaries for its integration tests, in the tests' resolution (`cargo build --bin
# concordd` resolved without the dev-dependencies and compiled tokio, concord-net and concord-bpf
# a second time).
bpf_build_log=$(mktemp)
cargo test "${bpf_cargo[@]}" --lib --bins --test agent_bench --test status_pages --test kernel_tcp \
  --no-run 2>&1 | tee "$bpf_build_log"
kernel_exe=$(sed -n 's/^ *Executable tests\/kernel_tcp\.rs (\(.*\))$/\1/p' "$bpf_build_log")
rm -f "$bpf_build_log"
[ -x "$kernel_exe" ] || { echo "70-bpf: the kernel TCP test bed's binary is not in cargo's output"; exit 1; }
# The unit tests and the agent bench gate as they are; `--lib --bins` take every member's unit
# tests (concord-net's with its `kernel_tcp` module), which the suite ran without the features:
# a few seconds more. (`--exclude` of the members the features leave alone would not save their
# compilation: without them clap, syn and smallvec resolve other features and all is built again.)
cargo test "${bpf_cargo[@]}" --lib --bins --test agent_bench -- --test-threads=1
# The test bed's tests by name (the binary lists them; the ignored ones are run by hand),
# run through `--lib --test kernel_tcp` with `--exact`: the members' unit test binaries match none.
# `--show-output` prints every test's figures (the twin's means and intervals among them), passed or not.
kernel_run=(--lib --test kernel_tcp -- --test-threads=1 --exact --show-output)
mapfile -t kernel_tests < <(comm -23 \
  <("$kernel_exe" --list --format terse | sed -n 's/: test$//p' | sort) \
  <("$kernel_exe" --list --format terse --ignored | sed -n 's/: test$//p' | sort))
[ ${#kernel_tests[@]} -gt 0 ] || { echo "70-bpf: the kernel TCP test bed lists no test"; exit 1; }
echo "kernel TCP test bed: ${#kernel_tests[@]} tests"
# The test bed tests measure real kernel TCP through a user-space delay line on a shared 2-core
# machine: like the CM daemon's acceptance (50-testbed-cm.sh) each gets one more run if the first
# falls short. The macroflow beside a reno flow from another host (bar 0.5x-2x) gates with the
# others. A test that falls short of its bar on the loaded machine gets one more run, alone. The
# simulator twin gates too since it compares means (each flow's mean over four test bed runs within
# 15% of its mean over 30 start phases of the simulator; docs/ebpf.md, The simulator twin): 4 of 4
# runs held, and resampling 33 test bed runs puts a miss at about 1 run in 10-14, so like the
# macroflow test it relies on the one more run. The twin's four test bed runs go two at a time on two
# beds alike (CONCORD_BPF_BED_PREFIX and the same with "b"), each run's two flows on a bottleneck of
# their own (docs/ebpf.md, Two test beds at a time): about 45 s where one after the other took
# 85-99 s. The start-up test keeps its six transfers one at a time: side by side changed its figures.
kernel_log=$(mktemp)
if ! cargo test "${bpf_cargo[@]}" "${kernel_run[@]}" "${kernel_tests[@]}" 2>&1 | tee "$kernel_log"; then
  # The names from libtest's closing list of failures: a test's own line can carry the agent's
  # or concordd's stderr between its name and FAILED.
  failed=$(sed -n '/^failures:$/,$ s/^    \([a-z0-9_]*\)$/\1/p' "$kernel_log" \
    | grep -Fxf <(printf '%s\n' "${kernel_tests[@]}") | sort -u || true)
  [ -n "$failed" ] || { echo "kernel TCP test bed: the suite failed before a test did"; exit 1; }
  for t in $failed; do
    echo "kernel TCP test bed $t: one more run"
    cargo test "${bpf_cargo[@]}" "${kernel_run[@]}" "$t"
  done
fi
rm -f "$kernel_log"
unset CONCORD_REQUIRE_BPF bpf_cargo kernel_exe kernel_run kernel_tests
echo "== check 70-bpf took $(( $(date +%s) - bpf_started )) s"
