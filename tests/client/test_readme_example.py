"""The README's first example runs as printed against the real server."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path

import pytest

README = Path(__file__).resolve().parents[2] / "clients" / "python" / "README.md"


def _first_python_block() -> str:
    match = re.search(r"```python\n(.*?)```", README.read_text(), re.DOTALL)
    assert match is not None
    return match.group(1)


async def test_the_readme_example_runs(live_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CAIRN_URL", live_url)
    monkeypatch.delenv("CAIRN_TOKEN", raising=False)
    code = _first_python_block()
    assert len(code.strip().splitlines()) <= 12
    printed: list[str] = []

    def capture(*values: object) -> None:
        printed.append(" ".join(str(value) for value in values))

    await asyncio.to_thread(exec, code, {"print": capture})
    assert printed[0] == "High tide at 06:12"
    assert any(line.endswith(" Tide table") for line in printed[1:-1])
    assert printed[-1].startswith("404 not_found ")
