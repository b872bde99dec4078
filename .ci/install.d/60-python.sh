# The Python package's build and test tools (python/): maturin builds the extension, pandas and
# pyarrow read the tables, dask.distributed runs the sweep tests' LocalCluster, nbclient and
# ipykernel execute the example notebook, matplotlib draws its figure. Pinned.
python_pins=(
  "maturin==1.16.0" "pandas==3.1.1" "pyarrow==26.0.1" "dask[distributed]==2026.8.0"
  "nbclient==0.11.0" "nbformat==5.11.1" "ipykernel==7.4.0" "matplotlib==3.11.2" "pytest==9.2.0"
)
python3 -m pip --version >/dev/null 2>&1 || {
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3-pip >/dev/null
}
# A distribution's own Python refuses pip installs outside a venv (PEP 668); CI owns the machine.
python3 -m pip install -q "${python_pins[@]}" 2>/dev/null \
  || python3 -m pip install -q --break-system-packages "${python_pins[@]}"
