"""The Python clients against a real concordd."""

from __future__ import annotations

import asyncio
import random
import socket
import struct
import time
from pathlib import Path

import pytest

from concord.cm import (AsyncClient, ChangeRate, Client, CmError, ErrorCode, Grant, LossMode,
                        ProtocolError)
from concord.cm import protocol as p


def test_a_request_is_granted_and_notified(daemon: Path) -> None:
    with Client(daemon, timeout=5) as cm:
        flow = cm.open("127.0.0.1", 5004, 40000)
        assert flow.query().rate_bps is None
        flow.update(0, rtt_s=0.02)
        q = flow.query()
        # Two MTUs per 20 ms.
        assert q.rate_bps == 1_200_000
        assert q.srtt_ns == 20_000_000
        flow.request(1500)
        grants = []
        deadline = time.monotonic() + 5
        while not grants and time.monotonic() < deadline:
            e = cm.next_event(timeout=1)
            if isinstance(e, Grant):
                grants.append(e)
        assert grants == [Grant(flow.id, 1500)]
        flow.notify(1500)
        flow.update(1500, loss_mode=LossMode.NO_CONGESTION, rtt_s=0.02)
        assert cm.status().flows == 1
        flow.set_feedback(True)
        flow.set_feedback(False)
        cm.received("127.0.0.1", 40000, 5004, 1500)
        mf = flow.macroflow()
        assert flow.set_macroflow(None) != mf
        flow.close()
        assert cm.status().flows == 0


def test_refusals_raise_typed_errors(daemon: Path) -> None:
    with Client(daemon, timeout=5) as a, Client(daemon, timeout=5) as b:
        fa = a.open("127.0.0.1", 1, 1)
        with pytest.raises(CmError) as e:
            b.open("127.0.0.1", 1, 1)
        assert e.value.code == ErrorCode.DUPLICATE_FLOW
        with pytest.raises(CmError) as e:
            fa.thresh(2.0, 1.1, 0.5, 2.0)
        assert e.value.code == ErrorCode.INVALID_THRESH
        fa.close()
        with pytest.raises(CmError) as e:
            fa.request(10)
        assert e.value.code == ErrorCode.UNKNOWN_FLOW


def test_a_client_that_goes_away_has_its_flows_closed(daemon: Path) -> None:
    gone = Client(daemon, timeout=5)
    for port in range(20):
        gone.open("127.0.0.1", 7000, port)
    with Client(daemon, timeout=5) as watcher:
        assert watcher.status().flows == 20
        gone._sock.close()  # abruptly, as a dying process would
        deadline = time.monotonic() + 1
        while watcher.status().flows:
            assert time.monotonic() < deadline, "flows still open after 1 s"
            time.sleep(0.005)
        watcher.open("127.0.0.1", 7000, 3)


def test_a_malformed_frame_closes_the_connection_and_is_counted(daemon: Path) -> None:
    with socket.socket(socket.AF_UNIX) as s:
        s.settimeout(5)
        s.connect(str(daemon))
        s.sendall(struct.pack(">IBB", 2, 1, 0x70))
        data = b""
        while chunk := s.recv(4096):
            data += chunk
        frames = p.FrameBuffer()
        frames.extend(data)
        body = frames.next_frame()
        assert body is not None
        fatal = p.decode_server(body)
        assert isinstance(fatal, p.Fatal)
        assert fatal.code == ErrorCode.MALFORMED
        assert "unknown message kind" in fatal.message
        assert frames.next_frame() is None
    with Client(daemon, timeout=5) as cm:
        assert cm.status().malformed_frames == 1


def test_random_bytes_raise_only_protocol_errors() -> None:
    rng = random.Random(5)
    kinds = [p.K_OK, p.K_OPENED, p.K_QUERY_REPLY, p.K_STATUS_REPLY, p.K_ERROR, p.K_GRANT,
             p.K_CHANGE_RATE, p.K_FATAL]
    ok = 0
    for i in range(20_000):
        body = bytearray(rng.getrandbits(8) for _ in range(rng.randrange(40)))
        if i % 2 == 0 and len(body) >= 2:
            body[0], body[1] = p.VERSION, rng.choice(kinds)
        try:
            p.decode_server(bytes(body))
            ok += 1
        except ProtocolError:
            pass
    assert ok > 0


def test_requests_encode_as_the_document_prints() -> None:
    assert p.encode_open(1, "192.0.2.7", 5004, 40000) == bytes(
        [0, 0, 0, 18, 1, 1, 0, 0, 0, 1, 192, 0, 2, 7, 0x13, 0x8C, 0x9C, 0x40, 0, 0, 0, 0])
    assert p.decode_server(bytes([1, 0x82, 0, 0, 0, 1, 0, 0, 0, 0])) == p.Reply(1, p.K_OPENED, 0)


def test_the_asyncio_client_gets_grants_and_rate_changes(daemon: Path) -> None:
    async def go() -> None:
        cm = await AsyncClient.connect(daemon)
        flow = await cm.open("127.0.0.1", 6000, 1)
        await flow.update(0, rtt_s=0.01)
        await flow.request(3000)
        seen = set()
        while not {"grant", "rate"} <= seen:
            e = await asyncio.wait_for(cm.next_event(), timeout=5)
            if isinstance(e, Grant):
                seen.add("grant")
                await flow.notify(e.nbytes)
            elif isinstance(e, ChangeRate):
                assert e.rate_bps > 0
                seen.add("rate")
        q = await flow.query()
        assert q.srtt_ns == 10_000_000
        assert (await cm.status()).flows == 1
        await cm.close()

    asyncio.run(asyncio.wait_for(go(), timeout=20))


def test_the_adaptive_sender_example_picks_encodings(daemon: Path) -> None:
    import adaptive_sender

    assert adaptive_sender.pick_encoding(10) == "audio-only"
    assert adaptive_sender.pick_encoding(1_500_000) == "medium"
    result = asyncio.run(asyncio.wait_for(adaptive_sender.run(str(daemon), 1.0), timeout=20))
    assert result["sent"] > 0
    assert result["encodings"]


def test_a_client_reconnects_after_the_daemon_restarts(restartable_daemon) -> None:  # type: ignore[no-untyped-def]
    from concord.cm import Disconnected
    with Client(restartable_daemon.sock, timeout=5) as cm:
        cm.open("127.0.0.1", 5004, 40000)
        assert cm.status().flows == 1
        restartable_daemon.restart()
        with pytest.raises(Disconnected):
            cm.status()
        cm.reconnect(within=5)
        assert cm.status().flows == 0, "the restarted daemon knows no old flow"
        flow = cm.open("127.0.0.1", 5004, 40000)
        flow.update(0, rtt_s=0.02)
        flow.request(1500)
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline:
            e = cm.next_event(timeout=0.5)
            if isinstance(e, Grant) and e.flow == flow.id:
                break
        else:
            pytest.fail("no grant after reconnecting")
