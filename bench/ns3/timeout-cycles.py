#!/usr/bin/env python3
"""ns-3's one-segment timeout cycle, read from `validate --trace=1` output.

At random loss, ns-3 3.44 as shipped can fall into a cycle of spurious timeouts: after a
timeout, the ACK that ends loss recovery (CA_LOSS) is `recover` itself, so the window stays at
one segment (ns-3's loss exit, `TcpSocketBase::ProcessAck`), and that lone segment waits at the
receiver for its delayed-ACK timer while the sender's timer, at its 200 ms floor, expires first:
one timeout every delayed-ACK wait plus one RTT. This reads the stderr of one or more `validate`
runs made with `--trace=1` (lines `<time s> <flow> <event ...>`) and prints, per run:

- the timeouts and the cycles (runs of three or more timeouts of one flow, each 0.2-0.4 s after
  the one before) with their first and last timeout;
- the timeouts that come one second or more after the flow's previous one ("fresh": outside a
  cycle), by the congestion state the flow was in when the timer fired, and how their loss
  recovery ended: with the window still one segment (`cwnd1`, the start of a cycle: no
  `cwnd` line at the `loss->open` change, which leaves cwnd at the loss window) or larger
  (`cwnd>1`: an ACK below `recover` grew it first), or with another timeout;
- the fast retransmits, those started on the first duplicate ACK (`open->disorder` and
  `disorder->recovery` at one instant: `TcpSocketBase::DupAck`'s `IsLost (m_highRxAckMark)`
  branch, taken when the segment at snd.una carries ns-3's lost mark), and their chains (a
  flow's consecutive fast retransmits of that kind): the event before each chain and the one
  before that, the event that ended it, and the flow-seconds spent in chains.

Usage: bench/ns3/timeout-cycles.py TRACE_FILE [TRACE_FILE ...]
(e.g. `validate ARGS --seed=S --trace=1 2> run-S.trace`).
"""

import sys
from collections import Counter, defaultdict

FRESH_S = 1.0  # a timeout this long after the flow's previous one is outside any cycle


def read(path):
    """The trace's events by flow: (time s, event, arguments)."""
    by_flow = defaultdict(list)
    with open(path) as f:
        for n, line in enumerate(f, 1):
            parts = line.split()
            if len(parts) < 3:
                continue
            try:
                t, flow = float(parts[0]), int(parts[1])
            except ValueError:
                sys.exit(f"{path}:{n}: not a validate --trace line: {line.strip()!r}; "
                         "fix: pass the stderr of `validate ... --trace=1`")
            by_flow[flow].append((t, parts[2], parts[3:]))
    return by_flow


def cycles(times):
    """Runs of timeouts 0.2-0.4 s apart, three or more long."""
    runs, cur = [], []
    for t in times:
        if cur and 0.2 <= t - cur[-1] <= 0.4:
            cur.append(t)
        else:
            if cur:
                runs.append(cur)
            cur = [t]
    if cur:
        runs.append(cur)
    return [r for r in runs if len(r) >= 3]


def fresh_outcomes(events):
    """(state before, outcome) of each timeout FRESH_S or more after the previous one."""
    out = []
    state, last = "open", float("-inf")
    for i, (t, kind, args) in enumerate(events):
        if kind == "state":
            state = args[0].split("->")[1]
        if kind != "timeout":
            continue
        fresh, last = t - last >= FRESH_S, t
        if not fresh:
            continue
        outcome = "unended"
        for t2, kind2, args2 in events[i + 1:]:
            if kind2 == "timeout":
                outcome = "timeout again"
                break
            if kind2 == "state" and args2[0] == "loss->open":
                grown = any(k == "cwnd" and tt == t2 for tt, k, _ in events[i + 1:]
                            if tt <= t2)
                outcome = "cwnd>1" if grown else "cwnd1"
                break
        out.append((state, outcome))
    return out


def chains(events, end_s):
    """A flow's chains of first-duplicate-ACK fast retransmits.

    Returns (fast retransmits, of them on the first duplicate ACK, [(preceded by, ended by,
    length, seconds)]); an event is "third" (a fast retransmit on the third duplicate ACK),
    "first", or "timeout"."""
    seq, disorder_at = [], None
    for t, kind, args in events:
        if kind == "state" and args[0] == "open->disorder":
            disorder_at = t
        elif kind == "state" and args[0] == "disorder->recovery":
            seq.append((t, "first" if disorder_at == t else "third"))
        elif kind == "timeout":
            seq.append((t, "timeout"))
    found, i = [], 0
    while i < len(seq):
        if seq[i][1] != "first":
            i += 1
            continue
        j = i
        while j < len(seq) and seq[j][1] == "first":
            j += 1
        before = " after ".join(e for _, e in reversed(seq[max(i - 2, 0):i])) or "start"
        ended = seq[j][1] if j < len(seq) else "end of run"
        until = seq[j][0] if j < len(seq) else end_s
        found.append((before, ended, j - i, until - seq[i][0]))
        i = j
    frs = sum(1 for _, e in seq if e != "timeout")
    return frs, sum(1 for _, e in seq if e == "first"), found


def main():
    paths = sys.argv[1:]
    if not paths:
        sys.exit("usage: bench/ns3/timeout-cycles.py TRACE_FILE [TRACE_FILE ...]")
    total, total_chains = Counter(), Counter()
    total_frs = total_first = 0
    total_chain_s = 0.0
    for path in paths:
        by_flow = read(path)
        end_s = max((e[-1][0] for e in by_flow.values() if e), default=0.0)
        timeouts, cyc, fresh = 0, [], Counter()
        frs = first = 0
        ch = Counter()
        chain_s = 0.0
        for flow, events in sorted(by_flow.items()):
            if flow < 0:
                continue
            times = [t for t, kind, _ in events if kind == "timeout"]
            timeouts += len(times)
            cyc += [(flow, round(c[0], 2), round(c[-1], 2), len(c)) for c in cycles(times)]
            fresh.update(fresh_outcomes(events))
            f_frs, f_first, f_chains = chains(events, end_s)
            frs, first = frs + f_frs, first + f_first
            for before, ended, _, secs in f_chains:
                ch[(before, ended)] += 1
                chain_s += secs
        total.update(fresh)
        total_chains.update(ch)
        total_frs, total_first, total_chain_s = total_frs + frs, total_first + first, total_chain_s + chain_s
        print(f"{path}: {timeouts} timeouts; cycles (flow, first, last, timeouts): {cyc}; "
              f"fresh timeouts (state, outcome): {dict(sorted(fresh.items()))}; "
              f"fast retransmits {frs}, on the first duplicate ACK {first}; "
              f"chains (preceded by, ended by): {dict(sorted(ch.items()))}, "
              f"{chain_s:.1f} flow-seconds in them")
    if len(paths) > 1:
        print(f"all: fresh timeouts (state, outcome): {dict(sorted(total.items()))}; "
              f"fast retransmits {total_frs}, on the first duplicate ACK {total_first}; "
              f"chains (preceded by, ended by): {dict(sorted(total_chains.items()))}, "
              f"{total_chain_s:.1f} flow-seconds in them")


if __name__ == "__main__":
    main()
