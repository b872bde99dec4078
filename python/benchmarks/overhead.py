"""The Python API's overhead: 1,000 one-second runs of the four-flow RED dumbbell (seeds 1..1000,
one thread) through the Python API against the same runs through `concord sweep --jobs 1`.

    python3 python/benchmarks/overhead.py [--runs 1000] [--repeats 5] [--concord target/release/concord]

Fresh process (the bar): each side runs as a child process from exec to exit, so every import,
the CLI's own start and its Parquet write are counted: `python3 runs.py` (load, then `concord.run`
in a loop reading `r.flows` as a pandas DataFrame; see runs.py) against `concord sweep FILE --out
DIR --jobs 1`. The two alternate, `--repeats` times each; wall is timed around each child and
CPU is the child's user + system time (getrusage of children). Prints each repeat and the
medians' ratio.

Per run: the same runs inside this process after pandas is imported (the one-time cost left
out): `concord.run` loops reading `r.summary` and `r.flows`, and `concord.sweep(jobs=1)`, each
against the median CLI figure. Run from the repository root."""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Dict, List, Tuple

import concord

RUNS_SCRIPT = Path(__file__).with_name("runs.py")


def child(command: List[str]) -> Tuple[float, float]:
    """Runs `command` to its exit; returns its wall and CPU (user + system) seconds."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def in_process(runs: int, scenario: Path, sweep_file: Path, out: str) -> Dict[str, Tuple[float, float]]:
    """The runs inside this process (pandas imported first): wall and CPU seconds by loop."""
    import pandas  # noqa: F401  (the one-time import, left out of the per-run figures)

    sc = concord.load(scenario)
    sc.set("duration", "1s")
    timings = {}
    for how in ("summary", "flows"):
        c0, t0 = time.process_time(), time.perf_counter()
        for seed in range(1, runs + 1):
            r = concord.run(sc, seed=seed)
            # `summary`: the figures as a dict; `flows`: the flows table as a DataFrame.
            assert len(r.summary["flows"] if how == "summary" else r.flows) == 4
        timings[how] = (time.perf_counter() - t0, time.process_time() - c0)
    c0, t0 = time.process_time(), time.perf_counter()
    concord.sweep(sweep_file, out, jobs=1)
    timings["sweep"] = (time.perf_counter() - t0, time.process_time() - c0)
    return timings


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--runs", type=int, default=1000)
    p.add_argument("--repeats", type=int, default=5, help="fresh processes of each side")
    p.add_argument("--concord", default="target/release/concord")
    p.add_argument("--python", default=sys.executable,
                   help="the interpreter of the fresh Python process (default: this one)")
    p.add_argument("--no-per-run", action="store_true", help="only the fresh-process figures")
    a = p.parse_args()
    scenario = Path.cwd() / "scenarios/basic/dumbbell-4-red.toml"
    load_before = os.getloadavg()[0]
    with tempfile.TemporaryDirectory() as tmp:
        sweep_file = Path(tmp) / "overhead.toml"
        sweep_file.write_text(f'scenario = "{scenario}"\nseeds = {{ from = 1, to = {a.runs} }}\n'
                              '[set]\nduration = "1s"\n')
        sides = {
            "cli": lambda rep: [a.concord, "sweep", str(sweep_file), "--out", f"{tmp}/cli{rep}",
                                "--jobs", "1"],
            "python": lambda rep: [a.python, str(RUNS_SCRIPT), str(scenario), "--runs", str(a.runs)],
        }
        fresh: Dict[str, List[Tuple[float, float]]] = {"cli": [], "python": []}
        print(f"{a.runs} one-second runs, fresh processes from exec to exit "
              f"(load average {load_before:.1f} before):")
        for rep in range(a.repeats):
            # Alternate which side goes first, so neither always meets a warmer cache.
            order = ("cli", "python") if rep % 2 == 0 else ("python", "cli")
            for side in order:
                fresh[side].append(child(sides[side](rep)))
                shutil.rmtree(f"{tmp}/cli{rep}", ignore_errors=True)
            print(f"  repeat {rep + 1}: " + "; ".join(
                f"{side} wall {fresh[side][-1][0]:.2f} s, CPU {fresh[side][-1][1]:.2f} s"
                for side in ("cli", "python")), flush=True)
        med = {side: (statistics.median(w for w, _ in v), statistics.median(c for _, c in v))
               for side, v in fresh.items()}
        cli_wall, cli_cpu = med["cli"]
        print(f"`concord sweep FILE --jobs 1`, median:   wall {cli_wall:.2f} s, CPU {cli_cpu:.2f} s")
        py_wall, py_cpu = med["python"]
        print(f"`python3 runs.py` (r.flows), median:     wall {py_wall:.2f} s, CPU {py_cpu:.2f} s; "
              f"/ CLI: wall {py_wall / cli_wall:.2f}x, CPU {py_cpu / cli_cpu:.2f}x (target 1.5x)")
        if not a.no_per_run:
            timings = in_process(a.runs, scenario, sweep_file, f"{tmp}/py")
            print("Per run, inside one process with pandas imported first (against the CLI's "
                  "fresh-process median):")
            names = {"summary": "concord.run loop, r.summary:",
                     "flows": "concord.run loop, r.flows (pandas):",
                     "sweep": "concord.sweep(jobs=1):"}
            for how, (wall, cpu) in timings.items():
                print(f"  {names[how]:38s} wall {wall:.2f} s, CPU {cpu:.2f} s; "
                      f"/ CLI: wall {wall / cli_wall:.2f}x, CPU {cpu / cli_cpu:.2f}x")
    print(f"load average {os.getloadavg()[0]:.1f} after")


if __name__ == "__main__":
    main()
