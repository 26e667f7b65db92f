"""List the removals of the bundled rule packs that a later vLLM release takes back.

Usage: ``python scripts/list_readded.py [--rules-dir DIR]``

For each rule on a CLI flag or an env var whose release no longer defines it, and which a
later release (among those ``data/known_args.json`` covers) defines again, prints one line:
``RULE-ID SUBJECT: removed in R, defined again in A..B[, C..D]`` (the runs of releases that
define it again). A scan whose target is in one of those runs reports that rule's finding as
``info`` with no fix (see :mod:`vllm_upgrade_check.matching.readded`). Exits 0.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from packaging.version import Version

from vllm_upgrade_check.knowledge.known_args import known_args
from vllm_upgrade_check.knowledge.registry import load_registry
from vllm_upgrade_check.matching.readded import readded, rule_subject


def runs(versions: list[Version], releases: tuple[Version, ...]) -> list[tuple[Version, Version]]:
    """``versions`` (a subset of ``releases``, in order) as runs of consecutive releases."""
    out: list[tuple[Version, Version]] = []
    index = {r: i for i, r in enumerate(releases)}
    for v in versions:
        if out and index[v] == index[out[-1][1]] + 1:
            out[-1] = (out[-1][0], v)
        else:
            out.append((v, v))
    return out


def main(argv: list[str] | None = None) -> int:
    """Print the taken-back removals of the packs (the bundled ones, or ``--rules-dir``'s)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rules-dir", type=Path, default=None, help="packs to read instead of the bundled ones")
    args = parser.parse_args(argv)
    registry = load_registry([args.rules_dir], bundled=False) if args.rules_dir else load_registry()
    known = known_args()
    for pack, rule in sorted(registry.rules(), key=lambda pr: (pr[0].version, pr[1].id)):
        subject = rule_subject(rule)
        if subject is None:
            continue
        again = [t for t in known.releases if readded(known, subject[0], subject[1], pack.version, t) is not None]
        if not again:
            continue
        spans = ", ".join(str(a) if a == b else f"{a}..{b}" for a, b in runs(again, known.releases))
        print(f"{rule.id} {subject[1]}: removed in {pack.version}, defined again in {spans}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
