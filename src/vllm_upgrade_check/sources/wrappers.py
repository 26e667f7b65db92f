"""Wrappers that turn environment variables into vLLM flags (serverless worker images and
in-house images): ``MAX_NUM_PARTIAL_PREFILLS=3`` read as ``--max-num-partial-prefills 3``,
``ENGINE_PASSTHROUGH=--seed 7 --enforce-eager`` as those flags.

The convention is recognised, not read from the wrapper's code, so it is applied only in a
repository that launches vLLM, and what it gives is at most a warning (origin
:data:`WRAPPER_ORIGIN`): an env var named like an engine arg, UPPER_SNAKE without the
``VLLM_`` prefix, stands for that flag; one whose value starts with a known flag is a flag list.
Each is reported at the env var's own line, with the flag it stands for. A flag list that
an unresolved launch reads by name (``vllm serve m $ENGINE_PASSTHROUGH``,
``shlex.split(os.environ.get("ENGINE_PASSTHROUGH", ""))``) does reach that launch: its
flags keep their real severity.

Flag-name tables in wrapper code (:mod:`.scanners.python.tables`) count only in a
repository that launches vLLM (:func:`without_unlaunched_tables`).
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Sequence
from dataclasses import replace

from vllm_upgrade_check.knowledge.known_args import known_args
from vllm_upgrade_check.model.facts import Fact, FactKind
from vllm_upgrade_check.parsing.words import Token
from vllm_upgrade_check.sources.scanners.arg_facts import arg_facts
from vllm_upgrade_check.sources.scanners.python.tables import TABLE_ORIGIN

WRAPPER_ORIGIN = "env-wrapper"
"""Origin of the ``arg`` facts read from env vars by the wrapper convention."""


def wrapper_facts(facts: Sequence[Fact]) -> list[Fact]:
    """The ``arg`` facts env vars stand for under the wrapper convention, in a repository
    whose ``facts`` hold a vLLM launch; none where a line already gives flags (a systemd
    ``EnvironmentFile=`` value an ``ExecStart=`` expands) nor for a unit's ``Environment=``."""
    if not any(f.kind == FactKind.LAUNCH for f in facts):
        return []
    known = known_args()
    read = {(f.location.path, f.location.line) for f in facts if f.kind == FactKind.ARG}
    launched = names_launches_read(facts)
    out: list[Fact] = []
    for fact in facts:
        name = fact.name
        if fact.kind != FactKind.ENV_VAR or name.startswith("VLLM_") or name.upper() != name:
            continue
        if (fact.location.path, fact.location.line) in read or (fact.location.path or "").endswith(".service"):
            continue  # a unit's ExecStart= expands what it uses of its Environment= itself
        value = fact.value or ""
        if value.startswith("--"):
            out.extend(_flag_list(fact, value, reaches=name in launched))
        elif name.lower() in known.names and "_" in name:
            flag = "--" + name.lower().replace("_", "-")
            out.append(
                Fact(
                    FactKind.ARG,
                    name.lower(),
                    fact.location,
                    raw=f"{name} ({flag})",
                    value=fact.value,
                    origin=WRAPPER_ORIGIN,
                    scanner=fact.scanner,
                    resolved=False,
                )
            )
    return out


_READS = re.compile(
    r"\$\{?([A-Za-z_][A-Za-z0-9_]*)"
    r"|(?:environ\.get|getenv|environ)\s*[(\[]\s*[\"']([A-Za-z_][A-Za-z0-9_]*)[\"']"
)
"""An env var read by name in a launch's unresolved words: ``$NAME``/``${NAME}`` (shell,
systemd, compose) or ``os.environ.get("NAME")``/``os.getenv("NAME")``/``os.environ["NAME"]``."""


def names_launches_read(facts: Sequence[Fact]) -> frozenset[str]:
    """The env var names the unresolved words of the vLLM launches in ``facts`` read."""
    out: set[str] = set()
    for fact in facts:
        if fact.kind == FactKind.LAUNCH and not fact.resolved:
            for m in _READS.finditer(fact.value or ""):
                out.add(m.group(1) or m.group(2))
    return frozenset(out)


def without_unlaunched_tables(facts: list[Fact]) -> list[Fact]:
    """``facts`` without the flag-table facts, when no fact is a vLLM launch."""
    if any(f.kind == FactKind.LAUNCH for f in facts):
        return facts
    return [f for f in facts if f.origin != TABLE_ORIGIN]


def _flag_list(fact: Fact, value: str, reaches: bool = False) -> list[Fact]:
    """The flags of an env var whose value is a flag list, at the env var's line
    (``reaches``: a launch reads the variable, so the flags are read as certain)."""
    try:
        words = shlex.split(value)
    except ValueError:
        return []
    if not words or not known_args().is_known(words[0].lstrip("-").split("=", 1)[0].replace("-", "_")):
        return []
    line, column = fact.location.line or 0, fact.location.column or 0
    tokens = [Token(w, line, column, True, w) for w in words]
    found = arg_facts(tokens, fact.location.path, fact.scanner, positional_model=False)
    return [
        replace(f, origin=WRAPPER_ORIGIN, raw=f"{fact.name}: {f.raw}", resolved=reaches, spans=None)
        for f in found
        if f.kind == FactKind.ARG
    ]
