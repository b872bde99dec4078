"""concord sweep and concord.sweep: one tidy table, identical on local threads and on Dask."""

from __future__ import annotations

import os
import signal
import subprocess
import threading
import time
from pathlib import Path

import pytest

import concord

SWEEP = "examples/sweep-red.toml"


@pytest.fixture(scope="module")
def cli_sweep(root, concord_bin, tmp_path_factory):
    """`concord sweep examples/sweep-red.toml` (3 rates x 3 delays x 5 seeds), run from the root."""
    out = tmp_path_factory.mktemp("cli") / "sweep"
    subprocess.run([str(concord_bin), "sweep", SWEEP, "--out", str(out), "--csv"], cwd=root,
                   check=True, capture_output=True)
    return out


@pytest.fixture(scope="module")
def cluster():
    distributed = pytest.importorskip("distributed")
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None) as c, distributed.Client(c) as client:
        yield c, client


def test_the_cli_writes_one_parquet_table_of_45_run_groups(cli_sweep):
    import pandas as pd

    df = pd.read_parquet(cli_sweep / "results.parquet")
    assert df["run"].nunique() == 45
    keys = ["topology.bottleneck.rate", "topology.bottleneck.delay", "seed"]
    assert df.groupby(keys).ngroups == 45
    assert sorted(df["topology.bottleneck.rate"].unique()) == ["10Mbps", "20Mbps", "5Mbps"]
    assert sorted(df["seed"].unique()) == [1, 2, 3, 4, 5]
    assert len(df) == 45 * 4  # four flows a run
    assert {"flow", "cc", "goodput_bps", "jain_index", "bottleneck_utilisation"} <= set(df.columns)
    # The CSV is the same table.
    csv = pd.read_csv(cli_sweep / "results.csv")
    assert list(csv.columns) == list(df.columns)
    assert (csv["goodput_bps"] == df["goodput_bps"]).all()
    runs = __import__("json").loads((cli_sweep / "runs.json").read_text())
    assert [r["run"] for r in runs] == list(range(45))
    assert runs[7]["seed"] == 3 and runs[7]["values"] == {
        "topology.bottleneck.rate": '"5Mbps"', "topology.bottleneck.delay": '"23ms"'}
    assert runs[7]["meta"]["overrides"][-1] == "seed = 3"


def test_a_run_of_the_table_equals_concord_run_with_the_same_overrides(root, cli_sweep):
    import pandas as pd

    df = pd.read_parquet(cli_sweep / "results.parquet")
    sc = concord.load(root / "scenarios/basic/dumbbell-4-red.toml")
    sc.set("duration", "10s")
    sc.set("record.warmup", "2s")
    sc.set("topology.bottleneck.rate", "20Mbps")
    sc.set("topology.bottleneck.delay", "50ms")
    r = concord.run(sc, seed=4)
    row = df[(df["topology.bottleneck.rate"] == "20Mbps")
             & (df["topology.bottleneck.delay"] == "50ms") & (df["seed"] == 4)]
    assert list(row["goodput_bps"]) == list(r.flows["goodput_bps"])
    assert list(row["delivered_bytes"]) == list(r.flows["delivered_bytes"])


def test_python_local_sweep_writes_the_same_bytes(root, cli_sweep, tmp_path, monkeypatch):
    monkeypatch.chdir(root)
    out = tmp_path / "py"
    df = concord.sweep(SWEEP, out, csv=True, jobs=2)
    assert len(df) == 180
    for f in ("results.parquet", "results.csv", "runs.json"):
        assert (out / f).read_bytes() == (cli_sweep / f).read_bytes(), f


def test_the_same_sweep_on_a_dask_local_cluster_gives_an_identical_table(root, cli_sweep, cluster,
                                                                         tmp_path, monkeypatch):
    _, client = cluster
    assert len(client.scheduler_info()["workers"]) == 2
    monkeypatch.chdir(root)
    out = tmp_path / "dask"
    concord.sweep(SWEEP, out, client=client, csv=True)
    for f in ("results.parquet", "results.csv", "runs.json"):
        assert (out / f).read_bytes() == (cli_sweep / f).read_bytes(), f


def test_a_worker_killed_mid_sweep_loses_no_run(root, cluster, tmp_path, monkeypatch):
    _, client = cluster
    monkeypatch.chdir(tmp_path)
    # Longer runs (300 s simulated each), so that the sweep is still going when a worker dies.
    sweep_file = tmp_path / "slow.toml"
    sweep_file.write_text((root / SWEEP).read_text()
                          .replace('"../scenarios/', f'"{root}/scenarios/')
                          .replace('duration = "10s"', 'duration = "300s"'))
    local = concord.sweep(sweep_file, tmp_path / "local", jobs=2)

    result = {}

    def work():
        result["df"] = concord.sweep(sweep_file, tmp_path / "dask", client=client)

    t = threading.Thread(target=work)
    t.start()

    def finished(dask_scheduler):
        return sum(ts.state == "memory" for ts in dask_scheduler.tasks.values()
                   if str(ts.key).startswith("concord-sweep-run-"))

    deadline = time.monotonic() + 120
    while client.run_on_scheduler(finished) < 3:
        assert time.monotonic() < deadline, "the sweep did not start"
        time.sleep(0.02)
    done_at_kill = client.run_on_scheduler(finished)
    pids = client.run(os.getpid)
    victim = sorted(pids.values())[0]
    os.kill(victim, signal.SIGKILL)
    t.join(timeout=300)
    assert not t.is_alive()
    assert done_at_kill < 45, "the worker died after the sweep ended"
    df = result["df"]
    assert df["run"].nunique() == 45
    assert (tmp_path / "dask" / "results.parquet").read_bytes() == \
        (tmp_path / "local" / "results.parquet").read_bytes()
    assert df.equals(local)
