"""Mechanical fixes: turn findings into text edits and apply them atomically.

An :class:`Edit` replaces ``old`` (the exact text expected at ``[start, end)``, character
offsets into the file as decoded, newlines kept as written) by ``new``. Edits are computed
by re-reading the file at the finding's location (the value token of a removed flag is
re-tokenised here rather than carried on the fact). Applying refuses a stale edit: when the
text at the offsets is no longer ``old``, nothing is written to that file.

Writes go to a temporary file in the same directory followed by :func:`os.replace`; the
file's mode, encoding (UTF-8 with or without BOM, else Latin-1), newline style and every
byte outside the edits are kept. Files outside the scanned roots, or reached through a
symlink that leaves them, are never written.
"""

from __future__ import annotations

import difflib
import os
import re
import stat
import tempfile
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING

from packaging.version import Version

from vllm_upgrade_check.discovery import root_label
from vllm_upgrade_check.errors import VucError
from vllm_upgrade_check.model.facts import Fact, FactKind, Finding, Skipped
from vllm_upgrade_check.model.pack import Applicability, FixAction
from vllm_upgrade_check.scanners.dockerfile import FROM_VARIABLE
from vllm_upgrade_check.scanners.launch import is_vllm_image, split_image
from vllm_upgrade_check.textpos import line_index
from vllm_upgrade_check.versions import version_from_tag

if TYPE_CHECKING:  # pragma: no cover
    from vllm_upgrade_check.engine import ScanOptions

MECHANICAL = frozenset(
    {
        FixAction.REMOVE_ARG,
        FixAction.RENAME,
        FixAction.REPLACE_VALUE,
        FixAction.SET_SPECIFIER,
        FixAction.BUMP_IMAGE,
    }
)
"""Fix actions this module can apply."""

UPGRADE_ID = "upgrade"
"""``Edit.rule_id`` of the built-in bump of ``vllm==X`` pins and vLLM image tags to the target."""


class StaleEditError(VucError):
    """The file changed since the edit was computed: the expected text is not at the offsets."""


class CannotFix(Exception):
    """A finding whose fix cannot be applied mechanically here; the message says why."""


@dataclass(frozen=True)
class Edit:
    """One replacement in one file.

    Attributes:
        path: POSIX path relative to the scanned root (as in findings).
        start: character offset of the first replaced character in the decoded file.
        end: character offset just past the replaced text.
        old: the exact text expected at ``[start, end)``.
        new: the replacement text.
        rule_id: the rule whose fix this is, or :data:`UPGRADE_ID`.
        description: one line for the summary (``remove --max-num-partial-prefills 4``).
        line: 1-based line of ``start``, for the summary.
    """

    path: str
    start: int
    end: int
    old: str
    new: str
    rule_id: str
    description: str
    line: int = 0


def _edit_of(rel: str, text: str, start: int, end: int, new: str, rule_id: str, description: str) -> Edit:
    """An :class:`Edit` of ``text[start:end]`` (the text it expects) in file ``rel``."""
    return Edit(rel, start, end, text[start:end], new, rule_id, description, _line_no(text, start))


@dataclass(frozen=True)
class Unfixed:
    """A finding left for a person, and why (``display-only``, ``unsafe``, ``value not as written``)."""

    finding: Finding
    reason: str


@dataclass(frozen=True)
class NotBumped:
    """A vLLM pin or image tag older than the target that the bump could not set, and why.

    Attributes:
        path: the file (as reported).
        line: 1-based line of the pin or image.
        raw: the pin or image as read (``vllm/vllm-openai:v0.26.0``).
        reason: why it was left alone (an ARG used elsewhere, a tag pinned by digest, ...).
    """

    path: str
    line: int | None
    raw: str
    reason: str


@dataclass
class FixPlan:
    """Edits to make, findings that need a person, and versions the bump left alone."""

    edits: list[Edit] = field(default_factory=list)
    unfixed: list[Unfixed] = field(default_factory=list)
    not_bumped: list[NotBumped] = field(default_factory=list)


@dataclass(frozen=True)
class FileText:
    """A file decoded for editing: ``text`` keeps ``\\r\\n`` as written; ``bom`` and
    ``encoding`` say how to encode it back."""

    path: Path
    text: str
    encoding: str
    bom: bool


def read_text(path: Path, overlay: Mapping[str, bytes] | None = None) -> FileText:
    """Decode ``path`` (or its ``overlay`` bytes, keyed by real path) as UTF-8 (BOM remembered),
    else Latin-1; newlines are not translated.

    Raises:
        OSError: unreadable file.
    """
    pending = overlay.get(os.path.realpath(path)) if overlay else None
    data = path.read_bytes() if pending is None else pending
    bom = data.startswith(b"\xef\xbb\xbf")
    try:
        return FileText(path, data[3 if bom else 0 :].decode("utf-8"), "utf-8", bom)
    except UnicodeDecodeError:
        return FileText(path, data.decode("latin-1"), "latin-1", False)


# ---------------------------------------------------------------------------------------------
# Paths


