"""Static extraction of the public surface of a vLLM release.

Everything here reads files only: Python sources are parsed with :mod:`ast`,
``METADATA`` with :mod:`email.parser`, compiled extensions with a small ELF
dynamic-section reader.  Nothing from the release is imported or executed.

A release can be given as a ``.whl`` file, an unpacked wheel directory, or a
``site-packages`` directory holding ``vllm/`` and ``vllm-*.dist-info``.
"""

from __future__ import annotations

import ast
import os
import re
import struct
import zipfile
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from email.parser import Parser
from pathlib import Path
from types import MappingProxyType
from typing import IO, Any

from vllm_upgrade_check.elf import HeadCachedFile, cuda_major_of, read_elf_needed

__all__ = [
    "NAME_CATEGORIES",
    "Deprecation",
    "ReleaseSurface",
    "SourceRef",
    "extract_surface",
]

#: The name-set categories of a :class:`ReleaseSurface`, in report order.
NAME_CATEGORIES: tuple[str, ...] = (
    "cli_flags",
    "engine_args",
    "config_fields",
    "sampling_params",
    "env_vars",
    "metrics",
    "quantization_methods",
    "load_formats",
    "architectures",
    "modules",
)


# --------------------------------------------------------------------------
# Public data model
# --------------------------------------------------------------------------


@dataclass(frozen=True, order=True)
class SourceRef:
    """Where a fact was read: ``path`` inside the wheel (posix, e.g.
    ``vllm/engine/arg_utils.py``) and 1-based ``line`` (0 for binary files
    such as a compiled extension)."""

    path: str
    line: int

    def to_json(self) -> list:
        """Return ``[path, line]``."""
        return [self.path, self.line]

    @classmethod
    def from_json(cls, data: list) -> SourceRef:
        """Inverse of :meth:`to_json`."""
        return cls(str(data[0]), int(data[1]))


@dataclass(frozen=True)
class Deprecation:
    """A deprecation or removal notice found in the source.

    ``kind`` is the category of ``name``: ``"cli_flag"`` (``--foo``),
    ``"env_var"``, ``"engine_arg"``, ``"config_field"``, ``"metric"``,
    ``"module"``, ``"sampling_param"`` or ``"name"`` (anything else).
    ``name`` is the old spelling, ``replacement`` the new spelling the message
    points to (None if the message names none), ``message`` the notice text
    (f-string holes rendered as ``{...}``) and ``ref`` the line of the
    notice.  Sources: serve parser ``add_argument`` calls with
    ``deprecated=True`` or a help text saying deprecated; metrics whose
    ``documentation=`` says deprecated; and any string literal under
    ``vllm/`` saying "X is deprecated" (kept when it names a replacement or
    X is defined by the release)."""

    kind: str
    name: str
    message: str
    ref: SourceRef
    replacement: str | None = None

    def to_json(self) -> dict:
        """Return a JSON-ready dict."""
        return {
            "kind": self.kind,
            "name": self.name,
            "replacement": self.replacement,
            "message": self.message,
            "ref": self.ref.to_json(),
        }

    @classmethod
    def from_json(cls, data: dict) -> Deprecation:
        """Inverse of :meth:`to_json`."""
        return cls(
            kind=data["kind"],
            name=data["name"],
            message=data["message"],
            ref=SourceRef.from_json(data["ref"]),
            replacement=data.get("replacement"),
        )


def _frozen_map(items: Mapping[str, SourceRef] | Iterable) -> Mapping[str, SourceRef]:
    return MappingProxyType(dict(sorted(dict(items).items())))


@dataclass(frozen=True)
class ReleaseSurface:
    """The public surface of one vLLM release.

    Every name mapping goes from a name to the :class:`SourceRef` of its
    definition (first occurrence for names found in several places):

    - ``version``, ``requires_python``, ``requires_dist``: ``Version``,
      ``Requires-Python`` and every ``Requires-Dist`` line (verbatim, markers
      included) of ``vllm-*.dist-info/METADATA``; ``requires_dist_refs`` and
      ``requires_python_ref`` give their METADATA lines.
    - ``cuda_major``: N of the first CUDA library (``libcudart.so.N``, ``libcublas.so.N``,
      ...; see :func:`vllm_upgrade_check.elf.cuda_major_of`) in the ELF ``DT_NEEDED`` entries of ``vllm/_C.*.so``
      (then other ``vllm/_C*.so``, then any ``vllm/**/*.so``); None without a
      compiled extension or CUDA library.  ``cuda_ref`` names the ``.so``.
    - ``cli_flags``: ``vllm serve`` option strings (``--foo-bar``, short
      aliases such as ``-tp``, ``--no-foo-bar`` for BooleanOptionalAction
      flags, ``-O`` rewritten by FlexibleArgumentParser), found by following
      the parser from the serve subparser (``vllm/scripts.py`` in 0.6-0.7,
      ``vllm/entrypoints/cli/serve.py`` later) through ``make_arg_parser``
      (``vllm/entrypoints/{openai,launchers,common}/cli_args.py``),
      ``FrontendArgs.add_cli_args`` and ``EngineArgs.add_cli_args``
      (``vllm/engine/arg_utils.py``); see :class:`_CliCollector`.
    - ``engine_args``: fields of ``EngineArgs`` / ``AsyncEngineArgs``
      (``vllm/engine/arg_utils.py``).
    - ``config_fields``: ``"ModelConfig.max_model_len"`` style keys for every
      top-level ``*Config`` class in ``vllm/config.py`` or ``vllm/config/``
      (dataclass fields, or ``__init__`` parameters for plain classes).
    - ``sampling_params``: fields of ``SamplingParams``
      (``vllm/sampling_params.py``).
    - ``env_vars``: keys of ``environment_variables`` in ``vllm/envs.py``.
    - ``metrics``: string literals ``vllm:<identifier>`` anywhere under
      ``vllm/``, as exposed (counters with the ``_total`` suffix
      prometheus_client adds).
    - ``quantization_methods``: ``QuantizationMethods`` literal /
      ``QUANTIZATION_METHODS`` in ``vllm/model_executor/layers/quantization/__init__.py``.
    - ``load_formats``: ``LoadFormat`` enum values (``vllm/config.py`` or
      ``vllm/config/load.py``) and ``LoadFormats`` /
      ``_LOAD_FORMAT_TO_MODEL_LOADER`` of ``vllm/model_executor/model_loader/__init__.py``.
    - ``architectures``: keys of ``_VLLM_MODELS`` (or ``_MODELS`` in old
      releases) in ``vllm/model_executor/models/registry.py`` (or ``__init__.py``).
    - ``modules``: dotted names of every ``vllm/**/*.py``.
    - ``deprecations``: see :class:`Deprecation`.
    - ``unparsed``: Python files the extractor needed but ``ast`` could not
      parse (their facts are missing).
    """

    version: str
    requires_python: str | None
    requires_dist: tuple[str, ...]
    cuda_major: int | None
    cli_flags: Mapping[str, SourceRef]
    engine_args: Mapping[str, SourceRef]
    config_fields: Mapping[str, SourceRef]
    sampling_params: Mapping[str, SourceRef]
    env_vars: Mapping[str, SourceRef]
    metrics: Mapping[str, SourceRef]
    quantization_methods: Mapping[str, SourceRef]
    load_formats: Mapping[str, SourceRef]
    architectures: Mapping[str, SourceRef]
    modules: Mapping[str, SourceRef]
    deprecations: tuple[Deprecation, ...] = ()
    requires_dist_refs: tuple[SourceRef | None, ...] = ()
    requires_python_ref: SourceRef | None = None
    cuda_ref: SourceRef | None = None
    unparsed: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        for name in NAME_CATEGORIES:
            object.__setattr__(self, name, _frozen_map(getattr(self, name)))

    def names(self, category: str) -> Mapping[str, SourceRef]:
        """Return the name mapping of ``category`` (one of :data:`NAME_CATEGORIES`)."""
        if category not in NAME_CATEGORIES:
            raise KeyError(category)
        return getattr(self, category)

    def requirements_with_refs(self) -> list[tuple[str, SourceRef | None]]:
        """``(requirement, METADATA ref or None)`` for each ``requires_dist`` entry."""
        refs = list(self.requires_dist_refs)[: len(self.requires_dist)]
        refs += [None] * (len(self.requires_dist) - len(refs))
        return list(zip(self.requires_dist, refs, strict=True))

    def to_json(self) -> dict:
        """Return a JSON-ready dict (SourceRefs as ``[path, line]``)."""
        out: dict = {
            "version": self.version,
            "requires_python": self.requires_python,
            "requires_python_ref": _opt_ref_json(self.requires_python_ref),
            "requires_dist": [
                {"requirement": r, "ref": _opt_ref_json(ref)} for r, ref in self.requirements_with_refs()
            ],
            "cuda_major": self.cuda_major,
            "cuda_ref": _opt_ref_json(self.cuda_ref),
            "counts": {c: len(self.names(c)) for c in NAME_CATEGORIES},
        }
        for cat in NAME_CATEGORIES:
            out[cat] = {k: v.to_json() for k, v in self.names(cat).items()}
        out["deprecations"] = [d.to_json() for d in self.deprecations]
        out["unparsed"] = list(self.unparsed)
        return out

    @classmethod
    def from_json(cls, data: dict) -> ReleaseSurface:
        """Inverse of :meth:`to_json`."""
        reqs = data.get("requires_dist", [])
        kwargs = {cat: {k: SourceRef.from_json(v) for k, v in data[cat].items()} for cat in NAME_CATEGORIES}
        return cls(
            version=data["version"],
            requires_python=data.get("requires_python"),
            requires_dist=tuple(r["requirement"] for r in reqs),
            requires_dist_refs=tuple(_opt_ref(r["ref"]) for r in reqs),
            requires_python_ref=_opt_ref(data.get("requires_python_ref")),
            cuda_major=data.get("cuda_major"),
            cuda_ref=_opt_ref(data.get("cuda_ref")),
            deprecations=tuple(Deprecation.from_json(d) for d in data.get("deprecations", [])),
            unparsed=tuple(data.get("unparsed", [])),
            **kwargs,
        )


