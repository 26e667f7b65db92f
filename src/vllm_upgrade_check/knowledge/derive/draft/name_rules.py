"""Candidate rules for removed and renamed names: engine args and ``vllm
serve`` flags, env vars, metrics, quantization methods, load formats, model
architectures and modules.
"""

from __future__ import annotations

import re

from vllm_upgrade_check.knowledge.derive.diff import SurfaceDiff
from vllm_upgrade_check.knowledge.derive.draft.candidates import (
    _deprecation_evidence,
    _kebab,
    _removed_evidence,
    _Rules,
)


def _snake(flag: str) -> str:
    return flag.lstrip("-").replace("-", "_")


def _arg_rules(out: _Rules) -> None:
    """Engine args and ``vllm serve`` flags: one rule per removed or renamed name; a flag whose
    engine arg is also gone is covered by the engine-arg rule, ``--no-X`` by the rule of ``--X``,
    and single-dash aliases (``-tp``) are left to the curator."""
    diff, new = out.diff, out.diff.new_version
    engine = diff.categories["engine_args"]
    flags = diff.categories["cli_flags"]
    covered: set[str] = set()
    for change in engine.removed:
        covered.add(change.name)
        out.add(
            f"removed-{change.name}",
            "blocker",
            {"kind": "engine_arg", "name": change.name},
            f"{change.name} was removed in vLLM {new}.",
            {
                "summary": "Remove the argument and its value.",
                "action": "remove_arg",
                "applicability": "safe",
            },
            f"`{change.name}` is no longer an engine arg in {new}: the flag is rejected at startup "
            "and the keyword raises TypeError.",
            _removed_evidence(diff, f"engine arg {change.name}", change.ref),
        )
    for r in engine.renamed:
        covered.add(r.old)
        out.add(
            f"renamed-{r.old}",
            "blocker",
            {"kind": "engine_arg", "name": r.old},
            f"{r.old} was renamed to {r.new} in vLLM {new}.",
            {
                "summary": f"Use {r.new} instead.",
                "action": "rename",
                "replacement": r.new,
                "applicability": "safe",
            },
            f"`{r.old}` is gone in {new}; the deprecation notice of {diff.old_version} names `{r.new}`.",
            _removed_evidence(diff, f"engine arg {r.old}", r.old_ref) + _deprecation_evidence(diff, r),
        )
    removed_flags = {c.name for c in flags.removed} | {r.old for r in flags.renamed}
    for r in flags.renamed:
        if r.old.startswith("--") and _snake(r.old) not in covered:
            covered.add(_snake(r.old))
            out.add(
                f"renamed-flag-{_snake(r.old)}",
                "blocker",
                {"kind": "cli_flag", "name": _snake(r.old)},
                f"{r.old} was renamed to {r.new} in vLLM {new}.",
                {
                    "summary": f"Use {r.new} instead.",
                    "action": "rename",
                    "replacement": _snake(r.new),
                    "applicability": "safe",
                },
                f"`vllm serve` in {new} no longer accepts {r.old}; the deprecation notice of "
                f"{diff.old_version} names {r.new}.",
                _removed_evidence(diff, f"flag {r.old}", r.old_ref) + _deprecation_evidence(diff, r),
            )
    for change in flags.removed:
        flag = change.name
        if not flag.startswith("--"):
            continue
        snake = _snake(flag)
        if snake in covered:
            continue
        if flag.startswith("--no-") and "--" + flag[5:] in removed_flags:
            continue
        covered.add(snake)
        out.add(
            f"removed-flag-{snake}",
            "blocker",
            {"kind": "cli_flag", "name": snake},
            f"{flag} was removed from vllm serve in vLLM {new}.",
            {"summary": "Remove the flag and its value.", "action": "remove_arg", "applicability": "safe"},
            f"`vllm serve` in {new} rejects the unknown flag {flag} at startup.",
            _removed_evidence(diff, f"flag {flag}", change.ref),
        )


