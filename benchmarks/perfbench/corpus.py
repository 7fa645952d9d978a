"""A realistic corpus at a given scale, generated deterministically and cached on disk.

What a busy Cairn tenant holds: chat sessions (user messages, agent replies that ask for
tools, tool responses answering them by ``requestId``), knowledge documents and notes,
tools with their ``code``, the default agent, schema definitions with hints and the
blacklist (the last three from ``bootstrap/``; tools and some knowledge from RCRT's own
bootstrap data when it is present).

Every record carries the ``llm_text`` its hints produce, its keyword pointers and a real
MiniLM embedding (batched ONNX, the product's encoder). The edges are the ones the edge
builder would have created had the records arrived in order: causal (``reply_to``,
``requestId`` pairs), temporal (previous record of the session), tag (five most recent
records sharing a plain tag) and semantic (five nearest earlier records with cosine ≥ 0.55).

Embedding is the slow part (~40 texts/s for these texts on two cores), so the corpus of a
scale is cached under ``.cairn-bench/``. Above ``--unique-texts`` records (default 100k), a
corpus takes its texts from the corpus of ``--unique-texts`` records (built first, or read
from the cache): records keep their own ids, sessions, tags, order and edges; a text not in
that pool is replaced by a pooled text of the same schema and topic, so texts and
embeddings repeat — said in the results as ``texts_unique``. Its semantic edges are then
found between the pool's texts, not between all records (which would be quadratic in the
scale: ~4e14 multiply-adds at 1M).
"""

from __future__ import annotations

import json
import pickle
import random
import re
import time
import uuid
import zlib
from collections import Counter
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import numpy as np

from cairn.breadcrumbs.text import build_llm_text
from cairn.embedding import entity_keywords

REPO = Path(__file__).resolve().parents[2]
RCRT = REPO.parent / "shared" / "fixtures" / "rcrt-bootstrap"
CACHE_VERSION = 3
OWNER = uuid.UUID("00000000-0000-0000-0000-000000000001")
START = datetime(2026, 1, 1, tzinfo=UTC)
CAUSAL, TEMPORAL, TAG, SEMANTIC = 0, 1, 2, 3
TAG_NEIGHBOURS, SEMANTIC_NEIGHBOURS, SEMANTIC_MIN = 5, 5, 0.55
# Nearest texts kept per pooled text: enough that five of them have an earlier record.
TEXT_NEIGHBOURS = 16

TOPICS: dict[str, list[str]] = {
    "billing": ["invoice", "refund", "charge", "subscription", "receipt", "VAT", "card"],
    "shipping": ["parcel", "courier", "tracking number", "customs", "warehouse", "delivery"],
    "deploy": ["release", "rollback", "canary", "staging", "pipeline", "artifact", "helm"],
    "database": ["index", "vacuum", "replica", "migration", "deadlock", "query plan"],
    "auth": ["token", "password reset", "SSO", "OAuth scope", "session cookie", "MFA"],
    "search": ["ranking", "embedding", "recall", "keyword", "synonym", "HNSW index"],
    "weather": ["forecast", "rain", "temperature", "humidity", "storm", "wind speed"],
    "travel": ["flight", "hotel", "itinerary", "visa", "layover", "boarding pass"],
    "cooking": ["recipe", "oven", "sourdough", "spice", "simmer", "marinade"],
    "fitness": ["workout", "interval", "protein", "stretching", "heart rate", "marathon"],
    "finance": ["budget", "portfolio", "dividend", "mortgage", "interest rate", "tax"],
    "legal": ["contract", "clause", "liability", "GDPR", "compliance", "signature"],
    "hiring": ["candidate", "interview", "offer letter", "onboarding", "referral"],
    "security": ["vulnerability", "CVE", "firewall", "patch", "phishing", "audit log"],
    "analytics": ["dashboard", "cohort", "funnel", "retention", "metric", "A/B test"],
    "mobile": ["iOS build", "push notification", "crash report", "app store", "gesture"],
    "network": ["latency", "DNS", "load balancer", "TLS certificate", "packet loss"],
    "support": ["ticket", "escalation", "SLA", "customer", "macro", "satisfaction"],
    "docs": ["tutorial", "API reference", "changelog", "diagram", "style guide"],
    "ml": ["training run", "GPU", "fine-tuning", "evaluation", "dataset", "checkpoint"],
    "gardening": ["tomato", "compost", "pruning", "seedling", "irrigation", "mulch"],
    "music": ["playlist", "chord", "tempo", "mixing", "concert", "guitar"],
    "housing": ["lease", "landlord", "repair", "deposit", "heating", "insulation"],
    "health": ["appointment", "prescription", "symptom", "vaccine", "insurance claim"],
    "education": ["course", "homework", "exam", "syllabus", "lecture", "grade"],
    "events": ["venue", "catering", "guest list", "invitation", "schedule", "badge"],
    "inventory": ["stock level", "SKU", "reorder point", "supplier", "barcode"],
    "email": ["inbox", "newsletter", "bounce", "spam filter", "DKIM", "template"],
    "calendar": ["meeting", "time zone", "recurring event", "reminder", "availability"],
    "pets": ["veterinarian", "leash", "kibble", "grooming", "adoption", "microchip"],
}
VERBS = [
    "check",
    "update",
    "explain",
    "compare",
    "fix",
    "plan",
    "summarise",
    "review",
    "estimate",
    "schedule",
    "cancel",
    "configure",
    "investigate",
    "list",
]
TOOLS = [
    "calculator",
    "web-search",
    "breadcrumb-search",
    "weather-api",
    "sql-query",
    "calendar",
    "email-send",
    "translate",
    "http-fetch",
    "timer",
    "random",
    "json-transform",
    "file-read",
    "shell",
    "scheduler",
]


