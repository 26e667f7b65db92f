"""A per-file cache of scan results, so an unchanged file is never parsed twice.

What a scanner yields for a file depends on the file alone (see :mod:`.scanners.base`), so the
engine keeps, per scanned root, one file mapping each file's report path to its stamp, its
content digest and its scan result. A file whose stamp is unchanged (size, mtime and ctime in
nanoseconds, inode: what git's index compares) is not even read; one whose stamp changed but
whose content digest is the same (a fresh ``git clone`` of the same commit) is read but not
parsed. Everything else is scanned and stored. A ``chmod`` or a move changes the ctime, so a
file that became unreadable, or another file moved into its place, is read again.

The cache is keyed by a *salt*: the cache format, the tool's version, the Python version,
and the content of every file of the installed package except the rule packs (code, the
known-args data), so a new release or an edited checkout never reuses results, while two
installs of the same release (fresh CI runners) share them. Rule packs are not part of it:
results are facts, which rules match afterwards.

The cache holds text and JSON only (never pickle), and every stored result is checked
against the shapes :func:`encode_result` writes before it is used: a cache restored in CI from
an untrusted branch can at worst give wrong facts for a file whose digest it forged, never run
code or crash the scan. Unreadable, corrupt or foreign cache files and entries are ignored and
rewritten; cache files not used for :data:`PRUNE_AFTER_S` are deleted.

Cache files live in :func:`default_cache_dir` unless ``--cache-dir`` names another
directory; ``--no-cache`` turns it off.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import os
import sys
import tempfile
import time
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

from vllm_upgrade_check import __version__
from vllm_upgrade_check.model.facts import Fact, Skipped
from vllm_upgrade_check.sources.scanners.base import Conditional, FileReference

CACHE_ENV = "VLLM_UPGRADE_CHECK_CACHE_DIR"
"""Environment variable naming the cache directory (overrides the platform default)."""

FORMAT = 11
"""Version of the cache file layout; bumped when it changes (10: the whole-report files,
:mod:`.reportcache`; 11: a fact row ends with the launch's unknown model)."""


def default_cache_dir() -> Path:
    """``$VLLM_UPGRADE_CHECK_CACHE_DIR``, else ``$XDG_CACHE_HOME/vllm-upgrade-check``, else
    ``~/.cache/vllm-upgrade-check``."""
    explicit = os.environ.get(CACHE_ENV)
    if explicit:
        return Path(explicit)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "vllm-upgrade-check"


@lru_cache(maxsize=1)
def code_salt() -> str:
    """A digest of what scan results depend on besides the file: cache format, tool version,
    Python version (``ast``), the parser libraries (:func:`_parsers`), and the content of
    every file of the installed package except the rule packs (about 2 MB, read once per
    process)."""
    package = Path(__file__).resolve().parents[1]  # the vllm_upgrade_check package
    digest = hashlib.blake2b(digest_size=16)
    digest.update(f"{FORMAT}|{__version__}|{sys.version}|{_parsers()}".encode())
    for directory, dirs, files in os.walk(package):
        dirs[:] = sorted(d for d in dirs if d not in ("__pycache__", "rules"))
        for name in sorted(files):
            if name.endswith((".pyc", ".pyo")):
                continue
            path = os.path.join(directory, name)
            try:
                with open(path, "rb") as handle:
                    content = handle.read()
            except OSError:
                continue
            digest.update(f"{os.path.relpath(path, package)}|{len(content)}|".encode())
            digest.update(content)
    return digest.hexdigest()


PARSER_DISTRIBUTIONS = ("PyYAML", "tree-sitter", "tree-sitter-bash", "dockerfile-parse", "python-dotenv", "packaging")
"""Distributions whose parsers shape the facts: their versions are part of the salt."""


def _parsers() -> str:
    """The parser libraries in use: versions, and whether PyYAML has libyaml (it composes
    some documents the pure-Python loader refuses as too deep)."""
    from importlib import metadata

    import yaml

    parts = [f"libyaml={bool(getattr(yaml, '__with_libyaml__', False))}"]
    for name in PARSER_DISTRIBUTIONS:
        try:
            parts.append(f"{name}={metadata.version(name)}")
        except metadata.PackageNotFoundError:
            parts.append(f"{name}=none")
    return ",".join(parts)


def file_stamp(path: str) -> tuple[int, ...] | None:
    """``(size, mtime ns, ctime ns, inode)`` of ``path``, or ``None`` when it cannot be stat'ed."""
    try:
        info = os.stat(path)
    except OSError:
        return None
    return info.st_size, info.st_mtime_ns, info.st_ctime_ns, info.st_ino


def content_digest(text: str) -> str:
    """Digest of a decoded file (what the scanners saw)."""
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).hexdigest()


