"""Writes ``debug_paths/sessions.json``: scripted debugging sessions as an agent would post
them, each step annotated by hand with what a developer would call it.

    PYTHONPATH=$PWD/src .venv/bin/python benchmarks/quality/debug_paths_corpus.py

The expectations are written from the transcripts, not from running the rules: a step's
``expect`` is the list of waypoints a developer would record for it (``[]``: not part of
a path), a session's ``paths`` the problems it had, in order, each with how it ended
(``resolved``, ``abandoned``, ``active``) and a ``group`` naming the underlying error so
that the same error in two sessions can be matched. An error step's ``group`` names the
error it reports. ``gap`` is the minutes since the previous step (default 1), ``quiet``
the minutes the session stays silent after its last step (default 5).
"""

# Tool output is quoted verbatim: long lines and typography as the tools print them.
# ruff: noqa: E501, RUF001

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from debug_paths_recurrences import RECURRENCES, UNRELATED

OUT = Path(__file__).resolve().parent / "debug_paths" / "sessions.json"
RECURRENCES_OUT = OUT.with_name("recurrences.json")
UNRELATED_OUT = OUT.with_name("unrelated.json")

Step = dict[str, Any]


def run(
    command: str,
    output: str,
    exit_code: int,
    expect: list[str],
    *,
    group: str | None = None,
    gap: int = 1,
    title: str | None = None,
    **extra: Any,
) -> Step:
    """A tool response: a command that ran, its output and exit code."""
    record = {
        "schema_name": "tool.response.v1",
        "title": title or f"ran {command}",
        "tags": ["tool:shell"],
        "context": {"command": command, "exit_code": exit_code, "output": output, **extra},
    }
    return _step(record, expect, group, gap)


def call(tool: str, title: str, expect: list[str], *, gap: int = 1, **context: Any) -> Step:
    """A tool call with no outcome of its own (an edit, a read, a command about to run)."""
    record = {
        "schema_name": "tool.call.v1",
        "title": title,
        "tags": [f"tool:{tool}"],
        "context": {"tool": tool, **context},
    }
    return _step(record, expect, None, gap)


def note(text: str, expect: list[str], *, tags: tuple[str, ...] = (), gap: int = 1) -> Step:
    """Something the agent wrote down."""
    record = {
        "schema_name": "agent.note.v1",
        "title": text.split(".")[0][:80],
        "tags": ["note", *tags],
        "context": {"content": text},
    }
    return _step(record, expect, None, gap)


def edit(path: str, what: str, expect: list[str], *, gap: int = 1) -> Step:
    return call("edit_file", f"edit {path}: {what}", expect, gap=gap, path=path, change=what)


def _step(record: dict[str, Any], expect: list[str], group: str | None, gap: int) -> Step:
    step: Step = {"record": record, "expect": expect, "gap": gap}
    if group is not None:
        step["group"] = group
    return step


def session(
    sid: str, kinds: list[str], paths: list[dict[str, Any]], steps: list[Step], **more: Any
) -> dict[str, Any]:
    return {"id": sid, "kinds": kinds, "paths": paths, "steps": steps, **more}


def path(group: str, end: str, fix: str | None = None) -> dict[str, Any]:
    """``fix``: a word the "what fixed it" of a resolved path should name."""
    out: dict[str, Any] = {"group": group, "end": end}
    if fix is not None:
        out["fix"] = fix
    return out


E, F, P, S, A, H, D, R = (
    "error",
    "failure",
    "pivot",
    "success",
    "attempt",
    "hypothesis",
    "discovery",
    "revert",
)
RES = [S, "resolution"]

PYTEST_TOTAL_FAIL = """============================= test session starts ==============================
platform linux -- Python 3.11.9, pytest-8.3.3, pluggy-1.5.0
rootdir: /home/dev/shop
collected 14 items

tests/test_cart.py ....F.........                                        [100%]

=================================== FAILURES ===================================
_______________________________ test_cart_total ________________________________

    def test_cart_total():
        cart = Cart([Item("apple", 120, qty=3), Item("pear", 80, qty=1)])
>       assert cart.total() == 440
E       assert 360 == 440
E        +  where 360 = <bound method Cart.total of <shop.cart.Cart object at 0x7f3a2c1d9e50>>()

tests/test_cart.py:{line}: AssertionError
=========================== short test summary info ============================
FAILED tests/test_cart.py::test_cart_total - assert 360 == 440
========================= 1 failed, 13 passed in 0.{ms}s =========================
"""


def pytest_pass(n: int, ms: int = 41, extra: str = "") -> str:
    return (
        "============================= test session starts ==============================\n"
        f"collected {n} items\n\ntests/test_cart.py {'.' * n}    [100%]\n\n"
        f"============================== {n} passed{extra} in 0.{ms}s ==============================\n"
    )


