"""The local protocol of concordd, version 1 (docs/cm-protocol.md), in pure Python.

Frames: a u32 big-endian length, then version (1), kind, payload; integers big-endian.
Units on the wire: sizes in bytes, rates in bits per second, durations in nanoseconds.
"""

from __future__ import annotations

import enum
import ipaddress
import struct
from dataclasses import dataclass
from typing import Optional, Union

VERSION = 1
"""The protocol version, the first byte of every frame body."""
MAX_FRAME = 1024
"""The largest frame body, in bytes (the length prefix excluded)."""
MAX_MESSAGE = 512
"""The longest error message, in bytes of UTF-8."""

K_OPEN, K_REQUEST, K_NOTIFY, K_UPDATE, K_QUERY = 0x01, 0x02, 0x03, 0x04, 0x05
K_CLOSE, K_SET_MACROFLOW, K_GET_MACROFLOW, K_THRESH, K_STATUS = 0x06, 0x07, 0x08, 0x09, 0x0A
K_RECEIVED, K_SET_FEEDBACK = 0x0B, 0x0C
K_OK, K_OPENED, K_QUERY_REPLY, K_MACROFLOW, K_STATUS_REPLY, K_ERROR = (
    0x81, 0x82, 0x83, 0x84, 0x85, 0x8F)
K_GRANT, K_CHANGE_RATE, K_GRANT_EXPIRED, K_FATAL = 0xC1, 0xC2, 0xC3, 0xFF


class LossMode(enum.IntEnum):
    """How congestion showed itself (RFC 3124 cm_update loss modes)."""

    NO_CONGESTION = 0
    TRANSIENT = 1
    PERSISTENT = 2
    ECN = 3


class ErrorCode(enum.IntEnum):
    """Why the daemon refused a request or closed the connection."""

    UNKNOWN_FLOW = 1
    UNKNOWN_MACROFLOW = 2
    DUPLICATE_FLOW = 3
    INVALID_WEIGHT = 4
    INVALID_THRESH = 5
    OUT_OF_HANDLES = 6
    TOO_MANY_FLOWS = 7
    INVALID_REPORT = 8
    MALFORMED = 16
    UNAVAILABLE = 17


class ProtocolError(Exception):
    """Bytes from the daemon that do not decode."""


@dataclass(frozen=True)
class Grant:
    """app_notify: the flow may send up to `nbytes` bytes now, then reports them with notify."""

    flow: int
    nbytes: int


@dataclass(frozen=True)
class ChangeRate:
    """change_rate: the flow's share (bit/s) or the RTT (ns) changed beyond its thresholds."""

    flow: int
    rate_bps: int
    srtt_ns: int
    rttdev_ns: int


@dataclass(frozen=True)
class GrantExpired:
    """A grant not notified within its lifetime; it may no longer be used."""

    flow: int
    nbytes: int


Event = Union[Grant, ChangeRate, GrantExpired]


@dataclass(frozen=True)
class QueryResult:
    """cm_query: the flow's share in bit/s, srtt and rttdev in ns; None before an estimate."""

    rate_bps: Optional[int]
    srtt_ns: Optional[int]
    rttdev_ns: Optional[int]


@dataclass(frozen=True)
class Status:
    """The daemon's counters."""

    clients: int
    flows: int
    malformed_frames: int
    grants: int
    grants_expired: int
    events_dropped: int


@dataclass(frozen=True)
class Reply:
    """The answer to request `id`: `kind` is the reply's kind byte, `value` its content
    (flow id, QueryResult, macroflow id, Status, or (code, message) for an error)."""

    id: int
    kind: int
    value: object


@dataclass(frozen=True)
class Fatal:
    """The daemon is closing the connection."""

    code: int
    message: str


ServerMessage = Union[Reply, Event, Fatal]


def _frame(kind: int, payload: bytes) -> bytes:
    body = bytes((VERSION, kind)) + payload
    return struct.pack(">I", len(body)) + body


def _opt(v: Optional[int]) -> bytes:
    return struct.pack(">BQ", 0, 0) if v is None else struct.pack(">BQ", 1, v)


def encode_open(req_id: int, dst: str, dst_port: int, src_port: int, flow_id: int = 0) -> bytes:
    """cm_open of the flow from `src_port` to `dst`:`dst_port` (`dst` an IPv4 address)."""
    addr = int(ipaddress.IPv4Address(dst))
    return _frame(K_OPEN, struct.pack(">IIHHI", req_id, addr, dst_port, src_port, flow_id))


def encode_flow_u64(kind: int, req_id: int, flow: int, value: int) -> bytes:
    """request (nbytes) or notify (nsent)."""
    return _frame(kind, struct.pack(">IIQ", req_id, flow, value))


def encode_flow(kind: int, req_id: int, flow: int) -> bytes:
    """query, close or get_macroflow."""
    return _frame(kind, struct.pack(">II", req_id, flow))


def encode_update(req_id: int, flow: int, nrecd: int, nlost: int, loss_mode: LossMode,
                  rtt_ns: Optional[int]) -> bytes:
    """cm_update: bytes received and lost since the last update, an RTT sample in ns or None."""
    return _frame(K_UPDATE, struct.pack(">IIQQB", req_id, flow, nrecd, nlost, int(loss_mode))
                  + _opt(rtt_ns))


