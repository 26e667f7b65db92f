"""The fixing stage: findings' mechanical fixes planned from the scanners' spans, checked by
scanning the fixed text again, written atomically; vLLM versions bumped when nothing blocks.

See :mod:`.interface` for the records, :mod:`.planned` for what a fix changes, :mod:`.verify`
for the check, :mod:`.run` for a ``fix`` run.
"""

from vllm_upgrade_check.fixing.edits import apply_to_text, diff_text
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
from vllm_upgrade_check.fixing.run import apply_edits, diff_paths, fix_paths, planned_edits

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
    "diff_paths",
    "diff_text",
    "fix_paths",
    "planned_edits",
]
