"""An adaptive sender: one UDP stream on loopback that asks concordd for grants, sends on each,
feeds its receiver's acknowledgments back as updates, and picks its encoding from the rate the
Congestion Manager reports with ChangeRate.

    python3 examples/adaptive_sender.py [--socket PATH] [--seconds 3]
"""

from __future__ import annotations

import argparse
import asyncio
import struct
import time
from typing import Dict, List, Optional, Tuple

from concord_cm import AsyncClient, ChangeRate, Grant

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


async def run(socket_path: Optional[str], seconds: float) -> Dict[str, object]:
    """Sends for `seconds`; returns bytes sent, the encodings chosen and the last rate."""
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
    rate = 0
    await flow.request(2 * PACKET)
    end = loop.time() + seconds
    try:
        while True:
            left = end - loop.time()
            if left <= 0:
                break
            try:
                event = await asyncio.wait_for(cm.next_event(), timeout=left)
            except asyncio.TimeoutError:
                break
            if isinstance(event, ChangeRate) and event.flow == flow.id:
                rate = event.rate_bps
                encoding = pick_encoding(rate)
                if not chosen or chosen[-1] != encoding:
                    chosen.append(encoding)
                    print(f"rate {rate / 1e6:.3f} Mbit/s: encoding {encoding}")
            elif isinstance(event, Grant) and event.flow == flow.id:
                n = max(16, min(event.nbytes, PACKET))
                tx.sendto(struct.pack(">d", time.monotonic()) + bytes(n - 8))
                sent += n
                await flow.notify(n)
                await flow.request(PACKET)
    finally:
        for t in updates:
            t.cancel()
        await cm.close()
        tx.close()
        rx.close()
    return {"sent": sent, "encodings": chosen, "rate_bps": rate}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--socket", default=None, help="concordd's socket (default: its default)")
    ap.add_argument("--seconds", type=float, default=3.0)
    args = ap.parse_args()
    result = asyncio.run(run(args.socket, args.seconds))
    print(f"sent {result['sent']} bytes; encodings {result['encodings']}")


if __name__ == "__main__":
    main()
