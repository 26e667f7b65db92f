"""Benchmark ``vllm-upgrade-check scan`` on a synthetic monorepo, side by side with grep and semgrep.

Builds a deterministic deployment monorepo in a temporary directory (launch scripts, compose
files, Kubernetes manifests, Dockerfiles, requirements, Python, JSON dashboards, Markdown,
filler sources, a ``node_modules/``, a root and a nested ``.gitignore``), then times, in one run:

* ``scan`` in-process (``engine.run_scan``) and through the CLI (a subprocess, with its peak
  RSS): cold in one process (``--no-cache --jobs 1``), cold with worker processes
  (``--no-cache``), with the per-file cache of an earlier run but every file's mtime new (what
  CI sees when it restores the cache into a fresh checkout), and with a warm cache;
* ``grep -rE`` of the rule packs' flag and env-var literals over the same tree (the floor:
  every byte read once, no parsing);
* semgrep, generic-mode rules for the same literals, offline (metrics and version check off),
  installed with pip into a separate virtual environment (skipped, with the reason, when it
  cannot be installed or run);
* ``vllm-upgrade-check --version`` against a bare import of its dependencies;
* the floor of any Python CLI on this tree: the dependency import, a scan of an empty
  directory (the fixed start-up) and ``os.walk`` of the tree, each as a multiple of grep;
* cold and warm CLI scan time at several sizes (``--sizes``), to show how it grows.

The CLI runs from the wheel this checkout builds (unpacked, dependencies from this
environment), as users install it; ``--installed`` times the installed console script instead.

Usage::

    python benchmarks/bench_scan.py                 # 10k files; sizes 1k,10k,50k
    python benchmarks/bench_scan.py --quick         # 200 files, no semgrep: CI keeps it working
    python benchmarks/bench_scan.py --sizes 1k,10k --no-semgrep
    python benchmarks/bench_scan.py --profile dense --sizes 1k,10k,50k   # the dense monorepo

Timings are wall-clock seconds, best of ``--repeat`` runs. Nothing is asserted: this prints.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path

from launch import run_child, run_cpu
from stages import print_stage_profile

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
SEMGREP_VENV = Path(os.environ.get("VUC_SEMGREP_VENV", "/tmp/vuc-bench-semgrep"))

# --------------------------------------------------------------------------- the monorepo

FLAGS = [
    "--max-num-seqs 64",
    "--gpu-memory-utilization 0.9",
    "--tensor-parallel-size 2",
    "--max-model-len 8192",
    "--enable-prefix-caching",
    "--kv-cache-dtype fp8",
    "--calculate-kv-scales",
    "--max-num-partial-prefills 2",
    "--max-long-partial-prefills 1",
    "--override-attention-dtype bfloat16",
    "--load-format bitsandbytes",
    "--quantization awq",
    "--port 8000",
]
MODELS = ["meta-llama/Llama-3.1-8B-Instruct", "Qwen/Qwen2.5-7B-Instruct", "mistralai/Mistral-7B-v0.3"]
VLLM_TAGS = ["v0.26.0", "v0.27.0", "v0.27.1"]


def _launch_script(rng: random.Random) -> str:
    if rng.random() < 0.4:
        return "#!/usr/bin/env bash\nset -euo pipefail\nmake build\n./bin/worker --threads 4\n"
    flags = " \\\n  ".join(rng.sample(FLAGS, rng.randint(2, 5)))
    return (
        "#!/usr/bin/env bash\nset -euo pipefail\nexport VLLM_USE_V1=1\n"
        f'MODEL="${{MODEL:-{rng.choice(MODELS)}}}"\n'
        f'exec vllm serve "$MODEL" \\\n  {flags}\n'
    )


def _compose(rng: random.Random) -> str:
    if rng.random() < 0.5:
        return (
            "services:\n  web:\n    image: nginx:1.27\n    ports: ['80:80']\n  db:\n    image: postgres:16\n"
        )
    args = "\n".join(f"      - {part}" for flag in rng.sample(FLAGS, 3) for part in flag.split())
    return (
        "services:\n  llm:\n"
        f"    image: vllm/vllm-openai:{rng.choice(VLLM_TAGS)}\n"
        "    environment:\n      VLLM_LOGGING_LEVEL: INFO\n"
        f"    command:\n      - --model\n      - {rng.choice(MODELS)}\n{args}\n"
    )


def _kubernetes(rng: random.Random, i: int) -> str:
    if rng.random() < 0.7:
        return (
            f"apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: svc-{i}\nspec:\n  replicas: 2\n"
            "  template:\n    spec:\n      containers:\n        - name: app\n"
            f"          image: registry.example.com/app:{i}\n          ports: [{{containerPort: 8080}}]\n"
        )
    args = "\n".join(f"            - {part}" for flag in rng.sample(FLAGS, 3) for part in flag.split())
    return (
        f"apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: llm-{i}\nspec:\n  template:\n"
        "    spec:\n      containers:\n        - name: vllm\n"
        f"          image: vllm/vllm-openai:{rng.choice(VLLM_TAGS)}\n"
        f"          args:\n            - --model\n            - {rng.choice(MODELS)}\n{args}\n"
        "          env:\n            - name: VLLM_USE_V1\n              value: '1'\n"
    )


def _dockerfile(rng: random.Random) -> str:
    if rng.random() < 0.5:
        return "FROM python:3.11-slim\nCOPY . /app\nRUN pip install -r /app/requirements.txt\nCMD ['python', 'app.py']\n"
    return (
        f"FROM vllm/vllm-openai:{rng.choice(VLLM_TAGS)}\nENV VLLM_USE_V1=1\n"
        "RUN pip install 'transformers>=4.45'\n"
        f'CMD ["--model", "{rng.choice(MODELS)}", "--max-num-seqs", "32"]\n'
    )


def _requirements(rng: random.Random) -> str:
    lines = ["requests>=2.31", "pydantic>=2", "numpy"]
    if rng.random() < 0.5:
        lines += ["vllm==0.27.0", "torch==2.9.0"]
    return "\n".join(lines) + "\n"


def _python(rng: random.Random, i: int) -> str:
    body = "".join(f"def handler_{i}_{k}(event):\n    return {{'id': {k}, 'ok': True}}\n\n" for k in range(8))
    if rng.random() < 0.2:
        body = "from vllm import LLM, SamplingParams\n\nllm = LLM(model='m', max_num_seqs=8)\n\n" + body
    return '"""Service module."""\n\nimport json\nimport logging\n\n' + body


def _dashboard(rng: random.Random, i: int) -> str:
    panels = [
        {"title": f"panel {k}", "targets": [{"expr": f"rate(vllm:num_requests_running[{k}m])"}]}
        for k in range(rng.randint(3, 12))
    ]
    return json.dumps({"uid": f"dash-{i}", "title": f"Dashboard {i}", "panels": panels}, indent=2)


def _markdown(rng: random.Random, i: int) -> str:
    text = f"# Runbook {i}\n\nStart the server with `vllm serve MODEL --max-num-seqs 8`.\n\n"
    return text + "Lorem ipsum dolor sit amet, consectetur adipiscing elit.\n" * rng.randint(5, 40)


def _req_folder(rng: random.Random) -> str:
    lines = ["# GPU stack", "--extra-index-url https://download.pytorch.org/whl/cu128", "numpy<2"]
    if rng.random() < 0.5:
        lines += ["torch==2.9.0", "transformers>=4.45"]
    return "\n".join(lines) + "\n"


def _template(rng: random.Random, i: int) -> str:
    args = "\n".join(f"            - {part}" for flag in rng.sample(FLAGS, 2) for part in flag.split())
    return (
        f"apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: {{{{ .Release.Name }}}}-{i}\nspec:\n"
        "  template:\n    spec:\n      containers:\n        - name: vllm\n"
        f"          image: vllm/vllm-openai:{{{{ .Values.tag }}}}\n          args:\n{args}\n"
    )


def _command_text(rng: random.Random) -> str:
    if rng.random() < 0.5:
        return "restart the worker pool, then:\n./bin/worker --threads {threads} --port {port}\n"
    return f"vllm serve {{model_id}} {' '.join(rng.sample(FLAGS, 2))} --port {{port}}\n"


def _snapshot(rng: random.Random) -> str:
    pins = ["aiohttp==3.10.5", "fastapi==0.115.0", "numpy==1.26.4", "requests==2.32.3", "torch==2.9.0"]
    if rng.random() < 0.5:
        pins.append(f"vllm=={rng.choice(VLLM_TAGS)[1:]}")
    return "\n".join(sorted(pins)) + "\n"


def _notes(rng: random.Random, i: int) -> str:
    return f"Meeting {i}: vLLM upgrade\n- we should drop --swap-space\n- owners: infra\n" + "notes line\n" * rng.randint(5, 40)


def _filler(rng: random.Random, i: int) -> str:
    return "".join(
        f"export function f{i}_{k}(a, b) {{ return a * {k} + b; }}\n" for k in range(rng.randint(10, 60))
    )


KINDS: list[tuple[str, float]] = [
    ("launch", 0.06),
    ("compose", 0.03),
    ("kubernetes", 0.10),
    ("dockerfile", 0.03),
    ("requirements", 0.02),
    ("python", 0.25),
    ("dashboard", 0.06),
    ("markdown", 0.10),
    ("filler", 0.25),
    ("node_modules", 0.07),
    ("ignored", 0.03),
    # layouts read by content, not by name
    ("req_folder", 0.01),
    ("template", 0.01),
    ("command_text", 0.01),
    ("snapshot", 0.005),
    ("notes", 0.02),
    ("plain_text", 0.02),
]


def build_monorepo(root: Path, n_files: int, seed: int = 7) -> dict[str, int]:
    """Write ``n_files`` files under ``root`` (deterministic for a seed); return counts per kind."""
    rng = random.Random(seed)
    names, weights = zip(*KINDS, strict=True)
    counts = dict.fromkeys(names, 0)
    (root / ".gitignore").write_text("build/\n*.log\n/tmp/\n")
    (root / "services").mkdir(parents=True, exist_ok=True)
    (root / "services" / ".gitignore").write_text("generated/\n")
    written = 2
    i = 0
    while written < n_files:
        kind = rng.choices(names, weights)[0]
        team = f"services/team{i % 40:02d}/svc{(i // 40) % 25:02d}"
        i += 1
        if kind == "launch":
            path, text = f"{team}/scripts/serve_{i}.sh", _launch_script(rng)
        elif kind == "compose":
            path, text = f"{team}/docker-compose.{i}.yaml", _compose(rng)
        elif kind == "kubernetes":
            path, text = f"deploy/k8s/ns{i % 30:02d}/deployment-{i}.yaml", _kubernetes(rng, i)
        elif kind == "dockerfile":
            path, text = f"{team}/docker/{i}/Dockerfile", _dockerfile(rng)
        elif kind == "requirements":
            path, text = f"{team}/req{i}/requirements.txt", _requirements(rng)
        elif kind == "python":
            path, text = f"{team}/src/mod_{i}.py", _python(rng, i)
        elif kind == "dashboard":
            path, text = f"observability/dashboards/d{i % 20:02d}/dash_{i}.json", _dashboard(rng, i)
        elif kind == "markdown":
            path, text = f"docs/section{i % 25:02d}/page_{i}.md", _markdown(rng, i)
        elif kind == "filler":
            path, text = f"web/app{i % 50:02d}/src/file_{i}.js", _filler(rng, i)
        elif kind == "req_folder":
            path, text = f"{team}/requirements/prod_{i}.txt", _req_folder(rng)
        elif kind == "template":
            path, text = f"deploy/templates/t{i % 30:02d}/deploy-{i}.yaml.tpl", _template(rng, i)
        elif kind == "command_text":
            path, text = f"{team}/ops/serve_cmd_{i}.txt", _command_text(rng)
        elif kind == "snapshot":
            path, text = f"{team}/snapshots/pip-freeze-{i}.txt", _snapshot(rng)
        elif kind == "notes":
            path, text = f"notes/section{i % 25:02d}/meeting_{i}.txt", _notes(rng, i)
        elif kind == "plain_text":
            path, text = f"data/t{i % 40:02d}/words_{i}.txt", "lorem ipsum dolor sit amet\n" * rng.randint(5, 80)
        elif kind == "node_modules":
            path, text = f"web/app{i % 50:02d}/node_modules/pkg{i % 97}/index_{i}.js", _filler(rng, i)
        else:
            which = i % 3
            path, text = (
                (f"build/out/{i}/run.sh", _launch_script(rng))
                if which == 0
                else (f"{team}/generated/{i}.yaml", _compose(rng))
                if which == 1
                else (f"logs/run_{i}.log", "vllm serve m --max-num-seqs 8\n" * 20)
            )
        target = root / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text)
        counts[kind] += 1
        written += 1
    return counts


def build_sparse(root: Path, n_files: int, seed: int = 11) -> dict[str, int]:
    """A sparse tree of ``n_files`` files: a product monorepo where vLLM is one service among
    many. About 1 file in 100 configures vLLM (launch scripts, manifests, requirements
    folders, command templates, snapshots: every layout read by name or by content); the
    rest are sources, docs, other services' YAML and JSON, text, configs without a marker."""
    rng = random.Random(seed)
    counts = {"vllm": 0, "other": 0}
    vllm_kinds = [
        ("services/llm/scripts/serve_{i}.sh", lambda i: _launch_script(rng)),
        ("services/llm/deploy/deployment-{i}.yaml", lambda i: _kubernetes(rng, i)),
        ("services/llm/requirements/prod_{i}.txt", lambda i: _req_folder(rng)),
        ("services/llm/ops/serve_cmd_{i}.txt", lambda i: _command_text(rng)),
        ("services/llm/deploy/templates/deploy-{i}.yaml.tpl", lambda i: _template(rng, i)),
        ("services/llm/snapshots/pip-freeze-{i}.txt", lambda i: _snapshot(rng)),
    ]
    other_kinds = [
        ("web/app{m}/src/file_{i}.js", lambda i: _filler(rng, i)),
        ("backend/svc{m}/mod_{i}.py", lambda i: _python(rng, i)),
        ("docs/s{m}/page_{i}.md", lambda i: _markdown(rng, i)),
        ("ops/svc{m}/deploy-{i}.yaml", lambda i: f"apiVersion: v1\nkind: Service\nmetadata:\n  name: svc-{i}\nspec:\n  ports: [{{port: 80}}]\n"),
        ("config/c{m}/settings_{i}.json", lambda i: json.dumps({"name": f"svc{i}", "replicas": 2, "port": 8080})),
        ("data/t{m}/words_{i}.txt", lambda i: "lorem ipsum dolor sit amet\n" * rng.randint(5, 80)),
        ("tools/t{m}/run_{i}", lambda i: "#!/bin/sh\nexec ./worker --threads 4 --swap-space 2\n"),
        ("etc/e{m}/app_{i}.cfg", lambda i: "[server]\nport = 8080\nworkers = 4\n"),
    ]
    for i in range(n_files):
        pattern, make = rng.choice(vllm_kinds) if i % 100 == 0 else rng.choice(other_kinds)
        target = root / pattern.format(i=i, m=i % 40)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(make(i))
        counts["vllm" if i % 100 == 0 else "other"] += 1
    return counts