NO_YAML = """ImportError while loading conftest '{root}/tests/conftest.py'.
tests/conftest.py:3: in <module>
    import yaml
E   ModuleNotFoundError: No module named 'yaml'
"""

E0308 = """   Compiling ledger v0.4.1 ({root})
error[E0308]: mismatched types
  --> {file}:{line}:24
   |
{line} |     let total: u64 = entries.iter().map(|e| e.amount).sum::<i64>();
   |                ---   ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^ expected `u64`, found `i64`
   |                |
   |                expected due to this

For more information about this error, try `rustc --explain E0308`.
error: could not compile `ledger` (lib) due to 1 previous error
"""

HTTP_500 = """HTTP/1.1 500 Internal Server Error
content-type: application/json
x-request-id: {rid}

{{"detail":"Internal Server Error"}}"""

ORDERS_TRACE = """INFO:     127.0.0.1:51234 - "POST /orders HTTP/1.1" 500 Internal Server Error
ERROR:    Exception in ASGI application
Traceback (most recent call last):
  File "/srv/app/.venv/lib/python3.11/site-packages/uvicorn/protocols/http/h11_impl.py", line 406, in run_asgi
  File "/srv/app/orders/api.py", line 58, in create_order
    customer = customers[payload.customer_id]
KeyError: 'cus_9f8e7d'
"""

CARGO_OK = "   Compiling ledger v0.4.1 (/home/dev/ledger)\n    Finished `dev` profile [unoptimized + debuginfo] target(s) in 3.{}s\n"
CARGO_TEST_OK = """running 9 tests
test tests::sums_positive ... ok
test tests::sums_empty ... ok
test result: ok. 9 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.01s
"""

JEST_FAIL = """FAIL src/components/__tests__/PriceTag.test.tsx
  ● PriceTag › formats cents as euros

    expect(received).toBe(expected) // Object.is equality

    Expected: "€12.50"
    Received: "€1250"

      12 |     render(<PriceTag cents={{1250}} />);
    > 13 |     expect(screen.getByText(/€/).textContent).toBe("€12.50");
         |                                               ^

Test Suites: 1 failed, 5 passed, 6 total
Tests:       1 failed, 31 passed, 32 total
Time:        {sec}.2 s
"""
JEST_PASS = """PASS src/components/__tests__/PriceTag.test.tsx
Test Suites: 6 passed, 6 total
Tests:       32 passed, 32 total
Time:        2.9 s
"""

FLAKY_FAIL = """tests/test_sync.py::test_sync_completes FAILED                          [100%]
E       TimeoutError: sync did not finish within 2.0s
FAILED tests/test_sync.py::test_sync_completes - TimeoutError: sync did not finish within 2.0s
========================= 1 failed, 22 passed in {sec}.31s =========================
"""


