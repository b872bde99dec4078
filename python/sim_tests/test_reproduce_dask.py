"""concord reproduce --dask: the experiments run as Dask tasks give the local run's report."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import PAPERS  # the local run's papers (conftest.local_report)


def files(d: Path):
    return sorted(p.relative_to(d) for p in d.rglob("*") if p.is_file())


def reproduce(concord_bin, root, out, *extra, env=None):
    return subprocess.run([str(concord_bin), "reproduce", "--quick", *PAPERS, "--out", str(out),
                           *extra], cwd=root, capture_output=True, text=True,
                          env={**os.environ, "CONCORD_PYTHON": sys.executable, **(env or {})})


def test_the_quick_baseline_on_a_local_cluster_gives_the_local_report_byte_for_byte(
        root, concord_bin, local_report, tmp_path):
    distributed = pytest.importorskip("distributed")
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None) as cluster, \
            distributed.Client(cluster) as client:
        assert len(client.scheduler_info()["workers"]) == 2
        out = tmp_path / "report"
        r = reproduce(concord_bin, root, out, "--dask", cluster.scheduler_address)
        assert r.returncode == 0, r.stderr
        assert f"on the Dask cluster at {cluster.scheduler_address}" in r.stderr
        # The experiments ran on the workers: their tasks loaded the extension there.
        ran = client.run(lambda: "concord._concord" in sys.modules)
        assert any(ran.values()), ran
    local = (local_report / "results.json").read_bytes()
    assert (out / "results.json").read_bytes() == local
    assert b'"baseline/padhye"' in local
    # Figures, raw tables and the page too.
    assert files(out) == files(local_report)
    for f in files(out):
        assert (out / f).read_bytes() == (local_report / f).read_bytes(), f


def test_without_python_the_error_names_the_install(root, concord_bin, tmp_path):
    r = reproduce(concord_bin, root, tmp_path / "r", "--dask", "tcp://127.0.0.1:1",
                  env={"CONCORD_PYTHON": str(tmp_path / "no-python")})
    assert r.returncode == 2
    assert "pip install './python[dask]'" in r.stderr
    assert not (tmp_path / "r").exists()


def test_without_dask_the_error_names_the_install(root, concord_bin, tmp_path):
    # A `distributed` that cannot be imported, ahead of the installed one.
    fake = tmp_path / "site" / "distributed"
    fake.mkdir(parents=True)
    (fake / "__init__.py").write_text("raise ImportError(\"No module named 'distributed'\")\n")
    r = reproduce(concord_bin, root, tmp_path / "r", "--dask", "tcp://127.0.0.1:1",
                  env={"PYTHONPATH": str(tmp_path / "site")})
    assert r.returncode == 2
    assert "No module named 'distributed'" in r.stderr
    assert "pip install './python[dask]'" in r.stderr
    assert not (tmp_path / "r").exists()
