"""The garbage collector's settings for Cairn's long-running processes.

One assembly allocates a few hundred thousand short-lived objects (rows, records, paths,
explain entries). With CPython's default thresholds (700, 10, 10) that is thousands of
young collections per second, and the few survivors of each — pooled connections, cached
records and blocks — are promoted until a full collection walks every long-lived object in
the process: pauses of 10-60 ms (200+ ms with a large heap) in the middle of an assembly,
which were most of the p99 of the 10k benchmark. So the processes freeze what start-up built
(imported modules and their tables never become garbage), and collect young objects every
20,000 allocations instead of 700: short-lived objects die by reference counting before a
collection sees them, and full collections become rare. Cyclic garbage is still collected,
at the next collection of its generation; frozen objects are start-up state that lives as
long as the process.

Every collection is timed on ``/metrics`` (``cairn_gc_pause_seconds{generation}``): whether
a pause coincides with a latency (an SSE fan-out, an assembly) is then a question the
process answers itself.
"""

from __future__ import annotations

import gc
import time
from typing import Any

from prometheus_client import Histogram

THRESHOLDS = (20_000, 20, 10)

PAUSES = Histogram(
    "cairn_gc_pause_seconds",
    "Garbage collections and how long each stopped the process, by generation",
    ["generation"],
    buckets=(0.0005, 0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.25, 1.0),
)
_started: list[float] = []


def _time_collection(phase: str, info: dict[str, Any]) -> None:
    if phase == "start":
        _started[:] = [time.perf_counter()]
    elif _started:
        PAUSES.labels(str(info.get("generation"))).observe(time.perf_counter() - _started[0])
        _started.clear()


def tune_collector() -> None:
    """Freeze everything alive now out of the collector's sight, then raise its thresholds.
    For process entry points only (``cairn serve``, ``worker``, ``up``), after imports."""
    gc.collect()
    gc.freeze()
    gc.set_threshold(*THRESHOLDS)
    if _time_collection not in gc.callbacks:
        gc.callbacks.append(_time_collection)


def settle() -> None:
    """Freeze what a tuned process built while starting (migrations, the schema and table
    objects, the model and tokenizers, pools, caches' structures): it lives as long as the
    process, and left in the oldest generation it made each full collection walk it — six
    full collections of 150-280 ms in `cairn up` under 1,500 posts. A process that did not
    call ``tune_collector`` (tests, embedders of the library) is left as it is."""
    if _time_collection in gc.callbacks:  # tune_collector ran
        gc.collect()
        gc.freeze()
