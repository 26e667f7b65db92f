"""What a kustomize JSON 6902 patch takes out of its base's launch args.

An overlay's ``remove`` (or ``replace``) of ``/spec/template/spec/containers/0/args/3`` or
``/spec/predictor/model/args/2`` takes a word of the base's args out of the launch that
overlay deploys. :func:`removal_markers` finds that base the way ``kustomize build`` does:
through the kustomization's ``resources:`` (and legacy ``bases:``), a folder by its
kustomization file, down to the one object of the patch's target kind and name; it applies
the patch's operations on that object's args in order (RFC 6902: indexes move as elements
are added and removed) and compares the base's flags before and after.

What users expect, and what this gives: the overlay's launch is read without the words it
removes (its merged launch lacks their arg names, so a rule on a default sees the flag
unset there). The base stays a launch by itself, since ``kubectl apply -k base`` deploys it
without the overlay, and no file says it is never deployed alone: its findings stay, each
removed flag's with a note naming the overlay and the operation, and with no cut (the
overlay's index would then point at another word, so a fix leaves it to a person). Where
the base cannot be found exactly once, or a kustomization between the overlay and the base
patches it too, nothing is subtracted and the base's args keep the note of
:data:`~.base.INDEXED_NOTE` that every indexed patch gives.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, replace

import yaml

from vllm_upgrade_check.model.facts import OVERLAY_NOTE, Fact, FactKind, Location, Spans
from vllm_upgrade_check.parsing.words import Token
from vllm_upgrade_check.parsing.yamlnodes import YamlProblem, documents, get, items, scalar
from vllm_upgrade_check.parsing.yamlwords import scalar_word, sequence_words
from vllm_upgrade_check.sources.scanners.arg_facts import arg_facts
from vllm_upgrade_check.sources.scanners.base import REMOVED, SourceFile

KUSTOMIZATION_NAMES = ("kustomization.yaml", "kustomization.yml", "Kustomization")
"""The names ``kustomize build`` reads a directory's kustomization from, in its order."""

MAX_DEPTH = 8
"""Most kustomizations followed from an overlay down to its base."""

Reader = Callable[[str], "SourceFile | None"]


@dataclass(frozen=True)
class Op:
    """One JSON 6902 operation on a launch's args.

    Attributes:
        verb: ``add``, ``replace``, ``remove``, ...
        index: ``-``, a decimal index, or ``None`` for the whole list.
        value: the operation's ``value`` node, if any.
        line: the 1-based line of the operation in its patch.
        item: the operation as an element of its list (:func:`~.yamlwords.sequence_items`),
            what a removal of the word its scalar ``value`` writes takes out.
    """

    verb: str
    index: str | None
    value: yaml.Node | None
    line: int
    item: Token | None = None


@dataclass(frozen=True)
class PatchedArgs:
    """The operations a patch makes on the args of one launch of its target.

    Attributes:
        start: where the launch the patch adds to starts (its first operation).
        ops: the operations, in order.
        container: the container index of a pod target, ``None`` for a KServe predictor.
    """

    start: Token
    ops: list[Op]
    container: int | None


def joined(folder: str, path: str) -> str:
    """``path`` (as a kustomization writes it, relative to ``folder``) as a root-relative
    path, ``..`` and ``.`` taken out (``..`` above the root stays at the root)."""
    parts = [p for p in (folder.split("/") if folder else []) if p]
    for part in path.split("/"):
        if part == "..":
            if parts:
                parts.pop()
        elif part not in ("", "."):
            parts.append(part)
    return "/".join(parts)


def _patches(doc: yaml.Node) -> bool:
    """Whether kustomization ``doc`` patches objects itself (any patch entry: what it
    targets is not looked into)."""
    return any(items(get(doc, key)) for key in ("patches", "patchesJson6902", "patchesStrategicMerge"))


def base_objects(
    read: Reader, relpath: str, doc: yaml.Node, kind: str, name: str, depth: int = 0, patched: bool = False
) -> list[tuple[SourceFile, yaml.Node]] | None:
    """The objects of kind ``kind`` named ``name`` (``""``: any kind, any name) that kustomization
    ``doc`` (file ``relpath``) takes in through its ``resources:``/``bases:``, each with its
    file; ``None`` when a kustomization on the way patches objects too (their args may differ
    from what the file says; ``patched``: read through it all the same, for what names the
    objects have) or the chain is deeper than :data:`MAX_DEPTH`. Remote resources are not read."""
    if depth > MAX_DEPTH:
        return None
    folder = relpath.rpartition("/")[0]
    found: list[tuple[SourceFile, yaml.Node]] = []
    for key in ("resources", "bases"):
        for entry in items(get(doc, key)):
            path = scalar(entry)
            if not path or "://" in path or path.startswith(("github.com/", "git@")):
                continue
            where = joined(folder, path)
            source = read(where)
            if source is not None:
                found.extend((source, d) for d in _docs(source) if _named(d, kind, name))
                continue
            for file in KUSTOMIZATION_NAMES:
                nested = read(f"{where}/{file}" if where else file)
                if nested is None:
                    continue
                for inner in _docs(nested):
                    if _patches(inner) and not patched:
                        return None
                    deeper = base_objects(read, nested.relpath, inner, kind, name, depth + 1, patched)
                    if deeper is None:
                        return None
                    found.extend(deeper)
                break
    return found


def _docs(source: SourceFile) -> tuple[yaml.Node, ...]:
    try:
        return documents(source.text)
    except YamlProblem:
        return ()


def _named(doc: yaml.Node, kind: str, name: str) -> bool:
    """Whether ``doc`` is of ``kind`` (``""``: any) and named ``name`` (``""``: any)."""
    return (not kind or scalar(get(doc, "kind")) == kind) and (not name or scalar(get(get(doc, "metadata"), "name")) == name)


