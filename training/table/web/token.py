"""A shared secret for a table served to a network (``piquet serve --token``).

With a token, every route but the page itself, its files and :data:`LOGIN` answers only a
browser that has shown the token once: the page asks for it, posts it to ``POST /api/login``, and
gets a cookie (:data:`COOKIE`: HttpOnly, SameSite=Strict, 30 days) that its later requests and
its sockets carry. The cookie holds an HMAC of the token, not the token. Without the cookie, a
route answers 401 with ``{"code": "token"}`` and a socket is closed (1008) before it opens. Login
attempts are limited per address (:data:`ATTEMPTS` a minute), so a token cannot be guessed by
trying.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import secrets

from starlette.datastructures import Headers
from starlette.requests import Request, cookie_parser
from starlette.responses import JSONResponse, Response
from starlette.types import ASGIApp, Receive, Scope, Send
from starlette.websockets import WebSocketClose

from piquet_table.web.ratelimit import Buckets

COOKIE = "piquet_token"
"""The cookie that shows a browser gave the token."""

LOGIN = "/api/login"
"""Where the page posts the token: ``{"token": "..."}``."""

OPEN = ("/", LOGIN)
"""Paths served without the token (and everything under ``/static/``)."""

ATTEMPTS = 10
"""Login attempts an address may make a minute."""

MAX_AGE = 30 * 24 * 3600
"""Seconds the cookie lasts."""


def new_token() -> str:
    """A random token to give people (about 100 bits)."""
    return secrets.token_urlsafe(12)


class TokenGate:
    """ASGI middleware: ``app`` behind the token ``token`` (see the module's docstring)."""

    def __init__(self, app: ASGIApp, token: str) -> None:
        if not token:
            raise ValueError("a token gate needs a token")
        self.app = app
        self._token = token.encode()
        self._cookie = hmac.new(self._token, b"piquet serve", hashlib.sha256).hexdigest()
        self._attempts = Buckets(ATTEMPTS / 60, ATTEMPTS)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Serve the request if it is open, or carries the cookie; else refuse it."""
        if scope["type"] not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        path = scope["path"]
        if scope["type"] == "http" and path == LOGIN:
            response = await self._login(Request(scope, receive))
            await response(scope, receive, send)
        elif path in OPEN or path.startswith("/static/") or self._shown(scope):
            await self.app(scope, receive, send)
        elif scope["type"] == "websocket":
            await WebSocketClose(code=1008, reason="this table needs its token")(
                scope, receive, send
            )
        else:
            await JSONResponse(
                {"error": "this table needs its token: the page asks for it", "code": "token"},
                status_code=401,
            )(scope, receive, send)

    def _shown(self, scope: Scope) -> bool:
        cookies = cookie_parser(Headers(scope=scope).get("cookie", ""))
        return hmac.compare_digest(cookies.get(COOKIE, ""), self._cookie)

    async def _login(self, request: Request) -> Response:
        if request.method != "POST":
            return JSONResponse({"error": "post the token"}, status_code=405)
        who = request.client.host if request.client else "unknown"
        if not self._attempts.take(who):
            return JSONResponse(
                {"error": f"too many tries: {ATTEMPTS} a minute", "code": "token"}, status_code=429
            )
        body = await request.body()
        try:
            token = json.loads(body[:1024])["token"]
        except (ValueError, KeyError, TypeError):
            token = None
        if not isinstance(token, str) or not hmac.compare_digest(token.encode(), self._token):
            return JSONResponse({"error": "that is not the token", "code": "token"}, 403)
        reply = JSONResponse({"ok": True})
        secure = request.url.scheme == "https"
        reply.set_cookie(
            COOKIE, self._cookie, max_age=MAX_AGE, httponly=True, samesite="strict", secure=secure
        )
        return reply
