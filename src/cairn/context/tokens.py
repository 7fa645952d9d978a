"""Exact token counts with tiktoken, offline.

tiktoken downloads its BPE rank files on first use. The PyPI ``litellm`` wheel ships the
same files, named as tiktoken's cache names them (sha1 of the download URL), so
``ensure_tokenizer_files`` copies them into Cairn's data directory and ``TokenCounter``
builds the encoding from that copy directly: no download, no ``TIKTOKEN_CACHE_DIR`` in the
process environment. The regexes and special tokens below are tiktoken's own
(``tiktoken_ext.openai_public``); a test checks that they still are.
"""

from __future__ import annotations

import base64
import functools
import hashlib
import importlib.util
import os
import shutil
import threading
from dataclasses import dataclass
from pathlib import Path

import tiktoken
import tiktoken.model

COUNT_CACHE_SIZE = 8192  # texts whose token count is remembered, per counter
_ENDOFTEXT = "<|endoftext|>"
_FIM_PREFIX = "<|fim_prefix|>"
_FIM_MIDDLE = "<|fim_middle|>"
_FIM_SUFFIX = "<|fim_suffix|>"
_ENDOFPROMPT = "<|endofprompt|>"
_URL = "https://openaipublic.blob.core.windows.net/encodings/{name}.tiktoken"


@dataclass(frozen=True, slots=True)
class EncodingSpec:
    name: str
    sha256: str  # of the rank file, as tiktoken checks it
    pat_str: str
    special_tokens: dict[str, int]

    @property
    def file_name(self) -> str:
        """tiktoken's cache name for the rank file (and litellm's)."""
        return hashlib.sha1(_URL.format(name=self.name).encode()).hexdigest()


_O200K_PATTERN = "|".join(
    [
        r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
        r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
        r"""\p{N}{1,3}""",
        r""" ?[^\s\p{L}\p{N}]+[\r\n/]*""",
        r"""\s*[\r\n]+""",
        r"""\s+(?!\S)""",
        r"""\s+""",
    ]
)
_CL100K_PATTERN = (
    r"""'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+|"""
    r"""\s++$|\s*[\r\n]|\s+(?!\S)|\s"""
)

ENCODINGS: dict[str, EncodingSpec] = {
    "o200k_base": EncodingSpec(
        "o200k_base",
        "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d",
        _O200K_PATTERN,
        {_ENDOFTEXT: 199999, _ENDOFPROMPT: 200018},
    ),
    "cl100k_base": EncodingSpec(
        "cl100k_base",
        "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7",
        _CL100K_PATTERN,
        {
            _ENDOFTEXT: 100257,
            _FIM_PREFIX: 100258,
            _FIM_MIDDLE: 100259,
            _FIM_SUFFIX: 100260,
            _ENDOFPROMPT: 100276,
        },
    ),
}
DEFAULT_ENCODING = "o200k_base"


class TokenizerFilesError(RuntimeError):
    """The rank files are neither in the cache directory nor in an installed litellm."""


def ensure_tokenizer_files(cache_dir: Path) -> Path:
    """Copy the rank files of every supported encoding from the installed litellm package
    into ``cache_dir`` unless an intact copy is already there. Safe to run concurrently."""
    cache_dir.mkdir(parents=True, exist_ok=True)
    for spec in ENCODINGS.values():
        target = cache_dir / spec.file_name
        if target.is_file() and _sha256(target.read_bytes()) == spec.sha256:
            continue
        source = _litellm_tokenizers_dir() / spec.file_name
        if not source.is_file() or _sha256(source.read_bytes()) != spec.sha256:
            raise TokenizerFilesError(f"litellm's copy of {spec.name} is missing or altered")
        partial = target.with_name(f"{target.name}.{os.getpid()}.{threading.get_ident()}.tmp")
        shutil.copyfile(source, partial)
        os.replace(partial, target)
    return cache_dir


