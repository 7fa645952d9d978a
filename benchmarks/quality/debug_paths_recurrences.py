"""The recurrences of ``debug_paths/recurrences.json``: for every corpus session that ends
resolved, the error its resolved path started from, met again in a new session — written by
hand as another machine, checkout or run would print it: other paths, line numbers, ids,
timings and counts, the same error. ``of`` names the corpus session, ``group`` the error
(the resolved path's group in the corpus). The prior-fix measure of
``debug_paths_prior.py`` posts each in a fresh session after the corpus.
"""

# Tool output is quoted as the tools print it.
# ruff: noqa: RUF001

from __future__ import annotations

from typing import Any


def _run(command: str, output: str, exit_code: int, **extra: Any) -> dict[str, Any]:
    return {
        "schema_name": "tool.response.v1",
        "title": f"ran {command}",
        "tags": ["tool:shell"],
        "context": {"command": command, "exit_code": exit_code, "output": output, **extra},
    }


def _cart_total(root: str, line: int, got: int, want: int, passed: int, secs: str) -> str:
    return f"""============================= test session starts ==============================
platform linux -- Python 3.12.4, pytest-8.3.3, pluggy-1.5.0
rootdir: {root}
collected {passed + 1} items

tests/unit/test_cart.py ..F{"." * (passed - 2)}                                      [100%]

=================================== FAILURES ===================================
_______________________________ test_cart_total ________________________________

    def test_cart_total():
        cart = Cart([Item("plum", 95, qty=4), Item("fig", 60, qty=2)])
>       assert cart.total() == {want}
E       assert {got} == {want}
E        +  where {got} = <bound method Cart.total of <shop.cart.Cart object at 0x7fd1be0c4a90>>()

tests/unit/test_cart.py:{line}: AssertionError
=========================== short test summary info ============================
FAILED tests/unit/test_cart.py::test_cart_total - assert {got} == {want}
========================= 1 failed, {passed} passed in {secs}s =========================
"""


def _no_module(module: str, root: str, line: int) -> str:
    return f"""ImportError while loading conftest '{root}/tests/conftest.py'.
tests/conftest.py:{line}: in <module>
    import {module}
E   ModuleNotFoundError: No module named '{module}'
"""


def _e0308(crate: str, version: str, path: str, line: int, col: int) -> str:
    return f"""   Compiling {crate} v{version} (/srv/build/{crate})
error[E0308]: mismatched types
  --> {path}:{line}:{col}
   |
{line} |     let sum: u64 = rows.iter().map(|r| r.cents).sum::<i64>();
   |              ---   ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^ expected `u64`, found `i64`
   |              |
   |              expected due to this

For more information about this error, try `rustc --explain E0308`.
error: could not compile `{crate}` (lib) due to 1 previous error
"""


def _jest(path: str, line: int, received: str, passed: int) -> str:
    return f"""FAIL {path}
  ● PriceTag › formats cents as euros

    expect(received).toBe(expected) // Object.is equality

    Expected: "€7.05"
    Received: "{received}"

      {line - 1} |     render(<PriceTag cents={{705}} />);
    > {line} |     expect(screen.getByText(/€/).textContent).toBe("€7.05");
         |                                               ^

Test Suites: 1 failed, {passed // 6} passed, {passed // 6 + 1} total
Tests:       1 failed, {passed} passed, {passed + 1} total
Time:        4.7 s
"""


def _psql(host: str, address: str, port: int) -> str:
    return (
        f'psql: error: connection to server at "{host}" ({address}), port {port} failed:'
        " Connection refused\n\tIs the server running on that host and accepting TCP/IP"
        " connections?\n"
    )


