"""Kustomize patches of launch args: JSON 6902 operations a kustomization applies to a target.

A kustomization's ``patchesJson6902:`` entries, and its ``patches:`` entries that name a
``target``, point at a patch file of JSON 6902 operations (RFC 6902: ``op``, ``path``,
``value``). An ``add`` or ``replace`` whose ``path`` is the args of a KServe predictor
(``/spec/predictor/model/args``, ``.../args/-``, ``.../args/3``) or of a pod container
(``/spec/template/spec/containers/0/args/-``, ``/spec/containers/0/args/3``) gives words of
that launch, checked where the patch file writes them. They count when the target runs vLLM:
a predictor's through its ``InferenceService`` (:data:`.kserve.SERVICE_KEY`), a container's
through :func:`container_references` (the ``kind/name/index`` of each container that launches
vLLM); their launch is merged into the target's (:data:`.base.APPENDED`).

A ``remove`` or ``replace`` of an element of those args by its index (``.../args/3``), or of
the whole list, takes base words out of the launch the overlay deploys: the overlay's launch is
read without them, and the base, a launch by itself that ``kubectl apply -k base`` deploys
without the overlay, keeps its findings, each removed flag's with a note naming the overlay
and no fix (see :mod:`.kustomize_removal`, which says what cannot be decided and why).

A strategic-merge patch file (``patchesStrategicMerge:`` items, or a ``patches:`` entry whose
file is a Kubernetes object) of a pod object merges its containers by name: the ``args`` it
writes for a container that launches vLLM in the base are that launch's args as the overlay
deploys it (:func:`strategic_merge_facts`), checked where the patch writes them, with the
``env`` it adds; keyed :data:`CONTAINER_NAME_KEY`. A ``command:`` it sets that runs vLLM
(``[vllm, serve, MODEL, ...]``, ``[python3, -m, vllm.entrypoints.openai.api_server, ...]``,
recognised as :func:`~.vllm_argv.find_launch` recognises a command line) is that container's
launch: its words, then the patch's ``args``, merged with the base's launch (the base's args
stay, as Kubernetes keeps ``args`` a patch does not set; what the base's own ``command:``
said is not taken out). A patch container that names a vLLM image of its own is a launch by
itself (read as a manifest), not merged.

A word an ``add`` of ``.../args/-`` writes as its scalar ``value`` stands for the whole
operation (:func:`~vllm_upgrade_check.parsing.yamlwords.stand_for`): a fix that removes its
flag removes the operation, its list item with one separator, in a block list or a flow (JSON)
one, and a flag and its value in two operations go together; never the value alone (``value:``
would be null, ``"value": }`` no JSON). Any other operation's scalar value (a ``replace``, an
``add`` at an index, any in a patch that addresses args by index) has no cut (:data:`.kustomize_ops.OP_NOTE`):
removing its operation would change what the patch writes or points at.

An inline ``patch:`` (a literal block read where it stands, a string read from its value)
is read by :mod:`.kustomize_inline`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import replace

import yaml

from vllm_upgrade_check.model.facts import Fact, FactKind, Skipped, Span, Spans
from vllm_upgrade_check.parsing.words import Token
from vllm_upgrade_check.parsing.yamlnodes import YamlProblem, documents, get, items, scalar
from vllm_upgrade_check.parsing.yamlwords import (
    scalar_word,
    sequence_items,
    sequence_words,
    stand_for,
)
from vllm_upgrade_check.sources.scanners.arg_facts import arg_facts
from vllm_upgrade_check.sources.scanners.base import (
    APPENDED,
    INDEXED_NOTE,
    Conditional,
    FileReference,
    SourceFile,
)
from vllm_upgrade_check.sources.scanners.kserve import SERVICE_KEY
from vllm_upgrade_check.sources.scanners.kustomize_containers import container_op_facts
from vllm_upgrade_check.sources.scanners.kustomize_images import (
    CONTAINER_KEY,
    CONTAINER_NAME_KEY,
    POD_KINDS,
    by_image,
    container_image,
    image_op_facts,
)
from vllm_upgrade_check.sources.scanners.kustomize_inline import (
    EMPTY_PATCH,
    InlinePatch,
    Mover,
    entries,
    inline_patches,
)
from vllm_upgrade_check.sources.scanners.kustomize_ops import (
    CONTAINER_ARGS,
    PREDICTOR_ARGS,
    split_ops,
    uncut,
    unsplit,
    valueless_ops,
)
from vllm_upgrade_check.sources.scanners.kustomize_overlay import images_base_words, overlay_base_words
from vllm_upgrade_check.sources.scanners.kustomize_removal import (
    Op,
    PatchedArgs,
    joined,
    removal_markers,
)
from vllm_upgrade_check.sources.scanners.kustomize_targets import (
    Target,
    target_objects,
    target_of,
    target_problem,
)

KUSTOMIZATION_NAMES = frozenset({"kustomization.yaml", "kustomization.yml", "Kustomization"})
"""The names ``kustomize build`` reads a directory's kustomization from."""

