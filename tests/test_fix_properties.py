"""Properties of ``fix`` on launch lines built from the real flag surface.

For any ``vllm serve`` launch made of flags vLLM 0.26.0 accepts (each with as many value
words as its parser takes), the served model in any position a positional may take, and
some flags 0.27.0/0.28.0 removed, written as a shell line (one line or continued), a YAML
block or flow list, a JSON exec array or a compose command string:

- ``fix`` never removes the model, nor any flag it was not asked to remove;
- every file it writes still parses (the scan skips none), and nothing fixable is left;
- ``fix --diff`` shows exactly what ``fix`` writes.
"""

from __future__ import annotations

import json
import shlex
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from packaging.version import Version

from vllm_upgrade_check.engine import run_scan
from vllm_upgrade_check.engine.diff import diff_paths
from vllm_upgrade_check.engine.fix import fix_paths
from vllm_upgrade_check.knowledge.known_args import known_args
from vllm_upgrade_check.knowledge.registry import load_registry
from vllm_upgrade_check.model.facts import Fact, FactKind
from vllm_upgrade_check.model.options import ScanOptions

FROM, TO = "0.26.0", "0.28.0"
REMOVED = ["--max-num-partial-prefills", "--max-long-partial-prefills", "--override-attention-dtype"]
"""Flags 0.27.0 or 0.28.0 removed that take one value (their rules remove them, safely)."""
REMOVED_SWITCHES = ["--calculate-kv-scales", "--no-calculate-kv-scales"]
"""A switch 0.28.0 removed (and its --no- form)."""


def _touched() -> set[str]:
    """Names (``max_model_len``) of the engine args and CLI flags a bundled pack rule matches."""
    kinds = ("engine_arg", "cli_flag")
    return {
        r.match.name.lstrip("-").replace("-", "_") for _p, r in load_registry([]).rules() if r.match.kind.value in kinds
    }


def _kept_flags() -> dict[str, str]:
    """Flags 0.26.0 and 0.28.0 both accept, by arity (0, 1 or +), none a rule touches."""
    known = known_args()
    touched = _touched()
    out = {}
    for flag, (first, last, _ref) in known.flags.items():
        if not flag.startswith("--") or flag in ("--model", "--config", "--help") or "config" in flag:
            continue
        if flag[2:].replace("-", "_") in touched or flag.removeprefix("--no-").replace("-", "_") in touched:
            continue
        if not Version(first) <= Version(FROM) or Version(last) < Version(TO) or flag in REMOVED + REMOVED_SWITCHES:
            continue
        if not (known.defines(flag, Version(FROM)) and known.defines(flag, Version(TO))):
            continue  # missing from one of them (--disable-log-requests: 0.17.0-0.32.0)
        old, _ = known.arity(flag, Version(FROM))
        new, _ = known.arity(flag, Version(TO))
        if old == new and old in ("0", "1", "+"):
            out[flag] = old
    return out


KEPT = _kept_flags()
SAFE_FLAGS = sorted(f for f, takes in KEPT.items() if takes in ("0", "1"))[:400]
VALUE = st.sampled_from(["8", "0.9", "auto", "acme/x", "float16", "4096"])


@st.composite
def launch(draw: st.DrawFn) -> tuple[list[str], list[str]]:
    """``(argv after 'vllm serve', flags that must survive)``: groups of a flag and its
    values, the model placed between groups."""
    groups: list[list[str]] = []
    kept: list[str] = []
    for _ in range(draw(st.integers(1, 6))):
        if draw(st.booleans()):
            flag = draw(st.sampled_from(SAFE_FLAGS))
            kept.append(flag)
            groups.append([flag] + ([draw(VALUE)] if KEPT[flag] == "1" else []))
        elif draw(st.booleans()):
            groups.append([draw(st.sampled_from(REMOVED)), draw(VALUE)])
        else:
            groups.append([draw(st.sampled_from(REMOVED_SWITCHES))])
    at = draw(st.integers(0, len(groups)))
    # The model may only follow a group that takes no more words (not a "+" flag).
    groups.insert(at, ["acme/tiny-judge-1b"])
    return [word for group in groups for word in group], kept


def _render(kind: str, argv: list[str], continued: bool) -> tuple[str, str]:
    """``(file name, text)`` of a launch of ``argv`` written as ``kind``."""
    if kind == "shell":
        words = ["vllm", "serve", *argv]
        sep = " \\\n  " if continued else " "
        return "serve.sh", sep.join(shlex.quote(w) for w in words) + "\n"
    if kind == "yaml-block":
        items = "".join(f"            - {json.dumps(w)}\n" for w in argv)
        return "pod.yaml", (
            "apiVersion: v1\nkind: Pod\nmetadata:\n  name: x\nspec:\n  containers:\n"
            f"    - name: v\n      image: vllm/vllm-openai:v{FROM}\n      command: [vllm, serve]\n"
            f"      args:\n{items}".replace("            -", "        -")
        )
    if kind == "yaml-flow":
        return "pod.yaml", (
            "apiVersion: v1\nkind: Pod\nmetadata: {name: x}\nspec:\n  containers:\n"
            f"    - name: v\n      image: vllm/vllm-openai:v{FROM}\n      command: [vllm, serve]\n"
            f"      args: [{', '.join(json.dumps(w) for w in argv)}]\n"
        )
    if kind == "json":
        sep = ", \\\n    " if continued else ", "
        return "Dockerfile", f"FROM vllm/vllm-openai:v{FROM}\nCMD [{sep.join(json.dumps(w) for w in argv)}]\n"
    command = " ".join(shlex.quote(w) for w in argv).replace('"', '\\"')
    return "docker-compose.yaml", (
        f'services:\n  engine:\n    image: vllm/vllm-openai:v{FROM}\n    command: "{command}"\n'
    )


def _facts(root: Path) -> tuple[list[Fact], int]:
    facts: list[Fact] = []
    report = run_scan(ScanOptions.of(paths=[root], to_version=TO, from_version=FROM), facts_out=facts)
    return facts, len(report.skipped)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    launch(),
    st.sampled_from(["shell", "yaml-block", "yaml-flow", "json", "compose"]),
    st.booleans(),
)
def test_fix_keeps_the_model_and_every_other_flag_and_writes_what_parses(
    built: tuple[list[str], list[str]], kind: str, continued: bool
) -> None:
    argv, kept = built
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        name, text = _render(kind, argv, continued)
        (root / name).write_text(text)
        options = ScanOptions.of(paths=[root], to_version=TO, from_version=FROM)
        diff, _ = diff_paths(options, unsafe=True, bump=False)
        assert (root / name).read_text() == text  # --diff writes nothing
        result = fix_paths(options, unsafe=True, bump=False)
        assert not result.errors and not result.not_written, (text, result.not_written)
        after = (root / name).read_text()
        facts, skipped = _facts(root)
        assert skipped == 0, after
        models = [f.name for f in facts if f.kind == FactKind.MODEL]
        assert models == ["acme/tiny-judge-1b"], (text, after)
        flags = [f.raw for f in facts if f.kind == FactKind.ARG]
        for flag in kept:
            assert flag in flags, (flag, text, after)
        assert not any(f in flags for f in REMOVED + REMOVED_SWITCHES), (text, after)
        # What --diff showed is what fix wrote.
        (root / name).write_text(text)
        redo = fix_paths(options, unsafe=True, bump=False)
        assert (root / name).read_text() == after and len(redo.applied) == len(result.applied)
        assert (diff == b"") == (after == text)
