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
from dataclasses import dataclass, replace

from packaging.version import Version

from vllm_upgrade_check.knowledge.known_args import DATA_FILE, KnownArgs, known_args
from vllm_upgrade_check.knowledge.surface import NameHistory, surface_history
from vllm_upgrade_check.matching.checks import built_in_finding
from vllm_upgrade_check.matching.matcher import VersionContext
from vllm_upgrade_check.model.facts import Fact, FactKind
from vllm_upgrade_check.model.findings import Finding
from vllm_upgrade_check.model.pack import (
    Applicability,
    CliFlagMatch,
    Docs,
    EngineArgMatch,
    EnvVarMatch,
    Fix,
    FixAction,
    ImportMatch,
    Match,
    MatchKind,
    MetricMatch,
    Rule,
    Severity,
    WheelEvidence,
)

FLAG_ID = "VUC000-003"
ENGINE_ARG_ID = "VUC000-004"
SAMPLING_ID = "VUC000-005"
IMPORT_ID = "VUC000-006"
METRIC_ID = "VUC000-007"
ENV_VAR_ID = "VUC000-008"
VALUE_ID = "VUC000-009"
SURFACE_IDS = (FLAG_ID, ENGINE_ARG_ID, SAMPLING_ID, IMPORT_ID, METRIC_ID, ENV_VAR_ID, VALUE_ID)
"""Ids of the built-in surface rules, in order."""

_ENGINE_CALLS = {
    "LLM(...)": "LLM",
    "EngineArgs(...)": "EngineArgs",
    "AsyncEngineArgs(...)": "AsyncEngineArgs",
}
_VALUE_KINDS = {"quantization": "quantization_methods", "load_format": "load_formats"}
_SERIES = ("_total", "_bucket", "_sum", "_count", "_created")


@dataclass(frozen=True)
class Rejection:
    """What the target does with one fact it does not have.

    Attributes:
        rule_id: the built-in rule (one of :data:`SURFACE_IDS`).
        severity: what it means at the target.
        subject: the thing as the user wrote it (``--swap-space``, ``vllm:gpu_cache_usage_perc``).
        what: the kind of thing, in words (``flag``, ``keyword of LLM(...)``).
        detail: the history, in words (``last in 0.17.1, removed in 0.18.0``).
        suggestion: the closest thing the target has, or ``None``.
        ref: the wheel file that defined it in the newest release that had it, or ``None``.
        data_file: where the history was read from (package-relative).
    """

    rule_id: str
    severity: Severity
    subject: str
    what: str
    detail: str
    suggestion: str | None
    ref: str | None
    data_file: str


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
        known.closest(flag, target),
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
    suggestion = engine.closest(name, target)
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
        sampling.closest(name, target),
        sampling.ref(name),
        sampling.data_file,
    )


def _import_rejection(fact: Fact, target: Version, known: KnownArgs) -> Rejection | None:
    modules = surface_history("modules")
    if not modules.covers(target):
        return None
    module = fact.name
    if not modules.has(module, target):
        words, had = _history_words(modules, module, target, "a module")
        return Rejection(
            IMPORT_ID,
            Severity.BLOCKER if had else Severity.WARNING,
            module,
            "module",
            words,
            None,
            modules.ref(module) if had else None,
            modules.data_file,
        )
    name = fact.value
    if not name:
        return None
    submodule = f"{module}.{name}"
    if modules.known(submodule) and not modules.has(submodule, target):
        words, had = _history_words(modules, submodule, target, "a module")
        return Rejection(
            IMPORT_ID,
            Severity.BLOCKER,
            submodule,
            "module",
            words,
            None,
            modules.ref(submodule),
            modules.data_file,
        )
    if module == "vllm.envs" and name in known.env_vars and known.covers(target):
        first, last, gaps = known.env_vars[name]
        if name in known.env_gone_by(target) or first > target:
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
        metrics.closest(written, target) or metrics.closest(fact.name, target),
        metrics.ref(had_names[0]) if had_names else None,
        metrics.data_file,
    )


def _env_rejection(fact: Fact, target: Version, known: KnownArgs) -> Rejection | None:
    if fact.name not in known.env_vars or fact.name not in known.env_gone_by(target):
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
        history.closest(value, target),
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
    known = known_args()
    if fact.kind == FactKind.ARG:
        if fact.origin == "python":
            call = _call_of(fact, launches or {})
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


