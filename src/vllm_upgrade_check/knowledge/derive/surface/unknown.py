""":data:`UNKNOWN`, the value the static emulation of argparse and
``get_kwargs`` gives whatever it cannot follow (its three-valued logic's
third value).
"""

from __future__ import annotations

from typing import Any


class _Unknown:
    """The statically unknown value (three-valued logic's third value)."""

    def __repr__(self) -> str:
        return "UNKNOWN"


UNKNOWN: Any = _Unknown()
