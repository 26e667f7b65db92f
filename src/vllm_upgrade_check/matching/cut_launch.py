"""Built-in check ``VUC000-017``: a launch that a comment cuts short.

bash ends a command at a comment even when the line before it ends in a continuation
(``\\``): in

    vllm serve my-model \\
      --tensor-parallel-size 2 \\
      # --enforce-eager \\
      --max-model-len 8192

``vllm serve`` runs with ``--tensor-parallel-size 2`` only, and ``--max-model-len 8192`` runs
as a command of its own after the server exits. The words after the comment are not checked
as the launch's (they never reach vLLM), so the check says where they are instead: a warning,
at the comment, naming them. The shell parser records the cut (:class:`~vllm_upgrade_check.
parsing.shell.Cut`); the shell scanner puts it on the launch fact (:data:`~vllm_upgrade_check.
model.facts.CUT_NOTE`). A Dockerfile drops comment lines inside a continued instruction, so
its instructions are never cut.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace

from vllm_upgrade_check.matching.checks import built_in_finding
from vllm_upgrade_check.matching.matcher import VersionContext
from vllm_upgrade_check.model.facts import CUT_NOTE, Fact, FactKind, Location
from vllm_upgrade_check.model.findings import Finding
from vllm_upgrade_check.model.pack import (
    AbsentArgMatch,
    Applicability,
    Docs,
    Fix,
    FixAction,
    MatchKind,
    Rule,
    Severity,
    UnverifiedEvidence,
)

CUT_LAUNCH_ID = "VUC000-017"
"""Id of the built-in rule for a launch a comment cuts short."""


def cut_launch_rule(entry: str, words: str) -> Rule:
    """The warning for launch ``entry`` (``vllm serve``) whose continuation a comment ends,
    leaving ``words`` (as written, space-joined) to run as a command of their own."""
    return Rule(
        id=CUT_LAUNCH_ID,
        name="launch-cut-by-comment",
        severity=Severity.WARNING,
        match=AbsentArgMatch(kind=MatchKind.ABSENT_ARG, name=entry),
        message=(
            f"this comment ends the {entry} command although the line before it is continued: "
            f"{words} run as a separate command after the server exits and never reach vLLM "
            "(they were not checked as its flags)"
        ),
        fix=Fix(
            summary="Move the comment out of the continued command (after it, or above its first line), or delete it.",
            action=FixAction.NONE,
            applicability=Applicability.DISPLAY_ONLY,
        ),
        docs=Docs(
            why=(
                "A line continuation does not carry across a comment: bash ends the command at the comment, "
                "so the flags written after it are a command of their own."
            ),
            example="vllm serve my-model \\\n  # --enforce-eager \\\n  --max-model-len 8192",
            instead="# --enforce-eager is off for now\nvllm serve my-model \\\n  --max-model-len 8192",
        ),
        evidence=[
            UnverifiedEvidence(
                kind="unverified",
                reason="bash(1), COMMENTS: a word beginning with # causes that word and the rest of the line to be ignored",
            )
        ],
        tags=["launch"],
    )


def documented_cut_launch_rule() -> Rule:
    """The cut-launch rule as ``explain`` shows it (no particular launch)."""
    return cut_launch_rule("vllm serve", "--max-model-len 8192")


def cut_at(fact: Fact) -> tuple[int, int, str] | None:
    """``(line, column, words)`` of the comment that cuts launch ``fact`` short, from its
    :data:`~vllm_upgrade_check.model.facts.CUT_NOTE`; ``None`` when nothing cuts it."""
    note = fact.spans.note if fact.spans is not None else ""
    if not note.startswith(CUT_NOTE):
        return None
    where, _, words = note[len(CUT_NOTE) :].partition(" ")
    line, _, column = where.partition(":")
    return int(line), int(column), words


def cut_launch_findings(facts: Iterable[Fact], versions: VersionContext) -> list[Finding]:
    """One warning per launch fact a comment cuts short, placed at the comment."""
    out = []
    for fact in facts:
        if fact.kind != FactKind.LAUNCH or (cut := cut_at(fact)) is None:
            continue
        line, column, words = cut
        at = replace(fact, location=Location(fact.location.path, line, column), spans=None)
        out.append(built_in_finding(cut_launch_rule(fact.name, words), at, versions))
    return out
