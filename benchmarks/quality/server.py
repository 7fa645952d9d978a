"""The Cairn a quality benchmark measures: one it is given, or a fresh `cairn up`; and the
commit it runs."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from tests.processes import start_cairn_up, stop  # noqa: E402

from cairn.runtime import free_port  # noqa: E402


@contextmanager
def cairn(url: str | None, name: str) -> Iterator[str]:
    """The base URL of a Cairn to use: ``url``, or a fresh `cairn up` in a temporary data
    directory named after the benchmark, stopped and removed afterwards."""
    if url:
        yield url
        return
    data_dir = Path(tempfile.mkdtemp(prefix=f"cairn-{name}-"))
    os.environ["CAIRN_LOG_LEVEL"] = "WARNING"
    port = free_port()
    try:
        server = start_cairn_up(data_dir, port, REPO / ".cairn" / "models")
        try:
            yield f"http://127.0.0.1:{port}"
        finally:
            stop(server, signal.SIGINT)
    finally:
        shutil.rmtree(data_dir, ignore_errors=True)


def source_state() -> str:
    """The commit measured, and whether src/ had uncommitted changes (read-only git)."""

    def git(*args: str) -> str:
        result = subprocess.run(["git", *args], cwd=REPO, capture_output=True, text=True)
        return result.stdout.strip()

    dirty = git("status", "--porcelain", "--", "src")
    return git("rev-parse", "--short", "HEAD") + (" + uncommitted changes in src/" if dirty else "")


def write_report(out: Path, report: dict[str, Any], text: str) -> None:
    """``out``.json (the data) and ``out``.md (``text``), and the text on stdout."""
    out.parent.mkdir(parents=True, exist_ok=True)
    out.with_suffix(".json").write_text(json.dumps(report, indent=2) + "\n")
    out.with_suffix(".md").write_text(text)
    print(text)
