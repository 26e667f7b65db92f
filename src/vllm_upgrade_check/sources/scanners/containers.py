"""One container of a manifest (compose service or Kubernetes container): its image, entry
point and arguments read as what it runs.

A container whose image is a vLLM image and whose entry point is not overridden runs
vLLM's server, so its arguments alone are vLLM CLI flags; a flag and its value may sit in
two list items. ``sh -c 'TEXT'`` arguments are parsed as shell. Kubernetes' ``$(VAR)`` is
expanded from the container's ``env``; compose's ``${VAR:-default}`` image reads as its default.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass

import yaml

from vllm_upgrade_check.knowledge.versions import tag_version_span
from vllm_upgrade_check.model.evolve import evolve
from vllm_upgrade_check.model.facts import VENDOR_ENTRY, Fact, FactKind, Span
from vllm_upgrade_check.parsing.shell import Token, parse_shell
from vllm_upgrade_check.parsing.textpos import line_index
from vllm_upgrade_check.parsing.words import sub_span
from vllm_upgrade_check.parsing.yamlnodes import get, items, pos, scalar
from vllm_upgrade_check.parsing.yamlwords import scalar_locator, scalar_word, sequence_words
from vllm_upgrade_check.sources.scanners.arg_facts import arg_facts
from vllm_upgrade_check.sources.scanners.compose_env import Dotenv, dotenv_image, interpolated_words
from vllm_upgrade_check.sources.scanners.images import (
    image_fact,
    image_hint,
    is_vllm_image,
    replaced_server_note,
    split_image,
    vendor_vllm_image,
)
from vllm_upgrade_check.sources.scanners.k8s_refs import K8S_REFERENCE, expansion_relocator
from vllm_upgrade_check.sources.scanners.shell import _SHELLS, Relocate, argv_facts, shell_facts

CHART_IMAGE = "vllm/vllm-openai"
"""The image a chart template's container is read as running (its values say it is vLLM's)."""


def scalar_relocator(text: str, node: yaml.Node) -> Relocate:
    """Place tokens parsed from a YAML scalar's value where their text is written in the file.

    Where the value aligns with its source exactly (:func:`~vllm_upgrade_check.parsing.yamlwords.scalar_offsets`)
    every position is mapped, spans included, so a fix can cut words out of the scalar.
    Otherwise each token's written text is searched for within the scalar's source span,
    left to right, and the token is placed there without spans (a token that cannot be
    found is placed at the scalar's start).
    """
    start, end = node.start_mark.index, node.end_mark.index
    region = text[start:end]
    cursor = [0]
    origin = pos(node)
    exact = scalar_locator(text, node) if isinstance(node, yaml.ScalarNode) else None
    if exact is not None:
        rows = str(node.value).split("\n")

        def point(p: tuple[int, int]) -> tuple[int, int]:
            # p: 1-based (line, character column) in the value, as parse_shell placed it
            row = p[0] - 1
            chars = p[1] - 1
            line = rows[row] if row < len(rows) else ""
            return exact(row, len(line[:chars].encode("utf-8")))

        return lambda token: token.moved(point)

    def move(token: Token) -> Token:
        needle = token.written or token.text
        index = region.find(needle, cursor[0]) if needle else -1
        if index < 0:
            return evolve(token.unplaced(), line=origin.line, column=origin.column)
        cursor[0] = index + len(needle)
        line, column = line_index(text).line_col(start + index)
        return evolve(token.unplaced(), line=line, column=column)

    return move


@dataclass(frozen=True)
class _Item:
    token: Token
    node: yaml.Node
    text: str = ""
    """The text of the file ``node`` is written in, when it is another file than the one read."""


Written = tuple[str, str]
"""``(text, report path)`` of the file a node is written in (a compose service merged from
several files, see :mod:`.compose_merge`, reads its image, entry point and command from
different files)."""


def _elsewhere(items_: list[_Item], written: Written | None) -> list[_Item]:
    """``items_`` read from ``written``'s file: their tokens placed in that file."""
    if written is None:
        return items_
    text, path = written
    return [_Item(evolve(i.token, path=i.token.path or path), i.node, text) for i in items_]


def _argv(text: str, node: yaml.Node | None) -> list[_Item]:
    """argv items of a YAML list of scalars, or of a scalar command string (split as a shell would)."""
    if node is None:
        return []
    if isinstance(node, yaml.SequenceNode):
        scalars = [child for child in items(node) if scalar(child) is not None]
        return [_Item(token, child) for token, child in zip(sequence_words(text, node), scalars, strict=True)]
    value = scalar(node)
    if value is None:
        return []
    move = scalar_relocator(text, node)
    script = parse_shell(value)
    out = [_Item(move(t), node) for c in script.commands for t in c.argv]
    spans = [i.token.span for i in out]
    if isinstance(node, yaml.ScalarNode) and not node.style and out and all(spans) and len(script.commands) == 1:
        # A plain scalar left with no word reads as null (the image's default command):
        # a cut of every word writes an empty list in its place.
        first, last = spans[0], spans[-1]
        assert first is not None and last is not None
        whole = Span.between(first.start, last.end)
        out = [_Item(evolve(i.token, whole=whole, empty="[]"), i.node) for i in out]
    return out


def _interpolated(argv: list[_Item], dotenv: Dotenv, node: yaml.Node | None) -> list[_Item]:
    """Compose command words with what ``.env`` sets substituted (:func:`.compose_env.interpolated_words`)."""
    split = not isinstance(node, yaml.SequenceNode)
    return [_Item(t, i.node, i.text) for i in argv for t in interpolated_words([i.token], dotenv, split)]


def command_words(text: str, node: yaml.Node | None, dotenv: Dotenv | None = None) -> list[Token]:
    """The words of a compose ``command``/``entrypoint`` (a YAML list of scalars, or a string
    split as a shell would), placed where they are written, with what ``dotenv`` sets
    interpolated; ``[]`` when ``node`` is absent or holds no words."""
    argv = _argv(text, node)
    if dotenv:
        argv = _interpolated(argv, dotenv, node)
    return [i.token for i in argv]


def command_syntax(node: yaml.Node | None) -> str:
    """How the words of a container's command ``node`` are written, as
    :func:`~.shell.argv_facts` takes it: ``yaml`` (a list), ``shell|yaml<style>`` (shell
    words in a YAML string) or ``shell``."""
    if isinstance(node, yaml.SequenceNode):
        return "yaml"
    if isinstance(node, yaml.ScalarNode) and node.style in ("'", '"', None, ""):
        return f"shell|yaml{node.style or ''}"
    return "shell"


def k8s_expand(value: str, env: Mapping[str, str | None]) -> tuple[str, bool]:
    """``value`` with Kubernetes' ``$(VAR)`` references replaced from the container's ``env``
    (``$$`` is a literal ``$``), and whether every reference was known. A variable set by
    ``valueFrom`` (``None`` in ``env``), by ``envFrom`` or not at all is left as written:
    the kubelet leaves an undefined one as it is, and the others are only known at run time.
    """
    known = True

    def substitute(m: re.Match[str]) -> str:
        nonlocal known
        if m.group(1) is None:
            return "$"
        found = env.get(m.group(1))
        if found is None:
            known = False
            return m.group(0)
        return found

    return K8S_REFERENCE.sub(substitute, value), known


def container_env(node: yaml.Node | None) -> dict[str, str | None]:
    """A Kubernetes container's ``env`` as name -> value, each value expanded with the ones
    before it as the kubelet does; ``None`` for ``valueFrom`` and for values that use an
    unknown variable."""
    env: dict[str, str | None] = {}
    for child in items(node):
        name = scalar(get(child, "name"))
        if not name:
            continue
        value = scalar(get(child, "value"))
        if value is None:
            env[name] = None if get(child, "valueFrom") is not None else ""
            continue
        expanded, known = k8s_expand(value, env)
        env[name] = expanded if known else None
    return env


def _expanded(item: _Item, env: Mapping[str, str | None]) -> _Item:
    token = item.token
    if "$" not in token.text:
        return item
    text, known = k8s_expand(token.text, env)
    if text == token.text and known:
        return item
    # Still the word written there (a fix may cut it out), now reading as its expansion.
    return evolve(item, token=evolve(token, text=text, resolved=token.resolved and known, written=token.written or token.text))


_COMPOSE_DEFAULT = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(:?-)([^}]*)\}")
"""``${VAR:-default}`` / ``${VAR-default}`` in a compose value (compose's interpolation)."""


