"""Debug paths, the point of them: is the prior fix in the context when the same error
recurs in a new session? Against a real PostgreSQL and the worker's own handlers.

    PYTHONPATH=$PWD/src .venv/bin/python benchmarks/quality/debug_paths.py --prior

Every corpus session (``debug_paths/sessions.json``) is posted record by record, each
record handled by the worker's steps (edges, debug-path tracking, assembly) before the
next, as one tenant. Then each recurrence (``debug_paths/recurrences.json``: for every
session that ends resolved, its error with other paths, line numbers and ids, written by
hand) is posted alone in a new session and triggers an agent whose only extra source is
``context_sources.paths``. Reported, over the recurrences:

- **prior fix in context**: the assembled context holds, in its prior-fixes section and
  named in ``explain`` as a ``paths`` seed, a resolved path of a session whose resolved
  problem is the same error (the corpus's ``group``);
- **own session's fix**: the path of the very session the recurrence repeats is among them
  (several sessions fixed some errors; the source offers at most ``limit``);
- **wrong prior fixes**: prior fixes of other errors, per recurrence;
- every miss, with the trigger's signature and what the tracker stored.
"""

from __future__ import annotations

import asyncio
import json
import uuid
from collections import Counter
from pathlib import Path
from typing import Any

import httpx
from fastapi import FastAPI
from inprocess import MODELS, served
from sqlalchemy import text

from cairn.breadcrumbs import repository as breadcrumbs
from cairn.context.builder import ContextBuilder
from cairn.context.sources.paths import SAME, SIMILAR
from cairn.context.write import context_record_id
from cairn.db.engine import tenant_session
from cairn.edges.builder import EdgeOptions
from cairn.events.payloads import ChangeKind, change_event
from cairn.paths.signals import classify
from cairn.transforms import Transforms
from cairn.worker.app import NoEmbedder
from cairn.worker.handlers import Handlers

AGENT = "prior-fix-bench"
ASK = "bench:recurrence"
LIMIT = 3
BUDGET = 4000


class Replay:
    """One tenant, every record handled by the worker's steps as soon as it is posted."""

    def __init__(self, http: httpx.AsyncClient, app: FastAPI, handlers: Handlers) -> None:
        self.http, self.app, self.handlers = http, app, handlers
        self.owner: uuid.UUID = app.state.resources.default_tenant

    async def post(self, record: dict[str, Any]) -> uuid.UUID:
        response = await self.http.post("/breadcrumbs", json=record)
        response.raise_for_status()
        record_id = uuid.UUID(response.json()["id"])
        resources = self.app.state.resources
        async with tenant_session(resources.session_factory, self.owner) as session:
            row = await breadcrumbs.get(session, self.owner, record_id)
        assert row is not None
        await self.handlers.handle_event(
            change_event(ChangeKind.created, row, change="create").payload
        )
        return record_id

    async def rows(self, query: str, **params: Any) -> list[Any]:
        resources = self.app.state.resources
        async with tenant_session(resources.session_factory, self.owner) as session:
            return list(await session.execute(text(query), params))


def _session_tag(sid: str, run: str) -> str:
    return f"session:{run}-{sid}"


