"""Shell command strings Python builds and runs (``subprocess.run(BASE + " --swap-space 4",
shell=True)``, f-strings, ``os.system(CMD)``, ``os.popen(CMD)``): their known parts read as
shell, each unknown part standing as a variable the shell cannot resolve; each word placed in
the part it comes from (a literal, the literal a constant's name is bound to)."""

from __future__ import annotations

import ast
from bisect import bisect_right
from collections.abc import Callable
from dataclasses import replace

from vllm_upgrade_check.model.facts import Fact
from vllm_upgrade_check.parsing.words import Token
from vllm_upgrade_check.sources.scanners.python.argv import ArgvBuilder
from vllm_upgrade_check.sources.scanners.python.literals import fstring_places, value_places
from vllm_upgrade_check.sources.scanners.python.scope import last_binding, later_updates
from vllm_upgrade_check.sources.scanners.shell import shell_facts

Placer = Callable[[int], tuple[int, int]]
"""Where the character at an offset of one part's text is written (line, column)."""
Part = tuple[ArgvBuilder, ast.AST, bool, "Placer | None"]
"""One part of a built string: its reader, its node, whether it may be read, its placer."""


def shell_string_facts(builder: ArgvBuilder, command: ast.AST) -> list[Fact] | None:
    """The facts of a shell command string built of constants (``BASE + " --swap-space 4"``,
    an f-string, a constant's name) as ``builder`` evaluates it, each word placed where its
    first character is written: in a string literal of the expression or of an f-string, in
    the literal a name is bound to (``CMD = "vllm serve m --swap-space 4"``, with the ``+=``
    after it), else at the part (a call's argument for a parameter); it is given no span (a
    fix leaves it to a person). The parts it cannot evaluate (``+ args``, ``{x!r}``) are
    unresolved words named by their source text. ``None`` for any other expression, or one
    with no known part. ``shlex.split`` of such a string reads as the string does (the
    words a shell reads in it)."""
    if (
        isinstance(command, ast.Call)
        and builder.source.qualified(command.func) == "shlex.split"
        and len(command.args) == 1
        and isinstance(command.args[0], (ast.BinOp, ast.JoinedStr))
    ):
        command = command.args[0]
    if not isinstance(command, (ast.BinOp, ast.JoinedStr, ast.Name)):
        return None
    unknown: dict[str, list[Token]] = {}
    parts = _parts(builder, command)
    texts: list[str] = []
    placers: list[Placer] = []
    for reader, part, readable, placed in parts:
        value, anchor = reader.evaluate(part, {}) if readable else (None, None)
        if value is None:
            name = f"__vuc_part_{len(unknown)}"
            loc, written = reader.source.loc(part), reader.source.segment(part)
            unknown[name] = [Token(written, loc.line or 0, loc.column or 0, False, written)]
            value = "${" + name + "}"
            placers.append(_at(reader, part, None))
        else:
            placers.append(placed or _placer(reader, part, value, anchor))
        texts.append(value)
    built = "".join(texts)
    if len(unknown) == len(parts) or not built:
        return None  # no part known (a name bound to no string literal among them)
    starts = [0]
    for text in texts[:-1]:
        starts.append(starts[-1] + len(text))
    lines = [0, *(i + 1 for i, c in enumerate(built) if c == "\n")]

    def relocate(token: Token) -> Token:
        row, col = token.start
        offset = lines[row - 1] + col - 1 if 1 <= row <= len(lines) else 0
        index = max(bisect_right(starts, offset) - 1, 0)
        line, column = placers[index](offset - starts[index])
        return replace(token.unplaced(), line=line, column=column)

    return shell_facts(built, builder.source.path, "python", variables=unknown, relocate=relocate)[0]


