"""What a record says about a debugging session, by rule."""

from __future__ import annotations

from typing import Any

import pytest

from cairn.paths.signals import Kind, classify, program


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


@pytest.mark.parametrize(
    ("command", "output"),
    [
        (
            "go test ./...",
            "ok  \texample.org/shop/cart\t0.021s\nok  \texample.org/shop/tax\t(cached)\n",
        ),
        ("go test -v ./cart", "=== RUN   TestTotal\n--- PASS: TestTotal (0.00s)\nPASS\n"),
        ("bundle exec rspec", "Finished in 0.412 seconds\n12 examples, 0 failures\n"),
        ("mvn test", "[INFO] Tests run: 40, Failures: 0, Errors: 0, Skipped: 2\n"),
        ("./gradlew build", "> Task :core:test\n\nBUILD SUCCESSFUL in 14s\n7 actionable tasks"),
        ("npx jest", "Tests:       9 passed, 9 total\nSnapshots:   0 total\n"),
        ("npx vitest run", " Test Files  3 passed (3)\n      Tests  21 passed (21)\n"),
        ("./run_tests", "All 21 tests passed\n"),
        ("make check", "# TOTAL: 6\n# PASS:  6\n# SKIP:  0\n# XFAIL: 0\n# FAIL:  0\n# ERROR: 0\n"),
        ("cargo test", "test result: ok. 8 passed; 0 failed; 0 ignored"),
        ("python -m unittest", "......\n------\nRan 6 tests in 0.004s\n\nOK\n"),
    ],
)
def test_green_runs_of_the_common_test_runners(command: str, output: str) -> None:
    signal = classify(record(command=command, exit_code=0, output=output))
    assert (signal.kind, signal.evidence, signal.tests_passed) == (
        Kind.SUCCESS, "tests passed", True,
    )  # fmt: skip


@pytest.mark.parametrize(
    ("command", "output"),
    [
        ("bundle exec rspec", "12 examples, 2 failures\n"),
        ("mvn test", "Tests run: 40, Failures: 0, Errors: 1, Skipped: 0\n"),
        ("gradle test", "Tests run: 40, Failures: 3, Errors: 0\n"),
        ("npx jest", "Tests:       1 failed, 8 passed, 9 total\n"),
        ("make check", "# TOTAL: 6\n# PASS:  5\n# FAIL:  1\n"),
    ],
)
def test_a_run_with_failures_is_never_green_whatever_its_exit_code(
    command: str, output: str
) -> None:
    signal = classify(record(command=command, exit_code=0, output=output))
    assert (signal.kind, signal.evidence, signal.tests_passed) == (
        Kind.ERROR, "failing tests", False,
    )  # fmt: skip


@pytest.mark.parametrize(
    ("command", "output"),
    [
        (
            "go test ./...",
            "--- FAIL: TestTax (0.00s)\nFAIL\tex.org/shop/tax\t0.01s\n"
            "ok  \tex.org/shop/cart\t0.02s",
        ),
        ("prove -v t/", "ok 1 - parses\nnot ok 2 - rounds\n1..2\n"),
    ],
)
def test_a_failed_test_line_keeps_a_run_from_being_green(command: str, output: str) -> None:
    failed = classify(record(command=command, exit_code=1, output=output))
    assert failed.kind is Kind.ERROR
    printed = classify(record(command="cat ci.log", exit_code=0, output=output))
    assert (printed.kind, printed.tests_passed) == (Kind.SUCCESS, False)


def test_a_build_that_skipped_its_tests_or_ran_none_is_no_green_test_run() -> None:
    skipped = classify(
        record(command="mvn -DskipTests package", exit_code=0, output="BUILD SUCCESS")
    )
    assert (skipped.kind, skipped.tests_passed) == (Kind.SUCCESS, False)
    assemble = classify(record(command="gradle assemble", exit_code=0, output="BUILD SUCCESSFUL"))
    assert assemble.tests_passed is False


@pytest.mark.parametrize(
    "command", ["grep -rn legacy_id src", "rg TODO", "lsof -i :8080", "pgrep -f worker",
                "diff a.json b.json", "test -f .env", "[ -d build ]", "ps aux | grep celery"]
)  # fmt: skip
def test_exit_one_of_a_command_that_answers_no_is_not_an_error(command: str) -> None:
    assert classify(record(command=command, exit_code=1, output="")).kind is Kind.ATTEMPT


