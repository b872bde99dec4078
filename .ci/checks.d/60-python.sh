# The Python package (python/): build and install the wheel (maturin, the PEP 517 backend), run
# its tests against the installed package and the `concord` binary the test suite built, and
# execute the example notebook.
# The wheel is built with the settings of the `test` profile that `cargo test --workspace` just
# built (optimised, .ci/run's line tables), so that most of its dependencies are found built.
# maturin runs `cargo rustc`, for which `--profile test` means "build the test harness", so the
# wheel asks for `dev` with the test profile's settings: cargo writes both to target/debug and
# keys an artifact by its settings, not its profile's name. What remains to compile is PyO3 and
# concord-py: concord-py names the features the rest of the workspace turns on in its shared
# dependencies (crates/py/Cargo.toml), so that built alone it resolves them as the workspace does.
# maturin is the one install.d/60-python.sh pinned: no isolated build environment to fill.
python_started=$(date +%s)
python_wheel_env=(
  CARGO_PROFILE_DEV_OPT_LEVEL="$(python3 -c 'import tomllib; print(tomllib.load(open("Cargo.toml", "rb"))["profile"]["test"]["opt-level"])')"
  CARGO_PROFILE_DEV_DEBUG="${CARGO_PROFILE_TEST_DEBUG:-true}"
  MATURIN_PEP517_ARGS="--profile dev"
)
python_wheel_args=(-q --no-build-isolation ./python)
env "${python_wheel_env[@]}" python3 -m pip install "${python_wheel_args[@]}" 2>/dev/null \
  || env "${python_wheel_env[@]}" python3 -m pip install --break-system-packages "${python_wheel_args[@]}"
echo "python: wheel installed ($(( $(date +%s) - python_started )) s)"
# The tests include the example notebook's execution (test_notebook.py: its figure's numbers
# against the report's) and `concord reproduce --dask` on a LocalCluster.
CONCORD_BIN="$PWD/target/debug/concord" python3 -m pytest -q -p no:cacheprovider python/sim_tests
echo "python: tests passed ($(( $(date +%s) - python_started )) s)"
echo "python: checks done in $(( $(date +%s) - python_started )) s"
