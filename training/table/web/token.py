"""A shared secret for a table served to a network (``piquet serve --token``).

With a token, every route but the page itself, its files and :data:`LOGIN` answers only a
browser that has shown the token once: the page asks for it, posts it to ``POST /api/login``, and
gets a cookie (:data:`COOKIE`: HttpOnly, SameSite=Strict, 30 days) that its later requests and
its sockets carry. The cookie holds an HMAC of the token keyed by a secret of the server's, not
the token: a fresh random secret each start, so a restart revokes every cookie, unless the secret
is kept in a file (:func:`cookie_secret`, ``piquet serve --cookie-secret-file``). Without the
cookie, a route answers 401 with ``{"code": "token"}`` and a socket is closed (1008) before it
opens. Login attempts are limited per address (:data:`ATTEMPTS` a minute), so a token cannot be
guessed by trying; a login's body is read up to :data:`MAX_LOGIN_BYTES`, past which it is answered
413 without reading the rest.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import secrets
from pathlib import Path

from starlette.datastructures import Headers
from starlette.requests import Request, cookie_parser
from starlette.responses import JSONResponse, Response
from starlette.types import ASGIApp, Receive, Scope, Send
from starlette.websockets import WebSocketClose

from piquet_env.untrusted import UntrustedError, read_regular_file
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

MAX_LOGIN_BYTES = 1024
"""Largest login body read (``{"token": "..."}`` takes under 100 bytes)."""

SECRET_BYTES = 32
"""Random bytes of a new cookie secret."""

MIN_SECRET_CHARS = 32
"""Shortest cookie secret read from a file (the characters of 16 random bytes in hex)."""


def new_token() -> str:
    """A random token to give people (about 100 bits)."""
    return secrets.token_urlsafe(12)


def cookie_secret(path: str | os.PathLike) -> bytes:
    """The cookie secret kept in the file ``path``; a new random one is written there (readable
    by its owner only) if there is no such file. ``ValueError`` naming the file if it is not a
    regular file of one line of at least :data:`MIN_SECRET_CHARS` printable characters, owned by
    this user and readable and writable by no one else."""
    path = Path(path)
    if not path.exists() and not path.is_symlink():
        secret = secrets.token_hex(SECRET_BYTES)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w") as f:
            f.write(secret + "\n")
        return secret.encode()
    try:
        text = read_regular_file(path, 4096, "a cookie secret").decode("ascii").strip()
        _check_private(path)
    except UnicodeDecodeError:
        raise ValueError(f"{path}: not ASCII text") from None
    except UntrustedError as err:
        raise ValueError(str(err)) from None
    if len(text) < MIN_SECRET_CHARS or not text.isprintable() or " " in text:
        raise ValueError(
            f"{path}: a cookie secret is one word of at least {MIN_SECRET_CHARS} characters"
        )
    return text.encode()


def _check_private(path: Path) -> None:
    """``ValueError`` unless ``path`` is owned by this user and neither readable nor writable
    by anyone else (as ssh refuses a private key others can read): whoever reads the secret can
    make a cookie, whoever writes it can choose one."""
    if os.name != "posix":  # pragma: no cover - no such modes on Windows
        return
    info = os.stat(path)
    if info.st_uid != os.getuid():
        raise ValueError(f"{path}: owned by another user; a cookie secret must be your own")
    if info.st_mode & 0o077:
        raise ValueError(
            f"{path}: permissions {info.st_mode & 0o777:04o} are too open: others could read or "
            f"write the cookie secret (chmod 600 {path})"
        )


class TokenGate:
    """ASGI middleware: ``app`` behind the token ``token`` (see the module's docstring); the
    cookie is keyed by ``secret`` (by default a random one: a new gate revokes the old cookies).
    """

    def __init__(self, app: ASGIApp, token: str, secret: bytes | None = None) -> None:
        if not token:
            raise ValueError("a token gate needs a token")
        self.app = app
        self._token = token.encode()
        key = secret if secret is not None else secrets.token_bytes(SECRET_BYTES)
        self._cookie = hmac.new(key, b"piquet serve\0" + self._token, hashlib.sha256).hexdigest()
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
        body = await _body(request, MAX_LOGIN_BYTES)
        if body is None:
            return JSONResponse(
                {"error": f"a login takes at most {MAX_LOGIN_BYTES:,} bytes", "code": "token"},
                status_code=413,
            )
        try:
            token = json.loads(body)["token"]
        except (ValueError, KeyError, TypeError, RecursionError):
            token = None
        if not isinstance(token, str) or not hmac.compare_digest(token.encode(), self._token):
            return JSONResponse({"error": "that is not the token", "code": "token"}, 403)
        reply = JSONResponse({"ok": True})
        secure = request.url.scheme == "https"
        reply.set_cookie(
            COOKIE, self._cookie, max_age=MAX_AGE, httponly=True, samesite="strict", secure=secure
        )
        return reply


async def _body(request: Request, limit: int) -> bytes | None:
    """The request's body, or ``None`` as soon as it is seen to pass ``limit`` bytes (by its
    ``Content-Length``, or while it streams in): the rest is never read (the server's protocol
    drops the connection after the answer, :mod:`piquet_table.web.server`)."""
    size = request.headers.get("content-length")
    if size is not None and (not size.isdigit() or int(size) > limit):
        return None
    body = bytearray()
    async for chunk in request.stream():
        body += chunk
        if len(body) > limit:
            return None
    return bytes(body)
