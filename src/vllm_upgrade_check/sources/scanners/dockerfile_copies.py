"""What a Dockerfile's ``COPY``/``ADD`` instructions put where, and the script an exec-form
``ENTRYPOINT`` runs from there (:class:`EntryScript`): the container runs that script with
the ``CMD`` words as its arguments, so a ``vllm serve ... "$@"`` in it launches with them
(read by :class:`~.dockerfile_entry.LinkedDockerfileScanner`)."""

from __future__ import annotations

import json
import posixpath
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass

from vllm_upgrade_check.model.facts import Fact, FactKind, Skipped
from vllm_upgrade_check.parsing.words import Token
from vllm_upgrade_check.sources.scanners.arg_facts import missing_config_reason
from vllm_upgrade_check.sources.scanners.base import FileReference
from vllm_upgrade_check.sources.scanners.shell import _SHELLS
from vllm_upgrade_check.sources.scanners.vllm_argv import strip_wrappers


def json_array(value: str) -> list[str] | None:
    """The words of an exec-form JSON array (``["vllm", "serve"]``), or ``None`` when
    ``value`` is not a JSON array of strings (the shell form)."""
    if not value.startswith("["):
        return None
    try:
        found = json.loads(value)
    except ValueError:
        return None
    return found if isinstance(found, list) and all(isinstance(w, str) for w in found) else None


@dataclass(frozen=True)
class EntryScript:
    """A script an exec-form ``ENTRYPOINT`` runs (copied from the build context): the
    container runs it with the ``ENTRYPOINT``'s further words and the ``CMD`` as its
    arguments (``"$@"``), with the stage's ``ENV`` set.

    Attributes:
        path: the script's report path; entry: the ``ENTRYPOINT``'s first word (where the
        launch it makes is placed); entry_words: all its words; args: its arguments, as written in the Dockerfile;
        env: the stage's ``ENV`` values; hint: the vLLM version the stage's image runs;
        source: the script as the ``COPY`` names it, relative to the build context;
        entry_args: how many of ``args`` the ``ENTRYPOINT`` writes (the rest are the
        ``CMD``'s, which a compose ``command`` replaces); stage: the 0-based index of the
        Dockerfile stage whose entry point it is; direct: the ``ENTRYPOINT`` is no script
        but launches vLLM itself (``["vllm", "serve"]``, ``["tini", "--", "python3", "-m",
        "vllm.entrypoints.openai.api_server"]``): ``path`` is then the Dockerfile's.
    """

    path: str
    entry: Token
    entry_words: list[Token]
    args: list[Token]
    env: dict[str, list[Token]]
    hint: tuple[str, str] | None
    source: str = ""
    entry_args: int = 0
    stage: int = -1
    direct: bool = False


def entry_script(
    path: str,
    entry: Sequence[Token],
    cmd: Sequence[Token],
    copies: dict[str, str],
    env: dict[str, list[Token]],
    hint: tuple[str, str] | None,
    stage: int = -1,
) -> EntryScript | None:
    """The script an exec-form ``ENTRYPOINT`` (``entry``, of Dockerfile ``path``) runs, when
    it is a script (``/start.sh``, ``bash /start.sh``, ``tini -- /start.sh``) that a ``COPY`` put there from the
    build context, taken to be the Dockerfile's folder (``copies``: :func:`copied`); its
    arguments are the entry point's further words and ``cmd``; ``stage``: the index of the
    stage it is the entry point of."""
    words = list(entry)
    # an init program (``tini --``, ``dumb-init --``, ``gosu USER``) runs the script after it
    unwrapped, _env = strip_wrappers(words)
    skip = len(words) - len(unwrapped)
    at = skip
    if len(words) >= skip + 2 and words[skip].text.rsplit("/", 1)[-1] in _SHELLS and not words[skip + 1].text.startswith("-"):
        at = skip + 1
    if at >= len(words) or not words[at].text.startswith("/"):
        return None
    source = copies.get(posixpath.normpath(words[at].text))
    if source is None:
        return None
    script = posixpath.normpath(posixpath.join(posixpath.dirname(path), source))
    if script.startswith("../"):
        return None
    fixed = words[at + 1 :]
    return EntryScript(script, words[0], words, [*fixed, *cmd], dict(env), hint, source, len(fixed), stage)


def copied(value: str, workdir: str, copies: dict[str, str]) -> None:
    """Record in ``copies`` where a ``COPY``/``ADD`` (its ``value``; relative destinations
    under ``workdir``) puts each file of the build context it names: ``dest -> source``.
    A copy from another stage or image (``--from``), a URL or a pattern is left out."""
    words = json_array(value.strip())
    if words is None:
        words = value.split()
    if any(w.startswith("--from") for w in words):
        return
    words = [w for w in words if not w.startswith("--")]
    if len(words) < 2:
        return
    *sources, dest = words
    into_dir = dest.endswith("/") or len(sources) > 1
    dest = posixpath.normpath(posixpath.join(workdir, dest))
    for source in sources:
        if "://" in source or any(c in source for c in "*?["):
            continue
        target = posixpath.join(dest, posixpath.basename(source)) if into_dir else dest
        copies[posixpath.normpath(target)] = source


def config_copies(
    facts: Iterable[Fact | Skipped], path: str, copies: dict[str, str], workdir: str
) -> Iterator[Fact | FileReference | Skipped]:
    """``facts`` (a stage's launches, passed through), and for each ``--config FILE`` among
    them the file the container finds there: a :class:`~.base.FileReference` to the build
    context's file a ``COPY``/``ADD`` puts at ``FILE`` (relative to ``workdir``; the build
    context is taken to be the Dockerfile's folder, as for :func:`entry_script`), so that
    the vLLM config scanner reads it; an unresolved note when no ``COPY`` puts a file there.

    Args:
        facts: the facts of one stage's launches; path: the Dockerfile's report path;
        copies: :func:`copied`'s record of the stage; workdir: the stage's ``WORKDIR``.
    """
    for fact in facts:
        yield fact
        if isinstance(fact, Skipped):
            continue
        value = (fact.value or "").strip()
        if fact.kind != FactKind.ARG or fact.name != "config" or not fact.resolved or not value:
            continue
        if not value.endswith((".yaml", ".yml")):
            continue
        source = copies.get(posixpath.normpath(posixpath.join(workdir, value)))
        if source is None:
            yield Skipped(path, missing_config_reason(value), line=fact.location.line)
            continue
        wanted = posixpath.normpath(posixpath.join(posixpath.dirname(path), source))
        yield FileReference(wanted, "vllm-config", by=path, line=fact.location.line or 0, option="--config")