def test_those_commands_failing_for_real_are_errors() -> None:
    missing = classify(record(command="grep x nope.txt", exit_code=2, output="grep: nope.txt"))
    assert missing.kind is Kind.ERROR
    reported = "rg: regex parse error:\n    (unclosed\nerror: unclosed group"
    assert classify(record(command="rg '(unclosed'", exit_code=1, output=reported)).kind is (
        Kind.ERROR
    )
    assert classify(record(command="ls nowhere", exit_code=1, output="")).kind is Kind.ERROR


def test_valgrind_findings_of_a_run_that_exited_zero_are_data() -> None:
    output = "==41== Invalid read of size 4\n==41== ERROR SUMMARY: 2 errors from 1 contexts"
    looked = classify(record(command="valgrind ./bin/server", exit_code=0, output=output))
    assert looked.kind is Kind.SUCCESS and looked.tests_passed is False
    asked = classify(
        record(command="valgrind --error-exitcode=3 ./bin/server", exit_code=3, output=output)
    )
    assert (asked.kind, asked.evidence) == (Kind.ERROR, "exit code 3")


@pytest.mark.parametrize(
    "note",
    ["I think the token expires before the retry", "Maybe the cache key ignores the tenant",
     "Hypothesis: the worker reads a stale config", "Perhaps DNS is slow inside the container"],
)  # fmt: skip
def test_a_note_that_opens_as_a_guess_is_a_hypothesis(note: str) -> None:
    signal = classify({"schema_name": "agent.note.v1", "title": note, "tags": [], "context": {}})
    assert signal.kind is Kind.HYPOTHESIS


def test_a_command_output_that_opens_with_maybe_is_not_a_hypothesis() -> None:
    signal = classify(record(title="Maybe later", command="./ask", exit_code=0, output="ok"))
    assert signal.kind is Kind.SUCCESS


def test_a_crash_is_signed_with_the_program_that_crashed() -> None:
    crash = "Segmentation fault (core dumped)\n"
    one = classify(record(command="./out/resize a.png", exit_code=139, output=crash))
    again = classify(record(command="./out/resize b.png", exit_code=139, output=crash))
    other = classify(record(command="./out/thumbs a.png", exit_code=139, output=crash))
    assert one.signature == again.signature == "out/resize: Segmentation fault (core dumped)"
    assert other.signature != one.signature


@pytest.mark.parametrize(
    ("command", "name"),
    [
        ("python tools/export.py --since 2026-01-01", "python tools/export.py"),
        ("python3 ./tools/export.py --since 2026-02-01", "python tools/export.py"),
        ("python -m pytest -q", "python -m pytest"),
        ("./out/resize a.png b.png", "out/resize"),
        ("out/resize --fast c.png", "out/resize"),
        ("make clean all", "make"),
        ("make -j4", "make"),
        ("./gradlew :core:test", "gradlew"),
        ("go test -count=1 ./...", "go test"),
        ("cargo build --release", "cargo build"),
        ("npm run lint -- --fix", "npm run lint"),
        ("bundle exec rspec spec/models", "rspec"),
        ("CI=1 sudo -E docker compose up", "docker compose"),
        ("eslint src/", "eslint"),
        ("", None),
    ],
)
def test_the_program_a_command_runs(command: str, name: str | None) -> None:
    assert program(command or None) == name


@pytest.mark.parametrize(
    ("text", "files"),
    [
        ("vim /etc/nginx/nginx.conf", ("/etc/nginx/nginx.conf",)),
        ("./deploy.sh then ~/app/config.yaml", ("./deploy.sh", "~/app/config.yaml")),
        ('File "/srv/app/db.py", line 3', ("/srv/app/db.py",)),
        ("../lib/x.rs:10:5: error", ("../lib/x.rs",)),
        ("see https://example.com/spec.json", ()),
        ("kept notes.json.bak", ()),
    ],
)
def test_file_paths_are_kept_as_written(text: str, files: tuple[str, ...]) -> None:
    assert classify(record(command="edit", output=text)).files == files
