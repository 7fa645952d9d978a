"""Evidence recall@k of ``GET /breadcrumbs/search``, ``mode=vector`` against ``mode=hybrid``,
on the LoCoMo dev conversations: each question searches its conversation's turns (the
conversation's session tag as the filter) and counts the evidence turns in the top k.

    .venv/bin/python benchmarks/quality/search_recall.py [--k 10] [--conversations 26 30]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))

from client import CairnClient  # noqa: E402
from dataset import load_conversation  # noqa: E402
from ondemand import served_app  # noqa: E402
from tests.fixtures_path import FIXTURES  # noqa: E402

MODES = ("vector", "hybrid")


async def recall(conversations: list[str], k: int) -> dict[str, object]:
    found = {mode: 0 for mode in MODES}
    evidence = questions = 0
    async with served_app() as http:
        cairn = CairnClient(http)
        for conv_id in conversations:
            conversation = load_conversation(FIXTURES / "locomo-dev" / f"{conv_id}.json")
            tag = f"session:locomo-{conv_id}"
            ids = await cairn.post_turns(conversation.turns, tag)
            by_id = {record_id: dia_id for dia_id, record_id in ids.items()}
            for question in conversation.questions:
                questions += 1
                evidence += len(question.evidence)
                for mode in MODES:
                    params = {"q": question.text, "tag": tag, "nn": k, "mode": mode}
                    response = await http.get("/breadcrumbs/search", params=params)
                    response.raise_for_status()
                    top = {by_id.get(hit["id"]) for hit in response.json()}
                    found[mode] += len(top.intersection(question.evidence))
    return {
        "k": k, "conversations": conversations, "questions": questions,
        "evidence_turns": evidence,
        **{f"{mode}_recall": round(found[mode] / evidence, 4) for mode in MODES},
    }  # fmt: skip


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--k", type=int, default=10)
    parser.add_argument("--conversations", nargs="+", default=["26", "30", "41", "42", "43"])
    args = parser.parse_args()
    print(json.dumps(asyncio.run(recall(args.conversations, args.k)), indent=2))
