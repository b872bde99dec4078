# The papers' claims in the quick setting (docs/reproducing.md): every verdict, on the default
# seeds and on seeds 1001.., must match the committed expectations. A verdict that changes, in
# either direction, fails CI until it is reviewed and the files are regenerated with
#   concord reproduce --quick --jobs 2 --write-expected crates/repro/expectations/quick.json
#   concord reproduce --quick --jobs 2 --seed-base 1001 --write-expected crates/repro/expectations/quick-seed-base-1001.json
# (crates/repro/tests/expectations.rs then checks that what is reproduced on one seed set is
# reproduced on the other, but for the claims it lists.)
#
# The two runs (about 200 s of both cores) start here in the background, under SCHED_IDLE
# (`chrt --idle 0`), and .ci/checks.d/95-reproduce.sh waits for them, prints their output and
# fails CI if either failed. In between, 70-bpf.sh compiles and then runs the kernel TCP test bed,
# which is real time (its delay line under SCHED_FIFO, iperf3 at 20-40 Mbit/s) and leaves the
# cores mostly idle for about 5 minutes. A SCHED_IDLE task runs only when no other task wants the
# CPU and is preempted as soon as one wakes, so the compilation and the test bed see the machine
# as before, and the simulation (deterministic: same seeds, same bytes) fills the idle time.
# The concord binary `cargo test --workspace` built (profile test: optimised, with overflow
# checks) gives the release binary's results byte for byte and saves CI a release build.
reproduce_started=$(date +%s)
[ -x target/debug/concord ] || cargo build -q --workspace --profile test --bin concord
reproduce_log=target/ci-reproduce.log
# setsid: its own process group, so that the EXIT trap below ends the runs and nothing else.
setsid -w chrt --idle 0 bash -c '
  set -euo pipefail
  started=$(date +%s)
  target/debug/concord reproduce --quick --jobs 2 --out target/ci-reproduce \
    --check crates/repro/expectations/quick.json
  echo "== reproduce --quick --check: $(( $(date +%s) - started )) s"
  target/debug/concord reproduce --quick --jobs 2 --seed-base 1001 --out target/ci-reproduce-1001 \
    --check crates/repro/expectations/quick-seed-base-1001.json
  echo "== reproduce --quick --seed-base 1001 --check: $(( $(date +%s) - started )) s"
' >"$reproduce_log" 2>&1 &
reproduce_pid=$!
# A step that fails before 95-reproduce.sh ends CI: take the background runs with it.
trap 'kill -- "-$reproduce_pid" 2>/dev/null || true' EXIT
echo "reproduce --quick --check: running in the background (pid $reproduce_pid, SCHED_IDLE), output in $reproduce_log"
