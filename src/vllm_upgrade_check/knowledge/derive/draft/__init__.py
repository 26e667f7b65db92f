"""Draft rule packs from the difference of two vLLM releases.

:func:`draft_pack` turns a :class:`~vllm_upgrade_check.knowledge.derive.diff.SurfaceDiff` into a pack
(a plain dict shaped like :class:`~vllm_upgrade_check.model.pack.Pack`) with one candidate
rule per difference; :func:`render_draft` writes it as YAML and :func:`derive_draft` does
both for two release paths. Every candidate rule is tagged ``draft``/``unreviewed``: the
severities, messages and fixes are guesses that a curator reviews before the pack ships.
"""

from vllm_upgrade_check.knowledge.derive.draft.candidates import DRAFT_TAGS, rule_id_prefix
from vllm_upgrade_check.knowledge.derive.draft.pack import (
    derive_draft,
    draft_pack,
    render_draft,
    wheel_platform_tag,
)
from vllm_upgrade_check.knowledge.derive.draft.requirement_rules import KEY_DISTRIBUTIONS

__all__ = [
    "DRAFT_TAGS",
    "KEY_DISTRIBUTIONS",
    "derive_draft",
    "draft_pack",
    "render_draft",
    "rule_id_prefix",
    "wheel_platform_tag",
]
