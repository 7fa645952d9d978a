"""RCRT's context pipeline, re-implemented faithfully to its defects, on the same data.

Not product code: the reference point the issue asks for. As RCRT's context builder ran it
(ARCHITECTURE §9):

- seeds: one query per source, sequentially (each ``always`` entry, each semantic schema —
  an HNSW scan post-filtered by schema —, then the session);
- graph: one hop only — one edge query for the seeds, then one query per neighbour node;
- selection: a ``networkx`` graph whose adjacency is rebuilt after every insert; the token
  cost of a node is measured on its raw context JSON, counted again every time;
- render: one HTTP GET per selected item against the running server (which applies the
  hints), and a Jinja template parsed on every render, per item and for the whole;
- write: through the HTTP API like RCRT's builder service (find the consumer's record of
  the session, PATCH it, or POST the first one).

Agent match is the same in-memory trigger match as Cairn's (RCRT also held its agents in
memory), and publish is measured the same way for both.

Two of RCRT's *quality* defects are left out because they would make the baseline do less
work rather than the same work slower: it skips a record that does not fit instead of
stopping there (RCRT stopped, which often ended a selection after three records), and it
applies the blacklist to the session source (whose newest record is otherwise the
session's large ``agent.context.v1``).
"""

from __future__ import annotations

import heapq
import json
import time
import uuid
from typing import Any

import asyncpg
import httpx
import jinja2
import networkx as nx
import tiktoken

from cairn.context.agents import Agent

from .corpus import OWNER
from .measure import PublishProbe, Samples

CONSUMER = "rcrt-baseline"
EDGE_COST = {0: 0.1, 1: 0.5, 2: 0.3}
ITEM_TEMPLATE = "### {{ item.title }} ({{ item.schema_name }})\n{{ item.context | tojson }}\n"
CONTEXT_TEMPLATE = (
    "# Context for {{ consumer }}\n{% for block in blocks %}{{ block }}\n{% endfor %}"
    "# Trigger\n{{ trigger | tojson }}\n"
)
SELECT_ROW = "SELECT * FROM breadcrumbs WHERE id = $1"


