"""Clients of concordd, the Congestion Manager daemon (docs/cm-protocol.md).

`Client` blocks; `AsyncClient` runs on asyncio. Both speak the same documented frames.
"""

from .aio import AsyncClient, AsyncFlow
from .client import (CmError, Client, Disconnected, Flow, UntrustedSocket, default_socket_path,
                     verify_socket)
from .protocol import (ChangeRate, ErrorCode, Event, Grant, GrantExpired, LossMode,
                       ProtocolError, QueryResult, Status)

__all__ = [
    "AsyncClient", "AsyncFlow", "ChangeRate", "Client", "CmError", "Disconnected", "ErrorCode",
    "Event", "Flow", "Grant", "GrantExpired", "LossMode", "ProtocolError", "QueryResult",
    "Status", "UntrustedSocket", "default_socket_path", "verify_socket",
]
