"""Debug resolution paths (seed 002, Laminark): how a session's problem was solved, kept so
the next agent that meets the same error gets the fix as context.

This package holds the deterministic core so far: what a record says about a debugging
session (:mod:`.signals`), which error it is (:mod:`.signature`) and how a session's path
moves from one record to the next (:mod:`.machine`). All pure functions over plain data.
"""
