"""The "next time, just do X" of a resolved path, extracted from its waypoints (the seed
asks an LLM; Cairn's default is deterministic, the LLM an optional refinement of this).

- **root cause**: the last discovery if the agent noted one, else the first error;
- **what fixed it**: the last attempt or revert between the last problem and the first
  success after it (the change that turned it green), with the command and files it named;
  an attempt that only re-runs a check of the path (the program that failed or the one
  that then succeeded: ``go test ./...`` again after an edit) changed nothing and is not it,
  nor is a rebuild (``make``, ``mvn package``) when a change came before it;
- **KISS summary**: one line joining the two, then the files the path touched.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from cairn.paths.machine import Waypoint
from cairn.paths.signals import program, rebuilds

MAX_PART = 300
MAX_FILES = 5

_FIXES = (Waypoint.ATTEMPT, Waypoint.REVERT)
_GREEN = (Waypoint.SUCCESS, Waypoint.RESOLUTION)
_PROBLEMS = (Waypoint.ERROR, Waypoint.FAILURE, Waypoint.PIVOT)


@dataclass(frozen=True, slots=True)
class WaypointNote:
    """One waypoint as the summary reads it."""

    kind: Waypoint
    summary: str
    command: str | None = None
    files: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Resolution:
    kiss_summary: str
    root_cause: str
    what_fixed_it: str
    files: tuple[str, ...]


def summarise(waypoints: Sequence[WaypointNote]) -> Resolution:
    """The resolution of a path from its waypoints in sequence order."""
    root = _root_cause(waypoints)
    fix = _fix(waypoints)
    files = tuple(dict.fromkeys(f for w in waypoints for f in w.files))[:MAX_FILES]
    kiss = f"When {root}: {fix}."
    if files:
        kiss += f" Files: {', '.join(files)}."
    return Resolution(kiss, root, fix, files)


def _root_cause(waypoints: Sequence[WaypointNote]) -> str:
    discoveries = [w for w in waypoints if w.kind is Waypoint.DISCOVERY]
    errors = [w for w in waypoints if w.kind is Waypoint.ERROR]
    chosen = discoveries[-1] if discoveries else errors[0] if errors else None
    return _clip(chosen.summary) if chosen else "the error"


def _fix(waypoints: Sequence[WaypointNote]) -> str:
    """The last attempt before the first success after the last problem (attempts between
    the successes of the final run only re-ran things); nothing tried: that success."""
    last_problem = max((i for i, w in enumerate(waypoints) if w.kind in _PROBLEMS), default=-1)
    first_green = next(
        (i for i in range(last_problem + 1, len(waypoints)) if waypoints[i].kind in _GREEN),
        len(waypoints),
    )
    checks = {program(w.command) for w in waypoints[: first_green + 1] if w.kind in _PROBLEMS}
    if first_green < len(waypoints):
        checks.add(program(waypoints[first_green].command))
    tried = [
        w
        for w in waypoints[last_problem + 1 : first_green]
        if w.kind in _FIXES and (w.command is None or program(w.command) not in checks)
    ]
    changes = [w for w in tried if not rebuilds(w.command)] or tried
    if changes:
        return _clip(_described(changes[-1]))
    if first_green < len(waypoints):
        return _clip(_described(waypoints[first_green]))
    return "no change was recorded"


def _described(waypoint: WaypointNote) -> str:
    if waypoint.command and waypoint.command not in waypoint.summary:
        return f"{waypoint.summary} (`{waypoint.command}`)"
    return waypoint.summary


def _clip(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= MAX_PART else text[: MAX_PART - 1] + "…"
