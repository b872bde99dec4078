#!/usr/bin/env python3
"""The RTO each flow carries into its first fast recovery, and the RTT sample that set it, in
concord and in ns-3.

Under RFC 6582 section 3.2 step 5 (concord; ns-3's `NewAck (ackNumber, m_isFirstPartialAck)`)
the timer runs from the first partial ACK with the RTO of the last RTT sample before the fast
retransmit (the partial ACK itself acknowledges a resent segment and gives none, RFC 6298
section 3, Karn). This prints, over a run's flows, the RTO at the last ACK of new data before
each flow's first fast retransmit, and where the last jump of the RTO by more than 100 ms came
from: such a jump is a sample about one delayed-ACK wait (200 ms) longer than the others, a
segment the receiver acknowledged on its delayed-ACK timer (RFC 5681 section 4.2). Counted: the
flows with such a sample less than 100 ms (half an RTT, the same round) before the fast
retransmit, and how long before it the last one came; and, by the class of the flow's first
timeout (receiver held or not), the flows with and without a recent one.

Inputs, one or more of:
- a concord run directory (`concord run SCENARIO --out DIR`, a dumbbell with `record.cwnd` on
  its flows f<i> and pcaps of `s<i>->r1`, `r1->s<i>`, `r2->d<i>`, `d<i>->r2`); the estimator is
  RFC 6298 section 2 (K = 4, G = 1 ms, 200 ms floor) fed with the sample concord takes, the
  oldest newly acknowledged segment when it was sent once (crates/cc/src/tcp/rtt.rs);
- an ns-3 `validate --trace=1` stderr with `NS_LOG="TcpSocketBase=level_logic|prefix_time|
  prefix_node|prefix_func"` (filtered as bench/ns3/trace-ns3-timeouts.py says), FLOWS flows:
  the RTO is read from each `NewAck` "Schedule ReTxTimeout at time A to expire at time B".

Usage: bench/ns3/trace-rto-at-recovery.py [--flows N] RUN_DIR_OR_LOG [...]
"""

import importlib.util
import os
import re
import sys
from collections import defaultdict

JUMP_S = 0.1  # an RTO rise this large on one ACK is a delayed-ACK sample
RECENT_S = 0.1  # "recent": this little before the fast retransmit (half an RTT: the same round)

HERE = os.path.dirname(os.path.abspath(__file__))
_spec = importlib.util.spec_from_file_location(
    "held", os.path.join(HERE, "trace-receiver-held.py"))
held = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(held)


