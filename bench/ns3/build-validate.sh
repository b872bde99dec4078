#!/usr/bin/env bash
# Builds validate.cc (the ns-3 side of `concord validate`) against the ns3 wheel, like
# build.sh builds dumbbell.cc. Usage: bench/ns3/build-validate.sh [VENV]
# (default VENV: ../ns3-venv beside the repository, or $NS3_VENV). Output: bench/ns3/build/validate
# and bench/ns3/build/validate.identity, the build's name in the ns-3 cache (bench/ns3/cache):
# the wheel's version and the SHA-256 of validate.cc.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
SRC="$here/validate.cc" OUT="$here/build/validate" "$here/build.sh" "$@" >/dev/null
venv="${1:-${NS3_VENV:-$(cd "$here/../.." && pwd)/../ns3-venv}}"
version="$("$venv/bin/python" -c 'import importlib.metadata as m; print(m.version("ns3"))')"
source_sha="$(sha256sum "$here/validate.cc" | cut -d' ' -f1)"
printf 'ns-3 %s\nvalidate.cc sha256 %s\n' "$version" "$source_sha" > "$here/build/validate.identity"
echo "built $here/build/validate (ns-3 $version, validate.cc sha256 $source_sha)"
