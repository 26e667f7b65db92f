"""Project configuration: ``[tool.vllm-upgrade-check]`` in ``pyproject.toml`` or the top level
of ``.vllm-upgrade-check.toml``, read with tomllib/tomli.

Keys: ``to``, ``from`` (versions), ``fail-on`` (blocker|warning|info|never), ``exclude``
(list of gitignore-style patterns), ``rules`` (list of extra rule pack directories, relative
to the configuration file), ``ignore`` (array of tables: ``id``, ``reason``, optional ``path``
glob and ``expires`` date). Command-line options win over the file.
"""

from __future__ import annotations

import json
import os
import re
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING

from vllm_upgrade_check.errors import UsageError
from vllm_upgrade_check.model.facts import Skipped
from vllm_upgrade_check.model.options import Ignore
from vllm_upgrade_check.parsing.textfiles import read_named_file

if TYPE_CHECKING:  # pragma: no cover
    from vllm_upgrade_check.model.environment import Environment
    from vllm_upgrade_check.model.options import ScanOptions

CONFIG_FILE = ".vllm-upgrade-check.toml"
TABLE = "vllm-upgrade-check"
FAIL_ON = ("blocker", "warning", "info", "never")


@dataclass(frozen=True)
class Config:
    """Settings read from one file (``None``/empty: not set there).

    Attributes:
        source: the file, or ``None`` when no configuration was found.
        to_version, from_version: release texts as written.
        fail_on: one of :data:`FAIL_ON`.
        exclude: gitignore-style patterns.
        rules: extra rule pack directories, resolved against the file's directory.
        ignores: configured ignores.
        passed_over: configuration files found but not read (symlinked out of their
            directory), as skipped records for the report.
        to_line: the line ``to`` is set on (errors about the target name it), or ``None``.
        from_line: the same for ``from``.
    """

    source: Path | None = None
    to_version: str | None = None
    from_version: str | None = None
    fail_on: str | None = None
    exclude: tuple[str, ...] = ()
    rules: tuple[Path, ...] = ()
    ignores: tuple[Ignore, ...] = field(default_factory=tuple)
    passed_over: tuple[Skipped, ...] = ()
    to_line: int | None = None
    from_line: int | None = None


def _inside(path: Path, place: Path, passed_over: list[Skipped] | None = None, roots: Sequence[Path] = ()) -> bool:
    """Whether ``path`` (a configuration file found in ``place``) is no symlink leading out of
    ``place``: such a file, which anyone who can commit a link could point anywhere, is not
    read; a note on stderr says so at once, and a :class:`Skipped` in ``passed_over`` carries
    it into the report (every output format)."""
    real, base = os.path.realpath(path), os.path.realpath(place)
    if not os.path.islink(path) or real.startswith(base.rstrip(os.sep) + os.sep):
        return True
    print(
        f"vllm-upgrade-check: note: {path} is a symlink leading outside {place}: not read as configuration",
        file=sys.stderr,
    )
    if passed_over is not None:
        passed_over.append(Skipped(_label(path, place, roots), f"a symlink leading outside {place}: not read as configuration"))
    return False


def _label(path: Path, place: Path, roots: Sequence[Path]) -> str:
    """``path`` (a file of ``place``) as a report names it: as discovery labels a file of
    ``place`` when it is a scanned root, else its absolute path."""
    from vllm_upgrade_check.sources.discovery import labelled, root_label

    if roots and place == (roots[0] if roots[0].is_dir() else roots[0].parent) and roots[0].is_dir():
        return labelled(root_label(roots[0], roots), roots[0], path.name)
    return os.path.abspath(path)


