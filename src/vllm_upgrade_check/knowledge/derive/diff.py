"""Diff of two :class:`~vllm_upgrade_check.knowledge.derive.surface.ReleaseSurface`\\ s."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

from packaging.requirements import InvalidRequirement, Requirement
from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.utils import canonicalize_name

from vllm_upgrade_check.knowledge.derive.surface import (
    NAME_CATEGORIES,
    Deprecation,
    ReleaseSurface,
    SourceRef,
)

__all__ = [
    "CategoryDiff",
    "NameChange",
    "Rename",
    "RequirementChange",
    "SurfaceDiff",
    "ValueChange",
    "diff_surfaces",
]


@dataclass(frozen=True)
class NameChange:
    """A name present in only one release; ``ref`` is where it is defined in
    that release (the old one for a removal, the new one for an addition)."""

    name: str
    ref: SourceRef

    def to_json(self) -> dict:
        """Return a JSON-ready dict."""
        return {"name": self.name, "ref": self.ref.to_json()}


@dataclass(frozen=True)
class Rename:
    """``old`` is gone from the new release and a deprecation notice of the
    old release (``deprecation``) names ``new``, which the new release has.
    ``old_ref``: definition of ``old`` in the old release; ``new_ref``:
    definition of ``new`` in the new release."""

    old: str
    new: str
    old_ref: SourceRef
    new_ref: SourceRef
    deprecation: Deprecation

    def to_json(self) -> dict:
        """Return a JSON-ready dict."""
        return {
            "old": self.old,
            "new": self.new,
            "old_ref": self.old_ref.to_json(),
            "new_ref": self.new_ref.to_json(),
            "deprecation": self.deprecation.to_json(),
        }


@dataclass(frozen=True)
class RequirementChange:
    """Change of one distribution's ``Requires-Dist`` entries (``name`` is the
    canonical distribution name).

    ``old``/``new`` are the verbatim requirement strings of each release (a
    distribution can be listed several times with different markers or
    extras; empty when absent).  ``old_specifier``/``new_specifier`` are the
    version specifiers of the unconditional entries (no marker), or of all
    entries joined with `` | `` when every entry has a marker; None when
    absent.  ``kind`` is ``"added"``, ``"removed"`` or ``"changed"``.
    ``old_refs``/``new_refs`` are the METADATA lines."""

    name: str
    kind: str
    old: tuple[str, ...]
    new: tuple[str, ...]
    old_specifier: str | None
    new_specifier: str | None
    old_refs: tuple[SourceRef, ...]
    new_refs: tuple[SourceRef, ...]

    def to_json(self) -> dict:
        """Return a JSON-ready dict."""
        return {
            "name": self.name,
            "kind": self.kind,
            "old": list(self.old),
            "new": list(self.new),
            "old_specifier": self.old_specifier,
            "new_specifier": self.new_specifier,
            "old_refs": [r.to_json() for r in self.old_refs],
            "new_refs": [r.to_json() for r in self.new_refs],
        }


@dataclass(frozen=True)
class ValueChange:
    """Change of a single value (``requires_python``, ``cuda_major``), with
    the refs it was read from in each release (None when absent)."""

    old: object
    new: object
    old_ref: SourceRef | None
    new_ref: SourceRef | None

    def to_json(self) -> dict:
        """Return a JSON-ready dict."""
        return {
            "old": self.old,
            "new": self.new,
            "old_ref": self.old_ref.to_json() if self.old_ref else None,
            "new_ref": self.new_ref.to_json() if self.new_ref else None,
        }


@dataclass(frozen=True)
class CategoryDiff:
    """Differences of one name category (see ``NAME_CATEGORIES``).
    ``removed`` excludes names listed in ``renamed``."""

    removed: tuple[NameChange, ...]
    added: tuple[NameChange, ...]
    renamed: tuple[Rename, ...]

    def to_json(self) -> dict:
        """Return a JSON-ready dict."""
        return {
            "removed": [c.to_json() for c in self.removed],
            "added": [c.to_json() for c in self.added],
            "renamed": [r.to_json() for r in self.renamed],
        }


@dataclass(frozen=True)
class SurfaceDiff:
    """What changed from release ``old_version`` to ``new_version``.

    ``categories`` maps each of ``NAME_CATEGORIES`` to a :class:`CategoryDiff`;
    ``requirements`` lists changed ``Requires-Dist`` distributions (sorted by
    name); ``requires_python`` and ``cuda_major`` are None when unchanged."""

    old_version: str
    new_version: str
    categories: Mapping[str, CategoryDiff]
    requirements: tuple[RequirementChange, ...]
    requires_python: ValueChange | None
    cuda_major: ValueChange | None

    def removed(self, category: str) -> tuple[str, ...]:
        """Names removed (and not renamed) in ``category``."""
        return tuple(c.name for c in self.categories[category].removed)

    def added(self, category: str) -> tuple[str, ...]:
        """Names added in ``category``."""
        return tuple(c.name for c in self.categories[category].added)

    def renamed(self, category: str) -> tuple[tuple[str, str], ...]:
        """``(old, new)`` pairs renamed in ``category``."""
        return tuple((r.old, r.new) for r in self.categories[category].renamed)

    def to_json(self) -> dict:
        """Return a JSON-ready dict."""
        return {
            "old_version": self.old_version,
            "new_version": self.new_version,
            "categories": {k: v.to_json() for k, v in self.categories.items()},
            "requirements": [r.to_json() for r in self.requirements],
            "requires_python": self.requires_python.to_json() if self.requires_python else None,
            "cuda_major": self.cuda_major.to_json() if self.cuda_major else None,
        }


def _flag_form(name: str) -> str:
    """A spelling found in a message, as a CLI flag key (``--dashed``)."""
    if name.startswith("--"):
        return "--" + name[2:].replace("_", "-")
    if name.startswith("-"):
        return name
    return "--" + name.replace("_", "-")


def _field_form(name: str) -> str:
    """A spelling found in a message, as a field name (``snake_case``)."""
    return name.lstrip("-").replace("-", "_")


# How a spelling found in a deprecation message is normalised to each
# category's key form (config_fields are handled by _rename_candidates).
_NORMALISERS: dict[str, Callable[[str], str]] = {
    "cli_flags": _flag_form,
    "engine_args": _field_form,
    "sampling_params": _field_form,
    "env_vars": str,
    "metrics": str,
    "quantization_methods": str,
    "load_formats": str,
    "architectures": str,
    "modules": str,
}

# The Deprecation kind that belongs to each category.
_KINDS = {
    "cli_flags": "cli_flag",
    "engine_args": "engine_arg",
    "config_fields": "config_field",
    "sampling_params": "sampling_param",
    "env_vars": "env_var",
    "metrics": "metric",
    "modules": "module",
}


def _rename_candidates(category: str, dep: Deprecation, gone: set[str]) -> list[tuple[str, str]]:
    """``(old key, new key)`` pairs a deprecation could mean in ``category``."""
    assert dep.replacement is not None
    if category == "config_fields":
        # "Class.old" -> "Class.new": a message names fields without the class
        old, new = _field_form(dep.name), _field_form(dep.replacement)
        return [(k, k.rsplit(".", 1)[0] + "." + new) for k in sorted(gone) if k.endswith("." + old)]
    norm = _NORMALISERS[category]
    return [(norm(dep.name), norm(dep.replacement))]


def _renames(category: str, old: ReleaseSurface, new: ReleaseSurface, gone: set[str]) -> list[Rename]:
    old_names, new_names = old.names(category), new.names(category)
    found: dict[str, Rename] = {}
    # notices of this category's own kind first (a flag's help text before
    # a config warning naming the same field)
    kind = _KINDS.get(category)
    for dep in sorted(old.deprecations, key=lambda d: d.kind != kind):
        if not dep.replacement:
            continue
        for before, after in _rename_candidates(category, dep, gone):
            if before in gone and after in new_names and before not in found:
                found[before] = Rename(before, after, old_names[before], new_names[after], dep)
    return sorted(found.values(), key=lambda r: r.old)


def _category_diff(category: str, old: ReleaseSurface, new: ReleaseSurface) -> CategoryDiff:
    a, b = old.names(category), new.names(category)
    gone = set(a) - set(b)
    renamed = _renames(category, old, new, gone)
    renamed_names = {r.old for r in renamed}
    return CategoryDiff(
        removed=tuple(NameChange(n, a[n]) for n in sorted(gone - renamed_names)),
        added=tuple(NameChange(n, b[n]) for n in sorted(set(b) - set(a))),
        renamed=tuple(renamed),
    )


def _by_distribution(
    surface: ReleaseSurface,
) -> dict[str, list[tuple[str, Requirement | None, SourceRef | None]]]:
    out: dict[str, list] = {}
    for raw, ref in surface.requirements_with_refs():
        req: Requirement | None
        try:
            req = Requirement(raw)
            key: str = canonicalize_name(req.name)
        except InvalidRequirement:
            req, key = None, raw.split(";")[0].strip().lower()
        out.setdefault(key, []).append((raw, req, ref))
    return out


def _requirement_key(raw: str, req: Requirement | None) -> tuple:
    if req is None:
        return (raw,)
    return (
        tuple(sorted(req.extras)),
        str(req.specifier),
        str(req.marker) if req.marker else "",
        req.url or "",
    )


def _specifier(entries: list) -> str | None:
    if not entries:
        return None
    plain = [str(req.specifier) for _, req, _ in entries if req is not None and req.marker is None]
    if plain:
        return " | ".join(plain)
    return " | ".join(str(req.specifier) if req else raw for raw, req, _ in entries)


def _requirement_changes(old: ReleaseSurface, new: ReleaseSurface) -> list[RequirementChange]:
    a, b = _by_distribution(old), _by_distribution(new)
    changes = []
    for name in sorted(set(a) | set(b)):
        ea, eb = a.get(name, []), b.get(name, [])
        if sorted(_requirement_key(r, q) for r, q, _ in ea) == sorted(
            _requirement_key(r, q) for r, q, _ in eb
        ):
            continue
        changes.append(
            RequirementChange(
                name=name,
                kind="added" if not ea else "removed" if not eb else "changed",
                old=tuple(r for r, _, _ in ea),
                new=tuple(r for r, _, _ in eb),
                old_specifier=_specifier(ea),
                new_specifier=_specifier(eb),
                old_refs=tuple(ref for _, _, ref in ea if ref),
                new_refs=tuple(ref for _, _, ref in eb if ref),
            )
        )
    return changes


def _normal_specifier(spec: str | None) -> str | None:
    try:
        return str(SpecifierSet(spec)) if spec is not None else None
    except InvalidSpecifier:
        return spec


def _value_change(old: object, new: object, old_ref, new_ref) -> ValueChange | None:
    return None if old == new else ValueChange(old, new, old_ref, new_ref)


def diff_surfaces(old: ReleaseSurface, new: ReleaseSurface) -> SurfaceDiff:
    """Compare two release surfaces.

    Per category (``NAME_CATEGORIES``): names only in ``old`` (removed),
    names only in ``new`` (added), and renames: a removed name for which a
    :class:`Deprecation` of ``old`` names a replacement that exists in
    ``new`` (CLI flags compared in ``--dashed`` form, engine args and
    sampling params in ``snake_case``, config fields as ``Class.field``
    with the class of the removed field).  Requirements are compared per
    canonical distribution name with :mod:`packaging.requirements`
    (specifier, markers and extras; not formatting).  ``requires_python``
    and ``cuda_major`` changes are reported with the refs they came from."""
    return SurfaceDiff(
        old_version=old.version,
        new_version=new.version,
        categories={c: _category_diff(c, old, new) for c in NAME_CATEGORIES},
        requirements=tuple(_requirement_changes(old, new)),
        requires_python=None
        if _normal_specifier(old.requires_python) == _normal_specifier(new.requires_python)
        else ValueChange(
            old.requires_python, new.requires_python, old.requires_python_ref, new.requires_python_ref
        ),
        cuda_major=_value_change(old.cuda_major, new.cuda_major, old.cuda_ref, new.cuda_ref),
    )
