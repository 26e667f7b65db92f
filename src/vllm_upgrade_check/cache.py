"""A per-file cache of scan results, so an unchanged file is never parsed twice.

What a scanner yields for a file depends on the file alone (see :mod:`.scanners.base`), so the
engine keeps, per scanned root, one JSON file mapping each file's root-relative path to its
size, modification time, content digest and scan result. A file whose size and
modification time (nanoseconds) are unchanged is not even read; one whose stamp changed but
whose content digest is the same (a fresh ``git clone`` of the same commit) is read but not
parsed. Everything else is scanned and stored.

The cache is keyed by a *salt*: the tool's version, the Python version, and the size and
modification time of every file of the installed package (its code, known-args data and
rule-pack-independent scanners), so a new release or an edited checkout never reuses
results. Rule packs are not part of it: results are facts, which rules match afterwards.

The cache holds text and JSON only (never pickle): a cache restored in CI from an untrusted branch
can at worst give wrong facts for a file whose digest it forged, never run code. Unreadable,
corrupt or foreign cache files are ignored and rewritten.

Cache files live in :func:`default_cache_dir` unless ``--cache-dir`` names another
directory; ``--no-cache`` turns it off.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
import tempfile
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

from vllm_upgrade_check import __version__
from vllm_upgrade_check.model.facts import Fact, Skipped
from vllm_upgrade_check.scanners.base import Conditional, FileReference

CACHE_ENV = "VLLM_UPGRADE_CHECK_CACHE_DIR"
"""Environment variable naming the cache directory (overrides the platform default)."""

FORMAT = 2
"""Version of the cache file layout; bumped when it changes."""


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
    """A digest of what scan results depend on besides the file: tool version, Python
    version (``ast``), and the size and mtime of every file of the installed package."""
    package = Path(__file__).resolve().parent
    digest = hashlib.blake2b(digest_size=16)
    digest.update(f"{FORMAT}|{__version__}|{sys.version}".encode())
    for directory, dirs, files in os.walk(package):
        dirs[:] = sorted(d for d in dirs if d != "__pycache__")
        for name in sorted(files):
            if name.endswith((".pyc", ".pyo")):
                continue
            path = os.path.join(directory, name)
            try:
                info = os.stat(path)
            except OSError:
                continue
            digest.update(f"{os.path.relpath(path, package)}|{info.st_size}|{info.st_mtime_ns}\n".encode())
    return digest.hexdigest()


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
        file_references: files it names by path.
        lines: its suppression-comment lines (:func:`~.suppress.suppression_lines`).
        hint: ``(version, source)`` of the vLLM version the file itself names, if any.
    """

    taken: bool = False
    facts: list[Fact] = field(default_factory=list)
    skipped: list[Skipped] = field(default_factory=list)
    conditionals: list[Conditional] = field(default_factory=list)
    references: list[str] = field(default_factory=list)
    file_references: list[FileReference] = field(default_factory=list)
    lines: list[str] | None = None
    hint: tuple[str, str] | None = None


def _fact_out(fact: Fact) -> list[Any]:
    return list(fact.to_row())


def _fact_in(row: list[Any]) -> Fact:
    return Fact.from_row(row)


def encode_result(result: FileResult) -> dict[str, Any]:
    """``result`` as JSON-ready data (see :func:`decode_result`)."""
    out: dict[str, Any] = {"taken": result.taken}
    if result.facts:
        out["facts"] = [_fact_out(f) for f in result.facts]
    if result.skipped:
        out["skipped"] = [[s.path, s.reason, s.configures_vllm, s.line] for s in result.skipped]
    if result.conditionals:
        out["conditionals"] = [[c.key, [_fact_out(f) for f in c.facts]] for c in result.conditionals]
    if result.references:
        out["references"] = list(result.references)
    if result.file_references:
        out["file_references"] = [[r.path, r.scanner] for r in result.file_references]
    if result.lines is not None:
        out["lines"] = result.lines
    if result.hint is not None:
        out["hint"] = list(result.hint)
    return out


def decode_result(data: dict[str, Any]) -> FileResult:
    """The :class:`FileResult` :func:`encode_result` wrote.

    Raises:
        KeyError, TypeError, ValueError: the data is not what :func:`encode_result` writes.
    """
    hint = data.get("hint")
    return FileResult(
        taken=bool(data["taken"]),
        facts=[_fact_in(row) for row in data.get("facts", ())],
        skipped=[Skipped(p, r, bool(c), line) for p, r, c, line in data.get("skipped", ())],
        conditionals=[
            Conditional(key, tuple(_fact_in(row) for row in rows)) for key, rows in data.get("conditionals", ())
        ],
        references=[str(k) for k in data.get("references", ())],
        file_references=[FileReference(p, s) for p, s in data.get("file_references", ())],
        lines=data.get("lines"),
        hint=(str(hint[0]), str(hint[1])) if hint else None,
    )


