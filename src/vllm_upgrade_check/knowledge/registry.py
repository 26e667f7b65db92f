"""Load and validate rule packs: the bundled ones (shipped in the wheel as
``vllm_upgrade_check.rules``) and any extra directories or files a user names.

Every problem is a :class:`~vllm_upgrade_check.errors.RulePackError` naming the file and
line: YAML syntax, a schema violation (unknown key, wrong type, malformed version), two
packs for one release, or two rules sharing an id.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import cached_property, lru_cache
from importlib import resources
from pathlib import Path
from typing import Any

from packaging.version import Version

from vllm_upgrade_check.errors import RulePackError
from vllm_upgrade_check.knowledge import packbundle
from vllm_upgrade_check.model.construct import construct
from vllm_upgrade_check.model.pack import Pack, Rule
from vllm_upgrade_check.parsing.textfiles import read_named_file


def _line_for(loc: Sequence[Any], positions: dict[tuple[Any, ...], int]) -> int | None:
    path = tuple(loc)
    while True:
        if path in positions:
            return positions[path]
        if not path:
            return None
        path = path[:-1]


def load_pack_text(text: str, source: str) -> Pack:
    """Validate one pack given as YAML text.

    Args:
        text: the YAML document.
        source: the file name used in error messages.

    Raises:
        RulePackError: naming ``source`` and the line of the first problem (``(and N more)``
            when there are more: :func:`check_pack_text` gives them all).
    """
    pack, found = check_pack_text(text, source)
    if pack is None:
        first = found[0]
        more = f" (and {len(found) - 1} more)" if len(found) > 1 else ""
        raise RulePackError(first.message + more, source, first.line)
    return pack


def check_pack_text(text: str, source: str) -> tuple[Pack | None, list[RulePackError]]:
    """Validate one pack given as YAML text and report every problem, not the first only.

    Returns:
        ``(pack, [])`` when it is valid, else ``(None, problems)``: one
        :class:`RulePackError` per problem, each naming ``source`` and its line, in line order
        (a YAML syntax error is one problem: nothing after it can be read).
    """
    from pydantic import ValidationError

    from vllm_upgrade_check.model.pack_schema import validate_pack
    from vllm_upgrade_check.model.validation import problems
    from vllm_upgrade_check.parsing.yamlnodes import YamlProblem, compose_documents, to_python

    try:
        docs = compose_documents(text, lines_only=True)
        if len(docs) != 1:
            raise YamlProblem(f"a pack is one YAML document, found {len(docs)}", None)
        positions: dict[tuple[Any, ...], int] = {}
        data = to_python(docs[0], positions)
    except YamlProblem as exc:
        return None, [RulePackError(str(exc), source, exc.line)]
    if not isinstance(data, dict):
        return None, [RulePackError("a pack must be a YAML mapping", source, 1)]
    try:
        return validate_pack(data), []
    except ValidationError as exc:
        found = [RulePackError(str(p), source, _line_for(p.loc, positions)) for p in problems(exc, data)]
        return None, sorted(found, key=lambda e: e.line or 0)


def rule_id_lines(text: str) -> dict[str, int]:
    """The line of each rule's ``id`` in a pack's YAML text (upper-cased ids; for messages)."""
    from vllm_upgrade_check.parsing.yamlnodes import YamlProblem, compose_documents, to_python

    try:
        docs = compose_documents(text, lines_only=True)
        positions: dict[tuple[Any, ...], int] = {}
        data = to_python(docs[0], positions) if len(docs) == 1 else None
    except YamlProblem:
        return {}
    out: dict[str, int] = {}
    rules = data.get("rules") if isinstance(data, dict) else None
    for index, rule in enumerate(rules if isinstance(rules, list) else []):
        if isinstance(rule, dict) and isinstance(rule.get("id"), str):
            line = _line_for(("rules", index, "id"), positions)
            if line is not None:
                out.setdefault(rule["id"].upper(), line)
    return out


def _load_trusted(text: str, source: str, parsed: Any = None) -> Pack:
    """:func:`load_pack_text` for the packs shipped with the tool, which the test suite checks
    strictly: built without validation or pydantic (:func:`~vllm_upgrade_check.model.construct.construct`)
    from ``parsed`` (the wheel's pre-parsed data of :mod:`.packbundle`, used only when its
    digest matches the file) when given, else parsed with libyaml straight to Python (no node
    walk for line numbers) and validated; only on a problem parsed again the strict way for
    the error's line."""
    if isinstance(parsed, dict):
        try:  # the wheel's pre-parsed data of a pack the test suite checked: no validation
            return construct(Pack, parsed)
        except (TypeError, KeyError, ValueError):
            pass
    import yaml
    from pydantic import ValidationError

    from vllm_upgrade_check.model.pack_schema import validate_pack

    try:
        if parsed is None:
            parsed = yaml.load(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))  # noqa: S506 - safe loader
        if isinstance(parsed, dict):
            return validate_pack(parsed)
    except (yaml.YAMLError, ValidationError):
        pass
    return load_pack_text(text, source)


