"""Domain isolation: does a query's context stay out of the domains isolated from its own?

    .venv/bin/python benchmarks/quality/isolation.py [--budgets 500 1000]
        [--split all|dev|test] [--url URL]

Starts a real `cairn up` in a fresh data directory (or uses ``--url``), posts the corpus's
``context.domains.v1`` definition and then its records (benchmarks/quality/isolation/),
waits until every record carries its ``domains`` labels, and asks each query through
``POST /contexts/query`` with an inline agent, isolation on and off, at every budget.
Reported per split (dev: the definition may be tuned on it; test: never tuned on): domain
accuracy, off-domain tokens as a share of context tokens, in-domain evidence recall,
should-contain hits and should-not-contain violations (see isolation_score).

Records cannot be back-dated over the API (``created_at`` is the server's), so a record's
age is only in its context (``observed_at``): recency decay is not measured here.

Exit status 2, and no results written, when the server lacks the domain feature.
"""

from __future__ import annotations

import argparse
import asyncio
import re
import sys
import time
import uuid
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

import httpx  # noqa: E402
from client import CairnClient  # noqa: E402
from isolation_corpus import CORPUS_DIR, Corpus, Query, load_corpus, problems  # noqa: E402
from isolation_report import build_report, markdown  # noqa: E402
from isolation_score import (  # noqa: E402
    FeatureMissing,
    QueryScore,
    score_answer,
    trigger_domain,
)
from rich.progress import Progress  # noqa: E402
from server import cairn, source_state, write_report  # noqa: E402

RESULTS = REPO / "benchmarks" / "results"
DOMAINS_SCHEMA = "context.domains.v1"
SCHEMAS = ["note.v1", "knowledge.v1", "user.message.v1"]
SEMANTIC = {"enabled": True, "schemas": SCHEMAS, "limit": 100, "min_similarity": 0.2}
FETCH_CONCURRENCY = 16
LABEL_TIMEOUT_S = 600.0
WORKER_POLL_S = 0.02
RELABEL_PENDING = re.compile(r"^cairn_domain_relabel_pending_tenants ([0-9.e+]+)$", re.M)
RELABEL_START_S = 30.0  # the relabel job looks for new definitions every few seconds


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--budgets", type=int, nargs="+", default=[500, 1000])
    parser.add_argument("--split", choices=["all", "dev", "test"], default="all")
    parser.add_argument("--url", help="an already running Cairn instead of a fresh one")
    parser.add_argument("--corpus", type=Path, default=CORPUS_DIR)
    parser.add_argument("--out", type=Path, default=RESULTS / "isolation")
    return parser.parse_args()


def inline_agent(isolate: bool) -> dict[str, Any]:
    """Semantic seeds over the corpus's schemas across all sessions, nothing else."""
    return {
        "context_sources": {"semantic": SEMANTIC | {"scope": "global"}, "session": {"limit": 0}},
        "domains": {"isolate": isolate},
    }


async def settle(client: CairnClient) -> None:
    """Until the worker is idle (earlier events handled, edges built)."""
    previous = -1.0
    while (current := await client.worker_messages()) != previous:
        previous = current
        await asyncio.sleep(1.0)


async def relabelled(http: httpx.AsyncClient) -> None:
    """Until the background relabel has taken the new definition in and let the tenant go.

    It labels the records written before the definition (the bootstrap knowledge), asking
    their nearest labelled records when the content says nothing: while the corpus is being
    posted, that vote depended on how many of its records the pass found, so the bootstrap
    records' labels (and the contexts they enter) differed by run."""
    started = time.monotonic()
    while await pending_relabels(http) == 0.0:
        if time.monotonic() - started > RELABEL_START_S:
            return  # a Cairn that relabels nothing (no record before the definition)
        await asyncio.sleep(WORKER_POLL_S * 10)
    while await pending_relabels(http) > 0.0:
        if time.monotonic() - started > LABEL_TIMEOUT_S:
            raise TimeoutError("the background relabel did not finish")
        await asyncio.sleep(1.0)


async def pending_relabels(http: httpx.AsyncClient) -> float:
    """The tenants whose labels the background relabel has still to recompute (/metrics)."""
    response = await http.get("/metrics")
    response.raise_for_status()
    found = RELABEL_PENDING.search(response.text)
    return float(found.group(1)) if found else 0.0


async def post_definition(http: httpx.AsyncClient, corpus: Corpus, run_tag: str) -> None:
    body = {
        "schema_name": DOMAINS_SCHEMA,
        "title": "Isolation benchmark domains",
        "tags": [run_tag],
        "context": corpus.domains.definition,
    }
    response = await http.post("/breadcrumbs", json=body)
    if response.status_code == 422:
        detail = response.text
        raise FeatureMissing(f"the server rejected the {DOMAINS_SCHEMA} definition: {detail}")
    response.raise_for_status()


async def ask(http: httpx.AsyncClient, text: str, isolate: bool, budget: int) -> dict[str, Any]:
    body = {"query": text, "agent": inline_agent(isolate), "budget": budget}
    response = await http.post("/contexts/query", json=body)
    if response.status_code == 422:
        raise FeatureMissing(f"the server rejected the query or its agent: {response.text}")
    response.raise_for_status()
    answer: dict[str, Any] = response.json()
    return answer


async def probe_classification(http: httpx.AsyncClient, query: Query, budget: int) -> None:
    """Before the records are posted: does the server classify a query under the definition?"""
    answer = await ask(http, query.text, True, budget)
    if trigger_domain(answer["explain"]) is None:
        raise FeatureMissing(
            "explain.signals.domain is null with domains defined: this Cairn does not classify "
            "queries under context.domains.v1"
        )


