"""The whole-report cache: a run whose inputs are all unchanged reuses the last run's report.

The per-file cache (:mod:`.cache`) spares parsing, but a warm run of a large tree still
decodes every file's facts and matches them again. When nothing a run depends on changed (the
tool, the rule packs, the options, and every file of the scanned roots by its stamp), the
report cannot differ either, so the engine keeps the last report of each set of roots here and
answers from it.

What keys an entry is the caller's (:func:`~vllm_upgrade_check.engine.warm.report_key`); what
this module gives is the part read from the tree (:func:`tree_digest`: every file the walk
sees, ignored ones left out, with its stamp, and the directories it could not list) and the
report as JSON (:func:`encode_report`, :func:`decode_report`). Rules are stored as their index
among the loaded packs' rules (those are keyed by content) or, for the rules the built-in checks
make, as their data (:func:`~vllm_upgrade_check.model.construct.deconstruct`). Like the
per-file cache it holds text and JSON only; an entry that does not decode is ignored and
rewritten.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from vllm_upgrade_check.model.construct import construct, deconstruct
from vllm_upgrade_check.model.facts import Skipped
from vllm_upgrade_check.model.findings import Finding, Include, PathBase, Replacement, Report, VersionBasis
from vllm_upgrade_check.model.pack import Rule, Severity
from vllm_upgrade_check.sources.cache import FORMAT, check_fact_row
from vllm_upgrade_check.sources.discovery import walk


def tree_digest(paths: Sequence[Path], exclude: Sequence[str] = ()) -> tuple[str, int]:
    """A digest of what the scanned roots hold: the report path and :func:`~.cache.file_stamp`
    of every file :func:`~.discovery.walk` yields under each root (every kind, not only those
    a scanner wants by name: a file another one names may be read), and the directories it
    could not list. A file added, removed, renamed, edited, touched or chmod'ed changes it, and
    so does an ignore rule that changes which files are walked.

    Returns:
        ``(digest, the newest modification time among the files in nanoseconds, 0 for none)``.
    """
    digest = hashlib.blake2b(digest_size=16)
    newest = 0
    for root in paths:
        skipped: list[Skipped] = []
        digest.update(f"root\0{os.path.abspath(root)}\n".encode("utf-8", "surrogateescape"))
        for path, rel in walk(root, exclude, skipped):
            try:
                info = os.stat(path)
                stamp = f"{info.st_size},{info.st_mtime_ns},{info.st_ctime_ns},{info.st_ino}"
                newest = max(newest, info.st_mtime_ns)
            except OSError:
                stamp = "-"
            digest.update(f"{rel}\0{stamp}\n".encode("utf-8", "surrogateescape"))
        for skip in skipped:
            digest.update(f"skipped\0{skip.path}\0{skip.reason}\n".encode("utf-8", "surrogateescape"))
    return digest.hexdigest(), newest


RACY_NS = 2_000_000_000
"""A report is not kept when a file of the tree was modified less than this long (2 s, in
nanoseconds: the coarsest modification times, FAT's) before the run began: a second change
within the same tick of the clock would leave its stamp as it was (git's "racy" files)."""


def _bad(what: str) -> ValueError:
    return ValueError(f"report cache: {what} is not what encode_report writes")


def encode_report(report: Report, known: Sequence[Rule]) -> dict[str, Any]:
    """``report`` as JSON-ready data; a rule that is ``known[i]`` (the same object) is stored as
    ``i``. Its ``release_info`` and ``gate`` are not stored: they follow from the packs and the
    options (the engine makes them again)."""
    index = {id(rule): i for i, rule in enumerate(known)}
    table: list[Any] = []
    slots: dict[int, int] = {}

    def slot(rule: Rule) -> int:
        key = id(rule)
        if key not in slots:
            slots[key] = len(table)
            table.append(index[key] if key in index else deconstruct(rule))
        return slots[key]

    findings = [
        [
            slot(f.rule),
            list(f.fact.to_row()),
            f.severity.value,
            f.release,
            f.from_version,
            f.from_basis.value,
            f.from_source,
            f.deprecated_only,
            f.fix_before_upgrade,
            [[e.start, e.end, e.new] for e in f.edits],
            [[i.path, i.line, i.option, i.target] for i in f.included_by],
            list(f.shared_by),
        ]
        for f in report.findings
    ]
    return {
        "to_version": report.to_version,
        "from_version": report.from_version,
        "from_basis": report.from_basis.value,
        "from_source": report.from_source,
        "releases": list(report.releases),
        "findings": findings,
        "skipped": [[s.path, s.reason, s.configures_vllm, s.line, s.column] for s in report.skipped],
        "files_scanned": report.files_scanned,
        "roots": list(report.roots),
        "notes": list(report.notes),
        "scanned": list(report.scanned),
        "rules": [[release, slot(rule)] for release, rule in report.rules],
        "base": [report.base.root, report.base.kind, dict(report.base.paths), list(report.base.roots)],
        "table": table,
    }


def _strs(value: Any, what: str) -> list[str]:
    if type(value) is not list or not all(type(v) is str for v in value):
        raise _bad(what)
    return value


def _opt_str(value: Any, what: str) -> str | None:
    if value is not None and type(value) is not str:
        raise _bad(what)
    return value


def _int(value: Any, what: str) -> int:
    if type(value) is not int:
        raise _bad(what)
    return value


def _include(row: Any) -> Include:
    if type(row) is not list or len(row) != 4:
        raise _bad("an include")
    path, option, target = _strs([row[0], row[2], row[3]], "an include")
    return Include(path, _int(row[1], "an include's line"), option, target)


def decode_report(data: Any, known: Sequence[Rule]) -> Report:
    """The :class:`Report` :func:`encode_report` wrote (``known``: the same rules, in the same
    order), without ``release_info`` and ``gate``; every value's type checked.

    Raises:
        ValueError, KeyError, TypeError, IndexError: the data is not what
            :func:`encode_report` writes.
    """
    if type(data) is not dict:
        raise _bad("the report")
    rules: list[Rule] = []
    for entry in data["table"]:
        if type(entry) is int:
            rules.append(known[entry])
        elif type(entry) is dict:
            rule = construct(Rule, entry)
            if not isinstance(rule, Rule):
                raise _bad("a rule")
            rules.append(rule)
        else:
            raise _bad("a rule")
    findings = []
    for row in data["findings"]:
        if type(row) is not list or len(row) != 12:
            raise _bad("a finding")
        edits, included, shared = row[9], row[10], row[11]
        if type(edits) is not list or type(included) is not list:
            raise _bad("a finding's edits or includes")
        if type(row[7]) is not bool or type(row[8]) is not bool or type(row[6]) is not str:
            raise _bad("a finding")
        findings.append(
            Finding(
                rule=rules[_int(row[0], "a rule index")],
                fact=check_fact_row(row[1]),
                severity=Severity(row[2]),
                release=_strs([row[3]], "a release")[0],
                from_version=_opt_str(row[4], "a from version"),
                from_basis=VersionBasis(row[5]),
                from_source=row[6],
                deprecated_only=row[7],
                fix_before_upgrade=row[8],
                edits=tuple(
                    Replacement(_int(e[0], "an edit"), _int(e[1], "an edit"), _strs([e[2]], "an edit")[0])
                    for e in edits
                ),
                included_by=tuple(_include(i) for i in included),
                shared_by=tuple(_strs(shared, "a finding's sharers")),
            )
        )
    skipped = []
    for row in data["skipped"]:
        if not (
            type(row) is list
            and len(row) == 5
            and type(row[0]) is str
            and type(row[1]) is str
            and type(row[2]) is bool
            and all(v is None or type(v) is int for v in row[3:])
        ):
            raise _bad("a skipped record")
        skipped.append(Skipped(row[0], row[1], row[2], row[3], row[4]))
    pairs = data["rules"]
    if type(pairs) is not list or not all(type(p) is list and len(p) == 2 and type(p[0]) is str for p in pairs):
        raise _bad("the rules")
    base = data["base"]
    if not (
        type(base) is list
        and len(base) == 4
        and type(base[0]) is str
        and type(base[1]) is str
        and type(base[2]) is dict
        and all(type(k) is str and type(v) is str for k, v in base[2].items())
    ):
        raise _bad("the path base")
    return Report(
        to_version=_strs([data["to_version"]], "the target")[0],
        from_version=_opt_str(data["from_version"], "the from version"),
        from_basis=VersionBasis(data["from_basis"]),
        from_source=_strs([data["from_source"]], "the from source")[0],
        releases=tuple(_strs(data["releases"], "the releases")),
        findings=tuple(findings),
        skipped=tuple(skipped),
        files_scanned=_int(data["files_scanned"], "the file count"),
        roots=tuple(_strs(data["roots"], "the roots")),
        notes=tuple(_strs(data["notes"], "the notes")),
        scanned=tuple(_strs(data["scanned"], "the scanned files")),
        rules=tuple((release, rules[_int(i, "a rule index")]) for release, i in pairs),
        base=PathBase(base[0], base[1], base[2], tuple(_strs(base[3], "the path base's roots"))),
    )


class ReportCache:
    """The last report of one set of roots, under the key it was made with.

    The file (``report-<digest of the variant, the roots and the working directory>.json`` in the cache
    directory) is a header line (JSON: format and key) then the report as JSON
    (:func:`encode_report`). It is written atomically; one that cannot be written is left alone.

    Args:
        directory: where cache files live (created on save).
        roots: the scanned roots as given (their absolute paths name the file).
        key: everything else the report depends on (a digest).
        variant: what else names the file, so that runs that differ in it keep one entry
            each (the engine: whether the findings carry their fix edits).
        storable: ``False``: :meth:`save` keeps nothing (a file of the tree was modified too
            recently for its stamp to tell a later change, see :data:`RACY_NS`).
    """

    def __init__(
        self, directory: Path, roots: Sequence[Path], key: str, variant: str = "", storable: bool = True
    ) -> None:
        where = "\0".join([variant, os.getcwd(), *(f"{os.path.abspath(r)}\0{r}" for r in roots)])
        name = hashlib.blake2b(where.encode("utf-8", "surrogateescape"), digest_size=12).hexdigest()
        self.path = directory / f"report-{name}.json"
        self.key = key
        self.storable = storable

    def _header(self) -> str:
        return json.dumps({"format": FORMAT, "key": self.key})

    def load(self, known: Sequence[Rule]) -> Report | None:
        """The stored report if it was made under this key, else ``None`` (also when the
        file is missing, unreadable or does not decode)."""
        try:
            with open(self.path, encoding="utf-8") as handle:
                if handle.readline().rstrip("\n") != self._header():
                    return None
                text = handle.read()
        except (OSError, UnicodeDecodeError):
            return None
        try:
            report = decode_report(json.loads(text), known)
        except (KeyError, TypeError, ValueError, IndexError, AttributeError, RecursionError):
            return None
        try:
            os.utime(self.path)  # in use: not pruned (:data:`~.cache.PRUNE_AFTER_S`)
        except OSError:
            pass
        return report

    def _output(self, name: str, extra: str) -> tuple[Path, str]:
        if not name.isalnum():
            raise ValueError(f"not an output format name: {name!r}")
        header = json.dumps({"format": FORMAT, "key": self.key, "output": name, "extra": extra})
        return self.path.with_name(f"{self.path.stem}.{name}.txt"), header

    def load_output(self, name: str, extra: str) -> tuple[int, str] | None:
        """``(exit code, text)`` of the output ``name`` (a format) kept under this key and
        ``extra`` (what else the text depends on: the gate), else ``None``."""
        path, header = self._output(name, extra)
        try:
            with open(path, encoding="utf-8", newline="") as handle:
                if handle.readline().rstrip("\n") != header:
                    return None
                code = handle.readline().rstrip("\n")
                text = handle.read()
        except (OSError, UnicodeDecodeError):
            return None
        if code not in ("0", "1", "2"):
            return None
        try:
            os.utime(path)  # in use: not pruned
        except OSError:
            pass
        return int(code), text

    def save_output(self, name: str, extra: str, code: int, text: str) -> None:
        """Keep the output ``name`` of the report of this key (see :meth:`load_output`),
        when :attr:`storable`."""
        if self.storable:
            path, header = self._output(name, extra)
            self._write(path, f"{header}\n{code}\n{text}")

    def save(self, report: Report, known: Sequence[Rule]) -> None:
        """Keep ``report`` under this key (replacing what was kept), when :attr:`storable`."""
        if not self.storable:
            return
        payload = json.dumps(encode_report(report, known), separators=(",", ":"))
        self._write(self.path, self._header() + "\n" + payload)

    @staticmethod
    def _write(path: Path, text: str) -> None:
        """Write ``text`` to ``path`` atomically; leave it alone when that fails."""
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(prefix=".report-", suffix=".tmp", dir=path.parent)
            try:
                with os.fdopen(fd, "w", encoding="utf-8", errors="surrogateescape", newline="") as handle:
                    handle.write(text)
                os.replace(tmp, path)
            except BaseException:
                os.unlink(tmp)
                raise
        except (OSError, UnicodeError):  # a text that UTF-8 cannot hold is not kept
            return
