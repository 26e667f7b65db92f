"""Generate the per-release surface data shipped in ``src/vllm_upgrade_check/data/surface/``.

Usage: ``python scripts/gen_surface_data.py [SURFACES_DIR]`` (default ``/work/notes/surfaces``,
the ``<VERSION>.json`` files ``scripts/extract_surfaces.py`` writes from the vLLM wheels).

Writes:

- ``requires.json``: for every release, its ``Requires-Python`` and every ``Requires-Dist``
  line of ``vllm-<VERSION>.dist-info/METADATA`` (verbatim, markers included) with the
  METADATA line it is on;
- ``history.json``: for each kind of name a release exposes (``engine_args``,
  ``sampling_params``, ``metrics``, ``quantization_methods``, ``load_formats``,
  ``architectures``), every name any release has, as runs ``[first, last]`` of indexes into
  ``releases`` (the releases that have it), and the wheel file that defines it in the newest
  release that has it;
- ``modules.json``: likewise for the importable modules of ``vllm/``: every ``.py`` file,
  every directory holding one (a package, or a namespace package), and every compiled
  extension (``vllm/_C.abi3.so`` is ``vllm._C``), read from the file list of each wheel in
  ``WHEELS_DIR`` (default ``/work/wheels``) when it is there, else from the surfaces'
  ``modules``.

Re-run it when new surfaces are extracted, then ``scripts/gen_public_names.py`` (the public
names of each module, and the ``response_fields`` kind of ``history.json``, which this script
keeps as it finds it).
"""

from __future__ import annotations

import ast
import json
import sys
import zipfile
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


HISTORY_KINDS = ("engine_args", "sampling_params", "metrics", "quantization_methods", "load_formats", "architectures")
"""The kinds of ``history.json``: keys of each surface, each a mapping name -> [path, line]."""



def _runs(indexes: list[int]) -> list[list[int]]:
    """Consecutive runs of sorted ``indexes``: ``[0, 1, 2, 5]`` -> ``[[0, 2], [5, 5]]``."""
    runs: list[list[int]] = []
    for i in indexes:
        if runs and runs[-1][1] == i - 1:
            runs[-1][1] = i
        else:
            runs.append([i, i])
    return runs


def _history(per_release: list[dict[str, str]], refs_kept: bool = True) -> dict[str, object]:
    """``{name: [runs, ref]}`` over the releases (oldest first) of ``per_release``, each a
    mapping name -> the file that defines it in that release; ``{name: runs}`` without
    ``refs_kept`` (a module's file follows from its name)."""
    seen: dict[str, list[int]] = {}
    refs: dict[str, str] = {}
    for index, names in enumerate(per_release):
        for name, ref in names.items():
            seen.setdefault(name, []).append(index)
            refs[name] = ref
    if not refs_kept:
        return {name: _runs(indexes) for name, indexes in sorted(seen.items())}
    return {name: [_runs(indexes), refs[name]] for name, indexes in sorted(seen.items())}


def _wheel_modules(wheel: Path) -> dict[str, str]:
    """Importable module -> file of ``vllm/`` in ``wheel``'s file list (nothing unpacked)."""
    out: dict[str, str] = {}
    with zipfile.ZipFile(wheel) as archive:
        for path in archive.namelist():
            if not path.startswith("vllm/"):
                continue
            stem = None
            if path.endswith(".py"):
                stem = path[: -len(".py")]
            elif path.endswith(".so"):
                stem = path.rsplit("/", 1)[0] + "/" + path.rsplit("/", 1)[1].split(".", 1)[0]
            if stem is None:
                continue
            parts = stem.split("/")
            if parts[-1] == "__init__":
                parts = parts[:-1]
            for depth in range(1, len(parts)):  # the packages (or namespace packages) above
                out.setdefault(".".join(parts[:depth]), "/".join(parts[:depth]) + "/")
            if all(p.isidentifier() for p in parts):
                out[".".join(parts)] = path
    return {name: ref for name, ref in out.items() if all(p.isidentifier() for p in name.split("."))}


