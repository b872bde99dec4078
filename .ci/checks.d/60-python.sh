# The Python package (python/): build and install the wheel (maturin, the PEP 517 backend), run
# its tests against the installed package and the `concord` binary the test suite built, and
# execute the example notebook. The wheel is built with the `wheel` profile (release without
# LTO), which builds in a fraction of a release build's time.
python_started=$(date +%s)
MATURIN_PEP517_ARGS="--profile wheel" python3 -m pip install -q ./python 2>/dev/null \
  || MATURIN_PEP517_ARGS="--profile wheel" python3 -m pip install -q --break-system-packages ./python
echo "python: wheel installed ($(( $(date +%s) - python_started )) s)"
# The tests include the example notebook's execution (test_notebook.py: its figure's numbers
# against the report's) and `concord reproduce --dask` on a LocalCluster.
CONCORD_BIN="$PWD/target/debug/concord" python3 -m pytest -q -p no:cacheprovider python/sim_tests
echo "python: tests passed ($(( $(date +%s) - python_started )) s)"
echo "python: checks done in $(( $(date +%s) - python_started )) s"
