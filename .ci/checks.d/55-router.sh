# concord-router on the namespace test bed (crates/router/tests/gcca_fig4.rs, gcca_udp.rs,
# eca_share.rs, cp_aggregate.rs): GCCA's Fig. 4 with kernel TCP moving 16 MiB through two concord
# routers at the paper's rates (about a minute), TCP beside UDP at 150% of the bottleneck with
# GCCA and with plain RED (30 s each), ECA's three kernel TCP flows weighted 1:2:3 through two
# ECA routers and over DropTail (30 s each), and CP at Table I's setting (180 s, 50 ms of
# propagation delay each way at a 15 Mbit/s RED bottleneck): 4 UDP flows behind a real
# aggregation point with BFLD, m = 4, against 4 TFRC flows (one flowshare: below). The shorter CP setting without the delay (40 s) is a deviation run by hand only
# (docs/router.md).
# Runs are long and timing-sensitive on a shared 2-core machine, so a run that falls short of its
# bar gets one more, as the CM test bed's do.
# `--workspace --test NAME` runs the binary `cargo test --workspace` built (no per-package rebuild).
router_check() {
  local test_file=$1 t=$2
  shift 2
  cargo test --workspace --test "$test_file" -- --ignored --exact "$t" "$@" \
    || { echo "router test bed $t: one more run"; cargo test --workspace --test "$test_file" -- --ignored --exact "$t" "$@"; }
}
router_check gcca_fig4 gcca_moves_16_mib_through_two_routers_without_a_drop_and_gccp_is_on_the_wire
router_check gcca_udp with_gcca_tcp_keeps_at_least_40_percent_beside_udp_at_150_percent
router_check gcca_udp with_plain_red_tcp_keeps_under_10_percent_beside_udp_at_150_percent
router_check eca_share with_eca_flows_weighted_1_2_3_share_in_proportion_and_the_bottleneck_queue_stays_short
router_check eca_share over_droptail_the_same_flows_queue_over_50_ms_at_the_bottleneck
# CP prints every figure of each run (ratio, each flow against its twin, p, X, R, drops).
# One flowshare held both bars in 9 of 12 runs on a loaded machine, then in 2 of 4 traced runs,
# in 7 of 7 after a fix of the AP's loss reports and in 8 of 10 more (misses 0.764 and 0.752); its
# ratio follows the loss history each flow's TFRC slow start leaves (docs/router.md), which leans
# to the aggregate, so it is not reliable. It is run by hand
# (`cargo test --workspace --test cp_aggregate -- --ignored --nocapture
# at_the_papers_setting_one_flowshare`), not here: its 3 minutes would take CI past its half hour
# and nothing as large can be cut here without changing what a test measures. BFLD m = 4 held in
# 11 of 12 and gates.
router_check cp_aggregate at_the_papers_setting_bfld_m_4_takes_4_flowshares_and_matches_its_twin --nocapture
