"""Add the kinds ``model_impls``, ``completion_fields`` and ``embedding_fields`` to ``history.json``,
read from the vLLM wheels with ``ast`` (never imported).

Usage: ``python scripts/gen_wheel_kinds.py [WHEELS_DIR]`` (default ``/work/wheels``), after
``scripts/gen_surface_data.py`` (which keeps these kinds as it finds them):

- ``model_impls``: the values ``--model-impl`` / ``model_impl`` take: the members of
  ``ModelImpl`` (a ``str`` enum in ``vllm/config.py`` and ``vllm/config/__init__.py``, a
  ``Literal`` in ``vllm/config/model.py`` from 0.11.0), or the ``choices`` of ``--model-impl``
  in ``vllm/engine/arg_utils.py`` where no ``ModelImpl`` is found;
- ``completion_fields``: the fields of the OpenAI-compatible server's completion response
  models (``CompletionResponse``, its choice, ``CompletionLogProbs``, the stream chunk and its
  choice, ``UsageInfo``), with their vLLM base classes' fields;
- ``embedding_fields``: likewise for ``EmbeddingResponse``, ``EmbeddingResponseData`` and
  ``UsageInfo``.

The response models are read from the wheel's ``protocol.py`` modules under
``vllm/entrypoints/`` (as ``scripts/gen_public_names.py`` reads the chat ones).
"""

from __future__ import annotations

import ast
import json
import sys
import zipfile
from pathlib import Path

from gen_public_names import model_fields
from gen_surface_data import _runs
from packaging.version import InvalidVersion, Version

OUT = Path(__file__).resolve().parents[1] / "src" / "vllm_upgrade_check" / "data" / "surface"

RESPONSE_KINDS = {
    "completion_fields": (
        "CompletionResponse",
        "CompletionResponseChoice",
        "CompletionLogProbs",
        "CompletionStreamResponse",
        "CompletionResponseStreamChoice",
        "UsageInfo",
    ),
    "embedding_fields": ("EmbeddingResponse", "EmbeddingResponseData", "UsageInfo"),
}
"""Kind -> the pydantic models of that response as the server returns it."""

CONFIG_FILES = ("vllm/config/model.py", "vllm/config/__init__.py", "vllm/config.py")


def _strings(node: ast.AST) -> list[str]:
    return [n.value for n in ast.walk(node) if isinstance(n, ast.Constant) and isinstance(n.value, str)]


def _model_impls(archive: zipfile.ZipFile, names: set[str]) -> dict[str, str]:
    """``{value: "path:line"}`` of ``ModelImpl`` (or ``--model-impl``'s choices)."""
    for path in CONFIG_FILES:
        if path not in names:
            continue
        tree = ast.parse(archive.read(path))
        for node in tree.body:
            if isinstance(node, ast.ClassDef) and node.name == "ModelImpl":
                return {
                    s.value.value: f"{path}:{s.lineno}"
                    for s in node.body
                    if isinstance(s, ast.Assign)
                    and isinstance(s.value, ast.Constant)
                    and isinstance(s.value.value, str)
                }
            if (
                isinstance(node, ast.Assign)
                and any(isinstance(t, ast.Name) and t.id == "ModelImpl" for t in node.targets)
                and isinstance(node.value, ast.Subscript)
            ):
                return {v: f"{path}:{node.lineno}" for v in _strings(node.value.slice)}
    path = "vllm/engine/arg_utils.py"
    if path in names:
        for node in ast.walk(ast.parse(archive.read(path))):
            if isinstance(node, ast.Call) and node.args and _strings(node.args[0])[:1] == ["--model-impl"]:
                for kw in node.keywords:
                    if kw.arg == "choices" and isinstance(kw.value, (ast.List, ast.Tuple)):
                        return {v: f"{path}:{node.lineno}" for v in _strings(kw.value)}
    return {}


def _fields(cls: ast.ClassDef) -> dict[str, int]:
    return {
        s.target.id: s.lineno
        for s in cls.body
        if isinstance(s, ast.AnnAssign)
        and isinstance(s.target, ast.Name)
        and not s.target.id.startswith("_")
        and "ClassVar" not in ast.unparse(s.annotation)  # a class attribute, not a field of the response
    }


def read_wheel(wheel: Path) -> dict[str, dict[str, str]]:
    """``{kind: {name: "path:line"}}`` of one wheel."""
    out: dict[str, dict[str, str]] = {}
    with zipfile.ZipFile(wheel) as archive:
        names = set(archive.namelist())
        out["model_impls"] = _model_impls(archive, names)
        classes: dict[str, tuple[str, ast.ClassDef]] = {}
        for path in sorted(names):
            if path.startswith("vllm/entrypoints/") and path.endswith("protocol.py"):
                try:
                    tree = ast.parse(archive.read(path))
                except (SyntaxError, ValueError):
                    continue
                for node in tree.body:
                    if isinstance(node, ast.ClassDef):
                        classes.setdefault(node.name, (path, node))
    for kind, models in RESPONSE_KINDS.items():
        out[kind] = model_fields(classes, models, _fields)
    return out


def main(argv: list[str]) -> int:
    """Write the kinds into ``history.json``; returns the exit code."""
    wheels = Path(argv[1]) if len(argv) > 1 else Path("/work/wheels")
    history_file = OUT / "history.json"
    history = json.loads(history_file.read_text(encoding="utf-8"))
    releases = history["releases"]
    found: dict[str, Path] = {}
    for path in wheels.glob("vllm-*.whl"):
        try:
            found[str(Version(path.name.split("-")[1]))] = path
        except InvalidVersion:
            continue
    missing = [r for r in releases if r not in found]
    if missing:
        print(f"no wheel for {', '.join(missing)} in {wheels}", file=sys.stderr)
        return 2
    per: dict[str, dict[str, list[int]]] = {}
    refs: dict[str, dict[str, str]] = {}
    for index, release in enumerate(releases):
        for kind, names in read_wheel(found[release]).items():
            for name, ref in names.items():
                per.setdefault(kind, {}).setdefault(name, []).append(index)
                refs.setdefault(kind, {})[name] = ref
    for kind in ("model_impls", *RESPONSE_KINDS):
        history["kinds"][kind] = {n: [_runs(i), refs[kind][n]] for n, i in sorted(per.get(kind, {}).items())}
    history_file.write_text(json.dumps(history, separators=(",", ":")) + "\n", encoding="utf-8")
    print(f"{history_file}: " + ", ".join(f"{k} {len(per.get(k, {}))}" for k in ("model_impls", *RESPONSE_KINDS)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv))
