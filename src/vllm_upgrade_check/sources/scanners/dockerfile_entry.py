"""A Dockerfile read with the script its ``ENTRYPOINT`` runs (:class:`LinkedDockerfileScanner`).

``COPY start.sh /start.sh`` + ``ENTRYPOINT ["/start.sh"]`` + ``CMD ["--swap-space", "4"]``,
with ``exec vllm serve "$MODEL" "$@"`` in ``start.sh``: the container launches vLLM with the
``CMD`` words. The script is parsed (:func:`~vllm_upgrade_check.parsing.shell.parse_shell`)
with those words as its positional parameters and the stage's ``ENV`` as its environment;
each vLLM launch that takes some of them is a launch of the Dockerfile, placed at its
``ENTRYPOINT``, whose flags are reported where the Dockerfile writes them (the script's own
words are the script's: the shell scanner reports them there).
"""

from __future__ import annotations

import posixpath
from collections.abc import Callable, Sequence
from dataclasses import replace

from vllm_upgrade_check.model.facts import Fact, FactKind
from vllm_upgrade_check.parsing.shell import Token, parse_shell
from vllm_upgrade_check.parsing.shell_flow import positional
from vllm_upgrade_check.sources.scanners.arg_facts import token_location
from vllm_upgrade_check.sources.scanners.base import SourceFile
from vllm_upgrade_check.sources.scanners.dockerfile import DockerfileScanner
from vllm_upgrade_check.sources.scanners.dockerfile_copies import EntryScript
from vllm_upgrade_check.sources.scanners.images import replaced_server_note
from vllm_upgrade_check.sources.scanners.shell import argv_facts
from vllm_upgrade_check.sources.scanners.vllm_argv import find_launch


class LinkedDockerfileScanner(DockerfileScanner):
    """The Dockerfile scanner, reading a Dockerfile again with the scripts its exec-form
    ``ENTRYPOINT`` runs (see the module docstring)."""

    def with_referenced(
        self, source: SourceFile, files: Sequence[str], read: Callable[[str], SourceFile | None]
    ) -> list[Fact] | None:
        """The Dockerfile's facts with the launches of its entry-point scripts; ``None``
        when no such script launches vLLM with the Dockerfile's words."""
        scripts: list[EntryScript] = []
        facts = [f for f in self.read(source, scripts) if isinstance(f, Fact)]
        linked: list[Fact] = []
        serving: set[str] = set()  # the notes of images whose entry point does run vLLM's server
        held = set(files)
        for entry in scripts:
            if entry.direct:
                continue  # the Dockerfile's own launch, read with it
            entry = in_context(entry, source.relpath, held)
            script = read(entry.path)
            if script is None or not (script.mentions_vllm() or passes_vllm(entry)):
                continue
            found = entry_launch_facts(entry, script, source.relpath, self.name)
            linked.extend(found)
            if found or launches_vllm(entry, script):
                serving.add(replaced_server_note(" ".join(t.text for t in entry.entry_words[:2]), "ENTRYPOINT"))
        if not serving:
            return None
        # the entry point does run vLLM's server (through the script): the image moves with it
        facts = [
            replace(f, spans=replace(f.spans, note="")) if f.kind == FactKind.IMAGE and f.spans and f.spans.note in serving else f
            for f in facts
        ]
        return [*facts, *linked]


def in_context(entry: EntryScript, dockerfile: str, files: set[str]) -> EntryScript:
    """``entry`` with the script found where the build context holds it. The context is taken
    to be the Dockerfile's folder (``docker build .`` beside it); when that folder has no
    such file, the nearest folder above it that does (``docker build -f docker/Dockerfile .``
    from the root, as compose's ``build: {context: ., dockerfile: docker/Dockerfile}`` and
    most CI steps run it). ``files``: every repository file's report path."""
    if entry.path in files or not entry.source:
        return entry
    folder = posixpath.dirname(dockerfile)
    while folder:
        folder = posixpath.dirname(folder)
        candidate = posixpath.normpath(posixpath.join(folder, entry.source))
        if not candidate.startswith("../") and candidate in files:
            return replace(entry, path=candidate)
    return entry


def passes_vllm(entry: EntryScript) -> bool:
    """Whether the arguments ``entry`` gives its script name vLLM: a script that sets up and
    then runs ``exec "$@"`` launches what the ``CMD`` (``["vllm", "serve", ...]``) says."""
    return any("vllm" in t.text.lower() for t in entry.args)


def launches_vllm(entry: EntryScript, script: SourceFile) -> bool:
    """Whether ``script``, run as ``entry`` runs it, launches vLLM at all (with words of its
    own only: a compose service's ``command`` may give it the rest)."""
    variables = {**entry.env, **positional(entry.args)}
    return any(find_launch(list(c.argv)) is not None for c in parse_shell(script.text, variables=variables).commands)


def entry_launch_facts(
    entry: EntryScript,
    script: SourceFile,
    path: str,
    scanner: str,
    reported: Sequence[Token] | None = None,
    syntax: str = "json",
    at: Token | None = None,
) -> list[Fact]:
    """The facts of each vLLM launch of ``script`` that takes some of ``entry``'s arguments
    (``"$@"``, ``$1``...) or ``ENV`` values: those words' facts at their place in file
    ``path``, and the launch placed at the ``ENTRYPOINT``, knowing every arg the launch sets.

    ``reported``: the words whose facts are told (default: the arguments and the ``ENV``
    values, all written in the Dockerfile ``path``); a compose service passes its
    ``command`` words, the others being written in another file. ``syntax``: how those
    words are written (see :func:`~.shell.argv_facts`); ``at``: where the launch is placed
    (default: the ``ENTRYPOINT``'s first word)."""
    given = list(reported) if reported is not None else [*entry.args, *(t for tokens in entry.env.values() for t in tokens)]
    ours = {(t.line, t.column, t.text) for t in given}
    heads = {(a, b, c.split("=", 1)[0]) for a, b, c in ours}
    variables = {**entry.env, **positional(entry.args)}
    place = at if at is not None else entry.entry
    out: list[Fact] = []
    for command in parse_shell(script.text, variables=variables).commands:
        argv = list(command.argv)
        if not any((t.line, t.column, t.text) in ours for t in argv) or find_launch(argv) is None:
            continue
        found = argv_facts(argv, path, scanner, entry.hint, syntax=syntax)
        group = f"{place.line}:{place.column}"
        for fact in found:
            loc = fact.location
            if fact.kind == FactKind.LAUNCH:
                out.append(replace(fact, location=token_location(path, place), group=group, spans=None))
            elif (loc.line, loc.column, (fact.raw or "").split("=", 1)[0]) in heads:
                out.append(replace(fact, group=group))
    return out
