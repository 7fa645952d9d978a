"""The MiniLM encoder's ceiling per configuration: graph, threads, length bucketing.

Every configuration encodes the same workloads: the ingest benchmark's post texts one at a
time and in batches of 8 and 32, and LoCoMo dev turns (2 to ~100 word-pieces, shuffled) in
batches of 32. Configurations take turns within each repetition, so a busy machine slows
them alike; the table gives medians of texts per wall-clock second and texts per CPU second
(all threads of the process), which a shared machine disturbs far less. Before timing, each
configuration's vectors are compared with the sentence-transformers reference fixture.

    .venv/bin/python benchmarks/encoder.py --reps 5
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "benchmarks"))

from ingest import post_texts  # noqa: E402
from quality.dataset import load_conversation  # noqa: E402

from cairn.embedding import (  # noqa: E402
    FUSED_MODEL_FILE,
    MODEL_FILE,
    OnnxEncoder,
    build_onnx_model,
    ensure_model,
)

FIXTURES = REPO.parent / "shared" / "fixtures"


class UnbucketedEncoder(OnnxEncoder):
    """Pads a whole batch to its longest text, as the encoder did before length groups."""

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return super().encode(texts)
        return self._run(self.token_ids(texts))


@dataclass(frozen=True)
class Config:
    name: str
    model_file: str
    threads: int
    bucketed: bool = True

    def load(self, model_dir: Path) -> OnnxEncoder:
        cls = OnnxEncoder if self.bucketed else UnbucketedEncoder
        return cls(model_dir, threads=self.threads, model_file=self.model_file)


CONFIGS = {
    c.name: c
    for c in [
        Config("standard", MODEL_FILE, threads=2),
        Config("standard-unbucketed", MODEL_FILE, threads=2, bucketed=False),
        Config("standard-1thread", MODEL_FILE, threads=1),
        Config("fused", FUSED_MODEL_FILE, threads=2),
        Config("fused-1thread", FUSED_MODEL_FILE, threads=1),
    ]
}


@dataclass(frozen=True)
class Workload:
    name: str
    texts: list[str]
    batch: int


def workloads(size: int) -> list[Workload]:
    posts = post_texts(size)
    turns = [
        turn.content
        for path in sorted((FIXTURES / "locomo-dev").glob("*.json"))
        for turn in load_conversation(path).turns
    ]
    random.Random(7).shuffle(turns)
    return [
        Workload("batch 1", posts[: max(size // 4, 8)], 1),
        Workload("batch 8", posts, 8),
        Workload("batch 32", posts, 32),
        Workload("LoCoMo turns, batch 32", turns[: size * 2], 32),
    ]


def timed(encoder: OnnxEncoder, work: Workload) -> tuple[float, float]:
    """(wall seconds, process CPU seconds) to encode the workload."""
    wall, cpu = time.perf_counter(), time.process_time()
    for start in range(0, len(work.texts), work.batch):
        encoder.encode(work.texts[start : start + work.batch])
    return time.perf_counter() - wall, time.process_time() - cpu


def min_cosine(encoder: OnnxEncoder, batch: int) -> float:
    cases = json.loads((FIXTURES / "minilm_reference.json").read_text())["cases"]
    texts = [c["text"] for c in cases]
    vectors = np.vstack([encoder.encode(texts[i : i + batch]) for i in range(0, len(texts), batch)])
    reference = np.asarray([c["embedding"] for c in cases], dtype=np.float64)
    reference /= np.linalg.norm(reference, axis=1, keepdims=True)
    return float(np.min(np.sum(vectors * reference, axis=1)))


def measure(
    encoders: dict[str, OnnxEncoder], works: list[Workload], reps: int, log: Callable[[str], None]
) -> dict[str, dict[str, dict[str, list[float]]]]:
    samples: dict[str, dict[str, dict[str, list[float]]]] = {
        name: {w.name: {"wall": [], "cpu": []} for w in works} for name in encoders
    }
    names = list(encoders)
    for rep in range(reps):
        order = names[rep % len(names) :] + names[: rep % len(names)]  # rotate who goes first
        for work in works:
            for name in order:
                wall, cpu = timed(encoders[name], work)
                samples[name][work.name]["wall"].append(len(work.texts) / wall)
                samples[name][work.name]["cpu"].append(len(work.texts) / cpu)
        log(f"repetition {rep + 1}/{reps} done")
    return samples


def summarise(
    samples: dict[str, dict[str, dict[str, list[float]]]], baseline: str
) -> dict[str, dict[str, dict[str, float]]]:
    table: dict[str, dict[str, dict[str, float]]] = {}
    for name, per_work in samples.items():
        table[name] = {}
        for work, series in per_work.items():
            wall, cpu = statistics.median(series["wall"]), statistics.median(series["cpu"])
            base = samples[baseline][work]
            table[name][work] = {
                "texts_per_s": round(wall, 1),
                "texts_per_cpu_s": round(cpu, 1),
                "wall_vs_baseline": round(wall / statistics.median(base["wall"]), 3),
                "cpu_vs_baseline": round(cpu / statistics.median(base["cpu"]), 3),
            }
    return table


def markdown(table: dict[str, dict[str, dict[str, float]]], cosines: dict[str, float]) -> str:
    works = list(next(iter(table.values())))
    head = "| configuration | min cosine | " + " | ".join(works) + " |"
    lines = [head, "|" + "---|" * (len(works) + 2)]
    for name, per_work in table.items():
        cells = [
            f"{r['texts_per_s']:.0f}/s ({r['wall_vs_baseline']:.2f}x), "
            f"{r['texts_per_cpu_s']:.0f}/cpu-s ({r['cpu_vs_baseline']:.2f}x)"
            for r in per_work.values()
        ]
        lines.append(f"| {name} | {cosines[name]:.7f} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def prepare_models(model_dir: Path) -> None:
    """The shipped (standard-op) graph and the fused one side by side in ``model_dir``."""
    from cairn.embedding import weights_dir

    ensure_model(model_dir)
    build_onnx_model(weights_dir(), model_dir / FUSED_MODEL_FILE, fused=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=5)
    parser.add_argument("--size", type=int, default=256, help="post texts per batched workload")
    parser.add_argument("--configs", default=",".join(CONFIGS), help="comma-separated names")
    parser.add_argument("--out", type=Path, default=REPO / "benchmarks/results/encoder.json")
    args = parser.parse_args()
    chosen = [CONFIGS[name] for name in args.configs.split(",")]
    load_at_start = os.getloadavg()
    log = lambda message: print(message, file=sys.stderr, flush=True)  # noqa: E731
    with tempfile.TemporaryDirectory(prefix="cairn-encoder-") as tmp:
        model_dir = Path(tmp)
        prepare_models(model_dir)
        encoders = {c.name: c.load(model_dir) for c in chosen}
        cosines = {name: round(min_cosine(e, 8), 7) for name, e in encoders.items()}
        log(f"min cosine to the reference: {cosines}")
        works = workloads(args.size)
        for encoder in encoders.values():
            timed(encoder, Workload("warm-up", works[-1].texts[:64], 32))
        samples = measure(encoders, works, args.reps, log)
    table = summarise(samples, chosen[0].name)
    report = {
        "baseline": chosen[0].name,
        "reps": args.reps,
        "min_cosine": cosines,
        "median": table,
        "samples": samples,
        "load_average": {"start": load_at_start, "end": os.getloadavg()},
        "machine": {"cpus": os.cpu_count(), "python": sys.version.split()[0]},
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=2) + "\n")
    caption = (
        f"Medians of {args.reps} interleaved repetitions: texts per wall-clock second and per"
        f" CPU second (ratio to {chosen[0].name}); min cosine to the sentence-transformers"
        f" reference. Load average {load_at_start[0]:.1f} at start, {os.getloadavg()[0]:.1f}"
        " at the end."
    )
    args.out.with_suffix(".md").write_text(caption + "\n\n" + markdown(table, cosines) + "\n")
    print(markdown(table, cosines))


if __name__ == "__main__":
    main()