def find_config(paths: Sequence[Path], cwd: Path | None = None, passed_over: list[Skipped] | None = None) -> Path | None:
    """The configuration file for a run: in the first scanned root (a file's directory), else
    in ``cwd``; ``.vllm-upgrade-check.toml`` before a ``pyproject.toml`` that has the table.
    A candidate symlinked out of its directory is not read: ``passed_over`` (if given) gets a
    :class:`Skipped` for it."""
    places: list[Path] = []
    for path in paths[:1]:
        places.append(path if path.is_dir() else path.parent)
    places.append(cwd or Path.cwd())
    seen: set[str] = set()
    for place in places:
        if os.path.realpath(place) in seen:
            continue  # the root is the current directory: looked at once
        seen.add(os.path.realpath(place))
        own = place / CONFIG_FILE
        if own.is_file() and _inside(own, place, passed_over, paths):
            return own
        pyproject = place / "pyproject.toml"
        if pyproject.is_file() and _inside(pyproject, place, passed_over, paths):
            from vllm_upgrade_check.parsing.toml import TomlProblem, load_toml

            try:
                data = load_toml(pyproject.read_text(encoding="utf-8"))
            except (OSError, TomlProblem, UnicodeDecodeError):
                continue
            if isinstance(data.get("tool"), dict) and TABLE in data["tool"]:
                return pyproject
    return None


def _line_of(text: str, loc: Sequence[object]) -> int | None:
    """The line of the key at data path ``loc`` of a configuration file (``("ignore", 1,
    "expires")`` looks after the second ``[[...ignore]]`` header)."""
    start = 0
    keys = [p for p in loc if isinstance(p, str)]
    if len(loc) >= 2 and loc[0] == "ignore" and isinstance(loc[1], int):
        headers = list(re.finditer(r"^[ \t]*\[\[[^\]]*ignore[ \t]*\]\]", text, re.M))
        if loc[1] < len(headers):
            start = headers[loc[1]].start()
            keys = keys[1:] or []
            if not keys:
                return text.count("\n", 0, start) + 1
    for key in reversed(keys):
        m = re.compile(rf"^[ \t]*\"?{re.escape(key)}\"?[ \t]*=", re.M).search(text, start)
        if m:
            return text.count("\n", 0, m.start()) + 1
    return None


def load_config(path: Path) -> Config:
    """Read and check one configuration file against
    :class:`~vllm_upgrade_check.cli.config_table.ConfigTable`.

    Raises:
        UsageError: unreadable file, TOML syntax error, unknown key or wrong type (naming the
            file, the key and, where found, its line).
    """
    from vllm_upgrade_check.parsing.toml import TomlProblem, load_toml

    shown = str(path)
    try:
        text = read_named_file(path).decode("utf-8")
        data = load_toml(text)
    except OSError as exc:
        raise UsageError(f"cannot read configuration: {exc.strerror or exc}", shown) from None
    except TomlProblem as exc:
        raise UsageError(str(exc), shown, exc.line, exc.column) from None
    except UnicodeDecodeError as exc:
        raise UsageError(f"not UTF-8 text: {exc.reason} at byte {exc.start}", shown) from None
    tool = data.get("tool", {})
    if not isinstance(tool, dict):  # `tool = "x"`: the tables of every tool are under [tool]
        raise UsageError("tool: must be a table", shown, _line_of(text, ["tool"]))
    nested = path.name == "pyproject.toml" or TABLE in tool
    table = tool.get(TABLE, {}) if nested else data
    if not isinstance(table, dict):
        raise UsageError(f"tool.{TABLE}: must be a table", shown, _line_of(text, [TABLE]))
    from pydantic import ValidationError

    from vllm_upgrade_check.cli.config_table import ConfigTable
    from vllm_upgrade_check.model.validation import first_problem, format_path

    try:
        parsed = ConfigTable.model_validate(table)
    except ValidationError as exc:
        loc, message = first_problem(exc, table)
        if message == "unknown key" and len(loc) == 1:
            message += f" (known: {', '.join(sorted(f.alias or n for n, f in ConfigTable.model_fields.items()))})"
        raise UsageError(f"{format_path(loc)}: {message}", shown, _line_of(text, loc)) from None
    ignores = tuple(
        Ignore(i.id.strip(), i.reason, i.path, i.expires, shown, _line_of(text, ["ignore", n, "id"]))
        for n, i in enumerate(parsed.ignore)
    )
    for index, entry in enumerate(parsed.rules):
        problem = _rules_problem(path.parent, entry)
        if problem:
            raise UsageError(f"rules[{index}]: {entry!r}: {problem}", shown, _entry_line(text, "rules", entry))
    return Config(
        source=path,
        to_version=parsed.to,
        from_version=parsed.from_,
        fail_on=parsed.fail_on,
        exclude=tuple(parsed.exclude),
        rules=tuple(path.parent / r for r in parsed.rules),
        ignores=ignores,
        to_line=_line_of(text, ["to"]) if parsed.to is not None else None,
        from_line=_line_of(text, ["from"]) if parsed.from_ is not None else None,
    )


