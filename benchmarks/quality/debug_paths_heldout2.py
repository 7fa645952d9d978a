"""Writes ``debug_paths/heldout2.json``: a second held-out set of scripted debugging sessions,
written after the first held-out set started to be used for corrections, and never tuned on.

    PYTHONPATH=$PWD/src .venv/bin/python benchmarks/quality/debug_paths_heldout2.py
    PYTHONPATH=$PWD/src .venv/bin/python benchmarks/quality/debug_paths.py \\
        --corpus benchmarks/quality/debug_paths/heldout2.json \\
        --out benchmarks/results/debug_paths_heldout2

Same format and conventions as ``debug_paths_corpus.py``; the expectations come from the
issue's definitions applied to the transcripts by hand, never from running the rules. A
step's ``expect`` is the list of waypoints a developer would record for it (``[]``: not part
of a path): the first error of a path is ``error``, the same error again while it is open a
``failure``, a different error while it is open a ``pivot``; a tool call, edit or command
after the error is an ``attempt``, undoing a change a ``revert``; a success is a test run
with no failures or the command (or tool) that failed now passing, and the third success in
a row ends the path with ``resolution``. A command unrelated to the failing one that exits 0
is an attempt, not a success. HTTP 4xx is not an error, 5xx is. ``group`` names the
underlying error, the same across sessions when the same error recurs. A step's optional
``judgement`` says why an annotation that could be argued went the way it did; the scorer
ignores it.
"""

# Tool output is quoted verbatim: long lines and typography as the tools print them.
# ruff: noqa: E501, RUF001

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

OUT = Path(__file__).resolve().parent / "debug_paths" / "heldout2.json"

Step = dict[str, Any]

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


def run(
    command: str,
    output: str,
    exit_code: int,
    expect: list[str],
    *,
    group: str | None = None,
    gap: int = 1,
    title: str | None = None,
    judgement: str | None = None,
    **extra: Any,
) -> Step:
    """A shell tool's response: the command, what it printed and its exit code."""
    record = {
        "schema_name": "tool.response.v1",
        "title": title or f"ran {command}",
        "tags": ["tool:shell"],
        "context": {"command": command, "exit_code": exit_code, "output": output, **extra},
    }
    return _step(record, expect, group, gap, judgement)


def respond(
    tool: str,
    title: str,
    status: str,
    expect: list[str],
    *,
    group: str | None = None,
    gap: int = 1,
    **context: Any,
) -> Step:
    """A structured (MCP-style) tool's response: a status instead of an exit code."""
    record = {
        "schema_name": "tool.response.v1",
        "title": title,
        "tags": [f"tool:{tool}"],
        "context": {"tool": tool, "status": status, **context},
    }
    return _step(record, expect, group, gap, None)


def call(
    tool: str,
    title: str,
    expect: list[str],
    *,
    gap: int = 1,
    judgement: str | None = None,
    **context: Any,
) -> Step:
    """A tool call with no outcome of its own (an edit, a read, a command about to run)."""
    record = {
        "schema_name": "tool.call.v1",
        "title": title,
        "tags": [f"tool:{tool}"],
        "context": {"tool": tool, **context},
    }
    return _step(record, expect, None, gap, judgement)


def note(
    text: str,
    expect: list[str],
    *,
    tags: tuple[str, ...] = (),
    gap: int = 1,
    judgement: str | None = None,
) -> Step:
    """Something the agent wrote down."""
    record = {
        "schema_name": "agent.note.v1",
        "title": re.split(r"\.(?:\s|$)", text)[0][:80],
        "tags": ["note", *tags],
        "context": {"content": text},
    }
    return _step(record, expect, None, gap, judgement)


def edit(path: str, what: str, expect: list[str], *, gap: int = 1) -> Step:
    return call("edit_file", f"edit {path}: {what}", expect, gap=gap, path=path, change=what)


def _step(
    record: dict[str, Any],
    expect: list[str],
    group: str | None,
    gap: int,
    judgement: str | None,
) -> Step:
    step: Step = {"record": record, "expect": expect, "gap": gap}
    if group is not None:
        step["group"] = group
    if judgement is not None:
        step["judgement"] = judgement
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


# --- Python -------------------------------------------------------------------------------


def pytest_ok(n: int, secs: str, where: str = "tests") -> str:
    return (
        "============================= test session starts ==============================\n"
        "platform linux -- Python 3.11.10, pytest-8.3.4, pluggy-1.5.0\n"
        f"collected {n} items\n\n{where} {'.' * min(n, 40)}  [100%]\n\n"
        f"============================== {n} passed in {secs}s ===============================\n"
    )


SCOPE_MISMATCH = """============================= test session starts ==============================
platform linux -- Python 3.11.10, pytest-8.3.4, pluggy-1.5.0
rootdir: {root}
plugins: anyio-4.6.2
collected 9 items

tests/test_ingest.py EEEEEEEEE                                           [100%]

==================================== ERRORS ====================================
________________ ERROR at setup of test_ingest_reads_manifest __________________
ScopeMismatch: You tried to access the function scoped fixture tmp_path with a session scoped request object. Requesting fixture stack:
tests/conftest.py:{line}:  def warehouse(tmp_path)
Requested fixture:
{venv}/lib/python3.11/site-packages/_pytest/tmpdir.py:255:  def tmp_path(request: 'FixtureRequest', tmp_path_factory: 'TempPathFactory') -> 'Path'
=========================== short test summary info ============================
ERROR tests/test_ingest.py::test_ingest_reads_manifest - Failed: ScopeMismatch: You tried to access the function scoped fixture tmp_path with a session scoped request object.
============================== 9 errors in 0.{ms}s ===============================
"""

MYPY_ARG = """src/ledger/importer.py:{line}: error: Argument 1 to "parse_amount" has incompatible type "str | None"; expected "str"  [arg-type]
Found 1 error in 1 file (checked 37 source files)
"""

RUFF_FAIL = """src/notify/mailer.py:3:8: F401 [*] `smtplib` imported but unused
src/notify/mailer.py:41:22: E711 Comparison to `None` should be `cond is None`
Found 2 errors.
[*] 1 fixable with the `--fix` option (1 hidden fix can be enabled with the `--unsafe-fixes` option).
"""

PIP_CONFLICT = """Collecting boto3==1.35.36 (from -r requirements.txt (line 2))
  Using cached boto3-1.35.36-py3-none-any.whl.metadata (6.7 kB)
Collecting urllib3==2.2.3 (from -r requirements.txt (line 9))
  Using cached urllib3-2.2.3-py3-none-any.whl.metadata (6.5 kB)
INFO: pip is looking at multiple versions of botocore to determine which version is compatible with other requirements. This could take a while.
ERROR: Cannot install -r requirements.txt (line 2) and urllib3==2.2.3 because these package versions have conflicting dependencies.

The conflict is caused by:
    The user requested urllib3==2.2.3
    botocore 1.35.36 depends on urllib3<1.27 and >=1.25.4; python_version < "3.10"

To fix this you could try to:
1. loosen the range of package versions you've specified
2. remove package versions to allow pip to attempt to solve the dependency conflict

ERROR: ResolutionImpossible: for help visit https://pip.pypa.io/en/latest/topics/dependency-resolution/#dealing-with-dependency-conflicts
"""

POETRY_SOLVER = """Updating dependencies
Resolving dependencies... (2.{sec}s)

The current project's supported Python range (>=3.8,<4.0) is not compatible with some of the required packages Python requirement:
  - numpy requires Python >=3.10, so it will not be satisfied for Python >=3.8,<3.10

Because no versions of numpy match >2.1.3,<3.0.0
 and numpy (2.1.3) requires Python >=3.10, numpy is forbidden.
So, because geoproc depends on numpy (^2.1.3), version solving failed.
"""

DJANGO_500 = """HTTP/1.1 500 Internal Server Error
Date: Thu, 26 Nov 2026 10:{mm}:07 GMT
Server: WSGIServer/0.2 CPython/3.11.10
Content-Type: text/html; charset=utf-8
X-Frame-Options: DENY
Content-Length: 145

<!doctype html>
<html lang="en">
<head>
  <title>Server Error (500)</title>
</head>
<body>
  <h1>Server Error (500)</h1><p></p>
</body>
</html>
"""

DJANGO_LOG = """Internal Server Error: /api/orders/recent/
Traceback (most recent call last):
  File "/home/dev/bakery/.venv/lib/python3.11/site-packages/django/core/handlers/exception.py", line 55, in inner
    response = get_response(request)
  File "/home/dev/bakery/orders/views.py", line 88, in recent_orders
    qs = Order.objects.filter(create_at__gte=since).order_by("-id")[:50]
  File "/home/dev/bakery/.venv/lib/python3.11/site-packages/django/db/models/sql/query.py", line 1768, in names_to_path
    raise FieldError(
django.core.exceptions.FieldError: Cannot resolve keyword 'create_at' into field. Choices are: created_at, customer, customer_id, id, items, status, total
[26/Nov/2026 10:14:07] "GET /api/orders/recent/ HTTP/1.1" 500 145
"""

FLASK_CTX = """============================= test session starts ==============================
collected 11 items

tests/test_emails.py F..........                                         [100%]

=================================== FAILURES ===================================
_____________________________ test_welcome_email ______________________________

    def test_welcome_email():
>       body = render_welcome(User(name="Ada"))

tests/test_emails.py:12:
_ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _
mailer/emails.py:19: in render_welcome
    return render_template("welcome.txt", user=user, link=url_for("auth.login", _external=True))
.venv/lib/python3.11/site-packages/flask/templating.py:149: in render_template
    app = current_app._get_current_object()  # type: ignore[attr-defined]
E   RuntimeError: Working outside of application context.
E
E   This typically means that you attempted to use functionality that needed
E   the current application. To solve this, set up an application context
E   with app.app_context(). See the documentation for more information.
=========================== short test summary info ============================
FAILED tests/test_emails.py::test_welcome_email - RuntimeError: Working outside of application context.
========================= 1 failed, 10 passed in 0.31s =========================
"""

# --- JavaScript / TypeScript --------------------------------------------------------------

NPM_CI_SYNC = """npm ERR! code EUSAGE
npm ERR!
npm ERR! `npm ci` can only install packages when your package.json and package-lock.json or npm-shrinkwrap.json are in sync. Please update your lock file with `npm install` before continuing.
npm ERR!
npm ERR! Missing: zod@3.23.8 from lock file
npm ERR!
npm ERR! Clean install a project
npm ERR!
npm ERR! Usage:
npm ERR! npm ci

npm ERR! A complete log of this run can be found in: /home/dev/.npm/_logs/2026-11-26T10_21_44_310Z-debug-0.log
"""

JEST_OK_48 = """PASS src/api/__tests__/schema.test.ts
PASS src/api/__tests__/handlers.test.ts

Test Suites: 7 passed, 7 total
Tests:       48 passed, 48 total
Snapshots:   0 total
Time:        3.48 s
Ran all test suites.
"""