def paired_discovery(root: Path, pairs: int) -> list[tuple[float, float, int, int]]:
    """Cold in-process scans (1 process, no cache) of ``root`` pair by pair: name-based
    selection (:func:`name_based_discovery`), then content-first discovery, in turns so that
    neither gets a warmer machine. Each pair: ``(content s, name-based s, files scanned
    content-first, files scanned name-based)``."""
    out = []
    for _ in range(pairs):
        with name_based_discovery():
            t_name, n_name, _ = inprocess_scan(root, 1, jobs=1)
        t_content, n_content, _ = inprocess_scan(root, 1, jobs=1)
        out.append((t_content, t_name, n_content, n_name))
    return out


# --------------------------------------------------------------------------- the tools


def rule_literals() -> list[str]:
    """The flag and env-var literals of the bundled rule packs (what grep and semgrep look for)."""
    from vllm_upgrade_check.knowledge.registry import load_registry

    literals: set[str] = set()
    for _pack, rule in load_registry().rules():
        kind = rule.match.kind.value
        names = [rule.match.name, *(getattr(rule.match, "names", None) or [])]
        for name in filter(None, names):
            if kind in ("engine_arg", "absent_arg", "cli_flag"):
                literals.add("--" + name.lstrip("-").replace("_", "-"))
            elif kind == "env_var":
                literals.add(name)
    return sorted(literals)


