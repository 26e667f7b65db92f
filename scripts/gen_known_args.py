"""Generate ``src/vllm_upgrade_check/data/known_args.json`` from extracted release surfaces.

Usage: ``python scripts/gen_known_args.py [SURFACES_DIR]`` (default ``/work/notes/surfaces``).

Reads every ``<VERSION>.json`` surface (produced by ``vllm_upgrade_check.derive`` from the
unpacked vLLM wheels) and writes the union of their ``cli_flags`` (as written, ``--max-num-seqs``)
``engine_args`` (snake_case) and ``env_vars`` (keys of ``vllm/envs.py``), with the first and last release each was seen in and the
wheel file that defines it in the newest release. Re-run it when new surfaces are extracted.
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
    engine_args: dict[str, dict[str, object]] = {}
    env_vars: dict[str, dict[str, object]] = {}
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


if __name__ == "__main__":
    raise SystemExit(main(sys.argv))
