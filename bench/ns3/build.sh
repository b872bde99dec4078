#!/usr/bin/env bash
# Builds dumbbell.cc against the headers and shared libraries shipped in the `ns3` wheel.
# Usage: bench/ns3/build.sh [VENV]   (default VENV: ../ns3-venv beside the repository,
#        or $NS3_VENV). Output: bench/ns3/build/dumbbell (git-ignored).
#        SRC=file.cc OUT=path build another source the same way.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
venv="${1:-${NS3_VENV:-$(cd "$here/../.." && pwd)/../ns3-venv}}"
site="$("$venv/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')"
ns3="$site/ns3"
if [ ! -f "$ns3/include/ns3/core-module.h" ] || ! ls "$ns3"/lib64/libns3.*-core.so >/dev/null 2>&1; then
    echo "build.sh: no ns-3 headers/libraries under $ns3 (is ns3==3.44.post0 installed in $venv?)" >&2
    exit 1
fi
ver="$(basename "$(ls "$ns3"/lib64/libns3.*-core.so | head -n1)" | sed -E 's/^libns3\.([0-9.]+)-core\.so$/\1/')"
libs=""
for m in core network internet point-to-point applications traffic-control stats bridge mobility; do
    libs="$libs -lns3.$ver-$m"
done
mkdir -p "$here/build"
# The same preprocessor definitions the wheel's libraries were built with (see its
# lib64/cmake/ns3/ns3Targets.cmake): release profile, with logging and asserts compiled in.
g++ -std=c++20 -O2 -DNDEBUG \
    -D__LINUX__ -DNS3_BUILD_PROFILE_RELEASE -DNS3_LOG_ENABLE -DNS3_ASSERT_ENABLE \
    -I"$ns3/include" \
    -o "${OUT:-$here/build/dumbbell}" "${SRC:-$here/dumbbell.cc}" \
    -L"$ns3/lib64" -Wl,-rpath,"$ns3/lib64" -Wl,--no-as-needed $libs -Wl,--as-needed -lpthread
echo "built $here/build/dumbbell (libns3.$ver-*.so from $ns3)"