def best_of(repeat: int, fn: Callable[[], object]) -> float:
    """Smallest wall time of ``repeat`` calls, seconds."""
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


CLI: list[str] = []
"""How the benchmark runs the tool (set by :func:`use_wheel` or :func:`use_installed`)."""
CLI_ENV: dict[str, str] | None = None
"""The environment it runs in (``None``: the benchmark's own)."""


def use_installed() -> str:
    """Run the ``vllm-upgrade-check`` console script of this interpreter's environment."""
    global CLI, CLI_ENV
    candidate = Path(sys.executable).parent / "vllm-upgrade-check"
    CLI = [str(candidate) if candidate.exists() else (shutil.which("vllm-upgrade-check") or "vllm-upgrade-check")]
    CLI_ENV = None
    return f"the installed console script ({CLI[0]})"


def use_wheel(work: Path) -> str:
    """Run the tool from the wheel this checkout builds, as a user installs it (a development
    install lacks the packs pre-parsed at build time, see ``packbundle``): the wheel is built
    with ``pip wheel --no-build-isolation`` and unpacked under ``work``; the dependencies come
    from this interpreter's environment, and its bytecode is compiled, as pip does. Falls
    back to :func:`use_installed` when it cannot."""
    global CLI, CLI_ENV
    built = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation", "-w", str(work / "dist"), str(REPO)],
        capture_output=True,
        text=True,
        check=False,
    )
    wheels = sorted((work / "dist").glob("vllm_upgrade_check-*.whl"))
    if built.returncode != 0 or not wheels:
        return use_installed() + f"; the wheel did not build: {built.stderr.strip()[-200:]}"
    import zipfile

    unpacked = work / "wheel"
    with zipfile.ZipFile(wheels[0]) as archive:
        archive.extractall(unpacked)
    # pip compiles the bytecode when it installs a wheel; without it (PYTHONDONTWRITEBYTECODE)
    # every run would compile the package's sources again.
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(unpacked)], capture_output=True, check=False)
    CLI = [sys.executable, "-m", "vllm_upgrade_check"]
    CLI_ENV = {**os.environ, "PYTHONPATH": str(unpacked)}
    return f"the wheel {wheels[0].name}, unpacked"


