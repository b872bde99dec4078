"""The applications of the test bed acceptance test, run inside the namespaces.

    testbed_app.py send SOCKET DST_IP DST_PORT SECONDS   sends on every grant, explicit feedback
    testbed_app.py recv SOCKET BIND_IP PORT SECONDS      reports every datagram to its daemon
Prints one line of JSON at the end.
"""

import json
import socket
import sys
import time

from concord_cm import Client, Grant


def send(path: str, dst: str, port: int, seconds: float) -> None:
    udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    udp.connect((dst, port))
    sport = udp.getsockname()[1]
    sent = 0
    with Client(path, timeout=5) as cm:
        flow = cm.open(dst, port, sport)
        flow.set_feedback(True)
        flow.request(1 << 40)
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            e = cm.next_event(timeout=0.2)
            if isinstance(e, Grant):
                n = max(1, min(e.nbytes, 1400))
                try:
                    udp.send(bytes(n))
                    sent += n
                    flow.notify(n)
                except OSError:
                    flow.notify(0)
        q = flow.query()
    print(json.dumps({"sent": sent, "rate_bps": q.rate_bps, "srtt_ns": q.srtt_ns}))


def recv(path: str, bind: str, port: int, seconds: float) -> None:
    udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    udp.bind((bind, port))
    udp.settimeout(0.2)
    got = 0
    with Client(path, timeout=5) as cm:
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            try:
                data, (ip, sport) = udp.recvfrom(2048)
            except socket.timeout:
                continue
            got += len(data)
            cm.received(ip, sport, port, len(data))
    print(json.dumps({"received": got}))


if __name__ == "__main__":
    mode, path, ip, port, seconds = sys.argv[1:6]
    if mode == "send":
        send(path, ip, int(port), float(seconds))
    else:
        recv(path, ip, int(port), float(seconds))
