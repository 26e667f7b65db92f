"""The dense profile's comparison (``bench_scan.py --profile dense``): the scan against
semgrep and ``grep -rEn``, pair by pair, cold and warm, on 2 workers; peak memory; the
findings of each fast path against those of ``--jobs 1 --no-cache``; growth with size.

Pair by pair: the two commands run in turn (A B A B ...) and each pair gives one ratio, so
that a machine whose speed drifts (a shared one) moves both sides of a ratio alike; the
median ratio is printed with the median seconds.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

from launch import run_cpu

JOBS = ["--jobs", "2"]
GOALS = {"semgrep / cold": 10.0, "cold / grep": 10.0, "warm / grep": 5.0, "peak MiB": 150.0}

RunChild = Callable[..., tuple[float, int, int, str]]

def removed_flag_literals(count: int = 8) -> list[str]:
    """The ``count`` newest removed flags of the bundled packs (rules named ``removed-*`` on
    an engine arg or CLI flag, without a value qualifier), as ``--flag`` literals."""
    from packaging.version import Version

    from vllm_upgrade_check.knowledge.registry import load_registry

    found: list[str] = []
    for _pack, rule in sorted(
        load_registry().rules(), key=lambda pr: Version(str(pr[0].release)), reverse=True
    ):
        if rule.match.kind.value not in ("engine_arg", "cli_flag") or not rule.name.startswith("removed"):
            continue
        if getattr(rule.match, "values", None):
            continue
        literal = "--" + rule.match.name.lstrip("-").replace("_", "-")
        if literal not in found:
            found.append(literal)
        if len(found) == count:
            break
    return found


def grep_argv(root: Path, literals: list[str]) -> list[str]:
    """``grep -rEn`` of ``literals`` over ``root`` (the floor: every byte read once)."""
    pattern = "|".join(lit.replace(".", r"\.") for lit in literals)
    return ["grep", "-rEn", "--exclude-dir=node_modules", "--exclude-dir=.git", "-e", pattern, str(root)]


def semgrep_argv(exe: str, root: Path, literals: list[str], work: Path) -> list[str]:
    """semgrep with one generic-mode rule per literal, offline, on 2 jobs."""
    rules = {
        "rules": [
            {
                "id": f"removed-{k}",
                "languages": ["generic"],
                "severity": "ERROR",
                "message": f"{lit} was removed",
                "pattern-regex": lit.replace(".", r"\.") + r"\b",
            }
            for k, lit in enumerate(literals)
        ]
    }
    config = work / "semgrep-removed.json"
    config.write_text(json.dumps(rules))
    return [
        exe,
        "scan",
        "--config",
        str(config),
        "--metrics",
        "off",
        "--disable-version-check",
        "-j",
        "2",
    ] + ["--json", "-q", "--timeout", "0", str(root)]


def paired(
    a: tuple[list[str], dict[str, str] | None],
    b: tuple[list[str], dict[str, str] | None],
    runs: int,
) -> dict[str, float]:
    """Run A and B in turn ``runs`` times (after one uncounted pair when ``runs`` > 1);
    medians of A's and B's wall and CPU seconds, of the per-pair wall ratios A/B, and A's
    largest peak RSS (MiB)."""
    rows: list[tuple[float, float, float, float]] = []
    peak = 0
    for n in range(runs + (1 if runs > 1 else 0)):
        wall_a, code_a, rss_a, cpu_a, err_a = run_cpu(*a)
        wall_b, code_b, _rss_b, cpu_b, err_b = run_cpu(*b)
        if code_a not in (0, 1) or code_b not in (0, 1):
            raise SystemExit(f"a paired run failed: {code_a} {err_a[-300:]} / {code_b} {err_b[-300:]}")
        if n or runs == 1:
            rows.append((wall_a, wall_b, cpu_a, cpu_b))
            peak = max(peak, rss_a)
    med = statistics.median
    return {
        "a": med(r[0] for r in rows),
        "b": med(r[1] for r in rows),
        "cpu_a": med(r[2] for r in rows),
        "cpu_b": med(r[3] for r in rows),
        "ratio": med(r[0] / r[1] for r in rows),
        "peak": peak / 1024,
    }


def findings_of(cli: list[str], env: dict[str, str] | None, root: Path, extra: list[str]) -> list[str]:
    """The findings of one CLI scan (JSON), each as a canonical JSON line, sorted."""
    argv = [*cli, "scan", str(root), "--format", "json", "--fail-on", "never", "--skip-unreadable", *extra]
    proc = subprocess.run(argv, capture_output=True, env=env, check=False)
    if proc.returncode != 0:
        raise SystemExit(f"scan failed ({proc.returncode}): {proc.stderr.decode(errors='replace')[-400:]}")
    data = json.loads(proc.stdout)
    rows = [json.dumps(f, sort_keys=True) for f in data["findings"]]
    rows += [json.dumps(["skipped", s], sort_keys=True) for s in data.get("skipped", [])]
    return sorted(rows)


def check_findings(cli: list[str], env: dict[str, str] | None, root: Path, cache: Path) -> bool:
    """Whether the fast paths (2 workers cold; 2 workers with a filled cache, warm) find what
    ``--jobs 1 --no-cache`` finds on ``root``; prints the verdict and the counts."""
    reference = findings_of(cli, env, root, ["--jobs", "1", "--no-cache"])
    cold = findings_of(cli, env, root, [*JOBS, "--no-cache"])
    findings_of(cli, env, root, [*JOBS, "--cache-dir", str(cache)])  # fill the cache
    warm = findings_of(cli, env, root, [*JOBS, "--cache-dir", str(cache)])
    same = reference == cold == warm
    print(
        f"  findings: --jobs 1 --no-cache {len(reference)}, 2 workers cold {len(cold)}, warm {len(warm)}: "
        f"{'identical' if same else 'DIFFERENT'}"
    )
    if not same:
        for name, rows in (("cold", cold), ("warm", warm)):
            extra, missing = sorted(set(rows) - set(reference)), sorted(set(reference) - set(rows))
            for row in extra[:3] + missing[:3]:
                print(f"    {name} {'+' if row in extra else '-'} {row[:200]}")
    return same


def dense_report(
    run_child: RunChild,
    cli: list[str],
    env: dict[str, str] | None,
    root: Path,
    work: Path,
    runs: int,
    semgrep: str | None,
    why_not: str,
) -> dict[str, float]:
    """Print the dense comparison table for ``root``; return the goal figures."""
    literals = removed_flag_literals()
    print(f"removed-flag literals for grep and semgrep ({len(literals)}): {' '.join(literals)}")
    scan = [*cli, "scan", str(root), "--format", "json", "--fail-on", "never", "--skip-unreadable", *JOBS]
    cold = (scan + ["--no-cache"], env)
    cache = work / "cache-dense"
    warm = (scan + ["--cache-dir", str(cache)], env)
    run_child(*warm)  # fill the cache
    grep = (grep_argv(root, literals), None)
    figures: dict[str, float] = {}
    print(
        f"\n{'pair (A vs B), 2 workers':<40}{'A s':>9}{'B s':>9}{'A/B':>9}{'goal':>12}  met{'A cpu s':>10}{'B cpu s':>10}"
    )
    rows = []
    if semgrep is not None:
        sem = (semgrep, dict(os.environ, SEMGREP_ENABLE_VERSION_CHECK="0", SEMGREP_SEND_METRICS="off"))
        r = paired(sem, cold, runs)
        figures["semgrep / cold"] = r["ratio"]
        rows.append(
            (
                "semgrep -j 2 vs scan cold",
                r,
                f">= {GOALS['semgrep / cold']:.0f}",
                r["ratio"] >= GOALS["semgrep / cold"],
            )
        )
    else:
        print(f"  semgrep skipped: {why_not}")
    r = paired(cold, grep, runs)
    figures["cold / grep"], figures["peak MiB"] = r["ratio"], r["peak"]
    rows.append(
        ("scan cold vs grep -rEn", r, f"<= {GOALS['cold / grep']:.0f}", r["ratio"] <= GOALS["cold / grep"])
    )
    r = paired(warm, grep, runs)
    figures["warm / grep"] = r["ratio"]
    figures["peak MiB"] = max(figures["peak MiB"], r["peak"])
    rows.append(
        ("scan warm vs grep -rEn", r, f"<= {GOALS['warm / grep']:.0f}", r["ratio"] <= GOALS["warm / grep"])
    )
    serial = (
        [
            *cli,
            "scan",
            str(root),
            "--format",
            "json",
            "--fail-on",
            "never",
            "--skip-unreadable",
            "--jobs",
            "1",
            "--no-cache",
        ],
        env,
    )
    r = paired(serial, grep, runs)
    rows.append(("scan cold, 1 process vs grep -rEn", r, "", True))
    for label, r, goal, met in rows:
        verdict = ("yes" if met else "NO") if goal else ""
        print(
            f"{label:<40}{r['a']:>9.3f}{r['b']:>9.3f}{r['ratio']:>9.2f}{goal:>12}  {verdict:<3}"
            f"{r['cpu_a']:>10.3f}{r['cpu_b']:>10.3f}"
        )
    print(
        "  (A/B: the median of the per-pair wall-time ratios; CPU: user + system of each command and its workers)"
    )
    peak_ok = figures["peak MiB"] < GOALS["peak MiB"]
    print(
        f"  peak RSS of the scan {figures['peak MiB']:.1f} MiB (goal < {GOALS['peak MiB']:.0f}): {'met' if peak_ok else 'NOT met'}"
    )
    check_findings(cli, env, root, work / "cache-dense-check")
    return figures


def growth(
    cli: list[str],
    env: dict[str, str] | None,
    work: Path,
    sizes: list[int],
    build: Callable[[Path, int], object],
    runs: int,
) -> None:
    """Cold scan (2 workers) at each size: wall and CPU seconds, CPU ms per 1k files, and
    the largest over the smallest CPU ms per 1k files (1.00: linear)."""
    print(f"\n{'files':>8}{'cold s':>9}{'CPU s':>9}{'CPU ms/1k files':>17}{'RSS MiB':>9}")
    per_k = []
    for size in sizes:
        tree = work / f"dense-{size}"
        build(tree, size)
        argv = [*cli, "scan", str(tree), "--format", "json", "--fail-on", "never", "--skip-unreadable", *JOBS]
        results = [run_cpu([*argv, "--no-cache"], env) for _ in range(runs)]
        wall = min(r[0] for r in results)
        cpu = min(r[3] for r in results)
        rss = max(r[2] for r in results)
        per_k.append(1000 * cpu / (size / 1000))
        print(f"{size:>8}{wall:>9.3f}{cpu:>9.3f}{per_k[-1]:>17.1f}{rss / 1024:>9.1f}")
        subprocess.run(["rm", "-rf", str(tree)], check=False)
    if len(per_k) > 1:
        print(
            f"  linearity: largest / smallest CPU ms per 1k files = {max(per_k) / min(per_k):.2f} (1.00: linear)"
        )
    sys.stdout.flush()
