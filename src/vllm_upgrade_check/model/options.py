"""What a run is asked to do, in three parts: what to read (:class:`ScanRequest`), which
releases to check between (:class:`VersionWindow`), and which findings the user does not
want reported (:class:`Filters`); :class:`ScanOptions` holds the three with the extra rule
packs. Records only: the command line and the configuration file fill them
(:mod:`vllm_upgrade_check.cli.options`).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from vllm_upgrade_check.model.environment import Environment, HostInfo
from vllm_upgrade_check.model.facts import Skipped
from vllm_upgrade_check.model.findings import Gate

MAX_FILE_BYTES = 5 * 1024 * 1024
"""Default size (bytes, 5 MiB) above which a file is skipped with a reason."""


@dataclass(frozen=True)
class ScanRequest:
    """What to read.

    Attributes:
        paths: files or directories to scan (none: only the environment, if asked).
        environment: the Python environment to check, or ``None`` to leave it out.
        host: the host's GPUs and driver, or ``None`` to leave them out.
        exclude: gitignore-style patterns of paths to leave out.
        max_file_bytes: size above which a file is skipped.
        scanners: the scanners to run, :class:`~vllm_upgrade_check.sources.scanners.base.Scanner`
            instances (``None``: the built-in ones, fresh for each scan; custom scanners
            turn the cache off).
        progress: called with each file's relative path as it is scanned (a progress
            display); ``None`` for none.
        overlay: file contents to scan instead of the disk, by real path
            (``os.path.realpath``); ``fix --diff`` rescans its in-memory edits with it (the
            cache is then off).
        cache_dir: where per-file results are cached; ``None``: no cache.
        jobs: worker processes that parse files (``None`` or ``0``: automatic; ``1``: none).
        response_fields: the response fields whose reads by client code are facts, beyond
            the built-in ones: what the loaded packs' ``response_field`` rules name and
            rename to (``None``: only the built-in ones).
        passed_over: files of the run's own set-up that were not read (a configuration file
            symlinked out of its directory): reported as skipped, in every output format.
    """

    paths: Sequence[Path] = ()
    environment: Environment | None = None
    host: HostInfo | None = None
    exclude: Sequence[str] = ()
    max_file_bytes: int = MAX_FILE_BYTES
    scanners: list[Any] | None = None
    progress: Callable[[str], None] | None = None
    overlay: Mapping[str, bytes] | None = None
    cache_dir: Path | None = None
    jobs: int | None = None
    response_fields: frozenset[str] | None = None
    passed_over: tuple[Skipped, ...] = ()


@dataclass(frozen=True)
class VersionWindow:
    """Which releases to check.

    Attributes:
        to_version: the target release as given (``None``: the newest release with a pack).
        from_version: the version in use as given (``None``: detect it).
        to_origin: ``(configuration file, line)`` where ``to_version`` was set, when a
            configuration file set it (``None``: ``--to``, or not set); errors about the
            target then name that file and line.
        from_origin: the same for ``from_version``.
    """

    to_version: str | None = None
    from_version: str | None = None
    to_origin: tuple[str, int | None] | None = None
    from_origin: tuple[str, int | None] | None = None


@dataclass(frozen=True)
class Ignore:
    """One configured ignore.

    Attributes:
        id: rule id (case-insensitive) or ``*`` for every rule.
        reason: why (required: shown when the ignore expires).
        path: gitignore-style glob of relative paths, or ``None`` for every path.
        expires: last day the ignore applies, or ``None``.
        source: the configuration file it came from, for messages.
        line: the line of its ``id`` in that file, for messages (``None``: not known).
    """

    id: str
    reason: str
    path: str | None = None
    expires: dt.date | None = None
    source: str = ""
    line: int | None = None

    def expired(self, today: dt.date) -> bool:
        """``True`` once ``today`` is after :attr:`expires`."""
        return self.expires is not None and today > self.expires


@dataclass(frozen=True)
class Filters:
    """Which findings not to report.

    Attributes:
        baseline: a baseline file (``baseline create``): its findings are not reported.
        ignores: configured ignores (rule id, path glob, reason, expiry).
        inline_suppressions: honour ``# vllm-upgrade-check: ignore[ID]`` comments.
        select: report only rules whose id starts with one of these (case-insensitive);
            empty: every rule.
        ignore_rules: never report rules whose id starts with one of these.
    """

    baseline: Path | None = None
    ignores: Sequence[Ignore] = ()
    inline_suppressions: bool = True
    select: Sequence[str] = ()
    ignore_rules: Sequence[str] = ()


@dataclass(frozen=True)
class ScanOptions:
    """What one run is asked to do.

    Attributes:
        request: what to read.
        window: which releases to check between.
        filters: which findings not to report.
        rule_paths: extra rule pack files or directories.
        gate: what makes the run fail (``--fail-on``, ``--skip-unreadable``); the report
            carries it, so that every output format agrees with the exit code.
    """

    request: ScanRequest = field(default_factory=ScanRequest)
    window: VersionWindow = field(default_factory=VersionWindow)
    filters: Filters = field(default_factory=Filters)
    rule_paths: Sequence[Path] = ()
    gate: Gate = field(default_factory=Gate)

    @property
    def paths(self) -> Sequence[Path]:
        """The scanned roots (:attr:`ScanRequest.paths`)."""
        return self.request.paths

    @staticmethod
    def of(**values: Any) -> ScanOptions:
        """Options from flat keyword values, each given to the part that holds it
        (``ScanOptions.of(paths=[root], to_version="0.28.0", select=["VUC0270"])``).

        Raises:
            TypeError: a name no part has.
        """
        parts: dict[type, dict[str, Any]] = {ScanRequest: {}, VersionWindow: {}, Filters: {}}
        rule_paths = values.pop("rule_paths", ())
        gate = values.pop("gate", Gate())
        for name, value in values.items():
            for part, found in parts.items():
                if name in part.__dataclass_fields__:  # type: ignore[attr-defined]
                    found[name] = value
                    break
            else:
                raise TypeError(f"ScanOptions has no option {name!r}")
        return ScanOptions(
            ScanRequest(**parts[ScanRequest]),
            VersionWindow(**parts[VersionWindow]),
            Filters(**parts[Filters]),
            rule_paths,
            gate,
        )