def _litellm_tokenizers_dir() -> Path:
    # find_spec on a top-level name locates the package without importing it (importing
    # litellm is slow and needs dependencies Cairn does not install).
    spec = importlib.util.find_spec("litellm")
    if spec is None or not spec.submodule_search_locations:
        raise TokenizerFilesError(
            "litellm is not installed: pip install --no-deps litellm (see the Makefile)"
        )
    return Path(next(iter(spec.submodule_search_locations))) / "litellm_core_utils" / "tokenizers"


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def encoding_for_model(model: str | None) -> str:
    """The encoding for a model id such as ``gpt-4o`` or ``openai/gpt-4-turbo``. Models
    tiktoken does not know (other vendors) get the default, as the closest available count."""
    if not model:
        return DEFAULT_ENCODING
    name = model.rsplit("/", 1)[-1]
    try:
        encoding = tiktoken.model.encoding_name_for_model(name)
    except KeyError:
        return DEFAULT_ENCODING
    return encoding if encoding in ENCODINGS else DEFAULT_ENCODING


_loaded: dict[tuple[Path, str], tiktoken.Encoding] = {}
_loading = threading.Lock()


def load_encoding(cache_dir: Path, name: str = DEFAULT_ENCODING) -> tiktoken.Encoding:
    """The encoding built from the rank file in ``cache_dir``, once per process."""
    spec = ENCODINGS.get(name)
    if spec is None:
        raise ValueError(f"unsupported encoding {name!r}; supported: {sorted(ENCODINGS)}")
    key = (cache_dir.resolve(), name)
    with _loading:
        encoding = _loaded.get(key)
        if encoding is None:
            encoding = _build(spec, cache_dir / spec.file_name)
            _loaded[key] = encoding
    return encoding


def _build(spec: EncodingSpec, rank_file: Path) -> tiktoken.Encoding:
    try:
        data = rank_file.read_bytes()
    except FileNotFoundError:
        raise TokenizerFilesError(
            f"{rank_file} is missing; run ensure_tokenizer_files first"
        ) from None
    if _sha256(data) != spec.sha256:
        raise TokenizerFilesError(f"{rank_file} does not match the {spec.name} rank file")
    ranks: dict[bytes, int] = {}
    for line in data.splitlines():
        if line:
            token, rank = line.split()
            ranks[base64.b64decode(token)] = int(rank)
    return tiktoken.Encoding(
        spec.name,
        pat_str=spec.pat_str,
        mergeable_ranks=ranks,
        special_tokens=dict(spec.special_tokens),
    )


class TokenCounter:
    """Counts and cuts text in tokens of one encoding. Special-token text such as
    ``<|endoftext|>`` inside content is counted as ordinary text, never rejected.
    Thread-safe: tiktoken's encoder may be shared across threads."""

    def __init__(self, encoding: tiktoken.Encoding) -> None:
        self._encoding = encoding
        # Assemblies count the same blocks again and again (the tools, a session's turns):
        # a count is a pure function of the text, so remember the recent ones.
        self._count = functools.lru_cache(maxsize=COUNT_CACHE_SIZE)(self._uncached_count)

    @classmethod
    def from_dir(cls, cache_dir: Path, encoding: str = DEFAULT_ENCODING) -> TokenCounter:
        return cls(load_encoding(cache_dir, encoding))

    @property
    def encoding_name(self) -> str:
        return self._encoding.name

    def count(self, text: str) -> int:
        return self._count(text)

    def _uncached_count(self, text: str) -> int:
        return len(self._encoding.encode_ordinary(text))

    def truncate(self, text: str, tokens: int) -> str:
        """The longest prefix of ``text`` (at a token boundary, no broken characters) that
        counts at most ``tokens``."""
        encoded = self._encoding.encode_ordinary(text)
        if len(encoded) <= tokens:
            return text
        keep = max(tokens, 0)
        while keep > 0:
            prefix = self._encoding.decode_bytes(encoded[:keep]).decode("utf-8", "ignore")
            if self.count(prefix) <= tokens:
                return prefix
            keep -= 1
        return ""
