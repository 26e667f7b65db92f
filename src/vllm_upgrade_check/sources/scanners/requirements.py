"""Dependency declarations: requirements files, ``pyproject.toml``, lock files and
``pip install`` command lines. Each requirement becomes a ``requirement`` fact whose value
is its specifier; every requirement string is parsed with :mod:`packaging.requirements`.
"""

from __future__ import annotations

import json
import posixpath
import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import replace

from packaging.requirements import InvalidRequirement
from packaging.utils import canonicalize_name

from vllm_upgrade_check.model.facts import HASHED, LOCKED, Fact, FactKind, Location, Skipped, Span, Spans
from vllm_upgrade_check.parsing.reqtext import parse_requirement, specifier_offsets
from vllm_upgrade_check.parsing.toml import TomlProblem, load_toml
from vllm_upgrade_check.parsing.words import Token, content_columns, sub_span
from vllm_upgrade_check.sources.scanners.base import FileReference, ScanItem, Scanner, SourceFile
from vllm_upgrade_check.sources.scanners.requirement_urls import (
    direct_file_fact,
    url_pin_spans,
    url_version,
)

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
        req = parse_requirement(stripped)
    except InvalidRequirement:
        return None
    found = specifier_offsets(stripped)
    value = word = None
    if found is not None and token is not None and token.text == stripped:
        value = sub_span(token, found[0], found[1])
        word = sub_span(token, 0, len(stripped))
    elif found is not None and token is None and "\n" not in stripped:
        value = Span(line, column + found[0], line, column + found[1])
    specifier, spans = str(req.specifier), Spans(value=value, syntax=syntax, word=word)
    pinned = url_version(req.url) if req.url and canonicalize_name(req.name) == "vllm" else None
    if pinned is not None and req.url is not None:
        # ``vllm @ https://.../vllm-0.20.0-cp38-abi3-manylinux1_x86_64.whl``: read as the pin
        # the URL installs; the version is moved where it is written once, else by hand
        specifier = f"=={pinned[0]}"
        spans = url_pin_spans(stripped, req.url, pinned, line, column, token, syntax)
    found_at = content_columns(token) if token is not None and token.text == stripped else None
    if found_at is not None:
        line, column, _end = found_at
    return Fact(
        FactKind.REQUIREMENT,
        canonicalize_name(req.name),
        Location(path, line, column, line, column + len(stripped)),
        raw=stripped,
        value=specifier,
        origin=origin,
        scanner=scanner,
        spans=spans,
    )


"""``Spans.note`` of a vLLM URL requirement whose version has no span."""


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
        elif argv[i].resolved and not text.startswith("git+"):
            # a wheel or sdist by URL or path (torch-2.3.0%2Bcu121-...whl): the pin its name says
            fact = direct_file_fact(text, path, argv[i].line, argv[i].column, scanner, token=argv[i], syntax="shell")
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
        line, i = _joined(lines, i)
        body = re.split(r"(^|\s)#", line, maxsplit=1)[0].strip()
        if not body or body.startswith("-"):
            continue
        hashed = " --hash" in body
        body = body.split(" --", 1)[0].split(";", 1)[0] if hashed else body
        column = len(lines[start]) - len(lines[start].lstrip()) + 1
        if _REQ_PLACEHOLDER.search(body):
            fact = placeholder_requirement(body, path, start + 1, column, scanner)
            if fact is not None:
                yield fact
            continue  # a placeholder for the name too: only the template knows what it installs
        fact = requirement_fact(body, path, start + 1, column, scanner)
        if fact is None and _pip_only(body):  # a wheel or sdist by URL or path
            fact = direct_file_fact(body, path, start + 1, column, scanner)
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


_FULL_COMMENT = re.compile(r"^\s*#")


