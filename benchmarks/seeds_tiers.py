"""How many of the word nominations' records a bound on the trigger's words could skip
(issue 20): ``seeds_stage.py --tiers`` runs this per trigger, with the semantic statement's
own parameters.

Both nominations' first sort keys grow with how many of the trigger's words a record holds:
``by_keyword`` orders by the pointers it shares, ``by_text`` by ``ts_rank``, in which (every
lexeme of a generated ``search_vector`` has weight D) a record holding two of the query's
lexemes outranks every record holding one (each lexeme adds 0.0608-0.0998 over the query's
size). So when at least a pool of records holds two, a nomination need not read the others,
and the seeds stay the same. Whether that pays is how many of the nominations' records hold
two: counted here.
"""

from __future__ import annotations

import statistics
from typing import Any

_FINAL = "SELECT id, similarity, lexical, score, isolated FROM kept ORDER BY score DESC, id::text"

# Per trigger: its uncommon lexemes, the records both nominations read, those each matches,
# and of those the records holding two or more of the trigger's pointers / uncommon lexemes.
_TIERS = """
    SELECT (SELECT count(*) FROM terms
            WHERE NOT (lexeme = ANY(CAST(:common_lexemes AS text[])))) AS terms,
           cardinality(CAST(:rare_pointers AS text[])) AS rare_pointers,
           count(*) AS read, count(*) FILTER (WHERE shared IS NOT NULL) AS keyword,
           count(*) FILTER (WHERE rank IS NOT NULL) AS text,
           count(*) FILTER (WHERE shared >= 2) AS keyword_two,
           count(*) FILTER (WHERE rank IS NOT NULL AND held >= 2) AS text_two,
           count(*) FILTER (WHERE shared >= 2 OR (rank IS NOT NULL AND held >= 2)) AS read_two
    FROM (
        SELECT nominations.*,
               (SELECT count(*) FROM unnest(tsvector_to_array(breadcrumbs.search_vector)) word
                WHERE word IN (SELECT lexeme FROM terms)
                  AND NOT (word = ANY(CAST(:common_lexemes AS text[])))) AS held
        FROM nominations JOIN breadcrumbs USING (id)
    ) counted
"""
COLUMNS = ("terms", "rare_pointers", "read", "keyword", "text", "keyword_two", "text_two",
           "read_two")  # fmt: skip


def tier_sql(hybrid: str) -> str:
    """The semantic statement with its result replaced by the tier counts."""
    assert _FINAL in hybrid and "nominations AS MATERIALIZED" in hybrid
    return hybrid.replace(_FINAL, _TIERS)


def report(tiers: list[list[int]], pool: int = 50) -> str:
    """How many triggers a two-word bound could serve, and how many records it would read."""
    rows = [dict(zip(COLUMNS, t, strict=True)) for t in tiers]
    both = [r for r in rows if r["keyword_two"] >= pool and r["text_two"] >= pool]
    single = sum(r["terms"] <= 1 for r in rows)
    read = statistics.median(r["read"] for r in rows)
    lines = [
        f"word nominations of {len(rows)} triggers: records read (both nominations, one pass)"
        f" median {read:.0f}; triggers with one uncommon lexeme (no two-word tier): {single}",
        f"triggers where both nominations have >= {pool} records holding two of the words:"
        f" {len(both)}; of those, records a two-word bound would still read: median"
        f" {statistics.median(r['read_two'] for r in both) if both else 0:.0f}"
        f" of {statistics.median(r['read'] for r in both) if both else 0:.0f}",
    ]
    return "\n".join(lines)


def summary(row: dict[str, Any]) -> list[int]:
    return [int(row[c]) for c in COLUMNS]
