"""``streamdq serve``: the read-only query service and web console over a state store.

``streamdq serve --state PATH [--host 127.0.0.1] [--port 8080] [--token TOKEN]
[--storage-option KEY=VALUE] [--insecure]``

Binds to loopback by default. Binding any other address needs a bearer token (``--token`` or
the ``STREAMDQ_SERVE_TOKEN`` environment variable, which keeps it out of the process list) or
an explicit ``--insecure``. A state root without tables yet is served (empty) so the console
can start beside a job before its first batch. Exit codes: 0 stopped, 2 bad arguments or the
``serve`` extra missing.
"""

from __future__ import annotations

import argparse
import ipaddress
import os
import sys
from typing import Any

from streamdq.commands.query import storage_option

TOKEN_ENV = "STREAMDQ_SERVE_TOKEN"


def register(sub: Any) -> None:
    serve = sub.add_parser("serve", help="the read-only query service (REST + OpenAPI) and web console")
    serve.add_argument("--state", required=True, help="state root (directory or URI) of the Delta tables")
    serve.add_argument("--host", default="127.0.0.1", help="address to bind (default: loopback only)")
    serve.add_argument("--port", type=int, default=8080, help="port (default 8080; 0 picks a free one)")
    serve.add_argument("--token", help=f"bearer token required by the API (or set {TOKEN_ENV})")
    serve.add_argument("--insecure", action="store_true", help="allow a non-loopback --host without a token")
    serve.add_argument(
        "--storage-option",
        type=storage_option,
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="delta-rs storage option (repeatable)",
    )
    serve.set_defaults(func=run_serve)


def is_loopback(host: str) -> bool:
    """True for ``localhost`` and loopback addresses (127.0.0.0/8, ::1)."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def bind_problem(host: str, token: str | None, insecure: bool) -> str | None:
    """Why the service must not bind ``host`` as asked, or None."""
    if is_loopback(host) or token or insecure:
        return None
    return (
        f"--host {host} is reachable from other machines and no token is set: pass --token "
        f"(or set {TOKEN_ENV}) so the API needs 'Authorization: Bearer <token>', or --insecure"
    )


def run_serve(args: argparse.Namespace) -> int:
    token = args.token or os.environ.get(TOKEN_ENV) or None
    problem = bind_problem(args.host, token, args.insecure)
    if problem:
        print(f"streamdq serve: {problem}", file=sys.stderr)
        return 2
    if not 0 <= args.port <= 65535:
        print(f"streamdq serve: --port {args.port} is not in 0..65535", file=sys.stderr)
        return 2
    try:
        import uvicorn

        from streamdq.service.app import create_app
    except ImportError as exc:
        print(
            f"streamdq serve: {exc.name} is not installed: install the serve extra (pip install -e '.[serve]' in a checkout)",
            file=sys.stderr,
        )
        return 2
    from streamdq.service.reader import StateReader

    reader = StateReader(args.state, dict(args.storage_option) or None)
    if not reader.store.exists():
        print(f"streamdq serve: no batch committed under {args.state} yet; serving it empty", file=sys.stderr)
    app = create_app(reader, token=token)
    config = uvicorn.Config(app, host=args.host, port=args.port, log_level="warning")
    server = uvicorn.Server(config)
    host = f"[{args.host}]" if ":" in args.host else args.host

    original = server.startup

    async def startup(sockets: Any = None) -> None:
        await original(sockets=sockets)
        port = args.port
        for s in server.servers:
            for sock in s.sockets:
                port = sock.getsockname()[1]
        print(
            f"streamdq serve: console at http://{host}:{port}/ (API /v1, OpenAPI /openapi.json, docs /docs)",
            flush=True,
        )

    server.startup = startup  # type: ignore[method-assign]
    server.run()
    return 0