@dataclass
class Corpus:
    scale: int
    rows: list[dict[str, Any]]  # breadcrumb columns, embedding as row index into vectors
    vectors: np.ndarray  # float32 [n_texts, 384]
    edges: np.ndarray  # structured: from, to (row indices), type, weight
    triggers: list[int] = field(default_factory=list)  # user messages, across sessions
    texts_unique: int = 0
    embed_seconds: float = 0.0

    def vector_of(self, row: dict[str, Any]) -> np.ndarray | None:
        index = row["text_index"]
        return None if index is None else self.vectors[index]


def created_event(row: dict[str, Any]) -> dict[str, Any]:
    """The `breadcrumb.created` event of a stored corpus record, as a trigger to publish."""
    return {
        "type": "breadcrumb.created",
        "event_id": str(uuid.uuid4()),
        "breadcrumb_id": str(row["id"]),
        "owner_id": str(OWNER),
        "schema_name": row["schema_name"],
        "tags": row["tags"],
        "version": 1,
    }


def load_or_build(
    scale: int, cache_dir: Path, model_dir: Path, *, unique_texts: int = 100_000
) -> Corpus:
    path = cache_dir / f"corpus-{scale}-v{CACHE_VERSION}-u{unique_texts}.pkl"
    if path.exists():
        with path.open("rb") as handle:
            corpus: Corpus = pickle.load(handle)
        print(f"corpus: {len(corpus.rows)} records from cache {path.name}", flush=True)
        return corpus
    pool = None
    if scale > unique_texts:
        pool = load_or_build(unique_texts, cache_dir, model_dir, unique_texts=unique_texts)
    corpus = build(scale, model_dir, unique_texts=unique_texts, pool=pool)
    cache_dir.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    with tmp.open("wb") as handle:
        pickle.dump(corpus, handle, protocol=pickle.HIGHEST_PROTOCOL)
    tmp.replace(path)
    return corpus


