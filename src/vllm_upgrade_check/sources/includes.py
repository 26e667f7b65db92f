"""Requirements include chains: which ``-r``/``-c`` lines reach a file, and the cycles.

The requirements scanner yields a :class:`~.scanners.base.FileReference` per include line
(with the includer, its line and option). Once every file is read, the edges are joined
here: each included file gets the chain of includes that reaches it from an outermost file
(one nobody includes; the shortest such chain, first by walk order), and each cycle
(``a.txt -r b.txt``, ``b.txt -r a.txt``) is reported once. pip itself reads each file of
a cycle again and again; the scan reads each once.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from vllm_upgrade_check.model.findings import Include, chain_text
from vllm_upgrade_check.sources.scanners.base import FileReference


@dataclass
class IncludeGraph:
    """The includes of one scan.

    Attributes:
        edges: every include, in the order read (deduplicated).
        chains: included file (reported path) -> the chain that reaches it, outermost first.
        cycles: each include cycle once, starting at the include whose file sorts first.
    """

    edges: list[Include] = field(default_factory=list)
    chains: dict[str, tuple[Include, ...]] = field(default_factory=dict)
    cycles: list[tuple[Include, ...]] = field(default_factory=list)

    def add(self, refs: Iterable[FileReference]) -> None:
        """Record the includes among ``refs`` (those that name their includer and line)."""
        seen = set(self.edges)
        for ref in refs:
            if ref.by and ref.line and ref.option:
                link = Include(ref.by, ref.line, ref.option, ref.path)
                if link not in seen:
                    seen.add(link)
                    self.edges.append(link)

    def settle(self) -> None:
        """Compute :attr:`chains` and :attr:`cycles` from :attr:`edges`."""
        into: dict[str, list[Include]] = {}
        out: dict[str, list[Include]] = {}
        for link in self.edges:
            into.setdefault(link.target, []).append(link)
            out.setdefault(link.path, []).append(link)
        # breadth first from the files nobody includes: the shortest chain to each file
        tops = [p for p in dict.fromkeys(link.path for link in self.edges) if p not in into]
        chains: dict[str, tuple[Include, ...]] = {}
        frontier: list[tuple[str, tuple[Include, ...]]] = [(top, ()) for top in tops]
        while frontier:
            following: list[tuple[str, tuple[Include, ...]]] = []
            for node, chain in frontier:
                for link in out.get(node, ()):
                    if link.target not in chains and link.target not in tops:
                        chains[link.target] = (*chain, link)
                        following.append((link.target, chains[link.target]))
            frontier = following
        for target, links in into.items():  # files reached only inside a cycle
            if target not in chains:
                chains[target] = (links[0],)
        self.chains = chains
        self.cycles = _cycles(out)

    def notes(self) -> list[str]:
        """One report note per cycle."""
        return [
            f"requirements include cycle: {chain_text(cycle)}; pip reads these files over and over, "
            "the scan read each once"
            for cycle in self.cycles
        ]


def _cycles(out: dict[str, list[Include]]) -> list[tuple[Include, ...]]:
    """Each elementary cycle of the include graph once (depth first, iterative)."""
    found: dict[frozenset[Include], tuple[Include, ...]] = {}
    for start in sorted(out):
        stack: list[tuple[str, tuple[Include, ...]]] = [(start, ())]
        visited: set[str] = set()
        while stack:
            node, path = stack.pop()
            for link in out.get(node, ()):
                if link.target == start:
                    cycle = (*path, link)
                    found.setdefault(frozenset(cycle), cycle)
                elif link.target not in visited and link.target > start and len(path) < 64:
                    visited.add(link.target)
                    stack.append((link.target, (*path, link)))
    return sorted(found.values())
