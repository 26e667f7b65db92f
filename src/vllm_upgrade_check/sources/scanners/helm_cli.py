"""``helm install``/``upgrade``/``template`` command lines in shell scripts: the values files
they pass (``-f FILE``, ``--values FILE``, comma lists) override the chart's values, so the
flags and env vars written there deploy with the chart. Such a file counts when the chart is a
vLLM chart: a local chart directory whose ``values.yaml`` mentions vLLM, or a chart reference
that names vLLM (``vllm/vllm-stack``, ``oci://…/vllm-chart``)."""

from __future__ import annotations

import json
import posixpath
import re
from collections.abc import Iterator

from vllm_upgrade_check.parsing.shell import ShellScript, Token

_SUBCOMMANDS = frozenset({"install", "upgrade", "template"})
_VALUES = frozenset({"-f", "--values"})
_TAKES_VALUE = frozenset(
    "--set --set-string --set-file --set-json --set-literal -n --namespace --version --kube-context "
    "--kubeconfig --timeout -o --output --repo --username --password --post-renderer "
    "--post-renderer-args --description --ca-file --cert-file --key-file --keyring --history-max "
    "--registry-config --repository-cache --repository-config --burst-limit --qps -l --labels "
    "--name-template --kube-apiserver --kube-as-user --kube-as-group --kube-token --kube-ca-file "
    "--api-versions -a --show-only -s --output-dir --release-name".split()
)
"""helm options that take the next word as their value (helm v3 ``install``/``upgrade``/
``template --help``)."""


def helm_values_commands(script: ShellScript) -> list[tuple[str, list[str]]]:
    """``(chart, values files as written)`` of each ``helm install|upgrade|template`` command
    of ``script`` that passes values files; the chart is its last positional word."""
    out = []
    for command in script.commands:
        words = [t.text for t in command.argv]
        if len(words) < 3 or posixpath.basename(words[0]) != "helm" or words[1] not in _SUBCOMMANDS:
            continue
        positional: list[str] = []
        values: list[str] = []
        rest = iter(words[2:])
        for word in rest:
            name, eq, inline = word.partition("=")
            if name in _VALUES:
                given = inline if eq else next(rest, "")
                values.extend(v for v in given.split(",") if v)
            elif word.startswith("-f") and len(word) > 2 and not word.startswith("--"):
                values.extend(v for v in word[2:].split(",") if v)
            elif word.startswith("-"):
                if name in _TAKES_VALUE and not eq:
                    next(rest, None)
            else:
                positional.append(word)
        if values and positional:
            out.append((positional[-1], values))
    return out


_SETS = frozenset({"--set", "--set-string"})
TAG_KEYS = ("image.tag",)
"""The values a ``--set`` may give that name the release of a chart's vLLM image."""


def _helm_commands(script: ShellScript) -> Iterator[tuple[list[Token], list[str]]]:
    """``(argv, its words as text)`` of each ``helm install|upgrade|template`` command of
    ``script``."""
    for command in script.commands:
        argv = list(command.argv)
        words = [t.text for t in argv]
        if len(words) >= 3 and posixpath.basename(words[0]) == "helm" and words[1] in _SUBCOMMANDS:
            yield argv, words


def helm_set_tags(script: ShellScript) -> list[tuple[str, Token, int, int]]:
    """``(chart, word, start, end)`` of each ``--set image.tag=TAG`` (or ``--set-string``,
    ``--set=...``, in a comma list) of a ``helm install|upgrade|template`` command of
    ``script``: ``word.text[start:end]`` is the tag. A ``--set`` overrides every values file,
    so the tag is the release the command deploys. Tags the script does not resolve are left out."""
    out: list[tuple[str, Token, int, int]] = []
    for argv, words in _helm_commands(script):
        positional: list[str] = []
        found: list[tuple[Token, int, int]] = []
        i = 2
        while i < len(words):
            word = words[i]
            name, eq, inline = word.partition("=")
            if name in _SETS:
                token, base = (argv[i], len(name) + 1) if eq else (argv[i + 1] if i + 1 < len(argv) else None, 0)
                given = inline if eq else (words[i + 1] if i + 1 < len(words) else "")
                if token is not None and token.resolved:
                    offset = base
                    for part in given.split(","):
                        key, has, value = part.partition("=")
                        if has and key.strip() in TAG_KEYS and value and "$" not in value:
                            start = offset + len(key) + 1
                            found.append((token, start, start + len(value)))
                        offset += len(part) + 1
                i += 1 if eq else 2
                continue
            if word.startswith("-"):
                i += 2 if name in _TAKES_VALUE | _VALUES and not eq else 1
                continue
            positional.append(word)
            i += 1
        if positional:
            out.extend((positional[-1], token, start, end) for token, start, end in found)
    return out


def may_pass_helm_values(text: str) -> bool:
    """A cheap test: ``helm`` and a values option (``-f``, ``--values``, ``--set``) appear in ``text``."""
    return "helm" in text and ("-f" in text or "--values" in text or "--set" in text)


_ARG_SETS = frozenset({"--set", "--set-string", "--set-json"})
ARG_KEYS = frozenset({"args", "extraArgs"})
"""The last key of a value that is a container's argument list (a chart's ``args`` /
``extraArgs``, as the Helm values scanner reads them)."""
_INDEXED = re.compile(r"^(?P<key>.+?)\[(?P<index>\d+)\]$")