def _opt_ref_json(ref: SourceRef | None) -> list | None:
    return ref.to_json() if ref else None


def _opt_ref(data: list | None) -> SourceRef | None:
    return SourceRef.from_json(data) if data else None


# --------------------------------------------------------------------------
# Release file access
# --------------------------------------------------------------------------


class _ReleaseFiles:
    """Read-only view of ``vllm/**`` and ``vllm-*.dist-info/*`` of a release.

    ``names`` are posix paths relative to the wheel root."""

    names: list[str]
    dist_info: str

    def read(self, name: str) -> bytes:  # pragma: no cover - interface
        raise NotImplementedError

    def open(self, name: str) -> IO[bytes]:  # pragma: no cover - interface
        raise NotImplementedError

    def close(self) -> None:
        """Release resources."""

    def extra_needed(self) -> dict[str, list[str]]:
        """DT_NEEDED lists known without reading ELF files (see _DirFiles)."""
        return {}

    def _pick_dist_info(self, candidates: Iterable[str], where: str) -> str:
        found = sorted({c for c in candidates if re.fullmatch(r"vllm-[^/]+\.dist-info", c)})
        if len(found) != 1:
            raise ValueError(f"expected one vllm-*.dist-info in {where}, found {found}")
        return found[0]


class _ZipFiles(_ReleaseFiles):
    """Members of a ``.whl``; only the members asked for are decompressed."""

    def __init__(self, path: Path) -> None:
        self._zip = zipfile.ZipFile(path)
        all_names = [n for n in self._zip.namelist() if not n.endswith("/")]
        self.dist_info = self._pick_dist_info((n.split("/", 1)[0] for n in all_names if "/" in n), str(path))
        self.names = sorted(
            n for n in all_names if n.startswith("vllm/") or n.startswith(self.dist_info + "/")
        )

    def read(self, name: str) -> bytes:
        return self._zip.read(name)

    def open(self, name: str) -> IO[bytes]:
        return self._zip.open(name)

    def close(self) -> None:
        self._zip.close()


class _DirFiles(_ReleaseFiles):
    """An unpacked wheel or a site-packages directory.

    Only ``vllm/`` and the vllm dist-info are walked.  When the directory
    holds no ``vllm/**/*.so`` but has a ``NEEDED.txt`` (``readelf -d`` output
    per ``== path`` header, as written by the wheel-unpacking script), the
    DT_NEEDED entries are read from it instead."""

    def __init__(self, root: Path) -> None:
        self.root = root
        if not (root / "vllm").is_dir():
            raise ValueError(f"{root} has no vllm/ package directory")
        self.dist_info = self._pick_dist_info((p.name for p in root.iterdir() if p.is_dir()), str(root))
        names: list[str] = []
        for top in ("vllm", self.dist_info):
            for dirpath, dirnames, filenames in os.walk(root / top):
                dirnames.sort()
                rel = Path(dirpath).relative_to(root).as_posix()
                names.extend(f"{rel}/{f}" for f in filenames)
        self.names = sorted(names)

    def read(self, name: str) -> bytes:
        return (self.root / name).read_bytes()

    def open(self, name: str) -> IO[bytes]:
        return open(self.root / name, "rb")

    def extra_needed(self) -> dict[str, list[str]]:
        listing = self.root / "NEEDED.txt"
        if not listing.is_file():
            return {}
        out: dict[str, list[str]] = {}
        current = None
        for line in listing.read_text(errors="replace").splitlines():
            if line.startswith("== "):
                current = line[3:].strip()
                out[current] = []
            elif current is not None:
                m = re.search(r"\(NEEDED\).*\[(.+)\]", line)
                if m:
                    out[current].append(m.group(1))
        return out


def _open_release(path: str | os.PathLike) -> _ReleaseFiles:
    p = Path(path)
    if p.is_file() and zipfile.is_zipfile(p):
        return _ZipFiles(p)
    if p.is_dir():
        return _DirFiles(p)
    raise ValueError(f"{path} is neither a wheel file nor a directory")


# --------------------------------------------------------------------------
# CUDA major of the compiled extensions (ELF reader: vllm_upgrade_check.elf)
# --------------------------------------------------------------------------


def _cuda_major(files: _ReleaseFiles) -> tuple[int | None, SourceRef | None]:
    """CUDA major version from the DT_NEEDED entries of the compiled extensions."""
    listed = files.extra_needed()
    so_names = [n for n in files.names if n.endswith(".so") or ".so." in n.rsplit("/", 1)[-1]]
    if not so_names:
        so_names = sorted(listed)

    def rank(name: str) -> tuple:
        # vllm/_C.*.so, then other vllm/_C*.so, then everything else
        base = name.rsplit("/", 1)[-1]
        top = name.count("/") == 1
        return (not (top and base.startswith("_C.")), not (top and base.startswith("_C")), name)

    for name in sorted(so_names, key=rank):
        if name in listed:
            needed: Iterable[str] = listed[name]
        else:
            try:
                with files.open(name) as raw:
                    needed = read_elf_needed(HeadCachedFile(raw))
            except (ValueError, struct.error, OSError):
                continue
        major = cuda_major_of(needed)
        if major is not None:
            return major, SourceRef(name, 0)
    return None, None


# --------------------------------------------------------------------------
# METADATA
# --------------------------------------------------------------------------


@dataclass(frozen=True)
class _Metadata:
    version: str
    requires_python: str | None
    requires_python_ref: SourceRef | None
    requires_dist: tuple[str, ...]
    requires_dist_refs: tuple[SourceRef, ...]


def _read_metadata(files: _ReleaseFiles) -> _Metadata:
    path = f"{files.dist_info}/METADATA"
    text = files.read(path).decode("utf-8", errors="replace")
    header = text.split("\n\n", 1)[0]
    msg = Parser().parsestr(header, headersonly=True)
    lines = header.splitlines()

    def line_of(key: str, value: str, start: int = 0) -> int:
        for i in range(start, len(lines)):
            if lines[i].lower().startswith(key.lower() + ":") and lines[i].split(":", 1)[1].strip() == value:
                return i + 1
        return 0

    reqs = tuple(r.strip() for r in msg.get_all("Requires-Dist") or [])
    refs, pos = [], 0
    for r in reqs:
        pos = line_of("Requires-Dist", r, pos) or pos
        refs.append(SourceRef(path, pos))
    rp = msg.get("Requires-Python")
    rp = rp.strip() if rp else None
    return _Metadata(
        version=(msg.get("Version") or "").strip(),
        requires_python=rp,
        requires_python_ref=SourceRef(path, line_of("Requires-Python", rp)) if rp else None,
        requires_dist=reqs,
        requires_dist_refs=tuple(refs),
    )