RECURRENCES: list[dict[str, Any]] = [
    {
        "of": "pytest-assertion-fixed",
        "group": "py-cart-total",
        "record": _run(
            "pytest -q tests/unit/test_cart.py",
            _cart_total("/workspace/shop-api", 31, 500, 620, 20, "1.07"),
            1,
        ),
    },
    {
        "of": "pytest-import-error",
        "group": "py-no-yaml",
        "record": _run("pytest -q", _no_module("yaml", "/opt/ci/job-5521/cfgsvc", 7), 4),
    },
    {
        "of": "pytest-fixture-missing",
        "group": "py-fixture-db",
        "record": _run(
            "pytest tests/api/test_users.py",
            "ERROR at setup of test_create_user\n"
            "file /srv/app/tests/api/test_users.py, line 23\n"
            "  def test_create_user(db_session):\n"
            "E       fixture 'db_session' not found\n"
            ">       available fixtures: cache, capfd, capsys, monkeypatch, tmp_path\n"
            "=========================== 1 error in 0.21s ===========================\n",
            1,
        ),
    },
    {
        "of": "jest-expect-fixed",
        "group": "jest-pricetag",
        "record": _run(
            "npm test", _jest("web/src/ui/__tests__/PriceTag.test.tsx", 19, "€705", 44), 1
        ),
    },
    {
        "of": "cargo-build-e0308",
        "group": "rust-e0308-sum",
        "record": _run("cargo build", _e0308("billing", "1.2.0", "src/report.rs", 118, 22), 101),
    },
    {
        "of": "cargo-test-panic",
        "group": "rust-overflow",
        "record": _run(
            "cargo test",
            "running 14 tests\ntest tests::sums_large ... FAILED\n\nfailures:\n\n"
            "---- tests::sums_large stdout ----\n"
            "thread 'tests::sums_large' panicked at crates/core/src/ledger.rs:203:13:\n"
            "attempt to add with overflow\n\n"
            "test result: FAILED. 13 passed; 1 failed; 0 ignored; 0 measured\n"
            "error: test failed, to rerun pass `-p core --lib`\n",
            101,
        ),
    },
    {
        "of": "python-traceback-script",
        "group": "py-keyerror-user-id",
        "record": _run(
            "python scripts/export.py --since 2027-01-15",
            "Traceback (most recent call last):\n"
            '  File "/srv/crm/releases/20270115/scripts/export.py", line 81, in <module>\n'
            "    main()\n"
            '  File "/srv/crm/releases/20270115/scripts/export.py", line 69, in main\n'
            '    row["user_id"]\n'
            "KeyError: 'user_id'\n",
            1,
        ),
    },
    {
        "of": "curl-http-500",
        "group": "http500-orders",
        "record": _run(
            "curl -si -X POST http://127.0.0.1:9090/orders -d @fixtures/order-17.json",
            "HTTP/2 500 Internal Server Error\ncontent-type: application/json\n"
            "x-request-id: 9b1e4c7a-2f3d-4e8b-a6c5-7d8e9f0a1b2c\n\n"
            '{"detail":"Internal Server Error"}',
            0,
            status_code=500,
        ),
    },
    {
        "of": "flaky-then-fixed",
        "group": "py-flaky-sync-timeout",
        "record": _run(
            "pytest tests/integration/test_sync.py",
            "tests/integration/test_sync.py::test_sync_completes FAILED                [ 50%]\n"
            "E       TimeoutError: sync did not finish within 5.0s\n"
            "FAILED tests/integration/test_sync.py::test_sync_completes - TimeoutError: sync"
            " did not finish within 5.0s\n"
            "========================= 1 failed, 31 passed in 6.02s =========================\n",
            1,
        ),
    },
    {
        "of": "pivot-import-then-assert",
        "group": "py-no-requests",
        "record": _run(
            "pytest -q",
            "ImportError while importing test module '/builds/team/shop/tests/test_checkout.py'.\n"
            "tests/test_checkout.py:4: in <module>\n    import requests\n"
            "E   ModuleNotFoundError: No module named 'requests'\n"
            "=========================== 1 error in 0.27s ============================\n",
            2,
        ),
    },
    {
        "of": "revert-fixes-regression",
        "group": "py-cart-total",
        "record": _run(
            "pytest tests/unit/test_cart.py",
            _cart_total("/home/ana/src/shop", 22, 310, 380, 9, "0.33"),
            1,
        ),
    },
    {
        "of": "restore-then-fix",
        "group": "jest-pricetag",
        "record": _run(
            "npm test", _jest("packages/ui/src/__tests__/PriceTag.test.tsx", 27, "€70.5", 58), 1
        ),
    },
    {
        "of": "recurring-cart-total",
        "group": "py-cart-total",
        "record": _run(
            "pytest -q tests/unit/test_cart.py",
            _cart_total("/ci/build/9907", 17, 2280, 2400, 30, "2.41"),
            1,
        ),
    },
    {
        "of": "recurring-no-yaml",
        "group": "py-no-yaml",
        "record": _run("pytest -q", _no_module("yaml", "/home/kai/work/config-service", 12), 4),
    },
    {
        "of": "recurring-e0308",
        "group": "rust-e0308-sum",
        "record": _run("cargo build", _e0308("ledger", "0.9.3", "src/totals.rs", 57, 20), 101),
    },
    {
        "of": "httpx-500-traceback",
        "group": "httpx-500-invoices",
        "record": _run(
            "python -m billing.sync",
            "Traceback (most recent call last):\n"
            '  File "/app/billing/sync.py", line 58, in <module>\n'
            "    resp.raise_for_status()\n"
            "httpx.HTTPStatusError: Server error '500 Internal Server Error' for url"
            " 'https://api.example.test/v2/invoices/inv_1c9e77?expand=lines'\n"
            "For more information check:"
            " https://developer.mozilla.org/en-US/docs/Web/HTTP/Status/500\n",
            1,
        ),
    },
    {
        "of": "tsc-type-error",
        "group": "ts2345-price",
        "record": _run(
            "npx tsc --noEmit",
            "web/src/checkout/cart.ts:112:21 - error TS2345: Argument of type 'string' is not"
            " assignable to parameter of type 'number'.\n\n"
            "112   addItem(sku, qty, price.toFixed(2));\n\n"
            "Found 1 error in web/src/checkout/cart.ts:112\n",
            2,
        ),
    },
    {
        "of": "mypy-then-pytest",
        "group": "mypy-return-type",
        "record": _run(
            "mypy src",
            "src/service/store/repository.py:204: error: Incompatible return value type (got"
            ' "Row | None", expected "Row")  [return-value]\n'
            "Found 1 error in 1 file (checked 118 source files)\n",
            1,
        ),
    },
    {
        "of": "psql-connection-refused",
        "group": "psql-refused",
        "record": _run(
            "psql -h localhost -U app -c 'select 1'", _psql("localhost", "::1", 5433), 2
        ),
    },
    {
        "of": "resolved-then-new-problem",
        "group": "py-no-yaml",
        "record": _run("pytest -q", _no_module("yaml", "/var/lib/ci/run-88/cfgsvc", 5), 4),
    },
    {
        "of": "abandoned-then-restart",
        "group": "psql-refused",
        "record": _run(
            "psql -h localhost -U app -c 'select 1'", _psql("localhost", "127.0.0.1", 6543), 2
        ),
    },
    {
        "of": "mixed-results-then-green",
        "group": "py-slug",
        "record": _run(
            "pytest tests/text/test_slug.py",
            "FAILED tests/text/test_slug.py::test_unicode - AssertionError: assert 'caf' =="
            " 'cafe'\n==================== 1 failed, 11 passed in 0.09s ====================\n",
            1,
        ),
    },
    {
        "of": "tool-calls-and-responses",
        "group": "py-cart-total",
        "record": _run(
            "pytest -q tests/unit/test_cart.py",
            _cart_total("/Users/lee/code/shop", 40, 1000, 1150, 16, "0.88"),
            1,
        ),
    },
]


