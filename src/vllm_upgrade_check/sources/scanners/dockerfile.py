"""Dockerfiles: ``FROM`` images (``ARG`` defaults substituted), ``ENV``, ``RUN pip install``,
and ``ENTRYPOINT``/``CMD`` in exec and shell form.

Parsed with ``dockerfile-parse``. In a stage built ``FROM`` a vLLM image, whose entry point
is vLLM's OpenAI server, exec-form ``CMD`` items are vLLM CLI flags unless the stage sets
its own ``ENTRYPOINT``.
"""

from __future__ import annotations

import io
import posixpath
import re
from collections import ChainMap
from collections.abc import Iterator, Sequence
from dataclasses import replace
from typing import Any

from dockerfile_parse import DockerfileParser

from vllm_upgrade_check.model.facts import EXEC_LITERAL, VENDOR_ENTRY, Fact, FactKind, Skipped, Spans
from vllm_upgrade_check.parsing.shell import Locator, ShellScript, Token, offset_locator, parse_shell
from vllm_upgrade_check.sources.scanners.arg_facts import arg_facts, env_fact
from vllm_upgrade_check.sources.scanners.base import FileReference, Scanner, SourceFile
from vllm_upgrade_check.sources.scanners.dockerfile_copies import (
    EntryScript,
    config_copies,
    copied,
    entry_script,
    json_array,
)
from vllm_upgrade_check.sources.scanners.dockerfile_heredocs import (
    Heredoc,
    copied_script_facts,
    copy_destinations,
    fold,
    run_facts,
)
from vllm_upgrade_check.sources.scanners.dockerfile_text import as_written, exec_tokens, word_at
from vllm_upgrade_check.sources.scanners.dockerfile_versions import (
    defaults,
    expand_from,
    from_version,
    with_pin_spans,
)
from vllm_upgrade_check.sources.scanners.images import (
    image_fact,
    image_hint,
    is_vllm_image,
    replaced_server_note,
    vendor_vllm_image,
)
from vllm_upgrade_check.sources.scanners.shell import _SHELLS, argv_facts, shell_facts
from vllm_upgrade_check.sources.sniff import is_dockerfile_name


def is_dockerfile(name: str) -> bool:
    """``Dockerfile``/``Containerfile`` and their variants (``Dockerfile.gpu``, ``Dockerfile-gpu``,
    ``Containerfile_rocm``, ``serve.Dockerfile``, ``*.containerfile``), any case."""
    return is_dockerfile_name(name)