def encode_set_macroflow(req_id: int, flow: int, target: Optional[int]) -> bytes:
    """cm_setmacroflow: into `target`, or a new macroflow if None."""
    flag, m = (0, 0) if target is None else (1, target)
    return _frame(K_SET_MACROFLOW, struct.pack(">IIBI", req_id, flow, flag, m))


def encode_thresh(req_id: int, flow: int, rate_down: float, rate_up: float, rtt_down: float,
                  rtt_up: float) -> bytes:
    """cm_thresh: the factors beyond which the flow hears of changes."""
    return _frame(K_THRESH, struct.pack(">IIdddd", req_id, flow, rate_down, rate_up, rtt_down,
                                        rtt_up))


def encode_status(req_id: int) -> bytes:
    """The daemon's counters."""
    return _frame(K_STATUS, struct.pack(">I", req_id))


def encode_received(req_id: int, src: str, src_port: int, dst_port: int, flow_id: int,
                    nbytes: int, ce: bool) -> bytes:
    """The receiving host's report of one data packet from `src` (for the probe protocol)."""
    addr = int(ipaddress.IPv4Address(src))
    return _frame(K_RECEIVED, struct.pack(">IIHHIQB", req_id, addr, src_port, dst_port, flow_id,
                                          nbytes, 1 if ce else 0))


def encode_set_feedback(req_id: int, flow: int, explicit: bool) -> bytes:
    """Feedback from the application's updates (implicit) or from probes (explicit)."""
    return _frame(K_SET_FEEDBACK, struct.pack(">IIB", req_id, flow, 1 if explicit else 0))


class _Reader:
    def __init__(self, body: bytes) -> None:
        self.body = body
        self.pos = 2

    def take(self, fmt: str) -> tuple:
        n = struct.calcsize(fmt)
        if self.pos + n > len(self.body):
            raise ProtocolError(f"truncated: needs {self.pos + n} bytes, has {len(self.body)}")
        v = struct.unpack_from(fmt, self.body, self.pos)
        self.pos += n
        return v

    def opt(self) -> Optional[int]:
        flag, v = self.take(">BQ")
        if flag not in (0, 1):
            raise ProtocolError(f"bad flag byte {flag}")
        return v if flag else None

    def text(self) -> str:
        (n,) = self.take(">H")
        if n > MAX_MESSAGE or self.pos + n > len(self.body):
            raise ProtocolError("bad error message length")
        raw = self.body[self.pos:self.pos + n]
        self.pos += n
        try:
            return raw.decode("utf-8")
        except UnicodeDecodeError:
            raise ProtocolError("error message is not UTF-8") from None

    def end(self) -> None:
        if self.pos != len(self.body):
            raise ProtocolError(f"{len(self.body) - self.pos} bytes after the message")


def decode_server(body: bytes) -> ServerMessage:
    """Decodes a frame body from the daemon; raises ProtocolError, never anything else."""
    if len(body) < 2:
        raise ProtocolError("truncated header")
    if body[0] != VERSION:
        raise ProtocolError(f"unsupported protocol version {body[0]}")
    kind = body[1]
    r = _Reader(body)
    msg: ServerMessage
    if kind == K_GRANT:
        msg = Grant(*r.take(">IQ"))
    elif kind == K_CHANGE_RATE:
        msg = ChangeRate(*r.take(">IQQQ"))
    elif kind == K_GRANT_EXPIRED:
        msg = GrantExpired(*r.take(">IQ"))
    elif kind == K_FATAL:
        (code,) = r.take(">B")
        msg = Fatal(code, r.text())
    elif kind in (K_OK, K_OPENED, K_QUERY_REPLY, K_MACROFLOW, K_STATUS_REPLY, K_ERROR):
        (req_id,) = r.take(">I")
        value: object = None
        if kind in (K_OPENED, K_MACROFLOW):
            (value,) = r.take(">I")
        elif kind == K_QUERY_REPLY:
            value = QueryResult(r.opt(), r.opt(), r.opt())
        elif kind == K_STATUS_REPLY:
            value = Status(*r.take(">IIQQQQ"))
        elif kind == K_ERROR:
            (code,) = r.take(">B")
            value = (code, r.text())
        msg = Reply(req_id, kind, value)
    else:
        raise ProtocolError(f"unknown message kind 0x{kind:02x}")
    r.end()
    return msg


class FrameBuffer:
    """Splits a byte stream into frame bodies."""

    def __init__(self) -> None:
        self._buf = bytearray()

    def extend(self, data: bytes) -> None:
        """Appends received bytes."""
        self._buf += data

    def next_frame(self) -> Optional[bytes]:
        """The next whole body, None if more bytes are needed; ProtocolError on a bad length."""
        if len(self._buf) < 4:
            return None
        (n,) = struct.unpack_from(">I", self._buf, 0)
        if not 2 <= n <= MAX_FRAME:
            raise ProtocolError(f"frame length {n} is outside 2..={MAX_FRAME}")
        if len(self._buf) < 4 + n:
            return None
        body = bytes(self._buf[4:4 + n])
        del self._buf[:4 + n]
        return body