async def post_records(client: CairnClient, corpus: Corpus, run_tag: str) -> dict[str, str]:
    """key → record id. One at a time in corpus order, each once the worker has built the
    previous one's edges: a record's semantic and tag edges go to the records that exist
    when the worker handles it, so a worker running behind the posts linked records to
    later ones too, differently in every run (and the contexts the walk reaches with them)."""
    now = datetime.now(UTC)
    ids: dict[str, str] = {}
    await settle(client)
    handled = await client.worker_messages()
    with Progress() as progress:
        task = progress.add_task("posting records", total=len(corpus.records))
        for record in corpus.records:
            ids[record.key] = await client.create(record.body(now, run_tag))
            handled += 1
            await worker_done(client, handled)
            progress.advance(task)
    return ids


async def worker_done(client: CairnClient, target: float) -> None:
    """Until the worker has handled ``target`` messages in all (polled closely: once per
    record posted)."""
    deadline = time.monotonic() + LABEL_TIMEOUT_S
    while await client.worker_messages() < target:
        if time.monotonic() > deadline:
            raise TimeoutError("the worker did not catch up with the posts")
        await asyncio.sleep(WORKER_POLL_S)


async def read_labels(http: httpx.AsyncClient, ids: dict[str, str]) -> dict[str, list[str] | None]:
    """key → the record's ``domains`` as GET /breadcrumbs/{id} shows them (None: no field)."""
    slots = asyncio.Semaphore(FETCH_CONCURRENCY)

    async def read(key: str, record_id: str) -> tuple[str, list[str] | None]:
        async with slots:
            response = await http.get(f"/breadcrumbs/{record_id}")
        response.raise_for_status()
        return key, response.json().get("domains")

    return dict(await asyncio.gather(*(read(k, i) for k, i in ids.items())))


async def wait_for_labels(
    client: CairnClient, http: httpx.AsyncClient, ids: dict[str, str]
) -> dict[str, list[str]]:
    """Until every record shows its labels and two passes a second apart agree."""
    deadline = time.monotonic() + LABEL_TIMEOUT_S
    previous: dict[str, list[str] | None] = {}
    with Progress() as progress:
        task = progress.add_task("records with a label (until two reads agree)", total=len(ids))
        while time.monotonic() < deadline:
            await settle(client)
            labels = await read_labels(http, ids)
            if all(v is None for v in labels.values()):
                raise FeatureMissing(
                    "GET /breadcrumbs/{id} has no `domains` field: this Cairn does not label "
                    "records with domains"
                )
            progress.update(task, completed=sum(bool(v) for v in labels.values()))
            if labels == previous and all(v is not None for v in labels.values()):
                return {k: list(v or []) for k, v in labels.items()}
            previous = labels
            await asyncio.sleep(1.0)
    raise TimeoutError("the records' domain labels did not settle")


async def ask_all(
    http: httpx.AsyncClient,
    corpus: Corpus,
    queries: tuple[Query, ...],
    budgets: list[int],
    keys_by_id: dict[str, str],
) -> list[QueryScore]:
    """Every query, isolation on and off, at every budget; one at a time."""
    scores: list[QueryScore] = []
    runs = [(q, isolate, b) for q in queries for isolate in (True, False) for b in budgets]
    with Progress() as progress:
        task = progress.add_task("queries", total=len(runs))
        for query, isolate, budget in runs:
            answer = await ask(http, query.text, isolate, budget)
            score = score_answer(
                query,
                answer,
                isolate=isolate,
                budget=budget,
                corpus=corpus,
                keys_by_id=keys_by_id,
            )
            scores.append(score)
            progress.advance(task)
    return scores


async def measure(url: str, args: argparse.Namespace, corpus: Corpus) -> dict[str, Any]:
    run_tag = f"isobench:{uuid.uuid4().hex[:8]}"
    queries = corpus.split(args.split)
    seconds: dict[str, float] = {}
    async with httpx.AsyncClient(base_url=url, timeout=60) as http:
        client = CairnClient(http)
        await settle(client)
        started = time.perf_counter()
        await post_definition(http, corpus, run_tag)
        await relabelled(http)
        await probe_classification(http, queries[0], args.budgets[0])
        ids = await post_records(client, corpus, run_tag)
        seconds["post_records"] = time.perf_counter() - started
        labels = await wait_for_labels(client, http, ids)
        seconds["labels_settled"] = time.perf_counter() - started
        keys_by_id = {record_id: key for key, record_id in ids.items()}
        scores = await ask_all(http, corpus, queries, args.budgets, keys_by_id)
        seconds["queries"] = time.perf_counter() - started - seconds["labels_settled"]
    config = {
        "records": len(corpus.records),
        "queries": len(queries),
        "split": args.split,
        "budgets": args.budgets,
        "agent": inline_agent(True),
        "min_confidence": corpus.domains.definition.get("min_confidence"),
        "source": source_state(),
        "command": " ".join(sys.argv),
    }
    splits = ["dev", "test"] if args.split == "all" else [args.split]
    report = build_report(scores, splits, corpus, labels, config)
    return report | {"timings": {k: round(v, 1) for k, v in seconds.items()}}


def main() -> None:
    args = parse_args()
    corpus = load_corpus(args.corpus)
    if found := problems(corpus):
        sys.exit("the corpus is not fit to measure with:\n- " + "\n- ".join(found))
    try:
        with cairn(args.url, "isolation") as url:
            report = asyncio.run(measure(url, args, corpus))
    except FeatureMissing as missing:
        print(f"isolation not measured: {missing}", file=sys.stderr)
        sys.exit(2)
    write_report(args.out, report, markdown(report))


if __name__ == "__main__":
    main()