PNPM_FROZEN = """Scope: all 4 workspace projects
 ERR_PNPM_OUTDATED_LOCKFILE  Cannot install with "frozen-lockfile" because pnpm-lock.yaml is not up to date with <ROOT>/packages/web/package.json

Note that in CI environments this setting is true by default. If you still need to run install in such cases, use "pnpm install --no-frozen-lockfile"

    Failure reason:
    specifiers in the lockfile ({"react":"^18.3.1","swr":"^2.2.5"}) don't match specs in package.json ({"react":"^18.3.1","swr":"^2.2.5","date-fns":"^4.1.0"})
"""

VITEST_OK = """ RUN  v2.1.5 /home/dev/mono/packages/web

 ✓ src/lib/dates.test.ts (9 tests) 14ms
 ✓ src/components/Feed.test.tsx (12 tests) 88ms

 Test Files  6 passed (6)
      Tests  64 passed (64)
   Start at  10:42:17
   Duration  2.31s (transform 412ms, setup 0ms, collect 1.20s, tests 301ms, environment 1.02s, prepare 540ms)
"""

NEXT_TYPE_ERROR = """> blog@0.1.0 build
> next build

  ▲ Next.js 14.2.18

   Creating an optimized production build ...
 ✓ Compiled successfully
   Linting and checking validity of types  ..Failed to compile.

./app/blog/[slug]/page.tsx:21:22
Type error: Property 'slug' does not exist on type 'Post'.

  19 |   const post = await getPost(params.slug);
  20 |   return (
> 21 |     <Article key={post.slug} title={post.title} body={post.body} />
     |                      ^
  22 |   );
  23 | }
Next.js build worker exited with code: 1 and signal: null
"""

NEXT_STATIC_PARAMS = """> blog@0.1.0 build
> next build

  ▲ Next.js 14.2.18

   Creating an optimized production build ...
 ✓ Compiled successfully
 ✓ Linting and checking validity of types
   Collecting page data  .Error: Page "/blog/[slug]" is missing "generateStaticParams()" so it cannot be used with "output: export" config.
    at /home/dev/blog/node_modules/next/dist/build/index.js:1294:59
    at async Span.traceAsyncFn (/home/dev/blog/node_modules/next/dist/trace/trace.js:154:20)

> Build error occurred
Error: Failed to collect page data for /blog/[slug]
    at /home/dev/blog/node_modules/next/dist/build/utils.js:1268:15 {
  type: 'Error'
}
"""

NEXT_OK = """> blog@0.1.0 build
> next build

  ▲ Next.js 14.2.18

   Creating an optimized production build ...
 ✓ Compiled successfully
 ✓ Linting and checking validity of types
 ✓ Collecting page data
 ✓ Generating static pages (23/23)
 ✓ Collecting build traces
 ✓ Exporting (3/3)
 ✓ Finalizing page optimization

Route (app)                              Size     First Load JS
┌ ○ /                                    1.42 kB        96.3 kB
└ ● /blog/[slug]                         2.03 kB        97.1 kB
"""

PLAYWRIGHT_FAIL = """Running 12 tests using 4 workers

  1) [chromium] › tests/checkout.spec.ts:18:5 › checkout › shows the order total with shipping

    Error: Timed out 5000ms waiting for expect(locator).toHaveText(expected)

    Locator: getByTestId('order-total')
    Expected string: "€ 54,90"
    Received string: "€ 49,90"
    Call log:
      - expect.toHaveText with timeout 5000ms
      - waiting for getByTestId('order-total')
      -   9 × locator resolved to <output data-testid="order-total">€ 49,90</output>

      20 |     await page.getByRole('button', {{ name: 'Continue to shipping' }}).click();
      21 |     await page.getByLabel('Express').check();
    > 22 |     await expect(page.getByTestId('order-total')).toHaveText('€ 54,90');
         |                                                   ^

  1 failed
    [chromium] › tests/checkout.spec.ts:18:5 › checkout › shows the order total with shipping
  11 passed ({sec}.4s)
"""


def playwright_ok(n: int, sec: str) -> str:
    return f"Running {n} tests using 4 workers\n\n  {n} passed ({sec}s)\n\nTo open last HTML report run:\n\n  npx playwright show-report\n"


NODE_REDIS = """node:internal/process/promises:{line}
    triggerUncaughtException(err, true /* fromPromise */);
    ^

[UnhandledPromiseRejection: This error originated either by throwing inside of an async function without a catch block, or by rejecting a promise which was not handled with .catch(). The promise rejected with the reason "Error: connect ECONNREFUSED 127.0.0.1:6379".] {{
  code: 'ERR_UNHANDLED_REJECTION'
}}

Node.js v{node}
"""

TSC_2532 = """{file}:{line}:{col} - error TS2532: Object is possibly 'undefined'.

{line}     const first = {expr};
{pad}                   ~~~~~~~~~~~~~

Found 1 error in {file}:{line}
"""

ESLINT_FAIL = """
> admin@2.3.0 lint
> eslint . --max-warnings 0


/home/dev/admin/src/pages/Users.tsx
  31:9  error  'user' is assigned a value but never used  @typescript-eslint/no-unused-vars

✖ 1 problem (1 error, 0 warnings)
"""

# --- Rust ---------------------------------------------------------------------------------

E0502 = """   Compiling {crate} v0.{minor}.0 ({root})
error[E0502]: cannot borrow `self.{field}` as mutable because it is also borrowed as immutable
  --> {file}:{line}:13
   |
{prev} |         for item in self.{field}.iter() {{
   |                     ----------------------
   |                     |
   |                     immutable borrow occurs here
   |                     immutable borrow later used here
{line} |             self.{field}.push(item.clone());
   |             ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^ mutable borrow occurs here

For more information about this error, try `rustc --explain E0502`.
error: could not compile `{crate}` (lib) due to 1 previous error
"""


def cargo_ok(crate: str, secs: str, version: str = "0.3.0") -> str:
    return f"   Compiling {crate} v{version} (/home/dev/{crate})\n    Finished `dev` profile [unoptimized + debuginfo] target(s) in {secs}s\n"


def cargo_test_ok(n: int, secs: str) -> str:
    return (
        f"running {n} tests\n"
        + "".join(f"test tests::case_{i} ... ok\n" for i in range(min(n, 3)))
        + f"\ntest result: ok. {n} passed; 0 failed; 0 ignored; 0 measured; 0 filtered out; finished in {secs}s\n"
    )


CLIPPY_DENY = """    Checking tilemap v0.3.0 (/home/dev/tilemap)
error: redundant clone
  --> src/atlas.rs:57:33
   |
57 |         let name = entry.name.clone().to_string();
   |                              ^^^^^^^^ help: remove this
   |
note: this value is dropped without further use
  --> src/atlas.rs:57:20
   |
57 |         let name = entry.name.clone().to_string();
   |                    ^^^^^^^^^^
   = help: for further information visit https://rust-lang.github.io/rust-clippy/master/index.html#redundant_clone
   = note: `-D clippy::redundant-clone` implied by `-D warnings`
   = help: to override `-D warnings` add `#[allow(clippy::redundant_clone)]`

error: could not compile `tilemap` (lib) due to 1 previous error
"""

PANIC_UNWRAP = """running 14 tests
test parser::tests::parses_header ... ok
test parser::tests::parses_empty ... FAILED

failures:

---- parser::tests::parses_empty stdout ----
thread 'parser::tests::parses_empty' panicked at src/parser.rs:211:38:
called `Option::unwrap()` on a `None` value
note: run with `RUST_BACKTRACE=1` environment variable to display a backtrace


failures:
    parser::tests::parses_empty

test result: FAILED. 13 passed; 1 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.02s

error: test failed, to rerun pass `--lib`
"""

PANIC_INDEX = """running 14 tests
test parser::tests::parses_empty ... FAILED

failures:

---- parser::tests::parses_empty stdout ----
thread 'parser::tests::parses_empty' panicked at src/parser.rs:219:21:
index out of bounds: the len is 0 but the index is 0
note: run with `RUST_BACKTRACE=1` environment variable to display a backtrace

test result: FAILED. 13 passed; 1 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.02s

error: test failed, to rerun pass `--lib`
"""

E0599 = """   Compiling csvlite v0.3.0 (/home/dev/csvlite)
error[E0599]: no method named `first_or_default` found for struct `std::slice::Iter<'_, Field>` in the current scope
   --> src/parser.rs:219:39
    |
219 |         let head = self.fields.iter().first_or_default();
    |                                       ^^^^^^^^^^^^^^^^ method not found in `Iter<'_, Field>`

For more information about this error, try `rustc --explain E0599`.
error: could not compile `csvlite` (lib test) due to 1 previous error
"""

# --- Go -----------------------------------------------------------------------------------

GO_RACE = """==================
WARNING: DATA RACE
Write at 0x00c0001a4f30 by goroutine {g1}:
  runtime.mapassign_faststr()
      /usr/local/go/src/runtime/map_faststr.go:223 +0x0
  github.com/acme/kv/cache.(*LRU).Put()
      {root}/cache/lru.go:{line} +0x1d4

Previous read at 0x00c0001a4f30 by goroutine {g2}:
  runtime.mapaccess2_faststr()
      /usr/local/go/src/runtime/map_faststr.go:117 +0x0
  github.com/acme/kv/cache.(*LRU).Get()
      {root}/cache/lru.go:31 +0x7c
==================
--- FAIL: TestLRUConcurrent (0.0{ms}s)
    testing.go:1399: race detected during execution of test
FAIL
FAIL\tgithub.com/acme/kv/cache\t0.{ms}1s
FAIL
"""

GO_UNDEFINED = """# github.com/acme/api/internal/handlers
internal/handlers/user.go:42:19: undefined: store.ErrNotFound
internal/handlers/user.go:77:23: undefined: store.ErrNotFound
"""

GO_DRAIN_FAIL = """--- FAIL: TestDrainWaitsForInflight (2.00s)
    drain_test.go:58: timed out after 2s waiting for Drain to return; 1 job still in flight
FAIL
FAIL\tgithub.com/acme/jobs/internal/queue\t2.{ms}s
FAIL
"""

# --- JVM ----------------------------------------------------------------------------------

KOTLIN_MISMATCH = """> Task :app:compileKotlin FAILED
e: file:///home/dev/invoicer/app/src/main/kotlin/com/acme/invoicer/InvoiceMapper.kt:31:27 Type mismatch: inferred type is String? but String was expected

FAILURE: Build failed with an exception.

* What went wrong:
Execution failed for task ':app:compileKotlin'.
> A failure occurred while executing org.jetbrains.kotlin.compilerRunner.GradleCompilerRunnerWithWorkers$GradleKotlinCompilerWorkAction
   > Compilation error. See log for more details

* Try:
> Run with --stacktrace option to get the stack trace.
> Run with --info or --debug option to get more log output.

BUILD FAILED in 8s
5 actionable tasks: 1 executed, 4 up-to-date
"""

GRADLE_OK = "> Task :app:compileKotlin\n> Task :app:test\n\nBUILD SUCCESSFUL in {sec}s\n9 actionable tasks: 4 executed, 5 up-to-date\n"

