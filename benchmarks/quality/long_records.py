"""Long records: recall@5 of the document whose answer lies past its first 600 word-pieces,
with chunks (``breadcrumbs.chunks``) and without, and what the chunks cost in storage.

    PYTHONPATH=$PWD/src .venv/bin/python benchmarks/quality/long_records.py

The corpus (``long_records/docs``, built by ``long_records_corpus.py``; licences in
``long_records/sources.json``) is stored as one record per document on an in-process app
with the real ONNX model. Each question of ``long_records/questions.json`` (written for
this benchmark, not copied from the text) names the passage that answers it; the passage
is checked to start after word-piece ``MIN_ANSWER_TOKEN`` of its document. Each question
is searched (``mode=vector`` and ``mode=hybrid``, ``nn=5``) with the chunks stored, then
again after every chunk is deleted: the record's own vector alone, as before chunks.
Reports go to benchmarks/results/long_records.{json,md}.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path
from typing import Any

import httpx
from fastapi import FastAPI
from sqlalchemy import text
from tokenizers import Tokenizer

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from inprocess import MODELS, leave, run, served  # noqa: E402
from server import source_state, write_report  # noqa: E402

CORPUS = HERE / "long_records"
RESULTS = HERE.parents[0] / "results" / "long_records"
MIN_ANSWER_TOKEN = 600
K = 5
MODES = ("vector", "hybrid")
SCHEMA = "doc.page.v1"


def load() -> tuple[dict[str, str], dict[str, tuple[str, str]]]:
    docs = {path.stem: path.read_text(encoding="utf-8") for path in CORPUS.glob("docs/*.txt")}
    questions = json.loads((CORPUS / "questions.json").read_text(encoding="utf-8"))
    return docs, {doc_id: (q, answer) for doc_id, (q, answer) in questions.items()}


def answer_token(document: str, answer: str, tokenizer: Tokenizer) -> int:
    """The word-piece at which the answering passage starts (whitespace-insensitive)."""
    pattern = r"\s+".join(re.escape(word) for word in answer.split())
    found = re.search(pattern, document)
    if found is None:
        raise ValueError(f"answer not in its document: {answer!r}")
    offsets = tokenizer.encode(document, add_special_tokens=False).offsets
    return sum(1 for start, _ in offsets if start < found.start())


def check_answers(docs: dict[str, str], questions: dict[str, tuple[str, str]]) -> dict[str, int]:
    tokenizer = Tokenizer.from_file(str(MODELS / "tokenizer.json"))
    tokenizer.no_truncation()
    tokenizer.no_padding()
    positions = {
        d: answer_token(docs[d], answer, tokenizer) for d, (_, answer) in questions.items()
    }
    early = {d: at for d, at in positions.items() if at < MIN_ANSWER_TOKEN}
    if early:
        raise ValueError(f"answers within the first {MIN_ANSWER_TOKEN} word-pieces: {early}")
    return positions


async def store(http: httpx.AsyncClient, docs: dict[str, str]) -> dict[str, str]:
    """doc id → record id."""
    ids = {}
    for doc_id, body in sorted(docs.items()):
        name, _, part = doc_id.rpartition("-")
        record = {"schema_name": SCHEMA, "title": f"{name} (part {part})", "tags": ["docs"],
                  "context": {"text": body}}  # fmt: skip
        response = await http.post("/breadcrumbs", json=record)
        response.raise_for_status()
        ids[doc_id] = response.json()["id"]
    return ids


async def recall(
    http: httpx.AsyncClient, ids: dict[str, str], questions: dict[str, tuple[str, str]]
) -> dict[str, float]:
    out = {}
    for mode in MODES:
        found = 0
        for doc_id, (question, _) in questions.items():
            params = {"q": question, "nn": str(K), "mode": mode}
            response = await http.get("/breadcrumbs/search", params=params)
            response.raise_for_status()
            found += ids[doc_id] in [hit["id"] for hit in response.json()]
        out[mode] = round(found / len(questions), 3)
    return out


async def storage(app: FastAPI) -> dict[str, float]:
    """Chunk rows and their indexes, per record that has chunks."""
    async with app.state.resources.system_engine.connect() as connection:
        row = (
            await connection.execute(
                text(
                    "SELECT count(DISTINCT breadcrumb_id) AS records, count(*) AS chunks,"
                    " sum(pg_column_size(c.*)) AS row_bytes,"
                    " pg_total_relation_size('breadcrumb_chunks') AS total_bytes"
                    " FROM breadcrumb_chunks c"
                )
            )
        ).one()
    records = max(row.records, 1)
    return {
        "records_with_chunks": row.records,
        "chunks_per_record": round(row.chunks / records, 2),
        "row_bytes_per_record": round(row.row_bytes / records),
        "total_bytes_per_record": round(row.total_bytes / records),
    }


async def drop_chunks(app: FastAPI) -> None:
    async with app.state.resources.system_engine.begin() as connection:
        await connection.execute(text("DELETE FROM breadcrumb_chunks"))


async def measure(embedding: dict[str, Any]) -> dict[str, Any]:
    docs, questions = load()
    positions = check_answers(docs, questions)
    async with served(embedding) as (http, app):
        ids = await store(http, docs)
        with_chunks = await recall(http, ids, questions)
        cost = await storage(app)
        await drop_chunks(app)
        without = await recall(http, ids, questions)
    return {
        "commit": source_state(), "documents": len(docs), "questions": len(questions),
        "answer_token_min": min(positions.values()),
        "answer_token_median": sorted(positions.values())[len(positions) // 2],
        "embedding": embedding, "recall_at_5": {"with_chunks": with_chunks, "without": without},
        "storage": cost,
    }  # fmt: skip


def table(report: dict[str, Any]) -> str:
    recall, cost = report["recall_at_5"], report["storage"]
    lines = [
        "# Long records: recall@5 of the answering document",
        "",
        f"{report['documents']} documents of 1,500-4,000 word-pieces, {report['questions']}"
        f" questions answered after word-piece {MIN_ANSWER_TOKEN} (earliest"
        f" {report['answer_token_min']}, median {report['answer_token_median']});"
        f" commit {report['commit']}; chunk settings {report['embedding'] or 'default'}.",
        "",
        "| search | without chunks | with chunks |",
        "|---|---:|---:|",
        *(f"| {m} | {recall['without'][m]:.3f} | {recall['with_chunks'][m]:.3f} |" for m in MODES),
        "",
        f"Storage: {cost['chunks_per_record']} chunks per long record;"
        f" {cost['row_bytes_per_record']:,} bytes of chunk rows per long record,"
        f" {cost['total_bytes_per_record']:,} bytes with the table's indexes (HNSW included).",
        "",
    ]
    return "\n".join(lines)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--chunk-tokens", type=int)
    parser.add_argument("--chunk-overlap", type=int)
    parser.add_argument("--out", type=Path, default=RESULTS)
    args = parser.parse_args()
    overrides = {"chunk_tokens": args.chunk_tokens, "chunk_overlap": args.chunk_overlap}
    chosen = {k: v for k, v in overrides.items() if v is not None}
    report = run(lambda: measure(chosen))
    write_report(args.out, report, table(report))
    leave()
