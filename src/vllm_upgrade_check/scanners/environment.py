"""The Python environment: installed distributions (read from their metadata with
:mod:`importlib.metadata`, never imported) and the interpreter version.
"""

from __future__ import annotations

import platform
import sys
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from importlib import metadata

from packaging.utils import canonicalize_name

from vllm_upgrade_check.model.facts import Fact, FactKind, Location

ENVIRONMENT = Location(None)


@dataclass(frozen=True)
class Environment:
    """What is installed where the deployment runs.

    Attributes:
        distributions: canonical distribution name -> version.
        python: the interpreter version (``3.11.7``).
        machine: CPU architecture (``x86_64``).
        source: where it was read (``current interpreter``, a path, a freeze file).
    """

    distributions: dict[str, str]
    python: str
    machine: str
    source: str

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
    dists = metadata.distributions(path=list(paths)) if paths is not None else metadata.distributions()
    for dist in dists:
        name = dist.metadata["Name"] if dist.metadata else None
        if name and dist.version:
            found.setdefault(canonicalize_name(name), dist.version)
    return Environment(
        found, platform.python_version(), platform.machine(), "current interpreter " + sys.executable
    )


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
    yield Fact(
        FactKind.PLATFORM,
        "python",
        ENVIRONMENT,
        raw=f"python {env.python}",
        value=env.python,
        origin="env",
        scanner="environment",
    )
    yield Fact(
        FactKind.PLATFORM,
        "machine",
        ENVIRONMENT,
        raw=env.machine,
        value=env.machine,
        origin="env",
        scanner="environment",
    )