MAVEN_ROUNDING = """[INFO] -------------------------------------------------------
[INFO]  T E S T S
[INFO] -------------------------------------------------------
[INFO] Running com.acme.billing.TaxCalculatorTest
[ERROR] Tests run: 14, Failures: 1, Errors: 0, Skipped: 0, Time elapsed: 0.412 s <<< FAILURE! -- in com.acme.billing.TaxCalculatorTest
[ERROR] com.acme.billing.TaxCalculatorTest.roundsHalfUpOnTheCent -- Time elapsed: 0.019 s <<< FAILURE!
org.opentest4j.AssertionFailedError: expected: <10.05> but was: <10.04>
\tat org.junit.jupiter.api.AssertionFailureBuilder.build(AssertionFailureBuilder.java:151)
\tat com.acme.billing.TaxCalculatorTest.roundsHalfUpOnTheCent(TaxCalculatorTest.java:{line})

[INFO]
[INFO] Results:
[INFO]
[ERROR] Failures:
[ERROR]   TaxCalculatorTest.roundsHalfUpOnTheCent:{line} expected: <10.05> but was: <10.04>
[INFO]
[ERROR] Tests run: 61, Failures: 1, Errors: 0, Skipped: 0
[INFO]
[INFO] ------------------------------------------------------------------------
[INFO] BUILD FAILURE
[INFO] ------------------------------------------------------------------------
"""

MAVEN_OK = """[INFO] Results:
[INFO]
[INFO] Tests run: 61, Failures: 0, Errors: 0, Skipped: 0
[INFO]
[INFO] ------------------------------------------------------------------------
[INFO] BUILD SUCCESS
[INFO] ------------------------------------------------------------------------
[INFO] Total time:  {sec} s
"""

JUNIT_NPE = """> Task :core:test FAILED

SlugServiceTest > slugForUntitledDraft() FAILED
    java.lang.NullPointerException: Cannot invoke "String.length()" because "title" is null
        at com.acme.cms.SlugService.slugFor(SlugService.java:27)
        at com.acme.cms.SlugServiceTest.slugForUntitledDraft(SlugServiceTest.java:44)

38 tests completed, 1 failed

FAILURE: Build failed with an exception.

* What went wrong:
Execution failed for task ':core:test'.
> There were failing tests. See the report at: file:///home/dev/cms/core/build/reports/tests/test/index.html

BUILD FAILED in 6s
"""

# --- C / C++ ------------------------------------------------------------------------------

CMAKE_NO_FMT = """-- The CXX compiler identification is GNU 13.2.0
-- Detecting CXX compiler ABI info - done
-- Check for working CXX compiler: /usr/bin/c++ - skipped
CMake Error at CMakeLists.txt:14 (find_package):
  By not providing "Findfmt.cmake" in CMAKE_MODULE_PATH this project has
  asked CMake to find a package configuration file provided by "fmt", but
  CMake did not find one.

  Could not find a package configuration file provided by "fmt" with any of
  the following names:

    fmtConfig.cmake
    fmt-config.cmake

  Add the installation prefix of "fmt" to CMAKE_PREFIX_PATH or set "fmt_DIR"
  to a directory containing one of the above files.  If "fmt" provides a
  separate development package or SDK, be sure it has been installed.


-- Configuring incomplete, errors occurred!
"""

LD_UNDEFINED = """[ 20%] Building CXX object CMakeFiles/tiles.dir/src/render.cpp.o
[ 40%] Building CXX object CMakeFiles/tiles.dir/src/main.cpp.o
[ 60%] Linking CXX executable tiles
/usr/bin/ld: CMakeFiles/tiles.dir/src/render.cpp.o: in function `render_label(Tile const&)':
render.cpp:(.text+0x8f): undefined reference to `fmt::v9::vformat[abi:cxx11](fmt::v9::basic_string_view<char>, fmt::v9::basic_format_args<fmt::v9::basic_format_context<fmt::v9::appender, char> >)'
collect2: error: ld returned 1 exit status
gmake[2]: *** [CMakeFiles/tiles.dir/build.make:113: tiles] Error 1
gmake[1]: *** [CMakeFiles/Makefile2:83: CMakeFiles/tiles.dir/all] Error 2
gmake: *** [Makefile:91: all] Error 2
"""

# --- Shell / infrastructure ---------------------------------------------------------------

ANSIBLE_UNDEFINED = """PLAY [web] *********************************************************************

TASK [Gathering Facts] *********************************************************
ok: [web-01]
ok: [web-02]

TASK [nginx : render site config] **********************************************
ok: [web-01]
fatal: [web-02]: FAILED! => {"changed": false, "msg": "AnsibleUndefinedVariable: 'upstream_port' is undefined. 'upstream_port' is undefined"}

PLAY RECAP *********************************************************************
web-01                     : ok=7    changed=0    unreachable=0    failed=0    skipped=1    rescued=0    ignored=0
web-02                     : ok=2    changed=0    unreachable=0    failed=1    skipped=0    rescued=0    ignored=0
"""

ANSIBLE_OK = """PLAY [web] *********************************************************************

TASK [nginx : render site config] **********************************************
ok: [web-01]
{change}: [web-02]

PLAY RECAP *********************************************************************
web-01                     : ok=7    changed=0    unreachable=0    failed=0    skipped=1    rescued=0    ignored=0
web-02                     : ok=7    changed={n}    unreachable=0    failed=0    skipped=1    rescued=0    ignored=0
"""

HELM_NIL = """Error: UPGRADE FAILED: template: api/templates/deployment.yaml:38:28: executing "api/templates/deployment.yaml" at <.Values.image.tag>: nil pointer evaluating interface {}.tag
"""

HELM_PENDING = """Error: UPGRADE FAILED: another operation (install/upgrade/rollback) is in progress
"""

SYSTEMD_FAILED = """Job for gunicorn.service failed because the control process exited with error code.
See "systemctl status gunicorn.service" and "journalctl -xeu gunicorn.service" for details.
"""

NGINX_UNKNOWN = """nginx: [emerg] unknown directive "proxy_passs" in /etc/nginx/sites-enabled/shop.conf:23
nginx: configuration file /etc/nginx/nginx.conf test failed
"""

NGINX_NOT_ALLOWED = """nginx: [emerg] "proxy_pass" directive is not allowed here in /etc/nginx/sites-enabled/shop.conf:23
nginx: configuration file /etc/nginx/nginx.conf test failed
"""

NGINX_OK = """nginx: the configuration file /etc/nginx/nginx.conf syntax is ok
nginx: configuration file /etc/nginx/nginx.conf test is successful
"""

# --- Databases ----------------------------------------------------------------------------

DEADLOCK = """BEGIN
psql:{script}:{line}: ERROR:  deadlock detected
DETAIL:  Process {p1} waits for ShareLock on transaction {t1}; blocked by process {p2}.
Process {p2} waits for ShareLock on transaction {t2}; blocked by process {p1}.
HINT:  See server log for query details.
CONTEXT:  while updating tuple ({blk},7) in relation "orders"
"""

# --- HTTP ---------------------------------------------------------------------------------


def http_reply(status: str, body: str, extra: str = "") -> str:
    return (
        f"HTTP/1.1 {status}\ncontent-type: application/json\ndate: Thu, 26 Nov 2026 11:02:13 GMT"
        f"\nserver: uvicorn{extra}\n\n{body}"
    )


def sessions() -> list[dict[str, Any]]:
    return [
        *python_sessions(),
        *javascript_sessions(),
        *rust_sessions(),
        *go_sessions(),
        *jvm_sessions(),
        *native_sessions(),
        *infra_sessions(),
        *database_sessions(),
        *http_sessions(),
        *situation_sessions(),
    ]