_Entry = tuple[int, int, str, str]
"""A stored file: ``(size, mtime in ns, content digest or "", result as JSON text)``."""


class ScanCache:
    """The cached results of one scanned root, loaded at the start of a scan and saved at its end.

    The file is a header line (JSON: format and salt) then one line per file:
    ``size TAB mtime_ns TAB digest TAB path as a JSON string TAB result as JSON``. A result is
    kept as its JSON text until a scan needs it, and written back as it was read: memory
    and time grow with the text, not with the objects it describes.

    Args:
        directory: where cache files live (created on save).
        root: the scanned root (its absolute path names the cache file).
        salt: what else results depend on (:func:`code_salt` plus the scan's settings).
    """

    def __init__(self, directory: Path, root: Path, salt: str) -> None:
        key = hashlib.blake2b(os.path.abspath(root).encode("utf-8", "surrogateescape"), digest_size=12)
        self.path = directory / f"scan-{key.hexdigest()}.txt"
        self.salt = salt
        self._old: dict[str, _Entry] = self._load()
        self._new: dict[str, _Entry] = {}
        self._changed = False
        self.hits = 0
        self.misses = 0

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
            parts = line.split("\t", 4)
            if len(parts) != 5:
                continue
            size, mtime, digest, name, payload = parts
            try:
                rel = name[1:-1] if "\\" not in name else json.loads(name)
                entries[rel] = (int(size), int(mtime), digest, payload)
            except ValueError:
                continue
        return entries

    @property
    def empty(self) -> bool:
        """``True`` when no result was loaded (a first run, or a cache that did not match)."""
        return not self._old

    def by_stamp(self, rel: str, size: int, mtime_ns: int) -> FileResult | None:
        """The stored result of ``rel`` if its size and mtime are unchanged, else ``None``."""
        entry = self._old.get(rel)
        if entry is None or entry[0] != size or entry[1] != mtime_ns:
            return None
        result = self._decode(entry[3])
        if result is not None:
            self._new[rel] = entry
            self.hits += 1
        return result

    def lookup(self, rel: str, digest: str) -> FileResult | None:
        """The stored result of ``rel`` if its content digest is ``digest``, else ``None``.
        Changes nothing; see :meth:`refresh`."""
        entry = self._old.get(rel)
        if entry is None or not digest or entry[2] != digest:
            return None
        return self._decode(entry[3])

    def refresh(self, rel: str, size: int, mtime_ns: int, digest: str) -> None:
        """Keep the stored result of ``rel`` (found by :meth:`lookup`) under its new stamp."""
        entry = self._old.get(rel)
        if entry is not None and digest and entry[2] == digest:
            self._new[rel] = (size, mtime_ns, digest, entry[3])
            self._changed = True
            self.hits += 1

    def store(self, rel: str, size: int, mtime_ns: int, digest: str | None, result: FileResult) -> None:
        """Remember ``result`` for ``rel`` (``digest`` ``None``: matched by stamp only)."""
        payload = json.dumps(encode_result(result), separators=(",", ":"))
        self._new[rel] = (size, mtime_ns, digest or "", payload)
        self._changed = True
        self.misses += 1

    @staticmethod
    def _decode(payload: str) -> FileResult | None:
        try:
            return decode_result(json.loads(payload))
        except (KeyError, TypeError, ValueError, IndexError, AttributeError):
            return None

    def save(self) -> None:
        """Write the results of this scan (files not seen in it are dropped), atomically;
        nothing when nothing changed. A cache that cannot be written is left alone."""
        if not self._changed and self._new.keys() == self._old.keys():
            return
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(prefix=".scan-", suffix=".tmp", dir=self.path.parent)
            try:
                with os.fdopen(fd, "w", encoding="utf-8") as handle:
                    handle.write(self._header() + "\n")
                    for rel, (size, mtime, digest, payload) in self._new.items():
                        # json.dumps escapes tabs and newlines: one line, five fields.
                        handle.write(f"{size}\t{mtime}\t{digest}\t{json.dumps(rel)}\t{payload}\n")
                os.replace(tmp, self.path)
            except BaseException:
                os.unlink(tmp)
                raise
        except OSError:
            return
