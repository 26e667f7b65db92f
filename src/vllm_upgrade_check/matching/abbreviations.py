"""Flags written as abbreviations, read as the flag the running release expands them to.

vLLM's ``FlexibleArgumentParser`` subclasses ``argparse.ArgumentParser`` and never passes
``allow_abbrev`` (``vllm/utils/argparse_utils.py``; before that ``vllm/utils/__init__.py``),
so in every release argparse takes a long option that prefixes exactly one of the parser's
option strings as that option: ``--max-num-partial 4`` is ``--max-num-partial-prefills 4``
in a release that has no other flag starting with ``--max-num-partial``. A rule that removes
or renames the full flag therefore concerns the abbreviation too; the matcher sees that
through an alias this module adds to the fact (its name, span and raw text stay as written,
so a fix edits what the file says and names the full flag).
"""

from __future__ import annotations

from collections.abc import Iterable

from packaging.version import Version

from vllm_upgrade_check.knowledge.known_args import KnownArgs
from vllm_upgrade_check.matching.matcher import VersionContext
from vllm_upgrade_check.model.facts import Fact, FactKind

_ORIGINS = frozenset({"cli", "config"})


def _written(fact: Fact) -> str:
    """The flag as written, without a value (``--max-num-partial``), for an ``arg`` fact."""
    raw = fact.raw if fact.raw.startswith("--") else "--" + fact.name.replace("_", "-")
    return raw.split("=", 1)[0]


def _snake(flag: str) -> str:
    return flag.lstrip("-").replace("-", "_")


def running_expansions(fact: Fact, context: VersionContext, known: KnownArgs) -> dict[str, list[Version]]:
    """The flags the abbreviation ``fact`` stands for in the release(s) it may run.

    Returns:
        full flag (``--max-num-partial-prefills``) -> the releases where argparse expands the
        written prefix to it. With a known from-version (``--from``, the file's own pin, the
        run's guess), that one release (the newest covered release not newer than it);
        without, every covered release up to the target. A release where the prefix is
        ambiguous (several flags) or a flag in its own right adds nothing.
    """
    written = _written(fact)
    start = context.assume(fact).version
    if start is not None:
        at = [r for r in known.releases if r <= start][-1:] or known.releases[:1]
    else:
        at = [r for r in known.releases if r <= context.target]
    found: dict[str, list[Version]] = {}
    for release in at:
        expands = known.expansions(written, release)
        if len(expands) == 1:
            found.setdefault(expands[0], []).append(release)
    return found


def ambiguous_in(fact: Fact, context: VersionContext, known: KnownArgs) -> tuple[Version, tuple[str, ...]] | None:
    """``(release, flags)`` when the abbreviation ``fact`` prefixes several flags of the
    release it is known to run (argparse refuses it there as ambiguous), else ``None``."""
    start = context.assume(fact).version
    if start is None:
        return None
    at = [r for r in known.releases if r <= start][-1:]
    if not at:
        return None
    expands = known.expansions(_written(fact), at[0])
    return (at[0], expands) if len(expands) > 1 else None


def _candidate(fact: Fact, known: KnownArgs) -> bool:
    """An ``arg`` fact of a command line or ``--config`` file whose name no release knows."""
    if fact.kind != FactKind.ARG or fact.origin not in _ORIGINS or not fact.resolved:
        return False
    if fact.origin == "cli" and not fact.raw.startswith("--"):
        return False
    return not known.is_known(fact.name)


def with_expansions(facts: Iterable[Fact], context: VersionContext, known: KnownArgs) -> tuple[list[Fact], list[str]]:
    """``facts`` with each abbreviated flag also answering to the full flag its running
    release expands it to (an alias, snake_case), and a note for each abbreviation whose
    expansion is not one flag.

    Returns:
        ``(facts, notes)``. A fact whose prefix expands to different flags in the releases
        it may run (its from-version unknown) is left as written and noted: which flag it
        is cannot be told, so no rule is applied as though it were one of them. A prefix
        that is ambiguous in the release it runs is noted too (argparse refuses it there
        already, whatever the upgrade).
    """
    if not known.covers(context.target):
        return list(facts), []
    out: list[Fact] = []
    notes: list[str] = []
    for fact in facts:
        if not _candidate(fact, known):
            out.append(fact)
            continue
        found = running_expansions(fact, context, known)
        if len(found) == 1:
            (full,) = found
            alias = _snake(full)
            if alias not in fact.aliases and alias != fact.name:
                fact = fact.evolve(aliases=(*fact.aliases, alias))
        elif len(found) > 1:
            shown = "; ".join(f"{flag} in {releases[0]}" + (f"-{releases[-1]}" if len(releases) > 1 else "")
                              for flag, releases in sorted(found.items(), key=lambda kv: kv[1][0]))
            notes.append(
                f"{_written(fact)} at {fact.location} is an abbreviation argparse expands differently by release "
                f"({shown}); which vLLM release this launch runs is not known, so it was not checked as any of them"
            )
        elif (ambiguous := ambiguous_in(fact, context, known)) is not None:
            release, flags = ambiguous
            notes.append(
                f"{_written(fact)} at {fact.location} is ambiguous in vLLM {release} (it prefixes "
                f"{', '.join(flags[:4])}{' …' if len(flags) > 4 else ''}): argparse refuses it there already"
            )
        out.append(fact)
    return out, notes
