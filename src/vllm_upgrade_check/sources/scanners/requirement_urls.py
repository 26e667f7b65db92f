"""The vLLM release a direct-URL requirement installs (``vllm @ URL``), read from the URL: a
wheel's or sdist's file name, a git tag, a tag's archive; or the commit or branch it names when
it names no release. Used by :mod:`.requirements` (the pin a URL is) and the advisories.
"""

from __future__ import annotations

import re

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
    a commit, a name without one: :func:`url_ref`)."""
    from packaging.utils import (
        InvalidSdistFilename,
        InvalidWheelFilename,
        parse_sdist_filename,
        parse_wheel_filename,
    )
    from packaging.version import InvalidVersion, Version

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
        try:
            if name.endswith(".whl"):
                parsed = parse_wheel_filename(name)[1]
            elif name.endswith((".tar.gz", ".zip")):
                parsed = parse_sdist_filename(name)[1]
            else:
                return None
        except (InvalidWheelFilename, InvalidSdistFilename, InvalidVersion):
            return None
        written = name.split("-", 2)[1] if name.count("-") >= 1 else ""
        text = written.removesuffix(".tar.gz").removesuffix(".zip")
        if Version(text) != parsed:
            return None
        version, at = text, len(path) - len(name) + name.index("-") + 1
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


__all__ = ["HASH_FRAGMENT", "url_ref", "url_version"]
