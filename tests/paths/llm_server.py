"""A chat-completions endpoint as OpenAI-compatible servers speak it, served over real HTTP
in the test's event loop, whose answer each test chooses (a reply, a slow reply, a 500)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager, suppress
from dataclasses import dataclass, field
from typing import Any

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse
from tests.processes import served

REPLY = {
    "kiss_summary": "When test_total asserts 3 == 4: fix the sum in src/cart.py.",
    "root_cause": "The cart summed the prices without the last item.",
    "what_fixed_it": "Including the last item in the loop of src/cart.py.",
}


@dataclass
class LlmServer:
    """What the endpoint answers (``content`` or a ``refusal``, ``status``, ``delay_s``) and
    what it was asked."""

    url: str = ""
    content: str = json.dumps(REPLY)
    refusal: str | None = None
    status: int = 200
    delay_s: float = 0.0
    requests: list[dict[str, Any]] = field(default_factory=list)
    released: asyncio.Event = field(default_factory=asyncio.Event)

    def completion(self, model: str) -> dict[str, Any]:
        message: dict[str, Any] = {"role": "assistant", "content": self.content}
        if self.refusal is not None:
            message = {"role": "assistant", "content": None, "refusal": self.refusal}
        return {
            "id": "chatcmpl-test",
            "object": "chat.completion",
            "created": 0,
            "model": model,
            "choices": [{"index": 0, "message": message, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
        }


def _app(server: LlmServer) -> FastAPI:
    app = FastAPI()

    @app.post("/v1/chat/completions")
    async def complete(request: Request) -> JSONResponse:
        body = await request.json()
        server.requests.append(body)
        if server.delay_s:  # until the test ends (or the delay), whichever is first
            with suppress(TimeoutError):
                await asyncio.wait_for(server.released.wait(), server.delay_s)
        if server.status != 200:
            error = {"error": {"message": "the model crashed", "type": "server_error"}}
            return JSONResponse(error, status_code=server.status)
        return JSONResponse(server.completion(body["model"]))

    return app


@asynccontextmanager
async def llm_server() -> AsyncIterator[LlmServer]:
    server = LlmServer()
    async with served(_app(server)) as url:
        server.url = f"{url}/v1"
        try:
            yield server
        finally:
            server.released.set()  # a slow answer must not hold the server's shutdown