def resolve_in_roots(roots: Sequence[Path], relpath: str) -> Path:
    """The real file behind ``relpath`` (relative to one of ``roots``, prefixed by its
    :func:`~vllm_upgrade_check.discovery.root_label` when there are several), checked to lie
    inside it and reached through no symlink.

    Raises:
        CannotFix: not found under any root, or a symlink leads out of the root.
    """
    for root in roots:
        label = root_label(root, roots)
        if root.is_file():
            if (label or root.name) != relpath:
                continue
            candidate, base = root, root.parent
        else:
            if label and not relpath.startswith(label + "/"):
                continue
            relpath_in_root = relpath[len(label) + 1 :] if label else relpath
            candidate, base = root / relpath_in_root, root
        if not candidate.is_file():
            continue
        real = os.path.realpath(candidate)
        real_base = os.path.realpath(base)
        if root.is_file() and os.path.islink(root):
            raise CannotFix("the file is a symlink; not following it")
        if not real.startswith(real_base.rstrip(os.sep) + os.sep):
            raise CannotFix("a symlink leads outside the scanned root; not following it")
        if not root.is_file() and real != os.path.join(real_base, *Path(relpath_in_root).parts):
            raise CannotFix("the path goes through a symlink; not following it")
        return Path(real)
    raise CannotFix("file not found under the scanned roots")


# ---------------------------------------------------------------------------------------------
# Text helpers


def _offset(text: str, line: int, column: int) -> int:
    try:
        return line_index(text).offset(line, column)
    except ValueError as exc:
        raise CannotFix(str(exc)) from None


def _line_start(text: str, pos: int) -> int:
    return text.rfind("\n", 0, pos) + 1


def _line_end(text: str, pos: int) -> tuple[int, int]:
    """``(end of content, end including the newline)`` of the line holding ``pos``."""
    nl = text.find("\n", pos)
    if nl < 0:
        return len(text), len(text)
    content = nl - 1 if nl > 0 and text[nl - 1] == "\r" else nl
    return max(content, _line_start(text, pos)), nl + 1


def _unquote(word: str) -> str:
    if len(word) >= 2 and word[0] == word[-1] and word[0] in "\"'":
        return word[1:-1]
    return word


def _newline(text: str) -> str:
    return "\r\n" if "\r\n" in text else "\n"


def _line_no(text: str, pos: int) -> int:
    return line_index(text).line_col(pos)[0]


def _skip_gap(text: str, pos: int, commas: bool) -> tuple[int, bool]:
    """Skip blanks, shell line continuations and (in arrays) one comma; ``(pos, saw comma)``."""
    saw = False
    while pos < len(text):
        c = text[pos]
        if c in " \t":
            pos += 1
        elif c == "\\" and text[pos + 1 : pos + 2] == "\n":
            pos += 2
        elif c == "\\" and text[pos + 1 : pos + 3] == "\r\n":
            pos += 3
        elif commas and c == "," and not saw:
            saw, pos = True, pos + 1
        elif commas and c in "\r\n":
            pos += 1
        else:
            break
    return pos, saw


def _word_end(text: str, pos: int, array: bool) -> int:
    if pos >= len(text):
        raise CannotFix("the flag's value is missing")
    quote = text[pos]
    if quote in "\"'":
        i = pos + 1
        while i < len(text) and text[i] != quote:
            i += 2 if quote == '"' and text[i] == "\\" else 1
        if i >= len(text):
            raise CannotFix("unterminated quote in the flag's value")
        return i + 1
    stop = re.compile(r"[\s,\]]" if array else r"\s")
    m = stop.search(text, pos)
    end = m.start() if m else len(text)
    if text[end - 1 : end] == "\\" and end - 1 > pos:
        end -= 1
    return end


def _flag_span(text: str, fact: Fact) -> tuple[int, int, str]:
    """``(start, end, written)`` of the flag token at the fact's location, quotes included.

    Scanners place the column on the flag itself or on its opening quote; the end is
    re-derived from the text (the closing quote, or the end of ``--flag=value``).
    """
    loc = fact.location
    if loc.line is None or loc.column is None:
        raise CannotFix("no position in the file")
    start = _offset(text, loc.line, loc.column)
    raw = fact.raw
    if text[start : start + 1] in ("'", '"') and text.startswith(raw, start + 1):
        quote = text[start]
    elif text.startswith(raw, start) and start > 0 and text[start - 1] in "\"'":
        start -= 1
        quote = text[start]
    elif text.startswith(raw, start):
        quote = ""
    else:
        raise CannotFix(f"expected {raw!r} at {loc}, found {text[start : start + len(raw)]!r}")
    if quote:
        close = text.find(quote, start + 1)
        if close < 0 or "\n" in text[start:close]:
            raise CannotFix(f"unterminated quote at {loc}")
        end = close + 1
    else:
        end = start + len(raw)
        if text[end : end + 1] == "=":
            if text[end + 1 : end + 2] in ("'", '"'):
                end = _word_end(text, end + 1, False)
            else:
                m = re.compile(r"\S*").match(text, end)
                end = m.end() if m else end
            while text[end - 1] in ",]" and end > start + len(raw) + 1:
                end -= 1
            if text[end - 1] == "\\":
                end -= 1
    return start, end, text[start:end]


