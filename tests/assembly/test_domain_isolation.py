"""Domains in an assembly: the trigger is classified, records of isolated domains stay out
of the context from every source and the graph walk, and say why; an agent may opt out;
in a time-sensitive domain an older record counts for less."""

from __future__ import annotations

import uuid
from typing import Any

import httpx
import pytest
from fastapi import FastAPI
from sqlalchemy import text as sql
from tests.assembly.helpers import link, post

from cairn.db.engine import tenant_session

DEFINITION: dict[str, Any] = {
    "domains": [
        {
            "name": "technical",
            "triggers": ["postgresql", "connection pool", "database", "pgbouncer"],
            "isolated_from": ["anime"],
        },
        {"name": "anime", "triggers": ["lora", "checkpoint", "character consistency"]},
        {"name": "personal", "triggers": ["dentist", "birthday"], "recency_half_life_days": 7},
    ],
    "min_confidence": 0.1,
}
PG = "How do I fix the PostgreSQL connection pooling issue?"


def agent(**extra: Any) -> dict[str, Any]:
    sources = {
        "semantic": {"enabled": True, "schemas": ["note.v1"], "limit": 10, "min_similarity": 0.0},
        "always": [{"type": "tag", "tag": "pinned", "method": "all", "limit": 10}],
        "session": {"limit": 0},
    }
    return {"context_sources": sources, "context_budget": 3000} | extra


async def ask(client: httpx.AsyncClient, query: str, body: dict[str, Any]) -> dict[str, Any]:
    response = await client.post(
        "/contexts/query", json={"query": query, "agent": body, "debug": True}
    )
    assert response.status_code == 200, response.text
    return dict(response.json())


async def test_records_of_an_isolated_domain_stay_out_from_every_source_and_the_walk(
    client: httpx.AsyncClient, app: FastAPI, tenant: uuid.UUID
) -> None:
    await post(client, schema_name="context.domains.v1", title="domains", context=DEFINITION)
    pool = await post(
        client,
        title="Pooling",
        context={"text": "PostgreSQL connection pool exhausted: raise pgbouncer pool size"},
    )
    lora = await post(
        client,
        title="LoRA",
        context={
            "text": "LoRA at rank 16 keeps character consistency; the pool of checkpoint files"
        },
    )
    pinned = await post(
        client, title="Pinned", tags=["pinned"], context={"text": "Checkpoint every LoRA epoch"}
    )
    beside = await post(  # not searched (another schema): met by the walk only
        client, schema_name="storyboard.v1", title="Beside",
        context={"text": "Storyboard checkpoint for episode 3"},
    )  # fmt: skip
    await link(app, [(pool, beside, 3, 0.99), (pool, lora, 3, 0.98)], owner=tenant)
    plain = await post(client, title="Untitled", context={"text": "connection pool notes"})

    answer = await ask(client, PG, agent())
    explain = answer["explain"]
    domain = explain["signals"]["domain"]
    assert (domain["name"], domain["isolating"]) == ("technical", True)
    assert domain["confidence"] >= 0.1 and "trigger 'postgresql'" in domain["evidence"]["technical"]
    selected = {item["record_id"] for item in explain["selected"]}
    dropped = {item["record_id"]: item for item in explain["dropped"]}
    assert {str(pool), str(plain)} <= selected
    for record, stage in ((lora, "seeds"), (pinned, "seeds"), (beside, "graph")):
        assert str(record) not in selected
        assert (dropped[str(record)]["reason"], dropped[str(record)]["stage"]) == (
            "isolated_domain", stage,
        )  # fmt: skip
    assert "LoRA" not in answer["formatted_context"]
    isolated = [d["record_id"] for d in explain["dropped"] if d["reason"] == "isolated_domain"]
    assert len(isolated) == len(set(isolated))  # reported once, where first met

    opened = (await ask(client, PG, agent(domains={"isolate": False})))["explain"]
    assert opened["signals"]["domain"]["isolating"] is False
    reached = {item["record_id"] for item in opened["selected"]}
    assert {str(lora), str(pinned)} <= reached
    assert all(item["reason"] != "isolated_domain" for item in opened["dropped"])


async def test_without_a_definition_nothing_is_classified_or_left_out(
    client: httpx.AsyncClient, tenant: uuid.UUID
) -> None:
    lora = await post(client, title="LoRA", context={"text": "LoRA checkpoint for PostgreSQL"})
    explain = (await ask(client, PG, agent()))["explain"]
    assert explain["signals"]["domain"] is None
    assert str(lora) in {item["record_id"] for item in explain["selected"]}