class RcrtBaseline:
    def __init__(
        self,
        dsn: str,
        http: httpx.AsyncClient,
        probe: PublishProbe,
        encoding: tiktoken.Encoding,
        excluded: frozenset[str],
    ) -> None:
        self.excluded = excluded
        self.dsn = dsn
        self.http = http
        self.probe = probe
        self.encoding = encoding
        self.connection: asyncpg.Connection | None = None

    async def start(self) -> None:
        from pgvector.asyncpg import register_vector

        self.connection = await asyncpg.connect(self.dsn)
        await register_vector(self.connection)

    async def close(self) -> None:
        if self.connection is not None:
            await self.connection.close()

    async def run(self, agents: list[Agent], event: dict[str, Any], samples: Samples) -> None:
        db = self.connection
        assert db is not None
        phases: dict[str, float] = {}
        started = clock = time.perf_counter()

        def lap(name: str) -> None:
            nonlocal clock
            now = time.perf_counter()
            phases[name] = phases.get(name, 0.0) + (now - clock) * 1000
            clock = now

        matched = [a for a in agents if a.triggered_by(event)]
        lap("agent_match")
        for agent in matched:
            trigger = await db.fetchrow(SELECT_ROW, uuid.UUID(event["breadcrumb_id"]))
            lap("trigger")
            seeds: dict[uuid.UUID, tuple[float, asyncpg.Record]] = {trigger["id"]: (0.0, trigger)}
            for source in agent.always:
                rows = await db.fetch(
                    "SELECT * FROM breadcrumbs WHERE owner_id = $1 AND schema_name = $2"
                    " ORDER BY updated_at DESC LIMIT $3",
                    OWNER,
                    source.schema_name,
                    1 if source.method == "latest" else source.limit,
                )
                for row in rows:
                    seeds.setdefault(row["id"], (0.2, row))
            lap("seeds_always")
            excluded = list(self.excluded)
            if agent.semantic.enabled and trigger["embedding"] is not None:
                for schema in agent.semantic.schemas:
                    rows = await db.fetch(
                        "SELECT *, 1 - (embedding <=> $1) AS similarity FROM breadcrumbs"
                        " WHERE schema_name = $2 ORDER BY embedding <=> $1 LIMIT $3",
                        trigger["embedding"],
                        schema,
                        agent.semantic.limit,
                    )
                    for row in rows:
                        if row["similarity"] >= agent.semantic.min_similarity:
                            seeds.setdefault(row["id"], (1 - row["similarity"], row))
            lap("seeds_semantic")
            session_tags = [t for t in trigger["tags"] if t.startswith("session:")]
            for tag in session_tags:
                rows = await db.fetch(
                    "SELECT * FROM breadcrumbs WHERE tags @> ARRAY[$1::text]"
                    " AND NOT (schema_name = ANY($3::text[]))"
                    " ORDER BY created_at DESC LIMIT $2",
                    tag,
                    agent.session_limit,
                    excluded,
                )
                for rank, row in enumerate(rows):
                    seeds.setdefault(row["id"], (0.05 * rank, row))
            lap("seeds_session")
            # The stage as a whole, as Cairn reports it (its sources share one statement).
            sources = ("seeds_always", "seeds_semantic", "seeds_session")
            phases["seeds"] = sum(phases.get(name, 0.0) for name in sources)
            nodes, edges = await self._one_hop(db, seeds)
            lap("graph")
            budget = agent.context_budget or 4000
            chosen = self._select(seeds, nodes, edges, budget)
            lap("select")
            views = []
            for record_id in chosen:
                response = await self.http.get(f"/breadcrumbs/{record_id}")
                if response.status_code == 200:
                    views.append(response.json())
            lap("render_items")
            blocks = [
                jinja2.Environment().from_string(ITEM_TEMPLATE).render(item=view) for view in views
            ]
            text = (
                jinja2.Environment()
                .from_string(CONTEXT_TEMPLATE)
                .render(
                    consumer=agent.agent_id, blocks=blocks, trigger=json.loads(trigger["context"])
                )
            )
            token_count = len(self.encoding.encode(text))
            lap("render")
            write_started = time.perf_counter()
            record_id = await self._write(session_tags, event, text, token_count, len(views))
            committed = time.perf_counter()
            lap("write")
            committed_ms = (committed - started) * 1000
            phases["publish"] = await self.probe.publish_ms(record_id, write_started, committed)
            samples.add(phases, committed_ms)

    async def _one_hop(
        self, db: asyncpg.Connection, seeds: dict[uuid.UUID, tuple[float, asyncpg.Record]]
    ) -> tuple[dict[uuid.UUID, asyncpg.Record], list[tuple[uuid.UUID, uuid.UUID, int, float]]]:
        ids = list(seeds)
        rows = await db.fetch(
            "SELECT from_id, to_id, edge_type, weight FROM breadcrumb_edges"
            " WHERE from_id = ANY($1::uuid[]) OR to_id = ANY($1::uuid[])",
            ids,
        )
        nodes = {record_id: row for record_id, (_, row) in seeds.items()}
        edges = []
        for row in rows:
            edges.append((row["from_id"], row["to_id"], row["edge_type"], row["weight"]))
            for other in (row["from_id"], row["to_id"]):
                if other not in nodes:  # N+1: one query per node
                    fetched = await db.fetchrow(SELECT_ROW, other)
                    if fetched is not None:
                        nodes[other] = fetched
        return nodes, edges

    def _select(
        self,
        seeds: dict[uuid.UUID, tuple[float, asyncpg.Record]],
        nodes: dict[uuid.UUID, asyncpg.Record],
        edges: list[tuple[uuid.UUID, uuid.UUID, int, float]],
        budget: int,
    ) -> list[uuid.UUID]:
        queue = [(cost, str(record_id), record_id) for record_id, (cost, _) in seeds.items()]
        heapq.heapify(queue)
        chosen: list[uuid.UUID] = []
        visited: set[uuid.UUID] = set()
        used = 0
        graph = _adjacency(nodes, edges)
        while queue:
            cost, _, record_id = heapq.heappop(queue)
            if record_id in visited or record_id not in nodes:
                continue
            visited.add(record_id)
            tokens = len(self.encoding.encode(json.dumps(json.loads(nodes[record_id]["context"]))))
            if used + tokens <= budget:
                used += tokens
                chosen.append(record_id)
                graph = _adjacency(nodes, edges)  # rebuilt after every insert
            for neighbour, data in graph.adj[record_id].items():
                if neighbour not in visited:
                    item = (cost + data["weight"], str(neighbour), neighbour)
                    heapq.heappush(queue, item)
        return chosen

    async def _write(
        self, session_tags: list[str], event: dict[str, Any], text: str, tokens: int, count: int
    ) -> str:
        tags = ["agent:context", f"consumer:{CONSUMER}", *session_tags[:1]]
        found = await self.http.get(
            "/breadcrumbs",
            params={"schema_name": "agent.context.v1", "all_tags": ",".join(tags), "limit": 1},
        )
        found.raise_for_status()
        context = {
            "consumer_id": CONSUMER,
            "trigger_event_id": event["event_id"],
            "formatted_context": text,
            "token_count": tokens,
            "breadcrumb_count": count,
        }
        existing = found.json()
        items = existing if isinstance(existing, list) else existing.get("items", [])
        if items:
            record_id = str(items[0]["id"])
            response = await self.http.patch(f"/breadcrumbs/{record_id}", json={"context": context})
            response.raise_for_status()
            return record_id
        body = {"schema_name": "agent.context.v1", "title": f"Context for {CONSUMER}"}
        response = await self.http.post(
            "/breadcrumbs", json=body | {"tags": tags, "context": context}
        )
        response.raise_for_status()
        return str(response.json()["id"])


def _adjacency(
    nodes: dict[uuid.UUID, asyncpg.Record], edges: list[tuple[uuid.UUID, uuid.UUID, int, float]]
) -> nx.Graph:
    graph = nx.Graph()
    graph.add_nodes_from(nodes)
    for a, b, kind, weight in edges:
        graph.add_edge(a, b, weight=EDGE_COST.get(kind, 1 - weight))
    return graph
