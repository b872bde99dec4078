#!/usr/bin/env python3
"""Timeouts a run, concord against ns-3, on the issue group's failed-recovery and 2% loss cases,
in two like-for-like comparisons:

  (A) concord with every ns-3 departure against ns-3 3.44 as shipped;
  (B) concord as it is (no departure) against ns-3 with `--rfcRecover=1 --rfcLossExit=1`.

Each side is run for every seed (concord: `concord run SCENARIO --seed S --json`, timeouts summed
over the flows as crates/validate/src/concord_run.rs does; ns-3: `validate ARGS --seed=S`, its
"timeouts" field as crates/validate/src/ns3.rs reads it, SYN timeouts not included), and the
timeouts by the state they fired in. For each
case it prints the four means a run with their 95% half-widths (Student t over the seeds), the
two ratios of the means (concord / ns-3) with a 95% interval by the delta method on the log
scale (independent runs: exp(ln r +- 1.96 sqrt(s_c^2 / (n m_c^2) + s_n^2 / (n m_n^2)))), and
whether the ratio and its interval lie within the case's target.

Each ns-3 run whose arguments the committed cache (bench/ns3/cache, the same build's identity)
holds is compared with the cached output: a differing count is reported, not used.

Usage:
  bench/ns3/timeout-ratios.py --concord BIN --ns3 BIN --scenarios DIR [--seeds 1-20]
      [--cache bench/ns3/cache] [--raw OUT.json] [--jobs 2]

DIR holds `<case>.toml` for each case, as written by
`concord validate --cases <case> --no-ns3 --no-diagnose --out X` into X/scenarios/ (DIR is
searched recursively). Runs are started under `nice`, at most --jobs at a time.
"""

import argparse
import json
import math
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

# Every departure concord's `defaults.tcp.ns3_departures` names (docs/scenarios.md).
SIX = ["recover", "loss-exit", "ecn-once", "limited-transmit", "recovery-ssthresh", "reno-sack"]

# The state a timeout fired in, as both simulators count it (validate.cc's FlowTrace, concord's
# `timeout_causes`): the receiver already held snd.una, in fast recovery, in an earlier timeout's
# loss recovery, with no duplicate ACK, with one or two.
CAUSES = ["receiver_held", "in_recovery", "repeat", "open", "disorder"]

# ns-3 switches of comparison (B): the departures validate.cc corrects on a DropTail case.
CORRECTED = ["--rfcRecover=1", "--rfcLossExit=1"]


def reference_args(flows, delay_us, limit, loss, buf):
    """validate.cc's arguments for a DropTail dumbbell case (crates/validate/src/ns3.rs `args`),
    the seed left out."""
    return [
        "--topology=dumbbell",
        "--hops=1",
        f"--flows={flows}",
        "--rateBps=10000000",
        f"--delayUs={delay_us}",
        f"--limit={limit}",
        f"--loss={loss}",
        "--duration=60",
        "SEED",
        f"--buf={buf}",
        "--queue=droptail",
    ]


# (case id, ns-3 reference arguments, target: the ratio within [1/k, k]).
CASES = [
    ("issue-dumbbell-4f-10Mbps-50ms-droptail", reference_args(4, 23000, 100, 0, 1048576), 2.0),
    (
        "issue-dumbbell-1f-10Mbps-100ms-droptail-q1000-loss2",
        reference_args(1, 48000, 1000, 0.02, 7340032),
        1.5,
    ),
    (
        "issue-dumbbell-4f-10Mbps-100ms-droptail-q1000-loss2",
        reference_args(4, 48000, 1000, 0.02, 7340032),
        1.5,
    ),
]

# Student t, two-sided 95%, by degrees of freedom (1-30); 1.96 beyond.
T95 = [
    12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228,
    2.201, 2.179, 2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086,
    2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042,
]


def t95(df):
    return T95[df - 1] if 1 <= df <= len(T95) else 1.96


def mean_sd(xs):
    n = len(xs)
    m = sum(xs) / n
    var = sum((x - m) ** 2 for x in xs) / (n - 1) if n > 1 else 0.0
    return m, math.sqrt(var)


def half_width(xs):
    _, sd = mean_sd(xs)
    return t95(len(xs) - 1) * sd / math.sqrt(len(xs))


def ratio(c, n):
    """Ratio of the means of c and n with its 95% delta-method interval on the log scale."""
    mc, sc = mean_sd(c)
    mn, sn = mean_sd(n)
    if mc <= 0 or mn <= 0:
        return (float("nan"),) * 3
    r = mc / mn
    se = math.sqrt(sc**2 / (len(c) * mc**2) + sn**2 / (len(n) * mn**2))
    return r, r * math.exp(-1.96 * se), r * math.exp(1.96 * se)


def seeds_of(text):
    out = []
    for part in text.split(","):
        if "-" in part:
            a, b = part.split("-")
            out.extend(range(int(a), int(b) + 1))
        else:
            out.append(int(part))
    return out


def identity(exe):
    """The ns-3 build's identity as crates/validate/src/ns3_cache.rs names it."""
    stamp = Path(exe).with_suffix(".identity")
    lines = [l.strip() for l in stamp.read_text().splitlines() if l.strip()]
    return "; ".join(lines)


def read_cache(cache_dir, case, ident):
    path = Path(cache_dir) / f"{case}.jsonl"
    out = {}
    if not path.exists():
        return out
    for line in path.read_text().splitlines():
        e = json.loads(line)
        if e["identity"] == ident:
            out[e["args"]] = json.loads(e["output"])
    return out