# --------------------------------------------------------------------------
# Python source helpers
# --------------------------------------------------------------------------


class _Sources:
    """Lazily parsed ``vllm/**/*.py`` of a release."""

    def __init__(self, files: _ReleaseFiles) -> None:
        self.files = files
        self.py = [n for n in files.names if n.startswith("vllm/") and n.endswith(".py")]
        self._py_set = set(self.py)
        self._trees: dict[str, ast.Module | None] = {}
        self._text: dict[str, str] = {}
        self.unparsed: list[str] = []

    def has(self, path: str) -> bool:
        return path in self._py_set

    def text(self, path: str) -> str:
        if path not in self._text:
            self._text[path] = self.files.read(path).decode("utf-8", errors="replace")
        return self._text[path]

    def tree(self, path: str) -> ast.Module | None:
        if path not in self._trees:
            tree = None
            if self.has(path):
                try:
                    tree = ast.parse(self.text(path), filename=path)
                except (SyntaxError, ValueError):
                    self.unparsed.append(path)
            self._trees[path] = tree
        return self._trees[path]

    def grep(self, needle: str, *, ignore_case: bool = False) -> Iterator[str]:
        """Python files whose text contains ``needle``."""
        for path in self.py:
            text = self.text(path)
            if (needle.lower() in text.lower()) if ignore_case else (needle in text):
                yield path

    def config_files(self) -> list[str]:
        """``vllm/config.py`` and ``vllm/config/**.py``."""
        return [p for p in self.py if p == "vllm/config.py" or p.startswith("vllm/config/")]


def _const_str(node: ast.AST | None, holes: bool = False) -> str | None:
    """Value of a string expression made of literals, implicit/explicit ``+``
    concatenation and, with ``holes``, f-strings (placeholders as ``{...}``)."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        left, right = _const_str(node.left, holes), _const_str(node.right, holes)
        return None if left is None or right is None else left + right
    if holes and isinstance(node, ast.JoinedStr):
        parts = []
        for v in node.values:
            s = _const_str(v, holes)
            parts.append("{...}" if s is None else s)
        return "".join(parts)
    return None


def _str_elements(node: ast.AST | None) -> list[tuple[str, int]]:
    """``(value, line)`` of the string constants of a Literal[...] subscript,
    a list/tuple/set literal, or a dict literal's keys."""
    if isinstance(node, ast.Subscript):
        node = node.slice
    items: list[ast.expr | None]
    if isinstance(node, ast.Dict):
        items = list(node.keys)
    elif isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        items = list(node.elts)
    else:
        items = [node] if isinstance(node, ast.expr) else []
    return [(k.value, k.lineno) for k in items if isinstance(k, ast.Constant) and isinstance(k.value, str)]


def _top_level(body: list[ast.stmt]) -> Iterator[ast.stmt]:
    """Statements of a module/class body, descending into ``if``/``try``
    blocks (``if TYPE_CHECKING: ... else: ...`` style)."""
    for stmt in body:
        if isinstance(stmt, ast.If):
            yield from _top_level(stmt.body)
            yield from _top_level(stmt.orelse)
        elif isinstance(stmt, ast.Try):
            yield from _top_level(stmt.body)
            for h in stmt.handlers:
                yield from _top_level(h.body)
            yield from _top_level(stmt.orelse)
        else:
            yield stmt


def _name_of(node: ast.AST) -> str:
    """Last dotted component of a Name/Attribute/Call expression, else ''."""
    if isinstance(node, ast.Call):
        node = node.func
    if isinstance(node, ast.Attribute):
        return node.attr
    if isinstance(node, ast.Name):
        return node.id
    return ""


def _add(out: dict[str, SourceRef], name: str, ref: SourceRef) -> None:
    if name not in out or ref < out[name]:
        out[name] = ref


# --------------------------------------------------------------------------
# Name resolution across vllm modules
# --------------------------------------------------------------------------


@dataclass(frozen=True)
class _Def:
    """A resolved top-level definition: a ClassDef, FunctionDef, assigned
    value expression, or a whole module (``ast.Module``), and its file.
    ``node`` is typed ``Any``: callers check the node kind they need."""

    path: str
    node: Any


class _Resolver:
    """Top-level symbols of ``vllm`` modules, following ``import`` and
    ``from ... import`` (absolute and relative) re-exports."""

    def __init__(self, src: _Sources) -> None:
        self.src = src
        self._symbols: dict[str, dict[str, tuple]] = {}

    def module_path(self, module: str) -> str | None:
        """File of dotted ``module`` (``pkg/__init__.py`` for a package)."""
        base = module.replace(".", "/")
        return next((c for c in (base + ".py", base + "/__init__.py") if self.src.has(c)), None)

    def _symbols_of(self, path: str) -> dict[str, tuple]:
        if path in self._symbols:
            return self._symbols[path]
        table: dict[str, tuple] = {}
        self._symbols[path] = table
        tree = self.src.tree(path)
        package = path[:-3].split("/")
        package = package[:-1]  # a module's package; __init__'s own package
        for stmt in _top_level(tree.body if tree else []):
            if isinstance(stmt, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
                table.setdefault(stmt.name, ("node", stmt))
            elif isinstance(stmt, ast.Assign):
                for t in stmt.targets:
                    if isinstance(t, ast.Name):
                        table.setdefault(t.id, ("node", stmt.value))
            elif isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name) and stmt.value:
                table.setdefault(stmt.target.id, ("node", stmt.value))
            elif isinstance(stmt, ast.ImportFrom):
                parts = package[: len(package) - stmt.level + 1] if stmt.level else []
                module = ".".join(parts + ([stmt.module] if stmt.module else []))
                for alias in stmt.names:
                    table.setdefault(alias.asname or alias.name, ("from", module, alias.name))
            elif isinstance(stmt, ast.Import):
                for alias in stmt.names:
                    if alias.asname:
                        table.setdefault(alias.asname, ("module", alias.name))
        return table

    def lookup(self, path: str, name: str, depth: int = 0) -> _Def | None:
        """Definition that ``name`` denotes at the top level of ``path``."""
        entry = self._symbols_of(path).get(name) if depth < 12 else None
        if entry is None:
            return None
        if entry[0] == "node":
            return _Def(path, entry[1])
        if entry[0] == "module":
            return self._module_def(entry[1])
        module, orig = entry[1], entry[2]
        target = self.module_path(module)
        found = self.lookup(target, orig, depth + 1) if target else None
        return found or self._module_def(f"{module}.{orig}")

    def _module_def(self, module: str) -> _Def | None:
        path = self.module_path(module)
        tree = self.src.tree(path) if path else None
        return _Def(path, tree) if path and tree is not None else None

    def resolve(self, path: str, expr: ast.AST) -> _Def | None:
        """Definition of a ``Name`` or ``module.attr`` expression in ``path``."""
        if isinstance(expr, ast.Name):
            return self.lookup(path, expr.id)
        if isinstance(expr, ast.Attribute):
            base = self.resolve(path, expr.value)
            if base is not None and isinstance(base.node, ast.Module):
                return self.lookup(base.path, expr.attr)
        return None

    def mro(self, cls: _Def, _seen: frozenset = frozenset()) -> list[_Def]:
        """``cls`` and its resolvable base classes, depth first."""
        out = [cls]
        for base in cls.node.bases:
            found = self.resolve(cls.path, base)
            if found and isinstance(found.node, ast.ClassDef) and (found.path, found.node.name) not in _seen:
                out += self.mro(found, _seen | {(cls.path, cls.node.name)})
        return out

    def method(self, cls: _Def, name: str) -> _Def | None:
        """Method ``name`` of ``cls`` or of its first base defining it."""
        for c in self.mro(cls):
            for stmt in _top_level(c.node.body):
                if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)) and stmt.name == name:
                    return _Def(c.path, stmt)
        return None

    def is_enum(self, cls: _Def) -> bool:
        """Whether some base class is named ``*Enum``."""
        return any(_name_of(b).endswith("Enum") for c in self.mro(cls) for b in c.node.bases)

    def fields(self, cls: _Def) -> dict[str, _Field]:
        """Public fields of a class: annotated class attributes (ClassVar
        excluded; inherited ones first), or the ``__init__`` parameters of a
        class without annotated attributes (pre-dataclass configs)."""
        out: dict[str, _Field] = {}
        chain = self.mro(cls)
        for c in reversed(chain):
            for stmt in _top_level(c.node.body):
                if (
                    isinstance(stmt, ast.AnnAssign)
                    and isinstance(stmt.target, ast.Name)
                    and not _is_classvar(stmt.annotation)
                ):
                    out[stmt.target.id] = _Field(
                        stmt.target.id, stmt.annotation, SourceRef(c.path, stmt.lineno)
                    )
        if not out:
            init = self.method(cls, "__init__")
            if init is not None:
                args = init.node.args
                params = args.posonlyargs + args.args + args.kwonlyargs
                for a in params[1:] if params and params[0].arg == "self" else params:
                    out[a.arg] = _Field(a.arg, a.annotation, SourceRef(init.path, a.lineno))
        return {k: v for k, v in out.items() if not k.startswith("_")}

    def union_members(self, path: str, ann: ast.AST | None, depth: int = 0) -> set[str]:
        """Flattened member names of a type annotation read in ``path``:
        ``Optional``/``Union``/``|``/``Annotated``/``SkipValidation`` are
        expanded, aliases resolved through imports, string annotations
        parsed; ``None`` is ``"None"``, generics give their origin
        (``list[int]`` -> ``"list"``)."""
        if ann is None or depth > 10:
            return set()
        if isinstance(ann, ast.Constant):
            if ann.value is None:
                return {"None"}
            if isinstance(ann.value, str):
                try:
                    return self.union_members(path, ast.parse(ann.value, mode="eval").body, depth + 1)
                except SyntaxError:
                    return set()
            return set()
        if isinstance(ann, ast.BinOp) and isinstance(ann.op, ast.BitOr):
            return self.union_members(path, ann.left, depth + 1) | self.union_members(
                path, ann.right, depth + 1
            )
        if isinstance(ann, ast.Subscript):
            origin = _name_of(ann.value)
            args = ann.slice.elts if isinstance(ann.slice, ast.Tuple) else [ann.slice]
            if origin == "Optional":
                return self.union_members(path, args[0], depth + 1) | {"None"}
            if origin == "Union":
                return set().union(*(self.union_members(path, a, depth + 1) for a in args))
            if origin in _TRANSPARENT_WRAPPERS:
                return self.union_members(path, args[0], depth + 1)
            return {origin}
        found = self.resolve(path, ann) if isinstance(ann, (ast.Name, ast.Attribute)) else None
        if found is not None and not isinstance(found.node, (ast.ClassDef, ast.FunctionDef, ast.Module)):
            resolved = self.union_members(found.path, found.node, depth + 1)
            if resolved:
                return resolved
        name = _name_of(ann)
        return {name} if name else set()

    def top_classes(self, paths: Iterable[str]) -> Iterator[_Def]:
        """Top-level classes defined in ``paths``."""
        for path in paths:
            tree = self.src.tree(path)
            for stmt in _top_level(tree.body if tree else []):
                if isinstance(stmt, ast.ClassDef):
                    yield _Def(path, stmt)


