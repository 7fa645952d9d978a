"""Recency decay: in a time-sensitive domain, an older record counts for less.

A domain may declare a half-life (``recency_half_life_days`` in ``context.domains.v1``).
A seed whose record is labelled with such a domain has its score multiplied by
``0.5 ** (age / half_life)``, where ``age`` is how much older than the trigger the record
is (a record newer than the trigger is not boosted); with several such labels, the
shortest half-life applies. The seed's detail says by how much and why, so the explanation
shows that a record was found relevant but aged. Seeds of the trigger and records of
domains without a half-life are untouched.

Only seeds decay: the graph walk reaches records through them, so an aged seed pulls its
neighbours down with it, while a graph neighbour's own age does not count.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from datetime import datetime
from uuid import UUID

from cairn.context.model import TRIGGER_SOURCE, Record, Seed

SECONDS_PER_DAY = 86_400.0


def decay(age_days: float, half_life_days: float) -> float:
    """The factor a score keeps after ``age_days`` (1.0 for no age, 0.5 at one half-life)."""
    if half_life_days <= 0:
        raise ValueError(f"a half-life must be positive, got {half_life_days!r}")
    return float(0.5 ** (max(0.0, age_days) / half_life_days))


def with_recency(
    seeds: list[Seed],
    records: Mapping[UUID, Record],
    half_life_of: Callable[[Record], float | None],
    now: datetime,
) -> list[Seed]:
    """``seeds`` with each aged seed's score decayed (order unchanged). ``now`` is the
    trigger's time; ``half_life_of`` gives a record's half-life in days, if any."""
    decayed: list[Seed] = []
    for seed in seeds:
        record = records.get(seed.record_id)
        half_life = (
            None if record is None or seed.source == TRIGGER_SOURCE else half_life_of(record)
        )
        if record is None or half_life is None:
            decayed.append(seed)
            continue
        age = (now - record.created_at).total_seconds() / SECONDS_PER_DAY
        factor = decay(age, half_life)
        if factor >= 1.0:
            decayed.append(seed)
            continue
        note = f"recency x{factor:.3f}: {age:.1f} days old, half-life {half_life:g} days"
        detail = f"{seed.detail}; {note}" if seed.detail else note
        decayed.append(dataclasses.replace(seed, score=seed.score * factor, detail=detail))
    return decayed