def _whole_lines(text: str, start: int, end: int) -> tuple[int, int, str] | None:
    """When removing ``[start, end)`` leaves only blanks (or a lone ``\\``) on its lines,
    the span of those whole lines (and the dangling ``\\`` before them) and its new text."""
    ls = _line_start(text, start)
    content_end, full_end = _line_end(text, max(end - 1, start))
    rest = (text[ls:start] + text[end:content_end]).strip()
    if rest not in ("", "\\"):
        return None
    if rest == "" and ls > 0:
        prev_content = ls - 1 - (1 if text[ls - 2 : ls] == "\r\n" else 0)
        prev_start = _line_start(text, prev_content)
        prev = text[prev_start:prev_content]
        if prev.rstrip().endswith("\\") and prev.strip() != "\\":
            cut = prev_start + len(prev.rstrip()[:-1].rstrip())
            ending = text[prev_content:ls]
            return cut, full_end, ending
    return ls, full_end, ""


_REFERENCE_WORD = re.compile(r"\$(?:\(\w+\)|\{\w+\}|\w+)")
"""A word that is one variable reference: Kubernetes ``$(N)``, shell ``${N}`` or ``$N``."""


def _value_written(word: str, fact: Fact) -> bool:
    """Whether ``word``, written after the flag, is the value the scanner read there: the value
    itself, or one variable reference the scanner resolved to it (``$(N)`` from the
    container's ``env``, ``$N`` from the script)."""
    return word == fact.value or (fact.resolved and _REFERENCE_WORD.fullmatch(word) is not None)


def _remove_cli(text: str, fact: Fact) -> tuple[int, int, str]:
    start, end, written = _flag_span(text, fact)
    quoted = written[:1] in "\"'"
    ls = _line_start(text, start)
    needs_value = fact.value is not None and "=" not in _unquote(written)
    # YAML block sequence: `- --flag` then `- value` on the next line.
    if re.fullmatch(r"[ \t]*-[ \t]+", text[ls:start]):
        content_end, full_end = _line_end(text, start)
        after = text[end:content_end].strip()
        if not needs_value or after:
            if after and not _value_written(_unquote(after), fact):
                raise CannotFix(f"value as written ({after!r}) is not {fact.value!r}")
            return ls, full_end, ""
        m = re.match(r"[ \t]*-[ \t]+(.*?)[ \t]*(\r?\n|$)", text[full_end:])
        if not m or not _value_written(_unquote(m.group(1)), fact):
            raise CannotFix("the flag's value is not the next list item")
        return ls, full_end + m.end(), ""
    # An exec array / flow sequence element: followed by `,` or `]` (quoted or not).
    after_flag, _ = _skip_gap(text, end, False)
    array = text[after_flag : after_flag + 1] in (",", "]") and (quoted or "=" not in written)
    span_end = end
    if needs_value:
        vstart, _ = _skip_gap(text, end, array)
        vend = _word_end(text, vstart, array)
        if not _value_written(_unquote(text[vstart:vend]), fact):
            raise CannotFix(f"value as written ({text[vstart:vend]!r}) is not {fact.value!r}")
        span_end = vend
    span_start = start
    if array:
        # Prefer dropping the comma before the element, so that neighbouring removals never
        # overlap; the first element takes the comma after it instead.
        back = span_start
        while back > 0 and text[back - 1] in " \t\r\n\\":
            back -= 1
        if back > 0 and text[back - 1] == ",":
            span_start = back - 1
        else:
            m = re.match(r"[ \t]*,[ \t]*", text[span_end:])
            span_end = span_end + (m.end() if m else 0)
    else:
        m = re.match(r"[ \t]+", text[span_end:])
        if m and span_end + m.end() < len(text) and text[span_end + m.end()] not in "\r\n":
            span_end += m.end()
        else:
            while span_start > ls and text[span_start - 1] in " \t":
                span_start -= 1
    whole = _whole_lines(text, span_start, span_end)
    if whole is not None:
        return whole
    return span_start, span_end, ""


def _remove_kwarg(text: str, fact: Fact) -> tuple[int, int, str]:
    loc = fact.location
    if loc.line is None or loc.column is None:
        raise CannotFix("no position in the file")
    start = _offset(text, loc.line, loc.column)
    m = re.compile(rf"{re.escape(fact.name)}\s*=\s*").match(text, start)
    if not m:
        raise CannotFix(f"expected keyword {fact.name}= at {loc}")
    depth, i, quote = 0, m.end(), ""
    while i < len(text):
        c = text[i]
        if quote:
            if c == "\\":
                i += 1
            elif c == quote:
                quote = ""
        elif c in "\"'":
            quote = c
        elif c in "([{":
            depth += 1
        elif c in ")]}":
            if depth == 0:
                break
            depth -= 1
        elif c == "," and depth == 0:
            break
        i += 1
    end = i
    if text[end : end + 1] == ",":
        end += 1
        while end < len(text) and text[end] in " \t":
            end += 1
    else:
        back = start
        while back > 0 and text[back - 1] in " \t\r\n":
            back -= 1
        if back > 0 and text[back - 1] == ",":
            start = back - 1
    ls = _line_start(text, start)
    content_end, full_end = _line_end(text, max(end - 1, start))
    if (text[ls:start] + text[end:content_end]).strip() == "":
        return ls, full_end, ""
    return start, end, ""


