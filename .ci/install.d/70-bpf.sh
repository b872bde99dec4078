# The eBPF datapath of crates/bpf (feature `datapath`): clang and llvm compile the BPF C, libelf
# and zlib link libbpf, pkg-config finds them, bpftool writes vmlinux.h from the kernel's BTF;
# iperf3 is the application of its test bed tests (.ci/checks.d/70-bpf.sh).
bpf_missing=()
command -v clang >/dev/null 2>&1 || bpf_missing+=(clang)
command -v llvm-strip >/dev/null 2>&1 || bpf_missing+=(llvm)
command -v pkg-config >/dev/null 2>&1 || bpf_missing+=(pkg-config)
command -v bpftool >/dev/null 2>&1 || bpf_missing+=(bpftool)
command -v iperf3 >/dev/null 2>&1 || bpf_missing+=(iperf3)
pkg-config --exists libelf 2>/dev/null || bpf_missing+=(libelf-dev)
pkg-config --exists zlib 2>/dev/null || bpf_missing+=(zlib1g-dev)
if [ ${#bpf_missing[@]} -gt 0 ]; then
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${bpf_missing[@]}" >/dev/null
fi
