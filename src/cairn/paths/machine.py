"""How a session's debug path moves, one signal at a time (the seed's ``PathTracker``, as a
pure function over plain state so that any worker can apply it to state it read).

idle → active on an error; active → resolved after ``threshold`` consecutive successes
(a problem resets the count); active → abandoned when no waypoint came for ``idle_after``
(:func:`sweep`). One active path per session: an error with another signature while a path
is active is a ``pivot`` waypoint on it, the same signature again a ``failure``.

A success counts towards resolution when it is a green test run, or when the program
that succeeded (:func:`.signals.program`: the executable and its subcommand or script, so
``./build/app in.png`` and ``./build/app out.png``, ``make`` and ``make clean all`` are one)
had failed earlier in the path; any other success is just an ``attempt`` (``ls`` working
says nothing about the bug).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from enum import StrEnum

from cairn.paths.signals import Kind, Signal, program

RESOLUTION_THRESHOLD = 3


class Status(StrEnum):
    IDLE = "idle"
    ACTIVE = "active"
    RESOLVED = "resolved"
    ABANDONED = "abandoned"


class Waypoint(StrEnum):
    ERROR = "error"
    HYPOTHESIS = "hypothesis"
    ATTEMPT = "attempt"
    FAILURE = "failure"
    SUCCESS = "success"
    REVERT = "revert"
    PIVOT = "pivot"
    DISCOVERY = "discovery"
    RESOLUTION = "resolution"


@dataclass(frozen=True, slots=True)
class PathState:
    """A session's path as far as the machine needs it. ``sequence``: waypoints so far."""

    status: Status = Status.IDLE
    signature: str | None = None
    successes: int = 0
    failed_commands: frozenset[str] = frozenset()
    sequence: int = 0
    last_at: datetime | None = None


@dataclass(frozen=True, slots=True)
class Step:
    """What one signal did: the new state, the waypoints to record (in order; none when
    the signal says nothing about the path) and whether a path started here."""

    state: PathState
    waypoints: tuple[Waypoint, ...] = ()
    started: bool = False

    @property
    def resolved(self) -> bool:
        return Waypoint.RESOLUTION in self.waypoints


_NOTES = {
    Kind.HYPOTHESIS: Waypoint.HYPOTHESIS,
    Kind.DISCOVERY: Waypoint.DISCOVERY,
    Kind.REVERT: Waypoint.REVERT,
    Kind.ATTEMPT: Waypoint.ATTEMPT,
}


def advance(
    state: PathState, signal: Signal, now: datetime, *, threshold: int = RESOLUTION_THRESHOLD
) -> Step:
    """The path after ``signal`` arrived at ``now``."""
    if state.status is not Status.ACTIVE:
        if signal.kind is not Kind.ERROR:
            return Step(state)
        failed = frozenset({signal.command}) if signal.command else frozenset()
        started = PathState(Status.ACTIVE, signal.signature, 0, failed, 1, now)
        return Step(started, (Waypoint.ERROR,), started=True)
    if signal.kind is Kind.ERROR:
        return _problem(state, signal, now)
    if signal.kind is Kind.SUCCESS:
        return _success(state, signal, now, threshold)
    waypoint = _NOTES.get(signal.kind)
    if waypoint is None:
        return Step(state)
    return Step(_moved(state, now, 1), (waypoint,))


def sweep(state: PathState, now: datetime, idle_after: timedelta) -> Step:
    """Abandon an active path that has had no waypoint for ``idle_after``."""
    if state.status is not Status.ACTIVE or state.last_at is None:
        return Step(state)
    if now - state.last_at < idle_after:
        return Step(state)
    return Step(replace(state, status=Status.ABANDONED, successes=0))


def _problem(state: PathState, signal: Signal, now: datetime) -> Step:
    same = signal.signature == state.signature
    failed = state.failed_commands | ({signal.command} if signal.command else set())
    moved = replace(_moved(state, now, 1), successes=0, failed_commands=failed)
    if same:
        return Step(moved, (Waypoint.FAILURE,))
    return Step(replace(moved, signature=signal.signature), (Waypoint.PIVOT,))


def _success(state: PathState, signal: Signal, now: datetime, threshold: int) -> Step:
    failed = {program(command) for command in state.failed_commands}
    counts = signal.tests_passed or program(signal.command) in failed - {None}
    if not counts:
        return Step(_moved(state, now, 1), (Waypoint.ATTEMPT,))
    successes = state.successes + 1
    if successes < threshold:
        return Step(replace(_moved(state, now, 1), successes=successes), (Waypoint.SUCCESS,))
    done = replace(_moved(state, now, 2), status=Status.RESOLVED, successes=successes)
    return Step(done, (Waypoint.SUCCESS, Waypoint.RESOLUTION))


def _moved(state: PathState, now: datetime, waypoints: int) -> PathState:
    return replace(state, sequence=state.sequence + waypoints, last_at=now)
