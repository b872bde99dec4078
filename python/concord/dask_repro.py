"""The reproduction's experiments on a Dask cluster: what `concord reproduce --dask ADDRESS` runs.

    python -m concord.dask_repro ADDRESS [--retries N] < units > outcomes

Each line of standard input is one unit (one experiment and the setting it runs at, as the
command encodes it). Each unit becomes one Dask task that runs the experiment in-process on a
worker (`concord._concord.run_repro_unit`, the GIL released); as each finishes, one line
`INDEX OUTCOME` goes to standard output (INDEX: the unit's line number from 0; OUTCOME: the
outcome as one line of JSON, for the command to decode). A task whose worker dies is
rescheduled by the scheduler; a task that raises is retried `--retries` times.

Exit status: 0 every unit done; 1 a unit failed for good; 2 the package or dask is missing, or
the scheduler cannot be reached.
"""

from __future__ import annotations

import argparse
import sys
import uuid
from typing import List, Optional

INSTALL = "pip install './python[dask]'"


def _run_unit(unit: bytes) -> bytes:
    """Runs one unit on a Dask worker; returns its outcome."""
    from . import _concord

    return _concord.run_repro_unit(unit)


def main(argv: Optional[List[str]] = None) -> int:
    p = argparse.ArgumentParser(prog="python -m concord.dask_repro",
                                description=__doc__.split("\n")[0])
    p.add_argument("address", help="the Dask scheduler, e.g. tcp://host:8786")
    p.add_argument("--retries", type=int, default=2,
                   help="attempts after a unit's first failure (a dead worker's task is "
                        "rescheduled by the scheduler besides)")
    a = p.parse_args(argv)
    try:
        from . import _concord  # noqa: F401  (the extension: the package is really installed)
        from distributed import Client, as_completed
    except ImportError as e:
        print(f"concord reproduce --dask: {e}; install the package with its Dask extra: "
              f"{INSTALL}", file=sys.stderr)
        return 2
    units = [line.rstrip(b"\n") for line in sys.stdin.buffer if line.strip()]
    try:
        client = Client(a.address, timeout="30s")
    except (OSError, TimeoutError) as e:
        print(f"concord reproduce --dask: cannot reach the scheduler at {a.address}: {e}; "
              f"give the address a `dask scheduler` prints (tcp://host:8786)", file=sys.stderr)
        return 2
    # The task function by its module's name, not by value (under `-m` this module is __main__).
    from concord.dask_repro import _run_unit as run_unit

    token = uuid.uuid4().hex  # task keys unique to this call
    try:
        futures = [client.submit(run_unit, u, retries=a.retries, pure=False,
                                 key=f"concord-repro-unit-{i}-{token}")
                   for i, u in enumerate(units)]
        index = {f.key: i for i, f in enumerate(futures)}
        out = sys.stdout.buffer
        for future in as_completed(futures):
            try:
                outcome = future.result()
            except Exception as e:  # a unit that failed for good: name it, stop
                print(f"concord reproduce --dask: unit {index[future.key]} failed after "
                      f"{a.retries} retries: {e!r}", file=sys.stderr)
                return 1
            out.write(f"{index[future.key]} ".encode() + outcome + b"\n")
            out.flush()
    finally:
        client.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
