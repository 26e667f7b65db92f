"""Dependency declarations: requirements files, ``pyproject.toml``, lock files and
``pip install`` command lines. Each requirement becomes a ``requirement`` fact whose value
is its specifier; every requirement string is parsed with :mod:`packaging.requirements`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import replace

from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import canonicalize_name

from vllm_upgrade_check.model.facts import HASHED, LOCKED, Fact, FactKind, Location, Skipped, Span, Spans
from vllm_upgrade_check.parsing.reqtext import specifier_offsets
from vllm_upgrade_check.parsing.toml import TomlProblem, load_toml
from vllm_upgrade_check.parsing.words import Token, content_columns, sub_span
from vllm_upgrade_check.sources.scanners.base import Scanner, SourceFile

_REQ_NAME = re.compile(
    r"^(requirements|constraints)[\w.-]*\.(txt|in)$|^[\w.-]*requirements[\w.-]*\.(txt|in)$"
)
_PIP_VALUE_OPTS = frozenset(
    "-r --requirement -c --constraint -i --index-url --extra-index-url -f --find-links "
    "--target -t --prefix --root --src --trusted-host --platform --python-version "
    "--implementation --abi --upgrade-strategy --progress-bar --cache-dir --log -e --editable "
    "--config-settings -C --global-option --no-binary --only-binary --python".split()
)


def requirement_fact(
    text: str,
    path: str | None,
    line: int,
    column: int,
    scanner: str,
    origin: str = "file",
    token: Token | None = None,
    syntax: str = "requirements",
) -> Fact | None:
    """A ``requirement`` fact for one PEP 508 string, or ``None`` when it does not parse.

    The fact's name is the canonical distribution name and its value the specifier
    (``""`` when unpinned); the marker, if any, is kept in ``raw``. Its value span is where
    the specifier is written: inside ``token`` when the string is a shell word, else from
    ``line``/``column``, where the string starts.
    """
    stripped = text.strip()
    try:
        req = Requirement(stripped)
    except InvalidRequirement:
        return None
    found = specifier_offsets(stripped)
    value = word = None
    if found is not None and token is not None and token.text == stripped:
        value = sub_span(token, found[0], found[1])
        word = sub_span(token, 0, len(stripped))
    elif found is not None and token is None and "\n" not in stripped:
        value = Span(line, column + found[0], line, column + found[1])
    found_at = content_columns(token) if token is not None and token.text == stripped else None
    if found_at is not None:
        line, column, _end = found_at
    return Fact(
        FactKind.REQUIREMENT,
        canonicalize_name(req.name),
        Location(path, line, column, line, column + len(stripped)),
        raw=stripped,
        value=str(req.specifier),
        origin=origin,
        scanner=scanner,
        spans=Spans(value=value, syntax=syntax, word=word),
    )


def pip_install_facts(argv: Sequence[Token], path: str | None, scanner: str) -> Iterator[Fact]:
    """Requirement facts of a ``pip install`` / ``python -m pip install`` / ``uv pip install`` argv."""
    words = [t.text for t in argv]
    start = None
    for i in range(len(words) - 1):
        if words[i].rsplit("/", 1)[-1] in ("pip", "pip3") and words[i + 1] == "install":
            start = i + 2
            break
    if start is None:
        return
    i = start
    while i < len(argv):
        text = argv[i].text
        if text.startswith("-"):
            i += 2 if text in _PIP_VALUE_OPTS else 1
            continue
        if argv[i].resolved and not text.startswith((".", "/", "git+", "http")):
            fact = requirement_fact(
                text, path, argv[i].line, argv[i].column, scanner, token=argv[i], syntax="shell"
            )
            if fact is not None:
                yield fact
        i += 1


def requirements_txt_facts(text: str, path: str, scanner: str) -> Iterator[Fact | Skipped]:
    """Facts of a pip requirements file: one per requirement line (continuations joined); a
    :class:`Skipped` per line that is neither a requirement nor a path, URL or archive."""
    lines = text.splitlines()
    mentions = "vllm" in text.lower()
    i = 0
    while i < len(lines):
        start = i
        line = lines[i]
        while line.endswith("\\") and i + 1 < len(lines):
            i += 1
            line = line[:-1] + " " + lines[i]
        i += 1
        body = re.split(r"(^|\s)#", line, maxsplit=1)[0].strip()
        if not body or body.startswith("-"):
            continue
        hashed = " --hash" in body
        body = body.split(" --", 1)[0].split(";", 1)[0] if hashed else body
        column = len(lines[start]) - len(lines[start].lstrip()) + 1
        fact = requirement_fact(body, path, start + 1, column, scanner)
        if fact is not None and hashed:
            fact = replace(fact, spans=Spans(syntax="requirements", note=HASHED))
        elif fact is not None and not lines[start].lstrip().startswith(body):
            fact = replace(fact, spans=None)  # continued over lines: not where one span says
        if fact is not None:
            yield fact
        elif not _pip_only(body):
            # pip would refuse the line (or read it as something else): say so; in a file
            # that mentions vLLM the gate fails closed, since the line may be its pin.
            yield Skipped(
                path,
                f"not a requirement (nor a path, URL or archive pip reads): {body[:80]!r}",
                configures_vllm=mentions,
                line=start + 1,
            )


_PIP_ONLY = re.compile(r"^(\.|/|~|\$\{|[A-Za-z][A-Za-z0-9+.-]*://|git\+)|\.(whl|zip|tar\.gz|tar\.bz2|tgz)$|^[^\s;]*[/\\]")
"""Lines pip reads that are no PEP 508 requirement: a path, a URL, an archive, ``${VAR}``."""


def _pip_only(body: str) -> bool:
    return _PIP_ONLY.search(body) is not None


def _package_line(text: str, dist: str, file_name: str) -> tuple[int, int]:
    """Where the lock file entry of ``dist`` is (``name = "torch"`` of its ``[[package]]``
    table, or its key in ``Pipfile.lock``), not a dependency list naming it."""
    table = re.search(rf'(?m)^[ \t]*name[ \t]*=[ \t]*"{re.escape(dist)}"', text)
    if table is not None:
        index = table.start() + len(table.group()) - len(dist) - 1
        return text.count("\n", 0, index) + 1, index - (text.rfind("\n", 0, index) + 1) + 1
    for needle in (f'"{dist}": {{', f'"{dist}"'):
        line, column = _line_of(text, needle, 0)
        if line:
            return line, column
    return 1, 1


def _line_of(text: str, needle: str, default: int = 1) -> tuple[int, int]:
    index = text.find(needle)
    if index < 0:
        return default, 1
    before = text[:index]
    return before.count("\n") + 1, index - (before.rfind("\n") + 1) + 1


def pyproject_facts(text: str, path: str, scanner: str) -> Iterator[Fact | Skipped]:
    """Facts of ``pyproject.toml``: ``[project]`` dependencies and optional dependencies,
    ``[dependency-groups]``; positions found by locating each string in the text."""
    try:
        data = load_toml(text)
    except TomlProblem as exc:
        yield Skipped(path, str(exc), line=exc.line, configures_vllm="vllm" in text.lower())
        return
    project = data.get("project", {}) if isinstance(data.get("project"), dict) else {}
    strings: list[str] = list(_strings(project.get("dependencies", [])))
    for key, table in (("optional-dependencies", project), ("dependency-groups", data)):
        groups = table.get(key)
        for group in groups.values() if isinstance(groups, dict) else ():
            strings.extend(_strings(group))
    for item in strings:
        line, column = _line_of(text, item)
        fact = requirement_fact(item, path, line, column, scanner, syntax="toml")
        if fact is not None:
            yield fact


def _strings(value: object) -> Iterable[str]:
    if isinstance(value, list):
        return [v for v in value if isinstance(v, str)]
    return []


def lock_facts(text: str, path: str, scanner: str) -> Iterator[Fact | Skipped]:
    """Pinned versions from ``uv.lock``/``poetry.lock``/``pylock.toml`` (TOML ``[[package]]``
    tables) and ``Pipfile.lock`` (JSON), as ``==version`` requirement facts."""
    name = path.rsplit("/", 1)[-1]
    packages: list[tuple[str, str]] = []
    try:
        if name == "Pipfile.lock":
            data = json.loads(text)
            for section in ("default", "develop"):
                deps = data.get(section) if isinstance(data, dict) else None
                for dist, info in deps.items() if isinstance(deps, dict) else ():
                    version = (
                        str(info.get("version", "")).removeprefix("==") if isinstance(info, dict) else ""
                    )
                    if version:
                        packages.append((dist, version))
        else:
            data = load_toml(text)
            entries = data.get("package", data.get("packages", []))
            for entry in entries if isinstance(entries, list) else ():
                if isinstance(entry, dict) and entry.get("name") and entry.get("version"):
                    packages.append((str(entry["name"]), str(entry["version"])))
    except (ValueError, RecursionError) as exc:  # JSON errors and TomlProblem are ValueErrors
        line = exc.line if isinstance(exc, TomlProblem) else getattr(exc, "lineno", None)
        yield Skipped(path, f"cannot parse lock file: {exc}", line=line, configures_vllm="vllm" in text.lower())
        return
    for dist, version in packages:
        line, column = _package_line(text, dist, name)
        fact = requirement_fact(f"{dist}=={version}", path, line, column, scanner)
        if fact is not None:
            yield replace(fact, spans=Spans(note=LOCKED))


LOCK_FILES = frozenset({"uv.lock", "poetry.lock", "Pipfile.lock", "pylock.toml", "pdm.lock"})


class RequirementsScanner(Scanner):
    """requirements*.txt / constraints*.txt / *.in, pyproject.toml and lock files."""

    name = "requirements"

    def accepts(self, source: SourceFile) -> bool:
        return self.accepts_name(source.name)

    def accepts_name(self, name: str) -> bool:
        if name.endswith((".txt", ".in")):
            return bool(_REQ_NAME.match(name))
        return (
            name == "pyproject.toml"
            or name in LOCK_FILES
            or (name.startswith("pylock.") and name.endswith(".toml"))
        )

    def scan(self, source: SourceFile) -> Iterator[Fact | Skipped]:
        name = source.name
        if name == "pyproject.toml":
            yield from pyproject_facts(source.text, source.relpath, self.name)
        elif name in LOCK_FILES or name.startswith("pylock."):
            yield from lock_facts(source.text, source.relpath, self.name)
        else:
            yield from requirements_txt_facts(source.text, source.relpath, self.name)
