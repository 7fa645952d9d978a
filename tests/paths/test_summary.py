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


def test_re_running_the_failing_check_is_not_the_fix_even_when_it_names_the_file() -> None:
    failing = WaypointNote(Waypoint.ERROR, "--- FAIL: TestRound", "go test ./money")
    edit = WaypointNote(Waypoint.ATTEMPT, "round half to even", "edit_file", ("money/round.go",))
    rerun = WaypointNote(
        Waypoint.ATTEMPT, "run money/round_test.go", "go test -run TestRound ./money"
    )
    green = WaypointNote(Waypoint.SUCCESS, "ok money", "go test ./money")
    assert summarise([failing, edit, rerun, green]).what_fixed_it == (
        "round half to even (`edit_file`)"
    )


def test_a_rebuild_after_the_change_is_not_the_fix() -> None:
    crash = WaypointNote(Waypoint.ERROR, "Segmentation fault", "./out/resize a.png")
    edit = WaypointNote(Waypoint.ATTEMPT, "check the decoder's result", "edit_file")
    build = WaypointNote(Waypoint.ATTEMPT, "ran make", "make")
    green = WaypointNote(Waypoint.SUCCESS, "resized", "./out/resize a.png")
    assert summarise([crash, edit, build, green]).what_fixed_it.startswith("check the decoder")
    alone = summarise([crash, build, green]).what_fixed_it
    assert alone == "ran make"  # nothing else was tried: the rebuild is what is known


def test_a_command_that_is_no_check_of_the_path_can_be_the_fix() -> None:
    failing = WaypointNote(Waypoint.ERROR, "undefined: yaml.Unmarshal", "go build ./...")
    fetch = WaypointNote(Waypoint.ATTEMPT, "fetched the module", "go get gopkg.in/yaml.v3")
    green = WaypointNote(Waypoint.SUCCESS, "built", "go build ./...")
    assert summarise([failing, fetch, green]).what_fixed_it == (
        "fetched the module (`go get gopkg.in/yaml.v3`)"
    )
