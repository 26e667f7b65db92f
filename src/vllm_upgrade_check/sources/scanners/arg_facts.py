"""vLLM argv words as facts: what the flags and positionals after a launch's entry point set.

:func:`arg_facts` reads the words the way vLLM's ``FlexibleArgumentParser`` does
(``--max_num_seqs`` and ``--max-num-seqs`` alike, ``--flag=value`` as well as ``--flag
value``, a ``--no-flag`` form for ``argparse.BooleanOptionalAction`` booleans, the short
aliases of :data:`SHORT_FLAGS`, each flag owning the words its arity says) and yields the
``arg``, ``model`` and ``launch`` facts with where a fix edits them; beside it are the
readers it is made of (:func:`normalise_flag`, :func:`owned_words`, :func:`arg_spans`,
:func:`json_subkey_facts`, :func:`with_model_settings`) and :func:`env_fact`, the
``env_var`` fact every scanner makes.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Sequence
from dataclasses import replace

from packaging.version import InvalidVersion, Version

from vllm_upgrade_check.knowledge.known_args import known_args
from vllm_upgrade_check.knowledge.subcommands import Subcommand
from vllm_upgrade_check.model.facts import (
    MODEL_SETTINGS,
    UNSURE_MODEL_NOTE,
    Fact,
    FactKind,
    Location,
    Span,
    Spans,
)
from vllm_upgrade_check.parsing.words import Token, cut, inside_quotes, sub_span, token_location
from vllm_upgrade_check.sources.scanners.templates import PLACEHOLDER

SHORT_FLAGS = {
    "-tp": "tensor_parallel_size",
    "-pp": "pipeline_parallel_size",
    "-dp": "data_parallel_size",
    "-q": "quantization",
    "-O": "compilation_config",
    "-spec-draft-tp": "speculative_draft_tensor_parallel_size",
}
"""Short aliases vLLM's parser defines (vllm/engine/arg_utils.py, ``add_cli_args``;
``-spec-draft-tp`` until 0.8.2)."""



def normalise_flag(flag: str) -> tuple[str, tuple[str, ...]]:
    """The snake_case arg name of a CLI flag, and the aliases it also answers to.

    ``--max-num-seqs`` -> ``("max_num_seqs", ())``; ``--no-enable-prefix-caching`` ->
    ``("no_enable_prefix_caching", ("enable_prefix_caching",))``;
    ``--compilation-config.level`` -> ``("compilation_config", ("compilation_config.level",))``.
    """
    body = flag.lstrip("-")
    name = body.replace("-", "_")
    aliases: list[str] = []
    if "." in name:
        head = name.split(".", 1)[0]
        aliases.append(name)
        name = head
    if name.startswith("no_") and len(name) > 3:
        aliases.append(name[3:])
    return name, tuple(aliases)


def _shown(token: Token, syntax: str) -> str:
    """A word as the user wrote it; a list item (``syntax`` other than shell) without the
    one pair of quotes of its list's syntax."""
    written = token.written or token.text
    if syntax != "shell" and len(written) >= 2 and written[0] == written[-1] and written[0] in "\"'" and written[1:-1] == token.text:
        written = token.text
    return re.sub(f"{PLACEHOLDER}+", "{…}", written)  # a neutralised template: say where one stood


def _one_word(token: Token, syntax: str) -> bool:
    """Whether ``token`` is one argv word however it expands: a list item (``syntax`` other
    than shell), or a shell word in quotes (``"$MODEL"``, not ``$VLLM_ARGS``, which the shell
    splits at blanks)."""
    written = token.written or token.text
    return syntax != "shell" or (len(written) >= 2 and written[0] == written[-1] and written[0] in "\"'")


_WRITTEN_PLACEHOLDER = re.compile(r"\$\{[A-Za-z_]\w*\}|\$\([A-Za-z_]\w*\)|\$[A-Za-z_]\w*|(?<![$\w{])\{[A-Za-z_][\w.-]*\}(?!\})")
"""A placeholder as a template writes it: ``${NAME}``, ``$(NAME)``, ``$NAME``, ``{name}``."""