async def test_an_unconfident_trigger_isolates_nothing(
    client: httpx.AsyncClient, tenant: uuid.UUID
) -> None:
    await post(client, schema_name="context.domains.v1", title="domains", context=DEFINITION)
    lora = await post(client, title="LoRA", context={"text": "LoRA checkpoint settings"})
    both = "Store the LoRA files in PostgreSQL?"  # one trigger word each: a tie
    explain = (await ask(client, both, agent()))["explain"]
    assert explain["signals"]["domain"]["isolating"] is False
    assert str(lora) in {item["record_id"] for item in explain["selected"]}


async def test_in_a_time_sensitive_domain_an_older_record_counts_for_less(
    client: httpx.AsyncClient, app: FastAPI, tenant: uuid.UUID
) -> None:
    await post(client, schema_name="context.domains.v1", title="domains", context=DEFINITION)
    text = {"text": "The dentist appointment is on Friday at nine"}
    old, new = [await post(client, title="Dentist", context=text) for _ in range(2)]
    resources = app.state.resources
    async with tenant_session(resources.session_factory, tenant) as session, session.begin():
        await session.execute(
            sql("UPDATE breadcrumbs SET created_at = now() - interval '14 days' WHERE id = :id"),
            {"id": old},
        )
    explain = (await ask(client, "When is the dentist appointment?", agent()))["explain"]
    assert explain["signals"]["time_sensitive"]["value"] is True
    seeds = {seed["record_id"]: seed for seed in explain["seeds"]}
    assert "recency x0.25" in seeds[str(old)]["detail"]  # two half-lives
    assert "recency x1.000: 0.0 days old" in seeds[str(new)]["detail"]
    assert seeds[str(old)]["score"] == pytest.approx(seeds[str(new)]["score"] * 0.25, abs=0.01)


async def test_a_query_is_classified_by_its_own_words(
    client: httpx.AsyncClient, tenant: uuid.UUID
) -> None:
    """Not by the ``Query``/``query:`` wrapping it is embedded in: a tenant whose
    technical domain lists "query" must not see every question as technical."""
    definition = {
        "domains": [
            {"name": "technical", "triggers": ["query", "index"]},
            {"name": "personal", "triggers": ["birthday"]},
        ]
    }
    await post(client, schema_name="context.domains.v1", title="domains", context=definition)
    explain = (await ask(client, "When is the birthday party?", agent()))["explain"]
    assert explain["signals"]["domain"]["name"] == "personal"
    assert explain["signals"]["domain"]["scores"]["technical"] == 0.0


async def test_a_trigger_no_word_places_is_classified_by_its_nearest_labelled_records(
    client: httpx.AsyncClient, tenant: uuid.UUID
) -> None:
    definition = {
        "domains": [
            {"name": "technical", "triggers": ["postgresql"]},
            {"name": "personal", "triggers": ["dentist"], "isolated_from": ["*"]},
        ]
    }
    await post(client, schema_name="context.domains.v1", title="domains", context=definition)
    mine = [
        await post(client, title="Coffee", tags=["domain:personal"], context={"text": text})
        for text in (
            "How I like my coffee: a light roast pour-over, black, no sugar.",
            "I drink my coffee with oat milk on weekends.",
        )
    ]
    machine = await post(
        client, title="Coffee machine", tags=["domain:technical"],
        context={"text": "The coffee machine's firmware update endpoint times out."},
    )  # fmt: skip
    explain = (await ask(client, "How do I like my coffee?", agent()))["explain"]
    domain = explain["signals"]["domain"]
    assert (domain["name"], domain["isolating"]) == ("personal", True), domain
    assert domain["evidence"]["personal"][0].startswith("neighbours ")
    assert {str(record) for record in mine} <= {i["record_id"] for i in explain["selected"]}
    dropped = {item["record_id"]: item["reason"] for item in explain["dropped"]}
    assert dropped[str(machine)] == "isolated_domain"


