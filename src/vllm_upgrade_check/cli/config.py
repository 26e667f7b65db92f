"""Project configuration: ``[tool.vllm-upgrade-check]`` in ``pyproject.toml`` or the top level
of ``.vllm-upgrade-check.toml``, read with tomllib/tomli.

Keys: ``to``, ``from`` (versions), ``fail-on`` (blocker|warning|info|never), ``exclude``
(list of gitignore-style patterns), ``rules`` (list of extra rule pack directories, relative
to the configuration file), ``ignore`` (array of tables: ``id``, ``reason``, optional ``path``
glob and ``expires`` date). Command-line options win over the file.
"""

from __future__ import annotations

import datetime as dt
import re
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from vllm_upgrade_check.errors import UsageError
from vllm_upgrade_check.knowledge.versions import parse_version
from vllm_upgrade_check.model.options import Ignore

if TYPE_CHECKING:  # pragma: no cover
    from vllm_upgrade_check.model.environment import Environment
    from vllm_upgrade_check.model.options import ScanOptions

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

CONFIG_FILE = ".vllm-upgrade-check.toml"
TABLE = "vllm-upgrade-check"
FAIL_ON = ("blocker", "warning", "info", "never")
_KEYS = {"to", "from", "fail-on", "exclude", "rules", "ignore"}
_IGNORE_KEYS = {"id", "path", "reason", "expires"}


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
    """

    source: Path | None = None
    to_version: str | None = None
    from_version: str | None = None
    fail_on: str | None = None
    exclude: tuple[str, ...] = ()
    rules: tuple[Path, ...] = ()
    ignores: tuple[Ignore, ...] = field(default_factory=tuple)


def find_config(paths: Sequence[Path], cwd: Path | None = None) -> Path | None:
    """The configuration file for a run: in the first scanned root (a file's directory), else
    in ``cwd``; ``.vllm-upgrade-check.toml`` before a ``pyproject.toml`` that has the table."""
    places: list[Path] = []
    for path in paths[:1]:
        places.append(path if path.is_dir() else path.parent)
    places.append(cwd or Path.cwd())
    for place in places:
        own = place / CONFIG_FILE
        if own.is_file():
            return own
        pyproject = place / "pyproject.toml"
        if pyproject.is_file():
            try:
                data = tomllib.loads(pyproject.read_text(encoding="utf-8"))
            except (OSError, tomllib.TOMLDecodeError, UnicodeDecodeError):
                continue
            if isinstance(data.get("tool"), dict) and TABLE in data["tool"]:
                return pyproject
    return None


def _line_of(text: str, key: str) -> int | None:
    m = re.search(rf"^[ \t]*\"?{re.escape(key)}\"?[ \t]*=", text, re.M)
    return text.count("\n", 0, m.start()) + 1 if m else None


def load_config(path: Path) -> Config:
    """Read and check one configuration file.

    Raises:
        UsageError: unreadable file, TOML syntax error, unknown key or wrong type (naming the
            file, the key and, where found, its line).
    """
    shown = str(path)
    try:
        text = path.read_text(encoding="utf-8")
        data = tomllib.loads(text)
    except OSError as exc:
        raise UsageError(f"cannot read configuration: {exc.strerror or exc}", shown) from None
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise UsageError(f"TOML syntax error: {exc}", shown) from None
    if path.name == "pyproject.toml" or TABLE in data.get("tool", {}):
        table = data.get("tool", {}).get(TABLE, {})
    else:
        table = data

    def bad(key: str, message: str) -> UsageError:
        return UsageError(f"{key}: {message}", shown, _line_of(text, key.split(".")[-1].split("[")[0]))

    if not isinstance(table, dict):
        raise bad(f"tool.{TABLE}", "must be a table")
    for key in table:
        if key not in _KEYS:
            raise bad(key, f"unknown key (known: {', '.join(sorted(_KEYS))})")

    def text_key(key: str) -> str | None:
        value = table.get(key)
        if value is None:
            return None
        if not isinstance(value, str):
            raise bad(key, "must be a string")
        return value

    def version_key(key: str) -> str | None:
        value = text_key(key)
        if value is not None:
            try:
                parse_version(value, key)
            except UsageError:
                raise bad(key, f"{value!r} is not a valid version (expected e.g. 0.27.0)") from None
        return value

    def list_key(key: str) -> tuple[str, ...]:
        value = table.get(key, [])
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise bad(key, "must be a list of strings")
        return tuple(value)

    fail_on = text_key("fail-on")
    if fail_on is not None and fail_on not in FAIL_ON:
        raise bad("fail-on", f"must be one of {', '.join(FAIL_ON)}")
    ignores: list[Ignore] = []
    raw_ignores = table.get("ignore", [])
    if not isinstance(raw_ignores, list):
        raise bad("ignore", "must be an array of tables ([[tool.vllm-upgrade-check.ignore]])")
    for n, entry in enumerate(raw_ignores):
        key = f"ignore[{n}]"
        if not isinstance(entry, dict):
            raise bad(key, "must be a table")
        unknown = set(entry) - _IGNORE_KEYS
        if unknown:
            raise bad(f"{key}.{sorted(unknown)[0]}", "unknown key (known: expires, id, path, reason)")
        for name in ("id", "reason"):
            if not isinstance(entry.get(name), str) or not entry[name].strip():
                raise bad(f"{key}.{name}", "required string")
        if "path" in entry and not isinstance(entry["path"], str):
            raise bad(f"{key}.path", "must be a string (a glob)")
        expires = entry.get("expires")
        if isinstance(expires, str):
            try:
                expires = dt.date.fromisoformat(expires)
            except ValueError:
                raise bad(f"{key}.expires", "must be a date YYYY-MM-DD") from None
        elif isinstance(expires, dt.datetime):
            expires = expires.date()
        elif expires is not None and not isinstance(expires, dt.date):
            raise bad(f"{key}.expires", "must be a date YYYY-MM-DD")
        ignores.append(Ignore(entry["id"].strip(), entry["reason"], entry.get("path"), expires, shown))
    return Config(
        source=path,
        to_version=version_key("to"),
        from_version=version_key("from"),
        fail_on=fail_on,
        exclude=list_key("exclude"),
        rules=tuple(path.parent / r for r in list_key("rules")),
        ignores=tuple(ignores),
    )


def config_for(paths: Sequence[Path], explicit: Path | None = None) -> Config:
    """The configuration of a run: ``explicit`` if given, else :func:`find_config`, else empty.

    Raises:
        UsageError: as :func:`load_config`.
    """
    found = explicit or find_config(paths)
    return load_config(found) if found is not None else Config()


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
        from_version=from_ if from_ is not None else config.from_version,
        environment=environment,
        rule_paths=[*config.rules, *rules],
        exclude=[*config.exclude, *exclude],
        baseline=baseline,
        ignores=config.ignores,
        select=list(select),
        ignore_rules=list(ignore_rules),
        cache_dir=cache_dir,
        jobs=jobs,
    )
