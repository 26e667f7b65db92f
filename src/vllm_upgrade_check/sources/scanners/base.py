"""The scanner interface: a scanner reads one kind of file and yields facts or a skipped record.

Scanners never raise for a bad file: a file that cannot be parsed yields
:class:`~vllm_upgrade_check.model.facts.Skipped` with the reason.

A scanner's output for a file depends on that file alone, so results can be cached per file
and files scanned in any order. What links two files is yielded as data and joined by the
engine once every file is read: :class:`Conditional` facts count when some file yields the
matching :class:`Reference` (a ConfigMap and the ``envFrom`` naming it), and a
:class:`FileReference` asks for a file by path (a systemd ``EnvironmentFile=``).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from bisect import bisect_left, bisect_right
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from functools import cached_property
from typing import ClassVar, Generic, TypeAlias, TypeVar

from vllm_upgrade_check.model.facts import Fact, FactKind, Skipped, Span, Spans


@dataclass(frozen=True)
class SourceFile:
    """A file read once by the engine and handed to the scanners that accept it.

    Attributes:
        relpath: POSIX path relative to the scanned root (what reports show).
        text: the decoded text (UTF-8, or Latin-1 when it is not UTF-8).
        kind: the stand-in name the file is read as when no scanner takes its own name and
            its content says what it is (:func:`~vllm_upgrade_check.sources.sniff.sniff_kind`:
            ``requirements.txt`` for ``deps/gpu.txt``); ``""`` when read by its own name.
    """

    relpath: str
    text: str
    kind: str = ""

    @cached_property
    def name(self) -> str:
        """The name scanners decide by: :attr:`kind` when set, else the file's base name."""
        return self.kind or self.relpath.rsplit("/", 1)[-1]

    def mentions_vllm(self) -> bool:
        """``True`` when the text mentions vLLM at all (cheap pre-filter, case-insensitive)."""
        return self._mentions_vllm

    @cached_property
    def _mentions_vllm(self) -> bool:
        text = self.text
        return "vllm" in text or "VLLM" in text or "vllm" in text.lower()


INDEXED_NOTE = "a patch addresses these args by their index"
"""Start of the note an :data:`APPENDED` launch of a patch carries when one of its
operations names an element of the args by index (``/args/4``): the args it is merged into
must keep their positions, so a fix leaves their removal to a person."""


@dataclass(frozen=True)
class Conditional:
    """Facts that count only when some scanned file yields ``Reference(key)``.

    Attributes:
        key: what links them, e.g. ``configmap:engine-env``.
        facts: the facts, located in the file that yielded them.
        refers: the keys these facts refer to in turn once they count (a KServe
            ``InferenceService`` served by a vLLM runtime makes the patches of its args count).
    """

    key: str
    facts: tuple[Fact, ...]
    refers: tuple[str, ...] = ()


@dataclass(frozen=True)
class Reference:
    """A file's reference to the :class:`Conditional` facts of ``key`` (in any file).

    Attributes:
        key: what links them.
        launch: the ``group`` (``line:column``) of the vLLM launch of the referring file that
            the referred facts extend, or ``""``: a :class:`Conditional`'s launch fact named
            :data:`APPENDED` is then merged into that launch (:func:`appended_launch`).
        template: that launch is no launch by itself, only with the words appended to it
            (a KServe serving runtime's container); else it is one as well (a Deployment's
            container, which a kustomize overlay patches).
    """

    key: str
    launch: str = ""
    template: bool = False


APPENDED = "appended args"
"""Name of the launch fact of words appended to another file's launch (a KServe predictor's
``args``, which KServe appends to its serving runtime container's): it stands for no launch of
its own and is merged into the launch a :class:`Reference` with ``launch`` names."""


REMOVED = "removed args"
"""Name of the marker fact of a base flag a kustomize overlay's patch takes out of its launch
(:func:`~.kustomize_removal.removal_markers`): placed at the flag in the base, its ``args``
the arg names the overlay's launch no longer sets, its ``owner`` and ``group`` the path and
group of the patch's :data:`APPENDED` launch, its note what the base's finding says. It
stands for nothing itself: the engine drops it once read."""


