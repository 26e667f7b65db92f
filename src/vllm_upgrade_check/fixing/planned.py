"""A finding's fix as changes to spans the scanners recorded: pure, no file is read.

:func:`plan_finding` turns a finding into :class:`Planned`: the text to write at each span,
what the text there must be (checked against the file before anything is written), and
what the fix does to the fact (checked by scanning the fixed text again). Knowledge of how
vLLM spells things (a flag's dashes, a metric's series suffix) lives here; knowledge of a
file's syntax does not: the spans say where, :func:`~vllm_upgrade_check.parsing.words.render` says
how a new value is quoted.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass

from packaging.specifiers import SpecifierSet
from packaging.version import Version

from vllm_upgrade_check.fixing.interface import MECHANICAL, CannotFix
from vllm_upgrade_check.fixing.specifiers import admitting
from vllm_upgrade_check.knowledge.requires import base_requirement
from vllm_upgrade_check.knowledge.versions import tag_version_span
from vllm_upgrade_check.model.facts import Fact, FactKind, Span
from vllm_upgrade_check.model.findings import Finding
from vllm_upgrade_check.model.pack import Applicability, FixAction
from vllm_upgrade_check.parsing.reqtext import specifier_offsets
from vllm_upgrade_check.parsing.words import render

Signature = tuple[str, ...]
"""What a fact reads as, positions left out (see :func:`signature`)."""


def signature(fact: Fact) -> Signature:
    """What ``fact`` reads as: its kind, name and value (a launch: its entry point and model;
    a model: its id). Two scans of a file that reads the same give the same signatures."""
    kind = fact.kind
    if kind == FactKind.LAUNCH:
        return (kind.value, fact.name, fact.model or "")
    if kind in (FactKind.MODEL, FactKind.METRIC, FactKind.RESPONSE_FIELD):
        return (kind.value, fact.name)
    return (kind.value, fact.name, fact.value or "")


@dataclass(frozen=True)
class Change:
    """One replacement: write ``new`` at ``span``.

    Attributes:
        span: where.
        new: the text to write; with ``syntax`` set, a value still to be quoted for the
            quotes found around the span (:func:`~vllm_upgrade_check.parsing.words.render`).
        expect: the text the span must hold, or ``None`` when only the scan after the fix
            can tell (a cut).
        syntax: the syntax ``new`` is written in, when it is a value to quote.
        inside: a span ``span`` must contain (the name of a flag it cuts out).
        listed: for a cut out of a list that must not be left with nothing, ``(where the
            list is written, what remains of it once every element is cut, what to write
            there then)`` (:attr:`~vllm_upgrade_check.model.facts.Spans.listed`): the cuts
            of one list that take every element become that one replacement.
    """

    span: Span
    new: str
    expect: str | None = None
    syntax: str = ""
    inside: Span | None = None
    listed: tuple[Span, str, str] | None = None


@dataclass(frozen=True)
class Planned:
    """A finding's fix.

    Attributes:
        changes: what to write, applied together or not at all.
        removes: ``True`` when the fix removes the fact (and what it owns).
        becomes: the signatures the fact reads as after the fix (empty when it is removed).
        description: one line for the summary.
        applicability: the rule's, or ``unsafe`` when this finding's fix rests on a guess.
        others: other facts the fix changes, each with the signatures it reads as after it
            (a config flag a value is merged into).
        target: the config flag a move writes into (``structured_outputs_config``), or ``""``.
    """

    changes: tuple[Change, ...]
    removes: bool
    becomes: tuple[Signature, ...]
    description: str
    applicability: Applicability
    others: tuple[tuple[Fact, tuple[Signature, ...]], ...] = ()
    target: str = ""


def describe(fact: Fact, action: FixAction, new: str) -> str:
    """The summary line of a fix of ``fact``."""
    subject = fact.raw or fact.name
    if action == FixAction.REMOVE_ARG:
        value = f" {fact.value}" if fact.value is not None and "=" not in subject else ""
        return f"remove {subject}{value}"
    verb = _VERBS.get(action, action.value.replace("_", " "))
    return f"{verb} {subject} -> {new}"


_VERBS = {
    FixAction.SET_SPECIFIER: "re-pin",
    FixAction.RENAME: "rename",
    FixAction.REPLACE_VALUE: "change",
    FixAction.MOVE_TO_CONFIG: "move",
    FixAction.BUMP_IMAGE: "bump",
}
"""How a fix's summary line names its action (a person's words, not the pack's keys)."""