# Errors no corpus session met: a prior fix offered for one of them is a wrong one.
UNRELATED: list[dict[str, Any]] = [
    _run(
        "python manage.py rotate_logs",
        "Traceback (most recent call last):\n"
        '  File "/srv/app/manage.py", line 22, in <module>\n'
        "    main()\n"
        "PermissionError: [Errno 13] Permission denied: '/var/log/app/app.log'\n",
        1,
    ),
    _run(
        "pytest tests/test_auth.py",
        "FAILED tests/test_auth.py::test_login - AssertionError: assert 401 == 200\n"
        "========================= 1 failed, 8 passed in 0.41s =========================\n",
        1,
    ),
    _run(
        "python manage.py runserver",
        "django.db.utils.OperationalError: no such table: auth_user\n",
        1,
    ),
    _run(
        "node scripts/build-index.js",
        "/home/dev/site/scripts/build-index.js:14\n"
        "  const titles = posts.map((p) => p.title);\n"
        "                       ^\n\n"
        "TypeError: Cannot read properties of undefined (reading 'map')\n"
        "    at main (/home/dev/site/scripts/build-index.js:14:24)\n",
        1,
    ),
    _run(
        "go test ./...",
        "--- FAIL: TestParse (0.00s)\n"
        "panic: runtime error: index out of range [3] with length 3 [recovered]\n"
        "FAIL\tgithub.com/acme/parser\t0.012s\n",
        1,
    ),
    _run(
        "git pull origin main",
        "fatal: refusing to merge unrelated histories\n",
        128,
    ),
    _run(
        "cargo build",
        "   Compiling ledger v0.4.1 (/home/dev/ledger)\n"
        "error[E0599]: no method named `iter` found for struct `Ledger` in the current scope\n"
        "  --> src/report.rs:12:27\n"
        "error: could not compile `ledger` (lib) due to 1 previous error\n",
        101,
    ),
    _run(
        "psql -h localhost -U app -c 'select count(*) from invoices'",
        'ERROR:  relation "invoices" does not exist\nLINE 1: select count(*) from invoices\n',
        1,
    ),
    _run(
        "java -jar build/libs/report.jar",
        'Exception in thread "main" java.lang.NullPointerException: Cannot invoke'
        ' "String.length()" because "name" is null\n'
        "\tat com.acme.report.Main.run(Main.java:41)\n",
        1,
    ),
    _run(
        "npm install left-padd",
        "npm ERR! code E404\n"
        "npm ERR! 404 Not Found - GET https://registry.npmjs.org/left-padd - Not found\n",
        1,
    ),
    _run(
        "curl -si http://127.0.0.1:8000/health",
        "HTTP/1.1 503 Service Unavailable\ncontent-type: text/plain\n\nupstream unavailable",
        0,
        status_code=503,
    ),
]