async def test_an_unlabelled_record_among_an_isolated_domains_records_is_judged_out(
    client: httpx.AsyncClient, tenant: uuid.UUID
) -> None:
    """No word of the definition and no example places the note; its nearest labelled
    records, written after it (so they did not label it), are of the isolated domain. A note
    as near the one domain's records as the other's stays."""
    await post(client, schema_name="context.domains.v1", title="domains", context=DEFINITION)
    note = {"text": "Rank 16, alpha 8, twelve epochs at 1e-4 kept Rin's face stable."}
    unplaced = await post(client, title="Training run", context=note)
    plain = await post(client, title="Tuesday", context={"text": "Notes from the Tuesday call."})
    for text in (
        "LoRA rank 16 with alpha 8 keeps the character's face stable across epochs.",
        "Twelve epochs at learning rate 1e-4 for the LoRA; the checkpoint after epoch 10 drifts.",
        "Rin's face stays stable with the LoRA at rank 16.",
    ):
        await post(client, title="LoRA", context={"text": text})
    for text in (
        "PostgreSQL connection pool exhausted: raise the pgbouncer pool size.",
        "The database connection pool times out after the deploy.",
        "PostgreSQL replica lag: the database falls behind during the backup.",
    ):
        await post(client, title="Database", context={"text": text})
    labelled = await labels_of(client, unplaced)
    assert labelled == [], "written before its neighbours, nothing labelled the note"

    answer = await ask(client, PG, agent())
    explain = answer["explain"]
    assert explain["signals"]["domain"]["isolating"] is True
    dropped = {item["record_id"]: item for item in explain["dropped"]}
    judged = dropped[str(unplaced)]
    assert (judged["reason"], judged["stage"]) == ("isolated_domain", "graph")
    assert judged["evidence"].startswith("unlabelled, judged anime by neighbours ")
    assert "Rin" not in answer["formatted_context"]
    assert str(plain) in {item["record_id"] for item in explain["selected"]}, dropped.get(
        str(plain), {}
    ).get("evidence")

    opened = (await ask(client, PG, agent(domains={"isolate": False})))["explain"]
    assert str(unplaced) in {item["record_id"] for item in opened["selected"]}
    assert all("evidence" not in item for item in opened["dropped"])


async def test_a_domain_isolated_from_everything_keeps_only_unlabelled_records_of_its_own(
    client: httpx.AsyncClient, tenant: uuid.UUID
) -> None:
    """Personal is isolated from every domain ("*"): an unlabelled note its nearest records
    place in personal stays, one they barely place elsewhere is left out, and says why; a technical
    trigger (isolated from personal only) keeps that note."""
    definition = {
        "domains": [
            {**domain, "isolated_from": ["*"]} if domain["name"] == "personal" else domain
            for domain in DEFINITION["domains"]
        ],
        "min_confidence": 0.1,
    }
    await post(client, schema_name="context.domains.v1", title="domains", context=definition)
    clinic = {"text": "Bring the insurance card to the clinic on Friday at nine; Hana comes too."}
    mine = await post(client, title="Clinic", context=clinic)
    general = {"text": "Photosynthesis turns sunlight into chemical energy in leaves."}
    plain = await post(client, title="Biology", context=general)
    for text in (
        "PostgreSQL connection pool exhausted: raise the pgbouncer pool size.",
        "The database connection pool times out after the deploy.",
    ):
        await post(client, title="Database", context={"text": text})
    for text in (
        "The dentist moved my appointment to Friday at nine at the clinic.",
        "Hana's dentist check-up is on Friday too; bring her insurance card.",
        "Dentist said to floss daily; next visit at the clinic in six months.",
    ):
        await post(client, title="Dentist", context={"text": text})
    assert await labels_of(client, mine) == []
    assert await labels_of(client, plain) == []

    answer = await ask(client, "When is my dentist appointment?", agent())
    explain = answer["explain"]
    assert explain["signals"]["domain"]["name"] == "personal"
    assert explain["signals"]["domain"]["isolating"] is True
    dropped = {item["record_id"]: item for item in explain["dropped"]}
    assert dropped[str(plain)]["reason"] == "isolated_domain"
    assert dropped[str(plain)]["evidence"].startswith(
        "unlabelled, not judged personal (isolated from every domain): judged "
    )
    assert str(mine) in {item["record_id"] for item in explain["selected"]}, dropped.get(
        str(mine), {}
    ).get("evidence")

    technical = (await ask(client, PG, agent()))["explain"]
    assert technical["signals"]["domain"]["isolating"] is True
    assert str(plain) in {item["record_id"] for item in technical["selected"]}


async def labels_of(client: httpx.AsyncClient, record: uuid.UUID) -> list[str]:
    response = await client.get(f"/breadcrumbs/{record}")
    assert response.status_code == 200, response.text
    return list(response.json()["domains"])