_WRITES = ("add", "replace", "remove")
"""The operations that change a launch's words (a patch of only ``test`` ones changes none)."""


def patch_entries(doc: yaml.Node, relpath: str) -> Iterator[tuple[Target, str, int]]:
    """``(target, patch file path, line of the entry)`` of each JSON 6902 patch a
    kustomization names by path (relative to the kustomization's folder, as kustomize reads
    it) for a target that names a kind, a name or a selector."""
    folder = relpath.rpartition("/")[0]
    for key in ("patchesJson6902", "patches"):
        for entry in items(get(doc, key)):
            target, path = target_of(get(entry, "target")), scalar(get(entry, "path"))
            if path and (target.given or target.name):
                yield target, joined(folder, path), entry.start_mark.line + 1


def strategic_merge_entries(doc: yaml.Node, relpath: str) -> Iterator[str]:
    """The patch files (joined to the kustomization's folder) a kustomization names that may
    be strategic-merge patches: ``patchesStrategicMerge:`` items and every ``patches:`` entry
    with a ``path`` (the file's content decides which kind of patch it is)."""
    folder = relpath.rpartition("/")[0]
    for entry in items(get(doc, "patchesStrategicMerge")):
        path = scalar(entry)
        if path and "\n" not in path:
            yield joined(folder, path)
    for entry in items(get(doc, "patches")):
        path = scalar(get(entry, "path"))
        if path:
            yield joined(folder, path)


Reader = Callable[[str], "SourceFile | None"]

ANY_NAME = "*"
"""The object name the first reading keys the words of an inline patch whose target names a
kind only (no Kubernetes object is named so: no :class:`~.base.Reference` ever matches it)."""


def kustomization_items(source: SourceFile, read: Reader | None) -> Iterator[Fact | FileReference | Conditional | Skipped]:
    """A kustomization's patch files as :class:`~.base.FileReference` items (so it is read
    again with them), and once ``read`` is given, the :class:`~.base.Conditional` facts of
    the launch words each patch writes (:func:`patch_facts`, :func:`strategic_merge_facts`)
    with the markers of the base words its JSON 6902 operations take out
    (:func:`patch_markers`). Inline patches (:func:`inline_patch_items`) are read with the
    first reading; their markers with the second."""
    try:
        docs = documents(source.text)
    except YamlProblem:
        return
    for doc in docs:
        for target, path, line in patch_entries(doc, source.relpath):
            yield FileReference(path, "manifest")
            why = target_problem(target)
            if why and read is None:
                reason = f"unresolved: the patch entry at line {line} ({path}) {why}; its words were not checked"
                yield Skipped(source.relpath, reason, configures_vllm=source.mentions_vllm(), line=line)
            patch = read(path) if read is not None else None
            if patch is not None and read is not None:
                for kind, name in target_objects(read, source.relpath, doc, target):
                    yield from by_image([*patch_facts(patch, kind, name), *image_op_facts(patch, kind, name)])
                    yield from patch_markers(read, source, doc, patch, kind, name)
                    keep = _rewritten(patch, kind, name)
                    yield from overlay_base_words(read, source.relpath, doc, image_op_facts(patch, kind, name), keep)
        for path in dict.fromkeys(strategic_merge_entries(doc, source.relpath)):
            yield FileReference(path, "manifest")
            patch = read(path) if read is not None else None
            if patch is not None:
                yield from strategic_merge_facts(patch)
        if read is not None:
            yield from images_base_words(read, source.relpath, doc)
        if read is None:  # inline patches: read once, with the kustomization's first reading
            if any(get(entry, "patch") is not None for entry in entries(doc)) or items(get(doc, "images")):
                yield FileReference(source.relpath, "manifest")  # read again: the markers need the base
            yield from inline_patch_items(source, doc)
        else:
            for inline in inline_patches(source, doc):
                if isinstance(inline, InlinePatch) and not inline.json6902:
                    yield from _smp_base_words(read, source.relpath, doc, inline.source)
                if not isinstance(inline, InlinePatch) or not inline.target.given or not inline.json6902:
                    continue
                for kind, name in target_objects(read, source.relpath, doc, inline.target):
                    if _open(inline.target):  # objects known once the base is read
                        found = [*patch_facts(inline.source, kind, name), *image_op_facts(inline.source, kind, name)]
                        yield from _moved([c for c in by_image(found) if isinstance(c, Conditional)], inline.mover)
                    yield from patch_markers(read, source, doc, inline.source, kind, name, inline.mover)
                    keep = _rewritten(inline.source, kind, name)
                    images = image_op_facts(inline.source, kind, name)
                    yield from overlay_base_words(read, source.relpath, doc, images, keep)


