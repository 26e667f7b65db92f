"""Deprecation notices: the old and new spellings that a message such as "X is
deprecated, use Y instead" names (:func:`_parse_deprecation`), read from every
string literal under ``vllm/`` and from definitions marked deprecated.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Mapping
from dataclasses import dataclass

from vllm_upgrade_check.knowledge.derive.surface.model import Deprecation, SourceRef
from vllm_upgrade_check.knowledge.derive.surface.sources import _const_str, _Sources

_TOKEN = r"(?:`([^`\n]+)`|'([^'\n]+)'|\"([^\"\n]+)\"|(-{1,2}[A-Za-z0-9][\w.-]*[\w]|[A-Za-z_][\w.:]*[\w]))"
_NEW_RE = re.compile(
    r"(?:\buse\b|\busing\b|replaced\s+(?:by|with)|renamed\s+to|in\s+favou?r\s+of|switch\s+to|migrate\s+to)"
    r"\s+(?:the\s+)?(?:new\s+)?(?:argument\s+|option\s+|flag\s+|parameter\s+|field\s+|variable\s+)?" + _TOKEN,
    re.IGNORECASE,
)
_OLD_RES = (
    re.compile(
        _TOKEN
        + r"(?:\s+(?:argument|option|flag|parameter|field|env(?:ironment)?\s+var(?:iable)?|variable|arg))?"
        r"\s+(?:is|are|has\s+been|have\s+been|was|were)\s+(?:now\s+)?(?:being\s+)?deprecated",
        re.IGNORECASE,
    ),
    re.compile(
        r"deprecated\s+(?:argument|option|flag|parameter|field|env(?:ironment)?\s+var(?:iable)?|variable)s?\s+"
        + _TOKEN,
        re.IGNORECASE,
    ),
)
_ENGLISH = {
    "this",
    "it",
    "that",
    "which",
    "the",
    "a",
    "an",
    "argument",
    "option",
    "flag",
    "parameter",
    "field",
    "value",
    "feature",
    "setting",
    "method",
    "function",
    "api",
    "mode",
    "support",
    "they",
    "these",
    "those",
    "there",
    "passing",
    "usage",
    "specifying",
}


def _token(m: re.Match, *, with_value: bool = False) -> tuple[str, bool] | None:
    """(token, was_quoted) of a _TOKEN match; None for plain English words
    and for quoted text that is not a single name.  ``with_value``: accept a
    quoted ```--flag value``` and keep the flag (for replacements; a
    deprecated ```--flag value``` deprecates a value, not the flag)."""
    quoted = next((g for g in m.groups()[:3] if g), None)
    tok = quoted if quoted else (m.groups()[3] or "").rstrip(".:")
    if with_value and quoted and tok.startswith("-"):
        tok = re.split(r"[\s=]", tok, maxsplit=1)[0]
    if not re.fullmatch(r"-{0,2}[A-Za-z_](?:[\w.:-]*\w)?", tok) or ".." in tok or tok.lower() in _ENGLISH:
        return None
    if not quoted and not re.search(r"[-_.]", tok):
        return None
    return tok, bool(quoted)


def _replacement(message: str) -> str | None:
    """The new spelling a deprecation message points to ("use X instead",
    "replaced by X", ...), looked for after the word "deprecated" first."""
    start = message.lower().find("deprecat")
    for text in (message[start:], message) if start > 0 else (message,):
        for m in _NEW_RE.finditer(text):
            tok = _token(m, with_value=True)
            if tok:
                return tok[0]
    return None


def _parse_deprecation(message: str) -> tuple[str, str | None] | None:
    """``(old, new)`` spellings named by a deprecation message (``new`` None
    when the message names no replacement); None when no old spelling is
    recognisable."""
    if "deprecat" not in message.lower():
        return None
    new = _replacement(message)
    for rx in _OLD_RES:
        for m in rx.finditer(message):
            old = _token(m)
            if old and old[0] != new:
                return old[0], new
    return None


@dataclass(frozen=True)
class _RawDeprecation:
    name: str
    message: str
    ref: SourceRef
    replacement: str | None
    structural: bool  # from the parser definition itself (always kept)


def _raw_deprecations(src: _Sources, structural: list[tuple[str, str, SourceRef]]) -> list[_RawDeprecation]:
    """``structural``: (name, text, ref) of definitions marked deprecated
    (``add_argument(deprecated=True)``, metric documentation), kept even
    without a replacement; plus every string literal saying "X is
    deprecated" with a recognisable X."""
    out = [_RawDeprecation(name, text, ref, _replacement(text), True) for name, text, ref in structural]
    for path in src.grep("deprecat", ignore_case=True):
        tree = src.tree(path)
        if tree is None:
            continue
        seen: set[int] = set()
        for node in ast.walk(tree):
            if id(node) in seen or not isinstance(node, (ast.Constant, ast.BinOp, ast.JoinedStr)):
                continue
            msg = _const_str(node, holes=True)
            if msg is None:
                continue
            seen.update(id(n) for n in ast.walk(node))
            msg = " ".join(msg.split())
            parsed = _parse_deprecation(msg)
            if parsed:
                out.append(_RawDeprecation(parsed[0], msg, SourceRef(path, node.lineno), parsed[1], False))
    return out


def _classify(name: str, sets: Mapping[str, Mapping[str, SourceRef]]) -> tuple[str, bool]:
    """``(kind, known)``: the category of a deprecated spelling and whether
    the release defines it."""
    dashed = "--" + name.lstrip("-").replace("_", "-")
    snake = name.lstrip("-").replace("-", "_")
    if name.startswith("-"):
        return "cli_flag", name in sets["cli_flags"] or dashed in sets["cli_flags"]
    if name.startswith("vllm:"):
        return "metric", name in sets["metrics"]
    if name in sets["env_vars"]:
        return "env_var", True
    if re.fullmatch(r"VLLM_[A-Z0-9_]+", name):
        return "env_var", False
    for kind, cat in (("engine_arg", "engine_args"), ("sampling_param", "sampling_params")):
        if snake in sets[cat]:
            return kind, True
    if name in sets["config_fields"] or any(k.endswith("." + snake) for k in sets["config_fields"]):
        return "config_field", True
    if name in sets["modules"]:
        return "module", True
    return "name", False


def _deprecations(
    src: _Sources, structural: list[tuple[str, str, SourceRef]], sets: Mapping[str, Mapping[str, SourceRef]]
) -> tuple[Deprecation, ...]:
    """Deprecations that name a replacement, or that come from a definition
    marked deprecated, or whose old spelling the release defines."""
    found = set()
    for raw in _raw_deprecations(src, structural):
        kind, known = _classify(raw.name, sets)
        if raw.replacement or raw.structural or known:
            found.add(Deprecation(kind, raw.name, raw.message, raw.ref, raw.replacement))
    return tuple(sorted(found, key=lambda d: (d.ref, d.name)))
