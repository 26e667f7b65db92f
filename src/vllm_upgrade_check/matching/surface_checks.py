"""Built-in checks against the target release's own surface, whatever the from-version.

A flag, keyword, import, metric, env var or value that the target does not have is found
here even when no pack rule names it, or when the release that removed it lies before the
version in use: the target is the judge. Each kind has a built-in rule (ids ``VUC000-003`` to
``VUC000-009``), and each finding's severity follows what the target does with the thing
(see :func:`rejection`):

========================  ===========================================================  ============
id                        what the target lacks                                       severity
========================  ===========================================================  ============
``VUC000-003``            a CLI flag / ``--config`` key its parser does not define     blocker
``VUC000-004``            a keyword of ``LLM``/``EngineArgs``/``AsyncEngineArgs``     blocker (TypeError); warning when ``LLM`` pops and ignores it
``VUC000-005``            a keyword of ``SamplingParams``                             blocker (TypeError)
``VUC000-006``            an imported module, or a ``vllm.envs`` attribute            blocker (ImportError/AttributeError) when an earlier release had it; warning when none did
``VUC000-007``            an exported ``vllm:`` metric                                blocker in a Prometheus rule's ``expr`` when an earlier release exported it; warning elsewhere
``VUC000-008``            an env var its ``vllm/envs.py`` reads                       warning (silently ignored)
``VUC000-009``            a value of ``--quantization``, ``--load-format`` or a       blocker when an earlier release accepted it or argparse restricts the values; warning otherwise
                          flag with argparse ``choices``
========================  ===========================================================  ============

A pack rule that matches the same fact wins: it says why, when and how to fix, and no
built-in finding is added; its severity is raised to ``blocker`` when the target rejects the
thing (:func:`with_target_severity`). The data are the release surfaces read from the wheels
(:mod:`vllm_upgrade_check.knowledge.surface`, :mod:`vllm_upgrade_check.knowledge.known_args`).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import replace

from packaging.version import Version

from vllm_upgrade_check.knowledge.known_args import DATA_FILE, KnownArgs, known_args
from vllm_upgrade_check.knowledge.surface import NameHistory, surface_history
from vllm_upgrade_check.matching.checks import built_in_finding
from vllm_upgrade_check.matching.matcher import VersionContext
from vllm_upgrade_check.matching.surface_rules import (
    ENGINE_ARG_ID,
    ENV_VAR_ID,
    FLAG_ID,
    IMPORT_ID,
    METRIC_ID,
    SAMPLING_ID,
    SURFACE_IDS,
    VALUE_ID,
    Rejection,
    documented_surface_rule,
    surface_rule,
)
from vllm_upgrade_check.model.facts import Fact, FactKind
from vllm_upgrade_check.model.findings import Finding
from vllm_upgrade_check.model.pack import (
    MatchKind,
    Rule,
    Severity,
)

_ENGINE_CALLS = {
    "LLM(...)": "LLM",
    "EngineArgs(...)": "EngineArgs",
    "AsyncEngineArgs(...)": "AsyncEngineArgs",
}
_VALUE_KINDS = {"quantization": "quantization_methods", "load_format": "load_formats"}
_SERIES = ("_total", "_bucket", "_sum", "_count", "_created")


def _history_words(history: NameHistory, name: str, target: Version, thing: str) -> tuple[str, bool]:
    """``(words, had)``: what the releases say of ``name`` seen from ``target`` (``removed in
    0.18.0, last in 0.17.1`` / ``added in 0.30.0, after 0.28.0`` / ``in no release``), and
    whether an earlier release had it."""
    removed = history.removed_in(name, target)
    last = history.last_before(name, target)
    if last is not None:
        return f"removed in vLLM {removed} (last in {last})" if removed else f"last in {last}", True
    later = [history.releases[a] for a, _b in history.runs.get(name, ()) if history.releases[a] > target]
    if later:
        return f"added in vLLM {min(later)}, after {target}", False
    span = f"{history.releases[0]}-{history.releases[-1]}" if history.releases else "any"
    return f"{thing} of no vLLM release ({span})", False


def _flag_rejection(fact: Fact, target: Version, known: KnownArgs) -> Rejection | None:
    if fact.origin not in ("cli", "config") or not fact.resolved:
        return None
    if fact.origin == "cli" and not fact.raw.startswith("--"):
        return None
    head = fact.name.split(".", 1)[0]
    flag = "--" + head.replace("_", "-")
    if not known.covers(target) or known.defines(flag, target) or flag not in known.flags:
        return None  # defined, or in no release at all (VUC000-001 says so)
    first, last, ref = known.flags[flag]
    if Version(first) > target:
        detail = f"added in vLLM {first}, after {target}"
    else:
        detail = f"last defined in {last}" if Version(last) < target else "not defined by this release"
    return Rejection(
        FLAG_ID,
        Severity.BLOCKER,
        fact.raw.split("=", 1)[0] or flag,
        "flag",
        detail,
        None,  # a flag of another release, not a typo: no "did you mean"
        ref,
        DATA_FILE,
    )


def _call_of(fact: Fact, launches: dict[tuple[str | None, str | None], str]) -> str | None:
    return launches.get((fact.location.path, fact.group))


def _engine_rejection(fact: Fact, target: Version, call: str) -> Rejection | None:
    engine = surface_history("engine_args")
    if not engine.covers(target):
        return None
    name = fact.name.split(".", 1)[0]
    if name.startswith("_"):
        return None  # a private dataclass field (``_api_process_count``): the surface leaves them out
    if engine.has(name, target):
        return None
    if call == "LLM":
        params, ignored = surface_history("llm_params"), surface_history("llm_ignored")
        if params.has(name, target):
            return None
        if ignored.has(name, target):
            return Rejection(
                ENGINE_ARG_ID,
                Severity.WARNING,
                name,
                "keyword of LLM(...)",
                f"LLM(...) of vLLM {target} drops it with a warning",
                None,
                ignored.ref(name),
                ignored.data_file,
            )
    words, _had = _history_words(engine, name, target, "an engine arg")
    suggestion = _closest("engine_args", name, target)
    return Rejection(
        ENGINE_ARG_ID,
        Severity.BLOCKER,
        name,
        f"keyword of {call}(...)",
        words,
        suggestion,
        engine.ref(name),
        engine.data_file,
    )


def _sampling_rejection(fact: Fact, target: Version) -> Rejection | None:
    sampling = surface_history("sampling_params")
    name = fact.name.split(".", 1)[0]
    if not sampling.covers(target) or sampling.has(name, target):
        return None
    words, _had = _history_words(sampling, name, target, "a field")
    return Rejection(
        SAMPLING_ID,
        Severity.BLOCKER,
        name,
        "keyword of SamplingParams(...)",
        words,
        _closest("sampling_params", name, target),
        sampling.ref(name),
        sampling.data_file,
    )


def _module_rejection(modules: NameHistory, module: str, target: Version) -> Rejection:
    """A module ``target`` does not ship: a blocker when an earlier release had it (a
    removal), a warning when none did (a build for another platform may)."""
    words, had = _history_words(modules, module, target, "a module")
    severity = Severity.BLOCKER if had else Severity.WARNING
    return Rejection(
        IMPORT_ID,
        severity,
        module,
        "module",
        words,
        None,
        modules.ref(module) if had else None,
        modules.data_file,
    )


def _import_rejection(fact: Fact, target: Version, known: KnownArgs) -> Rejection | None:
    modules = surface_history("modules")
    if not modules.covers(target):
        return None
    module = fact.name
    if not modules.has(module, target):
        return _module_rejection(modules, module, target)
    name = fact.value
    if not name:
        return None
    submodule = f"{module}.{name}"
    if modules.known(submodule) and not modules.has(submodule, target):
        return _module_rejection(modules, submodule, target)
    if (
        module == "vllm.envs"
        and name.startswith("VLLM_")
        and name not in known.env_vars
        and known.covers(target)
    ):
        return Rejection(
            IMPORT_ID,
            Severity.BLOCKER,
            f"vllm.envs.{name}",
            "attribute of vllm.envs",
            "no vLLM release defines it; vllm.envs raises AttributeError for it",
            _closest_env(name, target, known),
            "vllm/envs.py",
            DATA_FILE,
        )
    if module == "vllm.envs" and name in known.env_vars and known.covers(target):
        first, last, gaps = known.env_vars[name]
        if name in _env_gone(known, target) or first > target:
            detail = f"last read by {last}" if last < target else f"added in vLLM {first}, after {target}"
            return Rejection(
                IMPORT_ID,
                Severity.BLOCKER,
                f"vllm.envs.{name}",
                "attribute of vllm.envs",
                detail,
                None,
                "vllm/envs.py",
                DATA_FILE,
            )
    return None


def _metric_names(fact: Fact) -> set[str]:
    base = fact.name
    return {fact.name, fact.raw, *fact.aliases, *(base + s for s in _SERIES)} - {""}


def _metric_rejection(fact: Fact, target: Version) -> Rejection | None:
    metrics = surface_history("metrics")
    if not metrics.covers(target):
        return None
    names = _metric_names(fact)
    if any(metrics.has(n, target) for n in names):
        return None
    had_names = sorted(n for n in names if metrics.known(n))
    written = fact.raw or fact.name
    if had_names:
        words, had = _history_words(metrics, had_names[0], target, "a metric")
    else:
        words, had = (
            f"a metric no vLLM release exported ({metrics.releases[0]}-{metrics.releases[-1]}); "
            "names vLLM builds at run time are not read, so check it against /metrics",
            False,
        )
    alert = fact.scanner == "prometheus"
    severity = Severity.BLOCKER if (had and alert) else Severity.WARNING
    return Rejection(
        METRIC_ID,
        severity,
        written,
        "metric in a Prometheus rule" if alert else "metric",
        words,
        _closest("metrics", written, target) or _closest("metrics", fact.name, target),
        metrics.ref(had_names[0]) if had_names else None,
        metrics.data_file,
    )


_ENV_GONE: dict[Version, frozenset[str]] = {}
_ENV_AT: dict[Version, dict[int, list[str]]] = {}
ENV_CUTOFF = 0.85
"""Least difflib ratio at which an unknown ``VLLM_`` name is taken for a typo of a known one."""


def _closest_env(name: str, target: Version, known: KnownArgs) -> str | None:
    """The env var release ``target`` reads closest to ``name`` (a typo), or ``None``."""
    import difflib

    by_length = _ENV_AT.get(target)
    if by_length is None:
        gone = _env_gone(known, target)
        by_length = _ENV_AT[target] = {}
        for n in sorted(n for n, (first, _l, _g) in known.env_vars.items() if first <= target and n not in gone):
            by_length.setdefault(len(n), []).append(n)
    key = ("env_vars", name, target)
    if key not in _CLOSEST:
        if len(_CLOSEST) > 10_000:
            _CLOSEST.clear()
        # difflib's ratio 2*M/(a+b) cannot reach the cutoff c when one length is under
        # c/(2-c) of the other: only names of a length in that window are compared (the
        # same answer as comparing with all of them, at a fraction of the cost).
        low, high = (ENV_CUTOFF * len(name)) / (2 - ENV_CUTOFF), (2 - ENV_CUTOFF) * len(name) / ENV_CUTOFF
        pool = [n for length, names in by_length.items() if low <= length <= high for n in names]
        found = difflib.get_close_matches(name, pool, n=1, cutoff=ENV_CUTOFF) if pool else []
        _CLOSEST[key] = found[0] if found else None
    return _CLOSEST[key]


def _env_gone(known: KnownArgs, target: Version) -> frozenset[str]:
    """:meth:`KnownArgs.env_gone_by`, once per target."""
    found = _ENV_GONE.get(target)
    if found is None:
        found = _ENV_GONE[target] = known.env_gone_by(target)
    return found


def _env_rejection(fact: Fact, target: Version, known: KnownArgs) -> Rejection | None:
    if fact.name not in known.env_vars and fact.name.startswith("VLLM_") and known.covers(target):
        # vllm/envs.py's validate_environ logs "Unknown vLLM environment variable detected"
        # for any VLLM_ name it does not register; a team's own VLLM_ variable is common,
        # so only a near miss of one the target reads (a typo) is reported
        near = _closest_env(fact.name, target, known)
        if near is None:
            return None
        return Rejection(
            ENV_VAR_ID,
            Severity.WARNING,
            fact.name,
            "env var",
            f"no vLLM release reads it; vLLM {target} logs it as an unknown vLLM environment variable",
            near,
            "vllm/envs.py",
            DATA_FILE,
        )
    if fact.name not in known.env_vars or fact.name not in _env_gone(known, target):
        return None
    _first, last, _gaps = known.env_vars[fact.name]
    return Rejection(
        ENV_VAR_ID,
        Severity.WARNING,
        fact.name,
        "env var",
        f"last read by vLLM {last}",
        None,
        "vllm/envs.py",
        DATA_FILE,
    )


def _value_rejection(fact: Fact, target: Version, known: KnownArgs) -> Rejection | None:
    # A Python keyword's value is not checked: the fact does not tell a literal ("fp8")
    # from a name (``dtype=DT``).
    if fact.origin not in ("cli", "config") or not fact.resolved or not fact.value:
        return None
    value = fact.value.strip().strip("'\"")
    if not value or "$" in value or "{" in value:
        return None
    head = fact.name.split(".", 1)[0]
    flag = "--" + head.replace("_", "-")
    if not known.defines(flag, target):
        return None
    choices = known.choices_at(flag, target)
    if choices is not None and known.arity(flag, target) == ("1", True):
        if value.lower() in {c.lower() for c in choices}:
            return None
        return Rejection(
            VALUE_ID,
            Severity.BLOCKER,
            f"{flag} {value}",
            "value",
            f"vLLM {target}'s parser accepts only: {', '.join(choices)}",
            None,
            known.flags[flag][2],
            DATA_FILE,
        )
    kind = _VALUE_KINDS.get(head)
    if kind is None:
        return None
    history = surface_history(kind)
    if not history.covers(target) or history.has(value, target) or history.has(value.lower(), target):
        return None
    words, had = _history_words(history, value, target, "a value")
    return Rejection(
        VALUE_ID,
        Severity.BLOCKER if had else Severity.WARNING,
        f"{flag} {value}",
        "value",
        words if had else words + "; a plugin may register it",
        _closest(history.kind, value, target),
        history.ref(value),
        history.data_file,
    )


def rejection(
    fact: Fact, target: Version, launches: dict[tuple[str | None, str | None], str] | None = None
) -> Rejection | None:
    """What ``target`` does with ``fact`` if it does not have the thing, else ``None``.

    Args:
        fact: one fact of a scan.
        target: the release upgraded to.
        launches: ``(path, group) -> call`` (``LLM``, ``EngineArgs``, ``AsyncEngineArgs``) of
            the Python launches, so that a keyword is judged by the class it is given to.
    """
    call = _call_of(fact, launches or {}) if fact.kind == FactKind.ARG and fact.origin == "python" else None
    key = (
        fact.kind,
        fact.name,
        fact.raw,
        fact.value,
        fact.origin,
        fact.scanner,
        fact.resolved,
        fact.aliases,
        call,
        target,
    )
    if key in _JUDGED:
        return _JUDGED[key]
    if len(_JUDGED) > 50_000:
        _JUDGED.clear()
    found = _JUDGED[key] = _judge(fact, target, call)
    return found


_CLOSEST: dict[tuple[str, str, Version], str | None] = {}


def _closest(kind: str, name: str, target: Version) -> str | None:
    """The closest name of ``kind`` (``flags`` or a :data:`~vllm_upgrade_check.knowledge.surface.KINDS`
    entry) release ``target`` has, once per name."""
    key = (kind, name, target)
    if key not in _CLOSEST:
        if len(_CLOSEST) > 10_000:
            _CLOSEST.clear()
        found = (
            known_args().closest(name, target)
            if kind == "flags"
            else surface_history(kind).closest(name, target)
        )
        _CLOSEST[key] = found
    return _CLOSEST[key]


_JUDGED: dict[tuple[object, ...], Rejection | None] = {}
"""Rejections already decided, by everything :func:`_judge` reads of a fact (the same flag
is written in many launches)."""


def clear_caches() -> None:
    """Forget the rejections and suggestions decided so far (a benchmark times them afresh)."""
    _JUDGED.clear()
    _CLOSEST.clear()
    _ENV_AT.clear()


def _judge(fact: Fact, target: Version, call: str | None) -> Rejection | None:
    known = known_args()
    if fact.kind == FactKind.ARG:
        if fact.origin == "python":
            return _engine_rejection(fact, target, call) if call else None
        if fact.origin == "sampling":
            return _sampling_rejection(fact, target)
        return _flag_rejection(fact, target, known) or _value_rejection(fact, target, known)
    if fact.kind == FactKind.IMPORT:
        return _import_rejection(fact, target, known)
    if fact.kind == FactKind.METRIC:
        return _metric_rejection(fact, target)
    if fact.kind == FactKind.ENV_VAR:
        return _env_rejection(fact, target, known)
    return None


def python_launches(facts: Iterable[Fact]) -> dict[tuple[str | None, str | None], str]:
    """``(path, group) -> class`` of each Python launch fact (``LLM(...)`` -> ``LLM``)."""
    out: dict[tuple[str | None, str | None], str] = {}
    for fact in facts:
        if fact.kind == FactKind.LAUNCH and fact.origin == "python":
            call = _ENGINE_CALLS.get(fact.name)
            if call:
                out[(fact.location.path, fact.group)] = call
    return out


__all__ = [
    "SURFACE_IDS",
    "Rejection",
    "documented_surface_rule",
    "rejection",
    "surface_findings",
    "surface_rule",
]


def surface_findings(
    facts: Sequence[Fact], versions: VersionContext, findings: Sequence[Finding]
) -> list[Finding]:
    """Built-in findings for the facts the target does not have and no pack rule explains.

    Args:
        facts: every fact of the scan.
        versions: the target and the versions assumed.
        findings: the findings of the pack rules so far (a fact one of them matches gets none
            here).
    """
    explained = {id(f.fact) for f in findings}
    launches = python_launches(facts)
    out: list[Finding] = []
    rules: dict[tuple[str, str, str, str, Severity], Rule] = {}
    for fact in facts:
        if id(fact) in explained:
            continue
        rejected = rejection(fact, versions.target, launches)
        if rejected is None:
            continue
        key = (rejected.rule_id, rejected.subject, rejected.what, rejected.detail, rejected.severity)
        rule = rules.get(key)
        if rule is None:
            rule = rules[key] = surface_rule(rejected, versions.target)
        out.append(built_in_finding(rule, fact, versions))
    return out


def gone_subjects(rules: Iterable[tuple[object, Rule]], target: Version) -> frozenset[tuple[str, str]]:
    """``(match kind, name)`` of the metrics, modules, engine args and ``SamplingParams``
    fields that ``rules`` name, some release before ``target`` had and ``target`` does not:
    the rules that say how they went apply whatever the version in use (see
    :class:`~vllm_upgrade_check.matching.matcher.VersionContext`)."""
    out: set[tuple[str, str]] = set()
    for _pack, rule in rules:
        match = rule.match
        if match.kind == MatchKind.METRIC:
            history, names = surface_history("metrics"), [match.name, match.name + "_total"]
        elif match.kind == MatchKind.IMPORT and not getattr(match, "names", None):
            history, names = surface_history("modules"), [match.name]
        elif match.kind == MatchKind.ENGINE_ARG:
            sampling = match.origins is not None and "sampling" in match.origins
            history, names = surface_history("sampling_params" if sampling else "engine_args"), [match.name]
        else:
            continue
        if not history.covers(target):
            continue
        if any(history.last_before(n, target) for n in names) and not any(
            history.has(n, target) for n in names
        ):
            out.add((match.kind.value, match.name))
    return frozenset(out)


def with_target_severity(
    findings: Sequence[Finding], facts: Sequence[Fact], target: Version
) -> list[Finding]:
    """``findings`` with the severity of each pack rule's finding raised to what the target
    does with its fact: a blocker when the target rejects it (a deprecation warning for a
    flag the target no longer defines is a blocker there)."""
    launches = python_launches(facts)
    out = []
    for finding in findings:
        if finding.severity != Severity.BLOCKER:
            rejected = rejection(finding.fact, target, launches)
            if rejected is not None and rejected.severity.rank > finding.severity.rank:
                finding = replace(finding, severity=rejected.severity, deprecated_only=False)
        out.append(finding)
    return out