def _remove_config_key(text: str, fact: Fact) -> tuple[int, int, str]:
    loc = fact.location
    if loc.line is None:
        raise CannotFix("no position in the file")
    ls = _offset(text, loc.line, 1)
    _, full_end = _line_end(text, ls)
    line = text[ls:full_end]
    key = line.strip().split(":", 1)[0].strip().strip("\"'")
    if key.replace("-", "_") != fact.name and key != fact.raw.lstrip("-"):
        raise CannotFix(f"expected key {fact.name} at {loc}")
    indent = len(line) - len(line.lstrip(" "))
    end = full_end
    while end < len(text):
        _, nxt = _line_end(text, end)
        following = text[end:nxt]
        if following.strip() and len(following) - len(following.lstrip(" ")) <= indent:
            break
        end = nxt
    return ls, end, ""


def _rename(text: str, fact: Fact, replacement: str) -> tuple[int, int, str]:
    loc = fact.location
    if loc.line is None or loc.column is None:
        raise CannotFix("no position in the file")
    start = _offset(text, loc.line, loc.column)
    if fact.kind == FactKind.ARG:
        start, _, written = _flag_span(text, fact)
        start += 1 if written[:1] in "\"'" else 0
        old = fact.raw if fact.origin == "cli" else fact.name
        body = replacement.lstrip("-")
        if fact.origin != "cli":
            new = body.replace("-", "_")
        elif replacement.startswith("-"):
            new = replacement
        else:
            new = "--" + (body.replace("-", "_") if "_" in old else body.replace("_", "-"))
    else:
        old, new = fact.name, replacement
    if text[start : start + len(old)] != old:
        raise CannotFix(f"expected {old!r} at {loc}")
    return start, start + len(old), new


def _replace_value(text: str, fact: Fact, replacement: str) -> tuple[int, int, str]:
    start, end, written = _flag_span(text, fact)
    if fact.value is None:
        raise CannotFix("the flag has no value")
    if "=" in _unquote(written):
        vstart = start + written.index("=") + 1
        vend = end - (1 if written[:1] in "\"'" else 0)
    else:
        vstart, _ = _skip_gap(text, end, written[:1] in "\"'")
        vend = _word_end(text, vstart, written[:1] in "\"'")
    found = text[vstart:vend]
    if _unquote(found) != fact.value:
        raise CannotFix(f"value as written ({found!r}) is not {fact.value!r}")
    if found != _unquote(found):
        vstart, vend = vstart + 1, vend - 1
    return vstart, vend, replacement


_REQ = re.compile(
    r"(?P<head>\s*[A-Za-z0-9][A-Za-z0-9._-]*\s*(\[[^\]]*\])?\s*)(?P<spec>[^;@]*?)(?P<tail>\s*(;.*)?)$"
)


# Scanners whose requirement facts sit in shell text written as is (``RUN pip install …``), and
# characters that shell would read as redirection, pipes, globs or word breaks.
_SHELL_SCANNERS = frozenset({"dockerfile", "shell", "makefile"})
_SHELL_META = frozenset("<>|&; *!")


def _set_specifier(text: str, fact: Fact, specifier: str) -> tuple[int, int, str]:
    loc = fact.location
    if loc.line is None or loc.column is None:
        raise CannotFix("no position in the file")
    start = _offset(text, loc.line, loc.column)
    quoted = start > 0 and text[start - 1] in "'\""
    if text[start : start + 1] in ("'", '"') and text[start + 1 : start + 1 + len(fact.raw)] == fact.raw:
        start, quoted = start + 1, True
    if text[start : start + len(fact.raw)] != fact.raw:
        raise CannotFix(f"expected {fact.raw!r} at {loc}")
    m = _REQ.match(fact.raw)
    if not m:
        raise CannotFix(f"cannot find the specifier in {fact.raw!r}")
    new = fact.raw[: m.start("spec")] + specifier + fact.raw[m.end("spec") :]
    if fact.scanner == "requirements" or quoted or not _SHELL_META.intersection(new):
        return start + m.start("spec"), start + m.end("spec"), specifier
    if fact.scanner in _SHELL_SCANNERS:
        # A bare `<`/`>` in `pip install x<2` is a shell redirection: quote the whole requirement.
        return start, start + len(fact.raw), f"'{new}'"
    raise CannotFix(f"{new!r} needs shell quoting inside an embedded command; edit it by hand")


