"""The Python side of the overhead benchmark as a user writes it: `runs` one-second runs of the
four-flow RED dumbbell (seeds 1..runs) through `concord.run`, each run's flows table read as a
pandas DataFrame. overhead.py times this script as a fresh process, from exec to exit.

    python3 python/benchmarks/runs.py SCENARIO [--runs 1000]"""

import argparse

import concord


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("scenario")
    p.add_argument("--runs", type=int, default=1000)
    a = p.parse_args()
    sc = concord.load(a.scenario)
    sc.set("duration", "1s")
    for seed in range(1, a.runs + 1):
        flows = concord.run(sc, seed=seed).flows
        if len(flows) != 4:
            raise SystemExit(f"seed {seed}: {len(flows)} flows, not 4")


if __name__ == "__main__":
    main()
