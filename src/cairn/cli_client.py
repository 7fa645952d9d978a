"""The ``cairn`` commands for people at a terminal — post, get, search, tail, context,
query, coverage, assemblies, import (``cli_import``), paths (``cli_paths``) — talking to a
running server through the Python client (``cairn_client``, imported when a command runs,
so the server's commands do not need it)."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Literal

import typer

from cairn import cli_render as render

if TYPE_CHECKING:
    from cairn_client import Client

Url = Annotated[
    str | None,
    typer.Option("--url", envvar="CAIRN_URL", help="Cairn's URL (default http://127.0.0.1:8081)"),
]
Token = Annotated[str | None, typer.Option("--token", envvar="CAIRN_TOKEN", help="a JWT")]
AsJson = Annotated[bool, typer.Option("--json", help="print the answer as JSON")]
Session = Annotated[str | None, typer.Option(help="a session id")]
Misses = Annotated[int, typer.Option(help="near misses to list")]


@contextmanager
def connected(
    url: str | None, token: str | None, timeout_s: float | None = None
) -> Iterator[Client]:
    """A client (``timeout_s``: longer than the client's default, for slow routes); a
    refusal prints the server's error and detail and exits 1."""
    from cairn_client import CairnError, Client

    try:
        with (
            Client(url, token=token)
            if timeout_s is None
            else Client(url, token=token, timeout=timeout_s)
        ) as cairn:
            yield cairn
    except CairnError as error:
        status = f" ({error.status})" if error.status else ""
        typer.echo(f"cairn: {error.error}{status}: {error.detail}", err=True)
        raise typer.Exit(1) from error


def read_context(value: str | None) -> dict[str, Any]:
    """``--context``: JSON text, ``@file`` or ``-`` (standard input); an object."""
    if value is None:
        return {}
    if value == "-":
        text = sys.stdin.read()
    elif value.startswith("@"):
        text = Path(value[1:]).read_text()
    else:
        text = value
    try:
        context = json.loads(text)
    except ValueError as error:
        raise typer.BadParameter(f"not JSON: {error}", param_hint="--context") from error
    if not isinstance(context, dict):
        raise typer.BadParameter("must be a JSON object", param_hint="--context")
    return context


def post(
    schema: Annotated[str, typer.Argument(help="the record's schema_name, e.g. note.v1")],
    title: Annotated[str, typer.Argument(help="the record's title")],
    tag: Annotated[list[str] | None, typer.Option("--tag", help="a tag (repeatable)")] = None,
    context: Annotated[
        str | None, typer.Option(help="JSON object, @file, or - for standard input")
    ] = None,
    url: Url = None,
    token: Token = None,
    as_json: AsJson = False,
) -> None:
    """Create a record."""
    body = read_context(context)
    with connected(url, token) as cairn:
        created = cairn.create_breadcrumb(title, body, schema_name=schema, tags=tag or [])
    typer.echo(render.as_json(created) if as_json else f"{created.id} (version {created.version})")


def get(
    record_id: Annotated[str, typer.Argument(metavar="ID", help="the record's id")],
    url: Url = None,
    token: Token = None,
    as_json: AsJson = False,
) -> None:
    """Print a record as an LLM reads it (its llm_hints applied)."""
    with connected(url, token) as cairn:
        record = cairn.get_breadcrumb(record_id)
    if as_json:
        typer.echo(render.as_json(record))
        return
    typer.echo(f"{record.title}  [{record.schema_name or '-'}]  v{record.version}")
    typer.echo(f"id {record.id}, updated {record.updated_at.isoformat()}")
    typer.echo(f"tags: {', '.join(record.tags) or '-'}")
    typer.echo(json.dumps(record.context, indent=2, ensure_ascii=False))


def search(
    text: Annotated[str, typer.Argument(help="what to look for")],
    hybrid: Annotated[bool, typer.Option(help="dense and BM25 scores fused")] = False,
    schema: Annotated[str | None, typer.Option(help="only this schema_name")] = None,
    limit: Annotated[int, typer.Option(help="hits to return")] = 10,
    url: Url = None,
    token: Token = None,
    as_json: AsJson = False,
) -> None:
    """Records nearest in meaning to TEXT, best first."""
    mode: Literal["hybrid"] | None = "hybrid" if hybrid else None
    with connected(url, token) as cairn:
        hits = cairn.search(text, mode=mode, schema_name=schema, nn=limit)
    if as_json:
        typer.echo(render.as_json(hits))
    else:
        render.console().print(render.hits_table(hits))


def tail(
    schema: Annotated[str | None, typer.Option(help="only this schema_name")] = None,
    tag: Annotated[list[str] | None, typer.Option("--tag", help="any of these tags")] = None,
    session: Session = None,
    count: Annotated[int | None, typer.Option(help="stop after this many events")] = None,
    timeout: Annotated[float | None, typer.Option(help="stop after this many seconds")] = None,
    url: Url = None,
    token: Token = None,
    as_json: AsJson = False,
) -> None:
    """Print live events, one line each, until Ctrl-C (or --count / --timeout)."""
    with connected(url, token) as cairn:
        stream = cairn.events(
            schema_name=schema, any_tags=tag or None, session=session, stop_after_s=timeout
        )
        with stream:
            for seen, event in enumerate(stream, start=1):
                line = event.model_dump_json() if as_json else render.event_line(event)
                typer.echo(line)
                if count is not None and seen >= count:
                    break


def context(
    agent: Annotated[str, typer.Argument(help="the agent (consumer) id")],
    session: Session = None,
    misses: Misses = 10,
    debug: Annotated[
        bool, typer.Option("--debug", help="how it was computed, as Markdown (seed 003)")
    ] = False,
    url: Url = None,
    token: Token = None,
    as_json: AsJson = False,
) -> None:
    """The context last assembled for AGENT, and why each record is in or out."""
    if debug:
        with connected(url, token) as cairn:
            typer.echo(cairn.context_debug(agent, session=session), nl=False)
        return
    with connected(url, token) as cairn:
        assembled = cairn.latest_context(agent, session=session)
    if as_json:
        typer.echo(render.as_json(assembled))
        return
    stored = assembled.context
    _explained(stored.get("formatted_context", ""), stored.get("explain", {}), misses)
    typer.echo(f"{stored.get('token_count')} of {stored.get('token_budget')} tokens")


def query(
    text: Annotated[str, typer.Argument(help="the question to assemble a context for")],
    agent: Annotated[str, typer.Option(help="the agent whose sources and budget apply")],
    session: Session = None,
    budget: Annotated[int | None, typer.Option(help="tokens (default: the agent's)")] = None,
    misses: Misses = 10,
    url: Url = None,
    token: Token = None,
    as_json: AsJson = False,
) -> None:
    """A context assembled now for TEXT and --agent; nothing is stored."""
    with connected(url, token) as cairn:
        answer = cairn.query_context(text, agent_id=agent, session=session, budget=budget)
    if as_json:
        typer.echo(render.as_json(answer))
        return
    _explained(answer.formatted_context, answer.explain, misses)
    notes = [f"{answer.token_count} of {answer.token_budget} tokens"]
    notes += ["from cache"] * answer.cache_hit
    notes += [f"degraded: {', '.join(answer.degraded)}"] * bool(answer.degraded)
    typer.echo(", ".join(notes))


def coverage(url: Url = None, token: Token = None, as_json: AsJson = False) -> None:
    """How far the tenant's records got through each processing stage (curators)."""
    with connected(url, token) as cairn:
        figures = cairn.coverage()
    if as_json:
        typer.echo(render.as_json(figures))
        return
    out = render.console()
    for table in render.coverage_tables(figures):
        out.print(table)


def assemblies(
    agent: Annotated[str | None, typer.Option(help="only this agent's assemblies")] = None,
    session: Session = None,
    since: Annotated[
        datetime | None, typer.Option(help="only from this time on (ISO 8601, UTC)")
    ] = None,
    limit: Annotated[int, typer.Option(min=1, max=1000, help="newest entries to list")] = 20,
    stats: Annotated[
        bool, typer.Option("--stats", help="per agent: count, p50/p99 ms, tokens")
    ] = False,
    url: Url = None,
    token: Token = None,
    as_json: AsJson = False,
) -> None:
    """The assembly log, newest first, or (--stats) figures per agent (needs a curator)."""
    moment = since if since is None or since.tzinfo else since.replace(tzinfo=UTC)
    with connected(url, token) as cairn:
        if stats:
            summary = cairn.assembly_stats(since=moment)
            shown: Any = summary
            table = render.assembly_stats_table(summary.agents)
        else:
            page = cairn.list_assemblies(agent_id=agent, session=session, since=moment, limit=limit)
            shown, table = page.items, render.assemblies_table(page.items)
    if as_json:
        typer.echo(render.as_json(shown))
        return
    render.console().print(table)


def _explained(formatted: str, explain: dict[str, Any], misses: int) -> None:
    out = render.console()
    typer.echo(formatted)
    out.print(render.included_table(explain))
    out.print(render.misses_table(explain, misses))


def register(app: typer.Typer) -> None:
    from cairn.cli_import import import_records
    from cairn.cli_paths import paths_app

    for command in (post, get, search, tail, context, query, coverage, assemblies):
        app.command(command.__name__)(command)
    app.command("import")(import_records)
    app.add_typer(paths_app, name="paths")