@dataclass
class FileResult:
    """Everything one file contributed to a scan (what the cache stores per file).

    Attributes:
        taken: ``False`` when no scanner accepted the file (it is not counted as scanned).
        facts: its facts, with its own version hint applied.
        skipped: skipped records the scanners gave for it.
        conditionals: facts that count when another file refers to them.
        references: :class:`~.scanners.base.Reference` keys it yields.
        launches: key -> the group of the launch of this file a reference's facts extend
            (:attr:`~.scanners.base.Reference.launch`), for the keys that name one.
        templates: the keys whose launch is no launch by itself
            (:attr:`~.scanners.base.Reference.template`).
        file_references: files it names by path.
        lines: its suppression-comment lines (:func:`~vllm_upgrade_check.sources.inline.suppression_lines`).
        blocks: ``[key line, last line]`` of each YAML key written right below a suppression
            comment, with the lines its value takes (the comment covers them all).
        hint: ``(version, source)`` of the vLLM version the file itself names, if any.
    """

    taken: bool = False
    facts: list[Fact] = field(default_factory=list)
    skipped: list[Skipped] = field(default_factory=list)
    conditionals: list[Conditional] = field(default_factory=list)
    references: list[str] = field(default_factory=list)
    launches: dict[str, str] = field(default_factory=dict)
    templates: list[str] = field(default_factory=list)
    file_references: list[FileReference] = field(default_factory=list)
    lines: list[str] | None = None
    blocks: list[tuple[int, int]] = field(default_factory=list)
    hint: tuple[str, str] | None = None


def _fact_out(fact: Fact) -> list[Any]:
    return list(fact.to_row())


_OPT_STR = (str, type(None))
_OPT_INT = (int, type(None))
_ROW_TYPES: tuple[tuple[type, ...], ...] = (
    (str,),  # kind
    (str,),  # name
    _OPT_STR,  # path
    _OPT_INT,  # line
    _OPT_INT,  # column
    _OPT_INT,  # end line
    _OPT_INT,  # end column
    (str,),  # raw
    _OPT_STR,  # value
    (str,),  # origin
    (list,),  # aliases
    (list,),  # args
    (str,),  # scanner
    _OPT_STR,  # version hint
    _OPT_STR,  # hint source
    (bool,),  # resolved
    _OPT_STR,  # model
    (list, type(None)),  # spans
    _OPT_STR,  # group
    _OPT_STR,  # owner
    _OPT_STR,  # unknown model
)


def _bad(what: str) -> ValueError:
    return ValueError(f"cache entry: {what} is not what encode_result writes")


def _strings(value: Any, what: str) -> list[str]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise _bad(what)
    return value


_ROW_SIGNATURES = frozenset(itertools.product(*_ROW_TYPES))
"""Every tuple of exact value types a fact row may have (8,192 of them): one set lookup checks
a whole row, and exact types keep ``True`` out of the integer fields."""


def _fact_in(row: Any) -> Fact:
    """A fact row, every field's type checked (a cache file can be edited or forged)."""
    if type(row) is not list or tuple(map(type, row)) not in _ROW_SIGNATURES:
        raise _bad("a fact row")
    for value in itertools.chain(row[10], row[11]):  # aliases, args
        if type(value) is not str:
            raise _bad("a fact's aliases or args")
    if row[17] is not None:
        _check_spans(row[17])
    return Fact.from_row(row)


def check_fact_row(row: Any) -> Fact:
    """The fact a row of :meth:`~vllm_upgrade_check.model.facts.Fact.to_row` gives, read back
    from JSON, every field's type checked.

    Raises:
        ValueError: the row is not what :meth:`~vllm_upgrade_check.model.facts.Fact.to_row` writes.
    """
    return _fact_in(row)


def _check_spans(row: list[Any]) -> None:
    """A spans row (:meth:`~vllm_upgrade_check.model.facts.Spans.to_row`), every type checked."""
    if (
        len(row) != 11
        or type(row[4]) is not str
        or type(row[5]) is not str
        or type(row[6]) is not bool
        or type(row[8]) is not str
        or type(row[10]) is not str
    ):
        raise _bad("a fact's spans")
    for span in (*row[:4], row[7], row[9]):
        if span is not None and (
            type(span) is not list or len(span) != 4 or any(type(v) is not int for v in span)
        ):
            raise _bad("a fact's span")