def cli_scan(
    root: Path, repeat: int, extra: list[str], before: Callable[[], object] | None = None
) -> tuple[float, int]:
    """Best CLI scan time with ``extra`` options and the peak RSS (KiB) of the child;
    ``before`` runs before each timed run (untimed)."""
    argv = [*CLI, "scan", str(root), "--format", "json", "--fail-on", "never", "--skip-unreadable", *extra]
    best, peak = float("inf"), 0
    for _ in range(repeat):
        if before is not None:
            before()
        wall, code, rss, err = run_child(argv, CLI_ENV)
        if code != 0:
            raise SystemExit(f"scan failed with exit {code}: {err}")
        best, peak = min(best, wall), max(peak, rss)
    return best, peak


def touch_all(root: Path) -> None:
    """Give every file a new mtime, as a fresh checkout of the same commit does."""
    now = time.time_ns()
    for directory, _dirs, files in os.walk(root):
        for name in files:
            os.utime(os.path.join(directory, name), ns=(now, now))


def inprocess_scan(root: Path, repeat: int, **options: object) -> tuple[float, int, int]:
    """Best in-process ``run_scan`` time with ``options``; files scanned; findings."""
    from vllm_upgrade_check.engine import run_scan
    from vllm_upgrade_check.knowledge.registry import load_registry
    from vllm_upgrade_check.model.options import ScanOptions

    registry = load_registry()
    result = {}

    def once() -> None:
        result["report"] = run_scan(ScanOptions.of(paths=[root], **options), registry)  # type: ignore[arg-type]

    elapsed = best_of(repeat, once)
    report = result["report"]
    return elapsed, report.files_scanned, len(report.findings)


def surface_check_time(root: Path, repeat: int, to_version: str = "0.28.0") -> tuple[float, float, int]:
    """``(seconds of the target-surface checks, seconds of the whole in-process scan, facts)``:
    the built-in checks against the target's surface and the advisories, timed alone on the
    facts of one scan of ``root``."""
    from packaging.version import Version

    from vllm_upgrade_check.engine import run_scan
    from vllm_upgrade_check.knowledge.known_args import known_args
    from vllm_upgrade_check.knowledge.registry import load_registry
    from vllm_upgrade_check.matching import surface_checks
    from vllm_upgrade_check.matching.advisories import advisory_findings
    from vllm_upgrade_check.matching.matcher import Assumption, VersionContext
    from vllm_upgrade_check.matching.surface_checks import surface_findings, with_target_severity
    from vllm_upgrade_check.model.findings import VersionBasis
    from vllm_upgrade_check.model.options import ScanOptions

    registry = load_registry()
    facts: list = []
    start = time.perf_counter()
    run_scan(ScanOptions.of(paths=[root], to_version=to_version, jobs=1), registry, facts_out=facts)
    whole = time.perf_counter() - start
    target = Version(to_version)
    known = known_args()
    context = VersionContext(
        target, None, Assumption(None, VersionBasis.UNKNOWN, "none"), None, known.gone_by(target), known.env_gone_by(target)
    )

    def once() -> None:
        surface_checks.clear_caches()  # each run decides every fact afresh
        with_target_severity([], facts, target)
        surface_findings(facts, context, [])
        advisory_findings(facts, context, [])

    return best_of(repeat, once), whole, len(facts)


