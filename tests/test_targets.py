"""Annotated targets: every ``ruleid: ID`` line has that finding, no ``ok: ID`` line has it.

Each file under ``tests/targets_py/<scanner>/`` is scanned on its own with the bundled packs
plus the test pack in ``tests/targets_py/rules/``, from 0.26.0 to 0.28.0. An annotation in a
comment that holds nothing else applies to the next line that is not an annotation; one
after code applies to its own line. Files that cannot hold comments (JSON) list their
annotations in a sidecar ``FILE.expect`` as ``LINE ruleid: ID`` / ``LINE ok: ID``.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from vllm_upgrade_check.engine import run_scan
from vllm_upgrade_check.knowledge.registry import load_registry
from vllm_upgrade_check.model.options import ScanOptions
from vllm_upgrade_check.sources.sniff import is_prose

TARGETS = Path(__file__).resolve().parent / "targets_py"
RULES = TARGETS / "rules"
_ANNOTATION = re.compile(r"(?:#|//|<!--)\s*(ruleid|ok):\s*([A-Z][A-Z0-9]*-[0-9]{3,4})")


def annotations(path: Path) -> list[tuple[str, str, int]]:
    """``(kind, rule id, line)`` of every annotation of a target file."""
    sidecar = path.with_name(path.name + ".expect")
    if sidecar.exists():
        out = []
        for row in sidecar.read_text(encoding="utf-8").splitlines():
            m = re.match(r"\s*(\d+)\s+(ruleid|ok):\s*(\S+)", row)
            if m:
                out.append((m.group(2), m.group(3), int(m.group(1))))
        return out
    lines = path.read_text(encoding="utf-8").splitlines()
    out = []
    pending: list[tuple[str, str]] = []
    for number, text in enumerate(lines, start=1):
        found = [(m.group(1), m.group(2)) for m in _ANNOTATION.finditer(text)]
        code = _ANNOTATION.split(text)[0].strip()
        if found and not code:
            pending.extend(found)
            continue
        out.extend((kind, rule, number) for kind, rule in [*pending, *found])
        pending = []
    return out


def target_files() -> list[Path]:
    """Every target file (not the rules or sidecars)."""
    return sorted(
        p
        for p in TARGETS.rglob("*")
        if p.is_file() and RULES not in p.parents and not p.name.endswith(".expect")
    )


@pytest.fixture(scope="module")
def registry():
    return load_registry([RULES])


@pytest.mark.parametrize("path", target_files(), ids=lambda p: p.relative_to(TARGETS).as_posix())
def test_target(path: Path, registry) -> None:
    expected = annotations(path)
    assert expected, f"{path} has no annotations"
    # Documentation named on the command line is refused (exit 2): a trap is scanned as a
    # file of its directory, as a repository scan meets it.
    prose = is_prose(path.name)
    root = path.parent if prose else path
    report = run_scan(ScanOptions.of(paths=[root], to_version="0.28.0", from_version="0.26.0"), registry)
    seen = {(f.rule.id, f.location.line) for f in report.findings if not prose or f.location.path == path.name}
    missing = [(rule, line) for kind, rule, line in expected if kind == "ruleid" and (rule, line) not in seen]
    unwanted = [(rule, line) for kind, rule, line in expected if kind == "ok" and (rule, line) in seen]
    assert not missing and not unwanted, f"missing {missing}, unwanted {unwanted}; all: {sorted(seen)}"


def test_annotations_are_read() -> None:
    """The runner itself: own-line annotations apply to the next code line."""
    path = TARGETS / "python" / "engine_kwargs.py"
    got = annotations(path)
    assert ("ruleid", "TST0280-001", 12) in got
    assert ("ruleid", "TST0280-007", 52) in got