def sessions() -> list[dict[str, Any]]:
    total_fail = PYTEST_TOTAL_FAIL.format(line=14, ms=52)
    return [
        session(
            "pytest-assertion-fixed",
            ["pytest", "assertion", "hypothesis", "resolved"],
            [path("py-cart-total", "resolved", fix="cart.py")],
            [
                run("pytest -q tests/test_cart.py", pytest_pass(14), 0, []),
                edit("shop/cart.py", "apply the bulk discount per item", []),
                run("pytest -q tests/test_cart.py", total_fail, 1, [E], group="py-cart-total"),
                note(
                    "Hypothesis: the discount is applied to qty instead of the unit price.",
                    [H],
                    tags=("hypothesis",),
                ),
                edit("shop/cart.py", "multiply by qty after the discount", [A]),
                run(
                    "pytest -q tests/test_cart.py",
                    PYTEST_TOTAL_FAIL.format(line=14, ms=49),
                    1,
                    [F],
                    group="py-cart-total",
                ),
                edit("shop/cart.py", "discount = unit_price * rate, not qty * rate", [A]),
                run("pytest -q tests/test_cart.py", pytest_pass(14), 0, [S]),
                run("pytest -q", pytest_pass(14, 63), 0, [S]),
                run("pytest -q", pytest_pass(14, 60), 0, RES),
            ],
        ),
        session(
            "pytest-import-error",
            ["pytest", "import-error", "resolved"],
            [path("py-no-yaml", "resolved", fix="pyyaml")],
            [
                run(
                    "pytest -q",
                    NO_YAML.format(root="/home/dev/cfgsvc"),
                    4,
                    [E],
                    group="py-no-yaml",
                ),
                run("pip install pyyaml", "Successfully installed PyYAML-6.0.2", 0, [A]),
                run("pytest -q", pytest_pass(22, 88), 0, [S]),
                note("Added pyyaml to the dev extras in pyproject.toml.", [A]),
                run("pytest -q", pytest_pass(22, 85), 0, [S]),
                run("pytest -q tests/test_config.py", pytest_pass(6, 12), 0, RES),
            ],
        ),
        session(
            "pytest-fixture-missing",
            ["pytest", "fixture", "resolved"],
            [path("py-fixture-db", "resolved", fix="conftest.py")],
            [
                run(
                    "pytest tests/test_users.py",
                    "ERROR at setup of test_create_user\n"
                    "file /home/dev/api/tests/test_users.py, line 8\n"
                    "  def test_create_user(db_session):\n"
                    "E       fixture 'db_session' not found\n"
                    ">       available fixtures: cache, capfd, monkeypatch, tmp_path\n"
                    "=========================== 1 error in 0.08s ===========================\n",
                    1,
                    [E],
                    group="py-fixture-db",
                ),
                call("read_file", "read tests/conftest.py", [A], path="tests/conftest.py"),
                note(
                    "Discovery: the db fixtures live in tests/db/conftest.py, which "
                    "test_users.py (one level up) never sees.",
                    [D],
                    tags=("discovery",),
                ),
                edit("tests/conftest.py", "move db_session up from tests/db/conftest.py", [A]),
                run("pytest tests/test_users.py", pytest_pass(5, 31), 0, [S]),
                run("pytest tests/db", pytest_pass(11, 44), 0, [S]),
                run("pytest", pytest_pass(40, 97), 0, RES),
            ],
        ),
        session(
            "jest-expect-fixed",
            ["npm", "jest", "resolved"],
            [path("jest-pricetag", "resolved", fix="PriceTag")],
            [
                run("npm test", JEST_FAIL.format(sec=3), 1, [E], group="jest-pricetag"),
                edit("src/components/PriceTag.tsx", "divide cents by 100 before formatting", [A]),
                run("npm test", JEST_PASS, 0, [S]),
                run("npm test -- --watchAll=false", JEST_PASS, 0, [S]),
                run("npm test", JEST_PASS, 0, RES),
            ],
        ),
        session(
            "cargo-build-e0308",
            ["cargo", "build", "resolved"],
            [path("rust-e0308-sum", "resolved", fix="summary.rs")],
            [
                run(
                    "cargo build",
                    E0308.format(root="/home/dev/ledger", file="src/summary.rs", line=42),
                    101,
                    [E],
                    group="rust-e0308-sum",
                ),
                edit("src/summary.rs", "sum::<u64>() and cast amounts", [A]),
                run("cargo build", CARGO_OK.format(71), 0, [S]),
                run("cargo test", CARGO_TEST_OK, 0, [S]),
                run("cargo test --release", CARGO_TEST_OK, 0, RES),
            ],
        ),
        session(
            "cargo-test-panic",
            ["cargo", "test", "panic", "resolved"],
            [path("rust-overflow", "resolved", fix="ledger.rs")],
            [
                run(
                    "cargo test",
                    "running 9 tests\ntest tests::sums_large ... FAILED\n\nfailures:\n\n"
                    "---- tests::sums_large stdout ----\nthread 'tests::sums_large' panicked at "
                    "src/ledger.rs:88:9:\nattempt to add with overflow\n\n"
                    "test result: FAILED. 8 passed; 1 failed; 0 ignored; 0 measured\n"
                    "error: test failed, to rerun pass `--lib`\n",
                    101,
                    [E],
                    group="rust-overflow",
                ),
                note(
                    "Hypothesis: i32 accumulator overflows on the large fixture.",
                    [H],
                    tags=("debug:hypothesis",),
                ),
                edit("src/ledger.rs", "accumulate in i64 with checked_add", [A]),
                run("cargo test", CARGO_TEST_OK, 0, [S]),
                run("cargo test", CARGO_TEST_OK, 0, [S]),
                run("cargo test -- --include-ignored", CARGO_TEST_OK, 0, RES),
            ],
        ),
        session(
            "python-traceback-script",
            ["traceback", "discovery", "resolved"],
            [path("py-keyerror-user-id", "resolved", fix="export.py")],
            [
                run(
                    "python scripts/export.py --since 2026-11-01",
                    "Traceback (most recent call last):\n"
                    '  File "/home/dev/crm/scripts/export.py", line 77, in <module>\n'
                    "    main()\n"
                    '  File "/home/dev/crm/scripts/export.py", line 64, in main\n'
                    '    row["user_id"]\n'
                    "KeyError: 'user_id'\n",
                    1,
                    [E],
                    group="py-keyerror-user-id",
                ),
                run("head -2 exports/raw.csv", "id,email,created\n17,a@b.c,2026-11-02", 0, [A]),
                note(
                    "Discovery: the CSV header says id, not user_id, since the v2 export.",
                    [D],
                    tags=("discovery",),
                ),
                edit("scripts/export.py", "read row['id'] (v2 header)", [A]),
                run("python scripts/export.py --since 2026-11-01", "exported 412 rows", 0, [S]),
                run("python scripts/export.py --since 2026-10-01", "exported 1031 rows", 0, [S]),
                run("python scripts/export.py --since 2026-11-01", "exported 412 rows", 0, RES),
            ],
        ),
        session(
            "curl-http-500",
            ["curl", "http-500", "resolved"],
            [path("http500-orders", "resolved", fix="api.py")],
            [
                run(
                    "curl -si -X POST localhost:8000/orders -d @order.json",
                    HTTP_500.format(rid="3f9c2a1e-8b7d-4c6a-9e5f-0a1b2c3d4e5f"),
                    0,
                    [E],
                    group="http500-orders",
                    status_code=500,
                ),
                run(
                    "docker compose logs api --tail 20",
                    ORDERS_TRACE,
                    0,
                    [A],
                    title="read the api logs",
                ),
                edit("orders/api.py", "404 for an unknown customer instead of KeyError", [A]),
                run(
                    "curl -si -X POST localhost:8000/orders -d @order.json",
                    'HTTP/1.1 201 Created\ncontent-type: application/json\n\n{"id": 981}',
                    0,
                    [S],
                    status_code=201,
                ),
                run(
                    "curl -si -X POST localhost:8000/orders -d @order.json",
                    'HTTP/1.1 201 Created\n\n{"id": 982}',
                    0,
                    [S],
                    status_code=201,
                ),
                run("pytest tests/test_orders.py", pytest_pass(9, 77), 0, RES),
            ],
        ),
        session(
            "flaky-unresolved",
            ["flaky", "pytest", "active"],
            [path("py-flaky-sync-timeout", "active")],
            [
                run(
                    "pytest tests/test_sync.py",
                    FLAKY_FAIL.format(sec=2),
                    1,
                    [E],
                    group="py-flaky-sync-timeout",
                ),
                run("pytest tests/test_sync.py", pytest_pass(23, 95), 0, [S]),
                run(
                    "pytest tests/test_sync.py",
                    FLAKY_FAIL.format(sec=3),
                    1,
                    [F],
                    group="py-flaky-sync-timeout",
                ),
                run("pytest tests/test_sync.py", pytest_pass(23, 91), 0, [S]),
                note("This one is flaky: passes about half the time.", []),
            ],
        ),
        session(
            "flaky-then-fixed",
            ["flaky", "pytest", "hypothesis", "resolved"],
            [path("py-flaky-sync-timeout", "resolved", fix="sync.py")],
            [
                run(
                    "pytest tests/test_sync.py",
                    FLAKY_FAIL.format(sec=2),
                    1,
                    [E],
                    group="py-flaky-sync-timeout",
                ),
                run("pytest tests/test_sync.py", pytest_pass(23, 90), 0, [S]),
                run(
                    "pytest tests/test_sync.py",
                    FLAKY_FAIL.format(sec=4),
                    1,
                    [F],
                    group="py-flaky-sync-timeout",
                ),
                note(
                    "Hypothesis: the sync waits on a fixed sleep instead of the done event.",
                    [H],
                    tags=("hypothesis",),
                ),
                edit("app/sync.py", "await done.wait() instead of sleep(2)", [A]),
                run("pytest tests/test_sync.py --count 20", pytest_pass(23, 99), 0, [S]),
                run("pytest tests/test_sync.py --count 20", pytest_pass(23, 97), 0, [S]),
                run("pytest", pytest_pass(80, 99), 0, RES),
            ],
        ),
        session(
            "pivot-import-then-assert",
            ["pytest", "pivot", "resolved"],
            [path("py-no-requests", "resolved", fix="cart.py")],
            [
                run(
                    "pytest -q",
                    "ImportError while importing test module '/home/dev/shop/tests/test_cart.py'.\n"
                    "tests/test_cart.py:2: in <module>\n    import requests\n"
                    "E   ModuleNotFoundError: No module named 'requests'\n"
                    "=========================== 1 error in 0.11s ============================\n",
                    2,
                    [E],
                    group="py-no-requests",
                ),
                run("pip install requests", "Successfully installed requests-2.32.3", 0, [A]),
                run(
                    "pytest -q",
                    PYTEST_TOTAL_FAIL.format(line=31, ms=58),
                    1,
                    [P],
                    group="py-cart-total",
                ),
                edit("shop/cart.py", "apply the discount to the unit price", [A]),
                run("pytest -q", pytest_pass(14, 45), 0, [S]),
                run("pytest -q", pytest_pass(14, 44), 0, [S]),
                run("pytest -q", pytest_pass(14, 47), 0, RES),
            ],
        ),
        session(
            "abandoned-cargo",
            ["cargo", "abandoned"],
            [path("rust-e0308-sum", "abandoned")],
            [
                run(
                    "cargo build",
                    E0308.format(root="/home/dev/ledger", file="src/summary.rs", line=42),
                    101,
                    [E],
                    group="rust-e0308-sum",
                ),
                edit("src/summary.rs", "try an `as u64` cast on the sum", [A]),
                run(
                    "cargo build",
                    E0308.format(root="/home/dev/ledger", file="src/summary.rs", line=43),
                    101,
                    [F],
                    group="rust-e0308-sum",
                ),
            ],
            quiet=180,
        ),
        session(
            "abandoned-npm",
            ["npm", "abandoned", "hypothesis"],
            [path("npm-eresolve", "abandoned")],
            [
                run(
                    "npm install",
                    "npm ERR! code ERESOLVE\nnpm ERR! ERESOLVE unable to resolve dependency tree\n"
                    "npm ERR! Found: react@18.3.1\n"
                    "npm ERR! Could not resolve dependency:\n"
                    'npm ERR! peer react@"^17.0.0" from react-datepicker@4.8.0\n',
                    1,
                    [E],
                    group="npm-eresolve",
                ),
                note(
                    "Hypothesis: react-datepicker 4 pins react 17; maybe a newer major.",
                    [H],
                    tags=("hypothesis",),
                ),
            ],
            quiet=240,
        ),
        session(
            "green-only-pytest",
            ["no-problem", "pytest", "notes"],
            [],
            [
                run("pytest -q", pytest_pass(40, 91), 0, []),
                note("All green; next: add the CSV export endpoint.", []),
                edit("shop/export.py", "add export_csv()", []),
                run("pytest -q", pytest_pass(42, 93), 0, []),
            ],
        ),
        session(
            "green-only-exploring",
            ["no-problem", "notes"],
            [],
            [
                run("git status", "On branch main\nnothing to commit, working tree clean", 0, []),
                run("ls src", "app.py\nmodels.py\nroutes.py", 0, []),
                call("read_file", "read src/routes.py", [], path="src/routes.py"),
                note("The routes are registered in app.py; the models have no migrations yet.", []),
            ],
        ),
        session(
            "green-only-cargo-npm",
            ["no-problem", "cargo", "npm"],
            [],
            [
                run("cargo test", CARGO_TEST_OK, 0, []),
                run("npm test", JEST_PASS, 0, []),
                run("cargo clippy", "    Finished `dev` profile target(s) in 1.20s", 0, []),
            ],
        ),
        session(
            "revert-fixes-regression",
            ["git", "revert", "resolved"],
            [path("py-cart-total", "resolved", fix="git revert")],
            [
                run("git pull", "Fast-forward\n shop/cart.py | 6 +++---", 0, []),
                run(
                    "pytest -q",
                    PYTEST_TOTAL_FAIL.format(line=14, ms=50),
                    1,
                    [E],
                    group="py-cart-total",
                ),
                run(
                    "git log --oneline -3",
                    "a1b2c3d cart: rounding\n9f8e7d6 docs\n5a4b3c2 cart: tests",
                    0,
                    [A],
                ),
                run(
                    "git revert --no-edit a1b2c3d", '[main 7c6d5e4] Revert "cart: rounding"', 0, [R]
                ),
                run("pytest -q", pytest_pass(14, 40), 0, [S]),
                run("pytest -q", pytest_pass(14, 42), 0, [S]),
                run("pytest -q", pytest_pass(14, 41), 0, RES),
            ],
        ),
        session(
            "restore-then-fix",
            ["git", "revert", "resolved"],
            [path("jest-pricetag", "resolved", fix="format.ts")],
            [
                run("npm test", JEST_FAIL.format(sec=4), 1, [E], group="jest-pricetag"),
                run("git restore src/components/PriceTag.tsx", "", 0, [R]),
                run("npm test", JEST_FAIL.format(sec=3), 1, [F], group="jest-pricetag"),
                note(
                    "Discovery: the bug is in formatCents in src/lib/format.ts, not the component.",
                    [D],
                    tags=("discovery",),
                ),
                edit("src/lib/format.ts", "formatCents divides by 100", [A]),
                run("npm test", JEST_PASS, 0, [S]),
                run("npm test", JEST_PASS, 0, [S]),
                run("npm test", JEST_PASS, 0, RES),
            ],
        ),
        session(
            "recurring-cart-total",
            ["pytest", "assertion", "recurring", "resolved"],
            [path("py-cart-total", "resolved", fix="cart.py")],
            [
                run(
                    "pytest -q tests/test_cart.py",
                    PYTEST_TOTAL_FAIL.format(line=19, ms=71).replace(
                        "/home/dev/shop", "/ci/build/8812"
                    ),
                    1,
                    [E],
                    group="py-cart-total",
                ),
                edit("shop/cart.py", "discount on the unit price", [A]),
                run("pytest -q tests/test_cart.py", pytest_pass(14, 39), 0, [S]),
                run("pytest -q tests/test_cart.py", pytest_pass(14, 38), 0, [S]),
                run("pytest -q tests/test_cart.py", pytest_pass(14, 37), 0, RES),
            ],
        ),
        session(
            "recurring-no-yaml",
            ["pytest", "import-error", "recurring", "resolved"],
            [path("py-no-yaml", "resolved", fix="pyyaml")],
            [
                run(
                    "python -m pytest",
                    NO_YAML.format(root="/builds/cfgsvc"),
                    4,
                    [E],
                    group="py-no-yaml",
                ),
                run(
                    "uv pip install pyyaml", "Installed 1 package in 4ms\n + pyyaml==6.0.2", 0, [A]
                ),
                run("python -m pytest", pytest_pass(22, 81), 0, [S]),
                run("python -m pytest", pytest_pass(22, 80), 0, [S]),
                run("python -m pytest", pytest_pass(22, 83), 0, RES),
            ],
        ),
        session(
            "recurring-e0308",
            ["cargo", "build", "recurring", "resolved"],
            [path("rust-e0308-sum", "resolved", fix="report.rs")],
            [
                run(
                    "cargo build --release",
                    E0308.format(root="/tmp/ledger-ci", file="src/report.rs", line=118),
                    101,
                    [E],
                    group="rust-e0308-sum",
                ),
                edit("src/report.rs", "sum::<u64>()", [A]),
                run("cargo build --release", CARGO_OK.format(2), 0, [S]),
                run("cargo test", CARGO_TEST_OK, 0, [S]),
                run("cargo test", CARGO_TEST_OK, 0, RES),
            ],
        ),
        session(
            "recurring-http-500",
            ["curl", "http-500", "recurring", "abandoned"],
            [path("http500-orders", "abandoned")],
            [
                run(
                    "curl -si -X POST https://staging.shop.test/orders -d @o.json",
                    HTTP_500.format(rid="c0ffee00-1234-4abc-9def-001122334455"),
                    0,
                    [E],
                    group="http500-orders",
                    status_code=500,
                ),
                run(
                    "curl -si -X POST https://staging.shop.test/orders -d @o.json",
                    HTTP_500.format(rid="deadbeef-0000-4abc-9def-66778899aabb"),
                    0,
                    [F],
                    group="http500-orders",
                    status_code=500,
                ),
            ],
            quiet=120,
        ),
        session(
            "httpx-500-traceback",
            ["httpx", "http-500", "traceback", "resolved"],
            [path("httpx-500-invoices", "resolved", fix="client.py")],
            [
                run(
                    "python -m billing.sync",
                    "Traceback (most recent call last):\n"
                    '  File "/home/dev/billing/billing/sync.py", line 41, in <module>\n'
                    "    resp.raise_for_status()\n"
                    "httpx.HTTPStatusError: Server error '500 Internal Server Error' for url "
                    "'https://api.example.test/v1/invoices/inv_83f2a9?expand=lines'\n"
                    "For more information check: https://developer.mozilla.org/en-US/docs/Web/"
                    "HTTP/Status/500\n",
                    1,
                    [E],
                    group="httpx-500-invoices",
                ),
                note(
                    "Discovery: expand=lines 500s upstream; expand=items is the v1 name.",
                    [D],
                    tags=("discovery",),
                ),
                edit("billing/client.py", "expand=items", [A]),
                run("python -m billing.sync", "synced 58 invoices", 0, [S]),
                run("python -m billing.sync", "synced 0 invoices (up to date)", 0, [S]),
                run("pytest tests/test_billing.py", pytest_pass(12, 55), 0, RES),
            ],
        ),
        session(
            "httpx-500-recurring",
            ["httpx", "http-500", "recurring", "active"],
            [path("httpx-500-invoices", "active")],
            [
                run(
                    "python -m billing.sync --full",
                    "Traceback (most recent call last):\n"
                    '  File "/srv/billing/billing/sync.py", line 44, in <module>\n'
                    "    resp.raise_for_status()\n"
                    "httpx.HTTPStatusError: Server error '500 Internal Server Error' for url "
                    "'https://api.example.test/v1/invoices/inv_11c0de?expand=lines'\n",
                    1,
                    [E],
                    group="httpx-500-invoices",
                ),
                note("Same upstream 500 as last week; checking the client.", []),
            ],
        ),
        session(
            "tsc-type-error",
            ["npm", "typescript", "resolved"],
            [path("ts2345-price", "resolved", fix="cart.ts")],
            [
                run(
                    "npx tsc --noEmit",
                    "src/cart.ts:27:18 - error TS2345: Argument of type 'string' is not "
                    "assignable to parameter of type 'number'.\n\n27   addItem(sku, qty, "
                    "price.toFixed(2));\n\nFound 1 error in src/cart.ts:27\n",
                    2,
                    [E],
                    group="ts2345-price",
                ),
                edit("src/cart.ts", "pass price, format at render", [A]),
                run("npx tsc --noEmit", "", 0, [S]),
                run("npm test", JEST_PASS, 0, [S]),
                run("npm test", JEST_PASS, 0, RES),
            ],
        ),
        session(
            "mypy-then-pytest",
            ["mypy", "resolved"],
            [path("mypy-return-type", "resolved", fix="repository.py")],
            [
                run(
                    "mypy src",
                    "src/app/repository.py:88: error: Incompatible return value type (got "
                    '"Row | None", expected "Row")  [return-value]\n'
                    "Found 1 error in 1 file (checked 42 source files)\n",
                    1,
                    [E],
                    group="mypy-return-type",
                ),
                edit("src/app/repository.py", "raise NotFound when the row is missing", [A]),
                run("mypy src", "Success: no issues found in 42 source files", 0, [S]),
                run("pytest -q tests/test_repository.py", pytest_pass(17, 66), 0, [S]),
                run("pytest -q", pytest_pass(120, 99), 0, RES),
            ],
        ),
        session(
            "two-greens-then-end",
            ["pytest", "active"],
            [path("py-cart-total", "active")],
            [
                run(
                    "pytest -q",
                    PYTEST_TOTAL_FAIL.format(line=14, ms=51),
                    1,
                    [E],
                    group="py-cart-total",
                ),
                edit("shop/cart.py", "discount on the unit price", [A]),
                run("pytest -q", pytest_pass(14, 40), 0, [S]),
                run("pytest -q", pytest_pass(14, 43), 0, [S]),
            ],
        ),
        session(
            "unrelated-successes",
            ["pytest", "active", "noise"],
            [path("py-keyerror-user-id", "active")],
            [
                run(
                    "python scripts/export.py",
                    "Traceback (most recent call last):\n"
                    '  File "/home/dev/crm/scripts/export.py", line 64, in main\n'
                    "KeyError: 'user_id'\n",
                    1,
                    [E],
                    group="py-keyerror-user-id",
                ),
                run("ls exports", "raw.csv\nold.csv", 0, [A]),
                run("wc -l exports/raw.csv", "1032 exports/raw.csv", 0, [A]),
                run("git log -1 --format=%s", "export: v2 header", 0, [A]),
            ],
        ),
        session(
            "notes-without-error",
            ["no-problem", "notes", "hypothesis"],
            [],
            [
                note(
                    "Hypothesis: the slow page is the N+1 query on orders.",
                    [],
                    tags=("hypothesis",),
                ),
                run(
                    "python -m cProfile -s cumtime manage.py bench_orders",
                    "  ncalls  tottime  cumtime\n   2001    1.204    1.530 query.py:88(execute)",
                    0,
                    [],
                ),
                note(
                    "Discovery: 2001 queries for 2000 orders; select_related fixes it.",
                    [],
                    tags=("discovery",),
                ),
                edit("orders/views.py", "select_related('customer')", []),
            ],
        ),
        session(
            "psql-connection-refused",
            ["database", "discovery", "resolved"],
            [path("psql-refused", "resolved", fix="docker compose")],
            [
                run(
                    "psql -h localhost -U app -c 'select 1'",
                    'psql: error: connection to server at "localhost" (127.0.0.1), port 5432 '
                    "failed: Connection refused\n\tIs the server running on that host and "
                    "accepting TCP/IP connections?\n",
                    2,
                    [E],
                    group="psql-refused",
                ),
                note(
                    "Discovery: the db container exited after the laptop slept.",
                    [D],
                    tags=("discovery",),
                ),
                run("docker compose up -d db", " ✔ Container shop-db-1  Started", 0, [A]),
                run("psql -h localhost -U app -c 'select 1'", " ?column?\n----------\n 1", 0, [S]),
                run("psql -h localhost -U app -c 'select 1'", " ?column?\n----------\n 1", 0, [S]),
                run("pytest -q tests/test_db.py", pytest_pass(8, 71), 0, RES),
            ],
        ),
        session(
            "resolved-then-new-problem",
            ["pytest", "cargo", "two-paths"],
            [path("py-no-yaml", "resolved", fix="pyyaml"), path("rust-overflow", "active")],
            [
                run("pytest", NO_YAML.format(root="/home/dev/tools"), 4, [E], group="py-no-yaml"),
                run("pip install pyyaml", "Successfully installed PyYAML-6.0.2", 0, [A]),
                run("pytest", pytest_pass(9, 20), 0, [S]),
                run("pytest", pytest_pass(9, 21), 0, [S]),
                run("pytest", pytest_pass(9, 22), 0, RES),
                run(
                    "cargo test",
                    "thread 'tests::sums_large' panicked at src/ledger.rs:91:13:\n"
                    "attempt to add with overflow\n"
                    "test result: FAILED. 8 passed; 1 failed; 0 ignored\n",
                    101,
                    [E],
                    group="rust-overflow",
                    gap=20,
                ),
            ],
        ),
        session(
            "abandoned-then-restart",
            ["abandoned", "pytest", "two-paths"],
            [
                path("py-fixture-db", "abandoned"),
                path("psql-refused", "resolved", fix="docker compose"),
            ],
            [
                run(
                    "pytest tests/test_users.py",
                    "E       fixture 'db_session' not found\n"
                    "=========================== 1 error in 0.07s ===========================\n",
                    1,
                    [E],
                    group="py-fixture-db",
                ),
                note(
                    "Hypothesis: conftest not picked up from tests/db.", [H], tags=("hypothesis",)
                ),
                run(
                    "psql -h localhost -U app -c 'select 1'",
                    'psql: error: connection to server at "localhost" (127.0.0.1), port 5432 '
                    "failed: Connection refused\n",
                    2,
                    [E],
                    group="psql-refused",
                    gap=150,
                ),
                run("docker compose up -d db", " ✔ Container shop-db-1  Started", 0, [A]),
                run("psql -h localhost -U app -c 'select 1'", " 1", 0, [S]),
                run("psql -h localhost -U app -c 'select 1'", " 1", 0, [S]),
                run("psql -h localhost -U app -c 'select 1'", " 1", 0, RES),
            ],
        ),
        session(
            "mixed-results-then-green",
            ["pytest", "assertion", "resolved"],
            [path("py-slug", "resolved", fix="slugify")],
            [
                run(
                    "pytest tests/test_slug.py",
                    "FAILED tests/test_slug.py::test_unicode - AssertionError: assert "
                    "'caf' == 'cafe'\n==================== 1 failed, 5 passed in 0.05s "
                    "====================\n",
                    1,
                    [E],
                    group="py-slug",
                ),
                edit("blog/text.py", "slugify: NFKD-normalise before stripping accents", [A]),
                run("pytest tests/test_slug.py", pytest_pass(6, 4), 0, [S]),
                run("pytest tests/test_slug.py", pytest_pass(6, 5), 0, [S]),
                run("pytest", pytest_pass(51, 70), 0, RES),
            ],
        ),
        session(
            "warnings-are-not-errors",
            ["no-problem", "pytest", "noise"],
            [],
            [
                run(
                    "pytest -q",
                    "....................\n=============================== warnings summary "
                    "===============================\ntests/test_api.py::test_list\n  "
                    "DeprecationWarning: datetime.utcnow() is deprecated\n\n"
                    "================== 20 passed, 1 warning in 0.84s ==================\n",
                    0,
                    [],
                ),
                note("One deprecation warning; fine for now.", []),
            ],
        ),
        session(
            "grep-for-error-handling",
            ["no-problem", "noise"],
            [],
            [
                run(
                    "grep -rn 'except' src/app/loader.py",
                    "src/app/loader.py:41:    except KeyError: \nsrc/app/loader.py:57:"
                    "    except ValueError as exc:\n",
                    0,
                    [],
                    title="find the exception handlers",
                ),
                note("The loader swallows KeyError on line 41; worth a comment later.", []),
            ],
        ),
        session(
            "tool-calls-and-responses",
            ["pytest", "tool-call", "resolved"],
            [path("py-cart-total", "resolved", fix="cart.py")],
            [
                call("bash", "run the cart tests", [], command="pytest -q tests/test_cart.py"),
                run(
                    "pytest -q tests/test_cart.py",
                    PYTEST_TOTAL_FAIL.format(line=14, ms=50),
                    1,
                    [E],
                    group="py-cart-total",
                ),
                edit("shop/cart.py", "discount on the unit price", [A]),
                call("bash", "run the cart tests", [A], command="pytest -q tests/test_cart.py"),
                run("pytest -q tests/test_cart.py", pytest_pass(14, 40), 0, [S]),
                call("bash", "run all tests", [A], command="pytest -q"),
                run("pytest -q", pytest_pass(60, 90), 0, [S]),
                run("pytest -q", pytest_pass(60, 91), 0, RES),
            ],
        ),
    ]


if __name__ == "__main__":
    OUT.parent.mkdir(parents=True, exist_ok=True)
    data = sessions()
    OUT.write_text(json.dumps(data, indent=1, ensure_ascii=False) + "\n")
    print(f"{len(data)} sessions, {sum(len(s['steps']) for s in data)} steps -> {OUT}")
    # For every session that ends resolved, its error again (debug_paths_recurrences.py).
    resolved = {s["id"] for s in data if any(p["end"] == "resolved" for p in s["paths"])}
    assert {r["of"] for r in RECURRENCES} == resolved, "one recurrence per resolved session"
    RECURRENCES_OUT.write_text(json.dumps(RECURRENCES, indent=1, ensure_ascii=False) + "\n")
    print(f"{len(RECURRENCES)} recurrences -> {RECURRENCES_OUT}")
    UNRELATED_OUT.write_text(json.dumps(UNRELATED, indent=1, ensure_ascii=False) + "\n")
    print(f"{len(UNRELATED)} unrelated errors -> {UNRELATED_OUT}")
