"""The viewer's web application (Starlette): its routes, and what keeps it safe to leave running.

* Every page escapes what it shows and carries no script; a Content-Security-Policy forbids
  scripts, frames and foreign forms anyway, so text from a row can never run.
* Only the host names it serves under are accepted (a DNS-rebinding page on another site cannot
  reach it as ``evil.example``).
* It is read-only unless started with ``allow_write``; then a change (tags, deleting a run) is a
  POST carrying the server's random token, which only its own pages hold, from its own origin.
"""

from __future__ import annotations

import os
import secrets
import tempfile
from collections.abc import Sequence
from urllib.parse import parse_qs

from starlette.applications import Starlette
from starlette.background import BackgroundTask
from starlette.concurrency import run_in_threadpool
from starlette.middleware import Middleware
from starlette.middleware.trustedhost import TrustedHostMiddleware
from starlette.requests import Request
from starlette.responses import FileResponse, HTMLResponse, RedirectResponse, Response
from starlette.routing import Route

from context_bench.errors import UsageError
from context_bench.store import Store, UnknownRun, export

from .diff import diff_page
from .html import h, page
from .listing import runs_page
from .run_page import example_page, run_page
from .trend import trend_page

#: The host names a viewer on the loopback interface answers to.
LOOPBACK = ("127.0.0.1", "localhost", "::1")

HEADERS = {
    "Content-Security-Policy": (
        "default-src 'none'; style-src 'unsafe-inline'; img-src data:; form-action 'self'; "
        "base-uri 'none'; frame-ancestors 'none'"
    ),
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "same-origin",  # "no-referrer" makes a browser send its own forms as Origin: null
    "Cache-Control": "no-store",
}


def make_app(store: Store, allow_write: bool = False, hosts: Sequence[str] = LOOPBACK) -> Starlette:
    """The viewer over ``store``, answering to ``hosts``; ``allow_write`` lets its pages edit tags
    and delete runs."""
    token = secrets.token_urlsafe(32) if allow_write else None

    def html(text: str, status: int = 200) -> Response:
        return HTMLResponse(text, status, headers=HEADERS)

    def runs(request: Request) -> Response:
        return html(runs_page(store, request.query_params))

    def run(request: Request) -> Response:
        return html(run_page(store, request.path_params["run_id"], request.query_params, token))

    def example(request: Request) -> Response:
        query = request.query_params
        return html(
            example_page(store, request.path_params["run_id"], query.get("dataset", ""), query.get("id", ""))
        )

    def diff(request: Request) -> Response:
        return html(diff_page(store, request.query_params))

    def trend(request: Request) -> Response:
        return html(trend_page(store, request.query_params))

    def report(request: Request) -> Response:
        run_id, fmt = request.path_params["run_id"], request.path_params["fmt"]
        if fmt not in ("json", "jsonl"):
            return html(page("Not found", "<p>A run's report is .json or .jsonl.</p>"), 404)
        store.run(run_id)
        handle = tempfile.NamedTemporaryFile("w", encoding="utf-8", suffix=f".{fmt}", delete=False)
        with handle:
            export(store, run_id, fmt, handle)
        media = "application/json" if fmt == "json" else "application/x-ndjson"
        return FileResponse(
            handle.name,
            media_type=media,
            filename=f"run-{run_id}.{fmt}",
            headers=HEADERS,
            background=BackgroundTask(os.unlink, handle.name),
        )

    async def change(request: Request) -> Response:
        run_id, action = request.path_params["run_id"], request.path_params["action"]
        if token is None:
            return html(
                page("Read-only", "<p>This viewer is read-only: start it with --allow-write.</p>"), 403
            )
        form = parse_qs((await request.body()).decode("utf-8", "replace"))
        given = (form.get("token") or [""])[0]
        origin = request.headers.get("origin")
        if not secrets.compare_digest(given, token) or (origin is not None and origin != _origin(request)):
            return html(page("Refused", "<p>This change did not come from this viewer's own page.</p>"), 403)
        if action == "tags":
            tags = [t.strip() for t in (form.get("tags") or [""])[0].split(",") if t.strip()]
            await run_in_threadpool(store.set_tags, run_id, tags)
            return RedirectResponse(f"/runs/{run_id}", 303, headers=HEADERS)
        if action == "delete" and (form.get("confirm") or [""])[0] == "yes":
            await run_in_threadpool(store.delete, run_id)
            return RedirectResponse("/", 303, headers=HEADERS)
        return html(page("Not done", "<p>Nothing was changed (to delete a run, tick the box).</p>"), 400)

    async def not_found(request: Request, exc: Exception) -> Response:
        return html(page("Not found", f"<p>{h(exc)}</p>"), 404)

    async def bad_request(request: Request, exc: Exception) -> Response:
        return html(page("Cannot show this", f"<p>{h(exc)}</p>"), 400)

    return Starlette(
        routes=[
            Route("/", runs),
            Route("/runs/{run_id:int}", run),
            Route("/runs/{run_id:int}/example", example),
            Route("/runs/{run_id:int}/report.{fmt}", report),
            Route("/runs/{run_id:int}/{action}", change, methods=["POST"]),
            Route("/diff", diff),
            Route("/trend", trend),
        ],
        middleware=[Middleware(TrustedHostMiddleware, allowed_hosts=list(hosts))],
        exception_handlers={UnknownRun: not_found, UsageError: bad_request, ValueError: bad_request},
    )


def _origin(request: Request) -> str:
    return f"{request.url.scheme}://{request.headers.get('host', '')}"
