#!/usr/bin/env bash
# Builds validate.cc (the ns-3 side of `concord validate`) against the ns3 wheel, like
# build.sh builds dumbbell.cc. Usage: bench/ns3/build-validate.sh [VENV]
# (default VENV: ../ns3-venv beside the repository, or $NS3_VENV). Output: bench/ns3/build/validate.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
SRC="$here/validate.cc" OUT="$here/build/validate" "$here/build.sh" "$@" >/dev/null
echo "built $here/build/validate"
