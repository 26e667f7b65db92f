"""The fixing stage: findings' mechanical fixes planned from the scanners' spans, checked by
scanning the fixed text again, written atomically; vLLM versions bumped when nothing blocks.

See :mod:`.interface` for the records, :mod:`.planned` for what a fix changes, :mod:`.edits`
for edits of a file's text, :mod:`.verify` for the check; a ``fix`` run is orchestrated by
:mod:`vllm_upgrade_check.engine.fix`.
"""

from vllm_upgrade_check.fixing.edits import apply_edits, apply_to_text, diff_bytes, planned_edits
from vllm_upgrade_check.fixing.interface import (
    MECHANICAL,
    UPGRADE_ID,
    CannotFix,
    Edit,
    FixResult,
    NotBumped,
    NotWritten,
    StaleEditError,
    Unfixed,
)

__all__ = [
    "MECHANICAL",
    "UPGRADE_ID",
    "CannotFix",
    "Edit",
    "FixResult",
    "NotBumped",
    "NotWritten",
    "StaleEditError",
    "Unfixed",
    "apply_edits",
    "apply_to_text",
    "diff_bytes",
    "planned_edits",
]
