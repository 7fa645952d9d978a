"""`cairn import` against the live server: batches, the summary by line number, re-runs
that replay, standard input, and a batch refused whole split down to its bad line."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from cairn_client import AsyncClient
from tests.test_cli_people import run


def jsonl(*records: Any) -> str:
    return "".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in records)


def note(marker: str, n: int) -> dict[str, Any]:
    return {
        "schema_name": "note.v1",
        "title": f"imported {n}",
        "tags": [marker],
        "context": {"n": n},
    }


async def listed(url: str, marker: str) -> list[str]:
    async with AsyncClient(url) as client:
        return sorted(r.title for r in await client.list_breadcrumbs(tag=marker))


async def test_import_reports_created_and_failed_lines_and_a_rerun_replays(
    live_url: str, marker: str, tmp_path: Path
) -> None:
    source = tmp_path / "records.jsonl"
    source.write_text(
        jsonl(note(marker, 1), note(marker, 2), {"context": {}}, "", "{not json", note(marker, 3))
    )
    first = await run(live_url, "import", str(source), "--batch-size", "2")
    assert first.exit_code == 1, first.output
    lines = first.stdout.splitlines()
    assert lines[0] == "created 3, replayed 0, failed 2"
    assert lines[1].startswith("line 3: invalid_input (422): title")
    assert lines[2].startswith("line 5: not_json: ")
    assert await listed(live_url, marker) == ["imported 1", "imported 2", "imported 3"]
    again = await run(live_url, "import", str(source))
    assert again.stdout.splitlines()[0] == "created 0, replayed 3, failed 2"
    assert len(await listed(live_url, marker)) == 3


async def test_import_reads_standard_input_and_prints_json(live_url: str, marker: str) -> None:
    text = jsonl(note(marker, 1), {**note(marker, 2), "idempotency_key": f"{marker}-two"})
    result = await run(live_url, "import", "-", "--json", stdin=text)
    assert result.exit_code == 0, result.output
    summary = json.loads(result.stdout)
    assert summary == {"created": 2, "replayed": 0, "failed": 0, "failures": []}
    fresh = await run(live_url, "import", "-", "--json", "--fresh-keys", stdin=text)
    assert json.loads(fresh.stdout)["created"] == 1  # line 2 brings its own key
    assert len(await listed(live_url, marker)) == 3


async def test_a_batch_refused_whole_is_split_down_to_its_bad_line(
    live_url: str, marker: str, tmp_path: Path
) -> None:
    """A NUL anywhere in a request body refuses the whole request (422): the import halves
    the batch until only the line carrying it is refused."""
    records = [note(marker, n) for n in range(7)]
    records[4]["title"] = "nul \u0000 inside"
    source = tmp_path / "nul.jsonl"
    source.write_text(jsonl(*records))
    result = await run(live_url, "import", str(source), "--json")
    summary = json.loads(result.stdout)
    assert (summary["created"], summary["failed"]) == (6, 1)
    (failure,) = summary["failures"]
    assert failure["line"] == 5 and failure["status"] == 422
    assert len(await listed(live_url, marker)) == 6