async def measure(
    sessions: list[dict[str, Any]],
    recurrences: list[dict[str, Any]],
    unrelated: list[dict[str, Any]] | None = None,
) -> dict[str, Any]:
    async with served() as (http, app):
        resources = app.state.resources
        builder = await asyncio.to_thread(
            ContextBuilder.create, resources.settings, resources.session_factory,
            Transforms(resources.settings.transforms), NoEmbedder(),
        )  # fmt: skip
        replay = Replay(http, app, Handlers(resources.session_factory, EdgeOptions(), builder))
        await replay.post(_agent())
        run = uuid.uuid4().hex[:6]
        for session in sessions:
            tag = _session_tag(session["id"], run)
            for step in session["steps"]:
                record = step["record"]
                await replay.post({**record, "tags": [*record.get("tags", []), tag]})
        stored = await _resolved_paths(replay, sessions, run)
        results = []
        for recurrence in recurrences:
            tag = _session_tag(f"again-{recurrence['of']}", run)
            record = recurrence["record"]
            await replay.post({**record, "tags": [*record.get("tags", []), tag, ASK]})
            context = await _context(replay, tag)
            results.append(_judge(recurrence, context, stored, run))
        offered = []
        for n, record in enumerate(unrelated or []):
            tag = _session_tag(f"unrelated-{n}", run)
            await replay.post({**record, "tags": [*record.get("tags", []), tag, ASK]})
            judged = _judge(
                {"of": "", "group": None, "record": record},
                await _context(replay, tag),
                stored,
                run,
            )
            offered.append(judged)
    report = _report(results, stored)
    given = [r for r in offered if r["shown"]]
    report["unrelated_errors"] = {
        "total": len(offered),
        "without_prior_fix": len(offered) - len(given),
        "share": _share(len(offered) - len(given), len(offered)),
        "given": [
            {"signature": r["signature"], "groups": r["wrong"], "matches": r["matches"]}
            for r in given
        ],
    }
    return report


def _agent() -> dict[str, Any]:
    """Triggered by the recurrences only; the session's records and the prior fixes."""
    return {
        "schema_name": "agent.def.v1",
        "title": AGENT,
        "tags": ["workspace:agents"],
        "context": {
            "agent_id": AGENT,
            "context_trigger": {"any_tags": [ASK]},
            "context_sources": {"session": {"limit": 20}, "paths": {"limit": LIMIT}},
            "context_budget": BUDGET,
        },
    }


async def _resolved_paths(
    replay: Replay, sessions: list[dict[str, Any]], run: str
) -> dict[str, dict[str, Any]]:
    """Each resolved path the worker stored: its session and the group of the problem the
    session resolved (by the corpus's annotation: one resolved problem per session)."""
    groups = {}
    for session in sessions:
        resolved = [p["group"] for p in session["paths"] if p["end"] == "resolved"]
        groups[_session_tag(session["id"], run)] = resolved[0] if len(resolved) == 1 else None
    rows = await replay.rows(
        "SELECT id, context FROM breadcrumbs WHERE owner_id = :owner"
        " AND schema_name = 'debug.path.v1' AND context->>'status' = 'resolved'",
        owner=replay.owner,
    )
    return {
        str(row.id): {
            "session": row.context["session"],
            "group": groups.get(row.context["session"]),
            "signature": row.context["signature"],
            "what_fixed_it": row.context["what_fixed_it"],
        }
        for row in rows
    }


async def _context(replay: Replay, tag: str) -> dict[str, Any]:
    record_id = context_record_id(replay.owner, AGENT, tag)
    rows = await replay.rows("SELECT context FROM breadcrumbs WHERE id = :id", id=record_id)
    return dict(rows[0].context) if rows else {}


def _judge(
    recurrence: dict[str, Any],
    context: dict[str, Any],
    stored: dict[str, dict[str, Any]],
    run: str,
) -> dict[str, Any]:
    explain = context.get("explain") or {}
    seeds = {s["record_id"]: s for s in explain.get("seeds", []) if s["source"] == "paths"}
    shown = [
        s["record_id"]
        for s in explain.get("selected", [])
        if s["section"] == "prior_fixes" and s["record_id"] in seeds
    ]
    text_ = context.get("formatted_context", "")
    shown = [path for path in shown if f"Fixed before (path {path})" in text_]
    same = [p for p in shown if stored.get(p, {}).get("group") == recurrence["group"]]
    own_session = _session_tag(recurrence["of"], run)
    own = [p for p, path in stored.items() if path["session"] == own_session]
    return {
        "of": recurrence["of"],
        "group": recurrence["group"],
        "signature": classify(recurrence["record"]).signature,
        "hit": bool(same),
        "own": any(p in shown for p in own),
        "own_resolved": bool(own),
        "wrong": [stored.get(p, {}).get("group") for p in shown if p not in same],
        "matches": [SAME if SAME in seeds[p]["detail"] else SIMILAR for p in shown],
        "shown": len(shown),
        "assembled": bool(context),
    }


