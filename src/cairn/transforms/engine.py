"""One template engine: compile once (Handlebars translated first), render many times."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

from jinja2 import Template, TemplateSyntaxError, nodes

from cairn.config import TransformSettings
from cairn.transforms import budget
from cairn.transforms.cache import LRU
from cairn.transforms.handlebars import TranslationError, looks_like_handlebars, translate
from cairn.transforms.sandbox import LLMEnvironment

Syntax = Literal["auto", "jinja", "handlebars"]
SYNTAXES: tuple[Syntax, ...] = ("auto", "jinja", "handlebars")

_NO_LOADER = (nodes.Extends, nodes.Include, nodes.Import, nodes.FromImport)


class TemplateError(ValueError):
    """A template that does not compile; the message says where and why."""


class TemplateEngine:
    """Compiled templates, cached by their source text (so equal templates in many records
    or definitions compile once)."""

    def __init__(self, settings: TransformSettings) -> None:
        self.settings = settings
        self.environment = LLMEnvironment()
        self._compiled: LRU[tuple[str, str], Template] = LRU(settings.template_cache_size)

    def compile(self, source: str, syntax: Syntax = "auto") -> Template:
        return self._compiled.get_or_make((syntax, source), lambda: self.parse(source, syntax))

    def parse(self, source: str, syntax: Syntax = "auto") -> Template:
        """Compile without the cache (what RCRT did on every render)."""
        if len(source) > self.settings.max_template_chars:
            raise TemplateError(f"longer than {self.settings.max_template_chars} characters")
        try:
            if syntax == "handlebars" or (syntax == "auto" and looks_like_handlebars(source)):
                source = translate(source)
            tree = self.environment.parse(source)
            _check_tree(tree)
            return self.environment.from_string(tree)
        except TemplateError:
            raise
        except TranslationError as error:
            raise TemplateError(str(error)) from None
        except TemplateSyntaxError as error:
            raise TemplateError(f"{error.message} (line {error.lineno})") from None
        except Exception as error:  # absurd nesting trips Python's own parser or compiler
            raise TemplateError(f"cannot compile: {type(error).__name__}: {error}") from None

    def render(self, template: Template, variables: Mapping[str, Any]) -> str:
        """Render inside the active budget; the result is at most ``max_output_chars``."""
        limit = budget.active().max_output_chars
        parts: list[str] = []
        size = 0
        for part in template.generate(variables):
            size += len(part)
            if size > limit:
                raise budget.RenderLimitExceeded(f"output longer than {limit} characters")
            parts.append(part)
        return "".join(parts)


def _check_tree(tree: nodes.Template) -> None:
    for node in tree.find_all(_NO_LOADER):
        name = type(node).__name__.lower()
        raise TemplateError(f"{name} is not available: a template sees only its own record")
