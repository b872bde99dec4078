#!/usr/bin/env bash
# Builds concord with profile-guided optimisation (PGO): an instrumented build runs a training
# workload, LLVM merges the counts it wrote, and the release build is compiled again with them,
# so that the compiler lays out and inlines the hot paths by measured branch and call counts.
#
#   bench/pgo.sh            # -> target/pgo/release/concord
#   JOBS=1 bench/pgo.sh     # the training run on one thread (default: 2)
#
# The training workload is `concord reproduce --quick` (every paper experiment at its quick
# setting: TCP, TFRC, the CM, CP, ECA and GCCA scenarios), not the `concord bench` scenarios
# the speed figures are measured on. The outputs of a PGO build are the same bytes as those of
# the plain release build: PGO changes the machine code's layout, never its arithmetic.
#
# Needs llvm-profdata of the LLVM that rustc is built on: the `llvm-tools` rustup component
# (installed here if missing), or LLVM_PROFDATA=/path/to/llvm-profdata. About 10 minutes on two
# cores (two release builds with one LTO unit, and the training run).
# Not part of the test suite.
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$here/.." && pwd)"
cd "$repo"

log() { echo "pgo.sh: $*" >&2; }

if [ "$#" -gt 0 ]; then
    log "takes no arguments (got: $*); the output is target/pgo/release/concord, JOBS=N sets the training's --jobs"
    exit 2
fi
case "${JOBS:-2}" in
    ''|*[!0-9]*|0) log "JOBS=${JOBS} is not a positive whole number of threads for the training run (e.g. JOBS=2)"; exit 2 ;;
esac

profdata="${LLVM_PROFDATA:-}"
if [ -z "$profdata" ]; then
    sysroot="$(rustc --print sysroot)"
    host="$(rustc -vV | sed -n 's/^host: //p')"
    profdata="$sysroot/lib/rustlib/$host/bin/llvm-profdata"
    if [ ! -x "$profdata" ]; then
        if ! command -v rustup >/dev/null; then
            log "no llvm-profdata at $profdata and no rustup to install it: set LLVM_PROFDATA to the llvm-profdata of rustc's LLVM ($(rustc -vV | sed -n 's/^LLVM version: //p'))"
            exit 1
        fi
        log "installing the llvm-tools rustup component (for llvm-profdata)"
        rustup component add llvm-tools >&2
    fi
fi
if [ ! -x "$profdata" ]; then
    log "llvm-profdata not found at $profdata: set LLVM_PROFDATA to the llvm-profdata of rustc's LLVM"
    exit 1
fi

work="$repo/target/pgo"
profiles="$work/profiles"
rm -rf "$profiles" "$work/training"
mkdir -p "$profiles"

log "1/4 instrumented build (target/pgo-generate)"
RUSTFLAGS="-Cprofile-generate=$profiles" \
    cargo build --release -p concord --target-dir "$repo/target/pgo-generate" >&2

log "2/4 training: concord reproduce --quick"
"$repo/target/pgo-generate/release/concord" reproduce --quick --jobs "${JOBS:-2}" \
    --out "$work/training" >/dev/null

log "3/4 merging the profiles"
"$profdata" merge -o "$work/merged.profdata" "$profiles"

log "4/4 optimised build (target/pgo)"
RUSTFLAGS="-Cprofile-use=$work/merged.profdata" \
    cargo build --release -p concord --target-dir "$work" >&2

echo "built $work/release/concord"
