"""Frozen records of what the scanners saw.

A :class:`Fact` is one thing a scanner saw (a CLI flag given to a vLLM launch, an env var, a
requirement, an installed distribution, ...), placed by a :class:`Location` and, where a fix
may edit it, by its :class:`Spans`; a :class:`Skipped` says why a file was not read. The
matcher turns (rule, fact) pairs into findings (:mod:`.findings`).
"""

from __future__ import annotations

import re
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from enum import Enum
from typing import Any

from vllm_upgrade_check.model.evolve import evolve


class FactKind(str, Enum):
    """What a fact describes. The matcher pairs each rule's ``match.kind`` with these."""

    ARG = "arg"
    """A vLLM engine arg / CLI flag: ``name`` is the snake_case arg (``max_num_partial_prefills``),
    ``value`` its value as written (``None`` for a bare boolean flag)."""
    ENV_VAR = "env_var"
    """An environment variable set for vLLM: ``name`` the variable, ``value`` its value."""
    REQUIREMENT = "requirement"
    """A requirement in a requirements/pyproject/lock file or ``pip install`` line: ``name`` is the
    canonical distribution name, ``value`` the specifier (``==2.12.0``, ``""`` when unpinned)."""
    DISTRIBUTION = "distribution"
    """An installed distribution: ``name`` canonical name, ``value`` its version."""
    IMAGE = "image"
    """A container image reference: ``name`` the repository (``vllm/vllm-openai``), ``value`` the tag."""
    MODEL = "model"
    """The model a launch serves: ``name`` the Hugging Face id or path as written."""
    METRIC = "metric"
    """A Prometheus metric name used in a query or dashboard: ``name`` e.g. ``vllm:num_requests_running``."""
    IMPORT = "import"
    """A Python import from vLLM: ``name`` the module, ``value`` the imported name or ``None``."""
    RESPONSE_FIELD = "response_field"
    """A field of a vLLM API response read by client code: ``name`` e.g. ``reasoning_content``."""
    ARCHITECTURE = "architecture"
    """A model architecture a repository's own model config names (the ``architectures`` of a
    Hugging Face ``config.json``): ``name`` the class name (``LlamaForCausalLM``)."""
    LAUNCH = "launch"
    """A whole vLLM launch (``vllm serve``, ``LLM(...)``, a container running the vLLM image):
    ``name`` the entry point, ``args`` every arg name it sets; used by absence rules."""
    PLATFORM = "platform"
    """A property of the host: ``name`` one of ``python``, ``cuda_driver``, ``cuda_runtime``,
    ``gpu_compute_capability``, ``gpu_memory_gib``, ``glibc``, ``machine``; ``value`` as text."""


UNRESOLVED_NOTE = "unresolved: "
"""Start of a report note about a launch holding words the repository does not resolve."""

ENV_VALUE = re.compile(r"\$\{([A-Za-z_]\w*)\}")
"""The value of a Python keyword or argv word read from an environment variable with no
default (``os.environ["X"]``, ``os.getenv("X")``): ``${X}``, which no value check judges."""

EXEC_LITERAL = " (exec form: Docker does not expand variables there, so vLLM is given these words as written)"
"""End of the unresolved words of a Dockerfile exec-form launch whose words hold ``$NAME``
(``CMD ["$FLAGS"]``): no variable is read, the word reaches vLLM as it is written."""

CUT_NOTE = "cut by a comment: "
"""Start of ``Spans.note`` of a launch that a comment ends where its author continued it
(``CUT_NOTE + "3:3 --swap-space 4 --port 8000"``: where the comment stands, then the words
bash runs as a command of their own)."""

OVERLAY_NOTE = "kustomize overlay "
"""Start of the ``Spans.note`` of a base arg a kustomize overlay's patch removes from the launch
it deploys (:mod:`~vllm_upgrade_check.sources.scanners.kustomize_removal`); reports show it
under the finding."""

UNSURE_MODEL_NOTE = "the word it takes looks like the model this launch names nowhere else"
"""``Spans.note`` of a flag whose one value word looks like a model id in a launch that names
no model (``vllm serve --num-scheduler-steps org/m``): removing both would serve vLLM's
default model, so the removal is unsafe."""

VENDOR_ENTRY = "vendor image "
"""Start of the entry point of a launch read from a vendor's image whose repository names vLLM
(``vendor image registry.example.net/ml-platform/vllm-rocm``): its release is unknown."""

UNKNOWN_IMAGE_ENTRY = "unknown image "
"""Start of the entry point of a ``docker|podman run`` whose image word the repository does not
resolve (``docker run "$IMAGE" --model m``: ``unknown image docker run``) while its words
start as vLLM's server's do: whether it runs vLLM, and which release, is not known, so its
flags are not checked and the launch is named unresolved."""