@dataclass(frozen=True)
class _Field:
    name: str
    annotation: ast.AST | None
    ref: SourceRef


#: Subscripted annotations that stand for their first argument
#: (``SkipValidation[X]`` is pydantic's ``Annotated[X, SkipValidation()]``).
_TRANSPARENT_WRAPPERS = frozenset({"Annotated", "SkipValidation", "InitVar", "Final"})


def _is_initvar(ann: ast.AST | None) -> bool:
    return isinstance(ann, ast.Subscript) and _name_of(ann.value) == "InitVar"


def _is_classvar(ann: ast.AST) -> bool:
    if isinstance(ann, ast.Subscript):
        ann = ann.value
    return _name_of(ann) == "ClassVar"


# --------------------------------------------------------------------------
# CLI flags
# --------------------------------------------------------------------------

#: Files that may define the ``vllm serve`` subparser: ``vllm/scripts.py``
#: (0.6-0.7, with ``add_parser("serve", ...)``) and
#: ``vllm/entrypoints/cli/serve.py`` (0.8+, any ``add_parser`` call).
_SERVE_ENTRY_FILES = ("vllm/entrypoints/cli/serve.py", "vllm/scripts.py")


#: Where ``FlexibleArgumentParser`` lives, newest layout first.
_FLEXIBLE_PARSER_FILES = ("vllm/utils/argparse_utils.py", "vllm/utils/__init__.py", "vllm/utils.py")
_PREPROCESSED_FLAG = re.compile(r"-[A-Za-z]|--[a-z][a-z0-9-]*[a-z0-9]")


@dataclass(frozen=True)
class _KwargsSemantics:
    """What ``get_kwargs(ConfigClass)`` of a release does with bool fields
    (``vllm/engine/arg_utils.py``): since 0.8.5 it sets
    ``action=argparse.BooleanOptionalAction`` (so ``--no-x`` exists), except,
    in later releases, for ``bool | str | None`` fields."""

    bool_optional: bool
    bool_str_none_excluded: bool


def _kwargs_semantics(src: _Sources) -> _KwargsSemantics:
    tree = src.tree("vllm/engine/arg_utils.py")
    bodies = [
        n
        for n in (ast.walk(tree) if tree else ())
        if isinstance(n, ast.FunctionDef) and n.name in ("get_kwargs", "_compute_kwargs")
    ]
    nodes = [n for b in bodies for n in ast.walk(b)]
    bool_optional = any(
        isinstance(n, (ast.Attribute, ast.Name)) and _name_of(n) == "BooleanOptionalAction" for n in nodes
    )
    excluded = any(
        isinstance(n, ast.Set) and {_name_of(e) for e in n.elts} >= {"bool", "str", "type"} for n in nodes
    )
    return _KwargsSemantics(bool_optional, excluded)


@dataclass(frozen=True)
class _Scope:
    """A function to scan: ``func`` (a _Def), the class ``cls`` is bound to
    (for classmethods reached as ``SomeClass.add_cli_args``), and, for the
    function that creates the serve subparser, the parser variable names
    whose calls count (None: every add_argument call counts)."""

    func: _Def
    owner: _Def | None
    parser_vars: frozenset[str] | None