def _rules_problem(base: Path, entry: str) -> str:
    """Why the ``rules`` entry ``entry`` (relative to ``base``, the configuration file's
    directory) names no rule pack file or directory, or ``""`` when it does."""
    if not entry.strip():
        return "is empty (give a rule pack file or directory, relative to this file)"
    target = base / entry
    try:
        if target.is_dir() or target.is_file():
            return ""
        if target.exists():
            return "not a regular file or directory"
    except OSError as exc:  # a name too long for the file system, a loop of links...
        return f"cannot be read: {exc.strerror or exc}"
    return "no such rule pack file or directory (relative to this file's directory)"


def _entry_line(text: str, key: str, entry: str) -> int | None:
    """The line of string ``entry`` in the array of ``key`` (an array written over several
    lines names the entry's own line), else the key's line."""
    line = _line_of(text, [key])
    if line is None:
        return None
    start = sum(len(row) + 1 for row in text.split("\n")[: line - 1])
    for quoted in (json.dumps(entry), f"'{entry}'"):
        found = text.find(quoted, start)
        if found >= 0:
            return text.count("\n", 0, found) + 1
    return line


def config_for(paths: Sequence[Path], explicit: Path | None = None) -> Config:
    """The configuration of a run: ``explicit`` if given, else :func:`find_config`, else empty.

    Raises:
        UsageError: as :func:`load_config`.
    """
    passed_over: list[Skipped] = []
    found = explicit or find_config(paths, passed_over=passed_over)
    config = load_config(found) if found is not None else Config()
    return replace(config, passed_over=tuple(passed_over))


def scan_options(
    paths: Sequence[Path],
    config: Config,
    *,
    to: str | None = None,
    from_: str | None = None,
    environment: Environment | None = None,
    rules: Sequence[Path] = (),
    exclude: Sequence[str] = (),
    baseline: Path | None = None,
    select: Sequence[str] = (),
    ignore_rules: Sequence[str] = (),
    cache_dir: Path | None = None,
    jobs: int | None = None,
) -> ScanOptions:
    """The :class:`~vllm_upgrade_check.engine.ScanOptions` of a run: command-line values win,
    ``config`` fills the rest (rule directories and excludes add up)."""
    from vllm_upgrade_check.model.options import ScanOptions

    return ScanOptions.of(
        paths=list(paths) or ([] if environment is not None else [Path(".")]),
        to_version=to if to is not None else config.to_version,
        to_origin=(str(config.source), config.to_line) if to is None and config.to_version is not None else None,
        from_version=from_ if from_ is not None else config.from_version,
        from_origin=(
            (str(config.source), config.from_line) if from_ is None and config.from_version is not None else None
        ),
        environment=environment,
        rule_paths=[*config.rules, *rules],
        exclude=[*config.exclude, *exclude],
        baseline=baseline,
        ignores=config.ignores,
        select=list(select),
        ignore_rules=list(ignore_rules),
        cache_dir=cache_dir,
        jobs=jobs,
        passed_over=config.passed_over,
    )