class DockerfileScanner(Scanner):
    """Dockerfiles and Containerfiles."""

    name = "dockerfile"

    def accepts(self, source: SourceFile) -> bool:
        return is_dockerfile(source.name)

    def accepts_name(self, name: str) -> bool | None:
        return is_dockerfile(name)

    def scan(self, source: SourceFile) -> Iterator[Fact | Skipped | FileReference]:
        yield from self.read(source, None)

    def read(self, source: SourceFile, scripts: list[EntryScript] | None) -> Iterator[Fact | Skipped | FileReference]:
        """The Dockerfile's facts; with ``scripts``, also the :class:`EntryScript` of each
        stage whose ``ENTRYPOINT`` runs a script the Dockerfile copies from the build
        context (a :class:`~.base.FileReference` names each such script, relative to the
        Dockerfile's folder, so that the file is read again with them)."""
        path = source.relpath
        copies: dict[str, str] = {}  # where a COPY/ADD puts a file of the build context -> that file
        workdir = "/"
        try:  # here-document bodies blanked (dockerfile-parse reads their lines as instructions)
            parser, heredocs = fold(source.text, lambda t: DockerfileParser(fileobj=io.BytesIO(t.encode("utf-8"))))
            structure = parser.structure
            parents = parser.parent_images
        except Exception as exc:  # dockerfile-parse raises plain exceptions on bad input
            yield Skipped(path, f"cannot parse Dockerfile: {exc}", configures_vllm=source.mentions_vllm())
            return
        stage = -1
        base_is_vllm = False
        hint: tuple[str, str] | None = None
        run = _Stage()  # the entry point and command of the stage being read
        stages: dict[str, _Stage] = {}  # stages by name, for FROM <stage>
        scope = _Scope()  # the ARG and ENV values in force, as Docker scopes them
        global_args = defaults(structure, "ARG", before_from=True)
        text = source.text
        vllm_lines = _vllm_from_lines(structure, parents, global_args)
        lines = text.split("\n")
        comments = sorted({i["startline"] for i in structure if i["instruction"].upper() == "COMMENT"})
        for item in structure:
            instruction = item["instruction"].upper()
            line = item["startline"] + 1
            content = as_written(lines, item, comments)
            keyword_len = len(content) - len(content.lstrip()) + len(item["instruction"]) + 1
            body = content.lstrip()[len(item["instruction"]) :]
            body_offset = keyword_len
            locate = offset_locator(body, line, body_offset)
            if instruction == "FROM":
                yield from config_copies(run.read_shell_forms(path, self.name), path, copies, workdir)
                yield from config_copies(run.copied_scripts_facts(path, self.name), path, copies, workdir)
                yield from config_copies(run.launches(path, self.name), path, copies, workdir)
                yield from run.entry_script(path, copies, scripts, stage)
                copies, workdir = {}, "/"
                stage += 1
                scope.args = {}
                # FROM [--platform=...] image [AS name]: the image is the first word not a flag.
                from_words = [w for w in item["value"].split() if not w.startswith("--")]
                if not from_words:  # a bare FROM: nothing to read, never a crash
                    base_is_vllm, hint, run = False, None, _Stage()
                    continue
                written = from_words[0]
                named = from_words[2].lower() if len(from_words) >= 3 and from_words[1].lower() == "as" else None
                parent = stages.get(written.lower())
                if parent is not None:
                    # FROM an earlier stage: its image, ENV, entry point and command carry over.
                    run = parent.child()
                    scope.env = run.env
                    base_is_vllm, hint = parent.vllm_image, parent.hint
                    if named:
                        stages[named] = run
                    continue
                run = _Stage()
                scope.env = run.env  # the base image's own ENV is not known here
                if named:
                    stages[named] = run
                reference = parents[stage] if stage < len(parents) else written
                if "$" in written:
                    plain = {k: (v.text if v is not None else None) for k, v in global_args.items()}
                    reference = expand_from(written, plain) or reference
                token = word_at(content, written, keyword_len - 1, line, reference)
                base_is_vllm = is_vllm_image(reference)
                run.vllm_image = base_is_vllm
                run.vendor = None if base_is_vllm else (reference, token)
                if base_is_vllm:
                    if "$" in written:
                        version, note = from_version(
                            text, replace(token, text=written), reference, global_args, vllm_lines
                        )
                        run.image = image_fact(token, path, self.name, version=version, note=note or "")
                    else:
                        run.image = image_fact(token, path, self.name)
                    hint = image_hint(reference, path, line)
                run.hint = hint
                continue
            if instruction in ("ARG", "ENV"):
                # Their values are the variables later RUN and CMD lines expand.
                script = scope.define(instruction, body, locate, before_from=stage < 0)
                if instruction == "ENV":
                    # without `$` the values read the same whatever is in scope: parsed once
                    yield from self._env(body, path, line, body_offset, None if "$" in body else script)
                continue
            if item["startline"] in heredocs and instruction == "RUN":
                variables = scope.build()
                for facts, read in run_facts(item, heredocs[item["startline"]], lines, path, self.name, variables, hint):
                    yield from with_pin_spans(text, read, facts, variables, vllm_lines)
                continue
            if item["startline"] in heredocs and instruction in ("COPY", "ADD"):
                for dest, doc in copy_destinations(item["value"], heredocs[item["startline"]], workdir):
                    run.copied_scripts[dest] = doc  # a file the image holds, written here
                continue
            if instruction == "RUN":
                variables = scope.build()
                facts, script = shell_facts(body, path, self.name, locate, variables, hint)
                yield from with_pin_spans(text, body, facts, variables, vllm_lines)
                yield from _partly_read(script, body, path, instruction)
                continue
            if instruction == "WORKDIR":
                workdir = posixpath.join(workdir, item["value"].strip() or ".")
                continue
            if instruction in ("COPY", "ADD"):
                copied(item["value"], workdir, copies)
                continue
            if instruction not in ("CMD", "ENTRYPOINT"):
                continue
            value = item["value"].strip()
            words = json_array(value)
            if words is not None:
                run.set(instruction, exec_tokens(content, words, line, lines))
            else:
                # The shell runs when the container starts: read once the stage's ENV is known.
                run.set(instruction, None)
                run.shell_forms.append((instruction, body, locate))
        yield from config_copies(run.read_shell_forms(path, self.name), path, copies, workdir)
        yield from config_copies(run.copied_scripts_facts(path, self.name), path, copies, workdir)
        yield from config_copies(run.launches(path, self.name), path, copies, workdir)
        yield from run.entry_script(path, copies, scripts, stage)

    def _env(self, body: str, path: str, line: int, offset: int, parsed: ShellScript | None = None) -> Iterator[Fact]:
        words = body.split()
        if len(words) >= 2 and "=" not in words[0]:  # legacy "ENV NAME value"
            column = offset + len(body) - len(body.lstrip())
            yield env_fact(words[0], " ".join(words[1:]), path, line, column, self.name)
            return
        script = parsed if parsed is not None else parse_shell(body, offset_locator(body, line, offset))
        for assignment in script.assignments:
            yield env_fact(
                assignment.name, assignment.value, path, assignment.line, assignment.column, self.name
            )


