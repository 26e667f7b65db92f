"""Annotated targets, one runner and one syntax (Semgrep's):

- ``# ruleid: ID[, ID]`` (also after ``//`` or ``<!--``): the next line that is not an
  annotation (or, written after code, the same line) must carry a finding of each rule;
- ``# ok: ID[, ID]``: that line must carry none of them.

Files that cannot hold comments (JSON) list theirs in a sidecar ``FILE.expect``, one
``LINE ruleid: ID`` or ``LINE ok: ID`` per line.

Three sets of targets run through it:

1. ``tests/targets_py/<scanner>/``: each file scanned on its own with the bundled packs plus
   ``tests/targets_py/rules/``, from 0.26.0 to 0.28.0;
2. ``tests/targets/<source>/``: each directory scanned as one repository (cross-file
   references resolve) with the bundled packs plus ``tests/targets/rules/test-pack.yaml``,
   from 0.25.0 to the test pack's release;
3. every bundled rule's ``docs.example``: written to a file of the kind it shows (a shell
   script, a Dockerfile, Python, a requirements file; a metric rule's PromQL inside a
   Prometheus rule), scanned from the release before the rule's to the rule's release, and
   the rule must fire on it - so the example ``explain`` shows is one the tool recognises.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from vllm_upgrade_check.engine import run_scan
from vllm_upgrade_check.knowledge.registry import Registry, load_registry
from vllm_upgrade_check.model.options import ScanOptions
from vllm_upgrade_check.model.pack import MatchKind, Pack, Rule
from vllm_upgrade_check.sources.sniff import is_prose

HERE = Path(__file__).resolve().parent
FILE_TARGETS = HERE / "targets_py"
FILE_RULES = FILE_TARGETS / "rules"
REPO_TARGETS = HERE / "targets"
REPO_PACK = REPO_TARGETS / "rules" / "test-pack.yaml"
REPOS = sorted(p.name for p in REPO_TARGETS.iterdir() if p.is_dir() and p.name != "rules")

_IDS = r"[A-Z][A-Z0-9]*-[0-9]{3,4}(?:\s*,\s*[A-Z][A-Z0-9]*-[0-9]{3,4})*"
_ANNOTATION = re.compile(rf"(?:#|//|<!--)\s*(ruleid|ok):\s*({_IDS})")
_SIDECAR = re.compile(rf"\s*(\d+)\s+(ruleid|ok):\s*({_IDS})\s*$")

Expectation = tuple[str, int, str, bool]
"""(path relative to the scanned root, line, rule id, must match)."""


def _ids(text: str) -> list[str]:
    return [i.strip() for i in text.split(",")]


def annotations(path: Path, relpath: str) -> list[Expectation]:
    """The expectations of one target file: its comments, or its ``.expect`` sidecar.

    Raises:
        AssertionError: a sidecar row that is not ``LINE ruleid|ok: ID``.
    """
    sidecar = path.with_name(path.name + ".expect")
    out: list[Expectation] = []
    if sidecar.exists():
        for row in sidecar.read_text(encoding="utf-8").splitlines():
            if not row.strip():
                continue
            m = _SIDECAR.match(row)
            assert m, f"{sidecar}: not 'LINE ruleid: ID' or 'LINE ok: ID': {row!r}"
            out.extend((relpath, int(m.group(1)), i, m.group(2) == "ruleid") for i in _ids(m.group(3)))
        return out
    pending: list[tuple[str, str]] = []
    for number, text in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        found = [(m.group(1), i) for m in _ANNOTATION.finditer(text) for i in _ids(m.group(2))]
        code = _ANNOTATION.split(text)[0].strip()
        if found and not code:
            pending.extend(found)
            continue
        out.extend((relpath, number, rule, kind == "ruleid") for kind, rule in [*pending, *found])
        pending = []
    return out


def check(expected: list[Expectation], found: set[tuple[str, int, str]], what: str, traps_only: bool = False) -> None:
    """Every ``ruleid`` expectation found, no ``ok`` one; a target without any ``ruleid``
    line only when ``traps_only`` (a file of traps, such as a README)."""
    assert expected, f"{what}: no annotation"
    assert traps_only or any(must for *_x, must in expected), f"{what}: no ruleid annotation"
    missing = [e for e in expected if e[3] and e[:3] not in found]
    unwanted = [e for e in expected if not e[3] and e[:3] in found]
    assert not missing and not unwanted, f"{what}: missing {missing}, unwanted {unwanted}; found {sorted(found)}"


# --------------------------------------------------------------------------- 1. one file each


def file_targets() -> list[Path]:
    """Every single-file target (not the rules or sidecars)."""
    return sorted(
        p
        for p in FILE_TARGETS.rglob("*")
        if p.is_file() and FILE_RULES not in p.parents and not p.name.endswith(".expect")
    )


@pytest.fixture(scope="module")
def file_registry() -> Registry:
    return load_registry([FILE_RULES])


@pytest.mark.parametrize("path", file_targets(), ids=lambda p: p.relative_to(FILE_TARGETS).as_posix())
def test_file_target(path: Path, file_registry: Registry) -> None:
    expected = annotations(path, path.name)
    # Documentation named on the command line is refused (exit 2): a trap is scanned as a
    # file of its directory, as a repository scan meets it.
    prose = is_prose(path.name)
    root = path.parent if prose else path
    report = run_scan(ScanOptions.of(paths=[root], to_version="0.28.0", from_version="0.26.0"), file_registry)
    found = {
        (path.name, f.location.line or 0, f.rule.id)
        for f in report.findings
        if not prose or f.location.path == path.name
    }
    check(expected, found, path.name, traps_only=True)


# --------------------------------------------------------------------------- 2. one repository each


@pytest.fixture(scope="module")
def repo_registry() -> Registry:
    return load_registry([REPO_PACK])


@pytest.mark.parametrize("source", REPOS)
def test_repository_target(source: str, repo_registry: Registry) -> None:
    root = REPO_TARGETS / source
    report = run_scan(ScanOptions.of(paths=[root], to_version="99.0.0", from_version="0.25.0"), repo_registry)
    found = {(f.location.path or "", f.location.line or 0, f.rule.id) for f in report.findings}
    expected: list[Expectation] = []
    for path in sorted(root.rglob("*")):
        if path.is_file() and not path.name.endswith(".expect"):
            expected.extend(annotations(path, path.relative_to(root).as_posix()))
    check(expected, found, source)
    assert not [s for s in report.skipped if s.configures_vllm], report.skipped


# --------------------------------------------------------------------------- 3. every rule's example

_REQUIREMENT_LINE = re.compile(r"^[A-Za-z0-9_.-]+\s*(\[[^\]]*\])?\s*(==|>=|<=|~=|!=|<|>)")
_PYTHON = re.compile(r"^\s*(from|import)\s+\w|\b(LLM|EngineArgs|AsyncEngineArgs|SamplingParams)\(", re.M)
_DOCKERFILE = re.compile(r"^(FROM|ARG)\s", re.M)

NOT_FROM_FILES = {
    MatchKind.PLATFORM: "a platform rule is matched against the host (env, scan --env, --python-version); "
    "a Dockerfile's python:X.Y base image is not read as the Python in use yet",
}
"""Match kinds whose examples describe a host, not a file: checked by the host tests."""


def example_file(rule: Rule) -> tuple[str, str]:
    """``(file name, text)`` to write ``rule``'s example to, by what the example is."""
    example = (rule.docs.example or "").strip()
    if rule.match.kind == MatchKind.METRIC:
        rule_file = "groups:\n  - name: vllm\n    rules:\n      - alert: Example\n        expr: {} > 0\n"
        return "alerts.rules.yml", rule_file.format(example)
    if _DOCKERFILE.match(example):
        return "Dockerfile", example + "\n"
    if all(_REQUIREMENT_LINE.match(line) for line in example.splitlines()):
        return "requirements.txt", example + "\n"
    if _PYTHON.search(example):
        return "app.py", example + "\n"
    if re.match(r"^(services|apiVersion):", example):
        return "deploy.yaml", example + "\n"
    return "run.sh", example + "\n"


