"""Extract the surface of every downloaded vLLM wheel into ``<OUT>/<VERSION>.json``.

Usage: ``python scripts/extract_surfaces.py [WHEELS_DIR] [OUT_DIR] [-j N] [VERSION ...]``
(defaults ``/work/wheels`` and ``/work/notes/surfaces``).  Wheels are read
with :mod:`zipfile` by :func:`vllm_upgrade_check.knowledge.derive.extract_surface`;
nothing is unpacked or imported.  Prints, per release, the number of CLI
flags and of flags whose arity is unknown (``takes: null``).
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

from vllm_upgrade_check.knowledge.derive import extract_surface

_WHEEL = re.compile(r"vllm-([^-]+)-.*\.whl$")


def _one(wheel: str, out_dir: str) -> tuple[str, int, list[str], str | None]:
    """Extract one wheel; returns (version, flag count, unknown-arity flags, error)."""
    m = _WHEEL.search(Path(wheel).name)
    version = m.group(1) if m else Path(wheel).name
    try:
        surface = extract_surface(wheel)
    except Exception as exc:  # noqa: BLE001 - reported per wheel
        return version, 0, [], f"{type(exc).__name__}: {exc}"
    data = surface.to_json()
    (Path(out_dir) / f"{surface.version}.json").write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")
    unknown = sorted(f for f, a in surface.cli_arity.items() if a.takes is None)
    return surface.version, len(surface.cli_flags), unknown, None


def main(argv: list[str]) -> int:
    """Run the extraction; returns the process exit code (1 if a wheel failed)."""
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("wheels", nargs="?", default="/work/wheels")
    ap.add_argument("out", nargs="?", default="/work/notes/surfaces")
    ap.add_argument("-j", "--jobs", type=int, default=8)
    ap.add_argument("--only", nargs="*", default=[], help="versions to extract (default: all)")
    args = ap.parse_args(argv[1:])
    Path(args.out).mkdir(parents=True, exist_ok=True)
    wheels = sorted(str(p) for p in Path(args.wheels).glob("vllm-*.whl"))
    if args.only:
        wheels = [w for w in wheels if (m := _WHEEL.search(Path(w).name)) and m.group(1) in args.only]
    failed = 0
    with ProcessPoolExecutor(args.jobs) as pool:
        for version, count, unknown, error in pool.map(_one, wheels, [args.out] * len(wheels)):
            if error:
                failed += 1
                print(f"{version}: ERROR {error}")
            else:
                print(f"{version}: {count} flags, {len(unknown)} takes=null {' '.join(unknown)}")
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv))
