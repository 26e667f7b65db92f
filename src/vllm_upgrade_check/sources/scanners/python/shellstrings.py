"""Shell command strings Python builds and runs (``subprocess.run(BASE + " --swap-space 4",
shell=True)``, f-strings, ``os.system(CMD)``): their known parts read as shell, each unknown
part standing as a variable the shell cannot resolve."""

from __future__ import annotations

import ast
from dataclasses import replace

from vllm_upgrade_check.model.facts import Fact
from vllm_upgrade_check.parsing.words import Token
from vllm_upgrade_check.sources.scanners.python.argv import ArgvBuilder
from vllm_upgrade_check.sources.scanners.shell import shell_facts


def shell_string_facts(builder: ArgvBuilder, command: ast.AST) -> list[Fact] | None:
    """The facts of a shell command string built of constants (``BASE + " --swap-space 4"``,
    an f-string, a constant's name) as ``builder`` evaluates it, each word placed at the
    expression and given no span (a fix leaves it to a person); the parts it cannot evaluate
    (``+ args``) are unresolved words named by their source text. ``None`` for any other
    expression, or one with no known part."""
    if not isinstance(command, (ast.BinOp, ast.JoinedStr, ast.Name)):
        return None
    unknown: dict[str, list[Token]] = {}
    built = builder.evaluate(command, {})[0]
    if built is None and isinstance(command, (ast.BinOp, ast.JoinedStr)):
        built = _with_unknown_parts(builder, command, unknown)
    if not built:
        return None
    at = builder.source.loc(command)
    line, column = at.line or 0, at.column or 0
    return shell_facts(
        built,
        builder.source.path,
        "python",
        variables=unknown,
        relocate=lambda t: replace(t.unplaced(), line=line, column=column),
    )[0]


def _with_unknown_parts(builder: ArgvBuilder, node: ast.AST, unknown: dict[str, list[Token]]) -> str | None:
    """The shell text of a ``+`` chain or f-string whose literal parts are known and whose
    other parts are not: each unknown part stands as a variable (``unknown`` gets its
    unresolved word); ``None`` when no part is known."""
    texts: list[str] = []
    known = False
    for part in _concat_parts(node):
        value = builder.evaluate(part, {})[0]
        if value is not None:
            texts.append(value)
            known = True
            continue
        name = f"__vuc_part_{len(unknown)}"
        loc, written = builder.source.loc(part), builder.source.segment(part)
        unknown[name] = [Token(written, loc.line or 0, loc.column or 0, False, written)]
        texts.append("${" + name + "}")
    return "".join(texts) if known else None


def _concat_parts(node: ast.AST) -> list[ast.AST]:
    """The operands of a ``+`` chain, or the parts of an f-string, in order."""
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        return [*_concat_parts(node.left), *_concat_parts(node.right)]
    if isinstance(node, ast.JoinedStr):
        return [v.value if isinstance(v, ast.FormattedValue) and v.format_spec is None else v for v in node.values]
    return [node]
