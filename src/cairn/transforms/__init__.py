"""llm_hints transforms: how each breadcrumb reads to an LLM (ARCHITECTURE §6).

``Transforms`` is the entry point (built once per process, in the composition root):
``check_record`` on writes, ``render_many`` on reads, ``invalidate*`` when schema
definitions change. The rest is exported for tests, the benchmark and the worker.
"""

from cairn.transforms.budget import RenderLimitExceeded
from cairn.transforms.definitions import (
    SCHEMA_DEFINITION,
    Definition,
    defined_schemas,
    is_definition,
)
from cairn.transforms.engine import TemplateEngine, TemplateError
from cairn.transforms.handlebars import TranslationError, looks_like_handlebars, translate
from cairn.transforms.hints import CompiledHints, HintsError, compile_hints
from cairn.transforms.render import Rendered
from cairn.transforms.service import Transforms

__all__ = [
    "SCHEMA_DEFINITION",
    "CompiledHints",
    "Definition",
    "HintsError",
    "RenderLimitExceeded",
    "Rendered",
    "TemplateEngine",
    "TemplateError",
    "Transforms",
    "TranslationError",
    "compile_hints",
    "defined_schemas",
    "is_definition",
    "looks_like_handlebars",
    "translate",
]
