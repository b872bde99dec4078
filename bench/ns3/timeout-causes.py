#!/usr/bin/env python3
"""ns-3's retransmission timeouts by cause, read from the ns-3 cache of `concord validate`.

validate.cc counts each timeout under the state the connection was in when the timer fired
("timeout_causes", see its FlowTrace): the receiver already held the segment at snd.una (the
ACK was held by the delayed-ACK timer or in flight: a spurious timeout), the flow was in fast
recovery, in an earlier timeout's loss recovery (repeat), or in neither (open: no duplicate ACK;
disorder: one or two, too few for fast retransmit). It also counts each entry into fast recovery
whose segment at snd.una the receiver already held ("fast_retransmit_causes": a spurious fast
retransmit, started by duplicate ACKs that duplicate segments caused). This prints, per case and
ns-3 switch, the mean per run of each cause over the cached seeds, and the fast retransmits with
their spurious share.

Usage: bench/ns3/timeout-causes.py [CACHE_DIR] [CASE_SUBSTRING ...]
(default CACHE_DIR: bench/ns3/cache).
"""

import json
import re
import sys
from collections import defaultdict
from pathlib import Path

CAUSES = ["receiver_held", "in_recovery", "repeat", "open", "disorder"]
SWITCHES = {
    "--limitedTransmit=0": "no-limited-transmit",
    "--redWait=0": "red-no-wait",
    "--delAckTimeoutMs=40": "delack-40ms",
    "--minRtoMs=1000": "min-rto-1s",
    "--timestamps=0": "no-timestamps",
}


def switch_of(args, case_args):
    """The ns-3 switch of a run: its arguments beyond the case's own."""
    extra = [a for a in args.split() if a not in case_args and not a.startswith("--seed=")]
    names = [SWITCHES.get(a, a.lstrip("-")) for a in extra]
    return " ".join(names) or "reference"


def main():
    argv = sys.argv[1:]
    cache = Path(argv[0]) if argv and Path(argv[0]).is_dir() else Path("bench/ns3/cache")
    patterns = argv[1:] if argv and Path(argv[0]).is_dir() else argv
    files = sorted(cache.glob("*.jsonl"))
    if not files:
        sys.exit(f"{cache}: no *.jsonl files; fix: run concord validate with --ns3-cache {cache}")
    print("| case | ns-3 | runs | timeouts | " + " | ".join(CAUSES)
          + " | fast retransmits | of which receiver_held |")
    print("|---|---|---|---|" + "---|" * len(CAUSES) + "---|---|")
    for f in files:
        case = f.stem
        if patterns and not any(p in case for p in patterns):
            continue
        entries = [json.loads(line) for line in f.read_text().splitlines() if line.strip()]
        # The case's own arguments: those every run of it shares.
        common = set(entries[0]["args"].split())
        for e in entries[1:]:
            common &= set(e["args"].split())
        by_switch = defaultdict(list)
        for e in entries:
            out = json.loads(e["output"])
            if "timeout_causes" not in out:
                continue
            by_switch[switch_of(e["args"], common)].append(out)
        for switch, outs in sorted(by_switch.items(), key=lambda kv: (kv[0] != "reference", kv[0])):
            n = len(outs)
            mean = lambda k: sum(o["timeout_causes"][k] for o in outs) / n
            total = sum(o["timeouts"] for o in outs) / n
            cells = " | ".join(f"{mean(k):.1f}" for k in CAUSES)
            fr = sum(o["fast_retransmits"] for o in outs) / n
            held = [o["fast_retransmit_causes"]["receiver_held"] for o in outs
                    if "fast_retransmit_causes" in o]
            spurious = f"{sum(held) / len(held):.1f}" if len(held) == n else "-"
            print(f"| `{case}` | {switch} | {n} | {total:.1f} | {cells} | {fr:.1f} | {spurious} |")


if __name__ == "__main__":
    main()
