"""What each vLLM release exposes, name by name: the release surfaces read from the wheels.

``data/surface/history.json`` and ``data/surface/modules.json`` (written by
``scripts/gen_surface_data.py``) hold, for each kind of name, every name some release has and
the runs of releases that have it:

- ``engine_args``: the fields of ``EngineArgs`` (``vllm/engine/arg_utils.py``), which
  ``LLM(...)``, ``EngineArgs(...)`` and ``AsyncEngineArgs(...)`` take as keywords;
- ``llm_params`` / ``llm_ignored``: the keywords ``LLM.__init__`` names
  (``vllm/entrypoints/llm.py``), and those it pops from ``**kwargs`` and ignores with a
  warning (``swap_space`` in 0.18.0-0.25.1); every other keyword goes to ``EngineArgs``;
- ``sampling_params``: the fields of ``SamplingParams`` (``vllm/sampling_params.py``);
- ``metrics``: the ``vllm:`` metric names the release exports, as ``prometheus_client``
  exposes them (a counter with its ``_total``);
- ``quantization_methods``, ``load_formats``, ``architectures``: the values
  ``--quantization`` and ``--load-format`` accept and the model registry's architectures;
- ``response_fields``: the fields of the OpenAI-compatible server's chat completion response
  models (``ChatCompletionResponse``, its choice, ``ChatMessage``, the stream chunk, its
  choice, ``DeltaMessage``, ``UsageInfo``, with their vLLM base classes' fields), read from the
  wheel's ``protocol.py`` modules under ``vllm/entrypoints/``;
- ``completion_fields`` / ``embedding_fields``: likewise for the completion response
  (``CompletionResponse``, its choice, ``CompletionLogProbs``, the stream chunk and its
  choice, ``UsageInfo``) and the embedding response (``EmbeddingResponse``,
  ``EmbeddingResponseData``, ``UsageInfo``), written by ``scripts/gen_wheel_kinds.py``;
- ``model_impls``: the values ``--model-impl`` takes (``ModelImpl`` in ``vllm/config.py``,
  ``vllm/config/__init__.py`` or ``vllm/config/model.py``; ``transformers`` from 0.7.2);
- ``modules``: every importable module of ``vllm/`` (``.py`` files, packages, namespace
  packages and compiled extensions), from each wheel's file list.

Each file is read once, on first use of one of its kinds. CLI flags and env vars, with their
arity, live in :mod:`vllm_upgrade_check.knowledge.known_args`.
"""

from __future__ import annotations

import bisect
import difflib
import json
from dataclasses import dataclass, field
from functools import lru_cache
from importlib import resources
from typing import Any

from packaging.version import Version

HISTORY_FILE = "data/surface/history.json"
"""Package-relative path of the names of every kind but modules."""
MODULES_FILE = "data/surface/modules.json"
"""Package-relative path of the module names."""

KINDS = (
    "engine_args",
    "llm_params",
    "llm_ignored",
    "sampling_params",
    "metrics",
    "quantization_methods",
    "load_formats",
    "architectures",
    "response_fields",
    "completion_fields",
    "embedding_fields",
    "model_impls",
    "modules",
)
"""The kinds of name :func:`surface_history` knows."""


@dataclass(frozen=True)
class NameHistory:
    """The releases that have each name of one kind.

    Attributes:
        kind: the kind (one of :data:`KINDS`).
        releases: the releases read, oldest first.
        runs: name -> runs ``(first, last)`` of indexes into ``releases`` that have it.
        refs: name -> the wheel file that defines it in the newest release that has it
            (empty for modules, whose file follows from the name).
        data_file: the package-relative data file, for evidence.
    """

    kind: str
    releases: tuple[Version, ...]
    runs: dict[str, tuple[tuple[int, int], ...]]
    refs: dict[str, str]
    data_file: str
    _at: dict[int, frozenset[str]] = field(default_factory=dict, compare=False, repr=False)

    def _names_at_index(self, index: int) -> frozenset[str]:
        found = self._at.get(index)
        if found is None:
            found = self._at[index] = frozenset(
                n for n, runs in self.runs.items() if any(a <= index <= b for a, b in runs)
            )
        return found

    def covers(self, version: Version) -> bool:
        """``True`` when ``version`` lies between the oldest and newest release read (a
        name added after the newest would otherwise look unknown)."""
        return bool(self.releases) and self.releases[0] <= version <= self.releases[-1]

    def _index(self, version: Version) -> int:
        """The index of the newest release read at or before ``version`` (a release the
        data does not list, such as a later post release, is judged by the one before it)."""
        return bisect.bisect_right(self.releases, version) - 1

    def has(self, name: str, version: Version) -> bool:
        """Whether release ``version`` has ``name``."""
        return name in self._names_at_index(self._index(version))

    def known(self, name: str) -> bool:
        """Whether any release read has ``name``."""
        return name in self.runs

    def last_before(self, name: str, version: Version) -> Version | None:
        """The newest release before ``version`` that has ``name``, or ``None``."""
        index = self._index(version)
        last = max((min(b, index - 1) for a, b in self.runs.get(name, ()) if a < index), default=None)
        return None if last is None or last < 0 else self.releases[last]

    def removed_in(self, name: str, version: Version) -> Version | None:
        """The first release after the last one before ``version`` that had ``name``: the
        release that removed it, as seen from ``version`` (``None`` when ``version`` has it
        or no release before it had it)."""
        if self.has(name, version):
            return None
        last = self.last_before(name, version)
        if last is None:
            return None
        after = self.releases.index(last) + 1
        return self.releases[after] if after < len(self.releases) else None

    def names_at(self, version: Version) -> list[str]:
        """Every name release ``version`` has, sorted."""
        return sorted(self._names_at_index(self._index(version)))

    def closest(self, name: str, version: Version) -> str | None:
        """The name of release ``version`` closest to ``name`` (difflib ratio >= 0.8), or ``None``."""
        found = difflib.get_close_matches(name, self.names_at(version), n=1, cutoff=0.8)
        return found[0] if found else None

    def ref(self, name: str) -> str | None:
        """The wheel file that defines ``name`` in the newest release that has it."""
        if self.kind == "modules":
            return name.replace(".", "/") + ".py" if name in self.runs else None
        return self.refs.get(name)


@lru_cache(maxsize=2)
def _load(data_file: str) -> dict[str, Any]:
    text = resources.files("vllm_upgrade_check").joinpath(data_file).read_text(encoding="utf-8")
    data: dict[str, Any] = json.loads(text)
    return data


@lru_cache(maxsize=len(KINDS))
def surface_history(kind: str) -> NameHistory:
    """The history of one kind of name, loaded from the bundled data on first use.

    Args:
        kind: one of :data:`KINDS`.

    Raises:
        KeyError: for another kind.
        OSError / ValueError: only if the installed package is damaged.
    """
    if kind not in KINDS:
        raise KeyError(kind)
    data_file = MODULES_FILE if kind == "modules" else HISTORY_FILE
    data = _load(data_file)
    releases = tuple(Version(v) for v in data["releases"])
    entries = data["kinds"][kind]
    runs: dict[str, tuple[tuple[int, int], ...]] = {}
    refs: dict[str, str] = {}
    for name, entry in entries.items():
        if kind == "modules":
            runs[name] = tuple((a, b) for a, b in entry)
        else:
            runs[name] = tuple((a, b) for a, b in entry[0])
            refs[name] = entry[1]
    return NameHistory(kind, releases, runs, refs, data_file)