def _vllm_from_lines(
    structure: list[dict[str, Any]], parents: list[str], defaults: dict[str, Token | None]
) -> frozenset[int]:
    """The lines of the ``FROM`` instructions whose image reads as a vLLM image."""
    lines: set[int] = set()
    plain = {k: (v.text if v is not None else None) for k, v in defaults.items()}
    stage = -1
    for item in structure:
        if str(item["instruction"]).upper() != "FROM":
            continue
        stage += 1
        words = [w for w in str(item["value"]).split() if not w.startswith("--")]
        if not words:
            continue
        reference = parents[stage] if stage < len(parents) else words[0]
        if "$" in words[0]:
            reference = expand_from(words[0], plain) or reference
        if is_vllm_image(reference):
            lines.update(range(int(item["startline"]) + 1, int(item["endline"]) + 2))
    return frozenset(lines)


class _Scope:
    """The ``ARG`` and ``ENV`` values in force at one instruction, scoped as Docker scopes
    them: an ``ARG`` before the first ``FROM`` is seen inside a stage only where the stage
    declares it again (``ARG NAME``); a stage's ``ARG``s end with it; ``ENV`` values carry to
    a stage ``FROM`` that one; where both name a variable, ``ENV`` wins. ``RUN`` sees both;
    a shell-form ``CMD``/``ENTRYPOINT`` runs when the container starts and sees ``ENV`` only."""

    def __init__(self) -> None:
        self.globals: dict[str, list[Token]] = {}
        self.args: dict[str, list[Token]] = {}
        self.env: dict[str, list[Token]] = {}

    def build(self) -> ChainMap[str, list[Token]]:
        """The values a build step (``RUN``, an ``ENV``/``ARG`` value) expands: ``ENV`` over
        ``ARG``, behind an empty mapping that takes the step's own assignments (a view, not
        a copy: a Dockerfile of many variables stays linear)."""
        return ChainMap({}, self.env, self.args)

    def define(self, instruction: str, body: str, locate: Locator, before_from: bool) -> ShellScript:
        """Record one ``ARG`` or ``ENV`` instruction (``body``: its text after the keyword);
        returns its parse (its assignments, with the values in scope expanded)."""
        values = self.build()
        script = parse_shell(body, locate, values)
        named = {a.name for a in script.assignments}
        words = body.split()
        if instruction == "ENV" and not named and len(words) >= 2 and "=" not in words[0]:
            # legacy `ENV NAME value words`: the rest of the line is the value
            argv = script.commands[0].argv if script.commands else []
            if argv and argv[0].text == words[0]:
                self.env[words[0]] = list(argv[1:])
            return script
        if instruction == "ENV":
            self.env.update({n: values[n] for n in named if n in values})
            return script
        target = self.globals if before_from else self.args
        target.update({n: values[n] for n in named if n in values})
        for word in body.split():  # `ARG NAME`: the global default, if there is one
            if "=" not in word and not before_from and word in self.globals:
                self.args[word] = self.globals[word]
        return script


