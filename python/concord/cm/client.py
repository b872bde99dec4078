"""A blocking client of concordd.

    from concord.cm import Client
    with Client() as cm:
        flow = cm.open("192.0.2.7", 5004, 40000)
        flow.request(1500)
        event = cm.next_event(timeout=1.0)   # Grant(flow=..., nbytes=1500)
        ...send...
        flow.notify(1500)
"""

from __future__ import annotations

import collections
import os
import socket
import stat
import struct
import time
from pathlib import Path
from typing import Deque, Optional, Union

from . import protocol as p
from .protocol import Event, LossMode, QueryResult, Status

SOCKET_ENV = "CONCORD_CM_SOCKET"
"""The environment variable that names the daemon's socket."""


class CmError(Exception):
    """The daemon refused a request; nothing changed. `code` is a protocol.ErrorCode value."""

    def __init__(self, code: int, message: str) -> None:
        super().__init__(f"{message} (code {code})")
        self.code = code
        self.message = message


class Disconnected(Exception):
    """The connection to the daemon is gone."""


def default_socket_path() -> Path:
    """$CONCORD_CM_SOCKET, else $XDG_RUNTIME_DIR/concord/cm.sock, else
    /run/user/<uid>/concord/cm.sock when that runtime directory is the user's, else for root
    /run/concord/cm.sock, else /tmp/concord-<uid>/cm.sock (as concordd chooses)."""
    env = os.environ.get(SOCKET_ENV)
    if env:
        return Path(env)
    run = os.environ.get("XDG_RUNTIME_DIR")
    if run:
        return Path(run) / "concord" / "cm.sock"
    uid = os.geteuid()
    run_user = Path(f"/run/user/{uid}")
    try:
        st = os.lstat(run_user)
        if stat.S_ISDIR(st.st_mode) and st.st_uid == uid:
            return run_user / "concord" / "cm.sock"
    except OSError:
        pass
    if uid == 0:
        return Path("/run/concord/cm.sock")
    return Path(f"/tmp/concord-{uid}/cm.sock")


def check_reply(reply: p.Reply) -> p.Reply:
    """Raises CmError for an error reply."""
    if reply.kind == p.K_ERROR:
        code, message = reply.value  # type: ignore[misc]
        raise CmError(code, message)
    return reply


class UntrustedSocket(Exception):
    """The socket is not this user's daemon's: another user owns its directory, the socket or
    the process listening on it. Nothing was sent."""


def verify_socket(path: Path) -> None:
    """Checks, before connecting, that `path` is a socket owned by this user in a directory
    (not a symbolic link) owned by this user with mode 700; raises UntrustedSocket if not."""
    uid = os.geteuid()
    hint = ("Another user may be posing as concordd; start concordd yourself, or set "
            "XDG_RUNTIME_DIR or CONCORD_CM_SOCKET to a private path.")
    parent = path.parent
    st = os.lstat(parent)
    if not stat.S_ISDIR(st.st_mode):
        raise UntrustedSocket(f"refusing to connect to {path}: {parent} is not a directory. {hint}")
    if st.st_uid != uid:
        raise UntrustedSocket(f"refusing to connect to {path}: its directory {parent} belongs to "
                              f"uid {st.st_uid}, not to you (uid {uid}). {hint}")
    if st.st_mode & 0o077:
        raise UntrustedSocket(f"refusing to connect to {path}: its directory {parent} has mode "
                              f"{st.st_mode & 0o777:o}; it must be 700. {hint}")
    st = os.lstat(path)
    if not stat.S_ISSOCK(st.st_mode):
        raise UntrustedSocket(f"refusing to connect to {path}: it is not a socket. {hint}")
    if st.st_uid != uid:
        raise UntrustedSocket(f"refusing to connect to {path}: it belongs to uid {st.st_uid}, "
                              f"not to you (uid {uid}). {hint}")


def verify_peer(sock: socket.socket, path: Path) -> None:
    """Checks with SO_PEERCRED that the process listening on `sock` runs as this user."""
    creds = sock.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
    _pid, peer, _gid = struct.unpack("3i", creds)
    if peer != os.geteuid():
        raise UntrustedSocket(f"refusing {path}: the process listening there runs as uid {peer}, "
                              f"not as you (uid {os.geteuid()})")


class Flow:
    """An open flow of a blocking Client."""

    def __init__(self, client: "Client", flow_id: int) -> None:
        self.client = client
        self.id = flow_id

    def request(self, nbytes: int) -> None:
        """cm_request: the flow would like to send `nbytes` more bytes; grants follow."""
        self.client._call(lambda i: p.encode_flow_u64(p.K_REQUEST, i, self.id, nbytes))

    def notify(self, nsent: int) -> None:
        """cm_notify: the flow sent `nsent` bytes on its oldest grant (0: unused)."""
        self.client._call(lambda i: p.encode_flow_u64(p.K_NOTIFY, i, self.id, nsent))

    def update(self, nrecd: int, nlost: int = 0, loss_mode: LossMode = LossMode.NO_CONGESTION,
               rtt_s: Optional[float] = None) -> None:
        """cm_update: bytes received and lost since the last update, an RTT sample in seconds."""
        rtt_ns = None if rtt_s is None else max(0, int(rtt_s * 1e9))
        self.client._call(lambda i: p.encode_update(i, self.id, nrecd, nlost, loss_mode, rtt_ns))

    def query(self) -> QueryResult:
        """cm_query: the flow's share in bit/s, srtt and rttdev in ns (None before an estimate)."""
        r = self.client._call(lambda i: p.encode_flow(p.K_QUERY, i, self.id))
        assert isinstance(r.value, QueryResult)
        return r.value

    def thresh(self, rate_down: float, rate_up: float, rtt_down: float, rtt_up: float) -> None:
        """cm_thresh: the factors beyond which the flow hears of rate and RTT changes."""
        self.client._call(
            lambda i: p.encode_thresh(i, self.id, rate_down, rate_up, rtt_down, rtt_up))

    def macroflow(self) -> int:
        """cm_getmacroflow."""
        return int(self.client._call(  # type: ignore[arg-type]
            lambda i: p.encode_flow(p.K_GET_MACROFLOW, i, self.id)).value)

    def set_macroflow(self, target: Optional[int]) -> int:
        """cm_setmacroflow: into `target`, or a new macroflow if None; the macroflow it is in."""
        return int(self.client._call(  # type: ignore[arg-type]
            lambda i: p.encode_set_macroflow(i, self.id, target)).value)

    def set_feedback(self, explicit: bool) -> None:
        """Explicit: the daemon probes the receiving host's daemon instead of using updates."""
        self.client._call(lambda i: p.encode_set_feedback(i, self.id, explicit))

    def close(self) -> None:
        """cm_close."""
        self.client._call(lambda i: p.encode_flow(p.K_CLOSE, i, self.id))