def _bump_image(text: str, fact: Fact, target: Version) -> tuple[int, int, str]:
    """The edit that sets the tag of vLLM image ``fact`` to ``target``, keeping the tag's
    ``v`` prefix and its suffix (``-cu128``): in the reference itself, in the ``tag:`` beside a
    Helm ``repository:``, or in the default of the Dockerfile ``ARG`` the tag is made of.

    Raises:
        CannotFix: the tag is not written where the fact says, not as a plain value, or the
            image is pinned by digest.
    """
    loc = fact.location
    if loc.line is None or loc.column is None:
        raise CannotFix("no position in the file")
    if "@" in fact.raw:
        raise CannotFix("the image is pinned by digest; update the digest by hand")
    start = _offset(text, loc.line, loc.column)
    written = text[start : start + len(fact.raw)]
    _name, tag = split_image(fact.raw)
    if written == fact.raw:
        if not tag:
            raise CannotFix("the image has no version tag")
        tag_start = start + len(fact.raw) - len(tag)
        return tag_start, start + len(fact.raw), _bumped_tag(tag, target)
    if fact.scanner == "helm" and tag:
        # repository: vllm/vllm-openai + tag: v0.26.0 (the fact stands at the repository).
        span = _helm_tag_span(text, loc.line, loc.column)
        if span is None or text[span[0] : span[1]] != tag:
            raise CannotFix("the tag beside the repository is not written as one value; set it by hand")
        return span[0], span[1], _bumped_tag(tag, target)
    line_end = text.find("\n", start)
    if "$" in text[start : len(text) if line_end < 0 else line_end]:
        # FROM vllm/vllm-openai:v${VLLM_VERSION}-cu128: the version comes from an ARG default.
        return _arg_version_edit(text, start, fact, target)
    raise CannotFix(f"expected {fact.raw!r} at {loc}")


_VERSION_TEXT = re.compile(r"\d+(?:\.\d+)+(?:(?:a|b|rc|\.post|\.dev)\d+)?")


def _arg_version_edit(text: str, start: int, fact: Fact, target: Version) -> tuple[int, int, str]:
    """The edit that bumps a Dockerfile image reference written with variables, such as
    ``vllm/vllm-openai:v${VLLM_VERSION}-${CUDA}`` or ``${IMAGE}`` at offset ``start``: the
    version is replaced where it is written, in the reference itself (a ``${NAME:-0.26.0}``
    default included) or in the default of the one ``ARG`` that holds it (the last global
    ``ARG NAME=default``, as Docker reads it).

    Raises:
        CannotFix: a variable without a value in the file, an expansion this does not follow,
            a version split across several parts, or an ``ARG`` also used elsewhere (bumping
            it would move those too).
    """
    word = re.compile(r"\S+").match(text, start)
    reference = word.group() if word else ""
    # Parts of the reference as (offset in the resolved reference, resolved text, file offset of
    # that text, the ARG name when the text is that ARG's default).
    parts: list[tuple[int, str, int, str | None]] = []
    resolved, cursor = "", 0
    for m in FROM_VARIABLE.finditer(reference):
        if m.start() > cursor:
            parts.append((len(resolved), reference[cursor : m.start()], start + cursor, None))
            resolved += reference[cursor : m.start()]
        name = m.group(1) or m.group(5)
        colon, sign, alternative = m.group(2), m.group(3), m.group(4)
        default = _arg_default(text, name, start)
        is_set = default is not None and (default[0] != "" or not colon)
        if sign == "+":
            raise CannotFix(f"the reference uses ${{{name}{colon}+...}}; set the version by hand")
        if sign == "-" and not is_set:
            parts.append((len(resolved), alternative, start + m.start(4), None))  # the word after :-
            resolved += alternative
        elif default is None:
            raise CannotFix(f"ARG {name} has no default in this file; set the version where the build passes it")
        else:
            parts.append((len(resolved), default[0], default[1], name))
            resolved += default[0]
        cursor = m.end()
    if cursor < len(reference):
        parts.append((len(resolved), reference[cursor:], start + cursor, None))
        resolved += reference[cursor:]
    if "${" in resolved:
        raise CannotFix("the reference uses a parameter expansion this fix does not follow; set the version by hand")
    if resolved != fact.raw:
        raise CannotFix(f"the reference reads {resolved!r} here, not {fact.raw!r}")
    tag_at = resolved.rfind(":") + 1
    version = _VERSION_TEXT.search(resolved, tag_at) if tag_at > 0 and "/" not in resolved[tag_at:] else None
    if version is None:
        raise CannotFix("the tag names no version")
    for offset, part, file_offset, name in parts:
        if offset <= version.start() and version.end() <= offset + len(part):
            if name is not None:
                uses = _arg_uses(text, name)
                if uses > 1:
                    raise CannotFix(
                        f"ARG {name} is used {uses} times in this file; bumping it would change the others too"
                    )
            begin = file_offset + version.start() - offset
            return begin, begin + len(version.group()), str(target)
    raise CannotFix(f"the version {version.group()} is split across ARGs; set it by hand")


def _arg_uses(text: str, name: str) -> int:
    """Expansions of ``name`` in ``text`` (``$V``, ``${V}``, ``${V:-x}``, ``${V%.*}``, ...),
    comment lines left out."""
    use = re.compile(rf"\$\{{?{re.escape(name)}(?![A-Za-z0-9_])")
    return sum(len(use.findall(line)) for line in text.splitlines() if not line.lstrip().startswith("#"))


_ARG_LINE = re.compile(r"^[ \t]*(?i:ARG)[ \t]+((?:[^\r\n]*\\\r?\n)*[^\r\n]*)", re.M)
_FROM_LINE = re.compile(r"^[ \t]*(?i:FROM)[ \t]", re.M)