def _placeholder_word(text: str, syntax: str) -> bool:
    """Whether word ``text`` of a launch is a placeholder, or a flag whose name holds one
    (``--{flag}``, ``--${OPT}=1``): a word only the template (or the run) fills in, never a
    flag. A neutralised template (:data:`PLACEHOLDER`) counts in every syntax; in the list
    syntaxes (YAML, JSON, Python), where no shell expands them, ``${NAME}``, ``$(NAME)``
    and ``{name}`` too (the shell parser marks its own expansions unresolved)."""
    head = text.partition("=")[0] if text.startswith("-") else text
    if PLACEHOLDER in head:
        return True
    if syntax == "shell":
        return False
    if text.startswith("-"):
        return _WRITTEN_PLACEHOLDER.search(head) is not None
    return _WRITTEN_PLACEHOLDER.fullmatch(text) is not None


def _hinted_version(hint: tuple[str, str] | None) -> Version | None:
    if hint is None:
        return None
    try:
        return Version(hint[0])
    except InvalidVersion:
        return None


def owned_words(args: Sequence[Token], start: int, takes: str | None) -> list[Token]:
    """The words from ``args[start]`` on that a flag of arity ``takes`` consumes, as argparse
    does (see :meth:`~vllm_upgrade_check.knowledge.known_args.KnownArgs.arity`): none for ``"0"``, the
    next word unless it is a flag for ``"1"``/``"?"`` (and for an unknown arity, ``None``),
    every word up to the next flag for ``"+"``/``"*"``, at most N for a number."""
    if takes == "0":
        return []
    limit = None if takes in ("+", "*") else int(takes) if takes is not None and takes.isdigit() else 1
    values: list[Token] = []
    for index in range(start, len(args)):  # no slice of the rest: a long argv stays linear
        if limit is not None and len(values) >= limit or not _is_value(args[index]):
            break
        values.append(args[index])
    return values


def arg_spans(token: Token, flag: str, inline: bool, owned: Sequence[Token], syntax: str, sure: bool) -> Spans:
    """Where a fix edits the flag ``flag`` written as ``token`` (with ``=value`` when
    ``inline``) and the value words it ``owned``: the name, the value, what to cut, and for
    ``--flag=value`` the whole word (written again whole when the value changes its quoting)."""
    if inline:
        value = sub_span(token, len(flag) + 1, len(token.text))
    elif len(owned) == 1:
        # As written, or (a JSON value with escaped quotes) inside its quotes.
        value = sub_span(owned[0], 0, len(owned[0].text)) or inside_quotes(owned[0])
    else:
        value = None
    word = (sub_span(token, 0, len(token.text)) or inside_quotes(token)) if inline else None
    taken = cut([token, *owned])
    return Spans(
        name=sub_span(token, 0, len(flag)),
        value=value,
        cut=taken,
        syntax=syntax,
        sure=sure,
        word=word,
        emptied=token.empty if taken is not None and token.whole is not None else "",
        listed=token.whole if taken is not None else None,
        left=token.left if taken is not None and token.whole is not None else "",
    )


