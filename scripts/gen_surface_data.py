"""Generate the per-release surface data shipped in ``src/vllm_upgrade_check/data/surface/``.

Usage: ``python scripts/gen_surface_data.py [SURFACES_DIR]`` (default ``/work/notes/surfaces``,
the ``<VERSION>.json`` files ``scripts/extract_surfaces.py`` writes from the vLLM wheels).

Writes ``requires.json``: for every release, its ``Requires-Python`` and every
``Requires-Dist`` line of ``vllm-<VERSION>.dist-info/METADATA`` (verbatim, markers included)
with the METADATA line it is on. Re-run it when new surfaces are extracted.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from packaging.version import InvalidVersion, Version

OUT = Path(__file__).resolve().parents[1] / "src" / "vllm_upgrade_check" / "data" / "surface"


def _surfaces(root: Path) -> list[tuple[Version, dict]]:
    found = []
    for path in root.glob("*.json"):
        try:
            version = Version(path.stem)
        except InvalidVersion:
            continue
        found.append((version, json.loads(path.read_text(encoding="utf-8"))))
    return sorted(found, key=lambda vs: vs[0])


def main(argv: list[str]) -> int:
    """Write the data files; returns the process exit code."""
    root = Path(argv[1]) if len(argv) > 1 else Path("/work/notes/surfaces")
    surfaces = _surfaces(root)
    if not surfaces:
        print(f"no <VERSION>.json surfaces under {root}", file=sys.stderr)
        return 2
    releases: dict[str, dict[str, object]] = {}
    for version, surface in surfaces:
        python_ref = surface.get("requires_python_ref") or [None, None]
        releases[str(version)] = {
            "requires_python": [surface.get("requires_python"), python_ref[1]],
            "requires_dist": [[r["requirement"], (r.get("ref") or [None, None])[1]] for r in surface["requires_dist"]],
        }
    data = {
        "schema": 1,
        "source": "vllm-<VERSION>.dist-info/METADATA of each vLLM wheel on PyPI: Requires-Python and Requires-Dist, "
        "with the METADATA line each is on",
        "releases": releases,
    }
    OUT.mkdir(parents=True, exist_ok=True)
    target = OUT / "requires.json"
    target.write_text(json.dumps(data, separators=(",", ":")) + "\n", encoding="utf-8")
    print(f"{target}: {len(releases)} releases")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv))