def prefilter_counts(root: Path) -> dict[str, int]:
    """How the scan's discovery treats every file of ``root`` (serially, with its own
    functions): taken by name; not opened (binary kinds, documentation, other languages'
    sources); opened by content and passed on to a parser; opened and dropped by the
    byte-level pre-filter (no vLLM marker); opened, passed the pre-filter, but of no kind."""
    from vllm_upgrade_check.sources import discovery
    from vllm_upgrade_check.sources.scanners import default_scanners
    from vllm_upgrade_check.sources.sniff import has_distribution_marker, has_marker, never_sniffed

    scanners = default_scanners()
    counts = dict.fromkeys(["walked", "by name", "not opened", "opened", "parsed by content", "pre-filter skipped", "no kind"], 0)
    for path, rel in discovery.walk(root):
        counts["walked"] += 1
        name = rel.rsplit("/", 1)[-1]
        verdict = discovery.wanted(name, scanners)
        if verdict is True:
            counts["by name"] += 1
            continue
        if verdict is False and never_sniffed(name):
            counts["not opened"] += 1
            continue
        counts["opened"] += 1
        data = Path(path).read_bytes()
        if verdict is False and not has_marker(data) and not has_distribution_marker(data):
            counts["pre-filter skipped"] += 1
            continue
        source = discovery.read_source(path, rel, scanners=scanners, by_name=verdict)
        counts["parsed by content" if source is not None and not isinstance(source, discovery.Skipped) else "no kind"] += 1
    return counts


@contextlib.contextmanager
def name_based_discovery() -> Iterator[None]:
    """Discovery as it was before content-first: a file no scanner takes by name is never
    opened, and nothing is read as the kind its content shows (the same code with the
    sniffer switched off: :func:`never_sniffed` always true, no content kind, no JSON read
    as YAML)."""
    from vllm_upgrade_check.sources import discovery, tree

    saved = discovery.never_sniffed, tree.never_sniffed, discovery.sniff_kind, discovery.as_json
    discovery.never_sniffed = tree.never_sniffed = lambda name: True  # type: ignore[assignment]
    discovery.sniff_kind = lambda name, text, vllm: None  # type: ignore[assignment]
    discovery.as_json = lambda source: None  # type: ignore[assignment]
    try:
        yield
    finally:
        discovery.never_sniffed, tree.never_sniffed, discovery.sniff_kind, discovery.as_json = saved


def content_vs_name_only(root: Path, repeat: int) -> tuple[float, int, float, int]:
    """Cold in-process scans (1 process), content-first discovery against discovery as it was
    before it (:func:`name_based_discovery`), run in turns so that neither gets a warmer
    machine; the best of ``repeat`` each. Returns ``(content s, files scanned, name-only s,
    files scanned)``."""
    best = {True: (float("inf"), 0), False: (float("inf"), 0)}
    for _ in range(max(repeat, 2)):
        for content in (False, True):
            with name_based_discovery() if not content else contextlib.nullcontext():
                elapsed, scanned, _findings = inprocess_scan(root, 1, jobs=1)
            best[content] = min(best[content], (elapsed, scanned))
    return best[True][0], best[True][1], best[False][0], best[False][1]


def python_walk(root: Path) -> int:
    """Files ``os.walk`` lists under ``root`` (skipped directories left out, nothing read or
    stat'ed): the least a Python scanner spends finding the files."""
    count = 0
    for _directory, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs if d not in ("node_modules", ".git")]
        count += len(files)
    return count


def grep_scan(root: Path, literals: list[str], repeat: int) -> float:
    """Best ``grep -rE`` time over the same tree (same directories left out)."""
    pattern = "|".join(lit.replace(".", r"\.") for lit in literals)
    argv = ["grep", "-rEc", "--exclude-dir=node_modules", "--exclude-dir=.git", "-e", pattern, str(root)]
    return best_of(repeat, lambda: subprocess.run(argv, stdout=subprocess.DEVNULL, check=False))


def semgrep_ready(install: bool) -> tuple[str | None, str]:
    """The semgrep executable (installing it with pip into its own venv), or ``None`` and why."""
    exe = SEMGREP_VENV / "bin" / "semgrep"
    if not exe.exists() and install:
        try:
            subprocess.run([sys.executable, "-m", "venv", str(SEMGREP_VENV)], check=True, capture_output=True)
            pip = [str(SEMGREP_VENV / "bin" / "pip"), "install", "-q", "semgrep"]
            subprocess.run(pip, check=True, capture_output=True, timeout=900)
        except (subprocess.SubprocessError, OSError) as exc:
            return None, f"pip install semgrep failed: {exc}"
    if not exe.exists():
        return None, f"semgrep not installed in {SEMGREP_VENV} (run without --no-install)"
    return str(exe), ""


def semgrep_scan(exe: str, root: Path, literals: list[str], work: Path) -> tuple[float | None, str]:
    """One offline semgrep run with generic-mode rules for ``literals``; (seconds, why not)."""
    rules = {
        "rules": [
            {
                "id": f"vuc-{k}",
                "languages": ["generic"],
                "severity": "WARNING",
                "message": f"{lit} changes on upgrade",
                "pattern-regex": lit.replace(".", r"\."),
            }
            for k, lit in enumerate(literals)
        ]
    }
    config = work / "semgrep-rules.json"
    config.write_text(json.dumps(rules))
    env = dict(os.environ, SEMGREP_ENABLE_VERSION_CHECK="0", SEMGREP_SEND_METRICS="off")
    argv = [exe, "scan", "--config", str(config), "--metrics=off", "--disable-version-check", "--json", "-q"]
    argv += ["--timeout", "0", str(root)]
    try:
        wall, code, _rss, err = run_child(argv, env)
    except OSError as exc:
        return None, f"semgrep cannot start: {exc}"
    if code not in (0, 1):
        return None, f"semgrep exited {code}: {err.strip()[-300:]}"
    return wall, ""