def compose_interpolated(token: Token) -> tuple[str, Span | None]:
    """A compose image written with ``${VAR:-default}`` (``vllm/vllm-openai:v${TAG:-0.17.0}``)
    as compose reads it when the variable is not set, and where its version is written
    when it lies in the default word (``None`` otherwise). Compose reads ``.env`` and the
    shell environment too: what they set is not known here, so the default stands for it."""
    text = token.text
    # Each part of the expanded text, with where it starts in the written one.
    parts: list[tuple[int, str, int]] = []  # (offset in expanded, text, offset in written)
    expanded, cursor = "", 0
    for m in _COMPOSE_DEFAULT.finditer(text):
        parts.append((len(expanded), text[cursor : m.start()], cursor))
        expanded += text[cursor : m.start()]
        parts.append((len(expanded), m.group(3), m.start(3)))
        expanded += m.group(3)
        cursor = m.end()
    parts.append((len(expanded), text[cursor:], cursor))
    expanded += text[cursor:]
    tag = split_image(expanded)[1] or ""
    found = tag_version_span(tag)
    if found is None:
        return expanded, None
    at, length = len(expanded) - len(tag) + found[0], found[1] - found[0]
    for offset, piece, written_at in parts:
        if offset <= at and at + length <= offset + len(piece):
            begin = written_at + at - offset
            return expanded, sub_span(token, begin, begin + length)
    return expanded, None