def _flag_style(written: str, snake: str) -> str:
    """``snake`` (an engine arg) spelled as a flag the way ``written`` spells flags."""
    body = snake.replace("_", "_" if "_" in written.lstrip("-") else "-")
    return "--" + body


def _key_style(written: str, snake: str) -> str:
    """``snake`` spelled as a config key the way ``written`` spells keys (dashes or underscores)."""
    return snake.replace("_", "-") if "-" in written else snake


def _arg_name(fact: Fact, replacement: str) -> tuple[str, str, Signature]:
    """``(old text, new text, new signature)`` of renaming arg ``fact`` to ``replacement``
    (an engine arg or a flag)."""
    snake = replacement.lstrip("-").replace("-", "_")
    if fact.origin == "cli":
        new = replacement if replacement.startswith("-") else _flag_style(fact.raw, snake)
        return fact.raw, new, (FactKind.ARG.value, snake, fact.value or "")
    if fact.origin == "config":
        return fact.raw, _key_style(fact.raw, snake), (FactKind.ARG.value, snake, fact.value or "")
    return fact.name, snake, (FactKind.ARG.value, snake, fact.value or "")


def _rename(finding: Finding) -> Planned:
    fact, fix = finding.fact, finding.rule.fix
    spans = fact.spans
    replacement = fix.replacement or ""
    if spans is not None and spans.note and spans.name is None:
        raise CannotFix(spans.note)
    if spans is None or spans.name is None:
        raise CannotFix("the scanner could not tell where the name is written; rename it by hand")
    kind = fact.kind
    if kind == FactKind.ARG:
        old, new, becomes = _arg_name(fact, replacement)
    elif kind == FactKind.IMPORT:
        prefix = finding.rule.match.name
        if not fact.name.startswith(prefix):
            raise CannotFix(f"the module {fact.name} is not {prefix}")
        old, new = fact.name, replacement + fact.name[len(prefix) :]
        becomes = (kind.value, new, fact.value or "")
    elif kind == FactKind.METRIC:
        written = fact.raw or fact.name
        prefix = finding.rule.match.name
        if not written.startswith(prefix):
            raise CannotFix(f"the metric is written {written}, not {prefix}...")
        old, new = written, replacement + written[len(prefix) :]
        becomes = (kind.value, replacement if fact.name == prefix else new)
    else:  # env_var, response_field
        old, new = fact.name, replacement
        becomes = (kind.value, new, fact.value or "") if kind == FactKind.ENV_VAR else (kind.value, new)
    change = Change(spans.name, new, expect=old)
    return Planned((change,), False, (becomes,), describe(fact, fix.action, new), fix.applicability)


def _remove(finding: Finding) -> Planned:
    fact, fix = finding.fact, finding.rule.fix
    if fact.kind != FactKind.ARG:
        raise CannotFix("remove_arg applies to args only")
    spans = fact.spans
    if spans is not None and spans.cut is None and spans.note:
        raise CannotFix(spans.note)
    if spans is None or spans.cut is None:
        raise CannotFix("the flag is written through a variable or quoting the fix cannot place; remove it by hand")
    applicability = fix.applicability
    if not spans.sure and applicability == Applicability.SAFE:
        applicability = Applicability.UNSAFE  # which words the flag owns was a guess
    expect = fact.raw if fact.origin in ("cli", "config") else fact.name
    listed = (spans.listed, spans.left, spans.emptied) if spans.listed is not None and spans.emptied else None
    change = Change(spans.cut, "", inside=spans.name, listed=listed)  # `[]` for a list left with nothing
    checks = (Change(spans.name, spans_name_text(fact), expect=expect),) if spans.name else ()
    return Planned((change, *checks), True, (), describe(fact, fix.action, ""), applicability)


def spans_name_text(fact: Fact) -> str:
    """The name of ``fact`` as written where its name span is (a no-op change that checks it)."""
    return fact.raw if fact.origin in ("cli", "config") else fact.name


def _replace_value(finding: Finding) -> Planned:
    fact, fix = finding.fact, finding.rule.fix
    spans = fact.spans
    if spans is None or spans.value is None or fact.value is None:
        raise CannotFix("the scanner could not tell where the value is written; change it by hand")
    new = fix.replacement or ""
    change = Change(spans.value, new, expect=fact.value, syntax=spans.syntax or "shell")
    becomes = (fact.kind.value, fact.name, new)
    return Planned((change,), False, (becomes,), describe(fact, fix.action, new), fix.applicability)