def _report(results: list[dict[str, Any]], stored: dict[str, Any]) -> dict[str, Any]:
    total = len(results)
    hits = sum(r["hit"] for r in results)
    own = sum(r["own"] for r in results)
    wrong = sum(len(r["wrong"]) for r in results)
    kinds = Counter(m for r in results for m in r["matches"])
    return {
        "recurrences": total,
        "resolved_paths_stored": len(stored),
        "prior_fix_in_context": {"right": hits, "total": total, "share": _share(hits, total)},
        "own_sessions_fix": {"right": own, "total": total, "share": _share(own, total)},
        "wrong_prior_fixes": {"count": wrong, "per_recurrence": round(wrong / total, 3)},
        "matched_by": dict(kinds),
        "misses": [r for r in results if not r["hit"]],
        "own_misses": [r for r in results if not r["own"]],
        "wrong": [r for r in results if r["wrong"]],
        "settings": {"limit": LIMIT, "budget": BUDGET, "models": str(MODELS)},
    }


def _share(right: int, total: int) -> float:
    return round(right / total, 3) if total else 1.0


def table(report: dict[str, Any], target: float) -> list[str]:
    """The measure's lines for the markdown report."""
    rows = [
        ("prior fix of the same error in the context", report["prior_fix_in_context"]),
        ("the repeated session's own fix in the context", report["own_sessions_fix"]),
    ]
    lines = [
        "## Prior fix in the context when the same error recurs (real PostgreSQL, worker)",
        "",
        f"{report['recurrences']} recurrences; {report['resolved_paths_stored']} resolved paths"
        f" stored by the worker; the source offers at most {report['settings']['limit']}.",
        "",
        "| measure | score | counts | target met |",
        "|---|---|---|---|",
        *(
            f"| {name} | {m['share']:.3f} | {m['right']} / {m['total']} |"
            f" {'yes' if m['share'] >= target else 'NO'} |"
            for name, m in rows
        ),
        f"| wrong prior fixes (other errors) | {report['wrong_prior_fixes']['per_recurrence']}"
        f" per recurrence | {report['wrong_prior_fixes']['count']} | |",
        "",
        f"Matched by: {json.dumps(report['matched_by'])}",
        "",
        f"### Misses ({len(report['misses'])})",
        "",
        "| repeats | group | trigger signature | repeated session resolved | matches |",
        "|---|---|---|---|---|",
        *(
            f"| {r['of']} | {r['group']} | `{r['signature']}` | {r['own_resolved']} |"
            f" {', '.join(r['matches']) or 'none'} |"
            for r in report["misses"]
        ),
        "",
        f"### The repeated session's own fix not shown ({len(report['own_misses'])})",
        "",
        *(
            f"- {r['of']} ({r['group']}): {r['shown']} prior fixes shown"
            f" ({', '.join(r['matches']) or 'none'}); its session resolved: {r['own_resolved']}"
            for r in report["own_misses"]
        ),
        "",
        *_unrelated_lines(report.get("unrelated_errors")),
        f"### Recurrences given another error's fix ({len(report['wrong'])})",
        "",
        *(
            f"- {r['of']} ({r['group']}): also {', '.join(map(str, r['wrong']))}"
            for r in report["wrong"]
        ),
        "",
    ]
    return lines


def _unrelated_lines(unrelated: dict[str, Any] | None) -> list[str]:
    if not unrelated:
        return []
    return [
        f"### Errors no session met ({unrelated['total']}): no prior fix for"
        f" {unrelated['without_prior_fix']} ({unrelated['share']:.3f})",
        "",
        *(
            f"- `{g['signature']}`: given {', '.join(map(str, g['groups']))}"
            f" ({', '.join(g['matches'])})"
            for g in unrelated["given"]
        ),
        "",
    ]


def load(path: Path) -> list[dict[str, Any]]:
    return list(json.loads(path.read_text()))
