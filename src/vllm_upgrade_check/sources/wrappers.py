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
from vllm_upgrade_check.model.facts import EXEC_LITERAL, Fact, FactKind
from vllm_upgrade_check.parsing.words import Token
from vllm_upgrade_check.sources.scanners.arg_facts import arg_facts
from vllm_upgrade_check.sources.scanners.python.tables import TABLE_ORIGIN

WRAPPER_ORIGIN = "env-wrapper"
"""Origin of the ``arg`` facts read from env vars by the wrapper convention."""


def wrapper_facts(facts: Sequence[Fact]) -> list[Fact]:
    """The ``arg`` facts env vars stand for under the wrapper convention, in a repository
    whose ``facts`` hold a vLLM launch; none where a line already gives flags (a systemd
    ``EnvironmentFile=`` value an ``ExecStart=`` expands), nor for a unit's ``Environment=``,
    nor for the env of a container whose own words launch vLLM (a Kubernetes
    ``$(EXTRA)`` is expanded into its args and reported there; an env var no word of it
    reads reaches no wrapper), unless an unresolved launch reads the variable by name."""
    if not any(f.kind == FactKind.LAUNCH for f in facts):
        return []
    known = known_args()
    read = {(f.location.path, f.location.line) for f in facts if f.kind == FactKind.ARG}
    launched = names_launches_read(facts)
    by_file = {
        (f.location.path, name)
        for f in facts
        if f.kind == FactKind.LAUNCH
        for name in names_launches_read([f])
    }
    # a container (compose service, Kubernetes container) that runs vLLM itself: what its
    # env holds reaches vLLM only through the $(VAR) its words expand, read there already
    # (a Dockerfile's image is one container: its ENV reaches only what the file launches)
    running = {(f.location.path, f.owner) for f in facts if f.kind == FactKind.LAUNCH and f.owner}
    running |= {(f.location.path, "") for f in facts if f.kind == FactKind.LAUNCH and f.scanner == "dockerfile"}
    # a value a launch took as one word (systemd's `${STEPS}`), reported at that launch
    as_words = {f.raw for f in facts if f.kind == FactKind.ARG and f.origin == "cli" and f.raw}
    as_words |= {f"{f.raw} {f.value}" for f in facts if f.kind == FactKind.ARG and f.origin == "cli" and f.value}
    out: list[Fact] = []
    for fact in facts:
        name = fact.name
        if fact.kind != FactKind.ENV_VAR or name.upper() != name:
            continue
        owner = fact.owner or ("" if fact.scanner == "dockerfile" else None)
        if owner is not None and (fact.location.path, owner) in running and not _reaches(fact, launched, by_file):
            continue
        if (fact.location.path, fact.location.line) in read or (fact.location.path or "").endswith(".service"):
            continue  # a unit's ExecStart= expands what it uses of its Environment= itself
        value = fact.value or ""
        if value.startswith("--") and value.strip() in as_words and _reaches(fact, launched, by_file) is False:
            continue
        if value.startswith("--"):
            # any name, VLLM_EXTRA_FLAGS too: no env var of vLLM's own holds flags
            out.extend(_flag_list(fact, value, reaches=_reaches(fact, launched, by_file)))
        elif not name.startswith("VLLM_") and name.lower() in known.names and "_" in name:
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


def _reaches(fact: Fact, launched: frozenset[str], by_file: set[tuple[str | None, str]]) -> bool:
    """Whether a launch reads env var ``fact`` by name: a Dockerfile's ``ENV`` is in the
    environment of its own image's container only, so only a launch of that file reads it;
    any other env var, by any launch of the repository (a ``.env`` a script sources)."""
    if fact.scanner == "dockerfile":
        return (fact.location.path, fact.name) in by_file
    return fact.name in launched


def names_launches_read(facts: Sequence[Fact]) -> frozenset[str]:
    """The env var names the unresolved words of the vLLM launches in ``facts`` read."""
    out: set[str] = set()
    for fact in facts:
        if fact.kind == FactKind.LAUNCH and not fact.resolved and not (fact.value or "").endswith(EXEC_LITERAL):
            for m in _READS.finditer(fact.value or ""):
                out.add(m.group(1) or m.group(2))
    return frozenset(out)


def without_unlaunched_tables(facts: list[Fact]) -> list[Fact]:
    """``facts`` without the flag-table facts, when no fact is a vLLM launch."""
    if any(f.kind == FactKind.LAUNCH for f in facts):
        return facts
    return [f for f in facts if f.origin != TABLE_ORIGIN]


def _placed_words(fact: Fact, value: str, words: list[str]) -> list[Token]:
    """The words of a flag-list env var, each where it is written when the scanner placed
    the value on one line as it reads (``spans.value``), else all at the env var's name."""
    line, column = fact.location.line or 0, fact.location.column or 0
    at = fact.spans.value if fact.spans is not None else None
    placed: list[Token] = []
    cursor = 0
    for word in words:
        index = value.find(word, cursor) if at is not None and at.line == at.end_line else -1
        if at is None or index < 0:
            placed.append(Token(word, line, column, True, word))
            continue
        cursor = index + len(word)
        placed.append(Token(word, at.line, at.column + index, True, word))
    return placed


def _flag_list(fact: Fact, value: str, reaches: bool = False) -> list[Fact]:
    """The flags of an env var whose value is a flag list, at the env var's line
    (``reaches``: a launch reads the variable, so the flags are read as certain)."""
    try:
        words = shlex.split(value)
    except ValueError:
        return []
    if not words or not known_args().is_known(words[0].lstrip("-").split("=", 1)[0].replace("-", "_")):
        return []
    tokens = _placed_words(fact, value, words)
    found = arg_facts(tokens, fact.location.path, fact.scanner, positional_model=False)
    return [
        replace(f, origin=WRAPPER_ORIGIN, raw=f"{fact.name}: {f.raw}", resolved=reaches, spans=None)
        for f in found
        if f.kind == FactKind.ARG
    ]


_NAMED = re.compile(r"\$\{?([A-Za-z_][A-Za-z0-9_]*)\}?")


def with_flag_lists_read(facts: Sequence[Fact], wrapped: Sequence[Fact]) -> list[Fact]:
    """``facts`` with each unresolved launch's words that read an env var whose flag list
    :func:`wrapper_facts` read (``wrapped``: its facts; ``$ENGINE_PASSTHROUGH`` whose
    ``--swap-space 4`` was checked) taken out of the launch's unresolved words, so that no
    note says the flags it holds were not checked. The launch stays unresolved: which flags
    it is given is still read from a convention, so no rule on a flag it lacks applies.
    A compose launch keeps its words: compose interpolates from its project's ``.env``,
    which its scanner reads, so a variable left there is set by the shell, not a file."""
    names = {f.raw.split(": ", 1)[0] for f in wrapped if f.origin == WRAPPER_ORIGIN and f.resolved and ": " in f.raw}
    if not names:
        return list(facts)
    out: list[Fact] = []
    for fact in facts:
        value = fact.value or ""
        trimmed = fact.scanner != "compose" and not value.endswith(EXEC_LITERAL)
        if fact.kind == FactKind.LAUNCH and not fact.resolved and value and trimmed:
            words = value.split(" ")
            kept = [w for w in words if not ((m := _NAMED.fullmatch(w)) and m.group(1) in names)]
            if len(kept) != len(words):
                fact = replace(fact, value=" ".join(kept) or None)
        out.append(fact)
    return out