def target_specifier(name: str, target: Version, fallback: str | None) -> str:
    """The specifier release ``target`` requires of distribution ``name`` (its own
    ``Requires-Dist``, one line without a marker), else ``fallback``.

    Raises:
        CannotFix: the target does not require the distribution, or requires it
            differently by platform, and no ``fallback`` is given.
    """
    lines = base_requirement(str(target), name)
    if lines is None:
        if fallback:
            return fallback
        raise CannotFix(f"what vLLM {target} requires of {name} is not known")
    if not lines:
        raise CannotFix(f"vLLM {target} no longer requires {name}: drop the pin if nothing else needs it")
    plain = [r for r in lines if not r.marker]
    if len(plain) == 1 and plain[0].specifier:
        return plain[0].specifier
    if len(lines) == 1 and lines[0].specifier:
        return lines[0].specifier
    if fallback:
        return fallback
    raise CannotFix(f"vLLM {target} requires {name} differently by platform: " + "; ".join(r.text for r in lines))


def specifier_change(fact: Fact, new: str, description: str, applicability: Applicability) -> Planned:
    """Setting the specifier of requirement ``fact`` to ``new`` (in a shell line, the whole
    requirement is written again, quoted as one word when it must be)."""
    spans = fact.spans
    if spans is not None and spans.value is None and spans.note:
        raise CannotFix(spans.note)
    if spans is None or spans.value is None:
        raise CannotFix("the scanner could not tell where the specifier is written; set it by hand")
    found = specifier_offsets(fact.raw)
    if spans.syntax == "shell" and spans.word is not None and found is not None:
        written = fact.raw[: found[0]] + new + fact.raw[found[1] :]
        change = Change(spans.word, written, expect=None, syntax="shell")
    else:
        change = Change(spans.value, new, syntax="")
    becomes = (fact.kind.value, fact.name, _normalised(new))
    return Planned((change,), False, (becomes,), description, applicability)


def _normalised(specifier: str) -> str:
    return str(SpecifierSet(specifier))


def _set_specifier(finding: Finding, target: Version) -> Planned:
    fact, fix = finding.fact, finding.rule.fix
    if fact.kind != FactKind.REQUIREMENT:
        raise CannotFix("set_specifier applies to requirements only")
    new = target_specifier(fact.name, target, fix.replacement)
    return specifier_change(fact, new, describe(fact, fix.action, new), fix.applicability)


def version_change(fact: Fact, target: Version, description: str) -> Planned:
    """Bumping the version vLLM image or pin ``fact`` names to ``target``, where it is
    written: the tag's version, the ``ARG`` default it comes from, or the specifier moved
    to admit ``target`` in the style written (:func:`~.specifiers.admitting`).

    Raises:
        CannotFix: with the scanner's reason, or because it recorded no place.
    """
    spans = fact.spans
    if spans is not None and spans.note:
        raise CannotFix(spans.note)
    if fact.kind == FactKind.REQUIREMENT and (spans is None or spans.version is None):
        written = spans_value_text(fact)
        moved = admitting(written, target) if written is not None else None
        if moved is None:
            raise CannotFix(f"{fact.raw}: no specifier in that style admits {target}; set it by hand")
        return specifier_change(fact, moved, description, Applicability.SAFE)
    if spans is None or spans.version is None:
        raise CannotFix("the scanner could not tell where the version is written; set it by hand")
    if fact.kind == FactKind.IMAGE:
        tag = fact.value or ""
        becomes: Signature = (fact.kind.value, fact.name, tag.replace(_version_text(tag), str(target), 1))
    else:
        becomes = (fact.kind.value, fact.name, f"=={target}")
    change = Change(spans.version, str(target))
    return Planned((change,), False, (becomes,), description, Applicability.SAFE)


def spans_value_text(fact: Fact) -> str | None:
    """The specifier of requirement ``fact`` as written (from its raw text)."""
    found = specifier_offsets(fact.raw)
    return None if found is None else fact.raw[found[0] : found[1]]


def _version_text(tag: str) -> str:
    found = tag_version_span(tag)
    return "" if found is None else tag[found[0] : found[1]]