def _top_level(text: str) -> list[tuple[int, str]]:
    """``(offset, part)`` of each ``key=value`` pair of a ``--set`` value: commas split
    them except inside ``{...}`` lists and after a backslash (Helm ``strvals``)."""
    parts: list[tuple[int, str]] = []
    depth, start, i = 0, 0, 0
    while i < len(text):
        c = text[i]
        if c == "\\":
            i += 2
            continue
        if c == "{":
            depth += 1
        elif c == "}":
            depth = max(depth - 1, 0)
        elif c == "," and depth == 0:
            parts.append((start, text[start:i]))
            start = i + 1
        i += 1
    parts.append((start, text[start:]))
    return parts


def _list_items(value: str, offset: int) -> list[tuple[int, str]] | None:
    """``(offset, item)`` of a Helm ``{a,b,c}`` list written at ``offset``, ``None`` for a
    value that is no such list or escapes a comma (its items are then not where they read)."""
    if not (value.startswith("{") and value.endswith("}")) or "\\" in value:
        return None
    out, at = [], offset + 1
    for item in value[1:-1].split(","):
        if item:
            out.append((at, item))
        at += len(item) + 1
    return out


def _quoted_brace(token: Token) -> bool:
    """Whether the first ``{`` of a ``--set`` word is inside quotes, so that helm gets the
    ``{a,b}`` list as written (bash brace-expands an unquoted one into several words)."""
    written = token.written or token.text
    at = written.find("{")
    return at >= 0 and any(q in written[:at] for q in "'\"")


def _json_items(value: str, offset: int) -> list[tuple[int, str]] | None:
    """``(offset, item)`` of a ``--set-json`` list of strings (each at its text inside its
    quotes where the JSON writes it as is), ``None`` for any other JSON."""
    try:
        found = json.loads(value)
    except ValueError:
        return None
    if not isinstance(found, list) or not all(isinstance(v, str | int | float) for v in found):
        return None
    out, at = [], 0
    for item in found:
        text = item if isinstance(item, str) else json.dumps(item)
        quoted = json.dumps(text) if isinstance(item, str) else text
        where = value.find(quoted, at)
        if where < 0:
            return None
        out.append((offset + where + (1 if isinstance(item, str) else 0), text))
        at = where + len(quoted)
    return out


SetItems = list[tuple[Token, int, str]]
"""The items of a ``--set`` argument list: ``(word, offset in word.text, text)``."""


def helm_set_args(script: ShellScript) -> list[tuple[str, str, Token, SetItems | None]]:
    """``(chart, key, word, items)`` of each container argument list a ``helm
    install|upgrade|template`` command of ``script`` sets: ``--set KEY={a,b}`` (or
    ``--set-string``, ``--set=``, in a comma list), ``--set KEY[N]=a`` (the indexes of one
    key gathered in order), ``--set-json 'KEY=["a","b"]'``, where ``KEY`` ends in one of
    :data:`ARG_KEYS`. ``items`` (:data:`SetItems`) in the list's order; ``None`` when the
    script does not resolve the word (``--set "vllm.args=$ARGS"``)."""
    out: list[tuple[str, str, Token, SetItems | None]] = []
    for argv, words in _helm_commands(script):
        positional: list[str] = []
        found: list[tuple[str, Token, SetItems | None]] = []
        indexed: dict[str, list[tuple[int, Token, int, str]]] = {}
        i = 2
        while i < len(words):
            name, eq, _inline = words[i].partition("=")
            if name in _ARG_SETS:
                token = argv[i] if eq else (argv[i + 1] if i + 1 < len(argv) else None)
                base = len(name) + 1 if eq else 0
                i += 1 if eq else 2
                if token is None:
                    continue
                for at, part in _top_level(token.text[base:]) if name != "--set-json" else [(0, token.text[base:])]:
                    key, has, value = part.partition("=")
                    key = key.strip()
                    m = _INDEXED.match(key)
                    last = (m.group("key") if m else key).rsplit(".", 1)[-1]
                    if not has or last not in ARG_KEYS:
                        continue
                    start = base + at + len(key) + 1
                    if not token.resolved:
                        found.append((key, token, None))
                    elif m is not None:
                        indexed.setdefault(m.group("key"), []).append((int(m.group("index")), token, start, value))
                    else:
                        listed = name == "--set-json" or _quoted_brace(token)
                        items = _json_items(value, start) if name == "--set-json" else _list_items(value, start)
                        items = items if listed else None  # bash expands an unquoted {a,b} into words
                        if items is not None:
                            found.append((key, token, [(token, o, text) for o, text in items]))
                continue
            if words[i].startswith("-"):
                i += 2 if name in _TAKES_VALUE | _VALUES and not eq else 1
                continue
            positional.append(words[i])
            i += 1
        for key, entries in indexed.items():
            entries.sort(key=lambda e: e[0])
            found.append((key, entries[0][1], [(token, start, value) for _i, token, start, value in entries]))
        if positional:
            out.extend((positional[-1], key, token, items) for key, token, items in found)
    return out