class _CliCollector:
    """Collects ``vllm serve`` option strings by walking the parser-building
    code from the serve subparser (see ``_SERVE_ENTRY_FILES``) through every
    vllm function it hands the parser to (``make_arg_parser(parser)``,
    ``AsyncEngineArgs.add_cli_args(parser)``, ``FrontendArgs.add_cli_args``,
    ``EngineArgs.add_cli_args``, wherever the release defines them).

    Three shapes of ``add_argument`` are understood, in any mix:

    1. ``parser.add_argument("--foo", "-f", ..., action=argparse.BooleanOptionalAction)``
       (literal option strings, also bound by ``for arg in ["--a", "--b"]``
       loops; 0.6-0.8 style, and the odd flag later);
    2. ``group.add_argument("--foo", **cfg_kwargs["foo"])`` where
       ``cfg_kwargs = get_kwargs(SomeConfig)`` (0.8.5+): ``--no-foo`` is added
       when the field's annotation contains ``bool`` and get_kwargs turns bool
       fields into BooleanOptionalAction (``**{**cfg_kwargs["foo"], ...}``
       dict splats and ``x = cfg_kwargs["foo"]`` aliases are followed, an
       explicit ``action=`` wins);
    3. ``for key, value in kw.items(): group.add_argument(f"--{key.replace('_', '-')}", **value)``
       where ``kw = get_kwargs(FrontendArgs)`` or ``get_kwargs(cls)`` (the
       class the method was reached through): one flag per dataclass field
       not removed with ``del kw["field"]``; aliases set with
       ``kw["field"]["flags"] = [...]`` and action overrides set with
       ``kw["field"]["action"] = ...`` in the class's methods are honoured.
    """

    def __init__(self, src: _Sources, resolver: _Resolver) -> None:
        self.src = src
        self.resolver = resolver
        self.sem = _kwargs_semantics(src)
        self.flags: dict[str, SourceRef] = {}
        self.deprecated: list[tuple[str, str, SourceRef]] = []
        self.scanned: list[str] = []

    def collect(self) -> dict[str, SourceRef]:
        """Scan from the serve entry point; returns flag -> SourceRef."""
        seen: set[tuple] = set()
        todo = list(self._entries())
        while todo:
            scope = todo.pop()
            key = (scope.func.path, scope.func.node.lineno, scope.owner.node.name if scope.owner else None)
            if key in seen:
                continue
            seen.add(key)
            self.scanned.append(f"{scope.func.path}:{scope.func.node.name}")
            todo.extend(_FunctionScan(self, scope).run())
        self._preprocessed_flags()
        return self.flags

    def _preprocessed_flags(self) -> None:
        """Spellings that ``FlexibleArgumentParser`` rewrites before argparse
        sees them (``-O3`` -> ``--optimization-level 3`` since 0.12): flag
        literals compared with ``==`` or ``startswith`` in that class."""
        for path in _FLEXIBLE_PARSER_FILES:
            found = self.resolver.lookup(path, "FlexibleArgumentParser") if self.src.has(path) else None
            if found is None or not isinstance(found.node, ast.ClassDef) or found.path != path:
                continue
            for node in ast.walk(found.node):
                if isinstance(node, ast.Compare) and any(isinstance(op, ast.Eq) for op in node.ops):
                    candidates = [node.left, *node.comparators]
                elif isinstance(node, ast.Call) and _name_of(node.func) == "startswith":
                    candidates = list(node.args)
                else:
                    continue
                for c in candidates:
                    flag = _const_str(c)
                    if (
                        flag
                        and _PREPROCESSED_FLAG.fullmatch(flag)
                        and flag not in self.flags
                        and flag != "--help"
                    ):
                        self.flags[flag] = SourceRef(path, c.lineno)
            return

    def _entries(self) -> list[_Scope]:
        """The function(s) creating the serve subparser, in the first of
        ``_SERVE_ENTRY_FILES`` that has one."""
        for path in _SERVE_ENTRY_FILES:
            tree = self.src.tree(path)
            entries = []
            for owner, func in _functions(path, tree) if tree else ():
                for node in ast.walk(func):
                    if not (
                        isinstance(node, ast.Assign)
                        and isinstance(node.value, ast.Call)
                        and _name_of(node.value) == "add_parser"
                        and isinstance(node.targets[0], ast.Name)
                    ):
                        continue
                    first = _const_str(node.value.args[0]) if node.value.args else None
                    if path == "vllm/scripts.py" and first != "serve":
                        continue
                    entries.append(_Scope(_Def(path, func), owner, frozenset({node.targets[0].id})))
            if entries:
                return entries
        return []

    def add_flag(self, flag: str, ref: SourceRef, bool_optional: bool) -> None:
        """Record ``flag`` (and ``--no-`` form for BooleanOptionalAction);
        long options are stored dashed (FlexibleArgumentParser accepts
        ``--foo_bar`` and ``--foo-bar`` alike)."""
        if flag.startswith("--"):
            flag = "--" + flag[2:].replace("_", "-")
        _add(self.flags, flag, ref)
        if bool_optional and flag.startswith("--"):
            _add(self.flags, "--no-" + flag[2:], ref)

    def field_bool_optional(self, fld: _Field) -> bool:
        """Whether get_kwargs makes dataclass field ``fld`` a
        BooleanOptionalAction flag."""
        if not self.sem.bool_optional:
            return False
        members = self.resolver.union_members(fld.ref.path, fld.annotation)
        if "bool" not in members:
            return False
        return not (self.sem.bool_str_none_excluded and members == {"bool", "str", "None"})


