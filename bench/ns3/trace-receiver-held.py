#!/usr/bin/env python3
"""concord's receiver-held timeouts, read from a run's pcaps: what the receiver did with the
segment at snd.una and when its ACK left.

A timeout is "receiver held" when the receiver's RCV.NXT is past the sender's snd.una as the
timer fires (crates/cc/src/tcp/timeout_cause.rs): the segment at snd.una was delivered and
its ACK was either held by the receiver's delayed-ACK timer (RFC 5681 section 4.2) or already
on its way back. This reads, for every TCP flow f<i> from s<i> to d<i> of a dumbbell run made
with `record.cwnd` on the flows and pcaps of `s<i>->r1`, `r1->s<i>`, `r2->d<i>` and
`d<i>->r2`:

- the timeouts, from `cwnd.csv`: a row that sets cwnd to one segment (the loss window, RFC
  5681 section 3.1) from a larger value;
- at each, the sender's snd.una (the highest ACK that had reached s<i>) and the receiver's
  RCV.NXT (the in-order end of the data that had reached d<i>), both at the timer's instant;
- for the receiver-held ones: when the segment at snd.una reached the receiver and whether it
  was the first copy or a resend, what that segment did to RCV.NXT (in order, or filling a
  hole), when the first ACK above snd.una left the receiver (and so whether it was immediate or
  waited for the delayed-ACK timer), and when that ACK reached the sender, relative to the
  timeout; the last time the sender's timer could have been restarted (the last ACK that
  advanced snd.una before the timeout) is printed beside it.

Arrival at a node is the frame's pcap time (its first bit on the channel) plus its
serialisation (IP bytes, as concord's channels count them) and the channel's one-way delay, read
from `channels.csv`.

Usage: bench/ns3/trace-receiver-held.py RUN_DIR [--until SECONDS] [--verbose]
(RUN_DIR from `concord run SCENARIO --out RUN_DIR`, the scenario with the record keys above).
"""

import csv
import os
import struct
import sys
from collections import defaultdict


def fail(msg):
    sys.exit(f"trace-receiver-held: {msg}")


def read_pcap(path):
    """(time s, seq, ack, payload length) of each TCP frame of a classic pcap file."""
    with open(path, "rb") as f:
        data = f.read()
    if len(data) < 24:
        fail(f"{path}: not a pcap file (shorter than its header)")
    magic = struct.unpack("<I", data[:4])[0]
    if magic == 0xA1B23C4D:
        scale = 1e-9
    elif magic == 0xA1B2C3D4:
        scale = 1e-6
    else:
        fail(f"{path}: not a little-endian classic pcap (magic {magic:#x}); fix: record with "
             'pcap_format = "pcap"')
    out = []
    off = 24
    while off + 16 <= len(data):
        sec, frac, caplen, wirelen = struct.unpack("<IIII", data[off:off + 16])
        frame = data[off + 16:off + 16 + caplen]
        off += 16 + caplen
        if len(frame) < 14 + 20 or frame[12:14] != b"\x08\x00":
            continue
        ip = frame[14:]
        ihl = (ip[0] & 0x0F) * 4
        if ip[9] != 6:
            continue
        total = struct.unpack(">H", ip[2:4])[0]
        tcp = ip[ihl:]
        seq, ack = struct.unpack(">II", tcp[4:12])
        doff = (tcp[12] >> 4) * 4
        payload = total - ihl - doff
        out.append((sec + frac * scale, seq, ack, payload, wirelen))
    return out


def read_channels(run):
    """Channel name -> (rate bit/s, delay s)."""
    path = os.path.join(run, "channels.csv")
    chans = {}
    with open(path) as f:
        for row in csv.DictReader(f):
            chans[row["channel"]] = row
    return chans


def rate_delay(chans, name):
    row = chans.get(name)
    if row is None:
        fail(f"channels.csv has no channel {name!r}")
    rate = float(row["rate_bps"])
    delay = float(row["delay_s"])
    return rate, delay


