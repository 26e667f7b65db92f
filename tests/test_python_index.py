"""The one-pass index of a Python tree (``python/index.py``) holds what the readers collected
before with their own walks (a :class:`Scope` per body, :func:`ast.walk` for calls, imports,
docstrings and metric strings): the same nodes in the same order, on every syntax form of the
child-node tests and on every Python file of this repository and its test inputs."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from test_python_child_nodes import SOURCES
from vllm_upgrade_check.sources.scanners.python.builders import may_run_commands
from vllm_upgrade_check.sources.scanners.python.index import TreeIndex, parsed_module
from vllm_upgrade_check.sources.scanners.python.scope import Scope

ROOT = Path(__file__).resolve().parents[1]
EXTRA = [
    '"""Module doc with vllm:num_requests_running."""\nQ = "sum(vllm:num_requests_waiting)"\n'
    "class C:\n    'vllm:class_doc'\n    def f(self):\n        \"\"\"vllm:fn_doc\"\"\"\n"
    "        return f\"rate(vllm:x_total[{w}])\" + 'vllm:y'\n",
    "import ray\ndef f():\n    from ray.serve.llm import LLMConfig as C\n    import modal\n"
    "    g = lambda: __import__('x')\n    return C\nfrom vllm import LLM\n",
    "@deco(subprocess.run(['a']))\ndef start(m, port=os.system('x')):\n    subprocess.run(['vllm', 'serve', m])\n"
    "start('m')\nclass K(Base, meta=M):\n    y = 1\n    def g(self):\n        def h():\n            z = 2\n        return h\n",
]


def _corpus() -> list[str]:
    files = sorted(
        [*ROOT.glob("src/**/*.py"), *ROOT.glob("tests/**/*.py"), *ROOT.glob("examples/**/*.py")]
    )
    texts = []
    for path in files:
        try:
            text = path.read_text(encoding="utf-8")
            ast.parse(text)
        except (SyntaxError, ValueError, UnicodeDecodeError):
            continue
        texts.append(text)
    return texts


def _old_scopes(tree: ast.Module) -> tuple[list[Scope], dict[int, Scope]]:
    """The scopes as the walker collected them before the index (breadth first)."""
    module = Scope(tree.body, None)
    inner: dict[int, Scope] = {}
    scopes = [module]
    for scope in scopes:
        for node in scope.nodes:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                inner[id(node)] = child = Scope(node.body, scope)
                scopes.append(child)
    return scopes, inner


def _old_docstrings(tree: ast.AST) -> set[int]:
    ids = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                ids.add(id(body[0].value))
    return ids


def _check(text: str) -> None:
    tree = ast.parse(text)
    index = TreeIndex(tree)
    scopes, inner = _old_scopes(tree)
    assert len(index.scopes) == len(scopes)
    for new, old in zip(index.scopes, scopes, strict=True):
        # the index leaves out the Load/Store/Del context objects, which no reader asks for
        assert new.nodes == [n for n in old.nodes if not isinstance(n, ast.expr_context)]
        assert new.assigned == old.assigned
        assert new.functions == [n for n in old.nodes if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]
        assert new.imports == [n for n in old.nodes if isinstance(n, (ast.Import, ast.ImportFrom))]
        assert (new.parent is None) == (old.parent is None)
        if old.parent is not None:
            assert index.scopes.index(new.parent) == scopes.index(old.parent)  # type: ignore[arg-type]
    assert {k: index.scopes.index(v) for k, v in index.inner.items()} == {
        k: scopes.index(v) for k, v in inner.items()
    }
    walked = list(ast.walk(tree))
    assert sorted(map(id, index.calls)) == sorted(id(n) for n in walked if isinstance(n, ast.Call))
    assert index.imports == [n for n in walked if isinstance(n, (ast.Import, ast.ImportFrom))]
    docstrings = _old_docstrings(tree)
    assert index.docstrings == docstrings
    assert index.metric_strings == [
        n
        for n in walked
        if isinstance(n, ast.Constant) and isinstance(n.value, str) and "vllm:" in n.value and id(n) not in docstrings
    ]


@pytest.mark.parametrize("text", [*SOURCES, *EXTRA])
def test_the_index_holds_what_the_walks_found_on_each_syntax_form(text: str) -> None:
    _check(text)


def test_the_index_holds_what_the_walks_found_on_every_python_file_here() -> None:
    texts = _corpus()
    assert len(texts) > 200
    for text in texts:
        _check(text)


def test_metric_strings_leave_docstrings_out_in_walk_order() -> None:
    _tree, index = parsed_module(EXTRA[0])
    values = [n.value for n in index.metric_strings]
    assert values == ["sum(vllm:num_requests_waiting)", "vllm:y", "rate(vllm:x_total["]


def test_a_file_runs_commands_only_where_its_text_can_name_them() -> None:
    assert may_run_commands("import subprocess\n")
    assert may_run_commands("os.system('x')\n")
    assert may_run_commands("ｓｕｂｐｒｏｃｅｓｓ.run(['vllm'])\n")  # NFKC: the name subprocess
    assert not may_run_commands("import json\nprint(json.dumps({}))\n")