def load_pack_file(
    path: Path,
    display: str | None = None,
    *,
    trusted: bool = False,
    bundle: dict[str, tuple[str, Any]] | None = None,
) -> Pack:
    """Read and validate one pack file.

    Args:
        path: the pack.
        display: its name in error messages (default: ``path``).
        trusted: a pack shipped with the tool (strictly checked by the test suite): parsed
            the fast way; the result is the same.
        bundle: with ``trusted``, pre-parsed packs (:func:`.packbundle.read_bundle`): the
            pack's data is taken from there when it holds this exact text.

    Raises:
        RulePackError: unreadable file, or any problem :func:`load_pack_text` reports.
    """
    name = display or str(path)
    try:
        text = read_named_file(path).decode("utf-8")
    except OSError as exc:
        raise RulePackError(f"cannot read rule pack: {exc.strerror or exc}", name) from None
    except UnicodeDecodeError as exc:
        raise RulePackError(f"cannot read rule pack: not UTF-8 text: {exc.reason} at byte {exc.start}", name) from None
    if trusted:
        parsed = packbundle.parsed_pack(bundle, path.name, text) if bundle else None
        pack = _load_trusted(text, name, parsed)
    else:
        pack = load_pack_text(text, name)
    stem = path.name.removesuffix(".yaml").removesuffix(".yml").removesuffix(".draft")
    if stem != pack.release and stem.startswith(tuple("0123456789")):
        raise RulePackError(f"file name says {stem} but release is {pack.release}", name, 1)
    return pack


DRAFT_SUFFIXES = (".draft.yaml", ".draft.yml")
"""Draft packs written by ``rules derive`` / ``scripts/new_release.py`` for curation: never loaded
from a directory (a draft file named explicitly is loaded)."""


def is_pack_name(name: str) -> bool:
    """Whether a file in a pack directory is a pack: ``*.yaml``/``*.yml`` but not a draft."""
    return name.endswith((".yaml", ".yml")) and not name.endswith(DRAFT_SUFFIXES)


def _pack_files(path: Path) -> list[Path]:
    if path.is_dir():
        return sorted(p for p in path.iterdir() if is_pack_name(p.name))
    if path.is_file():
        return [path]
    if path.exists():
        raise RulePackError("not a regular file or directory (a FIFO, device or socket is never read)", str(path))
    raise RulePackError("no such rule pack file or directory", str(path))


def bundled_pack_files() -> list[tuple[str, Path]]:
    """``(display name, path)`` of the packs shipped with the tool, sorted by name."""
    root = resources.files("vllm_upgrade_check.rules")
    out = []
    for entry in root.iterdir():
        if is_pack_name(entry.name):
            out.append((f"rules/{entry.name}", Path(str(entry))))
    return sorted(out)


def bundled_pack_data() -> dict[str, tuple[str, Any]]:
    """The pre-parsed packs built into the wheel (:mod:`.packbundle`): file name ->
    ``(digest, data)``; empty when there are none (an editable install) or they cannot be read."""
    try:
        text = resources.files("vllm_upgrade_check.rules").joinpath(packbundle.BUNDLE_NAME).read_text("utf-8")
    except (OSError, UnicodeDecodeError):
        return {}
    return packbundle.read_bundle(text)


@dataclass(frozen=True)
class Registry:
    """All loaded packs, with rule ids checked unique.

    Attributes:
        packs: sorted by release (oldest first); a release may have several.
        sources: release -> the file(s) its packs came from (for messages).
    """

    packs: tuple[Pack, ...]
    sources: dict[str, str]

    @cached_property
    def releases(self) -> tuple[Version, ...]:
        """Every release that has a pack, oldest first, each once."""
        return tuple(sorted({p.version for p in self.packs}))

    @property
    def newest(self) -> Version:
        """The newest release with a pack."""
        if not self.packs:
            raise RulePackError("no rule packs loaded")
        return self.releases[-1]

    def rules(self) -> Iterable[tuple[Pack, Rule]]:
        """Every ``(pack, rule)``, oldest release first."""
        for pack in self.packs:
            for rule in pack.rules:
                yield pack, rule

    def rule(self, rule_id: str) -> tuple[Pack, Rule] | None:
        """The pack and rule with ``rule_id`` (case-insensitive), or ``None``."""
        wanted = rule_id.upper()
        for pack, rule in self.rules():
            if rule.id.upper() == wanted:
                return pack, rule
        return None

    def packs_for(self, release: Version) -> list[Pack]:
        """The packs of ``release`` (bundled first), possibly empty."""
        return [pack for pack in self.packs if pack.version == release]


