"""How uvicorn serves the application: its options in one place (``piquet serve``, the tests).

uvicorn's WebSocket protocol, once the server has closed a socket (one past its message rate),
reads on for the client's closing reply, up to 10 s, parsing and dropping every frame: a flood
that never reads keeps it parsing all that time. :class:`QuickCloseProtocol` waits
:data:`CLOSE_TIMEOUT` seconds instead. Frames past :data:`WS_MAX_BYTES` close the socket
(the page's messages are refused, with the reason, past 2,048 characters).
"""

from __future__ import annotations

from typing import Any

from uvicorn.protocols.websockets.websockets_sansio_impl import WebSocketsSansIOProtocol

CLOSE_TIMEOUT = 1.0
"""Seconds a socket the server closed may take to answer before its connection is dropped."""

WS_MAX_BYTES = 64 * 1024
"""Largest WebSocket frame the server reads at all."""


class QuickCloseProtocol(WebSocketsSansIOProtocol):
    """uvicorn's WebSocket protocol (websockets' sans-I/O), dropping a closed socket's connection
    after :data:`CLOSE_TIMEOUT` seconds rather than 10."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.close_timeout = CLOSE_TIMEOUT


def uvicorn_options() -> dict[str, Any]:
    """The options :func:`uvicorn.run` (or :class:`uvicorn.Config`) serves the application
    with, besides the host and the port."""
    return {"ws": QuickCloseProtocol, "ws_max_size": WS_MAX_BYTES, "log_level": "warning"}
