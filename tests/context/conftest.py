from __future__ import annotations

import socket
from pathlib import Path
from typing import Any

import pytest

from cairn.context import TokenCounter, ensure_tokenizer_files


@pytest.fixture(scope="session")
def tokenizer_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return ensure_tokenizer_files(tmp_path_factory.mktemp("tokenizers"))


@pytest.fixture(scope="session")
def counter(tokenizer_dir: Path) -> TokenCounter:
    return TokenCounter.from_dir(tokenizer_dir)


@pytest.fixture
def no_network(monkeypatch: pytest.MonkeyPatch) -> None:
    """Any attempt to resolve a name or open a connection fails, as on a machine offline."""

    def refuse(*args: Any, **kwargs: Any) -> Any:
        raise OSError("network is unreachable (blocked by the test)")

    monkeypatch.setattr(socket, "getaddrinfo", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)
    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket.socket, "connect_ex", refuse)