def build_registry(named: Iterable[tuple[str, Pack]]) -> Registry:
    """Check packs together: rule ids must be unique across all packs.

    Several packs may cover one release (the bundled pack and an organisation's own);
    within one directory the file-name check of :func:`load_pack_file` keeps one per release.

    Args:
        named: ``(source name, pack)`` pairs.

    Raises:
        RulePackError: an id used twice, naming both files.
    """
    ids: dict[str, str] = {}
    pairs = list(named)
    for source, pack in pairs:
        for rule in pack.rules:
            key = rule.id.upper()
            if key in ids:
                raise RulePackError(f"rule id {rule.id} is already used in {ids[key]}", source)
            ids[key] = source
    pairs.sort(key=lambda sp: sp[1].version)
    sources: dict[str, str] = {}
    for source, pack in pairs:
        sources[pack.release] = ", ".join(filter(None, [sources.get(pack.release), source]))
    return Registry(packs=tuple(p for _s, p in pairs), sources=sources)


ENTRY_POINT_GROUP = "vllm_upgrade_check.rules"
"""Entry-point group of organisation rule packs: each entry point names a package (or a
``Path``/string, or a callable returning one) whose directory holds ``<release>.yaml`` packs."""


def _group_declared() -> bool:
    """Whether some distribution on ``sys.path`` may declare :data:`ENTRY_POINT_GROUP`: the
    group's name in one of the ``entry_points.txt`` files of the ``*.dist-info``/``*.egg-info``
    folders (a byte search; ``importlib.metadata`` parses every distribution's metadata, which
    costs more than the rest of a small scan). ``True`` when a path entry is not a plain
    folder (a zip), so that the full lookup decides."""
    import sys

    needle = ENTRY_POINT_GROUP.encode()
    for entry in sys.path:
        folder = entry or "."
        if not os.path.isdir(folder):
            if os.path.exists(folder):
                return True
            continue
        try:
            names = [e.name for e in os.scandir(folder) if e.name.endswith((".dist-info", ".egg-info"))]
        except OSError:
            continue
        for name in names:
            try:
                with open(os.path.join(folder, name, "entry_points.txt"), "rb") as handle:
                    if needle in handle.read():
                        return True
            except OSError:
                continue
    return False


def entry_point_pack_dirs() -> list[tuple[str, Path]]:
    """``(entry point name, directory)`` of every installed organisation rule pack.

    Raises:
        RulePackError: an entry point that cannot be loaded or names no directory.
    """
    if not _group_declared():
        return []
    from importlib.metadata import entry_points

    found: list[tuple[str, Path]] = []
    for ep in sorted(entry_points(group=ENTRY_POINT_GROUP), key=lambda e: e.name):
        try:
            target: Any = ep.load()
            if callable(target) and not isinstance(target, (str, Path)):
                target = target()
            if isinstance(target, (str, Path)):
                directory = Path(target)
            else:
                directory = Path(target.__file__).parent
        except Exception as exc:  # an organisation package that does not import
            raise RulePackError(f"entry point {ep.name} ({ep.value}) cannot be loaded: {exc}") from None
        if not directory.is_dir():
            raise RulePackError(f"entry point {ep.name} ({ep.value}) names no directory: {directory}")
        found.append((f"{ep.name} ({directory})", directory))
    return found


@lru_cache(maxsize=1)
def _bundled_packs() -> tuple[tuple[str, Pack], ...]:
    """The packs shipped with the tool, validated once per process (packs are immutable).

    Built with the cyclic garbage collector paused: the some 2,600 records and their data
    live as long as the process, and collections triggered while they are made (about 7%
    of an empty scan) would find nothing to free; afterwards they are moved out of the
    collector's view (``gc.freeze``), so that later collections of a scan skip them."""
    import gc

    was_enabled = gc.isenabled()
    gc.disable()
    try:
        bundle = bundled_pack_data()
        packs = tuple(
            (display, load_pack_file(path, display, trusted=True, bundle=bundle))
            for display, path in bundled_pack_files()
        )
    finally:
        if was_enabled:
            gc.enable()
    gc.freeze()
    return packs


def load_registry(extra: Sequence[Path] = (), bundled: bool = True) -> Registry:
    """Load the bundled packs, the packs of installed :data:`ENTRY_POINT_GROUP` entry points
    (with ``bundled``), plus packs from ``extra`` files or directories.

    Raises:
        RulePackError: for any invalid pack, duplicate release or duplicate id.
    """
    named: list[tuple[str, Pack]] = []
    if bundled:
        named.extend(_bundled_packs())
        for _name, directory in entry_point_pack_dirs():
            for path in _pack_files(directory):
                named.append((str(path), load_pack_file(path)))
    for root in extra:
        for path in _pack_files(root):
            named.append((str(path), load_pack_file(path)))
    return build_registry(named)