def python_sessions() -> list[dict[str, Any]]:
    return [
        session(
            "h2-pytest-fixture-scope",
            ["pytest", "fixture", "hypothesis", "resolved"],
            [path("py-scope-mismatch-tmp-path", "resolved", fix="conftest.py")],
            [
                run(
                    "pytest tests/test_ingest.py",
                    SCOPE_MISMATCH.format(
                        root="/home/dev/warehouse", line=21, venv="/home/dev/warehouse/.venv", ms=19
                    ),
                    1,
                    [E],
                    group="py-scope-mismatch-tmp-path",
                ),
                note(
                    "Hypothesis: the session-scoped warehouse fixture cannot take the "
                    "function-scoped tmp_path; it needs tmp_path_factory.",
                    [H],
                    tags=("hypothesis",),
                ),
                edit(
                    "tests/conftest.py",
                    "warehouse(tmp_path_factory): mktemp('warehouse') instead of tmp_path",
                    [A],
                ),
                run("pytest tests/test_ingest.py", pytest_ok(9, "0.44"), 0, [S]),
                run("pytest tests/test_ingest.py -p no:randomly", pytest_ok(9, "0.41"), 0, [S]),
                run("pytest", pytest_ok(63, "2.87"), 0, RES),
            ],
        ),
        session(
            "h2-mypy-arg-type",
            ["mypy", "resolved"],
            [path("mypy-arg-type-optional-str", "resolved", fix="importer.py")],
            [
                run(
                    "git switch -c import-currency",
                    "Switched to a new branch 'import-currency'",
                    0,
                    [],
                ),
                edit("src/ledger/importer.py", "read the currency column", []),
                run(
                    "mypy src",
                    MYPY_ARG.format(line=54),
                    1,
                    [E],
                    group="mypy-arg-type-optional-str",
                ),
                call(
                    "read_file",
                    "read src/ledger/importer.py",
                    [A],
                    path="src/ledger/importer.py",
                ),
                edit(
                    "src/ledger/importer.py",
                    "skip rows whose amount cell is empty before parse_amount",
                    [A],
                ),
                run("mypy src", "Success: no issues found in 37 source files\n", 0, [S]),
                run("pytest -q tests/test_importer.py", pytest_ok(21, "0.38"), 0, [S]),
                run("mypy src", "Success: no issues found in 37 source files\n", 0, RES),
            ],
        ),
        session(
            "h2-ruff-autofix",
            ["ruff", "lint", "resolved"],
            [path("ruff-mailer", "resolved", fix="ruff check --fix")],
            [
                run("ruff check src", RUFF_FAIL, 1, [E], group="ruff-mailer"),
                run(
                    "ruff check --fix --unsafe-fixes src",
                    "Found 2 errors (2 fixed, 0 remaining).\n",
                    0,
                    [A],
                ),
                run("ruff check src", "All checks passed!\n", 0, [S]),
                run("ruff format --check src", "42 files already formatted\n", 0, [A]),
                run("pytest -q tests/notify", pytest_ok(12, "0.29", "tests/notify"), 0, [S]),
                run("ruff check src", "All checks passed!\n", 0, RES),
            ],
        ),
        session(
            "h2-pip-resolver-urllib3",
            ["pip", "resolver", "discovery", "resolved"],
            [path("pip-urllib3-botocore-conflict", "resolved", fix="requirements.txt")],
            [
                run(
                    "pip install -r requirements.txt",
                    PIP_CONFLICT,
                    1,
                    [E],
                    group="pip-urllib3-botocore-conflict",
                ),
                run("python --version", "Python 3.9.19\n", 0, [A]),
                note(
                    "Discovery: this venv is Python 3.9, and botocore caps urllib3 below 1.27 "
                    "on Pythons older than 3.10; the urllib3 2.x pin cannot hold here.",
                    [D],
                    tags=("discovery",),
                ),
                edit("requirements.txt", "drop the urllib3==2.2.3 pin (botocore decides)", [A]),
                run(
                    "pip install -r requirements.txt",
                    "Successfully installed boto3-1.35.36 botocore-1.35.36 urllib3-1.26.20\n",
                    0,
                    [S],
                ),
                run("pytest -q", pytest_ok(88, "3.10"), 0, [S]),
                run("pytest -q tests/test_s3_upload.py", pytest_ok(7, "0.66"), 0, RES),
            ],
        ),
        session(
            "h2-poetry-solver-abandoned",
            ["poetry", "resolver", "hypothesis", "abandoned"],
            [path("poetry-numpy-python-range", "abandoned")],
            [
                run(
                    "poetry add numpy@^2.1.3",
                    POETRY_SOLVER.format(sec=4),
                    1,
                    [E],
                    group="poetry-numpy-python-range",
                ),
                note(
                    "Hypothesis: the solver only objects to 3.8; raising the floor to 3.9, "
                    "what CI runs, should let it pick numpy 2.",
                    [H],
                    tags=("hypothesis",),
                ),
                edit("pyproject.toml", 'python = ">=3.9,<4.0"', [A]),
                run(
                    "poetry add numpy@^2.1.3",
                    POETRY_SOLVER.format(sec=1)
                    .replace(">=3.8,<4.0", ">=3.9,<4.0")
                    .replace("Python >=3.8,<3.10", "Python >=3.9,<3.10"),
                    1,
                    [F],
                    group="poetry-numpy-python-range",
                ),
            ],
            quiet=95,
        ),
        session(
            "h2-django-500-fielderror",
            ["django", "traceback", "curl", "http-500", "resolved"],
            [path("django-500-recent-orders", "resolved", fix="views.py")],
            [
                run(
                    "curl -si http://127.0.0.1:8000/api/orders/recent/",
                    DJANGO_500.format(mm=14),
                    0,
                    [E],
                    group="django-500-recent-orders",
                    status_code=500,
                ),
                run(
                    "tail -n 12 /tmp/runserver.log",
                    DJANGO_LOG,
                    0,
                    [A],
                    title="read the runserver log",
                    judgement="The log quotes the traceback behind the 500 already seen; reading "
                    "it is investigation, not a new error.",
                ),
                edit("orders/views.py", "filter on created_at__gte (typo create_at)", [A]),
                run(
                    "curl -si http://127.0.0.1:8000/api/orders/recent/",
                    'HTTP/1.1 200 OK\nContent-Type: application/json\n\n{"results": [{"id": 311, "status": "paid"}], "count": 1}',
                    0,
                    [S],
                    status_code=200,
                ),
                run(
                    "python manage.py test orders",
                    "Found 23 test(s).\nCreating test database for alias 'default'...\n"
                    "System check identified no issues (0 silenced).\n.......................\n"
                    "----------------------------------------------------------------------\n"
                    "Ran 23 tests in 0.412s\n\nOK\nDestroying test database for alias 'default'...\n",
                    0,
                    [S],
                    judgement="Django's runner says 'Ran 23 tests ... OK' rather than '23 passed'; "
                    "a test run with no failures is a success.",
                ),
                run(
                    "curl -si http://127.0.0.1:8000/api/orders/recent/",
                    'HTTP/1.1 200 OK\nContent-Type: application/json\n\n{"results": [{"id": 311, "status": "paid"}], "count": 1}',
                    0,
                    RES,
                    status_code=200,
                ),
            ],
        ),
        session(
            "h2-flask-app-context",
            ["flask", "pytest", "traceback", "discovery", "resolved"],
            [path("flask-outside-app-context", "resolved", fix="conftest.py")],
            [
                run(
                    "pytest tests/test_emails.py",
                    FLASK_CTX,
                    1,
                    [E],
                    group="flask-outside-app-context",
                ),
                note(
                    "Discovery: url_for(_external=True) needs an app context, and this test "
                    "module never pushes one; the other tests go through the client fixture.",
                    [D],
                    tags=("debug:discovery",),
                ),
                edit(
                    "tests/conftest.py",
                    "autouse fixture that pushes app.app_context() for tests/test_emails.py",
                    [A],
                ),
                run("pytest tests/test_emails.py", pytest_ok(11, "0.27"), 0, [S]),
                run("pytest tests", pytest_ok(74, "1.92"), 0, [S]),
                run("pytest tests -x", pytest_ok(74, "1.88"), 0, RES),
            ],
        ),
    ]


def javascript_sessions() -> list[dict[str, Any]]:
    next_ok = NEXT_OK
    return [
        session(
            "h2-npm-ci-lock-out-of-sync",
            ["npm", "lockfile", "resolved"],
            [path("npm-ci-lock-out-of-sync", "resolved", fix="npm install")],
            [
                run("npm ci", NPM_CI_SYNC, 1, [E], group="npm-ci-lock-out-of-sync"),
                run(
                    "npm install",
                    "\nadded 1 package, and audited 813 packages in 3s\n\n"
                    "142 packages are looking for funding\n  run `npm fund` for details\n\n"
                    "found 0 vulnerabilities\n",
                    0,
                    [A],
                ),
                run(
                    "npm ci",
                    "\nadded 812 packages, and audited 813 packages in 11s\n\nfound 0 vulnerabilities\n",
                    0,
                    [S],
                ),
                run("npm test", JEST_OK_48, 0, [S]),
                run("npm test -- --ci", JEST_OK_48.replace("3.48", "3.91"), 0, RES),
            ],
        ),
        session(
            "h2-pnpm-frozen-lockfile",
            ["pnpm", "lockfile", "vitest", "resolved"],
            [path("pnpm-outdated-lockfile", "resolved", fix="pnpm install")],
            [
                call("bash", "install dependencies", [], command="pnpm install --frozen-lockfile"),
                run(
                    "pnpm install --frozen-lockfile",
                    PNPM_FROZEN,
                    1,
                    [E],
                    group="pnpm-outdated-lockfile",
                ),
                run(
                    "pnpm install",
                    "Scope: all 4 workspace projects\nLockfile is up to date, resolution step is skipped\n"
                    "Progress: resolved 1, reused 0, downloaded 0, added 0\n"
                    "packages/web                             |   +1 +\n"
                    "Done in 2.4s\n",
                    0,
                    [A],
                ),
                run(
                    "pnpm install --frozen-lockfile",
                    "Scope: all 4 workspace projects\nLockfile is up to date, resolution step is skipped\n"
                    "Already up to date\nDone in 1.1s\n",
                    0,
                    [S],
                ),
                run("pnpm -r test", VITEST_OK, 0, [S]),
                run("pnpm --filter web test", VITEST_OK.replace("2.31s", "2.08s"), 0, RES),
            ],
        ),
        session(
            "h2-next-build-pivot",
            ["next", "npm", "typescript", "pivot", "resolved"],
            [path("next-type-error-post-slug", "resolved", fix="page.tsx")],
            [
                run(
                    "npm run build",
                    NEXT_TYPE_ERROR,
                    1,
                    [E],
                    group="next-type-error-post-slug",
                ),
                edit("lib/posts.ts", "add slug: string to the Post type", [A]),
                run(
                    "npm run build",
                    NEXT_STATIC_PARAMS,
                    1,
                    [P],
                    group="next-missing-static-params",
                ),
                edit(
                    "app/blog/[slug]/page.tsx",
                    "export generateStaticParams() from listPosts()",
                    [A],
                    gap=4,
                ),
                run("npm run build", next_ok, 0, [S], gap=2),
                run("npx playwright test", playwright_ok(9, "7.2"), 0, [S]),
                run("npm run build", next_ok, 0, RES, gap=2),
            ],
        ),
        session(
            "h2-playwright-checkout-total",
            ["playwright", "e2e", "hypothesis", "resolved"],
            [path("playwright-order-total-shipping", "resolved", fix="summary.ts")],
            [
                run(
                    "npx playwright test",
                    PLAYWRIGHT_FAIL.format(sec=16),
                    1,
                    [E],
                    group="playwright-order-total-shipping",
                ),
                note(
                    "Hypothesis: the total is computed before the shipping radio changes; the "
                    "summary store does not subscribe to the shipping method.",
                    [H],
                    tags=("hypothesis",),
                ),
                edit(
                    "src/checkout/summary.ts",
                    "derive total from items and the selected shipping method",
                    [A],
                ),
                run("npx playwright test tests/checkout.spec.ts", playwright_ok(3, "4.8"), 0, [S]),
                run("npx playwright test", playwright_ok(12, "15.9"), 0, [S]),
                run(
                    "npx playwright test --repeat-each=3",
                    playwright_ok(36, "41.0"),
                    0,
                    RES,
                ),
            ],
        ),
        session(
            "h2-node-redis-refused",
            ["node", "unhandled-rejection", "discovery", "resolved"],
            [path("node-redis-econnrefused", "resolved", fix="docker compose")],
            [
                run(
                    "node scripts/seed.mjs",
                    NODE_REDIS.format(line=289, node="20.11.1"),
                    1,
                    [E],
                    group="node-redis-econnrefused",
                ),
                run(
                    "docker compose ps",
                    "NAME            IMAGE              COMMAND                  SERVICE   CREATED       STATUS       PORTS\n"
                    'store-db-1      postgres:16        "docker-entrypoint.s…"   db        2 hours ago   Up 2 hours   0.0.0.0:5432->5432/tcp\n',
                    0,
                    [A],
                ),
                note(
                    "Discovery: the redis service is not running; only the db container is up.",
                    [D],
                    tags=("discovery",),
                ),
                run(
                    "docker compose up -d redis",
                    " ✔ Container store-redis-1  Started                                        0.4s\n",
                    0,
                    [A],
                ),
                run("node scripts/seed.mjs", "seeded 200 products, 14 categories\n", 0, [S]),
                run("npm test", JEST_OK_48, 0, [S]),
                run(
                    "node scripts/seed.mjs",
                    "seeded 0 products, 0 categories (already present)\n",
                    0,
                    RES,
                ),
            ],
        ),
    ]


