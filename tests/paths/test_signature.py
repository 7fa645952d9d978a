"""Error signatures: the quoted error line, with what changes between runs masked."""

from __future__ import annotations

import pytest

from cairn.paths.signature import error_line, error_signature

TRACEBACK = """Traceback (most recent call last):
  File "/home/ana/app/main.py", line 12, in <module>
    import yaml
ModuleNotFoundError: No module named 'yaml'
"""


@pytest.mark.parametrize(
    ("output", "signature"),
    [
        (TRACEBACK, "ModuleNotFoundError: No module named 'yaml'"),
        (
            "FAILED tests/test_api.py::test_login - AssertionError: assert 401 == 200",
            "FAILED <path>::test_login - AssertionError: assert <n> == <n>",
        ),
        ("error[E0308]: mismatched types\n --> src/main.rs:4:18", "error[E0308]: mismatched types"),
        (
            "thread 'main' panicked at src/lib.rs:10:5:\nindex out of bounds",
            "thread 'main' panicked at <path>:<n>:<n>: index out of bounds",
        ),
        ("npm ERR! code ERESOLVE\nnpm ERR! unable to resolve", "npm ERR! code ERESOLVE"),
        ("HTTP/1.1 502 Bad Gateway", "HTTP 502 Bad Gateway"),
        (
            "TypeError: Cannot read properties of undefined (reading 'map') at /app/list.js:41:17",
            "TypeError: Cannot read properties of undefined (reading 'map') at <path>:<n>:<n>",
        ),
    ],
)
def test_the_signature_of_common_tool_output(output: str, signature: str) -> None:
    assert error_signature(output) == signature


def test_one_error_on_two_machines_has_one_signature() -> None:
    here = "KeyError: 'user' in /home/ana/svc/handlers.py:88 (request 3f2a9c81e0)"
    there = "KeyError: 'user' in /srv/app/svc/handlers.py:91 (request 9be01d77aa)"
    assert error_signature(here) == error_signature(there)
    assert error_signature(here) != error_signature(here.replace("'user'", "'token'"))


def test_ids_are_masked() -> None:
    line = "ValueError: record 6b1f3c1e-27a4-4f7e-9a53-2f0c6a0e5c11 has version 7"
    assert error_signature(line) == "ValueError: record <id> has version <n>"


def test_output_without_an_error_has_no_signature() -> None:
    assert error_signature("collected 12 items\n12 passed in 0.31s") is None
    assert error_line("") is None


def test_a_traceback_is_named_by_its_last_exception_not_its_first_line() -> None:
    chained = (
        TRACEBACK
        + "\nDuring handling of the above exception...\n"
        + ('Traceback (most recent call last):\n  File "x.py", line 3\nRuntimeError: setup failed')
    )
    assert error_signature(chained) == "RuntimeError: setup failed"


def test_a_rust_panic_is_named_by_its_message_not_by_the_failed_test_line() -> None:
    full = (
        "running 2 tests\ntest tests::sums_large ... FAILED\n"
        "thread 'tests::sums_large' panicked at src/lib.rs:7:9:\nattempt to add with overflow"
    )
    excerpt = "thread 'tests::sums_large' panicked at src/lib.rs:7:9:\nattempt to add with overflow"
    assert error_signature(full) == error_signature(excerpt)
    assert error_signature(full) == (
        "thread 'tests::sums_large' panicked at <path>:<n>:<n>: attempt to add with overflow"
    )