def _llm_init(wheel: Path) -> tuple[dict[str, str], dict[str, str]]:
    """The keywords ``LLM.__init__`` names, and those it pops from ``**kwargs``
    (``kwargs.pop("swap_space")``: accepted and ignored), each -> its file and line, read
    with :mod:`ast` from ``vllm/entrypoints/llm.py`` of ``wheel``."""
    path = "vllm/entrypoints/llm.py"
    with zipfile.ZipFile(wheel) as archive:
        tree = ast.parse(archive.read(path))
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef) and node.name == "LLM":
            for init in node.body:
                if isinstance(init, ast.FunctionDef) and init.name == "__init__":
                    args = init.args.args + init.args.kwonlyargs
                    params = {a.arg: f"{path}:{a.lineno}" for a in args if a.arg != "self"}
                    popped = {
                        call.args[0].value: f"{path}:{call.lineno}"
                        for call in ast.walk(init)
                        if isinstance(call, ast.Call)
                        and isinstance(call.func, ast.Attribute)
                        and call.func.attr == "pop"
                        and isinstance(call.func.value, ast.Name)
                        and call.func.value.id == "kwargs"
                        and call.args
                        and isinstance(call.args[0], ast.Constant)
                        and isinstance(call.args[0].value, str)
                    }
                    return params, popped
    return {}, {}


def _wheel_for(wheels: Path, version: Version) -> Path | None:
    for candidate in wheels.glob(f"vllm-{version}-*.whl"):
        return candidate
    return None


def main(argv: list[str]) -> int:
    """Write the data files; returns the process exit code."""
    root = Path(argv[1]) if len(argv) > 1 else Path("/work/notes/surfaces")
    wheels = Path(argv[2]) if len(argv) > 2 else Path("/work/wheels")
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
    versions = [str(version) for version, _surface in surfaces]
    kinds = {
        kind: _history([{n: ref[0] for n, ref in (s.get(kind) or {}).items()} for _v, s in surfaces])
        for kind in HISTORY_KINDS
    }
    inits = [_llm_init(w) if (w := _wheel_for(wheels, v)) else ({}, {}) for v, _s in surfaces]
    kinds["llm_params"] = _history([params for params, _popped in inits])
    kinds["llm_ignored"] = _history([popped for _params, popped in inits])
    history = {
        "schema": 1,
        "source": "the vLLM wheels on PyPI, read without importing them: EngineArgs fields "
        "(vllm/engine/arg_utils.py), SamplingParams fields (vllm/sampling_params.py), metric names "
        "as prometheus_client exposes them, quantization methods, load formats and the model "
        "registry's architectures",
        "releases": versions,
        "kinds": kinds,
    }
    target = OUT / "history.json"
    if target.exists():  # kinds written by scripts/gen_public_names.py and scripts/gen_wheel_kinds.py: kept
        old = json.loads(target.read_text(encoding="utf-8")).get("kinds", {})
        for name in ("response_fields", "model_impls", "completion_fields", "embedding_fields"):
            if old.get(name) is not None:
                kinds[name] = old[name]
    target.write_text(json.dumps(history, separators=(",", ":")) + "\n", encoding="utf-8")
    print(f"{target}: " + ", ".join(f"{k} {len(v)}" for k, v in kinds.items()))
    per_release = []
    for version, surface in surfaces:
        wheel = _wheel_for(wheels, version)
        if wheel is not None:
            per_release.append(_wheel_modules(wheel))
        else:
            per_release.append({n: ref[0] for n, ref in (surface.get("modules") or {}).items()})
    modules = {
        "schema": 1,
        "source": "the file list of each vLLM wheel on PyPI: every module, package, namespace package "
        "and compiled extension under vllm/",
        "releases": versions,
        "kinds": {"modules": _history(per_release, refs_kept=False)},
    }
    target = OUT / "modules.json"
    target.write_text(json.dumps(modules, separators=(",", ":")) + "\n", encoding="utf-8")
    print(f"{target}: {len(modules['kinds']['modules'])} modules")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv))