def _arg_default(text: str, name: str, before: int) -> tuple[str, int] | None:
    """``(default, file offset of it)`` of ``name`` (case-sensitive, as Docker reads it) in the
    last ``ARG`` that sets it before offset ``before`` (quotes stripped; ``ARG A=1 B=2`` and
    ``\\`` continuations too), or ``None``. Only global ``ARG``s count: those before the first
    ``FROM``, the only ones a ``FROM`` line can use."""
    first_from = _FROM_LINE.search(text)
    limit = min(before, first_from.start()) if first_from else before
    setting = re.compile(rf"(?:^|\s){re.escape(name)}=([\"']?)([^\s\"'\\]*)\1(?=[\s\\]|$)")
    found = None
    for line in _ARG_LINE.finditer(text, 0, limit):
        m = setting.search(line.group(1))
        if m:
            found = (m.group(2), line.start(1) + m.start(2))
    return found


def _bumped_tag(tag: str, target: Version) -> str:
    """``tag`` (``v0.26.0-cu128``, ``0.26.0``) naming ``target`` instead, in the same style."""
    return ("v" if tag[:1] in "vV" else "") + str(target) + _tag_suffix(tag)


def _helm_tag_span(text: str, line: int, column: int) -> tuple[int, int] | None:
    """Offsets of the ``tag`` value in the YAML mapping whose ``repository`` value starts at
    ``line``:``column`` (1-based; inside the quote of a quoted one), or ``None``. The value
    must be written once, as it reads, inside the tag's node (plain, quoted, anchored, or a
    one-line block scalar)."""
    from yaml import MappingNode, ScalarNode

    from vllm_upgrade_check.yamlnodes import YamlProblem, documents, get, pos

    try:
        roots = documents(text)
    except YamlProblem:
        return None
    stack = list(roots)
    while stack:
        node = stack.pop()
        if isinstance(node, MappingNode):
            repo = get(node, "repository")
            if repo is not None and pos(repo).line == line and pos(repo).column in (column, column - 1):
                tag = get(node, "tag")
                if not isinstance(tag, ScalarNode) or not tag.value.strip():
                    return None
                value = tag.value.strip()
                begin, end = tag.start_mark.index, tag.end_mark.index
                found = text.find(value, begin, end)
                if found < 0 or text.find(value, found + 1, end) >= 0:
                    return None
                anchor = re.search(r"&(\S+)", text[begin:found])
                if anchor and re.search(rf"\*{re.escape(anchor.group(1))}(?![^\s,\]}}])", text):
                    raise CannotFix(f"the tag is anchor &{anchor.group(1)}, which other values use; set it by hand")
                return found, found + len(value)
            stack.extend(child for pair in node.value for child in pair)
        elif isinstance(node.value, list):
            stack.extend(node.value)
    return None


def _tag_suffix(tag: str) -> str:
    head = tag.lstrip("vV")
    return "-" + head.split("-", 1)[1] if "-" in head else ""


# ---------------------------------------------------------------------------------------------
# Planning


def edit_for_finding(finding: Finding, text: str, target: Version) -> tuple[int, int, str]:
    """``(start, end, new text)`` of the mechanical fix of ``finding`` in ``text``.

    Raises:
        CannotFix: the rule has no mechanical fix or the text is not as the fact says.
    """
    fix = finding.rule.fix
    fact = finding.fact
    if fix.action == FixAction.REMOVE_ARG:
        if fact.kind != FactKind.ARG:
            raise CannotFix("remove_arg applies to args only")
        if fact.origin == "python":
            return _remove_kwarg(text, fact)
        if fact.origin == "config":
            return _remove_config_key(text, fact)
        return _remove_cli(text, fact)
    if fix.action == FixAction.RENAME and fix.replacement:
        return _rename(text, fact, fix.replacement)
    if fix.action == FixAction.REPLACE_VALUE and fix.replacement is not None:
        return _replace_value(text, fact, fix.replacement)
    if fix.action == FixAction.SET_SPECIFIER and fix.replacement and fact.kind == FactKind.REQUIREMENT:
        return _set_specifier(text, fact, fix.replacement)
    if fix.action == FixAction.BUMP_IMAGE and fact.kind == FactKind.IMAGE:
        return _bump_image(text, fact, Version(fix.replacement) if fix.replacement else target)
    raise CannotFix(f"no mechanical fix ({fix.action.value})")


def _describe(fact: Fact, action: str, new: str) -> str:
    subject = fact.raw or fact.name
    if action == FixAction.REMOVE_ARG.value:
        value = f" {fact.value}" if fact.value is not None and "=" not in subject else ""
        return f"remove {subject}{value}"
    return f"{action} {subject} -> {new}"


def _upgrade_edit(fact: Fact, text: str, target: Version) -> tuple[int, int, str] | None:
    if fact.kind == FactKind.REQUIREMENT and fact.name == "vllm" and fact.origin == "file":
        value = fact.value or ""
        if not value.startswith("==") or "," in value:
            return None
        try:
            current = Version(value[2:].strip().removesuffix(".*"))
        except ValueError:
            return None
        if current >= target:
            return None
        return _set_specifier(text, fact, f"=={target}")
    if fact.kind == FactKind.IMAGE and is_vllm_image(fact.raw or fact.name) and fact.value:
        version = version_from_tag(fact.value)
        if version is None or version >= target:
            return None
        return _bump_image(text, fact, target)
    return None


