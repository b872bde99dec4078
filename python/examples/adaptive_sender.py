"""An adaptive sender: one UDP stream on loopback that asks concordd for grants, sends on each,
feeds its receiver's acknowledgments back as updates, and picks its encoding from the rate the
Congestion Manager reports with ChangeRate.

Like a media server, it never sends faster than its richest encoding needs (--max-rate, 3.5
Mbit/s by default): loopback has no bottleneck, and a sender that takes every grant at once
only finds the socket buffers' limit. Once a second it prints what the CM granted in that
second, the CM's rate (time-weighted mean, min and max of its ChangeRate reports) and the
encoding it picks from that mean, so the rate is seen settling rather than every report.
On loopback the round-trip time is tens of microseconds, so the CM's rate (window over RTT)
runs far above what the sender uses (and jumps as single samples move it), and the encoding,
picked once a second, settles on the richest.

    python3 examples/adaptive_sender.py [--socket PATH] [--seconds 10] [--max-rate 3.5e6]
"""

from __future__ import annotations

import argparse
import asyncio
import struct
import time
from typing import Dict, List, Optional, Tuple

from concord.cm import AsyncClient, ChangeRate, Grant

# The encodings on offer: name and the rate it needs, in bit/s.
ENCODINGS: List[Tuple[str, int]] = [
    ("audio-only", 64_000),
    ("low", 300_000),
    ("medium", 1_000_000),
    ("high", 3_000_000),
]
PACKET = 1200  # bytes of one datagram


def pick_encoding(rate_bps: int) -> str:
    """The richest encoding the rate carries; the poorest if none fits."""
    best = ENCODINGS[0][0]
    for name, need in ENCODINGS:
        if rate_bps >= need:
            best = name
    return best


class Echo(asyncio.DatagramProtocol):
    """The receiver: echoes each datagram's 8-byte send time and its length."""

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]

    def datagram_received(self, data: bytes, addr: Tuple[str, int]) -> None:
        self.transport.sendto(data[:8] + struct.pack(">Q", len(data)), addr)  # type: ignore


class Acks(asyncio.DatagramProtocol):
    """The sender's socket: each acknowledgment becomes an update."""

    def __init__(self, on_ack) -> None:  # type: ignore[no-untyped-def]
        self.on_ack = on_ack

    def datagram_received(self, data: bytes, addr: Tuple[str, int]) -> None:
        if len(data) == 16:
            sent_at, nbytes = struct.unpack(">dQ", data)
            self.on_ack(time.monotonic() - sent_at, nbytes)


class Second:
    """What happened in one second of the run: bytes granted and the CM's rate over time."""

    def __init__(self, start: float, rate_bps: int) -> None:
        self.start = start
        self.granted = 0
        self.rate = rate_bps
        self.since = start
        self.weighted = 0.0  # rate x seconds
        self.low = rate_bps
        self.high = rate_bps

    def change(self, now: float, rate_bps: int) -> None:
        self.weighted += self.rate * (now - self.since)
        self.rate, self.since = rate_bps, now
        self.low, self.high = min(self.low, rate_bps), max(self.high, rate_bps)

    def mean(self, now: float) -> float:
        """The time-weighted mean rate from the start of the second to `now`, bit/s."""
        span = now - self.start
        return (self.weighted + self.rate * (now - self.since)) / span if span > 0 else self.rate


async def run(socket_path: Optional[str], seconds: float,
              max_rate: float = 3.5e6) -> Dict[str, object]:
    """Sends for `seconds`; returns bytes sent, the encodings chosen and the last mean rate."""
    loop = asyncio.get_running_loop()
    rx, _ = await loop.create_datagram_endpoint(Echo, local_addr=("127.0.0.1", 0))
    rport = rx.get_extra_info("sockname")[1]
    cm = await AsyncClient.connect(socket_path)
    updates: List["asyncio.Task[None]"] = []
    flow_box: list = []

    def on_ack(rtt: float, nbytes: int) -> None:
        if flow_box:
            updates.append(asyncio.ensure_future(flow_box[0].update(nbytes, rtt_s=rtt)))

    tx, _ = await loop.create_datagram_endpoint(lambda: Acks(on_ack),
                                                remote_addr=("127.0.0.1", rport))
    sport = tx.get_extra_info("sockname")[1]
    flow = await cm.open("127.0.0.1", rport, sport)
    flow_box.append(flow)
    # Hear of every change of more than 20 %.
    await flow.thresh(0.8, 1.2, 0.5, 2.0)
    sent = 0
    chosen: List[str] = []
    start = loop.time()
    second = Second(start, 0)
    mean = 0.0
    # The earliest time the next datagram may leave, at max_rate.
    next_send = start
    print(f"{'t (s)':>5}  {'granted (Mbit/s)':>16}  {'CM rate mean (min..max), Mbit/s':>34}  encoding")
    await flow.request(2 * PACKET)
    end = start + seconds
    try:
        while True:
            now = loop.time()
            if now >= second.start + 1.0:
                mean = second.mean(now)
                encoding = pick_encoding(int(mean))
                chosen.append(encoding)
                spread = f"{mean / 1e6:.3f} ({second.low / 1e6:.3f}..{second.high / 1e6:.3f})"
                print(f"{round(now - start):>5}  {second.granted * 8 / (now - second.start) / 1e6:>16.3f}"
                      f"  {spread:>34}  {encoding}")
                second = Second(now, second.rate)
            left = min(end, second.start + 1.0) - now
            if now >= end:
                break
            try:
                event = await asyncio.wait_for(cm.next_event(), timeout=max(left, 0.001))
            except asyncio.TimeoutError:
                continue
            if isinstance(event, ChangeRate) and event.flow == flow.id:
                second.change(loop.time(), event.rate_bps)
            elif isinstance(event, Grant) and event.flow == flow.id:
                n = max(16, min(event.nbytes, PACKET))
                wait = next_send - loop.time()
                if wait > 0:
                    await asyncio.sleep(wait)
                next_send = max(next_send, loop.time()) + n * 8 / max_rate
                tx.sendto(struct.pack(">d", time.monotonic()) + bytes(n - 8))
                sent += n
                second.granted += n
                await flow.notify(n)
                await flow.request(PACKET)
    finally:
        for t in updates:
            t.cancel()
        await cm.close()
        tx.close()
        rx.close()
    return {"sent": sent, "encodings": chosen, "rate_bps": mean}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--socket", default=None, help="concordd's socket (default: its default)")
    ap.add_argument("--seconds", type=float, default=10.0)
    ap.add_argument("--max-rate", type=float, default=3.5e6,
                    help="the most the sender ever sends, bit/s (its richest encoding's need)")
    args = ap.parse_args()
    result = asyncio.run(run(args.socket, args.seconds, args.max_rate))
    print(f"sent {result['sent']} bytes; encodings {result['encodings']}")


if __name__ == "__main__":
    main()
