"""The check every fixed file passes before it is written: scan the fixed text again.

The fixed text is read by the same scanners that read the file (the parsers the scan
uses), and must parse where the old text did and read as the old text read, but for what
the fixes meant to change: a removed flag is gone with what it owned, a renamed one reads
under its new name, and every other fact, the served model above all, reads as before.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass

import yaml

from vllm_upgrade_check.fixing.planned import Planned, Signature, signature
from vllm_upgrade_check.fixing.syntax import syntax_problems
from vllm_upgrade_check.model.facts import Fact, FactKind, Skipped, Span
from vllm_upgrade_check.parsing.yamlnodes import YamlProblem, documents, get, scalar
from vllm_upgrade_check.sources.discovery import as_sniffed
from vllm_upgrade_check.sources.dispatch import scan_source
from vllm_upgrade_check.sources.scanners.base import APPENDED, FileReference, Scanner, SourceFile
from vllm_upgrade_check.sources.scanners.helm import override_facts
from vllm_upgrade_check.sources.scanners.kustomize_inline import EMPTY_PATCH
from vllm_upgrade_check.sources.scanners.vllm_config import VllmConfigScanner


@dataclass(frozen=True)
class FileReading:
    """What the scanners read in one text of a file.

    Attributes:
        facts: the facts, each once.
        problems: why parts could not be read (numbers blanked, so that a shift of lines
            does not count as a new problem).
        syntax: why the text does not parse as the kind of file it is
            (:func:`~.syntax.syntax_problems`), whether or not it configures vLLM.
        emptied: why inline kustomize patches write nothing, or take every word of a
            launch (:data:`~vllm_upgrade_check.sources.scanners.kustomize_inline.EMPTY_PATCH`).
    """

    facts: tuple[Fact, ...]
    problems: frozenset[str]
    syntax: tuple[str, ...] = ()
    emptied: tuple[str, ...] = ()


LINKED_VALUES = "helm-values"
"""How a values file a helm command passes to a vLLM chart was read (``-f FILE`` in a
script, a Makefile, a CI file or a helmfile): as a values override, by the scanner ``helm``."""


CONFIG_READER = VllmConfigScanner.name
"""The reader of a file a launch passes with ``--config`` (as a config, whatever its keys)."""

def _referenced_items(source: SourceFile, scanners: Sequence[Scanner], readers: Iterable[str] | None) -> list[Fact | Skipped]:
    """What the readers of a named file (each scanner's
    :meth:`~.base.Scanner.read_referenced`) read in ``source``: ``readers`` by scanner name,
    every one when ``None``."""
    wanted = None if readers is None else set(readers)
    items: list[Fact | Skipped] = []
    for scanner in scanners:
        if wanted is None or scanner.name in wanted:
            items.extend(i for i in scanner.read_referenced(source) if not isinstance(i, FileReference))
    return items


def referenced_readers(
    rel: str, text: str, scanners: Sequence[Scanner], wanted: Iterable[tuple[Signature, int | None, int | None]]
) -> tuple[str, ...]:
    """The readers of a file another file names (``--config``, ``-r``, ``EnvironmentFile=``,
    ...) that read, in ``text`` of file ``rel``, one of the facts ``wanted`` (its
    :func:`~.planned.signature`, line and column): the readers the scan read it with, so that
    the fixed text is read again with them alone (a requirements reader never judges a YAML
    config, nor a dotenv reader a requirements file). Returns scanner names, in scanner
    order; empty when no reader reads one of them."""
    source = SourceFile(rel, text.replace("\r\n", "\n"))
    source = as_sniffed(source, scanners) or source
    want = set(wanted)
    found = []
    for name in dict.fromkeys(s.name for s in scanners):
        items = _referenced_items(source, scanners, (name,))
        if any(isinstance(i, Fact) and (signature(i), i.location.line, i.location.column) in want for i in items):
            found.append(name)
    return tuple(found)


def read_file(
    rel: str, text: str, scanners: Sequence[Scanner], referenced: bool | str | tuple[str, ...]
) -> FileReading:
    """Read ``text`` (of file ``rel``; CRLF is read as LF) as the scan reads it: every
    scanner that accepts it, and when another file named it (``referenced``), also as that
    file read it: :data:`LINKED_VALUES`, as a values override of a vLLM chart; a tuple of
    reader names (:func:`referenced_readers`), with those readers only; ``True``, with every
    reader of named files (a ``--config`` YAML, an ``EnvironmentFile=``, a ``-r`` include)."""
    source = SourceFile(rel, text.replace("\r\n", "\n"))
    source = as_sniffed(source, scanners) or source
    accepting = [s for s in scanners if s.accepts(source)]
    result = scan_source(source, accepting)
    items: list[Fact | Skipped] = [*result.facts, *result.skipped]
    items.extend(f for c in result.conditionals for f in c.facts)
    if referenced == LINKED_VALUES:
        items.extend(_override_reading(source))
    elif isinstance(referenced, tuple):
        items.extend(_referenced_items(source, scanners, referenced))
    elif referenced:
        items.extend(_referenced_items(source, scanners, None))
    facts = tuple(dict.fromkeys(i for i in items if isinstance(i, Fact)))
    problems = frozenset(
        re.sub(r"\d+", "N", i.reason) for i in items if isinstance(i, Skipped) and i.configures_vllm
    )
    emptied = tuple(i.reason for i in items if isinstance(i, Skipped) and i.reason.startswith(EMPTY_PATCH))
    return FileReading(facts, problems, syntax_problems(rel, source.text, [s.name for s in accepting]), emptied)


def _override_reading(source: SourceFile) -> Iterator[Fact | Skipped]:
    """The facts of ``source`` read as a values override (what a helm command's ``-f`` gives
    a vLLM chart), or why it does not parse."""
    try:
        docs = documents(source.text)
    except YamlProblem as exc:
        yield Skipped(source.relpath, str(exc), configures_vllm=True, line=exc.line, column=exc.column)
        return
    for doc in docs:
        if isinstance(doc, yaml.MappingNode) and scalar(get(doc, "kind")) is None:
            yield from override_facts(source.text, doc, source.relpath)


def _inside(fact: Fact, span: Span) -> bool:
    loc = fact.location
    if loc.line is None or loc.column is None:
        return False
    return span.start <= (loc.line, loc.column) < span.end


def _at(fact: Fact, other: Fact) -> bool:
    a, b = fact.location, other.location
    return (a.line, a.column) == (b.line, b.column)


def expected(before: FileReading, fixes: Iterable[tuple[Fact, Planned]]) -> Counter[Signature]:
    """What the fixed text should read as: ``before`` with each fix's fact removed (with the
    ``*_config`` keys it owned) or read as what the fix makes of it. A fact placed in the file
    by what another file reads of it (a compose project's ``.env`` value) is not one the file
    reads alone: what the fix makes of it is not looked for there."""
    want = Counter(signature(f) for f in before.facts)
    done: set[tuple[int | None, int | None, Signature]] = set()
    for fact, planned in fixes:
        key = (fact.location.line, fact.location.column, signature(fact))
        if key in done:
            continue  # one text read as several facts (a YAML anchor several services merge)
        done.add(key)
        same = [f for f in before.facts if _at(f, fact) and signature(f) == signature(fact)]
        copies = max(len(same), 1)
        want[signature(fact)] -= copies
        if planned.removes:
            cut = planned.changes[0].span
            for owned in before.facts:
                if owned.kind == FactKind.ARG and owned.name.startswith(fact.name + ".") and _inside(owned, cut):
                    want[signature(owned)] -= 1
        if not planned.removes:
            _renamed_keys(before, fact, planned, want)
        if not same and not any(signature(f) == signature(fact) for f in before.facts):
            # read there from another file (a compose project's .env tag): this file alone
            # does not read it, before or after; what it reads itself is still checked
            continue
        for becomes in planned.becomes:
            want[becomes] += copies
        for other, reads in planned.others:
            want[signature(other)] -= 1
            for becomes in reads:
                want[becomes] += 1
    return +want


def _renamed_keys(before: FileReading, fact: Fact, planned: Planned, want: Counter[Signature]) -> None:
    """Count, in ``want``, the sub-keys a renamed ``*_config`` arg owns (``--override-pooler-config
    '{"pooling_type": "MEAN"}'`` read as ``override_pooler_config.pooling_type``) as read under
    the new name (``pooler_config.pooling_type``): those written inside the arg's cut, or
    its value when it has no cut."""
    spans = fact.spans
    area = spans.cut or spans.value if spans is not None else None
    new = [b[1] for b in planned.becomes if b[0] == FactKind.ARG.value and b[1] != fact.name]
    if fact.kind != FactKind.ARG or area is None or len(new) != 1:
        return
    for owned in before.facts:
        if owned.kind == FactKind.ARG and owned.name.startswith(fact.name + ".") and _inside(owned, area):
            want[signature(owned)] -= 1
            want[(owned.kind.value, new[0] + owned.name[len(fact.name) :], owned.value or "")] += 1


def _shown(signatures: Counter[Signature]) -> str:
    parts = []
    for sig, count in sorted(signatures.items()):
        kind, name = sig[0], sig[1]
        value = " ".join(sig[2].split()) if len(sig) > 2 else ""
        detail = f" {value[:60]}{'...' if len(value) > 60 else ''}" if value else ""
        parts.append(f"{kind} {name}{detail}" + (f" (x{count})" if count > 1 else ""))
    return ", ".join(parts[:4]) + (f" and {len(parts) - 4} more" if len(parts) > 4 else "")


def _holders(lost: Counter[Signature], gained: Counter[Signature], replacements: Sequence[tuple[str, str]]) -> None:
    """Pair off, in place, a fact whose value holds an edited text (a ConfigMap value holding
    a dashboard whose query was fixed) with the same fact reading the edited value."""
    for sig in list(lost):
        if len(sig) < 3 or not sig[2]:
            continue
        for old, new in replacements:
            if old and old in sig[2]:
                edited = (*sig[:2], sig[2].replace(old, new, 1))
                while lost[sig] and gained[edited]:
                    lost[sig] -= 1
                    gained[edited] -= 1
    lost += Counter()
    gained += Counter()


def check(
    before: FileReading,
    after: FileReading,
    fixes: Sequence[tuple[Fact, Planned]],
    replacements: Sequence[tuple[str, str]] = (),
) -> str | None:
    """Why the fixed text (``after``) must not be written, or ``None`` when it may: it must
    parse where ``before`` did and read as :func:`expected` says (a value that holds an
    edited text, ``replacements`` as ``(old, new)``, may read with the edit made in it).
    Text that does not parse as its kind of file where ``before`` did
    (:attr:`FileReading.syntax`) is refused, whatever the file configures."""
    broken = Counter(after.syntax) - Counter(before.syntax)
    if broken:
        return f"the fixed text would not parse: {sorted(broken)[0]}"
    new_problems = after.problems - before.problems
    if new_problems:
        return f"the fixed text would not parse: {sorted(new_problems)[0]}"
    if len(after.emptied) > len(before.emptied):  # an inline patch left writing nothing, or clearing args
        why = next((r for r in after.emptied if r not in before.emptied), after.emptied[0])
        return f"every word the patch writes there would go, and then {why}: change or remove the patch entry by hand"
    want = expected(before, fixes)
    got = Counter(signature(f) for f in after.facts)
    if got == want:
        return None
    lost, gained = want - got, got - want
    _holders(lost, gained, replacements)
    lost, gained = +lost, +gained
    if not lost and not gained:
        return None
    if not gained and all(sig[0] == FactKind.LAUNCH.value and sig[1] == APPENDED for sig in lost):
        # every word a patch appends would go, and the patch still writes its other operations
        # (one left empty is refused above): its launch goes with its words
        return None
    words = []
    if lost:
        words.append(f"lose {_shown(lost)}")
    if gained:
        words.append(f"gain {_shown(gained)}")
    return "the fixed text would read differently: it would " + " and ".join(words)