def validate_pack_files(paths: Sequence[Path], against_bundled: bool = True) -> tuple[list[Pack], list[RulePackError]]:
    """Check pack files and report every problem in one pass (``rules validate``).

    Each file is checked on its own (YAML, schema, file name against release: every problem
    with its line); then the rule ids of every file (those of a file with other problems too,
    so that one run reports them all) must differ from each other and, with
    ``against_bundled``, from the ids of the bundled packs and of installed entry-point packs
    (``scan --rules`` loads them together). A given file that is itself a bundled pack is not
    checked against itself.

    Returns:
        ``(valid packs, problems)``; the problems in file order, each naming its file and line.
    """
    errors: list[RulePackError] = []
    loaded: list[tuple[str, Pack, dict[str, int]]] = []
    ids: list[tuple[str, list[str], dict[str, int]]] = []  # (file, its rule ids, their lines), in file order
    given: set[str] = set()
    for root in paths:
        try:
            files = _pack_files(root)
        except RulePackError as exc:
            errors.append(exc)
            continue
        for path in files:
            name = str(path)
            given.add(os.path.realpath(path))
            try:
                text = path.read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError) as exc:
                errors.append(RulePackError(f"cannot read rule pack: {exc}", name))
                continue
            pack, found = check_pack_text(text, name)
            errors.extend(found)
            lines = rule_id_lines(text)
            if pack is None:  # its ids still count, so that one run reports every problem
                ids.append((name, list(lines), lines))
                continue
            ids.append((name, [r.id for r in pack.rules], lines))
            stem = path.name.removesuffix(".yaml").removesuffix(".yml").removesuffix(".draft")
            if stem != pack.release and stem.startswith(tuple("0123456789")):
                errors.append(RulePackError(f"file name says {stem} but release is {pack.release}", name, 1))
            loaded.append((name, pack, lines))
    taken: dict[str, str] = {}
    if against_bundled:
        bundle = bundled_pack_data()
        for display, path in bundled_pack_files():
            if os.path.realpath(path) in given:
                continue
            for rule in load_pack_file(path, display, trusted=True, bundle=bundle).rules:
                taken[rule.id.upper()] = f"the bundled pack {display}"
        for ep_name, directory in entry_point_pack_dirs():
            for path in _pack_files(directory):
                if os.path.realpath(path) not in given:
                    for rule in load_pack_file(path).rules:
                        taken[rule.id.upper()] = f"{path} (entry point {ep_name})"
    for name, rule_ids, lines in ids:
        for rule_id in rule_ids:
            key = rule_id.upper()
            if key in taken:
                errors.append(RulePackError(f"rule id {rule_id} is already used in {taken[key]}", name, lines.get(key)))
            else:
                taken[key] = name
    first: dict[str | None, int] = {}
    for error in errors:
        first.setdefault(error.path, len(first))
    errors = [e for _k, e in sorted(enumerate(errors), key=lambda p: (first[p[1].path], p[1].line or 0, p[0]))]
    return [pack for _n, pack, _l in loaded], errors


def pack_sources_digest(extra: Sequence[Path] = ()) -> str:
    """A digest of every file :func:`load_registry` may read the rules from: the bundled
    rules package (its packs, their pre-parsed bundle and its ``data/``), the packs of
    installed entry points, and the pack files of ``extra`` (``--rules``), each with its
    path. Two runs with the same digest load the same rules.

    Raises:
        RulePackError: an ``extra`` path that is neither a file nor a directory, or an entry
            point that names no directory (as :func:`load_registry` raises).
    """
    import hashlib

    digest = hashlib.blake2b(digest_size=16)
    files: list[Path] = []
    bundled = Path(str(resources.files("vllm_upgrade_check.rules")))
    for directory, dirs, names in os.walk(bundled):
        dirs[:] = sorted(d for d in dirs if d != "__pycache__")
        files.extend(Path(directory, n) for n in sorted(names) if not n.endswith((".pyc", ".pyo")))
    for _name, entry_dir in entry_point_pack_dirs():
        files.extend(_pack_files(entry_dir))
    for root in extra:
        files.extend(_pack_files(root))
    for path in files:
        try:
            content = path.read_bytes()
        except OSError as exc:
            content = f"unreadable: {exc}".encode()
        digest.update(f"{os.path.abspath(path)}|{len(content)}|".encode("utf-8", "surrogateescape"))
        digest.update(content)
    return digest.hexdigest()