def _args_node(doc: yaml.Node, kind: str, container: int | None) -> yaml.Node | None:
    """The args list of the launch a patch addresses in base object ``doc``."""
    if container is None:
        return get(get(get(get(doc, "spec"), "predictor"), "model"), "args")
    spec = get(doc, "spec")
    pod = spec if kind == "Pod" else get(get(spec, "template"), "spec")
    containers = items(get(pod, "containers"))
    return get(containers[container], "args") if container < len(containers) else None


Element = tuple[int, Token]
"""A word of the patched list: ``(index in the base list, word)``; ``-1`` for a word the patch writes."""


def applied(base: list[Token], ops: Sequence[Op], patch: SourceFile) -> tuple[list[Element], dict[int, int]] | None:
    """The args list once ``ops`` are applied to ``base`` (RFC 6902, in order), and the
    patch line of the operation that took out each base word (by its base index); ``None``
    when an operation cannot be applied as written (an index past the end, a list where a
    word goes, an operation kustomize would refuse)."""
    now: list[Element] = list(enumerate(base))
    gone: dict[int, int] = {}

    def drop(element: Element, line: int) -> None:
        if element[0] >= 0:
            gone.setdefault(element[0], line)

    for op in ops:
        if op.verb == "test":
            continue
        if op.verb not in ("add", "replace", "remove"):
            return None  # move / copy: where words go is not followed
        if op.index is None:  # the whole list
            for element in now:
                drop(element, op.line)
            if op.verb == "remove":
                now = []
                continue
            if not isinstance(op.value, yaml.SequenceNode):
                return None
            now = [(-1, replace(t, path=patch.relpath)) for t in sequence_words(patch.text, op.value)]
            continue
        word: Element | None = None
        if op.verb != "remove":
            if not isinstance(op.value, yaml.ScalarNode):
                return None
            word = (-1, replace(scalar_word(patch.text, op.value), path=patch.relpath))
        if op.index == "-":
            if op.verb != "add" or word is None:
                return None
            now.append(word)
            continue
        at = int(op.index)
        if at > len(now) or (op.verb != "add" and at == len(now)):
            return None
        if op.verb == "add" and word is not None:
            now.insert(at, word)
        elif op.verb == "replace" and word is not None:
            drop(now[at], op.line)
            now[at] = word
        else:
            drop(now.pop(at), op.line)
    return now, gone


def removal_markers(
    read: Reader,
    kustomization: SourceFile,
    doc: yaml.Node,
    patch: SourceFile,
    kind: str,
    name: str,
    patched: PatchedArgs,
    launch_path: str,
    group: str,
    place: Callable[[int], int] | None = None,
) -> Iterator[Fact]:
    """One :data:`~.base.REMOVED` marker fact per base flag an overlay's patch takes out of
    (or changes the words of) the launch ``patched`` addresses: placed at that flag in the
    base, its ``args`` the arg names the overlay's launch no longer sets, its ``owner`` and
    ``group`` those of the patch's launch (``launch_path``, ``group``), its note naming the
    overlay and the operation (its line in the patch, or ``place`` of it: where an inline
    patch's line is written in its kustomization). None when the base is not found exactly once (see
    :func:`base_objects`) or the operations cannot be applied to its args."""
    if not any(op.verb in ("remove", "replace") or op.index is None for op in patched.ops):
        return
    objects = base_objects(read, kustomization.relpath, doc, kind, name)
    if not objects or len(objects) != 1:
        return
    source, obj = objects[0]
    node = _args_node(obj, kind, patched.container)
    base = sequence_words(source.text, node)
    if not isinstance(node, yaml.SequenceNode) or len(base) != len(node.value):
        return
    result = applied(base, patched.ops, patch)
    if result is None:
        return
    now, gone = result
    if not gone:
        return
    before = _flags(base, source.relpath)
    after = _flags([t for _i, t in now], source.relpath)
    kept = {(f.location.line, f.location.column): f for f in after if f.location.path == source.relpath}
    names = frozenset(n for f in before for n in (f.name, *f.aliases)) - frozenset(
        n for f in after for n in (f.name, *f.aliases)
    )
    lines = sorted(set(gone.values()))
    for fact in before:
        same = kept.get((fact.location.line, fact.location.column))
        if same is not None and same.value == fact.value:
            continue
        at = next((gone[i] for i, t in enumerate(base) if i in gone and _at(t, fact)), lines[0])
        at = place(at) if place is not None else at
        what = "removes this arg" if same is None else "changes the words this arg owns"
        note = (
            f"{OVERLAY_NOTE}{kustomization.relpath} {what} ({patch.relpath}:{at}); the base keeps it "
            "where it is deployed without the overlay, and the patch's index would point at another word once "
            "it is removed here: change it by hand"
        )
        yield Fact(
            FactKind.LAUNCH,
            REMOVED,
            Location(fact.location.path, fact.location.line, fact.location.column),
            raw=fact.raw,
            args=names,
            scanner="kustomize",
            spans=Spans(note=note),
            group=group,
            owner=launch_path,
        )


def _flags(tokens: list[Token], path: str) -> list[Fact]:
    return [f for f in arg_facts(tokens, path, "kustomize", positional_model=False, syntax="yaml") if f.kind == FactKind.ARG]


def _at(token: Token, fact: Fact) -> bool:
    line, column = fact.location.line, fact.location.column
    span = token.span
    return (token.line, token.column) == (line, column) or (
        span is not None and column is not None and span.line == line and span.column <= column < span.end_column
    )
