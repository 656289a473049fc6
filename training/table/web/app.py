"""The ASGI application of ``piquet serve``: the page, its files, a few JSON routes and the socket.

=========================  ===============================================================
route                      what it serves
=========================  ===============================================================
``GET /``                  the single-page table (``static/index.html``)
``GET /static/...``        the page's script and styles, from the package
``GET /api/config``        the rules, the opponents a page may choose, the limits
``GET /api/records``       the newest records in the records folder (name, time, size)
``GET /api/records/NAME``  one record as replay frames (:mod:`piquet_table.web.replayer`)
``POST /api/replay``       an uploaded record (the request body) as replay frames
``GET /api/results``       people's results against each agent (:mod:`piquet_table.results`)
``POST /api/login``        the token, with ``--token`` (:mod:`piquet_table.web.token`)
``WS /ws``                 a table: moves and narration (:class:`~piquet_table.web.client.Client`)
=========================  ===============================================================

Only names of plain files directly in the records folder are read (:func:`record_path`); an
upload is read from memory, at most :data:`MAX_UPLOAD_BYTES`, and never written; at most
``max_uploads`` are read at once, ``max_uploads_per_client`` from one address
(:class:`~piquet_table.web.limits.Limits`): another is answered 503, unread. Every route
answers only the allowed host names (a rebound DNS name is refused), and the socket refuses a page
from another origin (a site the user visits cannot drive his tables).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Sequence
from pathlib import Path
from urllib.parse import urlsplit

from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.middleware.trustedhost import TrustedHostMiddleware
from starlette.requests import ClientDisconnect, Request
from starlette.responses import FileResponse, JSONResponse, Response
from starlette.routing import Mount, Route, WebSocketRoute
from starlette.staticfiles import StaticFiles
from starlette.websockets import WebSocket, WebSocketDisconnect

from piquet_env.game.record import RecordError, load_record, parse_record
from piquet_table.web.client import Client
from piquet_table.web.connection import Connection, Gate, quiet_accept_errors
from piquet_table.web.hub import Hub
from piquet_table.web.records import RECORD_NAME
from piquet_table.web.replayer import replay_frames
from piquet_table.web.token import TokenGate

STATIC = Path(__file__).with_name("static")
"""The page's files, shipped in the package."""

MAX_UPLOAD_BYTES = 4 * 2**20
"""Largest record a page may upload (a 12-deal partie takes about 100 KB)."""

LOCAL_HOSTS = ("127.0.0.1", "localhost", "::1")
"""Host names always served: this machine's own loopback."""

HEADERS = {
    "Content-Security-Policy": "default-src 'self'; img-src 'self' data:; object-src 'none'; "
    "base-uri 'none'; frame-ancestors 'none'",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
}
"""Headers of the page: its own script and styles only, no framing."""


def record_path(folder: Path, name: str) -> Path:
    """The record ``name`` directly in ``folder``; :class:`RecordError` for any other name (a
    path, a hidden file, a symbolic link, something that resolves outside the folder)."""
    if not RECORD_NAME.fullmatch(name):
        raise RecordError(f"{name[:60]!r} is not the name of a record in the records folder")
    base = folder.resolve()
    path = base / name
    if path.is_symlink() or path.resolve().parent != base:
        raise RecordError(f"{name!r} is not a record in the records folder")
    return path