_MATCH: dict[str, type[Match]] = {
    FLAG_ID: CliFlagMatch,
    ENGINE_ARG_ID: EngineArgMatch,
    SAMPLING_ID: EngineArgMatch,
    IMPORT_ID: ImportMatch,
    METRIC_ID: MetricMatch,
    ENV_VAR_ID: EnvVarMatch,
    VALUE_ID: CliFlagMatch,
}
_KIND: dict[str, MatchKind] = {
    FLAG_ID: MatchKind.CLI_FLAG,
    ENGINE_ARG_ID: MatchKind.ENGINE_ARG,
    SAMPLING_ID: MatchKind.ENGINE_ARG,
    IMPORT_ID: MatchKind.IMPORT,
    METRIC_ID: MatchKind.METRIC,
    ENV_VAR_ID: MatchKind.ENV_VAR,
    VALUE_ID: MatchKind.CLI_FLAG,
}
_NAMES = {
    FLAG_ID: "flag-not-in-target",
    ENGINE_ARG_ID: "engine-arg-not-in-target",
    SAMPLING_ID: "sampling-param-not-in-target",
    IMPORT_ID: "import-not-in-target",
    METRIC_ID: "metric-not-exported-by-target",
    ENV_VAR_ID: "env-var-not-read-by-target",
    VALUE_ID: "value-not-accepted-by-target",
}
_DOCS = {
    FLAG_ID: Docs(
        why="vLLM's argument parser rejects a flag it does not define, so `vllm serve` exits before it starts; "
        "a key of a --config file is read as the same flag.",
        example="vllm serve my-model --disable-frontend-multiprocessing   # at 0.28.0",
        instead="vllm serve my-model",
    ),
    ENGINE_ARG_ID: Docs(
        why="LLM(...), EngineArgs(...) and AsyncEngineArgs(...) pass their keywords to the EngineArgs dataclass, "
        "which raises TypeError for a field it does not have (LLM(...) of some releases drops a few with a warning).",
        example="EngineArgs(model='m', swap_space=4)   # at 0.28.0",
        instead="EngineArgs(model='m')",
    ),
    SAMPLING_ID: Docs(
        why="SamplingParams raises TypeError for a keyword that is not one of its fields.",
        example="SamplingParams(temperature=0.2, use_beam_search=True)",
        instead="SamplingParams(temperature=0.2)",
    ),
    IMPORT_ID: Docs(
        why="An import of a module the target's wheel no longer ships raises ImportError, and reading an env var "
        "vllm.envs no longer defines raises AttributeError, when the program starts.",
        example="from vllm.entrypoints.openai.protocol import ChatCompletionRequest   # at 0.15.0",
        instead="Import it from the module that holds it in the target release.",
    ),
    METRIC_ID: Docs(
        why="A metric the target does not export makes an alert that can never fire again, and an empty panel or "
        "scrape; vLLM's metric names are read from each release's wheel.",
        example="expr: vllm:gpu_cache_usage_perc > 0.9",
        instead="expr: vllm:kv_cache_usage_perc > 0.9",
    ),
    ENV_VAR_ID: Docs(
        why="vLLM reads only the env vars its vllm/envs.py registers; one it no longer reads is silently ignored.",
        example="export VLLM_USE_V1=1   # at a release that no longer reads it",
        instead="Remove it, or use the flag that replaced it.",
    ),
    VALUE_ID: Docs(
        why="A value argparse does not accept (choices), or a quantization method or load format the target does "
        "not register, stops vllm serve at start-up.",
        example="vllm serve my-model --quantization deepspeedfp   # at 0.28.0",
        instead="A value the target accepts.",
    ),
}


def surface_rule(rejected: Rejection, target: Version) -> Rule:
    """The built-in rule of one rejection, with its message, fix text and evidence."""
    hint = f"; did you mean {rejected.suggestion}?" if rejected.suggestion else ""
    where = rejected.ref or ("vllm/envs.py" if rejected.rule_id == ENV_VAR_ID else "vllm/")
    path, _, line = where.partition(":")
    match = _MATCH[rejected.rule_id].model_construct(kind=_KIND[rejected.rule_id], name=rejected.subject)
    # Built without validation: the name is the thing as written, which a pack's checks refuse.
    return Rule.model_construct(
        id=rejected.rule_id,
        name=_NAMES[rejected.rule_id],
        severity=rejected.severity,
        match=match,
        message=f"{rejected.subject} ({rejected.what}) is not in vLLM {target}: {rejected.detail}{hint}",
        fix=Fix(
            summary=f"Use {rejected.suggestion}."
            if rejected.suggestion
            else f"Remove or replace {rejected.subject}.",
            action=FixAction.NONE,
            applicability=Applicability.DISPLAY_ONLY,
        ),
        docs=_DOCS[rejected.rule_id],
        evidence=[
            WheelEvidence(
                kind="wheel",
                release=str(target),
                path=path if path.endswith((".py", "/")) else "vllm/",
                line=int(line) if line.isdigit() else None,
                finding=f"{rejected.detail}, as read from the wheels into vllm_upgrade_check/{rejected.data_file}",
            )
        ],
        tags=["target-surface"],
    )


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
            if rejected is not None and rejected.severity == Severity.BLOCKER:
                finding = replace(finding, severity=Severity.BLOCKER, deprecated_only=False)
        out.append(finding)
    return out


_GENERIC = {
    FLAG_ID: (
        "a CLI flag or --config key",
        "the flag was defined by another release than the target",
        DATA_FILE,
    ),
    ENGINE_ARG_ID: (
        "a keyword of LLM/EngineArgs/AsyncEngineArgs",
        "the target's EngineArgs has no such field",
        "data/surface/history.json",
    ),
    SAMPLING_ID: (
        "a keyword of SamplingParams",
        "the target's SamplingParams has no such field",
        "data/surface/history.json",
    ),
    IMPORT_ID: (
        "an imported vLLM module or vllm.envs attribute",
        "the target's wheel has no such module",
        "data/surface/modules.json",
    ),
    METRIC_ID: ("a vllm: metric", "the target does not export it", "data/surface/history.json"),
    ENV_VAR_ID: ("a VLLM_ env var", "the target's vllm/envs.py no longer reads it", DATA_FILE),
    VALUE_ID: (
        "a flag value",
        "the target's parser or registry does not accept it",
        "data/surface/history.json",
    ),
}


def documented_surface_rule(rule_id: str) -> Rule:
    """The built-in rule ``rule_id`` as ``explain`` shows it (no particular fact), judged
    against the newest release the data covers."""
    subject, detail, data_file = _GENERIC[rule_id]
    severity = Severity.WARNING if rule_id == ENV_VAR_ID else Severity.BLOCKER
    target = known_args().newest or Version("0")
    rule = surface_rule(
        Rejection(rule_id, severity, subject, "any release", detail, None, None, data_file), target
    )
    message = (
        f"{subject[0].upper()}{subject[1:]} that the target release does not have: {detail} "
        "(checked against the target whatever the version in use)"
    )
    return rule.model_copy(update={"message": message})
