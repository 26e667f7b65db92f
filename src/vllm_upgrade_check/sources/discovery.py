"""Finding and reading the files of a scanned tree, cheaply and without crashing.

What is left out: :data:`SKIP_DIRS`, virtual environments (a ``pyvenv.cfg`` inside), what
any ``.gitignore`` on the way down matches (nested ones included, git's precedence: a
deeper file overrides a shallower one, a later pattern an earlier one), ``--exclude``
patterns, symlinks that leave the root or loop back. Unreadable directories are reported,
never raised.

Reading is decided by name first (:meth:`Scanner.accepts_name`), then by content: a file
no scanner takes by name is still read, and parsed as the kind its content shows when it
passes a byte-level pre-filter (:mod:`.sniff`); only files of binary kinds by suffix are
never opened. A file is read once, as bytes; binary files (a NUL byte in the first 8 KiB)
and files over the size limit are skipped with the reason when a scanner would have read
them by name.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path

from vllm_upgrade_check.model.facts import Skipped
from vllm_upgrade_check.parsing.globs import GitIgnoreRules
from vllm_upgrade_check.parsing.textfiles import decode, has_text_bom
from vllm_upgrade_check.sources.links import link_loops, link_outside
from vllm_upgrade_check.sources.scanners.base import Scanner, SourceFile
from vllm_upgrade_check.sources.sniff import (
    as_yaml_name,
    has_distribution_marker,
    has_marker,
    json_shape,
    never_sniffed,
    sniff_kind,
)

SKIP_DIRS = frozenset(
    {
        ".git",
        ".hg",
        ".svn",
        "node_modules",
        "__pycache__",
        ".tox",
        ".nox",
        ".mypy_cache",
        ".pytest_cache",
        ".ruff_cache",
        "site-packages",
        ".venv",
        "venv",
    }
)
"""Directories never descended into (virtual environments are also recognised by ``pyvenv.cfg``)."""

MAX_FILE_BYTES = 5 * 1024 * 1024
"""Default size (bytes, 5 MiB) above which a file is skipped with a reason."""

BINARY_PROBE_BYTES = 8192
"""A NUL byte within this many leading bytes marks a file as binary."""

HEAD_BYTES = 256
"""Bytes read to decide on content (a ``#!`` line) when the name does not decide."""

Reader = Callable[[str | Path], bytes]
"""Reads a whole file as bytes; raises :class:`OSError` (replaceable in tests)."""


def _read_bytes(path: str | Path) -> bytes:
    with open(path, "rb") as handle:
        return handle.read()


read_bytes: Reader = _read_bytes
"""The function every file is read with (module attribute so tests can simulate errors)."""


class _Ignores:
    """The ``.gitignore`` files in force in one directory: ``(base, spec)`` root first."""

    def __init__(
        self, specs: tuple[tuple[str, GitIgnoreRules], ...], root: str = "", notes: list[Skipped] | None = None
    ) -> None:
        self.specs = specs
        self.root = root
        self.notes = notes

    def ignored(self, rel: str) -> bool:
        """Whether ``rel`` (root-relative POSIX path, a trailing ``/`` for directories) is ignored."""
        result = False
        for base, spec in self.specs:
            if base:
                if not rel.startswith(base + "/"):
                    continue
                sub = rel[len(base) + 1 :]
            else:
                sub = rel
            verdict = spec.check(sub)
            if verdict is not None:
                result = verdict
        return result

    def entering(self, directory: str, rel_dir: str) -> _Ignores:
        """The rules in force inside ``directory`` (whose root-relative path is ``rel_dir``)."""
        base = "" if rel_dir == "." else rel_dir
        label = f"{base}/.gitignore" if base else ".gitignore"
        path = os.path.join(directory, ".gitignore")
        if os.path.islink(path):
            real = os.path.realpath(path)
            if not self.root or not real.startswith(self.root.rstrip(os.sep) + os.sep):
                self._note(label, "a symlink leading outside the scanned root: not read (its patterns do not apply)")
                return self
        spec = _load_gitignore(path)
        if spec is None:
            return self
        for number, line, reason in spec.rejected:
            self._note(label, f"pattern {line[:80]!r} left out: {reason}", number)
        return _Ignores((*self.specs, (base, spec)), self.root, self.notes)

    def _note(self, path: str, reason: str, line: int | None = None) -> None:
        if self.notes is not None:
            self.notes.append(Skipped(path, reason, line=line))


class PassedOver:
    """A file :func:`walk` did not yield because no scanner wants its name; kept so that a file
    another file names by path (a systemd ``EnvironmentFile=``) can still be read. The ignore
    rules, which cost more than the name check, are applied only when it is asked for.

    Attributes:
        path: the file.
        rel: its root-relative POSIX path.
    """

    __slots__ = ("path", "rel", "_ignores", "_excluded")

    def __init__(self, path: str, rel: str, ignores: _Ignores, excluded: GitIgnoreRules | None) -> None:
        self.path, self.rel, self._ignores, self._excluded = path, rel, ignores, excluded

    def ignored(self) -> bool:
        """Whether a ``.gitignore`` or an ``--exclude`` pattern leaves the file out."""
        return self._ignores.ignored(self.rel) or (self._excluded is not None and self._excluded.matches(self.rel))


def _load_gitignore(path: str) -> GitIgnoreRules | None:
    """The patterns of a ``.gitignore`` (its first MiB); ``None`` when it is not a readable
    regular file (a FIFO named ``.gitignore`` is never opened)."""
    try:
        if not os.path.isfile(path):
            return None
        with open(path, "rb") as handle:
            lines = handle.read(1024 * 1024).decode("utf-8", errors="replace").splitlines()
    except OSError:
        return None
    return GitIgnoreRules(lines)


def exclude_rules(exclude: Sequence[str]) -> GitIgnoreRules | None:
    """The ``--exclude`` patterns compiled (``None`` when there are none).

    Raises:
        UsageError: a pattern that is invalid or too complex to match in linear time.
    """
    if not exclude:
        return None
    rules = GitIgnoreRules(exclude)
    if rules.rejected:
        from vllm_upgrade_check.errors import UsageError

        _number, line, reason = rules.rejected[0]
        raise UsageError(f"--exclude {line[:80]!r}: {reason}")
    return rules


def covered_roots(roots: Sequence[Path]) -> dict[int, int]:
    """Roots that are another root again (``ex`` and ``./ex``) or lie inside one (``ex/deploy``),
    by position: each maps to the position of the root that covers it (its files are scanned
    from there, once). Of equal roots the first given is kept."""
    real = [os.path.realpath(root) for root in roots]
    covered: dict[int, int] = {}
    for index, path in enumerate(real):
        for other, other_path in enumerate(real):
            if other == index or other in covered:
                continue
            same = path == other_path
            if (same and other < index) or (not same and path.startswith(other_path.rstrip(os.sep) + os.sep)):
                covered[index] = other
                break
    return covered


def root_label(root: Path, roots: Sequence[Path]) -> str:
    """The prefix of ``root``'s files in reports: ``""`` when ``roots`` holds one root (paths
    are relative to it; roots :func:`covered_roots` by another do not count), else the root as
    given, as a POSIX path relative to the current directory when it lies under it (``a``,
    ``../b``, ``/srv/c``; ``""`` for the current directory), so that equal names under two
    roots stay apart."""
    if len(roots) - len(covered_roots(roots)) <= 1:
        return ""
    path = os.path.abspath(root)
    try:
        rel = Path(path).relative_to(os.getcwd()).as_posix()
    except ValueError:
        rel = Path(os.path.relpath(path)).as_posix() if not os.path.isabs(root) else Path(path).as_posix()
    return "" if rel == "." else rel


def labelled(label: str, root: Path, rel: str) -> str:
    """``rel`` (from :func:`walk` of ``root``) as reported under ``label`` (:func:`root_label`)."""
    if not label:
        return rel
    return label if not root.is_dir() else f"{label}/{rel}"


def walk(
    root: Path,
    exclude: Sequence[str] = (),
    skipped: list[Skipped] | None = None,
    keep_name: Callable[[str], bool] | None = None,
    passed_over: list[PassedOver] | None = None,
) -> Iterator[tuple[str, str]]:
    """Yield ``(path, root-relative POSIX path)`` of every regular file under ``root``, sorted.

    Args:
        root: a directory (a file is yielded as itself).
        exclude: gitignore-style patterns to leave out.
        skipped: if given, receives a :class:`Skipped` per directory that cannot be listed.
        keep_name: if given, only files whose base name it accepts are yielded (checked
            before the ignore rules, which cost more).
        passed_over: if given, receives the files ``keep_name`` refused (ignore rules not
            yet applied, see :class:`PassedOver`).
    """
    if not root.is_dir():
        yield str(root), root.name
        return
    excluded = exclude_rules(exclude)
    seen: set[tuple[int, int]] = set()
    top = _Ignores((), os.path.realpath(root), skipped)
    stack: list[tuple[str, str, _Ignores]] = [(str(root), ".", top)]
    while stack:  # depth first, in name order, without nested generators
        directory, rel_dir, ignores = stack.pop()
        try:
            info = os.stat(directory)
            key = (info.st_dev, info.st_ino)
            if key in seen:
                continue  # a symlink loop, or a second link to a directory already walked
            seen.add(key)
            with os.scandir(directory) as it:
                entries = sorted(it, key=lambda e: e.name)
        except OSError as exc:
            if skipped is not None:
                # What it holds is unknown: it may hold the only launch, so the gate fails closed.
                skipped.append(
                    Skipped(rel_dir, f"cannot list directory: {exc.strerror or exc}", configures_vllm=True)
                )
            continue
        names = {e.name for e in entries}
        if "pyvenv.cfg" in names and rel_dir != ".":
            continue  # a virtual environment
        if ".gitignore" in names:
            ignores = ignores.entering(directory, rel_dir)
        prefix = "" if rel_dir == "." else rel_dir + "/"
        subdirs = []
        for entry in entries:
            name = entry.name
            rel = prefix + name
            try:
                if entry.is_symlink():
                    # One leading out of the root is never followed; one inside names a file
                    # or directory that is walked under its real path (no duplicate findings,
                    # and `fix` never writes through a link). One that loops names nothing
                    # to walk: it is reported, so that it is not taken for a missing file.
                    if skipped is not None and not (ignores.ignored(rel) or (excluded is not None and excluded.matches(rel))):
                        if link_loops(entry.path):
                            skipped.append(Skipped(rel, "symlink loop (ELOOP): the link leads back to itself; not read"))
                        elif (why := link_outside(entry.path, top.root)) is not None:
                            skipped.append(Skipped(rel, why))
                    continue
                is_dir = entry.is_dir()
                is_file = not is_dir and entry.is_file()
            except OSError:
                continue
            if is_dir:
                if name in SKIP_DIRS:
                    continue
                if ignores.ignored(rel + "/") or (excluded is not None and excluded.matches(rel + "/")):
                    continue
                subdirs.append((entry.path, rel, ignores))
            elif is_file:
                if keep_name is not None and not keep_name(name):
                    if passed_over is not None:
                        passed_over.append(PassedOver(entry.path, rel, ignores, excluded))
                    continue
                if ignores.ignored(rel) or (excluded is not None and excluded.matches(rel)):
                    continue
                yield entry.path, rel
        stack.extend(reversed(subdirs))


def _decode(data: bytes, path: str | Path = ".") -> str:
    """The text the scanners read: decoded as ``fix`` decodes it (:func:`.textfiles.decode`),
    without a BOM, CRLF made LF.

    Raises:
        UnicodeDecodeError: UTF-16 text that does not decode.
    """
    text = decode(Path(path), data).text
    return text.replace("\r\n", "\n") if "\r" in text else text


def wanted(name: str, scanners: Sequence[Scanner]) -> bool | None:
    """``True`` if a scanner accepts a file of this name, ``False`` if none could, ``None``
    when only the content can tell."""
    answer: bool | None = False
    for scanner in scanners:
        verdict = scanner.accepts_name(name)
        if verdict:
            return True
        if verdict is None:
            answer = None
    return answer


def read_source(
    path: str | Path,
    relpath: str,
    max_bytes: int = MAX_FILE_BYTES,
    scanners: Sequence[Scanner] | None = None,
    by_name: bool | None = None,
    overlay: Mapping[str, bytes] | None = None,
) -> SourceFile | Skipped | None:
    """Read a file once, if a scanner may want it.

    Args:
        path: the file.
        relpath: its root-relative POSIX path.
        max_bytes: files larger than this are skipped.
        scanners: decide by name, then by content (``None``: read every file as itself).
        by_name: :func:`wanted` of the name when the caller knows it already.
        overlay: contents to read instead of the disk, by real path (``fix --diff`` rescans
            its edits in memory).

    A file no scanner takes by name is still read (unless its suffix is of a binary kind,
    :func:`~.sniff.never_sniffed`: binary kinds, documentation, other languages' sources) and, when it passes the byte-level pre-filter
    (:func:`~.sniff.has_marker`, :func:`~.sniff.has_distribution_marker`), read as the kind
    its content shows (:func:`~.sniff.sniff_kind`, recorded as :attr:`SourceFile.kind`).

    Returns:
        The decoded :class:`SourceFile` (UTF-8, else Latin-1; CRLF made LF); ``None`` when no
        scanner wants it (binary files included when none would read them by name);
        :class:`Skipped` with the reason for binary, oversized or unreadable files a scanner
        would have read by name.
    """
    name = relpath.rsplit("/", 1)[-1]
    if by_name is None:
        by_name = True if scanners is None else wanted(name, scanners)
    if by_name is False and never_sniffed(name):
        return None
    try:
        pending = overlay.get(os.path.realpath(path)) if overlay else None
        size = os.stat(path).st_size if pending is None else len(pending)
        if size > max_bytes:
            if by_name is not True and not _head_accepted(path, relpath, scanners or ()):
                return None
            return Skipped(
                relpath,
                f"larger than the size limit of {max_bytes} bytes ({size} bytes)",
                configures_vllm=_mentions_vllm(path) if pending is None else b"vllm" in pending.lower(),
            )
        data = read_bytes(path) if pending is None else pending
    except OSError as exc:
        return Skipped(relpath, f"cannot read: {exc.strerror or exc}", configures_vllm=bool(by_name))
    if b"\x00" in data[:BINARY_PROBE_BYTES] and not has_text_bom(data):
        return Skipped(relpath, "binary file") if by_name else None
    if by_name is False and scanners is not None and not has_text_bom(data):
        if not has_marker(data) and not has_distribution_marker(data):
            return None  # the pre-filter: nothing in it is vLLM's (UTF-16 text is decoded first)
    try:
        source = SourceFile(relpath, _decode(data, path))
    except UnicodeDecodeError as exc:
        return Skipped(relpath, f"not UTF-16 text, although it starts as such: {exc.reason}", configures_vllm=bool(by_name))
    if scanners is None:
        return source
    if by_name is True:
        return as_json(source) or source
    return as_sniffed(source, scanners)


def as_json(source: SourceFile) -> SourceFile | None:
    """A ``.json`` file that is a JSON object of a shape the YAML scanners read
    (:func:`~.sniff.json_shape`: a Kubernetes manifest or compose file that mentions vLLM, a
    Ray Serve config with ``engine_kwargs``, a vLLM ``--config``), as the YAML it also is (kind :func:`~.sniff.as_yaml_name`; tabs, which
    JSON allows between tokens and YAML does not, read as blanks: the same columns); else
    ``None``. Triton's ``model.json``, dashboards and rule files stay as they are."""
    if source.kind or not source.name.endswith(".json") or source.name == "model.json":
        return None
    shape = json_shape(source.text) if "{" in source.text[:64] else None
    if shape is None or (shape in ("kubernetes", "compose") and not source.mentions_vllm()):
        return None
    if shape == "ray-serve" and not source.mentions_vllm() and "engine_kwargs" not in source.text:
        return None
    return SourceFile(source.relpath, source.text.replace("\t", " "), as_yaml_name(source.name))


def as_sniffed(source: SourceFile, scanners: Sequence[Scanner]) -> SourceFile | None:
    """``source`` as the scan reads it: as itself when a scanner accepts it, else as the kind
    its content shows when it passes the pre-filter (:func:`~.sniff.sniff_kind`; the returned
    file carries the kind), else ``None`` (no scanner reads it). ``fix`` re-reads a fixed text
    with this, so that it is read as the scan read it. A ``.json`` file of a shape the YAML
    scanners read is read as YAML (:func:`as_json`)."""
    as_yaml = as_json(source)
    if as_yaml is not None:
        return as_yaml
    if any(s.accepts(source) for s in scanners):
        return source
    data = source.text.encode("utf-8", "surrogateescape")
    vllm = has_marker(data)
    if not vllm and not has_distribution_marker(data):
        return None
    kind = sniff_kind(source.name, source.text, vllm)
    if kind is None:
        return None
    sniffed = SourceFile(source.relpath, source.text, kind)
    return sniffed if any(s.accepts(sniffed) for s in scanners) else None


def _mentions_vllm(path: str | Path) -> bool:
    """Whether a file says ``vllm`` anywhere (any case), read in chunks of 1 MiB (bounded
    memory, linear time); ``True`` when it cannot be read (fail closed)."""
    tail = b""
    try:
        with open(path, "rb") as handle:
            while chunk := handle.read(1 << 20):
                if b"vllm" in (tail + chunk).lower():
                    return True
                tail = chunk[-3:]
    except OSError:
        return True
    return False


def _head_accepted(path: str | Path, relpath: str, scanners: Sequence[Scanner]) -> bool:
    try:
        with open(path, "rb") as handle:
            head = handle.read(HEAD_BYTES)
    except OSError:
        return False
    if b"\x00" in head and not has_text_bom(head):
        return False
    try:
        source = SourceFile(relpath, _decode(head, path))
    except UnicodeDecodeError:  # the head may cut a UTF-16 pair: the file is read whole then
        return True
    return any(s.accepts(source) for s in scanners)


class OutsideRoots(Exception):
    """A reported path that does not lead to a file inside the scanned roots; the message says why."""


def resolve_in_roots(roots: Sequence[Path], relpath: str) -> Path:
    """The real file behind ``relpath`` (relative to one of ``roots``, prefixed by its
    :func:`~vllm_upgrade_check.sources.discovery.root_label` when there are several), checked to lie
    inside it and reached through no symlink.

    Raises:
        OutsideRoots: not found under any root, or a symlink leads out of the root.
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
            raise OutsideRoots("the file is a symlink; not following it")
        if not real.startswith(real_base.rstrip(os.sep) + os.sep):
            raise OutsideRoots("a symlink leads outside the scanned root; not following it")
        if not root.is_file() and real != os.path.join(real_base, *Path(relpath_in_root).parts):
            raise OutsideRoots("the path goes through a symlink; not following it")
        return Path(real)
    raise OutsideRoots("file not found under the scanned roots")
