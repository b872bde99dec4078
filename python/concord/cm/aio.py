"""An asyncio client of concordd.

    cm = await AsyncClient.connect()
    flow = await cm.open("192.0.2.7", 5004, 40000)
    await flow.request(1500)
    event = await cm.next_event()
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Callable, Dict, Optional, Union

from . import protocol as p
from .client import (Disconnected, UntrustedSocket, check_reply, default_socket_path,
                     verify_peer, verify_socket)
from .protocol import Event, LossMode, QueryResult, Status


class AsyncFlow:
    """An open flow of an AsyncClient."""

    def __init__(self, client: "AsyncClient", flow_id: int) -> None:
        self.client = client
        self.id = flow_id

    async def request(self, nbytes: int) -> None:
        """cm_request: the flow would like to send `nbytes` more bytes; grants follow."""
        await self.client._call(lambda i: p.encode_flow_u64(p.K_REQUEST, i, self.id, nbytes))

    async def notify(self, nsent: int) -> None:
        """cm_notify: the flow sent `nsent` bytes on its oldest grant (0: unused)."""
        await self.client._call(lambda i: p.encode_flow_u64(p.K_NOTIFY, i, self.id, nsent))

    async def update(self, nrecd: int, nlost: int = 0,
                     loss_mode: LossMode = LossMode.NO_CONGESTION,
                     rtt_s: Optional[float] = None) -> None:
        """cm_update: bytes received and lost since the last update, an RTT sample in seconds."""
        rtt_ns = None if rtt_s is None else max(0, int(rtt_s * 1e9))
        await self.client._call(
            lambda i: p.encode_update(i, self.id, nrecd, nlost, loss_mode, rtt_ns))

    async def query(self) -> QueryResult:
        """cm_query: share in bit/s, srtt and rttdev in ns (None before an estimate)."""
        r = await self.client._call(lambda i: p.encode_flow(p.K_QUERY, i, self.id))
        assert isinstance(r.value, QueryResult)
        return r.value

    async def thresh(self, rate_down: float, rate_up: float, rtt_down: float,
                     rtt_up: float) -> None:
        """cm_thresh."""
        await self.client._call(
            lambda i: p.encode_thresh(i, self.id, rate_down, rate_up, rtt_down, rtt_up))

    async def macroflow(self) -> int:
        """cm_getmacroflow."""
        r = await self.client._call(lambda i: p.encode_flow(p.K_GET_MACROFLOW, i, self.id))
        return int(r.value)  # type: ignore[arg-type]

    async def set_macroflow(self, target: Optional[int]) -> int:
        """cm_setmacroflow: into `target`, or a new macroflow if None."""
        r = await self.client._call(lambda i: p.encode_set_macroflow(i, self.id, target))
        return int(r.value)  # type: ignore[arg-type]

    async def set_feedback(self, explicit: bool) -> None:
        """Explicit: the daemon probes the receiving host's daemon instead of using updates."""
        await self.client._call(lambda i: p.encode_set_feedback(i, self.id, explicit))

    async def close(self) -> None:
        """cm_close."""
        await self.client._call(lambda i: p.encode_flow(p.K_CLOSE, i, self.id))


class AsyncClient:
    """An asyncio connection to concordd: a reader task hands replies to their callers and
    queues events for next_event()."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self._reader = reader
        self._writer = writer
        self._pending: Dict[int, "asyncio.Future[p.Reply]"] = {}
        self._events: "asyncio.Queue[Optional[Event]]" = asyncio.Queue()
        self._next_id = 1
        self._closed: Optional[str] = None
        self._task = asyncio.ensure_future(self._read_loop())

    @classmethod
    async def connect(cls, path: Union[str, Path, None] = None) -> "AsyncClient":
        """Connects to the daemon at `path` (default: default_socket_path())."""
        target = Path(path) if path is not None else default_socket_path()
        verify_socket(target)
        reader, writer = await asyncio.open_unix_connection(str(target))
        sock = writer.get_extra_info("socket")
        try:
            verify_peer(sock, target)
        except UntrustedSocket:
            writer.close()
            raise
        return cls(reader, writer)

    async def close(self) -> None:
        """Closes the connection; the daemon closes this client's flows."""
        self._task.cancel()
        self._writer.close()
        try:
            await self._writer.wait_closed()
        except (OSError, asyncio.CancelledError):
            pass

    async def open(self, dst: str, dst_port: int, src_port: int, flow_id: int = 0) -> AsyncFlow:
        """cm_open of the flow from `src_port` to `dst`:`dst_port`."""
        r = await self._call(lambda i: p.encode_open(i, dst, dst_port, src_port, flow_id))
        return AsyncFlow(self, int(r.value))  # type: ignore[arg-type]

    async def received(self, src: str, src_port: int, dst_port: int, nbytes: int,
                       ce: bool = False, flow_id: int = 0) -> None:
        """Reports one data packet received from `src` (the receiver half of the probes)."""
        await self._call(
            lambda i: p.encode_received(i, src, src_port, dst_port, flow_id, nbytes, ce))

    async def status(self) -> Status:
        """The daemon's counters."""
        r = await self._call(p.encode_status)
        assert isinstance(r.value, Status)
        return r.value

    async def next_event(self) -> Event:
        """The next event; raises Disconnected once the connection is gone."""
        e = await self._events.get()
        if e is None:
            self._events.put_nowait(None)
            raise Disconnected(self._closed or "closed")
        return e

    async def _call(self, encode: Callable[[int], bytes]) -> p.Reply:
        if self._closed is not None:
            raise Disconnected(self._closed)
        req_id = self._next_id
        self._next_id = (self._next_id + 1) & 0xFFFFFFFF
        fut: "asyncio.Future[p.Reply]" = asyncio.get_running_loop().create_future()
        self._pending[req_id] = fut
        self._writer.write(encode(req_id))
        await self._writer.drain()
        return check_reply(await fut)

    async def _read_loop(self) -> None:
        frames = p.FrameBuffer()
        why = "the daemon closed the connection"
        try:
            while True:
                data = await self._reader.read(65536)
                if not data:
                    break
                frames.extend(data)
                while (body := frames.next_frame()) is not None:
                    msg = p.decode_server(body)
                    if isinstance(msg, p.Reply):
                        fut = self._pending.pop(msg.id, None)
                        if fut is not None and not fut.done():
                            fut.set_result(msg)
                    elif isinstance(msg, p.Fatal):
                        why = f"closed by the daemon: {msg.message} (code {msg.code})"
                        return
                    else:
                        self._events.put_nowait(msg)
        except p.ProtocolError as e:
            why = f"malformed frame from the daemon: {e}"
        except (OSError, asyncio.CancelledError):
            why = "connection closed"
        finally:
            self._closed = why
            for fut in self._pending.values():
                if not fut.done():
                    fut.set_exception(Disconnected(why))
            self._pending.clear()
            self._events.put_nowait(None)
