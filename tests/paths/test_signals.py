"""What a record says about a debugging session, by rule."""

from __future__ import annotations

from typing import Any

from cairn.paths.signals import Kind, classify


def record(
    title: str = "tool output", tags: list[str] | None = None, **context: Any
) -> dict[str, Any]:
    return {
        "schema_name": "tool.response.v1",
        "title": title,
        "tags": tags or [],
        "context": context,
    }


def test_a_failing_pytest_run_is_an_error_with_the_failing_line_as_signature() -> None:
    output = (
        "tests/test_api.py F.\n"
        "FAILED tests/test_api.py::test_login - KeyError: 'user'\n"
        "1 failed, 1 passed"
    )
    signal = classify(record(command="pytest -q", exit_code=1, output=output))
    assert signal.kind is Kind.ERROR and signal.evidence == "exit code 1"
    assert signal.signature == "FAILED <path>::test_login - KeyError: 'user'"
    assert signal.command == "pytest -q" and signal.files == ("tests/test_api.py",)


def test_a_status_or_http_5xx_is_an_error_even_without_error_text() -> None:
    assert classify(record(tool="deploy", status="failed")).evidence == "status failed"
    http = classify(record(tool="http.get", status_code=503, output="upstream down"))
    assert (http.kind, http.evidence) == (Kind.ERROR, "HTTP 503")
    assert http.signature == "http.get HTTP 503"  # no error line: the command and evidence


def test_a_green_test_run_is_a_success_that_counts_on_its_own() -> None:
    cargo = classify(record(command="cargo test", exit_code=0, output="test result: ok. 5 passed"))
    assert (cargo.kind, cargo.tests_passed) == (Kind.SUCCESS, True)
    npm = classify(record(command="npm test", output="Tests: 14 passing"))
    assert (npm.kind, npm.tests_passed) == (Kind.SUCCESS, True)


def test_exit_code_zero_is_a_success_of_that_command_only() -> None:
    signal = classify(record(command="make build", exit_code=0, output="built"))
    assert (signal.kind, signal.tests_passed, signal.command) == (Kind.SUCCESS, False, "make build")


def test_notes_tagged_or_opened_as_hypothesis_or_discovery() -> None:
    tagged = classify({"title": "maybe the cache", "tags": ["debug:hypothesis"], "context": {}})
    assert tagged.kind is Kind.HYPOTHESIS
    note = classify({"title": "Discovery: the env var is unset in CI", "tags": [], "context": {}})
    assert note.kind is Kind.DISCOVERY


def test_reverts_edits_and_silence() -> None:
    assert classify(record(command="git restore src/app.py", exit_code=0)).kind is Kind.REVERT
    edit = classify(record(title="edit", tool="edit_file", path="src/app.py"))
    assert edit.kind is Kind.ATTEMPT
    assert classify({"title": "Hello", "tags": [], "context": {"text": "hi"}}).kind is Kind.NONE


def test_a_context_that_is_not_an_object_says_nothing() -> None:
    assert classify({"title": "x", "tags": [], "context": ["a", "b"]}).kind is Kind.NONE


def test_error_words_in_the_output_of_a_command_that_worked_are_data() -> None:
    grep = classify(record(command="grep -rn except src", exit_code=0, output="except KeyError:"))
    assert grep.kind is Kind.SUCCESS
    logs = classify(record(command="docker compose logs api", exit_code=0, output=TRACEBACK))
    assert logs.kind is Kind.SUCCESS and logs.signature is None
    failing = classify(record(command="pytest", exit_code=0, output="1 failed, 2 passed"))
    assert failing.kind is Kind.ERROR  # a test run's failures count whatever its exit code


TRACEBACK = "Traceback (most recent call last):\n  File \"a.py\", line 1\nKeyError: 'x'"
