"""``pip freeze`` snapshots kept in a deployment repository (``snapshots/pip-freeze.txt``, a
support bundle, CI's record of the image it built): the environment they describe is checked
as ``env --freeze FILE`` checks it, each fact at the file and line of its distribution.

A snapshot is recognised by content (:func:`~vllm_upgrade_check.sources.sniff.looks_like_freeze_snapshot`:
exact pins only, in the order the freeze commands write them, no compile header); a file taken
by its name as a requirements file (``requirements*.txt``, ``constraints*.txt``) or named by
an ``-r``/``-c`` include stays a requirements file (pins to install from). The text is read
by the parser ``env --freeze`` uses (:func:`~vllm_upgrade_check.sources.host.environment.parse_freeze_text`)
and turned into facts by the same function (:func:`~vllm_upgrade_check.sources.host.environment.environment_facts`),
so the two give the same findings.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace

from vllm_upgrade_check.errors import UsageError
from vllm_upgrade_check.model.facts import FactKind, Location, Skipped
from vllm_upgrade_check.sources.host.environment import environment_facts, parse_freeze_text
from vllm_upgrade_check.sources.scanners.base import ScanItem, Scanner, SourceFile
from vllm_upgrade_check.sources.sniff import FREEZE_SNAPSHOT

SNAPSHOT_ORIGIN = "env"
"""The origin of a snapshot's facts: an installed environment's (the environment rules ask for it)."""


class FreezeSnapshotScanner(Scanner):
    """``distribution`` facts (one per line of the snapshot) and the ``torch_cuda``/``torch_hip``
    ``platform`` facts of its torch line, each at its file and line; origin ``env``."""

    name = "freeze-snapshot"

    def accepts_name(self, name: str) -> bool | None:
        return None if name == FREEZE_SNAPSHOT else False

    def accepts(self, source: SourceFile) -> bool:
        return source.name == FREEZE_SNAPSHOT

    def scan(self, source: SourceFile) -> Iterator[ScanItem]:
        try:
            environment, lines = parse_freeze_text(source.text, source.relpath)
        except UsageError as exc:  # the sniffer let no such line through; kept for safety
            yield Skipped(source.relpath, str(exc), configures_vllm=source.mentions_vllm())
            return
        widths = source.text.split("\n")
        for fact in environment_facts(environment):
            name = "torch" if fact.kind == FactKind.PLATFORM else fact.name
            line = lines.get(name)
            if line is None:
                continue
            end = len(widths[line - 1]) + 1 if line <= len(widths) else None
            where = Location(source.relpath, line, 1, line, end)
            yield replace(fact, location=where, origin=SNAPSHOT_ORIGIN, scanner=self.name)