def appended_launch(base: Fact, tail: Fact, owner: str | None = None, dropped: frozenset[str] = frozenset()) -> Fact:
    """The one launch of ``base`` (a launch fact) with the words of ``tail`` (an
    :data:`APPENDED` launch fact) after its own, placed where ``tail`` is (each
    referring file gets its own launch, in the group of its own args).

    Its ``args`` are both sides' (``base``'s without ``dropped``, the names an overlay's
    patch removes from it, see :data:`REMOVED`), its model the last one given (argparse keeps the last
    ``--model``), it is resolved when both sides are, and its unresolved words are both
    sides'. Its version is ``base``'s (the image that runs it) unless ``tail`` has its own.
    """
    unresolved = " ".join(v for v in (base.value, tail.value) if v)
    return replace(
        tail,
        name=base.name,
        raw=base.raw,
        value=unresolved or None,
        origin=base.origin,
        args=(base.args - dropped) | tail.args,
        resolved=base.resolved and tail.resolved,
        model=tail.model or base.model,
        unknown_model=None if tail.model or base.model else next(
            (m for m in (tail.unknown_model, base.unknown_model) if m is not None), None
        ),
        version_hint=tail.version_hint or base.version_hint,
        hint_source=tail.hint_source if tail.version_hint else base.hint_source,
        owner=owner or tail.owner,
        entry_at=base.entry_at or (base.location if base.location != tail.location else None),
    )


def removed_words(
    conditionals: Sequence[Conditional],
) -> tuple[dict[tuple[str | None, str | None], frozenset[str]], dict[tuple[str | None, str | None], str]]:
    """What the :data:`REMOVED` markers among ``conditionals`` (those that count) say:
    ``(path, group)`` of an :data:`APPENDED` launch -> the arg names its base loses, and
    ``(path, "@line:column")`` of a base arg -> the note its facts take (the overlays that
    remove it, joined)."""
    dropped: dict[tuple[str | None, str | None], frozenset[str]] = {}
    notes: dict[tuple[str | None, str | None], str] = {}
    for conditional in conditionals:
        for fact in conditional.facts:
            if fact.kind != FactKind.LAUNCH or fact.name != REMOVED:
                continue
            launch = (fact.owner, fact.group)
            dropped[launch] = dropped.get(launch, frozenset()) | fact.args
            at = (fact.location.path, f"@{fact.location.line}:{fact.location.column}")
            note = fact.spans.note if fact.spans is not None else ""
            if note and note not in notes.get(at, ""):
                notes[at] = f"{notes[at]}; {note}" if at in notes else note
    return dropped, notes


@dataclass(frozen=True)
class FileReference:
    """A file named by path that the yielding scanner reads, when the repository holds it.

    Attributes:
        path: the path as written (``/etc/vllm/vllm.env``); repository files are matched by
            path suffix (see :meth:`Scanner.read_referenced`).
        scanner: :attr:`Scanner.name` of the scanner that reads it.
        by: the root-relative path of the file that names it, when the scanner gives it
            (a requirements ``-r`` include: the includer); ``""`` otherwise.
        line: the 1-based line of ``by`` that names it (``0``: not given).
        option: how that line names it (``-r``, ``--constraint``), or ``""``.
    """

    path: str
    scanner: str
    by: str = ""
    line: int = 0
    option: str = ""


ScanItem: TypeAlias = "Fact | Skipped | Conditional | Reference | FileReference"
"""What :meth:`Scanner.scan` yields."""


class Scanner(ABC):
    """One kind of source. Subclasses set :attr:`name` and implement both methods."""

    name: ClassVar[str]
    """Short id shown in reports (``shell``, ``dockerfile``, ...)."""

    reads_yaml: ClassVar[bool] = False
    """``True`` for scanners that read a file as YAML (a suppression comment above a key then
    covers the key's whole value, see :func:`~vllm_upgrade_check.parsing.yamlnodes.key_blocks`)."""

    @abstractmethod
    def accepts(self, source: SourceFile) -> bool:
        """``True`` when this scanner should read ``source`` (by name, and cheap content checks)."""

    def accepts_name(self, name: str) -> bool | None:
        """Decide by file name alone, before the file is read: ``True`` (accepted), ``False``
        (never accepted, the file is not read) or ``None`` (only the content can tell)."""
        return None

    @abstractmethod
    def scan(self, source: SourceFile) -> Iterator[ScanItem]:
        """Yield the facts in ``source`` (and what links it to other files), or one
        :class:`Skipped` when it cannot be parsed. Depends on ``source`` alone."""

    def referenced_file_matches(self, relpath: str, wanted: str) -> bool:
        """Whether repository file ``relpath`` is the file a :class:`FileReference` of this
        scanner names as ``wanted``. The default: never."""
        return False

    def read_referenced(self, source: SourceFile) -> Iterator[Fact | Skipped | FileReference]:
        """The facts of a file one of this scanner's :class:`FileReference` items named, and
        the files it names in turn (followed once each). The default: none."""
        return iter(())

    def with_referenced(
        self, source: SourceFile, files: Sequence[str], read: Callable[[str], SourceFile | None]
    ) -> Sequence[Fact | Conditional] | None:
        """``source``'s facts read again with what the files its :class:`FileReference`
        items name say (a systemd unit's ``ExecStart=`` with its ``EnvironmentFile=``
        values; a kustomization's :class:`Conditional` facts of the patches it names), or
        ``None`` when the first reading stands (the default).

        Args:
            source: the file that named the references.
            files: every repository file's report path.
            read: reads one of ``files`` (``None`` when it cannot be read).
        """
        return None


