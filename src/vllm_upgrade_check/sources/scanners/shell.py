"""Shell launch scripts: ``vllm serve``, ``python -m vllm.entrypoints...``, ``docker run``
of a vLLM image, ``pip install`` lines, and the environment variables set for vLLM
(``export``, ``VAR=1 cmd``).

Parsed with tree-sitter-bash (see :mod:`vllm_upgrade_check.parsing.shell`); comments are never
launches. The helpers here also serve every other place that holds shell text (Dockerfile
``RUN``/``CMD``, compose ``command``, ``sh -c`` in Kubernetes).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, MutableMapping, Sequence
from dataclasses import replace

from vllm_upgrade_check.model.facts import CUT_NOTE, Fact, FactKind, Skipped, Span, Spans
from vllm_upgrade_check.parsing.shell import Cut, Locator, ShellScript, Sourced, Token, parse_shell
from vllm_upgrade_check.sources.scanners.arg_facts import env_fact
from vllm_upgrade_check.sources.scanners.base import (
    FileReference,
    Scanner,
    SourceFile,
    SpanIndex,
    shared_words,
)
from vllm_upgrade_check.sources.scanners.compose_cli import compose_chains, may_run_compose
from vllm_upgrade_check.sources.scanners.helm_cli import (
    helm_set_args,
    helm_set_tags,
    helm_values_commands,
    may_pass_helm_values,
)
from vllm_upgrade_check.sources.scanners.images import image_fact, replaced_server_note
from vllm_upgrade_check.sources.scanners.requirements import pip_install_facts
from vllm_upgrade_check.sources.scanners.ssh import ssh_remote_command
from vllm_upgrade_check.sources.scanners.vllm_argv import (
    find_launch,
    launch_facts,
    other_program_image,
    strip_wrappers,
    unknown_image_launch,
)

SHELL_SUFFIXES = (".sh", ".bash", ".zsh", ".ksh", ".envrc")
NOT_SCRIPT_SUFFIXES = frozenset(
    "py pyi pyc md rst txt json jsonl yaml yml toml ini cfg conf lock js mjs cjs ts tsx jsx go rs java "
    "kt c h cc cpp hpp cs rb php html htm css scss svg png jpg jpeg gif ico pdf zip gz tgz tar whl "
    "so o a ipynb csv tsv xml proto sql tf tfvars hcl mod sum gradle properties log".split()
)
"""Suffixes of files that are never shell scripts, whatever their first line (not read)."""
_SHELLS = frozenset({"sh", "bash", "zsh", "ksh", "dash"})

Relocate = Callable[[Token], Token]
"""Maps a token parsed from embedded text to its real position in the file."""


def compose_references(script: ShellScript, scanner: str) -> Iterator[FileReference]:
    """One :class:`~.base.FileReference` per compose file a ``docker compose -f`` command of
    ``script`` names: the file is then read again with the project they make
    (:func:`~.compose_project.linked_chain_facts`)."""
    for chain in compose_chains(script):
        for named in chain:
            yield FileReference(named.written, scanner)


def is_env_name(name: str) -> bool:
    """``True`` for names that look like environment variables (``VLLM_USE_V1``)."""
    return bool(name) and name.upper() == name and (name[0].isalpha() or name[0] == "_")


def _substitutes(token: Token) -> bool:
    written = token.written or ""
    return "$(" in written or "`" in written or "<(" in written


def shell_facts(
    text: str,
    path: str | None,
    scanner: str,
    locate: Locator | None = None,
    variables: MutableMapping[str, list[Token]] | None = None,
    hint: tuple[str, str] | None = None,
    relocate: Relocate | None = None,
    sourced: Sourced | None = None,
    files: Sourced | None = None,
    environment: Mapping[str, list[Token]] | None = None,
    alternatives: Mapping[str, list[list[Token]]] | None = None,
) -> tuple[list[Fact], ShellScript]:
    """Facts of every vLLM launch and ``pip install`` in shell ``text``, and the env vars set.

    Env var facts come from ``export``, command prefixes of a vLLM launch
    (``VLLM_X=1 vllm serve``) and plain assignments of ``VLLM_*`` names.

    Args:
        text: shell source.
        path: file path for locations.
        scanner: calling scanner's name.
        locate: position mapping for embedded text (see :func:`parse_shell`).
        variables: variables known beforehand (updated with the text's assignments).
        hint: ``(version, source)`` of the vLLM version these launches run, if known.
        relocate: applied to every token after parsing (for text whose positions are found
            by searching the file, e.g. folded YAML scalars).
        sourced: reads the files ``source FILE`` names (see :func:`parse_shell`).
        files: reads the files ``$(cat FILE)`` names (see :func:`parse_shell`).
        environment: the exported variables the commands run with (a systemd unit's
            ``Environment=``): what a ``bash -c 'SCRIPT'`` command's script starts with.
        alternatives: variables that hold one of several values (see :func:`parse_shell`).

    Returns:
        ``(facts, parsed script)``.
    """
    script = parse_shell(text, locate, variables, sourced, files=files, alternatives=alternatives)
    move = relocate or (lambda token: token)
    facts: list[Fact] = []
    for assignment in script.assignments:
        if assignment.prefix or not is_env_name(assignment.name):
            continue
        if assignment.exported or assignment.name.startswith("VLLM_"):
            where = move(Token(assignment.name, assignment.line, assignment.column))
            facts.append(env_fact(assignment.name, assignment.value, path, where.line, where.column, scanner))
    others: list[tuple[Span, str]] = []  # words other programs read too, with who reads them
    holders: list[Span] = []  # words holding $(...): the commands inside are part of them
    for command in script.commands:
        argv = [move(t) for t in command.argv]
        prefix = [move(Token(a.name, a.line, a.column, True, f"{a.name}={a.value}")) for a in command.prefix]
        found = argv_facts(
            argv, path, scanner, hint, prefix_env=prefix, values={a.name: a.value for a in command.prefix},
            variables=environment,
        )
        if not any(f.kind == FactKind.LAUNCH for f in found) and argv:
            who = f"{argv[0].text} (line {command.line})"
            # a word holding $(...) runs its own commands: those are not this command's words
            others.extend((t.span, who) for t in argv if t.span is not None and not _substitutes(t))
        holders.extend(t.span for t in argv if t.span is not None and _substitutes(t))
        if command.cut is not None:
            found = [_cut(f, command.cut, move) if f.kind == FactKind.LAUNCH else f for f in found]
        if command.variant:  # the same launch read again (another branch's value, another call)
            found = [replace(f, group=f"{f.group}#{command.variant}") if f.group else f for f in found]
        facts.extend(found)
    # `--chat-template $(cat tpl)`: cat's words are inside the launch's word; removing that
    # word removes the cat call with it, so cat reads nothing a fix would change.
    if holders:
        held = SpanIndex([(h, True) for h in holders])
        others = [(span, who) for span, who in others if not held.contains(span)]
    return shared_words(facts, others), script


_CUT_WORDS = 120
"""Characters of the words a comment cuts off that a launch's note keeps."""


def _cut(launch: Fact, cut: Cut, move: Relocate) -> Fact:
    """``launch`` with the :data:`~vllm_upgrade_check.model.facts.CUT_NOTE` of the comment
    that ends it (kept with the launch's other spans)."""
    where = move(Token("#", cut.line, cut.column))
    words = " ".join(t.written or t.text for t in cut.words)
    if len(words) > _CUT_WORDS:
        words = words[: _CUT_WORDS - 1] + "…"
    note = f"{CUT_NOTE}{where.line}:{where.column} {words}"
    return replace(launch, spans=replace(launch.spans, note=note) if launch.spans else Spans(note=note))


def argv_facts(
    argv: Sequence[Token],
    path: str | None,
    scanner: str,
    hint: tuple[str, str] | None = None,
    prefix_env: Sequence[Token] = (),
    values: dict[str, str] | None = None,
    syntax: str = "shell",
    variables: Mapping[str, list[Token]] | None = None,
) -> list[Fact]:
    """Facts of one command's argv: a vLLM launch, a ``pip install``, or ``sh -c 'TEXT'``
    (TEXT parsed as shell, its positions inside the argument), or the command an ``ssh``
    runs on the remote host (:mod:`.ssh`). ``syntax``: what the argv
    is written in (``shell``, or ``yaml``/``json``/``python`` for a list); ``variables``:
    the environment an ``sh -c`` script starts with (a Dockerfile stage's ``ENV``), not
    changed. A shell behind a wrapper (``env bash -c``, ``exec sh -c``, ``tini -- sh -c``)
    is read the same. A here-document a shell reads as its script is read by the parser
    (:func:`~vllm_upgrade_check.parsing.shell.parse_shell`), with the commands around it."""
    shell = strip_wrappers(argv)[0] if argv and argv[0].text.rsplit("/", 1)[-1] not in _SHELLS else list(argv)
    if (
        len(shell) >= 3
        and shell[0].text.rsplit("/", 1)[-1] in _SHELLS
        and shell[1].text.startswith("-")
        and "c" in shell[1].text
    ):
        return _script_facts(shell[2], path, scanner, hint, variables)
    remote = ssh_remote_command(argv)
    if remote is not None:
        # the remote host's shell runs the words after the destination (:mod:`.ssh`)
        if len(remote) == 1:
            return _script_facts(remote[0], path, scanner, hint, variables)
        return argv_facts(remote, path, scanner, hint, syntax=syntax, variables=variables)
    launch = find_launch(argv)
    if launch is None:
        other = other_program_image(argv)
        if other is not None:
            image, program = other
            note = replaced_server_note(program, "--entrypoint")
            return [image_fact(image, path, scanner, note=note, syntax=syntax)]
        unknown = unknown_image_launch(argv, path, scanner)
        if unknown is not None:
            return [unknown]
        return list(pip_install_facts(argv, path, scanner))
    facts = [
        env_fact(t.text, (values or {}).get(t.text), path, t.line, t.column, scanner, raw=t.written)
        for t in prefix_env
    ]
    facts.extend(launch_facts(launch, path, scanner, hint, syntax))
    return facts


def _script_facts(
    script_token: Token,
    path: str | None,
    scanner: str,
    hint: tuple[str, str] | None,
    variables: Mapping[str, list[Token]] | None,
) -> list[Fact]:
    """Facts of a shell script written as one word (``sh -c 'TEXT'``, ``ssh host 'TEXT'``),
    its positions inside the word (:func:`_inner_locator`)."""
    inner = _inner_locator(script_token)
    known = dict(variables) if variables else None
    if known:
        # a variable's words are placed where the variable is set, not in the argument
        theirs = {(t.line, t.column, t.text) for tokens in known.values() for t in tokens}
        within = inner

        def inner(token: Token) -> Token:
            return token if (token.line, token.column, token.text) in theirs else within(token)

    facts, _ = shell_facts(script_token.text, path, scanner, variables=known, hint=hint, relocate=inner)
    return facts


def _inner_locator(token: Token) -> Relocate:
    """Positions inside an ``sh -c`` argument: offset from where the argument is written.
    When the argument is written as its text (bare, or in one pair of quotes with nothing
    escaped) every position maps exactly, spans included; otherwise the inner words are
    placed without spans (a fix then leaves them to a person)."""
    written = token.written or token.text
    quote = 1 if written[:1] in ("'", '"') else 0
    exact = token.span is not None and (written == token.text or (quote and written[1:-1] == token.text))
    # The span starts at the quote wherever the word comes from (a shell word, a JSON or
    # YAML list item, whose column is inside the quote).
    base_col = (token.span.column if token.span is not None else token.column) + quote

    base_line = token.span.line if token.span is not None else token.line

    def point(p: tuple[int, int]) -> tuple[int, int]:
        return (base_line, base_col + p[1] - 1) if p[0] == 1 else (base_line + p[0] - 1, p[1])

    offsets = None if exact else written_offsets(written, token.text)
    starts = [0] + [i + 1 for i, c in enumerate(token.text) if c == "\n"]

    def placed(p: tuple[int, int]) -> tuple[int, int]:
        # through the escapes (``"...\\<newline>..."``): where the character is written
        if offsets is not None and 1 <= p[0] <= len(starts):
            at = starts[p[0] - 1] + p[1] - 1
            if 0 <= at < len(offsets):
                w = offsets[at]
                before = written.rfind("\n", 0, w)
                if before < 0:
                    return base_line, base_col - quote + w
                return base_line + written.count("\n", 0, w), w - before
        return point(p)

    def move(inner: Token) -> Token:
        if exact:
            return inner.moved(point)
        line, column = placed((inner.line, inner.column))
        return replace(inner.unplaced(), line=line, column=column)

    return move


def written_offsets(written: str, text: str) -> list[int] | None:
    """For each character of ``text``, its index in ``written``, the shell word it is read
    from (bare, ``'...'``, or ``"..."`` whose backslashes escape ``$ ` " \\`` and remove a
    line break, as bash reads them); ``None`` when ``written`` does not read as ``text``
    that way (an expansion, another syntax's escapes)."""
    if written == text:
        return list(range(len(text)))
    if len(written) < 2 or written[0] != written[-1] or written[0] not in "'\"":
        return None
    if written[0] == "'":
        return list(range(1, len(written) - 1)) if written[1:-1] == text else None
    out: list[int] = []
    i, end = 1, len(written) - 1
    while i < end:
        if written[i] == "\\" and i + 1 < end and written[i + 1] in '$`"\\\n':
            if written[i + 1] != "\n":
                out.append(i + 1)
            i += 2
            continue
        out.append(i)
        i += 1
    return out if "".join(written[j] for j in out) == text else None


class ShellScanner(Scanner):
    """Shell scripts (``*.sh``, ``*.bash``, or a shell shebang)."""

    name = "shell"

    def accepts(self, source: SourceFile) -> bool:
        if source.name.endswith(SHELL_SUFFIXES):
            return True
        first = source.text[:200].split("\n", 1)[0]
        if not first.startswith("#!"):
            return False
        words = first[2:].split()
        return bool(words) and (words[-1] in _SHELLS or words[0].rsplit("/", 1)[-1] in _SHELLS)

    def accepts_name(self, name: str) -> bool | None:
        if name.endswith(SHELL_SUFFIXES):
            return True
        suffix = name.rpartition(".")[2].lower() if "." in name.lstrip(".") else ""
        return False if suffix in NOT_SCRIPT_SUFFIXES else None

    def scan(self, source: SourceFile) -> Iterator[Fact | Skipped | FileReference]:
        if not source.mentions_vllm():
            if may_pass_helm_values(source.text):  # values files of a vLLM chart (:mod:`.helm_cli`)
                yield from self._helm_values(source)
            if may_run_compose(source.text):  # compose files merged by -f (:mod:`.compose_cli`)
                yield from compose_references(parse_shell(source.text), self.name)
            return
        facts, script = shell_facts(source.text, source.relpath, self.name)
        yield from facts
        for written in dict.fromkeys([*script.sourced, *script.substituted]):  # read again with them
            yield FileReference(written, self.name)
        if may_pass_helm_values(source.text):
            yield from self._helm_values(source, script)
        if may_run_compose(source.text):
            yield from compose_references(script, self.name)
        if script.has_error:
            yield Skipped(
                source.relpath,
                f"shell syntax error at line {script.error_line}: the file was only partly read",
                configures_vllm=True,
                line=script.error_line,
            )

    def _helm_values(self, source: SourceFile, script: ShellScript | None = None) -> Iterator[FileReference]:
        """One :class:`~.base.FileReference` per values file a helm command passes: the
        engine then reads this script again with the files it names (:meth:`with_referenced`)."""
        if script is None:
            script = parse_shell(source.text)
        for _chart, values in helm_values_commands(script):
            for written in values:
                yield FileReference(written, self.name)
        for chart, _token, _start, _end in helm_set_tags(script):  # --set image.tag: read with the chart
            yield FileReference(f"{chart.rstrip('/')}/values.yaml", self.name)
        for chart, _key, _word, _items in helm_set_args(script):  # --set args={...}: read with the chart
            yield FileReference(f"{chart.rstrip('/')}/values.yaml", self.name)