def plan_fixes(
    findings: Iterable[Finding],
    facts: Iterable[Fact],
    roots: Sequence[Path],
    target: Version,
    unsafe: bool = False,
    bump: bool = True,
    overlay: Mapping[str, bytes] | None = None,
) -> FixPlan:
    """Edits for every mechanical fix allowed by ``unsafe``, plus (``bump``) the built-in bump of
    ``vllm==X`` pins and vLLM image tags older than ``target``.

    Findings without a path (environment), display-only or (without ``unsafe``) unsafe fixes,
    and fixes whose text is not where the fact says become :class:`Unfixed` entries.
    Overlapping edits keep the first (by offset); identical ones are merged. ``overlay``: file
    contents to edit instead of the disk, by real path.
    """
    plan = FixPlan()
    texts: dict[str, str | CannotFix] = {}

    def text_of(rel: str) -> str:
        if rel not in texts:
            try:
                texts[rel] = read_text(resolve_in_roots(roots, rel), overlay).text
            except CannotFix as exc:
                texts[rel] = exc
            except OSError as exc:
                texts[rel] = CannotFix(f"cannot read: {exc.strerror or exc}")
        got = texts[rel]
        if isinstance(got, CannotFix):
            raise got
        return got

    raw_edits: list[Edit] = []
    for finding in findings:
        fix = finding.rule.fix
        rel = finding.location.path
        if rel is None:
            plan.unfixed.append(Unfixed(finding, "in the environment: change it by hand"))
            continue
        if fix.action not in MECHANICAL or fix.applicability == Applicability.DISPLAY_ONLY:
            plan.unfixed.append(Unfixed(finding, "no mechanical fix"))
            continue
        if fix.applicability == Applicability.UNSAFE and not unsafe:
            plan.unfixed.append(Unfixed(finding, "unsafe fix: use --unsafe-fixes"))
            continue
        try:
            text = text_of(rel)
            start, end, new = edit_for_finding(finding, text, target)
        except CannotFix as exc:
            plan.unfixed.append(Unfixed(finding, str(exc)))
            continue
        raw_edits.append(
            _edit_of(
                rel, text, start, end, new, finding.rule.id, _describe(finding.fact, fix.action.value, new)
            )
        )
    if bump:
        for fact in facts:
            rel = fact.location.path
            if rel is None:
                continue
            try:
                text = text_of(rel)
                got = _upgrade_edit(fact, text, target)
            except CannotFix as exc:
                left = NotBumped(rel, fact.location.line, fact.raw or fact.name, str(exc))
                if left not in plan.not_bumped:
                    plan.not_bumped.append(left)
                continue
            if got is not None:
                start, end, new = got
                raw_edits.append(
                    _edit_of(rel, text, start, end, new, UPGRADE_ID, f"bump {fact.raw} to {target}")
                )
    seen: set[tuple[str, int, int, str]] = set()
    last_end: dict[str, int] = {}
    for edit in sorted(raw_edits, key=lambda e: (e.path, e.start, e.end)):
        key = (edit.path, edit.start, edit.end, edit.new)
        if key in seen:
            continue
        if edit.start < last_end.get(edit.path, -1):
            continue
        seen.add(key)
        last_end[edit.path] = edit.end
        plan.edits.append(edit)
    return plan


# ---------------------------------------------------------------------------------------------
# Applying


def apply_to_text(text: str, edits: Sequence[Edit], path: str = "") -> str:
    """``text`` with ``edits`` (non-overlapping) applied.

    Raises:
        StaleEditError: the text at an edit's offsets is not its ``old`` text.
    """
    pieces: list[str] = []
    cursor = 0
    for edit in sorted(edits, key=lambda e: (e.start, e.end)):
        if edit.start < cursor or text[edit.start : edit.end] != edit.old:
            raise StaleEditError(
                f"file changed since it was scanned: expected {edit.old!r}; nothing written to it",
                path or edit.path,
                edit.line or None,
            )
        pieces += (text[cursor : edit.start], edit.new)
        cursor = edit.end
    pieces.append(text[cursor:])
    return "".join(pieces)


def _by_path(edits: Iterable[Edit]) -> dict[str, list[Edit]]:
    grouped: dict[str, list[Edit]] = {}
    for edit in edits:
        grouped.setdefault(edit.path, []).append(edit)
    return grouped


def unified_diff(edits: Sequence[Edit], roots: Sequence[Path]) -> str:
    """A unified diff (``a/PATH`` / ``b/PATH``) of what :func:`apply_edits` would write.

    Raises:
        StaleEditError, CannotFix: as :func:`apply_edits`.
    """
    chunks: list[tuple[str, str, str]] = []
    for rel, group in sorted(_by_path(edits).items()):
        before = read_text(resolve_in_roots(roots, rel)).text
        chunks.append((rel, before, apply_to_text(before, group, rel)))
    return _diff_text(chunks)


def _diff_text(files: Iterable[tuple[str, str, str]]) -> str:
    """A unified diff of ``(relative path, before, after)`` texts."""
    lines: list[str] = []
    for rel, before, after in files:
        lines.extend(
            difflib.unified_diff(
                before.splitlines(keepends=True),
                after.splitlines(keepends=True),
                fromfile=f"a/{rel}",
                tofile=f"b/{rel}",
            )
        )
    return "".join(line if line.endswith("\n") else line + "\n" for line in lines)