def moved_value(fact: Fact) -> object:
    """The JSON value a moved flag's value becomes: a number, ``true``/``false``, an object or a
    list as written, else the text; a switch without a value is ``true`` (``--no-x``: ``false``)."""
    if fact.value is None:
        return not fact.raw.lstrip("-").startswith("no-")
    try:
        parsed = json.loads(fact.value)
    except ValueError:
        return fact.value
    return parsed if isinstance(parsed, (int, float, bool, dict, list)) else fact.value


def _json_text(value: object) -> str:
    return value if isinstance(value, str) else json.dumps(value)


def _keys_read(target_arg: str, data: dict[str, object]) -> tuple[Signature, ...]:
    """The facts the scan reads for the keys of a ``--*-config`` JSON value (one per key; a
    flag whose name does not end in ``_config`` has none)."""
    if not target_arg.endswith("_config"):
        return ()
    return tuple((FactKind.ARG.value, f"{target_arg}.{k}", _json_text(v)) for k, v in data.items())


def _movable(finding: Finding, launch: Sequence[Fact]) -> tuple[str, object, tuple[Change, ...]]:
    """``(key, JSON value, checks)`` of one value to move, or why it cannot move.

    Raises:
        CannotFix: the flag is not on a command line, not written as it reads (a variable,
            quoting the fix cannot copy), given twice, or an old backend options string.
    """
    fact, fix = finding.fact, finding.rule.fix
    key = (fix.replacement or "").partition(".")[2]
    spans = fact.spans
    if fact.kind != FactKind.ARG or fact.origin != "cli":
        raise CannotFix("the value can only be moved on a command line; move it by hand")
    if spans is not None and spans.cut is None and spans.note:
        raise CannotFix(spans.note)
    if spans is None or spans.name is None or spans.cut is None:
        raise CannotFix("the flag is written through a variable or quoting the fix cannot place; move it by hand")
    if fact.value is not None and spans.value is None:
        raise CannotFix("the value comes from a variable or is quoted so that it cannot be copied as written; move it by hand")
    if fact.value is not None and any(c in fact.value for c in "$`"):
        raise CannotFix(f"the value comes from a variable ({fact.value}); move it by hand")
    if key == "backend" and fact.value is not None and ":" in fact.value:
        raise CannotFix(f"backend options ({fact.value}) have no one-to-one config keys; move them by hand")
    twice = [s for s in launch if s.kind == FactKind.ARG and s.name == fact.name and s is not fact]
    if twice:
        raise CannotFix(f"{fact.raw} is given {len(twice) + 1} times (argparse keeps the last); keep one by hand")
    checks: tuple[Change, ...] = ()
    if spans.value is not None and fact.value is not None:
        checks = (Change(spans.value, fact.value, expect=fact.value),)  # written as it reads
    return key, moved_value(fact), checks


