"""``cairn paths``: a tenant's debug paths at a terminal — list, show, active — and an
agent's explicit start, resolve and abandon, through the Python client."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Annotated, Any, Literal

import typer
from rich.table import Table

from cairn import cli_render as render
from cairn.cli_client import AsJson, Token, Url, connected

if TYPE_CHECKING:
    from cairn_client.models import DebugPath, PathDetail

paths_app = typer.Typer(help="Debug paths: how a session's problems were solved.")

SessionArg = Annotated[str, typer.Argument(help="the session (`session:` optional)")]
PathArg = Annotated[str, typer.Argument(help="the path's id")]


@paths_app.command("list")
def list_paths(
    status: Annotated[
        Literal["active", "resolved", "abandoned"] | None, typer.Option(help="only these")
    ] = None,
    session: Annotated[str | None, typer.Option(help="only this session's")] = None,
    limit: Annotated[int, typer.Option(min=1, max=500, help="latest paths to list")] = 20,
    url: Url = None,
    token: Token = None,
    as_json: AsJson = False,
) -> None:
    """Paths, the latest started first."""
    with connected(url, token) as cairn:
        found = cairn.list_paths(status=status, session=session, limit=limit)
    if as_json:
        typer.echo(render.as_json(found))
        return
    render.console().print(paths_table(found))


@paths_app.command("show")
def show(path_id: PathArg, url: Url = None, token: Token = None, as_json: AsJson = False) -> None:
    """A path, its waypoints in order and the records they came from."""
    with connected(url, token) as cairn:
        detail = cairn.get_path(path_id)
    _print(detail, as_json)


@paths_app.command("active")
def active(
    session: SessionArg, url: Url = None, token: Token = None, as_json: AsJson = False
) -> None:
    """The session's active path (exits 1 when it has none)."""
    with connected(url, token) as cairn:
        detail = cairn.active_path(session)
    if detail is None:
        typer.echo(render.as_json(None) if as_json else f"{session}: no active path")
        raise typer.Exit(1)
    _print(detail, as_json)


@paths_app.command("start")
def start(
    session: SessionArg,
    summary: Annotated[str, typer.Argument(help="the problem, in a line")],
    signature: Annotated[str | None, typer.Option(help="the error line, if any")] = None,
    url: Url = None,
    token: Token = None,
    as_json: AsJson = False,
) -> None:
    """Start a path for SESSION explicitly (refused while it has an active one)."""
    with connected(url, token) as cairn:
        detail = cairn.start_path(session, summary, signature=signature)
    _print(detail, as_json)


@paths_app.command("resolve")
def resolve(
    path_id: PathArg,
    fix: Annotated[str | None, typer.Option("--fix", help="what fixed it")] = None,
    cause: Annotated[str | None, typer.Option("--cause", help="the root cause")] = None,
    url: Url = None,
    token: Token = None,
    as_json: AsJson = False,
) -> None:
    """Call an active path resolved; what is not given is extracted from its waypoints."""
    with connected(url, token) as cairn:
        detail = cairn.resolve_path(path_id, what_fixed_it=fix, root_cause=cause)
    _print(detail, as_json)


@paths_app.command("abandon")
def abandon(
    path_id: PathArg,
    reason: Annotated[str | None, typer.Option(help="why it is given up")] = None,
    url: Url = None,
    token: Token = None,
    as_json: AsJson = False,
) -> None:
    """Give up an active path."""
    with connected(url, token) as cairn:
        detail = cairn.abandon_path(path_id, reason=reason)
    _print(detail, as_json)


def paths_table(paths: Sequence[DebugPath]) -> Table:
    table = Table("started", "status", "session", "steps", "error / summary", "id")
    table.title = f"{len(paths)} paths"
    for path in paths:
        said = path.kiss_summary or path.signature or "-"
        table.add_row(
            path.started_at.strftime("%Y-%m-%d %H:%M:%S"), path.status, path.session,
            str(path.sequence), said[:60], str(path.id),
        )  # fmt: skip
    return table


def waypoints_table(detail: PathDetail) -> Table:
    table = Table("#", "type", "summary", "source", title="waypoints")
    for waypoint in detail.waypoints:
        source = waypoint.source
        table.add_row(
            str(waypoint.sequence), waypoint.type, waypoint.summary[:70],
            f"{source.title or '-'} [{source.schema_name}]" if source else "-",
        )  # fmt: skip
    return table


def _print(detail: PathDetail, as_json: bool) -> None:
    if as_json:
        typer.echo(render.as_json(detail))
        return
    path = detail.path
    typer.echo(f"{path.id}  {path.status}  {path.session}")
    for label, value in _summary_lines(path):
        typer.echo(f"{label}: {value}")
    render.console().print(waypoints_table(detail))


def _summary_lines(path: DebugPath) -> list[tuple[str, Any]]:
    lines = [
        ("error", path.signature),
        ("summary", path.kiss_summary),
        ("abandoned", path.abandon_reason),
    ]
    return [(label, value) for label, value in lines if value]