_LOADED = """
import runpy, sys
sys.argv = ["vllm-upgrade-check", "scan", sys.argv[1], "--no-cache", "-j", "1"]
try:
    runpy.run_module("vllm_upgrade_check", run_name="__main__")
except SystemExit:
    pass
names = sorted(n for n, m in list(sys.modules.items())
               if "site-packages" in (getattr(m, "__file__", None) or "") and not n.startswith("vllm_upgrade_check"))
sys.stderr.write("\\n@@" + " ".join(names) + "\\n")
"""


_STARTUP = """
import runpy, sys, time
sys.argv = ["vllm-upgrade-check", "scan", sys.argv[1], "--no-cache"]
spent = [0.0]
try:  # typer 0.26 and later build a pydantic TypeAdapter per parameter of the command invoked
    import typer.core
    built = typer.core.build_runtime_param
    def timed(descriptor):
        start = time.process_time()
        try:
            return built(descriptor)
        finally:
            spent[0] += time.process_time() - start
    typer.core.build_runtime_param = timed
except (ImportError, AttributeError):
    spent[0] = float("nan")
try:
    runpy.run_module("vllm_upgrade_check", run_name="__main__")
except SystemExit:
    pass
tool = sum(1 for n in sys.modules if n.split(".")[0] == "vllm_upgrade_check")
sys.stderr.write("\\n@@%d %d %.6f\\n" % (tool, len(sys.modules), spent[0]))
"""
"""Runs a scan in-process and reports the modules of the tool it imported, all modules, and
the CPU seconds typer spent building its parameters' converters."""

STARTUP_FLOOR = "import typer, rich, pydantic, yaml, packaging, tree_sitter"
"""The import floor of the start-up goal: the dependencies the design prescribes."""


def startup_pairs(empty: Path, pairs: int) -> dict[str, float]:
    """The fixed start-up: a CLI scan of the empty directory ``empty`` (``--no-cache``)
    against :data:`STARTUP_FLOOR` in a fresh interpreter, in turn (scan, floor, scan, ...),
    ``pairs`` times after one warm-up pair. CPU seconds (user + system) of each process, so
    that a busy shared machine weighs less than on wall time; the ratio is taken pair by pair.

    Returns:
        ``scan`` and ``floor``: median CPU seconds; ``ratio``: median of the pair ratios;
        ``scan_wall``: median wall seconds of the scan; ``tool_modules`` and ``modules``:
        modules of the tool, and in all, that the scan imports; ``typer``: CPU seconds typer
        spent building parameter converters in that scan (``nan`` on a typer without them).
    """
    scan_argv = [*CLI, "scan", str(empty), "--no-cache"]
    floor_argv = [sys.executable, "-c", STARTUP_FLOOR]
    scans, floors, ratios, walls = [], [], [], []
    for index in range(pairs + 1):
        wall, code, _rss, cpu, err = run_cpu(scan_argv, CLI_ENV)
        if code != 0:
            raise SystemExit(f"empty scan failed with exit {code}: {err}")
        _w, _c, _r, floor, _e = run_cpu(floor_argv)
        if index:  # the first pair warms the file cache
            scans.append(cpu)
            floors.append(floor)
            ratios.append(cpu / floor)
            walls.append(wall)
    proc = subprocess.run(
        [sys.executable, "-c", _STARTUP, str(empty)], env=CLI_ENV, capture_output=True, text=True, check=False
    )
    fields = proc.stderr.rpartition("\n@@")[2].split()
    tool, modules, typer_s = (int(fields[0]), int(fields[1]), float(fields[2])) if len(fields) == 3 else (0, 0, float("nan"))
    return {
        "scan": statistics.median(scans),
        "floor": statistics.median(floors),
        "ratio": statistics.median(ratios),
        "scan_wall": statistics.median(walls),
        "tool_modules": tool,
        "modules": modules,
        "typer": typer_s,
    }


def dependency_modules(root: Path) -> list[str]:
    """The third-party modules (of the tool's dependencies) a scan of ``root`` loads, in a
    fresh process of the benchmarked tool."""
    proc = subprocess.run(
        [sys.executable, "-c", _LOADED, str(root)], env=CLI_ENV, capture_output=True, text=True, check=False
    )
    tail = proc.stderr.rpartition("\n@@")[2]
    return tail.split()


def import_of(modules: list[str], repeat: int) -> float:
    """Median wall time of importing ``modules`` (and nothing of the tool) in fresh processes."""
    code = f"import importlib\nfor m in {modules!r}:\n    try:\n        importlib.import_module(m)\n    except Exception:\n        pass"
    return statistics.median(run_child([sys.executable, "-c", code])[0] for _ in range(repeat))


def version_vs_imports(repeat: int) -> tuple[float, float]:
    """Median wall time of ``--version`` and of importing the dependencies, in fresh processes."""
    deps = "import typer, rich, pydantic, yaml, packaging, tree_sitter"
    version = [run_child([*CLI, "--version"], CLI_ENV)[0] for _ in range(repeat)]
    imports = [run_child([sys.executable, "-c", deps])[0] for _ in range(repeat)]
    return statistics.median(version), statistics.median(imports)


# --------------------------------------------------------------------------- main


