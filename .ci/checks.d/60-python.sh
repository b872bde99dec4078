# The Python package (python/): build and install the wheel (maturin, the PEP 517 backend), run
# its tests against the installed package and the `concord` binary the test suite built, and
# execute the example notebook. The wheel is built with the `test` profile (optimised, the
# profile `cargo test --workspace` just built), so its dependencies are the ones already compiled
# and only concord-py (with its `python` feature) and PyO3 are built here. maturin is the one
# install.d/60-python.sh pinned: no isolated build environment to create and fill.
python_started=$(date +%s)
python_wheel_args=(-q --no-build-isolation ./python)
MATURIN_PEP517_ARGS="--profile test" python3 -m pip install "${python_wheel_args[@]}" 2>/dev/null \
  || MATURIN_PEP517_ARGS="--profile test" python3 -m pip install --break-system-packages "${python_wheel_args[@]}"
echo "python: wheel installed ($(( $(date +%s) - python_started )) s)"
# The tests include the example notebook's execution (test_notebook.py: its figure's numbers
# against the report's) and `concord reproduce --dask` on a LocalCluster.
CONCORD_BIN="$PWD/target/debug/concord" python3 -m pytest -q -p no:cacheprovider python/sim_tests
echo "python: tests passed ($(( $(date +%s) - python_started )) s)"
echo "python: checks done in $(( $(date +%s) - python_started )) s"
