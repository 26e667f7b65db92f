"""Values the target does not accept: a flag or ``--config`` value outside its argparse
``choices``, a quantization method or load format its registry lacks, the same literal given
as an engine-arg keyword in Python (``LLM(m, quantization="deepspeedfp")``,
``EngineArgs(kv_cache_dtype="fp9")``), built-in rule ``VUC000-009``; and an architecture
named in ``--hf-overrides`` (or a ``hf_overrides`` keyword or key) or in a model's
``config.json`` that the target's model registry does not serve, built-in rule ``VUC000-014``.

A Python keyword's value is checked only when it is a literal: the scanner marks a keyword
whose value is a name or an expression (``dtype=DT``) ``resolved=False``.
"""

from __future__ import annotations

import ast
import json

from packaging.version import Version

from vllm_upgrade_check.knowledge.known_args import DATA_FILE, KnownArgs
from vllm_upgrade_check.knowledge.surface import surface_history
from vllm_upgrade_check.matching.surface_rules import ARCHITECTURE_ID, VALUE_ID, Rejection
from vllm_upgrade_check.matching.surface_words import closest, history_words
from vllm_upgrade_check.model.facts import Fact
from vllm_upgrade_check.model.pack import Severity

_VALUE_KINDS = {"quantization": "quantization_methods", "load_format": "load_formats"}


def value_rejection(fact: Fact, target: Version, known: KnownArgs) -> Rejection | None:
    """A value of a flag, ``--config`` key or literal engine-arg keyword (an ``arg`` fact of
    origin ``cli``, ``config`` or ``python``) that ``target`` does not accept, else ``None``."""
    if fact.origin not in ("cli", "config", "python") or not fact.resolved or not fact.value:
        return None
    value = fact.value.strip().strip("'\"")
    if not value or "$" in value or "{" in value:
        return None
    head = fact.name.split(".", 1)[0]
    flag = "--" + head.replace("_", "-")
    if not known.defines(flag, target):
        return None
    python = fact.origin == "python"
    shown = f"{head}={value!r}" if python else f"{flag} {value}"
    choices = known.choices_at(flag, target)
    if choices is not None and known.arity(flag, target) == ("1", True):
        if value.lower() in {c.lower() for c in choices}:
            return None
        return Rejection(
            VALUE_ID,
            Severity.BLOCKER,
            shown,
            "value",
            f"vLLM {target}'s {'engine config' if python else 'parser'} accepts only: {', '.join(choices)}",
            None,
            known.flags[flag][2],
            DATA_FILE,
        )
    kind = _VALUE_KINDS.get(head)
    if kind is None:
        return None
    history = surface_history(kind)
    if not history.covers(target) or history.has(value, target) or history.has(value.lower(), target):
        return None
    words, had = history_words(history, value, target, "a value")
    return Rejection(
        VALUE_ID,
        Severity.BLOCKER if had else Severity.WARNING,
        shown,
        "value",
        words if had else words + "; a plugin may register it",
        closest(history.kind, value, target),
        history.ref(value),
        history.data_file,
    )


def _overrides(value: str) -> object:
    """The ``--hf-overrides`` value as data: JSON (a flag, a ``--config`` key), else a Python
    literal or ``dict(key=literal, ...)`` (a keyword); ``None`` for anything else."""
    try:
        return json.loads(value)
    except ValueError:
        pass
    try:
        return ast.literal_eval(value)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        pass
    try:
        node = ast.parse(value.strip(), mode="eval").body
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return None
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "dict" and not node.args:
        out = {}
        for kw in node.keywords:
            if kw.arg is None:
                return None  # dict(**base): keys not known
            try:
                out[kw.arg] = ast.literal_eval(kw.value)
            except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
                out[kw.arg] = None  # a key whose value is a name: not judged
        return out
    return None


def overridden_architectures(value: str) -> list[str]:
    """The ``architectures`` of an ``--hf-overrides`` value, the only key of it the model
    registry reads (vLLM's ``ModelConfig`` applies the other keys to the Hugging Face config:
    ``model_type`` picks the config class, a dict value such as ``text_config`` updates that
    sub-config; none of them names what the registry serves): JSON as a flag or ``--config``
    key gives it, a Python literal or ``dict(...)`` as a keyword gives it (a string is taken
    as a one-name list); ``[]`` for anything else (a value that is not a dict, a name, an
    expression)."""
    data = _overrides(value)
    found = data.get("architectures") if isinstance(data, dict) else None
    if isinstance(found, str):
        found = [found]
    return [a for a in found if isinstance(a, str) and a] if isinstance(found, (list, tuple)) else []


def architecture_rejection(names: list[str], target: Version, transformers: str = "") -> Rejection | None:
    """The architectures of ``names`` the model registry of ``target`` does not have: a
    blocker when an earlier release served one of them (vLLM refuses to load the model), a
    warning when none did (vLLM may serve it through its Transformers backend), and at most a
    warning when the launch asks for the Transformers backend (``transformers``: ``"launch"``
    when the launch itself has ``--model-impl transformers``, ``"scan"`` when some launch of
    the scan has it, ``""`` when none does; judged only where ``target`` takes that value),
    which serves architectures the registry does not list when the installed
    ``transformers`` has the model."""
    history = surface_history("architectures")
    if not history.covers(target):
        return None
    missing = [n for n in names if not history.has(n, target)]
    if not missing:
        return None
    had = [n for n in missing if history.last_before(n, target)]
    first = had[0] if had else missing[0]
    words, _ = history_words(history, first, target, "an architecture")
    impls = surface_history("model_impls")
    backend = bool(transformers) and impls.covers(target) and impls.has("transformers", target)
    if backend:
        who = "the launch asks" if transformers == "launch" else "a launch of this repository asks"
        words += (
            f"; {who} for --model-impl transformers, so vLLM serves it through its Transformers "
            "backend if the installed transformers has the model"
        )
    elif not had:
        words += "; vLLM may serve it through its Transformers backend (--model-impl transformers)"
    return Rejection(
        ARCHITECTURE_ID,
        Severity.BLOCKER if had and not backend else Severity.WARNING,
        ", ".join(had or missing),
        "architecture",
        words,
        closest("architectures", first, target),
        history.ref(first),
        history.data_file,
    )