def arrivals(frames, rate, delay):
    """Frames with the pcap time replaced by the arrival of their last bit at the far end."""
    return [(t + (w - 14) * 8 / rate + delay, s, a, n) for (t, s, a, n, w) in frames]


def timeouts(run, mss):
    """Flow name -> times at which cwnd fell to one segment from more."""
    out = defaultdict(list)
    last = {}
    with open(os.path.join(run, "cwnd.csv")) as f:
        for row in csv.DictReader(f):
            flow, cwnd = row["flow"], int(row["cwnd_bytes"])
            if cwnd == mss and last.get(flow, 0) > mss:
                out[flow].append(float(row["time_s"]))
            last[flow] = cwnd
    return out


def receiver_at(data_in, t):
    """RCV.NXT and the out-of-order ranges held after every segment that arrived before t."""
    nxt, held = 0, []
    for (ta, seq, _, n) in data_in:
        if ta >= t:
            break
        if n == 0:
            continue
        held.append((seq, seq + n))
        held.sort()
        rest = []
        for s, e in held:
            if s <= nxt:
                nxt = max(nxt, e)
            else:
                rest.append((s, e))
        held = rest
    return nxt, held


def timer_phase(sent, acks_at_sender, t):
    """The sender's timer before the timeout at t: the fast retransmit (the first resend), the
    instant the timer was last restarted (the first partial ACK after the fast retransmit, RFC
    6582 section 3.2 step 5, or else the last ACK of new data before it, RFC 6298 5.3) and the
    partial ACKs before t."""
    top, fr = 0, None
    for (ts, seq, _, n, _) in sent:
        if ts >= t:
            break
        if n > 0 and seq + n <= top:
            fr = ts
            break
        top = max(top, seq + n)
    advances, una = [], 0
    for (ta, _, a, _) in acks_at_sender:
        if ta >= t:
            break
        if a > una:
            advances.append(ta)
            una = a
    if fr is None:
        return None
    partial = [ta for ta in advances if ta > fr]
    before = [ta for ta in advances if ta <= fr]
    armed = partial[0] if partial else (before[-1] if before else None)
    return fr, armed, partial