def plan_moves(findings: Sequence[Finding], siblings: Sequence[Fact] = ()) -> Planned:
    """The one fix that moves the values of ``findings`` (``move_to_config`` findings of one
    launch, into one config flag) into that flag: merged into its JSON when the launch sets
    it already, else written as it in place of the first flag; the other flags go. All of
    them move, or none does.

    Raises:
        CannotFix: one of them cannot move (the reason names it), or the config flag the
            launch sets cannot be merged into.
    """
    first = min(findings, key=lambda f: (f.location.line or 0, f.location.column or 0))
    target_arg = (first.rule.fix.replacement or "").partition(".")[0]
    group = first.fact.group
    launch = [s for s in siblings if group is not None and s.group == group]
    moved = {id(f.fact) for f in findings}
    values: dict[str, object] = {}
    checks: list[Change] = []
    for finding in sorted(findings, key=lambda f: (f.location.line or 0, f.location.column or 0)):
        try:
            key, value, check = _movable(finding, launch)
        except CannotFix as exc:
            raise CannotFix(f"{finding.fact.raw}: {exc}" if len(findings) > 1 else str(exc)) from None
        if key in values:
            raise CannotFix(f"two flags set {key} of {target_arg}; keep one by hand")
        values[key] = value
        checks.extend(check)
    flag = _flag_style(first.fact.raw, target_arg)
    present = [s for s in launch if s.kind == FactKind.ARG and s.name == target_arg and id(s) not in moved]
    cuts = [f for f in findings if f is not first or present]
    changes: list[Change] = []
    for f in cuts:
        cut_spans = f.fact.spans
        assert cut_spans is not None and cut_spans.cut is not None  # _movable checked it
        changes.append(Change(cut_spans.cut, "", inside=cut_spans.name))
    others: list[tuple[Fact, tuple[Signature, ...]]] = [(f.fact, ()) for f in cuts if f is not first]
    applicability = max((f.rule.fix.applicability for f in findings), key=lambda a: a == Applicability.UNSAFE)
    names = ", ".join(f.fact.raw for f in findings)
    if present:
        (config,) = present if len(present) == 1 else (None,)
        try:
            current = json.loads(config.value or "") if config is not None else None
        except ValueError:
            current = None
        held = config.spans if config is not None else None
        if config is None or not isinstance(current, dict) or held is None or (held.value is None and held.word is None):
            raise CannotFix(f"the launch sets {flag} in a way that cannot be merged: put {', '.join(values)} into it by hand")
        clash = sorted(set(values) & set(current))
        if clash:
            raise CannotFix(f"{flag} sets {', '.join(clash)} already; decide which value stays by hand")
        merged = {**current, **values}
        text = json.dumps(merged)
        # The value may be written with escapes (a JSON string in a YAML or JSON list): the
        # scan after the fix checks what it reads as. --flag={...} is written again whole.
        into = (
            Change(held.word, f"{config.raw}={text}", syntax=held.syntax or "shell")
            if held.word is not None
            else Change(held.value, text, syntax=held.syntax or "shell")  # type: ignore[arg-type]
        )
        changes.append(into)
        others.append((config, ((FactKind.ARG.value, target_arg, text), *_keys_read(target_arg, merged))))
        others.extend((s, ()) for s in launch if s.kind == FactKind.ARG and s.name.startswith(target_arg + "."))
        return Planned(
            (*changes, *checks), True, (), f"move {names} into {flag}", applicability, tuple(others), target_arg
        )
    text = json.dumps(values)
    spans = first.fact.spans
    assert spans is not None and spans.name is not None
    if spans.word is not None:
        # --flag=value: one word, written again whole (and quoted as one word).
        expect = f"{first.fact.raw}={first.fact.value}"
        changes.append(Change(spans.word, f"{flag}={text}", expect=expect, syntax=spans.syntax or "shell"))
    elif spans.value is not None:
        changes.append(Change(spans.name, flag, expect=first.fact.raw))
        changes.append(Change(spans.value, text, expect=first.fact.value, syntax=spans.syntax or "shell"))
    elif spans.syntax == "shell":
        # A switch: its word becomes the config flag with its JSON as one more word.
        changes.append(Change(spans.name, f"{flag} {render(text, 'shell', '') or text}", expect=first.fact.raw))
    else:
        raise CannotFix(f"{first.fact.raw} takes no value: write {flag} '{text}' in its place by hand")
    checks = [c for c in checks if not any(c.span == ch.span for ch in changes)]
    becomes = ((FactKind.ARG.value, target_arg, text), *_keys_read(target_arg, values))
    return Planned(
        (*changes, *checks), False, becomes, f"move {names} -> {flag} {text}", applicability, tuple(others), target_arg
    )


def plan_finding(finding: Finding, target: Version, siblings: Sequence[Fact] = ()) -> Planned:
    """The fix of ``finding`` as changes to its fact's spans.

    Args:
        finding: the finding.
        target: the release upgraded to.
        siblings: the other facts of the finding's file (a move into a config flag must
            not clash with that flag given already).

    Raises:
        CannotFix: display-only, no mechanical fix, or the fact's spans do not say where.
    """
    fix = finding.rule.fix
    if fix.action not in MECHANICAL or fix.applicability == Applicability.DISPLAY_ONLY:
        raise CannotFix("no mechanical fix")
    if finding.location.path is None:
        raise CannotFix("in the environment: change it by hand")
    if fix.action == FixAction.REMOVE_ARG:
        return _remove(finding)
    if fix.action == FixAction.RENAME:
        return _rename(finding)
    if fix.action == FixAction.REPLACE_VALUE:
        return _replace_value(finding)
    if fix.action == FixAction.SET_SPECIFIER:
        return _set_specifier(finding, target)
    if fix.action == FixAction.MOVE_TO_CONFIG:
        return plan_moves([finding], siblings)
    # bump_image
    if finding.fact.kind != FactKind.IMAGE:
        raise CannotFix("bump_image applies to images only")
    version = Version(fix.replacement) if fix.replacement else target
    return version_change(finding.fact, version, f"bump {finding.fact.raw} to {version}")
