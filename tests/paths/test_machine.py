"""A session's debug path, one signal at a time: started by an error, a pivot for another
error, resolved by consecutive successes that count, abandoned when it goes quiet."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from cairn.paths.machine import PathState, Status, Waypoint, advance, sweep
from cairn.paths.signals import Kind, Signal

T0 = datetime(2026, 11, 26, 9, 0, tzinfo=UTC)
PYTEST_FAIL = Signal(Kind.ERROR, "exit code 1", "FAILED <path>::test_login", "pytest -q")
PYTEST_PASS = Signal(Kind.SUCCESS, "tests passed", None, "pytest -q", tests_passed=True)
IMPORT_ERROR = Signal(Kind.ERROR, "error output", "ModuleNotFoundError: No module named 'yaml'")
EDIT = Signal(Kind.ATTEMPT, "a command or an edit", command="edit_file")
HYPOTHESIS = Signal(Kind.HYPOTHESIS, "marked hypothesis")


def run(signals: list[Signal], state: PathState | None = None) -> tuple[PathState, list[Waypoint]]:
    state = state or PathState()
    waypoints: list[Waypoint] = []
    for minute, signal in enumerate(signals):
        step = advance(state, signal, T0 + timedelta(minutes=minute))
        state, waypoints = step.state, waypoints + list(step.waypoints)
    return state, waypoints


def test_an_error_starts_a_path_and_three_green_runs_resolve_it() -> None:
    state, waypoints = run(
        [PYTEST_FAIL, HYPOTHESIS, EDIT, PYTEST_FAIL, EDIT, PYTEST_PASS, PYTEST_PASS, PYTEST_PASS]
    )
    assert waypoints == [
        Waypoint.ERROR, Waypoint.HYPOTHESIS, Waypoint.ATTEMPT, Waypoint.FAILURE,
        Waypoint.ATTEMPT, Waypoint.SUCCESS, Waypoint.SUCCESS, Waypoint.SUCCESS,
        Waypoint.RESOLUTION,
    ]  # fmt: skip
    assert state.status is Status.RESOLVED and state.sequence == len(waypoints)
    assert state.signature == PYTEST_FAIL.signature


def test_nothing_but_an_error_opens_a_path() -> None:
    state, waypoints = run([PYTEST_PASS, EDIT, HYPOTHESIS])
    assert (state.status, waypoints) == (Status.IDLE, [])


def test_a_problem_resets_the_count_and_another_error_is_a_pivot_on_the_same_path() -> None:
    state, waypoints = run([PYTEST_FAIL, PYTEST_PASS, PYTEST_PASS, IMPORT_ERROR])
    assert waypoints[-1] is Waypoint.PIVOT
    assert (state.status, state.successes, state.signature) == (
        Status.ACTIVE, 0, IMPORT_ERROR.signature,
    )  # fmt: skip
    state, more = run([PYTEST_PASS, PYTEST_PASS], state)
    assert state.status is Status.ACTIVE and more == [Waypoint.SUCCESS, Waypoint.SUCCESS]


def test_only_the_failed_command_succeeding_counts_other_successes_are_attempts() -> None:
    build_fail = Signal(Kind.ERROR, "exit code 2", "make: *** [all] Error <n>", "make build")
    ls_ok = Signal(Kind.SUCCESS, "exit code 0", None, "ls")
    build_ok = Signal(Kind.SUCCESS, "exit code 0", None, "make build")
    state, waypoints = run([build_fail, ls_ok, ls_ok, ls_ok])
    assert state.status is Status.ACTIVE and waypoints[1:] == [Waypoint.ATTEMPT] * 3
    state, waypoints = run([build_ok, build_ok, build_ok], state)
    assert state.status is Status.RESOLVED and waypoints[-1] is Waypoint.RESOLUTION


def test_the_threshold_is_configurable() -> None:
    state = advance(PathState(), PYTEST_FAIL, T0).state
    step = advance(state, PYTEST_PASS, T0, threshold=1)
    assert step.resolved and step.state.status is Status.RESOLVED


def test_an_error_after_a_resolution_starts_a_new_path() -> None:
    state, _ = run([PYTEST_FAIL, PYTEST_PASS, PYTEST_PASS, PYTEST_PASS])
    step = advance(state, IMPORT_ERROR, T0 + timedelta(hours=1))
    assert step.started and step.state.sequence == 1 and step.state.status is Status.ACTIVE


def test_a_quiet_path_is_abandoned_by_the_sweep_and_a_busy_one_is_not() -> None:
    state, _ = run([PYTEST_FAIL, EDIT])  # last waypoint at T0 + 1 min
    quiet = T0 + timedelta(minutes=31)
    assert sweep(state, quiet, timedelta(minutes=30)).state.status is Status.ABANDONED
    assert sweep(state, quiet, timedelta(minutes=31)).state.status is Status.ACTIVE
    assert sweep(PathState(), quiet, timedelta(0)).state.status is Status.IDLE


def test_the_same_program_with_other_arguments_succeeding_counts() -> None:
    export = "python scripts/export.py --since 2026-11-01"
    failed = Signal(Kind.ERROR, "exit code 1", "ValueError: bad date", export)
    rerun = Signal(Kind.SUCCESS, "exit code 0", None, export.replace("11-01", "10-01"))
    state, waypoints = run([failed, rerun, rerun, rerun])
    assert state.status is Status.RESOLVED and waypoints[-1] is Waypoint.RESOLUTION


def test_a_binary_run_again_with_other_arguments_is_the_same_program() -> None:
    crashed = Signal(
        Kind.ERROR, "exit code 139", "out/resize: Segmentation fault", "./out/resize a.png"
    )
    others = [Signal(Kind.SUCCESS, "exit code 0", None, f"./out/resize {n}.png 640") for n in "bcd"]
    state, waypoints = run([crashed, *others])
    assert state.status is Status.RESOLVED and waypoints[-1] is Waypoint.RESOLUTION


def test_make_with_other_targets_is_the_same_build() -> None:
    failed = Signal(Kind.ERROR, "exit code 2", "src/io.c:3:1: error: unknown type name", "make")
    clean_all = Signal(Kind.SUCCESS, "exit code 0", None, "make clean all")
    state, _ = run([failed, clean_all, clean_all, clean_all])
    assert state.status is Status.RESOLVED


def test_another_script_of_the_same_interpreter_is_another_program() -> None:
    failed = Signal(Kind.ERROR, "exit code 1", "KeyError: 'sku'", "python -m shop.importer a.csv")
    other = Signal(Kind.SUCCESS, "exit code 0", None, "python -m http.server 8000")
    state, waypoints = run([failed, other, other, other])
    assert state.status is Status.ACTIVE and waypoints[1:] == [Waypoint.ATTEMPT] * 3
