"""Launch lines in any text: the command templates teams keep as plain text.

A file no structured parser claims (``ops/serve_cmd.txt``, ``launch.txt``, a ``justfile``,
a file without a suffix) but that mentions vLLM is read line by line: a line that starts a
vLLM launch (``vllm serve ...``, ``python -m vllm.entrypoints...``, ``docker run ...`` /
``podman run ...`` of an image, after optional ``VAR=value`` prefixes, ``exec``/``nohup``,
a ``$`` prompt, or a key: a Procfile's ``web:``, an INI/supervisord ``command=``), with its ``\\`` continuation lines, is parsed as shell at its own
position (tree-sitter-bash, :mod:`vllm_upgrade_check.parsing.shell`); every other line is
not read. Template placeholders (``{model_id}``, ``{{ port }}``, ``{% ... %}``) are
overwritten with :data:`~.templates.PLACEHOLDER` characters first, position for position, so
that a placeholder is an unresolved value, never a flag.

Prose stays prose: a line that does not start with a launch ("we should drop
``--swap-space``") is never read, and a line that does but carries more than one bare word
after the command (``vllm serve is slow with --swap-space``: ``vllm serve`` takes one
positional, the model) is taken for a sentence.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from vllm_upgrade_check.model.facts import Fact, Skipped
from vllm_upgrade_check.parsing.shell import offset_locator
from vllm_upgrade_check.sources.scanners.base import Scanner, SourceFile
from vllm_upgrade_check.sources.scanners.shell import shell_facts
from vllm_upgrade_check.sources.scanners.templates import PLACEHOLDER, neutralise_templates
from vllm_upgrade_check.sources.sniff import LAUNCH_LINES

_PROMPT = re.compile(r"^(\s*)(\$\s+)")
_HEAD = re.compile(
    r"""^\s*(?:[A-Za-z_][A-Za-z0-9_]*=\S*\s+)*(?:(?:exec|nohup|sudo|env|time)\s+)*
    (?P<cmd>(?:\S*/)?vllm\s+serve\b
      |(?:\S*/)?python[0-9.]*\s+(?:-\S+\s+)*-m\s+vllm[.\w]*
      |uv\s+run\s+(?:--?\S+\s+)*vllm\s+serve\b
      |(?:docker|podman|nerdctl)\s+(?:container\s+)?run\b)""",
    re.VERBOSE,
)
_KEY = re.compile(r"^(\s*)([A-Za-z_][\w.-]*\s*[:=][ \t]*)(?=\S)")
"""A key in front of a launch: a Procfile's process type (``web: vllm serve ...``), an INI
or supervisord ``command=vllm serve ...``."""
_BRACE = re.compile(r"(?<![$\w{])\{[A-Za-z_][\w.-]*\}")


def neutralise_placeholders(text: str) -> str:
    """``text`` with ``{{ }}``/``{% %}``/``{# #}`` actions and ``{name}`` placeholders overwritten
    by :data:`PLACEHOLDER` characters (same length, same line breaks); ``${NAME}`` stays
    (the shell parser resolves it or marks it unresolved)."""
    out = neutralise_templates(text)
    return _BRACE.sub(lambda m: PLACEHOLDER * len(m.group(0)), out)


def _prose(logical: str, command: str) -> bool:
    """Whether a line that starts with a launch reads as a sentence: more than one bare word
    (not a flag, not a flag's value, not a placeholder or ``$`` expansion) after a
    ``vllm serve`` / ``python -m`` command."""
    if command.split()[0].rsplit("/", 1)[-1] in ("docker", "podman", "nerdctl"):
        return False
    after = logical[logical.find(command) + len(command) :].replace("\\\n", " ").split()
    bare = 0
    previous_flag = False
    for word in after:
        if word.startswith("-"):
            previous_flag = "=" not in word
            continue
        if PLACEHOLDER in word or "$" in word:  # a value (or flags) only the template knows
            previous_flag = False
            continue
        if not previous_flag:
            bare += 1
        previous_flag = False
    return bare > 1


def launch_lines(text: str) -> Iterator[tuple[int, str]]:
    """``(1-based line, text)`` of each launch line of ``text`` with its continuation lines
    (joined by ``\\n``, a ``$`` prompt blanked, placeholders neutralised), prose left out."""
    lines = neutralise_placeholders(text).split("\n")
    i = 0
    while i < len(lines):
        line = lines[i]
        prompt = _PROMPT.match(line)
        if prompt:
            line = prompt.group(1) + " " * len(prompt.group(2)) + line[prompt.end() :]
        head = _HEAD.match(line)
        key = _KEY.match(line) if head is None else None
        if key is not None and _HEAD.match(line[key.end() :]):
            line = key.group(1) + " " * len(key.group(2)) + line[key.end() :]  # blanked: positions kept
            head = _HEAD.match(line)
        start = i
        block = [line]
        while block[-1].rstrip().endswith("\\") and i + 1 < len(lines):
            i += 1
            block.append(lines[i])
        i += 1
        if head is None:
            continue
        logical = "\n".join(block)
        if not _prose(logical, head.group("cmd")):
            yield start + 1, logical


class LaunchLineScanner(Scanner):
    """Texts no structured parser reads (:data:`~.sniff.LAUNCH_LINES`): their launch lines."""

    name = "launch-lines"

    def accepts_name(self, name: str) -> bool | None:
        return False  # only content decides (the sniffer names the kind)

    def accepts(self, source: SourceFile) -> bool:
        return source.kind == LAUNCH_LINES

    def scan(self, source: SourceFile) -> Iterator[Fact | Skipped]:
        if not source.mentions_vllm():
            return
        for line, logical in launch_lines(source.text):
            facts, script = shell_facts(
                logical, source.relpath, self.name, locate=offset_locator(logical, line, 1)
            )
            yield from facts
            if script.has_error:
                yield Skipped(
                    source.relpath,
                    f"shell syntax error in the launch line at line {line}: it was only partly read",
                    configures_vllm=True,
                    line=line,
                )
