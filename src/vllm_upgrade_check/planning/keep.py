"""``plan --keep``: what the user says must not change, read and checked."""

from __future__ import annotations

import re
from collections.abc import Collection, Sequence

from packaging.utils import canonicalize_name

from vllm_upgrade_check.errors import UsageError

PLAN_KEYWORDS = ("driver", "python")
"""``--keep`` values that name a host property rather than a distribution."""

_PROJECT_NAME = re.compile(r"^([A-Z0-9]|[A-Z0-9][A-Z0-9._-]*[A-Z0-9])$", re.IGNORECASE)


def parse_keep(values: Sequence[str], installed: Collection[str] | None = None) -> frozenset[str]:
    """``--keep`` values -> ``driver``, ``python`` and canonical distribution names.

    With ``installed`` (the canonical names of the environment's distributions), a name is
    checked: it must be ``driver``, ``python``, a distribution of that environment or one that
    some vLLM release requires (``Requires-Dist``); else ``--keep`` would hold nothing and the
    plan would read as if a constraint applied.

    Raises:
        UsageError: a value that is not a project name (``torch==2.5``), or one that names
            nothing the plan could hold.
    """
    from vllm_upgrade_check.knowledge.requires import requirement_names

    out = set()
    for value in values:
        text = value.strip()
        if text.lower() in PLAN_KEYWORDS:
            out.add(text.lower())
            continue
        if not _PROJECT_NAME.match(text):
            raise UsageError(f"--keep {value!r}: expected driver, python or a distribution name (such as torch)")
        name = canonicalize_name(text)
        if installed is not None and name not in installed and name not in requirement_names():
            raise UsageError(
                f"--keep {value}: not driver, python, or a distribution of the environment read or that vLLM requires"
                if installed
                else f"--keep {value}: not driver, python, or a distribution vLLM requires "
                "(no environment was read: --python or --freeze reads one)"
            )
        out.add(name)
    return frozenset(out)
