"""Context quality on LoCoMo: evidence recall of Cairn's assembled contexts against four
baselines packed into the same token budgets.

    .venv/bin/python benchmarks/quality/locomo.py [--conversations 26 30 ...]
        [--budgets 500 1000 2000 4000] [--limit-questions N] [--question-stride N]
        [--url URL] [--no-hints]

Starts a real `cairn up` in a fresh data directory (or uses ``--url``). Every turn of each
conversation becomes a ``user.message.v1`` breadcrumb in the conversation's session; one
``agent.def.v1`` per budget is triggered by a ``locomo.question.v1`` breadcrumb in that
session (semantic sources scoped to the session). Each question is posted, every agent's
``agent.context.v1`` is read back, and the question is deleted again. A question's recall
is the share of its evidence turns whose rendered block is in ``formatted_context``
(categories 1-4). With ``--no-hints`` the turns are ``locomo.turn.v1`` records instead, a
schema with no definition (speaker, date and text in plain fields), rendered compactly: the
speaker (the title) leads one line, ``Caroline · 8 May 2023 · text``, in a run of turns
under one header as a hinted turn is. The baselines (recency, dense top-k, BM25, RRF of
dense + BM25) rank the same turns and pack them with the same blocks (one-line turns in
runs under one header), tokenizer and reserved headers. A turn counts as present by its
block or by its line in a run.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import pickle
import sys
import tempfile
import time
from dataclasses import asdict
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

import httpx  # noqa: E402
from client import PLAIN_TURN_SCHEMA, TURN_SCHEMA, AgentSpec, CairnClient  # noqa: E402
from dataset import load_conversation  # noqa: E402
from report import build_report, markdown  # noqa: E402
from runner import ask_all, prepare  # noqa: E402
from score import score  # noqa: E402
from server import cairn, source_state, write_report  # noqa: E402

from cairn.context.tokens import TokenCounter, ensure_tokenizer_files  # noqa: E402

FIXTURES = REPO.parent / "shared" / "fixtures" / "locomo-dev"
RESULTS = REPO / "benchmarks" / "results"
DEFAULT_AGENT = AgentSpec()


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--conversations", nargs="+", default=["26", "30", "41", "42", "43"])
    parser.add_argument("--budgets", type=int, nargs="+", default=[500, 1000, 2000, 4000])
    parser.add_argument("--limit-questions", type=int, default=None, help="per conversation")
    parser.add_argument(
        "--question-stride",
        type=int,
        default=1,
        help="ask every n-th question of each conversation: a quick sample of every category",
    )
    parser.add_argument("--url", help="an already running Cairn instead of a fresh one")
    parser.add_argument("--semantic-limit", type=int, default=DEFAULT_AGENT.semantic_limit)
    parser.add_argument("--min-similarity", type=float, default=DEFAULT_AGENT.min_similarity)
    parser.add_argument("--session-limit", type=int, default=DEFAULT_AGENT.session_limit)
    parser.add_argument(
        "--no-hints",
        action="store_true",
        help=f"post the turns as {PLAIN_TURN_SCHEMA} (no schema definition, no hints)",
    )
    parser.add_argument(
        "--ranking",
        type=json.loads,
        default=DEFAULT_AGENT.ranking,
        help="the agent's ranking option as JSON, e.g. '{\"mmr_lambda\": 0.7}'",
    )
    parser.add_argument("--fixtures", type=Path, default=FIXTURES)
    parser.add_argument("--out", type=Path, default=RESULTS / "locomo")
    parser.add_argument(
        "--dump", type=Path, help="also pickle the run (turns, embeddings, contexts) for analysis"
    )
    return parser.parse_args()


async def measure(url: str, args: argparse.Namespace, counter: TokenCounter) -> dict[str, Any]:
    source = source_state()  # the code the server runs: what src/ held when it started
    conversations = [load_conversation(args.fixtures / f"{c}.json") for c in args.conversations]
    schema = PLAIN_TURN_SCHEMA if args.no_hints else TURN_SCHEMA
    spec = AgentSpec(
        args.semantic_limit, args.min_similarity, args.session_limit, schema, args.ranking
    )
    limits = httpx.Limits(max_connections=32)
    async with httpx.AsyncClient(base_url=url, timeout=60, limits=limits) as http:
        client = CairnClient(http)
        run = await prepare(client, conversations, args.budgets, spec, counter)
        await ask_all(client, run, args.limit_questions, args.question_stride)
    if args.dump:
        args.dump.write_bytes(pickle.dumps(run))
    config = {
        "conversations": args.conversations,
        "turns": sum(len(c.turns) for c in conversations),
        "unresolved_evidence_ids": sum(c.unresolved_evidence for c in conversations),
        "questions_without_known_evidence": sum(c.skipped_questions for c in conversations),
        "agent": asdict(spec),
        "limit_questions": args.limit_questions,
        "question_stride": args.question_stride,
        "encoding": counter.encoding_name,
        "source": source,
        "command": " ".join(sys.argv),
    }
    return build_report(run, score(run, counter), config)


def main() -> None:
    args = parse_args()
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="cairn-locomo-tok-") as tokenizers:
        counter = TokenCounter.from_dir(ensure_tokenizer_files(Path(tokenizers)))
        with cairn(args.url, "locomo") as url:
            report = asyncio.run(measure(url, args, counter))
    report["timings"]["run_seconds"]["total"] = round(time.perf_counter() - started, 1)
    report["machine"] = {"cpus": os.cpu_count(), "python": sys.version.split()[0]}
    write_report(args.out, report, markdown(report))


if __name__ == "__main__":
    main()
