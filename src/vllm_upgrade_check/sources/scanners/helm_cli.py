"""``helm install``/``upgrade``/``template`` command lines in shell scripts: the values files
they pass (``-f FILE``, ``--values FILE``, comma lists) override the chart's values, so the
flags and env vars written there deploy with the chart. Such a file counts when the chart is a
vLLM chart: a local chart directory whose ``values.yaml`` mentions vLLM, or a chart reference
that names vLLM (``vllm/vllm-stack``, ``oci://…/vllm-chart``)."""

from __future__ import annotations

import posixpath

from vllm_upgrade_check.parsing.shell import ShellScript, Token

_SUBCOMMANDS = frozenset({"install", "upgrade", "template"})
_VALUES = frozenset({"-f", "--values"})
_TAKES_VALUE = frozenset(
    "--set --set-string --set-file --set-json --set-literal -n --namespace --version --kube-context "
    "--kubeconfig --timeout -o --output --repo --username --password --post-renderer "
    "--post-renderer-args --description --ca-file --cert-file --key-file --keyring --history-max "
    "--registry-config --repository-cache --repository-config --burst-limit --qps -l --labels "
    "--name-template --kube-apiserver --kube-as-user --kube-as-group --kube-token --kube-ca-file "
    "--api-versions -a --show-only -s --output-dir --release-name".split()
)
"""helm options that take the next word as their value (helm v3 ``install``/``upgrade``/
``template --help``)."""


def helm_values_commands(script: ShellScript) -> list[tuple[str, list[str]]]:
    """``(chart, values files as written)`` of each ``helm install|upgrade|template`` command
    of ``script`` that passes values files; the chart is its last positional word."""
    out = []
    for command in script.commands:
        words = [t.text for t in command.argv]
        if len(words) < 3 or posixpath.basename(words[0]) != "helm" or words[1] not in _SUBCOMMANDS:
            continue
        positional: list[str] = []
        values: list[str] = []
        rest = iter(words[2:])
        for word in rest:
            name, eq, inline = word.partition("=")
            if name in _VALUES:
                given = inline if eq else next(rest, "")
                values.extend(v for v in given.split(",") if v)
            elif word.startswith("-f") and len(word) > 2 and not word.startswith("--"):
                values.extend(v for v in word[2:].split(",") if v)
            elif word.startswith("-"):
                if name in _TAKES_VALUE and not eq:
                    next(rest, None)
            else:
                positional.append(word)
        if values and positional:
            out.append((positional[-1], values))
    return out


_SETS = frozenset({"--set", "--set-string"})
TAG_KEYS = ("image.tag",)
"""The values a ``--set`` may give that name the release of a chart's vLLM image."""


def helm_set_tags(script: ShellScript) -> list[tuple[str, Token, int, int]]:
    """``(chart, word, start, end)`` of each ``--set image.tag=TAG`` (or ``--set-string``,
    ``--set=...``, in a comma list) of a ``helm install|upgrade|template`` command of
    ``script``: ``word.text[start:end]`` is the tag. A ``--set`` overrides every values file,
    so the tag is the release the command deploys. Tags the script does not resolve are left out."""
    out: list[tuple[str, Token, int, int]] = []
    for command in script.commands:
        argv = list(command.argv)
        words = [t.text for t in argv]
        if len(words) < 3 or posixpath.basename(words[0]) != "helm" or words[1] not in _SUBCOMMANDS:
            continue
        positional: list[str] = []
        found: list[tuple[Token, int, int]] = []
        i = 2
        while i < len(words):
            word = words[i]
            name, eq, inline = word.partition("=")
            if name in _SETS:
                token, base = (argv[i], len(name) + 1) if eq else (argv[i + 1] if i + 1 < len(argv) else None, 0)
                given = inline if eq else (words[i + 1] if i + 1 < len(words) else "")
                if token is not None and token.resolved:
                    offset = base
                    for part in given.split(","):
                        key, has, value = part.partition("=")
                        if has and key.strip() in TAG_KEYS and value and "$" not in value:
                            start = offset + len(key) + 1
                            found.append((token, start, start + len(value)))
                        offset += len(part) + 1
                i += 1 if eq else 2
                continue
            if word.startswith("-"):
                i += 2 if name in _TAKES_VALUE | _VALUES and not eq else 1
                continue
            positional.append(word)
            i += 1
        if positional:
            out.extend((positional[-1], token, start, end) for token, start, end in found)
    return out


def may_pass_helm_values(text: str) -> bool:
    """A cheap test: ``helm`` and a values option (``-f``, ``--values``, ``--set``) appear in ``text``."""
    return "helm" in text and ("-f" in text or "--values" in text or "--set" in text)
