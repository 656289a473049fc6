"""The Piquet table in the browser: ``piquet serve`` (needs the ``web`` extra).

- :mod:`.view`: what the browser is shown (a seat's knowledge only, or everything for onlookers);
- :mod:`.protocol`: the messages a browser may send, checked before anything reads them;
- :mod:`.opponents`: the agents a page may choose;
- :mod:`.tables`: the tables (a person against an agent, two agents watched);
- :mod:`.hub`: every open table, the opponents, the records folder;
- :mod:`.limits`: what browsers may hold open and send;
- :mod:`.moves`: the agents' moves, in worker processes (the event loop only routes messages);
- :mod:`.client`: a browser's socket, its messages routed to the hub and its table;
- :mod:`.connection`: which sockets are let in, how fast they may send, one log line each;
- :mod:`.ratelimit`: the token buckets;
- :mod:`.records`: the records folder within its budgets, and the results kept as records come;
- :mod:`.replayer`: a saved record as frames for the replay viewer;
- :mod:`.app`: the Starlette application (the page, its files, JSON routes, the WebSocket);
- :mod:`.server`: how uvicorn serves it;
- :mod:`.token`: the shared secret of a table served to a network (``--token``).

The page (``static/``: one HTML file, its script and styles) is served from the package: nothing
to build, nothing fetched from elsewhere.
"""

WEB_EXTRA = ("starlette", "uvicorn", "websockets")
"""Modules of the ``web`` extra that the server needs."""
