"""The key distributions of a draft (:data:`KEY_DISTRIBUTIONS`): candidate
rules for their changed requirements and for ``Requires-Python``, and the pins
that go into the pack's ``wheel`` facts.
"""

from __future__ import annotations

from packaging.requirements import InvalidRequirement, Requirement
from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.utils import canonicalize_name

from vllm_upgrade_check.knowledge.derive.draft.candidates import _Rules, _wheel_item
from vllm_upgrade_check.knowledge.derive.surface import ReleaseSurface

__all__ = [
    "KEY_DISTRIBUTIONS",
]


KEY_DISTRIBUTIONS = frozenset(
    canonicalize_name(n)
    for n in (
        "torch",
        "torchaudio",
        "torchvision",
        "transformers",
        "tokenizers",
        "huggingface-hub",
        "flashinfer-python",
        "xformers",
        "triton",
        "numpy",
        "pydantic",
        "openai",
        "fastapi",
        "ray",
        "outlines",
        "xgrammar",
        "compressed-tensors",
        "mistral-common",
    )
)
"""Distributions whose ``Requires-Dist`` changes become dependency rules and whose pins go
into ``wheel.requires_dist`` (the ones users pin next to vLLM)."""


def _valid_specifier(spec: str | None) -> str | None:
    if not spec:
        return None
    try:
        return str(SpecifierSet(spec))
    except InvalidSpecifier:
        return None


def _dependency_rules(out: _Rules, notes: list[str]) -> None:
    diff, new = out.diff, out.diff.new_version
    for change in diff.requirements:
        if change.name not in KEY_DISTRIBUTIONS or change.kind == "removed":
            continue
        spec = _valid_specifier(change.new_specifier)
        if spec is None:
            notes.append(
                f"{change.name}: requirement {list(change.new)} has no plain specifier (markers); review by hand"
            )
            continue
        metadata = f"vllm-{new}.dist-info/METADATA"
        evidence = [
            _wheel_item(
                new,
                change.new_refs[0] if change.new_refs else None,
                f"Requires-Dist: {'; '.join(change.new)}",
                metadata,
            )
        ]
        before = "absent" if change.kind == "added" else "; ".join(change.old)
        evidence.append(
            _wheel_item(
                diff.old_version,
                change.old_refs[0] if change.old_refs else None,
                f"vllm-{diff.old_version} required: {before}",
                f"vllm-{diff.old_version}.dist-info/METADATA",
            )
        )
        out.add(
            f"requires-{change.name}",
            "blocker",
            {"kind": "dependency", "name": change.name, "specifier": spec, "origins": ["file"]},
            f"vLLM {new} requires {change.name}{spec}.",
            {
                "summary": f"Pin {change.name}{spec} next to vllm=={new}.",
                "action": "set_specifier",
                "replacement": spec,
                "applicability": "unsafe",
            },
            f"A pin of {change.name} outside `{spec}` conflicts with vllm=={new} at install time.",
            evidence,
        )


def _python_rule(out: _Rules) -> None:
    diff, change = out.diff, out.diff.requires_python
    spec = _valid_specifier(str(change.new) if change and change.new else None)
    if change is None or spec is None:
        return
    out.add(
        "requires-python",
        "blocker",
        {"kind": "platform", "name": "python", "specifier": spec},
        f"vLLM {diff.new_version} requires Python {spec}.",
        {"summary": f"Run vLLM {diff.new_version} on a Python inside {spec}."},
        f"pip refuses to install vllm=={diff.new_version} on a Python outside {spec} (was {change.old}).",
        [
            _wheel_item(
                diff.new_version,
                change.new_ref,
                f"Requires-Python: {change.new}",
                f"vllm-{diff.new_version}.dist-info/METADATA",
            ),
            _wheel_item(
                diff.old_version,
                change.old_ref,
                f"vllm-{diff.old_version} Requires-Python: {change.old}",
                f"vllm-{diff.old_version}.dist-info/METADATA",
            ),
        ],
    )


def _key_pins(surface: ReleaseSurface) -> list[str]:
    pins = []
    for raw in surface.requires_dist:
        try:
            req = Requirement(raw)
            name = canonicalize_name(req.name)
        except InvalidRequirement:
            continue
        if name in KEY_DISTRIBUTIONS and req.specifier and "extra" not in str(req.marker or ""):
            pins.append(raw)
    return pins