def _joined(lines: Sequence[str], i: int) -> tuple[str, int]:
    """The logical line that starts at ``lines[i]`` and the index after it, joined as pip's
    ``req_file.join_lines`` does: a line ending in ``\\`` (not a whole-line comment) runs on
    into the next, its backslashes stripped and nothing put between; a continuation on the
    file's last line ends the file's last logical line (``vllm==0.26.0 \\`` at the end reads
    ``vllm==0.26.0``)."""
    parts: list[str] = []
    while i < len(lines):
        line = lines[i]
        i += 1
        if not line.endswith("\\") or _FULL_COMMENT.match(line):
            if _FULL_COMMENT.match(line) and parts:
                line = " " + line  # pip: a comment ends the joined line (and is cut as one)
            parts.append(line)
            break
        parts.append(line.strip("\\"))
    return "".join(parts), i


_REQ_PLACEHOLDER = re.compile(r"\$\{[A-Za-z_]\w*\}|(?<![$\w{])\{\{?[^{}\n]*\}\}?|\{%.*?%\}")
"""A placeholder in a requirement line: ``${NAME}`` (pip expands it from the environment),
``{name}``, ``{{ name }}`` or ``{% ... %}`` (a template's)."""

_REQ_HEAD = re.compile(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)\s*(\[[^\]]*\])?")


def placeholder_requirement(body: str, path: str, line: int, column: int, scanner: str) -> Fact | None:
    """The requirement fact of a line whose version is a placeholder (``vllm==${VLLM_VERSION}``,
    ``torch=={{ torch_version }}``): the distribution is known, the specifier is not (value
    ``""``, ``resolved=False``, no span to edit). ``None`` when the name itself is a
    placeholder (``${PKG}==1.0``)."""
    head = _REQ_HEAD.match(body)
    if head is None or _REQ_PLACEHOLDER.match(body.lstrip()):
        return None
    name = head.group(1)
    where = Location(path, line, column, line, column + len(body))
    note = "the version is a placeholder filled in when the file is used; set it where its value is set"
    return Fact(
        FactKind.REQUIREMENT,
        canonicalize_name(name),
        where,
        raw=body,
        value="",
        origin="file",
        scanner=scanner,
        resolved=False,
        spans=Spans(syntax="requirements", note=note),
    )


_PIP_ONLY = re.compile(r"^(\.|/|~|\$\{|[A-Za-z][A-Za-z0-9+.-]*://|git\+)|\.(whl|zip|tar\.gz|tar\.bz2|tgz)$|^[^\s;]*[/\\]")
"""Lines pip reads that are no PEP 508 requirement: a path, a URL, an archive, ``${VAR}``."""


def _pip_only(body: str) -> bool:
    return _PIP_ONLY.search(body) is not None


_INCLUDE = re.compile(r"^\s*(-r|--requirement|-c|--constraint)(?:\s*=\s*|\s+|(?<=-[rc]))(\S+)")


