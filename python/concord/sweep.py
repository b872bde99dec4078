"""Sweeps: a scenario over a grid of overrides times seeds, into one tidy table.

    df = concord.sweep("examples/sweep-red.toml")                  # local threads
    df = concord.sweep("examples/sweep-red.toml", client=client)   # a dask.distributed.Client
    df = concord.sweep("examples/sweep-red.toml", dask="tcp://host:8786")

Each run is a function of the sweep file and its index alone (`Sweep.run(i)`), so every
executor writes the same table: results.parquet (one row per flow per run: the run, the swept
keys, the seed, the flow's figures from flows.csv, the run's figures from summary.json),
runs.json (each run's metadata), and results.csv on request.

Command line: python -m concord.sweep FILE --out DIR [--dask ADDRESS] [--csv] [--retries N]
(what `concord sweep --dask` runs).
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import uuid
from typing import Any, Dict, List, Optional, Tuple, Union

from . import _concord

PathLike = Union[str, "os.PathLike[str]"]

# Sweeps rebuilt on this worker process, by their parts.
_WORKER_SWEEPS: Dict[Tuple[str, str, str], "_concord.Sweep"] = {}


def _run_one(parts: Tuple[str, str, str], run: int) -> str:
    """Runs run `run` of the sweep `parts` on a Dask worker; returns its record (JSON text)."""
    sweep = _WORKER_SWEEPS.get(parts)
    if sweep is None:
        sweep = _concord.Sweep.from_parts(*parts)
        _WORKER_SWEEPS.clear()
        _WORKER_SWEEPS[parts] = sweep
    return sweep.run(run)


def _say(progress: bool, text: str, end: str = "\n") -> None:
    if progress:
        print(text, end=end, file=sys.stderr, flush=True)


def run_on_dask(sweep: "_concord.Sweep", client: Any, retries: int = 2,
                progress: bool = True) -> List[str]:
    """Runs every run of `sweep` as one Dask task each (retried `retries` times on failure; a
    task whose worker dies is rescheduled by the scheduler); returns the records."""
    from distributed import as_completed

    parts = sweep.parts()
    n = len(sweep)
    token = uuid.uuid4().hex  # task keys unique to this call
    futures = client.map(_run_one, [parts] * n, list(range(n)), retries=retries, pure=False,
                         key=[f"concord-sweep-run-{i}-{token}" for i in range(n)])
    records: List[str] = []
    for done, future in enumerate(as_completed(futures), start=1):
        records.append(future.result())
        _say(progress, f"\rsweep on dask: {done}/{n} runs ", end="")
    _say(progress, "")
    return records


def sweep(file: PathLike, out: Optional[PathLike] = None, *, client: Any = None,
          dask: Optional[str] = None, csv: bool = False, jobs: Optional[int] = None,
          retries: int = 2, progress: bool = False):
    """Runs the sweep file `file` and returns its tidy table as a pandas DataFrame.

    Writes results.parquet, runs.json (and results.csv when `csv`) into `out` (a temporary
    directory when None). Runs on local threads (`jobs`, default: the cores), or on Dask when
    given a `client` (a dask.distributed.Client) or a scheduler address `dask`."""
    s = _concord.Sweep.load(os.fspath(file))
    out = os.fspath(out) if out is not None else tempfile.mkdtemp(prefix="concord-sweep-")
    own_client = None
    if client is None and dask is not None:
        from distributed import Client

        client = own_client = Client(dask)
    try:
        if client is None:
            records = s.run_local(jobs or os.cpu_count() or 1, retries)
        else:
            records = run_on_dask(s, client, retries=retries, progress=progress)
    finally:
        if own_client is not None:
            own_client.close()
    rows = s.write(records, out, csv)
    _say(progress, f"{len(s)} runs ({s.groups} groups x {len(s.seeds)} seeds), {rows} rows: "
                   f"{os.path.join(out, 'results.parquet')}")
    import pandas as pd

    return pd.read_parquet(os.path.join(out, "results.parquet"))


def main(argv: Optional[List[str]] = None) -> int:
    p = argparse.ArgumentParser(prog="python -m concord.sweep", description=__doc__.split("\n")[0])
    p.add_argument("file")
    p.add_argument("--out", required=True)
    p.add_argument("--dask", metavar="ADDRESS", help="a Dask scheduler, e.g. tcp://host:8786")
    p.add_argument("--csv", action="store_true", help="also write results.csv")
    p.add_argument("--jobs", type=int)
    p.add_argument("--retries", type=int, default=2)
    a = p.parse_args(argv)
    try:
        sweep(a.file, a.out, dask=a.dask, csv=a.csv, jobs=a.jobs, retries=a.retries,
              progress=True)
    except ValueError as e:  # ScenarioError: the file and the fix
        print(f"concord sweep: {e}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
