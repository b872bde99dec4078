#!/usr/bin/env bash
# Runs the ns-3 dumbbell benchmark 3 times and prints each run's JSON and the medians.
#
#   bench/ns3/run.sh                  # C++ program (built against the ns3 wheel), the default
#   FRONTEND=python bench/ns3/run.sh  # the Python-bindings program
#   FRONTEND=both bench/ns3/run.sh    # both, one after the other
#   RUNS=5 bench/ns3/run.sh -- --duration=10   # arguments after -- go to the program
#
# The venv is NS3_VENV, by default ns3-venv beside the repository's directory. It is created
# with `python3 -m venv` and `pip install ns3==3.44.post0` if missing. On a fresh Debian
# machine, run as root: missing python3-venv, python3-dev or g++ are installed with apt-get
# (pip builds part of cppyy from source, which needs the Python headers and g++).
# Not part of the test suite.
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
venv="${NS3_VENV:-$(dirname "$repo")/ns3-venv}"
frontend="${FRONTEND:-c++}"
runs="${RUNS:-3}"
ns3_pin="ns3==3.44.post0"
if [ "${1:-}" = "--" ]; then shift; fi

log() { echo "run.sh: $*" >&2; }

# ns3 3.44.post0 finds its own libraries by path and drops every path containing "test"
# (meant for ns-3's test libraries), so a venv whose path contains "test" loads nothing.
case "$venv" in
    *test*) log "NS3_VENV=$venv: the ns3 package cannot load from a path containing 'test'"; exit 1 ;;
esac

need_apt=()
python3 -c 'import venv, ensurepip' 2>/dev/null || need_apt+=(python3-venv)
python3 -c 'import os, sysconfig; raise SystemExit(not os.path.exists(os.path.join(sysconfig.get_paths()["include"], "Python.h")))' \
    || need_apt+=(python3-dev)
command -v g++ >/dev/null || need_apt+=(g++)
if [ "${#need_apt[@]}" -gt 0 ]; then
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
        log "installing ${need_apt[*]} with apt-get"
        apt-get update -qq
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need_apt[@]}" >&2
    else
        log "missing ${need_apt[*]}: install them (Debian: apt-get install ${need_apt[*]})"
        exit 1
    fi
fi

if ! "$venv/bin/python" -c 'import importlib.metadata as m; raise SystemExit(m.version("ns3") != "3.44.post0")' 2>/dev/null; then
    log "creating $venv with $ns3_pin (a few minutes: cppyy is partly built from source)"
    python3 -m venv "$venv"
    "$venv/bin/pip" install -q --upgrade pip >&2
    "$venv/bin/pip" install -q "$ns3_pin" >&2
fi

if [ "$frontend" = "c++" ] || [ "$frontend" = "both" ]; then
    "$here/build.sh" "$venv" >&2
fi

now() { date +%s.%N; }

run_frontend() {
    local fe="$1"; shift
    local out="$here/build/results-$fe.jsonl"
    mkdir -p "$here/build"
    : >"$out"
    for i in $(seq 1 "$runs"); do
        local t0 t1 json
        t0="$(now)"
        if [ "$fe" = "c++" ]; then
            json="$("$here/build/dumbbell" "$@")"
        else
            # The bindings print a harmless cppyy warning about static initialisers on stderr.
            json="$("$venv/bin/python" "$here/dumbbell.py" "$@" 2> >(grep -v 'runStaticInitializersOnce' >&2))"
        fi
        t1="$(now)"
        # Add the wall time of the whole process, measured from outside it.
        json="$(python3 -c 'import json, sys; d = json.loads(sys.argv[1]); d["process_wall_s"] = float(sys.argv[3]) - float(sys.argv[2]); print(json.dumps(d))' "$json" "$t0" "$t1")"
        echo "$json" >>"$out"
        echo "== $fe run $i/$runs"
        echo "$json"
    done
    python3 - "$out" "$fe" <<'EOF'
import json, statistics, sys
rows = [json.loads(line) for line in open(sys.argv[1]) if line.strip()]
med = lambda k: statistics.median(r[k] for r in rows)
summary = {
    "frontend": sys.argv[2],
    "runs": len(rows),
    "median_run_wall_s": med("run_wall_s"),
    "median_run_cpu_s": med("run_cpu_s"),
    "median_program_wall_s": med("program_wall_s"),
    "median_process_wall_s": med("process_wall_s"),
    "median_peak_rss_mib": med("peak_rss_mib"),
    "total_goodput_bps": med("total_goodput_bps"),
    "jain_index": med("jain_index"),
    "bottleneck_drops": med("bottleneck_drops"),
    "bottleneck_tx_packets": med("bottleneck_tx_packets"),
    "bottleneck_utilisation": med("bottleneck_utilisation"),
}
print("== %s median of %d" % (sys.argv[2], len(rows)))
print(json.dumps(summary))
EOF
}

case "$frontend" in
    c++) run_frontend c++ "$@" ;;
    python) run_frontend python "$@" ;;
    both) run_frontend c++ "$@"; run_frontend python "$@" ;;
    *) log "FRONTEND must be c++, python or both"; exit 2 ;;
esac