def write_atomic(path: Path, data: bytes) -> None:
    """Replace ``path`` by ``data`` through a temporary file in the same directory, keeping its mode.

    Raises:
        OSError: the directory is not writable.
    """
    mode = stat.S_IMODE(path.stat().st_mode)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def apply_edits(
    edits: Sequence[Edit], roots: Sequence[Path], overlay: dict[str, bytes] | None = None
) -> tuple[list[str], list[VucError]]:
    """Apply ``edits`` file by file; with ``overlay``, read from and write to it (by real path)
    instead of the disk.

    Returns:
        ``(relative paths written, errors)``; a file with a stale edit or outside the roots
        is not written and contributes one error, the other files are still written.
    """
    written: list[str] = []
    errors: list[VucError] = []
    for rel, group in sorted(_by_path(edits).items()):
        try:
            real = resolve_in_roots(roots, rel)
            source = read_text(real, overlay)
            after = apply_to_text(source.text, group, rel)
            data = (b"\xef\xbb\xbf" if source.bom else b"") + after.encode(source.encoding)
            if overlay is not None:
                overlay[os.path.realpath(real)] = data
            else:
                write_atomic(real, data)
        except CannotFix as exc:
            errors.append(VucError(str(exc), rel))
            continue
        except StaleEditError as exc:
            errors.append(exc)
            continue
        except OSError as exc:
            errors.append(VucError(f"cannot write: {exc.strerror or exc}", rel))
            continue
        written.append(rel)
    return written, errors


@dataclass
class FixResult:
    """What :func:`fix_paths` did.

    Attributes:
        applied: edits written, in order.
        unfixed: findings left for a person (from the last scan).
        not_bumped: vLLM pins and image tags the bump could not set, with the reason.
        skipped: files the last scan could not read or parse (nothing in them was fixed).
        errors: stale edits and unwritable files (those files were not written).
        from_version: the run-wide "from" version of the first scan, or ``None``.
        target: the target release.
    """

    applied: list[Edit] = field(default_factory=list)
    unfixed: list[Unfixed] = field(default_factory=list)
    not_bumped: list[NotBumped] = field(default_factory=list)
    skipped: list[Skipped] = field(default_factory=list)
    errors: list[VucError] = field(default_factory=list)
    from_version: str | None = None
    target: str = ""


def fix_paths(
    options: ScanOptions,
    unsafe: bool = False,
    bump: bool = True,
    max_passes: int = 10,
    overlay: dict[str, bytes] | None = None,
) -> FixResult:
    """Scan, fix and rescan until no mechanical fix is left (edits that overlapped another one
    in a pass apply in the next), then bump vLLM pins and image tags when ``bump``.

    Versions are bumped last so that every pass checks each file from the version it names.
    With ``overlay`` (real path -> bytes, filled in here) nothing is written: every pass reads
    and edits the overlay (``fix --diff``).

    Raises:
        UsageError, RulePackError: as :func:`~vllm_upgrade_check.engine.run_scan`.
    """
    from vllm_upgrade_check.engine import run_scan

    result = FixResult()
    roots = list(options.paths)
    if overlay is not None:
        options = replace(options, overlay=overlay)
    for number in range(max_passes):
        facts: list[Fact] = []
        report = run_scan(options, facts_out=facts)
        target = Version(report.to_version)
        if number == 0:
            result.from_version, result.target = report.from_version, report.to_version
        plan = plan_fixes(report.findings, facts, roots, target, unsafe=unsafe, bump=False, overlay=overlay)
        result.unfixed = plan.unfixed
        result.skipped = list(report.skipped)
        if not plan.edits:
            break
        written, errors = apply_edits(plan.edits, roots, overlay)
        result.applied.extend(e for e in plan.edits if e.path in written)
        result.errors.extend(errors)
        if errors:
            return result
    if bump:
        facts = []
        run_scan(options, facts_out=facts)
        plan = plan_fixes([], facts, roots, Version(result.target), bump=True, overlay=overlay)
        result.not_bumped = plan.not_bumped
        written, errors = apply_edits(plan.edits, roots, overlay)
        result.applied.extend(e for e in plan.edits if e.path in written)
        result.errors.extend(errors)
    return result


def diff_paths(options: ScanOptions, unsafe: bool = False, bump: bool = True) -> tuple[str, FixResult]:
    """What :func:`fix_paths` would write, as a unified diff (``a/PATH`` / ``b/PATH``), and its
    result; the same passes run on an in-memory overlay, so nothing is written.

    Raises:
        UsageError, RulePackError: as :func:`~vllm_upgrade_check.engine.run_scan`.
    """
    overlay: dict[str, bytes] = {}
    result = fix_paths(options, unsafe=unsafe, bump=bump, overlay=overlay)
    roots = list(options.paths)
    files = []
    for rel in sorted({e.path for e in result.applied}):
        real = resolve_in_roots(roots, rel)
        files.append((rel, read_text(real).text, read_text(real, overlay).text))
    return _diff_text(files), result
