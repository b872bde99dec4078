"""The Python API's overhead: 1,000 one-second runs of the four-flow RED dumbbell (seeds 1..1000)
through `concord.run` (each run's flows table read into pandas), against the same runs through
`concord sweep` (one worker thread each, so that the comparison is run for run).

    python3 python/benchmarks/overhead.py [--runs 1000] [--concord target/release/concord]

Prints wall and CPU seconds of both and their ratio, and apart the one-time import of pandas
(and pyarrow) that the first table of a process pays. Run from the repository root."""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import tempfile
import time
from pathlib import Path

import concord


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--runs", type=int, default=1000)
    p.add_argument("--concord", default="target/release/concord")
    a = p.parse_args()
    root = Path.cwd()
    scenario = root / "scenarios/basic/dumbbell-4-red.toml"
    with tempfile.TemporaryDirectory() as tmp:
        sweep_file = Path(tmp) / "overhead.toml"
        sweep_file.write_text(f'scenario = "{scenario}"\nseeds = {{ from = 1, to = {a.runs} }}\n'
                              '[set]\nduration = "1s"\n')
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        t0 = time.perf_counter()
        subprocess.run([a.concord, "sweep", str(sweep_file), "--out", f"{tmp}/cli", "--jobs", "1"],
                       check=True, capture_output=True)
        cli_wall = time.perf_counter() - t0
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cli_cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)

        # pandas (and pyarrow, which backs its strings) are imported once per process, before
        # the loops: a one-time cost, printed apart, that no number of runs repeats.
        c0, t0 = time.process_time(), time.perf_counter()
        import pandas  # noqa: F401

        try:
            import pyarrow  # noqa: F401
        except ImportError:
            pass
        imports = (time.perf_counter() - t0, time.process_time() - c0)
        sc = concord.load(scenario)
        sc.set("duration", "1s")
        timings = {}
        for how in ("summary", "flows"):
            c0, t0 = time.process_time(), time.perf_counter()
            for seed in range(1, a.runs + 1):
                r = concord.run(sc, seed=seed)
                # `summary`: the figures as a dict; `flows`: the flows table as a DataFrame.
                assert len(r.summary["flows"] if how == "summary" else r.flows) == 4
            timings[how] = (time.perf_counter() - t0, time.process_time() - c0)
        c0, t0 = time.process_time(), time.perf_counter()
        concord.sweep(sweep_file, f"{tmp}/py", jobs=1)
        timings["sweep"] = (time.perf_counter() - t0, time.process_time() - c0)
    print(f"{a.runs} one-second runs; load average {os.getloadavg()[0]:.1f}")
    print(f"concord sweep --jobs 1:                 wall {cli_wall:.2f} s, CPU {cli_cpu:.2f} s")
    print(f"import pandas, pyarrow (once, untimed below): wall {imports[0]:.2f} s, "
          f"CPU {imports[1]:.2f} s")
    names = {"summary": "concord.run loop, r.summary:", "flows": "concord.run loop, r.flows (pandas):",
             "sweep": "concord.sweep(jobs=1):"}
    for how, (wall, cpu) in timings.items():
        print(f"{names[how]:40s} wall {wall:.2f} s, CPU {cpu:.2f} s; "
              f"/ CLI: wall {wall / cli_wall:.2f}x, CPU {cpu / cli_cpu:.2f}x (target 1.5x)")


if __name__ == "__main__":
    main()
