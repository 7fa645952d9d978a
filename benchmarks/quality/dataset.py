"""LoCoMo conversations (``locomo10_v2`` layout): dated sessions of turns, and questions
whose evidence is a list of turn ids (``dia_id``)."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

SESSION_KEY = re.compile(r"session_(\d+)")
DIA_ID = re.compile(r"D:?(\d+):(\d+)")
SCORED_CATEGORIES = (1, 2, 3, 4)  # 5 (adversarial) has no evidence-based answer
CATEGORY_NAMES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop"}


@dataclass(frozen=True, slots=True)
class Turn:
    dia_id: str
    speaker: str
    text: str
    date: str  # the session's date and time, as the dataset gives it
    session: int
    image: str | None = None  # BLIP caption of a shared photo

    @property
    def content(self) -> str:
        """What the speaker said, with the photo they shared (as LoCoMo's own prompts do)."""
        return f"{self.text} [shares {self.image}]" if self.image else self.text


@dataclass(frozen=True, slots=True)
class Question:
    number: int
    text: str
    category: int
    evidence: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Conversation:
    conv_id: str
    turns: tuple[Turn, ...]  # in conversation order
    questions: tuple[Question, ...]  # categories 1-4 with at least one known evidence turn
    unresolved_evidence: int  # evidence ids that name no turn (typos in the dataset)
    skipped_questions: int  # categories 1-4 left without any known evidence turn


def load_conversation(path: Path) -> Conversation:
    raw: dict[str, Any] = json.loads(path.read_text())
    turns = tuple(_turns(raw))
    known = {turn.dia_id for turn in turns}
    questions: list[Question] = []
    unresolved = skipped = 0
    for number, qa in enumerate(raw["qa"]):
        if qa.get("category") not in SCORED_CATEGORIES:
            continue
        evidence, malformed = _evidence_ids(qa.get("evidence") or [])
        found = tuple(dict.fromkeys(e for e in evidence if e in known))
        unresolved += malformed + len([e for e in evidence if e not in known])
        if not found:
            skipped += 1
            continue
        questions.append(Question(number, str(qa["question"]), int(qa["category"]), found))
    return Conversation(path.stem, turns, tuple(questions), unresolved, skipped)


def _turns(raw: dict[str, Any]) -> list[Turn]:
    sessions = sorted(
        (int(match.group(1)), key)
        for key in raw
        if (match := SESSION_KEY.fullmatch(key)) and isinstance(raw[key], list)
    )
    return [
        Turn(
            dia_id=item["dia_id"],
            speaker=item["speaker"],
            text=item["text"],
            date=raw.get(f"{key}_date_time", ""),
            session=number,
            image=item.get("blip_caption"),
        )
        for number, key in sessions
        for item in raw[key]
    ]


def _evidence_ids(evidence: list[str]) -> tuple[list[str], int]:
    """Normalised turn ids (``"D8:6; D9:17"`` is two ids, ``"D:11:26"`` is ``D11:26``) and
    how many entries hold no id at all."""
    ids: list[str] = []
    malformed = 0
    for entry in evidence:
        found = [f"D{a}:{b}" for a, b in DIA_ID.findall(entry)]
        malformed += not found
        ids += found
    return ids, malformed
