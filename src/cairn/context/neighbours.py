"""Votes of a text's nearest labelled records, for what a domain definition cannot place.

**Neighbours** place what the definition's words and examples cannot: a question about
coffee names no trigger and sits far from every example centroid, yet the tenant's records
nearest to it are labelled. Each of the :data:`NEIGHBOURS` nearest labelled records votes for
its labels with weight ``cosine - NEIGHBOUR_BASE`` (nothing at or below the base); a
domain's vote is its share of the weight, scaled down while the total weight is below
:data:`NEIGHBOUR_MASS` (a few distant neighbours say little): ``neighbours = share *
min(1, total / NEIGHBOUR_MASS)``, combined with the direct score like the other kinds,
``1 - (1 - score) * (1 - neighbours)``. A trigger the direct scores do not place above
``min_confidence`` is classified so; a record the direct scores leave unlabelled takes the
best combined domain only at :data:`NEIGHBOUR_LABEL_FLOOR` or above, because a stored label
isolates the record from every assembly of the domains isolated from it. On the isolation
corpus (benchmarks/quality/isolation/), each of the 34 records its content leaves unlabelled
judged by all the other records: at 0.9, 6 are labelled, all with their true domain; from
0.8 down, "general" records (a catch-all with few labelled records) start taking their
neighbours' domains (1 wrong of 7 at 0.8, 8 of 16 at 0.3).
"""

from __future__ import annotations

from collections.abc import Container, Mapping, Sequence
from dataclasses import dataclass

NEIGHBOURS = 10  # nearest labelled records that vote
NEIGHBOUR_BASE = 0.25  # cosine at or below which a neighbour has no say
NEIGHBOUR_MASS = 0.5  # total vote weight from which the neighbours count in full
NEIGHBOUR_LABEL_FLOOR = 0.9  # a record's label by its neighbours needs near agreement


@dataclass(frozen=True, slots=True)
class Neighbour:
    """A labelled record near the text being classified, and how near (cosine)."""

    record_id: str
    similarity: float
    labels: tuple[str, ...]


def neighbour_votes(neighbours: Sequence[Neighbour], names: Container[str]) -> dict[str, float]:
    """Each domain of ``names``' share of the neighbours' weight, scaled by the total."""
    weights: dict[str, float] = {}
    for neighbour in neighbours:
        labels = [label for label in neighbour.labels if label in names]
        weight = neighbour.similarity - NEIGHBOUR_BASE
        if weight <= 0.0 or not labels:
            continue
        for label in labels:
            weights[label] = weights.get(label, 0.0) + weight / len(labels)
    total = sum(weights.values())
    if total <= 0.0:
        return {}
    strength = min(1.0, total / NEIGHBOUR_MASS)
    return {name: weight / total * strength for name, weight in weights.items()}


def combined(scores: Mapping[str, float], votes: Mapping[str, float]) -> dict[str, float]:
    """The direct scores with the votes, combined as the direct kinds of evidence are."""
    return {
        name: round(1.0 - (1.0 - score) * (1.0 - votes.get(name, 0.0)), 4)
        for name, score in scores.items()
    }


def neighbour_evidence(
    name: str, votes: Mapping[str, float], neighbours: Sequence[Neighbour]
) -> list[str]:
    """What the neighbours said for domain ``name``: the vote, and the nearest voters."""
    if name not in votes:
        return []
    voters = [n for n in neighbours if name in n.labels and n.similarity > NEIGHBOUR_BASE]
    return [
        f"neighbours {votes[name]:.3f} ({len(voters)} of {len(neighbours)})",
        *(f"neighbour {n.record_id} cosine {n.similarity:.3f}" for n in voters[:3]),
    ]
