"""The LoCoMo agents' semantic seeds are those of the code before the partial-index path.

    .venv/bin/python benchmarks/seeds_locomo.py [--before ../main/src] [--conversation 26]
        [--questions 12]

Posts one LoCoMo conversation's turns (as ``benchmarks/quality/locomo.py`` does, each
embedded by the server) and some of its questions to an in-process Cairn, then runs the
LoCoMo reader's semantic source (session scope, limit 100, min_similarity 0.2) for every
question with this checkout's ``context.sources.semantic`` and with the one in ``--before``
(loaded from its file beside this checkout's other modules), with the partial-index
threshold at 1 record (the exact path is kept by the scope, not by the size), and compares
seeds and near misses: ids in order and scores. The 11-minute LoCoMo table needs no rerun
when these agree.
"""

from __future__ import annotations

import argparse
import importlib.util
import sys
import uuid
from pathlib import Path
from types import ModuleType

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "src"))
sys.path.insert(0, str(REPO / "benchmarks" / "quality"))

from client import TURN_SCHEMA, CairnClient  # noqa: E402
from dataset import load_conversation  # noqa: E402
from inprocess import leave, run, served  # noqa: E402

from cairn.context.agents import SemanticSource  # noqa: E402
from cairn.context.blacklist import excluded_schemas  # noqa: E402
from cairn.context.sources import nearest, semantic  # noqa: E402
from cairn.db.engine import tenant_session  # noqa: E402

FIXTURES = REPO.parent / "shared" / "fixtures" / "locomo-dev"
READER = SemanticSource(True, (TURN_SCHEMA,), 100, 0.2, "session")


def _module(path: Path) -> ModuleType:
    spec = importlib.util.spec_from_file_location("semantic_before", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


async def compare(args: argparse.Namespace) -> int:
    before = _module(Path(args.before) / "cairn" / "context" / "sources" / "semantic.py")
    conversation = load_conversation(FIXTURES / f"{args.conversation}.json")
    nearest.NEAR_SEARCH_ROWS = 1
    async with served() as (http, app):
        client = CairnClient(http)
        tag = f"session:locomo-{args.conversation}"
        await client.post_turns(conversation.turns, tag)
        questions = conversation.questions[:: max(1, len(conversation.questions) // args.questions)]
        triggers = []
        for question in questions[: args.questions]:
            body = {"schema_name": "locomo.question.v1", "title": "question", "tags": [tag],
                    "context": {"text": question.text}}  # fmt: skip
            triggers.append(uuid.UUID(await client.create(body)))
        resources = app.state.resources
        nearest.INDEXES.owner_url = resources.settings.system_database_url
        owner = resources.default_tenant
        excluded = excluded_schemas(None)
        same = 0
        for trigger in triggers:
            found = []
            for module in (before, semantic):
                async with tenant_session(resources.session_factory, owner) as session:
                    batch = await module.semantic_seeds(
                        session, owner, trigger, READER, [], [tag], excluded
                    )
                found.append(
                    ([(s.record_id, round(s.score, 9)) for s in batch.seeds], batch.below_threshold)
                )
            await nearest.INDEXES.wait()
            same += found[0] == found[1]
            print(f"{trigger}: {len(found[1][0])} seeds, identical: {found[0] == found[1]}")
    print(f"LoCoMo conversation {args.conversation}: {same} of {len(triggers)} triggers identical")
    return 0 if same == len(triggers) else 1


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--before", default=str(REPO.parent / "main" / "src"))
    parser.add_argument("--conversation", default="26")
    parser.add_argument("--questions", type=int, default=12)
    leave(run(lambda: compare(parser.parse_args())))


if __name__ == "__main__":
    main()