def med(v):
    v = sorted(x for x in v if x == x)
    return v[len(v) // 2] if v else float("nan")


def main(argv):
    if not argv or argv[0].startswith("-"):
        fail("usage: trace-receiver-held.py RUN_DIR [--until SECONDS] [--verbose]")
    run = argv[0]
    until = float("inf")
    verbose = "--verbose" in argv
    if "--until" in argv:
        until = float(argv[argv.index("--until") + 1])
    chans = read_channels(run)
    mss = 1448
    tos = timeouts(run, mss)
    counts = defaultdict(int)
    gaps = defaultdict(list)
    phases = defaultdict(list)
    for name in sorted(tos, key=lambda n: int(n[1:])):
        i = name[1:]
        pc = {}
        for ch in (f"s{i}->r1", f"r1->s{i}", f"r2->d{i}", f"d{i}->r2"):
            path = os.path.join(run, ch.replace("->", "-") + ".pcap")
            if not os.path.exists(path):
                fail(f"{path} missing; fix: add {ch!r} to record.pcap")
            rate, delay = rate_delay(chans, ch)
            frames = read_pcap(path)
            pc[ch] = (frames, arrivals(frames, rate, delay))
        sent = pc[f"s{i}->r1"][0]
        acks_at_sender = pc[f"r1->s{i}"][1]
        data_at_rcv = pc[f"r2->d{i}"][1]
        acks_left = pc[f"d{i}->r2"][0]
        for t in tos[name]:
            if t > until:
                continue
            una = max((a for (ta, _, a, _) in acks_at_sender if ta <= t), default=0)
            nxt, _ = receiver_at(data_at_rcv, t + 1e-12)
            cls = "receiver_held" if nxt > una else "segment missing"
            counts[cls] += 1
            phase = timer_phase(sent, acks_at_sender, t)
            if phase and phase[1] is not None:
                fr, armed, partial = phase
                phases[cls].append((t, t - fr, t - armed, len(partial),
                                    t - partial[-1] if partial else float("nan")))
            if cls != "receiver_held":
                if verbose:
                    print(f"{name} {t:.6f} missing snd.una={una} rcv.nxt={nxt}")
                continue
            # The copy of the segment at snd.una that reached the receiver before the timeout.
            arrived = max((ta for (ta, seq, _, n) in data_at_rcv
                           if seq == una and n > 0 and ta <= t), default=None)
            if arrived is None:
                counts["segment at snd.una not seen arriving"] += 1
                continue
            copies = sum(1 for (ts, seq, _, n, _) in sent if seq == una and n > 0 and ts < arrived)
            _, holes = receiver_at(data_at_rcv, arrived)
            left = next(((tl, a) for (tl, _, a, _, _) in acks_left
                         if a > una and tl >= arrived - 1e-9), None)
            back = next((ta for (ta, _, a, _) in acks_at_sender if a > una), None)
            wait = max(0.0, left[0] - arrived) if left else None
            counts["  sent more than once" if copies > 1 else "  first copy"] += 1
            counts["  out-of-order data held when it arrived (a gap filled)" if holes
                   else "  no out-of-order data held when it arrived"] += 1
            counts["  ACK at once" if wait is not None and wait < 1e-6 else
                   "  ACK after %s" % ("the delayed-ACK timer" if wait else "the run")] += 1
            counts["  ACK left before the timeout" if left and left[0] <= t
                   else "  ACK left after the timeout"] += 1
            if left:
                gaps["timeout after the ACK left (ms)"].append((t - left[0]) * 1e3)
            if back is not None:
                gaps["ACK reached the sender after the timeout (ms)"].append((back - t) * 1e3)
            if verbose:
                print(f"{name} {t:.6f} held snd.una={una} rcv.nxt={nxt} copies={copies} "
                      f"arrived={arrived:.6f} holes={len(holes)} "
                      f"ack_left={left[0] if left else float('nan'):.6f} "
                      f"ack_at_sender={back if back is not None else float('nan'):.6f}")
    for k in sorted(counts, key=lambda k: (k.startswith(" "), k)):
        print(f"{k}: {counts[k]}")
    for k, v in gaps.items():
        v = sorted(v)
        print(f"{k}: n={len(v)} min={v[0]:.1f} median={v[len(v) // 2]:.1f} max={v[-1]:.1f}")
    print_phases(phases)


def print_phases(phases):
    """Per class: the timeouts' time, and the timer's phase against the fast recovery."""
    for cls in sorted(phases):
        rows = phases[cls]
        print(f"{cls}: n={len(rows)} median time {med([r[0] for r in rows]):.3f} s, "
              f"after fast retransmit {med([r[1] for r in rows]) * 1e3:.0f} ms, "
              f"RTO (timer armed to fired) {med([r[2] for r in rows]) * 1e3:.0f} ms, "
              f"partial ACKs {med([r[3] for r in rows])}, "
              f"after the last partial ACK {med([r[4] for r in rows]) * 1e3:.0f} ms")
        by = defaultdict(int)
        for r in rows:
            by[r[3]] += 1
        rto = sorted(r[2] for r in rows)
        print("  by partial ACKs before the timeout: "
              + ", ".join(f"{n}: {by[n]}" for n in sorted(by))
              + f"; RTO quartiles {rto[len(rto) // 4] * 1e3:.0f} / {rto[len(rto) // 2] * 1e3:.0f}"
              f" / {rto[3 * len(rto) // 4] * 1e3:.0f} ms")


if __name__ == "__main__":
    main(sys.argv[1:])
