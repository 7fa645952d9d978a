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
