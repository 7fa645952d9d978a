"""The base classes and shared literal types of the client's models."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict

Role = Literal["subscriber", "emitter", "curator"]
Visibility = Literal["public", "team", "private"]
Sensitivity = Literal["low", "pii", "secret"]
AclAction = Literal["read_context", "read_full", "update", "delete", "subscribe"]
ScopeType = Literal["global", "workspace", "agent", "tenant"]
SearchMode = Literal["vector", "hybrid"]


class Answer(BaseModel):
    model_config = ConfigDict(extra="allow")


class Request(BaseModel):
    model_config = ConfigDict(extra="forbid")
