"""A scripted server for the client's unit tests: answers in order, requests recorded."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import httpx

Answer = httpx.Response | Callable[[httpx.Request], httpx.Response]


class Script:
    """Hands out ``answers`` one per request (the last one repeats) and keeps the requests."""

    def __init__(self, *answers: Answer) -> None:
        self.answers = list(answers)
        self.requests: list[httpx.Request] = []

    def __call__(self, request: httpx.Request) -> httpx.Response:
        request.read()
        self.requests.append(request)
        answer = self.answers.pop(0) if len(self.answers) > 1 else self.answers[0]
        return answer(request) if callable(answer) else answer

    def sync(self) -> httpx.MockTransport:
        return httpx.MockTransport(self)

    def bodies(self) -> list[Any]:
        return [
            json.loads(request.content) if request.content else None for request in self.requests
        ]


def error(status: int, code: str, detail: str, **headers: str) -> httpx.Response:
    return httpx.Response(status, json={"error": code, "detail": detail}, headers=headers)
