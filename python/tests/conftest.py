"""Starts a concordd for the tests: the binary named by $CONCORDD, else the one cargo built."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Iterator, Optional

import pytest

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE.parent / "examples"))


def find_concordd() -> Optional[Path]:
    env = os.environ.get("CONCORDD")
    if env:
        return Path(env)
    root = HERE.parent.parent
    targets = [Path(os.environ["CARGO_TARGET_DIR"])] if "CARGO_TARGET_DIR" in os.environ else []
    targets.append(root / "target")
    for t in targets:
        for profile in ("debug", "release"):
            exe = t / profile / "concordd"
            if exe.is_file():
                return exe
    return None


@pytest.fixture
def daemon() -> Iterator[Path]:
    """The socket of a fresh concordd, killed after the test."""
    exe = find_concordd()
    if exe is None:
        pytest.skip("concordd not built: run cargo build -p concord-net or set CONCORDD")
    tmp = Path(tempfile.mkdtemp(prefix="concord-py-"))
    os.chmod(tmp, 0o700)
    sock = tmp / "cm.sock"
    proc = subprocess.Popen(
        [str(exe), "--socket", str(sock), "--initial-rtt-ms", "10"],
        env={**os.environ, "RUST_LOG": "warn"}, stdin=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 5
        while True:
            try:
                with socket.socket(socket.AF_UNIX) as s:
                    s.connect(str(sock))
                break
            except OSError:
                if time.monotonic() > deadline or proc.poll() is not None:
                    raise RuntimeError("concordd did not start")
                time.sleep(0.01)
        yield sock
    finally:
        proc.kill()
        proc.wait(timeout=5)
        shutil.rmtree(tmp, ignore_errors=True)