def arg_facts(
    args: Sequence[Token],
    path: str | None,
    scanner: str,
    origin: str = "cli",
    positional_model: bool = True,
    entry: str = "vllm serve",
    start: Token | None = None,
    hint: tuple[str, str] | None = None,
    syntax: str = "shell",
    own_flags: Subcommand | None = None,
) -> Iterator[Fact]:
    """Facts for the vLLM argv ``args`` (flags and positionals after the entry point).

    Yields one ``arg`` fact per flag, one ``model`` fact for the served model, and one
    ``launch`` fact listing every arg name set (for rules on changed defaults). A flag owns
    the words its arity says (:func:`owned_words`, from each release's parser: a
    ``store_true`` flag never owns the model after it); its value is ``=value`` or those
    words. Each ``arg`` fact records where a fix may edit it (:func:`arg_spans`). Words that
    could not be resolved from the repository (``$VLLM_ARGS`` set elsewhere) make the launch
    fact ``resolved=False`` with those words as its ``value``; no flags are invented for
    them. ``--*-config`` JSON values add one fact per top-level key (see
    :func:`json_subkey_facts`).

    Args:
        args: tokens after the entry point.
        path: file path for locations.
        scanner: name of the calling scanner.
        origin: ``cli`` for command lines.
        positional_model: whether the first positional is the model (``vllm serve``).
        entry: the entry point, for the launch fact.
        start: the token the launch starts at (for the launch fact's location).
        hint: ``(version, source)`` when the launch's vLLM version is known (image tag).
        syntax: the syntax the words are written in (``shell``, ``yaml``, ``json``,
            ``python``), for quoting what a fix writes.
        own_flags: the ``vllm`` subcommand the words are given to (``vllm bench
            throughput``): its own flags (``--num-prompts``, ``-i``) and their values are
            skipped, as they are no engine flags.
    """
    version_hint, hint_source = hint if hint else (None, None)
    group = f"{start.line}:{start.column}" if start is not None else None  # of the launch's facts
    known = known_args()
    version = _hinted_version(hint)
    names: set[str] = set()
    facts: list[Fact] = []
    seen_positional = False
    served: str | None = None
    unresolved: list[str] = []
    unknown_model: str | None = None  # the word where the model is written, when not known
    i = 0
    while i < len(args):
        token = args[i]
        text = token.text
        if (not token.resolved and not text.startswith("-")) or _placeholder_word(text, syntax):
            # $VLLM_ARGS, {extra_args}, --{flag}: words only the run (or the template) knows
            unresolved.append(_shown(token, syntax))
            if positional_model and not seen_positional and not text.startswith("-"):
                # where the model is written: the model is not known ("": the word may be more)
                unknown_model = unresolved[-1] if _one_word(token, syntax) else ""
            seen_positional = seen_positional or not text.startswith("-")
            i += 1
            continue
        if text == "--":  # argparse's end of options: not a flag itself
            i += 1
            continue
        if own_flags is not None and text.startswith("-"):
            own = own_flags.own_flag(text.partition("=")[0])
            if own is not None:  # the subcommand's own flag (--num-prompts 10): no engine flag
                i += 1 + len(owned_words(args, i + 1, "1" if own and "=" not in text else "0"))
                continue
        if text.startswith("--") and len(text) > 2:
            flag, has_eq, inline = text.partition("=")
            owned: list[Token] = []
            sure = True
            if has_eq:
                value: str | None = inline
            else:
                takes, sure = known.arity(flag, version)
                if takes is None and (full := known.expansion(flag, version)) is not None:
                    takes, sure = known.arity(full, version)  # an abbreviation argparse expands
                owned = owned_words(args, i + 1, takes)
                value = " ".join(t.text for t in owned) if owned else None
            name, aliases = normalise_flag(flag)
            facts.append(
                Fact(
                    FactKind.ARG,
                    name,
                    token_location(path, token),
                    raw=flag,
                    value=value,
                    origin=origin,
                    aliases=aliases,
                    scanner=scanner,
                    version_hint=version_hint,
                    hint_source=hint_source,
                    resolved=token.resolved,
                    spans=arg_spans(token, flag, bool(has_eq), owned, syntax, sure),
                    group=group,
                )
            )
            names.add(name)
            names.update(aliases)
            value_token = owned[0] if len(owned) == 1 else token
            if value is not None and name.endswith("_config"):
                sub = json_subkey_facts(name, flag, value, value_token, path, scanner, origin, hint)
                facts.extend(sub)
                names.update(f.name for f in sub)
            if name == "model" and value and not value_token.resolved:
                # --model $(MODEL) with MODEL known only at run time: the model is not known.
                unresolved.append(_shown(value_token, syntax))
                unknown_model = unknown_model or unresolved[-1]
            elif name == "model" and value:
                served, unknown_model = value, None
                facts.append(_model_fact(value_token, value, path, scanner, hint))
            i += 1 + len(owned)
            continue
        if text in SHORT_FLAGS or (text.startswith("-") and len(text) > 1 and not _is_number(text)):
            name = SHORT_FLAGS.get(text, text.lstrip("-").replace("-", "_"))
            takes, sure = known.arity(text, version)
            if takes is None and text in SHORT_FLAGS:
                takes, sure = "1", True  # vLLM's short aliases all take a value
            owned = owned_words(args, i + 1, takes)
            facts.append(
                Fact(
                    FactKind.ARG,
                    name,
                    token_location(path, token),
                    raw=text,
                    value=" ".join(t.text for t in owned) if owned else None,
                    origin=origin,
                    scanner=scanner,
                    version_hint=version_hint,
                    hint_source=hint_source,
                    spans=arg_spans(token, text, False, owned, syntax, sure),
                    group=group,
                )
            )
            names.add(name)
            i += 1 + len(owned)
            continue
        if positional_model and not seen_positional:
            seen_positional = True
            served = served or text
            facts.append(_model_fact(token, text, path, scanner, hint))
            names.add("model")
        i += 1
    if start is not None and entry != "appended args" and served is None and not unresolved:
        # a launch of its own that names no model (not words appended to another file's)
        facts = [_unsure_if_model(f) for f in facts]
    if group is not None:
        facts = [f if f.group == group else f.evolve(group=group) for f in facts]
    yield from with_model_settings(facts)
    if start is not None:
        yield Fact(
            FactKind.LAUNCH,
            entry,
            token_location(path, start),
            raw=entry,
            value=" ".join(unresolved) or None,
            origin=origin,
            args=frozenset(names),
            scanner=scanner,
            version_hint=version_hint,
            hint_source=hint_source,
            resolved=not unresolved,
            model=served,
            unknown_model=unknown_model if served is None else None,
            group=f"{start.line}:{start.column}",
        )


