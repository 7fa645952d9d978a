"""Many creates in one request and one transaction, each answered on its own.

Each record goes through the single create's steps (``BreadcrumbWriter.prepare_create``,
``derive_created``, ``insert_created``); only the derivation runs once for the whole batch:
one render pass, and embedding calls of a forward pass (32 texts) each. A record that a
single create would refuse gets that refusal as its result and is not written; the others are
(with ``atomic``, one refusal writes nothing). Refusals all come before a record's first
write, so a refused record leaves nothing behind in the shared transaction.

Records are stamped a microsecond apart in the request's order, so that order survives as
``created_at`` order. Idempotency keys mean what they mean for single creates, across both
routes. Within one batch a key seen again with the same body replays the first record's
result; with another body it is a 409 for that record.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from pydantic import ValidationError

from cairn.breadcrumbs import idempotency
from cairn.breadcrumbs.schemas import BatchItemResult, BatchResult, BreadcrumbCreate, CreatedResult
from cairn.breadcrumbs.service import BreadcrumbWriter, PendingCreate
from cairn.errors import CairnError, InvalidInput, PayloadTooLarge

KEY_FIELD = "idempotency_key"
CREATED, REPLAYED = 201, 200


@dataclass
class _Batch:
    """Where each record of a batch stands while it is written."""

    results: dict[int, BatchItemResult] = field(default_factory=dict)
    pending: list[tuple[int, PendingCreate]] = field(default_factory=list)
    first_with_key: dict[str, tuple[int, str]] = field(default_factory=dict)  # index, hash
    repeats: list[tuple[int, int]] = field(default_factory=list)  # index, index of the first

    def failed(self) -> list[BatchItemResult]:
        return [r for _, r in sorted(self.results.items()) if r.status >= 400]


async def create_batch(
    writer: BreadcrumbWriter, records: Sequence[dict[str, Any]], *, atomic: bool = False
) -> BatchResult:
    most = writer.limits.max_batch_records
    if len(records) > most:
        raise PayloadTooLarge(f"records: {len(records)} in one batch, the limit is {most}")
    batch = _Batch()
    for index, record in enumerate(records):
        await _prepare(writer, batch, index, record)
    if atomic and batch.failed():
        raise _refused(batch, len(records))
    _stamp_in_order(batch.pending)
    await writer.derive_created([pending for _, pending in batch.pending])
    for index, pending in batch.pending:
        batch.results[index] = await _insert(writer, index, pending)
    for index, first in batch.repeats:
        batch.results[index] = _repeated(batch.results[first], index)
    if atomic and batch.failed():
        raise _refused(batch, len(records))
    return _summary([batch.results[index] for index in range(len(records))])


async def _prepare(
    writer: BreadcrumbWriter, batch: _Batch, index: int, record: dict[str, Any]
) -> None:
    try:
        body, key = _parsed(record)
        prepared = await writer.prepare_create(body, key)
    except CairnError as error:
        batch.results[index] = _refusal(index, error)
        return
    if isinstance(prepared, CreatedResult):
        batch.results[index] = _answer(index, prepared, REPLAYED)
        return
    if key is not None and key in batch.first_with_key:
        first, request_hash = batch.first_with_key[key]
        if request_hash != prepared.request_hash:
            batch.results[index] = _refusal(index, idempotency.conflict(key))
        else:
            batch.repeats.append((index, first))
        return
    if key is not None:
        batch.first_with_key[key] = (index, prepared.request_hash)
    batch.pending.append((index, prepared))


async def _insert(writer: BreadcrumbWriter, index: int, pending: PendingCreate) -> BatchItemResult:
    try:
        result = await writer.insert_created(pending)
    except CairnError as error:
        return _refusal(index, error)
    return _answer(index, result, CREATED if result.id == pending.id else REPLAYED)


def _stamp_in_order(pending: Sequence[tuple[int, PendingCreate]]) -> None:
    """One transaction would give every record the same ``created_at``, and ties fall back
    to the random ids: a session imported in one batch would lose its order (the temporal
    edges and the recent-records seeds follow it). A microsecond apart keeps it."""
    start = datetime.now(UTC)
    for offset, (_, each) in enumerate(pending):
        each.values["created_at"] = start + timedelta(microseconds=offset)


def _parsed(record: dict[str, Any]) -> tuple[BreadcrumbCreate, str | None]:
    """The create body and the key of one record; its problems as one 422."""
    key = record.get(KEY_FIELD)
    if key is not None and not isinstance(key, str):
        raise InvalidInput(f"{KEY_FIELD}: must be a string")
    try:
        return BreadcrumbCreate.model_validate(record), key
    except ValidationError as error:
        problems = [
            f"{'.'.join(str(part) for part in problem['loc'])}: {problem['msg']}"
            for problem in error.errors()
        ]
        raise InvalidInput("; ".join(problems)[:2000]) from error


def _answer(index: int, result: CreatedResult, status: int) -> BatchItemResult:
    return BatchItemResult(index=index, status=status, id=result.id, version=result.version)


def _refusal(index: int, error: CairnError) -> BatchItemResult:
    return BatchItemResult(
        index=index, status=error.status_code, error=error.code, detail=error.detail
    )


def _repeated(first: BatchItemResult, index: int) -> BatchItemResult:
    """A record repeating an earlier one's key and body: that record's answer, replayed."""
    status = REPLAYED if first.status == CREATED else first.status
    return first.model_copy(update={"index": index, "status": status})


def _refused(batch: _Batch, total: int) -> InvalidInput:
    failed = batch.failed()
    return InvalidInput(
        f"{len(failed)} of {total} records were refused; with atomic=true nothing was written",
        extra={"results": [result.model_dump(mode="json") for result in failed]},
    )


def _summary(results: list[BatchItemResult]) -> BatchResult:
    def count(status: int) -> int:
        return sum(result.status == status for result in results)

    failed = len(results) - count(CREATED) - count(REPLAYED)
    return BatchResult(
        results=results, created=count(CREATED), replayed=count(REPLAYED), failed=failed
    )
