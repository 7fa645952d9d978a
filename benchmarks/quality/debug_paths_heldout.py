"""Writes ``debug_paths/heldout.json``: debugging sessions the debug-path rules were never
tuned on, in the format of ``sessions.json`` (see ``debug_paths_corpus.py``).

    PYTHONPATH=$PWD/src .venv/bin/python benchmarks/quality/debug_paths_heldout.py
    PYTHONPATH=$PWD/src .venv/bin/python benchmarks/quality/debug_paths.py \\
        --corpus benchmarks/quality/debug_paths/heldout.json \\
        --out benchmarks/results/debug_paths_heldout

``sessions.json`` is the corpus the rules were corrected against, so its scores are tuned
numbers. These sessions were written before reading the rules, from tool output of
ecosystems that corpus covers little or not at all (go, vitest, rspec, gradle/JUnit, maven,
docker, terraform, kubectl, C builds and crashes, database migrations, eslint, timeouts,
non-shell tools that answer with a ``status``), and annotated by the issue's definitions:
the first error opens a path (``error``); the same error again is a ``failure``, a
different one while the path is open a ``pivot``; a tool call, edit or investigating
command after an error is an ``attempt``; the thing that failed (or its tests) passing is a
``success``, the third in a row also the ``resolution``; notes that state a hypothesis or a
finding are ``hypothesis``/``discovery``, tagged or not; undoing a change is a ``revert``.
A path with no waypoint for 30 minutes is abandoned. Where a case is a judgement call, the
session's ``kinds`` say so (``judgement``) and the comment next to it says why.
"""

# Tool output is quoted verbatim: long lines and typography as the tools print them.
# ruff: noqa: E501, RUF001

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

OUT = Path(__file__).resolve().parent / "debug_paths" / "heldout.json"

Step = dict[str, Any]

# The record builders of debug_paths_corpus.py, copied so that the held-out set stays as it
# was written when that builder changes.


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


def respond(
    tool: str,
    status: str,
    output: str,
    expect: list[str],
    *,
    group: str | None = None,
    gap: int = 1,
    title: str | None = None,
    **extra: Any,
) -> Step:
    """A non-shell tool's answer (an MCP or HTTP tool): a ``status`` instead of an exit code."""
    record = {
        "schema_name": "tool.response.v1",
        "title": title or f"{tool} {status}",
        "tags": [f"tool:{tool}"],
        "context": {"tool": tool, "status": status, "output": output, **extra},
    }
    step: Step = {"record": record, "expect": expect, "gap": gap}
    if group is not None:
        step["group"] = group
    return step


GO_FAIL = """--- FAIL: TestParseDuration (0.00s)
    --- FAIL: TestParseDuration/days (0.00s)
        duration_test.go:{line}: ParseDuration("3d") = 3h0m0s, want 72h0m0s
FAIL
FAIL	github.com/acme/sched/internal/timeutil	0.{ms}s
ok  	github.com/acme/sched/internal/store	0.031s
FAIL
"""
GO_OK = """ok  	github.com/acme/sched/internal/timeutil	0.{ms}s
ok  	github.com/acme/sched/internal/store	(cached)
"""

GO_NIL_MAP = """panic: assignment to entry in nil map

goroutine 1 [running]:
main.(*Registry).Add(...)
	{root}/cmd/reg/main.go:{line}
main.main()
	{root}/cmd/reg/main.go:61 +0x{addr}
exit status 2
"""

VITEST_FAIL = """ RUN  v2.1.4 /home/dev/web

 ❯ src/utils/date.test.ts (6 tests | 1 failed) 21ms
   × formatDay > renders the local day for a UTC midnight
     → expected '2026-11-25' to be '2026-11-26' // Object.is equality

⎯⎯⎯⎯⎯⎯⎯ Failed Tests 1 ⎯⎯⎯⎯⎯⎯⎯

 FAIL  src/utils/date.test.ts > formatDay > renders the local day for a UTC midnight
AssertionError: expected '2026-11-25' to be '2026-11-26' // Object.is equality

- Expected
+ Received

- 2026-11-26
+ 2026-11-25

 ❯ src/utils/date.test.ts:{line}:38

⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯[1/1]⎯

 Test Files  1 failed | 11 passed (12)
      Tests  1 failed | 87 passed (88)
   Start at  10:{mm}:07
   Duration  {sec}.41s (transform 611ms, setup 0ms, collect 2.10s, tests 388ms)
"""
VITEST_OK = """ RUN  v2.1.4 /home/dev/web

 ✓ src/utils/date.test.ts (6 tests) 18ms
 ✓ src/api/client.test.ts (14 tests) 44ms

 Test Files  12 passed (12)
      Tests  88 passed (88)
   Start at  10:{mm}:40
   Duration  2.{ms}s (transform 590ms, setup 0ms, collect 2.02s, tests 371ms)
"""

RSPEC_FAIL = """
Randomized with seed {seed}
...F........

Failures:

  1) Order#total includes VAT
     Failure/Error: expect(order.total).to eq(119.0)

       expected: 119.0
            got: 100.0

       (compared using ==)
     # ./spec/models/order_spec.rb:{line}:in `block (3 levels) in <top (required)>'

Finished in 0.{ms} seconds (files took 1.31 seconds to load)
12 examples, 1 failure

Failed examples:

rspec ./spec/models/order_spec.rb:{at} # Order#total includes VAT

Randomized with seed {seed}
"""


def rspec_ok(n: int, seed: int, ms: int = 19) -> str:
    return (
        f"\nRandomized with seed {seed}\n{'.' * n}\n\n"
        f"Finished in 0.{ms} seconds (files took 1.29 seconds to load)\n"
        f"{n} examples, 0 failures\n\nRandomized with seed {seed}\n"
    )


GRADLE_FAIL = """> Task :app:compileJava UP-TO-DATE
> Task :app:test FAILED

InvoiceServiceTest > computesVatForGermany() FAILED
    org.opentest4j.AssertionFailedError: expected: <19.00> but was: <0.19>
        at app//org.junit.jupiter.api.AssertionFailureBuilder.build(AssertionFailureBuilder.java:151)
        at app//org.junit.jupiter.api.AssertEquals.assertEquals(AssertEquals.java:{line})
        at app//com.acme.billing.InvoiceServiceTest.computesVatForGermany(InvoiceServiceTest.java:34)

14 tests completed, 1 failed

FAILURE: Build failed with an exception.

* What went wrong:
Execution failed for task ':app:test'.
> There were failing tests. See the report at: file:///home/dev/billing/app/build/reports/tests/test/index.html

* Try:
> Run with --scan to get full insights.

BUILD FAILED in {sec}s
4 actionable tasks: 2 executed, 2 up-to-date
"""
GRADLE_OK = """> Task :app:compileJava
> Task :app:test

BUILD SUCCESSFUL in {sec}s
4 actionable tasks: 2 executed, 2 up-to-date
"""

DOCKER_PIP_FAIL = """#0 building with "default" instance using docker driver

#{n} [4/7] RUN pip install --no-cache-dir -r requirements.txt
#{n} 1.{ms} Collecting fastapi==0.115.4 (from -r requirements.txt (line 1))
#{n} 2.{ms} ERROR: Could not find a version that satisfies the requirement psycopg2-binary==2.9.99 (from versions: 2.9.6, 2.9.7, 2.9.8, 2.9.9, 2.9.10)
#{n} 2.{ms} ERROR: No matching distribution found for psycopg2-binary==2.9.99
#{n} ERROR: process "/bin/sh -c pip install --no-cache-dir -r requirements.txt" did not complete successfully: exit code: 1
------
 > [4/7] RUN pip install --no-cache-dir -r requirements.txt:
------
Dockerfile:9
--------------------
   7 |     COPY requirements.txt .
   8 |
   9 | >>> RUN pip install --no-cache-dir -r requirements.txt
--------------------
ERROR: failed to solve: process "/bin/sh -c pip install --no-cache-dir -r requirements.txt" did not complete successfully: exit code: 1
"""
DOCKER_OK = """#0 building with "default" instance using docker driver
#8 [4/7] RUN pip install --no-cache-dir -r requirements.txt
#8 CACHED
#11 exporting to image
#11 writing image sha256:{sha} done
#11 naming to docker.io/library/api:latest done
#11 DONE 0.{ms}s
"""

