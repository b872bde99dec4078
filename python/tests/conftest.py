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


def _spawn(exe: Path, sock: Path) -> "subprocess.Popen[bytes]":
    """concordd on `sock`, once it listens."""
    proc = subprocess.Popen(
        [str(exe), "--socket", str(sock), "--initial-rtt-ms", "10"],
        env={**os.environ, "RUST_LOG": "warn"}, stdin=subprocess.DEVNULL)
    deadline = time.monotonic() + 5
    while True:
        try:
            with socket.socket(socket.AF_UNIX) as s:
                s.connect(str(sock))
            return proc
        except OSError:
            if time.monotonic() > deadline or proc.poll() is not None:
                proc.kill()
                proc.wait(timeout=5)
                raise RuntimeError("concordd did not start")
            time.sleep(0.01)


class Restartable:
    """A concordd that a test can kill and start again on the same socket."""

    def __init__(self, exe: Path, sock: Path) -> None:
        self.exe, self.sock = exe, sock
        self.proc = _spawn(exe, sock)

    def restart(self) -> None:
        self.stop()
        self.proc = _spawn(self.exe, self.sock)

    def stop(self) -> None:
        self.proc.kill()
        self.proc.wait(timeout=5)


@pytest.fixture
def restartable_daemon() -> Iterator[Restartable]:
    """A fresh concordd that the test may restart, killed after the test."""
    exe = find_concordd()
    if exe is None:
        pytest.skip("concordd not built: run cargo build -p concord-net or set CONCORDD")
    tmp = Path(tempfile.mkdtemp(prefix="concord-py-"))
    os.chmod(tmp, 0o700)
    d = Restartable(exe, tmp / "cm.sock")
    try:
        yield d
    finally:
        d.stop()
        shutil.rmtree(tmp, ignore_errors=True)


@pytest.fixture
def daemon(restartable_daemon: Restartable) -> Iterator[Path]:
    """The socket of a fresh concordd, killed after the test."""
    yield restartable_daemon.sock
