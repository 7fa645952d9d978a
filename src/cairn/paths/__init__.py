"""Debug resolution paths (seed 002, Laminark): how a session's problem was solved, kept so
the next agent that meets the same error gets the fix as context.

The rules are pure functions over plain data: what a record says about a debugging session
(:mod:`.signals`), which error it is (:mod:`.signature`), how a session's path moves from
one record to the next (:mod:`.machine`) and the resolution's summary (:mod:`.summary`).
The worker applies them per session under a lock (:mod:`.tracking`) and stores paths and
waypoints as records Cairn derives itself (:mod:`.store`, :mod:`.repository`).
"""