def _functions(
    path: str, tree: ast.Module
) -> Iterator[tuple[_Def | None, ast.FunctionDef | ast.AsyncFunctionDef]]:
    """Top-level functions and methods of top-level classes (with the owning
    class); nested functions are part of their enclosing function."""
    for stmt in _top_level(tree.body):
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
            yield None, stmt
        elif isinstance(stmt, ast.ClassDef):
            for sub in _top_level(stmt.body):
                if isinstance(sub, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    yield _Def(path, stmt), sub


def _literal_loop(node: ast.For) -> dict[str, list[str]] | None:
    """``for a, b in [("--x", str), ...]`` / ``for a in ("--x", "--y")``:
    the string values each loop variable takes."""
    if not isinstance(node.iter, (ast.List, ast.Tuple)):
        return None
    target = node.target
    names = [target] if isinstance(target, ast.Name) else list(getattr(target, "elts", []))
    if not names or not all(isinstance(n, ast.Name) for n in names):
        return None
    out: dict[str, list[str]] = {n.id: [] for n in names}
    for elt in node.iter.elts:
        values = [elt] if isinstance(target, ast.Name) else list(getattr(elt, "elts", []))
        for name, value in zip(names, values, strict=False):
            s = _const_str(value)
            if s is not None:
                out[name.id].append(s)
    return out


def _nested_subscript(node: ast.AST) -> tuple[str, list[str]] | None:
    """``v["a"]["b"]`` -> ("v", ["a", "b"]); None for anything else."""
    keys: list[str] = []
    while isinstance(node, ast.Subscript):
        if not (isinstance(node.slice, ast.Constant) and isinstance(node.slice.value, str)):
            return None
        keys.insert(0, node.slice.value)
        node = node.value
    if isinstance(node, ast.Name) and keys:
        return node.id, keys
    return None


#: Help texts that mark their flag deprecated.
_DEPRECATED_HELP = re.compile(
    r"\[deprecated\]|\(deprecated|^deprecated|\b(?:is|are|has been|have been|now)\s+deprecated",
    re.IGNORECASE,
)


def _is_boolean_optional_action(node: ast.AST | None) -> bool:
    return node is not None and _name_of(node) == "BooleanOptionalAction"


class _FunctionScan:
    """One function of the serve parser code (see :class:`_CliCollector`)."""

    def __init__(self, coll: _CliCollector, scope: _Scope) -> None:
        self.coll, self.scope = coll, scope
        self.path = scope.func.path
        self.func = scope.func.node
        self.resolver = coll.resolver
        self.kw_vars: dict[str, _Def] = {}  # kw = get_kwargs(Cls) -> Cls
        self.deleted: dict[str, set[str]] = {}  # del kw["field"] here
        self.class_deleted: set[str] = set()  # del kw["field"] in class methods
        self.splat_alias: dict[str, ast.AST] = {}  # x = kw["field"]
        self.field_alias: dict[str, tuple[_Def, str]] = {}  # x = get_kwargs(Cls)["field"]
        self.parser_vars = set(scope.parser_vars or ())
        self.callees: list[_Scope] = []
        self.overrides: dict[tuple[str, str], ast.AST] = {}  # (field, "action"|"flags")

    # -- pass 1 ------------------------------------------------------------

    def _class_arg(self, arg: ast.AST) -> _Def | None:
        if isinstance(arg, ast.Name) and arg.id == "cls":
            return self.scope.owner
        found = self.resolver.resolve(self.path, arg)
        return found if found and isinstance(found.node, ast.ClassDef) else None

    def _collect_bindings(self) -> None:
        for node in ast.walk(self.func):
            if (
                isinstance(node, ast.Assign)
                and len(node.targets) == 1
                and isinstance(node.targets[0], ast.Name)
            ):
                target, value = node.targets[0].id, node.value
                if (
                    isinstance(value, ast.Call)
                    and _name_of(value) in ("get_kwargs", "_compute_kwargs")
                    and value.args
                ):
                    cls = self._class_arg(value.args[0])
                    if cls is not None:
                        self.kw_vars[target] = cls
                elif _nested_subscript(value) is not None:
                    self.splat_alias[target] = value
                elif (
                    isinstance(value, ast.Subscript)
                    and isinstance(value.value, ast.Call)
                    and _name_of(value.value) in ("get_kwargs", "_compute_kwargs")
                    and value.value.args
                    and isinstance(value.slice, ast.Constant)
                ):
                    # x = get_kwargs(Cls)["field"]
                    cls = self._class_arg(value.value.args[0])
                    if cls is not None:
                        self.field_alias[target] = (cls, str(value.slice.value))
                elif isinstance(value, ast.Call):
                    src_var = next(
                        (a.id for a in value.args if isinstance(a, ast.Name) and a.id in self.kw_vars), None
                    )
                    if src_var:
                        self.kw_vars[target] = self.kw_vars[src_var]
            elif isinstance(node, ast.Delete):
                for t in node.targets:
                    key = _nested_subscript(t)
                    if key and len(key[1]) == 1:
                        self.deleted.setdefault(key[0], set()).add(key[1][0])
        # kw["field"]["action" | "flags"] = ... and del kw["field"] in the
        # methods of the bound class (e.g. _customize_cli_kwargs)
        bodies = [self.func] + (
            [c.node for c in self.resolver.mro(self.scope.owner)] if self.scope.owner else []
        )
        for body in bodies:
            for node in ast.walk(body):
                if isinstance(node, ast.Assign):
                    for t in node.targets:
                        key = _nested_subscript(t)
                        if key and len(key[1]) == 2 and key[1][1] in ("action", "flags"):
                            self.overrides.setdefault((key[1][0], key[1][1]), node.value)
                elif isinstance(node, ast.Delete) and body is not self.func:
                    for t in node.targets:
                        key = _nested_subscript(t)
                        if key and len(key[1]) == 1:
                            self.class_deleted.add(key[1][0])

    # -- pass 2 ------------------------------------------------------------

    def run(self) -> list[_Scope]:
        """Record this function's flags; return the functions it hands the
        parser to."""
        self._collect_bindings()
        if self.scope.parser_vars is None:
            args = self.func.args
            self.parser_vars = {a.arg for a in args.posonlyargs + args.args + args.kwonlyargs} - {
                "self",
                "cls",
            }
        self._visit(self.func, ())
        return self.callees

    def _visit(self, node: ast.AST, loops: tuple) -> None:
        if isinstance(node, ast.For):
            loop = self._items_loop(node) or _literal_loop(node)
            inner = loops + (loop,) if loop else loops
            for stmt in node.body + node.orelse:
                self._visit(stmt, inner)
            return
        if (
            isinstance(node, ast.Assign)
            and isinstance(node.value, ast.Call)
            and self._uses_parser(node.value)
        ):
            # parser = make_arg_parser(parser); group = parser.add_argument_group(...)
            self.parser_vars.update(t.id for t in node.targets if isinstance(t, ast.Name))
        if isinstance(node, ast.Call):
            if _name_of(node.func) == "add_argument":
                self._add_argument(node, loops)
            elif self._uses_parser(node):
                self._follow(node)
        for child in ast.iter_child_nodes(node):
            self._visit(child, loops)

    def _uses_parser(self, call: ast.Call) -> bool:
        receiver = call.func.value if isinstance(call.func, ast.Attribute) else None
        names = [a for a in call.args if isinstance(a, ast.Name)]
        if isinstance(receiver, ast.Name):
            names.append(receiver)
        return any(n.id in self.parser_vars for n in names)

    def _follow(self, call: ast.Call) -> None:
        """Queue the vllm function or method a parser is handed to."""
        func = call.func
        if (
            isinstance(func, ast.Attribute)
            and isinstance(func.value, ast.Call)
            and _name_of(func.value) == "super"
        ):
            owner = self.scope.owner
            if owner is not None:
                for base in self.resolver.mro(owner)[1:]:
                    method = self.resolver.method(base, func.attr)
                    if method:
                        self.callees.append(_Scope(method, owner, None))
                        break
            return
        if isinstance(func, ast.Attribute):
            target = self._class_arg(func.value)
            if target is not None:
                method = self.resolver.method(target, func.attr)
                if method:
                    self.callees.append(_Scope(method, target, None))
                return
        found = self.resolver.resolve(self.path, func)
        if found and isinstance(found.node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            self.callees.append(_Scope(found, None, None))

    def _items_loop(self, node: ast.For) -> tuple[str, str, str] | None:
        """``for key, value in kw.items()`` over a kwargs variable:
        ``(key, value, kw)``."""
        it = node.iter
        if (
            isinstance(it, ast.Call)
            and isinstance(it.func, ast.Attribute)
            and it.func.attr == "items"
            and isinstance(it.func.value, ast.Name)
            and it.func.value.id in self.kw_vars
            and isinstance(node.target, ast.Tuple)
            and len(node.target.elts) == 2
        ):
            key, value = node.target.elts
            if isinstance(key, ast.Name) and isinstance(value, ast.Name):
                return key.id, value.id, it.func.value.id
        return None

    def _option_strings(self, arg: ast.AST, loops: tuple) -> list[str]:
        """Option strings a positional add_argument argument stands for:
        a literal, or a name bound by an enclosing loop over literals."""
        s = _const_str(arg)
        if s is None and isinstance(arg, ast.Name):
            for loop in reversed(loops):
                if isinstance(loop, dict) and arg.id in loop:
                    return [v for v in loop[arg.id] if v.startswith("-")]
        return [s] if s and s.startswith("-") else []

    def _add_argument(self, call: ast.Call, loops: tuple) -> None:
        receiver = call.func.value if isinstance(call.func, ast.Attribute) else None
        if not (isinstance(receiver, ast.Name) and receiver.id in self.parser_vars):
            return
        ref = SourceRef(self.path, call.lineno)
        keywords = {k.arg: k.value for k in call.keywords if k.arg}
        literal = [flag for a in call.args for flag in self._option_strings(a, loops)]
        items_loop = next(
            (
                loop
                for a in call.args
                if _const_str(a) is None and not isinstance(a, ast.Starred)
                for loop in loops
                if isinstance(loop, tuple)
                and any(isinstance(n, ast.Name) and n.id == loop[0] for n in ast.walk(a))
            ),
            None,
        )
        if literal:
            bool_opt = self._bool_optional(keywords.get("action"), call)
            for flag in literal:
                self.coll.add_flag(flag, ref, bool_opt)
            dep = keywords.get("deprecated")
            help_text = " ".join((_const_str(keywords.get("help"), holes=True) or "").split())
            if (isinstance(dep, ast.Constant) and dep.value is True) or _DEPRECATED_HELP.search(help_text):
                self.coll.deprecated.extend(
                    (flag, help_text, ref) for flag in literal if flag.startswith("--")
                )
        if items_loop is not None:
            self._add_loop_flags(items_loop[2], keywords)

    def _add_loop_flags(self, var: str, keywords: dict) -> None:
        cls = self.kw_vars[var]
        for name, fld in self.resolver.fields(cls).items():
            if name in self.deleted.get(var, ()) or name in self.class_deleted or _is_initvar(fld.annotation):
                continue
            explicit = keywords.get("action")
            if explicit is not None:
                bool_opt = _is_boolean_optional_action(explicit)
            else:
                bool_opt = self._field_bool_optional(cls, name)
            self.coll.add_flag("--" + name.replace("_", "-"), fld.ref, bool_opt)
            for alias, _line in _str_elements(self.overrides.get((name, "flags"))):
                self.coll.add_flag(alias, fld.ref, False)

    def _field_bool_optional(self, cls: _Def, name: str) -> bool:
        override = self.overrides.get((name, "action"))
        if override is not None:
            return _is_boolean_optional_action(override)
        fld = self.resolver.fields(cls).get(name)
        return fld is not None and self.coll.field_bool_optional(fld)

    def _bool_optional(self, action: ast.AST | None, call: ast.Call) -> bool:
        if action is not None:
            return _is_boolean_optional_action(action)
        for kw in call.keywords:
            if kw.arg is None:
                result = self._splat_bool_optional(kw.value)
                if result is not None:
                    return result
        return False

    def _splat_bool_optional(self, node: ast.AST) -> bool | None:
        """BooleanOptionalAction-ness of a ``**expr`` kwargs splat; None if
        ``expr`` says nothing about the action."""
        if isinstance(node, ast.Dict):
            result = None
            for k, v in zip(node.keys, node.values, strict=True):
                if k is None:
                    inner = self._splat_bool_optional(v)
                    result = inner if inner is not None else result
                elif isinstance(k, ast.Constant) and k.value == "action":
                    result = _is_boolean_optional_action(v)
            return result
        if isinstance(node, ast.Name) and node.id in self.splat_alias:
            return self._splat_bool_optional(self.splat_alias[node.id])
        if isinstance(node, ast.Name) and node.id in self.field_alias:
            return self._field_bool_optional(*self.field_alias[node.id])
        key = _nested_subscript(node)
        if key and len(key[1]) == 1 and key[0] in self.kw_vars:
            return self._field_bool_optional(self.kw_vars[key[0]], key[1][0])
        return None


# --------------------------------------------------------------------------
# Other categories
# --------------------------------------------------------------------------


def _class_fields(resolver: _Resolver, path: str, class_names: Iterable[str]) -> dict[str, SourceRef]:
    out: dict[str, SourceRef] = {}
    for cname in class_names:
        found = resolver.lookup(path, cname) if resolver.src.has(path) else None
        if found and isinstance(found.node, ast.ClassDef):
            for name, fld in resolver.fields(found).items():
                out.setdefault(name, fld.ref)
    return out


def _engine_args(resolver: _Resolver) -> dict[str, SourceRef]:
    return _class_fields(resolver, "vllm/engine/arg_utils.py", ("EngineArgs", "AsyncEngineArgs"))


def _sampling_params(resolver: _Resolver) -> dict[str, SourceRef]:
    return _class_fields(resolver, "vllm/sampling_params.py", ("SamplingParams",))


def _config_fields(resolver: _Resolver) -> dict[str, SourceRef]:
    out: dict[str, SourceRef] = {}
    for cls in resolver.top_classes(resolver.src.config_files()):
        cname = cls.node.name
        if not cname.endswith("Config") or resolver.is_enum(cls):
            continue
        for name, fld in resolver.fields(cls).items():
            out.setdefault(f"{cname}.{name}", fld.ref)
    return out


def _env_vars(src: _Sources) -> dict[str, SourceRef]:
    path = "vllm/envs.py"
    tree = src.tree(path)
    out: dict[str, SourceRef] = {}
    if tree is None:
        return out
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign):
            targets, value = list(node.targets), node.value
        elif isinstance(node, ast.AnnAssign) and node.value is not None:
            targets, value = [node.target], node.value
        else:
            continue
        for t in targets:
            if isinstance(t, ast.Name) and t.id == "environment_variables" and isinstance(value, ast.Dict):
                for name, line in _str_elements(value):
                    _add(out, name, SourceRef(path, line))
            key = _nested_subscript(t)
            if key and key[0] == "environment_variables" and len(key[1]) == 1:
                _add(out, key[1][0], SourceRef(path, t.lineno))
    return out


_METRIC = re.compile(r"vllm:[A-Za-z_][A-Za-z0-9_]*[A-Za-z0-9]")


def _metrics(src: _Sources) -> tuple[dict[str, SourceRef], list[tuple[str, str, SourceRef]]]:
    """Exposed metric names and deprecation notices of metrics.

    Every string literal (or ``+`` concatenation of literals) under ``vllm/``
    that is a whole ``vllm:<name>``; a name ending in ``_`` is a prefix, not
    a metric.  Names passed to a counter constructor (a call whose name
    contains "counter": ``Counter``, ``self._counter_cls``) are stored as
    prometheus_client exposes them, with a ``_total`` suffix.  A
    ``documentation=`` text saying "deprecated" marks its metric deprecated."""
    out: dict[str, SourceRef] = {}
    notices: list[tuple[str, str, SourceRef]] = []
    counter_families: set[str] = set()
    for path in src.grep("vllm:"):
        tree = src.tree(path)
        if tree is None:
            continue
        counter_nodes = _counter_name_nodes(tree)
        for call in ast.walk(tree):
            if not isinstance(call, ast.Call):
                continue
            keywords = {k.arg: k.value for k in call.keywords if k.arg}
            name_node = keywords.get("name", call.args[0] if call.args else None)
            name = _const_str(name_node)
            doc = " ".join((_const_str(keywords.get("documentation"), holes=True) or "").split())
            if name and _METRIC.fullmatch(name) and "deprecat" in doc.lower():
                notices.append(
                    (_exposed(name, id(name_node) in counter_nodes), doc, SourceRef(path, call.lineno))
                )
        for node in ast.walk(tree):
            if isinstance(node, (ast.Constant, ast.BinOp)):
                value = _const_str(node)
                if value and _METRIC.fullmatch(value):
                    exposed = _exposed(value, id(node) in counter_nodes)
                    if exposed != value:
                        counter_families.add(value)
                    _add(out, exposed, SourceRef(path, node.lineno))
    # a counter's family name (e.g. compared against in a metrics reader) is
    # not a separately exposed metric
    return {k: v for k, v in out.items() if k not in counter_families}, notices


def _exposed(name: str, counter: bool) -> str:
    """Metric name as prometheus_client exposes it (counters get ``_total``)."""
    return name + "_total" if counter and not name.endswith("_total") else name


def _counter_name_nodes(tree: ast.Module) -> set[int]:
    """ids of the string nodes naming counters: the ``name`` of a call whose
    callee name contains "counter" (``Counter``, ``self._counter_cls``; a
    module-level constant passed as ``name`` is followed), and
    the strings of a value assigned to a variable whose name contains
    "counter" (``counter_specs = [("vllm:x", "doc"), ...]`` fed to such a
    call in a loop)."""
    out: set[int] = set()
    constants = {
        t.id: stmt.value
        for stmt in _top_level(tree.body)
        if isinstance(stmt, ast.Assign)
        for t in stmt.targets
        if isinstance(t, ast.Name)
    }
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and "counter" in _name_of(node.func).lower():
            keywords = {k.arg: k.value for k in node.keywords if k.arg}
            name_node = keywords.get("name", node.args[0] if node.args else None)
            if isinstance(name_node, ast.Name) and name_node.id in constants:
                name_node = constants[name_node.id]  # NAME = "vllm:x"; Counter(name=NAME)
            if name_node is not None:
                out.add(id(name_node))
        elif isinstance(node, (ast.Assign, ast.AnnAssign)) and node.value is not None:
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            if any("counter" in _name_of(t).lower() for t in targets):
                out.update(id(n) for n in ast.walk(node.value) if not isinstance(n, ast.Call))
    return out


def _named_string_sets(resolver: _Resolver, path: str, names: Iterable[str]) -> dict[str, SourceRef]:
    """Strings of the module-level values ``names`` of ``path`` (a Literal,
    a list/tuple/set literal, or dict keys), imports followed."""
    out: dict[str, SourceRef] = {}
    for name in names:
        found = resolver.lookup(path, name) if resolver.src.has(path) else None
        if found is not None:
            for value, line in _str_elements(found.node):
                _add(out, value, SourceRef(found.path, line))
    return out


def _quantization_methods(resolver: _Resolver) -> dict[str, SourceRef]:
    return _named_string_sets(
        resolver,
        "vllm/model_executor/layers/quantization/__init__.py",
        ("QuantizationMethods", "QUANTIZATION_METHODS"),
    )


def _load_formats(resolver: _Resolver) -> dict[str, SourceRef]:
    out = _named_string_sets(
        resolver,
        "vllm/model_executor/model_loader/__init__.py",
        ("LoadFormats", "_LOAD_FORMAT_TO_MODEL_LOADER"),
    )
    for cls in resolver.top_classes(resolver.src.config_files()):
        if cls.node.name != "LoadFormat":
            continue
        for stmt in _top_level(cls.node.body):
            value = _const_str(stmt.value) if isinstance(stmt, ast.Assign) else None
            if value is not None:
                _add(out, value, SourceRef(cls.path, stmt.lineno))
    return out


def _architectures(resolver: _Resolver) -> dict[str, SourceRef]:
    for path in ("vllm/model_executor/models/registry.py", "vllm/model_executor/models/__init__.py"):
        if not resolver.src.has(path):
            continue
        root = resolver.lookup(path, "_VLLM_MODELS") or resolver.lookup(path, "_MODELS")
        if root is not None:
            out: dict[str, SourceRef] = {}
            _dict_keys(resolver, root, out, set())
            return out
    return {}


def _dict_keys(resolver: _Resolver, found: _Def, out: dict[str, SourceRef], seen: set) -> None:
    """String keys of a dict literal, following ``**NAME`` spreads of other
    module-level dicts."""
    if not isinstance(found.node, ast.Dict):
        return
    for k, v in zip(found.node.keys, found.node.values, strict=True):
        if k is None:
            inner = resolver.resolve(found.path, v) if isinstance(v, ast.Name) else _Def(found.path, v)
            if inner is not None and id(inner.node) not in seen:
                seen.add(id(inner.node))
                _dict_keys(resolver, inner, out, seen)
        elif isinstance(k, ast.Constant) and isinstance(k.value, str):
            _add(out, k.value, SourceRef(found.path, k.lineno))


def _modules(src: _Sources) -> dict[str, SourceRef]:
    out = {}
    for path in src.py:
        parts = path[:-3].split("/")
        if parts[-1] == "__init__":
            parts.pop()
        out[".".join(parts)] = SourceRef(path, 1)
    return out


# --------------------------------------------------------------------------
# Deprecations
# --------------------------------------------------------------------------

_TOKEN = r"(?:`([^`\n]+)`|'([^'\n]+)'|\"([^\"\n]+)\"|(-{1,2}[A-Za-z0-9][\w.-]*[\w]|[A-Za-z_][\w.:]*[\w]))"
_NEW_RE = re.compile(
    r"(?:\buse\b|\busing\b|replaced\s+(?:by|with)|renamed\s+to|in\s+favou?r\s+of|switch\s+to|migrate\s+to)"
    r"\s+(?:the\s+)?(?:new\s+)?(?:argument\s+|option\s+|flag\s+|parameter\s+|field\s+|variable\s+)?" + _TOKEN,
    re.IGNORECASE,
)
_OLD_RES = (
    re.compile(
        _TOKEN
        + r"(?:\s+(?:argument|option|flag|parameter|field|env(?:ironment)?\s+var(?:iable)?|variable|arg))?"
        r"\s+(?:is|are|has\s+been|have\s+been|was|were)\s+(?:now\s+)?(?:being\s+)?deprecated",
        re.IGNORECASE,
    ),
    re.compile(
        r"deprecated\s+(?:argument|option|flag|parameter|field|env(?:ironment)?\s+var(?:iable)?|variable)s?\s+"
        + _TOKEN,
        re.IGNORECASE,
    ),
)
_ENGLISH = {
    "this",
    "it",
    "that",
    "which",
    "the",
    "a",
    "an",
    "argument",
    "option",
    "flag",
    "parameter",
    "field",
    "value",
    "feature",
    "setting",
    "method",
    "function",
    "api",
    "mode",
    "support",
    "they",
    "these",
    "those",
    "there",
    "passing",
    "usage",
    "specifying",
}


def _token(m: re.Match, *, with_value: bool = False) -> tuple[str, bool] | None:
    """(token, was_quoted) of a _TOKEN match; None for plain English words
    and for quoted text that is not a single name.  ``with_value``: accept a
    quoted ```--flag value``` and keep the flag (for replacements; a
    deprecated ```--flag value``` deprecates a value, not the flag)."""
    quoted = next((g for g in m.groups()[:3] if g), None)
    tok = quoted if quoted else (m.groups()[3] or "").rstrip(".:")
    if with_value and quoted and tok.startswith("-"):
        tok = re.split(r"[\s=]", tok, maxsplit=1)[0]
    if not re.fullmatch(r"-{0,2}[A-Za-z_](?:[\w.:-]*\w)?", tok) or ".." in tok or tok.lower() in _ENGLISH:
        return None
    if not quoted and not re.search(r"[-_.]", tok):
        return None
    return tok, bool(quoted)


def _replacement(message: str) -> str | None:
    """The new spelling a deprecation message points to ("use X instead",
    "replaced by X", ...), looked for after the word "deprecated" first."""
    start = message.lower().find("deprecat")
    for text in (message[start:], message) if start > 0 else (message,):
        for m in _NEW_RE.finditer(text):
            tok = _token(m, with_value=True)
            if tok:
                return tok[0]
    return None


def _parse_deprecation(message: str) -> tuple[str, str | None] | None:
    """``(old, new)`` spellings named by a deprecation message (``new`` None
    when the message names no replacement); None when no old spelling is
    recognisable."""
    if "deprecat" not in message.lower():
        return None
    new = _replacement(message)
    for rx in _OLD_RES:
        for m in rx.finditer(message):
            old = _token(m)
            if old and old[0] != new:
                return old[0], new
    return None


@dataclass(frozen=True)
class _RawDeprecation:
    name: str
    message: str
    ref: SourceRef
    replacement: str | None
    structural: bool  # from the parser definition itself (always kept)


def _raw_deprecations(src: _Sources, structural: list[tuple[str, str, SourceRef]]) -> list[_RawDeprecation]:
    """``structural``: (name, text, ref) of definitions marked deprecated
    (``add_argument(deprecated=True)``, metric documentation), kept even
    without a replacement; plus every string literal saying "X is
    deprecated" with a recognisable X."""
    out = [_RawDeprecation(name, text, ref, _replacement(text), True) for name, text, ref in structural]
    for path in src.grep("deprecat", ignore_case=True):
        tree = src.tree(path)
        if tree is None:
            continue
        seen: set[int] = set()
        for node in ast.walk(tree):
            if id(node) in seen or not isinstance(node, (ast.Constant, ast.BinOp, ast.JoinedStr)):
                continue
            msg = _const_str(node, holes=True)
            if msg is None:
                continue
            seen.update(id(n) for n in ast.walk(node))
            msg = " ".join(msg.split())
            parsed = _parse_deprecation(msg)
            if parsed:
                out.append(_RawDeprecation(parsed[0], msg, SourceRef(path, node.lineno), parsed[1], False))
    return out


def _classify(name: str, sets: Mapping[str, Mapping[str, SourceRef]]) -> tuple[str, bool]:
    """``(kind, known)``: the category of a deprecated spelling and whether
    the release defines it."""
    dashed = "--" + name.lstrip("-").replace("_", "-")
    snake = name.lstrip("-").replace("-", "_")
    if name.startswith("-"):
        return "cli_flag", name in sets["cli_flags"] or dashed in sets["cli_flags"]
    if name.startswith("vllm:"):
        return "metric", name in sets["metrics"]
    if name in sets["env_vars"]:
        return "env_var", True
    if re.fullmatch(r"VLLM_[A-Z0-9_]+", name):
        return "env_var", False
    for kind, cat in (("engine_arg", "engine_args"), ("sampling_param", "sampling_params")):
        if snake in sets[cat]:
            return kind, True
    if name in sets["config_fields"] or any(k.endswith("." + snake) for k in sets["config_fields"]):
        return "config_field", True
    if name in sets["modules"]:
        return "module", True
    return "name", False


def _deprecations(
    src: _Sources, structural: list[tuple[str, str, SourceRef]], sets: Mapping[str, Mapping[str, SourceRef]]
) -> tuple[Deprecation, ...]:
    """Deprecations that name a replacement, or that come from a definition
    marked deprecated, or whose old spelling the release defines."""
    found = set()
    for raw in _raw_deprecations(src, structural):
        kind, known = _classify(raw.name, sets)
        if raw.replacement or raw.structural or known:
            found.add(Deprecation(kind, raw.name, raw.message, raw.ref, raw.replacement))
    return tuple(sorted(found, key=lambda d: (d.ref, d.name)))


# --------------------------------------------------------------------------
# Entry point
# --------------------------------------------------------------------------


def extract_surface(path: str | os.PathLike) -> ReleaseSurface:
    """Extract the :class:`ReleaseSurface` of the vLLM release at ``path``.

    ``path`` is a ``.whl`` file (read with :mod:`zipfile`, only the members
    needed), an unpacked wheel directory, or a site-packages directory with
    ``vllm/`` and exactly one ``vllm-*.dist-info``.  Nothing is imported."""
    files = _open_release(path)
    try:
        meta = _read_metadata(files)
        cuda, cuda_ref = _cuda_major(files)
        src = _Sources(files)
        resolver = _Resolver(src)
        cli = _CliCollector(src, resolver)
        flags = cli.collect()
        metrics, metric_notices = _metrics(src)
        sets: dict[str, Mapping[str, SourceRef]] = {
            "cli_flags": flags,
            "engine_args": _engine_args(resolver),
            "config_fields": _config_fields(resolver),
            "sampling_params": _sampling_params(resolver),
            "env_vars": _env_vars(src),
            "metrics": metrics,
            "quantization_methods": _quantization_methods(resolver),
            "load_formats": _load_formats(resolver),
            "architectures": _architectures(resolver),
            "modules": _modules(src),
        }
        return ReleaseSurface(
            version=meta.version,
            requires_python=meta.requires_python,
            requires_dist=meta.requires_dist,
            requires_dist_refs=meta.requires_dist_refs,
            requires_python_ref=meta.requires_python_ref,
            cuda_major=cuda,
            cuda_ref=cuda_ref,
            deprecations=_deprecations(src, cli.deprecated + metric_notices, sets),
            unparsed=tuple(sorted(src.unparsed)),
            **sets,
        )
    finally:
        files.close()