def container_facts(
    text: str,
    path: str,
    scanner: str,
    image_node: yaml.Node | None,
    entry_node: yaml.Node | None,
    args_node: yaml.Node | None,
    env: Mapping[str, str | None] | None = None,
    assume_vllm: bool = False,
    built: tuple[str, str, int] | None = None,
    dotenv: Dotenv | None = None,
    layers: tuple[Written | None, Written | None, Written | None] = (None, None, None),
) -> Iterator[Fact]:
    """Facts of one container (compose service or Kubernetes container). With ``env`` (a
    Kubernetes container's, :func:`container_env`), ``$(VAR)`` in its command and args is
    expanded first (:func:`k8s_expand`). ``assume_vllm``: read what it runs as vLLM's image
    runs it (a chart template's image is the chart values' vLLM image), without an image fact.
    ``built``: the base image of the Dockerfile a compose service is built from, with where it
    is written (see :mod:`.compose_build`); when it is a vLLM image the container runs vLLM's
    server, checked from that image's release. ``dotenv``: a compose project's ``.env``
    variables, which compose interpolates into the image and the command words
    (:mod:`.compose_env`); what they set is placed in ``.env``. ``layers``: the files the
    image, the entry point and the command are written in, each when it is another file than
    ``text`` (a compose service merged from several files); their words are placed there."""
    image_at, entry_at, args_at = layers
    image_text = image_at[0] if image_at is not None else text
    image = scalar(image_node)
    hint = None
    image_token: Token | None = None
    version: Span | None = None
    if image and isinstance(image_node, yaml.ScalarNode):
        token = scalar_word(image_text, image_node)
        if image_at is not None:
            token = evolve(token, path=image_at[1])
        from_env = dotenv_image(image, dotenv) if scanner == "compose" and dotenv else None
        if from_env is not None:
            image, used, version = from_env  # the tag .env sets: placed there, set there
            token = Token(image, used.line, used.column, True, used.value, path=used.path)
        elif scanner == "compose" and "$" in image:
            image, version = compose_interpolated(token)
            token = evolve(token, text=image)
        if is_vllm_image(image):
            image_token = token
            hint = image_hint(image, token.path or path, token.line)
    vllm_image = image if image_token else None
    if vllm_image is None and built is not None and is_vllm_image(built[0]):
        vllm_image, hint = built[0], image_hint(built[0], built[1], built[2])
    entry = _elsewhere(_argv(entry_at[0] if entry_at else text, entry_node), entry_at)
    args = _elsewhere(_argv(args_at[0] if args_at else text, args_node), args_at)
    if dotenv:
        entry, args = _interpolated(entry, dotenv, entry_node), _interpolated(args, dotenv, args_node)
    if env is not None:
        entry = [_expanded(item, env) for item in entry]
        args = [_expanded(item, env) for item in args]
    holder = args_node if args else entry_node
    vendor = vendor_vllm_image(image, [i.token.text for i in args]) if image and not entry else None
    if vendor is not None:
        # a vendor's build of vLLM: its args are vLLM's flags, its vLLM release unknown
        words = args[1:] if args[0].token.text == "serve" else args
        tokens = [i.token for i in words]
        syntax = "yaml" if isinstance(args_node, yaml.SequenceNode) else "shell"
        # the launch (and the note that its release is unknown) stands at the image
        start = scalar_word(image_text, image_node) if isinstance(image_node, yaml.ScalarNode) else args[0].token
        if image_at is not None:
            start = evolve(start, path=image_at[1])
        yield from arg_facts(tokens, path, scanner, entry=VENDOR_ENTRY + vendor, start=start, syntax=syntax)
        return
    run_image = vllm_image or (CHART_IMAGE if assume_vllm else None)
    image_place = (image_text, image_at[1] if image_at else None)
    facts = list(_run_facts(text, path, scanner, run_image, image_node, entry, args, holder, hint, env, image_place))
    if image_token is not None:
        note = ""
        if entry and not any(f.kind == FactKind.LAUNCH for f in facts):
            program = " ".join(i.token.text for i in entry[:2])
            note = replaced_server_note(program, "its command is replaced")
        yield image_fact(image_token, path, scanner, version=version, note=note, syntax="yaml")
    yield from facts


