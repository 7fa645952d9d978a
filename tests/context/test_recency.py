"""Recency decay by the record's domain half-life."""

from __future__ import annotations

from datetime import timedelta

import pytest
from hypothesis import given, strategies as st
from tests.context.helpers import EPOCH, record, rid

from cairn.context import Record, Seed
from cairn.context.recency import decay, with_recency


def test_a_half_life_halves() -> None:
    assert decay(0, 14) == 1.0
    assert decay(14, 14) == pytest.approx(0.5)
    assert decay(28, 14) == pytest.approx(0.25)
    assert decay(-3, 14) == 1.0  # newer than the trigger: not boosted
    with pytest.raises(ValueError, match="positive"):
        decay(1, 0)


@given(st.floats(0, 10_000), st.floats(0, 10_000), st.floats(0.01, 1000))
def test_older_never_scores_higher(a: float, b: float, half_life: float) -> None:
    younger, older = sorted((a, b))
    assert 0.0 <= decay(older, half_life) <= decay(younger, half_life) <= 1.0


def test_only_seeds_of_a_domain_with_a_half_life_decay() -> None:
    now = EPOCH + timedelta(days=30)
    records = {
        rid(1): record(1, created_at=now),
        rid(2): record(2, created_at=now - timedelta(days=14)),  # personal, 14 d old
        rid(3): record(3, created_at=now - timedelta(days=14)),  # technical: no half-life
    }
    domains = {rid(2): 14.0}

    def half_life(item: Record) -> float | None:
        return domains.get(item.id)

    seeds = [
        Seed(rid(1), "trigger", 1.0, "the trigger"),
        Seed(rid(2), "semantic", 0.8, "similarity 0.8"),
        Seed(rid(3), "semantic", 0.8, "similarity 0.8"),
        Seed(rid(9), "semantic", 0.8),  # not loaded: left as it is
    ]
    out = with_recency(seeds, records, half_life, now)
    assert [s.record_id for s in out] == [s.record_id for s in seeds]
    assert out[0] == seeds[0] and out[2] == seeds[2] and out[3] == seeds[3]
    assert out[1].score == pytest.approx(0.4)
    assert "recency x0.500: 14.0 days old, half-life 14 days" in out[1].detail
