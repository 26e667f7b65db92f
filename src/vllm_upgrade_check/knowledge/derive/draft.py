"""Draft rule packs from the difference of two vLLM releases.

:func:`draft_pack` turns a :class:`~vllm_upgrade_check.knowledge.derive.diff.SurfaceDiff` into a pack
(a plain dict shaped like :class:`~vllm_upgrade_check.model.pack.Pack`) with one candidate
rule per difference; :func:`render_draft` writes it as YAML and :func:`derive_draft` does
both for two release paths. Every candidate rule is tagged ``draft``/``unreviewed``: the
severities, messages and fixes are guesses that a curator reviews before the pack ships.
"""

from __future__ import annotations

import os
import re
import zipfile
from email.parser import Parser
from pathlib import Path
from typing import Any

import yaml
from packaging.requirements import InvalidRequirement, Requirement
from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.utils import InvalidWheelFilename, canonicalize_name, parse_wheel_filename
from packaging.version import InvalidVersion, Version

from vllm_upgrade_check.errors import UsageError
from vllm_upgrade_check.knowledge.derive.diff import SurfaceDiff, diff_surfaces
from vllm_upgrade_check.knowledge.derive.surface import ReleaseSurface, SourceRef, extract_surface

__all__ = [
    "DRAFT_TAGS",
    "KEY_DISTRIBUTIONS",
    "derive_draft",
    "draft_pack",
    "render_draft",
    "rule_id_prefix",
    "wheel_platform_tag",
]

DRAFT_TAGS = ["draft", "unreviewed"]
"""Tags of every candidate rule of a draft pack."""

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


def rule_id_prefix(release: str) -> str:
    """``VUC`` plus the release's digits: ``0.28.0`` -> ``VUC0280``, ``0.6.1.post1`` ->
    ``VUC061P1`` (the id pattern allows letters, not dots).

    Raises:
        UsageError: ``release`` is not a PEP 440 version.
    """
    try:
        version = Version(release)
    except InvalidVersion:
        raise UsageError(f"not a valid version: {release!r}") from None
    prefix = "VUC" + "".join(str(p) for p in version.release)
    if version.post is not None:
        prefix += f"P{version.post}"
    if version.pre is not None:
        prefix += f"{version.pre[0].upper()}{version.pre[1]}"
    if version.dev is not None:
        prefix += f"D{version.dev}"
    return prefix


def wheel_platform_tag(path: str | os.PathLike) -> str | None:
    """The platform tag of a release (``manylinux_2_28_x86_64``): from a ``.whl`` file name,
    else from the ``Tag:`` lines of ``vllm-*.dist-info/WHEEL`` (wheel or directory); None
    when neither says."""
    p = Path(path)
    if p.is_file():
        try:
            _n, _v, _b, tags = parse_wheel_filename(p.name)
            return sorted(t.platform for t in tags)[0] if tags else None
        except InvalidWheelFilename:
            pass
    text: str | None = None
    try:
        if p.is_file() and zipfile.is_zipfile(p):
            with zipfile.ZipFile(p) as zf:
                names = [n for n in zf.namelist() if re.fullmatch(r"vllm-[^/]+\.dist-info/WHEEL", n)]
                text = zf.read(names[0]).decode("utf-8", "replace") if names else None
        elif p.is_dir():
            found = sorted(p.glob("vllm-*.dist-info/WHEEL"))
            text = found[0].read_text(encoding="utf-8", errors="replace") if found else None
    except (OSError, zipfile.BadZipFile):
        return None
    if not text:
        return None
    wheel_tags: list[str] = Parser().parsestr(text, headersonly=True).get_all("Tag") or []
    platforms = sorted({t.strip().rsplit("-", 1)[-1] for t in wheel_tags if t.count("-") == 2})
    return platforms[0] if platforms else None


# --------------------------------------------------------------------------
# Candidate rules
# --------------------------------------------------------------------------


