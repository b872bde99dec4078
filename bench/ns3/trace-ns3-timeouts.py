#!/usr/bin/env python3
"""ns-3's dumbbell timeouts against its fast recoveries and receivers, read from one `validate`
run's stderr made with `--trace=1` and `NS_LOG="TcpSocketBase=level_logic|prefix_time|
prefix_node|prefix_func"`; the counterpart of bench/ns3/trace-receiver-held.py for concord.

For every timeout of the trace (`<time> <flow> timeout receiver_held` or `timeout from
<state>`), flow k (from 0) being sender node 2 + k and receiver node 2 + F + k of an F-flow
dumbbell (validate.cc creates the two routers, the F senders, then the F receivers):

- the timer: when it was armed and so the RTO it ran (the `Schedule ReTxTimeout at time A to
  expire at time T` line of TcpSocketBase::NewAck or SendDataPacket whose expiry is the
  timeout), the fast retransmit before it (`EnterRecovery`), the partial ACKs between
  (`ProcessAck`: "Partial ACK") and the time from the last one to the timeout;
- for the receiver-held ones, the receiver's side: snd.una (the sender's last `NewAck`), when
  the segment at snd.una reached the receiver (`ReceivedData` with that Seq) and when its first
  ACK above snd.una left (`SendEmptyPacket`: "Sending a pure ACK, acking seq"), the gap being 0
  for an ACK sent at once and the delayed-ACK wait otherwise.

The log is large (about 60 MB a simulated second at 64 flows); it can be filtered as it is
made, e.g. `grep -E "Schedule ReTxTimeout|Partial ACK\\. |EnterRecovery\\(\\): |NewAck\\(\\): TCP|
ReceivedData\\(0x|Sending a pure ACK|^[0-9.]+ [0-9]+ (timeout|state)"`.

Usage: bench/ns3/trace-ns3-timeouts.py LOG FLOWS [--verbose]
"""

import importlib.util
import os
import re
import sys
from collections import defaultdict

HERE = os.path.dirname(os.path.abspath(__file__))
_spec = importlib.util.spec_from_file_location(
    "held", os.path.join(HERE, "trace-receiver-held.py"))
held = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(held)

LOG = re.compile(r"^\+([0-9.]+)s (\d+) ")
TRACE = re.compile(r"^([0-9.]+) (-?\d+) timeout (receiver_held|from \w+)")
SCHED = re.compile(r"Schedule ReTxTimeout at time ([0-9.e+-]+) to expire at time ([0-9.e+-]+)")
NEWACK = re.compile(r"NewAck\(\): TCP 0x[0-9a-f]+ NewAck (\d+) ")
RXDATA = re.compile(r"ReceivedData\(0x[0-9a-f]+, \d+ > \d+ \[[^]]*\] Seq=(\d+) ")
PUREACK = re.compile(r"Sending a pure ACK, acking seq (\d+)")


def fail(msg):
    sys.exit(f"trace-ns3-timeouts: {msg}")


def read(path):
    timeouts = []
    ev = defaultdict(lambda: defaultdict(list))
    with open(path, errors="replace") as f:
        for line in f:
            m = TRACE.match(line)
            if m:
                cls = "receiver_held" if m.group(3) == "receiver_held" else "segment missing"
                timeouts.append((float(m.group(1)), int(m.group(2)), cls))
                continue
            m = LOG.match(line)
            if not m:
                continue
            t, node = float(m.group(1)), int(m.group(2))
            e = ev[node]
            if (s := SCHED.search(line)):
                e["sched"].append((t, float(s.group(2))))
            elif "Partial ACK. " in line:
                e["partial"].append(t)
            elif "EnterRecovery(): " in line:
                e["recovery"].append(t)
            elif (s := NEWACK.search(line)):
                e["newack"].append((t, int(s.group(1))))
            elif (s := RXDATA.search(line)):
                e["data"].append((t, int(s.group(1))))
            elif (s := PUREACK.search(line)):
                e["ack"].append((t, int(s.group(1))))
    if not timeouts:
        fail(f"{path}: no `timeout` lines; fix: run validate with --trace=1 and keep its stderr")
    return timeouts, ev


def med(v):
    v = sorted(x for x in v if x == x)
    return v[len(v) // 2] if v else float("nan")


def main(argv):
    if len(argv) < 2:
        fail("usage: trace-ns3-timeouts.py LOG FLOWS [--verbose]")
    timeouts, ev = read(argv[0])
    flows = int(argv[1])
    verbose = "--verbose" in argv
    phases = defaultdict(list)
    counts = defaultdict(int)
    gaps = defaultdict(list)
    for (t, k, cls) in timeouts:
        snd, rcv = ev[2 + k], ev[2 + flows + k]
        # The timer whose expiry is this timeout (printed to 6 significant digits).
        armed = [a for (a, x) in snd["sched"] if a < t and abs(x - t) <= 1e-5 * max(1.0, t)]
        armed = armed[-1] if armed else None
        fr = [r for r in snd["recovery"] if r < t]
        fr = fr[-1] if fr else None
        partial = [p for p in snd["partial"] if fr is not None and fr <= p < t]
        if armed is not None and fr is not None:
            phases[cls].append((t, t - fr, t - armed, len(partial),
                                t - partial[-1] if partial else float("nan")))
        counts[cls] += 1
        if cls != "receiver_held":
            if verbose:
                print(f"flow {k} {t:.6f} missing armed={armed} fr={fr} partials={len(partial)}")
            continue
        una = max((a for (ta, a) in snd["newack"] if ta <= t), default=1)
        arrived = [ta for (ta, s) in rcv["data"] if s == una and ta <= t]
        arrived = arrived[-1] if arrived else None
        left = next((ta for (ta, a) in rcv["ack"] if a > una
                     and (arrived is None or ta >= arrived)), None)
        wait = left - arrived if left is not None and arrived is not None else None
        kind = ("immediate" if wait is not None and wait < 1e-6 else
                "delayed" if wait is not None else "unknown")
        counts[f"ack {kind}"] += 1
        counts["ACK left before the timeout" if left is not None and left <= t
               else "ACK left after the timeout"] += 1
        back = next((ta for (ta, a) in snd["newack"] if ta > t and a > una), None)
        if left is not None:
            gaps["timeout after the ACK left (ms)"].append((t - left) * 1e3)
        if back is not None:
            gaps["ACK reached the sender after the timeout (ms)"].append((back - t) * 1e3)
        if verbose:
            print(f"flow {k} {t:.6f} held snd.una={una} arrived={arrived} ack_left={left} "
                  f"({kind}) armed={armed} fr={fr} partials={len(partial)}")
    for c in sorted(counts):
        print(f"{c}: {counts[c]}")
    for k, v in gaps.items():
        v = sorted(v)
        print(f"{k}: n={len(v)} min={v[0]:.1f} median={v[len(v) // 2]:.1f} max={v[-1]:.1f}")
    held.print_phases(phases)


if __name__ == "__main__":
    main(sys.argv[1:])