LOCKED = "a lock file is written by its tool: make it again once the vLLM requirement is set (uv lock, poetry lock, pdm lock)"
"""``Spans.note`` of a pin read from a lock file: it moves when the lock is made again, not
by an edit (and is no blocker of the bump)."""

HASHED = (
    "the requirement is pinned by hash (--hash): another version needs its hashes, so compile "
    "the file again (pip-compile --generate-hashes, uv pip compile --generate-hashes)"
)
"""``Spans.note`` of a requirement with ``--hash`` options (a compiled requirements file):
like a lock file's pin, it moves when the file is compiled again, not by an edit."""

COMPILED = frozenset({LOCKED, HASHED})
"""The notes of pins a tool writes (lock files, hash-pinned requirements): ``fix`` leaves them
to that tool, and they do not hold the bump of the files they are compiled from."""

MODEL_SETTINGS = ("model_impl",)
"""Engine args a ``model`` fact carries from its launch (``name=value`` in ``Fact.args``):
those that change which implementation serves the model (``--model-impl
{auto,vllm,transformers}``, vllm/engine/arg_utils.py)."""


@dataclass(frozen=True, order=True, slots=True)
class Location:
    """Where a fact was seen.

    Attributes:
        path: POSIX path relative to the scanned root, or ``None`` for facts from the
            environment (an installed distribution, the GPU).
        line: 1-based line (SARIF ``region.startLine``), or ``None`` when not line-based.
        column: 1-based column in characters, or ``None``.
        end_line: 1-based last line of the text this fact covers, if known.
        end_column: 1-based column just past the covered text, if known.
    """

    path: str | None
    line: int | None = None
    column: int | None = None
    end_line: int | None = None
    end_column: int | None = None

    def __str__(self) -> str:
        if self.path is None:
            return "<environment>"
        parts = [self.path]
        if self.line is not None:
            parts.append(str(self.line))
            if self.column is not None:
                parts.append(str(self.column))
        return ":".join(parts)


@dataclass(frozen=True, order=True, slots=True)
class Span:
    """A stretch of a file's text, as a scanner found it.

    From 1-based ``line``/``column`` up to, not including, ``end_line``/``end_column``;
    columns count characters. Lines are those of the text the scanners read (CRLF read as
    LF, no BOM), so a span names the same characters in the file as written.
    """

    line: int
    column: int
    end_line: int
    end_column: int

    @property
    def start(self) -> tuple[int, int]:
        """``(line, column)`` of the first character."""
        return self.line, self.column

    @property
    def end(self) -> tuple[int, int]:
        """``(line, column)`` just past the last character."""
        return self.end_line, self.end_column

    @staticmethod
    def between(start: tuple[int, int], end: tuple[int, int]) -> Span:
        """The span from point ``start`` up to point ``end`` (each ``(line, column)``)."""
        return Span(start[0], start[1], end[0], end[1])

    def to_row(self) -> list[int]:
        """``[line, column, end_line, end_column]``."""
        return [self.line, self.column, self.end_line, self.end_column]


@dataclass(frozen=True, slots=True)
class Spans:
    """Where a fix may edit a fact, as the scanner that read the fact found it: the fixer
    turns these into edits and parses nothing itself.

    Attributes:
        name: the name as written: a flag without ``=value`` and quotes, a keyword, a key,
            an env var, a metric, a response field, a distribution name.
        value: the value as written, inside its quotes (a flag's value, a requirement's
            specifier, an image's tag).
        cut: what to delete to remove the fact together with the value it owns and one
            separator (a comma, a blank, a ``\\`` continuation, a YAML list item's whole
            line); ``None`` when the scanner cannot tell (the removal is left to a person).
        version: where the version a vLLM pin or image names is written: in the reference,
            in a Helm ``tag:``, in the default of the Dockerfile ``ARG`` it comes from.
        syntax: the syntax new text at ``value`` is written in, for quoting it: ``shell``,
            ``yaml``, ``json``, ``python``, ``toml``, ``requirements`` or ``""`` (as is).
        note: why the version cannot be set where it is written (``ARG V is used 2 times in
            this file``), or ``""``.
        word: the whole word ``value`` is part of, when new text must be quoted as one word
            with it (a requirement in a shell line: ``'torch>=2.13'``, not ``torch'>=2.13'``).
        sure: ``False`` when the scanner had to guess what the fact owns (a flag whose arity
            no release states took the next word): a removal is then an unsafe fix.
        emptied: what to write over ``listed`` when the cuts of the facts of one list
            (this one's and its neighbours') take every element of a list whose absence
            means something else (a YAML block list left with no item reads as null, the
            image's default command: ``args: []`` keeps it empty).
        listed: where that list is written (for a block list, from just after its key's
            colon), or ``None``: the fixer groups the cuts of one list by it.
        left: what remains of ``listed`` once every element is cut (the key line's comment,
            comment lines between items): the cuts took every element when that is what
            they leave.
    """

    name: Span | None = None
    value: Span | None = None
    cut: Span | None = None
    version: Span | None = None
    syntax: str = ""
    note: str = ""
    sure: bool = True
    word: Span | None = None
    emptied: str = ""
    listed: Span | None = None
    left: str = ""

    def to_row(self) -> list[Any]:
        """The spans as one flat JSON-ready list (see :meth:`from_row`)."""
        return [
            None if self.name is None else self.name.to_row(),
            None if self.value is None else self.value.to_row(),
            None if self.cut is None else self.cut.to_row(),
            None if self.version is None else self.version.to_row(),
            self.syntax,
            self.note,
            self.sure,
            None if self.word is None else self.word.to_row(),
            self.emptied,
            None if self.listed is None else self.listed.to_row(),
            self.left,
        ]

    @staticmethod
    def from_row(row: Sequence[Any]) -> Spans:
        """The :class:`Spans` :meth:`to_row` gave.

        Raises:
            ValueError: a row of the wrong shape.
        """
        if len(row) != 11:
            raise ValueError("a spans row has 11 values")
        spans = [None if r is None else Span(*r) for r in (*row[:4], row[7], row[9])]
        return Spans(spans[0], spans[1], spans[2], spans[3], row[4], row[5], row[6], spans[4], row[8], spans[5], row[10])