def create_app(
    hub: Hub,
    *,
    allowed_hosts: Sequence[str] = (),
    token: str | None = None,
    cookie_secret: bytes | None = None,
) -> Starlette:
    """The application serving ``hub``'s tables (its tables are saved when the app stops).

    Only requests whose ``Host`` is one of :data:`LOCAL_HOSTS` or ``allowed_hosts`` are served
    (Starlette's ``TrustedHostMiddleware``; others get 400): a site whose name an attacker points
    at this server (DNS rebinding) sends its own name, and is refused. With ``token``, only
    browsers that gave it are (:mod:`piquet_table.web.token`), their cookie keyed by
    ``cookie_secret`` (by default a random one: cookies of an earlier start are refused)."""

    gate = Gate(hub.limits)

    async def page(request: Request) -> Response:
        return FileResponse(STATIC / "index.html", headers=HEADERS)

    async def config(request: Request) -> Response:
        return JSONResponse(hub.config())

    async def records(request: Request) -> Response:
        return JSONResponse(await hub.store.listing())

    async def record(request: Request) -> Response:
        def frames() -> dict:
            path = record_path(hub.records, request.path_params["name"])
            return replay_frames(load_record(path), path.name)

        try:
            return JSONResponse(await asyncio.to_thread(frames))
        except RecordError as err:
            return JSONResponse({"error": _strip_folder(str(err), hub.records)}, status_code=400)

    uploads: dict[str, int] = {}  # uploads under way, by address, and in all under ""

    async def upload(request: Request) -> Response:
        size = request.headers.get("content-length")
        if size is not None and (not size.isdigit() or int(size) > MAX_UPLOAD_BYTES):
            return _too_big()
        owner = request.client.host if request.client else "unknown"
        limits = hub.limits
        if (
            uploads.get("", 0) >= limits.max_uploads
            or uploads.get(owner, 0) >= limits.max_uploads_per_client
        ):
            return JSONResponse(
                {"error": "too many record uploads at once: try again in a moment"},
                status_code=503,
                headers={"Retry-After": "2"},
            )
        for key in ("", owner):
            uploads[key] = uploads.get(key, 0) + 1
        try:
            return await _replay_upload(request)
        finally:
            for key in ("", owner):
                uploads[key] -= 1
                if not uploads[key]:
                    del uploads[key]

    async def results(request: Request) -> Response:
        return JSONResponse((await hub.store.summary()).to_dict())

    async def socket(ws: WebSocket) -> None:
        if not _same_origin(ws):
            await ws.close(code=1008, reason="this page comes from another site")
            return
        owner = ws.client.host if ws.client else "unknown"
        peer = f"{owner}:{ws.client.port}" if ws.client else owner
        refused = gate.admit(owner, peer)
        if refused is not None:
            await gate.hold_off(owner)
            await ws.close(code=1008, reason=refused[:120])
            return
        conn = Connection(ws, peer)
        client = Client(hub, conn.send, owner)
        mine = gate.bucket()
        try:
            await ws.accept()
            while conn.open:
                message = await ws.receive()
                if message["type"] == "websocket.disconnect":
                    break
                conn.received += 1
                if not gate.allow(owner, mine):
                    gate.cut(owner)
                    await conn.send(gate.too_many(), timeout=1.0)
                    await conn.close(1008, "too many messages", by="the server (rate)")
                    break
                text = message.get("text")
                if text is None:
                    text = message.get("bytes")  # refused by the protocol, with the reason
                await client.receive(text)  # past MAX_MESSAGE_CHARS refused by its length alone
        except (WebSocketDisconnect, RuntimeError):  # gone mid-read: the client's own doing
            pass
        finally:
            conn.open = False
            gate.release(owner)
            await client.gone()
            conn.log()

    @contextlib.asynccontextmanager
    async def lifespan(_app: Starlette) -> AsyncIterator[None]:
        quiet_accept_errors(asyncio.get_running_loop())
        hub.moves.start()  # the agents' worker processes load while the server starts
        await hub.store.start()  # the records folder indexed, within its budget
        yield
        await hub.shutdown()

    routes = [
        Route("/", page),
        Route("/api/config", config),
        Route("/api/records", records),
        Route("/api/records/{name}", record),
        Route("/api/replay", upload, methods=["POST"]),
        Route("/api/results", results),
        WebSocketRoute("/ws", socket),
        Mount("/static", StaticFiles(directory=STATIC), name="static"),
    ]
    hosts = list(dict.fromkeys([*LOCAL_HOSTS, *allowed_hosts]))
    middleware = [Middleware(TrustedHostMiddleware, allowed_hosts=hosts, www_redirect=False)]
    if token:
        middleware.append(Middleware(TokenGate, token=token, secret=cookie_secret))
    return Starlette(routes=routes, middleware=middleware, lifespan=lifespan)


async def _replay_upload(request: Request) -> Response:
    """The uploaded record of ``request``'s body as replay frames: read into one buffer (at most
    :data:`MAX_UPLOAD_BYTES`), decoded and parsed without another copy of it."""
    body = bytearray()
    try:
        async for chunk in request.stream():
            body += chunk
            if len(body) > MAX_UPLOAD_BYTES:
                return _too_big()
    except ClientDisconnect:  # gone mid-body (or dropped for its pace): no one to answer
        return Response(status_code=400)
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError as err:
        return JSONResponse({"error": f"not UTF-8 text (byte {err.start})"}, status_code=400)
    del body
    try:
        doc = await asyncio.to_thread(parse_record, text)
        del text
        return JSONResponse(await asyncio.to_thread(replay_frames, doc, "uploaded record"))
    except RecordError as err:
        return JSONResponse({"error": str(err)}, status_code=400)


def _too_big() -> Response:
    return JSONResponse(
        {"error": f"a record upload may take at most {MAX_UPLOAD_BYTES // 2**20} MiB"},
        status_code=413,
    )


def _strip_folder(text: str, folder: Path) -> str:
    """An error about a record file without the server's folder path in it."""
    return text.replace(str(folder.resolve()) + "/", "").replace(str(folder) + "/", "")


def _same_origin(ws: WebSocket) -> bool:
    """Whether the socket comes from this server's own page (or from no page at all: a script)."""
    origin = ws.headers.get("origin")
    if origin is None:
        return True
    host = ws.headers.get("host", "")
    return urlsplit(origin).netloc == host