def rust_sessions() -> list[dict[str, Any]]:
    return [
        session(
            "h2-cargo-borrow-e0502",
            ["cargo", "build", "borrow-checker", "resolved"],
            [path("rust-e0502-borrow-push", "resolved", fix="queue.rs")],
            [
                run(
                    "cargo build",
                    E0502.format(
                        crate="jobq",
                        minor=3,
                        root="/home/dev/jobq",
                        field="pending",
                        file="src/queue.rs",
                        prev=62,
                        line=64,
                    ),
                    101,
                    [E],
                    group="rust-e0502-borrow-push",
                ),
                edit("src/queue.rs", "iterate over self.pending.iter().cloned()", [A]),
                run(
                    "cargo build",
                    E0502.format(
                        crate="jobq",
                        minor=3,
                        root="/home/dev/jobq",
                        field="pending",
                        file="src/queue.rs",
                        prev=62,
                        line=64,
                    ).replace(".iter()", ".iter().cloned()"),
                    101,
                    [F],
                    group="rust-e0502-borrow-push",
                ),
                edit(
                    "src/queue.rs",
                    "collect the retries into a Vec first, then extend self.pending",
                    [A],
                ),
                run("cargo build", cargo_ok("jobq", "2.84"), 0, [S]),
                run("cargo test", cargo_test_ok(27, "0.04"), 0, [S]),
                run("cargo build", cargo_ok("jobq", "0.31"), 0, RES),
            ],
        ),
        session(
            "h2-clippy-deny-warnings",
            ["cargo", "clippy", "resolved"],
            [path("clippy-redundant-clone", "resolved", fix="atlas.rs")],
            [
                run("cargo build", cargo_ok("tilemap", "5.12"), 0, []),
                run(
                    "cargo clippy --all-targets -- -D warnings",
                    CLIPPY_DENY,
                    101,
                    [E],
                    group="clippy-redundant-clone",
                ),
                edit("src/atlas.rs", "entry.name.to_string() without the clone", [A]),
                run(
                    "cargo clippy --all-targets -- -D warnings",
                    "    Checking tilemap v0.3.0 (/home/dev/tilemap)\n    Finished `dev` profile [unoptimized + debuginfo] target(s) in 1.07s\n",
                    0,
                    [S],
                ),
                run("cargo test", cargo_test_ok(41, "0.12"), 0, [S]),
                run(
                    "cargo clippy --all-targets -- -D warnings",
                    "    Finished `dev` profile [unoptimized + debuginfo] target(s) in 0.19s\n",
                    0,
                    RES,
                ),
            ],
        ),
        session(
            "h2-cargo-test-two-pivots",
            ["cargo", "test", "panic", "pivot", "two-pivots", "resolved"],
            [path("rust-unwrap-none-parser", "resolved", fix="parser.rs")],
            [
                run("cargo test", PANIC_UNWRAP, 101, [E], group="rust-unwrap-none-parser"),
                edit("src/parser.rs", "return early when there is no header line", [A]),
                run("cargo test", PANIC_INDEX, 101, [P], group="rust-index-out-of-bounds-parser"),
                edit("src/parser.rs", "use fields.iter().first_or_default() for the head", [A]),
                run(
                    "cargo test",
                    E0599,
                    101,
                    [P],
                    group="rust-e0599-no-method",
                ),
                edit("src/parser.rs", "self.fields.first().cloned().unwrap_or_default()", [A]),
                run("cargo test", cargo_test_ok(14, "0.02"), 0, [S]),
                run("cargo test", cargo_test_ok(14, "0.02"), 0, [S]),
                run("cargo test --release", cargo_test_ok(14, "0.01"), 0, RES),
            ],
        ),
        session(
            "h2-e0502-recurring",
            ["cargo", "build", "borrow-checker", "recurring", "resolved"],
            [path("rust-e0502-borrow-push", "resolved", fix="scheduler.rs")],
            [
                run(
                    "cargo build --workspace",
                    E0502.format(
                        crate="cron-svc",
                        minor=9,
                        root="/work/cron-svc",
                        field="due",
                        file="crates/core/src/scheduler.rs",
                        prev=140,
                        line=143,
                    ),
                    101,
                    [E],
                    group="rust-e0502-borrow-push",
                ),
                edit(
                    "crates/core/src/scheduler.rs",
                    "collect the rescheduled jobs, push after the loop",
                    [A],
                ),
                run("cargo build --workspace", cargo_ok("cron-svc", "9.40", "0.9.0"), 0, [S]),
                run("cargo test --workspace", cargo_test_ok(63, "0.33"), 0, [S]),
                run("cargo test --workspace", cargo_test_ok(63, "0.31"), 0, RES),
            ],
        ),
    ]


def go_sessions() -> list[dict[str, Any]]:
    race = "go test -race ./cache/..."
    race_ok = "ok  \tgithub.com/acme/kv/cache\t1.{}s\n"
    return [
        session(
            "h2-go-race-cache",
            ["go", "test", "race", "hypothesis", "resolved"],
            [path("go-data-race-lru", "resolved", fix="lru.go")],
            [
                run(
                    race,
                    GO_RACE.format(g1=23, g2=22, root="/home/dev/kv", line=48, ms=4),
                    1,
                    [E],
                    group="go-data-race-lru",
                ),
                note(
                    "Hypothesis: Get moves the entry to the front of the list under RLock, "
                    "which is a write.",
                    [H],
                    tags=("hypothesis",),
                ),
                edit("cache/lru.go", "Get takes the full Lock (it mutates the list)", [A]),
                run(race, race_ok.format("021"), 0, [S]),
                run(race, race_ok.format("034"), 0, [S]),
                run(race, race_ok.format("019"), 0, RES),
            ],
        ),
        session(
            "h2-go-race-recurring",
            ["go", "test", "race", "recurring", "abandoned"],
            [path("go-data-race-lru", "abandoned")],
            [
                run(
                    "go test -race -count=1 ./...",
                    GO_RACE.format(g1=41, g2=40, root="/builds/kv", line=52, ms=7),
                    1,
                    [E],
                    group="go-data-race-lru",
                ),
                call("read_file", "read cache/lru.go", [A], path="cache/lru.go"),
            ],
            quiet=75,
        ),
        session(
            "h2-go-build-undefined",
            ["go", "build", "resolved"],
            [path("go-undefined-store-errnotfound", "resolved", fix="errors.go")],
            [
                run(
                    "go build ./...",
                    GO_UNDEFINED,
                    1,
                    [E],
                    group="go-undefined-store-errnotfound",
                ),
                run(
                    "grep -rn 'var Err' internal/store",
                    'internal/store/errors.go:9:var ErrNoRows = errors.New("store: no rows")\n',
                    0,
                    [A],
                ),
                edit(
                    "internal/store/errors.go",
                    'add ErrNotFound = errors.New("store: not found")',
                    [A],
                ),
                run("go build ./...", "", 0, [S]),
                run(
                    "go test ./...",
                    "ok  \tgithub.com/acme/api/internal/handlers\t0.211s\n"
                    "ok  \tgithub.com/acme/api/internal/store\t0.094s\n",
                    0,
                    [S],
                    judgement="`go test` prints ok per package, not 'N passed'; a green test run is "
                    "a success.",
                ),
                run("go build ./...", "", 0, RES),
            ],
        ),
        session(
            "h2-go-flaky-drain",
            ["go", "flaky", "hypothesis", "resolved"],
            [path("go-drain-timeout", "resolved", fix="drain.go")],
            [
                run(
                    "go test -count=1 ./internal/queue",
                    GO_DRAIN_FAIL.format(ms="013"),
                    1,
                    [E],
                    group="go-drain-timeout",
                ),
                run(
                    "go test -count=1 ./internal/queue",
                    "ok  \tgithub.com/acme/jobs/internal/queue\t0.418s\n",
                    0,
                    [S],
                ),
                run(
                    "go test -count=1 ./internal/queue",
                    "ok  \tgithub.com/acme/jobs/internal/queue\t0.402s\n",
                    0,
                    [S],
                ),
                run(
                    "go test -count=1 ./internal/queue",
                    GO_DRAIN_FAIL.format(ms="009"),
                    1,
                    [F],
                    group="go-drain-timeout",
                ),
                note(
                    "Hypothesis: Drain reads inflight before the worker increments it; the "
                    "counter is bumped after the job is dequeued, not atomically with it.",
                    [H],
                    tags=("hypothesis",),
                ),
                edit(
                    "internal/queue/drain.go",
                    "increment inflight inside the dequeue critical section",
                    [A],
                ),
                run(
                    "go test -count=1 ./internal/queue",
                    "ok  \tgithub.com/acme/jobs/internal/queue\t0.399s\n",
                    0,
                    [S],
                ),
                run(
                    "go test -count=1 ./internal/queue",
                    "ok  \tgithub.com/acme/jobs/internal/queue\t0.407s\n",
                    0,
                    [S],
                ),
                run(
                    "go test -count=1 ./internal/queue",
                    "ok  \tgithub.com/acme/jobs/internal/queue\t0.395s\n",
                    0,
                    RES,
                ),
            ],
        ),
    ]


def jvm_sessions() -> list[dict[str, Any]]:
    return [
        session(
            "h2-gradle-kotlin-type-mismatch",
            ["gradle", "kotlin", "resolved"],
            [path("kotlin-type-mismatch-nullable-string", "resolved", fix="InvoiceMapper.kt")],
            [
                run(
                    "./gradlew build",
                    KOTLIN_MISMATCH,
                    1,
                    [E],
                    group="kotlin-type-mismatch-nullable-string",
                ),
                edit(
                    "app/src/main/kotlin/com/acme/invoicer/InvoiceMapper.kt",
                    'customer.vatId ?: "" for the nullable vat id',
                    [A],
                ),
                run("./gradlew build", GRADLE_OK.format(sec=14), 0, [S], gap=2),
                run("./gradlew build", GRADLE_OK.format(sec=3), 0, [S]),
                run("./gradlew build", GRADLE_OK.format(sec=3), 0, RES),
            ],
        ),
        session(
            "h2-maven-junit-rounding",
            ["maven", "junit", "discovery", "resolved"],
            [path("junit-tax-rounding", "resolved", fix="TaxCalculator.java")],
            [
                run(
                    "mvn test",
                    MAVEN_ROUNDING.format(line=88),
                    1,
                    [E],
                    group="junit-tax-rounding",
                ),
                note(
                    "Discovery: TaxCalculator rounds with RoundingMode.HALF_EVEN (banker's "
                    "rounding), so 10.045 becomes 10.04; the invoice rules want HALF_UP.",
                    [D],
                    tags=("discovery",),
                ),
                edit(
                    "src/main/java/com/acme/billing/TaxCalculator.java",
                    "setScale(2, RoundingMode.HALF_UP)",
                    [A],
                ),
                run("mvn test", MAVEN_OK.format(sec="6.114"), 0, [S], gap=2),
                run("mvn test", MAVEN_OK.format(sec="5.870"), 0, [S]),
                run("mvn verify", MAVEN_OK.format(sec="9.402"), 0, RES),
            ],
        ),
        session(
            "h2-junit-npe-notes",
            ["gradle", "junit", "hypothesis", "discovery", "resolved"],
            [path("junit-npe-null-title", "resolved", fix="SlugService.java")],
            [
                run("./gradlew :core:test", JUNIT_NPE, 1, [E], group="junit-npe-null-title"),
                note(
                    "Hypothesis: the draft factory in the test forgets to set a title.",
                    [H],
                    tags=("hypothesis",),
                ),
                call(
                    "read_file",
                    "read core/src/test/java/com/acme/cms/SlugServiceTest.java",
                    [A],
                    path="core/src/test/java/com/acme/cms/SlugServiceTest.java",
                ),
                note(
                    "Not the factory: the test is meant to pass a null title. Maybe slugFor "
                    "should fall back to the draft id.",
                    [H],
                    judgement="An untagged note that states a guess is a hypothesis by the "
                    "issue's 'or by rule'.",
                ),
                run(
                    "git log -S 'Untitled' --oneline -- core/src",
                    "4e1c0a9 cms: untitled drafts get a slug from their id\n",
                    0,
                    [A],
                ),
                note(
                    "Discovery: 4e1c0a9 added the fallback to the controller, not to "
                    "SlugService, so the service still dereferences the null title.",
                    [D],
                    tags=("discovery",),
                ),
                edit(
                    "core/src/main/java/com/acme/cms/SlugService.java",
                    'title == null -> "draft-" + id',
                    [A],
                ),
                run(
                    "./gradlew :core:test",
                    "> Task :core:test\n\nBUILD SUCCESSFUL in 7s\n4 actionable tasks: 2 executed, 2 up-to-date\n",
                    0,
                    [S],
                ),
                run(
                    "./gradlew :core:test",
                    "> Task :core:test UP-TO-DATE\n\nBUILD SUCCESSFUL in 1s\n4 actionable tasks: 4 up-to-date\n",
                    0,
                    [S],
                ),
                run(
                    "./gradlew :core:test",
                    "> Task :core:test UP-TO-DATE\n\nBUILD SUCCESSFUL in 1s\n4 actionable tasks: 4 up-to-date\n",
                    0,
                    RES,
                ),
            ],
        ),
    ]