def encode_result(result: FileResult) -> dict[str, Any]:
    """``result`` as JSON-ready data (see :func:`decode_result`)."""
    out: dict[str, Any] = {"taken": result.taken}
    if result.facts:
        out["facts"] = [_fact_out(f) for f in result.facts]
    if result.skipped:
        out["skipped"] = [[s.path, s.reason, s.configures_vllm, s.line, s.column] for s in result.skipped]
    if result.conditionals:
        out["conditionals"] = [
            [c.key, [_fact_out(f) for f in c.facts], *([list(c.refers)] if c.refers else [])]
            for c in result.conditionals
        ]
    if result.references:
        out["references"] = list(result.references)
    if result.launches:
        out["launches"] = dict(result.launches)
    if result.templates:
        out["templates"] = list(result.templates)
    if result.file_references:
        out["file_references"] = [[r.path, r.scanner, r.by, r.line, r.option] for r in result.file_references]
    if result.lines is not None:
        out["lines"] = result.lines
    if result.blocks:
        out["blocks"] = [list(b) for b in result.blocks]
    if result.hint is not None:
        out["hint"] = list(result.hint)
    return out


def decode_result(data: Any) -> FileResult:
    """The :class:`FileResult` :func:`encode_result` wrote, every value's type checked.

    Raises:
        ValueError, KeyError: the data is not what :func:`encode_result` writes.
    """
    if not isinstance(data, dict) or not isinstance(data.get("taken"), bool):
        raise _bad("the result")
    facts = data.get("facts", [])
    skipped = data.get("skipped", [])
    conditionals = data.get("conditionals", [])
    file_references = data.get("file_references", [])
    lines, hint = data.get("lines"), data.get("hint")
    if not all(isinstance(v, list) for v in (facts, skipped, conditionals, file_references)):
        raise _bad("a list")
    for row in skipped:
        if not (
            isinstance(row, list)
            and len(row) == 5
            and isinstance(row[0], str)
            and isinstance(row[1], str)
            and isinstance(row[2], bool)
            and all(v is None or (isinstance(v, int) and not isinstance(v, bool)) for v in row[3:])
        ):
            raise _bad("a skipped record")
    for pair in conditionals:
        if not (
            isinstance(pair, list)
            and len(pair) in (2, 3)
            and isinstance(pair[0], str)
            and isinstance(pair[1], list)
        ):
            raise _bad("a conditional")
        if len(pair) == 3:
            _strings(pair[2], "a conditional's references")
    for row in file_references:
        if not (
            isinstance(row, list)
            and len(row) == 5
            and all(isinstance(v, str) for v in (*row[:3], row[4]))
            and isinstance(row[3], int)
            and not isinstance(row[3], bool)
        ):
            raise _bad("a file reference")
    if hint is not None and len(_strings(hint, "the hint")) != 2:
        raise _bad("the hint")
    blocks = data.get("blocks", [])
    if not isinstance(blocks, list) or not all(
        isinstance(b, list) and len(b) == 2 and all(type(n) is int for n in b) for b in blocks
    ):
        raise _bad("a suppression block")
    return FileResult(
        taken=data["taken"],
        facts=[_fact_in(row) for row in facts],
        skipped=[Skipped(p, r, c, line, column) for p, r, c, line, column in skipped],
        conditionals=[
            Conditional(pair[0], tuple(_fact_in(row) for row in pair[1]), tuple(pair[2]) if len(pair) == 3 else ())
            for pair in conditionals
        ],
        references=_strings(data.get("references", []), "references"),
        launches=_launches(data.get("launches", {})),
        templates=_strings(data.get("templates", []), "templates"),
        file_references=[FileReference(*row) for row in file_references],
        lines=None if lines is None else _strings(lines, "lines"),
        blocks=[(b[0], b[1]) for b in blocks],
        hint=None if hint is None else (hint[0], hint[1]),
    )


def _launches(data: Any) -> dict[str, str]:
    if not isinstance(data, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in data.items()):
        raise _bad("the launches of references")
    return dict(data)


_Entry = tuple[str, str, str]
"""A stored file: ``(stamp as text, content digest or "", result as JSON text)``."""

PRUNE_AFTER_S = 30 * 24 * 3600
"""Cache files of roots not scanned for this long (seconds, 30 days) are deleted on save."""


def _stamp_text(stamp: tuple[int, ...]) -> str:
    return ",".join(str(part) for part in stamp)


