"""Benchmark the pathological input shapes of a hostile repository at 1x, 4x and 16x.

Each shape is a small file (or tree) that used to make the scan's cost grow faster than its
size: a ``.gitignore`` or ``--exclude`` pattern that backtracks, a YAML merge-key diamond, a
launch line of made-up flags, a long line with one non-ASCII character, a ``--*-config`` JSON
with many keys, a shell array of many elements, vLLM launches among other commands, a
Dockerfile of continued steps among comment lines and of many distinct ``ARG``/``ENV`` names,
a compose file of many services with lists, and a tree of small files under a hostile
``.gitignore`` (against the same tree under a plain one).

For each shape and scale the scan runs in this process (``engine.run_scan``, no cache, one
process) and the table gives the input size, the time (best of ``--repeat``), the peak memory
Python allocated (``tracemalloc``), and the ratio of each to the 1x run: linear growth reads
about 4 and 16, quadratic 16 and 256. Nothing is asserted: this prints.

A second table (``--size``) gives each file kind at 1 MB (the goal: at most 2 s and 200 MiB
for a 1 MB file of any kind), grown from 1/16 to 1/4 to 1 of that size, with the same ratios:
a shell script with one long launch of known flags, one with many launches, a Dockerfile, a
compose file, Kubernetes manifests, Python, a requirements file, Prometheus rules, a vLLM
``--config`` YAML and a JSON file, each made of the lines a real one holds, repeated.

Usage::

    python benchmarks/bench_robust.py            # every shape, base sizes as below, then 1 MB kinds
    python benchmarks/bench_robust.py --quick    # smaller bases and 16 KB kinds (a check that it runs)
    python benchmarks/bench_robust.py --kinds-only --size 1MB
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
import time
import tracemalloc
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from vllm_upgrade_check.engine import run_scan  # noqa: E402
from vllm_upgrade_check.model.options import ScanOptions  # noqa: E402

Builder = Callable[[Path, int], tuple[list[str], int]]
"""Writes one shape of scale ``n`` under a directory; returns the ``--exclude`` patterns and
the bytes written."""


def _write(root: Path, rel: str, text: str) -> int:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return len(text.encode("utf-8"))


def gitignore(root: Path, n: int) -> tuple[list[str], int]:
    size = _write(root, ".gitignore", "*a*a*a*a*a*a*b\n")
    for i in range(n):
        size += _write(root, f"{'a' * 200}{i}.sh", "vllm serve m --max-num-seqs 8\n")
    return [], size


def exclude(root: Path, n: int) -> tuple[list[str], int]:
    size = 0
    for i in range(n):
        size += _write(root, f"d/{'a' * 200}{i}.sh", "vllm serve m --max-num-seqs 8\n")
    return ["*a*a*a*a*a*a*a*b"], size


def merge_diamond(root: Path, n: int) -> tuple[list[str], int]:
    lines = ["x-a0: &a0 {image: 'vllm/vllm-openai:v0.27.0', k: v}"]
    lines += [f"x-a{i}: &a{i} {{<<: [*a{i - 1}, *a{i - 1}], k{i}: {i}}}" for i in range(1, n + 1)]
    text = "\n".join(lines) + f"\nservices:\n  llm:\n    <<: *a{n}\n    command: [--max-num-seqs, '8']\n"
    return [], _write(root, "docker-compose.yaml", text)


def unknown_flags(root: Path, n: int) -> tuple[list[str], int]:
    return [], _write(root, "run.sh", "vllm serve m " + " ".join(f"--x{i % 7}" for i in range(n)) + "\n")


def non_ascii_line(root: Path, n: int) -> tuple[list[str], int]:
    return [], _write(root, "run.sh", "vllm serve é " + " ".join(f"--max-num-seqs {i}" for i in range(n)) + "\n")


def config_json(root: Path, n: int) -> tuple[list[str], int]:
    value = json.dumps({f"k{i}": i for i in range(n)})
    return [], _write(root, "run.sh", f"vllm serve m --compilation-config '{value}'\n")


def shell_array(root: Path, n: int) -> tuple[list[str], int]:
    body = "\n".join(f"  --max-num-seqs {i}  # é" for i in range(n))
    return [], _write(root, "run.sh", f"ARGS=(\n{body}\n)\nvllm serve m \"${{ARGS[@]}}\"\n")


def launches_among_commands(root: Path, n: int) -> tuple[list[str], int]:
    text = "".join(f"echo step {i} $(date) done\nvllm serve m{i} --max-num-seqs {i} --swap-space 4\n" for i in range(n))
    return [], _write(root, "run.sh", text)


def dockerfile_comments(root: Path, n: int) -> tuple[list[str], int]:
    steps = "".join(f"# step {i}\nRUN echo {i} \\\n    # inside\n    && true\n" for i in range(n))
    return [], _write(root, "Dockerfile", "FROM vllm/vllm-openai:v0.8.0\n" + steps)


def dockerfile_variables(root: Path, n: int) -> tuple[list[str], int]:
    steps = "".join(f"ARG A{i}=a{i}\nENV VLLM_X{i}=1 B{i}=$A{i}\nRUN echo $B{i}\n" for i in range(n))
    return [], _write(root, "Dockerfile", "FROM vllm/vllm-openai:v0.8.0\n" + steps)


def yaml_lists(root: Path, n: int) -> tuple[list[str], int]:
    services = "".join(
        f"  s{i}:\n    image: vllm/vllm-openai:v0.8.0\n    command: [--model, m, --max-num-seqs, '8']\n" for i in range(n)
    )
    return [], _write(root, "docker-compose.yaml", "services:\n" + services)


def tree_plain(root: Path, n: int) -> tuple[list[str], int]:
    size = _write(root, ".gitignore", "*.log\nbuild/\n")
    for i in range(n):
        size += _write(root, f"d{i % 50}/{'a' * 60}{i}.sh", "vllm serve m\n")
    return [], size


def tree_hostile(root: Path, n: int) -> tuple[list[str], int]:
    size = _write(root, ".gitignore", "*a*a*a*a*a*a*a*b\n" * 20 + "*.log\n")
    for i in range(n):
        size += _write(root, f"d{i % 50}/{'a' * 60}{i}.sh", "vllm serve m\n")
    return [], size


SHAPES: dict[str, tuple[Builder, int]] = {
    ".gitignore *a*a*a*a*a*a*b, files": (gitignore, 50),
    "--exclude *a*a*a*a*a*a*a*b, files": (exclude, 50),
    "YAML merge diamond, levels": (merge_diamond, 100),
    "unknown flags on one line": (unknown_flags, 5_000),
    "non-ASCII long line, flags": (non_ascii_line, 5_000),
    "--compilation-config JSON keys": (config_json, 5_000),
    "shell array elements": (shell_array, 2_000),
    "launches among other commands": (launches_among_commands, 200),
    "Dockerfile steps among comments": (dockerfile_comments, 500),
    "Dockerfile distinct ARG/ENV names": (dockerfile_variables, 300),
    "compose services with lists": (yaml_lists, 200),
    "tree, plain .gitignore, files": (tree_plain, 625),
    "tree, hostile .gitignore, files": (tree_hostile, 625),
}


_FLAGS = ["--max-num-seqs 8", "--gpu-memory-utilization 0.9", "--tensor-parallel-size 2", "--enforce-eager",
          "--max-model-len 4096", "--dtype auto"]  # fmt: skip


def _fill(size: int, unit: Callable[[int], str], sep: str = "\n") -> str:
    """``unit(0) + sep + unit(1) + ...`` until ``size`` characters are reached."""
    out: list[str] = []
    total = i = 0
    while total < size:
        out.append(unit(i))
        total += len(out[-1]) + len(sep)
        i += 1
    return sep.join(out)


KINDS: dict[str, tuple[str, Callable[[int], str]]] = {
    "shell, one launch of known flags": ("run.sh", lambda n: "vllm serve m " + _fill(n, lambda i: _FLAGS[i % 6], " ") + "\n"),
    "shell, many launches": ("run.sh", lambda n: _fill(n, lambda i: f"vllm serve m{i} --max-num-seqs {i}") + "\n"),
    "Dockerfile": ("Dockerfile", lambda n: "FROM vllm/vllm-openai:v0.8.0\n" + _fill(
        n, lambda i: f"ENV VLLM_USE_V1=1\nRUN pip install vllm==0.8.{i % 5}") + '\nCMD ["--max-num-seqs", "8"]\n'),
    "compose": ("docker-compose.yaml", lambda n: "services:\n" + _fill(n, lambda i: (
        f"  s{i}:\n    image: vllm/vllm-openai:v0.8.0\n    command: [--model, m, --max-num-seqs, '8']\n"
        "    environment:\n      VLLM_USE_V1: '1'"))),
    "Kubernetes": ("deploy.yaml", lambda n: _fill(n, lambda i: (
        f"apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: d{i}\nspec:\n  template:\n    spec:\n"
        "      containers:\n      - name: vllm\n        image: vllm/vllm-openai:v0.8.0\n"
        "        args: [--model, m, --max-num-seqs, '8']"), "\n---\n") + "\n"),
    "Python": ("serve.py", lambda n: "from vllm import LLM, SamplingParams\n" + _fill(
        n, lambda i: f"llm{i} = LLM(model='m', max_num_seqs={i})\np{i} = SamplingParams(temperature=0.{i % 9})") + "\n"),
    "requirements": ("requirements.txt", lambda n: "vllm==0.8.0\n" + _fill(n, lambda i: f"pkg{i}>=1.{i % 10}") + "\n"),
    "Prometheus rules": ("alerts.rules.yaml", lambda n: "groups:\n- name: g\n  rules:\n" + _fill(
        n, lambda i: f"  - alert: A{i}\n    expr: vllm:num_requests_running > {i}") + "\n"),
    "vLLM --config YAML": ("vllm-config.yaml", lambda n: "model: m\nmax-num-seqs: 8\ncompilation-config:\n" + _fill(
        n, lambda i: f"  k{i}: {i}") + "\n"),
    "JSON": ("config.json", lambda n: json.dumps({"args": _fill(n, lambda i: _FLAGS[i % 6].split()[0], " ").split()})),
}
"""File kind -> (file name, text of about ``n`` characters)."""


def measure(build: Builder, n: int, repeat: int) -> tuple[int, float, int]:
    """``(bytes written, best seconds, peak bytes allocated)`` of a scan of the shape at ``n``."""
    root = Path(tempfile.mkdtemp(prefix="bench-robust-"))
    try:
        patterns, size = build(root, n)
        options = ScanOptions.of(paths=[root], exclude=patterns, jobs=1, cache_dir=None)
        best = float("inf")
        for _ in range(repeat):
            start = time.perf_counter()
            run_scan(options)
            best = min(best, time.perf_counter() - start)
        tracemalloc.start()
        run_scan(options)
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        return size, best, peak
    finally:
        shutil.rmtree(root, ignore_errors=True)


def _kind(name: str, make: Callable[[int], str]) -> Builder:
    def build(root: Path, n: int) -> tuple[list[str], int]:
        return [], _write(root, name, make(n))

    return build


def _size(text: str) -> int:
    number, unit = text.upper().rstrip("B").rstrip("I"), 1
    for suffix, factor in (("K", 2**10), ("M", 2**20)):
        if number.endswith(suffix):
            number, unit = number[:-1], factor
    return int(float(number) * unit)


def kinds_table(size: int, repeat: int, only: list[str] | None = None) -> None:
    """Each file kind at ``size`` bytes and at 1/4 and 1/16 of it, with ratios to the smallest.

    ``only``: kind labels to keep (a label is kept when it starts with one of them).
    """
    print(f"\n{'file kind':34} {'bytes':>9} {'seconds':>8} {'x t':>6} {'peak MiB':>9} {'x mem':>6}  goal")
    for label, (name, make) in KINDS.items():
        if only and not any(label.startswith(prefix) for prefix in only):
            continue
        first: tuple[float, int] | None = None
        for part in (16, 4, 1):
            written, seconds, peak = measure(_kind(name, make), size // part, repeat)
            first = first or (seconds, peak)
            goal = "" if part != 1 else ("ok" if seconds <= 2.0 and peak <= 200 * 2**20 else "OVER 2 s / 200 MiB")
            print(
                f"{label:34} {written:>9} {seconds:>8.3f} {seconds / max(first[0], 1e-9):>6.1f} "
                f"{peak / 2**20:>9.1f} {peak / max(first[1], 1):>6.1f}  {goal}"
            )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="bases divided by 10, kinds at 16 KB")
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument("--size", default="1MB", help="size of the largest file of each kind (default 1MB)")
    parser.add_argument("--kinds-only", action="store_true", help="only the table of file kinds")
    parser.add_argument("--kind", action="append", help="only the file kinds whose label starts with this (repeatable)")
    args = parser.parse_args()
    run_scan(ScanOptions.of(paths=[Path(__file__).parent], jobs=1, cache_dir=None))  # imports, packs
    kind_size = _size("16KB" if args.quick else args.size)
    if args.kinds_only or args.kind:
        kinds_table(kind_size, args.repeat, args.kind)
        return
    print(f"{'shape':36} {'scale':>5} {'n':>7} {'bytes':>9} {'seconds':>8} {'x t':>6} {'peak MiB':>9} {'x mem':>6}")
    for name, (build, base) in SHAPES.items():
        base = max(2, base // 10) if args.quick else base
        first: tuple[float, int] | None = None
        for scale in (1, 4, 16):
            size, seconds, peak = measure(build, base * scale, args.repeat)
            first = first or (seconds, peak)
            print(
                f"{name:36} {scale:>4}x {base * scale:>7} {size:>9} {seconds:>8.3f} "
                f"{seconds / max(first[0], 1e-9):>6.1f} {peak / 2**20:>9.1f} {peak / max(first[1], 1):>6.1f}"
            )
    kinds_table(kind_size, args.repeat)


if __name__ == "__main__":
    main()
