"""Check that every ``kind: wheel`` evidence item of the rule packs is true.

Usage: ``python scripts/check_evidence.py [--wheels DIR] [--rules-dir rules] [--window N] [--absence]``

For each wheel item of each pack in ``rules/`` it opens the wheel of the cited release
(``DIR/vllm-<release>-*.whl``, default ``/work/wheels``) and checks:

* the cited ``path`` is in the wheel (a file, or for ``.../`` a directory);
* with a ``line``: the file has that line (and ``end_line``), and a thing the item names
  occurs within ``--window`` lines of it (default 3). The names are the rule's match name in
  the spellings vLLM uses (``max_num_seqs``, ``--max-num-seqs``, an env var, a distribution, a
  model family) and the identifiers of the ``finding`` (``--flags``, ``ENV_VARS``,
  ``snake_names``, ``Dotted.names``, ``CamelCase``, backticked text). Where none does, the
  nearest line of the file that has one is suggested;
* with ``--absence``: an item without a line whose finding says ``no occurrence of X`` has no
  ``X`` in any text file under its path.

Prints one line per wrong item (``pack rule: text: problem``) and exits 1 if there is any. The
wheels are large and not in the repository, so this is a script for whoever curates packs,
not a test.
"""

from __future__ import annotations

import argparse
import re
import sys
import zipfile
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from packaging.utils import canonicalize_name

from vllm_upgrade_check.knowledge.registry import is_pack_name, load_pack_text
from vllm_upgrade_check.model.pack import MatchKind, Rule, WheelEvidence

RULES_DIR = Path(__file__).resolve().parents[1] / "rules"
WHEELS_DIR = Path("/work/wheels")

_FINDING_NAMES = (
    re.compile(r"`([^`]+)`"),
    re.compile(r"--[a-z0-9][a-z0-9-]*[a-z0-9]"),
    re.compile(r"\b[A-Z][A-Z0-9]*_[A-Z0-9_]+\b"),
    re.compile(r"\b[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+\b"),
    re.compile(r"\b[a-z][a-z0-9]*_[a-z0-9_]+\b"),
    re.compile(r"\b(?=[A-Za-z0-9]*[a-z])[A-Z][A-Za-z0-9]*[A-Z][A-Za-z0-9]*\b"),
    re.compile(r"vllm:[a-z0-9_:]+"),
    re.compile(r'"([^"]{4,})"'),
)
_COMMON = frozenset({"EngineArgs", "arg_utils", "environment_variables", "TypeError", "ModuleNotFoundError"})
_VERSION_LIKE = re.compile(r"^\d+(\.\d+)*")


@dataclass(frozen=True)
class Problem:
    """One wrong wheel item."""

    pack: str
    rule: str
    text: str
    problem: str

    def __str__(self) -> str:
        return f"{self.pack} {self.rule}: {self.text}: {self.problem}"


class Wheels:
    """The vLLM wheels of a directory, one open archive per release (read on demand)."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory

    @lru_cache(maxsize=4)  # noqa: B019 - one instance per run
    def archive(self, release: str) -> zipfile.ZipFile | None:
        found = sorted(self.directory.glob(f"vllm-{release}-*.whl"))
        return zipfile.ZipFile(found[0]) if found else None

    @lru_cache(maxsize=256)  # noqa: B019
    def lines(self, release: str, path: str) -> tuple[str, ...] | None:
        archive = self.archive(release)
        if archive is None or path not in archive.NameToInfo:
            return None
        return tuple(archive.read(path).decode("utf-8", "replace").splitlines())

    def has_dir(self, release: str, path: str) -> bool:
        archive = self.archive(release)
        return archive is not None and any(name.startswith(path) for name in archive.NameToInfo)

    def text_files(self, release: str, directory: str) -> Iterator[tuple[str, str]]:
        archive = self.archive(release)
        if archive is None:
            return
        for name in archive.namelist():
            if name.startswith(directory) and name.endswith((".py", ".json", ".yaml", ".txt", ".toml")):
                yield name, archive.read(name).decode("utf-8", "replace")


def rule_names(rule: Rule) -> set[str]:
    """The spellings of what ``rule`` matches as vLLM's sources write it."""
    match = rule.match
    name = match.name
    names = {name}
    if match.kind in (MatchKind.CLI_FLAG, MatchKind.ENGINE_ARG, MatchKind.ABSENT_ARG):
        names |= {"--" + name.replace("_", "-"), name.replace("_", "-")}
    if match.kind == MatchKind.DEPENDENCY:
        names |= {canonicalize_name(name), name.replace("-", "_")}
    if match.kind == MatchKind.PLATFORM and name == "python":
        names.add("Requires-Python")
    if match.kind == MatchKind.IMPORT:
        names |= {name.rsplit(".", 1)[-1], *(getattr(match, "names", None) or [])}
    if match.kind == MatchKind.MODEL:
        names |= {p.strip("*") for p in getattr(match, "patterns", []) if p.strip("*")}
    if match.kind == MatchKind.METRIC:
        names.add(name.removeprefix("vllm:"))
    names |= set(getattr(match, "values", None) or [])
    # what the rule's text names: architectures, config fields, quoted code
    names |= {
        n
        for n in finding_names(f"{rule.message} {rule.docs.why}")
        if len(n) >= 4 and n not in _COMMON and not n.endswith((".py", ".json", ".yaml"))
    }
    return {n for n in names if len(n) >= 3}


