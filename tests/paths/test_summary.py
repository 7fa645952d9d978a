"""The extractive summary of a resolved path."""

from __future__ import annotations

from cairn.paths.machine import Waypoint
from cairn.paths.summary import WaypointNote, summarise

ERROR = WaypointNote(Waypoint.ERROR, "ModuleNotFoundError: No module named 'yaml'", "pytest")
GREEN = WaypointNote(Waypoint.SUCCESS, "12 passed", "pytest")
DONE = WaypointNote(Waypoint.RESOLUTION, "resolved")


def test_the_fix_is_the_last_attempt_before_the_green_run() -> None:
    path = [
        ERROR,
        WaypointNote(Waypoint.ATTEMPT, "pinned pyyaml", "edit", ("requirements.txt",)),
        WaypointNote(Waypoint.FAILURE, ERROR.summary, "pytest"),
        WaypointNote(Waypoint.ATTEMPT, "installed the dev extras", "pip install -e .[dev]"),
        GREEN, GREEN, GREEN, DONE,
    ]  # fmt: skip
    resolution = summarise(path)
    assert resolution.root_cause == ERROR.summary
    assert resolution.what_fixed_it == "installed the dev extras (`pip install -e .[dev]`)"
    assert resolution.files == ("requirements.txt",)
    assert resolution.kiss_summary == (
        "When ModuleNotFoundError: No module named 'yaml': installed the dev extras "
        "(`pip install -e .[dev]`). Files: requirements.txt."
    )


def test_a_noted_discovery_is_the_root_cause() -> None:
    found = WaypointNote(Waypoint.DISCOVERY, "Discovery: CI runs without the dev extras")
    resolution = summarise(
        [ERROR, found, WaypointNote(Waypoint.REVERT, "git restore setup.cfg"), GREEN]
    )
    assert resolution.root_cause == found.summary
    assert resolution.what_fixed_it == "git restore setup.cfg"


def test_without_any_attempt_the_green_run_is_what_is_known() -> None:
    assert summarise([ERROR, GREEN, GREEN, GREEN, DONE]).what_fixed_it == "12 passed (`pytest`)"
    assert summarise([]).root_cause == "the error"


def test_long_parts_are_clipped() -> None:
    long = WaypointNote(Waypoint.ERROR, "E " * 400)
    assert len(summarise([long, GREEN]).root_cause) == 300


def test_attempts_inside_the_final_green_run_are_not_the_fix() -> None:
    edit = WaypointNote(Waypoint.ATTEMPT, "guarded the empty cart", "edit", ("shop/cart.py",))
    rerun = WaypointNote(Waypoint.ATTEMPT, "run all tests", "pytest -q")
    path = [ERROR, edit, GREEN, rerun, GREEN, GREEN, DONE]
    assert summarise(path).what_fixed_it == "guarded the empty cart (`edit`)"
