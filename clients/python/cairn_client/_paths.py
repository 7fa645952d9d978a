"""Routes of debug paths: a tenant's paths, one with its waypoints, a session's active
one, and an agent's explicit start, resolve and abandon."""

from __future__ import annotations

from typing import Any
from uuid import UUID

from cairn_client._core import Call, call, route
from cairn_client.models import DebugPath, PathDetail, PathStatus

Id = UUID | str


def _given(**fields: Any) -> dict[str, Any]:
    return {key: value for key, value in fields.items() if value is not None}


class PathRoutes:
    @route
    def list_paths(
        self,
        *,
        status: PathStatus | None = None,
        session: str | None = None,
        limit: int | None = None,
    ) -> Call[list[DebugPath]]:
        """Paths, the latest started first; ``session`` with or without ``session:``."""
        params = {"status": status, "session": session, "limit": limit}
        return call("list_paths", list[DebugPath], params=params)

    @route
    def get_path(self, path_id: Id) -> Call[PathDetail]:
        """The path, its waypoints in order and the records they came from."""
        return call("get_path", PathDetail, path={"path_id": path_id})

    @route
    def active_path(self, session: str) -> Call[PathDetail | None]:
        """The session's active path, or None when it has none."""
        return call("active_path", PathDetail | None, params={"session": session})

    @route
    def start_path(
        self, session: str, summary: str, *, signature: str | None = None
    ) -> Call[PathDetail]:
        """Start a path explicitly; ``Conflict`` while the session has an active one."""
        body = _given(session=session, summary=summary, signature=signature)
        return call("start_path", PathDetail, body=body)

    @route
    def resolve_path(
        self, path_id: Id, *, what_fixed_it: str | None = None, root_cause: str | None = None
    ) -> Call[PathDetail]:
        """Call an active path resolved; the summary's parts not given are extracted from
        its waypoints. ``Conflict`` for a path that is not active."""
        body = _given(what_fixed_it=what_fixed_it, root_cause=root_cause)
        return call("resolve_path", PathDetail, path={"path_id": path_id}, body=body)

    @route
    def abandon_path(self, path_id: Id, *, reason: str | None = None) -> Call[PathDetail]:
        """Give up an active path; ``Conflict`` for one that is not active."""
        body = _given(reason=reason)
        return call("abandon_path", PathDetail, path={"path_id": path_id}, body=body)