def shared_words(
    facts: list[Fact],
    others: Sequence[tuple[Span, str]],
    path: str | None = None,
    elsewhere: Mapping[str, Sequence[tuple[Span, str]]] | None = None,
) -> list[Fact]:
    """``facts`` of vLLM launches, those written in words another program reads as well (an
    array two commands expand) without the spans a fix would edit: fixing them for vLLM
    would change the other program's command line too.

    ``others``: where the other programs' words are written in the file read (``path``);
    ``elsewhere``: by report path, where they read words of other files (a compose
    project's ``.env`` value another service interpolates). A fact placed in another file
    than ``path`` is compared with that file's words only: positions of two files never
    meet. Without ``path`` every fact is taken to be in the file read.

    Each fact asks a :class:`SpanIndex` of ``others`` (the first of them, in their order,
    that shares a character), so a script of many launches and many other commands costs
    its words, not launches x other words."""
    places = {k: v for k, v in (elsewhere or {}).items() if v}
    if (not others and not places) or all(fact.group is None for fact in facts):
        return facts  # nothing another program reads, or no launch's fact to compare with it
    indexes: dict[str | None, SpanIndex[str]] = {None: SpanIndex(others)}
    out = []
    for fact in facts:
        spans = fact.spans
        if fact.group is None:  # not a launch's (a pip install line is its own command)
            out.append(fact)
            continue
        where = fact.location.path if path is not None and fact.location.path != path else None
        if where is not None and where not in indexes:
            indexes[where] = SpanIndex(places.get(where, ()))
        touched = spans.cut or spans.name if spans is not None else None
        who = indexes[where].first_overlapping(touched) if touched is not None else None
        if who is None or spans is None:
            out.append(fact)
            continue
        note = f"written where {who} reads it too; change it by hand"
        if where is not None:
            note = f"written in {where} where {who} reads it too; change it by hand"
        out.append(replace(fact, spans=Spans(syntax=spans.syntax, note=note, sure=spans.sure)))
    return out


def overlap(a: Span, b: Span) -> bool:
    """Whether spans ``a`` and ``b`` share a character."""
    return a.start < b.end and b.start < a.end


T = TypeVar("T")


class SpanIndex(Generic[T]):
    """Spans with a value each (``[(span, value), ...]``), sorted by start once, asked which
    of them overlap or contain a span.

    A query walks back from the last span starting before the asked span ends and stops
    where no earlier span reaches it (a running maximum of the ends), so words that do not
    nest cost O(log n + answers) per query. Answers are the ones a scan of the list in its
    given order finds first.
    """

    def __init__(self, items: Sequence[tuple[Span, T]]) -> None:
        order = sorted(range(len(items)), key=lambda i: (items[i][0].line, items[i][0].column))
        self._starts = [(items[i][0].line, items[i][0].column) for i in order]
        self._ends = [(items[i][0].end_line, items[i][0].end_column) for i in order]
        self._rank = order
        self._values = [items[i][1] for i in order]
        self._reach: list[tuple[int, int]] = []
        for end in self._ends:
            self._reach.append(end if not self._reach or end > self._reach[-1] else self._reach[-1])

    def first_overlapping(self, span: Span) -> T | None:
        """The value of the first span (in the given order) sharing a character with
        ``span`` (:func:`overlap`), or ``None``."""
        start, end = span.start, span.end
        best: int | None = None
        for j in range(bisect_left(self._starts, end) - 1, -1, -1):
            if self._reach[j] <= start:
                break
            if self._ends[j] > start and (best is None or self._rank[j] < self._rank[best]):
                best = j
        return None if best is None else self._values[best]

    def contains(self, span: Span) -> bool:
        """Whether some span of the index holds all of ``span`` (its start at or before
        ``span``'s, its end at or after ``span``'s end)."""
        start, end = span.start, span.end
        for j in range(bisect_right(self._starts, start) - 1, -1, -1):
            if self._reach[j] < end:
                return False
            if self._ends[j] >= end:
                return True
        return False