def run(cmd):
    p = subprocess.run(["nice"] + cmd, capture_output=True, text=True)
    if p.returncode != 0:
        sys.exit(f"failed ({p.returncode}): {' '.join(cmd)}\n{p.stderr[-2000:]}")
    return p.stdout


def concord_timeouts(exe, scenario, seed, departures):
    cmd = [exe, "run", str(scenario), "--seed", str(seed), "--json"]
    if departures:
        names = ",".join(f'"{d}"' for d in departures)
        cmd += ["--set", f"defaults.tcp.ns3_departures=[{names}]"]
    r = json.loads(run(cmd))
    causes = {c: sum(f["timeout_causes"][c] for f in r["flows"]) for c in CAUSES}
    return sum(f["timeouts"] for f in r["flows"]), causes


def ns3_args(ref, seed, extra):
    return [f"--seed={seed}" if a == "SEED" else a for a in ref] + extra


def ns3_timeouts(exe, args):
    lines = [l for l in run([exe] + args).splitlines() if l.startswith("{")]
    out = json.loads(lines[-1])
    return out["timeouts"], {c: out["timeout_causes"][c] for c in CAUSES}


def fmt_mean(xs):
    return f"{sum(xs) / len(xs):.1f} ± {half_width(xs):.1f}"


def verdict(r, lo, hi, k):
    inside = 1 / k <= r <= k
    within = 1 / k <= lo and hi <= k
    return (
        f"{r:.3f}x [{lo:.3f}, {hi:.3f}]",
        "yes" if inside else "no",
        "yes" if within else "no",
    )


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--concord", required=True, help="the concord binary")
    ap.add_argument("--ns3", required=True, help="ns-3's validate program")
    ap.add_argument("--scenarios", required=True, help="directory holding <case>.toml")
    ap.add_argument("--seeds", default="1-20")
    ap.add_argument("--cache", default=str(Path(__file__).parent / "cache"))
    ap.add_argument("--raw", help="write every run's timeouts here (JSON)")
    ap.add_argument("--jobs", type=int, default=2)
    a = ap.parse_args()
    seeds = seeds_of(a.seeds)
    ident = identity(a.ns3)
    pool = ThreadPoolExecutor(max_workers=a.jobs)

    raw = {}
    rows = []
    notes = []
    for case, ref, k in CASES:
        found = list(Path(a.scenarios).rglob(f"{case}.toml"))
        if not found:
            sys.exit(
                f"no {case}.toml under {a.scenarios}; fix: run "
                f"`concord validate --cases {case} --no-ns3 --no-diagnose --out DIR` first"
            )
        scenario = found[0]
        cols = {
            "concord": [pool.submit(concord_timeouts, a.concord, scenario, s, []) for s in seeds],
            "concord six": [pool.submit(concord_timeouts, a.concord, scenario, s, SIX) for s in seeds],
        }
        ns3_cols = {"ns-3 shipped": [], "ns-3 corrected": CORRECTED}
        argsets = {}
        for col, extra in ns3_cols.items():
            argsets[col] = [ns3_args(ref, s, extra) for s in seeds]
            cols[col] = [pool.submit(ns3_timeouts, a.ns3, args) for args in argsets[col]]
        done = {col: [f.result() for f in fs] for col, fs in cols.items()}
        vals = {col: [t for t, _ in runs] for col, runs in done.items()}
        causes = {
            col: {c: sum(r[c] for _, r in runs) / len(runs) for c in CAUSES}
            for col, runs in done.items()
        }
        raw[case] = {"seeds": seeds, **vals, "causes": causes}

        cached = read_cache(a.cache, case, ident)
        same = differ = 0
        for col in ns3_cols:
            for args, t in zip(argsets[col], vals[col]):
                hit = cached.get(" ".join(args))
                if hit is None:
                    continue
                if hit["timeouts"] == t:
                    same += 1
                else:
                    differ += 1
                    notes.append(f"{case} {' '.join(args)}: cache {hit['timeouts']}, rerun {t}")
        notes.append(f"{case}: {same} ns-3 runs equal to the cache, {differ} differ")

        ra = verdict(*ratio(vals["concord six"], vals["ns-3 shipped"]), k)
        rb = verdict(*ratio(vals["concord"], vals["ns-3 corrected"]), k)
        rows.append(
            (
                f"`{case}`",
                f"[{1 / k:.3g}, {k:g}]",
                fmt_mean(vals["concord six"]),
                fmt_mean(vals["ns-3 shipped"]),
                *ra,
                fmt_mean(vals["concord"]),
                fmt_mean(vals["ns-3 corrected"]),
                *rb,
            )
        )

    print(
        "| case | target | (A) concord, six departures | (A) ns-3 as shipped | (A) ratio [95%] "
        "| (A) mean inside | (A) interval inside | (B) concord | (B) ns-3 corrected "
        "| (B) ratio [95%] | (B) mean inside | (B) interval inside |"
    )
    print("|" + "---|" * 12)
    for r in rows:
        print("| " + " | ".join(r) + " |")
    print()
    for case in raw:
        for col in ["concord six", "ns-3 shipped", "concord", "ns-3 corrected"]:
            print(f"{case} {col}: {', '.join(str(v) for v in raw[case][col])}")
            by_cause = raw[case]["causes"][col]
            print("  mean a run by cause: " + ", ".join(f"{c} {by_cause[c]:.2f}" for c in CAUSES))
    print()
    for n in notes:
        print(n)
    if a.raw:
        Path(a.raw).write_text(json.dumps(raw, indent=1) + "\n")


if __name__ == "__main__":
    main()