_MODEL_ID = re.compile(r"[A-Za-z0-9][\w.-]*/[\w.-]+")
"""A Hugging Face model id (``org/name``)."""

_NAMES_A_MODEL = ("model", "tokenizer", "name", "path", "dir", "lora", "adapter", "template", "config", "file")
"""Words in the names of flags whose value may well be a model id or a path."""


def _unsure_if_model(fact: Fact) -> Fact:
    """``fact`` with its removal made unsure (an unsafe fix) when the one word it takes looks
    like the model a launch that names no model was meant to serve (``vllm serve
    --num-scheduler-steps org/m``: argparse gives ``org/m`` to the flag): removing the flag
    with that word would leave the server on its default model."""
    if fact.kind != FactKind.ARG or fact.spans is None or not fact.spans.sure or not fact.value:
        return fact
    if " " in fact.value or not _MODEL_ID.fullmatch(fact.value) or any(w in fact.name for w in _NAMES_A_MODEL):
        return fact
    return replace(fact, spans=replace(fact.spans, sure=False, note=fact.spans.note or UNSURE_MODEL_NOTE))


_MAX_KEY_MISSES = 8
"""Keys of a ``--*-config`` JSON not found as written before the search for positions stops."""


def json_subkey_facts(
    name: str,
    flag: str,
    value: str,
    token: Token,
    path: str | None,
    scanner: str,
    origin: str,
    hint: tuple[str, str] | None = None,
) -> list[Fact]:
    """``arg`` facts for the top-level keys of a JSON object given to a ``--*-config`` flag.

    ``--compilation-config '{"level": 3}'`` -> a fact named ``compilation_config.level``
    (value ``3``), placed where ``"level"`` is written inside ``token`` (multi-line JSON
    included). Anything that is not a JSON object yields nothing.
    """
    text = value.strip()
    if not text.startswith("{"):
        return []
    try:
        data = json.loads(text)
    except (ValueError, RecursionError):
        return []
    if not isinstance(data, dict):
        return []
    written = token.written or token.text
    facts = []
    # Keys are looked for in the order they are written, each from where the one before was
    # found, with the rows counted as the search goes: many keys cost one pass over the text.
    # A key not written as such (escaped) keeps the word's position; after a few of those the
    # search stops, so that they cannot make it quadratic either.
    cursor = rows = misses = 0
    last_newline = -1
    for key, sub in data.items():
        line, column = token.line, token.column
        index = written.find(f'"{key}"', cursor) if misses < _MAX_KEY_MISSES else -1
        if index < 0:
            misses += 1
        else:
            rows += written.count("\n", cursor, index)
            newline = written.rfind("\n", cursor, index)
            last_newline = newline if newline >= 0 else last_newline
            cursor = index + len(key) + 2
            if rows:
                line, column = token.line + rows, index - last_newline
            else:
                column = token.column + index
        sub_text = sub if isinstance(sub, str) else json.dumps(sub)
        facts.append(
            Fact(
                FactKind.ARG,
                f"{name}.{key}",
                Location(token.path or path, line, column, line, column + len(key) + 2),
                raw=f"{flag}.{key}",
                value=sub_text,
                origin=origin,
                scanner=scanner,
                version_hint=hint[0] if hint else None,
                hint_source=hint[1] if hint else None,
                resolved=token.resolved,
            )
        )
    return facts