class ScanCache:
    """The cached results of one scanned root, loaded at the start of a scan and saved at its end.

    The file is a header line (JSON: format and salt) then one line per file:
    ``stamp TAB digest TAB report path as a JSON string TAB result as JSON``. A result is kept
    as its JSON text until a scan needs it, and written back as it was read: memory and time
    grow with the text, not with the objects it describes.

    Args:
        directory: where cache files live (created on save).
        root: the scanned root (its absolute path names the cache file).
        salt: what else results depend on (:func:`code_salt` plus the scan's settings).
        label: the prefix of the root's report paths in this scan (several roots scanned at
            once, :func:`~vllm_upgrade_check.sources.discovery.root_label`): part of the name too.
    """

    def __init__(self, directory: Path, root: Path, salt: str, label: str = "") -> None:
        where = f"{os.path.abspath(root)}\0{label}".encode("utf-8", "surrogateescape")
        self.path = directory / f"scan-{hashlib.blake2b(where, digest_size=12).hexdigest()}.txt"
        self.salt = salt
        self._old: dict[str, _Entry] = self._load()
        self._new: dict[str, _Entry] = {}
        self._changed = False

    def _header(self) -> str:
        return json.dumps({"format": FORMAT, "salt": self.salt})

    def _load(self) -> dict[str, _Entry]:
        try:
            with open(self.path, encoding="utf-8") as handle:
                if handle.readline().rstrip("\n") != self._header():
                    return {}
                lines = handle.read().split("\n")
        except (OSError, UnicodeDecodeError):
            return {}
        entries: dict[str, _Entry] = {}
        for line in lines:
            parts = line.split("\t", 3)
            if len(parts) != 4:
                continue
            stamp, digest, name, payload = parts
            if len(name) < 2 or name[0] != '"' or name[-1] != '"':
                continue
            try:
                rel = name[1:-1] if "\\" not in name else json.loads(name)
            except ValueError:
                continue
            if isinstance(rel, str):
                entries[rel] = (stamp, digest, payload)
        return entries

    @property
    def empty(self) -> bool:
        """``True`` when no result was loaded (a first run, or a cache that did not match)."""
        return not self._old

    def by_stamp(self, rel: str, stamp: tuple[int, ...]) -> FileResult | None:
        """The stored result of ``rel`` if its :func:`file_stamp` is unchanged, else ``None``."""
        entry = self._old.get(rel)
        if entry is None or entry[0] != _stamp_text(stamp):
            return None
        result = self._decode(entry[2])
        if result is not None:
            self._new[rel] = entry
        return result

    def lookup(self, rel: str, digest: str) -> FileResult | None:
        """The stored result of ``rel`` if its content digest is ``digest``, else ``None``.
        Changes nothing; see :meth:`refresh`."""
        entry = self._old.get(rel)
        if entry is None or not digest or entry[1] != digest:
            return None
        return self._decode(entry[2])

    def refresh(self, rel: str, stamp: tuple[int, ...], digest: str) -> None:
        """Keep the stored result of ``rel`` (found by :meth:`lookup`) under its new stamp."""
        entry = self._old.get(rel)
        if entry is not None and digest and entry[1] == digest:
            self._new[rel] = (_stamp_text(stamp), digest, entry[2])
            self._changed = True

    def store(self, rel: str, stamp: tuple[int, ...], digest: str | None, result: FileResult) -> None:
        """Remember ``result`` for ``rel`` (``digest`` ``None``: matched by stamp only)."""
        payload = json.dumps(encode_result(result), separators=(",", ":"))
        self._new[rel] = (_stamp_text(stamp), digest or "", payload)
        self._changed = True

    @staticmethod
    def _decode(payload: str) -> FileResult | None:
        try:
            return decode_result(json.loads(payload))
        except (KeyError, TypeError, ValueError, IndexError, AttributeError, RecursionError):
            return None

    def save(self) -> None:
        """Write the results of this scan (files not seen in it are dropped), atomically;
        nothing when nothing changed. Cache files unused for :data:`PRUNE_AFTER_S` are
        deleted. A cache that cannot be written is left alone."""
        if not self._changed and self._new.keys() == self._old.keys():
            try:
                os.utime(self.path)  # in use: not pruned
            except OSError:
                pass
            return
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(prefix=".scan-", suffix=".tmp", dir=self.path.parent)
            try:
                with os.fdopen(fd, "w", encoding="utf-8", errors="surrogateescape") as handle:
                    handle.write(self._header() + "\n")
                    for rel, (stamp, digest, payload) in self._new.items():
                        # json.dumps escapes tabs and newlines: one line, four fields.
                        handle.write(f"{stamp}\t{digest}\t{json.dumps(rel)}\t{payload}\n")
                os.replace(tmp, self.path)
            except BaseException:
                os.unlink(tmp)
                raise
        except OSError:
            return
        self._prune()

    def _prune(self) -> None:
        cutoff = time.time() - PRUNE_AFTER_S
        try:
            with os.scandir(self.path.parent) as entries:
                for entry in entries:
                    if entry.name.startswith(("scan-", "report-")) and entry.stat().st_mtime < cutoff:
                        os.unlink(entry.path)
        except OSError:
            return
