"""Generate ``src/vllm_upgrade_check/data/known_args.json`` from extracted release surfaces.

Usage: ``python scripts/gen_known_args.py [SURFACES_DIR]`` (default ``/work/notes/surfaces``).

Reads every ``<VERSION>.json`` surface (produced by ``vllm_upgrade_check.knowledge.derive`` from the
unpacked vLLM wheels) and writes the union of their ``cli_flags`` (as written, ``--max-num-seqs``)
``engine_args`` (snake_case) and ``env_vars`` (keys of ``vllm/envs.py``), with the first and last release each was seen in and the
wheel file that defines it in the newest release. Re-run it when new surfaces are extracted.

Each ``cli_flags`` entry also has ``"takes"``: how many argv words the flag consumes (``"0"``,
``"1"``, ``"?"``, ``"+"``, ``"*"``, ``"N"``; null when the extractor could not read it) in the
newest release that has it, and, only when that differs between releases,
``"takes_by_release": [[first, last, takes], ...]`` (contiguous runs over the releases that have
the flag).  ``"choices"`` / ``"choices_by_release"`` likewise, for the value words argparse
accepts (``"choices"`` is left out when the newest release does not restrict them; a run with
unrestricted values has null). ``"missing"``: ``[first, last]`` runs of releases between a
flag's first and last that do not define it.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from packaging.version import InvalidVersion, Version

OUT = Path(__file__).resolve().parents[1] / "src" / "vllm_upgrade_check" / "data" / "known_args.json"


def main(argv: list[str]) -> int:
    """Write the known-args file; returns the process exit code."""
    root = Path(argv[1]) if len(argv) > 1 else Path("/work/notes/surfaces")
    surfaces = []
    for path in root.glob("*.json"):
        try:
            version = Version(path.stem)
        except InvalidVersion:
            continue
        surfaces.append((version, json.loads(path.read_text(encoding="utf-8"))))
    if not surfaces:
        print(f"no <VERSION>.json surfaces under {root}", file=sys.stderr)
        return 2
    surfaces.sort(key=lambda vs: vs[0])
    flags: dict[str, dict[str, object]] = {}
    arity_runs: dict[str, list[tuple[str, object, object]]] = {}
    engine_args: dict[str, dict[str, object]] = {}
    env_vars: dict[str, dict[str, object]] = {}
    env_seen: dict[str, set[str]] = {}
    for version, surface in surfaces:
        for table, out in (
            (surface.get("cli_flags", {}), flags),
            (surface.get("engine_args", {}), engine_args),
            (surface.get("env_vars", {}), env_vars),
        ):
            for name, ref in table.items():
                entry = out.setdefault(name, {"first": str(version)})
                entry["last"] = str(version)
                entry["ref"] = f"vllm-{version} wheel: {ref[0]}:{ref[1]}" if isinstance(ref, list) else None
        arity = surface.get("cli_arity", {})
        for name in surface.get("cli_flags", {}):
            info = arity.get(name, {})
            arity_runs.setdefault(name, []).append((str(version), info.get("takes"), info.get("choices")))
    for name, per_release in arity_runs.items():
        _add_arity(flags[name], per_release)
    releases = [str(v) for v, _s in surfaces]
    for name, per_release in arity_runs.items():
        _add_missing(flags[name], {v for v, _t, _c in per_release}, releases)
    for version, surface in surfaces:
        for name in surface.get("env_vars", {}):
            env_seen.setdefault(name, set()).add(str(version))
    for name, seen in env_seen.items():
        _add_missing(env_vars[name], seen, releases)
    data = {
        "source": "union of cli_flags, engine_args and env_vars (vllm/envs.py) of the vLLM wheel surfaces",
        "releases": [str(v) for v, _s in surfaces],
        "cli_flags": dict(sorted(flags.items())),
        "engine_args": dict(sorted(engine_args.items())),
        "env_vars": dict(sorted(env_vars.items())),
    }
    OUT.write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")
    print(f"{OUT}: {len(flags)} flags, {len(engine_args)} engine args, {len(env_vars)} env vars, {len(surfaces)} releases")
    return 0


def _runs(per_release: list[tuple[str, object]]) -> list[list[object]]:
    """Contiguous ``[first, last, value]`` runs of ``(version, value)`` pairs."""
    runs: list[list[object]] = []
    for version, value in per_release:
        if runs and runs[-1][2] == value:
            runs[-1][1] = version
        else:
            runs.append([version, version, value])
    return runs


def _add_missing(entry: dict[str, object], seen: set[str], releases: list[str]) -> None:
    """Set ``missing``: ``[first, last]`` runs of the releases between the entry's first and
    last that do not define it (``--disable-log-requests``: gone 0.17.0-0.32.x, back in 0.33.0
    as the inverse of ``--enable-log-requests``)."""
    inside = releases[releases.index(str(entry["first"])) : releases.index(str(entry["last"])) + 1]
    runs: list[list[str]] = []
    previous_missing = False
    for version in inside:
        if version in seen:
            previous_missing = False
            continue
        if previous_missing:
            runs[-1][1] = version
        else:
            runs.append([version, version])
        previous_missing = True
    if runs:
        entry["missing"] = runs


def _add_arity(entry: dict[str, object], per_release: list[tuple[str, object, object]]) -> None:
    """Set ``takes``/``choices`` (newest release) and their ``*_by_release``
    runs when they vary, on a ``cli_flags`` entry."""
    takes = _runs([(v, t) for v, t, _c in per_release])
    entry["takes"] = takes[-1][2]
    if len(takes) > 1:
        entry["takes_by_release"] = takes
    choices = _runs([(v, c) for v, _t, c in per_release])
    if choices[-1][2] is not None:
        entry["choices"] = choices[-1][2]
    if len(choices) > 1:
        entry["choices_by_release"] = choices


if __name__ == "__main__":
    raise SystemExit(main(sys.argv))
