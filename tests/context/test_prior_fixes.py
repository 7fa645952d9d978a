"""Prior fixes without a database: the ``paths`` source's option, which triggers report an
error, and how a resolved path reads in the context and where the classic layout puts it."""

from __future__ import annotations

from tests.context.helpers import record, rid

from cairn.context.model import Section
from cairn.context.prior_fixes import prior_fix_block
from cairn.context.render import section_of
from cairn.context.sources.paths import (
    DEFAULT_LIMIT,
    DEFAULT_MIN_SIMILARITY,
    PathsConfig,
    enabled,
    parse,
    trigger_signature,
    words_of,
)
from cairn.context.trigger import query_trigger

RESOLVED = {
    "status": "resolved",
    "signature": "KeyError: 'user_id'",
    "kiss_summary": "When KeyError: 'user_id': read row.get('user_id') (`edit`).",
    "root_cause": "KeyError: 'user_id'",
    "what_fixed_it": "read row.get('user_id') (`edit`)",
}


def test_the_option_is_off_unless_the_agent_lists_it() -> None:
    assert parse(None) is None and not enabled({})
    assert parse({"enabled": False}) is None
    assert parse({}) == PathsConfig(DEFAULT_LIMIT, DEFAULT_MIN_SIMILARITY)
    assert parse({"limit": 500, "min_similarity": 0.5}) == PathsConfig(20, 0.5)
    assert parse({"limit": "3", "min_similarity": True}) == PathsConfig()
    assert enabled({"paths": {"enabled": True}})


def test_only_a_trigger_that_reports_an_error_has_a_signature() -> None:
    output = "Traceback (most recent call last):\nKeyError: 'user_id'"
    context = {"command": "python export.py", "exit_code": 1, "output": output}
    failed = record(1, schema_name="tool.response.v1", title="ran it", context=context)
    assert trigger_signature(failed) == "KeyError: 'user_id'"
    chat = record(2, schema_name="user.message.v1", context={"content": "How was your trip?"})
    assert trigger_signature(chat) is None
    asked = query_trigger(rid(9), "why do I get npm ERR! code ERESOLVE?", None, None)
    assert trigger_signature(asked.record, asked.text) == "why do I get npm ERR! code ERESOLVE?"


def test_masks_are_no_words() -> None:
    assert words_of("FAILED <path>::test_total - assert <n> == <n> at <id>").split() == [
        "FAILED", "::test_total", "-", "assert", "==", "at",
    ]  # fmt: skip


def test_a_resolved_path_reads_as_its_fix_with_its_id() -> None:
    path = record(3, schema_name="debug.path.v1", title="Debug path (resolved): KeyError",
                  context={**RESOLVED, "session": "session:a", "successes": 3})  # fmt: skip
    block = prior_fix_block(path)
    assert block.splitlines() == [
        "⟦item · debug.path.v1 · Debug path (resolved): KeyError⟧",
        f"Fixed before (path {rid(3)}): {RESOLVED['kiss_summary']}",
        f"Root cause: {RESOLVED['root_cause']}",
        f"What fixed it: {RESOLVED['what_fixed_it']}",
    ]
    assert "successes" not in block  # the tracker's state stays out


def test_the_classic_layout_places_resolved_paths_as_prior_fixes_when_asked() -> None:
    resolved = record(4, schema_name="debug.path.v1", context=RESOLVED)
    active = record(5, schema_name="debug.path.v1", context={**RESOLVED, "status": "active"})
    none: frozenset[str] = frozenset()
    assert section_of(resolved, None, none, prior_fixes=True) is Section.prior_fixes
    assert section_of(active, None, none, prior_fixes=True) is Section.additional
    # Agents without the source see paths where they always did.
    assert section_of(resolved, None, none) is Section.additional