def build(scale: int, model_dir: Path, *, unique_texts: int, pool: Corpus | None = None) -> Corpus:
    rng = random.Random(20260101)
    records = _fixed_records() + _tools(rng)
    knowledge = max(20, scale * 4 // 100)
    notes = max(10, scale * 2 // 100)
    records += [_knowledge(rng, i) for i in range(knowledge)]
    records += [_note(rng, i) for i in range(notes)]
    records += _sessions(rng, scale - len(records))
    records = records[:scale]
    _stamp(records)
    texts = [r.pop("_text") for r in records]
    if pool is not None:
        return _from_pool(scale, records, texts, pool)
    pool_index = _text_pool(texts, unique_texts)
    vectors, seconds = _embed([texts[i] for i in pool_index.values()], model_dir)
    pool_texts = list(pool_index)
    index_of = {text: n for n, text in enumerate(pool_texts)}
    for record, text in zip(records, texts, strict=True):
        # A text beyond the pool reuses a pooled one, picked by a stable hash of the text.
        index = index_of.get(text)
        if index is None:
            index = zlib.crc32(text.encode()) % len(pool_texts)
            text = pool_texts[index]
        record["llm_text"] = text
        record["text_index"] = index
        record["entity_keywords"] = entity_keywords(record["tags"], text)
    edges = _edges(records, vectors)
    triggers = [i for i, r in enumerate(records) if r["schema_name"] == "user.message.v1"]
    return Corpus(scale, records, vectors, edges, triggers, len(pool_texts), seconds)


def _from_pool(scale: int, records: list[dict[str, Any]], texts: list[str], pool: Corpus) -> Corpus:
    """``records`` with their texts (and embeddings) taken from ``pool``'s."""
    pool_texts: list[str] = [""] * len(pool.vectors)
    pool_schema: list[str] = [""] * len(pool.vectors)
    for row in pool.rows:
        pool_texts[row["text_index"]] = row["llm_text"]
        pool_schema[row["text_index"]] = row["schema_name"]
    index_of = {text: n for n, text in enumerate(pool_texts)}
    groups: dict[tuple[str, str], list[int]] = {}
    for n, text in enumerate(pool_texts):
        for key in ((pool_schema[n], _topic(text)), (pool_schema[n], "")):
            groups.setdefault(key, []).append(n)
    everything = list(range(len(pool_texts)))
    for record, text in zip(records, texts, strict=True):
        index = index_of.get(text)
        if index is None:
            schema = record["schema_name"]
            group = groups.get((schema, _topic(text))) or groups.get((schema, "")) or everything
            index = group[zlib.crc32(text.encode()) % len(group)]
        record["llm_text"] = pool_texts[index]
        record["text_index"] = index
        record["entity_keywords"] = entity_keywords(record["tags"], pool_texts[index])
    print(f"  texts from the {pool.scale}-record corpus; edges", flush=True)
    edges = _edges(records, pool.vectors, pooled=True)
    triggers = [i for i, r in enumerate(records) if r["schema_name"] == "user.message.v1"]
    used = len({r["text_index"] for r in records})
    return Corpus(scale, records, pool.vectors, edges, triggers, used, pool.embed_seconds)


_TERMS = sorted({term for terms in TOPICS.values() for term in terms}, key=len, reverse=True)
_TERM = re.compile("|".join(re.escape(term) for term in _TERMS), re.IGNORECASE)
_TOPIC_OF = {term.lower(): topic for topic, terms in TOPICS.items() for term in terms}


def _topic(text: str) -> str:
    """The topic whose terms ``text`` names most often ("" for none)."""
    counts = Counter(_TOPIC_OF[m.lower()] for m in _TERM.findall(text))
    return counts.most_common(1)[0][0] if counts else ""


# --- records -------------------------------------------------------------------------------


def _record(
    schema: str, title: str, tags: list[str], context: dict[str, Any], **extra: Any
) -> dict[str, Any]:
    return {
        "id": uuid.uuid4(),
        "schema_name": schema,
        "title": title,
        "description": extra.get("description"),
        "tags": tags,
        "context": context,
        "llm_hints": extra.get("llm_hints"),
        "_text": extra.get("text") or build_llm_text(title, extra.get("description"), context),
    }


def _fixed_records() -> list[dict[str, Any]]:
    """Cairn's bootstrap: schema definitions with hints, the agent, the blacklist, docs."""
    out = []
    for path in sorted((REPO / "bootstrap").rglob("*.json")):
        data = json.loads(path.read_text())
        out.append(
            _record(
                data["schema_name"],
                data["title"],
                data.get("tags", []),
                data["context"],
                description=data.get("description"),
                llm_hints=data.get("llm_hints"),
            )
        )
    if (RCRT / "knowledge").is_dir():
        for path in sorted((RCRT / "knowledge").glob("*.json")):
            data = json.loads(path.read_text())
            context = {k: v for k, v in data["context"].items() if k != "examples"}
            title, tags = data["title"], ["knowledge", "rcrt", *_plain(data.get("tags", []))]
            out.append(_record("knowledge.v1", title, tags, context))
    return out


def _plain(tags: list[str]) -> list[str]:
    return [t for t in tags if ":" not in t][:3]


def _tools(rng: random.Random) -> list[dict[str, Any]]:
    out = []
    rcrt_tools = sorted((RCRT / "tools-self-contained").glob("*.json")) if RCRT.is_dir() else []
    for path in rcrt_tools:
        data = json.loads(path.read_text())
        tags = ["tool", "workspace:tools", *[t for t in data.get("tags", []) if t != "tool"]]
        out.append(
            _record(
                "tool.code.v1",
                data["title"],
                list(dict.fromkeys(tags)),
                data["context"],
                description=data.get("description"),
                llm_hints=data.get("llm_hints"),
            )
        )
    for index in range(max(0, 40 - len(out))):
        topic = rng.choice(list(TOPICS))
        name = f"{topic}-{rng.choice(VERBS)}-{index}"
        source = "\n".join(
            f"  const step{n} = await api.{rng.choice(VERBS)}('{rng.choice(TOPICS[topic])}');"
            for n in range(rng.randint(20, 60))
        )
        context = {
            "name": name,
            "description": f"{rng.choice(VERBS).title()} {topic} records: "
            + ", ".join(rng.sample(TOPICS[topic], 3)),
            "input_schema": {"type": "object", "properties": {"query": {"type": "string"}}},
            "output_schema": {"type": "object", "properties": {"result": {"type": "string"}}},
            "code": {
                "language": "typescript",
                "source": f"export async function run() {{\n{source}\n}}",
            },
        }
        hints = {"exclude": ["code", "permissions", "limits", "ui_schema"]}
        shown = {k: v for k, v in context.items() if k != "code"}
        out.append(
            _record(
                "tool.code.v1",
                f"{name} tool",
                ["tool", "workspace:tools", f"tool:{name}", topic],
                context,
                llm_hints=hints,
                text=build_llm_text(f"{name} tool", None, shown),
            )
        )
    return out


def _sentence(rng: random.Random, topic: str, words: int = 1) -> str:
    terms = TOPICS[topic]
    parts = []
    for _ in range(words):
        parts.append(
            rng.choice(
                [
                    f"can you {rng.choice(VERBS)} the {rng.choice(terms)} for {rng.choice(terms)}",
                    f"the {rng.choice(terms)} looks wrong after the last {rng.choice(terms)}",
                    f"I need to {rng.choice(VERBS)} my {rng.choice(terms)} before friday",
                    f"what happens to the {rng.choice(terms)} if the {rng.choice(terms)} fails",
                    f"please {rng.choice(VERBS)} {rng.choice(terms)} and {rng.choice(terms)}",
                    f"{rng.choice(terms)} number {rng.randint(100, 9999)} is still pending",
                ]
            )
        )
    return ". ".join(parts).capitalize() + "."


def _knowledge(rng: random.Random, index: int) -> dict[str, Any]:
    topic = rng.choice(list(TOPICS))
    second = rng.choice(list(TOPICS))
    title = f"{topic.title()} guide {index}: {rng.choice(TOPICS[topic])}"
    sections = [
        {"heading": rng.choice(TOPICS[topic]).title(), "body": _sentence(rng, topic, 2)}
        for _ in range(rng.randint(1, 3))
    ]
    context = {
        "title": title,
        "summary": _sentence(rng, topic, 2),
        "sections": sections,
        "related": [second],
        "examples": [_sentence(rng, second, 1)],
    }
    shown = {k: v for k, v in context.items() if k != "examples"}
    tags = ["knowledge", topic, second]
    return _record("knowledge.v1", title, tags, context, text=build_llm_text(title, None, shown))


def _note(rng: random.Random, index: int) -> dict[str, Any]:
    topic = rng.choice(list(TOPICS))
    title = f"Note {index} on {rng.choice(TOPICS[topic])}"
    return _record("note.v1", title, ["note", topic], {"content": _sentence(rng, topic, 2)})


def _sessions(rng: random.Random, count: int) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    session = 0
    while len(out) < count:
        session_tag = f"session:s{session:06d}"
        topics = rng.sample(list(TOPICS), 2)
        for _turn in range(rng.randint(3, 9)):
            out += _turn_records(rng, session_tag, rng.choice(topics))
        session += 1
    return out


def _turn_records(rng: random.Random, session_tag: str, topic: str) -> list[dict[str, Any]]:
    text = _sentence(rng, topic, rng.randint(1, 2))
    asked = _record(
        "user.message.v1",
        "User message",
        ["user:message", "extension:chat", session_tag],
        {"role": "user", "content": text},
        text=f"User message\nUser: {text}",
    )
    out = [asked]
    if rng.random() < 0.4:
        tool = rng.choice(TOOLS)
        request_id = uuid.uuid4().hex[:12]
        reply = _sentence(rng, topic)
        requests = [{"requestId": request_id, "tool": tool, "input": {"query": text[:60]}}]
        out.append(
            _record(
                "agent.response.v1",
                "Agent response",
                ["agent:response", session_tag],
                {"content": reply, "tool_requests": requests},
                text=f"Agent response\nAssistant: {reply} [requested tools: {tool}]",
            )
        )
        output = {"result": _sentence(rng, topic), "items": rng.randint(0, 40)}
        out.append(
            _record(
                "tool.response.v1",
                f"{tool} result",
                ["tool:response", session_tag],
                {"requestId": request_id, "tool": tool, "status": "ok", "output": output},
                text=f"{tool} result\nTool {tool} (ok): {json.dumps(output)}",
            )
        )
    answer = _sentence(rng, topic, rng.randint(1, 3))
    out.append(
        _record(
            "agent.response.v1",
            "Agent response",
            ["agent:response", session_tag],
            {"content": answer, "reply_to": str(asked["id"])},
            text=f"Agent response\nAssistant: {answer}",
        )
    )
    return out


def _stamp(records: list[dict[str, Any]]) -> None:
    """Arrival order: one record every 200 ms, oldest first."""
    for index, record in enumerate(records):
        record["created_at"] = START + timedelta(milliseconds=200 * index)


# --- embeddings ----------------------------------------------------------------------------


def _text_pool(texts: list[str], unique_texts: int) -> dict[str, int]:
    """Distinct texts to embed (first occurrence), at most ``unique_texts``."""
    pool: dict[str, int] = {}
    for index, text in enumerate(texts):
        if text not in pool and len(pool) < unique_texts:
            pool[text] = index
    return pool


def _embed(texts: list[str], model_dir: Path) -> tuple[np.ndarray, float]:
    from cairn.embedding import OnnxEncoder, ensure_model

    encoder = OnnxEncoder(ensure_model(model_dir), threads=2)
    # Similar lengths per batch: padding to the longest would waste most of the work.
    order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
    out = np.zeros((len(texts), 384), dtype=np.float32)
    started = time.perf_counter()
    for start in range(0, len(order), 64):
        chunk = order[start : start + 64]
        out[chunk] = encoder.encode([texts[i] for i in chunk])
        if start % 6400 == 0:
            rate = (start + len(chunk)) / (time.perf_counter() - started)
            print(f"  embedded {start + len(chunk)}/{len(texts)} ({rate:.0f}/s)", flush=True)
    return out, time.perf_counter() - started


# --- edges ---------------------------------------------------------------------------------


def _edges(
    records: list[dict[str, Any]], vectors: np.ndarray, *, pooled: bool = False
) -> np.ndarray:
    edges: dict[tuple[int, int, int], float] = {}
    by_id = {str(r["id"]): i for i, r in enumerate(records)}
    asks: dict[str, int] = {}
    last_in_session: dict[str, int] = {}
    recent_by_tag: dict[str, list[int]] = {}
    for index, record in enumerate(records):
        context = record["context"]
        reply_to = context.get("reply_to")
        if isinstance(reply_to, str) and reply_to in by_id:
            edges[(by_id[reply_to], index, CAUSAL)] = 1.0
        for request in context.get("tool_requests") or []:
            asks[request["requestId"]] = index
        if context.get("requestId") in asks:
            edges[(asks[context["requestId"]], index, CAUSAL)] = 1.0
        for tag in record["tags"]:
            if tag.startswith("session:"):
                if tag in last_in_session:
                    edges[(last_in_session[tag], index, TEMPORAL)] = 1.0
                last_in_session[tag] = index
        plain = [t.lower() for t in record["tags"] if ":" not in t]
        sharing: list[int] = []
        for tag in plain:
            sharing += recent_by_tag.get(tag, [])
        for other in sorted(set(sharing), reverse=True)[:TAG_NEIGHBOURS]:
            edges[(index, other, TAG)] = 1.0
        for tag in plain:
            recent_by_tag.setdefault(tag, []).append(index)
            del recent_by_tag[tag][:-TAG_NEIGHBOURS]
    nearest = _nearest_earlier_pooled if pooled else _nearest_earlier
    for a, b, weight in nearest(records, vectors):
        edges.setdefault((a, b, SEMANTIC), weight)
    out = np.zeros(
        len(edges), dtype=[("from", "i4"), ("to", "i4"), ("type", "i2"), ("weight", "f4")]
    )
    for n, ((a, b, kind), weight) in enumerate(edges.items()):
        out[n] = (a, b, kind, weight)
    return out


def _nearest_earlier(
    records: list[dict[str, Any]], vectors: np.ndarray
) -> list[tuple[int, int, float]]:
    """Each record's k most similar earlier records (what existed when it arrived)."""
    embedded = [i for i, r in enumerate(records) if r["schema_name"] != "agent.context.v1"]
    matrix = np.stack([vectors[records[i]["text_index"]] for i in embedded])
    out: list[tuple[int, int, float]] = []
    block = 1024
    for start in range(0, len(embedded), block):
        rows = matrix[start : start + block]
        sims = rows @ matrix[: start + len(rows)].T
        for r in range(len(rows)):
            sims[r, start + r :] = -2.0  # only earlier records (and never itself)
        k = min(SEMANTIC_NEIGHBOURS, sims.shape[1])
        top = np.argpartition(-sims, k - 1, axis=1)[:, :k]
        for r, candidates in enumerate(top):
            for c in candidates:
                if sims[r, c] >= SEMANTIC_MIN:
                    out.append((embedded[start + r], embedded[int(c)], float(sims[r, c])))
    return out


def _nearest_earlier_pooled(
    records: list[dict[str, Any]], vectors: np.ndarray
) -> list[tuple[int, int, float]]:
    """As ``_nearest_earlier`` when texts repeat: a record's nearest earlier records are the
    latest ones carrying its own text (similarity 1), then the latest carrying each of its
    text's nearest texts, best first."""
    near_index, near_sims = _nearest_texts(vectors, TEXT_NEIGHBOURS)
    latest: dict[int, list[int]] = {}
    out: list[tuple[int, int, float]] = []
    for index, record in enumerate(records):
        if record["schema_name"] == "agent.context.v1":
            continue
        own = record["text_index"]
        picked = [(other, 1.0) for other in reversed(latest.get(own, []))]
        for text, similarity in zip(near_index[own], near_sims[own], strict=True):
            if len(picked) >= SEMANTIC_NEIGHBOURS or similarity < SEMANTIC_MIN:
                break
            picked += [(other, float(similarity)) for other in reversed(latest.get(text, []))]
        out += [(index, other, weight) for other, weight in picked[:SEMANTIC_NEIGHBOURS]]
        recent = latest.setdefault(own, [])
        recent.append(index)
        del recent[:-SEMANTIC_NEIGHBOURS]
    return out


def _nearest_texts(vectors: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Each text's ``k`` most similar other texts and their similarities, best first."""
    count = len(vectors)
    k = min(k, count - 1)
    index = np.zeros((count, k), dtype=np.int32)
    sims = np.zeros((count, k), dtype=np.float32)
    started = time.perf_counter()
    for start in range(0, count, 2048):
        block = vectors[start : start + 2048] @ vectors.T
        rows = np.arange(len(block))
        block[rows, start + rows] = -2.0  # never itself
        top = np.argpartition(-block, k - 1, axis=1)[:, :k]
        top_sims = np.take_along_axis(block, top, axis=1)
        order = np.argsort(-top_sims, axis=1)
        index[start : start + len(block)] = np.take_along_axis(top, order, axis=1)
        sims[start : start + len(block)] = np.take_along_axis(top_sims, order, axis=1)
        if start % 20480 == 0:
            print(f"  nearest texts {start}/{count} ({time.perf_counter() - started:.0f} s)")
    return index, sims
