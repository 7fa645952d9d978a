"""Builds the long-record corpus of ``long_records.py`` (run once; its output is committed).

    PYTHONPATH=$PWD/src .venv/bin/python benchmarks/quality/long_records_corpus.py

Real documents under permissive licences (MIT, BSD, Apache-2.0): RCRT's knowledge records
(Apache-2.0; their JSON context flattened to ``key: value`` lines), the long descriptions
of packages installed in the project's virtualenv, and Cairn's own docs. Each text is cut at
paragraph boundaries into documents of ``MIN_TOKENS``..``MAX_TOKENS`` MiniLM word-pieces;
shorter rests are left out. Writes ``long_records/docs/<id>.txt`` and
``long_records/sources.json`` (id → source file and licence).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from tokenizers import Tokenizer

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
OUT = HERE / "long_records"
SITE = REPO / ".venv" / "lib" / "python3.11" / "site-packages"
TOKENIZER = REPO / ".cairn" / "models" / "tokenizer.json"
MIN_TOKENS, MAX_TOKENS, TARGET_TOKENS = 1500, 4000, 2000
RCRT = REPO.parent / "shared" / "fixtures" / "rcrt-bootstrap"

PACKAGES = {  # dist-info name prefix → licence, as its METADATA declares it
    "pillow-": "MIT-CMU", "sqlalchemy-": "MIT", "pycparser-": "BSD-3-Clause",
    "tokenizers-": "Apache-2.0", "httpx2-": "BSD-3-Clause", "fsspec-": "BSD-3-Clause",
    "sortedcontainers-": "Apache-2.0", "paginate-": "MIT", "graphql_core-": "MIT",
    "schemathesis-": "MIT", "annotated_types-": "MIT", "sse_starlette-": "BSD-3-Clause",
    "huggingface_hub-": "Apache-2.0", "typer-": "MIT", "colorama-": "BSD-3-Clause",
    "rich-": "MIT", "pgvector-": "MIT", "ruff-": "MIT", "httpcore-": "BSD-3-Clause",
    "psutil-": "BSD-3-Clause", "pyrate_limiter-": "MIT", "fastapi-": "MIT",
    "threadpoolctl-": "BSD-3-Clause", "python_dotenv-": "BSD-3-Clause",
    "jsonschema_rs-": "MIT", "charset_normalizer-": "MIT", "litellm-": "MIT",
    "watchdog-": "Apache-2.0",
}  # fmt: skip
CAIRN_DOCS = ("docs/context.md", "docs/operations.md", "docs/performance.md", "docs/api.md")


def description(metadata: str) -> str:
    """The long description: what follows the header block of a METADATA file."""
    _, _, body = metadata.partition("\n\n")
    return body.strip()


def segments(text: str, tokenizer: Tokenizer) -> list[str]:
    """Consecutive runs of lines of about ``TARGET_TOKENS`` word-pieces each, cut at a blank
    line (or anywhere once a run nears ``MAX_TOKENS``); a short rest joins its predecessor."""
    out: list[str] = []
    current: list[str] = []
    size = 0
    for line in text.splitlines():
        current.append(line)
        size += len(tokenizer.encode(line, add_special_tokens=False).ids)
        if (size >= TARGET_TOKENS and not line.strip()) or size >= MAX_TOKENS - 300:
            out.append("\n".join(current).strip())
            current, size = [], 0
    rest = "\n".join(current).strip()
    if out and _count(rest, tokenizer) < MIN_TOKENS:
        out[-1] += "\n\n" + rest
    elif rest:
        out.append(rest)
    return [s for s in out if MIN_TOKENS <= _count(s, tokenizer) <= MAX_TOKENS]


def _flatten(value: object, path: str = "") -> list[str]:
    """A JSON value as lines: a paragraph per object, ``key: value`` per scalar."""
    if isinstance(value, dict):
        lines: list[str] = []
        for key, item in value.items():
            name = key.replace("_", " ")
            if isinstance(item, dict | list):
                lines += ["", f"{name}:", *_flatten(item, name)]
            else:
                lines.append(f"{name}: {item}")
        return lines
    if isinstance(value, list):
        return [line for item in value for line in _flatten(item, path)]
    return [f"- {value}"]


def _count(text: str, tokenizer: Tokenizer) -> int:
    return len(tokenizer.encode(text, add_special_tokens=False).ids)


def sources() -> list[tuple[str, str, str]]:
    """(name, licence, text) of every source text."""
    found = []
    for path in sorted((RCRT / "knowledge").glob("*.json")):
        record = json.loads(path.read_text(encoding="utf-8"))
        text = "\n".join(_flatten(record["context"]))
        found.append((f"rcrt-{path.stem}", f"Apache-2.0 (RCRT {path.name})", text))
    for prefix, licence in PACKAGES.items():
        (dist,) = sorted(SITE.glob(f"{prefix}*.dist-info"))
        text = description((dist / "METADATA").read_text(encoding="utf-8"))
        found.append((prefix.rstrip("-"), f"{licence} ({dist.name}/METADATA)", text))
    for doc in CAIRN_DOCS:
        text = (REPO / doc).read_text(encoding="utf-8")
        found.append((Path(doc).stem, f"Cairn's own documentation ({doc})", text))
    return found


def main() -> None:
    tokenizer = Tokenizer.from_file(str(TOKENIZER))
    tokenizer.no_truncation()  # the packaged file truncates and pads to 128
    tokenizer.no_padding()
    (OUT / "docs").mkdir(parents=True, exist_ok=True)
    for old in (OUT / "docs").glob("*.txt"):
        old.unlink()
    index = {}
    for name, licence, text in sources():
        for number, segment in enumerate(segments(text, tokenizer), start=1):
            doc_id = f"{name}-{number}"
            (OUT / "docs" / f"{doc_id}.txt").write_text(segment + "\n", encoding="utf-8")
            index[doc_id] = {"source": licence, "tokens": _count(segment, tokenizer)}
    (OUT / "sources.json").write_text(json.dumps(index, indent=2) + "\n", encoding="utf-8")
    print(f"{len(index)} documents", file=sys.stderr)


if __name__ == "__main__":
    main()