class _Stage:
    """The entry point and command of one Dockerfile stage, read as Docker runs them: the
    container runs ``ENTRYPOINT`` + ``CMD`` (exec forms; the last of each counts), a
    shell-form ``ENTRYPOINT`` ignores ``CMD``, and a stage ``FROM`` an earlier one inherits
    both. Launches are told once the stage is read whole, the order of the two instructions
    being free."""

    def __init__(self) -> None:
        self.vllm_image = False
        self.hint: tuple[str, str] | None = None
        self.entry: list[Token] | None = None  # exec-form ENTRYPOINT words
        self.entry_shell = False  # a shell-form ENTRYPOINT (read where it stands)
        self.cmd: list[Token] | None = None  # exec-form CMD words
        self.own_entry = False  # the stage sets its entry point itself
        self.own_cmd = False
        self.entry_launches = True  # the entry point runs vLLM (the image's own one does)
        self.image: Fact | None = None  # the stage's vLLM base image, told with its launches
        self.vendor: tuple[str, Token] | None = None  # another base image (a vendor's vLLM?), where written
        self.env: dict[str, list[Token]] = {}  # the stage's ENV values (a later stage FROM it has them)
        self.shell_forms: list[tuple[str, str, Locator]] = []  # shell-form CMD/ENTRYPOINT, unread
        self.copied_scripts: dict[str, Heredoc] = {}  # files COPY here-documents create, by destination
        self.script_launches = False  # the exec-form ENTRYPOINT runs one of them, which launches vLLM

    def child(self) -> _Stage:
        """The state a stage ``FROM`` this one starts with."""
        out = _Stage()
        out.vllm_image, out.hint, out.vendor = self.vllm_image, self.hint, self.vendor
        out.entry, out.entry_shell, out.cmd = self.entry, self.entry_shell, self.cmd
        out.env = dict(self.env)
        return out

    def set(self, instruction: str, words: list[Token] | None, launched: bool = False) -> None:
        """Record an ``ENTRYPOINT`` or ``CMD`` (``words`` of its exec form, ``None`` for the
        shell form, which is read where it stands; ``launched``: whether that shell form ran
        vLLM). Setting the entry point drops an inherited command, as Docker does."""
        if instruction == "ENTRYPOINT":
            self.entry, self.entry_shell, self.own_entry = words, words is None, True
            self.entry_launches = launched
            if not self.own_cmd:
                self.cmd = None
        else:
            self.cmd, self.own_cmd = words, True

    def read_shell_forms(self, path: str, scanner: str) -> Iterator[Fact | Skipped]:
        """The facts of the stage's shell-form ``CMD``/``ENTRYPOINT`` instructions, read
        once the stage is read whole: the shell runs when the container starts, with every
        ``ENV`` of the stage set (one written after the instruction as well), and no ``ARG``.
        The last shell-form ``ENTRYPOINT``, when it stands, says whether the entry point
        runs vLLM."""
        pending, self.shell_forms = self.shell_forms, []
        for instruction, body, locate in pending:
            facts, script = shell_facts(body, path, scanner, locate, dict(self.env), self.hint)
            yield from facts
            yield from _partly_read(script, body, path, instruction)
            if instruction == "ENTRYPOINT" and self.entry_shell:
                self.entry_launches = any(f.kind == FactKind.LAUNCH for f in facts)

    def copied_scripts_facts(self, path: str, scanner: str) -> Iterator[Fact]:
        """The facts of the shell scripts the stage's ``COPY`` here-documents create, at
        their lines (:func:`~.dockerfile_heredocs.copied_script_facts`); the one its
        exec-form ``ENTRYPOINT`` runs is read with the ``CMD`` as its ``"$@"``."""
        if not self.copied_scripts:
            return
        entry = self.entry if self.own_entry and not self.entry_shell else None
        facts, self.script_launches = copied_script_facts(
            self.copied_scripts, entry, self.cmd or [], self.env, path, scanner, self.hint
        )
        yield from facts

    def launches(self, path: str, scanner: str) -> Iterator[Fact]:
        """The stage's vLLM base image and the facts of what its container runs."""
        facts = list(self._run(path, scanner))
        if self.image is not None:
            image = self.image
            if (
                self.own_entry
                and not self.entry_launches
                and not self.script_launches
                and not any(f.kind == FactKind.LAUNCH for f in facts)
            ):
                program = " ".join(t.text for t in (self.entry or [])[:2]) or "its own ENTRYPOINT"
                note = replaced_server_note(program, "ENTRYPOINT")
                spans = image.spans or Spans()
                image = replace(image, spans=replace(spans, note=spans.note or note))  # a digest's note stays
            yield image
        yield from facts

    def entry_script(
        self, path: str, copies: dict[str, str], scripts: list[EntryScript] | None, stage: int = -1
    ) -> Iterator[FileReference]:
        """The stage's :func:`~.dockerfile_copies.entry_script` when its exec-form
        ``ENTRYPOINT`` runs no vLLM launch of its own: a reference to the script, and its
        record into ``scripts`` (``stage``: the stage's index). An exec-form ``ENTRYPOINT``
        that launches vLLM itself is recorded into ``scripts`` as a ``direct`` entry (a
        compose ``command`` replaces the ``CMD`` after it)."""
        if not self.own_entry or self.entry_shell or not self.entry:
            return
        if self.entry_launches:
            if scripts is not None:
                words = self.entry
                args = [*words[1:], *(self.cmd or [])]
                scripts.append(EntryScript(path, words[0], words, args, dict(self.env), self.hint, "", len(words) - 1, stage, True))
            return
        if self.script_launches:  # a COPY here-document script, read by the heredoc pass
            return
        found = entry_script(path, self.entry, self.cmd or [], copies, self.env, self.hint, stage)
        if found is not None:
            yield FileReference(found.path, "dockerfile")
            if scripts is not None:
                scripts.append(found)

    def _run(self, path: str, scanner: str) -> Iterator[Fact]:
        if not (self.own_entry or self.own_cmd) or self.entry_shell:
            return
        if self.entry is not None:
            argv = _unexpanded([*self.entry, *(self.cmd or [])])
            launched = argv_facts(argv, path, scanner, self.hint, syntax="json", variables=self.env)
            self.entry_launches = any(f.kind == FactKind.LAUNCH for f in launched)
            yield from _literal_words(launched, argv)
            return
        if self.cmd is None:
            return
        cmd = _unexpanded(self.cmd)
        launched = argv_facts(cmd, path, scanner, self.hint, syntax="json", variables=self.env)
        if launched:
            yield from _literal_words(launched, cmd)
        elif self.vllm_image:
            # The image's entry point is vLLM's OpenAI server: the command is its flags.
            found = list(
                arg_facts(cmd, path, scanner, start=cmd[0] if cmd else None, entry="image vllm", hint=self.hint, syntax="json")
            )
            yield from _literal_words(found, cmd)
        elif self.vendor is not None:
            # a vendor's build of vLLM (its name says vLLM) whose command starts as vLLM's
            # server's does: its flags, the launch (and its unknown release) at the FROM
            reference, at = self.vendor
            vendor = vendor_vllm_image(reference, [t.text for t in cmd])
            if vendor is not None:
                words = cmd[1:] if cmd and cmd[0].text == "serve" else cmd
                found = list(arg_facts(words, path, scanner, start=at, entry=VENDOR_ENTRY + vendor, syntax="json"))
                yield from _literal_words(found, cmd)


