"""Go-template (Helm) actions neutralised so that templated YAML can be parsed in place.

A chart's ``templates/*.yaml`` holds ``{{ ... }}`` actions that are not YAML. Rather than
skipping such files, every action is overwritten, character for character, so that the
literal text around it keeps its line and column:

- a line holding nothing but actions and blanks (``{{- if .Values.x }}``) becomes blank;
- an action inside a line (``- {{ .Values.port | quote }}``) becomes a run of
  :data:`PLACEHOLDER` characters, a plain YAML scalar that stands for "a value only Helm
  knows".

Facts whose text contains :data:`PLACEHOLDER` are unresolved (see :func:`is_templated`);
a scanner must never report a flag written inside an action.
"""

from __future__ import annotations

import re

PLACEHOLDER = "\ue000"
"""A private-use character: valid in a YAML plain scalar, never in real configuration."""

_ACTION = re.compile(r"\{\{.*?\}\}|\{%.*?%\}|\{#.*?#\}", re.DOTALL)
"""A Go-template/Helm action ``{{ ... }}``, or a Jinja statement ``{% ... %}`` or comment ``{# ... #}``."""


def has_template_actions(text: str) -> bool:
    """``True`` when ``text`` holds at least one ``{{ ... }}`` action (or Jinja ``{% %}``/``{# #}``)."""
    return _ACTION.search(text) is not None


def neutralise_templates(text: str) -> str:
    """``text`` with every ``{{ ... }}`` action overwritten (same length, same line breaks).

    Lines left with only placeholders and blanks become blank lines.
    """
    out = _ACTION.sub(lambda m: "".join("\n" if c == "\n" else PLACEHOLDER for c in m.group(0)), text)
    lines = out.split("\n")
    for i, line in enumerate(lines):
        if PLACEHOLDER in line and not line.replace(PLACEHOLDER, "").strip():
            lines[i] = " " * len(line)
    return "\n".join(lines)


def is_templated(text: str | None) -> bool:
    """``True`` when ``text`` (a scalar or token) contains a neutralised template action."""
    return bool(text) and PLACEHOLDER in (text or "")
