"""``cairn paths`` against the live server."""

from __future__ import annotations

import json
import uuid

from tests.test_cli_people import run


async def test_paths_start_show_resolve_and_list(live_url: str) -> None:
    session = f"session:{uuid.uuid4().hex[:8]}"
    started = await run(live_url, "paths", "start", session, "deploy script times out", "--json")
    assert started.exit_code == 0, started.output
    path_id = json.loads(started.stdout)["path"]["id"]
    active = await run(live_url, "paths", "active", session)
    assert active.exit_code == 0, active.output
    assert active.stdout.splitlines()[0] == f"{path_id}  active  {session}"
    assert "deploy script times out" in active.stdout
    resolved = await run(live_url, "paths", "resolve", path_id, "--fix", "raise the timeout")
    assert resolved.exit_code == 0, resolved.output
    assert "summary: When deploy script times out: raise the timeout." in resolved.stdout
    again = await run(live_url, "paths", "resolve", path_id)
    assert again.exit_code == 1 and "conflict (409)" in again.output
    listed = await run(live_url, "paths", "list", "--session", session, "--json")
    assert [p["status"] for p in json.loads(listed.stdout)] == ["resolved"]
    table = await run(live_url, "paths", "list", "--session", session)
    assert "1 paths" in table.stdout and "resolved" in table.stdout


async def test_paths_active_exits_1_without_one_and_abandon_keeps_the_reason(
    live_url: str,
) -> None:
    session = f"session:{uuid.uuid4().hex[:8]}"
    none = await run(live_url, "paths", "active", session)
    assert none.exit_code == 1 and "no active path" in none.stdout
    started = await run(live_url, "paths", "start", session, "flaky", "--json")
    path_id = json.loads(started.stdout)["path"]["id"]
    gone = await run(live_url, "paths", "abandon", path_id, "--reason", "not worth it", "--json")
    assert gone.exit_code == 0, gone.output
    assert json.loads(gone.stdout)["path"]["abandon_reason"] == "not worth it"
    shown = await run(live_url, "paths", "show", path_id)
    assert "abandoned: not worth it" in shown.stdout and "waypoints" in shown.stdout
    missing = await run(live_url, "paths", "show", str(uuid.uuid4()))
    assert missing.exit_code == 1 and "not_found (404)" in missing.output