_EXPANSION = re.compile(r"\$(?:\{[A-Za-z_]\w*[^}]*\}|[A-Za-z_]\w*)")
"""A shell expansion as written in a word: ``$NAME``, ``${NAME}``, ``${NAME:-x}``."""


def _unexpanded(argv: Sequence[Token]) -> list[Token]:
    """Exec-form words with each one that holds a shell expansion marked unresolved (not a
    flag, not the model): what it holds is not known, and not what ``ENV`` sets either. A
    ``sh -c`` argv is left as it is (its script is parsed as shell)."""
    if len(argv) >= 2 and argv[0].text.rsplit("/", 1)[-1] in _SHELLS and argv[1].text.startswith("-"):
        return list(argv)
    return [replace(t, resolved=False) if not t.text.startswith("-") and _EXPANSION.search(t.text) else t for t in argv]


def _literal_words(facts: Sequence[Fact], argv: Sequence[Token]) -> list[Fact]:
    """``facts`` of an exec-form ``ENTRYPOINT``/``CMD`` with each launch whose unresolved
    words are ``$NAME`` words marked :data:`~vllm_upgrade_check.model.facts.EXEC_LITERAL`:
    Docker runs an exec form without a shell and expands no variable in it (Dockerfile
    reference, "Shell and exec form"), so ``CMD ["${KV}"]`` gives vLLM the word ``${KV}``,
    whatever ``ENV KV=...`` holds, and no env var is read by it. A ``sh -c`` script's own
    launch (the shell does expand) is left as it is."""
    if len(argv) >= 2 and argv[0].text.rsplit("/", 1)[-1] in _SHELLS and argv[1].text.startswith("-"):
        return list(facts)
    out: list[Fact] = []
    for fact in facts:
        words = (fact.value or "").split(" ")
        if fact.kind == FactKind.LAUNCH and not fact.resolved and any(_EXPANSION.search(w) for w in words):
            fact = replace(fact, value=(fact.value or "") + EXEC_LITERAL)
        out.append(fact)
    return out


def _partly_read(script: ShellScript, body: str, path: str, instruction: str) -> Iterator[Skipped]:
    """A shell-form instruction that mentions vLLM and has a shell syntax error: what follows
    the error was not read, so the file is reported (and the gate fails closed on it)."""
    if script.has_error and "vllm" in body.lower():
        yield Skipped(
            path,
            f"shell syntax error in {instruction} at line {script.error_line}: the instruction was only partly read",
            configures_vllm=True,
            line=script.error_line,
        )