def native_sessions() -> list[dict[str, Any]]:
    return [
        session(
            "h2-cmake-fmt-then-linker",
            ["cmake", "c++", "linker", "pivot", "resolved"],
            [path("cmake-missing-fmt-package", "resolved", fix="CMakeLists.txt")],
            [
                run(
                    "cmake -S . -B build",
                    CMAKE_NO_FMT,
                    1,
                    [E],
                    group="cmake-missing-fmt-package",
                ),
                run(
                    "sudo apt-get install -y libfmt-dev",
                    "Reading package lists... Done\nBuilding dependency tree... Done\n"
                    "The following NEW packages will be installed:\n  libfmt-dev libfmt9\n"
                    "Setting up libfmt9:amd64 (9.1.0+ds1-2) ...\nSetting up libfmt-dev:amd64 (9.1.0+ds1-2) ...\n",
                    0,
                    [A],
                ),
                run(
                    "cmake -S . -B build",
                    '-- Found fmt: /usr/lib/x86_64-linux-gnu/cmake/fmt (found version "9.1.0")\n'
                    "-- Configuring done (0.4s)\n-- Generating done (0.0s)\n"
                    "-- Build files have been written to: /home/dev/tiles/build\n",
                    0,
                    [S],
                ),
                run(
                    "cmake --build build",
                    LD_UNDEFINED,
                    2,
                    [P],
                    group="ld-undefined-reference-fmt",
                ),
                edit(
                    "CMakeLists.txt",
                    "target_link_libraries(tiles PRIVATE fmt::fmt)",
                    [A],
                ),
                run(
                    "cmake --build build",
                    "[ 20%] Building CXX object CMakeFiles/tiles.dir/src/render.cpp.o\n"
                    "[ 60%] Linking CXX executable tiles\n[100%] Built target tiles\n",
                    0,
                    [S],
                ),
                run(
                    "ctest --test-dir build --output-on-failure",
                    "Test project /home/dev/tiles/build\n"
                    "    Start 1: render_label\n1/6 Test #1: render_label .....................   Passed    0.01 sec\n"
                    "\n100% tests passed, 0 tests failed out of 6\n\nTotal Test time (real) =   0.07 sec\n",
                    0,
                    [S],
                    judgement="ctest says '100% tests passed, 0 tests failed' rather than 'N "
                    "passed': a test run with no failures is a success.",
                ),
                run("cmake --build build", "[100%] Built target tiles\n", 0, RES),
            ],
        ),
    ]


def infra_sessions() -> list[dict[str, Any]]:
    playbook = "ansible-playbook -i inventory/prod site.yml --limit web"
    helm = "helm upgrade --install api charts/api -n staging -f values/staging.yaml"
    nginx = "sudo nginx -t"
    ssh = "ssh deploy@10.0.4.21 'systemctl is-active api'"
    return [
        session(
            "h2-ansible-undefined-var",
            ["ansible", "discovery", "active"],
            [path("ansible-undefined-variable", "active")],
            [
                run(playbook, ANSIBLE_UNDEFINED, 2, [E], group="ansible-undefined-variable"),
                run(
                    "ansible-inventory -i inventory/prod --host web-02",
                    '{\n    "ansible_host": "10.0.4.22",\n    "nginx_worker_processes": 4\n}\n',
                    0,
                    [A],
                ),
                note(
                    "Discovery: web-02 is only in the [web] group of the new inventory, and "
                    "upstream_port lives in group_vars/app.yml.",
                    [D],
                    tags=("discovery",),
                ),
                edit("inventory/prod/group_vars/web.yml", "upstream_port: 8080", [A]),
                run(playbook, ANSIBLE_OK.format(change="changed", n=1), 0, [S], gap=3),
                run(playbook, ANSIBLE_OK.format(change="ok", n=0), 0, [S], gap=3),
            ],
        ),
        session(
            "h2-helm-nil-pointer-rollback",
            ["helm", "kubernetes", "pivot", "revert", "resolved"],
            [path("helm-nil-pointer-image-tag", "resolved", fix="helm rollback")],
            [
                run(helm, HELM_NIL, 1, [E], group="helm-nil-pointer-image-tag"),
                edit("values/staging.yaml", "image: {repository: ..., tag: 1.14.2}", [A]),
                run(helm, HELM_PENDING, 1, [P], group="helm-operation-in-progress", gap=2),
                run(
                    "helm history api -n staging --max 3",
                    "REVISION\tUPDATED                 \tSTATUS         \tCHART     \tAPP VERSION\tDESCRIPTION\n"
                    "13      \tWed Nov 25 16:02:11 2026\tdeployed       \tapi-1.13.0\t1.13.0     \tUpgrade complete\n"
                    "14      \tThu Nov 26 10:31:40 2026\tpending-upgrade\tapi-1.14.0\t1.14.2     \tPreparing upgrade\n",
                    0,
                    [A],
                ),
                run(
                    "helm rollback api 13 -n staging",
                    "Rollback was a success! Happy Helming!\n",
                    0,
                    [R],
                ),
                run(
                    helm,
                    'Release "api" has been upgraded. Happy Helming!\nNAME: api\n'
                    "LAST DEPLOYED: Thu Nov 26 10:36:02 2026\nNAMESPACE: staging\n"
                    "STATUS: deployed\nREVISION: 16\n",
                    0,
                    [S],
                    gap=2,
                ),
                run(
                    "helm test api -n staging",
                    "NAME: api\nLAST DEPLOYED: Thu Nov 26 10:36:02 2026\nNAMESPACE: staging\n"
                    "STATUS: deployed\nREVISION: 16\nTEST SUITE:     api-smoke\n"
                    "Last Started:   Thu Nov 26 10:37:10 2026\nLast Completed: Thu Nov 26 10:37:14 2026\n"
                    "Phase:          Succeeded\n",
                    0,
                    [S],
                    judgement="The chart's test hook passing is a test run with no failures.",
                ),
                run(
                    helm,
                    'Release "api" has been upgraded. Happy Helming!\nNAME: api\n'
                    "LAST DEPLOYED: Thu Nov 26 10:39:45 2026\nNAMESPACE: staging\n"
                    "STATUS: deployed\nREVISION: 17\n",
                    0,
                    RES,
                ),
            ],
        ),
        session(
            "h2-systemd-gunicorn-abandoned",
            ["systemd", "journalctl", "discovery", "abandoned"],
            [path("systemd-gunicorn-failed", "abandoned")],
            [
                run(
                    "sudo systemctl restart gunicorn",
                    SYSTEMD_FAILED,
                    1,
                    [E],
                    group="systemd-gunicorn-failed",
                ),
                run(
                    "journalctl -u gunicorn -n 8 --no-pager",
                    "Nov 26 10:48:02 app-01 gunicorn[21877]:     return importlib.import_module(module)\n"
                    "Nov 26 10:48:02 app-01 gunicorn[21877]: ModuleNotFoundError: No module named 'bakery.wsgi'\n"
                    "Nov 26 10:48:02 app-01 gunicorn[21877]: [2026-11-26 10:48:02 +0000] [21877] [INFO] Worker exiting (pid: 21877)\n"
                    "Nov 26 10:48:03 app-01 systemd[1]: gunicorn.service: Main process exited, code=exited, status=3/NOTIMPLEMENTED\n"
                    "Nov 26 10:48:03 app-01 systemd[1]: gunicorn.service: Failed with result 'exit-code'.\n",
                    0,
                    [A],
                    judgement="The journal explains the failed restart already reported; reading "
                    "it is investigation, not a second error.",
                ),
                note(
                    "Discovery: the unit's WorkingDirectory still points at /srv/bakery-old, "
                    "so bakery.wsgi is not importable.",
                    [D],
                    tags=("discovery",),
                ),
                edit(
                    "/etc/systemd/system/gunicorn.service",
                    "WorkingDirectory=/srv/bakery/current",
                    [A],
                ),
                run("sudo systemctl daemon-reload", "", 0, [A]),
                run(
                    "sudo systemctl restart gunicorn",
                    SYSTEMD_FAILED,
                    1,
                    [F],
                    group="systemd-gunicorn-failed",
                ),
            ],
            quiet=120,
        ),
        session(
            "h2-nginx-directive-pivot",
            ["nginx", "pivot", "resolved"],
            [path("nginx-unknown-directive", "resolved", fix="shop.conf")],
            [
                edit("/etc/nginx/sites-available/shop.conf", "proxy /api to 127.0.0.1:8080", []),
                run(nginx, NGINX_UNKNOWN, 1, [E], group="nginx-unknown-directive"),
                edit("/etc/nginx/sites-available/shop.conf", "proxy_passs -> proxy_pass", [A]),
                run(nginx, NGINX_NOT_ALLOWED, 1, [P], group="nginx-directive-not-allowed"),
                edit(
                    "/etc/nginx/sites-available/shop.conf",
                    "move proxy_pass inside `location /api/ { }`",
                    [A],
                ),
                run(nginx, NGINX_OK, 0, [S]),
                run("sudo systemctl reload nginx", "", 0, [A]),
                run(
                    "curl -sI https://shop.test/api/health",
                    "HTTP/2 200\nserver: nginx/1.24.0\ncontent-type: application/json\n",
                    0,
                    [A],
                    status_code=200,
                    judgement="A first request through the new proxy: a different command from "
                    "the failing `nginx -t`, so an attempt, not a success.",
                ),
                run(nginx, NGINX_OK, 0, [S]),
                run(nginx, NGINX_OK, 0, RES),
            ],
        ),
        session(
            "h2-ssh-publickey",
            ["ssh", "discovery", "resolved"],
            [path("ssh-permission-denied-publickey", "resolved", fix="ssh-add")],
            [
                run(
                    ssh,
                    "deploy@10.0.4.21: Permission denied (publickey).\n",
                    255,
                    [E],
                    group="ssh-permission-denied-publickey",
                ),
                run(
                    "ssh-add -l",
                    "256 SHA256:q3G9nLr1d0m8cXb7TQm1fU2pS0kq4vH7yWzR5aE2c1k dev@laptop (ED25519)\n",
                    0,
                    [A],
                ),
                note(
                    "Discovery: only the personal key is in the agent; the deploy host only "
                    "accepts ~/.ssh/deploy_ed25519.",
                    [D],
                    tags=("discovery",),
                ),
                run(
                    "ssh-add ~/.ssh/deploy_ed25519",
                    "Identity added: /home/dev/.ssh/deploy_ed25519 (deploy@ci)\n",
                    0,
                    [A],
                ),
                run(ssh, "active\n", 0, [S]),
                run(ssh, "active\n", 0, [S]),
                run(ssh, "active\n", 0, RES),
            ],
        ),
        session(
            "h2-infra-all-green",
            ["no-problem", "helm", "nginx", "ansible", "noise"],
            [],
            [
                run(
                    "helm lint charts/api",
                    "==> Linting charts/api\n[INFO] Chart.yaml: icon is recommended\n\n"
                    "1 chart(s) linted, 0 chart(s) failed\n",
                    0,
                    [],
                ),
                run(nginx, NGINX_OK, 0, []),
                run(
                    "ansible-playbook -i inventory/prod site.yml --limit web --check",
                    ANSIBLE_OK.format(change="ok", n=0),
                    0,
                    [],
                ),
                run(
                    "systemctl status api --no-pager",
                    "● api.service - Bakery API\n     Loaded: loaded (/etc/systemd/system/api.service; enabled; preset: enabled)\n"
                    "     Active: active (running) since Thu 2026-11-26 08:12:40 UTC; 2h 41min ago\n"
                    "   Main PID: 1822 (gunicorn)\n",
                    0,
                    [],
                ),
                note("Staging is healthy; nothing to change before the release.", []),
            ],
        ),
    ]


