"""The vLLM release a direct-URL requirement installs (``vllm @ URL``), read from the URL: a
wheel's or sdist's file name, a git tag, a tag's archive; or the commit or branch it names when
it names no release. Used by :mod:`.requirements` (the pin a URL is) and the advisories.
"""

from __future__ import annotations

import re

from packaging.utils import canonicalize_name

from vllm_upgrade_check.model.facts import Fact, FactKind, Location, Span, Spans
from vllm_upgrade_check.parsing.distfiles import is_dist_name, parse_dist_url
from vllm_upgrade_check.parsing.words import Token, content_columns, sub_span

URL_UNPLACED = "the scanner could not tell where the URL's version is written; change it by hand"
"""The note of a URL pin whose version has no place a fix can edit."""

_GIT_REF = re.compile(r"@(?:refs/tags/)?([^/@]+)$")
_ARCHIVE = re.compile(r"/archive/(?:refs/tags/)?([^/]+?)\.(?:tar\.gz|zip)$")
HASH_FRAGMENT = re.compile(r"#.*\b(?:sha1|sha224|sha256|sha384|sha512|md5)=", re.IGNORECASE)
"""A URL fragment carrying the archive's hash (``#sha256=...``): a new tag needs a new hash."""


def _tag_version(tag: str) -> str | None:
    from packaging.version import InvalidVersion, Version

    text = tag[1:] if tag[:1] in ("v", "V") else tag
    try:
        Version(text)
    except InvalidVersion:
        return None
    return text


def url_version(url: str) -> tuple[str, int, int] | None:
    """``(version, offset, count)`` of the vLLM release a direct URL installs, read where the
    URL says it: a wheel's or sdist's file name (``vllm-0.20.0-cp38-abi3-...whl``,
    ``vllm-0.20.0.tar.gz``), a git tag (``git+https://...vllm.git@v0.20.0``,
    ``...@refs/tags/v0.20.0``) or a tag's archive (``https://github.com/vllm-project/vllm/archive/refs/tags/v0.20.0.tar.gz``,
    ``.../archive/v0.20.0.zip``); ``offset`` is where the version is written in ``url`` and
    ``count`` how often it is written there. ``None`` when the URL names no version (a branch,
    a commit, a name without one: :func:`url_ref`). A file name is read percent-decoded
    (:func:`~vllm_upgrade_check.parsing.distfiles.parse_dist_url`: ``vllm-0.20.0%2Bcu126-...whl``
    installs ``0.20.0+cu126``); ``offset`` is then where its public version is written."""
    path = url.split("#", 1)[0].split("?", 1)[0]
    version: str | None = None
    name = path.rsplit("/", 1)[-1]
    git = _GIT_REF.search(path) if path.startswith("git+") else None
    archive = _ARCHIVE.search(path) if not git else None
    if path.startswith("git+"):
        if git is None or "/" not in path[: git.start()].split("://", 1)[-1]:
            return None  # no ref, or the @ is the user of git+ssh://git@host
        text = _tag_version(git.group(1))
        if text is None:
            return None
        version, at = text, git.end() - len(text)
    elif archive is not None and not name.lower().startswith("vllm-"):
        text = _tag_version(archive.group(1))
        if text is None:
            return None
        version, at = text, archive.end(1) - len(text)
    else:
        dist = parse_dist_url(path)  # percent-decoded: vllm-0.20.0%2Bcu126-...whl is 0.20.0+cu126
        if dist is None:
            return None
        version, at = dist.written, dist.offset
    return version, at, url.count(version.split("+", 1)[0])


def url_ref(url: str) -> str | None:
    """The git ref or archive name of a vLLM URL that names no release (a commit hash, a
    branch: ``git+https://...vllm@main``, ``.../archive/3f2b1c9.tar.gz``), or ``None``."""
    path = url.split("#", 1)[0].split("?", 1)[0]
    if path.startswith("git+"):
        git = _GIT_REF.search(path)
        if git is None or "/" not in path[: git.start()].split("://", 1)[-1]:
            return "the default branch"
        return git.group(1)
    archive = _ARCHIVE.search(path)
    return archive.group(1) if archive is not None else None


def url_pin_spans(
    text: str,
    url: str,
    pinned: tuple[str, int, int],
    line: int,
    column: int,
    token: Token | None,
    syntax: str,
) -> Spans:
    """Where a fix moves the version ``pinned`` (:func:`url_version`) of ``url``, written in
    requirement ``text`` (a shell word ``token``, else from ``line``/``column``): the public
    version where the URL writes it once (a local label, ``+cu126`` or ``%2Bcu126``, stays as
    written); else, or when a hash fragment pins the file, no place and a note."""
    version, at, count = pinned
    public = version.split("+", 1)[0]
    offset = text.find(url) + at
    where = None
    if token is not None and token.text == text:
        where = sub_span(token, offset, offset + len(public))
    elif token is None and "\n" not in text:
        where = Span(line, column + offset, line, column + offset + len(public))
    note = "" if count == 1 else f"the URL writes the version {count} times; change it by hand"
    if HASH_FRAGMENT.search(url):
        note = "the URL carries the archive's hash, which a new tag changes; change both by hand"
        where = None
    return Spans(version=where, syntax=syntax, note=note if where is not None else note or URL_UNPLACED)


def direct_file_fact(
    text: str,
    path: str | None,
    line: int,
    column: int,
    scanner: str,
    token: Token | None = None,
    syntax: str = "requirements",
) -> Fact | None:
    """The ``requirement`` fact of a wheel or sdist given by URL or path alone (a
    requirements line or a ``pip install`` word: ``https://download.pytorch.org/whl/cu121/
    torch-2.3.0%2Bcu121-cp310-cp310-linux_x86_64.whl``): the project and the exact version
    its file name says (percent-decoded, :func:`~vllm_upgrade_check.parsing.distfiles.
    parse_dist_url`), ``==VERSION``, with :func:`url_pin_spans`. ``None`` for any other
    text."""
    stripped = text.strip()
    if not is_dist_name(stripped.split("#", 1)[0].split("?", 1)[0]):
        return None
    dist = parse_dist_url(stripped)
    if dist is None:
        return None
    pinned = (dist.written, dist.offset, stripped.count(dist.written.split("+", 1)[0]))
    spans = url_pin_spans(stripped, stripped, pinned, line, column, token, syntax)
    found_at = content_columns(token) if token is not None and token.text == stripped else None
    if found_at is not None:
        line, column, _end = found_at
    return Fact(
        FactKind.REQUIREMENT,
        canonicalize_name(dist.name),
        Location(path, line, column, line, column + len(stripped)),
        raw=stripped,
        value=f"=={dist.written}",
        origin="file",
        scanner=scanner,
        spans=spans,
    )


__all__ = ["HASH_FRAGMENT", "URL_UNPLACED", "direct_file_fact", "url_pin_spans", "url_ref", "url_version"]
