"""The scanner interface: a scanner reads one kind of file and yields facts or a skipped record.

Scanners never raise for a bad file: a file that cannot be parsed yields
:class:`~vllm_upgrade_check.model.facts.Skipped` with the reason.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cached_property
from typing import ClassVar

from vllm_upgrade_check.model.facts import Fact, Skipped


@dataclass(frozen=True)
class SourceFile:
    """A file read once by the engine and handed to the scanners that accept it.

    Attributes:
        relpath: POSIX path relative to the scanned root (what reports show).
        text: the decoded text (UTF-8, or Latin-1 when it is not UTF-8).
    """

    relpath: str
    text: str

    @property
    def name(self) -> str:
        """The file's base name."""
        return self.relpath.rsplit("/", 1)[-1]

    def mentions_vllm(self) -> bool:
        """``True`` when the text mentions vLLM at all (cheap pre-filter, case-insensitive)."""
        return self._mentions_vllm

    @cached_property
    def _mentions_vllm(self) -> bool:
        text = self.text
        return "vllm" in text or "VLLM" in text or "vllm" in text.lower()


class Scanner(ABC):
    """One kind of source. Subclasses set :attr:`name` and implement both methods."""

    name: ClassVar[str]
    """Short id shown in reports (``shell``, ``dockerfile``, ...)."""

    @abstractmethod
    def accepts(self, source: SourceFile) -> bool:
        """``True`` when this scanner should read ``source`` (by name, and cheap content checks)."""

    def accepts_name(self, name: str) -> bool | None:
        """Decide by file name alone, before the file is read: ``True`` (accepted), ``False``
        (never accepted, the file is not read) or ``None`` (only the content can tell)."""
        return None

    def reset(self) -> None:  # noqa: B027 - optional hook, stateless scanners keep the default
        """Forget what earlier runs remembered; called at the start of every scan. The default
        does nothing (stateless scanners)."""

    @abstractmethod
    def scan(self, source: SourceFile) -> Iterator[Fact | Skipped]:
        """Yield the facts in ``source``, or one :class:`Skipped` when it cannot be parsed."""
