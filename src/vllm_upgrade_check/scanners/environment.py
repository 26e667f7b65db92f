"""The Python environment: installed distributions (read from their metadata with
:mod:`importlib.metadata`, never imported) and the interpreter version.
"""

from __future__ import annotations

import platform
import sys
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path

from packaging.markers import default_environment
from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import canonicalize_name

from vllm_upgrade_check.errors import UsageError
from vllm_upgrade_check.model.facts import Fact, FactKind, Location

ENVIRONMENT = Location(None)


@dataclass(frozen=True)
class Environment:
    """What is installed where the deployment runs.

    Attributes:
        distributions: canonical distribution name -> version.
        python: the interpreter version (``3.11.7``), ``None`` when unknown (a freeze file).
        machine: CPU architecture (``x86_64``), ``None`` when unknown.
        source: where it was read (``current interpreter``, a path, a freeze file).
        requires: canonical distribution name -> its ``Requires-Dist`` lines (markers kept).
        markers: PEP 508 marker environment of the interpreter (for ``Requires-Dist`` markers).
    """

    distributions: dict[str, str]
    python: str | None
    machine: str | None
    source: str
    requires: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    markers: Mapping[str, str] = field(default_factory=dict)

    @property
    def vllm(self) -> str | None:
        """The installed vllm version, if any."""
        return self.distributions.get("vllm")


def read_current_environment(paths: Iterable[str] | None = None) -> Environment:
    """Read the distributions installed for this interpreter (or on ``paths``).

    Args:
        paths: ``sys.path``-like directories to look in instead of the current ones.
    """
    found: dict[str, str] = {}
    requires: dict[str, tuple[str, ...]] = {}
    dists = metadata.distributions(path=list(paths)) if paths is not None else metadata.distributions()
    for dist in dists:
        name = dist.metadata["Name"] if dist.metadata else None
        if name and dist.version:
            key = canonicalize_name(name)
            if key not in found:
                found[key] = dist.version
                requires[key] = tuple(dist.requires or ())
    return Environment(
        found,
        platform.python_version(),
        platform.machine(),
        "current interpreter " + sys.executable,
        requires=requires,
        markers={str(k): str(v) for k, v in default_environment().items()},
    )


def read_freeze_file(path: Path) -> Environment:
    """Read ``pip freeze`` output (``name==version`` lines; comments and option lines skipped).

    Python and machine are unknown (``None``); no ``Requires-Dist`` is known.

    Raises:
        UsageError: unreadable file, or a line that is no requirement (names file and line).
    """
    try:
        text = path.read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(f"cannot read freeze file: {exc}", str(path)) from None
    found: dict[str, str] = {}
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.split(" #", 1)[0].strip()
        if not line or line.startswith(("#", "-")):
            continue
        try:
            req = Requirement(line)
        except InvalidRequirement as exc:
            raise UsageError(f"not a freeze line ({exc})", str(path), number) from None
        pins = [s.version for s in req.specifier if s.operator in ("==", "===")]
        if len(pins) == 1 and "*" not in pins[0]:
            found.setdefault(canonicalize_name(req.name), pins[0])
    return Environment(found, None, None, f"freeze file {path}")


def environment_facts(env: Environment) -> Iterator[Fact]:
    """One ``distribution`` fact per installed distribution and ``platform`` facts."""
    for name, version in sorted(env.distributions.items()):
        yield Fact(
            FactKind.DISTRIBUTION,
            name,
            ENVIRONMENT,
            raw=f"{name}=={version}",
            value=version,
            origin="env",
            scanner="environment",
        )
    if env.python is not None:
        yield Fact(
            FactKind.PLATFORM,
            "python",
            ENVIRONMENT,
            raw=f"python {env.python}",
            value=env.python,
            origin="env",
            scanner="environment",
        )
    if env.machine is None:
        return
    yield Fact(
        FactKind.PLATFORM,
        "machine",
        ENVIRONMENT,
        raw=env.machine,
        value=env.machine,
        origin="env",
        scanner="environment",
    )