def with_model_settings(facts: list[Fact]) -> list[Fact]:
    """``facts`` of one launch, its ``model`` facts carrying the launch's
    :data:`~vllm_upgrade_check.model.facts.MODEL_SETTINGS` as ``name=value`` in ``args``
    (``--model-impl transformers`` -> ``model_impl=transformers``)."""
    last: dict[str, str] = {}  # a flag given twice: the last one wins, as in argparse
    for f in facts:
        if f.kind == FactKind.ARG and f.name in MODEL_SETTINGS and f.value:
            last[f.name] = f.value
    if not last:
        return facts
    settings = frozenset(f"{name}={value}" for name, value in last.items())
    return [replace(f, args=f.args | settings) if f.kind == FactKind.MODEL else f for f in facts]


def _model_fact(
    token: Token, value: str, path: str | None, scanner: str, hint: tuple[str, str] | None
) -> Fact:
    return Fact(
        FactKind.MODEL,
        value,
        token_location(path, token),
        raw=value,
        value=value,
        scanner=scanner,
        version_hint=hint[0] if hint else None,
        hint_source=hint[1] if hint else None,
    )


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def _is_value(token: Token) -> bool:
    text = token.text
    return not text.startswith("-") or _is_number(text) or text == "-"


def env_fact(
    name: str,
    value: str | None,
    path: str | None,
    line: int,
    column: int,
    scanner: str,
    origin: str = "env",
    raw: str | None = None,
    spans: Spans | None = None,
) -> Fact:
    """An ``env_var`` fact for ``name`` set to ``value`` at the given position.

    ``spans``: where a fix edits it; by default the name is taken to be written at
    ``line``/``column`` (a rename checks that it is).
    """
    if spans is None:
        spans = Spans(name=Span(line, column, line, column + len(name)))
    return Fact(
        FactKind.ENV_VAR,
        name,
        Location(path, line, column, line, column + len(name)),
        raw=raw or name,
        value=value,
        origin=origin,
        scanner=scanner,
        spans=spans,
    )


def missing_config_reason(value: str) -> str:
    """The reason of a note on ``--config VALUE`` naming no file of the scanned tree."""
    return (
        f"unresolved: --config {value.strip()} is no file of the scanned tree (a file the launch gets from"
        " elsewhere, such as a mount, is not followed): the engine args it sets were not checked"
    )