def _rewritten(patch: SourceFile, kind: str, name: str) -> frozenset[str]:
    """The keys of the launches whose base args a JSON 6902 patch takes out or rewrites (a
    ``remove``, a ``replace``, an op on the whole list): the overlay does not deploy them as
    the base writes them."""
    return frozenset(
        key
        for key, patched in patch_ops(patch, kind, name).items()
        if any(op.verb in ("remove", "replace") or op.index is None for op in patched.ops)
    )


def _smp_base_words(read: Reader, relpath: str, doc: yaml.Node, patch: SourceFile) -> Iterator[Conditional]:
    """The base words an inline strategic-merge patch that sets a container's vLLM image
    deploys with it (:func:`~.kustomize_overlay.overlay_base_words`), but for a container
    whose ``args`` or ``command`` the patch sets (they replace the base's)."""
    found = [c for c in strategic_merge_facts(patch, inline=True) if isinstance(c, Conditional)]
    keep = frozenset(c.key for c in found if any(f.kind == FactKind.LAUNCH for f in c.facts))
    yield from overlay_base_words(read, relpath, doc, found, keep)


def _open(target: Target) -> bool:
    """Whether ``target`` selects objects the first reading cannot name (a kind only, a
    selector, a pattern): their words are keyed by each object once the base is read."""
    return not (target.kind and target.name) or target.selects or target.patterned


def _first_targets(target: Target) -> list[tuple[str, str]]:
    """The ``(kind, name)`` the first reading keys an inline patch's words by: the target's
    when it names both, else :data:`ANY_NAME` (and, with no kind or a pattern of kinds, a
    predictor's and a pod's kind, so that the words of either path are read)."""
    if not _open(target):
        return [(target.kind, target.name)]
    known = target.kind in POD_KINDS or target.kind == "InferenceService"  # not a pattern
    kinds = [target.kind] if known else ["InferenceService", "Deployment"]
    return [(kind, ANY_NAME) for kind in kinds]


def inline_patch_items(source: SourceFile, doc: yaml.Node) -> Iterator[Fact | Conditional | Skipped]:
    """The :class:`~.base.Conditional` facts of the ``patches:`` entries of kustomization
    ``doc`` that write their patch inline (:func:`inline_patches`): a JSON 6902 patch when
    the entry names a ``target``, else (or when its text is a pod object) a strategic-merge
    patch. A literal block's words keep their line and column in the kustomization; a
    string's are placed by its :class:`Mover`, with :data:`INLINE_NOTE`."""
    for inline in inline_patches(source, doc):
        if isinstance(inline, Skipped):
            yield inline
            continue
        if inline.json6902:
            if inline.mover is None:  # a literal block: its lines are the kustomization's
                yield from valueless_ops(inline.source)
            # A target of a kind only: the objects it patches are known once the base is read
            # (the second reading keys its words by each one's name); read here under a name
            # no object has, which no file refers to, so that a reading of this file alone (a
            # fix's check) still sees the words it writes.
            found: list[Conditional | Skipped] = []
            for kind, name in _first_targets(inline.target):
                found.extend(patch_facts(inline.source, kind, name))
                found.extend(image_op_facts(inline.source, kind, name))
            whole = container_op_facts(inline.source)
            yield from (f if inline.mover is None else inline.mover.fact(f) for f in whole)
        else:
            found = list(strategic_merge_facts(inline.source, inline=True))
        found = list(by_image(found))
        yield from _moved([c for c in found if isinstance(c, Conditional)], inline.mover)
        mover = inline.mover
        yield from (c if mover is None else replace(c, line=mover.line(c.line or 1)) for c in found if isinstance(c, Skipped))