def _simple_rules(out: _Rules) -> None:
    """Env vars, metrics, quantization methods, load formats."""
    diff, new = out.diff, out.diff.new_version
    cats = diff.categories
    for change in cats["env_vars"].removed:
        out.add(
            f"removed-env-{change.name}",
            "warning",
            {"kind": "env_var", "name": change.name},
            f"The environment variable {change.name} was removed in vLLM {new}; it is ignored.",
            {"summary": f"Remove {change.name} from the environment."},
            f"vLLM {new} no longer reads `{change.name}`: setting it silently does nothing.",
            _removed_evidence(diff, f"environment variable {change.name}", change.ref),
        )
    for r in cats["env_vars"].renamed:
        out.add(
            f"renamed-env-{r.old}",
            "warning",
            {"kind": "env_var", "name": r.old},
            f"The environment variable {r.old} was renamed to {r.new} in vLLM {new}.",
            {
                "summary": f"Set {r.new} instead.",
                "action": "rename",
                "replacement": r.new,
                "applicability": "safe",
            },
            f"vLLM {new} no longer reads `{r.old}`; the deprecation notice names `{r.new}`.",
            _removed_evidence(diff, f"environment variable {r.old}", r.old_ref)
            + _deprecation_evidence(diff, r),
        )
    for change in cats["metrics"].removed:
        out.add(
            f"removed-metric-{change.name}",
            "warning",
            {"kind": "metric", "name": change.name},
            f"The metric {change.name} is no longer exported by vLLM {new}.",
            {"summary": "Update dashboards and alerts that read this metric."},
            f"Dashboards and alerts that read `{change.name}` go empty after the upgrade.",
            _removed_evidence(diff, f"metric {change.name}", change.ref),
        )
    for r in cats["metrics"].renamed:
        out.add(
            f"renamed-metric-{r.old}",
            "warning",
            {"kind": "metric", "name": r.old},
            f"The metric {r.old} was renamed to {r.new} in vLLM {new}.",
            {
                "summary": f"Read {r.new} instead.",
                "action": "rename",
                "replacement": r.new,
                "applicability": "safe",
            },
            f"Dashboards and alerts that read `{r.old}` go empty after the upgrade.",
            _removed_evidence(diff, f"metric {r.old}", r.old_ref) + _deprecation_evidence(diff, r),
        )
    for category, arg, what in (
        ("quantization_methods", "quantization", "quantization method"),
        ("load_formats", "load_format", "load format"),
    ):
        for change in cats[category].removed:
            out.add(
                f"removed-{arg}-{change.name}",
                "blocker",
                {"kind": "engine_arg", "name": arg, "values": [change.name]},
                f"The {what} {change.name} was removed in vLLM {new}.",
                {"summary": f"Choose another {what}."},
                f"`--{arg.replace('_', '-')} {change.name}` is rejected by vLLM {new}.",
                _removed_evidence(diff, f"{what} {change.name}", change.ref),
            )


_ARCH_SUFFIXES = (
    "ForConditionalGeneration",
    "ForSequenceClassification",
    "ForTokenClassification",
    "ForCausalLM",
    "LMHeadModel",
    "ForRewardModel",
    "ForEmbedding",
    "EmbeddingModel",
    "ForMaskedLM",
    "Model",
)


def _arch_base(arch: str) -> str:
    """``Plamo2ForCausalLM`` -> ``Plamo2`` (the model family part of an architecture name)."""
    for suffix in _ARCH_SUFFIXES:
        if arch.endswith(suffix) and len(arch) > len(suffix):
            return arch[: -len(suffix)]
    return arch


def _camel_kebab(name: str) -> str:
    """``ExaoneMoe`` -> ``exaone-moe``, ``Plamo2`` -> ``plamo-2``."""
    return _kebab(re.sub(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Za-z])(?=[0-9])", "-", name))


def _arch_patterns(arch: str) -> list[str]:
    """Guessed model-id globs for an architecture: its family name as written and dashed."""
    base = _arch_base(arch)
    return sorted({f"*{base.lower()}*", f"*{_camel_kebab(base)}*"})


def _model_rules(out: _Rules) -> None:
    diff, new = out.diff, out.diff.new_version
    for change in diff.categories["architectures"].removed:
        out.add(
            f"removed-architecture-{_camel_kebab(change.name)}",
            "blocker",
            {
                "kind": "model",
                "name": _camel_kebab(_arch_base(change.name)),
                "patterns": _arch_patterns(change.name),
            },
            f"The model architecture {change.name} is no longer supported by vLLM {new}.",
            {"summary": "Serve a supported model, or stay on the previous release."},
            f"vLLM {new} has no {change.name} in its model registry; loading such a model fails. "
            "DRAFT: the model id patterns were guessed from the architecture name and need review.",
            _removed_evidence(diff, f"architecture {change.name}", change.ref),
        )


def _top_removed_modules(diff: SurfaceDiff) -> list:
    """Removed public modules, a removed package standing for its removed submodules."""
    removed = [
        c for c in diff.categories["modules"].removed if not any(p.startswith("_") for p in c.name.split("."))
    ]
    names = {c.name for c in removed}
    return [c for c in removed if not any(c.name.startswith(n + ".") for n in names)]


def _import_rules(out: _Rules) -> None:
    diff, new = out.diff, out.diff.new_version
    for change in _top_removed_modules(diff):
        out.add(
            f"removed-module-{change.name}",
            "blocker",
            {"kind": "import", "name": change.name},
            f"The module {change.name} was removed in vLLM {new}; importing it raises ModuleNotFoundError.",
            {"summary": "Import the replacement (see the release notes) or drop the import."},
            f"`{change.name}` (and its submodules) no longer exist in vLLM {new}.",
            _removed_evidence(diff, f"module {change.name}", change.ref),
        )
    for r in diff.categories["modules"].renamed:
        out.add(
            f"moved-module-{r.old}",
            "blocker",
            {"kind": "import", "name": r.old},
            f"The module {r.old} moved to {r.new} in vLLM {new}.",
            {
                "summary": f"Import from {r.new} instead.",
                "action": "rename",
                "replacement": r.new,
                "applicability": "safe",
            },
            f"`{r.old}` no longer exists in vLLM {new}; the deprecation notice names `{r.new}`.",
            _removed_evidence(diff, f"module {r.old}", r.old_ref) + _deprecation_evidence(diff, r),
        )