def _placed_in(relocate: Relocate, where: str) -> Relocate:
    """``relocate``, its tokens placed in file ``where``."""
    return lambda token: evolve(relocate(token), path=where)


def _run_facts(
    text: str,
    path: str,
    scanner: str,
    vllm_image: str | None,
    image_node: yaml.Node | None,
    entry: list[_Item],
    args: list[_Item],
    holder: yaml.Node | None,
    hint: tuple[str, str] | None,
    env: Mapping[str, str | None] | None = None,
    image_place: tuple[str, str | None] | None = None,
) -> Iterator[Fact]:
    """The facts of what a container runs: its entry point and args (``vllm_image``: its
    vLLM image reference, ``None`` when it runs no vLLM image; ``holder``: the node the
    words that start the launch are written in; ``env``: a Kubernetes container's, whose
    ``$(VAR)`` an ``sh -c`` script is read with, see :mod:`.k8s_refs`; ``image_place``:
    the text and, when another file, the path the image is written in)."""
    argv = entry + args
    if not argv:
        if vllm_image and image_node is not None:
            # The image's own entry point runs vLLM's server, with no flags at all.
            repo, _tag = split_image(vllm_image)
            image_text, image_path = image_place or (text, None)
            start = scalar_word(image_text, image_node) if isinstance(image_node, yaml.ScalarNode) else None
            if start is not None and image_path is not None:
                start = evolve(start, path=image_path)
            yield from arg_facts([], path, scanner, entry=f"image {repo}", start=start, hint=hint, syntax="yaml")
        return
    if (
        len(argv) >= 3
        and argv[0].token.text.rsplit("/", 1)[-1] in _SHELLS
        and argv[1].token.text.startswith("-")
        and "c" in argv[1].token.text
    ):
        script = argv[2]
        relocate = scalar_relocator(script.text or text, script.node)
        body = script.token.text
        if env is not None and isinstance(script.node, yaml.ScalarNode):
            # measured on the script as written, not on the variables' values
            body, relocate = expansion_relocator(str(script.node.value), env, relocate)
        if script.token.path is not None and script.token.path != path:
            relocate = _placed_in(relocate, script.token.path)
        facts, _ = shell_facts(body, path, scanner, hint=hint, relocate=relocate)
        yield from facts
        return
    tokens = [i.token for i in argv]
    syntax = command_syntax(holder)
    facts = argv_facts(tokens, path, scanner, hint, syntax=syntax)
    if facts:
        yield from facts
    elif vllm_image and not entry:
        repo, _tag = split_image(vllm_image)
        yield from arg_facts(
            tokens, path, scanner, entry=f"image {repo}", start=tokens[0], hint=hint, syntax=syntax
        )
