# ns-3 3.44 for `concord validate`: PyPI's ns3==3.44.post0 wheel in a venv (it ships ns-3's headers
# and shared libraries; pip builds part of cppyy from source, hence python3-dev and g++), then
# bench/ns3/validate.cc built against it. The venv lives beside the repository (ns3-venv) unless
# NS3_VENV says otherwise; the ns3 package cannot load from a path containing "test".
ns3_started=$(date +%s)
ns3_missing=()
python3 -c 'import venv, ensurepip' 2>/dev/null || ns3_missing+=(python3-venv)
python3 -c 'import os, sysconfig; raise SystemExit(not os.path.exists(os.path.join(sysconfig.get_paths()["include"], "Python.h")))' \
  || ns3_missing+=(python3-dev)
command -v g++ >/dev/null 2>&1 || ns3_missing+=(g++)
if [ ${#ns3_missing[@]} -gt 0 ]; then
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${ns3_missing[@]}" >/dev/null
fi
export NS3_VENV="${NS3_VENV:-$(dirname "$(pwd)")/ns3-venv}"
case "$NS3_VENV" in
  *test*) export NS3_VENV="/opt/concord-ns3-venv" ;;
esac
if ! "$NS3_VENV/bin/python" -c 'import importlib.metadata as m; raise SystemExit(m.version("ns3") != "3.44.post0")' 2>/dev/null; then
  python3 -m venv "$NS3_VENV"
  "$NS3_VENV/bin/pip" install -q --upgrade pip >/dev/null
  "$NS3_VENV/bin/pip" install -q ns3==3.44.post0 >/dev/null
fi
bench/ns3/build-validate.sh "$NS3_VENV"
echo "ns-3 wheel and bench/ns3/validate.cc ready in $(( $(date +%s) - ns3_started )) s"
