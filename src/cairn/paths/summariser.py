"""The optional LLM summariser of a resolved debug path: any OpenAI-compatible chat-completions
endpoint (``settings.paths.summariser_url``) rewrites the recorded summary (Cairn's extractive
one, or an agent's words from an explicit resolution) from the path's waypoints. Off unless
configured.

What leaves the machine: the waypoints' one-line summaries (error signatures, record titles),
the commands and the file names they mention, and the path's recorded root cause and fix;
nothing else.

One request per resolution and no retries (the timeout bounds the whole call): a failure of any
kind is a :class:`SummariserFailed` with a short reason that the path records, and the
recorded summary stands.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Annotated, Protocol

import openai
from pydantic import AfterValidator, BaseModel, ConfigDict, Field, ValidationError

from cairn.api.input import text_problem
from cairn.config import PathSettings
from cairn.paths.machine import Waypoint
from cairn.paths.summary import Resolution, WaypointNote

# The maxLength of each field in schemas/debug.path.v1.json (a test keeps them in step).
MAX_KISS = 2000
MAX_ROOT_CAUSE = 1000
MAX_FIX = 1000
MAX_ATTEMPTS = 10  # the last ones: the prompt stays short however long the path was
MAX_LINE = 300
MAX_REASON = 200

SYSTEM_PROMPT = (
    "You summarise how a developer's debugging session was resolved, for the next person who"
    " meets the same error. Reply with one JSON object and nothing else:"
    ' {"kiss_summary": "When <the error>: <what to do>." (one sentence),'
    ' "root_cause": "<why the error happened>",'
    ' "what_fixed_it": "<the change that made it pass>"}.'
    " Use only the facts given; do not invent files or commands."
)


class SummariserFailed(Exception):
    """The LLM gave no usable summary; ``reason`` is short enough to store on the path."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason[:MAX_REASON]


class Summariser(Protocol):
    model: str

    async def refine(self, notes: Sequence[WaypointNote], recorded: Resolution) -> Resolution:
        """The path's summary as the LLM writes it; raises :class:`SummariserFailed`."""
        ...

    async def aclose(self) -> None: ...


def _clipped(limit: int) -> AfterValidator:
    return AfterValidator(lambda text: text if len(text) <= limit else text[: limit - 1] + "…")


def _storable(text: str) -> str:
    """A NUL or a lone surrogate would fail the path's write, and the event would come back
    to ask again: refused here, it is a failure like any other."""
    if problem := text_problem(text):
        raise ValueError(problem)
    return text


_Text = Annotated[str, Field(min_length=1), AfterValidator(_storable)]


class _Reply(BaseModel):
    """The JSON object the LLM must answer; extra keys are ignored, overlong fields clipped
    to what the path's schema takes."""

    model_config = ConfigDict(extra="ignore", str_strip_whitespace=True)

    kiss_summary: Annotated[_Text, _clipped(MAX_KISS)]
    root_cause: Annotated[_Text, _clipped(MAX_ROOT_CAUSE)]
    what_fixed_it: Annotated[_Text, _clipped(MAX_FIX)]


class _Message(BaseModel):
    model_config = ConfigDict(from_attributes=True)

    content: str | None = None
    refusal: str | None = None


class _Choice(BaseModel):
    model_config = ConfigDict(from_attributes=True)

    message: _Message


class _Completion(BaseModel):
    """What Cairn reads of a completion. The SDK builds its response objects without
    validating them, so a server's odd 200 (plain text, an object without choices) would
    surface as an AttributeError, and the event would come back to ask again."""

    model_config = ConfigDict(from_attributes=True)

    choices: list[_Choice] = Field(min_length=1)


def _message_of(completion: object) -> _Message:
    try:
        return _Completion.model_validate(completion).choices[0].message
    except ValidationError as error:
        raise SummariserFailed("invalid response: not a chat completion") from error


