"""Gitignore-style patterns matched in time linear in the path's length.

pathspec's default ("simple") backend compiles each pattern to a backtracking Python regular
expression: ``*a*a*a*a*a*b`` against a long name costs O(n^(k+1)). Here every pattern set is
compiled with pathspec's ``re2`` backend (google-re2, an automaton: no backtracking), so the
cost of one check is bounded by the path's length times the size of the compiled set.

RE2 refuses a set whose automaton would exceed its memory budget. Patterns are compiled in
chunks; a chunk RE2 refuses is split until the one pattern it cannot take is found, and that
pattern is left out and reported in :attr:`GitIgnoreRules.rejected` (with git's own invalid
patterns such as a lone trailing ``\\``). Git's precedence holds across chunks: the last
pattern that matches decides.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # pragma: no cover - imported where patterns are compiled (a run without any never loads them)
    import pathspec

CHUNK = 512
"""Patterns compiled into one RE2 set at first (a refused chunk is halved)."""


class GitIgnoreRules:
    """Compiled gitignore-style patterns (``.gitignore`` lines, ``--exclude`` values).

    Args:
        lines: the pattern lines, in file order (blank lines and ``#`` comments allowed).

    Attributes:
        rejected: ``(1-based line number, pattern, reason)`` of each line left out: an invalid
            pattern, or one whose automaton is over RE2's memory budget.
    """

    def __init__(self, lines: Iterable[str]) -> None:
        numbered = list(enumerate(lines, start=1))
        self.rejected: list[tuple[int, str, str]] = []
        self._specs: list[pathspec.GitIgnoreSpec] = []
        for start in range(0, len(numbered), CHUNK):
            self._compile(numbered[start : start + CHUNK])

    def _compile(self, chunk: Sequence[tuple[int, str]]) -> None:
        if not chunk:
            return
        import pathspec
        import re2

        try:
            self._specs.append(pathspec.GitIgnoreSpec.from_lines([line for _, line in chunk], backend="re2"))
            return
        except ValueError as exc:  # pathspec's GitIgnorePatternError: git would ignore the line
            reason = f"invalid pattern ({exc})"
        except re.error as exc:  # a class git matches nothing with, such as [z-a]
            reason = f"invalid pattern ({exc})"
        except re2.error:
            reason = "too complex to match in linear time (over RE2's memory budget)"
        if len(chunk) == 1:
            number, line = chunk[0]
            self.rejected.append((number, line, reason))
            return
        half = len(chunk) // 2
        self._compile(chunk[:half])
        self._compile(chunk[half:])

    def check(self, rel: str) -> bool | None:
        """The verdict on ``rel`` (POSIX path relative to the patterns' base; a trailing ``/``
        marks a directory): ``True`` ignored, ``False`` re-included by a ``!`` pattern,
        ``None`` when no pattern matches."""
        verdict: bool | None = None
        for spec in self._specs:
            include = spec.check_file(rel).include
            if include is not None:
                verdict = bool(include)
        return verdict

    def matches(self, rel: str) -> bool:
        """Whether the patterns leave ``rel`` out (:meth:`check` is ``True``)."""
        return self.check(rel) is True