def parse_sizes(text: str) -> list[int]:
    """``1k,10k,50k`` -> ``[1000, 10000, 50000]``."""
    out = []
    for part in filter(None, (p.strip().lower() for p in text.split(","))):
        out.append(int(float(part[:-1]) * 1000) if part.endswith("k") else int(part))
    return out


def main(argv: list[str] | None = None) -> int:
    """Build the monorepo(s), run every tool, print figures and ratios."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--files", type=int, default=10_000, help="files in the main comparison (10000)")
    parser.add_argument("--sizes", default="1k,10k,50k", help="sizes for the growth table (1k,10k,50k)")
    parser.add_argument("--quick", action="store_true", help="200 files, sizes 100,200, no semgrep (CI)")
    parser.add_argument("--repeat", type=int, default=3, help="runs per timing; the best is kept (3)")
    parser.add_argument("--no-semgrep", action="store_true", help="leave semgrep out")
    parser.add_argument("--no-install", action="store_true", help="do not pip install semgrep")
    parser.add_argument("--keep", type=Path, help="build the monorepo here and keep it")
    parser.add_argument(
        "--installed", action="store_true", help="time the installed console script, not a wheel built from this checkout"
    )
    parser.add_argument(
        "--profile",
        choices=("sparse", "dense"),
        default="sparse",
        help="sparse: few files mention vLLM (the tables below); dense: a deployment monorepo of "
        "hundreds of services, four files in ten mentioning vLLM, paired against semgrep and grep (dense.py)",
    )
    args = parser.parse_args(argv)
    if args.quick:
        args.files, args.sizes, args.no_semgrep, args.repeat = 200, "100,200", True, 1
    if args.profile == "dense":
        return dense_main(args)

    literals = rule_literals()
    print(f"rule literals ({len(literals)}): {' '.join(literals)}")
    with tempfile.TemporaryDirectory(prefix="vuc-bench-") as tmp:
        work = Path(tmp)
        root = args.keep or work / "monorepo"
        root.mkdir(parents=True, exist_ok=True)
        start = time.perf_counter()
        counts = build_monorepo(root, args.files)
        print(f"\nmonorepo: {args.files} files in {time.perf_counter() - start:.1f} s: {counts}")

        from vllm_upgrade_check.sources.dispatch import worker_count

        print(f"CLI runs: {use_installed() if args.installed else use_wheel(work)}")

        cached = ["--cache-dir", str(work / "cache")]
        t_grep = grep_scan(root, literals, args.repeat)
        t_serial, scanned, findings = inprocess_scan(root, args.repeat, jobs=1)
        t_inproc, _, _ = inprocess_scan(root, args.repeat)
        t_inwarm, _, _ = inprocess_scan(root, args.repeat, cache_dir=work / "cache-inprocess", jobs=0)
        t_cli1, rss1 = cli_scan(root, args.repeat, ["--no-cache", "--jobs", "1"])
        t_cli, rss = cli_scan(root, args.repeat, ["--no-cache"])
        cli_scan(root, 1, cached)  # fill the cache
        t_clone, rss_c = cli_scan(root, args.repeat, cached, before=lambda: touch_all(root))
        t_warm, rss_w = cli_scan(root, args.repeat, cached)
        rows = [
            ("grep -rE (floor)", t_grep),
            ("scan, in-process (run_scan), 1 process", t_serial),
            ("scan, in-process (run_scan), workers", t_inproc),
            ("scan, in-process (run_scan), warm cache", t_inwarm),
            ("scan, CLI (subprocess), 1 process", t_cli1),
            ("scan, CLI (subprocess), workers", t_cli),
            ("scan, CLI, cache + fresh checkout", t_clone),
            ("scan, CLI, warm cache", t_warm),
        ]
        print(f"\n{'tool':<42}{'seconds':>10}{'x grep':>10}")
        for label, seconds in rows:
            print(f"{label:<42}{seconds:>10.3f}{seconds / t_grep:>10.2f}")
        print(f"  files scanned {scanned}, findings {findings}, workers {worker_count(None, scanned)}")
        t_surface, t_whole, n_facts = surface_check_time(root, args.repeat)
        print(
            f"  target-surface checks: {t_surface:.3f} s for {n_facts} facts, "
            f"{100 * t_surface / t_whole:.1f}% of a 1-process in-process scan ({t_whole:.3f} s)"
        )
        t_content, n_content, t_name_only, n_name_only = content_vs_name_only(root, args.repeat)
        print(
            f"  content-first discovery: cold 1-process scan {t_content:.3f} s ({n_content} files read by a scanner) "
            f"vs name-only discovery {t_name_only:.3f} s ({n_name_only} files): ratio {t_content / t_name_only:.2f}"
        )
        print(f"  pre-filter: {prefilter_counts(root)}")
        sparse = work / "sparse"
        sparse.mkdir()
        sparse_counts = build_sparse(sparse, args.files)
        inprocess_scan(sparse, 1, jobs=1)  # the OS reads the tree once before the pairs
        pairs = paired_discovery(sparse, max(args.repeat, 3))
        ratios = [content / name for content, name, _nc, _nn in pairs]
        print(f"\nsparse tree: {args.files} files ({sparse_counts['vllm']} configure vLLM), cold 1-process scans pair by pair:")
        for number, (content, name, n_content, n_name) in enumerate(pairs, start=1):
            print(
                f"  pair {number}: content-first {content:.3f} s ({n_content} files read) / name-based "
                f"{name:.3f} s ({n_name} files read) = {content / name:.2f}"
            )
        median = statistics.median(ratios)
        verdict = "no slower (within 5%)" if median <= 1.05 else f"slower by {100 * (median - 1):.0f}%"
        print(f"  median ratio content-first / name-based: {median:.2f}: {verdict}")
        print(f"  sparse pre-filter: {prefilter_counts(sparse)}")
        print_stage_profile(root, "sparse")
        print(
            f"  CLI peak RSS {max(rss1, rss) / 1024:.1f} MiB cold, {rss_c / 1024:.1f} MiB fresh checkout, "
            f"{rss_w / 1024:.1f} MiB warm"
        )

        if not args.no_semgrep:
            exe, why = semgrep_ready(not args.no_install)
            t_semgrep, why = semgrep_scan(exe, root, literals, work) if exe else (None, why)
            if t_semgrep is None:
                print(f"{'semgrep':<42}{'skipped':>10}  ({why})")
            else:
                print(f"{'semgrep (generic, offline)':<42}{t_semgrep:>10.3f}{t_semgrep / t_grep:>10.2f}")
                print(
                    f"  semgrep / scan: {t_semgrep / t_cli1:.1f}x (CLI, 1 process), {t_semgrep / t_cli:.1f}x "
                    f"(CLI, workers), {t_semgrep / t_clone:.1f}x (fresh checkout), {t_semgrep / t_warm:.1f}x (warm)"
                )
        else:
            print(f"{'semgrep':<42}{'skipped':>10}  (--no-semgrep/--quick)")

        t_version, t_imports = version_vs_imports(max(args.repeat, 5))
        print(
            f"\n--version {t_version:.3f} s; import of dependencies {t_imports:.3f} s; "
            f"ratio {t_version / t_imports:.2f}"
        )
        empty = work / "empty"
        empty.mkdir()
        startup = startup_pairs(empty, 5 if args.quick else 21)
        t_empty = startup["scan_wall"]
        t_walk = best_of(args.repeat, lambda: python_walk(root))
        print(
            f"where the floor is for a Python CLI: interpreter + dependency import {t_imports:.3f} s "
            f"({t_imports / t_grep:.1f}x grep); CLI scan of an empty directory {t_empty:.3f} s "
            f"({t_empty / t_grep:.1f}x grep); os.walk of the tree, nothing read {t_walk:.3f} s "
            f"({t_walk / t_grep:.1f}x grep)"
        )
        ratio = startup["ratio"]
        print(
            f"start-up (CPU seconds, medians of {5 if args.quick else 21} pairs): a scan of an empty directory "
            f"{startup['scan']:.3f} s, `{STARTUP_FLOOR}` {startup['floor']:.3f} s; "
            f"ratio {ratio:.2f}x (goal: at most 2.0x) {'met' if ratio <= 2.0 else 'NOT met'}; "
            f"{startup['tool_modules']} modules of the tool, {startup['modules']} in all; "
            f"typer building its parameters' pydantic converters: {startup['typer']:.3f} s"
        )
        used = dependency_modules(root)
        t_used = import_of(used, max(args.repeat, 5))
        print(
            f"  the same against the import of every dependency module a scan of the tree loads "
            f"({len(used)} modules: pydantic's models, rich's console, typer's parser, ...; {t_used:.3f} s wall): "
            f"{t_empty / t_used:.1f}x"
        )

        print(f"\n{'files':>8}{'cold s':>9}{'warm s':>9}{'grep s':>9}{'cold/grep':>10}{'ms/1k files':>13}{'RSS MiB':>9}")
        for size in parse_sizes(args.sizes):
            tree = work / f"size-{size}"
            tree.mkdir()
            build_monorepo(tree, size)
            runs = 1 if size > 20_000 else args.repeat
            t_scan, peak = cli_scan(tree, runs, ["--no-cache"])
            size_cache = ["--cache-dir", str(work / f"cache-{size}")]
            cli_scan(tree, 1, size_cache)
            t_w, peak_w = cli_scan(tree, runs, size_cache)
            t_g = grep_scan(tree, literals, runs)
            per_k = 1000 * t_scan / (size / 1000)
            print(
                f"{size:>8}{t_scan:>9.3f}{t_w:>9.3f}{t_g:>9.3f}{t_scan / t_g:>10.2f}{per_k:>13.1f}"
                f"{max(peak, peak_w) / 1024:>9.1f}"
            )
            shutil.rmtree(tree, ignore_errors=True)
    return 0


def dense_main(args: argparse.Namespace) -> int:
    """``--profile dense``: build the dense monorepo, print where one scan's time goes, the
    pairs against semgrep and grep with the goals, the findings check and the growth."""
    from dense import build_dense
    from dense_compare import dense_report, growth

    with tempfile.TemporaryDirectory(prefix="vuc-bench-dense-") as tmp:
        work = Path(tmp)
        root = args.keep or work / "dense"
        root.mkdir(parents=True, exist_ok=True)
        start = time.perf_counter()
        totals = build_dense(root, args.files)
        print(
            f"dense monorepo: {totals['files']} files, {totals['bytes'] / 1e6:.1f} MB, {totals['services']} services, "
            f"{totals['mention vLLM']} mentioning vLLM, built in {time.perf_counter() - start:.1f} s"
        )
        print(f"CLI runs: {use_installed() if args.installed else use_wheel(work)}")
        print_stage_profile(root, "dense")
        exe, why = (None, "--no-semgrep/--quick") if args.no_semgrep else semgrep_ready(not args.no_install)
        semgrep = None
        if exe is not None:
            from dense_compare import removed_flag_literals, semgrep_argv

            semgrep = semgrep_argv(exe, root, removed_flag_literals(), work)
        dense_report(run_child, CLI, CLI_ENV, root, work, args.repeat, semgrep, why)
        growth(CLI, CLI_ENV, work, parse_sizes(args.sizes), build_dense, 1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