def database_sessions() -> list[dict[str, Any]]:
    backfill = "psql -v ON_ERROR_STOP=1 -d shop -f migrations/2026_11_backfill_totals.sql"
    report = "psql -v ON_ERROR_STOP=1 -d shop -f reports/daily_items.sql"
    return [
        session(
            "h2-psql-deadlock-backfill",
            ["psql", "database", "deadlock", "hypothesis", "discovery", "resolved"],
            [path("pg-deadlock-orders-update", "resolved", fix="backfill_totals.sql")],
            [
                run(
                    backfill,
                    DEADLOCK.format(
                        script="migrations/2026_11_backfill_totals.sql",
                        line=12,
                        p1=48211,
                        p2=48190,
                        t1=918273,
                        t2=918274,
                        blk=412,
                    ),
                    3,
                    [E],
                    group="pg-deadlock-orders-update",
                ),
                note(
                    "Hypothesis: the checkout worker locks orders by id ascending while the "
                    "backfill walks them by created_at.",
                    [H],
                    tags=("hypothesis",),
                ),
                edit(
                    "migrations/2026_11_backfill_totals.sql",
                    "UPDATE ... WHERE id IN (SELECT id ... ORDER BY id FOR UPDATE)",
                    [A],
                ),
                run(
                    backfill,
                    DEADLOCK.format(
                        script="migrations/2026_11_backfill_totals.sql",
                        line=14,
                        p1=48377,
                        p2=48190,
                        t1=918902,
                        t2=918903,
                        blk=977,
                    ),
                    3,
                    [F],
                    group="pg-deadlock-orders-update",
                    gap=3,
                ),
                note(
                    "Discovery: one UPDATE over 18k rows holds every lock until commit; the "
                    "worker's short transactions always collide with it somewhere.",
                    [D],
                    tags=("discovery",),
                ),
                edit(
                    "migrations/2026_11_backfill_totals.sql",
                    "batches of 500 ids, one transaction each",
                    [A],
                ),
                run(
                    backfill,
                    "NOTICE:  backfilled 18234 orders in 37 batches\nDO\n",
                    0,
                    [S],
                    gap=4,
                ),
                run("pytest -q tests/test_order_totals.py", pytest_ok(14, "1.02"), 0, [S]),
                run("pytest -q", pytest_ok(212, "9.47"), 0, RES, gap=2),
            ],
        ),
        session(
            "h2-psql-deadlock-recurring",
            ["psql", "database", "deadlock", "recurring", "resolved"],
            [path("pg-deadlock-orders-update", "resolved", fix="reprice_orders.sql")],
            [
                run(
                    "psql -v ON_ERROR_STOP=1 -d shop_staging -f scripts/reprice_orders.sql",
                    DEADLOCK.format(
                        script="scripts/reprice_orders.sql",
                        line=7,
                        p1=9120,
                        p2=9087,
                        t1=55120,
                        t2=55121,
                        blk=88,
                    ),
                    3,
                    [E],
                    group="pg-deadlock-orders-update",
                ),
                edit("scripts/reprice_orders.sql", "update in batches of 500 ids", [A]),
                run(
                    "psql -v ON_ERROR_STOP=1 -d shop_staging -f scripts/reprice_orders.sql",
                    "NOTICE:  repriced 4410 orders in 9 batches\nDO\n",
                    0,
                    [S],
                ),
                run(
                    "psql -v ON_ERROR_STOP=1 -d shop_staging -f scripts/reprice_orders.sql",
                    "NOTICE:  repriced 0 orders in 0 batches\nDO\n",
                    0,
                    [S],
                ),
                run("pytest -q tests/test_pricing.py", pytest_ok(19, "0.88"), 0, RES),
            ],
        ),
        session(
            "h2-psql-relation-missing",
            ["psql", "database", "discovery", "resolved"],
            [path("pg-relation-does-not-exist", "resolved", fix="daily_items.sql")],
            [
                run(
                    report,
                    'psql:reports/daily_items.sql:3: ERROR:  relation "order_items" does not exist\n'
                    "LINE 2: FROM order_items oi\n             ^\n",
                    3,
                    [E],
                    group="pg-relation-does-not-exist",
                ),
                run(
                    "psql -d shop -c '\\dt'",
                    "             List of relations\n Schema |    Name    | Type  | Owner\n"
                    "--------+------------+-------+-------\n public | customer   | table | shop\n"
                    " public | order      | table | shop\n public | order_item | table | shop\n(3 rows)\n",
                    0,
                    [A],
                ),
                note(
                    "Discovery: the tables are singular since the ORM switch; order_items is "
                    "now order_item.",
                    [D],
                    tags=("discovery",),
                ),
                edit("reports/daily_items.sql", "FROM order_item oi", [A]),
                run(
                    report,
                    "   day    | items\n------------+-------\n 2026-11-25 |  1284\n(1 row)\n",
                    0,
                    [S],
                ),
                run("pytest -q tests/test_reports.py", pytest_ok(6, "0.52"), 0, [S]),
                run(
                    report,
                    "   day    | items\n------------+-------\n 2026-11-25 |  1284\n(1 row)\n",
                    0,
                    RES,
                ),
            ],
        ),
    ]


def http_sessions() -> list[dict[str, Any]]:
    weekly = "http GET :8000/api/v1/reports/weekly 'Authorization:Bearer $TOKEN'"
    return [
        session(
            "h2-httpie-401-then-500",
            ["httpie", "http-4xx", "http-500", "traceback", "resolved"],
            [path("http500-weekly-report-undefined-column", "resolved", fix="alembic upgrade")],
            [
                run(
                    "http POST :8000/api/v1/tokens username=ops password=hunter3",
                    http_reply("401 Unauthorized", '{\n    "detail": "Invalid credentials"\n}'),
                    0,
                    [],
                    status_code=401,
                    judgement="A 4xx is not an error (the password was mistyped); only 5xx is.",
                ),
                run(
                    "http POST :8000/api/v1/tokens username=ops password=hunter2",
                    http_reply(
                        "200 OK",
                        '{\n    "access_token": "eyJhbGciOi…",\n    "token_type": "bearer"\n}',
                    ),
                    0,
                    [],
                    status_code=200,
                ),
                run(
                    weekly,
                    http_reply(
                        "500 Internal Server Error", '{\n    "detail": "Internal Server Error"\n}'
                    ),
                    0,
                    [E],
                    group="http500-weekly-report-undefined-column",
                    status_code=500,
                ),
                run(
                    "docker compose logs api --tail 6",
                    "api-1  | Traceback (most recent call last):\n"
                    'api-1  |   File "/app/reports/service.py", line 61, in weekly\n'
                    "api-1  |     rows = (await session.execute(stmt)).all()\n"
                    "api-1  | sqlalchemy.exc.ProgrammingError: (psycopg.errors.UndefinedColumn) column reports.week_start does not exist\n"
                    "api-1  | LINE 1: SELECT reports.id, reports.week_start, reports.total FROM reports\n"
                    'api-1  | INFO:     172.18.0.1:40112 - "GET /api/v1/reports/weekly HTTP/1.1" 500 Internal Server Error\n',
                    0,
                    [A],
                    title="read the api logs",
                    judgement="The logged traceback is the cause of the 500 already recorded.",
                ),
                run(
                    "docker compose exec api alembic upgrade head",
                    "INFO  [alembic.runtime.migration] Context impl PostgresqlImpl.\n"
                    "INFO  [alembic.runtime.migration] Will assume transactional DDL.\n"
                    "INFO  [alembic.runtime.migration] Running upgrade 3f2a91c0 -> 9c1d7e44, reports: add week_start\n",
                    0,
                    [A],
                ),
                run(
                    weekly,
                    http_reply(
                        "200 OK", '{\n    "week_start": "2026-11-23",\n    "total": 48211\n}'
                    ),
                    0,
                    [S],
                    status_code=200,
                ),
                run(
                    weekly,
                    http_reply(
                        "200 OK", '{\n    "week_start": "2026-11-23",\n    "total": 48211\n}'
                    ),
                    0,
                    [S],
                    status_code=200,
                ),
                run("pytest -q tests/test_reports_api.py", pytest_ok(11, "1.37"), 0, RES),
            ],
        ),
        session(
            "h2-curl-4xx-no-problem",
            ["curl", "http-4xx", "no-problem", "noise"],
            [],
            [
                run(
                    "curl -si -X DELETE localhost:8000/api/v1/webhooks/wh_77ab -H @auth.hdr",
                    http_reply("204 No Content", ""),
                    0,
                    [],
                    status_code=204,
                ),
                run(
                    "curl -si localhost:8000/api/v1/webhooks/wh_77ab -H @auth.hdr",
                    http_reply(
                        "404 Not Found",
                        '{"error":"not_found","detail":"webhook wh_77ab does not exist"}',
                    ),
                    0,
                    [],
                    status_code=404,
                    judgement="The 404 is what the agent checked for after the delete.",
                ),
                run(
                    'curl -si -X POST localhost:8000/api/v1/webhooks -H @auth.hdr -d \'{"url": "ftp://x"}\'',
                    http_reply(
                        "422 Unprocessable Entity",
                        '{"error":"invalid","detail":[{"loc":["body","url"],"msg":"URL scheme should be \'http\' or \'https\'"}]}',
                    ),
                    0,
                    [],
                    status_code=422,
                    judgement="Probing the validation on purpose; a 4xx is not an error.",
                ),
                note("Delete and validation behave as documented.", []),
            ],
        ),
    ]


