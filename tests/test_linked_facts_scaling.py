"""The join of references to the launches they name (``sources.tree._linked_facts``) grows
linearly with the references of a file: each reference's launch is found through one index
of the file's launches, not by a walk over all its facts (a Kubernetes file of many
Deployments, each container a reference to its own launch, was quadratic)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from scaling import LINEAR, time_ratio
from vllm_upgrade_check.model.facts import Fact, FactKind, Location
from vllm_upgrade_check.sources.cache import FileResult
from vllm_upgrade_check.sources.scanners.base import APPENDED, Conditional
from vllm_upgrade_check.sources.tree import _linked_facts


def _result(n: int, facts_per_launch: int = 5) -> FileResult:
    """One file of ``n`` launches (groups ``g0``...), each after some arg facts and named by
    a reference of its own, as a manifest of ``n`` Deployments is read."""
    facts: list[Fact] = []
    launches: dict[str, str] = {}
    for i in range(n):
        where = Location("deploy.yaml", 10 * i + 1, 1)
        facts += [Fact(FactKind.ARG, f"a{k}", where, group=f"g{i}") for k in range(facts_per_launch)]
        facts.append(Fact(FactKind.LAUNCH, "vllm serve", where, group=f"g{i}"))
        launches[f"container:Deployment/d{i}/0"] = f"g{i}"
    return FileResult(taken=True, facts=facts, references=list(launches), launches=launches)


def test_an_appended_launch_takes_the_first_launch_of_the_group_it_names() -> None:
    result = _result(3)
    # a second launch fact of group g1 after the first: the first is the base
    result.facts.append(Fact(FactKind.LAUNCH, "later", Location("deploy.yaml", 99, 1), group="g1", args=frozenset({"x"})))
    result.facts[11] = replace(result.facts[11], args=frozenset({"max_num_seqs"}), model="m1")
    tail = Fact(FactKind.LAUNCH, APPENDED, Location("patch.yaml", 3, 1), args=frozenset({"dtype"}), group="p")
    patch = FileResult(taken=True, conditionals=[Conditional("container:Deployment/d1/0", (tail,))])
    linked, _extended, _pinned = _linked_facts([result, patch])
    (merged,) = linked
    assert (merged.name, merged.model, merged.location.path) == ("vllm serve", "m1", "patch.yaml")
    assert merged.args == {"max_num_seqs", "dtype"}
    # a reference naming a group with no launch fact gives no base: the appended words are dropped
    result.launches["container:Deployment/d1/0"] = "nowhere"
    assert _linked_facts([result, patch])[0] == []


def test_linking_references_to_their_launches_grows_linearly() -> None:
    def at(n: int) -> Callable[[], object]:
        results = [_result(n)]
        return lambda: _linked_facts(results)

    assert time_ratio(at, 4_000) < LINEAR