def _kebab(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-") or "x"


def _where(version: str, ref: SourceRef | None) -> str:
    if ref is None:
        return f"vllm-{version} wheel"
    return f"vllm-{version} wheel: {ref.path}:{ref.line}"


def _removed_evidence(diff: SurfaceDiff, what: str, ref: SourceRef) -> list[dict]:
    return [
        {
            "kind": "wheel",
            "ref": _where(diff.old_version, ref),
            "detail": f"{what} is defined here in vllm-{diff.old_version} and absent in vllm-{diff.new_version} "
            "(found by rules derive)",
        }
    ]


class _Rules:
    """Collects candidate rules with ids numbered from 001 and unique names."""

    def __init__(self, diff: SurfaceDiff) -> None:
        self.diff = diff
        self.prefix = rule_id_prefix(diff.new_version)
        self.rules: list[dict] = []
        self.names: set[str] = set()

    def add(
        self,
        name: str,
        severity: str,
        match: dict,
        message: str,
        fix: dict,
        why: str,
        evidence: list[dict],
        **extra: Any,
    ) -> None:
        base = _kebab(name)
        unique, n = base, 2
        while unique in self.names:
            unique, n = f"{base}-{n}", n + 1
        self.names.add(unique)
        rule: dict = {
            "id": f"{self.prefix}-{len(self.rules) + 1:03d}",
            "name": unique,
            "severity": severity,
            "match": match,
            "message": message,
            "fix": fix,
            "docs": {"why": why, **extra},
            "evidence": evidence,
            "tags": list(DRAFT_TAGS),
        }
        self.rules.append(rule)


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


def _deprecation_evidence(diff: SurfaceDiff, rename: Any) -> list[dict]:
    dep = rename.deprecation
    return [
        {
            "kind": "wheel",
            "ref": _where(diff.old_version, dep.ref),
            "detail": f"deprecation notice: {dep.message[:300]}",
        }
    ]


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
        evidence = [
            {
                "kind": "wheel",
                "ref": _where(new, change.new_refs[0] if change.new_refs else None),
                "detail": f"Requires-Dist: {'; '.join(change.new)}",
            }
        ]
        before = "absent" if change.kind == "added" else "; ".join(change.old)
        evidence.append(
            {
                "kind": "wheel",
                "ref": _where(diff.old_version, change.old_refs[0] if change.old_refs else None),
                "detail": f"vllm-{diff.old_version} required: {before}",
            }
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
            {
                "kind": "wheel",
                "ref": _where(diff.new_version, change.new_ref),
                "detail": f"Requires-Python: {change.new} (vllm-{diff.old_version}: {change.old}, "
                f"{_where(diff.old_version, change.old_ref)})",
            }
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


def draft_pack(
    old: ReleaseSurface,
    new: ReleaseSurface,
    diff: SurfaceDiff | None = None,
    platform_tag: str | None = None,
) -> dict:
    """A draft pack for ``new`` (``previous`` = ``old``) as a dict shaped like
    :class:`~vllm_upgrade_check.model.pack.Pack`.

    One candidate rule per difference (see the module docstring and ``rules derive --help``);
    ids ``VUC<digits>-NNN`` from 001; every rule has ``kind: wheel`` evidence naming the file
    and line it was read from and the tags :data:`DRAFT_TAGS`. ``wheel`` holds NEW's
    ``Requires-Python``, its :data:`KEY_DISTRIBUTIONS` requirements verbatim, its CUDA major
    and ``platform_tag``.

    Raises:
        UsageError: a release without a valid version in its METADATA.
    """
    for surface in (old, new):
        try:
            Version(surface.version)
        except InvalidVersion:
            raise UsageError(f"vllm METADATA has no valid Version: {surface.version!r}") from None
    diff = diff or diff_surfaces(old, new)
    out = _Rules(diff)
    notes: list[str] = []
    _arg_rules(out)
    _simple_rules(out)
    _model_rules(out)
    _import_rules(out)
    _dependency_rules(out, notes)
    _python_rule(out)
    if diff.cuda_major is not None:
        notes.append(
            f"CUDA major {diff.cuda_major.old} -> {diff.cuda_major.new} "
            f"({_where(new.version, diff.cuda_major.new_ref)}); the driver rule follows wheel.cuda_major"
        )
    skipped = [
        f"{len(diff.categories[c].removed)} removed {c.replace('_', ' ')}"
        for c in ("config_fields", "sampling_params")
        if diff.categories[c].removed
    ]
    if skipped:
        notes.append("not drafted: " + ", ".join(skipped))
    summary = (
        f"UNREVIEWED DRAFT generated by 'vllm-upgrade-check rules derive' from the vllm-{old.version} "
        f"and vllm-{new.version} wheels: {len(out.rules)} candidate rule(s). Review every severity, "
        "message, fix and model pattern, then drop the draft tags."
    )
    if notes:
        summary += " Notes: " + "; ".join(notes) + "."
    wheel: dict = {}
    if new.requires_python:
        wheel["requires_python"] = new.requires_python
    if new.cuda_major is not None:
        wheel["cuda_major"] = new.cuda_major
    if platform_tag:
        wheel["platform_tag"] = platform_tag
    wheel["requires_dist"] = _key_pins(new)
    return {
        "schema_version": 1,
        "release": new.version,
        "previous": old.version,
        "notes_url": f"https://github.com/vllm-project/vllm/releases/tag/v{new.version}",
        "summary": summary,
        "wheel": wheel,
        "rules": out.rules,
    }


def render_draft(pack: dict) -> str:
    """YAML text of a :func:`draft_pack` dict (keys in schema order)."""
    header = "# UNREVIEWED DRAFT written by `vllm-upgrade-check rules derive`; curate before shipping.\n"
    return header + yaml.safe_dump(pack, sort_keys=False, allow_unicode=True, width=110)


def _surface(path: Path) -> ReleaseSurface:
    if not path.exists():
        raise UsageError("no such file or directory", str(path))
    if not (path.is_dir() or zipfile.is_zipfile(path)):
        raise UsageError("not a wheel (.whl zip file) or a directory", str(path))
    try:
        return extract_surface(path)
    except (ValueError, KeyError, OSError, zipfile.BadZipFile) as exc:
        message = str(exc).strip("'\"") or type(exc).__name__
        raise UsageError(f"not a vLLM release: {message}", str(path)) from None


def derive_draft(old_path: str | os.PathLike, new_path: str | os.PathLike) -> str:
    """Extract both releases, diff them and return the draft pack YAML for ``new_path``.

    Raises:
        UsageError: a path that is missing, not a wheel or directory, or holds no vLLM release
            (no ``vllm/`` package or not exactly one ``vllm-*.dist-info``).
    """
    old, new = _surface(Path(old_path)), _surface(Path(new_path))
    return render_draft(draft_pack(old, new, platform_tag=wheel_platform_tag(new_path)))