class Client:
    """A blocking connection to concordd. Events that arrive while a call waits for its reply
    are queued for next_event()."""

    def __init__(self, path: Union[str, Path, None] = None, timeout: float = 10.0) -> None:
        self.path = Path(path) if path is not None else default_socket_path()
        self.timeout = timeout
        verify_socket(self.path)
        self._sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self._sock.settimeout(timeout)
        self._sock.connect(str(self.path))
        try:
            verify_peer(self._sock, self.path)
        except UntrustedSocket:
            self._sock.close()
            raise
        self._frames = p.FrameBuffer()
        self._events: Deque[Event] = collections.deque()
        self._next_id = 1

    def reconnect(self, within: float = 10.0) -> None:
        """Connects again to the same socket, for a client whose daemon restarted: retries
        every 10 ms (doubling, at most 200 ms) until a daemon answers a status call or `within`
        seconds have passed, then raises the last error. A daemon that restarted knows none of
        the old flows: open them again. Queued events of the old connection are dropped."""
        self._sock.close()
        deadline = time.monotonic() + within
        wait = 0.01
        while True:
            self._sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            self._sock.settimeout(self.timeout)
            self._frames = p.FrameBuffer()
            self._events.clear()
            try:
                verify_socket(self.path)
                self._sock.connect(str(self.path))
                verify_peer(self._sock, self.path)
                # A daemon being killed may take the connection and drop it: it counts once
                # it has answered.
                self.status()
                return
            except (OSError, Disconnected):
                self._sock.close()
                if time.monotonic() + wait >= deadline:
                    raise
                time.sleep(wait)
                wait = min(wait * 2, 0.2)

    def __enter__(self) -> "Client":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Closes the connection; the daemon closes this client's flows."""
        self._sock.close()

    def open(self, dst: str, dst_port: int, src_port: int, flow_id: int = 0) -> Flow:
        """cm_open of the flow from `src_port` to `dst`:`dst_port`."""
        r = self._call(lambda i: p.encode_open(i, dst, dst_port, src_port, flow_id))
        return Flow(self, int(r.value))  # type: ignore[arg-type]

    def received(self, src: str, src_port: int, dst_port: int, nbytes: int, ce: bool = False,
                 flow_id: int = 0) -> None:
        """Reports one data packet received from `src` (the receiver half of the probes)."""
        self._call(lambda i: p.encode_received(i, src, src_port, dst_port, flow_id, nbytes, ce))

    def status(self) -> Status:
        """The daemon's counters."""
        r = self._call(p.encode_status)
        assert isinstance(r.value, Status)
        return r.value

    def next_event(self, timeout: Optional[float] = None) -> Optional[Event]:
        """The next event, waiting up to `timeout` seconds (None: the client's timeout)."""
        if self._events:
            return self._events.popleft()
        deadline = time.monotonic() + (self.timeout if timeout is None else timeout)
        while not self._events:
            left = deadline - time.monotonic()
            if left <= 0:
                return None
            msg = self._read(left)
            if msg is None:
                return None
            if isinstance(msg, p.Reply):
                continue
            self._events.append(msg)  # type: ignore[arg-type]
        return self._events.popleft()

    def _read(self, timeout: float) -> Optional[p.ServerMessage]:
        """One message, None on timeout."""
        while True:
            body = self._frames.next_frame()
            if body is not None:
                msg = p.decode_server(body)
                if isinstance(msg, p.Fatal):
                    raise Disconnected(f"closed by the daemon: {msg.message} (code {msg.code})")
                return msg
            self._sock.settimeout(max(timeout, 0.001))
            try:
                data = self._sock.recv(65536)
            except socket.timeout:
                return None
            finally:
                self._sock.settimeout(self.timeout)
            if not data:
                raise Disconnected("the daemon closed the connection")
            self._frames.extend(data)

    def _call(self, encode) -> p.Reply:  # type: ignore[no-untyped-def]
        req_id = self._next_id
        self._next_id = (self._next_id + 1) & 0xFFFFFFFF
        try:
            self._sock.sendall(encode(req_id))
        except OSError as e:
            raise Disconnected(str(e)) from e
        deadline = time.monotonic() + self.timeout
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError("no reply from the daemon")
            msg = self._read(left)
            if msg is None:
                continue
            if isinstance(msg, p.Reply):
                if msg.id == req_id:
                    return check_reply(msg)
                continue
            self._events.append(msg)  # type: ignore[arg-type]
