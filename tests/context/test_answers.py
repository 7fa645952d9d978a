"""The on-demand answer cache in memory: served until the tenant changes, settled, capped
in age, and dropped whole on a NATS reconnection."""

from __future__ import annotations

import uuid

from cairn.context.answers import AnswerCache

A, B = uuid.uuid4(), uuid.uuid4()
ANSWER = {"formatted_context": "x"}


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def cache(clock: Clock, *, ttl_s: float = 60.0, settle_s: float = 5.0) -> AnswerCache:
    return AnswerCache(10, ttl_s, settle_s, clock)


def test_an_answer_is_served_until_an_event_of_its_tenant() -> None:
    answers = cache(Clock())
    assert answers.put("k", answers.ticket(A), ANSWER)
    assert answers.get(A, "k") == ANSWER
    answers.on_event({"owner_id": str(B), "type": "breadcrumb.created"})
    assert answers.get(A, "k") == ANSWER  # another tenant's change
    answers.on_event({"owner_id": str(A), "type": "breadcrumb.created"})
    assert answers.get(A, "k") is None


def test_an_answer_computed_across_a_change_is_not_stored() -> None:
    clock = Clock()
    answers = cache(clock)
    ticket = answers.ticket(A)
    answers.changed(A)  # committed while the answer was being assembled
    clock.now += 10
    assert not answers.put("k", ticket, ANSWER)
    assert answers.get(A, "k") is None


def test_no_answer_is_stored_while_a_change_settles() -> None:
    clock = Clock()
    answers = cache(clock, settle_s=5.0)
    answers.changed(A)
    assert not answers.put("k", answers.ticket(A), ANSWER)  # edges may still be built
    clock.now += 5.0
    assert answers.put("k", answers.ticket(A), ANSWER)


def test_answers_expire_after_the_ttl() -> None:
    clock = Clock()
    answers = cache(clock, ttl_s=60.0)
    answers.put("k", answers.ticket(A), ANSWER)
    clock.now += 59.9
    assert answers.get(A, "k") == ANSWER
    clock.now += 0.2
    assert answers.get(A, "k") is None


def test_a_reconnection_drops_every_answer() -> None:
    answers = cache(Clock())
    answers.put("k", answers.ticket(A), ANSWER)
    answers.put("k", answers.ticket(B), ANSWER)
    stale = answers.ticket(A)
    answers.clear()
    assert answers.get(A, "k") is None and answers.get(B, "k") is None
    assert not answers.put("k", stale, ANSWER)


def test_events_without_a_tenant_are_ignored() -> None:
    answers = cache(Clock())
    answers.put("k", answers.ticket(A), ANSWER)
    assert not answers.on_event({"owner_id": "not-a-uuid"})
    assert answers.get(A, "k") == ANSWER


def test_size_zero_turns_the_cache_off() -> None:
    answers = AnswerCache(0, 60.0, 0.0)
    assert not answers.put("k", answers.ticket(A), ANSWER)
    assert answers.get(A, "k") is None
