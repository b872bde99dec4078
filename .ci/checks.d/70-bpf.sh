# concord's controllers on kernel TCP through eBPF: build the datapath (feature `datapath`), lint
# it, and run its tests as root on the namespace test bed. CONCORD_REQUIRE_BPF=1 turns "cannot
# run here" into a failure, so nothing is skipped silently.
bpf_started=$(date +%s)
export CONCORD_REQUIRE_BPF=1
cargo build -p concord-net --bin concord-testbed
cargo clippy -p concord-bpf --features datapath --all-targets -- -D warnings
cargo test -p concord-bpf --features datapath -- --test-threads=1
unset CONCORD_REQUIRE_BPF
echo "== check 70-bpf took $(( $(date +%s) - bpf_started )) s"