TF_UNDECLARED = """╷
│ Error: Reference to undeclared input variable
│
│   on main.tf line {line}, in resource "aws_s3_bucket" "logs":
│   {line}:   bucket = var.log_bucket_name
│
│ An input variable with the name "log_bucket_name" has not been declared. This variable can be declared with a variable "log_bucket_name" {{}} block.
╵
"""

SEGV = "Segmentation fault (core dumped)\n"


def sessions() -> list[dict[str, Any]]:
    return [
        session(
            "go-test-fixed",
            ["go", "test", "resolved"],
            [path("go-parse-duration", "resolved", fix="duration.go")],
            [
                run(
                    "go test ./...",
                    GO_FAIL.format(line=27, ms="012"),
                    1,
                    [E],
                    group="go-parse-duration",
                ),
                call(
                    "read_file",
                    "read internal/timeutil/duration.go",
                    [A],
                    path="internal/timeutil/duration.go",
                ),
                edit("internal/timeutil/duration.go", "a 'd' unit is 24h, not 1h", [A]),
                run("go test ./internal/timeutil/", GO_OK.format(ms="009"), 0, [S]),
                run("go test ./...", GO_OK.format(ms="011"), 0, [S]),
                run("go test -race ./...", GO_OK.format(ms="140"), 0, RES),
            ],
        ),
        session(
            "go-test-recurring",
            ["go", "test", "recurring", "resolved"],
            [path("go-parse-duration", "resolved", fix="duration.go")],
            [
                call("bash", "run the go tests", [], command="go test ./..."),
                run(
                    "go test ./...",
                    GO_FAIL.format(line=41, ms="019"),
                    1,
                    [E],
                    group="go-parse-duration",
                ),
                edit("internal/timeutil/duration.go", "parse 'd' as 24 hours", [A]),
                call("bash", "run the go tests", [A], command="go test ./..."),
                run("go test ./...", GO_OK.format(ms="010"), 0, [S]),
                call("bash", "run the go tests again", [A], command="go test -count=1 ./..."),
                run("go test -count=1 ./...", GO_OK.format(ms="013"), 0, [S]),
                run("go test -count=1 ./...", GO_OK.format(ms="012"), 0, RES),
            ],
        ),
        session(
            "go-build-undefined",
            ["go", "build", "judgement", "resolved"],
            [path("go-undefined-sqlx", "resolved", fix="go get")],
            [
                run(
                    "go build ./...",
                    "# github.com/acme/sched/internal/store\n"
                    "internal/store/pg.go:42:9: undefined: sqlx.In\n"
                    "internal/store/pg.go:57:14: undefined: sqlx.Rebind\n",
                    1,
                    [E],
                    group="go-undefined-sqlx",
                ),
                # grep finding nothing exits 1: an investigating step, not a new error.
                run("grep -n sqlx go.mod", "", 1, [A], title="is sqlx in go.mod"),
                run(
                    "go get github.com/jmoiron/sqlx@v1.4.0",
                    "go: added github.com/jmoiron/sqlx v1.4.0",
                    0,
                    [A],
                ),
                run("go build ./...", "", 0, [S]),
                run("go build -o bin/sched ./cmd/sched", "", 0, [S]),
                run("go test ./...", GO_OK.format(ms="014"), 0, RES),
            ],
        ),
        session(
            "go-panic-nil-map",
            ["go", "panic", "hypothesis", "resolved"],
            [path("go-nil-map", "resolved", fix="main.go")],
            [
                run(
                    "go run ./cmd/reg",
                    GO_NIL_MAP.format(root="/home/dev/sched", line=33, addr="1d"),
                    1,
                    [E],
                    group="go-nil-map",
                ),
                # Untagged, but a hypothesis by any reading: the issue allows "or by rule".
                note(
                    "I think Registry is built with a struct literal, so entries is never made.",
                    [H],
                ),
                edit("cmd/reg/main.go", "NewRegistry() makes the entries map", [A]),
                run("go run ./cmd/reg", "registered 14 handlers", 0, [S]),
                run("go run ./cmd/reg -v", "registered 14 handlers\n  GET /health\n  ...", 0, [S]),
                run("go test ./cmd/reg", "ok  \tgithub.com/acme/sched/cmd/reg\t0.008s\n", 0, RES),
            ],
        ),
        session(
            "go-nil-map-recurring-abandoned",
            ["go", "panic", "recurring", "abandoned"],
            [path("go-nil-map", "abandoned")],
            [
                run(
                    "go run ./cmd/reg",
                    GO_NIL_MAP.format(root="/builds/acme/sched", line=35, addr="4f"),
                    1,
                    [E],
                    group="go-nil-map",
                ),
                call("read_file", "read cmd/reg/main.go", [A], path="cmd/reg/main.go"),
            ],
            quiet=90,
        ),
        session(
            "go-test-timeout-abandoned",
            ["go", "timeout", "hypothesis", "abandoned"],
            [path("go-test-timeout-watcher", "abandoned")],
            [
                run(
                    "go test -timeout 30s ./internal/watch/",
                    "panic: test timed out after 30s\n"
                    "running tests:\n\tTestWatcherStops (30s)\n\n"
                    "goroutine 21 [chan receive]:\n"
                    "github.com/acme/sched/internal/watch.(*Watcher).Stop(...)\n"
                    "\t/home/dev/sched/internal/watch/watch.go:88\n"
                    "FAIL\tgithub.com/acme/sched/internal/watch\t30.014s\nFAIL\n",
                    1,
                    [E],
                    group="go-test-timeout-watcher",
                ),
                note(
                    "Hypothesis: Stop waits on done, but the loop only closes done on ctx cancel.",
                    [H],
                    tags=("hypothesis",),
                ),
                edit("internal/watch/watch.go", "Stop cancels the context before waiting", [A]),
                run(
                    "go test -timeout 30s ./internal/watch/",
                    "panic: test timed out after 30s\n"
                    "running tests:\n\tTestWatcherStops (30s)\n\n"
                    "goroutine 23 [chan receive]:\n"
                    "github.com/acme/sched/internal/watch.(*Watcher).Stop(...)\n"
                    "\t/home/dev/sched/internal/watch/watch.go:91\n"
                    "FAIL\tgithub.com/acme/sched/internal/watch\t30.011s\nFAIL\n",
                    1,
                    [F],
                    group="go-test-timeout-watcher",
                ),
            ],
            quiet=120,
        ),
        session(
            "vitest-fixed",
            ["vitest", "npm", "resolved"],
            [path("vitest-format-day", "resolved", fix="date.ts")],
            [
                run(
                    "npx vitest run",
                    VITEST_FAIL.format(line=31, mm="02", sec=3),
                    1,
                    [E],
                    group="vitest-format-day",
                ),
                note(
                    "Discovery: formatDay uses getDate() (local) on a UTC timestamp; CI runs in UTC, I run in America/New_York.",
                    [D],
                    tags=("discovery",),
                ),
                edit("src/utils/date.ts", "formatDay uses getUTCDate/getUTCMonth", [A]),
                run("npx vitest run src/utils", VITEST_OK.format(mm="05", ms=41), 0, [S]),
                run("npx vitest run", VITEST_OK.format(mm="06", ms=38), 0, [S]),
                run("TZ=UTC npx vitest run", VITEST_OK.format(mm="07", ms=44), 0, RES),
            ],
        ),
        session(
            "vitest-fixed-then-recurs",
            ["vitest", "recurring", "two-paths"],
            [
                path("vitest-format-day", "resolved", fix="date.ts"),
                path("vitest-format-day", "active"),
            ],
            [
                run(
                    "npm test",
                    VITEST_FAIL.format(line=34, mm="31", sec=2),
                    1,
                    [E],
                    group="vitest-format-day",
                ),
                edit("src/utils/date.ts", "use the UTC getters", [A]),
                run("npm test", VITEST_OK.format(mm="33", ms=12), 0, [S]),
                run("npm test", VITEST_OK.format(mm="34", ms=15), 0, [S]),
                run("npm test", VITEST_OK.format(mm="35", ms=11), 0, RES),
                run("git commit -am 'date: UTC day'", "[main 41c2e9a] date: UTC day", 0, []),
                # A merge brings the local-time version back, 40 minutes later.
                run(
                    "git pull --rebase", "Successfully rebased and updated refs/heads/main.", 0, []
                ),
                run(
                    "npm test",
                    VITEST_FAIL.format(line=34, mm="15", sec=3),
                    1,
                    [E],
                    group="vitest-format-day",
                    gap=40,
                ),
            ],
        ),
        session(
            "flaky-jest-passes-on-rerun",
            ["jest", "flaky", "timeout", "abandoned"],
            [path("jest-timeout-upload", "abandoned")],
            [
                run(
                    "npx jest src/api",
                    "FAIL src/api/upload.test.ts (6.214 s)\n"
                    "  ● upload › retries a 503 once\n\n"
                    '    thrown: "Exceeded timeout of 5000 ms for a test.\n'
                    '    Add a timeout value to this test to increase the timeout, if this is a long-running test. See https://jestjs.io/docs/api#testname-fn-timeout."\n\n'
                    "      40 |\n    > 41 |   it('retries a 503 once', async () => {\n"
                    "         |   ^\n\n"
                    "Test Suites: 1 failed, 7 passed, 8 total\n"
                    "Tests:       1 failed, 52 passed, 53 total\n"
                    "Time:        9.81 s\n",
                    1,
                    [E],
                    group="jest-timeout-upload",
                ),
                run(
                    "npx jest src/api",
                    "PASS src/api/upload.test.ts\n"
                    "Test Suites: 8 passed, 8 total\nTests:       53 passed, 53 total\n"
                    "Time:        4.02 s\n",
                    0,
                    [S],
                ),
                note("Flaky: passed on rerun; filed WEB-812 and moving on to the dashboard.", []),
            ],
            quiet=60,
        ),
        session(
            "rspec-fixed",
            ["rspec", "ruby", "resolved"],
            [path("rspec-order-vat", "resolved", fix="order.rb")],
            [
                run(
                    "bundle exec rspec spec/models/order_spec.rb",
                    RSPEC_FAIL.format(seed=41213, line=14, ms=21, at=11),
                    1,
                    [E],
                    group="rspec-order-vat",
                ),
                edit("app/models/order.rb", "total adds vat_amount, not vat_rate", [A]),
                run("bundle exec rspec spec/models/order_spec.rb", rspec_ok(12, 5071), 0, [S]),
                run("bundle exec rspec", rspec_ok(148, 20931, 88), 0, [S]),
                run("bundle exec rspec", rspec_ok(148, 1182, 91), 0, RES),
            ],
        ),
        session(
            "rspec-revert",
            ["rspec", "ruby", "git", "revert", "resolved"],
            [path("rspec-order-vat", "resolved", fix="git revert")],
            [
                run(
                    "git pull",
                    "Updating 3e1f2a0..9b8c7d6\nFast-forward\n app/models/order.rb | 4 ++--",
                    0,
                    [],
                ),
                run(
                    "bin/rspec",
                    RSPEC_FAIL.format(seed=60302, line=15, ms=24, at=12),
                    1,
                    [E],
                    group="rspec-order-vat",
                ),
                run(
                    "git log --oneline -2 -- app/models/order.rb",
                    "9b8c7d6 order: round totals\n3e1f2a0 order: vat",
                    0,
                    [A],
                ),
                run(
                    "git revert --no-edit 9b8c7d6",
                    '[main 0aa1b2c] Revert "order: round totals"',
                    0,
                    [R],
                ),
                run("bin/rspec", rspec_ok(148, 771, 90), 0, [S]),
                run("bin/rspec", rspec_ok(148, 30418, 87), 0, [S]),
                run("bin/rspec", rspec_ok(148, 9001, 92), 0, RES),
            ],
        ),
        session(
            "rails-migration-duplicate-column",
            ["rails", "migration", "database", "discovery", "resolved"],
            [path("pg-duplicate-column", "resolved", fix="add_archived_at")],
            [
                run(
                    "bin/rails db:migrate",
                    "== 20261126101500 AddArchivedAtToProjects: migrating ==========================\n"
                    "-- add_column(:projects, :archived_at, :datetime)\n"
                    "bin/rails aborted!\n"
                    "StandardError: An error has occurred, this and all later migrations canceled: (StandardError)\n\n"
                    'PG::DuplicateColumn: ERROR:  column "archived_at" of relation "projects" already exists\n'
                    "/home/dev/tracker/db/migrate/20261126101500_add_archived_at_to_projects.rb:3:in `change'\n\n"
                    'Caused by:\nActiveRecord::StatementInvalid: PG::DuplicateColumn: ERROR:  column "archived_at" of relation "projects" already exists\n'
                    "Tasks: TOP => db:migrate\n(See full trace by running task with --trace)\n",
                    1,
                    [E],
                    group="pg-duplicate-column",
                ),
                run(
                    "psql tracker_dev -c '\\d projects'",
                    '                 Table "public.projects"\n'
                    "   Column    |            Type             | Nullable\n"
                    "-------------+-----------------------------+---------\n"
                    " id          | bigint                      | not null\n"
                    " name        | character varying           | not null\n"
                    " archived_at | timestamp without time zone |\n",
                    0,
                    [A],
                ),
                note(
                    "Discovery: archived_at was added by hand in the dev database last week; the migration is right, the dev schema is not.",
                    [D],
                    tags=("discovery",),
                ),
                edit(
                    "db/migrate/20261126101500_add_archived_at_to_projects.rb",
                    "add_archived_at: add_column unless column_exists?",
                    [A],
                ),
                run(
                    "bin/rails db:migrate",
                    "== 20261126101500 AddArchivedAtToProjects: migrating ==========================\n"
                    "-- column_exists?(:projects, :archived_at)\n   -> 0.0021s\n"
                    "== 20261126101500 AddArchivedAtToProjects: migrated (0.0024s) =================\n",
                    0,
                    [S],
                ),
                run("bundle exec rspec spec/models/project_spec.rb", rspec_ok(9, 4410), 0, [S]),
                run("bin/rails db:migrate", "", 0, RES),
            ],
        ),
        session(
            "alembic-undefined-table",
            ["alembic", "migration", "database", "traceback", "hypothesis", "resolved"],
            [path("alembic-undefined-table", "resolved", fix="0008")],
            [
                run(
                    "alembic upgrade head",
                    "INFO  [alembic.runtime.migration] Context impl PostgresqlImpl.\n"
                    "INFO  [alembic.runtime.migration] Will assume transactional DDL.\n"
                    "INFO  [alembic.runtime.migration] Running upgrade 0006 -> 0008, users tenant fk\n"
                    "Traceback (most recent call last):\n"
                    '  File "/home/dev/acct/.venv/lib/python3.12/site-packages/sqlalchemy/engine/base.py", line 1967, in _exec_single_context\n'
                    "    self.dialect.do_execute(\n"
                    'psycopg.errors.UndefinedTable: relation "tenants" does not exist\n\n'
                    "The above exception was the direct cause of the following exception:\n\n"
                    "Traceback (most recent call last):\n"
                    '  File "/home/dev/acct/.venv/bin/alembic", line 8, in <module>\n'
                    "    sys.exit(main())\n"
                    'sqlalchemy.exc.ProgrammingError: (psycopg.errors.UndefinedTable) relation "tenants" does not exist\n'
                    "[SQL: ALTER TABLE users ADD CONSTRAINT fk_users_tenant FOREIGN KEY(tenant_id) REFERENCES tenants (id)]\n"
                    "(Background on this error at: https://sqlalche.me/e/20/f405)\n",
                    1,
                    [E],
                    group="alembic-undefined-table",
                ),
                note(
                    "Hypothesis: 0008's down_revision skips 0007, which creates tenants.",
                    [H],
                    tags=("hypothesis",),
                ),
                run(
                    "alembic history",
                    "0007 -> 0008 (head), users tenant fk\n0006 -> 0007, tenants\n0005 -> 0006, audit log",
                    0,
                    [A],
                ),
                edit("migrations/versions/0008_users_tenant_fk.py", "down_revision = '0007'", [A]),
                run(
                    "alembic upgrade head",
                    "INFO  [alembic.runtime.migration] Running upgrade 0006 -> 0007, tenants\n"
                    "INFO  [alembic.runtime.migration] Running upgrade 0007 -> 0008, users tenant fk\n",
                    0,
                    [S],
                ),
                run(
                    "pytest -q tests/test_migrations.py",
                    "........\n8 passed in 3.12s\n",
                    0,
                    [S],
                ),
                run(
                    "pytest -q",
                    "........................................\n40 passed, 2 skipped, 1 xfailed in 9.80s\n",
                    0,
                    RES,
                ),
            ],
        ),
        session(
            "django-migration-null",
            ["django", "migration", "database", "traceback", "resolved"],
            [path("django-null-slug", "resolved", fix="0012_post_slug")],
            [
                run(
                    "python manage.py migrate",
                    "Operations to perform:\n  Apply all migrations: admin, auth, blog, contenttypes, sessions\n"
                    "Running migrations:\n  Applying blog.0012_post_slug...Traceback (most recent call last):\n"
                    '  File "/home/dev/site/.venv/lib/python3.11/site-packages/django/db/backends/utils.py", line 105, in _execute\n'
                    "    return self.cursor.execute(sql, params)\n"
                    'psycopg2.errors.NotNullViolation: column "slug" of relation "blog_post" contains null values\n\n'
                    "The above exception was the direct cause of the following exception:\n\n"
                    'django.db.utils.IntegrityError: column "slug" of relation "blog_post" contains null values\n',
                    1,
                    [E],
                    group="django-null-slug",
                ),
                edit(
                    "blog/migrations/0012_post_slug.py",
                    "0012_post_slug: add the column nullable, RunPython to fill slugs, then NOT NULL",
                    [A],
                ),
                run(
                    "python manage.py migrate",
                    "Operations to perform:\n  Apply all migrations: admin, auth, blog, contenttypes, sessions\n"
                    "Running migrations:\n  Applying blog.0012_post_slug... OK\n",
                    0,
                    [S],
                ),
                # Django's test runner prints "Ran N tests ... OK", not "N passed".
                run(
                    "python manage.py test blog",
                    "Found 23 test(s).\nCreating test database for alias 'default'...\n"
                    "System check identified no issues (0 silenced).\n.......................\n"
                    "----------------------------------------------------------------------\n"
                    "Ran 23 tests in 0.412s\n\nOK\nDestroying test database for alias 'default'...\n",
                    0,
                    [S],
                ),
                run(
                    "python manage.py migrate",
                    "Operations to perform:\n  Apply all migrations: admin, auth, blog, contenttypes, sessions\n"
                    "Running migrations:\n  No migrations to apply.\n",
                    0,
                    RES,
                ),
            ],
        ),
        session(
            "gradle-junit-fixed",
            ["gradle", "junit", "java", "resolved"],
            [path("junit-vat", "resolved", fix="InvoiceService.java")],
            [
                run(
                    "./gradlew test", GRADLE_FAIL.format(line=197, sec=7), 1, [E], group="junit-vat"
                ),
                call(
                    "read_file",
                    "read InvoiceService.java",
                    [A],
                    path="app/src/main/java/com/acme/billing/InvoiceService.java",
                ),
                edit(
                    "app/src/main/java/com/acme/billing/InvoiceService.java",
                    "VAT rate is a percentage: multiply by rate / 100",
                    [A],
                ),
                run("./gradlew test", GRADLE_OK.format(sec=6), 0, [S]),
                run("./gradlew test --rerun-tasks", GRADLE_OK.format(sec=11), 0, [S]),
                run("./gradlew build", GRADLE_OK.format(sec=14), 0, RES),
            ],
        ),
        session(
            "gradle-junit-recurring-active",
            ["gradle", "junit", "java", "recurring", "active"],
            [path("junit-vat", "active")],
            [
                run(
                    "./gradlew :app:test",
                    GRADLE_FAIL.format(line=182, sec=9),
                    1,
                    [E],
                    group="junit-vat",
                ),
                edit(
                    "app/src/main/java/com/acme/billing/InvoiceService.java",
                    "divide the rate by 100",
                    [A],
                ),
                run("./gradlew :app:test", GRADLE_OK.format(sec=8), 0, [S]),
            ],
        ),
        session(
            "maven-npe-stacktrace",
            ["java", "maven", "stacktrace", "resolved"],
            [path("java-npe-name", "resolved", fix="Main.java")],
            [
                run(
                    "java -jar target/importer-1.2.0.jar customers.csv",
                    'Exception in thread "main" java.lang.NullPointerException: Cannot invoke "String.trim()" because "name" is null\n'
                    "\tat com.acme.importer.Main.parseRow(Main.java:41)\n"
                    "\tat com.acme.importer.Main.lambda$main$0(Main.java:18)\n"
                    "\tat java.base/java.util.stream.ReferencePipeline$3$1.accept(ReferencePipeline.java:197)\n"
                    "\tat com.acme.importer.Main.main(Main.java:19)\n",
                    1,
                    [E],
                    group="java-npe-name",
                ),
                edit(
                    "src/main/java/com/acme/importer/Main.java",
                    "parseRow skips rows with an empty name column",
                    [A],
                ),
                run(
                    "mvn -q -DskipTests package",
                    "",
                    0,
                    [A],
                    title="rebuild the jar",
                ),
                run(
                    "java -jar target/importer-1.2.0.jar customers.csv",
                    "imported 118 customers (2 skipped: no name)",
                    0,
                    [S],
                ),
                run(
                    "mvn -q test",
                    "[INFO] Tests run: 31, Failures: 0, Errors: 0, Skipped: 0\n",
                    0,
                    [S],
                ),
                run(
                    "java -jar target/importer-1.2.0.jar customers-2026-10.csv",
                    "imported 96 customers",
                    0,
                    RES,
                ),
            ],
        ),
        session(
            "docker-build-pin",
            ["docker", "build", "resolved"],
            [path("docker-pip-no-version", "resolved", fix="requirements.txt")],
            [
                run(
                    "docker build -t api .",
                    DOCKER_PIP_FAIL.format(n=8, ms=114),
                    1,
                    [E],
                    group="docker-pip-no-version",
                ),
                edit("requirements.txt", "psycopg2-binary==2.9.10", [A]),
                run(
                    "docker build -t api .",
                    DOCKER_OK.format(sha="5d1e0f3a9c2b", ms=42),
                    0,
                    [S],
                ),
                run(
                    "docker run --rm api pytest -q",
                    "...............................\n31 passed in 2.77s\n",
                    0,
                    [S],
                ),
                run(
                    "docker build -t api .",
                    DOCKER_OK.format(sha="5d1e0f3a9c2b", ms=12),
                    0,
                    RES,
                ),
            ],
        ),
        session(
            "docker-build-recurring-abandoned",
            ["docker", "build", "recurring", "abandoned"],
            [path("docker-pip-no-version", "abandoned")],
            [
                run(
                    "docker buildx build --platform linux/amd64 -t registry.acme.test/api:9f3c .",
                    DOCKER_PIP_FAIL.format(n=12, ms=873),
                    1,
                    [E],
                    group="docker-pip-no-version",
                ),
                run(
                    "pip index versions psycopg2-binary",
                    "psycopg2-binary (2.9.10)\nAvailable versions: 2.9.10, 2.9.9, 2.9.8",
                    0,
                    [A],
                ),
            ],
            quiet=45,
        ),
        session(
            "terraform-undeclared-then-pivot",
            ["terraform", "pivot", "judgement", "resolved"],
            [path("tf-undeclared-var", "resolved", fix="terraform.tfvars")],
            [
                run(
                    "terraform plan",
                    TF_UNDECLARED.format(line=14),
                    1,
                    [E],
                    group="tf-undeclared-var",
                ),
                edit("variables.tf", 'variable "log_bucket_name" { type = string }', [A]),
                run(
                    "terraform plan",
                    "╷\n│ Error: No value for required variable\n│\n"
                    '│   on variables.tf line 1:\n│    1: variable "log_bucket_name" {\n│\n'
                    '│ The root module input variable "log_bucket_name" is not set, and has no\n'
                    "│ default value. Use a -var or -var-file command line argument to provide a\n"
                    "│ value for this variable.\n╵\n",
                    1,
                    [P],
                    group="tf-no-value",
                ),
                edit("terraform.tfvars", 'log_bucket_name = "acme-prod-logs"', [A]),
                run(
                    "terraform plan",
                    "aws_s3_bucket.logs: Refreshing state... [id=acme-prod-logs-old]\n\n"
                    "Terraform will perform the following actions:\n\n"
                    '  # aws_s3_bucket.logs must be replaced\n-/+ resource "aws_s3_bucket" "logs" {\n'
                    '      ~ bucket = "acme-prod-logs-old" -> "acme-prod-logs" # forces replacement\n    }\n\n'
                    "Plan: 1 to add, 0 to change, 1 to destroy.\n",
                    0,
                    [S],
                ),
                # validate never failed, but a developer counts it as checking the fix.
                run("terraform validate", "Success! The configuration is valid.\n", 0, [S]),
                run(
                    "terraform plan -out tf.plan",
                    "Plan: 1 to add, 0 to change, 1 to destroy.\n\nSaved the plan to: tf.plan\n",
                    0,
                    RES,
                ),
            ],
        ),
        session(
            "terraform-recurring-abandoned",
            ["terraform", "recurring", "abandoned"],
            [path("tf-undeclared-var", "abandoned")],
            [
                run(
                    "terraform -chdir=envs/staging plan",
                    TF_UNDECLARED.format(line=22),
                    1,
                    [E],
                    group="tf-undeclared-var",
                ),
                note(
                    "Hypothesis: staging has its own variables.tf and never got log_bucket_name.",
                    [H],
                    tags=("debug:hypothesis",),
                ),
            ],
            quiet=200,
        ),
        session(
            "segfault-gdb",
            ["c", "segfault", "discovery", "resolved"],
            [path("segv-imgconv", "resolved", fix="decode.c")],
            [
                run("./build/imgconv in.png out.webp", SEGV, 139, [E], group="segv-imgconv"),
                run(
                    "gdb -batch -ex run -ex bt --args ./build/imgconv in.png out.webp",
                    "Program received signal SIGSEGV, Segmentation fault.\n"
                    "0x0000555555555a3c in decode_row (png=0x0, row=0) at src/decode.c:88\n"
                    "88\t    memcpy(out, png->rows[row], png->stride);\n"
                    "#0  0x0000555555555a3c in decode_row (png=0x0, row=0) at src/decode.c:88\n"
                    "#1  0x0000555555555c10 in main (argc=3, argv=0x7fffffffe3a8) at src/main.c:31\n",
                    0,
                    [A],
                    title="backtrace under gdb",
                ),
                # "debug:discovery" rather than "discovery": a variant an agent may well use.
                note(
                    "Found it: png is NULL because png_open returns NULL when fopen fails, and main never checks.",
                    [D],
                    tags=("debug:discovery",),
                ),
                edit("src/decode.c", "png_open failure is reported and main exits 2", [A]),
                run(
                    "make",
                    "cc -O2 -g -Wall -c src/decode.c -o build/decode.o\ncc -o build/imgconv build/main.o build/decode.o -lpng -lwebp",
                    0,
                    [A],
                ),
                run("./build/imgconv in.png out.webp", "wrote out.webp (48213 bytes)\n", 0, [S]),
                run(
                    "./build/imgconv photo.png photo.webp",
                    "wrote photo.webp (210877 bytes)\n",
                    0,
                    [S],
                ),
                run("make test", "./build/run_tests\nAll 14 tests passed\n", 0, RES),
            ],
        ),
        session(
            "segfault-other-program-active",
            ["c", "segfault", "judgement", "active"],
            [path("segv-ringbuf", "active")],
            [
                run("./bin/ringbuf_bench 1000000", SEGV, 139, [E], group="segv-ringbuf"),
                # valgrind reports errors but exits 0: the same crash investigated, an attempt.
                run(
                    "valgrind ./bin/ringbuf_bench 1000",
                    "==40213== Invalid write of size 8\n"
                    "==40213==    at 0x1091C4: rb_push (ringbuf.c:23)\n"
                    "==40213==  Address 0x4a8d0c0 is 0 bytes after a block of size 64 alloc'd\n"
                    "==40213== ERROR SUMMARY: 3 errors from 1 contexts (suppressed: 0 from 0)\n",
                    0,
                    [A],
                    title="valgrind the benchmark",
                ),
            ],
        ),
        session(
            "make-implicit-declaration",
            ["c", "make", "resolved"],
            [path("gcc-implicit-close", "resolved", fix="net.c")],
            [
                run(
                    "make",
                    "gcc -Wall -Werror -O2 -c -o obj/net.o src/net.c\n"
                    "src/net.c: In function 'open_socket':\n"
                    "src/net.c:57:5: error: implicit declaration of function 'close'; did you mean 'pclose'? [-Werror=implicit-function-declaration]\n"
                    "   57 |     close(fd);\n      |     ^~~~~\n      |     pclose\n"
                    "cc1: all warnings being treated as errors\n"
                    "make: *** [Makefile:23: obj/net.o] Error 1\n",
                    2,
                    [E],
                    group="gcc-implicit-close",
                ),
                edit("src/net.c", "#include <unistd.h>", [A]),
                run(
                    "make",
                    "gcc -Wall -Werror -O2 -c -o obj/net.o src/net.c\ngcc -o bin/relay obj/main.o obj/net.o",
                    0,
                    [S],
                ),
                run("make check", "./tests/run.sh\nPASS: 9  FAIL: 0\n", 0, [S]),
                run(
                    "make clean all",
                    "rm -rf obj bin\ngcc -Wall -Werror -O2 -c -o obj/main.o src/main.c\ngcc -Wall -Werror -O2 -c -o obj/net.o src/net.c\ngcc -o bin/relay obj/main.o obj/net.o",
                    0,
                    RES,
                ),
            ],
        ),
        session(
            "make-linker-libm",
            ["c", "make", "linker", "resolved"],
            [path("ld-undefined-sqrt", "resolved", fix="Makefile")],
            [
                run(
                    "make",
                    "cc -o bin/calc obj/main.o obj/parse.o\n"
                    "/usr/bin/ld: obj/main.o: in function `main':\n"
                    "main.c:(.text+0x4e): undefined reference to `sqrt'\n"
                    "collect2: error: ld returned 1 exit status\n"
                    "make: *** [Makefile:12: bin/calc] Error 1\n",
                    2,
                    [E],
                    group="ld-undefined-sqrt",
                ),
                edit("Makefile", "LDLIBS += -lm", [A]),
                run("make", "cc -o bin/calc obj/main.o obj/parse.o -lm", 0, [S]),
                run("./bin/calc 'sqrt(2)'", "1.4142135624\n", 0, [S]),
                run("./bin/calc 'sqrt(16) + 1'", "5\n", 0, RES),
            ],
        ),
        session(
            "eslint-unused",
            ["eslint", "npm", "resolved"],
            [path("eslint-no-unused", "resolved", fix="session.ts")],
            [
                run(
                    "npx eslint src",
                    "\n/home/dev/web/src/auth/session.ts\n"
                    "  12:7  error  'user' is assigned a value but never used  @typescript-eslint/no-unused-vars\n"
                    "  31:3  error  Unexpected console statement                no-console\n\n"
                    "✖ 2 problems (2 errors, 0 warnings)\n",
                    1,
                    [E],
                    group="eslint-no-unused",
                ),
                edit("src/auth/session.ts", "drop the unused user and the console.log", [A]),
                run("npx eslint src", "", 0, [S]),
                run(
                    "npm test",
                    "PASS src/auth/session.test.ts\nTest Suites: 9 passed, 9 total\n"
                    "Tests:       61 passed, 61 total\nTime:        5.1 s\n",
                    0,
                    [S],
                ),
                run("npm run lint", "\n> web@0.3.0 lint\n> eslint src\n\n", 0, RES),
            ],
        ),
        session(
            "tsc-then-eslint-pivot",
            ["typescript", "eslint", "pivot", "resolved"],
            [path("ts2339-role", "resolved", fix="guard.ts")],
            [
                run(
                    "npx tsc --noEmit",
                    "src/auth/guard.ts:19:22 - error TS2339: Property 'role' does not exist on type 'Session'.\n\n"
                    "19   if (session.user.role !== 'admin') {\n                        ~~~~\n\n"
                    "Found 1 error in src/auth/guard.ts:19\n",
                    2,
                    [E],
                    group="ts2339-role",
                ),
                edit("src/auth/guard.ts", "read the role from session.claims as any", [A]),
                run("npx tsc --noEmit", "", 0, [S]),
                run(
                    "npx eslint src/auth",
                    "\n/home/dev/web/src/auth/guard.ts\n"
                    "  19:30  error  Unexpected any. Specify a different type  @typescript-eslint/no-explicit-any\n\n"
                    "✖ 1 problem (1 error, 0 warnings)\n",
                    1,
                    [P],
                    group="eslint-no-explicit-any",
                ),
                edit("src/auth/guard.ts", "type the claims as { role?: Role }", [A]),
                run("npx eslint src/auth", "", 0, [S]),
                run("npx tsc --noEmit", "", 0, [S]),
                run("npx eslint src/auth", "", 0, RES),
            ],
        ),
        session(
            "webpack-then-ts-pivot",
            ["npm", "webpack", "typescript", "pivot", "resolved"],
            [path("webpack-cant-resolve", "resolved", fix="Header.tsx")],
            [
                run(
                    "npm run build",
                    "\n> dash@1.4.0 build\n> webpack --mode production\n\n"
                    "ERROR in ./src/pages/Overview.tsx 4:0-30\n"
                    "Module not found: Error: Can't resolve './Chart' in '/home/dev/dash/src/pages'\n"
                    "resolve './Chart' in '/home/dev/dash/src/pages'\n\n"
                    "webpack 5.96.1 compiled with 1 error in 4213 ms\n",
                    1,
                    [E],
                    group="webpack-cant-resolve",
                ),
                edit("src/pages/Overview.tsx", "import Chart from '../components/Chart'", [A]),
                run(
                    "npm run build",
                    "\n> dash@1.4.0 build\n> webpack --mode production\n\n"
                    "ERROR in /home/dev/dash/src/components/Header.tsx\n"
                    "./src/components/Header.tsx 14:9-14\n"
                    "[tsl] ERROR in /home/dev/dash/src/components/Header.tsx(14,10)\n"
                    "      TS2322: Type 'string | undefined' is not assignable to type 'string'.\n"
                    "  Type 'undefined' is not assignable to type 'string'.\n\n"
                    "webpack 5.96.1 compiled with 1 error in 4388 ms\n",
                    1,
                    [P],
                    group="ts2322-title",
                ),
                edit("src/components/Header.tsx", "title ?? 'Dashboard'", [A]),
                run(
                    "npm run build",
                    "\n> dash@1.4.0 build\n> webpack --mode production\n\n"
                    "asset main.3f9a1c.js 412 KiB [emitted] [immutable] [minimized] (name: main)\n"
                    "webpack 5.96.1 compiled successfully in 5120 ms\n",
                    0,
                    [S],
                ),
                run(
                    "npm test",
                    "Test Suites: 11 passed, 11 total\nTests:       52 passed, 52 total\nTime:        6.3 s\n",
                    0,
                    [S],
                ),
                run(
                    "npm run build",
                    "\n> dash@1.4.0 build\n> webpack --mode production\n\n"
                    "webpack 5.96.1 compiled successfully in 4975 ms\n",
                    0,
                    RES,
                ),
            ],
        ),
        session(
            "interleaved-errors",
            ["go", "pivot", "interleaved", "resolved"],
            [path("go-parse-duration", "resolved", fix="duration.go")],
            [
                run(
                    "go test ./...",
                    GO_FAIL.format(line=27, ms="015"),
                    1,
                    [E],
                    group="go-parse-duration",
                ),
                edit("internal/timeutil/duration.go", "add a units table with d = 24h", [A]),
                run(
                    "go test ./...",
                    "# github.com/acme/sched/internal/timeutil\n"
                    'internal/timeutil/duration.go:18:2: "strings" imported and not used\n'
                    "FAIL\tgithub.com/acme/sched/internal/timeutil [build failed]\nFAIL\n",
                    1,
                    [P],
                    group="go-unused-import",
                ),
                edit("internal/timeutil/duration.go", "drop the strings import", [A]),
                # The first error again, seen before on this path: a failure, not a new pivot.
                run(
                    "go test ./...",
                    GO_FAIL.format(line=27, ms="013"),
                    1,
                    [F],
                    group="go-parse-duration",
                ),
                edit("internal/timeutil/duration.go", "multiply by the unit, not add", [A]),
                run("go test ./...", GO_OK.format(ms="012"), 0, [S]),
                run("go test ./...", GO_OK.format(ms="010"), 0, [S]),
                run("go test ./...", GO_OK.format(ms="011"), 0, RES),
            ],
        ),
        session(
            "kubectl-yaml-then-crashloop",
            ["kubectl", "yaml", "pivot", "judgement", "resolved"],
            [path("k8s-yaml-mapping", "resolved", fix="deploy.yaml")],
            [
                run(
                    "kubectl apply -f k8s/deploy.yaml",
                    "error: error parsing k8s/deploy.yaml: error converting YAML to JSON: yaml: line 23: mapping values are not allowed in this context\n",
                    1,
                    [E],
                    group="k8s-yaml-mapping",
                ),
                edit("k8s/deploy.yaml", "indent env under the container", [A]),
                run("kubectl apply -f k8s/deploy.yaml", "deployment.apps/api configured\n", 0, [S]),
                # The deploy applied, but the pods crash: a second problem while the path is open.
                run(
                    "kubectl rollout status deployment/api --timeout=60s",
                    'Waiting for deployment "api" rollout to finish: 1 of 3 updated replicas are available...\n'
                    "error: timed out waiting for the condition\n",
                    1,
                    [P],
                    group="k8s-rollout-timeout",
                ),
                run(
                    "kubectl logs deploy/api --tail=5",
                    "Error: connect ECONNREFUSED 10.0.3.7:5432\n    at TCPConnectWrap.afterConnect [as oncomplete] (node:net:1555:16)\n",
                    0,
                    [A],
                    title="read the api logs",
                ),
                note(
                    "Discovery: DATABASE_URL still points at the old db service IP; the new env block dropped the service name.",
                    [D],
                    tags=("discovery",),
                ),
                edit("k8s/deploy.yaml", "DATABASE_URL uses db.acme.svc", [A]),
                run("kubectl apply -f k8s/deploy.yaml", "deployment.apps/api configured\n", 0, [S]),
                run(
                    "kubectl rollout status deployment/api --timeout=60s",
                    'deployment "api" successfully rolled out\n',
                    0,
                    [S],
                ),
                # The health check never failed here; a developer counts it as the proof.
                run(
                    "curl -s https://api.acme.test/health",
                    '{"status":"ok","db":"ok"}',
                    0,
                    RES,
                ),
            ],
        ),
        session(
            "curl-timeout-restart",
            ["curl", "timeout", "discovery", "resolved"],
            [path("curl-timeout-health", "resolved", fix="rollout restart")],
            [
                run(
                    "curl -sS --max-time 10 https://api.internal.test/health",
                    "curl: (28) Operation timed out after 10001 milliseconds with 0 bytes received\n",
                    28,
                    [E],
                    group="curl-timeout-health",
                ),
                run(
                    "kubectl get pods -n api",
                    "NAME                   READY   STATUS    RESTARTS   AGE\n"
                    "api-6d5f8c7b9-2xk4q    0/1     Running   0          3d2h\n"
                    "api-6d5f8c7b9-h7m2z    0/1     Running   0          3d2h\n",
                    0,
                    [A],
                ),
                note(
                    "Discovery: both pods are Running but not Ready since the node pool upgrade; readiness waits on a cache warm-up that never finishes.",
                    [D],
                    tags=("discovery",),
                ),
                run(
                    "kubectl rollout restart deployment/api -n api",
                    "deployment.apps/api restarted\n",
                    0,
                    [A],
                ),
                run(
                    "curl -sS --max-time 10 https://api.internal.test/health",
                    '{"status":"ok"}',
                    0,
                    [S],
                ),
                run(
                    "curl -sS --max-time 10 https://api.internal.test/health",
                    '{"status":"ok"}',
                    0,
                    [S],
                ),
                run(
                    "curl -sS --max-time 10 https://api.internal.test/health",
                    '{"status":"ok"}',
                    0,
                    RES,
                ),
            ],
        ),
        session(
            "node-econnrefused-active",
            ["node", "unhandled-rejection", "active"],
            [path("node-econnrefused-redis", "active")],
            [
                run(
                    "node scripts/seed.js",
                    "node:internal/process/promises:289\n"
                    "            triggerUncaughtException(err, true /* fromPromise */);\n"
                    "            ^\n\n"
                    "Error: connect ECONNREFUSED 127.0.0.1:6379\n"
                    "    at TCPConnectWrap.afterConnect [as oncomplete] (node:net:1555:16) {\n"
                    "  errno: -111,\n  code: 'ECONNREFUSED',\n  syscall: 'connect',\n"
                    "  address: '127.0.0.1',\n  port: 6379\n}\n\nNode.js v20.11.1\n",
                    1,
                    [E],
                    group="node-econnrefused-redis",
                ),
                run("docker compose up -d redis", " ✔ Container web-redis-1  Started", 0, [A]),
                run("node scripts/seed.js", "seeded 200 users, 14 teams\n", 0, [S]),
                run("node scripts/seed.js --reset", "reset; seeded 200 users, 14 teams\n", 0, [S]),
            ],
        ),
        session(
            "pip-editable-build-error",
            ["pip", "python", "resolved"],
            [path("pip-setuptools-scm", "resolved", fix="setuptools_scm")],
            [
                run(
                    "pip install -e .",
                    "Obtaining file:///home/dev/shop\n"
                    "  Installing build dependencies ... done\n"
                    "  Checking if build backend supports build_editable ... done\n"
                    "  Getting requirements to build editable ... error\n"
                    "  error: subprocess-exited-with-error\n\n"
                    "  × Getting requirements to build editable did not run successfully.\n"
                    "  │ exit code: 1\n"
                    "  ╰─> [3 lines of output]\n"
                    "      ModuleNotFoundError: No module named 'setuptools_scm'\n"
                    "      [end of output]\n\n"
                    "  note: This error originates from a subprocess, and is likely not a problem with pip.\n"
                    "error: subprocess-exited-with-error\n",
                    1,
                    [E],
                    group="pip-setuptools-scm",
                ),
                edit("pyproject.toml", "build-system requires setuptools_scm>=8", [A]),
                run("pip install -e .", "Successfully installed shop-0.4.1.dev3", 0, [S]),
                run(
                    "pytest -q", "..................................\n34 passed in 1.02s\n", 0, [S]
                ),
                run("pip install -e '.[dev]'", "Successfully installed shop-0.4.1.dev3", 0, RES),
            ],
        ),
        session(
            "logged-error-exit-zero",
            ["python", "exit-zero", "judgement", "resolved"],
            [path("etl-invalid-date", "resolved", fix="load.py")],
            [
                # The script logs an ERROR and carries on with exit 0: a developer calls it an
                # error all the same (a row was lost).
                run(
                    "python -m etl.run --file exports/2026-11.csv",
                    "2026-11-26 10:02:11,481 INFO etl.load: 1000 rows read\n"
                    "2026-11-26 10:02:11,502 ERROR etl.load: row 17: invalid date '31/02/2026'\n"
                    "2026-11-26 10:02:11,733 INFO etl.load: loaded 999 of 1000 rows\n",
                    0,
                    [E],
                    group="etl-invalid-date",
                ),
                edit(
                    "etl/load.py",
                    "rows with an impossible date go to rejects.csv with the reason",
                    [A],
                ),
                run(
                    "python -m etl.run --file exports/2026-11.csv",
                    "2026-11-26 10:09:40,112 INFO etl.load: 1000 rows read\n"
                    "2026-11-26 10:09:40,388 INFO etl.load: loaded 999 of 1000 rows, 1 rejected (rejects.csv)\n",
                    0,
                    [S],
                ),
                run("pytest -q tests/test_load.py", ".......\n7 passed in 0.41s\n", 0, [S]),
                run(
                    "python -m etl.run --file exports/2026-10.csv",
                    "2026-11-26 10:11:02,950 INFO etl.load: 1213 rows read\n"
                    "2026-11-26 10:11:03,301 INFO etl.load: loaded 1213 of 1213 rows\n",
                    0,
                    RES,
                ),
            ],
        ),
        session(
            "http-tool-status-error",
            ["mcp-tool", "status", "http-502", "resolved"],
            [path("http-tool-502", "resolved")],
            [
                respond(
                    "http_request",
                    "error",
                    "502 Bad Gateway\n<html><head><title>502 Bad Gateway</title></head><body><center><h1>502 Bad Gateway</h1></center><hr><center>nginx/1.25.3</center></body></html>",
                    [E],
                    group="http-tool-502",
                    status_code=502,
                    url="https://staging.acme.test/api/v2/reports/rep_77af01",
                ),
                call(
                    "bash",
                    "restart the report worker",
                    [A],
                    command="systemctl restart report-worker",
                ),
                respond(
                    "http_request",
                    "ok",
                    '{"id":"rep_77af01","state":"ready","rows":1840}',
                    [S],
                    status_code=200,
                    url="https://staging.acme.test/api/v2/reports/rep_77af01",
                ),
                respond(
                    "http_request",
                    "ok",
                    '{"id":"rep_90bc12","state":"ready","rows":22}',
                    [S],
                    status_code=200,
                    url="https://staging.acme.test/api/v2/reports/rep_90bc12",
                ),
                respond(
                    "http_request",
                    "ok",
                    '{"items":[{"id":"rep_77af01"},{"id":"rep_90bc12"}]}',
                    RES,
                    status_code=200,
                    url="https://staging.acme.test/api/v2/reports",
                ),
            ],
        ),
        session(
            "sql-tool-undefined-column",
            ["mcp-tool", "status", "database", "resolved"],
            [path("sql-undefined-column", "resolved")],
            [
                respond(
                    "sql_query",
                    "error",
                    'ERROR:  column "createdat" does not exist\n'
                    "LINE 1: SELECT id, createdat FROM orders WHERE customer_id = 4812\n"
                    "                   ^\n"
                    'HINT:  Perhaps you meant to reference the column "orders.created_at".',
                    [E],
                    group="sql-undefined-column",
                    title="SELECT id, createdat FROM orders",
                ),
                respond(
                    "sql_query",
                    "ok",
                    " id  |         created_at\n-----+----------------------------\n 901 | 2026-11-20 08:14:02.1+00\n(1 row)",
                    [S],
                    title="SELECT id, created_at FROM orders",
                ),
                respond(
                    "sql_query",
                    "ok",
                    " count\n-------\n    14\n(1 row)",
                    [S],
                    title="SELECT count(*) FROM orders",
                ),
                respond(
                    "sql_query",
                    "ok",
                    " id  | total\n-----+-------\n 901 | 42.50\n(1 row)",
                    RES,
                    title="SELECT id, total FROM orders",
                ),
            ],
        ),
        session(
            "unrelated-successes-then-fix",
            ["mypy", "noise", "resolved"],
            [path("mypy-arg-type", "resolved", fix="invoices.py")],
            [
                run(
                    "mypy src",
                    'src/billing/invoices.py:57: error: Argument 1 to "send" has incompatible type "str | None"; expected "str"  [arg-type]\n'
                    "Found 1 error in 1 file (checked 63 source files)\n",
                    1,
                    [E],
                    group="mypy-arg-type",
                ),
                # Successful commands that say nothing about the error: attempts, not successes.
                run("git status --short", " M src/billing/invoices.py\n", 0, [A]),
                run("ls src/billing", "__init__.py\ninvoices.py\nmailer.py\n", 0, [A]),
                run(
                    "pip show types-requests",
                    "Name: types-requests\nVersion: 2.32.0.20241016\n",
                    0,
                    [A],
                ),
                edit("src/billing/invoices.py", "guard the None email before send", [A]),
                run(
                    "mypy src",
                    'src/billing/invoices.py:58: error: Argument 1 to "send" has incompatible type "str | None"; expected "str"  [arg-type]\n'
                    "Found 1 error in 1 file (checked 63 source files)\n",
                    1,
                    [F],
                    group="mypy-arg-type",
                ),
                edit(
                    "src/billing/invoices.py",
                    "narrow with `if email is None: raise MissingEmail`",
                    [A],
                ),
                run("mypy src", "Success: no issues found in 63 source files\n", 0, [S]),
                run("pytest -q tests/billing", ".............\n13 passed in 0.88s\n", 0, [S]),
                run("mypy src", "Success: no issues found in 63 source files\n", 0, RES),
            ],
        ),
        session(
            "clippy-unrelated-successes-active",
            ["cargo", "clippy", "noise", "active"],
            [path("clippy-needless-borrow", "active")],
            [
                run(
                    "cargo clippy -- -D warnings",
                    "    Checking ledger v0.4.1 (/home/dev/ledger)\n"
                    "error: the borrowed expression implements the required traits\n"
                    "  --> src/export.rs:31:24\n   |\n"
                    "31 |     write_rows(&mut out, &rows.clone())?;\n"
                    "   |                          ^^^^^^^^^^^^^ help: change this to: `rows.clone()`\n   |\n"
                    "   = help: for further information visit https://rust-lang.github.io/rust-clippy/master/index.html#needless_borrows_for_generic_args\n"
                    "   = note: `-D clippy::needless-borrows-for-generic-args` implied by `-D warnings`\n\n"
                    "error: could not compile `ledger` (lib) due to 1 previous error\n",
                    101,
                    [E],
                    group="clippy-needless-borrow",
                ),
                run("cargo fmt", "", 0, [A]),
                run(
                    "git diff --stat",
                    " src/export.rs | 2 +-\n 1 file changed, 1 insertion(+), 1 deletion(-)\n",
                    0,
                    [A],
                ),
                run(
                    "cargo doc --no-deps",
                    "   Documenting ledger v0.4.1 (/home/dev/ledger)\n    Finished `dev` profile [unoptimized + debuginfo] target(s) in 2.31s\n",
                    0,
                    [A],
                ),
            ],
        ),
        session(
            "abandoned-port-in-use",
            ["docker", "abandoned", "hypothesis", "judgement"],
            [path("docker-port-allocated", "abandoned")],
            [
                run(
                    "docker compose up -d",
                    " ✔ Network shop_default  Created\n"
                    " ✘ Container shop-db-1   Error\n"
                    "Error response from daemon: driver failed programming external connectivity on endpoint shop-db-1 (7c1d0f0e4b2a): Bind for 0.0.0.0:5432 failed: port is already allocated\n",
                    1,
                    [E],
                    group="docker-port-allocated",
                ),
                note(
                    "Hypothesis: a Homebrew postgres still listens on 5432.",
                    [H],
                    tags=("hypothesis",),
                ),
                # lsof finds nothing and exits 1: an investigating step, not a new error.
                run("lsof -i :5432", "", 1, [A], title="who listens on 5432"),
            ],
            quiet=240,
        ),
        session(
            "abandoned-then-new-error",
            ["abandoned", "two-paths", "go", "rspec"],
            [
                path("go-undefined-sqlx", "abandoned"),
                path("rspec-order-vat", "resolved", fix="order.rb"),
            ],
            [
                run(
                    "go build ./...",
                    "# github.com/acme/sched/internal/store\n"
                    "internal/store/pg.go:44:9: undefined: sqlx.In\n",
                    1,
                    [E],
                    group="go-undefined-sqlx",
                ),
                call("read_file", "read go.mod", [A], path="go.mod"),
                run(
                    "bundle exec rspec",
                    RSPEC_FAIL.format(seed=7781, line=14, ms=23, at=11),
                    1,
                    [E],
                    group="rspec-order-vat",
                    gap=95,
                ),
                edit("app/models/order.rb", "total = subtotal + vat_amount", [A]),
                run("bundle exec rspec", rspec_ok(148, 2210, 85), 0, [S]),
                run("bundle exec rspec", rspec_ok(148, 6623, 84), 0, [S]),
                run("bundle exec rspec", rspec_ok(148, 313, 86), 0, RES),
            ],
        ),
        session(
            "no-error-feature-work",
            ["no-problem", "go", "gradle", "noise"],
            [],
            [
                run("go build ./...", "", 0, []),
                run("go test ./...", GO_OK.format(ms="011"), 0, []),
                edit("internal/api/routes.go", "add GET /v1/schedules/{id}/runs", []),
                run(
                    "go test ./internal/api/",
                    "ok  \tgithub.com/acme/sched/internal/api\t0.044s\n",
                    0,
                    [],
                ),
                run("./gradlew build", GRADLE_OK.format(sec=12), 0, []),
                run("bundle exec rspec", rspec_ok(148, 4242, 83), 0, []),
                note("Runs endpoint done; next the pagination cursor.", []),
            ],
        ),
        session(
            "no-error-scary-words",
            ["no-problem", "noise", "judgement"],
            [],
            [
                # Output full of error words from a search and a changelog, all exit 0.
                run(
                    "grep -rn 'panic(' --include=*.go .",
                    './internal/store/pg.go:88:\t\tpanic("unreachable: unknown isolation level")\n'
                    "./cmd/reg/main.go:12:\t// never panic(err) here: log and exit\n",
                    0,
                    [],
                    title="find the panics",
                ),
                run(
                    "git log --oneline -4",
                    "c1d2e3f fix: Error: connection reset on large uploads\n"
                    "b2c3d4e handle HTTP 500 from the billing API with a retry\n"
                    "a3b4c5d test: FAILED login now shows the reason\n"
                    "9f8e7d6 docs: Traceback examples in the runbook\n",
                    0,
                    [],
                ),
                call("read_file", "read docs/runbook.md", [], path="docs/runbook.md"),
                run(
                    "npx vitest run --reporter=dot",
                    "·····································\n\n Test Files  12 passed (12)\n      Tests  88 passed (88)\n",
                    0,
                    [],
                ),
                # grep finding nothing exits 1; nothing is wrong.
                run("grep -c TODO src/auth/guard.ts", "0\n", 1, [], title="count the TODOs"),
            ],
        ),
        session(
            "design-notes-no-error",
            ["no-problem", "notes", "hypothesis", "discovery"],
            [],
            [
                note(
                    "Hypothesis: the report endpoint is slow because it renders PDFs inline.",
                    [],
                    tags=("hypothesis",),
                ),
                run(
                    "hyperfine 'curl -s localhost:8080/reports/77'",
                    "Benchmark 1: curl -s localhost:8080/reports/77\n"
                    "  Time (mean ± σ):     1.284 s ±  0.041 s    [User: 4.1 ms, System: 3.0 ms]\n",
                    0,
                    [],
                ),
                note(
                    "Discovery: 1.2 s of the 1.3 s is the PDF render; moving it to the worker queue.",
                    [],
                    tags=("discovery",),
                ),
                edit("reports/views.py", "enqueue the render, return 202 with a poll URL", []),
            ],
        ),
    ]


if __name__ == "__main__":
    OUT.parent.mkdir(parents=True, exist_ok=True)
    data = sessions()
    OUT.write_text(json.dumps(data, indent=1, ensure_ascii=False) + "\n")
    print(f"{len(data)} sessions, {sum(len(s['steps']) for s in data)} steps -> {OUT}")