class LlmSummariser:
    """:class:`Summariser` over the ``openai`` SDK's async client."""

    def __init__(self, client: openai.AsyncOpenAI, model: str, timeout_s: float) -> None:
        self.client = client
        self.model = model
        self.timeout_s = timeout_s

    async def refine(self, notes: Sequence[WaypointNote], recorded: Resolution) -> Resolution:
        try:
            completion = await self.client.chat.completions.create(
                model=self.model,
                messages=[
                    {"role": "system", "content": SYSTEM_PROMPT},
                    {"role": "user", "content": prompt_of(notes, recorded)},
                ],
                temperature=0,
            )
        except openai.APITimeoutError as error:
            raise SummariserFailed(f"timeout after {self.timeout_s:g} s") from error
        except openai.APIStatusError as error:
            raise SummariserFailed(f"HTTP {error.status_code}") from error
        except openai.APIConnectionError as error:
            raise SummariserFailed("connection failed") from error
        except openai.OpenAIError as error:
            raise SummariserFailed(f"invalid response ({type(error).__name__})") from error
        except json.JSONDecodeError as error:  # a 200 said to be JSON that is not
            raise SummariserFailed("invalid response: not a chat completion") from error
        message = _message_of(completion)
        if message.refusal:
            raise SummariserFailed(f"refused: {' '.join(message.refusal.split())}")
        reply = parse_reply(message.content or "")
        return Resolution(reply.kiss_summary, reply.root_cause, reply.what_fixed_it, recorded.files)

    async def aclose(self) -> None:
        await self.client.close()


def path_summariser(settings: PathSettings) -> LlmSummariser | None:
    """The configured summariser; None when ``summariser_url`` is unset (the default)."""
    if not settings.summariser_url:
        return None
    key = settings.summariser_api_key
    client = openai.AsyncOpenAI(
        base_url=settings.summariser_url,
        # Local servers (Ollama, vLLM, llama.cpp) take any key; the SDK insists on one.
        api_key=key.get_secret_value() if key else "unused",
        timeout=settings.summariser_timeout_s,
        max_retries=0,
    )
    return LlmSummariser(client, settings.summariser_model, settings.summariser_timeout_s)


def prompt_of(notes: Sequence[WaypointNote], recorded: Resolution) -> str:
    """The user message: the first error, the attempts, the recorded root cause and fix (the
    last attempt before the success run, or an agent's own words when it resolved the path
    explicitly), the files."""
    errors = [n for n in notes if n.kind is Waypoint.ERROR]
    attempts = [n for n in notes if n.kind in (Waypoint.ATTEMPT, Waypoint.REVERT)]
    discoveries = [n for n in notes if n.kind is Waypoint.DISCOVERY]
    lines = [f"First error: {_line(errors[0]) if errors else recorded.root_cause}"]
    if discoveries:
        lines.append(f"Noted along the way: {_line(discoveries[-1])}")
    lines.append(f"Attempts, in order ({len(attempts)}):")
    skipped = len(attempts) - MAX_ATTEMPTS
    if skipped > 0:
        lines.append(f"- ({skipped} earlier attempts left out)")
    lines += [f"- {_line(n)}" for n in attempts[-MAX_ATTEMPTS:]] or ["- none recorded"]
    lines.append(f"Root cause as recorded: {recorded.root_cause}")
    lines.append(f"What fixed it as recorded: {recorded.what_fixed_it}")
    lines.append(f"Files: {', '.join(recorded.files) or 'none named'}")
    return "\n".join(lines)


def parse_reply(content: str) -> _Reply:
    """The LLM's JSON object, also inside a Markdown code fence (many models add one)."""
    text = content.strip()
    if text.startswith("```"):
        text = text.strip("`").removeprefix("json").strip()
    try:
        return _Reply.model_validate(json.loads(text))
    except json.JSONDecodeError as error:
        raise SummariserFailed(f"invalid JSON: {error.msg}") from error
    except ValidationError as error:
        first = error.errors()[0]
        where = ".".join(str(part) for part in first["loc"]) or "reply"
        raise SummariserFailed(f"invalid reply: {where}: {first['msg']}") from error


def _line(note: WaypointNote) -> str:
    text = note.summary
    if note.command and note.command not in text:
        text += f" (`{note.command}`)"
    if note.files:
        text += f" [{', '.join(note.files[:5])}]"
    text = " ".join(text.split())
    return text if len(text) <= MAX_LINE else text[: MAX_LINE - 1] + "…"