def finding_names(finding: str | None) -> set[str]:
    """The identifiers ``finding`` names (``--flags``, ``ENV_VARS``, dotted and snake names)."""
    out: set[str] = set()
    for pattern in _FINDING_NAMES:
        for hit in pattern.finditer(finding or ""):
            text = hit.group(1) if pattern.groups else hit.group(0)
            if _VERSION_LIKE.match(text) or text.startswith("vllm-"):
                continue
            out.add(text)
            if "." in text and not text.startswith("vllm:"):
                out.add(text.rsplit(".", 1)[-1])
    return {n for n in out if len(n) >= 3}


def _contains(text: str, names: Iterable[str]) -> bool:
    low = text.lower()
    return any(n.lower() in low for n in names)


def nearest(lines: tuple[str, ...], names: set[str], line: int) -> int | None:
    """The 1-based line nearest ``line`` that contains one of ``names``."""
    hits = [i for i, text in enumerate(lines, 1) if _contains(text, names)]
    return min(hits, key=lambda i: (abs(i - line), i)) if hits else None


def check_item(wheels: Wheels, rule: Rule, ev: WheelEvidence, window: int, absence: bool) -> str | None:
    """Why ``ev`` is wrong, or None."""
    if wheels.archive(ev.release) is None:
        return f"no wheel of vllm-{ev.release} in {wheels.directory}"
    if ev.path.endswith("/"):
        if not wheels.has_dir(ev.release, ev.path):
            return f"no directory {ev.path} in the wheel"
    elif wheels.lines(ev.release, ev.path) is None:
        return f"no file {ev.path} in the wheel"
    if ev.line is None:
        return check_absence(wheels, ev) if absence else None
    if rule.match.kind == MatchKind.IMPORT and ev.path.removesuffix(".py").removesuffix("/__init__").replace(
        "/", "."
    ) == rule.match.name:
        return None  # the module's own file
    lines = wheels.lines(ev.release, ev.path) or ()
    last = ev.end_line or ev.line
    if last > len(lines):
        return f"{ev.path} has {len(lines)} lines"
    names = rule_names(rule) | finding_names(ev.finding)
    low, high = max(1, ev.line - window), min(len(lines), last + window)
    if _contains("\n".join(lines[low - 1 : high]), names):
        return None
    best = nearest(lines, names, ev.line)
    where = f"; nearest at line {best}: {lines[best - 1].strip()[:80]!r}" if best else "; not in the file"
    return f"none of {sorted(names)} within {window} lines{where}"


_NO_OCCURRENCE = re.compile(r"no occurrence of (\S+?)[;,)]?(?:\s|$)")


def check_absence(wheels: Wheels, ev: WheelEvidence) -> str | None:
    """For ``no occurrence of X`` under a directory: where ``X`` does occur."""
    hit = _NO_OCCURRENCE.search(ev.finding or "")
    if hit is None:
        return None
    name = hit.group(1).strip("`'\"")
    word = re.compile(rf"(?<![\w-]){re.escape(name)}(?![\w-])")
    for path, text in wheels.text_files(ev.release, ev.path):
        hit = word.search(text)
        if hit:
            line = text[: hit.start()].count("\n") + 1
            return f"{name} occurs in {path}:{line}: {text.splitlines()[line - 1].strip()[:80]!r}"
    return None


def check_packs(rules_dir: Path, wheels: Wheels, window: int, absence: bool) -> Iterator[Problem]:
    for path in sorted(rules_dir.iterdir()):
        if not is_pack_name(path.name):
            continue
        pack = load_pack_text(path.read_text(encoding="utf-8"), str(path))
        for rule in pack.rules:
            for ev in rule.evidence:
                if isinstance(ev, WheelEvidence):
                    problem = check_item(wheels, rule, ev, window, absence)
                    if problem:
                        yield Problem(path.name, rule.id, ev.text[:160], problem)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--wheels", type=Path, default=WHEELS_DIR)
    parser.add_argument("--rules-dir", type=Path, default=RULES_DIR)
    parser.add_argument("--window", type=int, default=3)
    parser.add_argument("--absence", action="store_true", help="also check 'no occurrence of X' items")
    args = parser.parse_args(argv)
    problems = list(check_packs(args.rules_dir, Wheels(args.wheels), args.window, args.absence))
    for problem in problems:
        print(problem)
    print(f"{len(problems)} wrong wheel evidence item(s)", file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