def med(v):
    v = sorted(v)
    return v[len(v) // 2] if v else float("nan")


def concord(run):
    """(RTO s, ACKs since the last jump, first timeout receiver held?, s from jump to FR)."""
    chans = held.read_channels(run)
    tos = held.timeouts(run, 1448)
    rows = []
    for name in sorted(tos, key=lambda n: int(n[1:])):
        i = name[1:]
        t = tos[name][0]
        sent = held.read_pcap(os.path.join(run, f"s{i}-r1.pcap"))
        rate, delay = held.rate_delay(chans, f"r1->s{i}")
        acks = held.arrivals(held.read_pcap(os.path.join(run, f"r1-s{i}.pcap")), rate, delay)
        rate, delay = held.rate_delay(chans, f"r2->d{i}")
        data = held.arrivals(held.read_pcap(os.path.join(run, f"r2-d{i}.pcap")), rate, delay)
        phase = held.timer_phase(sent, acks, t)
        if phase is None:
            continue
        fr = phase[0]
        sends = defaultdict(int)
        first_sent = {}
        for (ts, seq, _, n, _) in sent:
            if n > 0 and ts < fr:
                sends[seq] += 1
                first_sent.setdefault(seq, ts)
        una, srtt, var, rto, since, jump = 0, None, 0.0, None, None, None
        for (ta, _, a, _) in acks:
            if ta >= fr:
                break
            if a <= una:
                continue
            if sends.get(una) == 1:
                r = ta - first_sent[una]
                if srtt is None:
                    srtt, var = r, r / 2
                else:
                    var = 0.75 * var + 0.25 * abs(srtt - r)
                    srtt = 0.875 * srtt + 0.125 * r
                new = max(0.2, srtt + max(0.001, 4 * var))
                if rto is not None and new - rto > JUMP_S:
                    since, jump = 0, ta
                elif since is not None:
                    since += 1
                rto = new
            una = a
        una_t = max((a for (ta, _, a, _) in acks if ta <= t), default=0)
        rows.append((rto, since, held.receiver_at(data, t + 1e-12)[0] > una_t,
                     fr - jump if jump is not None else None))
    return rows


def ns3(path, flows):
    log = re.compile(r"^\+([0-9.]+)s (\d+) ")
    trace = re.compile(r"^([0-9.]+) (\d+) timeout (receiver_held|from)")
    sched = re.compile(r"NewAck\(\): 0x[0-9a-f]+ Schedule ReTxTimeout at time ([0-9.e+-]+) "
                       r"to expire at time ([0-9.e+-]+)")
    rtos, fr, first = defaultdict(list), {}, {}
    with open(path, errors="replace") as f:
        for line in f:
            m = trace.match(line)
            if m:
                first.setdefault(int(m.group(2)), m.group(3) == "receiver_held")
                continue
            m = log.match(line)
            if not m:
                continue
            t, node = float(m.group(1)), int(m.group(2))
            if node in fr:
                continue
            if (s := sched.search(line)):
                rtos[node].append((t, float(s.group(2)) - float(s.group(1))))
            elif "EnterRecovery(): " in line:
                fr[node] = t
    if not first:
        sys.exit(f"trace-rto-at-recovery: {path}: no timeout lines; fix: run validate with "
                 "--trace=1 and keep its stderr")
    rows = []
    for k, was_held in sorted(first.items()):
        node = 2 + k
        if node not in fr or not rtos[node]:
            continue
        prev, since, jump = None, None, None
        for (t, rto) in rtos[node]:
            if prev is not None and rto - prev > JUMP_S:
                since, jump = 0, t
            elif since is not None:
                since += 1
            prev = rto
        rows.append((prev, since, was_held, fr[node] - jump if jump is not None else None))
    return rows


def report(label, rows):
    rto = sorted(r[0] for r in rows)
    recent = [r for r in rows if r[3] is not None and r[3] < RECENT_S]
    jumps = [r[3] for r in rows if r[3] is not None]
    by = defaultdict(int)
    for r in rows:
        by[("receiver held" if r[2] else "segment missing",
            "recent" if r in recent else "not recent")] += 1
    print(f"{label}: {len(rows)} flows; RTO at the last ACK of new data before the fast "
          f"retransmit, quartiles {rto[len(rto) // 4] * 1e3:.0f} / {rto[len(rto) // 2] * 1e3:.0f}"
          f" / {rto[3 * len(rto) // 4] * 1e3:.0f} ms; a delayed-ACK sample less than "
          f"{RECENT_S * 1e3:.0f} ms before the fast retransmit: {len(recent)} flows; the last one "
          f"{med(jumps) * 1e3:.0f} ms (median, "
          f"{len(jumps)} flows) before the fast retransmit")
    print("  first timeout by class and recent sample: "
          + ", ".join(f"{c} / {r}: {by[(c, r)]}" for (c, r) in sorted(by)))


def main(argv):
    flows = 64
    if "--flows" in argv:
        i = argv.index("--flows")
        flows = int(argv[i + 1])
        argv = argv[:i] + argv[i + 2:]
    if not argv:
        sys.exit("usage: trace-rto-at-recovery.py [--flows N] RUN_DIR_OR_LOG [...]")
    for a in argv:
        report(a, concord(a) if os.path.isdir(a) else ns3(a, flows))


if __name__ == "__main__":
    main(sys.argv[1:])
