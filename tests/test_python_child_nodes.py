"""The scope collection's ``child_nodes`` gives every node's children as
:func:`ast.iter_child_nodes` does (the same nodes, in the same order), on every syntax form."""

from __future__ import annotations

import ast

import pytest

from vllm_upgrade_check.sources.scanners.python.scope import Scope, child_nodes

SOURCES = [
    "import os, sys as s\nfrom vllm import LLM as L, SamplingParams\nfrom . import x\n",
    "@decorator(arg=1)\nasync def f(a, /, b: int = 2, *args, c, d=3, **kw) -> list[int]:\n"
    "    async with ctx() as (x, y):\n        async for i in aiter():\n            await g(i)\n    return [x]\n",
    "class C(Base, metaclass=M):\n    x: int = 1\n    def m(self):\n        global G\n        nonlocal_ = lambda q, *r: q\n",
    "match cmd:\n    case ['serve', *rest] if rest:\n        pass\n    case {'model': m, **others}:\n        pass\n"
    "    case Point(x=0, y=_) | None:\n        pass\n    case str() as s:\n        pass\n",
    "try:\n    run()\nexcept* (ValueError, TypeError) as eg:\n    pass\nelse:\n    x = 1\nfinally:\n    del x\n",
    "y = [i * j for i in range(3) if i for j in range(i)]\nz = {k: v for k, v in d.items()}\nw = {*a, *b}\n"
    "g = (n async for n in src())\nif (n := len(y)) > 2:\n    print(f'{n!r:>{width}} {y[1:2:3]}')\n",
    "os.environ['VLLM_USE_V1'] = '1'\nx += 1\nx: 'T'\nassert x, 'msg'\nraise E from None\nwhile not x:\n    break\n"
    "for a, *b in c:\n    continue\nelse:\n    ...\nwith open(p) as h, other():\n    pass\nimport_ = a if b else c\n",
    "LLM(*extra, model='m', **{'max_num_seqs': 8})\nsubprocess.run(['vllm', 'serve', m, *flags], check=True)\n",
]


@pytest.mark.parametrize("text", SOURCES)
def test_child_nodes_are_iter_child_nodes(text: str) -> None:
    tree = ast.parse(text)
    nodes = list(ast.walk(tree))
    assert len(nodes) > 5
    for node in nodes:
        assert child_nodes(node) == list(ast.iter_child_nodes(node))


def test_a_scope_holds_its_nodes_in_source_order_without_nested_bodies() -> None:
    tree = ast.parse("a = 1\ndef f():\n    b = 2\nc = f()\n")
    scope = Scope(tree.body, None)
    names = [n.id for n in scope.nodes if isinstance(n, ast.Name)]
    assert names == ["a", "c", "f"]  # b is in f's own scope
    assert scope.assigned == {"a", "c"}
    inner = Scope(tree.body[1].body, scope)  # type: ignore[attr-defined]
    assert [n.id for n in inner.nodes if isinstance(n, ast.Name)] == ["b"]