def requirement_includes(text: str, path: str) -> Iterator[tuple[int, str, str]]:
    """``(1-based line, option, root-relative path)`` of each ``-r``/``--requirement``/``-c``/
    ``--constraint`` line of requirements file ``path``: the named file resolved against the
    including file's directory, as pip resolves it. URLs, absolute paths, paths holding a
    ``$`` and paths leaving the root are left out."""
    base = posixpath.dirname(path)
    for number, line in enumerate(text.split("\n"), start=1):
        match = _INCLUDE.match(line)
        if match is None:
            continue
        target = match.group(2).split("#", 1)[0]
        if not target or "$" in target or "://" in target or target.startswith("/"):
            continue
        resolved = posixpath.normpath(posixpath.join(base, target))
        if resolved.startswith("../") or resolved == "..":
            continue
        yield number, match.group(1), resolved


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
    ``[dependency-groups]``, uv's ``[tool.uv]`` ``override-dependencies`` (these replace what
    any package asks for, vLLM included), ``constraint-dependencies`` and
    ``dev-dependencies``, PDM's ``[tool.pdm] dev-dependencies`` groups, and Poetry's
    ``[tool.poetry.dependencies]``, ``dev-dependencies`` and ``group.<name>.dependencies``
    tables (:func:`poetry_facts`); positions found by locating each string in the text."""
    try:
        data = load_toml(text)
    except TomlProblem as exc:
        yield Skipped(path, str(exc), line=exc.line, column=exc.column, configures_vllm="vllm" in text.lower())
        return
    project = data.get("project", {}) if isinstance(data.get("project"), dict) else {}
    strings: list[str] = list(_strings(project.get("dependencies", [])))
    for key, table in (("optional-dependencies", project), ("dependency-groups", data)):
        groups = table.get(key)
        for group in groups.values() if isinstance(groups, dict) else ():
            strings.extend(_strings(group))
    tool = _table(data.get("tool"))
    uv = _table(tool.get("uv"))
    for key in ("override-dependencies", "constraint-dependencies", "dev-dependencies"):
        strings.extend(_strings(uv.get(key)))
    pdm = _table(tool.get("pdm"))
    pdm_groups = pdm.get("dev-dependencies")
    for group in pdm_groups.values() if isinstance(pdm_groups, dict) else ():
        strings.extend(_strings(group))
    seen: dict[str, int] = {}
    for item in strings:
        line, column = _nth_line_of(text, f'"{item}"', seen) or _nth_line_of(text, f"'{item}'", seen) or (1, 0)
        fact = requirement_fact(item, path, line, column + 2, scanner, syntax="toml")  # inside the quote
        if fact is not None:
            yield fact
    yield from poetry_facts(text, _table(tool.get("poetry")), path, scanner)


def _table(value: object) -> dict[str, object]:
    return value if isinstance(value, dict) else {}


def _nth_line_of(text: str, needle: str, seen: dict[str, int]) -> tuple[int, int] | None:
    """``(line, 0-based column)`` of the next occurrence of ``needle`` not yet handed out
    (``seen`` counts them), so that one string in two tables gets two positions."""
    start = seen.get(needle, 0)
    index = text.find(needle, start)
    if index < 0:
        return None
    seen[needle] = index + len(needle)
    return text.count("\n", 0, index) + 1, index - (text.rfind("\n", 0, index) + 1)


_POETRY_VERSION = re.compile(r"^\s*([\^~])?\s*(\d+(?:\.\d+)*)\s*$")


def poetry_specifier(constraint: str) -> str | None:
    """A Poetry version constraint as a PEP 440 specifier: ``^2.9.1`` -> ``>=2.9.1,<3.0.0``
    (``^0.4`` -> ``>=0.4,<0.5``), ``~2.9.1`` -> ``>=2.9.1,<2.10.0``, ``2.9.1`` -> ``==2.9.1``,
    ``*`` -> ``""``; PEP 440 text (``>=2,<3``) as written; ``None`` when it is neither."""
    text = constraint.strip()
    if text in ("", "*"):
        return ""
    match = _POETRY_VERSION.match(text)
    if match is None:
        spec = text.replace(" ", "")
        return spec if re.match(r"^(==|!=|<=|>=|<|>|~=|===)", spec) else None
    op, version = match.groups()
    parts = [int(p) for p in version.split(".")]
    if op is None:
        return f"=={version}"
    if op == "~":
        upper = [parts[0], parts[1] + 1] if len(parts) > 1 else [parts[0] + 1]
    else:  # caret: the first non-zero part may not change
        index = next((i for i, p in enumerate(parts) if p != 0), len(parts) - 1)
        upper = [*parts[:index], parts[index] + 1]
    while len(upper) < len(parts):
        upper.append(0)
    return f">={version},<{'.'.join(str(p) for p in upper)}"


def poetry_facts(text: str, poetry: dict[str, object], path: str, scanner: str) -> Iterator[Fact]:
    """Requirement facts of Poetry's dependency tables (``python`` left out). A table entry
    (``{version = "^2.9", markers = ...}``) gives its ``version``; a ``git``/``path``/``url``
    entry has no version. The constraint is read as PEP 440 (:func:`poetry_specifier`); the
    fact carries no value span (a Poetry constraint is changed by hand)."""
    tables: list[object] = [poetry.get("dependencies"), poetry.get("dev-dependencies")]
    groups = poetry.get("group")
    for group in groups.values() if isinstance(groups, dict) else ():
        tables.append(group.get("dependencies") if isinstance(group, dict) else None)
    after: dict[str, int] = {}  # the same name in two tables: the later table's is further down
    for table in tables:
        for name, entry in table.items() if isinstance(table, dict) else ():
            if name.lower() == "python":
                continue
            constraint = entry.get("version") if isinstance(entry, dict) else entry
            if not isinstance(constraint, str):
                constraint = "*" if isinstance(entry, dict) and not {"git", "path", "url"} & entry.keys() else None
            if constraint is None:
                continue
            spec = poetry_specifier(constraint)
            if spec is None:
                continue
            found = re.compile(rf"(?m)^[ \t]*\"?{re.escape(name)}\"?[ \t]*=").search(text, after.get(name, 0))
            found = found or _subtable_version(text, name, after.get(name, 0))
            if found is not None:
                after[name] = found.end()
            index = found.start() + len(found.group()) - len(found.group().lstrip()) if found else 0
            line = text.count("\n", 0, index) + 1 if found else 1
            column = index - (text.rfind("\n", 0, index) + 1) + 1 if found else 1
            fact = requirement_fact(f"{name}{spec}", path, line, column, scanner, syntax="toml")
            if fact is not None:
                raw = _entry_text(text, index, name, constraint) if constraint != spec else fact.raw
                yield replace(fact, raw=raw, spans=Spans(syntax="toml", note="a Poetry constraint: change it by hand"))


def _subtable_version(text: str, name: str, start: int) -> re.Match[str] | None:
    """The ``version =`` key of a dependency written as a table of its own
    (``[tool.poetry.group.gpu.dependencies.xformers]``), else ``None``."""
    header = re.compile(rf"(?m)^[ \t]*\[[^\]\n]*dependencies\.\"?{re.escape(name)}\"?\][ \t]*$").search(text, start)
    if header is None:
        return None
    end = text.find("\n[", header.end())
    return re.compile(r"(?m)^[ \t]*version[ \t]*=").search(text, header.end(), end if end >= 0 else len(text))


def _entry_text(text: str, index: int, name: str, constraint: str) -> str:
    """A Poetry dependency entry as the file writes it: the line of ``name = ...`` at
    ``index`` (``vllm = "^0.17.1"``, ``vllm = {version = "0.17.1", extras = ["audio"]}``),
    else as TOML writes it (``vllm = "0.17.1"``)."""
    end = text.find("\n", index)
    line = text[index : end if end >= 0 else len(text)].strip()
    if re.match(rf"\"?{re.escape(name)}\"?[ \t]*=", line) and constraint in line:
        return line
    return f'{name} = "{constraint}"'


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
        column = exc.column if isinstance(exc, TomlProblem) else getattr(exc, "colno", None)
        reason = f"cannot parse lock file: {exc.msg if isinstance(exc, json.JSONDecodeError) else exc}"
        yield Skipped(path, reason, line=line, column=column, configures_vllm="vllm" in text.lower())
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

    def scan(self, source: SourceFile) -> Iterator[ScanItem]:
        name = source.name
        if name == "pyproject.toml":
            yield from pyproject_facts(source.text, source.relpath, self.name)
        elif name in LOCK_FILES or name.startswith("pylock."):
            yield from lock_facts(source.text, source.relpath, self.name)
        else:
            yield from self.read_referenced(source)

    def referenced_file_matches(self, relpath: str, wanted: str) -> bool:
        """An include names its file by root-relative path (:func:`requirement_includes`)."""
        return relpath == wanted

    def read_referenced(self, source: SourceFile) -> Iterator[Fact | Skipped | FileReference]:
        """The requirements of a requirements file, and a :class:`FileReference` per
        ``-r``/``-c`` include in it (followed by the engine, each file once)."""
        yield from requirements_txt_facts(source.text, source.relpath, self.name)
        for line, option, target in requirement_includes(source.text, source.relpath):
            yield FileReference(target, self.name, source.relpath, line, option)