def situation_sessions() -> list[dict[str, Any]]:
    tsc = "npx tsc --noEmit -p ."
    return [
        session(
            "h2-http-503-abandoned-then-vitest",
            ["curl", "http-5xx", "hypothesis", "abandoned", "two-paths", "vitest", "resolved"],
            [
                path("http503-geocoder-upstream", "abandoned"),
                path("vitest-dates-timezone", "resolved", fix="dates.ts"),
            ],
            [
                run(
                    "curl -si 'https://geo.internal.test/v2/lookup?q=Rue+de+Rivoli+12'",
                    "HTTP/1.1 503 Service Unavailable\nretry-after: 120\ncontent-type: text/plain\n\nupstream connect error or disconnect/reset before headers. reset reason: connection termination",
                    0,
                    [E],
                    group="http503-geocoder-upstream",
                    status_code=503,
                ),
                note(
                    "Hypothesis: the geocoder pods are restarting after this morning's deploy; "
                    "waiting it out.",
                    [H],
                    tags=("hypothesis",),
                ),
                run(
                    "pnpm --filter web test",
                    " RUN  v2.1.5 /home/dev/mono/packages/web\n\n"
                    " ❯ src/lib/dates.test.ts (9 tests | 1 failed) 17ms\n"
                    "   × formatDay > renders the local day for late UTC times\n"
                    "     → expected '2026-11-25' to be '2026-11-26'\n\n"
                    " FAIL  src/lib/dates.test.ts > formatDay > renders the local day for late UTC times\n"
                    "AssertionError: expected '2026-11-25' to be '2026-11-26' // Object.is equality\n\n"
                    " Test Files  1 failed | 5 passed (6)\n      Tests  1 failed | 63 passed (64)\n",
                    1,
                    [E],
                    group="vitest-dates-timezone",
                    gap=55,
                ),
                edit(
                    "packages/web/src/lib/dates.ts", "format in the user's time zone, not UTC", [A]
                ),
                run("pnpm --filter web test", VITEST_OK, 0, [S]),
                run("pnpm --filter web test", VITEST_OK.replace("2.31s", "2.27s"), 0, [S]),
                run("pnpm -r test", VITEST_OK.replace("2.31s", "2.44s"), 0, RES),
            ],
        ),
        session(
            "h2-revert-feed-map",
            ["git", "revert", "vitest", "resolved"],
            [path("vitest-feed-undefined-map", "resolved", fix="git checkout")],
            [
                run(
                    "git pull --rebase",
                    "Successfully rebased and updated refs/heads/main.\n packages/web/src/lib/feed.ts | 9 ++++-----\n",
                    0,
                    [],
                ),
                run(
                    "pnpm --filter web test",
                    " FAIL  src/components/Feed.test.tsx > Feed > renders an empty state\n"
                    "TypeError: Cannot read properties of undefined (reading 'map')\n"
                    " ❯ groupByDay src/lib/feed.ts:14:18\n"
                    " ❯ Feed src/components/Feed.tsx:22:17\n\n"
                    " Test Files  1 failed | 5 passed (6)\n      Tests  1 failed | 63 passed (64)\n",
                    1,
                    [E],
                    group="vitest-feed-undefined-map",
                ),
                run(
                    "git log -1 --format='%h %s' -- packages/web/src/lib/feed.ts",
                    "b71e0c2 feed: group items by day\n",
                    0,
                    [A],
                ),
                run(
                    "git checkout b71e0c2~1 -- packages/web/src/lib/feed.ts",
                    "Updated 1 path from 5f1d2a7\n",
                    0,
                    [R],
                ),
                run("pnpm --filter web test", VITEST_OK, 0, [S]),
                run("pnpm --filter web test", VITEST_OK, 0, [S]),
                run("pnpm -r test", VITEST_OK, 0, RES),
                note(
                    "Restored feed.ts from before b71e0c2; asked its author to handle "
                    "an undefined items list before re-landing.",
                    [],
                ),
            ],
        ),
        session(
            "h2-tsc-recurs-same-session",
            ["typescript", "recurring", "recurring-same-session", "two-paths", "resolved"],
            [
                path("ts2532-possibly-undefined", "resolved", fix="cart.ts"),
                path("ts2532-possibly-undefined", "resolved", fix="wishlist.ts"),
            ],
            [
                run(
                    tsc,
                    TSC_2532.format(
                        file="src/store/cart.ts", line=18, col=19, expr="items[0].sku", pad="  "
                    ),
                    2,
                    [E],
                    group="ts2532-possibly-undefined",
                ),
                edit("src/store/cart.ts", "items.at(0)?.sku ?? null", [A]),
                run(tsc, "", 0, [S]),
                run(
                    "npx vitest run",
                    VITEST_OK.replace("/home/dev/mono/packages/web", "/home/dev/store"),
                    0,
                    [S],
                ),
                run(tsc, "", 0, RES),
                edit("src/store/wishlist.ts", "first(): the first saved item", [], gap=12),
                run(
                    tsc,
                    TSC_2532.format(
                        file="src/store/wishlist.ts", line=33, col=19, expr="saved[0].sku", pad="  "
                    ),
                    2,
                    [E],
                    group="ts2532-possibly-undefined",
                ),
                edit("src/store/wishlist.ts", "saved.at(0)?.sku ?? null", [A]),
                run(tsc, "", 0, [S]),
                run(tsc, "", 0, [S]),
                run(
                    "npx vitest run",
                    VITEST_OK.replace("/home/dev/mono/packages/web", "/home/dev/store"),
                    0,
                    RES,
                ),
            ],
        ),
        session(
            "h2-eslint-then-unrelated-success",
            ["eslint", "npm", "noise", "unrelated-success", "active"],
            [path("eslint-no-unused-vars", "active")],
            [
                run("npm run lint", ESLINT_FAIL, 1, [E], group="eslint-no-unused-vars"),
                run(
                    "npm run format",
                    "\n> admin@2.3.0 format\n> prettier --write src\n\nsrc/pages/Users.tsx 41ms (unchanged)\n",
                    0,
                    [A],
                    judgement="Prettier succeeding is a different command from the failing lint; "
                    "it does not count toward resolution.",
                ),
                run(
                    "git status --short",
                    " M src/pages/Users.tsx\n",
                    0,
                    [A],
                ),
                run(
                    "npm run typecheck",
                    "\n> admin@2.3.0 typecheck\n> tsc --noEmit\n\n",
                    0,
                    [A],
                    judgement="Type-checking is not the lint that failed, and prints no test "
                    "count: unrelated, not a success.",
                ),
            ],
        ),
        session(
            "h2-cargo-warnings-no-problem",
            ["no-problem", "cargo", "clippy", "noise"],
            [],
            [
                run(
                    "cargo clippy",
                    "    Checking tilemap v0.3.0 (/home/dev/tilemap)\n"
                    "warning: this `if` has identical blocks\n  --> src/render.rs:88:22\n   |\n"
                    "   = help: for further information visit https://rust-lang.github.io/rust-clippy/master/index.html#if_same_then_else\n"
                    "   = note: `#[warn(clippy::if_same_then_else)]` on by default\n\n"
                    "warning: `tilemap` (lib) generated 1 warning\n"
                    "    Finished `dev` profile [unoptimized + debuginfo] target(s) in 1.44s\n",
                    0,
                    [],
                    judgement="Clippy warnings without -D warnings exit 0: not an error.",
                ),
                run("cargo test", cargo_test_ok(41, "0.12"), 0, []),
                run(
                    "git log --oneline -4",
                    "c0ffe11 atlas: stop cloning names\n"
                    "9a8b7c6 fix TypeError: undefined tile in the web preview\n"
                    "5d4e3f2 render: label placement\n1a2b3c4 initial import\n",
                    0,
                    [],
                    judgement="'TypeError:' appears in an old commit subject, not in anything "
                    "that just failed.",
                ),
                note("One clippy warning to clean up later; everything passes.", []),
            ],
        ),
        session(
            "h2-playwright-flaky-retry-green",
            ["playwright", "flaky", "no-problem", "noise"],
            [],
            [
                run(
                    "npx playwright test --retries=2",
                    "Running 24 tests using 4 workers\n\n"
                    "  1 flaky\n    [chromium] › tests/search.spec.ts:9:3 › search › suggests as you type\n"
                    "  23 passed (18.4s)\n",
                    0,
                    [],
                    judgement="Playwright passed on retry and exited 0; a flaky report is a "
                    "warning, not an error.",
                ),
                note("search.spec is flaky on retry 1; filed a ticket, not chasing it now.", []),
            ],
        ),
        session(
            "h2-mcp-browser-navigate",
            ["mcp-tool", "browser", "npm", "resolved"],
            [path("browser-connection-refused-dev-server", "resolved", fix="npm run dev")],
            [
                respond(
                    "browser_navigate",
                    "navigate to http://localhost:3000/settings",
                    "error",
                    [E],
                    group="browser-connection-refused-dev-server",
                    url="http://localhost:3000/settings",
                    error="page.goto: net::ERR_CONNECTION_REFUSED at http://localhost:3000/settings",
                ),
                call("bash", "start the dev server: npm run dev", [A], command="npm run dev"),
                respond(
                    "browser_navigate",
                    "navigate to http://localhost:3000/settings",
                    "ok",
                    [S],
                    url="http://localhost:3000/settings",
                    page_title="Settings · Acme Admin",
                ),
                respond(
                    "browser_navigate",
                    "navigate to http://localhost:3000/settings/billing",
                    "ok",
                    [S],
                    url="http://localhost:3000/settings/billing",
                    page_title="Billing · Acme Admin",
                ),
                respond(
                    "browser_navigate",
                    "navigate to http://localhost:3000/",
                    "ok",
                    RES,
                    url="http://localhost:3000/",
                    page_title="Dashboard · Acme Admin",
                ),
            ],
        ),
        session(
            "h2-node-redis-recurring",
            ["node", "unhandled-rejection", "recurring", "resolved"],
            [path("node-redis-econnrefused", "resolved", fix="docker compose")],
            [
                run(
                    "node scripts/reindex.mjs --all",
                    NODE_REDIS.format(line=391, node="22.11.0"),
                    1,
                    [E],
                    group="node-redis-econnrefused",
                ),
                run(
                    "docker compose up -d redis",
                    " ✔ Container search-redis-1  Started                                       0.6s\n",
                    0,
                    [A],
                ),
                run("node scripts/reindex.mjs --all", "reindexed 3120 documents in 4.2s\n", 0, [S]),
                run("node scripts/reindex.mjs --all", "reindexed 3120 documents in 3.9s\n", 0, [S]),
                run("npm test", JEST_OK_48.replace("3.48", "4.02"), 0, RES),
            ],
        ),
        session(
            "h2-pip-resolver-ci-recurring",
            ["pip", "resolver", "recurring", "ci", "active"],
            [path("pip-urllib3-botocore-conflict", "active")],
            [
                run(
                    "python -m pip install -r requirements.txt",
                    PIP_CONFLICT.replace("line 2", "line 3").replace("line 9", "line 11"),
                    1,
                    [E],
                    group="pip-urllib3-botocore-conflict",
                ),
                call("read_file", "read requirements.txt", [A], path="requirements.txt"),
                edit("requirements.txt", "urllib3<1.27 while CI runs Python 3.9", [A]),
                run(
                    "python -m pip install -r requirements.txt",
                    "Successfully installed boto3-1.35.36 botocore-1.35.36 urllib3-1.26.20\n",
                    0,
                    [S],
                ),
            ],
        ),
    ]


if __name__ == "__main__":
    OUT.parent.mkdir(parents=True, exist_ok=True)
    data = sessions()
    OUT.write_text(json.dumps(data, indent=1, ensure_ascii=False) + "\n")
    print(f"{len(data)} sessions, {sum(len(s['steps']) for s in data)} steps -> {OUT}")
