"""What the Python reader recognises by name: the vLLM classes whose keywords are engine args
or sampling parameters, the calls that run a command, the response fields client code
reads, the dict methods that change a dict and the calls that only show their arguments;
with the two small :mod:`ast` readers every part uses (:func:`const_text`, :func:`dotted_name`).
"""

from __future__ import annotations

import ast

ENGINE_CALLS = frozenset({"LLM", "EngineArgs", "AsyncEngineArgs"})
"""vLLM classes whose keywords are engine args (``vllm/entrypoints/llm.py``, ``vllm/engine/arg_utils.py``)."""
SAMPLING_CALLS = frozenset({"SamplingParams"})
"""vLLM classes whose keywords are sampling parameters (``vllm/sampling_params.py``)."""
SUBPROCESS_CALLS = frozenset(
    {
        "subprocess.run",
        "subprocess.Popen",
        "subprocess.call",
        "subprocess.check_call",
        "subprocess.check_output",
        "subprocess.getoutput",
        "subprocess.getstatusoutput",
        "os.system",
        "os.popen",
        "asyncio.create_subprocess_shell",
        *(f"os.exec{v}" for v in ("v", "ve", "vp", "vpe", "l", "le", "lp", "lpe")),
        *(f"os.spawn{v}" for v in ("v", "ve", "vp", "vpe", "l", "le", "lp", "lpe")),
        "asyncio.create_subprocess_exec",
    }
)
"""Calls that run a command: an argv list or shell string as first argument
(``subprocess``, ``os.system``, ``os.popen``; ``subprocess.getoutput``/``getstatusoutput`` and
``os.popen`` run theirs with ``shell=True``), or as :func:`command_argument` finds it
(``os.exec*``, ``os.spawn*``, ``asyncio.create_subprocess_exec``)."""

COMMAND_KEYWORDS = {
    # run/call/check_call/check_output(*popenargs, **kwargs) pass them on to Popen(args, ...)
    **dict.fromkeys(("run", "Popen", "call", "check_call", "check_output"), "args"),
    **dict.fromkeys(("getoutput", "getstatusoutput", "popen", "create_subprocess_shell"), "cmd"),
    "system": "command",
    "execve": "argv",  # os.execv(path, argv, /) takes no keyword
    **dict.fromkeys(("execvp", "execvpe", "spawnv", "spawnve", "spawnvp", "spawnvpe"), "args"),
}
"""The keyword that may name the command of a :data:`SUBPROCESS_CALLS` call, by the call's
last name, as CPython's signatures spell it (``subprocess.Popen(args, ...)``,
``subprocess.getoutput(cmd)``, ``os.popen(cmd)``, ``os.system(command)``, ``os.execve(path,
argv, env)``, ``os.execvp(file, args)``, ``os.spawnv(mode, file, args)``,
``asyncio.create_subprocess_shell(cmd)``): ``subprocess.run(args=[...])`` runs its ``args``."""


def command_argument(call: ast.Call, qualified: str) -> ast.expr | None:
    """The command a :data:`SUBPROCESS_CALLS` call runs, as one expression: the first
    argument of ``subprocess.*``/``os.system``/``os.popen``, or the keyword
    :data:`COMMAND_KEYWORDS` names (``subprocess.run(args=[...])``, ``os.popen(cmd=...)``);
    the argv list of ``os.execv(path, argv)``, ``os.spawnvp(mode, file, argv)`` and the like
    (or their ``args=``); a list of the separate arguments of ``os.execlp(file, "vllm",
    "serve", ...)``, ``os.spawnl(mode, path, ...)`` and ``asyncio.create_subprocess_exec("vllm",
    "serve", ...)`` (the ``…e`` forms' last argument, the environment, left out; a
    ``*spread`` among them stands for its words; ``create_subprocess_exec(program="vllm")``
    alone is that one word). ``None`` when the call passes no command."""
    name = qualified.rpartition(".")[2]
    named = _keyword(call, COMMAND_KEYWORDS.get(name))
    skip = 0
    if name.startswith(("exec", "spawn")):
        skip = (1 if name.startswith("exec") else 2)
        variant = name.removeprefix("exec").removeprefix("spawn")
        if variant.startswith("v"):
            return call.args[skip] if len(call.args) > skip else named
        words = call.args[skip : len(call.args) - (1 if variant.endswith("e") else 0)]
    elif name == "create_subprocess_exec":
        program = _keyword(call, "program")
        words = call.args if program is None else [program]
    else:
        return call.args[0] if call.args else named
    if not words:
        return None
    return ast.copy_location(ast.List(elts=list(words), ctx=ast.Load()), words[0])


def _keyword(call: ast.Call, name: str | None) -> ast.expr | None:
    """The value ``call`` passes as keyword ``name``, else ``None``."""
    return next((kw.value for kw in call.keywords if name is not None and kw.arg == name), None)


RESPONSE_FIELDS = frozenset({"reasoning_content", "reasoning"})
"""Response fields whose reading by client code is reported: those the bundled rules name,
and what their fixes rename them to (so a fixed client still reads as one; a test keeps
this in step with the packs)."""

DICT_CHANGES = frozenset({"update", "pop", "setdefault", "clear", "popitem", "__setitem__", "__delitem__"})
"""Methods of a dict that change it in place (the scanner follows ``update``; the others make
its keywords unknown)."""


def is_logging(func: ast.AST) -> bool:
    """``print(...)``, ``logger.info(...)`` and the like: calls that only show their arguments."""
    if isinstance(func, ast.Name):
        return func.id in ("print", "pprint", "repr", "str")
    return isinstance(func, ast.Attribute) and func.attr in (
        "debug",
        "info",
        "warning",
        "warn",
        "error",
        "exception",
        "critical",
        "log",
        "pprint",
        "dumps",
    )


def const_text(node: ast.AST) -> str | None:
    """The value of a string, number or boolean literal as text, else ``None``."""
    if isinstance(node, ast.Constant) and isinstance(node.value, (str, int, float, bool)):
        return str(node.value)
    return None


def is_literal(node: ast.AST | None) -> bool:
    """Whether ``node`` is a literal (``"fp8"``, ``-1``, ``{"architectures": ["X"]}``: what
    :func:`ast.literal_eval` reads), so that a check may judge its value; ``True`` for no node."""
    if node is None:
        return True
    try:
        ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return False
    return True


def dotted_name(node: ast.AST) -> str | None:
    """``a.b.c`` for a name or an attribute chain on a name, else ``None``."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        base = dotted_name(node.value)
        return f"{base}.{node.attr}" if base else None
    return None
