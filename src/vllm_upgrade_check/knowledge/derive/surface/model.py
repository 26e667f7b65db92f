"""The public data model of a release surface: :class:`ReleaseSurface` and the
:class:`SourceRef`, :class:`Deprecation` and :class:`FlagArity` records it
holds, with their JSON forms.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

__all__ = [
    "NAME_CATEGORIES",
    "TAKES_VALUES",
    "Deprecation",
    "FlagArity",
    "ReleaseSurface",
    "SourceRef",
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


#: The fixed spellings of :attr:`FlagArity.takes` (besides ``str(N)`` for
#: ``nargs=N`` and None for unknown).
TAKES_VALUES: tuple[str, ...] = ("0", "1", "?", "+", "*")


@dataclass(frozen=True)
class FlagArity:
    """How argparse parses one ``vllm serve`` option.

    ``takes`` is how many argv words follow the option: ``"0"``
    (``store_true``/``store_false``/``store_const``/``count``/``help``/
    ``version``, ``BooleanOptionalAction`` and its ``--no-`` form), ``"1"``
    (a plain ``store``/``append`` without ``nargs``, whatever ``type=``),
    ``"?"``, ``"+"``, ``"*"`` (that ``nargs``), ``"N"`` (``nargs=N``), or
    None when it could not be read from the source (never guessed).
    ``choices`` are the words argparse accepts as values, when they are
    statically known (literal ``choices=``, a ``Literal[...]`` that
    ``get_kwargs`` turns into choices), else None."""

    takes: str | None
    choices: tuple[str, ...] | None = None

    def to_json(self) -> dict:
        """Return ``{"takes": ..., "choices": [...]}`` (``choices`` only when known)."""
        out: dict = {"takes": self.takes}
        if self.choices is not None:
            out["choices"] = list(self.choices)
        return out

    @classmethod
    def from_json(cls, data: dict) -> FlagArity:
        """Inverse of :meth:`to_json`."""
        choices = data.get("choices")
        return cls(data.get("takes"), None if choices is None else tuple(str(c) for c in choices))


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
      ...; see :func:`vllm_upgrade_check.parsing.elf.cuda_major_of`) in the ELF ``DT_NEEDED`` entries of ``vllm/_C.*.so``
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
    - ``cli_arity``: :class:`FlagArity` of every ``cli_flags`` option (how
      many argv words it consumes and its choices), read from the
      ``add_argument`` keywords and, for ``**get_kwargs(Config)["field"]``
      splats, by emulating that release's ``get_kwargs`` on the field's
      annotation (see :class:`_KwargsModel`).
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
    cli_arity: Mapping[str, FlagArity] = field(default_factory=dict)

    def __post_init__(self) -> None:
        for name in NAME_CATEGORIES:
            object.__setattr__(self, name, _frozen_map(getattr(self, name)))
        object.__setattr__(self, "cli_arity", MappingProxyType(dict(sorted(dict(self.cli_arity).items()))))

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
        out["cli_arity"] = {k: v.to_json() for k, v in self.cli_arity.items()}
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
            cli_arity={k: FlagArity.from_json(v) for k, v in data.get("cli_arity", {}).items()},
            **kwargs,
        )


def _opt_ref_json(ref: SourceRef | None) -> list | None:
    return ref.to_json() if ref else None


def _opt_ref(data: list | None) -> SourceRef | None:
    return SourceRef.from_json(data) if data else None
