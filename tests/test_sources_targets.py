"""Annotated targets for every configuration source: ``tests/targets/<source>/``.

Each directory is scanned as one repository (so cross-file references, such as a systemd
``EnvironmentFile=`` or a Kubernetes ``envFrom`` ConfigMap, resolve) with the bundled
packs plus ``tests/targets/rules/test-pack.yaml``, from vLLM 0.25.0 to the test pack's
release. Annotations, Semgrep style:

- ``# ruleid: ID[, ID]``: the next line that is not an annotation (or, written after code,
  the same line) must carry a finding of each rule;
- ``# ok: ID[, ID]``: that line must carry none of them.

JSON cannot hold comments: ``<file>.expect`` lists ``LINE ID`` (must) or ``LINE ok ID``
(must not) pairs instead.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from vllm_upgrade_check.engine import run_scan
from vllm_upgrade_check.knowledge.registry import Registry, load_registry
from vllm_upgrade_check.model.findings import Report
from vllm_upgrade_check.model.options import ScanOptions

TARGETS = Path(__file__).resolve().parent / "targets"
TEST_PACK = TARGETS / "rules" / "test-pack.yaml"
SOURCES = sorted(p.name for p in TARGETS.iterdir() if p.is_dir() and p.name != "rules")
_ANNOTATION = re.compile(
    r"#\s*(ruleid|ok):\s*([A-Z][A-Z0-9]*-[0-9]{3,4}(?:\s*,\s*[A-Z][A-Z0-9]*-[0-9]{3,4})*)"
)

Expectation = tuple[str, int, str, bool]
"""(relative path, line, rule id, must match)."""


def annotations(path: Path, relpath: str) -> list[Expectation]:
    """The expectations written in ``path`` (comments, or the ``.expect`` sidecar)."""
    out: list[Expectation] = []
    if path.suffix == ".json":
        sidecar = path.with_name(path.name + ".expect")
        for row in sidecar.read_text().split("\n"):
            parts = row.split()
            if parts:
                must = not (len(parts) == 3 and parts[1] == "ok")
                out.append((relpath, int(parts[0]), parts[-1], must))
        return out
    lines = path.read_text().split("\n")
    pending: list[tuple[str, str]] = []
    for number, line in enumerate(lines, start=1):
        match = _ANNOTATION.search(line)
        if match:
            ids = [(match.group(1), i.strip()) for i in match.group(2).split(",")]
            if line[: match.start()].strip():
                out.extend((relpath, number, i, kind == "ruleid") for kind, i in ids)
            else:
                pending.extend(ids)
            continue
        out.extend((relpath, number, i, kind == "ruleid") for kind, i in pending)
        pending = []
    return out


@pytest.fixture(scope="module")
def registry() -> Registry:
    """Bundled packs plus the test pack."""
    return load_registry([TEST_PACK])


def scan_dir(root: Path, registry: Registry) -> Report:
    """Scan ``root`` from 0.25.0 to the test pack's release."""
    return run_scan(ScanOptions.of(paths=[root], to_version="99.0.0", from_version="0.25.0"), registry)


@pytest.mark.parametrize("source", SOURCES)
def test_annotated_targets(source: str, registry: Registry) -> None:
    root = TARGETS / source
    report = scan_dir(root, registry)
    found = {(f.location.path, f.location.line, f.rule.id) for f in report.findings}
    expected: list[Expectation] = []
    for path in sorted(root.rglob("*")):
        if path.is_file() and not path.name.endswith(".expect"):
            expected.extend(annotations(path, path.relative_to(root).as_posix()))
    assert any(must for *_x, must in expected), f"{source}: no ruleid annotation"
    missing = [e for e in expected if e[3] and e[:3] not in found]
    unwanted = [e for e in expected if not e[3] and e[:3] in found]
    assert not missing, f"{source}: expected findings not reported: {missing}\nfound: {sorted(found)}"
    assert not unwanted, f"{source}: findings on ok lines: {unwanted}"
    assert not [s for s in report.skipped if s.configures_vllm], report.skipped


def test_annotation_reader_sees_both_forms(tmp_path: Path) -> None:
    target = tmp_path / "x.yaml"
    target.write_text("# ruleid: TST-001, TST-002\n# ok: TST-003\na: 1\nb: 2  # ok: TST-004\n")
    assert annotations(target, "x.yaml") == [
        ("x.yaml", 3, "TST-001", True),
        ("x.yaml", 3, "TST-002", True),
        ("x.yaml", 3, "TST-003", False),
        ("x.yaml", 4, "TST-004", False),
    ]
