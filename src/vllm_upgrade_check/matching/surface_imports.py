"""Imports the target cannot satisfy: a vLLM module its wheel does not ship, a name its
module no longer defines or re-exports (``from vllm.utils import FlexibleArgumentParser``),
and a ``vllm.envs`` attribute it does not define. All are built-in rule ``VUC000-006``.

The module history is the wheels' file lists (:mod:`vllm_upgrade_check.knowledge.surface`);
the names are each module's top-level bindings read with ``ast``
(:mod:`vllm_upgrade_check.knowledge.public_names`), loaded only when a scan sees an import
of a name from vLLM.
"""

from __future__ import annotations

from dataclasses import replace

from packaging.version import Version

from vllm_upgrade_check.knowledge.known_args import DATA_FILE, KnownArgs
from vllm_upgrade_check.knowledge.public_names import NAMES_FILE, public_names
from vllm_upgrade_check.knowledge.surface import NameHistory, surface_history
from vllm_upgrade_check.matching.surface_rules import IMPORT_ID, Rejection
from vllm_upgrade_check.matching.surface_words import closest_env, env_gone, history_words
from vllm_upgrade_check.model.facts import Fact
from vllm_upgrade_check.model.pack import Severity


def _new_home(name: str | None, module: str, target: Version) -> str | None:
    """``from M import NAME`` for the module of ``target`` that defines ``name`` now, if it
    moved out of ``module``: of several, the one sharing the most leading parts with
    ``module``, then the shortest path."""
    if not name or name == "*":
        return None
    names = public_names()
    if not names.covers(target):
        return None
    homes = [m for m in names.homes(name, target) if m != module]
    if not homes:
        return None
    parts = module.split(".")

    def shared(home: str) -> int:  # leading parts in common: a name moves to a sibling or a child
        count = 0
        for a, b in zip(parts, home.split("."), strict=False):
            if a != b:
                break
            count += 1
        return count

    best = max(homes, key=lambda h: (shared(h), -h.count(".")))
    return f"from {best} import {name}"


def module_rejection(modules: NameHistory, module: str, target: Version, name: str | None = None) -> Rejection:
    """A module ``target`` does not ship: a blocker when an earlier release had it (a
    removal), a warning when none did (a build for another platform may); with the module
    that defines ``name`` (the name imported from it) in ``target``, when there is one."""
    words, had = history_words(modules, module, target, "a module")
    severity = Severity.BLOCKER if had else Severity.WARNING
    return Rejection(
        IMPORT_ID,
        severity,
        module,
        "module",
        words,
        _new_home(name, module, target),
        modules.ref(module) if had else None,
        modules.data_file,
    )


def _star_rejection(fact: Fact, modules: NameHistory, target: Version) -> Rejection | None:
    """A name the file uses that its ``from M import *`` brought and module ``M`` of
    ``target`` no longer binds: a NameError where it is used. ``None`` when ``M`` is gone (the
    star import's own fact says so), the name is a submodule, or the file's name resolution
    is open (a star import of another module may bind it)."""
    name = fact.value or ""
    if not fact.resolved or not modules.has(fact.name, target) or modules.known(f"{fact.name}.{name}"):
        return None
    found = name_rejection(fact.name, name, target)
    if found is None:
        return None
    return replace(
        found,
        subject=f"{name} (from {fact.name} import *)",
        what="name a star import brings",
        detail=f"{found.detail}; the star import no longer binds it, so its use raises NameError",
    )


def name_rejection(module: str, name: str, target: Version) -> Rejection | None:
    """``from module import name`` where ``module`` of ``target`` binds no such name (an
    ImportError): a blocker when an earlier release's module had it, a warning when none did
    (the module may bind it in a way its source does not show); ``None`` when the target
    has it, the module is open (a ``__getattr__`` without ``__all__``), or the name is private."""
    names = public_names()
    if name == "*" or name.startswith("_") or not names.covers(target) or not names.knows(module):
        return None
    if names.is_open(module, target):
        return None
    history = names.names(module)
    if history.has(name, target):
        return None
    words, had = history_words(history, name, target, f"a name of {module}")
    near = history.closest(name, target)
    suggestion = _new_home(name, module, target) or (f"from {module} import {near}" if near else None)
    return Rejection(
        IMPORT_ID,
        Severity.BLOCKER if had else Severity.WARNING,
        f"from {module} import {name}",
        "name",
        words,
        suggestion,
        module.replace(".", "/") + ".py",
        NAMES_FILE,
    )


def launch_module_rejection(fact: Fact, target: Version) -> Rejection | None:
    """What ``target`` does with a ``python -m MODULE`` launch fact (``fact.name`` is
    ``RUNNER -m MODULE``, as :func:`~vllm_upgrade_check.sources.scanners.vllm_argv.find_launch`
    writes it) whose vLLM module it no longer ships: Python exits with "No module named
    MODULE" before any flag is read (a blocker when an earlier release had the module, as
    :func:`module_rejection` decides), else ``None``. One launch is one fact, so one finding."""
    runner, flag, module = fact.name.partition(" -m ")
    if not flag or not module.startswith("vllm.") or " " in module or not runner:
        return None
    modules = surface_history("modules")
    if not modules.covers(target) or modules.has(module, target) or not modules.known(module):
        return None
    return module_rejection(modules, module, target)


def import_rejection(fact: Fact, target: Version, known: KnownArgs) -> Rejection | None:
    """What ``target`` does with import fact ``fact`` (module in ``name``, the imported name or
    ``vllm.envs`` attribute in ``value``) if it cannot satisfy it, else ``None``."""
    modules = surface_history("modules")
    if not modules.covers(target):
        return None
    module = fact.name
    if fact.origin == "star":
        return _star_rejection(fact, modules, target)
    if not modules.has(module, target):
        return module_rejection(modules, module, target, fact.value)
    name = fact.value
    if not name:
        return None
    submodule = f"{module}.{name}"
    if modules.known(submodule):
        return None if modules.has(submodule, target) else module_rejection(modules, submodule, target)
    if module == "vllm.envs":
        return _envs_rejection(name, target, known)
    return name_rejection(module, name, target)


def _envs_rejection(name: str, target: Version, known: KnownArgs) -> Rejection | None:
    if not name.startswith("VLLM_") or not known.covers(target):
        return None
    if name not in known.env_vars:
        return Rejection(
            IMPORT_ID,
            Severity.BLOCKER,
            f"vllm.envs.{name}",
            "attribute of vllm.envs",
            "no vLLM release defines it; vllm.envs raises AttributeError for it",
            closest_env(name, target, known),
            "vllm/envs.py",
            DATA_FILE,
        )
    first, last, _gaps = known.env_vars[name]
    if name in env_gone(known, target) or first > target:
        detail = f"last read by {last}" if last < target else f"added in vLLM {first}, after {target}"
        return Rejection(
            IMPORT_ID,
            Severity.BLOCKER,
            f"vllm.envs.{name}",
            "attribute of vllm.envs",
            detail,
            None,
            "vllm/envs.py",
            DATA_FILE,
        )
    return None