def _moved(found: Iterable[Conditional], mover: Mover | None) -> Iterator[Conditional]:
    """``found`` placed in the kustomization by ``mover`` (``None``: already in place)."""
    for c in found:
        yield c if mover is None else Conditional(c.key, tuple(map(mover.fact, c.facts)), c.refers)


def strategic_merge_facts(patch: SourceFile, inline: bool = False) -> Iterator[Conditional | Skipped]:
    """The launch words and env vars a strategic-merge patch file writes for each named
    container of a pod object (one :class:`~.base.Conditional` per container, keyed
    :data:`CONTAINER_NAME_KEY`, its launch an :data:`~.base.APPENDED` one at the ``args``
    key). A container with a vLLM image of its own is skipped: it is read as a launch, unless
    the patch is ``inline`` (in a kustomization): then its image is the container's
    (:func:`~.kustomize_images.container_image`)."""
    from vllm_upgrade_check.sources.scanners.images import is_vllm_image
    from vllm_upgrade_check.sources.scanners.vllm_argv import find_launch
    from vllm_upgrade_check.sources.scanners.yamlenv import env_facts

    try:
        docs = documents(patch.text)
    except YamlProblem:
        return
    for doc in docs:
        kind, name = scalar(get(doc, "kind")), scalar(get(get(doc, "metadata"), "name"))
        if kind not in POD_KINDS or not name:
            continue
        spec = get(doc, "spec")
        pod = spec if kind == "Pod" else get(get(spec, "template"), "spec")
        for container in items(get(pod, "containers")):
            cname = scalar(get(container, "name"))
            image = scalar(get(container, "image")) or ""
            if cname and inline:
                yield from container_image(patch, container, f"{CONTAINER_NAME_KEY}{kind}/{name}/{cname}")
            if not cname or (is_vllm_image(image) and not inline):
                continue
            facts: list[Fact] = []
            args, command = get(container, "args"), get(container, "command")
            tokens = sequence_words(patch.text, args) if isinstance(args, yaml.SequenceNode) else []
            if inline and isinstance(args, yaml.SequenceNode) and not args.value:
                line = args.start_mark.line + 1
                reason = f"{EMPTY_PATCH} {line} sets args: [] for container {cname}, which clears the base's args"
                yield Skipped(patch.relpath, reason, configures_vllm=False, line=line)
            launch = find_launch(sequence_words(patch.text, command)) if isinstance(command, yaml.SequenceNode) else None
            if launch is not None:  # the patch's command runs vLLM: its words, then the args
                start, positional = Token(APPENDED, launch.start.line, launch.start.column), launch.positional_model
                tokens = [*launch.args, *tokens]
            elif tokens:
                mark = args.start_mark if args is not None else None
                start = Token(APPENDED, mark.line + 1, mark.column + 1) if mark is not None else tokens[0]
                positional = False
            if launch is not None or tokens:
                facts.extend(
                    arg_facts(
                        tokens, patch.relpath, "kustomize", positional_model=positional, entry=APPENDED, start=start,
                        syntax="yaml",
                    )
                )
            facts.extend(env_facts(patch.text, get(container, "env"), patch.relpath, "kustomize"))
            if facts:
                yield Conditional(f"{CONTAINER_NAME_KEY}{kind}/{name}/{cname}", tuple(facts))