@pytest.mark.parametrize(
    ("output", "signature"),
    [
        (  # go build: the compiler's file:line:col line
            "# example.org/shop/cart\ncart/total.go:31:7: undefined: money.Round\n",
            "<path>:<n>:<n>: undefined: money.Round",
        ),
        (  # go test: the failed test, its duration masked
            "--- FAIL: TestTotalRounds (0.03s)\nFAIL\nFAIL\texample.org/shop/cart\t0.041s\n",
            "--- FAIL: TestTotalRounds (<n>)",
        ),
        (
            "panic: runtime error: index out of range [3] with length 3\n\ngoroutine 7 [running]:",
            "panic: runtime error: index out of range [<n>] with length <n>",
        ),
        (
            "src/api/user.ts(8,14): error TS2551: Property 'emial' does not exist on type 'User'.",
            "<path>(<n>,<n>): error TS2551: Property 'emial' does not exist on type 'User'.",
        ),
        (  # eslint's stylish format: the file, then one line per problem
            "/repo/web/src/form.ts\n  7:11  error  'draft' is never reassigned  prefer-const\n",
            "<n>:<n> error 'draft' is never reassigned prefer-const",
        ),
        (
            'psql:seed.sql:4: ERROR:  relation "invoices" does not exist\nLINE 1: SELECT',
            'psql:seed.sql:<n>: ERROR: relation "invoices" does not exist',
        ),
        (
            "ERROR 1054 (42S22) at line 3: Unknown column 'emial' in 'field list'",
            "ERROR <n> (42S22) at line <n>: Unknown column 'emial' in 'field list'",
        ),
        (
            'Exception in thread "main" java.lang.IllegalStateException: no config\n'
            "\tat org.example.App.load(App.java:20)\n\tat org.example.App.main(App.java:9)\n",
            'Exception in thread "main" java.lang.IllegalStateException: no config',
        ),
        ("Segmentation fault (core dumped)", "Segmentation fault (core dumped)"),
    ],
)
def test_the_error_lines_of_more_tools(output: str, signature: str) -> None:
    assert error_signature(output) == signature


def test_a_java_trace_is_named_by_its_deepest_cause() -> None:
    trace = (
        "org.example.LoadError: could not load settings\n"
        "\tat org.example.App.load(App.java:20)\n"
        "Caused by: java.io.FileNotFoundException: settings.yml (No such file or directory)\n"
        "\tat java.base/java.io.FileInputStream.open0(Native Method)\n"
    )
    assert error_signature(trace) == (
        "Caused by: java.io.FileNotFoundException: settings.yml (No such file or directory)"
    )


@pytest.mark.parametrize(
    ("wrapped", "specific"),
    [
        (  # Gradle: the task line, then the failed test
            "> Task :core:test FAILED\n\nParserTest > readsEmptyFile() FAILED\n"
            "    org.opentest4j.AssertionFailedError: expected: <0> but was: <1>\n"
            "FAILURE: Build failed with an exception.",
            "ParserTest > readsEmptyFile() FAILED",
        ),
        (  # the linker's exit status after the symbol it could not find
            "/usr/bin/ld: stats.o: in function `mean':\n"
            "stats.c:(.text+0x4f): undefined reference to `pow'\n"
            "collect2: error: ld returned 1 exit status\nmake: *** [Makefile:9: stats] Error 1",
            "stats.c:(.text+0x4f): undefined reference to `pow'",
        ),
        (  # pip: the build backend's own error after pip's wrapper lines
            "  error: subprocess-exited-with-error\n\n"
            "  \u00d7 Getting requirements to build wheel\n"
            "  ModuleNotFoundError: No module named 'cython'\n"
            "error: subprocess-exited-with-error",
            "ModuleNotFoundError: No module named 'cython'",
        ),
        (  # Rails: the database's error, not the migration runner's
            "== 20260101 AddIndexToOrders: migrating ====\n"
            "rails aborted!\nStandardError: An error has occurred, this and all later"
            ' migrations canceled:\n\nPG::UndefinedTable: ERROR:  relation "orders" does'
            " not exist\n",
            'PG::UndefinedTable: ERROR:  relation "orders" does not exist',
        ),
        (  # BuildKit: the failing step's error, not "failed to solve"
            "#7 [3/5] RUN npm ci\n#7 4.210 npm ERR! code EUSAGE\n#7 ERROR: process"
            ' "/bin/sh -c npm ci" did not complete successfully: exit code: 1\n'
            'ERROR: failed to solve: process "/bin/sh -c npm ci" did not complete successfully',
            "npm ERR! code EUSAGE",
        ),
    ],
)
def test_a_wrapper_line_gives_way_to_the_error_it_wraps(wrapped: str, specific: str) -> None:
    assert error_line(wrapped) == specific


def test_a_wrapper_line_alone_is_still_a_signature() -> None:
    assert error_line("> Task :core:compileJava FAILED") == "> Task :core:compileJava FAILED"
    assert error_signature("collect2: error: ld returned 1 exit status") == (
        "collect2: error: ld returned <n> exit status"
    )


def test_one_buildkit_error_from_two_builds_has_one_signature() -> None:
    plain = "#9 1.802 ERROR: No matching distribution found for requests==9.0"
    buildx = "#12 0.377 ERROR: No matching distribution found for requests==9.0"
    assert error_signature(plain) == error_signature(buildx)
    assert error_signature(plain) == "ERROR: No matching distribution found for requests==<n>"