def _placer(builder: ArgvBuilder, part: ast.AST, value: str, anchor: Token | None) -> Placer:
    """Where each character of a known part is written: through the string literal it is
    (or the one a name is bound to), else at the part (or the token it derives from)."""
    literal: ast.AST | None = part if isinstance(part, ast.Constant) and isinstance(part.value, str) else None
    if isinstance(part, ast.Name):
        literal = builder.constant(part)
    if literal is not None and isinstance(literal, ast.Constant) and str(literal.value) == value:
        at = builder.source.loc(literal)
        mapped = value_places(builder.source.segment(literal), at.line or 1, at.column or 1, value)
        if mapped is not None:
            return _through(mapped[0], mapped[1])
    return _at(builder, part, anchor)


def _through(places: list[tuple[int, int]], end: tuple[int, int]) -> Placer:
    """The place of each character of a part whose characters are at ``places`` (ending at ``end``)."""
    return lambda i: places[i] if 0 <= i < len(places) else end


def _at(builder: ArgvBuilder, part: ast.AST, anchor: Token | None) -> Placer:
    """Every character at ``anchor`` when it is placed, else at the start of ``part``."""
    if anchor is not None and anchor.line:
        line, column = anchor.line, anchor.column
    else:
        loc = builder.source.loc(part)
        line, column = loc.line or 0, loc.column or 0
    return lambda _i: (line, column)


def _parts(builder: ArgvBuilder, node: ast.AST, depth: int = 0) -> list[Part]:
    """The operands of a ``+`` chain, or the parts of an f-string, in order, each with the
    builder that reads it, whether it may be read and, for a literal part of an f-string,
    where its characters are written (:func:`.literals.fstring_places`); a name bound to a string literal, such
    a chain or an f-string (``cmd = f"vllm serve {m} --swap-space 4"``) stands for its parts
    with the ``+=`` that follow it applied (``cmd += " --port 1"``); one that a loop or another
    operator changes is one part that may not be read (its value is not known)."""
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        return [*_parts(builder, node.left, depth), *_parts(builder, node.right, depth)]
    if isinstance(node, ast.JoinedStr):
        at = builder.source.loc(node)
        literals = [str(v.value) for v in node.values if isinstance(v, ast.Constant)]
        mapped = fstring_places(builder.source.segment(node), at.line or 1, at.column or 1, literals) or []
        out: list[Part] = []
        for value in node.values:
            if isinstance(value, ast.FormattedValue) and value.format_spec is None and value.conversion == -1:
                out.extend(_parts(builder, value.value, depth))
            elif isinstance(value, ast.Constant):
                placed = mapped.pop(0) if mapped else None
                out.append((builder, value, True, None if placed is None else _through(*placed)))
            else:  # a part formatted (`{x!r}`, `{x:>4}`): not read
                out.append((builder, value, False, None))
        return out
    if not isinstance(node, ast.Name) or depth >= 8 or (builder.call is not None and node.id in builder.call.params):
        return [(builder, node, True, None)]
    bound = last_binding(node.id, builder.scope, builder.before)
    if bound is None or not isinstance(bound[0], (ast.BinOp, ast.JoinedStr, ast.Constant)):
        return [(builder, node, True, None)]
    held, owner = bound
    updates = later_updates(node.id, owner, getattr(held, "end_lineno", 0) or 0, builder.before, builder.scope)
    added = [u for u in updates if isinstance(u, ast.AugAssign) and isinstance(u.target, ast.Name)]
    added = [u for u in added if isinstance(u.target, ast.Name) and u.target.id == node.id]
    if isinstance(held, ast.Constant) and not added:
        return [(builder, node, True, None)]  # a constant: read (and placed) as one
    loops = [u for u in updates if isinstance(u, (ast.For, ast.AsyncFor, ast.While))]
    if any(not isinstance(u.op, ast.Add) for u in added) or any(
        loop.lineno <= u.lineno <= (loop.end_lineno or loop.lineno) for loop in loops for u in added
    ):
        return [(builder, node, False, None)]
    out = _parts(builder.child(owner, getattr(held, "lineno", builder.before)), held, depth + 1)
    for update in added:
        out.extend(_parts(builder.child(owner, update.lineno), update.value, depth + 1))
    return out
