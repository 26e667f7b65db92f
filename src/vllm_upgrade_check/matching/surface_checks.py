"""Built-in checks against the target release's own surface, whatever the from-version.

A flag, keyword, import, metric, env var or value that the target does not have is found
here even when no pack rule names it, or when the release that removed it lies before the
version in use: the target is the judge. Each kind has a built-in rule (ids ``VUC000-003`` to
``VUC000-009``, ``VUC000-014``, ``VUC000-015``), and each finding's severity follows what the target does with the thing
(see :func:`rejection`):

========================  ===========================================================  ============
id                        what the target lacks                                       severity
========================  ===========================================================  ============
``VUC000-003``            a CLI flag / ``--config`` key its parser does not define     blocker
``VUC000-004``            a keyword of ``LLM``/``EngineArgs``/``AsyncEngineArgs``     blocker (TypeError); warning when ``LLM`` pops and ignores it
``VUC000-005``            a keyword of ``SamplingParams``                             blocker (TypeError)
``VUC000-006``            an imported module or name, a ``vllm.envs`` attribute, or   blocker (ImportError/AttributeError) when an earlier release had it; warning when none did
                          the module a ``python -m`` launch runs
``VUC000-007``            an exported ``vllm:`` metric                                blocker in a Prometheus rule's ``expr`` when an earlier release exported it; warning elsewhere
``VUC000-008``            an env var its ``vllm/envs.py`` reads                       warning (silently ignored)
``VUC000-009``            a value of ``--quantization``, ``--load-format`` or a       blocker when an earlier release accepted it or argparse restricts the values; warning otherwise
                          flag with argparse ``choices`` (also a literal keyword
                          value in Python)
``VUC000-014``            an architecture (``--hf-overrides``, ``config.json``)       blocker when an earlier release served it; warning otherwise, or with ``--model-impl transformers``
``VUC000-015``            a chat, completion or embedding response field it returns    warning (the client reads ``None`` or fails)
========================  ===========================================================  ============

A pack rule that matches the same fact wins: it says why, when and how to fix, and no
built-in finding is added; its severity is raised to ``blocker`` when the target rejects the
thing (:func:`with_target_severity`). The data are the release surfaces read from the wheels
(:mod:`vllm_upgrade_check.knowledge.surface`, :mod:`vllm_upgrade_check.knowledge.known_args`,
:mod:`vllm_upgrade_check.knowledge.public_names`); imports are judged in :mod:`.surface_imports`,
values and architectures in :mod:`.surface_values`.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import replace

from packaging.version import Version

from vllm_upgrade_check.knowledge.known_args import DATA_FILE, KnownArgs, known_args
from vllm_upgrade_check.knowledge.surface import surface_history
from vllm_upgrade_check.matching.checks import built_in_finding
from vllm_upgrade_check.matching.matcher import VersionContext
from vllm_upgrade_check.matching.surface_imports import import_rejection, launch_module_rejection
from vllm_upgrade_check.matching.surface_rules import (
    ENGINE_ARG_ID,
    ENV_VAR_ID,
    FLAG_ID,
    METRIC_ID,
    RESPONSE_ID,
    SAMPLING_ID,
    SURFACE_IDS,
    Rejection,
    documented_surface_rule,
    surface_rule,
)
from vllm_upgrade_check.matching.surface_values import (
    architecture_rejection,
    overridden_architectures,
    value_rejection,
)
from vllm_upgrade_check.matching.surface_words import (
    clear_word_caches,
    closest,
    closest_env,
    env_gone,
    history_words,
)
from vllm_upgrade_check.model.facts import Fact, FactKind, Location
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
_SERIES = ("_total", "_bucket", "_sum", "_count", "_created")


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
    words, _had = history_words(engine, name, target, "an engine arg")
    suggestion = closest("engine_args", name, target)
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
    words, _had = history_words(sampling, name, target, "a field")
    return Rejection(
        SAMPLING_ID,
        Severity.BLOCKER,
        name,
        "keyword of SamplingParams(...)",
        words,
        closest("sampling_params", name, target),
        sampling.ref(name),
        sampling.data_file,
    )


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
        words, had = history_words(metrics, had_names[0], target, "a metric")
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
        closest("metrics", written, target) or closest("metrics", fact.name, target),
        metrics.ref(had_names[0]) if had_names else None,
        metrics.data_file,
    )


def _env_rejection(fact: Fact, target: Version, known: KnownArgs) -> Rejection | None:
    if fact.name not in known.env_vars and fact.name.startswith("VLLM_") and known.covers(target):
        # vllm/envs.py's validate_environ logs "Unknown vLLM environment variable detected"
        # for any VLLM_ name it does not register; a team's own VLLM_ variable is common,
        # so only a near miss of one the target reads (a typo) is reported
        near = closest_env(fact.name, target, known)
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
    if fact.name not in known.env_vars or fact.name not in env_gone(known, target):
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


def rejection(
    fact: Fact,
    target: Version,
    launches: dict[tuple[str | None, str | None], str] | None = None,
    backends: frozenset[tuple[str | None, str | None]] = frozenset(),
) -> Rejection | None:
    """What ``target`` does with ``fact`` if it does not have the thing, else ``None``.

    Args:
        fact: one fact of a scan.
        target: the release upgraded to.
        launches: ``(path, group) -> call`` (``LLM``, ``EngineArgs``, ``AsyncEngineArgs``) of
            the Python launches, so that a keyword is judged by the class it is given to.
        backends: ``(path, group)`` of the launches that ask for the Transformers backend
            (:func:`transformers_launches`; ``(None, None)`` when any launch of the scan does).
    """
    call = _call_of(fact, launches or {}) if fact.kind == FactKind.ARG and fact.origin == "python" else None
    transformers = _on_transformers(fact, backends)
    key = (
        transformers,
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
    found = _JUDGED[key] = _judge(fact, target, call, transformers)
    return found


def _on_transformers(fact: Fact, backends: frozenset[tuple[str | None, str | None]]) -> str:
    """``"launch"`` when ``fact`` is the ``--hf-overrides`` of a launch that asks for the
    Transformers backend, ``"scan"`` when it is a ``config.json`` architecture and some launch
    of the scan asks for it (which launch serves that directory is not read), else ``""``."""
    if fact.kind == FactKind.ARCHITECTURE:
        return "scan" if backends else ""
    on = fact.kind == FactKind.ARG and fact.name == "hf_overrides" and (fact.location.path, fact.group) in backends
    return "launch" if on else ""


def transformers_launches(facts: Iterable[Fact]) -> frozenset[tuple[str | None, str | None]]:
    """``(path, group)`` of each launch with ``--model-impl transformers`` (a flag, a
    ``--config`` key or a ``model_impl=`` keyword), plus ``(None, None)`` when there is one."""
    out = {
        (f.location.path, f.group)
        for f in facts
        if f.kind == FactKind.ARG
        and f.name == "model_impl"
        and f.resolved
        and (f.value or "").strip().strip("'\"").lower() == "transformers"
    }
    return frozenset(out | {(None, None)}) if out else frozenset()


_JUDGED: dict[tuple[object, ...], Rejection | None] = {}
"""Rejections already decided, by everything :func:`_judge` reads of a fact (the same flag
is written in many launches)."""


def clear_caches() -> None:
    """Forget the rejections and suggestions decided so far (a benchmark times them afresh)."""
    _JUDGED.clear()
    clear_word_caches()


def _judge(fact: Fact, target: Version, call: str | None, transformers: str = "") -> Rejection | None:
    known = known_args()
    if fact.kind == FactKind.ARG:
        if fact.name == "hf_overrides" and fact.value and (fact.resolved or fact.origin == "python"):
            found = architecture_rejection(overridden_architectures(fact.value), target, transformers)
            if found is not None:
                return found
        if fact.origin == "python":
            if not call:
                return None
            return _engine_rejection(fact, target, call) or value_rejection(fact, target, known)
        if fact.origin == "sampling":
            return _sampling_rejection(fact, target)
        return _flag_rejection(fact, target, known) or value_rejection(fact, target, known)
    if fact.kind == FactKind.IMPORT:
        return import_rejection(fact, target, known)
    if fact.kind == FactKind.LAUNCH:
        return launch_module_rejection(fact, target)
    if fact.kind == FactKind.METRIC:
        return _metric_rejection(fact, target)
    if fact.kind == FactKind.ENV_VAR:
        return _env_rejection(fact, target, known)
    if fact.kind == FactKind.ARCHITECTURE:
        return architecture_rejection([fact.name], target, transformers)
    if fact.kind == FactKind.RESPONSE_FIELD:
        return _response_rejection(fact, target)
    return None


_JUDGED_KINDS = frozenset(
    {FactKind.ARG, FactKind.LAUNCH, FactKind.IMPORT, FactKind.METRIC, FactKind.ENV_VAR, FactKind.ARCHITECTURE, FactKind.RESPONSE_FIELD}
)
"""The kinds of fact :func:`_judge` judges (it has nothing to say of any other)."""


RESPONSE_KINDS = {"chat": "response_fields", "completion": "completion_fields", "embedding": "embedding_fields"}
"""API (a ``response_field`` fact's ``value``) -> the kind of its response's fields."""
_RESPONSE_WHAT = {
    "response_fields": "field of a chat completion response",
    "completion_fields": "field of a completion response",
    "embedding_fields": "field of an embedding response",
}


def _response_rejection(fact: Fact, target: Version) -> Rejection | None:
    """A field of a response that ``target``'s server no longer returns: a warning (the
    client reads ``None`` or raises ``KeyError``/``AttributeError``; what it does next is the
    client's own). The fact's ``value`` names the API the file asks (``chat``, ``completion``,
    ``embedding``); with none, the field is judged against every response of ``target``: it
    is reported only when none of them returns it."""
    if not fact.resolved:
        return None  # the file does not say the response is a vLLM server's
    kinds = [RESPONSE_KINDS[fact.value]] if fact.value in RESPONSE_KINDS else list(RESPONSE_KINDS.values())
    histories = [h for h in (surface_history(k) for k in kinds) if h.covers(target)]
    if not histories or any(h.has(fact.name, target) for h in histories):
        return None
    lost = [h for h in histories if h.last_before(fact.name, target)]
    if not lost:
        return None
    fields = lost[0]
    words, _had = history_words(fields, fact.name, target, "a response field")
    return Rejection(
        RESPONSE_ID,
        Severity.WARNING,
        fact.name,
        _RESPONSE_WHAT[fields.kind] if fact.value in RESPONSE_KINDS else "field of a vLLM server's response",
        words,
        closest(fields.kind, fact.name, target),
        fields.ref(fact.name),
        fields.data_file,
    )


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
    backends = transformers_launches(facts)
    out: list[Finding] = []
    rules: dict[tuple[str, str, str, str, Severity], Rule] = {}
    entries: set[tuple[Location, str]] = set()  # modules run from another file, reported once each
    for fact in facts:
        if fact.kind not in _JUDGED_KINDS or (id(fact) in explained and fact.kind != FactKind.LAUNCH):
            continue  # a pack rule on a launch is about a default, never about the module it runs
        rejected = rejection(fact, versions.target, launches, backends)
        if rejected is None:
            continue
        if fact.kind == FactKind.LAUNCH and fact.entry_at is not None:
            # the module is written in another file (a KServe runtime's command): the
            # finding goes there, once however many launches append to it
            fact = replace(fact, location=fact.entry_at, spans=None, group=None)
            if (where := (fact.location, fact.name)) in entries:
                continue
            entries.add(where)
        key = (rejected.rule_id, rejected.subject, rejected.what, rejected.detail, rejected.severity)
        rule = rules.get(key)
        if rule is None:
            rule = rules[key] = surface_rule(rejected, versions.target)
        out.append(built_in_finding(rule, fact, versions))
    return out


def gone_subjects(rules: Iterable[tuple[object, Rule]], target: Version) -> frozenset[tuple[str, str]]:
    """``(match kind, name)`` of the metrics, modules, engine args, ``SamplingParams``
    fields and chat response fields that ``rules`` name, some release before ``target`` had and ``target`` does not:
    the rules that say how they went apply whatever the version in use (see
    :class:`~vllm_upgrade_check.matching.matcher.VersionContext`)."""
    out: set[tuple[str, str]] = set()
    for _pack, rule in rules:
        match = rule.match
        if match.kind == MatchKind.METRIC:
            history, names = surface_history("metrics"), [match.name, match.name + "_total"]
        elif match.kind == MatchKind.IMPORT and not getattr(match, "names", None):
            history, names = surface_history("modules"), [match.name]
        elif match.kind == MatchKind.RESPONSE_FIELD:
            history, names = surface_history("response_fields"), [match.name]  # the packs' rules are of chat
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
    backends = transformers_launches(facts)
    out = []
    for finding in findings:
        if finding.severity != Severity.BLOCKER and finding.fact.kind != FactKind.LAUNCH:
            rejected = rejection(finding.fact, target, launches, backends)
            if rejected is not None and rejected.severity.rank > finding.severity.rank:
                finding = replace(finding, severity=rejected.severity, deprecated_only=False)
        out.append(finding)
    return out