def _examples() -> list[tuple[Pack, Rule]]:
    return [(pack, rule) for pack, rule in load_registry().rules() if rule.docs.example]


@pytest.fixture(scope="module")
def bundled() -> Registry:
    return load_registry()


@pytest.mark.parametrize("pack_rule", _examples(), ids=lambda pr: pr[1].id)
def test_rule_example(pack_rule: tuple[Pack, Rule], bundled: Registry, tmp_path: Path) -> None:
    pack, rule = pack_rule
    if rule.match.kind in NOT_FROM_FILES or rule.match.when:
        pytest.skip(NOT_FROM_FILES.get(rule.match.kind, "a rule with when: conditions needs a host"))
    name, text = example_file(rule)
    (tmp_path / name).write_text(text, encoding="utf-8")
    releases = list(bundled.releases)
    index = releases.index(pack.version)
    start = str(releases[index - 1]) if index else None
    report = run_scan(ScanOptions.of(paths=[tmp_path], to_version=pack.release, from_version=start), bundled)
    fired = sorted({f.rule.id for f in report.findings})
    assert rule.id in fired, f"{rule.id}'s example, as {name}:\n{text}\ngave only {fired}"


def test_most_rules_have_a_runnable_example(bundled: Registry) -> None:
    rules = [rule for _pack, rule in bundled.rules()]
    runnable = [r for r in rules if r.docs.example and r.match.kind not in NOT_FROM_FILES and not r.match.when]
    assert len(runnable) >= 0.9 * len(rules), f"{len(runnable)} of {len(rules)} rules have a file example"


# --------------------------------------------------------------------------- the runner itself


def test_annotation_reader_sees_every_form(tmp_path: Path) -> None:
    target = tmp_path / "x.yaml"
    target.write_text("# ruleid: TST-001, TST-002\n# ok: TST-003\na: 1\nb: 2  # ok: TST-004\n")
    assert annotations(target, "x.yaml") == [
        ("x.yaml", 3, "TST-001", True),
        ("x.yaml", 3, "TST-002", True),
        ("x.yaml", 3, "TST-003", False),
        ("x.yaml", 4, "TST-004", False),
    ]
    data = tmp_path / "d.json"
    data.write_text("{}\n")
    (tmp_path / "d.json.expect").write_text("1 ruleid: TST-005\n2 ok: TST-006, TST-007\n")
    assert annotations(data, "d.json") == [
        ("d.json", 1, "TST-005", True),
        ("d.json", 2, "TST-006", False),
        ("d.json", 2, "TST-007", False),
    ]
    (tmp_path / "d.json.expect").write_text("1 TST-005\n")
    with pytest.raises(AssertionError, match="not 'LINE ruleid"):
        annotations(data, "d.json")


def test_check_fails_on_a_missing_or_an_unwanted_finding() -> None:
    expected: list[Expectation] = [("f", 1, "A-001", True), ("f", 2, "A-002", False)]
    check(expected, {("f", 1, "A-001")}, "ok")
    with pytest.raises(AssertionError, match="missing"):
        check(expected, set(), "missing one")
    with pytest.raises(AssertionError, match="unwanted"):
        check(expected, {("f", 1, "A-001"), ("f", 2, "A-002")}, "unwanted one")
