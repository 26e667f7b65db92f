"""The public names each vLLM module binds, release by release, read from the wheels.

``data/surface/names.json`` (written by ``scripts/gen_public_names.py``) holds, for every
module of ``vllm/`` whose dotted path has no private part, the names a ``from MODULE import
NAME`` finds there at run time: what the module defines (``def``, ``class``, assignments,
also inside top-level ``if``/``try`` blocks but not under ``if TYPE_CHECKING:``), what it
imports (re-exports), what its ``from M import *`` of another vLLM module brings, and every
name of its ``__all__`` (served by a lazy ``__getattr__``, as ``vllm/__init__.py`` serves
``LLM``). Names starting with ``_`` are left out. A module with a top-level ``__getattr__``
and no ``__all__`` is *open* in that release: any name may resolve, so none is judged.

The file is read on first use: only a scan of a Python file that imports from vLLM needs it.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from functools import lru_cache
from importlib import resources
from typing import Any

from packaging.version import Version

from vllm_upgrade_check.knowledge.surface import NameHistory

NAMES_FILE = "data/surface/names.json"
"""Package-relative path of the public names of each module."""


def _pairs(flat: list[int]) -> tuple[tuple[int, int], ...]:
    return tuple(zip(flat[::2], flat[1::2], strict=True))


@dataclass
class PublicNames:
    """The public names of every vLLM module over the releases read.

    Attributes:
        releases: the releases read, oldest first (the wheels' versions).
        modules: module -> ``{"open": runs, "names": {name: runs}, "defs": [names]}`` (runs
            are flat ``[first, last, ...]`` release indexes), or that entry as the JSON text the
            file stores, parsed on first use (:meth:`entry`).
    """

    releases: tuple[Version, ...]
    modules: dict[str, Any]
    _histories: dict[str, NameHistory] = field(default_factory=dict, repr=False)
    _homes: dict[str, tuple[str, ...]] | None = field(default=None, repr=False)

    def entry(self, module: str) -> dict[str, Any]:
        """``module``'s entry, parsed from its JSON text the first time it is asked for.

        Raises:
            KeyError: a module no release has.
        """
        found = self.modules[module]
        if isinstance(found, str):
            found = self.modules[module] = json.loads(found)
        return found

    def covers(self, version: Version) -> bool:
        """Whether ``version`` lies between the oldest and newest release read."""
        return bool(self.releases) and self.releases[0] <= version <= self.releases[-1]

    def knows(self, module: str) -> bool:
        """Whether any release read has ``module`` (as a ``.py`` file or package)."""
        return module in self.modules

    def names(self, module: str) -> NameHistory:
        """The names ``module`` binds, as a :class:`NameHistory` (kind ``public_names``).

        Raises:
            KeyError: a module no release has.
        """
        found = self._histories.get(module)
        if found is None:
            entry = self.entry(module)
            runs = {name: _pairs(flat) for name, flat in entry["names"].items()}
            found = self._histories[module] = NameHistory(
                "public_names", self.releases, runs, {}, NAMES_FILE
            )
        return found

    def is_open(self, module: str, version: Version) -> bool:
        """Whether ``module`` of release ``version`` resolves names at run time (a module
        ``__getattr__`` without ``__all__``): then no name of it is judged."""
        if module not in self.modules:
            return False
        entry = self.entry(module)
        index = NameHistory("", self.releases, {}, {}, NAMES_FILE)._index(version)
        return any(a <= index <= b for a, b in _pairs(entry["open"]))

    def homes(self, name: str, version: Version) -> tuple[str, ...]:
        """The modules of release ``version`` that define ``name`` themselves (not by
        importing it), shortest path first: where a name that moved lives now."""
        if self._homes is None:
            homes: dict[str, list[str]] = {}
            for module in self.modules:
                for defined in self.entry(module)["defs"]:
                    homes.setdefault(defined, []).append(module)
            self._homes = {n: tuple(sorted(m, key=lambda s: (s.count("."), s))) for n, m in homes.items()}
        return tuple(m for m in self._homes.get(name, ()) if self.names(m).has(name, version))


@lru_cache(maxsize=1)
def public_names() -> PublicNames:
    """The bundled public names, loaded on first use.

    Raises:
        OSError / ValueError: only if the installed package is damaged.
    """
    text = resources.files("vllm_upgrade_check").joinpath(NAMES_FILE).read_text(encoding="utf-8")
    data: dict[str, Any] = json.loads(text)
    return PublicNames(tuple(Version(v) for v in data["releases"]), data["modules"])
