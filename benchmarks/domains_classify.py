"""How long one domain classification takes: a 2,200-character text against the three
domains of Echo Brain's example, with example centroids, tags and an embedding (the work an
assembly does in its signals stage when the tenant defined domains).

    PYTHONPATH=$PWD/src .venv/bin/python benchmarks/domains_classify.py

Prints the best and the median of ten rounds of 200 calls, per call in microseconds.
"""

from __future__ import annotations

import statistics
import sys
import timeit
from functools import partial
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.context.test_domains import ECHO_BRAIN, LORA_QUESTION, PG_QUESTION

from cairn.context.domains import examples, parse_domains


def main() -> None:
    rng = np.random.default_rng(7)
    centroids = {name: rng.standard_normal(384).astype(np.float32) for name in examples(ECHO_BRAIN)}
    domains = parse_domains(ECHO_BRAIN, version="v1", centroids=centroids)
    text = " ".join([PG_QUESTION, LORA_QUESTION] * 20)
    vector = rng.standard_normal(384).astype(np.float32)
    call = partial(domains.classify, text, ["session:x", "area:infra"], vector)
    rounds = [t / 200 * 1e6 for t in timeit.repeat(call, number=200, repeat=10)]
    print(f"classify, {len(text)} characters: best {min(rounds):.0f} us, "
          f"median {statistics.median(rounds):.0f} us per call")  # fmt: skip


if __name__ == "__main__":
    main()
