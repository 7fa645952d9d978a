"""LoCoMo contexts with blocks served from the stored ones are those rendered in place.

    .venv/bin/python benchmarks/blocks_locomo.py [--conversation 26] [--questions 12]

Posts one LoCoMo conversation's turns and agents (as ``benchmarks/quality/locomo.py`` does;
a worker in this process builds the edges and stores every turn's block) and some of its
questions, then assembles every agent's context for every question twice, with the block
cache emptied before each: once rendering every block in place (the stored blocks neither
read nor written, as before they existed) and once as the worker's assemblies do (stored
blocks read). Compares the text and the explanation; exits 1 when any differs.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import uuid
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "src"))
sys.path.insert(0, str(REPO / "benchmarks" / "quality"))

import httpx  # noqa: E402
from client import QUESTION_SCHEMA, AgentSpec, CairnClient  # noqa: E402
from dataset import load_conversation  # noqa: E402
from inprocess import leave, run, served  # noqa: E402
from runner import prepare  # noqa: E402

from cairn.context import builder as builder_module  # noqa: E402
from cairn.worker.app import run_worker  # noqa: E402

FIXTURES = REPO.parent / "shared" / "fixtures" / "locomo-dev"


async def _context(http: httpx.AsyncClient, agent: str, trigger: uuid.UUID) -> str:
    body = {"agent_id": agent, "trigger_id": str(trigger)}
    response = await http.post("/contexts/assemble", json=body)
    response.raise_for_status()
    context = response.json()["context"]
    kept = {"text": context["formatted_context"], "explain": context["explain"]}
    return json.dumps(kept, sort_keys=True, default=str)


async def compare(args: argparse.Namespace) -> int:
    conversation = load_conversation(FIXTURES / f"{args.conversation}.json")
    load_blocks, store_blocks = builder_module.load_blocks, builder_module.store_blocks
    hits: list[int] = []

    async def counted(session: Any, wanted: Any) -> Any:
        found = await load_blocks(session, wanted)
        hits.append(len(found))
        return found

    async def nothing_stored(*_: Any) -> dict[Any, Any]:
        return {}

    async with served() as (http, app):
        # The worker, in this process: it builds the edges and stores the blocks.
        stop = asyncio.Event()
        worker = asyncio.create_task(run_worker(app.state.resources.settings, stop))
        client = CairnClient(http)
        builder = app.state.resources.contexts
        loaded = await prepare(client, [conversation], args.budgets, AgentSpec(), builder.counter)
        tag = loaded.loaded[0].session_tag
        before = await client.worker_messages()
        step = max(1, len(conversation.questions) // args.questions)
        triggers = []
        for question in conversation.questions[::step][: args.questions]:
            body = {"schema_name": QUESTION_SCHEMA, "title": "Question", "tags": [tag],
                    "context": {"question": question.text}}  # fmt: skip
            triggers.append(uuid.UUID(await client.create(body)))
        await client.wait_for_worker(before + len(triggers))
        same = total = 0
        for trigger in triggers:
            for agent in loaded.agents.values():
                builder.blocks.clear()
                builder_module.load_blocks = nothing_stored  # type: ignore[assignment]
                builder_module.store_blocks = nothing_stored  # type: ignore[assignment]
                rendered = await _context(http, agent, trigger)
                builder.blocks.clear()
                builder_module.load_blocks = counted  # type: ignore[assignment]
                builder_module.store_blocks = store_blocks
                served_stored = await _context(http, agent, trigger)
                total += 1
                same += rendered == served_stored
            print(f"{trigger}: identical {same} of {total} so far", flush=True)
        stop.set()
        await asyncio.wait({worker}, timeout=30)
    print(f"LoCoMo conversation {args.conversation}: {same} of {total} contexts identical;")
    print(f"blocks read from the stored ones per assembly: {sorted(hits)[len(hits) // 2]}")
    return 0 if same == total else 1


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--conversation", default="26")
    parser.add_argument("--questions", type=int, default=12)
    parser.add_argument("--budgets", type=int, nargs="+", default=[500, 1000, 2000, 4000])
    leave(run(lambda: compare(parser.parse_args())))


if __name__ == "__main__":
    main()