def patch_ops(patch: SourceFile, kind: str, name: str) -> dict[str, PatchedArgs]:
    """The operations of a JSON 6902 patch file of target ``kind``/``name`` on launch args,
    by the key of the launch they patch (:data:`~.kserve.SERVICE_KEY` or
    :data:`CONTAINER_KEY`), in order; none when the file is no YAML."""
    try:
        docs = documents(patch.text)
    except YamlProblem:
        return {}
    out: dict[str, PatchedArgs] = {}
    for doc in docs:
        places = sequence_items(patch.text, doc)
        for n, op in enumerate(items(doc)):
            where = scalar(get(op, "path")) or ""
            container: int | None = None
            if kind == "InferenceService" and (m := PREDICTOR_ARGS.fullmatch(where)):
                key, index = SERVICE_KEY + name, m.group(1)
            elif kind in POD_KINDS and (m := CONTAINER_ARGS.fullmatch(where)):
                key, index, container = f"{CONTAINER_KEY}{kind}/{name}/{m.group(1)}", m.group(2), int(m.group(1))
            else:
                continue
            mark = op.start_mark
            start = Token(APPENDED, mark.line + 1, mark.column + 1)
            found = out.setdefault(key, PatchedArgs(start, [], container))
            place = places[n] if n < len(places) else None
            found.ops.append(Op(scalar(get(op, "op")) or "", index, get(op, "value"), mark.line + 1, place))
    return out


def patch_facts(patch: SourceFile, kind: str, name: str) -> Iterator[Conditional]:
    """The launch words the ``add``/``replace`` operations of a JSON 6902 patch file of
    target ``kind``/``name`` write, in order, as one :class:`~.base.Conditional` per launch
    they patch (its launch an :data:`~.base.APPENDED` one, placed at the first operation on
    those args; none for a launch whose args only ``test``, ``move`` or ``copy`` operations
    name). An operation that addresses an element by its index gives the launch the note of
    :data:`~.base.INDEXED_NOTE`."""
    for key, patched in patch_ops(patch, kind, name).items():
        if not any(op.verb in _WRITES for op in patched.ops):
            continue
        tokens: list[Token] = []
        indexed = next((f"{patch.relpath}:{op.line}" for op in patched.ops if (op.index or "").isdigit()), "")
        removes = any(op.verb == "remove" for op in patched.ops)
        kept: list[Span] = []  # the scalar values of operations a removal must not take
        for op in patched.ops:
            if op.verb not in ("add", "replace"):
                continue
            if isinstance(op.value, yaml.SequenceNode):
                tokens.extend(sequence_words(patch.text, op.value))
            elif isinstance(op.value, yaml.ScalarNode):
                word = scalar_word(patch.text, op.value)
                if op.verb == "add" and op.index == "-" and not indexed and op.item is not None:
                    word = stand_for(word, op.item)  # the op goes with its word
                elif word.span is not None:
                    kept.append(word.span)
                tokens.append(word)
        start = patched.start
        facts = list(arg_facts(tokens, patch.relpath, "kustomize", positional_model=False, entry=APPENDED, start=start, syntax="yaml"))
        facts = [uncut(f, kept) for f in facts]
        if split_ops(patched.ops):
            facts = [unsplit(f) for f in facts]
        if indexed:  # the patched args' list keeps its positions: say so on the launch
            what = "removes some of them; " if removes else ""
            note = f"{INDEXED_NOTE} (kustomize patch {indexed}): {what}removing a word would shift what it patches"
            facts = [replace(f, spans=Spans(note=note)) if f.kind == FactKind.LAUNCH else f for f in facts]
        yield Conditional(key, tuple(facts))


def patch_markers(
    read: Reader,
    kustomization: SourceFile,
    doc: yaml.Node,
    patch: SourceFile,
    kind: str,
    name: str,
    mover: Mover | None = None,
) -> Iterator[Conditional]:
    """One :class:`~.base.Conditional` per launch a JSON 6902 patch file takes base words
    out of, holding the :data:`~.base.REMOVED` markers of :func:`~.kustomize_removal.removal_markers`
    (keyed as :func:`patch_facts` keys the words it writes; ``mover``: an inline patch
    string's, which places the patch's launch and lines in the kustomization)."""
    for key, patched in patch_ops(patch, kind, name).items():
        if not any(op.verb in _WRITES for op in patched.ops):
            continue  # no launch of the patch's to merge (see patch_facts)
        group = f"{patched.start.line}:{patched.start.column}"
        place = None
        if mover is not None:
            group, place = mover.group(group) or group, mover.line
        markers = tuple(removal_markers(read, kustomization, doc, patch, kind, name, patched, patch.relpath, group, place))
        if markers:
            yield Conditional(key, markers)