@dataclass(frozen=True, slots=True)
class Fact:
    """One thing a scanner saw.

    Attributes:
        kind: what it is (see :class:`FactKind`).
        name: the normalised subject: snake_case engine arg, env var name, canonical
            distribution name, metric name, module path, ...
        location: where it was seen.
        raw: the text as written in the file (``--max_num_partial_prefills=3``); shown to users.
        value: the value as written, if any (flag value, specifier, version, tag).
        origin: which syntax it came from: ``cli`` (a command line), ``python`` (a keyword of
            ``LLM(...)``/``EngineArgs(...)``), ``config`` (a key of a ``--config`` YAML),
            ``env`` (the running environment), ``file`` (a dependency file), ...
        aliases: other names the same fact answers to: ``--no-calculate-kv-scales`` has
            name ``no_calculate_kv_scales`` and alias ``calculate_kv_scales``.
        args: for ``launch`` facts, every arg name the launch sets; for ``model`` facts,
            ``name=value`` of the launch's :data:`MODEL_SETTINGS` (``model_impl=transformers``).
        scanner: the scanner that produced it (``shell``, ``dockerfile``, ...).
        version_hint: the vLLM version this particular launch runs, when the same file says
            so (an image tag ``vllm/vllm-openai:v0.24.0``); ``None`` otherwise.
        hint_source: where ``version_hint`` came from, for the report.
        resolved: ``False`` when the value came through indirection that could not be
            resolved from the repository itself (for a ``response_field``: when the file does
            not say that the response read is a vLLM server's; such a finding is at most a
            warning; for a Python keyword: when its value is no literal, ``dtype=DT``, so
            that its value is not judged).
        model: for ``launch`` facts, the model the launch serves, when the scanner knows it.
        unknown_model: for ``launch`` facts, the word (as written) standing where the served
            model is written (the first positional of ``vllm serve``, the value of
            ``--model``) when the repository does not resolve it (``"$MODEL"``); it is also
            among the unresolved words of ``value``; ``""`` when that word may expand to
            several (an unquoted ``$VLLM_ARGS``: the model and flags). ``None`` otherwise.
        spans: where a fix may edit the fact (see :class:`Spans`); ``None`` when the scanner
            recorded none (the fact cannot be fixed mechanically).
        group: the launch the fact belongs to (``line:column`` where it starts), so that the
            flags of one launch are told from another's in the same file; ``None`` for facts
            of no launch.
        owner: what in the file reads it (``service api``, ``container engine``), where a
            file holds several such and one YAML anchor may be read by more than one; ``None``
            when the file says nothing of the kind.
        entry_at: for a launch merged of words written in two files (a KServe predictor's
            args appended to its serving runtime's container), where the entry point is
            written (the runtime's command) when that is not where the launch is placed;
            ``None`` otherwise. Set where launches are linked, in the process that reports
            them: not part of :meth:`to_row` (no scanner writes it).
    """

    kind: FactKind
    name: str
    location: Location
    raw: str = ""
    value: str | None = None
    origin: str = "file"
    aliases: tuple[str, ...] = ()
    args: frozenset[str] = frozenset()
    scanner: str = ""
    version_hint: str | None = None
    hint_source: str | None = None
    resolved: bool = True
    model: str | None = None
    unknown_model: str | None = None
    spans: Spans | None = None
    group: str | None = None
    owner: str | None = None
    entry_at: Location | None = None

    def answers_to(self, name: str) -> bool:
        """Return ``True`` if ``name`` is this fact's name or one of its aliases."""
        return name == self.name or name in self.aliases

    def evolve(self, **changes: Any) -> Fact:
        """A copy with ``changes`` (field name -> value): ``dataclasses.replace`` without its
        per-call overhead (every fact of a file that pins vLLM gets its hint, every fact
        of a launch its group).

        Raises:
            TypeError: a name that is not a field.
        """
        return evolve(self, **changes)

    def to_row(self) -> tuple[Any, ...]:
        """The fact as one flat tuple of plain values (the kind as its value, the location
        inlined, ``args`` sorted, the spans as :meth:`Spans.to_row`): what worker processes send back and the scan cache
        stores. :meth:`from_row` reads it back."""
        loc = self.location
        return (
            self.kind.value,
            self.name,
            loc.path,
            loc.line,
            loc.column,
            loc.end_line,
            loc.end_column,
            self.raw,
            self.value,
            self.origin,
            self.aliases,
            tuple(sorted(self.args)),
            self.scanner,
            self.version_hint,
            self.hint_source,
            self.resolved,
            self.model,
            None if self.spans is None else self.spans.to_row(),
            self.group,
            self.owner,
            self.unknown_model,
        )

    @staticmethod
    def from_row(row: Sequence[Any]) -> Fact:
        """The fact :meth:`to_row` gave (sequences may come back as lists, e.g. from JSON).

        A warm scan of a large repository rebuilds tens of thousands of facts this way.

        Raises:
            ValueError: a row of the wrong length; KeyError: an unknown kind.
        """
        if len(row) != _ROW_LENGTH:
            raise ValueError(f"a fact row has {_ROW_LENGTH} values, not {len(row)}")
        path, origin, scanner, version_hint, hint_source = row[2], row[9], row[12], row[13], row[14]
        # Rows read back from JSON carry a fresh copy of every string; the few that repeat
        # across a file's facts (or a whole repository's) are shared again, as they were when
        # the scanners made them. Fields are set as the frozen dataclass __init__ sets them,
        # without its per-call overhead.
        location = object.__new__(Location)
        _set(location, "path", None if path is None else sys.intern(path))
        _set(location, "line", row[3])
        _set(location, "column", row[4])
        _set(location, "end_line", row[5])
        _set(location, "end_column", row[6])
        fact = object.__new__(Fact)
        _set(fact, "kind", _KINDS[row[0]])
        _set(fact, "name", row[1])
        _set(fact, "location", location)
        _set(fact, "raw", row[7])
        _set(fact, "value", row[8])
        _set(fact, "origin", sys.intern(origin))
        _set(fact, "aliases", tuple(row[10]))
        _set(fact, "args", frozenset(row[11]))
        _set(fact, "scanner", sys.intern(scanner))
        _set(fact, "version_hint", None if version_hint is None else sys.intern(version_hint))
        _set(fact, "hint_source", None if hint_source is None else sys.intern(hint_source))
        _set(fact, "resolved", row[15])
        _set(fact, "model", row[16])
        _set(fact, "spans", None if row[17] is None else Spans.from_row(row[17]))
        _set(fact, "group", row[18])
        _set(fact, "owner", None if row[19] is None else sys.intern(row[19]))
        _set(fact, "unknown_model", row[20])
        _set(fact, "entry_at", None)  # never stored: see the attribute
        return fact

    def __reduce__(self) -> tuple[Any, ...]:
        # Pickled as one flat row (worker processes send facts back this way): several times
        # faster to load than the default, which rebuilds the enum and the location one by one.
        return (Fact.from_row, (self.to_row(),))


_ROW_LENGTH = 21
"""Values in :meth:`Fact.to_row`: the fields of :class:`Fact` with :class:`Location`'s inlined."""

_KINDS = {kind.value: kind for kind in FactKind}


_set = object.__setattr__


@dataclass(frozen=True)
class Skipped:
    """A file (or environment source) that was not read, and why.

    Attributes:
        path: POSIX path relative to the scanned root, or a description such as
            ``<environment>``.
        reason: one sentence, e.g. ``YAML syntax error at line 3: ...``.
        configures_vllm: ``True`` when the file evidently configures vLLM (it mentions
            vLLM); the CI gate then fails closed.
        line: 1-based line the problem is on, if known.
        column: 1-based column on ``line`` the parser stopped at (a syntax error), if known.
    """

    path: str
    reason: str
    configures_vllm: bool = False
    line: int | None = None
    column: int | None = None

    @property
    def where(self) -> str:
        """``:LINE:COLUMN``, ``:LINE`` or ``""``: what follows the path in a report."""
        if not self.line:
            return ""
        return f":{self.line}:{self.column}" if self.column else f":{self.line}"
