"""The simulator's Python API, tested against the installed `concord` package (pip install
./python) and the `concord` command cargo built ($CONCORD_BIN, else target/{release,debug}).

Run from the repository root, not from python/ (where the source tree, without the compiled
extension, would shadow the installed package): python3 -m pytest python/sim_tests."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path
from typing import Optional

import pytest

ROOT = Path(__file__).resolve().parents[2]


def find_concord() -> Optional[Path]:
    env = os.environ.get("CONCORD_BIN")
    if env:
        return Path(env)
    targets = [Path(os.environ["CARGO_TARGET_DIR"])] if "CARGO_TARGET_DIR" in os.environ else []
    targets.append(ROOT / "target")
    built = [t / profile / "concord" for t in targets for profile in ("release", "debug")]
    built = [exe for exe in built if exe.is_file()]
    if built:
        return max(built, key=lambda exe: exe.stat().st_mtime)  # the most recently built
    found = shutil.which("concord")
    return Path(found) if found else None


@pytest.fixture(scope="session")
def concord_bin() -> Path:
    exe = find_concord()
    if exe is None:
        pytest.fail("no `concord` binary: cargo build -p concord, or set CONCORD_BIN")
    return exe


@pytest.fixture(scope="session")
def root() -> Path:
    return ROOT


# The papers of the local reproduction the tests compare with: the baseline paper, three
# experiments (one Dask task each on two workers), seconds in release.
PAPERS = ["--paper", "baseline"]


@pytest.fixture(scope="session")
def local_report(root, concord_bin, tmp_path_factory) -> Path:
    """`concord reproduce --quick --paper baseline` on local threads: the report directory."""
    out = tmp_path_factory.mktemp("local") / "report"
    r = subprocess.run([str(concord_bin), "reproduce", "--quick", *PAPERS, "--out", str(out),
                        "--jobs", "2"], cwd=root, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    return out
